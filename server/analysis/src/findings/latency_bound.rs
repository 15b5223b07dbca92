//! `latency-bound`: the headline prediction says the kernel waits on its dependence chain.
//!
//! ## What it does
//! Reports a kernel whose headline execution-time prediction (the consensus of
//! `perf-models`, `docs/models.md`) classifies it as latency-bound on the primary GPU: the
//! resident warps' dependence chains, run wave after wave, take longer than any throughput
//! limit (issue, pipes, caches, DRAM). When the headline model splits the chain (the
//! `bottleneck` model's `chain_cycles` and `chain_offchip_cycles`), the message says how
//! much of a warp's chain (the busiest warp's where a block's warps work unequally) is spent
//! waiting on global loads, and how busy DRAM is
//! (`dram_us` over the headline time). When the off-chip loads are more than half of the
//! chain, the kernel is *memory-latency-bound* (Nsight Compute shows its warps stalled on
//! the "long scoreboard"); otherwise its chain is dependent arithmetic, shared-memory
//! accesses and barriers. When the model's barrier-phase floor is the time (`phase_us`:
//! blocks that meet at `__syncthreads()` wait for their loads and then compute, one after
//! the other), it is *latency-bound in barrier phases*, and the advice is double buffering.
//!
//! ## Why is this bad?
//! A latency-bound kernel leaves the GPU's units idle: by Little's law (V. Volkov,
//! "Understanding Latency Hiding on GPUs", PhD thesis, UC Berkeley 2016, ch. 4) the
//! throughput a kernel reaches is the work in flight divided by the latency, and too
//! little is in flight to cover the latency. Cutting traffic or arithmetic (the
//! `memory-bound` advice) buys little; what helps is more independent work in flight: for
//! a memory-latency-bound kernel more bytes in flight per warp, otherwise more independent
//! instructions per warp (instruction-level parallelism), or, either way, more resident
//! warps when the SM has free warp slots.
//!
//! ## Example
//! ```cuda
//! // examples/reduce.cu: one element per thread, then a shared-memory tree. Each warp
//! // waits for its one load before the tree can start.
//! s[tid] = i < n ? in[i] : 0.0f;
//! __syncthreads();
//! ```
//!
//! ## Fix
//! No automatic fix. For a memory-latency-bound kernel, put more loads in flight per warp:
//! several elements per thread (a grid-stride loop over a grid of one wave,
//! `reduce_grid_stride` in `examples/reduce.cu`), vector loads (`float4`), loads issued
//! before their uses (unrolled loops). For an arithmetic, shared-memory or barrier chain,
//! interleave independent chains per thread (several accumulators, several elements per
//! thread) or cut barriers. More resident warps (a larger grid, fewer registers or less
//! shared memory per block) help both, when the SM has free warp slots. When the launch
//! configuration is unknown, a fix inserts a `// warpsight:` annotation so the verdict is
//! made for the real launch.

use perf_models::prediction::Bound;

use super::{Ctx, Finding, pct, per_gpu};
use crate::{Severity, TargetAnalysis};

pub const CODE: &str = "latency-bound";
pub const SEVERITY: Severity = Severity::Information;

/// Above this share of the chain in off-chip loads the kernel is memory-latency-bound
/// (the loads are the larger part of what each warp waits on).
pub const MEMORY_LATENCY_SHARE: f64 = 0.5;

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    per_gpu(cx, acc, check_target);
}

/// Warps resident on the busiest SM: the occupancy's, or fewer when the grid has fewer
/// blocks per SM than fit; with the SM's warp slots.
fn resident_warps(cx: &Ctx<'_>, t: &TargetAnalysis) -> Option<(u64, u64)> {
    let o = t.occupancy.as_ref().ok()?;
    let blocks_per_sm = cx.kernel.launch.blocks().div_ceil(u64::from(t.gpu.sm_count.max(1)));
    let warps = blocks_per_sm.min(u64::from(o.blocks_per_sm)) * u64::from(o.warps_per_block);
    Some((warps, u64::from(o.max_warps_per_sm)))
}

