//! Parse throughput: ours vs the `ptx-syntax` 0.5.0 crate, and parse+lower with `ptx-ir`.
//!
//! Parse + lower is measured two ways: `ptx_ir::parse_and_lower` (the parser streams each
//! function body into the lowering, no tree of the bodies is built; this is the number
//! the throughput target is about) and `ptx_ir::lower(&ptx::parse(..).module, ..)` (a
//! full tree first, for consumers that also need the tree). Both give identical IR.
//!
//! Inputs: the crate's compiler-generated PTX (`tests/data`) plus every `.ptx` under the
//! workspace's `tests/fixtures`, and one large module (>= 50 MB) built by concatenating
//! copies of those files with every function and module-level variable renamed per copy,
//! so the large file is one valid module with unique symbols.
//!
//! `ptx-syntax` is measured on the same inputs, restricted to the files it accepts
//! (it returns `Err` on some compiler output; timing a parse that stops at the first error
//! would flatter it). The counts of accepted files are printed so the comparison is honest.
//! Results and the machine they were taken on are recorded in `docs/benchmarks.md`.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Appends the `.ptx` files under `dir`, recursively (none when `dir` is missing).
fn ptx_files(dir: &Path, acc: &mut Vec<PathBuf>) {
    let files = walkdir::WalkDir::new(dir).into_iter().flatten().filter(|e| e.file_type().is_file());
    acc.extend(files.map(walkdir::DirEntry::into_path).filter(|p| p.extension().is_some_and(|e| e == "ptx")));
}

fn load_corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    ptx_files(&root.join("tests/data"), &mut paths);
    ptx_files(&root.join("../../tests/fixtures"), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(&p).ok()?)))
        .collect()
}

fn peer_accepts(src: &str) -> bool {
    // The peer may panic on odd input; treat that as "not accepted".
    std::panic::catch_unwind(|| ptx_syntax::parse_ptx(src).is_ok()).unwrap_or(false)
}

/// Appends `src` without its module header, renaming its functions and module-level
/// variables with `suffix` (whole identifiers only).
fn append_renamed(acc: &mut String, src: &str, suffix: &str) {
    let parse = ptx::parse(src);
    let mut names: Vec<&str> = parse.module.functions().map(|f| f.name).collect();
    names.extend(parse.module.variables().map(|v| v.name));
    names.sort_unstable();
    names.dedup();
    let body_start = src
        .find(".address_size")
        .and_then(|at| src[at..].find('\n').map(|nl| at + nl + 1))
        .unwrap_or(0);
    let text = &src[body_start..];
    let bytes = text.as_bytes();
    let is_start = |c: u8| c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%';
    let is_cont = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut i = 0;
    let mut last = 0;
    while i < bytes.len() {
        if is_start(bytes[i]) && (i == 0 || !is_cont(bytes[i - 1])) {
            let start = i;
            i += 1;
            while i < bytes.len() && is_cont(bytes[i]) {
                i += 1;
            }
            if names.binary_search(&&text[start..i]).is_ok() {
                acc.push_str(&text[last..i]);
                acc.push_str(suffix);
                last = i;
            }
        } else {
            i += 1;
        }
    }
    acc.push_str(&text[last..]);
}

fn build_large(files: &[&str], min_bytes: usize) -> String {
    let mut acc = String::from(".version 9.0\n.target sm_90a\n.address_size 64\n\n");
    let mut copy = 0usize;
    while acc.len() < min_bytes {
        for src in files {
            append_renamed(&mut acc, src, &format!("_c{copy}"));
        }
        copy += 1;
    }
    acc
}

