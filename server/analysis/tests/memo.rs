//! Incrementality is tested, not assumed (as rust-analyzer's incremental tests do): an edit inside one
//! kernel re-runs only that kernel's profile and models, and an edit that only moves a
//! kernel reuses its results with shifted positions.

use analysis::{Context, Memo, Settings, analyze, analyze_memo};

fn fixture(name: &str) -> String {
    let path = format!("{}/../../tests/fixtures/ptx/sm_80/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn editing_one_kernel_reruns_only_that_kernel() {
    let text = fixture("spmv_csr");
    let settings = Settings::default();
    let cx = Context::default();
    let mut memo = Memo::default();
    let first = analyze_memo(&text, &settings, &cx, Some(&mut memo));
    assert_eq!(first.kernels.len(), 2);
    assert_eq!(memo.kernel_runs, 2);

    // The same text again: nothing re-runs.
    analyze_memo(&text, &settings, &cx, Some(&mut memo));
    assert_eq!(memo.kernel_runs, 2);

    // Change an instruction inside the second kernel only.
    let second = &first.kernels[1];
    let body = &text[second.span.start as usize..second.span.end as usize];
    let edited_body = body.replacen("add.s32", "sub.s32", 1);
    assert_ne!(body, edited_body, "the second kernel has an add.s32 to edit");
    let edited = format!("{}{}{}", &text[..second.span.start as usize], edited_body, &text[second.span.end as usize..]);
    analyze_memo(&edited, &settings, &cx, Some(&mut memo));
    assert_eq!(memo.kernel_runs, 3, "only the edited kernel re-ran");

    // Insert lines above both kernels: nothing re-runs, and positions follow the text.
    let shifted = edited.replacen(".address_size 64", ".address_size 64\n// a comment\n// another", 1);
    let moved = analyze_memo(&shifted, &settings, &cx, Some(&mut memo));
    assert_eq!(memo.kernel_runs, 3, "moving kernels does not re-run them");
    let fresh = analyze(&shifted, &settings, &cx);
    for (a, b) in moved.kernels.iter().zip(&fresh.kernels) {
        assert_eq!((a.name_span, a.span, a.ptx_line), (b.name_span, b.span, b.ptx_line));
        let lines = |k: &analysis::KernelAnalysis| k.targets[0].profile.memory_accesses.iter().map(|m| m.ptx_line).collect::<Vec<_>>();
        assert_eq!(lines(a), lines(b));
    }

    // Changing the settings invalidates everything.
    let other = Settings { gpus: vec!["tesla-k20".into()], ..Settings::default() };
    analyze_memo(&shifted, &other, &cx, Some(&mut memo));
    assert_eq!(memo.kernel_runs, 5);
}

/// Two analyses that take every kernel from the memo, then a version without one of the
/// kernels: the deleted kernel's entry goes (the generation counter once repeated after
/// two all-hit analyses, and entries of deleted kernels outlived them).
#[test]
fn a_deleted_kernel_leaves_the_memo_even_after_all_hit_analyses() {
    let text = fixture("spmv_csr");
    let settings = Settings::default();
    let cx = Context::default();
    let mut memo = Memo::default();
    let first = analyze_memo(&text, &settings, &cx, Some(&mut memo));
    assert_eq!((memo.kernel_runs, memo.len()), (2, 2));
    analyze_memo(&text, &settings, &cx, Some(&mut memo));
    analyze_memo(&text, &settings, &cx, Some(&mut memo));
    assert_eq!((memo.kernel_runs, memo.len()), (2, 2));

    let second = &first.kernels[1];
    let without = format!("{}{}", &text[..second.span.start as usize], &text[second.span.end as usize..]);
    let a = analyze_memo(&without, &settings, &cx, Some(&mut memo));
    assert_eq!(a.kernels.len(), 1);
    assert_eq!(memo.kernel_runs, 2, "the remaining kernel came from the memo");
    assert_eq!(memo.len(), 1, "the deleted kernel's entry is gone");

    // Putting it back analyses it again: nothing stale was kept.
    analyze_memo(&text, &settings, &cx, Some(&mut memo));
    assert_eq!((memo.kernel_runs, memo.len()), (3, 2));
}

/// The memo is keyed on the inputs as values: an equal context built anew hits, a change
/// in one kernel's context re-runs that kernel only, and a change in any setting (here one
/// that only a float carries) re-runs every kernel.
#[test]
fn the_memo_key_is_the_typed_inputs() {
    let text = fixture("spmv_csr");
    let settings = Settings::default();
    let names: Vec<String> = analyze(&text, &settings, &Context::default()).kernels.iter().map(|k| k.name.clone()).collect();
    let context = |block: u32| {
        let mut cx = Context::default();
        for (i, n) in names.iter().enumerate() {
            let b = if i == 0 { block } else { 128 };
            let launch = analysis::PartialLaunch { block: Some([b, 1, 1]), ..Default::default() };
            cx.kernels.insert(n.clone(), analysis::KernelContext { annotation: Some(launch), ..Default::default() });
        }
        cx
    };
    let mut memo = Memo::default();
    analyze_memo(&text, &settings, &context(256), Some(&mut memo));
    assert_eq!(memo.kernel_runs, 2);
    analyze_memo(&text, &settings, &context(256), Some(&mut memo));
    assert_eq!(memo.kernel_runs, 2, "an equal context, built anew, hits");
    let a = analyze_memo(&text, &settings, &context(64), Some(&mut memo));
    assert_eq!(memo.kernel_runs, 3, "only the kernel whose context changed re-ran");
    assert_eq!(a.kernels[0].launch.block, [64, 1, 1]);
    assert_eq!(memo.len(), 2);

    let mut other = settings.clone();
    other.profile.default_trip_count += 0.5;
    analyze_memo(&text, &other, &context(64), Some(&mut memo));
    assert_eq!(memo.kernel_runs, 5, "a changed setting re-runs every kernel");
    assert_eq!(memo.len(), 2);
}

/// One kernel profile serves every GPU of the same shared-memory bank count: the A100's and
/// the H100's profiles are the same but for their `gpu`, while a CC 1.3 GPU (16 banks, a
/// half-warp per request: CUDA C Programming Guide, "Compute Capability 1.x", Shared
/// Memory) sees a lane stride of 32 words
/// as a 16-way conflict where CC 2.0 and later (32 banks, the whole warp) see 32-way.
#[test]
fn one_profile_per_bank_count_serves_every_gpu() {
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 k_param_0)\n{\n.reg .f32 %f<2>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
        .shared .align 4 .b8 sh[16384];\n\
        mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 7;\nmov.u32 %r3, sh;\nadd.s32 %r4, %r3, %r2;\nld.shared.f32 %f1, [%r4];\n\
        ld.param.u64 %rd1, [k_param_0];\ncvta.to.global.u64 %rd2, %rd1;\nst.global.f32 [%rd2], %f1;\nret;\n}\n";
    let settings = Settings { gpus: vec!["a100-sxm4-80gb".into(), "h100-sxm".into(), "tesla-c1060".into()], ..Settings::default() };
    let a = analyze(text, &settings, &Context::default());
    let targets = &a.kernels[0].targets;
    assert_eq!(targets.len(), 3);
    let (a100, h100, c1060) = (&targets[0].profile, &targets[1].profile, &targets[2].profile);
    assert_eq!((a100.gpu.as_str(), h100.gpu.as_str(), c1060.gpu.as_str()), ("a100-sxm4-80gb", "h100-sxm", "tesla-c1060"));
    let mut same = h100.clone();
    same.gpu = a100.gpu.clone();
    assert_eq!(&same, a100);
    let ways = |p: &kernel_profile::KernelProfile| p.memory_accesses.iter().find(|m| m.space == kernel_profile::Space::Shared).and_then(|m| m.bank_conflict_ways);
    assert_eq!((ways(a100), ways(c1060)), (Some(32), Some(16)));
}

