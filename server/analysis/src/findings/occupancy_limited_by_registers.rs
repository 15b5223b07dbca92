//! `occupancy-limited-by-registers`: the register file caps the resident blocks.
//!
//! ## What it does
//! Reports a kernel whose theoretical occupancy on the primary GPU is at or below
//! [`OCCUPANCY_THRESHOLD`] (50 %) and whose resident blocks per SM are bounded by
//! registers (NVIDIA's occupancy calculator, `gpu_spec::occupancy`, limiter
//! `registers`). The message says how many blocks would fit without the limit.
//!
//! ## Why is this bad?
//! Few resident warps leave little to hide memory and pipeline latency with (Hong & Kim's
//! MWP/CWP analysis, restated by Dasgupta 2011 §2.2.3: when there are not enough warps
//! neither memory nor compute is saturated). But occupancy is not performance (Dasgupta
//! 2011 §1.1, Fig. 2): unroll-and-jam raises registers and lowers occupancy on purpose
//! (Dasgupta 2011 §4.2.2).
//! Treat this as a question, not a verdict.
//!
//! ## Example
//! ```cuda
//! // tests/fixtures/cu/spill.cu, launched with 256 threads: 48 live accumulators need
//! // many registers per thread (without its __launch_bounds__ cap).
//! float acc[COLS];
//! ```
//!
//! ## Fix
//! - Cap registers with `__launch_bounds__(threads, min_blocks)` so that `min_blocks`
//!   blocks fit (fix `LaunchBounds`): `min_blocks` is the fewest blocks that lift
//!   occupancy above 50 %, within the other limits. ptxas may then spill (see
//!   `register-spills`); the fix is not offered for a kernel that already spills.
//! - For one-dimensional blocks, the occupancy-optimal block size (fix `SetBlockSize`).

use gpu_spec::{Limiters, Occupancy};

use super::occupancy_common::{self, Limiter, Threshold, other_limit};
pub use super::occupancy_common::OCCUPANCY_THRESHOLD;
use super::{Ctx, Finding, Fix, FixKind, pct};
use crate::{Severity, TargetAnalysis};

pub const CODE: &str = "occupancy-limited-by-registers";
pub const SEVERITY: Severity = Severity::Information;

const LIMITER: Limiter = Limiter { code: CODE, severity: SEVERITY, bit: Limiters::REGISTERS, what: "registers", threshold: Threshold::Occupancy };

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    occupancy_common::check(cx, acc, &LIMITER, detail, fixes);
}

fn detail(_cx: &Ctx<'_>, t: &TargetAnalysis, o: &Occupancy) -> String {
    format!(
        "{} registers per thread ({} per block) leave room for {} block(s) in the {}-register file",
        t.profile.resources.registers_per_thread,
        o.allocated_regs_per_block,
        o.limit_registers.unwrap_or(0),
        t.gpu.limits.regs_per_sm,
    )
}

fn fixes(cx: &Ctx<'_>, t: &TargetAnalysis, o: &Occupancy) -> Vec<Fix> {
    let mut res = Vec::new();
    res.extend(launch_bounds_fix(cx, t, o));
    res.extend(occupancy_common::block_size_fix(cx, t, o));
    res
}

/// `__launch_bounds__(threads, b)` with the fewest blocks `b` that lift occupancy above
/// the threshold (capped by the other limits). The register cap it implies is the
/// register file divided by `b` blocks of `threads` (CUDA Programming Guide §"Launch
/// Bounds": the compiler limits registers so that `minBlocksPerMultiprocessor` blocks fit);
/// the exact number ptxas chooses also depends on the allocation granularity.
fn launch_bounds_fix(cx: &Ctx<'_>, t: &TargetAnalysis, o: &Occupancy) -> Option<Fix> {
    // A kernel that already spills needs more registers, not fewer (`register-spills`).
    if t.profile.resources.spill_store_bytes > 0 || t.profile.resources.spill_load_bytes > 0 {
        return None;
    }
    let threads = u32::try_from(cx.kernel.launch.threads_per_block()).ok()?;
    let max_warps = o.max_warps_per_sm.max(1);
    let wanted_warps = (f64::from(max_warps) * OCCUPANCY_THRESHOLD).ceil() as u32 + 1;
    let mut blocks = wanted_warps.div_ceil(o.warps_per_block.max(1)).max(o.blocks_per_sm + 1);
    if let Some(other) = other_limit(o, Limiters::REGISTERS) {
        blocks = blocks.min(other);
    }
    if blocks <= o.blocks_per_sm {
        return None;
    }
    let cap = t.gpu.limits.regs_per_sm / (blocks * threads).max(1);
    let occ = f64::from((blocks * o.warps_per_block).min(max_warps)) / f64::from(max_warps);
    Some(Fix {
        title: format!(
            "Add __launch_bounds__({threads}, {blocks}): at most ≈{cap} registers per thread, {blocks} blocks per SM ({})",
            pct(occ)
        ),
        kind: FixKind::LaunchBounds { max_threads: threads, min_blocks: Some(blocks) },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::findings;
    use crate::{Context, Settings};
    use kernel_profile::Resources;

    fn with_registers(regs: u32, block: [u32; 3]) -> crate::FileAnalysis {
        let text = crate::findings::test_support::fixture("vadd");
        let (module, _) = ptx_ir::parse_and_lower(&text);
        let name = module.kernels().next().expect("kernel").name.clone();
        let mut context = Context::default();
        let resources = Resources::given(regs, 0);
        context.kernels.insert(name, crate::KernelContext { resources: Some(resources), ..Default::default() });
        let settings = Settings {
            launch: crate::PartialLaunch { grid: Some([4096, 1, 1]), block: Some(block), ..Default::default() },
            ..Settings::default()
        };
        crate::analyze(&text, &settings, &context)
    }

    #[test]
    fn heavy_register_use_limits_occupancy_and_offers_launch_bounds() {
        // A100: 128 regs x 256 threads = 32768 registers per block; 65536 / 32768 = 2
        // blocks = 16 of 64 warps (25 %); warps alone would allow 8 blocks.
        let a = with_registers(128, [256, 1, 1]);
        let f = findings(&a, "vadd", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        assert!(f[0].message.contains("occupancy 25 %"), "{}", f[0].message);
        assert!(f[0].message.contains("8 blocks would fit"), "{}", f[0].message);
        // 33 warps needed: ceil(33 / 8) = 5 blocks; 65536 / (5 x 256) = 51 registers.
        let lb = f[0].fixes.iter().find(|x| matches!(x.kind, FixKind::LaunchBounds { .. })).expect("launch bounds");
        assert_eq!(lb.kind, FixKind::LaunchBounds { max_threads: 256, min_blocks: Some(5) });
        assert!(lb.title.contains("≈51 registers"), "{}", lb.title);
        // The 1-D block also gets the occupancy-optimal block size.
        assert!(f[0].fixes.iter().any(|x| matches!(x.kind, FixKind::SetBlockSize { .. })) || f[0].fixes.len() == 1);
    }

    #[test]
    fn moderate_register_use_stays_quiet() {
        // 64 regs x 256 threads: 4 blocks = 32 of 64 warps = 50 %: at the threshold, so
        // it fires; 48 regs: 5 blocks = 62.5 %: quiet.
        assert_eq!(findings(&with_registers(64, [256, 1, 1]), "vadd", CODE).len(), 1);
        assert!(findings(&with_registers(48, [256, 1, 1]), "vadd", CODE).is_empty());
        assert!(findings(&with_registers(32, [256, 1, 1]), "vadd", CODE).is_empty());
    }
}
