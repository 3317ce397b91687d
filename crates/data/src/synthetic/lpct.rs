//! The synthetic design of Ma & Yang (LPCT), Section 6.1, with the authors' **valid**
//! regression functions (the formula printed in the paper is not a probability: `docs/deviations.md#lpct-invalid-synthetic-eta`).
//!
//! * `X ~ Uniform([0,1]²)` under both the private distribution `P` and the public `Q`;
//! * `g(x) = |(3x¹−1)(3x²−1)|/4 · max(0, 1 − |2x² − 1|)`, `s(x) = sign(x¹ − 1/3)·sign(x² − 1/3)`;
//! * `η_P(x) = 1/2 + (2/5)·s(x)·g(x)^{1/10}`, `η_Q(x) = 1/2 + (2/5)·s(x)·g(x)^{γ/10}`;
//! * `Y = 1{U < η(X)}`, `U ~ Uniform(0, 1)`.
//!
//! [`LpctDesign::generate`] draws private samples (from `P`); [`LpctDesign::public`] draws public
//! samples (from `Q`) on an independent stream of the same seed.

use super::{Design, Result, check_rows, derive_seed, generate_rows};
use crate::builtin::error::invalid;
use crate::{Dataset, Target};
use rand::RngExt;

/// The Ma & Yang design. `Default` is `γ = 0.5` (the paper's main setting; also `γ = 5`).
#[derive(Clone, Debug, PartialEq)]
pub struct LpctDesign {
    /// Transfer exponent γ of the public regression function.
    pub gamma: f64,
}

impl Default for LpctDesign {
    fn default() -> Self {
        LpctDesign { gamma: 0.5 }
    }
}

fn sign(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

fn g(x: &[f64]) -> f64 {
    ((3.0 * x[0] - 1.0) * (3.0 * x[1] - 1.0)).abs() / 4.0
        * (1.0 - (2.0 * x[1] - 1.0).abs()).max(0.0)
}

fn s(x: &[f64]) -> f64 {
    sign(x[0] - 1.0 / 3.0) * sign(x[1] - 1.0 / 3.0)
}

/// `η_P(x)`, the private (target) regression function.
pub fn eta_private(x: &[f64]) -> f64 {
    0.5 + 0.4 * s(x) * g(x).powf(0.1)
}

/// `η_Q(x)`, the public (source) regression function with transfer exponent `gamma`.
pub fn eta_public(x: &[f64], gamma: f64) -> f64 {
    0.5 + 0.4 * s(x) * g(x).powf(gamma / 10.0)
}

/// Tag of the public sample's stream (see [`derive_seed`]).
const PUBLIC_STREAM: u64 = 0x5055_424C_4943; // "PUBLIC"

impl LpctDesign {
    fn check(&self) -> Result<()> {
        if !(self.gamma > 0.0 && self.gamma.is_finite()) {
            return Err(invalid(
                "gamma",
                format!("{} must be positive and finite", self.gamma),
            ));
        }
        Ok(())
    }

    fn draw(&self, n: usize, seed: u64, eta: impl Fn(&[f64]) -> f64 + Sync) -> Result<Dataset> {
        check_rows(n)?;
        self.check()?;
        let rows = generate_rows(n, 2, seed, |rng, x| {
            x[0] = rng.random::<f64>();
            x[1] = rng.random::<f64>();
            (0, u8::from(rng.random::<f64>() < eta(x)))
        });
        Ok(Dataset {
            features: rows.features,
            feature_names: vec!["x1".into(), "x2".into()],
            groups: None,
            target: Some(Target::Binary(rows.targets)),
        })
    }

    /// `n` public samples from `Q` (independent of the private samples drawn with the same seed).
    pub fn public(&self, n: usize, seed: u64) -> Result<Dataset> {
        let gamma = self.gamma;
        self.draw(n, derive_seed(seed, PUBLIC_STREAM), move |x| {
            eta_public(x, gamma)
        })
    }
}

impl Design for LpctDesign {
    fn name(&self) -> &'static str {
        "lpct"
    }

    /// `n` private samples from `P`.
    fn generate(&self, n: usize, seed: u64) -> Result<Dataset> {
        self.draw(n, seed, eta_private)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_functions_are_probabilities_with_the_stated_range() {
        // Ma & Yang, Section 6.1: range of η_P ≈ [0.166, 0.858]; check on a fine grid.
        let (mut lo, mut hi) = (1.0f64, 0.0f64);
        for i in 0..=400 {
            for j in 0..=400 {
                let x = [i as f64 / 400.0, j as f64 / 400.0];
                let p = eta_private(&x);
                let q = eta_public(&x, 5.0);
                assert!((0.0..=1.0).contains(&p) && (0.0..=1.0).contains(&q));
                // Same sign of η − 1/2 under P and Q (same Bayes classifier).
                assert!((p - 0.5) * (q - 0.5) >= 0.0);
                lo = lo.min(p);
                hi = hi.max(p);
            }
        }
        assert!(
            (lo - 0.166).abs() < 0.01 && (hi - 0.858).abs() < 0.01,
            "{lo} {hi}"
        );
    }

    #[test]
    fn public_and_private_samples_differ_and_follow_eta() {
        let d = LpctDesign::default();
        let pri = d.generate(40_000, 1).unwrap();
        let publ = d.public(40_000, 1).unwrap();
        assert_ne!(pri.features, publ.features);
        for (data, eta) in [
            (
                &pri,
                &(|x: &[f64]| eta_private(x)) as &dyn Fn(&[f64]) -> f64,
            ),
            (&publ, &|x: &[f64]| eta_public(x, 0.5)),
        ] {
            let Some(Target::Binary(y)) = &data.target else {
                panic!()
            };
            let resid: f64 = data
                .features
                .rows()
                .into_iter()
                .zip(y)
                .map(|(x, &yi)| f64::from(yi) - eta(x.as_slice().unwrap()))
                .sum::<f64>()
                / 40_000.0;
            // 5 standard errors of a mean of Bernoulli residuals (variance ≤ 1/4).
            assert!(resid.abs() < 5.0 * 0.5 / 200.0, "{resid}");
        }
        assert!(LpctDesign { gamma: -1.0 }.generate(5, 1).is_err());
    }
}
