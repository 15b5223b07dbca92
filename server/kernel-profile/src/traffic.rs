//! Memory traffic of the whole grid at each level of the hierarchy, estimated from the
//! static profile: requests, the 32-byte sectors they move through L1, what misses L1 and
//! reaches L2, and the bytes that cross the DRAM interface.
//!
//! **Requests and sectors** are counted exactly from the profile: every execution of every
//! access, per warp (`executions` × warps), times its sectors per request
//! (`transactions_per_request`, from the lanes' addresses; CUDA C++ Best Practices Guide,
//! "Coalesced Access to Global Memory": a warp's request is served by the 32-byte sectors
//! it touches).
//!
//! **Reuse** is estimated from the address patterns (`MemoryAccess::address`: the array and
//! the bytes the address moves per thread, block and loop iteration). The distinct sectors
//! an access touches over a set of threads, blocks and iterations follow from its
//! coefficients ([`footprint`]); accesses to one array with the same thread and block
//! coefficients are one stream (a 3-point stencil's loads, the four loads of an unrolled
//! loop, a remainder loop), whose offsets only widen it (evenly spaced ones, or evenly
//! spaced groups of them, as more lattice dimensions: `offset_dimensions`). Three
//! footprints per array: over one block (what L1 can keep), over the blocks resident at
//! once on the whole GPU (what L2 can keep while they run), and over the grid (what must
//! come from DRAM once).
//!
//! - **L1 → L2.** A block's re-reads of its own data hit L1 when the distinct bytes all
//!   its arrays touch fit its share of L1 (`l1_bytes_per_sm` over the blocks resident on
//!   an SM at once: `resident_blocks_per_sm`, or fewer when the grid has fewer per SM);
//!   otherwise the share that fits is the hit rate. L2 load sectors = the block's distinct
//!   sectors + its re-reads × (1 − hit rate), over all blocks. Re-reads at a short
//!   distance are taken first: a row per thread's previous sectors (`near_rereads`) and
//!   what the last iterations of a loop read (`window_rereads`: a z-march's planes, read
//!   again one and two iterations later while the block's whole column does not fit) hit
//!   L1 when those iterations' data of the SM's resident blocks fits there.
//! - **L2 → DRAM.** Every array's distinct footprint is read once. Data that a later wave
//!   of resident blocks reads again (a stencil's halo rows, read by the next wave; a matrix
//!   product's B, read again one block row later) comes back from L2 while the data of the
//!   blocks launched in between fits in it (`reuse_gap` from the address pattern, at least
//!   the data one wave moves, the window), from DRAM once it does not. How
//!   much of a footprint F the L2 keeps is not a step at its capacity C: [`l2_kept_share`],
//!   all of it up to 0.6 × C, then 1 / (1 + (F / (c·C))^k) (scaled to meet 1 at 0.6), with
//!   c = 0.95 and k = 10 read off the gpu-benches gpu-l2-cache tables of the H200 and
//!   H100 PCIe (a cyclic sweep; reading each row's time as the larger of its L2 and DRAM
//!   times, a row at B GB/s hits with 1 − D / B of its re-reads, D the median of the rows
//!   past 4 × C: 0.42-0.48 of the re-reads hit at 0.94 × C, 0.11-0.23 at 1.13 × C, 0.01-0.03
//!   at 1.49 × C, which `tests/traffic.rs` recomputes from the tables; the curve gives 0.53,
//!   0.15 and 0.01); the A100 80 GB and L40 rows of
//!   docs/validation.md are the check. DRAM reads = footprint + re-reads across waves ×
//!   (1 − kept(that gap's data)) + data shared within a wave × (1 − kept(the data of the blocks
//!   launched between two that share it)) + a block's re-reads of its own data past L1 in
//!   later passes (the reads per distinct sector beyond one per warp, those of its other
//!   warps in the same step coming from L2; or a warp's later loops over its own data,
//!   `own_pass_sectors`: a softmax's passes over a row per warp) / the blocks that read it
//!   at once × (1 − kept(window)).
//!   Blocks of the first wave start together and read the data they share through their
//!   loops at the same step, so between two readers passes one step's data, not a
//!   lifetime's (`step_share`; later waves start as blocks end, out of step).
//!   The result is clamped between the grid's distinct footprint (the least that must be
//!   read) and the L2 load sectors (what reaches L2 at all).
//! - **Stores** write through to L2 (every requested sector is an L2 store sector); DRAM
//!   receives the distinct footprint of the stores (L2 is write-back).
//! - **DRAM row activations** (`Traffic::dram_activations`): each array's DRAM sectors
//!   over the sectors one visit to a DRAM page gives its streams ([`page_visit_sectors`]
//!   of the resident blocks at one step of their loops: a column walk whose blocks hold
//!   eight floats of each row gets one sector per 2 KB page). A pattern a loop moves by
//!   less than a page per step (a row per thread) takes the sectors of its steps within a
//!   page from one visit while the L2 holds the lines the walks bring until their next
//!   steps, and one step's sectors per visit past that ([`walk_reopen_share`]);
//!   data-dependent patterns count a page's worth per visit (not modelled). The model that
//!   charges activations (the bottleneck model's `dram_activation_bytes`) decides what
//!   one costs.
//! - **Warm L2.** When every array has a known footprint and all fit in the L2 together,
//!   repeated launches find them there (`l2_resident`): the steady-state DRAM traffic
//!   ([`Traffic::steady_dram_bytes`]) is 0, while `dram_read_bytes`/`dram_write_bytes`
//!   keep what the first, cold launch moves. A known footprint past the L2's size keeps
//!   [`l2_kept_share`] of the first reads and writes (`Traffic::l2_kept_bytes`: between two
//!   launches the whole footprint passes through the L2, as in a cyclic sweep). Below the
//!   L2's size all of it stays: the gpu-latency pointer chases of the V100 and the L40
//!   run at their L2 latency at 0.78 and 0.88 × their L2 (docs/validation.md), where the
//!   curve, read off Hopper's partitioned L2, would keep only 89 and 69 % of it. Measured: gpu-benches' small-kernel sweep
//!   (`A[i] = 0.25·B[i]`, launched back to back) runs at 2.6 TB/s on an A100 80 GB while its
//!   two arrays total 21 MB (the 40 MB L2 holds them; DRAM peaks at 2.04 TB/s) and falls to
//!   1.65 TB/s at 144 MB; on an A40 (6 MB L2) 1.44 TB/s at 5.2 MB against 0.57 TB/s at
//!   22 MB (DRAM peak 0.70 TB/s).
//!
//! Accesses without a pattern (a data-dependent gather, piecewise addressing, an unknown
//! argument in a coefficient) move their requested sectors through L2 and DRAM (said in
//! `notes`), unless the launch states the bytes they range over (`footprint`, the size of a
//! gather's table or of a pointer chase's buffer). Then a load finds its line in L1 with
//! probability `min(1, L1 / footprint)` and in L2 with `min(1, L2 / footprint)` (a random
//! line of the footprint, caches of those capacities: the hit rate of random accesses to
//! a cache smaller than their range; an estimate), and a footprint that fits in L2 is read
//! from DRAM once. Measured: gpu-benches' pointer chase (gpu-latency) on an A100 40 GB
//! stays at its L1 latency up to 144 kB, at its L2 latency to about 20 MB and reaches its
//! DRAM latency past 60 MB. A pointer chase (`MemoryAccess::pointer_chase`: `p = *p`)
//! around a fixed cycle finds a line again only after the whole cycle, so each cache keeps
//! it by [`l2_kept_share`] of the footprint against its size (none past 1.5 ×), not by the
//! share random draws find (the gpu-latency rows of docs/validation.md: within 1.5× on
//! 93-100 % of each GPU's rows; 80-93 % with the random rule, in the docs/validation.md of
//! commit 6cf0a9b). On an L2 split in two partitions (GA100, GH100) the chase's hits past
//! what the near partition keeps ([`L2_NEAR_PARTITION_SHARE`]) are the far one's
//! (`Traffic::l2_far_share`), which the bottleneck model waits for at its higher latency.
//! Uniform accesses
//! cost one sector per request and their distinct footprint from DRAM. Local memory the PTX names (stack arrays) is counted in L1 and assumed to
//! stay there.
//!
//! **Register spills** are not in the PTX: ptxas writes them (`ptxas -v`: "N bytes spill
//! stores, M bytes spill loads", the bytes of its `STL`/`LDL` instructions in the code).
//! Seen with nvdisasm on a spilling convolution (sm_86, 255 registers): 911 `STL` and
//! 2,043 `LDL` for 3,644 and 8,172 spill bytes, so one 4-byte register per instruction.
//! Executions per thread: the static spill bytes × the kernel's dynamic/static instruction
//! ratio (spill code is spread like the rest; exact for straight-line code). Local memory is
//! interleaved per thread, so a warp's spill access is one coalesced 128-byte request
//! (CUDA C++ Programming Guide, "Device Memory Accesses", Local Memory). Where it is served:
//! L1 when the resident threads' stack frames fit the SM's L1, otherwise L2 (estimate: a
//! spilled value is reloaded by the same thread within the kernel, and the write-back L2
//! keeps the line meanwhile; a convolution on an RTX 3090 that spills 11.8 kB per thread
//! runs at 2.8 TB/s of spill traffic, three times the 936 GB/s DRAM peak, so it is not
//! DRAM that serves it). Global atomics are performed in L2 (their own counters, not L1 or DRAM traffic);
//! atomics on one address serialise, which `atomic_serialised_lanes` counts. A data-dependent
//! atomic whose table is known (`MemoryAccess::data_span_bytes`, or the launch's
//! `footprint`) has each active lane performed in the slice of its 128-byte line, the
//! table's lines in parallel: its lanes over the lines are counted (a byte histogram's
//! 256 counters are 8 lines). A data-dependent load into such a table (`lut[byte]`) takes
//! the table as its own footprint under the rule for stated footprints below, and at most
//! the table's sectors per request. A guard that
//! leaves lanes idle (`MemoryAccess::active_lane_fraction`: `if (threadIdx.x == 0)`, a
//! partial last warp) scales a request's sectors and its same-address lanes by the share
//! of active lanes, at least one of each.
//!
//! A data-dependent load through a pointer its loop advances by a constant
//! (`MemoryAccess::walk`: a CSR row walk from a loaded start) is a row per thread whose
//! lanes are unknown: its re-reads of the previous iteration's sectors stay in L1 by the
//! rule for affine rows (`near_rereads`), and only the rest reaches L2; DRAM reads only
//! the new sectors (the re-reads L1 did not keep come from L2, which read them for the
//! same warp an iteration earlier).
//!
//! Everything here is an estimate from static information, and the notes say which rule
//! produced each number.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{AccessClass, AccessKind, AddressPattern, KernelProfile, MemoryAccess, Space};

/// Bytes of one sector, the unit of L1/L2 traffic (Best Practices Guide, "Coalesced Access
/// to Global Memory").
pub const SECTOR_BYTES: f64 = 32.0;

/// Bytes a shared-memory wavefront serves: 32 banks of 4 bytes (Programming Guide,
/// "Shared Memory" for compute capability 5.x and later).
pub const SHARED_WAVEFRONT_BYTES: f64 = 128.0;
/// Bytes of one DRAM page (row) per channel: GDDR5 and GDDR6 devices open 2 KB per channel
/// (Micron, "8Gb: 2 Channels x16/x8 GDDR6 SGRAM" brief, Table 3 "Addressing": page size
/// per channel 2KB). The sectors one visit of the resident blocks gives a page are those
/// within this span ([`page_visit_sectors`]).
pub const DRAM_PAGE_BYTES: f64 = 2048.0;

/// A cache line: 128 bytes, four 32-byte sectors (CUDA C++ Best Practices Guide,
/// "Coalesced Access to Global Memory"); also the unit whose L2 slice performs an atomic.
pub const LINE_BYTES: f64 = 128.0;
const SECTORS_PER_LINE: f64 = LINE_BYTES / SECTOR_BYTES;
/// The sectors of a DRAM page: the most one visit can give.
const SECTORS_PER_PAGE: f64 = DRAM_PAGE_BYTES / SECTOR_BYTES;

/// The share of a loop's walk along a DRAM page (`A[row * n + j]` over `j`, a row per
/// thread) whose steps find their data gone and visit the page again: a walk gets a page's
/// worth of sectors from one visit only while the L2 holds what that visit brought until
/// the walk's next steps ask for it. The walks hold `line_bytes` at once (each walk's
/// current 128-byte line, [`LINE_BYTES`]); past the L2's capacity they evict each other's
/// lines before use, as a cyclic sweep does ([`l2_kept_share`]), and each step is a visit
/// of its own. Judged on the PMPP matrix-vector products (docs/heldout.md): a row per
/// thread over 8192 rows of 32 KB runs at the DRAM's rate on an RTX 3060 (1.47 ms for 256
/// MB; 1 MB of lines against a 3 MB L2), over 131,072 rows of 2 KB at a third of it (4.30
/// ms; 43,008 resident rows, 5.5 MB of lines).
pub fn walk_reopen_share(line_bytes: f64, l2_bytes: f64) -> f64 {
    1.0 - l2_kept_share(line_bytes, l2_bytes)
}

