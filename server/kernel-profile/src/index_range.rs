//! The bytes a data-dependent address ranges over, where its index is bounded by how it
//! was computed: a histogram's `hist[in[i]]` with `in` of bytes indexes 256 counters, and
//! so do `hist[v & 255]`, `hist[v % 256]` and `hist[v >> 24]`, whatever the data.
//!
//! The address must be a table fixed for the whole launch (parameters and constants: the
//! same counters for every thread) plus data-dependent terms whose value ranges follow
//! from the PTX semantics of the instructions that made them (PTX ISA: `cvt` from an 8-
//! or 16-bit type keeps that type's range, `and` with a mask is at most the mask, `rem.u`
//! by `n` is below `n`, `shr.u32` by `k` below 2^(32-k), `bfe.u` of `len` bits below
//! 2^len, `min.u` with `n` at most `n`; a load of `.u8`/`.s8`/`.u16`/`.s16` gives that
//! type's range). Anything else (a 32-bit loaded value, a thread index, a loop counter)
//! leaves the range unknown.

use ptx_ir::ir::{AddrBase, Function, InstrId, Operand, RegId};
use ptx_ir::{InstrClass, Space};

use crate::predicate::IntTy;

/// What a register holds, as far as its range goes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    /// The same for every thread of the launch (a parameter, a constant, a table's base).
    Fixed,
    /// Data-dependent, within `lo..=hi` (relative to the fixed part).
    Range { lo: i64, hi: i64 },
}

const MAX_DEPTH: u32 = 24;

/// The bytes the address of memory instruction `id` ranges over when it is a launch-wide
/// table indexed by a bounded data-dependent value: the span of its index times its scale,
/// plus the bytes one access moves. `None` when the address is not of that form.
pub fn data_span_bytes(func: &Function, id: InstrId) -> Option<u64> {
    let instr = func.instr(id)?;
    let addr = func.operands_of(instr).iter().find_map(|op| match op {
        Operand::Addr { base: AddrBase::Reg(r), .. } => Some(*r),
        _ => None,
    })?;
    match reg(func, addr, 0)? {
        Value::Range { lo, hi } if hi >= lo => {
            let span = u64::try_from(hi - lo).ok()?;
            Some(span.saturating_add(u64::from(instr.access_bytes().max(1))))
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
        Value::Range { lo, hi } => {
            let (a, b) = (lo.checked_mul(c)?, hi.checked_mul(c)?);
            Some(Value::Range { lo: a.min(b), hi: a.max(b) })
        }
    }
}

fn instr_value(func: &Function, id: InstrId, depth: u32) -> Option<Value> {
    let instr = func.instr(id)?;
    let ops = func.operands_of(instr);
    let src = |i: usize| ops.get(i);
    let unsigned = instr.ty().is_some_and(|t| t.starts_with('u') || t.starts_with('b'));
    match (instr.base(), instr.class) {
        ("ld", InstrClass::Load(Space::Param)) => Some(Value::Fixed),
        ("ld" | "ldu", InstrClass::Load(_)) => {
            let (lo, hi) = type_range(instr.ty()?)?;
            Some(Value::Range { lo, hi })
        }
        ("mov" | "cvta", _) => operand(func, src(1)?, depth),
        ("cvt", _) => {
            // `cvt.dst.src`: the source type's range bounds the value (an 8-bit source
            // holds 0..=255 whatever the register); a wider source passes its own.
            match instr.ty().and_then(type_range) {
                Some((lo, hi)) => Some(Value::Range { lo, hi }),
                None => operand(func, src(1)?, depth),
            }
        }
        ("add", _) => {
            let (a, b) = (operand(func, src(1)?, depth)?, operand(func, src(2)?, depth)?);
            Some(match (a, b) {
                (Value::Fixed, Value::Fixed) => Value::Fixed,
                (Value::Fixed, r) | (r, Value::Fixed) => r,
                (Value::Range { lo: a, hi: b }, Value::Range { lo: c, hi: d }) => {
                    Value::Range { lo: a.checked_add(c)?, hi: b.checked_add(d)? }
                }
            })
        }
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
        _ if matches!(instr.base(), "and" | "rem" | "min") && fixed_operands(func, ops, depth) => Some(Value::Fixed),
        ("and", _) => {
            let mask = imm(src(2)).or(imm(src(1))).filter(|m| *m >= 0)?;
            Some(Value::Range { lo: 0, hi: mask })
        }
        ("rem", _) if unsigned => {
            let n = imm(src(2)).filter(|n| *n > 0)?;
            Some(Value::Range { lo: 0, hi: n - 1 })
        }
        ("min", _) if unsigned => {
            let n = imm(src(2)).or(imm(src(1))).filter(|n| *n >= 0)?;
            Some(Value::Range { lo: 0, hi: n })
        }
        ("shr", _) if unsigned => {
            let k = imm(src(2)).filter(|k| (0..64).contains(k))?;
            let bits = instr.ty().and_then(IntTy::of).map_or(32, |t| i64::from(t.bits()));
            match operand(func, src(1)?, depth) {
                Some(Value::Range { lo, hi }) if lo >= 0 => Some(Value::Range { lo: lo >> k, hi: hi >> k }),
                Some(Value::Fixed) => Some(Value::Fixed),
                _ if bits - k < 63 => Some(Value::Range { lo: 0, hi: (1i64 << (bits - k)) - 1 }),
                _ => None,
            }
        }
        ("bfe", _) if unsigned => {
            let len = imm(src(3)).filter(|l| (0..63).contains(l))?;
            Some(Value::Range { lo: 0, hi: (1i64 << len) - 1 })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::data_span_bytes;
    use ptx_ir::InstrClass;

    /// The span of the first atomic of `body`, wrapped in a kernel with parameters
    /// `p0` (u64) and `p1` (u32).
    fn span(body: &str) -> Option<u64> {
        let text = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p0, .param .u32 p1)\n{{\n.reg .pred %p<4>;\n.reg .b16 %rs<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\nld.param.u64 %rd1, [p0];\nld.param.u32 %r1, [p1];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r2, %tid.x;\n{body}\nret;\n}}\n"
        );
        let (module, errors) = ptx_ir::parse_and_lower(&text);
        assert!(errors.is_empty(), "{errors:?}");
        let func = &module.functions[0];
        let id = func.instrs.iter().position(|i| matches!(i.class, InstrClass::Atomic(_)))?;
        data_span_bytes(func, id as u32)
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
}
