//! Concrete per-lane evaluation of an address, the fallback of the affine analysis.
//!
//! Some indexing is piecewise affine rather than affine: `idx / 20` and `idx % 20` over a
//! tile that is not a power of two wide, `lane / 4` and `lane % 4` in tensor-core fragment
//! layouts, `min`/`max` clamps, `selp` on a thread-dependent predicate. A linear form
//! cannot express them, but the 32 addresses of a warp can simply be computed: this module
//! evaluates the def-use chain of the address for each lane of a representative warp
//! (block (1, 1, 1), the first warp, the first iteration of every loop), exactly, in 64-bit
//! integer arithmetic. Values that are uniform but unknown get fixed stand-ins: pointer
//! parameters a distinct 2^32-aligned base each, integer parameters nobody supplied a
//! large value (2^18, far enough apart that rows never share a sector, as the affine
//! analysis assumes for unknown coefficients). Anything loaded from memory stops the
//! evaluation: that access is data-dependent.

use std::collections::HashMap;

use ptx_ir::ir::{AddrBase, Dim, Function, InstrId, Operand, RegId, SpecialReg};
use ptx_ir::{InstrClass, Space};

use crate::access::Lanes;
use crate::affine::Env;
use crate::predicate::Decoded;

/// The stand-in for an integer parameter nobody supplied.
const UNKNOWN_PARAM: i64 = 1 << 18;
/// The representative block (an interior one, so `blockIdx - 1` stays in range).
const BLOCK: [i64; 3] = [1, 1, 1];
const MAX_DEPTH: u32 = 64;

struct Lane<'a> {
    func: &'a Function,
    env: &'a Env<'a>,
    choices: &'a mut DefChoices,
    tid: [i64; 3],
    lane: i64,
    memo: HashMap<RegId, Option<i64>>,
    depth: u32,
    /// Whether an integer parameter nobody supplied reads as [`UNKNOWN_PARAM`] (addresses:
    /// only the differences between lanes matter) or makes the value unknown (a loop's
    /// initial value, which becomes a trip count).
    stand_ins: bool,
}

/// Which definitions give each register's value on the first iteration (see
/// `Lane::reg_uncached`), per function: the same for every lane and every access, so it is
/// worked out once per register instead of once per lane and access (a register redefined
/// all over a long kernel made that a scan of every definition, 32 times per access).
///
/// It also holds the function's evaluation budget: [`DefChoices::STEPS_PER_INSTRUCTION`]
/// instruction evaluations per instruction of the function, over all accesses and lanes.
/// A register redefined all over a long kernel in distinct ways that agree (each must be
/// evaluated to know that they do) costs every access a walk over all of them; the budget
/// bounds the kernel's total at a linear amount. Past it, an evaluation gives up as for a
/// value loaded from memory (the access counts as data-dependent) and
/// [`DefChoices::exhausted`] says so. The fixture corpus needs at most 38 evaluations per
/// instruction (64 added to the count), so the budget leaves them untouched.
#[derive(Debug)]
pub struct DefChoices {
    choices: HashMap<RegId, Choice>,
    budget: u64,
    exhausted: bool,
}

#[derive(Debug, Clone)]
enum Choice {
    Undefined,
    One(InstrId),
    /// Several definitions at the outermost depth: all must agree. One per group of
    /// identical instructions (same opcode, class and operands), in order of first
    /// appearance: an identical instruction reads the same registers, already evaluated,
    /// so it gives the same value and changes nothing (a register set to the same constant
    /// before each of thousands of loops made every lane evaluate them all).
    All(Vec<InstrId>),
}

impl DefChoices {
    /// Instruction evaluations allowed per instruction of the function (plus 64).
    pub const STEPS_PER_INSTRUCTION: u64 = 256;

    /// Empty choices and a full budget for `func`.
    pub fn for_function(func: &Function) -> DefChoices {
        DefChoices {
            choices: HashMap::new(),
            budget: Self::STEPS_PER_INSTRUCTION.saturating_mul(func.instrs.len() as u64 + 64),
            exhausted: false,
        }
    }

