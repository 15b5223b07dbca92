//! `bottleneck`: the headline model for current GPUs. It charges the kernel's work to every
//! resource that can bind (the issue slots, each functional pipe, the L1 and shared-memory
//! data paths, the L2, DRAM, same-address atomics) and adds the time the resident warps
//! cannot hide (Little's law), then names the resource that binds.
//!
//! Why a model of its own: the seed models were built for GT200 to Maxwell and fed by
//! profilers; on a GPU with four schedulers per SM, 40 MB of L2 and HBM they are off by
//! large factors (docs/validation.md). This model is built from the mechanisms that the
//! GPU programmer's own tools name (Nsight Compute's "Speed of Light" sections: DRAM, L2,
//! L1, shared, pipes, issue) with a few parameters of physical meaning per architecture.
//!
//! **Throughput terms** (cycles on the busiest SM, or chip-wide seconds):
//! - issue: one warp instruction per scheduler per cycle (CUDA C++ Programming Guide,
//!   "Hardware Multithreading" and the per-CC "Architecture" sections: 4 schedulers per SM
//!   since Maxwell), over all warp instructions of the blocks the SM runs;
//! - each pipe: warp instructions × 32 / results per clock per SM of the class (CUDA C++
//!   Programming Guide, "Arithmetic Instructions", throughput table; the lane counts of the
//!   architecture whitepapers where the table has no row); integer multiply-adds share the
//!   FMA pipe with FP32 since Volta, and every integer instruction shares the CUDA cores
//!   with FP32 before it (Nsight Compute Kernel Profiling Guide, "Pipelines"; Tesla V100
//!   whitepaper, "Volta SM Architecture"); an FP32 instruction reading three registers the
//!   operand reuse cache cannot supply takes 3 / [`Params::register_reads_per_clk`] cycles
//!   of its partition, which binds on SMs whose FP32 pipe takes one instruction per clock;
//! - L1: one wavefront per cycle, a request's wavefronts being the larger of its data-bank
//!   passes and its tag lookups (`kernel_profile::access::l1_wavefronts`), or the bytes its
//!   lanes read at the L1's bytes per clock, whichever is more; shared: one wavefront
//!   (128 B) per cycle, bank conflicts as extra
//!   wavefronts (CUDA C++ Best Practices Guide, "Shared Memory and Memory Banks"), a
//!   store's at the rate the banks take writes where the load path is narrower
//!   ([`Params::shared_store_bytes_per_clk_per_sm`]: Turing); since
//!   Volta, and before Maxwell, L1 and shared memory are one memory with one data stage, so
//!   the larger of the two terms also carries the other's cycles
//!   ([`Params::unified_l1_shared`]); a store
//!   leaves for L2 as one request per 128-byte line its warp touches, at most one every
//!   [`Params::store_request_cycles`] per SM, which the L1 term also takes;
//! - lsu: every warp memory instruction (global, local, shared, generic, and ptxas's
//!   register spills) passes the SM's load/store units, 32 lanes per warp over the LD/ST
//!   units per SM (architecture whitepapers: 16 on Turing, GA10x and Ada, so 2 cycles per
//!   warp instruction; 32 on GV100, GA100 and GH100);
//! - L2 and DRAM: chip-wide bytes at the achievable bandwidth (the datasheet peak times an
//!   achievable fraction, STREAM-style measurements reach 85–95 %);
//! - same-address atomics: serialised in the L2 slice of their line, `atomic_serial_ns` each
//!   (estimate from one measurement, [`fitted::ATOMIC_SERIAL_NS`]), integer operations on
//!   one address [`Params::integer_atomic_serial_ns`] where an architecture has its own;
//!   those of a data-dependent index over a known table, its lanes over the table's lines.
//!
//! **Latency term** (Little's law, V. Volkov, "Understanding Latency Hiding on GPUs", PhD
//! thesis, UC Berkeley 2016, ch. 4): a warp runs its dependence chain in order: the critical
//! path of each basic block's dependence graph weighted by instruction latencies (a global
//! load costs the latency of the level that serves it), times the block's executions, plus
//! a block turnaround (launch, prologue, retirement); a load's data is back once the L1 has
//! passed its wavefronts, one a cycle, behind those of the warp's earlier loads. The SM
//! runs its blocks in waves of the resident blocks, so the latency time is waves × chain. A streaming kernel at low
//! occupancy is latency-bound, at full occupancy bandwidth-bound, as measured.
//!
//! **In-order issue.** A warp issues its instructions in program order, so an instruction
//! waiting for an operand holds up those after it, and with one warp per scheduler nothing
//! fills the wait. Each basic block's in-order schedule (`InOrder`: one instruction per
//! cycle at most, each once its operands are ready and its partition's share of its pipe is
//! free; off-chip loads and their address arithmetic out of order, as ptxas hoists them) is
//! therefore a second bound on one warp's time for the block beside its critical path. The
//! chain takes the critical path plus a per-architecture share of what the in-order schedule
//! needs beyond it ([`Params::in_order_exposure`]: measured on Turing, whole; on GA10x, a
//! quarter; elsewhere none, for want of measurements). It is the PTX's order, not the SASS's:
//! what ptxas reorders is what the share stands for. The hoisted loads and their address
//! arithmetic take the pipes on a timeline of their own: ptxas issued them earlier, into
//! slots the in-order stream left free.
//!
//! **Loops ptxas unrolls.** A loop with a run-time trip count that ptxas unrolls by 4 more
//! (`kernel_profile::sass`, item 8) issues its copies' off-chip loads together
//! ([`kernel_profile::BlockProfile::ptxas_copies`]): the copies wait once, for the likeliest
//! of their loads to miss (the load latency's shares added over the copies), and each keeps the
//! rest of its path.
//!
//! **Combination.** The throughput terms run on different units at the same time, so the
//! largest of them, `T_thr`, is the time the work needs (the "Speed of Light" view). The
//! latency term `T_lat` overlaps with it, but not perfectly: as the binding resource
//! approaches saturation, requests queue and the loaded latency grows (the measured
//! bandwidth bends smoothly into its ceiling instead of meeting it at a corner). What the
//! queue lengthens is the part of the latency term spent waiting on the memory system,
//! `T_mem` (waves × the off-chip loads on the chain), not the block's dispatch and
//! retirement or its arithmetic. With a queueing delay proportional to utilisation,
//! `T = T_lat + κ·T_mem·u/(1−u)` with `u = T_thr/T`, whose solution is
//! `T = ((T_thr + T_lat) + √((T_thr − T_lat)² + 4κ·T_thr·T_mem)) / 2`:
//! `κ = 0` is perfect overlap (the larger term); with `T_mem = T_lat`, `κ = 1` is none (the
//! sum); a kernel that waits on no load (stores only) meets its ceiling at a corner, as
//! gpu-benches' `init` does. The rest of the chain, `T_lat − T_mem` (its dependent
//! instructions' latencies, barrier waits, block dispatch and retirement), queues the same
//! way for the SM's issue slots and pipes as they fill: a second term
//! `κ·(T_lat − T_mem)·v/(1−v)` with `v = T_sm/T`, `T_sm` the largest SM-side throughput term
//! (issue, a pipe, shared memory), and the time is the root of the sum ([`combine`]). It
//! matters where an SM-side term and the memory terms are both close to the latency term:
//! a dot product's blocks that load, then reduce in shared memory, on Maxwell (0.52-0.71 of
//! the measured times without it, docs/heldout.md), whose SMs wait for DRAM and then for
//! their own reduction. One κ ([`Params::latency_exposure`]) is fitted on measurements and
//! serves both queues. The launch overhead is added once.
//!
//! **Barrier phases.** The chain is one warp's, and the overlap above assumes the warps of
//! an SM drift apart, so that some compute while others wait. A barrier (`bar.sync`,
//! `__syncthreads()`) undoes that within a block: every thread of the block waits at it
//! until all have arrived (PTX ISA, `bar.sync`; CUDA C++ Programming Guide,
//! "Synchronization Functions"), so a block that loads a tile, meets at the barrier and then
//! computes on it waits for its loads with nothing else of its own to run, and computes
//! with no load of its own in flight. A wave of blocks therefore takes at least the
//! off-chip part of the chain plus the block's own work on its busiest SM unit (the
//! SM-local throughput terms over the blocks an SM runs), plus the per-block overheads.
//! With several resident blocks, the others fill the gaps and the throughput terms bind
//! instead; with one (a 1024-thread block, a large tile) the phase sum is the time. This is
//! why CUDA's asynchronous copies exist (CUDA C++ Programming Guide, "Asynchronous Data
//! Copies": double buffering loads the next tile while computing on this one). The bound is
//! a floor under the combination, not a term in it: there is no queueing to add on top.
//!
//! The parameters and where they come from are in [`Params`]; `warpsight calibrate` refits
//! the ones marked calibratable from a user's own measurements.

pub mod calibrate;

use std::collections::{BTreeMap, HashMap};

use kernel_profile::traffic::{self, CacheConfig, Traffic};
use kernel_profile::{InstrClass, KernelProfile, Space};

use crate::prediction::{Bound, Confidence, Pipe, Prediction};

/// The model's name in reports.
pub const NAME: &str = "bottleneck";

/// Bytes in a sector, the unit of L1/L2/DRAM traffic (CUDA C++ Best Practices Guide,
/// "Coalesced Access to Global Memory": 32-byte segments).
const SECTOR_BYTES: f64 = 32.0;

/// Bytes in a cache line, four sectors (CUDA C++ Programming Guide, "Global Memory" of
/// compute capability 5.x and later: 128-byte cache lines, 32-byte memory transactions).
const LINE_BYTES: u64 = 128;

/// The parameters the model reads for one GPU, resolved from the database entry. Each
/// field says where its value comes from; [`Params::sources`] carries the citation strings
/// for the explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub sm_count: u32,
    /// SM clock in Hz (the boost clock of the database entry).
    pub clock_hz: f64,
    pub schedulers_per_sm: f64,
    /// Results per clock per SM by pipe.
    pub pipe_rate: BTreeMap<Pipe, f64>,
    /// Conversions from and to 64-bit types (`cvt` with an `f64` side, or between a float and
    /// a 64-bit integer) per clock per SM: the CUDA C++ Programming Guide's throughput table
    /// ("type conversions from and to 64-bit types": 2 on compute capability 7.5, 8.6 and
    /// 8.9, 16 on 7.0, 8.0 and 9.0), on the FP64 pipe (`F2F.F64.F32`, `I2F.F64`; `conv64` says which `cvt`s).
    pub conversion_64_rate: f64,
    /// Integer multiply-adds (PTX `mul`/`mad` on integers; SASS `IMAD`) per clock per SM,
    /// where the CUDA guide's table gives them (`int_mul`, compute capability 7.0 and
    /// later): they run on the FMA pipe with FP32, not on the integer ALU.
    pub int_mul_rate: Option<f64>,
    /// FP32 and INT32 instructions share the CUDA cores (compute capability below 7.0):
    /// "Unlike Pascal GPUs, which could not execute FP32 and INT32 instructions
    /// simultaneously, the Volta GV100 SM includes separate FP32 and INT32 cores" (NVIDIA
    /// Tesla V100 GPU Architecture whitepaper, 2017, "Volta SM Architecture").
    pub fp32_int_shared: bool,
    /// Widening a half to a float is not a conversion-unit instruction (compute capability
    /// 7.5 and later): nvdisasm (ptxas 13.5, sm_75, sm_80, sm_86, sm_89, sm_90) shows
    /// `cvt.f32.f16` as `HADD2.F32` (the FMA pipe's half-precision add, writing a float) and
    /// `cvt.f32.bf16` as a `PRMT` or `SHF` (the bits moved into the upper half), where the
    /// narrowing `cvt.rn.f16.f32` (`F2F.F16.F32` on sm_75, `F2FP.PACK_AB` from sm_80) and
    /// `F2I` stay conversions. Not checked on Volta (nvcc 13.5 has no sm_70).
    pub widening_off_conversion_unit: bool,
    /// Dense FP16-input tensor-core multiply-adds per clock per SM (gpu-data, per
    /// architecture, from the whitepapers); `None` where the database has no value.
    pub tensor_fma_per_clk: Option<f64>,
    /// FP16/BF16 tensor MMAs with FP32 accumulation run at half the FP16-accumulate rate:
    /// GeForce cards since Turing (the Turing, GA102 and Ada whitepapers' tables give the
    /// GeForce boards "FP16 Tensor TFLOPS with FP32 Accumulate" at half the FP16-accumulate
    /// figure; the TITAN, workstation and datacenter boards at the same).
    pub tensor_fp32_acc_half_rate: bool,
    /// The rate of the warp-level tensor instructions (`mma.sync`, `wmma.mma`) relative to
    /// [`Params::tensor_fma_per_clk`], where the SM reaches its peak only through another
    /// instruction (Hopper's warpgroup `wgmma.mma_async`): `bottleneck.sync_mma_rate_fraction`
    /// in gpu-data, 1 where the architecture has none.
    pub sync_mma_fraction: f64,
    pub l1_bytes_per_clk_per_sm: f64,
    pub shared_bytes_per_clk_per_sm: f64,
    /// Bytes per clock per SM that shared-memory stores write into the banks:
    /// `bottleneck.shared_store_bytes_per_clk_per_sm` where an architecture's load path is
    /// narrower than its 32 four-byte banks (Turing: loads at 64 B per clock, the banks'
    /// 128 B per clock for stores, an estimate in gpu-data), else
    /// [`Params::shared_bytes_per_clk_per_sm`].
    pub shared_store_bytes_per_clk_per_sm: f64,
    /// L1 and shared memory are one memory with one data stage (compute capability 7.0
    /// and later: "Volta ... combines L1 data cache and shared memory into a single
    /// memory block", Tesla V100 GPU Architecture whitepaper, "L1 Data Cache and Shared
    /// Memory"; Nsight Compute counts both kinds of wavefront in
    /// `l1tex__data_pipe_lsu_wavefronts`; and before Maxwell, where one 64 KB array per SM
    /// is split between the two: Fermi whitepaper, "NVIDIA Parallel DataCache with
    /// Configurable L1 and Unified L2 Cache"; Kepler GK110/210 whitepaper, "Shared Memory
    /// and L1 Cache"): a global request's wavefronts and a shared request's take turns
    /// there. Maxwell and Pascal gave shared memory its own array, the L1 going with the
    /// texture cache (GTX 980 and Tesla P100 whitepapers), so there the two terms run side
    /// by side.
    pub unified_l1_shared: bool,
    /// Whole-chip L2 bandwidth in bytes per SM clock.
    pub l2_bytes_per_clk: f64,
    /// Datasheet DRAM bandwidth in bytes per second.
    pub dram_peak_bytes_per_s: f64,
    /// Achievable fraction of [`Params::dram_peak_bytes_per_s`]. Calibratable.
    pub dram_efficiency: f64,
    /// Bytes of data-bus time one DRAM row activation costs (`Traffic::dram_activations`):
    /// a channel opens a row no faster than one per this many bytes it could have moved,
    /// so the DRAM term is the larger of the bytes and the activations × this, over the
    /// achievable bandwidth. Every GDDR generation (`mem_type` in gpu-data; judged on GDDR5
    /// and GDDR6 boards): [`fitted::GDDR_ACTIVATION_BYTES`], or
    /// `bottleneck.dram_activation_bytes` where a GPU has its own; HBM, with many more banks
    /// and channels per byte of bandwidth, and the DDR and LPDDR of small boards: 0, not
    /// counted (docs/models/bottleneck.md, `dram`).
    pub dram_activation_bytes: f64,
    /// Unloaded latencies in SM cycles.
    pub dram_latency_cycles: f64,
    pub l2_latency_cycles: f64,
    pub l1_latency_cycles: f64,
    pub shared_latency_cycles: f64,
    pub alu_latency_cycles: f64,
    pub fp64_latency_cycles: f64,
    pub sfu_latency_cycles: f64,
    /// Time a resident block slot spends per block outside the kernel's own chain: the
    /// block's dispatch by the work distributor, its first instructions' operand fetch
    /// from the constant cache and its retirement, in ns. Calibratable.
    pub block_overhead_ns: f64,
    /// Time after a warp's last store (or RED: an atomic whose result is not read) before
    /// its slot is free (the write's acknowledgement from L2), in ns.
    pub store_drain_ns: f64,
    /// One kernel launch in a stream, back to back, in µs.
    pub launch_overhead_us: f64,
    /// SM clock cycles the work distributor needs per block, chip-wide: a grid of many
    /// tiny blocks is bound by how fast blocks can be handed to the SMs. Estimate: about
    /// one block per cycle, from gpu-benches' small-kernel sweep at 32 threads per block
    /// (A100 80 GB: 223,207 blocks in 167 µs after the launch, 1.06 cycles per block at
    /// 1410 MHz; A40: 10,101 blocks in 6.3 µs, 1.08 cycles at 1740 MHz).
    pub block_launch_cycles: f64,
    /// SM cycles between two store requests an SM sends to L2 (one per 128-byte line a
    /// warp's store touches). See [`fitted::STORE_REQUEST_CYCLES`].
    pub store_request_cycles: f64,
    /// SM cycles per request that a global load L1 does not keep sends to L2 (one per
    /// 128-byte line the warp's load touches, `Traffic::l2_load_line_requests`), on the
    /// architectures where such requests take their turn with the stores'
    /// (`bottleneck.load_request_cycles` in gpu-data: Kepler); 0, not counted, elsewhere
    /// (Maxwell's and Pascal's unified L1/texture unit takes them a line per cycle, the L1
    /// term, and the L2 term counts their sectors).
    pub load_request_cycles: f64,
    /// Time the L2 takes per atomic operation on one cache line, in ns: atomics to one
    /// address (or to the lines of a small table such as a histogram's bins) are performed
    /// one after another by the slice that holds the line. See [`fitted::ATOMIC_SERIAL_NS`].
    pub atomic_serial_ns: f64,
    /// The same for operations on integer data (`MemoryAccess::integer_atomic`) in turn on
    /// one address (or a request's lanes on the words of one line), where an architecture
    /// has its own measurement (`bottleneck.integer_atomic_serial_ns` in gpu-data: Turing,
    /// GA10x and GH100), else [`Params::atomic_serial_ns`]. A data-dependent scatter over a
    /// table of several words takes [`Params::atomic_serial_ns`] per operation and line
    /// (`Traffic::atomic_serialised_integer_lanes` leaves it out): an H100's byte histogram
    /// of 256 counters is measured at 2.1 ns per operation and line, where the H200 chains
    /// integer adds on one address at 0.73 ns.
    pub integer_atomic_serial_ns: f64,
    /// κ: how much of the latency spent waiting on off-chip loads stays exposed as the
    /// binding resource saturates, and of the rest of the chain as the SM-side units do
    /// (0: perfect overlap, 1: none; module documentation, "Combination"). Calibratable.
    pub latency_exposure: f64,
    /// Achievable fraction of the SM's load/store-unit and shared-memory throughput (the
    /// `lsu` and `shared` terms), 1 unless calibrated: what a kernel's mix of memory and
    /// arithmetic instructions reaches of the LD/ST lanes' and the banks' nominal rates, as
    /// `dram_efficiency` is for DRAM. Calibratable, within 0.05-1: fitted on half of
    /// Kernel Tuner's convolution per card it is 0.77-1.00 (docs/validation.md,
    /// "Calibration on held-out halves").
    pub lsu_efficiency: f64,
    /// The share of the FP32 pipe's time that the load/store path does not overlap: the
    /// `lsu` or `shared` term (the larger) takes this share of the `fp32` term on top of its
    /// own. 0 (the two overlap: the larger binds) unless gpu-data or a calibration sets it.
    /// An empirical parameter, its mechanism not identified: see
    /// [`fitted::FP32_LSU_SERIAL_SHARE_TURING`] for where the Turing value comes from.
    /// Calibratable, within 0-1.
    pub fp32_lsu_serial_share: f64,
    /// The share of a lone warp's in-order waits that the dependence chain takes: each basic
    /// block counts the critical path of its dependence graph plus this share of what the
    /// block's in-order issue ([`InOrder`], in PTX order) needs beyond it. 1 takes the
    /// in-order schedule whole, 0 the critical path alone. An empirical parameter: how much
    /// of the waits that PTX order shows ptxas's reordering and the hardware leave exposed is
    /// not derived from the architecture; see [`fitted::IN_ORDER_EXPOSURE_TURING`]. 0 unless
    /// gpu-data sets it.
    pub in_order_exposure: f64,
    /// Register-file operand reads per clock per SM partition, where gpu-data gives them
    /// (Volta and later: 2). An FP32 instruction that reads three registers none of which
    /// the previous instruction read ([`kernel_profile::model::InstrNode::reads_three_registers`])
    /// then takes 3 / this many cycles of its partition, which binds where the FP32 pipe
    /// takes one instruction per clock (GA10x, Ada, Hopper: 32 lanes per partition) and not
    /// where it takes one per two (GV100, TU10x, GA100: 16). Derived, not fitted: see
    /// gpu-data/architectures.toml and docs/models/bottleneck.md.
    pub register_reads_per_clk: Option<f64>,
    /// The latency of a load the far partition of a split L2 serves, over the L2 latency
    /// (`bottleneck.l2_far_latency_factor` in gpu-data: GA100 and GH100, read off
    /// gpu-benches' gpu-latency tables; 1 elsewhere). Weighs the L2 latency by
    /// `Traffic::l2_far_share`.
    pub l2_far_latency_factor: f64,
    /// The board's power limit and fixed draw, where gpu-data has them: a kernel whose
    /// demand at the boost clock exceeds the limit runs at the clock that meets it
    /// ([`crate::power_limit`]; [`estimate`]).
    pub power_budget: Option<crate::power_limit::Budget>,
    /// The SM clock is locked (`gpu_spec::Gpu::with_locked_clock`): [`Params::clock_hz`] is
    /// the locked clock, not the boost clock.
    pub locked_clock: bool,
    /// Set when the parameters were fitted to the user's measurements.
    pub calibrated_on: Option<u32>,
    pub sources: Vec<String>,
}