fn check_target(cx: &Ctx<'_>, t: &TargetAnalysis) -> Option<Finding> {
    let report = t.models.as_ref().ok()?;
    let h = &report.headline;
    if h.bound != Bound::Latency {
        return None;
    }
    let breakdown = report.predictions.iter().find(|p| p.model == h.model).map(|p| &p.breakdown);
    let get = |k: &str| breakdown.and_then(|b| b.get(k)).copied().filter(|v| v.is_finite() && *v >= 0.0);
    let dram = match get("dram_us") {
        Some(us) if h.time_us > 0.0 => format!(", with DRAM busy {} of the time", pct((us / h.time_us).min(1.0))),
        _ => String::new(),
    };
    let (more_warps, full) = match resident_warps(cx, t) {
        Some((warps, slots)) if warps < slots => (format!(" or more resident warps (now {warps} of {slots} per SM)"), String::new()),
        Some((_, slots)) => (String::new(), format!(" (all {slots} warp slots per SM are already used)")),
        None => (" or more resident warps".to_string(), String::new()),
    };
    let chain = get("chain_cycles").filter(|c| *c > 0.0).zip(get("chain_offchip_cycles"));
    // Barrier phases bind when their floor is the time (without the launch).
    let work_us = h.time_us - get("launch_overhead_us").unwrap_or(0.0);
    let phases = get("phase_us").filter(|us| *us > 0.0 && *us >= work_us * (1.0 - 1e-9)).and(get("phase_demand_cycles")).zip(chain);
    let (kind, waits, advice) = match (phases, chain) {
        (Some((demand, (_, offchip))), _) => (
            "latency-bound in barrier phases",
            format!("; each block waits {offchip:.0} cycles on global loads, then runs {demand:.0} cycles of its own work with no load in flight (its warps leave each barrier together)"),
            "loads of the next tile issued before computing on this one (double buffering, `cuda::memcpy_async`)",
        ),
        (None, Some((chain, offchip))) => {
            let share = (offchip / chain).min(1.0);
            // The bottleneck model's chain is the busiest warp's where the simulation found
            // warps of a block doing unequal work (a loop only the first warp enters).
            let whose = if t.profile.warps_work_unequally() { "the busiest warp's" } else { "each warp's" };
            let waits = format!("; {whose} chain of {chain:.0} cycles spends {offchip:.0} ({}) waiting on global loads", pct(share));
            if share > MEMORY_LATENCY_SHARE {
                let advice = "more independent loads in flight per warp (several elements per thread, vector loads, loads issued before their uses)";
                ("memory-latency-bound", waits, advice)
            } else {
                let waits = format!("{waits}, the rest of its chain is dependent arithmetic, shared-memory accesses and barriers");
                ("latency-bound", waits, "more independent work per warp (ILP)")
            }
        }
        // A headline model that does not split its chain.
        (None, None) => ("latency-bound", String::new(), "more independent work in flight per warp (several elements per thread, loads issued before their uses)"),
    };
    let message = format!(
        "{kind} on {}: the headline model `{}` predicts {} limited by latency{dram}{waits}; {advice}{more_warps} will speed it up{full}",
        t.gpu.name,
        h.model,
        crate::display::time_us(h.time_us),
    );
    let mut f = cx.on_kernel(CODE, SEVERITY, message, Some(&t.gpu.id));
    f.fixes.extend(cx.annotation_fix());
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::{analyze, analyze_text, findings};

    const A100: &str = "a100-sxm4-80gb";

    /// nvcc -ptx -arch=sm_80 of `if (i < n) out[i] = in[i];` on bytes: one 1-byte load per
    /// thread, 128 B in flight per warp.
    const COPY_BYTES: &str = ".version 9.5\n.target sm_80\n.address_size 64\n.visible .entry copy_bytes(\n.param .u64 copy_bytes_param_0,\n.param .u64 copy_bytes_param_1,\n.param .u32 copy_bytes_param_2\n)\n{\n.reg .pred %p<2>;\n.reg .b16 %rs<2>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<8>;\nld.param.u64 %rd1, [copy_bytes_param_0];\nld.param.u64 %rd2, [copy_bytes_param_1];\nld.param.u32 %r2, [copy_bytes_param_2];\nmov.u32 %r3, %ctaid.x;\nmov.u32 %r4, %ntid.x;\nmov.u32 %r5, %tid.x;\nmad.lo.s32 %r1, %r3, %r4, %r5;\nsetp.ge.s32 %p1, %r1, %r2;\n@%p1 bra $L__BB0_2;\ncvta.to.global.u64 %rd3, %rd1;\ncvt.s64.s32 %rd4, %r1;\nadd.s64 %rd5, %rd3, %rd4;\nld.global.u8 %rs1, [%rd5];\ncvta.to.global.u64 %rd6, %rd2;\nadd.s64 %rd7, %rd6, %rd4;\nst.global.u8 [%rd7], %rs1;\n$L__BB0_2:\nret;\n}\n";

    #[test]
    fn a_copy_with_one_byte_per_thread_waits_on_its_load() {
        // 2^26 bytes, 262,144 blocks of 256: the A100's 64 warp slots are full, yet each
        // warp's one load keeps only 128 B in flight. (The reductions of examples/reduce.cu
        // at one element per thread were the example here until their one atomic per block,
        // 1.6 ns each on one address, became their bound: memory_bound.rs.)
        let a = analyze_text(COPY_BYTES, [262_144, 1, 1], [256, 1, 1], &[("param_2", 1 << 26)], &[A100]);
        let kernel = "copy_bytes";
        let f = findings(&a, kernel, CODE);
        assert_eq!(f.len(), 1, "{kernel}: {:?}", a.kernels.iter().map(|k| &k.findings).collect::<Vec<_>>());
        let m = &f[0].message;
        assert!(m.starts_with("memory-latency-bound on NVIDIA A100"), "{m}");
        assert_eq!(f[0].gpu.as_deref(), Some(A100));
        // The numbers are the headline prediction's.
        let k = a.kernels.iter().find(|k| k.name.contains(kernel)).expect("kernel");
        let report = k.targets[0].models.as_ref().expect("report");
        assert_eq!(report.headline.bound, Bound::Latency);
        let b = &report.predictions.iter().find(|p| p.model == report.headline.model).expect("headline").breakdown;
        let (chain, offchip) = (b["chain_cycles"], b["chain_offchip_cycles"]);
        assert!(offchip > MEMORY_LATENCY_SHARE * chain, "{offchip} of {chain}");
        assert!(m.contains(&format!("each warp's chain of {chain:.0} cycles spends {offchip:.0} ({}) waiting on global loads", pct(offchip / chain))), "{m}");
        assert!(m.contains(&format!("DRAM busy {} of the time", pct(b["dram_us"] / report.headline.time_us))), "{m}");
        assert!(m.contains("more independent loads in flight per warp"), "{m}");
        // 8 blocks of 8 warps fill the A100's 64 warp slots.
        assert!(m.ends_with("before their uses) will speed it up (all 64 warp slots per SM are already used)"), "{m}");
        // An explicit launch: no annotation fix.
        assert!(f[0].fixes.is_empty());
    }

    #[test]
    fn a_dram_bound_kernel_is_not_latency_bound() {
        // reduce_grid_stride as launched: one wave of 864 blocks, a grid-stride loop.
        let path = format!("{}/../../examples/reduce.ptx", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let a = analyze_text(&text, [864, 1, 1], [256, 1, 1], &[("param_2", 1 << 24)], &[A100]);
        let k = a.kernels.iter().find(|k| k.name.contains("reduce_grid_stride")).expect("kernel");
        assert_ne!(k.targets[0].models.as_ref().expect("report").headline.bound, Bound::Latency);
        assert!(findings(&a, "reduce_grid_stride", CODE).is_empty());
        // vadd at 2^24 floats: DRAM-bound (the memory-bound finding's example).
        let (_, a) = analyze("vadd", [65536, 1, 1], [256, 1, 1], &[("param_3", 1 << 24)], &[A100]);
        assert_eq!(a.kernels[0].targets[0].models.as_ref().expect("report").headline.bound, Bound::Dram);
        assert!(findings(&a, "vadd", CODE).is_empty(), "{:?}", a.kernels[0].findings);
    }

    #[test]
    fn a_dependent_arithmetic_chain_gets_the_ilp_advice() {
        // nbody with one warp per SM: each body's interaction is a chain of dependent FMAs
        // on shared-memory operands; the tile loads are a small part.
        let (_, a) = analyze("nbody", [108, 1, 1], [32, 1, 1], &[("param_3", 108 * 32)], &[A100]);
        let f = findings(&a, "nbody", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        let m = &f[0].message;
        assert!(m.starts_with("latency-bound on NVIDIA A100"), "{m}");
        assert!(m.contains("the rest of its chain is dependent arithmetic, shared-memory accesses and barriers"), "{m}");
        assert!(m.contains("more independent work per warp (ILP) or more resident warps (now 1 of 64 per SM)"), "{m}");
        let report = a.kernels[0].targets[0].models.as_ref().expect("report");
        let b = &report.predictions.iter().find(|p| p.model == report.headline.model).expect("headline").breakdown;
        assert!(b["chain_offchip_cycles"] <= MEMORY_LATENCY_SHARE * b["chain_cycles"], "{b:?}");
    }

    /// nvcc -ptx -arch=sm_80 of a kernel that loads a 1024-float tile, meets at
    /// `__syncthreads()` and then runs 16 iterations of two dependent FMAs on it:
    /// `tile[threadIdx.x] = in[i]; __syncthreads(); for (k < 16) { a = a*c + b; b = b*d + a; }`.
    const TILE_THEN_COMPUTE: &str = r#".version 9.5
.target sm_80
.address_size 64

	// .globl	_Z17tile_then_computePKfPf
// _ZZ17tile_then_computePKfPfE4tile has been demoted

.visible .entry _Z17tile_then_computePKfPf(
	.param .u64 _Z17tile_then_computePKfPf_param_0,
	.param .u64 _Z17tile_then_computePKfPf_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<11>;
	.reg .b32 	%r<16>;
	.reg .b64 	%rd<10>;
	// demoted variable
	.shared .align 4 .b8 _ZZ17tile_then_computePKfPfE4tile[4096];

	ld.param.u64 	%rd3, [_Z17tile_then_computePKfPf_param_0];
	ld.param.u64 	%rd2, [_Z17tile_then_computePKfPf_param_1];
	cvta.to.global.u64 	%rd4, %rd3;
	mov.u32 	%r4, %ctaid.x;
	shl.b32 	%r5, %r4, 10;
	mov.u32 	%r6, %tid.x;
	add.s32 	%r7, %r5, %r6;
	cvt.s64.s32 	%rd1, %r7;
	mul.wide.s32 	%rd5, %r7, 4;
	add.s64 	%rd6, %rd4, %rd5;
	ld.global.f32 	%f7, [%rd6];
	shl.b32 	%r8, %r6, 2;
	mov.u32 	%r9, _ZZ17tile_then_computePKfPfE4tile;
	add.s32 	%r10, %r9, %r8;
	mov.u32 	%r15, 0;
	st.shared.f32 	[%r10], %f7;
	bar.sync 	0;
	xor.b32  	%r11, %r8, 8;
	add.s32 	%r12, %r9, %r11;
	ld.shared.f32 	%f9, [%r12];
	xor.b32  	%r13, %r8, 4;
	add.s32 	%r14, %r9, %r13;
	ld.shared.f32 	%f10, [%r14];

$L__BB0_1:
	.pragma "nounroll";
	fma.rn.f32 	%f10, %f10, 0f3F800347, %f9;
	fma.rn.f32 	%f9, %f9, 0f3F7FF972, %f10;
	add.s32 	%r15, %r15, 1;
	setp.ne.s32 	%p1, %r15, 16;
	@%p1 bra 	$L__BB0_1;

	cvta.to.global.u64 	%rd7, %rd2;
	shl.b64 	%rd8, %rd1, 2;
	add.s64 	%rd9, %rd7, %rd8;
	add.f32 	%f8, %f10, %f9;
	st.global.f32 	[%rd9], %f8;
	ret;

}

"#;

    #[test]
    fn a_block_that_loads_then_computes_after_a_barrier_gets_the_double_buffering_advice() {
        let run = |dynamic_smem: u32| {
            let settings = crate::Settings {
                gpus: vec![A100.into()],
                launch: crate::PartialLaunch { grid: Some([6912, 1, 1]), block: Some([1024, 1, 1]), dynamic_smem: Some(dynamic_smem), footprint: None, array_bytes: Default::default(), args: Default::default() },
                ..crate::Settings::default()
            };
            crate::analyze(TILE_THEN_COMPUTE, &settings, &crate::Context::default())
        };
        // 90,000 B of dynamic shared memory leave room for one 1024-thread block per SM: it
        // waits for its loads, then computes, with nothing of its own to overlap.
        let a = run(90_000);
        let f = findings(&a, "tile_then_compute", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        let m = &f[0].message;
        assert!(m.starts_with("latency-bound in barrier phases on NVIDIA A100"), "{m}");
        let report = a.kernels[0].targets[0].models.as_ref().expect("report");
        let b = &report.predictions.iter().find(|p| p.model == report.headline.model).expect("headline").breakdown;
        assert!(m.contains(&format!("each block waits {:.0} cycles on global loads, then runs {:.0} cycles of its own work", b["chain_offchip_cycles"], b["phase_demand_cycles"])), "{m}");
        assert!(m.contains("double buffering"), "{m}");
        assert!(m.contains("or more resident warps (now 32 of 64 per SM)"), "{m}");
        // Two resident blocks fill each other's gaps: no longer latency-bound.
        let a = run(0);
        assert_ne!(a.kernels[0].targets[0].models.as_ref().expect("report").headline.bound, Bound::Latency);
        assert!(findings(&a, "tile_then_compute", CODE).is_empty(), "{:?}", a.kernels[0].findings);
    }

    #[test]
    fn the_default_launch_offers_the_annotation_fix() {
        // conv2d at the documented default launch (1024 blocks of 256 threads) is
        // latency-bound on an A100. (conv1d was, until its bounds-checked loads counted as
        // ptxas issues them: predicated, in flight together; it is DRAM-bound now.)
        let text = crate::findings::test_support::fixture("conv2d");
        let settings = crate::Settings { gpus: vec![A100.into()], ..crate::Settings::default() };
        let a = crate::analyze(&text, &settings, &crate::Context::default());
        let k = a.kernels.iter().find(|k| k.name.contains("conv2d")).expect("kernel");
        assert_eq!(k.targets[0].models.as_ref().ok().map(|r| r.headline.bound), Some(Bound::Latency));
        let f = findings(&a, "conv2d", CODE);
        assert_eq!(f.len(), 1, "{:?}", k.findings);
        assert!(matches!(&f[0].fixes[..], [crate::fixes::Fix { kind: crate::fixes::FixKind::InsertAnnotation { .. }, .. }]), "{:?}", f[0].fixes);
    }
}
