//! A light C++/CUDA tokenizer for launch-site extraction.
//!
//! This is deliberately not a preprocessor or a parser: it only needs to find
//! `kernel<<<...>>>(...)` launches, `__global__` declarations, simple constant definitions
//! and `// warpsight:` annotation comments, with exact line and column numbers. It skips
//! comments, string and character literals (so a `<<<` inside a string is never a launch),
//! collects `#define` lines separately (their bodies feed constant folding), and drops every
//! other preprocessor line. Conditional compilation is ignored on purpose: both branches of
//! an `#ifdef` are scanned, which is the useful behaviour for an editor (code guarded by
//! `#ifndef __CUDACC_RTC__` still has its launches found).
//!
//! [`nav`] walks the token stream (brackets, expressions, statements, lists, calls).

mod nav;

pub(crate) use nav::{call_open, split_at_semicolons, statement_end, template_close};
pub use nav::{expr_end, matching, matching_back, split_commas};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    Ident,
    /// An integer or floating literal, with any suffix and digit separators kept.
    Number,
    /// Punctuation, including the CUDA launch brackets `<<<` and `>>>`.
    Punct,
    /// A string literal (the text includes the quotes).
    Str,
    /// A character literal.
    Char,
}

/// One token with its position (1-based line and column; the column counts bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tok<'a> {
    pub kind: TokKind,
    pub text: &'a str,
    pub line: u32,
    pub col: u32,
    /// Byte offset of the first character in the source.
    pub offset: usize,
}

impl Tok<'_> {
    pub fn is(&self, text: &str) -> bool {
        self.text == text
    }
    pub fn is_ident(&self) -> bool {
        self.kind == TokKind::Ident
    }
}

/// A `#define NAME body` or `#define NAME(a, b) body` line.
#[derive(Debug, Clone)]
pub struct Define<'a> {
    pub name: &'a str,
    /// `Some` for a function-like macro: its parameter names.
    pub params: Option<Vec<&'a str>>,
    /// The replacement list, tokenized.
    pub body: Vec<Tok<'a>>,
    pub line: u32,
    pub offset: usize,
    /// `true` when the directive just before it is `#ifndef NAME` (or `#if !defined(NAME)`):
    /// a default that a `-D NAME=...` on the command line replaces.
    pub guarded: bool,
}

/// A comment whose text starts with `warpsight:` (after `//` or `/*` and spaces).
#[derive(Debug, Clone, Copy)]
pub struct AnnotationComment<'a> {
    /// The text after `warpsight:`, trimmed.
    pub text: &'a str,
    pub line: u32,
    pub offset: usize,
}

/// The tokenized file: code tokens, macro definitions and annotation comments.
#[derive(Debug, Clone, Default)]
pub struct Lexed<'a> {
    pub tokens: Vec<Tok<'a>>,
    pub defines: Vec<Define<'a>>,
    pub annotations: Vec<AnnotationComment<'a>>,
    /// The names in `#include "name"` lines, in order (system `<...>` includes are left
    /// out: they belong to the toolchain).
    pub includes: Vec<&'a str>,
}

/// Multi-character punctuators, longest first so that `<<<` wins over `<<` and `<<=`.
const PUNCTS: &[&str] = &[
    "<<<", ">>>", "<<=", ">>=", "...", "->*", "::", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&",
    "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "++", "--", ".*",
];

