//! What ptxas makes of the PTX: the instructions it issues differ from the PTX text in
//! ways that change counts by up to 2× on arithmetic-bound kernels.
//!
//! 1. **Contraction.** A floating-point `mul` whose only use is an `add`/`sub` of the same
//!    type becomes one fused multiply-add (FFMA for `.f32`, DFMA for `.f64`). nvcc compiles
//!    with `-fmad=true` by default ("CUDA Compiler Driver NVCC", option `--fmad`), and the
//!    PTX ISA allows the code generator to do it: "mul/add sequences with no rounding
//!    modifiers may be optimized to use fused-multiply-add instructions on the target
//!    device", while an instruction with an explicit rounding modifier (`mul.rn`,
//!    `add.rn`) "is treated conservatively by the code optimizer" and is never fused (PTX
//!    ISA, §9.7.3 "Floating Point Instructions", `add` and `mul`, Notes). NVIDIA's white
//!    paper "Floating Point and IEEE 754 Compliance for NVIDIA GPUs" (§4.3 "Controlling Fused
//!    multiply-add") describes the same default. We contract exactly what ptxas 13.5 was
//!    seen to contract on hand-written PTX (disassembled with nvdisasm): `mul` + `add`
//!    and `mul` + `sub` in one basic block, unpredicated, with the same `.ftz`, no `.sat`
//!    and no rounding modifier on either, the product used once (a product used twice, or
//!    consumed in another block, stays an FMUL).
//! 2. **Constant-bank operands.** An `ld.const` from a fixed address (a `__constant__`
//!    variable plus an immediate offset) whose value only feeds arithmetic is not a load
//!    in SASS: the arithmetic instruction reads `c[bank][offset]` directly (the CUDA
//!    Binary Utilities document the `c[X][Y]` operand syntax). A constant load from a
//!    register address stays an instruction (`LDC`, or `ULDC` on the uniform datapath for
//!    a warp-uniform address, as nvdisasm shows), and so does one whose value is stored,
//!    compared to data by a branch, or passed on.
//! 3. **Operands, not instructions.** Some PTX instructions name values that ptxas resolves
//!    at register allocation or writes into an operand field, and issues nothing for. Seen
//!    with ptxas 13.5 for sm_80 on `examples/reduce.cu` (nvdisasm of the cubin): the
//!    `mov.b32` bit casts around every `shfl.sync` vanish (`SHFL.DOWN PT, R5, R0, 0x8, 0x1f`
//!    then `FADD R5, R0, R5`); the `mov.u32 %r, 16` that names a shuffle offset becomes the
//!    immediate `0x10`; `mov.u32 %r, %ntid.x` becomes the constant-bank operand `c[0x0][0x0]`
//!    (`IMAD R2, R2, c[0x0][0x0], R9`); `cvta.to.global` and the `ld.param` of a pointer
//!    become the operand `c[0x0][0x160]` of `IMAD.WIDE`; the address of a `.shared`
//!    variable becomes an address offset (`STS [R7.X4]`). What stays an instruction: a
//!    `mov` that merges two definitions (`mov.f32 %f, 0f00000000` before a branch that may
//!    overwrite it: `HFMA2.MMA R0, -RZ, RZ, 0, 0`), a guarded `mov`, the reads of `%tid`
//!    and `%ctaid` (`S2R`), a 64-bit immediate or global address, and a parameter used as
//!    an address as is (`MOV R2, c[0x0][0x168]` before the `RED`).
//! 4. **Vectorised shared loads.** Scalar 32-bit `ld.shared` from one base register at
//!    consecutive immediate offsets in one basic block become one `LDS.64` (two words, the
//!    first 8-byte aligned) or `LDS.128` (four, 16-byte aligned) when the base is known to
//!    be aligned that much. Seen with ptxas 13.5 for sm_86 (nvdisasm) on a tiled SGEMM: the
//!    64 `ld.shared.f32` a thread issues per tile of `As[(row·8 + m)·8 + k]` are 16
//!    `LDS.128`; loads 32 bytes apart (`As[(row·8 + m)·8 + k]` over `m`) stay scalar. The
//!    base's alignment is what the integer arithmetic that forms it proves (shifts,
//!    multiplications and masks by powers of two, a `.shared` variable's address, which
//!    ptxas places).
//! 5. **Integer fusions.** Seen with ptxas 13.5 for sm_86 (nvdisasm) on a guarded 2-D
//!    convolution (`if (r >= 0 && r < h && q >= 0 && q < w) acc += in[(r·w + q)·c] · m`,
//!    four taps unrolled): a `setp` whose predicate is used only by an `and.pred`/`or.pred`
//!    of the same block is one comparison with a combining predicate input
//!    (`ISETP.GE.OR P0, PT, R2, c[0x0][0x17c], P0`), so the `and`/`or` is not issued; and a
//!    `mul.wide.s32`/`.u32` whose only reader is a 64-bit `add` of a register is one
//!    `IMAD.WIDE R2, R24, R25, c[0x0][0x160]` (on the FMA pipe, as other integer
//!    multiply-adds). The tap's eight PTX integer instructions are five in SASS.
//! 6. **Expansions.** Some PTX instructions are sequences in SASS. nvdisasm (ptxas 13.5,
//!    sm_86) of `o[i] = a[i] OP b[i]` against `o[i] = a[i] + b[i]`, counting the path a
//!    normal operand takes: a 32-bit integer division by a register is `I2F.RP`,
//!    `MUFU.RCP`, `F2I.FTZ.U32.TRUNC` and 19 more integer instructions (`IABS`, `IMAD.HI`,
//!    `ISETP`, ...) for `div.s32`, 17 for `rem.s32`, 13 for `div.u32`, 12 for `rem.u32`;
//!    `div.rn.f32` is `MUFU.RCP`, `FCHK` and five FFMAs, inside a
//!    `BSSY`/`BSYNC` with a branch around the slow path's call; `sqrt.rn.f32` and
//!    `rcp.rn.f32` are `MUFU.RSQ`/`MUFU.RCP` with 4 and 3 floating-point and 2 and 3 integer
//!    instructions in the same frame; `div.rn.f64` is `MUFU.RCP64H`, 8 FP64 instructions, 3
//!    FP32 ones and the frame. The extra instructions are counted by class after the PTX
//!    instruction's own, as a chain its readers wait for. 64-bit integer arithmetic is two
//!    32-bit halves (nvdisasm of a `size_t` grid-stride loop, sm_86): an `add`/`sub` is
//!    `IADD3` and `IADD3.X`, a `shl.b64` `IMAD.SHL.U32` and `SHF.L.U64.HI`, a 64-bit
//!    comparison `ISETP` and `ISETP.EX`, an `and`/`or`/`xor.b64` two `LOP3.LUT`, a
//!    `mul.lo.s64` three `IMAD`s; a 64-bit add that absorbed a `mul.wide` (item 5) is one
//!    `IMAD.WIDE`. FP64 `min`/`max` are `DSETP.MIN`/`DSETP.MAX` with two selects and three
//!    moves around them (the NaN and signed-zero cases), `cvt.sat.f64.f64` two of those
//!    compares with four selects and six moves (nvdisasm of `fmax(a, b)` and
//!    `fmin(fmax(x, 0.0), 1.0)` on doubles).
//! 7. **Loops ptxas unrolls whole.** A loop that is one basic block, ends in a branch back
//!    to itself on a comparison of a counter with an immediate, and whose counter starts at
//!    an immediate and steps by an immediate, has a trip count ptxas knows. Seen with ptxas
//!    13.5 for sm_86 (nvdisasm) on hand-written PTX of two `ld.shared.f32` and one FMA per
//!    iteration: unrolled whole at 4 to 512 iterations, by 64 at 1024 and more; with eight
//!    FMAs per iteration whole at 16 and 64 iterations and partly at 256; with 32 whole at 16
//!    and partly at 64. Unrolled whole (iterations × the body less its control at most
//!    [`FULL_UNROLL_INSTRUCTIONS`], no `.pragma "nounroll"`), the counter's step, its
//!    comparison and the branch are not issued, nor the steps of address registers that only
//!    the block's loads and stores read (they become the copies' immediate offsets). The
//!    SGEMM worklog's `sgemm_1d_tiling`, whose 8-step k loop nvcc unrolls by 2, is 108
//!    instructions per K-tile in SASS; its four iterations' loop control were 20 of the 154
//!    counted. The copies' shared loads from a stepped register lie side by side
//!    (`[r + o + k·step]`), and ptxas merges them across copies as item 4 does within a
//!    block (the hand-written loop's `[r]`, `[r+4]` stepping by 8: two `LDS.128` per four
//!    copies): their issues are the vector loads that cover every copy's offsets
//!    (`Folding::issue_share`). `sgemm_1d_tiling`'s `As` loads go from 32 `LDS.64` to 16
//!    `LDS.128` per K-tile, its count to 118 (108 in SASS).
//! 8. **Loops ptxas unrolls by 4.** A one-block loop on a counter stepped by an immediate and
//!    compared itself with an immediate or a loop-invariant register, its trip count known
//!    only at run time, with no `.pragma "nounroll"` and four copies of its body (less its
//!    control) at most [`PARTIAL_UNROLL_INSTRUCTIONS`], is unrolled by ptxas by 4 more.
//!    nvdisasm (ptxas 13.5, sm_86) of nvcc's loops unrolled by 4: 16 copies while more
//!    than 12 remain, then 8 if more than 4 remain, then nvcc's 4; the control once per
//!    group; `ISETP`s, `PLOP3`s and four branches per entry to choose among them. Counted
//!    where the trip count T per entry is known ([`Folding::with_trip_counts`]): the
//!    control [`partial_unroll_issues`]' groups over T, the dispatch as extra instructions
//!    of the branch. Left as they are, as ptxas leaves them: ten loads a copy (77 SASS
//!    instructions for nvcc's 4 copies), an exit on a sum of the counter and the bound
//!    (nvcc's loop over an unsigned index), `#pragma unroll 1`. tests/sass_counts.rs checks
//!    the instructions per iteration against ptxas. The same for sm_75 to sm_90; ptxas for
//!    sm_100 and sm_120 differs (the eight-load loop by 2 only, the unsigned-index loop by
//!    4 as well: not followed here).
//! 9. **Three-input adds.** A 32-bit integer `add`/`sub` whose result only a later
//!    `add`/`sub` of its block reads is folded into it: one `IADD3` of three inputs
//!    (nvdisasm, sm_86, of nvcc's unrolled grid-stride sum: its four `add.s32` of the sum
//!    are two `IADD3`, its index steps `i + step + step` one).
//! 10. **Wide products added.** A 64-bit `add` of a `mul.wide` product is one `IMAD.WIDE`
//!     even where the product is computed once for several adds (the grid-stride loop's
//!     `in + i` in each copy: `IMAD.WIDE R6, R25, 0x4, R2`), so it has no second half (item
//!     6). The grid-stride sum's 5 counted instructions per element are 3.2, against 3.25
//!     in its SASS loop (tests/sass_counts.rs).

use std::collections::{HashMap, HashSet};

