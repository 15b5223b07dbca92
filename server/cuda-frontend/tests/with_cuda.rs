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
    let cache_tmp = scratch("fixtures");
    let cache = cache_tmp.path();
    let files = fixture_files();
    assert!(
        files.len() >= 10,
        "expected the fixture corpus under tests/fixtures/cu, found {}",
        files.len()
    );
    for f in &files {
        let opts = Options {
            arch: Some(fixture_arch(f)),
            ..nvcc_options(&root, cache)
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
    let cache_tmp = scratch("patterns");
    let cache = cache_tmp.path();
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/launch_patterns.cu");
    let p = prepare(&f, &nvcc_options(&root, cache));
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
    let dir_tmp = scratch("syntax");
    let dir = dir_tmp.path();
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
    let cache_tmp = scratch("nvrtc");
    let cache = cache_tmp.path();
    let f = repo_root().join("tests/fixtures/cu/saxpy.cu");
    let p = prepare(&f, &nvrtc_options(&root, cache));
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
    // `.file` names the user's file (NVRTC writes the working directory's `source.cu`).
    assert!(p.ptx.contains(&format!("\"{}\"", f.display())), "{}", p.ptx.lines().filter(|l| l.contains(".file")).collect::<Vec<_>>().join("\n"));
    assert!(p.kernels.iter().all(|k| k.file.as_deref().is_some_and(|x| x.ends_with("saxpy.cu"))), "{:?}", p.kernels);
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
    let cache_tmp = scratch("cachehit");
    let cache = cache_tmp.path();
    let f = repo_root().join("tests/fixtures/cu/vadd.cu");
    let opts = nvcc_options(&root, cache);
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
    let cache_tmp = scratch("oldarch");
    let cache = cache_tmp.path();
    let f = repo_root().join("tests/fixtures/cu/vadd.cu");
    let p = prepare(
        &f,
        &Options {
            arch: Some("sm_35".into()),
            ..nvcc_options(&root, cache)
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
    let dir_tmp = scratch("unsaved");
    let dir = dir_tmp.path();
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
    let cache_tmp = scratch("nvrtc-fixtures");
    let cache = cache_tmp.path();
    let mut failures = Vec::new();
    for f in fixture_files() {
        let opts = Options {
            arch: Some(fixture_arch(&f)),
            ..nvrtc_options(&root, cache)
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
    let dir_tmp = scratch("failed-not-cached");
    let dir = dir_tmp.path();
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

/// Headers real programs include, each with a kernel (and host code) that uses it, the
/// PyPI package that brings it, and whether NVRTC (device code only) compiles it too.
/// docs/cuda.md, "Headers", lists them and those PyPI does not carry.
const HEADERS: &[(&str, &str, &str, bool)] = &[
    ("cuda_profiler_api.h", "nvidia-cuda-profiler-api", "__global__ void k(float* p) { p[threadIdx.x] += 1.0f; }\nint main() { cudaProfilerStart(); k<<<1, 32>>>(nullptr); cudaProfilerStop(); }\n", false),
    ("nvtx3/nvToolsExt.h", "nvidia-nvtx", "__global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }\nint main() { nvtxRangePushA(\"k\"); k<<<1, 32>>>(nullptr); nvtxRangePop(); }\n", false),
    ("curand_kernel.h", "nvidia-curand", "__global__ void k(float* out, unsigned long long seed) { curandState s; curand_init(seed, threadIdx.x, 0, &s); out[threadIdx.x] = curand_uniform(&s); }\n", true),
    ("cublas_v2.h", "nvidia-cublas (setup-cuda --with-cublas)", "__global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }\nint main() { cublasHandle_t h; cublasCreate(&h); k<<<1, 32>>>(nullptr); cublasDestroy(h); }\n", false),
    ("cooperative_groups.h", "nvidia-cuda-runtime", "namespace cg = cooperative_groups;\n__global__ void k(float* p) { cg::thread_block b = cg::this_thread_block(); auto w = cg::tiled_partition<32>(b); float v = p[b.thread_rank()]; v += w.shfl_down(v, 1); b.sync(); p[b.thread_rank()] = v; }\n", true),
    ("cuda_fp16.h", "nvidia-cuda-runtime", "__global__ void k(const __half* a, float* out) { out[threadIdx.x] = __half2float(__hadd(a[threadIdx.x], a[threadIdx.x + 1])); }\n", true),
    ("cuda_bf16.h", "nvidia-cuda-runtime", "__global__ void k(const __nv_bfloat16* a, float* out) { out[threadIdx.x] = __bfloat162float(__hmul(a[threadIdx.x], a[threadIdx.x])); }\n", true),
    ("mma.h", "nvidia-cuda-runtime", "using namespace nvcuda;\n__global__ void k(const half* a, const half* b, float* c) { wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa; wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb; wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc; wmma::fill_fragment(fc, 0.0f); wmma::load_matrix_sync(fa, a, 16); wmma::load_matrix_sync(fb, b, 16); wmma::mma_sync(fc, fa, fb, fc); wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major); }\n", true),
    ("cuda_pipeline.h", "nvidia-cuda-runtime", "__global__ void k(const float* g, float* out) { __shared__ float s[128]; __pipeline_memcpy_async(&s[threadIdx.x], &g[threadIdx.x], sizeof(float)); __pipeline_commit(); __pipeline_wait_prior(0); __syncthreads(); out[threadIdx.x] = s[127 - threadIdx.x]; }\n", true),
    ("cub/cub.cuh", "nvidia-cuda-cccl", "__global__ void k(const float* in, float* out) { using R = cub::BlockReduce<float, 128>; __shared__ typename R::TempStorage t; float s = R(t).Sum(in[threadIdx.x]); if (threadIdx.x == 0) *out = s; }\n", false),
    // CCCL refuses `<cub/cub.cuh>` under NVRTC ("include the specific device header
    // instead"): the device header alone works with both.
    ("cub/block/block_reduce.cuh", "nvidia-cuda-cccl", "__global__ void k(const float* in, float* out) { using R = cub::BlockReduce<float, 128>; __shared__ typename R::TempStorage t; float s = R(t).Sum(in[threadIdx.x]); if (threadIdx.x == 0) *out = s; }\n", true),
    ("thrust/device_vector.h", "nvidia-cuda-cccl", "#include <thrust/reduce.h>\nint main() { thrust::device_vector<float> v(1024, 1.0f); return thrust::reduce(v.begin(), v.end()) > 0.0f ? 0 : 1; }\n", false),
];

/// The toolchain the header test compiles with: `WARPSIGHT_CUDA_HOME` when set (the
/// environment scripts/test-all.sh exports), else `<repo>/.cuda`.
fn header_toolchain_root() -> Option<PathBuf> {
    match std::env::var_os("WARPSIGHT_CUDA_HOME").map(PathBuf::from) {
        Some(home) if home.join("bin/nvcc").is_file() => Some(home),
        _ => cuda_root("common_headers"),
    }
}

#[test]
fn the_common_headers_compile_with_the_managed_toolchain() {
    let Some(root) = header_toolchain_root() else {
        return;
    };
    let dir_tmp = scratch("headers");
    let dir = dir_tmp.path();
    let mut missing = Vec::new();
    let mut failures = Vec::new();
    for (i, (header, package, body, nvrtc_too)) in HEADERS.iter().enumerate() {
        if !root.join("include").join(header).is_file() && !root.join("include/cccl").join(header).is_file() {
            missing.push(format!("{header} (PyPI {package})"));
            continue;
        }
        let f = dir.join(format!("h{i}.cu"));
        std::fs::write(&f, format!("#include <{header}>\n{body}")).unwrap_or_else(|e| panic!("{e}"));
        let mut runs = vec![("nvcc", nvcc_options(&root, &dir.join("cache")))];
        if *nvrtc_too {
            runs.push(("NVRTC", nvrtc_options(&root, &dir.join("cache"))));
        }
        for (compiler, opts) in runs {
            let p = prepare(&f, &opts);
            if !matches!(p.origin, PtxOrigin::Compiled(_)) || p.kernels.is_empty() {
                failures.push(format!("{header} with {compiler}: {}", p.toolchain_note));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} lacks {}: install scripts/cuda-requirements.txt into it (scripts/test-all.sh does)",
        root.display(),
        missing.join(", ")
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn an_incremental_nvrtc_compile_matches_a_full_one() {
    let Some(root) = cuda_root("incremental") else {
        return;
    };
    let dir_tmp = scratch("incremental");
    let dir = dir_tmp.path();
    let text = std::fs::read_to_string(repo_root().join("server/cuda-frontend/testdata/bench_300.cu")).unwrap_or_else(|e| panic!("{e}"));
    let inc = dir.join("inc/bench.cu");
    let opts = nvrtc_options(&root, &dir.join("cache"));
    let cancel = cuda_frontend::CancelToken::new();
    let first = prepare_text(&inc, Some(&text), &opts, &cancel);
    assert_eq!(first.origin, PtxOrigin::Compiled(CompilerKind::Nvrtc), "{:?}", first.diagnostics);
    assert_eq!(first.kernels.len(), 21);
    // Edits inside one kernel, then inside another, then the first undone: each compiled
    // kernel by kernel, and each equal to a full compile of the same text.
    let edits = [
        text.replacen("out[i] = a[i] - b[i];", "out[i] = a[i] - 2.0f * b[i];", 1),
        text.replacen("out[i] = a[i] - b[i];", "out[i] = a[i] - 2.0f * b[i];", 1).replacen("out[i] = a[i] * b[i];", "out[i] = a[i] * b[i] * c[i];", 1),
        text.replacen("out[i] = a[i] * b[i];", "out[i] = a[i] * b[i] * c[i];", 1),
    ];
    for (n, edited) in edits.iter().enumerate() {
        let p = prepare_text(&inc, Some(edited), &opts, &cancel);
        assert_eq!(p.origin, PtxOrigin::Compiled(CompilerKind::Nvrtc), "edit {n}: {:?}", p.diagnostics);
        assert!(p.notes.iter().any(|x| x.starts_with("NVRTC compiled ") && x.contains(" of 21 kernels again")), "edit {n}: {:?}", p.notes);
        // A file of another path has no last compile: compiled whole.
        let full = dir.join(format!("full{n}/bench.cu"));
        let whole = prepare_text(&full, Some(edited), &Options { use_cache: false, ..opts.clone() }, &cancel);
        assert!(!whole.notes.iter().any(|x| x.starts_with("NVRTC compiled ")), "{:?}", whole.notes);
        // The same PTX but for what differs with the position of a function in its module:
        // NVVM numbers labels by function (`$L__BB3_2`; labels are scoped to their
        // function, PTX ISA 9.x, "Statements") and writes `// .globl` comments and blank
        // lines.
        let norm = |s: &str| {
            let s = s.replace(&full.display().to_string(), &inc.display().to_string());
            let mut out = String::new();
            for line in s.lines().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("// .globl")) {
                let mut rest = line;
                while let Some(at) = rest.find("$L__BB") {
                    out.push_str(&rest[..at + 6]);
                    rest = rest[at + 6..].trim_start_matches(|c: char| c.is_ascii_digit());
                }
                out.push_str(rest);
                out.push('\n');
            }
            out
        };
        let (a, b) = (norm(&p.ptx), norm(&whole.ptx));
        if a != b {
            let first = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
            let show = |t: &str| t.lines().skip(first.saturating_sub(3)).take(8).collect::<Vec<_>>().join("\n");
            panic!("edit {n}: the spliced PTX differs from a full compile at line {first}:\n{}\n--- full ---\n{}", show(&a), show(&b));
        }
        let mut a = p.resources.clone();
        let mut b = whole.resources.clone();
        a.sort_by(|x, y| x.name.cmp(&y.name));
        b.sort_by(|x, y| x.name.cmp(&y.name));
        assert_eq!(a, b, "edit {n}: resources");
        assert_eq!(p.kernels.len(), 21);
    }
    // An edit outside the kernels (a macro) compiles the file whole.
    let outside = text.replacen("#define RADIUS 3", "#define RADIUS 4", 1);
    let p = prepare_text(&inc, Some(&outside), &opts, &cancel);
    assert_eq!(p.origin, PtxOrigin::Compiled(CompilerKind::Nvrtc));
    assert!(!p.notes.iter().any(|x| x.starts_with("NVRTC compiled ")), "{:?}", p.notes);
}
