//! NVIDIA's occupancy calculator, reimplemented step for step.
//!
//! The algorithm is the one of `cuda_occupancy.h` as shipped with CUDA 12.9 and 13.5
//! (`cudaOccMaxActiveBlocksPerMultiprocessor`, `cudaOccMaxPotentialOccupancyBlockSize`,
//! `cudaOccAvailableDynamicSMemPerBlock`), checked against vectors generated from the
//! header itself (`tests/golden/occupancy/`). The header knows CC 3.0 to 12.x; for Fermi
//! (CC 2.x) we
//! follow the CUDA 8-era copy of the same header (register granule of 64, or 128 for 21,
//! 22, 29, 30, 37, 38, 45 and 46 registers; two sub-partitions; 128-byte shared-memory
//! unit; 16/48 KB L1 split), and for CC 1.x the CUDA Occupancy Calculator spreadsheet
//! (per-block register allocation, warps rounded to pairs).
//!
//! Numbers come from the data ([`DeviceProps`] is built from a [`CcLimits`] entry of
//! `gpu-data/compute-capabilities.toml`); the *rules* (which CC snaps carveouts, which
//! has the barrier limit, the GP100 re-check) are branches on the compute capability,
//! exactly where the header branches.
//!
//! Why reimplement instead of linking the header: the header is NVIDIA's (EULA) and the
//! tool runs without CUDA installed; the calculation is small and fully determined.

use std::fmt;

use serde::Serialize;

use crate::cc::{CcLimits, ComputeCapability};

/// The header's "unlimited" (`INT_MAX`): used for limits that do not apply, so that the
/// limiting-factor comparison behaves exactly as in C.
const UNLIMITED: i64 = i32::MAX as i64;

/// Device properties, the analogue of `cudaOccDeviceProp` plus the per-architecture
/// constants the header keeps in its own switch tables.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceProps {
    pub cc: ComputeCapability,
    pub max_threads_per_block: u32,
    pub max_threads_per_sm: u32,
    pub regs_per_block: u32,
    pub regs_per_sm: u32,
    pub warp_size: u32,
    pub smem_per_block: u32,
    pub smem_per_sm: u32,
    pub num_sms: u32,
    pub smem_per_block_optin: u32,
    pub reserved_smem_per_block: u32,
    pub max_blocks_per_sm: u32,
    pub reg_alloc_unit: u32,
    pub reg_alloc_per_block: bool,
    pub warp_alloc_granularity: u32,
    pub max_regs_per_thread: u32,
    pub sub_partitions: u32,
    pub smem_alloc_unit: u32,
    pub smem_carveouts_kib: Vec<u32>,
    pub partitioned_gc_supported: bool,
    pub barrier_slots_per_block: u32,
    pub virtual_resources_per_sm: u32,
}

impl DeviceProps {
    /// Properties of a device of compute capability `limits.cc` with `num_sms` SMs.
    pub fn from_limits(limits: &CcLimits, num_sms: u32) -> DeviceProps {
        DeviceProps {
            cc: limits.cc,
            max_threads_per_block: limits.max_threads_per_block,
            max_threads_per_sm: limits.max_threads_per_sm,
            regs_per_block: limits.max_regs_per_block,
            regs_per_sm: limits.regs_per_sm,
            warp_size: limits.warp_size,
            smem_per_block: limits.smem_per_block_bytes,
            smem_per_sm: limits.smem_per_sm_bytes,
            num_sms: num_sms.max(1),
            smem_per_block_optin: limits.smem_per_block_optin_bytes,
            reserved_smem_per_block: limits.reserved_smem_per_block_bytes,
            max_blocks_per_sm: limits.max_blocks_per_sm,
            reg_alloc_unit: limits.reg_alloc_unit,
            reg_alloc_per_block: limits.reg_alloc_per_block,
            warp_alloc_granularity: limits.warp_alloc_granularity.max(1),
            max_regs_per_thread: limits.max_regs_per_thread,
            sub_partitions: limits.sub_partitions.max(1),
            smem_alloc_unit: limits.smem_alloc_unit_bytes.max(1),
            smem_carveouts_kib: limits.smem_carveouts_kib.clone(),
            partitioned_gc_supported: limits.partitioned_gc,
            barrier_slots_per_block: limits.barrier_slots_per_block,
            virtual_resources_per_sm: limits.virtual_resources_per_sm,
        }
    }
}

/// Partitioned global caching (CC 5.2, 5.3, 6.1, 6.2; `cudaOccPartitionedGCConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitionedGc {
    #[default]
    Off,
    /// Prefer caching; turned off when a block would not fit in half an SM.
    On,
    /// Force caching, even when that costs occupancy.
    OnStrict,
}

/// Which per-block shared-memory limit applies (`cudaOccFuncShmemConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShmemLimit {
    /// `sharedMemPerBlock` (48 KB).
    Default,
    /// `sharedMemPerBlockOptin` when the kernel needs more than the default (CC >= 7).
    #[default]
    OptIn,
}

/// Function attributes, the analogue of `cudaOccFuncAttributes`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FuncAttrs {
    /// Maximum block size the kernel accepts (`__launch_bounds__`), or the device's.
    pub max_threads_per_block: u32,
    /// Registers per thread; 0 means "uses no registers" (unlimited by registers).
    pub num_regs: u32,
    /// Static shared memory in bytes.
    pub static_smem_bytes: u32,
    pub partitioned_gc: PartitionedGc,
    pub shmem_limit: ShmemLimit,
    /// Maximum dynamic shared memory the kernel is allowed (`cudaFuncAttributeMax
    /// DynamicSharedMemorySize`); checked only when `shmem_limit` is `OptIn`.
    pub max_dynamic_smem_bytes: u32,
    /// Block barriers used; the runtime's default attributes set 1.
    pub num_block_barriers: u32,
    /// Virtual resources used (CC 10-12, CUDA 13); 0 = none.
    pub virtual_resource_count: u32,
}

