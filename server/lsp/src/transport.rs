//! A validating transport in front of tower-lsp-server.
//!
//! Why: tower-lsp-server reads the client through tokio-util's `FramedRead`, which ends the
//! stream after the first decode error, so a single malformed message (invalid JSON, a
//! JSON value that is not a JSON-RPC message, a bad header) silently shuts the whole server
//! down. LSP clients do send such bytes (crashing extensions, proxies, humans typing into a
//! terminal). Here every frame is read and checked *before* the framework sees it: a valid
//! message is passed through unchanged; an invalid one is answered with the JSON-RPC 2.0
//! error the specification prescribes (-32700 parse error, -32600 invalid request, with
//! `id: null` when no id can be read) and the server keeps serving.
//!
//! The server's own output and these error answers go to the client through one writer
//! task, whole frame by whole frame, so they never interleave mid-message.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Frames larger than this are refused (and skipped) instead of buffered: a bogus
/// `Content-Length` must not make the server allocate without bound. 1 GiB leaves room for
/// the 100 MB PTX files the server is specified to accept.
const MAX_FRAME_BYTES: usize = 1 << 30;

/// The outcome of reading one frame from the client.
enum Frame {
    /// A well-formed JSON-RPC message: forward these bytes (the body).
    Message(Vec<u8>),
    /// Answer with this error response and go on.
    Reject(Value),
    /// Garbage ended where a new header begins (given, as text, to read on from).
    Restart(String),
    /// The client closed its side.
    Eof,
}

fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

fn frame_bytes(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Checks that `body` is one JSON-RPC 2.0 request, notification or response.
fn validate(body: &[u8]) -> Result<(), Value> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => return Err(error_response(Value::Null, -32700, "Parse error: the message is not valid JSON")),
    };
    let Some(obj) = value.as_object() else {
        return Err(error_response(Value::Null, -32600, "Invalid Request: not a JSON-RPC object"));
    };
    let id = obj.get("id").cloned().unwrap_or(Value::Null);
    let id_ok = matches!(id, Value::Null | Value::Number(_) | Value::String(_));
    let is_request = obj.get("method").is_some_and(Value::is_string);
    let is_response = obj.contains_key("id") && (obj.contains_key("result") || obj.contains_key("error"));
    if obj.get("jsonrpc") != Some(&json!("2.0")) || !id_ok || !(is_request || is_response) {
        let id = if id_ok { id } else { Value::Null };
        return Err(error_response(id, -32600, "Invalid Request: not a JSON-RPC 2.0 message"));
    }
    // LSP 3.17 "$ Notifications and Requests": a request whose method starts with `$/`
    // must be answered with MethodNotFound. Every `$/` method this server knows is a
    // notification, and the framework would drop such a request unanswered.
    if obj.contains_key("id") && obj.get("method").and_then(Value::as_str).is_some_and(|m| m.starts_with("$/")) {
        return Err(error_response(id, -32601, "Method not found"));
    }
    if let Some(params) = obj.get("params")
        && !matches!(params, Value::Object(_) | Value::Array(_) | Value::Null) {
            return Err(error_response(id, -32600, "Invalid Request: params must be an object or array"));
        }
    Ok(())
}

/// Reads one frame; `first` is a header line already read (after a run of garbage).
async fn read_frame<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, mut first: Option<String>) -> std::io::Result<Frame> {
    let mut content_length: Option<usize> = None;
    let mut bad_header = false;
    // Bytes that belong to no valid header block (a body sent without its header, a
    // truncated frame): reported once, when the next blank line or header ends them.
    let mut garbage = false;
    let mut saw_header = false;
    loop {
        let owned = match first.take() {
            Some(line) => line,
            None => {
                let mut line = Vec::new();
                let n = reader.read_until(b'\n', &mut line).await?;
                if n == 0 {
                    return Ok(Frame::Eof);
                }
                String::from_utf8_lossy(&line).into_owned()
            }
        };
        let mut text: &str = owned.trim_end_matches(['\r', '\n']);
        // A header can follow garbage on the same line (a body without a trailing newline
        // followed by the next frame): resynchronise on it.
        if let Some(pos) = text.to_ascii_lowercase().find("content-length:") {
            if pos > 0 {
                garbage = true;
                text = &text[pos..];
            }
            if garbage {
                // A new header block starts: what came before it was not a frame. Report
                // it, then read this frame from its header.
                return Ok(Frame::Restart(text.to_string()));
            }
        }
        if text.is_empty() {
            if saw_header || garbage {
                break;
            }
            continue; // Stray blank lines between messages.
        }
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                saw_header = true;
                content_length = value.trim().parse().ok();
                if content_length.is_none() {
                    bad_header = true;
                }
            }
            // The only other header the base protocol defines (in any order).
            Some((name, _)) if name.trim().eq_ignore_ascii_case("content-type") => saw_header = true,
            _ => garbage = true,
        }
    }
    let Some(len) = content_length.filter(|_| !bad_header && !garbage) else {
        return Ok(Frame::Reject(error_response(Value::Null, -32700, "Parse error: missing or malformed Content-Length header")));
    };
    if len > MAX_FRAME_BYTES {
        // Skip the body without keeping it.
        let mut limited = reader.take(len as u64);
        tokio::io::copy(&mut limited, &mut tokio::io::sink()).await?;
        return Ok(Frame::Reject(error_response(Value::Null, -32600, "Invalid Request: message too large")));
    }
    let mut body = vec![0u8; len];
    match reader.read_exact(&mut body).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(Frame::Eof),
        Err(e) => return Err(e),
    }
    Ok(match validate(&body) {
        Ok(()) => Frame::Message(body),
        Err(err) => Frame::Reject(err),
    })
}

