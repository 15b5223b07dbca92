//! Branch conditions as small programs over the thread and block index.
//!
//! A conditional branch `@%p bra L` decides on a predicate that nvcc computes with integer
//! arithmetic from `%tid`, `%ctaid`, the launch dimensions and the kernel parameters
//! (`setp.ge.s32 %p1, %r1, %r2` for `if (i >= n) return;`). [`compile`] follows the
//! predicate's def-use chain back to those leaves, *strictly*: a kernel parameter nobody
//! supplied, a value loaded from memory, a floating-point value, a register written on
//! several paths or inside a loop, or an instruction under a guard makes the condition
//! unknown, and the caller falls back to its documented default. This differs on purpose
//! from the address evaluator (`concrete.rs`), which stands in plausible values for
//! unknowns because a representative address pattern is better than none; a branch
//! decided on an invented value would be wrong, not approximate.
//!
//! What is known is folded into constants (launch dimensions, supplied arguments), so a
//! condition on the launch and the arguments alone (`flag`, `n % 4 != 0`,
//! `blockDim.x > 32`) compiles to a constant, and one on the block index only is
//! evaluated once per block. The rest is a [`Tape`]: nodes in dependency order, evaluated
//! per lane in 64-bit integer arithmetic with PTX's wrap-around, sign and zero extension
//! and clamped shifts (PTX ISA, "Integer Arithmetic Instructions" and "Comparison and
//! Selection Instructions: setp").

use std::collections::HashMap;

use ptx_ir::ir::{AddrBase, Dim, Function, InstrId, Operand, RegId, SpecialReg};
use ptx_ir::{InstrClass, Space};

use crate::affine::Env;

/// How far a condition's value can vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// The same for every thread of the grid.
    Grid,
    /// The same for every thread of a block (depends on `%ctaid` only).
    Block,
    /// Differs between threads (`%tid`, `%laneid`).
    Thread,
}

