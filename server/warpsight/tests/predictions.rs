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
                // A trained model's features on its own GPUs; the activity model's terms,
                // from the idle draw, on the others (docs/power.md).
                let terms: Vec<&str> = p["contributions"].as_object().unwrap().keys().map(String::as_str).collect();
                if trained {
                    assert!(terms.contains(&"inst_issue_cycles"), "{what}: {terms:?}");
                } else {
                    assert!(terms.contains(&"instructions") && terms.contains(&"dram_traffic"), "{what}: {terms:?}");
                    let idle = gpu_spec::Database::builtin().gpu(g).unwrap().idle_power_w;
                    assert_eq!(p["base_watts"].as_f64(), Some(idle), "{what}");
                }
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

/// `--graph-launch`: the headline's launch overhead becomes the GPU's CUDA-graph value
/// (gpu-data's `graph_launch_overhead_us` on GA100 and GA10x, half the stream value elsewhere),
/// and a launch-bound kernel's time drops by the difference.
#[test]
fn graph_launch_flag_charges_the_graph_overhead() {
    let db = gpu_spec::Database::builtin();
    for (id, expected_graph) in [("a100-sxm4-80gb", None), ("rtx-3090", None), ("rtx-4090", Some(0.5))] {
        let gpu = db.gpu(id).expect("gpu");
        let stream_us = gpu.launch_overhead_us;
        // GA100's and GA10x's values are model parameters of their own (gpu-benches'
        // a100_80_graph and a40_graph tables); other GPUs take half the stream one.
        let graph_us = match expected_graph {
            None => *gpu.model_params.get(gpu_spec::gpu::GRAPH_LAUNCH_OVERHEAD_US).expect("a graph launch overhead of its own"),
            Some(f) => stream_us * f,
        };
        assert!(graph_us < stream_us, "{id}: graph {graph_us} vs stream {stream_us}");
        let run = |extra: &[&str]| -> serde_json::Value {
            let mut args = vec!["analyze", "examples/vadd.ptx", "--format", "json", "--gpu", id, "--grid", "1", "--block", "32", "--arg", "n=32"];
            args.extend_from_slice(extra);
            let (code, out, err) = warpsight(&args);
            assert_eq!(code, 0, "{err}");
            let doc: serde_json::Value = serde_json::from_slice(&out).expect("json");
            doc["files"][0]["kernels"][0]["gpus"][id]["predictions"]["bottleneck"].clone()
        };
        let (stream, graph) = (run(&[]), run(&["--graph-launch"]));
        let overhead = |p: &serde_json::Value| p["breakdown"]["launch_overhead_us"].as_f64().expect("launch_overhead_us");
        assert!((overhead(&stream) - stream_us).abs() < 1e-9, "{id}: {stream:#}");
        assert!((overhead(&graph) - graph_us).abs() < 1e-9, "{id}: {graph:#}");
        // One block of one warp: the launch binds, so the time falls by the difference.
        assert_eq!(stream["bound"], "launch", "{id}: {stream:#}");
        let drop = stream["time_us"].as_f64().unwrap() - graph["time_us"].as_f64().unwrap();
        assert!((drop - (stream_us - graph_us)).abs() < 0.05 * stream_us, "{id}: the time fell by {drop} µs, the overheads differ by {}", stream_us - graph_us);
    }
}

/// `--locked-clock`: the models run at the locked clock. vadd on an A100 at a quarter of its
/// boost clock: the clock-bound terms (issue, the pipes, the chain) take four times as long,
/// the DRAM term does not, the assumptions say so, and a bad clock is refused.
#[test]
fn locked_clock_flag_runs_the_models_at_the_lock() {
    let id = "a100-sxm4-80gb";
    let gpu = gpu_spec::Database::builtin().gpu(id).expect("gpu").clone();
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["analyze", "examples/vadd.ptx", "--format", "json", "--gpu", id, "--grid", "65536", "--block", "256", "--arg", "n=16777216"];
        args.extend_from_slice(extra);
        let (code, out, err) = warpsight(&args);
        assert_eq!(code, 0, "{err}");
        let doc: serde_json::Value = serde_json::from_slice(&out).expect("json");
        doc["files"][0]["kernels"][0]["gpus"][id]["predictions"]["bottleneck"].clone()
    };
    let quarter = format!("{}", gpu.boost_clock_mhz / 4.0);
    let (free, locked) = (run(&[]), run(&["--locked-clock", &quarter]));
    let term = |p: &serde_json::Value, k: &str| p["breakdown"][k].as_f64().unwrap_or_else(|| panic!("{k}: {p:#}"));
    assert!((term(&locked, "issue_us") / term(&free, "issue_us") - 4.0).abs() < 1e-6, "{locked:#}");
    assert!((term(&locked, "dram_us") - term(&free, "dram_us")).abs() < 1e-6 * term(&free, "dram_us"));
    let assumptions = locked["assumptions"].to_string();
    assert!(assumptions.contains("SM clock locked at"), "{assumptions}");
    for bad in ["0", "-3", "nan", "99999"] {
        let flag = format!("--locked-clock={bad}");
        let (code, _, err) = warpsight(&["analyze", "examples/vadd.ptx", "--gpu", id, &flag]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("--locked-clock"), "{bad}: {err}");
    }
}

