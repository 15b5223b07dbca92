//! Expected executions per thread of each basic block (`docs/profile.md`, step 2).
//!
//! A warp issues a block's instructions if any of its lanes reaches the block, so the
//! per-thread counts of the profile are warp-level issue counts: a block's *executions*
//! are the fraction of the grid's warps that run it, times the trip counts of the loops
//! around it. The fraction comes from the conditional branches (`@%p bra`, `@%p ret`):
//!
//! - a condition that [`crate::predicate`] can compile is evaluated exactly for every
//!   warp of the grid (by interval arithmetic when that decides the whole warp, else lane
//!   by lane; a condition on the thread index alone once per warp index, one on the block
//!   index alone once per block), or, when the grid is large, for every warp of a
//!   deterministic sample of blocks (per grid dimension the first two and the last two
//!   blocks, where bounds guards bite, and pairs of neighbouring blocks spread evenly over
//!   the interior, each standing for its share of the grid);
//! - a floating-point equality test of loaded data against a constant with a fractional
//!   part is a sentinel test ([`crate::predicate::sentinel`]): assumed never equal;
//! - any other condition (data, an argument nobody supplied, a value that changes inside
//!   a loop) keeps the documented default: each side runs in a fixed fraction of the
//!   warps that reach the branch, 1 by default, i.e. both sides are counted, as the seeds
//!   count divergent branches (Dasgupta 2011 §3.1, Alavani 2023 §4.2: "all paths are assumed to be
//!   executed").
//!
//! Propagation follows the forward edges of the CFG in reverse post-order (back edges
//! removed): a warp's lane mask at a block is the union of the masks its predecessors
//! send along each edge, so a lane that returns under a guard leaves every later block,
//! and the warp executes the block when the mask is not empty. The weight of a warp's
//! visit is the sum of its predecessors' weights, capped by the weight of the block's
//! immediate dominator (every path to the block passes through it, and a join after
//! both sides of an `if` runs once, not twice). A conditional branch that leaves a loop
//! or closes one is part of the loop's trip count and sends every lane on. Conditions
//! inside loops are evaluated only when they do not change between iterations
//! ([`crate::predicate`] rejects loop-carried values); the loops keep their trip-count
//! multipliers. Warps whose conditions come out the same run the same way: each distinct
//! run is propagated once.

use std::collections::HashMap;

use ptx_ir::InstrClass;
use ptx_ir::ir::{BlockId, Function, InstrId};

use crate::affine::Env;
use crate::predicate::{self, Level, Point, Tape, Unknown, WarpRange};

/// Lane evaluations allowed per kernel before the grid is sampled instead of enumerated.
const EVAL_BUDGET: u64 = 1 << 14;
/// Blocks simulated at most when the grid is sampled.
const MAX_SAMPLED_BLOCKS: u64 = 64;
/// The most threads a block can have on any compute capability (CUDA C++ Programming
/// Guide, "Compute Capabilities", technical specifications: maximum number of threads
/// per block).
const MAX_THREADS_PER_BLOCK: u64 = 1024;

/// The result: per basic block, executions per thread (loop multipliers included) and,
/// where every branch on the way was evaluated, the mean fraction of active lanes in the
/// warps that run it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Frequencies {
    pub(crate) executions: Vec<f64>,
    pub(crate) active_lanes: Vec<Option<f64>>,
    /// Some warp reached a branch whose condition was not evaluated (data, an argument
    /// not supplied, a value that changes inside a loop): its sides were counted by the
    /// default, not decided.
    pub(crate) undecided: bool,
}

/// The product of the trip counts of the loops around each block (0 for unreachable
/// blocks). A trip count is the header's executions per entry ([`ptx_ir::ir::Loop`]); in a
/// loop whose one exit is tested before the block that closes it (a top-tested `while`, or
/// a test in the middle of the body: nvcc's loops rotated around an unrolled part), the
/// blocks after the test run once less than it.
pub(crate) fn loop_products(func: &Function, trip_of_loop: &[f64]) -> Vec<f64> {
    func.blocks
        .iter()
        .enumerate()
        .map(|(b, block)| {
            if !block.reachable {
                return 0.0;
            }
            func.loops_of(b as BlockId)
                .iter()
                .map(|l| {
                    let trip = trip_of_loop.get(*l as usize).copied().unwrap_or(1.0);
                    func.loops.get(*l as usize).map_or(trip, |lp| match lp.exiting[..] {
                        [x] if !lp.latches.contains(&x) && x != b as BlockId && func.dominates(x, b as BlockId) => (trip - 1.0).max(0.0),
                        _ => trip,
                    })
                })
                .product()
        })
        .collect()
}

