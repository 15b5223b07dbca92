//! The high-level pipeline: `.cu` in, PTX plus everything the models need out.
//!
//! [`prepare`] reads the file (or takes the editor's unsaved text), scans it for kernels
//! and launch sites, picks a compiler, serves the result from the cache when the key
//! matches, compiles otherwise (`-ptx -lineinfo` for the chosen architecture), runs
//! `ptxas -v` for registers and shared memory, parses diagnostics, and maps the PTX
//! kernels back to the source. With no compiler at all it falls back to recorded PTX and
//! says so. It never fails: problems become diagnostics and notes.
//!
//! Compiler choice in `Auto` mode: nvcc (it compiles host and device code exactly as the
//! real build does), else NVRTC on the device-only view of the file, else clang with a
//! small shim of CUDA keywords on the same view, else recorded PTX (the cache entry for the
//! same text, then a `.ptx` beside the `.cu`). An editor that wants the ~10x lower latency
//! of NVRTC can ask for it explicitly ([`CompilerChoice::Nvrtc`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::cache::{Cache, CacheEntry, KeyParts, local_includes};
use crate::diagnostics::{CompilerDiagnostic, Severity, parse_diagnostics};
use crate::launch::{Annotation, KernelDecl, LaunchBounds, LaunchSite, scan_source};
use crate::mapping::{KernelMapping, map_kernels};
use crate::process::{CancelToken, RunError, run};
use crate::ptxas::{KernelResources, parse_ptxas_verbose};
use crate::toolchain::{
    Arch, CompilerKind, DiscoveryEnv, Toolchain, choose_arch, discover, nvcc_supported_archs,
};

/// The architecture used when none is requested (a widely deployed data-centre GPU, A100).
pub const DEFAULT_ARCH: &str = "sm_80";
/// The default compile timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// Which compiler to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum CompilerChoice {
    /// nvcc, else NVRTC, else clang, else recorded PTX.
    #[default]
    Auto,
    Nvcc,
    Nvrtc,
    Clang,
    /// Never compile: recorded PTX only.
    RecordedOnly,
}

/// Settings for [`prepare`].
#[derive(Debug, Clone)]
pub struct Options {
    /// Target architecture (`sm_80`, `8.6`, ...); [`DEFAULT_ARCH`] when `None`.
    pub arch: Option<String>,
    pub compiler: CompilerChoice,
    /// An explicit nvcc (`--nvcc`, editor setting): first in the discovery order.
    pub nvcc: Option<PathBuf>,
    /// `NAME` or `NAME=VALUE` (`--define`).
    pub defines: Vec<String>,
    /// `--include` directories.
    pub include_dirs: Vec<PathBuf>,
    /// More compiler flags, passed as they are (nvcc only).
    pub extra_flags: Vec<String>,
    /// User-supplied values for launch-site folding (`--arg NAME=VALUE`).
    pub args: Vec<(String, i64)>,
    /// Read flags from `compile_commands.json` when one covers the file.
    pub use_compile_commands: bool,
    /// Cache directory; `None` gives `dirs::cache_dir()/warpsight`.
    pub cache_dir: Option<PathBuf>,
    pub use_cache: bool,
    pub timeout: Duration,
    /// Run `ptxas -v` for per-kernel resources.
    pub run_ptxas: bool,
    /// The discovery environment; `None` reads the process environment.
    pub env: Option<DiscoveryEnv>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            arch: None,
            compiler: CompilerChoice::Auto,
            nvcc: None,
            defines: Vec::new(),
            include_dirs: Vec::new(),
            extra_flags: Vec::new(),
            args: Vec::new(),
            use_compile_commands: true,
            cache_dir: None,
            use_cache: true,
            timeout: DEFAULT_TIMEOUT,
            run_ptxas: true,
            env: None,
        }
    }
}

/// Parses `NAME=VALUE` for `--arg` (the value may be a constant expression: `n=1<<20`).
pub fn parse_arg(s: &str) -> Option<(String, i64)> {
    let (name, value) = s.split_once('=')?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let lx = crate::lex::lex("");
    let env = crate::consteval::Env::new(&lx, &[]);
    let mut u = Vec::new();
    env.eval_text(value, &mut u).map(|v| (name.to_string(), v))
}

