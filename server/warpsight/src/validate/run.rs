//! Analysing measured rows: each row's kernel at the row's launch on the row's GPU.
//!
//! A `.cu` source is compiled once per (file, defines, architecture) through the CUDA
//! front end (with its on-disk cache), a `.ptx` file is read once; every row that shares
//! them reuses the PTX and the compiler's findings. The row's launch is the whole truth
//! about the launch: launch sites and annotations in the source are not consulted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::rows::Row;

/// How `.cu` sources are compiled.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    pub nvcc: Option<PathBuf>,
    pub include_dirs: Vec<PathBuf>,
    /// Never compile: use recorded PTX only.
    pub no_compile: bool,
    pub no_cache: bool,
    /// Trip count assumed for loops whose count stays unknown.
    pub default_trip_count: Option<f64>,
}

/// The compile timeout of `validate` (the editor's default is 20 s).
pub const COMPILE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(180);

/// What became of one row.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Analysed: the kernel on the row's GPU at the row's launch.
    Analysed(Box<Analysed>),
    /// Not analysed, for a reason that is not an error of the row (a GPU that is not in
    /// the database).
    Skipped(String),
    /// The row could not be analysed (no such file or kernel, a compile error, a launch
    /// the GPU cannot run, no model applied).
    Failed(String),
}

/// One analysed row.
#[derive(Debug, Clone)]
pub struct Analysed {
    /// The kernel's PTX name.
    pub kernel: String,
    /// The analysis for the row's GPU (profile, occupancy, every model and the headline).
    pub target: analysis::TargetAnalysis,
}

impl Analysed {
    /// Predicted times in ms by model, with the consensus headline as
    /// [`analysis::validation::HEADLINE`].
    pub fn predicted_ms(&self) -> std::collections::BTreeMap<String, f64> {
        let mut out = std::collections::BTreeMap::new();
        if let Ok(r) = &self.target.models {
            for p in &r.predictions {
                out.insert(p.model.to_string(), p.time_us / 1000.0);
            }
            out.insert(analysis::validation::HEADLINE.to_string(), r.headline.time_us / 1000.0);
        }
        out
    }
}

/// One row and what became of it.
#[derive(Debug, Clone)]
pub struct RowResult {
    pub row: Row,
    pub outcome: Outcome,
}

/// One compiled (or read) source.
struct Compiled {
    ptx: String,
    context: analysis::Context,
    /// `.entry` names with their demangled signatures.
    entries: Vec<(String, Option<String>)>,
    notes: Vec<String>,
    /// Why there is no usable PTX.
    error: Option<String>,
}

#[derive(Clone, Hash, PartialEq, Eq)]
struct Key {
    source: PathBuf,
    defines: Vec<String>,
    arch: Option<String>,
}

use ptx::demangle::kernel_matches;

fn compile(key: &Key, opts: &CompileOptions) -> Compiled {
    let is_ptx = key.source.extension().and_then(|e| e.to_str()) == Some("ptx");
    let mut c = Compiled { ptx: String::new(), context: analysis::Context::default(), entries: Vec::new(), notes: Vec::new(), error: None };
    if is_ptx {
        match crate::input::read_text(&key.source) {
            Ok(t) => c.ptx = t,
            Err(e) => c.error = Some(format!("{e:#}")),
        }
    } else {
        if let Err(e) = crate::input::read_text(&key.source) {
            c.error = Some(format!("{e:#}"));
            return c;
        }
        let options = cuda_frontend::compile::Options {
            arch: key.arch.clone(),
            compiler: if opts.no_compile { cuda_frontend::compile::CompilerChoice::RecordedOnly } else { Default::default() },
            nvcc: opts.nvcc.clone(),
            defines: key.defines.clone(),
            include_dirs: opts.include_dirs.clone(),
            use_cache: !opts.no_cache,
            compile_commands: cuda_frontend::compile::CompileCommands::Ignore,
            // Many configurations compile back to back on a busy machine: more patience
            // than the editor's default.
            timeout: COMPILE_TIMEOUT,
            ..Default::default()
        };
        let prepared = cuda_frontend::compile::prepare(&key.source, &options);
        c.notes.push(prepared.toolchain_note.clone());
        c.notes.extend(prepared.notes.iter().cloned());
        if prepared.has_errors() || prepared.ptx.is_empty() {
            let first = prepared.diagnostics.iter().find(|d| d.severity == cuda_frontend::diagnostics::Severity::Error).map(|d| d.message.clone());
            c.error = Some(match first {
                Some(m) => format!("{} does not compile: {m}", key.source.display()),
                None => format!("{}: {}", key.source.display(), prepared.toolchain_note),
            });
            return c;
        }
        let mut cx = cuda_frontend::context::analysis_context(&prepared);
        for k in cx.kernels.values_mut() {
            k.call_site = None;
            k.annotation = None;
        }
        c.context = cx;
        c.ptx = prepared.ptx;
    }
    let (module, _) = ptx_ir::parse_and_lower(&c.ptx);
    c.entries = module
        .kernels()
        .map(|f| {
            let dem = c.context.kernels.get(&f.name).and_then(|k| k.demangled.clone()).or_else(|| ptx::demangle(&f.name));
            (f.name.clone(), dem)
        })
        .collect();
    c
}

