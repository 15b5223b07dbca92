//! Launch-site extraction tests over `testdata/launch_patterns.cu`, one test per pattern.
//!
//! Each launch in the data file carries a `// case: NAME` comment; the tests find the
//! launch by that marker rather than by a hard-coded line, so the data file can grow.

use std::path::PathBuf;

use super::*;

const SRC: &str = include_str!("../../testdata/launch_patterns.cu");

fn scan() -> SourceScan {
    scan_source(SRC, &[])
}

fn line_of(marker: &str) -> u32 {
    let idx = SRC
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("marker {marker} missing"));
    u32::try_from(idx + 1).unwrap_or(0)
}

/// The source launch that starts closest before (or on) the marker's line.
fn site<'s>(scan: &'s SourceScan, marker: &str) -> &'s LaunchSite {
    let line = line_of(&format!("// case: {marker}"));
    scan.launch_sites
        .iter()
        .filter(|s| s.origin == SiteOrigin::Launch && s.line <= line)
        .max_by_key(|s| s.line)
        .unwrap_or_else(|| panic!("no launch for {marker}"))
}

#[test]
fn literal_configuration() {
    let s = scan();
    let l = site(&s, "literals");
    assert_eq!(l.kernel, "scale");
    assert_eq!(
        (l.grid, l.block, l.dynamic_smem),
        (Some([4096, 1, 1]), Some([256, 1, 1]), Some(0))
    );
    assert_eq!(l.arg("n"), Some(1 << 20));
    assert_eq!(
        l.args.iter().map(|a| a.0.as_str()).collect::<Vec<_>>(),
        ["n", "a", "x"]
    );
    assert_eq!(l.args[2].2, "x");
    assert!(l.unresolved.is_empty(), "{:?}", l.unresolved);
    assert_eq!(l.column, 5);
}

#[test]
fn macro_ceiling_division_idiom() {
    let s = scan();
    let l = site(&s, "macro idiom");
    assert_eq!(l.grid, Some([4096, 1, 1]));
    assert_eq!(l.block, Some([256, 1, 1]));
}

#[test]
fn const_grid_from_function_like_macro_and_constexpr_block() {
    let s = scan();
    let l = site(&s, "const + constexpr");
    assert_eq!(l.grid, Some([(1 << 20) / 128, 1, 1]));
    assert_eq!(l.block, Some([128, 1, 1]));
}

#[test]
fn dim3_variables() {
    let s = scan();
    let l = site(&s, "dim3 variables");
    assert_eq!(l.kernel, "tile2d");
    assert_eq!(l.grid, Some([64, 32, 1]));
    assert_eq!(l.block, Some([16, 16, 1]));
    assert_eq!((l.arg("width"), l.arg("height")), (Some(1024), Some(512)));
}

#[test]
fn inline_dim3_constructors() {
    let s = scan();
    let l = site(&s, "inline dim3");
    assert_eq!(l.grid, Some([128, 4, 1]));
    assert_eq!(l.block, Some([16, 16, 1]));
}

#[test]
fn dynamic_shared_memory_stream_enum_and_namespace() {
    let s = scan();
    let l = site(&s, "smem");
    assert_eq!(l.kernel, "dyn");
    assert_eq!(l.grid, Some([1, 1, 1]));
    assert_eq!(l.block, Some([256, 1, 1]));
    assert_eq!(l.dynamic_smem, Some(8 * 32 * 4));
    assert_eq!(
        l.args,
        vec![
            ("p".to_string(), None, "x".to_string()),
            ("n".to_string(), Some(7), "7".to_string())
        ]
    );
}

#[test]
fn template_kernel_and_min() {
    let s = scan();
    let l = site(&s, "template + min");
    assert_eq!(l.kernel, "typed");
    assert_eq!(l.grid, Some([4096, 1, 1]));
    assert_eq!(l.arg("len"), Some(1 << 20));
}

#[test]
fn reassigned_variable_uses_last_assignment() {
    let s = scan();
    let l = site(&s, "reassigned");
    assert_eq!(l.grid, Some([16, 1, 1]));
    assert_eq!(l.arg("count"), Some(4096));
}

