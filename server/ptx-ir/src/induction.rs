//! Induction variables, exit tests and trip counts of the counted loops nvcc emits.
//!
//! nvcc (NVVM) emits loops in rotated, bottom-tested form: a guard before the loop skips it
//! when it would run zero times, and the latch ends in `add i, i, step; setp.CMP p, i, B;
//! @p bra HEADER`. Unrolled loops (`#pragma unroll 4`, or automatic unrolling of
//! parameter-bounded loops) become a main loop counting a register down by the unroll
//! factor to zero (`setp.ne ... 0`) followed by a remainder loop over `n & 3`. Grid-stride
//! loops step by `%ntid.x * %nctaid.x`. All of these are recognised here from the def-use
//! chains alone:
//!
//! 1. A *basic induction variable* is a register written exactly once inside the loop, by
//!    `add r, r, s` / `sub r, r, s` (or `mov r, t` with `add t, r, s`, or `add r, t, s`
//!    with `t` a copy `mov t, r` made earlier in the iteration, as nvcc writes loops whose
//!    counter starts at the thread index), with `s` loop-invariant. Its initial value is
//!    what the definitions outside the loop that can reach the header compute.
//! 2. The *exit test* is the single exiting block's guarded `bra`, whose predicate comes
//!    from a `setp` comparing an induction variable (possibly `iv + step`, or a copy of it)
//!    with a loop-invariant bound.
//! 3. The trip count (header executions per entry) follows from init `I`, step `S`, bound
//!    `B` and how many steps ahead of the iteration's entry value the compared value is
//!    (`m`): for "continue while `v < B`", `n = ceil((B - I) / S) - m + 1`, which is the
//!    familiar `ceil((B - I) / S)` for the do-while form (`m = 1`).
//!
//! Values are followed through `mov cvt add sub mul mad shl shr and or neg min max div rem`
//! and `ld.param` (which gives a parameter leaf). Anything else (a load from memory, a
//! value defined differently on two paths) makes the value unknown, and so the trip count
//! `Unknown` with a note saying why.

use crate::class::InstrClass;
use crate::ir::*;
use crate::trip::{BinOp, Expr, MAX_EXPR_NODES, TripCount, ceil_div};

/// Depth limit for following def-use chains.
const MAX_DEPTH: u32 = 12;

pub(crate) struct LoopCx<'f> {
    f: &'f Function,
    l: &'f Loop,
    /// Whether the function's CFG is reducible (`loops::analyze`).
    reducible: bool,
    /// Blocks outside the loop from which the header can be reached without entering the
    /// loop: the definitions in them are the ones that can flow into the loop. Found on
    /// demand (see [`LoopCx::feeds`]).
    feeds: std::cell::RefCell<FeedSearch>,
    /// Shared by the loops of the function.
    groups: &'f std::cell::RefCell<DefGroups>,
}

/// Per register, its definitions that no later definition in the same block kills,
/// grouped by identical instruction (opcode, class, guard, operands), groups in order of
/// first appearance; `None` when a definition is not a valid instruction. It depends on
/// the function only, so it is built once per register for all the loops. An identical
/// instruction has the same value everywhere (`LoopCx::instr_value` reads nothing else),
/// so `LoopCx::value_outside` needs one member per group that reaches the loop, not all
/// of them (a register set to the same constant before each of thousands of loops made
/// every loop weigh every earlier one).
#[derive(Default)]
pub(crate) struct DefGroups(crate::lower::FxMap<RegId, Option<std::rc::Rc<Vec<Vec<InstrId>>>>>);

impl DefGroups {
    fn of(&mut self, f: &Function, reg: RegId) -> Option<std::rc::Rc<Vec<Vec<InstrId>>>> {
        self.0
            .entry(reg)
            .or_insert_with(|| {
                let defs = f.defs_of(reg);
                let mut groups: Vec<Vec<InstrId>> = Vec::new();
                let mut index: std::collections::HashMap<String, usize> = Default::default();
                for (k, &d) in defs.iter().enumerate() {
                    crate::work::add(1);
                    let instr = f.instrs.get(d as usize)?;
                    // Killed by a later definition in the same block: definitions are in
                    // instruction order and a block's instructions are contiguous, so if
                    // any later one is in this block, the next one is.
                    let killed = defs.get(k + 1).is_some_and(|&later| {
                        f.instrs
                            .get(later as usize)
                            .is_some_and(|it| it.block == instr.block)
                    });
                    if killed {
                        continue;
                    }
                    if defs.len() <= 4 {
                        groups.push(vec![d]);
                        continue;
                    }
                    let key = format!(
                        "{}|{:?}|{:?}|{:?}",
                        instr.opcode,
                        instr.class,
                        instr.guard,
                        f.operands_of(instr)
                    );
                    match index.get(&key) {
                        Some(&g) => groups[g].push(d),
                        None => {
                            index.insert(key, groups.len());
                            groups.push(vec![d]);
                        }
                    }
                }
                Some(std::rc::Rc::new(groups))
            })
            .clone()
    }
}

/// The backward search from the header's outside predecessors for [`LoopCx::feeds`],
/// advanced only as far as a query needs, and the answers of the forward searches.
#[derive(Default)]
struct FeedSearch {
    started: bool,
    found: crate::lower::FxSet<BlockId>,
    queue: std::collections::VecDeque<BlockId>,
    answers: crate::lower::FxMap<BlockId, bool>,
}

pub(crate) fn analyze_loop(
    func: &mut Function,
    li: LoopId,
    reducible: bool,
    groups: &std::cell::RefCell<DefGroups>,
) {
    let (ivs, test, trip, note, bounds) = {
        let f: &Function = func;
        let Some(l) = f.loops.get(li as usize) else {
            return;
        };
        let cx = LoopCx::new(f, l, reducible, groups);
        let ivs = cx.induction_vars(l);
        let (test, trip, note) = match cx.exit_test(l, &ivs) {
            Ok((test, iv_init, kind, step)) => match trip_count(&test, iv_init, kind, &step) {
                Ok(tc) => (Some(test), tc, None),
                Err(why) => (Some(test), TripCount::Unknown, Some(why)),
            },
            Err(why) => (None, TripCount::Unknown, Some(why)),
        };
        let bounds = if matches!(trip, TripCount::Unknown) { cx.trip_bounds(l, &ivs) } else { Vec::new() };
        (ivs, test, trip, note, bounds)
    };
    if let Some(l) = func.loops.get_mut(li as usize) {
        l.induction_vars = ivs;
        l.exit_test = test;
        l.trip_count = trip;
        l.trip_note = note;
        l.trip_bounds = bounds;
    }
}