#[derive(Debug)]
enum Cond {
    Tape(Tape),
    /// A sentinel test, with its constant: the condition's assumed value.
    Sentinel(bool, f64),
    Unknown(Unknown),
}

#[derive(Debug)]
enum Term {
    /// Every forward successor gets every lane.
    Flow,
    /// Lanes where the guard holds go to `target` (`None`: they leave the kernel, for
    /// `@%p ret`), the others to `fall`.
    Cond { instr: InstrId, cond: Cond, negated: bool, target: Option<BlockId>, fall: Option<BlockId> },
}

/// Per conditional branch, the warps (weighted) that reach it and that go to each side.
#[derive(Debug, Default, Clone, Copy)]
struct BranchStat {
    reach: f64,
    target: f64,
    fall: f64,
}

#[derive(Debug, Clone, Copy)]
struct Visit {
    mask: u32,
    weight: f64,
    exact: bool,
}

const NO_VISIT: Visit = Visit { mask: 0, weight: 0.0, exact: true };

struct Cfg {
    rpo: Vec<BlockId>,
    forward: Vec<Vec<BlockId>>,
    terms: Vec<Term>,
    /// The blocks whose branch condition varies over the grid (a non-constant tape).
    tape_blocks: Vec<usize>,
    /// Per block, its index in `tape_blocks`.
    slot_of: Vec<Option<usize>>,
}

/// Reverse post-order from the entry and the forward successors (edges to a block still
/// on the depth-first stack, i.e. back edges, are dropped).
fn order(func: &Function) -> (Vec<BlockId>, Vec<Vec<BlockId>>) {
    let n = func.blocks.len();
    let mut forward = vec![Vec::new(); n];
    let mut post = Vec::with_capacity(n);
    if n == 0 {
        return (post, forward);
    }
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    let mut stack: Vec<(BlockId, usize)> = vec![(0, 0)];
    state[0] = 1;
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        let succs = &func.blocks[b as usize].succs;
        if let Some(&s) = succs.get(*next) {
            *next += 1;
            match state.get(s as usize) {
                Some(0) => {
                    forward[b as usize].push(s);
                    state[s as usize] = 1;
                    stack.push((s, 0));
                }
                Some(2) => forward[b as usize].push(s),
                _ => {} // a back edge
            }
        } else {
            state[b as usize] = 2;
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    (post, forward)
}

fn classify(func: &Function, env: &Env<'_>, forward: &[Vec<BlockId>]) -> Vec<Term> {
    let mut terms = Vec::with_capacity(func.blocks.len());
    for (b, block) in func.blocks.iter().enumerate() {
        let term = (|| {
            let id = block.terminator()?;
            let instr = func.instr(id)?;
            let guard = instr.guard?;
            let next = (b + 1 < func.blocks.len()).then_some(b as BlockId + 1);
            let (target, fall) = match instr.base() {
                "bra" => (Some(block.target?), next),
                "ret" | "exit" => (None, next),
                _ => return None,
            };
            if target.is_some() && target == fall {
                return None;
            }
            // An edge that closes a loop or leaves the innermost one belongs to the loop's
            // trip count: every lane goes on.
            let fwd = &forward[b];
            let innermost = block.innermost_loop.and_then(|l| func.loops.get(l as usize));
            for s in [target, fall].into_iter().flatten() {
                if !fwd.contains(&s) || innermost.is_some_and(|l| !l.contains(s)) {
                    return None;
                }
            }
            let cond = match predicate::compile(func, env, guard.reg) {
                Ok(tape) => Cond::Tape(tape),
                Err(why) => match predicate::sentinel(func, guard.reg) {
                    Some((value, holds)) => Cond::Sentinel(holds, value),
                    None => Cond::Unknown(why),
                },
            };
            Some(Term::Cond { instr: id, cond, negated: guard.negated, target, fall })
        })();
        terms.push(term.unwrap_or(Term::Flow));
    }
    terms
}

/// The lanes of warp `w` of a block, one point per thread that exists, into `out`.
fn warp_points(block: [u32; 3], ctaid: [i64; 3], w: u64, out: &mut Vec<Point>) {
    let [bx, by, bz] = block.map(|d| u64::from(d.max(1)));
    let threads = bx.saturating_mul(by).saturating_mul(bz);
    out.clear();
    out.extend(
        (32 * w..(32 * w + 32).min(threads))
            .map(|t| Point { tid: [(t % bx) as i64, ((t / bx) % by) as i64, (t / (bx * by)) as i64], ctaid, lane: (t - 32 * w) as i64 }),
    );
}

struct Acc {
    exec: Vec<f64>,
    active: Vec<f64>,
    exact: Vec<bool>,
    /// Per block ending in a conditional branch.
    branches: Vec<BranchStat>,
    warps: f64,
}

/// One warp's outcome at every condition that varies (the `Cond::Tape` terms that are
/// not constant, in `Cfg::tape_blocks` order): the lanes where it holds and the lanes
/// where it could not be evaluated. Warps with the same signature run the same way.
type Signature = Vec<(u32, u32)>;

/// What one warp does: its visits (block, weight, active share, exact) and, per
/// conditional branch it reaches, (block, reach, target, fall).
#[derive(Debug, Default)]
struct WarpRun {
    visits: Vec<(usize, f64, f64, bool)>,
    branches: Vec<(usize, f64, f64, f64)>,
}

impl Acc {
    /// Adds `weight` warps that all ran as `run`.
    fn add(&mut self, run: &WarpRun, weight: f64) {
        self.warps += weight;
        for &(b, w, active, exact) in &run.visits {
            self.exec[b] += weight * w;
            self.active[b] += weight * w * active;
            self.exact[b] &= exact;
        }
        for &(b, reach, target, fall) in &run.branches {
            let s = &mut self.branches[b];
            s.reach += weight * reach;
            s.target += weight * target;
            s.fall += weight * fall;
        }
    }
}

struct Sim<'a> {
    func: &'a Function,
    cfg: &'a Cfg,
    unknown_probability: f64,
    visits: Vec<Visit>,
    scratch: Vec<i64>,
    ranges: Vec<(i128, i128)>,
    /// Per varying condition on the thread index alone, its outcome by warp index.
    per_warp: Vec<Vec<Option<(u32, u32)>>>,
    /// Per condition on the block index alone, its value in the current block (`None`
    /// inside: it could not be evaluated).
    block_cache: HashMap<usize, Option<bool>>,
}

