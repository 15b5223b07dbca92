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
//!
//! Security (docs/security.md): every compiler gets a private copy of the text named
//! [`SOURCE_NAME`] in a private temporary directory, never the user's file name; flags from
//! `compile_commands.json` and the options reach nvcc only when `crate::safety` proves them
//! inert for its shell; directories whose names a shell would interpret are passed as
//! aliases; one [`Options::timeout`] budget covers the probes, the compiler and ptxas.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::cache::{Cache, CacheEntry, KeyParts, local_includes};
use crate::diagnostics::{CompilerDiagnostic, Severity, parse_diagnostics};
use crate::launch::{Annotation, KernelDecl, LaunchBounds, LaunchSite, ScanInput, scan_source_with};
use crate::mapping::{KernelMapping, map_kernels};
use crate::process::{CancelToken, Deadline, RunError, run};
use crate::ptxas::{KernelResources, parse_ptxas_verbose};
use crate::safety;
use crate::toolchain::{
    Arch, CompilerKind, DiscoveryEnv, Toolchain, choose_arch, discover, nvcc_supported_archs,
};

mod prepare;
use prepare::prepare_unchecked;

/// The architecture used when none is requested (a widely deployed data-centre GPU, A100).
pub const DEFAULT_ARCH: &str = "sm_80";
/// The default compile timeout: one budget for the whole compile (toolchain probes,
/// compiler, ptxas).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// The name every compiler is given for the source: a private copy under this fixed name
/// in a private temporary directory (nvcc hands file names to a shell; docs/security.md).
/// Diagnostics and `.file` directives are mapped back to the user's path.
pub const SOURCE_NAME: &str = "source.cu";

/// Whether to read `compile_commands.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum CompileCommands {
    /// Read the nearest database that covers the file (the CLI: the user named the file).
    #[default]
    Read,
    /// Do not read it: it belongs to a workspace the user has not trusted (the language
    /// server until `trustCompileCommands`). When one exists, a note says it was not read.
    Untrusted,
    /// Do not look for one.
    Ignore,
}

/// Which compiler to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum CompilerChoice {
    /// nvcc, else NVRTC, else clang, else recorded PTX.
    #[default]
    Auto,
    Nvcc,
    Nvrtc,
    Clang,
    /// NVRTC (device code only, in process, kernel-by-kernel recompiles), else nvcc, else
    /// clang, else recorded PTX: the editor's choice, where the latency of an edit matters
    /// more than compiling the host code (docs/benchmarks.md, "Edit to hints").
    PreferNvrtc,
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
    /// More compiler flags (nvcc only), each one word; a flag that is not provably inert
    /// for nvcc's shell is dropped with a note.
    pub extra_flags: Vec<String>,
    /// User-supplied values for launch-site folding (`--arg NAME=VALUE`).
    pub args: Vec<(String, i64)>,
    /// Whether flags come from `compile_commands.json`.
    pub compile_commands: CompileCommands,
    /// Cache directory; `None` gives `dirs::cache_dir()/warpsight`.
    pub cache_dir: Option<PathBuf>,
    pub use_cache: bool,
    /// The budget for the whole compile: toolchain probes, compiler and ptxas share it.
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
            compile_commands: CompileCommands::Read,
            cache_dir: None,
            use_cache: true,
            timeout: DEFAULT_TIMEOUT,
            run_ptxas: true,
            env: None,
        }
    }
}

/// Parses `NAME=VALUE` for `--arg` (the value may be a constant expression: `n=1<<20`);
/// see [`crate::launch::parse_arg`] for the error.
pub fn parse_arg(s: &str) -> Option<(String, launch_spec::ArgValue)> {
    crate::launch::parse_arg(s).ok()
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
    /// The compiler ran and produced no PTX (errors, a timeout); the diagnostics say why.
    Failed(CompilerKind),
    /// No PTX at all: no compiler and nothing recorded.
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
            PtxOrigin::Failed(k) => format!("No PTX: {} failed to compile the file.", k.name()),
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
    /// The `trips=` annotations on loops.
    pub loop_annotations: Vec<crate::launch::LoopAnnotation>,
    pub launch_bounds: Vec<LaunchBounds>,
    /// The `--arg` names the launch folding read (used even when no kernel parameter
    /// has that name).
    pub used_args: Vec<String>,
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

/// A private temporary directory for one compile (`tempfile`: an unpredictable name,
/// created exclusively (`mkdir` fails on anything already there, a symlink included),
/// mode 0700, removed on drop). Its path is handed to nvcc, so the
/// temporary folder itself must be free of shell syntax.
fn private_tempdir() -> Result<tempfile::TempDir, String> {
    let root = std::env::temp_dir();
    if !safety::is_inert_path(&root) {
        return Err(format!(
            "the temporary folder {} has characters a shell would interpret (nvcc passes paths through a shell): set TMPDIR to a plain path",
            root.display()
        ));
    }
    let mut b = tempfile::Builder::new();
    b.prefix("warpsight-cuda-");
    // tempfile's default for directories is 0777 less the umask: ask for owner-only.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o700));
    }
    b.tempdir_in(&root)
        .map_err(|e| format!("cannot create a temporary directory in {}: {e}", root.display()))
}

