//! The traffic estimate (`kernel_profile::traffic`) on real nvcc output, against numbers
//! derived by hand from the CUDA source and the launch (comments give the derivation).
//! The caches are an A100's: 108 SMs, 192 KiB of L1/shared per SM (the shared memory the
//! blocks use taken off), 40 MiB of L2 (NVIDIA A100 Tensor Core GPU Architecture
//! whitepaper, Table 3 and "L2 Cache").

use kernel_profile::traffic::{CacheConfig, SECTOR_BYTES, Traffic, estimate, l2_kept_share};
use kernel_profile::{AccessKind, KernelProfile, MemoryAccess};

mod common;
use common::profile;

const MIB: f64 = 1024.0 * 1024.0;

fn a100(resident_blocks_per_sm: u32, smem_per_block: u64) -> CacheConfig {
    CacheConfig {
        sm_count: 108,
        l1_bytes_per_sm: 192 * 1024 - smem_per_block * u64::from(resident_blocks_per_sm),
        l2_bytes: 40 * 1024 * 1024,
        resident_blocks_per_sm,
        l1_caches_global_loads: true,
        l2_partitioned: true,
    }
}

fn warps(p: &KernelProfile) -> f64 {
    (p.launch.threads_per_block().div_ceil(32) * p.launch.blocks()) as f64
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs().max(1.0)
}

fn check(t: &Traffic, what: &str, got: f64, want: f64, rel: f64) {
    assert!(close(got, want, rel), "{what}: {got} against {want} (±{:.1} %)\n{t:#?}", rel * 100.0);
}

#[test]
fn vadd_reads_two_arrays_and_writes_one() {
    // c[i] = a[i] + b[i], n = 2^20 floats, 4096 × 256 threads: 8 MiB read, 4 MiB written,
    // 12 MiB in all, which fits the L2: every byte once. Each warp request is 128 bytes =
    // 4 sectors; 32768 warps × 2 loads × 4 sectors in L1 and, with no reuse, in L2.
    let p = profile("vadd", "vadd", [4096, 1, 1], [256, 1, 1], &[("param_3", 1 << 20)]);
    let t = estimate(&p, &a100(8, 0));
    // 12 MiB fit the 40 MiB L2: resident across repeated launches (steady state: no DRAM
    // traffic); the cold launch's bytes below.
    assert!(t.l2_resident, "{t:#?}");
    assert_eq!(t.steady_dram_bytes(), 0.0);
    check(&t, "dram_read_bytes", t.dram_read_bytes, 8.0 * MIB, 1e-9);
    check(&t, "dram_write_bytes", t.dram_write_bytes, 4.0 * MIB, 1e-9);
    check(&t, "global_load_requests", t.global_load_requests, 2.0 * 32768.0, 1e-9);
    check(&t, "global_store_requests", t.global_store_requests, 32768.0, 1e-9);
    check(&t, "l1_load_sectors", t.l1_load_sectors, 2.0 * 4.0 * 32768.0, 1e-9);
    check(&t, "l2_load_sectors", t.l2_load_sectors, 2.0 * 4.0 * 32768.0, 1e-9);
    check(&t, "l2_store_sectors", t.l2_store_sectors, 4.0 * 32768.0, 1e-9);
    assert_eq!((t.shared_requests, t.atomic_requests), (0.0, 0.0));
}

/// Arrays a little larger than the L2: repeated launches still find part of them there on a
/// one-piece L2 (the share a cyclic sweep of that size keeps, of the first reads and
/// writes), none on a partitioned one (GA100, GH100).
#[test]
fn arrays_past_the_l2_stay_in_part_unless_it_is_partitioned() {
    // vadd over n = 3.84 M floats: 46.08 MB of arrays, 1.10 × the 40 MiB L2.
    let n = 15_000 * 256;
    let p = profile("vadd", "vadd", [15_000, 1, 1], [256, 1, 1], &[("param_3", n)]);
    let cold = 12.0 * n as f64;
    let whole = CacheConfig { l2_partitioned: false, ..a100(8, 0) };
    let t = estimate(&p, &whole);
    assert!(!t.l2_resident, "{t:#?}");
    check(&t, "dram bytes", t.dram_read_bytes + t.dram_write_bytes, cold, 1e-9);
    let share = l2_kept_share(cold, 40.0 * MIB);
    assert!(share > 0.15 && share < 0.25, "{share}");
    check(&t, "l2_kept_bytes", t.l2_kept_bytes, share * cold, 1e-9);
    check(&t, "steady_dram_bytes", t.steady_dram_bytes(), (1.0 - share) * cold, 1e-9);
    assert!(t.notes.iter().any(|s| s.contains("still find about 19 %")), "{:?}", t.notes);
    let t = estimate(&p, &a100(8, 0));
    assert_eq!(t.l2_kept_bytes, 0.0);
    assert_eq!(t.steady_dram_bytes(), cold);
}

#[test]
fn stencils_read_their_input_about_once() {
    // out[i] = Σ w·in[i + k], k in -1..1 (3 points) or -2..2 (5 points), doubles, n = 2^23,
    // 32768 × 256 threads. The loads overlap: the input is read from DRAM once (n·8 = 64
    // MiB plus a few halo bytes), not 3 or 5 times, although in + out (128 MiB) exceed the
    // L2: neighbouring threads share sectors within one wave of resident blocks. L1 sees
    // every request: 256 bytes per warp = 8 sectors, 9 when the offset is not a multiple
    // of 32 bytes.
    let n = f64::from(1u32 << 23);
    for (kernel, points) in [("stencil3", 3.0), ("stencil5", 5.0)] {
        let p = profile("traffic", kernel, [32768, 1, 1], [256, 1, 1], &[("param_2", 1 << 23)]);
        let t = estimate(&p, &a100(8, 0));
        check(&t, &format!("{kernel} dram_read_bytes"), t.dram_read_bytes, n * 8.0, 0.01);
        check(&t, &format!("{kernel} dram_write_bytes"), t.dram_write_bytes, n * 8.0, 0.01);
        let w = warps(&p);
        assert!(t.l1_load_sectors >= points * 8.0 * w && t.l1_load_sectors <= points * 9.0 * w, "{kernel}: {t:#?}");
        // A block re-reads its neighbours' elements from L1: L2 sees about one stream.
        assert!(t.l2_load_sectors <= 1.1 * n * 8.0 / SECTOR_BYTES, "{kernel}: {t:#?}");
    }
}

#[test]
fn naive_transpose_moves_each_matrix_once_but_8x_sectors_on_the_strided_side() {
    // out[x·n + y] = in[y·n + x], n = 4096, 32×8 blocks: reads along x are coalesced (4
    // sectors per warp); writes are 4·n bytes apart per lane (32 sectors per warp, 8× the
    // minimum). DRAM: n²·4 = 64 MiB each way (the distinct footprints).
    let p = profile("traffic", "transpose_plain", [128, 512, 1], [32, 8, 1], &[("param_2", 4096)]);
    let t = estimate(&p, &a100(8, 0));
    let n2 = 4096.0 * 4096.0;
    check(&t, "dram_read_bytes", t.dram_read_bytes, n2 * 4.0, 0.01);
    check(&t, "dram_write_bytes", t.dram_write_bytes, n2 * 4.0, 0.01);
    let w = warps(&p);
    check(&t, "l1_load_sectors", t.l1_load_sectors, 4.0 * w, 1e-9);
    check(&t, "l2_store_sectors", t.l2_store_sectors, 32.0 * w, 1e-9);
    assert_eq!(t.l2_store_sectors / t.l1_load_sectors, 8.0);
}

#[test]
fn a_2d_stencil_reads_its_grid_once_when_the_resident_blocks_end_mid_row() {
    // tests/fixtures/cu/stencil2d.cu, `jacobi2d`: u_new[y][x] from u's four neighbours,
    // 8192² floats (256 MiB each way, far past the 40 MiB L2), 16×16 blocks: a grid of 512 ×
    // 512 blocks of which 864 are resident, one row and 352 blocks of the next. Blocks one
    // row apart share their halo rows while both are resident; each row of u is read from
    // DRAM once. Counting the data of the two whole rows that hold the resident blocks (1024
    // blocks) once per 864 blocks would read u 1.19 times.
    let n = 8192.0_f64;
    let p = profile("stencil2d", "jacobi2d", [512, 512, 1], [16, 16, 1], &[("param_2", 8192), ("param_3", 8192)]);
    let t = estimate(&p, &a100(8, 0));
    check(&t, "dram_read_bytes", t.dram_read_bytes, n * n * 4.0, 0.02);
    check(&t, "dram_write_bytes", t.dram_write_bytes, n * n * 4.0, 0.02);
}

#[test]
fn tiled_matmul_reads_each_input_once_when_it_fits_and_more_when_not() {
    // C = A·B, n×n floats, 16×16 tiles, one tile of A and one of B per step (2 KiB of
    // shared memory per block). Each block reads a 16-row panel of A and a 16-column panel
    // of B: 2·16·n·4 bytes; over (n/16)² blocks that is n/16 times each matrix.
    // n = 1024: the three matrices (12 MiB) fit the 40 MiB L2: DRAM reads = 2·n²·4 = 8 MiB.
    let p = profile("matmul_tiled", "matmul_tiled", [64, 64, 1], [16, 16, 1], &[("param_3", 1024)]);
    let t = estimate(&p, &a100(8, 2048));
    let n = 1024.0;
    check(&t, "dram_read_bytes", t.dram_read_bytes, 2.0 * n * n * 4.0, 0.01);
    check(&t, "dram_write_bytes", t.dram_write_bytes, n * n * 4.0, 0.01);
    // Requested: each element of a block's panels once per block (no re-read within a
    // block), so L2 load sectors are the requested ones: 2·16·n·4 B × 4096 blocks.
    let requested = 2.0 * 16.0 * n * 4.0 * 4096.0 / SECTOR_BYTES;
    check(&t, "l1_load_sectors", t.l1_load_sectors, requested, 1e-9);
    check(&t, "l2_load_sectors", t.l2_load_sectors, requested, 0.01);
    // n = 4096: 192 MiB of matrices do not fit. A block row reads its A panel while it
    // runs (resident blocks cover 864 blocks = 3.4 of the 256-block rows, so A is read
    // about once). Every block row reads all of B (64 MiB, more than the 40 MiB L2), and
    // the next row's blocks that share a panel with one of them start 256 blocks later:
    // 256 blocks' data (128 MiB, capped at the 68 MiB a wave moves: 1.6 × the L2) passes
    // through L2 in between, so B comes from DRAM once per block row (l2_kept_share keeps
    // under 1 %), n/16 times, and A once.
    let p = profile("matmul_tiled", "matmul_tiled", [256, 256, 1], [16, 16, 1], &[("param_3", 4096)]);
    let t = estimate(&p, &a100(8, 2048));
    let n = 4096.0;
    assert!(!t.l2_resident);
    assert_eq!(t.steady_dram_bytes(), t.dram_read_bytes + t.dram_write_bytes);
    let b_per_row = n * n * 4.0 * (n / 16.0);
    check(&t, "dram_read_bytes", t.dram_read_bytes, b_per_row + n * n * 4.0, 0.02);
    assert!(t.notes.iter().any(|s| s.contains("re-read from DRAM")), "{:?}", t.notes);
}

