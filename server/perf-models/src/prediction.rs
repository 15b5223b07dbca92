//! The common output of every execution-time model.

use std::collections::BTreeMap;

/// A functional pipe of the SM (the pipes Nsight Compute's "Compute Workload Analysis"
/// names), for [`Bound::Pipe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pipe {
    Fp32,
    Fp64,
    Fp16,
    Int,
    Sfu,
    Conversion,
    WarpLevel,
    Tensor,
    /// Load/store unit (MIO), charged per wavefront by the memory terms.
    Lsu,
}

impl Pipe {
    pub fn name(self) -> &'static str {
        match self {
            Pipe::Fp32 => "fp32",
            Pipe::Fp64 => "fp64",
            Pipe::Fp16 => "fp16",
            Pipe::Int => "int",
            Pipe::Sfu => "sfu",
            Pipe::Conversion => "conversion",
            Pipe::WarpLevel => "warp-level",
            Pipe::Tensor => "tensor",
            Pipe::Lsu => "lsu",
        }
    }
}

/// What limits the kernel, in the sense of the model that predicted it. The seed models
/// speak of `memory`/`compute`/`latency`/`balanced`; the `bottleneck` model names the
/// binding resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bound {
    Memory,
    Compute,
    /// Neither unit is saturated: too few warps to hide latency.
    Latency,
    Balanced,
    /// DRAM bandwidth.
    Dram,
    /// L2 bandwidth.
    L2,
    /// L1/texture data path (requests and sectors).
    L1,
    /// Shared-memory bandwidth (bank conflicts included).
    Shared,
    /// Warp-instruction issue slots.
    Issue,
    /// One functional pipe.
    Pipe(Pipe),
    /// Same-address atomics serialised at the L2.
    Atomics,
    /// The launch overhead is longer than the kernel's work.
    Launch,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Memory => "memory",
            Bound::Compute => "compute",
            Bound::Latency => "latency",
            Bound::Balanced => "balanced",
            Bound::Dram => "dram",
            Bound::L2 => "l2",
            Bound::L1 => "l1",
            Bound::Shared => "shared",
            Bound::Issue => "issue",
            Bound::Pipe(p) => p.name(),
            Bound::Atomics => "atomics",
            Bound::Launch => "launch",
        }
    }

    /// `true` when the binding resource is on the memory side (DRAM, caches, shared
    /// memory, atomics, or the seed models' `memory`).
    pub fn is_memory_side(self) -> bool {
        matches!(
            self,
            Bound::Memory | Bound::Dram | Bound::L2 | Bound::L1 | Bound::Shared | Bound::Atomics
        )
    }

    /// `true` when the binding resource is arithmetic or instruction issue.
    pub fn is_compute_side(self) -> bool {
        matches!(self, Bound::Compute | Bound::Issue | Bound::Pipe(_))
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
    /// The model's stable name: `bottleneck`, `mwp_cwp`, `wave`, `bsp`, `cgpredict`, `scheduling`, `roofline`.
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
