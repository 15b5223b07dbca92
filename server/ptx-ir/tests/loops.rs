//! Hand-checked loops, trip counts, dominators and nesting on real nvcc output.
//!
//! Every expected trip count below was worked out by hand from the `.cu` source and checked
//! against the PTX nvcc 13.5 emitted (`tests/data/loops*.ptx`, `-arch=sm_80 -lineinfo`).
//! The trip count is the number of header executions per entry into the loop; for nvcc's
//! bottom-tested loops that is the iteration count of the (possibly unrolled) loop.

use ptx_ir::{Dim, Function, Leaf, Module, SpecialReg, TripCount};

fn load(name: &str) -> Module {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).expect("fixture");
    let (m, errors) = ptx_ir::parse_and_lower(&src);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(m.diagnostics.is_empty(), "{:?}", m.diagnostics);
    m
}

fn kernel<'m>(m: &'m Module, name: &str) -> &'m Function {
    m.functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no kernel {name}"))
}

/// Evaluates a trip count with parameter values by index and a launch configuration.
fn eval(tc: &TripCount, args: &[(u32, f64)], specials: &[(SpecialReg, f64)]) -> Option<f64> {
    tc.evaluate(&|leaf| match leaf {
        Leaf::Param { index, .. } => args.iter().find(|(i, _)| *i == index).map(|(_, v)| *v),
        Leaf::Special(s) => specials.iter().find(|(r, _)| *r == s).map(|(_, v)| *v),
    })
}

fn symbolic(tc: &TripCount) -> (&str, &[String], &[u32], &[SpecialReg]) {
    match tc {
        TripCount::Symbolic {
            expr,
            params,
            param_indices,
            launch,
            ..
        } => (expr, params, param_indices, launch),
        other => panic!("expected a symbolic trip count, got {other:?}"),
    }
}

#[test]
fn fully_unrolled_constant_loop_has_no_loop() {
    // `for (i = 0; i < 64; ++i)`: nvcc unrolls it completely.
    let m = load("loops.ptx");
    let f = kernel(&m, "_Z7const64Pf");
    assert!(f.loops.is_empty());
    assert_eq!(f.blocks.len(), 1);
    let counts = f.class_counts();
    assert_eq!(counts[&ptx_ir::InstrClass::Load(ptx_ir::Space::Global)], 64);
    assert_eq!(counts[&ptx_ir::InstrClass::Fp32], 64);
}

#[test]
fn constant_step_4() {
    // `for (i = 0; i < 100; i += 4)` with `#pragma unroll 1`: i = 0, 4, ..., 96 → 25.
    let m = load("loops.ptx");
    let f = kernel(&m, "_Z5step4Pf");
    assert_eq!(f.loops.len(), 1);
    let l = &f.loops[0];
    assert_eq!(l.trip_count, TripCount::Constant(25));
    assert_eq!(l.depth, 1);
    let test = l.exit_test.as_ref().expect("exit test");
    assert_eq!(f.reg_name(test.iv), "%r8");
    assert_eq!(
        test.offset_steps, 1,
        "do-while form compares the incremented value"
    );
    // Source line of the loop from `.loc`.
    assert_eq!(l.loc.map(|it| (it.file, it.line)), Some((1, 10)));
    // Both induction variables: the counter and the index `i + tid`.
    let r7 = f.reg_by_name("%r7").expect("%r7");
    let iv = l
        .induction_vars
        .iter()
        .find(|iv| iv.reg == r7)
        .expect("%r7 is an IV");
    assert_eq!(
        iv.init,
        Some(ptx_ir::Expr::Special(SpecialReg::Tid(Dim::X)))
    );
    assert_eq!(iv.step, ptx_ir::Expr::Const(4));
}

