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
    tid: [i64; 3],
    lane: i64,
    memo: HashMap<RegId, Option<i64>>,
    depth: u32,
    /// Only values that are the same in every thread of the grid and known for certain:
    /// supplied arguments, launch dimensions, constants, registers written once.
    strict: bool,
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
            Operand::Symbol(_) if !self.strict => Some(0),
            _ => None,
        }
    }

    fn reg(&mut self, r: RegId) -> Option<i64> {
        if let Some(v) = self.memo.get(&r) {
            return *v;
        }
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let v = self.reg_uncached(r);
        self.depth -= 1;
        self.memo.insert(r, v);
        v
    }

    fn reg_uncached(&mut self, r: RegId) -> Option<i64> {
        if let Some(s) = self.func.register(r).and_then(|reg| reg.special) {
            if self.strict && !matches!(s, SpecialReg::Ntid(_) | SpecialReg::Nctaid(_)) {
                return None;
            }
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
        let defs = self.func.defs_of(r).to_vec();
        if self.strict {
            // One unguarded definition: the register holds one value for the whole run.
            return match defs.as_slice() {
                [one] if self.func.instr(*one).is_some_and(|i| i.guard.is_none()) => self.value(*one),
                _ => None,
            };
        }
        let def = match defs.as_slice() {
            [] => return None,
            [one] => *one,
            many => {
                // The value on the first iteration: the definition outside every loop that
                // contains another definition (an induction variable's initial value).
                let block_of = |d: &InstrId| self.func.instr(*d).map(|i| i.block);
                let depth = |d: &InstrId| block_of(d).map_or(u32::MAX, |b| self.func.loop_depth(b));
                let min = many.iter().map(depth).min()?;
                let outer: Vec<InstrId> = many.iter().copied().filter(|d| depth(d) == min).collect();
                match outer.as_slice() {
                    [one] if many.iter().any(|d| depth(d) > min) => *one,
                    _ => {
                        // Several paths define it before the loops (if/else assignments,
                        // or the same initialisation repeated on two paths): fine when every
                        // one gives the same value.
                        let vals: Vec<Option<i64>> = outer.iter().map(|d| self.value(*d)).collect();
                        return if vals.iter().all(|v| v.is_some() && *v == vals[0]) { vals[0] } else { None };
                    }
                }
            }
        };
        self.value(def)
    }

    /// The value an instruction writes.
    fn value(&mut self, id: InstrId) -> Option<i64> {
        let func = self.func;
        let instr = func.instr(id)?;
        let (strict, args) = (self.strict, self.env.args);
        let param = |idx: u32| -> Option<i64> {
            if let Some(v) = args.get(&idx) {
                return Some(*v);
            }
            if strict {
                return None;
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
    let tids = crate::access::lanes(env.block);
    let mut sum = 0.0;
    for (lane, tid) in tids.iter().enumerate() {
        let mut ev = Lane { func, env, tid: *tid, lane: lane as i64, memo: HashMap::new(), depth: 0, strict: false };
        sum += ev.reg(reg)? as f64;
    }
    Some(sum / tids.len().max(1) as f64)
}

/// The value of `reg` when it is the same in every thread and every execution and follows
/// from the supplied arguments and the launch dimensions alone (a register written once,
/// from constants, parameters, `%ntid` and `%nctaid`); `None` otherwise. Decides the
/// branches nvcc emits around unrolled loops (`n < 4` skips the main loop, `(n & 3) == 1`
/// ends the remainder chain).
pub fn uniform_value(func: &Function, reg: RegId, env: &Env<'_>) -> Option<i64> {
    let mut ev = Lane { func, env, tid: [0; 3], lane: 0, memo: HashMap::new(), depth: 0, strict: true };
    ev.reg(reg)
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
    let mut addrs = Vec::with_capacity(tids.len());
    for (lane, tid) in tids.iter().enumerate() {
        let mut ev = Lane { func, env, tid: *tid, lane: lane as i64, memo: HashMap::new(), depth: 0, strict: false };
        let b = match &base {
            AddrBase::Reg(r) => ev.reg(*r)?,
            AddrBase::Symbol(_) | AddrBase::Absolute => 0,
        };
        addrs.push(b.wrapping_add(offset));
    }
    // Along x: the lane whose only difference from lane 0 is threadIdx.x + 1.
    let x_stride = (env.block[0] > 1 && addrs.len() > 1).then(|| addrs[1] - addrs[0]);
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
