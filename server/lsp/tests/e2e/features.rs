//! One end-to-end test per language feature, on real fixture PTX and CUDA.

use serde_json::{Value, json};

use crate::support::TestServer;

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture_ptx(name: &str) -> String {
    std::fs::read_to_string(root().join(format!("tests/fixtures/ptx/sm_80/{name}.ptx"))).expect("fixture")
}

fn line_of(text: &str, needle: &str) -> u32 {
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("`{needle}` not found")) as u32
}

async fn start(options: Value) -> TestServer {
    let mut options = options;
    options["debounceMs"] = json!(0);
    TestServer::start_with(json!({}), options).await.0
}

#[tokio::test]
async fn hover_shows_the_performance_card() {
    let mut ts = start(json!({ "gpus": ["a100", "tesla-k20"], "launch": { "grid": "64x64", "block": "16x16" }, "args": { "param_3": 1024 } })).await;
    let text = fixture_ptx("matmul_tiled");
    let uri = "file:///w/matmul_tiled.ptx";
    ts.open(uri, "ptx", &text).await;
    ts.diagnostics(uri, 1).await;
    let line = line_of(&text, ".entry");
    let col = text.lines().nth(line as usize).unwrap().find("_Z12").unwrap() + 2;
    let hover = ts.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": col } })).await;
    let card = hover["contents"]["value"].as_str().unwrap_or_default().to_string();
    for needle in ["occupancy", "a100-sxm4-80gb", "tesla-k20", "mwp_cwp", "roofline", "scheduling", "launch: grid 64×64"] {
        assert!(card.contains(needle), "card lacks `{needle}`:\n{card}");
    }
    // Two GPUs: one compact table, a column per GPU, power included (the three largest
    // contributions in words are in the one-GPU card: analysis::hover's tests).
    let header = card.lines().find(|l| l.starts_with("| |")).unwrap_or_else(|| panic!("no GPU table:\n{card}"));
    assert!(header.contains("(a100-sxm4-80gb)") && header.contains("(tesla-k20)"), "{header}");
    let power = card.lines().find(|l| l.starts_with("| power |")).unwrap_or_else(|| panic!("no power row:\n{card}"));
    assert_eq!(power.matches(" W (").count(), 2, "a power for each GPU: {power}");
    // An instruction hover: class and, for a memory instruction, its access class.
    let ld = line_of(&text, "ld.global");
    let hover = ts.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": { "line": ld, "character": 3 } })).await;
    let v = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(v.contains("load_global") && v.contains("coalesced") && v.contains("sector"), "{v}");
    ts.shutdown().await;
}

#[tokio::test]
async fn inlay_hints_and_code_lens() {
    let mut ts = start(json!({ "launch": { "grid": "64x64", "block": "16x16" }, "args": { "param_3": 1024 } })).await;
    let text = fixture_ptx("matmul_tiled");
    let uri = "file:///w/mt.ptx";
    ts.open(uri, "ptx", &text).await;
    ts.diagnostics(uri, 1).await;
    let n = text.lines().count();
    let hints = ts.request("textDocument/inlayHint", json!({ "textDocument": { "uri": uri }, "range": { "start": { "line": 0, "character": 0 }, "end": { "line": n, "character": 0 } } })).await;
    let labels: Vec<String> = hints.as_array().unwrap().iter().map(|h| h["label"].as_str().unwrap_or_default().to_string()).collect();
    assert!(labels.iter().any(|l| l.contains("occ 100%") && l.contains("-bound")), "{labels:?}");
    assert!(labels.iter().any(|l| l.starts_with("×64")), "loop trip count hint: {labels:?}");
    assert!(labels.iter().any(|l| l.contains("coalesced")), "memory hint: {labels:?}");
    let lenses = ts.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri } })).await;
    let lens = &lenses[0];
    let title = lens["command"]["title"].as_str().unwrap_or_default();
    assert!(title.starts_with('≈') && title.contains("on a100-sxm4-80gb"), "{title}");
    assert_eq!(lens["command"]["command"], "warpsight.openReport");
    // The lens command answers with the report.
    let report = ts.request("workspace/executeCommand", json!({ "command": "warpsight.openReport", "arguments": lens["command"]["arguments"] })).await;
    assert_eq!(report["kernels"].as_array().map(Vec::len), Some(1));
    ts.shutdown().await;
}

