//! Symbolic integer expressions and loop trip counts.
//!
//! A trip count is either a constant, a symbolic expression over kernel parameters and
//! launch-configuration registers (`%ntid.x`, `%nctaid.x`, ...), or unknown. The expression
//! is kept as a tree ([`Expr`]) so the profile can evaluate it once it knows the argument
//! values and the launch configuration, and as text for people (`n`, `ceil((n - tid) /
//! ntid)`, `N / 16`: [`Expr::simplified`]).

use std::fmt;

use crate::ir::SpecialReg;

/// A binary operator of [`Expr`]. Integer semantics: `Div` truncates toward zero like PTX
/// `div.s32`, `CeilDiv` rounds up (used only in trip-count formulas).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    CeilDiv,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
}

/// A symbolic integer value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Expr {
    Const(i64),
    /// A kernel (or device function) parameter: its position and its PTX name.
    Param {
        index: u32,
        name: String,
    },
    Special(SpecialReg),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    /// `floor(log2(x))` for `x >= 1` (trip counts of loops that halve a counter).
    FloorLog2(Box<Expr>),
    /// `ceil(log2(x))` for `x >= 1` (trip counts of loops that double a counter).
    CeilLog2(Box<Expr>),
}

/// A leaf of an expression, handed to the environment of [`Expr::eval`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf<'a> {
    Param { index: u32, name: &'a str },
    Special(SpecialReg),
}

/// Expressions larger than this are abandoned (treated as unknown): they come from long
/// def-use chains that no counted loop needs, and would only slow lowering down.
pub const MAX_EXPR_NODES: usize = 64;

