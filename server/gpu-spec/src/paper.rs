//! The seed papers' own GPUs (`gpu-data/paper-gpus.toml`).
//!
//! A paper's reproduction must run on exactly the GPU the paper describes: its SM count,
//! its clock, its measured latencies, even where they differ from the product's datasheet
//! (the Tesla K20 of seeds 000, 001 and 004 runs at 706 MHz with a measured 221-cycle
//! global-memory latency). These entries are that description, kept apart from the product
//! database (`gpus/*.toml`) so neither has to bend to the other, and held to the same rule:
//! every number with its source.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::cc::ComputeCapability;
use crate::db::Src;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PaperFile {
    pub(crate) paper_gpu: Vec<RawPaperGpu>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPaperGpu {
    pub(crate) id: String,
    cc: String,
    provenance: Vec<String>,
    sm_count: Src<u32>,
    clock_mhz: Src<f64>,
    mem_bandwidth_gbs: Src<f64>,
    fp32_per_sm: Src<u32>,
    fp64_per_sm: Src<u32>,
    sfu_per_sm: Src<u32>,
    ldst_per_sm: Src<u32>,
    warp_schedulers_per_sm: Src<u32>,
    max_threads_per_sm: Src<u32>,
    max_warps_per_sm: Src<u32>,
    max_blocks_per_sm: Src<u32>,
    regs_per_sm: Src<u32>,
    reg_alloc_unit_per_warp: Src<u32>,
    smem_per_sm_bytes: Src<u32>,
    smem_alloc_unit_bytes: Src<u32>,
    l2_bytes: Src<u64>,
    alu_latency_cycles: Src<f64>,
    dram_latency_cycles: Src<f64>,
    shared_latency_cycles: Src<f64>,
    tensor_fp16_flops_per_clock_per_sm: Src<f64>,
}

/// One GPU as a seed paper describes it. Units are in the field names; latencies in SM
/// clock cycles; bandwidth in GB/s (10^9 B/s).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PaperGpu {
    /// Lowercase slug, the id of the same product in the database where there is one
    /// (`tesla-k20`).
    pub id: String,
    pub cc: ComputeCapability,
    /// One line per field group saying where the numbers came from, shown by the models
    /// as assumptions.
    pub provenance: Vec<String>,
    pub sm_count: u32,
    /// The SM clock the paper's model uses, in MHz.
    pub clock_mhz: f64,
    /// DRAM bandwidth in GB/s.
    pub mem_bandwidth_gbs: f64,
    pub fp32_per_sm: u32,
    pub fp64_per_sm: u32,
    pub sfu_per_sm: u32,
    pub ldst_per_sm: u32,
    pub warp_schedulers_per_sm: u32,
    pub max_threads_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub regs_per_sm: u32,
    /// Registers are allocated per warp in units of this many.
    pub reg_alloc_unit_per_warp: u32,
    pub smem_per_sm_bytes: u32,
    pub smem_alloc_unit_bytes: u32,
    pub l2_bytes: u64,
    /// Dependent-issue latency of a simple FP32/INT operation.
    pub alu_latency_cycles: f64,
    /// Global-memory (DRAM) load latency.
    pub dram_latency_cycles: f64,
    /// Shared-memory load latency.
    pub shared_latency_cycles: f64,
    /// Dense FP16 tensor-core FLOPs per clock per SM (0 without tensor cores).
    pub tensor_fp16_flops_per_clock_per_sm: f64,
    /// Source of every number, keyed by field name.
    pub sources: BTreeMap<String, String>,
}

impl PaperGpu {
    pub(crate) fn from_raw(raw: &RawPaperGpu) -> Result<PaperGpu, String> {
        let cc: ComputeCapability = raw.cc.parse().map_err(|e: crate::cc::BadComputeCapability| e.to_string())?;
        if raw.provenance.is_empty() || raw.provenance.iter().any(|p| p.trim().is_empty()) {
            return Err("provenance must hold at least one non-empty line".into());
        }
        let mut sources = BTreeMap::new();
        macro_rules! take {
            ($field:ident) => {{
                sources.insert(stringify!($field).to_string(), raw.$field.src.clone());
                raw.$field.v
            }};
        }
        let gpu = PaperGpu {
            id: raw.id.clone(),
            cc,
            provenance: raw.provenance.clone(),
            sm_count: take!(sm_count),
            clock_mhz: take!(clock_mhz),
            mem_bandwidth_gbs: take!(mem_bandwidth_gbs),
            fp32_per_sm: take!(fp32_per_sm),
            fp64_per_sm: take!(fp64_per_sm),
            sfu_per_sm: take!(sfu_per_sm),
            ldst_per_sm: take!(ldst_per_sm),
            warp_schedulers_per_sm: take!(warp_schedulers_per_sm),
            max_threads_per_sm: take!(max_threads_per_sm),
            max_warps_per_sm: take!(max_warps_per_sm),
            max_blocks_per_sm: take!(max_blocks_per_sm),
            regs_per_sm: take!(regs_per_sm),
            reg_alloc_unit_per_warp: take!(reg_alloc_unit_per_warp),
            smem_per_sm_bytes: take!(smem_per_sm_bytes),
            smem_alloc_unit_bytes: take!(smem_alloc_unit_bytes),
            l2_bytes: take!(l2_bytes),
            alu_latency_cycles: take!(alu_latency_cycles),
            dram_latency_cycles: take!(dram_latency_cycles),
            shared_latency_cycles: take!(shared_latency_cycles),
            tensor_fp16_flops_per_clock_per_sm: take!(tensor_fp16_flops_per_clock_per_sm),
            sources,
        };
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if gpu.sm_count == 0 || !positive(gpu.clock_mhz) || !positive(gpu.mem_bandwidth_gbs) {
            return Err("sm_count, clock_mhz and mem_bandwidth_gbs must be positive".into());
        }
        if gpu.max_warps_per_sm * 32 != gpu.max_threads_per_sm {
            return Err("max_warps_per_sm x 32 != max_threads_per_sm".into());
        }
        Ok(gpu)
    }
}