#[tokio::test]
async fn findings_are_diagnostics_with_stable_codes_and_configurable_severity() {
    let mut ts = start(json!({ "launch": { "grid": "32x32", "block": "32x8" }, "args": { "param_2": 1024, "param_3": 1024 } })).await;
    let text = fixture_ptx("transpose_naive");
    let uri = "file:///w/t.ptx";
    ts.open(uri, "ptx", &text).await;
    let diags = ts.diagnostics(uri, 1).await;
    let conflict = diags.iter().find(|d| d["code"] == "shared-bank-conflict").unwrap_or_else(|| panic!("{diags:?}"));
    assert!(conflict["message"].as_str().unwrap().contains("32-way"), "{conflict}");
    // Turn the code off: it disappears.
    ts.notify("workspace/didChangeConfiguration", json!({ "settings": { "warpsight": { "severities": { "shared-bank-conflict": "off" } } } })).await;
    let diags = ts.diagnostics(uri, 1).await;
    assert!(diags.iter().all(|d| d["code"] != "shared-bank-conflict"), "{diags:?}");
    ts.shutdown().await;
}

#[tokio::test]
async fn ptx_code_action_inserts_a_launch_annotation() {
    // No launch known: the default (1024 blocks of 256 threads, docs/diagnostics.md) is used, and
    // grid_stride's `memory-bound` finding (a loop over its array: memory-bound at any
    // launch) offers to state it in an annotation. Before, the test used vadd, on which
    // nothing fired, and returned early: removing the quick fix passed.
    let mut ts = start(json!({})).await;
    let text = fixture_ptx("grid_stride");
    let uri = "file:///w/gs.ptx";
    ts.open(uri, "ptx", &text).await;
    let diags = ts.diagnostics(uri, 1).await;
    let d = diags.iter().find(|d| d["code"] == "memory-bound").unwrap_or_else(|| panic!("no memory-bound diagnostic: {diags:?}")).clone();
    let actions = ts.request("textDocument/codeAction", json!({ "textDocument": { "uri": uri }, "range": d["range"], "context": { "diagnostics": [d] } })).await;
    let actions = actions.as_array().cloned().unwrap_or_default();
    let action = actions
        .iter()
        .find(|a| a["title"].as_str().is_some_and(|t| t.contains("annotation")))
        .unwrap_or_else(|| panic!("no annotation quick fix among {actions:?}"));
    assert_eq!(action["kind"], "quickfix", "{action}");
    let doc_edit = &action["edit"]["documentChanges"][0];
    assert_eq!(doc_edit["textDocument"]["version"], 1, "versioned edit: {action}");
    assert_eq!(doc_edit["textDocument"]["uri"], uri, "{action}");
    let edits = doc_edit["edits"].as_array().cloned().unwrap_or_default();
    assert_eq!(edits.len(), 1, "{action}");
    let edit = &edits[0];
    assert_eq!(edit["newText"], "// warpsight: grid=1024 block=256\n", "{action}");
    // An insertion at the start of the kernel's `.entry` line.
    let entry = line_of(&text, ".entry");
    assert_eq!(edit["range"]["start"], json!({ "line": entry, "character": 0 }), "{action}");
    assert_eq!(edit["range"]["end"], edit["range"]["start"], "{action}");
    // Applied as the client would, the annotation becomes the kernel's launch, and the
    // fix is no longer offered.
    ts.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "range": edit["range"], "text": edit["newText"] }] })).await;
    let diags = ts.diagnostics(uri, 2).await;
    assert!(diags.iter().all(|d| d["code"] != "syntax"), "{diags:?}");
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri })).await;
    let launch = &report["kernels"][0]["launch"];
    assert_eq!((&launch["source"], &launch["grid"], &launch["block"]), (&json!("annotation"), &json!([1024, 1, 1]), &json!([256, 1, 1])), "{launch}");
    let d = diags.iter().find(|d| d["code"] == "memory-bound").unwrap_or_else(|| panic!("{diags:?}")).clone();
    let actions = ts.request("textDocument/codeAction", json!({ "textDocument": { "uri": uri }, "range": d["range"], "context": { "diagnostics": [d] } })).await;
    assert_eq!(actions.as_array().map(Vec::len), Some(0), "the launch is known now: {actions}");
    ts.shutdown().await;
}