use ptx_ir::ir::{AddrBase, Function, FunctionKind, InstrId, Operand, RegId};
use ptx_ir::{InstrClass, Space};

/// The instructions ptxas does not issue as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Folding {
    /// `add`/`sub` → the `mul` it absorbs (the pair issues as one FMA).
    pub contracted: HashMap<InstrId, InstrId>,
    /// `ld.const` instructions that become constant-bank operands.
    pub const_operands: HashSet<InstrId>,
    /// Moves, address conversions and parameter loads that become operands (item 3 above).
    pub operands: HashSet<InstrId>,
    /// Shared loads merged into a vector load (item 4 above) → the first load of the group
    /// in program order, which stands for the vector load.
    pub vectorised: HashMap<InstrId, InstrId>,
    /// 64-bit `add` → the `mul.wide` it absorbs (item 5: one `IMAD.WIDE`).
    pub wide_multiply_adds: HashMap<InstrId, InstrId>,
    /// `and`/`or`/`xor` of predicates folded into the comparison that makes one of their
    /// inputs (item 5: `ISETP` with a combining predicate).
    pub predicate_combines: HashSet<InstrId>,
    /// 32-bit integer `add`/`sub` whose result only a later `add`/`sub` of its block reads
    /// → that reader: the pair is one three-input `IADD3` (item 9).
    pub three_input_adds: HashMap<InstrId, InstrId>,
    /// PTX instructions that are SASS sequences (item 6) → the instructions issued beyond
    /// the PTX instruction's own, by class.
    pub expansions: HashMap<InstrId, &'static [(InstrClass, u32)]>,
    /// The loop control of loops ptxas unrolls whole (item 7): counter and address steps,
    /// the comparison and the branch back.
    pub unrolled_control: HashSet<InstrId>,
    /// Instructions issued less often than their PTX block runs (item 7: the shared loads
    /// of a loop unrolled whole, merged into vector loads across its copies; item 8: the
    /// control of a loop unrolled by 4, once the trip count is known) → the share of
    /// their executions that issue.
    pub issue_share: HashMap<InstrId, f64>,
    /// The one-block loops with a run-time trip count that ptxas unrolls by 4 (item 8).
    pub partial_unrolls: Vec<PartialUnroll>,
    /// Instructions ptxas issues per execution of a PTX instruction beyond it and its
    /// expansion, by class, in fractions (item 8: the dispatch between a loop's unrolled
    /// copies, per entry, spread over the entry's iterations; set by
    /// [`Folding::with_trip_counts`]).
    pub extra_per_execution: HashMap<InstrId, Vec<(InstrClass, f64)>>,
}

/// A one-block loop with a run-time trip count that ptxas unrolls by 4 (item 8).
#[derive(Debug, Clone, PartialEq)]
pub struct PartialUnroll {
    pub block: ptx_ir::ir::BlockId,
    /// The branch back, which stands for the loop's entries in the dispatch count.
    pub branch: InstrId,
    /// What the unrolled loop issues once per group of copies: the counter step, the
    /// comparison, the branch and the steps of address and index registers.
    pub control: Vec<InstrId>,
}

/// The SASS sequence of a PTX instruction beyond the instruction itself, by class (item 6).
/// `None` for an instruction that is one SASS instruction (or is not seen to expand).
pub fn expansion(func: &Function, instr: &ptx_ir::Instr) -> Option<&'static [(InstrClass, u32)]> {
    const DIV_S32: &[(InstrClass, u32)] = &[(InstrClass::Conversion, 2), (InstrClass::Sfu, 1), (InstrClass::IntAlu, 19)];
    const REM_S32: &[(InstrClass, u32)] = &[(InstrClass::Conversion, 2), (InstrClass::Sfu, 1), (InstrClass::IntAlu, 17)];
    const DIV_U32: &[(InstrClass, u32)] = &[(InstrClass::Conversion, 2), (InstrClass::Sfu, 1), (InstrClass::IntAlu, 13)];
    const REM_U32: &[(InstrClass, u32)] = &[(InstrClass::Conversion, 2), (InstrClass::Sfu, 1), (InstrClass::IntAlu, 12)];
    const FRAME: [(InstrClass, u32); 2] = [(InstrClass::Other, 2), (InstrClass::Branch, 1)];
    const DIV_F32: &[(InstrClass, u32)] = &[(InstrClass::Sfu, 1), (InstrClass::Fp32, 5), FRAME[0], FRAME[1]];
    const SQRT_F32: &[(InstrClass, u32)] = &[(InstrClass::Sfu, 1), (InstrClass::Fp32, 3), (InstrClass::IntAlu, 2), FRAME[0], FRAME[1]];
    const RCP_F32: &[(InstrClass, u32)] = &[(InstrClass::Sfu, 1), (InstrClass::Fp32, 2), (InstrClass::IntAlu, 3), FRAME[0], FRAME[1]];
    const DIV_F64: &[(InstrClass, u32)] = &[(InstrClass::Sfu, 1), (InstrClass::Fp64, 7), (InstrClass::Fp32, 3), FRAME[0], FRAME[1]];
    // FP64 minimum and maximum (nvdisasm, sm_86, of `fmax(a, b)` and
    // `fmin(fmax(x, 0.0), 1.0)` on doubles): `DSETP.MAX` (the PTX instruction) then `FSEL`
    // and `SEL` for the two halves and three moves, one guarded on the NaN predicate; the
    // saturating `cvt.sat.f64.f64` is two such (`DSETP.MAX`, `DSETP.MIN`): the second
    // compare, four selects and six moves beyond the PTX instruction.
    const MINMAX_F64: &[(InstrClass, u32)] = &[(InstrClass::IntAlu, 2), (InstrClass::Move, 3)];
    const CLAMP_F64: &[(InstrClass, u32)] = &[(InstrClass::Fp64, 1), (InstrClass::IntAlu, 4), (InstrClass::Move, 6)];
    let register_divisor = || matches!(func.operands_of(instr).last(), Some(Operand::Reg(_)));
    let ieee = !instr.modifiers().any(|m| matches!(m, "approx" | "full"));
    match (instr.base(), instr.ty()) {
        ("div", Some("s32")) if register_divisor() => Some(DIV_S32),
        ("rem", Some("s32")) if register_divisor() => Some(REM_S32),
        ("div", Some("u32")) if register_divisor() => Some(DIV_U32),
        ("rem", Some("u32")) if register_divisor() => Some(REM_U32),
        ("div", Some("f32")) if ieee => Some(DIV_F32),
        ("sqrt", Some("f32")) if ieee => Some(SQRT_F32),
        ("rcp", Some("f32")) if ieee => Some(RCP_F32),
        ("div", Some("f64")) if ieee => Some(DIV_F64),
        ("max" | "min", Some("f64")) => Some(MINMAX_F64),
        ("cvt", Some("f64")) if instr.has_modifier("sat") && instr.modifiers().filter(|m| *m == "f64").count() == 2 => Some(CLAMP_F64),
        _ => None,
    }
}

impl Folding {
    /// The set of removed instructions (muls absorbed, constant loads folded, operands).
    pub fn removed(&self) -> HashSet<InstrId> {
        self.contracted
            .values()
            .copied()
            .chain(self.const_operands.iter().copied())
            .chain(self.operands.iter().copied())
            .chain(self.vectorised.keys().copied())
            .chain(self.wide_multiply_adds.values().copied())
            .chain(self.predicate_combines.iter().copied())
            .chain(self.three_input_adds.keys().copied())
            .chain(self.unrolled_control.iter().copied())
            .collect()
    }

    /// The multiply an issued instruction absorbed (an FMA's `mul`, an `IMAD.WIDE`'s
    /// `mul.wide`).
    pub fn fused_with(&self, id: InstrId) -> Option<InstrId> {
        self.contracted.get(&id).or_else(|| self.wide_multiply_adds.get(&id)).copied()
    }

    /// The words of each vector load that item 4 forms, by the load that stands for it (the
    /// group's first in program order): 2 for an `LDS.64`, 4 for an `LDS.128`.
    pub fn vector_widths(&self) -> HashMap<InstrId, u32> {
        let mut widths: HashMap<InstrId, u32> = HashMap::new();
        for leader in self.vectorised.values() {
            *widths.entry(*leader).or_insert(1) += 1;
        }
        widths
    }
}

const ROUNDING: [&str; 4] = ["rn", "rz", "rm", "rp"];

fn is_arith_fp(instr: &ptx_ir::Instr) -> bool {
    matches!(instr.class, InstrClass::Fp32 | InstrClass::Fp64) && matches!(instr.ty(), Some("f32" | "f64"))
}

/// The modifiers that decide whether two instructions may fuse.
fn fusible(instr: &ptx_ir::Instr) -> bool {
    instr.guard.is_none() && !instr.modifiers().any(|m| ROUNDING.contains(&m) || m == "sat")
}

/// The instructions reading each register, in order, once per read (`srcs` lists every
/// appearance, the guard too): one pass over the function, so that the analysis stays
/// linear in its size (a search of every instruction per register was quadratic: seconds
/// on a kernel of 42k instructions).
fn readers(func: &Function) -> HashMap<RegId, Vec<InstrId>> {
    let mut uses: HashMap<RegId, Vec<InstrId>> = HashMap::new();
    for (id, instr) in func.instrs.iter().enumerate() {
        for r in func.srcs(instr) {
            uses.entry(*r).or_default().push(id as InstrId);
        }
    }
    uses
}

/// The single instruction reading `reg`, when there is exactly one read.
fn single_reader(reg: RegId, readers: &HashMap<RegId, Vec<InstrId>>) -> Option<InstrId> {
    match readers.get(&reg).map(Vec::as_slice) {
        Some([one]) => Some(*one),
        _ => None,
    }
}

