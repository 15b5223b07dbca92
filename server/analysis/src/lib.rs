//! The analysis facade: from PTX text (and, for `.cu` files, what the CUDA front end found)
//! to plain-data results for both front ends, the CLI and the language server.
//!
//! Architecture invariant: no IO and no LSP types here. Positions are byte spans into the
//! analysed PTX text, plus source `(file, line)` pairs where `.loc` gives them.

pub mod charts;
pub mod display;
pub mod findings;
pub mod fixes;
pub mod hover;
pub mod launch;
pub mod report;
pub mod settings;
pub mod validation;

use std::collections::{BTreeMap, HashMap};

use kernel_profile::{KernelProfile, LaunchConfig, LaunchSource, ProfileOptions, Resources};
use ptx::Span;
use ptx_ir::InstrClass;
use serde::{Deserialize, Serialize};

pub use launch::PartialLaunch;

/// The severity of a finding or syntax diagnostic, before any per-code user override.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Hint,
    Information,
    Warning,
    Error,
}

impl Severity {
    /// Every level, lowest first.
    pub const ALL: [Severity; 4] = [Severity::Hint, Severity::Information, Severity::Warning, Severity::Error];

    /// The one user-visible name (JSON reports, tables, settings): `hint`, `information`,
    /// `warning`, `error`. `Serialize` and `Deserialize` go through it.
    pub const fn name(self) -> &'static str {
        match self {
            Severity::Hint => "hint",
            Severity::Information => "information",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Severity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Severity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Severity::ALL.into_iter().find(|v| v.name() == name).ok_or_else(|| {
            let known: Vec<&str> = Severity::ALL.iter().map(|v| v.name()).collect();
            serde::de::Error::custom(format!("unknown severity `{name}` (one of {})", known.join(", ")))
        })
    }
}

/// A problem in the PTX text itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxDiagnostic {
    pub span: Span,
    pub message: String,
    pub severity: Severity,
}

/// Settings that apply to the whole analysis (from the CLI flags or the editor).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Target GPU ids or aliases; the first is the primary target.
    pub gpus: Vec<String>,
    /// An explicit launch configuration (highest priority).
    pub launch: PartialLaunch,
    /// Kernel argument values (`--arg n=1024`), by source name, PTX name or `param_N`.
    pub args: BTreeMap<String, i64>,
    pub profile: ProfileOptions,
    /// Calibration of the execution-time models (docs/models.md).
    pub models: perf_models::ModelConfig,
    /// Per-code severity overrides of the findings (docs/diagnostics.md): `None` turns a
    /// code off.
    pub severities: BTreeMap<String, Option<Severity>>,
    /// GPUs from the user's GPU files (`--gpu-file`, the editor's `gpuFiles`), already
    /// loaded and checked by `gpu_spec::Database::with_user_files`. A GPU here answers to its
    /// id and aliases before the built-in database does.
    pub user_gpus: Vec<gpu_spec::Gpu>,
    /// The kernels' shared-memory carveout preference in percent
    /// (`cudaFuncAttributePreferredSharedMemoryCarveout`), applied to every target GPU
    /// through [`gpu_spec::Gpu::with_smem_carveout`]; `None`: the driver's default.
    pub smem_carveout_percent: Option<u32>,
    /// Analyse only the `.entry` with this PTX name (the others are left out of
    /// [`FileAnalysis::kernels`]); `None`: every kernel.
    pub only_kernel: Option<String>,
    /// The kernels are launched from a CUDA graph, not one by one into a stream: every
    /// target GPU's launch overhead is the graph's ([`gpu_spec::Gpu::with_graph_launch`]).
    pub graph_launch: bool,
    /// The SM clock is locked at this many MHz (`nvidia-smi --lock-gpu-clocks`, Kernel Tuner's
    /// `nvml_gr_clock`): every target GPU runs at it instead of its boost clock
    /// ([`gpu_spec::Gpu::with_locked_clock`]); its power limit can still lower it.
    pub locked_clock_mhz: Option<f64>,
}

impl Settings {
    /// Resolves a GPU id or alias: the user's GPU files first, then the built-in database.
    pub fn resolve_gpu(&self, id: &str) -> Result<gpu_spec::Gpu, gpu_spec::UnknownGpu> {
        let q = id.trim().to_ascii_lowercase();
        if let Some(g) = self.user_gpus.iter().find(|g| g.id == q || g.aliases.contains(&q)) {
            return Ok(g.clone());
        }
        gpu_spec::Database::builtin().gpu(id).cloned()
    }

    /// The compute architecture to compile `.cu` sources for when none is given: the first
    /// GPU's (`sm_80` for an A100), the user's GPU files included; `None` when it is unknown.
    pub fn target_arch(&self) -> Option<String> {
        let g = self.resolve_gpu(self.gpus.first()?).ok()?;
        Some(format!("sm_{}{}", g.cc.major, g.cc.minor))
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            gpus: vec![DEFAULT_GPU.to_string()],
            launch: PartialLaunch::default(),
            args: BTreeMap::new(),
            profile: ProfileOptions::default(),
            models: perf_models::ModelConfig::uncalibrated(),
            severities: BTreeMap::new(),
            user_gpus: Vec::new(),
            smem_carveout_percent: None,
            only_kernel: None,
            graph_launch: false,
            locked_clock_mhz: None,
        }
    }
}

