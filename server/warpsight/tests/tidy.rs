//! Tidy checks: the invariants of `server/ARCHITECTURE.md` enforced by `cargo test`, after
//! rust-analyzer's `xtask/src/tidy.rs`. They read the repository's files, never build or
//! run anything:
//!
//! - no crate below `lsp` depends on the async runtime, the rope or the protocol crates
//!   (the analysis stays usable from the command line and from tests without them);
//! - no library crate prints to stdout, which belongs to the protocol wire in `warpsight
//!   lsp` (the workspace's clippy lints say the same; this holds without clippy);
//! - no file cites something outside the repository (a reader must be able to follow
//!   every citation from a checkout: a paper, an NVIDIA document or a file in it).

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository root")
}

/// The crates under `server/`, by folder name.
fn crates(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("server"))
        .expect("server/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The crates that may use the runtime and the protocol: the language server and the
/// binary that runs it.
const PROTOCOL_LAYER: &[&str] = &["lsp", "warpsight"];

/// Dependencies that belong to the protocol layer only.
const PROTOCOL_DEPS: &[&str] = &["tokio", "ropey", "tower-lsp-server", "tower-lsp", "lsp-types", "ls-types", "lsp-server", "tower"];

#[test]
fn crates_below_lsp_do_not_depend_on_the_runtime_the_rope_or_the_protocol() {
    let root = repo_root();
    let mut bad = Vec::new();
    for krate in crates(&root) {
        if PROTOCOL_LAYER.contains(&krate.as_str()) {
            continue;
        }
        let path = root.join("server").join(&krate).join("Cargo.toml");
        let text = std::fs::read_to_string(&path).expect("Cargo.toml");
        let manifest: toml::Table = text.parse().expect("a valid Cargo.toml");
        for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
            let Some(deps) = manifest.get(section).and_then(|d| d.as_table()) else { continue };
            for name in deps.keys() {
                if PROTOCOL_DEPS.contains(&name.as_str()) {
                    bad.push(format!("server/{krate}/Cargo.toml [{section}] {name}"));
                }
            }
        }
    }
    assert!(bad.is_empty(), "crates below `lsp` must not depend on these (server/ARCHITECTURE.md):\n{}", bad.join("\n"));
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a library source file that is not test code: everything before the first
/// `#[cfg(test)]` (test modules sit at the end of a file in this workspace).
fn non_test_code(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

/// The non-test code lines of the workspace crates' `src/` (their comments cut off) that
/// `hit` flags, as `path:line: text`; `skip(crate, path from src)` leaves files out.
fn flagged_library_lines(skip: impl Fn(&str, &Path) -> bool, hit: impl Fn(&str) -> bool) -> Vec<String> {
    let root = repo_root();
    let mut bad = Vec::new();
    for krate in crates(&root) {
        let src = root.join("server").join(&krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            if skip(&krate, file.strip_prefix(&src).expect("under src")) {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("a source file");
            for (n, line) in non_test_code(&text).lines().enumerate() {
                if hit(line.split("//").next().unwrap_or("")) {
                    bad.push(format!("{}:{}: {}", file.strip_prefix(&root).unwrap_or(&file).display(), n + 1, line.trim()));
                }
            }
        }
    }
    bad
}

#[test]
fn library_crates_do_not_print_to_stdout() {
    // Binaries own their stdout.
    let bad = flagged_library_lines(
        |krate, rel| rel == Path::new("main.rs") || rel.starts_with("bin") || krate == "warpsight",
        |code| code.contains("println!(") || code.contains("print!("),
    );
    assert!(bad.is_empty(), "library crates must not print to stdout (it is the protocol wire of `warpsight lsp`):\n{}", bad.join("\n"));
}

/// Output is typed (issue 15): JSON objects come from serde-derived types, never from
/// `json!` assembled by hand, outside tests and the JSON-RPC envelope of the transport
/// (`lsp/src/transport.rs`, which writes the protocol's own error responses).
#[test]
fn json_is_built_from_types_not_by_hand() {
    let bad = flagged_library_lines(|krate, rel| krate == "lsp" && rel == Path::new("transport.rs"), |code| code.contains(concat!("json", "!(")));
    assert!(bad.is_empty(), "build JSON from serde types (server/ARCHITECTURE.md), not by hand:\n{}", bad.join("\n"));
}

/// What a citation of a file outside the repository looks like, lower case (the text is
/// compared in lower case). Built from parts so that this file does not match itself.
/// The "spec" and "seed" numbers (00N) are the project's extraction notes of a paper and the
/// paper's text, numbered by the project: a reader needs the paper itself (author, year,
/// section, table; `gpu-data/references.toml` lists them), not the project's numbering.
fn outside_citations() -> Vec<String> {
    vec![
        ["house", "-style"].concat(),
        ["shared/", "notes"].concat(),
        ["../shared/", "spec"].concat(),
        ["spec ", "00"].concat(),
        ["seed ", "00"].concat(),
        ["spec `", "occupancy"].concat(),
        ["shared ", "spec"].concat(),
    ]
}

/// The folders and files whose text a reader follows: sources, docs, scripts and data
/// descriptions.
const SCANNED: &[&str] = &["server", "docs", "scripts", "gpu-data", "tests", "examples", "vscode-extension", "eclipse-bridge", "README.md", "Cargo.toml"];

const SKIPPED_DIRS: &[&str] = &["target", "node_modules", ".git", ".venv", "__pycache__"];

fn text_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_symlink() || (kind.is_dir() && (SKIPPED_DIRS.contains(&name.as_str()) || name.starts_with('.'))) {
            continue;
        }
        if kind.is_dir() {
            text_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// A line's text without its indentation and comment leader (`//!`, `///`, `//`, `#`,
/// `*`, `>`), in lower case, so that a citation broken over two lines of a comment or a
/// paragraph is still seen once the lines are joined.
fn prose(line: &str) -> String {
    line.trim_start().trim_start_matches(['/', '!', '#', '*', '>']).trim().to_lowercase()
}

#[test]
fn no_file_cites_something_outside_the_repository() {
    let root = repo_root();
    let patterns = outside_citations();
    let mut files = Vec::new();
    for entry in SCANNED {
        text_files(&root.join(entry), &mut files);
    }
    let mut bad = Vec::new();
    for file in files {
        // Binary files and data files that are not UTF-8 cite nothing.
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let rel = file.strip_prefix(&root).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        let lines: Vec<String> = text.lines().map(prose).collect();
        for (n, line) in lines.iter().enumerate() {
            // The line joined with the next one: a match that starts on this line.
            let joined = match lines.get(n + 1) {
                Some(next) => format!("{line} {next}"),
                None => line.clone(),
            };
            let starts_here = patterns.iter().any(|p| joined.find(p.as_str()).is_some_and(|at| at < line.len().max(1)));
            if starts_here {
                bad.push(format!("{rel}:{}: {}", n + 1, text.lines().nth(n).unwrap_or("").trim()));
            }
        }
    }
    assert!(bad.is_empty(), "cite the paper (gpu-data/references.toml), an NVIDIA document or a file in the repository instead:\n{}", bad.join("\n"));
}

#[test]
fn the_citation_check_sees_a_citation_broken_over_two_comment_lines() {
    let patterns = outside_citations();
    let lines: Vec<String> = ["//! as shown (Seed", "//! 002 §10 item 1)"].iter().map(|l| prose(l)).collect();
    let joined = format!("{} {}", lines[0], lines[1]);
    assert!(patterns.iter().any(|p| joined.contains(p.as_str())), "{joined}");
    assert!(!patterns.iter().any(|p| prose("//! Dasgupta 2011 §2.2.3, seed004 Table 4.6").contains(p.as_str())));
}
