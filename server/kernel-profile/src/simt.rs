//! Warp-by-warp simulation of a kernel's control flow, for block executions and loop trip
//! counts that depend on the thread.
//!
//! The loops of tiled kernels start at the thread's index and stride by the block size
//! (`for (i = threadIdx.y; i < rows; i += blockDim.y)`): their trip count differs between
//! threads, nvcc turns them into a chain of remainder copies before an unrolled-by-4 loop
//! whose counter's start depends on the path taken, and bounds checks switch off parts of
//! the last blocks. When every branch condition follows from the thread and block indices,
//! the launch dimensions and the supplied arguments, the control flow of each warp can
//! simply be run: this module interprets the integer instructions that branch conditions
//! depend on (their backward slice; nothing else is evaluated), lane by lane, with the
//! semantics of [`IntOp`].
//!
//! A warp runs as the SIMT stack runs it: when its lanes disagree at a branch, the two
//! groups run one after the other and meet again at the branch's immediate post-dominator
//! (the reconvergence rule of Fung, Sham, Yuan and Aamodt, "Dynamic Warp Formation and
//! Scheduling for Efficient GPU Control Flow", MICRO 2007, §3; CUDA C++ Programming Guide,
//! "SIMT Architecture": "If threads of a warp diverge via a data-dependent conditional
//! branch, the warp executes each branch path taken"). Volta's independent thread
//! scheduling may interleave the two groups, but each still issues its own path, so the
//! count is the same for code that reconverges. A block's executions by a warp are the
//! times the warp issues it, whatever the number of active lanes: that is what costs issue
//! slots. Lanes are counted too, for per-thread trip counts.
//!
//! Every warp of a few blocks is simulated: all blocks when the grid has few; otherwise the
//! first and the last block of each grid dimension (where halos and bounds checks differ
//! from the rest) and evenly spaced ones between, each weighted by the blocks it stands
//! for. A block in the middle of the grid runs first, to size the sample to the step
//! budget. A value loaded from memory, an argument nobody supplied, a shuffle or an
//! indirect branch in a branch condition ends the simulation with the reason, and the
//! caller falls back to the static rules; so does a run longer than the budget.
//!
//! Long loops do not have to run to the end: a warp whose loop repeats the same iteration
//! (the same path, every value of the slice stepping by the same amount, the operands of
//! every comparison too) is moved ahead to the last iteration before a comparison can
//! change its outcome, its counts advanced by the iterations skipped, and runs the rest
//! ([`Sim::fast_forward`]). A thread's loop of 2^25 iterations fits the step budget, with
//! the same counts (a test checks them against running every iteration over the fixture
//! kernels).

use std::collections::HashMap;

use ptx_ir::ir::{AddrBase, BlockId, Dim, Function, InstrId, LoopId, Operand, RegId, SpecialReg, VarSpace};

use crate::affine::Env;
use crate::concrete::IntOp;

/// Lane-instruction evaluations allowed for one simulation (uniform values count once per
/// warp): a few tenths of a second at most in a debug build.
pub const DEFAULT_BUDGET: u64 = 4_000_000;

/// Header executions of a loop's entry after which the simulation tries to fast-forward it
/// ([`Sim::fast_forward`]): the first iterations, where nvcc's peeled and remainder copies
/// and the first tiles differ, always run. After a jump it tries again two iterations
/// later (past the iteration that stopped the jump: a loop whose every 32nd iteration
/// differs jumps from one to the next); after an attempt that skipped nothing, once the
/// entry has run twice as many.
const FAST_FORWARD_AFTER: u64 = 8;

/// The most iterations one fast-forward skips where no comparison bounds it (more than any
/// loop a kernel runs).
const FAST_FORWARD_MAX: i64 = 1 << 40;

/// The most threads a block can have on any compute capability (CUDA C++ Programming
/// Guide, "Compute Capabilities", technical specifications: maximum number of threads per
/// block).
const MAX_THREADS_PER_BLOCK: u64 = 1024;

/// Sampled blocks per grid dimension when one dimension varies, two, or three.
const SAMPLES_1D: u64 = 16;
const SAMPLES_2D: u64 = 4;
const SAMPLES_3D: u64 = 3;

/// The result of a successful simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulated {
    /// Per basic block: executions per warp (a warp executes a block when any of its lanes
    /// does), averaged over the warps of the simulated blocks, each block weighted by the
    /// blocks it stands for.
    pub warp_executions: Vec<f64>,
    /// Per basic block: executions of the busiest warp of each simulated block (the one
    /// that runs the most instructions), averaged over the simulated blocks as
    /// [`Simulated::warp_executions`] is. A block's time is its slowest warp's: a lone warp
    /// that loops over a row while its seven neighbours return runs eight times the
    /// average warp's iterations.
    pub busiest_warp_executions: Vec<f64>,
    /// Per basic block: executions per thread, averaged over the threads.
    pub thread_executions: Vec<f64>,
    /// Per basic block: the mean fraction of a warp's lanes active when it runs the block
    /// (`None` for a block no warp runs).
    pub active_lane_fraction: Vec<Option<f64>>,
    /// Per basic block: the share of a block's threads that run it at least once (a loop
    /// under `if (row < m)` with 32 of 256 rows in range: 1/8).
    pub thread_reach: Vec<f64>,
    /// Per loop of the function.
    pub loops: Vec<LoopTrips>,
    /// Blocks simulated, and blocks in the grid.
    pub blocks_simulated: u64,
    pub grid_blocks: u64,
    /// Per shared-memory access (by instruction id) whose address every active lane's
    /// evaluation gave: its bank conflicts over the warps' executions, counted on the lanes
    /// active at each one.
    pub shared_ways: HashMap<InstrId, SharedWays>,
    /// Loop iterations of the simulated warps that were not run but counted as repeats of
    /// the one before ([`Sim::fast_forward`]).
    pub iterations_fast_forwarded: u64,
}

/// The bank conflicts a shared-memory access had in the simulation: the ways of each warp
/// execution (1 = conflict-free, for the access's word size), computed from the addresses of
/// the lanes active at it (`access::bank_conflict_ways`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SharedWays {
    /// Mean over the warp executions, each sampled block weighted by the blocks it stands for.
    pub mean: f64,
    /// The most seen at one execution.
    pub max: u32,
}

/// How often threads ran one loop.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopTrips {
    /// Header executions per entry into the loop, averaged over the entries of all threads
    /// (`None` when no thread entered it).
    pub per_entry: Option<f64>,
    /// Entries per thread.
    pub entries_per_thread: f64,
    /// Header executions per entry of a warp (a warp runs the loop as long as any of its
    /// lanes does), averaged over the warps' entries.
    pub warp_per_entry: Option<f64>,
    /// The fewest and most header executions of one entry.
    pub min: u64,
    pub max: u64,
}

/// The instructions whose results branch conditions (and the registers in `seeds`) depend
/// on (their backward slice over the def-use chains), by instruction id.
fn control_slice(func: &Function, seeds: &[RegId]) -> Vec<bool> {
    let mut in_slice = vec![false; func.instrs.len()];
    let mut seen = vec![false; func.registers.len()];
    let mut work: Vec<RegId> = seeds.to_vec();
    for instr in &func.instrs {
        if matches!(instr.base(), "bra" | "ret" | "exit")
            && let Some(g) = instr.guard
        {
            work.push(g.reg);
        }
    }
    while let Some(r) = work.pop() {
        if std::mem::replace(&mut seen[r as usize], true) {
            continue;
        }
        for &d in func.defs_of(r) {
            if std::mem::replace(&mut in_slice[d as usize], true) {
                continue;
            }
            if let Some(instr) = func.instr(d) {
                work.extend(func.srcs(instr).iter().copied().filter(|s| !seen[*s as usize]));
            }
            // A forwarded local load's value is the register its one store wrote.
            if let Some(Operand::Reg(s)) = func.forwarded_local(d) {
                work.push(*s);
            }
        }
    }
    in_slice
}

/// Blocks that leave the function (a `ret`/`exit`/`trap`, guarded or not, or no
/// successor).
fn exits(func: &Function, b: usize) -> bool {
    let blk = &func.blocks[b];
    blk.succs.is_empty() || blk.terminator().and_then(|t| func.instr(t)).is_some_and(|t| matches!(t.base(), "ret" | "exit" | "trap"))
}

