//! `scheduling`: Alavani's static execution-time model v2 (Alavani 2023, thesis §4.4; CCPE
//! 2021): resource-reservation list scheduling of each basic block's dependence graph.
//!
//! **What it estimates.** `t_kernel = d_kernel / v_gpu + l_overhead + gm_penalty +
//! sm_penalty + cm_penalty` (Eqs. 4.8–4.9), where `d_kernel` comes from three nested
//! algorithms:
//! - Algorithm 6 ([`schedule_block`]): topological list scheduling of a block's data-flow
//!   graph against a reservation table of the SM's resources (SP, DPU, SFU, LSU). An
//!   instruction run by nTW threads on a resource with R instances takes
//!   `L + L_pipeline · (⌈nTW/R⌉ − 1)` cycles and holds *all* instances of its resource.
//! - Algorithm 7 ([`schedule_cfg`]): the longest path through the CFG (back edges
//!   removed), blocks in loops multiplied by their trip count.
//! - Algorithm 8 ([`schedule_kernel`]): waves of resident threads on the busiest SM, each
//!   scheduled with nTW = the threads of that wave.
//!
//! Then the penalties of §4.4.5: launch overhead (linear, §3.5), global and shared memory
//! (Eqs. 4.10, 4.11 with the exponential throughput models of Table 4.5) and L2 misses
//! (Eq. 4.12).
//!
//! **Bugs fixed rather than copied** (in Algorithms 6–8 as printed; each marked `FIX(n)`
//! where it is fixed):
//! 1. Algorithm 6 returns `Sch(v)+d` of the last node in topological order; we return the
//!    makespan, max over nodes (FIX(1), [`schedule_block`]).
//! 2. Algorithm 7 returns the delay of the last block in topological order; we return the
//!    longest path to any block (FIX(2), [`schedule_cfg`]). Its single `nLoop` becomes
//!    each block's own expected execution count (nested loops compound).
//! 3. Algorithm 8: threads per SM use whole blocks, ⌈nB/nSM⌉·nT_b (the thesis' own
//!    round-robin observation, §4.4.3), FIX(3); the `maxB` condition compares blocks, and
//!    the register and shared limits are per SM and floored to whole blocks, all through the
//!    occupancy calculator, FIX(4); the loop runs `while remaining > 0` (the `≥ 0` of the
//!    listing adds a wave, contradicting the worked example of §5.4.5), subtracts the
//!    *limited* threads per SM, and schedules the last wave with its remainder only,
//!    FIX(5).
//!
//! 6. Eqs. 4.10–4.11 count every global (shared) access nSM × waves times over; we
//!    count each once, FIX(6) ([`penalties`]).
//!
//! **Units** (the thesis mixes them in Eq. 4.8): cycles for the schedule and
//! the cache penalty, converted with the SM clock; µs for the launch overhead (its fit is
//! in µs); the Table 4.5 throughputs read as MB/s (= bytes per µs: they saturate at 79, 70,
//! 87 and 47 GB/s, plausible for these boards), so `access_size / TP` is µs per access.
//!
//! **Worked example.** Fig. 4.6 (vectorAdd on the K20) is reproduced exactly up to the last
//! node, which lands 1 cycle earlier than printed (654 vs 655): with the listing's
//! reservation of d cycles from `Sch(v)`, M2 starts when M1's 322 cycles end at 332; the
//! printed 655 needs M2 to start at 333. See `docs/models/scheduling.md`.
//!
//! **Source.** Alavani 2023 (PhD thesis, BITS Pilani) §4.4 (Algorithms 6–8, Eqs.
//! 4.8–4.12), Tables 3.1–3.3, 4.5, 4.6.

pub mod tables;

use std::collections::BTreeMap;

use kernel_profile::{InstrClass, KernelProfile, Space};

use crate::gpu::GpuParams;
use crate::prediction::{Bound, Confidence, Prediction};
use tables::{ExpThroughput, LatencyColumn, LatencyKey};

/// The per-SM resource types of the thesis' GPU model (§4.1): SP, DPU, SFU, LSU, plus
/// `Misc` for control instructions, which the thesis does not map (our choice: they use
/// the issue slots of the warp schedulers, 32 lanes each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    Sp,
    Dpu,
    Sfu,
    Lsu,
    Misc,
}

/// R[x]: instances of each resource per SM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmResources {
    pub sp: u32,
    pub dpu: u32,
    pub sfu: u32,
    pub lsu: u32,
    pub misc: u32,
}

impl SmResources {
    pub fn count(&self, r: Resource) -> u32 {
        match r {
            Resource::Sp => self.sp,
            Resource::Dpu => self.dpu,
            Resource::Sfu => self.sfu,
            Resource::Lsu => self.lsu,
            Resource::Misc => self.misc,
        }
    }

    pub fn from_gpu(gpu: &GpuParams) -> SmResources {
        SmResources {
            sp: gpu.units.fp32,
            dpu: gpu.units.fp64,
            sfu: gpu.units.sfu,
            lsu: gpu.units.ldst,
            misc: gpu.units.warp_schedulers * 32,
        }
    }
}

/// L_pipeline: "we assume the latency of v is 1 when it is perfectly pipelined" (§4.4.3).
pub const L_PIPELINE: f64 = 1.0;

/// One node of a block's data-flow graph.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedNode {
    pub resource: Resource,
    /// L(v) in cycles.
    pub latency: f64,
    /// Indices of the nodes this one depends on (RAW), within the block.
    pub deps: Vec<usize>,
}

/// The schedule of one block (Algorithm 6).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockSchedule {
    /// Sch(v) per node (indices as given).
    pub start: Vec<f64>,
    /// d(v) = L(v) + L_pipeline·(⌈nTW/R⌉ − 1) per node.
    pub duration: Vec<f64>,
    /// The topological order used.
    pub order: Vec<usize>,
    /// max over nodes of Sch(v) + d(v): what we return.
    pub makespan: f64,
    /// Sch(v) + d(v) of the last node in topological order: what the listing returns.
    pub as_printed: f64,
}

