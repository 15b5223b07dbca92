//! Tests of the `mwp_cwp` adapter: from a hand-written [`KernelProfile`] to a prediction.
//!
//! The thesis's 64 B and 128 B tuning micro-benchmarks (Tables 9 and 10) are plain
//! coalesced and stride-2 float loads, so written as profiles they must reproduce the
//! printed predictions through the compute-capability 1.3 coalescing rule of the adapter.

use std::collections::BTreeMap;

use kernel_profile::{AccessClass, InstrClass, InstructionCounts, KernelProfile, MemoryAccess, Space};
use perf_models::mwp_cwp::{AdapterOptions, Device, predict};
use perf_models::{Bound, Confidence};

mod common;
use common::profiles;

fn access(
    space: Space,
    class: AccessClass,
    stride: Option<i64>,
    bytes: u32,
    vector: u8,
    executions: f64,
) -> MemoryAccess {
    profiles::load(space, class, stride, bytes, vector, 4.0, executions)
}

fn profile(grid: u32, block: u32, total_insts: f64, accesses: Vec<MemoryAccess>) -> KernelProfile {
    let loads: f64 = accesses.iter().map(|a| a.executions).sum();
    let mut dynamic = BTreeMap::new();
    dynamic.insert(InstrClass::Load(Space::Global), loads);
    dynamic.insert(InstrClass::Fp32, total_insts - loads);
    let counts = InstructionCounts { dynamic, ..Default::default() };
    profiles::profile("gflops", "tesla-c1060", [grid, 1, 1], [block, 1, 1], (16, 2080), counts, accesses)
}

#[test]
fn table9_micro_benchmark_as_a_profile() {
    let p = profile(
        120,
        256,
        7942.0,
        vec![access(
            Space::Global,
            AccessClass::Coalesced,
            Some(4),
            4,
            1,
            400.0,
        )],
    );
    let pred = predict(&p, &Device::tesla_c1060(), 4, &AdapterOptions::default()).unwrap();
    assert_eq!(pred.model, "mwp_cwp");
    assert!((pred.time_us - 722.29).abs() < 0.01, "{}", pred.time_us);
    assert_eq!(pred.bound, Bound::Memory);
    assert_eq!(pred.confidence, Confidence::High);
    assert!((pred.mwp.unwrap() - 6.581).abs() < 1e-3);
    assert!((pred.cwp.unwrap() - 7.132).abs() < 1e-3);
    assert!(
        pred.explanation
            .starts_with("memory-bound: MWP 6.6 < CWP 7.1"),
        "{}",
        pred.explanation
    );
    assert_eq!(pred.breakdown["transactions_per_request"], 2.0);
}

#[test]
fn table10_micro_benchmark_as_a_strided_profile() {
    let p = profile(
        120,
        256,
        7942.0,
        vec![access(
            Space::Global,
            AccessClass::Strided,
            Some(8),
            4,
            1,
            400.0,
        )],
    );
    let pred = predict(&p, &Device::tesla_c1060(), 4, &AdapterOptions::default()).unwrap();
    assert!((pred.time_us - 1131.91).abs() < 0.01, "{}", pred.time_us);
}

#[test]
fn vector_loads_use_the_vector_departure_delay() {
    // A float4 load that every lane of a warp shares: one 32 B transaction per half-warp,
    // the Table 4 vector benchmark (thesis Appendix A.2).
    let p = profile(
        120,
        256,
        7934.0,
        vec![access(
            Space::Global,
            AccessClass::Uniform,
            Some(0),
            16,
            4,
            400.0,
        )],
    );
    let pred = predict(&p, &Device::tesla_c1060(), 4, &AdapterOptions::default()).unwrap();
    assert!((pred.time_us - 1112.40).abs() < 0.01, "{}", pred.time_us);
}

#[test]
fn a_kernel_without_memory_is_compute_bound() {
    let p = profile(120, 512, 4325.5, vec![]);
    let pred = predict(&p, &Device::tesla_c1060(), 2, &AdapterOptions::default()).unwrap();
    assert_eq!(pred.bound, Bound::Compute);
    assert!((pred.time_us - 844.0).abs() < 1e-6, "{}", pred.time_us);
}

#[test]
fn a_small_grid_occupies_fewer_sms_and_blocks() {
    // 10 blocks on 30 SMs: 10 SMs with one block each, one wave.
    let p = profile(
        10,
        256,
        7942.0,
        vec![access(
            Space::Global,
            AccessClass::Coalesced,
            Some(4),
            4,
            1,
            400.0,
        )],
    );
    let pred = predict(&p, &Device::tesla_c1060(), 4, &AdapterOptions::default()).unwrap();
    assert_eq!(pred.breakdown["active_warps"], 8.0);
    assert_eq!(pred.breakdown["rep"], 1.0);
}

