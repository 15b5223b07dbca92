//! The performance findings on the fixture corpus, and their fixes applied to copies of
//! the fixture sources.
//!
//! Two kinds of tests:
//! - findings: `analysis::analyze` on `tests/fixtures/ptx/sm_80/*.ptx` (nvcc 13.5 output of
//!   `tests/fixtures/cu`) with an explicit launch, checking the codes, numbers and source
//!   lines the issue names;
//! - fixes: the fix of a finding turned into text edits on a copy of the `.cu` source,
//!   then compiled with nvcc (`-ptx -arch=sm_80`) and, where that says something, analysed
//!   again (the padded transpose has no conflict left) or run through `ptxas -v` (the
//!   relaxed launch bounds spill less). The compiling tests return early, with a message,
//!   when nvcc is not at `.cuda/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc` under
//!   the repository root, unless `WARPSIGHT_REQUIRE_CUDA` is set (then they fail).
//!
//! Source lines are looked up in the `.cu` files rather than hard-coded: the fixtures are
//! regenerated from their sources.

use std::path::{Path, PathBuf};
use std::process::Command;

use analysis::findings::{self, Finding};
use analysis::fixes::{self, FixKind, LaunchSiteRef};
use analysis::{Context, FileAnalysis, KernelContext, PartialLaunch, Settings};
use kernel_profile::{ResourceSource, Resources};

mod common;
use common::{ptxas_context, read, root};

fn cu_line(name: &str, needle: &str) -> u32 {
    let text = read(&format!("tests/fixtures/cu/{name}.cu"));
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle:?} not in {name}.cu")) as u32 + 1
}

fn settings(grid: [u32; 3], block: [u32; 3]) -> Settings {
    Settings { launch: PartialLaunch { grid: Some(grid), block: Some(block), ..Default::default() }, ..Settings::default() }
}

fn analyze_text(text: &str, grid: [u32; 3], block: [u32; 3], context: &Context) -> FileAnalysis {
    analysis::analyze(text, &settings(grid, block), context)
}

fn analyze_fixture(name: &str, grid: [u32; 3], block: [u32; 3]) -> FileAnalysis {
    analyze_text(&read(&format!("tests/fixtures/ptx/sm_80/{name}.ptx")), grid, block, &Context::default())
}

fn of_code<'a>(a: &'a FileAnalysis, kernel: &str, code: &str) -> Vec<&'a Finding> {
    a.kernels.iter().filter(|k| k.name.contains(kernel)).flat_map(|k| k.findings.iter()).filter(|f| f.code == code).collect()
}

fn spill_context() -> (String, Resources, Context) {
    ptxas_context("spill", "row_block_spill")
}

// ---------------------------------------------------------------------------------------
// Findings on the fixtures.

#[test]
fn naive_transpose_has_a_32_way_bank_conflict_and_the_padded_one_none() {
    let a = analyze_fixture("transpose_naive", [64, 64, 1], [32, 32, 1]);
    let f = of_code(&a, "transpose_naive", "shared-bank-conflict");
    assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
    assert!(f[0].message.starts_with("32-way"), "{}", f[0].message);
    assert_eq!(f[0].source_line, Some(cu_line("transpose_naive", "= tile[threadIdx.x][threadIdx.y]")));
    assert_eq!(f[0].fixes[0].kind, FixKind::PadSharedArray { variable: "tile".into(), from_row: 32, to_row: 33 });
    let a = analyze_fixture("transpose_padded", [64, 64, 1], [32, 32, 1]);
    assert!(of_code(&a, "transpose_padded", "shared-bank-conflict").is_empty(), "{:?}", a.kernels[0].findings);
}

#[test]
fn naive_matmul_has_an_uncoalesced_load_at_its_source_line() {
    let a = analyze_fixture("matmul_naive", [64, 64, 1], [16, 16, 1]);
    let f = of_code(&a, "matmul_naive", "uncoalesced-global-access");
    let line = cu_line("matmul_naive", "Pvalue += Md");
    let load = f.iter().find(|f| f.source_line == Some(line)).unwrap_or_else(|| panic!("no finding at line {line}: {f:?}"));
    assert!(load.message.contains("16 sectors per warp request"), "{}", load.message);
    assert!(load.source_file.as_deref().is_some_and(|s| s.ends_with("matmul_naive.cu")));
    // The span points at a load instruction of the PTX.
    let text = read("tests/fixtures/ptx/sm_80/matmul_naive.ptx");
    assert!(text[load.ptx_span.start as usize..load.ptx_span.end as usize].starts_with("ld.global"), "{:?}", load.ptx_span);
}