#[test]
fn grid_stride_loop_reads_and_writes_each_element_once() {
    // out[i] = in[i]·s over n = 2^20 with 256 × 256 threads: 16 iterations each, every
    // element once: 4 MiB each way.
    let p = profile("grid_stride", "grid_stride", [256, 1, 1], [256, 1, 1], &[("param_3", 1 << 20)]);
    let t = estimate(&p, &a100(8, 0));
    check(&t, "dram_read_bytes", t.dram_read_bytes, 4.0 * MIB, 0.01);
    check(&t, "dram_write_bytes", t.dram_write_bytes, 4.0 * MIB, 0.01);
    check(&t, "global_load_requests", t.global_load_requests, 16.0 * 2048.0, 0.02);
}

#[test]
fn tree_reduction_reads_its_input_once_and_writes_one_float_per_block() {
    // sdata[tid] = in[i]; 8 halving steps in shared memory; out[blockIdx.x] = sdata[0]:
    // n = 2^18 floats read (1 MiB), 1024 floats written (4 KiB). Shared memory, per warp
    // of the 8 in a block: the store, then in each step where one of its lanes has
    // tid < s a load of sdata[tid], one of sdata[tid + s] and a store (s = 128: warps 0-3,
    // s = 64: warps 0-1, s = 32 … 1: warp 0, so 4 + 2 + 6 = 12 of the 64 warp-steps), then
    // the final load by warp 0 (tid == 0): 1 + 3·12/8 + 1/8 = 5.625 per warp.
    let p = profile("reduce_tree", "reduce_tree", [1024, 1, 1], [256, 1, 1], &[("param_2", 262_144)]);
    let t = estimate(&p, &a100(8, 1024));
    check(&t, "dram_read_bytes", t.dram_read_bytes, 1.0 * MIB, 0.01);
    check(&t, "dram_write_bytes", t.dram_write_bytes, 4096.0, 0.01);
    let w = warps(&p);
    let shared_per_thread: f64 = p.memory_accesses.iter().filter(|a| a.space == kernel_profile::Space::Shared).map(|a| a.executions).sum();
    assert_eq!(shared_per_thread, 1.0 + 3.0 * 12.0 / 8.0 + 1.0 / 8.0);
    check(&t, "shared_requests", t.shared_requests, shared_per_thread * w, 1e-9);
    // Unit-stride floats: one wavefront per request, no conflicts.
    check(&t, "shared_wavefronts", t.shared_wavefronts, t.shared_requests, 1e-9);
}

#[test]
fn atomics_on_one_address_serialise_the_warp() {
    // atomicAdd(counter, 1): the 32 lanes of a warp hit one address, and ptxas aggregates
    // the integer add over the warp (one operation per request); atomicAdd(&bins[tid % 8],
    // 1): 4 lanes per address, one operation each; 32768 warp requests each.
    let p = profile("traffic", "atomic_counter", [4096, 1, 1], [256, 1, 1], &[("param_1", 1 << 20)]);
    let at: Vec<_> = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Atomic).collect();
    assert_eq!(at.len(), 1);
    assert_eq!(at[0].same_address_lanes, Some(32));
    assert_eq!(at[0].warp_aggregated, Some(true));
    let t = estimate(&p, &a100(8, 0));
    check(&t, "atomic_requests", t.atomic_requests, 32768.0, 1e-9);
    check(&t, "atomic_serialised_lanes", t.atomic_serialised_lanes, 32768.0, 1e-9);

    let p = profile("traffic", "atomic_bins8", [4096, 1, 1], [256, 1, 1], &[("param_1", 1 << 20)]);
    let at: Vec<_> = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Atomic).collect();
    assert_eq!(at[0].same_address_lanes, Some(4));
    let t = estimate(&p, &a100(8, 0));
    check(&t, "atomic_serialised_lanes", t.atomic_serialised_lanes, 4.0 * 32768.0, 1e-9);

    // reduce_warp: `if (warp == 0) { ... if (lane == 0) atomicAdd(out, sum); }`. The
    // warp's 32 addresses are all `out`, but only lane 0 of warp 0 runs the atomic: one
    // lane operation per block (1024), not 32 per request.
    let p = profile("reduce_warp", "reduce_warp", [1024, 1, 1], [256, 1, 1], &[("param_2", 1 << 26)]);
    let at: Vec<_> = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Atomic).collect();
    assert_eq!(at[0].same_address_lanes, Some(32));
    assert_eq!(at[0].active_lane_fraction, Some(1.0 / 32.0));
    let t = estimate(&p, &a100(8, 0));
    check(&t, "atomic_requests", t.atomic_requests, 1024.0, 1e-9);
    check(&t, "atomic_serialised_lanes", t.atomic_serialised_lanes, 1024.0, 1e-9);

    // histogram_global: bins[data[i]] is data-dependent, but `data` holds bytes: the index
    // is one of 256, the table 1 KiB, 8 lines of 128 B. Every lane is one operation and the
    // 8 lines take them in parallel: 2^20 lanes / 8 (64 blocks × 8 warps × 64 grid-stride
    // trips × 32 lanes).
    let p = profile("histogram", "histogram_global", [64, 1, 1], [256, 1, 1], &[("param_2", 1 << 20)]);
    let at: Vec<_> = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Atomic).collect();
    assert_eq!(at[0].same_address_lanes, None);
    assert_eq!(at[0].data_span_bytes, Some(1024));
    let t = estimate(&p, &a100(8, 0));
    check(&t, "atomic_serialised_lanes", t.atomic_serialised_lanes, f64::from(1u32 << 20) / 8.0, 0.01);
    assert!(t.notes.iter().any(|n| n.contains("index a table of 1024 bytes (8 line(s)")), "{:?}", t.notes);
    assert!(!t.notes.iter().any(|n| n.contains("contention unknown")), "{:?}", t.notes);
}


#[test]
fn block_stride_tile_loads_read_the_input_once() {
    // tile_box: 64×256 blocks of 32×8 threads compute a 2048² output; each block copies a
    // 14×38 tile of the 2054² input (row pitch 2054 floats) with loops that start at the
    // thread index. Neighbouring tiles overlap by the halo, so the input is read from DRAM
    // once: 2054² × 4 B = 16.9 MB (input and output, 33.7 MB, fit the 40 MiB L2), and the
    // output written once: 2048² × 4 B. Requests: 3.5 tile loads per warp (1.75 rows × 2
    // column copies, see the fixture test). The first copy of a row (columns 0-31) has
    // all 32 lanes active, 128 B: 4 sectors; the second (columns 32-37) only 6 lanes,
    // 24 B: 1 sector. 1.75 × (4 + 1) = 8.75 sectors per warp.
    let p = profile("tiled_load", "tile_box", [64, 256, 1], [32, 8, 1], &[("param_2", 2048)]);
    let t = estimate(&p, &a100(8, 14 * 38 * 4));
    check(&t, "dram_read_bytes", t.dram_read_bytes, 2054.0 * 2054.0 * 4.0, 0.02);
    check(&t, "dram_write_bytes", t.dram_write_bytes, 2048.0 * 2048.0 * 4.0, 1e-9);
    let w = warps(&p);
    check(&t, "global_load_requests", t.global_load_requests, 3.5 * w, 1e-9);
    check(&t, "l1_load_sectors", t.l1_load_sectors, 1.75 * (4.0 + 1.0) * w, 1e-9);
}

#[test]
fn register_spills_take_requests_and_reach_l2_when_the_frames_exceed_l1() {
    // vadd (straight-line code: 1 dynamic execution per static instruction on the path
    // every thread takes) with ptxas reporting 64 B of spill stores and 128 B of spill
    // loads per thread: 16 STL and 32 LDL of one register each, one 128-byte request
    // (4 sectors) per warp and instruction.
    let mut p = profile("vadd", "vadd", [4096, 1, 1], [256, 1, 1], &[("param_3", 1 << 20)]);
    let base = estimate(&p, &a100(8, 0));
    p.resources.spill_store_bytes = 64;
    p.resources.spill_load_bytes = 128;
    let ratio = p.counts.total_dynamic() / p.counts.static_.values().sum::<u64>() as f64;
    let w = warps(&p);
    // Frames: 64 B × 2048 resident threads = 128 KiB ≤ 192 KiB of L1: they stay in L1.
    p.resources.stack_frame_bytes = 64;
    let t = estimate(&p, &a100(8, 0));
    check(&t, "spill_requests", t.spill_requests, 48.0 * ratio * w, 1e-9);
    check(&t, "l1_load_sectors", t.l1_load_sectors - base.l1_load_sectors, 32.0 * ratio * w * 4.0, 1e-9);
    assert_eq!((t.l2_load_sectors, t.l2_store_sectors), (base.l2_load_sectors, base.l2_store_sectors));
    // Frames of 1 KiB: 2 MiB per SM, far over the L1: every spill sector goes to L2.
    p.resources.stack_frame_bytes = 1024;
    let t = estimate(&p, &a100(8, 0));
    check(&t, "l2_load_sectors", t.l2_load_sectors - base.l2_load_sectors, 32.0 * ratio * w * 4.0, 1e-9);
    check(&t, "l2_store_sectors", t.l2_store_sectors - base.l2_store_sectors, 16.0 * ratio * w * 4.0, 1e-9);
    assert!(t.notes.iter().any(|n| n.contains("register spills") && n.contains("L2")), "{:?}", t.notes);
    // DRAM is not charged for spills (estimate: the write-back L2 keeps them).
    assert_eq!(t.dram_read_bytes, base.dram_read_bytes);
}