/// Where the PTX came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PtxOrigin {
    /// Compiled now by this compiler.
    Compiled(CompilerKind),
    /// From the cache, compiled earlier by this compiler for the same key.
    Cache(CompilerKind),
    /// No compiler: the cache entry for the same text (compiled earlier by any compiler).
    RecordedCache,
    /// No compiler: a `.ptx` file beside the `.cu`.
    RecordedBeside(PathBuf),
    /// No PTX at all (no compiler and nothing recorded, or the compile failed).
    None,
}

impl PtxOrigin {
    /// A human sentence.
    pub fn describe(&self) -> String {
        match self {
            PtxOrigin::Compiled(k) => format!("PTX compiled now by {}.", k.name()),
            PtxOrigin::Cache(k) => format!("PTX from the cache (compiled earlier by {} from identical input).", k.name()),
            PtxOrigin::RecordedCache => "No CUDA compiler found: using PTX recorded in the cache for this exact text.".to_string(),
            PtxOrigin::RecordedBeside(p) => format!("No CUDA compiler found: using the recorded PTX file {}.", p.display()),
            PtxOrigin::None => "No PTX: no CUDA compiler was found (run `warpsight setup-cuda`, or set --nvcc, WARPSIGHT_NVCC or CUDA_HOME) and no recorded PTX exists.".to_string(),
        }
    }
    pub fn is_recorded(&self) -> bool {
        matches!(
            self,
            PtxOrigin::RecordedCache | PtxOrigin::RecordedBeside(_)
        )
    }
}

/// Everything the front end produces for one `.cu` file.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub path: PathBuf,
    /// The PTX text (empty when there is none; see `origin`).
    pub ptx: String,
    pub origin: PtxOrigin,
    /// The compiler used (or that would have been used), when one was found.
    pub toolchain: Option<Toolchain>,
    /// One sentence on the compiler and the PTX's origin, for the user.
    pub toolchain_note: String,
    /// The architecture compiled for (may differ from the requested one; see `notes`).
    pub arch: Option<String>,
    /// Further notes: architecture substitution, dropped flags, missing ptxas.
    pub notes: Vec<String>,
    pub resources: Vec<KernelResources>,
    pub diagnostics: Vec<CompilerDiagnostic>,
    pub kernels: Vec<KernelMapping>,
    pub kernel_decls: Vec<KernelDecl>,
    pub launch_sites: Vec<LaunchSite>,
    pub annotations: Vec<Annotation>,
    pub launch_bounds: Vec<LaunchBounds>,
    /// `true` when a newer request cancelled this one (the result is incomplete).
    pub cancelled: bool,
    /// Wall time of `prepare`.
    pub elapsed: Duration,
}

impl Prepared {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }
    /// Resources of the kernel with this PTX name.
    pub fn resources_of(&self, ptx_name: &str) -> Option<&KernelResources> {
        self.resources.iter().find(|r| r.name == ptx_name)
    }
}

