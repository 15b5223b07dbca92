//! The occupancy calculator against NVIDIA's own header.
//!
//! Three vector sets live in `tests/golden/occupancy/` (repository root):
//! - `occupancy-golden.csv`: the 120 project reference vectors (CC 5.0-12.0, default
//!   calculator settings);
//! - `occupancy-generated.csv`: 2,400 random configurations over CC 5.0-12.1, including
//!   carveouts, cache configs, opt-in limits, barriers, partitioned caching, virtual
//!   resources and configurations that cannot launch; produced by
//!   `gpu-data/tools/occupancy_vectors.cpp` compiled against `cuda_occupancy.h` (CUDA 13.5);
//! - `blocksize-generated.csv`: 400 `cudaOccMaxPotentialOccupancyBlockSizeVariableSMem`
//!   results, with dynamic shared memory depending on the block size.
//!
//! The device properties come from `gpu-data/compute-capabilities.toml`, so these tests
//! also check that the data agrees with what the vectors were generated from.

use std::path::PathBuf;

use gpu_spec::occupancy::{
    self, CacheConfig, DeviceProps, DeviceState, FuncAttrs, PartitionedGc, ShmemLimit,
};
use gpu_spec::{ComputeCapability, Database};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/occupancy")
}

/// Rows of a CSV file as (header -> value) lookups.
fn read_csv(name: &str) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(golden_dir().join(name)).expect("golden file present");
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().expect("header").split(',').map(str::to_string).collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| header.iter().cloned().zip(l.split(',').map(str::to_string)).collect())
        .collect()
}

fn props(cc: &str, num_sms: u32) -> DeviceProps {
    let cc: ComputeCapability = cc.parse().expect("cc");
    let limits = Database::builtin().cc(cc).unwrap_or_else(|| panic!("no data for CC {cc}"));
    DeviceProps::from_limits(limits, num_sms)
}

fn n(row: &std::collections::HashMap<String, String>, key: &str) -> i64 {
    row[key].parse().unwrap_or_else(|_| panic!("bad {key}: {}", row[key]))
}

fn opt(v: i64) -> Option<u32> {
    if v == i32::MAX as i64 { None } else { Some(v as u32) }
}

#[test]
fn database_loads_without_errors() {
    let errors = Database::builtin().errors();
    assert!(errors.is_empty(), "{}", errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"));
}

#[test]
fn project_golden_vectors_match() {
    let rows = read_csv("occupancy-golden.csv");
    assert_eq!(rows.len(), 120);
    for row in &rows {
        let p = props(&row["cc"], 1);
        let attrs = FuncAttrs::new(n(row, "regs") as u32, n(row, "static_smem") as u32, &p);
        let occ = occupancy::calculate(&p, &attrs, &DeviceState::default(), n(row, "threads") as u32, n(row, "dyn_smem") as u32)
            .unwrap_or_else(|e| panic!("{row:?}: {e}"));
        let ctx = format!("{row:?} -> {occ:?}");
        assert_eq!(occ.blocks_per_sm as i64, n(row, "blocks_per_sm"), "{ctx}");
        assert_eq!(occ.warps_per_sm as i64, n(row, "warps_per_sm"), "{ctx}");
        assert_eq!(occ.limiters.bits() as i64, n(row, "limiters"), "{ctx}");
        let expected: f64 = row["occupancy"].parse().expect("occupancy");
        assert!((occ.occupancy - expected).abs() < 1e-6, "{ctx}");
    }
}

#[test]
fn generated_vectors_match_the_header() {
    let rows = read_csv("occupancy-generated.csv");
    assert_eq!(rows.len(), 2400);
    let mut zero = 0;
    for row in &rows {
        let p = props(&row["cc"], 100);
        let attrs = FuncAttrs {
            max_threads_per_block: 1024,
            num_regs: n(row, "regs") as u32,
            static_smem_bytes: n(row, "static_smem") as u32,
            partitioned_gc: match n(row, "pgc") {
                0 => PartitionedGc::Off,
                1 => PartitionedGc::On,
                _ => PartitionedGc::OnStrict,
            },
            shmem_limit: if n(row, "shmem_optin") == 1 { ShmemLimit::OptIn } else { ShmemLimit::Default },
            max_dynamic_smem_bytes: n(row, "max_dyn_smem") as u32,
            num_block_barriers: n(row, "barriers") as u32,
            virtual_resource_count: n(row, "virtual") as u32,
        };
        let state = DeviceState {
            cache_config: match n(row, "cache_config") {
                0 => CacheConfig::PreferNone,
                1 => CacheConfig::PreferShared,
                2 => CacheConfig::PreferL1,
                _ => CacheConfig::PreferEqual,
            },
            carveout_percent: match n(row, "carveout") {
                -1 => None,
                c => Some(c as u32),
            },
        };
        let res = occupancy::calculate(&p, &attrs, &state, n(row, "threads") as u32, n(row, "dyn_smem") as u32);
        let ctx = format!("{row:?} -> {res:?}");
        assert_eq!(n(row, "status"), 0, "the generator only emits successful calls: {ctx}");
        let occ = res.unwrap_or_else(|e| panic!("{ctx}: {e}"));
        assert_eq!(occ.blocks_per_sm as i64, n(row, "blocks_per_sm"), "{ctx}");
        assert_eq!(occ.limiters.bits() as i64, n(row, "limiters"), "{ctx}");
        assert_eq!(occ.limit_registers, opt(n(row, "limit_regs")), "{ctx}");
        assert_eq!(occ.limit_shared_memory, opt(n(row, "limit_smem")), "{ctx}");
        assert_eq!(occ.limit_warps as i64, n(row, "limit_warps"), "{ctx}");
        assert_eq!(occ.limit_blocks as i64, n(row, "limit_blocks"), "{ctx}");
        assert_eq!(occ.limit_barriers, opt(n(row, "limit_barriers")), "{ctx}");
        assert_eq!(occ.allocated_regs_per_block as i64, n(row, "alloc_regs"), "{ctx}");
        assert_eq!(occ.allocated_smem_per_block as i64, n(row, "alloc_smem"), "{ctx}");
        if occ.blocks_per_sm == 0 {
            zero += 1;
            assert!(occ.reason.is_some(), "{ctx}");
        } else {
            assert!(occ.reason.is_none(), "{ctx}");
        }
    }
    // The set must exercise configurations that cannot launch.
    assert!(zero > 200, "only {zero} zero-block vectors");
}

#[test]
fn generated_best_block_sizes_match_the_header() {
    let rows = read_csv("blocksize-generated.csv");
    assert_eq!(rows.len(), 400);
    for row in &rows {
        let p = props(&row["cc"], 100);
        let mut attrs = FuncAttrs::new(n(row, "regs") as u32, n(row, "static_smem") as u32, &p);
        attrs.num_block_barriers = n(row, "barriers") as u32;
        let (dyn_smem, per_thread) = (n(row, "dyn_smem") as u32, n(row, "smem_per_thread") as u32);
        let best = occupancy::max_potential_block_size(&p, &attrs, &DeviceState::default(), |bs| dyn_smem + per_thread * bs)
            .unwrap_or_else(|e| panic!("{row:?}: {e}"));
        let ctx = format!("{row:?} -> {best:?}");
        assert_eq!(best.block_size as i64, n(row, "block_size"), "{ctx}");
        assert_eq!(best.min_grid_size as i64, n(row, "min_grid_size"), "{ctx}");
    }
}
