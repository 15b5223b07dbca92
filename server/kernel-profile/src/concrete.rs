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
        let param = |idx: u32| -> Option<i64> {
            if let Some(v) = args.get(&idx) {
                return Some(*v);
            }
            let p = func.params.get(idx as usize)?;
            // 64-bit parameters are almost always pointers: give each its own aligned base.
            Some(if p.ty.ends_with("64") && !p.ty.starts_with('f') { (i64::from(idx) + 1) << 32 } else { UNKNOWN_PARAM })
        };
        let ops = func.operands_of(instr);
        IntOp::of(func, instr).eval(|i| self.operand(ops.get(i)?), param)
    }
}

/// The integer operation of one instruction, decoded once from its opcode, with the
/// semantics of [`IntOp::eval`]: exactly, in 64-bit integer arithmetic at the
/// instruction's width. Predicates are 0 or 1. Shared by the per-lane address evaluation
/// here and the control-flow simulation (`simt.rs`), which runs it many times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct IntOp {
    kind: Kind,
    bits: u32,
    signed: bool,
    wide: bool,
    /// Comparison of a `setp` on unsigned (or bit) types.
    unsigned: bool,
    cmp: Cmp,
    /// `setp.CMP.BOOL p, a, b, c`: how the comparison combines with `c`.
    combine: Combine,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `ld.param` of the parameter with this index.
    Param(u32),
    Copy,
    Add,
    Sub,
    Mul,
    MulHi,
    Mad,
    MadHi,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    NotPred,
    Not,
    Neg,
    Abs,
    Min,
    Max,
    Div,
    Rem,
    Selp,
    Setp,
    /// Not integer arithmetic on known values (floating point, loads, shuffles...).
    Opaque,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Combine {
    None,
    And,
    Or,
    Xor,
}

impl IntOp {
    /// Decodes `instr`.
    pub(crate) fn of(func: &Function, instr: &ptx_ir::Instr) -> IntOp {
        let ops = func.operands_of(instr);
        let base = instr.base();
        let ty = instr.ty();
        let mut op = IntOp {
            kind: Kind::Opaque,
            bits: u32::try_from(ty.map(ptx::type_bytes).unwrap_or(8) * 8).unwrap_or(64),
            signed: ty.is_some_and(|t| t.starts_with('s')),
            wide: instr.has_modifier("wide"),
            unsigned: ty.is_some_and(|t| t.starts_with('u') || t.starts_with('b')),
            cmp: Cmp::Eq,
            combine: Combine::None,
        };
        let hi = instr.has_modifier("hi");
        if matches!(ty, Some("f16" | "f32" | "f64" | "bf16" | "f16x2" | "bf16x2")) && base != "cvt" && base != "mov" {
            return op;
        }
        op.kind = match (base, instr.class) {
            ("ld", InstrClass::Load(Space::Param)) => match ops.get(1) {
                Some(Operand::Addr { base: AddrBase::Symbol(sym), .. }) => match func.param_index(sym) {
                    Some(i) => Kind::Param(i),
                    None => Kind::Opaque,
                },
                _ => Kind::Opaque,
            },
            ("mov" | "cvta", _) => Kind::Copy,
            // Integer conversions keep the value (sign or zero extension, or a truncation
            // we treat as exact for in-range indices).
            ("cvt", _) if !instr.modifiers().any(|m| m.starts_with('f') || m == "bf16") => Kind::Copy,
            ("add", _) => Kind::Add,
            ("sub", _) => Kind::Sub,
            ("mul" | "mul24", _) if !hi => Kind::Mul,
            // The high half of the product: nvcc's division by a constant (`x / 20` is
            // `mul.hi.s32 x, 1717986919` plus shifts; Granlund & Montgomery 1994).
            ("mul", _) => Kind::MulHi,
            ("mad", _) if hi => Kind::MadHi,
            ("mad" | "mad24", _) => Kind::Mad,
            ("shl", _) => Kind::Shl,
            ("shr", _) => Kind::Shr,
            ("and", _) => Kind::And,
            ("or", _) => Kind::Or,
            ("xor", _) => Kind::Xor,
            ("not", _) if ty == Some("pred") => Kind::NotPred,
            ("not", _) => Kind::Not,
            ("neg", _) => Kind::Neg,
            ("abs", _) => Kind::Abs,
            ("min", _) => Kind::Min,
            ("max", _) => Kind::Max,
            ("div", _) => Kind::Div,
            ("rem", _) => Kind::Rem,
            ("selp", _) => Kind::Selp,
            ("setp", _) => {
                // Compared at the instruction's width; `lt`/`le`/`gt`/`ge` on unsigned and
                // bit types compare unsigned (PTX ISA, `setp`: "lo, ls, hi, hs" are the
                // unsigned spellings; nvcc writes `setp.lt.u32`).
                let (cmp, unsigned) = match instr.modifiers().next() {
                    Some("eq") => (Cmp::Eq, op.unsigned),
                    Some("ne") => (Cmp::Ne, op.unsigned),
                    Some("lt") => (Cmp::Lt, op.unsigned),
                    Some("le") => (Cmp::Le, op.unsigned),
                    Some("gt") => (Cmp::Gt, op.unsigned),
                    Some("ge") => (Cmp::Ge, op.unsigned),
                    Some("lo") => (Cmp::Lt, true),
                    Some("ls") => (Cmp::Le, true),
                    Some("hi") => (Cmp::Gt, true),
                    Some("hs") => (Cmp::Ge, true),
                    _ => return op,
                };
                op.cmp = cmp;
                op.unsigned = unsigned;
                // `setp.CMP.BOOL p, a, b, c` combines the comparison with a third
                // predicate (PTX ISA, `setp`).
                if ops.len() > 3 {
                    op.combine = if instr.has_modifier("and") {
                        Combine::And
                    } else if instr.has_modifier("or") {
                        Combine::Or
                    } else if instr.has_modifier("xor") {
                        Combine::Xor
                    } else {
                        return op;
                    };
                }
                Kind::Setp
            }
            _ => Kind::Opaque,
        };
        op
    }