/// Compiles and analyses `path` from disk.
pub fn prepare(path: &Path, opts: &Options) -> Prepared {
    prepare_text(path, None, opts, &CancelToken::new())
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A private temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::SeqCst);
        let d = std::env::temp_dir().join(format!("warpsight-cuda-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&d)?;
        Ok(TempDir(d))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The result of one compile attempt.
struct CompileResult {
    ptx: Option<String>,
    diagnostics: Vec<CompilerDiagnostic>,
    /// Timeouts and cancellations are not cached.
    cacheable: bool,
    cancelled: bool,
}

/// Compiles and analyses `path`, using `text` instead of the file's contents when given
/// (an editor's unsaved buffer). `cancel` stops a compile in flight.
pub fn prepare_text(
    path: &Path,
    text: Option<&str>,
    opts: &Options,
    cancel: &CancelToken,
) -> Prepared {
    let start = Instant::now();
    let mut p = Prepared {
        path: path.to_path_buf(),
        ptx: String::new(),
        origin: PtxOrigin::None,
        toolchain: None,
        toolchain_note: String::new(),
        arch: None,
        notes: Vec::new(),
        resources: Vec::new(),
        diagnostics: Vec::new(),
        kernels: Vec::new(),
        kernel_decls: Vec::new(),
        launch_sites: Vec::new(),
        annotations: Vec::new(),
        launch_bounds: Vec::new(),
        cancelled: false,
        elapsed: Duration::ZERO,
    };
    let text: String = match text {
        Some(t) => t.to_string(),
        None => match crate::files::read_text(path, crate::files::MAX_SOURCE_BYTES) {
            Ok(t) => t,
            Err(e) => {
                p.diagnostics.push(CompilerDiagnostic::general(Severity::Error, e.to_string()));
                p.toolchain_note = PtxOrigin::None.describe();
                p.elapsed = start.elapsed();
                return p;
            }
        },
    };
    let scan = scan_source(&text, &opts.args);
    p.kernel_decls = scan.kernels;
    p.launch_sites = scan.launch_sites;
    p.annotations = scan.annotations;
    p.launch_bounds = scan.launch_bounds;

    // Flags: compile_commands.json, then the options.
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut flags: Vec<String> = Vec::new();
    let mut include_dirs: Vec<PathBuf> = Vec::new();
    let mut defines: Vec<String> = Vec::new();
    if opts.use_compile_commands
        && let Some(db) = crate::compile_commands::lookup(path)
    {
        if !db.dropped.is_empty() {
            p.notes.push(format!("from {}: ignored flags {} (warpsight sets -ptx and the architecture itself; clang-only flags do not apply to nvcc)", db.database.display(), db.dropped.join(" ")));
        }
        flags.extend(db.flags);
        include_dirs.extend(db.include_dirs);
        defines.extend(db.defines);
    }
    for d in &opts.include_dirs {
        flags.push(format!("-I{}", d.display()));
        include_dirs.push(d.clone());
    }
    for d in &opts.defines {
        flags.push(format!("-D{d}"));
        defines.push(d.clone());
    }
    flags.extend(opts.extra_flags.iter().cloned());

    let requested = match opts.arch.as_deref() {
        Some(a) => match Arch::parse(a) {
            Some(arch) => arch,
            None => {
                p.notes
                    .push(format!("unknown architecture `{a}`; using {DEFAULT_ARCH}"));
                Arch {
                    number: 80,
                    suffix: None,
                }
            }
        },
        None => Arch {
            number: 80,
            suffix: None,
        },
    };

    let mut env = opts.env.clone().unwrap_or_else(DiscoveryEnv::from_process);
    if opts.nvcc.is_some() {
        env.explicit_nvcc = opts.nvcc.clone();
    }
    // Probing a tool must not take longer than compiling with it may.
    let probe_timeout = opts.timeout.min(crate::toolchain::PROBE_TIMEOUT);
    env.probe_timeout = Some(probe_timeout);
    let tcs = discover(&env);
    if let Some(explicit) = &opts.nvcc
        && tcs.nvcc.as_ref().is_none_or(|t| t.path != *explicit)
    {
        p.notes.push(format!(
            "the configured nvcc {} does not exist",
            explicit.display()
        ));
    }
    let toolchain = match opts.compiler {
        CompilerChoice::Auto => tcs
            .nvcc
            .clone()
            .or_else(|| tcs.nvrtc.clone())
            .or_else(|| tcs.clang.clone()),
        CompilerChoice::Nvcc => tcs.nvcc.clone(),
        CompilerChoice::Nvrtc => tcs.nvrtc.clone(),
        CompilerChoice::Clang => tcs.clang.clone(),
        CompilerChoice::RecordedOnly => None,
    };
    if toolchain.is_none()
        && !matches!(
            opts.compiler,
            CompilerChoice::Auto | CompilerChoice::RecordedOnly
        )
    {
        p.notes
            .push(format!("{:?} was requested but not found", opts.compiler));
    }
    let cache = if opts.use_cache {
        opts.cache_dir
            .clone()
            .or_else(crate::cache::default_dir)
            .map(Cache::new)
    } else {
        None
    };
    let mut inc_dirs_for_key = include_dirs.clone();
    inc_dirs_for_key.push(dir.clone());
    let includes = local_includes(&text, &dir, &inc_dirs_for_key);

    let mut entry: Option<CacheEntry> = None;
    if let Some(tc) = &toolchain {
        let supported = match tc.kind {
            CompilerKind::Nvcc => nvcc_supported_archs(&tc.path, probe_timeout),
            CompilerKind::Nvrtc => crate::nvrtc::Nvrtc::load(&tc.path)
                .map(|n| n.supported_archs())
                .unwrap_or_default(),
            CompilerKind::Clang => Vec::new(),
        };
        let (arch, note) = choose_arch(
            requested,
            &supported,
            &format!("{} {}", tc.kind.name(), tc.version),
        );
        if let Some(n) = note {
            p.notes.push(n);
        }
        let arch_s = arch.sm();
        p.arch = Some(arch_s.clone());
        // Whether ptxas ran is part of the key: an entry made without it has no resources.
        let compiler_id = format!(
            "{} {}{}",
            tc.kind.name(),
            tc.version,
            if opts.run_ptxas { " +ptxas" } else { "" }
        );
        let key = KeyParts {
            text: &text,
            includes: &includes,
            flags: &flags,
            arch: &arch_s,
            compiler: &compiler_id,
        };
        if let Some(hit) = cache.as_ref().and_then(|c| c.get(&key.key())) {
            p.origin = if hit.ptx.is_some() {
                PtxOrigin::Cache(tc.kind)
            } else {
                PtxOrigin::None
            };
            entry = Some(hit);
        } else {
            let res = match tc.kind {
                CompilerKind::Nvcc => {
                    compile_nvcc(tc, path, &text, &dir, &flags, &arch_s, opts.timeout, cancel)
                }
                CompilerKind::Nvrtc => compile_nvrtc(
                    tc,
                    path,
                    &text,
                    &dir,
                    &include_dirs,
                    &defines,
                    &arch_s,
                    opts.timeout,
                    cancel,
                ),
                CompilerKind::Clang => compile_clang(
                    tc,
                    path,
                    &text,
                    &dir,
                    &include_dirs,
                    &defines,
                    &arch_s,
                    opts.timeout,
                    cancel,
                ),
            };
            if res.cancelled {
                p.cancelled = true;
                p.diagnostics = res.diagnostics;
                p.toolchain = toolchain.clone();
                p.toolchain_note =
                    format!("Compile with {} cancelled by a newer edit.", tc.describe());
                p.elapsed = start.elapsed();
                return p;
            }
            let mut resources = Vec::new();
            let mut diagnostics = res.diagnostics;
            if let (Some(ptx), true) = (&res.ptx, opts.run_ptxas) {
                match run_ptxas(tcs.ptxas.as_deref(), ptx, &arch_s, opts.timeout, cancel) {
                    Ok((r, d)) => {
                        resources = r;
                        diagnostics.extend(d);
                    }
                    Err(note) => p.notes.push(note),
                }
            }
            let e = CacheEntry {
                ptx: res.ptx,
                resources,
                diagnostics,
                toolchain: tc.describe(),
                arch: arch_s.clone(),
                notes: Vec::new(),
            };
            if res.cacheable
                && let Some(c) = &cache
                && let Err(err) = c.put(&key, &e)
            {
                tracing::warn!(
                    "cannot write the CUDA cache in {}: {err}",
                    c.dir().display()
                );
            }
            p.origin = if e.ptx.is_some() {
                PtxOrigin::Compiled(tc.kind)
            } else {
                PtxOrigin::None
            };
            entry = Some(e);
        }
    } else {
        // No compiler: recorded PTX.
        let arch_s = requested.sm();
        let key = KeyParts {
            text: &text,
            includes: &includes,
            flags: &flags,
            arch: &arch_s,
            compiler: "",
        };
        if let Some(hit) = cache.as_ref().and_then(|c| c.get_by_text(&key.text_key())) {
            p.origin = PtxOrigin::RecordedCache;
            p.arch = Some(hit.arch.clone());
            entry = Some(hit);
        } else {
            if let Some((e, origin)) = recorded_beside(path, &tcs, opts, &arch_s, cancel, &mut p.notes) {
                p.arch = Some(e.arch.clone());
                p.origin = origin;
                entry = Some(e);
            }
        }
    }

    // The clang fallback covers simple kernels only (its shim defines a small part of
    // CUDA): when it produced nothing in automatic mode, recorded PTX is the better
    // answer, and clang's complaints are about the shim, not the user's code.
    if opts.compiler == CompilerChoice::Auto
        && toolchain.as_ref().is_some_and(|tc| tc.kind == CompilerKind::Clang)
        && entry.as_ref().is_none_or(|e| e.ptx.is_none())
    {
        let arch_s = p.arch.clone().unwrap_or_else(|| requested.sm());
        let mut notes = Vec::new();
        if let Some((e, origin)) = recorded_beside(path, &tcs, opts, &arch_s, cancel, &mut notes) {
            let n_errors = entry.as_ref().map_or(0, |e| e.diagnostics.iter().filter(|d| d.severity == Severity::Error).count());
            p.notes.push(format!("the clang fallback could not compile this file ({n_errors} error(s)); using recorded PTX instead"));
            p.notes.extend(notes);
            p.arch = Some(e.arch.clone());
            p.origin = origin;
            entry = Some(e);
        }
    }

    if let Some(e) = entry {
        p.ptx = e.ptx.unwrap_or_default();
        p.resources = e.resources;
        p.diagnostics.extend(e.diagnostics);
        p.notes.extend(e.notes);
    }
    p.toolchain_note = match &toolchain {
        Some(tc) => format!("{} Compiler: {}.", p.origin.describe(), tc.describe()),
        None => p.origin.describe(),
    };
    p.toolchain = toolchain;
    if !p.ptx.is_empty() {
        p.kernels = map_kernels(&p.ptx, Some(path), &p.kernel_decls);
    }
    p.elapsed = start.elapsed();
    p
}

/// The `.ptx` beside the `.cu`, with ptxas resources when ptxas is available.
fn recorded_beside(
    path: &Path,
    tcs: &crate::toolchain::Toolchains,
    opts: &Options,
    arch_s: &str,
    cancel: &CancelToken,
    notes: &mut Vec<String>,
) -> Option<(CacheEntry, PtxOrigin)> {
    let beside = path.with_extension("ptx");
    let ptx = match crate::files::read_text(&beside, crate::files::MAX_SOURCE_BYTES) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return None,
        Err(e) => {
            notes.push(format!("recorded PTX not used: {e}"));
            return None;
        }
    };
    let stale = match (
        std::fs::metadata(&beside).and_then(|m| m.modified()),
        std::fs::metadata(path).and_then(|m| m.modified()),
    ) {
        (Ok(a), Ok(b)) => a < b,
        _ => false,
    };
    if stale {
        notes.push(format!("{} is older than the source; it may not match the current text", beside.display()));
    }
    let target = ptx.lines().find_map(|l| {
        l.trim()
            .strip_prefix(".target")
            .map(|t| t.trim().split(',').next().unwrap_or("").trim().to_string())
    });
    let arch_for_ptxas = target.filter(|t| !t.is_empty()).unwrap_or_else(|| arch_s.to_string());
    let mut resources = Vec::new();
    let mut diagnostics = Vec::new();
    if opts.run_ptxas {
        match run_ptxas(tcs.ptxas.as_deref(), &ptx, &arch_for_ptxas, opts.timeout, cancel) {
            Ok((r, d)) => {
                resources = r;
                diagnostics = d;
            }
            Err(note) => notes.push(note),
        }
    }
    let entry = CacheEntry { ptx: Some(ptx), resources, diagnostics, toolchain: String::new(), arch: arch_for_ptxas, notes: Vec::new() };
    Some((entry, PtxOrigin::RecordedBeside(beside)))
}

fn timeout_diagnostic(tool: &str, timeout: Duration) -> CompilerDiagnostic {
    CompilerDiagnostic::general(
        Severity::Error,
        format!(
            "{tool} did not finish within {} s and was stopped; the analysis uses no fresh PTX. Raise the timeout if this file legitimately takes longer to compile.",
            timeout.as_secs_f64()
        ),
    )
}

fn run_error(tool: &str, e: RunError, timeout: Duration) -> CompileResult {
    match e {
        RunError::Cancelled => CompileResult {
            ptx: None,
            diagnostics: Vec::new(),
            cacheable: false,
            cancelled: true,
        },
        RunError::Timeout { .. } => CompileResult {
            ptx: None,
            diagnostics: vec![timeout_diagnostic(tool, timeout)],
            cacheable: false,
            cancelled: false,
        },
        RunError::Spawn { .. } => CompileResult::failed(e.to_string()),
    }
}

/// Replaces the temporary path by the real one in `.file` lines and diagnostics.
fn restore_paths(
    ptx: Option<String>,
    diags: &mut [CompilerDiagnostic],
    tmp_src: &Path,
    real: &Path,
) -> Option<String> {
    let tmp = tmp_src.to_string_lossy().into_owned();
    let real_s = real.to_string_lossy().into_owned();
    for d in diags.iter_mut() {
        if let Some(f) = &d.file
            && (*f == tmp
                || Path::new(f).file_name() == tmp_src.file_name() && f.contains("warpsight-cuda-"))
        {
            d.file = Some(real_s.clone());
        }
    }
    ptx.map(|s| s.replace(&format!("\"{tmp}\""), &format!("\"{real_s}\"")))
}

impl CompileResult {
    /// A compile that could not even start (no temporary directory, an unwritable file):
    /// one error, nothing to cache.
    fn failed(message: String) -> CompileResult {
        CompileResult {
            ptx: None,
            diagnostics: vec![CompilerDiagnostic::general(Severity::Error, message)],
            cacheable: false,
            cancelled: false,
        }
    }
}

/// A scratch directory for one compile and the path, inside it, of the copy of the source
/// (named like the user's file, so compiler messages name it). The copy is compiled rather
/// than the file itself because the editor's buffer may be unsaved.
fn scratch_source(path: &Path) -> Result<(TempDir, PathBuf), CompileResult> {
    let tmp = TempDir::new().map_err(|e| {
        CompileResult::failed(format!("cannot create a temporary directory: {e}"))
    })?;
    let name = path
        .file_name()
        .map_or_else(|| "input.cu".into(), |n| n.to_os_string());
    let src = tmp.0.join(name);
    Ok((tmp, src))
}

#[allow(clippy::too_many_arguments)]
fn compile_nvcc(
    tc: &Toolchain,
    path: &Path,
    text: &str,
    dir: &Path,
    flags: &[String],
    arch: &str,
    timeout: Duration,
    cancel: &CancelToken,
) -> CompileResult {
    // `-I` the real directory first so `#include "..."` resolves as it would in place.
    let (tmp, src) = match scratch_source(path) {
        Ok(t) => t,
        Err(failed) => return failed,
    };
    let out = tmp.0.join("out.ptx");
    if let Err(e) = std::fs::write(&src, text) {
        return CompileResult::failed(format!("cannot write {}: {e}", src.display()));
    }
    let mut cmd = Command::new(&tc.path);
    cmd.arg("-ptx")
        .arg("-lineinfo")
        .arg(format!("-arch={arch}"));
    cmd.arg(format!("-I{}", dir.display()));
    cmd.args(flags);
    cmd.arg("-o").arg(&out).arg(&src);
    let res = match run(cmd, timeout, cancel) {
        Ok(r) => r,
        Err(e) => return run_error("nvcc", e, timeout),
    };
    let mut diags = parse_diagnostics(&res.stderr, Some(text));
    let ptx = if res.success() {
        std::fs::read_to_string(&out).ok()
    } else {
        None
    };
    if !res.success() && diags.is_empty() {
        diags.push(CompilerDiagnostic::general(
            Severity::Error,
            format!("nvcc failed ({:?}): {}", res.code, res.stderr.trim()),
        ));
    }
    let ptx = restore_paths(ptx, &mut diags, &src, path);
    CompileResult {
        ptx,
        diagnostics: diags,
        cacheable: true,
        cancelled: false,
    }
}

#[allow(clippy::too_many_arguments)]
fn compile_nvrtc(
    tc: &Toolchain,
    path: &Path,
    text: &str,
    dir: &Path,
    include_dirs: &[PathBuf],
    defines: &[String],
    arch: &str,
    timeout: Duration,
    cancel: &CancelToken,
) -> CompileResult {
    let lib = match crate::nvrtc::Nvrtc::load(&tc.path) {
        Ok(l) => l,
        Err(e) => {
            return CompileResult::failed(e);
        }
    };
    let mut incs: Vec<PathBuf> = vec![dir.to_path_buf()];
    incs.extend(include_dirs.iter().cloned());
    incs.extend(tc.include_dirs());
    let device_src = crate::devicecode::device_only(text, &incs);
    let mut opts: Vec<String> = vec![
        format!("--gpu-architecture={arch}"),
        "-lineinfo".to_string(),
    ];
    opts.extend(incs.iter().map(|d| format!("-I{}", d.display())));
    opts.extend(defines.iter().map(|d| format!("-D{d}")));
    let name = path.to_string_lossy().into_owned();
    // NVRTC runs in this process and cannot be interrupted: run it on a thread and stop
    // waiting at the timeout or on cancellation (the thread finishes on its own).
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(lib.compile(&device_src, &name, &opts));
    });
    let start = Instant::now();
    let out = loop {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(r) => break r,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break Err("NVRTC thread ended without a result".to_string());
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if cancel.is_cancelled() {
                    return CompileResult {
                        ptx: None,
                        diagnostics: Vec::new(),
                        cacheable: false,
                        cancelled: true,
                    };
                }
                if start.elapsed() >= timeout {
                    return CompileResult {
                        ptx: None,
                        diagnostics: vec![timeout_diagnostic("NVRTC", timeout)],
                        cacheable: false,
                        cancelled: false,
                    };
                }
            }
        }
    };
    match out {
        Ok(o) => CompileResult {
            diagnostics: parse_diagnostics(&o.log, Some(text)),
            ptx: o.ptx,
            cacheable: true,
            cancelled: false,
        },
        Err(e) => CompileResult {
            ptx: None,
            diagnostics: vec![CompilerDiagnostic::general(Severity::Error, e)],
            cacheable: false,
            cancelled: false,
        },
    }
}

