//! The `KernelProfile` data structure: everything the performance and power models read
//! about one kernel under one launch configuration on one GPU.
//!
//! This is the contract between the static analysis (which fills it from PTX) and the
//! models (which only read it). Its JSON form is documented in `docs/profile.md`; the
//! field names here are that form. A profile can also be written by hand (for example
//! from a paper's published inputs) and fed to `warpsight predict`.
//!
//! All counts are *per thread* unless their name says otherwise, and *dynamic* (expected
//! executions) unless their name starts with `static_`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use ptx_ir::{InstrClass, Space};

/// One kernel's static profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelProfile {
    /// The `.entry` name as in the PTX (mangled for C++ kernels).
    pub kernel: String,
    /// The demangled signature, when the name is a mangled C++ name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    /// The GPU id (a `gpu-data` slug such as `a100-sxm4-80gb`) the profile was made for.
    pub gpu: String,
    pub launch: LaunchConfig,
    pub resources: Resources,
    /// Per-thread dynamic instruction counts by class.
    pub counts: InstructionCounts,
    #[serde(default)]
    pub memory_accesses: Vec<MemoryAccess>,
    #[serde(default)]
    pub loops: Vec<LoopInfo>,
    #[serde(default)]
    pub divergent_branches: Vec<BranchInfo>,
    /// Per basic block: its expected executions per thread and its instructions with
    /// their dependences (what the list-scheduling model of Alavani 2023 schedules).
    #[serde(default)]
    pub blocks: Vec<BlockProfile>,
    /// Every assumption made while building the profile, in words a user can read
    /// ("trip count of the loop at line 12 unknown: assumed 16").
    #[serde(default)]
    pub assumptions: Vec<String>,
}

impl KernelProfile {
    /// Whether some basic block's busiest warp runs it at least 5 % more often than the
    /// average warp ([`BlockProfile::busiest_warp_executions`]): warps of a block doing
    /// unequal work (a loop only the first warp enters), not a grid-stride loop's last
    /// iteration that some threads skip.
    pub fn warps_work_unequally(&self) -> bool {
        self.blocks.iter().any(|b| b.busiest_executions() > 1.05 * b.executions)
    }
}

/// Where the launch configuration came from (issue: documented order of sources).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaunchSource {
    /// An explicit CLI flag or editor setting.
    Setting,
    /// A `// warpsight: grid=... block=...` comment in the source.
    Annotation,
    /// A `kernel<<<grid, block, smem>>>(...)` launch site in a `.cu` file.
    CallSite,
    /// Nothing was known; the documented default was used.
    Default,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchConfig {
    /// Blocks in the grid (x, y, z).
    pub grid: [u32; 3],
    /// Threads per block (x, y, z).
    pub block: [u32; 3],
    /// Dynamic shared memory per block in bytes.
    #[serde(default)]
    pub dynamic_smem: u32,
    /// Kernel argument values by parameter name (used to resolve symbolic trip counts).
    #[serde(default)]
    pub args: BTreeMap<String, i64>,
    /// Bytes the kernel's data-dependent accesses range over, where the user stated it (the
    /// launch grammar's `footprint`): where those accesses are served (L1, L2 or DRAM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint_bytes: Option<u64>,
    /// Bytes allocated for pointer arguments, by parameter name (the CUDA name, the PTX
    /// name or `param_N`), where the host code's allocation is known (the CUDA front end
    /// folds `cudaMalloc(&d_x, n * sizeof(float))` before the launch): a data-dependent
    /// access through that pointer (a gather `x[col[k]]`, a histogram's `bins[v]`) ranges
    /// over it (`MemoryAccess::data_span_bytes`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub array_bytes: BTreeMap<String, u64>,
    pub source: LaunchSource,
}

/// The most executions per thread a profile counts for one basic block, and the most
/// dynamic instructions per thread the models accept. Not a hardware limit: a sanity
/// bound. A thread that executes 10^15 instructions runs for days at any clock (at one
/// instruction per cycle and 2 GHz, 5 × 10^5 s), so a larger count means trip counts that
/// multiply to nonsense (a huge `--default-trip-count` or `--arg` across nested loops).
/// Block frequencies saturate here, so a profile stays finite (and its JSON readable);
/// the models refuse such a profile with a message instead of overflowing
/// (`perf_models::guard`).
pub const MAX_EXECUTIONS_PER_THREAD: f64 = 1e15;

