//! Shared helpers for the integration tests: locating the repository's CUDA toolchain
//! (`<repo>/.cuda`, made by `python3 -m venv .cuda && .cuda/bin/pip install
//! nvidia-cuda-nvcc nvidia-cuda-cccl nvidia-cuda-nvrtc`), scratch directories, and a fake
//! compiler for timeout tests.
//!
//! Tests that need the toolchain call [`cuda_root`]: without it they return early with a
//! printed note, unless `WARPSIGHT_REQUIRE_CUDA` is set (CI sets it after installing the
//! toolchain), in which case a missing toolchain fails the test.
#![allow(dead_code, clippy::print_stderr)]

use std::path::{Path, PathBuf};

use cuda_frontend::{DiscoveryEnv, Options};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `<repo>/.cuda/lib/python3.*/site-packages/nvidia/cu13`, when it has nvcc.
pub fn cuda_root(test: &str) -> Option<PathBuf> {
    let root = cuda_frontend::toolchain::managed_cuda_root(&repo_root().join(".cuda"))
        .filter(|r| r.join("bin/nvcc").is_file());
    if root.is_none() {
        if std::env::var_os("WARPSIGHT_REQUIRE_CUDA").is_some() {
            panic!(
                "{test}: WARPSIGHT_REQUIRE_CUDA is set but no CUDA toolchain is installed at <repo>/.cuda"
            );
        }
        eprintln!(
            "{test}: skipped: no CUDA toolchain at <repo>/.cuda (set WARPSIGHT_REQUIRE_CUDA to make this an error)"
        );
    }
    root
}

/// A fresh private scratch directory for this test (an unpredictable name, removed when
/// dropped).
pub fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("warpsight-cf-it-{name}-")).tempdir().unwrap_or_else(|e| panic!("cannot create a scratch directory: {e}"))
}

/// Options that use exactly this nvcc and a private cache (nothing from the process
/// environment).
pub fn nvcc_options(root: &Path, cache: &Path) -> Options {
    Options {
        nvcc: Some(root.join("bin/nvcc")),
        env: Some(DiscoveryEnv::empty()),
        cache_dir: Some(cache.to_path_buf()),
        ..Options::default()
    }
}

/// Options with NVRTC from this root only.
pub fn nvrtc_options(root: &Path, cache: &Path) -> Options {
    let mut env = DiscoveryEnv::empty();
    env.vars
        .insert("CUDA_HOME".into(), root.display().to_string());
    Options {
        compiler: cuda_frontend::CompilerChoice::Nvrtc,
        env: Some(env),
        cache_dir: Some(cache.to_path_buf()),
        ..Options::default()
    }
}

/// Writes an executable fake `nvcc` that answers `--version` and `--list-gpu-arch` and
/// sleeps on anything else.
pub fn fake_slow_nvcc(dir: &Path) -> PathBuf {
    let bin = dir.join("fake/bin");
    std::fs::create_dir_all(&bin).unwrap_or_else(|e| panic!("{e}"));
    let p = bin.join("nvcc");
    std::fs::write(&p, "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'Cuda compilation tools, release 99.0, V99.0.1';;\n  --list-gpu-arch) echo compute_80;;\n  *) sleep 30;;\nesac\n").unwrap_or_else(|e| panic!("{e}"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755));
    }
    p
}

/// Writes an executable `fake/bin/nvcc` shell script with this body.
pub fn fake_nvcc(dir: &Path, script: &str) -> PathBuf {
    let bin = dir.join("fake/bin");
    std::fs::create_dir_all(&bin).unwrap_or_else(|e| panic!("{e}"));
    let p = bin.join("nvcc");
    std::fs::write(&p, script).unwrap_or_else(|e| panic!("{e}"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755));
    }
    p
}

/// Options that use exactly this (fake) nvcc, no ptxas, and a private cache.
pub fn fake_options(nvcc: &Path, cache: &Path) -> Options {
    Options {
        nvcc: Some(nvcc.to_path_buf()),
        env: Some(DiscoveryEnv::empty()),
        cache_dir: Some(cache.to_path_buf()),
        run_ptxas: false,
        ..Options::default()
    }
}
