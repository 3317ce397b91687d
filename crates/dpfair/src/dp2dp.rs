//! DP2DP: Say, Denis, Pinot, "Fairness Meets Privacy: Integrating Differential Privacy
//! and Demographic Parity in Multi-class Classification".
//!
//! Two phases on disjoint rows (parallel composition: the pipeline is (ε, δ)-DP when each
//! phase is):
//! 1. [`phase1`]: a private probability model p̄ on the labelled split D_n (DP-SGD logistic
//!    regression by default (P1-SGD); output-perturbed multinomial logistic regression,
//!    P1-OP, the paper's experimental choice, as [`Phase1::paper`]).
//! 2. [`phase2`] (Algorithm 1) on the unlabelled split D_N: private group frequencies π̄, then
//!    noisy projected SGD on the smoothed dual over λ ∈ [0, C_λ]^{2K} ([`dual`]); the classifier is
//!    ĝ(x, s) = argmax_k π̄_s p̄_k(x, s) − s(λ̄⁽¹⁾_k − λ̄⁽²⁾_k) ([`rule`]).
//!
//! The sensitive attribute has exactly two groups: group code 0 is s = −1 and code 1 is s = +1
//! (`docs/deviations.md#dp2dp-sign-coding-of-s`; Û is symmetric). The split is a uniformly random permutation from the run's RNG
//! ([`Config::pool_fraction`] of the rows go to Phase 2). [`lp_baseline`] is the non-private
//! Denis et al. (2024) reference.

pub mod accounting;
pub mod config;
pub mod dual;
pub mod error;
pub mod frequencies;
pub mod lp_baseline;
pub mod phase1;
pub mod phase2;
pub mod rule;

pub use config::{
    Config, DEFAULT_MARGIN_Z, Iterate, NoiseOn, Phase1, StepScale, StepSize, TieBreak, aimed_rho,
};
pub use error::{Error, Result};

use crate::predictor as model;
use crate::predictor::{ModelError, Output, Predictor};
use dpfair_data::{Dataset, Target};
use dpfair_learn::Classifier;
use dpfair_privacy::{Ledger, Noise, Partition};
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// The fitted DP2DP classifier: p̄ (Phase 1) and the Phase-2 release (π̄, λ̄).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub classes: usize,
    /// ρ the multipliers were fitted for.
    pub rho: f64,
    /// Names of the two groups: `[s = −1, s = +1]`.
    pub group_names: Vec<String>,
    pub phase1: Classifier,
    /// The Phase-1 procedure that was run ([`Phase1::Auto`] resolved; `None` in models saved
    /// before this field existed).
    #[serde(default)]
    pub phase1_procedure: Option<Phase1>,
    pub phase2: phase2::Release,
    pub ties: TieBreak,
    /// Rows used by Phase 1 and Phase 2.
    pub n_train: usize,
}

/// The signs s ∈ {−1, +1} of the rows (group code 0 → −1, 1 → +1); checks two groups.
pub fn signs(data: &Dataset) -> Result<Vec<f64>> {
    let groups = data
        .groups
        .as_ref()
        .ok_or_else(|| Error::Data("no sensitive attribute: DP2DP needs two groups".into()))?;
    if groups.names.len() != 2 {
        return Err(Error::Data(format!(
            "the sensitive attribute has {} groups ({:?}); DP2DP needs exactly two (for a \
             binary target and more groups, use the group-thresholds classifier: `dpfair fit \
             group-thresholds`)",
            groups.names.len(),
            groups.names
        )));
    }
    Ok(groups
        .codes
        .iter()
        .map(|&c| if c == 1 { 1.0 } else { -1.0 })
        .collect())
}

/// Class codes 0..K and K (binary targets are K = 2).
pub fn labels(data: &Dataset) -> Result<(Vec<u32>, usize)> {
    match &data.target {
        Some(Target::Binary(v)) => Ok((v.iter().map(|&b| u32::from(b)).collect(), 2)),
        Some(Target::Multiclass { k, labels }) => Ok((labels.clone(), *k)),
        Some(Target::Real(_)) => Err(Error::Data(
            "the target is real-valued; DP2DP classifies (K ≥ 2 classes)".into(),
        )),
        None => Err(Error::Data("no target column".into())),
    }
}

/// A uniformly random split of `0..n` into (Phase 1 rows, Phase 2 rows), Phase 2 getting
/// round(n · pool_fraction); independent of the data.
pub fn split(n: usize, pool_fraction: f64, noise: &mut Noise) -> (Vec<usize>, Vec<usize>) {
    let mut idx: Vec<usize> = (0..n).collect();
    let public = noise.public_rng();
    for i in (1..n).rev() {
        let j = public.random_range(0..=i);
        idx.swap(i, j);
    }
    let n_pool = ((n as f64) * pool_fraction).round() as usize;
    let pool = idx.split_off(n - n_pool);
    (idx, pool)
}