impl FuncAttrs {
    /// The attributes `cudaOccFuncAttributes(cudaFuncAttributes)` builds for a kernel with
    /// `num_regs` registers and `static_smem_bytes` of static shared memory, with the
    /// maximum dynamic shared memory set to what opt-in allows (the golden vectors'
    /// convention): opt-in limit, one block barrier, partitioned caching off.
    pub fn new(num_regs: u32, static_smem_bytes: u32, props: &DeviceProps) -> FuncAttrs {
        let optin = props.smem_per_block_optin.max(props.smem_per_block);
        FuncAttrs {
            max_threads_per_block: props.max_threads_per_block,
            num_regs,
            static_smem_bytes,
            partitioned_gc: PartitionedGc::Off,
            shmem_limit: ShmemLimit::OptIn,
            max_dynamic_smem_bytes: optin.saturating_sub(static_smem_bytes),
            num_block_barriers: 1,
            virtual_resource_count: 0,
        }
    }
}

/// Cache preference (`cudaOccCacheConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheConfig {
    #[default]
    PreferNone,
    PreferShared,
    PreferL1,
    PreferEqual,
}

/// Device state (`cudaOccDeviceState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DeviceState {
    pub cache_config: CacheConfig,
    /// Shared-memory carveout preference in percent (0-100); `None` = default.
    pub carveout_percent: Option<u32>,
}

bitflags::bitflags! {
    /// A set of limiting factors (`cudaOccLimitingFactor` bits).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
    pub struct Limiters: u8 {
        const WARPS = 0x01;
        const REGISTERS = 0x02;
        const SHARED_MEMORY = 0x04;
        const BLOCKS = 0x08;
        const BARRIERS = 0x10;
        const VIRTUAL_RESOURCES = 0x20;
    }
}

impl Limiters {
    /// The user-visible names (JSON and text output), in bit order.
    const NAMES: [(Limiters, &'static str); 6] = [
        (Self::WARPS, "warps"),
        (Self::REGISTERS, "registers"),
        (Self::SHARED_MEMORY, "shared_memory"),
        (Self::BLOCKS, "blocks"),
        (Self::BARRIERS, "barriers"),
        (Self::VIRTUAL_RESOURCES, "virtual_resources"),
    ];

    /// Names of the set bits in bit order: `warps`, `registers`, `shared_memory`,
    /// `blocks`, `barriers`, `virtual_resources`.
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMES.iter().filter(|(b, _)| self.contains(*b)).map(|(_, n)| *n).collect()
    }
}

impl fmt::Display for Limiters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(", "))
    }
}

impl Serialize for Limiters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(s)
    }
}

/// The inverse of `Serialize`: a list of the names of [`Limiters::names`].
impl<'de> serde::Deserialize<'de> for Limiters {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        let mut set = Limiters::empty();
        for name in &names {
            match Self::NAMES.iter().find(|(_, n)| n == name) {
                Some((bit, _)) => set |= *bit,
                None => {
                    let known: Vec<&str> = Self::NAMES.iter().map(|(_, n)| *n).collect();
                    return Err(serde::de::Error::custom(format!("unknown limiter `{name}` (one of {})", known.join(", "))));
                }
            }
        }
        Ok(set)
    }
}

/// The result of one occupancy calculation (`cudaOccResult` plus derived numbers).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Occupancy {
    /// Resident blocks per SM (0: the configuration cannot launch; see `reason`).
    pub blocks_per_sm: u32,
    /// Resident warps per SM.
    pub warps_per_sm: u32,
    pub warps_per_block: u32,
    pub max_warps_per_sm: u32,
    /// `warps_per_sm / max_warps_per_sm`, in [0, 1].
    pub occupancy: f64,
    /// What bounds `blocks_per_sm` (every factor whose limit equals the minimum).
    pub limiters: Limiters,
    /// Blocks allowed by each resource; `None` where the resource does not limit (the
    /// header's `INT_MAX`).
    pub limit_warps: u32,
    pub limit_registers: Option<u32>,
    pub limit_shared_memory: Option<u32>,
    pub limit_blocks: u32,
    pub limit_barriers: Option<u32>,
    pub limit_virtual_resources: Option<u32>,
    /// Registers allocated per block (after per-warp rounding).
    pub allocated_regs_per_block: u32,
    /// Shared memory allocated per block, including the driver's reserve (CC >= 8).
    pub allocated_smem_per_block: u32,
    /// Whether partitioned global caching ends up enabled.
    pub partitioned_gc: bool,
    /// Why the configuration cannot launch, when `blocks_per_sm` is 0.
    pub reason: Option<String>,
}

/// Invalid inputs, as the header's `CUDA_OCC_ERROR_INVALID_INPUT` / `UNKNOWN_DEVICE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OccupancyError {
    InvalidInput(String),
    UnknownDevice(ComputeCapability),
}

impl fmt::Display for OccupancyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OccupancyError::InvalidInput(msg) => write!(f, "invalid occupancy input: {msg}"),
            OccupancyError::UnknownDevice(cc) => write!(f, "compute capability {cc} is not supported by the occupancy calculator"),
        }
    }
}

impl std::error::Error for OccupancyError {}

