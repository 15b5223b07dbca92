//! The typed view of one GPU product: what the performance and power models read.
//!
//! A [`Gpu`] is fully resolved: the product's own facts (SM count, clocks, memory), the
//! per-SM microarchitecture facts of its chip (unit counts, latencies; shared by every
//! product with the same SM design) and the occupancy limits of its compute capability.
//! Every number carries a source in [`Gpu::sources`], keyed by field name, so a hover can
//! say where a number came from and whether it is an estimate.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cc::{CcLimits, ComputeCapability};
use crate::occupancy::{self, FuncAttrs, Occupancy, OccupancyError};

/// Functional units and issue resources of one SM.
///
/// Unit counts are per SM (not per sub-partition). A count of 0 means the SM has no such
/// unit (e.g. tensor cores before Volta); fractional throughputs (FP64 on consumer
/// parts is 1/32 or 1/64 of FP32) are expressed as the equivalent unit count, e.g. 2 FP64
/// units per SM on an RTX 3090 SM with 128 FP32 units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmUnits {
    /// FP32 lanes ("CUDA cores") per SM.
    pub fp32_per_sm: u32,
    /// FP64 lanes per SM (or the throughput-equivalent count).
    pub fp64_per_sm: u32,
    /// INT32 lanes per SM (shared with FP32 on archs where the same lanes do both).
    pub int32_per_sm: u32,
    /// Special function units per SM.
    pub sfu_per_sm: u32,
    /// Load/store units per SM.
    pub ldst_per_sm: u32,
    /// Tensor cores per SM (0 before Volta).
    pub tensor_cores_per_sm: u32,
    pub warp_schedulers_per_sm: u32,
    /// Instruction dispatch units per SM (2 per scheduler on Kepler/Maxwell/Pascal,
    /// 1 per scheduler from Volta on).
    pub dispatch_units_per_sm: u32,
}