/// Immediate post-dominators (`None`: the virtual exit), by the algorithm of Cooper,
/// Harvey and Kennedy ("A Simple, Fast Dominance Algorithm", 2001) on the reversed CFG
/// with a virtual exit node after every exiting block.
fn immediate_post_dominators(func: &Function) -> Vec<Option<BlockId>> {
    const UNDEF: usize = usize::MAX;
    let n = func.blocks.len();
    let exit = n;
    // Reverse-graph successors of a node: the CFG predecessors (for the exit: the exiting
    // blocks).
    let exiting: Vec<usize> = (0..n).filter(|&b| func.blocks[b].reachable && exits(func, b)).collect();
    let rsuccs = |v: usize| -> Vec<usize> {
        if v == exit { exiting.clone() } else { func.blocks[v].preds.iter().map(|&p| p as usize).collect() }
    };
    // Reverse-graph predecessors: the CFG successors (plus the exit for exiting blocks).
    let rpreds = |v: usize| -> Vec<usize> {
        let mut p: Vec<usize> = func.blocks[v].succs.iter().map(|&s| s as usize).collect();
        if exits(func, v) {
            p.push(exit);
        }
        p
    };
    let mut po = vec![UNDEF; n + 1];
    let mut order: Vec<usize> = Vec::with_capacity(n + 1);
    let mut visited = vec![false; n + 1];
    let mut stack: Vec<(usize, Vec<usize>, usize)> = vec![(exit, rsuccs(exit), 0)];
    visited[exit] = true;
    while let Some((v, succs, next)) = stack.last_mut() {
        if let Some(&s) = succs.get(*next) {
            *next += 1;
            if !visited[s] {
                visited[s] = true;
                let ss = rsuccs(s);
                stack.push((s, ss, 0));
            }
        } else {
            po[*v] = order.len();
            order.push(*v);
            stack.pop();
        }
    }
    let mut idom = vec![UNDEF; n + 1];
    idom[exit] = exit;
    let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while po[a] < po[b] {
                a = idom[a];
            }
            while po[b] < po[a] {
                b = idom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in order.iter().rev().skip(1) {
            let mut new = UNDEF;
            for p in rpreds(v) {
                if idom[p] == UNDEF {
                    continue;
                }
                new = if new == UNDEF { p } else { intersect(&idom, p, new) };
            }
            if new != UNDEF && idom[v] != new {
                idom[v] = new;
                changed = true;
            }
        }
    }
    (0..n).map(|b| (idom[b] != UNDEF && idom[b] != exit).then_some(idom[b] as BlockId)).collect()
}

/// Samples per grid dimension before the budget is considered: 16 when one dimension
/// varies, 4 when two do, 3 when three do.
pub(crate) fn samples_per_dimension(grid: [u64; 3]) -> u64 {
    match grid.iter().filter(|g| **g > 1).count() {
        0 | 1 => SAMPLES_1D,
        2 => SAMPLES_2D,
        _ => SAMPLES_3D,
    }
}

/// The sampled indices of one grid dimension of `g` blocks and their integer weights:
/// every block when there are at most `k`; otherwise the first and the last (where
/// bounds checks and halos differ from the rest), each weighing one block, and `k - 2`
/// evenly spaced among the others, each standing for `(g - 2) / (k - 2)` blocks. In
/// integers: weights `k - 2` and `g - 2`, summing to `(k - 2)·g`.
pub(crate) fn samples(g: u64, k: u64) -> Vec<(u64, u64)> {
    let g = g.max(1);
    if g <= k {
        return (0..g).map(|i| (i, 1)).collect();
    }
    let k = k.max(3);
    let inner = k - 2;
    let mut res = vec![(0, inner)];
    // Interior samples at the middles of `inner` equal slices of 1..g-1.
    res.extend((0..inner).map(|j| (1 + (2 * j + 1) * (g - 2) / (2 * inner), g - 2)));
    res.push((g - 1, inner));
    res
}

/// The value of one register slot in a warp.
#[derive(Clone)]
struct Slot {
    /// The same value in every lane (`v[0]`).
    uniform: bool,
    /// Lanes whose value is known.
    known: u32,
    v: [i64; 32],
}

impl Slot {
    fn unknown() -> Slot {
        Slot { uniform: true, known: 0, v: [0; 32] }
    }
    fn get(&self, lane: usize) -> Option<i64> {
        if self.uniform {
            (self.known != 0).then_some(self.v[0])
        } else {
            (self.known & (1 << lane) != 0).then_some(self.v[lane])
        }
    }
    /// Makes every lane carry its own copy.
    fn split(&mut self) {
        if self.uniform {
            let (v0, k) = (self.v[0], self.known);
            self.v = [v0; 32];
            self.known = if k != 0 { u32::MAX } else { 0 };
            self.uniform = false;
        }
    }
    fn set(&mut self, lane: usize, v: Option<i64>) {
        self.split();
        match v {
            Some(x) => {
                self.v[lane] = x;
                self.known |= 1 << lane;
            }
            None => self.known &= !(1 << lane),
        }
    }
    fn set_uniform(&mut self, v: Option<i64>) {
        self.uniform = true;
        self.known = if v.is_some() { u32::MAX } else { 0 };
        self.v[0] = v.unwrap_or(0);
    }
}

/// Where an operand's value comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Src {
    Slot(u32),
    Imm(i64),
    Tid(usize),
    Ctaid(usize),
    /// A launch dimension (`%ntid`, `%nctaid`): a constant.
    Launch(i64),
    Lane,
    Unknown,
}

impl Src {
    fn of(func: &Function, op: &Operand, slot_of: &[u32], env: &Env<'_>, shared: &[&str]) -> (Src, bool) {
        let idx = |d: Dim| match d {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        };
        match op {
            Operand::Reg(r) | Operand::NegReg(r) => {
                let negate = matches!(op, Operand::NegReg(_));
                let src = match func.register(*r).and_then(|reg| reg.special) {
                    Some(SpecialReg::Tid(d)) => Src::Tid(idx(d)),
                    Some(SpecialReg::Ctaid(d)) => Src::Ctaid(idx(d)),
                    Some(SpecialReg::Ntid(d)) => Src::Launch(i64::from(env.block[idx(d)])),
                    Some(SpecialReg::Nctaid(d)) => Src::Launch(i64::from(env.grid[idx(d)])),
                    Some(SpecialReg::LaneId) => Src::Lane,
                    Some(_) => Src::Unknown,
                    None => match slot_of.get(*r as usize) {
                        Some(&s) if s != u32::MAX => Src::Slot(s),
                        _ => Src::Unknown,
                    },
                };
                (src, negate)
            }
            Operand::Imm(v) => (Src::Imm(*v), false),
            Operand::Symbol(s) if &**s == "WARP_SZ" => (Src::Imm(32), false),
            // A shared variable's address: its own base is aligned, and only the offsets
            // from it decide the banks (as `build::address_of` takes it).
            Operand::Symbol(s) if shared.contains(&&**s) => (Src::Imm(0), false),
            _ => (Src::Unknown, false),
        }
    }

    /// `true` when the value cannot differ between the lanes of a warp by nature.
    fn lane_invariant(self) -> bool {
        !matches!(self, Src::Tid(_) | Src::Lane)
    }
}

/// One instruction of the control slice, decoded.
struct Prog {
    op: IntOp,
    /// Operands 1.. (the sources), with their negation (`!%p`).
    srcs: Vec<(Src, bool)>,
    /// The destination, and the second one of a `setp p|q` (the negation).
    dst: Option<u32>,
    dst2: Option<u32>,
    /// Other registers written (vector destinations): unknown afterwards.
    clobber: Vec<u32>,
    guard: Option<(Src, bool)>,
}

/// A shared-memory access whose lanes' addresses are recorded (`base + offset`, `bytes`
/// per lane), decoded.
struct Probe {
    instr: InstrId,
    base: Src,
    offset: i64,
    bytes: i64,
}

/// One step of a block: an instruction of the slice, or a shared-memory access to record.
enum Step {
    Exec(Prog),
    Probe(Probe),
}

/// How a block ends, decoded.
enum Term {
    /// Falls through to the block (or leaves the function).
    Fall(Option<BlockId>),
    /// `[@p] bra target`; lanes whose guard fails go to `fall`.
    Bra { target: BlockId, fall: Option<BlockId>, guard: Option<(Src, bool, u32)> },
    /// `[@p] ret`/`exit`/`trap`: lanes whose guard holds leave.
    Leave { fall: Option<BlockId>, guard: Option<(Src, bool, u32)> },
    /// An indirect branch, or a branch whose target was not resolved: not followed.
    Unsupported(String),
}

/// A control-flow edge (`to`: `None` for the exit) and the loops it enters and leaves.
type Edge = (Option<BlockId>, Vec<LoopId>, Vec<LoopId>);

/// One SIMT stack entry.
#[derive(Clone, PartialEq, Hash)]
struct Entry {
    pc: Option<BlockId>,
    mask: u32,
    /// Where the entry's lanes wait for the others (`None`: the function's exit).
    rpc: Option<BlockId>,
}