/// CUDA keywords for clang without any NVIDIA headers (shared/notes/toolchain.md §1,
/// "It also works with no NVIDIA files at all").
const CLANG_SHIM: &str = r#"// warpsight clang shim: CUDA keywords without NVIDIA headers.
#define WARPSIGHT_CLANG_SHIM 1
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#include <__clang_cuda_builtin_vars.h>
__device__ static inline void __syncthreads() { __nvvm_barrier0(); }
__device__ static inline float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
__device__ static inline int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
__device__ static inline unsigned atomicAdd(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_add_gen_i((int *)p, (int)v); }
"#;

#[allow(clippy::too_many_arguments)]
fn compile_clang(
    tc: &Toolchain,
    path: &Path,
    text: &str,
    dir: &Path,
    include_dirs: &[PathBuf],
    defines: &[String],
    arch: &str,
    timeout: Duration,
    cancel: &CancelToken,
) -> CompileResult {
    let (tmp, src) = match scratch_source(path) {
        Ok(t) => t,
        Err(failed) => return failed,
    };
    let shim = tmp.0.join("warpsight_shim.h");
    let out = tmp.0.join("out.ptx");
    let device_src = crate::devicecode::device_only(text, include_dirs);
    if std::fs::write(&src, &device_src)
        .and_then(|()| std::fs::write(&shim, CLANG_SHIM))
        .is_err()
    {
        return CompileResult::failed("cannot write temporary files for clang".into());
    }
    let mut cmd = Command::new(&tc.path);
    cmd.args([
        "-x",
        "cuda",
        "--cuda-device-only",
        "-S",
        "-O3",
        "-gline-tables-only",
        "-nocudainc",
        "-nocudalib",
    ]);
    cmd.arg(format!("--cuda-gpu-arch={arch}"))
        .arg("-include")
        .arg(&shim);
    cmd.arg(format!("-I{}", dir.display()));
    cmd.args(include_dirs.iter().map(|d| format!("-I{}", d.display())));
    cmd.args(defines.iter().map(|d| format!("-D{d}")));
    cmd.arg("-o").arg(&out).arg(&src);
    let res = match run(cmd, timeout, cancel) {
        Ok(r) => r,
        Err(e) => return run_error("clang", e, timeout),
    };
    let mut diags = parse_diagnostics(&res.stderr, Some(text));
    let ptx = if res.success() {
        std::fs::read_to_string(&out).ok()
    } else {
        None
    };
    let ptx = restore_paths(ptx, &mut diags, &src, path);
    CompileResult {
        ptx,
        diagnostics: diags,
        cacheable: true,
        cancelled: false,
    }
}