fn cmp_op(m: &str) -> Option<(CmpOp, bool)> {
    // (operator, unsigned?) ; unsigned spellings are `lo ls hi hs` (PTX ISA §9.7.7.1).
    Some(match m {
        "eq" => (CmpOp::Eq, false),
        "ne" => (CmpOp::Ne, false),
        "lt" => (CmpOp::Lt, false),
        "le" => (CmpOp::Le, false),
        "gt" => (CmpOp::Gt, false),
        "ge" => (CmpOp::Ge, false),
        "lo" => (CmpOp::Lt, true),
        "ls" => (CmpOp::Le, true),
        "hi" => (CmpOp::Gt, true),
        "hs" => (CmpOp::Ge, true),
        _ => return None,
    })
}

fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Ge => CmpOp::Lt,
        CmpOp::Le => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Le,
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
    }
}

/// `a OP b` ⇔ `b swap(OP) a`.
fn swap(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Eq => CmpOp::Eq,
        CmpOp::Ne => CmpOp::Ne,
    }
}

impl<'f> LoopCx<'f> {
    /// O(1): nothing proportional to the function's size is built per loop (a kernel with
    /// thousands of loops would pay for every block once per loop).
    pub(crate) fn new(
        f: &'f Function,
        l: &'f Loop,
        reducible: bool,
        groups: &'f std::cell::RefCell<DefGroups>,
    ) -> Self {
        crate::work::add(1);
        LoopCx {
            f,
            l,
            reducible,
            feeds: Default::default(),
            groups,
        }
    }

    fn in_loop(&self, b: BlockId) -> bool {
        self.l.contains(b)
    }

    /// Whether `b` is outside the loop and reaches the header without entering it.
    ///
    /// Every edge into a natural loop from a reachable block outside it goes to the
    /// header (a reachable predecessor of a body block other than the header is itself in
    /// the body), so for a reachable `b` outside the loop this is "`b` reaches the header".
    /// That holds when `b` dominates the header. When the header dominates `b`, `b`
    /// reaches it only around a cycle through both, and in a reducible CFG every cycle
    /// lies in the natural loop of a node that dominates it (Hecht and Ullman 1972): here
    /// a loop other than this one that contains the header and `b`, i.e. an enclosing
    /// loop. When neither dominates the other, see [`LoopCx::reaches_header`]. Unreachable
    /// blocks and irreducible CFGs continue a breadth-first search backwards from the
    /// header, kept across queries.
    pub(crate) fn feeds(&self, b: BlockId) -> bool {
        crate::work::add(1);
        if self.in_loop(b) || self.f.blocks.get(b as usize).is_none() {
            return false;
        }
        let h = self.l.header;
        if self.f.blocks[b as usize].reachable {
            if self.f.dominates(b, h) {
                return true;
            }
            if self.reducible && self.f.dominates(h, b) {
                let mut outer = self.l.parent;
                while let Some(o) = outer.and_then(|o| self.f.loops.get(o as usize)) {
                    crate::work::add(1);
                    if o.contains(b) {
                        return true;
                    }
                    outer = o.parent;
                }
                return false;
            }
            if self.reducible {
                if let Some(&known) = self.feeds.borrow().answers.get(&b) {
                    return known;
                }
                let r = self.reaches_header(b);
                self.feeds.borrow_mut().answers.insert(b, r);
                return r;
            }
        }
        let mut s = self.feeds.borrow_mut();
        if !s.started {
            s.started = true;
            let preds = self.f.blocks[h as usize].preds.iter().copied();
            s.queue = preds.filter(|&p| !self.in_loop(p)).collect();
        }
        while !s.found.contains(&b) {
            let Some(x) = s.queue.pop_front() else {
                return false;
            };
            crate::work::add(1);
            if !s.found.insert(x) {
                continue;
            }
            for &p in &self.f.blocks[x as usize].preds {
                if !self.in_loop(p) && !s.found.contains(&p) {
                    s.queue.push_back(p);
                }
            }
        }
        true
    }

    /// Whether a reachable block `b` reaches the header `h` in a reducible CFG where
    /// neither dominates the other. Let `a` be their nearest common dominator and `x` its
    /// child on the dominator-tree path to `h`. A path from the entry to `b` that avoids
    /// `x` followed by any path from `b` to `h` passes `x`, so `b` reaches `h` exactly when
    /// it reaches a block dominating `h`. `b` reaches `a` only around a cycle through
    /// both, i.e. when a loop contains both (as in [`LoopCx::feeds`]); otherwise a path
    /// from `b` that leaves `a`'s dominator subtree cannot come back to `x` (that needs
    /// `a`), so a forward search from `b` inside the subtree decides it. In structured
    /// code the subtree left to search is the `if`/`else` around `b`: a few blocks, where
    /// the backward search from the header visited every block above it, once per loop.
    fn reaches_header(&self, b: BlockId) -> bool {
        let f = self.f;
        let h = self.l.header;
        let mut a = b;
        while !f.dominates(a, h) {
            crate::work::add(1);
            match f.idom.get(a as usize).copied().flatten() {
                Some(up) => a = up,
                None => return false,
            }
        }
        let mut outer = f.blocks[b as usize].innermost_loop;
        while let Some(o) = outer.and_then(|o| f.loops.get(o as usize)) {
            crate::work::add(1);
            if o.contains(a) {
                return true;
            }
            outer = o.parent;
        }
        let mut seen = crate::lower::FxSet::default();
        let mut queue = std::collections::VecDeque::from([b]);
        seen.insert(b);
        while let Some(y) = queue.pop_front() {
            crate::work::add(1);
            for &s in &f.blocks[y as usize].succs {
                if f.dominates(s, h) {
                    return true;
                }
                if f.dominates(a, s) && seen.insert(s) {
                    queue.push_back(s);
                }
            }
        }
        false
    }