/// The GPU analysed when none is configured.
pub const DEFAULT_GPU: &str = "a100-sxm4-80gb";

/// What the CUDA front end knows of one kernel (all optional: a plain `.ptx` file has none
/// of it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelContext {
    pub demangled: Option<String>,
    /// Parameter names as written in the CUDA source, in order.
    pub param_names: Vec<String>,
    /// The launch found at a call site (`kernel<<<grid, block, smem>>>(args)`).
    pub call_site: Option<PartialLaunch>,
    /// The launch from a `// warpsight:` annotation in the CUDA source.
    pub annotation: Option<PartialLaunch>,
    /// From `ptxas -v` for the architecture of the PTX.
    pub resources: Option<Resources>,
    /// Where the kernel is defined in the CUDA source: (file as in `.file`, 1-based line).
    pub source: Option<(String, u32)>,
    /// Why the kernel's launch site could not be folded, when it could not (a sentence
    /// naming what stopped it: "the launch at line 42 was not folded: `TW` unknown").
    pub call_site_note: Option<String>,
    /// Loop trip counts stated in the CUDA source (`// warpsight: trips=N`), by line of
    /// the main source file.
    pub stated_trips: Vec<kernel_profile::StatedTrips>,
    /// Annotations in the kernel's part of the source that could not be read, one
    /// sentence each (said with the profile's assumptions).
    pub annotation_notes: Vec<String>,
}

/// Extra knowledge about the module from outside the PTX text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Context {
    /// Keyed by the `.entry` name.
    pub kernels: HashMap<String, KernelContext>,
    /// The user's argument names (`--arg`) that the CUDA front end used to fold launch
    /// sites: they are not "ignored" even when no kernel has such a parameter.
    pub used_args: std::collections::BTreeSet<String>,
}

/// One kernel analysed for one GPU.
#[derive(Debug, Clone)]
pub struct TargetAnalysis {
    pub gpu: gpu_spec::Gpu,
    /// The occupancy calculation, or why it could not be done.
    pub occupancy: Result<gpu_spec::Occupancy, String>,
    pub waves: Option<gpu_spec::occupancy::Waves>,
    pub profile: KernelProfile,
    /// Every applicable execution-time model and the headline, or why no time can be
    /// predicted ("cannot predict: ...", e.g. trip counts that multiply to an absurd
    /// count; `perf_models::guard`).
    pub models: Result<perf_models::Report, String>,
    /// Predicted average power while the kernel runs (docs/power.md: a trained static-feature
    /// model after Alavani 2023 on the K20, M60 and V100, the activity model elsewhere);
    /// `None` also when no time can be predicted (the same absurd counts are its inputs).
    pub power: Option<PowerSummary>,
    /// Predicted energy per launch: power × headline time.
    pub energy_uj: Option<f64>,
}

/// A power prediction with its contributions in watts: per feature (TreeSHAP) from a trained
/// model, per term (instructions, DRAM traffic, the GDDR interface) from the activity model.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerSummary {
    pub watts: f64,
    /// The model's expected value (what the contributions start from).
    pub base_watts: f64,
    /// Feature or term name → watts; `base_watts` plus the sum equals `watts`.
    pub contributions: Vec<(String, f64)>,
    /// `medium` (this GPU's own trained model) or `low` (the activity model, or a transferred
    /// one); shown by its `serde` name.
    pub confidence: power_model::Confidence,
    /// The GPU whose trained model was used, or the board the activity model ran for.
    pub model_gpu: String,
    pub notes: Vec<String>,
}

impl PowerSummary {
    /// The `n` largest contributions by magnitude, in words, e.g. "+18.0 W from global
    /// loads per SM (glob_load_sm)": the explanation the hover and the CLI print.
    pub fn top_contributions(&self, n: usize) -> Vec<String> {
        let mut top: Vec<&(String, f64)> = self.contributions.iter().collect();
        top.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
        top.iter()
            .take(n)
            .map(|(f, w)| match power_model::contribution_label(f) {
                Some(label) => format!("{w:+.1} W from {label} ({f})"),
                None => format!("{w:+.1} W from {f}"),
            })
            .collect()
    }
}

/// One loop of a kernel, as the IR sees it (before the launch is applied).
#[derive(Debug, Clone, PartialEq)]
pub struct LoopSummary {
    pub ptx_line: u32,
    pub depth: u32,
}

