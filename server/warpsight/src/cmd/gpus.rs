//! `warpsight gpus`: list the GPUs of the built-in database with their key facts.
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

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { s.chars().take(n - 1).chain(std::iter::once('~')).collect() }
}