fn div_round_up(x: i64, y: i64) -> i64 {
    (x + (y - 1)) / y
}

fn round_up(x: i64, y: i64) -> i64 {
    y * div_round_up(x, y)
}

fn to_opt(limit: i64) -> Option<u32> {
    if limit >= UNLIMITED { None } else { Some(limit.clamp(0, u32::MAX as i64) as u32) }
}

/// `cudaOccAlignUpShmemSizeVoltaPlus`: snap a shared-memory size up to the next carveout.
fn align_up_carveout(size: i64, props: &DeviceProps) -> Result<i64, OccupancyError> {
    if size == 0 {
        // Every Volta+ table except Turing's starts at 0 KB; Turing's starts at 32 KB.
        return Ok(props.smem_carveouts_kib.first().map_or(0, |&kib| if kib == 0 { 0 } else { kib as i64 * 1024 }));
    }
    props
        .smem_carveouts_kib
        .iter()
        .map(|&kib| kib as i64 * 1024)
        .find(|&c| size <= c)
        .ok_or_else(|| {
            OccupancyError::InvalidInput(format!("{size} bytes of shared memory exceed every carveout of CC {}", props.cc))
        })
}

/// `cudaOccSMemPerMultiprocessor`: the shared memory per SM the user's preference gives.
fn smem_preference(props: &DeviceProps, state: &DeviceState) -> Result<i64, OccupancyError> {
    let high = props.smem_per_sm as i64;
    if props.cc.major >= 7 {
        // CUDA 9's carveout API takes precedence; the cache config maps onto it.
        let pref = match state.carveout_percent {
            Some(p) if p > 100 => {
                return Err(OccupancyError::InvalidInput(format!("carveout {p}% is above 100%")));
            }
            Some(p) => Some(p as i64),
            None => match state.cache_config {
                CacheConfig::PreferL1 => Some(0),
                CacheConfig::PreferShared => Some(100),
                CacheConfig::PreferEqual => Some(50),
                CacheConfig::PreferNone => None,
            },
        };
        let size = match pref {
            None => high,
            Some(p) => p * high / 100,
        };
        return align_up_carveout(size, props);
    }
    // Fermi and Kepler split 64 KB between L1 (16/32/48 KB) and shared memory.
    let low = high + 16384 - 49152;
    Ok(match props.cc.major {
        2 => match state.cache_config {
            CacheConfig::PreferL1 => low,
            _ => high,
        },
        3 => match state.cache_config {
            CacheConfig::PreferNone | CacheConfig::PreferShared => high,
            CacheConfig::PreferL1 => low,
            CacheConfig::PreferEqual => (high + low) / 2,
        },
        // Maxwell and Pascal have dedicated shared memory; CC 1.x has no L1.
        _ => high,
    })
}

/// `cudaOccSMemPerBlock`: the per-block shared-memory limit.
fn smem_per_block_limit(props: &DeviceProps, config: ShmemLimit, smem_per_cta: i64) -> i64 {
    let mut limit = props.smem_per_block as i64;
    if props.cc.major >= 7 && config == ShmemLimit::OptIn && smem_per_cta > props.smem_per_block as i64 {
        limit = props.smem_per_block_optin as i64;
    }
    // Starting with Ampere the driver reserves shared memory per block.
    if props.cc.major >= 8 {
        limit += props.reserved_smem_per_block as i64;
    }
    limit
}

fn partitioned_gc_expected(props: &DeviceProps, attrs: &FuncAttrs) -> PartitionedGc {
    if props.partitioned_gc_supported { attrs.partitioned_gc } else { PartitionedGc::Off }
}

fn warps_limit(props: &DeviceProps, gc: PartitionedGc, block_size: i64) -> i64 {
    if block_size > props.max_threads_per_block as i64 {
        return 0;
    }
    let max_warps = (props.max_threads_per_sm / props.warp_size) as i64;
    let warps_per_cta = round_up(div_round_up(block_size, props.warp_size as i64), props.warp_alloc_granularity as i64);
    if gc != PartitionedGc::Off { (max_warps / 2 / warps_per_cta) * 2 } else { max_warps / warps_per_cta }
}

/// Per-warp register granule (`cudaOccRegAllocationGranularity`; Fermi's odd cases from
/// the CUDA 8-era header).
fn reg_granule(props: &DeviceProps, num_regs: i64) -> i64 {
    if props.cc.major == 2 && matches!(num_regs, 21 | 22 | 29 | 30 | 37 | 38 | 45 | 46) {
        return 128;
    }
    props.reg_alloc_unit as i64
}

/// `cudaOccRegAllocationMaxPerThread`: the header says 256 from CC 7 on (the Programming
/// Guide says 255; ptxas never allocates 256, so the difference is unobservable).
fn max_regs_per_thread(props: &DeviceProps) -> i64 {
    if props.cc.major >= 7 { 256 } else { props.max_regs_per_thread as i64 }
}

struct RegsOutcome {
    limit: i64,
    allocated_per_cta: i64,
    gc: PartitionedGc,
}

