//! Intervals for figures derived from a histogram released with discrete Laplace noise, covering
//! both the noise and the sampling of the evaluation rows (docs/evaluation.md, "Intervals").
//!
//! A figure at miss probability β (level 1 − β) spends β/2 on the noise and β/2 on sampling:
//!
//! 1. **Noise.** Each noisy count is ĉ = c + Z with Z discrete Laplace of scale b,
//!    P(Z = z) = (1 − α)/(1 + α)·α^|z|, α = e^(−1/b), so P(|Z| > m) = 2α^(m+1)/(1 + α) exactly.
//!    With k cells entering the figure, each gets the margin m of [`laplace_margin`] at β/(2k);
//!    by the union bound every true count lies in [max(0, ĉ − m), ĉ + m] with probability
//!    ≥ 1 − β/2.
//! 2. **Sampling.** A rate is A/(A + B) with A the rows counted (e.g. predicted positive) and B
//!    the others of its denominator. Given A + B, A is binomial (rows are an i.i.d. sample of the
//!    population), and the two-sided Clopper–Pearson interval at β/2 covers the population rate
//!    with probability ≥ 1 − β/2. Its lower end grows with A and falls with B, its upper end the
//!    other way round, so over the box of step 1 the interval is
//!    [CP_lower(A_lo, A_lo + B_hi), CP_upper(A_hi, A_hi + B_lo)].
//!
//! Union bound: the population rate lies in the interval with probability ≥ 1 − β whatever the
//! counts (an empty or tiny group gives [0, 1] or close to it). Counts of evaluation rows have no
//! sampling part: the whole β goes to the noise. Differences (max − min over groups) and ratios
//! (min / max) follow from intervals for every group that hold simultaneously (each group at
//! β/K, union bound): [`spread_interval`], [`ratio_interval`].

use dpfair_privacy::audit::clopper_pearson;
use serde::{Deserialize, Serialize};

/// A closed interval [lower, upper].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub lower: f64,
    pub upper: f64,
}

impl Interval {
    /// Whether `x` lies in the interval.
    pub fn contains(&self, x: f64) -> bool {
        self.lower <= x && x <= self.upper
    }
}

/// The smallest integer m ≥ 0 with P(|Z| > m) ≤ `beta` for Z discrete Laplace of scale
/// `scale` (P(Z = z) ∝ e^(−|z|/scale)): P(|Z| > m) = 2α^(m+1)/(1 + α), α = e^(−1/scale).
///
/// ```
/// use dpfair_fairness::interval::laplace_margin;
/// // Scale 2 (ε = 1, replace-one): P(|Z| > 7) = 2e^-4/(1 + e^-0.5) ≈ 0.0228 ≤ 0.025 < P(|Z| > 6).
/// assert_eq!(laplace_margin(2.0, 0.025), 7);
/// ```
pub fn laplace_margin(scale: f64, beta: f64) -> u64 {
    let ln_alpha = -1.0 / scale;
    let ln_tail =
        |m: u64| std::f64::consts::LN_2 + (m + 1) as f64 * ln_alpha - ln_alpha.exp().ln_1p();
    // First guess from the closed form, then step to the exact smallest m (guards rounding).
    let guess = ((beta.ln() - std::f64::consts::LN_2 + ln_alpha.exp().ln_1p()) / ln_alpha - 1.0)
        .ceil()
        .max(0.0);
    let mut m = if guess.is_finite() {
        guess.min(u32::MAX as f64) as u64
    } else {
        0
    };
    while m > 0 && ln_tail(m - 1) <= beta.ln() {
        m -= 1;
    }
    while ln_tail(m) > beta.ln() {
        m += 1;
    }
    m
}

