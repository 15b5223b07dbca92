//! `warpsight validate` through the real binary: a committed rows file, rows derived from
//! the predictions with hand-computed statistics, bad rows, unknown GPUs, and the
//! Kernel Tuner and Nsight Compute importers.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn warpsight(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight")).current_dir(root()).args(args).output().expect("run");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn json(args: &[&str]) -> (i32, Value) {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (code, out, err) = warpsight(&a);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (code, v)
}

const ROWS: &str = "tests/fixtures/validate/rows.csv";

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn committed_rows_are_analysed_and_unknown_gpus_skipped() {
    let (code, v) = json(&["validate", ROWS]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["counts"]["rows"], 5);
    assert_eq!(v["counts"]["analysed"], 4);
    assert_eq!(v["counts"]["skipped"], 1);
    assert_eq!(v["counts"]["failed"], 0);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows[1]["gpu_id"], "a100-sxm4-80gb", "device names resolve");
    assert_eq!(rows[3]["gpu_id"], "rtx-3090");
    assert_eq!(rows[3]["ptx_kernel"], "_Z5daxpyidPKdPd");
    let skipped = &rows[4];
    assert_eq!(skipped["status"], "skipped");
    assert!(skipped["reason"].as_str().unwrap().contains("NVIDIA Imaginary 9000"), "{skipped}");
    assert!(skipped["at"].as_str().unwrap().ends_with("rows.csv:6"), "{skipped}");
    // Every model and the headline, per GPU and overall.
    let s = &v["summary"];
    assert_eq!(s["models"][0], "headline");
    assert!(s["models"].as_array().unwrap().iter().any(|m| m == "roofline"));
    let overall = s["models_by_gpu"].as_array().unwrap().iter().find(|m| m["model"] == "headline" && m["gpu"].is_null()).unwrap();
    assert_eq!(overall["stats"]["n"], 4);
    // The table names the skipped row and its reason.
    let (code, out, _) = warpsight(&["validate", ROWS]);
    assert_eq!(code, 0);
    assert!(out.starts_with("5 rows: 4 analysed, 1 skipped, 0 failed"), "{out}");
    assert!(out.contains("skipped 1 row(s) (first: tests/fixtures/validate/rows.csv:6): GPU `NVIDIA Imaginary 9000` is not in the database"), "{out}");
    assert!(out.contains("headline     all GPUs"), "{out}");
}

