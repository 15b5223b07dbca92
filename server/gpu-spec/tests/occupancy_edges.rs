//! Limits of the occupancy calculator that the golden vectors do not reach, found by
//! mutation testing (issue 19, `docs/testing.md`): each test sits on one side of a
//! comparison of `cuda_occupancy.h` (or the CC 1.x spreadsheet rules), with the expected
//! numbers derived by hand from the CUDA Programming Guide's limits.

use gpu_spec::occupancy::{self, DeviceProps, DeviceState, FuncAttrs, OccupancyError};
use gpu_spec::{ComputeCapability, Database};

fn props(major: u32, minor: u32, num_sms: u32) -> DeviceProps {
    let limits = Database::builtin().cc(ComputeCapability::new(major, minor)).expect("a known compute capability");
    DeviceProps::from_limits(limits, num_sms)
}

#[test]
fn a_carveout_above_100_percent_is_refused() {
    // `cudaOccSMemPerMultiprocessor`: a carveout is a percentage of the SM's shared memory.
    let p = props(8, 0, 108);
    let attrs = FuncAttrs::new(32, 0, &p);
    let at = |percent| occupancy::calculate(&p, &attrs, &DeviceState { carveout_percent: Some(percent), ..Default::default() }, 256, 0);
    assert!(at(100).is_ok());
    assert!(matches!(at(101), Err(OccupancyError::InvalidInput(m)) if m.contains("101%")), "{:?}", at(101));
}

#[test]
fn any_zero_device_property_is_an_invalid_input() {
    // One zero is enough (the header's `cudaOccInputCheck` tests each field).
    let base = props(8, 0, 108);
    let zeroed: [fn(&mut DeviceProps); 9] = [
        |p| p.max_threads_per_block = 0,
        |p| p.max_threads_per_sm = 0,
        |p| p.regs_per_block = 0,
        |p| p.regs_per_sm = 0,
        |p| p.warp_size = 0,
        |p| p.smem_per_block = 0,
        |p| p.smem_per_sm = 0,
        |p| p.num_sms = 0,
        |p| p.max_blocks_per_sm = 0,
    ];
    for (i, zero) in zeroed.iter().enumerate() {
        let mut p = base.clone();
        zero(&mut p);
        let attrs = FuncAttrs::new(32, 0, &base);
        let r = occupancy::calculate(&p, &attrs, &DeviceState::default(), 256, 0);
        assert!(matches!(&r, Err(OccupancyError::InvalidInput(m)) if m.contains("device properties")), "field {i}: {r:?}");
    }
}

#[test]
fn too_much_static_shared_memory_is_blamed_on_the_static_size() {
    // A100 (CC 8.0): a block may opt in to 163 KB (166912 B); 200 KB of static shared
    // memory cannot launch, and the reason names the per-block maximum, not the dynamic
    // limit (there is no dynamic shared memory here).
    let p = props(8, 0, 108);
    let attrs = FuncAttrs::new(32, 200 * 1024, &p);
    let o = occupancy::calculate(&p, &attrs, &DeviceState::default(), 256, 0).expect("valid input");
    assert_eq!(o.blocks_per_sm, 0);
    let why = o.reason.expect("a reason");
    assert!(why.contains("bytes of shared memory per block exceed the maximum"), "{why}");
    assert!(!why.contains("dynamic"), "{why}");
}

#[test]
fn cc1_blocks_at_the_thread_limit_fit_and_one_more_thread_does_not() {
    // CC 1.3 (Programming Guide Appendix A): 512 threads per block, 1024 per SM. A block
    // of exactly 512 threads (16 warps) fits twice; 513 threads cannot launch.
    let p = props(1, 3, 30);
    let attrs = FuncAttrs::new(0, 0, &p);
    let at = |threads| occupancy::calculate(&p, &attrs, &DeviceState::default(), threads, 0).expect("valid input");
    assert_eq!(at(512).blocks_per_sm, 2);
    assert_eq!(at(513).blocks_per_sm, 0);
}

#[test]
fn cc1_register_limit_is_inclusive() {
    // CC 1.3: at most 128 registers per thread; registers are allocated per block, warps
    // rounded up to 2, in 512-register units. 32 threads × 128 registers: 2 warps × 32 ×
    // 128 = 8192 registers per block, 16384 / 8192 = 2 blocks. 129 registers: none.
    let p = props(1, 3, 30);
    let at = |regs| occupancy::calculate(&p, &FuncAttrs::new(regs, 0, &p), &DeviceState::default(), 32, 0).expect("valid input");
    assert_eq!(at(128).blocks_per_sm, 2);
    assert_eq!(at(129).blocks_per_sm, 0);
    assert!(at(129).reason.expect("a reason").contains("registers"));
}