/// The cache sizes and residency the estimate needs (from the GPU database and the
/// occupancy calculator).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CacheConfig {
    pub sm_count: u32,
    /// L1 data cache available to global loads per SM (bytes): the unified L1/shared size
    /// less the shared memory the resident blocks use, at least the smallest carveout
    /// (`gpu_spec::Gpu::l1_bytes_per_sm`).
    pub l1_bytes_per_sm: u64,
    pub l2_bytes: u64,
    /// Blocks of this kernel resident per SM (the occupancy calculator's answer).
    pub resident_blocks_per_sm: u32,
    /// The L2 is split into partitions that each cache what their own SMs access (GA100,
    /// GH100): a footprint past the L2's size keeps nothing across launches.
    #[serde(default)]
    pub l2_partitioned: bool,
    /// Plain global loads (`ld.global` without `.nc`) are cached in L1. Not on compute
    /// capability 3.x, 5.x and 6.x, where they are cached in L2 only unless the program
    /// opts in with `-Xptxas -dlcm=ca` (CUDA C++ Programming Guide, "Compute Capability
    /// 3.x", Global Memory: "they are normally not cached in L1"; "Compute Capability
    /// 5.x", Global Memory, and 6.x, "behaves the same way as ... 5.x"): there only the
    /// read-only path (`MemoryAccess::read_only`) re-reads from the SM. Fermi (2.x) and
    /// Volta onwards cache them.
    #[serde(default = "yes")]
    pub l1_caches_global_loads: bool,
}

fn yes() -> bool {
    true
}

/// [`CacheConfig::l1_caches_global_loads`] for a compute capability's major version.
pub fn l1_caches_global_loads(cc_major: u32) -> bool {
    !matches!(cc_major, 3 | 5 | 6)
}

/// The traffic of the whole grid (all warps).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Traffic {
    /// Warp-level global (and generic, texture) load and store instructions.
    pub global_load_requests: f64,
    pub global_store_requests: f64,
    /// The requests global stores send on to L2: one per 128-byte line a warp's store
    /// touches (`MemoryAccess::lines_per_request`; where the lanes are unknown, a sector each
    /// for a data-dependent store and four sectors a line otherwise).
    #[serde(default)]
    pub store_line_requests: f64,
    /// The requests plain global loads send on to L2 where L1 does not keep them
    /// ([`CacheConfig::l1_caches_global_loads`] false and not the read-only path): one per
    /// 128-byte line a warp's load touches, counted as for stores. 0 where L1 keeps them
    /// (their misses reach L2 as sectors, which the L2 term counts).
    #[serde(default)]
    pub l2_load_line_requests: f64,
    /// 32-B sectors requested by global, local, generic and texture loads.
    pub l1_load_sectors: f64,
    /// Load sectors that miss L1 (a block's re-reads of its own data removed).
    pub l2_load_sectors: f64,
    /// Sectors stored (stores write through to L2).
    pub l2_store_sectors: f64,
    /// Bytes read from DRAM: the distinct footprint, more when reuse exceeds L2.
    pub dram_read_bytes: f64,
    /// Bytes written to DRAM: the distinct footprint of the stores.
    pub dram_write_bytes: f64,
    /// Every array the kernel touches has a known footprint and all of them fit in the L2
    /// together: in the steady state of repeated launches (a benchmark loop, an iterative
    /// solver, a layer that reads what the previous kernel wrote) they stay resident, and
    /// [`Traffic::steady_dram_bytes`] is 0. `dram_read_bytes` and `dram_write_bytes` stay
    /// what a first, cold launch moves.
    #[serde(default)]
    pub l2_resident: bool,
    /// A known footprint larger than the L2: the bytes of the cold launch's first reads and
    /// writes that repeated launches still find there, [`l2_kept_share`] of the footprint
    /// (about 0.38 at 1.0 × the L2, 0.15 at 1.13 ×, 0.02 at 1.4 ×) times those bytes.
    /// [`Traffic::steady_dram_bytes`] leaves them out.
    #[serde(default)]
    pub l2_kept_bytes: f64,
    /// On an L2 split into partitions ([`CacheConfig::l2_partitioned`]), the share of the
    /// L2's hits for a pointer chase that the far partition serves: past what the near one
    /// keeps of the cycle ([`l2_kept_share`] of the footprint against
    /// [`L2_NEAR_PARTITION_SHARE`] of the L2), the line comes from the other partition,
    /// at its higher latency. 0 elsewhere.
    #[serde(default)]
    pub l2_far_share: f64,
    /// Warp-level shared-memory instructions, and the wavefronts they need (a 64-bit
    /// access needs two, a 128-bit one four; an n-way bank conflict n times as many).
    pub shared_requests: f64,
    pub shared_wavefronts: f64,
    /// The part of `shared_wavefronts` that stores need (data going into the banks, not
    /// coming back to the registers: an SM whose load path is narrower than its banks
    /// writes them faster, `bottleneck::Params::shared_store_bytes_per_clk_per_sm`).
    #[serde(default)]
    pub shared_store_wavefronts: f64,
    /// Warp-level global atomic instructions, and the lane operations serialised on one
    /// address or line (a request whose 32 lanes hit one address counts 32; lanes spread
    /// over a known table of L lines count 1/L each).
    pub atomic_requests: f64,
    pub atomic_serialised_lanes: f64,
    /// Of those, the requests of atomics whose addresses depend on data (counted above as
    /// one lane each, the least), and the most lanes they could serialise (all active
    /// lanes on one address): the range their contention can take.
    #[serde(default)]
    pub atomic_unknown_requests: f64,
    #[serde(default)]
    pub atomic_unknown_lanes: f64,
    /// Of `atomic_serialised_lanes`, those of operations on integer data
    /// (`MemoryAccess::integer_atomic`) that are in turn on one address, or a request's
    /// lanes on the words of one line (an address the thread index decides, or a
    /// data-dependent one whose table is a single word), which the L2 performs at its own
    /// rate; a data-dependent scatter over a table of several words is not counted here.
    #[serde(default)]
    pub atomic_serialised_integer_lanes: f64,
    /// Warp-level local-memory requests of ptxas's register spills (`LDL`/`STL`, one
    /// register each), which take LSU issue slots and L1 wavefronts.
    #[serde(default)]
    pub spill_requests: f64,
    /// Per array (the base of an affine load pattern, `AddressPattern::base`), the shares of
    /// its requested load sectors that go on to L2 and that come from DRAM (in a cold launch;
    /// the steady state of repeated launches takes the share of the reads that
    /// [`Traffic::steady_dram_bytes`] keeps): a matrix-vector product's rows,
    /// each sector read by eight loads in turn, 1/8 from DRAM; its vector, read by every
    /// warp, almost none. Absent for data-dependent and partial patterns.
    #[serde(default)]
    pub load_shares: BTreeMap<String, LoadShare>,
    /// L1 wavefronts of the global (generic) load and store requests: each request's
    /// active lanes' wavefronts (`MemoryAccess::active_l1_wavefronts`), or one where its
    /// lanes are unknown.
    #[serde(default)]
    pub l1_wavefronts: f64,
    /// Bytes the L1's data path delivers to the global (generic) loads: the active lanes'
    /// bytes where the lanes are known, whole sectors where they are not.
    #[serde(default)]
    pub l1_data_bytes: f64,
    /// DRAM row activations of a cold launch: the DRAM sectors of each patterned array,
    /// each stream's over the sectors one DRAM page ([`DRAM_PAGE_BYTES`]) gives it per
    /// visit ([`page_visit_sectors`]: the resident blocks' data at one step of their loops;
    /// a column walk of 8 × 8 blocks, one sector per row of the matrix: one activation per
    /// sector), and the data-dependent and unpatterned sectors one each. Scaled as
    /// [`Traffic::steady_dram_bytes`] scales the bytes by [`Traffic::steady_dram_activations`].
    #[serde(default)]
    pub dram_activations: f64,
    /// How each estimate was made, in words a user reads.
    pub notes: Vec<String>,
}

/// What becomes of one array's requested load sectors ([`Traffic::load_shares`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadShare {
    /// The share that misses L1 and is requested from L2.
    pub to_l2: f64,
    /// The share read from DRAM (of a cold launch).
    pub to_dram: f64,
}

/// The extents of the loops, blocks and threads an address pattern ranges over.
#[derive(Debug, Clone, Copy)]
struct Extents<'a> {
    block: [u32; 3],
    /// Blocks along x, y, z in the set being measured (1, 1, 1 for one block).
    blocks: [u64; 3],
    trips: &'a [f64],
}

/// Distinct 32-byte sectors touched by the lattice `offset + Σ cᵢ·xᵢ`, `xᵢ ∈ [0, nᵢ)`, of
/// elements `elem` bytes wide, and the extent (bytes from first to last byte).
///
/// Dimensions are folded from the smallest stride up. A dimension whose copies of the
/// pattern so far overlap it or leave gaps under a sector merges with it into one run
/// (extent grows by `c·(n−1)`); one whose copies land further apart replicates it as
/// separate runs. Runs are counted at sector granularity. A dimension that overlaps a
/// pattern of several runs scales the runs with the extent (uniform density). Exact for
/// the layouts arrays are indexed with (row-major tiles, strides, broadcasts); an
/// estimate when strides interleave irregularly.
pub fn footprint(dims: &[(i64, u64)], elem: u32) -> (f64, f64) {
    let mut dims: Vec<(f64, f64)> = dims.iter().filter(|(c, n)| *c != 0 && *n > 1).map(|(c, n)| (c.unsigned_abs() as f64, *n as f64)).collect();
    dims.sort_by(|a, b| a.0.total_cmp(&b.0));
    let elem = f64::from(elem.max(1));
    let (mut runs, mut run_extent, mut extent) = (1.0f64, elem, elem);
    for (c, n) in dims {
        if runs == 1.0 && c < extent + SECTOR_BYTES {
            run_extent += c * (n - 1.0);
            extent = run_extent;
        } else if c >= extent {
            runs *= n;
            extent += c * (n - 1.0);
        } else {
            let grown = extent + c * (n - 1.0);
            runs *= grown / extent;
            extent = grown;
        }
    }
    let per_run = (run_extent / SECTOR_BYTES).ceil();
    let hull = (extent / SECTOR_BYTES).ceil();
    ((runs * per_run).min(hull), extent)
}

/// The sectors one visit to a DRAM page delivers to the lattice `dims` of elements `elem`
/// bytes wide: the dimensions whose stride is under a page ([`DRAM_PAGE_BYTES`]) can
/// share one, those a page or more apart land on pages of their own. The inner lattice's
/// distinct sectors over the pages its extent spans, between one and a page's worth (64).
/// A coalesced row of a wave's blocks fills its pages; a column walk of a matrix whose
/// rows are a page or longer, the resident 8 × 8 blocks holding eight columns of it, gets
/// one sector per page.
pub fn page_visit_sectors(dims: &[(i64, u64)], elem: u32) -> f64 {
    let inner: Vec<(i64, u64)> = dims.iter().copied().filter(|(c, n)| *c != 0 && *n > 1 && (c.unsigned_abs() as f64) < DRAM_PAGE_BYTES).collect();
    let (sectors, extent) = footprint(&inner, elem);
    let pages = (extent / DRAM_PAGE_BYTES).ceil().max(1.0);
    (sectors / pages).clamp(1.0, SECTORS_PER_PAGE)
}