/// A margin t with P(|Z₁ + … + Z_j| > t) ≤ `beta` for `terms` = j independent discrete Laplace
/// variables of scale `scale` (P(Z = z) ∝ α^|z|, α = e^(−1/scale)): the Chernoff bound with
/// the exact moment generating function M(λ) = (1 − α)² / ((1 − αe^λ)(1 − αe^(−λ))),
/// P(|S| ≥ t) ≤ 2·M(λ)^j·e^(−λt) for 0 < λ < 1/scale, minimised over a grid of λ. Much smaller
/// than j single-cell margins ([`laplace_margin`]) for a sum of many cells, as a cumulative
/// count is.
///
/// ```
/// use dpfair_fairness::interval::{laplace_margin, laplace_sum_margin};
/// // Twenty cells at scale 4: about 4·√(2·20) per standard deviation, far below 20 margins.
/// let t = laplace_sum_margin(4.0, 20, 0.001);
/// assert!(t < 0.4 * 20.0 * laplace_margin(4.0, 0.001) as f64, "{t}");
/// // One cell: never below the exact single-cell margin less one step.
/// assert!(laplace_sum_margin(2.0, 1, 0.025) >= laplace_margin(2.0, 0.025) as f64 - 1.0);
/// ```
pub fn laplace_sum_margin(scale: f64, terms: usize, beta: f64) -> f64 {
    let alpha = (-1.0 / scale).exp();
    let ln_mgf = |l: f64| {
        2.0 * (-alpha).ln_1p() - (-alpha * l.exp()).ln_1p() - (-alpha * (-l).exp()).ln_1p()
    };
    let steps = 400;
    (1..steps)
        .map(|i| f64::from(i) / f64::from(steps) / scale)
        .map(|l| (terms as f64 * ln_mgf(l) + (2.0 / beta).ln()) / l)
        .fold(f64::INFINITY, f64::min)
}

/// Bounds on the sum of true counts behind `noisy` cells, each within `margin` of its noisy
/// value and at least 0: (Σ max(0, ĉ − m), Σ max(0, ĉ + m)).
fn count_box(noisy: &[i64], margin: u64) -> (u64, u64) {
    let m = i64::try_from(margin).unwrap_or(i64::MAX);
    noisy.iter().fold((0, 0), |(lo, hi), &c| {
        (
            lo + c.saturating_sub(m).max(0) as u64,
            hi + c.saturating_add(m).max(0) as u64,
        )
    })
}

/// An interval at miss probability `beta` for the number of evaluation rows behind the `noisy`
/// cells (noise only: the count is of the rows evaluated, not of a population).
///
/// ```
/// use dpfair_fairness::interval::count_interval;
/// let i = count_interval(&[100, -3], 2.0, 0.05);
/// assert!(i.lower <= 97.0 && i.upper >= 103.0 && i.lower >= 0.0);
/// ```
pub fn count_interval(noisy: &[i64], scale: f64, beta: f64) -> Interval {
    let m = laplace_margin(scale, beta / noisy.len().max(1) as f64);
    let (lo, hi) = count_box(noisy, m);
    Interval {
        lower: lo as f64,
        upper: hi as f64,
    }
}

/// An interval at miss probability `beta` for the population rate A/(A + B), from the noisy
/// cells that make up A (`success`) and B (`failure`): the module's method.
///
/// ```
/// use dpfair_fairness::interval::rate_interval;
/// // 600 of 1,000 rows, noise of scale 2 on each cell: about 0.60 ± 0.04.
/// let i = rate_interval(&[600], &[400], 2.0, 0.05);
/// assert!(i.contains(0.6) && i.lower > 0.55 && i.upper < 0.65);
/// // No rows: no information.
/// assert_eq!((rate_interval(&[0], &[-2], 2.0, 0.05).lower, rate_interval(&[0], &[-2], 2.0, 0.05).upper), (0.0, 1.0));
/// ```
pub fn rate_interval(success: &[i64], failure: &[i64], scale: f64, beta: f64) -> Interval {
    let cells = (success.len() + failure.len()).max(1);
    let m = laplace_margin(scale, beta / 2.0 / cells as f64);
    let (a_lo, a_hi) = count_box(success, m);
    let (b_lo, b_hi) = count_box(failure, m);
    // Two-sided Clopper–Pearson at β/2: each one-sided bound at β/4.
    let tail = beta / 4.0;
    let cp = |k: u64, n: u64| {
        clopper_pearson(k as usize, n as usize, tail).expect("0 ≤ k ≤ n, n > 0, tail in (0, 1)")
    };
    let lower = if a_lo == 0 {
        0.0
    } else {
        cp(a_lo, a_lo + b_hi).0
    };
    let upper = if b_lo == 0 {
        1.0
    } else {
        cp(a_hi, a_hi + b_lo).1
    };
    Interval { lower, upper }
}

