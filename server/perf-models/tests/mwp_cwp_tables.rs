//! Golden reproductions of Dasgupta's thesis (Dasgupta 2011) with the `mwp_cwp` paper layer.
//!
//! Each test feeds the thesis's published inputs into the model and compares with its
//! published outputs: the tuning tables 8–10 exactly (the thesis truncates), the vector
//! tuning of Table 11 against Table 4's measurement, and the FMM tables 12–16 as far as
//! their printed inputs go (they print MWP and CWP but not the transaction mix, so those
//! rows start at the execution-cycle stage). The same code renders the comparison tables of
//! `docs/models/mwp_cwp.md`; `docs_tables_are_current` fails when the committed document
//! differs, and `UPDATE_DOCS=1 cargo test` rewrites it, so the documented numbers are always
//! the ones the tests compute.

use perf_models::mwp_cwp::{
    Case, Device, ExecTerms, MemoryTraffic, MwpCwpInputs, evaluate, exec_cycles_app,
};

/// One tuning micro-benchmark (thesis §3.2.6; configuration of Tables 2/4 and Appendix A:
/// 256 threads/block, 120 blocks, occupancy 1 so N = 32 and 4 blocks/SM on 30 SMs, 400
/// requests and 800 transactions per warp).
struct TuningRow {
    table: &'static str,
    what: &'static str,
    /// Instructions per warp (Table 4: 7942 scalar, 7934 vector).
    insts: f64,
    t32: f64,
    t64: f64,
    t128: f64,
    tvec32: f64,
    /// The thesis's printed prediction (ms) and its decimals, when it printed one.
    paper_pred_ms: Option<(f64, u32)>,
    actual_ms: f64,
}

fn tuning_rows() -> Vec<TuningRow> {
    vec![
        TuningRow {
            table: "8",
            what: "32 B scalar, dep 37",
            insts: 7942.0,
            t32: 800.0,
            t64: 0.0,
            t128: 0.0,
            tvec32: 0.0,
            paper_pred_ms: Some((0.7222, 4)),
            actual_ms: 0.7243,
        },
        TuningRow {
            table: "9",
            what: "64 B scalar, dep 37",
            insts: 7942.0,
            t32: 0.0,
            t64: 800.0,
            t128: 0.0,
            tvec32: 0.0,
            paper_pred_ms: Some((0.7222, 4)),
            actual_ms: 0.7240,
        },
        TuningRow {
            table: "10",
            what: "128 B scalar, dep 58",
            insts: 7942.0,
            t32: 0.0,
            t64: 0.0,
            t128: 800.0,
            tvec32: 0.0,
            paper_pred_ms: Some((1.131, 3)),
            actual_ms: 1.137,
        },
        TuningRow {
            table: "11 (+ Table 4)",
            what: "32 B vector, dep 57",
            insts: 7934.0,
            t32: 0.0,
            t64: 0.0,
            t128: 0.0,
            tvec32: 800.0,
            paper_pred_ms: None,
            actual_ms: 1.0588,
        },
    ]
}

fn tuning_inputs(row: &TuningRow) -> MwpCwpInputs {
    MwpCwpInputs::simple(
        32.0,
        4.0,
        120.0,
        30.0,
        row.insts,
        MemoryTraffic::Transactions {
            warp_mem: 400.0,
            warp_memtran_32b: row.t32,
            warp_memtran_64b: row.t64,
            warp_memtran_128b: row.t128,
            vector_memtran: row.tvec32,
            vector_bytes_per_transaction: 32.0,
        },
    )
}

/// The thesis truncates its printed values (e.g. 0.72229 is printed 0.7222, 1.13191 as 1.131).
fn truncate(x: f64, decimals: u32) -> f64 {
    let scale = 10f64.powi(decimals as i32);
    (x * scale + 1e-9).floor() / scale
}

