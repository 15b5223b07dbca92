//! Lowering a parsed PTX module (`ptx::Module`, which borrows the source text) into the
//! owned IR: module facts, per-function instructions with classes, registers and def-use,
//! basic blocks and the CFG. Dominators and loops are computed by the `loops` module.
//!
//! The pass is linear in the size of the module: every statement is visited once, opcode
//! strings and symbols are interned once per module (so millions of instructions share a
//! few hundred `Arc<str>`s), and PTX line numbers come from a cursor that moves forward
//! through the text.
//!
//! Both entry points drive one `LowerSink`, which lowers a function body statement by
//! statement: [`lower`] walks an existing tree, and [`parse_and_lower`] lets the parser
//! hand it each statement as soon as it is parsed (`ptx::parse_with_sink`), so the
//! statements of a large module never exist all at once. Sharing the sink is what keeps
//! the two results identical (a unit test below checks it on the test corpus).
//!
//! Where the time went before (callgrind instruction counts on a 3.4 MB module, see
//! docs/benchmarks.md), and what replaced it: a hash lookup per register use (now a
//! prefix compare and a vector index: `%r17` is `%r` and 17), building and hashing the
//! joined opcode string per instruction (now a lookup by the source text, where the
//! opcode and its modifiers are adjacent), a temporary `Vec` per vector operand (now one
//! scratch stack), a byte-at-a-time newline count, and a `.shared` name lookup per
//! operand (now once per function, after the module's variables are all known).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use smallvec::SmallVec;

use crate::class::InstrClass;
use crate::classify::classify;
use crate::ir::*;

mod decls;
mod instr;
mod lookup;

use decls::*;
use lookup::*;

/// The interning maps here are keyed by short register names, opcodes and symbols from
/// trusted-enough input, where SipHash's DoS resistance costs more than it buys: rustc's
/// Fx hash ([`rustc_hash`]) instead. Nothing iterates these maps, so the hash never
/// decides an output order.
pub(crate) type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;
pub(crate) type FxSet<K> = rustc_hash::FxHashSet<K>;

/// Lowers one parsed module. `src` must be the text `module` was parsed from (it is used
/// for PTX line numbers only; an empty string gives line 1 everywhere).
pub fn lower<'a>(module: &ptx::Module<'a>, src: &'a str) -> Module {
    let mut sink = LowerSink::new(src);
    for f in module.functions() {
        if let Some(body) = &f.body {
            sink.begin(f);
            for st in &body.statements {
                sink.stmt(st);
            }
        }
        sink.end(f);
    }
    sink.finish(module)
}

/// Parses and lowers in one call; parse errors are returned alongside. The result is
/// identical to `lower(&ptx::parse(src).module, src)`, but each function body is lowered
/// while it is parsed, so no syntax tree of the bodies is ever built.
pub fn parse_and_lower(src: &str) -> (Module, Vec<ptx::ParseError>) {
    let mut sink = LowerSink::new(src);
    let parse = ptx::parse_with_sink(src, &mut sink);
    let module = sink.finish(&parse.module);
    (module, parse.errors)
}

/// Like [`parse_and_lower`], but the body of every `.entry` is dropped once it has been
/// lowered (its diagnostics, `.shared` use and calls are kept; its instructions, registers,
/// blocks and loops are not). [`lower_entry`] lowers one again from the text.
///
/// Why: the lowered form is several times the size of the text (about 340 bytes per
/// instruction), and a caller that analyses and reports the kernels one at a time (the
/// CLI) need not hold all of them: with a 100 MB module that was most of the memory.
pub fn parse_and_lower_stripped(src: &str) -> (Module, Vec<ptx::ParseError>) {
    let mut sink = LowerSink::new(src);
    sink.strip_entries = true;
    let parse = ptx::parse_with_sink(src, &mut sink);
    let module = sink.finish(&parse.module);
    (module, parse.errors)
}

