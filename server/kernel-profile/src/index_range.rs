//! The bytes a data-dependent address ranges over, where its index is bounded by how it
//! was computed: a histogram's `hist[in[i]]` with `in` of bytes indexes 256 counters, and
//! so do `hist[v & 255]`, `hist[v % 256]` and `hist[v >> 24]`, whatever the data.
//!
//! The address must be a table fixed for the whole launch (parameters and constants: the
//! same counters for every thread) plus data-dependent terms whose value ranges follow
//! from the PTX semantics of the instructions that made them (PTX ISA: `cvt` from an 8-
//! or 16-bit type keeps that type's range, `and` with a mask is at most the mask, `rem.u`
//! by `n` is below `n`, `shr.u32` by `k` below 2^(32-k) and `shr.s32` within ±2^(31-k),
//! `bfe.u` of `len` bits below 2^len, `min.u` with `n` at most `n`; a load of
//! `.u8`/`.s8`/`.u16`/`.s16` gives that type's range). Adding or subtracting a constant
//! moves the range, and a shift of a known range shifts its bounds, so that the signed
//! division nvcc writes for `hist[(c - 'a') / 4]` with `c` a `char` (`shr.s32` of the sign,
//! `shr.u32` by 30, `add`, `shr.s32` by 2) stays bounded. Anything else (a 32-bit loaded
//! value, a thread index, a loop counter) leaves the range unknown.
//!
//! Where the index depends on one loaded byte alone, its 256 values are run through the
//! arithmetic instead (exact: 64 counters for the division above, where the intervals
//! give 66), and through the branches that guard the access: `if (c >= 'a' && c <= 'z')`
//! leaves the 7 counters the letters reach. A branch on anything but the byte and
//! constants (the thread index, `i < n`) excludes nothing.

use ptx_ir::ir::{AddrBase, Function, InstrId, Operand, RegId};
use ptx_ir::{InstrClass, Space};

use crate::predicate::{self, Decoded, IntTy, Op};

/// What a register holds, as far as its range goes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    /// The same for every thread of the launch (a parameter, a constant, a table's base).
    Fixed,
    /// Data-dependent, within `lo..=hi`: the value itself when `exact`, else relative to a
    /// fixed part this analysis does not know (a parameter added to it), which keeps the
    /// span but not what a shift, a mask or a sign makes of the value.
    Range { lo: i64, hi: i64, exact: bool },
}

impl Value {
    fn exact(lo: i64, hi: i64) -> Value {
        Value::Range { lo, hi, exact: true }
    }
    /// The bounds when they are the value's own.
    fn bounds(self) -> Option<(i64, i64)> {
        match self {
            Value::Range { lo, hi, exact: true } => Some((lo, hi)),
            _ => None,
        }
    }
}

const MAX_DEPTH: u32 = 24;

/// The bytes the address of memory instruction `id` ranges over when it is a launch-wide
/// table indexed by a bounded data-dependent value: the span of its index times its scale,
/// plus the bytes one access moves. `None` when the address is not of that form.
pub fn data_span_bytes(func: &Function, id: InstrId) -> Option<u64> {
    let instr = func.instr(id)?;
    let addr = address_register(func, instr)?;
    let (lo, hi) = match enumerated(func, id, addr) {
        Some(bounds) => bounds,
        None => match reg(func, addr, 0)? {
            Value::Range { lo, hi, .. } if hi >= lo => (lo, hi),
            _ => return None,
        },
    };
    let span = u64::try_from(hi - lo).ok()?;
    Some(span.saturating_add(u64::from(instr.access_bytes().max(1))))
}

/// The kernel parameter a data-dependent address is based on: the one pointer parameter
/// its additions lead to through copies and `cvta` (`x + 4·col[k]`: `x`), the other terms
/// being the data-dependent index. `None` when no parameter or several do, or when the
/// address is built otherwise.
pub fn base_param(func: &Function, id: InstrId) -> Option<u32> {
    let instr = func.instr(id)?;
    let addr = address_register(func, instr)?;
    let mut budget = PARAM_WALK_BUDGET;
    param_of(func, addr, 0, &mut budget).flatten()
}

