//! Finding a CUDA compiler, and choosing the architecture to compile for.
//!
//! Discovery order (docs/cuda.md), first hit wins, for nvcc:
//! 1. the explicit setting (`--nvcc`, the editor setting), then `WARPSIGHT_NVCC`;
//! 2. `CUDA_HOME/bin/nvcc`, then `CUDA_PATH/bin/nvcc`;
//! 3. `nvcc` on `PATH`;
//! 4. the project-managed environment made by `warpsight setup-cuda` (a Python venv holding
//!    PyPI's `nvidia-cuda-nvcc`; docs/cuda.md).
//!
//! Nothing in the analysed file's folder or its repository is ever a candidate (a `.cuda/`
//! venv there is named in a hint, [`workspace_venv_nvcc`], but not run): a workspace must
//! not choose the programs warpsight runs (docs/security.md).
//!
//! NVRTC (`libnvrtc.so.*`) is looked for beside each of those roots (`lib/`, `lib64/`), in
//! `WARPSIGHT_NVRTC` (a library path) first, then by soname through the system loader. clang
//! (`WARPSIGHT_CLANG`, then `clang++`/`clang++-N` on `PATH`) is the last compiler fallback.
//! `ptxas` is taken from the compiler's own `bin/` when present, else by the same order.
//!
//! The environment is passed in as a [`DiscoveryEnv`] value so tests can describe a machine
//! with no CUDA at all without touching the process environment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::process::{CancelToken, Deadline, RunError, run};

/// What discovery may look at.
#[derive(Debug, Clone, Default)]
pub struct DiscoveryEnv {
    /// `--nvcc` or the editor setting.
    pub explicit_nvcc: Option<PathBuf>,
    /// Environment variables (`WARPSIGHT_NVCC`, `WARPSIGHT_NVRTC`, `WARPSIGHT_CLANG`,
    /// `CUDA_HOME`, `CUDA_PATH`, `PATH`).
    pub vars: HashMap<String, String>,
    /// The `warpsight setup-cuda` environment (a venv prefix).
    pub managed_prefix: Option<PathBuf>,
    /// Whether NVRTC may be loaded by soname through the system loader.
    pub system_loader: bool,
    /// How long the probes of one [`discover`] (`--version` of each tool found) may take
    /// together; `None`: 10 s. A tool that hangs on them must not hold the editor longer
    /// than a compile would: [`crate::compile::prepare_text`] sets it to what is left of
    /// the compile's budget.
    pub probe_timeout: Option<Duration>,
}

impl DiscoveryEnv {
    /// The real process environment and the default managed prefix.
    pub fn from_process() -> DiscoveryEnv {
        let keys = [
            "WARPSIGHT_NVCC",
            "WARPSIGHT_NVRTC",
            "WARPSIGHT_CLANG",
            "CUDA_HOME",
            "CUDA_PATH",
            "PATH",
        ];
        let vars = keys
            .iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        DiscoveryEnv {
            explicit_nvcc: None,
            vars,
            managed_prefix: crate::setup::default_prefix(),
            system_loader: true,
            probe_timeout: None,
        }
    }

    /// An environment with nothing in it (no variables, no managed prefix, no loader).
    pub fn empty() -> DiscoveryEnv {
        DiscoveryEnv::default()
    }

    fn var(&self, k: &str) -> Option<&str> {
        self.vars
            .get(k)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// How a tool was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FoundBy {
    Explicit,
    EnvVar,
    CudaHome,
    CudaPath,
    Path,
    Managed,
    SystemLoader,
}

impl FoundBy {
    pub fn describe(self) -> &'static str {
        match self {
            FoundBy::Explicit => "the explicit setting",
            FoundBy::EnvVar => "a WARPSIGHT_* variable",
            FoundBy::CudaHome => "CUDA_HOME",
            FoundBy::CudaPath => "CUDA_PATH",
            FoundBy::Path => "PATH",
            FoundBy::Managed => "the environment made by `warpsight setup-cuda`",
            FoundBy::SystemLoader => "the system library path",
        }
    }
}

/// Which compiler produced (or would produce) the PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CompilerKind {
    Nvcc,
    Nvrtc,
    Clang,
}

impl CompilerKind {
    pub fn name(self) -> &'static str {
        match self {
            CompilerKind::Nvcc => "nvcc",
            CompilerKind::Nvrtc => "NVRTC",
            CompilerKind::Clang => "clang",
        }
    }
}