/// Model-parameter keys in `gpu-data` (`[arch.model_params]`, `[gpu.overrides.model_params]`
/// or a user GPU file written by `warpsight calibrate`).
pub mod keys {
    pub const DRAM_EFFICIENCY: &str = "bottleneck.dram_efficiency";
    pub const BLOCK_OVERHEAD_NS: &str = "bottleneck.block_overhead_ns";
    pub const STORE_DRAIN_NS: &str = "bottleneck.store_drain_ns";
    pub const LATENCY_EXPOSURE: &str = "bottleneck.latency_exposure";
    /// [`super::Params::lsu_efficiency`].
    pub const LSU_EFFICIENCY: &str = "bottleneck.lsu_efficiency";
    /// [`super::Params::fp32_lsu_serial_share`].
    pub const FP32_LSU_SERIAL_SHARE: &str = "bottleneck.fp32_lsu_serial_share";
    /// [`super::Params::in_order_exposure`].
    pub const IN_ORDER_EXPOSURE: &str = "bottleneck.in_order_exposure";
    pub const DRAM_LATENCY_CYCLES: &str = "bottleneck.dram_latency_cycles";
    pub const CALIBRATED_ON: &str = "bottleneck.calibrated_on";
    /// Dense FP16-input tensor-core multiply-adds per clock per SM (the architecture's
    /// `[arch.model_params]` in gpu-data/architectures.toml, from the whitepapers).
    pub const TENSOR_FMA_PER_CLK: &str = "bottleneck.tensor_fp16_fma_per_clk_per_sm";
    /// [`super::Params::sync_mma_fraction`] (Hopper: about 2/3).
    pub const SYNC_MMA_FRACTION: &str = "bottleneck.sync_mma_rate_fraction";
    /// [`super::Params::atomic_serial_ns`] where an architecture has its own value.
    pub const ATOMIC_SERIAL_NS: &str = "bottleneck.atomic_serial_ns";
    /// [`super::Params::integer_atomic_serial_ns`] of an architecture that has it.
    pub const INTEGER_ATOMIC_SERIAL_NS: &str = "bottleneck.integer_atomic_serial_ns";
    /// [`super::Params::store_request_cycles`] where an architecture has its own value.
    pub const STORE_REQUEST_CYCLES: &str = "bottleneck.store_request_cycles";
    /// [`super::Params::load_request_cycles`] of an architecture that has it.
    pub const LOAD_REQUEST_CYCLES: &str = "bottleneck.load_request_cycles";
    /// [`super::Params::register_reads_per_clk`].
    pub const REGISTER_READS_PER_CLK: &str = "bottleneck.register_reads_per_clk";
    /// [`super::Params::shared_store_bytes_per_clk_per_sm`] of an architecture that has it.
    pub const SHARED_STORE_BYTES_PER_CLK: &str = "bottleneck.shared_store_bytes_per_clk_per_sm";
    /// [`super::Params::l2_far_latency_factor`].
    pub const L2_FAR_LATENCY_FACTOR: &str = "bottleneck.l2_far_latency_factor";
    /// [`super::Params::dram_activation_bytes`] of a GPU that has its own.
    pub const DRAM_ACTIVATION_BYTES: &str = "bottleneck.dram_activation_bytes";
}

/// Defaults fitted on the gpu-benches `gpu-stream` tables of the V100 and the A100 80 GB
/// (public measurements by D. Ernst, github.com/te42kyfo/gpu-benches at commit 1c36d50;
/// held out: A100 40 GB and A40), see docs/validation.md for the fit and the held-out error.
pub mod fitted {
    /// See [`super::Params::block_overhead_ns`].
    pub const BLOCK_OVERHEAD_NS: f64 = 240.0;
    /// See [`super::Params::store_drain_ns`].
    pub const STORE_DRAIN_NS: f64 = 50.0;
    /// See [`super::Params::latency_exposure`].
    pub const LATENCY_EXPOSURE: f64 = 0.25;
    /// See [`super::Params::dram_efficiency`], used where the database has no value.
    pub const DRAM_EFFICIENCY: f64 = 0.95;
    /// See [`super::Params::block_launch_cycles`] (an estimate from the gpu-benches
    /// `gpu-small-kernels` tables of the A100 80 GB and the A40; the H200 and L40 tables
    /// are held out in the shared data).
    pub const BLOCK_LAUNCH_CYCLES: f64 = 1.0;
    /// See [`super::Params::atomic_serial_ns`]. Estimate from one measurement: 2^23 float
    /// `atomicAdd`s on one address (all 32 lanes of every request) on an RTX 3090 take
    /// 13.56 ms (MasterSkepticista, "Embarrassingly Parallel Reduction in CUDA", 2025:
    /// 9.9 GB/s over 2^25 floats, one atomic per four), 1.6 ns each, 2.7 cycles of its
    /// 1695-MHz SM clock. Consistent, not fitted: the same card's tree reductions with one
    /// atomic per block take 244 µs for 131,072 blocks and 157 µs for 65,536, above the
    /// 210 and 105 µs this gives; an H100's 2^30 integer atomics on 256 bins (1 KiB, 8
    /// lines) take 276 ms (yencal, "GPU Histogram", 2025), 2.1 ns per operation per line;
    /// the Kepler GK110 whitepaper's "one operation per clock" on a common address is
    /// 1.1-1.4 ns at its 706-875 MHz. A time rather than SM cycles: the 3090 and the H100
    /// agree in ns (1.6, 2.1), not in cycles (2.7, 4.1). docs/heldout.md has the rows.
    pub const ATOMIC_SERIAL_NS: f64 = 1.6;
    /// See [`super::Params::store_request_cycles`]. Fitted on one kind of kernel on one
    /// architecture: R100001's PMPP array sum `c[i * n + j] = a[...] + b[...]` with
    /// threadIdx.x down the columns (a warp's store touches 32 lines, 4 bytes or less in
    /// each; its loads are the block's, reused from L1), 8192² elements in 32 × 32 blocks on
    /// an RTX 3060, 3060 Ti and 3070 Ti: 1-, 2- and 4-byte elements take the same time, which
    /// is not the bytes' but the requests': 4.45-5.06 SM cycles per store request and SM,
    /// median 4.73 (the nine rows of docs/heldout.md, therefore fitted). Judged: yencal's
    /// naive transpose on an H100 SXM (2^30 four-byte stores down columns, 18.06 ms), 4.40
    /// cycles at 1980 MHz; the same array sums on an RTX 2060, 6.1-6.4 (Turing: slower).
    /// No documentation gives the rate; a coalesced store (one line per request) never meets
    /// it (an A100 at 4.73 cycles per 128-byte request sends 4.1 TB/s).
    pub const STORE_REQUEST_CYCLES: f64 = 4.73;
    /// See [`super::Params::dram_activation_bytes`]. Fitted on one row: R100001's PMPP
    /// array sum down the columns (`add_not_coalesced_u32`, 8192² four-byte elements in
    /// 8 × 8 blocks, so that the 448 resident blocks of an RTX 3060 hold one 32-byte sector
    /// of each of 3584 rows, 32 KiB apart, at a time: one activation per sector) runs in
    /// 8.664 ms, 92.9 GB/s, against the 316.8 GB/s that the card's 360 GB/s × 0.88 (GA10x's
    /// `dram_efficiency`) gives to whole pages: 32 × 316.8 / 92.9 = 109 bytes. Physically,
    /// the activate-to-activate time of a channel (tRRD and the four-activation window,
    /// which the GDDR6 standard leaves to the vendors' datasheets) in units of its data
    /// bus: a 16-bit GDDR6 channel at 15 Gbit/s moves 30 bytes a ns, so 109 bytes is 3.6
    /// ns. Judged on the other GDDR boards' column walks (docs/heldout.md, thirty-seventh
    /// note), whose rates scatter about it.
    pub const GDDR_ACTIVATION_BYTES: f64 = 109.0;
    /// See [`super::Params::fp32_lsu_serial_share`]; the Turing (`tu10x`) value in
    /// gpu-data/architectures.toml, repeated here for the tests that check it. Fitted on one
    /// card and judged on another: on the RTX 2080 Ti's 34 configurations of Kernel Tuner's
    /// convolution (docs/validation.md) the mean |ln(predicted/measured)| is smallest near 0.3
    /// (0.22 at 0, 0.205 at 0.2 and 0.3, 0.23 at 0.6, 0.29 at 1: a one-off scan of the share
    /// with the other parameters fixed, not in the repository); on the held-out TITAN RTX the
    /// median ratio is 0.90. The first fit, before the combination's SM-side queue (module
    /// documentation, "Combination"), took the end of the range, 1 (0.51 at 0, 0.31 at 1):
    /// that queue now charges part of what the share carried. On Turing the convolution's
    /// measured times are close to the `lsu` or `shared` term plus the `fp32` term over
    /// configurations whose two terms differ fourfold, which a clock lower than the rated
    /// boost (a common factor) would not give.
    /// Not identified: a simulation of one partition issuing nvcc's SASS in order, with the
    /// pipes' occupancies, overlapped the two (docs/models/bottleneck.md). The GA10x cards of
    /// the same corpus would take about 0.3 by the same scan (0 by `calibrate`) and the RTX
    /// A6000 SGEMM of docs/heldout.md 0, so the other architectures keep 0.
    pub const FP32_LSU_SERIAL_SHARE_TURING: f64 = 0.3;
    /// See [`super::Params::in_order_exposure`]; the Turing (`tu10x`) value in
    /// gpu-data/architectures.toml, repeated here for the tests that check it. Fitted on the
    /// RTX 2080 Ti's 34 configurations of Kernel Tuner's convolution and judged on the TITAN
    /// RTX (docs/validation.md): the configurations with at most one resident warp per
    /// scheduler ran 1.6-2.1 times longer than the throughput terms and the critical path
    /// allowed (per-row breakdowns, not in the repository), about one shared-load latency
    /// per shared load, which is what the in-order
    /// schedule of nvcc's PTX (each `ld.shared` followed by the `fma` that reads it) gives.
    /// The end of the range: the whole in-order schedule.
    pub const IN_ORDER_EXPOSURE_TURING: f64 = 1.0;
    /// See [`super::Params::in_order_exposure`]; the GA10x value in gpu-data, fitted on the RTX
    /// 3090's convolution configurations (the RTX 3060 Laptop and the RTX A6000 SGEMM of
    /// docs/heldout.md held out). The same PTX schedule over-predicts the GA10x cards' lone
    /// warps (up to 1.7 times at one to two warps per scheduler, in per-row breakdowns not
    /// in the repository): their SMs hide most of the waits that Turing's leave exposed, why
    /// is not identified.
    pub const IN_ORDER_EXPOSURE_GA10X: f64 = 0.25;
}

/// [`Params::tensor_fma_per_clk`] of a database GPU (the one place that reads it, shared
/// with the roofline's tensor term).
pub(crate) fn tensor_fma_per_clk(gpu: &gpu_spec::Gpu) -> Option<f64> {
    gpu.model_params.get(keys::TENSOR_FMA_PER_CLK).copied().filter(|v| v.is_finite() && *v > 0.0)
}

/// [`Params::tensor_fp32_acc_half_rate`] of a database GPU.
fn tensor_fp32_acc_half_rate(gpu: &gpu_spec::Gpu) -> bool {
    gpu.name.contains("GeForce") && gpu.cc.major >= 7
}