/// `cudaOccMaxBlocksPerSMRegsLimit`.
fn regs_limit(props: &DeviceProps, attrs: &FuncAttrs, mut gc: PartitionedGc, block_size: i64) -> RegsOutcome {
    let num_regs = attrs.num_regs as i64;
    let warp = props.warp_size as i64;
    let sub_partitions = props.sub_partitions as i64;
    let warps_per_cta = div_round_up(block_size, warp);
    let regs_per_warp = round_up(num_regs * warp, reg_granule(props, num_regs));
    let regs_per_cta = regs_per_warp * warps_per_cta;
    // The hardware check assumes allocation to all sub-partitions at once.
    let regs_assumed = regs_per_warp * round_up(warps_per_cta, sub_partitions);
    let limit = if (props.regs_per_block as i64) < regs_assumed
        || (props.regs_per_block as i64) < regs_per_cta
        || num_regs > max_regs_per_thread(props)
    {
        0
    } else if regs_per_warp > 0 {
        let warps_per_sub = (props.regs_per_sm as i64 / sub_partitions) / regs_per_warp;
        let mut max_blocks = 0;
        if gc != PartitionedGc::Off {
            max_blocks = (warps_per_sub * (sub_partitions / 2) / warps_per_cta) * 2;
        }
        if max_blocks == 0 && gc != PartitionedGc::OnStrict {
            gc = PartitionedGc::Off;
            max_blocks = warps_per_sub * sub_partitions / warps_per_cta;
        }
        max_blocks
    } else {
        UNLIMITED
    };
    RegsOutcome { limit, allocated_per_cta: regs_per_cta, gc }
}

struct SmemOutcome {
    limit: i64,
    allocated_per_cta: i64,
}

/// `cudaOccMaxBlocksPerSMSmemLimit`.
fn smem_limit(props: &DeviceProps, attrs: &FuncAttrs, state: &DeviceState, dynamic: i64) -> Result<SmemOutcome, OccupancyError> {
    let granularity = props.smem_alloc_unit as i64;
    let preference = smem_preference(props, state)?;
    let static_smem = attrs.static_smem_bytes as i64 + props.reserved_smem_per_block as i64;
    let allocated = round_up(static_smem + dynamic, granularity);
    let max_usage = static_smem + attrs.max_dynamic_smem_bytes as i64;
    let dynamic_exceeded = attrs.shmem_limit != ShmemLimit::Default && dynamic > attrs.max_dynamic_smem_bytes as i64;
    let total_exceeded = allocated > smem_per_block_limit(props, attrs.shmem_limit, max_usage);
    let limit = if dynamic_exceeded || total_exceeded {
        0
    } else {
        let per_sm = if preference >= allocated {
            preference
        } else if props.cc.major >= 7 {
            align_up_carveout(allocated, props)?
        } else {
            props.smem_per_sm as i64
        };
        if allocated > 0 { per_sm / allocated } else { UNLIMITED }
    };
    Ok(SmemOutcome { limit, allocated_per_cta: allocated })
}

/// `cudaOccMaxBlocksPerSMBlockBarrierLimit` (applied from CC 9.0 on, as in the header).
fn barrier_limit(props: &DeviceProps, attrs: &FuncAttrs, blocks_limit: i64) -> i64 {
    let available = blocks_limit * props.barrier_slots_per_block as i64;
    if attrs.num_block_barriers > 0 { available / attrs.num_block_barriers as i64 } else { UNLIMITED }
}

fn check_inputs(props: &DeviceProps, attrs: &FuncAttrs, block_size: u32) -> Result<(), OccupancyError> {
    if block_size == 0 {
        return Err(OccupancyError::InvalidInput("block size must be positive".into()));
    }
    if props.max_threads_per_block == 0
        || props.max_threads_per_sm == 0
        || props.regs_per_block == 0
        || props.regs_per_sm == 0
        || props.warp_size == 0
        || props.smem_per_block == 0
        || props.smem_per_sm == 0
        || props.num_sms == 0
        || props.max_blocks_per_sm == 0
    {
        return Err(OccupancyError::InvalidInput("device properties must be positive".into()));
    }
    if attrs.max_threads_per_block == 0 {
        return Err(OccupancyError::InvalidInput("the kernel's maximum block size must be positive".into()));
    }
    if !(1..=12).contains(&props.cc.major) {
        return Err(OccupancyError::UnknownDevice(props.cc));
    }
    Ok(())
}

/// `cudaOccMaxActiveBlocksPerMultiprocessor`: resident blocks per SM and what limits them.
pub fn calculate(
    props: &DeviceProps,
    attrs: &FuncAttrs,
    state: &DeviceState,
    block_size: u32,
    dynamic_smem_bytes: u32,
) -> Result<Occupancy, OccupancyError> {
    check_inputs(props, attrs, block_size)?;
    if props.cc.major == 1 {
        return calculate_cc1(props, attrs, block_size, dynamic_smem_bytes);
    }
    let bs = block_size as i64;
    let gc = partitioned_gc_expected(props, attrs);
    let regs = regs_limit(props, attrs, gc, bs);
    let mut limit_regs = regs.limit;
    // GP100 (6.0) has 2 sub-partitions, GP10x 4: a kernel that cannot run on GP10x is not
    // allowed on any Pascal part, so re-check as GP10x.
    if props.cc == ComputeCapability::new(6, 0) && limit_regs != 0 {
        let gp10x = DeviceProps { cc: ComputeCapability::new(6, 1), sub_partitions: 4, ..props.clone() };
        if regs_limit(&gp10x, attrs, gc, bs).limit == 0 {
            limit_regs = 0;
        }
    }
    let gc = regs.gc;
    let limit_warps = warps_limit(props, gc, bs);
    let limit_blocks = props.max_blocks_per_sm as i64;
    let smem = smem_limit(props, attrs, state, dynamic_smem_bytes as i64)?;
    let limit_smem = smem.limit;
    let limit_virtual = if props.virtual_resources_per_sm > 0 && attrs.virtual_resource_count > 0 {
        (props.virtual_resources_per_sm / attrs.virtual_resource_count) as i64
    } else {
        UNLIMITED
    };

    let mut cta = limit_regs.min(limit_smem).min(limit_warps).min(limit_blocks).min(limit_virtual);
    let mut bits = Limiters::empty();
    for (limit, bit) in [
        (limit_warps, Limiters::WARPS),
        (limit_regs, Limiters::REGISTERS),
        (limit_smem, Limiters::SHARED_MEMORY),
        (limit_blocks, Limiters::BLOCKS),
        (limit_virtual, Limiters::VIRTUAL_RESOURCES),
    ] {
        if cta == limit {
            bits |= bit;
        }
    }
    let limit_bars = if props.cc.major >= 9 && attrs.num_block_barriers > 0 {
        let bars = barrier_limit(props, attrs, limit_blocks);
        cta = cta.min(bars);
        if cta == bars {
            bits |= Limiters::BARRIERS;
        }
        bars
    } else {
        UNLIMITED
    };

    let reason = (cta == 0).then(|| {
        zero_reason(props, attrs, bs, dynamic_smem_bytes, smem.allocated_per_cta, limit_warps, limit_regs, limit_smem, limit_bars, limit_virtual)
    });
    Ok(finish(props, bs, cta, bits, limit_warps, limit_regs, limit_smem, limit_blocks, limit_bars, limit_virtual, regs.allocated_per_cta, smem.allocated_per_cta, gc != PartitionedGc::Off, reason))
}

