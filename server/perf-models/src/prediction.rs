//! The common output of every execution-time model.

use std::collections::BTreeMap;

/// What limits the kernel, in the sense of the model that predicted it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bound {
    Memory,
    Compute,
    /// Neither unit is saturated: too few warps to hide latency.
    Latency,
    Balanced,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Memory => "memory",
            Bound::Compute => "compute",
            Bound::Latency => "latency",
            Bound::Balanced => "balanced",
        }
    }
}

/// How far a prediction can be trusted for this GPU and kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn name(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// A [`Prediction::breakdown`] from named values, leaving out the ones that are not finite
/// (a quantity a model's case did not define, e.g. MWP without memory requests).
pub fn finite_breakdown<const N: usize>(parts: [(&str, f64); N]) -> BTreeMap<String, f64> {
    parts
        .into_iter()
        .filter(|(_, v)| v.is_finite())
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// One model's prediction for one kernel, launch and GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The model's stable name: `mwp_cwp`, `wave`, `bsp`, `cgpredict`, `scheduling`, `roofline`.
    pub model: &'static str,
    /// Predicted kernel execution time in microseconds.
    pub time_us: f64,
    /// Named parts of the estimate, in the model's own units (cycles or µs; the key says
    /// which, e.g. `comp_cycles`, `mem_cycles`, `launch_overhead_us`).
    pub breakdown: BTreeMap<String, f64>,
    pub bound: Bound,
    pub confidence: Confidence,
    /// Everything the model assumed beyond the profile (its defaults, its calibration).
    pub assumptions: Vec<String>,
    /// One sentence for hovers, e.g. "memory-bound: MWP 3.2 < CWP 14.0, so only 3 of 14
    /// warps' memory requests overlap".
    pub explanation: String,
    /// MWP/CWP-family models only.
    pub mwp: Option<f64>,
    pub cwp: Option<f64>,
}
