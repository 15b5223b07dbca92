//! The static profile of Kernel Tuner's tiled 2-D convolution (`convolution_kernel`, MIT
//! licence; AutoTuningAssociation/benchmark_hub at 8eeb99e7), compiled by the real nvcc
//! from the copy kept outside the repository (`../shared/data/measured/kernel-tuner`,
//! whose README describes the kernel and the measurements). Its tile is loaded by loops
//! that start at the thread index and stride by the block size; the profile must count
//! them exactly, classify their accesses, and give a DRAM estimate close to the distinct
//! input and output.
//!
//! Skipped, with a note, when `../shared` or the project's toolchain (`.cuda/`) is absent
//! (`WARPSIGHT_REQUIRE_CUDA` makes the missing toolchain an error). `WARPSIGHT_SHARED_DIR`
//! names another place for `shared` (a worktree that is not beside it).

use std::path::{Path, PathBuf};
use std::process::Command;

use kernel_profile::traffic::{CacheConfig, estimate};
use kernel_profile::{AccessClass, InstrClass, KernelProfile, Space};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The kernel source and nvcc, or `None` (with a note on stderr, which the test harness
/// shows) when either is missing.
#[allow(clippy::print_stderr)]
fn inputs() -> Option<(PathBuf, PathBuf)> {
    let shared = std::env::var_os("WARPSIGHT_SHARED_DIR").map_or_else(|| root().join("../shared"), PathBuf::from);
    let source = shared.join("data/measured/kernel-tuner/convolution.cu");
    if !source.exists() {
        eprintln!("skipped: {} is absent (the shared measurements live beside the repository)", source.display());
        return None;
    }
    let nvcc = root().join(".cuda/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc");
    if !nvcc.exists() {
        assert!(std::env::var_os("WARPSIGHT_REQUIRE_CUDA").is_none(), "WARPSIGHT_REQUIRE_CUDA is set but {} is missing", nvcc.display());
        eprintln!("skipped: {} is absent (scripts/test-all.sh installs the toolchain)", nvcc.display());
        return None;
    }
    Some((source, nvcc))
}

/// One configuration: Kernel Tuner's defines and the launch it derives (README: block =
/// (block_size_x, block_size_y), grid = 4096 / (block size × tile size) per dimension).
struct Config {
    block: [u32; 2],
    tile: [u32; 2],
    read_only: u32,
    use_padding: u32,
}

impl Config {
    fn grid(&self) -> [u32; 2] {
        [4096u32.div_ceil(self.block[0] * self.tile[0]), 4096u32.div_ceil(self.block[1] * self.tile[1])]
    }
}

fn profile(source: &Path, nvcc: &Path, c: &Config) -> KernelProfile {
    let [gx, gy] = c.grid();
    let defines = [
        format!("block_size_x={}", c.block[0]),
        format!("block_size_y={}", c.block[1]),
        "filter_height=15".into(),
        "filter_width=15".into(),
        format!("read_only={}", c.read_only),
        format!("tile_size_x={}", c.tile[0]),
        format!("tile_size_y={}", c.tile[1]),
        format!("use_padding={}", c.use_padding),
    ];
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warpsight"));
    cmd.current_dir(root())
        .arg("profile")
        .arg(source)
        .args(["--kernel", "convolution_kernel", "--gpu", "rtx-3090", "--arch", "sm_86"])
        .args(["--grid", &format!("{gx}x{gy}"), "--block", &format!("{}x{}", c.block[0], c.block[1])])
        .arg("--no-cache")
        .arg("--nvcc")
        .arg(nvcc);
    for d in &defines {
        cmd.arg("-D").arg(d);
    }
    let out = cmd.output().expect("run warpsight");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// DRAM bytes (read + written) of the grid on the RTX 3090 of the GPU database, with the
/// residency NVIDIA's occupancy calculation gives.
fn dram_bytes(p: &KernelProfile) -> f64 {
    let gpu = gpu_spec::Database::builtin().gpu("rtx-3090").expect("rtx-3090 in the database");
    let occ = gpu
        .occupancy(p.launch.threads_per_block() as u32, p.resources.registers_per_thread, p.resources.static_smem_bytes, 0)
        .expect("occupancy");
    let caches = CacheConfig {
        sm_count: gpu.sm_count,
        l1_bytes_per_sm: u64::from(gpu.l1_shared_bytes_per_sm),
        l2_bytes: gpu.l2_bytes,
        resident_blocks_per_sm: occ.blocks_per_sm,
        l1_caches_global_loads: true,
        l2_partitioned: false,
    };
    let t = estimate(p, &caches);
    t.dram_read_bytes + t.dram_write_bytes
}

/// The distinct footprint: the 4110² input (the 4096² image and its border of 14) and the
/// 4096² output, in floats.
const FOOTPRINT_BYTES: f64 = (4110.0 * 4110.0 + 4096.0 * 4096.0) * 4.0;

/// `rows`: the rows of the image a warp's request spans (32 / block_size_x).
fn check_common(p: &KernelProfile, outputs_per_thread: f64, rows: f64) {
    // Every access that runs has an address the analysis understands; global loads and
    // stores read consecutive floats along threadIdx.x, at most one sector more per row
    // than the minimum (a row of the 4110-float input starts off the 32-byte grid);
    // shared accesses are free of bank conflicts.
    for a in p.memory_accesses.iter().filter(|a| a.executions > 0.0 && a.space != Space::Const) {
        assert_ne!(a.class, AccessClass::Irregular, "{a:?}");
        if a.space == Space::Global {
            let least = 32.0 * 4.0 / 32.0;
            assert_eq!(a.stride_bytes, Some(4), "{a:?}");
            assert!(a.transactions_per_request <= least + rows, "{a:?}");
        }
        if a.space == Space::Shared {
            assert_eq!(a.bank_conflict_ways, Some(1), "{a:?}");
        }
    }
    assert!(!p.assumptions.iter().any(|a| a.contains("assumed 16") || a.contains("data-dependent") || a.contains("first path")), "{:?}", p.assumptions);
    // The fully unrolled 15×15 filter: 225 FMAs per output, the filter taps as
    // constant-bank operands (no load issued).
    let fp32 = p.counts.dynamic.get(&InstrClass::Fp32).copied().unwrap_or(0.0);
    assert_eq!(fp32 / outputs_per_thread, 225.0, "{:?}", p.counts.dynamic);
    assert_eq!(p.counts.dynamic.get(&InstrClass::Load(Space::Const)), None);
    assert_eq!(p.memory_accesses.iter().filter(|a| a.space == Space::Const && a.constant_operand == Some(true)).count(), 225);
    let dram = dram_bytes(p);
    assert!((dram / FOOTPRINT_BYTES - 1.0).abs() <= 0.2, "DRAM {dram} B against the {FOOTPRINT_BYTES} B footprint");
}

#[test]
fn tile_loading_loops_of_the_kernel_tuner_convolution_count_exactly() {
    let Some((source, nvcc)) = inputs() else { return };

    // Block 64×2, tile 1×8 (the fastest configuration on the RTX 3090): a 30×78 tile.
    // Rows i = ty, ty + 2, …: 15 for both rows of threads. Columns j = tx, tx + 64: 2 for
    // tx < 14, else 1; nvcc turns that loop into remainder copies before an unrolled-by-4
    // loop that no thread reaches (its trip count is 0). 8 outputs per thread; the shared
    // reads are rows ty + 2·yi + i (yi < 8, i < 15): 29 rows × 15 columns = 435 loads,
    // each in the PTX once.
    let p = profile(&source, &nvcc, &Config { block: [64, 2], tile: [1, 8], read_only: 0, use_padding: 0 });
    let trips: Vec<Option<f64>> = p.loops.iter().map(|l| l.trip_count).collect();
    assert_eq!(trips, vec![Some(15.0), Some(0.0)], "{:?}", p.assumptions);
    assert!(p.loops[0].trip_count_expr.as_deref().is_some_and(|e| e.contains("%tid.y")), "{:?}", p.loops);
    assert_eq!(p.counts.dynamic.get(&InstrClass::Load(Space::Shared)), Some(&435.0));
    // Tile loads per warp: 15 rows × (copy 1, and copy 2 for the warp holding tx < 14:
    // one of the two warps of a row) = 15 × 1.5.
    assert_eq!(p.counts.dynamic.get(&InstrClass::Load(Space::Global)), Some(&22.5));
    check_common(&p, 8.0, 1.0);

    // Block 16×8, tile 4×2, padded, through the read-only cache: a 30×78 tile (80 wide
    // with 2 padding columns). Rows: 4 for ty < 6, else 3 (3.75 per thread). Columns j =
    // tx, tx + 16, …: 5 for tx < 14, else 4, so every thread runs the unrolled-by-4 loop
    // once after 1 or 0 remainder copies. A warp is two rows of 16 lanes; with the 80-float
    // pitch they fall in different banks.
    let p = profile(&source, &nvcc, &Config { block: [16, 8], tile: [4, 2], read_only: 1, use_padding: 1 });
    let trips: Vec<Option<f64>> = p.loops.iter().map(|l| l.trip_count).collect();
    assert_eq!(trips, vec![Some(3.75), Some(1.0)], "{:?}", p.assumptions);
    check_common(&p, 8.0, 2.0);
}