/// One GPU product with every fact the models need.
///
/// Units are part of every field name. Latencies are in SM clock cycles; bandwidth in
/// GB/s (10^9 bytes per second); sizes in bytes unless the name says otherwise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gpu {
    /// Lowercase slug, e.g. `a100-sxm4-80gb`.
    pub id: String,
    /// Marketing name, e.g. "NVIDIA A100 80GB SXM4".
    pub name: String,
    /// Other ids this GPU answers to (`a100`, `k20`, ...).
    pub aliases: Vec<String>,
    /// Architecture family, e.g. "Ampere".
    pub architecture: String,
    /// Chip, e.g. "GA100".
    pub chip: String,
    /// Key of the SM microarchitecture entry in `gpu-data/architectures.toml`.
    pub sm_arch: String,
    /// Form factor or market segment, e.g. "datacenter", "desktop", "embedded".
    pub segment: String,
    /// Release year.
    pub year: u32,
    pub cc: ComputeCapability,
    /// Occupancy limits of [`Gpu::cc`].
    pub limits: CcLimits,

    /// Enabled streaming multiprocessors.
    pub sm_count: u32,
    pub base_clock_mhz: f64,
    /// The SM clock the models run at: the product's boost clock, or on a view with a locked
    /// clock ([`Gpu::with_locked_clock`]) the locked clock.
    pub boost_clock_mhz: f64,
    /// Only on a view with a locked SM clock ([`Gpu::with_locked_clock`]): the product's own
    /// boost clock, which [`Gpu::boost_clock_mhz`] then replaces. `None` on a database GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rated_boost_clock_mhz: Option<f64>,
    /// "GDDR5", "HBM3", ...
    pub mem_type: String,
    /// Device memory in bytes.
    pub mem_bytes: u64,
    pub mem_bus_width_bits: u32,
    /// Effective data rate per pin in Gbit/s (e.g. 21 for 21 Gbps GDDR6X).
    pub mem_data_rate_gbps: f64,
    /// Peak DRAM bandwidth in GB/s.
    pub mem_bandwidth_gbs: f64,
    /// Combined L1 / shared-memory / texture storage per SM in bytes.
    pub l1_shared_bytes_per_sm: u32,
    /// L2 cache in bytes (whole chip as enabled on this product).
    pub l2_bytes: u64,
    /// Board power (TDP / TGP) in watts.
    pub tdp_w: f64,
    /// Idle power in watts (an estimate for most products; see `sources`).
    pub idle_power_w: f64,

    pub units: SmUnits,

    /// Global-memory (DRAM) access latency in cycles (Hong & Kim's `Mem_LD`).
    pub dram_latency_cycles: f64,
    /// L2 hit latency in cycles.
    pub l2_latency_cycles: f64,
    /// L1 hit latency in cycles.
    pub l1_latency_cycles: f64,
    /// Shared-memory load latency in cycles (no bank conflict).
    pub shared_latency_cycles: f64,
    /// Cycles between consecutive memory transactions of a coalesced warp request
    /// (Hong & Kim's `Departure_del_coal`).
    pub departure_delay_coalesced_cycles: f64,
    /// Cycles between consecutive transactions of an uncoalesced request
    /// (Hong & Kim's `Departure_del_uncoal`).
    pub departure_delay_uncoalesced_cycles: f64,
    /// Departure delay between two L2 transactions (CGPredict's `dd_L2`).
    pub l2_departure_delay_cycles: f64,
    /// Departure delay between two DRAM transactions (CGPredict's `dd_dram`).
    pub dram_departure_delay_cycles: f64,
    /// L1/texture data bandwidth per SM in bytes per SM clock.
    pub l1_bytes_per_clk_per_sm: f64,
    /// Shared-memory bandwidth per SM in bytes per SM clock (banks x bank width, no
    /// conflicts).
    pub shared_bytes_per_clk_per_sm: f64,
    /// Aggregate L2 bandwidth divided by the SM count, in bytes per SM clock.
    pub l2_bytes_per_clk_per_sm: f64,
    /// Fraction of [`Gpu::mem_bandwidth_gbs`] a streaming kernel achieves (0 to 1).
    pub dram_efficiency: f64,
    /// Time per kernel launch for back-to-back launches in one stream, in microseconds.
    pub launch_overhead_us: f64,
    /// Results per clock per SM of native arithmetic instructions, from the CUDA guide's
    /// throughput table for this GPU's compute capability, keyed by the
    /// `ptx_ir::InstrClass::name` of the class where a row maps to one (`fp32`, `fp64`,
    /// `fp16`, `int_alu`, `sfu`, `conversion`, `warp_level`) and by a row name otherwise
    /// (`int_mul`, `int_shift`, `compare_minmax`, ...; all in
    /// [`crate::throughput::THROUGHPUT_KEYS`]). A row the guide marks "Multiple instr." is
    /// absent, and so is the whole table for a compute capability the data does not cover
    /// (see [`Gpu::results_per_clk_per_sm`] for the fallback to unit counts).
    pub throughput: BTreeMap<String, f64>,
    /// Issue cycles per warp instruction of a class, keyed by the `ptx_ir::InstrClass::name`
    /// of the class (`fp32`, `fp64`, `int_alu`, `sfu`, `load_global`, ...): the cycles one
    /// SM needs per warp instruction at full throughput, i.e. warp size / units of that
    /// class per SM (4 on GT200's 8-lane SM, Hong & Kim's `#Issue_cycles`; 32/192 on a
    /// Kepler SM). Where a paper gives a value it is used instead of the derivation.
    /// Classes not present: use [`Gpu::issue_cycles`].
    pub issue_cycles: BTreeMap<String, f64>,
    /// Dependent-issue latency in cycles per instruction class (`fp32`, `fp64`,
    /// `int_alu`, `sfu`, ...) or per PTX operation as measured in Alavani 2023 Table 3.2
    /// (`addf`, `fma`, `divf`, `sqrt`, `mov`, ...). Only what a source gives.
    pub instr_latency_cycles: BTreeMap<String, f64>,
    /// Parameters one paper's model needs and no other, keyed `seedNNN.name`
    /// (e.g. `seed002.dep_delay_128b_cycles`, `seed003.mem_ld_dram_cycles`,
    /// `seed001.g_gm_cycles`). See `gpu-data/README.md` for the keys in use.
    pub model_params: BTreeMap<String, f64>,

    /// Source of every number, keyed by field name (`sm_count`, `units.fp32_per_sm`,
    /// `issue_cycles.fp32`, `limits` ...). Values are citations, or start with
    /// `estimate:` / `derived:` followed by how the number was obtained.
    pub sources: BTreeMap<String, String>,
}

