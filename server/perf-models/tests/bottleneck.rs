//! The `bottleneck` model on hand-built profiles whose answers can be derived by hand:
//! which resource binds, and the time it implies.

mod common;

use kernel_profile::{InstrClass, KernelProfile, LaunchSource};
use perf_models::bottleneck::{self, Params};
use perf_models::prediction::{Pipe, Prediction};
use perf_models::{Bound, ModelConfig};

fn vector_add() -> KernelProfile {
    serde_json::from_str(include_str!("fixtures/vector_add.json")).expect("fixture")
}

fn gpu(id: &str) -> gpu_spec::Gpu {
    gpu_spec::Database::builtin().gpu(id).expect("database GPU").clone()
}

fn launch(p: &mut KernelProfile, grid: u32, block: u32, dynamic_smem: u32) {
    p.launch.grid = [grid, 1, 1];
    p.launch.block = [block, 1, 1];
    p.launch.dynamic_smem = dynamic_smem;
    p.launch.source = LaunchSource::Setting;
}

/// A large vector add at full occupancy streams 12 bytes per element from and to DRAM:
/// the time is the bytes at the achievable bandwidth, and the bound is `dram`.
#[test]
fn a_large_vector_add_is_dram_bound_at_the_achievable_bandwidth() {
    let g = gpu("a100-sxm4-80gb");
    let mut p = vector_add();
    let n: u64 = 1 << 26;
    launch(&mut p, (n / 256) as u32, 256, 0);
    let pred = bottleneck::predict(&p, &g).expect("applies");
    assert_eq!(pred.bound, Bound::Dram, "{}", pred.explanation);
    let params = Params::from_gpu(&g);
    let bytes = 12.0 * n as f64;
    let floor_us = bytes / (params.dram_peak_bytes_per_s * params.dram_efficiency) * 1e6;
    // The other terms add a little through the p-norm; the launch overhead adds its µs.
    assert!(pred.time_us >= floor_us, "{} < {floor_us}", pred.time_us);
    assert!(pred.time_us <= 1.25 * floor_us + params.launch_overhead_us, "{} vs {floor_us}", pred.time_us);
}

/// The same kernel with one warp per block and two resident blocks per SM (a shared-memory
/// reservation forces it): the few loads in flight cannot cover the DRAM latency, the
/// bound is `latency`, and the time is waves × (chain + block overhead).
#[test]
fn at_very_low_occupancy_the_same_kernel_is_latency_bound() {
    let g = gpu("a100-sxm4-80gb");
    let mut p = vector_add();
    let n: u64 = 1 << 24;
    // 167,936 B of shared memory per SM; 70,000 B per block (plus 1 KiB reserved) leave
    // room for two blocks.
    launch(&mut p, (n / 32) as u32, 32, 70_000);
    let pred = bottleneck::predict(&p, &g).expect("applies");
    assert_eq!(pred.bound, Bound::Latency, "{}", pred.explanation);
    let params = Params::from_gpu(&g);
    let blocks = (n / 32) as f64;
    let waves = (blocks / 108.0).ceil() / 2.0;
    // At least one DRAM round trip and the block overhead per wave.
    let lower = waves.ceil() * (params.dram_latency_cycles / params.clock_hz * 1e6 + params.block_overhead_ns * 1e-3);
    assert!(pred.time_us > lower, "{} <= {lower}", pred.time_us);
    assert!(pred.time_us < 2.0 * lower, "{} vs {lower}", pred.time_us);
    // And it is far slower than the same work at full occupancy.
    let mut full = vector_add();
    launch(&mut full, (n / 256) as u32, 256, 0);
    let fast = bottleneck::predict(&full, &g).expect("applies");
    assert!(pred.time_us > 5.0 * fast.time_us);
}

/// A launch of one small block is shorter than the launch overhead.
#[test]
fn a_tiny_launch_is_launch_bound() {
    let g = gpu("a100-sxm4-80gb");
    let mut p = vector_add();
    launch(&mut p, 1, 32, 0);
    let pred = bottleneck::predict(&p, &g).expect("applies");
    assert_eq!(pred.bound, Bound::Launch, "{}", pred.explanation);
    let params = Params::from_gpu(&g);
    assert!(pred.time_us >= params.launch_overhead_us);
    assert!(pred.time_us < params.launch_overhead_us + 5.0);
}

/// A profile of `k` conflict-free shared loads and `k` FP32 FMAs per thread, alternating in
/// one basic block; each FMA reads the load before it when `fma_reads_load`, else nothing.
fn shared_loads_and_fmas(k: usize, fma_reads_load: bool) -> KernelProfile {
    let mut p = fma_chain(2 * k, InstrClass::Fp32, "fma.rn.f32");
    for (n, i) in p.blocks[0].instructions.iter_mut().enumerate() {
        i.deps.clear();
        if n % 2 == 0 {
            i.class = InstrClass::Load(kernel_profile::Space::Shared);
            i.opcode = "ld.shared.f32".into();
        } else if fma_reads_load {
            i.deps.push(n as u32 - 1);
        }
    }
    p.counts.dynamic.clear();
    p.counts.dynamic.insert(InstrClass::Fp32, k as f64);
    p.counts.dynamic.insert(InstrClass::Load(kernel_profile::Space::Shared), k as f64);
    p.memory_accesses = vec![serde_json::from_value(serde_json::json!({
        "ptx_line": 1, "space": "shared", "kind": "load", "bytes_per_thread": 4, "vector_width": 1,
        "class": "coalesced", "transactions_per_request": 1.0, "executions": k as f64,
        "bank_conflict_ways": 1
    }))
    .expect("access")];
    p
}

/// A profile of `k` dependent FP32 FMAs per thread (one basic block, each instruction
/// reading the previous one).
fn fma_chain(k: usize, class: InstrClass, opcode: &str) -> KernelProfile {
    let mut p = vector_add();
    p.memory_accesses.clear();
    p.counts.dynamic.clear();
    p.counts.dynamic.insert(class, k as f64);
    let instrs: Vec<kernel_profile::model::InstrNode> = (0..k)
        .map(|i| kernel_profile::model::InstrNode {
            class,
            opcode: opcode.into(),
            deps: if i == 0 { vec![] } else { vec![(i - 1) as u32] },
            fused_from: None,
            result_unused: false,
            reads_three_registers: false,
            access: None,
        })
        .collect();
    p.blocks = vec![kernel_profile::model::BlockProfile { id: 0, executions: 1.0, instructions: instrs, successors: vec![], active_lane_fraction: None, busiest_warp_executions: None, ptxas_copies: None }];
    p
}

/// A full SM of `k` independent `opcode` instructions per thread: 64 blocks of 256
/// threads per SM of `g`.
fn full_sm_profile(g: &gpu_spec::Gpu, k: usize, class: InstrClass, opcode: &str) -> KernelProfile {
    let mut p = fma_chain(k, class, opcode);
    for i in &mut p.blocks[0].instructions {
        i.deps.clear();
    }
    launch(&mut p, g.sm_count * 64, 256, 0);
    p
}

/// The prediction for [`full_sm_profile`] at the boost clock (the board's power limit
/// left out: the datasheets' peaks are at the boost clock).
fn full_sm_of(g: &gpu_spec::Gpu, k: usize, class: InstrClass, opcode: &str) -> Prediction {
    let p = full_sm_profile(g, k, class, opcode);
    let params = Params { power_budget: None, ..Params::from_gpu(g) };
    predict_with(&p, g, &params)
}

/// The model on a database GPU with explicit parameters.
fn predict_with(p: &KernelProfile, g: &gpu_spec::Gpu, params: &Params) -> Prediction {
    let resident = perf_models::gpu::resident_blocks(p, g).expect("fits");
    let est = bottleneck::estimate(p, params, resident, &bottleneck::cache_config(g, p, resident)).expect("applies");
    bottleneck::prediction(&est, params)
}

/// A full SM of FMAs on an L40 would draw more than its 300 W at the boost clock (its
/// 142 SMs issue 45 T lane instructions a second, 440 W at 9.7 pJ each, over its fixed
/// 177 W): it runs at the clock where the demand meets the limit, and its time stretches by
/// the clock's share. Without the limit it runs at the boost clock.
#[test]
fn a_power_limited_board_runs_clock_bound_work_at_the_clock_that_meets_its_limit() {
    let g = gpu("l40");
    let p = full_sm_profile(&g, 512, InstrClass::Fp32, "fma.rn.f32");
    let params = Params::from_gpu(&g);
    let budget = params.power_budget.clone().expect("the L40 has a budget");
    let boost = predict_with(&p, &g, &Params { power_budget: None, ..params.clone() });
    let limited = bottleneck::predict(&p, &g).expect("applies");
    let x = limited.breakdown[bottleneck::CLOCK_RATIO];
    assert!(x > budget.min_clock_ratio && x < 0.8, "{x}");
    assert!(!boost.breakdown.contains_key(bottleneck::CLOCK_RATIO));
    assert!((limited.breakdown["clock_mhz"] - x * g.boost_clock_mhz).abs() < 1e-6);
    assert!((limited.breakdown[bottleneck::BOOST_CLOCK_TIME_US] - boost.time_us).abs() < 1e-6 * boost.time_us);
    // The time stretches by the clock's share, within 5 %: the chain's per-block overhead is
    // in ns, not cycles, and queues with the rest of the chain for the slower pipe.
    let work = |pr: &Prediction| pr.time_us - pr.breakdown["launch_overhead_us"];
    assert!((work(&limited) * x / work(&boost) - 1.0).abs() < 0.05, "{} vs {} at {x}", limited.time_us, boost.time_us);
    // The demand at that clock is the limit (within the bisection's step).
    let demand = |pr: &Prediction, x: f64| budget.demand_w(perf_models::power_limit::lane_instructions(&p), pr.breakdown["dram_bytes"], pr.time_us, x);
    assert!(demand(&boost, 1.0) > budget.limit_w);
    let at = demand(&limited, x);
    assert!(at <= budget.limit_w && at > 0.99 * budget.limit_w, "{at}");
    assert!(limited.explanation.contains("power-limited"), "{}", limited.explanation);
    assert!(limited.assumptions.iter().any(|a| a.starts_with("power limit:")), "{:?}", limited.assumptions);
}