/// Definitions [`param_of`] visits at most for one address: an address is a handful of
/// additions; a chain of additions that reads each register twice would otherwise be
/// walked 2^depth times.
const PARAM_WALK_BUDGET: u32 = 256;

/// `Some(Some(i))` when register `r` is parameter `i` plus terms without a parameter,
/// `Some(None)` when no parameter enters it, `None` when it cannot be told (several
/// parameters, several definitions, a depth past [`MAX_DEPTH`], the walk's budget spent).
fn param_of(func: &Function, r: RegId, depth: u32, budget: &mut u32) -> Option<Option<u32>> {
    if depth > MAX_DEPTH || *budget == 0 {
        return None;
    }
    *budget -= 1;
    let [def] = func.defs_of(r) else { return None };
    let instr = func.instr(*def)?;
    let ops = func.operands_of(instr);
    let mut value = |op: Option<&Operand>| match op {
        Some(Operand::Reg(src)) => param_of(func, *src, depth + 1, budget),
        Some(Operand::Imm(_)) => Some(None),
        _ => None,
    };
    let mut of = |k: usize| value(ops.get(k));
    match predicate::decode(func, *def) {
        Decoded::Param { index, .. } => Some(Some(index)),
        Decoded::Copy => of(1),
        Decoded::Forwarded => value(func.forwarded_local(*def)),
        Decoded::Op { op: Op::Add, .. } => match (of(1), of(2)) {
            (Some(Some(p)), Some(None)) | (Some(None), Some(Some(p))) => Some(Some(p)),
            (Some(None), Some(None)) => Some(None),
            _ => None,
        },
        Decoded::Op { op: Op::Sub, .. } => match (of(1), of(2)) {
            (Some(p), Some(None)) => Some(p),
            _ => None,
        },
        // The index: loaded, scaled, widened; no parameter's address in it.
        Decoded::Data | Decoded::Op { .. } => Some(None),
        Decoded::Unsupported => None,
    }
}

/// The register a memory instruction's address is based on (`[%rd4]`, `[%rd4+8]`).
pub(crate) fn address_register(func: &Function, instr: &ptx_ir::ir::Instr) -> Option<RegId> {
    func.operands_of(instr).iter().find_map(|op| match op {
        Operand::Addr { base: AddrBase::Reg(r), .. } => Some(*r),
        _ => None,
    })
}

/// Whether global load `id` chases a pointer: its address is a value an earlier global
/// load read, itself or plus a constant (`p = *p`, `p = p->next`), through copies and
/// `cvta`, and otherwise only the kernel's parameters (the chase's start). A gather, whose
/// loaded value is an index scaled and added to a base (`x[col[j]]`), is not one.
pub fn is_pointer_chase(func: &Function, id: InstrId) -> bool {
    let Some(addr) = func.instr(id).and_then(|instr| address_register(func, instr)) else { return false };
    let mut seen = Vec::new();
    chases(func, addr, &mut seen, 0) == Some(true)
}

/// `Some(true)` when register `r` holds a loaded pointer (on some definition), `Some(false)`
/// when it holds only parameters, `None` when anything else enters it.
fn chases(func: &Function, r: RegId, seen: &mut Vec<RegId>, depth: u32) -> Option<bool> {
    if depth > MAX_DEPTH || func.register(r).and_then(|reg| reg.special).is_some() {
        return None;
    }
    if seen.contains(&r) {
        // A register redefined around a loop: its other definitions decide.
        return Some(false);
    }
    seen.push(r);
    let mut loaded = false;
    for def in func.defs_of(r) {
        let instr = func.instr(*def)?;
        let from = |op: Option<&Operand>, seen: &mut Vec<RegId>| match op {
            Some(Operand::Reg(src)) => chases(func, *src, seen, depth + 1),
            _ => None,
        };
        let this = match predicate::decode(func, *def) {
            Decoded::Data => match instr.class {
                InstrClass::Load(Space::Global | Space::Generic) if instr.access_bytes() == 8 => Some(true),
                _ => None,
            },
            Decoded::Param { .. } => Some(false),
            Decoded::Copy => from(func.operands_of(instr).get(1), seen),
            Decoded::Forwarded => from(func.forwarded_local(*def), seen),
            Decoded::Op { op: Op::Add, .. } => {
                let ops = func.operands_of(instr);
                match (ops.get(1), ops.get(2)) {
                    (Some(a @ Operand::Reg(_)), Some(Operand::Imm(_))) | (Some(Operand::Imm(_)), Some(a @ Operand::Reg(_))) => from(Some(a), seen),
                    _ => None,
                }
            }
            _ => None,
        }?;
        loaded |= this;
    }
    Some(loaded)
}

