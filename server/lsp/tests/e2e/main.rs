//! End-to-end tests of the language server over an in-memory transport: one test per
//! protocol feature, through the real server loop.

mod features;
mod fuzz;
mod gpus;
mod limits;
#[path = "../common/ptxgen.rs"]
mod ptxgen;
mod support;

use serde_json::{Value, json};
use support::TestServer;

const VADD: &str = r#"//
.version 9.0
.target sm_80
.address_size 64

.visible .entry vadd(
	.param .u64 vadd_param_0,
	.param .u64 vadd_param_1,
	.param .u32 vadd_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<6>;
	.reg .f32 	%f<3>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [vadd_param_0];
	ld.param.u64 	%rd2, [vadd_param_1];
	ld.param.u32 	%r2, [vadd_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.s32 	%rd4, %r1, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f1, [%rd5];
	cvta.to.global.u64 	%rd6, %rd2;
	add.s64 	%rd7, %rd6, %rd4;
	st.global.f32 	[%rd7], %f1;
$L__BB0_2:
	ret;
}
"#;

/// The syntax diagnostics among `diags` (performance findings are tested in `features`).
fn syntax(diags: Vec<Value>) -> Vec<Value> {
    diags.into_iter().filter(|d| d["code"] == "syntax").collect()
}

#[tokio::test]
async fn initialize_negotiates_utf16_by_default() {
    let (ts, init) = TestServer::start_with(json!({}), json!({})).await;
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(init["serverInfo"]["name"], "warpsight");
    ts.shutdown().await;
}

#[tokio::test]
async fn initialize_prefers_utf8_when_offered() {
    let caps = json!({ "general": { "positionEncodings": ["utf-16", "utf-8"] } });
    let (ts, init) = TestServer::start_with(caps, json!({})).await;
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    ts.shutdown().await;
}

#[tokio::test]
async fn shutdown_with_null_params_then_exit_ends_the_server() {
    // The harness's `shutdown` sends `"params": null` as LSP4J and eglot do.
    TestServer::start().await.shutdown().await;
}

#[tokio::test]
async fn clean_ptx_publishes_no_diagnostics_with_its_version() {
    let mut ts = TestServer::start().await;
    ts.open("file:///w/vadd.ptx", "ptx", VADD).await;
    let diags = syntax(ts.diagnostics("file:///w/vadd.ptx", 1).await);
    assert_eq!(diags, Vec::<Value>::new());
    ts.shutdown().await;
}

#[tokio::test]
async fn garbage_line_gets_a_diagnostic_on_that_line() {
    let mut ts = TestServer::start().await;
    let text = VADD.replace("\tmov.u32 \t%r4, %ntid.x;", "\tmov.u32 \t%r4, %ntid.x;\n\t#$%^ this is not ptx");
    ts.open("file:///w/bad.ptx", "ptx", &text).await;
    let diags = syntax(ts.diagnostics("file:///w/bad.ptx", 1).await);
    let bad_line = text.lines().position(|l| l.contains("#$%^")).unwrap() as i64;
    assert!(!diags.is_empty(), "expected a diagnostic");
    assert!(diags.iter().all(|d| d["range"]["start"]["line"] == bad_line), "{diags:?}");
    ts.shutdown().await;
}

/// A ranged `didChange` content change (zero-based line and UTF-16 columns; ASCII text).
fn ranged(line: u32, start: u32, end: u32, text: &str) -> Value {
    json!({ "range": { "start": { "line": line, "character": start }, "end": { "line": line, "character": end } }, "text": text })
}

/// The kernel names of the server's current analysis of `uri`.
async fn kernel_names(ts: &mut TestServer, uri: &str) -> Vec<String> {
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri })).await;
    report["kernels"].as_array().map(|ks| ks.iter().filter_map(|k| k["name"].as_str().map(str::to_string)).collect()).unwrap_or_default()
}

