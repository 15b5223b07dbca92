//! The GPU facts the `wave`, `bsp`, `scheduling` and `roofline` models read.
//!
//! Why a struct of our own: the models need a small, fully resolved set of numbers (SM
//! count, one clock, bandwidth, per-SM unit counts, occupancy limits, a few latencies),
//! and the reproductions of the papers must be able to build exactly the GPU a paper
//! describes (the Tesla K20 of seeds 000, 001 and 004), not the product entry of the GPU
//! database. [`GpuParams::from_spec`] builds one from the database's `gpu_spec::Gpu`;
//! [`GpuParams::from_paper`] and the presets ([`GpuParams::tesla_k20`], ...) build the
//! papers' own GPUs from `gpu-data/paper-gpus.toml`, where every number is cited.
//!
//! The occupancy function here ([`GpuParams::resident_blocks_per_sm`]) delegates to
//! NVIDIA's exact algorithm in `gpu_spec` when the params came from the database
//! ([`GpuParams::spec`]), and otherwise applies the four classic limits (warps, registers, shared memory, blocks)
//! of `cuda_occupancy.h` without the sub-partition and carveout refinements, which is
//! exact for the Kepler-era presets (`cuda_occupancy.h`,
//! `cudaOccMaxActiveBlocksPerMultiprocessor`: the warp, register, shared-memory and block
//! limits).

/// Per-SM functional units (counts per SM, not per sub-partition).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmUnits {
    /// FP32 lanes ("CUDA cores", the thesis' SP).
    pub fp32: u32,
    /// FP64 lanes (the thesis' DPU), or the throughput-equivalent count.
    pub fp64: u32,
    /// Special function units.
    pub sfu: u32,
    /// Load/store units.
    pub ldst: u32,
    pub warp_schedulers: u32,
}

/// The occupancy limits of one compute capability (CUDA Programming Guide,
/// "Technical Specifications per Compute Capability").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmLimits {
    pub max_threads_per_sm: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub regs_per_sm: u32,
    /// Registers are allocated per warp in units of this many registers.
    pub reg_alloc_unit_per_warp: u32,
    pub smem_per_sm_bytes: u32,
    pub smem_alloc_unit_bytes: u32,
}

/// The GPU as the models of this crate see it.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuParams {
    /// Database id or a descriptive name (`tesla-k20`).
    pub id: String,
    /// Compute capability (major, minor).
    pub cc: (u32, u32),
    pub sm_count: u32,
    /// The SM clock the models use, in MHz (boost clock for database GPUs).
    pub clock_mhz: f64,
    /// Peak DRAM bandwidth in GB/s (10^9 B/s).
    pub mem_bandwidth_gbs: f64,
    pub units: SmUnits,
    pub limits: SmLimits,
    pub l2_bytes: u64,
    /// Dependent-issue latency of a simple FP32/INT ALU operation, in cycles.
    pub alu_latency_cycles: f64,
    /// DRAM (global load) latency in cycles.
    pub dram_latency_cycles: f64,
    /// Shared-memory load latency in cycles.
    pub shared_latency_cycles: f64,
    /// Dense FP16 tensor-core FLOPs per clock per SM (0 without tensor cores).
    pub tensor_fp16_flops_per_clock_per_sm: f64,
    /// Where the numbers came from, one line per field group, for `assumptions`.
    pub provenance: Vec<String>,
    /// The database entry these params came from, if any: its exact occupancy calculator
    /// then replaces the classic limits in [`GpuParams::resident_blocks_per_sm`].
    pub spec: Option<Box<gpu_spec::Gpu>>,
}

impl GpuParams {
    /// The SM clock in Hz.
    pub fn clock_hz(&self) -> f64 {
        self.clock_mhz * 1e6
    }

    /// Cycles to microseconds at [`GpuParams::clock_mhz`].
    pub fn cycles_to_us(&self, cycles: f64) -> f64 {
        if self.clock_mhz > 0.0 {
            cycles / self.clock_mhz
        } else {
            f64::NAN
        }
    }

