//! The profile of long kernels: the work of the analyses that once grew faster than the
//! kernel grows linearly with it (`crate::work`).

use std::collections::BTreeMap;

use crate::{LaunchConfig, LaunchSource, ProfileInput, ProfileOptions};

/// A hand-written-style kernel of `sections` parts: addresses from a register that is
/// incremented all along (thousands of definitions), loops whose counter is set to the
/// same constant before each, `if`/`else` assignments of fresh registers that feed an
/// address (a provisional affine form undone each time), and one value per part kept
/// live to the end (a live set as long as the kernel).
fn kernel(sections: usize) -> String {
    let mut s = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry big(.param .u64 big_param_0)\n{{\n\
         .reg .pred %p<4>;\n.reg .f32 %f<8>;\n.reg .f32 %g<{n}>;\n.reg .b32 %r<16>;\n\
         .reg .b32 %q<{n}>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [big_param_0];\nmov.u32 %r2, %tid.x;\nmov.u32 %r4, %r2;\n\
         mov.f32 %f1, 0f00000000;\n",
        n = sections + 1
    );
    for k in 0..sections {
        match k % 3 {
            0 => s.push_str(&format!(
                "mul.wide.s32 %rd3, %r4, 4;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.f32 %g{k}, [%rd4];\n\
                 add.s32 %r4, %r4, 1;\n"
            )),
            1 => s.push_str(&format!(
                "mov.u32 %r5, 0;\n$L_loop{k}:\nmul.wide.u32 %rd3, %r5, 4;\nadd.s64 %rd4, %rd1, %rd3;\n\
                 ld.global.f32 %f2, [%rd4];\nadd.f32 %f1, %f1, %f2;\nadd.s32 %r5, %r5, 1;\n\
                 setp.lt.s32 %p1, %r5, 64;\n@%p1 bra $L_loop{k};\nmov.f32 %g{k}, %f1;\n"
            )),
            _ => s.push_str(&format!(
                "setp.eq.s32 %p2, %r2, {k};\n@%p2 bra $L_else{k};\nmov.u32 %q{k}, %r2;\nbra.uni $L_join{k};\n\
                 $L_else{k}:\nmov.u32 %q{k}, 0;\n$L_join{k}:\nmul.wide.s32 %rd5, %q{k}, 4;\n\
                 add.s64 %rd6, %rd1, %rd5;\nst.global.f32 [%rd6], %f1;\nmov.f32 %g{k}, %f1;\n"
            )),
        }
    }
    for k in 0..sections {
        s.push_str(&format!("add.f32 %f1, %f1, %g{k};\n"));
    }
    s.push_str("st.global.f32 [%rd1], %f1;\nret;\n}\n");
    s
}

#[test]
fn profile_work_is_linear_in_the_kernel() {
    let work = |sections: usize| {
        let text = kernel(sections);
        let (module, errors) = ptx_ir::parse_and_lower(&text);
        assert!(errors.is_empty(), "{errors:?}");
        let options = ProfileOptions::default();
        let input = ProfileInput {
            module: &module,
            kernel: "big",
            gpu_id: "a100-sxm4-80gb",
            compute_capability: (8, 0),
            launch: LaunchConfig {
                grid: [1024, 1, 1],
                block: [256, 1, 1],
                dynamic_smem: 0,
                args: BTreeMap::new(),
                footprint_bytes: None, array_bytes: Default::default(), source: LaunchSource::Setting,
            },
            resources: None,
            source_param_names: &[],
            demangled: None,
            options: &options,
            stated_trips: &[],
        };
        crate::work::take();
        let profile = crate::build(&input).expect("profile");
        assert_eq!(profile.loops.len(), sections / 3 + usize::from(sections % 3 == 2));
        // Linear without the safety net: the evaluation budget is not reached.
        assert!(!profile.assumptions.iter().any(|a| a.contains("stopped after")), "{:?}", profile.assumptions);
        crate::work::take()
    };
    let (one, two) = (work(600), work(1200));
    assert!(
        two as f64 <= 2.2 * one as f64,
        "profile work grows faster than the kernel: {one} steps for 600 parts, {two} for 1200"
    );
}

/// Every part stores through `%rd5`, redefined in each part as `(tid · tid) * 4` (not an
/// affine form, so evaluated lane by lane) through
/// its own temporary: distinct definitions that agree in every lane, so deciding that
/// they agree takes all of them, for every access. The evaluation budget keeps the total
/// linear; past it the accesses count as data-dependent, and the profile says so.
fn agreeing_redefinitions(sections: usize) -> String {
    let mut s = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry big(.param .u64 big_param_0)\n{{\n\
         .reg .b32 %r<4>;\n.reg .b32 %q<{n}>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<2>;\n\
         ld.param.u64 %rd1, [big_param_0];\nmov.u32 %r2, %tid.x;\nmov.f32 %f1, 0f3F800000;\n",
        n = sections + 1
    );
    for k in 0..sections {
        s.push_str(&format!(
            "mul.lo.u32 %q{k}, %r2, %r2;\nmul.wide.u32 %rd5, %q{k}, 4;\nadd.s64 %rd6, %rd1, %rd5;\nst.global.f32 [%rd6], %f1;\n"
        ));
    }
    s.push_str("ret;\n}\n");
    s
}

#[test]
fn the_lane_evaluation_budget_bounds_agreeing_redefinitions() {
    let run = |sections: usize| {
        let text = agreeing_redefinitions(sections);
        let (module, errors) = ptx_ir::parse_and_lower(&text);
        assert!(errors.is_empty(), "{errors:?}");
        let options = ProfileOptions::default();
        let input = ProfileInput {
            module: &module,
            kernel: "big",
            gpu_id: "a100-sxm4-80gb",
            compute_capability: (8, 0),
            launch: LaunchConfig { grid: [1024, 1, 1], block: [256, 1, 1], dynamic_smem: 0, args: BTreeMap::new(), footprint_bytes: None, array_bytes: Default::default(), source: LaunchSource::Setting },
            resources: None,
            source_param_names: &[],
            demangled: None,
            options: &options,
            stated_trips: &[],
        };
        crate::work::take();
        let profile = crate::build(&input).expect("profile");
        (crate::work::take(), profile)
    };
    // Small: evaluated exactly, lane by lane, so the accesses are classified.
    let (_, small) = run(4);
    assert!(!small.assumptions.iter().any(|a| a.contains("stopped after")), "{:?}", small.assumptions);
    assert!(small.memory_accesses.iter().all(|a| a.class != crate::AccessClass::Irregular), "{:?}", small.memory_accesses);
    let (one, p1) = run(300);
    let (two, p2) = run(600);
    for p in [&p1, &p2] {
        assert!(p.assumptions.iter().any(|a| a.contains("stopped after")), "{:?}", p.assumptions);
    }
    assert!(two as f64 <= 2.2 * one as f64, "evaluation work: {one} steps for 300 parts, {two} for 600");
}

/// A kernel calling `f1` `fan` times, each `f<l>` calling `f<l+1>` `fan` times, `levels`
/// deep: a call tree of fan^levels leaves.
fn call_tree(levels: usize, fan: usize) -> String {
    let call = |callee: String, arg: &str| format!("{{\n.param .b32 p0;\nst.param.b32 [p0], {arg};\ncall.uni {callee}, (p0);\n}}\n");
    let mut s = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
    for l in (1..=levels).rev() {
        s.push_str(&format!(".func f{l}(.param .b32 f{l}_param_0)\n{{\n.reg .b32 %r<4>;\nld.param.b32 %r1, [f{l}_param_0];\nadd.s32 %r2, %r1, 1;\n"));
        if l < levels {
            for _ in 0..fan {
                s.push_str(&call(format!("f{}", l + 1), "%r2"));
            }
        }
        s.push_str("ret;\n}\n");
    }
    s.push_str(".visible .entry big(.param .u32 big_param_0)\n{\n.reg .b32 %r<4>;\nld.param.u32 %r1, [big_param_0];\n");
    for _ in 0..fan {
        s.push_str(&call("f1".into(), "%r1"));
    }
    s.push_str("ret;\n}\n");
    s
}

fn profile_of(text: &str) -> (u64, crate::KernelProfile) {
    let (module, errors) = ptx_ir::parse_and_lower(text);
    assert!(errors.is_empty(), "{errors:?}");
    let options = ProfileOptions::default();
    let input = ProfileInput {
        module: &module,
        kernel: "big",
        gpu_id: "a100-sxm4-80gb",
        compute_capability: (8, 0),
        launch: LaunchConfig { grid: [1, 1, 1], block: [32, 1, 1], dynamic_smem: 0, args: BTreeMap::new(), footprint_bytes: None, array_bytes: Default::default(), source: LaunchSource::Setting },
        resources: None,
        source_param_names: &[],
        demangled: None,
        options: &options,
        stated_trips: &[],
    };
    crate::work::take();
    let profile = crate::build(&input).expect("profile");
    (crate::work::take(), profile)
}

#[test]
fn call_trees_are_expanded_exactly_within_the_budget_and_bounded_past_it() {
    // Small: every call expanded, so the dynamic call count is 3 + 9 + 27 + 81 + 243.
    let (_, small) = profile_of(&call_tree(5, 3));
    assert_eq!(small.counts.dynamic.get(&ptx_ir::InstrClass::Call).copied(), Some(363.0), "{:?}", small.counts.dynamic);
    assert!(!small.assumptions.iter().any(|a| a.contains("the calls expand")), "{:?}", small.assumptions);
    // Ten calls per function, eight deep: 10^8 expansions unbounded (minutes); bounded,
    // and said.
    let (work, big) = profile_of(&call_tree(9, 10));
    // The budget, plus the kernel's own (small) analyses.
    assert!(work <= super::build::CALL_EXPANSION_BUDGET + (1 << 16), "{work} steps");
    assert!(big.assumptions.iter().any(|a| a.contains("the calls expand")), "{:?}", big.assumptions);
}
