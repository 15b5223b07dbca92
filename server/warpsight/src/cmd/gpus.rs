//! `warpsight gpus`: list the GPUs of the built-in database with their key facts, or
//! (`--detect`) the GPUs of this machine and their database entries.
//!
//! The table is for people; `--json` prints every field of every GPU (including the
//! source of each number) for tools and the editor extensions.

use serde::Serialize;

use crate::cmd::Exit;

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON (every field, with sources) instead of a table.
    #[arg(long)]
    json: bool,
    /// List this machine's NVIDIA GPUs (through the driver's NVML, when there is one) and
    /// the database entry of each.
    #[arg(long)]
    detect: bool,
}

/// One local GPU in `--detect --json`.
#[derive(Serialize)]
struct DetectedJson<'a> {
    #[serde(flatten)]
    device: &'a crate::nvml::LocalGpu,
    /// The database id, when the name and compute capability match an entry.
    id: Option<&'a str>,
    /// Why there is no id, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}

/// One GPU in the JSON output: the full record plus derived peaks.
#[derive(Serialize)]
struct GpuJson<'a> {
    #[serde(flatten)]
    gpu: &'a gpu_spec::Gpu,
    peak_fp32_gflops: f64,
    peak_fp64_gflops: f64,
    cuda_cores: u32,
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let db = gpu_spec::Database::builtin();
    for e in db.errors() {
        tracing::warn!("{e}");
    }
    if args.detect {
        return detect(db, args.json);
    }
    if args.json {
        let out: Vec<GpuJson> = db
            .gpus()
            .iter()
            .map(|g| GpuJson { gpu: g, peak_fp32_gflops: g.peak_fp32_gflops(), peak_fp64_gflops: g.peak_fp64_gflops(), cuda_cores: g.cuda_cores() })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(Exit::Success);
    }
    println!(
        "{:<22} {:<46} {:>5} {:>4} {:>6} {:>7} {:>6} {:>7} {:>7} {:>6}",
        "ID", "NAME", "CC", "SMs", "BOOST", "FP32", "MEM", "BW", "L2", "TDP"
    );
    println!(
        "{:<22} {:<46} {:>5} {:>4} {:>6} {:>7} {:>6} {:>7} {:>7} {:>6}",
        "", "", "", "", "MHz", "TFLOPS", "GiB", "GB/s", "MiB", "W"
    );
    for g in db.gpus() {
        println!(
            "{:<22} {:<46} {:>5} {:>4} {:>6.0} {:>7.2} {:>6.1} {:>7.1} {:>7.2} {:>6.0}",
            g.id,
            truncate(&g.name, 46),
            g.cc.to_string(),
            g.sm_count,
            g.boost_clock_mhz,
            g.peak_fp32_gflops() / 1000.0,
            g.mem_bytes as f64 / (1u64 << 30) as f64,
            g.mem_bandwidth_gbs,
            g.l2_bytes as f64 / (1u64 << 20) as f64,
            g.tdp_w
        );
    }
    println!("{} GPUs. Aliases and sources: `warpsight gpus --json`.", db.gpus().len());
    Ok(Exit::Success)
}

/// `--detect`: the driver's GPUs, each with its database entry or why it has none. No
/// driver is an answer (one line, exit 0), not an error.
fn detect(db: &gpu_spec::Database, json: bool) -> anyhow::Result<Exit> {
    let devices = match crate::nvml::detect(crate::nvml::NVML_LIBRARY) {
        Ok(d) => d,
        Err(why) => {
            if json {
                println!("{}", serde_json::json!({ "driver": false, "message": why.to_string(), "gpus": [] }));
            } else {
                println!("{why}; no local GPUs to list (warpsight needs no GPU: name one with --gpu).");
            }
            return Ok(Exit::Success);
        }
    };
    let rows: Vec<DetectedJson> = devices
        .iter()
        .map(|d| {
            let (id, problem) = match db.match_device(&d.name, d.cc) {
                gpu_spec::DeviceMatch::Found(g) => (Some(g.id.as_str()), None),
                gpu_spec::DeviceMatch::CcDiffers(g) => {
                    (None, Some(format!("the database's `{}` has compute capability {}, the driver reports {}", g.id, g.cc, d.cc)))
                }
                gpu_spec::DeviceMatch::NotFound { closest } => (
                    None,
                    Some(format!("not in the database (closest: {}); describe it in a GPU file (docs/gpus.md)", closest.join(", "))),
                ),
            };
            DetectedJson { device: d, id, problem }
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "driver": true, "gpus": rows }))?);
        return Ok(Exit::Success);
    }
    if rows.is_empty() {
        println!("The NVIDIA driver reports no GPUs.");
    }
    for r in &rows {
        match (r.id, &r.problem) {
            (Some(id), _) => println!("{}: {} (CC {}) -> {id}", r.device.index, r.device.name, r.device.cc),
            (None, Some(why)) => println!("{}: {} (CC {}): {why}", r.device.index, r.device.name, r.device.cc),
            (None, None) => println!("{}: {} (CC {})", r.device.index, r.device.name, r.device.cc),
        }
    }
    Ok(Exit::Success)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { s.chars().take(n - 1).chain(std::iter::once('~')).collect() }
}