#[test]
fn value_from_argv_is_unresolved_until_the_user_supplies_it() {
    let s = scan();
    let l = site(&s, "from argv");
    assert_eq!(l.grid, None);
    assert_eq!(l.arg("n"), None);
    assert!(
        l.unresolved.contains(&"m".to_string()),
        "{:?}",
        l.unresolved
    );
    let s2 = scan_source(SRC, &[("m".to_string(), 1000)]);
    let l2 = site(&s2, "from argv");
    assert_eq!(l2.grid, Some([4, 1, 1]));
    assert_eq!(l2.arg("n"), Some(1000));
    assert!(l2.unresolved.is_empty(), "{:?}", l2.unresolved);
}

#[test]
fn annotation_on_a_launch_overrides_the_source() {
    let s = scan();
    let l = site(&s, "annotated launch");
    assert_eq!(l.grid, Some([7, 1, 1]));
    assert_eq!(l.block, Some([64, 1, 1]));
    assert_eq!(l.arg("n"), Some(99));
    assert_eq!(
        l.annotation_line,
        Some(line_of("// case: annotated launch") - 1)
    );
    let a = s
        .annotations
        .iter()
        .find(|a| a.line == line_of("// case: annotated launch") - 1);
    assert!(
        matches!(a.map(|a| &a.target), Some(AnnotationTarget::Launch { kernel, .. }) if kernel == "scale")
    );
}

#[test]
fn multi_line_launch_with_comments_and_member_assignments() {
    let s = scan();
    let l = site(&s, "multi-line");
    assert_eq!(l.kernel, "tile2d");
    assert_eq!(l.grid, Some([12, 4, 1]));
    assert_eq!(l.block, Some([16, 16, 1]));
    assert_eq!((l.arg("width"), l.arg("height")), (Some(192), Some(64)));
    assert_eq!(l.args[1].2, "12 * TILE");
}

#[test]
fn kernel_annotation_yields_a_site_and_fills_gaps() {
    let s = scan();
    let def_line = line_of("__global__ void annotated");
    let ann = s
        .launch_sites
        .iter()
        .find(|x| x.origin == SiteOrigin::Annotation)
        .map(|x| (x.kernel.as_str(), x.line, x.grid, x.block, x.arg("n")));
    assert_eq!(
        ann,
        Some((
            "annotated",
            def_line,
            Some([64, 1, 1]),
            Some([32, 1, 1]),
            Some(4096)
        ))
    );
    let l = site(&s, "kernel annotation fills gaps");
    assert_eq!(
        l.grid,
        Some([64, 1, 1]),
        "argc is unknown; the kernel annotation fills it"
    );
    assert_eq!(l.block, Some([32, 1, 1]));
    assert_eq!(l.arg("n"), Some(4096));
}

#[test]
fn host_helper_parameter_resolves_through_its_call_site() {
    let s = scan();
    let line = line_of("void run_scale") + 1;
    let l = s
        .launch_sites
        .iter()
        .find(|x| x.line == line)
        .map(|x| (x.grid, x.arg("n")));
    assert_eq!(l, Some((Some([256, 1, 1]), Some(1 << 16))));
}

#[test]
fn launches_in_comments_and_strings_are_ignored_and_every_site_is_returned() {
    let s = scan();
    let lines: Vec<u32> = s
        .sites_for("scale")
        .filter(|x| x.origin == SiteOrigin::Launch)
        .map(|x| x.line)
        .collect();
    assert_eq!(lines.len(), 6, "{lines:?}");
    assert!(!lines.contains(&line_of("/* scale<<<1, 1>>>")));
}