#[test]
fn tuning_tables_8_to_10_reproduce_to_the_printed_digit() {
    let d = Device::tesla_c1060();
    for row in tuning_rows() {
        let out = evaluate(&d, &tuning_inputs(&row)).unwrap();
        assert_eq!(out.case, Case::MemoryBound, "table {}", row.table);
        assert_eq!(out.n, 32.0);
        assert_eq!(out.rep, 1.0);
        let ms = out.time_us / 1e3;
        if let Some((paper, decimals)) = row.paper_pred_ms {
            assert_eq!(
                truncate(ms, decimals),
                paper,
                "table {}: ours {ms}",
                row.table
            );
        }
    }
}

#[test]
fn tuning_intermediates_match_the_spec_back_check() {
    // The intermediates of the three scalar rows and the vector row, by hand from eqs 16–30.
    let d = Device::tesla_c1060();
    let expected = [
        (487.0, 74.0, 6.581, 19.80, 7.132, 947_643.0),
        (487.0, 74.0, 6.581, 9.90, 7.132, 947_643.0),
        (508.0, 116.0, 4.379, 5.163, 7.396, 1_485_068.0),
        (507.0, 114.0, 4.447, 20.61, 7.390, 1_459_474.0),
    ];
    for (row, (ml, dpr, mwp_nobw, mwp_bw, cwp, exec)) in tuning_rows().iter().zip(expected) {
        let out = evaluate(&d, &tuning_inputs(row)).unwrap();
        assert!((out.mem_l - ml).abs() < 1e-9, "{}", row.table);
        assert!((out.departure_delay - dpr).abs() < 1e-9);
        assert!(
            (out.mwp_without_bw - mwp_nobw).abs() < 5e-4,
            "{}",
            out.mwp_without_bw
        );
        assert!(
            (out.mwp_peak_bw - mwp_bw).abs() / mwp_bw < 5e-3,
            "{}",
            out.mwp_peak_bw
        );
        assert!((out.cwp - cwp).abs() < 5e-4, "{}", out.cwp);
        assert!((out.exec_cycles - exec).abs() < 1.0, "{}", out.exec_cycles);
    }
}

#[test]
fn vector_tuning_is_five_percent_slow_against_table_4() {
    // The thesis prints no prediction for Table 11; against Table 4's measured 1.0588 ms
    // our prediction with the tuned 57 cycles is 1.1124 ms (+5.1 %). A delay of about
    // 54 cycles would fit Table 4, so Table 11 was tuned on another run.
    let d = Device::tesla_c1060();
    let rows = tuning_rows();
    let out = evaluate(&d, &tuning_inputs(&rows[3])).unwrap();
    let ms = out.time_us / 1e3;
    assert!((ms - 1.1124).abs() < 5e-5, "{ms}");
    let with_54 = Device {
        dep_delay_vector: 54.0,
        ..d
    };
    let ms54 = evaluate(&with_54, &tuning_inputs(&rows[3]))
        .unwrap()
        .time_us
        / 1e3;
    assert!((ms54 - 1.0588).abs() / 1.0588 < 0.01, "{ms54}");
}

/// Table 6 (frequency tuning, no memory operation): the thesis prints no instruction count,
/// so the row cannot be reproduced; this back-solves the count it implies.
fn table6_implied_insts() -> f64 {
    // 512 threads/block = 16 warps, 2 blocks/SM, N = 32, #Rep = 120 / (2 × 30) = 2.
    let cycles = 0.844e-3 * 1.312e9;
    cycles / (4.0 * 32.0 * 2.0)
}

#[test]
fn table6_implies_about_43_instructions_per_iteration() {
    let d = Device::tesla_c1060();
    let insts = table6_implied_insts();
    assert!((insts - 4325.5).abs() < 0.5, "{insts}");
    // Feeding that count back gives the printed 0.844 ms through the no-memory case.
    let x = MwpCwpInputs::simple(
        32.0,
        2.0,
        120.0,
        30.0,
        insts,
        MemoryTraffic::Transactions {
            warp_mem: 0.0,
            warp_memtran_32b: 0.0,
            warp_memtran_64b: 0.0,
            warp_memtran_128b: 0.0,
            vector_memtran: 0.0,
            vector_bytes_per_transaction: 0.0,
        },
    );
    let out = evaluate(&d, &x).unwrap();
    assert_eq!(out.case, Case::NoMemory);
    assert!((out.time_us / 1e3 - 0.844).abs() < 1e-9);
}