/// A locked SM clock: clock-bound work takes the lock's share of the boost clock's time (the
/// per-block overheads in ns aside), the power budget reckons each instruction's energy at
/// the lock's share of the rated boost clock, and a lock above it on a board whose limit
/// binds there is lowered by the limit, as the boost clock would be.
#[test]
fn a_locked_clock_runs_clock_bound_work_at_the_lock_and_the_limit_still_lowers_it() {
    let g = gpu("l40");
    let p = full_sm_profile(&g, 512, InstrClass::Fp32, "fma.rn.f32");
    let boost = predict_with(&p, &g, &Params { power_budget: None, ..Params::from_gpu(&g) });
    let half = g.with_locked_clock(0.5 * g.boost_clock_mhz).unwrap();
    let params = Params::from_gpu(&half);
    assert!(params.locked_clock && (params.clock_hz - 0.5 * g.boost_clock_mhz * 1e6).abs() < 1.0);
    let budget = params.power_budget.clone().expect("budget");
    assert!((budget.clock_share - 0.5).abs() < 1e-12);
    // At half the boost clock the demand is within the L40's 300 W: no lowering.
    let locked = bottleneck::predict(&p, &half).expect("applies");
    assert!(!locked.breakdown.contains_key(bottleneck::CLOCK_RATIO), "{}", locked.explanation);
    let work = |pr: &Prediction| pr.time_us - pr.breakdown["launch_overhead_us"];
    assert!((work(&locked) / work(&boost) - 2.0).abs() < 0.1, "{} vs {}", locked.time_us, boost.time_us);
    assert!(locked.assumptions.iter().any(|a| a.starts_with("SM clock locked at")), "{:?}", locked.assumptions);
    // The instructions' energy at the lock is lane_energy_factor(0.5) of the boost clock's.
    let lanes = perf_models::power_limit::lane_instructions(&p);
    let unlocked = Params::from_gpu(&g).power_budget.expect("budget");
    let t = locked.time_us;
    let dyn_at = |b: &perf_models::power_limit::Budget| b.demand_w(lanes, 0.0, t, 1.0) - b.fixed_w;
    assert!((dyn_at(&budget) / dyn_at(&unlocked) - perf_models::power_limit::lane_energy_factor(0.5)).abs() < 1e-9);
    // Locked at 1.2 times the boost clock the demand exceeds the limit further: the limit
    // lowers the clock below the lock, to the same clock as from the boost clock (within the
    // bisection's step), and the explanation names the locked clock.
    let high = g.with_locked_clock(1.2 * g.boost_clock_mhz).unwrap();
    let limited_high = bottleneck::predict(&p, &high).expect("applies");
    let limited = bottleneck::predict(&p, &g).expect("applies");
    let mhz = |pr: &Prediction| pr.breakdown["clock_mhz"];
    assert!((mhz(&limited_high) - mhz(&limited)).abs() < 0.003 * g.boost_clock_mhz, "{} vs {}", mhz(&limited_high), mhz(&limited));
    assert!(limited_high.explanation.contains("MHz locked clock"), "{}", limited_high.explanation);
}

/// A DRAM-bound kernel on a board whose limit its demand exceeds: the clock falls until the
/// instructions' share of the demand makes room, and the time stays the DRAM time (the
/// bytes take as long at any clock).
#[test]
fn dram_bound_work_keeps_its_time_when_the_clock_falls() {
    let mut g = gpu("l40");
    let mut p = vector_add();
    let n: u64 = 1 << 27;
    launch(&mut p, (n / 256) as u32, 256, 0);
    let free = bottleneck::predict(&p, &g).expect("applies");
    assert!(!free.breakdown.contains_key(bottleneck::CLOCK_RATIO), "{}", free.explanation);
    // A 120 W limit: the board's fixed draw (idle and the interface's share of its range)
    // and the kernel's DRAM bytes and instructions exceed it at the boost clock.
    g.tdp_w = 120.0;
    let budget = Params::from_gpu(&g).power_budget.expect("budget");
    assert!(budget.demand_w(perf_models::power_limit::lane_instructions(&p), free.breakdown["dram_bytes"], free.time_us, 1.0) > g.tdp_w, "{budget:?}");
    let limited = bottleneck::predict(&p, &g).expect("applies");
    let x = limited.breakdown[bottleneck::CLOCK_RATIO];
    assert!(x < 1.0, "{x}");
    assert_eq!(limited.bound, Bound::Dram, "{}", limited.explanation);
    // The latency and issue terms stretch by 1/x and the smooth maximum feels them a little;
    // the time does not follow the clock.
    assert!(limited.time_us < 1.1 * free.time_us && limited.time_us * x < free.time_us, "{} vs {} at {x}", limited.time_us, free.time_us);
}

/// One warp per SM running a chain of dependent FMAs waits the FMA latency per
/// instruction: latency-bound at k × 4 cycles. With the SM full of warps the same chains
/// overlap and the FP32 pipe (or the issue slots) binds instead.
#[test]
fn a_dependent_fma_chain_is_latency_bound_alone_and_pipe_bound_when_the_sm_is_full() {
    let g = gpu("a100-sxm4-80gb");
    let params = Params::from_gpu(&g);
    let k = 4096;
    let mut alone = fma_chain(k, InstrClass::Fp32, "fma.rn.f32");
    launch(&mut alone, 108, 32, 0);
    let pred = bottleneck::predict(&alone, &g).expect("applies");
    assert_eq!(pred.bound, Bound::Latency, "{}", pred.explanation);
    let chain_us = k as f64 * params.alu_latency_cycles / params.clock_hz * 1e6;
    assert!(pred.time_us > chain_us && pred.time_us < 1.2 * chain_us + params.launch_overhead_us + 1.0, "{} vs {chain_us}", pred.time_us);

    let mut full = fma_chain(k, InstrClass::Fp32, "fma.rn.f32");
    launch(&mut full, 108 * 64, 1024, 0);
    let pred = bottleneck::predict(&full, &g).expect("applies");
    assert!(matches!(pred.bound, Bound::Pipe(Pipe::Fp32) | Bound::Issue), "{}", pred.explanation);
    // 64 blocks per SM × 32 warps × k FMAs × 32 lanes at 64 FP32 results per cycle.
    let pipe_us = 64.0 * 32.0 * k as f64 * 32.0 / 64.0 / params.clock_hz * 1e6;
    assert!(pred.time_us >= pipe_us && pred.time_us < 1.5 * pipe_us, "{} vs {pipe_us}", pred.time_us);
}

/// Each part of the chain queues for the units it waits on, with the one κ: a chain of
/// FMAs (nothing off-chip) for the SM's pipes, whose time is the root of
/// `T = T_lat + κ·T_lat·v/(1 − v)`, `v = T_sm / T` — more than the larger of its terms, and
/// none of it from the memory queue; the vector add with a load on its chain, at the
/// occupancy where its latency and DRAM terms meet, for the memory system (the queueing of
/// `Combining the terms` in docs/models/bottleneck.md). With κ = 0 both take the larger term.
#[test]
fn each_part_of_the_chain_queues_for_what_it_waits_on() {
    let g = gpu("a100-sxm4-80gb");
    let params = Params::from_gpu(&g);
    let kappa = params.latency_exposure;
    assert!(kappa > 0.0);
    let throughput_max = |pred: &Prediction| {
        pred.breakdown
            .iter()
            .filter(|(k, _)| k.ends_with("_us") && !matches!(k.as_str(), "latency_us" | "phase_us" | "launch_overhead_us"))
            .map(|(_, v)| *v)
            .fold(0.0_f64, f64::max)
    };
    // 4096 dependent FMAs in 8 warps per SM: the chain (4096 × 4 cycles per wave) and the
    // FP32 pipe are of the same order, and nothing waits on memory.
    let mut fmas = fma_chain(4096, InstrClass::Fp32, "fma.rn.f32");
    launch(&mut fmas, 108 * 8, 32, 0);
    let pred = bottleneck::predict(&fmas, &g).expect("applies");
    assert_eq!(pred.breakdown["chain_offchip_cycles"], 0.0);
    let (thr, lat) = (throughput_max(&pred), pred.breakdown["latency_us"]);
    let t = pred.time_us - params.launch_overhead_us;
    assert!(t > thr.max(lat) * 1.01, "{t} vs {thr} and {lat}");
    let v = thr / t;
    let rhs = lat + kappa * lat * v / (1.0 - v);
    assert!((rhs - t).abs() < 1e-6 * t, "{t} does not solve T = T_lat + κ·T_lat·v/(1 − v) ({rhs})");
    let no_queue = Params { latency_exposure: 0.0, ..params.clone() };
    let t0 = predict_with(&fmas, &g, &no_queue).time_us - params.launch_overhead_us;
    assert!((t0 - thr.max(lat)).abs() < 1e-6, "{t0} vs {}", thr.max(lat));
    // The vector add at the occupancy where its latency and DRAM terms cross.
    let mut add = vector_add();
    launch(&mut add, 1 << 18, 256, 40_000);
    let pred = bottleneck::predict(&add, &g).expect("applies");
    let (thr, lat) = (throughput_max(&pred), pred.breakdown["latency_us"]);
    assert!(pred.breakdown["chain_offchip_cycles"] > 0.0);
    assert!(pred.time_us > thr.max(lat) + params.launch_overhead_us + 0.01 * thr.max(lat), "{} vs {thr} and {lat}", pred.time_us);
}

