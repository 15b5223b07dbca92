//! Instructions: the predicate guard, the opcode with its modifiers, and the operands
//! (registers, numbers, vectors, addresses).

use smallvec::SmallVec;

use super::Parser;
use super::lexicon::*;
use crate::ast::*;
use crate::lexer::{Kind, Token};
use crate::opcodes::is_known_opcode;

impl<'a> Parser<'a, '_> {
    pub(super) fn instruction(&mut self) -> Statement<'a> {
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
    pub(super) fn operand(&mut self, depth: u32) -> Option<Operand<'a>> {
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

    pub(super) fn number(&mut self, t: Token, negative: bool) -> Option<Operand<'a>> {
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
    pub(super) fn operand_list(&mut self, closer: u8, depth: u32) -> Option<Vec<Operand<'a>>> {
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
    pub(super) fn address(&mut self) -> Option<Operand<'a>> {
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

    pub(super) fn simple_address(&mut self) -> Option<Address<'a>> {
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
