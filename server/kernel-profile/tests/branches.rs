//! Expected executions per block on guarded kernels (`tests/fixtures/cu/branches.cu` and
//! `divergent.cu`, PTX from nvcc 13.5 for sm_80): hand-derived warp counts.
//!
//! A warp runs a block when any of its lanes reaches it, so a block's executions per
//! thread are (warps that run it) / (warps in the grid). Thread i = 256·blockIdx.x +
//! threadIdx.x is lane i % 32 of global warp i / 32.

use std::collections::BTreeMap;

use kernel_profile::{AccessKind, InstrClass, KernelProfile, LaunchConfig, LaunchSource, ProfileInput, ProfileOptions, Space};

fn fixture(name: &str) -> String {
    let path = format!("{}/../../tests/fixtures/ptx/sm_80/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn profile_with(file: &str, kernel: &str, grid: u32, block: u32, args: &[(&str, i64)], options: &ProfileOptions) -> KernelProfile {
    profile_text(&fixture(file), kernel, grid, block, args, options)
}

fn profile_text(text: &str, kernel: &str, grid: u32, block: u32, args: &[(&str, i64)], options: &ProfileOptions) -> KernelProfile {
    let file = "the PTX text";
    let (module, errors) = ptx_ir::parse_and_lower(text);
    assert!(errors.is_empty(), "{file}: {errors:?}");
    let name = module.kernels().find(|k| k.name.contains(kernel)).unwrap_or_else(|| panic!("no kernel {kernel} in {file}")).name.clone();
    let input = ProfileInput {
        module: &module,
        kernel: &name,
        gpu_id: "a100-sxm4-80gb",
        compute_capability: (8, 0),
        launch: LaunchConfig {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            dynamic_smem: 0,
            args: args.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<_, _>>(),
            footprint_bytes: None, array_bytes: Default::default(), source: LaunchSource::Setting,
        },
        resources: None,
        source_param_names: &[],
        demangled: None,
        options,
        stated_trips: &[],
    };
    kernel_profile::build(&input).expect("profile")
}

fn profile(file: &str, kernel: &str, grid: u32, block: u32, args: &[(&str, i64)]) -> KernelProfile {
    profile_with(file, kernel, grid, block, args, &ProfileOptions::default())
}

/// Executions of the accesses of one space and kind, in PTX order.
fn executions(p: &KernelProfile, space: Space, kind: AccessKind) -> Vec<f64> {
    p.memory_accesses.iter().filter(|a| a.space == space && a.kind == kind).map(|a| a.executions).collect()
}

fn dynamic(p: &KernelProfile, class: InstrClass) -> f64 {
    p.counts.dynamic.get(&class).copied().unwrap_or(0.0)
}

/// The block holding the first instruction with this opcode.
fn block_with<'a>(p: &'a KernelProfile, opcode: &str) -> &'a kernel_profile::BlockProfile {
    p.blocks.iter().find(|b| b.instructions.iter().any(|i| i.opcode == opcode)).unwrap_or_else(|| panic!("no {opcode}"))
}

fn assumption<'a>(p: &'a KernelProfile, needle: &str) -> &'a str {
    p.assumptions.iter().find(|a| a.contains(needle)).unwrap_or_else(|| panic!("no assumption with `{needle}`: {:#?}", p.assumptions))
}