#[test]
fn kernels_params_and_launch_bounds() {
    let s = scan();
    let names: Vec<&str> = s.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        names,
        ["scale", "bounded", "tile2d", "typed", "dyn", "annotated"]
    );
    let bounded = &s.kernels[1];
    assert_eq!(
        bounded
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.integral))
            .collect::<Vec<_>>(),
        [("in", false), ("out", false), ("count", true)]
    );
    assert_eq!(bounded.params[0].ty, "const float *__restrict__");
    assert!(s.kernels[3].is_template);
    assert_eq!(s.launch_bounds.len(), 1);
    let lb = &s.launch_bounds[0];
    assert_eq!(
        (
            lb.kernel.as_str(),
            lb.max_threads,
            lb.min_blocks,
            lb.max_blocks_per_cluster
        ),
        ("bounded", Some(256), Some(2), None)
    );
    assert_eq!(lb.text, "BLOCK, 2");
}

#[test]
fn annotation_syntax_errors_are_reported() {
    let src = "// warpsight: grid=1,2,3,4 block=oops smem=16 junk\n__global__ void k(int n) {}\n// warpsight: n=5\nint x;";
    let s = scan_source(src, &[]);
    assert_eq!(s.annotations.len(), 2);
    let a = &s.annotations[0];
    assert_eq!(
        (a.launch.grid, a.launch.block, a.launch.dynamic_smem),
        (None, None, Some(16))
    );
    assert_eq!(a.errors.len(), 3, "{:?}", a.errors);
    assert_eq!(s.annotations[1].target, AnnotationTarget::Unattached);
}

#[test]
fn fixture_corpus_launches_resolve() {
    // The saxpy fixture resolves n through `launch_saxpy(n, ...)` called from main.
    let src = "constexpr int kBlockSize = 256;\n__global__ void saxpy(int n, float a, const float *x, float *y) {}\nvoid launch_saxpy(int n, float a, const float *d_x, float *d_y)\n{\n    const int grid = (n + kBlockSize - 1) / kBlockSize;\n    saxpy<<<grid, kBlockSize>>>(n, a, d_x, d_y);\n}\nint main() { const int n = 1 << 21; launch_saxpy(n, 2.0f, 0, 0); }";
    let s = scan_source(src, &[]);
    let l = &s.launch_sites[0];
    assert_eq!(
        (l.grid, l.block, l.arg("n")),
        (Some([8192, 1, 1]), Some([256, 1, 1]), Some(1 << 21))
    );
}

/// The one launch of `kernel` in `src`, scanned with `input`.
fn only_site<'s>(scan: &'s SourceScan, kernel: &'s str) -> &'s LaunchSite {
    let sites: Vec<&LaunchSite> = scan
        .sites_for(kernel)
        .filter(|s| s.origin == SiteOrigin::Launch)
        .collect();
    assert_eq!(sites.len(), 1, "{sites:?}");
    sites[0]
}

const TILED: &str = "__global__ void k(float *m, int w) {}\nint main() {\n  int Width = 1024;\n  int GridSize = (Width + TW - 1) / TW;\n  dim3 grid(GridSize, GridSize);\n  dim3 block(TW, TW);\n  k<<<grid, block>>>(0, Width);\n}\n";

#[test]
fn command_line_defines_reach_the_folding() {
    let without = scan_source(TILED, &[]);
    let l = only_site(&without, "k");
    assert_eq!((l.grid, l.block), (None, None));
    assert!(
        l.unresolved.contains(&"TW".to_string()),
        "{:?}",
        l.unresolved
    );
    let defines = ["TW=16".to_string()];
    let s = scan_source_with(
        TILED,
        &ScanInput {
            defines: &defines,
            ..ScanInput::default()
        },
    );
    let l = only_site(&s, "k");
    assert_eq!((l.grid, l.block), (Some([64, 64, 1]), Some([16, 16, 1])));
    // `-U` cancels it; a bare `-D NAME` is 1.
    let undefines = ["TW".to_string()];
    let s = scan_source_with(
        TILED,
        &ScanInput {
            defines: &defines,
            undefines: &undefines,
            ..ScanInput::default()
        },
    );
    assert_eq!(only_site(&s, "k").block, None);
    let s = scan_source_with(
        TILED,
        &ScanInput {
            defines: &["TW".to_string()],
            ..ScanInput::default()
        },
    );
    assert_eq!(only_site(&s, "k").block, Some([1, 1, 1]));
}

