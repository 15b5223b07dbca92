//! What the four `occupancy-limited-by-*` findings share: the threshold, the message
//! skeleton and the occupancy-optimal block size fix.
//!
//! Why a threshold at all: occupancy is not performance. Dasgupta (2011, §1.1, Fig. 2)
//! shows kernels that run faster at lower occupancy, so the findings stay quiet for the
//! common 50-100 % range and speak only when at most half of the warp slots can be used,
//! where latency hiding is most likely to suffer (Hong & Kim 2009's "not enough warps"
//! case, restated by Dasgupta 2011 §2.2.3).

use gpu_spec::occupancy::{self, DeviceProps, DeviceState, FuncAttrs};
use gpu_spec::{Limiters, Occupancy};

use super::{Ctx, Finding, Fix, FixKind, per_gpu, pct};
use crate::{Severity, TargetAnalysis};

/// An `occupancy-limited-by-{registers,shared-memory,blocks}` finding is produced only
/// when the theoretical occupancy (NVIDIA's calculator, `gpu_spec::occupancy`) is at or
/// below this fraction.
pub const OCCUPANCY_THRESHOLD: f64 = 0.5;

/// `occupancy-limited-by-warps` uses its own threshold: a warp-slot limit can never push
/// occupancy to 50 % or below (if a block takes at most half the slots, two fit), so the
/// finding speaks when block-size granularity alone wastes more than a quarter of the
/// slots, i.e. occupancy strictly below this fraction (1024 threads on a 48-warp SM:
/// 67 %).
pub const WARP_SLOTS_THRESHOLD: f64 = 0.75;

/// One of the four codes.
pub(crate) struct Limiter {
    pub code: &'static str,
    pub severity: Severity,
    pub bit: Limiters,
    /// Words for the message, e.g. "registers".
    pub what: &'static str,
    /// When the occupancy is low enough for the finding.
    pub threshold: Threshold,
}

/// Which occupancy threshold a [`Limiter`] fires at.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Threshold {
    /// At or below [`OCCUPANCY_THRESHOLD`].
    Occupancy,
    /// Below [`WARP_SLOTS_THRESHOLD`].
    WarpSlots,
}

/// Blocks per SM allowed by every resource except `bit` (`None`: nothing else limits).
pub(crate) fn other_limit(o: &Occupancy, bit: Limiters) -> Option<u32> {
    let all = [
        (Limiters::WARPS, Some(o.limit_warps)),
        (Limiters::REGISTERS, o.limit_registers),
        (Limiters::SHARED_MEMORY, o.limit_shared_memory),
        (Limiters::BLOCKS, Some(o.limit_blocks)),
        (Limiters::BARRIERS, o.limit_barriers),
        (Limiters::VIRTUAL_RESOURCES, o.limit_virtual_resources),
    ];
    all.iter().filter(|(b, _)| *b != bit).filter_map(|(_, l)| *l).min()
}