#[tokio::test]
async fn custom_requests_report_what_if_and_compare() {
    let mut ts = start(json!({})).await;
    let text = fixture_ptx("vadd");
    let uri = "file:///w/vadd.ptx";
    ts.open(uri, "ptx", &text).await;
    ts.diagnostics(uri, 1).await;
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri, "kernel": "_Z4vaddPKfS0_Pfi" })).await;
    assert_eq!(report["kernels"][0]["launch"]["source"], "default");
    let gpu = report["kernels"][0]["gpus"].as_object().unwrap().keys().next().unwrap().clone();
    assert!(report["kernels"][0]["gpus"][&gpu]["headline"]["time_us"].as_f64().unwrap() > 0.0);

    let small = ts.request("warpsight/whatIf", json!({ "uri": uri, "grid": 16, "block": 64, "gpu": "tesla-k20" })).await;
    let k = &small["kernels"][0];
    assert_eq!(k["launch"]["block"], json!([64, 1, 1]));
    assert_eq!(k["launch"]["source"], "setting");
    assert!(k["gpus"]["tesla-k20"].is_object(), "{k}");

    let cmp = ts.request("warpsight/compareGpus", json!({ "uri": uri, "gpus": ["h100-sxm", "rtx-4090", "tesla-k20", "no-such-gpu"] })).await;
    let rows = cmp["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{cmp}");
    assert!(rows.iter().all(|r| r["time_us"].as_f64().is_some_and(|t| t > 0.0)));
    assert_eq!(cmp["unknown_gpus"][0]["id"], "no-such-gpu");
    let bad = ts.request_raw("warpsight/compareGpus", json!({ "uri": uri })).await;
    assert_eq!(bad["error"]["code"], -32602);
    ts.shutdown().await;
}

/// `whatIf` changes only what it is given: the launch is one setting, and its parts the
/// request leaves out keep the document's; the report says what it was computed from.
#[tokio::test]
async fn what_if_keeps_the_launch_parts_it_is_not_given() {
    let mut ts = start(json!({ "warpsight": { "launch": { "grid": 40, "dynamicSmem": 128 }, "gpus": ["tesla-v100"] } })).await;
    let text = fixture_ptx("vadd");
    let uri = "file:///w/vadd.ptx";
    ts.open(uri, "ptx", &text).await;
    ts.diagnostics(uri, 1).await;
    let r = ts.request("warpsight/whatIf", json!({ "uri": uri, "block": "64" })).await;
    assert_eq!(r["source"], "ptx", "{r}");
    let launch = &r["kernels"][0]["launch"];
    assert_eq!((&launch["grid"], &launch["block"], &launch["dynamic_smem"]), (&json!([40, 1, 1]), &json!([64, 1, 1]), &json!(128)), "{launch}");
    assert!(r["kernels"][0]["gpus"]["tesla-v100-sxm2-16gb"].is_object(), "the document's GPUs: {r}");
    // A part given as `null` is unset (the default grid from the problem size).
    let r = ts.request("warpsight/whatIf", json!({ "uri": uri, "grid": null })).await;
    assert_ne!(r["kernels"][0]["launch"]["grid"], json!([40, 1, 1]), "{r}");
    assert_eq!(r["kernels"][0]["launch"]["dynamic_smem"], json!(128));
    // A value out of range is refused, naming it.
    let bad = ts.request_raw("warpsight/whatIf", json!({ "uri": uri, "args": { "n": 1.5 } })).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(bad["error"]["message"].as_str().is_some_and(|m| m.contains("`args.n`: 1.5")), "{bad}");
    ts.shutdown().await;
}

