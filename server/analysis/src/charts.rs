//! The data behind the report panel's charts (`charts` in each GPU's object of
//! `warpsight/kernelReport` and `analyze --format json`): what an editor needs to draw,
//! computed here so that every number comes from the analysis and no client re-derives a
//! model. Typed and serialised with serde; the drawing is the client's.
//!
//! - **Occupancy against block size**: NVIDIA's occupancy calculation (`gpu_spec::occupancy`,
//!   the CUDA Occupancy Calculator's "Impact of Varying Block Size" plot) for every multiple
//!   of the warp size, with the kernel's registers and shared memory, and the current launch
//!   marked with its limiters.
//! - **Roofline**: Williams, Waterman and Patterson, "Roofline: an insightful visual
//!   performance model for multicore architectures" (CACM 52(4), 2009): attainable rate
//!   `min(peak, intensity × bandwidth)`. In the units the `roofline` model uses (its module
//!   doc): FP32 lane operations (an FMA counts once) at `fp32 lanes × SMs × clock`, DRAM
//!   bytes from the traffic estimate. The kernel's point is its FP32 operations over those
//!   bytes, against its operations over the headline time: an estimate, like the time.
//! - **Time breakdown** of the headline model: its parts in µs (`breakdown` keys ending in
//!   `_us`), each the time that part alone would take; the model combines them with
//!   overlap, so they do not add up to the headline.
//! - **Power waterfall**: the power model's base (TreeSHAP's expected value, or the activity
//!   model's idle draw), then the largest contributions
//!   in words (`power_model::contribution_label`), the rest summed, ending at the estimate.

use serde::{Deserialize, Serialize};

use crate::TargetAnalysis;
use crate::display::time_us;

/// How many power contributions the waterfall names; the rest are one step.
const WATERFALL_STEPS: usize = 6;

