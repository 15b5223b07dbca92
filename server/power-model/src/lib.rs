//! Static power and energy estimates for CUDA kernels (Alavani 2023, Ch. 5).
//!
//! The thesis predicts a kernel's average board power with an XGBoost model over static
//! PTX features and computes energy as power × predicted time. We ship one gradient-boosted
//! tree model per GPU the published datasets cover (Tesla K20, M60, V100; data from the
//! `santonus/energymodel` GitHub repository), trained by `gpu-data/power/train.py` and
//! embedded here as XGBoost JSON so the binary stands alone (no Python at run time). Each
//! model is a blend of a kernel-generalising and a plain-CV configuration, merged by the
//! script into one XGBoost model (docs/power.md, "Shipped models"); to this crate it is an
//! ordinary tree ensemble.
//!
//! What this crate offers:
//! - [`xgb::Model`]: XGBoost JSON loading, prediction, and exact TreeSHAP contributions
//!   (Lundberg et al. 2018, Algorithm 2, as XGBoost's `pred_contribs=True`), so every
//!   estimate comes with per-feature contributions in watts that sum to the prediction.
//! - [`features::from_profile`]: the model features from a `KernelProfile`.
//! - [`estimate`]: a [`PowerEstimate`] for one of the trained GPUs.
//! - [`transfer`]: a documented, low-confidence mapping to GPUs without a model.
//! - [`energy_uj`]: energy = power × time.
//!
//! Accuracy (docs/power.md): on kernels the model has seen, about 3-4 W MAE; on a kernel
//! it has not seen (cross-validation grouped by kernel), about 10-11 W MAE on the K20.
//! That is why a trained-GPU estimate is labelled [`Confidence::Medium`], never high.

pub mod activity;
pub mod features;
pub mod xgb;

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

pub use features::{Features, GpuFacts};
pub use xgb::{Contributions, Model, ModelError};

/// How much to trust an estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// A model trained on this GPU; the kernel itself is most likely not in the training
    /// set, so the grouped-CV error applies (the notes say how large).
    Medium,
    /// Transferred from another GPU's model, or computed from degenerate inputs.
    Low,
}

/// A power estimate with its explanation, plain data so the CLI and LSP can serialise it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerEstimate {
    /// Predicted average board power while the kernel runs, in W.
    pub watts: f64,
    /// The model's expected output over its training kernels, in W (TreeSHAP base).
    pub base_watts: f64,
    /// Per-feature contributions in W, in the model's feature order;
    /// `base_watts + sum == watts`.
    pub contributions: Vec<(String, f64)>,
    pub confidence: Confidence,
    /// The GPU whose model produced the numbers.
    pub model_gpu: String,
    /// Why the confidence is what it is, and any assumption made.
    pub notes: Vec<String>,
}

/// The GPUs with a shipped model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrainedGpu {
    K20,
    M60,
    V100,
}

const K20_JSON: &str = include_str!("../../../gpu-data/power/models/k20.json");
const M60_JSON: &str = include_str!("../../../gpu-data/power/models/m60.json");
const V100_JSON: &str = include_str!("../../../gpu-data/power/models/v100.json");
const MANIFEST_JSON: &str = include_str!("../../../gpu-data/power/models/manifest.json");

/// What `train.py` recorded about one shipped model (models/manifest.json).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub rows: u64,
    pub kernels: u64,
    pub power_min_w: f64,
    pub power_max_w: f64,
    /// Mean absolute error of cross-validation grouped by kernel (W).
    pub grouped_mae_w: f64,
    pub grouped_r2: f64,
}

impl TrainedGpu {
    pub const ALL: [TrainedGpu; 3] = [TrainedGpu::K20, TrainedGpu::M60, TrainedGpu::V100];

