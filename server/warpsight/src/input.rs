//! Reading inputs for the analysis commands: finding files, refusing binary or gigantic
//! ones with one clear error, compiling `.cu` files through the CUDA front end, and turning
//! the front end's findings into the analysis context.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// Files larger than this are refused: PTX of this size takes seconds to analyse and is
/// almost certainly not what the user meant to open.
pub const MAX_INPUT_BYTES: u64 = 512 << 20;

/// Launch, target and compiler flags shared by `analyze` and `profile`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LaunchArgs {
    /// Target GPU id or alias (repeatable; `warpsight gpus` lists them).
    #[arg(long = "gpu", value_name = "ID")]
    pub gpus: Vec<String>,
    /// Grid size: X, XxY or XxYxZ (overrides annotations and launch sites).
    #[arg(long, value_name = "DIMS")]
    pub grid: Option<String>,
    /// Block size: X, XxY or XxYxZ (overrides annotations and launch sites).
    #[arg(long, value_name = "DIMS")]
    pub block: Option<String>,
    /// Dynamic shared memory per block in bytes.
    #[arg(long = "dyn-smem", value_name = "BYTES")]
    pub dyn_smem: Option<u32>,
    /// A kernel argument value, e.g. `n=1048576` (repeatable); names may be the CUDA
    /// parameter name, the PTX parameter name or `param_N`.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Trip count assumed for loops whose count is unknown.
    #[arg(long, value_name = "N", default_value_t = 16.0)]
    pub default_trip_count: f64,
    /// Severity of a diagnostic code: CODE=error|warning|information|hint|off (repeatable).
    #[arg(long = "severity", value_name = "CODE=LEVEL")]
    pub severities: Vec<String>,
    /// `.cu` only: target architecture (sm_80, 8.6, ...); default: the first GPU's.
    #[arg(long)]
    pub arch: Option<String>,
    /// `.cu` only: the nvcc to use.
    #[arg(long)]
    pub nvcc: Option<PathBuf>,
    /// `.cu` only: a preprocessor definition NAME[=VALUE] (repeatable).
    #[arg(long = "define", short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// `.cu` only: an include directory (repeatable).
    #[arg(long = "include", short = 'I', value_name = "DIR")]
    pub includes: Vec<PathBuf>,
    /// `.cu` only: never compile; use recorded PTX.
    #[arg(long)]
    pub no_compile: bool,
    /// `.cu` only: do not read or write the compile cache.
    #[arg(long)]
    pub no_cache: bool,
}

impl LaunchArgs {
    pub fn settings(&self) -> anyhow::Result<analysis::Settings> {
        let mut s = analysis::Settings::default();
        if !self.gpus.is_empty() {
            s.gpus = self.gpus.clone();
        }
        let dims = |v: &Option<String>, what: &str| -> anyhow::Result<Option<[u32; 3]>> {
            match v {
                None => Ok(None),
                Some(t) => analysis::launch::parse_dims(t).map(Some).with_context(|| format!("--{what} `{t}`: expected X, XxY or XxYxZ (positive integers)")),
            }
        };
        s.launch.grid = dims(&self.grid, "grid")?;
        s.launch.block = dims(&self.block, "block")?;
        s.launch.dynamic_smem = self.dyn_smem;
        for a in &self.args {
            let Some((k, v)) = cuda_frontend::compile::parse_arg(a) else {
                bail!("--arg `{a}`: expected NAME=VALUE with an integer (or constant expression) value");
            };
            s.args.insert(k, v);
        }
        if !(self.default_trip_count.is_finite() && self.default_trip_count >= 0.0) {
            bail!("--default-trip-count must be a non-negative number");
        }
        s.profile.default_trip_count = self.default_trip_count;
        for item in &self.severities {
            let parsed = item.split_once('=').and_then(|(code, level)| lsp::parse_severity(level).map(|l| (code, l)));
            let Some((code, level)) = parsed else {
                bail!("--severity `{item}`: expected CODE=error|warning|information|hint|off");
            };
            if !analysis::findings::CODES.contains(&code) {
                bail!("--severity `{item}`: unknown code `{code}` (known: {})", analysis::findings::CODES.join(", "));
            }
            s.severities.insert(code.to_string(), level);
        }
        Ok(s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Ptx,
    Cuda,
}

fn kind_of(path: &Path) -> Option<SourceKind> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("ptx") => Some(SourceKind::Ptx),
        Some("cu" | "cuh") => Some(SourceKind::Cuda),
        _ => None,
    }
}

/// Expands directories (recursively, sorted) into their `.ptx`/`.cu`/`.cuh` files; files
/// named explicitly are kept whatever their extension (read as PTX).
pub fn collect_files(paths: &[PathBuf]) -> Vec<anyhow::Result<PathBuf>> {
    let mut res = Vec::new();
    for p in paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => {
                let mut found = Vec::new();
                walk(p, &mut found);
                found.sort();
                res.extend(found.into_iter().map(Ok));
            }
            Ok(_) => res.push(Ok(p.clone())),
            Err(e) => res.push(Err(anyhow::anyhow!("cannot read {}: {e}", p.display()))),
        }
    }
    res
}

fn walk(dir: &Path, acc: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, acc),
            Ok(t) if t.is_file() && kind_of(&p).is_some() => acc.push(p),
            _ => {}
        }
    }
}