/// Where the address depends on data through one loaded byte alone (and on values fixed for
/// the launch, added to it), the least and greatest address over the byte's 256 values
/// that the branches guarding the access let through: each value is run through the
/// arithmetic and through the conditions of the branches the access lies behind, with
/// PTX's integer semantics (`predicate::apply`). `if (c >= 'a' && c <= 'z') hist[(c - 'a')
/// / 4]++` then spans the 7 counters the letters reach, not the 66 the arithmetic allows.
/// A condition that reads anything but the byte and constants (the thread index, `i < n`)
/// cannot be evaluated and excludes nothing.
fn enumerated(func: &Function, id: InstrId, addr: RegId) -> Option<(i64, i64)> {
    let mut loads = Vec::new();
    byte_loads(func, addr, &mut loads, 0)?;
    let [load] = loads[..] else { return None };
    let (lo, hi) = func.instr(load)?.ty().and_then(IntTy::of).filter(|t| t.bits() == 8).map(IntTy::range)?;
    // Each guard's outcome for every value of the byte, evaluated once; a guard is kept
    // only where every value evaluates it (and no fixed value enters it).
    let outcomes: Vec<Vec<bool>> = guards(func, id)
        .into_iter()
        .filter_map(|(p, want)| {
            (lo..=hi).map(|v| eval(func, p, load, v, 0).filter(|(_, fixed)| !fixed).map(|(x, _)| (x != 0) == want)).collect::<Option<Vec<bool>>>()
        })
        .collect();
    let mut bounds: Option<(i64, i64)> = None;
    for (i, v) in (lo..=hi).enumerate() {
        if !outcomes.iter().all(|o| o[i]) {
            continue;
        }
        let (a, _) = eval(func, addr, load, v, 0)?;
        bounds = Some(bounds.map_or((a, a), |(l, h)| (l.min(a), h.max(a))));
    }
    bounds
}

/// The loads of data an address depends on, each once; `None` when it depends on
/// something this analysis does not follow (a thread index, several definitions).
fn byte_loads(func: &Function, r: RegId, out: &mut Vec<InstrId>, depth: u32) -> Option<()> {
    if depth > MAX_DEPTH || func.register(r).and_then(|reg| reg.special).is_some() {
        return None;
    }
    let [def] = func.defs_of(r) else { return None };
    let instr = func.instr(*def)?;
    match predicate::decode(func, *def) {
        Decoded::Data if matches!(instr.class, InstrClass::Load(s) if s != Space::Param) => {
            if !out.contains(def) {
                out.push(*def);
            }
            Some(())
        }
        Decoded::Param { .. } => Some(()),
        Decoded::Forwarded => match func.forwarded_local(*def) {
            Some(Operand::Reg(r)) => byte_loads(func, *r, out, depth + 1),
            _ => Some(()),
        },
        Decoded::Copy | Decoded::Op { .. } => {
            for op in &func.operands_of(instr)[1..] {
                match op {
                    Operand::Reg(r) => byte_loads(func, *r, out, depth + 1)?,
                    Operand::Imm(_) | Operand::Symbol(_) => {}
                    _ => return None,
                }
            }
            Some(())
        }
        _ => None,
    }
}

