//! `occupancy-limited-by-shared-memory`: shared memory per block caps the resident blocks.
//!
//! ## What it does
//! Reports a kernel whose theoretical occupancy on the primary GPU is at or below 50 %
//! ([`OCCUPANCY_THRESHOLD`]) and whose resident blocks per SM are bounded by shared
//! memory (static plus dynamic, plus the driver's 1 KB reserve per block on CC ≥ 8.0,
//! NVIDIA's occupancy calculator).
//!
//! ## Why is this bad?
//! As for every occupancy limit: few warps hide little latency (Hong & Kim 2009; Dasgupta
//! 2011 §2.2.3), though higher occupancy is not always faster (Dasgupta 2011 §1.1,
//! Fig. 2). Shared-memory tiling is the standard optimisation for reuse (Wang, Zhong &
//! Mitra 2017 §4.3 and §4.4.2; Dasgupta 2011 §4.2.1); large tiles trade that reuse
//! against resident blocks.
//!
//! ## Example
//! ```cuda
//! // A 64x64 float tile is 16 KB per block: with 96 threads per block, 6 blocks fill
//! // the A100's 164 KB but hold only 18 of 64 warps.
//! __shared__ float tile[64][64];
//! ```
//!
//! ## Fix
//! Use smaller tiles, or fewer buffers (a `double` tile that could be `float`). For
//! one-dimensional blocks, a larger block amortises the per-block shared memory over more
//! warps: the fix `SetBlockSize` proposes the occupancy-optimal size
//! (`cudaOccMaxPotentialOccupancyBlockSize`).

use gpu_spec::{Limiters, Occupancy};

use super::occupancy_common::{self, Limiter, Threshold};
pub use super::occupancy_common::OCCUPANCY_THRESHOLD;
use super::{Ctx, Finding, Fix};
use crate::{Severity, TargetAnalysis};

pub const CODE: &str = "occupancy-limited-by-shared-memory";
pub const SEVERITY: Severity = Severity::Information;

const LIMITER: Limiter = Limiter { code: CODE, severity: SEVERITY, bit: Limiters::SHARED_MEMORY, what: "shared memory", threshold: Threshold::Occupancy };

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    occupancy_common::check(cx, acc, &LIMITER, detail, fixes);
}

fn detail(cx: &Ctx<'_>, t: &TargetAnalysis, o: &Occupancy) -> String {
    format!(
        "{} B of shared memory per block ({} B static, {} B dynamic, {} B allocated) leave room for {} block(s) in {} B per SM",
        u64::from(t.profile.resources.static_smem_bytes) + u64::from(cx.kernel.launch.dynamic_smem),
        t.profile.resources.static_smem_bytes,
        cx.kernel.launch.dynamic_smem,
        o.allocated_smem_per_block,
        o.limit_shared_memory.unwrap_or(0),
        t.gpu.limits.smem_per_sm_bytes,
    )
}

fn fixes(cx: &Ctx<'_>, t: &TargetAnalysis, o: &Occupancy) -> Vec<Fix> {
    occupancy_common::block_size_fix(cx, t, o).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::{analyze, findings};
    use crate::fixes::FixKind;

    #[test]
    fn large_dynamic_shared_memory_limits_small_blocks() {
        // dyn_smem.cu with 96 threads and 48 KB of dynamic shared memory on the A100
        // (164 KB per SM, 1 KB reserve per block): 3 blocks = 9 of 64 warps (14 %).
        let text = crate::findings::test_support::fixture("dyn_smem");
        let settings = crate::Settings {
            launch: crate::PartialLaunch { grid: Some([1024, 1, 1]), block: Some([96, 1, 1]), dynamic_smem: Some(48 * 1024), ..Default::default() },
            ..crate::Settings::default()
        };
        let a = crate::analyze(&text, &settings, &crate::Context::default());
        let f = findings(&a, "", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        assert!(f[0].message.contains("3 block(s)"), "{}", f[0].message);
        // A 1-D block: the optimal block size is offered and is larger.
        let best = f[0].fixes.iter().find_map(|x| match &x.kind {
            FixKind::SetBlockSize { block, .. } => Some(block[0]),
            _ => None,
        });
        assert!(best.is_some_and(|b| b > 96), "{:?}", f[0].fixes);
    }

    #[test]
    fn small_tiles_do_not_fire() {
        let (_, a) = analyze("transpose_padded", [64, 64, 1], [32, 32, 1], &[], &["a100-sxm4-80gb"]);
        assert!(findings(&a, "transpose", CODE).is_empty());
    }
}