/// One kernel (`.entry`) of the analysed module.
#[derive(Debug, Clone)]
pub struct KernelAnalysis {
    pub name: String,
    pub demangled: Option<String>,
    pub name_span: Span,
    pub span: Span,
    pub ptx_line: u32,
    /// Static instruction counts by class (the kernel and the device functions it calls).
    pub static_mix: BTreeMap<InstrClass, u64>,
    /// `.reg` declarations by type (`b32` → 66).
    pub declared_registers: BTreeMap<String, u32>,
    pub static_smem_bytes: u64,
    pub local_bytes: u64,
    pub launch: LaunchConfig,
    /// Where the kernel is defined in the CUDA source, when known.
    pub source: Option<(String, u32)>,
    /// Annotation problems for this kernel, for diagnostics.
    pub launch_errors: Vec<String>,
    /// One entry per configured GPU that exists in the database.
    pub targets: Vec<TargetAnalysis>,
    /// Performance findings, with the user's severities applied (docs/diagnostics.md).
    pub findings: Vec<findings::Finding>,
}

/// Everything known about one PTX text.
#[derive(Debug, Clone, Default)]
pub struct FileAnalysis {
    pub syntax: Vec<SyntaxDiagnostic>,
    /// The PTX `.target` architecture (`sm_80`).
    pub target: Option<String>,
    pub version: Option<(u32, u32)>,
    pub kernels: Vec<KernelAnalysis>,
    /// Configured GPU ids that are not in the database (with the closest known ids).
    pub unknown_gpus: Vec<(String, Vec<String>)>,
    /// The lowered module (for instruction-level queries such as hovers).
    pub module: ptx_ir::Module,
}

/// Analyses one PTX module with the given settings and context.
pub fn analyze(text: &str, settings: &Settings, context: &Context) -> FileAnalysis {
    analyze_memo(text, settings, context, None)
}

/// Per-kernel results kept between analyses of successive versions of one document, so
/// that an edit inside one kernel re-runs only that kernel's profile and models
/// (architecture invariant: an edit in one function does not invalidate another's
/// results).
///
/// A kernel's entry is found by its *inputs*, as typed values compared for equality, never
/// by a rendering of them: the file-level inputs (module declarations without their
/// positions, the settings, the arguments the front end used) are kept once, and a change
/// in any of them clears the memo; the per-kernel inputs are a hash of the kernel's own
/// text and its callees' texts (the bucket), then the kernel's context and annotation
/// compared as values. Every analysis is one generation: the entries the latest analysis
/// did not use (a deleted or edited kernel) are dropped after it.
#[derive(Debug, Default)]
pub struct Memo {
    /// The file-level inputs of the entries.
    file: Option<FileInputs>,
    /// By [`text_hash`] of the kernel's text and its callees'.
    entries: HashMap<u64, Vec<MemoEntry>>,
    /// The number of the latest analysis (one more per [`analyze_memo`] call).
    generation: u64,
    /// How many kernels were analysed from scratch (not taken from the memo), ever.
    pub kernel_runs: usize,
}

impl Memo {
    /// How many kernel results the memo holds.
    pub fn len(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }

    /// `true` when it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What every kernel's result depends on besides its own text, its callees' and its
/// context: the module-level declarations (not their positions: moving text around must
/// not invalidate results), the settings and the arguments the front end used.
#[derive(Debug, PartialEq)]
struct FileInputs {
    target: Option<String>,
    target_flags: Vec<String>,
    version: Option<(u32, u32)>,
    address_size: Option<u32>,
    files: Vec<ptx_ir::SourceFile>,
    /// Without their spans.
    variables: Vec<ptx_ir::Variable>,
    settings: Settings,
    used_args: std::collections::BTreeSet<String>,
}

impl FileInputs {
    fn of(module: &ptx_ir::Module, settings: &Settings, context: &Context) -> FileInputs {
        FileInputs {
            target: module.target.clone(),
            target_flags: module.target_flags.clone(),
            version: module.version,
            address_size: module.address_size,
            files: module.files.clone(),
            variables: module.variables.iter().map(|v| ptx_ir::Variable { span: Span::default(), ..v.clone() }).collect(),
            settings: settings.clone(),
            used_args: context.used_args.clone(),
        }
    }
}

#[derive(Debug)]
struct MemoEntry {
    /// The kernel's own inputs besides its text (compared as values).
    context: KernelContext,
    annotation: Option<PartialLaunch>,
    /// The trip counts stated in the kernel's PTX, at their PTX lines: a kernel that moved
    /// with them is analysed again (the profile names those lines).
    loop_annotations: Vec<launch::LoopAnnotation>,
    kernel: KernelAnalysis,
    /// Where the kernel started when it was analysed (to shift positions on reuse).
    start: u32,
    line: u32,
    /// The generation that last used it.
    used: u64,
}

/// The hash of a kernel's text and its callees' texts: the memo's bucket. Texts are
/// hashed rather than kept, not to hold a second copy of the document.
fn text_hash(body: &str, callees: &[&str]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut h);
    callees.hash(&mut h);
    h.finish()
}

