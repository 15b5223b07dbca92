//! Hover content as Markdown (the kernel performance card, the instruction card, the memory
//! accesses of a source line) and the text of inlay hints (the kernel summary, loops,
//! memory accesses): what both front ends show, as strings; placing it is theirs.
//!
//! The card answers, per target GPU, the questions a CUDA programmer asks first: how full
//! is the SM and why not fuller, how many waves, is it memory- or compute-bound and why,
//! how long will it take under each model, how much power and energy — and on what
//! assumptions.

use std::fmt::Write;

use crate::{FileAnalysis, KernelAnalysis, TargetAnalysis};

use crate::display::time_us as fmt_time;

/// "memory-bound", or "issue-bound, power-limited" where the board's power limit lowers the
/// clock the headline runs at by enough to be reported (`findings::power_limited`).
fn bound_label(r: &perf_models::Report) -> String {
    let bound = format!("{}-bound", r.headline.bound.name());
    if crate::findings::power_limited::lowered_clock(r).is_some() { format!("{bound}, power-limited") } else { bound }
}

/// The one-line summary used by inlay hints and code lenses: "≈ 1.24 ms · memory-bound ·
/// 72 W on A100".
pub fn summary(t: &TargetAnalysis) -> String {
    let mut parts = Vec::new();
    match &t.models {
        Ok(r) => {
            parts.push(format!("≈ {}", fmt_time(r.headline.time_us)));
            parts.push(bound_label(r));
        }
        Err(_) => parts.push("no time predicted".into()),
    }
    if let Ok(o) = &t.occupancy {
        parts.push(format!("occ {:.0}%", o.occupancy * 100.0));
    }
    if let Some(p) = &t.power {
        parts.push(format!("{:.0} W", p.watts));
    }
    format!("{} on {}", parts.join(" · "), t.gpu.id)
}

/// The Markdown card for a kernel. It is sized to be read without scrolling: with one
/// target GPU a short list (occupancy and resources, waves, the headline time and why,
/// power and energy, the paper models' times on one line); with several, one compact table
/// with a column per GPU. Every model's explanation and the assumptions are in the report
/// (the code lens opens it).
pub fn kernel_card(k: &KernelAnalysis) -> String {
    let mut s = String::new();
    let title = k.demangled.as_deref().unwrap_or(&k.name);
    // A bold line, not a heading: a heading's margins cost a line of the hover's height.
    let _ = writeln!(s, "**`{title}`**\n");
    let l = &k.launch;
    let src = match l.source {
        kernel_profile::LaunchSource::Setting => "settings",
        kernel_profile::LaunchSource::Annotation => "annotation",
        kernel_profile::LaunchSource::CallSite => "launch site",
        kernel_profile::LaunchSource::Default => "default — add a `// warpsight:` annotation",
    };
    let _ = write!(
        s,
        "launch: grid {}, block {}, {} B dynamic smem *({src})*",
        launch_spec::display_dims(l.grid),
        launch_spec::display_dims(l.block),
        l.dynamic_smem
    );
    match k.targets.as_slice() {
        [] => {
            let _ = writeln!(s, "\n");
        }
        [t] => {
            let _ = writeln!(s, "\n");
            target_section(&mut s, t);
        }
        many => {
            if let Some(t) = many.first() {
                let _ = write!(s, " · {}", resources(t));
            }
            let _ = writeln!(s, "\n");
            gpu_table(&mut s, many);
        }
    }
    let assumptions = k.targets.first().map_or(0, |t| t.profile.assumptions.len().saturating_sub(1));
    let _ = write!(s, "\n*Estimates from the PTX, not measurements");
    if let (true, Some(Ok(rep))) = (k.targets.len() > 1, k.targets.first().map(|t| &t.models)) {
        let names: Vec<&str> = rep.predictions.iter().map(|p| p.model).filter(|m| *m != rep.headline.model).collect();
        let _ = write!(s, "; headline model `{}`, paper models {}", rep.headline.model, names.join(", "));
    }
    if assumptions > 0 {
        let _ = write!(s, "; {assumptions} assumption{} in the report", if assumptions == 1 { "" } else { "s" });
    }
    let _ = writeln!(s, ".*");
    s
}