fn bench(c: &mut Criterion) {
    let corpus = load_corpus();
    let all: Vec<&str> = corpus.iter().map(|(_, s)| s.as_str()).collect();
    let accepted: Vec<&str> = corpus
        .iter()
        .filter(|(_, s)| peer_accepts(s))
        .map(|(_, s)| s.as_str())
        .collect();
    let rejected: Vec<&str> = corpus
        .iter()
        .filter(|(_, s)| !peer_accepts(s))
        .map(|(n, _)| n.as_str())
        .collect();
    println!(
        "corpus: {} files, {} bytes; ptx-syntax accepts {} files",
        all.len(),
        all.iter().map(|s| s.len()).sum::<usize>(),
        accepted.len()
    );
    for name in &rejected {
        let src = corpus
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.as_str())
            .unwrap_or("");
        let why =
            std::panic::catch_unwind(|| ptx_syntax::parse_ptx(src).err().map(|e| format!("{e:?}")))
                .unwrap_or_else(|_| Some("panicked".to_owned()))
                .unwrap_or_default();
        println!(
            "  ptx-syntax rejects {name}: {}",
            why.chars().take(300).collect::<String>()
        );
    }

    let large_all = build_large(&all, 50 << 20);
    let large_peer = build_large(&accepted, 50 << 20);
    let check = ptx::parse(&large_all);
    println!(
        "large (all files): {} bytes, {} functions, {} diagnostics",
        large_all.len(),
        check.module.functions().count(),
        check.errors.len()
    );
    println!(
        "large (peer-accepted files): {} bytes, ptx-syntax ok = {}",
        large_peer.len(),
        peer_accepts(&large_peer)
    );
    drop(check);

    let mut g = c.benchmark_group("corpus");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Bytes(all.iter().map(|s| s.len() as u64).sum()));
    g.bench_function("ptx/all", |b| {
        b.iter(|| {
            all.iter()
                .map(|s| black_box(ptx::parse(black_box(s))).errors.len())
                .sum::<usize>()
        })
    });
    g.bench_function("parse_and_lower/all", |b| {
        b.iter(|| {
            for s in &all {
                black_box(ptx_ir::parse_and_lower(black_box(s)));
            }
        })
    });
    g.bench_function("ptx+lower/all", |b| {
        b.iter(|| {
            for s in &all {
                black_box(ptx_ir::lower(&ptx::parse(black_box(s)).module, s));
            }
        })
    });
    g.throughput(Throughput::Bytes(
        accepted.iter().map(|s| s.len() as u64).sum(),
    ));
    g.bench_function("ptx/peer-accepted", |b| {
        b.iter(|| {
            accepted
                .iter()
                .map(|s| black_box(ptx::parse(black_box(s))).errors.len())
                .sum::<usize>()
        })
    });
    g.bench_function("parse_and_lower/peer-accepted", |b| {
        b.iter(|| {
            for s in &accepted {
                black_box(ptx_ir::parse_and_lower(black_box(s)));
            }
        })
    });
    g.bench_function("ptx-syntax/peer-accepted", |b| {
        b.iter(|| {
            accepted
                .iter()
                .map(|s| black_box(ptx_syntax::parse_ptx(black_box(s))).is_ok() as usize)
                .sum::<usize>()
        })
    });
    g.finish();

    let mut g = c.benchmark_group("large");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Bytes(large_all.len() as u64));
    g.bench_function("ptx/all", |b| {
        b.iter(|| black_box(ptx::parse(black_box(&large_all))).errors.len())
    });
    g.bench_function("parse_and_lower/all", |b| {
        b.iter(|| black_box(ptx_ir::parse_and_lower(black_box(&large_all))))
    });
    g.bench_function("ptx+lower/all", |b| {
        b.iter(|| {
            black_box(ptx_ir::lower(
                &ptx::parse(black_box(&large_all)).module,
                &large_all,
            ))
        })
    });
    g.throughput(Throughput::Bytes(large_peer.len() as u64));
    g.bench_function("ptx/peer-accepted", |b| {
        b.iter(|| black_box(ptx::parse(black_box(&large_peer))).errors.len())
    });
    g.bench_function("parse_and_lower/peer-accepted", |b| {
        b.iter(|| black_box(ptx_ir::parse_and_lower(black_box(&large_peer))))
    });
    g.finish();

    // The peer needs about 20 s per parse of the large file; criterion's minimum of 10
    // samples would take minutes, so it gets two timed runs and the faster one is printed.
    let mut best = f64::MAX;
    for _ in 0..2 {
        let t = Instant::now();
        black_box(ptx_syntax::parse_ptx(black_box(&large_peer)).is_ok());
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "large/ptx-syntax/peer-accepted: best of 2 runs {:.3} s, {:.2} MiB/s",
        best,
        large_peer.len() as f64 / best / (1u64 << 20) as f64
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