/// Per-block counts of one simulated block, and of the loops.
#[derive(Clone)]
struct Counts {
    warp_execs: Vec<u64>,
    lane_execs: Vec<u64>,
    loop_entries: Vec<u64>,
    loop_warp_entries: Vec<u64>,
    loop_header_lanes: Vec<u64>,
    loop_min: Vec<u64>,
    loop_max: Vec<u64>,
    /// Per basic block: the threads of the block being simulated that ran it at least once.
    reached_threads: Vec<u64>,
    /// Per probe (by instruction id) of the block being simulated: Σ ways and executions
    /// with every active lane's address known, and the most ways.
    probes: HashMap<InstrId, (u64, u64, u32)>,
}

impl Counts {
    /// The counters that add up (all but the loops' fewest and most trips and the most
    /// ways), `self` minus `before`; `None` when one went down.
    fn delta(&self, before: &Counts) -> Option<Vec<u64>> {
        let mut d = Vec::new();
        for (a, b) in [
            (&self.warp_execs, &before.warp_execs),
            (&self.lane_execs, &before.lane_execs),
            (&self.loop_entries, &before.loop_entries),
            (&self.loop_warp_entries, &before.loop_warp_entries),
            (&self.loop_header_lanes, &before.loop_header_lanes),
        ] {
            for (x, y) in a.iter().zip(b) {
                d.push(x.checked_sub(*y)?);
            }
        }
        let mut ids: Vec<&InstrId> = self.probes.keys().collect();
        ids.sort_unstable();
        for id in ids {
            let (s, e, _) = self.probes[id];
            let (s0, e0, _) = before.probes.get(id).copied().unwrap_or((0, 0, 1));
            d.extend([u64::from(*id), s.checked_sub(s0)?, e.checked_sub(e0)?]);
        }
        Some(d)
    }

    /// Adds `k` times `delta` (from [`Counts::delta`] against a state with the same probes).
    fn add(&mut self, delta: &[u64], k: u64) {
        let mut it = delta.iter();
        for v in [&mut self.warp_execs, &mut self.lane_execs, &mut self.loop_entries, &mut self.loop_warp_entries, &mut self.loop_header_lanes] {
            for x in v.iter_mut() {
                *x = x.saturating_add(it.next().copied().unwrap_or(0).saturating_mul(k));
            }
        }
        while let (Some(&id), Some(&ds), Some(&de)) = (it.next(), it.next(), it.next()) {
            let e = self.probes.entry(id as InstrId).or_insert((0, 0, 1));
            e.0 = e.0.saturating_add(ds.saturating_mul(k));
            e.1 = e.1.saturating_add(de.saturating_mul(k));
        }
    }
}

/// One warp's state while it runs: its SIMT stack, the lanes that have not left, the
/// values of the control slice's registers and each loop's header executions per lane in
/// the current entry.
#[derive(Clone)]
struct WarpState {
    stack: Vec<Entry>,
    alive: u32,
    slots: Vec<Slot>,
    trips: Vec<[u64; 32]>,
    /// Per loop: the header executions of the current entry at which to try the next
    /// fast-forward ([`FAST_FORWARD_AFTER`]); not part of what the warp computes.
    next_try: Vec<u64>,
    /// Per basic block: the lanes that have run it (repeated iterations add none, so a
    /// fast-forward leaves it as the iterations it ran left it).
    reached: Vec<u32>,
}

impl WarpState {
    /// How every slot value and trip count of lanes `0..lanes` changed from `before` to
    /// `self` (per slot and lane, then per loop and lane); `None` when the stack or the
    /// live lanes differ, or a value became known or unknown.
    fn delta(&self, before: &WarpState, lanes: usize) -> Option<Vec<i64>> {
        if self.stack != before.stack || self.alive != before.alive {
            return None;
        }
        let mut d = Vec::with_capacity((self.slots.len() + self.trips.len()) * lanes);
        for (a, b) in self.slots.iter().zip(&before.slots) {
            for lane in 0..lanes {
                d.push(match (a.get(lane), b.get(lane)) {
                    (None, None) => 0,
                    (Some(x), Some(y)) => x.checked_sub(y)?,
                    _ => return None,
                });
            }
        }
        for (a, b) in self.trips.iter().zip(&before.trips) {
            for lane in 0..lanes {
                d.push(i64::try_from(a[lane]).ok()?.checked_sub(i64::try_from(b[lane]).ok()?)?);
            }
        }
        Some(d)
    }

    /// `self` advanced `k` times by `delta` (from [`WarpState::delta`]); `None` on overflow.
    fn advanced(&self, delta: &[i64], k: i64, lanes: usize) -> Option<WarpState> {
        let mut w = self.clone();
        let mut chunks = delta.chunks(lanes.max(1));
        for slot in &mut w.slots {
            let d = chunks.next()?;
            if slot.known == 0 || d.iter().all(|x| *x == 0) {
                continue;
            }
            if slot.uniform && d.iter().all(|x| *x == d[0]) {
                slot.v[0] = slot.v[0].checked_add(d[0].checked_mul(k)?)?;
                continue;
            }
            for (lane, dl) in d.iter().enumerate() {
                if let Some(v) = slot.get(lane) {
                    slot.set(lane, Some(v.checked_add(dl.checked_mul(k)?)?));
                }
            }
        }
        for t in &mut w.trips {
            let d = chunks.next()?;
            for (lane, dl) in d.iter().enumerate() {
                t[lane] = u64::try_from(i64::try_from(t[lane]).ok()?.checked_add(dl.checked_mul(k)?)?).ok()?;
            }
        }
        Some(w)
    }
}

/// How a warp's run from a loop header went when run for one iteration
/// ([`Sim::run`] with a stop).
enum Ran {
    /// Back at the header with the SIMT stack as deep as at the start, having run the path
    /// whose hash is given, with the operands of the comparisons it made (two per lane of
    /// each `setp`, in order).
    Back(u64, Vec<i64>),
    /// Anything else: the loop left, a branch diverged, lanes exited.
    Other,
}

struct Sim {
    progs: Vec<Vec<Step>>,
    terms: Vec<Term>,
    ipdom: Vec<Option<BlockId>>,
    /// Per block and successor (`None`: the exit), the loops entered and left.
    edges: Vec<Vec<Edge>>,
    /// Loop headed by each block.
    header_of: Vec<Option<LoopId>>,
    /// Loops entered on the way into block 0.
    entry_loops: Vec<LoopId>,
    args: Vec<Option<i64>>,
    budget: u64,
    steps: u64,
    /// Whether loops are fast-forwarded ([`Sim::fast_forward`]), and the iterations skipped.
    fast_forward: bool,
    skipped: u64,
}

/// The first `i >= 1` at which `f + i·df` is zero or has the other sign than `f` (`None`
/// when it never does).
fn first_sign_change(f: i128, df: i128) -> Option<i128> {
    match (f.signum(), df.signum()) {
        (_, 0) => None,
        (0, _) => Some(1),
        (1, -1) => Some((f + (-df) - 1) / (-df)).map(|i| i.max(1)),
        (-1, 1) => Some((-f + df - 1) / df).map(|i| i.max(1)),
        _ => None,
    }
}

/// The lanes of a mask, lowest first.
fn lanes_of(mask: u32) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(l)
    })
}

impl Sim {
    fn read(src: Src, negate: bool, lane: usize, tids: &[[i64; 3]], ctaid: [i64; 3], slots: &[Slot]) -> Option<i64> {
        let v = match src {
            Src::Slot(s) => slots[s as usize].get(lane)?,
            Src::Imm(v) | Src::Launch(v) => v,
            Src::Tid(d) => tids.get(lane)?[d],
            Src::Ctaid(d) => ctaid[d],
            Src::Lane => lane as i64,
            Src::Unknown => return None,
        };
        Some(if negate { i64::from(v == 0) } else { v })
    }

    fn uniform(src: Src, slots: &[Slot]) -> bool {
        match src {
            Src::Slot(s) => slots[s as usize].uniform,
            other => other.lane_invariant(),
        }
    }

    fn charge(&mut self, n: u64) -> Result<(), String> {
        self.steps += n;
        if self.steps > self.budget {
            return Err(format!("the control flow takes more than {} steps to simulate", self.budget));
        }
        Ok(())
    }

