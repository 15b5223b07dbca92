//! Instructions and their operands: what [`LowerSink`] does for each `ptx::Instruction`.

use super::*;

impl<'a> LowerSink<'a> {
    /// Lowers one operand onto the scratch stack (the elements of a vector or list are
    /// appended to the arena first, so each list's elements are contiguous), collecting
    /// the registers it mentions.
    pub(super) fn operand(&mut self, func: &mut Function, op: &ptx::Operand<'a>) {
        let lowered = match op {
            ptx::Operand::Register(r) => {
                let id = intern_reg(&mut self.regs, func, r);
                self.reg_scratch.push(id);
                Operand::Reg(id)
            }
            ptx::Operand::NegatedRegister(r) => {
                let id = intern_reg(&mut self.regs, func, r);
                self.reg_scratch.push(id);
                Operand::NegReg(id)
            }
            ptx::Operand::Int(v) => Operand::Imm(*v),
            ptx::Operand::Float(f) => Operand::Float(f.value()),
            ptx::Operand::Symbol(s) => Operand::Symbol(self.symbol(s)),
            ptx::Operand::Address(a) => {
                let base = match a.base {
                    ptx::AddressBase::Register(r) => {
                        let id = intern_reg(&mut self.regs, func, r);
                        self.reg_scratch.push(id);
                        AddrBase::Reg(id)
                    }
                    ptx::AddressBase::Symbol(s) => AddrBase::Symbol(self.symbol(s)),
                    ptx::AddressBase::Absolute => AddrBase::Absolute,
                };
                Operand::Addr {
                    base,
                    offset: a.offset,
                }
            }
            ptx::Operand::Vector(items) | ptx::Operand::List(items) => {
                let mark = self.op_scratch.len();
                for it in items {
                    self.operand(func, it);
                }
                let start = func.operands.len() as u32;
                let len = (self.op_scratch.len() - mark) as u32;
                func.operands.extend(self.op_scratch.drain(mark..));
                if matches!(op, ptx::Operand::Vector(_)) {
                    Operand::Vector { start, len }
                } else {
                    Operand::List { start, len }
                }
            }
            ptx::Operand::Pair(a, b) => {
                let mut half = |name: &'a str| {
                    name.starts_with('%').then(|| {
                        let id = intern_reg(&mut self.regs, func, name);
                        self.reg_scratch.push(id);
                        id
                    })
                };
                let (a, b) = (half(a), half(b));
                Operand::Pair(a, b)
            }
            ptx::Operand::Expr(text) => {
                // Bracketed texture/tensor operands and `sym+8`: record the registers
                // they name (all read).
                for name in op.registers() {
                    let id = intern_reg(&mut self.regs, func, name);
                    self.reg_scratch.push(id);
                }
                Operand::Expr(self.symbol(text))
            }
        };
        self.op_scratch.push(lowered);
    }

    pub(super) fn instr(&mut self, fs: &mut FnState<'a>, i: &ptx::Instruction<'a>) {
        let line = self.lines.line_of(i.span.start);
        let func = &mut fs.func;
        let id = func.instrs.len() as InstrId;
        let block_id = func.blocks.len() as BlockId;
        fs.open.get_or_insert_with(|| BasicBlock {
            instrs: id..id,
            ptx_line: line,
            ..BasicBlock::default()
        });
        let info = self.opcode(i);

        // Operands and registers.
        self.reg_scratch.clear();
        self.op_scratch.clear();
        let mut n_dst = 0usize;
        let writes_first = !first_operand_is_read(i.opcode);
        let is_call = i.opcode == "call";
        for (k, op) in i.operands.iter().enumerate() {
            let before = self.reg_scratch.len();
            self.operand(func, op);
            if k == 0 {
                let is_dst = matches!(
                    op,
                    ptx::Operand::Register(_) | ptx::Operand::Vector(_) | ptx::Operand::Pair(..)
                ) && writes_first
                    && i.operands.len() > 1;
                let call_ret =
                    is_call && matches!(op, ptx::Operand::List(_)) && i.operands.len() > 2;
                if is_dst || call_ret {
                    n_dst = self.reg_scratch.len() - before;
                }
            }
        }
        let guard = i.guard.map(|g| {
            let reg = intern_reg(&mut self.regs, func, g.register);
            self.reg_scratch.push(reg);
            Guard {
                reg,
                negated: g.negated,
            }
        });
        let op_start = func.operands.len() as u32;
        func.operands.append(&mut self.op_scratch);
        let op_end = func.operands.len() as u32;
        let regs_start = func.reg_refs.len() as u32;
        func.reg_refs.extend_from_slice(&self.reg_scratch);
        for &d in &self.reg_scratch[..n_dst] {
            if let Some(defs) = func.defs.get_mut(d as usize) {
                defs.push(id);
            }
        }

        // Symbols: calls, branch targets, and names that may be `.shared` variables. The
        // top-level lowered operands correspond one to one to the tree's operands.
        let mut callee_done = !is_call;
        for op in &i.operands {
            match op {
                ptx::Operand::Symbol(s) => {
                    fs.shared_candidates.push(s);
                    if !callee_done {
                        func.calls.push(CallSite {
                            instr: id,
                            callee: Some(s.to_string()),
                        });
                        callee_done = true;
                    }
                }
                ptx::Operand::Address(ptx::Address {
                    base: ptx::AddressBase::Symbol(s),
                    ..
                }) => fs.shared_candidates.push(s),
                ptx::Operand::Expr(text) => {
                    for part in text.split(|c: char| {
                        !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.')
                    }) {
                        fs.shared_candidates.push(part);
                    }
                }
                ptx::Operand::Register(_) if !callee_done => {
                    func.calls.push(CallSite {
                        instr: id,
                        callee: None,
                    });
                    callee_done = true;
                }
                _ => {}
            }
        }
        if i.opcode == "bra" {
            if let Some(ptx::Operand::Symbol(target)) = i.operands.first() {
                fs.branch_targets.push((block_id, target, i.span));
            }
        } else if i.opcode == "brx" {
            self.diagnostics.push(Diagnostic {
                severity: Severity::Info,
                message: "indirect branch (`brx`): its targets are not followed".into(),
                span: i.span,
                function: Some(func.name.clone()),
            });
        }

        func.instrs.push(Instr {
            opcode: info.text,
            base_len: info.base_len,
            class: info.class,
            guard,
            operands: op_start..op_end,
            regs_start,
            n_dst: u8::try_from(n_dst).unwrap_or(u8::MAX),
            n_src: u8::try_from(self.reg_scratch.len() - n_dst).unwrap_or(u8::MAX),
            loc: fs.cur_loc,
            block: block_id,
            ptx_line: line,
            span: i.span,
        });
        if matches!(i.opcode, "bra" | "brx" | "ret" | "exit" | "trap") {
            close_block(func, &mut fs.open, id + 1);
        }
    }
}
