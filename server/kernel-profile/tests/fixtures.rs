//! Hand-derived expectations of the static profile on the fixture corpus
//! (`tests/fixtures/ptx/sm_80`, compiled by nvcc 13.5 from `tests/fixtures/cu`).
//!
//! Each expectation is derived by hand from the CUDA source and the launch, independently
//! of the implementation; the comments give the derivation.

use kernel_profile::{AccessClass, AccessKind, InstrClass, KernelProfile, ProfileOptions, Space};

mod common;
use common::{line_of, profile};

/// The accesses of one space and kind at a source line.
fn at(p: &KernelProfile, space: Space, kind: AccessKind, line: u32) -> Vec<&kernel_profile::MemoryAccess> {
    p.memory_accesses.iter().filter(|a| a.space == space && a.kind == kind && a.source_line == Some(line)).collect()
}

#[test]
fn naive_matmul_seed001_fig3_md_is_strided_nd_is_broadcast() {
    // Pvalue += Md[j*N + k] * Nd[k*N + i]; j = blockIdx.x*16 + threadIdx.x,
    // i = blockIdx.y*16 + threadIdx.y; 16×16 blocks, N = 1024.
    // A warp is 16 values of threadIdx.x × 2 of threadIdx.y.
    // Md: 16 distinct addresses 4·N = 4096 bytes apart (the two rows of the warp share
    // them) → 16 sectors, stride 4096 along x.
    // Nd: two addresses 4 bytes apart (threadIdx.y = 0, 1) → 1 sector; stride 0 along x.
    let p = profile("matmul_naive", "matmul_naive", [64, 64, 1], [16, 16, 1], &[("param_3", 1024)]);
    let loads = at(&p, Space::Global, AccessKind::Load, line_of("matmul_naive", "Pvalue += Md"));
    assert_eq!(loads.len(), 10, "4× unrolled body + remainder, two loads each");
    let md: Vec<_> = loads.iter().filter(|a| a.stride_bytes == Some(4096)).collect();
    let nd: Vec<_> = loads.iter().filter(|a| a.stride_bytes == Some(0)).collect();
    assert_eq!((md.len(), nd.len()), (5, 5));
    for a in md {
        assert_eq!((a.class, a.transactions_per_request), (AccessClass::Strided, 16.0));
    }
    for a in nd {
        assert_eq!(a.transactions_per_request, 1.0);
        assert_ne!(a.class, AccessClass::Irregular);
    }
    // The store Pd[j*N + i]: like Md, 16 sectors.
    let st = at(&p, Space::Global, AccessKind::Store, line_of("matmul_naive", "Pd[j * N + i] ="));
    assert_eq!((st[0].class, st[0].transactions_per_request), (AccessClass::Strided, 16.0));
    // N = 1024 iterations: 256 of the 4× unrolled loop, 0 of the remainder; so 2·1024
    // global loads per thread.
    let trips: Vec<f64> = p.loops.iter().map(|l| l.assumed_trip_count).collect();
    assert_eq!(trips, vec![256.0, 0.0]);
    assert_eq!(p.counts.dynamic.get(&InstrClass::Load(Space::Global)), Some(&2048.0));
    assert_eq!(p.counts.dynamic.get(&InstrClass::Store(Space::Global)), Some(&1.0));
}

#[test]
fn tiled_matmul_seed001_fig4_is_coalesced_and_conflict_free() {
    // As[ty][tx] = A[row*N + t*16 + tx] with 16×16 blocks: two rows of 64 bytes per warp →
    // 4 sectors, the minimum for 128 bytes: coalesced. The shared reads As[ty][k] and
    // Bs[k][tx] are conflict-free; N/16 = 64 tiles.
    let p = profile("matmul_tiled", "matmul_tiled", [64, 64, 1], [16, 16, 1], &[("param_3", 1024)]);
    for line in [line_of("matmul_tiled", "Mds[ty][tx] ="), line_of("matmul_tiled", "Nds[ty][tx] =")] {
        let a = at(&p, Space::Global, AccessKind::Load, line);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].class, a[0].transactions_per_request, a[0].stride_bytes), (AccessClass::Coalesced, 4.0, Some(4)));
    }
    // 16 unrolled k steps × 2 loads in the PTX; ptxas merges the 16 Mds[ty][k] (consecutive
    // words from a 16-byte aligned row) into 4 LDS.128 and keeps the 16 Nds[k][tx] scalar
    // (nvdisasm of nvcc 13.5's sm_80 code: 16 LDS and 4 LDS.128), so 20 requests.
    let shared_loads: Vec<_> = p.memory_accesses.iter().filter(|a| a.space == Space::Shared && a.kind == AccessKind::Load).collect();
    assert_eq!(shared_loads.len(), 20);
    let vector: Vec<_> = shared_loads.iter().filter(|a| a.vector_width == 4).collect();
    assert_eq!(vector.len(), 4);
    assert!(vector.iter().all(|a| a.bytes_per_thread == 16));
    assert!(shared_loads.iter().all(|a| a.bank_conflict_ways == Some(1)));
    assert_eq!(p.loops.len(), 1);
    assert_eq!(p.loops[0].assumed_trip_count, 64.0);
    assert_eq!(p.counts.dynamic.get(&InstrClass::Load(Space::Global)), Some(&128.0));
    assert_eq!(p.counts.dynamic.get(&InstrClass::Barrier), Some(&128.0), "two __syncthreads per tile");
}

#[test]
fn transpose_naive_has_32_way_conflicts_padded_has_none() {
    // tile[threadIdx.x][threadIdx.y + j] read with a 32-float row: consecutive lanes are
    // 128 bytes apart → all in one bank → 32-way. Padding the row to 33 floats gives a
    // 132-byte stride → 32 different banks.
    let naive = profile("transpose_naive", "transpose_naive", [32, 32, 1], [32, 8, 1], &[("param_2", 1024), ("param_3", 1024)]);
    let padded = profile("transpose_padded", "transpose_padded", [32, 32, 1], [32, 8, 1], &[("param_2", 1024), ("param_3", 1024)]);
    let conflict = |p: &KernelProfile| {
        p.memory_accesses.iter().filter(|a| a.space == Space::Shared && a.kind == AccessKind::Load).map(|a| (a.stride_bytes, a.bank_conflict_ways)).collect::<Vec<_>>()
    };
    assert_eq!(conflict(&naive), vec![(Some(128), Some(32))]);
    assert_eq!(conflict(&padded), vec![(Some(132), Some(1))]);
    // Both read and write global memory along threadIdx.x: coalesced, 4 sectors.
    for p in [&naive, &padded] {
        for a in p.memory_accesses.iter().filter(|a| a.space == Space::Global) {
            assert_eq!((a.class, a.transactions_per_request), (AccessClass::Coalesced, 4.0), "{a:?}");
        }
    }
}

#[test]
fn grid_stride_loop_trip_count_follows_the_launch() {
    // for (i = blockIdx.x*blockDim.x + threadIdx.x; i < n; i += blockDim.x*gridDim.x):
    // n = 2^20 elements over 256 blocks × 256 threads = 16 iterations for every thread.
    let p = profile("grid_stride", "grid_stride", [256, 1, 1], [256, 1, 1], &[("param_3", 1 << 20)]);
    assert_eq!(p.loops.len(), 1);
    let l = &p.loops[0];
    assert!(l.trip_count_expr.as_deref().is_some_and(|e| e.contains("param_3")), "{l:?}");
    assert!((l.assumed_trip_count - 16.0).abs() < 0.51, "{l:?}");
    for a in &p.memory_accesses {
        assert_eq!((a.class, a.transactions_per_request), (AccessClass::Coalesced, 4.0));
        assert!((a.executions - 16.0).abs() < 0.51);
    }
    // Without n the count is the stated default, and the profile says so.
    let p = profile("grid_stride", "grid_stride", [256, 1, 1], [256, 1, 1], &[]);
    assert_eq!(p.loops[0].assumed_trip_count, ProfileOptions::default().default_trip_count);
    assert!(p.assumptions.iter().any(|a| a.contains("--arg")), "{:?}", p.assumptions);
}