impl Sim<'_> {
    /// The value of every condition on the block index alone in the block of `lanes`
    /// (also remembered for [`Sim::signature`]).
    fn block_key(&mut self, lanes: &[Point]) -> Vec<Option<bool>> {
        let mut key = Vec::new();
        for (slot, &b) in self.cfg.tape_blocks.iter().enumerate() {
            if let Term::Cond { cond: Cond::Tape(tape), .. } = &self.cfg.terms[b]
                && tape.level == Level::Block
            {
                let v = lanes.first().and_then(|p| tape.eval(p, &mut self.scratch));
                self.block_cache.insert(slot, v);
                key.push(v);
            }
        }
        key
    }

    /// The outcome of every varying condition for warp `warp` of a block, whose lanes are
    /// `lanes`. Conditions on the thread index alone are evaluated once per warp index
    /// and reused in every block.
    fn signature(&mut self, lanes: &[Point], warp: usize) -> Signature {
        let all = if lanes.len() >= 32 { u32::MAX } else { (1u32 << lanes.len()) - 1 };
        let mut range = None;
        let mut sig = Vec::with_capacity(self.cfg.tape_blocks.len());
        for (slot, &b) in self.cfg.tape_blocks.iter().enumerate() {
            let Term::Cond { cond: Cond::Tape(tape), .. } = &self.cfg.terms[b] else { continue };
            if !tape.uses_ctaid
                && let Some(Some(known)) = self.per_warp.get(slot).and_then(|v| v.get(warp))
            {
                sig.push(*known);
                continue;
            }
            let (mut holds, mut failed) = (0u32, 0u32);
            if tape.level < Level::Thread {
                let value = match self.block_cache.get(&slot) {
                    Some(v) => *v,
                    None => {
                        let v = lanes.first().and_then(|p| tape.eval(p, &mut self.scratch));
                        self.block_cache.insert(slot, v);
                        v
                    }
                };
                match value {
                    Some(true) => holds = all,
                    Some(false) => {}
                    None => failed = all,
                }
            } else if let Some(v) = range.get_or_insert_with(|| WarpRange::of(lanes)).as_ref().and_then(|r| tape.eval_range(r, &mut self.ranges)) {
                // Interval arithmetic decided it for the whole warp.
                holds = if v { all } else { 0 };
            } else {
                for (l, p) in lanes.iter().enumerate() {
                    match tape.eval(p, &mut self.scratch) {
                        Some(true) => holds |= 1 << l,
                        Some(false) => {}
                        None => failed |= 1 << l,
                    }
                }
            }
            if !tape.uses_ctaid
                && let Some(v) = self.per_warp.get_mut(slot)
            {
                if v.len() <= warp {
                    v.resize(warp + 1, None);
                }
                v[warp] = Some((holds, failed));
            }
            sig.push((holds, failed));
        }
        sig
    }

    /// The lanes of `mask` where the condition holds, or `None` when it is unknown there.
    fn holds(&self, b: usize, cond: &Cond, sig: &Signature, mask: u32) -> Option<u32> {
        match cond {
            Cond::Unknown(_) => None,
            Cond::Sentinel(v, _) => Some(if *v { mask } else { 0 }),
            Cond::Tape(tape) => match tape.constant() {
                Some(v) => Some(if v { mask } else { 0 }),
                None => {
                    let slot = (*self.cfg.slot_of.get(b)?)?;
                    let (holds, failed) = *sig.get(slot)?;
                    (mask & failed == 0).then_some(mask & holds)
                }
            },
        }
    }

    /// Runs one warp of `n_lanes` lanes with outcomes `sig` through the CFG.
    fn run(&mut self, sig: &Signature, n_lanes: usize) -> WarpRun {
        let mut out = WarpRun::default();
        let n = self.func.blocks.len();
        if n == 0 || n_lanes == 0 {
            return out;
        }
        self.visits.clear();
        self.visits.resize(n, NO_VISIT);
        let full = if n_lanes >= 32 { u32::MAX } else { (1u32 << n_lanes) - 1 };
        self.visits[0] = Visit { mask: full, weight: 1.0, exact: true };
        let q = self.unknown_probability;
        for &b in &self.cfg.rpo {
            let b = b as usize;
            let v = self.visits[b];
            if v.mask == 0 || v.weight <= 0.0 {
                continue;
            }
            let cap = self.func.idom.get(b).copied().flatten().map_or(1.0, |d| self.visits[d as usize].weight);
            let w = v.weight.min(cap).min(1.0);
            self.visits[b].weight = w;
            out.visits.push((b, w, f64::from(v.mask.count_ones()) / n_lanes as f64, v.exact));
            let send = |visits: &mut Vec<Visit>, s: BlockId, mask: u32, w: f64, exact: bool| {
                if let Some(t) = visits.get_mut(s as usize)
                    && mask != 0
                    && w > 0.0
                {
                    t.mask |= mask;
                    t.weight += w;
                    t.exact &= exact;
                }
            };
            match &self.cfg.terms[b] {
                Term::Flow => {
                    for &s in &self.cfg.forward[b] {
                        send(&mut self.visits, s, v.mask, w, v.exact);
                    }
                }
                Term::Cond { cond, negated, target, fall, .. } => match self.holds(b, cond, sig, v.mask) {
                    Some(h) => {
                        let t = if *negated { v.mask & !h } else { h };
                        let f = v.mask & !t;
                        out.branches.push((b, w, if t != 0 { w } else { 0.0 }, if f != 0 { w } else { 0.0 }));
                        if let Some(s) = target {
                            send(&mut self.visits, *s, t, w, v.exact);
                        }
                        if let Some(s) = fall {
                            send(&mut self.visits, *s, f, w, v.exact);
                        }
                    }
                    None => {
                        out.branches.push((b, w, w * q, w * q));
                        for s in [target, fall].into_iter().flatten() {
                            send(&mut self.visits, *s, v.mask, w * q, false);
                        }
                    }
                },
            }
        }
        out
    }
}