/// Creates `path` and writes `bytes`, failing if anything (a symlink included) is already
/// there: nothing is ever written through a link.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)?.write_all(bytes)
}

/// The result of one compile attempt.
struct CompileResult {
    ptx: Option<String>,
    diagnostics: Vec<CompilerDiagnostic>,
    /// Notes for the user (truncated output, paths passed through an alias).
    notes: Vec<String>,
    /// Timeouts and cancellations are not cached.
    cacheable: bool,
    cancelled: bool,
    /// NVRTC only: what a kernel-by-kernel recompile of the next edit needs.
    nvrtc: Option<Box<NvrtcIncremental>>,
}

/// An NVRTC compile's part in kernel-by-kernel recompiles (`crate::incremental`).
struct NvrtcIncremental {
    /// The device-only text compiled.
    device_src: String,
    /// When only some kernels were compiled: the plan, the partial module (for ptxas) and
    /// the resources of the kernels not compiled again.
    partial: Option<(crate::incremental::Plan, String, Vec<KernelResources>)>,
}

/// The flags of one compile, from the database and the options, before they are checked.
#[derive(Debug, Default)]
struct CompileFlags {
    include_dirs: Vec<PathBuf>,
    defines: Vec<String>,
    undefines: Vec<String>,
    pre_includes: Vec<PathBuf>,
    other: Vec<String>,
}

impl CompileFlags {
    /// Drops every define, undefine and flag that is not provably inert for nvcc's shell
    /// (`crate::safety`), returning them as they would have been passed. Paths are kept:
    /// nvcc gets an alias for those with shell syntax ([`nvcc_path`]).
    fn drop_unsafe(&mut self) -> Vec<String> {
        let mut dropped = Vec::new();
        self.defines.retain(|d| {
            let ok = safety::is_inert_define(d);
            if !ok {
                dropped.push(format!("-D{d}"));
            }
            ok
        });
        self.undefines.retain(|u| {
            let ok = safety::is_macro_name(u);
            if !ok {
                dropped.push(format!("-U{u}"));
            }
            ok
        });
        self.other.retain(|f| {
            let ok = safety::is_inert_flag(f);
            if !ok {
                dropped.push(f.clone());
            }
            ok
        });
        dropped
    }

    /// Every flag in a fixed order, for the cache key (the user's paths, not aliases).
    fn key_flags(&self) -> Vec<String> {
        let mut v: Vec<String> = self.include_dirs.iter().map(|d| format!("-I{}", d.display())).collect();
        v.extend(self.defines.iter().map(|d| format!("-D{d}")));
        v.extend(self.undefines.iter().map(|u| format!("-U{u}")));
        v.extend(self.pre_includes.iter().map(|p| format!("-include={}", p.display())));
        v.extend(self.other.iter().cloned());
        v
    }
}

/// The note for flags dropped for shell syntax.
fn dropped_for_shell_note(dropped: &[String]) -> String {
    let shown: Vec<String> = dropped
        .iter()
        .map(|f| if f.chars().count() > 120 { format!("{}…", f.chars().take(120).collect::<String>()) } else { f.clone() })
        .collect();
    format!(
        "dropped flags with shell syntax (nvcc passes options through a shell, so only plain names and values are passed on): {}",
        shown.join(" ")
    )
}

/// Logs once per process and database that an untrusted database was not read.
fn log_untrusted_once(db: &Path) {
    static SEEN: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let first = SEEN
        .get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .map(|mut s| s.insert(db.to_path_buf()))
        .unwrap_or(false);
    if first {
        tracing::info!(
            "{} not read: the workspace's compile database is untrusted (enable trustCompileCommands to use it)",
            db.display()
        );
    }
}

