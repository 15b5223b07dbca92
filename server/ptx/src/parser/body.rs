//! Function bodies: blocks, statements, register declarations and `.loc` lines.

use smallvec::SmallVec;

use super::{MAX_DEPTH, Parser};
use super::lexicon::*;
use crate::ast::*;
use crate::lexer::Kind;

impl<'a> Parser<'a, '_> {
    pub(super) fn block(&mut self) -> Block<'a> {
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
    pub(super) fn statement(&mut self, acc: &mut Vec<Statement<'a>>) -> bool {
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
    pub(super) fn skip_balanced(&mut self) -> Span {
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

    pub(super) fn reg_decl(&mut self) -> Statement<'a> {
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
    pub(super) fn loc(&mut self) -> Statement<'a> {
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
}