#[test]
fn a_false_runtime_flag_removes_its_block_and_a_true_one_keeps_it() {
    // 4 × 256 threads, n = 1000. `if (i >= n) return;`: warp 31 (i = 992..1023) still has
    // i = 992..999 below n, so all 32 warps run the body, with 1000 of 1024 lanes active.
    // Under flag = 0 the shared-memory detour (st.shared, ld.shared, the extra st.global)
    // never runs; under flag = 1 every warp runs it.
    let off = profile("branches", "flag_guarded", 4, 256, &[("param_2", 1000), ("param_3", 0)]);
    assert_eq!(executions(&off, Space::Shared, AccessKind::Store), vec![0.0]);
    assert_eq!(executions(&off, Space::Shared, AccessKind::Load), vec![0.0]);
    assert_eq!(executions(&off, Space::Global, AccessKind::Store), vec![0.0, 1.0]);
    assert_eq!(executions(&off, Space::Global, AccessKind::Load), vec![1.0]);
    assert_eq!(dynamic(&off, InstrClass::Load(Space::Shared)), 0.0);
    assert_eq!(block_with(&off, "st.shared.f32").executions, 0.0);
    assert_eq!(block_with(&off, "ld.global.nc.f32").active_lane_fraction, Some(1000.0 / 1024.0));
    assumption(&off, "decided by the launch and the arguments");

    let on = profile("branches", "flag_guarded", 4, 256, &[("param_2", 1000), ("param_3", 1)]);
    assert_eq!(executions(&on, Space::Shared, AccessKind::Store), vec![1.0]);
    assert_eq!(executions(&on, Space::Global, AccessKind::Store), vec![1.0, 1.0]);
    assert_eq!(dynamic(&on, InstrClass::Store(Space::Global)), 2.0);

    // Without the flag both sides count (the documented default), and the profile says
    // which argument would decide it.
    let unknown = profile("branches", "flag_guarded", 4, 256, &[("param_2", 1000)]);
    assert_eq!(executions(&unknown, Space::Shared, AccessKind::Store), vec![1.0]);
    assert!(assumption(&unknown, "param_3").contains("--arg param_3=VALUE"));
    assert!(assumption(&unknown, "param_3").contains("both sides counted"));
}

#[test]
fn a_bounds_guard_counts_the_warps_with_a_lane_in_range() {
    // n = 1000: warp g runs the body iff 32·g < 1000, i.e. g ≤ 31: all 32 warps.
    let p = profile("branches", "bounds_guard", 4, 256, &[("param_2", 1000)]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Load), vec![1.0]);
    // n = 900: 32·g < 900 for g ≤ 28: 29 of the 32 warps.
    let p = profile("branches", "bounds_guard", 4, 256, &[("param_2", 900)]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Load), vec![29.0 / 32.0]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Store), vec![29.0 / 32.0]);
    assert_eq!(dynamic(&p, InstrClass::Fp32), 29.0 / 32.0);
    assert_eq!(dynamic(&p, InstrClass::Return), 1.0, "every warp reaches the `ret`");
    // 900 active lanes in the 29 warps that run it.
    assert_eq!(block_with(&p, "ld.global.nc.f32").active_lane_fraction, Some(900.0 / (29.0 * 32.0)));
    let a = assumption(&p, "depends on the thread index");
    assert!(a.contains("29 of the 32 warps") && a.contains("all 4 blocks"), "{a}");
}

#[test]
fn a_huge_grid_is_sampled_and_its_boundary_block_is_exact() {
    // The streaming benchmarks' launch: N = 2^27 + 2 elements, 1024 threads per block,
    // N / 1024 + 1 = 131,073 blocks. Warp g runs the body iff 32·g < N, i.e.
    // g ≤ 4,194,304: 4,194,305 of the 131,073 · 32 = 4,194,336 warps.
    let n: i64 = (1 << 27) + 2;
    let p = profile("branches", "bounds_guard", 131_073, 1024, &[("param_2", n)]);
    let expect = 4_194_305.0 / 4_194_336.0;
    let got = executions(&p, Space::Global, AccessKind::Load)[0];
    assert!((got - expect).abs() < 1e-12, "{got} vs {expect}");
    assert!(assumption(&p, "depends on the thread index").contains("estimated from"), "{:#?}", p.assumptions);
}

#[test]
fn a_three_point_stencil_guard_drops_the_warps_past_the_edge() {
    // 40 blocks of 32 threads, n = 1000: the body runs for 1 ≤ i ≤ 998, so warps 0..31
    // (warp 31: i = 992..998) run it and warps 32..39 return at once: 32 of 40.
    // Active lanes: 998 of the 32 · 32 in those warps.
    let p = profile("branches", "stencil3_guard", 40, 32, &[("param_2", 1000)]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Load), vec![0.8, 0.8, 0.8]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Store), vec![0.8]);
    // The PTX has a mul, a sub and an fma; ptxas contracts the mul and the sub into one
    // DFMA (docs/profile.md, contraction), so two fp64 instructions issue.
    assert_eq!(dynamic(&p, InstrClass::Fp64), 2.0 * 0.8, "the contracted mul+sub and the fma");
    assert_eq!(block_with(&p, "ld.global.nc.f64").active_lane_fraction, Some(998.0 / 1024.0));
}

