//! `roofline`: the physical floor under every other model.
//!
//! **What it estimates.** A lower bound on kernel time: the kernel cannot finish before
//! its DRAM traffic has crossed the memory interface at peak bandwidth, nor before its
//! arithmetic has gone through the SMs' functional units at peak rate:
//!
//! `T_floor = max(DRAM bytes / DRAM bandwidth, distinct bytes / L2 bandwidth, max over unit classes of ops / peak rate)`
//!
//! This is the roofline model of Williams, Waterman and Patterson ("Roofline: an
//! insightful visual performance model for multicore architectures", CACM 52(4), 2009),
//! P = min(π, I·β), turned around into a time, in the form NVIDIA's Nsight Compute
//! "GPU Speed Of Light" roofline uses (achieved work over peak work per unit).
//!
//! **Inputs.** Compute: per-thread dynamic counts of FP32, FP64, FP16 and tensor
//! instructions × threads, at the per-SM lane counts × SMs × clock (an FMA is one
//! lane-operation, so FLOP/s and operation rates cancel); FP16 runs packed at twice the
//! FP32 rate; a tensor instruction is charged the FLOPs of the smallest common `mma` shape
//! (m16n8k8, 2048 FLOPs per warp) at the dense FP16 tensor rate. Every executed
//! instruction must issue, so this term is a true floor given the counts.
//!
//! Memory: the bytes that must cross the DRAM interface, from the traffic estimate
//! (`kernel_profile::traffic`): every executed access, its sectors, less what L1 and L2
//! serve: per array the distinct footprint over the grid (a 3-point stencil reads its
//! input once; vadd reads two arrays and writes a third), more when reuse between waves
//! of resident blocks exceeds the L2 (a large matrix product), and the requested sectors
//! of accesses whose addresses depend on data. `dram_read_bytes + dram_write_bytes` at
//! the peak bandwidth is the memory term, except when every array fits in the L2
//! (`Traffic::l2_resident`): repeated launches then find the data in L2 and the floor
//! counts no DRAM traffic (`floor_bytes` 0; the cold bytes stay in `dram_read_bytes` and
//! `dram_write_bytes`); arrays a little larger than a one-piece L2 count what repeated
//! launches do not find there (`Traffic::steady_dram_bytes`). Those bytes must still cross
//! between the L2 and the SMs: where repeated launches find any of them in L2, the memory
//! term is at least the cold bytes at the L2's bandwidth (gpu-data
//! `l2_bytes_per_clk_per_sm`, the L2 level of the hierarchical roofline Nsight Compute
//! draws; `l2_us` in the breakdown), so that a kernel whose data stay in L2 has a floor,
//! not 0 µs. The requested traffic (every execution of every
//! access, in sectors) stays in the breakdown for reference (`requested_bytes`).
//!
//! Any model predicting below this floor is flagged by [`below_floor`].

use std::collections::BTreeMap;

use kernel_profile::traffic::{self, CacheConfig, Traffic};
use kernel_profile::{AccessClass, InstrClass, KernelProfile, MemoryAccess, Space};

use crate::gpu::GpuParams;
use crate::prediction::{Bound, Confidence, Prediction};

/// Bytes of one DRAM sector (the unit of `transactions_per_request`).
pub const SECTOR_BYTES: f64 = 32.0;

/// FLOPs of one warp-wide `mma.m16n8k8` (2·16·8·8), the smallest common tensor shape.
pub const TENSOR_FLOPS_PER_WARP_INSTR: f64 = 2048.0;

/// Options of the floor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloorConfig {
    /// Fraction of the floor bytes assumed served by L2 without reaching DRAM (0 = none;
    /// raise it for kernels known to re-read data written by a previous kernel).
    pub l2_reuse_discount: f64,
}

/// Bytes one warp *requests* from the memory system over the whole kernel: Σ over
/// global, local, generic and texture accesses of executions × sectors per request × 32 B
/// (`uniform` accesses count one sector).
pub fn dram_bytes_per_warp(profile: &KernelProfile) -> f64 {
    offchip(profile)
        .map(|a| {
            let sectors = if a.class == AccessClass::Uniform {
                1.0
            } else {
                a.transactions_per_request.max(0.0)
            };
            a.executions.max(0.0) * sectors * SECTOR_BYTES
        })
        .sum()
}

/// The caches the traffic estimate needs, for this launch on this GPU: L1 is the unified
/// L1/shared storage per SM (gpu-data `l1_shared_bytes_per_sm`) less the resident blocks'
/// shared memory, at least the smallest carveout ([`gpu_spec::Gpu::l1_bytes_per_sm`]); without a
/// database entry, no L1 (the floor does not depend on it).
pub fn cache_config(profile: &KernelProfile, gpu: &GpuParams) -> CacheConfig {
    let threads = u32::try_from(profile.launch.threads_per_block()).unwrap_or(u32::MAX);
    let smem = profile.resources.static_smem_bytes.saturating_add(profile.launch.dynamic_smem);
    let resident = gpu.resident_blocks_per_sm(threads, profile.resources.registers_per_thread, smem).max(1);
    let l1 = gpu.spec.as_ref().map_or(0, |g| g.l1_bytes_per_sm(u64::from(smem), resident));
    CacheConfig {
        sm_count: gpu.sm_count,
        l1_bytes_per_sm: l1,
        l2_bytes: gpu.l2_bytes,
        resident_blocks_per_sm: resident,
        l1_caches_global_loads: gpu.spec.as_ref().is_none_or(|g| traffic::l1_caches_global_loads(g.cc.major)),
        l2_partitioned: gpu.spec.as_ref().is_some_and(|g| g.l2_partitioned()),
    }
}