/// The database GPU a row names: an id or alias, else a CUDA device name.
pub fn resolve_gpu(name: &str) -> Result<&'static gpu_spec::Gpu, String> {
    let db = gpu_spec::Database::builtin();
    if let Ok(g) = db.gpu(name) {
        return Ok(g);
    }
    if let Some(g) = db.find_by_device_name(name) {
        return Ok(g);
    }
    let close = db.closest(name, 3);
    Err(format!("GPU `{name}` is not in the database (closest: {})", close.join(", ")))
}

/// Runs `f` on every item on up to `available_parallelism` threads; results in order.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 16).min(items.len().max(1));
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<R>>> = std::sync::Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    if let Ok(mut v) = results.lock() {
                        v[i] = Some(r);
                    }
                }
            });
        }
    });
    results.into_inner().unwrap_or_default().into_iter().flatten().collect()
}

/// The compile key of a row on its GPU.
fn key_of(row: &Row, gpu: &gpu_spec::Gpu) -> Key {
    let is_ptx = row.source.extension().and_then(|e| e.to_str()) == Some("ptx");
    let arch = if is_ptx { None } else { Some(row.arch.clone().unwrap_or_else(|| format!("sm_{}{}", gpu.cc.major, gpu.cc.minor))) };
    Key { source: row.source.clone(), defines: if is_ptx { Vec::new() } else { row.defines.clone() }, arch }
}

/// Analyses every row (results in row order). Rows that share a source, defines and
/// architecture share one compile; compiles, then rows, run on all available cores.
pub fn analyse(rows: Vec<Row>, opts: &CompileOptions) -> Vec<RowResult> {
    let gpus: Vec<Result<&'static gpu_spec::Gpu, String>> = rows.iter().map(|r| resolve_gpu(&r.gpu)).collect();
    let mut keys: Vec<Key> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (row, gpu) in rows.iter().zip(&gpus) {
        if let Ok(g) = gpu {
            let k = key_of(row, g);
            if seen.insert(k.clone()) {
                keys.push(k);
            }
        }
    }
    tracing::info!("validate: {} rows, {} distinct compiles", rows.len(), keys.len());
    let compiled: HashMap<Key, Compiled> = keys.iter().cloned().zip(parallel_map(&keys, |k| compile(k, opts))).collect();
    let indices: Vec<usize> = (0..rows.len()).collect();
    let outcomes = parallel_map(&indices, |&i| match &gpus[i] {
        Err(e) => Outcome::Skipped(e.clone()),
        Ok(g) => analyse_row(&rows[i], g, &compiled, opts),
    });
    rows.into_iter().zip(outcomes).map(|(row, outcome)| RowResult { row, outcome }).collect()
}