impl KernelAnalysis {
    /// Moves every PTX position by the given deltas (the kernel's text is unchanged but
    /// an edit above it moved it).
    fn shift(&mut self, bytes: i64, lines: i64) {
        let sb = |s: &mut Span| {
            s.start = (i64::from(s.start) + bytes).max(0) as u32;
            s.end = (i64::from(s.end) + bytes).max(0) as u32;
        };
        let sl = |l: &mut u32| *l = (i64::from(*l) + lines).max(0) as u32;
        sb(&mut self.name_span);
        sb(&mut self.span);
        sl(&mut self.ptx_line);
        for f in &mut self.findings {
            sb(&mut f.ptx_span);
            sl(&mut f.ptx_line);
        }
        for t in &mut self.targets {
            for a in &mut t.profile.memory_accesses {
                sl(&mut a.ptx_line);
            }
            for l in &mut t.profile.loops {
                sl(&mut l.ptx_line);
            }
            for b in &mut t.profile.divergent_branches {
                sl(&mut b.ptx_line);
            }
        }
    }
}

/// The syntax diagnostics of a text: the parser's, then the lowering's.
fn file_diagnostics(parse_errors: &[ptx::ParseError], module: &ptx_ir::Module) -> Vec<SyntaxDiagnostic> {
    let mut syntax: Vec<SyntaxDiagnostic> = parse_errors
        .iter()
        .map(|e| SyntaxDiagnostic {
            span: e.span,
            message: e.message.clone(),
            severity: match e.severity {
                ptx::Severity::Error => Severity::Error,
                ptx::Severity::Warning => Severity::Warning,
            },
        })
        .collect();
    for d in &module.diagnostics {
        syntax.push(SyntaxDiagnostic {
            span: d.span,
            message: d.message.clone(),
            severity: match d.severity {
                ptx_ir::Severity::Error => Severity::Error,
                ptx_ir::Severity::Warning => Severity::Warning,
                ptx_ir::Severity::Info => Severity::Information,
            },
        });
    }
    syntax
}

/// The configured GPUs found in the database, and the ids that are not (with the closest
/// known ids). Settings that cannot apply to a GPU are reported in `syntax`.
fn resolve_gpus(settings: &Settings, syntax: &mut Vec<SyntaxDiagnostic>) -> (Vec<gpu_spec::Gpu>, Vec<(String, Vec<String>)>) {
    let db = gpu_spec::Database::builtin();
    let mut gpus = Vec::new();
    let mut unknown_gpus = Vec::new();
    for id in &settings.gpus {
        match settings.resolve_gpu(id) {
            Ok(g) => match settings.smem_carveout_percent.map(|p| g.with_smem_carveout(p)) {
                None => gpus.push(g.clone()),
                Some(Ok(view)) => gpus.push(view),
                Some(Err(e)) => {
                    syntax.push(SyntaxDiagnostic {
                        span: Span::default(),
                        message: format!("shared-memory carveout ignored on {}: {e}", g.id),
                        severity: Severity::Warning,
                    });
                    gpus.push(g.clone());
                }
            },
            Err(_) => unknown_gpus.push((id.clone(), db.closest(id, 3))),
        }
    }
    if settings.graph_launch {
        for g in &mut gpus {
            *g = g.with_graph_launch();
        }
    }
    if let Some(mhz) = settings.locked_clock_mhz {
        for g in &mut gpus {
            match g.with_locked_clock(mhz) {
                Ok(view) => *g = view,
                Err(e) => syntax.push(SyntaxDiagnostic {
                    span: Span::default(),
                    message: format!("locked clock ignored on {}: {e}", g.id),
                    severity: Severity::Warning,
                }),
            }
        }
    }
    (gpus, unknown_gpus)
}

/// Finds the PTX annotation of each kernel: the last annotation before the kernel, unless
/// another kernel starts between the two (an annotation belongs to the first kernel after
/// it). Binary searches over the annotations (in text order) and the kernels' starts, so
/// a module with thousands of kernels and annotations is not searched once per pair.
struct AnnotationIndex {
    annotations: Vec<launch::Annotation>,
    /// The loop annotations (`trips=`), in text order.
    loops: Vec<launch::LoopAnnotation>,
    kernel_starts: Vec<u32>,
}

/// The PTX annotations of one kernel: its launch, and the trip counts stated on its loops.
#[derive(Clone, Copy)]
struct PtxAnnotations<'a> {
    launch: Option<&'a launch::Annotation>,
    loops: &'a [launch::LoopAnnotation],
}

impl AnnotationIndex {
    fn new(text: &str, module: &ptx_ir::Module) -> AnnotationIndex {
        let mut kernel_starts: Vec<u32> = module.kernels().map(|k| k.span.start).collect();
        kernel_starts.sort_unstable();
        let (annotations, loops) = launch::ptx_annotations(text);
        AnnotationIndex { annotations, loops, kernel_starts }
    }

