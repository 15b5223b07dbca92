//! Affine address analysis: the address of a memory instruction as a linear form over the
//! thread index, the block index, loop iterations and kernel parameters.
//!
//! The form is built by walking def-use chains backwards from the address register
//! through the integer arithmetic nvcc emits for array indexing (`mov`, `cvt`, `cvta`,
//! `add`, `sub`, `mul.lo`, `mul.wide`, `mad.lo`, `mad.wide`, `shl`, `ld.param`, and the
//! shifts, masks and magic-number multiplications of its divisions), the way
//! GPU static analyses such as GPUVerify and the "uniform/affine" analyses of
//! Coutinho et al. ("Divergence Analysis and Optimizations", PACT 2011) do. Launch
//! dimensions (`%ntid`, `%nctaid`) and kernel arguments the user supplied are constants
//! here, so `row * n + col` with a known `n` gives a concrete stride.
//!
//! A `volatile` local variable read back from the stack depot is the value stored there
//! (`ptx_ir::ir::Function::forwarded_local`). Anything the walk cannot express (a value loaded from memory, a product of two
//! thread-dependent values, a register written on several paths that is not an induction
//! variable) makes the form *irregular*: the access is data-dependent.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ptx_ir::ir::{Dim, Function, InstrId, Operand, RegId, SpecialReg};
use ptx_ir::trip::{BinOp, Expr, Leaf};
use ptx_ir::{InstrClass, Space};

/// A leaf variable of an affine form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Var {
    /// `%tid.{x,y,z}`: varies across the threads of a warp.
    Tid(Dim),
    /// `%laneid` (0..31 across a warp).
    Lane,
    /// `%tid.x / k` for a known `k > 1` (nvcc's `shr` for a power of two): a row of a 2-D
    /// arrangement of a 1-D block. Uniform within a warp when `k` is a multiple of 32.
    TidXDiv(i64),
    /// `%tid.x % k` for a known `k > 1` (nvcc's `and` with `k − 1` for a power of two): the
    /// column of that arrangement.
    TidXMod(i64),
    /// `%tid.y / k` for a known `k > 1`: the row of a 2-D block's linear thread index
    /// divided by a multiple of its width (`(ty·16 + tx) / 32` in a 16 × 16 block is
    /// `ty / 2`: [`AffineAnalysis`]'s linearised division).
    TidYDiv(i64),
    /// `%tid.y % k` for a known `k > 1`: the rest of that division (`(ty·16 + tx) % 32` is
    /// `tx + 16·(ty % 2)`).
    TidYMod(i64),
    /// `%ctaid.{x,y,z}`: uniform within a block.
    Ctaid(Dim),
    /// `%ctaid.{x,y,z} % m` for a known `m > 0`: uniform within a block, periodic over the
    /// grid (`blockIdx.x % blockRun`: blocks that share their data in turns).
    CtaidMod(Dim, i64),
    /// `%ctaid.{x,y,z} / m` for a known `m > 1`: uniform within a block (the row of a
    /// global index `blockIdx.x·blockDim.x + threadIdx.x` divided by a multiple of the
    /// block size: [`AffineAnalysis`]'s block-row division).
    CtaidDiv(Dim, i64),
    /// The iteration number of a loop (by loop id): uniform within a warp.
    Iter(u32),
    /// A value that is uniform across the warp but unknown (a pointer parameter, a
    /// parameter whose value was not supplied, `%smid`...). Numbered per analysis.
    Uniform(u32),
    /// The register's own value, while recognising `r = r + step` updates.
    SelfRef(RegId),
}

impl Var {
    /// `true` for the variables that differ between the threads of one warp.
    pub fn varies_in_warp(self) -> bool {
        match self {
            // `tid.y / k` and `tid.y % k`: whether a warp spans several of its values depends
            // on the block's width, unknown here; counted as varying (the lanes are then
            // evaluated one by one).
            Var::Tid(_) | Var::Lane | Var::TidXMod(_) | Var::TidYDiv(_) | Var::TidYMod(_) => true,
            Var::TidXDiv(k) => k % 32 != 0,
            _ => false,
        }
    }

    /// The divisor `k` of `tid.x / k` or `tid.y / k`.
    fn div_k(self) -> Option<i64> {
        match self {
            Var::TidXDiv(k) | Var::TidYDiv(k) => Some(k),
            _ => None,
        }
    }

    /// The value of the variable at thread index `t`, for the thread-index variables.
    pub fn at_thread(self, t: [i64; 3], lane: i64) -> Option<i64> {
        match self {
            Var::Tid(d) => Some(t[d as usize]),
            Var::Lane => Some(lane),
            Var::TidXDiv(k) => Some(t[0].div_euclid(k.max(1))),
            Var::TidXMod(k) => Some(t[0].rem_euclid(k.max(1))),
            Var::TidYDiv(k) => Some(t[1].div_euclid(k.max(1))),
            Var::TidYMod(k) => Some(t[1].rem_euclid(k.max(1))),
            _ => None,
        }
    }
}

/// `constant + Σ coeff·var`, or irregular.
#[derive(Debug, Clone, PartialEq)]
pub struct Affine {
    pub constant: i64,
    pub terms: BTreeMap<Var, i64>,
    /// The value is data-dependent (or beyond this analysis): no form.
    pub irregular: bool,
    /// Thread-varying variables whose coefficient depends on an unknown value (`tid.y * n`
    /// with `n` not supplied). Where such a variable differs between the lanes of a warp
    /// the access is strided with an unknown stride; where it does not (`tid.y` in a
    /// 256×1 block) it is harmless.
    pub unknown: BTreeSet<Var>,
}

impl Affine {
    pub fn constant(c: i64) -> Affine {
        Affine { constant: c, terms: BTreeMap::new(), irregular: false, unknown: BTreeSet::new() }
    }
    pub fn var(v: Var) -> Affine {
        let mut terms = BTreeMap::new();
        terms.insert(v, 1);
        Affine { constant: 0, terms, irregular: false, unknown: BTreeSet::new() }
    }
    pub fn irregular() -> Affine {
        Affine { constant: 0, terms: BTreeMap::new(), irregular: true, unknown: BTreeSet::new() }
    }
    pub fn as_constant(&self) -> Option<i64> {
        (!self.irregular && self.unknown.is_empty() && self.terms.is_empty()).then_some(self.constant)
    }
    /// `true` when no thread-varying variable appears (the same value across a warp).
    pub fn is_warp_uniform(&self) -> bool {
        !self.irregular && self.unknown.is_empty() && self.terms.keys().all(|v| !v.varies_in_warp())
    }
    pub fn coeff(&self, v: Var) -> i64 {
        self.terms.get(&v).copied().unwrap_or(0)
    }
    fn add(mut self, other: &Affine, sign: i64) -> Affine {
        self.irregular |= other.irregular;
        self.unknown.extend(other.unknown.iter().copied());
        self.constant = self.constant.wrapping_add(other.constant.wrapping_mul(sign));
        for (v, c) in &other.terms {
            let e = self.terms.entry(*v).or_insert(0);
            *e = e.wrapping_add(c.wrapping_mul(sign));
        }
        self.terms.retain(|_, c| *c != 0);
        self
    }
    /// The form divided by `k`, for a form whose constant and coefficients `k` divides.
    fn div_exact(mut self, k: i64) -> Affine {
        self.constant /= k;
        for c in self.terms.values_mut() {
            *c /= k;
        }
        self.terms.retain(|_, c| *c != 0);
        self
    }
    fn scale(mut self, k: i64) -> Affine {
        self.constant = self.constant.wrapping_mul(k);
        for c in self.terms.values_mut() {
            *c = c.wrapping_mul(k);
        }
        self.terms.retain(|_, c| *c != 0);
        self
    }
}