#[tokio::test]
async fn incremental_edits_are_applied_in_order_and_versions_published() {
    let mut ts = TestServer::start().await;
    let uri = "file:///w/edit.ptx";
    ts.open(uri, "ptx", VADD).await;
    assert!(syntax(ts.diagnostics(uri, 1).await).is_empty());
    let change = |version: i64, changes: Vec<Value>| json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": changes });
    // Each edit is written against the text the previous one left, so the final text
    // (seen through the kernel's name in the report) says whether every edit was applied,
    // once, in order: the kernel `vadd` becomes `vadd_a`, then `vadd_ab`, then (two changes
    // in one notification, applied in array order: delete `_ab`, insert `_c` where it was)
    // `vadd_c`. Dropped, repeated or reordered edits give another name or a syntax error.
    let entry = VADD.lines().position(|l| l.contains(".entry vadd(")).unwrap() as u32;
    let name_end = (VADD.lines().nth(entry as usize).unwrap().find("vadd(").unwrap() + 4) as u32;
    ts.notify("textDocument/didChange", change(2, vec![ranged(entry, name_end, name_end, "_a")])).await;
    ts.notify("textDocument/didChange", change(3, vec![ranged(entry, name_end + 2, name_end + 2, "b")])).await;
    ts.notify("textDocument/didChange", change(4, vec![ranged(entry, name_end, name_end + 3, ""), ranged(entry, name_end, name_end, "_c")])).await;
    let diags = ts.diagnostics(uri, 4).await;
    assert!(syntax(diags.clone()).is_empty(), "version 4: {diags:?}");
    assert_eq!(kernel_names(&mut ts, uri).await, vec!["vadd_c".to_string()]);
    // Break a line, then fix it; each version's diagnostics describe its own text.
    let line = VADD.lines().position(|l| l.contains("ld.global.f32")).unwrap() as u32;
    ts.notify("textDocument/didChange", change(5, vec![ranged(line, 1, 200, "ld.global.f32 \t%f1, [%rd5")])).await;
    let broken = syntax(ts.diagnostics(uri, 5).await);
    assert!(!broken.is_empty(), "version 5 deletes `];` of line {line}, yet no syntax error was published");
    ts.notify("textDocument/didChange", change(6, vec![ranged(line, 1, 200, "ld.global.f32 \t%f1, [%rd5];")])).await;
    let fixed = syntax(ts.diagnostics(uri, 6).await);
    assert!(fixed.is_empty(), "version 6 restores the line: {fixed:?}");
    assert_eq!(kernel_names(&mut ts, uri).await, vec!["vadd_c".to_string()]);
    ts.shutdown().await;
}

#[tokio::test]
async fn hover_on_kernel_name() {
    let mut ts = TestServer::start().await;
    let uri = "file:///w/vadd.ptx";
    ts.open(uri, "ptx", VADD).await;
    ts.diagnostics(uri, 1).await;
    let line = VADD.lines().position(|l| l.contains(".entry vadd")).unwrap();
    let hover = ts
        .request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": 18 } }))
        .await;
    let value = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(value.contains("vadd"), "{hover}");
    ts.shutdown().await;
}

#[tokio::test]
async fn out_of_range_positions_and_unknown_documents_answer_null() {
    let mut ts = TestServer::start().await;
    let uri = "file:///w/vadd.ptx";
    ts.open(uri, "ptx", VADD).await;
    let far = ts
        .request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": { "line": 100000, "character": 100000 } }))
        .await;
    assert_eq!(far, Value::Null);
    let unknown = ts
        .request("textDocument/hover", json!({ "textDocument": { "uri": "file:///nope.ptx" }, "position": { "line": 0, "character": 0 } }))
        .await;
    assert_eq!(unknown, Value::Null);
    ts.shutdown().await;
}

#[tokio::test]
async fn malformed_json_and_unknown_methods_do_not_kill_the_server() {
    let mut ts = TestServer::start().await;
    let garbage = b"{this is not json";
    ts.send_raw(format!("Content-Length: {}\r\n\r\n", garbage.len()).as_bytes()).await;
    ts.send_raw(garbage).await;
    let parse_error = ts.wait_for(|m| m.get("error").is_some()).await;
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
    let res = ts.request_raw("warpsight/noSuchMethod", json!({})).await;
    assert_eq!(res["error"]["code"], -32601, "{res}");
    // Still serving.
    ts.open("file:///w/vadd.ptx", "ptx", VADD).await;
    assert!(syntax(ts.diagnostics("file:///w/vadd.ptx", 1).await).is_empty());
    ts.shutdown().await;
}
mod robustness;
mod security;
