//! `warpsight occupancy`: NVIDIA's occupancy calculation for one launch configuration.
//!
//! The numbers come from `gpu_spec::occupancy`, a step-for-step reimplementation of
//! `cuda_occupancy.h`, with the calculator's defaults (opt-in shared-memory limit,
//! default carveout, one block barrier). `--best` adds the block size that maximises
//! occupancy (`cudaOccMaxPotentialOccupancyBlockSize`), `--grid` the waves, `--curve`
//! occupancy for every block size. It exits with 1 when the configuration cannot launch
//! (no block fits on an SM), after printing why.

use anyhow::{Context, bail};
use serde::Serialize;

use gpu_spec::occupancy::{self, BestBlockSize, CurvePoint, DeviceProps, DeviceState, FuncAttrs, Occupancy, Waves};
use gpu_spec::{ComputeCapability, Database};

use crate::cmd::Exit;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["cc", "gpu"])))]
#[command(after_help = "Exit codes: 0 the configuration can launch; 1 it cannot (0 blocks per SM: the report says why); 2 usage error (bad flags, unknown GPU or compute capability).")]
pub struct Args {
    /// Compute capability, e.g. 8.6 or sm_86.
    #[arg(long)]
    cc: Option<String>,
    /// GPU id or alias, e.g. h100-sxm, a100, rtx-4090 (see `warpsight gpus`).
    #[arg(long)]
    gpu: Option<String>,
    /// Threads per block.
    #[arg(long)]
    threads: u32,
    /// Registers per thread (from `ptxas -v`).
    #[arg(long)]
    regs: u32,
    /// Dynamic shared memory per block, in bytes.
    #[arg(long, default_value_t = 0)]
    dyn_smem: u32,
    /// Static shared memory per block, in bytes.
    #[arg(long, default_value_t = 0)]
    static_smem: u32,
    /// Block barriers the kernel uses (the runtime's default attribute is 1).
    #[arg(long, default_value_t = 1)]
    barriers: u32,
    /// Shared-memory carveout preference in percent (CC >= 7.0); default: the driver's.
    #[arg(long)]
    carveout: Option<u32>,
    /// Also print the block size that maximises occupancy.
    #[arg(long)]
    best: bool,
    /// Grid size in blocks: also print waves and the fill of the last wave.
    #[arg(long)]
    grid: Option<u64>,
    /// Number of SMs for --grid and --best with --cc (default: the GPU's).
    #[arg(long)]
    sms: Option<u32>,
    /// Also print occupancy for every block size (multiples of 32).
    #[arg(long)]
    curve: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    gpu: Option<String>,
    cc: ComputeCapability,
    sm_count: Option<u32>,
    threads: u32,
    regs: u32,
    dyn_smem: u32,
    static_smem: u32,
    #[serde(flatten)]
    occupancy: Occupancy,
    best: Option<BestBlockSize>,
    waves: Option<Waves>,
    curve: Option<Vec<CurvePoint>>,
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let db = Database::builtin();
    let (gpu, limits) = match (&args.gpu, &args.cc) {
        (Some(id), _) => {
            let g = db.gpu(id).map_err(|e| anyhow::anyhow!("{e} (list them with `warpsight gpus`)"))?;
            (Some(g), &g.limits)
        }
        (None, Some(cc)) => {
            let cc: ComputeCapability = cc.parse()?;
            let limits = db.cc(cc).with_context(|| {
                let known: Vec<String> = db.compute_capabilities().iter().map(|c| c.cc.to_string()).collect();
                format!("unknown compute capability {cc}; known: {}", known.join(", "))
            })?;
            (None, limits)
        }
        (None, None) => bail!("give --cc or --gpu"),
    };
    let sm_count = args.sms.or(gpu.map(|g| g.sm_count));
    let props = DeviceProps::from_limits(limits, sm_count.unwrap_or(1));
    let mut attrs = FuncAttrs::new(args.regs, args.static_smem, &props);
    attrs.num_block_barriers = args.barriers;
    let state = DeviceState { carveout_percent: args.carveout, ..DeviceState::default() };
    let occ = occupancy::calculate(&props, &attrs, &state, args.threads, args.dyn_smem)?;
    let best = if args.best {
        let mut b = occupancy::max_potential_block_size(&props, &attrs, &state, |_| args.dyn_smem)?;
        if sm_count.is_none() {
            b.min_grid_size = 0;
        }
        Some(b)
    } else {
        None
    };
    let waves = match (args.grid, sm_count) {
        (Some(grid), Some(sms)) => Some(occupancy::waves(grid, occ.blocks_per_sm, sms)),
        (Some(_), None) => bail!("--grid needs the SM count: give --gpu or --sms"),
        (None, _) => None,
    };
    let curve = if args.curve { Some(occupancy::occupancy_curve(&props, &attrs, &state, |_| args.dyn_smem)?) } else { None };
    let report = Report {
        gpu: gpu.map(|g| g.id.clone()),
        cc: limits.cc,
        sm_count,
        threads: args.threads,
        regs: args.regs,
        dyn_smem: args.dyn_smem,
        static_smem: args.static_smem,
        occupancy: occ,
        best,
        waves,
        curve,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report, gpu.map(|g| g.name.as_str()));
    }
    // A configuration that cannot launch is an answer, but a failing one: scripts that
    // check a launch configuration see it in the exit code (docs/cli.md, "Exit codes").
    Ok(if report.occupancy.blocks_per_sm == 0 { Exit::InputErrors } else { Exit::Success })
}