#[test]
fn spill_kernel_reports_register_spills_from_ptxas_resources() {
    let (name, res, context) = spill_context();
    assert!(res.spill_store_bytes > 0);
    let a = analyze_text(&read("tests/fixtures/ptx/sm_80/spill.ptx"), [512, 1, 1], [128, 1, 1], &context);
    let f = of_code(&a, &name, "register-spills");
    assert_eq!(f.len(), 1);
    assert!(f[0].message.contains(&format!("{} bytes of spill stores", res.spill_store_bytes)), "{}", f[0].message);
    assert!(matches!(f[0].fixes[0].kind, FixKind::LaunchBounds { min_blocks, .. } if min_blocks.is_none_or(|b| b < 8)));
}

#[test]
fn ptxas_spills_are_reported_with_a_launch_bounds_fix() {
    let (name, res, context) = spill_context();
    assert!(res.spill_store_bytes > 0, "{res:?}");
    let text = read("tests/fixtures/ptx/sm_80/spill.ptx");
    let settings = Settings { launch: PartialLaunch { grid: Some([512, 1, 1]), block: Some([256, 1, 1]), ..Default::default() }, ..Settings::default() };
    let a = analysis::analyze(&text, &settings, &context);
    let k = a.kernels.iter().find(|k| k.name == name).expect("kernel");
    let f: Vec<_> = k.findings.iter().filter(|f| f.code == "register-spills").collect();
    assert_eq!(f.len(), 1, "{:?}", k.findings);
    assert!(f[0].message.contains(&format!("ptxas reports {} bytes of spill stores", res.spill_store_bytes)), "{}", f[0].message);
    // __launch_bounds__(T, 8) caps the registers; the fix keeps T and lowers the 8.
    let (module, _) = ptx_ir::parse_and_lower(&text);
    let perf = &module.function(&name).expect("kernel").perf;
    let t: u32 = perf.maxntid.expect("maxntid").iter().product();
    assert_eq!(perf.minnctapersm, Some(8));
    match &f[0].fixes[..] {
        [analysis::fixes::Fix { kind: FixKind::LaunchBounds { max_threads, min_blocks }, .. }] => {
            assert_eq!(*max_threads, t);
            assert!(min_blocks.is_none_or(|b| b < 8), "{min_blocks:?}");
        }
        other => panic!("{other:?}"),
    }
    // The other kernel of the file has no spills.
    let other = a.kernels.iter().find(|k| k.name != name).expect("local_histogram");
    assert!(other.findings.iter().all(|f| f.code != "register-spills"), "{:?}", other.findings);
}

#[test]
fn tree_reduction_has_a_divergent_branch_in_its_loop() {
    let a = analyze_fixture("reduce_tree", [256, 1, 1], [256, 1, 1]);
    let f = of_code(&a, "reduce_tree", "divergent-branch-in-loop");
    assert_eq!(f.iter().map(|f| f.source_line).collect::<Vec<_>>(), vec![Some(cu_line("reduce_tree", "if (tid < s)"))]);
}

#[test]
fn the_divergent_branch_message_gives_the_loop_trip_count() {
    // reduce_tree's halving loop at 256 threads per block: s = 128, 64, ..., 1, 8 trips
    // (log2 256). Found unpinned by mutation testing (the trip count could vanish).
    let a = analyze_fixture("reduce_tree", [256, 1, 1], [256, 1, 1]);
    let f = of_code(&a, "reduce_tree", "divergent-branch-in-loop");
    assert_eq!(f.len(), 1);
    assert!(f[0].message.contains("of a loop that runs 8 times"), "{}", f[0].message);
}