#[test]
fn a_periodic_block_index_shares_its_data_between_blocks() {
    // tests/fixtures/measured/cu/gpu_l2_cache.cu, `l2_read`: block b reads the 16 KiB chunks
    // r, r + K, ..., r + 31K with r = b % K (K = blockRun = 48): the data set is K × 32 × 16 KiB
    // = 24 MiB, read by 100,000 blocks of 1024 threads (two 8-byte loads per chunk). It fits
    // the 40 MiB L2: every byte once from DRAM, steady-state resident; the requests all go
    // through L2 (each block's chunks are its own: no L1 re-reads).
    let path = format!("{}/../../tests/fixtures/measured/ptx/sm_80/gpu_l2_cache.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let p = common::profile_text(&text, "gpu_l2_cache", "l2_read", [100_000, 1, 1], [1024, 1, 1], &[("param_2", 48), ("param_3", 0)]);
    let load = p.memory_accesses.iter().find(|a| a.kind == AccessKind::Load && a.address.is_some()).expect("a patterned load");
    let pat = load.address.as_ref().unwrap();
    assert_eq!(pat.ctaid_mod.len(), 1, "{pat:?}");
    assert_eq!((pat.ctaid_mod[0].modulus, pat.ctaid_mod[0].bytes), (48, 16384));
    let t = estimate(&p, &a100(2, 0));
    check(&t, "dram_read_bytes", t.dram_read_bytes, 48.0 * 32.0 * 16384.0, 1e-9);
    assert!(t.l2_resident, "{t:#?}");
    // 100,000 blocks × 32 warps × 32 chunks × 2 loads × 8 sectors (256 B per warp load).
    check(&t, "l2_load_sectors", t.l2_load_sectors, 100_000.0 * 32.0 * 32.0 * 2.0 * 8.0, 1e-9);
}

/// The same kernel over a data set larger than the L2: blocks r and r + K share their chunks
/// but start K blocks apart, so K × 512 KiB (the whole data set) passes through the L2
/// between their reads. At K = 144 (72 MiB, 1.8 × the 40 MiB L2) the L2 keeps none of it
/// and every request is a DRAM read, as the gpu-benches gpu-l2-cache tables measure to
/// within a few percent (the A100 80 GB at 1.86 × its L2: 1879 GB/s against its DRAM
/// plateau of about 1735); at K = 80 (40 MiB, the L2's size) about half.
#[test]
fn a_shared_data_set_beyond_the_l2_is_read_from_dram_by_every_block() {
    let path = format!("{}/../../tests/fixtures/measured/ptx/sm_80/gpu_l2_cache.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let requested = 100_000.0 * 512.0 * 1024.0;
    let p = common::profile_text(&text, "gpu_l2_cache", "l2_read", [100_000, 1, 1], [1024, 1, 1], &[("param_2", 144), ("param_3", 0)]);
    let t = estimate(&p, &a100(2, 0));
    check(&t, "dram_read_bytes at 1.8 x L2", t.dram_read_bytes, requested, 0.01);
    let p = common::profile_text(&text, "gpu_l2_cache", "l2_read", [100_000, 1, 1], [1024, 1, 1], &[("param_2", 80), ("param_3", 0)]);
    let t = estimate(&p, &a100(2, 0));
    assert!(t.dram_read_bytes > 0.3 * requested && t.dram_read_bytes < 0.7 * requested, "{t:#?}");
}

#[test]
fn the_l2_keeps_a_footprint_below_its_size_and_loses_it_over_a_range_above() {
    use kernel_profile::traffic::l2_kept_share;
    let c = 40.0 * MIB;
    assert_eq!(l2_kept_share(0.0, c), 1.0);
    assert_eq!(l2_kept_share(0.6 * c, c), 1.0);
    let mut last = 1.0;
    for i in 61..300 {
        let k = l2_kept_share(f64::from(i) / 100.0 * c, c);
        assert!(k <= last && k >= 0.0, "{i}: {k}");
        last = k;
    }
    // The curve's values at the gpu-l2-cache table points (module documentation).
    assert!((l2_kept_share(0.94 * c, c) - 0.53).abs() < 0.01);
    assert!((l2_kept_share(1.13 * c, c) - 0.15).abs() < 0.01);
    assert!(l2_kept_share(1.49 * c, c) < 0.02);
    assert_eq!(l2_kept_share(c, 0.0), 0.0);
}

/// tests/fixtures/measured/cu/gpu_latency.cu, `latency_chase`: `p = *p` around one random
/// cycle of the buffer (gpu-benches' gpu-latency). The loads are pointer chases; a chase
/// finds a line again only after the whole cycle, so at 1.8 × the 40 MiB L2 it misses every
/// time (the gpu-latency tables reach their DRAM latency there), where random draws over
/// the same bytes would hit 40/72 of the time.
#[test]
fn a_pointer_chase_past_the_l2_misses_every_time() {
    let path = format!("{}/../../tests/fixtures/measured/ptx/sm_80/gpu_latency.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut p = common::profile_text(&text, "gpu_latency", "latency_chase", [1, 1, 1], [64, 1, 1], &[("param_1", 1 << 20), ("param_3", 0)]);
    let chases = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Load && a.pointer_chase == Some(true)).count();
    assert!(chases >= 32, "the unrolled chase's loads: {:#?}", p.memory_accesses);
    let footprint = 72.0 * MIB;
    p.launch.footprint_bytes = Some(footprint as u64);
    let t = estimate(&p, &a100(1, 0));
    assert!(t.dram_read_bytes >= 0.99 * t.l2_load_sectors * SECTOR_BYTES, "{t:#?}");
    // Random gathers over the same footprint (the loads not marked as a chase) would hit.
    for a in &mut p.memory_accesses {
        a.pointer_chase = None;
    }
    let g = estimate(&p, &a100(1, 0));
    assert!(g.dram_read_bytes < 0.5 * g.l2_load_sectors * SECTOR_BYTES, "{g:#?}");
}

/// The same chase on the A100's split L2: below about half the L2 the near partition keeps
/// the cycle, at 35 MiB (the gpu-latency row whose latency is twice the L2's) nearly every
/// hit is the far partition's; on an L2 of one piece, none.
#[test]
fn a_pointer_chase_past_half_a_split_l2_waits_for_the_far_partition() {
    let path = format!("{}/../../tests/fixtures/measured/ptx/sm_80/gpu_latency.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut p = common::profile_text(&text, "gpu_latency", "latency_chase", [1, 1, 1], [64, 1, 1], &[("param_1", 1 << 20), ("param_3", 0)]);
    let far = |p: &mut KernelProfile, mib: f64, partitioned: bool| {
        p.launch.footprint_bytes = Some((mib * MIB) as u64);
        estimate(p, &CacheConfig { l2_partitioned: partitioned, ..a100(1, 0) }).l2_far_share
    };
    assert_eq!(far(&mut p, 8.0, true), 0.0);
    assert!(far(&mut p, 35.0, true) > 0.9, "{}", far(&mut p, 35.0, true));
    let mid = far(&mut p, 23.0, true);
    assert!(mid > 0.3 && mid < 0.7, "{mid}");
    assert_eq!(far(&mut p, 35.0, false), 0.0);
}

#[test]
fn a_gather_through_a_loaded_index_is_not_a_pointer_chase() {
    let p = common::profile_text(LUT_MAP, "lut_map.ptx", "lut_map", [4096, 1, 1], [256, 1, 1], &[("param_3", 1 << 20)]);
    assert!(p.memory_accesses.iter().all(|a| a.pointer_chase.is_none()), "{:#?}", p.memory_accesses);
}

/// nvcc -ptx -arch=sm_80 of `if (i < n) out[i] = lut[in[i]];` with `in` of bytes and `lut`
/// of floats: a gather whose index is a loaded byte, so from a table of 256 floats.
const LUT_MAP: &str = ".version 9.5\n.target sm_80\n.address_size 64\n.visible .entry lut_map(\n.param .u64 lut_map_param_0,\n.param .u64 lut_map_param_1,\n.param .u64 lut_map_param_2,\n.param .u32 lut_map_param_3\n)\n{\n.reg .pred %p<2>;\n.reg .f32 %f<2>;\n.reg .b32 %r<7>;\n.reg .b64 %rd<13>;\nld.param.u64 %rd1, [lut_map_param_0];\nld.param.u64 %rd2, [lut_map_param_1];\nld.param.u64 %rd3, [lut_map_param_2];\nld.param.u32 %r2, [lut_map_param_3];\nmov.u32 %r3, %ctaid.x;\nmov.u32 %r4, %ntid.x;\nmov.u32 %r5, %tid.x;\nmad.lo.s32 %r1, %r3, %r4, %r5;\nsetp.ge.s32 %p1, %r1, %r2;\n@%p1 bra $L__BB0_2;\ncvta.to.global.u64 %rd4, %rd1;\ncvt.s64.s32 %rd5, %r1;\nadd.s64 %rd6, %rd4, %rd5;\nld.global.u8 %r6, [%rd6];\ncvta.to.global.u64 %rd7, %rd2;\nmul.wide.u32 %rd8, %r6, 4;\nadd.s64 %rd9, %rd7, %rd8;\nld.global.f32 %f1, [%rd9];\ncvta.to.global.u64 %rd10, %rd3;\nmul.wide.s32 %rd11, %r1, 4;\nadd.s64 %rd12, %rd10, %rd11;\nst.global.f32 [%rd12], %f1;\n$L__BB0_2:\nret;\n}\n";

#[test]
fn a_gather_from_a_byte_indexed_table_reads_the_table_once() {
    // 2^26 bytes in, 2^26 floats out; the 1 KiB table stays in L1: its 32 sectors per
    // request (256 floats are 32 sectors, the most a warp can touch) are L1 hits, and DRAM
    // reads the input and the table once.
    let n: i64 = 1 << 26;
    let p = common::profile_text(LUT_MAP, "lut_map.ptx", "lut_map", [(n / 256) as u32, 1, 1], [256, 1, 1], &[("param_3", n)]);
    let gather: Vec<_> = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Load && a.class == kernel_profile::AccessClass::Irregular).collect();
    assert_eq!(gather.len(), 1);
    assert_eq!(gather[0].data_span_bytes, Some(1024));
    let t = estimate(&p, &a100(8, 0));
    check(&t, "dram_read_bytes", t.dram_read_bytes, n as f64 + 1024.0, 0.001);
    check(&t, "dram_write_bytes", t.dram_write_bytes, 4.0 * n as f64, 0.001);
    // L2 sees the input's sectors only (one per 32 bytes), not the table's.
    check(&t, "l2_load_sectors", t.l2_load_sectors, n as f64 / SECTOR_BYTES, 0.001);
    assert!(t.notes.iter().any(|m| m.contains("index a table of at most 1.0 KiB")), "{:?}", t.notes);
    assert!(!p.assumptions.iter().any(|m| m.contains("assumed worst case")), "{:?}", p.assumptions);
}

/// nvcc 13.5 `-arch=sm_80` for one warp per row of `rows` × `cols` floats: `for (int i =
/// lane; i < cols; i += 32) s += x[(size_t)row * cols + i] * w[i];`, with `lane =
/// threadIdx.x % 32` and `row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32`. nvcc
/// peels a remainder loop (`i += 32`, up to three times) in front of the loop unrolled by
/// four (`i += 128`); the two share the counter `i`.
const WARP_DOT: &str = ".version 9.5\n.target sm_80\n.address_size 64\n.visible .entry _Z8warp_dotPKfS0_Pfii(\n.param .u64 _Z8warp_dotPKfS0_Pfii_param_0,\n.param .u64 _Z8warp_dotPKfS0_Pfii_param_1,\n.param .u64 _Z8warp_dotPKfS0_Pfii_param_2,\n.param .u32 _Z8warp_dotPKfS0_Pfii_param_3,\n.param .u32 _Z8warp_dotPKfS0_Pfii_param_4\n)\n{\n.reg .pred 	%p<8>;\n.reg .f32 	%f<30>;\n.reg .b32 	%r<27>;\n.reg .b64 	%rd<40>;\nld.param.u64 	%rd18, [_Z8warp_dotPKfS0_Pfii_param_0];\nld.param.u64 	%rd19, [_Z8warp_dotPKfS0_Pfii_param_1];\nld.param.u64 	%rd17, [_Z8warp_dotPKfS0_Pfii_param_2];\nld.param.u32 	%r14, [_Z8warp_dotPKfS0_Pfii_param_3];\nld.param.u32 	%r13, [_Z8warp_dotPKfS0_Pfii_param_4];\ncvta.to.global.u64 	%rd1, %rd19;\ncvta.to.global.u64 	%rd2, %rd18;\nmov.u32 	%r15, %ntid.x;\nshr.u32 	%r16, %r15, 5;\nmov.u32 	%r17, %ctaid.x;\nmov.u32 	%r1, %tid.x;\nshr.u32 	%r18, %r1, 5;\nmad.lo.s32 	%r2, %r16, %r17, %r18;\nand.b32  	%r3, %r1, 31;\nsetp.ge.s32 	%p1, %r2, %r14;\n@%p1 bra 	$L__BB0_10;\nsetp.ge.s32 	%p2, %r3, %r13;\nmov.f32 	%f29, 0f00000000;\n@%p2 bra 	$L__BB0_8;\ncvt.s64.s32 	%rd3, %r2;\ncvt.s64.s32 	%rd4, %r13;\nnot.b32 	%r19, %r3;\nadd.s32 	%r4, %r19, %r13;\nshr.u32 	%r20, %r4, 5;\nadd.s32 	%r21, %r20, 1;\nand.b32  	%r24, %r21, 3;\nsetp.eq.s32 	%p3, %r24, 0;\nmov.f32 	%f29, 0f00000000;\nmov.u32 	%r25, %r3;\n@%p3 bra 	$L__BB0_5;\ncvt.u64.u32 	%rd20, %r1;\nand.b64  	%rd21, %rd20, 31;\nand.b32  	%r22, %r1, 31;\nmul.wide.u32 	%rd22, %r22, 4;\nadd.s64 	%rd37, %rd1, %rd22;\nmul.lo.s64 	%rd23, %rd4, %rd3;\nadd.s64 	%rd24, %rd23, %rd21;\nshl.b64 	%rd25, %rd24, 2;\nadd.s64 	%rd36, %rd2, %rd25;\nmov.f32 	%f29, 0f00000000;\nmov.u32 	%r25, %r3;\n$L__BB0_4:\n.pragma \"nounroll\";\nld.global.f32 	%f12, [%rd37];\nld.global.f32 	%f13, [%rd36];\nfma.rn.f32 	%f29, %f13, %f12, %f29;\nadd.s32 	%r25, %r25, 32;\nadd.s64 	%rd37, %rd37, 128;\nadd.s64 	%rd36, %rd36, 128;\nadd.s32 	%r24, %r24, -1;\nsetp.ne.s32 	%p4, %r24, 0;\n@%p4 bra 	$L__BB0_4;\n$L__BB0_5:\nsetp.lt.u32 	%p5, %r4, 96;\n@%p5 bra 	$L__BB0_8;\ncvt.u64.u32 	%rd26, %r25;\nmul.wide.u32 	%rd27, %r25, 4;\nadd.s64 	%rd28, %rd1, %rd27;\nadd.s64 	%rd39, %rd28, 256;\nmul.lo.s64 	%rd29, %rd4, %rd3;\nadd.s64 	%rd30, %rd29, %rd26;\nshl.b64 	%rd31, %rd30, 2;\nadd.s64 	%rd32, %rd2, %rd31;\nadd.s64 	%rd38, %rd32, 256;\n$L__BB0_7:\nld.global.f32 	%f14, [%rd39+-256];\nld.global.f32 	%f15, [%rd38+-256];\nfma.rn.f32 	%f16, %f15, %f14, %f29;\nld.global.f32 	%f17, [%rd39+-128];\nld.global.f32 	%f18, [%rd38+-128];\nfma.rn.f32 	%f19, %f18, %f17, %f16;\nld.global.f32 	%f20, [%rd39];\nld.global.f32 	%f21, [%rd38];\nfma.rn.f32 	%f22, %f21, %f20, %f19;\nld.global.f32 	%f23, [%rd39+128];\nld.global.f32 	%f24, [%rd38+128];\nfma.rn.f32 	%f29, %f24, %f23, %f22;\nadd.s64 	%rd39, %rd39, 512;\nadd.s64 	%rd38, %rd38, 512;\nadd.s32 	%r25, %r25, 128;\nsetp.lt.s32 	%p6, %r25, %r13;\n@%p6 bra 	$L__BB0_7;\n$L__BB0_8:\nsetp.ne.s32 	%p7, %r3, 0;\n@%p7 bra 	$L__BB0_10;\ncvta.to.global.u64 	%rd33, %rd17;\nmul.wide.s32 	%rd34, %r2, 4;\nadd.s64 	%rd35, %rd33, %rd34;\nst.global.f32 	[%rd35], %f29;\n$L__BB0_10:\nret;\n}\n";

#[test]
fn a_strided_loop_after_its_remainder_loop_keeps_its_addresses() {
    // The unrolled loop's pointers start from `i` after the remainder loop (`lane`, or
    // `lane + 32·r`): each of its loads has an address, `w[i]` the same for every warp of
    // the grid. 32768 rows of 4096 floats: DRAM reads x once (512 MiB) and w (16 KiB) once.
    let (rows, cols): (i64, i64) = (32768, 4096);
    let p = common::profile_text(WARP_DOT, "warp_dot.ptx", "_Z8warp_dotPKfS0_Pfii", [(rows / 8) as u32, 1, 1], [256, 1, 1], &[("param_3", rows), ("param_4", cols)]);
    let loads: Vec<_> = p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Load).collect();
    assert_eq!(loads.len(), 10, "remainder and 4× unrolled body, two loads each");
    for a in &loads {
        let addr = a.address.as_ref().unwrap_or_else(|| panic!("no address: {a:?}"));
        assert_eq!(addr.lane, 4, "{a:?}");
    }
    let shared = loads.iter().filter(|a| a.address.as_ref().is_some_and(|x| x.ctaid == [0, 0, 0] && x.tid_x_parts.is_empty())).count();
    assert_eq!(shared, 5, "the w[i] loads: {loads:#?}");
    let t = estimate(&p, &a100(8, 0));
    check(&t, "dram_read_bytes", t.dram_read_bytes, (rows * cols * 4 + cols * 4) as f64, 0.01);
}

/// nvcc 13.5 `-arch=sm_80` for a row per thread: `for (int j = 0; j < n; j++) s += A[row
/// * n + j] * x[j];` with `row = blockIdx.x * blockDim.x + threadIdx.x`.
const MATVEC_ROW_PER_THREAD: &str = ".version 9.5\n.target sm_80\n.address_size 64\n.visible .entry _Z6matvecPKfS0_Pfi(\n.param .u64 _Z6matvecPKfS0_Pfi_param_0,\n.param .u64 _Z6matvecPKfS0_Pfi_param_1,\n.param .u64 _Z6matvecPKfS0_Pfi_param_2,\n.param .u32 _Z6matvecPKfS0_Pfi_param_3\n)\n{\n.reg .pred 	%p<7>;\n.reg .f32 	%f<30>;\n.reg .b32 	%r<24>;\n.reg .b64 	%rd<27>;\nld.param.u64 	%rd15, [_Z6matvecPKfS0_Pfi_param_0];\nld.param.u64 	%rd16, [_Z6matvecPKfS0_Pfi_param_1];\nld.param.u64 	%rd14, [_Z6matvecPKfS0_Pfi_param_2];\nld.param.u32 	%r11, [_Z6matvecPKfS0_Pfi_param_3];\ncvta.to.global.u64 	%rd1, %rd16;\ncvta.to.global.u64 	%rd2, %rd15;\nmov.u32 	%r12, %ntid.x;\nmov.u32 	%r13, %ctaid.x;\nmov.u32 	%r14, %tid.x;\nmad.lo.s32 	%r1, %r13, %r12, %r14;\nsetp.ge.s32 	%p1, %r1, %r11;\n@%p1 bra 	$L__BB0_9;\nsetp.lt.s32 	%p2, %r11, 1;\nmov.f32 	%f29, 0f00000000;\n@%p2 bra 	$L__BB0_8;\nadd.s32 	%r16, %r11, -1;\nand.b32  	%r23, %r11, 3;\nsetp.lt.u32 	%p3, %r16, 3;\nmov.f32 	%f29, 0f00000000;\nmov.u32 	%r22, 0;\n@%p3 bra 	$L__BB0_5;\nsub.s32 	%r21, %r11, %r23;\nmul.lo.s32 	%r18, %r11, %r1;\nmul.wide.s32 	%rd17, %r18, 4;\nadd.s64 	%rd24, %rd2, %rd17;\nmov.f32 	%f29, 0f00000000;\nmov.u32 	%r22, 0;\nmov.u64 	%rd23, %rd1;\n$L__BB0_4:\nld.global.f32 	%f12, [%rd23];\nld.global.f32 	%f13, [%rd24];\nfma.rn.f32 	%f14, %f13, %f12, %f29;\nld.global.f32 	%f15, [%rd23+4];\nld.global.f32 	%f16, [%rd24+4];\nfma.rn.f32 	%f17, %f16, %f15, %f14;\nld.global.f32 	%f18, [%rd23+8];\nld.global.f32 	%f19, [%rd24+8];\nfma.rn.f32 	%f20, %f19, %f18, %f17;\nld.global.f32 	%f21, [%rd23+12];\nld.global.f32 	%f22, [%rd24+12];\nfma.rn.f32 	%f29, %f22, %f21, %f20;\nadd.s32 	%r22, %r22, 4;\nadd.s64 	%rd24, %rd24, 16;\nadd.s64 	%rd23, %rd23, 16;\nadd.s32 	%r21, %r21, -4;\nsetp.ne.s32 	%p4, %r21, 0;\n@%p4 bra 	$L__BB0_4;\n$L__BB0_5:\nsetp.eq.s32 	%p5, %r23, 0;\n@%p5 bra 	$L__BB0_8;\nmul.wide.s32 	%rd18, %r22, 4;\nadd.s64 	%rd26, %rd1, %rd18;\nmad.lo.s32 	%r19, %r11, %r1, %r22;\nmul.wide.s32 	%rd19, %r19, 4;\nadd.s64 	%rd25, %rd2, %rd19;\n$L__BB0_7:\n.pragma \"nounroll\";\nld.global.f32 	%f23, [%rd26];\nld.global.f32 	%f24, [%rd25];\nfma.rn.f32 	%f29, %f24, %f23, %f29;\nadd.s64 	%rd26, %rd26, 4;\nadd.s64 	%rd25, %rd25, 4;\nadd.s32 	%r23, %r23, -1;\nsetp.ne.s32 	%p6, %r23, 0;\n@%p6 bra 	$L__BB0_7;\n$L__BB0_8:\ncvta.to.global.u64 	%rd20, %rd14;\nmul.wide.s32 	%rd21, %r1, 4;\nadd.s64 	%rd22, %rd20, %rd21;\nst.global.f32 	[%rd22], %f29;\n$L__BB0_9:\nret;\n}\n";

#[test]
fn a_row_per_thread_rereads_its_sectors_from_l1() {
    // n = 16384, 64 blocks of 256 threads (one per SM of an A100): each request touches
    // 32 rows, 32 sectors; the next 7 iterations read the same sectors again (4 of 32
    // bytes per iteration). One iteration of the SM's 8 warps keeps 8 × 32 lines of 128 B
    // (32 KiB) in L1, so those re-reads hit although a block's rows are 16 MiB: L2 and
    // DRAM see A's 1 GiB about once (the lines' 4 sectors, each once), not 8 times.
    let n: i64 = 16384;
    let p = common::profile_text(MATVEC_ROW_PER_THREAD, "matvec.ptx", "_Z6matvecPKfS0_Pfi", [(n / 256) as u32, 1, 1], [256, 1, 1], &[("param_3", n)]);
    let t = estimate(&p, &a100(8, 0));
    let a_sectors = (n * n * 4) as f64 / SECTOR_BYTES;
    check(&t, "l2_load_sectors", t.l2_load_sectors, a_sectors, 0.05);
    check(&t, "dram_read_bytes", t.dram_read_bytes, (n * n * 4) as f64, 0.05);
}

#[test]
fn a_broadcast_load_returns_one_copy_through_the_l1_data_path() {
    // The row-per-thread product again: per iteration a warp reads A at 32 rows (every
    // lane's 4 bytes, 128 B through the data path) and x[j], one address for all 32 lanes,
    // which the L1 returns once (4 B), not 32 times. 512 warps × 16384 iterations.
    let n: i64 = 16384;
    let p = common::profile_text(MATVEC_ROW_PER_THREAD, "matvec.ptx", "_Z6matvecPKfS0_Pfi", [(n / 256) as u32, 1, 1], [256, 1, 1], &[("param_3", n)]);
    let t = estimate(&p, &a100(8, 0));
    let iterations = 512.0 * n as f64;
    check(&t, "l1_data_bytes", t.l1_data_bytes, iterations * (128.0 + 4.0), 0.01);
    check(&t, "global_load_requests", t.global_load_requests, iterations * 2.0, 0.01);
}

#[test]
fn a_csr_row_walk_rereads_its_sectors_from_l1_and_the_gather_does_not() {
    // spmv_csr_scalar: `values[jj]` and `col_idx[jj]` from a loaded row start, so their
    // lanes' addresses are unknown, but each is a pointer the loop advances (4 bytes in the
    // remainder loop, 16 in the body unrolled by 4 with loads at +0, +4, +8, +12): every
    // lane walks its own row. Of a request's 32 sectors, 1 − 16 / (32 · 4) = 7/8 are the
    // previous iteration's; with 2048 blocks of 128 threads, 8 resident per SM (32 warps),
    // one iteration's lines are 32 × 128 B × 32 warps = 128 KiB, which the A100's 192 KiB
    // L1 keeps. `x[col_idx[jj]]` is a gather: no walk, every sector to L2.
    let p = profile("spmv_csr", "spmv_csr_scalar", [2048, 1, 1], [128, 1, 1], &[]);
    let gather = common::line_of("spmv_csr", "dot += values[jj] * x[col_idx[jj]]");
    let irregular: Vec<_> = p.memory_accesses.iter().filter(|a| a.source_line == Some(gather) && a.kind == AccessKind::Load).collect();
    let (walking, gathers): (Vec<&MemoryAccess>, Vec<&MemoryAccess>) = irregular.iter().copied().partition(|a| a.walk.is_some());
    assert_eq!((walking.len(), gathers.len()), (10, 5), "{irregular:#?}");
    let mut steps: Vec<i64> = walking.iter().filter_map(|a| a.walk.as_ref()).map(|w| w.bytes_per_iteration).collect();
    steps.sort_unstable();
    assert_eq!(steps, [4, 4, 16, 16, 16, 16, 16, 16, 16, 16]);
    let t = estimate(&p, &a100(8, 0));
    let mut stripped = p.clone();
    for a in &mut stripped.memory_accesses {
        a.walk = None;
    }
    let without = estimate(&stripped, &a100(8, 0));
    // Per loop, the walking loads' requested sectors × their re-read share.
    let requested = |step: i64| walking.iter().filter(|a| a.walk.as_ref().is_some_and(|w| w.bytes_per_iteration == step)).map(|a| a.executions * warps(&p) * a.transactions_per_request).sum::<f64>();
    let near = requested(4) * (1.0 - 4.0 / 32.0) + requested(16) * (1.0 - 16.0 / (32.0 * 4.0));
    assert!(near > 0.0);
    check(&t, "l2_load_sectors", t.l2_load_sectors, without.l2_load_sectors - near, 1e-6);
    check(&t, "dram_read_bytes", t.dram_read_bytes, without.dram_read_bytes - near * SECTOR_BYTES, 1e-6);
    assert!(t.notes.iter().any(|n| n.contains("walk a pointer")), "{:?}", t.notes);
    // With 16 blocks per SM (64 warps) one iteration's lines are 256 KiB: L1 keeps 3/4 of
    // the re-reads, and those it does not come from L2, which read them an iteration
    // earlier; DRAM still reads each new sector once.
    let crowded = a100(16, 0);
    let kept = 192.0 / 256.0;
    let (t, without) = (estimate(&p, &crowded), estimate(&stripped, &crowded));
    check(&t, "l2_load_sectors", t.l2_load_sectors, without.l2_load_sectors - near * kept, 1e-6);
    check(&t, "dram_read_bytes", t.dram_read_bytes, without.dram_read_bytes - near * SECTOR_BYTES, 1e-6);
}

#[test]
fn before_volta_plain_global_loads_reread_from_l2_and_read_only_ones_from_l1() {
    // The same row-per-thread product where the GPU does not cache plain global loads in
    // L1 (compute capability 3.x, 5.x, 6.x: the CUDA guide's "normally not cached in
    // L1"): every requested sector of A reaches L2, eight times A's sectors. Through the
    // read-only path (`ld.global.nc`, as nvcc emits for `const __restrict__` data) the
    // re-reads stay in the SM as on an A100.
    let n: i64 = 16384;
    let no_l1 = CacheConfig { l1_caches_global_loads: false, ..a100(8, 0) };
    let a_sectors = (n * n * 4) as f64 / SECTOR_BYTES;
    let p = common::profile_text(MATVEC_ROW_PER_THREAD, "matvec.ptx", "_Z6matvecPKfS0_Pfi", [(n / 256) as u32, 1, 1], [256, 1, 1], &[("param_3", n)]);
    assert!(p.memory_accesses.iter().all(|a| a.read_only.is_none()));
    let t = estimate(&p, &no_l1);
    check(&t, "l2_load_sectors", t.l2_load_sectors, 8.0 * a_sectors, 0.05);
    assert!(t.notes.iter().any(|n| n.contains("L1 does not keep plain global loads")), "{:?}", t.notes);
    let nc = MATVEC_ROW_PER_THREAD.replace("ld.global.f32", "ld.global.nc.f32");
    let p = common::profile_text(&nc, "matvec.ptx", "_Z6matvecPKfS0_Pfi", [(n / 256) as u32, 1, 1], [256, 1, 1], &[("param_3", n)]);
    assert!(p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Load).all(|a| a.read_only == Some(true)));
    let t = estimate(&p, &no_l1);
    check(&t, "l2_load_sectors", t.l2_load_sectors, a_sectors, 0.05);
}

