//! GPUs named in the settings and the workspace's own GPU files (issue 18): an unknown or
//! ambiguous id in `gpus` is a configuration warning shown once per id; the GPU files in
//! `.warpsight/gpus/` of the workspace root are loaded like `gpuFiles`.

use serde_json::{Value, json};

use crate::support::TestServer;

/// The `window/showMessage` warnings received so far.
fn warnings(ts: &TestServer) -> Vec<String> {
    ts.inbox
        .iter()
        .filter(|m| m["method"] == "window/showMessage" && m["params"]["type"] == 2)
        .filter_map(|m| m["params"]["message"].as_str().map(str::to_string))
        .collect()
}

/// The A40 entry of `gpu-data/gpus/ampere.toml` under another id, without aliases: a GPU
/// only this workspace knows.
fn lab_gpu(id: &str) -> String {
    let ampere = include_str!("../../../../gpu-data/gpus/ampere.toml");
    let start = ampere.find("id = \"a40\"").expect("a40 entry");
    let rest = &ampere[start..];
    let end = rest.find("[[gpu]]").unwrap_or(rest.len());
    let entry = rest[..end].replacen("id = \"a40\"", &format!("id = \"{id}\""), 1);
    let aliases = entry.lines().find(|l| l.starts_with("aliases")).expect("aliases line").to_string();
    format!("[[gpu]]\n{}", entry.replacen(&aliases, "aliases = []", 1))
}

fn file_uri(path: &std::path::Path) -> Value {
    json!(format!("file://{}", path.display()))
}

#[tokio::test]
async fn an_unknown_gpu_in_the_settings_is_shown_once_per_id() {
    let (mut ts, _) = TestServer::start_with(json!({}), json!({ "debounceMs": 0, "gpus": ["a100", "h100-sxn"] })).await;
    let uri = "file:///w/vadd.ptx";
    ts.open(uri, "ptx", crate::VADD).await;
    ts.diagnostics(uri, 1).await;
    let w = warnings(&ts);
    let unknown: Vec<&String> = w.iter().filter(|m| m.contains("h100-sxn")).collect();
    assert_eq!(unknown.len(), 1, "{w:?}");
    assert!(unknown[0].contains("unknown GPU `h100-sxn`") && unknown[0].contains("closest: h100-sxm"), "{w:?}");
    // The analysis goes on with the known GPU.
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri })).await;
    assert!(report["kernels"][0]["gpus"].get("a100-sxm4-80gb").is_some(), "{report}");

    // The same setting again: no second warning; a new unknown (ambiguous) id: one.
    let settings = json!({ "warpsight": { "gpus": ["a100", "h100-sxn", "rtx-30"] } });
    ts.notify("workspace/didChangeConfiguration", json!({ "settings": settings })).await;
    ts.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": crate::VADD }] })).await;
    ts.diagnostics(uri, 2).await;
    let w = warnings(&ts);
    assert_eq!(w.iter().filter(|m| m.contains("h100-sxn")).count(), 1, "{w:?}");
    let ambiguous: Vec<&String> = w.iter().filter(|m| m.contains("rtx-30`")).collect();
    assert_eq!(ambiguous.len(), 1, "{w:?}");
    assert!(ambiguous[0].contains("ambiguous") && ambiguous[0].contains("rtx-3060-ti"), "{w:?}");
    ts.shutdown().await;
}

