//! Looking GPUs up by the device name the driver reports, and the shared-memory carveout
//! view of a GPU (`Gpu::with_smem_carveout`).

use gpu_spec::Database;
use gpu_spec::db::device_name_key;
use gpu_spec::occupancy::{self, CacheConfig, DeviceProps, DeviceState, FuncAttrs};

#[test]
fn device_name_keys_drop_vendor_words_case_and_punctuation() {
    assert_eq!(device_name_key("NVIDIA GeForce RTX 3060 Laptop GPU"), "rtx3060laptop");
    assert_eq!(device_name_key("Tesla V100-PCIE-16GB"), "v100pcie16gb");
    assert_eq!(device_name_key("a100-sxm4-80gb"), "a100sxm480gb");
    assert_eq!(device_name_key("NVIDIA A100-SXM4-80GB"), "a100sxm480gb");
    // "GPU" is dropped only as the last word, never as the whole name.
    assert_eq!(device_name_key("GPU"), "gpu");
    assert_eq!(device_name_key("  "), "");
}

#[test]
fn driver_device_names_find_their_database_entry() {
    let db = Database::builtin();
    let id = |name: &str| db.find_by_device_name(name).map(|g| g.id.as_str());
    // As `cudaDeviceProp::name` / Kernel Tuner's `device_name` spell them.
    assert_eq!(id("NVIDIA GeForce RTX 3090"), Some("rtx-3090"));
    assert_eq!(id("NVIDIA GeForce RTX 2080 Ti"), Some("rtx-2080-ti"));
    assert_eq!(id("NVIDIA A100-SXM4-80GB"), Some("a100-sxm4-80gb"));
    assert_eq!(id("NVIDIA A100-SXM4-40GB"), Some("a100-sxm4-40gb"));
    assert_eq!(id("Tesla V100-PCIE-16GB"), Some("tesla-v100-pcie-16gb"));
    assert_eq!(id("Tesla V100-SXM2-16GB"), Some("tesla-v100-sxm2-16gb"));
    assert_eq!(id("NVIDIA H100 PCIe"), Some("h100-pcie"));
    assert_eq!(id("NVIDIA A40"), Some("a40"));
    assert_eq!(id("nvidia l40"), Some("l40"));
    // Names of the GPUs added for breadth (issue 18), as the driver spells them.
    assert_eq!(id("NVIDIA GeForce RTX 3070 Laptop GPU"), Some("rtx-3070-laptop"));
    assert_eq!(id("NVIDIA GeForce RTX 4090 Laptop GPU"), Some("rtx-4090-laptop"));
    assert_eq!(id("NVIDIA GeForce GTX 1060 6GB"), Some("gtx-1060-6gb"));
    assert_eq!(id("NVIDIA GeForce GTX 1060 3GB"), Some("gtx-1060-3gb"));
    assert_eq!(id("NVIDIA TITAN Xp"), Some("titan-xp"));
    assert_eq!(id("NVIDIA TITAN X (Pascal)"), Some("titan-x-pascal"));
    assert_eq!(id("NVIDIA TITAN V"), Some("titan-v"));
    assert_eq!(id("Quadro RTX 6000"), Some("quadro-rtx-6000"));
    assert_eq!(id("Tesla K20Xm"), Some("tesla-k20x"));
    assert_eq!(id("NVIDIA RTX A5000"), Some("rtx-a5000"));
    assert_eq!(id("NVIDIA RTX 4000 Ada Generation"), Some("rtx-4000-ada"));
    assert_eq!(id("NVIDIA GeForce RTX 5070 Ti"), Some("rtx-5070-ti"));
    assert_eq!(id("NVIDIA H200 NVL"), Some("h200-nvl"));
    // Board names that are not the product name: the H100 SXM5 reports its memory, the
    // GH200 its Grace memory, the Kepler boards their cooling (c: active, m: passive).
    assert_eq!(id("NVIDIA H100 80GB HBM3"), Some("h100-sxm"));
    assert_eq!(id("NVIDIA GH200 480GB"), Some("gh200"));
    assert_eq!(id("Tesla K40c"), Some("tesla-k40"));
    assert_eq!(id("Tesla K40m"), Some("tesla-k40"));
    assert_eq!(id("Tesla K20m"), Some("tesla-k20"));
    // Exact keys only: a near miss is not a match.
    assert_eq!(id("NVIDIA GeForce RTX 3091"), None);
    assert_eq!(id("NVIDIA"), None);
    assert_eq!(id(""), None);
}