/// `--footprint`: a pointer chase's loads are served by the level that holds the stated
/// buffer. The recorded gpu-benches-style chase (`tests/fixtures/measured/cu/gpu_latency.cu`:
/// `p = *p`, 32 dependent loads per loop trip) on an A100 40 GB: one warp's chain per load
/// is the L1 latency for a 4 KiB buffer; for 8 MiB (past L1, inside L2) the L2 latency: a
/// chase around one cycle finds nothing of it in an L1 smaller than the cycle
/// (`traffic::l2_kept_share`; random gathers would find `L1 / footprint` of it there); for
/// 1 GiB the DRAM latency. The latencies are gpu-data's.
#[test]
fn a_stated_footprint_picks_the_cache_level_of_a_pointer_chase() {
    let db = gpu_spec::Database::builtin();
    let id = "a100-sxm4-40gb";
    let gpu = db.gpu(id).expect("gpu");
    let (l1, l2) = (gpu.l1_latency_cycles, gpu.l2_latency_cycles);
    let dram = gpu.model_params.get("bottleneck.dram_latency_cycles").copied().unwrap_or(gpu.dram_latency_cycles);
    let iters = 1u64 << 20;
    let chain_per_load = |footprint: Option<u64>| -> (f64, String) {
        let iters_arg = format!("param_1={iters}");
        let f = footprint.map(|f| f.to_string());
        let mut args = vec!["analyze", "tests/fixtures/measured/ptx/sm_70/gpu_latency.ptx", "--format", "json", "--gpu", id, "--grid", "1", "--block", "64", "--arg", &iters_arg, "--arg", "param_3=0"];
        if let Some(f) = &f {
            args.extend(["--footprint", f.as_str()]);
        }
        let (code, out, err) = warpsight(&args);
        assert_eq!(code, 0, "{err}");
        let doc: Value = serde_json::from_slice(&out).expect("json");
        let launch = &doc["files"][0]["kernels"][0]["launch"];
        assert_eq!(launch["footprint_bytes"].as_u64(), footprint, "the report states the footprint: {launch}");
        let p = &doc["files"][0]["kernels"][0]["gpus"][id]["predictions"]["bottleneck"];
        assert_eq!(p["bound"], "latency", "{p:#}");
        (p["breakdown"]["chain_cycles"].as_f64().expect("chain_cycles") / iters as f64, p["assumptions"].to_string())
    };
    let near = |got: f64, want: f64| (got - want).abs() <= 0.01 * want;
    let (small, notes) = chain_per_load(Some(4096));
    assert!(near(small, l1), "4 KiB: {small} cycles per load, L1 latency {l1}; {notes}");
    assert!(notes.contains("stated footprint"), "{notes}");
    let (mid, notes) = chain_per_load(Some(8 << 20));
    assert!(near(mid, l2), "8 MiB: {mid} cycles per load, L2 latency {l2}; {notes}");
    let (big, notes) = chain_per_load(Some(1 << 30));
    assert!(big <= dram * 1.001 && big >= 0.95 * dram, "1 GiB: {big} cycles per load, DRAM latency {dram}; {notes}");
    // Without a footprint the chase's addresses are unknown: every load from DRAM, as before.
    let (unknown, notes) = chain_per_load(None);
    assert!(near(unknown, dram), "no footprint: {unknown}; {notes}");
    assert!(notes.contains("footprint=BYTES"), "the note names the way to state it: {notes}");
    // A bad value is a usage error.
    let (code, _, err) = warpsight(&["analyze", "tests/fixtures/measured/ptx/sm_70/gpu_latency.ptx", "--footprint", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--footprint"), "{err}");
}

/// `--bytes NAME=BYTES` states a pointer parameter's allocation: the report carries it and a
/// data-dependent load through that parameter takes it as the span it ranges over; a bad
/// item is a usage error.
#[test]
fn stated_allocations_reach_the_report_and_the_gathers() {
    let ptx = "server/kernel-profile/tests/ptx/gather.ptx";
    let (code, out, err) = warpsight(&["analyze", ptx, "--format", "json", "--gpu", "a100-sxm4-80gb", "--grid", "16384", "--block", "256", "--arg", "param_5=4194304", "--bytes", "param_3=16<<20"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_slice(&out).expect("json");
    let spmv = doc["files"][0]["kernels"].as_array().expect("kernels").iter().find(|k| k["name"].as_str().is_some_and(|n| n.contains("spmv_csr"))).expect("spmv_csr");
    assert_eq!(spmv["launch"]["array_bytes"]["param_3"].as_u64(), Some(16 << 20), "{}", spmv["launch"]);
    let spans: Vec<u64> = spmv["memory_accesses"].as_array().expect("accesses").iter().filter_map(|a| a["data_span_bytes"].as_u64()).collect();
    assert!(!spans.is_empty() && spans.iter().all(|s| *s == 16 << 20), "{spans:?}");
    for bad in ["param_3", "param_3=0", "3x=4"] {
        let (code, _, err) = warpsight(&["analyze", ptx, "--bytes", bad]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("--bytes"), "{err}");
    }
}
