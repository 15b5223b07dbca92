//! Helpers shared by the integration tests: loading the crate's PTX corpus and checking
//! that every span in a parse result lies inside the source.

#![allow(dead_code)]

use std::path::Path;

use ptx::{Block, Item, Parse, Span, Statement};

/// The crate's own compiler-generated PTX files, sorted by name.
pub fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut acc: Vec<(String, String)> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
                .filter_map(|p| {
                    Some((
                        p.file_name()?.to_string_lossy().into_owned(),
                        std::fs::read_to_string(&p).ok()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    acc.sort();
    acc
}

pub fn corpus_file(name: &str) -> String {
    corpus()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("missing corpus file {name}"))
}

fn check(src: &str, span: Span, what: &str) {
    assert!(span.start <= span.end, "{what}: inverted span {span:?}");
    assert!(
        (span.end as usize) <= src.len(),
        "{what}: span {span:?} past the end ({})",
        src.len()
    );
    assert!(
        src.get(span.range()).is_some(),
        "{what}: span {span:?} splits a UTF-8 character"
    );
}

/// Asserts that every span in the tree and in the diagnostics is in bounds and on
/// character boundaries.
pub fn check_spans(src: &str, parse: &Parse<'_>) {
    check(src, parse.module.span, "module");
    for e in &parse.errors {
        check(src, e.span, &e.message);
    }
    for f in &parse.module.files {
        check(src, f.span, "file");
    }
    for item in &parse.module.items {
        match item {
            Item::Function(f) => {
                check(src, f.span, "function");
                check(src, f.name_span, "function name");
                for p in f.params.iter().chain(&f.return_params) {
                    check(src, p.span, "param");
                }
                for d in &f.performance {
                    check(src, d.span, "performance directive");
                }
                if let Some(b) = &f.body {
                    check_block(src, b);
                }
            }
            Item::Variable(v) => {
                check(src, v.span, "variable");
                check(src, v.name_span, "variable name");
                if let Some(init) = v.init {
                    check(src, init, "initialiser");
                }
            }
            Item::Section(s) | Item::Error(s) => check(src, *s, "section/error"),
            Item::Directive(d) => check(src, d.span, "directive"),
        }
    }
}

fn check_block(src: &str, b: &Block<'_>) {
    check(src, b.span, "block");
    for st in &b.statements {
        match st {
            Statement::Instruction(i) => {
                check(src, i.span, "instruction");
                assert_eq!(i.operands.len(), i.operand_spans.len());
                for s in &i.operand_spans {
                    check(src, *s, "operand");
                    assert!(
                        s.start >= i.span.start && s.end <= i.span.end,
                        "operand outside its instruction"
                    );
                }
                if let Some(g) = i.guard {
                    check(src, g.span, "guard");
                }
                for op in &i.operands {
                    // Exercised for panics only: registers() scans expression text.
                    let _ = op.registers();
                }
            }
            Statement::Label { span, .. } | Statement::Error(span) => {
                check(src, *span, "label/error")
            }
            Statement::RegDecl(r) => check(src, r.span, "reg"),
            Statement::Variable(v) => check(src, v.span, "variable"),
            Statement::Loc(l) => check(src, l.span, "loc"),
            Statement::Block(b) => check_block(src, b),
            Statement::Directive(d) => check(src, d.span, "directive"),
        }
    }
}

/// Instruction counts per function, in source order.
pub fn instruction_counts<'a>(parse: &Parse<'a>) -> Vec<(&'a str, usize)> {
    fn count(b: &Block<'_>) -> usize {
        b.statements
            .iter()
            .map(|s| match s {
                Statement::Instruction(_) => 1,
                Statement::Block(b) => count(b),
                _ => 0,
            })
            .sum()
    }
    parse
        .module
        .functions()
        .map(|f| (f.name, f.body.as_ref().map_or(0, count)))
        .collect()
}
