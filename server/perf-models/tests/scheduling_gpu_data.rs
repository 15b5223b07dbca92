//! The scheduling model's calibration of database GPUs comes from their data in `gpu-data/`
//! (issue 19): every V100 of the database gets Alavani 2023's Table 3.2 V100 column, the
//! K20 its Table 3.3 global-latency regression and §3.5 launch-overhead fit, and the
//! other GPUs a generic column. Before, the code matched spelled ids (`v100-sxm2-16gb`,
//! while the database says `tesla-v100-sxm2-16gb`), so no V100 ever got its column.
//!
//! The expected latencies are typed here from the thesis (Alavani 2023, Table 3.2), not
//! read from `gpu-data/` or `scheduling::tables`, so a wrong number in either fails.

mod common;

use gpu_spec::Database;
use perf_models::GpuParams;
use perf_models::scheduling::AlavaniGpu;
use perf_models::scheduling::tables::{self, LatencyKey};

fn alavani(id: &str) -> AlavaniGpu {
    let g = Database::builtin().gpu(id).unwrap_or_else(|e| panic!("{id}: {e}"));
    AlavaniGpu::for_gpu(&GpuParams::from_spec(g))
}

/// (row, cycles) of Alavani 2023 Table 3.2's Tesla V100 column.
const V100_TABLE_3_2: [(LatencyKey, f64); 16] = [
    (LatencyKey::Addf, 15.0),
    (LatencyKey::Adds, 15.0),
    (LatencyKey::Subf, 15.0),
    (LatencyKey::Subs, 15.0),
    (LatencyKey::Mulf, 15.0),
    (LatencyKey::Mul, 15.0),
    (LatencyKey::And, 15.0),
    (LatencyKey::Fma, 232.0),
    (LatencyKey::Mads, 30.0),
    (LatencyKey::Divf, 977.0),
    (LatencyKey::Divs, 815.0),
    (LatencyKey::Cvt, 218.0),
    (LatencyKey::Sqrt, 487.0),
    (LatencyKey::Setp, 30.0),
    (LatencyKey::Mov, 49.0),
    (LatencyKey::Shared, 39.0),
];

#[test]
fn every_database_v100_gets_the_volta_column() {
    // Selected by product name, not by id or architecture: whatever the ids are spelled.
    let v100s: Vec<&gpu_spec::Gpu> = Database::builtin().gpus().iter().filter(|g| g.name.contains("V100")).collect();
    assert!(v100s.len() >= 4, "the database's V100 boards: {:?}", v100s.iter().map(|g| &g.id).collect::<Vec<_>>());
    for g in v100s {
        let a = AlavaniGpu::for_gpu(&GpuParams::from_spec(g));
        assert!(a.measured_latencies, "{}: no Table 3.2 column", g.id);
        for (key, cycles) in V100_TABLE_3_2 {
            assert_eq!(a.latency(key, 1e5), cycles, "{} {key:?}", g.id);
        }
        // A V100 is not the K20: DRAM latency, no Table 3.3, no K20 launch fit.
        assert!(!a.global_latency_k20_model, "{}", g.id);
        assert_eq!(a.launch_overhead, None, "{}", g.id);
    }
}

#[test]
fn a_v100_prediction_says_its_latencies_are_table_3_2s() {
    let g = Database::builtin().gpu("tesla-v100-pcie-16gb").expect("v100 pcie");
    let text = std::fs::read_to_string(common::workspace_root().join("server/perf-models/tests/fixtures/vector_add.json")).expect("fixture");
    let p: kernel_profile::KernelProfile = serde_json::from_str(&text).expect("valid profile");
    let pred = perf_models::scheduling::predict(&p, &GpuParams::from_spec(g)).expect("a prediction");
    assert!(pred.assumptions.iter().any(|a| a.starts_with("instruction latencies:") && a.contains("Table 3.2") && a.contains("Tesla V100")), "{:?}", pred.assumptions);
}

