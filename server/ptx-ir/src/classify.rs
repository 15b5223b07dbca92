//! Mapping a PTX opcode and its modifiers to an [`InstrClass`].
//!
//! The classes are the functional units the performance models count in (CUDA C++
//! Programming Guide, "Arithmetic Instructions" throughput table; PTX ISA §9.7 instruction
//! groups). The rules, in order:
//! - memory opcodes (`ld st atom red tex suld ...`) take the state space from their
//!   modifiers (PTX ISA §5.1; no space means a generic address);
//! - SFU opcodes (`sin cos ex2 lg2 rsqrt tanh`, and `rcp sqrt div` when `.approx`) are
//!   `Sfu` (the "32-bit floating-point reciprocal, reciprocal square root, base-2
//!   logarithm, base 2 exponential, sine, cosine" row of the throughput table);
//! - arithmetic opcodes take their class from the type modifier: `f32` → Fp32, `f64` →
//!   Fp64, `f16 f16x2 bf16 bf16x2` → Fp16, anything else → IntAlu;
//! - unknown opcodes are `Other`, never an error.

use crate::class::{InstrClass, Space};

/// The state space named in a modifier list (`shared::cta` counts as `shared`).
fn space_of(modifiers: &[&str]) -> Option<Space> {
    modifiers.iter().find_map(|m| {
        let m = m.split("::").next().unwrap_or(m);
        Some(match m {
            "global" => Space::Global,
            "shared" => Space::Shared,
            "local" => Space::Local,
            "const" => Space::Const,
            "param" => Space::Param,
            _ => return None,
        })
    })
}

/// The class of a floating-point or integer arithmetic op, from its type modifiers. With
/// several types (`set.lt.u32.f32`, `cvt`-like ops), the last one is the operand type.
fn arith_class(modifiers: &[&str]) -> InstrClass {
    let mut res = InstrClass::IntAlu;
    for m in modifiers {
        res = match *m {
            "f32" | "f32x2" => InstrClass::Fp32,
            "f64" => InstrClass::Fp64,
            "f16" | "f16x2" | "bf16" | "bf16x2" => InstrClass::Fp16,
            "s8" | "u8" | "b8" | "s16" | "u16" | "b16" | "s32" | "u32" | "b32" | "s64" | "u64"
            | "b64" | "s128" | "u128" | "b128" | "pred" => InstrClass::IntAlu,
            _ => continue,
        };
    }
    res
}