/// Finds the contractions and constant-operand loads of one function.
pub fn analyse(func: &Function) -> Folding {
    let mut res = Folding::default();
    let readers = readers(func);
    // The comparisons that already absorbed a predicate combine (one each).
    let mut combined_setps: HashSet<InstrId> = HashSet::new();
    for (id, instr) in func.instrs.iter().enumerate() {
        let id = id as InstrId;
        // 5. mul.wide + 64-bit add → IMAD.WIDE.
        if instr.base() == "mul" && instr.has_modifier("wide") && matches!(instr.ty(), Some("s32" | "u32")) && instr.guard.is_none() {
            let [dst] = func.dsts(instr) else { continue };
            if func.defs_of(*dst).len() != 1 {
                continue;
            }
            let Some(user) = single_reader(*dst, &readers) else { continue };
            let Some(u) = func.instr(user) else { continue };
            // The other addend a register, or an immediate (ptxas puts it in the constant
            // bank: `IMAD.WIDE.U32 R4, R9, R4, c[0x2][0x0]`).
            let ops = func.operands_of(u);
            let plain = ops.len() == 3 && ops[1..].iter().all(|op| matches!(op, Operand::Reg(_) | Operand::Imm(_)));
            if u.base() == "add"
                && matches!(u.ty(), Some("s64" | "u64" | "b64"))
                && u.guard.is_none()
                && plain
                && u.block == instr.block
                && user > id
                && func.dsts(u).first() != Some(dst)
                && !res.wide_multiply_adds.contains_key(&user)
            {
                res.wide_multiply_adds.insert(user, id);
            }
            continue;
        }
        // 5. and/or/xor of predicates → the combining input of a comparison.
        if matches!(instr.base(), "and" | "or" | "xor") && instr.ty() == Some("pred") && instr.guard.is_none() {
            let setp = func.srcs(instr).iter().find_map(|p| {
                let d = func.unique_def(*p)?;
                let def = func.instr(d)?;
                let plain = def.base() == "setp" && def.guard.is_none() && func.dsts(def).len() == 1 && func.operands_of(def).len() == 3;
                (plain && d < id && def.block == instr.block && single_reader(*p, &readers) == Some(id) && !combined_setps.contains(&d)).then_some(d)
            });
            if let Some(d) = setp {
                combined_setps.insert(d);
                res.predicate_combines.insert(id);
            }
            continue;
        }
        // 1. mul + add/sub → FMA.
        if instr.base() == "mul" && is_arith_fp(instr) && fusible(instr) {
            let [dst] = func.dsts(instr) else { continue };
            if func.defs_of(*dst).len() != 1 {
                continue;
            }
            let Some(user) = single_reader(*dst, &readers) else { continue };
            let Some(u) = func.instr(user) else { continue };
            let same_ftz = u.has_modifier("ftz") == instr.has_modifier("ftz");
            if matches!(u.base(), "add" | "sub")
                && is_arith_fp(u)
                && u.ty() == instr.ty()
                && fusible(u)
                && same_ftz
                && u.block == instr.block
                && user > id
                && !res.contracted.contains_key(&user)
                && func.dsts(u).first() != Some(dst)
            {
                res.contracted.insert(user, id);
            }
            continue;
        }
        // 3. Operands.
        if is_operand(func, id, instr, &readers) {
            res.operands.insert(id);
            continue;
        }
        // 2. ld.const from a fixed address feeding arithmetic only.
        if instr.class == InstrClass::Load(Space::Const) && instr.base() == "ld" && instr.guard.is_none() {
            let fixed = func.operands_of(instr).iter().any(|op| matches!(op, Operand::Addr { base: AddrBase::Symbol(_) | AddrBase::Absolute, .. }));
            if !fixed {
                continue;
            }
            let dsts = func.dsts(instr);
            let only_arith = !dsts.is_empty()
                && dsts.iter().all(|d| {
                    func.defs_of(*d).len() == 1
                        && readers.get(d).map_or(&[][..], Vec::as_slice).iter().all(|u| {
                            func.instr(*u).is_some_and(|ui| {
                                matches!(ui.class, InstrClass::Fp32 | InstrClass::Fp64 | InstrClass::Fp16 | InstrClass::IntAlu | InstrClass::Sfu | InstrClass::Conversion)
                                    && ui.guard.is_none_or(|g| g.reg != *d)
                            })
                        })
                });
            if only_arith {
                res.const_operands.insert(id);
            }
        }
    }
    res.three_input_adds = three_input_adds(func, &readers, &res);
    res.vectorised = vectorised_shared_loads(func);
    let unrolled = unrolled_loops(func, &readers);
    res.issue_share = merged_across_copies(func, &unrolled, &res.vectorised);
    let whole: HashSet<ptx_ir::ir::BlockId> = unrolled.iter().map(|l| l.block).collect();
    res.unrolled_control = unrolled.into_iter().flat_map(|l| l.control).collect();
    let removed = res.removed();
    res.partial_unrolls = (0..func.blocks.len() as ptx_ir::ir::BlockId)
        .filter(|bid| !whole.contains(bid))
        .filter_map(|bid| partial_unroll(func, bid, &readers, &removed))
        .collect();
    for (id, instr) in func.instrs.iter().enumerate() {
        let id = id as InstrId;
        let one_imad_wide = res.wide_multiply_adds.contains_key(&id) || adds_a_wide_product(func, instr);
        if let Some(e) = expansion(func, instr).or_else(|| (!one_imad_wide).then(|| wide_integer_halves(instr)).flatten()) {
            res.expansions.insert(id, e);
        }
    }
    res
}

/// A plain 32-bit integer `add` or `sub` (item 9's operands of an `IADD3`).
fn plain_add32(instr: &ptx_ir::Instr) -> bool {
    matches!(instr.base(), "add" | "sub")
        && instr.guard.is_none()
        && matches!(instr.ty(), Some("s32" | "u32" | "b32"))
        && instr.modifiers().all(|m| matches!(m, "s32" | "u32" | "b32"))
}

/// Item 9: pairs of 32-bit integer adds that ptxas issues as one three-input `IADD3`. Seen
/// with ptxas 13.5 for sm_86 (nvdisasm) on nvcc's unrolled grid-stride reduction
/// (`s += in[i]` four times): the four PTX `add.s32` of the sums are two
/// `IADD3 R29, R30, R29, R28`, and the index steps `i + step + step` one
/// `IADD3 R4, R25, R2, R25`. An `add`/`sub` whose result has one definition and is read
/// by nothing but a later `add`/`sub` of the same block is folded into it, each `IADD3`
/// taking at most one such (three inputs); greedy in program order.
fn three_input_adds(func: &Function, readers: &HashMap<RegId, Vec<InstrId>>, res: &Folding) -> HashMap<InstrId, InstrId> {
    let taken = res.removed();
    let mut pairs: HashMap<InstrId, InstrId> = HashMap::new();
    let mut used: HashSet<InstrId> = HashSet::new();
    for (id, instr) in func.instrs.iter().enumerate() {
        let id = id as InstrId;
        if !plain_add32(instr) || used.contains(&id) || taken.contains(&id) {
            continue;
        }
        let [dst] = func.dsts(instr) else { continue };
        if func.defs_of(*dst).len() != 1 {
            continue;
        }
        let Some(user) = single_reader(*dst, readers) else { continue };
        let Some(u) = func.instr(user) else { continue };
        if user > id && u.block == instr.block && plain_add32(u) && !used.contains(&user) && !taken.contains(&user) && func.dsts(u).first() != Some(dst) {
            pairs.insert(id, user);
            used.insert(id);
            used.insert(user);
        }
    }
    pairs
}

/// Item 10: a 64-bit `add` of a `mul.wide` product is one `IMAD.WIDE` even where the
/// product is computed once for many adds (nvdisasm, sm_86: a grid-stride loop's
/// `p += step` as `IMAD.WIDE R6, R25, 0x4, R2`, the multiply redone in each), so it has no
/// second half.
fn adds_a_wide_product(func: &Function, instr: &ptx_ir::Instr) -> bool {
    instr.base() == "add"
        && instr.guard.is_none()
        && matches!(instr.ty(), Some("s64" | "u64" | "b64"))
        && func.srcs(instr).iter().any(|r| {
            func.unique_def(*r).and_then(|d| func.instr(d)).is_some_and(|d| d.base() == "mul" && d.has_modifier("wide") && matches!(d.ty(), Some("s32" | "u32")))
        })
}

/// The second half of a 64-bit integer instruction (item 6): one more integer instruction
/// for an `add`, `sub`, bitwise operation, 64-bit shift or comparison, two more for a
/// `mul.lo`.
fn wide_integer_halves(instr: &ptx_ir::Instr) -> Option<&'static [(InstrClass, u32)]> {
    const ONE: &[(InstrClass, u32)] = &[(InstrClass::IntAlu, 1)];
    const TWO: &[(InstrClass, u32)] = &[(InstrClass::IntAlu, 2)];
    if instr.class != InstrClass::IntAlu {
        return None;
    }
    let wide = instr.modifiers().any(|m| matches!(m, "s64" | "u64" | "b64"));
    match instr.base() {
        "add" | "sub" | "setp" | "and" | "or" | "xor" | "not" | "neg" if wide => Some(ONE),
        "shl" | "shr" if wide => Some(ONE),
        "mul" if wide && instr.has_modifier("lo") => Some(TWO),
        _ => None,
    }
}

/// The most instructions a loop may have once unrolled whole (iterations × its body less
/// the loop control) for ptxas to unroll it whole (item 7). An estimate that separates what
/// nvdisasm showed unrolled whole (256 iterations of 3 instructions, 768; 64 of 10, 640;
/// 16 of 34, 544) from what it left a loop (1024 of 3, 3072; 256 of 10, 2560; 64 of 34,
/// 2176).
pub const FULL_UNROLL_INSTRUCTIONS: u64 = 1024;

/// The most iterations the trip count is searched for (item 7).
const MAX_TRIP_SEARCH: u64 = 4096;

/// A one-block loop ptxas unrolls whole (item 7).
struct UnrolledLoop {
    block: ptx_ir::ir::BlockId,
    trips: u64,
    /// The counter step, the comparison, the branch and the address steps.
    control: Vec<InstrId>,
    /// The address registers the loop steps by an immediate, with their steps in bytes.
    address_steps: Vec<(RegId, i64)>,
}

/// Item 7: the one-block loops ptxas unrolls whole.
fn unrolled_loops(func: &Function, readers: &HashMap<RegId, Vec<InstrId>>) -> Vec<UnrolledLoop> {
    (0..func.blocks.len() as ptx_ir::ir::BlockId).filter_map(|bid| whole_unroll(func, bid, readers)).collect()
}

/// The scalar 32-bit shared loads item 4 may merge: unguarded, not volatile, one word.
fn mergeable_shared_load(instr: &ptx_ir::Instr) -> bool {
    instr.class == InstrClass::Load(Space::Shared)
        && instr.base() == "ld"
        && instr.guard.is_none()
        && instr.vector_width() == 1
        && !instr.has_modifier("volatile")
        && matches!(instr.ty(), Some("f32" | "b32" | "u32" | "s32"))
}

/// The loads ptxas issues for words at byte `offsets` (sorted, distinct) from a base aligned
/// to `align` bytes (items 4 and 7): from the lowest offset up, four words 16-byte aligned
/// are one `LDS.128`, else two 8-byte aligned one `LDS.64`, else the word alone; (first
/// offset, words) of each.
fn vector_runs(offsets: &[i64], align: i64) -> Vec<(i64, i64)> {
    let at: HashSet<i64> = offsets.iter().copied().collect();
    let mut taken: HashSet<i64> = HashSet::new();
    let mut runs = Vec::new();
    for &o in offsets {
        if taken.contains(&o) {
            continue;
        }
        let width = [4i64, 2]
            .into_iter()
            .find(|w| {
                let bytes = w * 4;
                align >= bytes && o.rem_euclid(bytes) == 0 && (0..*w).all(|k| at.contains(&(o + 4 * k)) && !taken.contains(&(o + 4 * k)))
            })
            .unwrap_or(1);
        for k in 0..width {
            taken.insert(o + 4 * k);
        }
        runs.push((o, width));
    }
    runs
}

