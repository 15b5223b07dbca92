//! Compute capabilities and their occupancy limits.
//!
//! A compute capability (CC) fixes the per-SM resource limits that NVIDIA's occupancy
//! calculator reads (`cudaOccDeviceProp` plus the per-architecture tables inside
//! `cuda_occupancy.h`). The numbers live in `gpu-data/compute-capabilities.toml`, each
//! with its source; this module holds their typed form.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// A compute capability such as 8.6 or 12.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl ComputeCapability {
    pub const fn new(major: u32, minor: u32) -> ComputeCapability {
        ComputeCapability { major, minor }
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The error of [`ComputeCapability::from_str`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadComputeCapability(pub String);

impl fmt::Display for BadComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not a compute capability (expected MAJOR.MINOR, e.g. 8.6)", self.0)
    }
}

impl std::error::Error for BadComputeCapability {}

impl FromStr for ComputeCapability {
    type Err = BadComputeCapability;

    /// Parses `8.6`, `sm_86`, `sm_100`, `compute_90` or `90`/`100` (the last two digits'
    /// split follows NVIDIA's `sm_XY` naming: the last digit is the minor version).
    fn from_str(s: &str) -> Result<ComputeCapability, BadComputeCapability> {
        let bad = || BadComputeCapability(s.to_string());
        let t = s.trim();
        if let Some((major, minor)) = t.split_once('.') {
            let major = major.parse().map_err(|_| bad())?;
            let minor = minor.parse().map_err(|_| bad())?;
            return Ok(ComputeCapability { major, minor });
        }
        let digits = t
            .strip_prefix("sm_")
            .or_else(|| t.strip_prefix("compute_"))
            .unwrap_or(t)
            .trim_end_matches(['a', 'f']);
        if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let (major, minor) = digits.split_at(digits.len() - 1);
        Ok(ComputeCapability { major: major.parse().map_err(|_| bad())?, minor: minor.parse().map_err(|_| bad())? })
    }
}

impl Serialize for ComputeCapability {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Per-compute-capability occupancy limits (the CUDA Programming Guide's "Technical
/// Specifications per Compute Capability" table and the constants of `cuda_occupancy.h`).
///
/// Byte counts are the exact values the driver reports in `cudaDeviceProp` (e.g. 167,936
/// bytes of shared memory per SM on CC 8.0), so that the occupancy calculation matches
/// NVIDIA's to the block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CcLimits {
    pub cc: ComputeCapability,
    /// Architecture family, e.g. "Ampere".
    pub family: String,
    pub warp_size: u32,
    pub max_threads_per_block: u32,
    pub max_threads_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    /// 32-bit registers per SM (`regsPerMultiprocessor`).
    pub regs_per_sm: u32,
    /// Registers one block may use (`regsPerBlock`).
    pub max_regs_per_block: u32,
    pub max_regs_per_thread: u32,
    /// Register allocation unit: registers per warp are rounded up to a multiple of this
    /// (CC >= 2; on CC 1.x the unit applies per block, see `reg_alloc_per_block`).
    pub reg_alloc_unit: u32,
    /// True on CC 1.x, where registers are allocated per block rather than per warp.
    pub reg_alloc_per_block: bool,
    /// Warps per block are rounded up to a multiple of this before allocation (2 on CC 1.x,
    /// 1 afterwards).
    pub warp_alloc_granularity: u32,
    /// Register-file sub-partitions per SM (the spreadsheet's "warp allocation granularity").
    pub sub_partitions: u32,
    /// Maximum shared memory per SM in bytes (`sharedMemPerMultiprocessor`).
    pub smem_per_sm_bytes: u32,
    /// Shared memory per block without opt-in (`sharedMemPerBlock`).
    pub smem_per_block_bytes: u32,
    /// Shared memory per block with opt-in (`sharedMemPerBlockOptin`).
    pub smem_per_block_optin_bytes: u32,
    /// Shared memory allocation granularity in bytes.
    pub smem_alloc_unit_bytes: u32,
    /// Shared memory the driver reserves per block (`reservedSharedMemPerBlock`, CC >= 8).
    pub reserved_smem_per_block_bytes: u32,
    /// Supported shared-memory carveouts in KiB (CC >= 7), ascending; empty before Volta.
    pub smem_carveouts_kib: Vec<u32>,
    /// Named hardware barriers a block may use (16 on every CC >= 2).
    pub max_barriers_per_block: u32,
    /// Block-barrier slots per resident-block slot: an SM has this many times
    /// `max_blocks_per_sm` block barriers (`cudaOccMaxBlocksPerSMBlockBarrierLimit`: 2 on
    /// CC 5-7, 8.0, 9.0, 10.0, 11.x other than 11.0; 1 on the other 8.x, 10.x, 11.0, 12.x).
    pub barrier_slots_per_block: u32,
    /// Whether the CC supports partitioned global caching (5.2, 5.3, 6.1, 6.2).
    pub partitioned_gc: bool,
    /// Virtual resources per SM (CC 10-12 in the CUDA 13 header), 0 when not applicable.
    pub virtual_resources_per_sm: u32,
}