    /// Executes one decoded instruction for the lanes in `mask`.
    fn exec(&mut self, p: &Prog, mask: u32, full: u32, tids: &[[i64; 3]], ctaid: [i64; 3], slots: &mut [Slot]) -> Result<(), String> {
        let uniform = mask == full && p.srcs.iter().all(|(s, _)| Self::uniform(*s, slots)) && p.guard.is_none_or(|(g, _)| Self::uniform(g, slots));
        self.charge(if uniform { 1 } else { u64::from(mask.count_ones()) })?;
        let args = &self.args;
        let param = |i: u32| args.get(i as usize).copied().flatten();
        let param = &param;
        let eval = |lane: usize, slots: &[Slot]| -> (bool, Option<i64>) {
            // A guarded definition happens only where its guard holds (unknown guard:
            // unknown result).
            if let Some((g, neg)) = p.guard {
                match Self::read(g, false, lane, tids, ctaid, slots) {
                    Some(v) if ((v != 0) ^ neg) => {}
                    Some(_) => return (false, None),
                    None => return (true, None),
                }
            }
            let mut vals = [None; 4];
            for (k, (s, n)) in p.srcs.iter().take(4).enumerate() {
                vals[k] = Self::read(*s, *n, lane, tids, ctaid, slots);
            }
            let v = p.op.eval(|i| vals.get(i.checked_sub(1)?).copied().flatten(), param);
            (true, v)
        };
        let write = |slots: &mut [Slot], lane: Option<usize>, v: Option<i64>| {
            let second = if p.op.combines() { None } else { v.map(|x| i64::from(x == 0)) };
            for (slot, val) in [(p.dst, v), (p.dst2, second)] {
                if let Some(s) = slot {
                    match lane {
                        None => slots[s as usize].set_uniform(val),
                        Some(l) => slots[s as usize].set(l, val),
                    }
                }
            }
            for &s in &p.clobber {
                match lane {
                    None => slots[s as usize].set_uniform(None),
                    Some(l) => slots[s as usize].set(l, None),
                }
            }
        };
        if uniform {
            if let (true, v) = eval(0, slots) {
                write(slots, None, v);
            }
        } else {
            // Lanes read only their own values, so updating in place is safe.
            for lane in lanes_of(mask) {
                if let (true, v) = eval(lane, slots) {
                    write(slots, Some(lane), v);
                }
            }
        }
        Ok(())
    }

    /// Lanes moving along the edge `from → to`: entries into and exits from loops.
    fn edge(&self, from: BlockId, to: Option<BlockId>, lanes: u32, trips: &mut [[u64; 32]], c: &mut Counts) {
        let Some((_, enter, leave)) = self.edges[from as usize].iter().find(|(t, _, _)| *t == to) else { return };
        for &l in leave {
            for lane in lanes_of(lanes) {
                let t = &mut trips[l as usize][lane];
                c.loop_min[l as usize] = c.loop_min[l as usize].min(*t);
                c.loop_max[l as usize] = c.loop_max[l as usize].max(*t);
                *t = 0;
            }
        }
        for &l in enter {
            c.loop_entries[l as usize] += u64::from(lanes.count_ones());
            c.loop_warp_entries[l as usize] += u64::from(lanes != 0);
            for lane in lanes_of(lanes) {
                trips[l as usize][lane] = 0;
            }
        }
    }

    /// Runs one warp of a block; `tids[l]` is lane `l`'s thread index.
    fn run_warp(&mut self, tids: &[[i64; 3]], ctaid: [i64; 3], w: &mut WarpState, c: &mut Counts) -> Result<(), String> {
        let full: u32 = if tids.len() >= 32 { u32::MAX } else { (1u32 << tids.len()) - 1 };
        for s in w.slots.iter_mut() {
            *s = Slot::unknown();
        }
        for t in w.trips.iter_mut() {
            *t = [0; 32];
        }
        w.next_try.fill(FAST_FORWARD_AFTER);
        w.reached.fill(0);
        for &l in &self.entry_loops {
            c.loop_entries[l as usize] += u64::from(full.count_ones());
            c.loop_warp_entries[l as usize] += 1;
        }
        w.stack = vec![Entry { pc: Some(0), mask: full, rpc: None }];
        w.alive = full;
        let progs = std::mem::take(&mut self.progs);
        let res = self.run(&progs, tids, ctaid, full, w, c, None).map(|_| ());
        self.progs = progs;
        for (t, m) in c.reached_threads.iter_mut().zip(&w.reached) {
            *t += u64::from(m.count_ones());
        }
        res
    }

    /// Runs a warp from its state `w` until its SIMT stack empties; with `stop = Some(h)`,
    /// `w` being at loop header `h`, only until the warp is back at `h` with its stack as
    /// deep as at the start (one iteration: [`Ran::Back`] with the hash of the path run),
    /// or has left the loop, or reached `h` at another depth ([`Ran::Other`]). Loops that
    /// repeat the same iteration are fast-forwarded ([`Sim::fast_forward`]), except `h`.
    #[allow(clippy::too_many_arguments)]
    fn run(&mut self, progs: &[Vec<Step>], tids: &[[i64; 3]], ctaid: [i64; 3], full: u32, w: &mut WarpState, c: &mut Counts, stop: Option<BlockId>) -> Result<Ran, String> {
        let depth = w.stack.len();
        let mut path = std::hash::DefaultHasher::new();
        let mut cmps = Vec::new();
        let mut first = true;
        while let Some(top) = w.stack.last() {
            let (pc, rpc) = (top.pc, top.rpc);
            let mask = top.mask & w.alive;
            if stop.is_some() && w.stack.len() < depth {
                return Ok(Ran::Other);
            }
            let Some(b) = pc else {
                w.stack.pop();
                continue;
            };
            if pc == rpc || mask == 0 {
                w.stack.pop();
                continue;
            }
            if let Some(h) = stop
                && b == h
                && !first
            {
                return Ok(if w.stack.len() == depth { Ran::Back(std::hash::Hasher::finish(&path), cmps) } else { Ran::Other });
            }
            if let Some(l) = self.header_of[b as usize]
                && self.fast_forward
                && stop != Some(b)
            {
                let lane = mask.trailing_zeros() as usize;
                let t = w.trips[l as usize][lane];
                if t < FAST_FORWARD_AFTER {
                    // A new entry.
                    w.next_try[l as usize] = FAST_FORWARD_AFTER;
                } else if t >= w.next_try[l as usize] {
                    let jumped = self.fast_forward(progs, tids, ctaid, full, b, w, c)?;
                    w.next_try[l as usize] = if jumped { w.trips[l as usize][lane] + 2 } else { 2 * t };
                    // The warp is elsewhere now.
                    continue;
                }
            }
            first = false;
            if stop.is_some() {
                std::hash::Hash::hash(&(b, mask, w.stack.len()), &mut path);
            }
            self.charge(1)?;
            c.warp_execs[b as usize] += 1;
            c.lane_execs[b as usize] += u64::from(mask.count_ones());
            w.reached[b as usize] |= mask;
            if let Some(l) = self.header_of[b as usize] {
                c.loop_header_lanes[l as usize] += u64::from(mask.count_ones());
                for lane in lanes_of(mask) {
                    w.trips[l as usize][lane] += 1;
                }
            }
            for step in &progs[b as usize] {
                match step {
                    Step::Exec(p) => {
                        if stop.is_some() && p.op.compares() {
                            for lane in lanes_of(mask) {
                                for &(src, neg) in p.srcs.iter().take(2) {
                                    cmps.push(Self::read(src, neg, lane, tids, ctaid, &w.slots).unwrap_or(0));
                                }
                            }
                        }
                        self.exec(p, mask, full, tids, ctaid, &mut w.slots)?;
                    }
                    Step::Probe(p) => Self::probe(p, mask, tids, ctaid, &w.slots, c),
                }
            }
            // Where each lane goes next.
            let (taken, target, fall, leave) = match &self.terms[b as usize] {
                Term::Fall(Some(next)) => (0, None, Some(*next), 0),
                Term::Fall(None) => (0, None, None, mask),
                Term::Unsupported(why) => return Err(why.clone()),
                Term::Bra { target, fall, guard } => {
                    let yes = self.holds(*guard, mask, tids, ctaid, &w.slots)?;
                    (yes, Some(*target), *fall, 0)
                }
                Term::Leave { fall, guard } => {
                    let yes = self.holds(*guard, mask, tids, ctaid, &w.slots)?;
                    (0, None, *fall, yes)
                }
            };
            let not_taken = mask & !taken & !leave;
            if leave != 0 {
                self.edge(b, None, leave, &mut w.trips, c);
                w.alive &= !leave;
                for e in &mut w.stack {
                    e.mask &= !leave;
                }
            }
            if taken != 0 {
                self.edge(b, target, taken, &mut w.trips, c);
            }
            if not_taken != 0 {
                self.edge(b, fall, not_taken, &mut w.trips, c);
            }
            let top = w.stack.last_mut().ok_or("empty SIMT stack")?;
            match (taken != 0, not_taken != 0) {
                (true, true) if target != fall => {
                    // Divergence: both groups run, then meet at the immediate
                    // post-dominator.
                    let r = self.ipdom[b as usize];
                    top.pc = r;
                    w.stack.push(Entry { pc: fall, mask: not_taken, rpc: r });
                    w.stack.push(Entry { pc: target, mask: taken, rpc: r });
                }
                (true, _) => top.pc = target,
                (false, true) => top.pc = fall,
                (false, false) => top.pc = None,
            }
        }
        Ok(Ran::Other)
    }