#[test]
fn parameter_bound() {
    // `for (i = 0; i < n; ++i)`, n = param 2 → n iterations (the guard skips n < 1).
    let m = load("loops.ptx");
    let f = kernel(&m, "_Z6paramNPfPKfi");
    let l = &f.loops[0];
    let (expr, params, indices, launch) = symbolic(&l.trip_count);
    assert_eq!(expr, "param_2");
    assert_eq!(params, ["_Z6paramNPfPKfi_param_2".to_string()]);
    assert_eq!(indices, [2]);
    assert!(launch.is_empty());
    assert_eq!(eval(&l.trip_count, &[(2, 1000.0)], &[]), Some(1000.0));
    let names = ["a", "b", "n"];
    let rendered = l
        .trip_count
        .render_with(&|i| names.get(i as usize).map(|s| s.to_string()));
    assert_eq!(rendered.as_deref(), Some("n"));
    // The pointer IV starts at the parameter `b`.
    let rd9 = f.reg_by_name("%rd9").expect("%rd9");
    let iv = l
        .induction_vars
        .iter()
        .find(|iv| iv.reg == rd9)
        .expect("pointer IV");
    assert_eq!(
        iv.init.as_ref().map(|e| e.to_string()).as_deref(),
        Some("param_1")
    );
}

#[test]
fn nested_loops_depth_and_dominators() {
    // for i < 16 { for j < 8 }: outer 16, inner 8 (both `#pragma unroll 1`).
    let m = load("loops.ptx");
    let f = kernel(&m, "_Z6nestedPfi");
    assert_eq!(f.loops.len(), 2);
    let (outer, inner) = (&f.loops[0], &f.loops[1]);
    assert_eq!(outer.trip_count, TripCount::Constant(16));
    assert_eq!(inner.trip_count, TripCount::Constant(8));
    assert_eq!((outer.depth, inner.depth), (1, 2));
    assert_eq!(inner.parent, Some(0));
    assert_eq!(outer.children, vec![1]);
    assert!(outer.blocks.iter().all(|b| f.dominates(outer.header, *b)));
    assert!(f.dominates(outer.header, inner.header));
    assert!(!f.dominates(inner.header, outer.header));
    assert!(f.dominates(0, inner.header));
    assert_eq!(f.loop_depth(inner.header), 2);
    assert_eq!(f.loop_depth(outer.header), 1);
    assert_eq!(f.loops_of(inner.header), vec![1, 0]);
    // Entry has no idom; every reachable block's idom chain reaches the entry.
    assert_eq!(f.idom[0], None);
    for b in 1..f.blocks.len() {
        assert!(f.idom[b].is_some(), "bb{b} has an idom");
    }
    // The inner exit test is `!= 8` on a counter from 0: the `ne` form.
    let t = inner.exit_test.as_ref().expect("inner exit test");
    assert_eq!(t.op, ptx_ir::CmpOp::Ne);
    // petgraph CFG mirrors the block successors.
    assert_eq!(f.cfg.node_count(), f.blocks.len());
    let n_edges: usize = f.blocks.iter().map(|b| b.succs.len()).sum();
    assert_eq!(f.cfg.edge_count(), n_edges);
}

#[test]
fn grid_stride_loop_is_symbolic_in_launch_config() {
    // for (i = blockIdx.x*blockDim.x + threadIdx.x; i < n; i += blockDim.x*gridDim.x)
    let m = load("loops.ptx");
    let f = kernel(&m, "_Z10gridstridePfPKfi");
    let l = &f.loops[0];
    let (expr, _, indices, launch) = symbolic(&l.trip_count);
    assert_eq!(
        expr,
        "ceil((param_2 - ((%ctaid.x * %ntid.x) + %tid.x)) / (%ntid.x * %nctaid.x))"
    );
    assert_eq!(indices, [2]);
    for s in [
        SpecialReg::Ntid(Dim::X),
        SpecialReg::Nctaid(Dim::X),
        SpecialReg::Tid(Dim::X),
    ] {
        assert!(launch.contains(&s), "{s:?} in {launch:?}");
    }
    // n = 10 × (256 threads × 80 blocks): thread 0 of block 0 runs 10 iterations.
    let launch_cfg = [
        (SpecialReg::Ntid(Dim::X), 256.0),
        (SpecialReg::Nctaid(Dim::X), 80.0),
        (SpecialReg::Ctaid(Dim::X), 0.0),
        (SpecialReg::Tid(Dim::X), 0.0),
    ];
    assert_eq!(
        eval(&l.trip_count, &[(2, 204800.0)], &launch_cfg),
        Some(10.0)
    );
    // The last thread of the grid (global index 20479) runs ceil(184321 / 20480) = 10.
    let last = [
        (SpecialReg::Ntid(Dim::X), 256.0),
        (SpecialReg::Nctaid(Dim::X), 80.0),
        (SpecialReg::Ctaid(Dim::X), 79.0),
        (SpecialReg::Tid(Dim::X), 255.0),
    ];
    assert_eq!(eval(&l.trip_count, &[(2, 204800.0)], &last), Some(10.0));
    assert_eq!(
        eval(&l.trip_count, &[(2, 204801.0)], &launch_cfg),
        Some(11.0)
    );
}