#[allow(clippy::too_many_arguments)]
fn finish(
    props: &DeviceProps,
    block_size: i64,
    cta: i64,
    limiters: Limiters,
    limit_warps: i64,
    limit_regs: i64,
    limit_smem: i64,
    limit_blocks: i64,
    limit_bars: i64,
    limit_virtual: i64,
    regs_per_cta: i64,
    smem_per_cta: i64,
    gc: bool,
    reason: Option<String>,
) -> Occupancy {
    let warps_per_block = div_round_up(block_size, props.warp_size as i64);
    let blocks = cta.clamp(0, u32::MAX as i64) as u32;
    let warps = (blocks as i64 * warps_per_block) as u32;
    let max_warps = props.max_threads_per_sm / props.warp_size;
    Occupancy {
        blocks_per_sm: blocks,
        warps_per_sm: warps,
        warps_per_block: warps_per_block as u32,
        max_warps_per_sm: max_warps,
        occupancy: if max_warps > 0 { warps as f64 / max_warps as f64 } else { 0.0 },
        limiters,
        limit_warps: limit_warps.clamp(0, u32::MAX as i64) as u32,
        limit_registers: to_opt(limit_regs),
        limit_shared_memory: to_opt(limit_smem),
        limit_blocks: limit_blocks as u32,
        limit_barriers: to_opt(limit_bars),
        limit_virtual_resources: to_opt(limit_virtual),
        allocated_regs_per_block: regs_per_cta.clamp(0, u32::MAX as i64) as u32,
        allocated_smem_per_block: smem_per_cta.clamp(0, u32::MAX as i64) as u32,
        partitioned_gc: gc,
        reason,
    }
}

/// A sentence saying why a configuration gets 0 blocks.
#[allow(clippy::too_many_arguments)]
fn zero_reason(
    props: &DeviceProps,
    attrs: &FuncAttrs,
    block_size: i64,
    dynamic: u32,
    smem_per_cta: i64,
    limit_warps: i64,
    limit_regs: i64,
    limit_smem: i64,
    limit_bars: i64,
    limit_virtual: i64,
) -> String {
    let mut why = Vec::new();
    if limit_warps == 0 {
        why.push(format!(
            "{block_size} threads per block exceed the maximum of {} on CC {}",
            props.max_threads_per_block, props.cc
        ));
    }
    if limit_regs == 0 {
        if attrs.num_regs as i64 > max_regs_per_thread(props) {
            why.push(format!("{} registers per thread exceed the maximum of {}", attrs.num_regs, props.max_regs_per_thread));
        } else {
            why.push(format!(
                "{} registers x {block_size} threads exceed the {} registers a block may use (after allocation rounding)",
                attrs.num_regs, props.regs_per_block
            ));
        }
    }
    if limit_smem == 0 {
        if attrs.shmem_limit != ShmemLimit::Default && dynamic > attrs.max_dynamic_smem_bytes {
            why.push(format!("{dynamic} bytes of dynamic shared memory exceed the kernel's limit of {}", attrs.max_dynamic_smem_bytes));
        } else {
            let max = smem_per_block_limit(props, attrs.shmem_limit, i64::MAX);
            why.push(format!("{smem_per_cta} bytes of shared memory per block exceed the maximum of {max} on CC {}", props.cc));
        }
    }
    if limit_bars == 0 {
        why.push(format!("{} block barriers exceed what an SM provides", attrs.num_block_barriers));
    }
    if limit_virtual == 0 {
        why.push(format!("{} virtual resources exceed the {} an SM provides", attrs.virtual_resource_count, props.virtual_resources_per_sm));
    }
    if why.is_empty() {
        why.push("no block fits on an SM".into());
    }
    why.join("; ")
}