/// The carveout view must give exactly NVIDIA's occupancy with the preference set.
#[test]
fn carveout_view_matches_the_calculation_with_the_preference() {
    let db = Database::builtin();
    for id in ["tesla-v100-pcie-16gb", "a100-sxm4-80gb", "a40", "rtx-2080-ti", "h100-pcie", "l40"] {
        let gpu = db.gpu(id).expect("gpu");
        let props = DeviceProps::from_limits(&gpu.limits, gpu.sm_count);
        for percent in [1, 5, 9, 10, 25, 33, 50, 66, 75, 100] {
            let view = gpu.with_smem_carveout(percent).expect("carveout");
            for (threads, regs, smem, dynamic) in [(64, 16, 6144, 0), (256, 32, 6144, 0), (1024, 24, 6144, 0), (128, 40, 0, 20_000), (256, 64, 30_000, 0)] {
                let attrs = FuncAttrs::new(regs, smem, &props);
                let state = DeviceState { cache_config: CacheConfig::PreferNone, carveout_percent: Some(percent) };
                let want = occupancy::calculate(&props, &attrs, &state, threads, dynamic).map(|o| o.blocks_per_sm);
                let got = view.occupancy(threads, regs, smem, dynamic).map(|o| o.blocks_per_sm);
                assert_eq!(got.ok(), want.ok(), "{id} at {percent}%: {threads} threads, {smem}+{dynamic} B");
            }
        }
    }
}

/// gpu-benches' gpu-stream pins residency to 2 blocks per SM with a 6 KiB static array
/// and a 9 % carveout (V100, A100): the view must show those 2 blocks.
#[test]
fn a_nine_percent_carveout_leaves_two_six_kib_blocks_per_sm() {
    let db = Database::builtin();
    for id in ["tesla-v100-pcie-16gb", "a100-sxm4-40gb", "a100-sxm4-80gb"] {
        let gpu = db.gpu(id).unwrap();
        let view = gpu.with_smem_carveout(9).unwrap();
        for threads in [64, 256, 512, 1024] {
            assert_eq!(view.occupancy(threads, 16, 6144, 0).unwrap().blocks_per_sm, 2, "{id}, {threads} threads");
        }
        // Without the preference the same kernel is not limited to 2.
        assert!(gpu.occupancy(64, 16, 6144, 0).unwrap().blocks_per_sm > 2, "{id}");
        assert!(view.source("limits.smem_per_sm_bytes").unwrap().contains("9%"));
    }
}

#[test]
fn carveout_limits() {
    let db = Database::builtin();
    let a100 = db.gpu("a100").unwrap();
    assert!(a100.with_smem_carveout(0).is_err());
    assert!(a100.with_smem_carveout(101).is_err());
    // No carveout API before Volta: unchanged.
    let k20 = db.gpu("tesla-k20").unwrap();
    assert_eq!(&k20.with_smem_carveout(9).unwrap(), k20);
}