/// `path` made absolute against the current directory, without resolving symlinks (a
/// path that cannot be made absolute is returned as it is).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The directory of the user's file, absolute. The compilers get a private copy of the
/// text in a temporary directory, so `#include "..."` finds the file's neighbours only
/// through a `-I` of this directory; for `t.cu` the parent is the empty path, which once
/// reached nvcc as a bare `-I` that swallowed the next flag (issue 14), and a relative
/// directory would resolve against the wrong folder.
fn source_dir(path: &Path) -> PathBuf {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    absolute(parent)
}

/// Compiles and analyses `path`, using `text` instead of the file's contents when given
/// (an editor's unsaved buffer). `cancel` stops a compile in flight.
pub fn prepare_text(
    path: &Path,
    text: Option<&str>,
    opts: &Options,
    cancel: &CancelToken,
) -> Prepared {
    let mut p = prepare_unchecked(path, text, opts, cancel);
    p.strip_controls();
    p
}

impl Prepared {
    /// Strips control characters from everything shown to the user: compiler messages,
    /// notes, the toolchain sentence, file names from diagnostics (they may come from a
    /// compiler, the cache or a workspace).
    fn strip_controls(&mut self) {
        safety::strip_controls_in_place(&mut self.toolchain_note);
        for n in &mut self.notes {
            safety::strip_controls_in_place(n);
        }
        for d in &mut self.diagnostics {
            safety::strip_controls_in_place(&mut d.message);
            if let Some(f) = &mut d.file {
                safety::strip_controls_in_place(f);
            }
            if let Some(c) = &mut d.code {
                safety::strip_controls_in_place(c);
            }
        }
        if let Some(tc) = &mut self.toolchain {
            safety::strip_controls_in_place(&mut tc.version);
        }
    }
}

/// Opens the cache, or says once per folder (in the log) why it is not used.
fn open_cache(opts: &Options) -> Option<Cache> {
    if !opts.use_cache {
        return None;
    }
    let dir = opts.cache_dir.clone().or_else(crate::cache::default_dir)?;
    match Cache::open(&dir) {
        Ok(c) => Some(c),
        Err(e) => {
            static SEEN: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
            let first = SEEN
                .get_or_init(|| Mutex::new(HashSet::new()))
                .lock()
                .map(|mut s| s.insert(dir.clone()))
                .unwrap_or(false);
            if first {
                tracing::warn!("the CUDA compile cache is not used: {e}");
            }
            None
        }
    }
}

/// The key of kernel-by-kernel recompiles for this file and options (NVRTC only).
fn job_key(kind: &CompilerKind, path: &str, arch: &str, flags: &[String], compiler_id: &str, tool: &Path) -> Option<String> {
    (*kind == CompilerKind::Nvrtc).then(|| format!("{path}\0{arch}\0{}\0{compiler_id}\0{}", flags.join("\0"), tool.display()))
}

/// ` First error: FILE:LINE: MESSAGE.` for the note of a failed compile (the message cut
/// at 300 characters), or nothing when the compiler printed no error.
fn first_error(diags: &[CompilerDiagnostic]) -> String {
    let Some(d) = diags.iter().find(|d| d.severity == Severity::Error) else {
        return String::new();
    };
    let at = match (&d.file, d.line) {
        (Some(f), Some(l)) => {
            let name = Path::new(f).file_name().map_or_else(|| f.clone(), |n| n.to_string_lossy().into_owned());
            format!("{name}:{l}: ")
        }
        _ => String::new(),
    };
    let msg: String = d.message.chars().take(300).collect();
    let more = if d.message.chars().count() > 300 { "…" } else { "" };
    format!(" First error: {at}{}{more}.", msg.trim_end_matches('.'))
}