#[test]
fn tree_reduction_shared_accesses_are_conflict_free_and_the_branch_diverges() {
    // sdata[tid] += sdata[tid + s] inside `if (tid < s)`: unit stride, no conflict; the
    // branch depends on threadIdx.x inside the halving loop: divergent in a loop.
    let p = profile("reduce_tree", "reduce_tree", [1024, 1, 1], [256, 1, 1], &[("param_2", 262_144)]);
    let line = line_of("reduce_tree", "sdata[tid] += sdata[tid + s]");
    let sh: Vec<_> = p.memory_accesses.iter().filter(|a| a.space == Space::Shared && a.source_line == Some(line)).collect();
    assert_eq!(sh.len(), 3);
    for a in sh {
        assert_eq!((a.class, a.stride_bytes, a.bank_conflict_ways), (AccessClass::Coalesced, Some(4), Some(1)));
    }
    let branch = line_of("reduce_tree", "if (tid < s)");
    assert!(p.divergent_branches.iter().any(|b| b.in_loop && b.source_line == Some(branch)), "{:?}", p.divergent_branches);
    assert_eq!(p.counts.dynamic.get(&InstrClass::Load(Space::Global)), Some(&1.0));
}

#[test]
fn spmv_csr_gather_is_irregular() {
    // sum += val[j] * x[col[j]] with j from row_ptr[row] (data): irregular, worst case.
    let p = profile("spmv_csr", "spmv_csr_scalar", [1024, 1, 1], [256, 1, 1], &[]);
    let gather = line_of("spmv_csr", "dot += values[jj] * x[col_idx[jj]]");
    let gathers: Vec<_> = p.memory_accesses.iter().filter(|a| a.source_line == Some(gather)).collect();
    assert!(!gathers.is_empty());
    for a in gathers {
        assert_eq!((a.class, a.transactions_per_request), (AccessClass::Irregular, 32.0));
    }
    // row_ptr[row] and row_ptr[row + 1]: unit stride; the second is 4 bytes off the
    // sector grid, so it touches 5 sectors.
    let (start, end) = (line_of("spmv_csr", "int row_start = row_ptr[row];"), line_of("spmv_csr", "int row_end = row_ptr[row + 1];"));
    let rp: Vec<f64> = p.memory_accesses.iter().filter(|a| a.source_line == Some(start) || a.source_line == Some(end)).map(|a| a.transactions_per_request).collect();
    assert_eq!(rp, vec![4.0, 5.0]);
}

#[test]
fn a_data_dependent_loop_unrolled_by_4_runs_the_default_count_in_all() {
    // for (jj = row_start; jj < row_end; jj++) with both bounds loaded: nvcc makes a
    // remainder loop over (row_end - row_start) & 3 and a body unrolled by 4, neither
    // count known. The source loop is taken to run the default count n: n % 4 + n / 4
    // iterations, n FMAs per thread (both loops each assumed n ran it 5n for n = 16).
    for n in [16.0, 13.0, 3.0] {
        let options = kernel_profile::ProfileOptions { default_trip_count: n, ..Default::default() };
        let p = common::profile_with(&common::fixture("spmv_csr"), "spmv_csr", "spmv_csr_scalar", [1024, 1, 1], [256, 1, 1], &[], &options);
        let gather = line_of("spmv_csr", "dot += values[jj] * x[col_idx[jj]]");
        let mut trips: Vec<f64> = p.loops.iter().filter(|l| l.source_line == Some(gather) || l.source_line == Some(gather - 1)).map(|l| l.assumed_trip_count).collect();
        trips.sort_by(f64::total_cmp);
        let (rem, main) = (n % 4.0, (n / 4.0).floor());
        let mut want = vec![rem, main];
        want.sort_by(f64::total_cmp);
        assert_eq!(trips, want, "n = {n}: {:#?}", p.loops);
        assert_eq!(executions_of(&p, "fma.rn.f32"), n, "n = {n}");
        assert!(p.assumptions.iter().any(|a| a.contains("unrolled by 4")), "{:#?}", p.assumptions);
        // The warp-per-row kernel strides by 32: the unrolled body steps by 128 (its
        // pointers by 512 bytes), the remainder loop by 32.
        let p = common::profile_with(&common::fixture("spmv_csr"), "spmv_csr", "spmv_csr_vector", [1024, 1, 1], [256, 1, 1], &[], &options);
        assert_eq!(executions_of(&p, "fma.rn.f32"), n, "vector kernel, n = {n}: {:#?}", p.loops);
    }
}

#[test]
fn histogram_counts_atomics_and_flags_them_data_dependent() {
    // atomicAdd(&bins[data[i]], 1) in a grid-stride loop over n = 2^20 bytes with
    // 64 × 256 threads: 64 iterations, one atomic each.
    let p = profile("histogram", "histogram_global", [64, 1, 1], [256, 1, 1], &[("param_2", 1 << 20)]);
    let atomics: Vec<_> = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Atomic).collect();
    assert_eq!(atomics.len(), 1);
    assert_eq!((atomics[0].space, atomics[0].class), (Space::Global, AccessClass::Irregular));
    assert!((p.counts.atomics - 64.0).abs() < 0.51, "{}", p.counts.atomics);
    // The byte loads data[i] are 1 byte at unit stride: one sector per warp.
    let loads: Vec<_> = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Load).collect();
    assert_eq!((loads[0].class, loads[0].transactions_per_request, loads[0].stride_bytes), (AccessClass::Coalesced, 1.0, Some(1)));
}

/// Executions per thread of the instructions whose opcode starts with `prefix`, from the
/// blocks' dependence graphs (what the scheduling model reads).
fn executions_of(p: &KernelProfile, prefix: &str) -> f64 {
    p.blocks.iter().map(|b| b.executions * b.instructions.iter().filter(|i| i.opcode.starts_with(prefix)).count() as f64).sum()
}

#[test]
fn conv1d_runtime_mask_width_unrolled_by_4_counts_exactly() {
    // for (j = 0; j < mask_width; j++) pvalue += N[start + j] * M[j]: nvcc unrolls by 4 (a
    // main loop whose exit test is `((mw & 3) - mw) + j != 0`) plus a remainder loop over
    // `mw & 3`. Every thread runs the body mask_width times (both sides of the ghost-cell
    // test are counted), so the FMA runs exactly mask_width times per thread: mw / 4 main
    // iterations of 4 FMAs plus mw % 4 remainder iterations of 1.
    for mw in [1i64, 2, 3, 4, 5, 7, 8, 13, 31] {
        let p = profile("conv1d", "conv1d", [4096, 1, 1], [256, 1, 1], &[("param_3", mw), ("param_4", 1 << 20)]);
        let trips: Vec<Option<f64>> = p.loops.iter().map(|l| l.trip_count).collect();
        assert_eq!(trips, vec![Some((mw / 4) as f64), Some((mw % 4) as f64)], "mw = {mw}: {:?}", p.assumptions);
        assert_eq!(executions_of(&p, "fma.rn.f32"), mw as f64, "mw = {mw}");
        // Two global loads per tap, one store.
        assert_eq!(p.counts.dynamic.get(&InstrClass::Load(Space::Global)), Some(&(2.0 * mw as f64)), "mw = {mw}");
        assert!(!p.assumptions.iter().any(|a| a.contains("assumed 16")), "{:?}", p.assumptions);
    }
    // The main loop's count is symbolic in mask_width.
    let p = profile("conv1d", "conv1d", [4096, 1, 1], [256, 1, 1], &[]);
    assert!(p.loops.iter().all(|l| l.trip_count_expr.as_deref().is_some_and(|e| e.contains("param_3"))), "{:?}", p.loops);
}

