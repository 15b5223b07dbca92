//! Loading and evaluating XGBoost tree ensembles from XGBoost's own JSON model format.
//!
//! We read XGBoost's JSON (`Booster.save_model("x.json")`) rather than inventing a format
//! so that a model trained by `gpu-data/power/train.py` is used exactly as written, with no
//! conversion step that could drift. Only what a regression `gbtree` needs is read:
//! `learner.learner_model_param.base_score`, `learner.feature_names`, the objective name,
//! and per tree `left_children`, `right_children`, `split_indices`, `split_conditions`,
//! `default_left`, `sum_hessian` (the node covers TreeSHAP needs) and `split_type`.
//!
//! Evaluation mirrors XGBoost's CPU predictor (`src/predictor/cpu_predictor.cc`):
//! - feature values are converted to `f32` and compared with the `f32` threshold using
//!   `value < threshold` (go left when true);
//! - a missing value (NaN) follows the node's `default_left` direction;
//! - a leaf's value is stored in `split_conditions` at the leaf's index;
//! - the margin starts at `base_score` and the leaf values are added tree by tree in
//!   `f32`, as XGBoost accumulates its `float` predictions.
//!
//! Only identity-link objectives are accepted (`reg:squarederror` and the other
//! regression losses whose prediction is the margin), because TreeSHAP values are additive
//! in margin space and we report them in watts.

use std::fmt;

use serde::Deserialize;

/// Why a model JSON could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    Json(String),
    Unsupported(String),
    Malformed(String),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Json(e) => write!(f, "invalid XGBoost JSON: {e}"),
            ModelError::Unsupported(e) => write!(f, "unsupported XGBoost model: {e}"),
            ModelError::Malformed(e) => write!(f, "malformed XGBoost model: {e}"),
        }
    }
}

impl std::error::Error for ModelError {}

/// One regression tree in structure-of-arrays form, as XGBoost stores it.
#[derive(Debug, Clone)]
pub struct Tree {
    /// Left child per node, `-1` for a leaf.
    left: Vec<i32>,
    right: Vec<i32>,
    /// Feature index tested at a split node.
    feature: Vec<u32>,
    /// Threshold at a split node, leaf value at a leaf.
    value: Vec<f32>,
    default_left: Vec<bool>,
    /// Sum of hessians of the training rows reaching the node (the "cover").
    cover: Vec<f32>,
    /// Expected value of the tree below each node, weighted by cover (XGBoost's
    /// `FillNodeMeanValues`), used as the tree's TreeSHAP baseline.
    mean: Vec<f32>,
    max_depth: usize,
}

/// A gradient-boosted tree ensemble for regression.
#[derive(Debug, Clone)]
pub struct Model {
    base_score: f32,
    feature_names: Vec<String>,
    num_feature: usize,
    trees: Vec<Tree>,
}

/// A prediction split into its TreeSHAP parts; `base + sum(per_feature) == prediction`
/// up to `f32` rounding.
#[derive(Debug, Clone, PartialEq)]
pub struct Contributions {
    /// The model's expected output over its training data plus `base_score` (XGBoost's
    /// bias column of `pred_contribs=True`).
    pub base: f64,
    /// One value per feature, in the model's feature order.
    pub per_feature: Vec<f64>,
    /// The prediction itself.
    pub prediction: f64,
}

#[derive(Deserialize)]
struct JsonRoot {
    learner: JsonLearner,
}

#[derive(Deserialize)]
struct JsonLearner {
    #[serde(default)]
    feature_names: Vec<String>,
    learner_model_param: JsonLearnerParam,
    gradient_booster: JsonBooster,
    objective: JsonObjective,
}

#[derive(Deserialize)]
struct JsonLearnerParam {
    base_score: String,
    num_feature: String,
    #[serde(default)]
    num_target: Option<String>,
    #[serde(default)]
    num_class: Option<String>,
}

#[derive(Deserialize)]
struct JsonObjective {
    name: String,
}

#[derive(Deserialize)]
struct JsonBooster {
    name: String,
    model: Option<JsonGbtree>,
}

#[derive(Deserialize)]
struct JsonGbtree {
    trees: Vec<JsonTree>,
}

#[derive(Deserialize)]
struct JsonTree {
    left_children: Vec<i32>,
    right_children: Vec<i32>,
    split_indices: Vec<i64>,
    split_conditions: Vec<f64>,
    default_left: Vec<BoolOrInt>,
    sum_hessian: Vec<f64>,
    #[serde(default)]
    split_type: Vec<i64>,
}