/// The dimensions of a pattern over `ext`.
fn dims_of(p: &AddressPattern, ext: &Extents<'_>) -> Vec<(i64, u64)> {
    let mut d = Vec::with_capacity(8);
    for k in 0..3 {
        d.push((p.tid[k], u64::from(ext.block[k].max(1))));
        d.push((p.ctaid[k], ext.blocks[k].max(1)));
    }
    if p.lane != 0 {
        let threads: u64 = ext.block.iter().map(|&b| u64::from(b.max(1))).product();
        d.push((p.lane, threads.min(32)));
    }
    // `blockIdx % m` takes min(m, blocks) values over the blocks measured, `blockIdx / m`
    // ceil(blocks / m).
    for m in &p.ctaid_mod {
        let blocks = ext.blocks.get(usize::from(m.dim)).copied().unwrap_or(1).max(1);
        d.push((m.bytes, blocks.min(m.modulus.max(1) as u64)));
    }
    for m in &p.ctaid_div {
        let blocks = ext.blocks.get(usize::from(m.dim)).copied().unwrap_or(1).max(1);
        d.push((m.bytes, blocks.div_ceil(m.modulus.max(1) as u64)));
    }
    // `tid.x / k` takes ceil(block.x / k) values in a block, `tid.x % k` min(k, block.x);
    // the same in y for `dim` 1.
    for t in &p.tid_x_parts {
        let k = t.k.max(1) as u64;
        let b = u64::from(ext.block.get(usize::from(t.dim)).copied().unwrap_or(1).max(1));
        d.push((t.bytes, match t.op {
            crate::model::TidXOp::Div => b.div_ceil(k),
            crate::model::TidXOp::Mod => b.min(k),
        }));
    }
    for l in &p.loops {
        let trips = ext.trips.get(l.loop_index as usize).copied().unwrap_or(1.0);
        d.push((l.bytes_per_iteration, trips.round().max(1.0) as u64));
    }
    // What one request covers by itself (a `wmma` fragment's rows and row elements).
    for s in &p.spans {
        d.push((s.bytes, s.count.max(1)));
    }
    d
}

/// One stream: accesses to the same array with the same thread, lane and block
/// coefficients. Its footprint is the widest member's, widened by the spread of the
/// members' offsets (offsets further apart than the stream's extent are separate copies).
struct Stream<'a> {
    members: Vec<&'a MemoryAccess>,
}

impl Stream<'_> {
    /// [`page_visit_sectors`] of the stream over `ext` (the resident blocks at one step of
    /// their loops: `ext` without trip counts), its members' offsets within a page (an
    /// unrolled body's copies) as more dimensions; the members that run most, as in
    /// [`Stream::sectors`], the sparsest of their shapes.
    fn page_visit_sectors(&self, ext: &Extents<'_>) -> f64 {
        let offsets = self.offsets();
        let extra = match (offsets.first(), offsets.last()) {
            (Some(first), Some(last)) if ((last - first) as f64) < DRAM_PAGE_BYTES => offset_dimensions(&offsets),
            _ => Vec::new(),
        };
        self.main_members()
            .filter_map(|a| {
                let mut dims = dims_of(a.address.as_ref()?, ext);
                dims.extend(extra.iter().copied());
                Some(page_visit_sectors(&dims, a.bytes_per_thread))
            })
            .fold(f64::INFINITY, f64::min)
            .clamp(1.0, SECTORS_PER_PAGE)
    }

    /// The members' distinct constant offsets, in order.
    fn offsets(&self) -> Vec<i64> {
        let mut offsets: Vec<i64> = self.members.iter().filter_map(|a| a.address.as_ref().map(|p| p.offset)).collect();
        offsets.sort_unstable();
        offsets.dedup();
        offsets
    }

    /// The members that run most (a loop's body, not the remainder loop nvcc peels after
    /// it, whose address carries the main loop's counter as a range where it holds its
    /// final value): their footprint is the stream's.
    fn main_members(&self) -> impl Iterator<Item = &&MemoryAccess> {
        let most = self.members.iter().map(|a| a.executions).fold(0.0_f64, f64::max);
        self.members.iter().filter(move |a| a.executions >= 0.5 * most)
    }

    fn sectors(&self, ext: &Extents<'_>) -> f64 {
        let offsets = self.offsets();
        let mut best = 0.0f64;
        // Members with the same dimensions and width give the same footprint (the copies
        // of an unrolled body differ only in their offsets): each shape once.
        let mut shapes: Vec<(Vec<(i64, u64)>, u32)> = Vec::new();
        for a in self.main_members() {
            let Some(p) = &a.address else { continue };
            let shape = (dims_of(p, ext), a.bytes_per_thread);
            if !shapes.contains(&shape) {
                shapes.push(shape);
            }
        }
        for (dims, bytes) in &shapes {
            let dims = dims.clone();
            let (_, extent) = footprint(&dims, *bytes);
            // Clusters of offsets closer than the extent (plus a sector) widen one copy:
            // evenly spaced ones (the copies of an unrolled loop, the rows of a tile a
            // thread handles) are one more lattice dimension, others widen it from the
            // first offset to the last.
            let mut total = 0.0;
            let mut cluster: Vec<i64> = Vec::new();
            let flush = |cluster: &[i64], total: &mut f64| {
                let mut d = dims.clone();
                d.extend(offset_dimensions(cluster));
                *total += footprint(&d, *bytes).0;
            };
            for &o in &offsets {
                if cluster.last().is_some_and(|&prev| (o - prev) as f64 >= extent + SECTOR_BYTES) {
                    flush(&cluster, &mut total);
                    cluster.clear();
                }
                cluster.push(o);
            }
            flush(&cluster, &mut total);
            best = best.max(total);
        }
        best
    }
}

/// The lattice dimensions `(step, count)` that a sorted cluster of distinct offsets adds:
/// evenly spaced offsets are one dimension, a grid of them (the outputs of a thread spaced
/// by the block size in x and in y: `{0, 64, 128, 192} + {0, 131072}`) one per direction;
/// anything else widens the pattern from the first offset to the last (two copies).
fn offset_dimensions(cluster: &[i64]) -> Vec<(i64, u64)> {
    fn lattice(offs: &[i64]) -> Option<Vec<(i64, u64)>> {
        if offs.len() <= 1 {
            return Some(Vec::new());
        }
        let step = offs[1] - offs[0];
        let run = offs.windows(2).take_while(|w| w[1] - w[0] == step).count() + 1;
        if run == offs.len() {
            return Some(vec![(step, run as u64)]);
        }
        // Equal runs of the same spacing, whose starts form a lattice of their own.
        if !offs.len().is_multiple_of(run) {
            return None;
        }
        let chunks: Vec<&[i64]> = offs.chunks(run).collect();
        if !chunks.iter().all(|c| c.windows(2).all(|w| w[1] - w[0] == step)) {
            return None;
        }
        let starts: Vec<i64> = chunks.iter().map(|c| c[0]).collect();
        let mut dims = vec![(step, run as u64)];
        dims.extend(lattice(&starts)?);
        Some(dims)
    }
    match cluster {
        [] | [_] => Vec::new(),
        [first, .., last] => lattice(cluster).or_else(|| grouped_lattice(cluster)).unwrap_or_else(|| vec![(last - first, 2)]),
    }
}

/// Offsets in evenly spaced groups (an unrolled z-march's loads: each plane's centre and
/// its x and y neighbours, a plane apart: `{−2048, −4, 0, 4, 2048} + k · 1 MiB`): the
/// groups' starts are a lattice (each within the groups' widest spread of its place) and
/// the widest group's own offsets, relative to its start, the dimensions within a group
/// (by the same rules: `{0, 2044, 2048, 2052, 4096}` is `{0, 2048, 4096} + {0, 4, 8}`
/// within the spread). Groups are split at the gaps wider than half the widest one.
/// `None` when there are fewer than three groups or they are not evenly spaced.
fn grouped_lattice(offs: &[i64]) -> Option<Vec<(i64, u64)>> {
    let widest = offs.windows(2).map(|w| w[1] - w[0]).max()?;
    let mut groups: Vec<&[i64]> = Vec::new();
    let mut start = 0;
    for k in 1..=offs.len() {
        if k == offs.len() || offs[k] - offs[k - 1] > widest / 2 {
            groups.push(&offs[start..k]);
            start = k;
        }
    }
    let n = groups.len();
    let spread_of = |g: &[i64]| g.last().copied().unwrap_or(0) - g.first().copied().unwrap_or(0);
    let widest_group = groups.iter().copied().max_by_key(|g| spread_of(g))?;
    let spread = spread_of(widest_group);
    if n < 3 || n == offs.len() {
        return None;
    }
    let first = groups[0][0];
    let step = (groups[n - 1][0] - first) / (n as i64 - 1);
    if step <= spread || !groups.iter().enumerate().all(|(k, g)| (g[0] - first - k as i64 * step).abs() <= spread) {
        return None;
    }
    let inner: Vec<i64> = widest_group.iter().map(|o| o - widest_group[0]).collect();
    let mut dims = vec![(step, n as u64)];
    dims.extend(offset_dimensions(&inner));
    Some(dims)
}

/// What makes accesses one stream: the array, the thread, block and lane coefficients,
/// and whether they store.
type StreamKey = (String, [i64; 3], [i64; 3], i64, bool);

/// Grid-wide quantities of one array.
#[derive(Default, Debug, Clone, Copy)]
struct ArrayTraffic {
    /// Requested sectors of its loads (all warps).
    load_sectors: f64,
    /// Requested sectors of its loads per block.
    load_sectors_per_block: f64,
    /// Distinct sectors its loads touch: one block, the resident blocks, the grid.
    block: f64,
    window: f64,
    grid: f64,
    /// Per block, the sectors its warps read again in a later loop over their own data (a
    /// softmax's second and third passes over a row): over each warp, the distinct sectors
    /// of each loop that passes over its data, summed over those loops, less the distinct
    /// sectors of all of them ([`own_pass_sectors`]).
    warp_passes: f64,
    /// Distinct sectors its stores touch over the grid.
    store_grid: f64,
    store_sectors: f64,
    /// Requested load sectors that re-read what the same warp's previous loop iteration
    /// read and that L1 keeps that long (`near_rereads`).
    near_rereads: f64,
    /// Requested load sectors of loads that L1 does not keep (plain global loads where
    /// [`CacheConfig::l1_caches_global_loads`] is false): all of them reach L2.
    uncached_load_sectors: f64,
    /// Those of them that re-read what the same warp read an iteration earlier
    /// ([`near_rereads`] against the L2 and the resident warps of every SM): L2 hits,
    /// never DRAM re-reads.
    uncached_near: f64,
    /// Launch-order distance, in blocks, from a block to the next that reads the same
    /// data ([`reuse_gap`]); the largest over the array's load streams, 0 where none is
    /// known (the data blocks share is then a halo, read again by the next wave).
    reuse_gap_blocks: f64,
    /// DRAM page visits of its loads' and its stores' distinct sectors over the grid (each
    /// stream's sectors, summed in `grid` and `store_grid`, over its
    /// [`Stream::page_visit_sectors`]).
    load_visits: f64,
    store_visits: f64,
    /// The same visits where every page a loop walks stays open between its steps (equal
    /// to the above for patterns no loop moves); [`walk_reopen_share`] weighs the two.
    load_visits_open: f64,
    store_visits_open: f64,
    /// DRAM page visits per DRAM sector of its loads and of its stores (1 where unknown):
    /// the visits, weighed, over the sectors they cover, set before `grid` and `store_grid`
    /// are clamped to the requested sectors.
    visits_per_sector: (f64, f64),
}

/// Launch-order distance from a block to the next block whose loads of this stream read
/// the same addresses: the period K of a block index taken modulo K; else the stride of
/// the fastest grid dimension the address does not depend on (none in x: the next block;
/// none in y: one row of blocks later, a matrix product's B panel); 0 when the address
/// depends on every dimension the grid has (blocks then share only overlaps, a halo). A
/// block index both divided and taken modulo (`ctaid_div` with `ctaid_mod`: a global
/// index's row and column) is a full dependence, not a period.
fn reuse_gap(p: &AddressPattern, grid: [u32; 3]) -> f64 {
    let [gx, gy, gz] = grid.map(|g| f64::from(g.max(1)));
    // A block index divided as well as taken modulo (a global index's row and column):
    // the address depends on all of it.
    let divided = |d: usize| p.ctaid_div.iter().any(|m| usize::from(m.dim) == d);
    if let Some(m) = p.ctaid_mod.iter().filter(|m| !divided(usize::from(m.dim))).map(|m| m.modulus).filter(|m| *m > 1).max() {
        return m as f64;
    }
    let strides = [1.0, gx, gx * gy];
    let extents = [gx, gy, gz];
    (0..3).find(|&d| p.ctaid[d] == 0 && !divided(d) && extents[d] > 1.0).map_or(0.0, |d| strides[d])
}

