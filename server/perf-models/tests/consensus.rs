//! The roofline floor and the consensus rule on the vectorAdd profile
//! (`tests/fixtures/vector_add.json`) at two launch sizes and on two GPUs.

mod common;

use kernel_profile::KernelProfile;
use perf_models::roofline::{self, FloorConfig};
use perf_models::{GpuParams, ModelConfig, run_all};

fn vector_add(blocks: u32) -> KernelProfile {
    let text = std::fs::read_to_string(
        common::workspace_root().join("server/perf-models/tests/fixtures/vector_add.json"),
    )
    .expect("fixture");
    let mut p: KernelProfile = serde_json::from_str(&text).expect("valid profile");
    p.launch.grid = [blocks, 1, 1];
    p
}

#[test]
fn roofline_floor_of_a_streaming_kernel() {
    // 4096 blocks × 256 threads = 2^20 elements on the A100: the floor is the DRAM traffic,
    // two arrays read and one written once each, 3 × 4 sectors × 32 B per warp × 32768
    // warps = 12 MiB at 2039 GB/s (the old floor counted two of the three arrays).
    let p = vector_add(4096);
    let a100 = GpuParams::a100_sxm4_80gb();
    let floor = roofline::predict(
        &p,
        &a100,
        &FloorConfig {
            l2_reuse_discount: 0.0,
        },
    )
    .expect("applies");
    let want_us = 12.0 * 1024.0 * 1024.0 / 2039e9 * 1e6;
    assert!((floor.time_us - want_us).abs() < 1e-9, "{}", floor.time_us);
    assert_eq!(floor.bound, perf_models::Bound::Memory);
    // All three streams are requested once: 12 MiB, and all must cross DRAM.
    assert_eq!(floor.breakdown["requested_bytes"], 12.0 * 1024.0 * 1024.0);
    assert_eq!(floor.breakdown["floor_bytes"], 12.0 * 1024.0 * 1024.0);
    assert_eq!(floor.breakdown["dram_write_bytes"], 4.0 * 1024.0 * 1024.0);
}

#[test]
fn below_floor_flags_only_faster_than_physics() {
    let p = vector_add(4096);
    let a100 = GpuParams::a100_sxm4_80gb();
    let floor = roofline::predict(
        &p,
        &a100,
        &FloorConfig {
            l2_reuse_discount: 0.0,
        },
    )
    .expect("applies");
    let mut fast = floor.clone();
    fast.time_us = floor.time_us * 0.5;
    assert!(roofline::below_floor(&fast, &floor));
    fast.time_us = floor.time_us * 1.5;
    assert!(!roofline::below_floor(&fast, &floor));
}

#[test]
fn kepler_headline_is_the_scheduling_model() {
    let r = run_all(
        &vector_add(13),
        &GpuParams::tesla_k20(),
        &ModelConfig::uncalibrated(),
    )
    .expect("applies");
    assert_eq!(r.headline.model, "scheduling");
    let models: Vec<&str> = r.predictions.iter().map(|p| p.model).collect();
    assert_eq!(models, ["roofline", "mwp_cwp", "wave", "bsp", "scheduling"]);
    assert!(r.not_applicable.iter().any(|(m, _)| *m == "cgpredict"));
    let sched = r
        .predictions
        .iter()
        .find(|p| p.model == "scheduling")
        .expect("ran");
    assert_eq!(r.headline.time_us, sched.time_us);
}

#[test]
fn a_calibrated_lambda_takes_precedence() {
    let mut cfg = ModelConfig::uncalibrated();
    cfg.bsp.lambda = Some(4.35);
    let r = run_all(&vector_add(13), &GpuParams::tesla_k20(), &cfg).expect("applies");
    assert_eq!(r.headline.model, "bsp");
    assert!(r.headline.rule.contains("fitted λ"));
}

#[test]
fn modern_gpus_take_the_median_and_never_go_below_the_floor() {
    let a100 = GpuParams::a100_sxm4_80gb();
    let r = run_all(&vector_add(4096), &a100, &ModelConfig::uncalibrated()).expect("applies");
    assert!(
        r.headline.rule.starts_with("median of 4"),
        "{}",
        r.headline.rule
    );
    let floor = r
        .predictions
        .iter()
        .find(|p| p.model == "roofline")
        .expect("floor");
    assert!(r.headline.time_us >= floor.time_us * 0.995);
    // A λ so large that BSP predicts below the floor: the floor becomes the headline.
    let mut cfg = ModelConfig::uncalibrated();
    cfg.bsp.lambda = Some(1e6);
    let r = run_all(&vector_add(4096), &a100, &cfg).expect("applies");
    assert_eq!(r.headline.model, "roofline");
    assert!(r.floor_violations.contains(&"bsp"));
}

