//! The roofline floor on real nvcc output: it is the DRAM traffic of every executed access
//! (issue 13: it used to count each access once, so a looping kernel's floor was a small
//! fraction of its traffic and a kernel with no arithmetic could be called compute-bound;
//! and vadd's floor counted two of its three arrays).

mod common;

use kernel_profile::KernelProfile;
use perf_models::roofline::{self, FloorConfig};
use perf_models::{Bound, GpuParams};

const MIB: f64 = 1024.0 * 1024.0;

fn profile(ptx: &str, kernel: &str, grid: [u32; 3], block: [u32; 3], args: &[(&str, i64)]) -> KernelProfile {
    let text = std::fs::read_to_string(common::workspace_root().join(ptx)).expect("fixture");
    common::profiles::built(&text, kernel, "a100-sxm4-80gb", (8, 0), grid, block, args)
}

fn floor(p: &KernelProfile) -> perf_models::Prediction {
    roofline::predict(p, &GpuParams::a100_sxm4_80gb(), &FloorConfig { l2_reuse_discount: 0.0 }).expect("applies")
}

#[test]
fn a_grid_stride_loop_moves_every_element_not_just_the_first_iteration() {
    // out[i] = in[i]·s over n = 2^24 floats with 256 × 256 threads: 256 iterations per
    // thread, 64 MiB read and 64 MiB written. The old floor counted one iteration (1/256 of
    // it) and called the kernel compute-bound at one multiply per element.
    let p = profile("tests/fixtures/ptx/sm_80/grid_stride.ptx", "grid_stride", [256, 1, 1], [256, 1, 1], &[("param_3", 1 << 24)]);
    let f = floor(&p);
    let bytes = f.breakdown["floor_bytes"];
    assert!((bytes - 128.0 * MIB).abs() < 0.01 * 128.0 * MIB, "{bytes}");
    assert_eq!(f.bound, Bound::Memory, "{}", f.explanation);
    assert!((f.time_us - 128.0 * MIB / 2039e9 * 1e6).abs() < 0.01 * f.time_us, "{}", f.time_us);
}

#[test]
fn a_naive_transpose_with_no_arithmetic_is_memory_bound() {
    let p = profile("tests/fixtures/ptx/sm_80/traffic.ptx", "transpose_plain", [128, 512, 1], [32, 8, 1], &[("param_2", 4096)]);
    let f = floor(&p);
    assert_eq!(f.bound, Bound::Memory);
    let bytes = f.breakdown["floor_bytes"];
    assert!((bytes - 128.0 * MIB).abs() < 0.01 * 128.0 * MIB, "{bytes}");
    // The strided stores request 8× the sectors they must write.
    assert!(f.breakdown["requested_bytes"] > 4.0 * bytes, "{:?}", f.breakdown);
}

#[test]
fn vadd_floor_counts_all_three_arrays() {
    // examples/vadd: 2^24 floats each of a, b (read) and c (written): 192 MiB, more than
    // the A100's 40 MiB L2, so every byte crosses the DRAM interface.
    let p = profile("examples/vadd.ptx", "vadd", [65536, 1, 1], [256, 1, 1], &[("param_3", 1 << 24)]);
    let f = floor(&p);
    assert_eq!(f.breakdown["floor_bytes"], 192.0 * MIB);
    assert_eq!(f.breakdown["dram_read_bytes"], 128.0 * MIB);
}

#[test]
fn arrays_that_fit_in_l2_stay_there_between_launches() {
    // 2^20 floats each: 12 MiB in all fit the 40 MiB L2. A repeated launch finds them
    // there (gpu-benches' small-kernel sweep runs at 2.6 TB/s on an A100 80 GB with 21 MB
    // of arrays, above the 2.04 TB/s DRAM peak), so the floor counts no DRAM bytes; the
    // cold launch's 8 MiB read stays in the breakdown.
    let p = profile("examples/vadd.ptx", "vadd", [4096, 1, 1], [256, 1, 1], &[("param_3", 1 << 20)]);
    let f = floor(&p);
    assert_eq!(f.breakdown["floor_bytes"], 0.0);
    assert_eq!(f.breakdown["dram_read_bytes"], 8.0 * MIB);
    assert_eq!(f.bound, Bound::Compute, "{}", f.explanation);
    // The explanation says why the memory term is 0 rather than "no memory traffic".
    assert!(f.explanation.contains("the 12.6 MB it reads and writes fit in the 41.9 MB L2, where repeated launches find them; a first launch moves them through DRAM in 6.17 µs"), "{}", f.explanation);
}