impl Gpu {
    /// The L1 data cache per SM beside `resident` blocks of `smem_per_block` bytes of
    /// shared memory each: the unified L1/shared storage less the blocks' shared memory,
    /// and less at least the compute capability's smallest shared-memory carveout, which
    /// the driver configures even for a kernel with no shared memory (CUDA C++
    /// Programming Guide, "Shared Memory" of compute capability 7.x). That floor is 0 on
    /// every CC but 7.5: Turing's smallest carveout is 32 KB, so its L1 is at most 64 KB
    /// of the 96 (turing-wp: "as large as 64 KB in size, combined with a 32 KB per SM
    /// shared memory allocation").
    ///
    /// The blocks' shared memory is not rounded up to the next carveout, nor the driver's
    /// 1 KB reserve per block (CC 8.0 onwards) added, as the occupancy calculation does:
    /// gpu-benches' pointer chase over 160 kB on the A100 40 GB (a row of the gpu-latency
    /// set of docs/validation.md, fitted; partly L1 hits) is predicted at 0.96 of its time
    /// with a 192-KB L1, at 1.88 with the 184 KB that the 8-KB carveout of one block's
    /// reserve would leave.
    pub fn l1_bytes_per_sm(&self, smem_per_block: u64, resident: u32) -> u64 {
        let unified = u64::from(self.l1_shared_bytes_per_sm);
        let floor = self.limits.smem_carveouts_kib.first().map_or(0, |&kib| u64::from(kib) * 1024);
        unified.saturating_sub(smem_per_block.saturating_mul(u64::from(resident)).max(floor))
    }

    /// Peak FP32 throughput in GFLOP/s at the boost clock (an FMA counts as 2 FLOPs).
    pub fn peak_fp32_gflops(&self) -> f64 {
        2.0 * self.units.fp32_per_sm as f64 * self.sm_count as f64 * self.boost_clock_mhz / 1000.0
    }

    /// Peak FP64 throughput in GFLOP/s at the boost clock (FMA = 2 FLOPs).
    pub fn peak_fp64_gflops(&self) -> f64 {
        2.0 * self.units.fp64_per_sm as f64 * self.sm_count as f64 * self.boost_clock_mhz / 1000.0
    }

    /// Total FP32 lanes ("CUDA cores") on the chip.
    pub fn cuda_cores(&self) -> u32 {
        self.units.fp32_per_sm * self.sm_count
    }

    /// Boost clock in GHz.
    pub fn boost_clock_ghz(&self) -> f64 {
        self.boost_clock_mhz / 1000.0
    }

    /// DRAM bytes per SM clock cycle for the whole chip (bandwidth / boost clock).
    pub fn dram_bytes_per_cycle(&self) -> f64 {
        self.mem_bandwidth_gbs / self.boost_clock_ghz()
    }

    /// Machine balance: FP32 FLOPs per DRAM byte at peak (the roofline ridge point).
    pub fn ridge_point_flops_per_byte(&self) -> f64 {
        self.peak_fp32_gflops() / self.mem_bandwidth_gbs
    }

    /// Results per clock per SM of instruction class `class`: the guide's throughput table
    /// ([`Gpu::throughput`]) where it has the class, otherwise the unit count of the class
    /// (`fp32`, `fp64`, `int_alu`, `sfu`: one result per unit per clock). `None` when
    /// neither is known (a class the table marks "Multiple instr." on this CC, or one with
    /// no unit of its own).
    pub fn results_per_clk_per_sm(&self, class: &str) -> Option<f64> {
        if let Some(v) = self.throughput.get(class) {
            return Some(*v);
        }
        let units = match class {
            "fp32" => self.units.fp32_per_sm,
            "fp64" => self.units.fp64_per_sm,
            "int_alu" => self.units.int32_per_sm,
            "sfu" => self.units.sfu_per_sm,
            _ => return None,
        };
        (units > 0).then_some(units as f64)
    }

    /// Achievable DRAM bandwidth of a streaming kernel in GB/s (datasheet bandwidth x
    /// [`Gpu::dram_efficiency`]).
    pub fn achievable_dram_bandwidth_gbs(&self) -> f64 {
        self.mem_bandwidth_gbs * self.dram_efficiency
    }

    /// Aggregate L2 bandwidth in GB/s at the boost clock.
    pub fn l2_bandwidth_gbs(&self) -> f64 {
        self.l2_bytes_per_clk_per_sm * self.sm_count as f64 * self.boost_clock_ghz()
    }

    /// Aggregate L1/texture bandwidth in GB/s at the boost clock (all SMs).
    pub fn l1_bandwidth_gbs(&self) -> f64 {
        self.l1_bytes_per_clk_per_sm * self.sm_count as f64 * self.boost_clock_ghz()
    }

    /// Aggregate shared-memory bandwidth in GB/s at the boost clock (all SMs).
    pub fn shared_bandwidth_gbs(&self) -> f64 {
        self.shared_bytes_per_clk_per_sm * self.sm_count as f64 * self.boost_clock_ghz()
    }

    /// Maximum resident warps per SM.
    pub fn max_warps_per_sm(&self) -> u32 {
        self.limits.max_warps_per_sm
    }