/// How the grid was covered.
enum Coverage {
    /// Every block behaves alike: one was simulated.
    One,
    Exact(u64),
    Sampled { simulated: usize, blocks: u64 },
}

/// Per grid dimension of `g` blocks, at most about `k` coordinates with the number of
/// blocks each stands for: the first two and last two exactly, and from each of the
/// interior's strata two neighbouring blocks (so that a test on the block index's parity
/// is balanced), placed by the golden-ratio sequence so that the strata do not all sample
/// the same residue.
fn dim_samples(g: u32, k: u64) -> Vec<(u32, f64)> {
    let g64 = u64::from(g.max(1));
    if g64 <= k.max(6) {
        return (0..g.max(1)).map(|c| (c, 1.0)).collect();
    }
    let mut res = vec![(0, 1.0), (1, 1.0)];
    let (lo, hi) = (2u64, g64 - 2);
    let len = hi - lo;
    let strata = (k.saturating_sub(4) / 2).clamp(1, len);
    const PHI: f64 = 0.618_033_988_749_894_9;
    for j in 0..strata {
        let (a, b) = (lo + len * j / strata, lo + len * (j + 1) / strata);
        let n = b - a;
        if n == 0 {
            continue;
        }
        if n == 1 {
            res.push((a as u32, 1.0));
            continue;
        }
        let offset = (((j + 1) as f64 * PHI).fract() * (n - 1) as f64) as u64;
        let c = a + offset.min(n - 2);
        res.push((c as u32, n as f64 / 2.0));
        res.push((c as u32 + 1, n as f64 / 2.0));
    }
    res.push(((g64 - 2) as u32, 1.0));
    res.push(((g64 - 1) as u32, 1.0));
    res
}

