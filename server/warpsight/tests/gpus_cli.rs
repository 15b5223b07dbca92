//! GPUs the user names on the command line, and the GPUs of this machine: an unknown
//! `--gpu` is a usage error (exit 2) naming the closest ids, an ambiguous one lists its
//! candidates, short names resolve; `warpsight gpus --detect` without a driver says so in
//! one line and exits 0 (issue 18).

use std::path::PathBuf;
use std::process::Command;

const VADD: &str = "tests/fixtures/ptx/sm_80/vadd.ptx";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight")).current_dir(root()).args(args).output().expect("run");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn an_unknown_gpu_is_a_usage_error_with_the_closest_ids() {
    for format in ["table", "json"] {
        let (code, stdout, stderr) = run(&["analyze", VADD, "--gpu", "h100-sxn", "--format", format]);
        assert_eq!(code, 2, "{format}: {stdout}{stderr}");
        assert!(stdout.is_empty(), "no analysis without the GPU asked for: {stdout}");
        assert!(stderr.contains("unknown GPU `h100-sxn`") && stderr.contains("closest: h100-sxm"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    // One unknown GPU among known ones is still an error: the user asked for it.
    let (code, _, stderr) = run(&["profile", VADD, "--kernel", "vadd", "--gpu", "a100", "--gpu", "rtx-9999"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("unknown GPU `rtx-9999`"), "{stderr}");
}

#[test]
fn an_ambiguous_gpu_lists_its_candidates() {
    let (code, _, stderr) = run(&["analyze", VADD, "--gpu", "rtx-30"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("ambiguous"), "{stderr}");
    for id in ["rtx-3060", "rtx-3070-ti", "rtx-3090"] {
        assert!(stderr.contains(id), "{id} missing: {stderr}");
    }
}

#[test]
fn short_names_and_driver_names_resolve() {
    for name in ["v100", "a100", "rtx 3060 laptop", "NVIDIA TITAN RTX"] {
        let (code, stdout, stderr) = run(&["analyze", VADD, "--gpu", name, "--format", "json"]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        let unknown = &v["files"][0]["unknown_gpus"];
        assert!(unknown.as_array().is_none_or(Vec::is_empty), "{name}: {unknown}");
    }
}

#[test]
fn detect_without_a_driver_says_so_in_one_line_and_exits_0() {
    let (code, stdout, stderr) = run(&["gpus", "--detect"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // This test machine has no NVIDIA driver; a machine with one lists its GPUs instead,
    // one line each, every line naming a database id or why there is none.
    if stdout.starts_with("no NVIDIA driver found") || stdout.starts_with("the NVIDIA driver") {
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
    } else {
        assert!(stdout.lines().all(|l| l.contains(" -> ") || l.contains("database") || l.contains("reports no GPUs")), "{stdout}");
    }
    let (code, stdout, _) = run(&["gpus", "--detect", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert!(v["driver"].is_boolean() && v["gpus"].is_array(), "{v}");
}

#[test]
fn the_database_lists_at_least_the_gpus_users_hit() {
    let (code, stdout, _) = run(&["gpus"]);
    assert_eq!(code, 0);
    for id in ["rtx-a4000", "titan-rtx", "rtx-3060-laptop", "gtx-1650", "rtx-2060", "rtx-3060-ti", "rtx-3070-ti"] {
        assert!(stdout.lines().any(|l| l.starts_with(&format!("{id} "))), "{id} missing");
    }
}

#[test]
fn the_table_has_150_gpus_in_family_blocks_and_filters_by_segment_and_family() {
    let (code, stdout, stderr) = run(&["gpus"]);
    assert_eq!(code, 0, "{stderr}");
    let (_, json, _) = run(&["gpus", "--json"]);
    let all: serde_json::Value = serde_json::from_str(&json).expect("json");
    let all = all.as_array().expect("array");
    assert!(all.len() >= 150, "{} GPUs", all.len());
    // Every GPU of the JSON has exactly one row, and the count line says how many.
    for g in all {
        let id = g["id"].as_str().expect("id");
        let n = stdout.lines().filter(|l| l.split_whitespace().next() == Some(id)).count();
        assert_eq!(n, 1, "{id}: {n} rows");
    }
    assert!(stdout.contains(&format!("{} GPUs.", all.len())), "{stdout}");
    // One block per family, headed by the family, its compute capabilities and its count.
    for heading in ["Kepler (CC 3.0, 3.2, 3.5, 3.7): ", "Turing (CC 7.5): ", "Ampere (CC 8.0, 8.6, 8.7): "] {
        assert!(stdout.lines().any(|l| l.starts_with(heading)), "{heading} missing:\n{stdout}");
    }
    // Every market segment is represented.
    for seg in ["datacenter", "workstation", "desktop", "laptop", "embedded"] {
        let n = all.iter().filter(|g| g["segment"] == seg).count();
        assert!(n >= 8, "{seg}: {n} GPUs");
    }

    // --segment: only laptops, each with its own row, and the count of the selection.
    let (code, stdout, stderr) = run(&["gpus", "--segment", "laptop"]);
    assert_eq!(code, 0, "{stderr}");
    let laptops: Vec<&serde_json::Value> = all.iter().filter(|g| g["segment"] == "laptop").collect();
    assert!(stdout.contains(&format!("{} of {} GPUs.", laptops.len(), all.len())), "{stdout}");
    for g in &laptops {
        let id = g["id"].as_str().expect("id");
        assert!(stdout.lines().any(|l| l.starts_with(&format!("{id} "))), "{id} missing");
    }
    assert!(!stdout.lines().any(|l| l.starts_with("rtx-3060 ")), "a desktop GPU in the laptop list:\n{stdout}");
    // --family (any case), also with --json.
    let (code, stdout, _) = run(&["gpus", "--family", "PASCAL", "--json"]);
    assert_eq!(code, 0);
    let pascal: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let pascal = pascal.as_array().expect("array");
    assert_eq!(pascal.len(), all.iter().filter(|g| g["architecture"] == "Pascal").count());
    assert!(pascal.len() >= 20 && pascal.iter().all(|g| g["architecture"] == "Pascal"), "{} Pascal GPUs", pascal.len());
    // Unknown values are usage errors naming the valid ones.
    let (code, stdout, stderr) = run(&["gpus", "--family", "lovelace"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.is_empty() && stderr.contains("unknown family `lovelace`") && stderr.contains("ada"), "{stderr}");
    let (code, _, stderr) = run(&["gpus", "--segment", "server"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("datacenter"), "{stderr}");
}

#[test]
fn docs_gpus_md_states_the_count_of_the_database_and_of_each_family() {
    let (_, json, _) = run(&["gpus", "--json"]);
    let all: serde_json::Value = serde_json::from_str(&json).expect("json");
    let all = all.as_array().expect("array");
    let doc = std::fs::read_to_string(root().join("docs/gpus.md")).expect("docs/gpus.md");
    assert!(doc.contains(&format!("a database of {} NVIDIA GPUs", all.len())), "docs/gpus.md does not state {} GPUs", all.len());
    // The family table: `| Family | CC | N | ...`, one row per family of the database.
    let mut families: Vec<&str> = all.iter().filter_map(|g| g["architecture"].as_str()).collect();
    families.sort_unstable();
    families.dedup();
    for family in families {
        let n = all.iter().filter(|g| g["architecture"] == family).count();
        let row = doc.lines().find(|l| l.starts_with(&format!("| {family} |"))).unwrap_or_else(|| panic!("no row for {family}"));
        let count = row.split('|').nth(3).map(str::trim);
        assert_eq!(count, Some(n.to_string().as_str()), "{family}: {row}");
    }
}