impl Params {
    /// Resolves the parameters of a database GPU.
    pub fn from_gpu(gpu: &gpu_spec::Gpu) -> Params {
        let mp = |k: &str| gpu.model_params.get(k).copied().filter(|v| v.is_finite() && *v > 0.0);
        let mut sources = vec![format!(
            "`{}`: SMs, clock, DRAM bandwidth and latencies from the gpu-data database",
            gpu.id
        )];
        if let Some(rated) = gpu.rated_boost_clock_mhz {
            sources.push(format!(
                "SM clock locked at {:.0} MHz (rated boost clock {rated:.0} MHz): the clock-bound terms run at it, the DRAM and L2 latencies keep their nanoseconds, and the power limit can still lower it",
                gpu.boost_clock_mhz
            ));
        }
        let lanes = |n: u32| f64::from(n.max(1));
        let mut pipe_rate = BTreeMap::new();
        let u = &gpu.units;
        // The CUDA guide's table, else the unit counts (`Gpu::results_per_clk_per_sm`), else
        // the fallback named here.
        let table = |key: &str, fallback: f64| -> f64 {
            gpu.results_per_clk_per_sm(key).filter(|v| *v > 0.0).unwrap_or(fallback)
        };
        pipe_rate.insert(Pipe::Fp32, table("fp32", lanes(u.fp32_per_sm)));
        pipe_rate.insert(Pipe::Fp64, table("fp64", lanes(u.fp64_per_sm)));
        pipe_rate.insert(Pipe::Fp16, table("fp16", 2.0 * lanes(u.fp32_per_sm)));
        pipe_rate.insert(Pipe::Int, table("int_alu", lanes(u.int32_per_sm)));
        pipe_rate.insert(Pipe::Sfu, table("sfu", lanes(u.sfu_per_sm)));
        pipe_rate.insert(Pipe::Conversion, table("conversion", lanes(u.sfu_per_sm)));
        pipe_rate.insert(Pipe::WarpLevel, table("warp_level", 32.0));
        pipe_rate.insert(Pipe::Lsu, lanes(u.ldst_per_sm));
        if !gpu.throughput.is_empty() {
            sources.push(format!(
                "pipe rates: CUDA C++ Programming Guide throughput table for CC {}",
                gpu.cc
            ));
        }
        let calibrated_on = mp(keys::CALIBRATED_ON).map(|v| v as u32);
        let dram_efficiency = mp(keys::DRAM_EFFICIENCY)
            .or(Some(gpu.dram_efficiency).filter(|v| *v > 0.0 && *v <= 1.0))
            .unwrap_or(fitted::DRAM_EFFICIENCY);
        Params {
            sm_count: gpu.sm_count.max(1),
            clock_hz: gpu.boost_clock_mhz * 1e6,
            schedulers_per_sm: lanes(u.warp_schedulers_per_sm),
            pipe_rate,
            conversion_64_rate: table("conversion_64", table("fp64", lanes(u.fp64_per_sm))),
            int_mul_rate: gpu.results_per_clk_per_sm("int_mul").filter(|v| *v > 0.0 && gpu.cc.major >= 7),
            fp32_int_shared: gpu.cc.major < 7,
            widening_off_conversion_unit: (gpu.cc.major, gpu.cc.minor) >= (7, 5),
            tensor_fma_per_clk: tensor_fma_per_clk(gpu),
            tensor_fp32_acc_half_rate: tensor_fp32_acc_half_rate(gpu),
            sync_mma_fraction: mp(keys::SYNC_MMA_FRACTION).filter(|v| *v > 0.0 && *v <= 1.0).unwrap_or(1.0),
            l1_bytes_per_clk_per_sm: gpu.l1_bytes_per_clk_per_sm,
            shared_bytes_per_clk_per_sm: gpu.shared_bytes_per_clk_per_sm,
            shared_store_bytes_per_clk_per_sm: mp(keys::SHARED_STORE_BYTES_PER_CLK)
                .filter(|v| *v > 0.0)
                .unwrap_or(gpu.shared_bytes_per_clk_per_sm),
            unified_l1_shared: gpu.cc.major < 5 || gpu.cc.major >= 7,
            l2_bytes_per_clk: gpu.l2_bytes_per_clk_per_sm * f64::from(gpu.sm_count.max(1)),
            dram_peak_bytes_per_s: gpu.mem_bandwidth_gbs * 1e9,
            dram_efficiency,
            dram_activation_bytes: mp(keys::DRAM_ACTIVATION_BYTES)
                .unwrap_or(if crate::power_limit::Memory::from_mem_type(&gpu.mem_type) == Some(crate::power_limit::Memory::Gddr) { fitted::GDDR_ACTIVATION_BYTES } else { 0.0 }),
            dram_latency_cycles: mp(keys::DRAM_LATENCY_CYCLES).unwrap_or(gpu.dram_latency_cycles),
            l2_latency_cycles: gpu.l2_latency_cycles,
            l1_latency_cycles: gpu.l1_latency_cycles,
            shared_latency_cycles: gpu.shared_latency_cycles,
            alu_latency_cycles: gpu.instr_latency_cycles.get("fp32").copied().unwrap_or(4.0),
            fp64_latency_cycles: gpu
                .instr_latency_cycles
                .get("fp64")
                .copied()
                .unwrap_or(8.0),
            sfu_latency_cycles: gpu.instr_latency_cycles.get("sfu").copied().unwrap_or(18.0),
            block_overhead_ns: mp(keys::BLOCK_OVERHEAD_NS).unwrap_or(fitted::BLOCK_OVERHEAD_NS),
            store_drain_ns: mp(keys::STORE_DRAIN_NS).unwrap_or(fitted::STORE_DRAIN_NS),
            launch_overhead_us: gpu.launch_overhead_us,
            block_launch_cycles: fitted::BLOCK_LAUNCH_CYCLES,
            store_request_cycles: mp(keys::STORE_REQUEST_CYCLES).unwrap_or(fitted::STORE_REQUEST_CYCLES),
            load_request_cycles: mp(keys::LOAD_REQUEST_CYCLES).unwrap_or(0.0),
            atomic_serial_ns: mp(keys::ATOMIC_SERIAL_NS).unwrap_or(fitted::ATOMIC_SERIAL_NS),
            integer_atomic_serial_ns: mp(keys::INTEGER_ATOMIC_SERIAL_NS)
                .or(mp(keys::ATOMIC_SERIAL_NS))
                .unwrap_or(fitted::ATOMIC_SERIAL_NS),
            latency_exposure: gpu
                .model_params
                .get(keys::LATENCY_EXPOSURE)
                .copied()
                .filter(|v| v.is_finite())
                .unwrap_or(fitted::LATENCY_EXPOSURE)
                .clamp(0.0, 1.0),
            lsu_efficiency: mp(keys::LSU_EFFICIENCY).filter(|v| *v <= 1.0).unwrap_or(1.0),
            fp32_lsu_serial_share: mp(keys::FP32_LSU_SERIAL_SHARE).map_or(0.0, |v| v.min(1.0)),
            in_order_exposure: mp(keys::IN_ORDER_EXPOSURE).map_or(0.0, |v| v.min(1.0)),
            register_reads_per_clk: mp(keys::REGISTER_READS_PER_CLK),
            l2_far_latency_factor: mp(keys::L2_FAR_LATENCY_FACTOR).filter(|v| *v >= 1.0).unwrap_or(1.0),
            power_budget: crate::power_limit::Budget::of(gpu),
            locked_clock: gpu.rated_boost_clock_mhz.is_some(),
            calibrated_on,
            sources,
        }
    }

    /// Results per clock per SM of a pipe: the tensor pipe's fallback is an eighth of the
    /// FP16 rate (for instructions whose shape gives no multiply-adds), an unknown pipe 32.
    fn results_per_clk(&self, pipe: Pipe) -> f64 {
        match pipe {
            Pipe::Tensor => self.pipe_rate.get(&Pipe::Fp16).copied().unwrap_or(128.0) / 8.0,
            _ => self.pipe_rate.get(&pipe).copied().unwrap_or(32.0),
        }
    }

    fn cycles_to_us(&self, cycles: f64) -> f64 {
        cycles / self.clock_hz * 1e6
    }

    fn ns_to_cycles(&self, ns: f64) -> f64 {
        ns * 1e-9 * self.clock_hz
    }
}

/// The pipe an instruction class executes on, `None` for classes that only take an issue
/// slot (moves, branches) or that the memory terms charge (loads, stores).
fn pipe_of(class: InstrClass) -> Option<Pipe> {
    match class {
        InstrClass::Fp32 => Some(Pipe::Fp32),
        InstrClass::Fp64 => Some(Pipe::Fp64),
        InstrClass::Fp16 => Some(Pipe::Fp16),
        InstrClass::IntAlu => Some(Pipe::Int),
        InstrClass::Sfu => Some(Pipe::Sfu),
        InstrClass::Conversion => Some(Pipe::Conversion),
        InstrClass::WarpLevel => Some(Pipe::WarpLevel),
        InstrClass::Tensor => Some(Pipe::Tensor),
        InstrClass::Load(_) | InstrClass::Store(_) | InstrClass::Atomic(_) => Some(Pipe::Lsu),
        _ => None,
    }
}

/// Results of the pipe's rate one warp instruction takes: 32 lanes, and 64 on the FP16 pipe.
/// The CUDA guide's table counts a half2 instruction's lane as two results, and ptxas issues
/// a single-half operation as the same instruction on one half (`HADD2`, `HFMA2` with a
/// `.H0_H0` operand): an FP16 warp instruction takes 64 results either way.
fn results_per_instr(pipe: Pipe) -> f64 {
    if pipe == Pipe::Fp16 { 64.0 } else { 32.0 }
}

/// The memory spaces whose accesses pass the SM's load/store units (the `lsu` term):
/// global, local, shared and generic. Constant, parameter and texture loads use other paths.
fn lsu_space(s: Space) -> bool {
    matches!(s, Space::Global | Space::Local | Space::Shared | Space::Generic)
}

/// One named term of the estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub bound: Bound,
    pub us: f64,
    /// The numbers behind it, in words.
    pub detail: String,
}

/// The whole estimate, for the explanation, the breakdown and `calibrate`.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub terms: Vec<Term>,
    pub launch_us: f64,
    pub time_us: f64,
    pub binding: Bound,
    pub traffic: Traffic,
    pub resident_blocks_per_sm: u32,
    pub waves: f64,
    /// One warp's dependence chain in cycles (without the block overhead).
    pub chain_cycles: f64,
    /// The part of [`Estimate::chain_cycles`] spent waiting on off-chip loads and atomics
    /// (global, local, generic, texture) on the critical paths.
    pub chain_offchip_cycles: f64,
    /// Barrier-synchronised kernels only: the phase bound (module doc, "Barrier phases").
    pub phases: Option<Phases>,
    /// The SM clock the estimate ran at, as a share of the boost clock: below 1 where the
    /// board's power limit binds ([`estimate`]).
    pub clock_ratio: f64,
    /// The time the kernel would take at the boost clock, in µs (`time_us` unless the power
    /// limit lowered the clock).
    pub boost_clock_time_us: f64,
}

/// The cache configuration the traffic estimate needs: L1 is the unified L1/shared
/// storage per SM less the resident blocks' shared memory, at least the smallest carveout
/// ([`gpu_spec::Gpu::l1_bytes_per_sm`]), as the roofline floor takes it
/// (`roofline::cache_config`).
pub fn cache_config(gpu: &gpu_spec::Gpu, profile: &KernelProfile, resident: u32) -> CacheConfig {
    let smem = u64::from(profile.resources.static_smem_bytes.saturating_add(profile.launch.dynamic_smem));
    CacheConfig {
        sm_count: gpu.sm_count,
        l1_bytes_per_sm: gpu.l1_bytes_per_sm(smem, resident),
        l2_bytes: gpu.l2_bytes,
        resident_blocks_per_sm: resident,
        l1_caches_global_loads: kernel_profile::traffic::l1_caches_global_loads(gpu.cc.major),
        l2_partitioned: gpu.l2_partitioned(),
    }
}

/// Latency of a global (or local/generic) load: the expected level that serves it. The
/// loads of one basic block are issued together and the warp waits for the slowest. Loads
/// of one array at offsets less than a line apart, with the same pattern, touch the same
/// lines (the neighbours of a stencil, the four elements of a row that an unrolled loop
/// reads): a load that "hits" a line another load of the block is still fetching waits for
/// the same fill, so the block misses L1 with probability `min(1, Σ aᵢ)` and waits for
/// DRAM with `min(1, Σ mᵢ)` over such a group, with `aᵢ`, `mᵢ` the array's shares of a
/// requested sector that miss L1 and that come from DRAM ([`Traffic::load_shares`]): four
/// loads of a row, each sector read by eight loads in turn, miss on every second pass
/// (4 × 1/8). Groups that one loop walks at once (a row of the matrix and the vector of a
/// product; the four rows of B an unrolled naive product reads) cross their sector
/// boundaries on the same passes, so the block waits on the group most likely to miss, not
/// on the sum of them. Loads without an affine array wait as the kernel's average load,
/// each on its own (nothing says they share lines). The latency is then
/// `l1 + P(L1 miss)·(l2 − l1) + P(DRAM)·(dram − l2)`.
struct LoadLatency {
    l1_cycles: f64,
    l2_cycles: f64,
    dram_cycles: f64,
    /// The kernel's average shares of a requested load sector that miss L1 and that come
    /// from DRAM.
    average: (f64, f64),
    /// Per array: the same shares, in the steady state of repeated launches.
    arrays: HashMap<String, (f64, f64)>,
}

impl LoadLatency {
    fn new(t: &Traffic, p: &Params) -> LoadLatency {
        let l1 = t.l1_load_sectors.max(0.0);
        let l2 = t.l2_load_sectors.max(0.0).min(l1.max(t.l2_load_sectors));
        let to_l2 = if l1 > 0.0 { (l2 / l1).clamp(0.0, 1.0) } else { 1.0 };
        // What the L2 keeps across launches (all of it when `l2_resident`, else
        // `l2_kept_bytes`, counted against the reads) comes from L2.
        let dram_sectors = if t.l2_resident { 0.0 } else { (t.dram_read_bytes - t.l2_kept_bytes).max(0.0) / SECTOR_BYTES };
        let miss = if l2 > 0.0 { (dram_sectors / l2).clamp(0.0, 1.0) } else { 0.0 };
        // The arrays' DRAM shares are a cold launch's; the steady state keeps what the L2
        // holds across launches, as `dram_sectors` above.
        let steady = if t.l2_resident || t.dram_read_bytes <= 0.0 { 0.0 } else { ((t.dram_read_bytes - t.l2_kept_bytes) / t.dram_read_bytes).clamp(0.0, 1.0) };
        let arrays = t.load_shares.iter().map(|(base, s)| (base.clone(), (s.to_l2, s.to_dram * steady))).collect();
        LoadLatency {
            l1_cycles: p.l1_latency_cycles,
            l2_cycles: p.l2_latency_cycles.max(p.l1_latency_cycles) * (1.0 + t.l2_far_share.clamp(0.0, 1.0) * (p.l2_far_latency_factor - 1.0).max(0.0)),
            dram_cycles: p.dram_latency_cycles.max(p.l2_latency_cycles).max(p.l1_latency_cycles),
            average: (to_l2, to_l2 * miss),
            arrays,
        }
    }

    /// The latency of a wait that misses L1 with probability `l2` and needs DRAM with `dram`.
    fn latency(&self, l2: f64, dram: f64) -> f64 {
        let dram = dram.clamp(0.0, 1.0);
        let l2 = l2.clamp(dram, 1.0);
        self.l1_cycles + l2 * (self.l2_cycles - self.l1_cycles) + dram * (self.dram_cycles - self.l2_cycles)
    }

    /// The latency of `loads_in_block` loads of the kernel's average shares.
    fn for_block(&self, loads_in_block: usize) -> f64 {
        let k = loads_in_block.max(1) as f64;
        self.latency(k * self.average.0, k * self.average.1)
    }

    /// The latency of the off-chip loads of `block`, each with its array's shares where
    /// the profile links it to an access of a known array.
    #[cfg(test)]
    fn for_loads(&self, profile: &KernelProfile, block: &kernel_profile::BlockProfile) -> f64 {
        self.for_copies(self.shares(profile, block), 1.0)
    }

    /// The wait of `copies` copies of a block whose loads issue together (a loop ptxas
    /// unrolls, [`kernel_profile::BlockProfile::ptxas_copies`]), of the block's `shares`
    /// ([`LoadLatency::shares`]): each group's chances to miss add up over the copies, and
    /// the copies wait once, for the likeliest to miss. A walk along a row that misses once
    /// per two iterations waits for DRAM once per four.
    fn for_copies(&self, shares: (f64, f64), copies: f64) -> f64 {
        let copies = copies.max(1.0);
        self.latency(copies * shares.0, copies * shares.1)
    }

    /// The chances that one execution of `block` waits for L2 and for DRAM: those of its
    /// group of loads likeliest to miss (`latency` clamps them to 1).
    fn shares(&self, profile: &KernelProfile, block: &kernel_profile::BlockProfile) -> (f64, f64) {
        // Groups of loads that touch the same lines: of one array, with the same pattern
        // (coefficients of the thread, block and loop indices), at constant offsets less
        // than a line apart from the group's first. Each with Σ of its loads' shares.
        let mut groups: Vec<(Option<&kernel_profile::model::AddressPattern>, f64, f64)> = Vec::new();
        for ins in block.instructions.iter().filter(|i| matches!(i.class, InstrClass::Load(s) if offchip(s))) {
            let pattern = access_of(profile, ins).and_then(|a| a.address.as_ref());
            let Some((p, &(a, m))) = pattern.and_then(|p| self.arrays.get(&p.base).map(|s| (p, s))) else {
                // Nothing says that loads of unknown addresses touch the same lines (the
                // 32 dependent loads of an unrolled pointer chase do not): each waits as the
                // kernel's average load.
                groups.push((None, self.average.0, self.average.1));
                continue;
            };
            let same_lines = |q: &kernel_profile::model::AddressPattern| q.same_but_offset(p) && (q.offset - p.offset).unsigned_abs() < LINE_BYTES;
            match groups.iter_mut().find(|g| g.0.is_some_and(same_lines)) {
                Some(g) => {
                    g.1 += a;
                    g.2 += m;
                }
                None => groups.push((Some(p), a, m)),
            }
        }
        if groups.is_empty() {
            // No off-chip load: the kernel's average, as `for_block(0)`.
            return self.average;
        }
        groups.iter().fold((0.0_f64, 0.0_f64), |(l2, dram), &(_, a, m)| (l2.max(a), dram.max(m)))
    }
}