/// The `.ptx` beside the `.cu`, with ptxas resources when ptxas is available.
fn recorded_beside(
    path: &Path,
    tcs: &crate::toolchain::Toolchains,
    opts: &Options,
    arch_s: &str,
    deadline: Deadline,
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
        match run_ptxas(tcs.ptxas.as_deref(), &ptx, &arch_for_ptxas, deadline, cancel) {
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

fn timeout_diagnostic(tool: &str, budget: Duration) -> CompilerDiagnostic {
    CompilerDiagnostic::general(
        Severity::Error,
        format!(
            "{tool} did not finish within {} s and was stopped; the analysis uses no fresh PTX. If this file legitimately takes longer to compile, raise the timeout (`--compile-timeout SECONDS` on the command line, the `compileTimeoutMs` setting in an editor).",
            budget.as_secs_f64()
        ),
    )
}

fn run_error(tool: &str, e: RunError, budget: Duration) -> CompileResult {
    match e {
        RunError::Cancelled => CompileResult::cancelled(),
        RunError::Timeout { .. } => CompileResult {
            ptx: None,
            diagnostics: vec![timeout_diagnostic(tool, budget)],
            notes: Vec::new(),
            cacheable: false,
            cancelled: false,
            nvrtc: None,
        },
        RunError::Spawn { .. } => CompileResult::failed(e.to_string()),
    }
}

/// Paths handed to a compiler in place of the user's (the private copy, aliases of
/// directories whose names a shell would interpret), and the user's paths they stand for.
#[derive(Debug, Default)]
struct PathMap {
    /// (compiler's path, user's path), as strings.
    pairs: Vec<(String, String)>,
}

impl PathMap {
    fn add(&mut self, compiler_side: &Path, user_side: &Path) {
        self.pairs.push((
            compiler_side.to_string_lossy().into_owned(),
            user_side.to_string_lossy().into_owned(),
        ));
    }

    /// The user's path for a path the compiler printed: the same path, or one inside an
    /// aliased directory.
    fn restore(&self, printed: &str) -> Option<String> {
        self.pairs.iter().find_map(|(tmp, real)| {
            if printed == tmp {
                Some(real.clone())
            } else {
                printed
                    .strip_prefix(tmp.as_str())
                    .filter(|rest| rest.starts_with('/'))
                    .map(|rest| format!("{real}{rest}"))
            }
        })
    }

    /// Restores the user's paths in diagnostics and in the PTX's `.file` directives.
    fn apply(&self, ptx: Option<String>, diags: &mut [CompilerDiagnostic]) -> Option<String> {
        for d in diags.iter_mut() {
            if let Some(real) = d.file.as_deref().and_then(|f| self.restore(f)) {
                d.file = Some(real);
            }
        }
        ptx.map(|s| self.restore_ptx(&s))
    }

    /// `.file N "path"` (optionally followed by a timestamp and size) with the path
    /// restored; every other line as it is. A PTX string cannot hold `"`, `\` or a line
    /// break, so a user's path with one of those is restored as its bare file name (which
    /// the kernel mapping also accepts), or not at all.
    fn restore_ptx(&self, ptx: &str) -> String {
        let fits = |p: &str| !p.is_empty() && !p.chars().any(|c| c == '"' || c == '\\' || c.is_control());
        let mut out = String::with_capacity(ptx.len());
        for line in ptx.split_inclusive('\n') {
            let restored = line.trim_start().starts_with(".file").then(|| {
                let open = line.find('"')?;
                let close = open + 1 + line[open + 1..].find('"')?;
                let real = self.restore(&line[open + 1..close])?;
                let real = if fits(&real) {
                    real
                } else {
                    Path::new(&real).file_name().map(|n| n.to_string_lossy().into_owned()).filter(|n| fits(n))?
                };
                Some(format!("{}{real}{}", &line[..=open], &line[close..]))
            });
            match restored.flatten() {
                Some(l) => out.push_str(&l),
                None => out.push_str(line),
            }
        }
        out
    }
}

impl CompileResult {
    /// A compile that could not even start (no temporary directory, an unwritable file):
    /// one error, nothing to cache.
    fn failed(message: String) -> CompileResult {
        CompileResult {
            ptx: None,
            diagnostics: vec![CompilerDiagnostic::general(Severity::Error, message)],
            notes: Vec::new(),
            cacheable: false,
            cancelled: false,
            nvrtc: None,
        }
    }
    fn cancelled() -> CompileResult {
        CompileResult { ptx: None, diagnostics: Vec::new(), notes: Vec::new(), cacheable: false, cancelled: true, nvrtc: None }
    }
}

/// A private temporary directory for one compile and the private copy of the source in
/// it, always named [`SOURCE_NAME`] whatever the user's file is called (nvcc hands file
/// names to a shell). The copy is compiled rather than the file itself because the
/// editor's buffer may be unsaved. The copy is created exclusively: nothing is written
/// through a link.
fn scratch_source(text: &str) -> Result<(tempfile::TempDir, PathBuf), CompileResult> {
    let tmp = private_tempdir().map_err(CompileResult::failed)?;
    let src = tmp.path().join(SOURCE_NAME);
    write_new(&src, text.as_bytes())
        .map_err(|e| CompileResult::failed(format!("cannot write {}: {e}", src.display())))?;
    Ok((tmp, src))
}

/// The path to hand nvcc for the user's `path`: the path itself when it has nothing a
/// shell would interpret, else a symlink with a plain name (`inc-N`) inside the private
/// directory `tmp`, recorded in `map` so messages name the real path. `None` (with a note)
/// when neither works; a path that does not exist is simply left out.
fn nvcc_path(path: &Path, tmp: &Path, n: &mut usize, map: &mut PathMap, notes: &mut Vec<String>) -> Option<PathBuf> {
    if safety::is_inert_path(path) {
        return Some(path.to_path_buf());
    }
    // The link's target must be absolute: a relative one would resolve inside `tmp`.
    let Ok(target) = path.canonicalize() else {
        return None;
    };
    let alias = tmp.join(format!("inc-{n}"));
    *n += 1;
    #[cfg(unix)]
    let linked = std::os::unix::fs::symlink(&target, &alias);
    #[cfg(not(unix))]
    let linked: std::io::Result<()> = Err(std::io::Error::other("aliases need symbolic links"));
    match linked {
        Ok(()) => {
            map.add(&alias, path);
            Some(alias)
        }
        Err(e) => {
            notes.push(format!(
                "{} was not passed to nvcc: its name has characters a shell would interpret, and no alias could be made ({e})",
                path.display()
            ));
            None
        }
    }
}

/// What one compile needs.
struct Job<'a> {
    tc: &'a Toolchain,
    /// The user's file.
    path: &'a Path,
    text: &'a str,
    /// The user's file's directory.
    dir: &'a Path,
    flags: &'a CompileFlags,
    arch: &'a str,
    deadline: Deadline,
    cancel: &'a CancelToken,
    /// NVRTC: the key of this file and options for kernel-by-kernel recompiles.
    incremental_key: Option<String>,
}

/// The last `max` characters of `s` (compiler output shown in one message).
fn tail_chars(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        s.to_string()
    } else {
        format!("…{}", s.chars().skip(n - max).collect::<String>())
    }
}

