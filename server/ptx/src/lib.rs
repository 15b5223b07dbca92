//! A resilient lexer and parser for NVIDIA PTX (ISA up to 9.x, as emitted by nvcc 13.x,
//! NVRTC and LLVM's NVPTX back end).
//!
//! The one entry point is [`parse`], which returns the syntax tree together with every
//! error found. It never panics and never stops at the first error: a statement it cannot
//! read becomes an error node and parsing resumes at the next statement. Unknown opcodes
//! are kept as instructions (`known_opcode == false`) with a warning, so PTX newer than
//! this crate still yields a usable tree.
//!
//! Layout: [`lexer`](crate::lexer) turns bytes into tokens on demand, `parser` builds the
//! [`ast`], [`opcodes`] is the PTX 9.x opcode table, and [`line_index`] converts byte
//! offsets to lines and columns for consumers. [`parse_with_sink`] is the streaming
//! variant for consumers that walk each function body once.

pub mod ast;
pub mod demangle;
mod lexer;
pub mod line_index;
pub mod opcodes;
mod parser;

pub use ast::*;
pub use demangle::demangle;
pub use line_index::{LineCol, LineIndex};
pub use opcodes::is_known_opcode;
pub use parser::BodySink;

/// The result of parsing one PTX module: the tree and the errors, both always present.
#[derive(Debug, Clone, Default)]
pub struct Parse<'a> {
    pub module: Module<'a>,
    /// Errors and warnings in source order of discovery (see [`ParseError::severity`]).
    pub errors: Vec<ParseError>,
}

impl Parse<'_> {
    /// Whether any diagnostic is an error (warnings do not count).
    pub fn has_errors(&self) -> bool {
        self.errors.iter().any(|e| e.severity == Severity::Error)
    }
}

/// Parses a whole PTX module. Never panics; inputs longer than `u32::MAX` bytes (spans
/// are 32-bit) are parsed up to that length and an error covers the rest.
pub fn parse(src: &str) -> Parse<'_> {
    parse_inner(src, None)
}

/// Parses a whole PTX module like [`parse`], but hands every statement of every function
/// body to `sink` (in source order, as soon as it is parsed) instead of storing it in the
/// tree.
///
/// Why: a consumer that only walks the bodies once, like `ptx-ir`'s lowering, does not
/// need the statements to exist all at once. A 50 MB module's statements take several
/// hundred MB as a tree, and allocating, faulting in and freeing that memory cost more
/// than the parse itself. Streaming keeps one statement alive at a time.
///
/// The returned tree is complete except that every function body's
/// [`Block::statements`] is empty (its span is kept). The errors are exactly those of
/// [`parse`]. Nested `{ ... }` scopes are delivered as their statements followed by a
/// [`Statement::Block`] with no statements, so a consumer that flattens blocks sees the
/// statements in the same order as a walk over the full tree.
pub fn parse_with_sink<'a>(src: &'a str, sink: &mut dyn BodySink<'a>) -> Parse<'a> {
    parse_inner(src, Some(sink))
}

/// Parses again the one function whose item starts at byte `start` of `src` (the
/// `span.start` of a [`Function`] from an earlier parse of the same text), handing its
/// body to `sink` exactly as [`parse_with_sink`] did; spans are positions in `src`.
/// Returns whether a function starts there. Errors are not reported again.
///
/// Why: a consumer that handles a large module one function at a time (the CLI's
/// streaming analysis) can drop a function's lowered form after use and lower it again
/// later from the text, instead of holding every function's at once.
pub fn reparse_function_at<'a>(src: &'a str, start: u32, sink: &mut dyn BodySink<'a>) -> bool {
    if start as usize >= src.len() || src.len() > u32::MAX as usize {
        return false;
    }
    parser::Parser::new(src, Some(sink)).function_at(start)
}