impl LaunchConfig {
    /// Threads per block (saturating: three `u32` dimensions can exceed `u64`).
    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().fold(1u64, |acc, &d| acc.saturating_mul(u64::from(d.max(1))))
    }
    /// Blocks in the grid (saturating).
    pub fn blocks(&self) -> u64 {
        self.grid.iter().fold(1u64, |acc, &d| acc.saturating_mul(u64::from(d.max(1))))
    }
    /// Threads in the launch (saturating at `u64::MAX`; see [`LaunchConfig::checked_total_threads`]).
    pub fn total_threads(&self) -> u64 {
        self.threads_per_block().saturating_mul(self.blocks())
    }
    /// Threads in the launch, `None` when the count does not fit in a `u64` (grid and
    /// block dimensions are each up to 2^32 - 1).
    pub fn checked_total_threads(&self) -> Option<u64> {
        self.block.iter().chain(&self.grid).try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d.max(1))))
    }
}

/// Where register and shared-memory figures came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceSource {
    /// `ptxas -v` for the target architecture.
    Ptxas,
    /// Estimated from `.reg` declarations and liveness (no ptxas available).
    Estimate,
    /// Given explicitly (a hand-written profile, a paper's table).
    Given,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    pub registers_per_thread: u32,
    /// Static shared memory per block in bytes.
    pub static_smem_bytes: u32,
    #[serde(default)]
    pub local_bytes_per_thread: u32,
    #[serde(default)]
    pub spill_store_bytes: u32,
    #[serde(default)]
    pub spill_load_bytes: u32,
    #[serde(default)]
    pub stack_frame_bytes: u32,
    /// Named barriers used (`bar.sync N`), at least 1 when the kernel synchronises.
    #[serde(default)]
    pub barriers: u32,
    pub source: ResourceSource,
}

impl Resources {
    /// Resources stated by the caller (a test, a paper's table, a profile written by hand):
    /// these registers and static shared memory, no local memory, spills or barriers.
    pub fn given(registers_per_thread: u32, static_smem_bytes: u32) -> Resources {
        Resources {
            registers_per_thread,
            static_smem_bytes,
            local_bytes_per_thread: 0,
            spill_store_bytes: 0,
            spill_load_bytes: 0,
            stack_frame_bytes: 0,
            barriers: 0,
            source: ResourceSource::Given,
        }
    }
}

/// Per-thread instruction counts by class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InstructionCounts {
    /// Expected executions per thread, by class (`int_alu`, `fp32`, `load_global`, ...).
    pub dynamic: BTreeMap<InstrClass, f64>,
    /// Instructions in the kernel text (and the device functions it calls), by class.
    #[serde(default)]
    #[serde(rename = "static")]
    pub static_: BTreeMap<InstrClass, u64>,
    /// Dynamic `bar.sync`/`barrier` executions per thread.
    #[serde(default)]
    pub barriers: f64,
    /// Dynamic `membar`/`fence` executions per thread.
    #[serde(default)]
    pub fences: f64,
    /// Dynamic atomic and reduction executions per thread.
    #[serde(default)]
    pub atomics: f64,
}