/// `default_left` is a list of 0/1 integers in XGBoost >= 1.7 and of booleans before.
#[derive(Deserialize)]
#[serde(untagged)]
enum BoolOrInt {
    Bool(bool),
    Int(i64),
}

impl BoolOrInt {
    fn get(&self) -> bool {
        match self {
            BoolOrInt::Bool(b) => *b,
            BoolOrInt::Int(i) => *i != 0,
        }
    }
}

/// Objectives whose prediction is the raw margin (identity link).
const IDENTITY_OBJECTIVES: [&str; 4] = [
    "reg:squarederror",
    "reg:pseudohubererror",
    "reg:absoluteerror",
    "reg:linear",
];

/// Parses XGBoost's `base_score`: `"0.5"`, `"5E-1"`, or `"[5E-1]"` (xgboost >= 2 writes a
/// vector for multi-target models; a scalar model has one element).
pub fn parse_base_score(text: &str) -> Option<f32> {
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
    let first = inner.split(',').next()?.trim();
    first.parse::<f32>().ok()
}

impl Model {
    /// Reads a model written by XGBoost's `save_model(... .json)`.
    pub fn from_json(text: &str) -> Result<Model, ModelError> {
        let root: JsonRoot =
            serde_json::from_str(text).map_err(|e| ModelError::Json(e.to_string()))?;
        let learner = root.learner;
        if !IDENTITY_OBJECTIVES.contains(&learner.objective.name.as_str()) {
            return Err(ModelError::Unsupported(format!(
                "objective {} (only identity-link regression objectives)",
                learner.objective.name
            )));
        }
        if learner.gradient_booster.name != "gbtree" {
            return Err(ModelError::Unsupported(format!(
                "booster {} (only gbtree)",
                learner.gradient_booster.name
            )));
        }
        let param = &learner.learner_model_param;
        for (what, v) in [
            ("num_target", &param.num_target),
            ("num_class", &param.num_class),
        ] {
            if let Some(v) = v {
                let n: u32 = v.trim().parse().unwrap_or(u32::MAX);
                if n > 1 {
                    return Err(ModelError::Unsupported(format!("{what} = {v}")));
                }
            }
        }
        let base_score = parse_base_score(&param.base_score)
            .ok_or_else(|| ModelError::Malformed(format!("base_score {:?}", param.base_score)))?;
        let num_feature: usize =
            param.num_feature.trim().parse().map_err(|_| {
                ModelError::Malformed(format!("num_feature {:?}", param.num_feature))
            })?;
        if !learner.feature_names.is_empty() && learner.feature_names.len() != num_feature {
            return Err(ModelError::Malformed(format!(
                "{} feature names for {num_feature} features",
                learner.feature_names.len()
            )));
        }
        let gbtree = learner
            .gradient_booster
            .model
            .ok_or_else(|| ModelError::Malformed("gradient_booster.model missing".into()))?;
        let trees = gbtree
            .trees
            .into_iter()
            .enumerate()
            .map(|(i, t)| Tree::from_json(t, num_feature).map_err(|e| tree_err(i, e)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Model {
            base_score,
            feature_names: learner.feature_names,
            num_feature,
            trees,
        })
    }

    pub fn feature_names(&self) -> &[String] {
        &self.feature_names
    }

    pub fn num_features(&self) -> usize {
        self.num_feature
    }

    pub fn num_trees(&self) -> usize {
        self.trees.len()
    }

    pub fn base_score(&self) -> f64 {
        f64::from(self.base_score)
    }

    /// Predicts one row (`NaN` = missing). `None` when the row has the wrong length.
    pub fn predict(&self, row: &[f64]) -> Option<f64> {
        if row.len() != self.num_feature {
            return None;
        }
        let x = to_f32(row);
        let mut acc = self.base_score;
        for tree in &self.trees {
            acc += tree.value[tree.leaf(&x)];
        }
        Some(f64::from(acc))
    }

    /// Exact TreeSHAP contributions of one row (XGBoost's `pred_contribs=True`).
    /// `None` when the row has the wrong length.
    pub fn contributions(&self, row: &[f64]) -> Option<Contributions> {
        if row.len() != self.num_feature {
            return None;
        }
        let x = to_f32(row);
        // As XGBoost does: each tree's contributions are computed into a zeroed buffer and
        // added to the running totals in f32.
        let mut phi = vec![0f32; self.num_feature + 1];
        let mut tree_phi = vec![0f32; self.num_feature + 1];
        let mut prediction = self.base_score;
        for tree in &self.trees {
            tree_phi.iter_mut().for_each(|v| *v = 0.0);
            tree.shap(&x, &mut tree_phi);
            for (acc, v) in phi.iter_mut().zip(&tree_phi) {
                *acc += *v;
            }
            prediction += tree.value[tree.leaf(&x)];
        }
        let bias = phi[self.num_feature] + self.base_score;
        Some(Contributions {
            base: f64::from(bias),
            per_feature: phi[..self.num_feature]
                .iter()
                .map(|v| f64::from(*v))
                .collect(),
            prediction: f64::from(prediction),
        })
    }
}

fn tree_err(i: usize, e: ModelError) -> ModelError {
    match e {
        ModelError::Malformed(m) => ModelError::Malformed(format!("tree {i}: {m}")),
        ModelError::Unsupported(m) => ModelError::Unsupported(format!("tree {i}: {m}")),
        other => other,
    }
}

fn to_f32(row: &[f64]) -> Vec<f32> {
    // XGBoost stores every feature value as a 32-bit float before it compares.
    row.iter().map(|v| *v as f32).collect()
}

impl Tree {
    fn from_json(t: JsonTree, num_feature: usize) -> Result<Tree, ModelError> {
        let n = t.left_children.len();
        if n == 0 {
            return Err(ModelError::Malformed("empty tree".into()));
        }
        let lens = [
            t.right_children.len(),
            t.split_indices.len(),
            t.split_conditions.len(),
            t.default_left.len(),
            t.sum_hessian.len(),
        ];
        if lens.iter().any(|&l| l != n) {
            return Err(ModelError::Malformed(
                "node arrays of different lengths".into(),
            ));
        }
        if t.split_type.iter().any(|&s| s != 0) {
            return Err(ModelError::Unsupported("categorical splits".into()));
        }
        let mut feature = Vec::with_capacity(n);
        for i in 0..n {
            let (l, r) = (t.left_children[i], t.right_children[i]);
            let leaf = l == -1;
            if leaf != (r == -1) {
                return Err(ModelError::Malformed(format!("node {i} has one child")));
            }
            if !leaf {
                // Children must come after their parent so that every walk terminates.
                for c in [l, r] {
                    if c <= i as i32 || c as usize >= n {
                        return Err(ModelError::Malformed(format!("node {i}: child {c}")));
                    }
                }
                let f = t.split_indices[i];
                if f < 0 || f as usize >= num_feature {
                    return Err(ModelError::Malformed(format!("node {i}: feature {f}")));
                }
            }
            feature.push(t.split_indices[i].max(0) as u32);
        }
        let mut tree = Tree {
            left: t.left_children,
            right: t.right_children,
            feature,
            value: t.split_conditions.iter().map(|v| *v as f32).collect(),
            default_left: t.default_left.iter().map(BoolOrInt::get).collect(),
            cover: t.sum_hessian.iter().map(|v| *v as f32).collect(),
            mean: vec![0.0; n],
            max_depth: 0,
        };
        tree.fill_means();
        tree.max_depth = tree.depth(0);
        Ok(tree)
    }