/// Re-reads at a short distance, for a stream of loads in a loop that moves the address
/// less than a sector per iteration while the lanes of a request read sectors of their own
/// (every lane-varying coefficient at least a sector, or zero: a row per thread,
/// `A[row * n + j]` over `j`). Each iteration then brings `|step|` new bytes per lane over
/// the stream's `m` loads in that loop: of their sectors, a share `1 − |step| / (32·m)`
/// are the previous iteration's again. They hit L1 when the sectors of one iteration of
/// the SM's resident warps fit there (128-byte lines, the L1's allocation unit, per
/// sector requested), whatever the block's whole footprint (which the capacity rule
/// compares with L1); otherwise in proportion. Returns the requested sectors so served.
fn near_rereads(members: &[&MemoryAccess], loops: &[crate::model::LoopInfo], warps: f64, warps_per_sm: f64, l1_bytes: f64) -> f64 {
    // Innermost loop of each load (the deepest with a step), and the step there.
    let mut groups: BTreeMap<u32, (i64, Vec<&MemoryAccess>)> = BTreeMap::new();
    for a in members {
        let Some(p) = a.address.as_ref().filter(|p| lanes_in_own_sectors(p)) else { continue };
        if let Some(l) = innermost_step(p, loops) {
            let g = groups.entry(l.loop_index).or_insert((l.bytes_per_iteration.abs(), Vec::new()));
            g.0 = g.0.min(l.bytes_per_iteration.abs());
            g.1.push(a);
        }
    }
    let mut near = 0.0;
    for (step, group) in groups.values() {
        let per_request = group.iter().map(|a| a.transactions_per_request.max(1.0)).fold(0.0, f64::max);
        let requested: f64 = group.iter().map(|a| a.executions.max(0.0) * warps * a.transactions_per_request.max(0.0)).sum();
        near += requested * near_reread_share(step.unsigned_abs(), group.len(), per_request, warps_per_sm, l1_bytes);
    }
    near
}

/// The innermost loop (the deepest) in which the address pattern moves, with its step.
fn innermost_step<'p>(p: &'p AddressPattern, loops: &[crate::model::LoopInfo]) -> Option<&'p crate::model::LoopStride> {
    p.loops.iter().filter(|l| l.bytes_per_iteration != 0).max_by_key(|l| loops.get(l.loop_index as usize).map_or(0, |i| i.depth))
}

/// Whether every lane-varying coefficient of the pattern is zero or a sector or more: the
/// lanes of a request read sectors of their own (a row per thread).
fn lanes_in_own_sectors(p: &AddressPattern) -> bool {
    let sep = |c: i64| c == 0 || c.unsigned_abs() >= SECTOR_BYTES as u64;
    p.tid.iter().all(|c| sep(*c)) && sep(p.lane) && p.tid_x_parts.iter().all(|t| sep(t.bytes))
}

/// The sectors one warp request of `a` moves: its active lanes' share of its sectors (at
/// least one), one for a uniform access, at most its table's (`table_capped`).
fn request_sectors(a: &MemoryAccess, active: f64) -> f64 {
    let tpr = a.transactions_per_request.max(0.0);
    table_capped(a, if a.class == AccessClass::Uniform { 1.0 } else { (tpr * active).max(1.0_f64.min(tpr)) })
}

/// The bytes a data-dependent atomic's address ranges over: its bounded index's table
/// (`MemoryAccess::data_span_bytes`), else the launch's `footprint`.
fn atomic_span(a: &MemoryAccess, launch: &crate::model::LaunchConfig) -> Option<f64> {
    a.data_span_bytes.map(|b| b as f64).or(launch.footprint_bytes.map(|b| b as f64)).filter(|b| *b > 0.0)
}

/// The share of a block's lifetime data of a stream that it reads in one step of its
/// innermost stepping loop `L`, as far as the blocks that share it read it in the same
/// step: `F(1) / F(lifetime)` (one iteration of every loop against all of them, on one
/// block), or `lag / T` when blocks along a grid dimension read each other's data `lag`
/// iterations apart (a block coefficient that is a multiple of `L`'s step, `T` its
/// trips: a 1-D sweep whose blocks start a tile apart), whichever is larger. `None` for a
/// stream outside loops. `life` is the stream's distinct sectors over one block's lifetime.
fn step_share(stream: &Stream<'_>, loops: &[crate::model::LoopInfo], trips: &[f64], block: [u32; 3], life: f64) -> Option<f64> {
    let p = stream.members.first()?.address.as_ref()?;
    let inner = innermost_step(p, loops)?;
    let t_l = trips.get(inner.loop_index as usize).copied().unwrap_or(1.0).max(1.0);
    let once = vec![1.0; trips.len()];
    let f1 = stream.sectors(&Extents { block, blocks: [1, 1, 1], trips: &once });
    if life <= 0.0 {
        return None;
    }
    let s = inner.bytes_per_iteration;
    let lag = p.ctaid.iter().filter(|c| **c != 0 && *c % s == 0).map(|c| (c / s).unsigned_abs() as f64).filter(|l| *l < t_l).fold(f64::INFINITY, f64::min);
    let lag = if lag.is_finite() { lag / t_l } else { 0.0 };
    Some((f1 / life).max(lag).min(1.0))
}

/// Iterations back that [`window_rereads`] looks for re-read data.
const WINDOW_MAX_ITERATIONS: u64 = 16;

/// Re-reads of what earlier iterations of a loop read, for the loads of a stream that
/// [`near_rereads`] does not take (a step of a sector or more, or lanes that share
/// sectors): an unrolled or plain z-march over a 3-D grid reads `in[i + nx·ny]` again as
/// `in[i]` one plane later and as `in[i − nx·ny]` two later; a y-march down image columns
/// likewise. Over one pass of the stream's innermost stepping loop, on one block, with
/// `F(w)` the distinct sectors of `w` consecutive iterations (the members' lattice and
/// offsets, [`Stream::sectors`]): the L1 of an SM keeps the last `w` iterations' data of
/// its `sharing` resident blocks while `sharing · F(w + 1)` sectors fit in it (the
/// block's own data; the other arrays' compete through the capacity rule), so an
/// iteration finds in L1 all but the `F(w + 1) − F(w)` of its `F(1)` distinct sectors that
/// the last `w` did not read; over the pass, `(T − 1)·(F(1) − (F(w + 1) − F(w)))` requested
/// sectors are served so. When not even two iterations fit, the previous iteration's share
/// is kept in proportion (as [`near_reread_share`]). A load of an address another load of
/// the same iteration already read (nvcc reloads after each store that may alias, in an
/// unrolled body without `__restrict__`) is served by L1 too: the store waited for the
/// first load's data. Other reads of the same sectors within one iteration (a stencil's x
/// neighbours, the other warps of the block reading one row of a naive product's B at
/// once) are not counted here: they are in flight together, and the capacity rule judges
/// them (a naive product on an RTX 3090 runs at the L2's rate when
/// they go to L2: docs/heldout.md). Sectors are counted at 32 bytes, where L1 allocates
/// 128-byte lines: exact for rows of whole lines, optimistic for scattered sectors.
/// Returns the requested sectors so served, over the grid.
fn window_rereads(members: &[&MemoryAccess], loops: &[crate::model::LoopInfo], trips: &[f64], block: [u32; 3], warps: f64, sharing: f64, l1_bytes: f64) -> f64 {
    // What `near_rereads` takes: lanes in sectors of their own, stepping less than a sector.
    let near_takes = |p: &AddressPattern, step: i64| lanes_in_own_sectors(p) && (step.unsigned_abs() as f64) < SECTOR_BYTES;
    let mut groups: BTreeMap<u32, Vec<&MemoryAccess>> = BTreeMap::new();
    for a in members {
        let Some(p) = a.address.as_ref() else { continue };
        if let Some(l) = innermost_step(p, loops).filter(|l| !near_takes(p, l.bytes_per_iteration)) {
            groups.entry(l.loop_index).or_default().push(a);
        }
    }
    let threads: u64 = block.iter().map(|&b| u64::from(b.max(1))).product();
    let warps_per_block = threads.div_ceil(32) as f64;
    let mut served = 0.0;
    for (&lp, group) in &groups {
        let total_trips = trips.get(lp as usize).copied().unwrap_or(1.0).round();
        if total_trips < 2.0 {
            continue;
        }
        let stream = Stream { members: group.clone() };
        let f = |w: f64| {
            let mut t = vec![1.0; trips.len()];
            if let Some(x) = t.get_mut(lp as usize) {
                *x = w;
            }
            stream.sectors(&Extents { block, blocks: [1, 1, 1], trips: &t })
        };
        let per_iteration: f64 = group.iter().map(|a| warps_per_block * a.transactions_per_request.max(0.0)).sum();
        let requested_pass = per_iteration * total_trips;
        if requested_pass <= 0.0 {
            continue;
        }
        let fits = |sectors: f64| sharing * sectors * SECTOR_BYTES <= l1_bytes;
        let f1 = f(1.0);
        let f2 = f(2.0);
        let miss_per_iteration = if fits(f2) {
            let mut w = 1.0;
            let (mut fw, mut fnext) = (f1, f2);
            while w < (total_trips - 1.0).min(WINDOW_MAX_ITERATIONS as f64) {
                let further = f(w + 2.0);
                if !fits(further) {
                    break;
                }
                w += 1.0;
                (fw, fnext) = (fnext, further);
            }
            fnext - fw
        } else {
            let kept = l1_bytes / (sharing * f2 * SECTOR_BYTES);
            f1 - kept * (2.0 * f1 - f2).max(0.0)
        };
        // Loads of an address another load of the iteration already read (nvcc reloads after
        // every store that may alias, as in an unrolled body without `__restrict__`): the
        // store waits for the first load's data, so the reload finds it in L1.
        let mut seen: Vec<i64> = Vec::new();
        let mut reloads = 0.0;
        for a in group {
            let Some(o) = a.address.as_ref().map(|p| p.offset) else { continue };
            if seen.contains(&o) {
                reloads += warps_per_block * a.transactions_per_request.max(0.0);
            } else {
                seen.push(o);
            }
        }
        let kept_pass = (total_trips - 1.0) * (f1 - miss_per_iteration.max(0.0)).max(0.0) + total_trips * reloads;
        let share = (kept_pass / requested_pass).clamp(0.0, 1.0);
        let requested: f64 = group.iter().map(|a| a.executions.max(0.0) * warps * a.transactions_per_request.max(0.0)).sum();
        served += requested * share;
    }
    served
}

/// The share of a stream's requested sectors that re-read the previous iteration's and
/// that L1 keeps: `1 − step / (32·m)` for `m` loads moving `step` bytes per iteration, times
/// the share of one iteration's lines of the SM's resident warps (128 bytes per sector
/// requested) that L1 holds. Shared by [`near_rereads`] (affine rows) and the walks of
/// data-dependent loads ([`MemoryAccess::walk`]).
fn near_reread_share(step: u64, m: usize, per_request: f64, warps_per_sm: f64, l1_bytes: f64) -> f64 {
    let share = (1.0 - step as f64 / (SECTOR_BYTES * m.max(1) as f64)).max(0.0);
    let working_set = per_request.max(1.0) * LINE_BYTES * warps_per_sm;
    let kept = if working_set <= l1_bytes { 1.0 } else { l1_bytes / working_set };
    share * kept
}

/// The share of a partitioned L2 (GA100, GH100) that keeps what one SM's pointer chase
/// reads near it: the chase's lines come from the far partition, at its higher latency,
/// past [`l2_kept_share`] of its footprint against this share of the L2. Read off the
/// gpu-benches gpu-latency tables (a chase of 64-byte slots by one block): the latency
/// leaves the L2's at 18 MB and reaches twice it at 32 MB on the A100 40 GB (0.45 and
/// 0.80 of its 40 MB; the A100 80 GB alike), at 22 and 32 MB on the H100 PCIe (0.44 and
/// 0.64 of 50 MB), half way near 0.57 of the L2 on both; 0.6 puts the curve's half point
/// at 0.95 × 0.6 = 0.57. An estimate from those three tables (the fitted corpus), which
/// have nothing else to test it.
pub const L2_NEAR_PARTITION_SHARE: f64 = 0.6;

/// Half-capacity point of [`l2_kept_share`], as a fraction of the nominal L2 size: a
/// cyclic sweep over 0.95 × L2 still finds half its re-reads there. Read off the
/// gpu-benches gpu-l2-cache tables of the H200 and H100 PCIe (reads hit at 0.48 and 0.42
/// of their L2-resident bandwidth's worth at 0.94 × L2; module documentation).
pub const L2_KEPT_HALF_AT: f64 = 0.95;
/// Sharpness of [`l2_kept_share`]'s fall past the capacity (same tables: 0.23 and 0.11 of
/// re-reads hit at 1.13 × L2, 0.07 and 0.02 at 1.36 × L2).
pub const L2_KEPT_SHARPNESS: f64 = 10.0;

/// Footprints up to this fraction of the L2 keep all their re-reads: the same tables run
/// at their L2-resident bandwidth there (the A100 80 GB at 0.62 × L2: 5376 GB/s against
/// its 5405 median; the H100 PCIe at 0.72 × L2: 6847 against 6993).
pub const L2_KEPT_ALL_BELOW: f64 = 0.6;