/// `saxpy` or `spill` with the given resources, as the CUDA front end would pass them.
fn with_resources(file: &str, kernel: &str, res: Resources, grid: [u32; 3], block: [u32; 3]) -> FileAnalysis {
    let (name, _, _) = ptxas_context(file, kernel);
    let mut context = Context::default();
    context.kernels.insert(name, KernelContext { resources: Some(res), ..Default::default() });
    analyze_text(&read(&format!("tests/fixtures/ptx/sm_80/{file}.ptx")), grid, block, &context)
}

fn resources(registers: u32, spill_store_bytes: u32, spill_load_bytes: u32) -> Resources {
    Resources {
        registers_per_thread: registers,
        static_smem_bytes: 0,
        local_bytes_per_thread: 0,
        spill_store_bytes,
        spill_load_bytes,
        stack_frame_bytes: 0,
        barriers: 0,
        source: ResourceSource::Ptxas,
    }
}

#[test]
fn a_kernel_that_spills_in_either_direction_gets_no_launch_bounds_fix() {
    // 117 registers × 256 threads on the A100: 2 blocks per SM (register-limited, 25 %).
    // Without spills the fix caps registers with __launch_bounds__; a kernel that already
    // spills (stores or loads, either one) needs more registers, not fewer. Mutation
    // testing found the `||` of that test unpinned.
    let launch_bounds = |a: &FileAnalysis| {
        let f = of_code(a, "row_block_spill", "occupancy-limited-by-registers");
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        f[0].fixes.iter().any(|x| matches!(x.kind, FixKind::LaunchBounds { .. }))
    };
    let at = |store, load| with_resources("spill", "row_block_spill", resources(117, store, load), [4096, 1, 1], [256, 1, 1]);
    assert!(launch_bounds(&at(0, 0)));
    assert!(!launch_bounds(&at(8, 0)));
    assert!(!launch_bounds(&at(0, 8)));
}

#[test]
fn the_shared_memory_limit_is_explained_with_its_numbers() {
    // dyn_smem.cu, 96 threads with 48 KB of dynamic shared memory on the A100: 49152 B +
    // the 1 KB the driver reserves per block (CC 8.0) = 50176 B allocated; 164 KB = 167936 B
    // per SM hold 3 of them (CUDA Programming Guide, compute capability 8.0).
    let text = read("tests/fixtures/ptx/sm_80/dyn_smem.ptx");
    let settings = Settings { launch: PartialLaunch { grid: Some([1024, 1, 1]), block: Some([96, 1, 1]), dynamic_smem: Some(48 * 1024), ..Default::default() }, ..Settings::default() };
    let a = analysis::analyze(&text, &settings, &Context::default());
    let f = of_code(&a, "", "occupancy-limited-by-shared-memory");
    assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
    let want = "49152 B of shared memory per block (0 B static, 49152 B dynamic, 50176 B allocated) leave room for 3 block(s) in 167936 B per SM";
    assert!(f[0].message.contains(want), "{}", f[0].message);
}

#[test]
fn a_limit_shared_with_another_resource_says_so() {
    // saxpy in 32-thread blocks with 64 registers per thread on the A100: the 32-block
    // limit and the register file (64 × 32 = 2048 registers per warp; 16384 per
    // sub-partition / 2048 = 8 warps × 4 = 32 one-warp blocks) bind at the same point,
    // 32 of 64 warp slots (50 %).
    let a = with_resources("saxpy", "saxpy", resources(64, 0, 0), [4096, 1, 1], [32, 1, 1]);
    let f = of_code(&a, "saxpy", "occupancy-limited-by-blocks");
    assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
    assert!(f[0].message.contains("32 block(s) of 1 warps per SM, 32 of 64 warp slots"), "{}", f[0].message);
    assert!(f[0].message.contains("; registers limit at the same point"), "{}", f[0].message);
}