    fn is_leaf(&self, node: usize) -> bool {
        self.left[node] == -1
    }

    /// The child a row goes to at split `node`.
    fn next(&self, node: usize, x: &[f32]) -> usize {
        let v = x[self.feature[node] as usize];
        let left = if v.is_nan() {
            self.default_left[node]
        } else {
            v < self.value[node]
        };
        if left {
            self.left[node] as usize
        } else {
            self.right[node] as usize
        }
    }

    fn leaf(&self, x: &[f32]) -> usize {
        let mut node = 0;
        while !self.is_leaf(node) {
            node = self.next(node, x);
        }
        node
    }

    fn depth(&self, node: usize) -> usize {
        if self.is_leaf(node) {
            0
        } else {
            1 + self
                .depth(self.left[node] as usize)
                .max(self.depth(self.right[node] as usize))
        }
    }

    /// XGBoost's `FillNodeMeanValue`: cover-weighted mean of the leaves below each node.
    fn fill_means(&mut self) {
        // Children have larger indices than parents (checked on load), so a reverse sweep
        // visits both children before their parent.
        for node in (0..self.left.len()).rev() {
            self.mean[node] = if self.is_leaf(node) {
                self.value[node]
            } else {
                let (l, r) = (self.left[node] as usize, self.right[node] as usize);
                let sum = self.mean[l] * self.cover[l] + self.mean[r] * self.cover[r];
                sum / self.cover[node]
            };
        }
    }