    /// The annotations of the kernel `func`: its launch annotation, and the loop
    /// annotations inside its body.
    fn for_kernel(&self, func: &ptx_ir::Function) -> PtxAnnotations<'_> {
        let from = self.loops.partition_point(|a| (a.offset as u32) < func.span.start);
        let to = self.loops.partition_point(|a| (a.offset as u32) < func.span.end);
        PtxAnnotations { launch: self.of(func.span.start), loops: &self.loops[from..to.max(from)] }
    }

    fn of(&self, kernel_start: u32) -> Option<&launch::Annotation> {
        let before = self.annotations.partition_point(|a| (a.offset as u32) < kernel_start);
        let a = self.annotations[..before].last()?;
        let first_after = self.kernel_starts.partition_point(|&s| s <= a.offset as u32);
        let between = self.kernel_starts.get(first_after).is_some_and(|&s| s < kernel_start);
        (!between).then_some(a)
    }
}

/// [`analyze`] with an optional memo of per-kernel results.
pub fn analyze_memo(text: &str, settings: &Settings, context: &Context, mut memo: Option<&mut Memo>) -> FileAnalysis {
    // Parse and lower in one streaming pass: no syntax tree of the bodies is kept.
    let (module, parse_errors) = ptx_ir::parse_and_lower(text);
    let mut syntax = file_diagnostics(&parse_errors, &module);
    let (gpus, unknown_gpus) = resolve_gpus(settings, &mut syntax);
    let annotations = AnnotationIndex::new(text, &module);
    let generation = match memo.as_deref_mut() {
        Some(m) => {
            let inputs = FileInputs::of(&module, settings, context);
            if m.file.as_ref() != Some(&inputs) {
                m.entries.clear();
                m.file = Some(inputs);
            }
            m.generation += 1;
            m.generation
        }
        None => 0,
    };
    let kernels: Vec<KernelAnalysis> = module
        .kernels()
        .filter(|func| settings.only_kernel.as_ref().is_none_or(|k| *k == func.name))
        .map(|func| {
            let ptx_annotation = annotations.for_kernel(func);
            let cx = context.kernels.get(&func.name).cloned().unwrap_or_default();
            let Some(memo) = memo.as_deref_mut() else {
                return analyze_kernel(&module, func, ptx_annotation, &cx, &context.used_args, settings, &gpus);
            };
            let body = text.get(func.span.start as usize..func.span.end as usize).unwrap_or("");
            let callees: Vec<&str> = func
                .calls
                .iter()
                .filter_map(|c| c.callee.as_deref().and_then(|n| module.function(n)))
                .map(|f| text.get(f.span.start as usize..f.span.end as usize).unwrap_or(""))
                .collect();
            let annotation = ptx_annotation.launch.map(|a| a.launch.clone());
            // Compared without their byte offsets, which move with the kernel.
            let loop_annotations: Vec<launch::LoopAnnotation> = ptx_annotation.loops.iter().map(|a| launch::LoopAnnotation { offset: 0, ..a.clone() }).collect();
            let bucket = memo.entries.entry(text_hash(body, &callees)).or_default();
            if let Some(e) = bucket.iter_mut().find(|e| e.context == cx && e.annotation == annotation && e.loop_annotations == loop_annotations) {
                let mut k = e.kernel.clone();
                k.shift(i64::from(func.span.start) - i64::from(e.start), i64::from(func.ptx_line) - i64::from(e.line));
                e.used = generation;
                return k;
            }
            memo.kernel_runs += 1;
            let k = analyze_kernel(&module, func, ptx_annotation, &cx, &context.used_args, settings, &gpus);
            bucket.push(MemoEntry { context: cx, annotation, loop_annotations, kernel: k.clone(), start: func.span.start, line: func.ptx_line, used: generation });
            k
        })
        .collect();
    if let Some(m) = memo {
        for bucket in m.entries.values_mut() {
            bucket.retain(|e| e.used == generation);
        }
        m.entries.retain(|_, bucket| !bucket.is_empty());
    }
    FileAnalysis { syntax, target: module.target.clone(), version: module.version, kernels, unknown_gpus, module }
}

/// The kernels of one PTX text, analysed one at a time, for a caller that reports each and
/// lets it go (the CLI): the same results as [`analyze`], in the same order, without
/// holding every kernel's lowered form and results at once.
///
/// Why: [`analyze`] keeps the whole lowered module (about 340 bytes per instruction) and
/// every kernel's profile and predictions, 14 times the text for a 100 MB module. Here the
/// module is lowered without its kernels' bodies ([`ptx_ir::parse_and_lower_stripped`]);
/// each kernel is lowered again from the text when its turn comes
/// ([`ptx_ir::lower_entry`]), analysed, and dropped with its result by the caller.
pub struct KernelStream {
    text: String,
    settings: Settings,
    context: Context,
    module: ptx_ir::Module,
    gpus: Vec<gpu_spec::Gpu>,
    annotations: AnnotationIndex,
    /// Indices in `module.functions` of the kernels still to analyse, in reverse order.
    pending: Vec<usize>,
    /// The syntax diagnostics, as [`FileAnalysis::syntax`].
    pub syntax: Vec<SyntaxDiagnostic>,
    pub target: Option<String>,
    pub version: Option<(u32, u32)>,
    pub unknown_gpus: Vec<(String, Vec<String>)>,
}

