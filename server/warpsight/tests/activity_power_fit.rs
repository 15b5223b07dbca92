//! The activity power model's four constants (`power_model::activity::fitted`), refitted
//! from the rows they came from: gpu-benches' gpu-roofline power tables of the A100 40 GB
//! (energy per lane instruction and per HBM byte) and the A40 (the GDDR interface's draw and
//! energy per GDDR byte, the lane energy held at the A100's), by least squares on the board
//! power at the measured times (docs/power.md). The lane instructions and DRAM bytes of
//! each row are the model's own, read back from `warpsight validate`'s power terms (each
//! contribution is its count times its energy over the predicted time; where the demand was
//! capped at the board's limit, un-scaled). Where the model ran a row at a clock below the
//! boost clock to hold the board's limit (`predicted_clock_ratio`), each instruction's
//! energy is the boost figure times `power_limit::lane_energy_factor` of that clock, in the
//! counts read back and in the fit. Prints the fit; fails when a constant in the source is
//! more than 3 % from it.
#![allow(clippy::print_stderr, clippy::print_stdout)] // the skip message and the fit's table

mod common;

use std::process::Command;

use common::{root, skip_without_nvcc};
use power_model::activity::{Memory, fitted};

/// One sweep row: measured time and power, and the model's counts.
struct Row {
    gpu: String,
    measured_s: f64,
    measured_w: f64,
    lanes: f64,
    /// The share of its boost-clock energy an instruction takes at the row's clock.
    lane_factor: f64,
    dram_bytes: f64,
}

fn rows() -> Vec<Row> {
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(root())
        .args(["validate", "tests/fixtures/heldout/roofline-sweep.csv", "--format", "json"])
        .output()
        .expect("run warpsight validate");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("validate JSON");
    let db = gpu_spec::Database::builtin();
    let mut rows = Vec::new();
    for r in v["rows"].as_array().expect("rows") {
        let (Some(gpu), Some(measured_w), Some(pred_ms), Some(pred_w)) =
            (r["gpu_id"].as_str(), r["measured_w"].as_f64(), r["predicted_ms"]["headline"].as_f64(), r["predicted_w"].as_f64())
        else {
            continue;
        };
        let g = db.gpu(gpu).expect("database GPU");
        // Where the model capped the demand at the board's limit it scaled every contribution
        // by one factor; the memory interface's own draw is known (bus × its constant), so
        // its term gives the factor back. Without that term a capped row tells no counts.
        let interface_w = Memory::Gddr.interface_w(f64::from(g.mem_bus_width_bits), g.tdp_w, g.idle_power_w);
        let capped = pred_w >= 0.999 * g.tdp_w;
        let scale = match r["predicted_w_terms"]["memory_interface"].as_f64() {
            Some(w) if capped => w / interface_w,
            None if capped => continue,
            _ => 1.0,
        };
        let term = |k: &str| r["predicted_w_terms"][k].as_f64().unwrap_or(0.0) / scale;
        let byte_pj = Memory::from_mem_type(&g.mem_type).expect("a known memory type").byte_pj();
        let t_pred = pred_ms * 1e-3;
        let lane_factor = perf_models::power_limit::lane_energy_factor(r["predicted_clock_ratio"].as_f64().unwrap_or(1.0));
        rows.push(Row {
            gpu: gpu.to_string(),
            measured_s: r["measured_ms"].as_f64().expect("measured_ms") * 1e-3,
            measured_w: measured_w - g.idle_power_w,
            lanes: term("instructions") * t_pred / (fitted::LANE_INSTRUCTION_PJ * lane_factor * 1e-12),
            lane_factor,
            dram_bytes: term("dram_traffic") * t_pred / (byte_pj * 1e-12),
        });
    }
    rows
}

/// Least squares of `y ≈ a·x1 + b·x2`: (a, b).
fn fit2(x1: &[f64], x2: &[f64], y: &[f64]) -> (f64, f64) {
    let dot = |u: &[f64], v: &[f64]| u.iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
    let (s11, s12, s22) = (dot(x1, x1), dot(x1, x2), dot(x2, x2));
    let (s1y, s2y) = (dot(x1, y), dot(x2, y));
    let det = s11 * s22 - s12 * s12;
    ((s22 * s1y - s12 * s2y) / det, (s11 * s2y - s12 * s1y) / det)
}