fn compile_nvcc(job: &Job<'_>) -> CompileResult {
    let (tmp, src) = match scratch_source(job.text) {
        Ok(t) => t,
        Err(failed) => return failed,
    };
    let out = tmp.path().join("out.ptx");
    let mut map = PathMap::default();
    map.add(&src, job.path);
    let mut notes = Vec::new();
    let mut n = 0;
    let mut cmd = Command::new(&job.tc.path);
    cmd.arg("-ptx")
        .arg("-lineinfo")
        .arg(format!("-arch={}", job.arch));
    // `-I` the real directory first so `#include "..."` resolves as it would in place.
    let include_dirs = std::iter::once(job.dir).chain(job.flags.include_dirs.iter().map(PathBuf::as_path));
    for d in include_dirs {
        if let Some(p) = nvcc_path(d, tmp.path(), &mut n, &mut map, &mut notes) {
            cmd.arg(format!("-I{}", p.display()));
        }
    }
    for d in &job.flags.defines {
        cmd.arg(format!("-D{d}"));
    }
    for u in &job.flags.undefines {
        cmd.arg(format!("-U{u}"));
    }
    for f in &job.flags.pre_includes {
        if let Some(p) = nvcc_path(f, tmp.path(), &mut n, &mut map, &mut notes) {
            cmd.arg("-include").arg(p);
        }
    }
    cmd.args(&job.flags.other);
    cmd.arg("-o").arg(&out).arg(&src);
    let res = match run(cmd, job.deadline.remaining(), job.cancel) {
        Ok(r) => r,
        Err(e) => return run_error("nvcc", e, job.deadline.budget()),
    };
    notes.extend(res.truncation_note("nvcc"));
    let mut diags = parse_diagnostics(&res.stderr, Some(job.text));
    let ptx = if res.success() {
        std::fs::read_to_string(&out).ok()
    } else {
        None
    };
    if !res.success() && diags.is_empty() {
        diags.push(CompilerDiagnostic::general(
            Severity::Error,
            format!("nvcc failed ({:?}): {}", res.code, tail_chars(res.stderr.trim(), 4000)),
        ));
    }
    let ptx = map.apply(ptx, &mut diags);
    CompileResult {
        ptx,
        diagnostics: diags,
        notes,
        cacheable: true,
        cancelled: false,
        nvrtc: None,
    }
}