    /// Whether an evaluation stopped because the budget ran out.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    fn choice(&mut self, func: &Function, r: RegId) -> &Choice {
        self.choices.entry(r).or_insert_with(|| match func.defs_of(r) {
            [] => Choice::Undefined,
            [one] => Choice::One(*one),
            many => {
                // The value on the first iteration: the definition outside every loop that
                // contains another definition (an induction variable's initial value).
                let block_of = |d: &InstrId| func.instr(*d).map(|i| i.block);
                let depth = |d: &InstrId| block_of(d).map_or(u32::MAX, |b| func.loop_depth(b));
                crate::work::add(many.len() as u64);
                let depths: Vec<u32> = many.iter().map(depth).collect();
                let Some(&min) = depths.iter().min() else { return Choice::Undefined };
                let outer: Vec<InstrId> = many.iter().zip(&depths).filter(|(_, d)| **d == min).map(|(i, _)| *i).collect();
                match outer.as_slice() {
                    [one] if depths.iter().any(|d| *d > min) => Choice::One(*one),
                    // Several paths define it before the loops (if/else assignments, or the
                    // same initialisation repeated on two paths): fine when every one gives
                    // the same value.
                    _ => {
                        let mut seen = std::collections::HashSet::new();
                        Choice::All(
                            outer
                                .into_iter()
                                .filter(|d| match func.instr(*d) {
                                    Some(i) => seen.insert(format!("{}|{:?}|{:?}", i.opcode, i.class, func.operands_of(i))),
                                    None => true,
                                })
                                .collect(),
                        )
                    }
                }
            }
        })
    }
}

fn dim(v: [i64; 3], d: Dim) -> i64 {
    match d {
        Dim::X => v[0],
        Dim::Y => v[1],
        Dim::Z => v[2],
    }
}

fn dim_u(v: [u32; 3], d: Dim) -> i64 {
    i64::from(match d {
        Dim::X => v[0],
        Dim::Y => v[1],
        Dim::Z => v[2],
    })
}

impl Lane<'_> {
    fn operand(&mut self, op: &Operand) -> Option<i64> {
        match op {
            Operand::Reg(r) => self.reg(*r),
            Operand::NegReg(r) => self.reg(*r).map(|v| i64::from(v == 0)),
            Operand::Imm(v) => Some(*v),
            // `WARP_SZ` is the only symbolic constant PTX predefines (PTX ISA §10.29).
            Operand::Symbol(s) if &**s == "WARP_SZ" => Some(32),
            // The address of a variable (`mov.u32 %r, tile`): its own base, which is
            // aligned; only the offset from it matters for sectors and banks (as for the
            // affine forms, `build.rs`).
            Operand::Symbol(_) => Some(0),
            _ => None,
        }
    }

    /// The register's value in this lane.
    ///
    /// Any `None` met anywhere in an evaluation makes the whole result `None`: every
    /// operand is required (`?`), and several definitions must all give a value. So the
    /// evaluation stops at the first one: a register re-entered while its own value is
    /// being computed (a definition that reads the register it defines, `add r, r, 1`)
    /// answers `None` at once (the placeholder put in the memo first) instead of recursing
    /// to the depth limit, which gave `None` as well, after `MAX_DEPTH` rounds over every
    /// definition.
    fn reg(&mut self, r: RegId) -> Option<i64> {
        if let Some(v) = self.memo.get(&r) {
            return *v;
        }
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.memo.insert(r, None);
        self.depth += 1;
        let v = self.reg_uncached(r);
        self.depth -= 1;
        self.memo.insert(r, v);
        v
    }

    fn reg_uncached(&mut self, r: RegId) -> Option<i64> {
        if let Some(s) = self.func.register(r).and_then(|reg| reg.special) {
            return match s {
                SpecialReg::Tid(d) => Some(dim(self.tid, d)),
                SpecialReg::LaneId => Some(self.lane),
                SpecialReg::Ctaid(d) => Some(dim(BLOCK, d)),
                SpecialReg::Ntid(d) => Some(dim_u(self.env.block, d)),
                SpecialReg::Nctaid(d) => Some(dim_u(self.env.grid, d)),
                SpecialReg::WarpId => Some(0),
                _ => None,
            };
        }
        let def = match self.choices.choice(self.func, r) {
            Choice::Undefined => return None,
            Choice::One(d) => *d,
            Choice::All(outer) => {
                let outer = outer.clone();
                let mut first = None;
                for d in outer {
                    let v = self.value(d)?;
                    if *first.get_or_insert(v) != v {
                        return None;
                    }
                }
                return first;
            }
        };
        self.value(def)
    }

    /// The value an instruction writes.
    fn value(&mut self, id: InstrId) -> Option<i64> {
        crate::work::add(1);
        if self.choices.budget == 0 {
            self.choices.exhausted = true;
            return None;
        }
        self.choices.budget -= 1;
        let func = self.func;
        let instr = func.instr(id)?;
        let args = self.env.args;
        let stand_ins = self.stand_ins;
        let param = |idx: u32| -> Option<i64> {
            if let Some(v) = args.get(&idx) {
                return Some(*v);
            }
            let p = func.params.get(idx as usize)?;
            // 64-bit parameters are almost always pointers: give each its own aligned base.
            if p.ty.ends_with("64") && !p.ty.starts_with('f') {
                Some((i64::from(idx) + 1) << 32)
            } else {
                stand_ins.then_some(UNKNOWN_PARAM)
            }
        };
        let ops = func.operands_of(instr);
        // A local slot one store alone writes (a `volatile` local): the stored value.
        if let Some(op) = func.forwarded_local(id) {
            return self.operand(op);
        }
        IntOp::of(func, id).eval(|i| self.operand(ops.get(i)?), param)
    }
}

