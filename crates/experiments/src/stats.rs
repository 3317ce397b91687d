//! The statistics behind report.md's intervals and checks: Student-t quantiles, the 95 %
//! half-width of a mean that every table column and check uses ([`half_width`]), Welch's
//! standard error of a difference of two means, and the minimal detectable effect that gives a
//! check its power statement (`docs/reproductions.md`, "Reading report.md").
//!
//! A trend or comparison check tests a one-sided claim ("A beats B", "error falls in N") at
//! level 0.05. Its *minimal detectable effect* at power 0.8 is
//! `(t_{0.95, ν} + t_{0.80, ν})·SE` (the usual sample-size formula of a one-sided t test with
//! the SE estimated from the same draws): a true effect of that size is found 80% of the time.
//! The SEs come from each setting's own repetitions, treating two settings as independent
//! samples; the runs share their seeds across settings (common random numbers), so the true
//! SE of a difference is smaller and the statement is conservative.

use crate::aggregate::Summary;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The `p` quantile of Student's t with `df` degrees of freedom: ∞ for `df ≤ 0` (a mean of one
/// draw carries no evidence); the normal quantile above 1,000 degrees of freedom (relative error
/// < 0.1% at p ≤ 0.975; statrs' t inverse does not converge for huge `df`).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 {
        return f64::INFINITY;
    }
    if df > 1000.0 {
        return Normal::new(0.0, 1.0)
            .map(|n| n.inverse_cdf(p))
            .unwrap_or(f64::INFINITY);
    }
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(p))
        .unwrap_or(f64::INFINITY)
}

/// The confidence level of every interval in the reports.
pub const LEVEL: f64 = 0.95;

/// Half-width of the two-sided [`LEVEL`] (95 %) interval of a mean of `n` repetitions with
/// sample standard deviation `std`: `t_{0.975, n−1}·std/√n` (Student's t, since the sd is
/// estimated from the same `n` draws; 12.71 at n = 2, 4.30 at 3, ≈ 1.98 at 100). The one
/// interval of the crate: results.csv's `ci95`, report.md's "± t·se" column and every check's
/// sampling allowance. ∞ for fewer than 2 repetitions (a mean of one draw has no interval).
pub fn half_width(std: f64, n: usize) -> f64 {
    if n < 2 {
        return f64::INFINITY;
    }
    let nf = n as f64;
    t_quantile(0.5 + LEVEL / 2.0, nf - 1.0) * std / nf.sqrt()
}

/// Standard error of one aggregated mean, `std/√n`.
pub fn se(s: &Summary) -> f64 {
    s.std / (s.repetitions.max(1) as f64).sqrt()
}

/// The standard error of a difference of two independent means and Welch's degrees of freedom
/// `ν = (a² + b²)² / (a⁴/(n_a−1) + b⁴/(n_b−1))` (`a`, `b` the SEs). With both SEs 0 (identical
/// repetitions), `ν = ∞`; with a mean of one repetition (no SE), `ν = 0`: no evidence.
pub fn welch(se_a: f64, n_a: usize, se_b: f64, n_b: usize) -> (f64, f64) {
    let se = (se_a * se_a + se_b * se_b).sqrt();
    if n_a < 2 || n_b < 2 {
        return (se, 0.0);
    }
    let part = |s: f64, n: usize| {
        if n < 2 {
            f64::INFINITY
        } else {
            s.powi(4) / (n - 1) as f64
        }
    };
    let denom = part(se_a, n_a) + part(se_b, n_b);
    let df = if se == 0.0 {
        f64::INFINITY
    } else {
        se.powi(4) / denom
    };
    (se, df)
}

/// The smallest true effect a one-sided level-0.05 t test with standard error `se` and `df`
/// degrees of freedom detects with probability 0.8: `(t_{0.95, ν} + t_{0.80, ν})·SE`.
pub fn min_detectable_effect(se: f64, df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 {
        return f64::INFINITY;
    }
    (t_quantile(0.95, df) + t_quantile(0.80, df)) * se
}

/// What a check can resolve, for report.md's "power" column.
#[derive(Clone, Debug, PartialEq)]
pub struct Power {
    /// The minimal detectable effect at level 0.05 (one-sided) and power 0.8.
    pub min_effect: f64,
    /// The smallest number of repetitions behind the means the check compares.
    pub repetitions: usize,
    /// The size of the effect the paper shows, when it can be read off (same unit as
    /// `min_effect`); a check whose `min_effect` exceeds it cannot confirm the claim.
    pub claimed_effect: Option<f64>,
}