/// One usable compiler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toolchain {
    pub kind: CompilerKind,
    /// The executable, or the NVRTC library.
    pub path: PathBuf,
    /// The version as reported (`13.5.37` for nvcc, `13.5` for NVRTC).
    pub version: String,
    pub found_by: FoundBy,
    /// The CUDA root (`bin/`'s parent) when known: its `include/` is used for NVRTC.
    pub root: Option<PathBuf>,
}

impl Toolchain {
    /// A human sentence, e.g. "nvcc 13.5.37 at /opt/cuda/bin/nvcc (found via CUDA_HOME)".
    pub fn describe(&self) -> String {
        format!(
            "{} {} at {} (found via {})",
            self.kind.name(),
            self.version,
            self.path.display(),
            self.found_by.describe()
        )
    }
    /// `<root>/include` and `<root>/include/cccl` when they exist.
    pub fn include_dirs(&self) -> Vec<PathBuf> {
        let Some(root) = &self.root else {
            return Vec::new();
        };
        [root.join("include"), root.join("include").join("cccl")]
            .into_iter()
            .filter(|p| p.is_dir())
            .collect()
    }
}

/// Everything discovery found.
#[derive(Debug, Clone, Default)]
pub struct Toolchains {
    pub nvcc: Option<Toolchain>,
    pub nvrtc: Option<Toolchain>,
    pub clang: Option<Toolchain>,
    pub ptxas: Option<PathBuf>,
}

fn is_file(p: &Path) -> bool {
    p.is_file()
}

fn exe(name: &str) -> String {
    if cfg!(windows) {
        format!("{name}.exe")
    } else {
        name.to_string()
    }
}

/// Searches `PATH` for an executable.
fn on_path(env: &DiscoveryEnv, name: &str) -> Option<PathBuf> {
    let path = env.var("PATH")?;
    std::env::split_paths(path)
        .map(|d| d.join(exe(name)))
        .find(|p| is_file(p))
}

/// `<prefix>/lib/python3.*/site-packages/nvidia/cu13` (or `cu12`) inside a venv.
pub fn managed_cuda_root(prefix: &Path) -> Option<PathBuf> {
    let lib = prefix.join("lib");
    let mut pys: Vec<PathBuf> = std::fs::read_dir(&lib)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("python3"))
        })
        .collect();
    pys.sort();
    for py in pys.iter().rev() {
        for cu in ["cu13", "cu12"] {
            let root = py.join("site-packages").join("nvidia").join(cu);
            if root.join("bin").join(exe("nvcc")).is_file() || root.join("lib").is_dir() {
                return Some(root);
            }
        }
    }
    // Windows venvs use `Lib/site-packages`.
    let win = prefix
        .join("Lib")
        .join("site-packages")
        .join("nvidia")
        .join("cu13");
    win.is_dir().then_some(win)
}

/// An nvcc in a `.cuda/` Python venv in `dir` or one of its ancestors (the layout
/// `scripts/test-all.sh` makes in the repository root), for the hint given when no compiler
/// is found. It is only looked at, never run: discovery does not use a workspace's
/// toolchain, because opening a cloned repository must never run a program the repository
/// chose (docs/security.md, "What warpsight runs").
pub fn workspace_venv_nvcc(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find_map(|d| {
        let venv = d.join(".cuda");
        managed_cuda_root(&venv)
            .map(|r| r.join("bin").join(exe("nvcc")))
            .filter(|p| p.is_file())
    })
}

/// The candidate CUDA roots in discovery order (used for nvcc, ptxas and NVRTC).
fn roots(env: &DiscoveryEnv) -> Vec<(PathBuf, FoundBy)> {
    let mut out = Vec::new();
    let root_of = |nvcc: &Path| nvcc.parent().and_then(Path::parent).map(Path::to_path_buf);
    if let Some(r) = env.explicit_nvcc.as_deref().and_then(root_of) {
        out.push((r, FoundBy::Explicit));
    }
    if let Some(r) = env.var("WARPSIGHT_NVCC").map(Path::new).and_then(root_of) {
        out.push((r, FoundBy::EnvVar));
    }
    if let Some(h) = env.var("CUDA_HOME") {
        out.push((PathBuf::from(h), FoundBy::CudaHome));
    }
    if let Some(h) = env.var("CUDA_PATH") {
        out.push((PathBuf::from(h), FoundBy::CudaPath));
    }
    if let Some(r) = on_path(env, "nvcc").as_deref().and_then(root_of) {
        out.push((r, FoundBy::Path));
    }
    if let Some(r) = env.managed_prefix.as_deref().and_then(managed_cuda_root) {
        out.push((r, FoundBy::Managed));
    }
    out
}