impl Expr {
    /// `a op b` with constant folding and the identities `x+0`, `x-0`, `x*1`, `x*0`.
    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        if let (Expr::Const(x), Expr::Const(y)) = (&a, &b)
            && let Some(v) = fold(op, *x, *y)
        {
            return Expr::Const(v);
        }
        match (op, &a, &b) {
            (BinOp::Add | BinOp::Sub | BinOp::Shl | BinOp::Shr, _, Expr::Const(0)) => a,
            (BinOp::Add, Expr::Const(0), _) => b,
            (BinOp::Mul | BinOp::Div, _, Expr::Const(1)) => a,
            (BinOp::Mul, Expr::Const(1), _) => b,
            (BinOp::Mul, Expr::Const(0), _) | (BinOp::Mul, _, Expr::Const(0)) => Expr::Const(0),
            _ => Expr::Bin(op, Box::new(a), Box::new(b)),
        }
    }

    /// `a op b` kept literally (no folding), for formulas meant to be read.
    pub fn raw(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }

    /// `-a`, folding constants and double negation; `-(x - y)` is `y - x`.
    pub fn negated(a: Expr) -> Expr {
        match a {
            Expr::Const(v) => Expr::Const(v.wrapping_neg()),
            Expr::Neg(inner) => *inner,
            Expr::Bin(BinOp::Sub, x, y) => Expr::Bin(BinOp::Sub, y, x),
            other => Expr::Neg(Box::new(other)),
        }
    }

    pub fn as_const(&self) -> Option<i64> {
        match self {
            Expr::Const(v) => Some(*v),
            _ => None,
        }
    }

    /// Number of nodes in the tree.
    pub fn size(&self) -> usize {
        match self {
            Expr::Const(_) | Expr::Param { .. } | Expr::Special(_) => 1,
            Expr::Bin(_, a, b) => 1 + a.size() + b.size(),
            Expr::Neg(a) | Expr::FloorLog2(a) | Expr::CeilLog2(a) => 1 + a.size(),
        }
    }

    /// Calls `f` on every leaf.
    pub fn visit_leaves<'a>(&'a self, f: &mut dyn FnMut(Leaf<'a>)) {
        match self {
            Expr::Const(_) => {}
            Expr::Param { index, name } => f(Leaf::Param {
                index: *index,
                name,
            }),
            Expr::Special(s) => f(Leaf::Special(*s)),
            Expr::Bin(_, a, b) => {
                a.visit_leaves(f);
                b.visit_leaves(f);
            }
            Expr::Neg(a) | Expr::FloorLog2(a) | Expr::CeilLog2(a) => a.visit_leaves(f),
        }
    }

    /// Evaluates with leaf values from `env`; `None` when a leaf is missing or an
    /// operation is undefined (division by zero). Bitwise operations work on the values
    /// rounded to integers.
    pub fn eval(&self, env: &dyn Fn(Leaf<'_>) -> Option<f64>) -> Option<f64> {
        Some(match self {
            Expr::Const(v) => *v as f64,
            Expr::Param { index, name } => env(Leaf::Param {
                index: *index,
                name,
            })?,
            Expr::Special(s) => env(Leaf::Special(*s))?,
            Expr::Neg(a) => -a.eval(env)?,
            Expr::FloorLog2(a) => {
                let x = a.eval(env)?.floor();
                if x < 1.0 {
                    return None;
                }
                x.log2().floor()
            }
            Expr::CeilLog2(a) => {
                let x = a.eval(env)?.ceil();
                if x < 1.0 {
                    return None;
                }
                x.log2().ceil()
            }
            Expr::Bin(op, a, b) => {
                let (x, y) = (a.eval(env)?, b.eval(env)?);
                let (ix, iy) = (x.round() as i64, y.round() as i64);
                match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div if y != 0.0 => (x / y).trunc(),
                    BinOp::CeilDiv if y != 0.0 => (x / y).ceil(),
                    BinOp::Rem if iy != 0 => (ix % iy) as f64,
                    BinOp::Div | BinOp::CeilDiv | BinOp::Rem => return None,
                    BinOp::And => (ix & iy) as f64,
                    BinOp::Or => (ix | iy) as f64,
                    BinOp::Xor => (ix ^ iy) as f64,
                    BinOp::Shl => x * 2f64.powi(iy.clamp(0, 63) as i32),
                    BinOp::Shr => (ix >> iy.clamp(0, 63)) as f64,
                    BinOp::Min => x.min(y),
                    BinOp::Max => x.max(y),
                }
            }
        })
    }

    /// Renders with parameter names chosen by `name_of(index, ptx_name)`, in the
    /// [`simplified`](Expr::simplified) form.
    pub fn render(&self, name_of: &dyn Fn(u32, &str) -> String) -> String {
        let mut out = String::new();
        self.simplified().render_into(&mut out, name_of, true);
        out
    }

    /// The same value in the form a person would write it: the trip-count formula's
    /// `x - 0` and `ceil(x / 1)` dropped, `ceil((d * x) / d)` as `x`, and the compiler's
    /// signed division by a power of two, `(x + ((x >> 31) >> (32 - k))) >> k` (and its
    /// 64-bit form with 63 and 64), written as `x / 2^k`. That idiom is how nvcc, NVRTC
    /// and LLVM lower `x / 2^k` for a signed `x`: adding `2^k - 1` to a negative `x`
    /// before the arithmetic shift makes it round toward zero, as C++ division does (C++
    /// [expr.mul]/4; PTX ISA 9.x, "Integer Arithmetic Instructions: div": `div.s32`
    /// truncates). Evaluation is unchanged: this is for display.
    pub fn simplified(&self) -> Expr {
        match self {
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.simplified(), b.simplified());
                if let Some(e) = signed_pow2_div(*op, &a, &b) {
                    return e;
                }
                match (op, &a, &b) {
                    (BinOp::CeilDiv, _, Expr::Const(1)) => a,
                    (BinOp::CeilDiv, Expr::Bin(BinOp::Mul, x, y), d) if **x == *d && *d != Expr::Const(0) => (**y).clone(),
                    (BinOp::CeilDiv, Expr::Bin(BinOp::Mul, x, y), d) if **y == *d && *d != Expr::Const(0) => (**x).clone(),
                    _ => Expr::bin(*op, a, b),
                }
            }
            Expr::Neg(a) => Expr::negated(a.simplified()),
            Expr::FloorLog2(a) => Expr::FloorLog2(Box::new(a.simplified())),
            Expr::CeilLog2(a) => Expr::CeilLog2(Box::new(a.simplified())),
            Expr::Const(_) | Expr::Param { .. } | Expr::Special(_) => self.clone(),
        }
    }

    fn render_into(&self, out: &mut String, name_of: &dyn Fn(u32, &str) -> String, top: bool) {
        use std::fmt::Write;
        match self {
            Expr::Const(v) => {
                let _ = write!(out, "{v}");
            }
            Expr::Param { index, name } => out.push_str(&name_of(*index, name)),
            Expr::Special(s) => out.push_str(s.name()),
            Expr::Neg(a) => {
                out.push('-');
                a.render_into(out, name_of, false);
            }
            Expr::FloorLog2(a) | Expr::CeilLog2(a) => {
                out.push_str(if matches!(self, Expr::FloorLog2(_)) {
                    "floor"
                } else {
                    "ceil"
                });
                out.push_str("(log2(");
                a.render_into(out, name_of, true);
                out.push_str("))");
            }
            Expr::Bin(op, a, b) => {
                let func = match op {
                    BinOp::CeilDiv => Some("ceil"),
                    BinOp::Min => Some("min"),
                    BinOp::Max => Some("max"),
                    _ => None,
                };
                if let Some(func) = func {
                    out.push_str(func);
                    out.push('(');
                    if *op == BinOp::CeilDiv {
                        a.render_into(out, name_of, false);
                        out.push_str(" / ");
                    } else {
                        a.render_into(out, name_of, true);
                        out.push_str(", ");
                    }
                    b.render_into(out, name_of, false);
                    out.push(')');
                    return;
                }
                let sym = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::Div => "/",
                    BinOp::Rem => "%",
                    BinOp::And => "&",
                    BinOp::Or => "|",
                    BinOp::Xor => "^",
                    BinOp::Shl => "<<",
                    BinOp::Shr => ">>",
                    BinOp::CeilDiv | BinOp::Min | BinOp::Max => "?",
                };
                if !top {
                    out.push('(');
                }
                a.render_into(out, name_of, false);
                let _ = write!(out, " {sym} ");
                b.render_into(out, name_of, false);
                if !top {
                    out.push(')');
                }
            }
        }
    }
}

