//! The language server on hostile workspaces (docs/security.md): opening a `.cu` file
//! whose name holds shell syntax runs nothing, and a workspace's `compile_commands.json`
//! is not read until the user trusts it (`trustCompileCommands`).

use serde_json::{Value, json};

use crate::support::TestServer;

/// A private scratch directory (an unpredictable name, removed when dropped).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("warpsight-e2e-sec-{name}-")).tempdir().expect("scratch dir")
}

/// `path` as a `file://` URI, percent-encoding what a URI may not hold as it is.
fn file_uri(path: &std::path::Path) -> String {
    let mut s = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

const KERNEL: &str = "__global__ void scale(float* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= 2.0f; }\n";

/// A `didOpen` of `…/inj/$(touch MARKER).cu` (and a backtick variant) compiles the text
/// and runs nothing. The file need not exist: the editor's text is what is compiled.
/// nvcc's shell would run in the server's working directory, where the marker is looked for.
#[tokio::test]
async fn opening_a_file_whose_name_holds_shell_syntax_runs_nothing() {
    let Some(nvcc) = crate::support::project_nvcc() else { return };
    let cwd = std::env::current_dir().expect("cwd");
    let dir_tmp = scratch("inj");
    let dir = dir_tmp.path();
    let mut ts = TestServer::start_with(json!({}), json!({ "debounceMs": 0, "nvcc": nvcc.to_string_lossy(), "compiler": "nvcc" })).await.0;
    for (i, name) in [format!("$(touch warpsight-e2e-marker-{}-a).cu", std::process::id()), format!("`touch warpsight-e2e-marker-{}-b`.cu", std::process::id())]
        .into_iter()
        .enumerate()
    {
        let uri = file_uri(&dir.join("inj").join(&name));
        ts.open(&uri, "cuda-cpp", KERNEL).await;
        let diags = ts.diagnostics(&uri, 1).await;
        let markers: Vec<String> = std::fs::read_dir(&cwd)
            .expect("read cwd")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("warpsight-e2e-marker-"))
            .collect();
        for m in &markers {
            let _ = std::fs::remove_file(cwd.join(m));
        }
        assert!(markers.is_empty(), "case {i}: opening {name} ran a command: {markers:?}");
        let errors: Vec<&Value> = diags.iter().filter(|d| d["code"] == "compiler-error").collect();
        assert!(errors.is_empty(), "case {i}: {errors:?}");
        let report = ts.request("warpsight/kernelReport", json!({ "uri": uri })).await;
        let names: Vec<&str> = report["kernels"].as_array().map(|k| k.iter().filter_map(|k| k["name"].as_str()).collect()).unwrap_or_default();
        assert_eq!(names, ["_Z5scalePfi"], "case {i}: {report}");
    }
    ts.shutdown().await;
}

/// The notes of the `.cu` document's analysis.
async fn notes_of(ts: &mut TestServer, uri: &str) -> Vec<String> {
    ts.diagnostics(uri, 1).await;
    let report = ts.request("warpsight/kernelReport", json!({ "uri": uri })).await;
    report["notes"].as_array().map(|n| n.iter().filter_map(|s| s.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

#[tokio::test]
async fn a_workspace_compile_database_is_read_only_when_trusted() {
    let dir_tmp = scratch("trust");
    let dir = dir_tmp.path();
    let cu = dir.join("k.cu");
    std::fs::write(&cu, KERNEL).expect("write k.cu");
    let db = json!([{ "directory": dir, "file": "k.cu", "arguments": ["nvcc", "-DFROM_DB=1", "-Wall", "-c", "k.cu"] }]);
    std::fs::write(dir.join("compile_commands.json"), db.to_string()).expect("write db");
    let uri = file_uri(&cu);

    // Default: not read; the notes say so and say how to trust it.
    let mut ts = TestServer::start_with(json!({}), json!({ "debounceMs": 0 })).await.0;
    ts.open(&uri, "cuda-cpp", KERNEL).await;
    let notes = notes_of(&mut ts, &uri).await;
    assert!(notes.iter().any(|n| n.contains("compile_commands.json") && n.contains("trustCompileCommands")), "{notes:?}");
    assert!(!notes.iter().any(|n| n.contains("-Wall")), "the untrusted database was read: {notes:?}");
    ts.shutdown().await;

    // Trusted: read (its clang-only `-Wall` is reported as ignored).
    let mut ts = TestServer::start_with(json!({}), json!({ "debounceMs": 0, "trustCompileCommands": true })).await.0;
    ts.open(&uri, "cuda-cpp", KERNEL).await;
    let notes = notes_of(&mut ts, &uri).await;
    assert!(notes.iter().any(|n| n.contains("-Wall")), "the trusted database was not read: {notes:?}");
    assert!(!notes.iter().any(|n| n.contains("trustCompileCommands")), "{notes:?}");
    ts.shutdown().await;
}