/// A row per thread walks its row 4 bytes per iteration: one visit to a DRAM page serves the
/// walk's next steps only while the L2 holds what it brought (`walk_reopen_share`). On
/// caches like an RTX 3060's (28 SMs, 6 blocks of 256 threads each, 3 MiB of L2), 8192
/// rows at once hold 8192 lines of 128 B (1 MiB): A's sectors take a page visit per 64
/// (2 KiB each). 43,008 rows at once (168 resident blocks of n = 49,152) hold 5.25 MiB:
/// the walks evict each other's lines and every sector is a visit of its own (each lane's
/// row is 192 KiB from its neighbour's, so one step gives a page one sector).
#[test]
fn a_row_walk_takes_a_page_per_visit_only_while_the_l2_holds_the_walks_lines() {
    let rtx3060 = CacheConfig { sm_count: 28, l1_bytes_per_sm: 128 * 1024, l2_bytes: 3 * 1024 * 1024, resident_blocks_per_sm: 6, l1_caches_global_loads: true, l2_partitioned: false };
    let walk = |n: i64| {
        let p = common::profile_text(MATVEC_ROW_PER_THREAD, "matvec.ptx", "_Z6matvecPKfS0_Pfi", [(n / 256) as u32, 1, 1], [256, 1, 1], &[("param_3", n)]);
        let t = estimate(&p, &rtx3060);
        (t.dram_activations, (n * n * 4) as f64 / SECTOR_BYTES)
    };
    assert_eq!(kernel_profile::traffic::walk_reopen_share(1024.0 * 1024.0, 3.0 * 1024.0 * 1024.0), 0.0);
    let (visits, a_sectors) = walk(8192);
    check_ratio("8192 rows: visits per A sector", visits / a_sectors, 1.0 / 64.0, 0.05);
    let (visits, a_sectors) = walk(49_152);
    check_ratio("43,008 rows: visits per A sector", visits / a_sectors, 1.0, 0.05);
}