/// The default display name of a parameter: `param_2` for nvcc's `_Z..._param_2`, the PTX
/// name otherwise. Source-level names (`n`) are not in PTX without `-G`; callers that know
/// them (from the `.cu` signature) use [`Expr::render`] or [`TripCount::render_with`].
pub fn short_param_name(ptx_name: &str) -> String {
    match ptx_name.rfind("_param_") {
        Some(pos) => ptx_name[pos + 1..].to_string(),
        None => ptx_name.to_string(),
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&|_, name| short_param_name(name)))
    }
}

/// `x / 2^k` when `op(a, b)` is `(x + ((x >> (w - 1)) >> (w - k))) >> k` for a width `w`
/// of 32 or 64 bits (the operands of the addition in either order); see
/// [`Expr::simplified`].
fn signed_pow2_div(op: BinOp, a: &Expr, b: &Expr) -> Option<Expr> {
    let (BinOp::Shr, Expr::Bin(BinOp::Add, p, q), Expr::Const(k)) = (op, a, b) else {
        return None;
    };
    // `(x >> (w - 1)) >> (w - k)`: the sign of x, as `2^k - 1` when negative.
    let is_bias = |t: &Expr, x: &Expr| {
        let Expr::Bin(BinOp::Shr, sign, c) = t else { return false };
        let Expr::Bin(BinOp::Shr, y, w1) = &**sign else { return false };
        match (c.as_const(), w1.as_const()) {
            (Some(c), Some(w1)) => **y == *x && (w1 == 31 || w1 == 63) && c.checked_add(*k) == Some(w1 + 1),
            _ => false,
        }
    };
    let x = if is_bias(q, p) {
        p
    } else if is_bias(p, q) {
        q
    } else {
        return None;
    };
    (1..=62).contains(k).then(|| Expr::Bin(BinOp::Div, x.clone(), Box::new(Expr::Const(1i64 << k))))
}

fn fold(op: BinOp, x: i64, y: i64) -> Option<i64> {
    Some(match op {
        BinOp::Add => x.checked_add(y)?,
        BinOp::Sub => x.checked_sub(y)?,
        BinOp::Mul => x.checked_mul(y)?,
        BinOp::Div => x.checked_div(y)?,
        BinOp::CeilDiv => {
            ceil_div(i128::from(x), i128::from(y)).and_then(|v| i64::try_from(v).ok())?
        }
        BinOp::Rem => x.checked_rem(y)?,
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::Shl => x.checked_shl(u32::try_from(y).ok()?)?,
        BinOp::Shr => x.checked_shr(u32::try_from(y).ok()?)?,
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
    })
}