/// Item 7: a loop unrolled whole lays its copies' shared loads from a stepped address
/// register side by side (`[r + o + k·step]` for copy k), and ptxas merges them as item 4
/// does within a block: nvdisasm of the hand-written loop of two `ld.shared.f32` at
/// `[r]`, `[r+4]` stepping `r` by 8 shows `LDS.128`s, two per four copies, where each copy
/// alone would be one `LDS.64`. The loads' share of issues: the vector loads that cover
/// every copy's offsets, over what the copies issue after item 4's merges.
fn merged_across_copies(func: &Function, loops: &[UnrolledLoop], vectorised: &HashMap<InstrId, InstrId>) -> HashMap<InstrId, f64> {
    let mut shares = HashMap::new();
    for l in loops {
        let block = &func.blocks[l.block as usize];
        for &(reg, step) in &l.address_steps {
            if step <= 0 {
                continue;
            }
            let loads: Vec<(InstrId, i64)> = block
                .instrs
                .clone()
                .filter_map(|id| {
                    let i = func.instr(id)?;
                    if !mergeable_shared_load(i) {
                        return None;
                    }
                    func.operands_of(i).iter().find_map(|op| match op {
                        Operand::Addr { base: AddrBase::Reg(r), offset } if *r == reg => Some((id, *offset)),
                        _ => None,
                    })
                })
                .collect();
            let issued: Vec<InstrId> = loads.iter().map(|(id, _)| *id).filter(|id| !vectorised.contains_key(id)).collect();
            if issued.is_empty() {
                continue;
            }
            // The alignment of the register as the loop starts (its definitions outside it).
            let align = func
                .defs_of(reg)
                .iter()
                .filter(|d| func.instr(**d).is_some_and(|i| i.block != l.block))
                .map(|d| def_alignment(func, *d, &mut HashSet::new()))
                .min()
                .unwrap_or(1);
            let mut offsets: Vec<i64> = (0..l.trips as i64).flat_map(|k| loads.iter().map(move |(_, o)| o + k * step)).collect();
            offsets.sort_unstable();
            offsets.dedup();
            let groups = vector_runs(&offsets, align).len() as f64;
            let per_copies = (issued.len() as u64 * l.trips) as f64;
            if groups < per_copies {
                for id in issued {
                    shares.insert(id, groups / per_copies);
                }
            }
        }
    }
    shares
}

/// An immediate operand's value.
fn imm(op: Option<&Operand>) -> Option<i64> {
    match op {
        Some(Operand::Imm(v)) => Some(*v),
        _ => None,
    }
}

/// A block that loops onto itself on a counter, with no `.pragma "nounroll"` (nvcc's
/// `#pragma unroll 1`, which keeps ptxas from unrolling it at all): the branch back, guarded
/// by a comparison of the block's (made there, read by the branch alone) of a counter
/// register with an immediate or a register, the counter stepped once in the block by an
/// immediate and read there by nothing else.
struct SelfLoop {
    ids: Vec<InstrId>,
    bra_id: InstrId,
    negated: bool,
    setp_id: InstrId,
    step_id: InstrId,
    step: i64,
    /// The comparison's other operand: an immediate, or a register (`None`) the loop does
    /// not define.
    bound: Option<i64>,
    counter_left: bool,
    /// The counter's start, when its one definition outside the loop is a `mov` of an
    /// immediate.
    init: Option<i64>,
}

fn self_loop(func: &Function, bid: ptx_ir::ir::BlockId, readers: &HashMap<RegId, Vec<InstrId>>) -> Option<SelfLoop> {
    let block = func.blocks.get(bid as usize)?;
    if !block.reachable || block.no_unroll || block.target != Some(bid) || block.instrs.is_empty() {
        return None;
    }
    let ids: Vec<InstrId> = block.instrs.clone().collect();
    let bra_id = *ids.last()?;
    let bra = func.instr(bra_id)?;
    if bra.base() != "bra" {
        return None;
    }
    let guard = bra.guard?;
    // The comparison that makes the guard, in the block, read by the branch alone.
    let setp_id = func.unique_def(guard.reg)?;
    let setp = func.instr(setp_id)?;
    if setp.base() != "setp" || setp.block != bid || setp.guard.is_some() || single_reader(guard.reg, readers) != Some(bra_id) {
        return None;
    }
    let ops = func.operands_of(setp);
    let in_block = |r: &RegId| func.defs_of(*r).iter().any(|d| func.instr(*d).is_some_and(|i| i.block == bid));
    let (counter, bound, counter_left) = match (ops.get(1), ops.get(2)) {
        (Some(Operand::Reg(c)), Some(Operand::Imm(b))) => (*c, Some(*b), true),
        (Some(Operand::Imm(b)), Some(Operand::Reg(c))) => (*c, Some(*b), false),
        (Some(Operand::Reg(c)), Some(Operand::Reg(b))) if in_block(c) && !in_block(b) => (*c, None, true),
        (Some(Operand::Reg(b)), Some(Operand::Reg(c))) if in_block(c) && !in_block(b) => (*c, None, false),
        _ => return None,
    };
    // The counter: one step in the block by an immediate.
    let defs = func.defs_of(counter);
    let (inside, outside): (Vec<InstrId>, Vec<InstrId>) = defs.iter().partition(|d| func.instr(**d).is_some_and(|i| i.block == bid));
    let (&[step_id], false) = (inside.as_slice(), outside.is_empty()) else { return None };
    let step_i = func.instr(step_id)?;
    let step_ops = func.operands_of(step_i);
    if !matches!(step_i.base(), "add" | "sub") || step_i.guard.is_some() || !matches!(step_ops.get(1), Some(Operand::Reg(r)) if *r == counter) {
        return None;
    }
    let step = imm(step_ops.get(2))? * if step_i.base() == "sub" { -1 } else { 1 };
    if step == 0 {
        return None;
    }
    // The counter's readers: its step, the comparison, and nothing else in the loop.
    let counter_readers = readers.get(&counter).map_or(&[][..], Vec::as_slice);
    if counter_readers.iter().any(|r| *r != step_id && *r != setp_id && func.instr(*r).is_some_and(|i| i.block == bid)) {
        return None;
    }
    let init = match outside.as_slice() {
        &[init_id] => func.instr(init_id).filter(|i| i.base() == "mov" && i.guard.is_none()).and_then(|i| imm(func.operands_of(i).get(1))),
        _ => None,
    };
    Some(SelfLoop { ids, bra_id, negated: guard.negated, setp_id, step_id, step, bound, counter_left, init })
}

/// The loop control of a self loop: its counter step, comparison and branch, and the
/// registers the block steps by an immediate that nothing in it reads but memory
/// instructions as their address base (or nothing at all: an index the code after the
/// loop reads); with the address registers' steps in bytes.
fn loop_control(func: &Function, bid: ptx_ir::ir::BlockId, l: &SelfLoop, readers: &HashMap<RegId, Vec<InstrId>>) -> (Vec<InstrId>, Vec<(RegId, i64)>) {
    let mut control = vec![l.step_id, l.setp_id, l.bra_id];
    let mut address_steps = Vec::new();
    for &id in &l.ids {
        let Some(i) = func.instr(id) else { continue };
        if id == l.step_id || !matches!(i.base(), "add" | "sub") || i.guard.is_some() {
            continue;
        }
        let [dst] = func.dsts(i) else { continue };
        let o = func.operands_of(i);
        if !(matches!(o.get(1), Some(Operand::Reg(r)) if r == dst) && imm(o.get(2)).is_some()) {
            continue;
        }
        let addresses_only = readers.get(dst).map_or(&[][..], Vec::as_slice).iter().all(|r| {
            *r == id
                || func.instr(*r).is_some_and(|u| {
                    u.block != bid
                        || (matches!(u.class, InstrClass::Load(_) | InstrClass::Store(_))
                            && func.operands_of(u).iter().any(|op| matches!(op, Operand::Addr { base: AddrBase::Reg(b), .. } if b == dst))
                            && !func.operands_of(u).iter().any(|op| matches!(op, Operand::Reg(b) if b == dst)))
                })
        });
        if addresses_only {
            control.push(id);
            let st = imm(o.get(2)).unwrap_or(0);
            address_steps.push((*dst, if i.base() == "sub" { -st } else { st }));
        }
    }
    (control, address_steps)
}

/// Block `bid`, a loop onto itself, when ptxas unrolls it whole.
fn whole_unroll(func: &Function, bid: ptx_ir::ir::BlockId, readers: &HashMap<RegId, Vec<InstrId>>) -> Option<UnrolledLoop> {
    let l = self_loop(func, bid, readers)?;
    let (bound, init) = (l.bound?, l.init?);
    let setp = func.instr(l.setp_id)?;
    // Iterations: the branch is taken while the comparison holds (or fails, when negated).
    let compared_after_step = l.step_id < l.setp_id;
    let signed = setp.modifiers().any(|m| matches!(m, "s32" | "s64" | "s16"));
    let wide = setp.modifiers().any(|m| matches!(m, "s64" | "u64" | "b64"));
    let op = setp.modifiers().find(|m| matches!(*m, "lt" | "lo" | "le" | "ls" | "gt" | "hi" | "ge" | "hs" | "ne" | "eq"))?;
    let holds = |v: i64| -> bool {
        let (a, b) = if l.counter_left { (v, bound) } else { (bound, v) };
        let (a, b) = match (signed, wide) {
            (true, _) => (a as i128, b as i128),
            (false, true) => (a as u64 as i128, b as u64 as i128),
            (false, false) => (a as u32 as i128, b as u32 as i128),
        };
        match op {
            "lt" | "lo" => a < b,
            "le" | "ls" => a <= b,
            "gt" | "hi" => a > b,
            "ge" | "hs" => a >= b,
            "ne" => a != b,
            "eq" => a == b,
            _ => false,
        }
    };
    let mut v = init;
    let mut trips: u64 = 0;
    loop {
        trips += 1;
        if trips > MAX_TRIP_SEARCH {
            return None;
        }
        let after = v.wrapping_add(l.step);
        let compared = if compared_after_step { after } else { v };
        if holds(compared) == l.negated {
            break;
        }
        v = after;
    }
    let (control, address_steps) = loop_control(func, bid, &l, readers);
    // What the copies keep: the body less its control.
    let body = (l.ids.len() - control.len()) as u64;
    (trips.saturating_mul(body) <= FULL_UNROLL_INSTRUCTIONS).then_some(UnrolledLoop { block: bid, trips, control, address_steps })
}

/// The most instructions four copies of a loop body (less its control) may have for ptxas
/// to unroll a loop with a run-time trip count by 4 (item 8). An estimate between what
/// nvdisasm showed unrolled (nvcc's 4-way unrolled body of eight shared loads and six FMAs
/// per source iteration: 61 SASS instructions, 229 in the 16-way loop) and what it left as
/// it was (ten loads and eight FMAs: 77; eight global loads and six FMAs: 65).
pub const PARTIAL_UNROLL_INSTRUCTIONS: u64 = 240;

