//! The inputs every model accepts, checked once before any model runs.
//!
//! Why: the models multiply per-thread counts by threads, latencies and cycles. A profile
//! whose counts are absurd (nested loops with a trip count of 10^308 multiply to infinity)
//! made some models' arithmetic overflow; each such model then quietly dropped out, and
//! the headline fell back to the roofline floor, a microsecond for a kernel that would
//! never finish. Instead the whole prediction is refused here with the reason, and the
//! bounds below keep every model's arithmetic finite: at most 10^15 instructions per
//! thread ([`kernel_profile::MAX_EXECUTIONS_PER_THREAD`]) times at most 2^64 threads is
//! about 10^34, and no model multiplies that by more than a few latencies or cycle counts,
//! far from `f64::MAX` (about 1.8 × 10^308).

use kernel_profile::{KernelProfile, MAX_EXECUTIONS_PER_THREAD};

/// `Ok` when the models can run on `profile`; otherwise why not, as a sentence that
/// starts with "cannot predict:".
pub fn check(profile: &KernelProfile) -> Result<(), String> {
    let l = &profile.launch;
    if l.checked_total_threads().is_none() {
        let [gx, gy, gz] = l.grid;
        let [bx, by, bz] = l.block;
        return Err(format!(
            "cannot predict: the launch (grid {gx}×{gy}×{gz}, block {bx}×{by}×{bz}) has more than 2^64 threads"
        ));
    }
    let c = &profile.counts;
    let bad = |v: f64| !(v.is_finite() && v >= 0.0);
    let refuse = |what: String, v: f64| Err(format!("cannot predict: {what} is {v}, not a finite, non-negative number"));
    if let Some((k, v)) = c.dynamic.iter().find(|(_, v)| bad(**v)) {
        return refuse(format!("the dynamic count of `{}`", k.name()), *v);
    }
    for (what, v) in [("the barrier count", c.barriers), ("the fence count", c.fences), ("the atomic count", c.atomics)] {
        if bad(v) {
            return refuse(what.to_string(), v);
        }
    }
    for a in &profile.memory_accesses {
        if bad(a.executions) {
            return refuse(format!("the executions of the memory access at PTX line {}", a.ptx_line), a.executions);
        }
        if bad(a.transactions_per_request) {
            return refuse(format!("the sectors per request of the memory access at PTX line {}", a.ptx_line), a.transactions_per_request);
        }
    }
    if let Some(b) = profile.blocks.iter().find(|b| bad(b.executions)) {
        return refuse(format!("the executions of basic block {}", b.id), b.executions);
    }
    let total = c.total_dynamic();
    let busiest = profile.blocks.iter().map(|b| b.executions).fold(0.0, f64::max);
    if total > MAX_EXECUTIONS_PER_THREAD || busiest >= MAX_EXECUTIONS_PER_THREAD {
        let loops: Vec<String> = profile
            .loops
            .iter()
            .filter(|l| l.assumed_trip_count > 1.0)
            .take(8)
            .map(|l| match l.source_line {
                Some(line) => format!("line {line} ×{:.3e}", l.assumed_trip_count),
                None => format!("PTX line {} ×{:.3e}", l.ptx_line, l.assumed_trip_count),
            })
            .collect();
        let why = if loops.is_empty() { String::new() } else { format!(" (loop trip counts: {})", loops.join(", ")) };
        return Err(format!(
            "cannot predict: each thread would execute about {:.3e} instructions, more than {MAX_EXECUTIONS_PER_THREAD:e} (days of run time at any clock){why}; give the loops' real trip counts (`--arg NAME=VALUE`, the `args` setting, or a `// warpsight: trips=N` comment above a loop) or a smaller default trip count",
            total.max(busiest)
        ));
    }
    Ok(())
}