#[test]
fn a_command_line_define_replaces_an_ifndef_default_but_not_a_plain_define() {
    let guarded = format!("#ifndef TW\n#define TW 8\n#endif\n{TILED}");
    assert_eq!(
        only_site(&scan_source(&guarded, &[]), "k").block,
        Some([8, 8, 1])
    );
    let defines = ["TW=32".to_string()];
    let input = ScanInput {
        defines: &defines,
        ..ScanInput::default()
    };
    assert_eq!(
        only_site(&scan_source_with(&guarded, &input), "k").block,
        Some([32, 32, 1])
    );
    let plain = format!("#define TW 8\n{TILED}");
    assert_eq!(
        only_site(&scan_source_with(&plain, &input), "k").block,
        Some([8, 8, 1])
    );
}

#[test]
fn header_defines_constants_and_kernel_parameters() {
    let headers = vec![(
        PathBuf::from("/p/mv.h"),
        "#define TW 16\nconstexpr int kRows = 4096;\n__global__ void mv(float *y, const float *a, const float *x, int m, int n) {}\n".to_string(),
    )];
    let src =
        "#include \"mv.h\"\nint main() { mv<<<(kRows + TW - 1) / TW, TW>>>(0, 0, 0, kRows, 512); }";
    let s = scan_source_with(
        src,
        &ScanInput {
            headers: &headers,
            ..ScanInput::default()
        },
    );
    let l = only_site(&s, "mv");
    assert_eq!((l.grid, l.block), (Some([256, 1, 1]), Some([16, 1, 1])));
    assert_eq!((l.arg("m"), l.arg("n")), (Some(4096), Some(512)));
    let decl = s
        .kernels
        .iter()
        .find(|k| k.name == "mv")
        .map(|k| k.file.as_deref());
    assert_eq!(decl, Some(Some("/p/mv.h")));
}

#[test]
fn straight_line_code_compound_assignments_and_conditions() {
    let src = "__global__ void k(int n) {}\nint main(int argc, char **argv) {\n  int n = 1 << 10;\n  n *= 4;\n  n++;\n  int b = 128;\n  if (n > 100) b = 256;\n  k<<<(n + b - 1) / b, b>>>(n);\n  if (argc > 1) n = atoi(argv[1]);\n  k<<<n / 256, 256>>>(n);\n}\n";
    let s = scan_source(src, &[]);
    let sites: Vec<&LaunchSite> = s.sites_for("k").collect();
    assert_eq!(
        (sites[0].grid, sites[0].block, sites[0].arg("n")),
        (Some([17, 1, 1]), Some([256, 1, 1]), Some(4097))
    );
    assert_eq!(sites[1].grid, None);
    assert_eq!(sites[1].unresolved, ["n"]);
    assert!(
        sites[1]
            .reasons
            .iter()
            .any(|r| r.contains("condition at line 9")),
        "{:?}",
        sites[1].reasons
    );
    assert!(
        sites[1].unresolved_sentence().contains("`n`"),
        "{}",
        sites[1].unresolved_sentence()
    );
}

#[test]
fn argv_values_by_position_or_by_variable_and_they_count_as_used() {
    let src = "__global__ void k(int n) {}\nint main(int argc, char **argv) {\n  int len = std::stoi(argv[2]);\n  long m = strtol(argv[1], NULL, 10);\n  k<<<m / 256, 256>>>(len);\n}\n";
    let s = scan_source(src, &[]);
    let l = only_site(&s, "k");
    assert!(
        l.unresolved.contains(&"argv[1]".to_string()),
        "{:?}",
        l.unresolved
    );
    assert!(
        l.reasons.iter().any(|r| r.contains("--arg argv[1]=VALUE")),
        "{:?}",
        l.reasons
    );
    let user = [("argv[1]".to_string(), 4096), ("len".to_string(), 77)];
    let s = scan_source(src, &user);
    let l = only_site(&s, "k");
    assert_eq!((l.grid, l.arg("n")), (Some([16, 1, 1]), Some(77)));
    assert_eq!(s.used_args, ["argv[1]", "len"]);
}