/// One FMM kernel at 64 threads/block (Tables 12–16): what the thesis prints.
struct FmmRow {
    name: &'static str,
    table: &'static str,
    insts: f64,
    mem_ops: f64,
    /// Active warps per SM from the printed occupancy (× 32).
    n: f64,
    mwp: f64,
    cwp: f64,
    actual_ms: f64,
    paper_pred_ms: f64,
}

fn fmm_rows() -> Vec<FmmRow> {
    vec![
        FmmRow {
            name: "baseline",
            table: "12–16",
            insts: 235880.0,
            mem_ops: 47013.0,
            n: 16.0,
            mwp: 9.722,
            cwp: 16.0,
            actual_ms: 66.21315,
            paper_pred_ms: 66.33431,
        },
        FmmRow {
            name: "shmem",
            table: "12",
            insts: 262520.0,
            mem_ops: 8854.0,
            n: 16.0,
            mwp: 9.070,
            cwp: 4.425,
            actual_ms: 35.952,
            paper_pred_ms: 35.99694,
        },
        FmmRow {
            name: "ujam",
            table: "13",
            insts: 215413.0,
            mem_ops: 36426.86,
            n: 12.0,
            mwp: 10.08268,
            cwp: 12.0,
            actual_ms: 49.972,
            paper_pred_ms: 49.356,
        },
        FmmRow {
            name: "vecpack",
            table: "14",
            insts: 165275.0,
            mem_ops: 11893.0,
            n: 16.0,
            mwp: 3.969,
            cwp: 8.486,
            actual_ms: 44.318,
            paper_pred_ms: 45.608,
        },
        FmmRow {
            name: "rsqrt",
            table: "15",
            insts: 224177.0,
            mem_ops: 47013.0,
            n: 16.0,
            mwp: 9.722,
            cwp: 16.0,
            actual_ms: 64.98121,
            paper_pred_ms: 66.33422,
        },
        FmmRow {
            name: "pref",
            table: "16",
            insts: 331252.1,
            mem_ops: 47253.99,
            n: 16.0,
            mwp: 9.722,
            cwp: 15.317,
            actual_ms: 62.896,
            paper_pred_ms: 64.672,
        },
    ]
}

const FMM_BLOCKS: f64 = 585.0;
const WARPS_PER_BLOCK_64T: f64 = 2.0;

fn fmm_rep(row: &FmmRow) -> f64 {
    FMM_BLOCKS / ((row.n / WARPS_PER_BLOCK_64T) * 30.0)
}

/// What the FMM reproduction derives for one row.
struct FmmResult {
    /// `Mem_L` that makes the model give the printed prediction from the printed MWP/CWP.
    implied_mem_l: f64,
    /// Compute cycles per warp implied by CWP < N (shmem only) or assumed 4 × #insts.
    comp_cycles: f64,
    /// Our forward prediction (None for vecpack, whose vector loads have their own
    /// latency, and for shmem, whose compute cycles include unprinted special and
    /// bank-conflict latencies): the other rows with the baseline's implied `Mem_L` (the
    /// baseline is their calibration), the baseline itself with the tuned base latency
    /// for one transaction per request (450 cycles, Table 7), which does not come from
    /// its printed prediction. Before, the baseline was run with the latency solved from
    /// its own printed prediction and matched it by construction.
    forward_ms: Option<f64>,
    case: Case,
}