/// The memory access an instruction makes (`InstrNode::access`), where the profile links it.
fn access_of<'a>(profile: &'a KernelProfile, ins: &kernel_profile::InstrNode) -> Option<&'a kernel_profile::MemoryAccess> {
    ins.access.and_then(|a| profile.memory_accesses.get(a as usize))
}

/// One warp's dependence chain, and the part of it spent waiting on off-chip loads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Chain {
    /// Σ over basic blocks of executions × the critical path of the block's dependence
    /// graph, each instruction weighted by its latency.
    cycles: f64,
    /// The part of [`Chain::cycles`] that is load latency of off-chip loads and atomics
    /// (global, local, generic, texture: the levels [`LoadLatency`] serves) on the same
    /// critical paths.
    offchip_cycles: f64,
}

/// One warp's dependence chain in cycles: Σ over basic blocks of executions × the critical
/// path of the block's dependence graph, each instruction weighted by its latency, plus
/// [`Params::in_order_exposure`] of what the block's in-order schedule ([`InOrder`]: a warp
/// issues its instructions in program order, so an instruction that waits for an operand
/// holds up the ones after it) needs beyond that path. Along the way each instruction carries the off-chip load latency of the path that finishes it
/// (that of its latest-finishing operand plus its own); the instruction that ends the
/// block's critical path gives the block's off-chip part. Where two operands finish at the
/// same cycle, the path with more off-chip latency is taken: the warp is then waiting on
/// that load too. A shared store that a barrier waits for ([`stores_awaited_by_a_barrier`])
/// takes the shared-memory latency, and a barrier after it in the block starts once it is
/// performed (`bar.sync` orders the memory accesses before it: PTX ISA, `bar.sync`).
fn chain_cycles(profile: &KernelProfile, p: &Params, loads: &LoadLatency) -> Chain {
    let mut total = Chain::default();
    let groups = guarded_groups(profile);
    let index: HashMap<u32, usize> = profile.blocks.iter().enumerate().map(|(i, b)| (b.id, i)).collect();
    // Per group of guarded bodies: the largest (executions × path) so far, counted once;
    // ordered, so that the sum below is the same on every run.
    let mut group_max: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
    for (bi, block) in profile.blocks.iter().enumerate() {
        if block.executions <= 0.0 || block.instructions.is_empty() {
            continue;
        }
        let awaited = stores_awaited_by_a_barrier(profile, &index, block);
        let shares = loads.shares(profile, block);
        let load_lat = loads.for_copies(shares, 1.0);
        let mut in_order = InOrder::new(&block.instructions);
        // (finish cycle, off-chip load cycles on the path that finishes it)
        let mut finish = vec![(0.0_f64, 0.0_f64); block.instructions.len()];
        let mut path = (0.0_f64, 0.0_f64);
        // The shared stores a barrier of this block waits for, as (finish, off-chip part).
        let mut pending = (0.0_f64, 0.0_f64);
        // When the L1 has passed the wavefronts of this warp's loads so far.
        let mut l1_free = 0.0_f64;
        for (i, ins) in block.instructions.iter().enumerate() {
            let mut ready = ins
                .deps
                .iter()
                .filter_map(|&d| finish.get(d as usize).copied())
                .fold((0.0_f64, 0.0_f64), later);
            if ins.class == InstrClass::Barrier {
                ready = later(ready, pending);
                pending = (0.0, 0.0);
            }
            let (lat, offchip_lat) = match ins.class {
                // A shared store that a barrier waits for before any other memory access:
                // `bar.sync` completes only once the memory accesses before it are performed
                // (PTX ISA, `bar.sync`), so the store's latency is on the warp's path.
                InstrClass::Store(Space::Shared) if awaited.get(i).copied().unwrap_or(false) => (p.shared_latency_cycles, 0.0),
                // A store, or an atomic whose result nothing reads (ptxas issues a RED), is
                // handed to the memory system: the warp does not wait for it.
                InstrClass::Store(_) => (0.0, 0.0),
                InstrClass::Atomic(_) if ins.result_unused => (0.0, 0.0),
                InstrClass::Load(s) | InstrClass::Atomic(s) if offchip(s) => (load_lat, load_lat),
                InstrClass::Load(Space::Shared) | InstrClass::Atomic(Space::Shared) => {
                    (p.shared_latency_cycles, 0.0)
                }
                InstrClass::Load(_) => (p.l1_latency_cycles, 0.0),
                InstrClass::Fp64 => (p.fp64_latency_cycles, 0.0),
                InstrClass::Sfu | InstrClass::Conversion => (p.sfu_latency_cycles, 0.0),
                InstrClass::Barrier => (p.shared_latency_cycles, 0.0),
                _ => (p.alu_latency_cycles, 0.0),
            };
            finish[i] = (ready.0 + lat, ready.1 + offchip_lat);
            if offchip_lat > 0.0 {
                // The warp's own wavefronts pass the L1 one a cycle: a load's data is back
                // its wavefronts after it gets its turn, behind those of the loads it was
                // issued with.
                let w = access_of(profile, ins).and_then(|a| a.active_l1_wavefronts()).unwrap_or(1.0);
                let start = ready.0.max(l1_free);
                l1_free = start + w;
                finish[i].0 = start + w - 1.0 + lat;
            }
            let awaited_store = matches!(ins.class, InstrClass::Store(Space::Shared)) && awaited.get(i).copied().unwrap_or(false);
            if awaited_store {
                pending = later(pending, finish[i]);
            }
            path = later(path, finish[i]);
            in_order.issue(i, ins, lat, awaited_store, p);
        }
        // The in-order schedule waits on the same loads as the critical path: its off-chip
        // part is the path's.
        let exposure = p.in_order_exposure.clamp(0.0, 1.0);
        let mut path = (path.0 + exposure * (in_order.length - path.0).max(0.0), path.1);
        // A loop ptxas unrolls by 4 more issues its copies' off-chip loads together (the
        // `LDG`s of 16 iterations at the top of nvcc's loop unrolled by 4, nvdisasm): the
        // copies wait for them once, and each keeps the rest of its path.
        if let Some(k) = block.ptxas_copies.filter(|k| k.is_finite() && *k > 1.0)
            && load_lat > 0.0
        {
            let per_copy = path.1 * loads.for_copies(shares, k) / load_lat / k;
            path = (path.0 - path.1 + per_copy, per_copy);
        }
        // A block of threads takes as long as its slowest warp: the busiest warp's
        // executions where the simulation found one busier than the average.
        let executions = block.busiest_executions();
        let weighted = (executions * path.0, executions * path.1);
        match groups.get(bi).copied().flatten() {
            Some(g) => {
                let m = group_max.entry(g).or_insert((0.0, 0.0));
                *m = later(*m, weighted);
            }
            None => {
                total.cycles += weighted.0;
                total.offchip_cycles += weighted.1;
            }
        }
    }
    for (cycles, offchip) in group_max.into_values() {
        total.cycles += cycles;
        total.offchip_cycles += offchip;
    }
    total
}

/// One warp issuing a basic block in program order, alone on its scheduler: each
/// instruction issues one cycle after the one before it at the earliest (one instruction per
/// scheduler per clock: CUDA C++ Programming Guide, "Hardware Multithreading"), once its
/// operands are ready and once its partition's share of its pipe has taken the previous
/// instruction of that pipe ([`partition_cycles`]). Only the off-chip loads (global, local,
/// generic, texture) and the instructions that compute their addresses are taken out of
/// order: ptxas schedules the long-latency loads as early as their addresses allow, where it
/// interleaves shared loads with the arithmetic that uses them (nvdisasm of Kernel Tuner's
/// convolution for sm_75 and sm_86: the tile's `LDG`s issued back to back at the top, each
/// `LDS` a few instructions ahead of its `FFMA`s). The block's length is when its last
/// result is ready. With one warp per scheduler nothing fills the cycles it waits, so this is one
/// warp's time for the block, however many cycles the SM's throughput terms need: a lone
/// warp waits out the latency of each shared load the next instructions need.
struct InOrder {
    /// When each instruction's result is ready in this schedule.
    ready: Vec<f64>,
    /// The off-chip loads and their address slices, which issue out of order.
    hoisted: Vec<bool>,
    last_issue: f64,
    /// When each pipe of the partition takes its next instruction: of the in-order stream,
    /// and of the hoisted one, which ptxas issued earlier, into slots the in-order stream
    /// left free (a hoisted address add does not queue behind the multiply-add that waited
    /// for the previous load).
    pipe_free: BTreeMap<Pipe, f64>,
    hoisted_pipe_free: BTreeMap<Pipe, f64>,
    /// Shared stores that a barrier waits for, as in [`chain_cycles`].
    pending: f64,
    length: f64,
}

impl InOrder {
    fn new(instructions: &[kernel_profile::InstrNode]) -> InOrder {
        let n = instructions.len();
        // Backwards: an off-chip load, and whatever an already hoisted instruction reads.
        let mut hoisted = vec![false; n];
        for i in (0..n).rev() {
            let ins = &instructions[i];
            if matches!(ins.class, InstrClass::Load(s) if offchip(s)) {
                hoisted[i] = true;
            }
            if hoisted[i] {
                for &d in &ins.deps {
                    if let Some(h) = hoisted.get_mut(d as usize).filter(|_| (d as usize) < i) {
                        *h = true;
                    }
                }
            }
        }
        InOrder { ready: vec![0.0; n], hoisted, last_issue: -1.0, pipe_free: BTreeMap::new(), hoisted_pipe_free: BTreeMap::new(), pending: 0.0, length: 0.0 }
    }

    /// Issues instruction `i` of latency `lat`.
    fn issue(&mut self, i: usize, ins: &kernel_profile::InstrNode, lat: f64, awaited_store: bool, p: &Params) {
        let mut operands = ins.deps.iter().filter_map(|&d| self.ready.get(d as usize).copied()).fold(0.0_f64, f64::max);
        if ins.class == InstrClass::Barrier {
            operands = operands.max(self.pending);
            self.pending = 0.0;
        }
        let (pipe, cycles) = partition_cycles(ins, p);
        let hoisted = self.hoisted.get(i).copied().unwrap_or(false);
        let timeline = if hoisted { &mut self.hoisted_pipe_free } else { &mut self.pipe_free };
        let free = pipe.and_then(|q| timeline.get(&q).copied()).unwrap_or(0.0);
        let at = if hoisted { operands.max(free) } else { (self.last_issue + 1.0).max(operands).max(free) };
        if let Some(q) = pipe {
            timeline.insert(q, at + cycles);
        }
        if !hoisted {
            self.last_issue = at;
        }
        if let Some(r) = self.ready.get_mut(i) {
            *r = at + lat;
        }
        if awaited_store {
            self.pending = self.pending.max(at + lat);
        }
        self.length = self.length.max(at + lat);
    }
}

/// The pipe that holds a warp instruction on its SM partition, and for how many cycles:
/// 32 lanes (64 results for FP16, a half2 per lane) over the partition's share of the
/// pipe's results per clock (the SM's rate over its schedulers), so 2 cycles for an FP32
/// instruction on Turing's 16 FP32 lanes per partition and 1 on GA10x's 32 (turing-wp,
/// ga102-wp); a memory instruction of the spaces the `lsu` term charges holds the
/// partition's LD/ST units (8 cycles on 4 per partition); a tensor instruction its
/// multiply-adds at the partition's share of the tensor rate. `None` for instructions that
/// take only their issue slot.
fn partition_cycles(ins: &kernel_profile::InstrNode, p: &Params) -> (Option<Pipe>, f64) {
    // A warp instruction of `results` at the SM's `rate` per clock, on one of its partitions.
    let on_partition = |results: f64, rate: f64| if rate > 0.0 { results * p.schedulers_per_sm / rate } else { 1.0 };
    match ins.class {
        InstrClass::Load(s) | InstrClass::Store(s) | InstrClass::Atomic(s) => {
            if lsu_space(s) {
                (Some(Pipe::Lsu), on_partition(32.0, p.results_per_clk(Pipe::Lsu)))
            } else {
                (None, 1.0)
            }
        }
        InstrClass::Tensor => {
            let shaped = p.tensor_fma_per_clk.filter(|r| *r > 0.0).zip(tensor_op(&ins.opcode, p));
            let cycles = match shaped {
                Some((rate, (fmas, factor))) => fmas / (rate * factor) * p.schedulers_per_sm,
                None => on_partition(32.0, p.results_per_clk(Pipe::Tensor)),
            };
            (Some(Pipe::Tensor), cycles)
        }
        InstrClass::Conversion => match conv64(&ins.opcode) {
            Some(Conv64::Clamp) => (Some(Pipe::Fp64), on_partition(64.0, p.results_per_clk(Pipe::Fp64))),
            Some(Conv64::Convert) => (Some(Pipe::Fp64), on_partition(32.0, p.conversion_64_rate)),
            None => (Some(Pipe::Conversion), on_partition(32.0, p.results_per_clk(Pipe::Conversion))),
        },
        class => match pipe_of(class) {
            Some(pipe) => (Some(pipe), on_partition(results_per_instr(pipe), p.results_per_clk(pipe))),
            None => (None, 1.0),
        },
    }
}

/// Most instructions in a guarded body that ptxas turns into predicated instructions when
/// another such body follows: ptxas 13.5 issues two consecutive bounds-checked tile loads
/// (`t[i] = (in range) ? a[...] : 0`, a branch around the address arithmetic and the load,
/// a shared store after the join) as predicated `LDG`s back to back with no branch when each
/// body has up to 20 PTX instructions, and keeps both branches at 21 (the test
/// `ptxas_predicates_consecutive_guarded_loads_of_up_to_20_instructions` in
/// kernel-profile/tests/sass_counts.rs checks sm_80; sm_75, sm_86 and sm_90 gave the same in
/// a one-off run); a single body keeps its branch,
/// which changes nothing here (a group of one counts as itself).
const IF_CONVERTED_MAX_INSTRUCTIONS: usize = 20;

/// For each block of `profile.blocks` (by position), the group of guarded bodies it
/// belongs to, if any. A guarded body is a block B that its head H (the block before it)
/// branches around: H's successors are B and J, B's only successor is J, J follows B, B
/// has no barrier and at most [`IF_CONVERTED_MAX_INSTRUCTIONS`] instructions. ptxas issues
/// such a body as predicated instructions in H's stream, so the loads of consecutive
/// bodies (B1, J1 = H2, B2, J2 = H3, ...: the unrolled bounds-checked loads of a tile) are
/// in flight together, not one after another: a group's bodies count once, by the
/// longest, in [`chain_cycles`]; the heads and joins between them keep their own paths.
fn guarded_groups(profile: &KernelProfile) -> Vec<Option<usize>> {
    let blocks = &profile.blocks;
    let mut out = vec![None; blocks.len()];
    // How many blocks branch or fall into each block id.
    let mut entries: HashMap<u32, usize> = HashMap::new();
    for b in blocks {
        for s in &b.successors {
            *entries.entry(*s).or_default() += 1;
        }
    }
    let mut group = 0;
    let mut last_body: Option<usize> = None;
    for i in 1..blocks.len().saturating_sub(1) {
        let (head, body, join) = (&blocks[i - 1], &blocks[i], &blocks[i + 1]);
        let mut head_succ = head.successors.clone();
        head_succ.sort_unstable();
        let mut pair = vec![body.id, join.id];
        pair.sort_unstable();
        let only_head_enters = entries.get(&body.id) == Some(&1);
        let guarded = head_succ == pair
            && body.successors == [join.id]
            && only_head_enters
            && body.instructions.len() <= IF_CONVERTED_MAX_INSTRUCTIONS
            && !body.instructions.iter().any(|n| n.class == InstrClass::Barrier);
        if !guarded {
            continue;
        }
        // The same group as the previous body when only its join (this body's head) lies
        // between them.
        if last_body.map(|l| l + 2) != Some(i) {
            group += 1;
        }
        out[i] = Some(group);
        last_body = Some(i);
    }
    out
}

/// For each instruction of `block`, whether it is a shared-memory store that a barrier
/// waits for: the next memory access or barrier after it is a barrier, in the block or,
/// past its end, at the start of a successor (the `if (tid < s)` body of a tree reduction
/// step, whose store the step's `__syncthreads()` in the next block waits for).
/// `index` maps block ids to positions in `profile.blocks`.
fn stores_awaited_by_a_barrier(profile: &KernelProfile, index: &HashMap<u32, usize>, block: &kernel_profile::BlockProfile) -> Vec<bool> {
    let syncs = |c: InstrClass| c == InstrClass::Barrier;
    let touches = |c: InstrClass| matches!(c, InstrClass::Load(_) | InstrClass::Store(_) | InstrClass::Atomic(_) | InstrClass::Barrier);
    let barrier_after_end = block.successors.iter().any(|id| {
        index.get(id).and_then(|&i| profile.blocks[i].instructions.iter().map(|n| n.class).find(|&c| touches(c))).is_some_and(syncs)
    });
    let n = block.instructions.len();
    let mut out = vec![false; n];
    // Scanning backwards: whether the next access or barrier is a barrier.
    let mut next_is_barrier = barrier_after_end;
    for i in (0..n).rev() {
        let c = block.instructions[i].class;
        if c == InstrClass::Store(Space::Shared) {
            out[i] = next_is_barrier;
        }
        if touches(c) {
            next_is_barrier = syncs(c);
        }
    }
    out
}