/// The function at `index` of `module` (from [`parse_and_lower_stripped`] or
/// [`parse_and_lower`] of the same `src`), lowered again from `src`: identical to what
/// [`parse_and_lower`] gives (a unit test below checks it on the test corpus). `None` when
/// it is not an `.entry` with a body.
pub fn lower_entry(src: &str, module: &Module, index: usize) -> Option<Function> {
    let stub = module.functions.get(index)?;
    if stub.kind != FunctionKind::Entry || !stub.has_body {
        return None;
    }
    let mut sink = LowerSink::new(src);
    // Line numbers count from the function, not from the start of the text: the line of
    // its name is known.
    sink.lines.pos = (stub.name_span.start as usize).min(src.len());
    sink.lines.line = stub.ptx_line;
    if !ptx::reparse_function_at(src, stub.span.start, &mut sink) {
        return None;
    }
    let (mut func, _) = sink.functions.pop()?;
    if func.name != stub.name {
        return None;
    }
    // Computed over the whole module (calls and module-level variables) when it was first
    // lowered.
    func.shared_vars = stub.shared_vars.clone();
    func.static_smem_bytes = stub.static_smem_bytes;
    Some(func)
}


/// An interned opcode: the shared string, the base length and the class.
#[derive(Clone)]
struct OpcodeInfo {
    text: Arc<str>,
    base_len: u8,
    class: InstrClass,
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


/// The function a [`LowerSink`] is lowering.
struct FnState<'a> {
    func: Function,
    labels: FxMap<&'a str, BlockId>,
    /// The block under construction.
    open: Option<BasicBlock>,
    branch_targets: Vec<(BlockId, &'a str, ptx::Span)>,
    cur_loc: u32,
    /// `.reg` declarations in source order: (type, name or range prefix, range).
    regdecls: Vec<(&'a str, &'a str, Option<u32>)>,
    /// Names this function uses that may be module-level `.shared` variables; resolved in
    /// [`LowerSink::finish`], once every module-level variable is known.
    shared_candidates: Vec<&'a str>,
}

/// Lowers function bodies statement by statement; see the module docs.
struct LowerSink<'a> {
    lines: LineCursor<'a>,
    src: &'a str,
    opcodes: FxMap<&'a str, OpcodeInfo>,
    symbols: FxMap<&'a str, Arc<str>>,
    buf: String,
    regs: RegTable<'a>,
    /// Boxed: it is taken out and put back for every statement.
    cur: Option<Box<FnState<'a>>>,
    /// Finished functions in source order, each with its `.shared` candidates.
    functions: Vec<(Function, Vec<&'a str>)>,
    diagnostics: Vec<Diagnostic>,
    /// Scratch: the registers of the current instruction.
    reg_scratch: SmallVec<[RegId; 8]>,
    /// Scratch: lowered operands waiting to be appended to the arena. Used as a stack, so
    /// the elements of a vector are appended before the operands that contain it.
    op_scratch: Vec<Operand>,
    /// Drop `.entry` bodies once lowered ([`parse_and_lower_stripped`]).
    strip_entries: bool,
    /// Arenas of the previous function, emptied but with their capacity: the current
    /// function grows into them, and [`compact`] moves the result into exactly sized
    /// vectors. The sizes are unknown while streaming, and growing fresh vectors cost a
    /// chain of reallocations per function (about 6% of lowering in callgrind).
    spare: Spare,
}

#[derive(Default)]
struct Spare {
    instrs: Vec<Instr>,
    operands: Vec<Operand>,
    reg_refs: Vec<RegId>,
    registers: Vec<Register>,
    defs: Vec<SmallVec<[InstrId; 1]>>,
}

/// Moves `field`'s elements into a vector of exactly their number and leaves the emptied
/// buffer (with its capacity) in `spare` for the next function.
fn compact<T>(field: &mut Vec<T>, spare: &mut Vec<T>) {
    let mut exact = Vec::with_capacity(field.len());
    exact.append(field);
    *spare = std::mem::replace(field, exact);
}

impl<'a> ptx::BodySink<'a> for LowerSink<'a> {
    fn begin_body(&mut self, header: &ptx::Function<'a>) {
        self.begin(header);
    }
    fn statement(&mut self, statement: &ptx::Statement<'a>) {
        self.stmt(statement);
    }
    fn end_function(&mut self, function: &ptx::Function<'a>) {
        self.end(function);
    }
}

fn new_function(f: &ptx::Function<'_>, ptx_line: u32) -> Function {
    Function {
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
        local_forwards: Vec::new(),
    }
}

