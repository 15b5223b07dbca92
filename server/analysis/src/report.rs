//! The report of an analysis as typed data: the documented output of `warpsight analyze
//! --format json` (docs/cli.md), of the `warpsight/kernelReport` and `warpsight/whatIf`
//! LSP requests, and (its `predictions` and `headline`) of `warpsight predict --json`.
//!
//! Why the types live here, below the front ends: the CLI and the language server must
//! print the same report with the same keys, so there is one set of types, built once from
//! the analysis ([`FileReport::new`], [`KernelReport::new`]) and serialised by `serde`. The
//! field names *are* the documented keys (a test checks docs/cli.md against them). Keys are
//! stable; additions are allowed, renames are not (docs/cli.md § Stability).
//!
//! The report borrows the largest part of a kernel, its memory accesses, from the analysis
//! (`Cow`), so a writer that streams kernels one at a time (the CLI) writes them without a
//! copy; [`KernelReport::into_owned`] detaches it (the language server sends it to another
//! task). Deserialising gives owned data.

use std::borrow::Cow;
use std::collections::BTreeMap;

use kernel_profile::{BranchInfo, LaunchSource, LoopInfo, MemoryAccess, ResourceSource};
use serde::{Deserialize, Serialize};

use crate::charts::TargetCharts;
use crate::{FileAnalysis, KernelAnalysis, Severity, SyntaxDiagnostic, TargetAnalysis};

/// `{ "warpsight": VERSION, "files": [FILE, ...] }`, the document `analyze --format json`
/// prints. `F` is the list of files: a `Vec` of [`FileReport`], or a writer's own type that
/// produces them one at a time (the CLI's streaming writer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyzeReport<F = Vec<FileReport>> {
    /// The version of warpsight that wrote the report.
    pub warpsight: String,
    pub files: F,
}

/// What a file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// PTX text.
    Ptx,
    /// CUDA C++ (`.cu`, `.cuh`), compiled to PTX first.
    Cu,
}

/// `FILE` of docs/cli.md: one file with its kernels. `K` is the list of kernels: a `Vec`
/// of [`KernelReport`], or a writer's own type that analyses and writes them one at a
/// time (the CLI's bounded memory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileReport<K = Vec<KernelReport<'static>>> {
    /// As given (the CLI), or the document URI (the language server).
    pub path: String,
    pub kind: SourceKind,
    /// `.target` (`sm_80`).
    pub target: Option<String>,
    /// `.version` (`9.5`).
    pub ptx_version: Option<String>,
    /// Syntax diagnostics of the PTX.
    pub errors: Vec<ErrorReport>,
    /// Where the PTX came from, architecture substitutions, dropped flags (the CLI always;
    /// the language server for `.cu` documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
    /// Compiler messages, `file:line:col: severity: message` (the CLI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler_diagnostics: Option<Vec<String>>,
    /// The toolchain that compiled a `.cu` document (the language server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain: Option<String>,
    /// What a `warpsight/whatIf` report was computed from (the language server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceKind>,
    /// `--gpu` values (or `gpus` settings) not in the database.
    pub unknown_gpus: Vec<UnknownGpu>,
    pub kernels: K,
}

/// A syntax diagnostic, 1-based.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorReport {
    pub line: u32,
    pub column: u32,
    pub severity: Severity,
    pub message: String,
}

/// A GPU id that is not in the database, with the closest ids that are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnknownGpu {
    pub id: String,
    pub closest: Vec<String>,
}

impl FileReport<()> {
    /// The file without its kernels, for a writer that puts its own list in
    /// ([`FileReport::with_kernels`]).
    pub fn header(
        path: &str,
        kind: SourceKind,
        text: &str,
        syntax: &[SyntaxDiagnostic],
        target: Option<&str>,
        version: Option<(u32, u32)>,
        unknown_gpus: &[(String, Vec<String>)],
    ) -> FileReport<()> {
        let index = ptx::LineIndex::new(text);
        let errors = syntax
            .iter()
            .map(|d| {
                let lc = index.line_col(d.span.start);
                ErrorReport { line: lc.line + 1, column: lc.col + 1, severity: d.severity, message: d.message.clone() }
            })
            .collect();
        FileReport {
            path: path.to_string(),
            kind,
            target: target.map(str::to_string),
            ptx_version: version.map(|(a, b)| format!("{a}.{b}")),
            errors,
            notes: None,
            compiler_diagnostics: None,
            toolchain: None,
            source: None,
            unknown_gpus: unknown_gpus.iter().map(|(id, closest)| UnknownGpu { id: id.clone(), closest: closest.clone() }).collect(),
            kernels: (),
        }
    }
}

