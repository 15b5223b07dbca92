//! A byte-level PTX lexer that produces tokens on demand.
//!
//! Why on demand instead of a token vector: a 50 MB PTX file holds roughly 15 million
//! tokens, and a `Vec<Token>` of that size would cost more memory traffic than the lexing
//! itself. The parser keeps one current token and clones the (`Copy`) lexer when it needs
//! to look further ahead, which is a position and a few flags.
//!
//! Every token is a byte range into the source; nothing is allocated per token. The lexer
//! never fails: bytes it does not understand become [`Kind::Error`] tokens and the parser
//! decides what to report.
//!
//! Token grammar (PTX ISA 9.x §4.1–§4.5):
//! - identifiers `[A-Za-z_$%][A-Za-z0-9_$]*`; a `%` register followed by a single-letter
//!   component (`%tid.x`) keeps the component, because the whole thing names one special
//!   register;
//! - dotted names `.foo`, `.shared::cluster`, `.m16n8k16`, `.L2::256B` (directives, opcode
//!   modifiers, types);
//! - numbers: decimal, `0x` hex, `0b` binary, octal, `U` suffix, `0f`/`0d` float bit
//!   patterns, decimal floats with `.` or an exponent;
//! - strings `"..."` with `\` escapes;
//! - single-byte punctuation;
//! - comments `//` and `/* */`, skipped, but a newline inside them still counts as a line
//!   break for [`Token::nl_before`].

/// The kind of a token. Punctuation carries its byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    /// `.name`, the dot included in the span.
    DotName,
    Number,
    Str,
    Punct(u8),
    /// A run of bytes that cannot start any token (binary data, stray UTF-8, `#`).
    Error,
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Kind,
    pub start: u32,
    pub end: u32,
    /// Whether a line break (possibly inside a comment) precedes this token. Statements
    /// without a terminating `;` (`.loc`, `.file`, labels) end at line breaks, and error
    /// recovery uses them as resynchronisation points.
    pub nl_before: bool,
}

/// The lexer state: the source and a byte position. `Copy`, so lookahead is a clone.
#[derive(Clone, Copy)]
pub(crate) struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    /// Set when a `/*` comment runs to the end of the input.
    pub unterminated_comment: Option<u32>,
}

/// Byte classes, looked up once per byte instead of chains of comparisons.
const IDENT_START: u8 = 1;
const IDENT_CONT: u8 = 2;
const PUNCT: u8 = 4;
const SPACE: u8 = 8;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let mut c = 0;
        if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b == b'%' {
            c |= IDENT_START;
        }
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' {
            c |= IDENT_CONT;
        }
        if matches!(
            b,
            b',' | b';'
                | b':'
                | b'{'
                | b'}'
                | b'['
                | b']'
                | b'('
                | b')'
                | b'<'
                | b'>'
                | b'+'
                | b'-'
                | b'*'
                | b'/'
                | b'!'
                | b'@'
                | b'|'
                | b'&'
                | b'^'
                | b'~'
                | b'='
                | b'?'
                | b'.'
                | b'%'
        ) {
            c |= PUNCT;
        }
        if matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c) {
            c |= SPACE;
        }
        t[i] = c;
        i += 1;
    }
    t
};

#[inline]
fn is_ident_start(b: u8) -> bool {
    CLASS[b as usize] & IDENT_START != 0
}

#[inline]
pub(crate) fn is_ident_continue(b: u8) -> bool {
    CLASS[b as usize] & IDENT_CONT != 0
}