    /// Skips the iterations of the loop headed by `h` (where the warp `w` is) that would
    /// repeat the last one. Two iterations run from here; when they run the same path and
    /// change every slot value, trip count and counter by the same amounts, and the
    /// operands of every comparison they make step by the same amounts too, the state after
    /// `k` iterations is the state now advanced `k` times by those amounts (induction
    /// variables, pointers and counters step linearly), up to the first iteration where a
    /// comparison's operands or their difference would reach or cross zero (where its
    /// outcome can change: a loop's exit test, a bounds check of the last tile, by
    /// `setp.lt` or by `setp.ne` alike). The iteration just before that bound is checked by
    /// running it (from the state advanced that far); if it does not repeat the first (a
    /// value that stops stepping linearly: a remainder or a bit test through a slot the
    /// iteration writes), doubling and then bisection find the last that does. The warp jumps past it, its
    /// counts advanced by the iterations skipped, and runs on from there, so the iteration
    /// that leaves the loop, and any after a change of path, are simulated. When nothing
    /// can be skipped, the two iterations run are kept (they were run as the warp would run
    /// them), so trying costs only the checks.
    ///
    /// What the checks cannot see is a change confined to iterations between the ones run:
    /// a bank-conflict pattern that varies with the iteration (the ways are not a linear
    /// function of the addresses) or a value that leaves its linear course and comes back
    /// to it; such iterations are counted as the first.
    ///
    /// `w` and `c` are then the warp's state at another point of its run; the result says
    /// whether iterations were skipped.
    #[allow(clippy::too_many_arguments)]
    fn fast_forward(&mut self, progs: &[Vec<Step>], tids: &[[i64; 3]], ctaid: [i64; 3], full: u32, h: BlockId, w: &mut WarpState, c: &mut Counts) -> Result<bool, String> {
        let lanes = tids.len();
        // One iteration from `from`: how it ended, the state and the counts after it.
        let once = |sim: &mut Sim, from: &WarpState, counts: &Counts| -> Result<(Ran, WarpState, Counts), String> {
            let (mut w1, mut c1) = (from.clone(), counts.clone());
            let ran = sim.run(progs, tids, ctaid, full, &mut w1, &mut c1, Some(h))?;
            Ok((ran, w1, c1))
        };
        let (ran, w1, c1) = once(self, w, c)?;
        let Ran::Back(path, cmp0) = ran else {
            (*w, *c) = (w1, c1);
            return Ok(false);
        };
        let (ran, w2, c2) = once(self, &w1, &c1)?;
        let (Ran::Back(path2, cmp1), Some(dw), Some(dc)) = (ran, w1.delta(w, lanes), c1.delta(c)) else {
            (*w, *c) = (w2, c2);
            return Ok(false);
        };
        let dcmp = cmp1.iter().zip(&cmp0).map(|(b, a)| b.checked_sub(*a)).collect::<Option<Vec<i64>>>();
        let (Some(dcmp), true) = (dcmp, path2 == path && cmp1.len() == cmp0.len() && w2.delta(&w1, lanes).as_ref() == Some(&dw) && c2.delta(&c1).as_ref() == Some(&dc)) else {
            (*w, *c) = (w2, c2);
            return Ok(false);
        };
        // The first iteration whose comparisons may decide otherwise.
        let mut limit = FAST_FORWARD_MAX;
        for (pair, dpair) in cmp0.chunks_exact(2).zip(dcmp.chunks_exact(2)) {
            let (a, b, da, db) = (i128::from(pair[0]), i128::from(pair[1]), i128::from(dpair[0]), i128::from(dpair[1]));
            for (f, df) in [(a, da), (b, db), (a - b, da - db)] {
                if let Some(i) = first_sign_change(f, df) {
                    limit = limit.min(i64::try_from(i).unwrap_or(i64::MAX));
                }
            }
        }
        // Iteration k (from the state now advanced k times) repeats the first.
        let repeats = |sim: &mut Sim, k: i64| -> Result<bool, String> {
            let Some(wk) = w.advanced(&dw, k, lanes) else { return Ok(false) };
            // A check's run is discarded: what inner loops it fast-forwarded is not counted.
            let skipped = sim.skipped;
            let (ran, wk1, ck1) = once(sim, &wk, c)?;
            sim.skipped = skipped;
            Ok(match ran {
                Ran::Back(p, cmpk) => {
                    p == path
                        && wk1.delta(&wk, lanes).as_ref() == Some(&dw)
                        && ck1.delta(c).as_ref() == Some(&dc)
                        && cmpk.len() == cmp0.len()
                        && cmpk.iter().zip(&cmp0).zip(&dcmp).all(|((x, a), d)| d.checked_mul(k).and_then(|s| a.checked_add(s)) == Some(*x))
                }
                Ran::Other => false,
            })
        };
        // Iterations 0..=good repeat the first (1 was run); iteration `limit` may not.
        let mut good = 1i64;
        let last = limit - 1;
        if last > 2 {
            if repeats(self, last)? {
                good = last;
            } else {
                // Where a value stops stepping linearly: the last iteration that repeats
                // the first is usually near (the next multiple of a remainder's divisor),
                // so it is looked for by doubling from here, then by bisection.
                let mut bad = last;
                while good.saturating_mul(2) < bad {
                    if repeats(self, good * 2)? {
                        good *= 2;
                    } else {
                        bad = good * 2;
                    }
                }
                while bad - good > 1 {
                    let mid = good + (bad - good) / 2;
                    if repeats(self, mid)? {
                        good = mid;
                    } else {
                        bad = mid;
                    }
                }
            }
        }
        let k = good + 1;
        let jumped = if k > 2 { w.advanced(&dw, k, lanes) } else { None };
        Ok(match jumped {
            Some(wk) => {
                *w = wk;
                c.add(&dc, k as u64);
                c.loop_min.clone_from(&c2.loop_min);
                c.loop_max.clone_from(&c2.loop_max);
                self.skipped = self.skipped.saturating_add(k as u64 - 2);
                true
            }
            None => {
                (*w, *c) = (w2, c2);
                false
            }
        })
    }

    /// Records the bank conflicts of one warp execution of a shared-memory access, on the
    /// lanes active at it; nothing when a lane's address is unknown. A request of 8 or 16
    /// bytes per lane is served a half or a quarter warp at a time (Programming Guide, CC 5.x
    /// shared memory): each phase's active lanes are counted apart, and the worst phase is
    /// the request's ways.
    fn probe(p: &Probe, mask: u32, tids: &[[i64; 3]], ctaid: [i64; 3], slots: &[Slot], c: &mut Counts) {
        let lanes_per_phase = (32 / (p.bytes / 4).clamp(1, 4)) as usize;
        let mut ways = 1u32;
        for phase in (0..32).step_by(lanes_per_phase) {
            let mut addrs = Vec::with_capacity(lanes_per_phase);
            for lane in lanes_of(mask).filter(|l| (phase..phase + lanes_per_phase).contains(l)) {
                match Self::read(p.base, false, lane, tids, ctaid, slots) {
                    Some(a) => addrs.push(a.wrapping_add(p.offset)),
                    None => return,
                }
            }
            if !addrs.is_empty() {
                ways = ways.max(crate::access::bank_conflict_ways(&addrs, p.bytes, 32, 0));
            }
        }
        let e = c.probes.entry(p.instr).or_insert((0, 0, 1));
        e.0 += u64::from(ways);
        e.1 += 1;
        e.2 = e.2.max(ways);
    }

    /// The lanes of `mask` whose guard holds (all of them without a guard).
    fn holds(&self, guard: Option<(Src, bool, u32)>, mask: u32, tids: &[[i64; 3]], ctaid: [i64; 3], slots: &[Slot]) -> Result<u32, String> {
        let Some((g, neg, line)) = guard else { return Ok(mask) };
        let mut yes = 0u32;
        for lane in lanes_of(mask) {
            match Self::read(g, false, lane, tids, ctaid, slots) {
                Some(v) if (v != 0) ^ neg => yes |= 1 << lane,
                Some(_) => {}
                None => return Err(format!("the branch at PTX line {line} depends on data or on an argument not supplied")),
            }
        }
        Ok(yes)
    }
}

/// Runs the warps of the sampled blocks; see the module documentation. `probes` names the
/// shared-memory accesses whose bank conflicts to record (`Simulated::shared_ways`), each
/// with the bytes per lane it moves (more than the instruction's own where ptxas merges it
/// with the next loads into one vector load).
pub fn simulate(func: &Function, env: &Env<'_>, budget: u64, probes: &HashMap<InstrId, i64>) -> Result<Simulated, String> {
    simulate_with(func, env, budget, probes, true)
}

