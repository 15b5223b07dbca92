//! `memory-bound`: the headline prediction says the kernel is limited by memory.
//!
//! ## What it does
//! Reports a kernel whose headline execution-time prediction (the consensus of
//! `perf-models`, `docs/models.md`) classifies it as memory-bound on the primary GPU.
//!
//! ## Why is this bad?
//! It is not a defect; it tells you where time goes. For a memory-bound kernel, arithmetic
//! optimisations buy nothing: Dasgupta (2011, §5.2, Figs. 23–25) finds that when
//! CWP > MWP "a good indicator for performance ... is the #Memory_Operations", and
//! CGPredict (Wang, Zhong & Mitra 2017, Eq. 16 and §4.4.1) classifies a kernel as
//! memory-bound when CWP ≥ MWP.
//! Work on the number and the coalescing of global memory requests instead.
//!
//! ## Example
//! ```cuda
//! // tests/fixtures/cu/vadd.cu: one FP add per 12 bytes moved.
//! c[i] = a[i] + b[i];
//! ```
//!
//! ## Fix
//! No automatic fix. The message's advice follows the binding level: DRAM (below), L2 (reuse
//! in L1 or shared memory), L1 (fewer wavefronts), shared memory (bank conflicts, vector
//! accesses), same-address atomics (reduce per warp or block first; where the atomics are
//! already one lane per request, fewer blocks that each reduce more elements). Cut global memory traffic: reuse loaded data through shared memory
//! (Dasgupta 2011 §4.2.1, Table 12; Wang, Zhong & Mitra 2017 §4.4.2), fix uncoalesced
//! accesses (see `uncoalesced-global-access`), use wider (vector) accesses with care
//! (Dasgupta 2011 §3.2.5 and §4.2.3). When the launch configuration is unknown, a fix inserts a `// warpsight:`
//! annotation so the verdict is made for the real launch.


use perf_models::prediction::Bound;

use super::{Ctx, Finding, per_gpu};
use crate::{Severity, TargetAnalysis};

pub const CODE: &str = "memory-bound";
pub const SEVERITY: Severity = Severity::Information;

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    per_gpu(cx, acc, check_target);
}

fn check_target(cx: &Ctx<'_>, t: &TargetAnalysis) -> Option<Finding> {
    let report = t.models.as_ref().ok()?;
    let h = &report.headline;
    if !h.bound.is_memory_side() {
        return None;
    }
    let detail = report
        .predictions
        .iter()
        .find(|p| p.model == h.model)
        .and_then(|p| match (p.mwp, p.cwp) {
            (Some(mwp), Some(cwp)) => Some(format!(" (MWP {mwp:.1} ≤ CWP {cwp:.1})")),
            _ => None,
        })
        .unwrap_or_default();
    let message = format!(
        "memory-bound on {}: the headline model `{}` predicts {} limited by memory traffic ({}){detail}; {} what will speed it up",
        t.gpu.name,
        h.model,
        crate::display::time_us(h.time_us),
        h.bound.name(),
        if h.bound == Bound::Atomics && atomics_already_aggregated(&t.profile) { AGGREGATED_ADVICE } else { advice(h.bound) }
    );
    let mut f = cx.on_kernel(CODE, SEVERITY, message, Some(&t.gpu.id));
    f.fixes.extend(cx.annotation_fix());
    Some(f)
}

/// The advice when every global atomic already has one active lane per request on its
/// address (`if (threadIdx.x == 0) atomicAdd(out, sum)`): the atomics are as few per block
/// as they get, so fewer blocks.
const AGGREGATED_ADVICE: &str = "fewer blocks, each reducing more elements before its one atomic (a grid-stride loop over one wave of blocks), are";

/// Whether every global atomic of the kernel is one lane per request on one address (or
/// ptxas aggregates it over the warp: `MemoryAccess::warp_aggregated`).
fn atomics_already_aggregated(profile: &kernel_profile::KernelProfile) -> bool {
    let mut atomics = profile
        .memory_accesses
        .iter()
        .filter(|a| a.kind == kernel_profile::AccessKind::Atomic && a.space != kernel_profile::Space::Shared && a.executions > 0.0)
        .peekable();
    atomics.peek().is_some()
        && atomics.all(|a| {
            let active = a.active_lane_fraction.unwrap_or(1.0);
            a.warp_aggregated == Some(true) || a.same_address_lanes.is_some_and(|n| f64::from(n) * active <= 1.0 + 1e-9)
        })
}