#[test]
fn the_database_k20_gets_table_3_3_and_the_launch_fit_its_gk110_siblings_only_the_column() {
    let k20 = alavani("tesla-k20");
    assert!(k20.measured_latencies && k20.global_latency_k20_model);
    // Alavani 2023 §3.5: 0.00002 · nB · nT_b + 1.4489 µs.
    assert_eq!(k20.launch_overhead, Some((0.00002, 1.4489)));
    // Table 3.3's third interval at 100,000 threads: 0.0001679 · 1e5 + 307.8 = 324.59.
    assert!((k20.latency(LatencyKey::Global, 1e5) - 324.59).abs() < 1e-9);
    // Held at the table's end (2,203,648 threads): −0.00002529 · 2203648 + 501.8.
    let end = -0.00002529 * 2_203_648.0 + 501.8;
    assert!((k20.latency(LatencyKey::Global, 5e7) - end).abs() < 1e-9);
    // Table 3.2, K20 column: divf 894.5, mov 2, shared 47.
    assert_eq!((k20.latency(LatencyKey::Divf, 1.0), k20.latency(LatencyKey::Mov, 1.0), k20.latency(LatencyKey::Shared, 1.0)), (894.5, 2.0, 47.0));
    // The K40 has the K20's SM (GK110): the measured column, but its own DRAM latency
    // and no launch fit (the thesis measured neither on it).
    let k40 = alavani("tesla-k40");
    assert!(k40.measured_latencies && !k40.global_latency_k20_model);
    assert_eq!(k40.launch_overhead, None);
    assert_eq!(k40.latency(LatencyKey::Divf, 1.0), 894.5);
    assert_eq!(k40.latency(LatencyKey::Global, 1e5), k40.params.dram_latency_cycles);
}

#[test]
fn gpus_without_a_full_column_get_the_generic_one() {
    // The A100's data has `fp32` and `fp64` latencies, not Table 3.2's sixteen rows.
    let a100 = alavani("a100-sxm4-80gb");
    assert!(!a100.measured_latencies);
    // Generic rows: `mov` 2 cycles, `mads` twice the ALU latency.
    assert_eq!(a100.latency(LatencyKey::Mov, 1.0), 2.0);
    assert_eq!(a100.latency(LatencyKey::Mads, 1.0), 2.0 * a100.params.alu_latency_cycles);
}

#[test]
fn every_full_column_in_the_data_is_one_printed_in_table_3_2() {
    let printed = [tables::K20, tables::K4200, tables::M60, tables::GTX1050, tables::V100];
    let mut with_column = 0;
    for g in Database::builtin().gpus() {
        if let Some(col) = perf_models::scheduling::data_column(&g.instr_latency_cycles) {
            with_column += 1;
            assert!(printed.contains(&col), "{}: {col:?} is none of Table 3.2's columns", g.id);
        }
    }
    // K20-family (GK110), K4200, M60, GTX 1050 and the V100s at least.
    assert!(with_column >= 8, "{with_column}");
}

#[test]
fn table_4_5_ids_are_database_ids() {
    // Table 4.5's fits are per measured board, named by database id: each must resolve
    // exactly (not through an alias), or the fit silently never applies.
    for (id, _, _) in tables::TABLE_4_5 {
        let g = Database::builtin().gpu(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(g.id, id);
        assert!(alavani(id).tp_global.is_some(), "{id}");
    }
}

#[test]
fn a_generic_column_charges_shared_memory_its_gpus_shared_latency() {
    // A GPU without a Table 3.2 column (the A100) gets the column derived from its own
    // latencies: a shared-memory instruction costs the GPU's shared latency (gpu-data),
    // not an ALU latency, whatever that latency is.
    let g = Database::builtin().gpu("a100-sxm4-80gb").expect("a100");
    let params = GpuParams::from_spec(g);
    let a = AlavaniGpu::for_gpu(&params);
    assert!(!a.measured_latencies);
    assert_eq!(a.latency(LatencyKey::Shared, 1e5), params.shared_latency_cycles);
    let slower = GpuParams { shared_latency_cycles: params.shared_latency_cycles * 3.0, ..params.clone() };
    assert_eq!(AlavaniGpu::for_gpu(&slower).latency(LatencyKey::Shared, 1e5), slower.shared_latency_cycles);
    assert_ne!(slower.shared_latency_cycles, params.alu_latency_cycles);
}
