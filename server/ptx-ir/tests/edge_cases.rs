//! Hand-written PTX for the shapes nvcc rarely emits and for broken input: lowering must
//! stay total (no panic) and report problems as diagnostics.

use proptest::prelude::*;
use ptx_ir::{CmpOp, InstrClass, Severity, TripCount};

fn wrap(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n\
         .visible .entry k(.param .u32 k_param_0)\n.reqntid 64, 2\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<10>;\n{body}\n}}\n"
    )
}

fn lower(src: &str) -> ptx_ir::Module {
    ptx_ir::parse_and_lower(src).0
}

#[test]
fn top_tested_loop_counts_header_executions() {
    // for (i = 0; i < 10; ++i) written with the test in the header: the header runs 11
    // times per entry (10 body iterations plus the final failing test).
    let src = wrap(
        "mov.u32 %r1, 0;\n\
         $L_head:\n\
         setp.ge.s32 %p1, %r1, 10;\n\
         @%p1 bra $L_end;\n\
         add.s32 %r2, %r2, %r1;\n\
         add.s32 %r1, %r1, 1;\n\
         bra.uni $L_head;\n\
         $L_end:\n\
         ret;",
    );
    let m = lower(&src);
    assert_eq!(m.sm, Some(90));
    assert_eq!(m.target.as_deref(), Some("sm_90a"));
    let f = &m.functions[0];
    assert_eq!(f.perf.reqntid, Some([64, 2, 1]));
    assert_eq!(f.loops.len(), 1);
    let l = &f.loops[0];
    assert_eq!(l.latches.len(), 1);
    let t = l.exit_test.as_ref().expect("exit test");
    assert_eq!((t.op, t.offset_steps), (CmpOp::Lt, 0));
    assert_eq!(l.trip_count, TripCount::Constant(11));
}

#[test]
fn undefined_label_is_a_diagnostic() {
    let m = lower(&wrap(
        "setp.eq.s32 %p1, %r1, 0;\n@%p1 bra $L_nowhere;\nret;",
    ));
    let d = m
        .diagnostics
        .iter()
        .find(|d| d.message.contains("$L_nowhere"))
        .expect("diag");
    assert_eq!(d.severity, Severity::Error);
    assert_eq!(d.function.as_deref(), Some("k"));
    let f = &m.functions[0];
    // The guarded branch still falls through to the `ret`.
    assert_eq!(f.blocks.len(), 2);
    assert_eq!(f.blocks[0].succs.as_slice(), [1]);
}

#[test]
fn unknown_opcodes_are_other_and_keep_def_use() {
    let m = lower(&wrap(
        "frobnicate.b32 %r1, %r2;\nadd.s32 %r3, %r1, 1;\nret;",
    ));
    let f = &m.functions[0];
    assert_eq!(f.instrs[0].class, InstrClass::Other);
    let r1 = f.reg_by_name("%r1").expect("%r1");
    assert_eq!(f.defs_of(r1), [0]);
}

#[test]
fn setp_pair_defines_both_predicates_and_guarded_ret_falls_through() {
    let m = lower(&wrap(
        "setp.lt.s32 %p1|%p2, %r1, %r2;\n@%p1 ret;\nadd.s32 %r3, %r1, 1;\n@!%p2 exit;\nret;",
    ));
    let f = &m.functions[0];
    let p1 = f.reg_by_name("%p1").expect("%p1");
    let p2 = f.reg_by_name("%p2").expect("%p2");
    assert_eq!(f.dsts(&f.instrs[0]), [p1, p2]);
    assert_eq!(f.blocks.len(), 3);
    assert_eq!(f.blocks[0].succs.as_slice(), [1]);
    assert_eq!(f.blocks[1].succs.as_slice(), [2]);
    assert!(f.blocks[2].succs.is_empty());
    assert!(f.loops.is_empty());
    // The guard register counts as a source.
    assert!(f.srcs(&f.instrs[1]).contains(&p1));
}

#[test]
fn unreachable_code_and_prototypes() {
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n\
               .extern .func (.param .b32 r) ext(.param .b32 a);\n\
               .visible .entry k()\n{\n.reg .b32 %r<3>;\n\
               bra.uni $L_x;\nadd.s32 %r1, %r1, 1;\n$L_x:\nret;\n}\n";
    let m = lower(src);
    let ext = m.function("ext").expect("prototype kept");
    assert!(!ext.has_body);
    assert!(ext.instrs.is_empty());
    let k = m.function("k").expect("k");
    assert_eq!(k.blocks.len(), 3);
    assert!(!k.blocks[1].reachable);
    assert!(k.idom[1].is_none());
    assert!(!k.dominates(1, 2));
    assert!(k.dominates(0, 2));
}

#[test]
fn irreducible_cycle_is_reported_not_a_loop() {
    // Two entries into the cycle {A, B}: neither dominates the other.
    let m = lower(&wrap(
        "setp.eq.s32 %p1, %r1, 0;\n@%p1 bra $L_b;\n\
         $L_a:\nadd.s32 %r2, %r2, 1;\nsetp.lt.s32 %p2, %r2, 5;\n@%p2 bra $L_b;\nret;\n\
         $L_b:\nadd.s32 %r3, %r3, 1;\nbra.uni $L_a;",
    ));
    let f = &m.functions[0];
    assert!(f.loops.is_empty());
    assert!(
        m.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Info && d.message.contains("irreducible"))
    );
}

#[test]
fn empty_and_garbage_inputs() {
    assert!(lower("").functions.is_empty());
    let m = lower(".entry k() { }");
    assert_eq!(m.functions.len(), 1);
    assert!(m.functions[0].blocks.is_empty());
    let m = lower(".entry k() { $L_only: }");
    assert_eq!(m.functions[0].blocks.len(), 1);
    let _ = lower("}}}} .entry { @ bra ; ld.global [%r1+, ;; .loc x y z");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn lowering_arbitrary_text_never_panics(s in "\\PC{0,400}") {
        let _ = lower(&s);
    }

    /// Real PTX with a random run of lines removed (labels, declarations, branches go
    /// missing): still no panic, and every branch target is a valid block.
    #[test]
    fn lowering_damaged_real_ptx_never_panics(start in 0usize..700, len in 1usize..40) {
        let path = format!("{}/tests/data/loops.ptx", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(path).expect("fixture");
        let lines: Vec<&str> = src.lines().collect();
        let cut: Vec<&str> = lines.iter().enumerate()
            .filter(|(i, _)| *i < start || *i >= start + len)
            .map(|(_, l)| *l)
            .collect();
        let m = lower(&cut.join("\n"));
        for f in &m.functions {
            for b in &f.blocks {
                for &s in &b.succs {
                    prop_assert!((s as usize) < f.blocks.len());
                }
            }
        }
    }
}

/// clang places a loop's latch before its header in the text; that is a natural loop, not
/// irreducible control flow (regression: source order was once taken for DFS order).
#[test]
fn clang_latch_before_header_is_a_natural_loop() {
    let path = format!("{}/../../tests/fixtures/ptx/clang/sm_80/reduce_tree.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture");
    let (module, errors) = ptx_ir::parse_and_lower(&text);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(module.diagnostics.is_empty(), "{:?}", module.diagnostics);
    let f = module.kernels().next().expect("kernel");
    assert_eq!(f.loops.len(), 1);
    let header = &f.blocks[f.loops[0].header as usize];
    assert_eq!(header.labels.first().map(String::as_str), Some("$L__BB0_6"));
    assert!(matches!(f.loops[0].trip_count, ptx_ir::TripCount::Symbolic { .. }), "{:?}", f.loops[0].trip_count);
}
