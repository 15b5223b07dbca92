//! Reading inputs for the analysis commands: finding files, refusing binary or gigantic
//! ones with one clear error, compiling `.cu` files through the CUDA front end, and turning
//! the front end's findings into the analysis context.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// Files larger than this are refused: PTX of this size takes seconds to analyse and is
/// almost certainly not what the user meant to open. Applied while reading.
pub const MAX_INPUT_BYTES: u64 = cuda_frontend::files::MAX_SOURCE_BYTES;

/// Launch, target and compiler flags shared by `analyze` and `profile`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LaunchArgs {
    /// Target GPU id or alias (repeatable; `warpsight gpus` lists them).
    #[arg(long = "gpu", value_name = "ID")]
    pub gpus: Vec<String>,
    /// A GPU file in the format of `gpu-data/gpus/*.toml` (repeatable): its GPUs can be named
    /// with `--gpu`, and an entry with a built-in id replaces it (e.g. the file `warpsight
    /// calibrate` writes). docs/gpus.md.
    #[arg(long = "gpu-file", value_name = "PATH")]
    pub gpu_files: Vec<PathBuf>,
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
    /// parameter name, the PTX parameter name, `param_N`, a host variable the launch site
    /// reads, or `argv[K]` for a value the host program converts from its K-th argument.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Bytes the kernel's data-dependent accesses range over (a gather's table, a pointer
    /// chase's buffer), e.g. `4<<20`: they are then served by the cache level that holds
    /// that much (the annotation key `footprint`).
    #[arg(long, value_name = "BYTES")]
    pub footprint: Option<String>,
    /// Bytes allocated for pointer parameter NAME (repeatable), e.g. `x=16<<20`: what a
    /// data-dependent access through it ranges over (a gather `x[col[k]]`); names as for
    /// `--arg` (the annotation key `bytes.NAME`).
    #[arg(long = "bytes", value_name = "NAME=BYTES")]
    pub array_bytes: Vec<String>,
    /// The kernel is launched from a CUDA graph (`cudaGraphLaunch`): each launch costs the
    /// graph's per-kernel overhead instead of a stream launch's (docs/models/bottleneck.md).
    #[arg(long)]
    pub graph_launch: bool,
    /// The SM clock is locked at MHZ (`nvidia-smi --lock-gpu-clocks`): the models run at it
    /// instead of the boost clock, and the power limit can still lower it
    /// (docs/models/bottleneck.md, "Power limit").
    #[arg(long = "locked-clock", value_name = "MHZ")]
    pub locked_clock: Option<f64>,
    /// Trip count assumed for loops whose count is unknown (0 to 1e9).
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
    /// `.cu` only: the time budget of one file's compile in seconds (toolchain probes,
    /// compiler and ptxas together; default 20, at most 3600).
    #[arg(long = "compile-timeout", value_name = "SECONDS", value_parser = parse_compile_timeout, allow_negative_numbers = true)]
    pub compile_timeout: Option<std::time::Duration>,
}

/// The longest `--compile-timeout` accepted: an hour.
pub const MAX_COMPILE_TIMEOUT_S: f64 = 3600.0;

/// `--compile-timeout`: a finite number of seconds, above zero and at most an hour.
fn parse_compile_timeout(s: &str) -> Result<std::time::Duration, String> {
    let expected = format!("expected a number of seconds greater than 0 and at most {MAX_COMPILE_TIMEOUT_S}");
    let v: f64 = s.trim().parse().map_err(|_| expected.clone())?;
    if !(v.is_finite() && v > 0.0 && v <= MAX_COMPILE_TIMEOUT_S) {
        return Err(expected);
    }
    std::time::Duration::try_from_secs_f64(v).map_err(|_| expected)
}

impl LaunchArgs {
    /// One note per `--arg` with a floating-point value, which [`Self::settings`] accepts
    /// and leaves out.
    pub fn float_arg_notes(&self) -> Vec<String> {
        self.args
            .iter()
            .filter(|a| matches!(cuda_frontend::launch::parse_arg(a), Ok((_, analysis::launch::ArgValue::Float(_)))))
            .map(|a| format!("--arg {a}: a floating-point value; the analysis folds integer arguments only (trip counts, addresses, guards), so it does not use it"))
            .collect()
    }

