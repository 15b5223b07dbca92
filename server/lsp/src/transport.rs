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
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The largest message the server accepts, in bytes of JSON (the `Content-Length`). A
/// message above it is answered at once with an error and its body skipped without being
/// kept (docs/lsp-extensions.md § Limits). 256 MiB holds the 100 MB PTX documents the
/// server is specified to open (docs/benchmarks.md) with their JSON escapes, twice over.
pub const MAX_MESSAGE_BYTES: u64 = 256 << 20;

/// The longest header line read as one: the base protocol's headers are
/// `Content-Length: N` and `Content-Type: ...`, a few dozen bytes. A longer line is
/// garbage, read on in pieces of this size without being kept.
const MAX_HEADER_LINE: usize = 8 << 10;

/// What starts a header, matched without regard to case.
const HEADER: &[u8; 15] = b"content-length:";

/// The outcome of reading one frame from the client.
#[derive(Debug)]
enum Frame {
    /// A well-formed JSON-RPC message: forward these bytes (the body).
    Message(Vec<u8>),
    /// Answer with this error response and go on.
    Reject(Value),
    /// The client closed its side.
    Eof,
}

fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
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

/// Where `Content-Length:` starts in `line`, in any case.
fn find_header(line: &[u8]) -> Option<usize> {
    line.windows(HEADER.len()).position(|w| w.eq_ignore_ascii_case(HEADER))
}

/// Looks for a `Content-Length:` header inside what should be a JSON body, byte by byte
/// and across reads, to find where a body shorter than its `Content-Length` ends and the
/// next message begins. Valid JSON cannot hold a header: outside strings JSON has only
/// punctuation, numbers, `true`, `false` and `null`; inside a string, header text is
/// fine, but a string cannot hold a raw line break, which ends every header line. So a
/// header outside a string is a new message at once, and one inside a string is one when
/// the string then meets a raw line break before its closing quote.
#[derive(Debug, Default)]
struct HeaderScan {
    in_string: bool,
    escaped: bool,
    /// How many bytes of [`HEADER`] the last bytes outside strings matched.
    matched: usize,
    /// The current string's last bytes (at most [`STRING_TAIL`]) from earlier chunks: where
    /// a header inside it would be found when a line break shows it is not a string.
    tail: Vec<u8>,
}

/// How far back in an unterminated string a header line is looked for: a header line is
/// `Content-Length: ` and a number, a few dozen bytes.
const STRING_TAIL: usize = 256;

/// A header found by [`HeaderScan::feed`]: stop before index `end` of the chunk and give
/// back `back`, the header's bytes consumed so far (they end the body).
#[derive(Debug)]
struct Found {
    end: usize,
    back: Vec<u8>,
}

impl HeaderScan {
    /// Advances the match of [`HEADER`] by one byte; `true` when it completes.
    fn step(&mut self, b: u8) -> bool {
        let lower = b.to_ascii_lowercase();
        if lower == HEADER[self.matched] {
            self.matched += 1;
            if self.matched == HEADER.len() {
                self.matched = 0;
                return true;
            }
        } else {
            self.matched = usize::from(lower == HEADER[0]);
        }
        false
    }

    /// The last header in the current string, whose bytes end with `recent` (the string's
    /// bytes in this chunk up to a line break): from its `Content-Length:` on.
    fn header_in_string(&self, recent: &[u8]) -> Option<Vec<u8>> {
        let recent = &recent[recent.len().saturating_sub(STRING_TAIL)..];
        let mut region = self.tail[self.tail.len().saturating_sub(STRING_TAIL - recent.len())..].to_vec();
        region.extend_from_slice(recent);
        let pos = region.windows(HEADER.len()).rposition(|w| w.eq_ignore_ascii_case(HEADER))?;
        Some(region.split_off(pos))
    }

    /// Keeps the last [`STRING_TAIL`] bytes of the current string.
    fn remember(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(&bytes[bytes.len().saturating_sub(STRING_TAIL)..]);
        if self.tail.len() > STRING_TAIL {
            self.tail.drain(..self.tail.len() - STRING_TAIL);
        }
    }