/// The breakdown says what the chain waits on: the low-occupancy vector add's chain is its
/// two loads (issued together, one latency) and a few ALU cycles; the FMA chain has no load.
#[test]
fn the_breakdown_splits_the_chain_into_off_chip_loads_and_the_rest() {
    let g = gpu("a100-sxm4-80gb");
    let params = Params::from_gpu(&g);
    let mut p = vector_add();
    launch(&mut p, (1 << 19) as u32, 32, 70_000);
    let pred = bottleneck::predict(&p, &g).expect("applies");
    let (chain, offchip) = (pred.breakdown["chain_cycles"], pred.breakdown["chain_offchip_cycles"]);
    // One load latency (at least the L1's) on the critical path, and the adds, address
    // arithmetic and conversions around it.
    assert!(offchip >= params.l1_latency_cycles && offchip < chain, "{offchip} of {chain}");
    assert!(chain - offchip < 20.0 * params.sfu_latency_cycles, "{offchip} of {chain}");

    let mut fma = fma_chain(256, InstrClass::Fp32, "fma.rn.f32");
    launch(&mut fma, 108, 32, 0);
    let pred = bottleneck::predict(&fma, &g).expect("applies");
    assert_eq!(pred.breakdown["chain_offchip_cycles"], 0.0);
    assert_eq!(pred.breakdown["chain_cycles"], 256.0 * params.alu_latency_cycles);
}

/// The vector add with, after its loads, a barrier and `k` independent FP32 instructions per
/// thread (a block that loads a tile, meets at `__syncthreads()`, then computes on it).
fn load_barrier_compute(k: usize, with_barrier: bool) -> KernelProfile {
    use kernel_profile::model::{BlockProfile, InstrNode};
    let mut p = vector_add();
    let node = |class, opcode: &str| InstrNode { class, opcode: opcode.into(), deps: vec![], fused_from: None, result_unused: false, reads_three_registers: false, access: None };
    let mut instrs = Vec::new();
    if with_barrier {
        instrs.push(node(InstrClass::Barrier, "bar.sync"));
        p.counts.dynamic.insert(InstrClass::Barrier, 1.0);
    }
    instrs.extend((0..k).map(|_| node(InstrClass::Fp32, "fma.rn.f32")));
    *p.counts.dynamic.entry(InstrClass::Fp32).or_default() += k as f64;
    p.blocks[1].successors = vec![3];
    p.blocks.push(BlockProfile { id: 3, executions: 1.0, instructions: instrs, successors: vec![2], active_lane_fraction: None, busiest_warp_executions: None, ptxas_copies: None });
    p
}

/// Barrier phases: with one resident block per SM, a block that waits for its loads and
/// then computes after a barrier cannot overlap the two, so a wave takes at least the loads'
/// latency plus the block's own FP32 work (32 warps × k instructions × 32 lanes at 64 results
/// per cycle), and the bound is `latency`. Without the barrier the same instructions overlap
/// with the loads of the block's other warps and the time is below that sum.
#[test]
fn a_block_that_loads_then_computes_after_a_barrier_pays_both_one_after_the_other() {
    let g = gpu("a100-sxm4-80gb");
    let params = Params::from_gpu(&g);
    let k = 256;
    // 1024 threads and 100,000 B of shared memory per block: one resident block per SM;
    // 64 blocks per SM.
    let configure = |with_barrier| {
        let mut p = load_barrier_compute(k, with_barrier);
        launch(&mut p, 108 * 64, 1024, 100_000);
        bottleneck::predict(&p, &g).expect("applies")
    };
    let phased = configure(true);
    assert_eq!(phased.bound, Bound::Latency, "{}", phased.explanation);
    assert!(phased.explanation.contains("barrier phases"), "{}", phased.explanation);
    let own_cycles = 32.0 * k as f64 * 32.0 / 64.0;
    assert!((phased.breakdown["phase_demand_cycles"] - own_cycles).abs() < 0.05 * own_cycles, "{:?}", phased.breakdown);
    let offchip = phased.breakdown["chain_offchip_cycles"];
    assert!(offchip >= params.l1_latency_cycles, "{offchip}");
    let lower = 64.0 * (offchip + own_cycles) / params.clock_hz * 1e6;
    assert!(phased.time_us >= lower, "{} < {lower}", phased.time_us);
    assert!(phased.time_us < 1.3 * lower + params.launch_overhead_us, "{} vs {lower}", phased.time_us);

    let free = configure(false);
    assert!(!free.breakdown.contains_key("phase_us"), "{:?}", free.breakdown);
    assert!(free.time_us < lower, "{} vs {lower}: {}", free.time_us, free.explanation);
}

/// FP64 on a GeForce card runs at 1/64 of FP32: an FP64-heavy kernel binds on that pipe.
#[test]
fn fp64_work_on_a_geforce_card_binds_on_the_fp64_pipe() {
    let g = gpu("rtx-3090");
    let mut p = fma_chain(256, InstrClass::Fp64, "fma.rn.f64");
    // Independent chains: make every instruction depend on nothing.
    for b in &mut p.blocks {
        for i in &mut b.instructions {
            i.deps.clear();
        }
    }
    launch(&mut p, 82 * 64, 256, 0);
    let pred = bottleneck::predict(&p, &g).expect("applies");
    assert_eq!(pred.bound, Bound::Pipe(Pipe::Fp64), "{}", pred.explanation);
    assert_eq!(pred.bound.name(), "fp64");
}

/// Conversions from and to 64-bit types run on the FP64 pipe at the CUDA guide's rate for
/// them (2 per clock per SM on CC 8.6, 16 on 8.0), a double clamp (`cvt.sat.f64.f64`) as an
/// FP64 compare (its second compare, selects and moves are the expansion that
/// `kernel_profile::sass` adds to a profile built from PTX, not to this hand-made one);
/// conversions between 32-bit types stay on the conversion pipe (16 per clock), except a
/// half or bfloat16 widened to a float (`HADD2.F32`, `PRMT`: the FMA and integer pipes).
#[test]
fn conversions_from_and_to_64_bit_types_run_on_the_fp64_pipe() {
    let k = 256;
    let fp64_us = |gpu_id: &str, opcode: &str| {
        let g = gpu(gpu_id);
        let pred = full_sm_of(&g, k, InstrClass::Conversion, opcode);
        let term = |name: &str| pred.breakdown.get(&format!("{name}_us")).copied().unwrap_or(0.0);
        let (fp64, conversion) = (term("fp64"), term("conversion"));
        (pred, fp64, conversion)
    };
    let g = gpu("rtx-3090");
    let us_at = |rate: f64| f64::from(g.sm_count * 64 * 256) * k as f64 / f64::from(g.sm_count) / rate / (g.boost_clock_mhz * 1e6) * 1e6;
    for opcode in ["cvt.f64.f32", "cvt.rn.f32.f64", "cvt.rn.f64.s32", "cvt.rn.f32.s64", "cvt.rzi.s64.f32"] {
        let (pred, fp64, conv) = fp64_us("rtx-3090", opcode);
        assert_eq!(pred.bound, Bound::Pipe(Pipe::Fp64), "{opcode}: {}", pred.explanation);
        assert!((fp64 / us_at(2.0) - 1.0).abs() < 1e-9 && conv == 0.0, "{opcode}: fp64 {fp64} µs, conversion {conv} µs");
    }
    let (pred, fp64, _) = fp64_us("rtx-3090", "cvt.sat.f64.f64");
    assert!((fp64 / us_at(2.0) - 1.0).abs() < 1e-9, "a clamp is an FP64 compare and its expansion: {}", pred.explanation);
    for opcode in ["cvt.rn.f32.s32", "cvt.rn.f16.f32", "cvt.s64.s32", "cvt.u32.u64"] {
        let (pred, fp64, conv) = fp64_us("rtx-3090", opcode);
        assert!(fp64 == 0.0 && (conv / us_at(16.0) - 1.0).abs() < 1e-9, "{opcode} stays a conversion: {}", pred.explanation);
    }
    for opcode in ["cvt.f32.f16", "cvt.f32.bf16"] {
        let (pred, _, conv) = fp64_us("rtx-3090", opcode);
        assert!(conv == 0.0 && pred.bound != Bound::Pipe(Pipe::Conversion), "{opcode} widens off the conversion unit: {}", pred.explanation);
    }
    // Before Turing (a Pascal card), widening a half is a conversion still.
    let (pred, _, conv) = fp64_us("tesla-p100-pcie-16gb", "cvt.f32.f16");
    assert!(conv > 0.0, "{}", pred.explanation);
    // Half the conversions widening halves, half to 64 bits: the FP64 pipe takes the half
    // that is 64-bit whole, the conversion unit none.
    let mut mixed = full_sm_profile(&g, k, InstrClass::Conversion, "cvt.f64.f32");
    for (n, i) in mixed.blocks[0].instructions.iter_mut().enumerate() {
        if n % 2 == 1 && i.class == InstrClass::Conversion {
            i.opcode = "cvt.f32.f16".into();
        }
    }
    let params = Params { power_budget: None, ..Params::from_gpu(&g) };
    let pred = predict_with(&mixed, &g, &params);
    let fp64 = pred.breakdown.get("fp64_us").copied().unwrap_or(0.0);
    assert!((fp64 / (us_at(2.0) / 2.0) - 1.0).abs() < 0.02 && pred.breakdown.get("conversion_us").copied().unwrap_or(0.0) < 1e-9, "{}", pred.explanation);
    // On the A100 the table gives 16 per clock for 64-bit conversions against 32 FP64
    // results: each takes two FP64 results' time.
    let a100 = gpu("a100-sxm4-80gb");
    let (_, fp64, _) = fp64_us("a100-sxm4-80gb", "cvt.f64.f32");
    let at_16 = f64::from(a100.sm_count * 64 * 256) * k as f64 / f64::from(a100.sm_count) / 16.0 / (a100.boost_clock_mhz * 1e6) * 1e6;
    assert!((fp64 / at_16 - 1.0).abs() < 1e-9, "{fp64} µs against {at_16}");
}

/// A full SM of independent instructions, half FP32 FMAs and half of `int_opcode`.
fn fp32_and_int(gpu_id: &str, int_opcode: &str) -> (Prediction, Params) {
    let g = gpu(gpu_id);
    let k = 1024;
    let mut p = fma_chain(2 * k, InstrClass::Fp32, "fma.rn.f32");
    for (n, i) in p.blocks[0].instructions.iter_mut().enumerate() {
        i.deps.clear();
        if n % 2 == 1 {
            i.class = InstrClass::IntAlu;
            i.opcode = int_opcode.into();
        }
    }
    p.counts.dynamic.clear();
    p.counts.dynamic.insert(InstrClass::Fp32, k as f64);
    p.counts.dynamic.insert(InstrClass::IntAlu, k as f64);
    launch(&mut p, g.sm_count * 64, 256, 0);
    (bottleneck::predict(&p, &g).expect("applies"), Params::from_gpu(&g))
}

