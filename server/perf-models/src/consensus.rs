//! The consensus: run every applicable model and choose one headline prediction.
//!
//! Why one headline: an editor hover has room for one number. Why a *rule* rather than an
//! average: the models are validated on different hardware, and averaging a model that
//! was tuned on the GPU at hand with one that was not dilutes the better evidence.
//!
//! **The rule** (evidence in `docs/models.md` and `docs/validation.md`), applied in order:
//! 1. *Calibrated on this kernel and GPU.* If the user supplied a measurement-derived
//!    calibration for this kernel on this GPU — BSP's λ, or the wave model's τ — that
//!    model is the headline: Amarís et al. 2016 reports predictions within 5 % once λ is fitted per
//!    GPU (§VI, Fig. 7), and a measured τ pins the wave model the same way. BSP wins if
//!    both are given (its evidence covers six GPUs).
//! 2. *Otherwise the `bottleneck` model* on every database GPU: it is built for the
//!    mechanisms of current GPUs and checked against measurements on V100, A100, A40 and
//!    Turing/Ampere GeForce cards (docs/validation.md). Calibrated or not, no uncalibrated
//!    seed model decides the headline on a GPU it was not validated on.
//! 3. *A GPU that is not in the database* (the papers' own presets): the model validated on
//!    that architecture family: CC 1.x `mwp_cwp` (Dasgupta 2011's C1060 tuning), the Jetson TK1
//!    `cgpredict` (Wang et al. 2017, Table 4), CC 3.0–7.2 `scheduling` (Alavani 2023, Table 4.8);
//!    else the median of the applicable models other than the floor.
//! 4. *Never below the floor.* If the chosen time is below the roofline floor, the floor
//!    is the headline (model `roofline`) and the chosen model is listed in
//!    `floor_violations` with every other model below the floor.
//!
//! A model the rule prefers but that cannot apply falls through to the next step.

use kernel_profile::KernelProfile;

use crate::bsp::{self, BspConfig};
use crate::gpu::GpuParams;
use crate::prediction::{Bound, Prediction};
use crate::roofline::{self, FloorConfig};
use crate::wave::{self, WaveConfig};
use crate::{bottleneck, cgpredict, mwp_cwp, scheduling};

/// Everything the models cannot read from the profile or the GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    pub bsp: BspConfig,
    pub wave: WaveConfig,
    pub floor: FloorConfig,
    pub mwp_cwp: mwp_cwp::AdapterOptions,
    pub cgpredict: cgpredict::AdapterOptions,
}

impl ModelConfig {
    /// No calibration at all: λ = 1, τ and W_sat estimated, no cache hits, no L2 reuse.
    pub fn uncalibrated() -> ModelConfig {
        ModelConfig {
            bsp: BspConfig {
                lambda: None,
                l1_hit_rate: 0.0,
                l2_hit_rate: 0.0,
            },
            wave: WaveConfig {
                tau_us: None,
                saturation_warps: None,
            },
            floor: FloorConfig {
                l2_reuse_discount: 0.0,
            },
            mwp_cwp: mwp_cwp::AdapterOptions::default(),
            cgpredict: cgpredict::AdapterOptions::default(),
        }
    }
}

/// The chosen prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    pub model: &'static str,
    pub time_us: f64,
    pub bound: Bound,
    /// Which step of the rule chose it, in words.
    pub rule: String,
}

/// All predictions and the headline.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Every model that applied, the roofline floor included.
    pub predictions: Vec<Prediction>,
    pub headline: Headline,
    /// Models whose prediction is below the roofline floor.
    pub floor_violations: Vec<&'static str>,
    /// Models that did not apply, and why.
    pub not_applicable: Vec<(&'static str, String)>,
}

/// The model names in the registry, in report order.
pub const MODELS: [&str; 7] = [
    "bottleneck",
    "roofline",
    "mwp_cwp",
    "cgpredict",
    "wave",
    "bsp",
    "scheduling",
];

/// The model the rule prefers for a GPU (step 2), if any.
pub fn preferred_model(gpu: &GpuParams) -> Option<&'static str> {
    match gpu.cc {
        (1, _) => Some("mwp_cwp"),
        (3, 2) => Some("cgpredict"),
        (3, _) | (5, _) | (6, _) | (7, 0) | (7, 2) => Some("scheduling"),
        _ => None,
    }
}

/// [`run_all`] on a GPU of the database (exact occupancy, every model's database adapter).
pub fn run_all_for_gpu(
    profile: &KernelProfile,
    gpu: &gpu_spec::Gpu,
    cfg: &ModelConfig,
) -> Result<Report, String> {
    run_all(profile, &GpuParams::from_spec(gpu), cfg)
}

