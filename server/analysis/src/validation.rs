//! How well predicted kernel times match measured ones: the statistics behind
//! `warpsight validate` and `docs/validation.md`. Pure functions on numbers, no IO.
//!
//! Definitions (with `p` the predicted and `m` the measured time of one case):
//! - ratio `p / m` (above 1: the prediction is slower than measured);
//! - MAPE, the mean absolute percentage error, `100 × mean(|p − m| / m)`;
//! - the median ratio (the mean of the two middle ratios for an even count);
//! - the share within a factor `f`: the fraction of cases with `m / f ≤ p ≤ m × f`;
//! - per group of configurations of one kernel on one GPU: Spearman's rank correlation
//!   of predicted against measured times (Pearson's correlation of the ranks, ties
//!   ranked by their average rank), and the best-configuration ratio: the measured time
//!   of the configuration the model predicts fastest over the fastest measured time (1 is
//!   perfect; ties among the predicted-fastest are broken by input order, first wins).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The pseudo-model name under which the consensus headline's times are summarised.
pub const HEADLINE: &str = "headline";

/// One measured kernel time and every model's prediction for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The GPU's database id.
    pub gpu: String,
    /// A kernel and its family of configurations (for rank statistics), if any.
    #[serde(default)]
    pub group: Option<String>,
    /// The configuration's name within its group.
    #[serde(default)]
    pub label: Option<String>,
    pub measured_ms: f64,
    /// Model name → predicted time in ms (models that did not apply are absent).
    pub predicted_ms: BTreeMap<String, f64>,
    /// The measured average board power in W, where the row gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_w: Option<f64>,
    /// The predicted board power in W (docs/power.md), where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_w: Option<f64>,
}

/// Error statistics of a set of (predicted, measured) pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorStats {
    pub n: usize,
    pub mape_percent: f64,
    pub median_ratio: f64,
    /// Fraction (0 to 1) of cases within 1.5× of measured.
    pub within_1_5: f64,
    /// Fraction (0 to 1) of cases within 2× of measured.
    pub within_2: f64,
}

/// Rank statistics of one group of configurations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupStats {
    pub n: usize,
    /// `None` with fewer than 3 configurations or when either side has no spread.
    pub spearman: Option<f64>,
    /// The configuration predicted fastest.
    pub predicted_best: String,
    /// The configuration measured fastest.
    pub measured_best: String,
    /// Measured time of `predicted_best` over that of `measured_best` (≥ 1).
    pub best_config_ratio: f64,
}

/// [`ErrorStats`] of one model, on one GPU (`gpu: Some`) or on all of them (`None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelStats {
    pub model: String,
    pub gpu: Option<String>,
    pub stats: ErrorStats,
}

/// [`GroupStats`] of one model for one group on one GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    pub model: String,
    pub gpu: String,
    pub group: String,
    pub stats: GroupStats,
}

/// Everything [`summarize`] computes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// The models seen, [`HEADLINE`] first, then alphabetical.
    pub models: Vec<String>,
    /// Per model: all GPUs first (`gpu: None`), then each GPU by id.
    pub models_by_gpu: Vec<ModelStats>,
    /// Per model, GPU and group (groups with at least 2 configurations), sorted by model
    /// order, GPU, group.
    pub groups: Vec<GroupSummary>,
    /// [`ErrorStats`] of the predicted against the measured power, over the rows that give
    /// both: all GPUs first (`gpu: None`), then each GPU by id; empty when no row measured
    /// power.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub power_by_gpu: Vec<PowerStats>,
}

/// [`ErrorStats`] of the power predictions on one GPU (`gpu: Some`) or on all of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerStats {
    pub gpu: Option<String>,
    pub stats: ErrorStats,
}

/// `p / m`.
pub fn ratio(predicted: f64, measured: f64) -> f64 {
    predicted / measured
}

/// `true` when `predicted` is within a factor `factor` of `measured` (both ends
/// included; a relative tolerance of 1e-12 absorbs rounding in the division).
pub fn within(predicted: f64, measured: f64, factor: f64) -> bool {
    let r = ratio(predicted, measured);
    r <= factor * (1.0 + 1e-12) && r * factor >= 1.0 - 1e-12
}

/// The median (mean of the two middle values for an even count); `None` when empty or
/// when a value is not finite.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// A pair counts when the measured time is positive and the prediction is a finite,
/// non-negative number.
fn usable(predicted: f64, measured: f64) -> bool {
    measured.is_finite() && measured > 0.0 && predicted.is_finite() && predicted >= 0.0
}