/// Which integer instructions take turns with FP32. On an A100 the ALU pipe runs integer
/// adds beside the FMA pipe's FP32 (each at 64 per cycle), while integer multiply-adds
/// (`mad.lo` → IMAD) share the FMA pipe with FP32 (Nsight Compute Kernel Profiling Guide,
/// "Pipelines"). Before Volta one set of CUDA cores does both (Tesla V100 whitepaper:
/// "Pascal GPUs ... could not execute FP32 and INT32 instructions simultaneously").
#[test]
fn integer_multiply_adds_share_the_fma_pipe_and_pre_volta_cores_share_everything() {
    let pipe_us = |pred: &Prediction, pipe: &str| pred.breakdown.get(&format!("{pipe}_us")).copied().unwrap_or(0.0);
    // 64 blocks × 8 warps per SM × 1024 instructions × 32 lanes at 64 per cycle.
    let cycles = |p: &Params, rate: f64| 64.0 * 8.0 * 1024.0 * 32.0 / rate / p.clock_hz * 1e6;

    let (adds, p) = fp32_and_int("a100-sxm4-80gb", "add.s32");
    assert!((pipe_us(&adds, "fp32") - cycles(&p, 64.0)).abs() < 1e-6 * cycles(&p, 64.0), "{:?}", adds.breakdown);
    assert!((pipe_us(&adds, "int") - cycles(&p, 64.0)).abs() < 1e-6 * cycles(&p, 64.0), "{:?}", adds.breakdown);
    let (mads, p) = fp32_and_int("a100-sxm4-80gb", "mad.lo.s32");
    assert!((pipe_us(&mads, "fp32") - 2.0 * cycles(&p, 64.0)).abs() < 1e-6 * cycles(&p, 64.0), "{:?}", mads.breakdown);
    assert_eq!(pipe_us(&mads, "int"), 0.0);
    assert_eq!(mads.bound, Bound::Pipe(Pipe::Fp32), "{}", mads.explanation);
    assert!(mads.explanation.contains("integer multiply-add warp instructions on the same FMA pipe"), "{}", mads.explanation);

    // GA10x: FP32 at 128 per cycle over both FMA halves, IMAD on the heavy half only (the
    // table's `int_mul`, 64): 1024 FP32 + 1024 IMAD take max(1024/64, 2048/128) = 16 units.
    let (mads, p) = fp32_and_int("rtx-3090", "mad.lo.s32");
    assert!((pipe_us(&mads, "fp32") - cycles(&p, 64.0)).abs() < 1e-6 * cycles(&p, 64.0), "{:?}", mads.breakdown);

    // Pascal: the integer adds wait for the same cores as the FP32 (128 each per cycle).
    let (adds, p) = fp32_and_int("gtx-1080", "add.s32");
    assert!(p.fp32_int_shared);
    let both = pipe_us(&adds, "fp32");
    assert!((both - 2.0 * cycles(&p, 128.0)).abs() < 1e-6 * both, "{:?}", adds.breakdown);
    assert_eq!(pipe_us(&adds, "int"), 0.0);
}