/// Tokenizes a whole file. Never fails: unknown bytes become one-character punctuation.
pub fn lex(src: &str) -> Lexed<'_> {
    let mut out = Lexed::default();
    let mut cur = Cursor {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        line: 1,
        line_start: 0,
    };
    let mut at_line_start = true;
    // The name of an `#ifndef` just read, for the `#define` right after it.
    let mut guard: Option<&str> = None;
    while cur.pos < cur.bytes.len() {
        let b = cur.bytes[cur.pos];
        if b == b'\n' {
            cur.newline();
            at_line_start = true;
            continue;
        }
        if b.is_ascii_whitespace() {
            cur.pos += 1;
            continue;
        }
        if b == b'\\' && cur.peek(1) == Some(b'\n') {
            cur.pos += 1;
            cur.newline();
            continue;
        }
        if b == b'/' && cur.peek(1) == Some(b'/') {
            let start = cur.pos;
            let line = cur.line;
            cur.skip_line_comment();
            annotation(&src[start + 2..cur.pos], line, start, &mut out.annotations);
            continue;
        }
        if b == b'/' && cur.peek(1) == Some(b'*') {
            let start = cur.pos;
            let line = cur.line;
            cur.skip_block_comment();
            let end = if src[start..cur.pos].ends_with("*/") {
                cur.pos - 2
            } else {
                cur.pos
            };
            annotation(
                &src[start + 2..end.max(start + 2)],
                line,
                start,
                &mut out.annotations,
            );
            continue;
        }
        if b == b'#' && at_line_start {
            directive(&mut cur, &mut out, &mut guard);
            continue;
        }
        at_line_start = false;
        let start = cur.pos;
        let col = cur.col();
        let kind = if b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 {
            // A raw string literal R"delim( ... )delim" (also u8R, LR, ...).
            let ident_end = cur.ident_end(start);
            let ident = &src[start..ident_end];
            if ident.ends_with('R') && cur.bytes.get(ident_end) == Some(&b'"') && ident.len() <= 3 {
                cur.pos = ident_end;
                cur.skip_raw_string();
                TokKind::Str
            } else if cur.bytes.get(ident_end) == Some(&b'"')
                && matches!(ident, "u8" | "u" | "U" | "L")
            {
                cur.pos = ident_end;
                cur.skip_quoted(b'"');
                TokKind::Str
            } else {
                cur.pos = ident_end;
                TokKind::Ident
            }
        } else if b.is_ascii_digit()
            || (b == b'.' && cur.peek(1).is_some_and(|c| c.is_ascii_digit()))
        {
            cur.skip_number();
            TokKind::Number
        } else if b == b'"' {
            cur.skip_quoted(b'"');
            TokKind::Str
        } else if b == b'\'' {
            cur.skip_quoted(b'\'');
            TokKind::Char
        } else {
            let rest = &src[start..];
            let len = PUNCTS
                .iter()
                .find(|p| rest.starts_with(**p))
                .map_or_else(|| char_len(rest), |p| p.len());
            cur.pos += len;
            TokKind::Punct
        };
        out.tokens.push(Tok {
            kind,
            text: &src[start..cur.pos],
            line: cur.line_of(start),
            col,
            offset: start,
        });
    }
    out
}

fn char_len(s: &str) -> usize {
    s.chars().next().map_or(1, char::len_utf8)
}

fn annotation<'a>(body: &'a str, line: u32, offset: usize, out: &mut Vec<AnnotationComment<'a>>) {
    let t = body.trim_start_matches(['/', '*', '!']).trim_start();
    if let Some(rest) = t.strip_prefix("warpsight:") {
        out.push(AnnotationComment {
            text: rest.trim().trim_end_matches("*/").trim(),
            line,
            offset,
        });
    }
}

/// Reads one preprocessor line; keeps `#define`s, drops the rest.
fn directive<'a>(cur: &mut Cursor<'a>, out: &mut Lexed<'a>, guard: &mut Option<&'a str>) {
    let start = cur.pos;
    let line = cur.line;
    // The logical line ends at a newline not preceded by a backslash. Comments inside are
    // removed by re-lexing the body below.
    let mut end = start;
    let mut physical_lines = 0;
    while end < cur.bytes.len() {
        match cur.bytes[end] {
            b'\n' => {
                if end > start && cur.bytes[end - 1] == b'\\' {
                    physical_lines += 1;
                    end += 1;
                    continue;
                }
                break;
            }
            b'/' if cur.bytes.get(end + 1) == Some(&b'*') => {
                // A block comment may span lines inside a directive.
                let mut j = end + 2;
                while j + 1 < cur.bytes.len() && !(cur.bytes[j] == b'*' && cur.bytes[j + 1] == b'/')
                {
                    if cur.bytes[j] == b'\n' {
                        physical_lines += 1;
                    }
                    j += 1;
                }
                end = (j + 2).min(cur.bytes.len());
            }
            _ => end += 1,
        }
    }
    let text = &cur.src[start..end];
    let after_hash = text[1..].trim_start();
    let guarded_name = guard.take();
    if let Some(rest) = after_hash.strip_prefix("define")
        && rest.starts_with(|c: char| c.is_whitespace())
    {
        let rest_offset = end - rest.len();
        let n_before = out.defines.len();
        parse_define(cur.src, rest_offset, end, line, start, out);
        if let Some(d) = out.defines.get_mut(n_before) {
            d.guarded = guarded_name == Some(d.name);
        }
    } else if let Some(rest) = after_hash.strip_prefix("include") {
        if let Some(name) = rest
            .trim_start()
            .strip_prefix('"')
            .and_then(|r| r.split('"').next())
        {
            out.includes.push(name);
        }
    } else {
        *guard = ifndef_name(after_hash);
    }
    // Advance the cursor past the directive, keeping the line count right.
    cur.pos = end;
    for _ in 0..physical_lines {
        cur.line += 1;
    }
    if physical_lines > 0 {
        cur.line_start = cur.src[..end].rfind('\n').map_or(0, |i| i + 1);
    }
}