#[test]
fn conv2d_runtime_nested_parameter_bounds_count_exactly() {
    // for i < mw { for j < mw { if (r >= 0 && r < height && c >= 0 && c < width) pvalue +=
    // in[..] * mask[..] } } inside `if (col < width && row < height)`, with r = row - mw/2
    // + i, c = col - mw/2 + j: the inner loop is unrolled by 4 (main loop counting `mw -
    // (mw & 3)` down by 4) and its remainder becomes the chain `(mw & 3) == 0 / 1 / 2` of
    // branches, which the arguments decide. Every thread of a 1024² image with a 64×64
    // grid of 16×16 blocks is inside the image, and a warp (16 columns × 2 rows) runs a tap
    // when any of its lanes reads inside the image: mw² taps, except near the top and the
    // bottom of the image. Warp w of a top block (rows 2w and 2w + 1) skips the taps of
    // i < mw/2 - 1 - 2w (both rows above the image), warp 7 - v of a bottom block (rows
    // 1022 - 2v and 1023 - 2v) those of i ≥ mw/2 + 2 + 2v; no warp has all its 16 columns
    // outside. Each such warp is 1 of the 8 warps of 1 of the 64 block rows.
    for mw in [1i64, 3, 4, 5, 7, 8, 9, 15] {
        let p = profile(
            "conv1d",
            "conv2d_runtime",
            [64, 64, 1],
            [16, 16, 1],
            &[("param_3", mw), ("param_4", 1024), ("param_5", 1024)],
        );
        let top: i64 = (0..8).map(|w| (mw / 2 - 1 - 2 * w).max(0)).sum();
        let bottom: i64 = (0..8).map(|v| (mw - (mw / 2 + 2 + 2 * v)).max(0)).sum();
        let lost_per_warp = ((top + bottom) * mw) as f64 / (8.0 * 64.0);
        let per_warp = executions_of(&p, "fma.rn.f32");
        assert_eq!(per_warp, (mw * mw) as f64 - lost_per_warp, "mw = {mw}: {:?}", p.assumptions);
        let trips: Vec<Option<f64>> = p.loops.iter().map(|l| l.trip_count).collect();
        assert_eq!(trips, vec![Some(mw as f64), Some((mw / 4) as f64)], "mw = {mw}");
    }
}

#[test]
fn constant_mask_taps_are_operands_not_loads() {
    // conv2d: the 25 taps c_mask[i*5 + j] of the unrolled loops are `ld.const [c_mask+4k]`
    // at fixed addresses feeding FMAs; ptxas reads them as c[0x3][4k] operands (nvdisasm
    // of the sm_80 cubin shows 25 FFMAs with constant operands and no LDC). They stay
    // visible as uniform constant accesses, and are not counted as loads.
    let p = profile("conv2d", "conv2d", [120, 68, 1], [16, 16, 1], &[("param_2", 1920), ("param_3", 1080)]);
    let c: Vec<_> = p.memory_accesses.iter().filter(|a| a.space == Space::Const).collect();
    assert_eq!(c.len(), 25);
    assert!(c.iter().all(|a| a.constant_operand == Some(true) && a.class == AccessClass::Uniform), "{c:?}");
    assert_eq!(p.counts.dynamic.get(&InstrClass::Load(Space::Const)), None);
    assert_eq!(p.counts.static_.get(&InstrClass::Load(Space::Const)), None);
    assert!(!p.blocks.iter().flat_map(|b| &b.instructions).any(|i| i.opcode.starts_with("ld.const")));
}

#[test]
fn black_scholes_mul_sub_pairs_are_one_fma_each() {
    // The call/put prices end in `x - a*b` products (sm_80 PTX): `mul.f32 %f54, %f53, %f48;
    // sub.f32 %f55, %f52, %f54` and `mul %f57; mul %f59; sub.f32 %f60, %f57, %f59`, each
    // product read once, in one block: ptxas issues an FFMA with a negated operand for
    // each `sub` (one of the two products of %f60 fuses). The products of CND (%f30, %f46)
    // are also read by a `selp`: they stay FMULs. So 2 fp32 instructions fewer than the
    // PTX text, shown as two fused `fma.rn.f32` nodes, and the FFMA-pipe instructions of the
    // IEEE divisions and roots' SASS sequences more (`sass.rs` item 6).
    let p = profile("black_scholes", "black_scholes", [1024, 1, 1], [256, 1, 1], &[("param_6", 262_144)]);
    let text = common::fixture("black_scholes");
    let (module, _) = ptx_ir::parse_and_lower(&text);
    let f = module.kernels().find(|k| k.name.contains("black_scholes")).expect("kernel");
    let ptx_fp32 = f.instrs.iter().filter(|i| i.class == InstrClass::Fp32).count() as u64;
    let sequences: u64 = f
        .instrs
        .iter()
        .filter_map(|i| kernel_profile::sass::expansion(f, i))
        .flat_map(|e| e.iter())
        .filter(|(c, _)| *c == InstrClass::Fp32)
        .map(|(_, k)| u64::from(*k))
        .sum();
    assert!(sequences > 0, "the kernel's sqrtf and divisions");
    assert_eq!(p.counts.static_.get(&InstrClass::Fp32), Some(&(ptx_fp32 - 2 + sequences)));
    let fused: Vec<&str> = p.blocks.iter().flat_map(|b| &b.instructions).filter_map(|i| i.fused_from.as_deref()).collect();
    assert_eq!(fused, vec!["mul.f32 + sub.f32"; 2]);
}

/// The global and shared accesses of a kernel that run, as (space, kind, executions).
fn executed(p: &KernelProfile) -> Vec<&kernel_profile::MemoryAccess> {
    p.memory_accesses.iter().filter(|a| a.executions > 0.0 && a.space != Space::Const).collect()
}

#[test]
fn block_stride_tile_loads_count_per_thread_and_coalesce() {
    // tile_box (tiled_load.cu), 32×8 blocks, radius 3: a 14×38 tile. Rows i = ty, ty + 8:
    // 2 for ty < 6, 1 for ty = 6, 7, so 14/8 = 1.75 per thread. Columns j = tx, tx + 32,
    // 2 for tx < 6, else 1: nvcc turns this loop into a chain of up to three remainder
    // copies ((trips & 3) of them) before an unrolled-by-4 loop that no thread reaches
    // (it needs 4 trips). A warp is one row of 32 lanes: every warp runs copy 1 and, for
    // its lanes 0-5, copy 2, once per row it copies; copy 3 never runs. Each copy is a
    // coalesced 128-byte row of `in` (4-byte stride) and a conflict-free shared store.
    let p = profile("tiled_load", "tile_box", [64, 256, 1], [32, 8, 1], &[("param_2", 2048)]);
    let trips: Vec<Option<f64>> = p.loops.iter().map(|l| l.trip_count).collect();
    assert_eq!(trips, vec![Some(1.75), Some(0.0)], "{:?}", p.assumptions);
    assert_eq!(p.loops[0].trip_count_expr.as_deref(), Some("ceil((6 - %tid.y) / 8) + 1"));
    assert!(p.assumptions.iter().any(|a| a.contains("per-thread trip count `ceil((6 - %tid.y) / 8) + 1`") && a.contains("1.75")), "{:?}", p.assumptions);
    assert!(!p.assumptions.iter().any(|a| a.contains("assumed 16") || a.contains("data-dependent") || a.contains("first path")), "{:?}", p.assumptions);
    let line = line_of("tiled_load", "tile[i][j] = in[");
    let loads = at(&p, Space::Global, AccessKind::Load, line);
    let runs: Vec<f64> = loads.iter().map(|a| a.executions).collect();
    // Three remainder copies and the four of the unrolled loop, in PTX order.
    assert_eq!(runs, vec![1.75, 1.75, 0.0, 0.0, 0.0, 0.0, 0.0]);
    for a in loads.iter().chain(at(&p, Space::Shared, AccessKind::Store, line).iter()) {
        assert_eq!((a.class, a.stride_bytes), (AccessClass::Coalesced, Some(4)), "{a:?}");
        assert_ne!(a.address, None, "{a:?}");
        assert!(a.bank_conflict_ways.is_none_or(|w| w == 1), "{a:?}");
    }
    // The row loop moves the address by 8 rows of width + 6 floats: 8 · 2054 · 4 bytes.
    let pattern = loads[0].address.as_ref().expect("affine");
    assert_eq!((pattern.tid, pattern.loops[0].bytes_per_iteration), ([4, 2054 * 4, 0], 8 * 2054 * 4));
    assert_eq!(p.counts.dynamic.get(&InstrClass::Load(Space::Global)), Some(&3.5));
    // The box filter: 49 shared loads and 49 FADDs (plus the scaling FMUL) per output.
    assert_eq!(p.counts.dynamic.get(&InstrClass::Load(Space::Shared)), Some(&49.0));
    assert_eq!(p.counts.dynamic.get(&InstrClass::Fp32), Some(&50.0));
    assert!(executed(&p).iter().all(|a| a.class != AccessClass::Irregular), "{:?}", executed(&p));
}

