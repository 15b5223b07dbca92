//! Bounded fuzzing of the whole server through its transport (issue 12): a session of
//! valid frames, mutated (bytes and framing tokens inserted, deleted, duplicated), is fed
//! to the real server loop, then the input is closed. The server must never panic, must
//! end (no hang), and everything it writes must be well-formed frames of JSON-RPC.
//!
//! Each case starts a server, so the count is `PROPTEST_CASES / 8` (default 32); the
//! reader alone is fuzzed with the full count in `src/transport.rs`.

use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse::<u32>().ok()).map_or(32, |n| (n / 8).max(1))
}

fn session() -> Vec<Value> {
    vec![
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "processId": null, "rootUri": null, "capabilities": {}, "initializationOptions": { "debounceMs": 0 } } }),
        json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": "file:///f/a.ptx", "languageId": "ptx", "version": 1, "text": crate::VADD } } }),
        json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": { "textDocument": { "uri": "file:///f/a.ptx", "version": 2 }, "contentChanges": [{ "range": { "start": { "line": 3, "character": 0 }, "end": { "line": 3, "character": 4 } }, "text": "\"Content-Length: 9\"\\" }] } }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": { "textDocument": { "uri": "file:///f/a.ptx" }, "position": { "line": 6, "character": 18 } } }),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "warpsight/compareGpus", "params": { "uri": "file:///f/a.ptx", "gpus": ["a100", "k20"] } }),
        json!({ "jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": { "settings": { "defaultTripCount": 8 } } }),
        json!({ "jsonrpc": "2.0", "id": 4, "method": "shutdown" }),
        json!({ "jsonrpc": "2.0", "method": "exit" }),
    ]
}

const TOKENS: &[&[u8]] = &[b"Content-Length: ", b"\r\n", b"\r\n\r\n", b"18446744073709551615", b"99999", b"{", b"}", b"\"", b"\\", b"[]", b"null", b"\"id\":"];

type Edit = (u8, usize, usize, Vec<u8>);

fn mutated(edits: &[Edit]) -> Vec<u8> {
    let mut bytes: Vec<u8> = session().iter().flat_map(|m| lsp::framing::frame(&serde_json::to_vec(m).expect("json"))).collect();
    for (kind, a, b, random) in edits {
        let n = bytes.len();
        let lo = a % (n + 1);
        match kind % 4 {
            0 => {
                let hi = (lo + b % 48).min(n);
                bytes.drain(lo..hi);
            }
            1 => {
                bytes.splice(lo..lo, random.iter().copied());
            }
            2 => {
                bytes.splice(lo..lo, TOKENS[b % TOKENS.len()].iter().copied());
            }
            _ => {
                let hi = (lo + b % 300).min(n);
                let chunk = bytes[lo..hi].to_vec();
                bytes.splice(hi..hi, chunk);
            }
        }
    }
    bytes
}

/// Runs one session; returns what the server wrote, message by message.
async fn serve(input: Vec<u8>) -> Vec<Value> {
    let (mut client_w, server_r) = tokio::io::duplex(1 << 16);
    let (server_w, client_r) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(lsp::serve(server_r, server_w));
    let writer = tokio::spawn(async move {
        let _ = client_w.write_all(&input).await;
        // Dropping the writer closes the server's input.
    });
    let mut reader = BufReader::new(client_r);
    let mut out = Vec::new();
    let read_all = async {
        while let Some(body) = lsp::framing::read_message(&mut reader).await.expect("the server writes well-formed frames") {
            let v: Value = serde_json::from_slice(&body).expect("the server writes JSON");
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
            out.push(v);
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read_all).await.expect("the server did not end after its input closed");
    writer.await.expect("writer");
    tokio::time::timeout(Duration::from_secs(5), server).await.expect("server task ended").expect("the server panicked");
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_sessions_never_panic_or_hang(
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), prop::collection::vec(any::<u8>(), 0..12)), 0..6),
    ) {
        let input = mutated(&edits);
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let out = rt.block_on(serve(input));
        // Every answer is a response or a server notification/request, never garbage.
        for m in &out {
            prop_assert!(m.get("id").is_some() || m.get("method").is_some(), "{}", m);
        }
        if edits.is_empty() {
            // Untouched, the session is answered in full.
            for id in 1..=4 {
                prop_assert!(out.iter().any(|m| m["id"] == id && m.get("method").is_none()), "no answer to {}: {:?}", id, out);
            }
        }
    }
}