    pub fn settings(&self) -> anyhow::Result<analysis::Settings> {
        let mut s = analysis::Settings::default();
        if !self.gpus.is_empty() {
            s.gpus = analysis::settings::check_gpu_ids(self.gpus.iter().map(String::as_str)).map_err(|why| anyhow::anyhow!("--gpu: {why}"))?;
        }
        s.user_gpus = load_gpu_files(&self.gpu_files)?;
        // A GPU the user named and the database does not have is a usage error (exit 2),
        // not an analysis without that GPU.
        for id in &s.gpus {
            if let Err(e) = s.resolve_gpu(id) {
                bail!("--gpu: {e} (`warpsight gpus` lists them; `--gpu-file` adds your own)");
            }
        }
        let dims = |v: &Option<String>, what: &str| -> anyhow::Result<Option<[u32; 3]>> {
            match v {
                None => Ok(None),
                Some(t) => analysis::launch::parse_dims(t).map(Some).map_err(|e| anyhow::anyhow!("--{what} {e}: expected X, XxY or XxYxZ (positive integers)")),
            }
        };
        s.launch.grid = dims(&self.grid, "grid")?;
        s.launch.block = dims(&self.block, "block")?;
        s.launch.dynamic_smem = self.dyn_smem;
        if let Some(f) = &self.footprint {
            s.launch.footprint = Some(analysis::launch::parse_footprint(f).map_err(|e| anyhow::anyhow!("--footprint {e}"))?);
        }
        for item in &self.array_bytes {
            let (name, value) = item.split_once('=').map(|(n, v)| (n.trim(), v.trim())).filter(|(n, _)| analysis::launch::valid_arg_name(n)).ok_or_else(|| anyhow::anyhow!("--bytes `{item}`: expected NAME=BYTES with a parameter name"))?;
            let bytes = analysis::launch::parse_footprint(value).map_err(|e| anyhow::anyhow!("--bytes {name}: {e}"))?;
            s.launch.array_bytes.insert(name.to_string(), bytes);
        }
        for a in &self.args {
            match cuda_frontend::launch::parse_arg(a) {
                Ok((k, analysis::launch::ArgValue::Int(v))) => {
                    s.args.insert(k, v);
                }
                // A floating-point value (`eps=0.01`) is accepted and not used: the analysis
                // folds integer arguments only. `float_arg_notes` says so, once.
                Ok((_, analysis::launch::ArgValue::Float(_))) => {}
                Err(e) => bail!("--arg {e}: expected NAME=VALUE with an integer (or constant expression) value"),
            }
        }
        s.graph_launch = self.graph_launch;
        if let Some(mhz) = self.locked_clock {
            s.locked_clock_mhz = Some(gpu_spec::gpu::check_locked_clock(mhz).map_err(|e| anyhow::anyhow!("--locked-clock {e}"))?);
        }
        s.profile.default_trip_count = analysis::settings::check_default_trip_count(self.default_trip_count).map_err(|why| anyhow::anyhow!("--default-trip-count: {why}"))?;
        for item in &self.severities {
            let parsed = item.split_once('=').and_then(|(code, level)| analysis::settings::parse_severity(level).map(|l| (code, l)));
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

/// Reads the user's GPU files and returns their GPUs, or one error listing every problem.
pub fn load_gpu_files(paths: &[PathBuf]) -> anyhow::Result<Vec<gpu_spec::Gpu>> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut texts = Vec::new();
    for p in paths {
        let text = read_text(p).with_context(|| format!("--gpu-file {}", p.display()))?;
        texts.push((p.display().to_string(), text));
    }
    let files: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    gpu_spec::Database::user_gpus(&files).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| format!("{}: {}", e.file, e.message)).collect();
        anyhow::anyhow!("invalid GPU file:\n  {}", lines.join("\n  "))
    })
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

/// The files to analyse, in order, and what the expansion of directories left out on
/// purpose.
pub struct Collected {
    /// Each file to analyse, or an entry that would have been analysed but cannot be.
    pub files: Vec<anyhow::Result<PathBuf>>,
    /// One sentence per file left out on purpose (the recorded PTX beside a `.cu` file).
    pub notes: Vec<String>,
}

/// Expands directories (recursively, sorted) into their `.ptx`/`.cu`/`.cuh` files; files
/// named explicitly are kept whatever their extension (read as PTX). Entries of a
/// directory that would have been analysed but cannot be (a FIFO, a device or a socket
/// with such a name, a symlink to one or to a directory, a dangling symlink, a directory
/// that cannot be listed) come back as errors naming the entry and why, in their place in
/// the order.
///
/// In a directory, `k.ptx` beside `k.cu` is the recorded PTX of `k.cu` (docs/cuda.md,
/// "With no compiler at all"): the `.cu` is analysed, with the launches its host code
/// makes, and the `.ptx` is left out with a note instead of being reported a second time
/// (at the launch its annotations give, or at the default one). Named explicitly, it is
/// analysed.
pub fn collect_files(paths: &[PathBuf]) -> Collected {
    let mut res = Collected { files: Vec::new(), notes: Vec::new() };
    for p in paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => {
                let mut found = Vec::new();
                walk(p, &mut found);
                found.sort_by(|a, b| a.0.cmp(&b.0));
                let sources: std::collections::BTreeSet<PathBuf> =
                    found.iter().filter(|(path, skipped)| skipped.is_none() && path.extension().is_some_and(|e| e == "cu")).map(|(path, _)| path.clone()).collect();
                for (path, skipped) in found {
                    let twin = path.with_extension("cu");
                    if skipped.is_none() && path.extension().is_some_and(|e| e == "ptx") && sources.contains(&twin) {
                        res.notes.push(format!(
                            "{}: the recorded PTX of {} beside it, which is analysed from its source; not analysed again (name the .ptx file to analyse it alone)",
                            path.display(),
                            twin.display()
                        ));
                        continue;
                    }
                    res.files.push(match skipped {
                        None => Ok(path),
                        Some(why) => Err(anyhow::anyhow!("{}: {why}; skipped", path.display())),
                    });
                }
            }
            Ok(_) => res.files.push(Ok(p.clone())),
            Err(e) => res.files.push(Err(anyhow::anyhow!("cannot read {}: {e}", p.display()))),
        }
    }
    res
}