fn compile_nvrtc(job: &Job<'_>) -> CompileResult {
    let lib = match crate::nvrtc::Nvrtc::load(&job.tc.path) {
        Ok(l) => l,
        Err(e) => {
            return CompileResult::failed(e);
        }
    };
    let mut incs: Vec<PathBuf> = vec![job.dir.to_path_buf()];
    incs.extend(job.flags.include_dirs.iter().cloned());
    incs.extend(job.tc.include_dirs());
    let device_src = crate::devicecode::device_only(job.text, &incs);
    let mut opts: Vec<String> = vec![
        format!("--gpu-architecture={}", job.arch),
        "-lineinfo".to_string(),
    ];
    // NVRTC runs in this process: no shell sees these.
    opts.extend(incs.iter().map(|d| format!("-I{}", d.display())));
    opts.extend(job.flags.defines.iter().map(|d| format!("-D{d}")));
    opts.extend(job.flags.undefines.iter().map(|u| format!("-U{u}")));
    // After an edit inside some kernels only, compile those (crate::incremental).
    if let Some(plan) = job.incremental_key.as_deref().and_then(|k| crate::incremental::plan(k, &device_src)) {
        let res = run_nvrtc(job, &lib, plan.source.clone(), &opts);
        if res.cancelled || res.ptx.is_none() {
            // Errors are the changed kernels' (the rest compiled before): report them.
            return res;
        }
        if let Some(merged) = res.ptx.as_deref().and_then(|partial| plan.merge(partial)) {
            let partial = res.ptx.clone().unwrap_or_default();
            let (changed, total) = plan.counts();
            let mut notes = res.notes;
            notes.push(format!("NVRTC compiled {changed} of {total} kernels again; the others did not change since the last compile"));
            let mut diagnostics = merged.kept_diagnostics;
            diagnostics.extend(res.diagnostics);
            return CompileResult {
                ptx: Some(merged.ptx),
                diagnostics,
                notes,
                cacheable: true,
                cancelled: false,
                nvrtc: Some(Box::new(NvrtcIncremental { device_src, partial: Some((plan, partial, merged.kept_resources)) })),
            };
        }
        // The partial module declares something the last one did not: compile whole.
    }
    let mut res = run_nvrtc(job, &lib, device_src.clone(), &opts);
    res.nvrtc = Some(Box::new(NvrtcIncremental { device_src, partial: None }));
    res
}

/// One NVRTC compile of `src` (named [`SOURCE_NAME`]) on a worker thread, stopped waiting
/// for at the deadline or on cancellation.
fn run_nvrtc(job: &Job<'_>, lib: &std::sync::Arc<crate::nvrtc::Nvrtc>, src: String, opts: &[String]) -> CompileResult {
    let mut map = PathMap::default();
    map.add(Path::new(SOURCE_NAME), job.path);
    // NVRTC 13.5 writes the program's name joined to the process's working directory in
    // `.file` (`"/cwd/source.cu"`): that is the user's file too.
    if let Ok(cwd) = std::env::current_dir() {
        map.add(&cwd.join(SOURCE_NAME), job.path);
    }
    // NVRTC runs in this process and cannot be interrupted: run it on a thread and stop
    // waiting at the timeout or on cancellation (the thread finishes on its own).
    let (tx, rx) = mpsc::channel();
    let (lib, opts) = (std::sync::Arc::clone(lib), opts.to_vec());
    std::thread::spawn(move || {
        let _ = tx.send(lib.compile(&src, SOURCE_NAME, &opts));
    });
    let out = loop {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(r) => break r,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break Err("NVRTC thread ended without a result".to_string());
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if job.cancel.is_cancelled() {
                    return CompileResult::cancelled();
                }
                if job.deadline.remaining().is_zero() {
                    return run_error("NVRTC", RunError::Timeout { program: "NVRTC".into(), timeout: job.deadline.budget() }, job.deadline.budget());
                }
            }
        }
    };
    match out {
        Ok(o) => {
            let log = safety::strip_controls(&o.log);
            let mut diags = parse_diagnostics(&log, Some(job.text));
            let ptx = map.apply(o.ptx, &mut diags);
            CompileResult { diagnostics: diags, ptx, notes: Vec::new(), cacheable: true, cancelled: false, nvrtc: None }
        }
        Err(e) => CompileResult::failed(e),
    }
}