    /// Issue cycles per warp instruction of class `class` (a `ptx_ir::InstrClass::name`).
    /// Falls back to the `fp32` entry for compute-like classes not listed and to 1 cycle
    /// when nothing is known, which is the one-instruction-per-scheduler-per-cycle ideal.
    pub fn issue_cycles(&self, class: &str) -> f64 {
        self.issue_cycles
            .get(class)
            .or_else(|| self.issue_cycles.get("fp32"))
            .copied()
            .unwrap_or(1.0)
    }

    /// The source of field `field` (as keyed in [`Gpu::sources`]), if recorded.
    pub fn source(&self, field: &str) -> Option<&str> {
        self.sources.get(field).map(String::as_str)
    }

    /// NVIDIA's occupancy calculation for a kernel on this GPU with the calculator's
    /// defaults (opt-in shared-memory limit, default carveout, one block barrier).
    pub fn occupancy(
        &self,
        threads_per_block: u32,
        regs_per_thread: u32,
        static_smem_bytes: u32,
        dynamic_smem_bytes: u32,
    ) -> Result<Occupancy, OccupancyError> {
        let props = occupancy::DeviceProps::from_limits(&self.limits, self.sm_count);
        let attrs = FuncAttrs::new(regs_per_thread, static_smem_bytes, &props);
        occupancy::calculate(&props, &attrs, &occupancy::DeviceState::default(), threads_per_block, dynamic_smem_bytes)
    }

    /// This GPU as a kernel sees it that sets a shared-memory carveout preference of
    /// `percent` % (`cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout,
    /// percent)`; CUDA C++ Programming Guide, "Shared Memory" sections of compute
    /// capabilities 7.x, 8.x and 9.0): the preference caps the SM's shared-memory
    /// configuration, and with it how many blocks that use shared memory fit on an SM.
    ///
    /// How: the occupancy calculation (`cudaOccSMemPerMultiprocessor`) turns the preference
    /// into `percent × limits.smem_per_sm_bytes / 100` snapped up to a supported carveout,
    /// and without a preference snaps `limits.smem_per_sm_bytes` itself. The returned
    /// GPU's `limits.smem_per_sm_bytes` is therefore that product, so every occupancy
    /// computed on it (by [`Gpu::occupancy`], by every model) equals NVIDIA's calculation
    /// with the preference set (tested against `DeviceState::carveout_percent`). Before
    /// compute capability 7.0 there is no carveout API and the GPU is returned unchanged.
    /// A preference of 0 % is refused (no shared-memory capacity to express it with), as
    /// is one above 100 %.
    pub fn with_smem_carveout(&self, percent: u32) -> Result<Gpu, OccupancyError> {
        if percent > 100 {
            return Err(OccupancyError::InvalidInput(format!("carveout {percent}% is above 100%")));
        }
        let mut gpu = self.clone();
        if self.cc.major < 7 {
            return Ok(gpu);
        }
        if percent == 0 {
            return Err(OccupancyError::InvalidInput(
                "a carveout of 0% leaves no shared memory to model; give at least 1%".into(),
            ));
        }
        let max = u64::from(self.limits.smem_per_sm_bytes);
        gpu.limits.smem_per_sm_bytes = u32::try_from(u64::from(percent) * max / 100).unwrap_or(u32::MAX);
        gpu.sources.insert(
            "limits.smem_per_sm_bytes".into(),
            format!(
                "derived: the kernel's shared-memory carveout preference of {percent}% of {max} B \
                 (cudaFuncAttributePreferredSharedMemoryCarveout), snapped up to a carveout by the occupancy calculation"
            ),
        );
        Ok(gpu)
    }

    /// The L2 is split into partitions that each cache what the SMs attached to them access
    /// (model parameter [`L2_PARTITIONS`] above 1: GA100 and GH100), so data every SM reads
    /// may be held twice, and less of a footprint past the nominal size stays.
    pub fn l2_partitioned(&self) -> bool {
        self.model_params.get(L2_PARTITIONS).is_some_and(|v| *v > 1.0)
    }

