//! `power-limited`: the board cannot hold its boost clock while the kernel runs.
//!
//! ## What it does
//! Reports a kernel whose headline prediction on the primary GPU runs below the boost
//! clock because the kernel would draw more than the board's power limit there, when that
//! costs at least [`MIN_SLOWDOWN`] of its time. The `bottleneck` model finds the clock the
//! board lowers to (`clock_ratio`, `clock_mhz` and `boost_clock_time_us` in its breakdown;
//! docs/models/bottleneck.md, "Power limit"): the share of the boost clock at which the
//! activity power model's demand (the board's fixed draw, 9.7 pJ per lane instruction times
//! the clock share for the voltage, and the memory's energy per DRAM byte, over the time)
//! meets the limit. The message gives both clocks, both times and the limit.
//!
//! ## Why is this bad?
//! A board holds its power limit by lowering the clock (NVML reports it as the clock event
//! "SW power cap"), so a kernel that keeps its arithmetic units busy on a board with a low
//! limit for its size (an L40's 300 W for 142 SMs, an L4's 72 W, a T4's 70 W) runs slower
//! than its boost-clock throughput suggests, however well it is written. Each instruction
//! costs energy: issuing fewer for the same result lowers the draw and lets the clock rise.
//!
//! ## Example
//! ```cuda
//! // tests/fixtures/cu/nbody.cu: ~20 FP32 operations and one rsqrtf per interaction,
//! // every SM's FP32 pipe busy.
//! for (int k = 0; k < blockDim.x; ++k)
//!     acc = body_interaction(my, sh_pos[k], acc);
//! ```
//!
//! ## Fix
//! No automatic fix. Fewer instructions per result: fused multiply-adds (`-fmad=true`, the
//! default; `fmaf`), vector loads and stores, less index arithmetic in inner loops (pointer
//! increments, unrolling), half-precision arithmetic (`half2`) or tensor cores where the
//! precision allows. Measurements of such a kernel depend on the board's limit and cooling:
//! compare at a fixed clock (`nvidia-smi --lock-gpu-clocks`) or over a sustained run.

use super::{Ctx, Finding, pct, per_gpu};
use crate::{Severity, TargetAnalysis};

pub const CODE: &str = "power-limited";
pub const SEVERITY: Severity = Severity::Information;

/// The least slowdown reported: the time at the lowered clock over the time at the boost
/// clock, less one. A board that lowers its clock by a few percent is within the spread of
/// repeated timings and of boards of one model.
pub const MIN_SLOWDOWN: f64 = 0.1;

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    per_gpu(cx, acc, check_target);
}

/// The clock the headline prediction ran at where the board's power limit lowered it at a
/// cost of at least [`MIN_SLOWDOWN`] of the time: (share of the boost clock, MHz, the time
/// at the boost clock in µs). Also what the kernel summary and inlay hint mark.
pub fn lowered_clock(report: &perf_models::Report) -> Option<(f64, f64, f64)> {
    let h = &report.headline;
    let breakdown = &report.predictions.iter().find(|p| p.model == h.model)?.breakdown;
    let get = |k: &str| breakdown.get(k).copied().filter(|v| v.is_finite() && *v > 0.0);
    let ratio = get(perf_models::bottleneck::CLOCK_RATIO)?;
    let mhz = get("clock_mhz")?;
    let boost_us = get(perf_models::bottleneck::BOOST_CLOCK_TIME_US)?;
    (ratio < 1.0 && h.time_us >= boost_us * (1.0 + MIN_SLOWDOWN)).then_some((ratio, mhz, boost_us))
}

