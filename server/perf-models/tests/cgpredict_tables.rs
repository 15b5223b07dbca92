//! Golden reproductions of CGPredict (Wang et al. 2017) with the `cgpredict` paper layer.
//!
//! The paper publishes full inputs for none of its kernels. It does publish, for SYRK and
//! GEMM, the access-class mix (half constant, half uncoalesced or coalesced), 2048 memory
//! instructions per thread, MWP (5.97, 54.45) and CWP (64 for SYRK). The other GEMM-family
//! kernels (SYR2K, 3MM, the pre-transposed SYRK of Table 6, MM of Table 7) follow from the
//! same PolyBench loop bodies. Instruction counts come from the paper's Table 2 mapping of
//! those bodies (2 loads + fmul + fma + loop add and branch = 6 per k iteration for
//! GEMM/SYRK); they barely matter, because every one of these kernels is memory-bound with
//! CWP capped at N. Two variants are run: all accesses hit in L2 (our back-check of §4.1's numbers),
//! and a constant-class DRAM miss rate back-solved from GEMM's printed MWP.
//!
//! The same code renders `docs/models/cgpredict.md`'s tables (`UPDATE_DOCS=1` rewrites).

use perf_models::cgpredict::{CgCase, CgInputs, ClassCounts, Platform, evaluate};

/// One Table 4 (or Table 6/7) kernel as we derive it from its PolyBench loop body.
struct Kernel {
    name: &'static str,
    source: &'static str,
    /// Matrix size (work size per dimension): threads are size × size.
    size: f64,
    /// Length of the inner (k) loop of each thread.
    k: f64,
    /// CUDA kernels launched one after another (3MM has three).
    kernels: f64,
    /// Per k iteration: constant, coalesced and uncoalesced loads, and all instructions.
    const_per_k: f64,
    coal_per_k: f64,
    uncoal_per_k: f64,
    insts_per_k: f64,
    paper_est_ms: f64,
    actual_ms: f64,
}

fn kernels() -> Vec<Kernel> {
    vec![
        Kernel {
            name: "GEMM",
            source: "Table 4",
            size: 1024.0,
            k: 1024.0,
            kernels: 1.0,
            const_per_k: 1.0,
            coal_per_k: 1.0,
            uncoal_per_k: 0.0,
            insts_per_k: 6.0,
            paper_est_ms: 242.53,
            actual_ms: 249.16,
        },
        Kernel {
            name: "SYRK",
            source: "Table 4",
            size: 1024.0,
            k: 1024.0,
            kernels: 1.0,
            const_per_k: 1.0,
            coal_per_k: 0.0,
            uncoal_per_k: 1.0,
            insts_per_k: 6.0,
            paper_est_ms: 2605.45,
            actual_ms: 2762.50,
        },
        Kernel {
            name: "SYR2K",
            source: "Table 4",
            size: 1024.0,
            k: 1024.0,
            kernels: 1.0,
            const_per_k: 2.0,
            coal_per_k: 0.0,
            uncoal_per_k: 2.0,
            insts_per_k: 10.0,
            paper_est_ms: 5204.73,
            actual_ms: 5430.54,
        },
        Kernel {
            name: "3MM",
            source: "Table 4",
            size: 2048.0,
            k: 2048.0,
            kernels: 3.0,
            const_per_k: 1.0,
            coal_per_k: 1.0,
            uncoal_per_k: 0.0,
            insts_per_k: 5.0,
            paper_est_ms: 5819.73,
            actual_ms: 5990.76,
        },
        Kernel {
            name: "2MM",
            source: "Table 4",
            size: 4096.0,
            k: 4096.0,
            kernels: 2.0,
            const_per_k: 1.0,
            coal_per_k: 1.0,
            uncoal_per_k: 0.0,
            insts_per_k: 5.0,
            paper_est_ms: 15518.11,
            actual_ms: 16294.07,
        },
        Kernel {
            name: "2MM, K = 2048 (hypothesis)",
            source: "Table 4",
            size: 4096.0,
            k: 2048.0,
            kernels: 2.0,
            const_per_k: 1.0,
            coal_per_k: 1.0,
            uncoal_per_k: 0.0,
            insts_per_k: 5.0,
            paper_est_ms: 15518.11,
            actual_ms: 16294.07,
        },
        Kernel {
            name: "SYRK, A pre-transposed",
            source: "Table 6",
            size: 1024.0,
            k: 1024.0,
            kernels: 1.0,
            const_per_k: 1.0,
            coal_per_k: 1.0,
            uncoal_per_k: 0.0,
            insts_per_k: 6.0,
            paper_est_ms: 237.53,
            actual_ms: 250.37,
        },
        Kernel {
            name: "MM",
            source: "Table 7",
            size: 1024.0,
            k: 1024.0,
            kernels: 1.0,
            const_per_k: 1.0,
            coal_per_k: 1.0,
            uncoal_per_k: 0.0,
            insts_per_k: 5.0,
            paper_est_ms: 242.51,
            actual_ms: 250.27,
        },
    ]
}