/// What the analysis knows of the launch and the arguments.
pub struct Env<'a> {
    pub block: [u32; 3],
    pub grid: [u32; 3],
    /// Argument values by parameter index.
    pub args: &'a HashMap<u32, i64>,
}

impl Env<'_> {
    fn dim(v: [u32; 3], d: Dim) -> i64 {
        i64::from(match d {
            Dim::X => v[0],
            Dim::Y => v[1],
            Dim::Z => v[2],
        })
    }
}

/// Memoising affine evaluator over one function.
pub struct AffineAnalysis<'f, 'e> {
    func: &'f Function,
    env: &'e Env<'e>,
    memo: HashMap<RegId, Affine>,
    /// The registers added to `memo`, in order, so that a provisional evaluation can be
    /// undone by removing what it added (O(what it added), where comparing with a copy of
    /// the keys was O(memo) per multiple-definition register).
    added: Vec<RegId>,
    /// Uniform unknowns, keyed by what they stand for, so the same parameter gives the
    /// same variable everywhere.
    uniforms: HashMap<String, u32>,
    /// Induction variables: register → (loop id, init, step) per loop it steps in (two for
    /// the counter nvcc shares between an unrolled loop and the remainder loop in front).
    ivs: HashMap<RegId, Vec<(u32, Option<Expr>, Expr)>>,
    depth: u32,
    /// The block of the instruction whose operands are being evaluated: which of a
    /// register's loops a use is in, for a register that steps in several.
    at_block: Option<ptx_ir::ir::BlockId>,
    /// The (register, loop) pairs `multi_loop_iv` is evaluating: re-entering one (two
    /// loops whose entry values are each other's exit values) gives up instead of
    /// recursing, so the work stays linear in the definitions.
    in_progress: Vec<(RegId, u32)>,
}

const MAX_DEPTH: u32 = 48;

impl<'f, 'e> AffineAnalysis<'f, 'e> {
    pub fn new(func: &'f Function, env: &'e Env<'e>) -> Self {
        let mut ivs: HashMap<RegId, Vec<(u32, Option<Expr>, Expr)>> = HashMap::new();
        for (loop_id, lp) in func.loops.iter().enumerate() {
            for iv in &lp.induction_vars {
                ivs.entry(iv.reg).or_default().push((loop_id as u32, iv.init.clone(), iv.step.clone()));
            }
        }
        AffineAnalysis {
            func,
            env,
            memo: HashMap::new(),
            added: Vec::new(),
            uniforms: HashMap::new(),
            ivs,
            depth: 0,
            at_block: None,
            in_progress: Vec::new(),
        }
    }

    /// What a `Var::Uniform` stands for: `param:NAME` for a kernel parameter, `sym:NAME`
    /// for a module variable, other keys for values without a name.
    pub fn uniform_key(&self, id: u32) -> Option<&str> {
        self.uniforms.iter().find(|(_, v)| **v == id).map(|(k, _)| k.as_str())
    }

    fn uniform(&mut self, key: String) -> Affine {
        let n = self.uniforms.len() as u32;
        let id = *self.uniforms.entry(key).or_insert(n);
        Affine::var(Var::Uniform(id))
    }