#[test]
fn loads_already_on_the_read_only_path_get_no_restrict_fix() {
    // matmul_naive's Md load is uncoalesced and offered `const __restrict__`; the same
    // kernel with every load already `ld.global.nc` (what the qualifier would give) is
    // still uncoalesced, but there is nothing to gain from the fix (mutation survivor: the
    // `.nc` test of `restrict_fix`).
    let text = read("tests/fixtures/ptx/sm_80/matmul_naive.ptx");
    let fixes_at_md = |text: &str| {
        let a = analyze_text(text, [64, 64, 1], [16, 16, 1], &Context::default());
        let f = of_code(&a, "matmul_naive", "uncoalesced-global-access");
        let load = f.iter().find(|f| f.source_line == Some(cu_line("matmul_naive", "Pvalue += Md"))).expect("the Md load is uncoalesced");
        load.fixes.iter().map(|f| f.kind.clone()).collect::<Vec<_>>()
    };
    assert_eq!(fixes_at_md(&text), vec![FixKind::RestrictConst { param_index: 1 }]);
    assert_eq!(fixes_at_md(&text.replace("ld.global.f32", "ld.global.nc.f32")), Vec::<FixKind>::new());
}

#[test]
fn a_block_size_fix_finds_the_launch_past_a_comparison_in_its_grid() {
    // `>` inside the grid argument at bracket depth 0 is not the end of the launch
    // configuration: only `>>>` is (mutation survivor in `launch_close`).
    let src = "void host(int n, float *p) {\n    scale<<<n > 4096 ? 64 : 32, 128>>>(p, n);\n}\n";
    let fix = FixKind::SetBlockSize { block: [256, 1, 1], reason: String::new() };
    let edited = fixes::apply(src, &fixes::edits(&fix, src, "scale", None));
    assert_eq!(edited, "void host(int n, float *p) {\n    scale<<<n > 4096 ? 64 : 32, 256>>>(p, n);\n}\n");
}

#[test]
fn a_block_variable_of_another_function_is_not_edited() {
    // `block` at the launch is not the `dim3 block` declared inside g(): the fix replaces
    // the launch argument and leaves g() alone (mutation survivor: the same-function test
    // of `edit_dim3_decl`; the existing test had a parameter of the same name in between).
    let src = "void g() { dim3 block(16); }\nvoid f() {\n  k<<<1, block>>>(a);\n}\n";
    let fix = FixKind::SetBlockSize { block: [128, 1, 1], reason: String::new() };
    let edited = fixes::apply(src, &fixes::edits(&fix, src, "k", None));
    assert_eq!(edited, "void g() { dim3 block(16); }\nvoid f() {\n  k<<<1, 128>>>(a);\n}\n");
}

#[test]
fn a_launch_inside_a_string_literal_is_not_edited() {
    // The fix scans code with comments and string literals blanked: the `k<<<...>>>` in
    // the printf text is not a launch (mutation survivor in the literal scanner).
    let src = "void f(float *a) {\n    printf(\"k<<<1, 32>>>\");\n    k<<<1, 32>>>(a);\n}\n";
    let fix = FixKind::SetBlockSize { block: [256, 1, 1], reason: String::new() };
    let edited = fixes::apply(src, &fixes::edits(&fix, src, "k", None));
    assert_eq!(edited, "void f(float *a) {\n    printf(\"k<<<1, 32>>>\");\n    k<<<1, 256>>>(a);\n}\n");
}

#[test]
fn the_relaxed_launch_bounds_say_how_many_registers_fit() {
    // The register-spills fix relaxes `__launch_bounds__(threads, b)`; its title gives the
    // registers per thread the new bound leaves: the A100's 65536-register file over
    // threads × b (mutation survivor: `/` → `*`).
    let (name, _, context) = spill_context();
    let a = analyze_text(&read("tests/fixtures/ptx/sm_80/spill.ptx"), [512, 1, 1], [128, 1, 1], &context);
    let f = of_code(&a, &name, "register-spills");
    let fix = &f[0].fixes[0];
    let FixKind::LaunchBounds { max_threads, min_blocks: Some(b) } = fix.kind else { panic!("{fix:?}") };
    assert!(fix.title.contains(&format!("room for ≈{} registers per thread", 65536 / (max_threads * b))), "{}", fix.title);
}