/// The integer operation of one instruction, decoded once from its opcode
/// ([`crate::predicate::decode`], the decoder the branch conditions use too) and evaluated
/// with the same arithmetic ([`crate::predicate::apply`]): exact 64-bit integer arithmetic
/// at the instruction's width. Predicates are 0 or 1. Shared by the per-lane address
/// evaluation here and the control-flow simulation (`simt.rs`), which runs it many times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct IntOp(Decoded);

impl IntOp {
    /// Decodes instruction `id`. A forwarded local load ([`Decoded::Forwarded`]) reads no
    /// operand of its own: its callers evaluate the stored operand instead (or, as
    /// [`IntOp::copy`], pass it as source 1).
    pub(crate) fn of(func: &Function, id: InstrId) -> IntOp {
        IntOp(crate::predicate::decode(func, id))
    }

    /// A copy of source 1.
    pub(crate) fn copy() -> IntOp {
        IntOp(Decoded::Copy)
    }

    /// The value written to the (first) destination from the value of source operand `i`
    /// (`src(i)`, 1-based as in the operand list) and of parameter `k` (`param(k)`);
    /// `None` when something needed is unknown.
    pub(crate) fn eval(&self, mut src: impl FnMut(usize) -> Option<i64>, param: impl Fn(u32) -> Option<i64>) -> Option<i64> {
        match self.0 {
            Decoded::Param { index, ty } => {
                let v = param(index)?;
                Some(ty.map_or(v, |t| t.norm(v)))
            }
            Decoded::Copy => src(1),
            Decoded::Op { op, ty } => {
                let n = crate::predicate::arity(op);
                let a = src(1)?;
                let b = if n >= 2 { src(2)? } else { a };
                let c = if n >= 3 { src(3)? } else { a };
                crate::predicate::apply(op, ty, a, b, c)
            }
            Decoded::Data | Decoded::Unsupported | Decoded::Forwarded => None,
        }
    }

    /// `true` for a comparison (`setp`).
    pub(crate) fn compares(&self) -> bool {
        matches!(self.0, Decoded::Op { op: crate::predicate::Op::Setp { .. }, .. })
    }

    /// `true` for a `setp` that combines its comparison with a third predicate (its second
    /// destination is then not simply the negation of the first).
    pub(crate) fn combines(&self) -> bool {
        matches!(self.0, Decoded::Op { op: crate::predicate::Op::Setp { bool_op: Some(_), .. }, .. })
    }
}