/// Batches of an instruction run by `ntw` threads on `r` instances: ⌈nTW/R⌉ (≥ 1).
fn batches(ntw: u64, r: u32) -> f64 {
    if r == 0 {
        ntw.max(1) as f64
    } else {
        ntw.max(1).div_ceil(u64::from(r)) as f64
    }
}

/// Algorithm 6, SCHEDULEBLOCK. Returns `None` if the graph has a cycle or a dependence
/// outside the block.
///
/// The reservation table is kept as the free gaps of each resource ([`FreeGaps`]), so
/// that finding the first gap that fits takes O(K log n) instead of a scan of every busy
/// interval (O(n) per instruction, O(n²) per block: a 168k-instruction block took 20 s).
/// The schedule is exactly the one of the interval scan ([`schedule_block_scan`], kept as
/// the reference and for degenerate durations); a test compares the two.
pub fn schedule_block(nodes: &[SchedNode], res: &SmResources, ntw: u64) -> Option<BlockSchedule> {
    schedule_block_counted(nodes, res, ntw, &mut 0)
}

/// [`schedule_block`], adding to `steps` the reservation-table operations it performed
/// (intervals visited by the scan, gap-set lookups and updates otherwise): the tests check
/// that they grow linearly with the block.
fn schedule_block_counted(
    nodes: &[SchedNode],
    res: &SmResources,
    ntw: u64,
    steps: &mut u64,
) -> Option<BlockSchedule> {
    let n = nodes.len();
    let order = toposort(n, |v| nodes[v].deps.iter().copied())?;
    let duration: Vec<f64> = nodes
        .iter()
        .map(|v| v.latency + L_PIPELINE * (batches(ntw, res.count(v.resource)) - 1.0))
        .collect();
    // Short blocks (most of them) are cheaper to scan than to build gap sets for.
    if n <= SCAN_BELOW {
        return Some(schedule_block_scan(nodes, order, duration, steps));
    }
    Some(schedule_block_gaps(nodes, order, duration, steps))
}

/// Algorithm 6 with the reservation table as free gaps ([`FreeGaps`]), where that gives
/// the scan's schedule: every duration positive and finite, and few distinct ones per
/// resource; otherwise the scan.
fn schedule_block_gaps(
    nodes: &[SchedNode],
    order: Vec<usize>,
    duration: Vec<f64>,
    steps: &mut u64,
) -> BlockSchedule {
    let n = nodes.len();
    // The gap structure relies on every reservation having a positive, finite length
    // (then touching reservations can be merged without changing any answer); a zero,
    // negative or NaN latency is left to the scan, which defines the result.
    if !duration.iter().all(|d| d.is_finite() && *d > 0.0) {
        return schedule_block_scan(nodes, order, duration, steps);
    }
    let mut tables: BTreeMap<Resource, FreeGaps> = BTreeMap::new();
    for (v, d) in nodes.iter().zip(&duration) {
        tables.entry(v.resource).or_default().add_length(*d);
    }
    // Durations come from the latency rows of Table 3.2 (one per row and resource, under
    // 20); a caller passing arbitrary latencies gets the scan beyond this many.
    if tables
        .values()
        .any(|t| t.fits.len() > MAX_DISTINCT_DURATIONS)
    {
        return schedule_block_scan(nodes, order, duration, steps);
    }
    let mut start = vec![0.0; n];
    let mut makespan: f64 = 0.0;
    let mut as_printed = 0.0;
    for &v in &order {
        // Step 6: t = max over edges (u → v) of Sch(u) + L(u) + L_pipeline·(⌈nTW/R[u]⌉−1).
        let t = nodes[v]
            .deps
            .iter()
            .map(|&u| start[u] + duration[u])
            .fold(0.0, f64::max);
        let d = duration[v];
        // Steps 8–9: the smallest t1 ≥ t with the resource free for d cycles.
        let t1 = tables
            .get_mut(&nodes[v].resource)
            .expect("every resource has a table")
            .reserve(t, d, steps);
        start[v] = t1;
        // FIX(1): the listing's `delay ← Sch(v) + d` keeps only the last node's finish.
        makespan = makespan.max(t1 + d);
        as_printed = t1 + d;
    }
    BlockSchedule {
        start,
        duration,
        order,
        makespan,
        as_printed,
    }
}

/// Algorithm 6 with the reservation table as a sorted list of busy `[start, end)`
/// intervals per resource, scanned from the start for every instruction: O(n²) per block.
/// The reference for [`schedule_block`]; `steps` counts the intervals visited.
pub(crate) fn schedule_block_scan(
    nodes: &[SchedNode],
    order: Vec<usize>,
    duration: Vec<f64>,
    steps: &mut u64,
) -> BlockSchedule {
    let n = nodes.len();
    let mut start = vec![0.0; n];
    // Reservation table, one sorted list of busy [start, end) intervals per resource: an
    // instruction holds every instance of its resource for its whole duration.
    let mut rsv: BTreeMap<Resource, Vec<(f64, f64)>> = BTreeMap::new();
    let mut makespan: f64 = 0.0;
    let mut as_printed = 0.0;
    for &v in &order {
        let t = nodes[v]
            .deps
            .iter()
            .map(|&u| start[u] + duration[u])
            .fold(0.0, f64::max);
        let d = duration[v];
        let busy = rsv.entry(nodes[v].resource).or_default();
        let mut t1 = t;
        for &(s, e) in busy.iter() {
            *steps += 1;
            if e <= t1 {
                continue;
            }
            if s >= t1 + d {
                break;
            }
            t1 = e;
        }
        let pos = busy.partition_point(|&(s, _)| s < t1);
        busy.insert(pos, (t1, t1 + d));
        start[v] = t1;
        makespan = makespan.max(t1 + d);
        as_printed = t1 + d;
    }
    BlockSchedule {
        start,
        duration,
        order,
        makespan,
        as_printed,
    }
}