/// [`simulate`], with or without fast-forwarding loops (without: every iteration runs).
fn simulate_with(func: &Function, env: &Env<'_>, budget: u64, probes: &HashMap<InstrId, i64>, fast_forward: bool) -> Result<Simulated, String> {
    if func.blocks.is_empty() {
        return Err("the function has no body".into());
    }
    let threads = env.block.iter().fold(1u64, |acc, &d| acc.saturating_mul(u64::from(d.max(1))));
    if threads > MAX_THREADS_PER_BLOCK {
        return Err(format!("a block of {threads} threads cannot launch"));
    }
    // The shared-memory accesses to record (`probes`, chosen by the caller: those whose
    // conflicts the static lanes leave open) and their addresses.
    let shared_names: Vec<&str> = func
        .variables
        .iter()
        .filter(|v| v.space == VarSpace::Shared)
        .map(|v| v.name.as_str())
        .chain(func.shared_vars.iter().map(String::as_str))
        .collect();
    let mut shared_accesses: HashMap<InstrId, (AddrBase, i64, i64)> = HashMap::new();
    for (&id, &bytes) in probes {
        let Some(instr) = func.instr(id) else { continue };
        if let Some(Operand::Addr { base, offset }) = func.operands_of(instr).iter().find(|op| matches!(op, Operand::Addr { .. })) {
            shared_accesses.insert(id, (base.clone(), *offset, bytes.max(1)));
        }
    }
    let seeds: Vec<RegId> = shared_accesses.values().filter_map(|(b, _, _)| if let AddrBase::Reg(r) = b { Some(*r) } else { None }).collect();
    let in_slice = control_slice(func, &seeds);
    let mut slot_of = vec![u32::MAX; func.registers.len()];
    let mut n_slots = 0u32;
    for (id, instr) in func.instrs.iter().enumerate() {
        let relevant = in_slice[id] || (matches!(instr.base(), "bra" | "ret" | "exit") && instr.guard.is_some());
        if !relevant {
            continue;
        }
        for &r in func.dsts(instr).iter().chain(func.srcs(instr)) {
            if slot_of[r as usize] == u32::MAX && func.register(r).is_some_and(|reg| reg.special.is_none()) {
                slot_of[r as usize] = n_slots;
                n_slots += 1;
            }
        }
    }
    let n = func.blocks.len();
    let slot = |r: RegId| Some(slot_of[r as usize]).filter(|s| *s != u32::MAX);
    let guard_src = |instr: &ptx_ir::Instr| instr.guard.map(|g| (Src::of(func, &Operand::Reg(g.reg), &slot_of, env, &shared_names).0, g.negated));
    let mut progs: Vec<Vec<Step>> = Vec::with_capacity(n);
    let mut terms: Vec<Term> = Vec::with_capacity(n);
    for blk in &func.blocks {
        let mut list = Vec::new();
        for id in blk.instrs.clone() {
            // The address is read before the access writes its destination.
            if let Some((base, offset, bytes)) = shared_accesses.get(&id) {
                let base = match base {
                    AddrBase::Reg(r) => Src::of(func, &Operand::Reg(*r), &slot_of, env, &shared_names).0,
                    AddrBase::Symbol(_) | AddrBase::Absolute => Src::Imm(0),
                };
                list.push(Step::Probe(Probe { instr: id, base, offset: *offset, bytes: *bytes }));
            }
            if !in_slice[id as usize] {
                continue;
            }
            let Some(instr) = func.instr(id) else { continue };
            let ops = func.operands_of(instr);
            let (dst, dst2) = match ops.first() {
                Some(Operand::Reg(r)) => (slot(*r), None),
                Some(Operand::Pair(a, b)) => (a.and_then(slot), b.and_then(slot)),
                _ => (None, None),
            };
            let clobber = func.dsts(instr).iter().filter_map(|&r| slot(r)).filter(|s| Some(*s) != dst && Some(*s) != dst2).collect();
            let (op, srcs) = match func.forwarded_local(id) {
                // A `volatile` local read back: a copy of what its one store wrote.
                Some(stored) => (IntOp::copy(), vec![Src::of(func, stored, &slot_of, env, &shared_names)]),
                None => (IntOp::of(func, id), ops.iter().skip(1).map(|o| Src::of(func, o, &slot_of, env, &shared_names)).collect()),
            };
            list.push(Step::Exec(Prog {
                op,
                srcs,
                dst,
                dst2,
                clobber,
                guard: guard_src(instr),
            }));
        }
        progs.push(list);
        let term = blk.terminator().and_then(|t| func.instr(t));
        terms.push(match term.filter(|t| matches!(t.base(), "bra" | "brx" | "ret" | "exit" | "trap")) {
            None => Term::Fall(blk.succs.first().copied()),
            Some(t) => {
                let guard = guard_src(t).map(|(g, neg)| (g, neg, t.ptx_line));
                let fall = blk.succs.iter().copied().find(|&s| Some(s) != blk.target).or(blk.target);
                match (t.base(), blk.target) {
                    ("bra", Some(target)) => Term::Bra { target, fall: fall.filter(|_| guard.is_some()), guard },
                    ("ret" | "exit" | "trap", _) => Term::Leave { fall: blk.succs.first().copied(), guard },
                    _ => Term::Unsupported(format!("the branch at PTX line {} is indirect or has no resolved target", t.ptx_line)),
                }
            }
        });
    }
    let loops_of: Vec<Vec<LoopId>> = (0..n).map(|b| func.loops_of(b as BlockId)).collect();
    let diff = |a: &[LoopId], b: &[LoopId]| -> Vec<LoopId> { a.iter().copied().filter(|l| !b.contains(l)).collect() };
    let edges = (0..n)
        .map(|b| {
            let from = &loops_of[b];
            blk_nexts(func, b)
                .into_iter()
                .map(|to| {
                    let to_loops: &[LoopId] = to.map_or(&[], |t| &loops_of[t as usize]);
                    (to, diff(to_loops, from), diff(from, to_loops))
                })
                .collect()
        })
        .collect();
    let mut header_of = vec![None; n];
    for (l, lp) in func.loops.iter().enumerate() {
        header_of[lp.header as usize] = Some(l as LoopId);
    }
    let n_loops = func.loops.len();
    let mut sim = Sim {
        progs,
        terms,
        ipdom: immediate_post_dominators(func),
        edges,
        header_of,
        entry_loops: loops_of[0].clone(),
        args: (0..func.params.len() as u32).map(|i| env.args.get(&i).copied()).collect(),
        budget,
        steps: 0,
        fast_forward,
        skipped: 0,
    };
    let grid = env.grid.map(|g| u64::from(g.max(1)));
    let block = env.block.map(|b| i64::from(b.max(1)));
    let threads = block[0] * block[1] * block[2];
    let tids: Vec<[i64; 3]> = (0..threads).map(|t| [t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])]).collect();
    let warps = tids.chunks(32).count() as u128;
    let mut w = WarpState {
        stack: Vec::new(),
        alive: 0,
        slots: vec![Slot::unknown(); n_slots as usize],
        trips: vec![[0u64; 32]; n_loops],
        next_try: vec![FAST_FORWARD_AFTER; n_loops],
        reached: vec![0; n],
    };
    let mut c = Counts {
        warp_execs: vec![0; n],
        lane_execs: vec![0; n],
        loop_entries: vec![0; n_loops],
        loop_warp_entries: vec![0; n_loops],
        loop_header_lanes: vec![0; n_loops],
        loop_min: vec![u64::MAX; n_loops],
        loop_max: vec![0; n_loops],
        reached_threads: vec![0; n],
        probes: HashMap::new(),
    };
    // Weighted totals.
    let mut warp_tot = vec![0u128; n];
    let mut busiest_tot = vec![0u128; n];
    let mut reached_tot = vec![0u128; n];
    let mut lane_tot = vec![0u128; n];
    let mut entries_tot = vec![0u128; n_loops];
    let mut warp_entries_tot = vec![0u128; n_loops];
    let mut header_tot = vec![0u128; n_loops];
    let mut weight_tot = 0u128;
    let mut simulated = 0u64;
    let mut ways_tot: HashMap<InstrId, (u128, u128, u32)> = HashMap::new();
    // A block in the middle of the grid first, to see what one costs; then as many
    // samples per dimension as the budget allows (at least the first, a middle and the
    // last block of each). A sample that is this block takes its counts instead of running
    // it again.
    let middle = grid.map(|g| (g / 2) as i64);
    // Instructions per basic block, to find the busiest warp of a block.
    let block_len: Vec<u128> = func.blocks.iter().map(|b| u128::from(b.instrs.end.saturating_sub(b.instrs.start))).collect();
    // Runs every warp of block `ctaid`; returns the busiest warp's executions per basic block.
    let run_block = |sim: &mut Sim, ctaid: [i64; 3], w: &mut WarpState, c: &mut Counts| -> Result<Vec<u64>, String> {
        let mut busiest = (0u128, vec![0u64; n]);
        for warp in tids.chunks(32) {
            let before = c.warp_execs.clone();
            sim.run_warp(warp, ctaid, w, c)?;
            let own: Vec<u64> = c.warp_execs.iter().zip(&before).map(|(a, b)| a - b).collect();
            let work: u128 = own.iter().zip(&block_len).map(|(&e, &l)| u128::from(e) * l).sum();
            if work > busiest.0 || busiest.1.iter().all(|&e| e == 0) {
                busiest = (work, own);
            }
        }
        Ok(busiest.1)
    };
    let middle_busiest = run_block(&mut sim, middle, &mut w, &mut c)?;
    let middle_counts = c.clone();
    let per_block = sim.steps.max(1);
    let mut k = samples_per_dimension(grid);
    let cost = |k: u64| grid.iter().map(|&g| g.min(k)).product::<u64>().saturating_mul(per_block);
    while k > 3 && cost(k).saturating_mul(5) / 4 > budget.saturating_sub(sim.steps) {
        k -= 1;
    }
    let (sx, sy, sz) = (samples(grid[0], k), samples(grid[1], k), samples(grid[2], k));
    for &(z, wz) in &sz {
        for &(y, wy) in &sy {
            for &(x, wx) in &sx {
                let ctaid = [x as i64, y as i64, z as i64];
                let busiest = if ctaid == middle {
                    // The fewest and most trips stay those of every block run.
                    let (min, max) = (std::mem::take(&mut c.loop_min), std::mem::take(&mut c.loop_max));
                    c = Counts { loop_min: min, loop_max: max, ..middle_counts.clone() };
                    middle_busiest.clone()
                } else {
                    for v in [&mut c.warp_execs, &mut c.lane_execs, &mut c.loop_entries, &mut c.loop_warp_entries, &mut c.loop_header_lanes, &mut c.reached_threads] {
                        v.iter_mut().for_each(|x| *x = 0);
                    }
                    c.probes.clear();
                    run_block(&mut sim, ctaid, &mut w, &mut c)?
                };
                let w = u128::from(wx) * u128::from(wy) * u128::from(wz);
                for b in 0..n {
                    busiest_tot[b] += w * u128::from(busiest[b]);
                    warp_tot[b] += w * u128::from(c.warp_execs[b]);
                    lane_tot[b] += w * u128::from(c.lane_execs[b]);
                    reached_tot[b] += w * u128::from(c.reached_threads[b]);
                }
                for l in 0..n_loops {
                    entries_tot[l] += w * u128::from(c.loop_entries[l]);
                    warp_entries_tot[l] += w * u128::from(c.loop_warp_entries[l]);
                    header_tot[l] += w * u128::from(c.loop_header_lanes[l]);
                }
                for (&id, &(sum, execs, max)) in &c.probes {
                    let t = ways_tot.entry(id).or_insert((0, 0, 1));
                    t.0 += w * u128::from(sum);
                    t.1 += w * u128::from(execs);
                    t.2 = t.2.max(max);
                }
                weight_tot += w;
                simulated += 1;
            }
        }
    }
    let ratio = |a: u128, b: u128| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let threads_u = threads as u128;
    Ok(Simulated {
        warp_executions: warp_tot.iter().map(|&v| ratio(v, weight_tot * warps)).collect(),
        busiest_warp_executions: busiest_tot.iter().map(|&v| ratio(v, weight_tot)).collect(),
        thread_executions: lane_tot.iter().map(|&v| ratio(v, weight_tot * threads_u)).collect(),
        thread_reach: reached_tot.iter().map(|&v| ratio(v, weight_tot * threads_u)).collect(),
        active_lane_fraction: warp_tot.iter().zip(&lane_tot).map(|(&w, &l)| (w > 0).then(|| ratio(l, w * 32))).collect(),
        loops: (0..n_loops)
            .map(|l| LoopTrips {
                per_entry: (entries_tot[l] > 0).then(|| ratio(header_tot[l], entries_tot[l])),
                entries_per_thread: ratio(entries_tot[l], weight_tot * threads_u),
                warp_per_entry: (warp_entries_tot[l] > 0).then(|| ratio(warp_tot[func.loops[l].header as usize], warp_entries_tot[l])),
                min: if c.loop_min[l] == u64::MAX { 0 } else { c.loop_min[l] },
                max: c.loop_max[l],
            })
            .collect(),
        blocks_simulated: simulated,
        grid_blocks: grid.iter().product(),
        shared_ways: ways_tot
            .into_iter()
            .filter(|(_, (_, execs, _))| *execs > 0)
            .map(|(id, (sum, execs, max))| (id, SharedWays { mean: ratio(sum, execs), max }))
            .collect(),
        iterations_fast_forwarded: sim.skipped,
    })
}

