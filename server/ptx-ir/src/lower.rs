//! Lowering a parsed PTX module (`ptx::Module`, which borrows the source text) into the
//! owned IR: module facts, per-function instructions with classes, registers and def-use,
//! basic blocks and the CFG. Dominators and loops are computed by the `loops` module.
//!
//! The pass is linear in the size of the module: every statement is visited once, opcode
//! strings and symbols are interned once per module (so millions of instructions share a
//! few hundred `Arc<str>`s), and PTX line numbers come from a cursor that moves forward
//! through the text.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use smallvec::SmallVec;

use crate::class::InstrClass;
use crate::classify::classify;
use crate::ir::*;

/// The multiply-rotate hash of rustc's `FxHasher` (rustc-hash crate): the interning maps
/// here are keyed by short register names and opcodes from trusted-enough input, where
/// SipHash's DoS resistance costs more than it buys.
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Lowers one parsed module. `src` must be the text `module` was parsed from (it is used
/// for PTX line numbers only; an empty string gives line 1 everywhere).
pub fn lower(module: &ptx::Module<'_>, src: &str) -> Module {
    let mut cx = ModuleCx::new(src);
    let mut res = Module {
        version: module.version,
        address_size: module.address_size,
        ..Module::default()
    };
    for item in &module.target {
        let item = item.trim();
        if res.target.is_none() && (item.starts_with("sm_") || item.starts_with("compute_")) {
            let digits: String = item
                .trim_start_matches("sm_")
                .trim_start_matches("compute_")
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            res.sm = digits.parse().ok();
            res.target = Some(item.to_string());
        } else {
            res.target_flags.push(item.to_string());
        }
    }
    res.files = module
        .files
        .iter()
        .map(|f| SourceFile {
            index: f.index,
            path: f.path.to_string(),
        })
        .collect();
    res.variables = module.variables().map(lower_var).collect();

    let shared_names: HashSet<&str> = module
        .variables()
        .filter(|v| v.space == "shared")
        .map(|v| v.name)
        .collect();
    let mut direct_shared: Vec<HashSet<String>> = Vec::new();
    res.functions.reserve_exact(module.items.len());
    for f in module.functions() {
        let (func, shared) = cx.lower_function(f, &shared_names, &mut res.diagnostics);
        res.functions.push(func);
        direct_shared.push(shared);
    }
    finish_shared(&mut res, &direct_shared);
    res
}

/// Parses and lowers in one call; parse errors are returned alongside.
pub fn parse_and_lower(src: &str) -> (Module, Vec<ptx::ParseError>) {
    let parse = ptx::parse(src);
    let module = lower(&parse.module, src);
    (module, parse.errors)
}

fn lower_linkage(l: ptx::Linkage) -> Linkage {
    match l {
        ptx::Linkage::None => Linkage::None,
        ptx::Linkage::Visible => Linkage::Visible,
        ptx::Linkage::Extern => Linkage::Extern,
        ptx::Linkage::Weak => Linkage::Weak,
        ptx::Linkage::Common => Linkage::Common,
    }
}

fn lower_var(v: &ptx::VarDecl<'_>) -> Variable {
    Variable {
        name: v.name.to_string(),
        space: VarSpace::from_name(v.space),
        ty: v.ty.to_string(),
        align: v.align,
        vector: v.vector,
        array_dims: v.array_dims.to_vec(),
        size_bytes: v.size_bytes(),
        linkage: lower_linkage(v.linkage),
        has_init: v.init.is_some(),
        span: v.span,
    }
}

fn lower_param(p: &ptx::Param<'_>) -> Param {
    let mut size = ptx::type_bytes(p.ty);
    for d in &p.array_dims {
        size = size.saturating_mul(d.unwrap_or(0));
    }
    Param {
        name: p.name.to_string(),
        ty: p.ty.to_string(),
        align: p.align,
        attributes: p.attributes.iter().map(|it| it.to_string()).collect(),
        size_bytes: size,
    }
}

fn parse_dims(args: &str) -> Option<[u32; 3]> {
    let mut res = [1u32; 3];
    let mut n = 0;
    for (i, part) in args.split(',').enumerate() {
        let v: u32 = part.trim().parse().ok()?;
        *res.get_mut(i)? = v;
        n += 1;
    }
    (n > 0).then_some(res)
}

fn lower_perf(dirs: &[ptx::Directive<'_>]) -> PerfDirectives {
    let mut res = PerfDirectives::default();
    for d in dirs {
        let args = d.args.trim();
        match d.name.trim_start_matches('.') {
            "maxntid" => res.maxntid = parse_dims(args),
            "reqntid" => res.reqntid = parse_dims(args),
            "minnctapersm" => res.minnctapersm = args.parse().ok(),
            "maxnreg" => res.maxnreg = args.parse().ok(),
            "noreturn" => res.noreturn = true,
            name => res.other.push((name.to_string(), args.to_string())),
        }
    }
    res
}

/// Counts lines forward through the source; rewinds (rarely) when asked for an earlier
/// offset.
struct LineCursor<'s> {
    src: &'s [u8],
    pos: usize,
    line: u32,
}

impl LineCursor<'_> {
    fn line_of(&mut self, offset: u32) -> u32 {
        let offset = (offset as usize).min(self.src.len());
        if offset < self.pos {
            self.pos = 0;
            self.line = 1;
        }
        let n = self.src[self.pos..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.line += n as u32;
        self.pos = offset;
        self.line
    }
}

/// An interned opcode: the shared string, the base length and the class.
#[derive(Clone)]
struct OpcodeInfo {
    text: Arc<str>,
    base_len: u8,
    class: InstrClass,
}

struct ModuleCx<'s> {
    lines: LineCursor<'s>,
    opcodes: FxMap<Box<str>, OpcodeInfo>,
    symbols: FxMap<Box<str>, Arc<str>>,
    buf: String,
}

