//! The guard in front of the models (issue 12 item 11): a profile whose counts are absurd
//! or not numbers, or whose launch overflows, is refused with "cannot predict: ..."
//! instead of some models quietly dropping out and the headline falling back to the
//! roofline floor; a profile at the edge of what is accepted gives every model a finite
//! time.

mod common;

use kernel_profile::{KernelProfile, MAX_EXECUTIONS_PER_THREAD};
use perf_models::{GpuParams, ModelConfig, run_all, run_all_for_gpu};

fn vector_add() -> KernelProfile {
    let text = std::fs::read_to_string(common::workspace_root().join("server/perf-models/tests/fixtures/vector_add.json")).expect("fixture");
    serde_json::from_str(&text).expect("valid profile")
}

/// The profile with every per-thread execution count multiplied by `f` (as if the whole
/// kernel ran inside a loop of `f` iterations).
fn scaled(f: f64) -> KernelProfile {
    let mut p = vector_add();
    for v in p.counts.dynamic.values_mut() {
        *v *= f;
    }
    for a in &mut p.memory_accesses {
        a.executions *= f;
    }
    for b in &mut p.blocks {
        b.executions *= f;
    }
    p
}

fn models(r: &perf_models::Report) -> Vec<&'static str> {
    r.predictions.iter().map(|p| p.model).collect()
}

#[test]
fn absurd_counts_are_refused_with_the_reason_not_a_floor_headline() {
    let a100 = GpuParams::a100_sxm4_80gb();
    for f in [1e20, 1e300] {
        let err = run_all(&scaled(f), &a100, &ModelConfig::uncalibrated()).expect_err("absurd counts");
        assert!(err.starts_with("cannot predict: each thread would execute about"), "{f}: {err}");
    }
    // Counts that overflowed to infinity.
    let err = run_all(&scaled(f64::MAX), &a100, &ModelConfig::uncalibrated()).expect_err("infinite counts");
    assert!(err.starts_with("cannot predict: the dynamic count of") && err.contains("is inf"), "{err}");
    // The class by its one name (`load_global`), not Rust's `Debug` of it.
    let class = err.split('`').nth(1).unwrap_or_default();
    assert!(ptx_ir::InstrClass::from_name(class).is_some(), "{err}");
    // Not numbers at all (a hand-written profile; JSON cannot hold them, code can).
    for bad in [f64::INFINITY, f64::NAN, -1.0] {
        let mut p = vector_add();
        p.memory_accesses[0].executions = bad;
        let err = run_all(&p, &a100, &ModelConfig::uncalibrated()).expect_err("not a count");
        assert!(err.contains("memory access at PTX line") && err.contains("not a finite, non-negative number"), "{err}");
    }
}

#[test]
fn a_launch_of_more_than_2_64_threads_is_refused_without_overflow() {
    let mut p = vector_add();
    p.launch.grid = [u32::MAX; 3];
    p.launch.block = [1024, 1, 1];
    let err = run_all(&p, &GpuParams::a100_sxm4_80gb(), &ModelConfig::uncalibrated()).expect_err("overflowing launch");
    assert!(err.contains("more than 2^64 threads"), "{err}");
    // The launch's own arithmetic saturates instead of panicking.
    assert_eq!(p.launch.total_threads(), u64::MAX);
    assert_eq!(p.launch.checked_total_threads(), None);
}

#[test]
fn at_the_limits_every_model_stays_finite_and_the_same_models_apply() {
    // Just under 10^15 instructions per thread on the largest grid CUDA allows in x
    // (2^31 - 1 blocks) with 1024 threads (about 2 × 10^12 threads), on every GPU.
    for gpu in gpu_spec::Database::builtin().gpus() {
        let id = &gpu.id;
        let Ok(base) = run_all_for_gpu(&vector_add(), gpu, &ModelConfig::uncalibrated()) else { continue };
        let total = vector_add().counts.total_dynamic();
        let mut p = scaled(MAX_EXECUTIONS_PER_THREAD / total * 0.99);
        p.launch.grid = [i32::MAX as u32, 1, 1];
        p.launch.block = [1024, 1, 1];
        let mut small = vector_add();
        small.launch = p.launch.clone();
        let small = run_all_for_gpu(&small, gpu, &ModelConfig::uncalibrated()).unwrap_or_else(|e| panic!("{id}: {e}"));
        let r = run_all_for_gpu(&p, gpu, &ModelConfig::uncalibrated()).unwrap_or_else(|e| panic!("{id}: {e}"));
        for pred in &r.predictions {
            assert!(pred.time_us.is_finite() && pred.time_us > 0.0, "{id} {}: {}", pred.model, pred.time_us);
        }
        // No model dropped out because its arithmetic overflowed.
        assert_eq!(models(&r), models(&small), "{id}: {:?}", r.not_applicable);
        assert!(r.headline.time_us > base.headline.time_us * 1e6, "{id}: {}", r.headline.time_us);
    }
}
