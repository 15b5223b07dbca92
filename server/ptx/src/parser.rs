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

use smallvec::SmallVec;

use crate::ast::*;
use crate::lexer::{Kind, Lexer, Token};
use crate::opcodes::is_known_opcode;

/// The deepest nesting of `{` blocks and operand vectors that is parsed recursively.
/// Real PTX nests call-sequence scopes two or three deep; deeper input is skipped as one
/// error node without recursion.
const MAX_DEPTH: u32 = 64;

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

/// Directives that start a module-level item. Seen at the start of a line inside a body
/// they mean the body lost its `}`.
fn is_module_start(name: &str) -> bool {
    matches!(
        name,
        "version"
            | "target"
            | "address_size"
            | "file"
            | "visible"
            | "extern"
            | "weak"
            | "common"
            | "entry"
            | "func"
            | "section"
    )
}

/// Performance-tuning and attribute directives allowed between a function header and its
/// body (PTX ISA 9.x §11.4).
fn is_header_directive(name: &str) -> bool {
    matches!(
        name,
        "maxntid"
            | "reqntid"
            | "minnctapersm"
            | "maxnctapersm"
            | "maxnreg"
            | "pragma"
            | "noreturn"
            | "explicitcluster"
            | "reqnctapercluster"
            | "maxclusterrank"
            | "blocksareclusters"
            | "abi_preserve"
            | "abi_preserve_control"
    )
}

/// Every directive of PTX ISA 9.x §11; others get an "unknown directive" warning.
fn is_known_directive(name: &str) -> bool {
    is_module_start(name)
        || is_header_directive(name)
        || matches!(
            name,
            "alias"
                | "branchtargets"
                | "callprototype"
                | "calltargets"
                | "const"
                | "global"
                | "loc"
                | "local"
                | "param"
                | "reg"
                | "shared"
                | "sreg"
                | "tex"
                | "address_size"
        )
}

/// Directives terminated by `;` (the rest end at the end of the line).
fn is_semicolon_directive(name: &str) -> bool {
    matches!(
        name,
        "pragma" | "alias" | "callprototype" | "branchtargets" | "calltargets"
    )
}

fn is_state_space(name: &str) -> bool {
    matches!(
        name,
        "global" | "const" | "shared" | "local" | "param" | "tex"
    )
}

/// Fundamental and opaque type names (PTX ISA 9.x §5.2, §5.3).
pub(crate) fn is_type_name(name: &str) -> bool {
    matches!(
        name,
        "b8" | "b16"
            | "b32"
            | "b64"
            | "b128"
            | "s8"
            | "s16"
            | "s32"
            | "s64"
            | "s128"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "f16"
            | "f16x2"
            | "f32"
            | "f64"
            | "bf16"
            | "bf16x2"
            | "tf32"
            | "e4m3"
            | "e5m2"
            | "e4m3x2"
            | "e5m2x2"
            | "e2m3x2"
            | "e3m2x2"
            | "e2m1x2"
            | "ue8m0x2"
            | "pred"
            | "texref"
            | "samplerref"
            | "surfref"
    )
}

fn vector_width(name: &str) -> Option<u8> {
    match name {
        "v2" => Some(2),
        "v4" => Some(4),
        "v8" => Some(8),
        _ => None,
    }
}