/// Why a condition could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unknown {
    /// It depends on a value loaded from memory, on floating-point data, or on a register
    /// of the hardware (`%smid`, `%clock`).
    Data,
    /// It depends on the kernel parameter with this index, whose value was not supplied.
    Argument(u32),
    /// It depends on a register written on several paths or updated inside a loop.
    Varies,
    /// It uses an instruction this evaluator does not model.
    Unsupported(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IntTy {
    bits: u32,
    signed: bool,
}

impl IntTy {
    const PRED: IntTy = IntTy { bits: 1, signed: false };

    pub(crate) fn of(name: &str) -> Option<IntTy> {
        let (signed, digits) = match name.as_bytes().first()? {
            b's' => (true, &name[1..]),
            b'u' | b'b' => (false, &name[1..]),
            _ if name == "pred" => return Some(IntTy::PRED),
            _ => return None,
        };
        let bits: u32 = digits.parse().ok()?;
        matches!(bits, 8 | 16 | 32 | 64).then_some(IntTy { bits, signed })
    }

    pub(crate) fn bits(self) -> u32 {
        self.bits
    }

    /// The least and greatest values of the type (below 64 bits).
    pub(crate) fn range(self) -> (i64, i64) {
        let b = self.bits.min(63);
        if self.signed { (-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1) } else { (0, (1i64 << b) - 1) }
    }

    fn wide(self) -> IntTy {
        IntTy { bits: (self.bits * 2).min(64), signed: self.signed }
    }

    /// `v` reduced to this type's width, sign- or zero-extended back to 64 bits.
    pub(crate) fn norm(self, v: i64) -> i64 {
        if self.bits >= 64 {
            v
        } else if self.signed {
            let sh = 64 - self.bits;
            (v << sh) >> sh
        } else {
            v & ((1i64 << self.bits) - 1)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Unsigned `lo ls hi hs`.
    Lo,
    Ls,
    Hi,
    Hs,
}

impl Cmp {
    fn of(name: &str) -> Option<Cmp> {
        Some(match name {
            "eq" => Cmp::Eq,
            "ne" => Cmp::Ne,
            "lt" => Cmp::Lt,
            "le" => Cmp::Le,
            "gt" => Cmp::Gt,
            "ge" => Cmp::Ge,
            "lo" => Cmp::Lo,
            "ls" => Cmp::Ls,
            "hi" => Cmp::Hi,
            "hs" => Cmp::Hs,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    MulLo,
    MulWide,
    MulHi,
    MadLo,
    MadWide,
    MadHi,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Not,
    Neg,
    Abs,
    Min,
    Max,
    Div,
    Rem,
    /// `selp d, a, b, p`.
    Selp,
    /// `setp.cmp[.boolop] p[|q], a, b[, c]`; `negate` for the `q` half.
    Setp { cmp: Cmp, bool_op: Option<BoolOp>, negate: bool },
    /// `cvt.dst.src`: the node's type is the destination's.
    Cvt(IntTy),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaf {
    Tid(Dim),
    Ctaid(Dim),
    Lane,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Const(i64),
    Leaf(Leaf),
    Op { op: Op, ty: IntTy, args: [u32; 3] },
}

/// A compiled condition: evaluate with [`Tape::eval`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tape {
    nodes: Vec<Node>,
    root: u32,
    pub(crate) level: Level,
    /// Whether it reads `%ctaid`: a condition on the thread index alone is the same in
    /// every block.
    pub(crate) uses_ctaid: bool,
}

/// Where one lane is: its thread index, its block index and its lane number.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Point {
    pub(crate) tid: [i64; 3],
    pub(crate) ctaid: [i64; 3],
    pub(crate) lane: i64,
}

fn dim(v: [i64; 3], d: Dim) -> i64 {
    match d {
        Dim::X => v[0],
        Dim::Y => v[1],
        Dim::Z => v[2],
    }
}

impl Tape {
    /// The constant value, when the condition does not depend on where it runs.
    pub(crate) fn constant(&self) -> Option<bool> {
        match self.nodes.get(self.root as usize) {
            Some(Node::Const(v)) => Some(*v != 0),
            _ => None,
        }
    }

    /// The condition at one lane; `None` where the arithmetic is undefined there
    /// (a division by zero). `scratch` is reused between calls.
    pub(crate) fn eval(&self, at: &Point, scratch: &mut Vec<i64>) -> Option<bool> {
        scratch.clear();
        scratch.resize(self.nodes.len(), 0);
        for (i, node) in self.nodes.iter().enumerate() {
            scratch[i] = match *node {
                Node::Const(v) => v,
                Node::Leaf(Leaf::Tid(d)) => dim(at.tid, d),
                Node::Leaf(Leaf::Ctaid(d)) => dim(at.ctaid, d),
                Node::Leaf(Leaf::Lane) => at.lane,
                // Arguments always precede the node that reads them.
                Node::Op { op, ty, args: [a, b, c] } => apply(op, ty, scratch[a as usize], scratch[b as usize], scratch[c as usize])?,
            };
        }
        scratch.get(self.root as usize).map(|v| *v != 0)
    }
}

/// The high `bits` bits of the `2·bits`-bit product.
fn mul_hi(a: i64, b: i64, ty: IntTy) -> i64 {
    let bits = ty.bits.clamp(8, 64);
    if ty.signed {
        ((i128::from(a) * i128::from(b)) >> bits) as i64
    } else {
        let mask: u128 = if bits == 64 { u128::from(u64::MAX) } else { (1u128 << bits) - 1 };
        (((a as u64 as u128 & mask) * (b as u64 as u128 & mask)) >> bits) as i64
    }
}

fn compare(cmp: Cmp, a: i64, b: i64, ty: IntTy) -> bool {
    let (a, b) = (ty.norm(a), ty.norm(b));
    // Zero-extended values below 64 bits compare correctly as i64; 64-bit unsigned ones
    // need the unsigned view.
    let unsigned = !ty.signed && ty.bits >= 64;
    let (ua, ub) = (a as u64, b as u64);
    match cmp {
        Cmp::Eq => a == b,
        Cmp::Ne => a != b,
        Cmp::Lt if unsigned => ua < ub,
        Cmp::Le if unsigned => ua <= ub,
        Cmp::Gt if unsigned => ua > ub,
        Cmp::Ge if unsigned => ua >= ub,
        Cmp::Lt => a < b,
        Cmp::Le => a <= b,
        Cmp::Gt => a > b,
        Cmp::Ge => a >= b,
        Cmp::Lo => unsigned_cmp(a, b, ty, |x, y| x < y),
        Cmp::Ls => unsigned_cmp(a, b, ty, |x, y| x <= y),
        Cmp::Hi => unsigned_cmp(a, b, ty, |x, y| x > y),
        Cmp::Hs => unsigned_cmp(a, b, ty, |x, y| x >= y),
    }
}

fn mask(ty: IntTy) -> u64 {
    if ty.bits >= 64 { u64::MAX } else { (1u64 << ty.bits) - 1 }
}

fn unsigned_cmp(a: i64, b: i64, ty: IntTy, f: impl Fn(u64, u64) -> bool) -> bool {
    f(a as u64 & mask(ty), b as u64 & mask(ty))
}

/// The value of `op` at type `ty` on `a`, `b`, `c` (unused operands are ignored): exact
/// 64-bit integer arithmetic at the instruction's width, as PTX defines each operation.
pub(crate) fn apply(op: Op, ty: IntTy, a: i64, b: i64, c: i64) -> Option<i64> {
    let n = |v: i64| ty.norm(v);
    // PTX clamps shift amounts to the operand width.
    let shift = |k: i64| -> u32 { u32::try_from(k.max(0)).unwrap_or(u32::MAX).min(ty.bits) };
    Some(match op {
        Op::Add => n(a.wrapping_add(b)),
        Op::Sub => n(a.wrapping_sub(b)),
        Op::MulLo => n(a.wrapping_mul(b)),
        Op::MulWide => ty.wide().norm(n(a).wrapping_mul(n(b))),
        Op::MulHi => n(mul_hi(n(a), n(b), ty)),
        Op::MadLo => n(a.wrapping_mul(b).wrapping_add(c)),
        Op::MadWide => ty.wide().norm(n(a).wrapping_mul(n(b)).wrapping_add(c)),
        Op::MadHi => n(mul_hi(n(a), n(b), ty).wrapping_add(c)),
        Op::Shl => {
            let k = shift(b);
            if k >= 64 { 0 } else { n(a.wrapping_shl(k)) }
        }
        Op::Shr => {
            let k = shift(b).min(63);
            if ty.signed { n(n(a) >> k) } else { ((n(a) as u64 & mask(ty)) >> k) as i64 }
        }
        Op::And => n(a & b),
        Op::Or => n(a | b),
        Op::Xor => n(a ^ b),
        Op::Not if ty == IntTy::PRED => i64::from(a == 0),
        Op::Not => n(!a),
        Op::Neg => n(a.wrapping_neg()),
        Op::Abs => n(n(a).wrapping_abs()),
        Op::Min => unsigned_or_signed(a, b, ty, true),
        Op::Max => unsigned_or_signed(a, b, ty, false),
        Op::Div | Op::Rem => {
            let (a, b) = (n(a), n(b));
            if b == 0 {
                return None;
            }
            let v = if ty.signed || ty.bits < 64 {
                if op == Op::Div { a.wrapping_div(b) } else { a.wrapping_rem(b) }
            } else if op == Op::Div {
                ((a as u64) / (b as u64)) as i64
            } else {
                ((a as u64) % (b as u64)) as i64
            };
            n(v)
        }
        Op::Selp => {
            if c != 0 { a } else { b }
        }
        Op::Setp { cmp, bool_op, negate } => {
            let r = compare(cmp, a, b, ty) != negate;
            let r = match bool_op {
                None => r,
                Some(BoolOp::And) => r && c != 0,
                Some(BoolOp::Or) => r || c != 0,
                Some(BoolOp::Xor) => r != (c != 0),
            };
            i64::from(r)
        }
        Op::Cvt(src) => n(src.norm(a)),
    })
}

fn unsigned_or_signed(a: i64, b: i64, ty: IntTy, min: bool) -> i64 {
    let (a, b) = (ty.norm(a), ty.norm(b));
    if !ty.signed && ty.bits >= 64 {
        let (ua, ub) = (a as u64, b as u64);
        (if min { ua.min(ub) } else { ua.max(ub) }) as i64
    } else if min {
        a.min(b)
    } else {
        a.max(b)
    }
}

/// The range of a leaf over the lanes of one warp.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WarpRange {
    pub(crate) tid: [(i64, i64); 3],
    pub(crate) ctaid: [i64; 3],
    pub(crate) lane: (i64, i64),
}

impl WarpRange {
    pub(crate) fn of(points: &[Point]) -> Option<WarpRange> {
        let first = points.first()?;
        let mut r = WarpRange { tid: first.tid.map(|t| (t, t)), ctaid: first.ctaid, lane: (first.lane, first.lane) };
        for p in points {
            for d in 0..3 {
                r.tid[d] = (r.tid[d].0.min(p.tid[d]), r.tid[d].1.max(p.tid[d]));
            }
            r.lane = (r.lane.0.min(p.lane), r.lane.1.max(p.lane));
        }
        Some(r)
    }
}

fn dim_range(v: [(i64, i64); 3], d: Dim) -> (i64, i64) {
    match d {
        Dim::X => v[0],
        Dim::Y => v[1],
        Dim::Z => v[2],
    }
}

/// The values a type represents exactly (64-bit unsigned values are kept below 2^63).
fn type_range(ty: IntTy) -> (i128, i128) {
    match (ty.bits, ty.signed) {
        (b, _) if b >= 64 => (i128::from(i64::MIN), i128::from(i64::MAX)),
        (b, true) => (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1),
        (b, false) => (0, (1i128 << b) - 1),
    }
}

fn within(r: (i128, i128), ty: IntTy) -> Option<(i128, i128)> {
    let (lo, hi) = type_range(ty);
    (r.0 >= lo && r.1 <= hi).then_some(r)
}

fn hull(vals: [i128; 4]) -> (i128, i128) {
    (vals.iter().copied().min().unwrap_or(0), vals.iter().copied().max().unwrap_or(0))
}

/// Interval arithmetic for [`Tape::eval_range`]: the exact range of the result over the
/// lanes when every operand stays inside its type (no wrap-around); `None` otherwise, or
/// when the operation is not monotone enough to bound this way.
fn apply_range(op: Op, ty: IntTy, a: (i128, i128), b: (i128, i128), c: (i128, i128)) -> Option<(i128, i128)> {
    let single = |r: (i128, i128)| (r.0 == r.1).then_some(r.0);
    let res = match op {
        Op::Add => (within(a, ty)?.0 + within(b, ty)?.0, a.1 + b.1),
        Op::Sub => (within(a, ty)?.0 - within(b, ty)?.1, a.1 - b.0),
        Op::MulLo | Op::MulWide | Op::MadLo | Op::MadWide => {
            let (a, b) = (within(a, ty)?, within(b, ty)?);
            let p = hull([a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1]);
            let out_ty = if matches!(op, Op::MulWide | Op::MadWide) { ty.wide() } else { ty };
            let p = if matches!(op, Op::MadLo | Op::MadWide) { (p.0 + within(c, out_ty)?.0, p.1 + c.1) } else { p };
            return within(p, out_ty);
        }
        Op::Shl => {
            let k = single(b)?;
            if !(0..(ty.bits as i128)).contains(&k) {
                return None;
            }
            let a = within(a, ty)?;
            (a.0 << k, a.1 << k)
        }
        Op::Shr => {
            let k = single(b)?;
            let a = within(a, ty)?;
            if !(0..(ty.bits as i128)).contains(&k) {
                return None;
            }
            (a.0 >> k, a.1 >> k)
        }
        Op::Div => {
            let k = single(b)?;
            let a = within(a, ty)?;
            // Truncating division by a positive constant is monotone.
            if k <= 0 {
                return None;
            }
            (a.0 / k, a.1 / k)
        }
        Op::Min | Op::Max => {
            let (a, b) = (within(a, ty)?, within(b, ty)?);
            if op == Op::Min { (a.0.min(b.0), a.1.min(b.1)) } else { (a.0.max(b.0), a.1.max(b.1)) }
        }
        Op::Neg => {
            let a = within(a, ty)?;
            (-a.1, -a.0)
        }
        Op::Cvt(src) => within(within(a, src)?, ty)?,
        Op::Not if ty == IntTy::PRED => (1 - a.1, 1 - a.0),
        Op::And | Op::Or | Op::Xor if ty == IntTy::PRED => {
            let (x, y) = (single(a), single(b));
            match (op, x, y) {
                (Op::And, Some(0), _) | (Op::And, _, Some(0)) => (0, 0),
                (Op::And, Some(1), Some(1)) => (1, 1),
                (Op::Or, Some(1), _) | (Op::Or, _, Some(1)) => (1, 1),
                (Op::Or, Some(0), Some(0)) => (0, 0),
                (Op::Xor, Some(x), Some(y)) => ((x ^ y), (x ^ y)),
                _ => (0, 1),
            }
        }
        Op::Selp => match single(c) {
            Some(0) => b,
            Some(_) => a,
            None => (a.0.min(b.0), a.1.max(b.1)),
        },
        Op::Setp { cmp, bool_op, negate } => {
            let (a, b) = (within(a, ty)?, within(b, ty)?);
            // Decided for every lane, or (0, 1) when lanes may differ.
            let (all, none) = match cmp {
                Cmp::Eq => (a.0 == a.1 && b.0 == b.1 && a.0 == b.0, a.1 < b.0 || b.1 < a.0),
                Cmp::Ne => (a.1 < b.0 || b.1 < a.0, a.0 == a.1 && b.0 == b.1 && a.0 == b.0),
                Cmp::Lt | Cmp::Lo => (a.1 < b.0, a.0 >= b.1),
                Cmp::Le | Cmp::Ls => (a.1 <= b.0, a.0 > b.1),
                Cmp::Gt | Cmp::Hi => (a.0 > b.1, a.1 <= b.0),
                Cmp::Ge | Cmp::Hs => (a.0 >= b.1, a.1 < b.0),
            };
            if matches!(cmp, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs) && (a.0 < 0 || b.0 < 0) {
                return None; // the unsigned view of a negative value
            }
            let r = if all { (1, 1) } else if none { (0, 0) } else { (0, 1) };
            let r = if negate { (1 - r.1, 1 - r.0) } else { r };
            match bool_op {
                None => r,
                Some(op) => {
                    let op = match op {
                        BoolOp::And => Op::And,
                        BoolOp::Or => Op::Or,
                        BoolOp::Xor => Op::Xor,
                    };
                    apply_range(op, IntTy::PRED, r, c, c)?
                }
            }
        }
        _ => return None,
    };
    // A predicate result is 0 or 1; everything else must stay inside its type.
    if matches!(op, Op::Setp { .. } | Op::Selp) || ty == IntTy::PRED {
        Some(res)
    } else {
        within(res, ty)
    }
}

impl Tape {
    /// The condition for a whole warp at once, when interval arithmetic decides it:
    /// `Some(true)` when it holds in every lane, `Some(false)` in none, `None` when the
    /// lanes may differ (or the bounds are not tight enough): evaluate lane by lane.
    pub(crate) fn eval_range(&self, at: &WarpRange, scratch: &mut Vec<(i128, i128)>) -> Option<bool> {
        scratch.clear();
        for node in &self.nodes {
            let r = match *node {
                Node::Const(v) => (i128::from(v), i128::from(v)),
                Node::Leaf(Leaf::Tid(d)) => {
                    let (lo, hi) = dim_range(at.tid, d);
                    (i128::from(lo), i128::from(hi))
                }
                Node::Leaf(Leaf::Ctaid(d)) => {
                    let v = dim(at.ctaid, d);
                    (i128::from(v), i128::from(v))
                }
                Node::Leaf(Leaf::Lane) => (i128::from(at.lane.0), i128::from(at.lane.1)),
                Node::Op { op, ty, args: [a, b, c] } => apply_range(op, ty, scratch[a as usize], scratch[b as usize], scratch[c as usize])?,
            };
            scratch.push(r);
        }
        match scratch.get(self.root as usize)? {
            (1, 1) => Some(true),
            (0, 0) => Some(false),
            _ => None,
        }
    }
}

const MAX_DEPTH: u32 = 64;

struct Compiler<'f, 'e> {
    func: &'f Function,
    env: &'e Env<'e>,
    nodes: Vec<Node>,
    level: Level,
    memo: HashMap<RegId, Result<u32, Unknown>>,
    depth: u32,
}

/// Compiles the value of predicate register `reg` (strictly: see the module comment).
pub(crate) fn compile(func: &Function, env: &Env<'_>, reg: RegId) -> Result<Tape, Unknown> {
    let mut c = Compiler { func, env, nodes: Vec::new(), level: Level::Grid, memo: HashMap::new(), depth: 0 };
    let root = c.reg(reg)?;
    // Keep only what the root needs would be an optimisation; tapes are short.
    let uses_ctaid = c.nodes.iter().any(|n| matches!(n, Node::Leaf(Leaf::Ctaid(_))));
    // A root folded to a constant (`x || true`) depends on nothing, whatever was read.
    if let Some(Node::Const(v)) = c.nodes.get(root as usize) {
        return Ok(Tape { nodes: vec![Node::Const(*v)], root: 0, level: Level::Grid, uses_ctaid: false });
    }
    Ok(Tape { nodes: c.nodes, root, level: c.level, uses_ctaid })
}

impl Compiler<'_, '_> {
    fn push(&mut self, node: Node) -> u32 {
        // Fold operations on constants.
        if let Node::Op { op, ty, args } = node {
            let consts: Vec<Option<i64>> = args
                .iter()
                .map(|i| match self.nodes.get(*i as usize) {
                    Some(Node::Const(v)) => Some(*v),
                    _ => None,
                })
                .collect();
            if consts.iter().all(Option::is_some)
                && let Some(v) = apply(op, ty, consts[0].unwrap_or(0), consts[1].unwrap_or(0), consts[2].unwrap_or(0))
            {
                return self.push(Node::Const(v));
            }
            // A constant that decides predicate logic on its own (`x || true`, `x && false`),
            // so a condition on the arguments alone stays decided by them.
            let is = |k: usize, want: i64| consts[k].map(|v| i64::from(v != 0)) == Some(want);
            let short = match op {
                Op::Or if ty == IntTy::PRED => (is(0, 1) || is(1, 1)).then_some(1),
                Op::And if ty == IntTy::PRED => (is(0, 0) || is(1, 0)).then_some(0),
                Op::Setp { bool_op: Some(BoolOp::Or), .. } => is(2, 1).then_some(1),
                Op::Setp { bool_op: Some(BoolOp::And), .. } => is(2, 0).then_some(0),
                _ => None,
            };
            if let Some(v) = short {
                return self.push(Node::Const(v));
            }
        }
        if let Some(i) = self.nodes.iter().position(|n| *n == node) {
            return i as u32;
        }
        self.nodes.push(node);
        (self.nodes.len() - 1) as u32
    }

    fn constant(&mut self, v: i64) -> u32 {
        self.push(Node::Const(v))
    }

    fn reg(&mut self, r: RegId) -> Result<u32, Unknown> {
        if let Some(res) = self.memo.get(&r) {
            return res.clone();
        }
        if self.depth > MAX_DEPTH {
            return Err(Unknown::Unsupported("a chain of more than 64 definitions".into()));
        }
        self.depth += 1;
        // A register met again while its own definitions are compiled is updated in a
        // loop.
        self.memo.insert(r, Err(Unknown::Varies));
        let res = self.reg_uncached(r);
        self.depth -= 1;
        self.memo.insert(r, res.clone());
        res
    }

    fn reg_uncached(&mut self, r: RegId) -> Result<u32, Unknown> {
        if let Some(s) = self.func.register(r).and_then(|reg| reg.special) {
            let dims = |v: [u32; 3], d: Dim| {
                i64::from(match d {
                    Dim::X => v[0],
                    Dim::Y => v[1],
                    Dim::Z => v[2],
                })
            };
            return Ok(match s {
                SpecialReg::Tid(d) => {
                    self.level = self.level.max(Level::Thread);
                    self.push(Node::Leaf(Leaf::Tid(d)))
                }
                SpecialReg::LaneId => {
                    self.level = self.level.max(Level::Thread);
                    self.push(Node::Leaf(Leaf::Lane))
                }
                SpecialReg::Ctaid(d) => {
                    self.level = self.level.max(Level::Block);
                    self.push(Node::Leaf(Leaf::Ctaid(d)))
                }
                SpecialReg::Ntid(d) => self.constant(dims(self.env.block, d)),
                SpecialReg::Nctaid(d) => self.constant(dims(self.env.grid, d)),
                _ => return Err(Unknown::Data),
            });
        }
        match self.func.defs_of(r) {
            [] => Err(Unknown::Unsupported(format!("`{}` has no definition", self.func.reg_name(r)))),
            [one] => self.instr(*one, r),
            many => {
                // Several definitions: fine only if every one gives the same constant
                // (the same initialisation on two paths); otherwise the value depends
                // on the path or the iteration.
                let many = many.to_vec();
                let mut value = None;
                for d in many {
                    let i = self.instr(d, r)?;
                    match (self.nodes.get(i as usize), value) {
                        (Some(Node::Const(v)), None) => value = Some(*v),
                        (Some(Node::Const(v)), Some(w)) if *v == w => {}
                        _ => return Err(Unknown::Varies),
                    }
                }
                value.map(|v| self.constant(v)).ok_or(Unknown::Varies)
            }
        }
    }

    fn operand(&mut self, op: &Operand) -> Result<u32, Unknown> {
        match op {
            Operand::Reg(r) => self.reg(*r),
            Operand::NegReg(r) => {
                let a = self.reg(*r)?;
                Ok(self.push(Node::Op { op: Op::Not, ty: IntTy::PRED, args: [a, a, a] }))
            }
            Operand::Imm(v) => Ok(self.constant(*v)),
            Operand::Float(_) => Err(Unknown::Data),
            // The warp size, a predefined constant of PTX (PTX ISA, "Predefined
            // Identifiers"): 32 on every architecture.
            Operand::Symbol(s) if &**s == "WARP_SZ" => Ok(self.constant(32)),
            Operand::Symbol(s) => Err(Unknown::Unsupported(format!("the address of `{s}`"))),
            _ => Err(Unknown::Unsupported("a memory or vector operand".into())),
        }
    }

    /// The value instruction `id` writes into `dst`.
    fn instr(&mut self, id: InstrId, dst: RegId) -> Result<u32, Unknown> {
        let func = self.func;
        let Some(instr) = func.instr(id) else { return Err(Unknown::Unsupported("a missing instruction".into())) };
        if instr.guard.is_some() {
            // Written only where its guard holds: the value depends on the path.
            return Err(Unknown::Varies);
        }
        let ops = func.operands_of(instr);
        let src = |this: &mut Self, i: usize| -> Result<u32, Unknown> {
            match ops.get(i) {
                Some(op) => this.operand(op),
                None => Err(Unknown::Unsupported(format!("`{}` with too few operands", instr.opcode))),
            }
        };
        let unsupported = || Unknown::Unsupported(format!("`{}`", instr.opcode));
        match decode(func, id) {
            Decoded::Param { index, ty } => {
                let v = *self.env.args.get(&index).ok_or(Unknown::Argument(index))?;
                Ok(self.constant(ty.map_or(v, |t| t.norm(v))))
            }
            Decoded::Copy => src(self, 1),
            Decoded::Forwarded => match func.forwarded_local(id) {
                Some(op) => self.operand(op),
                None => Err(Unknown::Data),
            },
            Decoded::Data => Err(Unknown::Data),
            Decoded::Unsupported => Err(unsupported()),
            Decoded::Op { op, ty } => {
                // The `q` half of `setp p|q` is the negation.
                let op = match op {
                    Op::Setp { cmp, bool_op, .. } => Op::Setp { cmp, bool_op, negate: matches!(ops.first(), Some(Operand::Pair(_, Some(q))) if *q == dst) },
                    op => op,
                };
                let mut args = [0u32; 3];
                for (k, slot) in args.iter_mut().enumerate().take(arity(op)) {
                    *slot = src(self, k + 1)?;
                }
                for k in arity(op)..3 {
                    args[k] = args[0];
                }
                Ok(self.push(Node::Op { op, ty, args }))
            }
        }
    }
}

/// An integer instruction decoded from its opcode and types, once: shared by the condition
/// compiler here and the per-lane evaluation (`concrete.rs`, `simt.rs`), so the two agree
/// on what every instruction computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// `ld.param` of parameter `index`, of type `ty`.
    Param { index: u32, ty: Option<IntTy> },
    /// `mov`, `cvta`: the first source.
    Copy,
    /// A `ld.local` of a slot one `st.local` alone writes (a `volatile` local): the value
    /// is the stored operand, [`ptx_ir::ir::Function::forwarded_local`].
    Forwarded,
    /// An integer operation at its type (a `cvt`'s destination type; a `setp`'s operands').
    Op { op: Op, ty: IntTy },
    /// A load, an atomic or floating-point arithmetic: data, not a value of the launch.
    Data,
    /// An instruction this evaluator does not model.
    Unsupported,
}

/// The operands an operation reads (`selp`, `mad` and a `setp` combined with a predicate
/// read three).
pub(crate) fn arity(op: Op) -> usize {
    match op {
        Op::Not | Op::Neg | Op::Abs | Op::Cvt(_) => 1,
        Op::MadLo | Op::MadWide | Op::MadHi | Op::Selp | Op::Setp { bool_op: Some(_), .. } => 3,
        _ => 2,
    }
}

/// Decodes instruction `id` (its guard is the caller's business).
pub(crate) fn decode(func: &Function, id: InstrId) -> Decoded {
    let Some(instr) = func.instr(id) else { return Decoded::Unsupported };
    if func.forwarded_local(id).is_some() {
        return Decoded::Forwarded;
    }
    let ops = func.operands_of(instr);
    let base = instr.base();
    let types: Vec<&str> = instr.modifiers().filter(|m| ptx::type_bytes(m) > 0 || *m == "pred").collect();
    if types.iter().any(|t| t.starts_with('f') || t.starts_with("bf16")) && base != "setp" && base != "cvt" {
        return Decoded::Data;
    }
    let ty = types.last().and_then(|t| IntTy::of(t));
    let wide = instr.has_modifier("wide");
    let hi = instr.has_modifier("hi");
    let op = match (base, instr.class) {
        ("ld", InstrClass::Load(Space::Param)) => {
            let Some(Operand::Addr { base: AddrBase::Symbol(sym), offset: 0 }) = ops.get(1) else {
                return Decoded::Unsupported;
            };
            return match func.param_index(sym) {
                Some(index) => Decoded::Param { index, ty },
                None => Decoded::Unsupported,
            };
        }
        (_, InstrClass::Load(_) | InstrClass::Atomic(_)) => return Decoded::Data,
        ("mov" | "cvta", _) => return Decoded::Copy,
        ("cvt", _) => {
            // `cvt.dst.src`: integer conversions only.
            if types.len() != 2 || instr.has_modifier("sat") {
                return Decoded::Data;
            }
            let (Some(d), Some(s)) = (IntTy::of(types[0]), IntTy::of(types[1])) else { return Decoded::Data };
            return Decoded::Op { op: Op::Cvt(s), ty: d };
        }
        ("add", _) => Op::Add,
        ("sub", _) => Op::Sub,
        ("mul" | "mul24", _) if wide => Op::MulWide,
        ("mul" | "mul24", _) if hi => Op::MulHi,
        ("mul" | "mul24", _) => Op::MulLo,
        ("mad" | "mad24", _) if wide => Op::MadWide,
        ("mad" | "mad24", _) if hi => Op::MadHi,
        ("mad" | "mad24", _) => Op::MadLo,
        ("shl", _) => Op::Shl,
        ("shr", _) => Op::Shr,
        ("and", _) => Op::And,
        ("or", _) => Op::Or,
        ("xor", _) => Op::Xor,
        ("not", _) => Op::Not,
        ("neg", _) => Op::Neg,
        ("abs", _) => Op::Abs,
        ("min", _) => Op::Min,
        ("max", _) => Op::Max,
        ("div", _) => Op::Div,
        ("rem", _) => Op::Rem,
        ("selp", _) => Op::Selp,
        ("setp", _) => {
            let mods: Vec<&str> = instr.modifiers().collect();
            let cmp = mods.first().and_then(|m| Cmp::of(m));
            let bool_op = mods.iter().find_map(|m| match *m {
                "and" => Some(BoolOp::And),
                "or" => Some(BoolOp::Or),
                "xor" => Some(BoolOp::Xor),
                _ => None,
            });
            let (Some(cmp), Some(t)) = (cmp, ty) else {
                // Floating-point comparisons (and unordered ones) compare data.
                return Decoded::Data;
            };
            return Decoded::Op { op: Op::Setp { cmp, bool_op, negate: false }, ty: t };
        }
        _ => return Decoded::Unsupported,
    };
    match ty {
        Some(ty) => Decoded::Op { op, ty },
        None => Decoded::Unsupported,
    }
}

/// A sentinel test: `setp.{eq,equ,ne,neu}.f{16,32,64}` between a value computed from
/// memory and a constant with a fractional part (`v == 1.2345`). Benchmark kernels store
/// a result only under such a test so that the compiler keeps the computation, with a
/// value the data never takes (for example the streaming kernels of gpu-benches,
/// github.com/te42kyfo/gpu-benches, `gpu-stream`). Returns the constant and the
/// predicate's value under the assumption that the data never equals it.
pub(crate) fn sentinel(func: &Function, reg: RegId) -> Option<(f64, bool)> {
    let id = func.unique_def(reg)?;
    let instr = func.instr(id)?;
    if instr.base() != "setp" || instr.guard.is_some() {
        return None;
    }
    let mods: Vec<&str> = instr.modifiers().collect();
    if mods.len() != 2 || !matches!(mods[1], "f16" | "f32" | "f64") {
        return None; // also rules out a combining `.and`/`.or`
    }
    let equal = match mods[0] {
        "eq" | "equ" => true,
        "ne" | "neu" => false,
        _ => return None,
    };
    let ops = func.operands_of(instr);
    match ops.first() {
        Some(Operand::Reg(p)) if *p == reg => {}
        Some(Operand::Pair(Some(p), _)) if *p == reg => {}
        _ => return None,
    }
    let (value, other) = match (ops.get(1)?, ops.get(2)?) {
        (Operand::Float(c), Operand::Reg(r)) | (Operand::Reg(r), Operand::Float(c)) => (*c, *r),
        _ => return None,
    };
    // Round values (0, ±1, integers, infinities) are legitimate data and flags; only a
    // constant with a fractional part reads as a sentinel.
    if !value.is_finite() || value.fract() == 0.0 {
        return None;
    }
    loads_from_memory(func, other, 0).then_some((value, !equal))
}

/// `true` when `reg`'s value is computed from a load of global, shared, local, generic or
/// texture memory.
fn loads_from_memory(func: &Function, reg: RegId, depth: u32) -> bool {
    if depth > 32 {
        return false;
    }
    func.defs_of(reg).iter().any(|d| {
        let Some(instr) = func.instr(*d) else { return false };
        match instr.class {
            InstrClass::Load(Space::Param | Space::Const) => false,
            InstrClass::Load(_) | InstrClass::Atomic(_) => true,
            _ => func.srcs(instr).iter().filter(|s| Some(**s) != instr.guard.map(|g| g.reg)).any(|s| loads_from_memory(func, *s, depth + 1)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(body: &str, params: &str) -> ptx_ir::Module {
        let src = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k({params})\n{{\n{body}\n}}\n");
        let (m, errors) = ptx_ir::parse_and_lower(&src);
        assert!(errors.is_empty(), "{errors:?}");
        m
    }

    fn at(tid: i64, ctaid: i64) -> Point {
        Point { tid: [tid, 0, 0], ctaid: [ctaid, 0, 0], lane: tid % 32 }
    }

    fn pred_reg(f: &Function, name: &str) -> RegId {
        f.reg_by_name(name).unwrap_or_else(|| panic!("{name}"))
    }

    #[test]
    fn bounds_guard_is_per_thread_and_exact_with_the_argument() {
        let m = lower(
            "ld.param.u32 %r3, [k_param_0];\nmov.u32 %r4, %ntid.x;\nmov.u32 %r5, %ctaid.x;\nmov.u32 %r1, %tid.x;\n\
             mad.lo.s32 %r2, %r5, %r4, %r1;\nsetp.ge.s32 %p1, %r2, %r3;\n@%p1 bra $L1;\n$L1:\nret;",
            ".param .u32 k_param_0",
        );
        let f = &m.functions[0];
        let args = HashMap::from([(0u32, 1000i64)]);
        let env = Env { block: [256, 1, 1], grid: [4, 1, 1], args: &args };
        let tape = compile(f, &env, pred_reg(f, "%p1")).unwrap();
        assert_eq!(tape.level, Level::Thread);
        let mut s = Vec::new();
        // i = 3·256 + 231 = 999 < 1000; 232 → 1000.
        assert_eq!(tape.eval(&at(231, 3), &mut s), Some(false));
        assert_eq!(tape.eval(&at(232, 3), &mut s), Some(true));
        // Without n the condition is unknown, and says which argument is missing.
        let none = HashMap::new();
        let env = Env { block: [256, 1, 1], grid: [4, 1, 1], args: &none };
        assert_eq!(compile(f, &env, pred_reg(f, "%p1")), Err(Unknown::Argument(0)));
    }

    #[test]
    fn launch_and_argument_conditions_fold_to_constants() {
        // n % 4 != 0 as nvcc writes it for a signed n: n - ((n + ((n >> 31) >>> 30)) & -4).
        let m = lower(
            "ld.param.u32 %r2, [k_param_0];\nshr.s32 %r6, %r2, 31;\nshr.u32 %r7, %r6, 30;\nadd.s32 %r8, %r2, %r7;\n\
             and.b32 %r9, %r8, -4;\nsub.s32 %r10, %r2, %r9;\nsetp.ne.s32 %p1, %r10, 0;\n\
             mov.u32 %r11, %ntid.x;\nsetp.gt.u32 %p2, %r11, 32;\n@%p1 bra $L1;\n$L1:\nret;",
            ".param .u32 k_param_0",
        );
        let f = &m.functions[0];
        for (n, expect) in [(1000i64, false), (1001, true), (-7, true), (-8, false)] {
            let args = HashMap::from([(0u32, n)]);
            let env = Env { block: [64, 1, 1], grid: [1, 1, 1], args: &args };
            let tape = compile(f, &env, pred_reg(f, "%p1")).unwrap();
            assert_eq!((tape.level, tape.constant()), (Level::Grid, Some(expect)), "n = {n}");
            let tape = compile(f, &env, pred_reg(f, "%p2")).unwrap();
            assert_eq!(tape.constant(), Some(true), "blockDim.x = 64 > 32");
        }
    }

    #[test]
    fn loads_loops_and_guarded_writes_make_it_unknown() {
        let m = lower(
            "ld.param.u64 %rd1, [k_param_0];\nld.global.u32 %r1, [%rd1];\nsetp.eq.s32 %p1, %r1, 0;\n\
             mov.u32 %r2, 0;\n$L0:\nadd.s32 %r2, %r2, 1;\nsetp.lt.s32 %p2, %r2, 8;\n@%p2 bra $L0;\n\
             mov.u32 %r3, %tid.x;\nsetp.eq.s32 %p3, %r3, 0;\n@%p3 mov.u32 %r3, 5;\nsetp.eq.s32 %p4, %r3, 5;\nret;",
            ".param .u64 k_param_0",
        );
        let f = &m.functions[0];
        let args = HashMap::new();
        let env = Env { block: [64, 1, 1], grid: [1, 1, 1], args: &args };
        assert_eq!(compile(f, &env, pred_reg(f, "%p1")), Err(Unknown::Data));
        assert_eq!(compile(f, &env, pred_reg(f, "%p2")), Err(Unknown::Varies));
        assert_eq!(compile(f, &env, pred_reg(f, "%p4")), Err(Unknown::Varies));
    }

    #[test]
    fn unsigned_compares_and_wide_products_follow_ptx() {
        // (i - 1) as u32 > 997 is nvcc's form of `i < 1 || i > 998`.
        let m = lower(
            "mov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, -1;\nsetp.hi.u32 %p1, %r2, 997;\n\
             mul.wide.s32 %rd1, %r2, 8;\nsetp.lt.s64 %p2, %rd1, 0;\nsetp.lt.and.s32 %p3|%p4, %r1, 2, %p1;\nret;",
            "",
        );
        let f = &m.functions[0];
        let args = HashMap::new();
        let env = Env { block: [1024, 1, 1], grid: [1, 1, 1], args: &args };
        let mut s = Vec::new();
        let p1 = compile(f, &env, pred_reg(f, "%p1")).unwrap();
        let got: Vec<bool> = [0, 1, 998, 999].iter().map(|t| p1.eval(&at(*t, 0), &mut s).unwrap()).collect();
        assert_eq!(got, [true, false, false, true]);
        let p2 = compile(f, &env, pred_reg(f, "%p2")).unwrap();
        assert_eq!(p2.eval(&at(0, 0), &mut s), Some(true), "(0 - 1) · 8 is negative in 64 bits");
        let (p3, p4) = (compile(f, &env, pred_reg(f, "%p3")).unwrap(), compile(f, &env, pred_reg(f, "%p4")).unwrap());
        // p3 = (t < 2) && p1; p4 = !(t < 2) && p1.
        assert_eq!((p3.eval(&at(0, 0), &mut s), p4.eval(&at(0, 0), &mut s)), (Some(true), Some(false)));
        assert_eq!((p3.eval(&at(999, 0), &mut s), p4.eval(&at(999, 0), &mut s)), (Some(false), Some(true)));
        assert_eq!((p3.eval(&at(1, 0), &mut s), p4.eval(&at(1, 0), &mut s)), (Some(false), Some(false)));
    }

    #[test]
    fn sentinel_needs_loaded_data_and_a_fractional_constant() {
        let m = lower(
            "ld.param.u64 %rd1, [k_param_0];\nld.global.f64 %fd1, [%rd1];\nsetp.neu.f64 %p1, %fd1, 0d3FF3C083126E978D;\n\
             setp.eq.f64 %p2, %fd1, 0d3FF0000000000000;\nld.param.f64 %fd2, [k_param_1];\nsetp.eq.f64 %p3, %fd2, 0d3FF3C083126E978D;\nret;",
            ".param .u64 k_param_0, .param .f64 k_param_1",
        );
        let f = &m.functions[0];
        assert_eq!(sentinel(f, pred_reg(f, "%p1")), Some((1.2345, true)), "v != 1.2345 always holds");
        assert_eq!(sentinel(f, pred_reg(f, "%p2")), None, "1.0 is a round value");
        assert_eq!(sentinel(f, pred_reg(f, "%p3")), None, "a parameter is not data");
    }

    #[test]
    fn interval_decisions_agree_with_every_lane_on_the_corpus() {
        // Every branch condition of the sm_80 corpus, with every 32-bit integer parameter
        // set to 1000, under two launches: where interval arithmetic decides a warp, each
        // of its lanes must agree.
        let dir = format!("{}/../../tests/fixtures/ptx/sm_80", env!("CARGO_MANIFEST_DIR"));
        let (mut decided, mut undecided) = (0, 0);
        let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for path in files {
            let (m, _) = ptx_ir::parse_and_lower(&std::fs::read_to_string(&path).unwrap());
            for f in m.kernels() {
                let args: HashMap<u32, i64> = f.params.iter().enumerate().filter(|(_, p)| p.ty.ends_with("32")).map(|(i, _)| (i as u32, 1000)).collect();
                for (block, grid) in [([256u32, 1, 1], [8u32, 1, 1]), ([16, 16, 1], [4, 4, 1])] {
                    let env = Env { block, grid, args: &args };
                    for instr in f.instrs.iter().filter(|i| i.is_branch()) {
                        let Some(g) = instr.guard else { continue };
                        let Ok(tape) = compile(f, &env, g.reg) else { continue };
                        let (mut s, mut r) = (Vec::new(), Vec::new());
                        let threads = block.iter().product::<u32>() as i64;
                        for cy in 0..i64::from(grid[1]) {
                            for cx in 0..i64::from(grid[0]) {
                                for w in 0..(threads + 31) / 32 {
                                    let points: Vec<Point> = (32 * w..(32 * w + 32).min(threads))
                                        .map(|t| Point {
                                            tid: [t % i64::from(block[0]), t / i64::from(block[0]), 0],
                                            ctaid: [cx, cy, 0],
                                            lane: t - 32 * w,
                                        })
                                        .collect();
                                    let range = WarpRange::of(&points).unwrap();
                                    match tape.eval_range(&range, &mut r) {
                                        Some(v) => {
                                            decided += 1;
                                            for p in &points {
                                                assert_eq!(tape.eval(p, &mut s), Some(v), "{} in {}: {p:?}", f.name, path.display());
                                            }
                                        }
                                        None => undecided += 1,
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(decided > 1000 && undecided > 0, "{decided} decided, {undecided} not");
    }
}