/// Runs discovery. Probing runs `nvcc --version` (cached per path for the process).
pub fn discover(env: &DiscoveryEnv) -> Toolchains {
    let deadline = Deadline::after(env.probe_timeout.unwrap_or(PROBE_TIMEOUT));
    let mut tc = Toolchains::default();
    let candidates: Vec<(PathBuf, FoundBy)> = {
        let mut c = Vec::new();
        if let Some(p) = &env.explicit_nvcc {
            c.push((p.clone(), FoundBy::Explicit));
        }
        if let Some(p) = env.var("WARPSIGHT_NVCC") {
            c.push((PathBuf::from(p), FoundBy::EnvVar));
        }
        for (root, by) in roots(env) {
            if matches!(by, FoundBy::Explicit | FoundBy::EnvVar) {
                continue;
            }
            c.push((root.join("bin").join(exe("nvcc")), by));
        }
        c
    };
    for (path, by) in candidates {
        if !is_file(&path) {
            continue;
        }
        let version = probe_version_within(&path, deadline.remaining()).unwrap_or_else(|| "(unknown version)".to_string());
        let root = path.parent().and_then(Path::parent).map(Path::to_path_buf);
        tc.nvcc = Some(Toolchain {
            kind: CompilerKind::Nvcc,
            path,
            version,
            found_by: by,
            root,
        });
        break;
    }
    // ptxas: beside nvcc, else the roots, else PATH.
    let mut ptxas_candidates: Vec<PathBuf> = Vec::new();
    if let Some(n) = &tc.nvcc
        && let Some(dir) = n.path.parent()
    {
        ptxas_candidates.push(dir.join(exe("ptxas")));
    }
    ptxas_candidates.extend(
        roots(env)
            .into_iter()
            .map(|(r, _)| r.join("bin").join(exe("ptxas"))),
    );
    if let Some(p) = on_path(env, "ptxas") {
        ptxas_candidates.push(p);
    }
    tc.ptxas = ptxas_candidates.into_iter().find(|p| is_file(p));

    // NVRTC.
    let mut libs: Vec<(PathBuf, FoundBy, Option<PathBuf>)> = Vec::new();
    if let Some(p) = env.var("WARPSIGHT_NVRTC") {
        let p = PathBuf::from(p);
        let root = p.parent().and_then(Path::parent).map(Path::to_path_buf);
        libs.push((p, FoundBy::EnvVar, root));
    }
    for (root, by) in roots(env) {
        for sub in ["lib", "lib64", "bin"] {
            let Ok(entries) = std::fs::read_dir(root.join(sub)) else {
                continue;
            };
            let mut found: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| is_nvrtc_name(p))
                .collect();
            found.sort();
            if let Some(p) = found.pop() {
                libs.push((p, by, Some(root.clone())));
            }
        }
    }
    if env.system_loader {
        for so in ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"] {
            libs.push((PathBuf::from(so), FoundBy::SystemLoader, None));
        }
    }
    for (path, by, root) in libs {
        if by != FoundBy::SystemLoader && !is_file(&path) {
            continue;
        }
        if let Ok(lib) = crate::nvrtc::Nvrtc::load(&path) {
            let (ma, mi) = lib.version();
            tc.nvrtc = Some(Toolchain {
                kind: CompilerKind::Nvrtc,
                path,
                version: format!("{ma}.{mi}"),
                found_by: by,
                root,
            });
            break;
        }
    }

    // clang.
    let clang = env
        .var("WARPSIGHT_CLANG")
        .map(|p| (PathBuf::from(p), FoundBy::EnvVar))
        .filter(|(p, _)| is_file(p))
        .or_else(|| {
            [
                "clang++",
                "clang++-22",
                "clang++-19",
                "clang++-18",
                "clang++-17",
                "clang++-16",
                "clang++-15",
                "clang++-14",
                "clang",
            ]
            .iter()
            .find_map(|n| on_path(env, n))
            .map(|p| (p, FoundBy::Path))
        });
    if let Some((path, by)) = clang {
        let version = probe_version_within(&path, deadline.remaining()).unwrap_or_else(|| "(unknown version)".to_string());
        tc.clang = Some(Toolchain {
            kind: CompilerKind::Clang,
            path,
            version,
            found_by: by,
            root: None,
        });
    }
    tc
}