impl<K> FileReport<K> {
    /// The same file with another list of kernels.
    pub fn with_kernels<L>(self, kernels: L) -> FileReport<L> {
        FileReport {
            path: self.path,
            kind: self.kind,
            target: self.target,
            ptx_version: self.ptx_version,
            errors: self.errors,
            notes: self.notes,
            compiler_diagnostics: self.compiler_diagnostics,
            toolchain: self.toolchain,
            source: self.source,
            unknown_gpus: self.unknown_gpus,
            kernels,
        }
    }
}

impl<'a> FileReport<Vec<KernelReport<'a>>> {
    /// The report of a whole analysis; `text` is the PTX it was made from (for line and
    /// column numbers).
    pub fn new(path: &str, kind: SourceKind, text: &str, analysis: &'a FileAnalysis) -> Self {
        Self::of_kernels(path, kind, text, analysis, analysis.kernels.iter())
    }

    /// As [`FileReport::new`], with only the given kernels of the analysis.
    pub fn of_kernels(path: &str, kind: SourceKind, text: &str, analysis: &FileAnalysis, kernels: impl Iterator<Item = &'a KernelAnalysis>) -> Self {
        FileReport::header(path, kind, text, &analysis.syntax, analysis.target.as_deref(), analysis.version, &analysis.unknown_gpus)
            .with_kernels(kernels.map(KernelReport::new).collect())
    }

    /// The report with no borrowed parts.
    pub fn into_owned(mut self) -> FileReport {
        let kernels = std::mem::take(&mut self.kernels).into_iter().map(KernelReport::into_owned).collect();
        self.with_kernels(kernels)
    }
}

/// `KERNEL` of docs/cli.md: one kernel with its results on every GPU. Launch-dependent but
/// GPU-independent facts come from the first GPU's profile (`None`/`null` when no GPU of
/// the settings is known).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelReport<'a> {
    /// The `.entry` name (mangled for C++).
    pub name: String,
    pub demangled: Option<String>,
    /// Line of the name in the PTX, 1-based.
    pub ptx_line: u32,
    pub registers: RegistersReport,
    pub shared_memory: SharedMemoryReport,
    /// `.local` stack bytes in the PTX.
    pub local_bytes: u64,
    pub instruction_mix: InstructionMixReport,
    pub loops: Option<Vec<LoopInfo>>,
    pub launch: LaunchReport,
    pub memory_accesses: Option<Cow<'a, [MemoryAccess]>>,
    pub divergent_branches: Option<Vec<BranchInfo>>,
    pub assumptions: Vec<String>,
    pub findings: Vec<FindingReport>,
    /// Keyed by GPU id.
    pub gpus: BTreeMap<String, TargetReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegistersReport {
    /// `.reg` counts by type (`b32` → 66).
    pub declared: BTreeMap<String, u32>,
    pub per_thread: Option<u32>,
    pub source: Option<ResourceSource>,
    pub spill_store_bytes: Option<u32>,
    pub spill_load_bytes: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedMemoryReport {
    pub static_bytes: u64,
    pub dynamic_bytes: u32,
}

/// Instruction counts by class (`InstrClass::name`, docs/profile.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstructionMixReport {
    #[serde(rename = "static")]
    pub static_counts: BTreeMap<String, u64>,
    pub dynamic_per_thread: Option<BTreeMap<String, f64>>,
    pub static_total: u64,
    pub dynamic_total_per_thread: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchReport {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_smem: u32,
    pub source: LaunchSource,
    pub args: BTreeMap<String, i64>,
    /// Bytes the data-dependent loads range over, where the launch states it (`footprint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint_bytes: Option<u64>,
    /// Bytes the host code allocates for pointer arguments, by parameter name, where the
    /// front end folds the size (`cudaMalloc(&d_x, n * sizeof(float))` before the launch).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub array_bytes: BTreeMap<String, u64>,
}

/// A finding (docs/diagnostics.md), with the titles of its fixes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingReport {
    pub code: String,
    pub severity: Severity,
    pub message: String,
    pub gpu: Option<String>,
    pub ptx_line: u32,
    pub source_file: Option<String>,
    pub source_line: Option<u32>,
    pub fixes: Vec<String>,
}