/// Share of re-reads the L2 keeps when they come back after `footprint_bytes` of data has
/// passed through it: h(F / C) / h(0.6), at most 1, with h(x) = 1 / (1 + (x / 0.95)^10).
/// All of them up to 0.6 × C, 0.96 at 0.7, a half at 0.95 × C, a tenth at 1.19 × C. An LRU
/// cache of exactly C would keep all of a cyclic sweep up to C and none beyond; the
/// measured L2s (hashed sets, two partitions on the A100 and H100) fall over a range
/// instead.
pub fn l2_kept_share(footprint_bytes: f64, l2_bytes: f64) -> f64 {
    if footprint_bytes <= 0.0 {
        return 1.0;
    }
    if l2_bytes <= 0.0 {
        return 0.0;
    }
    let h = |x: f64| 1.0 / (1.0 + (x / L2_KEPT_HALF_AT).powf(L2_KEPT_SHARPNESS));
    let x = footprint_bytes / l2_bytes;
    if x <= L2_KEPT_ALL_BELOW { 1.0 } else { (h(x) / h(L2_KEPT_ALL_BELOW)).min(1.0) }
}

impl ArrayTraffic {
    /// Load sectors that reach L2: the distinct ones once, and the re-reads that L1 does
    /// not keep (all of those of uncached loads; of the others, the near re-reads none and
    /// the rest at the capacity rule's miss rate `1 − hit`).
    fn l2_sectors(&self, blocks: f64, hit: f64) -> f64 {
        let distinct = self.block * blocks;
        let rereads = (self.load_sectors - distinct).max(0.0);
        let uncached_share = if self.load_sectors > 0.0 { (self.uncached_load_sectors / self.load_sectors).clamp(0.0, 1.0) } else { 0.0 };
        let uncached = rereads * uncached_share;
        let cached = rereads - uncached;
        let near = self.near_rereads.min(cached);
        distinct.min(self.load_sectors) + uncached + (cached - near) * (1.0 - hit)
    }
}

/// The 128-byte lines one request of `a` sends to L2 (at least one): its active lanes' lines
/// where the lanes are known, else a sector each for a data-dependent access and four
/// sectors a line otherwise (`sectors`: the request's sectors, the active lanes' only).
fn request_lines(a: &MemoryAccess, sectors: f64, active: f64) -> f64 {
    a.lines_per_request
        .map_or(if a.class == AccessClass::Irregular { sectors } else { (sectors / SECTORS_PER_LINE).ceil() }, |l| l * active)
        .max(1.0)
}

/// Whether L1 keeps what this load reads: always where the GPU caches global loads in L1,
/// else only through the read-only path (and texture fetches).
fn l1_keeps(a: &MemoryAccess, caches: &CacheConfig) -> bool {
    caches.l1_caches_global_loads || a.space == Space::Texture || a.read_only == Some(true)
}

/// Sectors an access requests over the grid (`warps` warps): one per request for a
/// uniform access, its sectors per request otherwise.
fn requested_sectors(a: &MemoryAccess, warps: f64) -> f64 {
    a.executions.max(0.0) * warps * if a.class == AccessClass::Uniform { 1.0 } else { a.transactions_per_request.max(0.0) }
}

fn is_offchip(a: &MemoryAccess) -> bool {
    matches!(a.space, Space::Global | Space::Generic | Space::Texture)
}

impl Traffic {
    /// Bytes crossing the DRAM interface per launch in the steady state of repeated
    /// launches: 0 when everything stays in L2 (`l2_resident`), else the cold traffic less
    /// what the L2 keeps between launches (`l2_kept_bytes`).
    pub fn steady_dram_bytes(&self) -> f64 {
        if self.l2_resident { 0.0 } else { (self.dram_read_bytes + self.dram_write_bytes - self.l2_kept_bytes.max(0.0)).max(0.0) }
    }

    /// The DRAM row activations of the steady state: [`Traffic::dram_activations`] in the
    /// proportion [`Traffic::steady_dram_bytes`] keeps of the cold launch's bytes.
    pub fn steady_dram_activations(&self) -> f64 {
        let cold = self.dram_read_bytes + self.dram_write_bytes;
        if cold > 0.0 { self.dram_activations.max(0.0) * self.steady_dram_bytes() / cold } else { 0.0 }
    }
}