    /// Total FP32 lanes on the chip (the BSP paper's P).
    pub fn cores(&self) -> u32 {
        self.units.fp32 * self.sm_count
    }

    /// Resident blocks per SM for a launch: the minimum of the warp, register, shared-memory
    /// and block limits (`cuda_occupancy.h`, `cudaOccMaxActiveBlocksPerMultiprocessor`,
    /// without sub-partitions or carveouts). Returns 0 when one block does not fit.
    pub fn resident_blocks_per_sm(
        &self,
        threads_per_block: u32,
        regs_per_thread: u32,
        smem_per_block: u32,
    ) -> u32 {
        let l = &self.limits;
        if threads_per_block == 0 {
            return 0;
        }
        if let Some(gpu) = &self.spec {
            return gpu
                .occupancy(threads_per_block, regs_per_thread, smem_per_block, 0)
                .map_or(0, |it| it.blocks_per_sm);
        }
        let warps_per_block = threads_per_block.div_ceil(32);
        let by_warps = l.max_warps_per_sm / warps_per_block;
        let by_regs = if regs_per_thread == 0 {
            u32::MAX
        } else {
            let unit = l.reg_alloc_unit_per_warp.max(1);
            let regs_per_warp = (regs_per_thread * 32).div_ceil(unit) * unit;
            (l.regs_per_sm / regs_per_warp) / warps_per_block
        };
        let by_smem = if smem_per_block == 0 {
            u32::MAX
        } else {
            let unit = l.smem_alloc_unit_bytes.max(1);
            l.smem_per_sm_bytes / (smem_per_block.div_ceil(unit) * unit)
        };
        by_warps.min(by_regs).min(by_smem).min(l.max_blocks_per_sm)
    }

    /// Builds the params from the GPU database entry, at the boost clock.
    pub fn from_spec(gpu: &gpu_spec::Gpu) -> GpuParams {
        let lat = |key: &str, fallback: f64| {
            gpu.instr_latency_cycles
                .get(key)
                .copied()
                .unwrap_or(fallback)
        };
        GpuParams {
            id: gpu.id.clone(),
            cc: (gpu.cc.major, gpu.cc.minor),
            sm_count: gpu.sm_count,
            clock_mhz: gpu.boost_clock_mhz,
            mem_bandwidth_gbs: gpu.mem_bandwidth_gbs,
            units: SmUnits {
                fp32: gpu.units.fp32_per_sm,
                fp64: gpu.units.fp64_per_sm,
                sfu: gpu.units.sfu_per_sm,
                ldst: gpu.units.ldst_per_sm,
                warp_schedulers: gpu.units.warp_schedulers_per_sm,
            },
            limits: SmLimits {
                max_threads_per_sm: gpu.limits.max_threads_per_sm,
                max_warps_per_sm: gpu.limits.max_warps_per_sm,
                max_blocks_per_sm: gpu.limits.max_blocks_per_sm,
                regs_per_sm: gpu.limits.regs_per_sm,
                reg_alloc_unit_per_warp: gpu.limits.reg_alloc_unit,
                smem_per_sm_bytes: gpu.limits.smem_per_sm_bytes,
                smem_alloc_unit_bytes: gpu.limits.smem_alloc_unit_bytes,
            },
            l2_bytes: gpu.l2_bytes,
            alu_latency_cycles: lat("fp32", lat("addf", 4.0)),
            dram_latency_cycles: gpu.dram_latency_cycles,
            shared_latency_cycles: gpu.shared_latency_cycles,
            tensor_fp16_flops_per_clock_per_sm: tensor_flops_per_clock_per_sm(gpu),
            provenance: vec![format!(
                "GPU facts of `{}` from the gpu-data database (see `warpsight gpus`); resident blocks from NVIDIA's occupancy algorithm",
                gpu.id
            )],
            spec: Some(Box::new(gpu.clone())),
        }
    }