impl InstructionCounts {
    pub fn total_dynamic(&self) -> f64 {
        self.dynamic.values().sum()
    }
    pub fn dynamic_of(&self, pred: impl Fn(InstrClass) -> bool) -> f64 {
        self.dynamic.iter().filter(|(c, _)| pred(**c)).map(|(_, n)| n).sum()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

/// How the 32 threads of a warp spread their addresses (for global memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessClass {
    /// Every thread of the warp reads the same address.
    Uniform,
    /// Consecutive threads read consecutive elements: the minimum number of sectors.
    Coalesced,
    /// A constant stride between consecutive threads (see `stride_bytes`).
    Strided,
    /// Data-dependent address: assumed worst case unless configured otherwise.
    Irregular,
}

/// One memory instruction of the kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryAccess {
    pub space: Space,
    pub kind: AccessKind,
    pub class: AccessClass,
    /// Bytes between the addresses of consecutive threads (`threadIdx.x` and `+1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride_bytes: Option<i64>,
    /// Bytes accessed per thread (element size × vector width).
    pub bytes_per_thread: u32,
    /// `.v2`/`.v4` vector width (1 for scalar).
    pub vector_width: u8,
    /// 32-byte sectors (or 128-byte transactions on CC < 2.0... see docs) per warp request.
    pub transactions_per_request: f64,
    /// Shared memory only: how many ways the warp's request is serialised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_conflict_ways: Option<u32>,
    /// Shared memory only, where the control flow was simulated and every active lane's
    /// address evaluated: the ways averaged over the warps' executions, on the lanes active
    /// at each (a tree whose stride doubles each step, `s[2 * stride * tid]`, has 2, 4, 8
    /// ways at its steps; `bank_conflict_ways` is then the most seen). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_bank_conflict_ways: Option<f64>,
    /// Global and generic loads and stores with known lanes: the L1 wavefronts of one warp
    /// request, the larger of its data-bank passes and its tag lookups
    /// (`access::l1_wavefronts`: a column walk whose lanes all land on one bank takes 32).
    /// Absent for data-dependent addresses, atomics and other spaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1_wavefronts_per_request: Option<f64>,
    /// Global and generic loads and stores with known lanes: the distinct 128-byte lines
    /// one warp request touches (`access::l1_lines`; 32 for a column walk, 1 for a
    /// coalesced 4-byte access). A store sends one request per line on to L2. Absent where
    /// `l1_wavefronts_per_request` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines_per_request: Option<f64>,
    /// Expected executions per thread.
    pub executions: f64,
    /// Local memory only: `true` when it comes from a register spill rather than a stack
    /// array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill: Option<bool>,
    /// 1-based line in the PTX text.
    pub ptx_line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_line: Option<u32>,
    /// Atomics only: the most lanes of one warp request that hit the same address (32 for
    /// `atomicAdd(&counter, 1)`, 1 when every lane has its own address). Atomics to one
    /// address are serialised, so this is the contention a model charges. Absent on an
    /// atomic whose address depends on data (class `irregular`): unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_address_lanes: Option<u32>,
    /// Data-dependent atomics and global loads only: the bytes the address ranges over
    /// when it indexes one table of the launch by a bounded value (a histogram's
    /// `hist[byte]`: 1 KiB of counters; a lookup table's `lut[byte]`;
    /// `kernel_profile::index_range`). An atomic's lanes then contend for that many cache
    /// lines; a load's sectors are those of a table of that size (in L1 when it fits).
    /// Absent when the index's range is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_span_bytes: Option<u64>,
    /// Mean fraction of a warp's lanes active when it executes the access (its block's
    /// `active_lane_fraction`): a guard such as `if (threadIdx.x == 0)` leaves one lane of
    /// 32, so an atomic there contends with 1/32 of what the warp's addresses suggest and
    /// a load moves only the active lanes' sectors. Absent when all lanes are active or
    /// the conditions on the way are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_lane_fraction: Option<f64>,
    /// The share of a block's threads that make the access at least once, where the control
    /// flow was simulated and some never do (a row loop under `if (row < m)` with 32 of 256
    /// rows in range: 1/8): the footprint of its pattern is theirs. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_reach: Option<f64>,
    /// How the address moves across the grid (the array it touches and its affine
    /// coefficients), for footprint and reuse estimates; absent when the address is not
    /// affine (data-dependent or piecewise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<AddressPattern>,
    /// Constant memory only: `true` when ptxas turns the load into a constant-bank operand
    /// of the instruction that uses the value (a fixed address): no load is issued, and
    /// the instruction counts do not include it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant_operand: Option<bool>,
    /// Global loads only: `true` for a load through the read-only (non-coherent) path,
    /// PTX `ld.global.nc` (`__ldg`, or `const __restrict__` data nvcc proves read-only) or
    /// `ldu`, which the read-only data cache (compute capability 3.5-3.7) or the unified
    /// L1/texture cache (5.x, 6.x) keeps where plain global loads go to L2 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Global and shared atomics: `true` for a 32-bit integer add, min, max, and, or or xor
    /// on one address across the warp (`atomicAdd(&count, 1)`, `atomicAdd(&sum, v)`,
    /// `atomicMax(&m, v)` with an `int`), which ptxas turns into one atomic per warp request
    /// by its first active lane (the others' values combined with `POPC` of the active mask,
    /// `REDUX.SUM`/`.MIN`/`.MAX`/`.OR`/`.XOR` on sm_80 and later or a `SHFL.BFLY` tree on
    /// sm_75, or `ATOMS.POPC.INC` in shared memory: nvdisasm of nvcc 13.5's sm_75 to sm_90
    /// code; NVIDIA, "CUDA Pro Tip: Optimized Filtering with Warp-Aggregated Atomics", 2017
    /// update: the compiler does it automatically): one operation per request, not
    /// `same_address_lanes`. Floating-point adds, 64-bit operations, `inc` and `exch` stay
    /// one per lane (`RED.E.ADD.F32`, `RED.E.ADD.64`, `RED.E.INC`, `ATOMG.E.EXCH` per lane in
    /// the same code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warp_aggregated: Option<bool>,
    /// Atomics only: `true` for an operation on integer or bit data (`.u32`, `.s64`, `.b32`:
    /// an add, min, max, logic, `inc`, `exch`, `cas`), `false` for one on floating-point data
    /// (`.f32`, `.f64`, `.f16`). The L2 performs the two at different rates (docs/models/bottleneck.md,
    /// `atomics`). Absent on other accesses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integer_atomic: Option<bool>,
    /// Global loads only: `true` when the address is a pointer an earlier
    /// load read (`p = *p`; `index_range::is_pointer_chase`). A chase around a fixed cycle
    /// finds a line again only after the whole cycle, so a cache smaller than it keeps
    /// none of it, where random gathers over the same bytes hit in proportion
    /// (`traffic`, stated footprints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer_chase: Option<bool>,
    /// Data-dependent global loads only: the address is a pointer that the innermost loop
    /// around the load advances by a constant each iteration (nvcc's strength-reduced
    /// `&values[k]` in a CSR row walk `for (k = row_ptr[r]; k < row_ptr[r + 1]; ++k)`,
    /// whose start was loaded). Each lane then walks its own run of memory, so a request's
    /// sectors are mostly the ones the previous iteration read (`traffic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk: Option<Walk>,
}

