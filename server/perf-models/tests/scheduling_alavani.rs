//! Reproduction of Alavani 2023, execution-time model v2: the worked example of
//! Fig. 4.6 (vectorAdd on the K20, Algorithm 6), the bug fixes in Algorithms 6–8, and the
//! status of Table 4.8. Generated tables: `docs/models/scheduling.md`.

mod common;

use kernel_profile::KernelProfile;
use perf_models::GpuParams;
use perf_models::scheduling::{self, CfgBlock, Launch, Resource, SchedNode, SmResources};

const K20_RES: SmResources = SmResources {
    sp: 192,
    dpu: 64,
    sfu: 32,
    lsu: 32,
    misc: 128,
};

fn node(resource: Resource, latency: f64, deps: &[usize]) -> SchedNode {
    SchedNode {
        resource,
        latency,
        deps: deps.to_vec(),
    }
}

/// Fig. 4.6's graph as the text of §4.4.4.2 describes it, in its topological order C8, C9,
/// C10, M1, M2, C11: L(add) = 9, L(cvta) = 33, L(ld) = 315; M1 depends on C8, C11 on M1
/// and M2. The figure itself is not in the text, so the edges C9 → C10 → M2 (the second
/// address computation, `cvta` then `add`) are our reading of the vectorAdd PTX.
fn fig_4_6() -> Vec<SchedNode> {
    vec![
        node(Resource::Sp, 9.0, &[]),     // C8: add (first address)
        node(Resource::Sp, 33.0, &[]),    // C9: cvta
        node(Resource::Sp, 9.0, &[1]),    // C10: add (second address)
        node(Resource::Lsu, 315.0, &[0]), // M1: ld.global
        node(Resource::Lsu, 315.0, &[2]), // M2: ld.global
        node(Resource::Sp, 9.0, &[3, 4]), // C11: add.f32
    ]
}

#[test]
fn fig_4_6_worked_example() {
    let s = scheduling::schedule_block(&fig_4_6(), &K20_RES, 256).expect("acyclic");
    // Printed: C8 reserves SP for 9 + 1·(⌈256/192⌉ − 1) = 10 cycles; Sch[C8] = 0.
    assert_eq!(s.duration[0], 10.0);
    assert_eq!(s.start[0], 0.0);
    // Printed: Sch[C9] = 10 (SP busy until then).
    assert_eq!(s.start[1], 10.0);
    // Printed: Sch[M1] = 0 + 9 + 1 = 10, concurrently with C9.
    assert_eq!(s.start[3], 10.0);
    // Printed: M1 → C11 = 332 (M1 takes 315 + ⌈256/32⌉ − 1 = 322 cycles).
    assert_eq!(s.duration[3], 322.0);
    assert_eq!(s.start[3] + s.duration[3], 332.0);
    // M2 waits for the LSU held by M1 (printed), so it starts at 332 ...
    assert_eq!(s.start[4], 332.0);
    // ... and C11 at 654, where the thesis prints 655 (one cycle: the printed value needs
    // M2 to start at 333, i.e. M1 holding the LSU for d + 1 cycles).
    assert_eq!(s.start[5], 654.0);
    assert_eq!(s.makespan, 664.0);
}

#[test]
fn fix_1_makespan_not_last_node() {
    // A long load last in the graph but first in topological order: the listing's
    // `delay ← Sch(v) + d` would return the short add's finish.
    let nodes = vec![
        node(Resource::Lsu, 315.0, &[]),
        node(Resource::Sp, 9.0, &[]),
    ];
    let s = scheduling::schedule_block(&nodes, &K20_RES, 32).expect("acyclic");
    assert_eq!(s.makespan, 315.0);
    assert_eq!(s.as_printed, 9.0);
}