fn analyse_row(row: &Row, gpu: &gpu_spec::Gpu, cache: &HashMap<Key, Compiled>, opts: &CompileOptions) -> Outcome {
    let Some(compiled) = cache.get(&key_of(row, gpu)) else {
        return Outcome::Failed(format!("{}: not compiled", row.source.display()));
    };
    if let Some(e) = &compiled.error {
        return Outcome::Failed(e.clone());
    }
    let found: Vec<&(String, Option<String>)> = compiled.entries.iter().filter(|(n, d)| kernel_matches(n, d.as_deref(), &row.kernel)).collect();
    let entry = match found.as_slice() {
        [one] => one.0.clone(),
        [] => {
            let names: Vec<&str> = compiled.entries.iter().map(|(n, d)| d.as_deref().unwrap_or(n)).collect();
            return Outcome::Failed(format!("no kernel `{}` in {} (kernels: {})", row.kernel, row.source.display(), names.join(", ")));
        }
        many => {
            let names: Vec<&str> = many.iter().map(|(n, _)| n.as_str()).collect();
            return Outcome::Failed(format!("`{}` names {} kernels in {}; give the PTX name: {}", row.kernel, many.len(), row.source.display(), names.join(", ")));
        }
    };
    let mut context = compiled.context.clone();
    if let Some(regs) = row.registers {
        let (module, _) = ptx_ir::parse_and_lower(&compiled.ptx);
        let static_smem = module.function(&entry).map_or(0, |f| u32::try_from(f.static_smem_bytes).unwrap_or(u32::MAX));
        let k = context.kernels.entry(entry.clone()).or_default();
        let mut res = k.resources.clone().unwrap_or_else(|| kernel_profile::Resources::given(regs, static_smem));
        res.registers_per_thread = regs;
        res.source = kernel_profile::ResourceSource::Given;
        k.resources = Some(res);
    }
    let mut settings = analysis::Settings {
        gpus: vec![gpu.id.clone()],
        launch: analysis::PartialLaunch { grid: Some(row.grid), block: Some(row.block), dynamic_smem: Some(row.dynamic_smem), args: Default::default(), footprint: row.footprint, array_bytes: Default::default() },
        args: row.args.clone(),
        smem_carveout_percent: row.carveout,
        only_kernel: Some(entry.clone()),
        graph_launch: row.launch == super::rows::LaunchMode::Graph,
        locked_clock_mhz: row.clock_mhz,
        ..analysis::Settings::default()
    };
    if let Some(t) = opts.default_trip_count {
        settings.profile.default_trip_count = t;
    }
    let fa = analysis::analyze(&compiled.ptx, &settings, &context);
    if let Some(d) = fa.syntax.iter().find(|d| d.severity == analysis::Severity::Error) {
        return Outcome::Failed(format!("{}: the PTX has errors: {}", row.source.display(), d.message));
    }
    let Some(target) = fa.kernels.into_iter().next().and_then(|k| k.targets.into_iter().next()) else {
        return Outcome::Failed(format!("{} could not be analysed on {}", row.kernel, gpu.id));
    };
    if let Ok(o) = &target.occupancy
        && let Some(r) = &o.reason
    {
        return Outcome::Failed(format!("the launch cannot run on {}: {r}", gpu.id));
    }
    if let Err(e) = &target.models {
        return Outcome::Failed(format!("{}: {e}", row.kernel));
    }
    if target.models.is_err() {
        return Outcome::Failed(format!("no time model applies to {} on {}", row.kernel, gpu.id));
    }
    Outcome::Analysed(Box::new(Analysed { kernel: entry, target }))
}

/// A row's source path as shown to the user: relative to the current directory when it
/// is below it.
pub fn display_path(p: &Path) -> String {
    std::env::current_dir().ok().and_then(|d| p.strip_prefix(&d).ok().map(|r| r.display().to_string())).unwrap_or_else(|| p.display().to_string())
}

