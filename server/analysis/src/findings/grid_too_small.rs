//! `grid-too-small`: fewer blocks than SMs.
//!
//! ## What it does
//! Reports a launch whose grid has fewer blocks than the primary GPU has SMs (a block runs
//! on one SM, so some SMs get nothing). Not produced for the default launch.
//!
//! ## Why is this bad?
//! Idle SMs are lost throughput: a 4-block grid on a 108-SM A100 uses under 4 % of the
//! chip. CGPredict (Wang, Zhong & Mitra 2017, §3.2) makes the same sanity check: fewer
//! than 2 × 2048 threads cannot fill the Jetson TK1's one SMX.
//!
//! ## Example
//! ```cuda
//! // tests/fixtures/cu/reduce_tree.cu, second pass: one block reduces the partial sums.
//! reduce_tree<<<1, BLOCK_SIZE>>>(partial, result, N_ELEMS / BLOCK_SIZE);
//! ```
//!
//! ## Fix
//! No automatic fix. Give each block less work (more, smaller blocks), or, for a final
//! reduction step like the example, accept it: the kernel is tiny. Several independent
//! small launches can run concurrently in streams.

use super::{Ctx, Finding, per_gpu, pct};
use crate::{Severity, TargetAnalysis};

pub const CODE: &str = "grid-too-small";
pub const SEVERITY: Severity = Severity::Warning;

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    if cx.launch_is_default() {
        return;
    }
    per_gpu(cx, acc, check_target);
}

fn check_target(cx: &Ctx<'_>, t: &TargetAnalysis) -> Option<Finding> {
    let blocks = cx.kernel.launch.blocks();
    let sms = u64::from(t.gpu.sm_count);
    if blocks == 0 || blocks >= sms {
        return None;
    }
    let idle = sms - blocks;
    let message = format!(
        "grid too small for {}: {blocks} block(s) for {sms} SMs, so {idle} SMs ({}) stay idle",
        t.gpu.name,
        pct(idle as f64 / sms as f64)
    );
    Some(cx.on_kernel(CODE, SEVERITY, message, Some(&t.gpu.id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::{analyze, findings};

    #[test]
    fn a_four_block_grid_leaves_most_of_an_a100_idle() {
        let (_, a) = analyze("reduce_tree", [4, 1, 1], [256, 1, 1], &[], &["a100-sxm4-80gb"]);
        let f = findings(&a, "reduce_tree", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        assert_eq!(f[0].message, "grid too small for NVIDIA A100 80GB SXM4: 4 block(s) for 108 SMs, so 104 SMs (96 %) stay idle");
        // Not also a tail wave.
        assert!(findings(&a, "reduce_tree", crate::findings::tail_wave::CODE).is_empty());
    }

    #[test]
    fn enough_blocks_or_a_default_launch_are_quiet() {
        let (_, a) = analyze("reduce_tree", [108, 1, 1], [256, 1, 1], &[], &["a100-sxm4-80gb"]);
        assert!(findings(&a, "reduce_tree", CODE).is_empty());
        let a = crate::analyze(&crate::findings::test_support::fixture("reduce_tree"), &crate::Settings::default(), &crate::Context::default());
        assert!(findings(&a, "reduce_tree", CODE).is_empty());
    }
}