/// Tensor-core work costs its multiply-adds at the architecture's dense rate per SM: on an
/// A100 (1024 FP16 FMA per clock per SM, A100 whitepaper) an `mma.sync` of shape
/// m16n8k16 (2048 multiply-adds) takes 2 cycles of the SM, a `wmma` m16n16k16 (4096) 4;
/// on a GeForce RTX 3090 (512 per clock, FP32 accumulation at half rate: GA102 whitepaper)
/// the same `mma` with an FP32 accumulator takes 8, with FP16 4; on a TITAN RTX (a Turing
/// SM, 512 per clock, full rate with FP32 accumulation) 4.
#[test]
fn tensor_instructions_cost_their_multiply_adds_at_the_dense_rate() {
    let per_instr = |gpu_id: &str, opcode: &str| -> f64 {
        let g = gpu(gpu_id);
        let k = 512;
        let params = Params::from_gpu(&g);
        let pred = full_sm_of(&g, k, InstrClass::Tensor, opcode);
        // 64 blocks × 8 warps per SM × k instructions.
        pred.breakdown["tensor_us"] * 1e-6 * params.clock_hz / (64.0 * 8.0 * k as f64)
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
    let mma_f32 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
    let mma_f16 = "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16";
    let wmma = "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32";
    assert!(close(per_instr("a100-sxm4-80gb", mma_f32), 2.0));
    assert!(close(per_instr("a100-sxm4-80gb", wmma), 4.0));
    assert!(close(per_instr("a100-sxm4-80gb", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), 2.0));
    assert!(close(per_instr("rtx-3090", mma_f32), 8.0));
    assert!(close(per_instr("rtx-3090", mma_f16), 4.0));
    assert!(close(per_instr("titan-rtx", mma_f32), 4.0));
    // A Hopper warpgroup MMA: m64n128k16 over the warpgroup's four warps, at the 1893
    // multiply-adds per boost cycle of the H100's datasheet (its 2048 per clock at the
    // 1830 MHz its tensor figures hold at: `full_sms_of_fmas_reach_the_datasheet_peaks`).
    let hopper = 1893.0;
    assert!(close(per_instr("h100-sxm", "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"), 64.0 * 128.0 * 16.0 / 4.0 / hopper));
    // The warp-level forms on Hopper reach about 2/3 of that rate (FlashAttention-3 paper,
    // gpu-data `bottleneck.sync_mma_rate_fraction`): 2048 / (1893 × 0.67) cycles.
    assert!(close(per_instr("h100-sxm", mma_f32), 2048.0 / (hopper * 0.67)));
    assert!(close(per_instr("h100-sxm", wmma), 4096.0 / (hopper * 0.67)));
    assert_eq!(Params::from_gpu(&gpu("a100-sxm4-80gb")).sync_mma_fraction, 1.0);
}

/// Half-precision arithmetic: the CUDA guide's table counts a half2 lane as two results
/// and ptxas issues a single half as the same instruction, so an FP16 warp instruction
/// takes 64 of the table's results. A full SM of independent `fma.rn.f16x2` runs at 2 warp
/// instructions per cycle on a GA102 (FP16 at the FP32 rate, 128 results per clock: GA102
/// whitepaper, RTX 3090 35.6 non-tensor FP16 TFLOPS) and on a Turing SM (128: twice its
/// FP32), and at 4 on an A100 (256), where the four schedulers' issue slots bind as well.
#[test]
fn half2_arithmetic_takes_two_results_per_lane() {
    let run = |gpu_id: &str, opcode: &str| -> (Prediction, Params) {
        let g = gpu(gpu_id);
        (full_sm_of(&g, 1024, InstrClass::Fp16, opcode), Params::from_gpu(&g))
    };
    // 64 blocks × 8 warps per SM × 1024 instructions at `per_cycle` warp instructions.
    let us = |p: &Params, per_cycle: f64| 64.0 * 8.0 * 1024.0 / per_cycle / p.clock_hz * 1e6;
    let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b;
    for (id, per_cycle) in [("rtx-3090", 2.0), ("titan-rtx", 2.0), ("a100-sxm4-80gb", 4.0)] {
        for opcode in ["fma.rn.f16x2", "add.f16"] {
            let (pred, p) = run(id, opcode);
            assert!(close(pred.breakdown["fp16_us"], us(&p, per_cycle)), "{id} {opcode}: {:?}", pred.breakdown);
        }
    }
    let (pred, _) = run("rtx-3090", "fma.rn.f16x2");
    assert_eq!(pred.bound, Bound::Pipe(Pipe::Fp16), "{}", pred.explanation);
    assert!(pred.explanation.contains("64 per warp instruction"), "{}", pred.explanation);
}

/// A grid of `blocks` blocks of 256 threads, each making 16 global atomics: on addresses
/// with `same_address` lanes of a request on one (`None`: data-dependent, over a table of
/// `span` bytes when given).
fn atomic_profile(same_address: Option<u32>, span: Option<u64>, blocks: u32) -> KernelProfile {
    let mut p = vector_add();
    let mut a = p.memory_accesses[0].clone();
    a.kind = kernel_profile::AccessKind::Atomic;
    a.class = if same_address.is_some() { kernel_profile::AccessClass::Coalesced } else { kernel_profile::AccessClass::Irregular };
    a.same_address_lanes = same_address;
    a.data_span_bytes = span;
    a.address = None;
    a.executions = 16.0;
    p.memory_accesses = vec![a];
    p.counts.dynamic.clear();
    p.counts.dynamic.insert(InstrClass::Atomic(kernel_profile::Space::Global), 16.0);
    launch(&mut p, blocks, 256, 0);
    p
}

/// An atomic whose address depends on data (a histogram's `atomicAdd(&bins[data[i]], 1)`)
/// is counted at the least contention, one lane per warp request; where all 32 lanes on one
/// address (one L2 operation each, `atomic_serial_ns` apart) would take much longer, the prediction
/// says it is a lower bound, gives the other end, and has low confidence. Atomics with
/// known, distinct addresses keep the usual confidence.
#[test]
fn data_dependent_atomics_are_a_lower_bound_with_their_worst_case() {
    let g = gpu("a100-sxm4-80gb");
    let params = Params::from_gpu(&g);
    let with_atomic = |same_address: Option<u32>| bottleneck::predict(&atomic_profile(same_address, None, 108 * 8), &g).expect("applies");
    let unknown = with_atomic(None);
    assert_eq!(unknown.bound, Bound::Atomics, "{}", unknown.explanation);
    assert_eq!(unknown.confidence, perf_models::prediction::Confidence::Low);
    // 864 blocks × 8 warps × 16 requests × 32 lanes, `atomic_serial_ns` each.
    let worst_us = 864.0 * 8.0 * 16.0 * 32.0 * params.atomic_serial_ns / 1e3;
    assert!(unknown.explanation.contains(&format!("up to {worst_us:.3} µs if their lanes hit one address")), "{}", unknown.explanation);
    assert!(unknown.time_us < worst_us / 10.0, "{} µs", unknown.time_us);
    let distinct = with_atomic(Some(1));
    assert_eq!(distinct.confidence, perf_models::prediction::Confidence::Medium, "{}", distinct.explanation);
    assert!(!distinct.explanation.contains("at least"), "{}", distinct.explanation);
}

/// Atomics take `atomic_serial_ns` each in the L2 slice of their line: the 32 lanes of a
/// request on one address are 32 in turn; a byte histogram's lanes spread over the 8 lines
/// of its 256 counters are an eighth of that; the time is the same in ns on every GPU.
#[test]
fn atomics_on_one_line_take_their_time_in_turn() {
    let atomics_us = |id: &str, same_address: Option<u32>, span: Option<u64>| {
        let g = gpu(id);
        let pred = bottleneck::predict(&atomic_profile(same_address, span, 1024), &g).expect("applies");
        (pred.breakdown["atomics_us"], Params::from_gpu(&g).atomic_serial_ns)
    };
    // 1024 blocks × 8 warps × 16 requests = 131,072 requests.
    let requests = 1024.0 * 8.0 * 16.0;
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
    for id in ["rtx-3090", "a100-sxm4-80gb", "h100-sxm"] {
        let (one_address, ns) = atomics_us(id, Some(32), None);
        assert!(close(one_address, requests * 32.0 * ns / 1e3), "{id}: {one_address} µs");
        assert_eq!(ns, bottleneck::fitted::ATOMIC_SERIAL_NS);
        let (table, _) = atomics_us(id, None, Some(1024));
        assert!(close(table, requests * 32.0 / 8.0 * ns / 1e3), "{id}: {table} µs");
    }
}

/// Atomics on integer data take the architecture's own time per operation where gpu-data
/// has one (Turing, GA10x and GH100, measured on one address: 0.56, 0.54 and 0.73 ns), two
/// to three times less than float adds (1.6 ns on the RTX 3090); elsewhere both take
/// `atomic_serial_ns`.
#[test]
fn integer_atomics_take_their_own_time_where_an_architecture_has_one() {
    let requests = 1024.0 * 8.0 * 16.0;
    let us = |id: &str, integer: Option<bool>| {
        let mut p = atomic_profile(Some(32), None, 1024);
        p.memory_accesses[0].integer_atomic = integer;
        let pred = bottleneck::predict(&p, &gpu(id)).expect("applies");
        assert!(pred.explanation.contains("atomic"), "{}", pred.explanation);
        pred.breakdown["atomics_us"]
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
    for (id, ns) in [("rtx-3090", 0.54), ("rtx-3060", 0.54), ("rtx-2060", 0.56), ("h100-sxm", 0.73), ("h200", 0.73)] {
        assert_eq!(Params::from_gpu(&gpu(id)).integer_atomic_serial_ns, ns, "{id}");
        assert!(close(us(id, Some(true)), requests * 32.0 * ns / 1e3), "{id}");
        assert!(close(us(id, Some(false)), requests * 32.0 * bottleneck::fitted::ATOMIC_SERIAL_NS / 1e3), "{id}");
    }
    let a100 = Params::from_gpu(&gpu("a100-sxm4-80gb"));
    assert_eq!(a100.integer_atomic_serial_ns, a100.atomic_serial_ns);
    assert!(close(us("a100-sxm4-80gb", Some(true)), us("a100-sxm4-80gb", Some(false))));
}

/// A store sends one request to L2 per 128-byte line a warp's store touches, one every
/// `store_request_cycles` per SM: a vector add whose store touches 32 lines per warp store
/// (the sectors it moves held at the coalesced four, so that only the requests differ)
/// takes 32 × 4.73 cycles per warp store in the `l1` term, and binds there; with one line
/// per store it stays DRAM-bound and the requests take 1/32 of that.
#[test]
fn scattered_stores_take_a_request_to_l2_per_line() {
    let g = gpu("rtx-3070-ti");
    let n: u64 = 1 << 26;
    let predict = |lines: f64| {
        let mut p = vector_add();
        launch(&mut p, (n / 256) as u32, 256, 0);
        p.launch.args.insert("n".into(), n as i64);
        let store = p.memory_accesses.iter_mut().find(|a| a.kind == kernel_profile::AccessKind::Store).expect("store");
        store.lines_per_request = Some(lines);
        bottleneck::predict(&p, &g).expect("applies")
    };
    let column = predict(32.0);
    assert_eq!(column.bound, Bound::L1, "{}", column.explanation);
    assert!(column.explanation.contains("store requests to L2"), "{}", column.explanation);
    let warp_stores_per_sm = (n / 32) as f64 / f64::from(g.sm_count);
    let expected_us = warp_stores_per_sm * 32.0 * bottleneck::fitted::STORE_REQUEST_CYCLES / (g.boost_clock_mhz * 1e6) * 1e6;
    assert!((column.breakdown["l1_us"] / expected_us - 1.0).abs() < 0.01, "{} µs against {expected_us} µs", column.breakdown["l1_us"]);
    let coalesced = predict(1.0);
    assert_eq!(coalesced.bound, Bound::Dram, "{}", coalesced.explanation);
}

/// A matrix sum down the columns of 8192 × 8192 floats (rows of 32 KiB) in 8 × 8 blocks:
/// the resident blocks hold one 32-byte sector of each of thousands of rows at a time, so
/// on GDDR every sector costs a row activation, `dram_activation_bytes` of bus time (the
/// DRAM term is the sectors × that, not the bytes); on HBM (`dram_activation_bytes` 0) the
/// bytes. The same sum along the rows fills whole pages: the bytes on both.
#[test]
fn sectors_one_per_dram_page_take_a_row_activation_each_on_gddr() {
    let n: i64 = 8192;
    let row = 4 * n;
    let sum = |down_columns: bool| {
        let mut p = vector_add();
        p.launch.grid = [1024, 1024, 1];
        p.launch.block = [8, 8, 1];
        p.launch.source = LaunchSource::Setting;
        for (i, a) in p.memory_accesses.iter_mut().enumerate() {
            let (tid, ctaid) = if down_columns { ([row, 4, 0], [8 * row, 32, 0]) } else { ([4, row, 0], [32, 8 * row, 0]) };
            a.address = Some(
                serde_json::from_value(serde_json::json!({ "base": format!("param_{i}"), "tid": tid, "ctaid": ctaid })).expect("pattern"),
            );
        }
        p
    };
    let bytes = 3.0 * (n * n) as f64 * 4.0;
    for (id, gddr) in [("rtx-3060", true), ("a100-sxm4-80gb", false)] {
        let g = gpu(id);
        let params = Params::from_gpu(&g);
        assert_eq!(params.dram_activation_bytes > 0.0, gddr, "{id}");
        let bw = params.dram_peak_bytes_per_s * params.dram_efficiency;
        let column = bottleneck::predict(&sum(true), &g).expect("applies");
        let want = if gddr { bytes / 32.0 * bottleneck::fitted::GDDR_ACTIVATION_BYTES } else { bytes } / bw * 1e6;
        let got = column.breakdown["dram_us"];
        assert!((got / want - 1.0).abs() < 0.01, "{id}: DRAM term {got} µs against {want} µs: {}", column.explanation);
        assert_eq!(column.explanation.contains("row activations"), gddr, "{id}: {}", column.explanation);
        let rows = bottleneck::predict(&sum(false), &g).expect("applies");
        let got = rows.breakdown["dram_us"];
        let want = bytes / bw * 1e6;
        assert!((got / want - 1.0).abs() < 0.01, "{id}: DRAM term {got} µs against {want} µs along the rows: {}", rows.explanation);
    }
}

/// The per-SM terms take the busiest SM's blocks: 32 blocks on the 28 SMs of an RTX 3060
/// put two on four SMs, which the kernel waits for, so its `l1` term is twice that of 28
/// blocks, as its `issue` term is.
#[test]
fn the_per_sm_terms_wait_for_the_busiest_sm() {
    let g = gpu("rtx-3060");
    assert_eq!(g.sm_count, 28);
    let terms = |blocks: u32| {
        let mut p = vector_add();
        launch(&mut p, blocks, 256, 0);
        let pred = bottleneck::predict(&p, &g).expect("applies");
        (pred.breakdown["l1_us"], pred.breakdown["issue_us"])
    };
    let ((l1_28, issue_28), (l1_32, issue_32)) = (terms(28), terms(32));
    assert!((l1_32 / l1_28 - 2.0).abs() < 1e-9, "{l1_32} against {l1_28}");
    assert!((issue_32 / issue_28 - 2.0).abs() < 1e-9, "{issue_32} against {issue_28}");
}

/// Conflict-free 4-byte shared-memory loads (one 128-byte wavefront each) from a full SM:
/// a GA100 SM with 32 load/store lanes takes one warp instruction per cycle, as the shared
/// banks do; a GA102 SM with 16 lanes (4 per partition, ga102-wp) takes two cycles, half
/// the banks' rate, and binds on the load/store pipe (gpu-benches gpu-strides, float
/// stride 1: 2.00 cycles per warp load on an A40, 1.02 on an A100).
#[test]
fn shared_loads_bind_on_the_load_store_lanes_of_a_16_lane_sm() {
    let k = 2048;
    let mut p = fma_chain(k, InstrClass::Load(kernel_profile::Space::Shared), "ld.shared.f32");
    for b in &mut p.blocks {
        for i in &mut b.instructions {
            i.deps.clear();
        }
    }
    p.memory_accesses = vec![serde_json::from_value(serde_json::json!({
        "ptx_line": 1, "space": "shared", "kind": "load", "bytes_per_thread": 4, "vector_width": 1,
        "class": "coalesced", "transactions_per_request": 1.0, "executions": k as f64,
        "bank_conflict_ways": 1
    }))
    .expect("access")];
    for (id, sms, cycles_per_load, bound) in [("a100-sxm4-80gb", 108u32, 1.0, Bound::Shared), ("rtx-3090", 82, 2.0, Bound::Pipe(Pipe::Lsu))] {
        let g = gpu(id);
        let params = Params::from_gpu(&g);
        launch(&mut p, sms * 64, 256, 0);
        let pred = bottleneck::predict(&p, &g).expect("applies");
        // 64 blocks × 8 warps per SM, k loads each.
        let want_us = 64.0 * 8.0 * k as f64 * cycles_per_load / params.clock_hz * 1e6;
        let lsu = pred.breakdown["lsu_us"];
        assert!((lsu - 64.0 * 8.0 * k as f64 * 32.0 / f64::from(g.units.ldst_per_sm) / params.clock_hz * 1e6).abs() < 1e-6 * lsu);
        assert!(pred.time_us >= want_us && pred.time_us < 1.1 * want_us + params.launch_overhead_us + 1.0, "{id}: {} vs {want_us}: {}", pred.time_us, pred.explanation);
        if bound == Bound::Shared {
            assert!(matches!(pred.bound, Bound::Shared | Bound::Pipe(Pipe::Lsu)), "{id}: {}", pred.explanation);
        } else {
            assert_eq!(pred.bound, bound, "{id}: {}", pred.explanation);
        }
    }
}

/// `k` independent shared loads followed by `m` independent instructions of `class`
/// (`opcode`), with the dynamic counts to match.
fn shared_loads_then(k: usize, m: usize, class: InstrClass, opcode: &str) -> KernelProfile {
    let shared_load = InstrClass::Load(kernel_profile::Space::Shared);
    let mut p = fma_chain(k + m, shared_load, "ld.shared.f32");
    for (n, i) in p.blocks[0].instructions.iter_mut().enumerate() {
        i.deps.clear();
        if n >= k {
            i.class = class;
            i.opcode = opcode.into();
        }
    }
    p.counts.dynamic.clear();
    p.counts.dynamic.insert(shared_load, k as f64);
    p.counts.dynamic.insert(class, m as f64);
    p
}

/// Since Volta, and on Fermi and Kepler (one 64 KB array split between the two), L1 and
/// shared memory are one memory with one data stage: a kernel whose shared loads and
/// uncoalesced global loads (8 wavefronts each) both use it pays the sum of their wavefronts
/// in the larger term; on Maxwell and Pascal, where shared memory is its own unit, each term
/// keeps its own.
#[test]
fn shared_and_global_wavefronts_take_turns_in_the_one_data_stage_since_volta_and_before_maxwell() {
    let (k, m) = (1024usize, 64usize);
    let mut p = shared_loads_then(k, m, InstrClass::Load(kernel_profile::Space::Global), "ld.global.f32");
    p.memory_accesses = vec![
        serde_json::from_value(serde_json::json!({
            "ptx_line": 1, "space": "shared", "kind": "load", "bytes_per_thread": 4, "vector_width": 1,
            "class": "coalesced", "transactions_per_request": 1.0, "executions": k as f64,
            "bank_conflict_ways": 1
        }))
        .expect("access"),
        serde_json::from_value(serde_json::json!({
            "ptx_line": 2, "space": "global", "kind": "load", "bytes_per_thread": 4, "vector_width": 1,
            "class": "strided", "transactions_per_request": 8.0, "executions": m as f64,
            "l1_wavefronts_per_request": 8.0
        }))
        .expect("access"),
    ];
    for (id, unified) in [("a100-sxm4-80gb", true), ("tesla-p100-sxm2", false), ("gtx-980", false), ("tesla-k20", true), ("tesla-c2050", true)] {
        let g = gpu(id);
        let params = Params::from_gpu(&g);
        assert_eq!(params.unified_l1_shared, unified, "{id}");
        launch(&mut p, g.sm_count * 64, 256, 0);
        let pred = bottleneck::predict(&p, &g).expect("applies");
        // 64 blocks × 8 warps per SM: k shared wavefronts (128 B each at 128 B per cycle)
        // and 8·m L1 wavefronts per warp.
        let warps = 64.0 * 8.0;
        let us = |cycles: f64| cycles / params.clock_hz * 1e6;
        let shared = us(warps * k as f64 * 128.0 / params.shared_bytes_per_clk_per_sm);
        let l1 = us(warps * m as f64 * 8.0);
        assert!(shared > l1, "{id}: {shared} vs {l1}");
        let want = if unified { shared + l1 } else { shared };
        let got = pred.breakdown["shared_us"];
        assert!((got - want).abs() < 1e-6 * want, "{id}: shared term {got} against {want}: {}", pred.explanation);
        assert!((pred.breakdown["l1_us"] - l1).abs() < 1e-6 * l1, "{id}: {:?}", pred.breakdown);
    }
}

/// Turing's shared-memory loads come back at 64 B per clock, the stores go into the 32
/// four-byte banks at 128 (`bottleneck.shared_store_bytes_per_clk_per_sm` for `tu10x` in
/// gpu-data): k 8-way-conflicted loads and k such stores per warp take 8k wavefronts each,
/// 16k + 8k cycles on an RTX 2080 Ti, 8k + 8k on an RTX 3090.
#[test]
fn on_turing_shared_stores_take_the_banks_rate_and_loads_the_narrower_load_path() {
    let k = 256usize;
    let mut p = shared_loads_then(k, k, InstrClass::Store(kernel_profile::Space::Shared), "st.shared.f32");
    let access = |line: u32, kind: &str| {
        serde_json::from_value(serde_json::json!({
            "ptx_line": line, "space": "shared", "kind": kind, "bytes_per_thread": 4, "vector_width": 1,
            "class": "strided", "stride_bytes": 32, "transactions_per_request": 1.0, "executions": k as f64,
            "bank_conflict_ways": 8
        }))
        .expect("access")
    };
    p.memory_accesses = vec![access(1, "load"), access(2, "store")];
    for (id, load_clk, store_clk) in [("rtx-2080-ti", 2.0, 1.0), ("rtx-3090", 1.0, 1.0)] {
        let g = gpu(id);
        let params = Params::from_gpu(&g);
        launch(&mut p, g.sm_count * 64, 256, 0);
        let pred = bottleneck::predict(&p, &g).expect("applies");
        let warps = 64.0 * 8.0;
        let want = warps * 8.0 * k as f64 * (load_clk + store_clk) / params.clock_hz * 1e6;
        let got = pred.breakdown["shared_us"];
        assert!((got - want).abs() < 1e-6 * want, "{id}: shared term {got} against {want}: {}", pred.explanation);
    }
}

/// On Turing the load/store path does not overlap part of the FP32 pipe's time
/// (`fp32_lsu_serial_share` in gpu-data for `tu10x`, fitted on the RTX 2080 Ti's
/// convolution): a kernel of as many shared loads as FMAs is charged the `lsu` term plus that
/// share of the `fp32` term on an RTX 2080 Ti, and the larger of the two on an RTX 3090
/// (share 0).
#[test]
fn on_turing_the_load_store_path_takes_the_fp32_time_on_top() {
    let k = 1024;
    let mut p = shared_loads_and_fmas(k, false);
    assert_eq!(Params::from_gpu(&gpu("rtx-2080-ti")).fp32_lsu_serial_share, bottleneck::fitted::FP32_LSU_SERIAL_SHARE_TURING);
    assert_eq!(Params::from_gpu(&gpu("titan-rtx")).fp32_lsu_serial_share, bottleneck::fitted::FP32_LSU_SERIAL_SHARE_TURING);
    assert_eq!(Params::from_gpu(&gpu("rtx-3090")).fp32_lsu_serial_share, 0.0);
    for (id, share) in [("rtx-2080-ti", bottleneck::fitted::FP32_LSU_SERIAL_SHARE_TURING), ("rtx-3090", 0.0)] {
        let g = gpu(id);
        let params = Params::from_gpu(&g);
        launch(&mut p, g.sm_count * 64, 256, 0);
        let pred = bottleneck::predict(&p, &g).expect("applies");
        let per_sm_warp_instr = 64.0 * 8.0 * k as f64;
        let us = |cycles: f64| cycles / params.clock_hz * 1e6;
        // 16 LD/ST lanes on both: 2 cycles per warp load; FP32 at the CUDA guide's rate.
        let lsu_alone = us(per_sm_warp_instr * 2.0);
        let fp32 = us(per_sm_warp_instr * 32.0 / params.pipe_rate[&Pipe::Fp32]);
        assert!((pred.breakdown["fp32_us"] - fp32).abs() < 1e-6 * fp32, "{id}: {:?}", pred.breakdown);
        let lsu = pred.breakdown["lsu_us"];
        assert!((lsu - (lsu_alone + share * fp32)).abs() < 1e-6 * lsu, "{id}: {lsu} vs {lsu_alone} + {share} × {fp32}");
        assert_eq!(pred.bound, Bound::Pipe(Pipe::Lsu), "{id}: {}", pred.explanation);
        assert!(pred.time_us >= lsu && pred.time_us < 1.1 * lsu + params.launch_overhead_us + 1.0, "{id}: {} vs {lsu}", pred.time_us);
        assert_eq!(pred.explanation.contains("does not overlap"), share > 0.0, "{id}: {}", pred.explanation);
    }
}

/// The consensus makes the model the headline on database GPUs, uncalibrated.
#[test]
fn the_bottleneck_model_is_the_headline_on_database_gpus() {
    for id in ["a100-sxm4-80gb", "tesla-v100-sxm2-16gb", "rtx-3090", "tesla-k20", "h100-sxm"] {
        let g = gpu(id);
        let mut p = vector_add();
        launch(&mut p, 4096, 256, 0);
        let r = perf_models::run_all_for_gpu(&p, &g, &ModelConfig::uncalibrated()).expect("report");
        assert_eq!(r.headline.model, "bottleneck", "{id}: {}", r.headline.rule);
    }
}

/// Calibration samples of `profiles` on `g`, "measured" as the model predicts them with
/// the parameters `truth`.
/// Vector adds launched as `(grid, block, dynamic shared memory)`.
fn vector_adds<const N: usize>(launches: [(u64, u64, u32); N]) -> Vec<KernelProfile> {
    launches
        .iter()
        .map(|&(grid, block, smem)| {
            let mut p = vector_add();
            launch(&mut p, grid as u32, block as u32, smem);
            p
        })
        .collect()
}

fn timed_by<'a>(truth: &Params, profiles: &'a [KernelProfile], g: &gpu_spec::Gpu) -> Vec<perf_models::bottleneck::calibrate::Sample<'a>> {
    profiles
        .iter()
        .map(|p| {
            let resident = perf_models::gpu::resident_blocks(p, g).expect("fits");
            let caches = bottleneck::cache_config(g, p, resident);
            let measured = bottleneck::estimate(p, truth, resident, &caches).expect("estimate").time_us;
            perf_models::bottleneck::calibrate::Sample { profile: p, resident_blocks_per_sm: resident, caches, measured_us: measured }
        })
        .collect()
}

