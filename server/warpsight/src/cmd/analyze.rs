//! `warpsight analyze PATH... [--format table|json]`: per kernel, the instruction mix, the
//! loops and their trip counts, resources, the launch, occupancy per GPU (docs/cli.md).

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use analysis::report::{self, AnalyzeReport, FileReport, KernelReport};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::cmd::Exit;
use crate::input::{self, LaunchArgs, SourceKind};

#[derive(clap::Args)]
pub struct Args {
    /// Files or directories (searched recursively for .ptx, .cu and .cuh files).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub launch: LaunchArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// Prints each file kernel by kernel as it is analysed ([`input::load_streamed`]): the
/// table and the JSON are written as they are produced, so memory stays a small multiple
/// of the largest input instead of holding every kernel's results and the whole JSON
/// document (15 and 38 times a 100 MB input before).
pub fn run(args: Args) -> anyhow::Result<Exit> {
    // Flags are checked once, before anything is printed: a bad flag (an unknown `--gpu`
    // among them) is one error line and exit 2, never an empty report.
    args.launch.settings()?;
    for note in args.launch.float_arg_notes() {
        eprintln!("note: {note}");
    }
    let input::Collected { files, notes } = input::collect_files(&args.paths);
    for note in notes {
        eprintln!("note: {note}");
    }
    let exit = Cell::new(Exit::Success);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let load = |file: anyhow::Result<PathBuf>| -> Option<input::Streamed> {
        let file = match file {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: {e}");
                exit.set(Exit::Usage);
                return None;
            }
        };
        match input::load_streamed(&file, &args.launch) {
            Ok(loaded) => {
                if loaded.has_errors() && exit.get() == Exit::Success {
                    exit.set(Exit::InputErrors);
                }
                Some(loaded)
            }
            Err(e) => {
                eprintln!("error: {e:#}");
                exit.set(Exit::Usage);
                None
            }
        }
    };
    match args.format {
        Format::Table => {
            for file in files {
                if let Some(mut loaded) = load(file) {
                    print_table(&mut out, &mut loaded).context("writing to stdout")?;
                }
            }
        }
        Format::Json => {
            // The documented `AnalyzeReport`, each file loaded and each kernel analysed
            // when its turn comes (`FilesJson`, `KernelsJson`).
            let files = FilesJson { files: RefCell::new(Some(Box::new(files.into_iter().filter_map(load)))) };
            let doc = AnalyzeReport { warpsight: env!("CARGO_PKG_VERSION").to_string(), files };
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
    }
    out.flush().context("writing to stdout")?;
    Ok(exit.get())
}

/// The `files` array, loading each file when its turn comes.
struct FilesJson<'a> {
    files: RefCell<Option<Box<dyn Iterator<Item = input::Streamed> + 'a>>>,
}

impl Serialize for FilesJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        if let Some(files) = self.files.borrow_mut().take() {
            for mut loaded in files {
                let kind = match loaded.kind {
                    SourceKind::Ptx => report::SourceKind::Ptx,
                    SourceKind::Cuda => report::SourceKind::Cu,
                };
                let k = &loaded.kernels;
                let mut file = FileReport::header(&loaded.display_path, kind, k.text(), &k.syntax, k.target.as_deref(), k.version, &k.unknown_gpus);
                file.notes = Some(std::mem::take(&mut loaded.notes));
                file.compiler_diagnostics = Some(std::mem::take(&mut loaded.compiler_errors));
                seq.serialize_element(&file.with_kernels(KernelsJson { kernels: RefCell::new(&mut loaded.kernels) }))?;
            }
        }
        SerializeSeq::end(seq)
    }
}

/// A file's `kernels`, analysed and written one at a time (a kernel's report borrows its
/// memory accesses, most of it for a long kernel, from the analysis).
struct KernelsJson<'a> {
    kernels: RefCell<&'a mut analysis::KernelStream>,
}

impl Serialize for KernelsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut kernels = self.kernels.borrow_mut();
        let mut seq = serializer.serialize_seq(Some(kernels.remaining()))?;
        while let Some(k) = kernels.next_kernel() {
            seq.serialize_element(&KernelReport::new(&k))?;
        }
        SerializeSeq::end(seq)
    }
}

/// The table of one file: its header, then each kernel as it is analysed.
fn print_table(out: &mut impl Write, loaded: &mut input::Streamed) -> std::io::Result<()> {
    print_file_header(out, loaded)?;
    if loaded.kernels.remaining() == 0 {
        writeln!(out, "  no kernels")?;
    }
    while let Some(k) = loaded.kernels.next_kernel() {
        print_kernel(out, &k)?;
    }
    writeln!(out)?;
    Ok(())
}