#[test]
fn the_relaxed_launch_bounds_keep_the_most_blocks_whose_registers_fit() {
    // spill.cu's `__launch_bounds__(128, 8)` on the A100, whose SM has 65536 32-bit
    // registers (CUDA C++ Programming Guide, "Technical Specifications per Compute
    // Capability", CC 8.0). The register-spills fix estimates the need as the registers
    // plus one per 4 spilled bytes and keeps the most blocks of 128 threads that fit,
    // 65536 / (128 × need), below the 8 asked for (mutation survivor: the `/` of that
    // quotient → `*` or `%`).
    let min_blocks = |registers, spill_store_bytes| {
        let a = with_resources("spill", "row_block_spill", resources(registers, spill_store_bytes, 0), [512, 1, 1], [128, 1, 1]);
        let f = of_code(&a, "row_block_spill", "register-spills");
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        match f[0].fixes[..] {
            [analysis::fixes::Fix { kind: FixKind::LaunchBounds { max_threads: 128, min_blocks }, .. }] => min_blocks,
            ref other => panic!("{other:?}"),
        }
    };
    // 64 + 64 / 4 = 80 registers: 65536 / (128 × 80) = 6.4, so 6 blocks.
    assert_eq!(min_blocks(64, 64), Some(6));
    // 64 + 256 / 4 = 128 registers: 65536 / 16384 = 4 blocks.
    assert_eq!(min_blocks(64, 256), Some(4));
    // 64 + 1024 / 4 = 320 registers: 65536 / 40960 = 1.6, so 1 block.
    assert_eq!(min_blocks(64, 1024), Some(1));
    // 200 + 2048 / 4 = 712 registers: 128 × 712 = 91136 > 65536, not one block fits, and
    // the fix drops the minimum.
    assert_eq!(min_blocks(200, 2048), None);
}

#[test]
fn a_tiny_grid_is_too_small() {
    // The second pass of reduce_tree.cu: reduce_tree<<<1, BLOCK_SIZE>>>.
    let a = analyze_fixture("reduce_tree", [1, 1, 1], [256, 1, 1]);
    let f = of_code(&a, "reduce_tree", "grid-too-small");
    assert_eq!(f.len(), 1);
    assert!(f[0].message.contains("1 block(s) for 108 SMs"), "{}", f[0].message);
    assert_eq!(f[0].gpu.as_deref(), Some("a100-sxm4-80gb"));
}

#[test]
fn severities_can_be_changed_or_turned_off() {
    let text = read("tests/fixtures/ptx/sm_80/reduce_tree.ptx");
    let mut s = settings([1, 1, 1], [256, 1, 1]);
    s.severities.insert("grid-too-small".into(), Some(analysis::Severity::Hint));
    s.severities.insert("divergent-branch-in-loop".into(), None);
    let a = analysis::analyze(&text, &s, &Context::default());
    let k = &a.kernels[0];
    assert!(k.findings.iter().all(|f| f.code != "divergent-branch-in-loop"));
    assert_eq!(k.findings.iter().find(|f| f.code == "grid-too-small").map(|f| f.severity), Some(analysis::Severity::Hint));
}