    /// Feeds `chunk`; returns the header that ends the body, if one shows in it.
    fn feed(&mut self, chunk: &[u8]) -> Option<Found> {
        let mut i = 0;
        // Where the current string's bytes in this chunk begin.
        let mut string_from = 0;
        while i < chunk.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                // Most of a big message is one string (a document's text): skip to what
                // can end it.
                let Some(p) = chunk[i..].iter().position(|b| matches!(b, b'"' | b'\\' | b'\n' | b'\r')) else {
                    break; // The rest of the chunk is inside the string.
                };
                i += p;
                match chunk[i] {
                    b'\\' => self.escaped = true,
                    b'"' => {
                        self.in_string = false;
                        self.tail.clear();
                    }
                    _ => {
                        // A raw line break: not a string after all. A header in it starts
                        // the next message; the line break stays in the stream.
                        if let Some(back) = self.header_in_string(&chunk[string_from..i]) {
                            *self = HeaderScan::default();
                            return Some(Found { end: i, back });
                        }
                        self.in_string = false;
                        self.tail.clear();
                    }
                }
                i += 1;
                continue;
            }
            let b = chunk[i];
            i += 1;
            if b == b'"' {
                self.in_string = true;
                self.matched = 0;
                string_from = i;
            } else if self.step(b) {
                return Some(Found { end: i, back: b"Content-Length:".to_vec() });
            }
        }
        if self.in_string {
            self.remember(&chunk[string_from.min(chunk.len())..]);
        }
        None
    }

    /// At the end of a body: a header begun inside a string the body leaves open.
    fn open_string_header(&self) -> Option<Vec<u8>> {
        if self.in_string { self.header_in_string(&[]) } else { None }
    }
}

/// How reading a body ended.
enum Body {
    /// All of it (empty when it was not kept).
    Complete(Vec<u8>),
    /// A new header began after this many bytes; it has been given back to be read next.
    Truncated(u64),
    Eof,
}

/// The client's byte stream, read frame by frame with bounded memory: header lines of at
/// most [`MAX_HEADER_LINE`] bytes, bodies of at most [`MAX_MESSAGE_BYTES`], and bytes that
/// turn out to start the next frame given back to be read again.
struct FrameReader<R> {
    inner: BufReader<R>,
    /// Bytes given back, read before `inner`; `pushback_at` is how many were read again.
    pushback: Vec<u8>,
    pushback_at: usize,
    /// The body of an over-limit message still to skip (the error was sent already).
    skip: Option<u64>,
    /// [`MAX_MESSAGE_BYTES`], smaller in tests.
    limit: u64,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    fn new(input: R) -> FrameReader<R> {
        FrameReader { inner: BufReader::new(input), pushback: Vec::new(), pushback_at: 0, skip: None, limit: MAX_MESSAGE_BYTES }
    }

    /// The next bytes available (empty at end of input).
    async fn peek(&mut self) -> std::io::Result<&[u8]> {
        if self.pushback_at < self.pushback.len() {
            return Ok(&self.pushback[self.pushback_at..]);
        }
        self.inner.fill_buf().await
    }

    fn consume(&mut self, n: usize) {
        if self.pushback_at < self.pushback.len() {
            self.pushback_at += n;
            if self.pushback_at == self.pushback.len() {
                self.pushback.clear();
                self.pushback_at = 0;
            }
        } else {
            self.inner.consume(n);
        }
    }

    /// Gives `bytes` back: they are read again, before anything not read yet.
    fn unread(&mut self, bytes: &[u8]) {
        let mut back = bytes.to_vec();
        back.extend_from_slice(&self.pushback[self.pushback_at..]);
        self.pushback = back;
        self.pushback_at = 0;
    }

    /// One line with its `\n`, or at most [`MAX_HEADER_LINE`] bytes of a longer one (the
    /// flag says whether the line ended). `None` at end of input.
    async fn read_line(&mut self) -> std::io::Result<Option<(Vec<u8>, bool)>> {
        let mut line = Vec::new();
        loop {
            let avail = self.peek().await?;
            if avail.is_empty() {
                return Ok((!line.is_empty()).then_some((line, false)));
            }
            let room = MAX_HEADER_LINE - line.len();
            let window = &avail[..avail.len().min(room)];
            if let Some(nl) = window.iter().position(|b| *b == b'\n') {
                line.extend_from_slice(&window[..=nl]);
                self.consume(nl + 1);
                return Ok(Some((line, true)));
            }
            let n = window.len();
            line.extend_from_slice(window);
            self.consume(n);
            if line.len() == MAX_HEADER_LINE {
                return Ok(Some((line, false)));
            }
        }
    }

