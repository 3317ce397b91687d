//! Ghoukasian & Asoodeh (DP fair binary classification): a two-group synthetic logistic design
//! for end-to-end tests, two groups with different base rates; the constants below are this
//! project's choice, picked so that both a group-aware and a group-blind model are visibly unfair:
//!
//! * `A ~ Bernoulli(p₁)`, `p₁ = 0.6` (groups of unequal size, like sex in Adult and Credit);
//! * `X | A ~ N(m_A e₁, I_d)`, `d = 5`, `m₁ = +0.5`, `m₀ = −0.5` (the first feature is a proxy of A);
//! * `Y | X, A ~ Bernoulli(σ(w·X + b_A))`, `w = (1, −0.5, 0.75, 0, 0.25)`, `b₁ = −0.5`, `b₀ = −1.5`.
//!
//! Base rates: `P(Y=1 | A=1) ≈ 0.50`, `P(Y=1 | A=0) ≈ 0.18` (a statistical-parity gap ≈ 0.32 of the
//! Bayes classifier's inputs).

use super::{Design, Result, check_probability, check_rows, generate_rows, numbered};
use crate::builtin::error::invalid;
use crate::{Dataset, Groups, Target};
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

/// The two-group logistic design. `Default` is described in the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct TwoGroupLogisticDesign {
    /// `P(A = 1)`.
    pub p_group1: f64,
    /// Mean shift of the first feature: `+shift` in group 1, `−shift` in group 0.
    pub shift: f64,
    /// Logistic weights `w` (their length is the dimension `d`).
    pub weights: Vec<f64>,
    /// Intercepts `[b₀, b₁]`.
    pub intercepts: [f64; 2],
}

impl Default for TwoGroupLogisticDesign {
    fn default() -> Self {
        TwoGroupLogisticDesign {
            p_group1: 0.6,
            shift: 0.5,
            weights: vec![1.0, -0.5, 0.75, 0.0, 0.25],
            intercepts: [-1.5, -0.5],
        }
    }
}

impl TwoGroupLogisticDesign {
    /// The true `P(Y = 1 | X = x, A = a)`.
    pub fn probability(&self, x: &[f64], a: u32) -> f64 {
        let z: f64 = self.intercepts[a as usize]
            + self.weights.iter().zip(x).map(|(w, v)| w * v).sum::<f64>();
        1.0 / (1.0 + (-z).exp())
    }
}

impl Design for TwoGroupLogisticDesign {
    fn name(&self) -> &'static str {
        "two-group-logistic"
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Dataset> {
        check_rows(n)?;
        check_probability("p_group1", self.p_group1)?;
        let d = self.weights.len();
        if d == 0
            || self.weights.iter().any(|w| !w.is_finite())
            || !self.shift.is_finite()
            || self.intercepts.iter().any(|b| !b.is_finite())
        {
            return Err(invalid(
                "weights",
                "need at least one weight, and finite weights, shift and intercepts",
            ));
        }
        let rows = generate_rows(n, d, seed, |rng, x| {
            let a = u32::from(rng.random::<f64>() < self.p_group1);
            for v in x.iter_mut() {
                *v = StandardNormal.sample(rng);
            }
            x[0] += if a == 1 { self.shift } else { -self.shift };
            let y = u8::from(rng.random::<f64>() < self.probability(x, a));
            (a, y)
        });
        Ok(Dataset {
            features: rows.features,
            feature_names: numbered("x", d),
            groups: Some(Groups {
                codes: rows.groups,
                names: vec!["0".into(), "1".into()],
            }),
            target: Some(Target::Binary(rows.targets)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_rates_differ_as_documented() {
        let n = 100_000;
        let d = TwoGroupLogisticDesign::default().generate(n, 9).unwrap();
        let Some(Target::Binary(y)) = &d.target else {
            panic!()
        };
        let codes = &d.groups.as_ref().unwrap().codes;
        let rate = |a: u32| {
            let (s, c) = y
                .iter()
                .zip(codes)
                .filter(|&(_, &g)| g == a)
                .fold((0usize, 0usize), |(s, c), (&v, _)| (s + v as usize, c + 1));
            (s as f64 / c as f64, c)
        };
        let (r0, n0) = rate(0);
        let (r1, n1) = rate(1);
        // Documented approximations (probit approximation of E σ(N(μ, s²))): 0.18 and 0.50, to
        // within 0.02 (the approximation's error) — far above 5 binomial s.e. (≈ 0.008).
        assert!((r0 - 0.18).abs() < 0.02, "{r0}");
        assert!((r1 - 0.50).abs() < 0.02, "{r1}");
        assert!((n1 as f64 / n as f64 - 0.6).abs() < 5.0 * (0.24 / n as f64).sqrt());
        assert_eq!(n0 + n1, n);
    }

    #[test]
    fn bad_parameters_are_errors() {
        let d = TwoGroupLogisticDesign {
            weights: vec![],
            ..Default::default()
        };
        assert!(d.generate(10, 1).is_err());
        let d = TwoGroupLogisticDesign {
            p_group1: f64::NAN,
            ..Default::default()
        };
        assert!(d.generate(10, 1).is_err());
    }
}