#[test]
fn a_thread_index_test_runs_in_one_warp_of_eight_with_half_its_lanes() {
    // threadIdx.x < 16: only warp 0 of each 256-thread block, 16 of its 32 lanes.
    let p = profile("branches", "half_warp_guard", 4, 256, &[]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Load), vec![0.125]);
    assert_eq!(block_with(&p, "ld.global.nc.f32").active_lane_fraction, Some(0.5));
}

#[test]
fn a_sentinel_store_is_not_counted_and_says_so() {
    // The streaming "read": the store happens only if in[i] == 1.2345.
    let p = profile("branches", "sentinel_read", 4, 256, &[("param_2", 1000)]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Load), vec![1.0]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Store), vec![0.0]);
    assert_eq!(dynamic(&p, InstrClass::Store(Space::Global)), 0.0);
    assert!(assumption(&p, "sentinel").contains("1.2345"));
}

#[test]
fn a_test_on_the_arguments_alone_is_resolved() {
    // One block of 256 threads. `if (i < n / 4)`: 250 → all 8 warps (warp 7 has
    // i = 224..249). `if (n % 4 != 0) if (i < n % 4)`: n = 1000 → never; n = 1001 →
    // only i = 0, in warp 0: 1 of 8.
    let p = profile("branches", "remainder_guard", 1, 256, &[("param_3", 1000)]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Load), vec![1.0]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Store), vec![1.0, 0.0]);
    // `n % 4 == 0 || i >= n % 4` is true whatever i: decided by the argument alone.
    assumption(&p, "decided by the launch and the arguments");
    let p = profile("branches", "remainder_guard", 1, 256, &[("param_3", 1001)]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Store), vec![1.0, 0.125]);
    assert_eq!(block_with(&p, "st.global.u32").active_lane_fraction, Some(1.0 / 32.0));
}

#[test]
fn a_data_dependent_branch_keeps_the_documented_default() {
    // `if (v > 0.0f)` on loaded data: both sides for every warp, unless configured.
    let p = profile("branches", "data_branch", 4, 256, &[("param_2", 1000)]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Store), vec![1.0]);
    assert!(assumption(&p, "depends on data").contains("both sides counted"));
    let half = ProfileOptions { unknown_branch_probability: 0.5, ..ProfileOptions::default() };
    let p = profile_with("branches", "data_branch", 4, 256, &[("param_2", 1000)], &half);
    assert_eq!(executions(&p, Space::Global, AccessKind::Store), vec![0.5]);
    // The join after it (the `ret`) still runs once per warp.
    assert_eq!(dynamic(&p, InstrClass::Return), 1.0);
}

#[test]
fn both_sides_of_a_lane_parity_test_run_in_every_warp() {
    // divergent_parity: threadIdx.x % 2 splits every warp; each side runs in all warps
    // with half the lanes, and the join runs once.
    let p = profile("divergent", "divergent_parity", 16, 256, &[("param_2", 4096)]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Store), vec![1.0]);
    assert_eq!(dynamic(&p, InstrClass::Return), 1.0);
    let halves: Vec<f64> = p.blocks.iter().filter_map(|b| b.active_lane_fraction).collect();
    assert!(halves.contains(&0.5), "{halves:?}");
}

#[test]
fn a_block_parity_test_splits_the_grid_in_half_exactly_or_sampled() {
    // uniform_branch: `if (blockIdx.x % 2 == 0) out = in * 2 else out = in + 2`, one
    // `add.f32` and one `st.global.f32` on each side.
    // 16,384 blocks are enumerated, 131,072 are sampled in pairs of neighbours: half of
    // the warps take each side either way.
    for (grid, tolerance, how) in [(16_384u32, 0.0, "counted over all 16384 blocks"), (131_072, 0.01, "estimated from")] {
        // `n` is not given: the bounds guard counts both sides, the block test alone varies.
        let p = profile("divergent", "uniform_branch", grid, 256, &[]);
        let sides = executions(&p, Space::Global, AccessKind::Store);
        assert_eq!(sides.len(), 2);
        assert!(sides.iter().all(|x| (x - 0.5).abs() <= tolerance), "grid {grid}: {sides:?}");
        assert_eq!(dynamic(&p, InstrClass::Store(Space::Global)), 1.0, "grid {grid}");
        assert!(assumption(&p, "depends on the block index").contains(how), "{:#?}", p.assumptions);
    }
}

