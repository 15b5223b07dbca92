//! `warpsight lsp` as a real process (issue 12 items 8 and 9): the exit status after
//! `shutdown` + `exit` (0), after `exit` alone or the end of stdin (1, LSP 3.17 "exit
//! Notification"); an absurd `Content-Length` answered at once with the next request still
//! served; a stale `didChange` rejected with a line on stderr.

use std::io::{BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const PROMPT: Duration = Duration::from_secs(20);

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    stderr: std::thread::JoinHandle<String>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_warpsight"))
            .arg("lsp")
            .env("WARPSIGHT_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start warpsight lsp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Ok(Some(body)) = lsp::framing::read_message_blocking(&mut r) {
                let Ok(v) = serde_json::from_slice::<Value>(&body) else { break };
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut err = child.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let stdin = child.stdin.take();
        let mut s = Server { child, stdin, messages, stderr };
        s.send(json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": { "processId": null, "rootUri": null, "capabilities": {}, "initializationOptions": { "debounceMs": 0 } } }));
        let init = s.wait_for(|m| m["id"] == 0);
        assert!(init["result"]["capabilities"].is_object(), "{init}");
        s.send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
        s
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().expect("stdin open");
        w.write_all(bytes).expect("write");
        w.flush().expect("flush");
    }

    fn send(&mut self, msg: Value) {
        let body = serde_json::to_vec(&msg).expect("json");
        self.send_raw(&lsp::framing::frame(&body));
    }

    fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PROMPT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(m) if pred(&m) => return m,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => panic!("no such message within {PROMPT:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
            }
        }
    }

    /// Closes stdin (if still open) and waits for the exit status and stderr.
    fn finish(mut self) -> (i32, String) {
        self.stdin = None;
        let deadline = Instant::now() + PROMPT;
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("warpsight lsp did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        (status.code().unwrap_or(-1), self.stderr.join().expect("stderr"))
    }
}

#[test]
fn shutdown_then_exit_is_exit_code_0() {
    let mut s = Server::start();
    s.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "shutdown" }));
    s.wait_for(|m| m["id"] == 1);
    s.send(json!({ "jsonrpc": "2.0", "method": "exit" }));
    let (code, stderr) = s.finish();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn exit_without_shutdown_is_exit_code_1() {
    let mut s = Server::start();
    s.send(json!({ "jsonrpc": "2.0", "method": "exit" }));
    let (code, stderr) = s.finish();
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("without a `shutdown` request"), "{stderr}");
}

#[test]
fn end_of_input_without_shutdown_is_exit_code_1() {
    let (code, stderr) = Server::start().finish();
    assert_eq!(code, 1, "{stderr}");
}

#[test]
fn end_of_input_after_shutdown_is_exit_code_0() {
    let mut s = Server::start();
    s.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "shutdown" }));
    s.wait_for(|m| m["id"] == 1);
    let (code, stderr) = s.finish();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn an_absurd_content_length_is_answered_at_once_and_the_next_request_served() {
    let mut s = Server::start();
    s.send_raw(b"Content-Length: 18446744073709551615\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"shutdown\"}");
    let err = s.wait_for(|m| m.get("error").is_some());
    assert_eq!((err["error"]["code"].clone(), err["id"].clone()), (json!(-32600), Value::Null), "{err}");
    s.send(json!({ "jsonrpc": "2.0", "id": 2, "method": "warpsight/noSuchMethod", "params": {} }));
    let res = s.wait_for(|m| m["id"] == 2);
    assert_eq!(res["error"]["code"], -32601, "{res}");
    // The swallowed `shutdown` never ran: ending now is without one.
    let (code, _) = s.finish();
    assert_eq!(code, 1);
}

#[test]
fn a_stale_did_change_is_rejected_with_a_log_line() {
    let mut s = Server::start();
    let uri = "file:///w/a.ptx";
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n";
    s.send(json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": uri, "languageId": "ptx", "version": 5, "text": text } } }));
    s.send(json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": { "textDocument": { "uri": uri, "version": 4 }, "contentChanges": [{ "text": "garbage" }] } }));
    s.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "shutdown" }));
    s.wait_for(|m| m["id"] == 1);
    s.send(json!({ "jsonrpc": "2.0", "method": "exit" }));
    let (code, stderr) = s.finish();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("with version 4, not greater than the document's version 5: rejected, not applied"), "{stderr}");
}