    fn instr(&self, id: InstrId) -> Option<&'f Instr> {
        self.f.instrs.get(id as usize)
    }

    /// The definitions of `reg` inside the loop, in order. Definitions are sorted by
    /// instruction and each block is a contiguous instruction range, so with many
    /// definitions the loop's blocks are looked up by binary search rather than every
    /// definition tested (a register reused all over a long kernel would make that
    /// O(definitions) per loop).
    fn defs_in_loop(&self, reg: RegId) -> impl Iterator<Item = InstrId> + '_ {
        let defs = self.f.defs_of(reg);
        let by_block = defs.len() > 4 * self.l.blocks.len();
        let direct = (!by_block).then(|| {
            defs.iter().copied().filter(|&d| {
                crate::work::add(1);
                self.instr(d).is_some_and(|i| self.in_loop(i.block))
            })
        });
        let ranged = by_block.then(|| {
            self.l.blocks.iter().flat_map(move |&b| {
                crate::work::add(1);
                let r = self
                    .f
                    .blocks
                    .get(b as usize)
                    .map_or(0..0, |blk| blk.instrs.clone());
                let lo = defs.partition_point(|&d| d < r.start);
                let hi = defs.partition_point(|&d| d < r.end);
                defs[lo..hi].iter().copied()
            })
        });
        direct
            .into_iter()
            .flatten()
            .chain(ranged.into_iter().flatten())
    }

    fn is_invariant(&self, reg: RegId) -> bool {
        self.defs_in_loop(reg).next().is_none()
    }

    /// The value of `reg` on entry to the loop: what its definitions outside the loop
    /// that can reach the header compute, when they all agree. A definition followed by
    /// another one of the same register in the same block is dead and skipped. The answer
    /// does not depend on the order the definitions are weighed in (every one must give
    /// the same value), so identical ones are weighed once ([`DefGroups`]).
    fn value_outside(&self, reg: RegId, depth: u32) -> Option<Expr> {
        if let Some(special) = self.f.register(reg).and_then(|r| r.special) {
            return Some(Expr::Special(special));
        }
        if depth == 0 {
            return None;
        }
        let values = self.entry_values(reg, depth - 1)?;
        let first = values.first()?;
        values.iter().all(|v| v == first).then(|| first.clone()).filter(|e| e.size() <= MAX_EXPR_NODES)
    }

    /// The value each group of `reg`'s definitions outside the loop ([`DefGroups`]) gives
    /// on entry, evaluated to `depth`; `None` when one is guarded (it may or may not
    /// happen) or cannot be evaluated.
    fn entry_values(&self, reg: RegId, depth: u32) -> Option<Vec<Expr>> {
        let groups = self.groups.borrow_mut().of(self.f, reg)?;
        let mut values = Vec::new();
        for group in groups.iter() {
            let reaching = group.iter().find(|&&d| {
                crate::work::add(1);
                self.instr(d).is_some_and(|i| self.feeds(i.block))
            });
            let Some(instr) = reaching.and_then(|&d| self.instr(d)) else {
                continue;
            };
            if instr.guard.is_some() {
                return None;
            }
            values.push(self.instr_value(instr, depth)?);
        }
        Some(values)
    }

    /// The entry value of a counter that enters the loop with one of several values `X + c`
    /// that differ by constants only: nvcc's remainder peeling. A loop unrolled by `u` is
    /// preceded by `total mod u` peeled iterations, so it is entered at `X + j·s` (`j` the
    /// peeled count, `s` the original step) and runs `floor(total / u)` times. The entry
    /// value furthest along the step gives that count exactly, whichever `j` applies:
    /// `ceil((total − (u − 1)) / u) = floor(total / u)`. (Estimate for other merges of
    /// shifted starts: the fewest trips.)
    fn peeled_entry(&self, reg: RegId, step: i64) -> Option<Expr> {
        let mut base: Option<Expr> = None;
        let mut best: Option<i64> = None;
        for v in self.entry_values(reg, MAX_DEPTH - 1)? {
            let (x, c) = split_constant(v);
            match &base {
                None => base = Some(x),
                Some(b) if *b == x => {}
                Some(_) => return None,
            }
            best = Some(match best {
                None => c,
                Some(b) if step > 0 => b.max(c),
                Some(b) => b.min(c),
            });
        }
        let (x, c) = (base?, best?);
        let e = if c == 0 { x } else { Expr::bin(BinOp::Add, x, Expr::Const(c)) };
        (e.size() <= MAX_EXPR_NODES).then_some(e)
    }

    /// The value of `reg` when its one definition is a `ld.local` that reads a slot one
    /// store alone writes, and the stored operand is a constant or a register the loop does
    /// not change: that operand's value on entry.
    fn forwarded_invariant(&self, reg: RegId) -> Option<Expr> {
        match self.f.forwarded_local(self.f.unique_def(reg)?)? {
            Operand::Imm(v) => Some(Expr::Const(*v)),
            Operand::Reg(s) if self.is_invariant(*s) => self.value_outside(*s, MAX_DEPTH),
            _ => None,
        }
    }

    fn operand_value(&self, op: &Operand, depth: u32) -> Option<Expr> {
        match op {
            Operand::Imm(v) => Some(Expr::Const(*v)),
            Operand::Reg(r) => self.value_outside(*r, depth),
            // `WARP_SZ` is the only symbolic constant PTX predefines (PTX ISA §10.29).
            Operand::Symbol(s) if &**s == "WARP_SZ" => Some(Expr::Const(32)),
            _ => None,
        }
    }

    /// The value an instruction writes to its (single) destination.
    fn instr_value(&self, instr: &Instr, depth: u32) -> Option<Expr> {
        let ops = self.f.operands_of(instr);
        let v = |k: usize| ops.get(k).and_then(|op| self.operand_value(op, depth));
        let int = !matches!(
            instr.class,
            InstrClass::Fp32 | InstrClass::Fp64 | InstrClass::Fp16 | InstrClass::Sfu
        );
        let res = match instr.base() {
            // `cvta` converts between generic and state-space addresses of the same object;
            // for counting and offsets it is the identity.
            "mov" | "cvt" | "cvta" => {
                if instr.base() == "cvt" && instr.ty().is_none_or(|t| t.starts_with('f')) {
                    return None;
                }
                v(1)?
            }
            "ld" if instr.has_modifier("param") => match ops.get(1)? {
                Operand::Addr {
                    base: AddrBase::Symbol(s),
                    offset: 0,
                } => {
                    let index = self.f.param_index(s)?;
                    Expr::Param {
                        index,
                        name: s.to_string(),
                    }
                }
                _ => return None,
            },
            "add" if int => Expr::bin(BinOp::Add, v(1)?, v(2)?),
            "sub" if int => Expr::bin(BinOp::Sub, v(1)?, v(2)?),
            "mul" if int && !instr.has_modifier("hi") => Expr::bin(BinOp::Mul, v(1)?, v(2)?),
            "mad" if int && !instr.has_modifier("hi") => {
                Expr::bin(BinOp::Add, Expr::bin(BinOp::Mul, v(1)?, v(2)?), v(3)?)
            }
            "shl" => match v(2)? {
                Expr::Const(k) if (0..63).contains(&k) => {
                    Expr::bin(BinOp::Mul, v(1)?, Expr::Const(1i64 << k))
                }
                other => Expr::bin(BinOp::Shl, v(1)?, other),
            },
            "shr" => Expr::bin(BinOp::Shr, v(1)?, v(2)?),
            "and" => Expr::bin(BinOp::And, v(1)?, v(2)?),
            "or" => Expr::bin(BinOp::Or, v(1)?, v(2)?),
            "xor" => Expr::bin(BinOp::Xor, v(1)?, v(2)?),
            "neg" if int => Expr::negated(v(1)?),
            "min" if int => Expr::bin(BinOp::Min, v(1)?, v(2)?),
            "max" if int => Expr::bin(BinOp::Max, v(1)?, v(2)?),
            "div" if int => Expr::bin(BinOp::Div, v(1)?, v(2)?),
            "rem" if int => Expr::bin(BinOp::Rem, v(1)?, v(2)?),
            _ => return None,
        };
        (res.size() <= MAX_EXPR_NODES).then_some(res)
    }

    /// The kind and loop-invariant step of an update `add r, r, s` / `add r, s, r` /
    /// `sub r, r, s`, or the constant shift of `shr r, r, k` / `shl r, r, k` /
    /// `mul.lo r, r, 2^k` / `add r, r, r`.
    fn step_of(&self, update: &Instr, reg: RegId) -> Option<(IvKind, Expr)> {
        let ops = self.f.operands_of(update);
        let invariant = |op: &Operand| match op {
            Operand::Imm(v) => Some(Expr::Const(*v)),
            Operand::Reg(r) if self.is_invariant(*r) => self.value_outside(*r, MAX_DEPTH),
            _ => None,
        };
        if update.class != InstrClass::IntAlu || ops.len() != 3 {
            return None;
        }
        let is_reg = |op: &Operand| op.reg() == Some(reg);
        let shift = |op: &Operand| op.imm().filter(|k| (1..32).contains(k)).map(Expr::Const);
        match (update.base(), &ops[1], &ops[2]) {
            ("add", a, b) if is_reg(a) && is_reg(b) => Some((IvKind::Shl, Expr::Const(1))),
            ("add", a, other) if is_reg(a) => invariant(other).map(|s| (IvKind::Add, s)),
            ("add", other, b) if is_reg(b) => invariant(other).map(|s| (IvKind::Add, s)),
            ("sub", a, other) if is_reg(a) => {
                invariant(other).map(|s| (IvKind::Add, Expr::negated(s)))
            }
            // A signed shift halves toward minus infinity; for the positive counters these
            // loops use it is the same as the unsigned one.
            ("shr", a, k) if is_reg(a) => shift(k).map(|k| (IvKind::Shr, k)),
            ("shl", a, k) if is_reg(a) => shift(k).map(|k| (IvKind::Shl, k)),
            ("mul", a, Operand::Imm(v)) if is_reg(a) && !update.has_modifier("hi") => {
                let v = *v;
                (v > 1 && v.count_ones() == 1)
                    .then(|| (IvKind::Shl, Expr::Const(i64::from(v.trailing_zeros()))))
            }
            _ => None,
        }
    }

    /// Recognises `reg` as a basic induction variable: (kind, step, update instruction).
    fn as_iv(&self, reg: RegId) -> Option<(IvKind, Expr, InstrId)> {
        let mut defs = self.defs_in_loop(reg);
        let d = defs.next()?;
        if defs.next().is_some() {
            return None;
        }
        let instr = self.instr(d)?;
        if instr.guard.is_some() {
            return None;
        }
        if let Some((kind, step)) = self.step_of(instr, reg) {
            return Some((kind, step, d));
        }
        // `mov t, r; add r, t, s`: the update reads a copy of the register made earlier in
        // the iteration (nvcc keeps the iteration's value in `t` for the body and the exit
        // test: `mov %r12, %r48; ...; add %r48, %r12, 2; setp.lt %r12, 28`).
        if instr.base() != "mov"
            && let Some(copy) = self.copy_read_by(instr, reg, d)
            && let Some((kind, step)) = self.step_of(instr, copy)
        {
            return Some((kind, step, d));
        }
        // `add t, r, s; mov r, t`. The register must also be set before the loop: in
        // `mov r, t; add t, r, s` it is `t`, set before the loop, that carries the value
        // from one iteration to the next, and `r` is only its copy.
        if instr.base() == "mov" {
            if !self.defined_before(reg) {
                return None;
            }
            let t = self.f.operands_of(instr).get(1)?.reg()?;
            let mut tdefs = self.defs_in_loop(t);
            let td = tdefs.next()?;
            if tdefs.next().is_some() {
                return None;
            }
            let (kind, step) = self.step_of(self.instr(td)?, reg)?;
            return Some((kind, step, d));
        }
        None
    }

    /// `true` when a definition of `reg` outside the loop reaches the header (or `reg` is
    /// a special register).
    fn defined_before(&self, reg: RegId) -> bool {
        if self.f.register(reg).is_some_and(|r| r.special.is_some()) {
            return true;
        }
        self.f.defs_of(reg).iter().any(|&d| {
            self.instr(d).is_some_and(|i| self.feeds(i.block))
        })
    }

    /// The register among `update`'s sources that is a plain copy of `reg` made in the
    /// loop before `update` runs (`mov t, reg`, its only definition in the loop).
    fn copy_read_by(&self, update: &Instr, reg: RegId, update_id: InstrId) -> Option<RegId> {
        self.f
            .operands_of(update)
            .iter()
            .skip(1)
            .filter_map(Operand::reg)
            .find(|&t| self.copy_source(t) == Some(reg) && {
                let mut d = self.defs_in_loop(t);
                d.next()
                    .is_some_and(|c| self.runs_before(c, update_id) == Some(1))
            })
    }

    /// The register `t` copies when its only definition in the loop is an unguarded
    /// `mov t, r` (and it is not set before the loop).
    fn copy_source(&self, t: RegId) -> Option<RegId> {
        let mut d = self.defs_in_loop(t);
        let def = d.next()?;
        if d.next().is_some() || self.defined_before(t) {
            return None;
        }
        let instr = self.instr(def)?;
        if instr.base() != "mov" || instr.guard.is_some() {
            return None;
        }
        self.f.operands_of(instr).get(1)?.reg()
    }

    fn induction_vars(&self, l: &Loop) -> Vec<InductionVar> {
        // Fx, not SipHash: one insert per register written in the loop.
        let mut seen = crate::lower::FxSet::default();
        let mut res = Vec::new();
        for &b in &l.blocks {
            let blk = &self.f.blocks[b as usize];
            for i in blk.instrs.clone() {
                crate::work::add(1);
                let Some(instr) = self.instr(i) else { continue };
                for &r in self.f.dsts(instr) {
                    if !seen.insert(r) {
                        continue;
                    }
                    if let Some((kind, step, update)) = self.as_iv(r) {
                        let init = self.value_outside(r, MAX_DEPTH).or_else(|| match (kind, step.as_const()) {
                            (IvKind::Add, Some(s)) if s != 0 => self.peeled_entry(r, s),
                            _ => None,
                        });
                        res.push(InductionVar {
                            reg: r,
                            init,
                            kind,
                            step,
                            update,
                        });
                    }
                }
            }
        }
        res
    }

    /// 1 when `update` runs before `reader` within an iteration (the reader sees the new
    /// value), 0 when after; `None` when the order is not fixed.
    fn runs_before(&self, update: InstrId, reader: InstrId) -> Option<u8> {
        let (u, r) = (self.instr(update)?, self.instr(reader)?);
        if u.block == r.block {
            Some(u8::from(update < reader))
        } else if self.f.dominates(u.block, r.block) {
            Some(1)
        } else if self.f.dominates(r.block, u.block) {
            Some(0)
        } else {
            None
        }
    }

    /// Finds the exit test and the induction variable it compares.
    fn exit_test(
        &self,
        l: &Loop,
        ivs: &[InductionVar],
    ) -> Result<(ExitTest, Option<Expr>, IvKind, Expr), String> {
        let [exiting] = l.exiting.as_slice() else {
            return Err(format!(
                "the loop has {} exits (a `break` or data-dependent exit)",
                l.exiting.len()
            ));
        };
        if !l
            .latches
            .iter()
            .all(|&latch| self.f.dominates(*exiting, latch))
        {
            return Err("the exit test does not run on every iteration".into());
        }
        let (branch_id, flip, setp_id) = self.exit_branch(*exiting)?;
        self.compare_test(setp_id, branch_id, flip, ivs)
    }

    /// The exit branch of `exiting`, whether the loop continues on its predicate's false
    /// value (`flip`), and the instruction that computes the predicate.
    fn exit_branch(&self, exiting: BlockId) -> Result<(InstrId, bool, InstrId), String> {
        let blk = &self.f.blocks[exiting as usize];
        let branch_id = blk.terminator().ok_or("the exiting block is empty")?;
        let branch = self.instr(branch_id).ok_or("bad instruction id")?;
        let guard = match (branch.base(), branch.guard) {
            ("bra", Some(g)) => g,
            _ => return Err("the loop does not exit through a conditional branch".into()),
        };
        let taken_in_loop = blk.target.is_some_and(|t| self.in_loop(t));
        // Continue iff the predicate equals `want`.
        let flip = guard.negated ^ !taken_in_loop;
        let setp_id = self
            .single_def_in(blk, guard.reg)
            .ok_or("the branch predicate is not computed in the loop")?;
        Ok((branch_id, flip, setp_id))
    }

    /// The instruction of the loop that defines `reg`: the last one in `blk`, else the
    /// loop's only definition of it.
    fn single_def_in(&self, blk: &crate::ir::BasicBlock, reg: RegId) -> Option<InstrId> {
        blk.instrs
            .clone()
            .rev()
            .find(|&i| self.instr(i).is_some_and(|it| self.f.dsts(it).contains(&reg)))
            .or_else(|| {
                let mut d = self.defs_in_loop(reg);
                let first = d.next();
                if d.next().is_some() { None } else { first }
            })
    }

    /// Upper bounds of the trip count of a loop whose count is unknown: the count of each
    /// exit that runs on every iteration and compares an induction variable with a bound
    /// (a `for`'s test beside a `break`), and of each comparison that a combined test
    /// needs to hold to continue (`and.pred` of the two, or `or.pred` of their negations:
    /// `while (|z| < 2 && it < MAX)`). Each is what the loop would run were that test its
    /// only exit; the others can only end it sooner.
    fn trip_bounds(&self, l: &Loop, ivs: &[InductionVar]) -> Vec<TripCount> {
        let mut out = Vec::new();
        for &exiting in &l.exiting {
            if !l.latches.iter().all(|&latch| self.f.dominates(exiting, latch)) {
                continue;
            }
            let Ok((branch_id, flip, def)) = self.exit_branch(exiting) else { continue };
            let Some(d) = self.instr(def) else { continue };
            let ops = self.f.operands_of(d);
            // Comparisons that must all hold (with `flip`) for the loop to continue.
            let parts: Vec<InstrId> = match (d.base(), flip, ops) {
                ("setp", _, _) => vec![def],
                ("and", false, [_, a, b]) | ("or", true, [_, a, b]) if d.guard.is_none() => {
                    let blk = &self.f.blocks[d.block as usize];
                    [a, b].iter().filter_map(|o| o.reg()).filter_map(|r| self.single_def_in(blk, r)).collect()
                }
                _ => Vec::new(),
            };
            for part in parts {
                if let Ok((test, init, kind, step)) = self.compare_test(part, branch_id, flip, ivs)
                    && let Ok(tc) = trip_count(&test, init, kind, &step)
                {
                    out.push(tc);
                }
            }
        }
        out
    }

    /// The exit test of comparison `setp_id`, which `branch_id` tests (`flip`: the loop
    /// continues on its false value), and the induction variable it compares.
    fn compare_test(
        &self,
        setp_id: InstrId,
        branch_id: InstrId,
        flip: bool,
        ivs: &[InductionVar],
    ) -> Result<(ExitTest, Option<Expr>, IvKind, Expr), String> {
        let setp = self.instr(setp_id).ok_or("bad instruction id")?;
        let ops = self.f.operands_of(setp);
        if setp.base() != "setp" || ops.len() != 3 || setp.guard.is_some() {
            return Err(format!("the exit predicate comes from `{}`", setp.opcode));
        }
        if setp.class != InstrClass::IntAlu {
            return Err("the exit test compares floating-point values".into());
        }
        let (mut op, _unsigned) = setp
            .modifiers()
            .find_map(cmp_op)
            .ok_or_else(|| format!("unsupported comparison in `{}`", setp.opcode))?;
        if flip {
            op = negate(op);
        }

        // Which side is the induction variable: `iv`, `iv + step` computed in the loop, or
        // `iv + c` / `c + iv` / `iv - c` with `c` loop-invariant (nvcc's unroll-by-k main
        // loop tests `((n & 3) - n) + j != 0`)? Returns (iv index, steps ahead, offset `c`).
        let iv_side = |operand: &Operand| -> Option<(usize, u8, Expr)> {
            let r = operand.reg()?;
            if let Some(k) = ivs.iter().position(|iv| iv.reg == r) {
                let m = self.runs_before(ivs[k].update, setp_id)?;
                return Some((k, m, Expr::Const(0)));
            }
            let mut d = self.defs_in_loop(r);
            let def = d.next()?;
            if d.next().is_some() {
                return None;
            }
            let t = self.instr(def)?;
            let tops = self.f.operands_of(t);
            // A copy of the induction variable (`mov %r12, %r48` in the header, compared
            // after `%r48` is updated): the iteration's value, as many steps ahead as the
            // copy is of the update.
            if t.base() == "mov" && t.guard.is_none() && tops.len() == 2 {
                let k = ivs.iter().position(|iv| tops[1].reg() == Some(iv.reg))?;
                let m = self.runs_before(ivs[k].update, def)?;
                return Some((k, m, Expr::Const(0)));
            }
            if !matches!(t.base(), "add" | "sub") || tops.len() != 3 || t.guard.is_some() {
                return None;
            }
            if t.class != InstrClass::IntAlu {
                return None;
            }
            let iv_at = |op: &Operand| {
                ivs.iter()
                    .position(|iv| iv.kind == IvKind::Add && op.reg() == Some(iv.reg))
            };
            let invariant = |op: &Operand| match op {
                Operand::Imm(v) => Some(Expr::Const(*v)),
                Operand::Reg(s) if self.is_invariant(*s) => self.value_outside(*s, MAX_DEPTH),
                _ => None,
            };
            let (k, other, negate_other) = match (t.base(), iv_at(&tops[1]), iv_at(&tops[2])) {
                (_, Some(k), None) => (k, &tops[2], t.base() == "sub"),
                ("add", None, Some(k)) => (k, &tops[1], false),
                _ => return None,
            };
            let c = invariant(other)?;
            let m = self.runs_before(ivs[k].update, def)?;
            // `iv + step` is the value one step ahead: keep the readable form.
            if !negate_other && c == ivs[k].step {
                return Some((k, m + 1, Expr::Const(0)));
            }
            let c = if negate_other { Expr::negated(c) } else { c };
            Some((k, m, c))
        };
        let (iv_k, m, offset, bound_op) = if let Some((k, m, c)) = iv_side(&ops[1]) {
            (k, m, c, &ops[2])
        } else if let Some((k, m, c)) = iv_side(&ops[2]) {
            op = swap(op);
            (k, m, c, &ops[1])
        } else {
            return Err(
                "the exit test compares no induction variable (data-dependent exit)".into(),
            );
        };
        let bound = match bound_op {
            Operand::Imm(v) => Expr::Const(*v),
            Operand::Reg(r) if self.is_invariant(*r) => self
                .value_outside(*r, MAX_DEPTH)
                .ok_or("the loop bound is not a constant or a kernel parameter expression")?,
            // A bound kept in a `volatile` local and read back at each test: the value its one
            // store wrote ([`Function::forwarded_local`]), when that does not change in the loop.
            Operand::Reg(r) => self
                .forwarded_invariant(*r)
                .ok_or("the loop bound changes inside the loop")?,
            _ => return Err("the loop bound changes inside the loop".into()),
        };
        // `iv + c OP B` ⇔ `iv OP B - c`.
        let bound = match (&bound, &offset) {
            (_, Expr::Const(0)) => bound,
            (Expr::Const(0), _) => Expr::negated(offset),
            _ => Expr::bin(BinOp::Sub, bound, offset),
        };
        if bound.size() > MAX_EXPR_NODES {
            return Err("the loop bound is too large an expression".into());
        }
        let iv = &ivs[iv_k];
        Ok((
            ExitTest {
                compare: setp_id,
                branch: branch_id,
                iv: iv.reg,
                op,
                bound,
                offset_steps: m,
            },
            iv.init.clone(),
            iv.kind,
            iv.step.clone(),
        ))
    }
}