/// Parses an integer literal (PTX ISA 9.x §4.5.1) without its sign. Values above
/// `i64::MAX` wrap (they are bit patterns such as `0xFFFFFFFFFFFFFFFF`).
pub(crate) fn parse_int(text: &str) -> Option<i64> {
    let t = text.strip_suffix(['U', 'u']).unwrap_or(text);
    let b = t.as_bytes();
    let (digits, radix) = if b.len() > 2 && b[0] == b'0' && matches!(b[1], b'x' | b'X') {
        (&t[2..], 16)
    } else if b.len() > 2 && b[0] == b'0' && matches!(b[1], b'b' | b'B') {
        (&t[2..], 2)
    } else if b.len() > 1 && b[0] == b'0' {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    if digits.is_empty() {
        return None;
    }
    let mut acc: u64 = 0;
    for c in digits.bytes() {
        let d = (c as char).to_digit(radix)?;
        acc = acc
            .checked_mul(u64::from(radix))?
            .checked_add(u64::from(d))?;
    }
    Some(acc as i64)
}

/// Parses a number token as an operand value; `None` when malformed.
fn parse_number(text: &str, negative: bool) -> Option<Operand<'static>> {
    let b = text.as_bytes();
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1], b'f' | b'F') {
        let hex = text.get(2..)?;
        if hex.len() != 8 {
            return None;
        }
        let bits = u32::from_str_radix(hex, 16).ok()?;
        let bits = if negative { bits ^ 0x8000_0000 } else { bits };
        return Some(Operand::Float(FloatLit::F32Bits(bits)));
    }
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1], b'd' | b'D') {
        let hex = text.get(2..)?;
        if hex.len() != 16 {
            return None;
        }
        let bits = u64::from_str_radix(hex, 16).ok()?;
        let bits = if negative {
            bits ^ 0x8000_0000_0000_0000
        } else {
            bits
        };
        return Some(Operand::Float(FloatLit::F64Bits(bits)));
    }
    let is_hex_or_bin = b.len() > 1 && b[0] == b'0' && matches!(b[1], b'x' | b'X' | b'b' | b'B');
    if !is_hex_or_bin && b.iter().any(|c| matches!(c, b'.' | b'e' | b'E')) {
        let v: f64 = text.parse().ok()?;
        return Some(Operand::Float(FloatLit::Decimal(if negative {
            -v
        } else {
            v
        })));
    }
    let v = parse_int(text)?;
    Some(Operand::Int(if negative { v.wrapping_neg() } else { v }))
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

    // ---- Module level ---------------------------------------------------------------

    pub(crate) fn parse_module(mut self) -> (Module<'a>, Vec<ParseError>) {
        let mut module = Module::default();
        while self.tok.kind != Kind::Eof {
            self.module_item(&mut module);
        }
        module.span = Span::new(0, self.src.len());
        if let Some(at) = self.lx.unterminated_comment {
            self.error(
                Span {
                    start: at,
                    end: self.src.len() as u32,
                },
                "unterminated `/*` comment".to_owned(),
            );
        }
        (module, self.errors)
    }

    /// Parses the module item at byte `start` as one function (see
    /// [`crate::reparse_function_at`]).
    pub(crate) fn function_at(mut self, start: u32) -> bool {
        self.lx.set_pos(start as usize);
        self.tok = self.lx.next_token();
        self.prev_end = start;
        let is_decl = self.tok.kind == Kind::DotName
            && matches!(
                self.dot_name(self.tok),
                "visible" | "extern" | "weak" | "common" | "entry" | "func"
            );
        if !is_decl {
            return false;
        }
        let mut module = Module::default();
        self.decl_item(&mut module);
        matches!(module.items.first(), Some(Item::Function(_)))
    }

    fn module_item(&mut self, module: &mut Module<'a>) {
        let tok = self.tok;
        match tok.kind {
            Kind::DotName => match self.dot_name(tok) {
                "version" => {
                    self.bump();
                    let parsed = if self.tok.kind == Kind::Number && !self.tok.nl_before {
                        let t = self.bump();
                        let text = self.text(t);
                        text.split_once('.')
                            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                    } else {
                        None
                    };
                    match parsed {
                        Some(v) => module.version = Some(v),
                        None => self.error(
                            Span {
                                start: tok.start,
                                end: self.prev_end,
                            },
                            "expected a version like `.version 9.0`".to_owned(),
                        ),
                    }
                    self.finish_line_directive();
                }
                "target" => {
                    self.bump();
                    while self.tok.kind == Kind::Ident && !self.tok.nl_before {
                        let t = self.bump();
                        module.target.push(self.text(t));
                        if !self.at(b',') || self.tok.nl_before {
                            break;
                        }
                        self.bump();
                    }
                    if module.target.is_empty() {
                        self.expected("a target such as `sm_90`");
                    }
                    self.finish_line_directive();
                }
                "address_size" => {
                    self.bump();
                    match self.number_u32() {
                        Some(n) => module.address_size = Some(n),
                        None => self.error(
                            Span {
                                start: tok.start,
                                end: self.prev_end.max(tok.end),
                            },
                            "expected `.address_size 32` or `64`".to_owned(),
                        ),
                    }
                    self.finish_line_directive();
                }
                "file" => self.file_directive(module),
                "section" => {
                    let span = self.section();
                    module.items.push(Item::Section(span));
                }
                name if is_state_space(name)
                    || matches!(
                        name,
                        "visible" | "extern" | "weak" | "common" | "entry" | "func"
                    ) =>
                {
                    self.decl_item(module);
                }
                name => {
                    if !is_known_directive(name) {
                        let span = Span {
                            start: tok.start,
                            end: tok.end,
                        };
                        self.warning(span, format!("unknown directive `.{name}`"));
                    }
                    let d = self.directive();
                    module.items.push(Item::Directive(d));
                }
            },
            Kind::Punct(b';') => {
                self.bump();
            }
            _ => {
                self.expected("a directive");
                let start = tok.start;
                self.bump();
                let mut end = tok.end;
                loop {
                    let t = self.tok;
                    if t.kind == Kind::Eof
                        || (t.kind == Kind::DotName && t.nl_before && self.is_module_resync(t))
                    {
                        break;
                    }
                    self.bump();
                    end = t.end;
                }
                module.items.push(Item::Error(Span { start, end }));
            }
        }
    }

    fn is_module_resync(&self, t: Token) -> bool {
        let name = self.dot_name(t);
        is_module_start(name) || matches!(name, "global" | "const")
    }

    /// After a line-terminated directive: anything left on the line is an error.
    fn finish_line_directive(&mut self) {
        if self.tok.kind != Kind::Eof && !self.tok.nl_before {
            if self.at(b';') {
                self.bump();
                return;
            }
            self.expected("the end of the line");
            self.skip_line();
        }
    }

    fn file_directive(&mut self, module: &mut Module<'a>) {
        let start = self.bump().start;
        let index = self.number_u32();
        let path = if self.tok.kind == Kind::Str && !self.tok.nl_before {
            let t = self.bump();
            let text = self.text(t);
            let inner = text.strip_prefix('"').unwrap_or(text);
            Some(inner.strip_suffix('"').unwrap_or(inner))
        } else {
            None
        };
        // Optional `, timestamp, size` (PTX ISA §11.5.3).
        while self.at(b',') && !self.tok.nl_before {
            self.bump();
            if self.tok.kind == Kind::Number && !self.tok.nl_before {
                self.bump();
            }
        }
        let span = Span {
            start,
            end: self.prev_end,
        };
        match (index, path) {
            (Some(index), Some(path)) => module.files.push(FileDirective { index, path, span }),
            _ => self.error(span, "expected `.file N \"path\"`".to_owned()),
        }
        self.finish_line_directive();
    }

    /// `.section .debug_xxx { ... }`: the body is skipped by a raw byte scan (strings and
    /// comments respected), because debug sections can be most of a `-G` file and only
    /// their extent matters.
    fn section(&mut self) -> Span {
        let start = self.bump().start;
        if self.tok.kind == Kind::DotName {
            self.bump();
        }
        if !self.at(b'{') {
            self.expected("`{` after `.section`");
            self.skip_line();
            return Span {
                start,
                end: self.prev_end,
            };
        }
        let bytes = self.src.as_bytes();
        let mut i = self.tok.end as usize;
        let mut depth = 1u32;
        while i < bytes.len() {
            match bytes[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    i += 2;
                    while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                        i += 1;
                    }
                    i += 1;
                }
                _ => {}
            }
            i += 1;
        }
        let end = i.min(bytes.len());
        if end >= bytes.len() {
            let span = Span {
                start,
                end: end as u32,
            };
            self.error(span, "unterminated `.section`: missing `}`".to_owned());
            self.lx.set_pos(end);
        } else {
            self.lx.set_pos(end + 1);
        }
        self.prev_end = (end + 1).min(bytes.len()) as u32;
        self.tok = self.lx.next_token();
        Span {
            start,
            end: self.prev_end,
        }
    }

    /// A directive kept verbatim (module or body level).
    fn directive(&mut self) -> Directive<'a> {
        let name_tok = self.bump();
        let name = self.dot_name(name_tok);
        let args_start = self.tok.start;
        let mut args_end = None;
        if is_semicolon_directive(name) {
            loop {
                match self.tok.kind {
                    Kind::Eof | Kind::Punct(b'{' | b'}') => {
                        self.expected("`;`");
                        break;
                    }
                    Kind::Punct(b';') => {
                        self.bump();
                        break;
                    }
                    _ => {
                        if self.tok.nl_before && self.tok.kind == Kind::DotName {
                            self.expected("`;`");
                            break;
                        }
                        args_end = Some(self.bump().end);
                    }
                }
            }
        } else {
            while self.tok.kind != Kind::Eof && !self.tok.nl_before {
                if self.at(b';') {
                    self.bump();
                    break;
                }
                args_end = Some(self.bump().end);
            }
        }
        let args = match args_end {
            Some(end) => self
                .src
                .get(args_start as usize..end as usize)
                .unwrap_or(""),
            None => "",
        };
        Directive {
            name,
            args,
            span: Span {
                start: name_tok.start,
                end: self.prev_end,
            },
        }
    }

    /// A linkage-prefixed or bare `.entry`/`.func`/variable at module level.
    fn decl_item(&mut self, module: &mut Module<'a>) {
        let start = self.tok.start;
        let linkage = self.linkage();
        if self.tok.kind == Kind::DotName {
            match self.dot_name(self.tok) {
                "entry" | "func" => {
                    let f = self.function(start, linkage);
                    module.items.push(Item::Function(f));
                    return;
                }
                name if is_state_space(name) => {
                    let mut vars = Vec::new();
                    self.var_decls(start, linkage, &mut vars);
                    module.items.extend(vars.into_iter().map(Item::Variable));
                    return;
                }
                _ => {}
            }
        }
        self.expected("`.entry`, `.func` or a state space");
        let end = self.recover_stmt();
        module.items.push(Item::Error(Span {
            start,
            end: end.max(start),
        }));
    }

    fn linkage(&mut self) -> Linkage {
        let mut linkage = Linkage::None;
        while self.tok.kind == Kind::DotName {
            linkage = match self.dot_name(self.tok) {
                "visible" => Linkage::Visible,
                "extern" => Linkage::Extern,
                "weak" => Linkage::Weak,
                "common" => Linkage::Common,
                _ => break,
            };
            self.bump();
        }
        linkage
    }

    fn function(&mut self, start: u32, linkage: Linkage) -> Function<'a> {
        let kind_tok = self.bump();
        let kind = if self.dot_name(kind_tok) == "entry" {
            FunctionKind::Entry
        } else {
            FunctionKind::Func
        };
        let mut return_params = Vec::new();
        if kind == FunctionKind::Func && self.at(b'(') {
            return_params = self.param_list();
        }
        let (name, name_span) = if self.tok.kind == Kind::Ident {
            let t = self.bump();
            (
                self.text(t),
                Span {
                    start: t.start,
                    end: t.end,
                },
            )
        } else {
            self.expected("a function name");
            (
                "",
                Span {
                    start: self.tok.start,
                    end: self.tok.start,
                },
            )
        };
        let params = if self.at(b'(') {
            self.param_list()
        } else {
            Vec::new()
        };
        let mut performance = Vec::new();
        while self.tok.kind == Kind::DotName && is_header_directive(self.dot_name(self.tok)) {
            performance.push(self.header_directive());
        }
        let mut f = Function {
            linkage,
            kind,
            name,
            name_span,
            return_params,
            params,
            performance,
            body: None,
            span: Span {
                start,
                end: self.prev_end,
            },
        };
        if self.at(b'{') {
            if let Some(sink) = self.sink.as_deref_mut() {
                sink.begin_body(&f);
            }
            f.body = Some(self.block());
        } else if !self.eat(b';') {
            self.expected("`{` or `;` after the function header");
        }
        f.span.end = self.prev_end;
        if let Some(sink) = self.sink.as_deref_mut() {
            sink.end_function(&f);
        }
        f
    }

    /// `.maxntid 256, 1, 1` and friends: arguments run to the next directive, `{` or `;`.
    fn header_directive(&mut self) -> Directive<'a> {
        let name_tok = self.bump();
        let name = self.dot_name(name_tok);
        let args_start = self.tok.start;
        let mut args_end = None;
        while !matches!(
            self.tok.kind,
            Kind::Eof | Kind::DotName | Kind::Punct(b'{' | b';' | b'}')
        ) {
            args_end = Some(self.bump().end);
        }
        let args = match args_end {
            Some(end) => self
                .src
                .get(args_start as usize..end as usize)
                .unwrap_or(""),
            None => "",
        };
        if name == "pragma" {
            self.eat(b';');
        }
        Directive {
            name,
            args,
            span: Span {
                start: name_tok.start,
                end: self.prev_end,
            },
        }
    }

    fn param_list(&mut self) -> Vec<Param<'a>> {
        self.bump(); // `(`
        let mut params = Vec::new();
        loop {
            if self.eat(b')') {
                break;
            }
            if self.tok.kind == Kind::DotName && matches!(self.dot_name(self.tok), "param" | "reg")
            {
                if let Some(p) = self.param() {
                    params.push(p);
                }
            } else {
                self.expected("`.param` or `.reg`");
            }
            if self.eat(b',') {
                continue;
            }
            if self.eat(b')') {
                break;
            }
            // Recovery inside a parameter list: skip to `,` or `)`, giving up at `{`/`;`.
            if self
                .errors
                .last()
                .is_none_or(|e| e.span.start != self.tok.start)
            {
                self.expected("`,` or `)`");
            }
            loop {
                match self.tok.kind {
                    Kind::Eof | Kind::Punct(b'{' | b';') => return params,
                    Kind::Punct(b',') | Kind::Punct(b')') => break,
                    _ => {
                        self.bump();
                    }
                }
            }
            if self.eat(b')') {
                break;
            }
            self.bump(); // `,`
        }
        params
    }

    fn param(&mut self) -> Option<Param<'a>> {
        let space_tok = self.bump();
        let space = self.dot_name(space_tok);
        let mut attributes = SmallVec::new();
        let mut align = None;
        let mut ty = "";
        while self.tok.kind == Kind::DotName {
            let n = self.dot_name(self.tok);
            self.bump();
            if n == "align" {
                align = self.number_u32();
            } else if ty.is_empty() && is_type_name(n) {
                ty = n;
            } else {
                attributes.push(n);
            }
        }
        if ty.is_empty() {
            let span = Span {
                start: space_tok.start,
                end: self.prev_end,
            };
            self.error(span, "parameter has no type".to_owned());
        }
        if self.tok.kind != Kind::Ident {
            self.expected("a parameter name");
            return None;
        }
        let name = self.bump_text();
        let array_dims = self.array_dims();
        Some(Param {
            space,
            attributes,
            align,
            ty,
            name,
            array_dims,
            span: Span {
                start: space_tok.start,
                end: self.prev_end,
            },
        })
    }

    fn array_dims(&mut self) -> SmallVec<[Option<u64>; 1]> {
        let mut dims = SmallVec::new();
        while self.at(b'[') {
            self.bump();
            let dim = if self.tok.kind == Kind::Number {
                let t = self.bump();
                let v = parse_int(self.text(t)).map(|v| v as u64);
                if v.is_none() {
                    let span = Span {
                        start: t.start,
                        end: t.end,
                    };
                    self.error(span, "invalid array dimension".to_owned());
                }
                v
            } else {
                None
            };
            dims.push(dim);
            if !self.eat(b']') {
                self.expected("`]`");
                break;
            }
        }
        dims
    }

    /// `[linkage] .space [.align N] [.vN] .type name[dims] [= init] {, name...};`.
    fn var_decls(&mut self, start: u32, linkage: Linkage, acc: &mut Vec<VarDecl<'a>>) {
        let first = acc.len();
        let space = self.bump_dot_name();
        let mut align = None;
        let mut vector = None;
        let mut ty = "";
        while self.tok.kind == Kind::DotName {
            let n = self.dot_name(self.tok);
            self.bump();
            if n == "align" {
                align = self.number_u32();
            } else if n == "attribute" {
                // `.attribute(.managed)`: skip the parenthesised list.
                if self.eat(b'(') {
                    while !matches!(self.tok.kind, Kind::Eof | Kind::Punct(b')' | b';')) {
                        self.bump();
                    }
                    self.eat(b')');
                }
            } else if let Some(w) = vector_width(n) {
                vector = Some(w);
            } else if ty.is_empty() && is_type_name(n) {
                ty = n;
            }
        }
        loop {
            if self.tok.kind != Kind::Ident {
                self.expected("a variable name");
                let end = self.recover_stmt();
                let _ = end;
                break;
            }
            let name_tok = self.bump();
            let name = self.text(name_tok);
            // `.param .b32 p<4>` style ranges are legal but unused by compilers; skip.
            if self.at(b'<') {
                while !matches!(self.tok.kind, Kind::Eof | Kind::Punct(b'>' | b';')) {
                    self.bump();
                }
                self.eat(b'>');
            }
            let array_dims = self.array_dims();
            let init = if self.eat(b'=') {
                Some(self.initialiser())
            } else {
                None
            };
            acc.push(VarDecl {
                linkage,
                space,
                align,
                vector,
                ty,
                name,
                name_span: Span {
                    start: name_tok.start,
                    end: name_tok.end,
                },
                array_dims,
                init,
                span: Span::default(),
            });
            if self.eat(b',') {
                continue;
            }
            if !self.eat(b';') {
                self.expected("`;` after the declaration");
                if !(self.tok.nl_before || matches!(self.tok.kind, Kind::Eof | Kind::Punct(b'}'))) {
                    self.recover_stmt();
                }
            }
            break;
        }
        let span = Span {
            start,
            end: self.prev_end,
        };
        for it in &mut acc[first..] {
            it.span = span;
        }
    }

    /// The text after `=` up to a `,` or `;` outside braces and parentheses.
    fn initialiser(&mut self) -> Span {
        let start = self.tok.start;
        let mut end = start;
        let mut depth = 0u32;
        loop {
            let t = self.tok;
            match t.kind {
                Kind::Eof => break,
                Kind::Punct(b';') => break,
                Kind::Punct(b',') if depth == 0 => break,
                Kind::Punct(b'{' | b'(') => depth += 1,
                Kind::Punct(b'}' | b')') => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                Kind::DotName if t.nl_before && self.is_module_resync(t) => break,
                _ => {}
            }
            end = self.bump().end;
        }
        if end == start {
            self.expected("an initialiser");
        }
        Span { start, end }
    }

    // ---- Bodies ---------------------------------------------------------------------

    fn block(&mut self) -> Block<'a> {
        let open = self.bump();
        self.depth += 1;
        // A plain growing `Vec`: copying each body out of a reused scratch buffer at its
        // exact size was measured slower (more system time), because glibc grows large
        // blocks with `mremap` instead of copying them.
        let mut statements = Vec::new();
        loop {
            match self.tok.kind {
                Kind::Punct(b'}') => {
                    self.bump();
                    break;
                }
                Kind::Eof => {
                    let span = Span {
                        start: open.start,
                        end: open.end,
                    };
                    self.error(
                        span,
                        "unclosed `{`: missing `}` before the end of the file".to_owned(),
                    );
                    break;
                }
                // Streaming: instructions, most statements, go straight to the sink
                // instead of through the statement vector (one 344-byte copy less).
                Kind::Punct(b'@') if self.sink.is_some() => {
                    let st = self.instruction();
                    if let Some(sink) = self.sink.as_deref_mut() {
                        sink.statement(&st);
                    }
                }
                Kind::Ident if self.sink.is_some() && !self.is_label(self.tok) => {
                    let st = self.instruction();
                    if let Some(sink) = self.sink.as_deref_mut() {
                        sink.statement(&st);
                    }
                }
                _ => {
                    let more = self.statement(&mut statements);
                    if let Some(sink) = self.sink.as_deref_mut() {
                        for st in &statements {
                            sink.statement(st);
                        }
                        statements.clear();
                    }
                    if !more {
                        let span = Span {
                            start: open.start,
                            end: open.end,
                        };
                        self.error(span, "unclosed `{`: missing `}` before the next function or module directive".to_owned());
                        break;
                    }
                }
            }
        }
        self.depth -= 1;
        Block {
            statements,
            span: Span {
                start: open.start,
                end: self.prev_end,
            },
        }
    }

    /// Parses one statement into `acc`. Returns `false` (consuming nothing) at a
    /// module-level directive, which means the enclosing body is missing its `}`.
    fn statement(&mut self, acc: &mut Vec<Statement<'a>>) -> bool {
        let tok = self.tok;
        match tok.kind {
            Kind::Punct(b'{') => {
                if self.depth >= MAX_DEPTH {
                    let span = self.skip_balanced();
                    self.error(span, "blocks nested too deeply".to_owned());
                    acc.push(Statement::Error(span));
                } else {
                    acc.push(Statement::Block(self.block()));
                }
            }
            Kind::Punct(b';') => {
                self.bump();
            }
            Kind::Punct(b'@') => acc.push(self.instruction()),
            Kind::Ident => {
                if self.is_label(tok) {
                    self.bump();
                    self.bump();
                    acc.push(Statement::Label {
                        name: self.text(tok),
                        span: Span {
                            start: tok.start,
                            end: tok.end,
                        },
                    });
                } else {
                    acc.push(self.instruction());
                }
            }
            Kind::DotName => {
                let name = self.dot_name(tok);
                match name {
                    "reg" => acc.push(self.reg_decl()),
                    "loc" => acc.push(self.loc()),
                    _ if is_state_space(name) => {
                        let mut vars = Vec::new();
                        self.var_decls(tok.start, Linkage::None, &mut vars);
                        acc.extend(vars.into_iter().map(Statement::Variable));
                    }
                    "extern" | "visible" | "weak" | "common" => {
                        let next = self.peek();
                        let next_name = if next.kind == Kind::DotName {
                            self.dot_name(next)
                        } else {
                            ""
                        };
                        if is_state_space(next_name) {
                            let linkage = self.linkage();
                            let mut vars = Vec::new();
                            self.var_decls(tok.start, linkage, &mut vars);
                            acc.extend(vars.into_iter().map(Statement::Variable));
                        } else {
                            return false;
                        }
                    }
                    _ if is_module_start(name) => return false,
                    _ => {
                        if !is_known_directive(name) {
                            let span = Span {
                                start: tok.start,
                                end: tok.end,
                            };
                            self.warning(span, format!("unknown directive `.{name}`"));
                        }
                        acc.push(Statement::Directive(self.directive()));
                    }
                }
            }
            _ => {
                self.expected("an instruction, label or directive");
                self.bump();
                let end = self.recover_stmt();
                acc.push(Statement::Error(Span {
                    start: tok.start,
                    end: end.max(tok.end),
                }));
            }
        }
        true
    }

    /// Skips a `{ ... }` region iteratively (for input nested beyond [`MAX_DEPTH`]).
    fn skip_balanced(&mut self) -> Span {
        let start = self.tok.start;
        let mut depth = 0u32;
        loop {
            match self.tok.kind {
                Kind::Eof => break,
                Kind::Punct(b'{') => depth += 1,
                Kind::Punct(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        break;
                    }
                }
                _ => {}
            }
            self.bump();
        }
        Span {
            start,
            end: self.prev_end,
        }
    }

    fn reg_decl(&mut self) -> Statement<'a> {
        let start = self.bump().start;
        let mut vector = None;
        let mut ty = "";
        while self.tok.kind == Kind::DotName {
            let n = self.dot_name(self.tok);
            self.bump();
            if let Some(w) = vector_width(n) {
                vector = Some(w);
            } else if n == "align" {
                self.number_u32();
            } else if ty.is_empty() {
                ty = n;
            }
        }
        if ty.is_empty() {
            self.expected("a register type");
        }
        let mut names = SmallVec::new();
        loop {
            if self.tok.kind != Kind::Ident {
                self.expected("a register name");
                let end = self.recover_stmt();
                return Statement::Error(Span {
                    start,
                    end: end.max(start),
                });
            }
            let name = self.bump_text();
            let mut range = None;
            if self.eat(b'<') {
                range = self.number_u32();
                if range.is_none() || !self.eat(b'>') {
                    self.expected("`N>` in a register range `%r<N>`");
                    let end = self.recover_stmt();
                    return Statement::Error(Span {
                        start,
                        end: end.max(start),
                    });
                }
            }
            names.push(RegName { name, range });
            if !self.eat(b',') {
                break;
            }
        }
        if !self.eat(b';') {
            self.expected("`;` after the register declaration");
            if !self.tok.nl_before {
                let end = self.recover_stmt();
                return Statement::Error(Span { start, end });
            }
        }
        Statement::RegDecl(RegDecl {
            ty,
            vector,
            names,
            span: Span {
                start,
                end: self.prev_end,
            },
        })
    }

    /// `.loc FILE LINE COL [, function_name LABEL[+N]] [, inlined_at FILE LINE COL]`.
    fn loc(&mut self) -> Statement<'a> {
        let start = self.bump().start;
        let mut nums = [0u32; 3];
        for it in &mut nums {
            match (self.tok.nl_before, self.number_u32()) {
                (false, Some(n)) => *it = n,
                _ => {
                    let span = Span {
                        start,
                        end: self.prev_end.max(start),
                    };
                    self.error(span, "expected `.loc FILE LINE COLUMN`".to_owned());
                    self.skip_line();
                    return Statement::Error(Span {
                        start,
                        end: self.prev_end.max(start),
                    });
                }
            }
        }
        let mut inlined_at = None;
        while self.at(b',') && !self.tok.nl_before {
            self.bump();
            let key = if self.tok.kind == Kind::Ident {
                self.bump_text()
            } else {
                ""
            };
            let ok = match key {
                "function_name" if self.tok.kind == Kind::Ident => {
                    self.bump();
                    if self.eat(b'+') {
                        self.number_u32();
                    }
                    true
                }
                "inlined_at" => {
                    let a = self.number_u32();
                    let b = self.number_u32();
                    let c = self.number_u32();
                    match (a, b, c) {
                        (Some(a), Some(b), Some(c)) => {
                            inlined_at = Some((a, b, c));
                            true
                        }
                        _ => false,
                    }
                }
                _ => false,
            };
            if !ok {
                self.expected("`function_name LABEL` or `inlined_at FILE LINE COL` in `.loc`");
                self.skip_line();
                break;
            }
        }
        self.eat(b';');
        Statement::Loc(Loc {
            file: nums[0],
            line: nums[1],
            column: nums[2],
            inlined_at,
            span: Span {
                start,
                end: self.prev_end,
            },
        })
    }

    // ---- Instructions ---------------------------------------------------------------

    fn instruction(&mut self) -> Statement<'a> {
        let start = self.tok.start;
        let mut guard = None;
        if self.at(b'@') {
            self.bump();
            let negated = self.eat(b'!');
            if self.tok.kind != Kind::Ident {
                self.expected("a predicate register after `@`");
                let end = self.recover_stmt();
                return Statement::Error(Span {
                    start,
                    end: end.max(start),
                });
            }
            let r = self.bump();
            guard = Some(Guard {
                negated,
                register: self.text(r),
                span: Span { start, end: r.end },
            });
        }
        if self.tok.kind != Kind::Ident {
            // The guard was consumed, so recovery makes progress without eating a brace.
            self.expected("an opcode");
            let end = self.recover_stmt();
            return Statement::Error(Span {
                start,
                end: end.max(start),
            });
        }
        let op_tok = self.bump();
        let opcode = self.text(op_tok);
        let mut modifiers = SmallVec::new();
        while self.tok.kind == Kind::DotName && self.tok.start == self.prev_end {
            let t = self.bump();
            modifiers.push(self.dot_name(t));
        }
        let mut operands = SmallVec::new();
        let mut operand_spans = SmallVec::new();
        let mut terminated = true;
        if !self.eat(b';') {
            loop {
                let op_start = self.tok.start;
                let Some(op) = self.operand(0) else {
                    let end = self.recover_stmt();
                    return Statement::Error(Span {
                        start,
                        end: end.max(start),
                    });
                };
                operands.push(op);
                operand_spans.push(Span {
                    start: op_start,
                    end: self.prev_end,
                });
                if self.eat(b',') {
                    continue;
                }
                if self.eat(b';') {
                    break;
                }
                if self.tok.nl_before {
                    // The statement ran off the end of its line: the mistake is there (a
                    // missing `;` or a stray word), not on the next line, which is often
                    // a valid instruction.
                    // The operand may end in a multi-byte character (an unterminated
                    // string, or an expression that swallowed stray UTF-8), so the span is
                    // the whole last character, not the last byte.
                    let at = self.char_before(self.prev_end);
                    self.error(
                        at,
                        "expected `,` or `;` before the end of the line".to_string(),
                    );
                } else {
                    self.expected("`,` or `;` after an operand");
                }
                let resumes_cleanly = matches!(self.tok.kind, Kind::Eof | Kind::Punct(b'}'))
                    || (self.tok.nl_before && self.starts_statement());
                if resumes_cleanly {
                    // Only the `;` is missing: keep the instruction.
                    terminated = false;
                    break;
                }
                let end = self.recover_stmt();
                return Statement::Error(Span {
                    start,
                    end: end.max(start),
                });
            }
        }
        let _ = terminated;
        let known_opcode = is_known_opcode(opcode);
        if !known_opcode {
            let span = Span {
                start: op_tok.start,
                end: op_tok.end,
            };
            self.warning(span, format!("unknown opcode `{opcode}`"));
        }
        Statement::Instruction(Instruction {
            guard,
            opcode,
            modifiers,
            operands,
            operand_spans,
            known_opcode,
            span: Span {
                start,
                end: self.prev_end,
            },
        })
    }

    /// One operand; on failure the error is recorded and `None` returned.
    fn operand(&mut self, depth: u32) -> Option<Operand<'a>> {
        let tok = self.tok;
        if depth > 4 {
            self.expected("an operand (vectors nested too deeply)");
            return None;
        }
        let primary = match tok.kind {
            Kind::Punct(b'{') => {
                self.bump();
                Operand::Vector(self.operand_list(b'}', depth + 1)?)
            }
            Kind::Punct(b'(') => {
                self.bump();
                Operand::List(self.operand_list(b')', depth + 1)?)
            }
            Kind::Punct(b'[') => return self.address(),
            Kind::Punct(b'!') => {
                self.bump();
                if self.tok.kind != Kind::Ident {
                    self.expected("a predicate after `!`");
                    return None;
                }
                Operand::NegatedRegister(self.bump_text())
            }
            Kind::Punct(b'-') => {
                self.bump();
                if self.tok.kind != Kind::Number {
                    self.expected("a number after `-`");
                    return None;
                }
                let t = self.bump();
                self.number(t, true)?
            }
            Kind::Number => {
                self.bump();
                self.number(tok, false)?
            }
            Kind::Ident => {
                self.bump();
                let name = self.text(tok);
                if self.at(b'|') && self.peek().kind == Kind::Ident {
                    self.bump();
                    let second = self.bump();
                    return Some(Operand::Pair(name, self.text(second)));
                }
                if name.starts_with('%') {
                    Operand::Register(name)
                } else {
                    Operand::Symbol(name)
                }
            }
            Kind::Str => {
                self.bump();
                Operand::Expr(self.text(tok))
            }
            _ => {
                self.expected("an operand");
                return None;
            }
        };
        // `sym+8`, `generic(sym)`, `a*4`: keep an expression as text.
        let continues = !self.tok.nl_before
            && matches!(
                primary,
                Operand::Register(_) | Operand::Symbol(_) | Operand::Int(_)
            )
            && matches!(
                self.tok.kind,
                Kind::Punct(
                    b'+' | b'-' | b'*' | b'/' | b'&' | b'|' | b'^' | b'<' | b'>' | b'(' | b'%'
                )
            );
        if !continues {
            return Some(primary);
        }
        let mut nesting = 0u32;
        loop {
            match self.tok.kind {
                Kind::Eof | Kind::Punct(b';' | b'{' | b'}' | b']') => break,
                Kind::Punct(b',') if nesting == 0 => break,
                Kind::Punct(b')') => {
                    if nesting == 0 {
                        break;
                    }
                    nesting -= 1;
                }
                Kind::Punct(b'(') => nesting += 1,
                _ if self.tok.nl_before => break,
                _ => {}
            }
            self.bump();
        }
        Some(Operand::Expr(
            self.src
                .get(tok.start as usize..self.prev_end as usize)
                .unwrap_or(""),
        ))
    }

    fn number(&mut self, t: Token, negative: bool) -> Option<Operand<'a>> {
        let parsed = parse_number(self.text(t), negative);
        if parsed.is_none() {
            let span = Span {
                start: t.start,
                end: t.end,
            };
            let msg = format!("invalid number literal {}", self.describe(t));
            self.error(span, msg);
        }
        parsed
    }

    /// Operands separated by `,` up to `closer`; the opener is already consumed.
    fn operand_list(&mut self, closer: u8, depth: u32) -> Option<Vec<Operand<'a>>> {
        let mut acc = Vec::new();
        if self.eat(closer) {
            return Some(acc);
        }
        loop {
            acc.push(self.operand(depth)?);
            if self.eat(b',') {
                continue;
            }
            if self.eat(closer) {
                return Some(acc);
            }
            self.expected(if closer == b'}' {
                "`,` or `}`"
            } else {
                "`,` or `)`"
            });
            return None;
        }
    }

    /// `[reg]`, `[reg+imm]`, `[reg+-imm]`, `[sym]`, `[sym+imm]`, `[imm]`; anything else in
    /// brackets (`[tex, {%f1, %f2}]`) becomes an [`Operand::Expr`] with the brackets.
    fn address(&mut self) -> Option<Operand<'a>> {
        let open = self.bump();
        let saved = (self.lx, self.tok, self.prev_end);
        if let Some(addr) = self.simple_address() {
            return Some(Operand::Address(addr));
        }
        (self.lx, self.tok, self.prev_end) = saved;
        let mut nesting = 0u32;
        loop {
            match self.tok.kind {
                Kind::Eof | Kind::Punct(b';') => break,
                Kind::Punct(b']') if nesting == 0 => {
                    self.bump();
                    return Some(Operand::Expr(
                        self.src
                            .get(open.start as usize..self.prev_end as usize)
                            .unwrap_or(""),
                    ));
                }
                Kind::Punct(b'[' | b'{' | b'(') => nesting += 1,
                Kind::Punct(b']' | b'}' | b')') => nesting = nesting.saturating_sub(1),
                _ if self.tok.nl_before && self.starts_statement() => break,
                _ => {}
            }
            self.bump();
        }
        let span = Span {
            start: open.start,
            end: open.end,
        };
        self.error(span, "unclosed `[` in an address operand".to_owned());
        None
    }

    fn simple_address(&mut self) -> Option<Address<'a>> {
        let base = match self.tok.kind {
            Kind::Ident => {
                let t = self.bump();
                let name = self.text(t);
                if name.starts_with('%') {
                    AddressBase::Register(name)
                } else {
                    AddressBase::Symbol(name)
                }
            }
            Kind::Number => {
                let t = self.bump();
                let offset = parse_int(self.text(t))?;
                if !self.eat(b']') {
                    return None;
                }
                return Some(Address {
                    base: AddressBase::Absolute,
                    offset,
                });
            }
            _ => return None,
        };
        if self.eat(b']') {
            return Some(Address { base, offset: 0 });
        }
        let mut negative = if self.eat(b'+') {
            false
        } else if self.eat(b'-') {
            true
        } else {
            return None;
        };
        if self.eat(b'-') {
            negative = !negative;
        }
        if self.tok.kind != Kind::Number {
            return None;
        }
        let t = self.bump();
        let v = parse_int(self.text(t))?;
        if !self.eat(b']') {
            return None;
        }
        Some(Address {
            base,
            offset: if negative { v.wrapping_neg() } else { v },
        })
    }
}