#[test]
fn docs_table_is_current() {
    let mut md = String::from(
        "| GPU | grid | model | time (µs) | bound | confidence |\n|---|---|---|---|---|---|\n",
    );
    for (gpu, blocks) in [
        (GpuParams::tesla_k20(), 13u32),
        (GpuParams::tesla_k20(), 4096),
        (GpuParams::a100_sxm4_80gb(), 4096),
    ] {
        let r = run_all(&vector_add(blocks), &gpu, &ModelConfig::uncalibrated()).expect("applies");
        for p in &r.predictions {
            md.push_str(&format!(
                "| {} | {blocks} × 256 | {} | {:.3} | {} | {} |\n",
                gpu.id,
                p.model,
                p.time_us,
                p.bound.name(),
                p.confidence.name()
            ));
        }
        md.push_str(&format!(
            "| {} | {blocks} × 256 | **headline: {}** | **{:.3}** | {} | {} |\n",
            gpu.id,
            r.headline.model,
            r.headline.time_us,
            r.headline.bound.name(),
            r.headline.rule
        ));
    }
    common::ensure_generated("docs/models.md", "consensus", &md);
}

#[test]
fn database_gpus_run_every_adapter() {
    let db = gpu_spec::Database::builtin();
    let k20 = db.gpu("tesla-k20").expect("in the database");
    let r = perf_models::run_all_for_gpu(&vector_add(13), k20, &ModelConfig::uncalibrated())
        .expect("applies");
    // On a database GPU the bottleneck model is the headline, even where a seed model was
    // validated (the seeds stay beside it).
    assert_eq!(r.headline.model, "bottleneck", "{}", r.headline.rule);
    let models: Vec<&str> = r.predictions.iter().map(|p| p.model).collect();
    assert_eq!(
        models,
        [
            "bottleneck",
            "roofline",
            "mwp_cwp",
            "cgpredict",
            "wave",
            "bsp",
            "scheduling"
        ]
    );
    let a100 = db.gpu("a100-sxm4-80gb").expect("in the database");
    let r = perf_models::run_all_for_gpu(&vector_add(4096), a100, &ModelConfig::uncalibrated())
        .expect("applies");
    assert_eq!(r.headline.model, "bottleneck", "{}", r.headline.rule);
    assert!(r.headline.rule.contains("bottleneck model"), "{}", r.headline.rule);
    assert!(r.not_applicable.is_empty(), "{:?}", r.not_applicable);
}

#[test]
fn the_preferred_model_follows_the_documented_rule() {
    // docs/models.md, rule step 3: CC 1.x → mwp_cwp; the TK1's CC 3.2 → cgpredict; CC 3.0
    // to 7.2 → scheduling; otherwise none (the median decides).
    let with_cc = |cc: (u32, u32)| GpuParams { cc, ..GpuParams::tesla_k20() };
    for (cc, want) in [
        ((1, 0), Some("mwp_cwp")),
        ((1, 3), Some("mwp_cwp")),
        ((3, 2), Some("cgpredict")),
        ((3, 0), Some("scheduling")),
        ((3, 5), Some("scheduling")),
        ((5, 2), Some("scheduling")),
        ((6, 1), Some("scheduling")),
        ((7, 0), Some("scheduling")),
        ((7, 2), Some("scheduling")),
        ((7, 5), None),
        ((8, 0), None),
        ((9, 0), None),
    ] {
        assert_eq!(perf_models::consensus::preferred_model(&with_cc(cc)), want, "CC {cc:?}");
    }
}

#[test]
fn a_cc1_preset_takes_the_mwp_cwp_headline() {
    // A CC 1.x GPU outside the database (the C1060's facts, no database entry): rule step 3
    // picks `mwp_cwp` when it applies and is above the floor.
    let c1060 = gpu_spec::Database::builtin().gpu("tesla-c1060").expect("c1060");
    let preset = GpuParams { spec: None, ..GpuParams::from_spec(c1060) };
    let r = run_all(&vector_add(120), &preset, &ModelConfig::uncalibrated()).expect("a report");
    let mwp = r.predictions.iter().find(|p| p.model == "mwp_cwp").expect("mwp_cwp applies");
    assert_eq!(r.headline.model, "mwp_cwp", "{:?}", r.headline);
    assert_eq!(r.headline.time_us, mwp.time_us);
}