/// The charts of one kernel on one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetCharts {
    pub occupancy: Option<OccupancyChart>,
    pub roofline: Option<RooflineChart>,
    pub time_breakdown: Option<TimeBreakdown>,
    pub power: Option<PowerWaterfall>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OccupancyPoint {
    pub block_size: u32,
    /// Theoretical occupancy, 0 to 1.
    pub occupancy: f64,
    pub limiters: gpu_spec::Limiters,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OccupancyChart {
    pub points: Vec<OccupancyPoint>,
    /// The launch's threads per block (the marked point).
    pub current_block_size: u32,
    pub current_occupancy: f64,
    pub current_limiters: gpu_spec::Limiters,
    /// The smallest block size with the highest occupancy on the curve.
    pub best_block_size: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflinePoint {
    /// FP32 operations per DRAM byte.
    pub intensity: f64,
    /// FP32 operations per second at the headline time, in GOP/s.
    pub achieved_gops: f64,
    pub fp32_ops: f64,
    pub dram_bytes: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflineChart {
    /// Peak FP32 lane operations per second, in GOP/s (an FMA counts once).
    pub peak_gops: f64,
    /// Peak DRAM bandwidth, GB/s (datasheet).
    pub bandwidth_gbs: f64,
    /// The intensity where the two roofs meet, operations per byte.
    pub ridge: f64,
    /// `None` when the kernel moves no DRAM bytes or does no FP32 arithmetic (no point on
    /// a log-log plot); `note` says which.
    pub kernel: Option<RooflinePoint>,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimePart {
    /// The breakdown key (`memory_us`).
    pub key: String,
    /// In words ("memory").
    pub label: String,
    pub us: f64,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeBreakdown {
    pub model: String,
    pub total_us: f64,
    pub total_text: String,
    pub bound: String,
    pub parts: Vec<TimePart>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerStep {
    /// The feature id (`inst_issue_cycles`), or `other` for the rest.
    pub feature: String,
    /// In words ("total work in issue cycles").
    pub label: String,
    pub watts: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerWaterfall {
    pub base_watts: f64,
    /// What the base is, in words: the trained model's average kernel (TreeSHAP's expected
    /// value) or the idle board (the activity model, docs/power.md).
    pub base_label: String,
    pub total_watts: f64,
    pub steps: Vec<PowerStep>,
    /// The GPU whose trained model produced the numbers, or the board the activity model
    /// ran for.
    pub model_gpu: String,
}

/// The charts of a target; each part is `None` when its inputs are missing (occupancy not
/// computable, no time predicted, no power model).
pub fn target_charts(t: &TargetAnalysis) -> TargetCharts {
    TargetCharts { occupancy: occupancy_chart(t), roofline: roofline_chart(t), time_breakdown: time_breakdown(t), power: power_waterfall(t) }
}

fn occupancy_chart(t: &TargetAnalysis) -> Option<OccupancyChart> {
    use gpu_spec::occupancy::{DeviceProps, DeviceState, FuncAttrs, occupancy_curve};
    let current = t.occupancy.as_ref().ok()?;
    let r = &t.profile.resources;
    let props = DeviceProps::from_limits(&t.gpu.limits, t.gpu.sm_count);
    let attrs = FuncAttrs::new(r.registers_per_thread, r.static_smem_bytes, &props);
    let dynamic = t.profile.launch.dynamic_smem;
    let curve = occupancy_curve(&props, &attrs, &DeviceState::default(), |_| dynamic).ok()?;
    let best = curve.iter().map(|p| p.occupancy).fold(0.0, f64::max);
    let best_block_size = curve.iter().find(|p| p.occupancy >= best && best > 0.0).map(|p| p.block_size);
    Some(OccupancyChart {
        points: curve.iter().map(|p| OccupancyPoint { block_size: p.block_size, occupancy: p.occupancy, limiters: p.limiters }).collect(),
        current_block_size: u32::try_from(t.profile.launch.threads_per_block()).unwrap_or(u32::MAX),
        current_occupancy: current.occupancy,
        current_limiters: current.limiters,
        best_block_size,
    })
}

fn roofline_chart(t: &TargetAnalysis) -> Option<RooflineChart> {
    let g = &t.gpu;
    // Lane operations at the boost clock: half the FMA-counts-two FLOP peak.
    let peak_gops = f64::from(g.units.fp32_per_sm) * f64::from(g.sm_count) * g.boost_clock_mhz / 1000.0;
    let bandwidth_gbs = g.mem_bandwidth_gbs;
    if peak_gops <= 0.0 || bandwidth_gbs <= 0.0 {
        return None;
    }
    let ridge = peak_gops / bandwidth_gbs;
    let threads = t.profile.launch.total_threads() as f64;
    let fp32_ops = t.profile.counts.dynamic.get(&ptx_ir::InstrClass::Fp32).copied().unwrap_or(0.0) * threads;
    let report = t.models.as_ref().ok();
    // The bytes the roofline model's floor charges (`floor_bytes`), or, when every array
    // stays in the L2 between launches (floor bytes 0), the cold reads and writes.
    let floor = report.and_then(|r| r.predictions.iter().find(|p| p.model == "roofline"));
    let get = |k: &str| floor.and_then(|p| p.breakdown.get(k).copied()).unwrap_or(0.0);
    let (dram_bytes, l2_resident) = match floor {
        Some(_) if get("floor_bytes") > 0.0 => (Some(get("floor_bytes")), false),
        Some(_) => (Some(get("dram_read_bytes") + get("dram_write_bytes")), true),
        None => (None, false),
    };
    let time_us = report.map(|r| r.headline.time_us).filter(|t| *t > 0.0 && t.is_finite());
    let (kernel, note) = match (dram_bytes, time_us) {
        (Some(bytes), Some(us)) if bytes > 0.0 && fp32_ops > 0.0 => (
            Some(RooflinePoint { intensity: fp32_ops / bytes, achieved_gops: fp32_ops / (us * 1e-6) / 1e9, fp32_ops, dram_bytes: bytes }),
            if l2_resident {
                "FP32 operations (an FMA counts once) per DRAM byte, at the headline time: estimates. The arrays fit in the L2, so repeated launches read them from there and the point can lie above the DRAM roof".to_string()
            } else {
                "FP32 operations (an FMA counts once) per DRAM byte, at the headline time: estimates".to_string()
            },
        ),
        (Some(_), Some(_)) if fp32_ops <= 0.0 => (None, "the kernel does no FP32 arithmetic: no point on the FP32 roofline".to_string()),
        (Some(_), Some(_)) => (None, "the kernel moves no DRAM bytes in the traffic estimate: no point on the roofline".to_string()),
        _ => (None, "no time or traffic predicted: no point on the roofline".to_string()),
    };
    Some(RooflineChart { peak_gops, bandwidth_gbs, ridge, kernel, note })
}

/// A breakdown key in words: `launch_overhead_us` → "launch overhead".
fn key_label(key: &str) -> String {
    key.trim_end_matches("_us").replace('_', " ")
}

fn time_breakdown(t: &TargetAnalysis) -> Option<TimeBreakdown> {
    let r = t.models.as_ref().ok()?;
    let p = r.predictions.iter().find(|p| p.model == r.headline.model)?;
    let mut parts: Vec<TimePart> = p
        .breakdown
        .iter()
        .filter(|(k, v)| k.ends_with("_us") && v.is_finite() && **v > 0.0)
        .map(|(k, v)| TimePart { key: k.clone(), label: key_label(k), us: *v, text: time_us(*v) })
        .collect();
    if parts.is_empty() {
        return None;
    }
    parts.sort_by(|a, b| b.us.total_cmp(&a.us));
    Some(TimeBreakdown {
        model: r.headline.model.to_string(),
        total_us: r.headline.time_us,
        total_text: time_us(r.headline.time_us),
        bound: r.headline.bound.name().to_string(),
        parts,
    })
}

fn power_waterfall(t: &TargetAnalysis) -> Option<PowerWaterfall> {
    let p = t.power.as_ref()?;
    let mut sorted: Vec<&(String, f64)> = p.contributions.iter().filter(|(_, w)| w.is_finite()).collect();
    sorted.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    let mut steps: Vec<PowerStep> = sorted
        .iter()
        .take(WATERFALL_STEPS)
        .map(|(f, w)| PowerStep { feature: f.clone(), label: power_model::contribution_label(f).unwrap_or(f).to_string(), watts: *w })
        .collect();
    let rest: f64 = sorted.iter().skip(WATERFALL_STEPS).map(|(_, w)| w).sum();
    if sorted.len() > WATERFALL_STEPS {
        steps.push(PowerStep { feature: "other".into(), label: format!("{} other features", sorted.len() - WATERFALL_STEPS), watts: rest });
    }
    let activity = p.contributions.iter().any(|(f, _)| power_model::activity::label(f).is_some());
    let base_label = if activity { "idle board" } else { "model's average kernel" }.to_string();
    Some(PowerWaterfall { base_watts: p.base_watts, base_label, total_watts: p.watts, steps, model_gpu: p.model_gpu.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::analyze;

    #[test]
    fn charts_of_a_kernel_with_a_launch() {
        let (_, file) = analyze("transpose_naive", [32, 32, 1], [32, 8, 1], &[("param_2", 1024), ("param_3", 1024)], &["a100", "tesla-k20"]);
        let k = &file.kernels[0];
        assert_eq!(k.targets.len(), 2);
        for t in &k.targets {
            let c = target_charts(t);
            let occ = c.occupancy.expect("occupancy curve");
            assert_eq!(occ.current_block_size, 256);
            assert!(occ.points.iter().all(|p| p.block_size % 32 == 0 && (0.0..=1.0).contains(&p.occupancy)));
            assert_eq!(occ.points.last().map(|p| p.block_size), Some(t.gpu.limits.max_threads_per_block));
            let at = occ.points.iter().find(|p| p.block_size == 256).map(|p| p.occupancy);
            assert_eq!(at, Some(occ.current_occupancy), "the curve agrees with the launch's occupancy");
            assert!(!occ.current_limiters.is_empty());
            let roof = c.roofline.expect("roofline");
            assert!(roof.peak_gops > 0.0 && roof.bandwidth_gbs > 0.0);
            assert!((roof.ridge - roof.peak_gops / roof.bandwidth_gbs).abs() < 1e-9);
            let tb = c.time_breakdown.expect("time breakdown");
            assert!(!tb.parts.is_empty());
            assert!(tb.parts.iter().all(|p| p.us > 0.0 && p.text == time_us(p.us) && !p.label.contains('_')), "{:?}", tb.parts);
            assert!(tb.parts.windows(2).all(|w| w[0].us >= w[1].us), "largest part first");
        }
        // The K20 has a trained power model: the waterfall goes from the base to the estimate.
        let k20 = k.targets.iter().find(|t| t.gpu.id == "tesla-k20").expect("k20 target");
        let w = target_charts(k20).power.expect("power waterfall");
        let sum = w.base_watts + w.steps.iter().map(|s| s.watts).sum::<f64>();
        assert!((sum - w.total_watts).abs() < 1e-6 * w.total_watts.max(1.0), "base {} + steps = {sum}, total {}", w.base_watts, w.total_watts);
        assert_eq!(w.steps.len(), WATERFALL_STEPS + 1, "the largest contributions and the rest");
        assert!(w.steps.iter().all(|s| !s.label.contains('_')), "every step in words: {:?}", w.steps);
    }

    #[test]
    fn the_roofline_point_needs_fp32_work() {
        // The transpose moves data and does no FP32 arithmetic: no point, and the note says why.
        let (_, file) = analyze("transpose_naive", [32, 32, 1], [32, 8, 1], &[("param_2", 1024), ("param_3", 1024)], &["a100"]);
        let roof = target_charts(&file.kernels[0].targets[0]).roofline.expect("roofline");
        assert!(roof.kernel.is_none());
        assert!(roof.note.contains("no FP32"), "{}", roof.note);
        // saxpy does one FMA per 12 bytes, on 64 MiB arrays (more than the L2): a point left of the ridge, below the bandwidth roof.
        let (_, file) = analyze("saxpy", [65536, 1, 1], [256, 1, 1], &[("param_0", 1 << 24)], &["a100"]);
        let roof = target_charts(&file.kernels[0].targets[0]).roofline.expect("roofline");
        let p = roof.kernel.expect("saxpy's point");
        assert!(p.intensity > 0.0 && p.intensity < roof.ridge, "intensity {} ridge {}", p.intensity, roof.ridge);
        assert!(p.achieved_gops <= p.intensity * roof.bandwidth_gbs * (1.0 + 1e-9), "under the memory roof");
    }
}