/// The blocks control can go to from block `b` (`None`: out of the function).
fn blk_nexts(func: &Function, b: usize) -> Vec<Option<BlockId>> {
    let mut v: Vec<Option<BlockId>> = func.blocks[b].succs.iter().map(|&s| Some(s)).collect();
    if exits(func, b) {
        v.push(None);
    }
    v
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::{DEFAULT_BUDGET, samples, simulate};
    use crate::affine::Env;

    /// `if (threadIdx.x < 16) { ... }` then `if (x < n) { ... }`, `n` the parameter, then
    /// a branch on a loaded value.
    const PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{
    .reg .pred %p<4>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<2>;
    mov.u32 %r1, %tid.x;
    setp.gt.u32 %p1, %r1, 15;
    @%p1 bra $L__BB0_2;
    add.s32 %r2, %r1, 1;
$L__BB0_2:
    ld.param.u32 %r3, [k_param_1];
    setp.ge.s32 %p2, %r1, %r3;
    @%p2 bra $L__BB0_4;
    add.s32 %r4, %r1, 2;
$L__BB0_4:
    ret;
}
"#;

    #[test]
    fn warps_run_the_blocks_any_of_their_lanes_reach() {
        let (module, errors) = ptx_ir::parse_and_lower(PTX);
        assert!(errors.is_empty(), "{errors:?}");
        let f = module.function("k").expect("kernel");
        // 64 threads: warp 0 runs the first `if` with 16 of its lanes, warp 1 not at all;
        // n = 40 puts lanes 0-31 and 32-39 in the second.
        let args = HashMap::from([(1u32, 40i64)]);
        let env = Env { block: [64, 1, 1], grid: [1, 1, 1], args: &args };
        let s = simulate(f, &env, DEFAULT_BUDGET, &Default::default()).expect("simulated");
        assert_eq!(s.warp_executions, vec![1.0, 0.5, 1.0, 1.0, 1.0]);
        // The busiest warp, warp 0 (more instructions: it also runs the first body), runs
        // every block once.
        assert_eq!(s.busiest_warp_executions, vec![1.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!(s.thread_executions, vec![1.0, 0.25, 1.0, 40.0 / 64.0, 1.0]);
        assert_eq!(s.active_lane_fraction, vec![Some(1.0), Some(0.5), Some(1.0), Some(40.0 / 64.0), Some(1.0)]);
        // Threads that run each block at least once: 16 and 40 of the 64 run the bodies.
        assert_eq!(s.thread_reach, vec![1.0, 0.25, 1.0, 40.0 / 64.0, 1.0]);
        // Without n the second branch cannot be decided: no simulation.
        let none = HashMap::new();
        let env = Env { block: [64, 1, 1], grid: [1, 1, 1], args: &none };
        let err = simulate(f, &env, DEFAULT_BUDGET, &Default::default()).expect_err("n unknown");
        assert!(err.contains("argument not supplied"), "{err}");
        // Nor can a block too large to launch.
        let env = Env { block: [2048, 1, 1], grid: [1, 1, 1], args: &args };
        assert!(simulate(f, &env, DEFAULT_BUDGET, &Default::default()).is_err());
    }

    #[test]
    fn sampled_blocks_weigh_the_whole_grid() {
        assert_eq!(samples(3, 16), vec![(0, 1), (1, 1), (2, 1)]);
        // 100 blocks, 4 samples: the edges stand for one block each, the two interior
        // samples (the middles of 1..50 and 50..99) for 49 each.
        let s = samples(100, 4);
        assert_eq!(s, vec![(0, 2), (25, 98), (74, 98), (99, 2)]);
        let total: u64 = s.iter().map(|(_, w)| *w).sum();
        assert_eq!(total, 2 * 100);
        assert_eq!(s[0].1 as f64 / total as f64, 1.0 / 100.0);
    }
}

#[cfg(test)]
mod fast_forward_tests {
    use std::collections::HashMap;

    use super::{DEFAULT_BUDGET, Simulated, simulate_with};
    use crate::affine::Env;

    fn without_count(mut s: Simulated) -> Simulated {
        s.iterations_fast_forwarded = 0;
        s
    }

    /// `ptx` parsed without errors, with a kernel `name`.
    fn parsed(ptx: &str, name: &str) -> ptx_ir::ir::Module {
        let (module, errors) = ptx_ir::parse_and_lower(ptx);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(module.function(name).is_some(), "no kernel {name}");
        module
    }

    /// One block of `threads` threads with parameter 0 = `n`, simulated running every
    /// iteration and fast-forwarded.
    fn plain_and_fast(f: &ptx_ir::ir::Function, threads: u32, n: i64) -> (Result<Simulated, String>, Result<Simulated, String>) {
        let args = HashMap::from([(0u32, n)]);
        let env = Env { block: [threads, 1, 1], grid: [1, 1, 1], args: &args };
        (simulate_with(f, &env, DEFAULT_BUDGET, &HashMap::new(), false), simulate_with(f, &env, DEFAULT_BUDGET, &HashMap::new(), true))
    }

    /// Over every kernel of the sm_80 fixtures, at launches and argument values where every
    /// iteration can be run within a budget ten times the default, fast-forwarding changes
    /// nothing: the counts, trip counts and bank conflicts are exactly those of running
    /// every iteration.
    #[test]
    fn fast_forward_counts_what_running_every_iteration_counts() {
        let dir = format!("{}/../../tests/fixtures/ptx/sm_80", env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<_> = std::fs::read_dir(&dir).expect("fixtures").filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "ptx")).collect();
        files.sort();
        let (mut compared, mut skipped_some) = (0, 0);
        for path in files {
            let text = std::fs::read_to_string(&path).expect("read");
            let (module, _) = ptx_ir::parse_and_lower(&text);
            for f in module.kernels() {
                for (grid, block, value) in [([3, 1, 1], [128, 1, 1], 1000i64), ([2, 2, 1], [16, 16, 1], 333), ([1, 1, 1], [96, 1, 1], 4099)] {
                    let args: HashMap<u32, i64> = (0..f.params.len() as u32).map(|i| (i, value)).collect();
                    let env = Env { block, grid, args: &args };
                    let Ok(plain) = simulate_with(f, &env, 10 * DEFAULT_BUDGET, &HashMap::new(), false) else { continue };
                    let fast = simulate_with(f, &env, 10 * DEFAULT_BUDGET, &HashMap::new(), true).unwrap_or_else(|e| panic!("{}: {}: {e}", path.display(), f.name));
                    compared += 1;
                    skipped_some += usize::from(fast.iterations_fast_forwarded > 0);
                    assert_eq!(without_count(fast), plain, "{}: {} grid {grid:?} block {block:?} arguments {value}", path.display(), f.name);
                }
            }
        }
        // 141 and 37 when written.
        assert!(compared >= 100 && skipped_some >= 25, "{compared} launches compared, {skipped_some} fast-forwarded");
    }

    /// `for (i = 0; i != n + (threadIdx.x & 3); ++i)`, the exit an equality test (as nvcc
    /// writes loops it rotates), each lane of a warp leaving at its own count.
    const LOOP: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u32 k_param_0)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    ld.param.u32 %r1, [k_param_0];
    mov.u32 %r3, %tid.x;
    and.b32 %r4, %r3, 3;
    add.s32 %r5, %r1, %r4;
    mov.u32 %r2, 0;
$L__loop:
    add.s32 %r2, %r2, 1;
    setp.ne.s32 %p1, %r2, %r5;
    @%p1 bra $L__loop;
    ret;
}
"#;

    /// `for (k = 0; k < n; ++k) if (k % 32 == 0) { ... }`: every 32nd iteration takes
    /// another path.
    const PERIODIC: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry m(.param .u32 m_param_0)
{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    ld.param.u32 %r1, [m_param_0];
    mov.u32 %r2, 0;
    mov.u32 %r4, 0;
$L__loop:
    rem.u32 %r3, %r2, 32;
    setp.ne.s32 %p2, %r3, 0;
    @%p2 bra $L__skip;
    add.s32 %r4, %r4, 1;
$L__skip:
    add.s32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, %r1;
    @%p1 bra $L__loop;
    ret;
}
"#;

    /// A loop whose every 32nd iteration runs a block the others skip, 2^20 + 5 iterations
    /// (past the budget when every iteration runs): the jumps stop at each of them, so the
    /// block runs ⌈n / 32⌉ times, exactly.
    #[test]
    fn a_loop_with_a_branch_every_32nd_iteration_jumps_between_them() {
        let module = parsed(PERIODIC, "m");
        let f = module.function("m").expect("kernel");
        let n = (1i64 << 20) + 5;
        let (plain, fast) = plain_and_fast(f, 32, n);
        assert!(plain.is_err());
        let s = fast.expect("simulated");
        assert_eq!(s.loops[0].per_entry, Some(n as f64));
        let every_32nd = f.instrs.iter().find(|i| i.opcode.starts_with("add") && i.block != 0).map(|i| i.block).expect("block");
        assert_eq!(s.warp_executions[every_32nd as usize], ((n + 31) / 32) as f64);
        // At n = 1000, as running every iteration counts.
        let (plain, fast) = plain_and_fast(f, 32, 1000);
        let (plain, fast) = (plain.expect("simulated"), fast.expect("simulated"));
        assert!(fast.iterations_fast_forwarded > 0);
        assert_eq!(without_count(fast), plain);
    }

    /// `for (i = 0; i < 64; ++i) for (j = 0; j < n; ++j) ;`: the checks that let the outer
    /// loop jump run whole outer iterations, whose inner loops fast-forward too, and are then
    /// discarded; what they skipped is not counted. The count is then the inner iterations
    /// skipped in the outer iterations that ran, and the outer ones jumped over.
    const NESTED: &str = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry n(.param .u32 n_param_0)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    ld.param.u32 %r1, [n_param_0];
    mov.u32 %r2, 0;