/// The traffic of the whole grid; see the module documentation for the rules.
pub fn estimate(profile: &KernelProfile, caches: &CacheConfig) -> Traffic {
    let launch = &profile.launch;
    let blocks = launch.blocks() as f64;
    let warps_per_block = launch.threads_per_block().div_ceil(32) as f64;
    let warps = warps_per_block * blocks;
    let trips: Vec<f64> = profile.loops.iter().map(|l| l.assumed_trip_count).collect();
    let mut t = Traffic {
        global_load_requests: 0.0,
        global_store_requests: 0.0,
        store_line_requests: 0.0,
        l2_load_line_requests: 0.0,
        l1_load_sectors: 0.0,
        l2_load_sectors: 0.0,
        l2_store_sectors: 0.0,
        dram_read_bytes: 0.0,
        dram_write_bytes: 0.0,
        l2_resident: false,
        l2_kept_bytes: 0.0,
        l2_far_share: 0.0,
        shared_requests: 0.0,
        shared_wavefronts: 0.0,
        shared_store_wavefronts: 0.0,
        atomic_requests: 0.0,
        atomic_serialised_lanes: 0.0,
        atomic_unknown_requests: 0.0,
        atomic_serialised_integer_lanes: 0.0,
        atomic_unknown_lanes: 0.0,
        spill_requests: 0.0,
        l1_wavefronts: 0.0,
        l1_data_bytes: 0.0,
        dram_activations: 0.0,
        load_shares: BTreeMap::new(),
        notes: Vec::new(),
    };
    // Requests, sectors, shared memory and atomics: exact counts.
    let (mut unknown_atomics, mut local_sectors, mut folded_const) = (0usize, 0.0, 0usize);
    let mut spanned_atomics: Vec<(f64, f64)> = Vec::new();
    for a in &profile.memory_accesses {
        let requests = a.executions.max(0.0) * warps;
        // Lanes a guard leaves idle request nothing: a warp's request touches the sectors
        // (and contends on the address) of its active lanes only, at least one.
        let active = a.active_share();
        let sectors = request_sectors(a, active);
        let same_address = |n: Option<u32>| n.map(|n| (f64::from(n.max(1)) * active).max(1.0));
        let l1_wavefronts = a.active_l1_wavefronts();
        match (a.space, a.kind) {
            (Space::Shared, kind) => {
                t.shared_requests += requests;
                // A wide access takes a wavefront per 128 bytes its lanes request (two phases for
                // 8 bytes a lane, four for 16), unless every lane reads the same address: one
                // wavefront broadcasts it.
                let phases = if a.class == AccessClass::Uniform && kind == AccessKind::Load {
                    1.0
                } else {
                    (f64::from(a.bytes_per_thread.max(1)) * 32.0 / SHARED_WAVEFRONT_BYTES).ceil().max(1.0)
                };
                let ways = a.mean_bank_conflict_ways.filter(|w| w.is_finite() && *w >= 1.0).unwrap_or_else(|| f64::from(a.bank_conflict_ways.unwrap_or(1).max(1)));
                // ptxas's warp aggregation (`warp_aggregated`): one operation per request. A
                // data-dependent address over a known span (a bounded index, the launch's
                // `footprint`: a histogram whose inputs all fall in one bin) puts the active
                // lanes on its words evenly, one at a time per word.
                let span_lanes = || {
                    let span = atomic_span(a, launch)?;
                    Some((32.0 * active / (span / 4.0).ceil().max(1.0)).max(1.0))
                };
                let serial = if kind == AccessKind::Atomic && a.warp_aggregated != Some(true) { same_address(a.same_address_lanes).or_else(span_lanes).unwrap_or(1.0) } else { 1.0 };
                let wavefronts = requests * phases * ways.max(serial);
                t.shared_wavefronts += wavefronts;
                if kind == AccessKind::Store {
                    t.shared_store_wavefronts += wavefronts;
                }
            }
            (Space::Local, AccessKind::Load) => {
                // Per-thread memory is interleaved so that a warp's request is coalesced.
                let s = (f64::from(a.bytes_per_thread.max(1)) * 32.0 / SECTOR_BYTES).ceil();
                t.l1_load_sectors += requests * s;
                t.l1_data_bytes += requests * s * SECTOR_BYTES;
                local_sectors += requests * s;
            }
            (Space::Local, _) => local_sectors += requests,
            (Space::Const | Space::Param, _) => folded_const += usize::from(a.constant_operand == Some(true)),
            (_, AccessKind::Load) => {
                t.global_load_requests += requests;
                t.l1_load_sectors += requests * sectors;
                t.l1_wavefronts += requests * l1_wavefronts.unwrap_or(1.0);
                if !l1_keeps(a, caches) {
                    t.l2_load_line_requests += requests * request_lines(a, sectors, active);
                }
                // The bytes the data path returns: every active lane's, except where all lanes
                // read one address, which the L1 broadcasts as one copy (as a shared-memory
                // wavefront does, CUDA C++ Programming Guide, "Shared Memory": a broadcast
                // costs one access): an N-body's `pos[j]`, a matrix-vector product's `x[c]`.
                let lane_bytes = f64::from(a.bytes_per_thread.max(1));
                t.l1_data_bytes += requests
                    * if a.class == AccessClass::Uniform {
                        lane_bytes
                    } else if l1_wavefronts.is_some() {
                        32.0 * active * lane_bytes
                    } else {
                        sectors * SECTOR_BYTES
                    };
            }
            (_, AccessKind::Store) => {
                t.global_store_requests += requests;
                t.l2_store_sectors += requests * sectors;
                // The active lanes' lines (a store under `if (threadIdx.x == 0)` is one
                // request); `sectors` already counts only theirs.
                t.store_line_requests += requests * request_lines(a, sectors, active);
                t.l1_wavefronts += requests * l1_wavefronts.unwrap_or(1.0);
            }
            (_, AccessKind::Atomic) => {
                t.atomic_requests += requests;
                let span = atomic_span(a, launch);
                // ptxas's warp aggregation: one operation per request by one lane.
                let lanes_on_one = if a.warp_aggregated == Some(true) { Some(1.0) } else { same_address(a.same_address_lanes) };
                // Whether the serialised operations are a chain on one address (or a
                // request's lanes on distinct words of one line, one pass each), which an
                // architecture's L2 may perform at its own integer rate, rather than a
                // data-dependent scatter over a table of several words.
                let mut on_one_address = true;
                let serialised = match (lanes_on_one, span) {
                    (Some(n), _) => requests * n,
                    (None, Some(bytes)) => {
                        // Every active lane is an operation in the L2 slice that holds its
                        // line; the table's lines take them in parallel, each in turn.
                        let lines = (bytes / LINE_BYTES).ceil().max(1.0);
                        spanned_atomics.push((bytes, lines));
                        on_one_address = bytes <= f64::from(a.bytes_per_thread.max(4));
                        requests * (32.0 * active).max(1.0) / lines
                    }
                    (None, None) => {
                        unknown_atomics += 1;
                        t.atomic_unknown_requests += requests;
                        t.atomic_unknown_lanes += requests * (32.0 * active).max(1.0);
                        requests
                    }
                };
                t.atomic_serialised_lanes += serialised;
                if a.integer_atomic == Some(true) && on_one_address {
                    t.atomic_serialised_integer_lanes += serialised;
                }
            }
        }
    }
    if local_sectors > 0.0 {
        t.notes.push(format!("local memory (spills, stack arrays): {local_sectors:.0} sectors counted in L1 and assumed to stay there"));
    }
    if folded_const > 0 {
        t.notes.push(format!("{folded_const} constant load(s) are constant-bank operands: no memory traffic"));
    }
    if unknown_atomics > 0 {
        t.notes.push(format!(
            "{unknown_atomics} atomic(s) with data-dependent addresses: contention unknown, counted as 1 lane per request (the least)"
        ));
    }
    if let Some((bytes, lines)) = spanned_atomics.first() {
        t.notes.push(format!(
            "{} atomic(s) with data-dependent addresses index a table of {bytes:.0} bytes ({lines:.0} line(s) of 128 B): each active lane is one operation, the lines' L2 slices take them in turn",
            spanned_atomics.len()
        ));
    }
    if t.atomic_requests > 0.0 {
        t.notes.push("global atomics are performed in L2: counted as atomic requests, not as L1 or DRAM traffic".into());
    }

    // Footprints per array.
    let grid_ext = Extents { block: launch.block, blocks: launch.grid.map(|g| u64::from(g.max(1))), trips: &trips };
    let block_ext = Extents { block: launch.block, blocks: [1, 1, 1], trips: &trips };
    // One warp: 32 consecutive threads in launch order (x fastest).
    let warp_ext = Extents { block: warp_shape(launch.block), blocks: [1, 1, 1], trips: &trips };
    let resident = (u64::from(caches.sm_count.max(1)) * u64::from(caches.resident_blocks_per_sm.max(1))).min(launch.blocks().max(1));
    let window_dims = window(launch.grid, resident);
    let window_ext = Extents { block: launch.block, blocks: window_dims, trips: &trips };
    // The resident blocks at one step of their loops: what the DRAM sees at once.
    let window_step_ext = Extents { block: launch.block, blocks: window_dims, trips: &[] };
    // The window is whole rows of the grid (a 2-D grid of 256 × 256 blocks with 408
    // resident: 512 blocks), so the grid holds `blocks / window_blocks` windows, not
    // `blocks / resident`: multiplying the window's data by the latter would count a row
    // of blocks 512 / 408 times.
    let window_blocks = window_dims.iter().product::<u64>().max(1) as f64;
    let waves = (blocks / window_blocks).max(1.0);

    let mut streams: BTreeMap<StreamKey, Vec<&MemoryAccess>> = BTreeMap::new();
    let (mut unpatterned_load_sectors, mut unpatterned_store_sectors) = (0.0, 0.0);
    let (mut unpatterned_loads, mut unpatterned_stores) = (0usize, 0usize);
    // Data-dependent loads from a table of known size: (requested sectors, table bytes,
    // whether L1 keeps them).
    let mut table_gathers: Vec<(f64, f64, bool)> = Vec::new();
    // Whether L1 keeps every data-dependent load without a table.
    let mut unpatterned_kept = true;
    // Whether every data-dependent load without a table chases pointers (`p = *p`).
    let mut unpatterned_chase = true;
    // Data-dependent loads through a pointer a loop advances (`MemoryAccess::walk`), by
    // loop and pointer: (bytes per iteration, loads, requested sectors, sectors per request).
    let mut walks: BTreeMap<(u32, String), (u64, usize, f64, f64)> = BTreeMap::new();
    // Accesses that never run (a loop no thread enters) move nothing.
    for a in profile.memory_accesses.iter().filter(|a| is_offchip(a) && a.kind != AccessKind::Atomic && a.executions > 0.0) {
        let requests = a.executions.max(0.0) * warps;
        // Only the active lanes' sectors, as above.
        let active = a.active_share();
        let sectors = request_sectors(a, active);
        match &a.address {
            Some(p) if !p.partial && a.class != AccessClass::Irregular => {
                streams.entry((p.base.clone(), p.tid, p.ctaid, p.lane, a.kind == AccessKind::Store)).or_default().push(a);
            }
            _ => {
                if let (AccessKind::Load, Some(span)) = (a.kind, a.data_span_bytes.filter(|b| *b > 0)) {
                    // A bounded index into one table: its own footprint (below).
                    table_gathers.push((requests * sectors, span as f64, l1_keeps(a, caches)));
                } else if a.kind == AccessKind::Load {
                    unpatterned_loads += 1;
                    unpatterned_kept &= l1_keeps(a, caches);
                    unpatterned_chase &= a.pointer_chase == Some(true);
                    unpatterned_load_sectors += requests * sectors;
                    if let Some(w) = a.walk.as_ref().filter(|_| l1_keeps(a, caches)) {
                        let g = walks.entry((w.loop_index, w.pointer.clone())).or_insert((w.bytes_per_iteration.unsigned_abs(), 0, 0.0, 0.0));
                        g.1 += 1;
                        g.2 += requests * sectors;
                        g.3 = f64::max(g.3, sectors);
                    }
                } else {
                    unpatterned_stores += 1;
                    unpatterned_store_sectors += requests * sectors;
                }
            }
        }
    }
    // The blocks that share an SM's L1 at once: the occupancy's resident blocks, fewer when
    // the grid does not fill them (one block per SM gets the whole L1).
    let sharing = f64::from(caches.resident_blocks_per_sm.max(1)).min((blocks / f64::from(caches.sm_count.max(1))).ceil().max(1.0));
    let mut arrays: BTreeMap<String, ArrayTraffic> = BTreeMap::new();
    // The blocks' load data touched per step of their loops, and over their lifetime
    // ([`step_share`]).
    let (mut step_data, mut lifetime_data) = (0.0, 0.0);
    // Requested load sectors that re-read what earlier iterations read, from L1
    // ([`window_rereads`]).
    let mut window_served = 0.0;
    // The lines the loops' walks hold in L2 at once (`walk_reopen_share`).
    let mut walk_line_bytes = 0.0;
    for ((base, _, _, _, store), members) in &streams {
        let s = Stream { members: members.clone() };
        let e = arrays.entry(base.clone()).or_default();
        let requested: f64 = members.iter().map(|a| requested_sectors(a, warps)).sum();
        // A pattern that moves with the thread spans every thread of a block; only those that
        // make the access touch their part of it (`thread_reach`: a row loop under
        // `if (row < m)`). One that does not (`out[blockIdx.x]` under `if (tid == 0)`) is
        // touched whole by any of them.
        let reach = members
            .iter()
            .map(|a| match &a.address {
                Some(p) if p.tid != [0, 0, 0] || p.lane != 0 => a.thread_reach.filter(|r| r.is_finite() && *r > 0.0).unwrap_or(1.0).min(1.0),
                _ => 1.0,
            })
            .fold(0.0_f64, f64::max);
        // A page visit gives the sectors the resident blocks take from it at one step of
        // their loops. A loop's walk along a row takes more from the same page at its next
        // steps if the page is still open (`open_visit`: the sectors of its steps within a
        // page, a page's worth for a walk of a sector or less per step, one step's for a
        // walk of a page or more); whether it is depends on whether the L2 holds the lines
        // the walks bring until their next steps (`walk_reopen_share`, below).
        let per_visit = s.page_visit_sectors(&window_step_ext);
        // The loop that moves the pattern least per step walks along the page, at any
        // depth (a tile's rows loaded by an inner loop a row apart, walked along by the
        // outer loop over the tiles).
        let step_bytes = members
            .iter()
            .filter_map(|a| a.address.as_ref())
            .flat_map(|p| p.loops.iter())
            .filter(|l| l.bytes_per_iteration != 0)
            .map(|l| l.bytes_per_iteration.unsigned_abs() as f64)
            .fold(f64::INFINITY, f64::min);
        let open_visit = if step_bytes.is_finite() {
            (per_visit * DRAM_PAGE_BYTES / step_bytes.max(SECTOR_BYTES)).clamp(per_visit, SECTORS_PER_PAGE)
        } else {
            per_visit
        };
        if open_visit > per_visit {
            // The 128-byte lines the walk holds at one step (contiguous sectors share one).
            walk_line_bytes += reach * s.sectors(&window_step_ext) / per_visit.min(SECTORS_PER_LINE) * LINE_BYTES;
        }
        if *store {
            let grid = reach * s.sectors(&grid_ext);
            e.store_grid += grid;
            e.store_visits += grid / per_visit;
            e.store_visits_open += grid / open_visit;
            e.store_sectors += requested;
        } else {
            let block_sectors = s.sectors(&block_ext);
            let lifetime = reach * block_sectors;
            e.block += lifetime;
            e.warp_passes += reach * warps_per_block * own_pass_sectors(members, &profile.loops, &warp_ext);
            step_data += lifetime * step_share(&s, &profile.loops, &trips, launch.block, block_sectors).unwrap_or(1.0);
            lifetime_data += lifetime;
            e.window += reach * s.sectors(&window_ext);
            let grid = reach * s.sectors(&grid_ext);
            e.grid += grid;
            e.load_visits += grid / per_visit;
            e.load_visits_open += grid / open_visit;
            e.load_sectors += requested;
            e.load_sectors_per_block += requested / blocks.max(1.0);
            let (cached, uncached): (Vec<&MemoryAccess>, Vec<&MemoryAccess>) = members.iter().partition(|a| l1_keeps(a, caches));
            e.uncached_load_sectors += uncached.iter().map(|a| requested_sectors(a, warps)).sum::<f64>();
            e.uncached_near += near_rereads(&uncached, &profile.loops, warps, sharing * warps_per_block * f64::from(caches.sm_count.max(1)), caches.l2_bytes as f64);
            e.near_rereads += near_rereads(&cached, &profile.loops, warps, sharing * warps_per_block, caches.l1_bytes_per_sm as f64);
            let window = window_rereads(&cached, &profile.loops, &trips, launch.block, warps, sharing, caches.l1_bytes_per_sm as f64);
            e.near_rereads += window;
            window_served += window;
            if let Some(p) = members.first().and_then(|a| a.address.as_ref()) {
                e.reuse_gap_blocks = e.reuse_gap_blocks.max(reuse_gap(p, launch.grid));
            }
        }
    }
    let reopen = walk_reopen_share(walk_line_bytes, caches.l2_bytes as f64);
    // Distinct sectors never exceed the requested ones (a stream's rule can overshoot on
    // sparse patterns).
    let per_sector = |v: f64, n: f64| if n > 0.0 { (v / n).clamp(0.0, 1.0) } else { 1.0 };
    for a in arrays.values_mut() {
        a.visits_per_sector = (
            per_sector(reopen * a.load_visits + (1.0 - reopen) * a.load_visits_open, a.grid),
            per_sector(reopen * a.store_visits + (1.0 - reopen) * a.store_visits_open, a.store_grid),
        );
        a.block = a.block.min(a.load_sectors_per_block);
        a.grid = a.grid.min(a.load_sectors);
        a.window = a.window.clamp(a.block.min(a.grid), a.grid.max(a.block));
        a.store_grid = a.store_grid.min(a.store_sectors);
    }

    // L1: the share of a block's distinct footprint that fits its part of L1.
    let block_bytes: f64 = arrays.values().map(|a| a.block * SECTOR_BYTES).sum();
    // Data-dependent loads over a stated footprint: a random line of it is in L1 (what the
    // resident blocks' patterned data leaves of the SM's L1) or in L2 with the capacities'
    // share of the footprint (module documentation).
    let footprint = launch.footprint_bytes.map(|b| b as f64).filter(|b| *b > 0.0);
    let l1_left = (caches.l1_bytes_per_sm as f64 - sharing * block_bytes).max(0.0);
    let hits = |f: f64| ((l1_left / f).min(1.0), (caches.l2_bytes as f64 / f).min(1.0));
    // A pointer chase around a cycle of f bytes finds a line again only after the whole
    // cycle: each cache keeps it by `l2_kept_share`, not by the share random draws find.
    let chase_hits = |f: f64| (l2_kept_share(f, l1_left), l2_kept_share(f, caches.l2_bytes as f64));
    let (gather_l1_hit, gather_l2_hit) = footprint.map_or((0.0, 0.0), |f| if unpatterned_chase && unpatterned_loads > 0 { chase_hits(f) } else { hits(f) });
    let gather_l1_hit = if unpatterned_kept { gather_l1_hit } else { 0.0 };
    // A chase on a partitioned L2: the hits past what the near partition keeps are the far
    // partition's (`Traffic::l2_far_share`).
    if let (Some(f), true) = (footprint, caches.l2_partitioned && unpatterned_chase && unpatterned_loads > 0 && gather_l2_hit > 0.0) {
        let near = l2_kept_share(f, L2_NEAR_PARTITION_SHARE * caches.l2_bytes as f64);
        t.l2_far_share = ((gather_l2_hit - near) / gather_l2_hit).clamp(0.0, 1.0);
    }
    // A walk (each lane's own run of memory, as a row per thread) re-reads the previous
    // iteration's sectors: of the requested ones, `1 − step / (32·m)` for `m` loads through
    // the pointer, kept by L1 when one iteration's lines of the SM's warps fit there, else
    // in proportion (the rule of `near_rereads` for affine rows).
    let walk_near: f64 = walks
        .values()
        .map(|&(step, m, requested, per_request)| requested * near_reread_share(step, m, per_request, sharing * warps_per_block, caches.l1_bytes_per_sm as f64))
        .sum();
    if walk_near > 0.0 {
        t.notes.push(format!(
            "{} data-dependent load(s) walk a pointer their loop advances: {:.0} % of their requested sectors re-read the previous iteration's and hit L1",
            walks.values().map(|g| g.1).sum::<usize>(),
            100.0 * walk_near / walks.values().map(|g| g.2).sum::<f64>().max(1.0)
        ));
    }
    let unpatterned_load_sectors = (unpatterned_load_sectors - walk_near).max(0.0);
    // The walks' re-reads that L1 did not keep come from the L2, which read them an
    // iteration earlier for the same warp: only the share `step / (32·m)` of new sectors
    // reaches DRAM (a CSR row's values, each sector once).
    let walk_l2_only: f64 = walks
        .values()
        .map(|&(step, m, requested, per_request)| {
            let rereads = requested * (1.0 - step as f64 / (SECTOR_BYTES * m.max(1) as f64)).max(0.0);
            (rereads - requested * near_reread_share(step, m, per_request, sharing * warps_per_block, caches.l1_bytes_per_sm as f64)).max(0.0)
        })
        .sum();
    let gather_l2_sectors = unpatterned_load_sectors * (1.0 - gather_l1_hit);
    // Table gathers, each with its table's size as its footprint: L2 sectors, and DRAM
    // sectors (the misses, at least the table once).
    let (mut table_l2_sectors, mut table_dram_sectors) = (0.0, 0.0);
    for &(requested, f, kept) in &table_gathers {
        let (l1_hit, l2_hit) = hits(f);
        let l1_hit = if kept { l1_hit } else { 0.0 };
        let l2 = requested * (1.0 - l1_hit);
        table_l2_sectors += l2;
        table_dram_sectors += (l2 * (1.0 - l2_hit)).max(requested.min(f / SECTOR_BYTES));
    }
    let l1_per_block = caches.l1_bytes_per_sm as f64 / sharing;
    let hit = if block_bytes <= l1_per_block || block_bytes <= 0.0 { 1.0 } else { l1_per_block / block_bytes };
    let mut l2_loads = gather_l2_sectors + table_l2_sectors;
    for a in arrays.values() {
        l2_loads += a.l2_sectors(blocks, hit);
    }
    t.l2_load_sectors = l2_loads;
    if arrays.values().any(|a| a.uncached_load_sectors > 0.0) || !unpatterned_kept || table_gathers.iter().any(|g| !g.2) {
        t.notes.push("L1 does not keep plain global loads on this GPU (compute capability 3.x, 5.x, 6.x without -dlcm=ca): their re-reads go to L2; only the read-only path (`ld.global.nc`, `__ldg`) is kept".into());
    }
    if window_served > 0.0 {
        t.notes.push(format!(
            "L1: {:.0} % of the requested load sectors re-read what the last iterations of their loop read (a z-march's planes) and hit L1, whose share of the SM keeps those iterations' data",
            100.0 * window_served / t.l1_load_sectors.max(1.0)
        ));
    }
    if !arrays.is_empty() {
        t.notes.push(format!(
            "L1: a block touches {:.1} KiB of distinct data against {:.1} KiB of L1 per resident block: {:.0} % of its re-reads hit L1",
            block_bytes / 1024.0,
            l1_per_block / 1024.0,
            hit * 100.0
        ));
    }

    // DRAM reads: each array's footprint once, plus the re-reads the L2 does not keep,
    // each after the data that passes through L2 before it comes back: a re-read by a
    // later wave after the data of the blocks launched in between (`reuse_gap`: a matrix
    // product's B, read again one block row later; a data set read by every K-th block, K
    // blocks later), at least a wave's data (the window: a stencil's halo rows, read again
    // by the next wave); a block's re-read of its own data after a pass over the window.
    let grid_bytes: f64 = arrays.values().map(|a| (a.grid + a.store_grid) * SECTOR_BYTES).sum();
    let window_bytes: f64 = arrays.values().map(|a| a.window * SECTOR_BYTES).sum();
    let fits = grid_bytes <= caches.l2_bytes as f64;
    // Blocks that start together and share data through their loops read it at the same
    // step (a z-march's halo planes, a matrix product's panel): between two readers' reads
    // pass the data of one step of the resident blocks, not of their lifetimes (`step`,
    // [`step_share`]). The L2 → DRAM volume of concurrently running blocks as the union of
    // their data per step: Su, Cai, Wen and Zhang, "An Analytical GPU Performance Model for
    // 3D Stencil Computations from the Angle of Data Traffic" (J. Supercomputing 71, 2015),
    // the "set of simultaneously active thread blocks"; Ernst, Holzer, Hager, Knorr and
    // Wellein, "Analytical performance estimation during code generation on modern GPUs"
    // (JPDC 173, 2023), the layer condition of concurrently running blocks. Only the first
    // wave starts together: later blocks start as earlier ones end and run out of step with
    // the blocks they share with (an estimate; gpu-benches' gpu-l2-cache sweep, whose blocks
    // `blockIdx.x % blockRun` apart read one chunk at the same step over dozens of waves,
    // runs at the DRAM's rate at 52 MB on an H100 PCIe: predicted at 0.97 of its measured
    // time with the lifetime rule for those waves, 0.44 with the step rule for every
    // block), so the rule weighs the first wave's share of the blocks.
    let step = if lifetime_data > 0.0 { (step_data / lifetime_data).clamp(0.0, 1.0) } else { 1.0 };
    let first_wave = (resident as f64 / blocks.max(1.0)).min(1.0);
    let kept_within = l2_kept_share(window_bytes, caches.l2_bytes as f64);
    let mut rereads_from_dram = false;
    // Data-dependent loads: every L2 miss, and at least the footprint's lines once (cold).
    let gather_dram_sectors = match footprint {
        Some(f) => (gather_l2_sectors * (1.0 - gather_l2_hit)).max(unpatterned_load_sectors.min(f / SECTOR_BYTES)),
        None => (unpatterned_load_sectors - walk_l2_only).max(0.0),
    };
    let mut reads = (gather_dram_sectors + table_dram_sectors) * SECTOR_BYTES;
    for (base, a) in &arrays {
        if a.load_sectors <= 0.0 {
            continue;
        }
        let l2_of_array = a.l2_sectors(blocks, hit).max(a.grid);
        // Each block's first read of its distinct data; what the waves read if each kept
        // its window's sharing; and the blocks' re-reads of their own data past L1. A
        // re-read comes back after a pass over the window; blocks that read the same data
        // at once (`readers` of them) fetch it once between them.
        let first_reads = (a.block * blocks).clamp(a.grid, l2_of_array);
        let per_wave = (a.window * waves).clamp(a.grid, first_reads);
        // The uncached loads' re-reads of the previous iteration's sectors hit L2 (the same
        // warp fetched them a step earlier): not passes over the block's data.
        let own_rereads = (l2_of_array - first_reads - a.uncached_near).max(0.0);
        // Blocks of a wave that read each of its sectors, and the launch-order gap between
        // two of them: the data of that many blocks passes through L2 between their reads
        // (all blocks reading one table: the next block's; a data set shared by every K-th
        // block: K blocks' worth).
        let readers = if a.window > 0.0 { (window_blocks * a.block / a.window).max(1.0) } else { 1.0 };
        let gap = (window_blocks / readers * block_bytes).min(window_bytes);
        let kept_shared = first_wave * l2_kept_share(gap * step, caches.l2_bytes as f64) + (1.0 - first_wave) * l2_kept_share(gap, caches.l2_bytes as f64);
        // A re-read by a later wave comes back after the data of the blocks launched in
        // between: `reuse_gap_blocks` blocks' worth, at least the window's (a halo read
        // again by the next wave), at most the grid's.
        let across_bytes = (a.reuse_gap_blocks * block_bytes).clamp(window_bytes, grid_bytes.max(window_bytes));
        let kept_across = l2_kept_share(across_bytes, caches.l2_bytes as f64);
        // A block reads its own data again either in the same step from its other warps
        // (a row of B for every warp of a naive product's block: at once, from L2) or in a
        // later pass (a cache benchmark's sweep): the reads per distinct sector beyond one
        // per warp are the passes; an uncached load's re-read of the previous iteration's
        // sector (`uncached_near`) is neither. A warp that goes over its own data again in
        // a later loop (a softmax's second and third passes over its row, a warp per row)
        // makes passes too, however few warps share each sector
        // ([`ArrayTraffic::warp_passes`]), those L1 does not keep (the capacity rule's
        // `1 − hit`; all of an uncached load's).
        let per_sector = if a.block > 0.0 { (a.load_sectors_per_block - a.uncached_near / blocks.max(1.0)).max(0.0) / a.block } else { 1.0 };
        let later_passes = if per_sector > warps_per_block { 1.0 - warps_per_block / per_sector } else { 0.0 };
        let uncached_share = if a.load_sectors > 0.0 { (a.uncached_load_sectors / a.load_sectors).clamp(0.0, 1.0) } else { 0.0 };
        let own_passes = a.warp_passes * blocks * (uncached_share + (1.0 - uncached_share) * (1.0 - hit));
        let pass_rereads = (own_rereads * later_passes).max(own_passes.min(own_rereads));
        let sectors = a.grid
            + (per_wave - a.grid) * (1.0 - kept_across)
            + (first_reads - per_wave) * (1.0 - kept_shared)
            + pass_rereads / readers * (1.0 - kept_within);
        reads += sectors * SECTOR_BYTES;
        t.dram_activations += sectors * a.visits_per_sector.0;
        t.load_shares.insert(
            base.clone(),
            LoadShare { to_l2: (a.l2_sectors(blocks, hit) / a.load_sectors).clamp(0.0, 1.0), to_dram: (sectors / a.load_sectors).clamp(0.0, 1.0) },
        );
        if sectors > a.grid * 1.01 {
            rereads_from_dram = true;
            t.notes.push(format!(
                "`{base}`: re-read from DRAM ({resident} blocks at once): {:.1} MB for a {:.1} MB footprint (the L2 keeps {:.0} % of the re-reads by later waves, which come back after {:.1} MB of other data, {:.0} % of the data the blocks of a wave share{}, and {:.0} % of a block's own re-reads past L1)",
                sectors * SECTOR_BYTES / 1e6,
                a.grid * SECTOR_BYTES / 1e6,
                kept_across * 100.0,
                across_bytes / 1e6,
                kept_shared * 100.0,
                if first_wave > 0.0 && step < 1.0 { format!(" ({:.0} % of the blocks run in the first wave, in step: one step's data between two readers)", first_wave * 100.0) } else { String::new() },
                kept_within * 100.0
            ));
        }
    }
    t.dram_read_bytes = reads;
    t.dram_write_bytes = unpatterned_store_sectors * SECTOR_BYTES + arrays.values().map(|a| a.store_grid * SECTOR_BYTES).sum::<f64>();
    // Where data-dependent sectors land is not known (a gather's may share pages, a walk's
    // run along one): counted at a page's worth each visit, the least.
    t.dram_activations += (gather_dram_sectors + table_dram_sectors + unpatterned_store_sectors) / SECTORS_PER_PAGE
        + arrays.values().map(|a| a.store_grid * a.visits_per_sector.1).sum::<f64>();
    // Kept in L2 across launches: only when every access has a known footprint (an array
    // whose size is unknown may not fit) and there is something to keep. With a stated
    // footprint the data-dependent loads' range counts as one more array.
    let tables: f64 = table_gathers.iter().map(|g| g.1).sum();
    // The bytes kept in L2: the arrays' distinct footprint, the stated gather footprint and
    // the tables of bounded gathers.
    let kept_bytes = grid_bytes + if unpatterned_loads > 0 { footprint.unwrap_or(0.0) } else { 0.0 } + tables;
    let footprint_known = unpatterned_stores == 0 && if unpatterned_loads == 0 { grid_bytes > 0.0 } else { footprint.is_some() };
    t.l2_resident = footprint_known && kept_bytes <= caches.l2_bytes as f64;
    // Past the L2's size, between two launches the whole footprint passes through the L2
    // (what one launch reads or writes, the next reads again after the rest of both), so
    // the L2 keeps the share of the first reads and writes that a cyclic sweep of that
    // size keeps. Measured: gpu-benches' small-kernel sweep on an A40 runs at 1.09 TB/s
    // with 1.24 × its 6 MB L2 in arrays, against 0.56 TB/s from DRAM. Re-reads within the
    // launch that miss are judged above and stay.
    let first_touch = arrays.values().map(|a| a.grid + a.store_grid).sum::<f64>() * SECTOR_BYTES;
    // Not on a partitioned L2 (GA100, GH100: each partition caches what its own SMs read, so
    // a line every SM reads can be held twice): there the same sweep on an A100 80 GB runs
    // at the DRAM's rate from 1.08 × its 40 MB L2 on (docs/validation.md).
    // Below half a percent (past about 1.6 × the L2) nothing is kept.
    let kept_share = if footprint_known && !t.l2_resident && !caches.l2_partitioned { l2_kept_share(kept_bytes, caches.l2_bytes as f64) } else { 0.0 };
    let kept_share = if kept_share < 0.005 { 0.0 } else { kept_share };
    t.l2_kept_bytes = (kept_share * first_touch).min(t.dram_read_bytes + t.dram_write_bytes);
    if t.l2_resident {
        t.notes.push(format!(
            "DRAM: every array ({:.1} MB in all) fits in the {:.1} MB L2: in the steady state of repeated launches the data stays there (L2 is write-back), so the time counts no DRAM traffic; a first, cold launch reads and writes {:.1} MB",
            kept_bytes / 1e6,
            caches.l2_bytes as f64 / 1e6,
            (t.dram_read_bytes + t.dram_write_bytes) / 1e6
        ));
    } else if kept_share > 0.005 {
        t.notes.push(format!(
            "DRAM: the arrays ({:.1} MB in all) are {:.2} × the {:.1} MB L2: repeated launches still find about {:.0} % of what one launch first reads and writes there (a cyclic sweep past the L2's size), so the steady state moves {:.1} MB of the {:.1} MB a cold launch does",
            kept_bytes / 1e6,
            kept_bytes / caches.l2_bytes as f64,
            caches.l2_bytes as f64 / 1e6,
            kept_share * 100.0,
            t.steady_dram_bytes() / 1e6,
            (t.dram_read_bytes + t.dram_write_bytes) / 1e6
        ));
    } else if !arrays.is_empty() {
        t.notes.push(format!(
            "DRAM: the distinct footprint of every array ({:.1} MB in all) {} the {:.1} MB L2{}",
            grid_bytes / 1e6,
            if fits { "fits in" } else { "exceeds" },
            caches.l2_bytes as f64 / 1e6,
            match (fits, rereads_from_dram) {
                (true, false) => ": each byte read once",
                (false, false) => ": what later waves of resident blocks read again comes back from L2",
                (_, true) => ": some of what the blocks read again comes back from DRAM (above)",
            }
        ));
    }
    if let (Some(f), true) = (footprint, unpatterned_loads > 0) {
        t.notes.push(format!(
            "{unpatterned_loads} data-dependent load(s) over the stated footprint of {:.1} KiB: {:.0} % of them hit L1, {:.0} % of the rest L2{}",
            f / 1024.0,
            gather_l1_hit * 100.0,
            gather_l2_hit * 100.0,
            if t.l2_far_share > 0.005 { format!(" ({:.0} % of those hits in the far partition of the split L2)", t.l2_far_share * 100.0) } else { String::new() }
        ));
        if unpatterned_stores > 0 {
            t.notes.push(format!("{unpatterned_stores} store(s) without an affine address: their requested sectors are counted in L2 and DRAM"));
        }
    } else if unpatterned_loads + unpatterned_stores > 0 {
        t.notes.push(format!(
            "{unpatterned_loads} load(s) and {unpatterned_stores} store(s) without an affine address (data-dependent, piecewise or with an unknown argument): their requested sectors are counted in L2 and DRAM (their array's size is unknown, so it is not known to fit in L2; `footprint=BYTES` in the launch states the bytes they range over)"
        ));
    }
    if !table_gathers.is_empty() {
        let (requested, bytes) = table_gathers.iter().fold((0.0, 0.0_f64), |(r, b), g| (r + g.0, b.max(g.1)));
        let (l1_hit, _) = hits(bytes);
        t.notes.push(format!(
            "{} data-dependent load(s) index a table of at most {:.1} KiB (a bounded index, or the allocation of their base pointer): {:.0} % of their {:.0} sectors hit L1, the table is read from DRAM at least once",
            table_gathers.len(),
            bytes / 1024.0,
            l1_hit * 100.0,
            requested
        ));
    }
    spills(profile, caches, &mut t);
    t
}

