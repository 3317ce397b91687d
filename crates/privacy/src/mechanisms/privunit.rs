//! **PrivUnitG at γ = 0**: an ε-LDP, unbiased randomizer for one vector of ℓ2 norm ≤ C (Asi,
//! Feldman, Talwar 2022, "Optimal algorithms for mean estimation under local differential
//! privacy", PrivUnitG; used by Lowy et al. 2023 for locally private SGD).
//!
//! PrivUnitG(p, γ) on a unit vector x releases σ·(z − ⟨x,z⟩x + αx), z ~ N(0, I), α ~ N(0,1)
//! restricted to α ≥ γ with probability p and to α < γ otherwise. Its output density is
//! φ_d(w)·[p/q if ⟨w,x⟩ ≥ γ, else (1−p)/(1−q)] with q = P(N(0,1) ≥ γ), hence ε-LDP when
//! p(1−q)/(q(1−p)) = e^ε. The general (p, γ) form is **not** implementable exactly in floating
//! point: its guarantee needs the cap {⟨w,x⟩ ≥ γ} to have the same measure q for every x, which a
//! floating-point Gaussian only approximates, and the released value is computed from x
//! (Mironov 2012). This module implements the member γ = 0 (q = 1/2, p = e^ε/(1+e^ε)), whose
//! guarantee survives floating point exactly:
//!
//! 1. randomised rounding of the clipped vector to the unit sphere (Duchi et al. 2018): with
//!    r = min(‖g‖, C)/C and u = g/‖g‖, x = u with probability (1+r)/2, else −u (u = e₁ if g = 0);
//! 2. a data-independent candidate v ~ N(0, I_d), oriented canonically: c = ±v with its first
//!    non-zero coordinate positive (c depends on the pair {v, −v} only);
//! 3. τ = sign⟨c, x⟩ (computed in floating point; any value is fine);
//! 4. s = τ with probability π = e^ε/(1+e^ε), else −τ (an exact Bernoulli from
//!    [`bernoulli_exp`]); s is a fair coin if τ = 0;
//! 5. release σ·s·c, σ = C / (√(2/π₀)·tanh(ε/2)) (π₀ = 3.14159…), a public constant.
//!
//! **Privacy (exact).** The output s·c equals ±c where c is a function of the data-independent
//! pair {v, −v}; given c, the sign is +1 with probability π, 1/2 or 1−π depending on x. So
//! P(out = w) = F({w, −w})·π_x(w) with π_x(w) ∈ {π, 1/2, 1−π}, and the ratio between any two
//! inputs is at most π/(1−π) = e^ε, whatever the (floating-point) law F of the candidate: the
//! `rand_distr` normal here only draws the data-independent candidate, never a value added to
//! data. Rounding (step 1) is the user's own preprocessing: the bound holds for every unit x.
//!
//! **Unbiasedness.** For Gaussian v, E[s·c | x] = (2π−1)·E|⟨v,x⟩|·x = tanh(ε/2)·√(2/π₀)·x and
//! E[x] = r·u = clip(g)/C, so E[σ·s·c] = clip_C(g).
//!
//! **Deviation from the paper (reported by PSGD).** Lowy et al.'s code chooses p (hence γ > 0) to
//! minimise σ and feeds non-unit vectors g/max(‖g‖, C) to the unit-vector formula; γ = 0 has a
//! larger σ at large ε (√(2/π₀)·tanh(ε/2) ≤ 0.80 against ≈ γ for the optimal cap), i.e. more
//! noise, but its ε holds exactly.

use super::{entry, positive};
use crate::Noise;
use crate::error::{Result, invalid};
use crate::ledger::{Cost, Ledger, Relation};
use crate::samplers::lattice::{Norm, dyadic};
use crate::samplers::{bernoulli_exp, uniform_below};
use num_bigint::BigUint;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

/// The ε-LDP PrivUnitG (γ = 0) randomizer for vectors clipped to ℓ2 norm `clip`.
#[derive(Clone, Debug, PartialEq)]
pub struct PrivUnitG {
    epsilon: f64,
    clip: f64,
    /// ε as an exact dyadic fraction, for Bernoulli(e^{−ε}).
    eps_exact: (BigUint, BigUint),
}

impl PrivUnitG {
    pub fn new(epsilon: f64, clip: f64) -> Result<Self> {
        let epsilon = positive("epsilon", epsilon)?;
        Ok(PrivUnitG {
            epsilon,
            clip: positive("clip", clip)?,
            eps_exact: dyadic(epsilon)?,
        })
    }

    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    pub fn clip(&self) -> f64 {
        self.clip
    }

    /// π = e^ε/(1+e^ε): the probability that the released sign agrees with ⟨c, x⟩.
    pub fn keep_probability(&self) -> f64 {
        1.0 / (1.0 + (-self.epsilon).exp())
    }