/// Classifies one instruction from its base opcode and modifiers.
pub fn classify(opcode: &str, modifiers: &[&str]) -> InstrClass {
    let has = |m: &str| modifiers.contains(&m);
    match opcode {
        // Memory.
        "ld" | "ldu" => InstrClass::Load(space_of(modifiers).unwrap_or(Space::Generic)),
        "st" => InstrClass::Store(space_of(modifiers).unwrap_or(Space::Generic)),
        "atom" | "red" => InstrClass::Atomic(space_of(modifiers).unwrap_or(Space::Generic)),
        "tex" | "tld4" | "suld" => InstrClass::Load(Space::Texture),
        "sust" => InstrClass::Store(Space::Texture),
        "sured" => InstrClass::Atomic(Space::Texture),
        "ldmatrix" => InstrClass::Load(Space::Shared),
        "stmatrix" => InstrClass::Store(Space::Shared),
        // `cp.async[.bulk[.tensor]].DST.SRC`: a copy between state spaces. It reads global
        // memory when the source is global, so it is counted as a global load; the reverse
        // direction (shared → global) as a global store. Waits and commits move no data.
        "cp" => {
            if has("wait_group") || has("wait_all") || has("commit_group") {
                InstrClass::Other
            } else if has("reduce") {
                InstrClass::Atomic(space_of(modifiers).unwrap_or(Space::Global))
            } else {
                match space_of(modifiers) {
                    Some(Space::Global) => InstrClass::Store(Space::Global),
                    Some(_) => InstrClass::Load(Space::Global),
                    None => InstrClass::Other,
                }
            }
        }
        "wmma" => {
            if has("load") {
                InstrClass::Load(space_of(modifiers).unwrap_or(Space::Generic))
            } else if has("store") {
                InstrClass::Store(space_of(modifiers).unwrap_or(Space::Generic))
            } else {
                InstrClass::Tensor
            }
        }
        // Tensor cores.
        "mma" | "tcgen05" => InstrClass::Tensor,
        "wgmma" => {
            if has("mma_async") {
                InstrClass::Tensor
            } else if has("fence") {
                InstrClass::Fence
            } else {
                InstrClass::Other
            }
        }
        // Data movement and conversion.
        "mov" | "selp" | "movmatrix" => InstrClass::Move,
        "cvt" | "cvta" => InstrClass::Conversion,
        // Special function unit.
        "sin" | "cos" | "ex2" | "lg2" | "rsqrt" | "tanh" => InstrClass::Sfu,
        "rcp" | "sqrt" | "div" if has("approx") => InstrClass::Sfu,
        // Synchronisation.
        "bar" | "barrier" | "mbarrier" => InstrClass::Barrier,
        "membar" | "fence" => InstrClass::Fence,
        // Warp-level.
        "shfl" | "vote" | "match" | "redux" | "activemask" | "elect" => InstrClass::WarpLevel,
        // Control flow.
        "bra" | "brx" => InstrClass::Branch,
        "call" => InstrClass::Call,
        "ret" | "exit" => InstrClass::Return,
        // Arithmetic, by type.
        "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "abs" | "neg" | "min" | "max"
        | "setp" | "set" | "slct" | "rcp" | "sqrt" | "testp" | "copysign" | "and" | "or"
        | "xor" | "not" | "cnot" | "shl" | "shr" | "shf" | "popc" | "clz" | "bfind" | "brev"
        | "bfe" | "bfi" | "fns" | "lop3" | "mul24" | "mad24" | "sad" | "dp4a" | "dp2a" | "addc"
        | "subc" | "madc" | "prmt" | "bmsk" | "szext" | "isspacep" | "istypep" => {
            arith_class(modifiers)
        }
        _ => InstrClass::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(full: &str) -> InstrClass {
        let mut it = full.split('.');
        let op = it.next().unwrap_or("");
        let mods: Vec<&str> = it.collect();
        classify(op, &mods)
    }

    #[test]
    fn classes_of_common_opcodes() {
        use InstrClass::*;
        let cases = [
            ("add.s32", IntAlu),
            ("mul.wide.u32", IntAlu),
            ("mad.lo.s32", IntAlu),
            ("setp.lt.s32", IntAlu),
            ("shl.b32", IntAlu),
            ("fma.rn.f32", Fp32),
            ("add.f32", Fp32),
            ("setp.gt.f32", Fp32),
            ("set.lt.u32.f32", Fp32),
            ("fma.rn.f64", Fp64),
            ("div.rn.f64", Fp64),
            ("rcp.rn.f64", Fp64),
            ("fma.rn.f16x2", Fp16),
            ("add.bf16", Fp16),
            ("ex2.approx.ftz.f32", Sfu),
            ("rsqrt.approx.f32", Sfu),
            ("rcp.approx.ftz.f64", Sfu),
            ("div.approx.f32", Sfu),
            ("sqrt.rn.f32", Fp32),
            ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", Tensor),
            (
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
                Tensor,
            ),
            ("wgmma.fence.sync.aligned", Fence),
            ("cvt.rn.f32.s32", Conversion),
            ("cvta.to.global.u64", Conversion),
            ("mov.u32", Move),
            ("selp.b32", Move),
            ("ld.global.nc.v4.f32", Load(Space::Global)),
            ("ld.shared::cta.u32", Load(Space::Shared)),
            ("ld.param.u64", Load(Space::Param)),
            ("ld.const.f32", Load(Space::Const)),
            ("ld.local.u32", Load(Space::Local)),
            ("ld.f32", Load(Space::Generic)),
            ("st.global.f32", Store(Space::Global)),
            ("st.shared.v2.f32", Store(Space::Shared)),
            ("tex.2d.v4.f32.f32", Load(Space::Texture)),
            ("atom.global.add.f32", Atomic(Space::Global)),
            ("red.shared.add.u32", Atomic(Space::Shared)),
            ("atom.add.u32", Atomic(Space::Generic)),
            ("cp.async.ca.shared.global", Load(Space::Global)),
            ("cp.async.wait_group", Other),
            ("bar.sync", Barrier),
            ("barrier.sync.aligned", Barrier),
            ("bar.warp.sync", Barrier),
            ("membar.gl", Fence),
            ("fence.acq_rel.gpu", Fence),
            ("shfl.sync.down.b32", WarpLevel),
            ("vote.sync.ballot.b32", WarpLevel),
            ("match.any.sync.b32", WarpLevel),
            ("redux.sync.add.s32", WarpLevel),
            ("bra.uni", Branch),
            ("call.uni", Call),
            ("ret", Return),
            ("exit", Return),
            ("nanosleep.u32", Other),
            ("frobnicate.f32", Other),
        ];
        for (op, want) in cases {
            assert_eq!(c(op), want, "{op}");
        }
    }
}
