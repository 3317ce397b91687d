//! The output classifier of Algorithms 1 and 5,
//! `f̃(x, a) = 1{ η̃_a(x) ≥ 1/2 + τ̃(2a−1)/(2π̃_a) }` (randomised only at ties, see
//! [`crate::plugin::threshold`]), and its expected metrics (`docs/deviations.md#fdp-fair-randomised-final-classifier`).

use crate::plugin::error::{Error, Result};
use crate::plugin::release::PluginEstimate;
use crate::plugin::threshold::{GroupRule, score};
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

/// A released estimate with its threshold: everything needed to classify, nothing private.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FairPluginClassifier {
    pub estimate: PluginEstimate,
    pub rule: GroupRule,
}

impl FairPluginClassifier {
    /// `f̃(x_i, a_i) = P(Ŷ_i = 1)` for every row.
    pub fn predict_proba(&self, x: ArrayView2<f64>, a: &[u32]) -> Result<Vec<f64>> {
        let eta = self.estimate.eta_grouped(x, a)?;
        Ok(eta
            .iter()
            .zip(a)
            .map(|(&e, &g)| {
                let g = g as usize;
                self.rule.positive_prob(g, score(g, e, self.estimate.pi[g]))
            })
            .collect())
    }
}

/// Error and disparity of a randomised classifier in expectation over its own randomness
/// (`docs/deviations.md#fdp-fair-randomised-final-classifier`): error `= mean |f̃ − y|`, `DD = mean(f̃ | A=1) − mean(f̃ | A=0)` (signed, Def. 4).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpectedMetrics {
    pub error: f64,
    pub dd: f64,
}

impl ExpectedMetrics {
    pub fn compute(prob: &[f64], a: &[u32], y: &[u8]) -> Result<Self> {
        if prob.len() != a.len() || prob.len() != y.len() {
            return Err(Error::InvalidData(format!(
                "{} predictions, {} groups, {} labels",
                prob.len(),
                a.len(),
                y.len()
            )));
        }
        let data =
            |e: dpfair_fairness::FairnessError| Error::InvalidData(format!("{e}: DD undefined"));
        let accuracy = dpfair_fairness::expected_binary_accuracy(prob, y).map_err(data)?;
        let dd = dpfair_fairness::expected_demographic_disparity(prob, a, 0, 1).map_err(data)?;
        Ok(ExpectedMetrics {
            error: 1.0 - accuracy,
            dd,
        })
    }
}
