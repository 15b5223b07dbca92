//! `occupancy-limited-by-blocks`: the per-SM block limit caps occupancy (blocks too small).
//!
//! ## What it does
//! Reports a kernel whose theoretical occupancy on the primary GPU is at or below 50 %
//! ([`OCCUPANCY_THRESHOLD`]) because an SM cannot hold more blocks (16 to 32 per SM
//! depending on the compute capability, CUDA Programming Guide Table "Technical
//! Specifications per Compute Capability"): the blocks are too small.
//!
//! ## Why is this bad?
//! With 32-thread blocks an A100 SM holds 32 blocks = 32 of its 64 warps however few
//! registers the kernel uses. Few warps hide little latency (Hong & Kim 2009; Dasgupta
//! 2011 §2.2.3); tiny blocks also give up the intra-block memory merging Dasgupta
//! measures (2011, §3.2.4, Tables 2 and 3).
//!
//! ## Example
//! ```cuda
//! // tests/fixtures/cu/saxpy.cu launched with 32 threads per block.
//! saxpy<<<n / 32, 32>>>(n, a, x, y);
//! ```
//!
//! ## Fix
//! Larger blocks: for one-dimensional blocks the fix `SetBlockSize` proposes the
//! occupancy-optimal size (`cudaOccMaxPotentialOccupancyBlockSize`). Recompute the grid.

use gpu_spec::{Limiters, Occupancy};

use super::occupancy_common::{self, Limiter, Threshold};
pub use super::occupancy_common::OCCUPANCY_THRESHOLD;
use super::{Ctx, Finding, Fix};
use crate::{Severity, TargetAnalysis};

pub const CODE: &str = "occupancy-limited-by-blocks";
pub const SEVERITY: Severity = Severity::Information;

const LIMITER: Limiter = Limiter { code: CODE, severity: SEVERITY, bit: Limiters::BLOCKS, what: "blocks", threshold: Threshold::Occupancy };

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    occupancy_common::check(cx, acc, &LIMITER, detail, fixes);
}

fn detail(cx: &Ctx<'_>, t: &TargetAnalysis, o: &Occupancy) -> String {
    format!(
        "an SM of CC {}.{} holds at most {} blocks and each has only {} threads",
        t.gpu.cc.major,
        t.gpu.cc.minor,
        o.limit_blocks,
        cx.kernel.launch.threads_per_block()
    )
}

fn fixes(cx: &Ctx<'_>, t: &TargetAnalysis, o: &Occupancy) -> Vec<Fix> {
    occupancy_common::block_size_fix(cx, t, o).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixes::FixKind;
    use crate::findings::test_support::{analyze, findings};

    #[test]
    fn warp_sized_blocks_hit_the_block_limit() {
        // A100: 32 blocks x 1 warp = 32 of 64 warps (50 %).
        let (_, a) = analyze("saxpy", [4096, 1, 1], [32, 1, 1], &[], &["a100-sxm4-80gb"]);
        let f = findings(&a, "saxpy", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        assert!(f[0].message.contains("occupancy 50 %"), "{}", f[0].message);
        assert!(f[0].message.contains("at most 32 blocks"), "{}", f[0].message);
        let best = f[0].fixes.iter().find_map(|x| match &x.kind {
            FixKind::SetBlockSize { block, reason } => Some((block[0], reason.clone())),
            _ => None,
        });
        let (size, reason) = best.expect("a block size fix");
        assert!(size >= 64, "{size}");
        assert!(reason.contains("100 %"), "{reason}");
    }

    #[test]
    fn ordinary_blocks_do_not_fire() {
        let (_, a) = analyze("saxpy", [4096, 1, 1], [256, 1, 1], &[], &["a100-sxm4-80gb"]);
        assert!(findings(&a, "saxpy", CODE).is_empty());
    }
}