#[test]
fn fix_2_longest_path_and_loops() {
    let b = |latency: f64, succ: &[usize], multiplier: f64| CfgBlock {
        nodes: vec![node(Resource::Sp, latency, &[])],
        successors: succ.to_vec(),
        multiplier,
        n_global: 0.0,
        n_shared: 0.0,
    };
    // 0 → {1, 2} → 3, block 1 a self-loop run 10 times; the longest path is 0-1-3.
    let cfg = vec![
        b(9.0, &[1, 2], 1.0),
        b(20.0, &[1, 3], 10.0),
        b(100.0, &[3], 1.0),
        b(2.0, &[], 1.0),
    ];
    let s = scheduling::schedule_cfg(&cfg, &K20_RES, 32).expect("schedulable");
    assert_eq!(s.back_edges, vec![(1, 1)]);
    assert_eq!(s.delay, 9.0 + 200.0 + 2.0);
    // Reordering so that the last block in topological order is not on the longest path.
    let cfg = vec![b(9.0, &[1, 2], 1.0), b(500.0, &[], 1.0), b(1.0, &[], 1.0)];
    let s = scheduling::schedule_cfg(&cfg, &K20_RES, 32).expect("schedulable");
    assert_eq!(s.delay, 509.0);
}

#[test]
fn fix_5_wave_count() {
    let one = vec![CfgBlock {
        nodes: vec![node(Resource::Sp, 9.0, &[])],
        successors: vec![],
        multiplier: 1.0,
        n_global: 1.0,
        n_shared: 0.0,
    }];
    // §5.4.5 (PFEA example): 6144 threads per SM at 2048 per wave is 3 waves; the printed
    // `while ≥ 0` loop gives 4.
    let launch = Launch {
        blocks: 13 * 24,
        threads_per_block: 256,
        resident_blocks_per_sm: 8,
        max_threads_per_sm: 2048,
    };
    let k = scheduling::schedule_kernel(&one, &K20_RES, 13, &launch).expect("schedulable");
    assert_eq!(k.waves, 3);
    assert_eq!(scheduling::printed_wave_count(6144, 2048), 4);
    // FIX(4)/(5): registers limiting residency to 2 blocks of 256 threads → 12 waves of
    // 512 threads, not 3 of 2048.
    let limited = Launch {
        resident_blocks_per_sm: 2,
        ..launch
    };
    let k = scheduling::schedule_kernel(&one, &K20_RES, 13, &limited).expect("schedulable");
    assert_eq!(k.waves, 12);
    assert_eq!(k.threads_per_wave, 512);
    // A partial last wave is scheduled with its remainder only.
    let partial = Launch {
        blocks: 13 * 5,
        ..limited
    };
    let k = scheduling::schedule_kernel(&one, &K20_RES, 13, &partial).expect("schedulable");
    assert_eq!((k.waves, k.threads_last_wave), (3, 256));
}

fn vector_add() -> KernelProfile {
    let text = std::fs::read_to_string(
        common::workspace_root().join("server/perf-models/tests/fixtures/vector_add.json"),
    )
    .expect("fixture");
    serde_json::from_str(&text).expect("valid profile")
}

#[test]
fn vector_add_on_the_k20_end_to_end() {
    let p = vector_add();
    let pred = scheduling::predict(&p, &GpuParams::tesla_k20()).expect("applies");
    let b = &pred.breakdown;
    assert_eq!(b["waves"], 1.0);
    // Launch overhead at 13 × 256 threads: 0.00002 × 3328 + 1.4489 µs.
    assert!((b["launch_overhead_us"] - 1.51546).abs() < 1e-5);
    // The schedule: entry block, then the Fig. 4.6 block with its third address and the
    // store, then `ret`; printed here so the docs can show it.
    assert!(
        (b["schedule_cycles"] - 1079.3475).abs() < 1e-3,
        "{}",
        b["schedule_cycles"]
    );
    assert!((pred.time_us - 3.0888).abs() < 1e-3, "{}", pred.time_us);
}

#[test]
fn docs_tables_are_current() {
    let s = scheduling::schedule_block(&fig_4_6(), &K20_RES, 256).expect("acyclic");
    let names = ["C8", "C9", "C10", "M1", "M2", "C11"];
    let printed = ["0", "10", "—", "10", "—", "655"];
    let mut md = String::from(
        "| node | d(v) | Sch(v), ours | Sch(v), thesis §4.4.4.2 |\n|---|---|---|---|\n",
    );
    for i in 0..6 {
        md.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            names[i], s.duration[i], s.start[i], printed[i]
        ));
    }
    md.push_str(&format!("\nMakespan (FIX(1)): {} cycles.\n\n", s.makespan));
    let p = vector_add();
    let pred = scheduling::predict(&p, &GpuParams::tesla_k20()).expect("applies");
    md.push_str("Whole vectorAdd kernel on the K20 at 13 × 256 (`tests/fixtures/vector_add.json`):\n\n| term | value |\n|---|---|\n");
    for (k, v) in &pred.breakdown {
        md.push_str(&format!("| {k} | {v:.3} |\n"));
    }
    md.push_str(&format!(
        "| **t_kernel (µs)** | **{:.3}** |\n\nTable 4.8, vectorAdd on the K20: actual 2.12 µs, thesis prediction 1.81 µs (launch configuration not stated).\n",
        pred.time_us
    ));
    common::ensure_generated("docs/models/scheduling.md", "fig46", &md);
}

