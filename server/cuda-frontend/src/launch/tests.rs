//! Launch-site extraction tests over `testdata/launch_patterns.cu`, one test per pattern.
//!
//! Each launch in the data file carries a `// case: NAME` comment; the tests find the
//! launch by that marker rather than by a hard-coded line, so the data file can grow.

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
    assert_eq!((a.grid, a.block, a.smem), (None, None, Some(16)));
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