/// Blocks up to this many instructions are scheduled by the scan (quadratic, but cheaper
/// than the gap sets' allocations at this size; the two give the same schedule).
const SCAN_BELOW: usize = 48;

/// Distinct durations per resource up to which [`FreeGaps`] keeps one set of fitting gaps
/// per duration (each reservation updates every set of its resource).
const MAX_DISTINCT_DURATIONS: usize = 64;

/// A time of the reservation table, ordered by `f64::total_cmp` (every time in it is
/// finite or ±∞, never NaN).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Time(f64);

impl Eq for Time {}

impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Time {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The reservation table of one resource as its free gaps `[start, end)` between busy
/// intervals (touching busy intervals merged), from −∞ to +∞ at first.
///
/// The interval scan places an instruction ready at `t` with duration `d` at `t` if the
/// next busy interval starts at or after `t + d`, else at the end of the first busy
/// interval `e` whose following busy interval starts at or after `e + d`. In gap terms:
/// at `t` if the gap around `t` satisfies `t + d <= end`, else at the start of the first
/// later gap with `start + d <= end` (the same floating-point comparisons). For every
/// distinct duration of the resource (a handful: one per latency row), `fits` holds the
/// gaps that satisfy it, so the first later one is one ordered-set lookup. Merging
/// touching intervals changes no answer when every duration is positive: a query that
/// reaches the shared boundary of two touching intervals moves past both either way.
#[derive(Debug)]
struct FreeGaps {
    /// Gap start → gap end.
    gaps: BTreeMap<Time, f64>,
    /// (duration, starts of the gaps with `start + duration <= end`).
    fits: Vec<(f64, std::collections::BTreeSet<Time>)>,
}

impl Default for FreeGaps {
    fn default() -> FreeGaps {
        FreeGaps {
            gaps: BTreeMap::from([(Time(f64::NEG_INFINITY), f64::INFINITY)]),
            fits: Vec::new(),
        }
    }
}

impl FreeGaps {
    /// Registers a duration that instructions will ask for (before any reservation).
    fn add_length(&mut self, d: f64) {
        if self.fits.iter().all(|(x, _)| *x != d) {
            let set = self
                .gaps
                .iter()
                .filter(|(s, e)| s.0 + d <= **e)
                .map(|(s, _)| *s)
                .collect();
            self.fits.push((d, set));
        }
    }

    /// Reserves `d` cycles at the earliest start `≥ t` (see the type's docs) and returns it.
    fn reserve(&mut self, t: f64, d: f64, steps: &mut u64) -> f64 {
        let (&around, &around_end) = self
            .gaps
            .range(..=Time(t))
            .next_back()
            .expect("the first gap starts at -inf");
        let (gap, gap_end, t1) = if t + d <= around_end {
            (around, around_end, t)
        } else {
            let k = self
                .fits
                .iter()
                .position(|(x, _)| *x == d)
                .expect("every duration is registered");
            let s = *self.fits[k]
                .1
                .range((
                    std::ops::Bound::Excluded(Time(t)),
                    std::ops::Bound::Unbounded,
                ))
                .next()
                .expect("the last gap ends at +inf");
            (s, self.gaps[&s], s.0)
        };
        // One lookup, then one update of the gap map and of each fitting set per gap
        // removed or added.
        let sets = 1 + self.fits.len() as u64;
        *steps += 1 + sets;
        self.remove(gap);
        if t1 > gap.0 {
            *steps += sets;
            self.insert(gap.0, t1);
        }
        if t1 + d < gap_end {
            *steps += sets;
            self.insert(t1 + d, gap_end);
        }
        t1
    }

    fn remove(&mut self, start: Time) {
        self.gaps.remove(&start);
        for (_, set) in &mut self.fits {
            set.remove(&start);
        }
    }

    fn insert(&mut self, start: f64, end: f64) {
        self.gaps.insert(Time(start), end);
        for (d, set) in &mut self.fits {
            if start + *d <= end {
                set.insert(Time(start));
            }
        }
    }
}

/// Kahn's algorithm, smallest index first among ready nodes, so program order (which is
/// a topological order of RAW dependences) is preserved. `None` on a cycle or a bad index.
fn toposort<I: Iterator<Item = usize>>(n: usize, preds: impl Fn(usize) -> I) -> Option<Vec<usize>> {
    let mut indeg = vec![0usize; n];
    let mut succs = vec![Vec::new(); n];
    for (v, deg) in indeg.iter_mut().enumerate() {
        for u in preds(v) {
            if u >= n {
                return None;
            }
            *deg += 1;
            succs[u].push(v);
        }
    }
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(v) = ready.pop_first() {
        order.push(v);
        for &w in &succs[v] {
            indeg[w] -= 1;
            if indeg[w] == 0 {
                ready.insert(w);
            }
        }
    }
    (order.len() == n).then_some(order)
}

/// One basic block for Algorithm 7.
#[derive(Debug, Clone, PartialEq)]
pub struct CfgBlock {
    pub nodes: Vec<SchedNode>,
    /// Successor blocks (indices into the block list).
    pub successors: Vec<usize>,
    /// How many times a warp runs the block (1 outside loops, the trip count inside).
    pub multiplier: f64,
    /// Global and shared memory instructions in the block (for nGM, nShM).
    pub n_global: f64,
    pub n_shared: f64,
}

/// The result of Algorithm 7.
#[derive(Debug, Clone, PartialEq)]
pub struct CfgSchedule {
    /// Longest-path delay of the CFG in cycles.
    pub delay: f64,
    /// Per block: its own schedule's makespan (one execution).
    pub block_makespan: Vec<f64>,
    /// CFG edges (from, to) treated as back edges and removed.
    pub back_edges: Vec<(usize, usize)>,
    /// Σ over blocks of global (shared) instructions × multiplier: per-wave nGM (nShM).
    pub n_global: f64,
    pub n_shared: f64,
}

/// Algorithm 7, SCHEDULECFG, with entry block 0.
pub fn schedule_cfg(blocks: &[CfgBlock], res: &SmResources, ntw: u64) -> Option<CfgSchedule> {
    let n = blocks.len();
    if n == 0 {
        return None;
    }
    let back_edges = back_edges(blocks);
    // Sorted for lookup: a linear search per CFG edge is O(edges × loops).
    let mut sorted_back = back_edges.clone();
    sorted_back.sort_unstable();
    let is_back = |u: usize, v: usize| sorted_back.binary_search(&(u, v)).is_ok();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (u, b) in blocks.iter().enumerate() {
        for &v in &b.successors {
            if v < n && !is_back(u, v) {
                preds[v].push(u);
            }
        }
    }
    let order = toposort(n, |v| preds[v].iter().copied())?;
    let mut delay = vec![0.0; n];
    let mut block_makespan = vec![0.0; n];
    let mut longest: f64 = 0.0;
    for &g in &order {
        // Step 5: d = max over CFG edges (G_p → G) of delay[G_p]: the longest path.
        let d = preds[g].iter().map(|&p| delay[p]).fold(0.0, f64::max);
        let s = schedule_block(&blocks[g].nodes, res, ntw)?;
        block_makespan[g] = s.makespan;
        // Steps 7–8: the thesis multiplies blocks with a back edge by one user nLoop; we
        // use each block's own execution count, so nested loops compound.
        let d_g = s.makespan * blocks[g].multiplier.max(0.0);
        delay[g] = d + d_g;
        // FIX(2): the listing returns delay[G] of the last block in topological order.
        longest = longest.max(delay[g]);
    }
    let n_global = blocks
        .iter()
        .map(|b| b.n_global * b.multiplier.max(0.0))
        .sum();
    let n_shared = blocks
        .iter()
        .map(|b| b.n_shared * b.multiplier.max(0.0))
        .sum();
    Some(CfgSchedule {
        delay: longest,
        block_makespan,
        back_edges,
        n_global,
        n_shared,
    })
}

/// Back edges of a DFS from block 0 (edges to a block on the DFS stack); the thesis
/// marks back edges as loops (§4.2); a topological sort needs them removed.
fn back_edges(blocks: &[CfgBlock]) -> Vec<(usize, usize)> {
    let n = blocks.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut res = Vec::new();
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (u, ref mut i)) = stack.last_mut() {
            if let Some(&v) = blocks[u].successors.get(*i) {
                *i += 1;
                if v >= n {
                    continue;
                }
                match state[v] {
                    0 => {
                        state[v] = 1;
                        stack.push((v, 0));
                    }
                    1 => res.push((u, v)),
                    _ => {}
                }
            } else {
                state[u] = 2;
                stack.pop();
            }
        }
    }
    res
}