    /// The affine form of a trip-count-style expression (induction variable init/step).
    fn of_expr(&mut self, e: &Expr) -> Affine {
        match e {
            Expr::Const(c) => Affine::constant(*c),
            Expr::Param { index, name } => match self.env.args.get(index) {
                Some(v) => Affine::constant(*v),
                None => self.uniform(format!("param:{name}")),
            },
            Expr::Special(s) => self.special(*s),
            Expr::Neg(a) => self.of_expr(a).scale(-1),
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.of_expr(a), self.of_expr(b));
                self.binop(*op, a, b)
            }
            #[allow(unreachable_patterns)]
            _ => Affine::irregular(),
        }
    }

    fn special(&mut self, s: SpecialReg) -> Affine {
        match s {
            SpecialReg::Tid(d) => Affine::var(Var::Tid(d)),
            SpecialReg::LaneId => Affine::var(Var::Lane),
            SpecialReg::Ctaid(d) => Affine::var(Var::Ctaid(d)),
            SpecialReg::Ntid(d) => Affine::constant(Env::dim(self.env.block, d)),
            SpecialReg::Nctaid(d) => Affine::constant(Env::dim(self.env.grid, d)),
            other => self.uniform(format!("special:{}", other.name())),
        }
    }

    fn mul(&mut self, a: Affine, b: Affine) -> Affine {
        if a.irregular || b.irregular {
            return Affine::irregular();
        }
        if let Some(k) = a.as_constant() {
            return b.scale(k);
        }
        if let Some(k) = b.as_constant() {
            return a.scale(k);
        }
        // Both non-constant: the product is uniform if both are; a thread-varying value
        // times an unknown uniform one is "strided, stride unknown"; anything else is
        // beyond an affine form.
        match (a.is_warp_uniform(), b.is_warp_uniform()) {
            (true, true) => {
                let key = format!("prod:{}", self.uniforms.len());
                self.uniform(key)
            }
            (false, true) | (true, false) => {
                let varying = if a.is_warp_uniform() { b } else { a };
                // Every thread-varying variable now has an unknown coefficient; uniform
                // terms times an unknown value are an unknown uniform offset, which does
                // not change the pattern across the warp.
                let mut res = Affine::constant(0);
                res.unknown = varying.unknown;
                res.unknown.extend(varying.terms.keys().copied().filter(|v| v.varies_in_warp()));
                res
            }
            (false, false) => Affine::irregular(),
        }
    }

    fn binop(&mut self, op: BinOp, a: Affine, b: Affine) -> Affine {
        match op {
            BinOp::Add => normalise_mod(a.add(&b, 1)),
            BinOp::Sub => normalise_mod(a.add(&b, -1)),
            BinOp::Mul => self.mul(a, b),
            BinOp::Shl => match b.as_constant() {
                Some(k) if (0..63).contains(&k) => a.scale(1i64 << k),
                _ => self.opaque(a, b),
            },
            BinOp::Div | BinOp::CeilDiv | BinOp::Shr => {
                let k = match op {
                    BinOp::Shr => b.as_constant().filter(|k| (0..63).contains(k)).map(|k| 1i64 << k),
                    _ => b.as_constant(),
                };
                match (a.as_constant(), k) {
                    (Some(x), Some(k)) if k != 0 => Affine::constant(x.div_euclid(k)),
                    // A non-negative value below `k` (the sign of a thread index, `tid >> 31`,
                    // in nvcc's signed division): 0.
                    (None, Some(k)) if k > 1 && self.range(&a).is_some_and(|(lo, hi)| lo >= 0 && hi < k) => Affine::constant(0),
                    // The sign of an index (`i >> 31`): a sum of non-negative terms that does
                    // not overflow a 32-bit `int` (signed overflow is undefined in C++).
                    (None, Some(k)) if k >= 1i64 << 31 && non_negative(&a) => Affine::constant(0),
                    // `(c·tid.x + r) / k` with `r` a multiple of `k` (`tid.x / 32`, the warp
                    // index; `(tid.x + 256·j) / 8`, the row of a tile loaded by a 1-D block):
                    // the row `tid.x / (k/c)` plus `r / k`.
                    (None, Some(k)) if k > 1 => match split_tid_x(&a, k) {
                        Some((c, rest)) if k % c == 0 => {
                            let row = if k == c { Affine::var(Var::Tid(Dim::X)) } else { Affine::var(Var::TidXDiv(k / c)) };
                            row.add(&rest.div_exact(k), 1)
                        }
                        Some((c, rest)) if c % k == 0 => Affine::var(Var::Tid(Dim::X)).scale(c / k).add(&rest.div_exact(k), 1),
                        // `(tid.x / j) / k` is `tid.x / (j·k)` (and in y), plus uniform rows;
                        // then the divisions of a 2-D block's or the grid's linear index.
                        _ => match nested_division(&a, k).or_else(|| self.index_division(&a, k).map(|(q, _)| q)) {
                            Some(q) => q,
                            None => self.opaque(a, b),
                        },
                    },
                    _ => self.opaque(a, b),
                }
            }
            // Masks nvcc writes for indices scaled by a power of two (`4·tid & 252` is
            // `4·(tid % 64)`; `4·tid & -256` is `256·(tid / 64)`), on non-negative values.
            BinOp::And if a.as_constant().is_none() && b.as_constant().is_some_and(|m| mask_shape(m).is_some()) => {
                let m = b.as_constant().unwrap_or(0);
                match mask_shape(m) {
                    Some(Mask::Low { shift, bits }) if divides_all(&a, 1i64 << shift) => {
                        let scaled = a.clone().div_exact(1i64 << shift);
                        let rem = self.binop(BinOp::Rem, scaled, Affine::constant(1i64 << bits));
                        if rem.irregular { self.opaque(a, b) } else { rem.scale(1i64 << shift) }
                    }
                    // `a & −2^j` = `2^j · (a / 2^j)`; so is `a & (2^h − 2^j)` with `h` ≥ 17 on a
                    // non-negative index: nvcc's signed `e / 32 * 32` after adding the sign
                    // bits (which are 0) is `and.b32 e, 0x7FFFFFE0`, and `0x1FFFFFFC` where it
                    // knows `e` below 2^29 (the bits the mask clears are 0).
                    Some(Mask::High { bits }) | Some(Mask::Low { shift: bits, .. })
                        if matches!(mask_shape(m), Some(Mask::High { .. })) || (64 - m.leading_zeros() >= 17 && non_negative(&a)) =>
                    {
                        let q = self.binop(BinOp::Div, a.clone(), Affine::constant(1i64 << bits));
                        if q.irregular { self.opaque(a, b) } else { q.scale(1i64 << bits) }
                    }
                    _ => self.opaque(a, b),
                }
            }
            BinOp::Rem | BinOp::And => {
                // `tid.x % 32` or `tid.x & 31` is the lane: affine within one warp.
                let k = match op {
                    BinOp::And => b.as_constant().filter(|m| *m == 31).map(|_| 32),
                    _ => b.as_constant(),
                };
                // `x & (2^j − 1)` is `x % 2^j` for the non-negative values indices are.
                let k = match op {
                    BinOp::And => k.or_else(|| b.as_constant().filter(|m| *m > 0 && (m + 1) & m == 0).map(|m| m + 1)),
                    _ => k,
                };
                match (a.as_constant(), k) {
                    (Some(x), Some(k)) if k != 0 => Affine::constant(x.rem_euclid(k)),
                    (None, Some(32)) if self.only_tid_x(&a) && a.coeff(Var::Tid(Dim::X)) == 1 => Affine::var(Var::Lane),
                    // A non-negative value below `k`: itself.
                    (None, Some(k)) if k > 1 && self.range(&a).is_some_and(|(lo, hi)| lo >= 0 && hi < k) => a,
                    // `(c·tid.x + r) % k` with `r` a multiple of `k`: `c · (tid.x % (k/c))`.
                    (None, Some(k)) if k > 1 => match split_tid_x(&a, k) {
                        Some((c, _)) if k % c == 0 && k > c => Affine::var(Var::TidXMod(k / c)).scale(c),
                        Some((c, _)) if c % k == 0 => Affine::constant(0),
                        _ => match self.index_division(&a, k) {
                            Some((_, r)) => r,
                            None => match (op, a.terms.iter().next()) {
                                // `blockIdx.d % m`: a periodic block index (unsigned or
                                // non-negative, so the remainder is in 0..m).
                                (BinOp::Rem, Some((Var::Ctaid(d), 1))) if a.constant == 0 && a.unknown.is_empty() && !a.irregular && a.terms.len() == 1 => Affine::var(Var::CtaidMod(*d, k)),
                                _ => self.opaque(a, b),
                            },
                        },
                    },
                    (None, Some(1)) if !a.irregular => Affine::constant(0),
                    _ => self.opaque(a, b),
                }
            }
            _ => self.opaque(a, b),
        }
    }

    /// `bfi d, a, b, pos, len` (PTX ISA, "bfi"): `a`'s low `len` bits inserted into `b` at
    /// bit `pos`. nvcc writes `(hi << pos) + lo` this way when `lo < 2^pos` is known (a lane,
    /// `x & 31`); then it is `b + a·2^pos`, provided `a` fits its `len` bits (block and
    /// warp indices do).
    fn bit_insert(&mut self, a: Affine, b: Affine, pos: Option<i64>, len: Option<i64>) -> Affine {
        match (pos, len) {
            (Some(pos), Some(len)) if (0..32).contains(&pos) && len > 0 && pos + len >= 32 && self.below(&b).is_some_and(|u| u <= 1i64 << pos) => {
                b.add(&a.scale(1i64 << pos), 1)
            }
            _ => self.opaque(a, b),
        }
    }

    /// `a | b` where one operand is below `2^j` and the other a multiple of `2^j`: the bits
    /// do not overlap, so the `or` is a sum (nvcc's `(hi << 5) | lane`).
    fn disjoint_or(&mut self, a: Affine, b: Affine) -> Affine {
        let fits = |lo: &Affine, hi: &Affine| self.below(lo).is_some_and(|u| divides_all(hi, (u.max(1) as u64).next_power_of_two() as i64));
        if fits(&b, &a) || fits(&a, &b) { a.add(&b, 1) } else { self.opaque(a, b) }
    }

    /// The values a form takes (inclusive), where every variable has a known extent: thread
    /// and block indices from the launch, the lane, the parts of `tid.x`.
    fn range(&self, a: &Affine) -> Option<(i64, i64)> {
        if a.irregular || !a.unknown.is_empty() {
            return None;
        }
        let (mut lo, mut hi) = (a.constant, a.constant);
        for (v, c) in &a.terms {
            let n = match v {
                Var::Tid(d) => Env::dim(self.env.block, *d),
                Var::Ctaid(d) => Env::dim(self.env.grid, *d),
                Var::Lane => 32,
                Var::TidXDiv(k) => (Env::dim(self.env.block, Dim::X) + (*k).max(1) - 1) / (*k).max(1),
                Var::TidXMod(k) => *k,
                Var::TidYDiv(k) => (Env::dim(self.env.block, Dim::Y) + (*k).max(1) - 1) / (*k).max(1),
                Var::TidYMod(k) => *k,
                Var::CtaidMod(_, m) => *m,
                Var::CtaidDiv(d, m) => (Env::dim(self.env.grid, *d) + (*m).max(1) - 1) / (*m).max(1),
                _ => return None,
            };
            let span = c.checked_mul(n.max(1) - 1)?;
            if span >= 0 { hi = hi.checked_add(span)? } else { lo = lo.checked_add(span)? }
        }
        Some((lo, hi))
    }

    /// An exclusive upper bound of a form that takes non-negative values only ([`Self::range`]).
    fn below(&self, a: &Affine) -> Option<i64> {
        self.range(a).filter(|(lo, _)| *lo >= 0).and_then(|(_, hi)| hi.checked_add(1))
    }

    fn only_tid_x(&self, a: &Affine) -> bool {
        !a.irregular && a.terms.keys().all(|v| matches!(v, Var::Tid(Dim::X)))
    }

    /// The quotient and remainder of `a / k` where `a` is a scaled linear index, of a 2-D
    /// block ([`Self::linear_division`]) or of the grid ([`Self::block_row_division`]).
    fn index_division(&self, a: &Affine, k: i64) -> Option<(Affine, Affine)> {
        self.linear_division(a, k).or_else(|| self.block_row_division(a, k))
    }

    /// `a / k` and `a % k` for `a = c·(tid.x + bx·tid.y) + r` in a 2-D block `bx` threads
    /// wide: `c` times the block's linear thread index (the lanes of a warp are consecutive
    /// in it), `r` warp-uniform, non-negative and a multiple of `k`, and `k = c·K`. The
    /// index tiles of a cooperative load, `e = ty·16 + tx + 256·i; row = e / 32; col = e %
    /// 32` in a 16 × 16 block, or `for (e = tid; e < N; e += 256)`. Where `K` divides `bx`
    /// the quotient is `tid.x / K + (bx/K)·tid.y` and the rest `tid.x % K`; where `bx`
    /// divides `K` (`m = K / bx`), `tid.y / m` and `tid.x + bx·(tid.y % m)`. `None`
    /// otherwise, or in a block with a third dimension (then `tid.z` would take part).
    fn linear_division(&self, a: &Affine, k: i64) -> Option<(Affine, Affine)> {
        let bx = Env::dim(self.env.block, Dim::X);
        if a.irregular || !a.unknown.is_empty() || k <= 1 || bx <= 0 || Env::dim(self.env.block, Dim::Z) > 1 {
            return None;
        }
        let c = a.coeff(Var::Tid(Dim::X));
        if c <= 0 || k % c != 0 || a.coeff(Var::Tid(Dim::Y)) != c.checked_mul(bx)? || a.coeff(Var::Tid(Dim::Z)) != 0 {
            return None;
        }
        let mut rest = a.clone();
        rest.terms.remove(&Var::Tid(Dim::X));
        rest.terms.remove(&Var::Tid(Dim::Y));
        if !uniform_multiple(&rest, k) {
            return None;
        }
        let big_k = k / c;
        let tx = || Affine::var(Var::Tid(Dim::X));
        let ty = || Affine::var(Var::Tid(Dim::Y));
        let (quotient, remainder) = if bx % big_k == 0 {
            let row = if big_k == 1 { tx() } else { Affine::var(Var::TidXDiv(big_k)) };
            let col = if big_k == 1 { Affine::constant(0) } else { Affine::var(Var::TidXMod(big_k)).scale(c) };
            (row.add(&ty().scale(bx / big_k), 1), col)
        } else if big_k % bx == 0 {
            let m = big_k / bx;
            let row = if m == 1 { ty() } else { Affine::var(Var::TidYDiv(m)) };
            let col = if m == 1 { tx().scale(c) } else { tx().scale(c).add(&Affine::var(Var::TidYMod(m)).scale(c * bx), 1) };
            (row, col)
        } else {
            return None;
        };
        Some((quotient.add(&rest.div_exact(k), 1), remainder))
    }

    /// nvcc's division by a constant `d` that is not a power of two: `mul.hi x, M` then
    /// `shr` by `s`, with `M = ceil(2^(32+s) / d)` (Granlund and Montgomery, "Division by
    /// Invariant Integers using Multiplication", PLDI 1994; `e / 24` is `mul.hi.s32 e,
    /// 715827883; shr.s32 2`), is `x / d`; the signed form's `shr.u32 31` of the same
    /// product, its sign, is 0 for a non-negative `x`. For a non-negative `x` only (indices),
    /// and only where `M` is exactly that magic number for `d`; `None` otherwise.
    fn magic_division(&mut self, ops: &[Operand]) -> Option<Affine> {
        let (Some(Operand::Reg(r)), Some(Operand::Imm(shift))) = (ops.get(1), ops.get(2)) else { return None };
        let [def] = self.func.defs_of(*r) else { return None };
        let mul = self.func.instr(*def)?;
        // `mul.hi` keeps the product's high word (the shift adds 32); `mul.wide.u32` all
        // 64 bits (nvcc's unsigned form: `shr.u64` by 32 + s).
        let hi = mul.has_modifier("hi");
        let wide = mul.has_modifier("wide") && mul.ty() == Some("u32");
        if mul.base() != "mul" || !(hi || wide) || !matches!(mul.ty(), Some("s32" | "u32")) {
            return None;
        }
        let total = if hi { 32 + *shift } else { *shift };
        if !(32..64).contains(&total) {
            return None;
        }
        let mops: Vec<Operand> = self.func.operands_of(mul).to_vec();
        let (x, m) = match (mops.get(1), mops.get(2)) {
            (Some(x), Some(Operand::Imm(m))) | (Some(Operand::Imm(m)), Some(x)) => (x.clone(), *m),
            _ => return None,
        };
        // The multiplier as the instruction reads it: a 32-bit word, unsigned or signed.
        let m = if mul.ty() == Some("u32") { m & 0xFFFF_FFFF } else { i64::from(m as i32) };
        let x = self.operand(&x);
        if m <= 0 || !non_negative(&x) {
            return None;
        }
        if hi && *shift == 31 {
            // The sign of the product of a non-negative value and a positive multiplier.
            return Some(Affine::constant(0));
        }
        let p = 1i128 << total;
        let d = ((p + i128::from(m) / 2) / i128::from(m)) as i64;
        let exact = d > 1 && (0..i128::from(d)).contains(&(i128::from(m) * i128::from(d) - p));
        exact.then(|| self.binop(BinOp::Div, x, Affine::constant(d)))
    }

    /// `a / k` and `a % k` for a global index `a = c·(B·ctaid.x + tid.x) + r` in a 1-D block
    /// of `B` threads whose row `k = c·K` is a multiple of the block (`m = K / B > 1`, `r`
    /// warp-uniform, non-negative and a multiple of `k`): the row `ctaid.x / m + r / k` and
    /// the column `c·tid.x + c·B·(ctaid.x % m)`, so `i = blockIdx.x·256 + threadIdx.x; row =
    /// i / 2048; col = i % 2048` reads rows of 2048 spread over 8 blocks. `None` otherwise
    /// (a row narrower than the block is [`split_tid_x`]'s).
    fn block_row_division(&self, a: &Affine, k: i64) -> Option<(Affine, Affine)> {
        let b = Env::dim(self.env.block, Dim::X);
        if a.irregular || !a.unknown.is_empty() || k <= 1 || b <= 0 || Env::dim(self.env.block, Dim::Y) > 1 || Env::dim(self.env.block, Dim::Z) > 1 {
            return None;
        }
        let c = a.coeff(Var::Tid(Dim::X));
        if c <= 0 || k % c != 0 || a.coeff(Var::Ctaid(Dim::X)) != c.checked_mul(b)? {
            return None;
        }
        let big_k = k / c;
        if big_k % b != 0 || big_k / b < 2 {
            return None;
        }
        let m = big_k / b;
        let mut rest = a.clone();
        rest.terms.remove(&Var::Tid(Dim::X));
        rest.terms.remove(&Var::Ctaid(Dim::X));
        if !uniform_multiple(&rest, k) || rest.terms.keys().any(|v| matches!(v, Var::CtaidMod(Dim::X, _) | Var::CtaidDiv(Dim::X, _))) {
            return None;
        }
        let row = Affine::var(Var::CtaidDiv(Dim::X, m)).add(&rest.div_exact(k), 1);
        let col = Affine::var(Var::Tid(Dim::X)).scale(c).add(&Affine::var(Var::CtaidMod(Dim::X, m)).scale(c * b), 1);
        Some((row, col))
    }

    /// `min(x, c)` or `max(x, c)` with `x` a thread-varying index of known range and `c` a
    /// constant that clips at most an eighth of that range at one end: `x`. The clamp of a
    /// stencil's halo to the image (`min(max(x + dx, 0), w − 1)`) changes the address of the
    /// edge threads only, so for coalescing, footprints and reuse the index is taken as is
    /// (an estimate: their reads are taken one row or column beyond the image instead of on
    /// its edge). A bound outside
    /// the range never clips (exactly `x`); one that clips more is `None` (the caller makes
    /// the value uniform or irregular as before).
    fn edge_clamp(&mut self, base: &str, ops: &[Operand]) -> Option<Affine> {
        let (a, b) = (self.operand(ops.get(1)?), self.operand(ops.get(2)?));
        let (x, c) = match (a.as_constant(), b.as_constant()) {
            (None, Some(c)) => (a, c),
            (Some(c), None) => (b, c),
            _ => return None,
        };
        if x.is_warp_uniform() {
            return None;
        }
        let (lo, hi) = self.range(&x)?;
        let span = (hi - lo).max(1);
        let clipped = if base == "min" { hi - c } else { c - lo };
        (clipped <= 0 || clipped * 8 <= span).then_some(x)
    }

    /// A non-linear combination: uniform stays uniform (unknown), varying becomes irregular.
    fn opaque(&mut self, a: Affine, b: Affine) -> Affine {
        if a.is_warp_uniform() && b.is_warp_uniform() {
            let key = format!("opaque:{}", self.uniforms.len());
            self.uniform(key)
        } else {
            Affine::irregular()
        }
    }

    /// The affine form of an operand.
    pub fn operand(&mut self, op: &Operand) -> Affine {
        match op {
            Operand::Reg(r) => self.reg(*r),
            Operand::Imm(v) => Affine::constant(*v),
            // `WARP_SZ`, the warp size, is 32 on every NVIDIA GPU (PTX ISA §10.29; the concrete
            // evaluator reads it so too): `warpSize` divides thread indices into warps.
            Operand::Symbol(s) if &**s == "WARP_SZ" => Affine::constant(32),
            Operand::Symbol(s) => self.uniform(format!("sym:{s}")),
            _ => Affine::irregular(),
        }
    }

    /// The affine form of a register's value where an instruction of `block` reads it.
    pub fn reg_in(&mut self, r: RegId, block: ptx_ir::ir::BlockId) -> Affine {
        let outer = self.at_block.replace(block);
        let value = self.reg(r);
        self.at_block = outer;
        value
    }

    /// The affine form of a register's value.
    pub fn reg(&mut self, r: RegId) -> Affine {
        if self.depth > MAX_DEPTH {
            return Affine::irregular();
        }
        // A counter read before the loop that steps it has its entry value there, not the
        // iteration's (nvcc's unrolled z-march: `p = in + 4·x` computed in the preheader
        // from the column counter the loop then advances by four planes; reading it as the
        // counter made the pointer step twice per iteration). Not memoised: inside the
        // loop the same register is the induction variable.
        if let Some(loop_id) = self.read_before_its_loop(r) {
            self.depth += 1;
            let init = match self.ivs.get(&r).and_then(|l| l.first()).and_then(|l| l.1.clone()) {
                Some(e) => self.of_expr(&e),
                None => self.def_outside_loop(r, loop_id),
            };
            self.depth -= 1;
            return init;
        }
        if let Some(a) = self.memo.get(&r) {
            return a.clone();
        }
        self.depth += 1;
        // A register that steps in several loops has a value per use site: not memoised.
        let per_site = self.ivs.get(&r).is_some_and(|l| l.len() > 1);
        let res = if per_site { self.multi_loop_iv(r) } else { self.reg_uncached(r) };
        self.depth -= 1;
        if !per_site {
            self.remember(r, res.clone());
        }
        res
    }

    /// The loop of `r`, when `r` is the induction variable of exactly one loop and is read
    /// (at `at_block`) outside that loop and before it in the code's layout, where nvcc
    /// puts the preheader (after it are the remainder loop and the exit, which see the
    /// value the loop left: left to the induction form, which ranges over it).
    fn read_before_its_loop(&self, r: RegId) -> Option<u32> {
        let site = self.at_block?;
        let [(loop_id, ..)] = self.ivs.get(&r)?.as_slice() else { return None };
        let lp = self.func.loops.get(*loop_id as usize)?;
        (!lp.contains(site) && site < lp.header).then_some(*loop_id)
    }

    /// A counter that steps in several loops, one after the other (nvcc's remainder loop
    /// `for (i = lane; ...; i += 32)` peeled in front of the same loop unrolled by four,
    /// `i += 128`): inside one of them, that loop's induction variable; elsewhere (between
    /// or after them), the common start of its definitions (`common_start`: `lane`, the
    /// smallest of `lane + 32·r`).
    fn multi_loop_iv(&mut self, r: RegId) -> Affine {
        crate::work::add(1);
        let loops = self.ivs.get(&r).cloned().unwrap_or_default();
        let here = self.at_block.map(|b| self.func.loops_of(b)).unwrap_or_default();
        // `loops_of` lists the innermost loop first.
        let inside = here.iter().find_map(|l| loops.iter().find(|(id, ..)| id == l)).cloned();
        let key = (r, inside.as_ref().map_or(u32::MAX, |l| l.0));
        if self.in_progress.contains(&key) {
            return Affine::irregular();
        }
        self.in_progress.push(key);
        let value = match inside {
            Some((loop_id, init, step)) => {
                let init = match init {
                    Some(e) => self.of_expr(&e),
                    None => self.def_outside_loop(r, loop_id),
                };
                let step = self.of_expr(&step);
                let iter = self.mul(Affine::var(Var::Iter(loop_id)), step);
                init.add(&iter, 1)
            }
            None => {
                let defs: Vec<InstrId> = self.func.defs_of(r).to_vec();
                if defs.is_empty() || defs.len() > 8 {
                    Affine::irregular()
                } else {
                    let vals: Vec<Affine> = defs.iter().map(|d| self.instr_value(*d)).collect();
                    common_start(&vals).unwrap_or_else(Affine::irregular)
                }
            }
        };
        self.in_progress.pop();
        value
    }

    fn remember(&mut self, r: RegId, a: Affine) {
        if self.memo.insert(r, a).is_none() {
            self.added.push(r);
        }
    }

    /// Removes from the memo every register added since `mark` (a length of `added`).
    fn forget_since(&mut self, mark: usize) {
        crate::work::add(self.added.len().saturating_sub(mark) as u64);
        for r in self.added.drain(mark..) {
            self.memo.remove(&r);
        }
    }

    fn reg_uncached(&mut self, r: RegId) -> Affine {
        crate::work::add(1);
        if let Some(s) = self.func.register(r).and_then(|reg| reg.special) {
            return self.special(s);
        }
        if let Some((loop_id, init, step)) = self.ivs.get(&r).and_then(|l| l.first()).cloned() {
            // iv = init + iteration · step.
            let init = match init {
                Some(e) => self.of_expr(&e),
                None => {
                    // The entry value is computed in the function: find its definition
                    // outside the loop.
                    self.def_outside_loop(r, loop_id)
                }
            };
            let step = self.of_expr(&step);
            let iter = self.mul(Affine::var(Var::Iter(loop_id)), step);
            return init.add(&iter, 1);
        }
        match self.func.defs_of(r) {
            [] => self.uniform(format!("undef:{r}")),
            [one] => self.instr_value(*one),
            many => {
                let many: Vec<InstrId> = many.to_vec();
                if let Some(res) = self.pointer_induction(r, &many) {
                    return res;
                }
                // Several definitions (an `if`/`else` assignment, or a loop variable updated
                // non-linearly such as `s >>= 1`). Optimistically assume the register is one
                // unknown uniform value: if every definition is then warp-uniform the
                // assumption is consistent (a fixed point); otherwise undo and give up.
                let mark = self.added.len();
                let placeholder = self.uniform(format!("phi:{r}"));
                self.remember(r, placeholder.clone());
                let vals: Vec<Affine> = many.iter().map(|d| self.instr_value(*d)).collect();
                let self_free = |v: &Affine| !v.terms.contains_key(&placeholder_var(&placeholder));
                if vals.iter().all(|v| *v == vals[0]) && self_free(&vals[0]) {
                    vals[0].clone()
                } else if vals.iter().all(Affine::is_warp_uniform) {
                    placeholder
                } else if let Some(start) = common_start(&vals).filter(self_free) {
                    // The same thread pattern on every path, shifted by constants: the
                    // start of nvcc's unrolled-by-4 loop after the remainder copies
                    // (`tid.x`, `tid.x + 32`, `tid.x + 64` or `tid.x + 96`, depending on
                    // how many the thread ran). The pattern across the warp is the
                    // paths' common one; the smallest start stands for the offset.
                    start
                } else {
                    self.forget_since(mark);
                    Affine::irregular()
                }
            }
        }
    }

    /// Recognises `r` as an induction variable that the IR's detector did not see: one
    /// definition before a loop and, inside it, updates of the form `r = r + delta`
    /// through temporaries (nvcc's unrolled pointer walks: `t = r + s; ...; r = t + s`).
    fn pointer_induction(&mut self, r: RegId, defs: &[InstrId]) -> Option<Affine> {
        let func = self.func;
        let block_of = |d: InstrId| func.instr(d).map(|i| i.block);
        // The innermost loop holding an update and not holding the initial definition.
        let loop_id = func.loops_of(block_of(*defs.last()?)?).into_iter().find(|l| {
            let lp = &func.loops[*l as usize];
            let inside = defs.iter().filter(|d| block_of(**d).is_some_and(|b| lp.contains(b))).count();
            inside >= 1 && defs.len() - inside == 1
        })?;
        let lp = &func.loops[loop_id as usize];
        let (inside, outside): (Vec<InstrId>, Vec<InstrId>) =
            defs.iter().partition(|d| block_of(**d).is_some_and(|b| lp.contains(b)));
        // Evaluate the updates with `r` as a symbol, then forget everything computed on
        // that provisional basis.
        let mark = self.added.len();
        self.remember(r, Affine::var(Var::SelfRef(r)));
        let mut delta: Option<Affine> = None;
        let mut ok = true;
        for d in &inside {
            let v = self.instr_value(*d);
            if v.irregular || v.coeff(Var::SelfRef(r)) != 1 {
                ok = false;
                break;
            }
            let mut dv = v.clone();
            dv.terms.remove(&Var::SelfRef(r));
            if !dv.is_warp_uniform() || delta.as_ref().is_some_and(|prev| *prev != dv) {
                ok = false;
                break;
            }
            delta = Some(dv);
        }
        self.forget_since(mark);
        if !ok || inside.len() != 1 {
            // Several different updates per iteration (or none usable): not a simple
            // induction variable.
            return None;
        }
        let init = self.instr_value(outside[0]);
        let delta = delta?;
        let iter = self.mul(Affine::var(Var::Iter(loop_id)), delta);
        Some(init.add(&iter, 1))
    }

    fn def_outside_loop(&mut self, r: RegId, loop_id: u32) -> Affine {
        let Some(lp) = self.func.loops.get(loop_id as usize) else { return Affine::irregular() };
        let outside: Vec<InstrId> = self
            .func
            .defs_of(r)
            .iter()
            .copied()
            .filter(|d| self.func.instr(*d).is_some_and(|i| !lp.contains(i.block) && self.enters(i.block, lp)))
            .collect();
        match outside.as_slice() {
            [one] => self.instr_value(*one),
            // Several entry values (the remainder iterations of an unrolled loop peeled in
            // front of it: `i = tid`, `tid + 256`, `tid + 512`): the same pattern shifted,
            // taken from the smallest start.
            many if !many.is_empty() && many.len() <= 8 => {
                let vals: Vec<Affine> = many.iter().map(|d| self.instr_value(*d)).collect();
                common_start(&vals).unwrap_or_else(Affine::irregular)
            }
            _ => Affine::irregular(),
        }
    }

    /// `true` when control can go from block `from` (outside the loop) to the loop's header
    /// without passing through the loop: a definition there can be the loop's entry value.
    /// One in a later loop that the code never leaves back to this one cannot (nvcc's
    /// remainder loop ahead of the unrolled one, both stepping the same counter).
    fn enters(&self, from: ptx_ir::ir::BlockId, lp: &ptx_ir::Loop) -> bool {
        let mut seen = vec![false; self.func.blocks.len()];
        let mut stack = vec![from];
        while let Some(b) = stack.pop() {
            let Some(block) = self.func.blocks.get(b as usize) else { continue };
            for &s in &block.succs {
                if s == lp.header {
                    return true;
                }
                if !lp.contains(s) && !std::mem::replace(&mut seen[s as usize], true) {
                    stack.push(s);
                }
            }
        }
        false
    }

    /// The value an instruction writes to its (first) destination.
    fn instr_value(&mut self, id: InstrId) -> Affine {
        let Some(instr) = self.func.instr(id) else { return Affine::irregular() };
        let outer = self.at_block.replace(instr.block);
        let value = self.instr_value_at(id, instr);
        self.at_block = outer;
        value
    }

    fn instr_value_at(&mut self, id: InstrId, instr: &ptx_ir::ir::Instr) -> Affine {
        let ops: Vec<Operand> = self.func.operands_of(instr).to_vec();
        let base = instr.base().to_string();
        let src = |i: usize| ops.get(i).cloned();
        // nvcc's integer idioms that are affine after all: a division by a magic multiplier
        // (a `shr` of a `mul.hi`) and a clamp at the edge of an index's range.
        if !is_float(instr.ty()) {
            let idiom = match base.as_str() {
                "shr" => self.magic_division(&ops),
                "min" | "max" => self.edge_clamp(&base, &ops),
                _ => None,
            };
            if let Some(v) = idiom {
                return v;
            }
        }
        match (base.as_str(), instr.class) {
            ("mov" | "cvt" | "cvta", _) => match src(1) {
                Some(op) => self.operand(&op),
                None => Affine::irregular(),
            },
            ("ld", InstrClass::Load(Space::Param)) => match src(1) {
                Some(Operand::Addr { base: ptx_ir::ir::AddrBase::Symbol(sym), .. }) => {
                    match self.func.param_index(&sym).and_then(|i| self.env.args.get(&i).copied()) {
                        Some(v) => Affine::constant(v),
                        None => self.uniform(format!("param:{sym}")),
                    }
                }
                _ => self.uniform(format!("ldparam:{id}")),
            },
            // Loads from constant memory and uniform addresses give warp-uniform values;
            // other loads give data.
            ("ld" | "ldu", InstrClass::Load(Space::Const)) => self.uniform(format!("ldconst:{id}")),
            // One address for the whole warp (`row_ptr[warp_id]` in a warp-per-row kernel):
            // every lane reads the same word, so the value is the same across the warp,
            // though unknown. An address built on it plus the lane (`values[row_start +
            // lane]`) is then coalesced, not a gather.
            ("ld" | "ldu", InstrClass::Load(Space::Global | Space::Generic | Space::Shared)) => match src(1) {
                Some(Operand::Addr { base: ptx_ir::ir::AddrBase::Reg(r), .. }) => {
                    if self.reg_in(r, instr.block).is_warp_uniform() {
                        self.uniform(format!("lduniform:{id}"))
                    } else {
                        Affine::irregular()
                    }
                }
                _ => Affine::irregular(),
            },
            // A local slot one store alone writes (a `volatile` local): the stored value.
            ("ld", InstrClass::Load(Space::Local)) => match self.func.forwarded_local(id) {
                Some(op) => self.operand(op),
                None => Affine::irregular(),
            },
            ("add", _) | ("sub", _) => {
                let (a, b) = (src(1), src(2));
                match (a, b) {
                    (Some(a), Some(b)) => {
                        let (a, b) = (self.operand(&a), self.operand(&b));
                        self.binop(if base == "add" { BinOp::Add } else { BinOp::Sub }, a, b)
                    }
                    _ => Affine::irregular(),
                }
            }
            ("mul" | "mul24", _) if !instr.has_modifier("hi") && !is_float(instr.ty()) => match (src(1), src(2)) {
                (Some(a), Some(b)) => {
                    let (a, b) = (self.operand(&a), self.operand(&b));
                    self.mul(a, b)
                }
                _ => Affine::irregular(),
            },
            ("mad" | "mad24", _) if !instr.has_modifier("hi") && !is_float(instr.ty()) => match (src(1), src(2), src(3)) {
                (Some(a), Some(b), Some(c)) => {
                    let (a, b, c) = (self.operand(&a), self.operand(&b), self.operand(&c));
                    let p = self.mul(a, b);
                    p.add(&c, 1)
                }
                _ => Affine::irregular(),
            },
            ("shl" | "shr" | "and" | "rem" | "div", _) if !is_float(instr.ty()) => match (src(1), src(2)) {
                (Some(a), Some(b)) => {
                    let (a, b) = (self.operand(&a), self.operand(&b));
                    let op = match base.as_str() {
                        "shl" => BinOp::Shl,
                        "shr" => BinOp::Shr,
                        "and" => BinOp::And,
                        "rem" => BinOp::Rem,
                        _ => BinOp::Div,
                    };
                    self.binop(op, a, b)
                }
                _ => Affine::irregular(),
            },
            ("neg", _) => match src(1) {
                Some(a) => self.operand(&a).scale(-1),
                None => Affine::irregular(),
            },
            ("bfi", _) => match (src(1), src(2), src(3), src(4)) {
                (Some(a), Some(b), Some(pos), Some(len)) => {
                    let (a, b) = (self.operand(&a), self.operand(&b));
                    let (pos, len) = (self.operand(&pos).as_constant(), self.operand(&len).as_constant());
                    self.bit_insert(a, b, pos, len)
                }
                _ => Affine::irregular(),
            },
            ("or", _) if !is_float(instr.ty()) && ops.len() == 3 => match (src(1), src(2)) {
                (Some(a), Some(b)) => {
                    let (a, b) = (self.operand(&a), self.operand(&b));
                    self.disjoint_or(a, b)
                }
                _ => Affine::irregular(),
            },
            ("selp" | "min" | "max" | "or" | "xor" | "not" | "bfe" | "prmt", _) => {
                let vals: Vec<Affine> = ops.iter().skip(1).map(|o| self.operand(o)).collect();
                if vals.iter().all(Affine::is_warp_uniform) {
                    self.uniform(format!("op:{id}"))
                } else {
                    Affine::irregular()
                }
            }
            _ => {
                // Arithmetic on values whose form we track, but not linearly (float math,
                // loaded data, shuffles): uniform only if all inputs are.
                let srcs: Vec<RegId> = self.func.srcs(instr).to_vec();
                let is_load = instr.class.is_memory() || matches!(instr.class, InstrClass::WarpLevel);
                if !is_load && srcs.iter().all(|s| self.reg(*s).is_warp_uniform()) {
                    self.uniform(format!("val:{id}"))
                } else {
                    Affine::irregular()
                }
            }
        }
    }
}