#[inline]
fn is_punct(b: u8) -> bool {
    CLASS[b as usize] & PUNCT != 0
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src: src.as_bytes(),
            pos: 0,
            unterminated_comment: None,
        }
    }

    /// Moves the lexer to `pos` (used to skip `.section` bodies by a raw byte scan).
    pub(crate) fn set_pos(&mut self, pos: usize) {
        self.pos = pos.min(self.src.len());
    }

    /// Skips whitespace and comments; returns whether a newline was crossed.
    #[inline]
    fn skip_trivia(&mut self) -> bool {
        let src = self.src;
        let mut nl = false;
        while let Some(&b) = src.get(self.pos) {
            match b {
                b'\n' => {
                    nl = true;
                    self.pos += 1;
                }
                _ if CLASS[b as usize] & SPACE != 0 => self.pos += 1,
                b'/' => match src.get(self.pos + 1) {
                    Some(b'/') => {
                        // Line comment: the newline itself is left for the loop so it
                        // counts as a line break.
                        match memchr(b'\n', &src[self.pos..]) {
                            Some(off) => self.pos += off,
                            None => self.pos = src.len(),
                        }
                    }
                    Some(b'*') => {
                        let body = self.pos + 2;
                        match find_block_comment_end(&src[body.min(src.len())..]) {
                            Some(off) => {
                                if memchr(b'\n', &src[body..body + off]).is_some() {
                                    nl = true;
                                }
                                self.pos = body + off + 2;
                            }
                            None => {
                                self.unterminated_comment = Some(self.pos as u32);
                                self.pos = src.len();
                            }
                        }
                    }
                    _ => break,
                },
                _ => break,
            }
        }
        nl
    }

    /// Lexes the next token. At the end of input it returns `Eof` tokens forever.
    pub(crate) fn next_token(&mut self) -> Token {
        let nl_before = self.skip_trivia();
        let src = self.src;
        let start = self.pos;
        let Some(&b) = src.get(start) else {
            return Token {
                kind: Kind::Eof,
                start: start as u32,
                end: start as u32,
                nl_before,
            };
        };
        let kind = if is_ident_start(b) {
            let mut i = start + 1;
            while i < src.len() && is_ident_continue(src[i]) {
                i += 1;
            }
            if b == b'%' {
                if i == start + 1 {
                    // A lone `%` is an operator (modulo in initialiser expressions).
                    self.pos = i;
                    return Token {
                        kind: Kind::Punct(b'%'),
                        start: start as u32,
                        end: i as u32,
                        nl_before,
                    };
                }
                // `%tid.x`, `%ctaid.y`, `%v.w`: a one-letter component is part of the
                // register name (PTX ISA §10, special registers; §5.4.2, vectors).
                if i + 1 < src.len()
                    && src[i] == b'.'
                    && matches!(
                        src[i + 1],
                        b'x' | b'y' | b'z' | b'w' | b'r' | b'g' | b'b' | b'a'
                    )
                    && !src.get(i + 2).is_some_and(|c| is_ident_continue(*c))
                {
                    i += 2;
                }
            }
            self.pos = i;
            Kind::Ident
        } else if b == b'.' {
            let mut i = start + 1;
            loop {
                match src.get(i) {
                    Some(&c) if is_ident_continue(c) => i += 1,
                    // `::` joins parts of one modifier: `.shared::cluster`, `.L2::cache_hint`.
                    Some(b':') if src.get(i + 1) == Some(&b':') && i > start + 1 => i += 2,
                    _ => break,
                }
            }
            if i == start + 1 {
                self.pos = i;
                Kind::Punct(b'.')
            } else {
                self.pos = i;
                Kind::DotName
            }
        } else if b.is_ascii_digit() {
            self.pos = lex_number(src, start);
            Kind::Number
        } else if b == b'"' {
            let mut i = start + 1;
            loop {
                match src.get(i) {
                    None | Some(b'\n') => break,
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') => i += 2,
                    Some(_) => i += 1,
                }
            }
            self.pos = i.min(src.len());
            Kind::Str
        } else if is_punct(b) {
            self.pos = start + 1;
            Kind::Punct(b)
        } else {
            // A run of bytes no token can start with; stop at whitespace or at anything
            // that can start a token, so one bad byte does not swallow good input. The
            // run always advances by whole UTF-8 characters because every byte >= 0x80
            // belongs to it.
            let mut i = start + 1;
            while let Some(&c) = src.get(i) {
                if c.is_ascii_whitespace()
                    || is_ident_start(c)
                    || c == b'.'
                    || c == b'"'
                    || is_punct(c)
                    || c.is_ascii_digit()
                {
                    break;
                }
                i += 1;
            }
            self.pos = i;
            Kind::Error
        };
        Token {
            kind,
            start: start as u32,
            end: self.pos as u32,
            nl_before,
        }
    }
}

