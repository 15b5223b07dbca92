//! The GPU facts the `wave`, `bsp`, `scheduling` and `roofline` models read.
//!
//! Why a struct of our own: the models need a small, fully resolved set of numbers (SM
//! count, one clock, bandwidth, per-SM unit counts, occupancy limits, a few latencies),
//! and the reproductions of the papers must be able to build exactly the GPU a paper
//! describes (the Tesla K20 of seeds 000, 001 and 004) without going through the GPU
//! database. [`GpuParams::from_spec`] builds one from the database's `gpu_spec::Gpu`; the
//! presets below are the papers' own GPUs, every number cited.
//!
//! The occupancy function here ([`GpuParams::resident_blocks_per_sm`]) delegates to
//! NVIDIA's exact algorithm in `gpu_spec` when the params came from the database
//! ([`GpuParams::spec`]), and otherwise applies the four classic limits (warps, registers, shared memory, blocks)
//! of `cuda_occupancy.h` without the sub-partition and carveout refinements, which is
//! exact for the Kepler-era presets (spec `occupancy.md` §6.2, steps 1–5).

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
/// "Technical Specifications per Compute Capability"; spec `occupancy.md` §6.3).
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
    /// and block limits (spec `occupancy.md` §6.2 steps 1–5, without sub-partitions or
    /// carveouts). Returns 0 when one block does not fit.
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

    /// NVIDIA Tesla K20 (GK110, CC 3.5), the GPU of seeds 000, 001 and 004.
    pub fn tesla_k20() -> GpuParams {
        GpuParams {
            id: "tesla-k20".into(),
            cc: (3, 5),
            // Seed 000 §3, seed 001 Table I, seed 004 Table 4.6 all give 13 SMs.
            sm_count: 13,
            // Seed 001 Table I (706 MHz). Seed 004 Table 4.6 prints 784 MHz, which looks
            // swapped with the Quadro K4200 (spec 004 §9 note); NVIDIA's K20 board
            // specification gives 706 MHz.
            clock_mhz: 706.0,
            // Seed 001 Table I.
            mem_bandwidth_gbs: 208.0,
            // Seed 004 §4.4.7 / Table 4.6 text: 192 SP, 64 DPU, 32 SFU, 32 LD/ST, 4 schedulers.
            units: SmUnits { fp32: 192, fp64: 64, sfu: 32, ldst: 32, warp_schedulers: 4 },
            limits: KEPLER_LIMITS,
            // Seed 004 Table 4.6.
            l2_bytes: 1_310_720,
            // Seed 004 Table 3.2 (addf on the K20).
            alu_latency_cycles: 9.0,
            // Seed 004 §3.3.3: average measured global latency on the K20.
            dram_latency_cycles: 221.0,
            // Seed 004 Table 3.2, last row.
            shared_latency_cycles: 47.0,
            tensor_fp16_flops_per_clock_per_sm: 0.0,
            spec: None,
            provenance: vec![
                "Tesla K20: 13 SMs, 706 MHz, 208 GB/s (seed 001 Table I); 192 SP/64 DPU/32 SFU/32 LSU per SM and 1.25 MB L2 (seed 004 Table 4.6); CC 3.5 limits (CUDA Programming Guide)".into(),
            ],
        }
    }

    /// NVIDIA Quadro K4200 (GK104, CC 3.0), a GPU of seed 004.
    pub fn quadro_k4200() -> GpuParams {
        GpuParams {
            id: "quadro-k4200".into(),
            cc: (3, 0),
            // Seed 004 Table 4.6.
            sm_count: 7,
            // Seed 004 Table 4.6 prints 706 MHz; taken as swapped with the K20 (spec 004
            // §9 note), so 784 MHz.
            clock_mhz: 784.0,
            // Estimate: 256-bit GDDR5 at 5.4 Gbit/s per pin (seed 004 Table 4.6 memory
            // clock 2700 MHz, double data rate) = 172.8 GB/s.
            mem_bandwidth_gbs: 172.8,
            // Seed 004 Table 4.6 (192 cores per SM); FP64, SFU and LD/ST counts of a GK104
            // SM from NVIDIA's GTX 680 (GK104) whitepaper: 8 FP64, 32 SFU, 32 LD/ST.
            units: SmUnits { fp32: 192, fp64: 8, sfu: 32, ldst: 32, warp_schedulers: 4 },
            limits: SmLimits { max_threads_per_sm: 2048, ..KEPLER_LIMITS },
            l2_bytes: 524_288,
            alu_latency_cycles: 10.0,
            dram_latency_cycles: 221.0,
            shared_latency_cycles: 40.0,
            tensor_fp16_flops_per_clock_per_sm: 0.0,
            spec: None,
            provenance: vec![
                "Quadro K4200: seed 004 Table 4.6 (7 SMs, 192 cores/SM, L2) and Table 3.2 latencies; DRAM latency assumed equal to the K20's 221 cycles (estimate)".into(),
            ],
        }
    }

    /// NVIDIA Tesla M60 (one GM204 GPU, CC 5.2), a GPU of seed 004.
    pub fn tesla_m60() -> GpuParams {
        GpuParams {
            id: "tesla-m60".into(),
            cc: (5, 2),
            // Seed 004 Table 4.6.
            sm_count: 16,
            clock_mhz: 1178.0,
            // NVIDIA Tesla M60 board specification: 160 GB/s per GPU.
            mem_bandwidth_gbs: 160.0,
            // Seed 004 Table 4.6 (128 cores per SM); NVIDIA GTX 980 (GM204) whitepaper: 4
            // partitions × 8 LD/ST and 8 SFU, 4 FP64 per SM.
            units: SmUnits { fp32: 128, fp64: 4, sfu: 32, ldst: 32, warp_schedulers: 4 },
            limits: SmLimits { max_blocks_per_sm: 32, smem_per_sm_bytes: 98_304, ..KEPLER_LIMITS },
            l2_bytes: 2_097_152,
            alu_latency_cycles: 15.0,
            dram_latency_cycles: 221.0,
            shared_latency_cycles: 38.0,
            tensor_fp16_flops_per_clock_per_sm: 0.0,
            spec: None,
            provenance: vec![
                "Tesla M60: seed 004 Table 4.6 and Table 3.2; DRAM latency assumed equal to the K20's (estimate)".into(),
            ],
        }
    }

    /// NVIDIA GeForce GTX 1050 (GP107, CC 6.1), a GPU of seed 004.
    pub fn gtx_1050() -> GpuParams {
        GpuParams {
            id: "gtx-1050".into(),
            cc: (6, 1),
            // Seed 004 Table 4.6.
            sm_count: 5,
            clock_mhz: 1493.0,
            // NVIDIA GTX 1050 specification: 128-bit GDDR5 at 7 Gbit/s = 112 GB/s.
            mem_bandwidth_gbs: 112.0,
            // Seed 004 Table 4.6 (128 cores per SM); NVIDIA GTX 1080 (Pascal GP104)
            // whitepaper SM layout: 32 LD/ST, 32 SFU, 4 FP64.
            units: SmUnits { fp32: 128, fp64: 4, sfu: 32, ldst: 32, warp_schedulers: 4 },
            limits: SmLimits { max_blocks_per_sm: 32, smem_per_sm_bytes: 98_304, ..KEPLER_LIMITS },
            l2_bytes: 524_288,
            alu_latency_cycles: 15.0,
            dram_latency_cycles: 221.0,
            shared_latency_cycles: 39.0,
            tensor_fp16_flops_per_clock_per_sm: 0.0,
            spec: None,
            provenance: vec![
                "GTX 1050: seed 004 Table 4.6 and Table 3.2; DRAM latency assumed equal to the K20's (estimate)".into(),
            ],
        }
    }

    /// NVIDIA A100 SXM4 80 GB (GA100, CC 8.0), a modern reference for the adapters.
    pub fn a100_sxm4_80gb() -> GpuParams {
        GpuParams {
            id: "a100-sxm4-80gb".into(),
            cc: (8, 0),
            // NVIDIA A100 Tensor Core GPU Architecture whitepaper, Table 1 / Table 3:
            // 108 SMs, 1410 MHz boost, 64 FP32 + 32 FP64 lanes, 4 SFU×4 and 8 LD/ST×4 per SM.
            sm_count: 108,
            clock_mhz: 1410.0,
            // NVIDIA A100 80GB datasheet: 2039 GB/s (SXM).
            mem_bandwidth_gbs: 2039.0,
            units: SmUnits { fp32: 64, fp64: 32, sfu: 16, ldst: 32, warp_schedulers: 4 },
            // CUDA Programming Guide, CC 8.0: 2048 threads, 32 blocks, 64 K registers,
            // 164 KB shared memory (167,936 B as reported by the driver), 128 B unit.
            limits: SmLimits {
                max_threads_per_sm: 2048,
                max_warps_per_sm: 64,
                max_blocks_per_sm: 32,
                regs_per_sm: 65_536,
                reg_alloc_unit_per_warp: 256,
                smem_per_sm_bytes: 167_936,
                smem_alloc_unit_bytes: 128,
            },
            // Whitepaper: 40 MB L2.
            l2_bytes: 41_943_040,
            // Estimate: 4-cycle FP32 dependent-issue latency as measured on Volta by Jia et
            // al. 2018 ("Dissecting the NVIDIA Volta GPU architecture via microbenchmarking").
            alu_latency_cycles: 4.0,
            // Estimate: of the order of Jia et al.'s Volta/Turing DRAM latencies (~400–500
            // cycles); refine from gpu-data.
            dram_latency_cycles: 470.0,
            // Estimate: Jia et al. report ~20–30 cycles for shared memory on Volta/Turing.
            shared_latency_cycles: 25.0,
            // Whitepaper: 312 TFLOPS dense FP16 / (108 SMs × 1.41 GHz) = 2048 FLOPs/clk/SM.
            tensor_fp16_flops_per_clock_per_sm: 2048.0,
            spec: None,
            provenance: vec![
                "A100 SXM4 80GB: NVIDIA A100 whitepaper (SMs, units, L2, tensor rate) and datasheet (bandwidth); latencies are estimates after Jia et al. 2018".into(),
            ],
        }
    }
}

/// Dense FP16 tensor FLOPs per clock per SM from the database entry, when it records
/// one (as `instr_latency_cycles` does not carry throughputs, we read the issue table's
/// optional `tensor_fp16_flops_per_clock` entry and otherwise assume none).
fn tensor_flops_per_clock_per_sm(gpu: &gpu_spec::Gpu) -> f64 {
    gpu.issue_cycles
        .get("tensor_fp16_flops_per_clock")
        .copied()
        .unwrap_or(0.0)
}

/// Kepler (CC 3.5) occupancy limits: CUDA Programming Guide (CUDA 7 era) Table 12 as
/// collected in spec `occupancy.md` §6.3: 2048 threads, 64 warps, 16 blocks, 64 K
/// registers allocated in 256-register units per warp, 48 KB shared memory in 256 B units.
pub const KEPLER_LIMITS: SmLimits = SmLimits {
    max_threads_per_sm: 2048,
    max_warps_per_sm: 64,
    max_blocks_per_sm: 16,
    regs_per_sm: 65_536,
    reg_alloc_unit_per_warp: 256,
    smem_per_sm_bytes: 49_152,
    smem_alloc_unit_bytes: 256,
};

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