#[test]
fn block_stride_loops_with_runtime_block_size_restart_per_row() {
    // tile_box_dyn: the same tile with blockDim strides and bounds. Rows: 1.75 per thread
    // as above; columns restart at tx on every row: 2 for tx < 6, else 1, so 38/32 = 1.1875
    // per entry per thread, while every warp (one row of 32 lanes) runs the loop twice.
    // Loads per warp: 1.75 rows × 2.
    let p = profile("tiled_load", "tile_box_dyn", [64, 256, 1], [32, 8, 1], &[("param_2", 2048)]);
    let trips: Vec<Option<f64>> = p.loops.iter().map(|l| l.trip_count).collect();
    assert_eq!(trips, vec![Some(1.75), Some(1.1875)], "{:?}", p.assumptions);
    assert_eq!(p.loops[1].trip_count_expr.as_deref(), Some("ceil(((%ntid.x + 6) - %tid.x) / %ntid.x)"));
    assert!(p.assumptions.iter().any(|a| a.contains("1.19 per entry") && a.contains("the warps run it 2.00 times per entry")), "{:?}", p.assumptions);
    let line = line_of("tiled_load", "tile_dyn[i * tw + j] = in[");
    let loads = at(&p, Space::Global, AccessKind::Load, line);
    assert_eq!(loads.len(), 1);
    assert_eq!((loads[0].class, loads[0].executions), (AccessClass::Coalesced, 3.5));
    let pattern = loads[0].address.as_ref().expect("affine");
    let strides: Vec<i64> = pattern.loops.iter().map(|l| l.bytes_per_iteration).collect();
    assert_eq!(strides, vec![8 * 2054 * 4, 32 * 4]);
    let st = at(&p, Space::Shared, AccessKind::Store, line);
    assert_eq!((st[0].class, st[0].bank_conflict_ways, st[0].executions), (AccessClass::Coalesced, Some(1), 3.5));
}

#[test]
fn linearised_tile_loop_counts_per_thread() {
    // conv2d: for (idx = ty*16 + tx; idx < 400; idx += 256) over a 20×20 tile with 16×16
    // threads: 2 trips for idx < 144, 1 for the other 112 threads. nvcc emits a remainder
    // loop over (trips & 3) (2 or 1 per thread: 400/256 = 1.5625 on average) and an
    // unrolled-by-4 loop no thread reaches (it comes first in the PTX).
    let p = profile("conv2d", "conv2d", [120, 68, 1], [16, 16, 1], &[("param_2", 1920), ("param_3", 1080)]);
    let trips: Vec<Option<f64>> = p.loops.iter().map(|l| l.trip_count).collect();
    assert_eq!(trips, vec![Some(0.0), Some(1.5625)], "{:?}", p.assumptions);
    assert!(!p.assumptions.iter().any(|a| a.contains("first path") || a.contains("assumed 16")), "{:?}", p.assumptions);
    // tile[idx / 20][idx % 20] = ...: piecewise addressing, evaluated lane by lane: the 32
    // lanes of a warp write 32 consecutive floats of the 20-float rows, conflict-free.
    let line = line_of("conv2d", "tile[sy][sx] =");
    let st = at(&p, Space::Shared, AccessKind::Store, line);
    assert!(!st.is_empty());
    for a in st {
        assert_eq!((a.class, a.bank_conflict_ways), (AccessClass::Coalesced, Some(1)), "{a:?}");
    }
    assert!(!p.assumptions.iter().any(|a| a.contains("data-dependent")), "{:?}", p.assumptions);
}

#[test]
fn wmma_fragment_loads_are_warp_collective_rows() {
    // wmma_gemm.cu: load_matrix_sync of 16×16 fragments (PTX ISA "wmma.load"/"wmma.store",
    // `.row .m16n16k16`): the warp moves 16 rows. The half A and B fragments: 16 × 2 B =
    // 32 B per row, one sector each, 16·16·2 / 32 lanes = 16 B per thread; from global
    // memory ptxas issues them as four 32-bit `LDG.E` per lane, each covering 8 rows × 16 B
    // (nvdisasm, ptxas 13.5, sm_80), so every row's sector is fetched twice: 32 sectors
    // per fragment. The float C fragment and the store of D: 16 × 4 B = 64 B per row, two
    // sectors → 32 sectors (four `LDG.E.64` / `STG.E.64` of whole sectors), 32 B per
    // thread. Mutation testing found this untested. The accesses are found by PTX line
    // (their source line is inside the CUDA header).
    let p = profile("wmma_gemm", "wmma_gemm", [4, 4, 1], [128, 1, 1], &[("param_3", 256), ("param_4", 256), ("param_5", 256)]);
    let text = std::fs::read_to_string(format!("{}/../../tests/fixtures/ptx/sm_80/wmma_gemm.ptx", env!("CARGO_MANIFEST_DIR"))).expect("fixture");
    let mut checked = 0;
    for (i, line) in text.lines().enumerate() {
        let want = if line.contains("wmma.load.a") || line.contains("wmma.load.b") {
            (32.0, 16)
        } else if line.contains("wmma.load.c") || line.contains("wmma.store.d") {
            (32.0, 32)
        } else {
            continue;
        };
        let acc = p.memory_accesses.iter().find(|a| a.ptx_line == i as u32 + 1).unwrap_or_else(|| panic!("no access at PTX line {}", i + 1));
        assert_eq!((acc.class, acc.transactions_per_request, acc.bytes_per_thread), (AccessClass::Coalesced, want.0, want.1), "line {}: {acc:?}", i + 1);
        // The C fragment's address, `c + row·N + col` with row = 16·(global thread / warpSize)
        // (`WARP_SZ`, 32: 4·blockIdx.x + threadIdx.x/32 warps) and col = 16·(blockIdx.y +
        // threadIdx.y) (blocks of 128×1), is affine: 16·256·4 B per warp row, 4 of them per
        // block in x, 64 B per block in y; its 16 rows of 16 floats, N = 256 floats apart,
        // are spans of the request, so its footprint is the fragment's, not one point's.
        if line.contains("wmma.load.c") || line.contains("wmma.store.d") {
            let a = acc.address.as_ref().unwrap_or_else(|| panic!("line {}: no address: {acc:?}", i + 1));
            assert_eq!(a.spans, vec![kernel_profile::Span { bytes: 256 * 4, count: 16 }, kernel_profile::Span { bytes: 4, count: 16 }], "{a:?}");
            assert_eq!((a.tid, a.ctaid), ([0, 64, 0], [4 * 16 * 256 * 4, 64, 0]), "{a:?}");
            assert_eq!(a.tid_x_parts, vec![kernel_profile::TidXPart { op: kernel_profile::TidXOp::Div, k: 32, bytes: 16 * 256 * 4, dim: 0 }], "{a:?}");
        }
        checked += 1;
    }
    assert!(checked >= 4, "{checked}");
}