    /// Reads a body of `len` bytes, keeping it when `keep`, and stops early where a new
    /// header shows that the body was shorter (see [`HeaderScan`]).
    async fn read_body(&mut self, len: u64, keep: bool) -> std::io::Result<Body> {
        let mut body = Vec::new();
        if keep {
            // Grown as bytes arrive: a header alone must not make the server allocate.
            body.reserve(len.min(1 << 20) as usize);
        }
        let mut scan = HeaderScan::default();
        let mut left = len;
        while left > 0 {
            let avail = self.peek().await?;
            if avail.is_empty() {
                return Ok(Body::Eof);
            }
            let take = avail.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            let chunk = &avail[..take];
            if let Some(Found { end, back }) = scan.feed(chunk) {
                if keep {
                    body.extend_from_slice(&chunk[..end]);
                    body.truncate(body.len().saturating_sub(back.len()));
                }
                self.consume(end);
                let read = (len - left + end as u64).saturating_sub(back.len() as u64);
                self.unread(&back);
                return Ok(Body::Truncated(read));
            }
            if keep {
                body.extend_from_slice(chunk);
            }
            self.consume(take);
            left -= take as u64;
        }
        // The body ends inside header text: the announced length cut a header short
        // ("...Conte" | "nt-Length: 52"), or a header began inside a string the body
        // leaves open. Neither can end valid JSON. Complete a partial match from what is
        // already buffered (never waiting for more input).
        let mut back = scan.open_string_header().unwrap_or_default();
        if back.is_empty() && scan.matched > 0 {
            let rest = &HEADER[scan.matched..];
            let buffered = if self.pushback_at < self.pushback.len() { &self.pushback[self.pushback_at..] } else { self.inner.buffer() };
            if buffered.len() >= rest.len() && buffered[..rest.len()].eq_ignore_ascii_case(rest) {
                self.consume(rest.len());
                back = b"Content-Length:".to_vec();
                // Only the part of it inside the body comes off the body.
                let inside = scan.matched;
                if keep {
                    body.truncate(body.len().saturating_sub(inside));
                }
                self.unread(&back);
                return Ok(Body::Truncated(len - inside as u64));
            }
        }
        if !back.is_empty() {
            if keep {
                body.truncate(body.len().saturating_sub(back.len()));
            }
            let read = len.saturating_sub(back.len() as u64);
            self.unread(&back);
            return Ok(Body::Truncated(read));
        }
        Ok(Body::Complete(body))
    }

