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

/// An escape-time loop, a loop on an argument the launch does not fold, a `do` loop on
/// data and a loop of a constant count, each with a `// warpsight: trips=` comment; and one
/// that stands before no loop.
const TRIPS: &str = r#"#define MAX_ITER 256
__global__ void loops(float *out, const float *in, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float zr = in[i], zi = 0.0f, acc = 0.0f;
    int it = 0;
    // warpsight: trips=MAX_ITER/4
    while (zr * zr + zi * zi < 4.0f && it < MAX_ITER) {
        float t = zr * zr - zi * zi + 0.25f;
        zi = 2.0f * zr * zi;
        zr = t;
        ++it;
    }
    for (int j = 0; j < m; ++j) acc += in[(i + j) % n]; // warpsight: trips=37.5
    int k = i;
    // warpsight: trips=3
    do {
        acc += in[k];
        k = (int)in[k + 1];
    } while (k > 0);
    // warpsight: trips=5
    for (int c = 0; c < 8; ++c) acc *= 0.5f;
    // warpsight: trips=9
    out[i] = acc + zr + it;
}
int main(int argc, char **argv) { loops<<<1024, 256>>>(0, 0, 1 << 20, argc); }
"#;

#[test]
fn trips_comments_state_the_counts_of_loops_the_analysis_cannot_read() {
    let Some(nvcc) = nvcc() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("trips.cu");
    std::fs::write(&file, TRIPS).expect("write");
    let k = analyze(&nvcc, &file, &[]);
    let loops = k["loops"].as_array().cloned().unwrap_or_default();
    let at = |line: u64| loops.iter().filter(|l| l["source_line"] == line).cloned().collect::<Vec<Value>>();
    // The escape-time loop runs what the comment on line 6 says, folded with the macro.
    let w = at(7);
    assert!(!w.is_empty() && w.iter().all(|l| l["stated_at"] == 6 && l["trip_count"] == 64.0), "{loops:#?}");
    // The launch passes `argc` as `m`, which does not fold: the comment on the loop's own
    // line gives 37.5, rounded to 38 iterations that nvcc's unroll by 4 splits into 9
    // passes of its unrolled loop and 2 of its remainder loop.
    let mut f: Vec<f64> = at(13).iter().inspect(|l| assert_eq!(l["stated_at"], 13, "{l:#}")).filter_map(|l| l["trip_count"].as_f64()).collect();
    f.sort_by(f64::total_cmp);
    assert_eq!(f, [2.0, 9.0], "{loops:#?}");
    let notes = assumptions(&k);
    // The `do` loop's test sits on its `while` line, inside the lines the comment names.
    let d = at(19);
    assert!(d.iter().any(|l| l["stated_at"] == 15 && l["trip_count"] == 3.0), "{loops:#?}\n{notes:#?}");
    // A loop of a constant count that nvcc unrolled whole: the comment names no loop of
    // the PTX, and says so.
    assert!(loops.iter().all(|l| l["stated_at"] != 20), "{loops:#?}");
    assert!(notes.iter().any(|a| a.contains("annotation at line 20 states 5 trips for a loop the PTX does not have")), "{notes:#?}");
    // A comment before no loop is said, not applied.
    assert!(notes.iter().any(|a| a.contains("annotation at line 22 is not read") && a.contains("not a `for`, `while` or `do` loop")), "{notes:#?}");
    // Given `m`, the count is read and the comment is said to be unused.
    let k = analyze(&nvcc, &file, &["--arg", "m=0"]);
    assert!(assumptions(&k).iter().any(|a| a.contains("annotation at line 13 states 37.5 trips, not used")), "{:#?}", assumptions(&k));
    // Without the comments the escape-time loop runs the default.
    let plain = dir.path().join("plain.cu");
    std::fs::write(&plain, TRIPS.replace("// warpsight: trips=MAX_ITER/4", "")).expect("write");
    let k = analyze(&nvcc, &plain, &[]);
    let loops = k["loops"].as_array().cloned().unwrap_or_default();
    assert!(loops.iter().filter(|l| l["source_line"] == 7).all(|l| l["stated_at"].is_null() && l["trip_count"].is_null()), "{loops:#?}");
}
