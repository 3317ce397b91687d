//! The fitted model of CDP-Fair and of FDP-Fair (one classifier type for both: FDP-Fair's server
//! assembles the same classifier from the sites' transcripts, and keeps its record of the
//! federation beside it: [`crate::fdp_fair::FederatedModel`]) and of the §5.2 baselines: one plug-in classifier
//! per cross-fitting fold, predictions averaged, and its `dpfair predict` interface.

use super::groups_and_labels;
use crate::plugin::classifier::{ExpectedMetrics, FairPluginClassifier};
use crate::plugin::error::Result;
use crate::predictor::Accounting;
use dpfair_data::Dataset;
use dpfair_privacy::Noise;
use ndarray::ArrayView2;
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

/// Which estimator a [`Model`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Algorithm 5.
    CdpFair,
    /// Algorithm 1 (FDP-Fair, [`crate::fdp_fair`]): one classifier from S sites' transcripts.
    FdpFair,
    /// §5.2 "CDP NF": S1 only, threshold 1/2 (privacy, no fairness).
    PrivacyOnly,
    /// §5.2 "NDP F": Algorithm 5 without noise (fairness, no privacy).
    FairnessOnly,
    /// §5.2 "NDP NF": group-wise plug-in at 1/2 (neither).
    Unconstrained,
}

/// A fitted model: one classifier per cross-fitting fold; the prediction is their average
/// (`f̃ = (f̃_1 + f̃_2)/2` with cross-fitting, as in the experiments of Xue & Yu, §5.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub method: Method,
    pub alpha: f64,
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    pub delta: f64,
    pub accounting: Accounting,
    pub bandwidth: f64,
    pub split_seed: u64,
    pub folds: Vec<FairPluginClassifier>,
}

impl Model {
    /// `P(Ŷ = 1 | x, a)` for every row (groups coded 0/1).
    pub fn predict_proba(&self, x: ArrayView2<f64>, a: &[u32]) -> Result<Vec<f64>> {
        let mut acc = vec![0.0; x.nrows()];
        for f in &self.folds {
            for (s, p) in acc.iter_mut().zip(f.predict_proba(x, a)?) {
                *s += p;
            }
        }
        let k = self.folds.len() as f64;
        Ok(acc.into_iter().map(|s| s / k).collect())
    }

    /// One realisation `Ŷ ~ Bernoulli(f̃(x, a))` per row, from `rng`.
    pub fn predict<R: Rng + ?Sized>(
        &self,
        x: ArrayView2<f64>,
        a: &[u32],
        rng: &mut R,
    ) -> Result<Vec<u8>> {
        Ok(self
            .predict_proba(x, a)?
            .into_iter()
            .map(|p| bernoulli(p, rng))
            .collect())
    }

    /// Expected error and DD on a labelled data set (`docs/deviations.md#fdp-fair-randomised-final-classifier`).
    pub fn expected_metrics(&self, data: &Dataset) -> Result<ExpectedMetrics> {
        let (a, y) = groups_and_labels(data)?;
        let p = self.predict_proba(data.features.view(), a)?;
        ExpectedMetrics::compute(&p, a, y)
    }
}

/// One draw of `Bernoulli(p)` (no randomness consumed when `p ∈ {0, 1}`).
fn bernoulli<R: Rng + ?Sized>(p: f64, rng: &mut R) -> u8 {
    u8::from(p >= 1.0 || (p > 0.0 && rng.random::<f64>() < p))
}

impl crate::predictor::Predictor for Model {
    fn method(&self) -> &'static str {
        match self.method {
            Method::FdpFair => "fdp-fair",
            _ => "cdp-fair",
        }
    }

    fn predict(
        &self,
        data: &Dataset,
        rng: &mut Noise,
    ) -> crate::predictor::Result<crate::predictor::Output> {
        let method = crate::predictor::Predictor::method(self);
        let err = |reason: String| crate::predictor::ModelError::Method {
            method: method.into(),
            reason,
        };
        let groups = data
            .groups
            .as_ref()
            .ok_or_else(|| err("the data has no sensitive-attribute column".into()))?;
        if let Some(i) = groups.codes.iter().position(|&g| g > 1) {
            return Err(err(format!(
                "row {i}: group code {} (the model knows two groups)",
                groups.codes[i]
            )));
        }
        let p = self
            .predict_proba(data.features.view(), &groups.codes)
            .map_err(|e| err(e.to_string()))?;
        let classes = p.iter().map(|&q| u32::from(bernoulli(q, rng))).collect();
        let probabilities =
            ndarray::Array2::from_shape_fn(
                (p.len(), 2),
                |(i, c)| if c == 1 { p[i] } else { 1.0 - p[i] },
            );
        Ok(crate::predictor::Output::Classes {
            classes,
            probabilities: Some(probabilities),
        })
    }
}