fn check_ratio(what: &str, got: f64, want: f64, rel: f64) {
    assert!((got - want).abs() <= rel * want, "{what}: {got} against {want} (±{:.0} %)", rel * 100.0);
}

/// nvcc 13.5 `-arch=sm_80`: `if (i < n) atomicAdd(ctr, 1u);` (`count_int`) and `if (i < n)
/// atomicAdd(sum, x[i]);` on a float (`add_float`), every thread on one address.
const SAME_ADDRESS_ADDS: &str = ".version 9.5\n.target sm_80\n.address_size 64\n.visible .entry _Z9count_intPji(\n.param .u64 _Z9count_intPji_param_0,\n.param .u32 _Z9count_intPji_param_1\n)\n{\n.reg .pred 	%p<2>;\n.reg .b32 	%r<7>;\n.reg .b64 	%rd<3>;\nld.param.u64 	%rd1, [_Z9count_intPji_param_0];\nld.param.u32 	%r1, [_Z9count_intPji_param_1];\nmov.u32 	%r2, %ctaid.x;\nmov.u32 	%r3, %ntid.x;\nmov.u32 	%r4, %tid.x;\nmad.lo.s32 	%r5, %r2, %r3, %r4;\nsetp.ge.s32 	%p1, %r5, %r1;\n@%p1 bra 	$L__BB0_2;\ncvta.to.global.u64 	%rd2, %rd1;\natom.global.add.u32 	%r6, [%rd2], 1;\n$L__BB0_2:\nret;\n}\n.visible .entry _Z9add_floatPfPKfi(\n.param .u64 _Z9add_floatPfPKfi_param_0,\n.param .u64 _Z9add_floatPfPKfi_param_1,\n.param .u32 _Z9add_floatPfPKfi_param_2\n)\n{\n.reg .pred 	%p<2>;\n.reg .f32 	%f<3>;\n.reg .b32 	%r<6>;\n.reg .b64 	%rd<7>;\nld.param.u64 	%rd1, [_Z9add_floatPfPKfi_param_0];\nld.param.u64 	%rd2, [_Z9add_floatPfPKfi_param_1];\nld.param.u32 	%r2, [_Z9add_floatPfPKfi_param_2];\nmov.u32 	%r3, %ctaid.x;\nmov.u32 	%r4, %ntid.x;\nmov.u32 	%r5, %tid.x;\nmad.lo.s32 	%r1, %r3, %r4, %r5;\nsetp.ge.s32 	%p1, %r1, %r2;\n@%p1 bra 	$L__BB1_2;\ncvta.to.global.u64 	%rd3, %rd2;\nmul.wide.s32 	%rd4, %r1, 4;\nadd.s64 	%rd5, %rd3, %rd4;\nld.global.f32 	%f1, [%rd5];\ncvta.to.global.u64 	%rd6, %rd1;\natom.global.add.f32 	%f2, [%rd6], %f1;\n$L__BB1_2:\nret;\n}\n";

