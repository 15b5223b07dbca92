//! Security of running compilers (docs/security.md): no command runs from a compile
//! database, nothing is written through a symlink planted in the temporary or the cache
//! folder, subprocess output is bounded and cleaned of control characters, and one time
//! budget covers the whole compile.
//!
//! The injection cases need the real nvcc (it hands options to `sh`); they return early
//! with a note without it, and fail then when `WARPSIGHT_REQUIRE_CUDA` is set. The other
//! cases use small fake compilers (shell scripts) and run everywhere on Unix.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{cuda_root, fake_nvcc, fake_options, nvcc_options, scratch};
use cuda_frontend::{CancelToken, CompilerKind, PtxOrigin, prepare, prepare_text};

const KERNEL: &str = "__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n";

/// A fake nvcc that answers the probes and writes a small PTX to its `-o` argument.
const WRITING_NVCC: &str = r#"#!/bin/sh
case "$1" in
  --version) echo 'Cuda compilation tools, release 99.0, V99.0.1'; exit 0;;
  --list-gpu-arch) echo compute_80; exit 0;;
esac
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out="$2"; shift; fi
  shift
done
printf '.version 9.0\n.target sm_80\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n' > "$out"
"#;

fn markers_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Every character of `s` that is a control character other than `\n` and `\t`.
fn controls(s: &str) -> Vec<char> {
    s.chars()
        .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
        .collect()
}