/// Error statistics of (predicted, measured) pairs; pairs that are not usable (a
/// non-positive measurement, a negative or non-finite prediction) are left out. `None`
/// when no pair is left.
pub fn error_stats(pairs: &[(f64, f64)]) -> Option<ErrorStats> {
    let pairs: Vec<(f64, f64)> = pairs.iter().copied().filter(|&(p, m)| usable(p, m)).collect();
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len();
    let nf = n as f64;
    let mape = 100.0 * pairs.iter().map(|&(p, m)| (p - m).abs() / m).sum::<f64>() / nf;
    let ratios: Vec<f64> = pairs.iter().map(|&(p, m)| ratio(p, m)).collect();
    let share = |f: f64| pairs.iter().filter(|&&(p, m)| within(p, m, f)).count() as f64 / nf;
    Some(ErrorStats { n, mape_percent: mape, median_ratio: median(&ratios)?, within_1_5: share(1.5), within_2: share(2.0) })
}

/// Ranks 1..=n, ties given the average of the ranks they span.
pub fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut r = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        // Positions i..=j (0-based) hold equal values: ranks i+1..=j+1, averaged.
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            r[k] = avg;
        }
        i = j + 1;
    }
    r
}

/// Pearson's correlation; `None` for fewer than 2 values, different lengths or no spread.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return None;
    }
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    Some(sxy / (sxx * syy).sqrt())
}

/// Spearman's rank correlation (ties averaged); `None` for fewer than 3 values or when
/// either side has no spread.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() < 3 || x.len() != y.len() {
        return None;
    }
    pearson(&ranks(x), &ranks(y))
}

/// Rank statistics of one group: `(label, predicted, measured)` per configuration.
/// Unusable pairs are left out; `None` when fewer than 2 remain.
pub fn group_stats(configs: &[(String, f64, f64)]) -> Option<GroupStats> {
    let c: Vec<&(String, f64, f64)> = configs.iter().filter(|(_, p, m)| usable(*p, *m)).collect();
    if c.len() < 2 {
        return None;
    }
    let pred: Vec<f64> = c.iter().map(|x| x.1).collect();
    let meas: Vec<f64> = c.iter().map(|x| x.2).collect();
    // First minimum wins (input order), for both sides.
    let argmin = |v: &[f64]| v.iter().enumerate().fold(0, |best, (i, x)| if *x < v[best] { i } else { best });
    let ip = argmin(&pred);
    let im = argmin(&meas);
    Some(GroupStats {
        n: c.len(),
        spearman: spearman(&pred, &meas),
        predicted_best: c[ip].0.clone(),
        measured_best: c[im].0.clone(),
        best_config_ratio: meas[ip] / meas[im],
    })
}