/// Runs `ptxas -v` on `ptx` for `arch`; `Err` is a note when ptxas is missing or failed
/// to start.
fn run_ptxas(
    ptxas: Option<&Path>,
    ptx: &str,
    arch: &str,
    timeout: Duration,
    cancel: &CancelToken,
) -> Result<(Vec<KernelResources>, Vec<CompilerDiagnostic>), String> {
    let Some(ptxas) = ptxas else {
        return Err("ptxas not found: registers and shared memory per kernel are unknown (they come from ptxas; PTX registers are virtual)".to_string());
    };
    let tmp = TempDir::new().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let input = tmp.0.join("in.ptx");
    std::fs::write(&input, ptx).map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    let mut cmd = Command::new(ptxas);
    cmd.arg("-v")
        .arg(format!("-arch={arch}"))
        .arg(&input)
        .arg("-o")
        .arg(tmp.0.join("out.cubin"));
    let res = run(cmd, timeout, cancel).map_err(|e| format!("ptxas: {e}"))?;
    let mut diags: Vec<CompilerDiagnostic> = parse_diagnostics(&res.stderr, None)
        .into_iter()
        .filter(|d| d.severity != Severity::Note)
        .collect();
    for d in &mut diags {
        d.file = None;
    }
    Ok((parse_ptxas_verbose(&res.stderr), diags))
}

