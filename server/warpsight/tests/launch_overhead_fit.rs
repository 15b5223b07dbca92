//! The launch overheads of the A100 80 GB and the A40 in gpu-data (`launch_overhead_us`,
//! `graph_launch_overhead_us`) are derived from gpu-benches' gpu-small-kernels tables: the
//! median interval between back-to-back launches of the smallest kernels (4096 to 30,000
//! doubles), less the time the bottleneck model gives those kernels themselves, since the
//! model adds the overhead to the kernel's time (gpu-data/architectures.toml says so per
//! value). That subtraction depends on the model: this test redoes it from `warpsight
//! validate`'s rows, so that a change of the small kernels' predicted time cannot shift the
//! derived overheads unnoticed. It reads every row of the four tables, where the database
//! values were taken from the validation corpus's sample of them (every k-th row of each
//! sweep: `tests/fixtures/measured/corpus-gpu-benches.toml`); the two agree to 0.03 µs. It
//! fails when a database value is more than 0.05 µs from the recomputed one. Skips (with a
//! message) when `../shared` is absent.
#![allow(clippy::print_stderr, clippy::print_stdout)] // the skip message and the table

mod common;

use std::process::Command;

use common::{measured, root};

/// (table, database GPU, launched from a CUDA graph)
const TABLES: [(&str, &str, bool); 4] = [
    ("a100_80", "a100-sxm4-80gb", false),
    ("a100_80_graph", "a100-sxm4-80gb", true),
    ("a40", "a40", false),
    ("a40_graph", "a40", true),
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

#[test]
fn the_derived_launch_overheads_follow_from_the_models_own_kernel_times() {
    let Some(tables) = measured("gpu-benches/gpu-small-kernels") else { return };
    // Only the small-kernel tables: a folder of gpu-benches sets whose other sets are empty.
    let dir = std::env::temp_dir().join(format!("warpsight-launch-overhead-{}", std::process::id()));
    for set in ["gpu-stream", "gpu-latency", "gpu-cache", "gpu-l2-cache", "gpu-strides"] {
        std::fs::create_dir_all(dir.join(set)).expect("temporary folder");
    }
    let link = dir.join("gpu-small-kernels");
    if !link.exists() {
        std::os::unix::fs::symlink(&tables, &link).expect("link the tables");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(root())
        .arg("validate")
        .arg("--gpu-benches")
        .arg(&dir)
        .args(["--gpu-benches-kernels", "tests/fixtures/measured", "--model", "headline", "--format", "json"])
        .output()
        .expect("run warpsight validate");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("validate JSON");
    let db = gpu_spec::Database::builtin();
    let mut failures = Vec::new();
    println!("| table | rows | database µs | median interval µs | model's kernel µs | recomputed µs |");
    for (table, gpu, graph) in TABLES {
        let g = db.gpu(gpu).expect("database GPU");
        let overhead = if graph { g.with_graph_launch().launch_overhead_us } else { g.launch_overhead_us };
        let (mut intervals, mut kernels, mut implied) = (Vec::new(), Vec::new(), Vec::new());
        for r in v["rows"].as_array().expect("rows") {
            let at = r["at"].as_str().unwrap_or("");
            // "gpu-small-kernels/<table> [d <n>]": this table's rows only (a100_80, not a100_80_graph).
            let Some(rest) = at.strip_prefix(&format!("gpu-small-kernels/{table} [d ")) else { continue };
            let d: f64 = rest.trim_end_matches(']').parse().expect("the row's d");
            if !(4096.0..=30_000.0).contains(&d) {
                continue;
            }
            let measured_us = r["measured_ms"].as_f64().expect("measured_ms") * 1e3;
            let kernel_us = r["predicted_ms"]["headline"].as_f64().expect("a prediction") * 1e3 - overhead;
            intervals.push(measured_us);
            kernels.push(kernel_us);
            implied.push(measured_us - kernel_us);
        }
        assert!(intervals.len() >= 20, "{table}: only {} small launches", intervals.len());
        let (n, recomputed) = (implied.len(), median(implied));
        println!("| {table} | {n} | {overhead:.2} | {:.2} | {:.2} | {recomputed:.2} |", median(intervals), median(kernels));
        if (recomputed - overhead).abs() > 0.05 {
            failures.push(format!("{table}: the database says {overhead:.2} µs, the rows give {recomputed:.3} µs"));
        }
    }
    assert!(failures.is_empty(), "re-derive the launch overheads in gpu-data/architectures.toml: {failures:?}");
}