/// Collects `(path, None)` for each file to analyse and `(path, Some(reason))` for each
/// entry skipped.
fn walk(dir: &Path, acc: &mut Vec<(PathBuf, Option<String>)>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            acc.push((dir.to_path_buf(), Some(format!("cannot list the directory: {e}"))));
            return;
        }
    };
    for e in entries {
        let e = match e {
            Ok(e) => e,
            Err(err) => {
                acc.push((dir.to_path_buf(), Some(format!("cannot list an entry of the directory: {err}"))));
                continue;
            }
        };
        let p = e.path();
        let Ok(t) = e.file_type() else {
            acc.push((p, Some("cannot read its type".into())));
            continue;
        };
        if t.is_dir() {
            walk(&p, acc);
            continue;
        }
        if kind_of(&p).is_none() {
            continue; // Not a file warpsight analyses: not worth a word.
        }
        if t.is_file() {
            acc.push((p, None));
        } else if t.is_symlink() {
            // Followed to a regular file; never into a directory (no cycles).
            match std::fs::metadata(&p) {
                Ok(m) if m.is_file() => acc.push((p, None)),
                Ok(m) if m.is_dir() => acc.push((p, Some("a symbolic link to a directory (not followed)".into()))),
                Ok(m) => acc.push((p, Some(format!("not a regular file (a symbolic link to {})", cuda_frontend::files::kind_name(m.file_type()))))),
                Err(err) => acc.push((p, Some(format!("a dangling symbolic link ({err})")))),
            }
        } else {
            acc.push((p, Some(format!("not a regular file ({})", cuda_frontend::files::kind_name(t)))));
        }
    }
}

/// Reads a text file: only regular files, refusing binary data and files over
/// [`MAX_INPUT_BYTES`] (counted while reading).
pub fn read_text(path: &Path) -> anyhow::Result<String> {
    Ok(cuda_frontend::files::read_text(path, MAX_INPUT_BYTES)?)
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
    // Read it once, here, so that binary, huge or non-regular files get the same one-line
    // error as PTX; the compiler front end works on this text.
    let text = read_text(path)?;
    let arch = args.arch.clone().or_else(|| settings.target_arch());
    let opts = cuda_frontend::compile::Options {
        arch,
        compiler: if args.no_compile { cuda_frontend::compile::CompilerChoice::RecordedOnly } else { Default::default() },
        nvcc: args.nvcc.clone(),
        defines: args.defines.clone(),
        include_dirs: args.includes.clone(),
        args: settings.args.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        use_cache: !args.no_cache,
        timeout: args.compile_timeout.unwrap_or(cuda_frontend::compile::DEFAULT_TIMEOUT),
        ..Default::default()
    };
    let prepared = cuda_frontend::compile::prepare_text(path, Some(&text), &opts, &cuda_frontend::CancelToken::new());
    let mut notes = vec![prepared.toolchain_note.clone()];
    notes.extend(prepared.notes.iter().cloned());
    let compiler_errors: Vec<String> = prepared
        .diagnostics
        .iter()
        .map(|d| {
            let file = d.file.clone().unwrap_or_else(|| display_path.clone());
            let line = d.line.map(|l| format!(":{l}")).unwrap_or_default();
            let col = d.column.map(|c| format!(":{c}")).unwrap_or_default();
            format!("{file}{line}{col}: {}: {}", d.severity.name(), d.message)
        })
        .collect();
    let context = cuda_frontend::context::analysis_context(&prepared);
    let compile_failed = prepared.has_errors() || prepared.ptx.is_empty();
    Ok(Source { display_path, kind: SourceKind::Cuda, ptx: prepared.ptx, context, notes, compiler_errors, compile_failed })
}