/// The inputs of one CUDA kernel of `k`: one thread per (i, j), 32×32 blocks, so on the
/// TK1's 2048 resident threads B = 2 and N = 64 (paper §3.2 and §3.5).
fn inputs(k: &Kernel, const_miss: f64) -> CgInputs {
    let zero = ClassCounts::default();
    CgInputs {
        no_total_insts: k.insts_per_k * k.k,
        mem_insts: ClassCounts {
            uncoal: k.uncoal_per_k * k.k,
            coal: k.coal_per_k * k.k,
            const_: k.const_per_k * k.k,
        },
        no_dram_trans: ClassCounts {
            const_: const_miss,
            ..zero
        },
        smem_insts: zero,
        no_smem_load_insts: 0.0,
        no_sync_insts: 0.0,
        active_warps: 64.0,
        active_blocks: 2.0,
        no_blocks: k.size * k.size / 1024.0,
    }
}

fn predict_ms(k: &Kernel, const_miss: f64) -> f64 {
    let out = evaluate(&Platform::jetson_tk1(), &inputs(k, const_miss)).unwrap();
    out.time_ms * k.kernels
}

/// The constant-class DRAM transactions per instruction that make GEMM's MWP the printed
/// 54.45 (bisection on the model itself; MWP falls as the miss rate rises).
fn const_miss_from_gemm_mwp() -> f64 {
    let gemm = &kernels()[0];
    let mwp = |m: f64| {
        evaluate(&Platform::jetson_tk1(), &inputs(gemm, m))
            .unwrap()
            .mwp
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if mwp(mid) > 54.45 { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

fn rel(ours: f64, paper: f64) -> f64 {
    (ours - paper) / paper
}

#[test]
fn syrk_and_gemm_back_checks_within_three_percent() {
    let p = Platform::jetson_tk1();
    let all = kernels();
    let (gemm, syrk) = (&all[0], &all[1]);
    let s = evaluate(&p, &inputs(syrk, 0.0)).unwrap();
    let g = evaluate(&p, &inputs(gemm, 0.0)).unwrap();
    // By hand from eqs 1–8 and Table 3: SYRK mem_l 195, departure delay 33, MWP 5.91 (paper 5.97), CWP 64.
    assert_eq!((s.mem_l, s.departure_delay), (195.0, 33.0));
    assert!((s.mwp - 5.909).abs() < 1e-3, "{}", s.mwp);
    assert_eq!(s.cwp, 64.0);
    assert_eq!(s.case, CgCase::MemoryBound);
    assert_eq!(s.batch, 512.0);
    // GEMM mem_l 165, delay 3, MWP 55.0 (paper 54.45), CWP capped at 64.
    assert_eq!((g.mem_l, g.departure_delay), (165.0, 3.0));
    assert!((g.mwp - 55.0).abs() < 1e-9);
    assert_eq!(g.cwp, 64.0);
    for k in [gemm, syrk] {
        let ms = predict_ms(k, 0.0);
        assert!(rel(ms, k.paper_est_ms).abs() < 0.03, "{}: {ms}", k.name);
    }
}

#[test]
fn one_constant_miss_rate_reproduces_both_mwps_and_times() {
    // Solving GEMM's printed MWP for the constant-class miss rate gives 1.55 %; the same
    // rate then gives SYRK's printed MWP (5.97) and both printed times within 0.2 %.
    let m = const_miss_from_gemm_mwp();
    assert!((m - 0.01553).abs() < 1e-4, "{m}");
    let p = Platform::jetson_tk1();
    let all = kernels();
    let s = evaluate(&p, &inputs(&all[1], m)).unwrap();
    assert!((s.mwp - 5.97).abs() < 0.005, "{}", s.mwp);
    for k in &all[..2] {
        let ms = predict_ms(k, m);
        assert!(rel(ms, k.paper_est_ms).abs() < 0.002, "{}: {ms}", k.name);
    }
}

#[test]
fn gemm_family_kernels_land_within_three_percent() {
    let m = const_miss_from_gemm_mwp();
    for k in kernels().iter().filter(|k| !k.name.starts_with("2MM")) {
        for miss in [0.0, m] {
            let ms = predict_ms(k, miss);
            assert!(
                rel(ms, k.paper_est_ms).abs() < 0.03,
                "{} (miss {miss}): {ms}",
                k.name
            );
        }
    }
}

#[test]
fn two_mm_at_4096_is_twice_the_paper_estimate() {
    // Two 4096³ products are 128 GEMM-1024 equivalents in the model; the paper's estimate
    // (and its measurement) are about 64. The printed work size cannot be what the paper
    // ran for 2MM; see docs/models/cgpredict.md.
    let k = kernels().into_iter().find(|k| k.name == "2MM").unwrap();
    let ratio = predict_ms(&k, 0.0) / k.paper_est_ms;
    assert!((ratio - 1.95).abs() < 0.03, "{ratio}");
    // Two 4096 × 4096 products with a 2048-long inner loop (the same work as one 4096³
    // product) land on the paper's estimate: our reading of the work size is the likely
    // culprit, not the model.
    let half = kernels()
        .into_iter()
        .find(|k| k.name.starts_with("2MM, K = 2048"))
        .unwrap();
    let m = const_miss_from_gemm_mwp();
    assert!(rel(predict_ms(&half, m), half.paper_est_ms).abs() < 0.002);
    assert!(rel(predict_ms(&half, 0.0), half.paper_est_ms).abs() < 0.03);
}

/// The Table 4 kernels we do not reproduce and why.
const NOT_REPRODUCED: &[(&str, f64, f64, &str)] = &[
    (
        "2DCONV",
        29.52,
        28.01,
        "stencil; L2 miss rates per class not published",
    ),
    (
        "3DCONV",
        84.54,
        68.30,
        "stencil; L2 miss rates per class not published",
    ),
    (
        "ATAX",
        201.70,
        193.04,
        "1-D, streams a 64 MB matrix: DRAM transactions per class come from the paper's trace analysis, not published",
    ),
    ("BICG", 237.69, 199.22, "as ATAX"),
    (
        "CORR",
        3071.66,
        2678.05,
        "four kernels with reductions and sqrt; per-kernel counts not published",
    ),
    (
        "COVAR",
        3073.58,
        3465.71,
        "three kernels; per-kernel counts not published",
    ),
    (
        "FDTD-2D",
        1492.23,
        1243.21,
        "time-stepped stencil; step count and miss rates not published",
    ),
    ("GESUMMV", 680.85, 769.69, "as ATAX"),
    (
        "GRAMSCHM",
        43.79,
        45.58,
        "three kernels launched per column; launch count and miss rates not published",
    ),
    ("MVT", 215.96, 193.04, "as ATAX"),
];

fn render() -> String {
    let m = const_miss_from_gemm_mwp();
    let p = Platform::jetson_tk1();
    let mut s = String::new();
    s.push_str(&format!(
        "Constant-class DRAM transactions per instruction back-solved from GEMM's printed MWP 54.45: **{:.4}** ({:.2} %).\n\n",
        m,
        m * 100.0
    ));
    s.push_str("| Kernel | Source | Size | Mem insts/thread (const/coal/uncoal) | MWP (L2 hits) | MWP (miss fit) | CWP | Ours, L2 hits (ms) | Ours, miss fit (ms) | Paper est. (ms) | Ours vs paper (hits / fit) | Actual (ms) | Ours (fit) vs actual |\n");
    s.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for k in kernels() {
        let hits = evaluate(&p, &inputs(&k, 0.0)).unwrap();
        let fit = evaluate(&p, &inputs(&k, m)).unwrap();
        let (ms0, ms1) = (predict_ms(&k, 0.0), predict_ms(&k, m));
        s.push_str(&format!(
            "| {} | {} | {:.0} | {:.0}/{:.0}/{:.0} | {:.2} | {:.2} | {:.0} | {:.2} | {:.2} | {} | {:+.2} % / {:+.2} % | {} | {:+.2} % |\n",
            k.name, k.source, k.size, k.const_per_k * k.k, k.coal_per_k * k.k, k.uncoal_per_k * k.k,
            hits.mwp, fit.mwp, fit.cwp, ms0, ms1, k.paper_est_ms,
            rel(ms0, k.paper_est_ms) * 100.0, rel(ms1, k.paper_est_ms) * 100.0, k.actual_ms,
            rel(ms1, k.actual_ms) * 100.0
        ));
    }
    s.push_str("\nNot reproduced (inputs not published):\n\n| Kernel | Actual (ms) | Paper est. (ms) | Why not |\n|---|---|---|---|\n");
    for (name, actual, est, why) in NOT_REPRODUCED {
        s.push_str(&format!("| {name} | {actual} | {est} | {why} |\n"));
    }
    s
}

const BEGIN: &str = "<!-- generated by server/perf-models/tests/cgpredict_tables.rs: begin -->\n";
const END: &str = "<!-- generated: end -->\n";

#[test]
fn docs_tables_are_current() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/models/cgpredict.md"
    );
    let doc = std::fs::read_to_string(path).unwrap_or_default();
    let generated = render();
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("{path} lacks the generated-section markers");
    };
    let current = &doc[b + BEGIN.len()..e];
    if current != generated {
        if std::env::var_os("UPDATE_DOCS").is_some() {
            let updated = format!("{}{BEGIN}{generated}{}", &doc[..b], &doc[e..]);
            std::fs::write(path, updated).unwrap();
        } else {
            panic!(
                "{path} is stale: run `UPDATE_DOCS=1 cargo test -p perf-models --test cgpredict_tables`"
            );
        }
    }
}

#[test]
fn inputs_that_are_not_counts_are_refused() {
    // Eqs 1–8 take DRAM transactions per instruction of each class: a NaN or negative one
    // is not a count, and the paper layer refuses it rather than producing a time
    // (mutation survivor: one `||` of the input check).
    let p = Platform::jetson_tk1();
    let gemm = &kernels()[0];
    assert!(evaluate(&p, &inputs(gemm, 0.0)).is_some());
    for bad in [f64::NAN, -1.0, f64::INFINITY] {
        let mut x = inputs(gemm, 0.0);
        x.no_dram_trans.coal = bad;
        assert!(evaluate(&p, &x).is_none(), "DRAM transactions {bad}");
        let mut x = inputs(gemm, 0.0);
        x.mem_insts.coal = bad;
        assert!(evaluate(&p, &x).is_none(), "memory instructions {bad}");
    }
}