fn limit(v: Option<u32>) -> String {
    v.map_or_else(|| "unlimited".to_string(), |n| n.to_string())
}

fn print_text(r: &Report, name: Option<&str>) {
    let o = &r.occupancy;
    match (name, &r.gpu) {
        (Some(name), Some(id)) => println!("gpu: {name} ({id}, CC {}, {} SMs)", r.cc, r.sm_count.unwrap_or(0)),
        _ => println!("cc: {}", r.cc),
    }
    println!(
        "kernel: {} threads/block, {} registers/thread, {} B static + {} B dynamic shared memory",
        r.threads, r.regs, r.static_smem, r.dyn_smem
    );
    println!("blocks_per_sm: {}", o.blocks_per_sm);
    println!("warps_per_sm: {} of {}", o.warps_per_sm, o.max_warps_per_sm);
    println!("occupancy: {:.1}%", o.occupancy * 100.0);
    println!("limiters: {}", if o.limiters.names().is_empty() { "none".to_string() } else { o.limiters.to_string() });
    println!(
        "limits (blocks/SM): warps {}, registers {}, shared_memory {}, blocks {}, barriers {}",
        o.limit_warps,
        limit(o.limit_registers),
        limit(o.limit_shared_memory),
        o.limit_blocks,
        limit(o.limit_barriers)
    );
    println!("allocated per block: {} registers, {} B shared memory", o.allocated_regs_per_block, o.allocated_smem_per_block);
    if let Some(reason) = &o.reason {
        println!("cannot launch: {reason}");
    }
    if let Some(b) = &r.best {
        if b.block_size == 0 {
            println!("best block size: none (no block size can launch)");
        } else {
            print!("best block size: {} ({} blocks/SM, occupancy {:.1}%", b.block_size, b.blocks_per_sm, b.occupancy * 100.0);
            if b.min_grid_size > 0 {
                print!(", min grid {} blocks", b.min_grid_size);
            }
            println!(")");
        }
    }
    if let Some(w) = &r.waves {
        println!(
            "waves: {} ({} blocks per wave, last wave {} blocks = {:.1}% full, efficiency {:.1}%)",
            w.waves,
            w.blocks_per_wave,
            w.last_wave_blocks,
            w.last_wave_fill * 100.0,
            w.efficiency * 100.0
        );
    }
    if let Some(curve) = &r.curve {
        println!("block_size blocks_per_sm warps_per_sm occupancy limiters");
        for p in curve {
            println!("{:>10} {:>13} {:>12} {:>8.1}% {}", p.block_size, p.blocks_per_sm, p.warps_per_sm, p.occupancy * 100.0, p.limiters);
        }
    }
}