#[test]
fn compile_database_flags_with_shell_syntax_never_reach_nvcc() {
    let Some(root) = cuda_root("compile_database_injection") else {
        return;
    };
    let dir_tmp = scratch("sec-ccdb");
    let dir = dir_tmp.path();
    let markers = dir.join("markers");
    std::fs::create_dir_all(&markers).unwrap_or_else(|e| panic!("{e}"));
    let m = |n: &str| markers.join(n).display().to_string();
    let src = "#ifndef SAFE\n#error SAFE must come from compile_commands.json\n#endif\n__global__ void k(float* p) { p[threadIdx.x] = SAFE; }\n";
    for f in ["a.cu", "b.cu"] {
        std::fs::write(dir.join(f), format!("{src}// {f}\n")).unwrap_or_else(|e| panic!("{e}"));
    }
    // `a.cu` through `arguments`, `b.cu` through a `command` string with backticks
    // (`${IFS}` keeps the backtick word one shell word).
    let db = serde_json::json!([
        { "directory": dir, "file": "a.cu",
          "arguments": ["nvcc", format!("-DX=$(touch {})", m("define")), format!("-U$(touch {})", m("undef")),
                        "-U", format!("Y$(touch {})", m("undef-separate")), "-DSAFE=7", "-c", "a.cu"] },
        { "directory": dir, "file": "b.cu",
          "command": format!("nvcc -DY=`touch${{IFS}}{}` -DSAFE=7 -c b.cu", m("backtick")) }
    ]);
    std::fs::write(dir.join("compile_commands.json"), db.to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    for f in ["b.cu", "a.cu"] {
        let p = prepare(&dir.join(f), &nvcc_options(&root, &dir.join("cache")));
        assert_eq!(markers_in(&markers), Vec::<String>::new(), "{f}: a flag from compile_commands.json ran a command");
        // The safe define is kept (the file compiles), the others are dropped with a note.
        assert_eq!(p.origin, PtxOrigin::Compiled(CompilerKind::Nvcc), "{f}: {:?}", p.diagnostics);
        assert!(
            p.notes.iter().any(|n| n.contains("shell") && n.contains("touch")),
            "{f}: no note names the dropped flags: {:?}",
            p.notes
        );
    }
}

#[test]
fn defines_with_shell_syntax_from_the_options_never_reach_nvcc() {
    let Some(root) = cuda_root("option_define_injection") else {
        return;
    };
    let dir_tmp = scratch("sec-define");
    let dir = dir_tmp.path();
    let markers = dir.join("markers");
    std::fs::create_dir_all(&markers).unwrap_or_else(|e| panic!("{e}"));
    let cu = dir.join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap_or_else(|e| panic!("{e}"));
    let opts = cuda_frontend::Options {
        defines: vec![
            format!("X=$(touch {})", markers.join("dollar").display()),
            format!("Y=`touch {}`", markers.join("backtick").display()),
            format!("Z=\"$(touch {})\"", markers.join("quoted").display()),
            "N=4096".to_string(),
        ],
        extra_flags: vec![format!("-DW=$(touch {})", markers.join("extra").display())],
        ..nvcc_options(&root, &dir.join("cache"))
    };
    let p = prepare(&cu, &opts);
    assert_eq!(markers_in(&markers), Vec::<String>::new());
    assert_eq!(p.origin, PtxOrigin::Compiled(CompilerKind::Nvcc), "{:?}", p.diagnostics);
    assert!(p.notes.iter().any(|n| n.contains("X=$(touch")), "{:?}", p.notes);
}

/// The old scheme, `$TMPDIR/warpsight-cuda-<pid>-<n>`, reused whatever was there: a
/// symlink planted under that name received the source and the PTX.
#[test]
fn a_symlink_planted_in_the_temporary_folder_receives_nothing() {
    let dir_tmp = scratch("sec-tmp-symlink");
    let dir = dir_tmp.path();
    let attacker = dir.join("attacker");
    std::fs::create_dir_all(&attacker).unwrap_or_else(|e| panic!("{e}"));
    // Plant links for every name the old scheme could pick in this process.
    let planted: Vec<PathBuf> = (0..512)
        .map(|n| std::env::temp_dir().join(format!("warpsight-cuda-{}-{n}", std::process::id())))
        .filter(|p| std::os::unix::fs::symlink(&attacker, p).is_ok())
        .collect();
    let nvcc = fake_nvcc(dir, WRITING_NVCC);
    let cu = dir.join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap_or_else(|e| panic!("{e}"));
    let p = prepare(&cu, &fake_options(&nvcc, &dir.join("cache")));
    let written = markers_in(&attacker);
    for l in &planted {
        let _ = std::fs::remove_file(l);
    }
    assert_eq!(written, Vec::<String>::new(), "files were written through a planted symlink");
    assert_eq!(p.origin, PtxOrigin::Compiled(CompilerKind::Nvcc), "{:?}", p.diagnostics);
}

#[test]
fn a_cache_folder_that_is_a_symlink_is_not_used() {
    let dir_tmp = scratch("sec-cache-symlink");
    let dir = dir_tmp.path();
    let attacker = dir.join("attacker");
    std::fs::create_dir_all(&attacker).unwrap_or_else(|e| panic!("{e}"));
    let nvcc = fake_nvcc(dir, WRITING_NVCC);
    let cu = dir.join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap_or_else(|e| panic!("{e}"));
    // The cache root itself is a link.
    let linked_root = dir.join("cache-link");
    std::os::unix::fs::symlink(&attacker, &linked_root).unwrap_or_else(|e| panic!("{e}"));
    let p = prepare(&cu, &fake_options(&nvcc, &linked_root));
    assert_eq!(p.origin, PtxOrigin::Compiled(CompilerKind::Nvcc), "{:?}", p.diagnostics);
    assert_eq!(markers_in(&attacker), Vec::<String>::new(), "the cache wrote through a symlinked root");
    // The root is a real directory, but its `ptx/` entry folder is a link.
    let real_root = dir.join("cache");
    std::fs::create_dir_all(&real_root).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&attacker, real_root.join("ptx")).unwrap_or_else(|e| panic!("{e}"));
    let p = prepare_text(&cu, Some(&format!("{KERNEL}// 2\n")), &fake_options(&nvcc, &real_root), &CancelToken::new());
    assert_eq!(p.origin, PtxOrigin::Compiled(CompilerKind::Nvcc), "{:?}", p.diagnostics);
    assert_eq!(markers_in(&attacker), Vec::<String>::new(), "the cache wrote through a symlinked ptx/ folder");
}

#[test]
fn a_compiler_that_floods_its_output_is_bounded() {
    let dir_tmp = scratch("sec-flood");
    let dir = dir_tmp.path();
    // 64 MiB of noise on stderr, then a failure: what is kept (and shown) is bounded.
    let nvcc = fake_nvcc(
        dir,
        "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'Cuda compilation tools, release 99.0, V99.0.1'; exit 0;;\n  --list-gpu-arch) echo compute_80; exit 0;;\nesac\nyes 'noise from a compiler that talks too much' | head -c 67108864 >&2\necho 'nvcc fatal   : the last line' >&2\nexit 1\n",
    );
    let cu = dir.join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap_or_else(|e| panic!("{e}"));
    let opts = cuda_frontend::Options {
        timeout: Duration::from_secs(30),
        ..fake_options(&nvcc, &dir.join("cache"))
    };
    let p = prepare(&cu, &opts);
    let shown: usize = p.diagnostics.iter().map(|d| d.message.len()).sum::<usize>()
        + p.notes.iter().map(String::len).sum::<usize>();
    assert!(shown < 2 << 20, "{shown} bytes of compiler output kept");
    assert!(
        p.diagnostics.iter().any(|d| d.message.contains("the last line")),
        "the tail of the output is kept: {:?}",
        p.diagnostics.iter().map(|d| d.message.chars().take(200).collect::<String>()).collect::<Vec<_>>()
    );
    assert!(
        p.notes.iter().chain(p.diagnostics.iter().map(|d| &d.message)).any(|n| n.contains("truncated")),
        "truncation is said"
    );
}

