//! Store-to-load forwarding through a thread's local memory: the value a `ld.local` reads
//! from a fixed slot of the stack depot that one `st.local` alone writes
//! ([`Function::forwarded_local`]).
//!
//! nvcc keeps a `volatile` local variable in the local-memory depot and reads it back at
//! each use (`volatile int tid = threadIdx.x + MDIMC * threadIdx.y;` in CLBlast's `Xgemm`:
//! `st.volatile.local.u32 [%rd1], %r25` once, then `ld.volatile.local.u32 %r42, [%rd1]`
//! in the loop). Local memory is private to the thread (PTX ISA, "State Spaces", `.local`),
//! so when no other instruction can write the slot the load reads what the store wrote: an
//! index computed from it is the same thread-index expression as the stored one, and a
//! branch on it the same condition, not data. The load still executes (it is an access to
//! local memory); only its value is known.
//!
//! Computed once per function when it is lowered, so that every evaluator of values (the
//! affine address analysis, the per-lane evaluation, the control-flow simulation, the
//! index ranges) reads the same table. Conservative: every `st.local` of the function must
//! write a slot resolved statically (the depot symbol, or a register derived from it by
//! `mov` and `add` of constants, plus the address offset); a `cvta` from the local window
//! (a generic pointer that generic stores could write through) or a `call` (which may be
//! handed a local address) gives up; exactly one store must overlap the load's bytes, at
//! the same offset and width, and store an immediate or a register written once (so the
//! register holds the stored value wherever the load reads it).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::ir::{AddrBase, Function, InstrId, Operand, RegId};
use crate::{InstrClass, Space};

/// Definitions followed from an address register back to its root.
const MAX_CHAIN: usize = 16;

/// A byte range of local memory: the depot symbol (or the register the chain of `mov` and
/// constant `add`s starts from), an offset and a width.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Slot {
    root: Arc<str>,
    offset: i64,
    width: i64,
}

/// Where a slot starts: its root and offset (the key the stores are ordered by).
type SlotStart = (Arc<str>, i64);

/// Where `reg + offset` points: a fixed offset from a root, through `mov` and `add` of
/// immediates.
fn resolve(func: &Function, mut reg: RegId, mut offset: i64) -> Option<(Arc<str>, i64)> {
    for _ in 0..MAX_CHAIN {
        let id = func.unique_def(reg)?;
        let instr = func.instr(id)?;
        let ops = func.operands_of(instr);
        match (instr.base(), ops.get(1), ops.get(2)) {
            ("mov", Some(Operand::Symbol(s)), None) => return Some((s.clone(), offset)),
            ("mov", Some(Operand::Reg(r)), None) => reg = *r,
            ("add", Some(Operand::Reg(r)), Some(Operand::Imm(k))) | ("add", Some(Operand::Imm(k)), Some(Operand::Reg(r))) => {
                offset = offset.checked_add(*k)?;
                reg = *r;
            }
            _ => return None,
        }
    }
    None
}

/// The slot a local load or store accesses, if it is fixed.
fn slot(func: &Function, id: InstrId) -> Option<Slot> {
    let instr = func.instr(id)?;
    let width = i64::from(instr.access_bytes());
    if width == 0 {
        return None;
    }
    let (root, offset) = func.operands_of(instr).iter().find_map(|op| match op {
        Operand::Addr { base: AddrBase::Symbol(s), offset } => Some((s.clone(), *offset)),
        Operand::Addr { base: AddrBase::Reg(r), offset } => resolve(func, *r, *offset),
        _ => None,
    })?;
    Some(Slot { root, offset, width })
}