/// The value of `reg` on entry to the loops around its definitions (the outermost
/// definitions), averaged over the lanes of the representative warp; `None` when it
/// depends on data or on an integer argument not supplied (no stand-in value: it would
/// become a trip count).
pub fn initial_value_avg(func: &Function, reg: RegId, env: &Env<'_>) -> Option<f64> {
    initial_value_avg_with(func, reg, env, &mut DefChoices::for_function(func))
}

/// [`initial_value_avg`] reusing the definition choices of earlier evaluations in `func`.
pub fn initial_value_avg_with(func: &Function, reg: RegId, env: &Env<'_>, choices: &mut DefChoices) -> Option<f64> {
    let tids = crate::access::lanes(env.block);
    // The last lane first: lane 0 (thread 0) is where differing definitions most often
    // agree by accident (`tid` and `0`), so a failing evaluation fails sooner. The sum
    // still runs in lane order.
    let mut values = vec![0i64; tids.len()];
    for (lane, tid) in tids.iter().enumerate().rev() {
        let mut ev = Lane { func, env, choices: &mut *choices, tid: *tid, lane: lane as i64, memo: HashMap::new(), depth: 0, stand_ins: false };
        values[lane] = ev.reg(reg)?;
    }
    let mut sum = 0.0;
    for v in values {
        sum += v as f64;
    }
    Some(sum / tids.len().max(1) as f64)
}


/// The lanes of a memory instruction by concrete evaluation; `None` when its address
/// depends on data.
pub fn lanes(func: &Function, id: InstrId, env: &Env<'_>) -> Option<Lanes> {
    lanes_with(func, id, env, &mut DefChoices::for_function(func))
}

/// [`lanes`] reusing the definition choices of earlier evaluations in `func` (one
/// [`DefChoices`] per function keeps a kernel's accesses linear in its size).
pub fn lanes_with(func: &Function, id: InstrId, env: &Env<'_>, choices: &mut DefChoices) -> Option<Lanes> {
    let instr = func.instr(id)?;
    let addrs: Vec<(AddrBase, i64)> = func
        .operands_of(instr)
        .iter()
        .filter_map(|op| match op {
            Operand::Addr { base, offset } => Some((base.clone(), *offset)),
            _ => None,
        })
        .collect();
    // `cp.async [dst], [src]` from global memory: the global side is the source.
    let global_copy = instr.base() == "cp" && matches!(instr.class, InstrClass::Load(Space::Global));
    let (base, offset) = if global_copy { addrs.last()?.clone() } else { addrs.first()?.clone() };
    let tids = crate::access::lanes(env.block);
    // The last lane first, as in `initial_value_avg_with`.
    let mut addrs = vec![0i64; tids.len()];
    for (lane, tid) in tids.iter().enumerate().rev() {
        let mut ev = Lane { func, env, choices: &mut *choices, tid: *tid, lane: lane as i64, memo: HashMap::new(), depth: 0, stand_ins: true };
        let b = match &base {
            AddrBase::Reg(r) => ev.reg(*r)?,
            AddrBase::Symbol(_) | AddrBase::Absolute => 0,
        };
        addrs[lane] = b.wrapping_add(offset);
    }
    // Along x: the lane whose only difference from lane 0 is threadIdx.x + 1.
    let x_stride = (env.block[0] > 1 && addrs.len() > 1).then(|| addrs[1].wrapping_sub(addrs[0]));
    Some(Lanes { addrs, unknown_stride: false, x_stride })
}

#[cfg(test)]
mod tests {
    use crate::predicate::{IntTy, Op, apply};

    #[test]
    fn magic_number_division_by_20() {
        // nvcc's x / 20 for signed 32-bit x: t = mulhi(x, 1717986919); (t >> 3) + (t >>> 31).
        let (s32, u32t) = (IntTy::of("s32").expect("s32"), IntTy::of("u32").expect("u32"));
        for x in [0i64, 1, 19, 20, 399, 12345, -1, -20, -21] {
            let t = apply(Op::MulHi, s32, x, 1_717_986_919, 0).expect("mul.hi");
            let q = (t >> 3) + ((t as u32 as i64) >> 31);
            assert_eq!(q, x / 20, "x = {x}");
        }
        assert_eq!(apply(Op::MulHi, u32t, u32::MAX as i64, 2, 0), Some(1));
    }
}
