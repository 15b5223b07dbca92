//! The loop analyses on long kernels: the fast paths of `LoopCx::feeds` and of
//! `LoopCx::value_outside` give the answers of the plain searches, and the work grows
//! linearly with the kernel (`crate::work`).

use std::cell::RefCell;

use crate::induction::{DefGroups, LoopCx};
use crate::ir::*;

/// A hand-written-style kernel of `sections` parts that reuse a few registers: a loop
/// whose counter and bound are set before it (the bound to the same constant every
/// time), an `if` that reassigns a register the later loops read, and straight code.
fn reused_registers(sections: usize) -> String {
    let mut s = String::from(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry big(.param .u64 big_param_0, .param .u32 big_param_1)\n{\n\
         .reg .pred %p<4>;\n.reg .f32 %f<8>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [big_param_0];\nld.param.u32 %r1, [big_param_1];\n\
         mov.u32 %r2, %tid.x;\nmov.f32 %f1, 0f00000000;\n",
    );
    for k in 0..sections {
        match k % 3 {
            0 => s.push_str(&format!(
                "mov.u32 %r3, 64;\nmov.u32 %r5, 0;\n$L_loop{k}:\n\
                 mul.wide.u32 %rd3, %r5, 4;\nadd.s64 %rd4, %rd1, %rd3;\n\
                 ld.global.f32 %f2, [%rd4];\nadd.f32 %f1, %f1, %f2;\n\
                 add.s32 %r5, %r5, 1;\nsetp.lt.s32 %p1, %r5, %r3;\n@%p1 bra $L_loop{k};\n"
            )),
            1 => s.push_str(&format!(
                "and.b32 %r6, %r2, {};\nsetp.eq.s32 %p2, %r6, 0;\n@%p2 bra $L_skip{k};\n\
                 mov.u32 %r1, {};\n$L_skip{k}:\n\
                 mov.u32 %r7, 0;\n$L_inner{k}:\nadd.s32 %r7, %r7, 1;\n\
                 setp.lt.s32 %p3, %r7, %r1;\n@%p3 bra $L_inner{k};\n",
                1 << (k % 5),
                k % 7 + 1
            )),
            _ => s.push_str("mul.wide.s32 %rd3, %r2, 4;\nadd.s64 %rd4, %rd1, %rd3;\nst.global.f32 [%rd4], %f1;\n"),
        }
    }
    s.push_str("ret;\n}\n");
    s
}

/// The definition of `feeds` before the fast paths: the blocks found by a search
/// backwards from the header's outside predecessors, never entering the loop.
fn feeds_by_search(f: &Function, l: &Loop) -> Vec<bool> {
    let mut feeds = vec![false; f.blocks.len()];
    let mut stack: Vec<BlockId> = f.blocks[l.header as usize]
        .preds
        .iter()
        .copied()
        .filter(|&p| !l.contains(p))
        .collect();
    while let Some(b) = stack.pop() {
        if std::mem::replace(&mut feeds[b as usize], true) {
            continue;
        }
        stack.extend(
            f.blocks[b as usize]
                .preds
                .iter()
                .copied()
                .filter(|&p| !l.contains(p)),
        );
    }
    feeds
}

fn check_feeds(name: &str, text: &str) -> usize {
    let (module, _) = crate::parse_and_lower(text);
    let mut checked = 0;
    for f in &module.functions {
        let reachable: Vec<bool> = f.blocks.iter().map(|b| b.reachable).collect();
        let reducible = !crate::loops::cyclic_without_back_edges(f, &reachable);
        let groups = RefCell::new(DefGroups::default());
        for l in &f.loops {
            let want = feeds_by_search(f, l);
            let cx = LoopCx::new(f, l, reducible, &groups);
            // Asked in an order unlike the search's, so that the lazy search is resumed.
            for b in (0..f.blocks.len()).rev() {
                assert_eq!(
                    cx.feeds(b as BlockId),
                    want[b],
                    "{name}: `{}`, loop at block {}, block {b}",
                    f.name,
                    l.header
                );
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn feeds_answers_as_the_backward_search_does() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let walk = |dir: &str| walkdir::WalkDir::new(format!("{root}/{dir}")).into_iter().map(|e| e.expect("fixture directory"));
    let files: Vec<_> = walk("tests/fixtures/ptx")
        .chain(walk("server/ptx/tests/data"))
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    assert!(
        files.len() > 100,
        "the fixture corpus: {} files",
        files.len()
    );
    let mut checked = 0;
    for p in &files {
        checked += check_feeds(
            &p.display().to_string(),
            &std::fs::read_to_string(p).expect("fixture"),
        );
    }
    // Shapes the corpus lacks: reused registers, an irreducible cycle beside a loop (the
    // search, not the dominance shortcuts), an unreachable block that jumps into a loop,
    // a loop nest whose inner header is reached around the outer loop.
    checked += check_feeds("reused registers", &reused_registers(30));
    let wrap = |body: &str| {
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u32 k_param_0)\n{{\n\
             .reg .pred %p<8>;\n.reg .b32 %r<16>;\nld.param.u32 %r1, [k_param_0];\n{body}\nret;\n}}\n"
        )
    };
    checked += check_feeds(
        "irreducible",
        &wrap(
            "setp.eq.s32 %p1, %r1, 0;\n@%p1 bra $L_b;\n$L_a:\nadd.s32 %r2, %r2, 1;\n\
             setp.lt.s32 %p2, %r2, 5;\n@%p2 bra $L_b;\nbra.uni $L_c;\n$L_b:\nadd.s32 %r3, %r3, 1;\nbra.uni $L_a;\n\
             $L_c:\nmov.u32 %r4, 0;\n$L_d:\nadd.s32 %r4, %r4, 1;\nsetp.lt.s32 %p3, %r4, %r1;\n@%p3 bra $L_d;",
        ),
    );
    checked += check_feeds(
        "unreachable entry into a loop",
        &wrap(
            "mov.u32 %r2, 0;\n$L_h:\nadd.s32 %r2, %r2, 1;\n$L_body:\nsetp.lt.s32 %p1, %r2, %r1;\n@%p1 bra $L_h;\n\
             bra.uni $L_end;\nmov.u32 %r2, 7;\nbra.uni $L_body;\n$L_end:",
        ),
    );
    checked += check_feeds(
        "nest with branches",
        &wrap(
            "mov.u32 %r2, 0;\n$L_outer:\nsetp.eq.s32 %p1, %r2, 3;\n@%p1 bra $L_else;\nmov.u32 %r5, 1;\nbra.uni $L_join;\n\
             $L_else:\nmov.u32 %r5, 2;\n$L_join:\nmov.u32 %r3, 0;\n$L_inner:\nadd.s32 %r3, %r3, %r5;\n\
             setp.lt.s32 %p2, %r3, %r1;\n@%p2 bra $L_inner;\nsetp.eq.s32 %p3, %r3, 9;\n@%p3 bra $L_skip;\n\
             mov.u32 %r5, 4;\n$L_skip:\nadd.s32 %r2, %r2, 1;\nsetp.lt.s32 %p4, %r2, %r1;\n@%p4 bra $L_outer;",
        ),
    );
    assert!(checked > 4_000, "{checked} (loop, block) pairs");
}

#[test]
fn loop_analysis_work_is_linear_in_the_kernel() {
    let work = |sections: usize| {
        let text = reused_registers(sections);
        crate::work::take();
        let (module, errors) = crate::parse_and_lower(&text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            module.functions[0].loops.len(),
            (0..sections).filter(|k| k % 3 != 2).count()
        );
        crate::work::take()
    };
    let (one, two) = (work(3000), work(6000));
    assert!(
        two as f64 <= 2.2 * one as f64,
        "loop analysis work grows faster than the kernel: {one} steps for 3000 sections, {two} for 6000"
    );
}
