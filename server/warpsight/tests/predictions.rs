//! Every fixture kernel gets a prediction from the models on GPUs old and new, through
//! the real CLI (`analyze --format json`, then `profile` and `predict` on one kernel).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// Eleven GPUs from the Tesla (GT200) generation to Blackwell, the three with trained
/// power models (K20, M60, V100) among them.
const GPUS: [&str; 11] = [
    "tesla-c1060",
    "tesla-k20",
    "tesla-m60",
    "gtx-980",
    "tesla-p100-sxm2",
    "tesla-v100-sxm2-16gb",
    "tesla-t4",
    "a100-sxm4-80gb",
    "rtx-4090",
    "h100-sxm",
    "b200",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn warpsight(args: &[&str]) -> (i32, Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight")).current_dir(root()).args(args).output().expect("run");
    (out.status.code().unwrap_or(-1), out.stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn every_fixture_kernel_gets_predictions_on_ten_gpus() {
    let mut args = vec!["analyze", "tests/fixtures/ptx/sm_80", "--format", "json"];
    for g in GPUS {
        args.extend(["--gpu", g]);
    }
    let (code, stdout, stderr) = warpsight(&args);
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_slice(&stdout).expect("json");
    let mut n_kernels = 0;
    for f in doc["files"].as_array().unwrap() {
        assert!(f["errors"].as_array().unwrap().is_empty(), "{}: {}", f["path"], f["errors"]);
        for k in f["kernels"].as_array().unwrap() {
            n_kernels += 1;
            for g in GPUS {
                let t = &k["gpus"][g];
                let what = format!("{} on {g}", k["name"]);
                let headline = t["headline"]["time_us"].as_f64().unwrap_or_else(|| panic!("{what}: no headline: {t}"));
                assert!(headline.is_finite() && headline > 0.0, "{what}: {headline}");
                let preds = t["predictions"].as_object().unwrap_or_else(|| panic!("{what}"));
                assert!(preds.contains_key("roofline"), "{what}: {:?}", preds.keys());
                if t["occupancy"]["blocks_per_sm"] == 0 {
                    // It cannot launch there: the models that need resident blocks say so.
                    assert!(t["occupancy"]["reason"].is_string(), "{what}: {t}");
                    assert!(!t["headline"]["not_applicable"].as_object().unwrap().is_empty(), "{what}: {t}");
                    continue;
                }
                assert!(preds.len() >= 3, "{what}: only {:?}", preds.keys());
                for (m, p) in preds {
                    assert!(p["time_us"].as_f64().is_some_and(|x| x.is_finite() && x >= 0.0), "{what} {m}: {p}");
                    let seed_bounds = ["memory", "compute", "latency", "balanced"];
                    let resources = [
                        "dram", "l2", "l1", "shared", "issue", "atomics", "launch", "latency", "fp32", "fp64", "fp16", "int", "sfu",
                        "conversion", "warp-level", "tensor", "lsu",
                    ];
                    let bound = p["bound"].as_str().unwrap_or_default();
                    if m == "bottleneck" {
                        assert!(resources.contains(&bound), "{what} {m}: bound `{bound}` names no resource");
                    } else {
                        assert!(seed_bounds.contains(&bound), "{what} {m}: {bound}");
                    }
                    assert!(!p["explanation"].as_str().unwrap_or_default().is_empty(), "{what} {m}");
                    if m == "mwp_cwp" || m == "cgpredict" {
                        assert!(p["mwp"].is_number() && p["cwp"].is_number(), "{what} {m}: {p}");
                    }
                }
                let model = t["headline"]["model"].as_str().unwrap();
                assert!(preds.contains_key(model), "{what}: headline model {model} not among the predictions");
                // The bottleneck model is the headline on every database GPU, unless the
                // roofline floor had to replace it (which the floor rule reports).
                assert!(
                    model == "bottleneck" || (model == "roofline" && t["headline"]["rule"].as_str().unwrap_or_default().contains("floor")),
                    "{what}: headline {model}: {}",
                    t["headline"]["rule"]
                );
                // Power with its contributions (base + Σ = watts) and energy = P × t.
                let p = &t["power"];
                let watts = p["watts"].as_f64().unwrap_or_else(|| panic!("{what}: no power: {t}"));
                let sum: f64 = p["contributions"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).sum();
                // XGBoost sums leaves in f32: base + Σ matches the prediction to ~1e-4 W.
                assert!((p["base_watts"].as_f64().unwrap() + sum - watts).abs() < 1e-3, "{what}: {p}");
                let trained = matches!(g, "tesla-k20" | "tesla-m60" | "tesla-v100-sxm2-16gb");
                assert_eq!(p["confidence"], if trained { "medium" } else { "low" }, "{what}");
                let energy = t["energy_uj"].as_f64().unwrap();
                assert!((energy - watts * headline).abs() <= 1e-6 * energy.max(1.0), "{what}: {energy} vs {watts} × {headline}");
            }
        }
    }
    assert!(n_kernels >= 35, "{n_kernels} kernels");
}

#[test]
fn profile_then_predict_round_trips() {
    let (code, stdout, stderr) = warpsight(&["profile", "tests/fixtures/ptx/sm_80/matmul_tiled.ptx", "--kernel", "_Z12matmul_tiledPfS_S_i", "--grid", "64x64", "--block", "16x16", "--arg", "param_3=1024", "--gpu", "tesla-k20"]);
    assert_eq!(code, 0, "{stderr}");
    let profile: Value = serde_json::from_slice(&stdout).expect("profile json");
    assert_eq!(profile["gpu"], "tesla-k20");
    assert_eq!(profile["launch"]["block"], serde_json::json!([16, 16, 1]));
    let dir = tempfile::Builder::new().prefix("warpsight-predict-").tempdir().unwrap();
    let path = dir.path().join("p.json");
    std::fs::write(&path, &stdout).unwrap();
    let p = path.to_string_lossy().into_owned();
    for g in GPUS {
        let (code, out, err) = warpsight(&["predict", &p, "--gpu", g, "--json"]);
        assert_eq!(code, 0, "{g}: {err}");
        let v: Value = serde_json::from_slice(&out).expect("predict json");
        assert!(v["headline"]["time_us"].as_f64().is_some_and(|t| t > 0.0), "{g}: {v}");
    }
    let (code, out, _) = warpsight(&["predict", &p, "--model", "roofline", "--json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["predictions"].as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()), Some(vec!["roofline".to_string()]));
    let (code, _, err) = warpsight(&["predict", &p, "--model", "nope"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = warpsight(&["predict", &p, "--gpu", "a1000"]);
    assert_eq!(code, 2);
    assert!(err.contains("a100"), "closest ids listed: {err}");
}
