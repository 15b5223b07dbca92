//! Edit-to-hints latency of a `.cu` document (issue 14), for docs/benchmarks.md: what the
//! language server does for each edit of a CUDA file once the debounce has passed
//! (`state.rs`, the analysis job): the CUDA front end (compile, `ptxas -v`, kernel
//! mapping, launch sites), the analysis context, and the analysis with the document's
//! per-kernel memo, on `server/cuda-frontend/testdata/bench_300.cu` (294 lines, 21
//! kernels and host code).
//!
//! Cases, each run N times after one warm-up:
//! - **whole file**: each run appends a different comment at the end, outside every
//!   kernel, so the whole file is compiled (as before kernel-by-kernel recompiles);
//! - **one kernel edited**: each run changes a constant inside one kernel (`ew_sub`), as
//!   typing in a kernel does; with NVRTC only that kernel is compiled again and ptxas runs
//!   on it alone (`cuda_frontend::incremental`). nvcc always compiles the whole file.
//!
//! Run: `cargo run --release -p lsp --example cu_edit_latency [-- RUNS]` with the toolchain
//! at `<repo>/.cuda` (or its `nvidia/cu13` root in `CUDA_ROOT`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cuda_frontend::{CancelToken, CompilerChoice, DiscoveryEnv, Options, PtxOrigin, prepare_text};

fn median(mut v: Vec<Duration>) -> (Duration, Duration, Duration) {
    v.sort();
    let mid = if v.len() % 2 == 1 { v[v.len() / 2] } else { (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2 };
    (mid, v[0], v[v.len() - 1])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(11);
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root: PathBuf = std::env::var_os("CUDA_ROOT")
        .map(PathBuf::from)
        .or_else(|| cuda_frontend::toolchain::managed_cuda_root(&manifest.join("../../.cuda")))
        .unwrap_or_else(|| {
            eprintln!("no CUDA toolchain: set CUDA_ROOT to a .../nvidia/cu13 directory");
            std::process::exit(2);
        });
    let file = manifest.join("../cuda-frontend/testdata/bench_300.cu");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
        eprintln!("{}: {e}", file.display());
        std::process::exit(2);
    });
    let needle = "out[i] = a[i] - b[i];";
    if !text.contains(needle) {
        eprintln!("bench_300.cu no longer has `{needle}`");
        std::process::exit(2);
    }
    let cache_dir = tempfile::Builder::new().prefix("warpsight-edit-latency-").tempdir().expect("a temporary directory");
    let cache = cache_dir.path().to_path_buf();
    let mut env = DiscoveryEnv::empty();
    env.vars.insert("CUDA_HOME".into(), root.display().to_string());
    env.vars.insert("WARPSIGHT_NVCC".into(), root.join("bin/nvcc").display().to_string());
    let settings = analysis::Settings::default();
    println!("file: bench_300.cu ({} lines), {runs} runs per case, arch sm_80, ptxas -v included, analysis with the per-kernel memo", text.lines().count());
    let cases = [
        ("nvcc, whole file", CompilerChoice::Nvcc, false),
        ("NVRTC, whole file", CompilerChoice::Nvrtc, false),
        ("nvcc, one kernel edited", CompilerChoice::Nvcc, true),
        ("NVRTC, one kernel edited", CompilerChoice::Nvrtc, true),
    ];
    for (label, choice, in_kernel) in cases {
        let opts = Options { compiler: choice, env: Some(env.clone()), cache_dir: Some(cache.clone()), arch: Some("sm_80".into()), ..Options::default() };
        let edit = |i: usize| {
            if in_kernel {
                text.replacen(needle, &format!("out[i] = a[i] - {}.0f * b[i];", i + 2), 1)
            } else {
                format!("{text}// edit {i} ({label})\n")
            }
        };
        let mut memo = analysis::Memo::default();
        // Warm-up: loads NVRTC, fills the probe caches, and gives the kernel-by-kernel
        // case its last compile.
        let _ = prepare_text(&file, Some(&edit(1000)), &opts, &CancelToken::new());
        let (mut total, mut front) = (Vec::new(), Vec::new());
        let mut note = String::new();
        for i in 0..runs {
            let edited = edit(i);
            let t = Instant::now();
            let p = prepare_text(&file, Some(&edited), &opts, &CancelToken::new());
            let t_front = t.elapsed();
            if !matches!(p.origin, PtxOrigin::Compiled(_)) {
                eprintln!("{label}: not compiled: {:?} {:?}", p.diagnostics, p.notes);
                std::process::exit(1);
            }
            let cx = cuda_frontend::context::analysis_context(&p);
            let fa = analysis::analyze_memo(&p.ptx, &settings, &cx, Some(&mut memo));
            total.push(t.elapsed());
            front.push(t_front);
            if fa.kernels.len() != 21 {
                eprintln!("{label}: {} kernels analysed", fa.kernels.len());
                std::process::exit(1);
            }
            note = p.notes.iter().find(|n| n.starts_with("NVRTC compiled")).cloned().unwrap_or_default();
        }
        let (m, lo, hi) = median(total);
        let (fm, _, _) = median(front);
        println!("{label:>26}: edit to hints median {:>7.1} ms (min {:.1}, max {:.1}); front end {:.1} ms. {note}", ms(m), ms(lo), ms(hi), ms(fm));
    }
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average during the run: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    }
}