#[test]
fn short_names_resolve_and_ambiguous_ones_list_their_candidates() {
    let db = Database::builtin();
    // Short names are aliases, resolved exactly as before.
    assert_eq!(db.gpu("v100").unwrap().id, "tesla-v100-sxm2-16gb");
    assert_eq!(db.gpu("a100").unwrap().id, "a100-sxm4-80gb");
    assert_eq!(db.gpu("h100").unwrap().id, "h100-sxm");
    // The driver's spelling resolves too (exact key only).
    assert_eq!(db.gpu("rtx 3060 laptop").unwrap().id, "rtx-3060-laptop");
    assert_eq!(db.gpu("Tesla V100-PCIE-16GB").unwrap().id, "tesla-v100-pcie-16gb");
    // A name that is part of several GPUs' names is ambiguous and lists them.
    let e = db.gpu("rtx-30").unwrap_err();
    assert!(e.is_ambiguous(), "{e:?}");
    for id in ["rtx-3060", "rtx-3060-ti", "rtx-3070", "rtx-3080", "rtx-3090", "rtx-3060-laptop"] {
        assert!(e.candidates.iter().any(|c| c == id), "{id} not in {:?}", e.candidates);
    }
    assert!(e.to_string().contains("ambiguous") && e.to_string().contains("rtx-3060-ti"), "{e}");
    // A typo is unknown, with the closest ids.
    let e = db.gpu("h100-sxn").unwrap_err();
    assert!(!e.is_ambiguous());
    assert_eq!(e.suggestions.first().map(String::as_str), Some("h100-sxm"), "{e:?}");
    assert!(e.to_string().starts_with("unknown GPU `h100-sxn`; closest: h100-sxm"), "{e}");
    // A query contained in exactly one GPU's name is suggested first.
    let e = db.gpu("3060-lapto").unwrap_err();
    assert_eq!(e.suggestions.first().map(String::as_str), Some("rtx-3060-laptop"), "{e:?}");
    // Nothing matches nonsense, and a one-character query has no candidates.
    assert!(db.gpu("zzzz-9999").unwrap_err().candidates.is_empty());
    assert!(db.candidates("x").is_empty());
}

#[test]
fn detected_devices_map_to_their_entries_by_name_and_compute_capability() {
    use gpu_spec::{ComputeCapability, DeviceMatch};
    let db = Database::builtin();
    let cc = |s: &str| s.parse::<ComputeCapability>().unwrap();
    let found = |name: &str, c: &str| match db.match_device(name, cc(c)) {
        DeviceMatch::Found(g) => Some(g.id.clone()),
        _ => None,
    };
    // NVML's nvmlDeviceGetName spellings.
    assert_eq!(found("NVIDIA H100 80GB HBM3", "9.0").as_deref(), Some("h100-sxm"), "the SXM5 board's device name (an alias)");
    assert_eq!(found("NVIDIA H800", "9.0"), None, "not a database name: not guessed");
    assert_eq!(found("NVIDIA A100-SXM4-80GB", "8.0").as_deref(), Some("a100-sxm4-80gb"));
    assert_eq!(found("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6").as_deref(), Some("rtx-3060-laptop"));
    assert_eq!(found("Tesla T4", "7.5").as_deref(), Some("tesla-t4"));
    assert_eq!(found("NVIDIA TITAN RTX", "7.5").as_deref(), Some("titan-rtx"));
    assert_eq!(found("NVIDIA RTX A4000", "8.6").as_deref(), Some("rtx-a4000"));
    // The right name with another compute capability is not taken.
    assert!(matches!(db.match_device("NVIDIA A100-SXM4-80GB", cc("8.6")), DeviceMatch::CcDiffers(g) if g.id == "a100-sxm4-80gb"));
    // An unknown device gets same-CC GPUs whose names contain it, or the closest ids.
    match db.match_device("NVIDIA GeForce RTX 30", cc("8.6")) {
        DeviceMatch::NotFound { closest } => {
            assert!(!closest.is_empty() && closest.iter().all(|id| db.gpu(id).unwrap().cc == cc("8.6")), "{closest:?}");
        }
        other => panic!("{other:?}"),
    }
    match db.match_device("NVIDIA Imaginary 9000", cc("8.6")) {
        DeviceMatch::NotFound { closest } => assert_eq!(closest.len(), 3),
        other => panic!("{other:?}"),
    }
}