    /// The value written to the (first) destination from the value of source operand `i`
    /// (`src(i)`, 1-based as in the operand list) and of parameter `k` (`param(k)`);
    /// `None` when something needed is unknown.
    pub(crate) fn eval(&self, mut src: impl FnMut(usize) -> Option<i64>, param: impl Fn(u32) -> Option<i64>) -> Option<i64> {
        let bits = u64::from(self.bits);
        let (signed, wide) = (self.signed, self.wide);
        let wrap = |v: i64| -> i64 {
            if wide || bits >= 64 || bits == 0 {
                v
            } else if signed {
                let sh = 64 - bits;
                (v << sh) >> sh
            } else {
                v & ((1i64 << bits) - 1)
            }
        };
        Some(match self.kind {
            Kind::Param(i) => param(i)?,
            Kind::Copy => src(1)?,
            Kind::Add => wrap(src(1)?.wrapping_add(src(2)?)),
            Kind::Sub => wrap(src(1)?.wrapping_sub(src(2)?)),
            Kind::Mul => wrap(src(1)?.wrapping_mul(src(2)?)),
            Kind::MulHi => mul_hi(src(1)?, src(2)?, bits, signed),
            Kind::MadHi => wrap(mul_hi(src(1)?, src(2)?, bits, signed).wrapping_add(src(3)?)),
            Kind::Mad => wrap(src(1)?.wrapping_mul(src(2)?).wrapping_add(src(3)?)),
            Kind::Shl => wrap(src(1)?.wrapping_shl(u32::try_from(src(2)?).ok()?)),
            Kind::Shr => {
                let (a, k) = (src(1)?, u32::try_from(src(2)?).ok()?.min(63));
                if signed { a >> k } else { ((a as u64 & if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }) >> k) as i64 }
            }
            Kind::And => src(1)? & src(2)?,
            Kind::Or => src(1)? | src(2)?,
            Kind::Xor => src(1)? ^ src(2)?,
            Kind::NotPred => i64::from(src(1)? == 0),
            Kind::Not => wrap(!src(1)?),
            Kind::Neg => wrap(src(1)?.wrapping_neg()),
            Kind::Abs => src(1)?.wrapping_abs(),
            Kind::Min => src(1)?.min(src(2)?),
            Kind::Max => src(1)?.max(src(2)?),
            Kind::Div => {
                let (a, b) = (src(1)?, src(2)?);
                if b == 0 {
                    return None;
                }
                a.wrapping_div(b)
            }
            Kind::Rem => {
                let (a, b) = (src(1)?, src(2)?);
                if b == 0 {
                    return None;
                }
                a.wrapping_rem(b)
            }
            Kind::Selp => {
                let p = src(3)?;
                if p != 0 { src(1)? } else { src(2)? }
            }
            Kind::Setp => {
                let (a, b) = (src(1)?, src(2)?);
                let r = if self.unsigned || bits == 0 || bits >= 64 {
                    let mask = if bits == 0 || bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
                    let (ua, ub) = (a as u64 & mask, b as u64 & mask);
                    match self.cmp {
                        Cmp::Eq => ua == ub,
                        Cmp::Ne => ua != ub,
                        Cmp::Lt => ua < ub,
                        Cmp::Le => ua <= ub,
                        Cmp::Gt => ua > ub,
                        Cmp::Ge => ua >= ub,
                    }
                } else {
                    let sh = 64 - bits;
                    let (a, b) = ((a << sh) >> sh, (b << sh) >> sh);
                    match self.cmp {
                        Cmp::Eq => a == b,
                        Cmp::Ne => a != b,
                        Cmp::Lt => a < b,
                        Cmp::Le => a <= b,
                        Cmp::Gt => a > b,
                        Cmp::Ge => a >= b,
                    }
                };
                let r = match self.combine {
                    Combine::None => r,
                    Combine::And => r && src(3)? != 0,
                    Combine::Or => r || src(3)? != 0,
                    Combine::Xor => r ^ (src(3)? != 0),
                };
                i64::from(r)
            }
            Kind::Opaque => return None,
        })
    }

    /// `true` for a `setp` that combines its comparison with a third predicate (its second
    /// destination is then not simply the negation of the first).
    pub(crate) fn combines(&self) -> bool {
        self.combine != Combine::None
    }
}