/// The later of two (finish, off-chip part) paths; at the same finish, the one with more
/// off-chip latency. The finish is compared as `f64::max` does (a NaN loses), so the chain
/// is the same number as a plain maximum of the finishes.
fn later(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    if a.0.is_nan() || b.0 > a.0 || (b.0 == a.0 && b.1 > a.1) { b } else { a }
}

/// Multiply-adds of one warp's tensor-core instruction and the rate factor of its types,
/// from the PTX opcode: the shape `mMnNkK` gives M·N·K per warp (a Hopper `wgmma` is
/// issued by the four warps of a warpgroup, a quarter each); relative to dense FP16 inputs,
/// TF32 runs at half the rate, INT8 and FP8 at twice, INT4 at four times, FP64 at 1/16
/// (NVIDIA A100 whitepaper, Table 1: 156, 624, 1248 and 19.5 against 312 TFLOPS or TOPS;
/// H100 whitepaper: FP8 at twice FP16), and FP16/BF16 inputs with FP32 accumulation at
/// half where [`Params::tensor_fp32_acc_half_rate`]; a warp-level `mma`/`wmma.mma` at
/// [`Params::sync_mma_fraction`] of the rate. `None` for an opcode without a shape
/// (`tcgen05` and other forms): the caller keeps the per-instruction rate.
fn tensor_op(opcode: &str, p: &Params) -> Option<(f64, f64)> {
    let (fmas, types_factor, warpgroup) = tensor_shape(opcode, p.tensor_fp32_acc_half_rate)?;
    // The warp-level forms run at `sync_mma_fraction` of the rate only `wgmma` reaches.
    Some((fmas, types_factor * if warpgroup { 1.0 } else { p.sync_mma_fraction }))
}

/// One tensor-core warp instruction from its PTX opcode: its multiply-adds per warp
/// (M·N·K of the shape; a `wgmma` a quarter, issued by each warp of its warpgroup), its
/// peak rate relative to dense FP16 inputs (see [`tensor_op`]), and whether it is the
/// warpgroup form. `None` for an opcode without a shape.
fn tensor_shape(opcode: &str, fp32_acc_half_rate: bool) -> Option<(f64, f64, bool)> {
    let mut fmas = None;
    let mut types = Vec::new();
    for part in opcode.split('.') {
        if let Some((m, n, k)) = kernel_profile::access::mma_shape(part) {
            fmas = Some((m * n * k) as f64);
            continue;
        }
        if fmas.is_some() && matches!(part, "f16" | "bf16" | "tf32" | "f32" | "f64" | "s8" | "u8" | "s4" | "u4" | "b1" | "e4m3" | "e5m2" | "s32") {
            types.push(part);
        }
    }
    let mut fmas = fmas?;
    let warpgroup = opcode.starts_with("wgmma");
    if warpgroup {
        fmas /= 4.0;
    }
    let has = |t: &str| types.contains(&t);
    let types_factor = if has("f64") {
        1.0 / 16.0
    } else if has("tf32") {
        0.5
    } else if has("s4") || has("u4") {
        4.0
    } else if has("s8") || has("u8") || has("e4m3") || has("e5m2") {
        2.0
    } else if fp32_acc_half_rate && types.first() == Some(&"f32") {
        // The destination (accumulator) type comes first after the shape.
        0.5
    } else {
        1.0
    };
    Some((fmas, types_factor, warpgroup))
}

/// The tensor cores' share of the roofline floor: seconds for the kernel's tensor-core
/// instructions at the GPU's peak rate for their shapes and types (every form at the
/// `wgmma` peak: a floor, not the warp-level forms' achievable rate). `None` without a
/// tensor rate for the GPU or a tensor instruction; an instruction without a shape counts
/// as `fallback_fmas` multiply-adds at the FP16 rate.
pub(crate) fn peak_tensor_seconds(profile: &KernelProfile, gpu: &gpu_spec::Gpu, warps: f64, sm_hz: f64, fallback_fmas: f64) -> Option<f64> {
    let rate = tensor_fma_per_clk(gpu)?;
    let half_rate = tensor_fp32_acc_half_rate(gpu);
    let mut cycles = 0.0;
    let mut any = false;
    for b in &profile.blocks {
        let e = b.executions.max(0.0);
        for i in b.instructions.iter().filter(|i| i.class == InstrClass::Tensor) {
            any = true;
            let (fmas, factor, _) = tensor_shape(&i.opcode, half_rate).unwrap_or((fallback_fmas, 1.0, false));
            cycles += e * fmas / (rate * factor);
        }
    }
    (any && sm_hz > 0.0).then(|| cycles * warps / sm_hz)
}

/// SM cycles per tensor-core warp instruction, averaged over the kernel's tensor
/// instructions weighted by their blocks' executions, and their mean multiply-adds; `None`
/// without a tensor rate for the GPU or without a shaped tensor instruction.
fn tensor_cycles_per_instr(profile: &KernelProfile, p: &Params) -> Option<(f64, f64)> {
    let rate = p.tensor_fma_per_clk.filter(|r| *r > 0.0)?;
    let (mut cycles, mut fmas, mut n) = (0.0, 0.0, 0.0);
    for b in &profile.blocks {
        let e = b.executions.max(0.0);
        for i in b.instructions.iter().filter(|i| i.class == InstrClass::Tensor) {
            let (f, factor) = tensor_op(&i.opcode, p)?;
            cycles += e * f / (rate * factor);
            fmas += e * f;
            n += e;
        }
    }
    (n > 0.0).then(|| (cycles / n, fmas / n))
}

/// The share of the integer instructions (class `int_alu`, weighted by their blocks'
/// executions) that are multiplies or multiply-adds (`mul.lo`, `mul.hi`, `mul.wide`,
/// `mad.*`, `mul24`, `mad24`): ptxas issues them as `IMAD` (or `IMAD.WIDE`, `IMAD.HI`) on the
/// FMA pipe. ptxas also issues some moves, shifts and adds as `IMAD.MOV`, `IMAD.SHL` and
/// `IMAD.IADD` to balance the two pipes; those are not counted here (the PTX does not say
/// which), so the split leans towards the ALU.
fn imad_share(profile: &KernelProfile) -> f64 {
    let (mut imad, mut all) = (0.0, 0.0);
    for b in &profile.blocks {
        for i in b.instructions.iter().filter(|i| i.class == InstrClass::IntAlu) {
            let e = b.executions.max(0.0);
            all += e;
            if i.opcode.starts_with("mul") || i.opcode.starts_with("mad") {
                imad += e;
            }
        }
    }
    if all > 0.0 { (imad / all).clamp(0.0, 1.0) } else { 0.0 }
}

/// A PTX conversion that ptxas issues on the FP64 pipe rather than as a conversion at the
/// 32-bit rate (CUDA C++ Programming Guide, arithmetic instruction throughput: "type
/// conversions from and to 64-bit types" have their own row, 2 per clock per SM on compute
/// capability 7.5, 8.6 and 8.9, the FP64 rate of those SMs). nvdisasm (sm_86) of
/// `(float)fmin(fmax((double)x, 0.0), 1.0)`, whose PTX is `cvt.f64.f32`, `cvt.sat.f64.f64`,
/// `cvt.rn.f32.f64`: `F2F.F64.F32`, `DSETP.MAX`, `DSETP.MIN`, `F2F.F32.F64`; of
/// `(double)i` and `(float)ll`: `I2F.F64`, `I2F.S64`. Conversions between integers (`cvt.s64.s32`,
/// `cvt.u32.u64`: a shift, a move or nothing) and `cvta` are not such conversions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conv64 {
    /// One instruction at the table's 64-bit conversion rate (`F2F.F64.F32`, `I2F.F64`, ...).
    Convert,
    /// `cvt.sat.f64.f64`, a clamp to [0, 1]: two FP64 compares (`DSETP.MAX`, `DSETP.MIN`)
    /// at the FP64 rate, the second counted as the FP64 instruction of its expansion
    /// (`kernel_profile::sass::expansion`, with the selects and moves around them).
    Clamp,
}

/// A `cvt`'s destination and source types, `None` for anything else.
fn cvt_types(opcode: &str) -> Option<(&str, &str)> {
    const TYPES: [&str; 15] = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "b16", "b32", "b64", "f16", "bf16", "f32", "f64"];
    let rest = opcode.strip_prefix("cvt.")?;
    let types: Vec<&str> = rest.split('.').filter(|t| TYPES.contains(t)).collect();
    match types[..] {
        [d, a] => Some((d, a)),
        _ => None,
    }
}

fn conv64(opcode: &str) -> Option<Conv64> {
    let (d, a) = cvt_types(opcode)?;
    let float = |t: &str| t.starts_with('f') || t == "bf16";
    let int64 = |t: &str| t == "s64" || t == "u64";
    match (d, a) {
        ("f64", "f64") if opcode.split('.').any(|m| m == "sat") => Some(Conv64::Clamp),
        _ if d == "f64" || a == "f64" => Some(Conv64::Convert),
        _ if (float(d) && int64(a)) || (int64(d) && float(a)) => Some(Conv64::Convert),
        _ => None,
    }
}

/// The shares of the kernel's executed conversions that run off the conversion unit, in
/// one pass: [64-bit conversions and f64 clamps, which [`conv64`] puts on the FP64 pipe;
/// `cvt.f32.f16` and `cvt.f32.bf16`, which widen a half to a float
/// (`Params::widening_off_conversion_unit`)].
fn conversion_shares(profile: &KernelProfile) -> [f64; 4] {
    let kind = |op: &str| match (conv64(op), cvt_types(op)) {
        (Some(Conv64::Convert), _) => Some(0),
        (Some(Conv64::Clamp), _) => Some(1),
        (None, Some(("f32", "f16"))) => Some(2),
        (None, Some(("f32", "bf16"))) => Some(3),
        _ => None,
    };
    let (mut by_kind, mut all) = ([0.0; 4], 0.0);
    for b in &profile.blocks {
        for i in b.instructions.iter().filter(|i| i.class == InstrClass::Conversion) {
            let e = b.executions.max(0.0);
            all += e;
            if let Some(k) = kind(&i.opcode) {
                by_kind[k] += e;
            }
        }
    }
    by_kind.map(|n| if all > 0.0 { (n / all).clamp(0.0, 1.0) } else { 0.0 })
}

/// Microseconds the L2 takes for `lanes` serialised atomic operations, those on integer
/// data (their share of `t.atomic_serialised_lanes`) at `integer_atomic_serial_ns`, the
/// rest at `atomic_serial_ns`.
fn atomics_us(t: &Traffic, p: &Params, lanes: f64) -> f64 {
    let share = if t.atomic_serialised_lanes > 0.0 { (t.atomic_serialised_integer_lanes / t.atomic_serialised_lanes).clamp(0.0, 1.0) } else { 0.0 };
    lanes * (share * p.integer_atomic_serial_ns + (1.0 - share) * p.atomic_serial_ns) / 1e3
}

/// Whether the kernel's warps write to global memory without waiting (stores, and REDs:
/// atomics whose result nothing reads), so that a slot waits for the writes' acknowledgement.
fn writes_without_waiting(profile: &KernelProfile, t: &Traffic) -> bool {
    t.global_store_requests > 0.0
        || profile.blocks.iter().any(|b| {
            b.executions > 0.0 && b.instructions.iter().any(|i| i.result_unused && matches!(i.class, InstrClass::Atomic(s) if offchip(s)))
        })
}

fn offchip(s: Space) -> bool {
    matches!(s, Space::Global | Space::Local | Space::Generic | Space::Texture)
}

