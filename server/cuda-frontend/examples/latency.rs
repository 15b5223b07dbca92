//! Edit-to-PTX latency of the CUDA front end, for docs/benchmarks.md.
//!
//! Measures `prepare_text` on `testdata/bench_300.cu` (294 lines, 21 kernels plus host
//! code) the way an editor calls it after a keystroke: each compiled iteration appends a
//! different comment so the cache cannot answer, and includes the `ptxas -v` pass and the
//! launch-site scan. Cases: nvcc, NVRTC (in process, on the device-only view), NVRTC after
//! an edit inside one kernel (kernel-by-kernel recompiles), and a cache hit. Prints the
//! median and the min/max of N runs per case.
//!
//! Run: `cargo run --release -p cuda-frontend --example latency [-- RUNS]` with the
//! toolchain at `<repo>/.cuda` (or pass its `nvidia/cu13` root as `CUDA_ROOT`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cuda_frontend::{CancelToken, CompilerChoice, DiscoveryEnv, Options, PtxOrigin, prepare_text};

fn median(mut v: Vec<Duration>) -> (Duration, Duration, Duration) {
    v.sort();
    let mid = if v.len() % 2 == 1 {
        v[v.len() / 2]
    } else {
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2
    };
    (mid, v[0], v[v.len() - 1])
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root: PathBuf = std::env::var_os("CUDA_ROOT")
        .map(PathBuf::from)
        .or_else(|| cuda_frontend::toolchain::managed_cuda_root(&manifest.join("../../.cuda")))
        .unwrap_or_else(|| {
            eprintln!("no CUDA toolchain: set CUDA_ROOT to a .../nvidia/cu13 directory");
            std::process::exit(2);
        });
    let file = manifest.join("testdata/bench_300.cu");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
        eprintln!("{}: {e}", file.display());
        std::process::exit(2);
    });
    let cache_dir = tempfile::Builder::new().prefix("warpsight-latency-").tempdir().expect("a temporary directory");
    let cache = cache_dir.path().to_path_buf();
    let mut env = DiscoveryEnv::empty();
    env.vars
        .insert("CUDA_HOME".into(), root.display().to_string());
    let base = Options {
        env: Some(env),
        cache_dir: Some(cache.clone()),
        arch: Some("sm_80".into()),
        ..Options::default()
    };
    println!(
        "file: testdata/bench_300.cu ({} lines), {runs} runs per case, arch sm_80",
        text.lines().count()
    );
    // `one kernel`: each run changes a constant inside one kernel instead of appending a
    // comment, as typing in a kernel does; NVRTC then compiles that kernel alone
    // (kernel-by-kernel recompiles, docs/cuda.md).
    let needle = "out[i] = a[i] - b[i];";
    let cases = [
        ("nvcc", CompilerChoice::Nvcc, true, false),
        ("nvcc -ptx only", CompilerChoice::Nvcc, false, false),
        ("NVRTC", CompilerChoice::Nvrtc, true, false),
        ("NVRTC only", CompilerChoice::Nvrtc, false, false),
        ("NVRTC, 1 kernel", CompilerChoice::Nvrtc, true, true),
        ("NVRTC only, 1 k.", CompilerChoice::Nvrtc, false, true),
    ];
    for (label, choice, run_ptxas, one_kernel) in cases {
        let edit = |tag: &str| {
            if one_kernel {
                text.replacen(needle, &format!("out[i] = a[i] - {}.0f * b[i];", tag.len() * 1000 + tag.bytes().map(usize::from).sum::<usize>()), 1)
            } else {
                format!("{text}// {tag} {label}\n")
            }
        };
        let opts = Options {
            compiler: choice,
            run_ptxas,
            ..base.clone()
        };
        // One warm-up (NVRTC library load, nvcc probe cache, page cache).
        let _ = prepare_text(&file, Some(&edit("warm-up")), &opts, &CancelToken::new());
        let mut times = Vec::new();
        let mut kernels = 0;
        for i in 0..runs {
            let edited = edit(&format!("edit {i}"));
            let t = Instant::now();
            let p = prepare_text(&file, Some(&edited), &opts, &CancelToken::new());
            times.push(t.elapsed());
            if !matches!(p.origin, PtxOrigin::Compiled(_)) {
                eprintln!("{label}: not compiled: {:?} {:?}", p.diagnostics, p.notes);
                std::process::exit(1);
            }
            kernels = p.kernels.len();
        }
        let (m, lo, hi) = median(times);
        let what = if run_ptxas {
            "with ptxas -v"
        } else {
            "without ptxas"
        };
        println!(
            "{label:>15}: median {:>7.1} ms (min {:.1}, max {:.1}), {kernels} kernels, {what}",
            ms(m),
            ms(lo),
            ms(hi)
        );
    }
    let opts = Options {
        compiler: CompilerChoice::Nvcc,
        ..base
    };
    let fixed = format!("{text}// cached\n");
    let _ = prepare_text(&file, Some(&fixed), &opts, &CancelToken::new());
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let p = prepare_text(&file, Some(&fixed), &opts, &CancelToken::new());
        times.push(t.elapsed());
        assert!(
            matches!(p.origin, PtxOrigin::Cache(_)),
            "expected a cache hit"
        );
    }
    let (m, lo, hi) = median(times);
    println!(
        "{:>15}: median {:>7.1} ms (min {:.1}, max {:.1})",
        "cache hit",
        ms(m),
        ms(lo),
        ms(hi)
    );
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!(
            "load average during the run: {}",
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