#[test]
fn an_impossible_block_size_is_not_simulated() {
    // 2^20 threads per block: no GPU runs it; the profile falls back to counting both
    // sides at once instead of simulating 32,768 warps per block.
    let started = std::time::Instant::now();
    let p = profile("branches", "bounds_guard", 1 << 20, 1 << 20, &[("param_2", 900)]);
    assert_eq!(executions(&p, Space::Global, AccessKind::Load), vec![1.0]);
    assumption(&p, "exceeds CUDA's 1024");
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
}

/// nvcc -ptx -arch=sm_80 of the non-divergent tree with strided indexing (M. Harris,
/// "Optimizing Parallel Reduction in CUDA", NVIDIA 2007, kernel 2): `part[t] = in[i];
/// for (s = 1; s < blockDim.x; s <<= 1) { k = 2 * s * t; if (k < blockDim.x) part[k] +=
/// part[k + s]; __syncthreads(); }`, then thread 0 writes `part[0]`.
const TREE_STRIDED: &str = r#".version 9.5
.target sm_80
.address_size 64

	// .globl	_Z12tree_stridedPKfPf
// _ZZ12tree_stridedPKfPfE4part has been demoted

.visible .entry _Z12tree_stridedPKfPf(
	.param .u64 _Z12tree_stridedPKfPf_param_0,
	.param .u64 _Z12tree_stridedPKfPf_param_1
)
{
	.reg .pred 	%p<5>;
	.reg .f32 	%f<6>;
	.reg .b32 	%r<19>;
	.reg .b64 	%rd<9>;
	// demoted variable
	.shared .align 4 .b8 _ZZ12tree_stridedPKfPfE4part[1024];

	ld.param.u64 	%rd2, [_Z12tree_stridedPKfPf_param_0];
	ld.param.u64 	%rd1, [_Z12tree_stridedPKfPf_param_1];
	mov.u32 	%r1, %ntid.x;
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r7, %r2, %r1, %r3;
	cvta.to.global.u64 	%rd3, %rd2;
	mul.wide.u32 	%rd4, %r7, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f1, [%rd5];
	shl.b32 	%r8, %r3, 2;
	mov.u32 	%r9, _ZZ12tree_stridedPKfPfE4part;
	add.s32 	%r10, %r9, %r8;
	st.shared.f32 	[%r10], %f1;
	bar.sync 	0;
	setp.lt.u32 	%p1, %r1, 2;
	@%p1 bra 	$L__BB0_5;

	mov.u32 	%r18, 1;

$L__BB0_2:
	shl.b32 	%r5, %r18, 1;
	mul.lo.s32 	%r6, %r5, %r3;
	setp.ge.u32 	%p2, %r6, %r1;
	@%p2 bra 	$L__BB0_4;

	add.s32 	%r12, %r6, %r18;
	shl.b32 	%r13, %r12, 2;
	add.s32 	%r15, %r9, %r13;
	shl.b32 	%r16, %r6, 2;
	add.s32 	%r17, %r9, %r16;
	ld.shared.f32 	%f2, [%r17];
	ld.shared.f32 	%f3, [%r15];
	add.f32 	%f4, %f3, %f2;
	st.shared.f32 	[%r17], %f4;

$L__BB0_4:
	bar.sync 	0;
	setp.lt.u32 	%p3, %r5, %r1;
	mov.u32 	%r18, %r5;
	@%p3 bra 	$L__BB0_2;

$L__BB0_5:
	setp.ne.s32 	%p4, %r3, 0;
	@%p4 bra 	$L__BB0_7;

	ld.shared.f32 	%f5, [_ZZ12tree_stridedPKfPfE4part];
	cvta.to.global.u64 	%rd6, %rd1;
	mul.wide.u32 	%rd7, %r2, 4;
	add.s64 	%rd8, %rd6, %rd7;
	st.global.f32 	[%rd8], %f5;

$L__BB0_7:
	ret;

}