/// The time of the latency and throughput terms together (module documentation,
/// "Combination"): the root `T` of `T = t_lat + κ·t_mem·u/(1 − u) + κ·(t_lat − t_mem)·v/(1 − v)`
/// with `u = t_thr / T` (the busiest unit of all) and `v = t_sm / T` (the busiest SM-side
/// unit: issue, a pipe, shared memory). Without the second queue it is the closed form
/// `((t_thr + t_lat) + √((t_thr − t_lat)² + 4κ·t_thr·t_mem)) / 2`; with it, the right side
/// falls from +∞ just above `max(t_thr, t_sm)` to `t_lat` as `T` grows, so one root lies
/// above `max(t_thr, t_sm, t_lat)`, found by bisection.
fn combine(t_lat: f64, t_mem: f64, t_thr: f64, t_sm: f64, kappa: f64) -> f64 {
    let closed = ((t_thr + t_lat) + ((t_thr - t_lat).powi(2) + 4.0 * kappa * t_thr * t_mem).sqrt()) / 2.0;
    let t_comp = (t_lat - t_mem).max(0.0);
    if kappa <= 0.0 || t_sm <= 0.0 || t_comp <= 0.0 {
        return closed;
    }
    let queue = |work: f64, busy: f64, t: f64| if work > 0.0 { work * (busy / t) / (1.0 - busy / t) } else { 0.0 };
    let excess = |t: f64| t_lat + kappa * (queue(t_mem, t_thr, t) + queue(t_comp, t_sm, t)) - t;
    // `closed` solves the equation without the second (positive) queue, so the root lies
    // above it (and above both busy terms, where the queues are finite); widening the
    // bracket by doubling finds a point past the root.
    let mut lo = closed.max(t_sm * (1.0 + 1e-12)).max(t_thr * (1.0 + 1e-12));
    let mut hi = lo + t_lat + t_sm;
    while excess(hi) > 0.0 {
        hi += hi - lo;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if excess(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    hi
}

/// Barrier phases of a kernel whose blocks synchronise (`bar.sync`, `__syncthreads()`):
/// the off-chip part of one warp's chain and the block's own work on its busiest SM unit
/// (`demand_cycles`, the SM-local throughput terms over the blocks an SM runs), and their
/// sum, the least time a wave of blocks can take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phases {
    pub offchip_cycles: f64,
    pub demand_cycles: f64,
    /// The unit whose work `demand_cycles` is.
    pub unit: Bound,
    /// waves × (off-chip waits + own work + per-block overheads), in µs.
    pub us: f64,
}

/// Whether any executed block of the kernel waits at a barrier.
fn has_barrier(profile: &KernelProfile) -> bool {
    profile.blocks.iter().any(|b| b.executions > 0.0 && b.instructions.iter().any(|i| i.class == InstrClass::Barrier))
}

/// Runs the model on a database GPU. `None` when the launch is empty or no block fits on
/// an SM (the occupancy says why).
pub fn predict(profile: &KernelProfile, gpu: &gpu_spec::Gpu) -> Option<Prediction> {
    let params = Params::from_gpu(gpu);
    let resident = crate::gpu::resident_blocks(profile, gpu)?;
    let est = estimate(profile, &params, resident, &cache_config(gpu, profile, resident))?;
    Some(prediction(&est, &params))
}

/// FP32-pipe instructions per thread that read three registers the operand reuse cache
/// cannot supply, and the register file's reads per clock per partition.
struct RegisterReads {
    instructions: f64,
    reads_per_clk: f64,
}

impl RegisterReads {
    /// Cycles such an instruction adds beyond the `per_instr` cycles its lanes take: the
    /// three reads take 3 / `reads_per_clk` cycles of the partition.
    fn cycles_each(&self, per_instr: f64) -> f64 {
        (3.0 / self.reads_per_clk - per_instr).max(0.0)
    }
}

/// The FP32 instructions of [`Params::register_reads_per_clk`]'s limit, per thread (each
/// basic block's expected executions times its flagged FP32-pipe nodes); `None` where
/// gpu-data gives no register-read rate or no instruction reads three registers.
fn register_read_cycles(profile: &KernelProfile, p: &Params) -> Option<RegisterReads> {
    let reads_per_clk = p.register_reads_per_clk.filter(|r| *r > 0.0)?;
    let instructions: f64 = profile
        .blocks
        .iter()
        .map(|b| {
            b.executions.max(0.0)
                * b.instructions.iter().filter(|i| i.reads_three_registers && pipe_of(i.class) == Some(Pipe::Fp32)).count() as f64
        })
        .sum();
    (instructions > 0.0).then_some(RegisterReads { instructions, reads_per_clk })
}

/// The breakdown key of the clock share the estimate ran at (present only below 1).
pub const CLOCK_RATIO: &str = "clock_ratio";

/// The breakdown key of the time at the boost clock, in µs (present with [`CLOCK_RATIO`]).
pub const BOOST_CLOCK_TIME_US: &str = "boost_clock_time_us";

/// The estimate with explicit parameters (what `calibrate` varies), at the clock the board
/// can hold: where the power the kernel would draw at the boost clock
/// ([`crate::power_limit::Budget::demand_w`]: the board's fixed draw, its instructions'
/// and its DRAM bytes' energy over the time) exceeds the board's limit, the SM clock falls
/// until the demand meets it, and every clock-bound term stretches with it (the DRAM term,
/// the launch overhead and the per-block times in ns do not).
pub fn estimate(
    profile: &KernelProfile,
    p: &Params,
    resident_blocks_per_sm: u32,
    caches: &CacheConfig,
) -> Option<Estimate> {
    let boost = estimate_at_clock(profile, p, resident_blocks_per_sm, caches)?;
    let Some(budget) = p.power_budget.as_ref() else { return Some(boost) };
    let lanes = crate::power_limit::lane_instructions(profile);
    let demand = |e: &Estimate, x: f64| budget.demand_w(lanes, e.traffic.steady_dram_bytes(), e.time_us, x);
    let at = |x: f64| -> Option<Estimate> {
        let mut q = p.clone();
        q.clock_hz *= x;
        let mut e = estimate_at_clock(profile, &q, resident_blocks_per_sm, caches)?;
        e.clock_ratio = x;
        e.boost_clock_time_us = boost.time_us;
        Some(e)
    };
    let ratio = crate::power_limit::clock_ratio(budget, |x| if x >= 1.0 { Some(demand(&boost, 1.0)) } else { at(x).map(|e| demand(&e, x)) });
    match ratio {
        Some(x) if x < 1.0 => at(x).or(Some(boost)),
        _ => Some(boost),
    }
}

/// The estimate at the clock of `p` (`estimate` lowers it where the power limit binds).
fn estimate_at_clock(
    profile: &KernelProfile,
    p: &Params,
    resident_blocks_per_sm: u32,
    caches: &CacheConfig,
) -> Option<Estimate> {
    let blocks = profile.launch.blocks() as f64;
    let threads_per_block = profile.launch.threads_per_block() as f64;
    if blocks <= 0.0 || threads_per_block <= 0.0 || resident_blocks_per_sm == 0 {
        return None;
    }
    let warps_per_block = (threads_per_block / 32.0).ceil();
    let sms = f64::from(p.sm_count);
    // The busiest SM runs ⌈blocks / SMs⌉ blocks, in waves of the resident blocks.
    let blocks_per_sm = (blocks / sms).ceil();
    // The per-SM memory terms (L1, shared) divide the grid's work by this, so that they
    // count the busiest SM's blocks as the pipes do (32 blocks on 28 SMs: two on four SMs,
    // which the kernel waits for).
    let active_sms = blocks / blocks_per_sm.max(1.0);
    let waves = (blocks_per_sm / f64::from(resident_blocks_per_sm)).ceil();
    let warps_on_sm = blocks_per_sm * warps_per_block;
    let t = traffic::estimate(profile, caches);

    let mut terms = Vec::new();
    let us = |cycles: f64| p.cycles_to_us(cycles);

    // Issue: every warp instruction takes one scheduler slot, ptxas's spill loads and
    // stores too (`traffic::spill_instructions_per_thread`).
    let (spill_loads, spill_stores) = traffic::spill_instructions_per_thread(profile);
    let per_warp_instr = profile.counts.total_dynamic() + spill_loads + spill_stores;
    let issue_cycles = warps_on_sm * per_warp_instr / p.schedulers_per_sm;
    terms.push(Term {
        bound: Bound::Issue,
        us: us(issue_cycles),
        detail: format!(
            "{:.0} warp instructions per SM at {} per cycle",
            warps_on_sm * per_warp_instr,
            p.schedulers_per_sm
        ),
    });

    // Block dispatch: the work distributor hands out about one block per cycle, chip-wide.
    if p.block_launch_cycles > 0.0 {
        terms.push(Term {
            bound: Bound::Launch,
            us: us(blocks * p.block_launch_cycles),
            detail: format!("{blocks:.0} blocks dispatched at {} cycle(s) each, chip-wide", p.block_launch_cycles),
        });
    }

    // Pipes.
    // The calibrated achievable fraction of the LD/ST lanes' and the banks' rates, held to
    // 0.05-1 here, the one place both terms read it.
    let lsu_efficiency = p.lsu_efficiency.clamp(0.05, 1.0);
    let mut per_pipe: BTreeMap<Pipe, f64> = BTreeMap::new();
    for (class, n) in &profile.counts.dynamic {
        if let Some(pipe) = pipe_of(*class) {
            *per_pipe.entry(pipe).or_default() += n.max(0.0);
        }
    }
    // The load/store units take one thread's access per lane and clock, for global, local
    // and shared memory alike: a warp's memory instruction holds an SM with 16 LD/ST lanes
    // (Turing, GA10x, Ada: 4 per partition, turing-wp, ga102-wp, ada-wp) for 2 cycles and
    // one with 32 (GV100, GA100, GH100) for 1. Measured: gpu-benches' gpu-strides, float
    // stride 1 (128 B per warp load, L1-resident): 2.00 cycles per warp load on an A40,
    // 1.02 on an A100; gpu-cache's L1-resident floats deliver 64 B per clock per SM on the
    // A40 and the L40. Constant, parameter and texture loads use other paths; the bytes
    // (wavefronts) are charged by the L1 and shared terms below.
    let lsu_instr = profile.counts.dynamic_of(|c| match c {
        InstrClass::Load(s) | InstrClass::Store(s) | InstrClass::Atomic(s) => lsu_space(s),
        _ => false,
    }) + spill_loads
        + spill_stores;
    per_pipe.insert(Pipe::Lsu, lsu_instr);
    // Which integer instructions share a pipe with FP32 (`int_on_fma`): integer
    // multiply-adds since Volta (the FMA pipe executes FP32 and IMAD, the ALU pipe the other
    // integer instructions: Nsight Compute Kernel Profiling Guide, "Pipelines"; on GA10x,
    // Ada and Hopper only the FMA-heavy half takes IMAD, at the table's `int_mul` rate),
    // every integer instruction before Volta (one set of CUDA cores, `fp32_int_shared`).
    let int_total = per_pipe.get(&Pipe::Int).copied().unwrap_or(0.0);
    let int_on_fma = if p.fp32_int_shared {
        int_total
    } else if p.int_mul_rate.is_some() {
        int_total * imad_share(profile)
    } else {
        0.0
    };
    if int_on_fma > 0.0 {
        per_pipe.insert(Pipe::Int, int_total - int_on_fma);
        per_pipe.entry(Pipe::Fp32).or_insert(0.0);
    }
    // Widening halves to floats: the FMA pipe's `HADD2.F32` (from FP16) and an integer
    // `PRMT`/`SHF` (from BF16), not the conversion unit (`Params::widening_off_conversion_unit`).
    // Conversions from and to 64-bit types run on the FP64 pipe at their own rate (`conv64`):
    // counted there as the FP64 instructions whose time they take. Both shares are of all
    // the kernel's conversions.
    let conversions = per_pipe.get(&Pipe::Conversion).copied().unwrap_or(0.0);
    let [convert64_share, clamp64_share, from_f16, from_bf16] = conversion_shares(profile);
    let (from_f16, from_bf16) = if p.widening_off_conversion_unit { (from_f16, from_bf16) } else { (0.0, 0.0) };
    let (convert64, clamp64) = (conversions * convert64_share, conversions * clamp64_share);
    if from_f16 + from_bf16 + convert64_share + clamp64_share > 0.0 {
        per_pipe.insert(Pipe::Conversion, (conversions * (1.0 - from_f16 - from_bf16 - convert64_share - clamp64_share)).max(0.0));
    }
    if from_f16 + from_bf16 > 0.0 {
        *per_pipe.entry(Pipe::Fp32).or_default() += conversions * from_f16;
        *per_pipe.entry(Pipe::Int).or_default() += conversions * from_bf16;
    }
    if convert64 + clamp64 > 0.0 {
        let fp64_rate = p.results_per_clk(Pipe::Fp64);
        *per_pipe.entry(Pipe::Fp64).or_default() += convert64 * fp64_rate / p.conversion_64_rate.max(1e-9) + clamp64;
    }
    for (pipe, n) in &per_pipe {
        let rate = p.results_per_clk(*pipe);
        let mut cycles = warps_on_sm * n * results_per_instr(*pipe) / rate.max(1e-9);
        let mut detail = format!("{:.0} {} warp instructions per SM at {} results per cycle", warps_on_sm * n, pipe.name(), rate);
        if *pipe == Pipe::Lsu && lsu_efficiency < 1.0 {
            cycles /= lsu_efficiency;
            detail.push_str(&format!(" × {lsu_efficiency:.2} achievable (calibrated)"));
        }
        if *pipe == Pipe::Fp16 {
            detail.push_str(" (64 per warp instruction: a half2 per lane)");
        }
        if *pipe == Pipe::Fp64 && convert64 + clamp64 > 0.0 {
            detail.push_str(&format!(
                ", counting {:.0} conversions from or to 64-bit types at {} per cycle and {:.0} double clamps (two FP64 compares each)",
                warps_on_sm * convert64,
                p.conversion_64_rate,
                warps_on_sm * clamp64
            ));
        }
        if *pipe == Pipe::Tensor
            && let Some((per_instr, fmas)) = tensor_cycles_per_instr(profile, p)
        {
            cycles = warps_on_sm * n * per_instr;
            detail = format!(
                "{:.0} tensor-core warp instructions per SM of {fmas:.0} multiply-adds each, {per_instr:.1} cycles each at the rate of their input and accumulator types (the SM's dense FP16 rate: {:.0} multiply-adds per cycle)",
                warps_on_sm * n,
                p.tensor_fma_per_clk.unwrap_or(0.0)
            );
        }
        if *pipe == Pipe::Fp32 && int_on_fma > 0.0 {
            let int_rate = if p.fp32_int_shared { p.results_per_clk(Pipe::Int) } else { p.int_mul_rate.unwrap_or(rate) };
            let int_cycles = warps_on_sm * int_on_fma * 32.0 / int_rate.max(1e-9);
            cycles = if p.fp32_int_shared {
                // One set of cores: the two kinds take turns.
                cycles + int_cycles
            } else {
                // IMAD takes FMA lanes from FP32; on the split FMA pipes of GA10x and later
                // it is also held to the heavy half's rate.
                int_cycles.max(warps_on_sm * (n + int_on_fma) * 32.0 / rate.max(1e-9))
            };
            detail = if p.fp32_int_shared {
                format!("{detail}, and {:.0} integer warp instructions on the same CUDA cores at {int_rate} per cycle", warps_on_sm * int_on_fma)
            } else {
                format!("{detail}, and {:.0} integer multiply-add warp instructions on the same FMA pipe at {int_rate} per cycle", warps_on_sm * int_on_fma)
            };
        }
        // After the integer share above, which recomputes the pipe's cycles.
        if *pipe == Pipe::Fp32
            && let Some(extra) = register_read_cycles(profile, p)
        {
            let per_instr = 32.0 * p.schedulers_per_sm / rate.max(1e-9);
            cycles += warps_on_sm * extra.instructions * extra.cycles_each(per_instr) / p.schedulers_per_sm;
            if extra.cycles_each(per_instr) > 0.0 {
                detail.push_str(&format!(
                    ", {:.0} of them reading three registers none of which the previous instruction read, {:.1} cycles each at {} register reads per cycle per partition",
                    warps_on_sm * extra.instructions,
                    per_instr + extra.cycles_each(per_instr),
                    extra.reads_per_clk
                ));
            }
        }
        terms.push(Term { bound: Bound::Pipe(*pipe), us: us(cycles), detail });
    }

    // L1: a request takes its wavefronts, one per cycle (the data stage's bank passes or the
    // tag stage's line lookups, `kernel_profile::access::l1_wavefronts`: at least one), and
    // the bytes its lanes read at the data path's bytes per clock (whole sectors where the
    // lanes are unknown, one copy where they all read one address).
    let requests_per_sm = (t.global_load_requests + t.global_store_requests + t.spill_requests) / active_sms;
    let wavefronts_per_sm = (t.l1_wavefronts + t.spill_requests) / active_sms;
    let l1_byte_cycles = t.l1_data_bytes / active_sms / p.l1_bytes_per_clk_per_sm.max(1.0);
    // Stores leave the SM for L2 one request per 128-byte line a warp's store touches, at
    // most one every `store_request_cycles` (`fitted::STORE_REQUEST_CYCLES`): a column walk's
    // store is 32 requests, a coalesced one 1. That path is not the data stage that L1
    // shares with shared memory (below), so it takes no turns with it.
    // On Kepler the loads L1 does not keep send their lines to L2 the same way, in turn
    // with the stores (`load_request_cycles`).
    let load_request_cycles = t.l2_load_line_requests / active_sms * p.load_request_cycles;
    let store_request_cycles = t.store_line_requests / active_sms * p.store_request_cycles + load_request_cycles;
    let l1_cycles = wavefronts_per_sm.max(l1_byte_cycles);
    // Shared memory: one 128-byte wavefront per cycle at 128 B/clk (times the calibrated
    // achievable fraction); the stores' wavefronts at the rate the banks take writes.
    let shared_load_wavefronts = (t.shared_wavefronts - t.shared_store_wavefronts).max(0.0);
    let shared_cycles = (shared_load_wavefronts * 128.0 / p.shared_bytes_per_clk_per_sm.max(1.0)
        + t.shared_store_wavefronts * 128.0 / p.shared_store_bytes_per_clk_per_sm.max(1.0))
        / active_sms
        / lsu_efficiency;
    // Where L1 and shared memory share one data stage (`unified_l1_shared`), the larger of
    // the two terms also carries the other's cycles: they take turns there.
    let (l1_extra, shared_extra) = match p.unified_l1_shared {
        true if l1_cycles > 0.0 && shared_cycles > 0.0 => {
            if l1_cycles >= shared_cycles { (shared_cycles, 0.0) } else { (0.0, l1_cycles) }
        }
        _ => (0.0, 0.0),
    };
    if l1_cycles.max(store_request_cycles) > 0.0 {
        terms.push(Term {
            bound: Bound::L1,
            us: us((l1_cycles + l1_extra).max(store_request_cycles)),
            detail: format!(
                "{:.0} requests ({:.0} wavefronts) and {} read per SM through L1 at {} B per cycle{}{}",
                requests_per_sm,
                wavefronts_per_sm,
                bytes(t.l1_data_bytes / active_sms),
                p.l1_bytes_per_clk_per_sm,
                if store_request_cycles > l1_cycles + l1_extra {
                    format!(
                        ", and {:.0} store requests to L2 per SM (one per 128-byte line of a warp's store) at {} cycles each{}",
                        t.store_line_requests / active_sms,
                        p.store_request_cycles,
                        if load_request_cycles > 0.0 {
                            format!(
                                ", in turn with {:.0} load requests L1 does not keep (one per line) at {} cycles each",
                                t.l2_load_line_requests / active_sms,
                                p.load_request_cycles
                            )
                        } else {
                            String::new()
                        }
                    )
                } else {
                    String::new()
                },
                if l1_extra > 0.0 { format!(", plus the {:.0} cycles of the shared-memory wavefronts, which take turns with them in the one L1/shared data stage", l1_extra) } else { String::new() }
            ),
        });
    }
    if shared_cycles > 0.0 {
        terms.push(Term {
            bound: Bound::Shared,
            us: us(shared_cycles + shared_extra),
            detail: format!(
                "{:.0} shared-memory wavefronts per SM ({:.0} requests; bank conflicts add the rest){}{}{}",
                t.shared_wavefronts / active_sms,
                t.shared_requests / active_sms,
                if p.shared_store_bytes_per_clk_per_sm != p.shared_bytes_per_clk_per_sm && t.shared_store_wavefronts > 0.0 {
                    format!(
                        ", the loads' at {:.0} B per clock, the {:.0} of stores at {:.0}",
                        p.shared_bytes_per_clk_per_sm,
                        t.shared_store_wavefronts / active_sms,
                        p.shared_store_bytes_per_clk_per_sm
                    )
                } else {
                    String::new()
                },
                if lsu_efficiency < 1.0 { format!(" at {lsu_efficiency:.2} of the banks' rate (calibrated)") } else { String::new() },
                if shared_extra > 0.0 { format!(", plus the {:.0} cycles of the global requests' L1 wavefronts, which take turns with them in the one L1/shared data stage", shared_extra) } else { String::new() }
            ),
        });
    }
    // The FP32 pipe's time that the load/store path does not overlap (`fp32_lsu_serial_share`,
    // Turing in gpu-data): added to the larger of the `lsu` and `shared` terms (`lsu` at a tie).
    let serial = p.fp32_lsu_serial_share.clamp(0.0, 1.0);
    let fp32_us = terms.iter().find(|t| t.bound == Bound::Pipe(Pipe::Fp32)).map_or(0.0, |t| t.us);
    if serial > 0.0
        && fp32_us > 0.0
        && let Some(path) = terms
            .iter_mut()
            .filter(|t| matches!(t.bound, Bound::Pipe(Pipe::Lsu) | Bound::Shared))
            .reduce(|a, b| if b.us > a.us { b } else { a })
    {
        path.us += serial * fp32_us;
        path.detail.push_str(&format!(
            ", plus {:.0} % of the FP32 pipe's {:.3} µs, which this GPU's load/store path does not overlap",
            serial * 100.0,
            fp32_us
        ));
    }
    // L2, chip-wide.
    let l2_bytes = (t.l2_load_sectors + t.l2_store_sectors) * SECTOR_BYTES;
    if l2_bytes > 0.0 && p.l2_bytes_per_clk > 0.0 {
        terms.push(Term {
            bound: Bound::L2,
            us: us(l2_bytes / p.l2_bytes_per_clk),
            detail: format!(
                "{} through L2 at {:.0} GB/s",
                bytes(l2_bytes),
                p.l2_bytes_per_clk * p.clock_hz / 1e9
            ),
        });
    }
    // DRAM, chip-wide.
    // In L2 across launches: all of it when everything fits (`Traffic::l2_resident`; the
    // L2 term then carries the traffic), part of the first reads and writes past the L2's
    // size (`Traffic::l2_kept_bytes`).
    let dram_bytes = t.steady_dram_bytes();
    let dram_bw = p.dram_peak_bytes_per_s * p.dram_efficiency;
    // Row activations: a channel opens rows no faster than one per `dram_activation_bytes`
    // of its bus time (GDDR), so sectors scattered one per page take that long each.
    let activations = t.steady_dram_activations();
    let activation_bytes = activations * p.dram_activation_bytes.max(0.0);
    if dram_bytes > 0.0 && dram_bw > 0.0 {
        terms.push(Term {
            bound: Bound::Dram,
            us: dram_bytes.max(activation_bytes) / dram_bw * 1e6,
            detail: format!(
                "{} read + {} written{} at {:.0} GB/s ({:.0} % of the {:.0} GB/s peak){}",
                bytes(t.dram_read_bytes),
                bytes(t.dram_write_bytes),
                if t.l2_kept_bytes > 0.0 { format!(", less the {} repeated launches find in L2", bytes(t.l2_kept_bytes)) } else { String::new() },
                dram_bw / 1e9,
                p.dram_efficiency * 100.0,
                p.dram_peak_bytes_per_s / 1e9,
                if activation_bytes > dram_bytes {
                    format!(
                        "; but {:.0} DRAM row activations ({:.1} sectors per page visit), each {:.0} bytes of bus time, take longer than the bytes: {:.0} % of the achievable bandwidth",
                        activations,
                        dram_bytes / SECTOR_BYTES / activations.max(1e-9),
                        p.dram_activation_bytes,
                        100.0 * dram_bytes / activation_bytes
                    )
                } else {
                    String::new()
                }
            ),
        });
    }
    // Atomics on one line serialise in the L2 slice that holds it, `atomic_serial_ns` each
    // (`fitted::ATOMIC_SERIAL_NS`), those on integer data `integer_atomic_serial_ns`;
    // `atomic_serialised_lanes` counts them.
    if t.atomic_serialised_lanes > 0.0 {
        let integer = t.atomic_serialised_integer_lanes.clamp(0.0, t.atomic_serialised_lanes);
        let other = t.atomic_serialised_lanes - integer;
        let rates = match (integer > 0.0, other > 0.0) {
            (true, true) if p.integer_atomic_serial_ns != p.atomic_serial_ns => format!(
                "{integer:.0} on integers at {} ns each, {other:.0} on floating-point data at {} ns",
                p.integer_atomic_serial_ns, p.atomic_serial_ns
            ),
            (true, false) => format!("at {} ns each", p.integer_atomic_serial_ns),
            _ => format!("at {} ns each", p.atomic_serial_ns),
        };
        terms.push(Term {
            bound: Bound::Atomics,
            us: atomics_us(&t, p, t.atomic_serialised_lanes),
            detail: if t.atomic_unknown_requests > 0.0 {
                format!(
                    "{:.0} atomic operations serialised at the L2 {rates}, those on data-dependent addresses counted one per warp request",
                    t.atomic_serialised_lanes
                )
            } else {
                format!(
                    "{:.0} atomic operations in turn in the L2 slice of one line {rates} (lanes on one address, or a small table's lanes over its lines)",
                    t.atomic_serialised_lanes
                )
            },
        });
    }

    // Latency: waves × (chain + block overhead [+ store drain]).
    let loads = LoadLatency::new(&t, p);
    let Chain { cycles: chain, offchip_cycles: chain_offchip } = chain_cycles(profile, p, &loads);
    let has_stores = writes_without_waiting(profile, &t);
    let per_wave = chain
        + p.ns_to_cycles(p.block_overhead_ns)
        + if has_stores { p.ns_to_cycles(p.store_drain_ns) } else { 0.0 };
    let latency_cycles = waves * per_wave;
    // Barrier phases: a block's warps leave each barrier together, so the block waits for
    // its global loads with nothing of its own to run and then runs its own work with no load in
    // flight; a wave of blocks takes at least the two one after the other.
    let phases = if has_barrier(profile) {
        terms
            .iter()
            .filter(|t| matches!(t.bound, Bound::Issue | Bound::Pipe(_) | Bound::L1 | Bound::Shared))
            .max_by(|a, b| a.us.total_cmp(&b.us))
            .map(|unit| {
                let demand_cycles = unit.us * p.clock_hz / 1e6 / blocks_per_sm.max(1.0);
                Phases {
                    offchip_cycles: chain_offchip,
                    demand_cycles,
                    unit: unit.bound,
                    us: us(waves * (chain_offchip + demand_cycles + per_wave - chain)),
                }
            })
    } else {
        None
    };
    let resident_warps = f64::from(resident_blocks_per_sm).min(blocks_per_sm) * warps_per_block;
    // Whether the chain is a markedly busier warp's than the average (`chain_cycles`).
    let unequal_warps = profile.warps_work_unequally();
    terms.push(Term {
        bound: Bound::Latency,
        us: us(latency_cycles),
        detail: format!(
            "{waves:.0} wave(s) of {resident_warps:.0} resident warps per SM, {} {:.0} cycles on its dependence chain (global loads ≈ {:.0} cycles) plus {:.0} ns per block{}",
            if unequal_warps { "the busiest warp of each block waiting" } else { "each waiting" },
            chain,
            loads.for_block(1),
            p.block_overhead_ns,
            if has_stores { format!(" and {:.0} ns for its last writes to drain", p.store_drain_ns) } else { String::new() }
        ),
    });

    let (latency, throughput): (Vec<&Term>, Vec<&Term>) = terms.iter().partition(|t| t.bound == Bound::Latency);
    let t_lat = latency.iter().map(|t| t.us).fold(0.0_f64, f64::max);
    let top = throughput.iter().copied().max_by(|a, b| a.us.total_cmp(&b.us));
    let t_thr = top.map_or(0.0, |t| t.us);
    if !(t_lat.is_finite() && t_thr.is_finite()) {
        return None;
    }
    // The queueing delay lengthens what waits on the memory system, the off-chip loads on
    // the chain (`t_mem`), not the block's dispatch and retirement or its arithmetic:
    // T = T_lat + κ·T_mem·u/(1 − u) with u = T_thr/T (module documentation).
    let kappa = p.latency_exposure.clamp(0.0, 1.0);
    let t_mem = us(waves * chain_offchip).clamp(0.0, t_lat);
    // The on-SM part of the chain (its dependent instructions' latencies, barrier waits and
    // per-block overheads: `t_lat − t_mem`) queues the same way for the SM's issue slots and
    // pipes as they fill (`t_sm`, the largest SM-side throughput term), with the same κ.
    let t_sm = throughput
        .iter()
        .filter(|t| matches!(t.bound, Bound::Issue | Bound::Pipe(_) | Bound::Shared))
        .map(|t| t.us)
        .fold(0.0_f64, f64::max);
    let smooth = combine(t_lat, t_mem, t_thr, t_sm, kappa);
    let phase_us = phases.map_or(0.0, |ph| ph.us);
    let phases_bind = phase_us > smooth;
    let combined = smooth.max(phase_us);
    let launch_us = p.launch_overhead_us.max(0.0);
    let time_us = combined + launch_us;
    let binding = if launch_us > combined {
        Bound::Launch
    } else if t_lat > t_thr || phases_bind {
        Bound::Latency
    } else {
        top.map_or(Bound::Latency, |t| t.bound)
    };
    Some(Estimate {
        terms,
        launch_us,
        time_us,
        binding,
        traffic: t,
        resident_blocks_per_sm,
        waves,
        chain_cycles: chain,
        chain_offchip_cycles: chain_offchip,
        phases,
        clock_ratio: 1.0,
        boost_clock_time_us: time_us,
    })
}

fn bytes(b: f64) -> String {
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

/// The [`Prediction`] of an estimate.
pub fn prediction(est: &Estimate, p: &Params) -> Prediction {
    let mut breakdown = BTreeMap::new();
    for t in &est.terms {
        breakdown.insert(format!("{}_us", t.bound.name()), t.us);
    }
    breakdown.insert("launch_overhead_us".into(), est.launch_us);
    breakdown.insert("waves".into(), est.waves);
    breakdown.insert("chain_cycles".into(), est.chain_cycles);
    breakdown.insert("chain_offchip_cycles".into(), est.chain_offchip_cycles);
    breakdown.insert("dram_bytes".into(), est.traffic.steady_dram_bytes());
    if let Some(ph) = est.phases {
        breakdown.insert("phase_us".into(), ph.us);
        breakdown.insert("phase_demand_cycles".into(), ph.demand_cycles);
    }
    let throttled = est.clock_ratio < 1.0;
    if throttled {
        breakdown.insert(CLOCK_RATIO.into(), est.clock_ratio);
        breakdown.insert("clock_mhz".into(), p.clock_hz * est.clock_ratio / 1e6);
        breakdown.insert(BOOST_CLOCK_TIME_US.into(), est.boost_clock_time_us);
    }
    let top = est
        .terms
        .iter()
        .max_by(|a, b| a.us.total_cmp(&b.us));
    let overhead_binds = est.launch_us > est.time_us - est.launch_us;
    let phases_bind = est.phases.filter(|ph| est.binding == Bound::Latency && ph.us >= est.time_us - est.launch_us);
    let explanation = match (est.binding, top) {
        (Bound::Launch, _) if overhead_binds => format!(
            "launch-bound: the kernel's work ({:.2} µs) is shorter than one launch ({:.1} µs)",
            est.time_us - est.launch_us,
            est.launch_us
        ),
        (Bound::Latency, _) if let Some(ph) = phases_bind => format!(
            "latency-bound in barrier phases: in each of {:.0} wave(s) a block's warps wait {:.0} cycles on global loads with nothing of their own to run, then run {:.0} cycles of the block's own {} work with no load in flight (they leave each barrier together, so within a block the two do not overlap) ({:.3} µs); next: {}",
            est.waves,
            ph.offchip_cycles,
            ph.demand_cycles,
            ph.unit.name(),
            ph.us,
            top.map_or_else(String::new, |t| format!("{} {:.3} µs", t.bound.name(), t.us))
        ),
        (b, Some(t)) => {
            let second = est
                .terms
                .iter()
                .filter(|x| x.bound != t.bound)
                .max_by(|a, c| a.us.total_cmp(&c.us));
            let next = second
                .map(|s| format!("; next: {} {:.3} µs", s.bound.name(), s.us))
                .unwrap_or_default();
            format!("{}-bound: {} ({:.3} µs){next}", b.name(), t.detail, t.us)
        }
        (b, None) => format!("{}-bound", b.name()),
    };
    // Atomics on data-dependent addresses are counted at the least contention (one lane per
    // request) unless the table they index is known. Where all their lanes colliding (one
    // address, serialised in its L2 slice) would take much longer than the prediction, the
    // number is a lower bound: say so, with the other end of the range.
    let t = &est.traffic;
    let worst_atomics_us = atomics_us(t, p, (t.atomic_serialised_lanes - t.atomic_unknown_requests + t.atomic_unknown_lanes).max(0.0));
    let contention_unknown = t.atomic_unknown_requests > 0.0 && worst_atomics_us + est.launch_us > 1.5 * est.time_us;
    let explanation = if contention_unknown {
        format!(
            "{explanation}; at least: the atomics' addresses depend on data and their contention is unknown, up to {worst_atomics_us:.3} µs if their lanes hit one address (privatise in shared memory, or aggregate per warp, to remove it)"
        )
    } else {
        explanation
    };
    // The board's limit, where it lowered the clock.
    let limited = p.power_budget.as_ref().filter(|_| throttled);
    let explanation = match limited {
        Some(b) => format!(
            "{explanation}; power-limited: at the {:.0} MHz {} clock the kernel would draw more than the board's {:.0} W, so it runs at {:.0} MHz ({:.0} %)",
            p.clock_hz / 1e6,
            if p.locked_clock { "locked" } else { "boost" },
            b.limit_w,
            p.clock_hz * est.clock_ratio / 1e6,
            100.0 * est.clock_ratio
        ),
        None => explanation,
    };
    let mut assumptions = p.sources.clone();
    assumptions.extend(est.traffic.notes.iter().cloned());
    if let Some(b) = limited {
        assumptions.push(format!(
            "power limit: the board draws {:.0} W while a kernel runs plus {} pJ per lane instruction (times the clock's share of the rated boost clock to the power {}, for the voltage) and {:.0} pJ per DRAM byte over the time; above its {:.0} W limit the clock falls until the demand meets it, to {:.0} % of the {} clock here (at least the base clock, {:.0} %; docs/models/bottleneck.md, \"Power limit\")",
            b.fixed_w,
            crate::power_limit::fitted::LANE_INSTRUCTION_PJ,
            crate::power_limit::CLOCK_POWER_EXPONENT - 1.0,
            b.byte_pj,
            b.limit_w,
            100.0 * est.clock_ratio,
            if p.locked_clock { "locked" } else { "boost" },
            100.0 * b.min_clock_ratio
        ));
    }
    match p.calibrated_on {
        Some(n) => assumptions.push(format!("calibrated on {n} measurements")),
        None => assumptions.push(
            "uncalibrated: block overhead, store drain and latency exposure fitted on V100/A100 streaming measurements (docs/validation.md)".into(),
        ),
    }
    Prediction {
        model: NAME,
        time_us: est.time_us,
        breakdown,
        bound: est.binding,
        confidence: if contention_unknown {
            Confidence::Low
        } else if p.calibrated_on.is_some() {
            Confidence::High
        } else {
            Confidence::Medium
        },
        assumptions,
        explanation,
        mwp: None,
        cwp: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_profile::model::{BlockProfile, InstrNode};

    #[test]
    fn the_sm_side_queue_adds_to_the_closed_form_and_solves_its_equation() {
        // No SM-side work: the closed form of the memory queue alone.
        let closed = combine(100.0, 60.0, 90.0, 0.0, 0.25);
        let expected = ((90.0 + 100.0) + ((90.0_f64 - 100.0).powi(2) + 4.0 * 0.25 * 90.0 * 60.0).sqrt()) / 2.0;
        assert!((closed - expected).abs() < 1e-9, "{closed} against {expected}");
        // An SM-side term as large: the chain's other 40 µs queue for it too.
        let t = combine(100.0, 60.0, 90.0, 80.0, 0.25);
        assert!(t > closed, "{t} not above {closed}");
        let queue = |work: f64, busy: f64| work * (busy / t) / (1.0 - busy / t);
        let rhs = 100.0 + 0.25 * (queue(60.0, 90.0) + queue(40.0, 80.0));
        assert!((rhs - t).abs() < 1e-6 * t, "{t} does not solve the equation ({rhs})");
        // κ = 0 is perfect overlap: the larger term.
        assert_eq!(combine(100.0, 60.0, 90.0, 80.0, 0.0), 100.0);
        // A latency term all on loads leaves the SM-side queue nothing to stretch.
        assert_eq!(combine(100.0, 100.0, 90.0, 80.0, 0.25), combine(100.0, 100.0, 90.0, 0.0, 0.25));
    }

    /// A profile whose only basic block is `instrs` (class, deps), run `executions` times.
    fn one_block(instrs: &[(InstrClass, &[u32])], executions: f64) -> KernelProfile {
        let mut p: KernelProfile =
            serde_json::from_str(include_str!("../tests/fixtures/vector_add.json")).expect("fixture");
        let instructions = instrs
            .iter()
            .map(|(class, deps)| InstrNode { class: *class, opcode: class.name(), deps: deps.to_vec(), fused_from: None, result_unused: false, reads_three_registers: false, access: None })
            .collect();
        p.blocks = vec![BlockProfile { id: 0, executions, instructions, successors: vec![], active_lane_fraction: None, busiest_warp_executions: None, ptxas_copies: None }];
        p
    }

    /// A100 parameters with round latencies, and loads that always take 500 cycles.
    fn params() -> (Params, LoadLatency) {
        let mut p = Params::from_gpu(gpu_spec::Database::builtin().gpu("a100-sxm4-80gb").expect("database GPU"));
        p.alu_latency_cycles = 4.0;
        p.shared_latency_cycles = 30.0;
        (p, LoadLatency { l1_cycles: 500.0, l2_cycles: 500.0, dram_cycles: 500.0, average: (1.0, 0.0), arrays: HashMap::new() })
    }

    const LD: InstrClass = InstrClass::Load(Space::Global);
    const ADD: InstrClass = InstrClass::Fp32;
    const ST: InstrClass = InstrClass::Store(Space::Global);
    const LDS: InstrClass = InstrClass::Load(Space::Shared);
    const INT: InstrClass = InstrClass::IntAlu;

    /// Four independent loads whose lanes each touch their own line (32 wavefronts a
    /// request), then an add of the four: the L1 passes one wavefront a cycle, so the last
    /// load's data is back 3 × 32 + 31 cycles after the first's could be, plus the load
    /// latency; coalesced (one wavefront each), 3 + 0.
    #[test]
    fn a_warps_own_wavefronts_queue_in_the_l1_ahead_of_its_later_loads() {
        let (mut p, loads) = params();
        p.in_order_exposure = 0.0;
        let mut prof = one_block(&[(LD, &[]), (LD, &[]), (LD, &[]), (LD, &[]), (ADD, &[0, 1, 2, 3])], 1.0);
        let mut access = prof.memory_accesses[0].clone();
        access.l1_wavefronts_per_request = Some(32.0);
        prof.memory_accesses = vec![access];
        for ins in prof.blocks[0].instructions.iter_mut().take(4) {
            ins.access = Some(0);
        }
        assert_eq!(chain_cycles(&prof, &p, &loads), Chain { cycles: 3.0 * 32.0 + 31.0 + 500.0 + 4.0, offchip_cycles: 500.0 });
        prof.memory_accesses[0].l1_wavefronts_per_request = Some(1.0);
        assert_eq!(chain_cycles(&prof, &p, &loads), Chain { cycles: 3.0 + 500.0 + 4.0, offchip_cycles: 500.0 });
    }

    /// A row-per-thread product's loop body: four loads of the row (each sector read by eight
    /// loads in turn: 1/8 of a requested sector misses L1 and comes from DRAM) and four of
    /// the vector (1/32 of a requested sector misses L1, none from DRAM: every warp reads it).
    /// The block misses L1 and waits for DRAM on every second pass (4 × 1/8). Where the
    /// profile links no load to its access, each load waits as the kernel's average one (all
    /// to L2, 0.1 from DRAM, here), on its own: nothing says they share lines. Where a lone
    /// warp reads the vector, its sectors come from DRAM as often as the row's, on the same
    /// passes: still every second one, not every one.
    #[test]
    fn a_block_waits_for_dram_by_its_own_loads_shares() {
        let mut prof = one_block(&[(LD, &[]), (LD, &[]), (LD, &[]), (LD, &[]), (LD, &[]), (LD, &[]), (LD, &[]), (LD, &[])], 1.0);
        let access = |base: &str| {
            let mut a = prof.memory_accesses[0].clone();
            a.address = Some(serde_json::from_value(serde_json::json!({ "base": base })).expect("pattern"));
            a
        };
        prof.memory_accesses = vec![access("a"), access("x")];
        let mut loads = LoadLatency {
            l1_cycles: 30.0,
            l2_cycles: 200.0,
            dram_cycles: 500.0,
            average: (1.0, 0.1),
            arrays: HashMap::from([("a".to_string(), (1.0 / 8.0, 1.0 / 8.0)), ("x".to_string(), (1.0 / 32.0, 0.0))]),
        };
        assert_eq!(loads.for_loads(&prof, &prof.blocks[0]), 200.0 + 0.1 * 300.0);
        for (i, ins) in prof.blocks[0].instructions.iter_mut().enumerate() {
            ins.access = Some(u32::from(i >= 4));
        }
        assert_eq!(loads.for_loads(&prof, &prof.blocks[0]), 30.0 + 0.5 * 170.0 + 0.5 * 300.0);
        loads.arrays.insert("x".to_string(), (1.0 / 8.0, 1.0 / 8.0));
        assert_eq!(loads.for_loads(&prof, &prof.blocks[0]), 30.0 + 0.5 * 170.0 + 0.5 * 300.0);
    }

    /// A block whose busiest warp runs the loop body eight times as often as the average
    /// warp (one of eight warps works): the chain is that warp's, eight times the average's,
    /// and the latency term says whose it is.
    #[test]
    fn the_chain_is_the_busiest_warps() {
        let gpu = gpu_spec::Database::builtin().gpu("a100-sxm4-80gb").expect("database GPU");
        let p = Params::from_gpu(gpu);
        let mut prof = one_block(&[(LD, &[]), (ADD, &[0]), (ST, &[1])], 1.0);
        let run = |prof: &KernelProfile| estimate(prof, &p, 1, &cache_config(gpu, prof, 1)).expect("estimate");
        let even = run(&prof);
        prof.blocks[0].busiest_warp_executions = Some(8.0);
        let busy = run(&prof);
        assert_eq!(busy.chain_cycles, 8.0 * even.chain_cycles);
        let latency = |e: &Estimate| e.terms.iter().find(|t| t.bound == Bound::Latency).map(|t| t.detail.clone()).unwrap_or_default();
        assert!(latency(&busy).contains("the busiest warp of each block waiting"), "{}", latency(&busy));
        assert!(latency(&even).contains("each waiting"), "{}", latency(&even));
    }

    /// An unrolled naive matrix product's loads of B: four rows, a row (4 KiB) apart, each
    /// 3/10 of a requested sector past L1 and 1/10 from DRAM. They touch four different
    /// lines, which the loop crosses on the same passes: the block waits as for one of them,
    /// not for the sum (which would miss L1 on every pass). Four loads within one line (a
    /// row's consecutive elements) do add up.
    #[test]
    fn loads_a_line_or_more_apart_wait_as_one_of_them() {
        let mut prof = one_block(&[(LD, &[]), (LD, &[]), (LD, &[]), (LD, &[])], 1.0);
        let template = prof.memory_accesses[0].clone();
        let at = |offset: i64| {
            let mut a = template.clone();
            a.address = Some(serde_json::from_value(serde_json::json!({ "base": "b", "offset": offset })).expect("pattern"));
            a
        };
        let loads = LoadLatency {
            l1_cycles: 30.0,
            l2_cycles: 200.0,
            dram_cycles: 500.0,
            average: (1.0, 1.0),
            arrays: HashMap::from([("b".to_string(), (0.3, 0.1))]),
        };
        for (i, ins) in prof.blocks[0].instructions.iter_mut().enumerate() {
            ins.access = Some(i as u32);
        }
        prof.memory_accesses = (0..4).map(|k| at(k * 4096)).collect();
        let one = 30.0 + 0.3 * 170.0 + 0.1 * 300.0;
        assert!((loads.for_loads(&prof, &prof.blocks[0]) - one).abs() < 1e-9);
        prof.memory_accesses = (0..4).map(|k| at(k * 4)).collect();
        let four = 30.0 + 1.0 * 170.0 + 0.4 * 300.0;
        assert!((loads.for_loads(&prof, &prof.blocks[0]) - four).abs() < 1e-9);
    }

    /// Four shared loads, each read by the FMA after it: the critical path is one load and
    /// one FMA (30 + 4), but in order each load issues one cycle after the FMA before it,
    /// which waited 30 cycles for its own load: 31 cycles a pair, the last FMA done at
    /// 3 × 31 + 30 + 4 = 127. The chain takes `in_order_exposure` of the difference.
    #[test]
    fn a_lone_warp_waits_out_each_shared_load_its_next_instruction_reads() {
        let (mut p, loads) = params();
        let pairs: Vec<(InstrClass, &[u32])> =
            vec![(LDS, &[]), (ADD, &[0]), (LDS, &[]), (ADD, &[2]), (LDS, &[]), (ADD, &[4]), (LDS, &[]), (ADD, &[6])];
        let prof = one_block(&pairs, 1.0);
        p.in_order_exposure = 0.0;
        assert_eq!(chain_cycles(&prof, &p, &loads), Chain { cycles: 34.0, offchip_cycles: 0.0 });
        p.in_order_exposure = 1.0;
        assert_eq!(chain_cycles(&prof, &p, &loads), Chain { cycles: 127.0, offchip_cycles: 0.0 });
        p.in_order_exposure = 0.25;
        assert_eq!(chain_cycles(&prof, &p, &loads).cycles, 34.0 + 0.25 * (127.0 - 34.0));
    }

    /// Two global loads, each after its address arithmetic and before the FMA that reads it
    /// (PTX order: `mul.wide`, `add`, `ld`, `fma`, twice). ptxas hoists the second load and
    /// its address over the first FMA, so the in-order schedule does too: the two loads are
    /// in flight together. On the A100 the integer instructions hold their partition's ALU
    /// for 2 cycles (64 results per clock per SM over 4 partitions), the loads its LD/ST units
    /// for 4 (32 lanes per SM): the first load issues at 8 and is ready at 508, the second at
    /// 14 (its address at 6 and 10, the LD/ST units free at 12) and ready at 514; the FMAs
    /// at 508 and 514, done at 518, 2 cycles after the critical path's 516
    /// (4 + 4 + 500 + 4 + 4). Not hoisted, the second load would wait behind the first FMA:
    /// 1,000 cycles more.
    #[test]
    fn off_chip_loads_and_their_addresses_issue_ahead_of_the_waiting_arithmetic() {
        let (mut p, loads) = params();
        p.in_order_exposure = 1.0;
        let instrs: Vec<(InstrClass, &[u32])> =
            vec![(INT, &[]), (INT, &[0]), (LD, &[1]), (ADD, &[2]), (INT, &[]), (INT, &[4]), (LD, &[5]), (ADD, &[6, 3])];
        let c = chain_cycles(&one_block(&instrs, 1.0), &p, &loads);
        assert_eq!(c, Chain { cycles: 518.0, offchip_cycles: 500.0 });
    }

    #[test]
    fn a_load_add_store_path_is_the_load_latency_off_chip() {
        let (p, loads) = params();
        let prof = one_block(&[(LD, &[]), (ADD, &[0]), (ST, &[1])], 3.0);
        let c = chain_cycles(&prof, &p, &loads);
        assert_eq!(c, Chain { cycles: 3.0 * 504.0, offchip_cycles: 3.0 * 500.0 });
    }

    #[test]
    fn an_alu_chain_longer_than_a_parallel_load_has_no_off_chip_part() {
        let (p, loads) = params();
        // A load beside 200 dependent adds (800 cycles), joined by a last add.
        let mut instrs: Vec<(InstrClass, Vec<u32>)> = vec![(LD, vec![])];
        for i in 0..200u32 {
            instrs.push((ADD, if i == 0 { vec![] } else { vec![i] }));
        }
        instrs.push((ADD, vec![0, 200]));
        let instrs: Vec<(InstrClass, &[u32])> = instrs.iter().map(|(c, d)| (*c, d.as_slice())).collect();
        let c = chain_cycles(&one_block(&instrs, 1.0), &p, &loads);
        assert_eq!(c, Chain { cycles: 201.0 * 4.0, offchip_cycles: 0.0 });
        // With 100 adds (400 cycles) the load's path is the longer one.
        let short: Vec<(InstrClass, &[u32])> =
            instrs[..101].iter().copied().chain([(ADD, &[0u32, 100][..])]).collect();
        let c = chain_cycles(&one_block(&short, 1.0), &p, &loads);
        assert_eq!(c, Chain { cycles: 504.0, offchip_cycles: 500.0 });
    }

    #[test]
    fn at_a_tie_the_path_through_the_load_is_taken() {
        let (p, loads) = params();
        // 125 dependent adds finish at 500 cycles, with the load.
        let mut instrs: Vec<(InstrClass, Vec<u32>)> = vec![(LD, vec![])];
        for i in 0..125u32 {
            instrs.push((ADD, if i == 0 { vec![] } else { vec![i] }));
        }
        instrs.push((ADD, vec![125, 0]));
        let instrs: Vec<(InstrClass, &[u32])> = instrs.iter().map(|(c, d)| (*c, d.as_slice())).collect();
        let c = chain_cycles(&one_block(&instrs, 1.0), &p, &loads);
        assert_eq!(c, Chain { cycles: 504.0, offchip_cycles: 500.0 });
    }

    #[test]
    fn off_chip_atomics_count_and_shared_loads_do_not() {
        let (p, loads) = params();
        let atomic = one_block(&[(InstrClass::Atomic(Space::Global), &[]), (ADD, &[0])], 1.0);
        assert_eq!(chain_cycles(&atomic, &p, &loads), Chain { cycles: 504.0, offchip_cycles: 500.0 });
        let shared = one_block(&[(InstrClass::Load(Space::Shared), &[]), (ADD, &[0]), (InstrClass::Barrier, &[])], 2.0);
        assert_eq!(chain_cycles(&shared, &p, &loads), Chain { cycles: 2.0 * 34.0, offchip_cycles: 0.0 });
        // Two blocks: the parts add up over the blocks, each by its executions.
        let mut both = atomic.clone();
        both.blocks.push(BlockProfile { id: 1, ..shared.blocks[0].clone() });
        assert_eq!(chain_cycles(&both, &p, &loads), Chain { cycles: 504.0 + 68.0, offchip_cycles: 500.0 });
    }

    #[test]
    fn a_barrier_waits_for_the_shared_stores_before_it() {
        let (p, loads) = params();
        const LDS: InstrClass = InstrClass::Load(Space::Shared);
        const STS: InstrClass = InstrClass::Store(Space::Shared);
        // A tree-reduction step in one block: part[t] += part[t + s]; __syncthreads().
        // LDS 30 → add 4 → the store performed 30 later → the barrier 30: 94.
        let step = one_block(&[(LDS, &[]), (LDS, &[]), (ADD, &[0, 1]), (STS, &[2]), (InstrClass::Barrier, &[])], 1.0);
        assert_eq!(chain_cycles(&step, &p, &loads).cycles, 94.0);
        // The same with the barrier in the next block (the `if (t < s)` body, then the
        // barrier after it): the store's 30 cycles are on the body's path, 64.
        let mut split = one_block(&[(LDS, &[]), (ADD, &[0]), (STS, &[1])], 1.0);
        split.blocks[0].successors = vec![1];
        let barrier = one_block(&[(InstrClass::Barrier, &[]), (ADD, &[])], 1.0);
        split.blocks.push(BlockProfile { id: 1, ..barrier.blocks[0].clone() });
        assert_eq!(chain_cycles(&split, &p, &loads).cycles, 64.0 + 30.0);
        // A store followed by a load before any barrier is handed off as before (a
        // warp-synchronous tail; in-order shared memory serves the load after it).
        let tail = one_block(&[(LDS, &[]), (ADD, &[0]), (STS, &[1]), (LDS, &[]), (InstrClass::Barrier, &[])], 1.0);
        assert_eq!(chain_cycles(&tail, &p, &loads).cycles, 34.0);
    }

    /// One block of [`blocks`]: its instructions (class, in-block dependences) and its
    /// successors.
    type TestBlock<'a> = (&'a [(InstrClass, &'a [u32])], &'a [u32]);

    /// Blocks in layout order, all run once.
    fn blocks(list: &[TestBlock<'_>]) -> KernelProfile {
        let mut p = one_block(&[], 1.0);
        p.blocks = list
            .iter()
            .enumerate()
            .map(|(id, (instrs, succ))| {
                let b = one_block(instrs, 1.0).blocks.remove(0);
                BlockProfile { id: id as u32, successors: succ.to_vec(), ..b }
            })
            .collect();
        p
    }

    #[test]
    fn consecutive_guarded_loads_are_in_flight_together() {
        let (p, loads) = params();
        // `if (r0 < m) v0 = A[i0]; if (r1 < m) v1 = A[i1];`: heads 0 and 2 branch around
        // the one-load bodies 1 and 3; ptxas predicates both loads and issues them back to
        // back, so the chain waits for one load, not two: 4 + 4 + 4 + 500.
        let two = blocks(&[(&[(ADD, &[])], &[1, 2]), (&[(LD, &[])], &[2]), (&[(ADD, &[])], &[3, 4]), (&[(LD, &[])], &[4]), (&[(ADD, &[])], &[])]);
        assert_eq!(chain_cycles(&two, &p, &loads), Chain { cycles: 512.0, offchip_cycles: 500.0 });
        // A body with a barrier keeps its branch: both loads count.
        let barrier = blocks(&[(&[(ADD, &[])], &[1, 2]), (&[(LD, &[]), (InstrClass::Barrier, &[])], &[2]), (&[(ADD, &[])], &[3, 4]), (&[(LD, &[])], &[4]), (&[(ADD, &[])], &[])]);
        assert_eq!(chain_cycles(&barrier, &p, &loads).cycles, 1012.0);
        // Bodies with other code between them (a loop's exit test and its latch) are
        // separate groups, each waited for.
        let apart = blocks(&[
            (&[(ADD, &[])], &[1, 2]),
            (&[(LD, &[])], &[2]),
            (&[(ADD, &[])], &[3]),
            (&[(ADD, &[])], &[4, 5]),
            (&[(LD, &[])], &[5]),
            (&[(ADD, &[])], &[]),
        ]);
        assert_eq!(chain_cycles(&apart, &p, &loads).cycles, 1016.0);
    }

    #[test]
    fn an_atomic_whose_result_nobody_reads_is_a_write_not_a_wait() {
        let (p, loads) = params();
        // atomicAdd(&sum, v) with the old value unused: a RED, like a store.
        let mut red = one_block(&[(ADD, &[]), (InstrClass::Atomic(Space::Global), &[0])], 1.0);
        red.blocks[0].instructions[1].result_unused = true;
        assert_eq!(chain_cycles(&red, &p, &loads), Chain { cycles: 4.0, offchip_cycles: 0.0 });
        // ... whose write still drains before the block's slot is free, as a store's does.
        let caches = CacheConfig { sm_count: 108, l1_bytes_per_sm: 192 << 10, l2_bytes: 40 << 20, resident_blocks_per_sm: 8, l1_caches_global_loads: true, l2_partitioned: true };
        let mut t = traffic::estimate(&red, &caches);
        t.global_store_requests = 0.0;
        assert!(writes_without_waiting(&red, &t));
        let mut awaited = red.clone();
        awaited.blocks[0].instructions[1].result_unused = false;
        assert!(!writes_without_waiting(&awaited, &t));
        t.global_store_requests = 1.0;
        assert!(writes_without_waiting(&awaited, &t));
    }
}