/// A data-dependent access into a table of known size touches at most the table's sectors
/// per request.
fn table_capped(a: &MemoryAccess, sectors: f64) -> f64 {
    match a.data_span_bytes.filter(|b| *b > 0) {
        Some(span) if a.class == AccessClass::Irregular => sectors.min((span as f64 / SECTOR_BYTES).ceil().max(1.0)),
        _ => sectors,
    }
}

/// Bytes of one spill instruction: one 32-bit register (see the module documentation).
const SPILL_BYTES_PER_INSTRUCTION: f64 = 4.0;

/// Executions per thread of ptxas's spill instructions: the static count from `ptxas -v`
/// times the kernel's dynamic/static instruction ratio. (loads, stores)
pub fn spill_instructions_per_thread(profile: &KernelProfile) -> (f64, f64) {
    let r = &profile.resources;
    if r.spill_load_bytes == 0 && r.spill_store_bytes == 0 {
        return (0.0, 0.0);
    }
    let static_total: u64 = profile.counts.static_.values().sum();
    let ratio = if static_total > 0 { (profile.counts.total_dynamic() / static_total as f64).max(0.0) } else { 1.0 };
    (
        f64::from(r.spill_load_bytes) / SPILL_BYTES_PER_INSTRUCTION * ratio,
        f64::from(r.spill_store_bytes) / SPILL_BYTES_PER_INSTRUCTION * ratio,
    )
}