/// The blocks to simulate with their weights (blocks of the grid each stands for).
fn grid_samples(grid: [u32; 3], cost_per_block: u64, level: Level) -> (Vec<([i64; 3], f64)>, Coverage) {
    let grid = grid.map(|d| d.max(1));
    let blocks: u64 = grid.iter().fold(1u64, |a, d| a.saturating_mul(u64::from(*d)));
    if level == Level::Grid {
        return (vec![([0, 0, 0], blocks as f64)], Coverage::One);
    }
    if blocks.saturating_mul(cost_per_block) <= EVAL_BUDGET {
        let mut res = Vec::with_capacity(blocks as usize);
        for z in 0..grid[2] {
            for y in 0..grid[1] {
                for x in 0..grid[0] {
                    res.push(([i64::from(x), i64::from(y), i64::from(z)], 1.0));
                }
            }
        }
        return (res, Coverage::Exact(blocks));
    }
    let target = (EVAL_BUDGET / cost_per_block.max(1)).clamp(16, MAX_SAMPLED_BLOCKS);
    let dims = grid.iter().filter(|d| **d > 1).count().max(1) as f64;
    let k = ((target as f64).powf(1.0 / dims).floor() as u64).max(6);
    let per_dim: Vec<Vec<(u32, f64)>> = grid.iter().map(|g| dim_samples(*g, k)).collect();
    let mut res = Vec::new();
    for (z, wz) in &per_dim[2] {
        for (y, wy) in &per_dim[1] {
            for (x, wx) in &per_dim[0] {
                res.push(([i64::from(*x), i64::from(*y), i64::from(*z)], wx * wy * wz));
            }
        }
    }
    let simulated = res.len();
    (res, Coverage::Sampled { simulated, blocks })
}