/// CC 1.x, after the CUDA Occupancy Calculator spreadsheet: registers are allocated per
/// block (warps rounded to a multiple of 2, times 32 threads, times registers, rounded up
/// to the 256- or 512-register unit) and shared memory in 512-byte units; there is no
/// per-block register limit apart from the SM's register file.
fn calculate_cc1(props: &DeviceProps, attrs: &FuncAttrs, block_size: u32, dynamic: u32) -> Result<Occupancy, OccupancyError> {
    let bs = block_size as i64;
    let warp = props.warp_size as i64;
    let warps_per_cta = div_round_up(bs, warp);
    let warps_alloc = round_up(warps_per_cta, props.warp_alloc_granularity as i64);
    let limit_warps = if bs > props.max_threads_per_block as i64 {
        0
    } else {
        (props.max_threads_per_sm / props.warp_size) as i64 / warps_alloc
    };
    let num_regs = attrs.num_regs as i64;
    let regs_per_cta = round_up(warps_alloc * warp * num_regs, props.reg_alloc_unit as i64);
    let limit_regs = if num_regs > props.max_regs_per_thread as i64 || regs_per_cta > props.regs_per_sm as i64 {
        0
    } else if regs_per_cta > 0 {
        props.regs_per_sm as i64 / regs_per_cta
    } else {
        UNLIMITED
    };
    let smem_per_cta = round_up(attrs.static_smem_bytes as i64 + dynamic as i64, props.smem_alloc_unit as i64);
    let limit_smem = if smem_per_cta > props.smem_per_block as i64 {
        0
    } else if smem_per_cta > 0 {
        props.smem_per_sm as i64 / smem_per_cta
    } else {
        UNLIMITED
    };
    let limit_blocks = props.max_blocks_per_sm as i64;
    let cta = limit_regs.min(limit_smem).min(limit_warps).min(limit_blocks);
    let mut bits = Limiters::empty();
    for (limit, bit) in [
        (limit_warps, Limiters::WARPS),
        (limit_regs, Limiters::REGISTERS),
        (limit_smem, Limiters::SHARED_MEMORY),
        (limit_blocks, Limiters::BLOCKS),
    ] {
        if cta == limit {
            bits |= bit;
        }
    }
    let reason = (cta == 0)
        .then(|| zero_reason(props, attrs, bs, dynamic, smem_per_cta, limit_warps, limit_regs, limit_smem, UNLIMITED, UNLIMITED));
    Ok(finish(props, bs, cta, bits, limit_warps, limit_regs, limit_smem, limit_blocks, UNLIMITED, UNLIMITED, regs_per_cta, smem_per_cta, false, reason))
}

/// The result of [`max_potential_block_size`] (`cudaOccMaxPotentialOccupancyBlockSize`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BestBlockSize {
    /// The block size with the highest occupancy (the largest such size: the search runs
    /// downwards from the maximum and keeps the first strict improvement). 0 if nothing
    /// can launch.
    pub block_size: u32,
    /// Blocks per SM at that size.
    pub blocks_per_sm: u32,
    /// Grid size that fills every SM once (`blocks_per_sm x SMs`).
    pub min_grid_size: u32,
    /// Occupancy at that size.
    pub occupancy: f64,
}

/// The largest block size the search considers: the device's and the kernel's maximum.
fn block_size_limit(props: &DeviceProps, attrs: &FuncAttrs) -> u32 {
    props.max_threads_per_block.min(attrs.max_threads_per_block)
}

/// `cudaOccMaxPotentialOccupancyBlockSizeVariableSMem`: the block size that maximises
/// resident threads per SM, with per-block dynamic shared memory `dynamic_smem(block)`.
/// Pass `|_| bytes` for a constant amount.
pub fn max_potential_block_size(
    props: &DeviceProps,
    attrs: &FuncAttrs,
    state: &DeviceState,
    dynamic_smem: impl Fn(u32) -> u32,
) -> Result<BestBlockSize, OccupancyError> {
    check_inputs(props, attrs, 1)?;
    let occupancy_limit = props.max_threads_per_sm as i64;
    let granularity = props.warp_size as i64;
    let limit = block_size_limit(props, attrs) as i64;
    let mut best = BestBlockSize { block_size: 0, blocks_per_sm: 0, min_grid_size: 0, occupancy: 0.0 };
    let mut max_threads = 0i64;
    let mut aligned = round_up(limit, granularity);
    while aligned > 0 {
        let try_size = limit.min(aligned) as u32;
        let occ = calculate(props, attrs, state, try_size, dynamic_smem(try_size))?;
        let threads = try_size as i64 * occ.blocks_per_sm as i64;
        if threads > max_threads {
            best = BestBlockSize { block_size: try_size, blocks_per_sm: occ.blocks_per_sm, min_grid_size: 0, occupancy: occ.occupancy };
            max_threads = threads;
        }
        if occupancy_limit == max_threads {
            break;
        }
        aligned -= granularity;
    }
    best.min_grid_size = best.blocks_per_sm.saturating_mul(props.num_sms);
    Ok(best)
}

/// One point of [`occupancy_curve`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurvePoint {
    pub block_size: u32,
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
    pub occupancy: f64,
    pub limiters: Limiters,
}

/// Occupancy as a function of block size, for every multiple of the warp size up to the
/// maximum block size (the spreadsheet's "Impact of Varying Block Size" plot).
pub fn occupancy_curve(
    props: &DeviceProps,
    attrs: &FuncAttrs,
    state: &DeviceState,
    dynamic_smem: impl Fn(u32) -> u32,
) -> Result<Vec<CurvePoint>, OccupancyError> {
    let limit = block_size_limit(props, attrs);
    let mut out = Vec::new();
    let mut size = props.warp_size.max(1);
    while size <= limit {
        let occ = calculate(props, attrs, state, size, dynamic_smem(size))?;
        out.push(CurvePoint {
            block_size: size,
            blocks_per_sm: occ.blocks_per_sm,
            warps_per_sm: occ.warps_per_sm,
            occupancy: occ.occupancy,
            limiters: occ.limiters,
        });
        size += props.warp_size.max(1);
    }
    Ok(out)
}