fn fmm_results() -> Vec<(FmmRow, FmmResult)> {
    let d = Device::tesla_c1060();
    let cycles = |ms: f64| ms * 1e-3 * d.freq_ghz * 1e9;
    let rows = fmm_rows();
    let base = &rows[0];
    let base_comp = d.issue_cycles * base.insts;
    // Case 2: T = (ML·R·N/MWP + Comp/R·(MWP−1))·Rep, solved for ML.
    let solve_case2 = |row: &FmmRow, comp: f64| {
        (cycles(row.paper_pred_ms) / fmm_rep(row) - comp / row.mem_ops * (row.mwp - 1.0)) * row.mwp
            / (row.mem_ops * row.n)
    };
    let base_ml = solve_case2(base, base_comp);
    let mut out = Vec::new();
    for row in rows {
        let rep = fmm_rep(&row);
        let (implied_mem_l, comp_cycles, forward_ms, case) = if row.cwp < row.mwp {
            // Case 3 (shmem): T = (ML + Comp·N)·Rep with CWP = (ML·R + Comp)/Comp: two
            // equations, two unknowns.
            let k = (row.cwp - 1.0) / row.mem_ops; // ML = k · Comp
            let comp = cycles(row.paper_pred_ms) / rep / (k + row.n);
            (k * comp, comp, None, Case::ComputeBound)
        } else {
            let comp = d.issue_cycles * row.insts;
            let ml = solve_case2(&row, comp);
            let forward = if row.name == "vecpack" {
                None
            } else {
                let mem_l = if row.name == "baseline" { d.base_mem_latency } else { base_ml };
                let (case, exec) = exec_cycles_app(&ExecTerms {
                    n: row.n,
                    mwp: row.mwp,
                    cwp: row.cwp,
                    mem_l,
                    mem_cycles: mem_l * row.mem_ops,
                    comp_cycles: comp,
                    mem_insts: row.mem_ops,
                    rep,
                });
                assert_eq!(case, Case::MemoryBound);
                Some(exec / (d.freq_ghz * 1e6))
            };
            (ml, comp, forward, Case::MemoryBound)
        };
        out.push((
            row,
            FmmResult {
                implied_mem_l,
                comp_cycles,
                forward_ms,
                case,
            },
        ));
    }
    out
}

#[test]
fn fmm_baseline_implies_a_latency_consistent_with_the_tuned_parameters() {
    let results = fmm_results();
    let (_, base) = &results[0];
    // 450 + (ntpr − 1) × 37 = 461.5 means 1.31 transactions per request after merging.
    assert!(
        (base.implied_mem_l - 461.5).abs() < 0.5,
        "{}",
        base.implied_mem_l
    );
    for (row, r) in &results {
        // The printed MWP and CWP decide the case as the thesis says (memory-bound except
        // shmem).
        let expected = if row.name == "shmem" {
            Case::ComputeBound
        } else {
            Case::MemoryBound
        };
        assert_eq!(r.case, expected, "{}", row.name);
    }
}

#[test]
fn fmm_forward_predictions_from_the_baseline_latency() {
    for (row, r) in fmm_results() {
        let Some(ours) = r.forward_ms else { continue };
        let err = (ours - row.paper_pred_ms) / row.paper_pred_ms;
        match row.name {
            // Same requests, MWP and CWP: the rsqrt gain is invisible to the model, as the
            // thesis says (66.33422 vs 66.33431 ms).
            "rsqrt" => assert!(err.abs() < 1e-4, "{}: {ours}", row.name),
            // The baseline at 450 cycles instead of the 461.5 its printed prediction
            // implies: memory-bound (case 2, the memory term is ~10^5 times the compute
            // term), so the time scales with Mem_L: 450 / 461.5 − 1 = −2.49 %.
            "baseline" => assert!((err - (450.0 / 461.5 - 1.0)).abs() < 1e-3, "{}: {ours} ({err})", row.name),
            // Unroll-and-jam lowers N to 12 and #Rep rises to 3.25; the baseline's latency
            // predicts the thesis's number within 0.5 %.
            "ujam" => assert!(err.abs() < 0.005, "{}: {ours} ({err})", row.name),
            // Prefetching: the printed prediction implies a latency below the 450-cycle
            // base, impossible in the model (see the doc); ours is 3 % higher.
            "pref" => assert!(err > 0.02 && err < 0.04, "{}: {ours} ({err})", row.name),
            other => panic!("unexpected forward row {other}"),
        }
    }
}