#[test]
fn a_compiler_that_floods_without_end_is_stopped_at_the_timeout() {
    let dir_tmp = scratch("sec-flood-endless");
    let dir = dir_tmp.path();
    let nvcc = fake_nvcc(
        dir,
        "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'Cuda compilation tools, release 99.0, V99.0.1'; exit 0;;\n  --list-gpu-arch) echo compute_80; exit 0;;\nesac\nexec yes 'flooding the pipe with output that never ends'\n",
    );
    let cu = dir.join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap_or_else(|e| panic!("{e}"));
    let opts = cuda_frontend::Options {
        timeout: Duration::from_secs(2),
        ..fake_options(&nvcc, &dir.join("cache"))
    };
    let t = Instant::now();
    let p = prepare(&cu, &opts);
    assert!(t.elapsed() < Duration::from_secs(4), "took {:?}", t.elapsed());
    assert!(
        p.diagnostics.iter().any(|d| d.message.contains("did not finish within 2 s")),
        "{:?}",
        p.diagnostics
    );
}

/// A compiler that hangs on everything, `--version` included: the probes and the compile
/// share one budget, so the timeout is reported after the configured time, not 3x it.
#[test]
fn a_compiler_that_hangs_on_every_call_is_reported_within_the_budget() {
    let dir_tmp = scratch("sec-hang");
    let dir = dir_tmp.path();
    let nvcc = fake_nvcc(dir, "#!/bin/sh\nsleep 60\n");
    let cu = dir.join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap_or_else(|e| panic!("{e}"));
    let opts = cuda_frontend::Options {
        timeout: Duration::from_secs(2),
        ..fake_options(&nvcc, &dir.join("cache"))
    };
    let t = Instant::now();
    let p = prepare(&cu, &opts);
    let took = t.elapsed();
    assert!(took < Duration::from_secs(4), "took {took:?}");
    let msg: Vec<&str> = p.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert!(msg.iter().any(|m| m.contains("did not finish within 2 s")), "{msg:?}");
    assert!(msg.iter().any(|m| m.contains("--compile-timeout") && m.contains("compileTimeoutMs")), "{msg:?}");
}

#[test]
fn control_characters_from_a_compiler_do_not_reach_the_result() {
    let dir_tmp = scratch("sec-esc");
    let dir = dir_tmp.path();
    let nvcc = fake_nvcc(
        dir,
        "#!/bin/sh\ncase \"$1\" in\n  --version) printf 'Cuda compilation tools, release 99.0, V99.0.1\\033]0;owned\\007\\033[2J\\r\\n'; exit 0;;\n  --list-gpu-arch) echo compute_80; exit 0;;\nesac\nprintf 'k.cu(1): error: bad \\033[31mred\\033[0m \\033]8;;http://x\\007link\\n' >&2\nexit 1\n",
    );
    let cu = dir.join("k.cu");
    std::fs::write(&cu, KERNEL).unwrap_or_else(|e| panic!("{e}"));
    let p = prepare(&cu, &fake_options(&nvcc, &dir.join("cache")));
    let version = p.toolchain.as_ref().map(|t| t.version.clone()).unwrap_or_default();
    assert!(version.starts_with("99.0.1"), "{version:?}");
    assert_eq!(controls(&version), Vec::<char>::new(), "{version:?}");
    assert_eq!(controls(&p.toolchain_note), Vec::<char>::new(), "{:?}", p.toolchain_note);
    assert!(!p.diagnostics.is_empty());
    for d in &p.diagnostics {
        assert_eq!(controls(&d.message), Vec::<char>::new(), "{:?}", d.message);
    }
    for n in &p.notes {
        assert_eq!(controls(n), Vec::<char>::new(), "{n:?}");
    }
}