/// Opcodes whose first register operand is read, not written.
fn first_operand_is_read(op: &str) -> bool {
    matches!(
        op,
        "bar"
            | "barrier"
            | "brx"
            | "bra"
            | "call"
            | "nanosleep"
            | "pmevent"
            | "trap"
            | "exit"
            | "ret"
            | "st"
            | "red"
            | "sust"
            | "sured"
            | "prefetch"
            | "prefetchu"
            | "stmatrix"
            | "membar"
            | "fence"
            | "setmaxnreg"
            | "griddepcontrol"
    )
}

/// One event of the flattened body.
enum Event<'p, 'a> {
    Label(&'a str, ptx::Span),
    Instr(&'p ptx::Instruction<'a>),
    Loc(ptx::Loc),
}

fn flatten<'p, 'a>(
    block: &'p ptx::Block<'a>,
    events: &mut Vec<Event<'p, 'a>>,
    regdecls: &mut Vec<&'p ptx::RegDecl<'a>>,
    vars: &mut Vec<&'p ptx::VarDecl<'a>>,
) {
    for st in &block.statements {
        match st {
            ptx::Statement::Instruction(i) => events.push(Event::Instr(i)),
            ptx::Statement::Label { name, span } => events.push(Event::Label(name, *span)),
            ptx::Statement::RegDecl(r) => regdecls.push(r),
            ptx::Statement::Variable(v) => vars.push(v),
            ptx::Statement::Loc(l) => events.push(Event::Loc(*l)),
            ptx::Statement::Block(b) => flatten(b, events, regdecls, vars),
            ptx::Statement::Directive(_) | ptx::Statement::Error(_) => {}
        }
    }
}

/// Per-function lowering state.
struct FnCx<'a> {
    reg_ids: FxMap<&'a str, RegId>,
    func: Function,
}

impl<'a> FnCx<'a> {
    fn intern_reg(&mut self, name: &'a str) -> RegId {
        if let Some(&id) = self.reg_ids.get(name) {
            return id;
        }
        let id = self.func.registers.len() as RegId;
        self.func.registers.push(Register {
            name: name.to_string(),
            ty: None,
            special: SpecialReg::from_name(name),
        });
        self.func.defs.push(SmallVec::new());
        self.reg_ids.insert(name, id);
        id
    }
}

impl<'s> ModuleCx<'s> {
    fn new(src: &'s str) -> Self {
        ModuleCx {
            lines: LineCursor {
                src: src.as_bytes(),
                pos: 0,
                line: 1,
            },
            opcodes: FxMap::default(),
            symbols: FxMap::default(),
            buf: String::new(),
        }
    }

    fn symbol(&mut self, s: &str) -> Arc<str> {
        if let Some(it) = self.symbols.get(s) {
            return it.clone();
        }
        let it: Arc<str> = Arc::from(s);
        self.symbols.insert(Box::from(s), it.clone());
        it
    }