/// The masks of [`AffineAnalysis::binop`]'s `and`: `2^bits − 1` shifted left by `shift`
/// (the low bits of a scaled index), or `−2^bits` (all bits from `bits` up).
enum Mask {
    Low { shift: u32, bits: u32 },
    High { bits: u32 },
}

fn mask_shape(m: i64) -> Option<Mask> {
    if m > 0 {
        let shift = m.trailing_zeros();
        let low = m >> shift;
        let bits = (low + 1).trailing_zeros();
        // Plain `2^bits − 1` masks are `%` already; only shifted ones are new here.
        (shift > 0 && low & (low + 1) == 0 && bits < 62).then_some(Mask::Low { shift, bits })
    } else if m < 0 {
        let bits = m.trailing_zeros();
        ((m >> bits) == -1 && (1..62).contains(&bits)).then_some(Mask::High { bits })
    } else {
        None
    }
}

/// `a = c·tid.x + r` with `c > 0` and `r` a multiple of `k`, free of thread-varying
/// variables (a non-negative thread index, scaled, plus whole rows): `(c, r)`. Then, where
/// `c` divides `k`, `a / k = tid.x / (k/c) + r / k` and `a % k = c·(tid.x % (k/c))` (the
/// arithmetic is on non-negative values: indices).
fn split_tid_x(a: &Affine, k: i64) -> Option<(i64, Affine)> {
    let c = a.coeff(Var::Tid(Dim::X));
    if a.irregular || !a.unknown.is_empty() || c <= 0 {
        return None;
    }
    let mut rest = a.clone();
    rest.terms.remove(&Var::Tid(Dim::X));
    uniform_multiple(&rest, k).then_some((c, rest))
}

