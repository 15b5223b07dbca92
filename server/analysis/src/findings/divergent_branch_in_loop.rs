//! `divergent-branch-in-loop`: a thread-dependent branch inside a loop.
//!
//! ## What it does
//! Reports a conditional branch whose predicate depends on the thread index (the static
//! profile's divergence analysis) and that sits inside a loop (a loop's own exit test
//! counts only inside an outer loop). One finding per source line; the message gives the
//! trip count of the innermost loop around it when the IR knows it.
//!
//! ## Why is this bad?
//! When the lanes of a warp disagree, the warp runs both paths one after the other with
//! the inactive lanes masked (CUDA C++ Best Practices Guide, § "Branching and
//! Divergence"). Inside a loop the cost repeats on every iteration. Many such branches
//! are benign (tree reductions diverge only in their last steps), so this is
//! information, not a warning.
//!
//! ## Example
//! ```cuda
//! // tests/fixtures/cu/reduce_tree.cu: `tid < s` splits warps once s < 32.
//! for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
//!     if (tid < s)
//!         sdata[tid] += sdata[tid + s];
//! ```
//!
//! ## Fix
//! No automatic fix. Make the condition uniform per warp (index by warp, `tid / 32`), move
//! the last steps to warp shuffles (`reduce_warp.cu`), or hoist the test out of the loop.

use super::{Ctx, Finding, folded, group_by_line};
use crate::Severity;

pub const CODE: &str = "divergent-branch-in-loop";
pub const SEVERITY: Severity = Severity::Information;

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    let Some(t) = cx.primary() else { return };
    let in_loop = t.profile.divergent_branches.iter().filter(|b| b.in_loop);
    for group in group_by_line(in_loop, |b| (b.source_file.clone(), b.source_line, b.ptx_line)) {
        let Some(b) = group.first() else { continue };
        let trip = loop_trip(cx, b.ptx_line).map(|n| format!(" of a loop that runs {n} times")).unwrap_or_else(|| " of a loop".into());
        let message = format!(
            "divergent branch inside every iteration{trip}: its condition depends on the thread index, so warps may run both paths{}",
            folded(group.len())
        );
        acc.push(cx.on_line(CODE, SEVERITY, message, b.ptx_line, (b.source_file.clone(), b.source_line)));
    }
}

/// The trip count of the innermost loop around the branch on `ptx_line`, when known.
fn loop_trip(cx: &Ctx<'_>, ptx_line: u32) -> Option<String> {
    let func = cx.func?;
    let instr = func.instrs.iter().find(|i| i.ptx_line == ptx_line && i.is_branch())?;
    let lp = func.loops_of(instr.block).first().and_then(|l| func.loops.get(*l as usize))?;
    let header_line = lp.ptx_line;
    let t = cx.primary()?;
    let info = t.profile.loops.iter().find(|l| l.ptx_line == header_line)?;
    match (info.trip_count, &info.trip_count_expr) {
        (Some(n), _) => Some(format!("{n:.0}")),
        (None, Some(e)) => Some(format!("`{e}` (assumed {:.0})", info.assumed_trip_count)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::{analyze, cu_line, findings};

    #[test]
    fn tree_reduction_diverges_inside_its_halving_loop() {
        let (_, a) = analyze("reduce_tree", [256, 1, 1], [256, 1, 1], &[("param_2", 65536)], &["a100-sxm4-80gb"]);
        let f = findings(&a, "reduce_tree", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        assert_eq!(f[0].source_line, Some(cu_line("reduce_tree", "if (tid < s)")));
        assert!(f[0].message.contains("divergent branch"), "{}", f[0].message);
        assert_ne!(f[0].ptx_span, a.kernels[0].name_span, "the finding points at the branch");
    }

    #[test]
    fn straight_line_kernels_are_quiet() {
        let (_, a) = analyze("vadd", [4096, 1, 1], [256, 1, 1], &[], &["a100-sxm4-80gb"]);
        assert!(findings(&a, "vadd", CODE).is_empty());
    }
}
