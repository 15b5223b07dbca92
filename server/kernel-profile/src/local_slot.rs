//! Store-to-load forwarding through a thread's local memory: the value a `ld.local` reads
//! from a fixed slot of the stack depot that one `st.local` alone writes.
//!
//! nvcc keeps a `volatile` local variable in the local-memory depot and reads it back at
//! each use (`volatile int tid = threadIdx.x + MDIMC * threadIdx.y;` in CLBlast's `Xgemm`:
//! `st.volatile.local.u32 [%rd1], %r25` once, then `ld.volatile.local.u32 %r42, [%rd1]`
//! in the loop). Local memory is private to the thread (PTX ISA, "State Spaces", `.local`),
//! so when no other instruction can write the slot the load reads what the store wrote, and
//! an index computed from it is the same thread-index expression as the stored one, not
//! data. Without this the loads indexed by such a variable were taken as gathers (32
//! sectors per request).
//!
//! Conservative: every `st.local` of the function must write a slot resolved statically
//! (the depot symbol, or a register derived from it by `mov` and `add` of constants, plus
//! the address offset); a `cvta` from the local window (a generic pointer that generic
//! stores could write through) or a `call` (which may be handed a local address) gives up;
//! exactly one store must overlap the load's bytes, at the same offset and width.

use ptx_ir::ir::{AddrBase, Function, InstrId, Operand, RegId};
use ptx_ir::{InstrClass, Space};

/// A byte range of local memory: the depot symbol (or the register the chain of `mov` and
/// constant `add`s starts from), an offset and a width.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Slot {
    root: String,
    offset: i64,
    width: i64,
}

impl Slot {
    fn overlaps(&self, o: &Slot) -> bool {
        self.root == o.root && self.offset < o.offset + o.width && o.offset < self.offset + self.width
    }
}

/// Where `reg + offset` points: a fixed offset from a root, through `mov` and `add` of
/// immediates.
fn resolve(func: &Function, mut reg: RegId, mut offset: i64) -> Option<(String, i64)> {
    for _ in 0..16 {
        let id = func.unique_def(reg)?;
        let instr = func.instr(id)?;
        let ops = func.operands_of(instr);
        match (instr.base(), ops.get(1), ops.get(2)) {
            ("mov", Some(Operand::Symbol(s)), None) => return Some((s.to_string(), offset)),
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
        Operand::Addr { base: AddrBase::Symbol(s), offset } => Some((s.to_string(), *offset)),
        Operand::Addr { base: AddrBase::Reg(r), offset } => resolve(func, *r, *offset),
        _ => None,
    })?;
    Some(Slot { root, offset, width })
}

/// The operand a scalar `ld.local` reads, when a single `st.local` writes its slot and
/// nothing else can (module documentation); `None` otherwise.
pub(crate) fn forwarded(func: &Function, load: InstrId) -> Option<Operand> {
    let instr = func.instr(load)?;
    if instr.base() != "ld" || !matches!(instr.class, InstrClass::Load(Space::Local)) || instr.vector_width() != 1 {
        return None;
    }
    let want = slot(func, load)?;
    let mut found: Option<InstrId> = None;
    for (i, other) in func.instrs.iter().enumerate() {
        let id = i as InstrId;
        match (other.base(), other.class) {
            ("cvta", _) if other.has_modifier("local") => return None,
            ("call", _) => return None,
            (_, InstrClass::Store(Space::Local)) => {
                let s = slot(func, id)?;
                if s.overlaps(&want) {
                    if found.is_some() || s != want || other.vector_width() != 1 {
                        return None;
                    }
                    found = Some(id);
                }
            }
            _ => {}
        }
    }
    let store = func.instr(found?)?;
    // `st.local [addr], value`: the value is the operand after the address.
    func.operands_of(store).get(1).filter(|op| matches!(op, Operand::Reg(_) | Operand::Imm(_))).cloned()
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
        let (module, errors) = ptx_ir::parse_and_lower(&src);
        assert!(errors.is_empty(), "{errors:?}");
        module.functions.into_iter().next().expect("one kernel")
    }

    fn load_of(func: &Function, reg: &str) -> InstrId {
        let r = func.reg_by_name(reg).expect("register");
        func.unique_def(r).expect("one definition")
    }

    /// CLBlast's `volatile int tid`: stored once, read back in the loop.
    #[test]
    fn a_volatile_local_reads_back_what_was_stored() {
        let f = function(
            "add.u64 %rd1, %SPL, 0;\nmov.u32 %r1, %tid.x;\nst.volatile.local.u32 [%rd1], %r1;\nld.volatile.local.u32 %r2, [%rd1];\nld.volatile.local.u32 %r3, [%rd1+4];",
        );
        let r1 = f.reg_by_name("%r1").unwrap();
        assert_eq!(forwarded(&f, load_of(&f, "%r2")), Some(Operand::Reg(r1)));
        // Nothing stored at offset 4.
        assert_eq!(forwarded(&f, load_of(&f, "%r3")), None);
    }

    /// Two stores to the slot, a store at an address that is not fixed, or the depot made a
    /// generic pointer: the loaded value is not known.
    #[test]
    fn other_writers_keep_the_load_unknown() {
        let two = function("add.u64 %rd1, %SPL, 0;\nst.local.u32 [%rd1], 1;\nst.local.u32 [%rd1], 2;\nld.local.u32 %r2, [%rd1];");
        assert_eq!(forwarded(&two, load_of(&two, "%r2")), None);
        let dynamic = function(
            "add.u64 %rd1, %SPL, 0;\nst.local.u32 [%rd1], 7;\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.u64 %rd3, %SPL, %rd2;\nst.local.u32 [%rd3], 1;\nld.local.u32 %r2, [%rd1];",
        );
        assert_eq!(forwarded(&dynamic, load_of(&dynamic, "%r2")), None);
        let generic = function("add.u64 %rd1, %SPL, 0;\nst.local.u32 [%rd1], 7;\ncvta.local.u64 %SP, %SPL;\nld.local.u32 %r2, [%rd1];");
        assert_eq!(forwarded(&generic, load_of(&generic, "%r2")), None);
        let partial = function("add.u64 %rd1, %SPL, 0;\nst.local.u8 [%rd1+1], 7;\nld.local.u32 %r2, [%rd1];");
        assert_eq!(forwarded(&partial, load_of(&partial, "%r2")), None);
        let elsewhere = function("add.u64 %rd1, %SPL, 0;\nst.local.u32 [%rd1+4], 7;\nst.local.u32 [%rd1], 9;\nld.local.u32 %r2, [%rd1];");
        assert_eq!(forwarded(&elsewhere, load_of(&elsewhere, "%r2")), Some(Operand::Imm(9)));
    }
}