#[test]
fn no_finding_is_reported_twice_for_one_source_line() {
    for name in ["matmul_naive", "transpose_naive", "reduce_tree", "spmv_csr", "stencil2d", "histogram", "conv2d"] {
        let a = analyze_fixture(name, [64, 64, 1], [16, 16, 1]);
        for k in &a.kernels {
            let mut keys: Vec<_> = k.findings.iter().filter(|f| f.source_line.is_some()).map(|f| (f.code, f.source_line)).collect();
            let n = keys.len();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), n, "{name}/{}: {:?}", k.name, k.findings);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Fixes: edits on copies of the sources, compiled with nvcc.

fn nvcc() -> Option<PathBuf> {
    let p = root().join(".cuda/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc");
    if p.exists() {
        return Some(p);
    }
    assert!(std::env::var_os("WARPSIGHT_REQUIRE_CUDA").is_none(), "WARPSIGHT_REQUIRE_CUDA is set but {} does not exist", p.display());
    None
}

/// Compiles `source` (named `name.cu`) to PTX for sm_80 with line information, as the
/// fixtures are made; returns the PTX, or panics with nvcc's messages.
fn compile(nvcc: &Path, name: &str, source: &str) -> String {
    let dir = tempfile::Builder::new().prefix(&format!("warpsight-findings-{name}-")).tempdir().expect("temp dir");
    let cu = dir.path().join(format!("{name}.cu"));
    let ptx = dir.path().join(format!("{name}.ptx"));
    std::fs::write(&cu, source).expect("write");
    let out = Command::new(nvcc).args(["-ptx", "-lineinfo", "-std=c++17", "-arch=sm_80"]).arg(&cu).arg("-o").arg(&ptx).output().expect("run nvcc");
    assert!(out.status.success(), "nvcc failed on the edited {name}.cu:\n{}\n--- source ---\n{source}", String::from_utf8_lossy(&out.stderr));
    std::fs::read_to_string(&ptx).expect("ptx")
}

/// `ptxas -v` registers and spill-store bytes of `kernel` in a PTX text.
fn ptxas_info(nvcc: &Path, ptx: &str, kernel: &str) -> (u32, u32) {
    let ptxas = nvcc.with_file_name("ptxas");
    let dir = tempfile::Builder::new().prefix("warpsight-findings-ptxas-").tempdir().expect("temp dir");
    let f = dir.path().join("k.ptx");
    std::fs::write(&f, ptx).expect("write");
    let out = Command::new(ptxas).args(["-v", "-arch=sm_80", "-o"]).arg(dir.path().join("k.cubin")).arg(&f).output().expect("run ptxas");
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    let number_before = |line: &str, word: &str| -> Option<u32> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let i = words.iter().position(|w| w.starts_with(word))?;
        words.get(i.checked_sub(1)?)?.parse().ok()
    };
    let (mut in_kernel, mut spills, mut regs) = (false, None, None);
    for line in log.lines() {
        if line.contains("Function properties for") || line.contains("Compiling entry function") {
            in_kernel = line.contains(kernel);
        } else if in_kernel && line.contains("bytes spill stores") {
            spills = line.split(',').find(|p| p.contains("spill stores")).and_then(|p| p.split_whitespace().next()?.parse().ok());
        } else if in_kernel && line.contains("Used") && line.contains("registers") {
            regs = number_before(line, "registers");
        }
    }
    match (regs, spills) {
        (Some(r), Some(s)) => (r, s),
        _ => panic!("no resources for {kernel} in:\n{log}"),
    }
}

macro_rules! require_nvcc {
    () => {
        match nvcc() {
            Some(p) => p,
            None => {
                #[allow(clippy::print_stderr)]
                {
                    eprintln!("skipped: nvcc not found under .cuda/ (set WARPSIGHT_REQUIRE_CUDA=1 to make this an error)");
                }
                return;
            }
        }
    };
}

#[test]
fn padding_the_naive_transpose_tile_compiles_and_removes_the_conflict() {
    let nvcc = require_nvcc!();
    let a = analyze_fixture("transpose_naive", [64, 64, 1], [32, 32, 1]);
    let fix = &of_code(&a, "transpose_naive", "shared-bank-conflict")[0].fixes[0];
    let src = read("tests/fixtures/cu/transpose_naive.cu");
    let e = fixes::edits(&fix.kind, &src, "transpose_naive", None);
    assert_eq!(e.len(), 1);
    let edited = fixes::apply(&src, &e);
    assert!(edited.contains("__shared__ float tile[TILE_DIM][TILE_DIM + 1];"), "{edited}");
    let ptx = compile(&nvcc, "transpose_naive", &edited);
    let again = analyze_text(&ptx, [64, 64, 1], [32, 32, 1], &Context::default());
    assert!(of_code(&again, "transpose_naive", "shared-bank-conflict").is_empty(), "{:?}", again.kernels[0].findings);
}

