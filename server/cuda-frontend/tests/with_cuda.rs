//! End-to-end tests with the real CUDA 13.5 toolchain (nvcc, ptxas, NVRTC) from
//! `<repo>/.cuda`. Each returns early with a note when the toolchain is absent, and fails
//! in that case when `WARPSIGHT_REQUIRE_CUDA` is set.

mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use common::{cuda_root, nvcc_options, nvrtc_options, repo_root, scratch};
use cuda_frontend::{CompilerKind, Options, PtxOrigin, Severity, prepare, prepare_text};

fn fixture_files() -> Vec<PathBuf> {
    let dir = repo_root().join("tests/fixtures/cu");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|r| {
            r.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "cu"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The architecture a fixture asks for (`// fixture-archs: sm_90a ...`), else sm_80.
fn fixture_arch(path: &Path) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.split("fixture-archs:")
                    .nth(1)
                    .and_then(|a| a.split_whitespace().next().map(str::to_string))
            })
        })
        .unwrap_or_else(|| "sm_80".to_string())
}

#[test]
fn fixtures_compile_and_every_kernel_maps_to_its_source() {
    let Some(root) = cuda_root("fixtures_compile") else {
        return;
    };
    let cache = scratch("fixtures");
    let files = fixture_files();
    assert!(
        files.len() >= 10,
        "expected the fixture corpus under tests/fixtures/cu, found {}",
        files.len()
    );
    for f in &files {
        let opts = Options {
            arch: Some(fixture_arch(f)),
            ..nvcc_options(&root, &cache)
        };
        let p = prepare(f, &opts);
        let name = f.display();
        assert_eq!(
            p.origin,
            PtxOrigin::Compiled(CompilerKind::Nvcc),
            "{name}: {:?}",
            p.diagnostics
        );
        assert!(!p.has_errors(), "{name}: {:?}", p.diagnostics);
        assert!(!p.kernels.is_empty(), "{name}: no kernels");
        for k in &p.kernels {
            let decl = p.kernel_decls.iter().find(|d| d.name == k.base_name);
            assert!(
                decl.is_some(),
                "{name}: PTX kernel {} ({}) has no __global__ in the source",
                k.ptx_name,
                k.base_name
            );
            assert_eq!(k.line, decl.map(|d| d.line), "{name}: {}", k.ptx_name);
            assert!(
                k.file.as_deref().is_some_and(|p| p.ends_with(
                    &*f.file_name()
                        .map(|n| n.to_string_lossy())
                        .unwrap_or_default()
                )),
                "{name}: .loc file {:?}",
                k.file
            );
            assert!(
                p.resources_of(&k.ptx_name).is_some_and(|r| r.registers > 0),
                "{name}: no ptxas resources for {}",
                k.ptx_name
            );
        }
    }
}

#[test]
fn launch_pattern_file_compiles_and_maps() {
    let Some(root) = cuda_root("launch_patterns") else {
        return;
    };
    let cache = scratch("patterns");
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/launch_patterns.cu");
    let p = prepare(&f, &nvcc_options(&root, &cache));
    assert!(!p.has_errors(), "{:?}", p.diagnostics);
    let mut names: Vec<&str> = p.kernels.iter().map(|k| k.base_name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["annotated", "bounded", "dyn", "scale", "tile2d", "typed"]
    );
    let bounded = p
        .kernels
        .iter()
        .find(|k| k.base_name == "bounded")
        .map(|k| k.ptx_name.clone())
        .unwrap_or_default();
    let r = p.resources_of(&bounded).cloned().unwrap_or_default();
    assert_eq!((r.shared_bytes, r.barriers), (1024, 1), "{r:?}");
    assert!(p.launch_sites.len() >= 12);
    // The template kernel's demangled name keeps its template argument.
    assert!(
        p.kernels
            .iter()
            .any(|k| k.demangled.starts_with("void typed<float>(")),
        "{:?}",
        p.kernels
    );
}

const BAD: &str = "__global__ void k(float* x) {\n  int i = threadIdx.x\n  x[i] = y;\n}\n";