/// `calibrate::fit` recovers parameters that generated the "measurements": the vector add at
/// several occupancies, timed with a lower DRAM efficiency and a longer block overhead than
/// the database's. The fit brings the error near zero and never makes it worse.
#[test]
fn calibration_recovers_the_parameters_behind_the_measurements() {
    use perf_models::bottleneck::calibrate::{fit, mean_abs_log_error};
    let g = gpu("a100-sxm4-80gb");
    let base = Params::from_gpu(&g);
    let mut truth = base.clone();
    truth.dram_efficiency = 0.7;
    truth.block_overhead_ns = 600.0;
    let profiles = vector_adds([(32, 70_000), (64, 70_000), (128, 0), (256, 0), (512, 40_000), (1024, 0)].map(|(block, smem)| ((1u64 << 24) / block, block, smem)));
    let samples = timed_by(&truth, &profiles, &g);
    let before = mean_abs_log_error(&samples, &base);
    let f = fit(&samples, &base);
    assert!(before > 0.1, "the truth must differ from the database: {before}");
    assert!(f.mean_abs_log_error_after < 0.02, "{} -> {}", before, f.mean_abs_log_error_after);
    // The efficiency trades off a little against the latency exposure near the knee:
    // identified within 10 %, not exactly.
    assert!((f.params.dram_efficiency - 0.7).abs() < 0.07, "{}", f.params.dram_efficiency);
    assert_eq!(f.params.calibrated_on, Some(6));
}