/// The predicates under which the access runs, each with the value it must have: its own
/// guard, and the branch of every block that dominates it whose one edge alone leads to it.
fn guards(func: &Function, id: InstrId) -> Vec<(RegId, bool)> {
    let mut out = Vec::new();
    let Some(instr) = func.instr(id) else { return out };
    if let Some(g) = instr.guard {
        out.push((g.reg, !g.negated));
    }
    let at = instr.block;
    for (b, block) in func.blocks.iter().enumerate() {
        let b = b as u32;
        if b == at || !func.dominates(b, at) {
            continue;
        }
        let Some(term) = block.terminator().and_then(|t| func.instr(t)) else { continue };
        let (Some(g), Some(target)) = (term.guard, block.target) else { continue };
        if !term.is_branch() || block.succs.len() != 2 {
            continue;
        }
        let Some(&other) = block.succs.iter().find(|s| **s != target) else { continue };
        let leads = |s: u32| s == at || func.dominates(s, at);
        let taken = if leads(target) && !reaches(func, other, at, b) {
            true
        } else if leads(other) && !reaches(func, target, at, b) {
            false
        } else {
            continue;
        };
        out.push((g.reg, taken != g.negated));
    }
    out
}

/// Whether `to` can be reached from `from` without passing through `avoid`.
fn reaches(func: &Function, from: u32, to: u32, avoid: u32) -> bool {
    let mut seen = vec![false; func.blocks.len()];
    let mut stack = vec![from];
    while let Some(b) = stack.pop() {
        if b == to {
            return true;
        }
        if b == avoid || std::mem::replace(&mut seen[b as usize], true) {
            continue;
        }
        stack.extend(func.blocks[b as usize].succs.iter().copied());
    }
    false
}

/// The value of `r` when `load` reads `v`, with the launch's fixed values (parameters,
/// symbols) taken as 0; and whether one of those was met, which only an addition or a
/// subtraction may carry (anything else of a fixed value is not known here).
fn eval(func: &Function, r: RegId, load: InstrId, v: i64, depth: u32) -> Option<(i64, bool)> {
    if depth > MAX_DEPTH || func.register(r).and_then(|reg| reg.special).is_some() {
        return None;
    }
    let [def] = func.defs_of(r) else { return None };
    if *def == load {
        return Some((v, false));
    }
    let instr = func.instr(*def)?;
    let ops = func.operands_of(instr);
    let arg = |i: usize| -> Option<(i64, bool)> {
        match ops.get(i)? {
            Operand::Reg(r) => eval(func, *r, load, v, depth + 1),
            Operand::Imm(c) => Some((*c, false)),
            Operand::Symbol(_) => Some((0, true)),
            _ => None,
        }
    };
    match predicate::decode(func, *def) {
        Decoded::Param { .. } => Some((0, true)),
        Decoded::Copy => arg(1),
        Decoded::Forwarded => match func.forwarded_local(*def)? {
            Operand::Reg(r) => eval(func, *r, load, v, depth + 1),
            Operand::Imm(c) => Some((*c, false)),
            _ => None,
        },
        Decoded::Op { op, ty } => {
            // A `setp` writing two predicates (`p|q`) is not followed.
            if !matches!(ops.first(), Some(Operand::Reg(_))) {
                return None;
            }
            let n = predicate::arity(op);
            let mut vals = [0i64; 3];
            let mut fixed = false;
            for (i, slot) in vals.iter_mut().enumerate().take(n) {
                let (x, f) = arg(i + 1)?;
                *slot = x;
                fixed |= f;
            }
            if fixed && !matches!(op, Op::Add | Op::Sub) {
                return None;
            }
            Some((predicate::apply(op, ty, vals[0], vals[1], vals[2])?, fixed))
        }
        _ => None,
    }
}

/// The range of a register with one definition.
fn reg(func: &Function, r: RegId, depth: u32) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    if func.register(r).and_then(|reg| reg.special).is_some() {
        // %tid, %ctaid, ...: differ between threads, not data.
        return None;
    }
    match func.defs_of(r) {
        [one] => instr_value(func, *one, depth + 1),
        _ => None,
    }
}

fn operand(func: &Function, op: &Operand, depth: u32) -> Option<Value> {
    match op {
        Operand::Reg(r) => reg(func, *r, depth),
        Operand::Imm(_) | Operand::Symbol(_) => Some(Value::Fixed),
        _ => None,
    }
}

/// Whether every source operand (after the destination) is the same for every thread.
fn fixed_operands(func: &Function, ops: &[Operand], depth: u32) -> bool {
    ops.len() > 1 && ops[1..].iter().all(|op| operand(func, op, depth) == Some(Value::Fixed))
}

fn imm(op: Option<&Operand>) -> Option<i64> {
    match op {
        Some(Operand::Imm(v)) => Some(*v),
        _ => None,
    }
}