    /// The GPU of a seed paper as the paper describes it, from `gpu-data/paper-gpus.toml`
    /// (every number cited there): `tesla-k20`, `quadro-k4200`, `tesla-m60`, `gtx-1050`,
    /// `a100-sxm4-80gb`. `None` for an id the file does not hold.
    pub fn paper(id: &str) -> Option<GpuParams> {
        gpu_spec::Database::builtin()
            .paper_gpus()
            .iter()
            .find(|g| g.id == id)
            .map(GpuParams::from_paper)
    }

    /// Builds the params from a paper's own description of its GPU. The classic occupancy
    /// limits apply (no `spec`): the papers computed with them.
    pub fn from_paper(gpu: &gpu_spec::PaperGpu) -> GpuParams {
        GpuParams {
            id: gpu.id.clone(),
            cc: (gpu.cc.major, gpu.cc.minor),
            sm_count: gpu.sm_count,
            clock_mhz: gpu.clock_mhz,
            mem_bandwidth_gbs: gpu.mem_bandwidth_gbs,
            units: SmUnits {
                fp32: gpu.fp32_per_sm,
                fp64: gpu.fp64_per_sm,
                sfu: gpu.sfu_per_sm,
                ldst: gpu.ldst_per_sm,
                warp_schedulers: gpu.warp_schedulers_per_sm,
            },
            limits: SmLimits {
                max_threads_per_sm: gpu.max_threads_per_sm,
                max_warps_per_sm: gpu.max_warps_per_sm,
                max_blocks_per_sm: gpu.max_blocks_per_sm,
                regs_per_sm: gpu.regs_per_sm,
                reg_alloc_unit_per_warp: gpu.reg_alloc_unit_per_warp,
                smem_per_sm_bytes: gpu.smem_per_sm_bytes,
                smem_alloc_unit_bytes: gpu.smem_alloc_unit_bytes,
            },
            l2_bytes: gpu.l2_bytes,
            alu_latency_cycles: gpu.alu_latency_cycles,
            dram_latency_cycles: gpu.dram_latency_cycles,
            shared_latency_cycles: gpu.shared_latency_cycles,
            tensor_fp16_flops_per_clock_per_sm: gpu.tensor_fp16_flops_per_clock_per_sm,
            provenance: gpu.provenance.clone(),
            spec: None,
        }
    }

    /// A paper preset that the built-in data must hold (`every_paper_preset_is_in_the_data`
    /// checks each one): the data is compiled in, so a missing entry is a build defect,
    /// not an input error.
    fn builtin_paper(id: &str) -> GpuParams {
        GpuParams::paper(id).unwrap_or_else(|| panic!("gpu-data/paper-gpus.toml has no entry `{id}` (checked by the perf-models tests)"))
    }

    /// NVIDIA Tesla K20 (GK110, CC 3.5), the GPU of seeds 000, 001 and 004.
    pub fn tesla_k20() -> GpuParams {
        GpuParams::builtin_paper("tesla-k20")
    }

    /// NVIDIA Quadro K4200 (GK104, CC 3.0), a GPU of Alavani 2023.
    pub fn quadro_k4200() -> GpuParams {
        GpuParams::builtin_paper("quadro-k4200")
    }

    /// NVIDIA Tesla M60 (one GM204 GPU, CC 5.2), a GPU of Alavani 2023.
    pub fn tesla_m60() -> GpuParams {
        GpuParams::builtin_paper("tesla-m60")
    }

    /// NVIDIA GeForce GTX 1050 (GP107, CC 6.1), a GPU of Alavani 2023.
    pub fn gtx_1050() -> GpuParams {
        GpuParams::builtin_paper("gtx-1050")
    }

    /// NVIDIA A100 SXM4 80 GB (GA100, CC 8.0), a modern reference for the adapters.
    pub fn a100_sxm4_80gb() -> GpuParams {
        GpuParams::builtin_paper("a100-sxm4-80gb")
    }
}