/// With the database's A100 (its L2 bandwidth, gpu-data `l2_bytes_per_clk_per_sm`: 35.5
/// bytes per clock and SM, 5.4 TB/s), the same 12.6 MB that repeated launches find in L2
/// still cross between the L2 and the SMs: the floor is that, not the arithmetic alone
/// (which made a copy's or a transpose's floor 0 µs on a GPU whose L2 holds its arrays).
#[test]
fn data_that_stay_in_l2_still_cross_it() {
    let g = gpu_spec::Database::builtin().gpu("a100-sxm4-80gb").expect("database GPU").clone();
    let params = GpuParams::from_spec(&g);
    let p = profile("examples/vadd.ptx", "vadd", [4096, 1, 1], [256, 1, 1], &[("param_3", 1 << 20)]);
    let f = roofline::predict(&p, &params, &FloorConfig { l2_reuse_discount: 0.0 }).expect("applies");
    assert_eq!(f.breakdown["floor_bytes"], 0.0);
    let l2_bw = g.l2_bytes_per_clk_per_sm * f64::from(g.sm_count) * params.clock_hz();
    let want = 12.0 * MIB / l2_bw * 1e6;
    assert!((f.breakdown["l2_us"] - want).abs() < 1e-6 * want, "{:?}", f.breakdown);
    assert!((f.time_us - want).abs() < 1e-6 * want, "{} against {want}", f.time_us);
    assert_eq!(f.bound, Bound::Memory, "{}", f.explanation);
    assert!(f.explanation.contains("the 12.6 MB it reads and writes fit in the 41.9 MB L2, where repeated launches find them, and moving them between the L2 and the SMs at"), "{}", f.explanation);
    // The figures docs/models/roofline.md quotes.
    assert!(f.explanation.contains("at 5406 GB/s takes 2.33 µs, more than its arithmetic (0.11 µs)"), "{}", f.explanation);
    // Where no launch finds the data in L2 (192 MiB of arrays), DRAM alone is the floor.
    let big = profile("examples/vadd.ptx", "vadd", [65536, 1, 1], [256, 1, 1], &[("param_3", 1 << 24)]);
    let f = roofline::predict(&big, &params, &FloorConfig { l2_reuse_discount: 0.0 }).expect("applies");
    assert!(!f.breakdown.contains_key("l2_us"), "{:?}", f.breakdown);
    assert!((f.time_us - 192.0 * MIB / (g.mem_bandwidth_gbs * 1e9) * 1e6).abs() < 0.01 * f.time_us, "{}", f.time_us);
}

#[test]
fn the_shared_memory_reduction_floor_is_its_input() {
    // examples/reduce.cu: reduce_shared over n = 2^24 floats, 65536 blocks of 256: 64 MiB
    // read from DRAM (plus one float per block written): about 33 µs at 2039 GB/s.
    let p = profile("examples/reduce.ptx", "reduce_shared", [65536, 1, 1], [256, 1, 1], &[("param_2", 1 << 24)]);
    let f = floor(&p);
    assert!((f.breakdown["dram_read_bytes"] - 64.0 * MIB).abs() < 0.01 * 64.0 * MIB, "{:?}", f.breakdown);
    assert_eq!(f.bound, Bound::Memory);
    assert!((f.time_us - 33.0).abs() < 1.0, "{}", f.time_us);
}

/// docs/models/roofline.md's example: `examples/transpose.cu` (4096 × 4096 floats, 64 MiB
/// each way) on an RTX PRO 6000 Blackwell, whose 128 MiB L2 holds both matrices: the floor
/// was 0 µs ("takes 0.00 µs"), and is the 134.2 MB crossing its L2 at about 12.5 TB/s.
#[test]
fn a_transpose_that_fits_a_blackwell_l2_has_a_floor() {
    let g = gpu_spec::Database::builtin().gpu("rtx-pro-6000-blackwell").expect("database GPU").clone();
    let params = GpuParams::from_spec(&g);
    let text = std::fs::read_to_string(common::workspace_root().join("examples/transpose.ptx")).expect("fixture");
    let p = common::profiles::built(&text, "transpose_naive", "rtx-pro-6000-blackwell", (12, 0), [128, 128, 1], [32, 32, 1], &[("param_2", 4096)]);
    let f = roofline::predict(&p, &params, &FloorConfig { l2_reuse_discount: 0.0 }).expect("applies");
    assert_eq!(f.breakdown["floor_bytes"], 0.0, "{:?}", f.breakdown);
    assert_eq!(f.bound, Bound::Memory, "{}", f.explanation);
    assert_eq!(format!("{:.1}", f.time_us), "10.7", "{}", f.explanation);
    assert!(f.explanation.contains("the 134.2 MB it reads and writes fit in the 134.2 MB L2") && f.explanation.contains("at 12499 GB/s"), "{}", f.explanation);
}