impl MemoryAccess {
    /// The L1 wavefronts of one warp request counting its active lanes only
    /// ([`MemoryAccess::l1_wavefronts_per_request`] is a full warp's): a column walk's request
    /// from two lanes under `if (row < m)` passes two lines, not 32. At least one.
    pub fn active_l1_wavefronts(&self) -> Option<f64> {
        let w = self.l1_wavefronts_per_request.filter(|w| w.is_finite() && *w >= 1.0)?;
        Some((w * self.active_share()).max(1.0))
    }

    /// The share of a warp's lanes that make a request ([`MemoryAccess::active_lane_fraction`]),
    /// all where unknown, at least one lane.
    pub fn active_share(&self) -> f64 {
        self.active_lane_fraction.filter(|f| f.is_finite()).unwrap_or(1.0).clamp(1.0 / 32.0, 1.0)
    }
}

/// A lane's walk through memory by a pointer a loop advances ([`MemoryAccess::walk`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Walk {
    /// The loop (index into [`KernelProfile::loops`]) that advances the pointer.
    pub loop_index: u32,
    /// The PTX register of the pointer: the loads through one pointer (an unrolled body's
    /// `[p]`, `[p+4]`, `[p+8]`, `[p+12]`) share its advance.
    pub pointer: String,
    /// Bytes the pointer moves per iteration of that loop.
    pub bytes_per_iteration: i64,
}

/// The address of a memory instruction as `base + offset + Σ coefficient · variable`,
/// every coefficient in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AddressPattern {
    /// What the address is relative to: `param_N` for the pointer passed as kernel
    /// parameter N, or the name of a module variable (`__shared__`, `__constant__`,
    /// `__device__`). Two accesses with the same base touch the same array.
    pub base: String,
    /// Bytes per unit of `threadIdx.x`, `.y`, `.z`.
    #[serde(default)]
    pub tid: [i64; 3],
    /// Bytes per unit of `blockIdx.x`, `.y`, `.z`.
    #[serde(default)]
    pub ctaid: [i64; 3],
    /// Bytes per unit of `%laneid`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lane: i64,
    /// Bytes per unit of `blockIdx.{x,y,z} % modulus` (a periodic block index).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ctaid_mod: Vec<CtaidModStride>,
    /// Bytes per unit of `blockIdx.{x,y,z} / modulus` (the row of a global index divided by
    /// a multiple of the block size; with the `ctaid_mod` term of the same modulus, the
    /// column's block part).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ctaid_div: Vec<CtaidModStride>,
    /// Bytes per unit of `threadIdx.x / k` or `threadIdx.x % k` (a 1-D block arranged in
    /// rows of `k` threads), or of `threadIdx.y / k` or `% k` (`dim` 1: a 2-D block's linear
    /// thread index divided by a multiple of its width).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tid_x_parts: Vec<TidXPart>,
    /// Bytes per iteration of each enclosing loop that moves the address.
    #[serde(default)]
    pub loops: Vec<LoopStride>,
    /// The constant byte offset from the base.
    #[serde(default)]
    pub offset: i64,
    /// `true` when the address also depends on values the analysis cannot put a number
    /// on (an argument not supplied, a value computed non-linearly but the same across the
    /// warp): the coefficients above are right but incomplete.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// What one warp request covers by itself from its address on, as (bytes apart,
    /// count) pairs: a `wmma` fragment's rows, `ldm` elements apart, and the elements of a
    /// row. Empty for an ordinary access, whose lanes the coefficients above describe.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<Span>,
}