/// The file's name, PTX target and version, notes, syntax and compiler errors, unknown GPUs.
fn print_file_header(out: &mut impl Write, loaded: &input::Streamed) -> std::io::Result<()> {
    let a = &loaded.kernels;
    match (a.target.as_deref(), a.version) {
        (Some(target), Some((x, y))) => writeln!(out, "{}  ({target}, PTX {x}.{y})", loaded.display_path)?,
        _ if a.text().is_empty() => writeln!(out, "{}  (no PTX)", loaded.display_path)?,
        _ => writeln!(out, "{}", loaded.display_path)?,
    }
    for note in &loaded.notes {
        writeln!(out, "  note: {note}")?;
    }
    let index = ptx::LineIndex::new(a.text());
    for d in &a.syntax {
        let lc = index.line_col(d.span.start);
        writeln!(out, "  {} at PTX line {}:{}: {}", d.severity.name(), lc.line + 1, lc.col + 1, d.message)?;
    }
    for d in &loaded.compiler_errors {
        writeln!(out, "  {d}")?;
    }
    for (id, close) in &a.unknown_gpus {
        writeln!(out, "  unknown GPU `{id}` (closest: {})", close.join(", "))?;
    }
    Ok(())
}

/// One kernel: launch and resources, instruction mix, loops, each GPU, findings,
/// assumptions.
fn print_kernel(out: &mut impl Write, k: &analysis::KernelAnalysis) -> std::io::Result<()> {
    let title = k.demangled.as_deref().unwrap_or(&k.name);
    writeln!(out, "\n  kernel {title}")?;
    if k.demangled.is_some() {
        writeln!(out, "    ptx name     {}", k.name)?;
    }
    print_launch_and_resources(out, k)?;
    // Launch-dependent, GPU-independent facts come from the primary target's profile.
    let profile = k.targets.first().map(|t| &t.profile);
    print_instruction_mix(out, k, profile)?;
    if let Some(p) = profile {
        print_loops(out, &p.loops)?;
    }
    for t in &k.targets {
        print_target(out, t)?;
    }
    print_findings(out, &k.findings)?;
    if let Some(p) = profile {
        for a in p.assumptions.iter().skip(1) {
            writeln!(out, "    assumption   {a}")?;
        }
    }
    Ok(())
}

fn print_launch_and_resources(out: &mut impl Write, k: &analysis::KernelAnalysis) -> std::io::Result<()> {
    let l = &k.launch;
    let src = analysis::display::serde_name(&l.source);
    writeln!(out, "    launch       grid {}, block {}, dynamic smem {} B  ({src})", analysis::launch::display_dims(l.grid), analysis::launch::display_dims(l.block), l.dynamic_smem)?;
    if !l.args.is_empty() {
        let args: Vec<String> = l.args.iter().map(|(k, v)| format!("{k}={v}")).collect();
        writeln!(out, "    arguments    {}", args.join(" "))?;
    }
    let declared: Vec<String> = k.declared_registers.iter().map(|(t, n)| format!("{n} .{t}")).collect();
    writeln!(out, "    registers    declared {}", if declared.is_empty() { "none".into() } else { declared.join(", ") })?;
    if let Some(t) = k.targets.first() {
        let r = &t.profile.resources;
        let how = analysis::display::serde_name(&r.source);
        writeln!(out, "                 {} per thread ({how})", r.registers_per_thread)?;
        writeln!(out, "    shared mem   {} B static, {} B dynamic per block", r.static_smem_bytes, l.dynamic_smem)?;
        if r.spill_store_bytes + r.spill_load_bytes > 0 {
            writeln!(out, "    spills       {} B stores, {} B loads", r.spill_store_bytes, r.spill_load_bytes)?;
        }
    }
    Ok(())
}

/// Static and dynamic per-thread counts by class, every class either has.
fn print_instruction_mix(out: &mut impl Write, k: &analysis::KernelAnalysis, profile: Option<&kernel_profile::KernelProfile>) -> std::io::Result<()> {
    writeln!(out, "    instruction mix       static   dynamic/thread")?;
    let mut classes: Vec<_> = k.static_mix.keys().copied().collect();
    if let Some(p) = profile {
        for c in p.counts.dynamic.keys() {
            if !classes.contains(c) {
                classes.push(*c);
            }
        }
    }
    classes.sort();
    for c in &classes {
        let st = k.static_mix.get(c).copied().unwrap_or(0);
        let dy = profile.and_then(|p| p.counts.dynamic.get(c)).map(|v| format!("{v:>12.1}")).unwrap_or_else(|| format!("{:>12}", "-"));
        writeln!(out, "      {:<18}{st:>8}  {dy}", c.name())?;
    }
    let total_static: u64 = k.static_mix.values().sum();
    let total_dyn = profile.map(|p| format!("{:>12.1}", p.counts.total_dynamic())).unwrap_or_default();
    writeln!(out, "      {:<18}{total_static:>8}  {total_dyn}", "total")
}