fn is_nvrtc_name(p: &Path) -> bool {
    let Some(n) = p.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    (n.starts_with("libnvrtc.so")
        || (n.starts_with("nvrtc64_") && n.ends_with(".dll"))
        || n == "libnvrtc.dylib")
        && !n.contains("builtins")
}

type ProbeCache = Mutex<HashMap<(PathBuf, String), Option<String>>>;

fn probe_cache() -> &'static ProbeCache {
    static C: OnceLock<ProbeCache> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Runs `tool flag` once per process (per path and modification time) and caches stdout
/// (bounded and without control characters, as [`run`] keeps it).
fn probe(tool: &Path, flag: &str, timeout: Duration) -> Option<String> {
    let mtime = std::fs::metadata(tool)
        .and_then(|m| m.modified())
        .map(|t| format!("{t:?}"))
        .unwrap_or_default();
    let key = (tool.to_path_buf(), format!("{flag}@{mtime}"));
    if let Ok(c) = probe_cache().lock()
        && let Some(v) = c.get(&key)
    {
        return v.clone();
    }
    let mut cmd = Command::new(tool);
    cmd.arg(flag);
    let res = match run(cmd, timeout, &CancelToken::new()) {
        Ok(o) => o.success().then_some(o.stdout),
        // A probe that ran out of time says nothing about the tool: not cached, so the
        // next compile (with a fresh budget) asks again.
        Err(RunError::Timeout { .. } | RunError::Cancelled) => return None,
        Err(RunError::Spawn { .. }) => None,
    };
    if let Ok(mut c) = probe_cache().lock() {
        c.insert(key, res.clone());
    }
    res
}

/// `nvcc --version` gives "Cuda compilation tools, release 13.5, V13.5.37": `13.5.37`.
/// clang gives "clang version 19.1.7 (...)": `19.1.7`.
pub fn probe_version(tool: &Path) -> Option<String> {
    probe_version_within(tool, PROBE_TIMEOUT)
}

/// The default time a probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// [`probe_version`] with a time limit.
pub fn probe_version_within(tool: &Path, timeout: Duration) -> Option<String> {
    let out = probe(tool, "--version", timeout)?;
    parse_version(&out)
}

pub fn parse_version(out: &str) -> Option<String> {
    for line in out.lines() {
        if let Some(v) = line.split(", V").nth(1) {
            // The version token only: whatever a tool prints after it is not shown.
            let v: String = v.trim().chars().take_while(|c| c.is_ascii_alphanumeric() || ".-+_".contains(*c)).collect();
            return (!v.is_empty()).then_some(v);
        }
        if let Some(rest) = line.split("clang version ").nth(1) {
            return rest.split_whitespace().next().map(str::to_string);
        }
    }
    None
}

/// The `sm_XX` numbers an nvcc supports (`nvcc --list-gpu-arch`), sorted.
pub fn nvcc_supported_archs(nvcc: &Path, timeout: Duration) -> Vec<u32> {
    let Some(out) = probe(nvcc, "--list-gpu-arch", timeout) else {
        return Vec::new();
    };
    let mut v: Vec<u32> = out
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("compute_"))
        .filter_map(|n| n.trim_end_matches(['a', 'f']).parse().ok())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// A target architecture: `sm_86`, `sm_90a`, `compute_80`, `86`, `8.6` all parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arch {
    /// `86` for sm_86.
    pub number: u32,
    /// The `a`/`f` feature suffix (`sm_90a`), if any.
    pub suffix: Option<char>,
}

impl Arch {
    pub fn parse(s: &str) -> Option<Arch> {
        let s = s.trim().to_ascii_lowercase();
        let body = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("compute_"))
            .or_else(|| s.strip_prefix("sm"))
            .unwrap_or(&s);
        if let Some((ma, mi)) = body.split_once('.') {
            let (ma, mi): (u32, u32) = (ma.parse().ok()?, mi.parse().ok()?);
            return (mi < 10).then_some(Arch {
                number: ma * 10 + mi,
                suffix: None,
            });
        }
        let (digits, suffix) = match body.chars().last() {
            Some(c @ ('a' | 'f')) => (&body[..body.len() - 1], Some(c)),
            _ => (body, None),
        };
        let number: u32 = digits.parse().ok()?;
        (10..=999)
            .contains(&number)
            .then_some(Arch { number, suffix })
    }
    pub fn sm(&self) -> String {
        match self.suffix {
            Some(c) => format!("sm_{}{c}", self.number),
            None => format!("sm_{}", self.number),
        }
    }
}