impl AddressPattern {
    /// Whether `other` is this pattern at another constant offset (same base and
    /// coefficients, neither partial): the two accesses move together.
    pub fn same_but_offset(&self, other: &AddressPattern) -> bool {
        !self.partial && !other.partial && AddressPattern { offset: other.offset, ..self.clone() } == *other
    }
}

/// One dimension a single warp request spans ([`AddressPattern::spans`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub bytes: i64,
    pub count: u64,
}

/// One periodic (`ctaid_mod`) or divided (`ctaid_div`) block-index term of an
/// [`AddressPattern`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CtaidModStride {
    /// 0, 1, 2 for x, y, z.
    pub dim: u8,
    pub modulus: i64,
    pub bytes: i64,
}

/// One `threadIdx.x / k` (`op` `div`) or `threadIdx.x % k` (`mod`) term of an
/// [`AddressPattern`]; with `dim` 1, of `threadIdx.y`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TidXPart {
    pub op: TidXOp,
    pub k: i64,
    pub bytes: i64,
    /// The thread-index dimension divided: 0 (x, absent in JSON) or 1 (y).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dim: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TidXOp {
    Div,
    Mod,
}

fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// How far an address moves per iteration of one loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopStride {
    /// Index of the loop in the profile's `loops`.
    pub loop_index: u32,
    pub bytes_per_iteration: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopInfo {
    pub ptx_line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_line: Option<u32>,
    /// Nesting depth, 1 for an outermost loop.
    pub depth: u32,
    /// The trip count when it is a known constant (or resolved from `launch.args`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trip_count: Option<f64>,
    /// The symbolic trip count when it depends on kernel parameters, e.g. `n / 16`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trip_count_expr: Option<String>,
    /// The trip count the profile used (the known one, or the stated default).
    pub assumed_trip_count: f64,
    /// The line of the `// warpsight: trips=N` annotation that gave the trip count, when
    /// one did ([`StatedTrips`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_at: Option<u32>,
    /// For a loop whose count is not known: the most it can run, from a counted exit
    /// beside the one that depends on data (`it < MAX_ITER` in `while (|z| < 2 && it <
    /// MAX_ITER)`, a `for`'s test beside a `break`), when the arguments evaluate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trip_bound: Option<f64>,
}

/// A loop's trip count as the user states it, a `// warpsight: trips=N` comment on or
/// just before the loop, for a loop whose count no analysis reads (it ends on data) or
/// that depends on an argument nobody supplied (docs/cuda.md § Stating a launch). A count
/// the analysis knows is kept, and the statement is said to be unused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatedTrips {
    /// The `.file` path of the source the lines are in; `None` for lines of the PTX text.
    pub file: Option<String>,
    /// The lines the loop's head spans, first and last (1-based): the loop whose `.loc`
    /// (its back edge's) falls in them, or in PTX the loop whose header starts there.
    pub lines: (u32, u32),
    pub trips: f64,
    /// The line of the annotation, for the messages.
    pub annotation_line: u32,
    /// `true` when the annotation stands in this kernel's part of the text (after its
    /// definition, before the next one's): one that names none of its loops is then said.
    #[serde(default)]
    pub in_kernel: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchInfo {
    pub ptx_line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_line: Option<u32>,
    /// `true` when the branch is inside a loop.
    pub in_loop: bool,
}

