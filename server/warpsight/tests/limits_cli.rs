//! Numbers on the command line (issue 12 items 10 and 11): a default trip count that is
//! not a number, infinite, negative or absurd is refused with exit code 2; too many
//! `--gpu` values likewise; launches and arguments at the extremes of their types never
//! panic, and a kernel whose trip counts multiply to an absurd count says it cannot be
//! predicted instead of printing the roofline floor as its time.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight")).current_dir(root()).args(args).output().expect("run");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

const VADD: &str = "tests/fixtures/ptx/sm_80/vadd.ptx";

#[test]
fn default_trip_counts_that_are_not_counts_are_refused() {
    for bad in ["1e308", "NaN", "inf", "-inf", "-1", "1e10"] {
        let flag = format!("--default-trip-count={bad}");
        let (code, stdout, stderr) = run(&["analyze", VADD, &flag]);
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(stdout.is_empty(), "{bad}: {stdout}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("--default-trip-count") && stderr.contains("is not a trip count from 0 to 1e9"), "{stderr}");
    }
    for good in ["0", "16", "1e9"] {
        let flag = format!("--default-trip-count={good}");
        let (code, _, stderr) = run(&["analyze", VADD, &flag]);
        assert_eq!(code, 0, "{good}: {stderr}");
    }
}

#[test]
fn more_gpus_than_the_limit_are_refused() {
    let mut args: Vec<String> = vec!["analyze".into(), VADD.into()];
    for _ in 0..129 {
        args.extend(["--gpu".into(), "a100".into()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, stderr) = run(&args);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--gpu: 129 GPUs is more than the limit of 128"), "{stderr}");
    let (code, _, stderr) = run(&["analyze", VADD, "--gpu", &"x".repeat(101)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("longer than the limit of 100"), "{stderr}");
}

#[test]
fn extreme_launches_and_arguments_never_panic() {
    let max = i64::MAX.to_string();
    let min = (i64::MIN + 1).to_string();
    let args_max: Vec<String> = (0..6).map(|i| format!("--arg=param_{i}={max}")).collect();
    let args_min: Vec<String> = (0..6).map(|i| format!("--arg=param_{i}={min}")).collect();
    let cases: Vec<Vec<&str>> = vec![
        vec!["--grid", "4294967295x4294967295x4294967295", "--block", "4294967295x4294967295x4294967295"],
        vec!["--grid", "2147483647x65535x65535", "--block", "1024", "--gpu", "k20", "--gpu", "a100"],
        args_max.iter().map(String::as_str).collect(),
        args_min.iter().map(String::as_str).collect(),
    ];
    for fixture in ["vadd.ptx", "matmul_tiled.ptx", "spmv_csr.ptx", "conv2d.ptx"] {
        let path = format!("tests/fixtures/ptx/sm_80/{fixture}");
        for case in &cases {
            let mut args = vec!["analyze", path.as_str(), "--format", "json"];
            args.extend(case);
            let (code, stdout, stderr) = run(&args);
            assert!(!stderr.contains("panicked"), "{fixture} {case:?}: {stderr}");
            assert_eq!(code, 0, "{fixture} {case:?}: {stderr}");
            let v: Value = serde_json::from_str(&stdout).expect("JSON");
            for k in v["files"][0]["kernels"].as_array().expect("kernels") {
                for (gpu, t) in k["gpus"].as_object().expect("gpus") {
                    // Either a time or the reason there is none; never a null time.
                    let has_time = t["headline"]["time_us"].as_f64().is_some_and(f64::is_finite);
                    assert!(has_time != t["cannot_predict"].is_string(), "{fixture} {case:?} {gpu}: {t}");
                }
            }
        }
    }
    // More than 2^64 threads: no time, and the reason.
    let (_, stdout, _) = run(&["analyze", VADD, "--grid", "4294967295x4294967295x4294967295", "--block", "1024"]);
    assert!(stdout.contains("cannot predict: the launch (grid 4294967295×4294967295×4294967295, block 1024×1×1) has more than 2^64 threads"), "{stdout}");
}

#[test]
fn a_loop_nest_with_the_largest_default_cannot_be_predicted() {
    // gemv_xshared has two nested loops of data-dependent count: with 10^9 assumed for
    // each, the per-thread count passes 10^15.
    let (code, stdout, stderr) = run(&["analyze", "tests/fixtures/ptx/sm_80/dyn_smem.ptx", "--default-trip-count", "1e9", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).expect("JSON");
    let k = &v["files"][0]["kernels"][0];
    let unknown_depths: Vec<i64> = k["loops"].as_array().expect("loops").iter().filter(|l| l["trip_count"].is_null()).filter_map(|l| l["depth"].as_i64()).collect();
    assert!(unknown_depths.contains(&1) && unknown_depths.contains(&2), "the fixture no longer nests two loops of unknown count: {}", k["loops"]);
    let total = &k["instruction_mix"]["dynamic_total_per_thread"];
    assert!(total.as_f64().is_some_and(f64::is_finite), "the total is a number, not null: {total}");
    let t = &k["gpus"]["a100-sxm4-80gb"];
    assert!(t["headline"].is_null(), "{}", t["headline"]);
    assert!(t["cannot_predict"].as_str().is_some_and(|s| s.starts_with("cannot predict: each thread would execute")), "{t}");
    // The table says it too.
    let (_, table, _) = run(&["analyze", "tests/fixtures/ptx/sm_80/dyn_smem.ptx", "--default-trip-count", "1e9"]);
    assert!(table.contains("cannot predict: each thread would execute"), "{table}");
}