/// `a / k` for `a = tid.x / j + r` (or `tid.y / j + r`) with `r` warp-uniform,
/// non-negative and a multiple of `k`: `tid.x / (j·k) + r / k` (integer division of
/// non-negative values composes). nvcc writes it for `4·(x / 24)` as `((x·M) >> 34) & ~3`.
fn nested_division(a: &Affine, k: i64) -> Option<Affine> {
    if a.irregular || !a.unknown.is_empty() {
        return None;
    }
    let mut divs = a.terms.iter().filter(|(v, _)| v.div_k().is_some());
    let (v, c) = divs.next()?;
    if divs.next().is_some() || *c != 1 {
        return None;
    }
    let j = v.div_k()?;
    let mut rest = a.clone();
    rest.terms.remove(v);
    if !uniform_multiple(&rest, k) {
        return None;
    }
    let q = match v {
        Var::TidXDiv(_) => Var::TidXDiv(j.checked_mul(k)?),
        _ => Var::TidYDiv(j.checked_mul(k)?),
    };
    Some(Affine::var(q).add(&rest.div_exact(k), 1))
}

/// A form with a non-negative constant and non-negative coefficients on indices that count
/// from 0 (thread, block and lane indices, loop iterations and their parts).
fn non_negative(a: &Affine) -> bool {
    !a.irregular
        && a.unknown.is_empty()
        && a.constant >= 0
        && a.terms.iter().all(|(v, c)| *c >= 0 && matches!(v, Var::Tid(_) | Var::Ctaid(_) | Var::Lane | Var::Iter(_) | Var::TidXDiv(_) | Var::TidXMod(_) | Var::TidYDiv(_) | Var::TidYMod(_) | Var::CtaidMod(..) | Var::CtaidDiv(..)))
}