/// "10 regs/thread (ptxas), 4096 B smem/block".
fn resources(t: &TargetAnalysis) -> String {
    let r = &t.profile.resources;
    let how = crate::display::serde_name(&r.source);
    format!("{} regs/thread ({how}), {} B smem/block", r.registers_per_thread, r.static_smem_bytes)
}

/// The GPU's name without the vendor, for narrow places: "A100 80GB SXM4".
fn short_name(t: &TargetAnalysis) -> &str {
    t.gpu.name.strip_prefix("NVIDIA ").unwrap_or(&t.gpu.name)
}

/// The models other than the headline, with their times: "roofline 65.8 µs · mwp_cwp 279 µs".
fn paper_models(rep: &perf_models::Report) -> String {
    rep.predictions
        .iter()
        .filter(|p| p.model != rep.headline.model)
        .map(|p| {
            let flag = if rep.floor_violations.contains(&p.model) { " ⚠ below floor" } else { "" };
            format!("{} {}{flag}", p.model, fmt_time(p.time_us))
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

fn target_section(s: &mut String, t: &TargetAnalysis) {
    match &t.models {
        Ok(rep) => {
            let _ = writeln!(
                s,
                "**≈ {}**, {}-bound on **{}** ({})\n",
                fmt_time(rep.headline.time_us),
                rep.headline.bound.name(),
                t.gpu.name,
                t.gpu.id
            );
        }
        Err(_) => {
            let _ = writeln!(s, "**{}** ({})\n", t.gpu.name, t.gpu.id);
        }
    }
    match &t.occupancy {
        Ok(o) if o.blocks_per_sm > 0 => {
            let _ = writeln!(
                s,
                "- occupancy **{:.0}%** ({} blocks/SM, {}/{} warps), limited by {} · {}",
                o.occupancy * 100.0,
                o.blocks_per_sm,
                o.warps_per_sm,
                o.max_warps_per_sm,
                o.limiters.names().join(" + "),
                resources(t)
            );
        }
        Ok(o) => {
            let _ = writeln!(s, "- **cannot launch**: {}", o.reason.as_deref().unwrap_or("no block fits on an SM"));
        }
        Err(e) => {
            let _ = writeln!(s, "- occupancy unavailable: {e}");
        }
    }
    if let Some(w) = &t.waves {
        let _ = writeln!(s, "- {} wave(s) of {} blocks; last wave {:.0}% full", w.waves, w.blocks_per_wave, w.last_wave_fill * 100.0);
    }
    match &t.models {
        Err(why) => {
            let _ = writeln!(s, "- {why}");
        }
        Ok(rep) => {
            if let Some(p) = rep.predictions.iter().find(|p| p.model == rep.headline.model) {
                let _ = writeln!(s, "- why (`{}`): {}", p.model, p.explanation);
            }
        }
    }
    if let Some(p) = &t.power {
        let parts = p.top_contributions(3);
        let _ = writeln!(s, "- power **{:.0} W** ({} confidence): base {:.1} W, {}", p.watts, crate::display::serde_name(&p.confidence), p.base_watts, parts.join(", "));
    }
    if let Some(e) = t.energy_uj {
        let _ = writeln!(s, "- energy ≈ {} per launch", crate::display::energy_uj(e));
    }
    if let Ok(rep) = &t.models {
        let others = paper_models(rep);
        if !others.is_empty() {
            let _ = writeln!(s, "- paper models: {others}");
        }
    }
}

/// Several GPUs: one row per question, one column per GPU, four rows so that the card
/// fits above a kernel near the top of a file: time and bound, occupancy and waves, power
/// and energy, and the spread of the paper models.
fn gpu_table(s: &mut String, targets: &[TargetAnalysis]) {
    let cell = |f: &dyn Fn(&TargetAnalysis) -> String| targets.iter().map(|t| format!(" {} |", f(t))).collect::<String>();
    let _ = writeln!(s, "| |{}", cell(&|t| format!("**{}** ({})", short_name(t), t.gpu.id)));
    let _ = writeln!(s, "|---|{}", "---|".repeat(targets.len()));
    let _ = writeln!(
        s,
        "| time |{}",
        cell(&|t| match &t.models {
            Ok(r) => format!("**≈ {}**, {}-bound", fmt_time(r.headline.time_us), r.headline.bound.name()),
            Err(_) => "no time predicted".into(),
        })
    );
    let _ = writeln!(
        s,
        "| occupancy |{}",
        cell(&|t| {
            let occ = match &t.occupancy {
                Ok(o) if o.blocks_per_sm > 0 => format!("{:.0}% ({})", o.occupancy * 100.0, o.limiters.names().join(" + ")),
                Ok(_) => "cannot launch".into(),
                Err(_) => "unavailable".into(),
            };
            match &t.waves {
                Some(w) => format!("{occ}, {} wave{}", w.waves, if w.waves == 1 { "" } else { "s" }),
                None => occ,
            }
        })
    );
    let _ = writeln!(
        s,
        "| power |{}",
        cell(&|t| match (&t.power, t.energy_uj) {
            (Some(p), Some(e)) => format!("{:.0} W ({}), {}", p.watts, crate::display::serde_name(&p.confidence), crate::display::energy_uj(e)),
            (Some(p), None) => format!("{:.0} W ({})", p.watts, crate::display::serde_name(&p.confidence)),
            _ => "—".into(),
        })
    );
    let _ = writeln!(
        s,
        "| paper models |{}",
        cell(&|t| match &t.models {
            Ok(r) => {
                let others: Vec<f64> = r.predictions.iter().filter(|p| p.model != r.headline.model).map(|p| p.time_us).collect();
                let lo = others.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = others.iter().copied().fold(0.0, f64::max);
                if others.is_empty() { "—".into() } else { format!("{} – {}", fmt_time(lo), fmt_time(hi)) }
            }
            Err(_) => "—".into(),
        })
    );
    // Why a GPU has no time, once per distinct reason.
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for t in targets {
        if let Err(why) = &t.models {
            match reasons.iter_mut().find(|(w, _)| *w == why.as_str()) {
                Some((_, ids)) => ids.push(&t.gpu.id),
                None => reasons.push((why, vec![&t.gpu.id])),
            }
        }
    }
    for (why, ids) in reasons {
        let _ = writeln!(s, "\n{why} ({})", ids.join(", "));
    }
}

/// The SM unit that executes a class (CUDA C++ Programming Guide, "Arithmetic
/// Instructions" and the architecture whitepapers' SM diagrams).
fn unit(class: ptx_ir::InstrClass) -> &'static str {
    use ptx_ir::InstrClass::*;
    match class {
        IntAlu => "integer ALU (INT32 cores)",
        Fp32 => "FP32 cores",
        Fp64 => "FP64 units",
        Fp16 => "FP16/BF16 paths of the FP32 cores",
        Sfu => "special function units (SFU)",
        Tensor => "tensor cores",
        Conversion => "conversion (SFU or ALU, by type)",
        Move => "register moves (ALU)",
        Load(_) | Store(_) | Atomic(_) => "load/store units (LSU) and the memory system",
        Barrier | Fence => "the SM's barrier and memory-ordering logic",
        WarpLevel => "warp-level shuffle/vote logic",
        Branch | Call | Return => "the branch unit",
        Other => "no single unit",
    }
}

/// The Markdown card for one PTX instruction at `offset` in the analysed text, for the
/// primary target GPU.
pub fn instruction_card(k: &KernelAnalysis, module: &ptx_ir::Module, offset: u32) -> Option<String> {
    let func = module.function(&k.name)?;
    let instr = func.instrs.iter().find(|i| i.span.start <= offset && offset < i.span.end.max(i.span.start + 1))?;
    let t = k.targets.first()?;
    let mut s = format!("**`{}`** — class `{}`, {}", instr.opcode, instr.class.name(), unit(instr.class));
    let cls = instr.class.name();
    if let Some(lat) = t.gpu.instr_latency_cycles.get(&cls) {
        let _ = write!(s, " · latency ≈ {lat} cycles on {}", t.gpu.id);
    }
    let _ = write!(s, " · issue {} cycles/warp", t.gpu.issue_cycles(&cls));
    let _ = writeln!(s);
    if let Some(a) = t.profile.memory_accesses.iter().find(|a| a.ptx_line == instr.ptx_line) {
        let stride = a.stride_bytes.map(|b| format!(", stride {b} B")).unwrap_or_default();
        let _ = writeln!(
            s,
            "\n{} {}: **{}**{stride}, {} sector(s) per warp request, {:.1} executions per thread",
            a.space.name(),
            crate::display::serde_name(&a.kind),
            crate::display::serde_name(&a.class),
            a.transactions_per_request,
            a.executions
        );
        if let Some(w) = a.bank_conflict_ways {
            let _ = writeln!(s, "\nbank conflicts: {w}-way");
        }
    }
    Some(s)
}

/// Which parts the inlay hint after a kernel signature shows (the editor's `inlay`
/// setting).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayParts {
    pub occupancy: bool,
    pub bound: bool,
    pub time: bool,
    pub power: bool,
    pub loops: bool,
    pub memory: bool,
}

impl Default for InlayParts {
    fn default() -> InlayParts {
        InlayParts { occupancy: true, bound: true, time: true, power: true, loops: true, memory: true }
    }
}

/// The kernel summary hint, with the chosen parts: "occ 50% · memory-bound · ≈12.3 µs · 71 W".
pub fn kernel_label(t: &TargetAnalysis, p: &InlayParts) -> String {
    let mut parts = Vec::new();
    if p.occupancy
        && let Ok(o) = &t.occupancy {
            parts.push(format!("occ {:.0}%", o.occupancy * 100.0));
        }
    if let Ok(r) = &t.models {
        if p.bound {
            parts.push(bound_label(r));
        }
        if p.time {
            parts.push(format!("≈ {}", fmt_time(r.headline.time_us)));
        }
    }
    if p.power
        && let Some(pw) = &t.power {
            parts.push(format!("{:.0} W", pw.watts));
        }
    parts.join(" · ")
}

/// The hint of a loop: its trip count (with `?` when assumed, and `≤ N` when a counted
/// exit bounds an unknown count) and its share of the kernel's dynamic instructions,
/// "×64 · 93% of instructions", "×16? ≤256 · 80% of instructions". `func`: the kernel's lowered
/// function, whose loop blocks give the share exactly ([`loop_share`]).
pub fn loop_label(t: &TargetAnalysis, l: &kernel_profile::LoopInfo, func: Option<&ptx_ir::Function>) -> String {
    let share = loop_share(t, l, func);
    let count = match (l.trip_count, l.trip_bound) {
        (Some(n), _) => format!("×{n:.0}"),
        (None, Some(b)) => format!("×{:.0}? ≤{b:.0}", l.assumed_trip_count),
        (None, None) => format!("×{:.0}?", l.assumed_trip_count),
    };
    format!("{count} · {share:.0}% of instructions")
}

/// The share (in %) of the kernel's dynamic instructions executed inside a loop: the
/// profile's executions of the loop's blocks (the IR's natural loop whose header is on the
/// loop's PTX line, nested loops included) over all executions. Without the function, or
/// when no loop of it has that header line, the blocks executed at least the trip count's
/// times stand in for the loop (an approximation that misses loops some threads skip:
/// their blocks' executions are averages over all threads).
pub fn loop_share(t: &TargetAnalysis, l: &kernel_profile::LoopInfo, func: Option<&ptx_ir::Function>) -> f64 {
    let total = t.profile.counts.total_dynamic().max(1.0);
    let work = |b: &kernel_profile::BlockProfile| b.executions * b.instructions.len() as f64;
    let inside: f64 = match func.and_then(|f| f.loops.iter().find(|lp| lp.ptx_line == l.ptx_line)) {
        Some(lp) => t.profile.blocks.iter().filter(|b| lp.blocks.binary_search(&b.id).is_ok()).map(work).sum(),
        None => t.profile.blocks.iter().filter(|b| b.executions >= l.assumed_trip_count && l.assumed_trip_count > 1.0).map(work).sum(),
    };
    // `+ 0.0` turns the -0.0 of an empty sum into 0.0, which prints as `0`, not `-0`.
    (100.0 * inside / total).clamp(0.0, 100.0) + 0.0
}

/// The hint of a memory access: its class and sectors per request ("global coalesced ·
/// 4 sectors"), or for shared memory its bank conflict; `None` for a shared access
/// without conflicts.
pub fn memory_label(m: &kernel_profile::MemoryAccess) -> Option<String> {
    Some(match (m.space, m.bank_conflict_ways) {
        (kernel_profile::Space::Shared, Some(w)) if w > 1 => format!("{w}-way bank conflict"),
        (kernel_profile::Space::Shared, _) => return None,
        _ => format!("{} {} · {:.0} sectors", m.space.name(), crate::display::serde_name(&m.class), m.transactions_per_request),
    })
}

/// The Markdown list of the memory accesses on a source line, over every kernel of the
/// file (primary GPU), one item per distinct access; `None` when there are none.
/// `on_line` says whether an access's source position is the line asked about.
pub fn source_line_accesses(file: &FileAnalysis, on_line: impl Fn(&kernel_profile::MemoryAccess) -> bool) -> Option<String> {
    let mut parts = Vec::new();
    for k in &file.kernels {
        let Some(t) = k.targets.first() else { continue };
        for m in t.profile.memory_accesses.iter().filter(|m| on_line(m)) {
            let stride = m.stride_bytes.map(|b| format!(", stride {b} B")).unwrap_or_default();
            let bank = m.bank_conflict_ways.map(|w| format!(", {w}-way bank conflict")).unwrap_or_default();
            parts.push(format!("- {} {}: **{}**{stride}, {} sector(s)/request{bank}", m.space.name(), crate::display::serde_name(&m.kind), crate::display::serde_name(&m.class), m.transactions_per_request));
        }
    }
    parts.dedup();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::analyze;

    fn card(gpus: &[&str]) -> String {
        let (_, file) = analyze("transpose_naive", [32, 32, 1], [32, 8, 1], &[("param_2", 1024), ("param_3", 1024)], gpus);
        kernel_card(&file.kernels[0])
    }

    #[test]
    fn one_gpu_is_a_short_list() {
        let c = card(&["tesla-k20"]);
        // Title, launch, headline, six items and the footnote: readable without scrolling.
        assert!(c.lines().filter(|l| !l.trim().is_empty()).count() <= 12, "{c}");
        assert!(!c.contains("| "), "no table for one GPU:\n{c}");
        for needle in ["(tesla-k20)", "occupancy **", "-bound on **", "- power **", "- energy ≈", "- paper models: ", "not measurements"] {
            assert!(c.contains(needle), "card lacks `{needle}`:\n{c}");
        }
        // Power with its three largest contributions, in words and with the feature's name
        // (the K20 has a trained model).
        let power = c.lines().find(|l| l.starts_with("- power **")).unwrap_or_default();
        let parts: Vec<&str> = power.split(", ").skip(1).collect();
        assert_eq!(parts.len(), 3, "{power}");
        for part in parts {
            let label = part.split(" W from ").nth(1).and_then(|r| r.split(" (").next()).unwrap_or_default();
            assert!(!label.is_empty() && !label.contains('_') && part.ends_with(')'), "a contribution without a label: {part}");
        }
        // Times follow the one rounding rule.
        let (_, file) = analyze("transpose_naive", [32, 32, 1], [32, 8, 1], &[("param_2", 1024), ("param_3", 1024)], &["tesla-k20"]);
        let rep = file.kernels[0].targets[0].models.as_ref().expect("a prediction");
        assert!(c.contains(&format!("**≈ {}**", crate::display::time_us(rep.headline.time_us))), "{c}");
    }

    #[test]
    fn a_loop_that_never_runs_has_no_negative_share() {
        // row_sums-like: the unrolled body and a remainder loop of `cols & 3` = 0 trips.
        let (_, file) = analyze("saxpy", [16, 1, 1], [256, 1, 1], &[("param_0", 4096)], &["a100"]);
        let t = &file.kernels[0].targets[0];
        let l = kernel_profile::LoopInfo {
            ptx_line: 1,
            source_file: None,
            source_line: None,
            depth: 1,
            trip_count: Some(0.0),
            trip_count_expr: None,
            assumed_trip_count: 0.0,
            stated_at: None,
            trip_bound: None,
        };
        assert_eq!(loop_label(t, &l, None), "×0 · 0% of instructions");
        // An unknown count that a counted exit bounds says the bound.
        let bounded = kernel_profile::LoopInfo { trip_count: None, assumed_trip_count: 16.0, trip_bound: Some(256.0), ..l.clone() };
        assert!(loop_label(t, &bounded, None).starts_with("×16? ≤256 · "), "{}", loop_label(t, &bounded, None));
    }

    #[test]
    fn a_loop_some_threads_skip_keeps_its_share() {
        // spmv_csr_scalar: `if (row < num_rows) { for (...) }`. With twice as many threads
        // as rows, half the threads skip the loops, so their blocks run on average half the
        // trip count per thread; the loops' share of the work is lower than with every
        // thread busy, not gone.
        let share = |blocks: u32| {
            let (_, file) = analyze("spmv_csr", [blocks, 1, 1], [128, 1, 1], &[("param_0", 131072)], &["a100"]);
            let k = file.kernels.iter().find(|k| k.name.contains("scalar")).expect("the scalar kernel");
            let t = &k.targets[0];
            let func = file.module.function(&k.name);
            t.profile.loops.iter().filter(|l| l.depth == 1).map(|l| loop_share(t, l, func)).sum::<f64>()
        };
        let (busy, half) = (share(1024), share(2048));
        assert!(busy > 20.0, "with every thread on a row the loops hold {busy:.1} % of the work");
        assert!(half > busy / 3.0 && half < busy, "half the threads idle: {half:.1} % (all busy: {busy:.1} %)");
    }

    #[test]
    fn several_gpus_are_one_table_with_a_column_each() {
        let c = card(&["a100", "tesla-k20"]);
        let table: Vec<&str> = c.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(table.len(), 6, "a header, its rule and four rows:\n{c}");
        assert!(table.iter().all(|row| row.matches('|').count() == 4), "a label and two GPU columns per row:\n{c}");
        assert!(table[0].contains("(a100-sxm4-80gb)") && table[0].contains("(tesla-k20)"), "{}", table[0]);
        for row in ["| time |", "| occupancy |", "| power |", "| paper models |"] {
            assert!(table.iter().any(|l| l.starts_with(row)), "no `{row}` row:\n{c}");
        }
        assert!(c.lines().filter(|l| !l.trim().is_empty()).count() <= 9, "{c}");
        assert!(c.contains("paper models roofline, mwp_cwp"), "the footnote names the models:\n{c}");
    }
}