/// Runs every model and applies the rule. An error, a sentence starting with "cannot
/// predict:", when the profile is outside what the models accept ([`crate::guard`]), when
/// not even the floor applies (a GPU without clock or bandwidth), or when a model's
/// arithmetic still gave a number that is not a time (never silently dropped: the
/// headline would fall back to another model).
pub fn run_all(profile: &KernelProfile, gpu: &GpuParams, cfg: &ModelConfig) -> Result<Report, String> {
    crate::guard::check(profile)?;
    let mut predictions = Vec::new();
    let mut not_applicable = Vec::new();
    let mut overflowed: Option<String> = None;
    let mut push = |name: &'static str, p: Option<Prediction>, why: &str| match p {
        Some(p) if p.time_us.is_finite() && p.time_us >= 0.0 => predictions.push(p),
        Some(p) => {
            overflowed.get_or_insert_with(|| format!("cannot predict: the {name} model's arithmetic gave {} µs, not a time", p.time_us));
        }
        None => not_applicable.push((name, why.to_string())),
    };
    let Some(floor) = roofline::predict(profile, gpu, &cfg.floor) else {
        return Err(format!("cannot predict: no roofline floor for {} (no clock or memory bandwidth in its data)", gpu.id));
    };

    let tpb = u32::try_from(profile.launch.threads_per_block()).unwrap_or(u32::MAX);
    let smem = profile
        .resources
        .static_smem_bytes
        .saturating_add(profile.launch.dynamic_smem);
    let resident = gpu.resident_blocks_per_sm(tpb, profile.resources.registers_per_thread, smem);
    // When not even one block fits on an SM, that is the reason every launch-dependent
    // model gives up, whatever its own precondition says.
    let why = |own: &'static str| -> &'static str {
        if resident == 0 { "the launch cannot run on this GPU: no block fits on an SM (see the occupancy)" } else { own }
    };

    match &gpu.spec {
        Some(spec) => push(
            "bottleneck",
            bottleneck::predict(profile, spec),
            why("no resident block or an empty launch"),
        ),
        None => push(
            "bottleneck",
            None,
            "needs a GPU of the database (its parameters live in gpu-data)",
        ),
    }
    push("roofline", Some(floor.clone()), "");

    // The MWP/CWP-family adapters build their own device from the database entry when
    // there is one (their `predict_for_gpu`: the papers' tuned sets come from the entry's
    // data); a paper preset without one (`gpu-data/paper-gpus.toml`, none of which is the
    // C1060 or the TK1) gets the untuned device and no CGPredict platform. Before, these
    // branches matched the spelled ids `tesla-c1060` and `jetson-tk1`, which no preset has.
    let mwp = match &gpu.spec {
        Some(spec) => mwp_cwp::predict_for_gpu(profile, spec, &cfg.mwp_cwp),
        None => {
            let device = mwp_cwp::Device::untuned(
                &gpu.id,
                gpu.cc,
                gpu.sm_count,
                gpu.clock_mhz / 1000.0,
                gpu.mem_bandwidth_gbs,
                gpu.dram_latency_cycles,
                gpu.limits.max_warps_per_sm,
            );
            mwp_cwp::predict(profile, &device, resident, &cfg.mwp_cwp)
        }
    };
    push("mwp_cwp", mwp, why("no resident block or non-finite counts"));

    let cg = match &gpu.spec {
        Some(spec) => cgpredict::predict_for_gpu(profile, spec, &cfg.cgpredict),
        None => None,
    };
    push(
        "cgpredict",
        cg,
        why("no platform constants for this GPU (CGPredict's Table 3 is the TK1's), or the launch does not fit"),
    );
    push(
        "wave",
        wave::predict(profile, gpu, &cfg.wave),
        why("no resident block or no instructions"),
    );
    push("bsp", bsp::predict(profile, gpu, &cfg.bsp), "empty launch");
    push(
        "scheduling",
        scheduling::predict(profile, gpu),
        why("the profile has no basic blocks (dependence graphs)"),
    );

    if let Some(why) = overflowed {
        return Err(why);
    }
    let find = |name: &str| predictions.iter().find(|p| p.model == name);
    let chosen: Option<(&Prediction, String)> = if cfg.bsp.lambda.is_some() && find("bsp").is_some()
    {
        find("bsp").map(|p| {
            (
                p,
                "calibrated on a measurement: BSP with a fitted λ (Amarís et al. 2016 §VI)".to_string(),
            )
        })
    } else if cfg.wave.tau_us.is_some() && find("wave").is_some() {
        find("wave").map(|p| {
            (
                p,
                "calibrated on a measurement: wave with a measured τ".to_string(),
            )
        })
    } else if let Some(p) = find(bottleneck::NAME) {
        let why = match p.confidence {
            crate::prediction::Confidence::High => "the bottleneck model, calibrated on measurements of this GPU",
            _ => "the bottleneck model (the headline model for database GPUs)",
        };
        Some((p, why.to_string()))
    } else {
        preferred_model(gpu).and_then(find).map(|p| {
            (
                p,
                format!(
                    "the model validated for CC {}.{} ({})",
                    gpu.cc.0, gpu.cc.1, p.model
                ),
            )
        })
    };
    let (model, time_us, bound, mut rule) = match chosen {
        Some((p, why)) => (p.model, p.time_us, p.bound, why),
        None => {
            let mut times: Vec<(f64, &Prediction)> = predictions
                .iter()
                .filter(|p| p.model != "roofline")
                .map(|p| (p.time_us, p))
                .collect();
            times.sort_by(|a, b| a.0.total_cmp(&b.0));
            match times.len() {
                0 => (
                    floor.model,
                    floor.time_us,
                    floor.bound,
                    "only the floor applies".to_string(),
                ),
                n => {
                    // The lower median, so the headline is always a real model's number.
                    let (t, p) = times[(n - 1) / 2];
                    (
                        p.model,
                        t,
                        p.bound,
                        format!(
                            "median of {n} applicable models (no model validated for CC {}.{})",
                            gpu.cc.0, gpu.cc.1
                        ),
                    )
                }
            }
        }
    };
    let floor_violations: Vec<&'static str> = predictions
        .iter()
        .filter(|p| p.model != "roofline" && roofline::below_floor(p, &floor))
        .map(|p| p.model)
        .collect();
    let headline = if model != "roofline" && time_us < floor.time_us * 0.995 {
        rule.push_str(&format!(
            "; {model} predicted {time_us:.3} µs, below the floor, so the floor is the headline"
        ));
        Headline {
            model: "roofline",
            time_us: floor.time_us,
            bound: floor.bound,
            rule,
        }
    } else {
        Headline {
            model,
            time_us,
            bound,
            rule,
        }
    };
    Ok(Report {
        predictions,
        headline,
        floor_violations,
        not_applicable,
    })
}
