//! `occupancy-limited-by-warps`: the block size does not divide the SM's warp slots.
//!
//! ## What it does
//! Reports a kernel whose resident blocks on the primary GPU are bounded by the SM's warp
//! (thread) slots and whose theoretical occupancy is below 75 % ([`WARP_SLOTS_THRESHOLD`]:
//! a warp-slot limit alone can never go down to 50 %, since two blocks fit whenever one
//! takes at most half the slots). Typically a block so large that a second one does not
//! fit: 1024 threads on a GPU with 1536 threads per SM (CC 8.6, 8.9) hold 67 %.
//!
//! ## Why is this bad?
//! The unused slots are lost for the whole kernel (too few warps to hide latency: Hong &
//! Kim 2009; Dasgupta 2011 §2.2.3). Block size also changes memory merging (Dasgupta
//! 2011 §5.1, Fig. 17: the same kernel differs twofold between 64 and 256 threads per
//! block).
//!
//! ## Example
//! ```cuda
//! // On an RTX 3090 (CC 8.6, 48 warps per SM): 1 block of 1024 threads = 32 of 48 warps.
//! vadd<<<n / 1024, 1024>>>(a, b, c, n);
//! ```
//!
//! ## Fix
//! For one-dimensional blocks, the occupancy-optimal block size (fix `SetBlockSize`,
//! `cudaOccMaxPotentialOccupancyBlockSize`). Recompute the grid.

use gpu_spec::{Limiters, Occupancy};


use super::occupancy_common::{self, Limiter, Threshold};
pub use super::occupancy_common::WARP_SLOTS_THRESHOLD;
use super::{Ctx, Finding, Fix};
use crate::{Severity, TargetAnalysis};

pub const CODE: &str = "occupancy-limited-by-warps";
pub const SEVERITY: Severity = Severity::Information;

const LIMITER: Limiter = Limiter { code: CODE, severity: SEVERITY, bit: Limiters::WARPS, what: "warps", threshold: Threshold::WarpSlots };

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    occupancy_common::check(cx, acc, &LIMITER, detail, fixes);
}

fn detail(_cx: &Ctx<'_>, t: &TargetAnalysis, o: &Occupancy) -> String {
    format!(
        "{} warps per block fit {} time(s) into the {} warp slots of a CC {}.{} SM",
        o.warps_per_block, o.limit_warps, o.max_warps_per_sm, t.gpu.cc.major, t.gpu.cc.minor
    )
}

fn fixes(cx: &Ctx<'_>, t: &TargetAnalysis, o: &Occupancy) -> Vec<Fix> {
    occupancy_common::block_size_fix(cx, t, o).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::{analyze, findings};

    #[test]
    fn a_1024_thread_block_on_a_48_warp_sm_wastes_a_third() {
        // RTX 3090 (CC 8.6): 1536 threads = 48 warps per SM; one block of 32 warps (67 %).
        let (_, a) = analyze("vadd", [4096, 1, 1], [1024, 1, 1], &[], &["rtx-3090"]);
        let f = findings(&a, "vadd", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        assert!(f[0].message.contains("occupancy 67 %"), "{}", f[0].message);
        assert!(f[0].message.contains("32 warps per block fit 1 time(s) into the 48 warp slots"), "{}", f[0].message);
        assert_eq!(f[0].gpu.as_deref(), Some("rtx-3090"));
        // The optimal size is a divisor of 1536 that fits (768 or smaller, 100 %).
        assert!(f[0].fixes.iter().any(|x| matches!(&x.kind, crate::fixes::FixKind::SetBlockSize { block, .. } if 1536 % block[0] == 0)), "{:?}", f[0].fixes);
    }

    #[test]
    fn blocks_that_divide_the_warp_slots_stay_quiet() {
        // A100 (64 warps): two 1024-thread blocks fill it.
        let (_, a) = analyze("vadd", [4096, 1, 1], [1024, 1, 1], &[], &["a100-sxm4-80gb"]);
        assert!(findings(&a, "vadd", CODE).is_empty(), "{:?}", a.kernels[0].findings);
        // 768 threads on the A100: 2 blocks = 48 of 64 warps = 75 %, not below.
        let (_, a) = analyze("vadd", [4096, 1, 1], [768, 1, 1], &[], &["a100-sxm4-80gb"]);
        assert!(findings(&a, "vadd", CODE).is_empty());
        assert_eq!(WARP_SLOTS_THRESHOLD, 0.75);
    }

    #[test]
    fn a_secondary_gpu_is_named_when_the_verdict_differs() {
        // Primary A100 is quiet, the RTX 3090 is not: one finding, for the 3090.
        let (_, a) = analyze("vadd", [4096, 1, 1], [1024, 1, 1], &[], &["a100-sxm4-80gb", "rtx-3090"]);
        let f = findings(&a, "vadd", CODE);
        assert_eq!(f.iter().map(|f| f.gpu.as_deref()).collect::<Vec<_>>(), vec![Some("rtx-3090")]);
        // Both fire: only the primary is reported.
        let (_, a) = analyze("vadd", [4096, 1, 1], [1024, 1, 1], &[], &["rtx-3090", "rtx-3080"]);
        let f = findings(&a, "vadd", CODE);
        assert_eq!(f.iter().map(|f| f.gpu.as_deref()).collect::<Vec<_>>(), vec![Some("rtx-3090")]);
    }
}
