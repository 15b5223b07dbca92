//! Inputs that are not regular files (issue 12 item 5): a FIFO named `x.ptx` (with and
//! without a writer), `/dev/zero` behind a symlink `z.ptx`, and a file over the size limit.
//! Each must end fast with one line naming the file and what it is, and exit code 2
//! (docs/cli.md "Exit codes"). Before the fix a FIFO blocked `open()` for ever, and
//! `/dev/zero` was read until memory ran out; every run here has a short deadline.
#![cfg(unix)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far more than any of these runs needs (they take milliseconds), far less than the hang.
const DEADLINE: Duration = Duration::from_secs(20);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A private scratch directory for one test (an unpredictable name, removed when dropped).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("warpsight-special-{name}-")).tempdir().expect("scratch dir")
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

/// Keeps a FIFO open for writing and writes to it without end, as the endless writer of
/// the issue did. Opening read-write does not wait for a reader (fifo(7)); the thread is
/// left blocked in `write` when nobody reads, and ends with the test process.
fn endless_writer(fifo: &Path) {
    let f = std::fs::OpenOptions::new().read(true).write(true).open(fifo).expect("open FIFO");
    std::thread::spawn(move || {
        let mut f = f;
        let chunk = vec![b'x'; 1 << 16];
        while f.write_all(&chunk).is_ok() {}
    });
}