$L__outer:
    mov.u32 %r3, 0;
$L__inner:
    add.s32 %r3, %r3, 1;
    setp.lt.s32 %p1, %r3, %r1;
    @%p1 bra $L__inner;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p2, %r2, 64;
    @%p2 bra $L__outer;
    ret;
}
"#;

    #[test]
    fn iterations_skipped_inside_a_discarded_check_are_not_counted() {
        let module = parsed(NESTED, "n");
        let (plain, fast) = plain_and_fast(module.function("n").expect("kernel"), 32, 1000);
        let (plain, fast) = (plain.expect("simulated"), fast.expect("simulated"));
        let skipped = fast.iterations_fast_forwarded;
        assert_eq!(without_count(fast), plain);
        // Each loop runs 11 of its iterations (FAST_FORWARD_AFTER = 8 before it tries, the
        // two it compares, and the last, before whose exit the jump stops): 11 outer
        // iterations with 1000 − 11 inner ones skipped in each, and 64 − 11 outer ones. The
        // check that let the outer loop jump skipped another 989 inner iterations, which a
        // discarded run must not add.
        assert_eq!(skipped, 11 * (1000 - 11) + (64 - 11));
    }

    /// A loop of 2^25 iterations per thread, far past the step budget if every iteration
    /// ran, is counted exactly: each lane's trips, the warp's (its longest lane), the
    /// divergent exits.
    #[test]
    fn a_loop_of_2_to_the_25_is_simulated_within_the_budget_and_counted_exactly() {
        let module = parsed(LOOP, "k");
        let f = module.function("k").expect("kernel");
        let n = 1i64 << 25;
        let (plain, fast) = plain_and_fast(f, 64, n);
        assert!(plain.is_err_and(|e| e.contains("steps")), "running every iteration exceeds the budget");
        let s = fast.expect("simulated");
        let l = &s.loops[0];
        assert_eq!(l.per_entry, Some(n as f64 + 1.5));
        assert_eq!(l.warp_per_entry, Some(n as f64 + 3.0));
        assert_eq!((l.min, l.max), (n as u64, n as u64 + 3));
        assert!(s.iterations_fast_forwarded > n as u64, "{}", s.iterations_fast_forwarded);
        // The same loop at n = 1000, within the budget, runs to the same counts as without.
        let (plain, fast) = plain_and_fast(f, 64, 1000);
        let (plain, fast) = (plain.expect("simulated"), fast.expect("simulated"));
        assert!(fast.iterations_fast_forwarded > 0);
        assert_eq!(without_count(fast), plain);
    }
}