/// `cudaOccAvailableDynamicSMemPerBlock`: the dynamic shared memory each block may use
/// when `num_blocks` blocks of `block_size` threads must be resident on one SM.
pub fn available_dynamic_smem_per_block(
    props: &DeviceProps,
    attrs: &FuncAttrs,
    state: &DeviceState,
    num_blocks: u32,
    block_size: u32,
) -> Result<u32, OccupancyError> {
    if num_blocks == 0 {
        return Err(OccupancyError::InvalidInput("the number of blocks must be positive".into()));
    }
    let occ = calculate(props, attrs, state, block_size, 0)?;
    if occ.blocks_per_sm < num_blocks {
        return Err(OccupancyError::InvalidInput(format!(
            "only {} blocks of {block_size} threads fit on an SM, not {num_blocks}",
            occ.blocks_per_sm
        )));
    }
    let granularity = props.smem_alloc_unit as i64;
    let limit_per_block = smem_per_block_limit(props, attrs.shmem_limit, props.smem_per_sm as i64);
    let preference = smem_preference(props, state)?;
    let per_sm = if num_blocks == 1 {
        limit_per_block
    } else if preference == 0 {
        align_up_carveout(1, props)?
    } else {
        preference
    };
    let mut avail = (per_sm / num_blocks as i64) / granularity * granularity;
    avail = avail.min(limit_per_block);
    avail -= attrs.static_smem_bytes as i64;
    if props.cc.major >= 8 {
        avail -= props.reserved_smem_per_block as i64;
    }
    avail = avail.min(attrs.max_dynamic_smem_bytes as i64);
    // The header computes in size_t, where a negative value wraps; we report 0 instead.
    Ok(avail.max(0) as u32)
}

/// Waves of a grid: how many rounds of fully resident blocks it takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Waves {
    /// `ceil(grid_blocks / (blocks_per_sm x SMs))`; 0 when nothing can be resident.
    pub waves: u64,
    /// Blocks one full wave holds.
    pub blocks_per_wave: u64,
    /// Blocks in the last wave.
    pub last_wave_blocks: u64,
    /// Fill of the last wave, `last_wave_blocks / blocks_per_wave`, in (0, 1].
    pub last_wave_fill: f64,
    /// Average fill over all waves, `grid_blocks / (waves x blocks_per_wave)` (the tail
    /// effect's efficiency).
    pub efficiency: f64,
}

