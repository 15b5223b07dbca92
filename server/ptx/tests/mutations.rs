//! Property test: mutated real PTX (bytes and tokens deleted, inserted, swapped) never
//! panics the parser and every span stays inside the input.
//!
//! Bounded for CI: 256 cases by default; set `PROPTEST_CASES` to run more. Seeds of past
//! failures live in `mutations.proptest-regressions` and are replayed before new cases.

mod common;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use common::{check_spans, corpus};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// One edit: (kind, position seed, second position seed, inserted bytes).
type Edit = (u8, usize, usize, Vec<u8>);

/// Snippets that are likely to confuse the parser when dropped anywhere.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ";",
    ",",
    "@",
    "!",
    "|",
    "/*",
    "*/",
    "//",
    "\"",
    ".reg",
    ".entry",
    ".func",
    ".section",
    "%r<",
    "0f",
    "0d",
    "0x",
    "-",
    "+",
    ":",
    "\n",
    ".loc 1 2",
    "call.uni (",
    "$L__BB0_1:",
];

fn apply(src: &str, edits: &[Edit]) -> String {
    let mut bytes = src.as_bytes().to_vec();
    for (kind, a, b, insert) in edits {
        let len = bytes.len().max(1);
        let (a, b) = (a % len, b % len);
        let (lo, hi) = (a.min(b), a.max(b).min(bytes.len()));
        match kind % 6 {
            // Delete a byte range (at most 64 bytes).
            0 => {
                let hi = hi.min(lo + 64);
                bytes.drain(lo.min(bytes.len())..hi.max(lo.min(bytes.len())));
            }
            // Insert random bytes.
            1 => {
                let at = lo.min(bytes.len());
                bytes.splice(at..at, insert.iter().copied());
            }
            // Swap two short ranges.
            2 => {
                let n = 8.min(bytes.len().saturating_sub(hi));
                if lo + n <= hi {
                    for k in 0..n {
                        bytes.swap(lo + k, hi + k);
                    }
                }
            }
            // Insert a confusing token.
            3 => {
                let tok = TOKENS[insert.first().copied().unwrap_or(0) as usize % TOKENS.len()];
                let at = lo.min(bytes.len());
                bytes.splice(at..at, tok.bytes());
            }
            // Delete a whitespace-separated token.
            4 => {
                let start = lo.min(bytes.len());
                let end = bytes[start..]
                    .iter()
                    .position(|c| c.is_ascii_whitespace())
                    .map_or(bytes.len(), |p| start + p);
                bytes.drain(start..end);
            }
            // Duplicate a line-sized range somewhere else.
            _ => {
                let hi = hi.min(lo + 80);
                let chunk: Vec<u8> =
                    bytes[lo.min(bytes.len())..hi.max(lo.min(bytes.len()))].to_vec();
                let at = b.min(bytes.len());
                bytes.splice(at..at, chunk);
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    // Failing cases are saved to and replayed first from `mutations.proptest-regressions`
    // beside this file (committed). Named explicitly: the default looks for a `lib.rs`
    // above the test, finds none under `tests/`, warns and falls back to the same file.
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_ptx_never_panics(
        file in 0usize..64,
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), prop::collection::vec(any::<u8>(), 0..12)), 1..10),
    ) {
        let files = corpus();
        prop_assume!(!files.is_empty());
        let (_, src) = &files[file % files.len()];
        let mutated = apply(src, &edits);
        let parse = ptx::parse(&mutated);
        check_spans(&mutated, &parse);
    }
}