#[test]
fn loop_blocks_count_their_memory_instructions_once_per_trip() {
    // nGM and nShM (Eqs. 4.10–4.11) count a thread's global and shared instructions with
    // each block weighted by its executions: an entry block with 1 global and 2 shared
    // instructions, then a loop body run 8 times with 3 and 4, give 1 + 3·8 = 25 and
    // 2 + 4·8 = 34 (mutation survivor: the shared weight `×` → `/`).
    let blocks = vec![
        CfgBlock { nodes: vec![node(Resource::Lsu, 315.0, &[])], successors: vec![1], multiplier: 1.0, n_global: 1.0, n_shared: 2.0 },
        CfgBlock { nodes: vec![node(Resource::Lsu, 315.0, &[])], successors: vec![1], multiplier: 8.0, n_global: 3.0, n_shared: 4.0 },
    ];
    let s = scheduling::schedule_cfg(&blocks, &K20_RES, 256).expect("schedulable");
    assert_eq!(s.back_edges, vec![(1, 1)]);
    assert_eq!((s.n_global, s.n_shared), (25.0, 34.0));
}

#[test]
fn a_launch_without_sms_blocks_threads_or_residency_is_not_scheduled() {
    // Each zero alone makes Algorithm 8 meaningless (a division by the SM count, no
    // thread to schedule, no wave that holds one): no schedule, not a panic or an empty
    // one (mutation survivor: the `||` of the guard → `&&`).
    let one = vec![CfgBlock { nodes: fig_4_6(), successors: vec![], multiplier: 1.0, n_global: 2.0, n_shared: 0.0 }];
    let ok = Launch { blocks: 26, threads_per_block: 256, resident_blocks_per_sm: 8, max_threads_per_sm: 2048 };
    assert!(scheduling::schedule_kernel(&one, &K20_RES, 13, &ok).is_some());
    assert!(scheduling::schedule_kernel(&one, &K20_RES, 0, &ok).is_none());
    for launch in [Launch { blocks: 0, ..ok }, Launch { threads_per_block: 0, ..ok }, Launch { resident_blocks_per_sm: 0, ..ok }] {
        assert!(scheduling::schedule_kernel(&one, &K20_RES, 13, &launch).is_none(), "{launch:?}");
    }
}

#[test]
fn every_wave_adds_its_memory_instructions_the_last_one_too() {
    // Algorithm 8 accumulates nGM and nShM per wave scheduled: 39 blocks of 256 threads
    // on 13 SMs are 3 blocks (768 threads) on the busiest SM; 2 resident blocks make a
    // full wave of 512 threads and a last one of 256, so a thread's 2 global and 3 shared
    // instructions count twice: 4 and 6 (mutation survivor: the last wave's `+=` → `*=`).
    let one = vec![CfgBlock { nodes: fig_4_6(), successors: vec![], multiplier: 1.0, n_global: 2.0, n_shared: 3.0 }];
    let launch = Launch { blocks: 39, threads_per_block: 256, resident_blocks_per_sm: 2, max_threads_per_sm: 2048 };
    let k = scheduling::schedule_kernel(&one, &K20_RES, 13, &launch).expect("schedulable");
    assert_eq!((k.waves, k.threads_per_wave, k.threads_last_wave), (2, 512, 256));
    assert_eq!((k.n_gm, k.n_shm), (4.0, 6.0));
}