fn check_target(cx: &Ctx<'_>, t: &TargetAnalysis) -> Option<Finding> {
    let report = t.models.as_ref().ok()?;
    let h = &report.headline;
    let (ratio, mhz, boost_us) = lowered_clock(report)?;
    // On a view with a locked SM clock (`gpu_spec::Gpu::with_locked_clock`) the clock the
    // model started from is the lock.
    let clock = if t.gpu.rated_boost_clock_mhz.is_some() { "locked" } else { "boost" };
    let message = format!(
        "power-limited on {}: at its {:.0} MHz {clock} clock the kernel would draw more than the board's {:.0} W, so the headline model `{}` runs it at {:.0} MHz ({} of the {clock} clock) and predicts {} instead of {}; fewer instructions per result (fused multiply-adds, vector loads, less index arithmetic) lower the draw and let the clock rise",
        t.gpu.name,
        t.gpu.boost_clock_mhz,
        t.gpu.tdp_w,
        h.model,
        mhz,
        pct(ratio),
        crate::display::time_us(h.time_us),
        crate::display::time_us(boost_us),
    );
    let mut f = cx.on_kernel(CODE, SEVERITY, message, Some(&t.gpu.id));
    f.fixes.extend(cx.annotation_fix());
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::{analyze_text, findings};

    /// A grid-stride loop of 64 dependent FMAs on each of four accumulators per element
    /// (nvcc's shape: `fma.rn.f32` on registers, one load and one store per element).
    fn fma_heavy(n_fmas: usize) -> String {
        let mut body = String::new();
        for i in 0..n_fmas {
            let acc = i % 4;
            body.push_str(&format!("fma.rn.f32 %f{}, %f{}, %f5, %f6;\n", acc + 1, acc + 1));
        }
        format!(
            ".version 9.5\n.target sm_89\n.address_size 64\n.visible .entry fma_heavy(\n.param .u64 fma_heavy_param_0,\n.param .u32 fma_heavy_param_1\n)\n{{\n.reg .pred %p<2>;\n.reg .b32 %r<8>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<6>;\nld.param.u64 %rd1, [fma_heavy_param_0];\nld.param.u32 %r2, [fma_heavy_param_1];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r3, %ctaid.x;\nmov.u32 %r4, %ntid.x;\nmov.u32 %r5, %tid.x;\nmad.lo.s32 %r1, %r3, %r4, %r5;\nsetp.ge.s32 %p1, %r1, %r2;\n@%p1 bra $L__BB0_2;\nmul.wide.s32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.f32 %f5, [%rd4];\nmov.f32 %f6, 0f3F800000;\nmov.f32 %f1, %f5;\nmov.f32 %f2, %f5;\nmov.f32 %f3, %f5;\nmov.f32 %f4, %f5;\n{body}add.f32 %f7, %f1, %f2;\nadd.f32 %f7, %f7, %f3;\nadd.f32 %f7, %f7, %f4;\nst.global.f32 [%rd4], %f7;\n$L__BB0_2:\nret;\n}}\n"
        )
    }

    #[test]
    fn an_fma_bound_kernel_on_an_l40_is_power_limited_and_not_on_an_a100() {
        let text = fma_heavy(512);
        let n = 1 << 24;
        let a = analyze_text(&text, [n / 256, 1, 1], [256, 1, 1], &[("param_1", i64::from(n))], &["l40"]);
        let f = findings(&a, "fma_heavy", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels.iter().map(|k| &k.findings).collect::<Vec<_>>());
        let m = &f[0].message;
        assert!(m.starts_with("power-limited on NVIDIA L40: at its 2490 MHz boost clock"), "{m}");
        assert!(m.contains("more than the board's 300 W"), "{m}");
        assert_eq!(f[0].gpu.as_deref(), Some("l40"));
        // The kernel summary and the inlay hint say it too.
        let t = &a.kernels[0].targets[0];
        assert!(crate::hover::summary(t).contains("-bound, power-limited"), "{}", crate::hover::summary(t));
        assert!(crate::hover::kernel_label(t, &crate::hover::InlayParts::default()).contains("-bound, power-limited"));
        // The A100 80 GB's 400 W holds its boost clock for the same kernel.
        let a = analyze_text(&text, [n / 256, 1, 1], [256, 1, 1], &[("param_1", i64::from(n))], &["a100-sxm4-80gb"]);
        assert!(findings(&a, "fma_heavy", CODE).is_empty());
        assert!(!crate::hover::summary(&a.kernels[0].targets[0]).contains("power-limited"));
    }

    #[test]
    fn a_memory_bound_kernel_whose_time_the_clock_does_not_set_is_not_reported() {
        // Two FMAs per element: the L40 streams at its DRAM rate whatever the clock.
        let text = fma_heavy(2);
        let n = 1 << 26;
        let a = analyze_text(&text, [n / 256, 1, 1], [256, 1, 1], &[("param_1", i64::from(n))], &["l40"]);
        assert!(findings(&a, "fma_heavy", CODE).is_empty(), "{:?}", a.kernels.iter().map(|k| &k.findings).collect::<Vec<_>>());
    }
}