/// Picks the architecture to compile for from the requested one and what the compiler
/// supports, with a note when they differ. An older GPU than the compiler supports gets the
/// oldest supported architecture (the newest PTX the compiler can emit that is closest to
/// the target): CUDA 13 supports sm_75 and newer, so a K20 (sm_35) target compiles for
/// sm_75. A newer GPU than the compiler knows gets the newest supported one.
pub fn choose_arch(requested: Arch, supported: &[u32], compiler: &str) -> (Arch, Option<String>) {
    if supported.is_empty() || supported.contains(&requested.number) {
        return (requested, None);
    }
    let min = supported.iter().copied().min().unwrap_or(requested.number);
    let max = supported.iter().copied().max().unwrap_or(requested.number);
    let chosen = if requested.number < min {
        min
    } else if requested.number > max {
        max
    } else {
        supported
            .iter()
            .copied()
            .filter(|a| *a <= requested.number)
            .max()
            .unwrap_or(min)
    };
    let chosen = Arch {
        number: chosen,
        suffix: None,
    };
    let why = if requested.number < min {
        format!("{compiler} supports sm_{min} and newer")
    } else if requested.number > max {
        format!("{compiler} supports up to sm_{max}")
    } else {
        format!("{compiler} has no {}", requested.sm())
    };
    let note = format!(
        "{why}; compiled for {} instead of {}: instruction mix and resources are those of {} code and may differ from what the target GPU would run",
        chosen.sm(),
        requested.sm(),
        chosen.sm()
    );
    (chosen, Some(note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_parsing() {
        assert_eq!(Arch::parse("sm_80").map(|a| a.sm()), Some("sm_80".into()));
        assert_eq!(Arch::parse("sm_90a").map(|a| a.sm()), Some("sm_90a".into()));
        assert_eq!(Arch::parse("compute_86").map(|a| a.number), Some(86));
        assert_eq!(Arch::parse("8.9").map(|a| a.number), Some(89));
        assert_eq!(Arch::parse("35").map(|a| a.number), Some(35));
        assert_eq!(Arch::parse("sm_x"), None);
    }

    #[test]
    fn older_gpu_compiles_for_oldest_supported_with_a_note() {
        let supported = [75, 80, 86, 87, 88, 89, 90, 100, 103, 107, 110, 120, 121];
        let (a, note) = choose_arch(
            Arch {
                number: 35,
                suffix: None,
            },
            &supported,
            "nvcc 13.5.37",
        );
        assert_eq!(a.sm(), "sm_75");
        let note = note.unwrap_or_default();
        assert!(
            note.contains("sm_75 and newer") && note.contains("instead of sm_35"),
            "{note}"
        );
        assert_eq!(
            choose_arch(
                Arch {
                    number: 80,
                    suffix: None
                },
                &supported,
                "x"
            ),
            (
                Arch {
                    number: 80,
                    suffix: None
                },
                None
            )
        );
        assert_eq!(
            choose_arch(
                Arch {
                    number: 72,
                    suffix: None
                },
                &[70, 75, 80],
                "x"
            )
            .0
            .number,
            70
        );
        assert_eq!(
            choose_arch(
                Arch {
                    number: 130,
                    suffix: None
                },
                &supported,
                "x"
            )
            .0
            .number,
            121
        );
    }

    #[test]
    fn versions() {
        assert_eq!(parse_version("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.5, V13.5.37\n").as_deref(), Some("13.5.37"));
        assert_eq!(
            parse_version("Debian clang version 19.1.7 (3)\nTarget: x86_64").as_deref(),
            Some("19.1.7")
        );
    }

    #[test]
    fn empty_environment_finds_nothing() {
        let tc = discover(&DiscoveryEnv::empty());
        assert!(
            tc.nvcc.is_none() && tc.nvrtc.is_none() && tc.clang.is_none() && tc.ptxas.is_none()
        );
    }
}
