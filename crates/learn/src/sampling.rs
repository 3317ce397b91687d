//! Exact Poisson subsampling for DP-SGD: every example joins the batch independently with
//! probability q (Opacus's `UniformWithReplacementSampler`; the subsampling the subsampled-Gaussian
//! accountants assume). The randomness comes from the privacy crate's [`Noise`], because the
//! amplification by subsampling is part of the privacy argument.
//!
//! Independent Bernoulli(q) coins on rows 0, 1, …, n−1 select the same random set as starting
//! before row 0 and jumping over independent Geometric(q) skips (the number of failed coins before
//! each success) until the end of the rows. The skips come from the privacy crate's
//! [`GeometricSkips`], which draws them exactly for the `f64` value q from uniform bits (its
//! module doc gives the argument), so a batch costs one skip per *selected* row: O(qn) per step
//! and O(n) per epoch, instead of a coin for every row at every step.

use crate::error::{Result, invalid};
use dpfair_privacy::Noise;
use dpfair_privacy::samplers::bits::BitStream;
use dpfair_privacy::samplers::geometric::GeometricSkips;

/// Draws Poisson samples of `0..n` with inclusion probability `q`.
#[derive(Clone, Debug)]
pub struct PoissonSampler {
    q: f64,
    /// `None` when q = 1 (every row).
    skips: Option<GeometricSkips>,
}

impl PoissonSampler {
    /// A sampler with inclusion probability `q ∈ (0, 1]` (normal, not subnormal, when < 1).
    pub fn new(q: f64) -> Result<Self> {
        if !(q > 0.0 && q <= 1.0) || (q < 1.0 && !q.is_normal()) {
            return Err(invalid(
                "sampling_rate",
                format!("must be in (0, 1] (and not subnormal), got {q}"),
            ));
        }
        let skips = if q == 1.0 {
            None
        } else {
            Some(GeometricSkips::new(q)?)
        };
        Ok(PoissonSampler { q, skips })
    }

    pub fn rate(&self) -> f64 {
        self.q
    }

    /// Fills `out` with the selected indices of `0..n`, in increasing order.
    pub fn sample_into(&self, noise: &mut Noise, n: usize, out: &mut Vec<usize>) {
        out.clear();
        let Some(skips) = &self.skips else {
            out.extend(0..n);
            return;
        };
        if n == 0 {
            return;
        }
        let mut bits = BitStream::new(noise);
        let n = n as u64;
        let mut next = 0u64; // the first row not yet decided
        while let Some(g) = skips.skip(&mut bits, n - next) {
            out.push((next + g) as usize);
            next += g + 1;
            if next == n {
                break;
            }
        }
    }

    /// The selected indices of `0..n`.
    pub fn sample(&self, noise: &mut Noise, n: usize) -> Vec<usize> {
        let mut out = Vec::new();
        self.sample_into(noise, n, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// |observed − expected| in standard errors of a binomial count.
    fn z_score(count: usize, trials: usize, p: f64) -> f64 {
        let n = trials as f64;
        (count as f64 - n * p) / (n * p * (1.0 - p)).sqrt()
    }

    #[test]
    fn total_inclusion_frequency_matches_q() {
        let mut noise = Noise::seeded(42);
        // Rates with short and long expansions, many and few leading zeros, a dyadic rate, q near
        // 1, and a tiny rate (blocks of 4,096 rows mostly skipped whole).
        for q in [
            1.0 / 89.0,
            0.75,
            0.5,
            0.3,
            1e-3,
            0.999,
            2f64.powi(-40) * 3.0,
        ] {
            let s = PoissonSampler::new(q).unwrap();
            let (n, reps) = (1_000_000, 50);
            let total: usize = (0..reps).map(|_| s.sample(&mut noise, n).len()).sum();
            // Binomial(5·10⁷, q) count, 5 standard errors: false alarm rate below 10⁻⁶ per rate.
            // Power at q = 1/89: a sampler whose rate is off by 1% (shift 5,618, SE 746) is
            // outside 5 SE with probability Φ(7.5 − 5) ≈ 0.994.
            let z = z_score(total, reps * n, q);
            assert!(z.abs() < 5.0, "q = {q}: {total} selected, z = {z}");
        }
    }

    #[test]
    fn every_position_is_included_with_probability_q() {
        // 100,000 samples of 200 rows: per-position counts are independent Binomial(10⁵, q) under
        // the exact law, so Pearson's Σ (c_i − Rq)²/(Rq(1−q)) is ≈ χ²₂₀₀, whose 1 − 10⁻⁶
        // quantile is 310 (Wilson–Hilferty). Power: one position (say the first or the last, where
        // a skip sampler can go wrong) with inclusion probability off by 50% adds ≈ 285 to a
        // statistic of mean 200 (at q = 1/89) and is detected with probability > 0.99.
        for (q, seed) in [(1.0 / 89.0, 3u64), (0.3, 4)] {
            let s = PoissonSampler::new(q).unwrap();
            let mut noise = Noise::seeded(seed);
            let (n, reps) = (200usize, 100_000usize);
            let mut counts = vec![0u64; n];
            let mut batch = Vec::new();
            for _ in 0..reps {
                s.sample_into(&mut noise, n, &mut batch);
                for &i in &batch {
                    counts[i] += 1;
                }
            }
            let e = reps as f64 * q;
            let v = e * (1.0 - q);
            let chi2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / v).sum();
            assert!(chi2 < 310.0, "q = {q}: χ² = {chi2} over 200 positions");
        }
    }

    #[test]
    fn coins_are_independent_of_position() {
        // Pairs (i, i+1) both selected: probability q² if the coins are independent. With q = 0.3
        // over 10⁶ pairs the count has standard error √(10⁶ q²(1−q²)) ≈ 286.
        let s = PoissonSampler::new(0.3).unwrap();
        let mut noise = Noise::seeded(7);
        let n = 1_000_001;
        let sel = s.sample(&mut noise, n);
        let mut mark = vec![false; n];
        for &i in &sel {
            mark[i] = true;
        }
        let both = mark.windows(2).filter(|w| w[0] && w[1]).count();
        let z = z_score(both, n - 1, 0.09);
        assert!(z.abs() < 5.0, "adjacent pairs z = {z}");
        assert!(sel.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn edge_rates() {
        let mut noise = Noise::seeded(1);
        assert_eq!(
            PoissonSampler::new(1.0).unwrap().sample(&mut noise, 5),
            vec![0, 1, 2, 3, 4]
        );
        assert!(
            PoissonSampler::new(0.5)
                .unwrap()
                .sample(&mut noise, 0)
                .is_empty()
        );
        for bad in [0.0, -0.1, 1.5, f64::NAN, 1e-310] {
            assert!(PoissonSampler::new(bad).is_err(), "{bad}");
        }
    }
}