/// Per model, per GPU and per group statistics of a set of observations.
pub fn summarize(observations: &[Observation]) -> Summary {
    let mut models: Vec<String> = Vec::new();
    for o in observations {
        for m in o.predicted_ms.keys() {
            if !models.contains(m) {
                models.push(m.clone());
            }
        }
    }
    // The headline first, then alphabetical: stable whatever the row order.
    models.sort_by(|a, b| (a != HEADLINE, a).cmp(&(b != HEADLINE, b)));
    let mut gpus: Vec<&str> = observations.iter().map(|o| o.gpu.as_str()).collect();
    gpus.sort_unstable();
    gpus.dedup();

    let mut models_by_gpu = Vec::new();
    let mut groups = Vec::new();
    for model in &models {
        let pairs = |gpu: Option<&str>| -> Vec<(f64, f64)> {
            observations
                .iter()
                .filter(|o| gpu.is_none_or(|g| o.gpu == g))
                .filter_map(|o| o.predicted_ms.get(model).map(|p| (*p, o.measured_ms)))
                .collect()
        };
        if let Some(stats) = error_stats(&pairs(None)) {
            models_by_gpu.push(ModelStats { model: model.clone(), gpu: None, stats });
        }
        for gpu in &gpus {
            if let Some(stats) = error_stats(&pairs(Some(gpu))) {
                models_by_gpu.push(ModelStats { model: model.clone(), gpu: Some(gpu.to_string()), stats });
            }
            // Groups on this GPU, in sorted order; configurations in input order.
            let mut by_group: BTreeMap<&str, Vec<(String, f64, f64)>> = BTreeMap::new();
            for (i, o) in observations.iter().enumerate().filter(|(_, o)| o.gpu == *gpu) {
                let (Some(group), Some(p)) = (o.group.as_deref(), o.predicted_ms.get(model)) else { continue };
                let label = o.label.clone().unwrap_or_else(|| format!("#{}", i + 1));
                by_group.entry(group).or_default().push((label, *p, o.measured_ms));
            }
            for (group, configs) in by_group {
                if let Some(stats) = group_stats(&configs) {
                    groups.push(GroupSummary { model: model.clone(), gpu: gpu.to_string(), group: group.to_string(), stats });
                }
            }
        }
    }
    let power = |gpu: Option<&str>| -> Vec<(f64, f64)> {
        observations
            .iter()
            .filter(|o| gpu.is_none_or(|g| o.gpu == g))
            .filter_map(|o| Some((o.predicted_w?, o.measured_w?)))
            .collect()
    };
    let power_by_gpu = std::iter::once(None)
        .chain(gpus.iter().map(|g| Some(*g)))
        .filter_map(|gpu| error_stats(&power(gpu)).map(|stats| PowerStats { gpu: gpu.map(str::to_string), stats }))
        .collect();
    Summary { models, models_by_gpu, groups, power_by_gpu }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn error_stats_by_hand() {
        // Ratios 2, 0.5, 1.2, 1: |errors| 100 %, 50 %, 20 %, 0 % → MAPE 42.5 %.
        let s = error_stats(&[(2.0, 1.0), (1.0, 2.0), (1.2, 1.0), (3.0, 3.0)]).unwrap();
        assert_eq!(s.n, 4);
        assert!(close(s.mape_percent, 42.5), "{}", s.mape_percent);
        // Sorted ratios 0.5, 1, 1.2, 2: median (1 + 1.2) / 2.
        assert!(close(s.median_ratio, 1.1));
        // Within 1.5×: 1.2 and 1 (2 and 0.5 are not); within 2×: all four (ends count).
        assert!(close(s.within_1_5, 0.5));
        assert!(close(s.within_2, 1.0));
    }

    #[test]
    fn unusable_pairs_are_left_out() {
        let s = error_stats(&[(1.0, 0.0), (f64::NAN, 1.0), (-1.0, 1.0), (1.5, 1.0)]).unwrap();
        assert_eq!(s.n, 1);
        assert!(close(s.mape_percent, 50.0));
        assert!(close(s.within_1_5, 1.0));
        assert!(error_stats(&[(1.0, -1.0)]).is_none());
        assert!(error_stats(&[]).is_none());
    }

    #[test]
    fn within_is_symmetric_and_inclusive() {
        assert!(within(1.5, 1.0, 1.5));
        assert!(within(1.0, 1.5, 1.5));
        assert!(!within(1.51, 1.0, 1.5));
        assert!(!within(1.0, 1.51, 1.5));
        assert!(!within(0.0, 1.0, 2.0));
        // 0.3 / 0.2 is 1.4999999999999998 in binary: still within 1.5×.
        assert!(within(0.3, 0.2, 1.5));
    }

    #[test]
    fn median_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn ranks_average_ties() {
        assert_eq!(ranks(&[10.0, 30.0, 20.0]), vec![1.0, 3.0, 2.0]);
        assert_eq!(ranks(&[5.0, 1.0, 5.0, 7.0]), vec![2.5, 1.0, 2.5, 4.0]);
        assert_eq!(ranks(&[2.0, 2.0, 2.0]), vec![2.0, 2.0, 2.0]);
    }

    #[test]
    fn spearman_by_hand() {
        // Same order: 1; reversed: -1.
        assert!(close(spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 40.0]).unwrap(), 1.0));
        assert!(close(spearman(&[1.0, 2.0, 3.0, 4.0], &[4.0, 3.0, 2.0, 1.0]).unwrap(), -1.0));
        // Ranks x = 1,2,3,4,5; y = 2,1,4,3,5: d² = 1,1,1,1,0 → 1 − 6·4/(5·24) = 0.8.
        let r = spearman(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 1.0, 4.0, 3.0, 5.0]).unwrap();
        assert!(close(r, 0.8), "{r}");
        // With a tie: x ranks 1, 2.5, 2.5, 4; y ranks 1,2,3,4. Pearson of the ranks:
        // mean 2.5 both; Σ dx·dy = 2.25+0+0+2.25 = 4.5; Σ dx² = 4.5; Σ dy² = 5 → 4.5/√22.5.
        let r = spearman(&[1.0, 2.0, 2.0, 3.0], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!(close(r, 4.5 / 22.5_f64.sqrt()), "{r}");
        // Too few values, or no spread: undefined.
        assert_eq!(spearman(&[1.0, 2.0], &[1.0, 2.0]), None);
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
    }

    #[test]
    fn group_stats_best_configuration() {
        let c = |l: &str, p: f64, m: f64| (l.to_string(), p, m);
        // Predicted fastest is "b" (1.0), which measured 3.0; measured fastest is "c" (2.0).
        let g = group_stats(&[c("a", 2.0, 4.0), c("b", 1.0, 3.0), c("c", 3.0, 2.0)]).unwrap();
        assert_eq!((g.predicted_best.as_str(), g.measured_best.as_str()), ("b", "c"));
        assert!(close(g.best_config_ratio, 1.5));
        // Ranks p = 2,1,3; m = 3,2,1: d² = 1,1,4 → 1 − 6·6/(3·8) = −0.5.
        assert!(close(g.spearman.unwrap(), -0.5));
        // Ties in the prediction: the first wins.
        let g = group_stats(&[c("x", 1.0, 2.0), c("y", 1.0, 1.0)]).unwrap();
        assert_eq!(g.predicted_best, "x");
        assert!(close(g.best_config_ratio, 2.0));
        assert_eq!(g.spearman, None);
        assert!(group_stats(&[c("only", 1.0, 1.0)]).is_none());
    }

    #[test]
    fn summarize_per_model_gpu_and_group() {
        let obs = |gpu: &str, label: &str, m: f64, preds: &[(&str, f64)]| Observation {
            measured_w: None,
            predicted_w: None,
            gpu: gpu.into(),
            group: Some("k".into()),
            label: Some(label.into()),
            measured_ms: m,
            predicted_ms: preds.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        };
        let rows = vec![
            obs("g2", "c1", 1.0, &[("zeta", 2.0), (HEADLINE, 1.0)]),
            obs("g2", "c2", 2.0, &[("zeta", 3.0), (HEADLINE, 2.0)]),
            obs("g1", "c1", 1.0, &[(HEADLINE, 4.0), ("alpha", 1.0)]),
        ];
        let s = summarize(&rows);
        assert_eq!(s.models, ["headline", "alpha", "zeta"]);
        let keys: Vec<(&str, Option<&str>, usize)> =
            s.models_by_gpu.iter().map(|m| (m.model.as_str(), m.gpu.as_deref(), m.stats.n)).collect();
        assert_eq!(
            keys,
            [
                ("headline", None, 3),
                ("headline", Some("g1"), 1),
                ("headline", Some("g2"), 2),
                ("alpha", None, 1),
                ("alpha", Some("g1"), 1),
                ("zeta", None, 2),
                ("zeta", Some("g2"), 2),
            ]
        );
        // Headline on all GPUs: ratios 1, 1, 4 → MAPE 100 %, median 1, within 1.5× 2/3.
        let h = &s.models_by_gpu[0].stats;
        assert!(close(h.mape_percent, 100.0));
        assert!(close(h.median_ratio, 1.0));
        assert!(close(h.within_1_5, 2.0 / 3.0));
        // Groups need 2 configurations: only g2's, for headline and zeta.
        let g: Vec<(&str, &str)> = s.groups.iter().map(|g| (g.model.as_str(), g.gpu.as_str())).collect();
        assert_eq!(g, [("headline", "g2"), ("zeta", "g2")]);
        assert_eq!(s.groups[1].stats.predicted_best, "c1");
        assert!(close(s.groups[1].stats.best_config_ratio, 1.0));
    }

    #[test]
    fn power_is_summarised_over_the_rows_that_measured_it() {
        let obs = |gpu: &str, w: Option<f64>, p: Option<f64>| Observation {
            gpu: gpu.into(),
            group: None,
            label: None,
            measured_ms: 1.0,
            predicted_ms: [(HEADLINE.to_string(), 1.0)].into(),
            measured_w: w,
            predicted_w: p,
        };
        let s = summarize(&[obs("a40", Some(200.0), Some(220.0)), obs("a40", Some(300.0), Some(300.0)), obs("l40", None, Some(250.0)), obs("l40", Some(100.0), None)]);
        assert_eq!(s.power_by_gpu.len(), 2, "all GPUs and the A40: {:?}", s.power_by_gpu);
        assert_eq!((s.power_by_gpu[0].gpu.as_deref(), s.power_by_gpu[1].gpu.as_deref()), (None, Some("a40")));
        let st = &s.power_by_gpu[0].stats;
        assert_eq!(st.n, 2);
        assert!(close(st.mape_percent, 5.0), "{}", st.mape_percent);
        assert!(summarize(&[obs("a40", None, Some(1.0))]).power_by_gpu.is_empty());
    }
}