impl Power {
    /// Whether the check can detect the paper's effect (unknown effect: not established).
    pub fn resolves_claim(&self) -> bool {
        self.claimed_effect
            .is_some_and(|e| e.is_finite() && self.min_effect <= e.abs())
    }
}

/// A directional claim over several pairs `(a_i, b_i)`: "`b_i − a_i` moves the expected way"
/// (`sign = +1`: rises, `−1`: falls). The pooled test averages the `k` signed differences
/// `d̄ = (1/k) Σ sign·(b_i − a_i)` with `SE(d̄) = √(Σ SE_i²)/k` and Satterthwaite's degrees of
/// freedom, and passes when `d̄ > t_{0.95, ν}·SE(d̄)` (the effect is there) and no single pair
/// goes the other way by more than `t_{0.975, ν_i}·SE_i` (no significant reversal).
#[derive(Clone, Debug, PartialEq)]
pub struct Direction {
    pub pairs: usize,
    /// Pairs whose difference has the expected sign.
    pub right_way: usize,
    /// Labels of pairs that go the other way significantly.
    pub reversals: Vec<String>,
    /// The pooled mean signed difference and its SE.
    pub mean_change: f64,
    pub se: f64,
    pub df: f64,
    pub passed: bool,
    pub power: Power,
}

/// Evaluate a [`Direction`] claim over `pairs` of (label, from, to) summaries.
pub fn direction(pairs: &[(String, &Summary, &Summary)], sign: f64) -> Option<Direction> {
    if pairs.is_empty() {
        return None;
    }
    let k = pairs.len() as f64;
    let (mut sum, mut var, mut denom, mut right_way) = (0.0, 0.0, 0.0, 0);
    let mut reversals = Vec::new();
    let mut min_n = usize::MAX;
    let mut no_se = false;
    for (label, a, b) in pairs {
        let d = sign * (b.mean - a.mean);
        let (s, df) = welch(se(a), a.repetitions, se(b), b.repetitions);
        no_se |= df <= 0.0;
        sum += d;
        var += s * s;
        denom += if df.is_finite() && df > 0.0 {
            s.powi(4) / df
        } else {
            0.0
        };
        right_way += usize::from(d > 0.0);
        min_n = min_n.min(a.repetitions.min(b.repetitions));
        if d < -t_quantile(0.975, df) * s && s > 0.0 {
            reversals.push(format!("{label}: {:.4} → {:.4}", a.mean, b.mean));
        }
    }
    let mean_change = sum / k;
    let se_pooled = var.sqrt() / k;
    let df = if no_se {
        0.0
    } else if denom > 0.0 {
        var * var / denom
    } else {
        f64::INFINITY
    };
    let passed = reversals.is_empty() && mean_change > t_quantile(0.95, df) * se_pooled;
    Some(Direction {
        pairs: pairs.len(),
        right_way,
        reversals,
        mean_change,
        se: se_pooled,
        df,
        passed,
        power: Power {
            min_effect: min_detectable_effect(se_pooled, df),
            repetitions: min_n,
            claimed_effect: None,
        },
    })
}