/// A compile running on a background thread.
#[derive(Debug)]
pub struct CompileHandle {
    cancel: CancelToken,
    rx: mpsc::Receiver<Prepared>,
}

impl CompileHandle {
    /// Asks the compile to stop (the child process group is killed).
    pub fn cancel(&self) {
        self.cancel.cancel();
    }
    pub fn token(&self) -> CancelToken {
        self.cancel.clone()
    }
    /// Waits for the result.
    pub fn wait(self) -> Option<Prepared> {
        self.rx.recv().ok()
    }
    /// Waits at most `d`.
    pub fn wait_timeout(&self, d: Duration) -> Option<Prepared> {
        self.rx.recv_timeout(d).ok()
    }
    /// The result, if ready.
    pub fn try_result(&self) -> Option<Prepared> {
        self.rx.try_recv().ok()
    }
}

/// Starts [`prepare_text`] on a thread.
pub fn spawn_prepare(path: PathBuf, text: Option<String>, opts: Options) -> CompileHandle {
    let cancel = CancelToken::new();
    let token = cancel.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let p = prepare_text(&path, text.as_deref(), &opts, &token);
        let _ = tx.send(p);
    });
    CompileHandle { cancel, rx }
}

/// One compile in flight per file: submitting a newer version cancels the older one.
#[derive(Debug, Default, Clone)]
pub struct Scheduler {
    inflight: Arc<Mutex<HashMap<PathBuf, CancelToken>>>,
}

impl Scheduler {
    pub fn new() -> Scheduler {
        Scheduler::default()
    }
    /// Starts a compile of `path` (with the editor's `text`), cancelling the previous one
    /// for the same path.
    pub fn submit(&self, path: PathBuf, text: Option<String>, opts: Options) -> CompileHandle {
        let h = spawn_prepare(path.clone(), text, opts);
        if let Ok(mut m) = self.inflight.lock()
            && let Some(old) = m.insert(path, h.token())
        {
            old.cancel();
        }
        h
    }
}
