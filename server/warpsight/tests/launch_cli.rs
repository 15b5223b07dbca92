//! `warpsight analyze` on `.cu` programs whose launch depends on the build and on host
//! variables (issue 14): `-D` defines reach the launch-site folding, a `--arg` that the
//! folding used is not reported as ignored, parameter names come from a kernel declared
//! in an included header, and a launch that cannot be folded says what stopped it.
//!
//! These compile with the real nvcc: `WARPSIGHT_NVCC`, else the project's toolchain in
//! `.cuda/` (scripts/test-all.sh installs it). Without one they return early, unless
//! `WARPSIGHT_REQUIRE_CUDA` is set.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn nvcc() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found = std::env::var_os("WARPSIGHT_NVCC")
        .map(PathBuf::from)
        .into_iter()
        .chain([root.join(".cuda/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc")])
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(std::env::var_os("WARPSIGHT_REQUIRE_CUDA").is_none(), "WARPSIGHT_REQUIRE_CUDA is set but no nvcc was found");
    }
    found
}

/// Runs `warpsight analyze FILE --format json ARGS` and returns the file's one kernel.
fn analyze(nvcc: &Path, file: &Path, args: &[&str]) -> Value {
    let cache = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(file.parent().expect("a parent"))
        .arg("analyze")
        .arg(file)
        .args(["--format", "json", "--gpu", "a100", "--nvcc"])
        .arg(nvcc)
        .args(args)
        .env("XDG_CACHE_HOME", cache.path())
        .output()
        .expect("run warpsight");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let kernels = doc["files"][0]["kernels"].as_array().cloned().unwrap_or_default();
    assert_eq!(kernels.len(), 1, "{doc:#}");
    kernels[0].clone()
}

fn assumptions(k: &Value) -> Vec<String> {
    k["assumptions"].as_array().into_iter().flatten().filter_map(|a| a.as_str().map(str::to_string)).collect()
}

const TILED: &str = r#"#include <cstdlib>
__global__ void matmul(const float *A, const float *B, float *C, int n) {
    int row = blockIdx.y * TW + threadIdx.y, col = blockIdx.x * TW + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}
int main(int argc, char **argv) {
    int Width = atoi(argv[1]);
    int GridSize = (Width + TW - 1) / TW;
    dim3 grid(GridSize, GridSize);
    dim3 block(TW, TW);
    matmul<<<grid, block>>>(0, 0, 0, Width);
    return 0;
}
"#;

#[test]
fn command_line_defines_fold_and_a_used_argument_is_not_ignored() {
    let Some(nvcc) = nvcc() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("tiled.cu");
    std::fs::write(&file, TILED).expect("write");
    let k = analyze(&nvcc, &file, &["-D", "TW=16", "--arg", "Width=1024"]);
    assert_eq!(k["launch"]["grid"], serde_json::json!([64, 64, 1]), "{k:#}");
    assert_eq!(k["launch"]["block"], serde_json::json!([16, 16, 1]));
    assert_eq!(k["launch"]["source"], "call-site");
    assert_eq!(k["launch"]["args"]["n"], 1024);
    let ignored: Vec<String> = assumptions(&k).into_iter().filter(|a| a.contains("ignored")).collect();
    assert!(ignored.is_empty(), "{ignored:?}");
}

#[test]
fn argument_names_come_from_a_kernel_declared_in_an_included_header() {
    let Some(nvcc) = nvcc() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("inc")).expect("mkdir");
    std::fs::write(
        dir.path().join("inc/mv.h"),
        "#pragma once\n#define MV_BLOCK 128\n__global__ void mv(float *y, const float *a, const float *x, int m, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= m) return;\n    float s = 0.0f;\n    for (int j = 0; j < n; ++j) s += a[i * n + j] * x[j];\n    y[i] = s;\n}\n",
    )
    .expect("write");
    let file = dir.path().join("mv.cu");
    std::fs::write(&file, "#include \"inc/mv.h\"\nint main(int argc, char **argv) {\n    int rows = atoi(argv[1]);\n    mv<<<(rows + MV_BLOCK - 1) / MV_BLOCK, MV_BLOCK>>>(0, 0, 0, rows, 2048);\n}\n").expect("write");
    let k = analyze(&nvcc, &file, &["--arg", "m=8192"]);
    assert_eq!(k["launch"]["block"], serde_json::json!([128, 1, 1]), "{k:#}");
    assert_eq!(k["launch"]["args"]["m"], 8192);
    assert_eq!(k["launch"]["args"]["n"], 2048);
    let loops = k["loops"].as_array().cloned().unwrap_or_default();
    assert!(!loops.is_empty() && loops.iter().all(|l| !l["trip_count"].is_null()), "{loops:#?}");
    let ignored: Vec<String> = assumptions(&k).into_iter().filter(|a| a.contains("ignored")).collect();
    assert!(ignored.is_empty(), "{ignored:?}");
}

#[test]
fn an_unfolded_launch_says_what_stopped_it() {
    let Some(nvcc) = nvcc() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("scale.cu");
    std::fs::write(&file, "#include <cstdlib>\n__global__ void scale(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }\nint main(int argc, char **argv) {\n    int n = atoi(argv[1]);\n    scale<<<(n + 255) / 256, 256>>>(0, n);\n}\n").expect("write");
    let k = analyze(&nvcc, &file, &[]);
    let notes = assumptions(&k);
    assert!(notes.iter().any(|a| a.contains("line 5") && a.contains("`argv[1]`") && a.contains("--arg argv[1]=VALUE")), "{notes:#?}");
    // Given by position on the command line, the launch folds.
    let k = analyze(&nvcc, &file, &["--arg", "argv[1]=1048576"]);
    assert_eq!(k["launch"]["grid"], serde_json::json!([4096, 1, 1]), "{k:#}");
    assert_eq!(k["launch"]["args"]["n"], 1048576);
    assert!(!assumptions(&k).iter().any(|a| a.contains("ignored")), "{:?}", assumptions(&k));
}
