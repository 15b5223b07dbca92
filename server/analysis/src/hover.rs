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

fn fmt_time(us: f64) -> String {
    if us >= 1000.0 { format!("{:.2} ms", us / 1000.0) } else { format!("{us:.2} µs") }
}

/// The one-line summary used by inlay hints and code lenses: "≈ 1.24 ms · memory-bound ·
/// 72 W on A100".
pub fn summary(t: &TargetAnalysis) -> String {
    let mut parts = Vec::new();
    match &t.models {
        Ok(r) => {
            parts.push(format!("≈ {}", fmt_time(r.headline.time_us)));
            parts.push(format!("{}-bound", r.headline.bound.name()));
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

/// The Markdown card for a kernel.
pub fn kernel_card(k: &KernelAnalysis) -> String {
    let mut s = String::new();
    let title = k.demangled.as_deref().unwrap_or(&k.name);
    let _ = writeln!(s, "### `{title}`\n");
    let l = &k.launch;
    let src = match l.source {
        kernel_profile::LaunchSource::Setting => "settings",
        kernel_profile::LaunchSource::Annotation => "annotation",
        kernel_profile::LaunchSource::CallSite => "launch site",
        kernel_profile::LaunchSource::Default => "default — add a `// warpsight:` annotation",
    };
    let _ = writeln!(
        s,
        "launch: grid {}, block {}, {} B dynamic smem *({src})*\n",
        launch_spec::display_dims(l.grid),
        launch_spec::display_dims(l.block),
        l.dynamic_smem
    );
    for t in &k.targets {
        target_section(&mut s, t);
    }
    if let Some(t) = k.targets.first() {
        let assumptions: Vec<&String> = t.profile.assumptions.iter().skip(1).collect();
        if !assumptions.is_empty() {
            let _ = writeln!(s, "**Assumptions**\n");
            for a in assumptions {
                let _ = writeln!(s, "- {a}");
            }
        }
    }
    s
}

fn target_section(s: &mut String, t: &TargetAnalysis) {
    let _ = writeln!(s, "---\n**{}** ({})\n", t.gpu.name, t.gpu.id);
    let r = &t.profile.resources;
    let how = match r.source {
        kernel_profile::ResourceSource::Ptxas => "ptxas",
        kernel_profile::ResourceSource::Estimate => "estimate",
        kernel_profile::ResourceSource::Given => "given",
    };
    match &t.occupancy {
        Ok(o) if o.blocks_per_sm > 0 => {
            let _ = writeln!(
                s,
                "- occupancy **{:.0}%** ({} blocks/SM, {}/{} warps), limited by {} · {} regs/thread ({how}), {} B smem/block",
                o.occupancy * 100.0,
                o.blocks_per_sm,
                o.warps_per_sm,
                o.max_warps_per_sm,
                o.limiters.names().join(" + "),
                r.registers_per_thread,
                r.static_smem_bytes
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
    if let Err(why) = &t.models {
        let _ = writeln!(s, "- {why}");
    }
    if let Ok(rep) = &t.models {
        if let Some(p) = rep.predictions.iter().find(|p| p.mwp.is_some() && p.model == "mwp_cwp") {
            let _ = writeln!(s, "- {}", p.explanation);
        }
        let _ = writeln!(
            s,
            "- **≈ {}**, {}-bound (headline: `{}`, {})\n",
            fmt_time(rep.headline.time_us),
            rep.headline.bound.name(),
            rep.headline.model,
            rep.headline.rule
        );
        let _ = writeln!(s, "| model | time | bound | confidence |\n|---|---|---|---|");
        for p in &rep.predictions {
            let flag = if rep.floor_violations.contains(&p.model) { " ⚠ below floor" } else { "" };
            let _ = writeln!(s, "| {} | {}{flag} | {} | {} |", p.model, fmt_time(p.time_us), p.bound.name(), p.confidence.name());
        }
        let _ = writeln!(s);
    }
    if let Some(p) = &t.power {
        let parts = p.top_contributions(3);
        let _ = writeln!(s, "- power **{:.0} W** ({} confidence): base {:.1} W, {}", p.watts, p.confidence, p.base_watts, parts.join(", "));
        if let Some(e) = t.energy_uj {
            let _ = writeln!(s, "- energy ≈ {:.1} µJ per launch", e);
        }
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
            "\n{} {:?}: **{:?}**{stride}, {} sector(s) per warp request, {:.1} executions per thread",
            a.space.name(),
            a.kind,
            a.class,
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
            parts.push(format!("{}-bound", r.headline.bound.name()));
        }
        if p.time {
            parts.push(if r.headline.time_us >= 1000.0 { format!("≈{:.2} ms", r.headline.time_us / 1000.0) } else { format!("≈{:.1} µs", r.headline.time_us) });
        }
    }
    if p.power
        && let Some(pw) = &t.power {
            parts.push(format!("{:.0} W", pw.watts));
        }
    parts.join(" · ")
}

/// The hint of a loop: its trip count (with `?` when assumed) and its share of the
/// kernel's dynamic instructions, "×64 · 93% of instructions".
pub fn loop_label(t: &TargetAnalysis, l: &kernel_profile::LoopInfo) -> String {
    let share = loop_share(t, l);
    let count = match l.trip_count {
        Some(n) => format!("×{n:.0}"),
        None => format!("×{:.0}?", l.assumed_trip_count),
    };
    format!("{count} · {share:.0}% of instructions")
}

/// The share (in %) of the kernel's dynamic instructions executed inside a loop.
pub fn loop_share(t: &TargetAnalysis, l: &kernel_profile::LoopInfo) -> f64 {
    let total = t.profile.counts.total_dynamic().max(1.0);
    // Blocks are not tagged with their loop in the profile; approximate with the blocks
    // whose execution count is at least the loop's trip count times the outer ones.
    let inside: f64 = t
        .profile
        .blocks
        .iter()
        .filter(|b| b.executions >= l.assumed_trip_count && l.assumed_trip_count > 1.0)
        .map(|b| b.executions * b.instructions.len() as f64)
        .sum();
    (100.0 * inside / total).clamp(0.0, 100.0)
}

/// The hint of a memory access: its class and sectors per request ("global coalesced ·
/// 4 sectors"), or for shared memory its bank conflict; `None` for a shared access
/// without conflicts.
pub fn memory_label(m: &kernel_profile::MemoryAccess) -> Option<String> {
    Some(match (m.space, m.bank_conflict_ways) {
        (kernel_profile::Space::Shared, Some(w)) if w > 1 => format!("{w}-way bank conflict"),
        (kernel_profile::Space::Shared, _) => return None,
        _ => format!("{} {:?} · {:.0} sectors", m.space.name(), m.class, m.transactions_per_request).to_lowercase(),
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
            parts.push(format!("- {} {:?}: **{:?}**{stride}, {} sector(s)/request{bank}", m.space.name(), m.kind, m.class, m.transactions_per_request));
        }
    }
    parts.dedup();
    (!parts.is_empty()).then(|| parts.join("\n"))
}