"#;

#[test]
fn a_tree_whose_stride_doubles_has_the_bank_conflicts_of_each_step_on_its_active_lanes() {
    // 256 threads. Step s runs the body on threads t < 128 / s, at word 2·s·t: s = 1 on warps
    // 0-3 (stride 2 words: 2-way), s = 2 on warps 0-1 (4-way), s = 4 on warp 0 (stride 8:
    // 4 banks, 8-way), s = 8 on 16 lanes (stride 16: 2 banks, 8-way), s = 16 on 8 lanes (one
    // bank, 8-way), s = 32, 64, 128 on 4, 2, 1 lanes (4-, 2-, 1-way). 12 warp executions of
    // 47 ways in all; the most, 8. Statically the stride (a loop value) is unknown and taken
    // as large: 32-way at every step.
    let p = profile_text(TREE_STRIDED, "tree_strided", 64, 256, &[], &ProfileOptions::default());
    let shared: Vec<_> = p.memory_accesses.iter().filter(|a| a.space == Space::Shared).collect();
    assert_eq!(shared.len(), 5, "{shared:#?}");
    // The first store (stride one word) and the last load (one address) are conflict-free
    // and not simulated; the loop's two loads and its store are.
    for a in [shared[0], shared[4]] {
        assert_eq!((a.bank_conflict_ways, a.mean_bank_conflict_ways), (Some(1), None), "{a:#?}");
    }
    for a in &shared[1..4] {
        assert_eq!(a.bank_conflict_ways, Some(8), "{a:#?}");
        let mean = a.mean_bank_conflict_ways.expect("simulated");
        assert!((mean - 47.0 / 12.0).abs() < 1e-9, "{mean}");
    }
    assumption(&p, "block executions from simulating the control flow");
}

/// nvcc -ptx -lineinfo of a byte histogram's `atomicAdd(&hist[in[i]], 1)` (line 12): the
/// atomic is CUDA's, inlined from `device_atomic_functions.hpp` (file 2) at line 12 of the
/// kernel's file. The profile places it there, where the user wrote it; the kernel's own
/// lines stay as they are.
const INLINED_ATOMIC: &str = r#".version 9.5
.target sm_90
.address_size 64
.visible .entry hist_global(
	.param .u64 hist_global_param_0,
	.param .u32 hist_global_param_1,
	.param .u64 hist_global_param_2
)
{
	.reg .pred 	%p<3>;
	.reg .b16 	%rs<2>;
	.reg .b32 	%r<13>;
	.reg .b64 	%rd<9>;
	.loc	1 9 0
	ld.param.u64 	%rd3, [hist_global_param_0];
	ld.param.u32 	%r6, [hist_global_param_1];
	ld.param.u64 	%rd4, [hist_global_param_2];
	.loc	1 11 5
	mov.u32 	%r1, %ntid.x;
	mov.u32 	%r7, %ctaid.x;
	mov.u32 	%r8, %tid.x;
	mad.lo.s32 	%r12, %r7, %r1, %r8;
	setp.ge.s32 	%p1, %r12, %r6;
	@%p1 bra 	$L__BB0_3;
	.loc	1 11 64
	mov.u32 	%r9, %nctaid.x;
	mul.lo.s32 	%r3, %r9, %r1;
	.loc	1 11 5
	cvta.to.global.u64 	%rd1, %rd3;
	cvta.to.global.u64 	%rd2, %rd4;
$L__BB0_2:
	.loc	1 12 9
	cvt.s64.s32 	%rd5, %r12;
	add.s64 	%rd6, %rd1, %rd5;
	ld.global.nc.u8 	%rs1, [%rd6];
	cvt.u32.u8 	%r10, %rs1;
	mul.wide.u32 	%rd7, %r10, 4;
	add.s64 	%rd8, %rd2, %rd7;
	.loc	2 107 3, function_name $L__info_string0, inlined_at 1 12 9
	atom.global.add.u32 	%r11, [%rd8], 1;
	.loc	1 11 64
	add.s32 	%r12, %r12, %r3;
	.loc	1 11 5
	setp.lt.s32 	%p2, %r12, %r6;
	@%p2 bra 	$L__BB0_2;
$L__BB0_3:
	.loc	1 13 1
	ret;
}
	.section	.debug_str
	{
$L__info_string0:
.b8 95,0
	}
	.file	1 "histogram.cu"
	.file	2 "/usr/local/cuda/include/device_atomic_functions.hpp"