/// `c·tid.x − c·k·(tid.x / k)` is `c·(tid.x % k)`: nvcc's signed remainder, `i − (i/k)·k`.
fn normalise_mod(mut a: Affine) -> Affine {
    if a.irregular {
        return a;
    }
    // `c·tid.x − c·k·(tid.x / k)` is `c·(tid.x % k)`, and the same in y (`e − 32·(e / 32)`
    // of a 2-D block's linear index, [`AffineAnalysis::linear_division`]).
    for (dim, div, rem) in [(Dim::X, Var::TidXDiv as fn(i64) -> Var, Var::TidXMod as fn(i64) -> Var), (Dim::Y, Var::TidYDiv, Var::TidYMod)] {
        let c = a.coeff(Var::Tid(dim));
        if c == 0 {
            continue;
        }
        // A `div(k)` term of this dimension whose coefficient is `−c·k`.
        let k = a.terms.iter().find_map(|(v, q)| v.div_k().filter(|k| *v == div(*k) && *q == -c * k));
        if let Some(k) = k {
            a.terms.remove(&Var::Tid(dim));
            a.terms.remove(&div(k));
            *a.terms.entry(rem(k)).or_insert(0) += c;
        }
    }
    // `q·ctaid − q·m·(ctaid / m)` is `q·(ctaid % m)` (the column of a global index that
    // `i − (i / w)·w` computes).
    for d in [Dim::X, Dim::Y, Dim::Z] {
        let q = a.coeff(Var::Ctaid(d));
        if q == 0 {
            continue;
        }
        let m = a.terms.iter().find_map(|(v, c)| match v {
            Var::CtaidDiv(dd, m) if *dd == d && *c == -q * m => Some(*m),
            _ => None,
        });
        if let Some(m) = m {
            a.terms.remove(&Var::Ctaid(d));
            a.terms.remove(&Var::CtaidDiv(d, m));
            *a.terms.entry(Var::CtaidMod(d, m)).or_insert(0) += q;
        }
    }
    a
}

