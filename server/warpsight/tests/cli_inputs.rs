//! The CLI on bad input: one clear error line and exit code 2 for missing, binary or
//! unreadable files; diagnostics on the garbage lines and a full analysis of the rest for
//! damaged PTX (exit code 1); never a panic.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A private scratch directory (an unpredictable name, removed when dropped).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("warpsight-cli-{name}-")).tempdir().expect("scratch dir")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight")).current_dir(root()).args(args).output().expect("run");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn binary_file_gets_one_error_line_and_exit_2() {
    let dir_tmp = scratch("binary");
    let dir = dir_tmp.path();
    let path = dir.join("blob.ptx");
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&path, bytes).unwrap();
    let (code, stdout, stderr) = run(&["analyze", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not a text file"), "{stderr}");
    assert!(!stderr.contains("panicked"));
}

#[test]
fn missing_file_gets_one_error_line_and_exit_2() {
    let (code, _, stderr) = run(&["analyze", "no/such/file.ptx"]);
    assert_eq!(code, 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no/such/file.ptx"), "{stderr}");
}

#[test]
fn bad_flags_are_usage_errors() {
    for args in [&["analyze", "examples", "--grid", "0x4"][..], &["analyze", "examples", "--arg", "n"], &["analyze", "examples", "--severity", "no-such-code=off"], &["frobnicate"]] {
        let (code, _, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_floating_point_argument_is_accepted_with_one_note_and_not_used() {
    // SAXPY's `a` or an N-body softening term: no integer evaluator folds 0.5, and nothing
    // the analysis folds depends on it, so it is accepted, said once on stderr and left out.
    let (code, stdout, stderr) = run(&["analyze", "examples/vadd.ptx", "--format", "json", "--grid", "4096", "--block", "256", "--arg", "n=1<<20", "--arg", "alpha=0.5"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches("--arg alpha=0.5: a floating-point value").count(), 1, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).expect("json");
    let args = &v["files"][0]["kernels"][0]["launch"]["args"];
    assert_eq!(args["n"], 1 << 20, "{args}");
    assert!(args.get("alpha").is_none(), "{args}");
    // A value that is neither is still a usage error.
    let (code, _, stderr) = run(&["analyze", "examples/vadd.ptx", "--arg", "alpha=0.5.1"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn garbage_lines_get_diagnostics_and_the_rest_is_analysed() {
    let text = std::fs::read_to_string(root().join("tests/fixtures/ptx/sm_80/transpose_naive.ptx")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let at = lines.iter().position(|l| l.contains("ld.global")).unwrap();
    lines.insert(at, "\t%%% garbage ??? here".into());
    lines.insert(at + 2, "\tbogus.opcode %r1, %r2;".into());
    let dir_tmp = scratch("garbage");
    let dir = dir_tmp.path();
    let path = dir.join("t.ptx");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let (code, stdout, stderr) = run(&["analyze", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let f = &v["files"][0];
    let lines_with_errors: Vec<i64> = f["errors"].as_array().unwrap().iter().map(|e| e["line"].as_i64().unwrap()).collect();
    assert!(lines_with_errors.contains(&(at as i64 + 1)), "{lines_with_errors:?}");
    assert!(lines_with_errors.contains(&(at as i64 + 3)), "unknown opcode warned: {lines_with_errors:?}");
    assert!(lines_with_errors.iter().all(|l| *l == at as i64 + 1 || *l == at as i64 + 3), "{lines_with_errors:?}");
    // The kernel is still fully analysed: both global accesses and the shared ones.
    let k = &f["kernels"][0];
    assert_eq!(k["memory_accesses"].as_array().unwrap().len(), 4, "{}", k["memory_accesses"]);
    assert!(k["instruction_mix"]["static"]["load_global"].as_u64() == Some(1));
}

#[test]
fn fixtures_analyse_without_parse_errors() {
    let (code, stdout, stderr) = run(&["analyze", "tests/fixtures/ptx", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let files = v["files"].as_array().unwrap();
    assert!(files.len() >= 160, "{}", files.len());
    for f in files {
        assert_eq!(f["errors"], serde_json::json!([]), "{}", f["path"]);
        for k in f["kernels"].as_array().unwrap() {
            assert!(k["instruction_mix"]["static_total"].as_u64().unwrap() > 0, "{} {}", f["path"], k["name"]);
            assert!(k["loops"].is_array());
        }
    }
}

/// An importer's file given where `validate` expects rows is named as what it is, with the
/// flag that reads it (a gzip-compressed Kernel Tuner cache was reported as "not a text
/// file", a plain one as a JSON error on its first line).
#[test]
fn an_importer_file_given_as_rows_names_its_flag() {
    let dir_tmp = scratch("misplaced");
    let dir = dir_tmp.path();
    let cache = r#"{"device_name": "NVIDIA GeForce RTX 3090", "kernel_name": "k", "problem_size": [1024], "tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": [128]}, "cache": {"128": {"block_size_x": 128, "time": 0.1}}}"#;
    let plain = dir.join("cache.json");
    std::fs::write(&plain, cache).unwrap();
    let gz = dir.join("cache.json.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, cache.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let ncu = dir.join("report.csv");
    std::fs::write(&ncu, "\"ID\",\"Process ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\"\n\"\",\"\",\"\",\"\",\"\",\"usecond\"\n").unwrap();
    let t4 = dir.join("conv-results.json");
    std::fs::write(&t4, r#"{"schema_version": "1.0.0", "results": [{"configuration": {"block_size_x": 128}, "times": {"runtimes": [0.1]}, "invalidity": "correct", "correctness": 1, "measurements": [{"name": "time", "value": 0.1, "unit": "ms"}]}]}"#).unwrap();
    for (file, flag) in [(&plain, "--kernel-tuner"), (&gz, "--kernel-tuner"), (&ncu, "--ncu"), (&t4, "--kernel-tuner")] {
        let (code, stdout, stderr) = run(&["validate", file.to_str().unwrap()]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(&file.display().to_string()) && stderr.contains(flag), "{stderr}");
    }
}
