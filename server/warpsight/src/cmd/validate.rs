//! `warpsight validate FILE...`: measured kernel times against every model's prediction
//! (docs/cli.md § validate, docs/validation.md).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use serde::Serialize;

use crate::cmd::Exit;
use crate::validate::{self, Import, gpu_benches, kernel_tuner, ncu, rows, run};

#[derive(clap::Args)]
pub struct Args {
    /// Rows files (.csv, .json, .jsonl) and import specifications (.toml).
    pub files: Vec<PathBuf>,
    /// Kernel Tuner cache files (.json or .json.gz) to import together (give --source).
    #[arg(long = "kernel-tuner", value_name = "CACHE")]
    pub kernel_tuner: Vec<PathBuf>,
    /// Nsight Compute raw-page CSV exports (`ncu --csv --page raw`) to import (give --source).
    #[arg(long = "ncu", value_name = "CSV")]
    pub ncu: Vec<PathBuf>,
    /// A folder of gpu-benches result tables to import (with --gpu-benches-kernels).
    #[arg(long = "gpu-benches", value_name = "DIR")]
    pub gpu_benches: Option<PathBuf>,
    /// The equivalent kernels' folder for --gpu-benches (recorded PTX and ptxas reports).
    #[arg(long = "gpu-benches-kernels", value_name = "DIR", default_value = "tests/fixtures/measured")]
    pub gpu_benches_kernels: PathBuf,
    /// Importers: the kernel source (.cu or .ptx).
    #[arg(long, value_name = "FILE")]
    pub source: Option<PathBuf>,
    /// Importers: the kernel (Kernel Tuner: default the cache's; ncu: only these rows).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Kernel Tuner: the problem size, X, XxY or XxYxZ (default: the cache's).
    #[arg(long = "problem-size", value_name = "DIMS")]
    pub problem_size: Option<String>,
    /// Kernel Tuner: tuning parameters that divide the problem's x size (comma-separated).
    #[arg(long = "grid-div-x", value_name = "NAMES", value_delimiter = ',')]
    pub grid_div_x: Option<Vec<String>>,
    #[arg(long = "grid-div-y", value_name = "NAMES", value_delimiter = ',')]
    pub grid_div_y: Option<Vec<String>>,
    #[arg(long = "grid-div-z", value_name = "NAMES", value_delimiter = ',')]
    pub grid_div_z: Option<Vec<String>>,
    /// Importers: a preprocessor definition NAME[=VALUE] for every row (repeatable).
    #[arg(long = "define", short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// Importers: a kernel argument NAME=VALUE for every row (repeatable).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Importers: the GPU (id, alias or device name) when the file does not name it.
    #[arg(long)]
    pub gpu: Option<String>,
    /// Importers: group name of the imported rows.
    #[arg(long)]
    pub group: Option<String>,
    /// Importers: compile .cu sources for this architecture (default: each GPU's).
    #[arg(long)]
    pub arch: Option<String>,
    /// Kernel Tuner: the SM clock the configurations were timed at, where it was locked
    /// (MHz; a configuration's `nvml_gr_clock` takes precedence).
    #[arg(long = "locked-clock", value_name = "MHZ")]
    pub locked_clock: Option<f64>,
    /// Kernel Tuner: take N configurations (seeded, stratified; plus each file's best);
    /// gpu-benches: at most N rows per sweep.
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    /// Kernel Tuner: the sampling seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Show only this model (`headline`, `roofline`, ...).
    #[arg(long)]
    pub model: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The nvcc to compile .cu sources with.
    #[arg(long)]
    pub nvcc: Option<PathBuf>,
    /// An include directory for .cu sources (repeatable).
    #[arg(long = "include", short = 'I', value_name = "DIR")]
    pub includes: Vec<PathBuf>,
    /// Never compile: use recorded PTX only.
    #[arg(long)]
    pub no_compile: bool,
    /// Do not read or write the compile cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Trip count assumed for loops whose count stays unknown.
    #[arg(long, value_name = "N")]
    pub default_trip_count: Option<f64>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// The JSON output (docs/cli.md § validate).
#[derive(Serialize)]
pub struct Report {
    pub warpsight: &'static str,
    pub counts: Counts,
    pub notes: Vec<String>,
    pub summary: analysis::validation::Summary,
    pub rows: Vec<run::RowReport>,
}

#[derive(Serialize, Default)]
pub struct Counts {
    pub rows: usize,
    pub analysed: usize,
    pub skipped: usize,
    pub failed: usize,
}

/// `NAME=VALUE` items of the command line as a rows-format list.
fn defines_of(items: &[String]) -> anyhow::Result<Option<rows::Defines>> {
    if items.is_empty() {
        return Ok(None);
    }
    let v: rows::Defines = serde_json::from_value(serde_json::Value::Array(items.iter().map(|s| serde_json::Value::String(s.clone())).collect()))
        .map_err(|e| anyhow::anyhow!("--define: {e}"))?;
    Ok(Some(v))
}

fn args_of(items: &[String]) -> anyhow::Result<Option<rows::Args>> {
    if items.is_empty() {
        return Ok(None);
    }
    let v: rows::Args = serde_json::from_value(serde_json::Value::Array(items.iter().map(|s| serde_json::Value::String(s.clone())).collect()))
        .map_err(|e| anyhow::anyhow!("--arg: {e}"))?;
    Ok(Some(v))
}

/// The imports the command line names, each with its base folder.
pub fn imports(args: &Args) -> anyhow::Result<Vec<(Import, PathBuf)>> {
    let here = PathBuf::from(".");
    let mut out = Vec::new();
    for f in &args.files {
        if f.extension().is_some_and(|e| e == "toml") {
            out.extend(validate::imports_of_spec(f)?);
        } else {
            out.push((Import::Rows { files: vec![f.clone()] }, here.clone()));
        }
    }
    let source = || args.source.clone().context("give the kernel source with --source");
    if !args.kernel_tuner.is_empty() {
        let problem_size = match &args.problem_size {
            None => None,
            Some(t) => Some(
                analysis::launch::parse_dims(t).map_err(|e| anyhow::anyhow!("--problem-size {e}: expected X, XxY or XxYxZ"))?.iter().map(|&d| u64::from(d)).collect::<Vec<_>>(),
            ),
        };
        out.push((
            Import::KernelTuner(kernel_tuner::Import {
                files: args.kernel_tuner.clone(),
                source: source()?,
                kernel: args.kernel.clone(),
                problem_size,
                grid_div_x: args.grid_div_x.clone(),
                grid_div_y: args.grid_div_y.clone(),
                grid_div_z: args.grid_div_z.clone(),
                defines: defines_of(&args.defines)?,
                args: args_of(&args.args)?,
                gpu: args.gpu.clone(),
                sample: args.sample,
                seed: args.seed,
                group: args.group.clone(),
                arch: args.arch.clone(),
                clock_mhz: args.locked_clock,
            }),
            here.clone(),
        ));
    }
    if !args.ncu.is_empty() {
        out.push((
            Import::Ncu(ncu::Import {
                files: args.ncu.clone(),
                source: source()?,
                kernel: args.kernel.clone(),
                gpu: args.gpu.clone(),
                defines: defines_of(&args.defines)?,
                args: args_of(&args.args)?,
                group: args.group.clone(),
                arch: args.arch.clone(),
            }),
            here.clone(),
        ));
    }
    if let Some(dir) = &args.gpu_benches {
        out.push((Import::GpuBenches(gpu_benches::Import { dir: dir.clone(), kernels: args.gpu_benches_kernels.clone(), sets: None, sample: args.sample }), here.clone()));
    }
    if out.is_empty() {
        bail!("nothing to validate: give rows files, an import specification (.toml), --kernel-tuner, --ncu or --gpu-benches");
    }
    Ok(out)
}

/// Loads and analyses everything the command line names: the rows with their analyses
/// (for `validate`, and for commands that fit parameters to the same rows).
pub fn load_and_analyse(args: &Args) -> anyhow::Result<(Vec<run::RowResult>, Vec<String>)> {
    load_and_analyse_where(args, |_| true)
}

/// [`load_and_analyse`] on the rows `keep` accepts (the others are neither compiled nor
/// analysed).
pub fn load_and_analyse_where(args: &Args, keep: impl Fn(&rows::Row) -> bool) -> anyhow::Result<(Vec<run::RowResult>, Vec<String>)> {
    let mut loaded = validate::load(&imports(args)?)?;
    loaded.rows.retain(|r| keep(r));
    let opts = run::CompileOptions {
        nvcc: args.nvcc.clone(),
        include_dirs: args.includes.clone(),
        no_compile: args.no_compile,
        no_cache: args.no_cache,
        default_trip_count: args.default_trip_count,
    };
    if let Some(t) = args.default_trip_count
        && !(t.is_finite() && t >= 0.0)
    {
        bail!("--default-trip-count must be a non-negative number");
    }
    Ok((run::analyse(loaded.rows, &opts), loaded.notes))
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let (results, notes) = load_and_analyse(&args)?;
    let observations: Vec<analysis::validation::Observation> = results.iter().filter_map(run::RowResult::observation).collect();
    let mut summary = analysis::validation::summarize(&observations);
    if let Some(m) = &args.model {
        // With no row analysed there are no predictions to name: the rows' failures are
        // the report, not the model.
        if !summary.models.is_empty() && !summary.models.contains(m) {
            bail!("--model `{m}`: no such model among the predictions (models: {})", summary.models.join(", "));
        }
        summary.models.retain(|x| x == m);
        summary.models_by_gpu.retain(|x| &x.model == m);
        summary.groups.retain(|x| &x.model == m);
    }
    let mut counts = Counts { rows: results.len(), ..Counts::default() };
    for r in &results {
        match r.outcome {
            run::Outcome::Analysed(_) => counts.analysed += 1,
            run::Outcome::Skipped(_) => counts.skipped += 1,
            run::Outcome::Failed(_) => counts.failed += 1,
        }
    }
    let exit = if counts.failed > 0 { Exit::InputErrors } else { Exit::Success };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => {
            let mut rows: Vec<run::RowReport> = results.iter().map(run::RowResult::report).collect();
            if let Some(m) = &args.model {
                for r in &mut rows {
                    r.predicted_ms.retain(|k, _| k == m);
                }
            }
            let report = Report { warpsight: env!("CARGO_PKG_VERSION"), counts, notes, summary, rows };
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        Format::Table => print_table(&mut out, &results, &counts, &notes, &summary).context("writing to stdout")?,
    }
    Ok(exit)
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn print_table(out: &mut impl Write, results: &[run::RowResult], counts: &Counts, notes: &[String], summary: &analysis::validation::Summary) -> std::io::Result<()> {
    writeln!(out, "{} rows: {} analysed, {} skipped, {} failed", counts.rows, counts.analysed, counts.skipped, counts.failed)?;
    for n in notes {
        writeln!(out, "  note: {n}")?;
    }
    // Skipped and failed rows, grouped by reason (first row named).
    let mut reasons: BTreeMap<(&str, &str), (usize, &str)> = BTreeMap::new();
    for r in results {
        let (kind, why) = match &r.outcome {
            run::Outcome::Skipped(w) => ("skipped", w.as_str()),
            run::Outcome::Failed(w) => ("failed", w.as_str()),
            run::Outcome::Analysed(_) => continue,
        };
        reasons.entry((kind, why)).or_insert((0, r.row.at.as_str())).0 += 1;
    }
    for ((kind, why), (n, first)) in &reasons {
        writeln!(out, "  {kind} {n} row(s) (first: {first}): {why}")?;
    }
    if summary.models_by_gpu.is_empty() {
        writeln!(out, "\nno row was analysed")?;
        return Ok(());
    }
    writeln!(out, "\n{:<12} {:<22} {:>6} {:>9} {:>13} {:>8} {:>8}", "model", "gpu", "n", "MAPE", "median p/m", "≤1.5×", "≤2×")?;
    for m in &summary.models_by_gpu {
        let s = &m.stats;
        let mape = format!("{:.1}%", s.mape_percent);
        writeln!(
            out,
            "{:<12} {:<22} {:>6} {:>9} {:>13.3} {:>8} {:>8}",
            m.model,
            m.gpu.as_deref().unwrap_or("all GPUs"),
            s.n,
            mape,
            s.median_ratio,
            pct(s.within_1_5),
            pct(s.within_2)
        )?;
    }
    if !summary.power_by_gpu.is_empty() {
        writeln!(out, "\npower (rows that give power_w): predicted against measured board power (docs/power.md)")?;
        writeln!(out, "{:<12} {:<22} {:>6} {:>9} {:>13} {:>8} {:>8}", "", "gpu", "n", "MAPE", "median p/m", "≤1.5×", "≤2×")?;
        for m in &summary.power_by_gpu {
            let s = &m.stats;
            writeln!(
                out,
                "{:<12} {:<22} {:>6} {:>9} {:>13.3} {:>8} {:>8}",
                "power",
                m.gpu.as_deref().unwrap_or("all GPUs"),
                s.n,
                format!("{:.1}%", s.mape_percent),
                s.median_ratio,
                pct(s.within_1_5),
                pct(s.within_2)
            )?;
        }
    }
    if !summary.groups.is_empty() {
        writeln!(out, "\nper kernel group: Spearman of predicted against measured times across its configurations, and the measured time of the predicted-best configuration over the measured best")?;
        writeln!(out, "{:<12} {:<22} {:<34} {:>5} {:>9} {:>10}  predicted best / measured best", "model", "gpu", "group", "n", "Spearman", "best ×")?;
        for g in &summary.groups {
            let s = &g.stats;
            let rho = s.spearman.map_or_else(|| "-".to_string(), |r| format!("{r:.2}"));
            let best = format!("{:.2}×", s.best_config_ratio);
            writeln!(
                out,
                "{:<12} {:<22} {:<34} {:>5} {:>9} {:>10}  {} / {}",
                g.model, g.gpu, g.group, s.n, rho, best, s.predicted_best, s.measured_best
            )?;
        }
    }
    Ok(())
}