/// Dense FP16 tensor FLOPs per clock per SM from the database entry: twice its
/// `bottleneck.tensor_fp16_fma_per_clk_per_sm` (gpu-data, per architecture, from the
/// whitepapers), 0 where it has none (no tensor cores).
fn tensor_flops_per_clock_per_sm(gpu: &gpu_spec::Gpu) -> f64 {
    crate::bottleneck::tensor_fma_per_clk(gpu).map_or(0.0, |fma| 2.0 * fma)
}

/// Resident blocks per SM of a profile's launch on a database GPU, by NVIDIA's occupancy
/// calculation (the GPU's defaults: opt-in shared memory, default carveout). `None` when
/// the inputs are invalid; `Some(0)` when no block fits.
pub fn resident_blocks(profile: &kernel_profile::KernelProfile, gpu: &gpu_spec::Gpu) -> Option<u32> {
    let threads = u32::try_from(profile.launch.threads_per_block()).ok()?;
    gpu.occupancy(threads, profile.resources.registers_per_thread, profile.resources.static_smem_bytes, profile.launch.dynamic_smem)
        .ok()
        .map(|o| o.blocks_per_sm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_paper_preset_is_in_the_data() {
        for (id, p) in [
            ("tesla-k20", GpuParams::paper("tesla-k20")),
            ("quadro-k4200", GpuParams::paper("quadro-k4200")),
            ("tesla-m60", GpuParams::paper("tesla-m60")),
            ("gtx-1050", GpuParams::paper("gtx-1050")),
            ("a100-sxm4-80gb", GpuParams::paper("a100-sxm4-80gb")),
        ] {
            let p = p.unwrap_or_else(|| panic!("{id} missing from gpu-data/paper-gpus.toml"));
            assert_eq!(p.id, id);
            assert!(p.spec.is_none(), "{id}: a paper preset uses the classic limits");
            assert!(!p.provenance.is_empty(), "{id}");
        }
        assert!(GpuParams::paper("no-such-gpu").is_none());
    }

    #[test]
    fn presets_carry_the_papers_numbers() {
        // Amarís et al. 2016 Table I and Alavani 2023 §3.3.3 / Table 3.2 / Table 4.6.
        let k20 = GpuParams::tesla_k20();
        assert_eq!((k20.sm_count, k20.clock_mhz, k20.mem_bandwidth_gbs, k20.l2_bytes), (13, 706.0, 208.0, 1_310_720));
        assert_eq!((k20.alu_latency_cycles, k20.dram_latency_cycles, k20.shared_latency_cycles), (9.0, 221.0, 47.0));
        let m60 = GpuParams::tesla_m60();
        assert_eq!((m60.limits.max_blocks_per_sm, m60.limits.smem_per_sm_bytes), (32, 98_304));
        assert_eq!(GpuParams::quadro_k4200().clock_mhz, 784.0);
        assert_eq!(GpuParams::a100_sxm4_80gb().tensor_fp16_flops_per_clock_per_sm, 2048.0);
    }

    #[test]
    fn k20_residency_follows_the_classic_limits() {
        let k20 = GpuParams::tesla_k20();
        // 32-thread blocks: the 16-block limit binds.
        assert_eq!(k20.resident_blocks_per_sm(32, 0, 0), 16);
        // 320 threads = 10 warps: 64 / 10 = 6 blocks.
        assert_eq!(k20.resident_blocks_per_sm(320, 0, 0), 6);
        // 256 threads × 64 registers: 16384 registers per block, 4 blocks.
        assert_eq!(k20.resident_blocks_per_sm(256, 64, 0), 4);
        // 20 KB of shared memory per block: 2 blocks in 48 KB.
        assert_eq!(k20.resident_blocks_per_sm(128, 0, 20 * 1024), 2);
        assert_eq!(k20.resident_blocks_per_sm(0, 0, 0), 0);
    }
}