/// Runs one limiter's check on the targets; `detail` explains the limit in words and
/// `fixes` proposes fixes.
pub(crate) fn check(
    cx: &Ctx<'_>,
    acc: &mut Vec<Finding>,
    limiter: &Limiter,
    detail: impl Fn(&Ctx<'_>, &TargetAnalysis, &Occupancy) -> String,
    fixes: impl Fn(&Ctx<'_>, &TargetAnalysis, &Occupancy) -> Vec<Fix>,
) {
    per_gpu(cx, acc, |cx, t| {
        let o = t.occupancy.as_ref().ok()?;
        let low = match limiter.threshold {
            Threshold::Occupancy => o.occupancy <= OCCUPANCY_THRESHOLD,
            Threshold::WarpSlots => o.occupancy < WARP_SLOTS_THRESHOLD,
        };
        if o.blocks_per_sm == 0 || !o.limiters.contains(limiter.bit) || !low {
            return None;
        }
        let others: Vec<&str> = o.limiters.names().into_iter().filter(|n| *n != limiter.what.replace(' ', "_")).collect();
        let lifted = match other_limit(o, limiter.bit) {
            Some(b) if b > o.blocks_per_sm => {
                let warps = (b * o.warps_per_block).min(o.max_warps_per_sm);
                format!("; without this limit {b} blocks would fit ({})", pct(f64::from(warps) / f64::from(o.max_warps_per_sm.max(1))))
            }
            _ if !others.is_empty() => format!("; {} limit at the same point", others.join(" and ")),
            _ => String::new(),
        };
        let message = format!(
            "occupancy {} on {} limited by {}: {} block(s) of {} warps per SM, {} of {} warp slots; {}{lifted}",
            pct(o.occupancy),
            t.gpu.name,
            limiter.what,
            o.blocks_per_sm,
            o.warps_per_block,
            o.warps_per_sm,
            o.max_warps_per_sm,
            detail(cx, t, o),
        );
        let mut f = cx.on_kernel(limiter.code, limiter.severity, message, Some(&t.gpu.id));
        f.fixes = fixes(cx, t, o);
        f.fixes.extend(cx.annotation_fix());
        Some(f)
    });
}

/// The occupancy-optimal block size (`cudaOccMaxPotentialOccupancyBlockSize`, via
/// [`occupancy::max_potential_block_size`]) for the kernel's registers and shared memory,
/// as a fix when it raises occupancy. Offered only for one-dimensional blocks (a 2-D block
/// is part of the kernel's indexing and cannot be replaced by a 1-D size) and when the
/// kernel does not require a block size (`.reqntid`).
pub(crate) fn block_size_fix(cx: &Ctx<'_>, t: &TargetAnalysis, o: &Occupancy) -> Option<Fix> {
    let block = cx.kernel.launch.block;
    if block[1] != 1 || block[2] != 1 {
        return None;
    }
    let perf = cx.func.map(|f| &f.perf);
    if perf.is_some_and(|p| p.reqntid.is_some()) {
        return None;
    }
    let props = DeviceProps::from_limits(&t.gpu.limits, t.gpu.sm_count);
    let mut attrs = FuncAttrs::new(t.profile.resources.registers_per_thread, t.profile.resources.static_smem_bytes, &props);
    if let Some(max) = perf.and_then(|p| p.maxntid) {
        attrs.max_threads_per_block = max.iter().fold(1u32, |acc, d| acc.saturating_mul((*d).max(1)));
    }
    let dynamic = cx.kernel.launch.dynamic_smem;
    let best = occupancy::max_potential_block_size(&props, &attrs, &DeviceState::default(), |_| dynamic).ok()?;
    if best.block_size == 0 || best.block_size == block[0] || best.occupancy <= o.occupancy {
        return None;
    }
    let reason = format!(
        "occupancy {} at {} threads per block instead of {} at {} (cudaOccMaxPotentialOccupancyBlockSize for {} registers and {} B of shared memory on {}); recompute the grid for the new block size",
        pct(best.occupancy),
        best.block_size,
        pct(o.occupancy),
        block[0],
        t.profile.resources.registers_per_thread,
        u64::from(t.profile.resources.static_smem_bytes) + u64::from(dynamic),
        t.gpu.name,
    );
    Some(Fix { title: format!("Launch with {} threads per block", best.block_size), kind: FixKind::SetBlockSize { block: [best.block_size, 1, 1], reason } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_other_limit_ignores_the_named_resource() {
        let g = gpu_spec::Database::builtin().gpu("a100-sxm4-80gb").expect("a100");
        // 128 registers x 256 threads: 2 blocks by registers, 8 by warps, 32 by blocks.
        let o = g.occupancy(256, 128, 0, 0).expect("occupancy");
        assert_eq!(o.blocks_per_sm, 2);
        assert!(o.limiters.contains(Limiters::REGISTERS));
        assert_eq!(other_limit(&o, Limiters::REGISTERS), Some(8));
        assert_eq!(other_limit(&o, Limiters::WARPS), Some(2));
    }
}
