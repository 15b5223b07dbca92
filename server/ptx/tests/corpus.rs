//! Real compiler output must parse with zero diagnostics.
//!
//! Two corpora: `tests/data/` (a few files generated for this crate by nvcc 13.5, NVRTC
//! 13.5 and clang 19 from the `.cu` sources next to them, `.file` paths scrubbed) and the
//! workspace corpus under `tests/fixtures/` (walked at test time, so new fixtures are
//! covered without touching this file).

use std::path::{Path, PathBuf};

use ptx::{Item, LineIndex, Statement};

/// Appends the `.ptx` files under `dir`, recursively (none when `dir` is missing).
fn ptx_files(dir: &Path, acc: &mut Vec<PathBuf>) {
    let files = walkdir::WalkDir::new(dir).into_iter().flatten().filter(|e| e.file_type().is_file());
    acc.extend(files.map(walkdir::DirEntry::into_path).filter(|p| p.extension().is_some_and(|e| e == "ptx")));
}

fn check_clean(path: &Path) -> usize {
    let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parse = ptx::parse(&src);
    let index = LineIndex::new(&src);
    let diags: Vec<String> = parse
        .errors
        .iter()
        .map(|e| {
            format!(
                "{}:{}: {:?}: {}",
                path.display(),
                index.line_number(e.span.start),
                e.severity,
                e.message
            )
        })
        .collect();
    assert!(
        diags.is_empty(),
        "diagnostics in real compiler output:\n{}",
        diags.join("\n")
    );
    assert!(
        parse.module.version.is_some(),
        "{}: no .version",
        path.display()
    );
    assert!(
        !parse.module.target.is_empty(),
        "{}: no .target",
        path.display()
    );
    // Every function with a body has at least one instruction, and every instruction's
    // opcode is known.
    let mut n_instructions = 0;
    for f in parse.module.functions() {
        let Some(body) = &f.body else { continue };
        let mut stack = vec![body];
        while let Some(block) = stack.pop() {
            for st in &block.statements {
                match st {
                    Statement::Instruction(i) => {
                        assert!(i.known_opcode, "{}: {}", path.display(), i.opcode);
                        assert_eq!(i.operands.len(), i.operand_spans.len());
                        n_instructions += 1;
                    }
                    Statement::Block(b) => stack.push(b),
                    Statement::Error(span) => panic!("{}: error node at {span:?}", path.display()),
                    _ => {}
                }
            }
        }
    }
    assert!(
        parse
            .module
            .items
            .iter()
            .all(|it| !matches!(it, Item::Error(_))),
        "{}: module-level error node",
        path.display()
    );
    n_instructions
}

#[test]
fn crate_corpus_parses_without_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut files = Vec::new();
    ptx_files(&dir, &mut files);
    assert!(
        files.len() >= 7,
        "expected the crate's PTX corpus in {}",
        dir.display()
    );
    let total: usize = files.iter().map(|p| check_clean(p)).sum();
    assert!(total > 500, "only {total} instructions parsed");
}

#[test]
fn workspace_fixtures_parse_without_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut files = Vec::new();
    ptx_files(&dir, &mut files);
    // The fixture corpus is built by another part of the project; every file present
    // must parse cleanly, however many there are.
    for path in &files {
        check_clean(path);
    }
}