/// CUDA keywords for clang without any NVIDIA headers: clang's CUDA mode compiles a
/// kernel to PTX with no NVIDIA file at all once these keywords are defined.
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

fn compile_clang(job: &Job<'_>) -> CompileResult {
    let device_src = crate::devicecode::device_only(job.text, &job.flags.include_dirs);
    let (tmp, src) = match scratch_source(&device_src) {
        Ok(t) => t,
        Err(failed) => return failed,
    };
    let shim = tmp.path().join("warpsight_shim.h");
    let out = tmp.path().join("out.ptx");
    if let Err(e) = write_new(&shim, CLANG_SHIM.as_bytes()) {
        return CompileResult::failed(format!("cannot write temporary files for clang: {e}"));
    }
    let mut map = PathMap::default();
    map.add(&src, job.path);
    // clang is run directly (no shell), so the user's paths are passed as they are.
    let mut cmd = Command::new(&job.tc.path);
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
    cmd.arg(format!("--cuda-gpu-arch={}", job.arch))
        .arg("-include")
        .arg(&shim);
    cmd.arg(format!("-I{}", job.dir.display()));
    cmd.args(job.flags.include_dirs.iter().map(|d| format!("-I{}", d.display())));
    cmd.args(job.flags.defines.iter().map(|d| format!("-D{d}")));
    cmd.arg("-o").arg(&out).arg(&src);
    let res = match run(cmd, job.deadline.remaining(), job.cancel) {
        Ok(r) => r,
        Err(e) => return run_error("clang", e, job.deadline.budget()),
    };
    let notes: Vec<String> = res.truncation_note("clang").into_iter().collect();
    let mut diags = parse_diagnostics(&res.stderr, Some(job.text));
    let ptx = if res.success() {
        std::fs::read_to_string(&out).ok()
    } else {
        None
    };
    let ptx = map.apply(ptx, &mut diags);
    CompileResult {
        ptx,
        diagnostics: diags,
        notes,
        cacheable: true,
        cancelled: false,
        nvrtc: None,
    }
}