/// The launch as Algorithm 8 sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Launch {
    /// nB: blocks.
    pub blocks: u64,
    /// nT_b: threads per block.
    pub threads_per_block: u64,
    /// Resident blocks per SM after the register, shared-memory, warp and block limits
    /// (the occupancy calculator; FIX(4)).
    pub resident_blocks_per_sm: u64,
    /// nTh_sm^M: maximum threads per SM.
    pub max_threads_per_sm: u64,
}

/// The result of Algorithm 8.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSchedule {
    /// d_kernel in cycles.
    pub d_kernel: f64,
    pub waves: u64,
    /// Threads per SM in a full wave, and in the last wave.
    pub threads_per_wave: u64,
    pub threads_last_wave: u64,
    /// nGM, nShM: global (shared) instructions per SM over all waves.
    pub n_gm: f64,
    pub n_shm: f64,
    /// The full-wave CFG schedule (for explanations).
    pub cfg: CfgSchedule,
}

/// Algorithm 8, SCHEDULEKERNEL.
pub fn schedule_kernel(
    blocks: &[CfgBlock],
    res: &SmResources,
    sm_count: u32,
    launch: &Launch,
) -> Option<KernelSchedule> {
    if sm_count == 0
        || launch.blocks == 0
        || launch.threads_per_block == 0
        || launch.resident_blocks_per_sm == 0
    {
        return None;
    }
    // FIX(3): whole blocks on the busiest SM (round-robin, §4.4.3).
    let sched = launch.blocks.div_ceil(u64::from(sm_count)) * launch.threads_per_block;
    // FIX(4): the resident limit in whole blocks, capped by nTh_sm^M.
    let per_wave = (launch.resident_blocks_per_sm * launch.threads_per_block)
        .min(launch.max_threads_per_sm.max(1));
    let per_wave = per_wave.max(
        launch
            .threads_per_block
            .min(launch.max_threads_per_sm.max(1)),
    );
    // FIX(5): `while remaining > 0`, subtracting the limited per-wave count, with the last
    // wave scheduled for its remainder only.
    let full = sched / per_wave;
    let rest = sched % per_wave;
    let waves = full + u64::from(rest > 0);
    let full_cfg = schedule_cfg(blocks, res, per_wave)?;
    let mut d_kernel = full as f64 * full_cfg.delay;
    let mut n_gm = full as f64 * full_cfg.n_global;
    let mut n_shm = full as f64 * full_cfg.n_shared;
    if rest > 0 {
        let last = schedule_cfg(blocks, res, rest)?;
        d_kernel += last.delay;
        n_gm += last.n_global;
        n_shm += last.n_shared;
    }
    Some(KernelSchedule {
        d_kernel,
        waves,
        threads_per_wave: per_wave,
        threads_last_wave: if rest > 0 { rest } else { per_wave },
        n_gm,
        n_shm,
        cfg: full_cfg,
    })
}