impl KernelStream {
    pub fn new(text: String, settings: &Settings, context: &Context) -> KernelStream {
        let (module, parse_errors) = ptx_ir::parse_and_lower_stripped(&text);
        let mut syntax = file_diagnostics(&parse_errors, &module);
        let (gpus, unknown_gpus) = resolve_gpus(settings, &mut syntax);
        let annotations = AnnotationIndex::new(&text, &module);
        let pending: Vec<usize> = module
            .functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.kind == ptx_ir::FunctionKind::Entry && f.has_body)
            .map(|(i, _)| i)
            .rev()
            .collect();
        KernelStream {
            target: module.target.clone(),
            version: module.version,
            text,
            settings: settings.clone(),
            context: context.clone(),
            module,
            gpus,
            annotations,
            pending,
            syntax,
            unknown_gpus,
        }
    }

    /// The analysed text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How many kernels are still to come.
    pub fn remaining(&self) -> usize {
        self.pending.len()
    }

    /// The next kernel's analysis, in source order.
    pub fn next_kernel(&mut self) -> Option<KernelAnalysis> {
        let index = self.pending.pop()?;
        let full = ptx_ir::lower_entry(&self.text, &self.module, index);
        // The kernel's lowered body stands in for its stub while it is analysed, so that
        // the analysis sees the same module as `analyze`; the stub goes back afterwards.
        let stub = match full {
            Some(f) => Some(std::mem::replace(&mut self.module.functions[index], f)),
            None => {
                // Cannot happen for a text this stream lowered itself (a test compares
                // every fixture with `analyze`); said rather than hidden if it does.
                tracing::warn!("kernel `{}` could not be lowered again; analysed without its body", self.module.functions[index].name);
                None
            }
        };
        let func = &self.module.functions[index];
        let ptx_annotation = self.annotations.for_kernel(func);
        let cx = self.context.kernels.get(&func.name).cloned().unwrap_or_default();
        let kernel = analyze_kernel(&self.module, func, ptx_annotation, &cx, &self.context.used_args, &self.settings, &self.gpus);
        if let Some(stub) = stub {
            self.module.functions[index] = stub;
        }
        Some(kernel)
    }
}

impl Iterator for KernelStream {
    type Item = KernelAnalysis;
    fn next(&mut self) -> Option<KernelAnalysis> {
        self.next_kernel()
    }
}