"#;

#[test]
fn an_atomic_inlined_from_a_cuda_header_is_placed_at_its_call_site() {
    let p = profile_text(INLINED_ATOMIC, "hist_global", 64, 256, &[("param_1", 1 << 20)], &ProfileOptions::default());
    let place = |kind: AccessKind| {
        let a = p.memory_accesses.iter().find(|a| a.kind == kind).expect("access");
        (a.source_file.clone(), a.source_line)
    };
    assert_eq!(place(AccessKind::Atomic), (Some("histogram.cu".to_string()), Some(12)));
    assert_eq!(place(AccessKind::Load), (Some("histogram.cu".to_string()), Some(12)));
    // The index is a loaded byte: 256 counters of 4 bytes.
    assert_eq!(p.memory_accesses.iter().find(|a| a.kind == AccessKind::Atomic).and_then(|a| a.data_span_bytes), Some(1024));
}

/// A walk along a row in a loop ptxas unrolls by 4 more (`sass.rs`, item 8: a counter
/// stepped by 1 against a parameter) and a pointer chase of the same shape, one thread each.
const WALK_AND_CHASE: &str = "
.version 8.0
.target sm_80
.address_size 64

.visible .entry row_walk(.param .u64 a, .param .u64 y, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r1, [n];
    cvta.to.global.u64 %rd3, %rd1;
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
$L_walk:
    ld.global.u32 %r4, [%rd3];
    add.s32 %r3, %r3, %r4;
    add.s64 %rd3, %rd3, 4;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, %r1;
    @%p1 bra $L_walk;
    cvta.to.global.u64 %rd4, %rd2;
    st.global.u32 [%rd4], %r3;
    ret;
}

.visible .entry chase(.param .u64 a, .param .u64 y, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r1, [n];
    cvta.to.global.u64 %rd3, %rd1;
    mov.u32 %r2, 0;
$L_chase:
    ld.global.u64 %rd3, [%rd3];
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, %r1;
    @%p1 bra $L_chase;
    cvta.to.global.u64 %rd4, %rd2;
    st.global.u64 [%rd4], %rd3;
    ret;
}
";

/// ptxas issues the loads of its unrolled copies together, so the profile says how many PTX
/// iterations one pass through the unrolled code runs: 4 for 64 iterations an entry (16
/// groups), 3 for 6 (a group of 4, one of 2: `sass::partial_unroll_issues`). A pointer chase
/// takes each address from the load before it: its copies cannot overlap, and it has none.
#[test]
fn a_loop_ptxas_unrolls_issues_four_iterations_loads_together_unless_it_chases_pointers() {
    let copies = |kernel: &str, n: i64| {
        let p = profile_text(WALK_AND_CHASE, kernel, 1, 1, &[("n", n)], &ProfileOptions::default());
        p.blocks.iter().filter(|b| b.instructions.iter().any(|i| i.class == InstrClass::Load(Space::Global))).map(|b| b.ptxas_copies).collect::<Vec<_>>()
    };
    assert_eq!(copies("row_walk", 64), vec![Some(4.0)]);
    assert_eq!(copies("row_walk", 6), vec![Some(3.0)]);
    assert_eq!(copies("chase", 64), vec![None]);
    // ptxas unrolls the chase too (its instructions are counted so); only the overlap is refused.
    let chase = profile_text(WALK_AND_CHASE, "chase", 1, 1, &[("n", 64)], &ProfileOptions::default());
    assumption(&chase, "1 loop(s) with a run-time trip count unrolled by ptxas");
}
