//! Settings that change what is analysed: the shared-memory carveout preference and the
//! one-kernel filter (used by `warpsight validate`, one row at a time).

use analysis::{Context, PartialLaunch, Settings, analyze};

fn fixture(name: &str) -> String {
    let path = format!("{}/../../tests/fixtures/ptx/sm_80/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn launch(block: u32) -> PartialLaunch {
    PartialLaunch { grid: Some([4096, 1, 1]), block: Some([block, 1, 1]), ..Default::default() }
}

#[test]
fn a_carveout_preference_reaches_occupancy_and_the_models() {
    // reduce_tree: 1 KiB of static shared memory per block, 64-thread blocks.
    let text = fixture("reduce_tree");
    let base = Settings { gpus: vec!["a100-sxm4-80gb".into()], launch: launch(64), ..Settings::default() };
    let free = analyze(&text, &base, &Context::default());
    let free_blocks = free.kernels[0].targets[0].occupancy.as_ref().unwrap().blocks_per_sm;
    assert_eq!(free_blocks, 32, "unlimited by shared memory at the default carveout");

    // 2 %: 3.28 KB snaps up to the 8 KiB carveout; 2 KiB per block (1 KiB + 1 KiB reserved).
    let pinned = Settings { smem_carveout_percent: Some(2), ..base.clone() };
    let a = analyze(&text, &pinned, &Context::default());
    let t = &a.kernels[0].targets[0];
    assert_eq!(t.occupancy.as_ref().unwrap().blocks_per_sm, 4);
    assert_eq!(t.gpu.limits.smem_per_sm_bytes, 2 * 167_936 / 100);
    assert!(a.syntax.is_empty(), "{:?}", a.syntax);
    // The models see the same residency: the wave count changes with it.
    let waves = |x: &analysis::FileAnalysis| x.kernels[0].targets[0].waves.as_ref().unwrap().waves;
    assert!(waves(&a) > waves(&free));

    // An impossible preference is reported, not silently used.
    let bad = Settings { smem_carveout_percent: Some(0), ..base };
    let b = analyze(&text, &bad, &Context::default());
    assert!(b.syntax.iter().any(|d| d.message.contains("carveout")), "{:?}", b.syntax);
    assert_eq!(b.kernels[0].targets[0].occupancy.as_ref().unwrap().blocks_per_sm, free_blocks);
}

#[test]
fn only_kernel_analyses_one_entry() {
    let text = fixture("saxpy");
    let all = analyze(&text, &Settings::default(), &Context::default());
    assert_eq!(all.kernels.len(), 2);
    let one = Settings { only_kernel: Some("_Z5daxpyidPKdPd".into()), ..Settings::default() };
    let a = analyze(&text, &one, &Context::default());
    assert_eq!(a.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["_Z5daxpyidPKdPd"]);
    let none = Settings { only_kernel: Some("nope".into()), ..Settings::default() };
    assert!(analyze(&text, &none, &Context::default()).kernels.is_empty());
}