#[test]
fn restrict_const_on_the_naive_matmul_compiles_to_read_only_loads() {
    let nvcc = require_nvcc!();
    let a = analyze_fixture("matmul_naive", [64, 64, 1], [16, 16, 1]);
    let line = cu_line("matmul_naive", "Pvalue += Md");
    let f = of_code(&a, "matmul_naive", "uncoalesced-global-access").into_iter().find(|f| f.source_line == Some(line)).expect("finding");
    let src = read("tests/fixtures/cu/matmul_naive.cu");
    let edited = fixes::apply(&src, &fixes::edits(&f.fixes[0].kind, &src, "matmul_naive", None));
    assert!(edited.contains("const float *__restrict__ Md"), "{edited}");
    let before = read("tests/fixtures/ptx/sm_80/matmul_naive.ptx");
    let ptx = compile(&nvcc, "matmul_naive", &edited);
    assert!(!before.contains("ld.global.nc") && ptx.contains("ld.global.nc"), "the read-only path is used after the fix");
}

#[test]
fn relaxing_the_launch_bounds_of_the_spill_kernel_compiles_and_spills_less() {
    let nvcc = require_nvcc!();
    let (name, res, context) = spill_context();
    let a = analyze_text(&read("tests/fixtures/ptx/sm_80/spill.ptx"), [512, 1, 1], [128, 1, 1], &context);
    let f = of_code(&a, &name, "register-spills");
    let src = read("tests/fixtures/cu/spill.cu");
    let e = fixes::edits(&f[0].fixes[0].kind, &src, "row_block_spill", None);
    assert_eq!(e.len(), 1, "{e:?}");
    let edited = fixes::apply(&src, &e);
    let ptx = compile(&nvcc, "spill", &edited);
    let (_, after) = ptxas_info(&nvcc, &ptx, "row_block_spill");
    assert!(after < res.spill_store_bytes, "spill stores {} -> {after}", res.spill_store_bytes);
}

#[test]
fn capping_the_registers_of_layernorm_compiles_and_raises_occupancy() {
    let nvcc = require_nvcc!();
    // layernorm.cu's annotated launch: 128 threads; ptxas gives 80 registers, so an A100
    // SM holds 6 blocks = 24 of 64 warps (38 %).
    let (name, res, context) = ptxas_context("layernorm", "layernorm");
    let a = analyze_text(&read("tests/fixtures/ptx/sm_80/layernorm.ptx"), [2048, 1, 1], [128, 1, 1], &context);
    let f = of_code(&a, &name, "occupancy-limited-by-registers");
    assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
    assert!(f[0].message.starts_with("occupancy 38 %"), "{}", f[0].message);
    let FixKind::LaunchBounds { min_blocks: Some(b), .. } = f[0].fixes[0].kind else { panic!("{:?}", f[0].fixes) };
    let src = read("tests/fixtures/cu/layernorm.cu");
    let edited = fixes::apply(&src, &fixes::edits(&f[0].fixes[0].kind, &src, "layernorm_warp", None));
    assert!(edited.contains(&format!("__launch_bounds__(WARPS_PER_BLOCK * 32, {b})")), "{edited}");
    let ptx = compile(&nvcc, "layernorm", &edited);
    let (regs, _) = ptxas_info(&nvcc, &ptx, "layernorm");
    assert!(regs < res.registers_per_thread, "registers {} -> {regs}", res.registers_per_thread);
    let g = gpu_spec::Database::builtin().gpu("a100-sxm4-80gb").expect("a100");
    let occ = g.occupancy(128, regs, 0, 0).expect("occupancy");
    assert!(occ.occupancy > 0.5 && occ.blocks_per_sm >= b, "{occ:?}");
}

