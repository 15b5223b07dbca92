//! Huge trip counts through the public API (issue 12 item 11): a deeply nested loop kernel
//! whose unknown trip counts are assumed absurdly large must come out as "cannot predict:
//! ..." with finite counts in the report, never as a null instruction total with the
//! roofline floor as the headline.

use analysis::{Context, Settings};

/// A kernel with `depth` nested loops, each bounded by a value loaded from memory (so
/// every trip count is unknown and takes the default), around one FMA.
fn nested_loops(depth: usize) -> String {
    let mut s = String::from(".version 8.0\n.target sm_80\n.address_size 64\n\n.visible .entry deep(\n\t.param .u64 deep_param_0\n)\n{\n");
    s += &format!("\t.reg .pred %p<{}>;\n\t.reg .b32 %r<{}>;\n\t.reg .f32 %f<3>;\n\t.reg .b64 %rd<3>;\n\n", depth + 1, depth + 2);
    s += "\tld.param.u64 %rd1, [deep_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tld.global.u32 %r0, [%rd2];\n\tmov.f32 %f1, 0f3F800000;\n";
    for i in 1..=depth {
        s += &format!("\tmov.u32 %r{i}, 0;\n$L_{i}:\n");
    }
    s += "\tfma.rn.f32 %f1, %f1, %f1, %f1;\n";
    for i in (1..=depth).rev() {
        s += &format!("\tadd.s32 %r{i}, %r{i}, 1;\n\tsetp.lt.s32 %p{i}, %r{i}, %r0;\n\t@%p{i} bra $L_{i};\n");
    }
    s += "\tst.global.f32 [%rd2], %f1;\n\tret;\n}\n";
    s
}

fn settings(default_trip_count: f64) -> Settings {
    let mut s = Settings { gpus: vec!["a100-sxm4-80gb".into(), "tesla-k20".into()], ..Settings::default() };
    s.launch.grid = Some([1024, 1, 1]);
    s.launch.block = Some([256, 1, 1]);
    s.profile.default_trip_count = default_trip_count;
    s
}

#[test]
fn the_generated_kernel_has_its_nested_loops() {
    let a = analysis::analyze(&nested_loops(5), &settings(16.0), &Context::default());
    assert!(a.syntax.iter().all(|d| d.severity != analysis::Severity::Error), "{:?}", a.syntax);
    let k = &a.kernels[0];
    let t = &k.targets[0];
    assert_eq!(t.profile.loops.len(), 5);
    assert!(t.profile.loops.iter().all(|l| l.trip_count.is_none() && l.assumed_trip_count == 16.0), "{:?}", t.profile.loops);
    // 16^5 FMAs per thread, and a real prediction from more than the floor.
    let fma = t.profile.counts.dynamic.get(&ptx_ir::InstrClass::Fp32).copied().unwrap_or_default();
    assert_eq!(fma, 16f64.powi(5));
    let r = t.models.as_ref().expect("predicted");
    assert_ne!(r.headline.model, "roofline", "{}", r.headline.rule);
}

#[test]
fn huge_trip_counts_in_deep_nests_cannot_be_predicted_and_say_why() {
    // 40 loops of 10^308 (the API does not validate the setting; the CLI and the editor
    // refuse it) overflow f64 many times over; 2 loops of 10^9 (the largest accepted
    // default) exceed 10^15 instructions per thread; 13 loops of 16 (the default) do too.
    for (depth, trips) in [(40, 1e308), (2, 1e9), (13, 16.0)] {
        let a = analysis::analyze(&nested_loops(depth), &settings(trips), &Context::default());
        let k = &a.kernels[0];
        for t in &k.targets {
            let why = t.models.as_ref().expect_err("no prediction");
            assert!(why.starts_with("cannot predict: each thread would execute about"), "{depth}×{trips} on {}: {why}", t.gpu.id);
            assert!(why.contains("loop trip counts"), "{why}");
            assert!(t.power.is_none() && t.energy_uj.is_none(), "no power or energy from absurd counts");
            // The profile stays finite (saturated), and says so.
            assert!(t.profile.counts.total_dynamic().is_finite());
            assert!(t.profile.assumptions.iter().any(|a| a.contains("no time is predicted")), "{:?}", t.profile.assumptions);
        }
        // The report: finite totals, no headline, the reason.
        let text = nested_loops(depth);
        let json = serde_json::to_value(analysis::report::FileReport::new("deep.ptx", analysis::report::SourceKind::Ptx, &text, &a)).expect("serialises");
        let kj = &json["kernels"][0];
        assert!(kj["instruction_mix"]["dynamic_total_per_thread"].is_f64(), "{}", kj["instruction_mix"]);
        let target = &kj["gpus"]["a100-sxm4-80gb"];
        assert!(target["headline"].is_null(), "{}", target["headline"]);
        assert!(target["cannot_predict"].as_str().is_some_and(|s| s.starts_with("cannot predict")), "{target}");
        assert_eq!(target["predictions"], serde_json::json!({}));
        // The hover says it in words.
        let card = analysis::hover::kernel_card(k);
        assert!(card.contains("cannot predict: each thread would execute"), "{card}");
    }
}