#[test]
fn helpers_defined_in_the_file_and_template_arguments() {
    let src = "template <int B> __global__ void red(const float *x, int n) {}\nstatic inline int divUp(int a, int b) { return (a % b != 0) ? (a / b + 1) : (a / b); }\ntemplate <typename T> constexpr T lo(T a, T b) { return a < b ? a : b; }\nint main() {\n  const int n = 1000;\n  red<256><<<divUp(n, 256), lo<int>(256, 1024)>>>(0, n);\n  red<64><<<std::max(1, n / 64), 64>>>(0, n);\n}\n";
    let s = scan_source(src, &[]);
    let sites: Vec<&LaunchSite> = s.sites_for("red").collect();
    assert_eq!(
        (
            sites[0].grid,
            sites[0].block,
            sites[0].template_args.clone()
        ),
        (Some([4, 1, 1]), Some([256, 1, 1]), vec!["256".to_string()])
    );
    assert_eq!(
        (sites[1].grid, sites[1].template_args.clone()),
        (Some([15, 1, 1]), vec!["64".to_string()])
    );
}

#[test]
fn launches_in_loops_fold_for_the_first_iteration() {
    let src = "__global__ void k(float *p, int n, int t) {}\nint main() {\n  int n = 1 << 20;\n  for (int t = 0; t < 10; t++) {\n    k<<<n / 256, 256>>>(0, n, t);\n  }\n  int s = n;\n  while (s > 1) {\n    int threads = s < 256 ? s : 256;\n    int blocks = (s + threads - 1) / threads;\n    k<<<blocks, threads>>>(0, s, 0);\n    s = blocks;\n  }\n}\n";
    let s = scan_source(src, &[]);
    let sites: Vec<&LaunchSite> = s.sites_for("k").collect();
    assert_eq!(
        (sites[0].grid, sites[0].arg("t"), sites[0].loop_line),
        (Some([4096, 1, 1]), Some(0), Some(4))
    );
    assert_eq!(
        (sites[1].grid, sites[1].block, sites[1].loop_line),
        (Some([4096, 1, 1]), Some([256, 1, 1]), Some(8))
    );
}

#[test]
fn different_constants_at_the_calls_of_a_helper_say_so() {
    let src = "__global__ void k(int n) {}\nvoid run(int n) { k<<<n / 128, 128>>>(n); }\nint main() { run(1024); run(4096); }\n";
    let s = scan_source(src, &[]);
    let l = only_site(&s, "k");
    assert_eq!(l.grid, None);
    assert!(
        l.reasons
            .iter()
            .any(|r| r.contains("`run`") && r.contains("different values")),
        "{:?}",
        l.reasons
    );
}

/// The host's allocations of the pointer arguments, where their sizes fold: `&p` or a cast
/// of it as the first argument of `cudaMalloc`, `cudaMallocManaged` or `cudaMallocAsync`,
/// the nearest call before the launch. A size that does not fold, an argument that is
/// not a plain name and an integer parameter give nothing.
#[test]
fn pointer_arguments_carry_the_size_the_host_allocates() {
    let src = "\
__global__ void spmv(const int *rowptr, const int *col, const float *val, const float *x, float *y, int n);
int main(int argc, char **argv) {
    const int n = 1 << 20;
    const int nnz = 16 * n;
    int *rp, *ci; float *v, *x, *y;
    cudaMalloc(&rp, (n + 1) * sizeof(int));
    cudaMalloc((void **)&ci, 4);
    cudaMalloc((void **)&ci, nnz * sizeof(int));
    cudaMallocManaged(&v, nnz * sizeof(float), cudaMemAttachGlobal);
    cudaMalloc(&x, atoi(argv[1]));
    cudaMallocAsync(&y, n * sizeof(float), 0);
    spmv<<<n / 256, 256>>>(rp, ci, v, x, y + 1, n);
    return 0;
}
";
    let s = scan_source(src, &[]);
    let l = only_site(&s, "spmv");
    let n: u64 = 1 << 20;
    assert_eq!(
        l.allocations,
        vec![("rowptr".to_string(), (n + 1) * 4), ("col".to_string(), 16 * n * 4), ("val".to_string(), 16 * n * 4)],
        "{l:?}"
    );
    assert_eq!(l.partial().array_bytes.get("col"), Some(&(16 * n * 4)));
}

