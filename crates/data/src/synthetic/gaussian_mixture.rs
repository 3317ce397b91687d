//! The synthetic design of Say, Denis, Pinot (DP2DP), App. E.1:
//!
//! ```text
//! for each class k: c^k ~ Uniform([−1, 1]^d), μ_1^k..μ_m^k ~ N(0, I_d)
//! P(Y = k) = 1/K
//! X | Y = k ~ (1/m) Σ_i N(c^k + μ_i^k, I_d)
//! S | Y = k ~ 2·Bernoulli(p) − 1 if k ≤ ⌊K/2⌋ (1-indexed), 2·Bernoulli(1 − p) − 1 otherwise
//! ```
//!
//! `d = 20`, `K = 6`, `m = 10`; `p` is the unfairness (contamination) parameter, `p = 0.5` fair.
//! `Y` is i.i.d. uniform. The centres (the population) are drawn from
//! [`GaussianMixtureDesign::centres_seed`], not from the seed of [`Design::generate`]: like every
//! other design, two calls with different seeds are two samples of the SAME population (a model
//! trained on one can be tested on the other). To redraw the centres every run (`docs/deviations.md#dp2dp-synthetic-generator`), set
//! `centres_seed` to the run's seed. Classes are coded `0..K`; group code 1 is `S = +1`, code 0 is `S = −1`;
//! `S` is not among the features. The true labels' demographic-parity gap is `(2p − 1)/3` for
//! `K = 6` (Say et al., App. E.1).

use super::{Design, Result, check_probability, check_rows, derive_seed, generate_rows, numbered};
use crate::builtin::error::invalid;
use crate::{Dataset, Groups, Target};
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

/// The Say et al. design. `Default`: `d = 20`, `K = 6`, `m = 10`, `p = 0.75` (Fig. 1 left),
/// centres from seed 4.
#[derive(Clone, Debug, PartialEq)]
pub struct GaussianMixtureDesign {
    pub dim: usize,
    pub classes: usize,
    /// Mixture components per class.
    pub components: usize,
    /// `P(S = +1 | Y = k)` for the first `⌊K/2⌋` classes (`1 − p` for the others).
    pub p: f64,
    /// Seed of the centres `c^k + μ_i^k` (the population); rows come from `generate`'s seed.
    pub centres_seed: u64,
}

impl Default for GaussianMixtureDesign {
    fn default() -> Self {
        GaussianMixtureDesign {
            dim: 20,
            classes: 6,
            components: 10,
            p: 0.75,
            centres_seed: 4,
        }
    }
}

/// Tag of the stream the centres are drawn from.
const CENTRES_STREAM: u64 = 0x4345_4E54; // "CENT"

/// The centres of one draw of the design: `centre[k][i] = c^k + μ_i^k` (length `d`).
#[derive(Clone, Debug, PartialEq)]
pub struct MixtureCentres {
    pub centres: Vec<Vec<Vec<f64>>>,
}

impl GaussianMixtureDesign {
    fn check(&self) -> Result<()> {
        if self.dim == 0 || self.classes < 2 || self.components == 0 {
            return Err(invalid(
                "classes",
                format!(
                    "need dim ≥ 1, classes ≥ 2, components ≥ 1 (got {}, {}, {})",
                    self.dim, self.classes, self.components
                ),
            ));
        }
        check_probability("p", self.p)
    }