/// Waves for a grid of `grid_blocks` blocks on `sm_count` SMs with `blocks_per_sm`
/// resident blocks each (Hasan et al. 2014 Eq. 1; Hong & Kim's `#Rep` rounded up).
pub fn waves(grid_blocks: u64, blocks_per_sm: u32, sm_count: u32) -> Waves {
    let per_wave = blocks_per_sm as u64 * sm_count as u64;
    if per_wave == 0 || grid_blocks == 0 {
        return Waves { waves: 0, blocks_per_wave: per_wave, last_wave_blocks: 0, last_wave_fill: 0.0, efficiency: 0.0 };
    }
    let n = grid_blocks.div_ceil(per_wave);
    let last = grid_blocks - (n - 1) * per_wave;
    Waves {
        waves: n,
        blocks_per_wave: per_wave,
        last_wave_blocks: last,
        last_wave_fill: last as f64 / per_wave as f64,
        // In floating point: `n × per_wave` exceeds `u64` for a grid near 2^64 blocks.
        efficiency: grid_blocks as f64 / (n as f64 * per_wave as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Database;

    fn props(cc: &str) -> DeviceProps {
        let cc: ComputeCapability = cc.parse().expect("cc");
        DeviceProps::from_limits(Database::builtin().cc(cc).expect("cc in data"), 1)
    }

    fn run(cc: &str, threads: u32, regs: u32, smem: u32) -> Occupancy {
        let p = props(cc);
        calculate(&p, &FuncAttrs::new(regs, 0, &p), &DeviceState::default(), threads, smem).expect("valid")
    }

    #[test]
    fn limiters_deserialize_from_their_names_and_refuse_others() {
        use serde::Deserialize as _;
        use serde::de::IntoDeserializer as _;
        use serde::de::value::{Error, SeqDeserializer};
        let names = |v: Vec<&str>| -> SeqDeserializer<std::vec::IntoIter<String>, Error> { v.into_iter().map(String::from).collect::<Vec<_>>().into_deserializer() };
        let set = Limiters::deserialize(names(vec!["barriers", "warps"])).expect("known names");
        assert_eq!(set, Limiters::WARPS | Limiters::BARRIERS);
        assert_eq!(set.names(), ["warps", "barriers"]);
        let err = Limiters::deserialize(names(vec!["warps", "regs"])).expect_err("unknown name");
        assert!(err.to_string().contains("unknown limiter `regs`"), "{err}");
    }

    #[test]
    fn fermi_odd_register_counts_use_the_128_granule() {
        // 21 regs x 32 = 672 -> 768 (granule 128); (32768 / 2) / 768 = 21 warps per
        // sub-partition; 42 / 8 warps = 5 blocks (CUDA 8-era header).
        let o = run("2.0", 256, 21, 0);
        assert_eq!((o.blocks_per_sm, o.limiters.names()), (5, vec!["registers"]));
        // 20 regs -> 640 (granule 64): 25 warps per sub-partition, 50 / 8 = 6 = 48 / 8.
        let o = run("2.0", 256, 20, 0);
        assert_eq!((o.blocks_per_sm, o.limiters.names()), (6, vec!["warps", "registers"]));
    }

    #[test]
    fn cc1_allocates_registers_per_block() {
        // CC 1.3: 8 warps x 32 x 16 regs = 4096 per block -> 4 blocks of 16 K registers;
        // 32 warps / 8 = 4; 16 KB / 4 KB = 4.
        let o = run("1.3", 256, 16, 4096);
        assert_eq!(o.blocks_per_sm, 4);
        assert_eq!(o.limiters.names(), vec!["warps", "registers", "shared_memory"]);
        assert_eq!(o.occupancy, 1.0);
        // CC 1.0: 4 warps x 32 x 10 = 1280 regs (unit 256) -> 8192 / 1280 = 6; 24 / 4 = 6.
        let o = run("1.0", 128, 10, 0);
        assert_eq!((o.blocks_per_sm, o.warps_per_sm), (6, 24));
        // 33 threads take 2 warps rounded to an even count: 24 / 2 = 12 > 8 blocks.
        let o = run("1.1", 33, 0, 0);
        assert_eq!((o.blocks_per_sm, o.limiters.names()), (8, vec!["blocks"]));
        // 513 threads exceed CC 1.x's 512 per block.
        let o = run("1.3", 513, 8, 0);
        assert_eq!(o.blocks_per_sm, 0);
        assert!(o.reason.as_deref().is_some_and(|r| r.contains("512")), "{o:?}");
    }

    #[test]
    fn configurations_that_cannot_launch_say_why() {
        let o = run("8.6", 1024, 80, 0);
        assert_eq!(o.blocks_per_sm, 0);
        assert!(o.limiters.contains(Limiters::REGISTERS));
        assert!(o.reason.as_deref().is_some_and(|r| r.contains("registers")), "{o:?}");
        let o = run("8.0", 128, 32, 200 * 1024);
        assert_eq!(o.blocks_per_sm, 0);
        assert!(o.reason.as_deref().is_some_and(|r| r.contains("shared memory")), "{o:?}");
    }

    #[test]
    fn kepler_cache_config_changes_shared_memory() {
        let p = props("3.5");
        let attrs = FuncAttrs::new(16, 0, &p);
        let l1 = DeviceState { cache_config: CacheConfig::PreferL1, carveout_percent: None };
        // Prefer L1: 16 KB of shared memory -> 2 blocks of 8 KB instead of 6.
        assert_eq!(calculate(&p, &attrs, &l1, 128, 8192).expect("ok").blocks_per_sm, 2);
        assert_eq!(calculate(&p, &attrs, &DeviceState::default(), 128, 8192).expect("ok").blocks_per_sm, 6);
    }

    #[test]
    fn best_block_size_and_curve() {
        let p = props("8.6");
        let attrs = FuncAttrs::new(32, 0, &p);
        let best = max_potential_block_size(&p, &attrs, &DeviceState::default(), |_| 0).expect("ok");
        // Every multiple of 32 that divides 1536 reaches full occupancy; the search keeps
        // the first (largest) size tried that reaches it: 768 (2 blocks x 768 = 1536).
        assert_eq!((best.block_size, best.blocks_per_sm, best.occupancy), (768, 2, 1.0));
        let curve = occupancy_curve(&p, &attrs, &DeviceState::default(), |_| 0).expect("ok");
        assert_eq!(curve.len(), 32);
        assert_eq!(curve[0].block_size, 32);
        assert_eq!(curve[0].blocks_per_sm, 16);
        assert_eq!(curve[31].block_size, 1024);
        assert_eq!(curve[31].warps_per_sm, 32);
    }

    #[test]
    fn available_dynamic_shared_memory() {
        let p = props("9.0");
        let attrs = FuncAttrs::new(32, 0, &p);
        // One block may use the opt-in maximum, 227 KB.
        assert_eq!(available_dynamic_smem_per_block(&p, &attrs, &DeviceState::default(), 1, 128), Ok(232_448));
        // Two blocks share 228 KB: 116,736 each, minus the 1 KB reserve.
        assert_eq!(available_dynamic_smem_per_block(&p, &attrs, &DeviceState::default(), 2, 128), Ok(115_712));
    }

    #[test]
    fn waves_and_last_wave_fill() {
        // Hasan et al. 2014 §3: K20, 13 SMs x 16 blocks = 208 per wave; 224 blocks take 2 waves.
        let w = waves(224, 16, 13);
        assert_eq!((w.waves, w.blocks_per_wave, w.last_wave_blocks), (2, 208, 16));
        assert!((w.last_wave_fill - 16.0 / 208.0).abs() < 1e-12);
        assert!((w.efficiency - 224.0 / 416.0).abs() < 1e-12);
        assert_eq!(waves(208, 16, 13).waves, 1);
        assert_eq!(waves(208, 16, 13).last_wave_fill, 1.0);
        assert_eq!(waves(10, 0, 13).waves, 0);
    }

    #[test]
    fn invalid_inputs_are_errors_not_panics() {
        let p = props("8.0");
        let attrs = FuncAttrs::new(32, 0, &p);
        assert!(calculate(&p, &attrs, &DeviceState::default(), 0, 0).is_err());
        let bad = DeviceState { cache_config: CacheConfig::PreferNone, carveout_percent: Some(150) };
        assert!(calculate(&p, &attrs, &bad, 128, 0).is_err());
        let unknown = DeviceProps { cc: ComputeCapability::new(13, 0), ..p };
        assert!(matches!(calculate(&unknown, &attrs, &DeviceState::default(), 128, 0), Err(OccupancyError::UnknownDevice(_))));
    }
}
