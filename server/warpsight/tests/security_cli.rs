//! `warpsight analyze` on hostile input (docs/security.md): a file or directory name with
//! shell syntax, a `-D` with shell syntax, a compiler that hangs or prints terminal
//! escapes, and `--compile-timeout`.
//!
//! The injection cases need the project's nvcc (`.cuda/`, installed by
//! scripts/test-all.sh): without it they return early, and fail when
//! `WARPSIGHT_REQUIRE_CUDA` is set. Each runs the CLI in a scratch directory, so a command
//! smuggled in as `$(touch NAME)` would leave `NAME` there.
#![cfg(unix)]
#![allow(clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn nvcc() -> Option<PathBuf> {
    let p = root().join(".cuda/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc");
    if p.exists() {
        return Some(p);
    }
    assert!(std::env::var_os("WARPSIGHT_REQUIRE_CUDA").is_none(), "WARPSIGHT_REQUIRE_CUDA is set but {} is missing", p.display());
    eprintln!("skipped: no CUDA toolchain at <repo>/.cuda");
    None
}

/// A private scratch directory (an unpredictable name, removed when dropped).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("warpsight-sec-cli-{name}-")).tempdir().expect("scratch dir")
}

/// Runs the CLI in `cwd` with a private cache; returns (exit code, stdout, stderr, bytes).
fn run_in(cwd: &Path, args: &[&std::ffi::OsStr]) -> (i32, String, String, Vec<u8>) {
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(cwd)
        .env("XDG_CACHE_HOME", cwd.join(".cache"))
        .env_remove("WARPSIGHT_NVCC")
        .args(args)
        .output()
        .expect("run warpsight");
    let mut bytes = out.stdout.clone();
    bytes.extend_from_slice(&out.stderr);
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned(), bytes)
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).map(|r| r.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
    v.sort();
    v
}

const KERNEL: &str = "#include \"width.h\"\n__global__ void scale(float* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= WIDTH; }\n";

/// The kernels of the one file in a `--format json` report.
fn kernels(stdout: &str) -> Vec<String> {
    let doc: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    doc["files"][0]["kernels"].as_array().map(|ks| ks.iter().filter_map(|k| k["name"].as_str().map(str::to_string)).collect()).unwrap_or_default()
}

#[test]
fn a_file_or_directory_name_with_shell_syntax_runs_nothing() {
    let Some(nvcc) = nvcc() else { return };
    for (case, dir_name, file_name) in [
        ("file-dollar", "inj", "$(touch MARKER-file-dollar).cu"),
        ("file-backtick", "inj", "`touch MARKER-file-backtick`.cu"),
        ("dir-backtick", "d`touch MARKER-dir-backtick`", "k.cu"),
        ("dir-dollar", "d$(touch MARKER-dir-dollar)", "k.cu"),
        ("dir-quote", "d\"q", "k.cu"),
    ] {
        let cwd_tmp = scratch(case);
        let cwd = cwd_tmp.path();
        let dir = cwd.join(dir_name);
        std::fs::create_dir_all(&dir).unwrap();
        // The kernel includes a header beside it: the directory must still be searched.
        std::fs::write(dir.join("width.h"), "#define WIDTH 3\n").unwrap();
        let file = dir.join(file_name);
        std::fs::write(&file, KERNEL).unwrap();
        let (code, stdout, stderr, _) = run_in(cwd, &[os("analyze"), file.as_os_str(), os("--format"), os("json"), os("--nvcc"), nvcc.as_os_str()]);
        let left = entries(cwd);
        assert!(!left.iter().any(|e| e.starts_with("MARKER")), "{case}: a command ran from the path: {left:?}");
        assert_eq!(code, 0, "{case}: {stderr}\n{stdout}");
        assert_eq!(kernels(&stdout), ["_Z5scalePfi"], "{case}: {stdout}");
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        let diags = doc["files"][0]["compiler_diagnostics"].to_string();
        assert!(!diags.contains("source.cu"), "{case}: diagnostics name the private copy: {diags}");
    }
}