/// `.cu` end to end through the real nvcc, when the project's toolchain is installed.
#[tokio::test]
async fn cuda_source_gets_hints_on_its_own_lines() {
    let Some(nvcc) = crate::support::project_nvcc() else { return };
    let src_path = root().join("tests/fixtures/cu/matmul_naive.cu");
    let text = std::fs::read_to_string(&src_path).unwrap();
    let dir = tempfile::Builder::new().prefix("warpsight-e2e-").tempdir().unwrap();
    let path = dir.path().join("matmul_naive.cu");
    std::fs::write(&path, &text).unwrap();
    let uri = format!("file://{}", path.display());
    let mut ts = start(json!({ "nvcc": nvcc.to_string_lossy() })).await;
    ts.open(&uri, "cuda-cpp", &text).await;
    let diags = ts.diagnostics(&uri, 1).await;
    let load_line = line_of(&text, "Pvalue += Md");
    let unc = diags.iter().find(|d| d["code"] == "uncoalesced-global-access").unwrap_or_else(|| panic!("{diags:?}"));
    assert_eq!(unc["range"]["start"]["line"], load_line);
    // Kernel-wide findings sit on the definition line, on its `__global__` only, so that a
    // hover on the kernel's name is the card alone.
    let kline = line_of(&text, "__global__ void matmul_naive");
    let col = text.lines().nth(kline as usize).unwrap().find("__global__").unwrap();
    let wide: Vec<_> = diags.iter().filter(|d| d["range"]["start"]["line"] == kline).collect();
    assert!(!wide.is_empty(), "no kernel-wide finding on the definition line: {diags:?}");
    for d in wide {
        assert_eq!((d["range"]["start"]["character"].as_u64(), d["range"]["end"]["character"].as_u64()), (Some(col as u64), Some(col as u64 + 10)), "{d}");
    }
    // The kernel card on the `__global__` line, with the annotation's launch.
    let hover = ts.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": { "line": kline, "character": 20 } })).await;
    let card = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(card.contains("annotation") && card.contains("occupancy"), "{card}");
    // A quick fix for the uncoalesced access, as a versioned edit of this document.
    let actions = ts.request("textDocument/codeAction", json!({ "textDocument": { "uri": uri }, "range": unc["range"], "context": { "diagnostics": [unc] } })).await;
    assert!(!actions.as_array().unwrap().is_empty(), "{actions}");
    ts.shutdown().await;
}

