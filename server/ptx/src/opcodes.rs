//! The table of PTX 9.x instruction opcodes.
//!
//! The parser splits `cp.async.bulk.tensor.2d.shared::cluster.global` into the base
//! opcode `cp` and its dotted modifiers, so this table holds base opcodes only. It is
//! the instruction list of NVIDIA, *Parallel Thread Execution ISA* 9.x, §9.7 (subsections
//! 9.7.1 integer arithmetic through 9.7.17 `tcgen05`), reduced to the first dotted
//! component. The families whose interesting part is in the modifiers are listed in
//! [`FAMILIES`] for documentation and hover text.
//!
//! Lookup is once per instruction, so it is a compile-time hash table of 16-byte integer
//! keys (see [`is_known_opcode`]); the sorted slice stays the readable source of truth.

/// Every PTX 9.x base opcode, sorted (checked by a test).
pub const OPCODES: &[&str] = &[
    "abs",
    "activemask",
    "add",
    "addc",
    "alloca",
    "and",
    "applypriority",
    "atom",
    "bar",
    "barrier",
    "bfe",
    "bfi",
    "bfind",
    "bmsk",
    "bra",
    "brev",
    "brkpt",
    "brx",
    "call",
    "clusterlaunchcontrol",
    "clz",
    "cnot",
    "copysign",
    "cos",
    "cp",
    "createpolicy",
    "cvt",
    "cvta",
    "discard",
    "div",
    "dp2a",
    "dp4a",
    "elect",
    "ex2",
    "exit",
    "fence",
    "fma",
    "fns",
    "getctarank",
    "griddepcontrol",
    "isspacep",
    "istypep",
    "ld",
    "ldmatrix",
    "ldu",
    "lg2",
    "lop3",
    "mad",
    "mad24",
    "madc",
    "mapa",
    "match",
    "max",
    "mbarrier",
    "membar",
    "min",
    "mma",
    "mov",
    "movmatrix",
    "mul",
    "mul24",
    "multimem",
    "nanosleep",
    "neg",
    "not",
    "or",
    "pmevent",
    "popc",
    "prefetch",
    "prefetchu",
    "prmt",
    "rcp",
    "red",
    "redux",
    "rem",
    "ret",
    "rsqrt",
    "sad",
    "selp",
    "set",
    "setmaxnreg",
    "setp",
    "shf",
    "shfl",
    "shl",
    "shr",
    "sin",
    "slct",
    "sqrt",
    "st",
    "stackrestore",
    "stacksave",
    "stmatrix",
    "sub",
    "subc",
    "suld",
    "suq",
    "sured",
    "sust",
    "szext",
    "tanh",
    "tcgen05",
    "tensormap",
    "testp",
    "tex",
    "tld4",
    "trap",
    "txq",
    "vabsdiff",
    "vabsdiff2",
    "vabsdiff4",
    "vadd",
    "vadd2",
    "vadd4",
    "vavrg2",
    "vavrg4",
    "vmad",
    "vmax",
    "vmax2",
    "vmax4",
    "vmin",
    "vmin2",
    "vmin4",
    "vote",
    "vset",
    "vset2",
    "vset4",
    "vshl",
    "vshr",
    "vsub",
    "vsub2",
    "vsub4",
    "wgmma",
    "wmma",
    "xor",
];

/// Instruction families whose identity lies in the first modifiers (PTX ISA 9.x §9.7).
/// Informational: the parser accepts any modifiers after a known base opcode.
pub const FAMILIES: &[&str] = &[
    "bar.sync",
    "bar.arrive",
    "bar.red",
    "bar.warp.sync",
    "barrier.cluster.arrive",
    "barrier.cluster.wait",
    "clusterlaunchcontrol.try_cancel",
    "clusterlaunchcontrol.query_cancel",
    "cp.async",
    "cp.async.commit_group",
    "cp.async.wait_group",
    "cp.async.wait_all",
    "cp.async.mbarrier.arrive",
    "cp.async.bulk",
    "cp.async.bulk.tensor",
    "cp.async.bulk.prefetch",
    "cp.async.bulk.prefetch.tensor",
    "cp.async.bulk.commit_group",
    "cp.async.bulk.wait_group",
    "cp.reduce.async.bulk",
    "cp.reduce.async.bulk.tensor",
    "fence.proxy.async",
    "fence.proxy.tensormap",
    "griddepcontrol.launch_dependents",
    "griddepcontrol.wait",
    "ld.global.nc",
    "mbarrier.init",
    "mbarrier.inval",
    "mbarrier.arrive",
    "mbarrier.arrive_drop",
    "mbarrier.expect_tx",
    "mbarrier.complete_tx",
    "mbarrier.test_wait",
    "mbarrier.try_wait",
    "mbarrier.pending_count",
    "multimem.ld_reduce",
    "multimem.st",
    "multimem.red",
    "multimem.cp.async",
    "red.async",
    "st.async",
    "st.bulk",
    "tcgen05.alloc",
    "tcgen05.dealloc",
    "tcgen05.relinquish_alloc_permit",
    "tcgen05.ld",
    "tcgen05.st",
    "tcgen05.wait",
    "tcgen05.cp",
    "tcgen05.shift",
    "tcgen05.mma",
    "tcgen05.mma.sp",
    "tcgen05.mma.ws",
    "tcgen05.commit",
    "tcgen05.fence",
    "tensormap.replace",
    "tensormap.cp_fenceproxy",
    "wgmma.fence",
    "wgmma.mma_async",
    "wgmma.mma_async.sp",
    "wgmma.commit_group",
    "wgmma.wait_group",
    "wmma.load",
    "wmma.store",
    "wmma.mma",
];

