//! The resilient recursive-descent PTX parser.
//!
//! Shape: one function per construct, each starting at the current token and leaving the
//! parser on the first token after the construct. Nothing here returns `Result`: a
//! construct that goes wrong records a [`ParseError`], skips to a resynchronisation point
//! and hands back an error node, so the caller simply continues (the resilient parsing of
//! rust-analyzer and ruff).
//!
//! Resynchronisation points, from the most to the least local:
//! - inside a statement: the next `;` (consumed), a `{` or `}` (left for the block), or a
//!   token at the start of a line that can start a statement (a directive, `@`, a known
//!   opcode, or a label). The last rule keeps one garbage line from swallowing the next
//!   line when the garbage has no `;`, while multi-line statements (`call` argument
//!   lists) still recover at their `;`;
//! - inside a body: a module-level directive at the start of a line (`.entry`, `.func`,
//!   `.visible`, `.version`, ...) ends the body with a "missing `}`" error, so one
//!   unbalanced brace does not swallow the rest of the file;
//! - at module level: the next module-level directive at the start of a line.
//!
//! Termination: every loop either consumes a token or exits, and nesting (`{` blocks,
//! operand vectors) is bounded by [`MAX_DEPTH`], so neither deep input nor garbage can
//! overflow the stack or hang the parser.

use crate::ast::*;
use crate::lexer::{Kind, Lexer, Token};
use crate::opcodes::is_known_opcode;

mod body;
mod instruction;
mod lexicon;
mod module;

use lexicon::*;

/// The deepest nesting of `{` blocks and operand vectors that is parsed recursively.
/// Real PTX nests call-sequence scopes two or three deep; deeper input is skipped as one
/// error node without recursion.
pub(super) const MAX_DEPTH: u32 = 64;

