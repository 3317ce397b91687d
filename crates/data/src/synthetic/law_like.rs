//! Xian, Li, Kamath, Zhao (DP post-processing for fair regression): the synthetic
//! Law-School-like design (Xian et al.'s Law School data), for end-to-end tests at any size.
//!
//! * four groups (asian, black, hisp, white) with the Law School proportions
//!   `≈ [0.041, 0.061, 0.047, 0.851]` (Law School: 897, 1,343, 1,027, 18,716 of 21,983);
//! * `Y ~ clip(N(μ_a, 0.42²), 1, 4)`. The paper does not give `μ_a`; the defaults are the group
//!   means of `ugpa` in `law_bar_pass.csv` (3.219, 2.890, 3.082, 3.248), so that the groups'
//!   response distributions differ as in the real data.
//! * The paper applies its post-processor to the responses themselves (Xian et al., Section 4: `X = Y`,
//!   `f = Id`), so the single feature `score` equals `Y`.

use super::{Design, Result, check_rows, generate_rows};
use crate::builtin::error::invalid;
use crate::{Dataset, Groups, Target};
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

/// The Law-like design. `Default` is described in the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct LawLikeDesign {
    pub group_names: Vec<String>,
    /// Group proportions (sum to 1).
    pub proportions: Vec<f64>,
    /// Group means `μ_a`.
    pub means: Vec<f64>,
    /// Common standard deviation before clipping.
    pub sd: f64,
    /// The response interval `[lower, upper]` (Law School `ugpa`: `[1, 4]`).
    pub lower: f64,
    pub upper: f64,
}

impl Default for LawLikeDesign {
    fn default() -> Self {
        LawLikeDesign {
            group_names: ["asian", "black", "hisp", "white"]
                .map(String::from)
                .to_vec(),
            proportions: vec![0.041, 0.061, 0.047, 0.851],
            means: vec![3.219, 2.890, 3.082, 3.248],
            sd: 0.42,
            lower: 1.0,
            upper: 4.0,
        }
    }
}

impl LawLikeDesign {
    fn validate(&self) -> Result<()> {
        let k = self.group_names.len();
        if k < 2 || self.proportions.len() != k || self.means.len() != k {
            return Err(invalid(
                "proportions",
                format!(
                    "need ≥ 2 groups with one proportion and one mean each (got {k} names, {} proportions, {} means)",
                    self.proportions.len(),
                    self.means.len()
                ),
            ));
        }
        let total: f64 = self.proportions.iter().sum();
        if self.proportions.iter().any(|p| p.is_nan() || *p < 0.0) || (total - 1.0).abs() > 1e-9 {
            return Err(invalid(
                "proportions",
                format!("{:?} must be non-negative and sum to 1", self.proportions),
            ));
        }
        if !(self.sd > 0.0 && self.sd.is_finite()) {
            return Err(invalid("sd", format!("{} must be positive", self.sd)));
        }
        if self.lower.is_nan()
            || self.upper.is_nan()
            || self.lower >= self.upper
            || self.means.iter().any(|m| !m.is_finite())
        {
            return Err(invalid(
                "lower",
                format!(
                    "need finite means and lower < upper (got [{}, {}])",
                    self.lower, self.upper
                ),
            ));
        }
        Ok(())
    }
}

impl Design for LawLikeDesign {
    fn name(&self) -> &'static str {
        "law-like"
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Dataset> {
        check_rows(n)?;
        self.validate()?;
        let cumulative: Vec<f64> = self
            .proportions
            .iter()
            .scan(0.0, |s, p| {
                *s += p;
                Some(*s)
            })
            .collect();
        let last = cumulative.len() - 1;
        let rows = generate_rows(n, 1, seed, |rng, x| {
            let u = rng.random::<f64>();
            let a = cumulative.iter().position(|&c| u < c).unwrap_or(last);
            let z: f64 = StandardNormal.sample(rng);
            let y = (self.means[a] + self.sd * z).clamp(self.lower, self.upper);
            x[0] = y;
            (a as u32, y)
        });
        Ok(Dataset {
            features: rows.features,
            feature_names: vec!["score".into()],
            groups: Some(Groups {
                codes: rows.groups,
                names: self.group_names.clone(),
            }),
            target: Some(Target::Real(rows.targets)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_shares_and_means_match_the_design() {
        let design = LawLikeDesign::default();
        let n = 200_000;
        let d = design.generate(n, 5).unwrap();
        let Some(Target::Real(y)) = &d.target else {
            panic!("real target")
        };
        assert!(y.iter().all(|&v| (1.0..=4.0).contains(&v)));
        assert_eq!(d.features.column(0).to_vec(), *y);
        let codes = &d.groups.as_ref().unwrap().codes;
        for a in 0..4 {
            let ys: Vec<f64> = y
                .iter()
                .zip(codes)
                .filter(|&(_, &c)| c == a as u32)
                .map(|(&v, _)| v)
                .collect();
            let p = design.proportions[a];
            // 5 binomial standard errors.
            let share = ys.len() as f64 / n as f64;
            assert!((share - p).abs() < 5.0 * (p * (1.0 - p) / n as f64).sqrt());
            // Clipping at 4 lowers the mean by σ(φ(z) − z(1 − Φ(z))) ≤ 0.0062 (z = (4 − μ)/σ
            // ≥ 1.79); clipping at 1 is negligible. So the mean is within 5 s.e. + 0.01 of μ_a.
            let m = ys.iter().sum::<f64>() / ys.len() as f64;
            let se = 0.42 / (ys.len() as f64).sqrt();
            assert!(
                (m - design.means[a]).abs() < 5.0 * se + 0.01,
                "group {a}: {m}"
            );
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        let mut d = LawLikeDesign::default();
        d.proportions[0] = 0.5;
        assert!(d.generate(10, 1).is_err());
        let d = LawLikeDesign {
            sd: 0.0,
            ..Default::default()
        };
        assert!(d.generate(10, 1).is_err());
    }
}