/// Lexes a number starting at `start` (a digit) and returns its end.
fn lex_number(src: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    if src[start] == b'0'
        && matches!(
            src.get(i),
            Some(b'x' | b'X' | b'f' | b'F' | b'd' | b'D' | b'b' | b'B')
        )
    {
        i += 1;
        while i < src.len() && src[i].is_ascii_hexdigit() {
            i += 1;
        }
        if matches!(src.get(i), Some(b'U' | b'u')) {
            i += 1;
        }
        return i;
    }
    while i < src.len() && src[i].is_ascii_digit() {
        i += 1;
    }
    // A fraction: `1.5`, but not `1.x`-like forms (there are none in PTX) and not a
    // following dotted name, which always starts with a letter.
    if src.get(i) == Some(&b'.') && src.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
        i += 1;
        while i < src.len() && src[i].is_ascii_digit() {
            i += 1;
        }
    } else if src.get(i) == Some(&b'.') && !src.get(i + 1).is_some_and(|c| is_ident_continue(*c)) {
        // `1.` as a float literal.
        i += 1;
    }
    if matches!(src.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(src.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if src.get(j).is_some_and(|c| c.is_ascii_digit()) {
            i = j;
            while i < src.len() && src[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    if matches!(src.get(i), Some(b'U' | b'u')) {
        i += 1;
    }
    i
}

/// Position of the first `b` in `hay`. A plain loop; the compiler vectorises it well
/// enough for the short distances (one line) it is used on.
#[inline]
pub(crate) fn memchr(b: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&c| c == b)
}

/// Offset of the `*/` that ends a block comment whose body starts at `hay[0]`.
fn find_block_comment_end(hay: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(off) = memchr(b'*', &hay[i..]) {
        let at = i + off;
        if hay.get(at + 1) == Some(&b'/') {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Kind, &str)> {
        let mut lx = Lexer::new(src);
        let mut acc = Vec::new();
        loop {
            let t = lx.next_token();
            if t.kind == Kind::Eof {
                break;
            }
            acc.push((t.kind, &src[t.start as usize..t.end as usize]));
        }
        acc
    }

    #[test]
    fn lexes_opcode_with_modifiers_and_operands() {
        let got = kinds("ld.global.nc.v4.f32 {%f1, _}, [%rd1+-16]; // tail");
        let want = vec![
            (Kind::Ident, "ld"),
            (Kind::DotName, ".global"),
            (Kind::DotName, ".nc"),
            (Kind::DotName, ".v4"),
            (Kind::DotName, ".f32"),
            (Kind::Punct(b'{'), "{"),
            (Kind::Ident, "%f1"),
            (Kind::Punct(b','), ","),
            (Kind::Ident, "_"),
            (Kind::Punct(b'}'), "}"),
            (Kind::Punct(b','), ","),
            (Kind::Punct(b'['), "["),
            (Kind::Ident, "%rd1"),
            (Kind::Punct(b'+'), "+"),
            (Kind::Punct(b'-'), "-"),
            (Kind::Number, "16"),
            (Kind::Punct(b']'), "]"),
            (Kind::Punct(b';'), ";"),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn lexes_scoped_modifiers_special_registers_and_numbers() {
        let got = kinds(
            "cp.async.bulk.shared::cluster.L2::cache_hint mov %tid.x %r1.y %rx 0f3F800000 0d3FF0000000000000 0xFFU 1.5e-3 9.5",
        );
        let texts: Vec<&str> = got.iter().map(|it| it.1).collect();
        assert_eq!(
            texts,
            [
                "cp",
                ".async",
                ".bulk",
                ".shared::cluster",
                ".L2::cache_hint",
                "mov",
                "%tid.x",
                "%r1.y",
                "%rx",
                "0f3F800000",
                "0d3FF0000000000000",
                "0xFFU",
                "1.5e-3",
                "9.5"
            ]
        );
    }

    #[test]
    fn newlines_inside_comments_count() {
        let mut lx = Lexer::new("a /* x\n y */ b // c\nd");
        assert!(!lx.next_token().nl_before);
        assert!(lx.next_token().nl_before);
        assert!(lx.next_token().nl_before);
        assert_eq!(lx.next_token().kind, Kind::Eof);
    }

    /// The parser slices the source and builds diagnostic spans from token ends, so every
    /// token must start and end on a character boundary, for any non-ASCII input.
    #[test]
    fn tokens_start_and_end_on_character_boundaries() {
        let src = "é0%\u{FFFD}\n\"ab\\é\"c\\漢\n\"😀\nx.é %é a|😀 // é\n/* 漢 */é\"\\";
        let mut lx = Lexer::new(src);
        let mut n = 0;
        loop {
            let t = lx.next_token();
            let (s, e) = (t.start as usize, t.end as usize);
            assert!(src.is_char_boundary(s) && src.is_char_boundary(e), "{t:?}");
            if t.kind == Kind::Eof {
                break;
            }
            assert!(s < e, "{t:?} does not advance");
            n += 1;
        }
        assert!(n > 10, "{n} tokens");
    }

    #[test]
    fn binary_garbage_becomes_error_tokens_and_terminates() {
        let src = "\u{0}\u{1}é漢 add ### \u{7f}";
        let got = kinds(src);
        assert!(got.iter().any(|it| it.0 == Kind::Error));
        assert!(got.iter().any(|it| it.1 == "add"));
        let mut lx = Lexer::new("/* never closed");
        assert_eq!(lx.next_token().kind, Kind::Eof);
        assert_eq!(lx.unterminated_comment, Some(0));
    }
}