/// `X + c` → `(X, c)` for a constant `c`; anything else is `(e, 0)`.
fn split_constant(e: Expr) -> (Expr, i64) {
    match e {
        Expr::Bin(BinOp::Add, a, b) => match (*a, *b) {
            (x, Expr::Const(c)) | (Expr::Const(c), x) => (x, c),
            (a, b) => (Expr::Bin(BinOp::Add, Box::new(a), Box::new(b)), 0),
        },
        Expr::Bin(BinOp::Sub, a, b) => match (*a, *b) {
            (x, Expr::Const(c)) => (x, -c),
            (a, b) => (Expr::Bin(BinOp::Sub, Box::new(a), Box::new(b)), 0),
        },
        e => (e, 0),
    }
}

/// Header executions per entry from the exit test: see the module docs for the formula.
fn trip_count(
    test: &ExitTest,
    init: Option<Expr>,
    kind: IvKind,
    step: &Expr,
) -> Result<TripCount, String> {
    let init = init.ok_or("the induction variable's initial value is not known")?;
    match kind {
        IvKind::Add => {}
        IvKind::Shr => return halving_trip_count(test, init, step),
        IvKind::Shl => return doubling_trip_count(test, init, step),
    }
    let m = i64::from(test.offset_steps);
    let bound = test.bound.clone();
    // Normalise to "continue while dist > 0 steps remain": (distance, positive step).
    let step_sign = match step.as_const() {
        Some(0) => return Err("the induction variable does not change".into()),
        Some(s) => Some(s > 0),
        None => match step {
            Expr::Neg(_) => Some(false),
            // A symbolic step (the grid-stride `%ntid.x * %nctaid.x`, a parameter) is
            // assumed positive: counting down by a runtime amount is not an nvcc idiom.
            _ => Some(true),
        },
    };
    let up = step_sign == Some(true);
    let abs_step = if up {
        step.clone()
    } else {
        Expr::negated(step.clone())
    };
    let (dist, exact) = match (test.op, up) {
        (CmpOp::Lt, true) => (Expr::raw(BinOp::Sub, bound, init), false),
        (CmpOp::Le, true) => (
            Expr::raw(
                BinOp::Sub,
                Expr::bin(BinOp::Add, bound, Expr::Const(1)),
                init,
            ),
            false,
        ),
        (CmpOp::Gt, false) => (Expr::raw(BinOp::Sub, init, bound), false),
        (CmpOp::Ge, false) => (
            Expr::raw(
                BinOp::Sub,
                init,
                Expr::bin(BinOp::Sub, bound, Expr::Const(1)),
            ),
            false,
        ),
        (CmpOp::Ne, true) => (Expr::raw(BinOp::Sub, bound, init), true),
        (CmpOp::Ne, false) => (Expr::raw(BinOp::Sub, init, bound), true),
        _ => {
            return Err(format!(
                "the loop condition `{:?}` with a {} step does not count to a bound",
                test.op,
                if up { "positive" } else { "negative" }
            ));
        }
    };
    // Constant case, exactly.
    if let (Some(d), Some(s)) = (const_of(&dist), abs_step.as_const()) {
        let (d, s) = (i128::from(d), i128::from(s));
        let q = if exact {
            if d % s != 0 {
                return Err("the `!=` exit test is never met exactly (wrap-around)".into());
            }
            d / s
        } else {
            ceil_div(d, s).ok_or("zero step")?
        };
        let n = q - i128::from(m) + 1;
        if exact && n < 1 {
            return Err("the `!=` exit test is passed before the loop starts".into());
        }
        return Ok(TripCount::Constant(n.max(1) as u64));
    }
    let base = Expr::raw(
        if exact { BinOp::Div } else { BinOp::CeilDiv },
        dist,
        abs_step,
    );
    let formula = match m {
        1 => base,
        0 => Expr::raw(BinOp::Add, base, Expr::Const(1)),
        _ => Expr::raw(BinOp::Sub, base, Expr::Const(m - 1)),
    };
    Ok(TripCount::from_formula(formula))
}