/// The wave count of Algorithm 8 *as printed* (`while nTh_sched ≥ 0`, subtracting
/// nTh_sm^M), kept to document FIX(5): it counts one wave too many whenever the threads
/// divide evenly.
pub fn printed_wave_count(threads_to_schedule: u64, max_threads_per_sm: u64) -> u64 {
    if max_threads_per_sm == 0 {
        return 0;
    }
    threads_to_schedule / max_threads_per_sm + 1
}

/// A GPU's calibration for the thesis' model: latencies, penalty models.
#[derive(Debug, Clone, PartialEq)]
pub struct AlavaniGpu {
    pub params: GpuParams,
    pub resources: SmResources,
    /// Table 3.2 column, or one derived from the GPU's generic latencies.
    pub latencies: LatencyColumn,
    /// Whether `latencies` is a measured Table 3.2 column.
    pub measured_latencies: bool,
    /// Table 3.3 (K20 only); `false` → `params.dram_latency_cycles`.
    pub global_latency_k20_model: bool,
    /// Threads where Table 3.3's last interval ends: the regression is held there.
    pub global_latency_table_end: f64,
    /// §3.5 launch overhead (a, b): a·nB·nT_b + b µs; `None` → the K20's, as an estimate.
    pub launch_overhead: Option<(f64, f64)>,
    /// Table 4.5 models; `None` → bandwidth-based substitute.
    pub tp_global: Option<ExpThroughput>,
    pub tp_shared: Option<ExpThroughput>,
}

impl AlavaniGpu {
    /// The thesis' calibration where the GPU's data holds it, else a generic one derived
    /// from the GPU's latencies (every derived number is reported as an assumption).
    ///
    /// A GPU of the database is calibrated by its data in `gpu-data/`, never by its
    /// spelled id: the Table 3.2 column when its `instr_latency_cycles` (its SM
    /// architecture's, or its own overrides) hold all sixteen rows ([`data_column`]; the
    /// GK110 and GV100 architectures carry the K20 and V100 columns, so every board on
    /// those SMs gets them), the §3.5 launch-overhead fit from `model_params`
    /// `seed004.launch_overhead_{a,b}`, and Table 3.3's global-latency regression where
    /// `model_params` has `seed004.global_latency_table_end_threads` (the K20's). Keying
    /// on ids missed every V100 of the database (its ids are `tesla-v100-sxm2-16gb` ...,
    /// the code matched `v100-sxm2-16gb`). A paper preset (no database entry, e.g.
    /// [`GpuParams::tesla_k20`]) is one of `gpu-data/paper-gpus.toml`'s GPUs, whose
    /// columns are the printed ones in [`tables`].
    pub fn for_gpu(gpu: &GpuParams) -> AlavaniGpu {
        let resources = SmResources::from_gpu(gpu);
        let (column, global_latency_table_end, launch_overhead) = match &gpu.spec {
            Some(spec) => {
                let mp = |key: &str| spec.model_params.get(key).copied();
                let overhead = mp("seed004.launch_overhead_a").zip(mp("seed004.launch_overhead_b"));
                (data_column(&spec.instr_latency_cycles), mp("seed004.global_latency_table_end_threads"), overhead)
            }
            None => {
                let column = match gpu.id.as_str() {
                    "tesla-k20" => Some(tables::K20),
                    "quadro-k4200" => Some(tables::K4200),
                    "tesla-m60" => Some(tables::M60),
                    "gtx-1050" => Some(tables::GTX1050),
                    _ => None,
                };
                let k20 = gpu.id == "tesla-k20";
                (column, k20.then_some(tables::K20_GLOBAL_LATENCY_TABLE_END), k20.then_some(tables::K20_LAUNCH_OVERHEAD))
            }
        };
        // Table 4.5's fits were measured on four boards, named by their database ids
        // (`table_4_5_ids_are_database_ids` checks that each one resolves).
        let tp = tables::TABLE_4_5.iter().find(|(id, _, _)| *id == gpu.id);
        AlavaniGpu {
            resources,
            measured_latencies: column.is_some(),
            latencies: column.unwrap_or_else(|| generic_column(gpu)),
            global_latency_k20_model: global_latency_table_end.is_some(),
            global_latency_table_end: global_latency_table_end.unwrap_or(tables::K20_GLOBAL_LATENCY_TABLE_END),
            launch_overhead,
            tp_global: tp.map(|it| it.1),
            tp_shared: tp.map(|it| it.2),
            params: gpu.clone(),
        }
    }

    /// L(v) for a Table 3.2 row, the global latency at this launch, or misc.
    pub fn latency(&self, key: LatencyKey, threads_total: f64) -> f64 {
        match key {
            LatencyKey::Global => {
                if self.global_latency_k20_model {
                    // Held at the table's end: the last segment extended would turn
                    // negative past 19.8 million threads (a negative time).
                    tables::k20_global_latency(threads_total.min(self.global_latency_table_end))
                } else {
                    self.params.dram_latency_cycles
                }
            }
            LatencyKey::Misc => 10.0,
            k => {
                tables::column_latency(&self.latencies, k).unwrap_or(self.params.alu_latency_cycles)
            }
        }
    }
}

/// The Table 3.2 column a database GPU's data holds: `Some` when its
/// `instr_latency_cycles` has every row of [`tables::TABLE_3_2_ROWS`] (named as in
/// `gpu-data/README.md`: `addf` ... `mov`, `shared_ldst`), `None` when any is missing.
pub fn data_column(latencies: &BTreeMap<String, f64>) -> Option<LatencyColumn> {
    let mut col = [0.0; 16];
    for (slot, key) in col.iter_mut().zip(tables::TABLE_3_2_ROWS) {
        let name = if key == LatencyKey::Shared { "shared_ldst" } else { key.name() };
        *slot = *latencies.get(name)?;
    }
    Some(col)
}