/// `ceil(a / b)` for integers of any sign; `None` when `b == 0`.
pub fn ceil_div(a: i128, b: i128) -> Option<i128> {
    if b == 0 {
        return None;
    }
    let q = a / b;
    let r = a % b;
    Some(if r != 0 && ((r > 0) == (b > 0)) {
        q + 1
    } else {
        q
    })
}

/// How many times a loop's header runs each time the loop is entered.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TripCount {
    Constant(u64),
    /// Depends on kernel parameters and/or the launch configuration.
    Symbolic {
        /// Readable form, parameters shown as `param_N` (see [`short_param_name`]).
        expr: String,
        /// PTX names of the parameters used, in order of first use.
        params: Vec<String>,
        /// Their positions in the parameter list.
        param_indices: Vec<u32>,
        /// Special registers used (`%ntid.x` for a grid-stride loop, `%tid.x` ...).
        launch: Vec<SpecialReg>,
        formula: Expr,
    },
    Unknown,
}

impl TripCount {
    /// Builds a trip count from a formula: constant when it folds to one.
    pub fn from_formula(formula: Expr) -> TripCount {
        if let Some(c) = eval_const(&formula) {
            return TripCount::Constant(c.max(1.0) as u64);
        }
        let mut params: Vec<(u32, String)> = Vec::new();
        let mut launch = Vec::new();
        formula.visit_leaves(&mut |leaf| match leaf {
            Leaf::Param { index, name } => {
                if !params.iter().any(|(i, _)| *i == index) {
                    params.push((index, name.to_string()));
                }
            }
            Leaf::Special(s) => {
                if !launch.contains(&s) {
                    launch.push(s);
                }
            }
        });
        TripCount::Symbolic {
            expr: formula.to_string(),
            param_indices: params.iter().map(|(i, _)| *i).collect(),
            params: params.into_iter().map(|(_, n)| n).collect(),
            launch,
            formula,
        }
    }

    pub fn constant(&self) -> Option<u64> {
        match self {
            TripCount::Constant(c) => Some(*c),
            _ => None,
        }
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, TripCount::Unknown)
    }

    /// Evaluates the count (at least 1: the header runs once per entry even when the
    /// formula says less, which happens only when the loop's guard would have skipped it).
    pub fn evaluate(&self, env: &dyn Fn(Leaf<'_>) -> Option<f64>) -> Option<f64> {
        match self {
            TripCount::Constant(c) => Some(*c as f64),
            TripCount::Symbolic { formula, .. } => formula.eval(env).map(|v| v.max(1.0)),
            TripCount::Unknown => None,
        }
    }

    /// The readable form with parameter names from `name_of(index)` (falling back to
    /// `param_N`).
    pub fn render_with(&self, name_of: &dyn Fn(u32) -> Option<String>) -> Option<String> {
        match self {
            TripCount::Constant(c) => Some(c.to_string()),
            TripCount::Symbolic { formula, .. } => Some(
                formula.render(&|idx, ptx| name_of(idx).unwrap_or_else(|| short_param_name(ptx))),
            ),
            TripCount::Unknown => None,
        }
    }
}