#[test]
fn block_size_edits_compile_for_dim3_variables_and_literals() {
    let nvcc = require_nvcc!();
    // A dim3 variable in the same function: its declaration is edited.
    let src = read("tests/fixtures/cu/transpose_naive.cu");
    let fix = FixKind::SetBlockSize { block: [32, 8, 1], reason: String::new() };
    let site_line = cu_line("transpose_naive", "transpose_naive<<<");
    let column = read("tests/fixtures/cu/transpose_naive.cu").lines().nth(site_line as usize - 1).and_then(|l| l.find("transpose_naive<<<")).expect("col") as u32 + 1;
    let e = fixes::edits(&fix, &src, "transpose_naive", Some(LaunchSiteRef { line: site_line, column }));
    let edited = fixes::apply(&src, &e);
    assert!(edited.contains("dim3 block(32, 8);") && edited.contains("transpose_naive<<<grid, block>>>"), "{edited}");
    compile(&nvcc, "transpose_naive", &edited);
    // Literal (macro) block arguments: replaced in place, for each launch site chosen.
    let src = read("tests/fixtures/cu/reduce_tree.cu");
    let line = cu_line("reduce_tree", "reduce_tree<<<1,");
    let fix = FixKind::SetBlockSize { block: [512, 1, 1], reason: String::new() };
    let edited = fixes::apply(&src, &fixes::edits(&fix, &src, "reduce_tree", Some(LaunchSiteRef { line, column: 5 })));
    assert!(edited.contains("reduce_tree<<<1, 512>>>"), "{edited}");
    assert!(edited.contains("reduce_tree<<<N_ELEMS / BLOCK_SIZE, BLOCK_SIZE>>>"), "the other launch is unchanged");
    compile(&nvcc, "reduce_tree", &edited);
}

#[test]
fn inserted_annotations_compile_and_parse() {
    let nvcc = require_nvcc!();
    // A default launch (no setting, no annotation in the PTX): the memory-bound finding
    // of a grid-stride scale (a loop over its array: memory-bound at any launch; vadd at
    // the default launch of 1024 blocks is launch-bound) offers to state the launch in an
    // annotation.
    let a = analysis::analyze(&read("tests/fixtures/ptx/sm_80/grid_stride.ptx"), &Settings::default(), &Context::default());
    assert_eq!(a.kernels[0].launch.source, kernel_profile::LaunchSource::Default);
    let fix = a.kernels[0]
        .findings
        .iter()
        .flat_map(|f| f.fixes.iter())
        .find(|x| matches!(x.kind, FixKind::InsertAnnotation { .. }))
        .unwrap_or_else(|| panic!("no annotation fix in {:?}", a.kernels[0].findings))
        .kind
        .clone();
    assert_eq!(fix, FixKind::InsertAnnotation { text: "// warpsight: grid=1024 block=256".into() });
    let src = read("tests/fixtures/cu/reduce_tree.cu");
    let edited = fixes::apply(&src, &fixes::edits(&fix, &src, "reduce_tree", None));
    let line = edited.lines().position(|l| l.starts_with("__global__ void reduce_tree")).expect("kernel");
    assert_eq!(edited.lines().nth(line - 1), Some("// warpsight: grid=1024 block=256"));
    let anns = analysis::launch::annotations(&edited);
    assert!(anns.iter().any(|a| a.launch.grid == Some([1024, 1, 1]) && a.launch.block == Some([256, 1, 1])), "{anns:?}");
    compile(&nvcc, "reduce_tree", &edited);
}

#[test]
fn every_code_is_documented() {
    let doc = read("docs/diagnostics.md");
    for code in findings::CODES {
        assert!(doc.contains(&format!("## `{code}`")), "docs/diagnostics.md lacks a section for {code}");
    }
}

#[test]
fn stated_trip_counts_go_above_the_loop_and_compile() {
    let nvcc = require_nvcc!();
    // The CSR row loop's finding, placed on its `.cu` line (the fix edits the CUDA source
    // where the kernel's file is known; here the PTX alone gives the line).
    let a = analyze_fixture("spmv_csr", [1024, 1, 1], [256, 1, 1]);
    let f = of_code(&a, "spmv_csr_scalar", "unknown-trip-count");
    assert_eq!(f.len(), 1, "{f:?}");
    let fix = FixKind::StateTripCount { source_line: f[0].source_line, ptx_line: f[0].ptx_line, trips: 24 };
    let src = read("tests/fixtures/cu/spmv_csr.cu");
    let edited = fixes::apply(&src, &fixes::edits(&fix, &src, "spmv_csr_scalar", None));
    let line = cu_line("spmv_csr", "for (int jj = row_start; jj < row_end; jj++)") as usize;
    assert_eq!(edited.lines().nth(line - 1), Some("        // warpsight: trips=24"), "{edited}");
    assert_eq!(edited.lines().nth(line), src.lines().nth(line - 1), "the loop follows the comment");
    compile(&nvcc, "spmv_csr", &edited);
}
