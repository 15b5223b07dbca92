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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, KernelContext, PartialLaunch, Settings};
    use kernel_profile::{ResourceSource, Resources};

    /// `row_block_spill` with its resources read from `tests/fixtures/resources/sm_80.txt`
    /// (the `ptxas -v` output that ships with the fixtures).
    fn spill_resources() -> (String, Resources) {
        let path = format!("{}/../../tests/fixtures/resources/sm_80.json", env!("CARGO_MANIFEST_DIR"));
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("resources")).expect("json");
        let funcs = json["files"]["tests/fixtures/ptx/sm_80/spill.ptx"]["functions"].as_object().expect("spill.ptx").clone();
        let (name, r) = funcs.into_iter().find(|(k, _)| k.contains("row_block_spill")).expect("row_block_spill");
        let n = |k: &str| r[k].as_u64().unwrap_or(0) as u32;
        let res = Resources {
            registers_per_thread: n("registers"),
            static_smem_bytes: n("smem_bytes"),
            local_bytes_per_thread: n("stack_frame_bytes"),
            spill_store_bytes: n("spill_store_bytes"),
            spill_load_bytes: n("spill_load_bytes"),
            stack_frame_bytes: n("stack_frame_bytes"),
            barriers: n("barriers"),
            source: ResourceSource::Ptxas,
        };
        (name, res)
    }

    #[test]
    fn ptxas_spills_are_reported_with_a_launch_bounds_fix() {
        let (name, res) = spill_resources();
        assert!(res.spill_store_bytes > 0, "{res:?}");
        let text = crate::findings::test_support::fixture("spill");
        let mut context = Context::default();
        context.kernels.insert(name.clone(), KernelContext { resources: Some(res.clone()), ..Default::default() });
        let settings = Settings { launch: PartialLaunch { grid: Some([512, 1, 1]), block: Some([256, 1, 1]), ..Default::default() }, ..Settings::default() };
        let a = crate::analyze(&text, &settings, &context);
        let k = a.kernels.iter().find(|k| k.name == name).expect("kernel");
        let f: Vec<_> = k.findings.iter().filter(|f| f.code == CODE).collect();
        assert_eq!(f.len(), 1, "{:?}", k.findings);
        assert!(f[0].message.contains(&format!("ptxas reports {} bytes of spill stores", res.spill_store_bytes)), "{}", f[0].message);
        // __launch_bounds__(T, 8) caps the registers; the fix keeps T and lowers the 8.
        let (module, _) = ptx_ir::parse_and_lower(&text);
        let perf = &module.function(&name).expect("kernel").perf;
        let t: u32 = perf.maxntid.expect("maxntid").iter().product();
        assert_eq!(perf.minnctapersm, Some(8));
        match &f[0].fixes[..] {
            [Fix { kind: FixKind::LaunchBounds { max_threads, min_blocks }, .. }] => {
                assert_eq!(*max_threads, t);
                assert!(min_blocks.is_none_or(|b| b < 8), "{min_blocks:?}");
            }
            other => panic!("{other:?}"),
        }
        // The other kernel of the file has no spills.
        let other = a.kernels.iter().find(|k| k.name != name).expect("local_histogram");
        assert!(other.findings.iter().all(|f| f.code != CODE), "{:?}", other.findings);
    }
}