fn eval_const(e: &Expr) -> Option<f64> {
    e.eval(&|_| None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n() -> Expr {
        Expr::Param {
            index: 2,
            name: "_Z4vaddPfS_i_param_2".into(),
        }
    }

    #[test]
    fn renders_like_the_brief() {
        let f = Expr::raw(
            BinOp::CeilDiv,
            Expr::raw(BinOp::Sub, n(), Expr::Const(0)),
            Expr::Const(1),
        );
        // `ceil((n - 0) / 1)` as the formula is built; `n` as a person writes it.
        assert_eq!(f.to_string(), "param_2");
        assert_eq!(f.render(&|_, _| "n".into()), "n");
        let tc = TripCount::from_formula(f);
        let TripCount::Symbolic {
            params,
            param_indices,
            ..
        } = &tc
        else {
            panic!("expected symbolic, got {tc:?}")
        };
        assert_eq!(params, &["_Z4vaddPfS_i_param_2".to_string()]);
        assert_eq!(param_indices, &[2]);
        let env = |leaf: Leaf<'_>| match leaf {
            Leaf::Param { index: 2, .. } => Some(1000.0),
            _ => None,
        };
        assert_eq!(tc.evaluate(&env), Some(1000.0));
        assert_eq!(
            tc.render_with(&|_| Some("n".into())).as_deref(),
            Some("n")
        );
    }

    fn shr(a: Expr, k: i64) -> Expr {
        Expr::raw(BinOp::Shr, a, Expr::Const(k))
    }

    #[test]
    fn the_signed_division_idiom_reads_as_a_division() {
        // nvcc's `N / 16` for a signed N (matmul_tiled.cu): shr.s32 31, shr.u32 28,
        // add.s32, shr.s32 4; the trip count ceil(((that) - 0) / 1).
        let idiom = shr(Expr::raw(BinOp::Add, n(), shr(shr(n(), 31), 28)), 4);
        let tc = Expr::raw(BinOp::CeilDiv, Expr::raw(BinOp::Sub, idiom.clone(), Expr::Const(0)), Expr::Const(1));
        assert_eq!(tc.render(&|_, _| "N".into()), "N / 16");
        // The operands of the addition in the other order, and the 64-bit form.
        let swapped = shr(Expr::raw(BinOp::Add, shr(shr(n(), 31), 28), n()), 4);
        assert_eq!(swapped.to_string(), "param_2 / 16");
        let wide = shr(Expr::raw(BinOp::Add, n(), shr(shr(n(), 63), 61)), 3);
        assert_eq!(wide.to_string(), "param_2 / 8");
        // Not the idiom: shift counts that do not add up, or another operand.
        let off = shr(Expr::raw(BinOp::Add, n(), shr(shr(n(), 31), 27)), 4);
        assert_eq!(off.to_string(), "(param_2 + ((param_2 >> 31) >> 27)) >> 4");
        let other = Expr::Param { index: 1, name: "m".into() };
        let mixed = shr(Expr::raw(BinOp::Add, other, shr(shr(n(), 31), 28)), 4);
        assert_eq!(mixed.to_string(), "(m + ((param_2 >> 31) >> 28)) >> 4");
        // Display only: the formula still evaluates as built.
        let env = |leaf: Leaf<'_>| match leaf {
            Leaf::Param { index: 2, .. } => Some(1024.0),
            _ => None,
        };
        assert_eq!(tc.eval(&env), Some(64.0));
        assert_eq!(tc.simplified().eval(&env), Some(64.0));
    }

    #[test]
    fn trivial_steps_and_exact_ceilings_are_dropped() {
        let ceil = |a, b| Expr::raw(BinOp::CeilDiv, a, b);
        let sub = |a, b| Expr::raw(BinOp::Sub, a, b);
        let m = Expr::Param { index: 1, name: "m".into() };
        assert_eq!(ceil(sub(n(), m.clone()), Expr::Const(1)).to_string(), "param_2 - m");
        assert_eq!(ceil(sub(Expr::raw(BinOp::Add, m.clone(), Expr::Const(1)), Expr::Const(0)), Expr::Const(2)).to_string(), "ceil((m + 1) / 2)");
        assert_eq!(ceil(Expr::raw(BinOp::Mul, Expr::Const(4), n()), Expr::Const(4)).to_string(), "param_2");
        assert_eq!(ceil(Expr::raw(BinOp::Mul, n(), m.clone()), m.clone()).to_string(), "param_2");
        // A real ceiling stays.
        assert_eq!(ceil(sub(n(), Expr::Special(SpecialReg::Tid(crate::ir::Dim::X))), Expr::Special(SpecialReg::Ntid(crate::ir::Dim::X))).to_string(), "ceil((param_2 - %tid.x) / %ntid.x)");
    }

    #[test]
    fn folding_and_ceil_div() {
        assert_eq!(
            Expr::bin(BinOp::Add, Expr::Const(2), Expr::Const(3)),
            Expr::Const(5)
        );
        assert_eq!(Expr::bin(BinOp::Mul, n(), Expr::Const(1)), n());
        assert_eq!(ceil_div(100, 4), Some(25));
        assert_eq!(ceil_div(101, 4), Some(26));
        assert_eq!(ceil_div(-3, 2), Some(-1));
        assert_eq!(ceil_div(3, -2), Some(-1));
        assert_eq!(ceil_div(1, 0), None);
        let tc =
            TripCount::from_formula(Expr::raw(BinOp::CeilDiv, Expr::Const(100), Expr::Const(4)));
        assert_eq!(tc, TripCount::Constant(25));
    }
}