/// Expected executions per thread of every block of `func` under the launch in `env`,
/// with the assumptions made, in words.
pub(crate) fn block_frequencies(
    func: &Function,
    trip_of_loop: &[f64],
    env: &Env<'_>,
    unknown_probability: f64,
    source_names: &[String],
    assumptions: &mut Vec<String>,
) -> Frequencies {
    let products = loop_products(func, trip_of_loop);
    let n = func.blocks.len();
    if n == 0 {
        return Frequencies { executions: products, active_lanes: Vec::new(), undecided: false };
    }
    let q = if unknown_probability.is_finite() { unknown_probability.clamp(0.0, 1.0) } else { 1.0 };
    let (rpo, forward) = order(func);
    let terms = classify(func, env, &forward);
    let tape_blocks: Vec<usize> = (0..n).filter(|b| matches!(&terms[*b], Term::Cond { cond: Cond::Tape(t), .. } if t.constant().is_none())).collect();
    let mut slot_of = vec![None; n];
    for (slot, b) in tape_blocks.iter().enumerate() {
        slot_of[*b] = Some(slot);
    }
    let cfg = Cfg { rpo, forward, terms, tape_blocks, slot_of };

    let threads: u64 = env.block.iter().fold(1u64, |a, d| a.saturating_mul(u64::from((*d).max(1))));
    if threads > MAX_THREADS_PER_BLOCK {
        // No GPU launches such a block; simulating its warps would only take long.
        assumptions.push(format!(
            "block of {threads} threads exceeds CUDA's {MAX_THREADS_PER_BLOCK}: branches not evaluated, both sides counted"
        ));
        return Frequencies { executions: products, active_lanes: vec![None; n], undecided: true };
    }
    // Only conditions that read the block index make blocks differ; their evaluations
    // per block decide between enumerating the grid and sampling it.
    let warps_per_block = threads.div_ceil(32);
    let mut cost = 0u64;
    let mut level = Level::Grid;
    for t in cfg.terms.iter() {
        if let Term::Cond { cond: Cond::Tape(tape), .. } = t
            && tape.uses_ctaid
            && tape.constant().is_none()
        {
            level = level.max(tape.level);
            // A condition on the block index alone is evaluated once per block.
            cost += if tape.level == Level::Thread { threads } else { 1 };
        }
    }
    let (samples, coverage) = grid_samples(env.grid, cost.max(1), level);

    let mut acc = Acc { exec: vec![0.0; n], active: vec![0.0; n], exact: vec![true; n], branches: vec![BranchStat::default(); n], warps: 0.0 };
    let mut sim = Sim { func, cfg: &cfg, unknown_probability: q, visits: Vec::with_capacity(n), scratch: Vec::new(), ranges: Vec::new(), per_warp: vec![Vec::new(); cfg.tape_blocks.len()], block_cache: HashMap::new() };
    // Warps with the same outcomes run the same way: each distinct run is simulated once
    // and added with the total weight of its warps.
    let mut runs: Vec<(WarpRun, f64)> = Vec::new();
    let mut index: HashMap<(Signature, usize), usize> = HashMap::new();
    let mut last: Option<((Signature, usize), usize)> = None;
    let mut lanes = Vec::with_capacity(32);
    // Without conditions on both the block and the thread index, a block's warps are
    // decided by its block-level conditions: blocks that agree on them run alike.
    let by_block_key = !cfg.tape_blocks.iter().any(|b| matches!(&cfg.terms[*b], Term::Cond { cond: Cond::Tape(t), .. } if t.uses_ctaid && t.level == Level::Thread));
    let mut block_memo: HashMap<Vec<Option<bool>>, Vec<usize>> = HashMap::new();
    for (ctaid, weight) in &samples {
        sim.block_cache.clear();
        let mut block_key = None;
        if by_block_key {
            warp_points(env.block, *ctaid, 0, &mut lanes);
            let key = sim.block_key(&lanes);
            if let Some(list) = block_memo.get(&key) {
                for i in list {
                    runs[*i].1 += weight;
                }
                continue;
            }
            block_key = Some((key, Vec::with_capacity(warps_per_block as usize)));
        }
        for w in 0..warps_per_block {
            warp_points(env.block, *ctaid, w, &mut lanes);
            let key = (sim.signature(&lanes, w as usize), lanes.len());
            let i = match &last {
                Some((k, i)) if *k == key => *i,
                _ => {
                    let i = match index.get(&key) {
                        Some(i) => *i,
                        None => {
                            runs.push((sim.run(&key.0, key.1), 0.0));
                            index.insert(key.clone(), runs.len() - 1);
                            runs.len() - 1
                        }
                    };
                    last = Some((key, i));
                    i
                }
            };
            runs[i].1 += weight;
            if let Some((_, list)) = block_key.as_mut() {
                list.push(i);
            }
        }
        if let Some((key, list)) = block_key {
            block_memo.insert(key, list);
        }
    }
    for (run, weight) in &runs {
        acc.add(run, *weight);
    }
    let warps = acc.warps.max(f64::MIN_POSITIVE);
    let executions = (0..n).map(|b| acc.exec[b] / warps * products[b]).collect();
    let active_lanes = (0..n)
        .map(|b| {
            let frac = acc.active[b] / acc.exec[b];
            (acc.exact[b] && acc.exec[b] > 0.0 && frac < 1.0 - 1e-9).then_some(frac)
        })
        .collect();
    describe(func, &cfg, &acc, &coverage, q, source_names, assumptions);
    let undecided = cfg
        .terms
        .iter()
        .enumerate()
        .any(|(b, t)| matches!(t, Term::Cond { cond: Cond::Unknown(_), .. }) && acc.branches.get(b).is_some_and(|s| s.reach > 0.0));
    Frequencies { executions, active_lanes, undecided }
}

/// "line 12" from the `.loc` of an instruction, else "PTX line 40".
fn line_of(func: &Function, id: InstrId) -> (Option<u32>, String) {
    let Some(instr) = func.instr(id) else { return (None, "an unknown line".into()) };
    match func.loc(instr) {
        Some(loc) if loc.line > 0 => (Some(loc.line), format!("line {}", loc.line)),
        _ => (None, format!("PTX line {}", instr.ptx_line)),
    }
}

/// Where a side of a branch goes, in words: "the return (line 25)", or the source line
/// of the first instruction there that does real work (a memory access, arithmetic on
/// data, a barrier...), skipping the index arithmetic nvcc hoists to the top of a block.
fn side(func: &Function, target: Option<BlockId>, file: Option<u32>) -> String {
    let Some(b) = target.and_then(|b| func.blocks.get(b as usize)) else { return "the return".into() };
    // Lines of the branch's own file (an inlined header function has lines of another).
    let located: Vec<InstrId> = (b.instrs.start..b.instrs.end)
        .filter(|i| func.instr(*i).and_then(|x| func.loc(x)).is_some_and(|l| l.line > 0 && file.is_none_or(|f| f == l.file)))
        .collect();
    let work = located.iter().copied().find(|i| {
        func.instr(*i).is_some_and(|x| !matches!(x.class, InstrClass::IntAlu | InstrClass::Move | InstrClass::Conversion | InstrClass::Branch))
    });
    let line = match work.or(located.first().copied()) {
        Some(i) => line_of(func, i).1,
        None => format!("PTX line {}", b.ptx_line),
    };
    let is_return = func.instr(b.instrs.start).is_some_and(|i| matches!(i.base(), "ret" | "exit") && i.guard.is_none());
    if is_return { format!("the return ({line})") } else { line }
}