/// `calibrate::fit` finds a slow host's launch overhead: small vector adds, each a few
/// microseconds of its own, timed with 5 µs per launch (the `pmpp-*` host of docs/heldout.md
/// measures 5.1-5.2 µs for a one-block kernel) where the database says 2.25. The fitted
/// overhead lands near 5 µs and the calibrated file carries it as a GPU field, not a model
/// parameter.
#[test]
fn calibration_finds_a_slow_hosts_launch_overhead() {
    use perf_models::bottleneck::calibrate::{LAUNCH_OVERHEAD_US, fit, gpu_overrides, model_params};
    let g = gpu("a100-sxm4-80gb");
    let base = Params::from_gpu(&g);
    let mut truth = base.clone();
    truth.launch_overhead_us = 5.0;
    assert!((base.launch_overhead_us - truth.launch_overhead_us).abs() > 2.0, "the database value must differ: {}", base.launch_overhead_us);
    let profiles = vector_adds([(1u64 << 12, 128u64), (1 << 14, 256), (1 << 16, 256), (1 << 18, 512), (1 << 20, 1024), (1 << 22, 256)].map(|(n, block)| (n.div_ceil(block), block, 0)));
    let samples = timed_by(&truth, &profiles, &g);
    let f = fit(&samples, &base);
    assert!((f.params.launch_overhead_us - 5.0).abs() < 0.5, "fitted {} µs", f.params.launch_overhead_us);
    assert!(f.mean_abs_log_error_after < 0.25 * f.mean_abs_log_error_before, "{} -> {}", f.mean_abs_log_error_before, f.mean_abs_log_error_after);
    assert_eq!(gpu_overrides(&f), vec![(LAUNCH_OVERHEAD_US, f.params.launch_overhead_us)]);
    assert!(model_params(&f).iter().all(|(k, _)| *k != LAUNCH_OVERHEAD_US && k.starts_with("bottleneck.")));
}