/// What relieves the binding level (CUDA C++ Best Practices Guide: "Coalesced Access to
/// Global Memory", "Shared Memory and Memory Banks"; the warp-aggregated atomics of NVIDIA's
/// "CUDA Pro Tip: Optimized Filtering with Warp-Aggregated Atomics").
fn advice(bound: Bound) -> &'static str {
    match bound {
        Bound::L2 => "reuse in L1 or shared memory (tiles that each block reads once) and fewer sectors per request are",
        Bound::L1 => "fewer L1 wavefronts and store requests (coalesced or vector accesses, fewer requests per element; stores that write whole 128-byte lines, through a shared-memory tile where a warp would write down a column) are",
        Bound::Shared => "fewer shared-memory wavefronts (no bank conflicts: padding or a swizzled layout; vector accesses; values kept in registers) are",
        Bound::Atomics => "fewer atomics on one address (a warp or block reduction first, then one atomic per warp or block) are",
        _ => "fewer or better-coalesced global accesses are",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::{analyze, findings};

    #[test]
    fn vadd_is_memory_bound_and_names_the_gpu() {
        // 2^24 floats per array: 192 MiB, far more than the 40 MiB L2, so DRAM binds (at
        // 2^20 the 12 MiB stay in L2 between launches and the launch costs dominate).
        let (_, a) = analyze("vadd", [65536, 1, 1], [256, 1, 1], &[("param_3", 1 << 24)], &["a100-sxm4-80gb"]);
        let f = findings(&a, "vadd", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        assert_eq!(f[0].gpu.as_deref(), Some("a100-sxm4-80gb"));
        assert!(f[0].message.contains("µs"), "{}", f[0].message);
        assert_eq!(f[0].ptx_span, a.kernels[0].name_span);
        // An explicit launch: no annotation fix.
        assert!(f[0].fixes.is_empty());
    }

    /// The advice follows the binding level: the headline's bound is read from the same
    /// analysis, and the message must carry that level's advice, not the DRAM one.
    fn advice_of(name: &str, kernel: &str, grid: [u32; 3], block: [u32; 3], args: &[(&str, i64)]) -> (Bound, String) {
        let (_, a) = analyze(name, grid, block, args, &["a100-sxm4-80gb"]);
        let k = a.kernels.iter().find(|k| k.name.contains(kernel)).expect("kernel");
        let bound = k.targets[0].models.as_ref().expect("models").headline.bound;
        let f = findings(&a, kernel, CODE);
        assert_eq!(f.len(), 1, "{kernel}: {:?}", k.findings);
        (bound, f[0].message.clone())
    }

    #[test]
    fn same_address_atomics_get_the_aggregation_advice() {
        // One global atomicAdd per input byte on 256 counters.
        let (bound, message) = advice_of("histogram", "histogram_global", [4096, 1, 1], [256, 1, 1], &[("param_2", 1 << 24)]);
        assert_eq!(bound, Bound::Atomics, "{message}");
        assert!(message.contains("(atomics)") && message.contains("a warp or block reduction first"), "{message}");
        assert!(!message.contains("better-coalesced"), "{message}");
    }

    #[test]
    fn one_atomic_per_block_gets_the_fewer_blocks_advice() {
        // reduce_shuffle: warp shuffles, then `if (threadIdx.x == 0) atomicAdd(out, v)`,
        // 65,536 blocks of one element per thread: the atomics on one address bind, and they
        // are already one per block. (reduce_shared's barrier tree puts its chain just above
        // its atomics: latency-bound, with the latency-bound finding instead.)
        let path = format!("{}/../../examples/reduce.ptx", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let a = crate::findings::test_support::analyze_text(&text, [65536, 1, 1], [256, 1, 1], &[("param_2", 1 << 24)], &["a100-sxm4-80gb"]);
        let f = findings(&a, "reduce_shuffle", CODE);
        assert_eq!(f.len(), 1);
        let m = &f[0].message;
        assert!(m.contains("(atomics)") && m.contains("fewer blocks, each reducing more elements"), "{m}");
        assert!(!m.contains("a warp or block reduction first"), "{m}");
    }

    #[test]
    fn a_shared_bound_kernel_gets_the_bank_conflict_advice() {
        // The unpadded 32×32 tile read by columns: 32-way bank conflicts.
        let (bound, message) = advice_of("transpose_naive", "transpose_naive", [256, 256, 1], [32, 8, 1], &[("param_2", 8192), ("param_3", 8192)]);
        assert_eq!(bound, Bound::Shared, "{message}");
        assert!(message.contains("(shared)") && message.contains("no bank conflicts"), "{message}");
    }

    #[test]
    fn the_advice_names_what_relieves_each_level() {
        for (bound, words) in [
            (Bound::Dram, "better-coalesced global accesses"),
            (Bound::Memory, "better-coalesced global accesses"),
            (Bound::L2, "reuse in L1 or shared memory"),
            (Bound::L1, "fewer L1 wavefronts"),
            (Bound::Shared, "bank conflicts"),
            (Bound::Atomics, "one atomic per warp or block"),
        ] {
            assert!(advice(bound).contains(words), "{bound:?}: {}", advice(bound));
        }
    }

    #[test]
    fn a_compute_heavy_kernel_is_not_memory_bound() {
        // nbody: O(n) FMAs per loaded body, read from shared memory tiles.
        let (_, a) = analyze("nbody", [64, 1, 1], [256, 1, 1], &[("param_2", 16384)], &["a100-sxm4-80gb"]);
        let k = &a.kernels[0];
        let bound = k.targets[0].models.as_ref().ok().map(|r| r.headline.bound);
        assert_eq!(findings(&a, "nbody", CODE).is_empty(), !bound.is_some_and(Bound::is_memory_side));
        assert!(!bound.is_some_and(Bound::is_memory_side), "nbody should be compute- or latency-bound: {bound:?}");
    }
}