/// The traffic estimate of a profile on a GPU.
pub fn traffic_of(profile: &KernelProfile, gpu: &GpuParams) -> Traffic {
    traffic::estimate(profile, &cache_config(profile, gpu))
}

fn offchip(profile: &KernelProfile) -> impl Iterator<Item = &MemoryAccess> {
    profile.memory_accesses.iter().filter(|a| {
        matches!(
            a.space,
            Space::Global | Space::Local | Space::Generic | Space::Texture
        )
    })
}

/// The floor's two terms in microseconds: (memory, compute, the compute class that binds).
pub fn floor_terms(
    profile: &KernelProfile,
    gpu: &GpuParams,
    cfg: &FloorConfig,
) -> Option<(f64, f64, &'static str)> {
    let threads = profile.launch.total_threads() as f64;
    let warps = profile.launch.threads_per_block().div_ceil(32).saturating_mul(profile.launch.blocks()) as f64;
    if threads <= 0.0 || gpu.clock_hz() <= 0.0 || gpu.mem_bandwidth_gbs <= 0.0 {
        return None;
    }
    let t = traffic_of(profile, gpu);
    let bytes = t.steady_dram_bytes() * (1.0 - cfg.l2_reuse_discount.clamp(0.0, 1.0));
    let mem_us = (bytes / (gpu.mem_bandwidth_gbs * 1e9) * 1e6).max(l2_floor_us(&t, gpu).unwrap_or(0.0));
    let sm_hz = f64::from(gpu.sm_count) * gpu.clock_hz();
    let d = &profile.counts.dynamic;
    let n = |c: InstrClass| d.get(&c).copied().unwrap_or(0.0);
    let rate = |lanes: f64| {
        if lanes > 0.0 {
            lanes * sm_hz
        } else {
            f64::INFINITY
        }
    };
    let mut terms: Vec<(&'static str, f64)> = vec![
        (
            "fp32",
            n(InstrClass::Fp32) * threads / rate(f64::from(gpu.units.fp32)),
        ),
        (
            "fp64",
            n(InstrClass::Fp64) * threads / rate(f64::from(gpu.units.fp64)),
        ),
        (
            "fp16",
            n(InstrClass::Fp16) * threads / rate(2.0 * f64::from(gpu.units.fp32)),
        ),
    ];
    // Tensor cores: each instruction's multiply-adds from its shape and types at the
    // database GPU's peak (bottleneck::peak_tensor_seconds); a preset without the
    // database's entry counts every instruction as one m16n8k8.
    let tensor = gpu
        .spec
        .as_deref()
        .and_then(|spec| crate::bottleneck::peak_tensor_seconds(profile, spec, warps, sm_hz, TENSOR_FLOPS_PER_WARP_INSTR / 2.0))
        .or_else(|| (gpu.tensor_fp16_flops_per_clock_per_sm > 0.0).then(|| n(InstrClass::Tensor) * warps * TENSOR_FLOPS_PER_WARP_INSTR / (gpu.tensor_fp16_flops_per_clock_per_sm * sm_hz)));
    if let Some(secs) = tensor {
        terms.push(("tensor", secs));
    }
    let (class, secs) = terms
        .into_iter()
        .filter(|(_, t)| t.is_finite())
        .fold(("none", 0.0), |acc, it| if it.1 > acc.1 { it } else { acc });
    Some((mem_us, secs * 1e6, class))
}

/// The time the kernel's distinct bytes (`dram_read_bytes + dram_write_bytes`, what a
/// first launch moves through DRAM) take to cross between the L2 and the SMs at the L2's
/// bandwidth (gpu-data `l2_bytes_per_clk_per_sm` × SMs × clock), in µs: the floor of a
/// kernel whose data repeated launches find in L2 (`Traffic::l2_resident`), which moves
/// no DRAM bytes but still every byte through L2 (the L2 level of a hierarchical roofline,
/// as Nsight Compute draws it). `None` without a database entry.
///
/// Only where repeated launches find some of the data in L2 (`steady_dram_bytes` below
/// the cold bytes): elsewhere every byte crosses DRAM, whose term is the floor (and some
/// of gpu-data's L2 bandwidths of Kepler and older boards are estimates below their DRAM
/// peak, which would make the estimate, not the DRAM, the floor).
fn l2_floor_us(t: &Traffic, gpu: &GpuParams) -> Option<f64> {
    let cold = (t.dram_read_bytes + t.dram_write_bytes).max(0.0);
    if t.steady_dram_bytes() >= cold * 0.999 {
        return None;
    }
    let per_clk = gpu.spec.as_ref()?.l2_bytes_per_clk_per_sm * f64::from(gpu.sm_count);
    let bw = per_clk * gpu.clock_hz();
    (bw > 0.0).then(|| cold / bw * 1e6)
}