#[test]
fn unroll_by_4_main_and_remainder_loops() {
    // `#pragma unroll 4` over i < n: a main loop counting (n - n%4) down by 4, and a
    // remainder loop counting n%4 down by 1.
    let m = load("loops.ptx");
    let f = kernel(&m, "_Z7unroll4PfPKfi");
    assert_eq!(f.loops.len(), 2);
    let (main, rem) = (&f.loops[0], &f.loops[1]);
    assert!(main.header < rem.header);
    assert_eq!((main.depth, rem.depth), (1, 1));
    let (main_expr, ..) = symbolic(&main.trip_count);
    assert_eq!(main_expr, "(param_2 - (param_2 & 3)) / 4");
    assert_eq!(eval(&main.trip_count, &[(2, 103.0)], &[]), Some(25.0));
    assert_eq!(eval(&rem.trip_count, &[(2, 103.0)], &[]), Some(3.0));
    assert_eq!(eval(&main.trip_count, &[(2, 1024.0)], &[]), Some(256.0));
    // Four loads per main-loop iteration.
    let loads = main
        .blocks
        .iter()
        .flat_map(|&b| f.blocks[b as usize].instrs.clone())
        .filter(|&i| f.instrs[i as usize].class.is_memory())
        .count();
    assert_eq!(loads, 4);
}

#[test]
fn data_dependent_while_loop_is_unknown() {
    // while (a[i] != 0) i = a[i];
    let m = load("loops.ptx");
    let f = kernel(&m, "_Z9whileloopPi");
    let l = &f.loops[0];
    assert_eq!(l.trip_count, TripCount::Unknown);
    let note = l.trip_note.as_deref().unwrap_or("");
    assert!(note.contains("data-dependent"), "{note}");
}

#[test]
fn constant_loop_unrolled_by_nvcc() {
    // for (i = 0; i < 1000; ++i) without a pragma: nvcc unrolls by 8 → 125 iterations.
    let m = load("loops2.ptx");
    let f = kernel(&m, "_Z9const1000Pf");
    assert_eq!(f.loops[0].trip_count, TripCount::Constant(125));
}

#[test]
fn count_down_loop() {
    // for (i = 10; i > 0; --i): nvcc counts a register 11 → 1, testing `> 1` → 10.
    let m = load("loops2.ptx");
    let f = kernel(&m, "_Z9countdownPf");
    assert_eq!(f.loops[0].trip_count, TripCount::Constant(10));
}

#[test]
fn less_equal_with_step_2() {
    // for (i = 0; i <= n; i += 2): floor(n/2) + 1 iterations.
    let m = load("loops2.ptx");
    let f = kernel(&m, "_Z8le_step2Pfi");
    let tc = &f.loops[0].trip_count;
    assert_eq!(eval(tc, &[(1, 9.0)], &[]), Some(5.0));
    assert_eq!(eval(tc, &[(1, 10.0)], &[]), Some(6.0));
    assert_eq!(symbolic(tc).0, "ceil((param_1 + 1) / 2)");
}

#[test]
fn block_stride_loop() {
    // for (i = threadIdx.x; i < 256; i += blockDim.x): ceil((256 - tid) / ntid).
    let m = load("loops2.ptx");
    let f = kernel(&m, "_Z11blockstridePf");
    let tc = &f.loops[0].trip_count;
    let (expr, params, ..) = symbolic(tc);
    assert_eq!(expr, "ceil((256 - %tid.x) / %ntid.x)");
    assert!(params.is_empty());
    let cfg = |tid: f64| {
        [
            (SpecialReg::Tid(Dim::X), tid),
            (SpecialReg::Ntid(Dim::X), 64.0),
        ]
    };
    assert_eq!(eval(tc, &[], &cfg(0.0)), Some(4.0));
    assert_eq!(eval(tc, &[], &cfg(63.0)), Some(4.0));
    assert_eq!(f.static_smem_bytes, 1024);
}