#[tokio::test]
async fn while_a_cu_compile_is_pending_the_untouched_kernels_keep_their_hints_marked() {
    let Some(nvcc) = crate::support::project_nvcc() else { return };
    let text = "__global__ void scale(float* p, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) p[i] *= 2.0f;\n}\n\n__global__ void shift(float* p, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) p[i] += 1.0f;\n}\n";
    let dir = tempfile::Builder::new().prefix("warpsight-e2e-pending-").tempdir().unwrap();
    let path = dir.path().join("two.cu");
    std::fs::write(&path, text).unwrap();
    let uri = format!("file://{}", path.display());
    // A long debounce keeps the new version's compile pending while the hints are asked.
    let mut ts = TestServer::start_with(json!({}), json!({ "nvcc": nvcc.to_string_lossy(), "debounceMs": 4000 })).await.0;
    ts.open(&uri, "cuda-cpp", text).await;
    ts.diagnostics(&uri, 1).await;
    let hints = |ts_hints: &Value| -> Vec<(u64, String)> {
        ts_hints.as_array().map(|a| a.iter().map(|h| (h["position"]["line"].as_u64().unwrap_or(0), h["label"].as_str().unwrap_or_default().to_string())).collect()).unwrap_or_default()
    };
    let all = json!({ "textDocument": { "uri": uri }, "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 20, "character": 0 } } });
    let before = hints(&ts.request("textDocument/inlayHint", all.clone()).await);
    let (scale, shift) = (line_of(text, "void scale") as u64, line_of(text, "void shift") as u64);
    assert!(before.iter().any(|(l, s)| *l == scale && s.contains("occ")) && before.iter().any(|(l, s)| *l == shift && s.contains("occ")), "{before:?}");
    assert!(!before.iter().any(|(_, s)| s.ends_with(" · pending")), "{before:?}");
    // A line added on top and `scale` edited: `shift` is untouched, one line lower.
    let edited = format!("// edited\n{}", text.replacen("*= 2.0f", "*= 3.0f", 1));
    ts.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": edited }] })).await;
    let during = hints(&ts.request("textDocument/inlayHint", all.clone()).await);
    let kernel_hints: Vec<&(u64, String)> = during.iter().filter(|(_, s)| s.contains("occ")).collect();
    assert_eq!(kernel_hints.len(), 1, "only the untouched kernel keeps its hint: {during:?}");
    assert_eq!(kernel_hints[0].0, shift + 1, "moved with its kernel: {during:?}");
    assert!(kernel_hints[0].1.ends_with(" · pending"), "{during:?}");
    assert!(!during.iter().any(|(l, _)| *l <= scale + 4), "nothing from the edited kernel: {during:?}");
    // Once compiled, both again, unmarked.
    ts.diagnostics(&uri, 2).await;
    let after = hints(&ts.request("textDocument/inlayHint", all).await);
    assert!(after.iter().any(|(l, s)| *l == scale + 1 && s.contains("occ") && !s.ends_with(" · pending")), "{after:?}");
    assert!(after.iter().any(|(l, s)| *l == shift + 1 && s.contains("occ") && !s.ends_with(" · pending")), "{after:?}");
    ts.shutdown().await;
}

#[tokio::test]
async fn ptx_code_action_states_an_unknown_trip_count() {
    // spmv_csr_scalar's row loop ends on row_ptr's values: `unknown-trip-count`, whose
    // quick fix inserts `// warpsight: trips=16` above the loop's header; edited to the
    // real count, the comment gives the loop (nvcc's unrolled loop and its remainder) its
    // count, and the finding goes.
    let mut ts = start(json!({ "launch": { "grid": 1024, "block": 256 }, "args": { "param_0": 262144 } })).await;
    let text = fixture_ptx("spmv_csr");
    let uri = "file:///w/spmv.ptx";
    ts.open(uri, "ptx", &text).await;
    let diags = ts.diagnostics(uri, 1).await;
    let unknown_before = diags.iter().filter(|x| x["code"] == "unknown-trip-count").count();
    assert_eq!(unknown_before, 2, "the scalar and the vector kernel's row loops: {diags:?}");
    let d = diags.iter().find(|d| d["code"] == "unknown-trip-count").unwrap_or_else(|| panic!("no unknown-trip-count diagnostic: {diags:?}")).clone();
    let actions = ts.request("textDocument/codeAction", json!({ "textDocument": { "uri": uri }, "range": d["range"], "context": { "diagnostics": [d] } })).await;
    let actions = actions.as_array().cloned().unwrap_or_default();
    let action = actions
        .iter()
        .find(|a| a["title"].as_str().is_some_and(|t| t.contains("trips=N")))
        .unwrap_or_else(|| panic!("no trip-count quick fix among {actions:?}"));
    let edits = action["edit"]["documentChanges"][0]["edits"].as_array().cloned().unwrap_or_default();
    assert_eq!(edits.len(), 1, "{action}");
    let edit = &edits[0];
    assert_eq!(edit["newText"].as_str().map(str::trim), Some("// warpsight: trips=16"), "{action}");
    assert_eq!(edit["range"]["end"], edit["range"]["start"], "an insertion: {action}");
    let line = edit["range"]["start"]["line"].as_u64().expect("line") as usize;
    // Applied, and edited to 40 iterations per row, as a user would.
    let new_text = edit["newText"].as_str().expect("text").replace("trips=16", "trips=40");
    ts.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "range": edit["range"], "text": new_text }] })).await;
    let diags = ts.diagnostics(uri, 2).await;
    assert!(diags.iter().all(|d| d["code"] != "syntax"), "{diags:?}");
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri, "kernel": "_Z15spmv_csr_scalariPKiS0_PKfS2_Pf" })).await;
    let loops = report["kernels"][0]["loops"].as_array().cloned().unwrap_or_default();
    let stated: Vec<f64> = loops.iter().filter(|l| l["stated_at"] == line as u64 + 1).filter_map(|l| l["trip_count"].as_f64()).collect();
    // 40 = 10 passes of the loop unrolled by 4, and none of the remainder.
    let mut sorted = stated.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(sorted, [0.0, 10.0], "{loops:#?}");
    let before = text.lines().nth(line).unwrap_or("");
    assert!(!before.trim().is_empty(), "the comment went above a line of the loop: {before:?}");
    // One finding fewer: the stated loop's (the vector kernel's row loop keeps its own).
    assert_eq!(diags.iter().filter(|x| x["code"] == "unknown-trip-count").count(), unknown_before - 1, "{diags:?}");
    ts.shutdown().await;
}