/// The K20 kernel of the test above (39 blocks of 256 threads, 2 resident, 2 global and 3
/// shared instructions per thread: nGM = 4 and nShM = 6 per SM over its 2 waves).
fn k20_two_waves() -> (scheduling::AlavaniGpu, Launch, scheduling::KernelSchedule) {
    let gpu = scheduling::AlavaniGpu::for_gpu(&GpuParams::tesla_k20());
    let one = vec![CfgBlock { nodes: fig_4_6(), successors: vec![], multiplier: 1.0, n_global: 2.0, n_shared: 3.0 }];
    let launch = Launch { blocks: 39, threads_per_block: 256, resident_blocks_per_sm: 2, max_threads_per_sm: 2048 };
    let k = scheduling::schedule_kernel(&one, &gpu.resources, 13, &launch).expect("schedulable");
    assert_eq!((k.waves, k.n_gm, k.n_shm, k.cfg.n_shared), (2, 4.0, 6.0, 3.0));
    (gpu, launch, k)
}

#[test]
fn the_shared_memory_penalty_is_eq_4_11_with_table_4_5s_k20_fit() {
    // Eq. 4.11 with the per-thread shared count (FIX(6)):
    // (nB·nT_b / (R[LSU]·nSM)) × (access_sm_sz / TP(sm)) × nShM_thread, with Table 4.5's K20
    // fit TP(sm) = 823761.8 · (1 − e^(−0.000013830 · nsM)) at the per-SM count nsM = 6:
    // (39·256 / (32·13)) × (8 B / TP(6)) × 3.
    let (gpu, launch, k) = k20_two_waves();
    let p = scheduling::penalties(&gpu, &launch, &k, 400.0, 4.0, 8.0);
    let tp = 823_761.8 * (1.0 - (-0.000_013_830_f64 * 6.0).exp());
    let want = (39.0 * 256.0) / (32.0 * 13.0) * (8.0 / tp) * 3.0;
    assert!((p.sm_penalty_us - want).abs() <= 1e-9 * want, "{} against {want}", p.sm_penalty_us);
    // Twice the bytes per shared access, twice the penalty; the global one does not move.
    let q = scheduling::penalties(&gpu, &launch, &k, 400.0, 4.0, 16.0);
    assert!((q.sm_penalty_us - 2.0 * want).abs() <= 1e-9 * want && q.gm_penalty_us == p.gm_penalty_us);
}

#[test]
fn the_l2_miss_penalty_is_eq_4_12_and_zero_without_an_l2() {
    // Eq. 4.12: (nT_b·nB·nGM) / (waves · L2_sz / access_sz) × L(gm): 39·256 threads × nGM 4
    // over 2 waves of the K20's 1,310,720-byte L2 in 4-byte accesses, at L(gm) = 400 cycles.
    let (mut gpu, launch, k) = k20_two_waves();
    assert_eq!(gpu.params.l2_bytes, 1_310_720);
    let p = scheduling::penalties(&gpu, &launch, &k, 400.0, 4.0, 8.0);
    let want = (39.0 * 256.0 * 4.0) / (2.0 * 1_310_720.0 / 4.0) * 400.0;
    assert!((p.cm_penalty_cycles - want).abs() <= 1e-9 * want, "{} against {want}", p.cm_penalty_cycles);
    // A GPU without an L2 has no L2 misses (not a division by zero).
    gpu.params.l2_bytes = 0;
    let none = scheduling::penalties(&gpu, &launch, &k, 400.0, 4.0, 8.0);
    assert_eq!(none.cm_penalty_cycles, 0.0);
}

/// One straight-line block: a 4-byte global load and `n_shared` independent shared loads of
/// `shared_bytes` each per thread, `grid` blocks of 256 threads.
fn shared_kernel(grid: u32, n_shared: usize, shared_bytes: u32) -> KernelProfile {
    memory_kernel(grid, 1, n_shared, shared_bytes)
}