    /// The key used in `gpu-data/power/models/` (`k20`, `m60`, `v100`).
    pub fn key(self) -> &'static str {
        match self {
            TrainedGpu::K20 => "k20",
            TrainedGpu::M60 => "m60",
            TrainedGpu::V100 => "v100",
        }
    }

    pub fn facts(self) -> GpuFacts {
        match self {
            TrainedGpu::K20 => GpuFacts::K20,
            TrainedGpu::M60 => GpuFacts::M60,
            TrainedGpu::V100 => GpuFacts::V100,
        }
    }

    /// Compute capability (CUDA C++ Programming Guide, "CUDA-Enabled GPUs": K20 3.5,
    /// M60 5.2, V100 7.0).
    pub fn compute_capability(self) -> (u32, u32) {
        match self {
            TrainedGpu::K20 => (3, 5),
            TrainedGpu::M60 => (5, 2),
            TrainedGpu::V100 => (7, 0),
        }
    }

    fn json(self) -> &'static str {
        match self {
            TrainedGpu::K20 => K20_JSON,
            TrainedGpu::M60 => M60_JSON,
            TrainedGpu::V100 => V100_JSON,
        }
    }

    /// The embedded model, parsed once. An error means the embedded file is broken, which
    /// the crate's tests rule out; callers still get a value rather than a panic.
    pub fn model(self) -> Result<&'static Model, ModelError> {
        static CELLS: [OnceLock<Result<Model, ModelError>>; 3] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let idx = TrainedGpu::ALL.iter().position(|g| *g == self).unwrap_or(0);
        CELLS[idx]
            .get_or_init(|| Model::from_json(self.json()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Training-set facts from the embedded manifest.
    pub fn info(self) -> Option<ModelInfo> {
        let v: serde_json::Value = serde_json::from_str(MANIFEST_JSON).ok()?;
        let m = v.get("models")?.get(self.key())?;
        let f = |k: &str| m.get(k).and_then(serde_json::Value::as_f64);
        let g = m.get("cv_grouped")?;
        Some(ModelInfo {
            rows: m.get("rows")?.as_u64()?,
            kernels: m.get("kernels")?.as_u64()?,
            power_min_w: f("power_min_w")?,
            power_max_w: f("power_max_w")?,
            grouped_mae_w: g.get("mae")?.as_f64()?,
            grouped_r2: g.get("r2")?.as_f64()?,
        })
    }

    /// The trained GPU nearest to a compute capability, by |Δ(10·major + minor)|; ties go
    /// to the older architecture (Pascal 6.x is a Maxwell derivative: NVIDIA Pascal
    /// tuning guide). Used to pick a source model for [`transfer`].
    pub fn nearest(major: u32, minor: u32) -> TrainedGpu {
        let cc = i64::from(major) * 10 + i64::from(minor);
        let mut best = TrainedGpu::K20;
        let mut best_d = i64::MAX;
        for g in TrainedGpu::ALL {
            let (ma, mi) = g.compute_capability();
            let d = (cc - (i64::from(ma) * 10 + i64::from(mi))).abs();
            if d < best_d {
                best = g;
                best_d = d;
            }
        }
        best
    }
}

/// Predicts power for `features` with the model of `gpu`, with TreeSHAP contributions.
///
/// The features must have been computed with `gpu.facts()` ([`features::from_profile`]).
pub fn estimate(features: &Features, gpu: TrainedGpu) -> Result<PowerEstimate, ModelError> {
    let model = gpu.model()?;
    let names = model.feature_names();
    if names.len() != Features::COUNT || names.iter().zip(Features::NAMES).any(|(a, b)| a != b) {
        return Err(ModelError::Malformed(format!(
            "model features {names:?} differ from Features::NAMES"
        )));
    }
    let c = model
        .contributions(&features.values)
        .ok_or_else(|| ModelError::Malformed("feature count mismatch".into()))?;
    let mut notes = vec![format!(
        "model trained on {} measurements",
        gpu.facts().name
    )];
    if let Some(info) = gpu.info() {
        notes.push(format!(
            "trained on {} rows of {} kernels; for kernels outside the training set, \
             cross-validation grouped by kernel gives MAE {:.1} W (R² {:.2})",
            info.rows, info.kernels, info.grouped_mae_w, info.grouped_r2
        ));
    }
    Ok(PowerEstimate {
        watts: c.prediction,
        base_watts: c.base,
        contributions: Features::NAMES
            .iter()
            .zip(&c.per_feature)
            .map(|(n, v)| ((*n).to_string(), *v))
            .collect(),
        confidence: Confidence::Medium,
        model_gpu: gpu.facts().name.to_string(),
        notes,
    })
}

/// Convenience: features from a profile and the estimate, in one call.
pub fn estimate_profile(
    profile: &kernel_profile::KernelProfile,
    occupancy: f64,
    gpu: TrainedGpu,
) -> Result<PowerEstimate, ModelError> {
    estimate(
        &features::from_profile(profile, &gpu.facts(), occupancy),
        gpu,
    )
}

/// A GPU without a trained model: its power envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetGpu {
    pub name: String,
    /// Board power limit (TDP), W.
    pub tdp_w: f64,
    /// Idle board power, W (an estimate for most GPUs; the GPU database says how derived).
    pub idle_w: f64,
}