/// An interval for max − min of K quantities, from intervals that hold simultaneously:
/// [max(0, max_g l_g − min_g u_g), max_g u_g − min_g l_g].
///
/// ```
/// use dpfair_fairness::interval::{Interval, spread_interval};
/// let i = spread_interval(&[Interval { lower: 0.1, upper: 0.2 }, Interval { lower: 0.5, upper: 0.6 }]);
/// assert!((i.lower - 0.3).abs() < 1e-12 && (i.upper - 0.5).abs() < 1e-12);
/// ```
pub fn spread_interval(groups: &[Interval]) -> Interval {
    let max_l = groups.iter().map(|i| i.lower).fold(0.0, f64::max);
    let max_u = groups.iter().map(|i| i.upper).fold(0.0, f64::max);
    let min_l = groups.iter().map(|i| i.lower).fold(1.0, f64::min);
    let min_u = groups.iter().map(|i| i.upper).fold(1.0, f64::min);
    Interval {
        lower: (max_l - min_u).max(0.0),
        upper: (max_u - min_l).max(0.0),
    }
}

/// An interval for min / max of K quantities in [0, 1], from intervals that hold
/// simultaneously: [min_g l_g / max_g u_g, min(1, min_g u_g / max_g l_g)] (a ratio is 1 when
/// every quantity is 0, as [`crate::demographic_parity_ratio`] defines it).
///
/// ```
/// use dpfair_fairness::interval::{Interval, ratio_interval};
/// let i = ratio_interval(&[Interval { lower: 0.2, upper: 0.25 }, Interval { lower: 0.4, upper: 0.5 }]);
/// assert!((i.lower - 0.4).abs() < 1e-12 && (i.upper - 0.625).abs() < 1e-12);
/// ```
pub fn ratio_interval(groups: &[Interval]) -> Interval {
    let max_l = groups.iter().map(|i| i.lower).fold(0.0, f64::max);
    let max_u = groups.iter().map(|i| i.upper).fold(0.0, f64::max);
    let min_l = groups.iter().map(|i| i.lower).fold(1.0, f64::min);
    let min_u = groups.iter().map(|i| i.upper).fold(1.0, f64::min);
    let lower = if max_u > 0.0 { min_l / max_u } else { 0.0 };
    // The upper end is 1 when the largest rate may be 0 (then every rate may be 0: ratio 1).
    let upper = if max_l > 0.0 {
        (min_u / max_l).min(1.0)
    } else {
        1.0
    };
    Interval { lower, upper }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Chernoff margin of a sum against the exact tail of the sum, from the pmf convolved
    /// `terms` times (support cut at ±200 per term, mass beyond it below e^(−50)): the tail
    /// beyond the margin is at most β, and not far below it (the bound is not vacuous).
    #[test]
    fn the_sum_margin_bounds_the_exact_tail_of_a_sum() {
        for (scale, terms, beta) in [(4.0, 20, 0.05), (4.0, 5, 0.001), (2.0, 12, 0.01)] {
            let a: f64 = (-1.0f64 / scale).exp();
            let norm = (1.0 - a) / (1.0 + a);
            let one: Vec<f64> = (-200i32..=200).map(|z| norm * a.powi(z.abs())).collect();
            let mut pmf = vec![1.0];
            for _ in 0..terms {
                let mut next = vec![0.0; pmf.len() + one.len() - 1];
                for (i, p) in pmf.iter().enumerate() {
                    for (j, q) in one.iter().enumerate() {
                        next[i + j] += p * q;
                    }
                }
                pmf = next;
            }
            let centre = (pmf.len() / 2) as f64;
            let tail = |t: f64| -> f64 {
                pmf.iter()
                    .enumerate()
                    .filter(|(i, _)| (*i as f64 - centre).abs() > t)
                    .map(|(_, p)| p)
                    .sum()
            };
            let t = laplace_sum_margin(scale, terms, beta);
            assert!(
                tail(t) <= beta,
                "{scale} {terms} {beta}: {} at {t}",
                tail(t)
            );
            assert!(
                tail(0.6 * t) > beta,
                "{scale} {terms} {beta}: vacuous at {t}"
            );
        }
    }

    /// P(|Z| > m) for discrete Laplace of scale b, summed from the pmf (not the closed form).
    fn tail_by_sum(b: f64, m: i64) -> f64 {
        let a: f64 = (-1.0 / b).exp();
        let norm = (1.0 - a) / (1.0 + a);
        1.0 - (-m..=m).map(|z| norm * a.powi(z.abs() as i32)).sum::<f64>()
    }

    #[test]
    fn margin_is_the_smallest_with_tail_below_beta() {
        for &b in &[0.5, 1.0, 2.0, 7.3, 40.0] {
            for &beta in &[0.5, 0.05, 0.003, 1e-6] {
                let m = laplace_margin(b, beta);
                assert!(
                    tail_by_sum(b, m as i64) <= beta * (1.0 + 1e-9),
                    "b {b} β {beta} m {m}"
                );
                if m > 0 {
                    assert!(
                        tail_by_sum(b, m as i64 - 1) > beta,
                        "b {b} β {beta} m {m} not smallest"
                    );
                }
            }
        }
    }

    #[test]
    fn rate_interval_widens_with_noise_and_holds_the_empty_case() {
        let narrow = rate_interval(&[300], &[700], 0.5, 0.05);
        let wide = rate_interval(&[300], &[700], 50.0, 0.05);
        assert!(narrow.contains(0.3) && wide.contains(0.3));
        assert!(wide.lower < narrow.lower && wide.upper > narrow.upper);
        let empty = rate_interval(&[-1, 2], &[0, -4], 2.0, 0.05);
        assert_eq!((empty.lower, empty.upper), (0.0, 1.0));
        // All successes: the upper end is 1 only if B may be 0.
        assert!(rate_interval(&[1000], &[-1], 1.0, 0.05).upper == 1.0);
    }

    #[test]
    fn spread_and_ratio_bracket_every_choice_inside() {
        let ivs = [
            Interval {
                lower: 0.1,
                upper: 0.3,
            },
            Interval {
                lower: 0.2,
                upper: 0.6,
            },
            Interval {
                lower: 0.25,
                upper: 0.35,
            },
        ];
        let (s, r) = (spread_interval(&ivs), ratio_interval(&ivs));
        // Every point of the box gives a spread and a ratio inside the intervals.
        let grid =
            |i: Interval| (0..=10).map(move |j| i.lower + (i.upper - i.lower) * j as f64 / 10.0);
        for a in grid(ivs[0]) {
            for b in grid(ivs[1]) {
                for c in grid(ivs[2]) {
                    let (hi, lo) = (a.max(b).max(c), a.min(b).min(c));
                    assert!(s.contains(hi - lo) || (hi - lo - s.lower).abs() < 1e-12);
                    assert!(r.lower <= lo / hi + 1e-12 && lo / hi <= r.upper + 1e-12);
                }
            }
        }
        let zeros = [Interval {
            lower: 0.0,
            upper: 0.0,
        }; 2];
        assert_eq!(ratio_interval(&zeros).upper, 1.0);
    }
}