/// One straight-line block of `n_global` independent 4-byte global loads and `n_shared`
/// shared loads of `shared_bytes` each per thread, `grid` blocks of 256 threads.
fn memory_kernel(grid: u32, n_global: usize, n_shared: usize, shared_bytes: u32) -> KernelProfile {
    use kernel_profile::{AccessClass, BlockProfile, InstrClass, InstrNode, InstructionCounts, Space};
    let node = |class: InstrClass, opcode: &str| InstrNode { class, opcode: opcode.into(), deps: vec![], fused_from: None, result_unused: false, reads_three_registers: false, access: None };
    let mut instructions: Vec<InstrNode> = (0..n_global).map(|_| node(InstrClass::Load(Space::Global), "ld.global.f32")).collect();
    instructions.extend((0..n_shared).map(|_| node(InstrClass::Load(Space::Shared), "ld.shared.f32")));
    let accesses = vec![
        common::profiles::load(Space::Global, AccessClass::Coalesced, Some(4), 4, 1, 4.0, n_global as f64),
        common::profiles::load(Space::Shared, AccessClass::Coalesced, Some(i64::from(shared_bytes)), shared_bytes, 1, 1.0, n_shared as f64),
    ];
    let mut p = common::profiles::profile("shared", "tesla-k20", [grid, 1, 1], [256, 1, 1], (16, 4096), InstructionCounts::default(), accesses);
    p.blocks = vec![BlockProfile { id: 0, executions: 1.0, active_lane_fraction: None, busiest_warp_executions: None, ptxas_copies: None, instructions, successors: vec![] }];
    p
}

#[test]
fn the_adapter_takes_the_shared_bytes_from_the_shared_accesses() {
    // Eq. 4.11's access_sm_sz is the shared accesses' average bytes (the global one's 4 B
    // stay with Eq. 4.10): with n shared loads per thread, nShM per SM from the schedule,
    // (nB·nT_b / (R[LSU]·nSM)) × (bytes / TP(nShM)) × n, TP Table 4.5's K20 fit.
    let gpu = GpuParams::tesla_k20();
    let (grid, n) = (26, 8);
    let run = |bytes: u32| scheduling::predict(&shared_kernel(grid, n, bytes), &gpu).expect("applies");
    let (four, eight) = (run(4), run(8));
    let n_shm = four.breakdown["n_shm"];
    let tp = 823_761.8 * (1.0 - (-0.000_013_830 * n_shm).exp());
    let want = f64::from(grid * 256) / (32.0 * 13.0) * (4.0 / tp) * n as f64;
    assert!((four.breakdown["sm_penalty_us"] - want).abs() <= 1e-9 * want, "{} against {want}", four.breakdown["sm_penalty_us"]);
    assert!((eight.breakdown["sm_penalty_us"] - 2.0 * want).abs() <= 1e-9 * want);
    assert_eq!(four.breakdown["gm_penalty_us"], eight.breakdown["gm_penalty_us"]);
    // A kernel with no global access has no global bytes to average: no global penalty,
    // and still a prediction.
    let shared_only = scheduling::predict(&memory_kernel(grid, 0, n, 4), &gpu).expect("a kernel without global accesses is predicted");
    assert_eq!(shared_only.breakdown["gm_penalty_us"], 0.0);
}

#[test]
fn the_bound_is_memory_when_the_penalties_outweigh_the_schedule() {
    // §4.4.5: the penalties are added to the schedule; the kernel is memory-bound when
    // they are the larger part (docs/models/scheduling.md).
    let gpu = GpuParams::tesla_k20();
    for (p, want) in [(vector_add(), perf_models::Bound::Latency), (memory_kernel(4096, 1, 1, 16), perf_models::Bound::Memory)] {
        let pred = scheduling::predict(&p, &gpu).expect("applies");
        let b = &pred.breakdown;
        let mem = b["gm_penalty_us"] + b["sm_penalty_us"] + b["cm_penalty_us"];
        let sched = b["schedule_us"];
        assert_eq!(pred.bound, want, "penalties {mem} µs against a schedule of {sched} µs");
        assert_eq!(mem > sched, want == perf_models::Bound::Memory, "penalties {mem} µs, schedule {sched} µs");
    }
}

#[test]
fn table_3_3_is_held_only_beyond_its_last_interval() {
    // Table 3.3's last interval ends at 2,203,648 threads: a launch of exactly that many
    // is inside it, one block more is beyond (and says so).
    let gpu = GpuParams::tesla_k20();
    let notes = |grid: u32| scheduling::predict(&shared_kernel(grid, 1, 4), &gpu).expect("applies").assumptions.join(" | ");
    let inside = notes(2_203_648 / 256);
    let beyond = notes(2_203_648 / 256 + 1);
    assert!(inside.contains("Table 3.3 at 2203648 threads") && !inside.contains("beyond the table"), "{inside}");
    assert!(beyond.contains("beyond the table's 2203648 threads"), "{beyond}");
}