    /// Adds this tree's exact TreeSHAP values to `phi` (bias in the last slot).
    fn shap(&self, x: &[f32], phi: &mut [f32]) {
        let bias = phi.len() - 1;
        phi[bias] += self.mean[0];
        let mut path = Vec::with_capacity((self.max_depth + 2) * (self.max_depth + 3) / 2);
        self.tree_shap(x, phi, 0, &mut path, 0, 1.0, 1.0, -1);
    }

    /// Algorithm 2 of Lundberg, Erion & Lee (2018), "Consistent individualized feature
    /// attribution for tree ensembles", in the form of XGBoost's `TreeShap`
    /// (`src/tree/tree_model.cc`), without the conditional (interaction) arguments.
    /// `path` holds the parent's unique path in `path[start..start + depth]`; this call
    /// appends its own copy after it (the same stack discipline as XGBoost's
    /// `parent_unique_path + unique_depth + 1`).
    #[allow(clippy::too_many_arguments)]
    fn tree_shap(
        &self,
        x: &[f32],
        phi: &mut [f32],
        node: usize,
        path: &mut Vec<PathElement>,
        depth: usize,
        parent_zero: f32,
        parent_one: f32,
        parent_feature: i64,
    ) {
        let start = path.len();
        let parent_start = start.saturating_sub(depth);
        for i in 0..depth {
            let el = path[parent_start + i];
            path.push(el);
        }
        path.push(PathElement::default());
        let mut depth = depth;
        extend_path(
            &mut path[start..],
            depth,
            parent_zero,
            parent_one,
            parent_feature,
        );

        if self.is_leaf(node) {
            let leaf = self.value[node];
            let p = &path[start..];
            for i in 1..=depth {
                let w = unwound_path_sum(p, depth, i);
                let el = p[i];
                if let Ok(f) = usize::try_from(el.feature) {
                    phi[f] += w * (el.one - el.zero) * leaf;
                }
            }
        } else {
            let split = i64::from(self.feature[node]);
            let hot = self.next(node, x);
            let cold = if hot == self.left[node] as usize {
                self.right[node] as usize
            } else {
                self.left[node] as usize
            };
            let w = self.cover[node];
            let hot_zero = self.cover[hot] / w;
            let cold_zero = self.cover[cold] / w;
            let mut incoming_zero = 1.0f32;
            let mut incoming_one = 1.0f32;
            // If this feature was already split on along the path, undo that split so it
            // is redone here (a feature appears at most once in the unique path).
            if let Some(k) = (0..=depth).find(|&k| path[start + k].feature == split) {
                incoming_zero = path[start + k].zero;
                incoming_one = path[start + k].one;
                unwind_path(&mut path[start..], depth, k);
                depth -= 1;
            }
            path.truncate(start + depth + 1);
            self.tree_shap(
                x,
                phi,
                hot,
                path,
                depth + 1,
                hot_zero * incoming_zero,
                incoming_one,
                split,
            );
            path.truncate(start + depth + 1);
            self.tree_shap(
                x,
                phi,
                cold,
                path,
                depth + 1,
                cold_zero * incoming_zero,
                0.0,
                split,
            );
        }
        path.truncate(start);
    }
}

#[derive(Debug, Clone, Copy)]
struct PathElement {
    feature: i64,
    zero: f32,
    one: f32,
    weight: f32,
}

impl Default for PathElement {
    fn default() -> Self {
        PathElement {
            feature: -1,
            zero: 0.0,
            one: 0.0,
            weight: 0.0,
        }
    }
}

/// XGBoost's `ExtendPath`: `p` has room for `depth + 1` elements.
fn extend_path(p: &mut [PathElement], depth: usize, zero: f32, one: f32, feature: i64) {
    p[depth] = PathElement {
        feature,
        zero,
        one,
        weight: if depth == 0 { 1.0 } else { 0.0 },
    };
    let d1 = (depth + 1) as f32;
    for i in (0..depth).rev() {
        p[i + 1].weight += one * p[i].weight * (i + 1) as f32 / d1;
        p[i].weight = zero * p[i].weight * (depth - i) as f32 / d1;
    }
}

/// XGBoost's `UnwindPath`: removes element `k` from the path of length `depth + 1`.
fn unwind_path(p: &mut [PathElement], depth: usize, k: usize) {
    let one = p[k].one;
    let zero = p[k].zero;
    let d1 = (depth + 1) as f32;
    let mut next_one = p[depth].weight;
    for i in (0..depth).rev() {
        if one != 0.0 {
            let tmp = p[i].weight;
            p[i].weight = next_one * d1 / ((i + 1) as f32 * one);
            next_one = tmp - p[i].weight * zero * (depth - i) as f32 / d1;
        } else {
            p[i].weight = p[i].weight * d1 / (zero * (depth - i) as f32);
        }
    }
    for i in k..depth {
        p[i].feature = p[i + 1].feature;
        p[i].zero = p[i + 1].zero;
        p[i].one = p[i + 1].one;
    }
}

/// XGBoost's `UnwoundPathSum`: the total weight of the path with element `k` removed.
fn unwound_path_sum(p: &[PathElement], depth: usize, k: usize) -> f32 {
    let one = p[k].one;
    let zero = p[k].zero;
    let d1 = (depth + 1) as f32;
    let mut next_one = p[depth].weight;
    let mut total = 0.0f32;
    for i in (0..depth).rev() {
        if one != 0.0 {
            let tmp = next_one * d1 / ((i + 1) as f32 * one);
            total += tmp;
            next_one = p[i].weight - tmp * zero * ((depth - i) as f32 / d1);
        } else if zero != 0.0 {
            total += (p[i].weight / zero) / ((depth - i) as f32 / d1);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written stump: x0 < 1.5 -> 10 (cover 3), else 20 (cover 1); base 0.5.
    const STUMP: &str = r#"{"learner":{"feature_names":["a","b"],
      "learner_model_param":{"base_score":"[5E-1]","num_feature":"2","num_target":"1"},
      "objective":{"name":"reg:squarederror"},
      "gradient_booster":{"name":"gbtree","model":{"trees":[{
        "left_children":[1,-1,-1],"right_children":[2,-1,-1],"split_indices":[0,0,0],
        "split_conditions":[1.5,10.0,20.0],"default_left":[1,0,0],
        "sum_hessian":[4.0,3.0,1.0],"split_type":[0,0,0]}]}}}}"#;

    #[test]
    fn base_score_forms() {
        assert_eq!(parse_base_score("[5E-1]"), Some(0.5));
        assert_eq!(parse_base_score("5E-1"), Some(0.5));
        assert_eq!(parse_base_score("0.5"), Some(0.5));
        assert_eq!(parse_base_score("[6.5E1,1E0]"), Some(65.0));
        assert_eq!(parse_base_score("[]"), None);
    }

    #[test]
    fn stump_predicts_and_attributes() {
        let m = Model::from_json(STUMP).unwrap();
        assert_eq!(m.predict(&[1.0, 0.0]), Some(10.5));
        assert_eq!(m.predict(&[2.0, 0.0]), Some(20.5));
        // Missing goes left (default_left = 1).
        assert_eq!(m.predict(&[f64::NAN, 0.0]), Some(10.5));
        // Expected value = (3*10 + 1*20)/4 = 12.5; phi_a = 10 - 12.5 for the left leaf.
        let c = m.contributions(&[1.0, 7.0]).unwrap();
        assert_eq!(c.base, 13.0);
        assert_eq!(c.per_feature, vec![-2.5, 0.0]);
        let c = m.contributions(&[2.0, 7.0]).unwrap();
        assert_eq!(c.per_feature, vec![7.5, 0.0]);
        assert_eq!(c.base + c.per_feature.iter().sum::<f64>(), c.prediction);
    }

    #[test]
    fn threshold_is_compared_in_f32() {
        // 1.5000000001 rounds to 1.5f32, which is not < 1.5: XGBoost goes right.
        let m = Model::from_json(STUMP).unwrap();
        assert_eq!(m.predict(&[1.500_000_000_1, 0.0]), Some(20.5));
        assert_eq!(m.predict(&[1.499_999, 0.0]), Some(10.5));
    }

    #[test]
    fn wrong_row_length_is_none() {
        let m = Model::from_json(STUMP).unwrap();
        assert_eq!(m.predict(&[1.0]), None);
        assert!(m.contributions(&[1.0, 2.0, 3.0]).is_none());
    }

    #[test]
    fn rejects_what_it_cannot_evaluate() {
        let logistic = STUMP.replace("reg:squarederror", "binary:logistic");
        assert!(matches!(
            Model::from_json(&logistic),
            Err(ModelError::Unsupported(_))
        ));
        let cyclic = STUMP.replace(
            r#""left_children":[1,-1,-1]"#,
            r#""left_children":[0,-1,-1]"#,
        );
        assert!(matches!(
            Model::from_json(&cyclic),
            Err(ModelError::Malformed(_))
        ));
        let bad_feature = STUMP.replace(r#""split_indices":[0,0,0]"#, r#""split_indices":[5,0,0]"#);
        assert!(matches!(
            Model::from_json(&bad_feature),
            Err(ModelError::Malformed(_))
        ));
        assert!(matches!(Model::from_json("{"), Err(ModelError::Json(_))));
    }
}