#[tokio::test]
async fn the_workspace_gpu_files_are_loaded_and_a_bad_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let gpus_dir = dir.path().join(".warpsight/gpus");
    std::fs::create_dir_all(&gpus_dir).unwrap();
    std::fs::write(gpus_dir.join("lab.toml"), lab_gpu("lab-a40")).unwrap();
    std::fs::write(gpus_dir.join("notes.txt"), "not a GPU file, not read").unwrap();
    let (mut ts, _) = TestServer::start_in(file_uri(dir.path()), json!({}), json!({ "debounceMs": 0, "gpus": ["lab-a40"] })).await;
    let uri = format!("file://{}/vadd.ptx", dir.path().display());
    ts.open(&uri, "ptx", crate::VADD).await;
    ts.diagnostics(&uri, 1).await;
    assert!(warnings(&ts).is_empty(), "{:?}", warnings(&ts));
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri })).await;
    assert!(report["kernels"][0]["gpus"].get("lab-a40").is_some(), "{}", report["kernels"][0]["gpus"]);
    assert!(report["unknown_gpus"].as_array().is_none_or(Vec::is_empty), "{report}");
    ts.shutdown().await;

    // A number without a source: refused with the file's name; nothing else breaks.
    let broken = lab_gpu("lab-a40").replacen("sm_count = {", "sm_count = 84\nxsm_count = {", 1);
    std::fs::write(gpus_dir.join("lab.toml"), broken).unwrap();
    let (mut ts, _) = TestServer::start_in(file_uri(dir.path()), json!({}), json!({ "debounceMs": 0, "gpus": ["a40"] })).await;
    ts.open(&uri, "ptx", crate::VADD).await;
    ts.diagnostics(&uri, 1).await;
    let w = warnings(&ts);
    assert!(w.iter().any(|m| m.contains(".warpsight/gpus") && m.contains("lab.toml")), "{w:?}");
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri })).await;
    assert!(report["kernels"][0]["gpus"].get("a40").is_some(), "{report}");
    ts.shutdown().await;
}

/// `lockedClockMhz` (as `--locked-clock`): the models run at the locked SM clock, which
/// slows the SM-side work by the clock's share of the boost clock; `null` unlocks it.
#[tokio::test]
async fn a_locked_clock_in_the_settings_runs_the_models_at_it() {
    let (mut ts, _) = TestServer::start_with(json!({}), json!({ "debounceMs": 0, "gpus": ["a100"] })).await;
    let uri = "file:///w/vadd.ptx";
    ts.open(uri, "ptx", crate::VADD).await;
    ts.diagnostics(uri, 1).await;
    let issue_us = |report: &Value| {
        let b = &report["kernels"][0]["gpus"]["a100-sxm4-80gb"]["predictions"]["bottleneck"]["breakdown"];
        b["issue_us"].as_f64().unwrap_or_else(|| panic!("no issue term: {report}"))
    };
    let boost = issue_us(&ts.request("warpsight/kernelReport", json!({ "uri": uri })).await);
    async fn reanalyse(ts: &mut TestServer, uri: &str, version: i64, settings: Value) -> Value {
        ts.notify("workspace/didChangeConfiguration", json!({ "settings": { "warpsight": settings } })).await;
        ts.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": crate::VADD }] })).await;
        ts.diagnostics(uri, version).await;
        ts.request("warpsight/kernelReport", json!({ "uri": uri })).await
    }
    // The A100's boost clock is 1410 MHz: at 705 the issue term doubles.
    let locked = issue_us(&reanalyse(&mut ts, uri, 2, json!({ "gpus": ["a100"], "lockedClockMhz": 705 })).await);
    assert!((locked / boost - 2.0).abs() < 1e-6, "issue term {boost} µs at the boost clock, {locked} µs at 705 MHz");
    // A clock out of range is refused (a warning) and the previous one stays.
    let kept = issue_us(&reanalyse(&mut ts, uri, 3, json!({ "gpus": ["a100"], "lockedClockMhz": 0 })).await);
    assert_eq!(kept, locked);
    assert!(warnings(&ts).iter().any(|m| m.contains("`lockedClockMhz`: 0 is not a clock from 1 to 10000 MHz")), "{:?}", warnings(&ts));
    let unlocked = issue_us(&reanalyse(&mut ts, uri, 4, json!({ "gpus": ["a100"], "lockedClockMhz": null })).await);
    assert_eq!(unlocked, boost);
    ts.shutdown().await;
}