/// The traffic of ptxas's register spills (module documentation, "Register spills").
fn spills(profile: &KernelProfile, caches: &CacheConfig, t: &mut Traffic) {
    let (loads, stores) = spill_instructions_per_thread(profile);
    if loads + stores <= 0.0 {
        return;
    }
    let launch = &profile.launch;
    let warps = launch.threads_per_block().div_ceil(32) as f64 * launch.blocks() as f64;
    // One coalesced 128-byte request (4 sectors) per warp and instruction.
    let per_request = 32.0 * SPILL_BYTES_PER_INSTRUCTION / SECTOR_BYTES;
    t.spill_requests += (loads + stores) * warps;
    t.l1_load_sectors += loads * warps * per_request;
    t.l1_data_bytes += loads * warps * per_request * SECTOR_BYTES;
    let r = &profile.resources;
    let frame = f64::from(r.stack_frame_bytes.max(r.spill_store_bytes));
    let resident_threads = f64::from(caches.resident_blocks_per_sm.max(1)) * launch.threads_per_block() as f64;
    let l1 = caches.l1_bytes_per_sm as f64;
    let in_l1 = frame * resident_threads <= l1;
    if !in_l1 {
        t.l2_load_sectors += loads * warps * per_request;
        t.l2_store_sectors += stores * warps * per_request;
    }
    t.notes.push(format!(
        "register spills (ptxas): {loads:.0} spill loads and {stores:.0} spill stores per thread, {:.1} MB in all; the resident threads' stack frames ({:.0} KiB per SM) {} the {:.0} KiB L1, so they are served by {}",
        (loads + stores) * warps * 32.0 * SPILL_BYTES_PER_INSTRUCTION / 1e6,
        frame * resident_threads / 1024.0,
        if in_l1 { "fit" } else { "exceed" },
        l1 / 1024.0,
        if in_l1 { "L1" } else { "L2 (estimate: reloaded before the write-back L2 evicts them)" }
    ));
}

/// The sectors one warp reads again in a later loop over its own data. The stream's
/// members are grouped by the innermost loop their address moves in (members outside any
/// loop together); a group whose distinct sectors (at most those it requests) cover at
/// least half of all the members' is a pass over the warp's data, and each pass after the
/// first re-reads its sectors. Members in one loop (a stencil's neighbours, an unrolled
/// body's loads) read their shared sectors in the same iterations, not in passes; a
/// remainder loop after an unrolled one reads the few elements left, not a pass: none.
fn own_pass_sectors(members: &[&MemoryAccess], loops: &[crate::model::LoopInfo], warp: &Extents<'_>) -> f64 {
    let mut by_loop: BTreeMap<Option<u32>, Vec<&MemoryAccess>> = BTreeMap::new();
    for a in members {
        let innermost = a.address.as_ref().and_then(|p| innermost_step(p, loops)).map(|l| l.loop_index);
        by_loop.entry(innermost).or_default().push(a);
    }
    if by_loop.len() < 2 {
        return 0.0;
    }
    let all = Stream { members: members.to_vec() }.sectors(warp);
    let passes: Vec<f64> = by_loop
        .into_values()
        .map(|g| {
            let requested: f64 = g.iter().map(|a| requested_sectors(a, 1.0)).sum();
            Stream { members: g }.sectors(warp).min(requested).min(all)
        })
        .filter(|f| *f >= 0.5 * all)
        .collect();
    if passes.len() < 2 { 0.0 } else { (passes.iter().sum::<f64>() - all).max(0.0) }
}

/// The threads of one warp as a box of the block: 32 consecutive threads in launch order
/// (x fastest; CUDA C++ Programming Guide, "SIMT Architecture": a block's warps are its
/// threads in order of their linear index, x fastest), the whole block when it is smaller.
fn warp_shape(block: [u32; 3]) -> [u32; 3] {
    let [bx, by, bz] = block.map(|b| b.max(1));
    let x = bx.min(32);
    let y = by.min((32 / bx).max(1));
    let z = bz.min((32 / (bx * by).max(1)).max(1));
    [x, y, z]
}

/// The blocks resident at once, as a box of the grid in launch order (x fastest).
fn window(grid: [u32; 3], resident: u64) -> [u64; 3] {
    let [gx, gy, gz] = grid.map(|g| u64::from(g.max(1)));
    let x = gx.min(resident.max(1));
    let y = gy.min(resident.div_ceil(gx).max(1));
    let z = gz.min(resident.div_ceil(gx * gy).max(1));
    [x, y, z]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footprint_of_common_layouts() {
        // 2^20 consecutive floats: 4 MiB = 131072 sectors.
        assert_eq!(footprint(&[(4, 256), (1024, 4096)], 4).0, 131_072.0);
        // Every other float of 1024: 8 KiB span → 256 sectors.
        assert_eq!(footprint(&[(8, 1024)], 4).0, 256.0);
        // One float every 4 KiB, 32 of them: 32 sectors.
        assert_eq!(footprint(&[(4096, 32)], 4).0, 32.0);
        // A broadcast: one sector.
        assert_eq!(footprint(&[(0, 256)], 4).0, 1.0);
        // Rows of 16 floats (64 B) 4 KiB apart, 16 rows: 2 sectors each.
        assert_eq!(footprint(&[(4, 16), (4096, 16)], 4).0, 32.0);
        // x = i + j over 1024 threads and 7 taps: 1030 floats, not 7168.
        assert_eq!(footprint(&[(4, 7), (4, 1024)], 4).0, (1030.0f64 * 4.0 / 32.0).ceil());
    }

    #[test]
    fn sectors_per_dram_page_visit() {
        // A coalesced row of 448 blocks of 256 floats: whole pages (64 sectors).
        assert_eq!(page_visit_sectors(&[(4, 256), (1024, 448)], 4), 64.0);
        // A column walk of 8 × 8 blocks on rows of 32 KiB: x down the rows (a page or more
        // apart), y along eight floats, 448 blocks down the rows: one sector per page.
        assert_eq!(page_visit_sectors(&[(32768, 8), (4, 8), (262_144, 448)], 4), 1.0);
        // 16 × 16 blocks: sixteen floats of each row, two sectors.
        assert_eq!(page_visit_sectors(&[(32768, 16), (4, 16), (524_288, 128)], 4), 2.0);
        // Rows of 1 KiB: two of them share a page, a float of each: two sectors per visit.
        assert_eq!(page_visit_sectors(&[(1024, 32)], 4), 2.0);
    }

    #[test]
    fn offsets_of_unrolled_copies_are_lattice_dimensions() {
        assert_eq!(offset_dimensions(&[0, 256, 512]), vec![(256, 3)]);
        // Four outputs 16 floats apart in x, two 8 rows apart in y.
        let grid = [0, 64, 128, 192, 131_072, 131_136, 131_200, 131_264];
        assert_eq!(offset_dimensions(&grid), vec![(64, 4), (131_072, 2)]);
        // Neither: the span, as two copies.
        assert_eq!(offset_dimensions(&[0, 4, 100]), vec![(100, 2)]);
        assert_eq!(offset_dimensions(&[8]), vec![]);
    }

    #[test]
    fn offsets_in_evenly_spaced_groups_are_a_lattice_of_groups() {
        // An unrolled z-march on 512 × 512 floats: planes 1 MiB apart, each plane's centre
        // with its x (±4) and y (±2048) neighbours where the body reads them; the groups'
        // starts are within the widest group's spread of a 1 MiB lattice.
        let plane = 1 << 20;
        let mut offs = vec![0];
        for k in 1..5 {
            offs.extend([k * plane - 2048, k * plane - 4, k * plane, k * plane + 4, k * plane + 2048]);
        }
        offs.push(5 * plane);
        assert_eq!(offset_dimensions(&offs), vec![(plane, 6), (2048, 3), (4, 3)]);
        // Groups that are not evenly spaced, or only two: the span, as two copies.
        assert_eq!(offset_dimensions(&[0, 4, 1000, 1004, 5000]), vec![(5000, 2)]);
        assert_eq!(offset_dimensions(&[0, 4, 1000, 1008]), vec![(1008, 2)]);
    }
}