/// Receives function bodies statement by statement from [`crate::parse_with_sink`].
///
/// For each function in source order: [`BodySink::begin_body`] when its header has been
/// read and a body follows, then [`BodySink::statement`] for every statement of the body
/// (nested scopes flattened, see [`crate::parse_with_sink`]), then
/// [`BodySink::end_function`] with the finished function (whose body, if any, has no
/// statements). Prototypes get only `end_function`.
pub trait BodySink<'a> {
    /// A function header (linkage, name, parameters, performance directives; `body` is
    /// `None` and `span` ends at the header) whose body starts next.
    fn begin_body(&mut self, header: &Function<'a>);
    /// One statement of the current body.
    fn statement(&mut self, statement: &Statement<'a>);
    /// A complete function: a definition after its body's statements, or a prototype.
    fn end_function(&mut self, function: &Function<'a>);
}

pub(crate) struct Parser<'a, 's> {
    src: &'a str,
    /// Where function bodies go when streaming; `None` builds the full tree.
    sink: Option<&'s mut dyn BodySink<'a>>,
    lx: Lexer<'a>,
    tok: Token,
    /// End of the last consumed token.
    prev_end: u32,
    depth: u32,
    errors: Vec<ParseError>,
}

impl<'a, 's> Parser<'a, 's> {
    pub(crate) fn new(src: &'a str, sink: Option<&'s mut dyn BodySink<'a>>) -> Parser<'a, 's> {
        let mut lx = Lexer::new(src);
        let tok = lx.next_token();
        Parser {
            src,
            sink,
            lx,
            tok,
            prev_end: 0,
            depth: 0,
            errors: Vec::new(),
        }
    }

    // ---- Token plumbing -------------------------------------------------------------

    #[inline]
    fn text(&self, t: Token) -> &'a str {
        // Token boundaries are character boundaries: a token starts and ends at an ASCII
        // byte, at an end of the input, or (error and string tokens, which take non-ASCII
        // bytes whole) after a complete character. `get` keeps that a non-panicking fact.
        self.src.get(t.start as usize..t.end as usize).unwrap_or("")
    }

    /// The span of the character that ends at byte `end` (a token end, so a character
    /// boundary): one to four bytes. Empty at `end` when there is no such character.
    fn char_before(&self, end: u32) -> Span {
        let width = self
            .src
            .get(..end as usize)
            .and_then(|s| s.chars().next_back())
            .map_or(0, char::len_utf8);
        Span {
            start: end - width as u32,
            end,
        }
    }

    /// The name of a `DotName` token without its dot.
    #[inline]
    fn dot_name(&self, t: Token) -> &'a str {
        self.src
            .get(t.start as usize + 1..t.end as usize)
            .unwrap_or("")
    }

    #[inline]
    fn bump(&mut self) -> Token {
        let t = self.tok;
        self.prev_end = t.end;
        self.tok = self.lx.next_token();
        t
    }

    #[inline]
    fn bump_text(&mut self) -> &'a str {
        let t = self.bump();
        self.text(t)
    }

    #[inline]
    fn bump_dot_name(&mut self) -> &'a str {
        let t = self.bump();
        self.dot_name(t)
    }

    #[inline]
    fn at(&self, punct: u8) -> bool {
        self.tok.kind == Kind::Punct(punct)
    }

    #[inline]
    fn eat(&mut self, punct: u8) -> bool {
        if self.at(punct) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn peek(&self) -> Token {
        let mut lx = self.lx;
        lx.next_token()
    }

    /// Whether the identifier `t` is followed by `:`. Looks at the bytes after it first:
    /// every instruction start asks this, and lexing the next token twice was measurable.
    #[inline]
    fn is_label(&self, t: Token) -> bool {
        let bytes = self.src.as_bytes();
        let mut i = t.end as usize;
        while let Some(&b) = bytes.get(i) {
            match b {
                b' ' | b'\t' => i += 1,
                b':' => return true,
                b'/' | b'\r' | b'\n' => return self.peek().kind == Kind::Punct(b':'),
                _ => return false,
            }
        }
        false
    }

    fn describe(&self, t: Token) -> String {
        match t.kind {
            Kind::Eof => "end of file".to_owned(),
            Kind::Error => "unexpected characters".to_owned(),
            _ => {
                let text = self.text(t);
                if text.len() > 40 {
                    let cut = (0..=40)
                        .rev()
                        .find(|i| text.is_char_boundary(*i))
                        .unwrap_or(0);
                    format!("`{}...`", &text[..cut])
                } else {
                    format!("`{text}`")
                }
            }
        }
    }

    fn error(&mut self, span: Span, message: String) {
        self.errors.push(ParseError {
            span,
            message,
            severity: Severity::Error,
        });
    }

    fn warning(&mut self, span: Span, message: String) {
        self.errors.push(ParseError {
            span,
            message,
            severity: Severity::Warning,
        });
    }

    fn tok_span(&self) -> Span {
        Span {
            start: self.tok.start,
            end: self.tok.end,
        }
    }

    /// Reports "expected X, found Y" at the current token.
    fn expected(&mut self, what: &str) {
        let msg = format!("expected {what}, found {}", self.describe(self.tok));
        let span = self.tok_span();
        self.error(span, msg);
    }

    /// Whether the current token can begin a statement (used only at line starts).
    fn starts_statement(&self) -> bool {
        match self.tok.kind {
            Kind::DotName | Kind::Punct(b'@') => true,
            Kind::Ident => is_known_opcode(self.text(self.tok)) || self.is_label(self.tok),
            _ => false,
        }
    }

    /// Skips the rest of a broken statement (see the module docs) and returns the end of
    /// the skipped text.
    fn recover_stmt(&mut self) -> u32 {
        let mut end = self.prev_end;
        loop {
            let t = self.tok;
            match t.kind {
                Kind::Eof | Kind::Punct(b'{' | b'}') => break,
                Kind::Punct(b';') => {
                    self.bump();
                    end = t.end;
                    break;
                }
                _ => {}
            }
            if t.nl_before && self.starts_statement() {
                break;
            }
            self.bump();
            end = t.end;
        }
        end
    }

    /// Skips the rest of the current line.
    fn skip_line(&mut self) {
        while self.tok.kind != Kind::Eof && !self.tok.nl_before {
            self.bump();
        }
    }

    fn number_u32(&mut self) -> Option<u32> {
        if self.tok.kind == Kind::Number {
            let t = self.bump();
            parse_int(self.text(t)).and_then(|v| u32::try_from(v).ok())
        } else {
            None
        }
    }
}