fn parse_define<'a>(
    src: &'a str,
    from: usize,
    to: usize,
    line: u32,
    offset: usize,
    out: &mut Lexed<'a>,
) {
    // Lex the rest of the directive as ordinary code (this strips comments and splices
    // continuation lines); the first identifier is the macro name.
    let inner = lex(&src[from..to]);
    let mut toks: Vec<Tok<'a>> = inner
        .tokens
        .into_iter()
        .map(|mut t| {
            t.offset += from;
            t.line += line - 1;
            t
        })
        .collect();
    if toks.is_empty() || !toks[0].is_ident() {
        return;
    }
    let name_tok = toks.remove(0);
    // Function-like only when `(` follows the name with no space.
    let mut params = None;
    if toks
        .first()
        .is_some_and(|t| t.is("(") && t.offset == name_tok.offset + name_tok.text.len())
    {
        let mut names = Vec::new();
        let mut i = 1;
        let mut closed = false;
        while i < toks.len() {
            let t = toks[i];
            i += 1;
            if t.is(")") {
                closed = true;
                break;
            }
            if t.is_ident() || t.is("...") {
                names.push(t.text);
            }
        }
        if !closed {
            return;
        }
        toks.drain(..i);
        params = Some(names);
    }
    out.defines.push(Define {
        name: name_tok.text,
        params,
        body: toks,
        line,
        offset,
        guarded: false,
    });
}

/// The macro name tested by `ifndef NAME`, `if !defined(NAME)` or `if !defined NAME`
/// (the text after `#`).
fn ifndef_name(after_hash: &str) -> Option<&str> {
    let ident = |s: &str| -> Option<usize> {
        let n = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        (n > 0).then_some(n)
    };
    if let Some(rest) = after_hash.strip_prefix("ifndef") {
        let rest = rest.trim_start();
        return ident(rest).map(|n| &rest[..n]);
    }
    let rest = after_hash
        .strip_prefix("if")?
        .trim_start()
        .strip_prefix('!')?;
    let rest = rest.trim_start().strip_prefix("defined")?.trim_start();
    let rest = rest.strip_prefix('(').unwrap_or(rest).trim_start();
    ident(rest).map(|n| &rest[..n])
}

struct Cursor<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
}

