//! `warpsight setup-cuda`: a project-managed CUDA compiler from PyPI, no GPU needed.
//!
//! NVIDIA publishes nvcc, cicc, ptxas and the headers as Python wheels
//! (`nvidia-cuda-nvcc`, which pulls `nvidia-nvvm`, `nvidia-cuda-runtime` and
//! `nvidia-cuda-crt`; `nvidia-cuda-cccl` for `<cuda/std/...>`, CUB and Thrust; the header
//! packages in [`PACKAGES`] and, on request, NVRTC and cuBLAS). Installed
//! into a venv they form a complete `nvidia/cu13/{bin,include,lib,nvvm}` tree that nvcc
//! finds relative to itself (13.5.37 verified: about 346 MB installed).
//! The versions are pinned so that every user gets the PTX our fixtures were made with.
//! The venv lives in the user's data directory (`~/.local/share/warpsight/cuda` on Linux)
//! unless a prefix is given, and discovery looks there last.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::process::{CancelToken, run};

/// The pinned packages (PyPI names and versions): the compiler, CCCL, and the headers
/// real programs include that PyPI carries (docs/cuda.md, "Headers"): `cuda_profiler_api.h`,
/// NVTX (`nvtx3/nvToolsExt.h`, header-only) and cuRAND (`curand_kernel.h`, 77 MB with its
/// library). The 13.5.25 builds are those of the CUDA 13.5.0 release (NVIDIA's redistrib
/// manifest `version_13.5.0.json`: `cuda_profiler_api` and `cuda_nvtx` 13.5.25); cuRAND
/// 10.4.5.25 is the build published beside them. Each must unpack into the same
/// `nvidia/cu13/include` as nvcc, where nvcc finds it with no `-I`.
pub const PACKAGES: &[&str] = &[
    "nvidia-cuda-nvcc==13.5.37",
    "nvidia-cuda-cccl==13.3.5.0.6",
    "nvidia-cuda-profiler-api==13.5.25",
    "nvidia-nvtx==13.5.25",
    "nvidia-curand==10.4.5.25",
];
/// Added with `--with-nvrtc` (58 MB): in-process compiles, ten times faster than nvcc.
pub const NVRTC_PACKAGE: &str = "nvidia-cuda-nvrtc==13.5.37";
/// Added with `--with-cublas` (444 MB download for six headers: the wheel carries the
/// whole library): `cublas_v2.h` for host code that calls cuBLAS. cuBLAS has been released
/// independently of the toolkit since March 2026 (CUDA 13.2 release notes, "Overview");
/// 13.10.0.20, the newest on PyPI, compiles with the 13.5 headers (tested). It depends on
/// NVRTC, which is pinned with it so pip does not pick a newer one.
pub const CUBLAS_PACKAGES: &[&str] = &["nvidia-cublas==13.10.0.20", "nvidia-cuda-nvrtc==13.5.37"];

/// `dirs::data_dir()/warpsight/cuda`.
pub fn default_prefix() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("warpsight").join("cuda"))
}

/// What `install` did.
#[derive(Debug, Clone)]
pub struct SetupReport {
    pub prefix: PathBuf,
    /// The nvcc inside the environment, when the install produced one.
    pub nvcc: Option<PathBuf>,
    pub packages: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{step} failed: {detail}")]
    Step { step: String, detail: String },
}

fn step(step: &str, cmd: Command, timeout: Duration) -> Result<(), SetupError> {
    let out = run(cmd, timeout, &CancelToken::new()).map_err(|e| SetupError::Step {
        step: step.to_string(),
        detail: e.to_string(),
    })?;
    if !out.success() {
        let tail: String = out
            .stderr
            .lines()
            .rev()
            .take(8)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(SetupError::Step {
            step: step.to_string(),
            detail: tail,
        });
    }
    Ok(())
}

/// Creates (or updates) the venv at `prefix` with `python -m venv` and installs the pinned
/// packages with its pip. `python` defaults to `python3`.
pub fn install(
    prefix: &Path,
    python: Option<&Path>,
    with_nvrtc: bool,
    with_cublas: bool,
) -> Result<SetupReport, SetupError> {
    let python = python.map_or_else(|| PathBuf::from("python3"), Path::to_path_buf);
    if let Some(parent) = prefix.parent() {
        std::fs::create_dir_all(parent).map_err(|e| SetupError::Step {
            step: format!("creating {}", parent.display()),
            detail: e.to_string(),
        })?;
    }
    let mut venv = Command::new(&python);
    venv.arg("-m").arg("venv").arg(prefix);
    step(
        &format!("`{} -m venv`", python.display()),
        venv,
        Duration::from_secs(300),
    )?;
    let pip = if cfg!(windows) {
        prefix.join("Scripts").join("pip.exe")
    } else {
        prefix.join("bin").join("pip")
    };
    let mut packages: Vec<String> = PACKAGES.iter().map(|s| s.to_string()).collect();
    if with_nvrtc {
        packages.push(NVRTC_PACKAGE.to_string());
    }
    if with_cublas {
        for p in CUBLAS_PACKAGES {
            if !packages.iter().any(|q| q == p) {
                packages.push(p.to_string());
            }
        }
    }
    let mut cmd = Command::new(&pip);
    cmd.arg("install")
        .arg("--disable-pip-version-check")
        .args(&packages);
    step("`pip install`", cmd, Duration::from_secs(1800))?;
    let nvcc = crate::toolchain::managed_cuda_root(prefix)
        .map(|r| {
            r.join("bin")
                .join(if cfg!(windows) { "nvcc.exe" } else { "nvcc" })
        })
        .filter(|p| p.is_file());
    Ok(SetupReport {
        prefix: prefix.to_path_buf(),
        nvcc,
        packages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test toolchain (scripts/cuda-requirements.txt, installed by scripts/test-all.sh)
    /// holds every package `setup-cuda` can install, at the same versions, so the tests
    /// compile with what users get.
    #[test]
    fn the_test_requirements_pin_what_setup_cuda_installs() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/cuda-requirements.txt");
        let reqs = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let pinned: Vec<&str> = reqs.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        for p in PACKAGES.iter().chain([&NVRTC_PACKAGE]).chain(CUBLAS_PACKAGES) {
            assert!(pinned.contains(p), "{p} is installed by setup-cuda but not pinned in {path}");
        }
    }
}