#[test]
fn loop_with_break_is_unknown() {
    let m = load("loops2.ptx");
    let f = kernel(&m, "_Z9withbreakPKfPfi");
    let l = &f.loops[0];
    assert_eq!(l.trip_count, TripCount::Unknown);
    assert_eq!(l.exiting.len(), 2);
    assert!(l.trip_note.as_deref().unwrap_or("").contains("exits"));
}

#[test]
fn tiled_matmul_loop_over_n_div_16() {
    // for (t = 0; t < n / 16; ++t) with two __syncthreads and an unrolled inner k-loop.
    let m = load("loops2.ptx");
    let f = kernel(&m, "_Z5tiledPKfS0_Pfi");
    assert_eq!(f.loops.len(), 1, "the k-loop is fully unrolled");
    let l = &f.loops[0];
    assert_eq!(eval(&l.trip_count, &[(3, 64.0)], &[]), Some(4.0));
    assert_eq!(eval(&l.trip_count, &[(3, 1024.0)], &[]), Some(64.0));
    // nvcc's signed `n / 16` (add the sign bias, shift) reads as the division (issue 14).
    assert_eq!(symbolic(&l.trip_count).0, "param_3 / 16");
    let barriers = l
        .blocks
        .iter()
        .flat_map(|&b| f.blocks[b as usize].instrs.clone())
        .filter(|&i| f.instrs[i as usize].class == ptx_ir::InstrClass::Barrier)
        .count();
    assert_eq!(barriers, 2);
    assert_eq!(f.perf.maxntid, Some([256, 1, 1]));
    assert_eq!(f.perf.minnctapersm, Some(2));
    assert_eq!(
        f.static_smem_bytes, 2048,
        "ptxas -v reports 2048 bytes smem"
    );
}

#[test]
fn loop_from_parameter_to_parameter() {
    // for (i = lo; i < hi; ++i): hi - lo iterations.
    let m = load("loops2.ptx");
    let f = kernel(&m, "_Z11start_paramPfii");
    let tc = &f.loops[0].trip_count;
    assert_eq!(symbolic(tc).0, "param_2 - param_1");
    assert_eq!(symbolic(tc).2, [2, 1]);
    assert_eq!(eval(tc, &[(1, 5.0), (2, 20.0)], &[]), Some(15.0));
}

#[test]
fn tree_reduction_halving_loop() {
    // for (stride = blockDim.x / 2; stride > 0; stride >>= 1): log2(blockDim.x) iterations
    // for a power-of-two block (256 → 128, 64, ..., 1 → 8).
    let m = load("reduce.ptx");
    let f = kernel(&m, "_Z4treePKfPf");
    let l = &f.loops[0];
    let iv = &l.induction_vars[0];
    assert_eq!(iv.kind, ptx_ir::IvKind::Shr);
    let (expr, params, _, launch) = symbolic(&l.trip_count);
    assert_eq!(expr, "floor(log2(%ntid.x >> 1)) + 1");
    assert!(params.is_empty());
    assert_eq!(launch, [SpecialReg::Ntid(Dim::X)]);
    let ntid = |n: f64| [(SpecialReg::Ntid(Dim::X), n)];
    assert_eq!(eval(&l.trip_count, &[], &ntid(256.0)), Some(8.0));
    assert_eq!(eval(&l.trip_count, &[], &ntid(1024.0)), Some(10.0));
    // A 96-thread block: 48, 24, 12, 6, 3, 1 → 6 iterations.
    assert_eq!(eval(&l.trip_count, &[], &ntid(96.0)), Some(6.0));
    // The constant version.
    let f = kernel(&m, "_Z7tree256Pf");
    assert_eq!(f.loops[0].trip_count, TripCount::Constant(8));
}