impl<'a> LowerSink<'a> {
    fn new(src: &'a str) -> Self {
        LowerSink {
            lines: LineCursor {
                src: src.as_bytes(),
                pos: 0,
                line: 1,
            },
            src,
            opcodes: FxMap::default(),
            symbols: FxMap::default(),
            buf: String::new(),
            regs: RegTable::default(),
            cur: None,
            functions: Vec::new(),
            diagnostics: Vec::new(),
            reg_scratch: SmallVec::new(),
            op_scratch: Vec::new(),
            strip_entries: false,
            spare: Spare::default(),
        }
    }

    fn symbol(&mut self, s: &'a str) -> Arc<str> {
        if let Some(it) = self.symbols.get(s) {
            return it.clone();
        }
        let it: Arc<str> = Arc::from(s);
        self.symbols.insert(s, it.clone());
        it
    }

    /// The opcode with its modifiers as written (`ld.global.nc.v4.f32`), borrowed from
    /// `src`. The parser only accepts modifiers adjacent to the opcode, so when the tree's
    /// slices point into `src` (they do when `src` is the parsed text, as documented) the
    /// joined opcode is a slice of it. Checked, not assumed: `None` (and the caller joins
    /// the parts) unless every modifier starts right after a `.` that follows the previous
    /// part.
    fn opcode_text(&self, i: &ptx::Instruction<'a>) -> Option<&'a str> {
        let base = self.src.as_ptr() as usize;
        let start = (i.opcode.as_ptr() as usize).checked_sub(base)?;
        let mut end = start + i.opcode.len();
        let bytes = self.src.as_bytes();
        for m in &i.modifiers {
            if bytes.get(end) != Some(&b'.') || m.as_ptr() as usize != base + end + 1 {
                return None;
            }
            end += 1 + m.len();
        }
        self.src.get(start..end)
    }

    fn opcode(&mut self, i: &ptx::Instruction<'a>) -> OpcodeInfo {
        let key = match self.opcode_text(i) {
            Some(text) => text,
            None => {
                self.buf.clear();
                self.buf.push_str(i.opcode);
                for m in &i.modifiers {
                    self.buf.push('.');
                    self.buf.push_str(m);
                }
                // Not a slice of the source: intern the joined text under its own key.
                if let Some(info) = self.opcodes.get(self.buf.as_str()) {
                    return info.clone();
                }
                let info = OpcodeInfo {
                    text: Arc::from(self.buf.as_str()),
                    base_len: u8::try_from(i.opcode.len()).unwrap_or(u8::MAX),
                    class: classify(i.opcode, &i.modifiers),
                };
                return info;
            }
        };
        if let Some(info) = self.opcodes.get(key) {
            return info.clone();
        }
        let info = OpcodeInfo {
            text: Arc::from(key),
            base_len: u8::try_from(i.opcode.len()).unwrap_or(u8::MAX),
            class: classify(i.opcode, &i.modifiers),
        };
        self.opcodes.insert(key, info.clone());
        info
    }

    /// Starts a function with a body: its header line and its `.reg` parameters.
    fn begin(&mut self, f: &ptx::Function<'a>) {
        let ptx_line = self.lines.line_of(f.name_span.start);
        let mut func = new_function(f, ptx_line);
        func.instrs = std::mem::take(&mut self.spare.instrs);
        func.operands = std::mem::take(&mut self.spare.operands);
        func.reg_refs = std::mem::take(&mut self.spare.reg_refs);
        func.registers = std::mem::take(&mut self.spare.registers);
        func.defs = std::mem::take(&mut self.spare.defs);
        self.regs.clear();
        // Old-style `.reg` parameters of `.func` are registers of the body.
        for p in f.params.iter().chain(&f.return_params) {
            if p.space == "reg" {
                intern_reg(&mut self.regs, &mut func, p.name);
            }
        }
        self.cur = Some(Box::new(FnState {
            func,
            labels: FxMap::default(),
            open: None,
            branch_targets: Vec::new(),
            cur_loc: u32::MAX,
            regdecls: Vec::new(),
            shared_candidates: Vec::new(),
        }));
    }

    fn stmt(&mut self, st: &ptx::Statement<'a>) {
        let Some(mut fs) = self.cur.take() else {
            return;
        };
        self.stmt_in(&mut fs, st);
        self.cur = Some(fs);
    }

    fn stmt_in(&mut self, fs: &mut FnState<'a>, st: &ptx::Statement<'a>) {
        match st {
            ptx::Statement::Instruction(i) => self.instr(fs, i),
            ptx::Statement::Label { name, span } => {
                let line = self.lines.line_of(span.start);
                let n_instrs = fs.func.instrs.len() as u32;
                if fs.open.as_ref().is_some_and(|b| b.instrs.start < n_instrs) {
                    close_block(&mut fs.func, &mut fs.open, n_instrs);
                }
                let b = fs.open.get_or_insert_with(|| BasicBlock {
                    instrs: n_instrs..n_instrs,
                    ptx_line: line,
                    ..BasicBlock::default()
                });
                b.labels.push(name.to_string());
                let id = fs.func.blocks.len() as BlockId;
                if fs.labels.insert(name, id).is_some() {
                    self.diagnostics.push(Diagnostic {
                        severity: Severity::Warning,
                        message: format!("label `{name}` is defined more than once"),
                        span: *span,
                        function: Some(fs.func.name.clone()),
                    });
                }
            }
            ptx::Statement::RegDecl(d) => {
                let mut declared = 0usize;
                for n in &d.names {
                    fs.regdecls.push((d.ty, n.name, n.range));
                    declared += n.range.map_or(1, |r| r as usize);
                }
                // Compilers declare every register up front, so this sizes the register
                // tables once instead of growing them. Capped by what the rest of the
                // text could mention, so `%r<4000000000>` cannot allocate much.
                let rest = self.src.len().saturating_sub(d.span.end as usize) / 3;
                let want = declared.min(rest) + 16;
                let have = fs.func.registers.capacity() - fs.func.registers.len();
                if want > have {
                    fs.func.registers.reserve(want);
                    fs.func.defs.reserve(want);
                }
            }
            ptx::Statement::Variable(v) => {
                let var = lower_var(v);
                if var.space == VarSpace::Local {
                    fs.func.local_bytes += var.size_bytes.unwrap_or(0);
                }
                fs.func.variables.push(var);
            }
            ptx::Statement::Loc(l) => {
                let loc = SrcLoc {
                    file: l.file,
                    line: l.line,
                    column: l.column,
                    inlined_at: l.inlined_at,
                };
                if fs.func.locs.last() != Some(&loc) {
                    fs.func.locs.push(loc);
                }
                fs.cur_loc = fs.func.locs.len() as u32 - 1;
            }
            ptx::Statement::Block(b) => {
                for st in &b.statements {
                    self.stmt_in(fs, st);
                }
            }
            ptx::Statement::Directive(d) if d.name == "pragma" && d.args.contains("nounroll") => {
                let n_instrs = fs.func.instrs.len() as u32;
                let b = fs.open.get_or_insert_with(|| BasicBlock {
                    instrs: n_instrs..n_instrs,
                    ptx_line: self.lines.line_of(d.span.start),
                    ..BasicBlock::default()
                });
                b.no_unroll = true;
            }
            ptx::Statement::Directive(_) | ptx::Statement::Error(_) => {}
        }
    }

    /// Finishes a function: blocks, edges, register types, loops. A prototype (no
    /// [`LowerSink::begin`]) becomes a function without instructions.
    fn end(&mut self, f: &ptx::Function<'a>) {
        let Some(mut fs) = self.cur.take() else {
            let ptx_line = self.lines.line_of(f.name_span.start);
            self.functions.push((new_function(f, ptx_line), Vec::new()));
            return;
        };
        // The header seen by `begin` ended before the body; the span and body flag are
        // only final now.
        fs.func.span = f.span;
        fs.func.has_body = f.body.is_some();
        let func = &mut fs.func;
        let n_instrs = func.instrs.len() as u32;
        if fs.open.is_some() {
            close_block(func, &mut fs.open, n_instrs);
        }

        // Edges.
        let n_blocks = func.blocks.len() as BlockId;
        for (block, target, span) in fs.branch_targets.drain(..) {
            match fs.labels.get(target) {
                Some(&t) => {
                    if let Some(b) = func.blocks.get_mut(block as usize) {
                        b.target = Some(t);
                    }
                }
                None => self.diagnostics.push(Diagnostic {
                    severity: Severity::Error,
                    message: format!("branch to undefined label `{target}`"),
                    span,
                    function: Some(f.name.to_string()),
                }),
            }
        }
        for b in 0..n_blocks {
            let blk = &func.blocks[b as usize];
            let mut succs: SmallVec<[BlockId; 2]> = SmallVec::new();
            let falls = match blk.terminator().map(|t| &func.instrs[t as usize]) {
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
                func.blocks[s as usize].preds.push(b);
            }
            func.blocks[b as usize].succs = succs;
        }

        // Registers: declared types and counts. A later declaration of the same name or
        // range prefix wins, as with a map; the lists are short (nvcc declares one range
        // per type), so they are scanned instead of hashed.
        let mut exact: FxMap<&str, Arc<str>> = FxMap::default();
        let mut prefixed: Vec<(&str, Arc<str>, u32)> = Vec::new();
        for &(ty, name, range) in &fs.regdecls {
            match range {
                Some(count) => {
                    let ty = self.symbol(ty);
                    match prefixed.iter_mut().find(|(p, _, _)| *p == name) {
                        Some(it) => *it = (name, ty.clone(), count),
                        None => prefixed.push((name, ty.clone(), count)),
                    }
                    *func.reg_decls.entry(ty.to_string()).or_insert(0) += count;
                }
                None => {
                    exact.insert(name, self.symbol(ty));
                    *func.reg_decls.entry(ty.to_string()).or_insert(0) += 1;
                }
            }
        }
        if !exact.is_empty() || !prefixed.is_empty() {
            for r in &mut func.registers {
                if r.special.is_some() {
                    continue;
                }
                if !exact.is_empty()
                    && let Some(ty) = exact.get(r.name.as_str())
                {
                    r.ty = Some(ty.clone());
                    continue;
                }
                let prefix = r.name.trim_end_matches(|c: char| c.is_ascii_digit());
                let Some((_, ty, count)) = prefixed.iter().find(|(p, _, _)| *p == prefix) else {
                    continue;
                };
                let index: Option<u32> = r.name[prefix.len()..].parse().ok();
                if index.is_some_and(|index| index < *count) {
                    r.ty = Some(ty.clone());
                }
            }
        }

        func.local_forwards = crate::local_slot::forwards(func);
        crate::loops::analyze(func, &mut self.diagnostics);
        if self.strip_entries && func.kind == FunctionKind::Entry {
            strip_body(func, &mut self.spare);
            let fs = *fs;
            self.functions.push((fs.func, fs.shared_candidates));
            return;
        }
        compact(&mut func.instrs, &mut self.spare.instrs);
        compact(&mut func.operands, &mut self.spare.operands);
        compact(&mut func.reg_refs, &mut self.spare.reg_refs);
        compact(&mut func.registers, &mut self.spare.registers);
        compact(&mut func.defs, &mut self.spare.defs);
        let fs = *fs;
        self.functions.push((fs.func, fs.shared_candidates));
    }

    /// Module-level facts, `.shared` usage and sizes; consumes the lowered functions.
    fn finish(self, module: &ptx::Module<'_>) -> Module {
        let mut res = Module {
            version: module.version,
            address_size: module.address_size,
            diagnostics: self.diagnostics,
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

        let shared_names: FxMap<&str, ()> = module
            .variables()
            .filter(|v| v.space == "shared")
            .map(|v| (v.name, ()))
            .collect();
        let mut direct_shared: Vec<HashSet<String>> = Vec::with_capacity(self.functions.len());
        res.functions.reserve_exact(self.functions.len());
        for (func, candidates) in self.functions {
            let mut used = HashSet::new();
            if !shared_names.is_empty() {
                for c in candidates {
                    if shared_names.contains_key(c) && !used.contains(c) {
                        used.insert(c.to_string());
                    }
                }
            }
            res.functions.push(func);
            direct_shared.push(used);
        }
        finish_shared(&mut res, &direct_shared);
        res
    }
}

/// Empties a lowered body, keeping the header, the calls and the body's variables (what
/// the module-level `.shared` accounting reads), and the arenas' capacity for the next
/// function.
fn strip_body(func: &mut Function, spare: &mut Spare) {
    fn recycle<T>(field: &mut Vec<T>, spare: &mut Vec<T>) {
        field.clear();
        if field.capacity() > spare.capacity() {
            *spare = std::mem::take(field);
        } else {
            *field = Vec::new();
        }
    }
    recycle(&mut func.instrs, &mut spare.instrs);
    recycle(&mut func.operands, &mut spare.operands);
    recycle(&mut func.reg_refs, &mut spare.reg_refs);
    recycle(&mut func.registers, &mut spare.registers);
    recycle(&mut func.defs, &mut spare.defs);
    func.locs = Vec::new();
    func.blocks = Vec::new();
    func.cfg = Default::default();
    func.idom = Vec::new();
    func.dom_pre = Vec::new();
    func.dom_post = Vec::new();
    func.loops = Vec::new();
    func.local_forwards = Vec::new();
}


#[cfg(test)]
mod tests {
    use super::*;

    /// Real compiler output: nvcc, NVRTC and clang, with loops, calls, debug sections,
    /// inline-asm scopes and Hopper instructions.
    const CORPUS: &[&str] = &[
        include_str!("../tests/data/loops.ptx"),
        include_str!("../tests/data/loops2.ptx"),
        include_str!("../tests/data/mix.ptx"),
        include_str!("../tests/data/reduce.ptx"),
        include_str!("../../ptx/tests/data/clang19_sm80.ptx"),
        include_str!("../../ptx/tests/data/nvrtc_sm89.ptx"),
        include_str!("../../ptx/tests/data/nvcc_sm90_debug_sections.ptx"),
        include_str!("../../ptx/tests/data/nvcc_sm80_lineinfo.ptx"),
        include_str!("../../ptx/tests/data/nvcc_sm100a.ptx"),
        include_str!("../../ptx/tests/data/nvcc_sm90a_hopper_asm.ptx"),
    ];

    fn assert_same(src: &str, what: &str) {
        let parse = ptx::parse(src);
        let two_step = lower(&parse.module, src);
        let (fused, errors) = parse_and_lower(src);
        assert_eq!(
            format!("{:?}", parse.errors),
            format!("{errors:?}"),
            "{what}"
        );
        assert_eq!(
            two_step.functions.len(),
            fused.functions.len(),
            "{what}: function count"
        );
        for (a, b) in two_step.functions.iter().zip(&fused.functions) {
            assert_eq!(
                format!("{a:?}"),
                format!("{b:?}"),
                "{what}: function {}",
                a.name
            );
        }
        assert_eq!(format!("{two_step:?}"), format!("{fused:?}"), "{what}");
        // Stripped, then each kernel lowered again from the text: the same functions, and
        // the same module facts and diagnostics.
        let (mut stripped, stripped_errors) = parse_and_lower_stripped(src);
        assert_eq!(
            format!("{errors:?}"),
            format!("{stripped_errors:?}"),
            "{what}"
        );
        for (i, f) in fused.functions.iter().enumerate() {
            if f.kind == FunctionKind::Entry && f.has_body {
                assert!(
                    stripped.functions[i].instrs.is_empty(),
                    "{what}: {} stripped",
                    f.name
                );
                let again = lower_entry(src, &stripped, i).expect("an entry");
                stripped.functions[i] = again;
            } else {
                assert!(
                    lower_entry(src, &stripped, i).is_none(),
                    "{what}: {} is no entry",
                    f.name
                );
            }
        }
        assert_eq!(
            format!("{fused:?}"),
            format!("{stripped:?}"),
            "{what}: stripped and lowered again"
        );
    }

    #[test]
    fn streaming_and_tree_lowering_agree_on_compiler_output() {
        for (k, src) in CORPUS.iter().enumerate() {
            assert_same(src, &format!("corpus file {k}"));
            let m = parse_and_lower(src).0;
            assert!(m.functions.iter().any(|f| !f.instrs.is_empty()), "file {k}");
        }
    }

    #[test]
    fn streaming_and_tree_lowering_agree_on_broken_input() {
        // Truncations (unclosed bodies and blocks), stray braces, duplicated lines, names
        // the dense register table must not take (`%r01`, huge numbers, special
        // registers), shared variables declared after their use, and a call.
        let extra = [
            "@%p1 bra $L__BB0_99;",
            "}",
            "{ .reg .b32 %r<3>; ld.shared.v2.f32 {%f1, %f2}, [smem+8]; }",
            "add.s32 %r01, %r1, %tid.x; mov.u32 %r99999, %r1; mov.u32 %clock64, %r1;",
            "call.uni (retval0), foo, (%r1); st.shared.u32 [late_smem], %r1;",
        ];
        for (k, src) in CORPUS.iter().enumerate() {
            let lines: Vec<&str> = src.lines().collect();
            for step in 1..=7 {
                let at = lines.len() * step / 8;
                assert_same(&lines[..at].join("\n"), &format!("file {k} cut at {at}"));
                for (e, text) in extra.iter().enumerate() {
                    let mut ls = lines.clone();
                    ls.insert(at, text);
                    ls.push(".shared .align 4 .b8 late_smem[64];");
                    assert_same(&ls.join("\n"), &format!("file {k} + extra {e} at {at}"));
                }
            }
        }
    }

    #[test]
    fn opcode_text_falls_back_when_src_is_not_the_parsed_text() {
        let src = CORPUS[0];
        let parse = ptx::parse(src);
        let with_src = lower(&parse.module, src);
        let without = lower(&parse.module, "");
        for (a, b) in with_src.functions.iter().zip(&without.functions) {
            let ops_a: Vec<&str> = a.instrs.iter().map(|i| &*i.opcode).collect();
            let ops_b: Vec<&str> = b.instrs.iter().map(|i| &*i.opcode).collect();
            assert_eq!(ops_a, ops_b);
            assert!(b.instrs.iter().all(|i| i.ptx_line == 1));
        }
        assert!(with_src.functions.iter().any(|f| {
            f.instrs
                .iter()
                .any(|i| &*i.opcode == "ld.global.f32" || &*i.opcode == "ld.param.u64")
        }));
    }

    #[test]
    fn register_names_split_only_when_unambiguous() {
        let key = |s: &str| split_reg(s).map(|(_, n)| n);
        assert_eq!(key("%r17"), Some(17));
        assert_eq!(key("%rd0"), Some(0));
        assert_eq!(
            key("%r01"),
            None,
            "leading zero: a different register than %r1"
        );
        assert_eq!(key("%r"), None);
        assert_eq!(key("17"), None, "no prefix");
        assert_eq!(key("%tid.x"), None);
        assert_eq!(key("%r99999"), None, "beyond the dense limit");
        assert_eq!(key("%longprefix1"), None, "prefix longer than 7 bytes");
        assert_ne!(
            split_reg("%r1").map(|k| k.0),
            split_reg("%rd1").map(|k| k.0)
        );
        let mut t = RegTable::default();
        for (id, name) in ["%r1", "%rd1", "%r01", "%tid.x", "%r300"]
            .iter()
            .enumerate()
        {
            t.insert(split_reg(name), name, id as RegId);
        }
        for (id, name) in ["%r1", "%rd1", "%r01", "%tid.x", "%r300"]
            .iter()
            .enumerate()
        {
            assert_eq!(t.get(split_reg(name), name), Some(id as RegId), "{name}");
        }
        assert_eq!(t.get(split_reg("%r2"), "%r2"), None);
        assert_eq!(t.get(split_reg("%f1"), "%f1"), None);
    }

    #[test]
    fn newline_count_matches_a_byte_loop() {
        let text: Vec<u8> = (0..1000u32)
            .map(|i| {
                if i % 7 == 0 || i % 13 == 0 {
                    b'\n'
                } else {
                    (i % 200) as u8 + 11
                }
            })
            .collect();
        for start in 0..20 {
            for end in (start..text.len()).step_by(37) {
                let want = text[start..end].iter().filter(|&&b| b == b'\n').count();
                assert_eq!(count_newlines(&text[start..end]), want, "{start}..{end}");
            }
        }
    }
}