    /// σ = C / (√(2/π₀)·tanh(ε/2)), the unbiasing scale of the release.
    pub fn scale(&self) -> f64 {
        self.clip / ((2.0 / std::f64::consts::PI).sqrt() * (self.epsilon / 2.0).tanh())
    }

    /// Bernoulli(π) exactly: repeat { fair coin → true; else Bernoulli(e^{−ε}) → false }, so
    /// P(true) = (1/2)/(1/2 + e^{−ε}/2) = π.
    fn keep(&self, noise: &mut Noise) -> Result<bool> {
        loop {
            if uniform_below(noise, 2)? == 1 {
                return Ok(true);
            }
            if bernoulli_exp(noise, &self.eps_exact.0, &self.eps_exact.1)? {
                return Ok(false);
            }
        }
    }

    /// User side: one ε-LDP unbiased report of `g` clipped to ℓ2 norm C. Non-finite entries are
    /// replaced by 0 first (a data-independent fallback). Fails only on an empty vector.
    pub fn report(&self, noise: &mut Noise, g: &[f64]) -> Result<Vec<f64>> {
        let d = g.len();
        if d == 0 {
            return Err(invalid("values", "PrivUnitG needs a non-empty vector"));
        }
        let g: Vec<f64> = g
            .iter()
            .map(|v| if v.is_finite() { *v } else { 0.0 })
            .collect();
        let norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
        // Step 1: x = ±u with P(+) = (1 + r)/2.
        let mut x = vec![0.0; d];
        if norm > 0.0 && norm.is_finite() {
            x.iter_mut().zip(&g).for_each(|(xi, gi)| *xi = gi / norm);
        } else {
            x[0] = 1.0;
        }
        let r = if norm.is_finite() {
            (norm / self.clip).min(1.0)
        } else {
            0.0
        };
        let u: f64 = noise.random();
        let sign_x = if u < (1.0 + r) / 2.0 { 1.0 } else { -1.0 };
        // Step 2: the data-independent candidate, canonically oriented.
        let mut c: Vec<f64> = (0..d).map(|_| StandardNormal.sample(noise)).collect();
        if c.iter().find(|v| **v != 0.0).is_some_and(|v| *v < 0.0) {
            c.iter_mut().for_each(|v| *v = -*v);
        }
        // Steps 3–4: the sign, the only data-dependent part.
        let t: f64 = sign_x * c.iter().zip(&x).map(|(a, b)| a * b).sum::<f64>();
        let tau = if t > 0.0 {
            1.0
        } else if t < 0.0 {
            -1.0
        } else {
            0.0
        };
        let s = if tau == 0.0 {
            if uniform_below(noise, 2)? == 1 {
                1.0
            } else {
                -1.0
            }
        } else if self.keep(noise)? {
            tau
        } else {
            -tau
        };
        // Step 5: a public rescaling.
        let sigma = s * self.scale();
        Ok(c.into_iter().map(|v| sigma * v).collect())
    }

