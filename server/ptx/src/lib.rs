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
//! offsets to lines and columns for consumers.

pub mod ast;
mod lexer;
pub mod line_index;
pub mod opcodes;
mod parser;

pub use ast::*;
pub use line_index::{LineCol, LineIndex};
pub use opcodes::is_known_opcode;

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
    let (module, mut errors) = parser::Parser::new(text).parse_module();
    if truncated {
        errors.push(ParseError {
            span: Span::new(text.len(), text.len()),
            message: "input longer than 4 GiB: the rest was not parsed".to_owned(),
            severity: Severity::Error,
        });
    }
    Parse { module, errors }
}