/// nvcc's code for a 1-D block arranged as rows (the lines below are nvcc 13.5's, sm_86, for
/// `row = blockIdx.x*32 + threadIdx.x/32`, `col = blockIdx.y*32 + threadIdx.x%32`, then
/// `B[k*4096 + col]` and `A[row*4096 + k]`): the column is built with `bfi` (the block index
/// inserted above the lane's five bits), the row with `shr`. The warp reads 32 consecutive
/// floats of B (one 128-byte row: 4 sectors, stride 4) and one float of A (a broadcast).
#[test]
fn bit_field_inserts_and_warp_rows_are_affine() {
    let text = "\
.version 9.0\n.target sm_86\n.address_size 64\n\
.visible .entry rows(.param .u64 rows_param_0, .param .u64 rows_param_1)\n{\n\
.reg .f32 %f<4>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<12>;\n\
ld.param.u64 %rd1, [rows_param_0];\nld.param.u64 %rd2, [rows_param_1];\n\
cvta.to.global.u64 %rd3, %rd1;\ncvta.to.global.u64 %rd4, %rd2;\n\
mov.u32 %r6, %ctaid.x;\nshl.b32 %r7, %r6, 5;\nmov.u32 %r8, %tid.x;\nshr.u32 %r9, %r8, 5;\nadd.s32 %r10, %r7, %r9;\n\
mov.u32 %r11, %ctaid.y;\nand.b32 %r12, %r8, 31;\nbfi.b32 %r1, %r11, %r12, 5, 27;\nshl.b32 %r2, %r10, 12;\n\
mul.wide.s32 %rd5, %r1, 4;\nadd.s64 %rd6, %rd4, %rd5;\nld.global.f32 %f1, [%rd6];\n\
mul.wide.s32 %rd7, %r2, 4;\nadd.s64 %rd8, %rd3, %rd7;\nld.global.f32 %f2, [%rd8];\n\
add.f32 %f3, %f1, %f2;\nst.global.f32 [%rd8], %f3;\nret;\n}\n";
    let p = common::profile_text(text, "rows", "rows", [128, 128, 1], [1024, 1, 1], &[]);
    let loads: Vec<_> = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Load && a.space == Space::Global).collect();
    assert_eq!(loads.len(), 2, "{loads:?}");
    // B[col]: the lanes are consecutive floats.
    assert_eq!((loads[0].class, loads[0].stride_bytes, loads[0].transactions_per_request), (AccessClass::Coalesced, Some(4), 4.0), "{:?}", loads[0]);
    // A[row · 4096]: one row per warp; the rows of a block are 16 KiB apart.
    assert_eq!((loads[1].class, loads[1].transactions_per_request), (AccessClass::Uniform, 1.0), "{:?}", loads[1]);
    let a = loads[1].address.as_ref().expect("an address pattern");
    assert_eq!(a.tid_x_parts, vec![kernel_profile::TidXPart { op: kernel_profile::TidXOp::Div, k: 32, bytes: 16384, dim: 0 }], "{a:?}");
    assert!(!a.partial, "{a:?}");
}

/// An address pattern's `threadIdx / k` and `threadIdx % k` terms, divisions first (smaller
/// `k` first), for comparing with an expected pair.
fn div_then_mod(a: &kernel_profile::AddressPattern) -> Vec<kernel_profile::TidXPart> {
    let mut parts = a.tid_x_parts.clone();
    parts.sort_by_key(|t| (t.op == kernel_profile::TidXOp::Mod, t.k, t.dim));
    parts
}

/// The pair `bytes_div·(tid / k) + bytes_mod·(tid % k)` of dimension `dim`, as
/// [`div_then_mod`] orders it.
fn div_mod(k: i64, bytes_div: i64, bytes_mod: i64, dim: u8) -> Vec<kernel_profile::TidXPart> {
    vec![
        kernel_profile::TidXPart { op: kernel_profile::TidXOp::Div, k, bytes: bytes_div, dim },
        kernel_profile::TidXPart { op: kernel_profile::TidXOp::Mod, k, bytes: bytes_mod, dim },
    ]
}

/// nvcc's signed division and remainder by 8 of `i = threadIdx.x` (the tile load
/// `a[(i / 8) * 4096 + i % 8]` of a 256-thread block, nvcc 13.5 for sm_86): `i >> 31` is 0 for
/// a thread index, so the address is `16384·(tid / 8) + 4·(tid % 8)`. A warp reads four rows
/// of eight floats, 32 bytes each: 4 sectors.
#[test]
fn signed_division_of_a_thread_index_is_a_row_and_a_column() {
    let text = "\
.version 9.0\n.target sm_86\n.address_size 64\n\
.visible .entry tile(.param .u64 tile_param_0)\n{\n\
.reg .f32 %f<2>;\n.reg .b32 %r<100>;\n.reg .b64 %rd<16>;\n\
ld.param.u64 %rd1, [tile_param_0];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n\
shr.s32 %r59, %r1, 31;\nshr.u32 %r60, %r59, 29;\nadd.s32 %r61, %r1, %r60;\nshl.b32 %r62, %r61, 9;\n\
and.b32 %r7, %r62, -4096;\nand.b32 %r63, %r61, -8;\nsub.s32 %r8, %r1, %r63;\nadd.s32 %r92, %r8, %r7;\n\
mul.wide.s32 %rd9, %r92, 4;\nadd.s64 %rd12, %rd2, %rd9;\nld.global.f32 %f1, [%rd12];\nst.global.f32 [%rd12+4], %f1;\nret;\n}\n";
    let p = common::profile_text(text, "tile", "tile", [64, 1, 1], [256, 1, 1], &[]);
    let load = p.memory_accesses.iter().find(|a| a.kind == AccessKind::Load && a.space == Space::Global).expect("the load");
    assert_ne!(load.class, AccessClass::Irregular, "{load:?}");
    assert_eq!(load.transactions_per_request, 4.0, "{load:?}");
    let a = load.address.as_ref().expect("an address pattern");
    assert_eq!(div_then_mod(a), div_mod(8, 16384, 4, 0), "{a:?}");
    assert_eq!(a.tid, [0, 0, 0], "{a:?}");
}

/// A kernel `k` with one pointer parameter, which nvcc's preamble leaves as a global
/// address in `%rd2`, then `body` (PTX lines, `ret` added); profiled on an sm_80/86 target
/// with `grid` and `block`.
fn pointer_kernel(target: &str, body: &str, grid: [u32; 3], block: [u32; 3]) -> KernelProfile {
    let text = format!(
        ".version 9.0\n.target {target}\n.address_size 64\n.visible .entry k(.param .u64 k_param_0)\n{{\n\
.reg .f32 %f<4>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<12>;\n\
ld.param.u64 %rd1, [k_param_0];\ncvta.to.global.u64 %rd2, %rd1;\n{body}ret;\n}}\n"
    );
    common::profile_text(&text, "k", "k", grid, block, &[])
}

/// The first global load of a profile.
fn first_global_load(p: &KernelProfile) -> &kernel_profile::MemoryAccess {
    p.memory_accesses.iter().find(|a| a.kind == AccessKind::Load && a.space == Space::Global).expect("a global load")
}

/// A 2-D block's linear thread index divided by the warp size (a cooperative tile load in a
/// 16 × 16 block, `e = ty·16 + tx + 256; a[(e / 32)·2048 + e % 32]`): the row is `ty / 2`
/// and the column `tx + 16·(ty % 2)`, so a warp reads one row's 32 consecutive floats, 4
/// sectors, and the address is `8192·(ty / 2) + 64·(ty % 2) + 4·tx + 65536`.
#[test]
fn a_2d_blocks_linear_index_divides_into_rows_and_columns() {
    let body = "\
mov.u32 %r1, %tid.y;\nmov.u32 %r2, %tid.x;\nshl.b32 %r3, %r1, 4;\nadd.s32 %r4, %r3, %r2;\nadd.s32 %r5, %r4, 256;\n\
shr.u32 %r6, %r5, 5;\nand.b32 %r7, %r5, 31;\nshl.b32 %r8, %r6, 11;\nadd.s32 %r9, %r8, %r7;\n\
mul.wide.s32 %rd3, %r9, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\nst.global.f32 [%rd4+4], %f1;\n";
    let p = pointer_kernel("sm_86", body, [4, 1, 1], [16, 16, 1]);
    let load = first_global_load(&p);
    assert_eq!((load.class, load.transactions_per_request), (AccessClass::Coalesced, 4.0), "{load:?}");
    let a = load.address.as_ref().expect("an address pattern");
    assert_eq!(div_then_mod(a), div_mod(2, 8192, 64, 1), "{a:?}");
    assert_eq!((a.tid, a.offset, a.partial), ([4, 0, 0], 65536, false), "{a:?}");
}