#[test]
fn doubling_loop() {
    // for (d = 1; d < n; d *= 2): ceil(log2(n)) iterations.
    let m = load("reduce.ptx");
    let f = kernel(&m, "_Z8doublingPfi");
    let tc = &f.loops[0].trip_count;
    assert_eq!(symbolic(tc).0, "ceil(log2(param_1))");
    assert_eq!(eval(tc, &[(1, 1024.0)], &[]), Some(10.0));
    assert_eq!(eval(tc, &[(1, 1000.0)], &[]), Some(10.0));
    assert_eq!(eval(tc, &[(1, 1025.0)], &[]), Some(11.0));
}

#[test]
fn unrolled_main_loop_tested_on_offset_counter() {
    // `for (j = 0; j < mask_width; j++)` without a pragma (tests/fixtures/cu/conv1d.cu):
    // nvcc unrolls by 4 and ends the main loop with `add t, r6, j; setp.ne t, 0` where
    // r6 = (mw & 3) - mw is loop-invariant and j counts up by 4 from 0. So the loop runs
    // while j + 4·k != mw - (mw & 3): (mw - (mw & 3)) / 4 times; the remainder loop counts
    // mw & 3 down to zero.
    let path = format!("{}/../../tests/fixtures/ptx/sm_80/conv1d.ptx", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).expect("fixture");
    let (m, errors) = ptx_ir::parse_and_lower(&src);
    assert!(errors.is_empty(), "{errors:?}");
    let f = kernel(&m, "_Z6conv1dPKfS0_Pfii");
    assert_eq!(f.loops.len(), 2);
    let (main, rem) = (&f.loops[0], &f.loops[1]);
    let (main_expr, _, idx, _) = symbolic(&main.trip_count);
    assert_eq!(main_expr, "(param_3 - (param_3 & 3)) / 4");
    assert_eq!(idx, &[3]);
    for mw in 4..200 {
        assert_eq!(eval(&main.trip_count, &[(3, mw as f64)], &[]), Some((mw / 4) as f64), "mw = {mw}");
        if mw % 4 != 0 {
            assert_eq!(eval(&rem.trip_count, &[(3, mw as f64)], &[]), Some((mw % 4) as f64), "mw = {mw}");
        }
    }
}