    /// The same GPU with its kernels launched from a CUDA graph: a back-to-back launch inside
    /// a graph costs less than one in a stream. The model parameter
    /// [`GRAPH_LAUNCH_OVERHEAD_US`] where the database has one, otherwise half the stream
    /// launch overhead: about the ratio of the values derived from gpu-benches'
    /// gpu-small-kernels tables (beyond the kernels' own time: A100 80 GB 0.99 µs per launch
    /// in a graph against 2.25 µs in a stream, A40 0.83 against 1.63), an estimate for other
    /// GPUs.
    pub fn with_graph_launch(&self) -> Gpu {
        let mut gpu = self.clone();
        let (v, src) = match self.model_params.get(GRAPH_LAUNCH_OVERHEAD_US).copied().filter(|v| v.is_finite() && *v > 0.0) {
            Some(v) => (v, self.sources.get(&format!("model_params.{GRAPH_LAUNCH_OVERHEAD_US}")).cloned().unwrap_or_else(|| "gpu-data model parameter".into())),
            None => (
                self.launch_overhead_us * 0.5,
                "estimate: half the stream launch overhead, about the graph/stream ratio of the values derived from gpu-benches' gpu-small-kernels tables (A100 80 GB 0.99 against 2.25 us per launch, A40 0.83 against 1.63)".into(),
            ),
        };
        gpu.launch_overhead_us = v;
        gpu.sources.insert("launch_overhead_us".into(), format!("launched from a CUDA graph: {src}"));
        gpu
    }

    /// The product's own boost clock in MHz, also on a view with a locked clock.
    pub fn rated_boost_mhz(&self) -> f64 {
        self.rated_boost_clock_mhz.unwrap_or(self.boost_clock_mhz)
    }

    /// The clock the models run at as a share of the product's boost clock: 1 on a database
    /// GPU, the lock's share on a view with a locked clock ([`Gpu::with_locked_clock`]); 1
    /// where either clock is not positive.
    pub fn clock_share(&self) -> f64 {
        let rated = self.rated_boost_mhz();
        if rated > 0.0 && self.boost_clock_mhz > 0.0 { self.boost_clock_mhz / rated } else { 1.0 }
    }

    /// The same GPU with its SM clock locked at `mhz` (`nvidia-smi --lock-gpu-clocks`, NVML's
    /// `nvmlDeviceSetGpuLockedClocks`, Kernel Tuner's `nvml_gr_clock`): the models run at that
    /// clock instead of the boost clock ([`Gpu::boost_clock_mhz`] takes it, the rated boost
    /// clock is kept in [`Gpu::rated_boost_clock_mhz`]), the base clock is at most it, and the
    /// DRAM and L2 latencies keep their nanoseconds (fewer cycles at a lower clock). A lock
    /// sets the highest clock the board runs at: its power limit can still lower the clock
    /// below it (NVML API Reference, `nvmlDeviceSetGpuLockedClocks` and
    /// `nvmlClocksEventReasons`). The power model reckons an instruction's energy from the
    /// clock's share of the rated boost clock (`perf_models::power_limit`). A lock above the
    /// rated boost clock is kept: boards that run above it under GPU Boost accept one.
    pub fn with_locked_clock(&self, mhz: f64) -> Result<Gpu, String> {
        let mhz = check_locked_clock(mhz).map_err(|e| format!("a locked SM clock of {e}"))?;
        let mut gpu = self.clone();
        let rated = self.rated_boost_mhz();
        gpu.rated_boost_clock_mhz = Some(rated);
        gpu.boost_clock_mhz = mhz;
        gpu.base_clock_mhz = self.base_clock_mhz.min(mhz);
        // The DRAM and L2 latencies are a time outside the SM, the same nanoseconds at any SM
        // clock (the rule the database applies across the cards of an architecture): fewer
        // cycles at a lower clock.
        if self.boost_clock_mhz > 0.0 {
            let scale = mhz / self.boost_clock_mhz;
            gpu.dram_latency_cycles = self.dram_latency_cycles * scale;
            gpu.l2_latency_cycles = self.l2_latency_cycles * scale;
        }
        gpu.sources.insert("boost_clock_mhz".into(), format!("locked SM clock {mhz:.0} MHz (the rated boost clock is {rated:.0} MHz)"));
        Ok(gpu)
    }
}

/// A locked SM clock in MHz as given (a flag, a rows file, a Kernel Tuner cache): finite and
/// from 1 to 10000 MHz ([`Gpu::with_locked_clock`]); the error says why not.
pub fn check_locked_clock(mhz: f64) -> Result<f64, String> {
    if mhz.is_finite() && (1.0..=10_000.0).contains(&mhz) { Ok(mhz) } else { Err(format!("{mhz} MHz is not a clock from 1 to 10000 MHz")) }
}

/// Model-parameter key (`[arch.model_params]`) of the time per kernel launch inside a CUDA
/// graph, in microseconds ([`Gpu::with_graph_launch`]).
pub const GRAPH_LAUNCH_OVERHEAD_US: &str = "graph_launch_overhead_us";

/// Model-parameter key (`[arch.model_params]`) of the number of partitions the L2 is split
/// into, each caching the data the SMs of its own GPCs access ([`Gpu::l2_partitioned`]).
pub const L2_PARTITIONS: &str = "l2_partitions";