/// The value of `reg` on entry to the loops around its definitions (the outermost
/// definitions), averaged over the lanes of the representative warp; `None` when it
/// depends on data.
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
        let mut ev = Lane { func, env, choices: &mut *choices, tid: *tid, lane: lane as i64, memo: HashMap::new(), depth: 0 };
        values[lane] = ev.reg(reg)?;
    }
    let mut sum = 0.0;
    for v in values {
        sum += v as f64;
    }
    Some(sum / tids.len().max(1) as f64)
}

/// The high `bits` bits of the `2·bits`-bit product.
fn mul_hi(a: i64, b: i64, bits: u64, signed: bool) -> i64 {
    let bits = bits.clamp(8, 64) as u32;
    if signed {
        let sh = 64 - bits;
        let (a, b) = (i128::from((a << sh) >> sh), i128::from((b << sh) >> sh));
        ((a * b) >> bits) as i64
    } else {
        let mask: u128 = if bits == 64 { u128::from(u64::MAX) } else { (1u128 << bits) - 1 };
        let (a, b) = (a as u64 as u128 & mask, b as u64 as u128 & mask);
        ((a * b) >> bits) as i64
    }
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
        let mut ev = Lane { func, env, choices: &mut *choices, tid: *tid, lane: lane as i64, memo: HashMap::new(), depth: 0 };
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
    use super::mul_hi;

    #[test]
    fn magic_number_division_by_20() {
        // nvcc's x / 20 for signed 32-bit x: t = mulhi(x, 1717986919); (t >> 3) + (t >>> 31).
        for x in [0i64, 1, 19, 20, 399, 12345, -1, -20, -21] {
            let t = mul_hi(x, 1_717_986_919, 32, true);
            let q = (t >> 3) + ((t as u32 as i64) >> 31);
            assert_eq!(q, x / 20, "x = {x}");
        }
        assert_eq!(mul_hi(u32::MAX as i64, 2, 32, false), 1);
    }
}
