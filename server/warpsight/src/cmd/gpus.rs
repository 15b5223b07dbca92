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
    /// Only the GPUs of this market segment.
    #[arg(long, value_parser = SEGMENTS)]
    segment: Option<String>,
    /// Only the GPUs of this architecture family (`kepler`, `ampere`, ...; any case).
    #[arg(long)]
    family: Option<String>,
}

/// The database's market segments, in the order the table lists them within a family.
const SEGMENTS: [&str; 5] = ["datacenter", "workstation", "desktop", "laptop", "embedded"];

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

/// `--detect --json`: whether a driver answered (`message`: why not) and its GPUs.
#[derive(Serialize)]
struct DetectJson<'a> {
    driver: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    gpus: Vec<DetectedJson<'a>>,
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
    let families: Vec<&str> = db.gpus().iter().fold(Vec::new(), |mut f, g| {
        if !f.contains(&g.architecture.as_str()) {
            f.push(&g.architecture);
        }
        f
    });
    if let Some(family) = &args.family
        && !families.iter().any(|f| f.eq_ignore_ascii_case(family))
    {
        eprintln!("error: --family: unknown family `{family}`; one of: {}", families.join(", ").to_lowercase());
        return Ok(Exit::Usage);
    }
    let selected: Vec<&gpu_spec::Gpu> = db
        .gpus()
        .iter()
        .filter(|g| args.segment.as_ref().is_none_or(|s| g.segment == *s))
        .filter(|g| args.family.as_ref().is_none_or(|f| g.architecture.eq_ignore_ascii_case(f)))
        .collect();
    if args.json {
        let out: Vec<GpuJson> = selected
            .iter()
            .map(|g| GpuJson { gpu: g, peak_fp32_gflops: g.peak_fp32_gflops(), peak_fp64_gflops: g.peak_fp64_gflops(), cuda_cores: g.cuda_cores() })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(Exit::Success);
    }
    print!("{}", table(&families, &selected));
    if selected.len() == db.gpus().len() {
        println!("{} GPUs. Aliases and sources: `warpsight gpus --json`; one family or segment: --family, --segment.", selected.len());
    } else {
        println!("{} of {} GPUs. Aliases and sources: `warpsight gpus --json`.", selected.len(), db.gpus().len());
    }
    Ok(Exit::Success)
}

/// The table for people: one block per architecture family (in the database's order, oldest
/// first), headed by the family, its compute capabilities and its count; within a block the
/// GPUs by segment (data centre, workstation, desktop, laptop, embedded), then year, then id.
fn table(families: &[&str], gpus: &[&gpu_spec::Gpu]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let row = |out: &mut String, cols: [&str; 11]| {
        let [id, name, seg, cc, sms, boost, fp32, mem, bw, l2, tdp] = cols;
        let _ = writeln!(out, "{id:<22} {name:<40} {seg:<11} {cc:>5} {sms:>4} {boost:>6} {fp32:>7} {mem:>6} {bw:>7} {l2:>7} {tdp:>6}");
    };
    row(&mut out, ["ID", "NAME", "SEGMENT", "CC", "SMs", "BOOST", "FP32", "MEM", "BW", "L2", "TDP"]);
    row(&mut out, ["", "", "", "", "", "MHz", "TFLOPS", "GiB", "GB/s", "MiB", "W"]);
    for family in families {
        let mut block: Vec<&gpu_spec::Gpu> = gpus.iter().copied().filter(|g| g.architecture == *family).collect();
        if block.is_empty() {
            continue;
        }
        block.sort_by_key(|g| (SEGMENTS.iter().position(|s| *s == g.segment).unwrap_or(SEGMENTS.len()), g.year, g.id.clone()));
        let mut ccs: Vec<String> = block.iter().map(|g| g.cc.to_string()).collect();
        ccs.sort_by_key(|cc| cc.split('.').map(|p| p.parse::<u32>().unwrap_or(0)).collect::<Vec<_>>());
        ccs.dedup();
        let _ = writeln!(out, "\n{family} (CC {}): {} GPU{}", ccs.join(", "), block.len(), if block.len() == 1 { "" } else { "s" });
        for g in block {
            row(
                &mut out,
                [
                    &g.id,
                    &truncate(g.name.strip_prefix("NVIDIA ").unwrap_or(&g.name), 40),
                    &g.segment,
                    &g.cc.to_string(),
                    &g.sm_count.to_string(),
                    &format!("{:.0}", g.boost_clock_mhz),
                    &format!("{:.2}", g.peak_fp32_gflops() / 1000.0),
                    &format!("{:.1}", g.mem_bytes as f64 / (1u64 << 30) as f64),
                    &format!("{:.1}", g.mem_bandwidth_gbs),
                    &format!("{:.2}", g.l2_bytes as f64 / (1u64 << 20) as f64),
                    &format!("{:.0}", g.tdp_w),
                ],
            );
        }
    }
    out
}

/// `--detect`: the driver's GPUs, each with its database entry or why it has none. No
/// driver is an answer (one line, exit 0), not an error.
fn detect(db: &gpu_spec::Database, json: bool) -> anyhow::Result<Exit> {
    let devices = match crate::nvml::detect(crate::nvml::NVML_LIBRARY) {
        Ok(d) => d,
        Err(why) => {
            if json {
                println!("{}", serde_json::to_string(&DetectJson { driver: false, message: Some(why.to_string()), gpus: Vec::new() })?);
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
        println!("{}", serde_json::to_string_pretty(&DetectJson { driver: true, message: None, gpus: rows })?);
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
