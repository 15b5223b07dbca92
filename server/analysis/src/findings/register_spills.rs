//! `register-spills`: ptxas moved registers to local memory.
//!
//! ## What it does
//! Reports a kernel for which `ptxas -v` reports spill stores or spill loads (the
//! `Resources` of the profile, from the CUDA front end or given explicitly), or whose PTX
//! holds local-memory accesses the profile marks as spills.
//!
//! ## Why is this bad?
//! Local memory lives in device memory: a spilled register costs an L1 hit at best and a
//! DRAM round trip at worst, on every access, instead of zero cycles (CUDA C++ Best
//! Practices Guide, § "Local Memory"). Spills inside loops multiply that cost. The usual
//! cause is a register cap: `__launch_bounds__` with a high `minBlocksPerMultiprocessor`,
//! or `-maxrregcount`.
//!
//! ## Example
//! ```cuda
//! // tests/fixtures/cu/spill.cu: 48 live accumulators, capped at 32 registers.
//! __global__ void __launch_bounds__(256, 8)
//!     row_block_spill(const float *__restrict__ a, ...)
//! ```
//!
//! ## Fix
//! When the kernel carries `__launch_bounds__(T, B)` (PTX `.maxntid`/`.minnctapersm`),
//! the fix `LaunchBounds` lowers `B` so that the registers the kernel needed fit: an
//! estimate, `registers + spill_store_bytes / 4` (every spilled 4-byte word was one
//! register), and `B = register file / (T × that)`, or drops `B` when not even one block
//! would fit. Otherwise: reduce live state (fewer accumulators per thread, smaller
//! unrolling).

use super::{Ctx, Finding, Fix, FixKind};
use crate::Severity;

pub const CODE: &str = "register-spills";
pub const SEVERITY: Severity = Severity::Warning;

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    let Some(t) = cx.primary() else { return };
    let r = &t.profile.resources;
    let spill_accesses = t.profile.memory_accesses.iter().filter(|a| a.spill == Some(true)).count();
    if r.spill_store_bytes == 0 && r.spill_load_bytes == 0 && spill_accesses == 0 {
        return;
    }
    let source = match r.source {
        kernel_profile::ResourceSource::Ptxas => "ptxas reports",
        kernel_profile::ResourceSource::Estimate => "estimated:",
        kernel_profile::ResourceSource::Given => "given:",
    };
    let mut message = format!(
        "register spills: {source} {} bytes of spill stores and {} bytes of spill loads per thread at {} registers",
        r.spill_store_bytes, r.spill_load_bytes, r.registers_per_thread
    );
    if spill_accesses > 0 {
        message.push_str(&format!(", {spill_accesses} spill access(es) in the PTX"));
    }
    let mut f = cx.on_kernel(CODE, SEVERITY, message, None);
    f.fixes.extend(launch_bounds_fix(cx, t));
    acc.push(f);
}

fn launch_bounds_fix(cx: &Ctx<'_>, t: &crate::TargetAnalysis) -> Option<Fix> {
    let perf = &cx.func?.perf;
    let min_blocks = perf.minnctapersm?;
    // Saturating: `.maxntid` comes from the PTX text, three `u32`s whose product can
    // overflow.
    let max_threads: u32 = perf.maxntid.or(perf.reqntid).map(|d| d.iter().fold(1u32, |acc, x| acc.saturating_mul((*x).max(1))))?;
    let r = &t.profile.resources;
    let needed = r.registers_per_thread.saturating_add(r.spill_store_bytes.div_ceil(4));
    let fit = t.gpu.limits.regs_per_sm / max_threads.saturating_mul(needed).max(1);
    let new_min = (fit >= 1).then_some(fit.min(min_blocks.saturating_sub(1)).max(1));
    if new_min == Some(min_blocks) {
        return None;
    }
    let title = match new_min {
        Some(b) => format!(
            "Change __launch_bounds__({max_threads}, {min_blocks}) to __launch_bounds__({max_threads}, {b}): room for ≈{} registers per thread (estimated need {needed})",
            t.gpu.limits.regs_per_sm / (max_threads * b).max(1)
        ),
        None => format!("Drop the minimum of {min_blocks} blocks per SM from __launch_bounds__ (estimated need {needed} registers per thread)"),
    };
    Some(Fix { title, kind: FixKind::LaunchBounds { max_threads, min_blocks: new_min } })
}

// Tests: `server/analysis/tests/findings.rs` (the spill fixture with its `ptxas -v` resources,
// read by the integration tests' shared helper `common::ptxas_context`).