fn analyze_kernel(
    module: &ptx_ir::Module,
    func: &ptx_ir::Function,
    ptx_annotations: PtxAnnotations<'_>,
    cx: &KernelContext,
    used_args: &std::collections::BTreeSet<String>,
    settings: &Settings,
    gpus: &[gpu_spec::Gpu],
) -> KernelAnalysis {
    let empty = PartialLaunch::default();
    let ptx_annotation = ptx_annotations.launch;
    let annotation = cx.annotation.as_ref().or(ptx_annotation.map(|a| &a.launch)).unwrap_or(&empty);
    // Trip counts stated on loops: in the CUDA source (the front end's), or in the PTX.
    let mut stated_trips = cx.stated_trips.clone();
    stated_trips.extend(ptx_annotations.loops.iter().filter_map(|a| a.stated.clone()));
    // What could not be read in the annotations, said with the assumptions.
    let mut annotation_notes = cx.annotation_notes.clone();
    for a in ptx_annotations.loops {
        annotation_notes.extend(a.errors.iter().map(|e| format!("the annotation at PTX line {} is not read: {e}", a.line)));
    }
    if let Some(a) = ptx_annotation {
        annotation_notes.extend(a.errors.iter().map(|e| format!("the launch annotation before the kernel is not read in part: {e}")));
    }
    // One by one up to a few, the rest counted (a file of many unreadable comments would
    // otherwise bury the other assumptions).
    if annotation_notes.len() > kernel_profile::MAX_ANNOTATION_NOTES {
        let more = annotation_notes.len() - kernel_profile::MAX_ANNOTATION_NOTES;
        annotation_notes.truncate(kernel_profile::MAX_ANNOTATION_NOTES);
        annotation_notes.push(format!("{more} more annotation problems of this kernel are not listed"));
    }
    let call_site = cx.call_site.as_ref().unwrap_or(&empty);
    // A user value the front end used for a host variable (`--arg Width=1024` feeding
    // `dim3 grid(Width / 16)`) is not a kernel argument: leave it out here, so it is not
    // reported as matching no parameter; one that is also a parameter name stays.
    let is_param = |k: &str| {
        cx.param_names.iter().any(|p| p == k)
            || func.params.iter().enumerate().any(|(i, p)| p.name == k || k == format!("param_{i}") || k == i.to_string())
    };
    let user_args: BTreeMap<String, i64> =
        settings.args.iter().filter(|(k, _)| !used_args.contains(*k) || is_param(k)).map(|(k, v)| (k.clone(), *v)).collect();
    let launch = launch::resolve(
        &[(LaunchSource::Setting, &settings.launch), (LaunchSource::Annotation, annotation), (LaunchSource::CallSite, call_site)],
        &user_args,
    );
    let mut static_mix = func.class_counts();
    // Each callee's counts once, however often it is called.
    let mut per_callee: HashMap<&str, BTreeMap<InstrClass, u64>> = HashMap::new();
    for c in &func.calls {
        if let Some(callee) = c.callee.as_deref().and_then(|n| module.function(n)) {
            let mix = per_callee.entry(callee.name.as_str()).or_insert_with(|| callee.class_counts());
            for (k, v) in mix.iter() {
                *static_mix.entry(*k).or_insert(0) += v;
            }
        }
    }
    let demangled = cx.demangled.clone().or_else(|| ptx::demangle(&func.name));
    // The profile depends on the GPU only through the shared-memory bank count (CC 1.x or
    // later: `ProfileInput::compute_capability`): built once per bank count, not per GPU
    // (the trip counts, the branch simulation and the address analysis are the costly part).
    let mut built: HashMap<bool, Option<kernel_profile::KernelProfile>> = HashMap::new();
    let targets = gpus
        .iter()
        .filter_map(|gpu| {
            let input = kernel_profile::ProfileInput {
                module,
                kernel: &func.name,
                gpu_id: &gpu.id,
                compute_capability: (gpu.cc.major, gpu.cc.minor),
                launch: launch.clone(),
                resources: cx.resources.clone(),
                source_param_names: &cx.param_names,
                demangled: demangled.clone(),
                options: &settings.profile,
                stated_trips: &stated_trips,
            };
            let mut profile = built.entry(gpu.cc.major <= 1).or_insert_with(|| kernel_profile::build(&input)).clone()?;
            profile.gpu = gpu.id.clone();
            // Why the launch site did not fold, unless the settings or an annotation gave
            // the whole launch anyway.
            let stated = |f: fn(&PartialLaunch) -> bool| f(&settings.launch) || f(annotation);
            let fully_stated = stated(|p| p.grid.is_some()) && stated(|p| p.block.is_some());
            if let Some(note) = cx.call_site_note.as_ref().filter(|_| !fully_stated) {
                profile.assumptions.push(note.clone());
            }
            profile.assumptions.extend(annotation_notes.iter().cloned());
            let threads = u32::try_from(launch.threads_per_block()).unwrap_or(u32::MAX);
            let occupancy = gpu
                .occupancy(threads, profile.resources.registers_per_thread, profile.resources.static_smem_bytes, launch.dynamic_smem)
                .map_err(|e| e.to_string());
            let waves = occupancy.as_ref().ok().map(|o| gpu_spec::occupancy::waves(launch.blocks(), o.blocks_per_sm, gpu.sm_count));
            let models = perf_models::run_all_for_gpu(&profile, gpu, &settings.models);
            let occ = occupancy.as_ref().map_or(0.0, |o| o.occupancy);
            let power = match &models {
                Ok(m) => power_for(&profile, gpu, occ, m),
                Err(_) => None,
            };
            let energy_uj = match (&power, &models) {
                (Some(p), Ok(m)) => power_model::energy_uj(p.watts, m.headline.time_us),
                _ => None,
            };
            Some(TargetAnalysis { gpu: gpu.clone(), occupancy, waves, profile, models, power, energy_uj })
        })
        .collect();
    let mut kernel = KernelAnalysis {
        name: func.name.clone(),
        demangled,
        name_span: func.name_span,
        span: func.span,
        ptx_line: func.ptx_line,
        static_mix,
        declared_registers: func.reg_decls.clone(),
        static_smem_bytes: func.static_smem_bytes,
        local_bytes: func.local_bytes,
        launch,
        source: cx.source.clone(),
        launch_errors: ptx_annotation.map(|a| a.errors.clone()).unwrap_or_default(),
        targets,
        findings: Vec::new(),
    };
    kernel.findings = findings::for_kernel(&kernel, module, &settings.severities);
    // Kernel-level findings (no instruction, so no `.loc`) belong on the kernel's
    // definition in the source.
    if let Some((file, line)) = &kernel.source {
        for f in kernel.findings.iter_mut().filter(|f| f.source_line.is_none()) {
            f.source_file = Some(file.clone());
            f.source_line = Some(*line);
        }
    }
    kernel
}

/// The GPUs with a trained power model (Alavani 2023's datasets), by database id.
fn trained_model(gpu: &gpu_spec::Gpu) -> Option<power_model::TrainedGpu> {
    match gpu.id.as_str() {
        "tesla-k20" => Some(power_model::TrainedGpu::K20),
        "tesla-m60" => Some(power_model::TrainedGpu::M60),
        id if id.starts_with("tesla-v100") => Some(power_model::TrainedGpu::V100),
        _ => None,
    }
}