    /// Collector side: records that `n_users` users each sent one ε-LDP report (parallel over
    /// users: one entry of cost ε). A sequentially interactive protocol (each user's report may
    /// depend on earlier *released* values) keeps this guarantee: every user reports once.
    pub fn charge_reports(&self, ledger: &mut Ledger, label: &str, n_users: usize) -> Result<()> {
        ledger.charge(entry(
            label,
            "privunitg (γ = 0)",
            Relation::Substitution,
            2.0 * self.clip,
            Norm::L2.name(),
            self.scale(),
            Cost::Pure {
                epsilon: self.epsilon,
            },
            Some(format!(
                "{n_users} users, one ε-LDP report each (parallel over users); ℓ2 clip {}, \
                 sign kept with probability e^ε/(1+e^ε), scale C/(√(2/π)·tanh(ε/2))",
                self.clip
            )),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn calibration_the_sign_ratio_is_e_to_the_epsilon() {
        // The only data-dependent part of the output is the sign of ⟨out, x⟩: P(> 0) = π for
        // input x, 1 − π for input −x. ε = 1: π = 0.7311. With m = 20,000 draws the frequency's
        // sd is √(π(1−π)/m) = 0.0031; allow 4 sd = 0.0125 on each, and the log-ratio of the two
        // frequencies, whose sd is ≈ √((1−π)/(mπ) + π/(m(1−π)))= 0.0136, within 4 sd of ε.
        let mech = PrivUnitG::new(1.0, 1.0).unwrap();
        let pi = mech.keep_probability();
        assert!((pi - 1.0f64.exp() / (1.0 + 1.0f64.exp())).abs() < 1e-15);
        let x = [0.6, 0.0, -0.8];
        let neg: Vec<f64> = x.iter().map(|v| -v).collect();
        let mut noise = Noise::seeded(11);
        let m = 20_000;
        let freq = |input: &[f64], noise: &mut Noise| {
            (0..m)
                .filter(|_| dot(&mech.report(noise, input).unwrap(), &x) > 0.0)
                .count() as f64
                / m as f64
        };
        let f_pos = freq(&x, &mut noise);
        let f_neg = freq(&neg, &mut noise);
        assert!((f_pos - pi).abs() < 0.0125, "{f_pos} vs {pi}");
        assert!(
            (f_neg - (1.0 - pi)).abs() < 0.0125,
            "{f_neg} vs {}",
            1.0 - pi
        );
        let log_ratio = (f_pos / f_neg).ln();
        assert!((log_ratio - 1.0).abs() < 0.055, "log ratio {log_ratio}");
    }

    #[test]
    fn the_release_is_a_signed_data_independent_candidate() {
        // Same seed, different inputs: the outputs are equal up to sign (the candidate c does not
        // depend on the data), and have length σ·‖c‖ with c ~ N(0, I).
        let mech = PrivUnitG::new(2.0, 1.0).unwrap();
        for seed in 0..50 {
            let a = mech
                .report(&mut Noise::seeded(seed), &[0.1, 0.2, 0.3, 0.4])
                .unwrap();
            let b = mech
                .report(&mut Noise::seeded(seed), &[-5.0, 0.0, 1.0, 9.0])
                .unwrap();
            let same = a.iter().zip(&b).all(|(p, q)| p == q);
            let flipped = a.iter().zip(&b).all(|(p, q)| *p == -*q);
            assert!(same || flipped, "seed {seed}: {a:?} vs {b:?}");
        }
    }

    #[test]
    fn reports_are_unbiased_for_the_clipped_vector() {
        // E[report] = clip_C(g). Each coordinate of σ·s·c has variance σ²·E[c_i²] = σ² (minus
        // the tiny squared mean); at ε = 2, C = 1: σ = 1/(0.7979·0.7616) = 1.646, so the mean of
        // m = 20,000 reports has sd 1.646/√m = 0.0116 per coordinate; allow 4.5 sd = 0.052.
        let mech = PrivUnitG::new(2.0, 1.0).unwrap();
        assert!((mech.scale() - 1.645_7).abs() < 1e-3, "{}", mech.scale());
        let mut noise = Noise::seeded(3);
        let m = 20_000;
        for (g, want) in [
            (vec![0.3, -0.2, 0.1], vec![0.3, -0.2, 0.1]),
            (vec![3.0, 4.0, 0.0], vec![0.6, 0.8, 0.0]),
            (vec![0.0, 0.0, 0.0], vec![0.0, 0.0, 0.0]),
        ] {
            let mut mean = [0.0; 3];
            for _ in 0..m {
                let r = mech.report(&mut noise, &g).unwrap();
                mean.iter_mut()
                    .zip(&r)
                    .for_each(|(a, b)| *a += b / m as f64);
            }
            for (k, (a, w)) in mean.iter().zip(&want).enumerate() {
                assert!((a - w).abs() < 0.052, "g {g:?} coord {k}: {a} vs {w}");
            }
        }
    }

    #[test]
    fn the_projection_has_the_half_normal_law() {
        // Goodness of fit: |⟨out, x⟩|/σ = |⟨c, x⟩| is |N(0,1)| for unit x. Chi-square over the
        // 4 quartile bins of the half-normal (edges 0.3186, 0.6745, 1.1503): 3 degrees of
        // freedom, the 0.999 quantile is 16.27.
        let mech = PrivUnitG::new(0.5, 2.0).unwrap();
        let x = [0.0, 1.0, 0.0, 0.0, 0.0];
        let g: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
        let mut noise = Noise::seeded(8);
        let m = 8_000;
        let edges = [0.318_639, 0.674_490, 1.150_349];
        let mut counts = [0usize; 4];
        for _ in 0..m {
            let t = dot(&mech.report(&mut noise, &g).unwrap(), &x).abs() / mech.scale();
            counts[edges.iter().filter(|e| t > **e).count()] += 1;
        }
        let expected = m as f64 / 4.0;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!(chi2 < 16.27, "chi-square {chi2}, counts {counts:?}");
    }

    #[test]
    fn charges_one_pure_epsilon_entry() {
        let mech = PrivUnitG::new(0.7, 1.0).unwrap();
        let mut ledger = Ledger::unlimited();
        mech.charge_reports(&mut ledger, "test", 10).unwrap();
        assert_eq!(ledger.entries().len(), 1);
        assert_eq!(ledger.entries()[0].cost, Cost::Pure { epsilon: 0.7 });
        assert!(PrivUnitG::new(0.0, 1.0).is_err());
        assert!(PrivUnitG::new(1.0, -1.0).is_err());
    }
}