fn const_of(e: &Expr) -> Option<i64> {
    let v = e.eval(&|_| None)?;
    (v.fract() == 0.0 && v.abs() < 9.0e15).then_some(v as i64)
}

/// `for (s = I; s > B; s >>= k)` (B a constant >= 0; `!= 0` is `> 0` for the positive
/// counters these loops use). The compared value at iteration `j` is
/// `I >> (k * (j + m))`; it first drops to `B` or below after
/// `s = floor(log2(I / (B + 1))) + 1` bits of shifting, so the header runs
/// `ceil(s / k) - m + 1` times (checked against simulation in the tests below).
fn halving_trip_count(test: &ExitTest, init: Expr, step: &Expr) -> Result<TripCount, String> {
    let b = match (test.op, test.bound.as_const()) {
        (CmpOp::Ne, Some(0)) => 0,
        (CmpOp::Gt, Some(b)) if b >= 0 => b,
        (CmpOp::Ge, Some(b)) if b >= 1 => b - 1,
        _ => return Err("a halving loop whose bound is not a constant".into()),
    };
    let k = step.as_const().ok_or("non-constant shift")?;
    let m = i64::from(test.offset_steps);
    if let Some(i) = const_of(&init) {
        // Constant: simulate (at most 64 shifts).
        let mut n = 1u64;
        let mut shift = k * m;
        while shift < 64 && (i >> shift) > b {
            n += 1;
            shift += k;
        }
        return Ok(TripCount::Constant(n));
    }
    let scaled = if b == 0 {
        init
    } else {
        Expr::raw(BinOp::Div, init, Expr::Const(b + 1))
    };
    let logs = Expr::FloorLog2(Box::new(scaled));
    let formula = if k == 1 {
        Expr::raw(BinOp::Add, logs, Expr::Const(2 - m))
    } else {
        let s = Expr::raw(BinOp::Add, logs, Expr::Const(1));
        Expr::raw(
            BinOp::Add,
            Expr::raw(BinOp::CeilDiv, s, Expr::Const(k)),
            Expr::Const(1 - m),
        )
    };
    Ok(TripCount::from_formula(formula))
}