/// The roofline floor as a [`Prediction`].
pub fn predict(profile: &KernelProfile, gpu: &GpuParams, cfg: &FloorConfig) -> Option<Prediction> {
    let (mem_us, comp_us, class) = floor_terms(profile, gpu, cfg)?;
    let t = traffic_of(profile, gpu);
    let time_us = mem_us.max(comp_us);
    let bound = if mem_us >= comp_us {
        Bound::Memory
    } else {
        Bound::Compute
    };
    let warps = profile.launch.threads_per_block().div_ceil(32).saturating_mul(profile.launch.blocks()) as f64;
    let mut breakdown = BTreeMap::new();
    breakdown.insert(
        "requested_bytes".to_string(),
        dram_bytes_per_warp(profile) * warps,
    );
    breakdown.insert("floor_bytes".to_string(), t.steady_dram_bytes());
    breakdown.insert("dram_read_bytes".to_string(), t.dram_read_bytes);
    breakdown.insert("dram_write_bytes".to_string(), t.dram_write_bytes);
    breakdown.insert("memory_us".to_string(), mem_us);
    let l2_us = l2_floor_us(&t, gpu);
    if let Some(us) = l2_us {
        breakdown.insert("l2_us".to_string(), us);
    }
    let dram_us = t.steady_dram_bytes() / (gpu.mem_bandwidth_gbs * 1e9) * 1e6;
    let cold_bytes = t.dram_read_bytes + t.dram_write_bytes;
    let first_launch_us = cold_bytes / (gpu.mem_bandwidth_gbs * 1e9) * 1e6;
    breakdown.insert("compute_us".to_string(), comp_us);
    let explanation = match bound {
        Bound::Memory if l2_us.is_some_and(|l2| l2 > dram_us && l2 >= mem_us * 0.999) => format!(
            "floor: the {:.1} MB it reads and writes fit in the {:.1} MB L2, where repeated launches find them, and moving them between the L2 and the SMs at {:.0} GB/s takes {mem_us:.2} µs, more than its arithmetic ({comp_us:.2} µs) and its {:.2} µs of DRAM traffic (a first launch moves them through DRAM in {first_launch_us:.2} µs)",
            cold_bytes / 1e6,
            gpu.l2_bytes as f64 / 1e6,
            cold_bytes / (mem_us * 1e-6) / 1e9,
            dram_us,
        ),
        Bound::Memory => format!(
            "floor: moving the kernel's memory traffic at the peak {} GB/s takes {mem_us:.2} µs, more than its arithmetic ({comp_us:.2} µs)",
            gpu.mem_bandwidth_gbs
        ),
        _ if t.l2_resident && cold_bytes > 0.0 => format!(
            "floor: the {class} arithmetic at peak rate takes {comp_us:.2} µs, more than its memory traffic ({mem_us:.2} µs: the {:.1} MB it reads and writes fit in the {:.1} MB L2, where repeated launches find them{}; a first launch moves them through DRAM in {first_launch_us:.2} µs)",
            cold_bytes / 1e6,
            gpu.l2_bytes as f64 / 1e6,
            if l2_us.is_some() { ", and cross between the L2 and the SMs in that time" } else { "" },
        ),
        _ => format!(
            "floor: the {class} arithmetic at peak rate takes {comp_us:.2} µs, more than its memory traffic ({mem_us:.2} µs)"
        ),
    };
    let mut assumptions = vec![
        "roofline floor (Williams et al. 2009): peak bandwidth and peak lane rates, perfect overlap".to_string(),
        "floor bytes = the DRAM reads and writes of the traffic estimate (kernel_profile::traffic): distinct footprints per array, re-reads when reuse exceeds the L2".to_string(),
    ];
    assumptions.extend(t.notes.iter().map(|n| format!("traffic: {n}")));
    if cfg.l2_reuse_discount > 0.0 {
        assumptions.push(format!(
            "{:.0} % of requested bytes assumed served by L2",
            cfg.l2_reuse_discount * 100.0
        ));
    }
    assumptions.extend(gpu.provenance.iter().cloned());
    Some(Prediction {
        model: "roofline",
        time_us,
        breakdown,
        bound,
        confidence: Confidence::High,
        assumptions,
        explanation,
        mwp: None,
        cwp: None,
    })
}

/// Whether `pred` claims a time below the physical floor (by more than 0.5 %, to keep
/// rounding from flagging models that sit exactly on the roof).
pub fn below_floor(pred: &Prediction, floor: &Prediction) -> bool {
    pred.time_us.is_finite() && floor.time_us.is_finite() && pred.time_us < floor.time_us * 0.995
}
