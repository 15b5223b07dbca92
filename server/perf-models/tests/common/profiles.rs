//! Hand-written kernel profiles for the adapter tests: one load, and a whole profile with
//! everything a test does not state left empty (no loops, branches or assumptions).

use std::collections::BTreeMap;

use kernel_profile::{
    AccessClass, AccessKind, InstructionCounts, KernelProfile, LaunchConfig, LaunchSource,
    MemoryAccess, ProfileInput, ProfileOptions, Resources, Space,
};

/// A load of `bytes` per thread in `vector`-wide accesses, `transactions` per warp
/// request, executed `executions` times per thread.
pub fn load(space: Space, class: AccessClass, stride: Option<i64>, bytes: u32, vector: u8, transactions: f64, executions: f64) -> MemoryAccess {
    MemoryAccess {
        space,
        kind: AccessKind::Load,
        class,
        stride_bytes: stride,
        bytes_per_thread: bytes,
        vector_width: vector,
        transactions_per_request: transactions,
        bank_conflict_ways: None,
        mean_bank_conflict_ways: None,
        l1_wavefronts_per_request: None,
        lines_per_request: None,
        executions,
        spill: None,
        ptx_line: 1,
        source_file: None,
        source_line: None,
        same_address_lanes: None,
        data_span_bytes: None,
        active_lane_fraction: None,
        thread_reach: None,
        address: None,
        constant_operand: None,
        read_only: None,
        warp_aggregated: None,
        integer_atomic: None,
        pointer_chase: None,
        walk: None,
    }
}

/// The profile of `kernel` on `gpu` launched with `grid` × `block` (a setting), with
/// `resources` = (registers per thread, static shared bytes per block) as given figures.
pub fn profile(kernel: &str, gpu: &str, grid: [u32; 3], block: [u32; 3], resources: (u32, u32), counts: InstructionCounts, accesses: Vec<MemoryAccess>) -> KernelProfile {
    KernelProfile {
        kernel: kernel.into(),
        demangled: None,
        gpu: gpu.into(),
        launch: LaunchConfig {
            grid,
            block,
            dynamic_smem: 0,
            args: BTreeMap::new(),
            footprint_bytes: None, array_bytes: Default::default(),
            source: LaunchSource::Setting,
        },
        resources: Resources::given(resources.0, resources.1),
        counts,
        memory_accesses: accesses,
        loops: vec![],
        divergent_branches: vec![],
        blocks: vec![],
        assumptions: vec![],
    }
}

/// The profile `kernel_profile::build` makes of the first kernel of the PTX `text` whose name
/// contains `kernel`, for a GPU `gpu` of compute capability `cc`, launched as given with the
/// arguments `args` (by PTX parameter name or `param_N`).
pub fn built(text: &str, kernel: &str, gpu: &str, cc: (u32, u32), grid: [u32; 3], block: [u32; 3], args: &[(&str, i64)]) -> KernelProfile {
    let (module, errors) = ptx_ir::parse_and_lower(text);
    assert!(errors.is_empty(), "{errors:?}");
    let name = module.kernels().find(|k| k.name.contains(kernel)).expect("kernel").name.clone();
    let options = ProfileOptions::default();
    kernel_profile::build(&ProfileInput {
        module: &module,
        kernel: &name,
        gpu_id: gpu,
        compute_capability: cc,
        launch: LaunchConfig {
            grid,
            block,
            dynamic_smem: 0,
            args: args.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<_, _>>(),
            footprint_bytes: None,
            array_bytes: Default::default(),
            source: LaunchSource::Setting,
        },
        resources: None,
        source_param_names: &[],
        demangled: None,
        options: &options,
        stated_trips: &[],
    })
    .expect("profile")
}