/// Item 8: block `bid`, a loop onto itself with a run-time trip count, when ptxas unrolls
/// it by 4. Loops with a constant trip count are item 7's (or unrolled by other factors,
/// not modelled); a loop behind `.pragma "nounroll"` stays as it is.
fn partial_unroll(func: &Function, bid: ptx_ir::ir::BlockId, readers: &HashMap<RegId, Vec<InstrId>>, removed: &HashSet<InstrId>) -> Option<PartialUnroll> {
    let l = self_loop(func, bid, readers)?;
    // A trip count known before run time, from immediates or from what the analysis of the
    // loop resolves (a counter started from a register that holds a constant).
    let constant = func.loops.iter().any(|lp| lp.header == bid && matches!(lp.trip_count, ptx_ir::TripCount::Constant(_)));
    if (l.bound.is_some() && l.init.is_some()) || constant {
        return None;
    }
    let (control, _) = loop_control(func, bid, &l, readers);
    let issued = l.ids.iter().filter(|id| !removed.contains(id)).count() as u64;
    let body = issued.saturating_sub(control.len() as u64);
    (4 * body <= PARTIAL_UNROLL_INSTRUCTIONS).then_some(PartialUnroll { block: bid, branch: l.bra_id, control })
}

/// Item 8: per entry into a loop ptxas unrolled by 4 that runs `trips` iterations (of the
/// PTX loop, rounded), how many times its control issues, and the instructions of the
/// dispatch between the unrolled copies. nvdisasm (ptxas 13.5, sm_86) of nvcc's loops
/// unrolled by 4 (`for (j = 0; j < n; ++j) acc += s[t + j] * a[j]`, a 2-D convolution's taps
/// from shared memory): a loop of 16 copies while more than 12 remain (`ISETP.GT ... 0xc`),
/// then 8 copies when more than 4 remain, then the loop of 4 (the PTX's) for the rest;
/// the control (counter, index and address steps, comparison, branch) once per group of
/// copies; around them `ISETP.GT` ×3, `ISETP.NE.OR`, `PLOP3` ×1-3 and four branches per
/// entry.
pub fn partial_unroll_issues(trips: f64) -> (f64, [(InstrClass, f64); 2]) {
    let t = trips.round().max(1.0) as u64;
    let rest = t % 4;
    let groups = t / 4 + u64::from(rest >= 2) + rest % 2;
    let int = 5 + u64::from(t >= 4) + u64::from(rest >= 2);
    (groups as f64, [(InstrClass::IntAlu, int as f64), (InstrClass::Branch, 4.0)])
}

impl Folding {
    /// This folding with item 8 applied at the loops' trip counts (`trips_of` a block:
    /// the iterations per entry of the loop it forms): each loop's control issued
    /// [`partial_unroll_issues`]'s groups over its iterations, its dispatch spread over
    /// them as extra instructions of its branch.
    pub fn with_trip_counts(&self, trips_of: impl Fn(ptx_ir::ir::BlockId) -> Option<f64>) -> Folding {
        let mut res = self.clone();
        for l in &self.partial_unrolls {
            let Some(t) = trips_of(l.block).filter(|t| t.is_finite() && *t > 0.0) else { continue };
            let (groups, dispatch) = partial_unroll_issues(t);
            let share = (groups / t.round().max(1.0)).min(1.0);
            for id in &l.control {
                *res.issue_share.entry(*id).or_insert(1.0) *= share;
            }
            res.extra_per_execution.insert(l.branch, dispatch.iter().map(|(c, n)| (*c, n / t.max(1.0))).collect());
        }
        res
    }
}

/// Item 4: the scalar shared loads that ptxas merges into a vector load of an earlier one.
fn vectorised_shared_loads(func: &Function) -> HashMap<InstrId, InstrId> {
    // (block, base register) → (offset, instruction) of the candidate loads, in order.
    let mut groups: HashMap<(u32, RegId), Vec<(i64, InstrId)>> = HashMap::new();
    for (id, instr) in func.instrs.iter().enumerate() {
        if !mergeable_shared_load(instr) {
            continue;
        }
        let addr = func.operands_of(instr).iter().find_map(|op| match op {
            Operand::Addr { base: AddrBase::Reg(r), offset } => Some((*r, *offset)),
            _ => None,
        });
        if let Some((reg, offset)) = addr {
            groups.entry((instr.block, reg)).or_default().push((offset, id as InstrId));
        }
    }
    let mut merged = HashMap::new();
    for ((_, reg), mut loads) in groups {
        let align = known_alignment(func, reg, &mut HashSet::new());
        if align < 8 {
            continue;
        }
        loads.sort_unstable();
        loads.dedup_by_key(|(o, _)| *o);
        let at: HashMap<i64, InstrId> = loads.iter().copied().collect();
        let offsets: Vec<i64> = loads.iter().map(|(o, _)| *o).collect();
        for (o, width) in vector_runs(&offsets, align).into_iter().filter(|(_, w)| *w > 1) {
            let members: Vec<InstrId> = (0..width).map(|w| at[&(o + 4 * w)]).collect();
            let leader = members.iter().copied().min().unwrap_or(at[&o]);
            for m in members.into_iter().filter(|m| *m != leader) {
                merged.insert(m, leader);
            }
        }
    }
    merged
}

/// The alignment in bytes (a power of two, at most 16) that the arithmetic defining `reg`
/// proves: shifts and multiplications by powers of two, masks that clear the low bits,
/// sums of aligned values, and `.shared` variables' addresses (ptxas places them; it was
/// seen to align them to 16 bytes). 1 when nothing is known. A register written in a loop
/// (`p = p + 32`) is as aligned as all its definitions: a definition that reads the register
/// being examined assumes it aligned, which the other definitions then decide.
fn known_alignment(func: &Function, reg: RegId, visiting: &mut HashSet<RegId>) -> i64 {
    const MAX: i64 = 16;
    if visiting.contains(&reg) {
        return MAX;
    }
    if visiting.len() > 24 {
        return 1;
    }
    let defs = func.defs_of(reg);
    if defs.is_empty() || defs.len() > 4 {
        return 1;
    }
    visiting.insert(reg);
    let align = defs.iter().map(|d| def_alignment(func, *d, visiting)).min().unwrap_or(1);
    visiting.remove(&reg);
    align
}

fn def_alignment(func: &Function, def: InstrId, visiting: &mut HashSet<RegId>) -> i64 {
    const MAX: i64 = 16;
    let Some(instr) = func.instr(def) else { return 1 };
    let ops = func.operands_of(instr);
    let mut of = |op: Option<&Operand>| -> i64 {
        match op {
            Some(Operand::Reg(r)) => known_alignment(func, *r, visiting),
            Some(Operand::Imm(v)) => if *v == 0 { MAX } else { (1i64 << v.trailing_zeros().min(4)).min(MAX) },
            Some(Operand::Symbol(_)) => MAX,
            _ => 1,
        }
    };
    match instr.base() {
        "mov" | "cvt" | "cvta" => of(ops.get(1)),
        "add" | "sub" => of(ops.get(1)).min(of(ops.get(2))),
        "shl" => match imm(ops.get(2)) {
            Some(k) if (0..63).contains(&k) => (of(ops.get(1)) << k.min(4)).min(MAX),
            _ => 1,
        },
        "mul" if !instr.has_modifier("hi") => (of(ops.get(1)) * of(ops.get(2))).min(MAX),
        "mad" if !instr.has_modifier("hi") => ((of(ops.get(1)) * of(ops.get(2))).min(MAX)).min(of(ops.get(3))),
        "and" => of(ops.get(1)).max(of(ops.get(2))),
        _ => 1,
    }
}

/// Whether ptxas resolves `instr` into its readers' operands (item 3 of the module docs).
fn is_operand(func: &Function, id: InstrId, instr: &ptx_ir::Instr, readers: &HashMap<RegId, Vec<InstrId>>) -> bool {
    if instr.guard.is_some() {
        return false;
    }
    let [dst] = func.dsts(instr) else { return false };
    // One definition: a register written twice is a merge that needs its own instruction.
    if func.defs_of(*dst).len() != 1 {
        return false;
    }
    let ops = func.operands_of(instr);
    let src = ops.get(1);
    let wide = |t: Option<&str>| t.is_some_and(|t| t.ends_with("64"));
    match instr.base() {
        "mov" => match src {
            Some(Operand::Reg(r)) => match func.register(*r).and_then(|reg| reg.special) {
                // %ntid and %nctaid live in the constant bank; %tid, %ctaid, %laneid ... are S2R.
                Some(sr) => sr.is_launch_config(),
                // A copy or bit cast between registers: coalesced by the allocator.
                None => true,
            },
            // A 32-bit immediate or a .shared variable's address, read by instructions
            // that take it as an immediate or an address offset (not as stored data).
            Some(Operand::Imm(_) | Operand::Float(_) | Operand::Symbol(_)) if !wide(instr.ty()) => {
                readers.get(dst).map_or(&[][..], Vec::as_slice).iter().all(|u| {
                    func.instr(*u).is_some_and(|ui| {
                        !matches!(ui.class, InstrClass::Store(_) | InstrClass::Atomic(_) | InstrClass::Move)
                            && ui.guard.is_none_or(|g| g.reg != *dst)
                    })
                })
            }
            _ => false,
        },
        "cvta" => true,
        "ld" if instr.class == InstrClass::Load(Space::Param) && func.kind == FunctionKind::Entry => {
            !used_as_address(func, id, *dst, readers, 0)
        }
        _ => false,
    }
}

/// Whether `reg` (written by `def`) reaches an address operand as is, through moves and
/// address conversions only.
fn used_as_address(func: &Function, def: InstrId, reg: RegId, readers: &HashMap<RegId, Vec<InstrId>>, depth: u32) -> bool {
    if depth > 4 {
        return true;
    }
    readers.get(&reg).map_or(&[][..], Vec::as_slice).iter().any(|&u| {
        let Some(ui) = func.instr(u) else { return false };
        if u == def {
            return false;
        }
        let as_base = func.operands_of(ui).iter().any(|op| matches!(op, Operand::Addr { base: AddrBase::Reg(r), .. } if *r == reg));
        as_base
            || (matches!(ui.base(), "mov" | "cvta")
                && func.dsts(ui).first().is_some_and(|d| used_as_address(func, u, *d, readers, depth + 1)))
    })
}