/// The rest of a divided index that keeps the division exact per warp: warp-uniform,
/// non-negative and a multiple of `k` (then `(x + rest) / k` is `x / k + rest / k`).
fn uniform_multiple(rest: &Affine, k: i64) -> bool {
    rest.terms.keys().all(|v| !v.varies_in_warp()) && divides_all(rest, k) && rest.constant >= 0
}

/// `true` when every value the form takes is a multiple of `m` (its constant and every
/// coefficient are; the variables are integers).
fn divides_all(a: &Affine, m: i64) -> bool {
    m > 0 && !a.irregular && a.unknown.is_empty() && a.constant % m == 0 && a.terms.values().all(|c| c % m == 0)
}

/// When every value has the same variables with the same coefficients and only the
/// constants differ, the one with the smallest constant. Terms in the iteration number of
/// a loop that some values have and others not (or with other coefficients) are dropped
/// first: they are the exit value of a loop run before this one, warp-uniform, such as
/// the remainder loop nvcc peels in front of an unrolled strided loop (`for (i = lane; i
/// < n; i += 32)`: the unrolled loop starts at `lane`, or at `lane + 32·r` after `r`
/// remainder iterations); dropping them keeps the smallest start, as for the constants.
fn common_start(vals: &[Affine]) -> Option<Affine> {
    let first = vals.first()?;
    if vals.iter().any(|v| v.irregular || v.unknown != first.unknown) {
        return None;
    }
    let shared = |var: &Var, c: i64| vals.iter().all(|v| v.terms.get(var) == Some(&c));
    let strip = |v: &Affine| -> Option<Affine> {
        let mut out = v.clone();
        for (var, c) in &v.terms {
            if !shared(var, *c) {
                if !matches!(var, Var::Iter(_)) {
                    return None;
                }
                out.terms.remove(var);
            }
        }
        Some(out)
    };
    let stripped: Vec<Affine> = vals.iter().map(strip).collect::<Option<_>>()?;
    stripped.into_iter().min_by_key(|v| v.constant)
}