impl<'a> KernelReport<'a> {
    pub fn new(k: &'a KernelAnalysis) -> Self {
        let profile = k.targets.first().map(|t| &t.profile);
        KernelReport {
            name: k.name.clone(),
            demangled: k.demangled.clone(),
            ptx_line: k.ptx_line,
            registers: RegistersReport {
                declared: k.declared_registers.clone(),
                per_thread: profile.map(|p| p.resources.registers_per_thread),
                source: profile.map(|p| p.resources.source),
                spill_store_bytes: profile.map(|p| p.resources.spill_store_bytes),
                spill_load_bytes: profile.map(|p| p.resources.spill_load_bytes),
            },
            shared_memory: SharedMemoryReport {
                static_bytes: profile.map(|p| u64::from(p.resources.static_smem_bytes)).unwrap_or(k.static_smem_bytes),
                dynamic_bytes: k.launch.dynamic_smem,
            },
            local_bytes: k.local_bytes,
            instruction_mix: InstructionMixReport {
                static_counts: class_names(&k.static_mix),
                dynamic_per_thread: profile.map(|p| class_names(&p.counts.dynamic)),
                static_total: k.static_mix.values().sum(),
                dynamic_total_per_thread: profile.map(|p| p.counts.total_dynamic()),
            },
            loops: profile.map(|p| p.loops.clone()),
            launch: LaunchReport {
                grid: k.launch.grid,
                block: k.launch.block,
                dynamic_smem: k.launch.dynamic_smem,
                source: k.launch.source,
                args: k.launch.args.clone(),
                footprint_bytes: k.launch.footprint_bytes,
                array_bytes: k.launch.array_bytes.clone(),
            },
            memory_accesses: profile.map(|p| Cow::Borrowed(p.memory_accesses.as_slice())),
            divergent_branches: profile.map(|p| p.divergent_branches.clone()),
            assumptions: profile.map(|p| p.assumptions.clone()).unwrap_or_default(),
            findings: k.findings.iter().map(FindingReport::new).collect(),
            gpus: k.targets.iter().map(|t| (t.gpu.id.clone(), TargetReport::new(t))).collect(),
        }
    }

    /// The report with no borrowed parts.
    pub fn into_owned(self) -> KernelReport<'static> {
        KernelReport { memory_accesses: self.memory_accesses.map(|m| Cow::Owned(m.into_owned())), ..self }
    }
}

/// Counts by class, keyed by the class's one name (`InstrClass::name`).
fn class_names<V: Copy>(m: &BTreeMap<ptx_ir::InstrClass, V>) -> BTreeMap<String, V> {
    m.iter().map(|(c, v)| (c.name().to_string(), *v)).collect()
}

impl FindingReport {
    pub fn new(f: &crate::findings::Finding) -> Self {
        FindingReport {
            code: f.code.to_string(),
            severity: f.severity,
            message: f.message.clone(),
            gpu: f.gpu.clone(),
            ptx_line: f.ptx_line,
            source_file: f.source_file.clone(),
            source_line: f.source_line,
            fixes: f.fixes.iter().map(|x| x.title.clone()).collect(),
        }
    }
}

/// `TARGET` of docs/cli.md: one kernel on one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetReport {
    /// The database id.
    pub gpu: String,
    pub name: String,
    /// `8.0`.
    pub compute_capability: String,
    pub occupancy: OccupancyReport,
    pub waves: Option<WavesReport>,
    /// Keyed by model; empty when no time can be predicted.
    pub predictions: BTreeMap<String, PredictionReport>,
    /// `None` when no time can be predicted (`cannot_predict` says why).
    pub headline: Option<HeadlineReport>,
    pub cannot_predict: Option<String>,
    pub power: Option<PowerReport>,
    pub energy_uj: Option<f64>,
    /// The energy as shown (three significant figures).
    pub energy_text: Option<String>,
    pub charts: TargetCharts,
}

