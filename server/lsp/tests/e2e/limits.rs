//! Issue 12 items 8–11 through the server loop: JSON-RPC framing with absurd lengths, the
//! lifecycle's exit codes, stale `didChange` versions, limits on settings and requests,
//! and a kernel whose time cannot be predicted.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::TestServer;

/// An answer that must come at once (the harness's own timeout, 20 s, is for analyses).
const PROMPT: Duration = Duration::from_secs(5);

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ptx/sm_80").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

async fn still_serving(ts: &mut TestServer) {
    let res = tokio::time::timeout(PROMPT, ts.request_raw("warpsight/noSuchMethod", json!({}))).await.expect("the next request must be answered");
    assert_eq!(res["error"]["code"], -32601, "{res}");
}

// --- Framing ------------------------------------------------------------------------------

#[tokio::test]
async fn a_content_length_of_u64_max_is_answered_at_once_and_later_messages_are_served() {
    let mut ts = TestServer::start().await;
    ts.send_raw(b"Content-Length: 18446744073709551615\r\n\r\n").await;
    let err = tokio::time::timeout(PROMPT, ts.wait_for(|m| m.get("error").is_some())).await.expect("the error must come before any body");
    assert_eq!((err["error"]["code"].clone(), err["id"].clone()), (json!(-32600), Value::Null), "{err}");
    assert!(err["error"]["message"].as_str().is_some_and(|m| m.contains("over the limit of 268435456 bytes")), "{err}");
    still_serving(&mut ts).await;
    ts.shutdown().await;
}

#[tokio::test]
async fn two_gigabytes_with_a_short_body_do_not_swallow_later_messages() {
    let mut ts = TestServer::start().await;
    ts.send_raw(b"Content-Length: 2147483648\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"shutdown\"}").await;
    let err = tokio::time::timeout(PROMPT, ts.wait_for(|m| m.get("error").is_some())).await.expect("answered at once");
    assert_eq!(err["error"]["code"], -32600, "{err}");
    still_serving(&mut ts).await;
    // The swallowed `shutdown` did not run: documents are still served.
    ts.open("file:///w/vadd.ptx", "ptx", crate::VADD).await;
    ts.diagnostics("file:///w/vadd.ptx", 1).await;
    ts.shutdown().await;
}

#[tokio::test]
async fn a_body_shorter_than_its_length_is_reported_when_the_next_header_arrives() {
    let mut ts = TestServer::start().await;
    ts.send_raw(b"Content-Length: 4096\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"shut").await;
    still_serving(&mut ts).await;
    let err = ts.wait_for(|m| m.get("error").is_some() && m["id"].is_null()).await;
    assert_eq!(err["error"]["code"], -32700, "{err}");
    ts.shutdown().await;
}

// --- Lifecycle ----------------------------------------------------------------------------

#[tokio::test]
async fn exit_codes_follow_the_specification() {
    // LSP 3.17 "exit Notification": 0 if `shutdown` came first, 1 otherwise; the input
    // ending counts the same way.
    let ts = TestServer::start().await;
    assert_eq!(ts.exit_without_shutdown().await.exit_code(), 1);
    let ts = TestServer::start().await;
    assert_eq!(ts.close_input().await.exit_code(), 1);
    let mut ts = TestServer::start().await;
    ts.request("shutdown", Value::Null).await;
    assert_eq!(ts.close_input().await.exit_code(), 0);
    // `shutdown` then `exit`: checked by every test's `shutdown()`.
    TestServer::start().await.shutdown().await;
}

fn full_change(uri: &str, version: i64, text: &str) -> Value {
    json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] })
}