/// Least squares of `y ≈ a·x1 + b·x2 + c`: (a, b, c), by the normal equations.
fn fit3(x1: &[f64], x2: &[f64], y: &[f64]) -> (f64, f64, f64) {
    let cols = [x1.to_vec(), x2.to_vec(), vec![1.0; y.len()]];
    let dot = |u: &[f64], v: &[f64]| u.iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
    let mut m = [[0.0; 4]; 3];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = dot(&cols[i], &cols[j]);
        }
        m[i][3] = dot(&cols[i], y);
    }
    // Gauss-Jordan elimination with partial pivoting.
    for c in 0..3 {
        let p = (c..3).max_by(|&a, &b| m[a][c].abs().total_cmp(&m[b][c].abs())).expect("a pivot");
        m.swap(c, p);
        let pivot = m[c];
        for (r, row) in m.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (x, p) in row.iter_mut().zip(pivot).skip(c) {
                    *x -= f * p;
                }
            }
        }
    }
    (m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2])
}

#[test]
fn the_activity_constants_are_the_fit_of_their_rows() {
    if skip_without_nvcc("the sweep kernel is a CUDA source") {
        return;
    }
    let rows = rows();
    let of = |gpu: &str| rows.iter().filter(|r| r.gpu == gpu).collect::<Vec<_>>();
    let (a100, a40) = (of("a100-sxm4-40gb"), of("a40"));
    assert!(a100.len() >= 8 && a40.len() >= 8, "too few rows: {} and {}", a100.len(), a40.len());

    // A100 (HBM, no interface term): P − idle = e_lane·lanes/T + e_hbm·bytes/T.
    let x1: Vec<f64> = a100.iter().map(|r| r.lanes * r.lane_factor / r.measured_s * 1e-12).collect();
    let x2: Vec<f64> = a100.iter().map(|r| r.dram_bytes / r.measured_s * 1e-12).collect();
    let y: Vec<f64> = a100.iter().map(|r| r.measured_w).collect();
    let (e_lane, e_hbm) = fit2(&x1, &x2, &y);
    // HBM has no fixed interface draw: a third, constant term fits below zero.
    let (_, _, hbm_fixed_w) = fit3(&x1, &x2, &y);

    // A40 (GDDR), e_lane held: P − idle − e_lane·lanes/T = P_interface + e_gddr·bytes/T.
    let ones = vec![1.0; a40.len()];
    let x2: Vec<f64> = a40.iter().map(|r| r.dram_bytes / r.measured_s * 1e-12).collect();
    let y: Vec<f64> = a40.iter().map(|r| r.measured_w - e_lane * r.lanes * r.lane_factor / r.measured_s * 1e-12).collect();
    let (p_if, e_gddr) = fit2(&ones, &x2, &y);
    let bus = f64::from(gpu_spec::Database::builtin().gpu("a40").expect("a40").mem_bus_width_bits);

    println!("refitted on {} A100 40 GB and {} A40 rows:", a100.len(), a40.len());
    let checks = [
        ("LANE_INSTRUCTION_PJ", e_lane, fitted::LANE_INSTRUCTION_PJ),
        ("HBM_BYTE_PJ", e_hbm, fitted::HBM_BYTE_PJ),
        ("GDDR_BYTE_PJ", e_gddr, fitted::GDDR_BYTE_PJ),
        ("GDDR_INTERFACE_W_PER_BUS_BIT × bus", p_if, fitted::GDDR_INTERFACE_W_PER_BUS_BIT * bus),
    ];
    for (name, got, have) in checks {
        println!("  {name}: fit {got:.2}, source {have:.2}");
    }
    println!("  a fixed HBM draw, fitted as a third term: {hbm_fixed_w:.1} W");
    for (name, got, have) in checks {
        assert!((got / have - 1.0).abs() < 0.03, "{name}: the rows fit {got:.3}, the source says {have:.3}");
    }
    assert!(hbm_fixed_w < 0.0, "the A100 rows ask for a fixed HBM draw of {hbm_fixed_w:.1} W, which the model leaves out");
}