#[test]
fn fmm_implied_latencies_are_above_base_except_prefetching() {
    for (row, r) in fmm_results() {
        if row.name == "pref" {
            assert!(r.implied_mem_l < 450.0, "{}", r.implied_mem_l);
        } else {
            assert!(
                r.implied_mem_l >= 450.0,
                "{}: {}",
                row.name,
                r.implied_mem_l
            );
        }
        if row.name == "shmem" {
            // The implied compute exceeds 4 × #insts by the special (sqrt, div) latencies.
            assert!(r.comp_cycles > 4.0 * row.insts, "{}", r.comp_cycles);
        }
    }
}

fn pct(ours: f64, paper: f64) -> String {
    format!("{:+.2} %", (ours - paper) / paper * 100.0)
}

/// Renders the generated part of `docs/models/mwp_cwp.md`.
fn render() -> String {
    let d = Device::tesla_c1060();
    let mut s = String::new();
    s.push_str("### Tuning micro-benchmarks (Tables 8–11)\n\n");
    s.push_str("Inputs: 256 threads/block, 120 blocks, N = 32, 4 blocks/SM, 30 SMs, #Rep = 1, 400 requests and 800 transactions per warp, instructions per warp from Table 4.\n\n");
    s.push_str("| Table | Transactions | Mem_L | MWP_noBW | MWP_peak_BW | CWP | Exec cycles | Ours (ms) | Paper pred. (ms) | Ours truncated | Actual (ms) | Ours vs actual |\n");
    s.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for row in tuning_rows() {
        let out = evaluate(&d, &tuning_inputs(&row)).unwrap();
        let ms = out.time_us / 1e3;
        let (paper, trunc) = match row.paper_pred_ms {
            Some((p, dec)) => (
                format!("{p}"),
                format!("{:.*}", dec as usize, truncate(ms, dec)),
            ),
            None => ("not printed".into(), "–".into()),
        };
        s.push_str(&format!(
            "| {} | {} | {:.0} | {:.3} | {:.2} | {:.3} | {:.0} | {:.5} | {} | {} | {} | {} |\n",
            row.table,
            row.what,
            out.mem_l,
            out.mwp_without_bw,
            out.mwp_peak_bw,
            out.cwp,
            out.exec_cycles,
            ms,
            paper,
            trunc,
            row.actual_ms,
            pct(ms, row.actual_ms)
        ));
    }
    s.push_str(&format!(
        "\nTable 6 (frequency, no memory operation) prints no instruction count: the printed 0.844 ms implies {:.1} instructions per warp through `Comp_cycles × N × #Rep` (N = 32, #Rep = 2).\n\n",
        table6_implied_insts()
    ));
    s.push_str("### FMM kernels at 64 threads/block (Tables 12–16)\n\n");
    s.push_str("Printed inputs: #instructions, #memory operations, occupancy (N), MWP, CWP; 585 blocks, 2 warps/block, 30 SMs. \"Implied Mem_L\" solves the case formula for the one latency that gives the printed prediction. \"Ours\" runs the execution stage with the printed MWP/CWP and Comp_cycles = 4 × #instructions: the baseline with the tuned base latency for one transaction per request (450 cycles, Table 7), not with its implied Mem_L (which would return its printed prediction by construction); every other row with the *baseline's* implied Mem_L, the baseline being their calibration.\n\n");
    s.push_str("| Kernel | Table | N | #Rep | MWP | CWP | Case | Implied Mem_L | Comp cycles | Ours (ms) | Paper pred. (ms) | Ours vs paper | Actual (ms) | Paper vs actual |\n");
    s.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (row, r) in fmm_results() {
        let (ours, vs) = match r.forward_ms {
            Some(ms) => (format!("{ms:.5}"), pct(ms, row.paper_pred_ms)),
            None => ("–".into(), "–".into()),
        };
        s.push_str(&format!(
            "| {} | {} | {:.0} | {:.4} | {} | {} | {} | {:.1} | {:.0} | {} | {} | {} | {} | {} |\n",
            row.name,
            row.table,
            row.n,
            fmm_rep(&row),
            row.mwp,
            row.cwp,
            r.case.name(),
            r.implied_mem_l,
            r.comp_cycles,
            ours,
            row.paper_pred_ms,
            vs,
            row.actual_ms,
            pct(row.paper_pred_ms, row.actual_ms)
        ));
    }
    s.push_str(&fmm_notes(&d));
    s
}