/// The opcode ptxas issues for an `add`/`sub` that absorbed a `mul`: `fma.rn.f32`
/// (`fma.rn.ftz.f32` with `.ftz`), or `mad.wide.s32` (`.u32`) for a 64-bit add that
/// absorbed a `mul.wide`.
pub fn fused_opcode(add: &ptx_ir::Instr, mul: &ptx_ir::Instr) -> String {
    if mul.has_modifier("wide") {
        return format!("mad.wide.{}", mul.ty().unwrap_or("s32"));
    }
    let ty = add.ty().unwrap_or("f32");
    if add.has_modifier("ftz") { format!("fma.rn.ftz.{ty}") } else { format!("fma.rn.{ty}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func(body: &str) -> ptx_ir::Module {
        let src = format!(
            ".version 9.5\n.target sm_80\n.address_size 64\n.const .align 4 .b8 cm[64];\n.shared .align 4 .b8 sh[4096];\n.visible .entry k(.param .u64 p0)\n{{\n.reg .pred %p<4>;\n.reg .f32 %f<32>;\n.reg .f64 %fd<8>;\n.reg .b64 %rd<8>;\n.reg .b32 %r<8>;\n{body}\nret;\n}}\n"
        );
        let (m, errors) = ptx_ir::parse_and_lower(&src);
        assert!(errors.is_empty(), "{errors:?}");
        m
    }

    fn lines_of(m: &ptx_ir::Module, ids: impl IntoIterator<Item = InstrId>) -> Vec<String> {
        let f = &m.functions[0];
        let mut v: Vec<String> = ids.into_iter().map(|i| f.instrs[i as usize].opcode.to_string()).collect();
        v.sort();
        v
    }

    #[test]
    fn contracts_what_ptxas_contracts_and_nothing_else() {
        // The same sequence was assembled with ptxas 13.5 (sm_80) and disassembled with
        // nvdisasm: FFMA, FFMA (x - a·b), FMUL+FADD (mul.rn), FMUL+FADD (add.rn),
        // FMUL+FADD (product read twice), FFMA.FTZ; and DFMA for the f64 pair.
        let m = func(
            "ld.param.u64 %rd1, [p0];
             ld.global.f32 %f1, [%rd1];
             ld.global.f32 %f2, [%rd1+4];
             ld.global.f32 %f3, [%rd1+8];
             mul.f32 %f4, %f1, %f2;
             add.f32 %f5, %f4, %f3;
             mul.f32 %f6, %f5, %f1;
             sub.f32 %f7, %f3, %f6;
             mul.rn.f32 %f8, %f7, %f2;
             add.f32 %f9, %f8, %f1;
             mul.f32 %f10, %f9, %f9;
             add.rn.f32 %f11, %f10, %f2;
             mul.f32 %f12, %f11, %f3;
             add.f32 %f13, %f12, %f12;
             mul.ftz.f32 %f14, %f13, %f3;
             add.ftz.f32 %f15, %f14, %f1;
             st.global.f32 [%rd1], %f15;
             ld.global.f64 %fd1, [%rd1];
             mul.f64 %fd2, %fd1, %fd1;
             add.f64 %fd3, %fd2, %fd1;
             st.global.f64 [%rd1], %fd3;",
        );
        let f = &m.functions[0];
        let fold = analyse(f);
        assert_eq!(fold.contracted.len(), 4, "{:?}", lines_of(&m, fold.contracted.values().copied()));
        assert_eq!(lines_of(&m, fold.contracted.keys().copied()), vec!["add.f32", "add.f64", "add.ftz.f32", "sub.f32"]);
        assert!(fold.const_operands.is_empty());
    }

    #[test]
    fn comparisons_take_a_predicate_combine_and_wide_multiplies_their_add() {
        // ptxas 13.5 (sm_80), nvdisasm: `ISETP.GE.AND P0, PT, R2, c[0x0][0x168], PT` then
        // `ISETP.LT.OR P0, PT, R2, R9, P0` (the `or.pred`), `IMAD.WIDE R2, R2, R3,
        // c[0x0][0x160]` and `IMAD.WIDE.U32 R4, R9, R4, c[0x2][0x0]` (both `mul.wide` +
        // `add.s64`, the immediate from the constant bank), `FSETP.GT.AND P0, PT, R7, -R4,
        // !P1` (the `and.pred`, whose other input `%p5` the `selp` reads too).
        let m = func(
            "ld.param.u64 %rd1, [p0];
             cvta.to.global.u64 %rd2, %rd1;
             mov.u32 %r2, %tid.x;
             mov.u32 %r3, %ctaid.x;
             setp.lt.s32 %p1, %r2, %r3;
             setp.ge.s32 %p2, %r2, 99;
             or.pred %p3, %p1, %p2;
             @%p3 bra $L_end;
             mul.wide.s32 %rd3, %r2, 4;
             add.s64 %rd4, %rd2, %rd3;
             ld.global.f32 %f1, [%rd4];
             mul.wide.u32 %rd5, %r3, 8;
             add.s64 %rd6, %rd5, 64;
             ld.global.f32 %f2, [%rd6];
             add.f32 %f3, %f1, %f2;
             setp.gt.f32 %p4, %f3, 0f00000000;
             setp.lt.s32 %p5, %r3, 7;
             and.pred %p6, %p4, %p5;
             selp.f32 %f4, %f3, %f1, %p5;
             @%p6 st.global.f32 [%rd4], %f4;
             $L_end:",
        );
        let f = &m.functions[0];
        let fold = analyse(f);
        assert_eq!(lines_of(&m, fold.predicate_combines.iter().copied()), vec!["and.pred", "or.pred"]);
        assert_eq!(lines_of(&m, fold.wide_multiply_adds.values().copied()), vec!["mul.wide.s32", "mul.wide.u32"]);
        let add = *fold.wide_multiply_adds.keys().min().expect("a fused add");
        let mul = fold.fused_with(add).and_then(|m| f.instr(m)).expect("its multiply");
        assert_eq!(fused_opcode(&f.instrs[add as usize], mul), "mad.wide.s32");
        // A comparison absorbs one combine; a predicate read twice is not absorbed.
        let m = func(
            "mov.u32 %r2, %tid.x;
             setp.lt.s32 %p1, %r2, 5;
             setp.ge.s32 %p2, %r2, 9;
             or.pred %p3, %p1, %p2;
             and.pred %p0, %p1, %p3;
             @%p0 bra $L_end;
             $L_end:",
        );
        let fold = analyse(&m.functions[0]);
        assert_eq!(lines_of(&m, fold.predicate_combines.iter().copied()), vec!["or.pred"]);
    }

    #[test]
    fn divisions_by_registers_and_ieee_roots_are_sequences() {
        // nvdisasm (ptxas 13.5, sm_86) of each against an add: the counts of item 6.
        let m = func(
            "ld.param.u64 %rd1, [p0];
             ld.global.u32 %r1, [%rd1];
             ld.global.u32 %r2, [%rd1+4];
             div.s32 %r3, %r1, %r2;
             rem.u32 %r4, %r1, %r2;
             div.s32 %r5, %r1, 7;
             ld.global.f32 %f1, [%rd1+8];
             div.rn.f32 %f2, %f1, %f1;
             div.approx.f32 %f3, %f1, %f2;
             sqrt.rn.f32 %f4, %f3;
             rcp.rn.f32 %f5, %f4;
             sqrt.approx.f32 %f6, %f5;
             ld.global.f64 %fd1, [%rd1+16];
             div.rn.f64 %fd2, %fd1, %fd1;
             max.f64 %fd3, %fd2, %fd1;
             cvt.sat.f64.f64 %fd4, %fd3;
             cvt.rn.f64.f32 %fd5, %f6;
             max.f32 %f7, %f6, %f5;
             add.f64 %fd6, %fd4, %fd5;
             st.global.f64 [%rd1], %fd6;
             st.global.f32 [%rd1+8], %f7;",
        );
        let f = &m.functions[0];
        let fold = analyse(f);
        let mut expanded: Vec<(String, u32)> = fold.expansions.iter().map(|(id, e)| (f.instrs[*id as usize].opcode.to_string(), e.iter().map(|(_, k)| k).sum())).collect();
        expanded.sort();
        // FP64 minimum/maximum and the [0, 1] clamp: `DSETP` with selects and moves (one
        // `FMNMX` for f32, and a conversion stays one instruction).
        assert_eq!(
            expanded,
            vec![
                ("cvt.sat.f64.f64".to_string(), 11),
                ("div.rn.f32".to_string(), 9),
                ("div.rn.f64".to_string(), 14),
                ("div.s32".to_string(), 22),
                ("max.f64".to_string(), 5),
                ("rcp.rn.f32".to_string(), 9),
                ("rem.u32".to_string(), 15),
                ("sqrt.rn.f32".to_string(), 9)
            ]
        );
        // The integer division's sequence: two conversions and a reciprocal besides integer work.
        let div = fold.expansions.iter().find(|(id, _)| f.instrs[**id as usize].opcode.as_ref() == "div.s32").map(|(_, e)| *e).expect("div.s32");
        assert!(div.contains(&(InstrClass::Sfu, 1)) && div.contains(&(InstrClass::Conversion, 2)), "{div:?}");
    }

    #[test]
    fn sixty_four_bit_integer_arithmetic_is_two_halves() {
        // nvdisasm (ptxas 13.5, sm_86) of a `size_t` grid-stride loop: `IADD3` + `IADD3.X`
        // per 64-bit add, `IMAD.SHL.U32` + `SHF.L.U64.HI` for the shift, `ISETP` +
        // `ISETP.EX` for the comparison; `(a + t) * (b + t)` on 64 bits, three `IMAD`s; a
        // `mul.wide` + `add.s64` stays one `IMAD.WIDE`.
        let m = func(
            "ld.param.u64 %rd1, [p0];
             mov.u32 %r1, %tid.x;
             cvt.u64.u32 %rd2, %r1;
             shl.b64 %rd3, %rd2, 2;
             add.s64 %rd4, %rd1, %rd3;
             mul.lo.s64 %rd5, %rd2, %rd2;
             setp.lt.u64 %p1, %rd5, %rd4;
             mul.wide.u32 %rd6, %r1, 4;
             add.s64 %rd7, %rd1, %rd6;
             xor.b64 %rd8, %rd5, %rd3;
             st.global.u64 [%rd1], %rd8;
             @%p1 st.global.u32 [%rd7], %r1;",
        );
        let f = &m.functions[0];
        let fold = analyse(f);
        let mut halves: Vec<(String, u32)> = fold.expansions.iter().map(|(id, e)| (f.instrs[*id as usize].opcode.to_string(), e.iter().map(|(_, k)| k).sum())).collect();
        halves.sort();
        assert_eq!(halves, vec![("add.s64".to_string(), 1), ("mul.lo.s64".to_string(), 2), ("setp.lt.u64".to_string(), 1), ("shl.b64".to_string(), 1), ("xor.b64".to_string(), 1)]);
        assert_eq!(fold.wide_multiply_adds.len(), 1);
    }

    #[test]
    fn a_product_used_in_another_block_is_not_contracted() {
        let m = func(
            "ld.param.u64 %rd1, [p0];
             ld.global.f64 %fd1, [%rd1];
             mul.f64 %fd2, %fd1, %fd1;
             mov.u32 %r1, %tid.x;
             setp.lt.s32 %p1, %r1, 7;
             @%p1 bra $L1;
             add.f64 %fd3, %fd2, %fd1;
             st.global.f64 [%rd1], %fd3;
             $L1:",
        );
        assert!(analyse(&m.functions[0]).contracted.is_empty());
    }

    #[test]
    fn constant_loads_at_fixed_addresses_become_operands() {
        // cm[3] feeds an FMA: a c[0x3][0xc] operand. cm[j] (a register address) is a load
        // (ULDC/LDC). cm[5] stored as is needs a register: a load too.
        let m = func(
            "ld.param.u64 %rd1, [p0];
             ld.global.f32 %f1, [%rd1];
             ld.const.f32 %f2, [cm+12];
             fma.rn.f32 %f3, %f1, %f2, %f1;
             mov.u64 %rd2, cm;
             ld.const.f32 %f4, [%rd2+8];
             add.f32 %f5, %f3, %f4;
             ld.const.f32 %f6, [cm+20];
             st.global.f32 [%rd1], %f6;
             st.global.f32 [%rd1+4], %f5;",
        );
        let fold = analyse(&m.functions[0]);
        let lines: Vec<u32> = fold.const_operands.iter().map(|i| m.functions[0].instrs[*i as usize].ptx_line).collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        let instr = &m.functions[0].instrs[*fold.const_operands.iter().next().unwrap() as usize];
        assert!(m.functions[0].operands_of(instr).iter().any(|op| matches!(op, Operand::Addr { offset: 12, .. })));
    }

    #[test]
    fn moves_conversions_and_parameters_become_operands() {
        // The shapes of examples/reduce.cu's reduce_shuffle; ptxas 13.5 (sm_80) issues
        // S2R for %tid, nothing for the %ntid read, the cvta, the pointer parameter added to
        // an offset, the bit casts and the shuffle offset; HFMA2.MMA for the merged zero,
        // MOV for the pointer parameter used as an address as is.
        let m = func(
            "ld.param.u64 %rd1, [p0];
             mov.u32 %r1, %tid.x;
             mov.u32 %r2, %ntid.x;
             mul.lo.s32 %r3, %r1, %r2;
             mov.f32 %f1, 0f00000000;
             setp.ge.s32 %p1, %r3, 100;
             @%p1 bra $L1;
             cvta.to.global.u64 %rd2, %rd1;
             mul.wide.s32 %rd3, %r3, 4;
             add.s64 %rd4, %rd2, %rd3;
             ld.global.f32 %f1, [%rd4];
             $L1:
             mov.b32 %r4, %f1;
             mov.u32 %r5, 16;
             shfl.sync.down.b32 %r6|%p2, %r4, %r5, 31, -1;
             mov.b32 %f2, %r6;
             add.f32 %f3, %f1, %f2;
             ld.param.u64 %rd5, [p0];
             cvta.to.global.u64 %rd6, %rd5;
             st.global.f32 [%rd6], %f3;",
        );
        let f = &m.functions[0];
        let fold = analyse(f);
        let kept: Vec<String> = f
            .instrs
            .iter()
            .enumerate()
            .filter(|(i, _)| !fold.operands.contains(&(*i as InstrId)))
            .map(|(_, x)| x.opcode.to_string())
            .collect();
        assert_eq!(
            kept,
            vec![
                "mov.u32", // %tid.x: S2R
                "mul.lo.s32",
                "mov.f32", // merged with the load's value
                "setp.ge.s32",
                "bra",
                "mul.wide.s32",
                "add.s64",
                "ld.global.f32",
                "shfl.sync.down.b32",
                "add.f32",
                "ld.param.u64", // the address of the store as is
                "st.global.f32",
                "ret",
            ]
        );
        // The bit casts forward their dependences: the add depends on the shuffle.
        let blocks = crate::build::block_profiles_for_test(f, &fold);
        let last = blocks.iter().find(|b| b.instructions.iter().any(|i| i.opcode.starts_with("shfl"))).unwrap();
        let shfl = last.instructions.iter().position(|i| i.opcode.starts_with("shfl")).unwrap() as u32;
        let add = last.instructions.iter().find(|i| i.opcode == "add.f32").unwrap();
        assert!(add.deps.contains(&shfl), "{:?}", last.instructions);
    }

    /// An atomic whose old value nothing reads (`atomicAdd(&sum, v)` as nvcc writes it,
    /// `atom` with a dead destination, or `red`) is marked: ptxas issues a RED, which the
    /// warp does not wait for; one whose result is read, in its block or another, is not.
    #[test]
    fn atomics_whose_result_nothing_reads_are_marked() {
        let m = func(
            "ld.param.u64 %rd1, [p0];\nmov.f32 %f1, 0f3F800000;\n\
             atom.global.add.f32 %f2, [%rd1], %f1;\nred.global.add.f32 [%rd1+4], %f1;\n\
             atom.global.add.f32 %f3, [%rd1+8], %f1;\nadd.f32 %f4, %f3, %f1;\n\
             atom.global.add.f32 %f5, [%rd1+12], %f1;\nsetp.gt.f32 %p1, %f1, 0f00000000;\n@%p1 bra DONE;\n\
             st.global.f32 [%rd1+16], %f4;\nDONE:\nst.global.f32 [%rd1+20], %f5;",
        );
        let f = &m.functions[0];
        let blocks = crate::build::block_profiles_for_test(f, &analyse(f));
        let atomics: Vec<(String, bool)> =
            blocks.iter().flat_map(|b| &b.instructions).filter(|i| matches!(i.class, InstrClass::Atomic(_))).map(|i| (i.opcode.clone(), i.result_unused)).collect();
        assert_eq!(
            atomics,
            [("atom.global.add.f32".to_string(), true), ("red.global.add.f32".to_string(), true), ("atom.global.add.f32".to_string(), false), ("atom.global.add.f32".to_string(), false)]
        );
    }

    /// `InstrNode::reads_three_registers`: the dependent multiply-subtract chains of a
    /// compute sweep alternate, so no FMA shares a register with the one before it (nvdisasm
    /// of the sm_86 cubin of tests/fixtures/heldout/roofline_sweep.cu: `FFMA R16, R10, R16,
    /// -R7` then `FFMA R17, R11, R17, -R8`, no reuse flags); an outer product's FMAs share
    /// one factor with the previous one; a constant-bank factor, a parameter or an immediate
    /// is no register read; a register passed through a folded `mov` is the register.
    #[test]
    fn fmas_reading_three_registers_the_previous_instruction_did_not_read_are_marked() {
        let m = func(
            "ld.param.u64 %rd1, [p0];
             ld.global.f32 %f1, [%rd1];
             ld.global.f32 %f2, [%rd1+4];
             ld.global.f32 %f3, [%rd1+8];
             ld.global.f32 %f4, [%rd1+12];
             mul.f32 %f5, %f1, %f1;
             sub.f32 %f6, %f5, %f2;
             mul.f32 %f7, %f3, %f3;
             sub.f32 %f8, %f7, %f4;
             mul.f32 %f9, %f1, %f6;
             sub.f32 %f10, %f9, %f2;
             mul.f32 %f11, %f3, %f8;
             sub.f32 %f12, %f11, %f4;
             fma.rn.f32 %f13, %f1, %f3, %f10;
             fma.rn.f32 %f14, %f1, %f4, %f12;
             ld.const.f32 %f15, [cm+8];
             fma.rn.f32 %f16, %f2, %f15, %f13;
             fma.rn.f32 %f17, %f2, 0f40000000, %f14;
             mov.b32 %r1, %f4;
             mov.b32 %f18, %r1;
             fma.rn.f32 %f19, %f18, %f3, %f6;
             st.global.f32 [%rd1], %f16;
             st.global.f32 [%rd1+4], %f17;
             st.global.f32 [%rd1+8], %f19;",
        );
        let f = &m.functions[0];
        let blocks = crate::build::block_profiles_for_test(f, &analyse(f));
        let fmas: Vec<bool> = blocks.iter().flat_map(|b| &b.instructions).filter(|i| i.opcode.starts_with("fma")).map(|i| i.reads_three_registers).collect();
        // The four chain steps (the first two read two registers each: f1·f1 − f2), the
        // outer product's two FMAs (the first shares f3 with the chain step before it, the
        // second f1 with the first), the constant and the immediate factor, and f4 through
        // two moves with f3 and f6, none of which the FMA before it read.
        assert_eq!(fmas, [false, false, true, true, false, false, false, false, true]);
    }

    /// Item 4: four words at 16-byte aligned offsets from a 16-byte aligned base are one
    /// `LDS.128`, two at an 8-byte aligned offset one `LDS.64`; loads 32 bytes apart, or
    /// from a base only known to be 4-byte aligned, stay scalar (ptxas 13.5, sm_86, on a
    /// tiled SGEMM: `As[(row·8 + m)·8 + k]` over `k` vectorised, over `m` not).
    #[test]
    fn consecutive_aligned_shared_loads_are_one_vector_load() {
        let m = func(
            "mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 5;\nmov.u32 %r3, sh;\nadd.s32 %r4, %r3, %r2;\n\
             ld.shared.f32 %f1, [%r4];\nld.shared.f32 %f2, [%r4+4];\nld.shared.f32 %f3, [%r4+8];\nld.shared.f32 %f4, [%r4+12];\n\
             ld.shared.f32 %f5, [%r4+24];\nld.shared.f32 %f6, [%r4+28];\nld.shared.f32 %f7, [%r4+64];\nld.shared.f32 %f8, [%r4+96];\n\
             shl.b32 %r5, %r1, 2;\nadd.s32 %r6, %r3, %r5;\nld.shared.f32 %f9, [%r6];\nld.shared.f32 %f10, [%r6+4];\n\
             add.f32 %f11, %f1, %f2;\nadd.f32 %f12, %f3, %f4;\nadd.f32 %f13, %f5, %f6;\nadd.f32 %f14, %f7, %f8;\nadd.f32 %f15, %f9, %f10;\n\
             add.f32 %f16, %f11, %f12;\nadd.f32 %f17, %f13, %f14;\nadd.f32 %f18, %f16, %f17;\nadd.f32 %f19, %f18, %f15;\n\
             ld.param.u64 %rd1, [p0];\nst.global.f32 [%rd1], %f19;",
        );
        let f = &m.functions[0];
        let folding = analyse(f);
        let offset_of = |id: InstrId| {
            f.operands_of(&f.instrs[id as usize]).iter().find_map(|op| match op {
                Operand::Addr { offset, .. } => Some(*offset),
                _ => None,
            })
        };
        let mut merged: Vec<(Option<i64>, Option<i64>)> = folding.vectorised.iter().map(|(m, l)| (offset_of(*m), offset_of(*l))).collect();
        merged.sort();
        // [r4+4], [r4+8], [r4+12] into [r4]; [r4+28] into [r4+24]; nothing from r6 (4-byte
        // aligned) nor the loads 32 bytes apart.
        assert_eq!(merged, vec![(Some(4), Some(0)), (Some(8), Some(0)), (Some(12), Some(0)), (Some(28), Some(24))]);
        let issued_shared = f.instrs.iter().enumerate().filter(|(i, ins)| ins.class == InstrClass::Load(Space::Shared) && !folding.removed().contains(&(*i as InstrId))).count();
        assert_eq!(issued_shared, 6);
    }

    /// A one-block loop of `trips` iterations (two shared loads, one FMA, an address and a
    /// counter step), optionally behind nvcc's `.pragma "nounroll"`, with the bound an
    /// immediate or a parameter; each thread's row `1 << shift` bytes wide.
    fn counted_loop_of(bound: &str, pragma: bool, shift: u32) -> ptx_ir::Module {
        func(&format!(
            "mov.u32 %r1, %tid.x;
             shl.b32 %r2, %r1, {shift};
             mov.u32 %r3, sh;
             add.s32 %r4, %r3, %r2;
             ld.param.u32 %r6, [p0];
             mov.f32 %f1, 0f00000000;
             mov.u32 %r5, 0;
             $L_loop:
             {}
             ld.shared.f32 %f2, [%r4];
             ld.shared.f32 %f3, [%r4+4];
             fma.rn.f32 %f1, %f2, %f3, %f1;
             add.s32 %r4, %r4, 8;
             add.s32 %r5, %r5, 1;
             setp.lt.u32 %p1, %r5, {bound};
             @%p1 bra $L_loop;
             ld.param.u64 %rd1, [p0];
             st.global.f32 [%rd1], %f1;",
            if pragma { ".pragma \"nounroll\";" } else { "" }
        ))
    }

    fn counted_loop(bound: &str, pragma: bool) -> ptx_ir::Module {
        counted_loop_of(bound, pragma, 5)
    }

    #[test]
    fn the_copies_of_a_loop_unrolled_whole_share_vector_loads() {
        // nvdisasm (ptxas 13.5, sm_86): with 32-byte rows, 4 copies of the pair at [r], [r+4]
        // stepping r by 8 are two LDS.128 (each copy alone an LDS.64): half the pairs issue.
        let m = counted_loop("4", false);
        let f = &m.functions[0];
        let folding = analyse(f);
        let shares: Vec<f64> = folding.issue_share.values().copied().collect();
        assert_eq!(shares, vec![0.5], "{:?}", folding.issue_share);
        assert_eq!(folding.vectorised.len(), 1, "item 4 still pairs the copy's two loads");
        // 256 copies: 128 LDS.128 (nvdisasm), the same share.
        let m = counted_loop("256", false);
        assert_eq!(analyse(&m.functions[0]).issue_share.values().copied().collect::<Vec<_>>(), vec![0.5]);
        // 4-byte rows: no alignment for a vector load, eight LDS for four copies (nvdisasm).
        let m = counted_loop_of("4", false, 2);
        let folding = analyse(&m.functions[0]);
        assert!(folding.issue_share.is_empty() && folding.vectorised.is_empty(), "{folding:?}");
        assert_eq!(folding.unrolled_control.len(), 4);
        // A loop kept rolled shares nothing.
        let m = counted_loop("%r6", false);
        assert!(analyse(&m.functions[0]).issue_share.is_empty());
    }

    #[test]
    fn ptxas_unrolls_short_constant_loops_whole_and_drops_their_control() {
        // nvdisasm (ptxas 13.5, sm_86) of this loop at 4 to 512 iterations: no branch, no
        // counter, the address steps folded into the copies' offsets.
        let m = counted_loop("4", false);
        let folding = analyse(&m.functions[0]);
        assert_eq!(lines_of(&m, folding.unrolled_control.iter().copied()), vec!["add.s32", "add.s32", "bra", "setp.lt.u32"]);
        let m = counted_loop("256", false);
        assert_eq!(analyse(&m.functions[0]).unrolled_control.len(), 4);
        // 1024 iterations: ptxas unrolls in part (by 64); the loop stays.
        let m = counted_loop("1024", false);
        assert!(analyse(&m.functions[0]).unrolled_control.is_empty());
        // A run-time bound: unrolled by 4 with a remainder, the control stays.
        let m = counted_loop("%r6", false);
        assert!(analyse(&m.functions[0]).unrolled_control.is_empty());
        // `#pragma unroll 1` in the source: nvcc's `.pragma "nounroll"` keeps it rolled.
        let m = counted_loop("4", true);
        assert!(m.functions[0].blocks.iter().any(|b| b.no_unroll));
        assert!(analyse(&m.functions[0]).unrolled_control.is_empty());
    }

    /// nvcc's loop unrolled by 4 (`for (j = 0; j < n; ++j) acc += s[t + j] * a[j]`, as
    /// nvcc 13.5 writes it for sm_86): four copies, a counter counting down by 4 from a
    /// run-time start to 0, an index and two addresses stepped by immediates.
    fn four_copies(copies_of_fma: usize) -> ptx_ir::Module {
        let body: String = (0..4)
            .map(|k| {
                let mut b = format!("ld.global.nc.f32 %f{}, [%rd4+{}];\n", 10 + k, 4 * k);
                b += &format!("ld.shared.f32 %f{}, [%r9+{}];\n", 20 + k, 4 * k);
                for _ in 0..copies_of_fma {
                    b += &format!("fma.rn.f32 %f1, %f{}, %f{}, %f1;\n", 10 + k, 20 + k);
                }
                b
            })
            .collect();
        func(&format!(
            "mov.u32 %r1, %tid.x;
             ld.param.u32 %r6, [p0];
             ld.param.u64 %rd1, [p0];
             cvta.to.global.u64 %rd4, %rd1;
             mov.u32 %r3, sh;
             shl.b32 %r2, %r1, 2;
             add.s32 %r9, %r3, %r2;
             and.b32 %r7, %r6, 3;
             sub.s32 %r8, %r7, %r6;
             mov.f32 %f1, 0f00000000;
             mov.u32 %r5, 0;
             $L_loop:
             {body}
             add.s32 %r5, %r5, 4;
             add.s64 %rd4, %rd4, 16;
             add.s32 %r9, %r9, 16;
             add.s32 %r8, %r8, 4;
             setp.ne.s32 %p1, %r8, 0;
             @%p1 bra $L_loop;
             st.global.f32 [%rd1], %f1;
             st.global.u32 [%rd1+4], %r5;"
        ))
    }

    #[test]
    fn ptxas_unrolls_run_time_loops_by_four_and_issues_their_control_once_per_group() {
        // nvdisasm (ptxas 13.5, sm_86): nvcc's four copies become sixteen (then eight, then
        // the four), the counter, index and address steps, comparison and branch once per
        // group (tests/sass_counts.rs checks the counts against ptxas).
        let m = four_copies(1);
        let f = &m.functions[0];
        let folding = analyse(f);
        assert_eq!(folding.partial_unrolls.len(), 1, "{:?}", folding.partial_unrolls);
        let l = &folding.partial_unrolls[0];
        assert_eq!(lines_of(&m, l.control.iter().copied()), vec!["add.s32", "add.s32", "add.s32", "add.s64", "bra", "setp.ne.s32"]);
        // A plain loop to a parameter: ptxas unrolls it by 4 as well.
        assert_eq!(analyse(&counted_loop("%r6", false).functions[0]).partial_unrolls.len(), 1);
        // Not: a constant trip count (item 7's), `#pragma unroll 1`, or a body four copies of
        // which pass PARTIAL_UNROLL_INSTRUCTIONS (16 FMAs a copy: 4 × (8 + 64) > 240).
        assert!(analyse(&counted_loop("4", false).functions[0]).partial_unrolls.is_empty());
        assert!(analyse(&counted_loop("1024", false).functions[0]).partial_unrolls.is_empty());
        assert!(analyse(&counted_loop("%r6", true).functions[0]).partial_unrolls.is_empty());
        assert!(analyse(&four_copies(16).functions[0]).partial_unrolls.is_empty());
        // Nor a counter started from a register that holds a constant, to an immediate (the
        // gpu-roofline sweep's inner loop, nvcc's unroll by 16 of N = 400: 25 iterations,
        // which ptxas unrolls by 5, a factor this rule does not model).
        let m = func(
            "mov.u32 %r6, 0;
             mov.f32 %f1, 0f3F800000;
             mov.u32 %r13, %r6;
             $L_loop:
             fma.rn.f32 %f1, %f1, %f1, %f1;
             add.s32 %r13, %r13, 16;
             setp.ne.s32 %p1, %r13, 400;
             @%p1 bra $L_loop;
             ld.param.u64 %rd1, [p0];
             st.global.f32 [%rd1], %f1;",
        );
        assert!(matches!(m.functions[0].loops[0].trip_count, ptx_ir::TripCount::Constant(25)), "{:?}", m.functions[0].loops[0].trip_count);
        assert!(analyse(&m.functions[0]).partial_unrolls.is_empty());
        // Per entry: the groups of copies that run, and the dispatch between them.
        let groups = |t: f64| partial_unroll_issues(t).0;
        assert_eq!([groups(1.0), groups(2.0), groups(3.0), groups(4.0), groups(6.0), groups(7.0), groups(256.0)], [1.0, 1.0, 2.0, 1.0, 2.0, 3.0, 64.0]);
        assert_eq!(partial_unroll_issues(1.0).1, [(InstrClass::IntAlu, 5.0), (InstrClass::Branch, 4.0)]);
        assert_eq!(partial_unroll_issues(6.0).1, [(InstrClass::IntAlu, 7.0), (InstrClass::Branch, 4.0)]);
        // At 256 iterations an entry issues its control 64 times, and 10 dispatch
        // instructions spread over the 256 executions of the branch.
        let counted = folding.with_trip_counts(|b| (b == l.block).then_some(256.0));
        for id in &l.control {
            assert_eq!(counted.issue_share.get(id), Some(&0.25));
        }
        let extra: f64 = counted.extra_per_execution[&l.branch].iter().map(|(_, n)| n).sum();
        assert!((extra * 256.0 - 10.0).abs() < 1e-9, "{extra}");
        // One iteration per entry: the control issues as often as the PTX's, plus nine.
        let once = folding.with_trip_counts(|_| Some(1.0));
        assert_eq!(once.issue_share.get(&l.branch), Some(&1.0));
        assert_eq!(once.extra_per_execution[&l.branch].iter().map(|(_, n)| n).sum::<f64>(), 9.0);
    }

    #[test]
    fn chained_adds_are_one_iadd3_and_adds_of_a_wide_product_one_imad_wide() {
        // nvdisasm (ptxas 13.5, sm_86) of a grid-stride sum unrolled by nvcc: two dependent
        // adds are one `IADD3`; `p + i·4` with the product used twice, one `IMAD.WIDE` each.
        let m = func(
            "ld.param.u64 %rd1, [p0];
             ld.param.u32 %r1, [p0];
             ld.global.u32 %r2, [%rd1];
             ld.global.u32 %r3, [%rd1+4];
             ld.global.u32 %r4, [%rd1+8];
             add.s32 %r5, %r2, %r3;
             add.s32 %r6, %r5, %r4;
             add.s32 %r7, %r6, %r1;
             sub.s32 %r8, %r6, 1;
             add.s32 %r9, %r8, %r7;
             mul.wide.s32 %rd2, %r1, 4;
             add.s64 %rd3, %rd1, %rd2;
             add.s64 %rd4, %rd3, %rd2;
             st.global.u32 [%rd3], %r9;
             st.global.u32 [%rd4], %r8;",
        );
        let f = &m.functions[0];
        let folding = analyse(f);
        let line = |id: InstrId| f.instrs[id as usize].opcode.to_string();
        let pairs: Vec<(String, String)> = folding.three_input_adds.iter().map(|(a, b)| (line(*a), line(*b))).collect();
        // %r5 into %r6's add; %r6 is read twice and %r8 twice: no more pairs but %r7 into
        // %r9's add.
        assert_eq!(folding.three_input_adds.len(), 2, "{pairs:?}");
        let mut firsts: Vec<String> = folding.three_input_adds.keys().map(|id| line(*id)).collect();
        firsts.sort();
        assert_eq!(firsts, vec!["add.s32", "add.s32"]);
        // The 64-bit adds of the product have no second half; the product is computed once.
        let halves: Vec<String> = folding.expansions.keys().map(|id| line(*id)).collect();
        assert!(!halves.iter().any(|o| o == "add.s64"), "{halves:?}");
    }
}