impl Direction {
    /// One line for the check's detail.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} of {} pairs move the expected way; mean change {:+.4} (SE {:.4}, needs > {:.4}); \
             {} significant reversals",
            self.right_way,
            self.pairs,
            self.mean_change,
            self.se,
            t_quantile(0.95, self.df) * self.se,
            self.reversals.len()
        );
        for r in self.reversals.iter().take(4) {
            s.push_str("; ");
            s.push_str(r);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Params, Setting};

    fn summary(mean: f64, std: f64, n: usize) -> Summary {
        Summary {
            setting: Setting {
                dataset: "d".into(),
                method: "m".into(),
                accounting: "strict".into(),
                epsilon: 1.0,
                delta: 0.0,
                fairness_level: None,
                params: Params::new(),
            },
            repetitions: n,
            epsilon_spent: None,
            metric: "error".into(),
            mean,
            std,
            ci95: 0.0,
        }
    }

    #[test]
    fn t_quantiles_match_tables() {
        // Tabulated: t_{0.975, 2} = 4.303, t_{0.95, 2} = 2.920, t_{0.80, 2} = 1.061,
        // t_{0.95, 19} = 1.729; normal limit 1.645.
        assert!((t_quantile(0.975, 2.0) - 4.303).abs() < 1e-3);
        assert!((t_quantile(0.95, 2.0) - 2.920).abs() < 1e-3);
        assert!((t_quantile(0.80, 2.0) - 1.061).abs() < 1e-3);
        assert!((t_quantile(0.95, 19.0) - 1.729).abs() < 1e-3);
        assert!((t_quantile(0.975, 31.0) - 2.0395).abs() < 1e-3);
        assert!((t_quantile(0.975, 200.0) - 1.9719).abs() < 1e-3);
        let far = t_quantile(0.975, 100_000.0);
        assert!(far > 1.9599 && far < 1.961, "{far}");
        assert!((t_quantile(0.95, f64::INFINITY) - 1.6449).abs() < 1e-3);
        assert!(t_quantile(0.95, 0.0).is_infinite());
    }

    #[test]
    fn the_half_width_uses_t_with_n_minus_1_degrees_of_freedom() {
        // sd 1: n = 2 → t_{0.975,1}/√2 = 12.706/1.414 = 8.985; n = 3 → 4.303/√3 = 2.484;
        // n = 10 → 2.262/√10 = 0.7154 (tabulated t quantiles). The normal 1.96/√n would give
        // 1.386, 1.132, 0.6198: the old 70–81 % intervals at 2–3 repetitions.
        assert!((half_width(1.0, 2) - 12.706 / 2f64.sqrt()).abs() < 1e-3);
        assert!((half_width(1.0, 3) - 4.303 / 3f64.sqrt()).abs() < 1e-3);
        assert!((half_width(2.0, 10) - 2.0 * 2.262 / 10f64.sqrt()).abs() < 1e-3);
        // Coverage of the t interval at n = 3 is exactly 95 %: P(|T_2| ≤ 4.303) = 0.95, while
        // the normal 1.96 covers P(|T_2| ≤ 1.96) = 0.811.
        let t2 = StudentsT::new(0.0, 1.0, 2.0).expect("valid");
        let cover = |q: f64| t2.cdf(q) - t2.cdf(-q);
        let q = half_width(1.0, 3) * 3f64.sqrt();
        assert!((cover(q) - 0.95).abs() < 1e-9, "{}", cover(q));
        assert!((cover(1.96) - 0.811).abs() < 1e-3);
        assert!(half_width(1.0, 1).is_infinite() && half_width(0.0, 0).is_infinite());
    }

    #[test]
    fn welch_by_hand() {
        // SEs 0.01 and 0.02 from 5 and 10 repetitions:
        // ν = (1e-4 + 4e-4)² / (1e-8/4 + 1.6e-7/9) = 2.5e-7 / 2.0278e-8 = 12.33.
        let (se, df) = welch(0.01, 5, 0.02, 10);
        assert!((se - 0.0005f64.sqrt()).abs() < 1e-12);
        assert!((df - 12.33).abs() < 0.01, "{df}");
    }

    #[test]
    fn direction_needs_the_effect_not_only_no_reversal() {
        // Two pairs falling by 0.001 with SE 0.01 each: no reversal, but no evidence either.
        let (a, b) = (summary(0.20, 0.02, 4), summary(0.199, 0.02, 4));
        let pairs = vec![("1".to_string(), &a, &b), ("2".to_string(), &a, &b)];
        let d = direction(&pairs, -1.0).expect("pairs");
        assert!(d.reversals.is_empty());
        assert!(!d.passed, "{d:?}");
        // Minimal detectable effect: SE 0.01 pooled (√(2·2e-4)/2), ν = 12: (1.782 + 0.873)·0.01.
        assert!((d.power.min_effect - 0.02655).abs() < 2e-4, "{d:?}");
        // A fall of 0.05 is found.
        let c = summary(0.15, 0.02, 4);
        let pairs = vec![("1".to_string(), &a, &c), ("2".to_string(), &a, &c)];
        assert!(direction(&pairs, -1.0).expect("pairs").passed);
        // … and a rise of 0.05 is a significant reversal.
        let pairs = vec![("1".to_string(), &c, &a)];
        let d = direction(&pairs, -1.0).expect("pairs");
        assert!(!d.passed && d.reversals.len() == 1);
        // Means of one repetition carry no SE: no evidence, whatever the change.
        let (a1, c1) = (summary(0.20, 0.0, 1), summary(0.15, 0.0, 1));
        let d = direction(&[("1".to_string(), &a1, &c1)], -1.0).expect("pairs");
        assert!(!d.passed && d.power.min_effect.is_infinite(), "{d:?}");
    }
}