/// Maps a source-GPU estimate onto a GPU without a model.
///
/// After PowerQuant's idea (the PowerQuant experiments in the `santonus/energymodel`
/// repository): a kernel's power is placed at its relative position q within the source
/// GPU's *training* power range, q = (P − P_min) / (P_max − P_min), and mapped to the
/// same position in the target's idle-to-TDP range, P' = idle + q · (TDP − idle). The map
/// is affine, so the base and each contribution scale by (TDP − idle)/(P_max − P_min) and
/// still sum to the result. If P' falls outside [idle, TDP] it is clamped and the
/// contributions are rescaled to keep the sum. Always [`Confidence::Low`]: no measurement
/// of the target GPU was used, and the architectures' power behaviour differs.
pub fn transfer(est: &PowerEstimate, source: TrainedGpu, target: &TargetGpu) -> PowerEstimate {
    let mut out = est.clone();
    out.confidence = Confidence::Low;
    let Some(info) = source.info() else {
        out.notes
            .push("no training range for the source model; not transferred".into());
        return out;
    };
    let span = info.power_max_w - info.power_min_w;
    let valid = target.tdp_w.is_finite()
        && target.idle_w.is_finite()
        && target.idle_w >= 0.0
        && target.tdp_w > target.idle_w
        && span > 0.0;
    if !valid {
        out.notes.push(format!(
            "{}: TDP {} W / idle {} W unusable; kept the {} estimate unchanged",
            target.name, target.tdp_w, target.idle_w, est.model_gpu
        ));
        return out;
    }
    let scale = (target.tdp_w - target.idle_w) / span;
    let map = |p: f64| target.idle_w + (p - info.power_min_w) * scale;
    let raw = map(est.watts);
    out.base_watts = map(est.base_watts);
    out.watts = raw.clamp(target.idle_w, target.tdp_w);
    let sum: f64 = est.contributions.iter().map(|(_, v)| v * scale).sum();
    let fix = if out.watts != raw && sum != 0.0 {
        (out.watts - out.base_watts) / sum
    } else {
        1.0
    };
    out.contributions = est
        .contributions
        .iter()
        .map(|(n, v)| (n.clone(), v * scale * fix))
        .collect();
    out.notes.push(format!(
        "no model for {}: transferred from the {} model by position in its training power \
         range {:.1}-{:.1} W mapped onto the target's idle-to-TDP range {:.0}-{:.0} W \
         (PowerQuant-style; low confidence)",
        target.name, est.model_gpu, info.power_min_w, info.power_max_w, target.idle_w, target.tdp_w
    ));
    if out.watts != raw {
        out.notes.push(format!(
            "transferred value {raw:.1} W clamped to the target's range"
        ));
    }
    out
}

/// The words for a contribution's name, from either model (the trained models' features,
/// `Features::label`, or the activity model's terms, `activity::label`).
pub fn contribution_label(name: &str) -> Option<&'static str> {
    Features::label(name).or_else(|| activity::label(name))
}