/// Every loop with where it is, its depth and its trip count (or what was assumed).
fn print_loops(out: &mut impl Write, loops: &[kernel_profile::LoopInfo]) -> std::io::Result<()> {
    if loops.is_empty() {
        writeln!(out, "    loops        none")?;
    }
    for lp in loops {
        let at = match lp.source_line {
            Some(line) => format!("line {line}"),
            None => format!("PTX line {}", lp.ptx_line),
        };
        let count = match (lp.trip_count, &lp.trip_count_expr, lp.stated_at) {
            (Some(n), _, Some(at)) => format!("{n} (stated by the annotation at line {at})"),
            (Some(n), Some(e), None) => format!("{n} (= {e})"),
            (Some(n), None, None) => format!("{n}"),
            (None, Some(e), _) => format!("{e}, unresolved: assumed {}", lp.assumed_trip_count),
            (None, None, _) => format!("unknown: assumed {}", lp.assumed_trip_count),
        };
        writeln!(out, "    loop         {at} (depth {}): trip count {count}", lp.depth)?;
    }
    Ok(())
}

/// One GPU: occupancy and waves, the headline and every model's time, power and energy.
fn print_target(out: &mut impl Write, t: &analysis::TargetAnalysis) -> std::io::Result<()> {
    match &t.occupancy {
        Ok(o) => {
            let waves = t.waves.as_ref().map(|w| format!(", {} wave(s), last {:.0}% full", w.waves, w.last_wave_fill * 100.0)).unwrap_or_default();
            let lim = o.limiters.names().join("+");
            writeln!(
                out,
                "    {:<14} occupancy {:.0}% ({} blocks/SM, {}/{} warps; limited by {lim}){waves}",
                t.gpu.id,
                o.occupancy * 100.0,
                o.blocks_per_sm,
                o.warps_per_sm,
                o.max_warps_per_sm
            )?;
            if let Some(r) = &o.reason {
                writeln!(out, "                   cannot launch: {r}")?;
            }
        }
        Err(e) => writeln!(out, "    {:<14} occupancy: {e}", t.gpu.id)?,
    }
    match &t.models {
        Err(why) => writeln!(out, "                   {why}")?,
        Ok(r) => {
            let time = analysis::display::time_us;
            writeln!(
                out,
                "                   ≈ {} {}-bound (headline: {}; {})",
                time(r.headline.time_us),
                r.headline.bound.name(),
                r.headline.model,
                r.headline.rule
            )?;
            for p in &r.predictions {
                let floor = if r.floor_violations.contains(&p.model) { " [below the roofline floor]" } else { "" };
                writeln!(out, "                   {:<11}{:>11}  {:<8} {:<6}  {}{floor}", p.model, time(p.time_us), p.bound.name(), p.confidence.name(), p.explanation)?;
            }
            for (m, why) in &r.not_applicable {
                writeln!(out, "                   {m:<11} not applicable: {why}")?;
            }
        }
    }
    if let Some(p) = &t.power {
        let parts = p.top_contributions(3);
        let energy = t.energy_uj.map(|e| format!("; energy ≈ {}", analysis::display::energy_uj(e))).unwrap_or_default();
        writeln!(out, "                   power {:.0} W ({} confidence; base {:.1} W, {}){energy}", p.watts, analysis::display::serde_name(&p.confidence), p.base_watts, parts.join(", "))?;
    }
    Ok(())
}

/// Each finding with where it is and the titles of its fixes.
fn print_findings(out: &mut impl Write, findings: &[analysis::findings::Finding]) -> std::io::Result<()> {
    for f in findings {
        let at = match (&f.source_file, f.source_line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            _ => format!("PTX line {}", f.ptx_line),
        };
        writeln!(out, "    {:<12} [{}] {at}: {}", f.severity.name(), f.code, f.message)?;
        for fix in &f.fixes {
            writeln!(out, "                 fix: {}", fix.title)?;
        }
    }
    Ok(())
}