    fn opcode(&mut self, i: &ptx::Instruction<'_>) -> OpcodeInfo {
        self.buf.clear();
        self.buf.push_str(i.opcode);
        for m in &i.modifiers {
            self.buf.push('.');
            self.buf.push_str(m);
        }
        if let Some(info) = self.opcodes.get(self.buf.as_str()) {
            return info.clone();
        }
        let info = OpcodeInfo {
            text: Arc::from(self.buf.as_str()),
            base_len: u8::try_from(i.opcode.len()).unwrap_or(u8::MAX),
            class: classify(i.opcode, &i.modifiers),
        };
        self.opcodes
            .insert(Box::from(self.buf.as_str()), info.clone());
        info
    }

    /// Lowers one operand into the arena (nested lists first, so each list's elements
    /// are contiguous), collecting the registers it mentions.
    fn operand<'a>(
        &mut self,
        fx: &mut FnCx<'a>,
        op: &ptx::Operand<'a>,
        regs: &mut SmallVec<[RegId; 6]>,
    ) -> Operand {
        match op {
            ptx::Operand::Register(r) => {
                let id = fx.intern_reg(r);
                regs.push(id);
                Operand::Reg(id)
            }
            ptx::Operand::NegatedRegister(r) => {
                let id = fx.intern_reg(r);
                regs.push(id);
                Operand::NegReg(id)
            }
            ptx::Operand::Int(v) => Operand::Imm(*v),
            ptx::Operand::Float(f) => Operand::Float(f.value()),
            ptx::Operand::Symbol(s) => Operand::Symbol(self.symbol(s)),
            ptx::Operand::Address(a) => {
                let base = match a.base {
                    ptx::AddressBase::Register(r) => {
                        let id = fx.intern_reg(r);
                        regs.push(id);
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
                let lowered: Vec<Operand> =
                    items.iter().map(|it| self.operand(fx, it, regs)).collect();
                let start = fx.func.operands.len() as u32;
                let len = lowered.len() as u32;
                fx.func.operands.extend(lowered);
                if matches!(op, ptx::Operand::Vector(_)) {
                    Operand::Vector { start, len }
                } else {
                    Operand::List { start, len }
                }
            }
            ptx::Operand::Pair(a, b) => {
                let mut half = |name: &'a str| {
                    name.starts_with('%').then(|| {
                        let id = fx.intern_reg(name);
                        regs.push(id);
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
                    let id = fx.intern_reg(name);
                    regs.push(id);
                }
                Operand::Expr(self.symbol(text))
            }
        }
    }

    fn lower_function<'a>(
        &mut self,
        f: &ptx::Function<'a>,
        shared_names: &HashSet<&str>,
        diags: &mut Vec<Diagnostic>,
    ) -> (Function, HashSet<String>) {
        let ptx_line = self.lines.line_of(f.name_span.start);
        let func = Function {
            name: f.name.to_string(),
            kind: match f.kind {
                ptx::FunctionKind::Entry => FunctionKind::Entry,
                ptx::FunctionKind::Func => FunctionKind::Func,
            },
            linkage: lower_linkage(f.linkage),
            has_body: f.body.is_some(),
            params: f.params.iter().map(lower_param).collect(),
            return_params: f.return_params.iter().map(lower_param).collect(),
            perf: lower_perf(&f.performance),
            span: f.span,
            name_span: f.name_span,
            ptx_line,
            instrs: Vec::new(),
            operands: Vec::new(),
            reg_refs: Vec::new(),
            locs: Vec::new(),
            registers: Vec::new(),
            reg_decls: Default::default(),
            defs: Vec::new(),
            variables: Vec::new(),
            calls: Vec::new(),
            blocks: Vec::new(),
            cfg: Default::default(),
            idom: Vec::new(),
            dom_pre: Vec::new(),
            dom_post: Vec::new(),
            loops: Vec::new(),
            shared_vars: Vec::new(),
            static_smem_bytes: 0,
            local_bytes: 0,
        };
        let mut fx = FnCx {
            reg_ids: FxMap::default(),
            func,
        };
        let mut shared_used: HashSet<String> = HashSet::new();
        let Some(body) = &f.body else {
            return (fx.func, shared_used);
        };
        // Old-style `.reg` parameters of `.func` are registers of the body.
        for p in f.params.iter().chain(&f.return_params) {
            if p.space == "reg" {
                fx.intern_reg(p.name);
            }
        }

        let mut events = Vec::new();
        let mut regdecls = Vec::new();
        let mut vars = Vec::new();
        flatten(body, &mut events, &mut regdecls, &mut vars);
        // Sizing the arenas up front avoids repeated reallocation (and the page faults of
        // copying) on functions with tens of thousands of instructions.
        let n_events = events.len();
        fx.func.instrs.reserve_exact(n_events);
        fx.func.operands.reserve(n_events * 3);
        fx.func.reg_refs.reserve(n_events * 3);
        // Registers: about as many as declared, but never trust a declaration like
        // `%r<4000000000>` for an allocation size: cap by the body's size.
        let declared: u64 = regdecls
            .iter()
            .flat_map(|d| d.names.iter())
            .map(|n| u64::from(n.range.unwrap_or(1)))
            .sum();
        let n_regs = declared.min(n_events as u64 * 3 + 16) as usize + 16;
        fx.reg_ids.reserve(n_regs);
        fx.func.registers.reserve_exact(n_regs);
        fx.func.defs.reserve_exact(n_regs);

        let mut labels: FxMap<&'a str, BlockId> = FxMap::default();
        // Per block under construction: start instr, labels, first line.
        let mut open: Option<BasicBlock> = None;
        let mut branch_targets: Vec<(BlockId, &'a str, ptx::Span)> = Vec::new();
        let mut cur_loc: u32 = u32::MAX;
        let mut regs: SmallVec<[RegId; 6]> = SmallVec::new();
        let mut top: SmallVec<[Operand; 4]> = SmallVec::new();

        for ev in events {
            match ev {
                Event::Loc(l) => {
                    let loc = SrcLoc {
                        file: l.file,
                        line: l.line,
                        column: l.column,
                        inlined_at: l.inlined_at,
                    };
                    if fx.func.locs.last() != Some(&loc) {
                        fx.func.locs.push(loc);
                    }
                    cur_loc = fx.func.locs.len() as u32 - 1;
                }
                Event::Label(name, span) => {
                    let line = self.lines.line_of(span.start);
                    let n_instrs = fx.func.instrs.len() as u32;
                    if open.as_ref().is_some_and(|b| b.instrs.start < n_instrs) {
                        close_block(&mut fx.func, &mut open, n_instrs);
                    }
                    let b = open.get_or_insert_with(|| BasicBlock {
                        instrs: n_instrs..n_instrs,
                        ptx_line: line,
                        ..BasicBlock::default()
                    });
                    b.labels.push(name.to_string());
                    let id = fx.func.blocks.len() as BlockId;
                    if labels.insert(name, id).is_some() {
                        diags.push(Diagnostic {
                            severity: Severity::Warning,
                            message: format!("label `{name}` is defined more than once"),
                            span,
                            function: Some(f.name.to_string()),
                        });
                    }
                }
                Event::Instr(i) => {
                    let line = self.lines.line_of(i.span.start);
                    let id = fx.func.instrs.len() as InstrId;
                    let block_id = fx.func.blocks.len() as BlockId;
                    open.get_or_insert_with(|| BasicBlock {
                        instrs: id..id,
                        ptx_line: line,
                        ..BasicBlock::default()
                    });
                    let info = self.opcode(i);

                    // Operands and registers.
                    regs.clear();
                    top.clear();
                    let mut n_dst = 0usize;
                    let writes_first = !first_operand_is_read(i.opcode);
                    for (k, op) in i.operands.iter().enumerate() {
                        let before = regs.len();
                        let lowered = self.operand(&mut fx, op, &mut regs);
                        let is_dst = k == 0
                            && matches!(
                                op,
                                ptx::Operand::Register(_)
                                    | ptx::Operand::Vector(_)
                                    | ptx::Operand::Pair(..)
                            )
                            && writes_first
                            && i.operands.len() > 1;
                        let call_ret = k == 0
                            && i.opcode == "call"
                            && matches!(op, ptx::Operand::List(_))
                            && i.operands.len() > 2;
                        if is_dst || call_ret {
                            n_dst = regs.len() - before;
                        }
                        top.push(lowered);
                    }
                    if let Some(g) = &i.guard {
                        let gid = fx.intern_reg(g.register);
                        regs.push(gid);
                    }
                    let op_start = fx.func.operands.len() as u32;
                    fx.func.operands.extend(top.drain(..));
                    let op_end = fx.func.operands.len() as u32;
                    let regs_start = fx.func.reg_refs.len() as u32;
                    fx.func.reg_refs.extend(regs.iter().copied());
                    for &d in &regs[..n_dst] {
                        if let Some(defs) = fx.func.defs.get_mut(d as usize) {
                            defs.push(id);
                        }
                    }

                    // Symbols: calls, branch targets, shared variables.
                    let mut callee_done = false;
                    for op in &fx.func.operands[op_start as usize..op_end as usize] {
                        match op {
                            Operand::Symbol(s) => {
                                if shared_names.contains(&**s) {
                                    shared_used.insert(s.to_string());
                                }
                                if i.opcode == "call" && !callee_done {
                                    fx.func.calls.push(CallSite {
                                        instr: id,
                                        callee: Some(s.to_string()),
                                    });
                                    callee_done = true;
                                }
                            }
                            Operand::Addr {
                                base: AddrBase::Symbol(s),
                                ..
                            } if shared_names.contains(&**s) => {
                                shared_used.insert(s.to_string());
                            }
                            Operand::Expr(text) => {
                                for part in text.split(|c: char| {
                                    !(c.is_ascii_alphanumeric() || "_$.".contains(c))
                                }) {
                                    if shared_names.contains(part) {
                                        shared_used.insert(part.to_string());
                                    }
                                }
                            }
                            Operand::Reg(_) if i.opcode == "call" && !callee_done => {
                                fx.func.calls.push(CallSite {
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
                            branch_targets.push((block_id, target, i.span));
                        }
                    } else if i.opcode == "brx" {
                        diags.push(Diagnostic {
                            severity: Severity::Info,
                            message: "indirect branch (`brx`): its targets are not followed".into(),
                            span: i.span,
                            function: Some(f.name.to_string()),
                        });
                    }

                    fx.func.instrs.push(Instr {
                        opcode: info.text,
                        base_len: info.base_len,
                        class: info.class,
                        guard: i.guard.map(|g| Guard {
                            reg: fx.reg_ids.get(g.register).copied().unwrap_or(0),
                            negated: g.negated,
                        }),
                        operands: op_start..op_end,
                        regs_start,
                        n_dst: u8::try_from(n_dst).unwrap_or(u8::MAX),
                        n_src: u8::try_from(regs.len() - n_dst).unwrap_or(u8::MAX),
                        loc: cur_loc,
                        block: block_id,
                        ptx_line: line,
                        span: i.span,
                    });
                    let terminator = matches!(i.opcode, "bra" | "brx" | "ret" | "exit" | "trap");
                    if terminator {
                        close_block(&mut fx.func, &mut open, id + 1);
                    }
                }
            }
        }
        let n_instrs = fx.func.instrs.len() as u32;
        if open.is_some() {
            close_block(&mut fx.func, &mut open, n_instrs);
        }

        // Edges.
        let n_blocks = fx.func.blocks.len() as BlockId;
        for (block, target, span) in branch_targets {
            match labels.get(target) {
                Some(&t) => {
                    if let Some(b) = fx.func.blocks.get_mut(block as usize) {
                        b.target = Some(t);
                    }
                }
                None => diags.push(Diagnostic {
                    severity: Severity::Error,
                    message: format!("branch to undefined label `{target}`"),
                    span,
                    function: Some(f.name.to_string()),
                }),
            }
        }
        for b in 0..n_blocks {
            let blk = &fx.func.blocks[b as usize];
            let mut succs: SmallVec<[BlockId; 2]> = SmallVec::new();
            let falls = match blk.terminator().map(|t| &fx.func.instrs[t as usize]) {
                Some(t) if matches!(t.base(), "bra" | "brx" | "ret" | "exit" | "trap") => {
                    if let Some(target) = blk.target {
                        succs.push(target);
                    }
                    t.guard.is_some()
                }
                _ => true,
            };
            if falls && b + 1 < n_blocks && !succs.contains(&(b + 1)) {
                succs.push(b + 1);
            }
            for &s in &succs {
                fx.func.blocks[s as usize].preds.push(b);
            }
            fx.func.blocks[b as usize].succs = succs;
        }

        // Registers: declared types and counts.
        let mut exact: FxMap<&str, Arc<str>> = FxMap::default();
        let mut prefixed: FxMap<&str, (Arc<str>, u32)> = FxMap::default();
        for d in &regdecls {
            for n in &d.names {
                match n.range {
                    Some(count) => {
                        prefixed.insert(n.name, (self.symbol(d.ty), count));
                        *fx.func.reg_decls.entry(d.ty.to_string()).or_insert(0) += count;
                    }
                    None => {
                        exact.insert(n.name, self.symbol(d.ty));
                        *fx.func.reg_decls.entry(d.ty.to_string()).or_insert(0) += 1;
                    }
                }
            }
        }
        for r in &mut fx.func.registers {
            if r.special.is_some() {
                continue;
            }
            if let Some(ty) = exact.get(r.name.as_str()) {
                r.ty = Some(ty.clone());
                continue;
            }
            let prefix = r.name.trim_end_matches(|c: char| c.is_ascii_digit());
            let index: Option<u32> = r.name[prefix.len()..].parse().ok();
            if let (Some((ty, count)), Some(index)) = (prefixed.get(prefix), index)
                && index < *count
            {
                r.ty = Some(ty.clone());
            }
        }

        // Body-level variables.
        for v in vars {
            let var = lower_var(v);
            match var.space {
                VarSpace::Local => fx.func.local_bytes += var.size_bytes.unwrap_or(0),
                VarSpace::Shared => {}
                _ => {}
            }
            fx.func.variables.push(var);
        }

        crate::loops::analyze(&mut fx.func, diags);
        (fx.func, shared_used)
    }
}

fn close_block(func: &mut Function, open: &mut Option<BasicBlock>, end: InstrId) {
    if let Some(mut b) = open.take() {
        b.instrs.end = end;
        func.blocks.push(b);
    }
}

/// Fills `shared_vars` (transitively through calls) and `static_smem_bytes`.
///
/// The byte count is an estimate of the `ptxas -v` "smem" figure: each variable is placed
/// at the next multiple of its `.align` in declaration order. ptxas may reorder variables or
/// drop unused ones, so its figure can differ by padding; when ptxas is available the
/// profile should prefer it (ResourceSource::Ptxas).
fn finish_shared(m: &mut Module, direct: &[HashSet<String>]) {
    let index: HashMap<&str, usize> = m
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.has_body)
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut results: Vec<(Vec<String>, u64)> = Vec::with_capacity(m.functions.len());
    // `seen[f] == fi + 1` marks `f` as visited in the walk from `fi`: one array for all
    // walks keeps this linear in the call graph instead of quadratic in functions.
    let mut seen = vec![0usize; m.functions.len()];
    let mut stack = Vec::new();
    for fi in 0..m.functions.len() {
        stack.clear();
        stack.push(fi);
        let mut used: HashSet<&str> = HashSet::new();
        // Body-level `.shared` variables of this function and of every function it calls
        // (nvcc "demotes" a `__shared__` used by one function into its body).
        let mut body_vars: Vec<&Variable> = Vec::new();
        while let Some(cur) = stack.pop() {
            if std::mem::replace(&mut seen[cur], fi + 1) == fi + 1 {
                continue;
            }
            if let Some(d) = direct.get(cur) {
                used.extend(d.iter().map(|s| s.as_str()));
            }
            let func = &m.functions[cur];
            body_vars.extend(
                func.variables
                    .iter()
                    .filter(|v| v.space == VarSpace::Shared),
            );
            for c in &func.calls {
                if let Some(&callee) = c.callee.as_deref().and_then(|n| index.get(n)) {
                    stack.push(callee);
                }
            }
        }
        let mut names: Vec<String> = used.iter().map(|s| s.to_string()).collect();
        names.sort();
        let mut bytes = 0u64;
        let module_vars = names
            .iter()
            .filter_map(|n| m.variables.iter().find(|v| &v.name == n));
        for v in module_vars.chain(body_vars) {
            if v.is_extern_array() {
                continue;
            }
            let align = u64::from(v.align.unwrap_or(1).max(1));
            bytes = bytes.div_ceil(align) * align + v.size_bytes.unwrap_or(0);
        }
        results.push((names, bytes));
    }
    for (f, (names, bytes)) in m.functions.iter_mut().zip(results) {
        f.shared_vars = names;
        f.static_smem_bytes = bytes;
    }
}
