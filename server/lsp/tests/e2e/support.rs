//! The one end-to-end harness: the real server on an in-memory transport.
//!
//! Modelled on ruff's `crates/ruff_server/tests/e2e/main.rs`: a builder-free `TestServer`
//! that initialises the server, typed request helpers with timeouts, a notification
//! mailbox, and a `shutdown` check that the server answers `shutdown` (with `params: null`,
//! as LSP4J and eglot send it) and then ends after `exit`.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream};
use tokio::task::JoinHandle;

/// A guard against a hung server, not a latency check (the tests that measure latency
/// assert it themselves): generous, because a debug build analysing the 2 MB generated
/// module on a loaded 2-core machine takes tens of seconds.
pub const TIMEOUT: Duration = Duration::from_secs(90);

pub struct TestServer {
    writer: DuplexStream,
    reader: BufReader<DuplexStream>,
    next_id: i64,
    /// Notifications (and server-to-client requests) received while waiting for something
    /// else, oldest first.
    pub inbox: VecDeque<Value>,
    server: Option<JoinHandle<lsp::SessionEnd>>,
}

impl TestServer {
    /// Starts the server and completes `initialize`/`initialized` with the given
    /// initialization options and client capabilities.
    pub async fn start_with(capabilities: Value, options: Value) -> (TestServer, Value) {
        Self::start_in(Value::Null, capabilities, options).await
    }

    /// [`TestServer::start_with`] in a workspace: `root_uri` is the `rootUri` sent.
    pub async fn start_in(root_uri: Value, capabilities: Value, options: Value) -> (TestServer, Value) {
        let (client_w, server_r) = tokio::io::duplex(1 << 20);
        let (server_w, client_r) = tokio::io::duplex(1 << 20);
        let server = tokio::spawn(lsp::serve(server_r, server_w));
        let mut ts = TestServer { writer: client_w, reader: BufReader::new(client_r), next_id: 1, inbox: VecDeque::new(), server: Some(server) };
        let init = ts
            .request("initialize", json!({ "processId": null, "rootUri": root_uri, "capabilities": capabilities, "initializationOptions": options }))
            .await;
        ts.notify("initialized", json!({})).await;
        (ts, init)
    }

    pub async fn start() -> TestServer {
        Self::start_with(json!({}), json!({ "debounceMs": 0 })).await.0
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.expect("write to server");
        self.writer.flush().await.expect("flush");
    }

    pub async fn send(&mut self, msg: Value) {
        let body = serde_json::to_vec(&msg).expect("serialise");
        self.send_raw(&lsp::framing::frame(&body)).await;
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params })).await;
    }

    /// Sends a request and waits for its response; returns the whole response object.
    pub async fn request_raw(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if !params.is_null() || method == "shutdown" {
            msg["params"] = params;
        }
        self.send(msg).await;
        self.wait_for(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none()).await
    }

    /// Sends a request and returns its `result`, failing the test on an error response.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let res = self.request_raw(method, params).await;
        assert!(res.get("error").is_none(), "{method} failed: {res}");
        res.get("result").cloned().unwrap_or(Value::Null)
    }

    /// Reads one message from the server (the server's own framing, shared with the
    /// transport: `lsp::framing`).
    pub async fn read_message(&mut self) -> Value {
        let body = lsp::framing::read_message(&mut self.reader).await.expect("read a frame").expect("server closed the connection");
        serde_json::from_slice(&body).expect("server sent invalid JSON")
    }

    /// Waits (with [`TIMEOUT`]) for the first message matching `pred`, keeping the others.
    /// Requests from the server (`client/registerCapability`, `window/workDoneProgress/
    /// create`, refreshes) are answered with a null result, as a real client does.
    pub async fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.inbox.iter().position(&pred) {
            return self.inbox.remove(i).expect("index is valid");
        }
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let msg = tokio::time::timeout_at(deadline, self.read_message()).await.expect("timed out waiting for the server");
            if msg.get("method").is_some() && msg.get("id").is_some() {
                let reply = json!({ "jsonrpc": "2.0", "id": msg["id"], "result": null });
                self.send(reply).await;
            }
            if pred(&msg) {
                return msg;
            }
            self.inbox.push_back(msg);
        }
    }

    /// Waits for `publishDiagnostics` for `uri` with the given document version.
    pub async fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let msg = self
            .wait_for(|m| {
                m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri && m["params"]["version"] == version
            })
            .await;
        msg["params"]["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    pub async fn open(&mut self, uri: &str, language_id: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": language_id, "version": 1, "text": text } }),
        )
        .await;
    }

    /// Closes the client's side without `shutdown` or `exit` (a client that died); returns
    /// how the server ended.
    pub async fn close_input(mut self) -> lsp::SessionEnd {
        let server = self.server.take().expect("server handle");
        drop(self);
        tokio::time::timeout(TIMEOUT, server).await.expect("server did not end after its input closed").expect("server task panicked")
    }

    /// `exit` without `shutdown`; returns how the server ended.
    pub async fn exit_without_shutdown(mut self) -> lsp::SessionEnd {
        self.notify("exit", Value::Null).await;
        let server = self.server.take().expect("server handle");
        tokio::time::timeout(TIMEOUT, server).await.expect("server did not exit after `exit`").expect("server task panicked")
    }

    /// `shutdown` (with `params: null`) must answer `result: null`, and `exit` must end
    /// the server, with exit code 0 (LSP 3.17, exit notification).
    pub async fn shutdown(mut self) {
        let res = self.request_raw("shutdown", Value::Null).await;
        assert_eq!(res.get("result"), Some(&Value::Null), "shutdown answer: {res}");
        assert!(res.get("error").is_none(), "shutdown answer: {res}");
        self.notify("exit", Value::Null).await;
        let server = self.server.take().expect("server handle");
        let end = tokio::time::timeout(TIMEOUT, server).await.expect("server did not exit after `exit`").expect("server task panicked");
        assert_eq!(end, lsp::SessionEnd::AfterShutdown);
        assert_eq!(end.exit_code(), 0);
    }
}

/// The project's nvcc (`.cuda/`, installed by scripts/test-all.sh), for the `.cu` tests;
/// `None` when it is not installed, which is an error when `WARPSIGHT_REQUIRE_CUDA` is set.
pub fn project_nvcc() -> Option<std::path::PathBuf> {
    let nvcc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cuda/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc");
    if nvcc.exists() {
        return Some(nvcc);
    }
    assert!(std::env::var_os("WARPSIGHT_REQUIRE_CUDA").is_none(), "WARPSIGHT_REQUIRE_CUDA is set but {} is missing", nvcc.display());
    None
}