/// A Table 3.2-shaped column for a GPU the thesis did not measure (estimates): simple ALU
/// rows at the GPU's ALU latency, `mads`/`mul` at twice it, divisions and square root at
/// the K20's ratio to its ALU latency (a software sequence of ~100 ALU operations), `cvt`
/// and `setp` at the K20's ratios, `mov` 2 cycles, shared at the GPU's shared latency.
fn generic_column(gpu: &GpuParams) -> LatencyColumn {
    let a = gpu.alu_latency_cycles;
    let k = |key: LatencyKey| tables::column_latency(&tables::K20, key).unwrap_or(9.0) / 9.0 * a;
    let mut col = [a; 16];
    for (i, key) in tables::TABLE_3_2_ROWS.iter().enumerate() {
        col[i] = match key {
            LatencyKey::Mads | LatencyKey::Mul => 2.0 * a,
            LatencyKey::Divf
            | LatencyKey::Divs
            | LatencyKey::Sqrt
            | LatencyKey::Cvt
            | LatencyKey::Setp => k(*key),
            LatencyKey::Mov => 2.0,
            LatencyKey::Shared => gpu.shared_latency_cycles,
            _ => a,
        };
    }
    col
}

/// R_map: which resource executes an instruction (Alavani 2023 §4.4.2.1 illustrates only
/// `add` on the single-precision adders; the rest is our mapping).
pub fn resource_of(class: InstrClass, key: LatencyKey) -> Resource {
    match class {
        // Constant-bank operands (see `tables::latency_key`): no LSU work.
        InstrClass::Load(Space::Param | Space::Const) => Resource::Misc,
        InstrClass::Load(_) | InstrClass::Store(_) | InstrClass::Atomic(_) => Resource::Lsu,
        InstrClass::Fp64 => Resource::Dpu,
        InstrClass::Sfu => Resource::Sfu,
        InstrClass::Branch
        | InstrClass::Barrier
        | InstrClass::Fence
        | InstrClass::Call
        | InstrClass::Return
        | InstrClass::Other => Resource::Misc,
        _ if matches!(key, LatencyKey::Divf | LatencyKey::Sqrt) => Resource::Sfu,
        _ => Resource::Sp,
    }
}

/// The penalties of §4.4.5 for a scheduled kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Penalties {
    pub launch_overhead_us: f64,
    pub gm_penalty_us: f64,
    pub sm_penalty_us: f64,
    pub cm_penalty_cycles: f64,
}

/// Eqs. 4.10–4.12 and §3.5. `access_gm_bytes` / `access_sm_bytes`: bytes per memory
/// instruction per thread (the thesis gives no value for them).
pub fn penalties(
    gpu: &AlavaniGpu,
    launch: &Launch,
    k: &KernelSchedule,
    global_latency: f64,
    access_gm_bytes: f64,
    access_sm_bytes: f64,
) -> Penalties {
    let threads = (launch.blocks * launch.threads_per_block) as f64;
    let lsu = f64::from(gpu.resources.lsu.max(1));
    let sm = f64::from(gpu.params.sm_count.max(1));
    let (a, b) = gpu.launch_overhead.unwrap_or(tables::K20_LAUNCH_OVERHEAD);
    let launch_overhead_us = a * threads + b;
    // Per-thread (loop-multiplied) global and shared instructions of one wave.
    let gm_thread = k.cfg.n_global;
    let sm_thread = k.cfg.n_shared;
    // Eq. 4.10: (nB·nT_b / R[LSU]) × (accessGm_sz / TP(gm)) × nGM. FIX(6): as printed it
    // charges the LSU batches of the *whole GPU* to one SM and multiplies by an nGM that
    // already counts every wave of every thread, so each access is counted nSM × waves
    // times over (1M-element vectorAdd on the K20 would pay 3.2 ms). We divide by nSM as
    // Eq. 4.11 does and multiply by the per-thread count; TP is evaluated at the per-SM
    // count including waves, as the thesis' dataset does (`santonus/energymodel`).
    let gm_penalty_us = match gpu.tp_global.and_then(|tp| tp.at(k.n_gm)) {
        Some(tp) => threads / (lsu * sm) * (access_gm_bytes / tp) * gm_thread,
        // Substitute for GPUs without a Table 4.5 fit: the global traffic at peak
        // bandwidth (bytes / (GB/s) → µs).
        None => threads * gm_thread * access_gm_bytes / (gpu.params.mem_bandwidth_gbs * 1e3),
    };
    // Eq. 4.11: (nB·nT_b / (R[LSU]·nSM)) × (access_sm_sz / TP(sm)) × nShM, with the
    // per-thread count for the same reason (FIX(6)).
    let sm_penalty_us = match gpu.tp_shared.and_then(|tp| tp.at(k.n_shm)) {
        Some(tp) => threads / (lsu * sm) * (access_sm_bytes / tp) * sm_thread,
        None => 0.0,
    };
    // Eq. 4.12: (nT_b·nB·nGM) / (waves·L2_sz / access_sz) × L(gm).
    let l2_accesses = k.waves.max(1) as f64 * gpu.params.l2_bytes as f64 / access_gm_bytes.max(1.0);
    let cm_penalty_cycles = if l2_accesses > 0.0 {
        threads * k.n_gm / l2_accesses * global_latency
    } else {
        0.0
    };
    Penalties {
        launch_overhead_us,
        gm_penalty_us,
        sm_penalty_us,
        cm_penalty_cycles,
    }
}

