//! `warpsight analyze` on `.cu` files as a user types it (issue 14): a file named by a
//! relative path, with and without `-D`, and a compile that fails for want of a header and
//! succeeds once it is installed. These need the project's nvcc (`.cuda/`, installed by
//! scripts/test-all.sh): without it they return early, and fail when
//! `WARPSIGHT_REQUIRE_CUDA` is set.
#![allow(clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn nvcc() -> Option<PathBuf> {
    let p = cuda_frontend::toolchain::managed_cuda_root(&root().join(".cuda")).map(|r| r.join("bin/nvcc")).filter(|p| p.is_file());
    if p.is_none() {
        assert!(std::env::var_os("WARPSIGHT_REQUIRE_CUDA").is_none(), "WARPSIGHT_REQUIRE_CUDA is set but <repo>/.cuda has no nvcc");
        eprintln!("skipped: no CUDA toolchain at <repo>/.cuda");
    }
    p
}

/// A private scratch directory (an unpredictable name, removed when dropped).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("warpsight-cuda-cli-{name}-")).tempdir().unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `warpsight analyze --format json --nvcc NVCC ARGS` in `cwd` with a private cache;
/// returns (exit code, the report, stderr).
fn analyze_in(cwd: &Path, nvcc: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(cwd)
        .env("XDG_CACHE_HOME", cwd.join(".cache"))
        .env_remove("WARPSIGHT_NVCC")
        .arg("analyze")
        .arg("--format")
        .arg("json")
        .arg("--nvcc")
        .arg(nvcc)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run warpsight: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (out.status.code().unwrap_or(-1), doc, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn kernel_names(doc: &Value) -> Vec<String> {
    doc["files"][0]["kernels"].as_array().map(|ks| ks.iter().filter_map(|k| k["demangled"].as_str().map(str::to_string)).collect()).unwrap_or_default()
}

/// A kernel that needs its neighbour header and, when `-D` is given, the define.
const NEIGHBOUR: &str = "#include \"tile.h\"\n#ifndef TW\n#define TW 8\n#endif\n__global__ void tiled(float* p) { __shared__ float s[TW]; s[threadIdx.x % TW] = p[threadIdx.x]; p[threadIdx.x] = s[0] * SCALE; }\n";

#[test]
fn a_relative_path_is_compiled_with_its_own_directory_on_the_include_path() {
    let Some(nvcc) = nvcc() else { return };
    let dir_tmp = scratch("relative");
    let dir = dir_tmp.path();
    std::fs::create_dir_all(dir.join("sub")).unwrap_or_else(|e| panic!("{e}"));
    for d in [dir.to_path_buf(), dir.join("sub")] {
        std::fs::write(d.join("tile.h"), "#define SCALE 2.0f\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.join("t.cu"), NEIGHBOUR).unwrap_or_else(|e| panic!("{e}"));
    }
    // `t.cu` (an empty parent: once a bare `-I` that swallowed the next flag), `./t.cu`
    // and `sub/t.cu`; with and without a define after the include directory.
    for (file, defines, smem) in [
        ("t.cu", &[][..], 32),
        ("t.cu", &["-D", "TW=16"][..], 64),
        ("./t.cu", &["-D", "TW=16"][..], 64),
        ("sub/t.cu", &[][..], 32),
        ("sub/t.cu", &["-D", "TW=4"][..], 16),
    ] {
        let mut args = vec![file];
        args.extend_from_slice(defines);
        let (code, doc, stderr) = analyze_in(dir, &nvcc, &args);
        assert_eq!(code, 0, "{file} {defines:?}: {doc}\n{stderr}");
        assert_eq!(kernel_names(&doc), ["tiled(float*)"], "{file} {defines:?}: {doc}");
        let k = &doc["files"][0]["kernels"][0];
        assert_eq!(k["shared_memory"]["static_bytes"], smem, "{file} {defines:?}: the define must reach nvcc: {k}");
    }
}

/// Runs `warpsight ARGS` from the repository root in an environment without any CUDA
/// (no variables, a `PATH` of system folders, empty home and data folders); returns
/// (exit code, stdout, stderr).
fn run_without_cuda(args: &[&str]) -> (i32, String, String) {
    run_with_data_home(scratch("no-cuda-home").path(), args)
}

/// [`run_without_cuda`] with this home folder (its `data/` is the user's data folder).
fn run_with_data_home(home: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(root())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run warpsight: {e}"));
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_readme_example_works_with_and_without_a_compiler() {
    // Without a compiler: the PTX recorded beside the source.
    let args = ["analyze", "tests/fixtures/cu/matmul_tiled.cu", "--gpu", "a100", "--gpu", "tesla-k20"];
    let (code, out, err) = run_without_cuda(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("using the recorded PTX file tests/fixtures/cu/matmul_tiled.ptx"), "{out}");
    assert!(out.contains("kernel matmul_tiled(float*, float*, float*, int)"), "{out}");
    assert!(out.contains("launch       grid 64×64, block 16×16, dynamic smem 0 B  (annotation)"), "{out}");
    // nvcc's signed `N / 16` is shown as the division the source wrote.
    assert!(out.contains("trip count 64 (= N / 16)"), "{out}");
    // With the compiler: the same, and registers from ptxas.
    let Some(nvcc) = nvcc() else { return };
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(root())
        .env("XDG_CACHE_HOME", scratch("readme-cache").path())
        .args(args)
        .arg("--nvcc")
        .arg(&nvcc)
        .output()
        .unwrap_or_else(|e| panic!("run warpsight: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("PTX compiled now by nvcc"), "{text}");
    assert!(text.contains("trip count 64 (= N / 16)"), "{text}");
    assert!(text.contains("per thread (ptxas)"), "{text}");
}

#[test]
fn the_toolchain_setup_cuda_installs_is_found_and_the_repository_one_only_named() {
    // After scripts/test-all.sh, <repo>/.cuda holds nvcc; a plain `warpsight analyze`
    // does not run it (a workspace never chooses the programs warpsight runs,
    // docs/security.md), uses the recorded PTX and says how to use that compiler.
    let Some(nvcc) = nvcc() else { return };
    let (code, out, err) = run_without_cuda(&["analyze", "examples/vadd.cu"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("No CUDA compiler found: using the recorded PTX file examples/vadd.ptx"), "{out}");
    assert!(out.contains("is not used: warpsight never runs a program found in a workspace"), "{out}");
    assert!(out.contains("warpsight setup-cuda"), "{out}");
    // Where `warpsight setup-cuda` installs (the user's data folder, warpsight/cuda), the
    // same venv is found with no setting. A link stands in for the 350 MB install.
    let home_tmp = scratch("setup-cuda-home");
    let home = home_tmp.path();
    let prefix = home.join("data/warpsight/cuda");
    std::fs::create_dir_all(home.join("data/warpsight")).unwrap_or_else(|e| panic!("{e}"));
    let venv = root().join(".cuda").canonicalize().unwrap_or_else(|e| panic!("{e}"));
    #[cfg(unix)]
    std::os::unix::fs::symlink(&venv, &prefix).unwrap_or_else(|e| panic!("{e}"));
    let (code, out, err) = run_with_data_home(home, &["analyze", "examples/vadd.cu"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("PTX compiled now by nvcc"), "{out}");
    assert!(out.contains("found via the environment made by `warpsight setup-cuda`"), "{out}");
    assert!(!out.contains("is not used"), "{out}");
    let _ = nvcc;
}