/// Energy in µJ of a kernel that draws `watts` for `time_us` µs (Alavani 2023 §1.2.3: E = P × t;
/// W × µs = µJ). `None` for negative or non-finite inputs.
pub fn energy_uj(watts: f64, time_us: f64) -> Option<f64> {
    if watts.is_finite() && time_us.is_finite() && watts >= 0.0 && time_us >= 0.0 {
        Some(watts * time_us)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(e: &PowerEstimate) -> f64 {
        e.base_watts + e.contributions.iter().map(|(_, v)| v).sum::<f64>()
    }

    #[test]
    fn embedded_models_load_with_the_feature_order() {
        for g in TrainedGpu::ALL {
            let m = g.model().unwrap();
            assert_eq!(
                m.feature_names(),
                Features::NAMES.map(String::from).as_slice()
            );
            assert!(m.num_trees() > 0);
            let info = g.info().unwrap();
            assert!(info.power_min_w > 0.0 && info.power_max_w > info.power_min_w);
        }
    }

    #[test]
    fn nearest_by_compute_capability() {
        assert_eq!(TrainedGpu::nearest(3, 7), TrainedGpu::K20);
        assert_eq!(TrainedGpu::nearest(5, 0), TrainedGpu::M60);
        assert_eq!(TrainedGpu::nearest(6, 1), TrainedGpu::M60); // tie 9/9 -> older
        assert_eq!(TrainedGpu::nearest(8, 9), TrainedGpu::V100);
        assert_eq!(TrainedGpu::nearest(9, 0), TrainedGpu::V100);
    }

    fn sample_estimate() -> PowerEstimate {
        PowerEstimate {
            watts: 100.0,
            base_watts: 80.0,
            contributions: vec![("a".into(), 15.0), ("b".into(), 5.0)],
            confidence: Confidence::Medium,
            model_gpu: "Tesla V100".into(),
            notes: vec![],
        }
    }

    #[test]
    fn transfer_is_affine_and_keeps_the_sum() {
        let info = TrainedGpu::V100.info().unwrap();
        let target = TargetGpu {
            name: "H100".into(),
            tdp_w: 700.0,
            idle_w: 70.0,
        };
        let e = sample_estimate();
        let t = transfer(&e, TrainedGpu::V100, &target);
        let q = (100.0 - info.power_min_w) / (info.power_max_w - info.power_min_w);
        assert!((t.watts - (70.0 + q * 630.0)).abs() < 1e-9);
        assert!((sum(&t) - t.watts).abs() < 1e-9);
        assert_eq!(t.confidence, Confidence::Low);
        assert!(t.notes.iter().any(|n| n.contains("no model for H100")));
        // Monotone: more source watts, more target watts.
        let mut hot = e.clone();
        hot.watts = 120.0;
        hot.contributions[0].1 = 35.0;
        assert!(transfer(&hot, TrainedGpu::V100, &target).watts > t.watts);
    }

    #[test]
    fn transfer_clamps_and_rescales() {
        let target = TargetGpu {
            name: "tiny".into(),
            tdp_w: 100.0,
            idle_w: 10.0,
        };
        let mut e = sample_estimate();
        e.watts = 10_000.0;
        e.contributions = vec![("a".into(), 9_920.0)];
        let t = transfer(&e, TrainedGpu::K20, &target);
        assert_eq!(t.watts, 100.0);
        assert!((sum(&t) - 100.0).abs() < 1e-9);
        assert!(t.notes.iter().any(|n| n.contains("clamped")));
    }

    #[test]
    fn transfer_rejects_a_bad_envelope() {
        let target = TargetGpu {
            name: "bad".into(),
            tdp_w: 50.0,
            idle_w: 60.0,
        };
        let t = transfer(&sample_estimate(), TrainedGpu::K20, &target);
        assert_eq!(t.watts, 100.0);
        assert_eq!(t.confidence, Confidence::Low);
        assert!(t.notes.iter().any(|n| n.contains("unusable")));
    }

    #[test]
    fn energy_is_power_times_time() {
        assert_eq!(energy_uj(100.0, 25.0), Some(2500.0));
        assert_eq!(energy_uj(0.0, 25.0), Some(0.0));
        assert_eq!(energy_uj(-1.0, 25.0), None);
        assert_eq!(energy_uj(1.0, f64::NAN), None);
    }

    #[test]
    fn estimate_from_a_profile_sums_and_serialises() {
        let json = r#"{"kernel":"vectorAdd","gpu":"k20",
          "launch":{"grid":[1024,1,1],"block":[256,1,1],"source":"setting"},
          "resources":{"registers_per_thread":12,"static_smem_bytes":0,"source":"given"},
          "counts":{"dynamic":{"load_global":2.0,"store_global":1.0,"int_alu":10.0,
            "fp32":1.0,"branch":1.0,"load_param":3.0},
            "static":{"load_global":2,"store_global":1,"int_alu":10,"fp32":1,"branch":1,
            "load_param":3}}}"#;
        let p: kernel_profile::KernelProfile = serde_json::from_str(json).unwrap();
        for g in TrainedGpu::ALL {
            let e = estimate_profile(&p, 1.0, g).unwrap();
            let info = g.info().unwrap();
            // A small streaming kernel: inside the GPU's measured range.
            assert!(
                e.watts > info.power_min_w - 5.0 && e.watts < info.power_max_w,
                "{e:?}"
            );
            assert!(
                (sum(&e) - e.watts).abs() < 1e-3,
                "{g:?}: {} vs {}",
                sum(&e),
                e.watts
            );
            assert_eq!(e.contributions.len(), Features::COUNT);
            assert_eq!(e.confidence, Confidence::Medium);
            // serde_json's default float parser may differ in the last bit.
            let back: PowerEstimate =
                serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
            assert_eq!(back.notes, e.notes);
            assert!((back.watts - e.watts).abs() < 1e-12);
            for ((n1, v1), (n2, v2)) in back.contributions.iter().zip(&e.contributions) {
                assert_eq!(n1, n2);
                assert!((v1 - v2).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn more_work_draws_more_power_on_the_k20() {
        // The same kernel with 1 and with 64 waves of blocks: the bigger launch keeps the
        // GPU busy for longer, and the measured datasets show higher average power.
        let mk = |grid: u32| {
            let json = format!(
                r#"{{"kernel":"k","gpu":"k20",
              "launch":{{"grid":[{grid},1,1],"block":[256,1,1],"source":"setting"}},
              "resources":{{"registers_per_thread":20,"static_smem_bytes":0,"source":"given"}},
              "counts":{{"dynamic":{{"load_global":4.0,"store_global":1.0,"fp32":200.0,
                "int_alu":40.0,"branch":20.0}},
                "static":{{"load_global":4,"store_global":1,"fp32":20,"int_alu":20,"branch":2}}}}}}"#
            );
            let p: kernel_profile::KernelProfile = serde_json::from_str(&json).unwrap();
            estimate_profile(&p, 1.0, TrainedGpu::K20).unwrap().watts
        };
        assert!(mk(8192) > mk(16), "{} vs {}", mk(8192), mk(16));
    }
}