/// The range of an 8- or 16-bit integer type (`u8` → 0..=255), the only ones that bound
/// an index by themselves.
fn type_range(ty: &str) -> Option<(i64, i64)> {
    IntTy::of(ty).filter(|t| matches!(t.bits(), 8 | 16)).map(IntTy::range)
}

fn scale(v: Value, c: i64) -> Option<Value> {
    match v {
        Value::Fixed => Some(Value::Fixed),
        Value::Range { lo, hi, exact } => {
            let (a, b) = (lo.checked_mul(c)?, hi.checked_mul(c)?);
            Some(Value::Range { lo: a.min(b), hi: a.max(b), exact })
        }
    }
}

/// `a + sign·b`, where either may be an immediate (an exact shift of the other's range) or
/// another fixed value (the range keeps its span, relative to it).
fn sum(func: &Function, a: &Operand, b: &Operand, sign: i64, depth: u32) -> Option<Value> {
    let (va, vb) = (operand(func, a, depth)?, operand(func, b, depth)?);
    Some(match (va, vb) {
        (Value::Fixed, Value::Fixed) => Value::Fixed,
        (Value::Range { lo, hi, exact }, Value::Fixed) => match imm(Some(b)) {
            Some(c) => Value::Range { lo: lo.checked_add(sign.checked_mul(c)?)?, hi: hi.checked_add(sign.checked_mul(c)?)?, exact },
            None => Value::Range { lo, hi, exact: false },
        },
        (Value::Fixed, Value::Range { lo, hi, exact }) => {
            let (lo, hi) = if sign < 0 { (hi.checked_neg()?, lo.checked_neg()?) } else { (lo, hi) };
            match imm(Some(a)) {
                Some(c) => Value::Range { lo: lo.checked_add(c)?, hi: hi.checked_add(c)?, exact },
                None => Value::Range { lo, hi, exact: false },
            }
        }
        (Value::Range { lo: a, hi: b, exact: x }, Value::Range { lo: c, hi: d, exact: y }) => {
            let (c, d) = if sign < 0 { (d.checked_neg()?, c.checked_neg()?) } else { (c, d) };
            Value::Range { lo: a.checked_add(c)?, hi: b.checked_add(d)?, exact: x && y }
        }
    })
}