/// The single variable of a placeholder form.
fn placeholder_var(a: &Affine) -> Var {
    a.terms.keys().next().copied().unwrap_or(Var::Uniform(u32::MAX))
}

fn is_float(ty: Option<&str>) -> bool {
    matches!(ty, Some("f32" | "f64" | "f16" | "bf16" | "f16x2" | "bf16x2"))
}

/// Evaluates an expression's leaves against the launch and the supplied arguments; used
/// for trip counts.
pub fn eval_expr(e: &Expr, env: &Env<'_>, thread_average: bool) -> Option<f64> {
    e.eval(&|leaf| match leaf {
        Leaf::Param { index, .. } => env.args.get(&index).map(|v| *v as f64),
        Leaf::Special(SpecialReg::Ntid(d)) => Some(Env::dim(env.block, d) as f64),
        Leaf::Special(SpecialReg::Nctaid(d)) => Some(Env::dim(env.grid, d) as f64),
        // A per-thread trip count (a grid-stride loop starting at the thread's global
        // index): the average thread has the middle index.
        Leaf::Special(SpecialReg::Tid(d)) if thread_average => Some((Env::dim(env.block, d) - 1) as f64 / 2.0),
        Leaf::Special(SpecialReg::Ctaid(d)) if thread_average => Some((Env::dim(env.grid, d) - 1) as f64 / 2.0),
        Leaf::Special(SpecialReg::LaneId) if thread_average => Some(15.5),
        _ => None,
    })
}