/// The pipe rates reproduce the datasheets' peak FLOPS: a full SM of independent FMAs of
/// one kind, its pipe's time against the FLOPs it does. Datasheet figures (TFLOPS at the
/// boost clock): NVIDIA A100 datasheet (FP32 19.5, FP64 9.7, FP16 non-tensor 78, FP16
/// tensor 312 dense); GA102 whitepaper, RTX 3090 (FP32 35.6, FP16 non-tensor 35.6, FP64
/// 0.556, FP16 tensor with FP32 accumulation 71); NVIDIA T4 datasheet (FP32 8.1, mixed
/// precision tensor 65). Within 3 %: the model's clocks are the boards' boost clocks.
#[test]
fn full_sms_of_fmas_reach_the_datasheet_peaks() {
    let tflops = |gpu_id: &str, class: InstrClass, opcode: &str, flops_per_instr: f64, key: &str| -> f64 {
        let g = gpu(gpu_id);
        let k = 512;
        let pred = full_sm_of(&g, k, class, opcode);
        let flops = f64::from(g.sm_count) * 64.0 * 8.0 * k as f64 * flops_per_instr;
        flops / (pred.breakdown[key] * 1e-6) / 1e12
    };
    let lanes = 32.0;
    let mma = 16.0 * 8.0 * 16.0 * 2.0;
    const WGMMA: &str = "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16";
    let wgmma = 64.0 * 128.0 * 16.0 * 2.0 / 4.0;
    let cases = [
        ("a100-sxm4-80gb", InstrClass::Fp32, "fma.rn.f32", lanes * 2.0, "fp32_us", 19.5),
        ("a100-sxm4-80gb", InstrClass::Fp64, "fma.rn.f64", lanes * 2.0, "fp64_us", 9.7),
        ("a100-sxm4-80gb", InstrClass::Fp16, "fma.rn.f16x2", lanes * 4.0, "fp16_us", 78.0),
        ("a100-sxm4-80gb", InstrClass::Tensor, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", mma, "tensor_us", 312.0),
        ("rtx-3090", InstrClass::Fp32, "fma.rn.f32", lanes * 2.0, "fp32_us", 35.6),
        ("rtx-3090", InstrClass::Fp16, "fma.rn.f16x2", lanes * 4.0, "fp16_us", 35.6),
        ("rtx-3090", InstrClass::Fp64, "fma.rn.f64", lanes * 2.0, "fp64_us", 0.556),
        ("rtx-3090", InstrClass::Tensor, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", mma, "tensor_us", 71.0),
        ("t4", InstrClass::Fp32, "fma.rn.f32", lanes * 2.0, "fp32_us", 8.1),
        ("t4", InstrClass::Tensor, "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", mma / 2.0, "tensor_us", 65.0),
        // Hopper's dense FP16 figures (hopper-ds) hold at a lower clock than its FP32 ones:
        // a warp's quarter of a warpgroup's m64n128k16 `wgmma` against 989.4, 756 and 835.5
        // TFLOPS, with the FP32 figures at the boost clocks beside them.
        ("h100-sxm", InstrClass::Tensor, WGMMA, wgmma, "tensor_us", 989.4),
        ("h100-sxm", InstrClass::Fp32, "fma.rn.f32", lanes * 2.0, "fp32_us", 66.9),
        ("h100-pcie", InstrClass::Tensor, WGMMA, wgmma, "tensor_us", 756.0),
        ("h100-pcie", InstrClass::Fp32, "fma.rn.f32", lanes * 2.0, "fp32_us", 51.2),
        ("h100-nvl", InstrClass::Tensor, WGMMA, wgmma, "tensor_us", 835.5),
    ];
    for (id, class, opcode, flops, key, datasheet) in cases {
        let got = tflops(id, class, opcode, flops, key);
        assert!((got / datasheet - 1.0).abs() < 0.03, "{id} {opcode}: {got:.3} TFLOPS against the datasheet's {datasheet}");
    }
}

/// The roofline floor's tensor term is the datasheet peak of each instruction's shape and
/// types (the datasheets of `full_sms_of_fmas_reach_the_datasheet_peaks`), a warp-level
/// `mma.sync` on Hopper at the same peak as `wgmma` (a floor, not the achievable rate).
/// Before, the database GPUs had no tensor term in the floor at all.
#[test]
fn the_roofline_floor_takes_tensor_instructions_at_the_datasheet_peak() {
    use perf_models::GpuParams;
    use perf_models::roofline::{self, FloorConfig};
    const MMA: &str = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
    let mma = 16.0 * 8.0 * 16.0 * 2.0;
    const WGMMA: &str = "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16";
    let wgmma = 64.0 * 128.0 * 16.0 * 2.0 / 4.0;
    for (id, opcode, flops_per_instr, datasheet) in [
        ("a100-sxm4-80gb", MMA, mma, 312.0),
        ("rtx-3090", MMA, mma, 71.0),
        ("h100-sxm", WGMMA, wgmma, 989.4),
        ("h100-sxm", MMA, mma, 989.4),
    ] {
        let g = gpu(id);
        let k = 512;
        let mut p = fma_chain(k, InstrClass::Tensor, opcode);
        launch(&mut p, g.sm_count * 64, 256, 0);
        let floor = roofline::predict(&p, &GpuParams::from_spec(&g), &FloorConfig { l2_reuse_discount: 0.0 }).expect("applies");
        let flops = f64::from(g.sm_count) * 64.0 * 8.0 * k as f64 * flops_per_instr;
        let got = flops / (floor.breakdown["compute_us"] * 1e-6) / 1e12;
        assert!((got / datasheet - 1.0).abs() < 0.03, "{id} {opcode}: {got:.1} TFLOPS against the datasheet's {datasheet}: {}", floor.explanation);
        assert!(floor.explanation.contains("tensor"), "{}", floor.explanation);
    }
}

/// The share of a lone warp's in-order waits that the chain takes comes from gpu-data: the
/// whole on Turing, a quarter on GA10x (both fitted on Kernel Tuner's convolution, see
/// `bottleneck::fitted`), none where no measurement shows it. On a Turing card a block of
/// shared loads each read by the next FMA, one warp per scheduler, is then charged about one
/// shared-load latency per load in its latency term; on an A100 its critical path.
#[test]
fn the_in_order_share_of_the_chain_is_read_per_architecture() {
    use bottleneck::fitted::{IN_ORDER_EXPOSURE_GA10X, IN_ORDER_EXPOSURE_TURING};
    for (id, share) in [
        ("rtx-2080-ti", IN_ORDER_EXPOSURE_TURING),
        ("titan-rtx", IN_ORDER_EXPOSURE_TURING),
        ("rtx-3090", IN_ORDER_EXPOSURE_GA10X),
        ("rtx-3060-laptop", IN_ORDER_EXPOSURE_GA10X),
        ("a100-sxm4-80gb", 0.0),
        ("h100-pcie", 0.0),
    ] {
        assert_eq!(Params::from_gpu(&gpu(id)).in_order_exposure, share, "{id}");
    }
    let k = 256;
    let mut p = shared_loads_and_fmas(k, true);
    // One block of 4 warps per SM: one warp per scheduler.
    let mut chain = |id: &str| {
        let g = gpu(id);
        launch(&mut p, g.sm_count, 128, 0);
        bottleneck::predict(&p, &g).expect("applies").breakdown["chain_cycles"]
    };
    let turing = Params::from_gpu(&gpu("rtx-2080-ti"));
    let per_load = chain("rtx-2080-ti") / k as f64;
    // Each pair: the load's latency, then one cycle to issue the next load after the FMA.
    assert!((per_load - (turing.shared_latency_cycles + 1.0)).abs() < 0.1, "{per_load} cycles per shared load");
    let a100 = Params::from_gpu(&gpu("a100-sxm4-80gb"));
    assert_eq!(chain("a100-sxm4-80gb"), a100.shared_latency_cycles + a100.alu_latency_cycles);
}

/// An FMA reading three registers the operand reuse cache cannot supply takes 1.5 cycles of
/// its partition at two register reads per clock (gpu-data, Volta and later): on a 128-lane
/// SM (an RTX 3090, an H100), whose FP32 pipe takes one instruction per clock, a full SM of
/// such FMAs runs at two thirds of the FP32 peak; on a 64-lane SM (an A100), whose pipe
/// takes one per two clocks, at the peak, as without them. gpu-benches' gpu-roofline
/// measures 0.62-0.64 and 0.96 (tests/fixtures/heldout/roofline-sweep.csv).
#[test]
fn fmas_reading_three_registers_run_at_two_thirds_of_a_128_lane_peak() {
    let k = 2048;
    for (id, slowdown) in [("rtx-3090", 1.5), ("h100-sxm", 1.5), ("a100-sxm4-80gb", 1.0), ("titan-rtx", 1.0)] {
        let g = gpu(id);
        assert_eq!(Params::from_gpu(&g).register_reads_per_clk, Some(2.0), "{id}");
        let plain = full_sm_of(&g, k, InstrClass::Fp32, "fma.rn.f32");
        let mut p = fma_chain(k, InstrClass::Fp32, "fma.rn.f32");
        for i in &mut p.blocks[0].instructions {
            i.deps.clear();
            i.reads_three_registers = true;
        }
        launch(&mut p, g.sm_count * 64, 256, 0);
        let three = bottleneck::predict(&p, &g).expect("applies");
        let ratio = three.breakdown["fp32_us"] / plain.breakdown["fp32_us"];
        assert!((ratio - slowdown).abs() < 1e-9, "{id}: {ratio}");
        if slowdown > 1.0 {
            assert_eq!(three.bound, Bound::Pipe(Pipe::Fp32), "{id}: {}", three.explanation);
            assert!(three.explanation.contains("2 register reads per cycle per partition"), "{}", three.explanation);
        }
    }
}

/// On Kepler a global load that L1 does not keep sends one request per 128-byte line to L2,
/// in turn with the stores' (`load_request_cycles` = `store_request_cycles` = 1.85 for the
/// Kepler architectures in gpu-data, fitted on a column-major matrix sum on the K20): a
/// vector add whose two loads walk down columns (32 lines a request) is charged
/// (2 × 32 + 1) × 1.85 cycles per warp on a K20's SMs; on Maxwell (a GTX 980) the loads'
/// lines are not counted as requests, only the store's.
#[test]
fn on_kepler_loads_that_l1_does_not_keep_take_turns_with_the_stores_for_l2() {
    let mut p = vector_add();
    for a in p.memory_accesses.iter_mut().filter(|a| a.kind == kernel_profile::AccessKind::Load) {
        a.class = kernel_profile::AccessClass::Strided;
        a.transactions_per_request = 32.0;
        a.lines_per_request = Some(32.0);
    }
    let k20 = gpu("tesla-k20");
    let params = Params::from_gpu(&k20);
    assert_eq!((params.load_request_cycles, params.store_request_cycles), (1.85, 1.85));
    let (grid, block) = (k20.sm_count * 1024, 256);
    launch(&mut p, grid, block, 0);
    let pred = bottleneck::predict(&p, &k20).expect("applies");
    let warps_per_sm = f64::from(grid) * f64::from(block) / 32.0 / f64::from(k20.sm_count);
    let want = warps_per_sm * (2.0 * 32.0 + 1.0) * 1.85 / params.clock_hz * 1e6;
    let got = pred.breakdown["l1_us"];
    assert!((got - want).abs() < 1e-6 * want, "{got} against {want}: {}", pred.explanation);
    let maxwell = Params::from_gpu(&gpu("gtx-980"));
    assert_eq!(maxwell.load_request_cycles, 0.0);
}

/// One thread's loop over `n` columns reading four words of a row, each address computed
/// from an unsigned index (`a[k + j]`: an integer add, a wide multiply-add) and each word
/// multiplied into a running sum right after its load, as nvcc writes a loop over an unsigned
/// index unrolled by 4; with `.pragma "nounroll"` or without (then ptxas unrolls it by 4
/// more: `kernel_profile::sass`, item 8).
fn four_loads_per_pass(n: i64, nounroll: bool) -> KernelProfile {
    let mut body = String::new();
    for j in 0..4 {
        body.push_str(&format!(
            "    add.s32 %r{i}, %r9, {j};\n    mul.wide.u32 %rd{w}, %r{i}, 4;\n    add.s64 %rd{a}, %rd3, %rd{w};\n    ld.global.u32 %r{v}, [%rd{a}];\n    mad.lo.s32 %r3, %r{v}, %r{v}, %r3;\n",
            i = 10 + j,
            w = 4 + 2 * j,
            a = 5 + 2 * j,
            v = 4 + j
        ));
    }
    let text = format!(
        "
.version 8.0
.target sm_80
.address_size 64

.visible .entry walk4(.param .u64 a, .param .u64 y, .param .u32 n)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [y];
    ld.param.u32 %r1, [n];
    cvta.to.global.u64 %rd3, %rd1;
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
    mov.u32 %r9, 0;
$L_walk:
    {}
{body}    add.s32 %r9, %r9, 4;
    add.s32 %r2, %r2, 4;
    setp.lt.s32 %p1, %r2, %r1;
    @%p1 bra $L_walk;
    cvta.to.global.u64 %rd14, %rd2;
    st.global.u32 [%rd14], %r3;
    ret;
}}
",
        if nounroll { ".pragma \"nounroll\";" } else { "" }
    );
    common::profiles::built(&text, "walk4", "rtx-2080-ti", (7, 5), [1, 1, 1], [1, 1, 1], &[("n", n)])
}

/// A warp issues its loads as early as their addresses allow (ptxas hoists them), so a pass
/// whose four loads each feed the next multiply-add waits for the loads once, in its
/// in-order schedule too: the address arithmetic of the second load does not queue on the
/// integer pipe behind the multiply-add that waits for the first. On a Turing card, which
/// charges the whole in-order schedule, the pass costs one load latency and its
/// multiply-adds, not four latencies.
#[test]
fn a_pass_waits_once_for_loads_its_arithmetic_does_not_feed() {
    let g = gpu("rtx-2080-ti");
    let n = 1 << 12;
    let p = four_loads_per_pass(n, true);
    assert!(p.blocks.iter().all(|b| b.ptxas_copies.is_none()), "nounroll");
    let pred = bottleneck::predict(&p, &g).expect("applies");
    let (chain, offchip) = (pred.breakdown["chain_cycles"], pred.breakdown["chain_offchip_cycles"]);
    let passes = (n / 4) as f64;
    let params = Params::from_gpu(&g);
    assert!(offchip / passes >= params.l1_latency_cycles, "{offchip} over {passes} passes");
    // The rest: four dependent multiply-adds on the FMA pipe (two cycles each of a Turing
    // partition's), the loop's arithmetic and a branch; waiting in order for each load, as
    // when the address arithmetic queued behind the waiting multiply-adds, adds three more
    // load waits (over 380 cycles a pass).
    assert!((chain - offchip) / passes < 20.0 * params.alu_latency_cycles, "{chain} cycles, {offchip} of them on loads, over {passes} passes");
}

/// Unrolled by ptxas (four passes' sixteen loads at the top of each unrolled body), the
/// passes wait for their loads together: the loads' part of the chain falls, at most to a
/// quarter (four passes still wait once for the likeliest of their loads to miss), and the
/// rest of each pass stays.
#[test]
fn a_loop_ptxas_unrolls_waits_for_its_copies_loads_together() {
    let g = gpu("rtx-2080-ti");
    let n = 1 << 12;
    let chain = |nounroll: bool| {
        let p = four_loads_per_pass(n, nounroll);
        let pred = bottleneck::predict(&p, &g).expect("applies");
        (pred.breakdown["chain_cycles"], pred.breakdown["chain_offchip_cycles"], p.blocks.iter().find_map(|b| b.ptxas_copies))
    };
    let (rolled, rolled_offchip, none) = chain(true);
    let (unrolled, unrolled_offchip, copies) = chain(false);
    assert_eq!((none, copies), (None, Some(4.0)));
    assert!(unrolled_offchip < rolled_offchip && unrolled_offchip >= rolled_offchip / 4.0 - 1e-6, "{unrolled_offchip} against {rolled_offchip}");
    assert!(((rolled - rolled_offchip) - (unrolled - unrolled_offchip)).abs() < 1e-6 * rolled, "the rest of the chain is kept");
    assert!(unrolled < rolled);
}