/// nvcc's signed `e / 32` and `e % 32` of `e = tid.x + 256` in a 1-D block (nvcc 13.5,
/// sm_86: the sign bits added, then `and.b32 e, 0x7FFFFFE0`, which clears the low five bits
/// of a non-negative `int`): the row `tid.x / 32 + 8`, the column the lane.
#[test]
fn a_signed_division_masks_the_low_bits_of_a_non_negative_index() {
    let body = "\
mov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 256;\n\
shr.s32 %r3, %r2, 31;\nshr.u32 %r4, %r3, 27;\nadd.s32 %r5, %r2, %r4;\nand.b32 %r6, %r5, 2147483616;\nsub.s32 %r7, %r2, %r6;\n\
shr.s32 %r8, %r5, 5;\nshl.b32 %r9, %r8, 11;\nadd.s32 %r10, %r9, %r7;\n\
mul.wide.s32 %rd3, %r10, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\nst.global.f32 [%rd4+4], %f1;\n";
    let p = pointer_kernel("sm_86", body, [4, 1, 1], [256, 1, 1]);
    let load = first_global_load(&p);
    assert_eq!((load.class, load.transactions_per_request), (AccessClass::Coalesced, 4.0), "{load:?}");
    let a = load.address.as_ref().expect("an address pattern");
    assert!(a.tid_x_parts.contains(&kernel_profile::TidXPart { op: kernel_profile::TidXOp::Div, k: 32, bytes: 8192, dim: 0 }), "{a:?}");
    assert_eq!((a.offset, a.partial), (8 * 8192, false), "{a:?}");
}

/// nvcc's division by 24 (nvcc 13.5, sm_80, `e = tid.x + 96; a[(e / 24)·2048 + e % 24]` in a
/// block of 96 and `s[tid % 24][tid / 24]` over a 24 × 25 tile): the signed form
/// `mul.hi.s32 e, 715827883; shr.s32 2` plus the sign (`shr.u32 31`, 0 here), and the
/// unsigned `mul.wide.u32 tid, 0xAAAAAAAB; shr.u64 36`, whose `shr.u64 34` masked with
/// `0x3FFFFFFC` is `4·(tid / 24)`. Both are divisions: the global load reads rows of 24
/// floats 8 KiB apart (a warp: 24 floats of one row and 8 of the next, 4 sectors), the
/// shared load `100·(tid % 24) + 4·(tid / 24)`.
#[test]
fn divisions_by_a_magic_multiplier_are_rows_and_columns() {
    let text = "\
.version 9.0\n.target sm_80\n.address_size 64\n\
.visible .entry t24(.param .u64 t24_param_0, .param .u64 t24_param_1)\n{\n\
.reg .f32 %f<4>;\n.reg .b32 %r<100>;\n.reg .b64 %rd<30>;\n.shared .align 4 .b8 s24[2400];\n\
ld.param.u64 %rd1, [t24_param_0];\nld.param.u64 %rd2, [t24_param_1];\ncvta.to.global.u64 %rd3, %rd1;\ncvta.to.global.u64 %rd16, %rd2;\n\
mov.u32 %r2, %tid.x;\nadd.s32 %r17, %r2, 96;\nmul.hi.s32 %r18, %r17, 715827883;\nshr.u32 %r19, %r18, 31;\nshr.s32 %r20, %r18, 2;\n\
add.s32 %r21, %r20, %r19;\nmul.lo.s32 %r22, %r21, 24;\nsub.s32 %r23, %r17, %r22;\nmad.lo.s32 %r25, %r21, 2048, %r23;\n\
mul.wide.u32 %rd6, %r25, 4;\nadd.s64 %rd7, %rd3, %rd6;\nld.global.nc.f32 %f1, [%rd7];\nmov.u32 %r13, s24;\nst.shared.f32 [%r13], %f1;\nbar.sync 0;\n\
mul.wide.u32 %rd17, %r2, -1431655765;\nshr.u64 %rd18, %rd17, 36;\ncvt.u32.u64 %r77, %rd18;\nmul.lo.s32 %r78, %r77, 24;\n\
sub.s32 %r79, %r2, %r78;\nshr.u64 %rd19, %rd17, 34;\nmad.lo.s32 %r80, %r79, 100, %r13;\ncvt.u32.u64 %r81, %rd19;\n\
and.b32 %r82, %r81, 1073741820;\nadd.s32 %r83, %r80, %r82;\nld.shared.f32 %f2, [%r83];\n\
mul.wide.u32 %rd20, %r2, 4;\nadd.s64 %rd21, %rd16, %rd20;\nst.global.f32 [%rd21], %f2;\nret;\n}\n";
    let p = common::profile_text(text, "t24", "t24", [4, 1, 1], [96, 1, 1], &[]);
    let global = first_global_load(&p);
    assert_eq!((global.class, global.transactions_per_request), (AccessClass::Coalesced, 4.0), "{global:?}");
    let g = global.address.as_ref().expect("an address pattern");
    assert_eq!(div_then_mod(g), div_mod(24, 8192, 4, 0), "{g:?}");
    assert_eq!(g.offset, 4 * 8192, "{g:?}");
    // A multiplier one below the magic number for 24 is not a division by 24 (it is off for
    // large dividends): no pattern.
    let off_by_one = text.replace("715827883", "715827882");
    let p2 = common::profile_text(&off_by_one, "t24", "t24", [4, 1, 1], [96, 1, 1], &[]);
    let load = first_global_load(&p2);
    assert!(load.address.is_none(), "{load:?}");
    let shared = p.memory_accesses.iter().find(|a| a.kind == AccessKind::Load && a.space == Space::Shared).expect("the shared load");
    let sh = shared.address.as_ref().expect("an address pattern");
    assert_eq!(div_then_mod(sh), div_mod(24, 4, 100, 0), "{sh:?}");
}

/// A halo clamped to the image, `in[min(max(x − 1, 0), w − 1)]` with `x = 32·blockIdx.x +
/// threadIdx.x` over 64 blocks and `w = 2048`: the clamps change the first thread's index
/// only, so the address is taken as `4·x − 4` (a coalesced row, the blocks 128 B apart);
/// `min(max(tid − 1, 0), 3)` in one block of 32 clips most threads and stays irregular.
#[test]
fn a_clamp_at_the_edge_of_an_index_range_keeps_the_index() {
    let kernel = |lo: &str, hi: &str, grid: u32| {
        let body = format!(
            "\
mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %tid.x;\nshl.b32 %r3, %r1, 5;\nadd.s32 %r4, %r3, %r2;\nadd.s32 %r5, %r4, -1;\n\
max.s32 %r6, %r5, {lo};\nmin.s32 %r7, %r6, {hi};\n\
mul.wide.s32 %rd3, %r7, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\nst.global.f32 [%rd4+4], %f1;\n"
        );
        pointer_kernel("sm_80", &body, [grid, 1, 1], [32, 1, 1])
    };
    let edge = kernel("0", "2047", 64);
    let a = first_global_load(&edge).address.as_ref().expect("an address pattern");
    assert_eq!((a.tid, a.ctaid, a.offset), ([4, 0, 0], [128, 0, 0], -4), "{a:?}");
    let inside = kernel("0", "3", 1);
    assert!(first_global_load(&inside).address.is_none(), "{:?}", first_global_load(&inside));
}