    /// Reads one frame.
    async fn next_frame(&mut self) -> std::io::Result<Frame> {
        if let Some(len) = self.skip.take()
            && let Body::Eof = self.read_body(len, false).await? {
                return Ok(Frame::Eof);
            }
        let mut content_length: Option<u64> = None;
        let mut bad_header = false;
        // Bytes that belong to no valid header block (a body sent without its header, a
        // truncated frame): reported once, when the next blank line or header ends them.
        let mut garbage = false;
        let mut saw_header = false;
        loop {
            let Some((line, ended)) = self.read_line().await? else {
                return Ok(Frame::Eof);
            };
            // A header after garbage, even on the same line (a body without a trailing
            // newline followed by the next frame): the garbage was not a frame. Report
            // it, then read that frame from its header.
            if let Some(pos) = find_header(&line)
                && (pos > 0 || garbage) {
                    self.unread(&line[pos..]);
                    return Ok(Frame::Reject(error_response(Value::Null, -32700, "Parse error: bytes outside any frame (missing Content-Length)")));
                }
            if !ended && line.len() == MAX_HEADER_LINE {
                // No header line is this long. Read on; keep the tail in case a header
                // straddles the cut.
                garbage = true;
                self.unread(&line[line.len() - (HEADER.len() - 1)..]);
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
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
        if len > self.limit {
            // Answer now, before the body (which may never come in full); skip it next
            // time, unless a new header shows it was shorter than announced.
            self.skip = Some(len);
            let message = format!("Invalid Request: the message is {len} bytes, over the limit of {} bytes; it is skipped", self.limit);
            return Ok(Frame::Reject(error_response(Value::Null, -32600, &message)));
        }
        Ok(match self.read_body(len, true).await? {
            Body::Complete(body) => match validate(&body) {
                Ok(()) => Frame::Message(body),
                Err(err) => Frame::Reject(err),
            },
            Body::Truncated(read) => {
                let message = format!("Parse error: the message ended after {read} of its {len} bytes, where a new Content-Length header began");
                Frame::Reject(error_response(Value::Null, -32700, &message))
            }
            Body::Eof => Frame::Eof,
        })
    }
}

/// The base protocol's framing for a well-behaved peer: the server's own output, and the
/// tests and tools that act as a client. (The client's input goes through the validating
/// reader of this module, which also survives a peer that is not well-behaved.)
pub mod framing {
    use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

    /// `Content-Length: N\r\n\r\n` and the body.
    pub fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        out.extend_from_slice(body);
        out
    }

    /// What one header line says: `Some(n)` for a `Content-Length`, `None` for another
    /// header; an error for a `Content-Length` that is not a number within the limit.
    fn header(text: &str) -> std::io::Result<Option<u64>> {
        let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidData, m);
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                let n: u64 = value.trim().parse().map_err(|_| invalid(format!("bad header `{text}`")))?;
                if n > super::MAX_MESSAGE_BYTES {
                    return Err(invalid(format!("a message of {n} bytes is over the limit")));
                }
                Ok(Some(n))
            }
            _ => Ok(None),
        }
    }

    /// The header block being read, one line at a time: the one reader of headers behind
    /// [`read_message`] and [`read_message_blocking`].
    #[derive(Default)]
    struct Headers {
        len: Option<u64>,
        started: bool,
    }

    /// What a header line means for the frame being read.
    enum Step {
        /// Read another header line.
        More,
        /// The input ended before a header: no more messages.
        End,
        /// The header block is complete; the body has this many bytes.
        Body(u64),
    }

    impl Headers {
        /// Takes one line as read (`n` bytes, 0 at the end of input).
        fn line(&mut self, n: usize, line: &[u8]) -> std::io::Result<Step> {
            if n == 0 {
                return if self.started { Err(std::io::ErrorKind::UnexpectedEof.into()) } else { Ok(Step::End) };
            }
            let text = String::from_utf8_lossy(line);
            let text = text.trim_end();
            if text.is_empty() {
                if !self.started {
                    return Ok(Step::More);
                }
                let len = self.len.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "no Content-Length header"))?;
                return Ok(Step::Body(len));
            }
            self.started = true;
            self.len = header(text)?.or(self.len);
            Ok(Step::More)
        }
    }

    /// The body, or an error where the input ended before `len` bytes.
    fn whole(body: Vec<u8>, len: u64) -> std::io::Result<Option<Vec<u8>>> {
        if (body.len() as u64) < len {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(Some(body))
    }

    /// Reads one message body. `Ok(None)` at end of input before a header; an error for
    /// a header block without a usable `Content-Length` (or one over
    /// [`super::MAX_MESSAGE_BYTES`]) and for input that ends inside a frame.
    pub async fn read_message<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<Option<Vec<u8>>> {
        let mut headers = Headers::default();
        let len = loop {
            let mut line = Vec::new();
            let n = (&mut *reader).take(super::MAX_HEADER_LINE as u64).read_until(b'\n', &mut line).await?;
            match headers.line(n, &line)? {
                Step::More => {}
                Step::End => return Ok(None),
                Step::Body(len) => break len,
            }
        };
        let mut body = Vec::new();
        (&mut *reader).take(len).read_to_end(&mut body).await?;
        whole(body, len)
    }

    /// [`read_message`] for blocking readers (tools and tests that drive `warpsight lsp`
    /// as a process).
    pub fn read_message_blocking<R: std::io::BufRead>(reader: &mut R) -> std::io::Result<Option<Vec<u8>>> {
        use std::io::Read;
        let mut headers = Headers::default();
        let len = loop {
            let mut line = Vec::new();
            let n = std::io::BufRead::read_until(&mut (&mut *reader).take(super::MAX_HEADER_LINE as u64), b'\n', &mut line)?;
            match headers.line(n, &line)? {
                Step::More => {}
                Step::End => return Ok(None),
                Step::Body(len) => break len,
            }
        };
        let mut body = Vec::new();
        (&mut *reader).take(len).read_to_end(&mut body)?;
        whole(body, len)
    }
}