    /// The component centres drawn from `seed` ([`Design::generate`] uses
    /// `centres(self.centres_seed)`).
    pub fn centres(&self, seed: u64) -> Result<MixtureCentres> {
        self.check()?;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(derive_seed(seed, CENTRES_STREAM));
        let centres = (0..self.classes)
            .map(|_| {
                let c: Vec<f64> = (0..self.dim)
                    .map(|_| rng.random_range(-1.0..=1.0))
                    .collect();
                (0..self.components)
                    .map(|_| {
                        c.iter()
                            .map(|&cj| {
                                let z: f64 = StandardNormal.sample(&mut rng);
                                cj + z
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        Ok(MixtureCentres { centres })
    }

    /// `P(S = +1 | Y = k)` (classes coded from 0).
    pub fn p_plus(&self, class: usize) -> f64 {
        if class < self.classes / 2 {
            self.p
        } else {
            1.0 - self.p
        }
    }
}

impl Design for GaussianMixtureDesign {
    fn name(&self) -> &'static str {
        "gaussian-mixture"
    }

    fn generate(&self, n: usize, seed: u64) -> Result<Dataset> {
        check_rows(n)?;
        let centres = self.centres(self.centres_seed)?.centres;
        let rows = generate_rows(n, self.dim, seed, |rng, x| {
            let k = rng.random_range(0..self.classes);
            let i = rng.random_range(0..self.components);
            for (v, c) in x.iter_mut().zip(&centres[k][i]) {
                let z: f64 = StandardNormal.sample(rng);
                *v = c + z;
            }
            let s = u32::from(rng.random::<f64>() < self.p_plus(k));
            (s, k as u32)
        });
        Ok(Dataset {
            features: rows.features,
            feature_names: numbered("x", self.dim),
            groups: Some(Groups {
                codes: rows.groups,
                names: vec!["-1".into(), "+1".into()],
            }),
            target: Some(Target::Multiclass {
                k: self.classes,
                labels: rows.targets,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_parity_gap_is_two_p_minus_one_over_three() {
        let n = 120_000;
        for p in [0.5, 0.75, 0.9] {
            let design = GaussianMixtureDesign {
                p,
                ..Default::default()
            };
            let d = design.generate(n, 4).unwrap();
            let Some(Target::Multiclass { k: 6, labels }) = &d.target else {
                panic!()
            };
            let codes = &d.groups.as_ref().unwrap().codes;
            // max over classes of |P(Y=k | S=+1) − P(Y=k | S=−1)| = (2p − 1)/3 (Say et al., App. E.1).
            let n_plus = codes.iter().filter(|&&c| c == 1).count() as f64;
            let n_minus = n as f64 - n_plus;
            let gap = (0..6u32)
                .map(|k| {
                    let plus = labels
                        .iter()
                        .zip(codes)
                        .filter(|&(&l, &c)| l == k && c == 1)
                        .count() as f64;
                    let minus = labels
                        .iter()
                        .zip(codes)
                        .filter(|&(&l, &c)| l == k && c == 0)
                        .count() as f64;
                    (plus / n_plus - minus / n_minus).abs()
                })
                .fold(0.0, f64::max);
            // Difference of two proportions ≈ 1/3 at n/2 each: s.e. ≈ sqrt(2·(2/9)/(n/2)) ≈
            // 0.0027; the max over 6 classes of |N(0, s.e.)| stays below 5 s.e.
            assert!(
                (gap - (2.0 * p - 1.0) / 3.0).abs() < 0.014,
                "p = {p}: {gap}"
            );
        }
    }

    /// Per-class feature means (K × d) of a sample.
    fn class_means(d: &Dataset) -> Vec<Vec<f64>> {
        let Some(Target::Multiclass { k, labels }) = &d.target else {
            panic!()
        };
        let mut sums = vec![vec![0.0; d.features.ncols()]; *k];
        let mut counts = vec![0.0; *k];
        for (row, &l) in d.features.rows().into_iter().zip(labels) {
            counts[l as usize] += 1.0;
            for (s, v) in sums[l as usize].iter_mut().zip(row) {
                *s += v;
            }
        }
        for (s, c) in sums.iter_mut().zip(&counts) {
            s.iter_mut().for_each(|v| *v /= c);
        }
        sums
    }

    /// Regression test: the centres used to be redrawn from `generate`'s seed, so a train and a
    /// test sample drawn with two seeds (as `dpfair demo` does) came from two different
    /// populations, and every model scored below chance (1/6) on its test set.
    #[test]
    fn samples_with_different_seeds_share_the_population() {
        let design = GaussianMixtureDesign::default();
        let a = class_means(&design.generate(30_000, 1).unwrap());
        let b = class_means(&design.generate(30_000, 2).unwrap());
        for (k, (ma, mb)) in a.iter().zip(&b).enumerate() {
            // ≈ 5,000 rows per class; per-coordinate within-class variance 1 + Var_i(μ_i) ≤ 3.5
            // (generous for 10 standard normal offsets), so E‖m_a − m_b‖² ≤ 20·2·3.5/5000 =
            // 0.028 (rms 0.17); 0.5 is 3 rms. Different centres give ‖c − c'‖ ≈ 4.
            let dist = ma
                .iter()
                .zip(mb)
                .map(|(x, y)| (x - y).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(dist < 0.5, "class {k}: means {dist} apart");
        }
        // A different centres seed is a different population (`docs/deviations.md#dp2dp-synthetic-generator`: redraw per run).
        let other = GaussianMixtureDesign {
            centres_seed: 5,
            ..design
        };
        let c = class_means(&other.generate(30_000, 1).unwrap());
        let dist = a[0]
            .iter()
            .zip(&c[0])
            .map(|(x, y)| (x - y).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(dist > 1.0, "{dist}");
    }

    #[test]
    fn features_are_centred_on_the_mixture_and_reproducible() {
        let design = GaussianMixtureDesign::default();
        let d = design.generate(30_000, 2).unwrap();
        assert_eq!(d.features.dim(), (30_000, 20));
        assert_eq!(d, design.generate(30_000, 2).unwrap());
        let centres = design.centres(design.centres_seed).unwrap().centres;
        let Some(Target::Multiclass { labels, .. }) = &d.target else {
            panic!()
        };
        // Class-0 mean of the first feature = c^0 + mean_i μ_i^0 (first coordinate), up to the
        // sampling error: within-class variance is 1 + Var(μ_i) ≤ 1 + 4 (generously), n ≈ 5,000.
        let expected = centres[0].iter().map(|c| c[0]).sum::<f64>() / 10.0;
        let (s, c) = d
            .features
            .column(0)
            .iter()
            .zip(labels)
            .filter(|&(_, &l)| l == 0)
            .fold((0.0, 0.0), |(s, c), (&x, _)| (s + x, c + 1.0));
        assert!((s / c - expected).abs() < 5.0 * (5.0 / c).sqrt());
        assert!(
            GaussianMixtureDesign {
                p: 2.0,
                ..Default::default()
            }
            .generate(5, 1)
            .is_err()
        );
    }
}