/// One basic block for the scheduling model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockProfile {
    pub id: u32,
    /// Expected executions per thread.
    pub executions: f64,
    /// Mean fraction of active lanes in the warps that run the block, when branch
    /// conditions leave some lanes idle (`if (threadIdx.x < 16)`, a partial last warp);
    /// absent when all lanes are active or the conditions on the way are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_lane_fraction: Option<f64>,
    /// Executions by the busiest warp of a thread block (the one that runs the most
    /// instructions), where the control-flow simulation found it running this block more
    /// often than `executions`, the average warp's: a loop that only the first warp's lanes
    /// enter. Absent where every warp runs the block alike or nothing was simulated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_warp_executions: Option<f64>,
    /// A one-block loop with a run-time trip count that ptxas unrolls by 4 more
    /// (`sass.rs`, item 8): the iterations of the PTX loop that one pass through the
    /// unrolled code issues, on average over an entry's iterations (up to 4). ptxas issues
    /// the copies' off-chip loads together at the top of the unrolled body (nvdisasm), so
    /// the copies wait for them once. Absent for other blocks, for a loop whose trip count is
    /// not known, and for one whose load addresses depend on a load of the loop (a pointer
    /// chase: each copy waits for the one before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptxas_copies: Option<f64>,
    pub instructions: Vec<InstrNode>,
    /// Successor block ids in the CFG.
    #[serde(default)]
    pub successors: Vec<u32>,
}

impl BlockProfile {
    /// Executions by the busiest warp of a thread block: `busiest_warp_executions` where it
    /// is known and larger, else the average warp's `executions`.
    pub fn busiest_executions(&self) -> f64 {
        self.busiest_warp_executions.filter(|e| e.is_finite() && *e > self.executions).unwrap_or(self.executions)
    }
}

/// One instruction in a block's dependence graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstrNode {
    pub class: InstrClass,
    /// The full opcode with modifiers, e.g. `fma.rn.f32` (for per-opcode latency tables).
    pub opcode: String,
    /// Indices (within the block) of the instructions whose results this one reads.
    #[serde(default)]
    pub deps: Vec<u32>,
    /// The PTX instructions ptxas fuses into this one (`mul.f32 + add.f32` for a
    /// contracted FMA, whose `opcode` is then `fma.rn.f32`); absent for one-to-one ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fused_from: Option<String>,
    /// Atomics only: nothing reads the result (a PTX `red`, or an `atom` whose destination
    /// no instruction reads). ptxas issues a `RED` (nvdisasm of `examples/reduce.cu`), which,
    /// like a store, the warp hands to the memory system and does not wait for (PTX ISA,
    /// `red`: the reduction on memory that, unlike `atom`, returns no value).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub result_unused: bool,
    /// The instruction reads three different registers, none of which the block's previous
    /// issued instruction read ([`crate::build`]'s `register_reads`: a contracted pair reads
    /// the multiply's operands and the add's other one; constant-bank operands, parameters,
    /// immediates and predicates are no register reads). An FMA-pipe instruction of that kind
    /// cannot take an operand from the operand reuse cache, which holds what the previous
    /// instruction read (Jia et al. 2018, "Dissecting the NVIDIA Volta GPU Architecture via
    /// Microbenchmarking", §2.1 control information: reuse flags; §3.5 register banks), so
    /// the register file supplies all three.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_three_registers: bool,
    /// Memory instructions: the index in [`KernelProfile::memory_accesses`] of the access
    /// this instruction makes (its sectors, reuse and array); absent for other instructions
    /// and in profiles written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_serialise_with_class_names_as_keys() {
        let mut counts = InstructionCounts::default();
        counts.dynamic.insert(InstrClass::Load(Space::Global), 2.0);
        counts.dynamic.insert(InstrClass::Fp32, 10.0);
        let json = serde_json::to_string(&counts).unwrap();
        assert!(json.contains("\"load_global\":2.0"), "{json}");
        let back: InstructionCounts = serde_json::from_str(&json).unwrap();
        assert_eq!(back, counts);
    }

    /// A column walk (32 lines a full warp's request) from two lanes passes two lines; a
    /// coalesced request stays at one however few lanes make it; unknown lanes, none.
    #[test]
    fn only_active_lanes_take_l1_wavefronts() {
        let mut a: MemoryAccess = serde_json::from_value(serde_json::json!({
            "space": "global", "kind": "load", "class": "strided", "stride_bytes": 8388608,
            "bytes_per_thread": 4, "vector_width": 1, "transactions_per_request": 32.0,
            "executions": 1.0, "ptx_line": 1, "l1_wavefronts_per_request": 32.0
        }))
        .expect("access");
        assert_eq!(a.active_l1_wavefronts(), Some(32.0));
        a.active_lane_fraction = Some(2.0 / 32.0);
        assert_eq!(a.active_l1_wavefronts(), Some(2.0));
        a.l1_wavefronts_per_request = Some(1.0);
        assert_eq!(a.active_l1_wavefronts(), Some(1.0));
        a.l1_wavefronts_per_request = None;
        assert_eq!(a.active_l1_wavefronts(), None);
    }
}