#[test]
fn syntax_error_gives_diagnostics_on_the_right_lines_nvcc_and_nvrtc() {
    let Some(root) = cuda_root("syntax_error") else {
        return;
    };
    let dir = scratch("syntax");
    let f = dir.join("bad.cu");
    std::fs::write(&f, BAD).unwrap_or_else(|e| panic!("{e}"));
    for opts in [
        nvcc_options(&root, &dir.join("cache")),
        nvrtc_options(&root, &dir.join("cache")),
    ] {
        let p = prepare(&f, &opts);
        assert!(matches!(p.origin, PtxOrigin::Failed(_)), "{:?}", p.origin);
        assert!(p.ptx.is_empty());
        let errors: Vec<(Option<u32>, Option<u32>)> = p
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| (d.line, d.column))
            .collect();
        assert_eq!(errors, [(Some(3), Some(3))], "{:?}", p.diagnostics);
        let e = p
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map(|d| d.file.clone());
        assert_eq!(
            e,
            Some(Some(f.display().to_string())),
            "diagnostics name the real file, not a temporary copy"
        );
        assert!(
            p.diagnostics
                .iter()
                .any(|d| d.severity == Severity::Warning && d.line == Some(2))
        );
    }
}

#[test]
fn nvrtc_compiles_a_file_with_host_code() {
    let Some(root) = cuda_root("nvrtc") else {
        return;
    };
    let cache = scratch("nvrtc");
    let f = repo_root().join("tests/fixtures/cu/saxpy.cu");
    let p = prepare(&f, &nvrtc_options(&root, &cache));
    assert_eq!(
        p.origin,
        PtxOrigin::Compiled(CompilerKind::Nvrtc),
        "{:?} {:?}",
        p.diagnostics,
        p.notes
    );
    let mut names: Vec<&str> = p.kernels.iter().map(|k| k.base_name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["daxpy", "saxpy"]);
    assert!(p.kernels.iter().all(|k| k.line.is_some()));
    assert_eq!(p.resources.len(), 2);
    assert!(
        p.toolchain_note.contains("NVRTC 13."),
        "{}",
        p.toolchain_note
    );
}

#[test]
fn cache_hit_is_served_and_faster() {
    let Some(root) = cuda_root("cache_hit") else {
        return;
    };
    let cache = scratch("cachehit");
    let f = repo_root().join("tests/fixtures/cu/vadd.cu");
    let opts = nvcc_options(&root, &cache);
    let t0 = Instant::now();
    let first = prepare(&f, &opts);
    let cold = t0.elapsed();
    let t1 = Instant::now();
    let second = prepare(&f, &opts);
    let warm = t1.elapsed();
    assert_eq!(first.origin, PtxOrigin::Compiled(CompilerKind::Nvcc));
    assert_eq!(second.origin, PtxOrigin::Cache(CompilerKind::Nvcc));
    assert_eq!(first.ptx, second.ptx);
    assert_eq!(first.resources, second.resources);
    assert!(warm < cold, "cache hit {warm:?} vs compile {cold:?}");
    // A different architecture is a different key.
    let third = prepare(
        &f,
        &Options {
            arch: Some("sm_90".into()),
            ..opts.clone()
        },
    );
    assert_eq!(third.origin, PtxOrigin::Compiled(CompilerKind::Nvcc));
    // With no compiler, the same text is found in the cache by its text key.
    let none = prepare(
        &f,
        &Options {
            nvcc: None,
            env: Some(cuda_frontend::DiscoveryEnv::empty()),
            ..opts
        },
    );
    assert_eq!(none.origin, PtxOrigin::RecordedCache);
    assert_eq!(none.ptx, first.ptx);
    assert!(
        none.toolchain_note.starts_with("No CUDA compiler found"),
        "{}",
        none.toolchain_note
    );
}

#[test]
fn older_gpu_compiles_for_the_oldest_supported_arch_with_a_note() {
    let Some(root) = cuda_root("old_arch") else {
        return;
    };
    let cache = scratch("oldarch");
    let f = repo_root().join("tests/fixtures/cu/vadd.cu");
    let p = prepare(
        &f,
        &Options {
            arch: Some("sm_35".into()),
            ..nvcc_options(&root, &cache)
        },
    );
    assert_eq!(p.arch.as_deref(), Some("sm_75"));
    assert!(
        p.notes.iter().any(|n| n.contains("instead of sm_35")),
        "{:?}",
        p.notes
    );
    assert!(p.ptx.contains(".target sm_75"));
}