/// A kernel with a `// warpsight: trips=N` comment in its PTX names that comment's line in
/// its profile: moved, it is analysed again (the lines must follow), while a moved kernel
/// without one is still reused.
#[test]
fn a_kernel_with_a_stated_trip_count_is_analysed_again_when_it_moves() {
    let text = fixture("spmv_csr");
    // Above the scalar kernel's row loop: the header of its first loop.
    let plain = analyze(&text, &Settings::default(), &Context::default());
    let header = plain.kernels[0].targets[0].profile.loops[0].ptx_line as usize;
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(header - 1, "// warpsight: trips=24");
    let stated = lines.join("\n") + "\n";
    let (settings, cx) = (Settings::default(), Context::default());
    let mut memo = Memo::default();
    let first = analyze_memo(&stated, &settings, &cx, Some(&mut memo));
    let at = |a: &analysis::FileAnalysis| a.kernels[0].targets[0].profile.loops.iter().filter_map(|l| l.stated_at).collect::<Vec<_>>();
    assert!(!at(&first).is_empty() && at(&first).iter().all(|&l| l as usize == header), "{:?}", first.kernels[0].targets[0].profile.loops);
    assert_eq!(memo.kernel_runs, 2);
    let shifted = stated.replacen(".address_size 64", ".address_size 64\n// a comment", 1);
    let moved = analyze_memo(&shifted, &settings, &cx, Some(&mut memo));
    assert_eq!(memo.kernel_runs, 3, "the kernel with the comment ran again, the other did not");
    assert!(at(&moved).iter().all(|&l| l as usize == header + 1), "{:?}", moved.kernels[0].targets[0].profile.loops);
    assert_eq!(at(&moved), at(&analyze(&shifted, &settings, &cx)));
}