/// Writes rows for the committed rows' saxpy launches with measured times derived from
/// the headline predictions, so the expected statistics follow by hand.
fn derived_rows(dir: &Path, factor: &[f64]) -> PathBuf {
    let (_, v) = json(&["validate", ROWS]);
    let rows = v["rows"].as_array().unwrap();
    let saxpy: Vec<&Value> = rows.iter().filter(|r| r["group"] == "saxpy").collect();
    assert_eq!(saxpy.len(), 3);
    let mut csv = String::from("source,kernel,gpu,grid,block,args,time_ms,label,group\n");
    let src = root().join("tests/fixtures/ptx/sm_80/saxpy.ptx");
    for (r, f) in saxpy.iter().zip(factor) {
        let p = r["predicted_ms"]["headline"].as_f64().unwrap();
        csv.push_str(&format!("{},saxpy,a100,{},{},n=1048576,{},{},g\n", src.display(), r["grid"][0], r["block"][0], p * f, r["label"].as_str().unwrap()));
    }
    let path = dir.join("derived.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

#[test]
fn statistics_of_rows_derived_from_the_predictions() {
    let dir = tempfile::tempdir().unwrap();
    // Measured = predicted / 2, predicted, predicted × 4: ratios 2, 1, 0.25.
    // MAPE = (100 + 0 + 75) / 3 %; median ratio 1; within 1.5×: 1 of 3; within 2×: 2 of 3.
    let path = derived_rows(dir.path(), &[0.5, 1.0, 4.0]);
    let (code, v) = json(&["validate", path.to_str().unwrap(), "--model", "headline"]);
    assert_eq!(code, 0, "{v}");
    let m = &v["summary"]["models_by_gpu"][0];
    assert_eq!((m["model"].as_str(), m["gpu"].as_str()), (Some("headline"), None));
    let s = &m["stats"];
    assert_eq!(s["n"], 3);
    assert!(close(s["mape_percent"].as_f64().unwrap(), 175.0 / 3.0), "{s}");
    assert!(close(s["median_ratio"].as_f64().unwrap(), 1.0), "{s}");
    assert!(close(s["within_1_5"].as_f64().unwrap(), 1.0 / 3.0), "{s}");
    assert!(close(s["within_2"].as_f64().unwrap(), 2.0 / 3.0), "{s}");
    // --model keeps only that model.
    assert_eq!(v["summary"]["models"].as_array().unwrap().len(), 1);
    assert!(v["rows"][0]["predicted_ms"].as_object().unwrap().keys().all(|k| k == "headline"));

    // Group statistics: measured in the predicted order gives Spearman 1 and the
    // predicted-best configuration is the measured best (ratio 1).
    let (_, v) = json(&["validate", derived_rows(dir.path(), &[1.0, 1.0, 1.0]).to_str().unwrap(), "--model", "headline"]);
    let g = &v["summary"]["groups"][0];
    assert_eq!(g["group"], "g");
    assert_eq!(g["stats"]["n"], 3);
    if g["stats"]["spearman"].is_number() {
        assert!(close(g["stats"]["spearman"].as_f64().unwrap(), 1.0), "{g}");
    }
    assert!(close(g["stats"]["best_config_ratio"].as_f64().unwrap(), 1.0), "{g}");
}

#[test]
fn bad_rows_are_errors_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.csv");
    std::fs::write(&p, "source,kernel,gpu,grid,block,time_ms\nk.ptx,k,a100,64,256,1\nk.ptx,k,a100,64x,256,1\n").unwrap();
    let (code, out, err) = warpsight(&["validate", p.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("bad.csv:3:") && err.contains("64x"), "{err}");
    // A missing source file is a failed row (exit 1), not a crash.
    std::fs::write(&p, "source,kernel,gpu,grid,block,time_ms\nnope.ptx,k,a100,64,256,1\n").unwrap();
    let (code, v) = json(&["validate", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(v["rows"][0]["status"], "failed");
    assert!(v["rows"][0]["reason"].as_str().unwrap().contains("nope.ptx"), "{v}");
    // A kernel that is not in the file.
    let src = root().join("tests/fixtures/ptx/sm_80/saxpy.ptx");
    std::fs::write(&p, format!("source,kernel,gpu,grid,block,time_ms\n{},nokernel,a100,64,256,1\n", src.display())).unwrap();
    let (code, v) = json(&["validate", p.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(v["rows"][0]["reason"].as_str().unwrap().contains("no kernel `nokernel`"), "{v}");
    // With every row failed, `--model` does not hide why they failed.
    let (code, out, err) = warpsight(&["validate", p.to_str().unwrap(), "--model", "headline"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("no kernel `nokernel`"), "{out}\n{err}");
    // Nothing to do.
    let (code, _, err) = warpsight(&["validate"]);
    assert_eq!(code, 2);
    assert!(err.contains("nothing to validate"), "{err}");
    let (code, _, err) = warpsight(&["validate", ROWS, "--model", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("--model `nope`"), "{err}");
}

#[test]
fn json_lines_rows_and_a_spec_file() {
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("tests/fixtures/ptx/sm_80/saxpy.ptx");
    let line = |block: u32, t: f64| {
        format!(
            "{{\"source\": {:?}, \"kernel\": \"saxpy\", \"gpu\": \"a40\", \"grid\": [4096], \"block\": {block}, \"args\": {{\"n\": \"1<<20\"}}, \"time_ms\": {t}}}\n",
            src.display().to_string()
        )
    };
    std::fs::write(dir.path().join("r.jsonl"), line(256, 0.1) + &line(128, 0.2)).unwrap();
    std::fs::write(dir.path().join("spec.toml"), "[[import]]\nkind = \"rows\"\nfiles = [\"r.jsonl\"]\n").unwrap();
    let (code, v) = json(&["validate", dir.path().join("spec.toml").to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["counts"]["analysed"], 2);
    assert_eq!(v["rows"][1]["block"], serde_json::json!([128, 1, 1]));
}

#[test]
fn kernel_tuner_and_ncu_importers_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    // A tiny Kernel Tuner cache for saxpy's PTX (block_size_x tuned, n fixed).
    let cache = r#"{"device_name": "NVIDIA A100-SXM4-80GB", "kernel_name": "saxpy", "problem_size": 1048576,
        "tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": [64, 128, 256]},
        "cache": {"64": {"block_size_x": 64, "time": 0.03}, "128": {"block_size_x": 128, "time": 0.02},
                  "256": {"block_size_x": 256, "time": "RuntimeFailedConfig"}}}"#;
    std::fs::write(dir.path().join("c.json"), cache).unwrap();
    let src = root().join("tests/fixtures/ptx/sm_80/saxpy.ptx");
    let (code, v) = json(&["validate", "--kernel-tuner", dir.path().join("c.json").to_str().unwrap(), "--source", src.to_str().unwrap(), "--arg", "n=1048576"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["counts"]["analysed"], 2);
    let r = v["rows"].as_array().unwrap().iter().find(|r| r["label"] == "64").unwrap();
    assert_eq!((r["grid"][0].as_u64(), r["block"][0].as_u64()), (Some(16384), Some(64)));
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("1 of 3")), "{v}");
    // `--locked-clock`: every configuration timed at 705 MHz, half the A100's 1410 MHz
    // boost clock, which the models run at (the SM-side terms take twice as long).
    let at_boost: Vec<f64> = v["rows"].as_array().unwrap().iter().filter_map(|r| r["predicted_ms"]["headline"].as_f64()).collect();
    assert!(v["rows"].as_array().unwrap().iter().all(|r| r.get("clock_mhz").is_none()), "{v}");
    let (code, locked) = json(&["validate", "--kernel-tuner", dir.path().join("c.json").to_str().unwrap(), "--source", src.to_str().unwrap(), "--arg", "n=1048576", "--locked-clock", "705"]);
    assert_eq!(code, 0, "{locked}");
    let rows = locked["rows"].as_array().unwrap();
    assert!(rows.iter().filter(|r| r["status"] == "analysed").all(|r| r["clock_mhz"] == 705.0), "{locked}");
    let at_705: Vec<f64> = rows.iter().filter_map(|r| r["predicted_ms"]["headline"].as_f64()).collect();
    assert_eq!(at_boost.len(), 2);
    assert!(at_705.iter().zip(&at_boost).all(|(l, b)| l > b), "{at_705:?} against {at_boost:?} at the boost clock");
    let (code, _, err) = warpsight(&["validate", "--kernel-tuner", dir.path().join("c.json").to_str().unwrap(), "--source", src.to_str().unwrap(), "--locked-clock", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("0 MHz is not a clock from 1 to 10000 MHz"), "{err}");

    // The same measurements as a T4 results file (Kernel Tuner's store_output_file) with its
    // metadata file beside it: the GPU from the metadata, kernel and problem size given.
    let t4 = r#"{"schema_version": "1.0.0", "results": [
        {"configuration": {"block_size_x": 64}, "times": {"runtimes": [0.03]}, "invalidity": "correct", "correctness": 1, "measurements": [{"name": "time", "value": 0.03, "unit": "ms"}]},
        {"configuration": {"block_size_x": 128}, "times": {"runtimes": [0.02]}, "invalidity": "correct", "correctness": 1, "measurements": [{"name": "time", "value": 0.02, "unit": "ms"}]},
        {"configuration": {"block_size_x": 256}, "times": {"runtimes": []}, "invalidity": "runtime", "correctness": 1, "measurements": []}]}"#;
    std::fs::write(dir.path().join("saxpy_output.json"), t4).unwrap();
    std::fs::write(
        dir.path().join("saxpy_metadata.json"),
        r#"{"schema_version": "1.0.0", "metadata": {"environment": {"device_query": {"nvidia-smi": {"nvidia_smi_log": {"gpu": {"product_name": "NVIDIA A100-SXM4-80GB"}}}}}}}"#,
    )
    .unwrap();
    let t4_path = dir.path().join("saxpy_output.json");
    let (code, t) = json(&["validate", "--kernel-tuner", t4_path.to_str().unwrap(), "--source", src.to_str().unwrap(), "--kernel", "saxpy", "--problem-size", "1048576", "--arg", "n=1048576"]);
    assert_eq!(code, 0, "{t}");
    assert_eq!(t["counts"]["analysed"], 2, "{t}");
    let kt: Vec<f64> = v["rows"].as_array().unwrap().iter().filter_map(|r| r["predicted_ms"]["headline"].as_f64()).collect();
    let t4p: Vec<f64> = t["rows"].as_array().unwrap().iter().filter_map(|r| r["predicted_ms"]["headline"].as_f64()).collect();
    assert_eq!(kt, t4p, "the cache and the T4 file are the same measurements");
    assert!(t["rows"].as_array().unwrap().iter().all(|r| r["gpu_id"] == "a100-sxm4-80gb"), "{t}");

    let ncu = "==PROF== Connected to process 1\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\"\n\
\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"usecond\"\n\
\"0\",\"1\",\"app\",\"h\",\"saxpy(int, float, const float *, float *)\",\"1\",\"7\",\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"8.0\",\"20.5\"\n";
    std::fs::write(dir.path().join("p.csv"), ncu).unwrap();
    let (code, v) = json(&["validate", "--ncu", dir.path().join("p.csv").to_str().unwrap(), "--source", src.to_str().unwrap(), "--gpu", "a100", "--arg", "n=1048576"]);
    assert_eq!(code, 0, "{v}");
    let r = &v["rows"][0];
    assert_eq!(r["status"], "analysed");
    assert_eq!(r["ptx_kernel"], "_Z5saxpyifPKfPf");
    assert!(close(r["measured_ms"].as_f64().unwrap(), 0.0205));
    // Without --source the importers say what they need.
    let (code, _, err) = warpsight(&["validate", "--ncu", dir.path().join("p.csv").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("--source"), "{err}");
}