#[test]
fn integer_adds_on_one_address_are_one_atomic_per_warp_and_float_adds_one_per_lane() {
    // ptxas aggregates the integer add over the warp (VOTEU/POPC, then one RED by the
    // first active lane: nvdisasm of this code for sm_75 to sm_90) and leaves the float
    // add one RED.E.ADD.F32 per lane: 2^24 threads make 2^19 operations on the address in
    // the first kernel, 2^24 in the second.
    let n: i64 = 1 << 24;
    let grid = [(n / 256) as u32, 1, 1];
    let ints = common::profile_text(SAME_ADDRESS_ADDS, "adds.ptx", "_Z9count_intPji", grid, [256, 1, 1], &[("param_1", n)]);
    let atomic = ints.memory_accesses.iter().find(|a| a.kind == AccessKind::Atomic).expect("atomic");
    assert_eq!((atomic.same_address_lanes, atomic.warp_aggregated, atomic.integer_atomic), (Some(32), Some(true), Some(true)));
    let t = estimate(&ints, &a100(8, 0));
    check(&t, "atomic_serialised_lanes", t.atomic_serialised_lanes, (n / 32) as f64, 0.001);
    check(&t, "atomic_serialised_integer_lanes", t.atomic_serialised_integer_lanes, (n / 32) as f64, 0.001);
    let floats = common::profile_text(SAME_ADDRESS_ADDS, "adds.ptx", "_Z9add_floatPfPKfi", grid, [256, 1, 1], &[("param_2", n)]);
    let atomic = floats.memory_accesses.iter().find(|a| a.kind == AccessKind::Atomic).expect("atomic");
    assert_eq!((atomic.same_address_lanes, atomic.warp_aggregated, atomic.integer_atomic), (Some(32), None, Some(false)));
    let t = estimate(&floats, &a100(8, 0));
    check(&t, "atomic_serialised_lanes", t.atomic_serialised_lanes, n as f64, 0.001);
    assert_eq!(t.atomic_serialised_integer_lanes, 0.0);
    // The same code with a 64-bit add, a max and an exchange: ptxas aggregates 32-bit
    // add, min, max, and, or and xor (`REDUX.MAX` on sm_86, a `SHFL.BFLY` tree on sm_75),
    // not `RED.E.ADD.64` or `ATOMG.E.EXCH` (nvdisasm of nvcc 13.5's code).
    for (op, aggregated) in [("atom.global.add.u64 \t%rd7, [%rd2], 1;", None), ("atom.global.max.u32 \t%r6, [%rd2], 1;", Some(true)), ("atom.global.exch.b32 \t%r6, [%rd2], 1;", None)] {
        let text = SAME_ADDRESS_ADDS.replacen("atom.global.add.u32 \t%r6, [%rd2], 1;", op, 1).replace(".reg .b64 \t%rd<3>;", ".reg .b64 \t%rd<8>;");
        let p = common::profile_text(&text, "adds.ptx", "_Z9count_intPji", grid, [256, 1, 1], &[("param_1", n)]);
        let atomic = p.memory_accesses.iter().find(|a| a.kind == AccessKind::Atomic).expect("atomic");
        assert_eq!((atomic.warp_aggregated, atomic.integer_atomic), (aggregated, Some(true)), "{op}");
    }
}

/// nvcc 13.5 `-arch=sm_80`: every thread of the block runs `atomicAdd(&c, 1u)` on one
/// `__shared__ unsigned c` (ptxas: `ATOMS.POPC.INC.32`, one per warp request).
const SHARED_COUNT: &str = ".version 9.5\n.target sm_80\n.address_size 64\n.visible .entry _Z12shared_countPji(\n.param .u64 _Z12shared_countPji_param_0,\n.param .u32 _Z12shared_countPji_param_1\n)\n{\n.reg .pred 	%p<4>;\n.reg .b32 	%r<10>;\n.reg .b64 	%rd<5>;\n.shared .align 4 .u32 _ZZ12shared_countPjiE1c;\nld.param.u64 	%rd1, [_Z12shared_countPji_param_0];\nld.param.u32 	%r3, [_Z12shared_countPji_param_1];\nmov.u32 	%r1, %tid.x;\nsetp.ne.s32 	%p1, %r1, 0;\n@%p1 bra 	$L__BB0_2;\nmov.u32 	%r4, 0;\nst.shared.u32 	[_ZZ12shared_countPjiE1c], %r4;\n$L__BB0_2:\nbar.sync 	0;\nmov.u32 	%r5, %ntid.x;\nmov.u32 	%r2, %ctaid.x;\nmad.lo.s32 	%r6, %r2, %r5, %r1;\nsetp.ge.u32 	%p2, %r6, %r3;\n@%p2 bra 	$L__BB0_4;\nmov.u32 	%r7, _ZZ12shared_countPjiE1c;\natom.shared.add.u32 	%r8, [%r7], 1;\n$L__BB0_4:\nbar.sync 	0;\n@%p1 bra 	$L__BB0_6;\nld.shared.u32 	%r9, [_ZZ12shared_countPjiE1c];\ncvta.to.global.u64 	%rd2, %rd1;\nmul.wide.u32 	%rd3, %r2, 4;\nadd.s64 	%rd4, %rd2, %rd3;\nst.global.u32 	[%rd4], %r9;\n$L__BB0_6:\nret;\n}\n";

#[test]
fn an_integer_add_on_one_shared_address_is_one_wavefront_per_warp() {
    let n: i64 = 1 << 20;
    let p = common::profile_text(SHARED_COUNT, "shared_count.ptx", "_Z12shared_countPji", [(n / 256) as u32, 1, 1], [256, 1, 1], &[("param_1", n)]);
    let atomic = p.memory_accesses.iter().find(|a| a.kind == AccessKind::Atomic).expect("atomic");
    assert_eq!((atomic.space, atomic.warp_aggregated), (kernel_profile::Space::Shared, Some(true)));
    let t = estimate(&p, &a100(8, 4));
    // One wavefront per warp request of the atomic (2^15 of them), not 32; the block's
    // other shared accesses (the initial store and the final load by thread 0) add one
    // request per warp that runs them.
    assert!(t.shared_wavefronts < 2.0 * (n / 32) as f64, "{t:#?}");
    // Thread 0's `out[blockIdx.x] = c`: one store request to L2 per block (its one active
    // lane's line), whatever the 32 lanes' addresses would touch.
    check(&t, "store_line_requests", t.store_line_requests, (n / 256) as f64, 1e-9);
}

/// nvcc 13.5 `-ptx -arch=sm_80` of a register-blocked read of a shared tile (an SGEMM's
/// `rb[n] = Bs[k*128 + tc*8 + n]`, `tc = threadIdx.x % 16`, k and n unrolled by nvcc):
///
/// ```cuda
/// __shared__ float Bs[8 * 128];
/// int tc = threadIdx.x % 16;
/// for (int i = threadIdx.x; i < 8 * 128; i += blockDim.x) Bs[i] = in[i];
/// __syncthreads();
/// float acc = 0.0f;
/// for (int k = 0; k < 2; ++k) {
///     float rb[8];
///     for (int n = 0; n < 8; ++n) rb[n] = Bs[k * 128 + tc * 8 + n];
///     for (int n = 0; n < 8; ++n) acc += rb[n] * rb[(n + 3) % 8];
/// }
/// out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
/// ```
///
/// ptxas issues its 16 `ld.shared.f32` as 4 `LDS.128` (nvdisasm of the sm_80 cubin).
const ROW_BLOCK: &str = r#".version 9.5
.target sm_80
.address_size 64

	// .globl	rowblock

.visible .entry rowblock(
	.param .u64 rowblock_param_0,
	.param .u64 rowblock_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .f32 	%f<34>;
	.reg .b32 	%r<16>;
	.reg .b64 	%rd<9>;
	// demoted variable
	.shared .align 4 .b8 _ZZ8rowblockE2Bs[4096];

	ld.param.u64 	%rd2, [rowblock_param_0];
	ld.param.u64 	%rd3, [rowblock_param_1];
	mov.u32 	%r1, %tid.x;
	setp.lt.s32 	%p1, %r1, 1024;
	@%p1 bra 	$L__BB0_1;
	bra.uni 	$L__BB0_3;

$L__BB0_1:
	mov.u32 	%r2, %ntid.x;
	cvta.to.global.u64 	%rd1, %rd2;
	mov.u32 	%r6, _ZZ8rowblockE2Bs;
	mov.u32 	%r15, %r1;

$L__BB0_2:
	mul.wide.s32 	%rd4, %r15, 4;
	add.s64 	%rd5, %rd1, %rd4;
	ld.global.f32 	%f1, [%rd5];
	shl.b32 	%r5, %r15, 2;
	add.s32 	%r7, %r6, %r5;
	st.shared.f32 	[%r7], %f1;
	add.s32 	%r15, %r15, %r2;
	setp.lt.s32 	%p2, %r15, 1024;
	@%p2 bra 	$L__BB0_2;

$L__BB0_3:
	mov.u32 	%r8, %ntid.x;
	bar.sync 	0;
	shl.b32 	%r9, %r1, 5;
	and.b32  	%r10, %r9, 480;
	mov.u32 	%r11, _ZZ8rowblockE2Bs;
	add.s32 	%r12, %r11, %r10;
	ld.shared.f32 	%f2, [%r12+12];
	ld.shared.f32 	%f3, [%r12];
	fma.rn.f32 	%f4, %f3, %f2, 0f00000000;
	ld.shared.f32 	%f5, [%r12+16];
	ld.shared.f32 	%f6, [%r12+4];
	fma.rn.f32 	%f7, %f6, %f5, %f4;
	ld.shared.f32 	%f8, [%r12+20];
	ld.shared.f32 	%f9, [%r12+8];
	fma.rn.f32 	%f10, %f9, %f8, %f7;
	ld.shared.f32 	%f11, [%r12+24];
	fma.rn.f32 	%f12, %f2, %f11, %f10;
	ld.shared.f32 	%f13, [%r12+28];
	fma.rn.f32 	%f14, %f5, %f13, %f12;
	fma.rn.f32 	%f15, %f8, %f3, %f14;
	fma.rn.f32 	%f16, %f11, %f6, %f15;
	fma.rn.f32 	%f17, %f13, %f9, %f16;
	ld.shared.f32 	%f18, [%r12+524];
	ld.shared.f32 	%f19, [%r12+512];
	fma.rn.f32 	%f20, %f19, %f18, %f17;
	ld.shared.f32 	%f21, [%r12+528];
	ld.shared.f32 	%f22, [%r12+516];
	fma.rn.f32 	%f23, %f22, %f21, %f20;
	ld.shared.f32 	%f24, [%r12+532];
	ld.shared.f32 	%f25, [%r12+520];
	fma.rn.f32 	%f26, %f25, %f24, %f23;
	ld.shared.f32 	%f27, [%r12+536];
	fma.rn.f32 	%f28, %f18, %f27, %f26;
	ld.shared.f32 	%f29, [%r12+540];
	fma.rn.f32 	%f30, %f21, %f29, %f28;
	fma.rn.f32 	%f31, %f24, %f19, %f30;
	fma.rn.f32 	%f32, %f27, %f22, %f31;
	fma.rn.f32 	%f33, %f29, %f25, %f32;
	mov.u32 	%r13, %ctaid.x;
	mad.lo.s32 	%r14, %r13, %r8, %r1;
	cvta.to.global.u64 	%rd6, %rd3;
	mul.wide.u32 	%rd7, %r14, 4;
	add.s64 	%rd8, %rd6, %rd7;
	st.global.f32 	[%rd8], %f33;
	ret;

}
"#;