/// Runs the CLI with a deadline: (exit code, stdout, stderr). Kills it and fails the test
/// when the deadline passes.
fn run(args: &[&str]) -> (i32, String, String) {
    let cache = scratch("cache");
    let mut child = Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(root())
        .args(args)
        .env("XDG_CACHE_HOME", cache.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run warpsight");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`warpsight {}` did not finish within {DEADLINE:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = String::from_utf8_lossy(&out_t.join().expect("stdout reader")).into_owned();
    let stderr = String::from_utf8_lossy(&err_t.join().expect("stderr reader")).into_owned();
    (status.code().unwrap_or(-1), stdout, stderr)
}

/// One refused input: exit 2, nothing on stdout, one line on stderr with `what`.
fn assert_refused(path: &Path, what: &str) {
    let (code, stdout, stderr) = run(&["analyze", path.to_str().expect("utf-8 path")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&path.display().to_string()) && stderr.contains(what), "{stderr}");
}

#[test]
fn a_fifo_without_a_writer_is_refused_at_once() {
    let dir_tmp = scratch("fifo");
    let dir = dir_tmp.path();
    let fifo = dir.join("x.ptx");
    mkfifo(&fifo);
    assert_refused(&fifo, "not a regular file (a FIFO)");
}

#[test]
fn a_fifo_with_an_endless_writer_is_refused_at_once() {
    let dir_tmp = scratch("fifo-writer");
    let dir = dir_tmp.path();
    let fifo = dir.join("x.ptx");
    mkfifo(&fifo);
    endless_writer(&fifo);
    assert_refused(&fifo, "not a regular file (a FIFO)");
}

#[test]
fn dev_zero_behind_a_symlink_is_refused() {
    let dir_tmp = scratch("zero");
    let dir = dir_tmp.path();
    let z = dir.join("z.ptx");
    std::os::unix::fs::symlink("/dev/zero", &z).expect("symlink");
    assert_refused(&z, "not a regular file (a character device)");
}

#[test]
fn a_fifo_named_cu_and_profile_and_predict_inputs_are_refused() {
    let dir_tmp = scratch("fifo-cu");
    let dir = dir_tmp.path();
    let cu = dir.join("k.cu");
    mkfifo(&cu);
    assert_refused(&cu, "not a regular file (a FIFO)");
    let (code, _, stderr) = run(&["profile", cu.to_str().expect("path"), "--kernel", "k"]);
    assert_eq!((code, stderr.lines().count()), (2, 1), "{stderr}");
    let json = dir.join("p.json");
    mkfifo(&json);
    let (code, _, stderr) = run(&["predict", json.to_str().expect("path")]);
    assert_eq!((code, stderr.lines().count()), (2, 1), "{stderr}");
    assert!(stderr.contains("not a regular file (a FIFO)"), "{stderr}");
}

#[test]
fn a_file_over_the_size_limit_is_refused_without_reading_it() {
    let dir_tmp = scratch("big");
    let dir = dir_tmp.path();
    let big = dir.join("big.ptx");
    // Sparse: 513 MiB that take no disk space.
    let f = std::fs::File::create(&big).expect("create");
    f.set_len((512 << 20) + 1).expect("set_len");
    assert_refused(&big, "file is too large (the limit is 512 MiB)");
}

#[test]
fn a_directory_walk_names_each_skipped_entry_and_why() {
    let dir_tmp = scratch("walk");
    let dir = dir_tmp.path();
    std::fs::copy(root().join("tests/fixtures/ptx/sm_80/vadd.ptx"), dir.join("vadd.ptx")).expect("copy");
    mkfifo(&dir.join("x.ptx"));
    std::os::unix::fs::symlink("/dev/zero", dir.join("z.ptx")).expect("symlink");
    std::os::unix::fs::symlink("no-such-target.ptx", dir.join("dangling.cu")).expect("symlink");
    std::fs::create_dir(dir.join("sub")).expect("sub");
    std::os::unix::fs::symlink(dir, dir.join("sub").join("loop.ptx")).expect("symlink");
    // Not a name warpsight analyses: ignored without a word, FIFO or not.
    mkfifo(&dir.join("notes.txt"));
    let (code, stdout, stderr) = run(&["analyze", dir.to_str().expect("path")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.contains("kernel"), "the regular file is still analysed: {stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    let line_of = |name: &str| lines.iter().find(|l| l.contains(name)).unwrap_or_else(|| panic!("no line for {name}: {stderr}"));
    assert!(line_of("x.ptx").contains("not a regular file (a FIFO); skipped"), "{stderr}");
    assert!(line_of("z.ptx").contains("not a regular file (a symbolic link to a character device); skipped"), "{stderr}");
    assert!(line_of("dangling.cu").contains("a dangling symbolic link"), "{stderr}");
    assert!(line_of("loop.ptx").contains("a symbolic link to a directory (not followed)"), "{stderr}");
    assert!(!stderr.contains("notes.txt"), "{stderr}");
}

#[test]
fn a_fifo_as_the_recorded_ptx_beside_a_cu_is_not_read() {
    let dir_tmp = scratch("recorded");
    let dir = dir_tmp.path();
    let cu = dir.join("k.cu");
    std::fs::write(&cu, "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n").expect("write");
    let fifo = dir.join("k.ptx");
    mkfifo(&fifo);
    endless_writer(&fifo);
    let (_, stdout, stderr) = run(&["analyze", cu.to_str().expect("path"), "--no-compile", "--no-cache"]);
    assert!(stdout.contains("recorded PTX not used") && stdout.contains("not a regular file (a FIFO)"), "{stdout}\n{stderr}");
}

/// `validate`'s importers read through the same checks: a FIFO given as a Kernel Tuner cache
/// (which the importer read with `std::fs::read`, blocking for ever without a writer) or as
/// a gpu-benches table ends at once with the FIFO named.
#[test]
fn a_fifo_given_to_the_validate_importers_is_refused_at_once() {
    let dir_tmp = scratch("fifo-validate");
    let dir = dir_tmp.path();
    let cache = dir.join("cache.json.gz");
    mkfifo(&cache);
    let (code, stdout, stderr) =
        run(&["validate", "--kernel-tuner", cache.to_str().expect("path"), "--source", "examples/vadd.cu", "--no-compile"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("cache.json.gz") && stderr.contains("not a regular file (a FIFO)"), "{stderr}");
    let tables = dir.join("benches");
    std::fs::create_dir_all(tables.join("gpu-stream")).expect("mkdir");
    mkfifo(&tables.join("gpu-stream/a100_80.txt"));
    let (code, _, stderr) = run(&["validate", "--gpu-benches", tables.to_str().expect("path"), "--no-compile"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("a100_80.txt") && stderr.contains("not a regular file (a FIFO)"), "{stderr}");
}