/// Builds the CFG blocks of a profile with this GPU's latencies.
pub fn cfg_from_profile(profile: &KernelProfile, gpu: &AlavaniGpu) -> Option<Vec<CfgBlock>> {
    if profile.blocks.is_empty() {
        return None;
    }
    let threads_total = profile.launch.total_threads() as f64;
    let index: BTreeMap<u32, usize> = profile
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| (b.id, i))
        .collect();
    let mut res = Vec::with_capacity(profile.blocks.len());
    for b in &profile.blocks {
        let mut nodes = Vec::with_capacity(b.instructions.len());
        let mut n_global = 0.0;
        let mut n_shared = 0.0;
        for ins in &b.instructions {
            let key = tables::latency_key(&ins.opcode, ins.class);
            match ins.class.space() {
                Some(Space::Shared) => n_shared += 1.0,
                Some(Space::Param | Space::Const) | None => {}
                Some(_) => n_global += 1.0,
            }
            nodes.push(SchedNode {
                resource: resource_of(ins.class, key),
                latency: gpu.latency(key, threads_total),
                deps: ins
                    .deps
                    .iter()
                    .filter_map(|&d| usize::try_from(d).ok())
                    .collect(),
            });
        }
        res.push(CfgBlock {
            nodes,
            successors: b
                .successors
                .iter()
                .filter_map(|s| index.get(s).copied())
                .collect(),
            // Under the thesis' assumption that every branch is taken by at least one
            // thread of every warp (§4.4.1), a block expected to run a fraction of a time
            // per thread still runs once per warp.
            multiplier: if b.executions >= 1.0 {
                b.executions
            } else {
                1.0
            },
            n_global,
            n_shared,
        });
    }
    Some(res)
}