#[test]
fn shared_loads_merged_into_a_vector_load_conflict_as_the_vector_load() {
    let p = common::profile_text(ROW_BLOCK, "rowblock.ptx", "rowblock", [1024, 1, 1], [256, 1, 1], &[]);
    let loads: Vec<_> = p.memory_accesses.iter().filter(|a| a.space == kernel_profile::Space::Shared && a.kind == AccessKind::Load).collect();
    // One request per LDS.128: 4 of them, four words a lane each.
    assert_eq!(loads.len(), 4, "{loads:#?}");
    assert!(loads.iter().all(|a| (a.vector_width, a.bytes_per_thread) == (4, 16)), "{loads:#?}");
    // Lanes 32 bytes apart: as scalar loads, lanes tc and tc + 4 share a bank (4-way over
    // the 16 distinct words); as 16-byte loads, served a quarter warp (8 lanes, 128 bytes)
    // at a time, two of a quarter's lanes share their banks: 2-way in each of 4 phases.
    assert!(loads.iter().all(|a| a.bank_conflict_ways == Some(2)), "{loads:#?}");
    let t = estimate(&p, &a100(8, 4096));
    // 8 wavefronts per LDS.128 (4 phases × 2), where its 4 scalar loads took 4 × 4 = 16;
    // the tile's 4 stores per thread take one each.
    let (loads, stores) = (4.0 * warps(&p), 4.0 * warps(&p));
    check(&t, "shared_requests", t.shared_requests, loads + stores, 1e-9);
    check(&t, "shared_wavefronts", t.shared_wavefronts, 8.0 * loads + stores, 1e-9);
    check(&t, "shared_store_wavefronts", t.shared_store_wavefronts, stores, 1e-9);
}

/// The hit shares that `l2_kept_share`'s documentation quotes, recomputed from the gpu-benches
/// gpu-l2-cache tables (github.com/te42kyfo/gpu-benches at commit 1c36d50; kept in
/// `../shared/data/measured`, never in this repository; skipped with a message when absent).
/// A row of F kB at B GB/s, past the L2's own bandwidth, is read as DRAM-bound: the share of
/// its re-reads that hit is `1 − D / B`, D the table's DRAM bandwidth (the median of its rows
/// past 4 × the nominal L2, where nothing is kept). The nominal L2 is 50 MB on both (NVIDIA
/// H100 Tensor Core GPU Architecture whitepaper, Table 3).
#[test]
fn the_quoted_l2_hit_shares_are_those_of_the_gpu_l2_cache_tables() {
    let dir = format!("{}/../../../shared/data/measured/gpu-benches/gpu-l2-cache", env!("CARGO_MANIFEST_DIR"));
    if !std::path::Path::new(&dir).is_dir() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: {dir} is absent (public gpu-benches result tables; see tests/fixtures/measured/README.md)");
        }
        return;
    }
    let l2_kib = 51_200.0;
    // (table, [(F / C, quoted hit share)]): traffic.rs's module documentation and the
    // constants L2_KEPT_HALF_AT and L2_KEPT_SHARPNESS.
    let quoted: [(&str, [(f64, f64); 4]); 2] = [
        ("h200.txt", [(0.94, 0.48), (1.13, 0.23), (1.36, 0.07), (1.49, 0.03)]),
        ("h100_pcie.txt", [(0.94, 0.42), (1.13, 0.11), (1.36, 0.02), (1.49, 0.01)]),
    ];
    for (file, points) in quoted {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap_or_else(|e| panic!("{file}: {e}"));
        // Rows: "512 kB   <data set> kB   <time>ms   <spread>%   <bandwidth> GB/s ...".
        let rows: Vec<(f64, f64)> = text
            .lines()
            .filter_map(|line| {
                let w: Vec<&str> = line.split_whitespace().collect();
                (w.len() >= 7 && w[1] == "kB" && w[3] == "kB" && w[7] == "GB/s").then(|| Some((w[2].parse().ok()?, w[6].parse().ok()?)))?
            })
            .collect();
        assert!(rows.len() > 40, "{file}: {} rows parsed", rows.len());
        let mut past: Vec<f64> = rows.iter().filter(|(kib, _)| *kib > 4.0 * l2_kib).map(|r| r.1).collect();
        past.sort_by(f64::total_cmp);
        let dram = past[past.len() / 2];
        for (at, share) in points {
            let (_, bw) = rows.iter().min_by(|a, b| (a.0 / l2_kib - at).abs().total_cmp(&(b.0 / l2_kib - at).abs())).copied().expect("rows");
            let hit = 1.0 - dram / bw;
            assert!((hit - share).abs() < 0.006, "{file} at {at} x L2: {bw} GB/s against {dram} GB/s is a hit share of {hit:.3}, the documentation says {share}");
        }
    }
}

#[test]
fn each_array_has_its_own_dram_share_and_each_load_its_access() {
    // The tiled product at n = 4096 (above): B comes from DRAM once per block row, as often
    // as the blocks request it (share 1); A once in all, a 1/(n/16) share of the n/16
    // times its panels are requested.
    let p = profile("matmul_tiled", "matmul_tiled", [256, 256, 1], [16, 16, 1], &[("param_3", 4096)]);
    let t = estimate(&p, &a100(8, 2048));
    let n = 4096.0;
    let shares: Vec<(String, f64)> = t.load_shares.iter().map(|(b, s)| (b.clone(), s.to_dram)).collect();
    assert_eq!(shares.len(), 2, "{shares:?}");
    let (mut a, mut b) = (shares[0].1, shares[1].1);
    if a > b {
        std::mem::swap(&mut a, &mut b);
    }
    assert!((a - 16.0 / n).abs() <= 0.05 * 16.0 / n, "{shares:?}");
    assert!(close(b, 1.0, 0.02), "{shares:?}");
    // Every global load of the dependence graph names its access, a global load.
    let mut linked = 0;
    for ins in p.blocks.iter().flat_map(|b| &b.instructions) {
        if let kernel_profile::InstrClass::Load(kernel_profile::Space::Global) = ins.class {
            let a = ins.access.and_then(|i| p.memory_accesses.get(i as usize)).expect("linked");
            assert_eq!((a.kind, a.space), (AccessKind::Load, kernel_profile::Space::Global));
            assert!(a.address.as_ref().is_some_and(|pat| t.load_shares.contains_key(&pat.base)));
            linked += 1;
        }
    }
    assert_eq!(linked, 2);
}

#[test]
fn only_the_threads_that_make_an_access_touch_its_footprint() {
    // vadd over 2^20 floats (above), its loads made by half of each block's threads (as a
    // simulated `if (row < m)` would report, `thread_reach`): half the arrays are read.
    let mut p = profile("vadd", "vadd", [4096, 1, 1], [256, 1, 1], &[("param_3", 1 << 20)]);
    let full = estimate(&p, &a100(8, 0));
    for a in p.memory_accesses.iter_mut().filter(|a| a.kind == AccessKind::Load) {
        a.thread_reach = Some(0.5);
    }
    let half = estimate(&p, &a100(8, 0));
    check(&half, "dram_read_bytes", half.dram_read_bytes, full.dram_read_bytes / 2.0, 1e-9);
    check(&half, "dram_write_bytes", half.dram_write_bytes, full.dram_write_bytes, 1e-9);
}

const STENCIL_MARCH: &str = include_str!("ptx/stencil_march.ptx");

/// The z-march of `tests/ptx/stencil_march.cu` on a 256³ grid of floats (64 MiB, more than
/// the A100's 40 MiB L2), 32 × 8 threads per block: 8 × 32 = 256 blocks, one wave.
fn march(kernel: &str) -> KernelProfile {
    let n = 256;
    common::profile_text(STENCIL_MARCH, "stencil_march.ptx", kernel, [n / 32, n / 8, 1], [32, 8, 1], &[("param_2", i64::from(n)), ("param_3", i64::from(n)), ("param_4", i64::from(n))])
}

/// nvcc unrolls the march by four and sets the pointers of the `+ nx` and `± nx·ny` loads up
/// before the loop from the column's byte offset, a register the loop then advances by four
/// planes itself: read there, it is its entry value, so every load steps four planes (1 MiB
/// at 256²), not eight.
#[test]
fn a_pointer_set_up_before_its_loop_steps_once_per_iteration() {
    let p = march("5march");
    let plane = 256 * 256 * 4;
    let steps: Vec<i64> = p
        .memory_accesses
        .iter()
        .filter(|a| a.kind == AccessKind::Load && a.space == kernel_profile::Space::Global)
        .filter_map(|a| a.address.as_ref()?.loops.first().map(|l| l.bytes_per_iteration))
        .collect();
    assert!(steps.len() >= 28, "{steps:?}");
    assert!(steps.iter().all(|s| *s == 4 * plane), "{steps:?}");
}

/// The unrolled body reads six planes per iteration (`z − 1` to `z + 4`) with each plane's
/// x and y neighbours: offsets in groups a plane apart. They fill the four planes each
/// iteration steps, so the grid's distinct input is the 64 MiB grid once, unrolled or not
/// (the groups read as two far-apart copies covered half of it). Each iteration reads
/// again two planes' 8 interior rows of 4 sectors that the one or two before it read (as
/// its `z + 1` neighbour, then its centre): those come from L1 (a block's three planes stay there while its whole column of planes does not
/// fit), the rest of what it requests goes on to the capacity rule. The halo rows and
/// columns its neighbours read in the same step come from L2: the whole grid is resident
/// at once, so the blocks run in step. DRAM reads the input about once.
#[test]
fn a_z_march_reads_its_input_once_from_dram_and_its_planes_again_from_l1() {
    let grid = 256.0 * 256.0 * 256.0 * 4.0;
    // (kernel, iterations of the loop that steps: 254 planes, by four when unrolled)
    for (kernel, trips) in [("5march", 63.0), ("march_nounroll", 254.0)] {
        let p = march(kernel);
        let t = estimate(&p, &a100(8, 0));
        // Each plane's interior 254 × 254 is read: at least that, at most 10 % over.
        let interior = 254.0 * 254.0 * 256.0 * 4.0;
        assert!(t.dram_read_bytes >= 0.95 * interior && t.dram_read_bytes <= 1.1 * grid, "{kernel}: {} B\n{t:#?}", t.dram_read_bytes);
        let from_l1 = (trips - 1.0) * 2.0 * 8.0 * 4.0 * 256.0;
        // The unrolled body also reloads six addresses after the stores that may alias them
        // (`in` is not `__restrict__`): each store waited for the first load's data, so the
        // reload's 4 sectors a warp come from L1 too.
        let reloads = if kernel == "5march" { trips * 6.0 * 4.0 * 8.0 * 256.0 } else { 0.0 };
        assert!(t.l1_load_sectors - t.l2_load_sectors >= 0.9 * (from_l1 + reloads), "{kernel}: {} sectors from L1 expected\n{t:#?}", from_l1 + reloads);
    }
}

const GATHER: &str = include_str!("ptx/gather.ptx");