/// Reads one whole frame (headers and body) of the server's own output.
async fn read_server_frame<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Option<Vec<u8>> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length") {
                len = value.trim().parse::<usize>().ok();
            }
    }
    let mut body = vec![0u8; len?];
    reader.read_exact(&mut body).await.ok()?;
    Some(body)
}

/// Serves `service` over `input`/`output` through the validating layer. Returns when the
/// server has handled `exit` or the client closed its input, after the server's last
/// message has been written.
pub(crate) async fn serve_validated<I, O, S>(input: I, output: O, service: tower_lsp_server::LspService<S>, socket: tower_lsp_server::ClientSocket)
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite,
    S: tower_lsp_server::LanguageServer,
{
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let (err_tx, mut err_rx) = mpsc::unbounded_channel::<Vec<u8>>();

    // The reader is its own task so that it can be aborted when the server has exited
    // while the client keeps its end open (toolchain.md §2: a server must not linger).
    let reader = tokio::spawn(async move {
        let mut reader = BufReader::new(input);
        let mut pushback: Option<String> = None;
        loop {
            // After a run of garbage, the header line that ended it starts the next frame.
            match read_frame(&mut reader, pushback.take()).await {
                Ok(Frame::Message(body)) => {
                    if to_server.write_all(&frame_bytes(&body)).await.is_err() {
                        break; // The server has stopped (after `exit`).
                    }
                }
                Ok(Frame::Reject(err)) => {
                    tracing::warn!("rejected a malformed client message: {err}");
                    let body = serde_json::to_vec(&err).unwrap_or_default();
                    let _ = err_tx.send(frame_bytes(&body));
                }
                Ok(Frame::Restart(header)) => {
                    let err = error_response(Value::Null, -32700, "Parse error: bytes outside any frame (missing Content-Length)");
                    tracing::warn!("rejected bytes outside a frame");
                    let body = serde_json::to_vec(&err).unwrap_or_default();
                    let _ = err_tx.send(frame_bytes(&body));
                    // Read on from the header that ended the garbage.
                    pushback = Some(header);
                }
                Ok(Frame::Eof) | Err(_) => break,
            }
        }
        // Dropping `to_server` tells the server the client is gone.
    });
    let abort = reader.abort_handle();

    let server = async move {
        tower_lsp_server::Server::new(server_in, server_out, socket).serve(service).await;
        abort.abort();
    };

    let write_client = async move {
        let mut output = std::pin::pin!(output);
        let mut from_server = BufReader::new(from_server);
        let mut server_open = true;
        let mut errors_open = true;
        while server_open || errors_open {
            let frame = tokio::select! {
                f = read_server_frame(&mut from_server), if server_open => match f {
                    Some(body) => frame_bytes(&body),
                    None => { server_open = false; continue; }
                },
                e = err_rx.recv(), if errors_open => match e {
                    Some(bytes) => bytes,
                    None => { errors_open = false; continue; }
                },
            };
            if output.write_all(&frame).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    };

    tokio::join!(server, write_client);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_follows_json_rpc() {
        assert!(validate(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#).is_ok());
        assert!(validate(br#"{"jsonrpc":"2.0","method":"exit"}"#).is_ok());
        assert!(validate(br#"{"jsonrpc":"2.0","id":"a","result":null}"#).is_ok());
        assert_eq!(validate(b"{oops").unwrap_err()["error"]["code"], -32700);
        assert_eq!(validate(b"[1,2]").unwrap_err()["error"]["code"], -32600);
        assert_eq!(validate(br#"{"jsonrpc":"1.0","id":3,"method":"x"}"#).unwrap_err()["id"], 3);
        assert_eq!(validate(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#).unwrap_err()["id"], Value::Null);
        assert_eq!(validate(br#"{"jsonrpc":"2.0","id":4,"method":"x","params":5}"#).unwrap_err()["error"]["code"], -32600);
        let dollar = validate(br#"{"jsonrpc":"2.0","id":9,"method":"$/x"}"#).unwrap_err();
        assert_eq!((dollar["error"]["code"].clone(), dollar["id"].clone()), (serde_json::json!(-32601), serde_json::json!(9)));
        assert!(validate(br#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#).is_ok());
    }
}