/// The occupancy calculation, or why it could not be done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OccupancyReport {
    Computed(OccupancyFigures),
    Failed {
        error: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OccupancyFigures {
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
    pub max_warps_per_sm: u32,
    /// 0 to 1.
    pub occupancy: f64,
    pub limiters: gpu_spec::Limiters,
    /// Why the configuration cannot launch, when `blocks_per_sm` is 0.
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WavesReport {
    pub waves: u64,
    pub blocks_per_wave: u64,
    pub last_wave_blocks: u64,
    pub last_wave_fill: f64,
}

/// One model's prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictionReport {
    pub time_us: f64,
    /// The time as shown everywhere (`display::time_us`).
    pub time_text: String,
    /// `perf_models::Bound::name`.
    pub bound: String,
    /// `perf_models::Confidence::name`.
    pub confidence: String,
    pub explanation: String,
    pub breakdown: BTreeMap<String, f64>,
    pub assumptions: Vec<String>,
    pub below_roofline_floor: bool,
    /// The MWP/CWP model's memory and computation warp parallelism.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mwp: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwp: Option<f64>,
}

impl PredictionReport {
    pub fn new(p: &perf_models::Prediction, below_roofline_floor: bool) -> Self {
        // Both or neither, as the model gives them.
        let (mwp, cwp) = match (p.mwp, p.cwp) {
            (Some(m), Some(c)) => (Some(m), Some(c)),
            _ => (None, None),
        };
        PredictionReport {
            time_us: p.time_us,
            time_text: crate::display::time_us(p.time_us),
            bound: p.bound.name().to_string(),
            confidence: p.confidence.name().to_string(),
            explanation: p.explanation.clone(),
            breakdown: p.breakdown.clone(),
            assumptions: p.assumptions.clone(),
            below_roofline_floor,
            mwp,
            cwp,
        }
    }

    /// Every prediction of a report, keyed by model, for the models `wanted` accepts.
    pub fn all(r: &perf_models::Report, wanted: impl Fn(&str) -> bool) -> BTreeMap<String, PredictionReport> {
        r.predictions
            .iter()
            .filter(|p| wanted(p.model))
            .map(|p| (p.model.to_string(), PredictionReport::new(p, r.floor_violations.contains(&p.model))))
            .collect()
    }
}

/// The consensus headline (docs/models.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadlineReport {
    pub model: String,
    pub time_us: f64,
    pub time_text: String,
    pub bound: String,
    pub rule: String,
    /// Model → why it did not apply.
    pub not_applicable: BTreeMap<String, String>,
}

impl HeadlineReport {
    /// The headline, with the models `wanted` accepts among those that did not apply.
    pub fn new(r: &perf_models::Report, wanted: impl Fn(&str) -> bool) -> Self {
        HeadlineReport {
            model: r.headline.model.to_string(),
            time_us: r.headline.time_us,
            time_text: crate::display::time_us(r.headline.time_us),
            bound: r.headline.bound.name().to_string(),
            rule: r.headline.rule.to_string(),
            not_applicable: r.not_applicable.iter().filter(|(m, _)| wanted(m)).map(|(m, why)| (m.to_string(), why.clone())).collect(),
        }
    }
}

/// The power estimate (docs/power.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerReport {
    pub watts: f64,
    pub base_watts: f64,
    /// Feature → watts.
    pub contributions: BTreeMap<String, f64>,
    pub confidence: power_model::Confidence,
    pub model_gpu: String,
    pub notes: Vec<String>,
}

impl TargetReport {
    pub fn new(t: &TargetAnalysis) -> Self {
        let occupancy = match &t.occupancy {
            Ok(o) => OccupancyReport::Computed(OccupancyFigures {
                blocks_per_sm: o.blocks_per_sm,
                warps_per_sm: o.warps_per_sm,
                max_warps_per_sm: o.max_warps_per_sm,
                occupancy: o.occupancy,
                limiters: o.limiters,
                reason: o.reason.clone(),
            }),
            Err(e) => OccupancyReport::Failed { error: e.clone() },
        };
        let all = |_: &str| true;
        TargetReport {
            gpu: t.gpu.id.clone(),
            name: t.gpu.name.clone(),
            compute_capability: format!("{}.{}", t.gpu.cc.major, t.gpu.cc.minor),
            occupancy,
            waves: t.waves.as_ref().map(|w| WavesReport {
                waves: w.waves,
                blocks_per_wave: w.blocks_per_wave,
                last_wave_blocks: w.last_wave_blocks,
                last_wave_fill: w.last_wave_fill,
            }),
            predictions: t.models.as_ref().map(|r| PredictionReport::all(r, all)).unwrap_or_default(),
            headline: t.models.as_ref().ok().map(|r| HeadlineReport::new(r, all)),
            cannot_predict: t.models.as_ref().err().cloned(),
            power: t.power.as_ref().map(|p| PowerReport {
                watts: p.watts,
                base_watts: p.base_watts,
                contributions: p.contributions.iter().cloned().collect(),
                confidence: p.confidence,
                model_gpu: p.model_gpu.clone(),
                notes: p.notes.clone(),
            }),
            energy_uj: t.energy_uj,
            energy_text: t.energy_uj.map(crate::display::energy_uj),
            charts: crate::charts::target_charts(t),
        }
    }
}