fn instr_value(func: &Function, id: InstrId, depth: u32) -> Option<Value> {
    let instr = func.instr(id)?;
    let ops = func.operands_of(instr);
    let src = |i: usize| ops.get(i);
    let unsigned = instr.ty().is_some_and(|t| t.starts_with('u') || t.starts_with('b'));
    let bits = instr.ty().and_then(IntTy::of).map_or(32, |t| i64::from(t.bits()));
    match (instr.base(), instr.class) {
        ("ld", InstrClass::Load(Space::Param)) => Some(Value::Fixed),
        ("ld" | "ldu", InstrClass::Load(_)) => {
            let (lo, hi) = type_range(instr.ty()?)?;
            Some(Value::exact(lo, hi))
        }
        ("mov" | "cvta", _) => operand(func, src(1)?, depth),
        ("cvt", _) => {
            // `cvt.dst.src`: the source type's range bounds the value (an 8-bit source
            // holds 0..=255 whatever the register), or the operand's own range where that
            // is known and fits it; a wider source passes the operand's range.
            let v = operand(func, src(1)?, depth);
            match instr.ty().and_then(type_range) {
                Some((lo, hi)) => match v.and_then(Value::bounds) {
                    Some((a, b)) if a >= lo && b <= hi => Some(Value::exact(a, b)),
                    _ => Some(Value::exact(lo, hi)),
                },
                None => v,
            }
        }
        ("add", _) => sum(func, src(1)?, src(2)?, 1, depth),
        ("sub", _) => sum(func, src(1)?, src(2)?, -1, depth),
        ("mul", _) if instr.has_modifier("wide") || instr.has_modifier("lo") => {
            match (imm(src(1)), imm(src(2))) {
                (_, Some(c)) => scale(operand(func, src(1)?, depth)?, c),
                (Some(c), _) => scale(operand(func, src(2)?, depth)?, c),
                _ => None,
            }
        }
        ("shl", _) => {
            let k = imm(src(2)).filter(|k| (0..32).contains(k))?;
            scale(operand(func, src(1)?, depth)?, 1 << k)
        }
        // A bound on a value the same for every thread leaves it so.
        _ if matches!(instr.base(), "and" | "rem" | "min" | "shr") && fixed_operands(func, ops, depth) => Some(Value::Fixed),
        ("and", _) => {
            let mask = imm(src(2)).or(imm(src(1))).filter(|m| *m >= 0)?;
            let own = operand(func, src(1)?, depth).and_then(Value::bounds).filter(|(lo, _)| *lo >= 0);
            Some(Value::exact(0, own.map_or(mask, |(_, hi)| hi.min(mask))))
        }
        ("rem", _) if unsigned => {
            let n = imm(src(2)).filter(|n| *n > 0)?;
            Some(Value::exact(0, n - 1))
        }
        ("min", _) if unsigned => {
            let n = imm(src(2)).or(imm(src(1))).filter(|n| *n >= 0)?;
            Some(Value::exact(0, n))
        }
        ("shr", _) => {
            // Logical (`.u`, `.b`) or arithmetic (`.s`) shift right by a constant: monotone,
            // so the bounds shift with it where the operand's are known (a negative value
            // shifted logically is a large unsigned one); whatever the operand, k bits fewer
            // are left (PTX ISA, `shr`).
            let k = imm(src(2)).filter(|k| (0..64).contains(k))?;
            let own = operand(func, src(1)?, depth).and_then(Value::bounds);
            match own {
                Some((lo, hi)) if !unsigned || lo >= 0 => Some(Value::exact(lo >> k, hi >> k)),
                _ if bits - k < 63 && unsigned => Some(Value::exact(0, (1i64 << (bits - k)) - 1)),
                _ if bits - k < 63 && bits > k => Some(Value::exact(-(1i64 << (bits - k - 1)), (1i64 << (bits - k - 1)) - 1)),
                _ => None,
            }
        }
        ("bfe", _) if unsigned => {
            let len = imm(src(3)).filter(|l| (0..63).contains(l))?;
            Some(Value::exact(0, (1i64 << len) - 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::data_span_bytes;
    use ptx_ir::InstrClass;

    /// `f` of the first atomic of `body`, wrapped in a kernel with parameters `p0` (u64)
    /// and `p1` (u32).
    fn of_first_atomic<T>(body: &str, f: impl Fn(&ptx_ir::Function, u32) -> Option<T>) -> Option<T> {
        let text = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p0, .param .u32 p1)\n{{\n.reg .pred %p<4>;\n.reg .b16 %rs<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<128>;\nld.param.u64 %rd1, [p0];\nld.param.u32 %r1, [p1];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r2, %tid.x;\n{body}\nret;\n}}\n"
        );
        let (module, errors) = ptx_ir::parse_and_lower(&text);
        assert!(errors.is_empty(), "{errors:?}");
        let func = &module.functions[0];
        let id = func.instrs.iter().position(|i| matches!(i.class, InstrClass::Atomic(_)))?;
        f(func, id as u32)
    }

    /// The span of the first atomic of `body` (the kernel of [`of_first_atomic`]).
    fn span(body: &str) -> Option<u64> {
        of_first_atomic(body, data_span_bytes)
    }

    #[test]
    fn a_byte_index_spans_256_counters() {
        // hist[in[i]] with `in` of bytes (nvcc's PTX for the H100 histogram).
        let body = "mul.wide.u32 %rd3, %r2, 1;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.nc.u8 %rs1, [%rd4];\ncvt.u32.u8 %r3, %rs1;\nmul.wide.u32 %rd5, %r3, 4;\nadd.s64 %rd6, %rd2, %rd5;\natom.global.add.u32 %r4, [%rd6], 1;";
        assert_eq!(span(body), Some(255 * 4 + 4));
    }

    #[test]
    fn masks_remainders_and_shifts_bound_the_index() {
        let load = "mul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.u32 %r3, [%rd4];\n";
        let atom = "mul.wide.u32 %rd5, %r5, 4;\nadd.s64 %rd6, %rd2, %rd5;\natom.global.add.u32 %r6, [%rd6], 1;";
        assert_eq!(span(&format!("{load}and.b32 %r5, %r3, 63;\n{atom}")), Some(63 * 4 + 4));
        assert_eq!(span(&format!("{load}rem.u32 %r5, %r3, 100;\n{atom}")), Some(99 * 4 + 4));
        assert_eq!(span(&format!("{load}shr.u32 %r5, %r3, 24;\n{atom}")), Some(255 * 4 + 4));
        assert_eq!(span(&format!("{load}bfe.u32 %r5, %r3, 8, 4;\n{atom}")), Some(15 * 4 + 4));
        assert_eq!(span(&format!("{load}min.u32 %r5, %r3, 9;\n{atom}")), Some(9 * 4 + 4));
    }

    #[test]
    fn a_signed_division_of_a_shifted_char_stays_bounded() {
        // hist[(data[i] - 'a') / 4] with `data` of chars (nvcc 13.5 sm_86 for the textbook
        // letter histogram): sign-extend the byte (-128..127), subtract 97 (-225..30), add
        // 3 when negative (the sign shifted right logically by 30: 0 or 3), shift right
        // arithmetically by 2. Run over the byte's 256 values: -56..7 (C's division
        // truncates), 64 counters of 4 bytes.
        let chain = "cvt.u32.u16 %r6, %rs1;\ncvt.s32.s8 %r7, %r6;\nadd.s32 %r8, %r7, -97;\nshr.s32 %r9, %r8, 31;\nshr.u32 %r10, %r9, 30;\nadd.s32 %r11, %r8, %r10;\nshr.s32 %r12, %r11, 2;\nmul.wide.s32 %rd7, %r12, 4;\nadd.s64 %rd8, %rd2, %rd7;\natom.global.add.u32 %r13, [%rd8], 1;";
        let body = format!("mul.wide.u32 %rd3, %r2, 1;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.u8 %rs1, [%rd4];\n{chain}");
        assert_eq!(span(&body), Some(63 * 4 + 4));
        // From a 16-bit load (not run value by value) the ranges bound it as intervals:
        // the sign and the adjustment are taken apart, -57..8.
        assert_eq!(span(&body.replace("ld.global.u8", "ld.global.u16")), Some(65 * 4 + 4));
        // A constant subtracted moves the range; a parameter added keeps only its span,
        // and what a shift then makes of it is its own bound.
        let load = "mul.wide.u32 %rd3, %r2, 1;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.u8 %rs1, [%rd4];\ncvt.u32.u8 %r3, %rs1;\n";
        let atom = "mul.wide.u32 %rd5, %r5, 4;\nadd.s64 %rd6, %rd2, %rd5;\natom.global.add.u32 %r6, [%rd6], 1;";
        let signed_atom = atom.replace("mul.wide.u32", "mul.wide.s32");
        assert_eq!(span(&format!("{load}sub.s32 %r4, %r3, 16;\nshr.s32 %r5, %r4, 4;\n{signed_atom}")), Some(15 * 4 + 4));
        assert_eq!(span(&format!("{load}add.s32 %r4, %r3, %r1;\nshr.u32 %r5, %r4, 24;\n{atom}")), Some(255 * 4 + 4));
    }

    #[test]
    fn the_branch_that_guards_the_atomic_narrows_the_counters() {
        // The textbook letter histogram as nvcc 13.5 writes it for sm_86: the atomic runs
        // only for 'a' <= c <= 'z' (`(c - 97) & 255 > 25` branches around it), so of the 66
        // counters the arithmetic allows, the 7 the letters reach (bytes 0..24).
        let body = "mul.wide.u32 %rd3, %r2, 1;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.u8 %rs1, [%rd4];\nadd.s16 %rs2, %rs1, -97;\nand.b16 %rs3, %rs2, 255;\nsetp.gt.u16 %p2, %rs3, 25;\n@%p2 bra $L_done;\ncvt.u32.u16 %r6, %rs1;\ncvt.s32.s8 %r7, %r6;\nadd.s32 %r8, %r7, -97;\nshr.s32 %r9, %r8, 31;\nshr.u32 %r10, %r9, 30;\nadd.s32 %r11, %r8, %r10;\nshr.s32 %r12, %r11, 2;\nmul.wide.s32 %rd7, %r12, 4;\nadd.s64 %rd8, %rd2, %rd7;\natom.global.add.u32 %r13, [%rd8], 1;\n$L_done:";
        assert_eq!(span(body), Some(6 * 4 + 4));
        // The same test taken the other way (`@!%p` around a `<=` test) reads alike; a guard
        // on the thread index excludes nothing.
        let negated = body.replace("setp.gt.u16 %p2, %rs3, 25;\n@%p2 bra", "setp.le.u16 %p2, %rs3, 25;\n@!%p2 bra");
        assert_eq!(span(&negated), Some(6 * 4 + 4));
        let by_thread = body.replace("setp.gt.u16 %p2, %rs3, 25;", "setp.gt.u32 %p2, %r2, 25;");
        assert_eq!(span(&by_thread), Some(63 * 4 + 4));
    }

    #[test]
    fn an_unbounded_or_thread_dependent_index_has_no_span() {
        // A full 32-bit loaded value: any counter of 4 GiB.
        let unbounded = "mul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.u32 %r3, [%rd4];\nmul.wide.u32 %rd5, %r3, 4;\nadd.s64 %rd6, %rd2, %rd5;\natom.global.add.u32 %r6, [%rd6], 1;";
        assert_eq!(span(unbounded), None);
        // A per-thread table (the thread index in the address) is not one launch-wide table.
        let per_thread = "mul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.u8 %rs1, [%rd4];\ncvt.u32.u8 %r3, %rs1;\nadd.s32 %r5, %r3, %r2;\nmul.wide.u32 %rd5, %r5, 4;\nadd.s64 %rd6, %rd2, %rd5;\natom.global.add.u32 %r6, [%rd6], 1;";
        assert_eq!(span(per_thread), None);
        // A mask on a parameter is not data: the address is one counter.
        let masked_param = "and.b32 %r5, %r1, 255;\nmul.wide.u32 %rd5, %r5, 4;\nadd.s64 %rd6, %rd2, %rd5;\natom.global.add.u32 %r6, [%rd6], 1;";
        assert_eq!(span(masked_param), None);
        // An affine address (no data in it) is not data-dependent.
        let affine = "mul.wide.u32 %rd5, %r2, 4;\nadd.s64 %rd6, %rd2, %rd5;\natom.global.add.u32 %r6, [%rd6], 1;";
        assert_eq!(span(affine), None);
    }

    /// The first atomic's base parameter (the kernel of [`of_first_atomic`]).
    fn base(body: &str) -> Option<u32> {
        of_first_atomic(body, super::base_param)
    }

    #[test]
    fn a_data_indexed_address_names_its_base_parameter() {
        let load = "mul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.u32 %r3, [%rd4];\n";
        // bins[in[i]]: the pointer parameter p0 (index 0) plus a scaled loaded index.
        assert_eq!(base(&format!("{load}mul.wide.u32 %rd5, %r3, 4;\nadd.s64 %rd6, %rd2, %rd5;\natom.global.add.u32 %r6, [%rd6], 1;")), Some(0));
        // An integer parameter added is an offset from it.
        assert_eq!(base("cvt.u64.u32 %rd8, %r1;\nadd.s64 %rd9, %rd2, %rd8;\natom.global.add.u32 %r6, [%rd9], 1;"), Some(0));
        // A loaded pointer (no parameter) and a sum of two pointers: none.
        assert_eq!(base(&format!("{load}ld.global.u64 %rd7, [%rd4];\natom.global.add.u32 %r6, [%rd7], 1;")), None);
        assert_eq!(base("add.s64 %rd9, %rd2, %rd2;\natom.global.add.u32 %r6, [%rd9], 1;"), None);
        // A chain of 60 additions that each read the previous sum twice is walked within
        // a budget, not 2^60 times.
        let mut chain = String::from("ld.global.u64 %rd10, [%rd2];\n");
        for k in 10..70 {
            chain.push_str(&format!("add.s64 %rd{}, %rd{k}, %rd{k};\n", k + 1));
        }
        chain.push_str("atom.global.add.u32 %r6, [%rd70], 1;");
        assert_eq!(base(&chain), None);
    }
}