#[tokio::test]
async fn a_did_change_whose_version_does_not_increase_is_not_applied() {
    let mut ts = TestServer::start().await;
    let uri = "file:///w/versions.ptx";
    ts.open(uri, "ptx", crate::VADD).await;
    ts.diagnostics(uri, 1).await;
    ts.notify("textDocument/didChange", full_change(uri, 3, crate::VADD)).await;
    ts.diagnostics(uri, 3).await;
    // Replayed or out of order: versions 2 and 3 again, with broken text.
    for stale in [2, 3] {
        ts.notify("textDocument/didChange", full_change(uri, stale, "garbage that is not PTX {{{")).await;
    }
    // An incremental edit on top: it applies to version 3's text, not the garbage.
    let end = crate::VADD.lines().count();
    let edit = json!({
        "textDocument": { "uri": uri, "version": 4 },
        "contentChanges": [{ "range": { "start": { "line": end, "character": 0 }, "end": { "line": end, "character": 0 } }, "text": "// appended\n" }]
    });
    ts.notify("textDocument/didChange", edit).await;
    let diags = ts.diagnostics(uri, 4).await;
    let errors: Vec<&Value> = diags.iter().filter(|d| d["code"] == "syntax").collect();
    assert!(errors.is_empty(), "a stale change was applied: {errors:?}");
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri })).await;
    assert_eq!(report["kernels"].as_array().map(Vec::len), Some(1), "{report}");
    assert!(!ts.inbox.iter().any(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == 2));
    ts.shutdown().await;
}

// --- Settings and requests ----------------------------------------------------------------

/// The `window/showMessage` warnings received so far.
fn warnings(ts: &TestServer) -> Vec<String> {
    ts.inbox
        .iter()
        .filter(|m| m["method"] == "window/showMessage" && m["params"]["type"] == 2)
        .filter_map(|m| m["params"]["message"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn a_huge_debounce_is_refused_with_a_message_and_edits_are_still_analysed() {
    let (mut ts, _) = TestServer::start_with(json!({}), json!({ "debounceMs": 1u64 << 62 })).await;
    let uri = "file:///w/debounce.ptx";
    ts.open(uri, "ptx", crate::VADD).await;
    ts.diagnostics(uri, 1).await;
    let w = warnings(&ts);
    assert!(w.iter().any(|m| m.contains("`debounceMs`: 4611686018427387904 is not a whole number of milliseconds from 0 to 10000")), "{w:?}");
    // The default debounce (150 ms) still applies: an edit is analysed promptly.
    ts.notify("textDocument/didChange", full_change(uri, 2, crate::VADD)).await;
    tokio::time::timeout(PROMPT, ts.diagnostics(uri, 2)).await.expect("diagnostics after an edit");
    ts.shutdown().await;
}

#[tokio::test]
async fn every_out_of_range_setting_is_named_and_the_previous_value_kept() {
    let mut ts = TestServer::start().await;
    let uri = "file:///w/loops.ptx";
    let text = fixture("spmv_csr.ptx");
    ts.open(uri, "ptx", &text).await;
    ts.diagnostics(uri, 1).await;
    let ids: Vec<String> = (0..10_000).map(|i| format!("gpu-{i}")).collect();
    let bad = json!({ "warpsight": {
        "debounceMs": -1,
        "compileTimeoutMs": 0,
        "defaultTripCount": 1e308,
        "gpus": ids,
        "launch": { "grid": "0x1", "dynamicSmem": -5 },
        "args": { "n": "many" },
        "severities": { "no-such-code": "error", "tail-wave": "loud" },
        "inlayHints": { "power": "yes" },
        "nvcc": 5
    }});
    ts.notify("workspace/didChangeConfiguration", json!({ "settings": bad })).await;
    let msg = ts.wait_for(|m| m["method"] == "window/showMessage").await;
    let text_of = msg["params"]["message"].as_str().unwrap_or_default().to_string();
    for key in ["debounceMs", "compileTimeoutMs", "defaultTripCount", "gpus", "launch.grid", "launch.dynamicSmem", "args.n", "severities.no-such-code", "severities.tail-wave", "inlayHints.power", "nvcc"] {
        assert!(text_of.contains(&format!("`{key}`")), "{key} not named in: {text_of}");
    }
    assert!(text_of.contains("10000 GPUs is more than the limit of 128"), "{text_of}");
    // The previous values hold: the default GPU, the default trip count of 16, which the
    // CSR row loop nvcc unrolled by 4 runs as 16 mod 4 remainder iterations and 16 / 4
    // unrolled ones (docs/profile.md, trip counts).
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri })).await;
    let k = &report["kernels"][0];
    assert!(k["gpus"].get("a100-sxm4-80gb").is_some(), "{}", k["gpus"]);
    let trips: Vec<f64> = k["loops"].as_array().map(|l| l.iter().filter_map(|l| l["assumed_trip_count"].as_f64()).collect()).unwrap_or_default();
    assert_eq!(trips, [0.0, 4.0], "{}", k["loops"]);
    ts.shutdown().await;
}