/// An annotation's `bytes.NAME` states a parameter's allocation: on a kernel it is the
/// annotation site's, on a launch it replaces what the host code gives.
#[test]
fn annotations_state_allocations() {
    let src = "\
// warpsight: grid=64 block=256 n=1024 bytes.x=4096
__global__ void gather(const int *idx, const float *x, float *y, int n);
int main() {
    float *x;
    cudaMalloc(&x, 1024 * sizeof(float));
    // warpsight: bytes.x=8192
    gather<<<4, 256>>>(0, x, 0, 1024);
    return 0;
}
";
    let s = scan_source(src, &[]);
    let annotated = s.sites_for("gather").find(|l| l.origin == SiteOrigin::Annotation).expect("the kernel's annotation site");
    assert_eq!(annotated.allocations, vec![("x".to_string(), 4096)]);
    let launch = only_site(&s, "gather");
    assert_eq!(launch.allocations, vec![("x".to_string(), 8192)]);
}

/// `thrust::device_vector<T> v(n)` is n elements of T, passed as
/// `thrust::raw_pointer_cast(v.data())`, `thrust::raw_pointer_cast(&v[0])` or
/// `v.data().get()`; a vector built from a host vector has no size that folds.
#[test]
fn thrust_device_vectors_carry_their_size() {
    let src = "\
__global__ void hist(const unsigned *in, unsigned *bins, const float *w, float *h, int n);
int main() {
    const int n = 1 << 20;
    thrust::device_vector<unsigned> d_in(n);
    thrust::device_vector<unsigned> d_bins(256, 0u);
    thrust::device_vector<float> d_w(2 * n);
    thrust::host_vector<float> host(n);
    thrust::device_vector<float> d_h = host;
    hist<<<n / 256, 256>>>(thrust::raw_pointer_cast(d_in.data()), thrust::raw_pointer_cast(&d_bins[0]), d_w.data().get(), thrust::raw_pointer_cast(d_h.data()), n);
    return 0;
}
";
    let s = scan_source(src, &[]);
    let l = only_site(&s, "hist");
    let n: u64 = 1 << 20;
    assert_eq!(l.allocations, vec![("in".to_string(), n * 4), ("bins".to_string(), 1024), ("w".to_string(), 2 * n * 4)], "{l:?}");
}

#[test]
fn loop_annotations_name_the_lines_of_the_loop_head_after_them() {
    let src = "#define N 64\n__global__ void k(int *a) {\n    // warpsight: trips=N/2\n    for (int i = 0;\n         a[i] != 0;\n         ++i) a[i] = 0;\n    while (a[0]) a[0]--; // warpsight: trips=7.5\n    // warpsight: trips=3\n    do {\n        a[1]--;\n    } while (a[1] > 0);\n    // warpsight: trips=2 grid=4\n    a[2] = 0;\n}\n// warpsight: grid=8 block=32\n__global__ void after() {}\n";
    let s = scan_source(src, &[]);
    type Got = (u32, Option<(u32, u32)>, Option<f64>, usize);
    let got: Vec<Got> = s.loop_annotations.iter().map(|a| (a.line, a.lines, a.trips, a.errors.len())).collect();
    assert_eq!(
        got,
        [(3, Some((4, 6)), Some(32.0), 0), (7, Some((7, 7)), Some(7.5), 0), (8, Some((9, 11)), Some(3.0), 0), (12, None, Some(2.0), 2)],
        "{:#?}",
        s.loop_annotations
    );
    // The loop annotations do not attach to a kernel or a launch; the launch one still does.
    assert_eq!(s.annotations.len(), 1);
    assert_eq!(s.annotations[0].target, AnnotationTarget::Kernel { kernel: "after".into(), line: 16 });
}
