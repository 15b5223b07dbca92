//! Checks the Rust evaluator against XGBoost itself.
//!
//! `gpu-data/power/train.py` writes, for each shipped model, synthetic held-out rows (never
//! training rows; some values missing) with XGBoost's own `predict` and
//! `predict(pred_contribs=True)` outputs. Prediction and every TreeSHAP contribution must
//! agree to 1e-4 (absolute, or relative for values above 1 W): both sides compute in
//! `f32`, in the same order, so the only differences are rounding.
//!
//! The fixtures also hold a few real dataset rows with the features Python derived from
//! them, so the Rust derivation (`Features::from_dataset_columns`) is checked against the
//! training script's (`add_ws_features`).

use std::collections::BTreeMap;

use power_model::features::DatasetColumns;
use power_model::{Features, Model, TrainedGpu};
use serde::Deserialize;

#[derive(Deserialize)]
struct Fixture {
    features: Vec<String>,
    rows: Vec<Row>,
    dataset_rows: Vec<DatasetRow>,
}

#[derive(Deserialize)]
struct DatasetRow {
    columns: BTreeMap<String, f64>,
    features: Vec<f64>,
}

fn columns(m: &BTreeMap<String, f64>) -> DatasetColumns {
    let g = |k: &str| *m.get(k).unwrap_or_else(|| panic!("column {k} missing"));
    DatasetColumns {
        grid_size: g("grid_size"),
        block_size: g("block_size"),
        reg_thread: g("reg_thread"),
        shmem_block: g("shmem_block"),
        occupancy: g("occupancy"),
        comp_inst_kernel: g("comp_inst_kernel"),
        glob_inst_kernel: g("glob_inst_kernel"),
        misc_inst_kernel: g("misc_inst_kernel"),
        comp_inst_sm: g("comp_inst_sm"),
        glob_inst_sm: g("glob_inst_sm"),
        shar_inst_sm: g("shar_inst_sm"),
        misc_inst_sm: g("misc_inst_sm"),
        avg_comp_lat: g("avg_comp_lat"),
        avg_glob_lat: g("avg_glob_lat"),
        avg_shar_lat: g("avg_shar_lat"),
        branch: g("branch"),
        glob_load_sm: g("glob_load_sm"),
        glob_store_sm: g("glob_store_sm"),
        inst_issue_cycles: g("inst_issue_cycles"),
        cache_penalty: g("cache_penalty"),
    }
}

#[derive(Deserialize)]
struct Row {
    x: Vec<Option<f64>>,
    prediction: f64,
    contributions: Vec<f64>,
    bias: f64,
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 * b.abs().max(1.0)
}

fn check(gpu: TrainedGpu, fixture: &str) {
    let fx: Fixture = serde_json::from_str(fixture).unwrap();
    assert_eq!(fx.features, Features::NAMES.map(String::from));
    let model: &Model = gpu.model().unwrap();
    assert!(fx.rows.len() >= 20);
    let mut missing = 0;
    for (i, row) in fx.rows.iter().enumerate() {
        let x: Vec<f64> = row.x.iter().map(|v| v.unwrap_or(f64::NAN)).collect();
        missing += row.x.iter().filter(|v| v.is_none()).count();
        let p = model.predict(&x).unwrap();
        assert!(
            close(p, row.prediction),
            "{gpu:?} row {i}: predict {p} vs xgboost {}",
            row.prediction
        );
        let c = model.contributions(&x).unwrap();
        assert!(close(c.prediction, row.prediction));
        assert!(
            close(c.base, row.bias),
            "{gpu:?} row {i}: bias {} vs {}",
            c.base,
            row.bias
        );
        for (j, (ours, theirs)) in c.per_feature.iter().zip(&row.contributions).enumerate() {
            assert!(
                close(*ours, *theirs),
                "{gpu:?} row {i} feature {}: {ours} vs xgboost {theirs}",
                fx.features[j]
            );
        }
        let total = c.base + c.per_feature.iter().sum::<f64>();
        assert!(
            (total - p).abs() < 1e-3 * p.abs().max(1.0),
            "{gpu:?} row {i}: {total} vs {p}"
        );
    }
    assert!(missing > 0, "fixture should exercise missing values");

    assert!(fx.dataset_rows.len() >= 8);
    for (i, row) in fx.dataset_rows.iter().enumerate() {
        let f = Features::from_dataset_columns(&columns(&row.columns));
        for (j, (ours, theirs)) in f.values.iter().zip(&row.features).enumerate() {
            assert!(
                (ours - theirs).abs() <= 1e-9 * theirs.abs().max(1.0),
                "{gpu:?} dataset row {i} {}: {ours} vs python {theirs}",
                Features::NAMES[j]
            );
        }
        // On real rows too, the base value plus the contributions is the prediction.
        let c = model.contributions(&f.values).unwrap();
        let total = c.base + c.per_feature.iter().sum::<f64>();
        assert!((total - c.prediction).abs() < 1e-3 * c.prediction.abs().max(1.0));
    }
}

#[test]
fn k20_matches_xgboost() {
    check(
        TrainedGpu::K20,
        include_str!("../../../gpu-data/power/fixtures/shap-k20.json"),
    );
}

#[test]
fn m60_matches_xgboost() {
    check(
        TrainedGpu::M60,
        include_str!("../../../gpu-data/power/fixtures/shap-m60.json"),
    );
}

#[test]
fn v100_matches_xgboost() {
    check(
        TrainedGpu::V100,
        include_str!("../../../gpu-data/power/fixtures/shap-v100.json"),
    );
}