#[tokio::test]
async fn compare_gpus_with_ten_thousand_ids_is_refused_at_once() {
    let mut ts = TestServer::start().await;
    let uri = "file:///w/vadd.ptx";
    ts.open(uri, "ptx", crate::VADD).await;
    ts.diagnostics(uri, 1).await;
    let ids: Vec<String> = (0..10_000).map(|i| format!("gpu-{i}")).collect();
    let res = tokio::time::timeout(PROMPT, ts.request_raw("warpsight/compareGpus", json!({ "uri": uri, "gpus": ids }))).await.expect("refused at once");
    assert_eq!(res["error"]["code"], -32602, "{res}");
    assert!(res["error"]["message"].as_str().is_some_and(|m| m.contains("10000 GPUs is more than the limit of 128")), "{res}");
    // At the limit (duplicates collapse) it works.
    let ids = vec!["a100"; 128];
    let res = ts.request("warpsight/compareGpus", json!({ "uri": uri, "gpus": ids })).await;
    assert_eq!(res["rows"].as_array().map(Vec::len), Some(1), "{res}");
    // A what-if with an absurd trip count or too many GPUs is an invalid request too.
    for (params, key) in [
        (json!({ "uri": uri, "defaultTripCount": 1e308 }), "defaultTripCount"),
        (json!({ "uri": uri, "gpus": vec!["a100"; 129] }), "gpus"),
        (json!({ "uri": uri, "gpu": "x".repeat(1000) }), "gpus"),
    ] {
        let res = ts.request_raw("warpsight/whatIf", params).await;
        assert_eq!(res["error"]["code"], -32602, "{res}");
        assert!(res["error"]["message"].as_str().is_some_and(|m| m.contains(&format!("`{key}`"))), "{res}");
    }
    ts.shutdown().await;
}

#[tokio::test]
async fn a_kernel_whose_counts_are_absurd_says_it_cannot_be_predicted() {
    let mut ts = TestServer::start().await;
    let uri = "file:///w/dyn_smem.ptx";
    let text = fixture("dyn_smem.ptx");
    ts.open(uri, "ptx", &text).await;
    ts.diagnostics(uri, 1).await;
    // Two nested loops of unknown count at 10^9 each: 10^18 instructions per thread.
    let report = ts.request("warpsight/whatIf", json!({ "uri": uri, "defaultTripCount": 1e9 })).await;
    let t = &report["kernels"][0]["gpus"]["a100-sxm4-80gb"];
    assert!(t["headline"].is_null(), "{t}");
    assert!(t["cannot_predict"].as_str().is_some_and(|s| s.starts_with("cannot predict: each thread would execute")), "{t}");
    // In the editor's settings: the hover card says so.
    ts.notify("workspace/didChangeConfiguration", json!({ "settings": { "defaultTripCount": 1e9 } })).await;
    let line = text.lines().position(|l| l.contains(".entry")).expect("an entry") as u64;
    let col = text.lines().nth(line as usize).and_then(|l| l.find("_Z")).expect("a name") as u64;
    // Wait for the re-analysis under the new settings, then hover.
    ts.diagnostics(uri, 1).await;
    let hover = ts.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": col + 2 } })).await;
    let card = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(card.contains("cannot predict: each thread would execute"), "{card}");
    ts.shutdown().await;
}