use framing::frame as frame_bytes;

/// Reads one whole frame (headers and body) of the server's own output.
async fn read_server_frame<R: AsyncBufRead + Unpin>(reader: &mut R) -> Option<Vec<u8>> {
    framing::read_message(reader).await.ok().flatten()
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
        let mut reader = FrameReader::new(input);
        loop {
            match reader.next_frame().await {
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

/// The framing of the client's stream: each case of issue 12 item 8, and a bounded fuzz
/// run (proptest, `PROPTEST_CASES`, as the PTX fuzzing) over random and mutated streams.
#[cfg(test)]
mod framing_tests {
    use proptest::prelude::*;

    use super::*;

    /// What a frame came out as: `Ok(body)` for a message, `Err((code, message))` for an
    /// answer the server sends.
    type Out = Result<Vec<u8>, (i64, String)>;

    /// Every frame of `bytes`, read with a message limit of `limit`, until the end.
    /// Fails if a frame is read without consuming input (a reader that can loop).
    async fn frames(bytes: &[u8], limit: u64) -> Vec<Out> {
        let mut r = FrameReader::new(bytes);
        r.limit = limit;
        let mut out = Vec::new();
        // Every frame but the last consumes at least one byte: more frames than bytes
        // means the reader is stuck.
        for _ in 0..=bytes.len() + 1 {
            match r.next_frame().await.expect("in-memory reads do not fail") {
                Frame::Message(b) => out.push(Ok(b)),
                Frame::Reject(e) => {
                    let code = e["error"]["code"].as_i64().expect("an error code");
                    out.push(Err((code, e["error"]["message"].as_str().unwrap_or_default().to_string())));
                }
                Frame::Eof => return out,
            }
        }
        panic!("the reader made no progress on {} bytes", bytes.len());
    }

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().build().expect("runtime").block_on(f)
    }

    const NEXT: &[u8] = br#"{"jsonrpc":"2.0","id":2,"method":"warpsight/next"}"#;

    fn stream(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    fn assert_next_is_served(out: &[Out]) {
        assert_eq!(out.last(), Some(&Ok(NEXT.to_vec())), "{out:?}");
    }

    #[test]
    fn the_blocking_reader_returns_each_body_then_none() {
        // Two frames of the server's output, as a tool driving `warpsight lsp` reads them
        // (mutation survivor: `read_message_blocking` → `Ok(Some(vec![]))`, whose users are
        // outside this crate).
        let first = br#"{"jsonrpc":"2.0","id":1,"result":null}"#;
        let bytes = stream(&[&frame_bytes(first), &frame_bytes(NEXT)]);
        let mut r = &bytes[..];
        assert_eq!(framing::read_message_blocking(&mut r).expect("a frame"), Some(first.to_vec()));
        assert_eq!(framing::read_message_blocking(&mut r).expect("a frame"), Some(NEXT.to_vec()));
        assert_eq!(framing::read_message_blocking(&mut r).expect("the end"), None);
    }

    #[test]
    fn the_client_side_reader_refuses_only_what_is_over_the_limit() {
        // Exactly MAX_MESSAGE_BYTES announced is within the limit: the reader goes on to the
        // body (cut short here: the input ends); one byte more is refused at the header
        // (mutation survivor: `n > MAX_MESSAGE_BYTES` → `>=`).
        let at = format!("Content-Length: {MAX_MESSAGE_BYTES}\r\n\r\n{{}}");
        let err = framing::read_message_blocking(&mut at.as_bytes()).expect_err("a short body");
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{err}");
        let over = format!("Content-Length: {}\r\n\r\n{{}}", MAX_MESSAGE_BYTES + 1);
        let err = framing::read_message_blocking(&mut over.as_bytes()).expect_err("over the limit");
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{err}");
        assert!(err.to_string().contains("over the limit"), "{err}");
    }

    #[test]
    fn a_content_length_of_u64_max_is_answered_at_once_and_the_next_message_served() {
        let bytes = stream(&[b"Content-Length: 18446744073709551615\r\n\r\n", &frame_bytes(NEXT)]);
        let out = run(frames(&bytes, MAX_MESSAGE_BYTES));
        assert_eq!(out.len(), 2, "{out:?}");
        let Err((code, message)) = &out[0] else { panic!("{out:?}") };
        assert_eq!(*code, -32600);
        assert!(message.contains("18446744073709551615 bytes, over the limit of 268435456 bytes"), "{message}");
        assert_next_is_served(&out);
    }

    #[test]
    fn two_gigabytes_announced_with_a_short_body_do_not_swallow_the_next_message() {
        let bytes = stream(&[b"Content-Length: 2000000000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}", &frame_bytes(NEXT)]);
        let out = run(frames(&bytes, MAX_MESSAGE_BYTES));
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(matches!(out[0], Err((-32600, _))), "{out:?}");
        assert_next_is_served(&out);
    }

    #[test]
    fn an_over_limit_message_is_skipped_whole_even_with_a_header_inside_its_strings() {
        // An honest client's message over the limit: its body is skipped, and the text
        // `Content-Length:` inside a string (a document about LSP) does not resynchronise.
        let body = br#"{"jsonrpc":"2.0","method":"x","params":{"text":"Content-Length: 5\n\"Content-Length: 7\" padding padding padding padding"}}"#;
        let bytes = stream(&[&frame_bytes(body), &frame_bytes(NEXT)]);
        let out = run(frames(&bytes, 64));
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(matches!(out[0], Err((-32600, _))), "{out:?}");
        assert_next_is_served(&out);
    }

    #[test]
    fn a_body_shorter_than_its_length_is_reported_and_the_next_message_served() {
        let bytes = stream(&[b"Content-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\"", &frame_bytes(NEXT)]);
        let out = run(frames(&bytes, MAX_MESSAGE_BYTES));
        assert_eq!(out.len(), 2, "{out:?}");
        let Err((code, message)) = &out[0] else { panic!("{out:?}") };
        assert_eq!((*code, message.as_str()), (-32700, "Parse error: the message ended after 16 of its 500 bytes, where a new Content-Length header began"));
        assert_next_is_served(&out);
        // Also when the cut falls inside a string (a raw line break cannot be in one),
        // with or without a line break before the next header.
        let bytes = stream(&[b"Content-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"t\":\"abc\r\n", &frame_bytes(NEXT)]);
        assert_next_is_served(&run(frames(&bytes, MAX_MESSAGE_BYTES)));
        let bytes = stream(&[b"Content-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"shut", &frame_bytes(NEXT)]);
        let out = run(frames(&bytes, MAX_MESSAGE_BYTES));
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(matches!(&out[0], Err((-32700, m)) if m.contains("after 38 of its 500 bytes")), "{out:?}");
        assert_next_is_served(&out);
        // A string that merely mentions a header is still one string.
        let body = br#"{"jsonrpc":"2.0","id":3,"method":"m","params":{"t":"see Content-Length: 12 and content-length:x"}}"#;
        let out = run(frames(&stream(&[&frame_bytes(body), &frame_bytes(NEXT)]), MAX_MESSAGE_BYTES));
        assert_eq!(out, vec![Ok(body.to_vec()), Ok(NEXT.to_vec())]);
    }

    #[test]
    fn an_endless_header_line_is_read_in_bounded_pieces_and_a_header_across_a_cut_is_found() {
        for garbage in [100_000, MAX_HEADER_LINE - 5, MAX_HEADER_LINE, 3 * MAX_HEADER_LINE - 9] {
            let bytes = stream(&[&vec![b'x'; garbage], &frame_bytes(NEXT)]);
            let out = run(frames(&bytes, MAX_MESSAGE_BYTES));
            assert_eq!(out.len(), 2, "{garbage} bytes of garbage: {out:?}");
            assert!(matches!(out[0], Err((-32700, _))), "{out:?}");
            assert_next_is_served(&out);
        }
    }

    #[test]
    fn valid_frames_pass_unchanged() {
        let a = br#"{"jsonrpc":"2.0","id":1,"method":"a","params":{"s":"\"Content-Length: 3\"\\"}}"#;
        let bytes = stream(&[&frame_bytes(a), b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n", &frame_bytes(NEXT)]);
        let out = run(frames(&bytes, MAX_MESSAGE_BYTES));
        assert_eq!(out, vec![Ok(a.to_vec()), Ok(NEXT.to_vec())]);
    }

    fn cases() -> u32 {
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    }

    /// Snippets that confuse a framing reader when dropped anywhere.
    const TOKENS: &[&[u8]] = &[
        b"Content-Length: ",
        b"content-length:",
        b"Content-Type: x\r\n",
        b"\r\n",
        b"\r\n\r\n",
        b"\n",
        b"18446744073709551615",
        b"2000000000",
        b"-1",
        b"{",
        b"}",
        b"\"",
        b"\\",
        b"[]",
    ];

    /// A stream of valid frames (requests, notifications, a response) to mutate.
    fn valid_stream() -> Vec<u8> {
        let msgs = [
            json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
            json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": "file:///a.ptx", "languageId": "ptx", "version": 1, "text": ".version 8.0\n.target sm_80\n\"Content-Length: 4\"\\" } } }),
            json!({ "jsonrpc": "2.0", "id": "r", "result": null }),
            json!({ "jsonrpc": "2.0", "id": 3, "method": "shutdown" }),
        ];
        msgs.iter().flat_map(|m| frame_bytes(&serde_json::to_vec(m).expect("json"))).collect()
    }

    /// One edit: (kind, position seed, second seed, random bytes).
    type Edit = (u8, usize, usize, Vec<u8>);

    fn mutate(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
        for (kind, a, b, random) in edits {
            let n = bytes.len().max(1);
            let (a, b) = (a % (n + 1), b % (n + 1));
            let (lo, hi) = (a.min(b).min(bytes.len()), a.max(b).min(bytes.len()));
            match kind % 4 {
                0 => {
                    bytes.drain(lo..hi.min(lo + 64));
                }
                1 => {
                    bytes.splice(lo..lo, random.iter().copied());
                }
                2 => {
                    let t = TOKENS[b % TOKENS.len()];
                    bytes.splice(lo..lo, t.iter().copied());
                }
                _ => {
                    let chunk = bytes[lo..hi.min(lo + 256)].to_vec();
                    bytes.splice(hi..hi, chunk);
                }
            }
        }
        bytes
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

        /// Random bytes: the reader never panics, always makes progress, ends at the end
        /// of the input, and passes on only valid JSON-RPC.
        #[test]
        fn random_streams_never_panic_or_hang(bytes in prop::collection::vec(any::<u8>(), 0..2048), limit in 1u64..4096) {
            for body in run(frames(&bytes, limit)).into_iter().flatten() {
                prop_assert!(validate(&body).is_ok());
            }
        }

        /// Mutated valid streams, as in the PTX fuzzing: the same properties, and the
        /// frames after the last edit that a mutation cannot have touched are served.
        #[test]
        fn mutated_streams_never_panic_or_hang(
            edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), prop::collection::vec(any::<u8>(), 0..16)), 1..8),
            limit in prop::sample::select(vec![64u64, 300, MAX_MESSAGE_BYTES]),
        ) {
            let mut bytes = mutate(valid_stream(), &edits);
            // A clean frame after whatever the edits left: it is served unless the edits
            // left a header announcing a body that swallows it, which only a new header
            // inside that body can end (and this one is such a header).
            bytes.extend_from_slice(b"\r\n\r\n");
            bytes.extend_from_slice(&frame_bytes(NEXT));
            let out = run(frames(&bytes, limit));
            for body in out.iter().flatten() {
                prop_assert!(validate(body).is_ok());
            }
            prop_assert!(out.contains(&Ok(NEXT.to_vec())), "the clean last frame was lost: {:?}", out);
        }
    }
}
