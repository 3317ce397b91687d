//! Audit of an ε-LDP Laplace randomiser (a report y = x + Laplace(s) noise per coordinate) on one
//! pair of inputs (a, b).
//!
//! The projection is the pair's privacy-loss statistic
//! L(y) = Σⱼ (|yⱼ − bⱼ| − |yⱼ − aⱼ|)/s, the log-likelihood ratio of a against b at the *claimed*
//! scale s. By Neyman–Pearson, threshold events on L are the most powerful ones for this pair, so
//! the two-sample auditor ([`super::threshold`]) can approach the pair's true ε: L reaches its
//! maximum ‖a − b‖₁/s exactly when every differing coordinate lands beyond both inputs on a's
//! side, an event of probability 2^−c under a (c differing coordinates) and e^−ε·2^−c under b.
//! The worst-case pair of a randomiser of ℓ1 diameter Δ is one at distance Δ, where that
//! maximum is the claimed ε. A fixed projection (it depends on the hypothesised pair, never on
//! the samples) keeps the auditor's guarantee: a correct ε-LDP randomiser reports ε_lower > ε
//! with probability at most α.

use super::threshold::{AuditReport, audit, expected_lower_bound};
use crate::Noise;
use crate::error::{Result, invalid};

/// Two inputs of a Laplace randomiser and the scale it claims.
#[derive(Clone, Debug, PartialEq)]
pub struct LaplacePair {
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    /// The claimed Laplace scale s (Δ/ε).
    pub scale: f64,
}

impl LaplacePair {
    pub fn new(a: Vec<f64>, b: Vec<f64>, scale: f64) -> Result<Self> {
        if a.len() != b.len() || a.is_empty() {
            return Err(invalid(
                "pair",
                format!("inputs of lengths {} and {}", a.len(), b.len()),
            ));
        }
        if !(scale.is_finite() && scale > 0.0) {
            return Err(invalid(
                "scale",
                format!("must be finite and > 0, got {scale}"),
            ));
        }
        Ok(LaplacePair { a, b, scale })
    }

    /// L(y), the log-likelihood ratio of a against b at the claimed scale.
    pub fn loss(&self, y: &[f64]) -> f64 {
        y.iter()
            .zip(self.a.iter().zip(&self.b))
            .map(|(y, (a, b))| ((y - b).abs() - (y - a).abs()) / self.scale)
            .sum()
    }

    /// The largest privacy loss of the pair, ‖a − b‖₁/s: the ε it costs at the claimed scale.
    pub fn max_loss(&self) -> f64 {
        self.a
            .iter()
            .zip(&self.b)
            .map(|(a, b)| (a - b).abs())
            .sum::<f64>()
            / self.scale
    }

    /// The ε_lower the auditor reports in expectation with `trials` runs per input (half of
    /// them for estimation) at level α, when the randomiser's real scale is `real_scale`: the
    /// best event {L = max} has probability 2^−c under a and 2^−c·e^−(‖a−b‖₁/real_scale) under b.
    pub fn expected_lower_bound(&self, real_scale: f64, trials: usize, alpha: f64) -> Result<f64> {
        let c = self.a.iter().zip(&self.b).filter(|(a, b)| a != b).count();
        let pa = 0.5f64.powi(c as i32);
        let pb = pa * (-self.max_loss() * self.scale / real_scale).exp();
        expected_lower_bound(pa, pb, trials / 2, 0.0, alpha)
    }
}

/// Audits `randomiser(input, noise)` (input 0 is `pair.a`, 1 is `pair.b`; it returns the noisy
/// report) with `trials` runs per input, projected on the pair's privacy loss (module doc).
pub fn audit_laplace_randomiser<F>(
    noise: &mut Noise,
    trials: usize,
    alpha: f64,
    pair: &LaplacePair,
    mut randomiser: F,
) -> Result<AuditReport>
where
    F: FnMut(usize, &mut Noise) -> Result<Vec<f64>>,
{
    audit(noise, trials, 0.0, alpha, |input, nz| {
        let y = randomiser(input, nz)?;
        if y.len() != pair.a.len() {
            return Err(invalid(
                "randomiser",
                format!(
                    "returned {} values for inputs of length {}",
                    y.len(),
                    pair.a.len()
                ),
            ));
        }
        Ok(pair.loss(&y))
    })
}