#[test]
fn irregular_loads_are_slower_than_coalesced_ones() {
    let d = Device::tesla_c1060();
    let fast = profile(
        120,
        256,
        7942.0,
        vec![access(
            Space::Global,
            AccessClass::Coalesced,
            Some(4),
            4,
            1,
            400.0,
        )],
    );
    let slow = profile(
        120,
        256,
        7942.0,
        vec![access(
            Space::Global,
            AccessClass::Irregular,
            None,
            4,
            1,
            400.0,
        )],
    );
    let (f, s) = (
        predict(&fast, &d, 4, &AdapterOptions::default()).unwrap(),
        predict(&slow, &d, 4, &AdapterOptions::default()).unwrap(),
    );
    assert_eq!(s.breakdown["transactions_per_request"], 32.0);
    assert!(
        s.time_us > 10.0 * f.time_us,
        "{} vs {}",
        s.time_us,
        f.time_us
    );
}

#[test]
fn merging_lowers_the_time_of_duplicate_loads() {
    // Few instructions, so the kernel stays memory-bound after merging. (With the 7942
    // instructions of Table 9, merging raises MWP above CWP and case 3's Comp × N exceeds
    // case 2's time: the model's case boundary is discontinuous.)
    let d = Device::tesla_c1060();
    let p = profile(
        120,
        256,
        2000.0,
        vec![access(
            Space::Global,
            AccessClass::Coalesced,
            Some(4),
            4,
            1,
            400.0,
        )],
    );
    let plain = predict(&p, &d, 4, &AdapterOptions::default()).unwrap();
    let merged = predict(
        &p,
        &d,
        4,
        &AdapterOptions {
            independent_loads: 1.0,
            duplicate_loads: 2.0,
        },
    )
    .unwrap();
    assert_eq!(merged.bound, Bound::Memory);
    assert!(
        merged.time_us < plain.time_us,
        "{} vs {}",
        merged.time_us,
        plain.time_us
    );
    assert_eq!(merged.breakdown["transactions_per_request"], 1.0);
}

#[test]
fn untuned_modern_gpu_has_low_confidence() {
    // A100-like datasheet facts (108 SMs, 1.41 GHz, 1555 GB/s); the delays are estimates.
    let d = Device::untuned("A100", (8, 0), 108, 1.41, 1555.0, 466.0, 64);
    assert!(!d.tuned);
    let p = profile(
        1080,
        256,
        7942.0,
        vec![access(
            Space::Global,
            AccessClass::Coalesced,
            Some(4),
            4,
            1,
            400.0,
        )],
    );
    let pred = predict(&p, &d, 8, &AdapterOptions::default()).unwrap();
    assert_eq!(pred.confidence, Confidence::Low);
    assert!(pred.time_us.is_finite() && pred.time_us > 0.0);
    assert!(pred.assumptions.iter().any(|a| a.contains("not tuned")));
}

#[test]
fn unusable_inputs_give_none() {
    let d = Device::tesla_c1060();
    let p = profile(
        120,
        256,
        7942.0,
        vec![access(
            Space::Global,
            AccessClass::Coalesced,
            Some(4),
            4,
            1,
            f64::NAN,
        )],
    );
    assert!(predict(&p, &d, 4, &AdapterOptions::default()).is_none());
    let ok = profile(120, 256, 7942.0, vec![]);
    assert!(predict(&ok, &d, 0, &AdapterOptions::default()).is_none());
}

#[test]
fn database_c1060_gets_the_tuned_device_and_reproduces_table9() {
    let db = gpu_spec::Database::builtin();
    let gpu = db.gpu("tesla-c1060").unwrap();
    // The tuned set comes from the GPU's data (its `seed002.*` model parameters), not
    // from its id: renamed, it stays tuned; without the parameters, it is untuned.
    let tuned = Device { name: "Tesla C1060".into(), ..Device::from_gpu(gpu) };
    assert_eq!(tuned, Device::tesla_c1060());
    let mut renamed = gpu.clone();
    renamed.id = "my-c1060".into();
    assert!(Device::from_gpu(&renamed).tuned);
    let mut bare = gpu.clone();
    bare.model_params.retain(|k, _| !k.starts_with("seed002."));
    assert!(!Device::from_gpu(&bare).tuned);
    // 256 threads, 16 registers, 2080 B of shared memory: 4 blocks/SM on CC 1.3.
    let p = profile(
        120,
        256,
        7942.0,
        vec![access(
            Space::Global,
            AccessClass::Coalesced,
            Some(4),
            4,
            1,
            400.0,
        )],
    );
    let pred = perf_models::mwp_cwp::predict_for_gpu(&p, gpu, &AdapterOptions::default()).unwrap();
    assert!((pred.time_us - 722.29).abs() < 0.01, "{}", pred.time_us);
}

#[test]
fn database_gpus_of_other_generations_predict_with_low_confidence() {
    let db = gpu_spec::Database::builtin();
    let p = profile(
        1080,
        256,
        7942.0,
        vec![access(
            Space::Global,
            AccessClass::Coalesced,
            Some(4),
            4,
            1,
            400.0,
        )],
    );
    for gpu in db.gpus().iter().filter(|g| g.cc.major >= 3) {
        let pred = perf_models::mwp_cwp::predict_for_gpu(&p, gpu, &AdapterOptions::default())
            .unwrap_or_else(|| panic!("{}", gpu.id));
        assert_eq!(pred.confidence, Confidence::Low, "{}", gpu.id);
        assert!(pred.time_us.is_finite() && pred.time_us > 0.0, "{}", gpu.id);
    }
}
