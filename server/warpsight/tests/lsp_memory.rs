//! The language server hands the memory of closed documents back to the system (issue 12):
//! after several large documents are opened, analysed and closed, the resident set of the
//! real `warpsight lsp` process (`/proc/<pid>/status`) falls back near where it started.
//!
//! Why the real binary: the memory in question is the allocator's (glibc keeps freed
//! memory unless `malloc_trim` returns it), which only a separate process measures
//! honestly. The documents are 1 MB each so a debug build analyses them in seconds; each
//! is under the old 8 MB threshold, below which closing never trimmed (twenty documents of
//! 5 MB kept 2.2 GB resident after all were closed; `docs/benchmarks.md`).
#![cfg(target_os = "linux")]

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "../../lsp/tests/common/ptxgen.rs"]
mod ptxgen;

/// A module of at least `min_bytes` from the `sm_80` fixtures with renamed names.
fn module(min_bytes: usize) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ptx/sm_80");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).expect("fixtures").flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "ptx")).collect();
    files.sort();
    let texts: Vec<String> = files.iter().map(|p| std::fs::read_to_string(p).expect("fixture")).collect();
    let mut out = String::from(".version 9.5\n.target sm_80\n.address_size 64\n\n");
    let mut copy = 0;
    while out.len() < min_bytes {
        out.push_str(&ptxgen::renamed_copy(&texts[copy % texts.len()], copy));
        copy += 1;
    }
    out
}

fn send(w: &mut ChildStdin, msg: &Value) {
    let body = serde_json::to_vec(msg).expect("json");
    w.write_all(&lsp::framing::frame(&body)).expect("write");
    w.flush().expect("flush");
}

fn reader(stdout: std::process::ChildStdout) -> Receiver<Value> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        while let Ok(Some(body)) = lsp::framing::read_message_blocking(&mut r) {
            if let Ok(msg) = serde_json::from_slice::<Value>(&body)
                && tx.send(msg).is_err()
            {
                return;
            }
        }
    });
    rx
}

fn wait_for(rx: &Receiver<Value>, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(m) if pred(&m) => return m,
            Ok(_) => {}
            Err(e) => panic!("waiting for {what}: {e}"),
        }
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()).and_then(|v| v.parse().ok()).expect("VmRSS")
}

#[test]
fn closing_large_documents_returns_their_memory() {
    const DOCS: usize = 4;
    let text = module(1 << 20);
    let mut child = Command::new(env!("CARGO_BIN_EXE_warpsight")).arg("lsp").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("start the server");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let rx = reader(child.stdout.take().expect("stdout"));
    send(&mut stdin, &json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "processId": null, "rootUri": null, "capabilities": {} } }));
    wait_for(&rx, "initialize", |m| m["id"] == 1);
    send(&mut stdin, &json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    let before = rss_kib(pid);

    let uri = |i: usize| format!("file:///memory-test/doc{i}.ptx");
    for i in 0..DOCS {
        send(&mut stdin, &json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": uri(i), "languageId": "ptx", "version": 1, "text": text } } }));
        wait_for(&rx, "the diagnostics", |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri(i).as_str() && m["params"]["version"] == 1);
    }
    let open = rss_kib(pid);
    let grown = open.saturating_sub(before);
    assert!(grown > 20 << 10, "the open documents should take memory: {before} KiB before, {open} KiB open");

    for i in 0..DOCS {
        send(&mut stdin, &json!({ "jsonrpc": "2.0", "method": "textDocument/didClose", "params": { "textDocument": { "uri": uri(i) } } }));
        wait_for(&rx, "the cleared diagnostics", |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri(i).as_str() && m["params"]["diagnostics"].as_array().is_some_and(Vec::is_empty));
    }
    // The trim runs shortly after the closes; allow it a few seconds.
    let bound = before + grown / 4;
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut closed = rss_kib(pid);
    while closed > bound && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        closed = rss_kib(pid);
    }
    send(&mut stdin, &json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null }));
    wait_for(&rx, "shutdown", |m| m["id"] == 2);
    send(&mut stdin, &json!({ "jsonrpc": "2.0", "method": "exit", "params": null }));
    let _ = child.wait();
    assert!(
        closed <= bound,
        "RSS {closed} KiB after closing {DOCS} documents of 1 MB: {before} KiB before opening, {open} KiB with them open (bound {bound} KiB)"
    );
}