/// Reads a text file, refusing binary data and files over [`MAX_INPUT_BYTES`].
pub fn read_text(path: &Path) -> anyhow::Result<String> {
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if meta.len() > MAX_INPUT_BYTES {
        bail!("{}: file is too large ({} MiB; the limit is {} MiB)", path.display(), meta.len() >> 20, MAX_INPUT_BYTES >> 20);
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.iter().take(1 << 16).any(|b| *b == 0) {
        bail!("{}: not a text file (binary data)", path.display());
    }
    String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{}: not a text file (invalid UTF-8)", path.display()))
}

/// One analysed input, all at once (`profile`; `analyze` streams, see [`Streamed`]). The
/// complete record of the input: not every command reads every field.
#[allow(dead_code)]
pub struct Loaded {
    pub display_path: String,
    pub kind: SourceKind,
    /// The PTX analysed (for a `.cu`, what the compiler produced or the recorded PTX).
    pub ptx: String,
    pub analysis: analysis::FileAnalysis,
    /// Where the PTX came from, architecture substitutions, dropped flags...
    pub notes: Vec<String>,
    /// Compiler errors and warnings, formatted `file:line:col: severity: message`.
    pub compiler_errors: Vec<String>,
    pub compile_failed: bool,
}

impl Loaded {
    pub fn has_errors(&self) -> bool {
        self.compile_failed || self.analysis.syntax.iter().any(|d| d.severity == analysis::Severity::Error)
    }
}

/// One input whose kernels are analysed one at a time ([`analysis::KernelStream`], which
/// owns the PTX): what `analyze` prints, in bounded memory.
pub struct Streamed {
    pub display_path: String,
    pub kind: SourceKind,
    pub kernels: analysis::KernelStream,
    pub notes: Vec<String>,
    pub compiler_errors: Vec<String>,
    pub compile_failed: bool,
}

impl Streamed {
    pub fn has_errors(&self) -> bool {
        self.compile_failed || self.kernels.syntax.iter().any(|d| d.severity == analysis::Severity::Error)
    }
}

/// An input before its analysis: the PTX and what the CUDA front end found.
struct Source {
    display_path: String,
    kind: SourceKind,
    ptx: String,
    context: analysis::Context,
    notes: Vec<String>,
    compiler_errors: Vec<String>,
    compile_failed: bool,
}

/// Loads and analyses one file.
pub fn load(path: &Path, args: &LaunchArgs) -> anyhow::Result<Loaded> {
    let settings = args.settings()?;
    let s = source(path, args, &settings)?;
    let analysis = analysis::analyze(&s.ptx, &settings, &s.context);
    Ok(Loaded { display_path: s.display_path, kind: s.kind, ptx: s.ptx, analysis, notes: s.notes, compiler_errors: s.compiler_errors, compile_failed: s.compile_failed })
}

/// Loads one file for an analysis kernel by kernel.
pub fn load_streamed(path: &Path, args: &LaunchArgs) -> anyhow::Result<Streamed> {
    let settings = args.settings()?;
    let s = source(path, args, &settings)?;
    let kernels = analysis::KernelStream::new(s.ptx, &settings, &s.context);
    Ok(Streamed { display_path: s.display_path, kind: s.kind, kernels, notes: s.notes, compiler_errors: s.compiler_errors, compile_failed: s.compile_failed })
}

fn source(path: &Path, args: &LaunchArgs, settings: &analysis::Settings) -> anyhow::Result<Source> {
    let display_path = path.display().to_string();
    match kind_of(path).unwrap_or(SourceKind::Ptx) {
        SourceKind::Ptx => {
            let text = read_text(path)?;
            Ok(Source { display_path, kind: SourceKind::Ptx, ptx: text, context: analysis::Context::default(), notes: Vec::new(), compiler_errors: Vec::new(), compile_failed: false })
        }
        SourceKind::Cuda => load_cuda(path, args, settings, display_path),
    }
}

fn load_cuda(path: &Path, args: &LaunchArgs, settings: &analysis::Settings, display_path: String) -> anyhow::Result<Source> {
    // Read it once here so binary or huge files get the same one-line error as PTX.
    read_text(path)?;
    let db = gpu_spec::Database::builtin();
    let arch = args.arch.clone().or_else(|| {
        settings.gpus.first().and_then(|g| db.gpu(g).ok()).map(|g| format!("sm_{}{}", g.cc.major, g.cc.minor))
    });
    let opts = cuda_frontend::compile::Options {
        arch,
        compiler: if args.no_compile { cuda_frontend::compile::CompilerChoice::RecordedOnly } else { Default::default() },
        nvcc: args.nvcc.clone(),
        defines: args.defines.clone(),
        include_dirs: args.includes.clone(),
        args: settings.args.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        use_cache: !args.no_cache,
        ..Default::default()
    };
    let prepared = cuda_frontend::compile::prepare(path, &opts);
    let mut notes = vec![prepared.toolchain_note.clone()];
    notes.extend(prepared.notes.iter().cloned());
    let compiler_errors: Vec<String> = prepared
        .diagnostics
        .iter()
        .map(|d| {
            let file = d.file.clone().unwrap_or_else(|| display_path.clone());
            let line = d.line.map(|l| format!(":{l}")).unwrap_or_default();
            let col = d.column.map(|c| format!(":{c}")).unwrap_or_default();
            format!("{file}{line}{col}: {}: {}", format!("{:?}", d.severity).to_lowercase(), d.message)
        })
        .collect();
    let context = lsp::cuda::analysis_context(&prepared);
    let compile_failed = prepared.has_errors() || prepared.ptx.is_empty();
    Ok(Source { display_path, kind: SourceKind::Cuda, ptx: prepared.ptx, context, notes, compiler_errors, compile_failed })
}