fn parse_inner<'a>(src: &'a str, sink: Option<&mut dyn BodySink<'a>>) -> Parse<'a> {
    const MAX: usize = u32::MAX as usize;
    let (text, truncated) = if src.len() > MAX {
        let cut = (0..=MAX)
            .rev()
            .find(|i| src.is_char_boundary(*i))
            .unwrap_or(0);
        (&src[..cut], true)
    } else {
        (src, false)
    };
    let (module, mut errors) = parser::Parser::new(text, sink).parse_module();
    if truncated {
        errors.push(ParseError {
            span: Span::new(text.len(), text.len()),
            message: "input longer than 4 GiB: the rest was not parsed".to_owned(),
            severity: Severity::Error,
        });
    }
    Parse { module, errors }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what a sink sees, as text, for comparison with a walk over the full tree.
    #[derive(Default)]
    struct Recorder {
        events: Vec<String>,
    }

    impl<'a> BodySink<'a> for Recorder {
        fn begin_body(&mut self, header: &Function<'a>) {
            self.events.push(format!("begin {}", header.name));
        }
        fn statement(&mut self, statement: &Statement<'a>) {
            match statement {
                Statement::Block(b) => {
                    assert!(
                        b.statements.is_empty(),
                        "a streamed block has no statements"
                    );
                    self.events.push("block".to_owned());
                }
                other => self.events.push(format!("{other:?}")),
            }
        }
        fn end_function(&mut self, function: &Function<'a>) {
            self.events.push(format!("end {}", function.name));
        }
    }

    fn walk(block: &Block<'_>, acc: &mut Vec<String>) {
        for st in &block.statements {
            match st {
                Statement::Block(b) => {
                    walk(b, acc);
                    acc.push("block".to_owned());
                }
                other => acc.push(format!("{other:?}")),
            }
        }
    }

    fn expected_events(src: &str) -> Vec<String> {
        let mut acc = Vec::new();
        for f in parse(src).module.functions() {
            if let Some(body) = &f.body {
                acc.push(format!("begin {}", f.name));
                walk(body, &mut acc);
            }
            acc.push(format!("end {}", f.name));
        }
        acc
    }

    #[test]
    fn streaming_delivers_the_tree_in_order_with_the_same_errors() {
        let files = [
            include_str!("../tests/data/nvcc_sm80_lineinfo.ptx"),
            include_str!("../tests/data/nvcc_sm90a_hopper_asm.ptx"),
            include_str!("../tests/data/clang19_sm80.ptx"),
            // Broken: an unclosed body, a stray brace, a nested scope and garbage.
            ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry a()\n{\n{ .reg .b32 r; mov.u32 r, 1; }\n@%p1 bra L;\n#garbage\nL:\nret;\n.visible .entry b()\n{\nadd.s32 %r1, %r2\n}\n}\n.func c();\n",
        ];
        for (k, src) in files.iter().enumerate() {
            let mut rec = Recorder::default();
            let streamed = parse_with_sink(src, &mut rec);
            let full = parse(src);
            assert_eq!(rec.events, expected_events(src), "file {k}");
            assert_eq!(streamed.errors, full.errors, "file {k}");
            let names = |p: &Parse<'_>| {
                p.module
                    .functions()
                    .map(|f| f.name.to_owned())
                    .collect::<Vec<_>>()
            };
            assert_eq!(names(&streamed), names(&full), "file {k}");
            assert!(
                streamed
                    .module
                    .functions()
                    .all(|f| f.body.as_ref().is_none_or(|b| b.statements.is_empty()))
            );
            // Each function parsed again on its own, from its start: the same events.
            let mut again = Recorder::default();
            for f in full.module.functions() {
                assert!(
                    reparse_function_at(src, f.span.start, &mut again),
                    "file {k}: {}",
                    f.name
                );
            }
            assert_eq!(again.events, rec.events, "file {k}: reparsed one by one");
            // Not a function there: nothing.
            let mut none = Recorder::default();
            assert!(!reparse_function_at(src, 0, &mut none));
            assert!(!reparse_function_at(src, src.len() as u32, &mut none));
        }
    }
}