/// Adapter: the thesis' model on a static profile.
pub fn predict(profile: &KernelProfile, gpu_params: &GpuParams) -> Option<Prediction> {
    let gpu = AlavaniGpu::for_gpu(gpu_params);
    let blocks = cfg_from_profile(profile, &gpu)?;
    let tpb = profile.launch.threads_per_block();
    let smem = profile
        .resources
        .static_smem_bytes
        .saturating_add(profile.launch.dynamic_smem);
    let resident = gpu_params.resident_blocks_per_sm(
        u32::try_from(tpb).ok()?,
        profile.resources.registers_per_thread,
        smem,
    );
    let launch = Launch {
        blocks: profile.launch.blocks(),
        threads_per_block: tpb,
        resident_blocks_per_sm: u64::from(resident),
        max_threads_per_sm: u64::from(gpu_params.limits.max_threads_per_sm),
    };
    let k = schedule_kernel(&blocks, &gpu.resources, gpu_params.sm_count, &launch)?;
    let global_latency = gpu.latency(LatencyKey::Global, profile.launch.total_threads() as f64);
    let avg_bytes = |shared: bool| {
        let (n, b) = profile
            .memory_accesses
            .iter()
            // Constant and parameter reads go through their own caches.
            .filter(|a| (a.space == Space::Shared) == shared && !matches!(a.space, Space::Const | Space::Param))
            .fold((0.0, 0.0), |(n, b), a| {
                (
                    n + a.executions,
                    b + a.executions * f64::from(a.bytes_per_thread),
                )
            });
        if n > 0.0 { b / n } else { 4.0 }
    };
    let p = penalties(
        &gpu,
        &launch,
        &k,
        global_latency,
        avg_bytes(false),
        avg_bytes(true),
    );
    let sched_us = gpu_params.cycles_to_us(k.d_kernel);
    let cm_us = gpu_params.cycles_to_us(p.cm_penalty_cycles);
    let time_us = sched_us + p.launch_overhead_us + p.gm_penalty_us + p.sm_penalty_us + cm_us;
    if !time_us.is_finite() {
        return None;
    }
    let mut breakdown = BTreeMap::new();
    breakdown.insert("schedule_cycles".to_string(), k.d_kernel);
    breakdown.insert("schedule_us".to_string(), sched_us);
    breakdown.insert("waves".to_string(), k.waves as f64);
    breakdown.insert("launch_overhead_us".to_string(), p.launch_overhead_us);
    breakdown.insert("gm_penalty_us".to_string(), p.gm_penalty_us);
    breakdown.insert("sm_penalty_us".to_string(), p.sm_penalty_us);
    breakdown.insert("cm_penalty_us".to_string(), cm_us);
    breakdown.insert("n_gm".to_string(), k.n_gm);
    breakdown.insert("n_shm".to_string(), k.n_shm);
    let mem = p.gm_penalty_us + p.sm_penalty_us + cm_us;
    let bound = if mem > sched_us {
        Bound::Memory
    } else {
        Bound::Latency
    };
    let mut assumptions = vec![
        format!(
            "list-scheduled against {} SP / {} DPU / {} SFU / {} LSU per SM; {} wave(s) of {} threads per SM",
            gpu.resources.sp, gpu.resources.dpu, gpu.resources.sfu, gpu.resources.lsu, k.waves, k.threads_per_wave
        ),
        "longest CFG path; every branch assumed taken by some thread of every warp (Alavani 2023 §4.4.1)".to_string(),
    ];
    if gpu.measured_latencies {
        // Where the column came from: the citation of its first row in the GPU's data
        // (e.g. "seed004 Table 3.2 (Tesla V100 addf ...)"), or the paper preset's id.
        let source = gpu_params.spec.as_ref().and_then(|g| g.sources.get("instr_latency_cycles.addf")).cloned().unwrap_or_else(|| gpu_params.id.clone());
        assumptions.push(format!("instruction latencies: Alavani 2023 Table 3.2 ({source})"));
    } else {
        assumptions.push("instruction latencies estimated from the GPU's ALU/shared latencies (not measured by Alavani 2023)".to_string());
    }
    if gpu.global_latency_k20_model {
        let threads = launch.blocks.saturating_mul(tpb);
        let end = gpu.global_latency_table_end;
        let held = if threads as f64 > end { format!(" (beyond the table's {end:.0} threads: its value at the end)") } else { String::new() };
        assumptions.push(format!("global latency {global_latency:.0} cycles from Alavani 2023 Table 3.3 at {threads} threads{held}"));
    } else {
        assumptions.push(format!(
            "global latency {global_latency:.0} cycles (the GPU's DRAM latency; no Table 3.3 model)"
        ));
    }
    if gpu.launch_overhead.is_none() {
        assumptions
            .push("launch overhead: the K20's fit (Alavani 2023 §3.4) used as an estimate".to_string());
    }
    if gpu.tp_global.is_none() {
        assumptions.push(
            "global penalty: global traffic at peak bandwidth, substituting for a Table 4.5 fit"
                .to_string(),
        );
    }
    assumptions.push(
        "Table 4.5 throughputs read as MB/s; penalties in µs (the thesis gives no units)"
            .to_string(),
    );
    assumptions.extend(gpu_params.provenance.iter().cloned());
    let explanation = format!(
        "list schedule of the longest path: {:.0} cycles over {} wave(s) ({sched_us:.2} µs), plus {:.2} µs launch overhead and {mem:.2} µs memory penalties",
        k.d_kernel, k.waves, p.launch_overhead_us
    );
    let calibrated = gpu.measured_latencies && gpu.tp_global.is_some();
    Some(Prediction {
        model: "scheduling",
        time_us,
        breakdown,
        bound,
        confidence: if calibrated {
            Confidence::Medium
        } else {
            Confidence::Low
        },
        assumptions,
        explanation,
        mwp: None,
        cwp: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RES: SmResources = SmResources {
        sp: 64,
        dpu: 32,
        sfu: 16,
        lsu: 32,
        misc: 128,
    };

    /// xorshift64: deterministic test graphs without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    fn scan(nodes: &[SchedNode], ntw: u64, steps: &mut u64) -> BlockSchedule {
        let order = toposort(nodes.len(), |v| nodes[v].deps.iter().copied()).expect("acyclic");
        let duration = nodes
            .iter()
            .map(|v| v.latency + L_PIPELINE * (batches(ntw, RES.count(v.resource)) - 1.0))
            .collect();
        schedule_block_scan(nodes, order, duration, steps)
    }

    #[test]
    fn the_gap_table_schedules_exactly_as_the_interval_scan() {
        let resources = [
            Resource::Sp,
            Resource::Dpu,
            Resource::Sfu,
            Resource::Lsu,
            Resource::Misc,
        ];
        // Table 3.2-like latencies, a fractional one (the K20 global-latency model) and
        // one that differs from another only after many additions.
        let latencies = [2.0, 9.0, 9.5, 18.0, 33.0, 315.0, 0.1, 441.37];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..400 {
            let n = 1 + rng.below(if case % 10 == 0 { 600 } else { 60 }) as usize;
            let nodes: Vec<SchedNode> = (0..n)
                .map(|v| SchedNode {
                    resource: resources[rng.below(5) as usize],
                    latency: latencies[rng.below(latencies.len() as u64) as usize],
                    deps: (0..rng.below(4))
                        .filter(|_| v > 0)
                        .map(|_| rng.below(v as u64) as usize)
                        .collect(),
                })
                .collect();
            let ntw = [1, 32, 100, 256, 2048][rng.below(5) as usize];
            let want = scan(&nodes, ntw, &mut 0);
            let gaps =
                schedule_block_gaps(&nodes, want.order.clone(), want.duration.clone(), &mut 0);
            assert_eq!(gaps, want, "case {case}: {nodes:?}");
            assert_eq!(schedule_block(&nodes, &RES, ntw), Some(want), "case {case}");
        }
    }

    #[test]
    fn degenerate_latencies_take_the_scan() {
        let nodes = vec![
            SchedNode {
                resource: Resource::Sp,
                latency: 0.0,
                deps: vec![],
            },
            SchedNode {
                resource: Resource::Sp,
                latency: 5.0,
                deps: vec![],
            },
            SchedNode {
                resource: Resource::Sp,
                latency: 0.0,
                deps: vec![1],
            },
        ];
        // ntw = 1: durations are the bare latencies, two of them zero.
        let want = scan(&nodes, 1, &mut 0);
        let gaps = schedule_block_gaps(&nodes, want.order.clone(), want.duration.clone(), &mut 0);
        assert_eq!(gaps, want);
    }

    /// A straight-line block like the body of a fully unrolled loop: per element a load
    /// from a base address, arithmetic on it and an accumulator, and a store. Each load is
    /// ready at once, so the interval scan walked every earlier reservation of the LSU.
    fn unrolled(sections: usize) -> Vec<SchedNode> {
        let node = |resource, latency, deps: Vec<usize>| SchedNode {
            resource,
            latency,
            deps,
        };
        let mut nodes = vec![node(Resource::Misc, 10.0, vec![])];
        let mut acc = 0;
        for _ in 0..sections {
            let base = nodes.len();
            nodes.push(node(Resource::Lsu, 315.0, vec![0]));
            nodes.push(node(Resource::Sp, 9.0, vec![base, acc]));
            nodes.push(node(Resource::Sp, 9.0, vec![base + 1]));
            nodes.push(node(Resource::Sp, 9.0, vec![base + 2, base]));
            nodes.push(node(Resource::Lsu, 315.0, vec![base + 3]));
            acc = base + 3;
        }
        nodes
    }

    #[test]
    fn scheduling_a_block_is_linear_in_its_length() {
        let steps = |sections: usize| {
            let mut steps = 0;
            schedule_block_counted(&unrolled(sections), &RES, 256, &mut steps).expect("acyclic");
            steps
        };
        let (one, two) = (steps(2000), steps(4000));
        assert!(
            two as f64 <= 2.2 * one as f64,
            "reservation-table work grows faster than the block: {one} steps for 10k nodes, {two} for 20k"
        );
        // The scan this replaced is quadratic on the same blocks (what made a 168k-
        // instruction kernel take 20 s): the measure tells the two apart.
        let scan_steps = |sections: usize| {
            let mut steps = 0;
            scan(&unrolled(sections), 256, &mut steps);
            steps
        };
        let (one, two) = (scan_steps(500), scan_steps(1000));
        assert!(two as f64 > 3.5 * one as f64, "scan: {one} then {two}");
    }
}
