//! Shared helpers of the reproduction tests: keeping generated tables in the docs in sync.
//!
//! Why: the docs show the papers' numbers next to ours, and those numbers must be the ones
//! the tests compute, never typed by hand. Each table lives between
//! `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` markers in a docs file; the test
//! that computes it checks the file holds exactly that text, and rewrites it when run with
//! `UPDATE_EXPECT=1` (the rust-analyzer `ensure_file_contents` pattern).

#![allow(dead_code)]

use std::path::PathBuf;

pub mod profiles;

/// The workspace root (two levels above this crate, symlinks resolved).
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::canonicalize(&manifest)
        .unwrap_or(manifest)
        .join("../..")
}

/// Checks (or with `UPDATE_EXPECT=1` rewrites) the generated block `name` of `doc`.
pub fn ensure_generated(doc: &str, name: &str, content: &str) {
    let path = workspace_root().join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let open = format!("<!-- generated:{name} -->\n");
    let close = format!("<!-- /generated:{name} -->");
    let want = format!("{open}{content}{close}");
    let current = match (text.find(&open), text.find(&close)) {
        (Some(a), Some(b)) if b >= a => Some(text[a..b + close.len()].to_string()),
        _ => None,
    };
    if current.as_deref() == Some(want.as_str()) {
        return;
    }
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let new = match (text.find(&open), text.find(&close)) {
            (Some(a), Some(b)) if b >= a => {
                format!("{}{}{}", &text[..a], want, &text[b + close.len()..])
            }
            _ => format!("{text}\n{want}\n"),
        };
        std::fs::write(&path, new).expect("write the docs file");
        return;
    }
    panic!(
        "{doc}: generated block `{name}` is stale; rerun with UPDATE_EXPECT=1\n--- want ---\n{want}\n--- have ---\n{current:?}"
    );
}

/// Absolute percentage error of `ours` against `paper`.
pub fn pct_err(ours: f64, paper: f64) -> f64 {
    (ours - paper).abs() / paper.abs() * 100.0
}

/// A decimal number as written in `text`, with the text just before it.
pub fn decimals(text: &str) -> Vec<(String, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let boundary = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '.' || chars[i - 1] == '_' || chars[i - 1] == '`');
        if !(chars[i].is_ascii_digit() && boundary) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
            i += 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            // Versions and dotted section numbers (`3.2.0`, `4.4.7`) are not results.
            if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                continue;
            }
            let before: String = chars[start.saturating_sub(16)..start].iter().map(|c| if c.is_whitespace() { ' ' } else { *c }).collect();
            out.push((chars[start..i].iter().collect(), before));
        }
    }
    out
}

/// Words after which a number names a section, table, equation or device class.
pub const REFERENCE_WORDS: [&str; 13] = ["Table ", "Tables ", "Eq. ", "Eqs. ", "§", "Fig. ", "spec ", "CC ", "Algorithm ", "section ", "Algorithms ", "Figs. ", "arXiv:"];