#[test]
fn unsaved_text_and_compile_commands_defines() {
    let Some(root) = cuda_root("unsaved") else {
        return;
    };
    let dir = scratch("unsaved");
    let f = dir.join("k.cu");
    std::fs::write(&f, "this is not CUDA\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.join("inc")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("inc/width.h"), "#define WIDTH 64\n").unwrap_or_else(|e| panic!("{e}"));
    let db = serde_json::json!([{ "directory": dir, "file": "k.cu", "arguments": ["nvcc", "-Iinc", "-DREQUIRED=1", "-Wall", "-c", "k.cu"] }]);
    std::fs::write(dir.join("compile_commands.json"), db.to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    let text = "#include \"width.h\"\n#ifndef REQUIRED\n#error REQUIRED must come from compile_commands.json\n#endif\n__global__ void k(float* p) { p[threadIdx.x] = WIDTH; }\n";
    let p = prepare_text(
        &f,
        Some(text),
        &nvcc_options(&root, &dir.join("cache")),
        &cuda_frontend::CancelToken::new(),
    );
    assert!(!p.has_errors(), "{:?}", p.diagnostics);
    assert_eq!(p.kernels.len(), 1);
    assert_eq!(p.kernels[0].line, Some(5));
    assert!(
        p.ptx.contains(&format!("\"{}\"", f.display())),
        ".file must name the real path"
    );
    assert!(p.notes.iter().any(|n| n.contains("-Wall")), "{:?}", p.notes);
}

#[test]
fn nvrtc_compiles_every_fixture_through_the_device_only_view() {
    let Some(root) = cuda_root("nvrtc_fixtures") else {
        return;
    };
    let cache = scratch("nvrtc-fixtures");
    let mut failures = Vec::new();
    for f in fixture_files() {
        let opts = Options {
            arch: Some(fixture_arch(&f)),
            ..nvrtc_options(&root, &cache)
        };
        let p = prepare(&f, &opts);
        if p.origin != PtxOrigin::Compiled(CompilerKind::Nvrtc) || p.kernels.is_empty() {
            failures.push(format!(
                "{}: {:?}",
                f.display(),
                p.diagnostics
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .map(|d| (d.line, d.message.clone()))
                    .collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_failed_compile_is_not_cached_and_its_note_names_the_error() {
    let Some(root) = cuda_root("failed_not_cached") else {
        return;
    };
    // A system header that is missing at first: `#include <...>` is not part of the cache
    // key (the compiler's version stands for its headers), so a cached failure would
    // outlive the header's installation (issue 14).
    let dir = scratch("failed-not-cached");
    let inc = dir.join("sysinc");
    std::fs::create_dir_all(&inc).unwrap_or_else(|e| panic!("{e}"));
    let f = dir.join("k.cu");
    std::fs::write(&f, "#include <warpsight_late_header.h>\n__global__ void k(float* p) { p[threadIdx.x] = LATE; }\n")
        .unwrap_or_else(|e| panic!("{e}"));
    for opts in [nvcc_options(&root, &dir.join("cache")), nvrtc_options(&root, &dir.join("cache"))] {
        let opts = Options { include_dirs: vec![inc.clone()], ..opts };
        let _ = std::fs::remove_file(inc.join("warpsight_late_header.h"));
        let failed = prepare(&f, &opts);
        assert!(matches!(failed.origin, PtxOrigin::Failed(_)), "{:?}", failed.origin);
        let note = &failed.toolchain_note;
        let kind = if opts.compiler == cuda_frontend::CompilerChoice::Nvrtc { "NVRTC" } else { "nvcc" };
        assert!(note.starts_with(&format!("No PTX: {kind} failed to compile the file. First error: k.cu:")), "{note}");
        // NVRTC compiles the device-only view, which leaves out `#include <...>` lines
        // whose header is not found: its first error is the undefined macro instead.
        assert!(note.contains("warpsight_late_header.h") || (kind == "NVRTC" && note.contains("LATE")), "{note}");
        assert!(!note.contains("no CUDA compiler"), "{note}");
        std::fs::write(inc.join("warpsight_late_header.h"), "#define LATE 2.0f\n").unwrap_or_else(|e| panic!("{e}"));
        let fixed = prepare(&f, &opts);
        assert!(matches!(fixed.origin, PtxOrigin::Compiled(_)), "{:?} {:?}", fixed.origin, fixed.diagnostics);
        assert_eq!(fixed.kernels.len(), 1);
    }
}
