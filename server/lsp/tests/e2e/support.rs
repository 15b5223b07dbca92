//! The one end-to-end harness: the real server on an in-memory transport.
//!
//! Modelled on ruff's `tests/e2e/main.rs` (house-style §1.2): a builder-free `TestServer`
//! that initialises the server, typed request helpers with timeouts, a notification
//! mailbox, and a `shutdown` check that the server answers `shutdown` (with `params: null`,
//! as LSP4J and eglot send it) and then ends after `exit`.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::task::JoinHandle;

pub const TIMEOUT: Duration = Duration::from_secs(20);

pub struct TestServer {
    writer: DuplexStream,
    reader: BufReader<DuplexStream>,
    next_id: i64,
    /// Notifications (and server-to-client requests) received while waiting for something
    /// else, oldest first.
    pub inbox: VecDeque<Value>,
    server: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts the server and completes `initialize`/`initialized` with the given
    /// initialization options and client capabilities.
    pub async fn start_with(capabilities: Value, options: Value) -> (TestServer, Value) {
        let (client_w, server_r) = tokio::io::duplex(1 << 20);
        let (server_w, client_r) = tokio::io::duplex(1 << 20);
        let server = tokio::spawn(lsp::serve(server_r, server_w));
        let mut ts = TestServer { writer: client_w, reader: BufReader::new(client_r), next_id: 1, inbox: VecDeque::new(), server: Some(server) };
        let init = ts
            .request("initialize", json!({ "processId": null, "rootUri": null, "capabilities": capabilities, "initializationOptions": options }))
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
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        self.send_raw(header.as_bytes()).await;
        self.send_raw(&body).await;
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

    /// Reads one message from the server.
    pub async fn read_message(&mut self) -> Value {
        let mut len = None;
        loop {
            let mut line = String::new();
            let n = self.reader.read_line(&mut line).await.expect("read header");
            assert!(n > 0, "server closed the connection");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                len = Some(v.parse::<usize>().expect("length"));
            }
        }
        let mut body = vec![0; len.expect("Content-Length header")];
        self.reader.read_exact(&mut body).await.expect("read body");
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

    /// `shutdown` (with `params: null`) must answer `result: null`, and `exit` must end
    /// the server.
    pub async fn shutdown(mut self) {
        let res = self.request_raw("shutdown", Value::Null).await;
        assert_eq!(res.get("result"), Some(&Value::Null), "shutdown answer: {res}");
        assert!(res.get("error").is_none(), "shutdown answer: {res}");
        self.notify("exit", Value::Null).await;
        let server = self.server.take().expect("server handle");
        tokio::time::timeout(TIMEOUT, server).await.expect("server did not exit after `exit`").expect("server task panicked");
    }
}