fn count(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 { format!("{}", x.round()) } else { format!("{x:.1}") }
}

fn list(lines: &[String]) -> String {
    match lines {
        [one] => format!("branch at {one}"),
        many => {
            let joined = many.iter().map(|l| l.trim_start_matches("line ")).collect::<Vec<_>>().join(", ");
            if many.iter().all(|l| l.starts_with("line ")) {
                format!("branches at lines {joined}")
            } else {
                format!("branches at {}", many.join(", "))
            }
        }
    }
}

fn describe(func: &Function, cfg: &Cfg, acc: &Acc, coverage: &Coverage, q: f64, source_names: &[String], out: &mut Vec<String>) {
    let default = if q >= 1.0 {
        "both sides counted for every warp that reaches them (the documented default)".to_string()
    } else {
        format!("each side counted for {:.0} % of the warps that reach them (the configured default)", q * 100.0)
    };
    let over = match coverage {
        Coverage::Exact(1) => "counted over the grid's one block".into(),
        Coverage::Exact(b) => format!("counted over all {b} blocks"),
        Coverage::One => "counted over the grid".into(),
        Coverage::Sampled { simulated, blocks } => format!(
            "estimated from {simulated} of the {blocks} blocks (the first and last two of each grid dimension, the rest in evenly spread pairs)"
        ),
    };
    let exact = !matches!(coverage, Coverage::Sampled { .. });
    // Messages are grouped by source line (an unrolled loop repeats a branch) and kind;
    // the order of first appearance is kept.
    let mut decided: Vec<(String, usize, Vec<String>)> = Vec::new();
    // (source line, level) → (block, statistics) of each branch there.
    type Group = ((String, Level), Vec<(usize, BranchStat)>);
    let mut varying: Vec<Group> = Vec::new();
    let mut sentinels: Vec<(String, f64, Vec<String>)> = Vec::new();
    let mut unknown: Vec<(String, Vec<String>)> = Vec::new();
    fn push_unique(v: &mut Vec<String>, x: String) {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    for (b, term) in cfg.terms.iter().enumerate() {
        let Term::Cond { instr, cond, target, fall, .. } = term else { continue };
        let Some(stat) = acc.branches.get(b).filter(|s| s.reach > 0.0) else { continue };
        let (_, at) = line_of(func, *instr);
        let file = func.instr(*instr).and_then(|i| func.loc(i)).map(|l| l.file);
        // The side no warp went to, for a condition with one outcome.
        let dead = side(func, if stat.target == 0.0 { *target } else { *fall }, file);
        match cond {
            Cond::Tape(tape) if tape.constant().is_some() => match decided.iter_mut().find(|(a, _, _)| *a == at) {
                Some((_, n, sides)) => {
                    *n += 1;
                    push_unique(sides, dead);
                }
                None => decided.push((at, 1, vec![dead])),
            },
            Cond::Tape(tape) => {
                let key = (at, tape.level);
                match varying.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, list)) => list.push((b, *stat)),
                    None => varying.push((key, vec![(b, *stat)])),
                }
            }
            Cond::Sentinel(_, value) => match sentinels.iter_mut().find(|(a, v, _)| *a == at && v == value) {
                Some((_, _, sides)) => push_unique(sides, dead),
                None => sentinels.push((at, *value, vec![dead])),
            },
            Cond::Unknown(why) => {
                // The reason, after "depend(s)" or "use(s)".
                let reason = match why {
                    Unknown::Data => "depend| on data".to_string(),
                    Unknown::Varies => "depend| on a value that changes inside a loop or between paths".to_string(),
                    Unknown::Argument(idx) => {
                        let name = source_names
                            .get(*idx as usize)
                            .cloned()
                            .or_else(|| func.params.get(*idx as usize).map(|p| ptx_ir::short_param_name(&p.name)))
                            .unwrap_or_else(|| format!("param_{idx}"));
                        format!("depend| on `{name}`, which was not supplied (use --arg {name}=VALUE)")
                    }
                    Unknown::Unsupported(what) => format!("use| {what}, which the analysis does not evaluate"),
                };
                match unknown.iter_mut().find(|(r, _)| *r == reason) {
                    Some((_, lines)) => push_unique(lines, at),
                    None => unknown.push((reason, vec![at])),
                }
            }
        }
    }
    let branches_at = |at: &str, n: usize| if n == 1 { format!("branch at {at}") } else { format!("{n} branches at {at} (copies in the PTX)") };
    for (at, n, sides) in decided {
        let (is, from) = if n == 1 { ("is", "it") } else { ("are", "them") };
        let runs = if sides.len() == 1 { "runs" } else { "run" };
        out.push(format!("{} {is} decided by the launch and the arguments: {} never {runs} from {from}", branches_at(&at, n), sides.join(", ")));
    }
    for ((at, level), list) in varying {
        let by = if level == Level::Thread { "the thread index" } else { "the block index" };
        let both = if level == Level::Thread { " (a warp whose lanes disagree runs both)" } else { "" };
        if let [(b, stat)] = list.as_slice() {
            let Term::Cond { instr, target, fall, .. } = &cfg.terms[*b] else { continue };
            let file = func.instr(*instr).and_then(|i| func.loc(i)).map(|l| l.file);
            let (fall_share, target_share) = if exact {
                (format!("{} of the {} warps that reach it", count(stat.fall), count(stat.reach)), count(stat.target))
            } else {
                (format!("{:.1} % of the warps that reach it", 100.0 * stat.fall / stat.reach), format!("{:.1} %", 100.0 * stat.target / stat.reach))
            };
            let (fall_side, target_side) = (side(func, *fall, file), side(func, *target, file));
            if stat.target == 0.0 || stat.fall == 0.0 {
                let only = if stat.target == 0.0 { fall_side } else { target_side };
                out.push(format!("branch at {at} depends on {by}, yet every warp that reaches it goes to {only} only; {over}"));
            } else if fall_side == target_side {
                out.push(format!("branch at {at} depends on {by}: one side runs in {fall_share}, the other in {target_share}{both}; {over}"));
            } else {
                out.push(format!("branch at {at} depends on {by}: {fall_side} runs in {fall_share}, {target_side} in {target_share}{both}; {over}"));
            }
        } else {
            let shares = list.iter().flat_map(|(_, s)| [s.fall / s.reach, s.target / s.reach]);
            let (lo, hi) = shares.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
            out.push(format!(
                "{} depend on {by}, evaluated warp by warp: each side runs in {:.1} % to {:.1} % of the warps that reach it{both}; {over}",
                branches_at(&at, list.len()),
                100.0 * lo,
                100.0 * hi
            ));
        }
    }
    for (at, value, sides) in sentinels {
        out.push(format!(
            "branch at {at} tests loaded floating-point data for equality with {value}, a sentinel that benchmark code stores under to keep a result alive: the data is assumed never to equal it, so {} is not counted",
            sides.join(", ")
        ));
    }
    for (reason, lines) in unknown {
        let reason = reason.replacen('|', if lines.len() == 1 { "s" } else { "" }, 1);
        out.push(format!("{} {reason}: {default}", list(&lines)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dim_samples_cover_the_dimension_once() {
        for g in [1u32, 5, 6, 7, 40, 1000, 131_073] {
            for k in [6u64, 16, 256] {
                let s = dim_samples(g, k);
                let total: f64 = s.iter().map(|(_, w)| w).sum();
                assert!((total - f64::from(g)).abs() < 1e-9, "g={g} k={k}: {total}");
                assert!(s.iter().all(|(c, _)| *c < g), "g={g} k={k}: {s:?}");
                if g > 6 && u64::from(g) > k {
                    let coords: Vec<u32> = s.iter().map(|(c, _)| *c).collect();
                    assert!(coords.starts_with(&[0, 1]) && coords.ends_with(&[g - 2, g - 1]), "{coords:?}");
                }
            }
        }
    }

    #[test]
    fn pairs_balance_a_parity_test() {
        // Half of the interior blocks are odd: the sample says so, whatever the grid size.
        for g in [1001u32, 16_384, 131_073] {
            let s = dim_samples(g, 64);
            let odd: f64 = s.iter().filter(|(c, _)| c % 2 == 1).map(|(_, w)| w).sum();
            let truth = f64::from(g / 2);
            // Within half a block per stratum (a stratum of odd size has one more of one kind).
            assert!((odd - truth).abs() <= 0.5 * 30.0 + 1e-9, "g={g}: {odd} vs {truth}");
            assert!((odd - truth).abs() / truth < 0.02, "g={g}: {odd} vs {truth}");
        }
    }
}