#[test]
fn a_define_with_shell_syntax_is_dropped_with_a_note() {
    let Some(nvcc) = nvcc() else { return };
    let cwd_tmp = scratch("define");
    let cwd = cwd_tmp.path();
    std::fs::write(cwd.join("width.h"), "#define WIDTH 3\n").unwrap();
    let file = cwd.join("k.cu");
    std::fs::write(&file, KERNEL).unwrap();
    let (code, stdout, stderr, _) = run_in(
        cwd,
        &[os("analyze"), file.as_os_str(), os("--format"), os("json"), os("--nvcc"), nvcc.as_os_str(), os("-D"), os("X=$(touch MARKER-d1)"), os("-D"), os("Y=`touch MARKER-d2`"), os("-D"), os("OK=1")],
    );
    let left = entries(cwd);
    assert!(!left.iter().any(|e| e.starts_with("MARKER")), "a command ran from -D: {left:?}");
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let notes = doc["files"][0]["notes"].to_string();
    assert!(notes.contains("X=$(touch MARKER-d1)") && notes.contains("shell"), "{notes}");
}

fn write_script(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let p = bin.join("nvcc");
    std::fs::write(&p, body).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn compile_timeout_bounds_a_hanging_compiler_and_the_message_names_the_flag() {
    let cwd_tmp = scratch("timeout");
    let cwd = cwd_tmp.path();
    let nvcc = write_script(cwd, "#!/bin/sh\nsleep 60\n");
    let file = cwd.join("k.cu");
    std::fs::write(&file, KERNEL).unwrap();
    let t = Instant::now();
    let (_, stdout, stderr, _) = run_in(cwd, &[os("analyze"), file.as_os_str(), os("--nvcc"), nvcc.as_os_str(), os("--compile-timeout"), os("2"), os("--no-cache")]);
    let took = t.elapsed();
    assert!(took < Duration::from_secs(4), "took {took:?}: {stderr}");
    assert!(stdout.contains("did not finish within 2 s") && stdout.contains("--compile-timeout"), "{stdout}\n{stderr}");
}

#[test]
fn compile_timeout_is_validated() {
    let cwd_tmp = scratch("timeout-bad");
    let cwd = cwd_tmp.path();
    let file = cwd.join("k.cu");
    std::fs::write(&file, KERNEL).unwrap();
    for bad in ["0", "-1", "nan", "inf", "3601", "soon"] {
        let (code, stdout, stderr, _) = run_in(cwd, &[os("analyze"), file.as_os_str(), os("--compile-timeout"), os(bad)]);
        assert_eq!(code, 2, "--compile-timeout {bad}: {stdout}{stderr}");
        assert!(stderr.contains("--compile-timeout") && stderr.contains("at most 3600"), "{bad}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // A valid value is accepted (on a PTX file, where it does not matter).
    let ptx = root().join("tests/fixtures/ptx/sm_80/transpose_naive.ptx");
    let (code, _, stderr, _) = run_in(cwd, &[os("analyze"), ptx.as_os_str(), os("--compile-timeout"), os("2.5")]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn terminal_escapes_from_a_compiler_do_not_reach_the_terminal() {
    let cwd_tmp = scratch("escapes");
    let cwd = cwd_tmp.path();
    let nvcc = write_script(
        cwd,
        "#!/bin/sh\ncase \"$1\" in\n  --version) printf 'Cuda compilation tools, release 99.0, V99.0.1\\033]0;owned\\007\\033[2J\\n'; exit 0;;\n  --list-gpu-arch) echo compute_80; exit 0;;\nesac\nprintf 'k.cu(1): error: bad \\033[31mred\\033[0m\\n' >&2\nexit 1\n",
    );
    let file = cwd.join("k.cu");
    std::fs::write(&file, KERNEL).unwrap();
    for format in ["table", "json"] {
        let (_, stdout, _, bytes) = run_in(cwd, &[os("analyze"), file.as_os_str(), os("--nvcc"), nvcc.as_os_str(), os("--no-cache"), os("--format"), os(format)]);
        assert!(stdout.contains("99.0.1"), "{stdout}");
        let bad: Vec<u8> = bytes.iter().copied().filter(|b| (*b < 0x20 && *b != b'\n' && *b != b'\t') || *b == 0x7f).collect();
        assert!(bad.is_empty(), "{format}: control bytes {bad:?} in the output:\n{stdout}");
        // JSON escapes them instead: they must not be there either.
        assert!(!stdout.contains("\\u001b") && !stdout.contains("\\u0007"), "{format}: escaped control characters in the output:\n{stdout}");
    }
}