/// A CSR product's `x[col[k]]` ranges over `x`, whatever `col` holds: with the 16 MiB the
/// host allocates for it (2^22 floats), the gathers are served by the L2, which holds it,
/// and DRAM reads `x` once, where without it every requested sector comes from DRAM. The
/// row walks `val[k]` and `col[k]` keep their own rule (each lane's run, re-read from L1)
/// whatever `val` and `col`'s allocations.
#[test]
fn a_gather_ranges_over_the_allocation_of_its_base_pointer() {
    let n: i64 = 1 << 22;
    let x = (n * 4) as u64;
    let nnz = (16 * n * 4) as u64;
    let launch = ([(n / 256) as u32, 1, 1], [256, 1, 1]);
    let args = [("param_5", n)];
    let plain = common::profile_allocated(GATHER, "gather.ptx", "spmv_csr", launch.0, launch.1, &args, &[]);
    let known = common::profile_allocated(GATHER, "gather.ptx", "spmv_csr", launch.0, launch.1, &args, &[("param_3", x), ("param_1", nnz), ("param_2", nnz)]);
    let spans = |p: &KernelProfile| p.memory_accesses.iter().filter(|a| a.kind == AccessKind::Load).map(|a| (a.data_span_bytes, a.walk.is_some())).collect::<Vec<_>>();
    // Every gather of `x` takes its allocation; the walks keep none.
    assert!(spans(&known).iter().any(|(s, _)| *s == Some(x)), "{:?}", spans(&known));
    assert!(spans(&known).iter().all(|(s, walk)| !walk || s.is_none()), "{:?}", spans(&known));
    assert!(spans(&plain).iter().all(|(s, _)| s.is_none()), "{:?}", spans(&plain));
    assert!(known.assumptions.iter().any(|a| a.contains("through `") && a.contains(&format!("allocation of {x} bytes"))), "{:#?}", known.assumptions);
    let (t_plain, t_known) = (estimate(&plain, &a100(8, 0)), estimate(&known, &a100(8, 0)));
    // The gathers' sectors: 16 per row (the default trip count for a loaded bound), one
    // request per warp and iteration, 32 sectors each.
    let gathered = (n / 32) as f64 * 16.0 * 32.0 * SECTOR_BYTES;
    assert!(t_plain.dram_read_bytes >= gathered, "{t_plain:#?}");
    assert!(t_known.dram_read_bytes <= t_plain.dram_read_bytes - gathered + 1.01 * x as f64, "{} against {}", t_known.dram_read_bytes, t_plain.dram_read_bytes);
}

/// A histogram's `atomicAdd(&bins[in[i]], 1)` over the 2048 counters the host allocates:
/// each lane is an operation in the L2 slice of its line, the 64 lines in parallel (half a
/// turn per request), where without it the contention is unknown (one per request).
#[test]
fn a_data_indexed_atomic_spreads_over_the_lines_of_its_allocated_table() {
    let n: i64 = 1 << 22;
    let launch = ([(n / 256) as u32, 1, 1], [256, 1, 1]);
    let known = common::profile_allocated(GATHER, "gather.ptx", "histo", launch.0, launch.1, &[("param_2", n)], &[("param_1", 8192)]);
    let atomic = known.memory_accesses.iter().find(|a| a.kind == AccessKind::Atomic).expect("the atomic");
    assert_eq!(atomic.data_span_bytes, Some(8192), "{atomic:?}");
    let t = estimate(&known, &a100(8, 0));
    // 2^22 lanes over 64 lines of 128 B.
    check(&t, "atomic_serialised_lanes", t.atomic_serialised_lanes, (n as f64) / 64.0, 0.01);
    // A scatter over a table of many words is not a chain on one address: none of its
    // operations take the architecture's integer rate (Params::integer_atomic_serial_ns).
    assert_eq!(atomic.integer_atomic, Some(true), "{atomic:?}");
    assert_eq!(t.atomic_serialised_integer_lanes, 0.0);
    let plain = common::profile_allocated(GATHER, "gather.ptx", "histo", launch.0, launch.1, &[("param_2", n)], &[]);
    let t = estimate(&plain, &a100(8, 0));
    check(&t, "atomic_serialised_lanes", t.atomic_serialised_lanes, (n as f64) / 32.0, 0.01);
}

/// The same histogram whose inputs all fall in one bin (the launch's `footprint` of 4
/// bytes, PMPP's histogram benchmark over a vector of zeros): its 32 lanes per request are
/// in turn on one address, integer operations at the architecture's integer rate.
#[test]
fn a_data_indexed_atomic_on_one_word_is_an_integer_chain() {
    let n: i64 = 1 << 22;
    let p = common::profile_stated(GATHER, "gather.ptx", "histo", (8, 0), [(n / 256) as u32, 1, 1], [256, 1, 1], &[("param_2", n)], &[], Some(4));
    let t = estimate(&p, &a100(8, 0));
    check(&t, "atomic_serialised_lanes", t.atomic_serialised_lanes, n as f64, 0.01);
    check(&t, "atomic_serialised_integer_lanes", t.atomic_serialised_integer_lanes, n as f64, 0.01);
}

/// A shared histogram whose inputs all fall in one bin (the launch's `footprint` of 4
/// bytes): from compute capability 8.0 on ptxas issues `atomicAdd(&priv[in[i]], 1)` as
/// `ATOMS.POPC.INC.32`, which takes a warp's lanes on one address as one operation; for
/// sm_75 as one `ATOMS.ADD` per lane (nvdisasm, ptxas 13.5), 32 in turn on one address.
/// Over 1024 counters the lanes spread: one at a time per word.
#[test]
fn shared_atomic_increments_serialise_on_one_address_before_ampere_only() {
    let n: i64 = 1 << 22;
    let estimate_on = |cc: (u32, u32), footprint: u64| {
        let p = common::profile_stated(GATHER, "gather.ptx", "histo_shared", cc, [(n / 256) as u32, 1, 1], [256, 1, 1], &[("param_2", n)], &[], Some(footprint));
        let atomic = p.memory_accesses.iter().find(|a| a.kind == AccessKind::Atomic && a.space == kernel_profile::Space::Shared).expect("the shared atomic");
        (atomic.warp_aggregated, estimate(&p, &a100(8, 1024)))
    };
    let (ampere_aggregated, ampere) = estimate_on((8, 6), 4);
    let (turing_aggregated, turing) = estimate_on((7, 5), 4);
    assert_eq!((ampere_aggregated, turing_aggregated), (Some(true), None));
    // One request per warp, n / 32 of them: Turing's take 31 more wavefronts each.
    check(&turing, "shared_wavefronts", turing.shared_wavefronts, ampere.shared_wavefronts + 31.0 * (n as f64) / 32.0, 0.01);
    let (_, spread) = estimate_on((7, 5), 4096);
    check(&spread, "shared_wavefronts", spread.shared_wavefronts, ampere.shared_wavefronts, 0.01);
}

/// Where L1 does not keep plain global loads (compute capability 3.x to 6.x), the naive
/// product with x over rows (`Md[j * N + k]`, tests/fixtures/cu/matmul_naive.cu) sends
/// every requested sector of Md to L2: each warp's re-reads of the sector it fetched an
/// iteration earlier (7 in 8: 4 of 32 bytes per step) and the block's 8 warps reading the
/// same 16 rows at the same step (per warp and step 16 sectors of Md, one of Nd, whose
/// two columns share it). Both are L2 hits, not passes over the block's data: on
/// caches like a GTX 980's (16 SMs, 8 blocks of 256 threads each, 2 MiB of L2), N = 2048
/// in 16 × 16 blocks, each wave of 128 blocks (one row of the grid) reads Md's 16 MiB once
/// from DRAM and Nd's 16 columns it shares; over 128 waves, 128 × 16 MiB of Md and Nd's
/// 16 MiB once: 2.16 GB, where counting those hits as passes gave 15.3 GB.
#[test]
fn before_volta_a_warps_and_its_blocks_rereads_of_one_step_are_l2_hits() {
    let maxwell = CacheConfig { sm_count: 16, l1_bytes_per_sm: 96 * 1024, l2_bytes: 2 * 1024 * 1024, resident_blocks_per_sm: 8, l1_caches_global_loads: false, l2_partitioned: false };
    let p = profile("matmul_naive", "_Z12matmul_naivePfS_S_i", [128, 128, 1], [16, 16, 1], &[("param_3", 2048)]);
    let t = estimate(&p, &maxwell);
    check(&t, "l2_load_sectors", t.l2_load_sectors, 2048.0_f64.powi(3) / 32.0 * (16.0 + 1.0), 0.01);
    check(&t, "dram_read_bytes", t.dram_read_bytes, 129.0 * 16.0 * MIB, 0.01);
}

const SOFTMAX_ROWS: &str = include_str!("ptx/softmax_rows.ptx");

/// A warp per row of `cols` floats (`tests/ptx/softmax_rows.cu`, `softmax_warp`), three
/// passes over it, 8 rows to a block of 256 threads.
fn softmax_warp(rows: u32, cols: i64) -> KernelProfile {
    common::profile_text(SOFTMAX_ROWS, "softmax_rows.ptx", "12softmax_warp", [rows / 8, 1, 1], [256, 1, 1], &[("param_2", i64::from(rows)), ("param_3", cols)])
}

/// A warp that goes over its own row three times re-reads it after the resident warps have
/// read theirs: the later passes come from L2 while the resident rows fit there and from
/// DRAM when they do not, however few warps share each sector (each reads its own row; the
/// rule for a block's re-reads counted only reads beyond one per warp of the block, which a
/// row per warp never makes, and read every row once).
#[test]
fn a_warp_per_row_rereads_its_row_from_dram_once_the_resident_rows_exceed_the_l2() {
    let row = 4096.0 * 4.0;
    // 4096 rows of 16 KiB: 64 MiB, all resident at once (512 blocks, 864 slots), 1.6 × the
    // 40 MiB L2, past what it keeps of a cyclic sweep (1 %). A block's 8 rows (128 KiB)
    // against its 38.4 KiB of L1 (192 KiB shared by the 5 blocks an SM gets of 512): 30 %
    // of the re-reads hit L1, the rest come from DRAM.
    let t = estimate(&softmax_warp(4096, 4096), &a100(8, 0));
    let footprint = 4096.0 * row;
    let l1_hit = 192.0 / 5.0 / 128.0;
    check(&t, "dram_read_bytes", t.dram_read_bytes, footprint * (1.0 + 2.0 * (1.0 - l1_hit)), 0.02);
    // 1024 rows: 16 MiB, which the L2 keeps between the passes: the row once.
    let t = estimate(&softmax_warp(1024, 4096), &a100(8, 0));
    check(&t, "dram_read_bytes", t.dram_read_bytes, 1024.0 * row, 0.02);
    // A block per row (`softmax_block`, 4096 blocks): its 16 KiB row fits its 23 KiB of L1
    // (184 KiB beside 8 blocks × 1 KiB of shared memory, over those 8), which serves the two
    // later passes.
    let p = common::profile_text(SOFTMAX_ROWS, "softmax_rows.ptx", "13softmax_block", [4096, 1, 1], [256, 1, 1], &[("param_2", 4096)]);
    let t = estimate(&p, &a100(8, 1024));
    check(&t, "dram_read_bytes", t.dram_read_bytes, 4096.0 * row, 0.02);
}