/// Packs up to 16 bytes big-endian, zero padded, into one integer key: one compare
/// instead of a `memcmp` (a binary search over the strings was 5% of parse time).
const fn key(s: &[u8]) -> u128 {
    let mut k = 0u128;
    let mut i = 0;
    while i < 16 {
        k <<= 8;
        if i < s.len() {
            k |= s[i] as u128;
        }
        i += 1;
    }
    k
}

/// Open-addressing hash table of the keys of opcodes up to 16 bytes, built at compile
/// time. An empty slot holds 0, which is no opcode's key. 512 slots for ~130 keys keep
/// probe sequences at about one step.
const TABLE_BITS: u32 = 9;

const fn slot(k: u128) -> usize {
    let mixed = ((k >> 64) as u64 ^ k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> (64 - TABLE_BITS)) as usize
}

static TABLE: [u128; 1 << TABLE_BITS] = {
    let mut t = [0u128; 1 << TABLE_BITS];
    let mut i = 0;
    while i < OPCODES.len() {
        let bytes = OPCODES[i].as_bytes();
        if bytes.len() <= 16 {
            let k = key(bytes);
            let mut at = slot(k);
            while t[at] != 0 {
                at = (at + 1) & ((1 << TABLE_BITS) - 1);
            }
            t[at] = k;
        }
        i += 1;
    }
    t
};

/// [`key`] at run time: one copy into a zeroed buffer instead of a 16-step loop (the
/// loop was most of the lookup's cost in callgrind).
#[inline]
fn runtime_key(s: &[u8]) -> u128 {
    let mut buf = [0u8; 16];
    let n = s.len().min(16);
    buf[..n].copy_from_slice(&s[..n]);
    u128::from_be_bytes(buf)
}

/// Whether `op` (a base opcode, without modifiers) is a PTX 9.x instruction.
#[inline]
pub fn is_known_opcode(op: &str) -> bool {
    if op.is_empty() || op.len() > 16 {
        return OPCODES.binary_search(&op).is_ok();
    }
    let k = runtime_key(op.as_bytes());
    let mut at = slot(k);
    loop {
        let it = TABLE[at];
        if it == k {
            return true;
        }
        if it == 0 {
            return false;
        }
        at = (at + 1) & ((1 << TABLE_BITS) - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique() {
        assert!(
            OPCODES.windows(2).all(|w| w[0] < w[1]),
            "OPCODES must be sorted for binary search"
        );
    }

    #[test]
    fn families_start_with_a_known_opcode() {
        for it in FAMILIES {
            let base = it.split('.').next().unwrap_or_default();
            assert!(is_known_opcode(base), "{it}");
        }
    }

    #[test]
    fn knows_recent_instructions() {
        for op in [
            "wgmma",
            "cp",
            "mbarrier",
            "tcgen05",
            "griddepcontrol",
            "elect",
            "setmaxnreg",
            "stmatrix",
            "ldmatrix",
            "redux",
            "clusterlaunchcontrol",
        ] {
            assert!(is_known_opcode(op), "{op}");
        }
        assert!(!is_known_opcode("frobnicate"));
        assert!(!is_known_opcode("cp.async"));
        assert!(!is_known_opcode(""));
        assert!(!is_known_opcode("clusterlaunchcontrolx"));
        for op in [
            "",
            "a",
            "ld",
            "mbarrier",
            "clusterlaunchcontr",
            "0123456789abcdef",
        ] {
            assert_eq!(runtime_key(op.as_bytes()), key(op.as_bytes()), "{op}");
        }
        for op in OPCODES {
            assert!(is_known_opcode(op), "{op}");
        }
    }
}