impl Cursor<'_> {
    fn peek(&self, n: usize) -> Option<u8> {
        self.bytes.get(self.pos + n).copied()
    }
    fn newline(&mut self) {
        self.pos += 1;
        self.line += 1;
        self.line_start = self.pos;
    }
    fn col(&self) -> u32 {
        u32::try_from(self.pos - self.line_start + 1).unwrap_or(u32::MAX)
    }
    /// The line of a token that started at `start` (tokens that span lines, such as raw
    /// strings, advance `self.line` while being skipped).
    fn line_of(&self, start: usize) -> u32 {
        let newlines = self.src[start..self.pos]
            .bytes()
            .filter(|b| *b == b'\n')
            .count();
        self.line - u32::try_from(newlines).unwrap_or(0)
    }
    fn ident_end(&self, start: usize) -> usize {
        let mut i = start;
        while i < self.bytes.len()
            && (self.bytes[i].is_ascii_alphanumeric()
                || self.bytes[i] == b'_'
                || self.bytes[i] >= 0x80)
        {
            i += 1;
        }
        i
    }
    fn skip_line_comment(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
            // A backslash-newline continues a `//` comment onto the next line.
            if self.bytes[self.pos] == b'\\' && self.peek(1) == Some(b'\n') {
                self.pos += 1;
                self.newline();
                continue;
            }
            self.pos += 1;
        }
    }
    fn skip_block_comment(&mut self) {
        self.pos += 2;
        while self.pos < self.bytes.len() {
            if self.bytes[self.pos] == b'*' && self.peek(1) == Some(b'/') {
                self.pos += 2;
                return;
            }
            if self.bytes[self.pos] == b'\n' {
                self.newline();
            } else {
                self.pos += 1;
            }
        }
    }
    fn skip_quoted(&mut self, quote: u8) {
        self.pos += 1;
        while self.pos < self.bytes.len() {
            match self.bytes[self.pos] {
                b'\\' => self.pos += 2,
                b'\n' => return, // Unterminated: stop at the end of the line.
                c if c == quote => {
                    self.pos += 1;
                    return;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.bytes.len());
    }
    fn skip_raw_string(&mut self) {
        // At the opening quote of R"delim( ... )delim".
        let open = self.pos + 1;
        let Some(paren) = self.src[open..].find('(') else {
            self.skip_quoted(b'"');
            return;
        };
        let delim = &self.src[open..open + paren];
        let close = format!("){delim}\"");
        let body_start = open + paren + 1;
        let end = self.src[body_start..]
            .find(&close)
            .map_or(self.bytes.len(), |i| body_start + i + close.len());
        while self.pos < end {
            if self.bytes[self.pos] == b'\n' {
                self.newline();
            } else {
                self.pos += 1;
            }
        }
    }
    fn skip_number(&mut self) {
        // pp-number: digits, letters, `.`, `'` separators, and exponent signs.
        let mut prev = 0u8;
        while self.pos < self.bytes.len() {
            let c = self.bytes[self.pos];
            let ok = c.is_ascii_alphanumeric()
                || c == b'.'
                || c == b'_'
                || (c == b'\'' && self.peek(1).is_some_and(|d| d.is_ascii_alphanumeric()))
                || ((c == b'+' || c == b'-') && matches!(prev, b'e' | b'E' | b'p' | b'P'));
            if !ok {
                break;
            }
            prev = c;
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_brackets_strings_and_comments() {
        let src = "k<<<1, 2>>>(x); // k2<<<9,9>>>()\nconst char* s = \"<<<\"; /* a\n b */ int y;";
        let lx = lex(src);
        let texts: Vec<&str> = lx.tokens.iter().map(|t| t.text).collect();
        assert_eq!(
            &texts[..11],
            &[
                "k", "<<<", "1", ",", "2", ">>>", "(", "x", ")", ";", "const"
            ]
        );
        assert!(texts.contains(&"\"<<<\""));
        assert_eq!(texts.iter().filter(|t| **t == "<<<").count(), 1);
        let y = lx
            .tokens
            .iter()
            .find(|t| t.text == "y")
            .map(|t| (t.line, t.col));
        assert_eq!(y, Some((3, 11)));
    }

    #[test]
    fn defines_and_annotations() {
        let src = "#define N (1<<20) // size\n#define CDIV(a, b) (((a) + (b) - 1) / (b))\n#define F (x)\n  // warpsight: grid=4 block=32\nint x;\n#include <foo.h>\n/* warpsight: n=5 */";
        let lx = lex(src);
        assert_eq!(lx.defines.len(), 3);
        assert_eq!(lx.defines[0].name, "N");
        assert!(lx.defines[0].params.is_none());
        assert_eq!(
            lx.defines[0]
                .body
                .iter()
                .map(|t| t.text)
                .collect::<Vec<_>>(),
            ["(", "1", "<<", "20", ")"]
        );
        assert_eq!(lx.defines[1].params.as_deref(), Some(&["a", "b"][..]));
        // `#define F (x)` has a space: object-like.
        assert!(lx.defines[2].params.is_none());
        assert_eq!(lx.annotations.len(), 2);
        assert_eq!(lx.annotations[0].text, "grid=4 block=32");
        assert_eq!(lx.annotations[0].line, 4);
        assert_eq!(lx.annotations[1].text, "n=5");
        let x = lx.tokens.iter().find(|t| t.text == "x").map(|t| t.line);
        assert_eq!(x, Some(5));
        assert_eq!(lx.tokens.len(), 3);
    }

    #[test]
    fn continuation_lines_keep_line_numbers() {
        let src = "#define LONG 1 + \\\n   2\nint after;";
        let lx = lex(src);
        assert_eq!(lx.defines[0].body.len(), 3);
        assert_eq!(
            lx.tokens.iter().find(|t| t.text == "after").map(|t| t.line),
            Some(3)
        );
    }

    #[test]
    fn numbers_with_separators_and_exponents() {
        let lx = lex("a = 1'000'000 + 1e-3f + 0x1Fu + 'c';");
        let nums: Vec<&str> = lx
            .tokens
            .iter()
            .filter(|t| t.kind == TokKind::Number)
            .map(|t| t.text)
            .collect();
        assert_eq!(nums, ["1'000'000", "1e-3f", "0x1Fu"]);
    }
}