/// A global index split into a row and a column of a 2048-wide matrix in a 1-D grid of
/// 256-thread blocks (`i = blockIdx.x·256 + threadIdx.x; r = i / 2048; c = i % 2048`,
/// the column also as `i − r·2048`): the row is `blockIdx.x / 8`, the column `threadIdx.x +
/// 256·(blockIdx.x % 8)`, so reading `in[c·2048 + r]` walks down a column (lanes 8 KiB apart,
/// 32 sectors) with a pattern the traffic estimate can follow.
#[test]
fn a_global_index_divided_by_a_multiple_of_the_block_is_a_block_row() {
    let body = "\
mov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %tid.x;\nshl.b32 %r3, %r1, 8;\nadd.s32 %r4, %r3, %r2;\n\
div.u32 %r5, %r4, 2048;\nrem.u32 %r6, %r4, 2048;\nshl.b32 %r7, %r6, 11;\nadd.s32 %r8, %r7, %r5;\n\
mul.wide.u32 %rd3, %r8, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\n\
shl.b32 %r9, %r5, 11;\nsub.s32 %r10, %r4, %r9;\nshl.b32 %r11, %r10, 11;\nadd.s32 %r12, %r11, %r5;\n\
mul.wide.u32 %rd5, %r12, 4;\nadd.s64 %rd6, %rd2, %rd5;\nld.global.f32 %f2, [%rd6];\n\
add.f32 %f3, %f1, %f2;\nst.global.f32 [%rd4+4], %f3;\n";
    let p = pointer_kernel("sm_80", body, [16384, 1, 1], [256, 1, 1]);
    let loads: Vec<_> = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Load && a.space == Space::Global).collect();
    assert_eq!(loads.len(), 2, "{loads:?}");
    for load in loads {
        assert_eq!(load.transactions_per_request, 32.0, "{load:?}");
        let a = load.address.as_ref().expect("an address pattern");
        assert_eq!((a.tid, a.ctaid, a.offset), ([8192, 0, 0], [0, 0, 0], 0), "{a:?}");
        assert_eq!(a.ctaid_mod, vec![kernel_profile::CtaidModStride { dim: 0, modulus: 8, bytes: 256 * 8192 }], "{a:?}");
        assert_eq!(a.ctaid_div, vec![kernel_profile::CtaidModStride { dim: 0, modulus: 8, bytes: 4 }], "{a:?}");
    }
    // The 16 MiB matrix comes from DRAM about once, its sectors' other floats from L2 (the
    // pattern's footprint), not once per request's 32 sectors (268 MB, the estimate for
    // accesses without a pattern).
    let caches = kernel_profile::traffic::CacheConfig {
        sm_count: 108,
        l1_bytes_per_sm: 192 << 10,
        l2_bytes: 40 << 20,
        resident_blocks_per_sm: 8,
        l1_caches_global_loads: true,
        l2_partitioned: true,
    };
    let t = kernel_profile::traffic::estimate(&p, &caches);
    let matrix = f64::from(16u32 << 20);
    assert!(t.dram_read_bytes >= 0.99 * matrix && t.dram_read_bytes <= 2.0 * matrix, "{} B", t.dram_read_bytes);
}

/// nvcc's remainder peeling in front of a loop unrolled by four (the shape of
/// `for (i = threadIdx.x; i < 1024; i += 256)` in nvcc 13.5's output, cut down to one peeled
/// copy): the loop's counter enters as `tid` or `tid + 256`. With 256 threads every thread has
/// 4 iterations, none peeled, so the unrolled loop runs once; the entry value furthest along
/// the step, `tid + 256`, gives that count whichever applies (`ceil((1024 − tid − 256) /
/// 1024) = 1`), where an unknown entry value used to mean the default 16.
#[test]
fn a_loop_entered_after_peeled_iterations_counts_its_trips() {
    let text = "\
.version 9.0\n.target sm_86\n.address_size 64\n\
.visible .entry peel(.param .u64 peel_param_0)\n{\n\
.reg .pred %p<8>;\n.reg .f32 %f<4>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<8>;\n\
ld.param.u64 %rd1, [peel_param_0];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n\
mov.u32 %r30, 1023;\nsub.s32 %r5, %r30, %r1;\nshr.u32 %r6, %r5, 8;\nadd.s32 %r7, %r6, 1;\nand.b32 %r8, %r7, 3;\n\
setp.eq.s32 %p2, %r8, 0;\nmov.u32 %r12, %r1;\n@%p2 bra $L_guard;\n\
mul.wide.s32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f1, [%rd4];\nst.global.f32 [%rd4], %f1;\nadd.s32 %r12, %r1, 256;\n\
$L_guard:\nsetp.lt.u32 %p5, %r5, 768;\n@%p5 bra $L_done;\n\
$L_loop:\nmul.wide.s32 %rd5, %r12, 4;\nadd.s64 %rd6, %rd2, %rd5;\nld.global.f32 %f2, [%rd6];\nst.global.f32 [%rd6], %f2;\n\
add.s32 %r12, %r12, 1024;\nsetp.lt.s32 %p6, %r12, 1024;\n@%p6 bra $L_loop;\n\
$L_done:\nret;\n}\n";
    // The static rule (the IR's loop analysis, before any simulation of the control flow).
    let (module, errors) = ptx_ir::parse_and_lower(text);
    assert!(errors.is_empty(), "{errors:?}");
    let lp = &module.functions[0].loops[0];
    assert_eq!(lp.trip_note, None, "{lp:?}");
    let init = lp.induction_vars.iter().find_map(|iv| iv.init.as_ref()).map(ToString::to_string);
    assert_eq!(init.as_deref(), Some("%tid.x + 256"), "{lp:?}");
    // And the profile: one trip for every thread.
    let p = common::profile_text(text, "peel", "peel", [64, 1, 1], [256, 1, 1], &[]);
    assert_eq!(p.loops[0].trip_count, Some(1.0), "{:?}\n{:?}", p.loops, p.assumptions);
}

#[test]
fn a_remainder_loop_start_that_needs_an_unsupplied_argument_is_assumed_not_invented() {
    // dyn_smem.cu: `for (c = 0; c < len; ++c)` with len = min(chunk, cols - c0), unrolled
    // by 4 after a remainder loop, so the unrolled loop's counter starts at a value that
    // depends on the path into it. With cols (param_4) and chunk (param_5) given: 1024
    // iterations per entry, 256 of the unrolled loop. With either missing the count is
    // unknown and takes the default, never a number made from the stand-in value that
    // address analysis uses for an unknown integer argument (it gave 65536).
    let line = line_of("dyn_smem", "for (int c = 0; c < len; ++c)");
    let unrolled = |args: &[(&str, i64)]| {
        let p = profile("dyn_smem", "gemv_xshared", [64, 1, 1], [256, 1, 1], args);
        p.loops.iter().find(|l| l.source_line == Some(line)).map(|l| (l.trip_count, l.assumed_trip_count)).expect("the loop `for (c = 0; c < len; ++c)`")
    };
    assert_eq!(unrolled(&[("param_4", 4096), ("param_5", 1024)]), (Some(256.0), 256.0));
    let default = ProfileOptions::default().default_trip_count;
    for args in [&[][..], &[("param_4", 4096)][..], &[("param_5", 1024)][..]] {
        assert_eq!(unrolled(args), (None, default), "{args:?}");
    }
}