/// `for (d = I; d < B; d <<= k)` with `I` a constant power of two: the counter passes
/// `B` after `ceil((ceil(log2(B)) - log2(I)) / k)` shifts.
fn doubling_trip_count(test: &ExitTest, init: Expr, step: &Expr) -> Result<TripCount, String> {
    let k = step.as_const().ok_or("non-constant shift")?;
    let i = const_of(&init).ok_or("a doubling loop from a non-constant value")?;
    if i < 1 || i.count_ones() != 1 {
        return Err("a doubling loop from a value that is not a power of two".into());
    }
    let bound = match test.op {
        CmpOp::Lt => test.bound.clone(),
        CmpOp::Le => Expr::bin(BinOp::Add, test.bound.clone(), Expr::Const(1)),
        _ => {
            return Err(format!(
                "a doubling loop with the condition `{:?}`",
                test.op
            ));
        }
    };
    let log_i = i64::from(i.ilog2());
    let m = i64::from(test.offset_steps);
    if let Some(b) = const_of(&bound) {
        if b <= i {
            return Ok(TripCount::Constant(1));
        }
        let log_b = i64::from((b - 1).ilog2()) + 1; // ceil(log2(b)) for b >= 2
        let q = ceil_div(i128::from(log_b - log_i), i128::from(k)).unwrap_or(0) as i64;
        return Ok(TripCount::Constant((q - m + 1).max(1) as u64));
    }
    let dist = Expr::bin(
        BinOp::Sub,
        Expr::CeilLog2(Box::new(bound)),
        Expr::Const(log_i),
    );
    let q = if k == 1 {
        dist
    } else {
        Expr::raw(BinOp::CeilDiv, dist, Expr::Const(k))
    };
    let formula = match m {
        1 => q,
        0 => Expr::raw(BinOp::Add, q, Expr::Const(1)),
        _ => Expr::raw(BinOp::Sub, q, Expr::Const(m - 1)),
    };
    Ok(TripCount::from_formula(formula))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_of(op: CmpOp, bound: Expr, m: u8) -> ExitTest {
        ExitTest {
            compare: 0,
            branch: 0,
            iv: 0,
            op,
            bound,
            offset_steps: m,
        }
    }

    /// Header executions of `v = I; loop { body; if !(v' OP B) break }` by brute force,
    /// where `v'` is the value `m` updates ahead of the iteration's entry value.
    fn simulate(i: i64, m: u32, update: impl Fn(i64) -> i64, cont: impl Fn(i64) -> bool) -> u64 {
        let mut v = i;
        for _ in 0..m {
            v = update(v);
        }
        let mut n = 1;
        while cont(v) && n < 10_000 {
            v = update(v);
            n += 1;
        }
        n
    }

    fn eval_with_x(tc: &TripCount, x: i64) -> Option<f64> {
        tc.evaluate(&|_| Some(x as f64))
    }

    fn x() -> Expr {
        Expr::Param {
            index: 0,
            name: "x".into(),
        }
    }

    #[test]
    fn halving_formula_matches_simulation() {
        for k in 1..=3i64 {
            for m in 0..=1u8 {
                for b in 0..=5i64 {
                    let t = test_of(CmpOp::Gt, Expr::Const(b), m);
                    let sym = halving_trip_count(&t, x(), &Expr::Const(k)).expect("symbolic");
                    for i in (b + 1)..300 {
                        let want = simulate(i, u32::from(m), |v| v >> k, |v| v > b);
                        let konst =
                            halving_trip_count(&t, Expr::Const(i), &Expr::Const(k)).expect("c");
                        assert_eq!(konst, TripCount::Constant(want), "I={i} B={b} k={k} m={m}");
                        assert_eq!(
                            eval_with_x(&sym, i),
                            Some(want as f64),
                            "I={i} B={b} k={k} m={m}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn doubling_formula_matches_simulation() {
        for k in 1..=2i64 {
            for m in 0..=1u8 {
                for i in [1i64, 2, 4, 8] {
                    let t = test_of(CmpOp::Lt, x(), m);
                    let sym = doubling_trip_count(&t, Expr::Const(i), &Expr::Const(k)).expect("s");
                    for b in (i + 1)..600 {
                        let want = simulate(i, u32::from(m), |v| v << k, |v| v < b);
                        let tc = test_of(CmpOp::Lt, Expr::Const(b), m);
                        let konst =
                            doubling_trip_count(&tc, Expr::Const(i), &Expr::Const(k)).expect("c");
                        assert_eq!(konst, TripCount::Constant(want), "I={i} B={b} k={k} m={m}");
                        assert_eq!(
                            eval_with_x(&sym, b),
                            Some(want as f64),
                            "I={i} B={b} k={k} m={m}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn linear_formula_matches_simulation() {
        for step in [1i64, 2, 3, 4, 7] {
            for m in 0..=1u8 {
                for (op, cont) in [
                    (CmpOp::Lt, (|v: i64, b: i64| v < b) as fn(i64, i64) -> bool),
                    (CmpOp::Le, |v, b| v <= b),
                ] {
                    let t = test_of(op, x(), m);
                    let sym = trip_count(&t, Some(Expr::Const(0)), IvKind::Add, &Expr::Const(step))
                        .expect("symbolic");
                    for b in 1..100 {
                        let want = simulate(0, u32::from(m), |v| v + step, |v| cont(v, b));
                        assert_eq!(
                            eval_with_x(&sym, b),
                            Some(want as f64),
                            "{op:?} B={b} s={step} m={m}"
                        );
                    }
                }
                // Counting down to zero with `!=`, as in nvcc's unrolled main loops.
                let t = test_of(CmpOp::Ne, Expr::Const(0), m);
                for i in 1..50 {
                    let start = i * step + i64::from(m) * step;
                    let got = trip_count(
                        &t,
                        Some(Expr::Const(start)),
                        IvKind::Add,
                        &Expr::Const(-step),
                    );
                    let want = simulate(start, u32::from(m), |v| v - step, |v| v != 0);
                    assert_eq!(
                        got,
                        Ok(TripCount::Constant(want)),
                        "I={start} s={step} m={m}"
                    );
                }
            }
        }
    }
}