/// Fits DP2DP on `data` (features, a K-class target, two groups). Phase 1 is charged as part
/// "phase 1" and Phase 2 as part "phase 2" of the disjoint split (parallel composition).
pub fn fit(cfg: &Config, data: &Dataset, ledger: &mut Ledger, noise: &mut Noise) -> Result<Model> {
    cfg.validate()?;
    let s = signs(data)?;
    let (y, k) = labels(data)?;
    let names = data
        .groups
        .as_ref()
        .map(|g| g.names.clone())
        .unwrap_or_default();
    // How the rows fall into groups and classes is private: every check below reads public
    // sizes only, and both phases run on any composition (an empty group or class included;
    // docs/privacy.md, "Failures and messages").
    let (train, pool) = split(data.n_rows(), cfg.pool_fraction, noise);
    if pool.len() < 2 || train.len() < k {
        return Err(Error::Data(format!(
            "{} rows are too few: the split gives {} training and {} pool rows",
            data.n_rows(),
            train.len(),
            pool.len()
        )));
    }
    let xt = data.features.select(ndarray::Axis(0), &train);
    let yt: Vec<u32> = train.iter().map(|&i| y[i]).collect();
    let procedure = phase1::resolve(cfg, xt.nrows(), xt.ncols(), k)?;
    let partition = Partition::new(
        "DP2DP disjoint split (labelled / unlabelled rows)",
        &["phase 1: labelled D_n", "phase 2: unlabelled D_N"],
        0,
    );
    let p1 = ledger.in_part(&partition, 0, |l| {
        Ok(phase1::fit(cfg, xt.view(), &yt, k, l, noise))
    })??;
    let xp = data.features.select(ndarray::Axis(0), &pool);
    let probs = p1.predict_proba(xp.view())?;
    let sp: Vec<f64> = pool.iter().map(|&i| s[i]).collect();
    let release = ledger.in_part(&partition, 1, |l| {
        Ok(phase2::release(cfg, probs.view(), &sp, l, noise))
    })??;
    Ok(Model {
        classes: k,
        rho: cfg.rho,
        group_names: names,
        phase1: p1,
        phase1_procedure: Some(procedure),
        phase2: release,
        ties: cfg.ties,
        n_train: train.len(),
    })
}

impl Model {
    /// p̄ for the rows of `x`.
    pub fn probabilities(&self, x: ndarray::ArrayView2<'_, f64>) -> Result<ndarray::Array2<f64>> {
        Ok(self.phase1.predict_proba(x)?)
    }

    /// ĝ_ρ on rows with p̄ `probs` and signs `signs` (ties broken, and the mixture's iterate
    /// drawn, with `rng`).
    pub fn classify(
        &self,
        probs: ndarray::ArrayView2<'_, f64>,
        signs: &[f64],
        rng: &mut Noise,
    ) -> Vec<u32> {
        self.classify_with_distribution(probs, signs, rng).0
    }

    /// [`Model::classify`] and each row's class distribution under the released rule (n × K):
    /// the fractions of the mixture's iterates choosing each class
    /// ([`rule::predict_mixture`]), or the point mass on the class of the single rule.
    pub fn classify_with_distribution(
        &self,
        probs: ndarray::ArrayView2<'_, f64>,
        signs: &[f64],
        rng: &mut Noise,
    ) -> (Vec<u32>, ndarray::Array2<f64>) {
        let (pi, ties) = (self.phase2.pi, self.ties);
        if !self.phase2.mixture.is_empty() {
            return rule::predict_mixture(probs, signs, pi, &self.phase2.mixture, ties, rng);
        }
        let classes = rule::predict(probs, signs, pi, &self.phase2.lambda, ties, rng);
        let dist = ndarray::Array2::from_shape_fn((classes.len(), probs.ncols()), |(i, c)| {
            f64::from(u8::from(classes[i] as usize == c))
        });
        (classes, dist)
    }
}

impl Predictor for Model {
    fn method(&self) -> &'static str {
        "dp2dp"
    }

    fn predict(&self, data: &Dataset, rng: &mut Noise) -> model::Result<Output> {
        let err = |e: Error| ModelError::Method {
            method: "dp2dp".into(),
            reason: e.to_string(),
        };
        let s = signs(data).map_err(err)?;
        let probs = self.probabilities(data.features.view()).map_err(err)?;
        // The distribution each class is drawn from: the mixture's fractions, or the point mass
        // of a single argmax rule. Phase 1's probabilities describe the classifier before the
        // fairness step, not this one, and would make expected metrics describe another
        // classifier.
        let (classes, dist) = self.classify_with_distribution(probs.view(), &s, rng);
        Ok(Output::Classes {
            classes,
            probabilities: Some(dist),
        })
    }
}