/// Power for one kernel on one GPU: its own trained model (the K20, the M60, the V100);
/// elsewhere the activity model over the headline time and the bottleneck model's DRAM
/// bytes, or, where the bottleneck model did not apply or the memory type is unknown, the
/// nearest trained model transferred onto the GPU's idle-to-TDP range (docs/power.md).
fn power_for(profile: &KernelProfile, gpu: &gpu_spec::Gpu, occupancy: f64, models: &perf_models::Report) -> Option<PowerSummary> {
    let trained = trained_model(gpu);
    if trained.is_none()
        && let Some(est) = activity_power(profile, gpu, models)
    {
        return Some(summary_of(est));
    }
    let (source, own) = match trained {
        Some(t) => (t, true),
        None => (power_model::TrainedGpu::nearest(gpu.cc.major, gpu.cc.minor), false),
    };
    let mut est = match power_model::estimate_profile(profile, occupancy, source) {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!("power model {source:?} unusable: {e}");
            return None;
        }
    };
    if !own {
        let target = power_model::TargetGpu { name: gpu.name.clone(), tdp_w: gpu.tdp_w, idle_w: gpu.idle_power_w };
        est = power_model::transfer(&est, source, &target);
    }
    Some(summary_of(est))
}

fn summary_of(est: power_model::PowerEstimate) -> PowerSummary {
    PowerSummary {
        watts: est.watts,
        base_watts: est.base_watts,
        contributions: est.contributions,
        confidence: est.confidence,
        model_gpu: est.model_gpu,
        notes: est.notes,
    }
}

/// The activity model (`power_model::activity`): the kernel's lane instructions (each
/// thread's dynamic count, as ptxas issues them, times the threads) and the bottleneck
/// model's DRAM bytes over the headline time, at the clock the bottleneck model ran at
/// (lowered where the board's power limit binds, `perf_models::power_limit`).
fn activity_power(profile: &KernelProfile, gpu: &gpu_spec::Gpu, models: &perf_models::Report) -> Option<power_model::PowerEstimate> {
    use power_model::activity;
    let memory = activity::Memory::from_mem_type(&gpu.mem_type)?;
    let bottleneck = models.predictions.iter().find(|p| p.model == "bottleneck")?;
    let work = activity::Work {
        lane_instructions: perf_models::power_limit::lane_instructions(profile),
        dram_bytes: bottleneck.breakdown.get("dram_bytes").copied().unwrap_or(0.0),
        // The breakdown's share is of the clock the model started from (the boost clock, or a
        // locked one); an instruction's energy goes with the share of the rated boost clock.
        clock_ratio: bottleneck.breakdown.get(perf_models::bottleneck::CLOCK_RATIO).copied().unwrap_or(1.0) * gpu.clock_share(),
        power_limited: bottleneck.breakdown.contains_key(perf_models::bottleneck::CLOCK_RATIO),
    };
    let board = activity::Board {
        name: gpu.name.clone(),
        tdp_w: gpu.tdp_w,
        idle_w: gpu.idle_power_w,
        memory,
        bus_width_bits: f64::from(gpu.mem_bus_width_bits),
    };
    Some(activity::estimate(&work, models.headline.time_us, &board))
}

/// Analyses one PTX module with default settings and no context.
pub fn analyze_ptx(text: &str) -> FileAnalysis {
    analyze(text, &Settings::default(), &Context::default())
}

#[cfg(test)]
mod tests {

    #[test]
    fn trained_power_models_go_to_the_boards_they_were_trained_on() {
        // By product name, not by id, so a renamed or misspelled id fails here (issue 19:
        // a spelled-id match once missed every V100 of the scheduling model).
        for g in gpu_spec::Database::builtin().gpus() {
            let want = if g.name.contains("Tesla V100") {
                Some(power_model::TrainedGpu::V100)
            } else if g.name.contains("Tesla K20") && !g.name.contains("K20X") {
                Some(power_model::TrainedGpu::K20)
            } else if g.name.contains("Tesla M60") {
                Some(power_model::TrainedGpu::M60)
            } else {
                None
            };
            assert_eq!(super::trained_model(g), want, "{} ({})", g.id, g.name);
        }
    }
    use super::*;

    /// The rule as first written: the last annotation before the kernel with no other
    /// kernel starting in between (a search over all pairs).
    fn annotation_by_search<'a>(annotations: &'a [launch::Annotation], module: &ptx_ir::Module, start: u32) -> Option<&'a launch::Annotation> {
        annotations.iter().rfind(|a| (a.offset as u32) < start && !module.kernels().any(|k| k.span.start > a.offset as u32 && k.span.start < start))
    }

    #[test]
    fn the_annotation_index_follows_the_rule() {
        // Every pattern of up to 8 items, each an annotation or a kernel.
        for pattern in 0u32..256 {
            for len in 1..=8 {
                let mut text = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
                for i in 0..len {
                    if pattern >> i & 1 == 1 {
                        text.push_str(&format!("// warpsight: grid={}\n", i + 1));
                    } else {
                        text.push_str(&format!(".visible .entry k{i}()\n{{\n\tret;\n}}\n"));
                    }
                }
                let module = ptx_ir::parse_and_lower(&text).0;
                let index = AnnotationIndex::new(&text, &module);
                for k in module.kernels() {
                    let want = annotation_by_search(&index.annotations, &module, k.span.start).map(|a| a.offset);
                    assert_eq!(index.of(k.span.start).map(|a| a.offset), want, "{text}");
                }
            }
        }
    }
}