/// The notes under the FMM table: every number computed here, none typed in the doc.
fn fmm_notes(d: &Device) -> String {
    let results = fmm_results();
    let get = |name: &str| results.iter().find(|(row, _)| row.name == name).unwrap_or_else(|| panic!("no FMM row {name}"));
    let (base_row, base) = get("baseline");
    let (rsqrt_row, rsqrt) = get("rsqrt");
    let (ujam_row, ujam) = get("ujam");
    let (pref_row, pref) = get("pref");
    let (shmem_row, shmem) = get("shmem");
    let (_, vecpack) = get("vecpack");
    let fwd = |r: &FmmResult| r.forward_ms.expect("a forward prediction");
    let base_lat = d.base_mem_latency;
    let extra_trans = (base.implied_mem_l - base_lat) / d.dep_delay_32b;
    let mut s = String::from("\nNotes on the FMM rows:\n\n");
    s.push_str(&format!(
        "- *Baseline*: the printed time implies a single latency of {:.1} cycles ({base_lat:.0} + {extra_trans:.2} × {:.0}, i.e. {:.2} transactions per request after merging). With the tuned {base_lat:.0} cycles of one transaction per request instead, we are {} from the printed value.\n",
        base.implied_mem_l,
        d.dep_delay_32b,
        1.0 + extra_trans,
        pct(fwd(base), base_row.paper_pred_ms)
    ));
    s.push_str(&format!(
        "- *Rsqrt*: with the baseline's latency we get {:.5} ms against the printed {}. The model cannot see the rsqrt gain (measured {} against the baseline), as the thesis says.\n",
        fwd(rsqrt),
        rsqrt_row.paper_pred_ms,
        pct(rsqrt_row.actual_ms, base_row.actual_ms)
    ));
    s.push_str(&format!(
        "- *Ujam*: N drops to {:.0} and #Rep rises to {:.2}. We are {} from the printed value, because the thesis's own inputs imply {:.1} cycles instead of {:.1}: its transaction mix differs slightly.\n",
        ujam_row.n,
        fmm_rep(ujam_row),
        pct(fwd(ujam), ujam_row.paper_pred_ms),
        ujam.implied_mem_l,
        base.implied_mem_l
    ));
    s.push_str(&format!(
        "- *Prefetch*: we predict {} from the printed value. The printed prediction implies {:.1} cycles, *below* the {base_lat:.0}-cycle base latency, which the model cannot produce with at least one transaction per request. Either the printed MWP/CWP or the prediction of Table 16 comes from inputs other than those printed (possibly an independent-load factor that the printed MWP does not show). We keep our number.\n",
        pct(fwd(pref), pref_row.paper_pred_ms),
        pref.implied_mem_l
    ));
    s.push_str(&format!(
        "- *Shmem* (case 3) and *vecpack* (vector latency) cannot be run forward from the baseline. Their implied values are consistent with the model: shmem needs {:.1} cycles and {:.2} M compute cycles ({:.0} × #insts plus about {:.2} M of sqrt/div latency); vecpack needs {:.0} cycles = {base_lat:.0} + {:.2} × {:.0}, the vector delay.\n",
        shmem.implied_mem_l,
        shmem.comp_cycles / 1e6,
        d.issue_cycles,
        (shmem.comp_cycles - d.issue_cycles * shmem_row.insts) / 1e6,
        vecpack.implied_mem_l,
        (vecpack.implied_mem_l - base_lat) / d.dep_delay_vector,
        d.dep_delay_vector
    ));
    s
}

const BEGIN: &str = "<!-- generated by server/perf-models/tests/mwp_cwp_tables.rs: begin -->\n";
const END: &str = "<!-- generated: end -->\n";

#[test]
fn docs_tables_are_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/models/mwp_cwp.md");
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
                "{path} is stale: run `UPDATE_DOCS=1 cargo test -p perf-models --test mwp_cwp_tables`"
            );
        }
    }
}