/// The fixture corpus's PTX (`tests/fixtures/ptx/sm_80`, nvcc 13.5 from
/// `tests/fixtures/cu`).
fn corpus(name: &str) -> Module {
    let path = format!(
        "{}/../../tests/fixtures/ptx/sm_80/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (m, errors) = ptx_ir::parse_and_lower(&src);
    assert!(errors.is_empty(), "{errors:?}");
    m
}

#[test]
fn block_stride_loop_counted_on_a_copy_of_its_counter() {
    // tile_box (tests/fixtures/cu/tiled_load.cu): `for (i = threadIdx.y; i < 14; i += 8)`
    // under `#pragma unroll`. nvcc keeps the counter in %r49 (set to %tid.y before the
    // loop), copies it at the top of every iteration (`mov %r11, %r49`) for the body and
    // the exit test, and updates it from the copy: `add %r49, %r11, 8; setp.lt %r11, 6`.
    // The induction variable is %r49, not its copy; the test reads the iteration's value
    // (0 steps ahead): ceil((6 - tid.y) / 8) + 1 = 2 for tid.y < 6, 1 for 6 and 7.
    let m = corpus("tiled_load");
    let f = kernel(&m, "_Z8tile_boxPKfPfi");
    let outer = &f.loops[0];
    let tc = &outer.trip_count;
    let (expr, params, _, launch) = symbolic(tc);
    assert_eq!(expr, "ceil((6 - %tid.y) / 8) + 1");
    assert!(params.is_empty());
    assert_eq!(launch, &[SpecialReg::Tid(Dim::Y)]);
    for ty in 0..8 {
        let want = if ty < 6 { 2.0 } else { 1.0 };
        assert_eq!(
            eval(tc, &[], &[(SpecialReg::Tid(Dim::Y), f64::from(ty))]),
            Some(want),
            "tid.y = {ty}"
        );
    }
    let test = outer.exit_test.as_ref().expect("exit test");
    assert_eq!(f.reg_name(test.iv), "%r49");
    assert_eq!(test.offset_steps, 0);
    let iv = outer
        .induction_vars
        .iter()
        .find(|v| v.reg == test.iv)
        .expect("the counter is an induction variable");
    assert_eq!(iv.init, Some(ptx_ir::Expr::Special(SpecialReg::Tid(Dim::Y))));
    assert_eq!(iv.step, ptx_ir::Expr::Const(8));
    // The copy is not an induction variable of its own (it has no value before the loop).
    let copy = f.reg_by_name("%r11").expect("%r11");
    assert!(outer.induction_vars.iter().all(|v| v.reg != copy));

    // tile_box_dyn: the same loops with blockDim strides and bounds, in the usual
    // do-while form; the inner loop's counter restarts at tid.x on every outer iteration.
    let f = kernel(&m, "_Z12tile_box_dynPKfPfi");
    let block = |tid: SpecialReg, t: f64| {
        [
            (tid, t),
            (SpecialReg::Ntid(Dim::X), 32.0),
            (SpecialReg::Ntid(Dim::Y), 8.0),
        ]
    };
    let rows = &f.loops[0].trip_count;
    assert_eq!(symbolic(rows).0, "ceil(((%ntid.y + 6) - %tid.y) / %ntid.y)");
    let cols = &f.loops[1].trip_count;
    assert_eq!(symbolic(cols).0, "ceil(((%ntid.x + 6) - %tid.x) / %ntid.x)");
    for t in 0..8 {
        let want = if t < 6 { 2.0 } else { 1.0 };
        let (y, x) = (SpecialReg::Tid(Dim::Y), SpecialReg::Tid(Dim::X));
        assert_eq!(eval(rows, &[], &block(y, f64::from(t))), Some(want));
        assert_eq!(eval(cols, &[], &block(x, f64::from(t))), Some(want));
    }
    assert_eq!(f.loops[1].depth, 2);
}

/// Loops that end on data but that a counted exit bounds (`tests/data/bounded.cu`): the
/// count stays unknown, and `trip_bounds` holds what the counted exit alone would run.
#[test]
fn counted_exits_bound_loops_that_end_on_data() {
    let m = load("bounded.ptx");
    let only_loop = |name: &str| {
        let f = kernel(&m, name);
        assert_eq!(f.loops.len(), 1, "{name}: {:?}", f.loops);
        f.loops[0].clone()
    };
    // `while (|z|^2 < 4 && it < max_iter)`: one `and.pred`, bounded by `max_iter`.
    let l = only_loop("_Z6escapePhPKfi");
    assert!(matches!(l.trip_count, TripCount::Unknown), "{:?}", l.trip_count);
    assert!(l.trip_note.as_deref().is_some_and(|n| n.contains("and.pred")), "{:?}", l.trip_note);
    assert_eq!(l.trip_bounds.len(), 1, "{:?}", l.trip_bounds);
    assert_eq!(eval(&l.trip_bounds[0], &[(2, 256.0)], &[]), Some(256.0), "{:?}", l.trip_bounds);
    // A counted `for` with a `break`: two exits, the counted one bounds it by `n`.
    let l = only_loop("_Z6searchPKiPiii");
    assert!(matches!(l.trip_count, TripCount::Unknown), "{:?}", l.trip_count);
    assert_eq!(l.exiting.len(), 2);
    assert_eq!(l.trip_bounds.iter().filter_map(|b| eval(b, &[(3, 100.0)], &[])).collect::<Vec<_>>(), [100.0], "{:?}", l.trip_bounds);
    // `for (it = 0; it < 5 && e > 1e-6f; ++it)`: at most 5.
    let l = only_loop("_Z6newtonPf");
    assert!(matches!(l.trip_count, TripCount::Unknown), "{:?}", l.trip_count);
    assert_eq!(l.trip_bounds, [TripCount::Constant(5)], "{:?}", l.trip_bounds);
    // A counted loop has no bounds: its count is known.
    let m = load("loops.ptx");
    for f in &m.functions {
        for l in &f.loops {
            if !matches!(l.trip_count, TripCount::Unknown) {
                assert!(l.trip_bounds.is_empty(), "{}: {:?}", f.name, l);
            }
        }
    }
}