/// The forwarding table of `func` (module documentation): each forwarded `ld.local`, in
/// instruction order, with the operand its one store wrote. One pass over the
/// instructions, and one ordered lookup of the stores near each load.
pub(crate) fn forwards(func: &Function) -> Vec<(InstrId, Operand)> {
    let mut stores: BTreeMap<SlotStart, Vec<(InstrId, Slot)>> = BTreeMap::new();
    let mut loads: Vec<InstrId> = Vec::new();
    let mut widest = 0i64;
    for (i, instr) in func.instrs.iter().enumerate() {
        let id = i as InstrId;
        match (instr.base(), instr.class) {
            ("cvta", _) if instr.has_modifier("local") => return Vec::new(),
            ("call", _) => return Vec::new(),
            (_, InstrClass::Store(Space::Local)) => {
                let Some(s) = slot(func, id) else { return Vec::new() };
                // A vector store overlaps whatever it covers but forwards nothing.
                widest = widest.max(s.width);
                stores.entry((s.root.clone(), s.offset)).or_default().push((id, s));
            }
            ("ld", InstrClass::Load(Space::Local)) if instr.vector_width() == 1 => loads.push(id),
            _ => {}
        }
    }
    if stores.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for load in loads {
        let Some(want) = slot(func, load) else { continue };
        // Stores that may overlap start after `offset - widest` and before the load's end.
        let lo = (want.root.clone(), want.offset.saturating_sub(widest - 1));
        let hi = (want.root.clone(), want.offset.saturating_add(want.width));
        let mut overlapping = stores.range(lo..hi).flat_map(|(_, v)| v).filter(|(_, s)| s.root == want.root && s.offset < want.offset + want.width && want.offset < s.offset + s.width);
        let (Some((store, s)), None) = (overlapping.next(), overlapping.next()) else { continue };
        let Some(st) = func.instr(*store) else { continue };
        if *s != want || st.vector_width() != 1 {
            continue;
        }
        // `st.local [addr], value`: the value is the operand after the address; a register
        // written once, so that where the load reads it the register still holds the value
        // the store wrote.
        match func.operands_of(st).get(1) {
            Some(op @ Operand::Imm(_)) => out.push((load, op.clone())),
            Some(op @ Operand::Reg(r)) if func.unique_def(*r).is_some() => out.push((load, op.clone())),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(body: &str) -> Function {
        let src = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{{\n\
             .local .align 4 .b8 __local_depot0[8];\n.reg .b64 %SP;\n.reg .b64 %SPL;\n.reg .b32 %r<20>;\n.reg .b64 %rd<20>;\n\
             mov.u64 %SPL, __local_depot0;\n{body}\nret;\n}}\n"
        );
        let (module, errors) = crate::parse_and_lower(&src);
        assert!(errors.is_empty(), "{errors:?}");
        module.functions.into_iter().next().expect("one kernel")
    }

    fn load_of(func: &Function, reg: &str) -> InstrId {
        let r = func.reg_by_name(reg).expect("register");
        func.unique_def(r).expect("one definition")
    }

    fn forwarded(func: &Function, reg: &str) -> Option<Operand> {
        func.forwarded_local(load_of(func, reg)).cloned()
    }

    /// CLBlast's `volatile int tid`: stored once, read back in the loop.
    #[test]
    fn a_volatile_local_reads_back_what_was_stored() {
        let f = function(
            "add.u64 %rd1, %SPL, 0;\nmov.u32 %r1, %tid.x;\nst.volatile.local.u32 [%rd1], %r1;\nld.volatile.local.u32 %r2, [%rd1];\nld.volatile.local.u32 %r3, [%rd1+4];",
        );
        let r1 = f.reg_by_name("%r1").unwrap();
        assert_eq!(forwarded(&f, "%r2"), Some(Operand::Reg(r1)));
        // Nothing stored at offset 4.
        assert_eq!(forwarded(&f, "%r3"), None);
        assert_eq!(f.local_forwards.len(), 1);
    }

    /// Two stores to the slot, a store at an address that is not fixed, or the depot made a
    /// generic pointer: the loaded value is not known.
    #[test]
    fn other_writers_keep_the_load_unknown() {
        let two = function("add.u64 %rd1, %SPL, 0;\nst.local.u32 [%rd1], 1;\nst.local.u32 [%rd1], 2;\nld.local.u32 %r2, [%rd1];");
        assert_eq!(forwarded(&two, "%r2"), None);
        let dynamic = function(
            "add.u64 %rd1, %SPL, 0;\nst.local.u32 [%rd1], 7;\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.u64 %rd3, %SPL, %rd2;\nst.local.u32 [%rd3], 1;\nld.local.u32 %r2, [%rd1];",
        );
        assert_eq!(forwarded(&dynamic, "%r2"), None);
        let generic = function("add.u64 %rd1, %SPL, 0;\nst.local.u32 [%rd1], 7;\ncvta.local.u64 %SP, %SPL;\nld.local.u32 %r2, [%rd1];");
        assert_eq!(forwarded(&generic, "%r2"), None);
        let partial = function("add.u64 %rd1, %SPL, 0;\nst.local.u8 [%rd1+1], 7;\nld.local.u32 %r2, [%rd1];");
        assert_eq!(forwarded(&partial, "%r2"), None);
        // A wider store that starts before the load's bytes overlaps them.
        let wide = function("add.u64 %rd1, %SPL, 0;\nst.local.u32 [%rd1+4], 7;\nst.local.u64 [%rd1], %rd1;\nld.local.u32 %r2, [%rd1+4];");
        assert_eq!(forwarded(&wide, "%r2"), None);
        let vector = function("add.u64 %rd1, %SPL, 0;\nst.local.v2.u32 [%rd1], {%r1, %r3};\nld.local.u32 %r2, [%rd1];");
        assert_eq!(forwarded(&vector, "%r2"), None);
        // The stored register changes after the store: the slot keeps the old value.
        let redefined = function("add.u64 %rd1, %SPL, 0;\nmov.u32 %r1, %tid.x;\nst.local.u32 [%rd1], %r1;\nadd.u32 %r1, %r1, 1;\nld.local.u32 %r2, [%rd1];");
        assert_eq!(forwarded(&redefined, "%r2"), None);
        let elsewhere = function("add.u64 %rd1, %SPL, 0;\nst.local.u32 [%rd1+4], 7;\nst.local.u32 [%rd1], 9;\nld.local.u32 %r2, [%rd1];");
        assert_eq!(forwarded(&elsewhere, "%r2"), Some(Operand::Imm(9)));
    }
}