/// `.cu` end to end: the quick fix of `unknown-trip-count` inserts the comment above the
/// loop's `for`; edited and recompiled, the comment gives that loop its count, and the
/// kernel after it (untouched, one line lower now) keeps its own finding on its own line.
#[tokio::test]
async fn cuda_trip_count_quick_fix_states_the_count_of_its_loop_only() {
    let Some(nvcc) = crate::support::project_nvcc() else { return };
    let text = "__global__ void rows(const int *ptr, const float *v, float *y) {\n    int r = blockIdx.x * blockDim.x + threadIdx.x;\n    float s = 0.0f;\n    for (int k = ptr[r]; k < ptr[r + 1]; ++k)\n        s += v[k];\n    y[r] = s;\n}\n\n__global__ void cols(const int *ptr, const float *v, float *y) {\n    int r = blockIdx.x * blockDim.x + threadIdx.x;\n    float s = 0.0f;\n    for (int k = ptr[r]; k < ptr[r + 1]; ++k)\n        s += 2.0f * v[k];\n    y[r] = s;\n}\nint main() { rows<<<1024, 256>>>(0, 0, 0); cols<<<1024, 256>>>(0, 0, 0); }\n";
    let dir = tempfile::Builder::new().prefix("warpsight-e2e-trips-").tempdir().unwrap();
    let path = dir.path().join("rows.cu");
    std::fs::write(&path, text).unwrap();
    let uri = format!("file://{}", path.display());
    let mut ts = start(json!({ "nvcc": nvcc.to_string_lossy() })).await;
    ts.open(&uri, "cuda-cpp", text).await;
    let diags = ts.diagnostics(&uri, 1).await;
    let unknown = |diags: &[Value]| -> Vec<u64> {
        let mut l: Vec<u64> = diags.iter().filter(|d| d["code"] == "unknown-trip-count").filter_map(|d| d["range"]["start"]["line"].as_u64()).collect();
        l.sort_unstable();
        l
    };
    assert_eq!(unknown(&diags), [3, 11], "the two row loops: {diags:?}");
    let d = diags.iter().find(|d| d["code"] == "unknown-trip-count" && d["range"]["start"]["line"] == 3).cloned().expect("first");
    let actions = ts.request("textDocument/codeAction", json!({ "textDocument": { "uri": uri }, "range": d["range"], "context": { "diagnostics": [d] } })).await;
    let action = actions.as_array().into_iter().flatten().find(|a| a["title"].as_str().is_some_and(|t| t.contains("trips=N"))).cloned().unwrap_or_else(|| panic!("{actions}"));
    let edit = action["edit"]["documentChanges"][0]["edits"][0].clone();
    assert_eq!(edit["newText"], "    // warpsight: trips=16\n", "{action}");
    assert_eq!(edit["range"]["start"], json!({ "line": 3, "character": 0 }), "{action}");
    let new_text = edit["newText"].as_str().expect("text").replace("16", "40");
    ts.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "range": edit["range"], "text": new_text }] })).await;
    let diags = ts.diagnostics(&uri, 2).await;
    assert_eq!(unknown(&diags), [12], "only `cols`' loop, one line lower: {diags:?}");
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri })).await;
    let kernels = report["kernels"].as_array().cloned().unwrap_or_default();
    let loops_of = |name: &str| kernels.iter().find(|k| k["name"].as_str().is_some_and(|n| n.contains(name))).map(|k| k["loops"].clone()).unwrap_or_default();
    let rows = loops_of("rows");
    let stated: f64 = rows.as_array().into_iter().flatten().filter(|l| l["stated_at"] == 4).filter_map(|l| l["trip_count"].as_f64()).sum();
    // 40 iterations: 10 passes of the loop nvcc unrolled by 4 and none of its remainder.
    assert_eq!(stated, 10.0, "{rows:#}");
    assert!(loops_of("cols").as_array().into_iter().flatten().all(|l| l["stated_at"].is_null()), "{:#}", loops_of("cols"));
    ts.shutdown().await;
}
