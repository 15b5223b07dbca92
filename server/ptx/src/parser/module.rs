//! Module level: the items of a module (directives, `.file`, sections, variable
//! declarations, functions and their headers and parameters).

use smallvec::SmallVec;

use super::Parser;
use super::lexicon::*;
use crate::ast::*;
use crate::lexer::{Kind, Token};

impl<'a> Parser<'a, '_> {
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

    pub(super) fn module_item(&mut self, module: &mut Module<'a>) {
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

    pub(super) fn is_module_resync(&self, t: Token) -> bool {
        let name = self.dot_name(t);
        is_module_start(name) || matches!(name, "global" | "const")
    }

    /// After a line-terminated directive: anything left on the line is an error.
    pub(super) fn finish_line_directive(&mut self) {
        if self.tok.kind != Kind::Eof && !self.tok.nl_before {
            if self.at(b';') {
                self.bump();
                return;
            }
            self.expected("the end of the line");
            self.skip_line();
        }
    }

    pub(super) fn file_directive(&mut self, module: &mut Module<'a>) {
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
    pub(super) fn section(&mut self) -> Span {
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
    pub(super) fn directive(&mut self) -> Directive<'a> {
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
    pub(super) fn decl_item(&mut self, module: &mut Module<'a>) {
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

    pub(super) fn linkage(&mut self) -> Linkage {
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

    pub(super) fn function(&mut self, start: u32, linkage: Linkage) -> Function<'a> {
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
    pub(super) fn header_directive(&mut self) -> Directive<'a> {
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

    pub(super) fn param_list(&mut self) -> Vec<Param<'a>> {
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

    pub(super) fn param(&mut self) -> Option<Param<'a>> {
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

    pub(super) fn array_dims(&mut self) -> SmallVec<[Option<u64>; 1]> {
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
    pub(super) fn var_decls(&mut self, start: u32, linkage: Linkage, acc: &mut Vec<VarDecl<'a>>) {
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
    pub(super) fn initialiser(&mut self) -> Span {
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
}