/// gpu-benches' gpu-cache kernel (tests/fixtures/measured, nvcc for sm_70) reads N = 256·M
/// doubles per pass, M per thread, in a loop nvcc unrolls by 32 and rotates around its
/// exit test: the loads before the test run once more per pass than the 32 after it.
/// Counting every block of the loop at the header's count read 64 loads per pass for
/// M = 42 (the profile's 1.5× too slow rows at 84 kB on the A100 and the H100).
#[test]
fn the_blocks_after_a_top_tested_exit_run_once_less_than_the_header() {
    let path = format!("{}/../../tests/fixtures/measured/ptx/sm_70/gpu_cache.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let passes: i64 = 1000;
    for m in [32u32, 42, 62] {
        let kernel = format!("cache_read_double_{m}");
        let p = common::profile_text(&text, "gpu_cache.ptx", &kernel, [108, 1, 1], [256, 1, 1], &[("param_2", passes), ("param_3", 0)]);
        let loads = p.counts.dynamic.get(&InstrClass::Load(Space::Global)).copied().unwrap_or(0.0);
        assert_eq!(loads, f64::from(m) * passes as f64, "{kernel}");
    }
}

/// An integer division by a register is a SASS sequence (`sass.rs` item 6): the profile
/// counts its 22 more instructions per execution (19 integer, 2 conversions, 1 SFU) and
/// chains them after it in its block.
#[test]
fn a_division_by_a_register_counts_its_sass_sequence() {
    let kernel = |op: &str| {
        let body = format!(
            "mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.u32 %r2, [%rd4];\nld.global.u32 %r3, [%rd4+4];\n{op} %r4, %r2, %r3;\nst.global.u32 [%rd4], %r4;\n"
        );
        pointer_kernel("sm_86", &body, [64, 1, 1], [256, 1, 1])
    };
    let (add, div) = (kernel("add.s32"), kernel("div.s32"));
    // `counts.dynamic` is per thread.
    let per_thread = |p: &KernelProfile, c: InstrClass| p.counts.dynamic.get(&c).copied().unwrap_or(0.0);
    assert_eq!(per_thread(&div, InstrClass::IntAlu) - per_thread(&add, InstrClass::IntAlu), 19.0);
    assert_eq!(per_thread(&div, InstrClass::Sfu), 1.0);
    assert_eq!(per_thread(&div, InstrClass::Conversion) - per_thread(&add, InstrClass::Conversion), 2.0);
    let nodes = |p: &KernelProfile| p.blocks.iter().map(|b| b.instructions.len()).sum::<usize>();
    assert_eq!(nodes(&div), nodes(&add) + 22);
}

#[test]
fn an_index_kept_in_a_volatile_local_is_the_index_stored_there() {
    // tests/ptx/volatile_index.cu: tid = threadIdx.x + 16·threadIdx.y, 16 × 16 blocks, kept
    // in a `volatile` local that nvcc stores once and reads back at each use. A warp is two
    // rows of 16 threads, tid consecutive over its 32 lanes: in[bx·n + k + tid] and
    // out[...] are 32 consecutive floats, 128 bytes from an aligned start (n = 4096,
    // k a multiple of 256) = 4 sectors, not a gather; tile[tid] and tile[255 − tid] are
    // unit-stride in shared memory, one wavefront. nvcc unrolls the loop by 4 in front of a
    // remainder loop: five copies of the body, each with one access of each kind.
    let path = format!("{}/tests/ptx/volatile_index.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let p = common::profile_text(&text, "volatile_index", "_Z13volatile_tilePKfPfi", [64, 1, 1], [16, 16, 1], &[("param_2", 4096)]);
    let global: Vec<_> = p.memory_accesses.iter().filter(|a| a.space == Space::Global).collect();
    assert_eq!(global.len(), 10, "{global:#?}");
    for a in global {
        assert_eq!((a.class, a.transactions_per_request), (AccessClass::Coalesced, 4.0), "{a:#?}");
    }
    let shared: Vec<_> = p.memory_accesses.iter().filter(|a| a.space == Space::Shared).collect();
    assert_eq!(shared.len(), 10, "{shared:#?}");
    for a in shared {
        assert_eq!(a.bank_conflict_ways, Some(1), "{a:#?}");
    }
}

#[test]
fn a_loop_bound_kept_in_a_volatile_local_is_the_bound_stored_there() {
    // tests/ptx/volatile_index.cu, volatile_bound: count = 8 + threadIdx.x % 4 kept in a
    // `volatile` local, read back at each test of the loop. The control-flow simulation
    // reads the stored value, so the loop runs 8 to 11 times by lane (9.5 on average; a
    // warp runs it 11 times, as long as its longest lane), not the default 16 of a
    // data-dependent exit; the loop's load executes 9.5 times per thread.
    let path = format!("{}/tests/ptx/volatile_index.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let p = common::profile_text(&text, "volatile_index", "_Z14volatile_boundPKfPf", [4, 1, 1], [64, 1, 1], &[]);
    assert_eq!(p.loops.len(), 1, "{:#?}", p.loops);
    assert_eq!(p.loops[0].assumed_trip_count, 9.5, "{:#?}\n{:#?}", p.loops, p.assumptions);
    assert!(!p.assumptions.iter().any(|a| a.contains("data-dependent")), "{:#?}", p.assumptions);
}

#[test]
fn a_loop_bound_argument_kept_in_a_volatile_local_is_the_trip_count() {
    // tests/ptx/volatile_index.cu, volatile_param_bound: count = n kept in a `volatile`
    // local and read back at each test of the loop. The loop analysis reads the stored
    // value: the trip count is the argument `n` (`param_2` in PTX), symbolic without it and 12 with
    // n = 12, where the default 16 of a data-dependent exit was assumed before.
    let path = format!("{}/tests/ptx/volatile_index.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let kernel = "_Z20volatile_param_boundPKfPfi";
    let p = common::profile_text(&text, "volatile_index", kernel, [4, 1, 1], [64, 1, 1], &[("param_2", 12)]);
    assert_eq!(p.loops.len(), 1, "{:#?}", p.loops);
    assert_eq!((p.loops[0].trip_count, p.loops[0].assumed_trip_count), (Some(12.0), 12.0), "{:#?}", p.loops);
    let symbolic = common::profile_text(&text, "volatile_index", kernel, [4, 1, 1], [64, 1, 1], &[]);
    assert_eq!(symbolic.loops[0].trip_count_expr.as_deref(), Some("param_2"), "{:#?}", symbolic.loops);
}

#[test]
fn a_counted_exit_caps_the_assumed_count_of_a_loop_that_ends_on_data() {
    // ptx-ir's tests/data/bounded.cu: loops that end on data beside a counted exit. The
    // count stays unknown; the counted exit bounds it (`trip_bound`), and caps the default
    // where it is less: `newton` runs at most 5 steps, not the default 16; `escape` at
    // most `max_iter` = 256, so the default 16 stands, with the bound said; `search` at
    // most n = 10 (its `break` aside).
    let path = format!("{}/../ptx-ir/tests/data/bounded.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let p = common::profile_text(&text, "bounded", "_Z6newtonPf", [64, 1, 1], [256, 1, 1], &[]);
    assert_eq!((p.loops[0].trip_count, p.loops[0].assumed_trip_count, p.loops[0].trip_bound), (None, 5.0, Some(5.0)), "{:#?}", p.loops);
    assert!(p.assumptions.iter().any(|a| a.contains("at most 5 (its counted exit, less than the default 16): assumed 5")), "{:#?}", p.assumptions);
    let p = common::profile_text(&text, "bounded", "_Z6escapePhPKfi", [64, 1, 1], [256, 1, 1], &[("param_2", 256)]);
    assert_eq!((p.loops[0].assumed_trip_count, p.loops[0].trip_bound), (16.0, Some(256.0)), "{:#?}", p.loops);
    let p = common::profile_text(&text, "bounded", "_Z6searchPKiPiii", [64, 1, 1], [256, 1, 1], &[("param_3", 10)]);
    assert_eq!((p.loops[0].assumed_trip_count, p.loops[0].trip_bound), (10.0, Some(10.0)), "{:#?}", p.loops);
    // Without `n` the bound is not evaluated: the default stands, and no bound is shown.
    let p = common::profile_text(&text, "bounded", "_Z6searchPKiPiii", [64, 1, 1], [256, 1, 1], &[]);
    assert_eq!((p.loops[0].assumed_trip_count, p.loops[0].trip_bound), (16.0, None), "{:#?}", p.loops);
}