/// The JSON form of one row's outcome.
#[derive(Debug, Serialize)]
pub struct RowReport {
    pub at: String,
    pub source: String,
    pub kernel: String,
    /// The PTX name of the kernel analysed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ptx_kernel: Option<String>,
    pub gpu: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_smem: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carveout: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_of_measurement: Option<String>,
    pub measured_ms: f64,
    /// The locked SM clock the row was timed at, in MHz (its `clock_mhz`, a Kernel Tuner
    /// configuration's `nvml_gr_clock`, or `--locked-clock`), which the models ran at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_mhz: Option<f64>,
    /// `analysed`, `skipped` or `failed`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The database id of the GPU analysed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks_per_sm: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headline_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headline_bound: Option<String>,
    /// Model → predicted ms (`headline` included).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub predicted_ms: std::collections::BTreeMap<String, f64>,
    /// The row's measured board power in W, where it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_w: Option<f64>,
    /// The predicted board power in W (docs/power.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_w: Option<f64>,
    /// What the predicted power is made of: the model's base (`base`: the idle board, or a
    /// trained model's average kernel) and each contribution in W, by name.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub predicted_w_terms: std::collections::BTreeMap<String, f64>,
    /// The SM clock the `bottleneck` model ran the row at, as a share of the boost clock,
    /// where the board's power limit lowered it (docs/models/bottleneck.md, "Power limit").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_clock_ratio: Option<f64>,
}

impl RowResult {
    pub fn report(&self) -> RowReport {
        let r = &self.row;
        let mut rep = RowReport {
            at: r.at.clone(),
            source: display_path(&r.source),
            kernel: r.kernel.clone(),
            ptx_kernel: None,
            gpu: r.gpu.clone(),
            grid: r.grid,
            block: r.block,
            dynamic_smem: r.dynamic_smem,
            carveout: r.carveout,
            group: r.group.clone(),
            label: r.label.clone(),
            source_of_measurement: r.source_of_measurement.clone(),
            measured_ms: r.time_ms,
            clock_mhz: r.clock_mhz,
            status: "analysed",
            reason: None,
            gpu_id: None,
            blocks_per_sm: None,
            headline_model: None,
            headline_bound: None,
            predicted_ms: Default::default(),
            measured_w: r.power_w,
            predicted_w: None,
            predicted_w_terms: Default::default(),
            predicted_clock_ratio: None,
        };
        match &self.outcome {
            Outcome::Skipped(why) => {
                rep.status = "skipped";
                rep.reason = Some(why.clone());
            }
            Outcome::Failed(why) => {
                rep.status = "failed";
                rep.reason = Some(why.clone());
            }
            Outcome::Analysed(a) => {
                rep.ptx_kernel = Some(a.kernel.clone());
                rep.gpu_id = Some(a.target.gpu.id.clone());
                rep.blocks_per_sm = a.target.occupancy.as_ref().ok().map(|o| o.blocks_per_sm);
                if let Ok(m) = &a.target.models {
                    rep.headline_model = Some(m.headline.model.to_string());
                    rep.headline_bound = Some(m.headline.bound.name().to_string());
                    rep.predicted_clock_ratio = m
                        .predictions
                        .iter()
                        .find(|p| p.model == perf_models::bottleneck::NAME)
                        .and_then(|p| p.breakdown.get(perf_models::bottleneck::CLOCK_RATIO).copied());
                }
                rep.predicted_ms = a.predicted_ms();
                rep.predicted_w = a.target.power.as_ref().map(|p| p.watts);
                if let Some(p) = &a.target.power {
                    rep.predicted_w_terms = std::iter::once(("base".to_string(), p.base_watts)).chain(p.contributions.iter().cloned()).collect();
                }
            }
        }
        rep
    }

    /// The observation for the statistics, when the row was analysed.
    pub fn observation(&self) -> Option<analysis::validation::Observation> {
        let Outcome::Analysed(a) = &self.outcome else { return None };
        Some(analysis::validation::Observation {
            gpu: a.target.gpu.id.clone(),
            group: self.row.group.clone(),
            label: self.row.label.clone(),
            measured_ms: self.row.time_ms,
            predicted_ms: a.predicted_ms(),
            measured_w: self.row.power_w,
            predicted_w: a.target.power.as_ref().map(|p| p.watts),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_gpus_are_named_with_suggestions() {
        assert_eq!(resolve_gpu("NVIDIA GeForce RTX 3090").unwrap().id, "rtx-3090");
        assert_eq!(resolve_gpu("a100").unwrap().id, "a100-sxm4-80gb");
        let e = resolve_gpu("NVIDIA Imaginary 9000").unwrap_err();
        assert!(e.contains("not in the database"), "{e}");
    }
}