/// Runs `ptxas -v` on `ptx` for `arch` within what is left of `deadline`; `Err` is a note
/// when ptxas is missing, failed to start or ran out of time.
fn run_ptxas(
    ptxas: Option<&Path>,
    ptx: &str,
    arch: &str,
    deadline: Deadline,
    cancel: &CancelToken,
) -> Result<(Vec<KernelResources>, Vec<CompilerDiagnostic>), String> {
    let Some(ptxas) = ptxas else {
        return Err("ptxas not found: registers and shared memory per kernel are unknown (they come from ptxas; PTX registers are virtual)".to_string());
    };
    let tmp = private_tempdir()?;
    let input = tmp.path().join("in.ptx");
    write_new(&input, ptx.as_bytes()).map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    let mut cmd = Command::new(ptxas);
    cmd.arg("-v")
        .arg(format!("-arch={arch}"))
        .arg(&input)
        .arg("-o")
        .arg(tmp.path().join("out.cubin"));
    let res = run(cmd, deadline.remaining(), cancel).map_err(|e| match e {
        RunError::Timeout { .. } => format!(
            "ptxas did not finish within what was left of the {} s compile budget: registers and shared memory per kernel are unknown",
            deadline.budget().as_secs_f64()
        ),
        e => format!("ptxas: {e}"),
    })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_mapped_back_in_diagnostics_and_file_directives() {
        let mut map = PathMap::default();
        map.add(Path::new("/tmp/warpsight-cuda-Ab3/source.cu"), Path::new("/w/inj/$(touch m).cu"));
        map.add(Path::new("/tmp/warpsight-cuda-Ab3/inc-0"), Path::new("/w/d\"q"));
        assert_eq!(map.restore("/tmp/warpsight-cuda-Ab3/source.cu").as_deref(), Some("/w/inj/$(touch m).cu"));
        assert_eq!(map.restore("/tmp/warpsight-cuda-Ab3/inc-0/h.h").as_deref(), Some("/w/d\"q/h.h"));
        // A prefix that is not a path component does not match.
        assert_eq!(map.restore("/tmp/warpsight-cuda-Ab3/inc-01/h.h"), None);
        assert_eq!(map.restore("/usr/include/stdio.h"), None);
        let mut diags = vec![
            CompilerDiagnostic { file: Some("/tmp/warpsight-cuda-Ab3/source.cu".into()), line: Some(2), ..CompilerDiagnostic::general(Severity::Error, "e") },
            CompilerDiagnostic { file: Some("/tmp/warpsight-cuda-Ab3/inc-0/h.h".into()), line: Some(1), ..CompilerDiagnostic::general(Severity::Error, "h") },
        ];
        let ptx = ".version 9.0\n\t.file\t1 \"/tmp/warpsight-cuda-Ab3/source.cu\"\n\t.file\t2 \"/tmp/warpsight-cuda-Ab3/inc-0/h.h\", 0, 0\n\t.file\t3 \"/usr/include/x.h\"\nmov.u32 %r1, 1;\n";
        let out = map.apply(Some(ptx.to_string()), &mut diags).unwrap_or_default();
        assert_eq!(diags[0].file.as_deref(), Some("/w/inj/$(touch m).cu"));
        assert_eq!(diags[1].file.as_deref(), Some("/w/d\"q/h.h"));
        // A path a PTX string can hold is restored whole; one with `"` by its file name.
        assert_eq!(
            out,
            ".version 9.0\n\t.file\t1 \"/w/inj/$(touch m).cu\"\n\t.file\t2 \"h.h\", 0, 0\n\t.file\t3 \"/usr/include/x.h\"\nmov.u32 %r1, 1;\n"
        );
    }

    #[test]
    fn only_inert_defines_undefines_and_flags_are_kept() {
        let mut f = CompileFlags {
            include_dirs: vec![PathBuf::from("/w/`x`")],
            defines: vec!["N=4096".into(), "X=$(touch m)".into(), "FAST".into()],
            undefines: vec!["OLD".into(), "$(y)".into()],
            pre_includes: vec![],
            other: vec!["-std=c++17".into(), "-Xcompiler=`z`".into()],
        };
        let dropped = f.drop_unsafe();
        assert_eq!(dropped, ["-DX=$(touch m)", "-U$(y)", "-Xcompiler=`z`"]);
        assert_eq!(f.defines, ["N=4096", "FAST"]);
        assert_eq!(f.undefines, ["OLD"]);
        assert_eq!(f.other, ["-std=c++17"]);
        // Paths stay (nvcc gets an alias), and are part of the cache key as they are.
        assert_eq!(f.key_flags(), ["-I/w/`x`", "-DN=4096", "-DFAST", "-UOLD", "-std=c++17"]);
        assert!(dropped_for_shell_note(&dropped).contains("shell"));
    }

    #[cfg(unix)]
    #[test]
    fn unsafe_paths_get_an_alias_in_the_private_directory() {
        let tmp = private_tempdir().unwrap_or_else(|e| panic!("{e}"));
        let real = tmp.path().join("d`touch m`");
        std::fs::create_dir_all(&real).unwrap_or_else(|e| panic!("{e}"));
        let (mut n, mut map, mut notes) = (0, PathMap::default(), Vec::new());
        let plain = nvcc_path(tmp.path(), tmp.path(), &mut n, &mut map, &mut notes);
        assert_eq!(plain.as_deref(), Some(tmp.path()));
        let alias = nvcc_path(&real, tmp.path(), &mut n, &mut map, &mut notes).unwrap_or_default();
        assert_eq!(alias, tmp.path().join("inc-0"));
        assert!(safety::is_inert_path(&alias));
        assert_eq!(std::fs::read_link(&alias).ok(), real.canonicalize().ok());
        assert_eq!(map.restore(&alias.join("h.h").display().to_string()), Some(real.join("h.h").display().to_string()));
        // A missing directory is left out, silently.
        assert_eq!(nvcc_path(&tmp.path().join("gone`x`"), tmp.path(), &mut n, &mut map, &mut notes), None);
        assert!(notes.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn scratch_files_are_never_written_through_a_link() {
        let tmp = private_tempdir().unwrap_or_else(|e| panic!("{e}"));
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "keep").unwrap_or_else(|e| panic!("{e}"));
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap_or_else(|e| panic!("{e}"));
        assert!(write_new(&link, b"overwritten").is_err());
        assert_eq!(std::fs::read_to_string(&victim).ok().as_deref(), Some("keep"));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(tmp.path()).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o700));
        assert!(tmp.path().file_name().is_some_and(|n| n.to_string_lossy().starts_with("warpsight-cuda-")));
    }
}
