//! Algorithm 1 (Optimal Fair Binary Classifier) and steps 5–6 of Algorithm 2 of Ghoukasian &
//! Asoodeh: the randomized flips that move both groups' positive rates to their midpoint.
//!
//! With `hi ≥ lo` the larger and smaller of the two rates (α for A = 0, β for A = 1; the group with
//! the larger rate is `down`, the other `up`), each query draws a fresh s ~ U(0, 1) and
//!
//! * in group `down`, a positive base prediction is kept iff s ≤ p_keep = (hi + lo)/(2·hi);
//! * in group `up`, a negative base prediction is flipped iff s ≤ p_flip = (hi − lo)/(2·(1 − lo)).
//!
//! Both output rates are then (α + β)/2 and each group changes (α − β)/2 of its predictions
//! (Theorem 2; the total |α − β| meets the lower bound of Proposition 1). Degenerate rates
//! (Ghoukasian & Asoodeh, Algorithm 1, `docs/deviations.md#decoupled-division-by-zero-in-the-flips`): p_keep = 1 when hi = 0 and p_flip = 0 when lo = 1 (identity).

use super::error::{Result, invalid};
use serde::{Deserialize, Serialize};

/// How the flips share the move between the two groups when the released rates are further
/// apart than the parity level allows (`docs/deviations.md#decoupled-fewest-changes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlipRule {
    /// Both rates move to their midpoint (less the allowed level): Ghoukasian & Asoodeh's
    /// Algorithm 1, which changes the same fraction of each group's decisions.
    #[default]
    Midpoint,
    /// Only the group with the fewer rows (by the released group sizes) moves, all the way to
    /// the allowed level: the fewest decisions changed in all, so the least accuracy given up
    /// by a base model better than chance.
    FewestChanges,
    /// The fewest-changes targets met by thresholds on the base model's scores: the decisions
    /// given up are the group's least confident ones ([`super::score_thresholds`]; strict
    /// accounting, and as [`FlipRule::FewestChanges`] in paper mode or wherever rates alone are
    /// given).
    Scores,
}

/// The randomized post-processor defined by two group positive rates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FairFlips {
    /// Positive rate of group 0 the flips were built from (α, or α̃ in Algorithm 2).
    pub alpha: f64,
    /// Positive rate of group 1 (β, or β̃).
    pub beta: f64,
    /// The group whose positives are thinned (the one with the larger rate; 0 on ties).
    pub down: u32,
    /// P(keep a positive) in group `down`, in [1/2, 1].
    pub p_keep: f64,
    /// P(flip a negative to positive) in the other group, in [0, 1/2].
    pub p_flip: f64,
}

impl FairFlips {
    /// The flips for rates `alpha` (group 0) and `beta` (group 1), both in [0, 1]
    /// (Algorithm 1 step 3; Algorithm 2 steps 5–6 with α̃, β̃).
    pub fn from_rates(alpha: f64, beta: f64) -> Result<Self> {
        for (name, v) in [("alpha", alpha), ("beta", beta)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(invalid(name, format!("a rate must be in [0, 1], got {v}")));
            }
        }
        let (down, hi, lo) = if alpha >= beta {
            (0, alpha, beta)
        } else {
            (1, beta, alpha)
        };
        let p_keep = if hi > 0.0 {
            (hi + lo) / (2.0 * hi)
        } else {
            1.0
        };
        let p_flip = if lo < 1.0 {
            (hi - lo) / (2.0 * (1.0 - lo))
        } else {
            0.0
        };
        Ok(FairFlips {
            alpha,
            beta,
            down,
            p_keep,
            p_flip,
        })
    }

    /// The flips for `rule` ([`FlipRule`]): [`FairFlips::from_rates_within`] for the midpoint;
    /// for the fewest changes, the rate of the group with fewer rows (`sizes`: the released, or
    /// public, group sizes; the midpoint on a tie) moves to within `level` of the other's.
    ///
    /// ```
    /// use dpfair::decoupled::{FairFlips, FlipRule};
    /// // Group 0 (9,400 rows) at 1.0, group 1 (600 rows) at 0.8, level 0.1: only group 1 moves,
    /// // half of its negatives flipped, so its rate becomes 0.9.
    /// let f = FairFlips::from_rates_by(1.0, 0.8, 0.1, FlipRule::FewestChanges, [9400.0, 600.0])
    ///     .unwrap();
    /// assert_eq!(f.p_keep, 1.0);
    /// assert!((f.p_flip - 0.5).abs() < 1e-12);
    /// ```
    pub fn from_rates_by(
        alpha: f64,
        beta: f64,
        level: f64,
        rule: FlipRule,
        sizes: [f64; 2],
    ) -> Result<Self> {
        let within = Self::from_rates_within(alpha, beta, level)?;
        let (hi, lo) = (alpha.max(beta), alpha.min(beta));
        if rule == FlipRule::Midpoint || hi - lo <= level {
            return Ok(within);
        }
        let (down, up) = (within.down as usize, 1 - within.down as usize);
        let (n_down, n_up) = (sizes[down], sizes[up]);
        Ok(if n_up < n_down {
            // The lower rate rises to hi − level ≤ 1: negatives of the smaller group flipped.
            FairFlips {
                p_keep: 1.0,
                p_flip: (hi - level - lo) / (1.0 - lo),
                ..within
            }
        } else if n_down < n_up {
            // The higher rate falls to lo + level < hi: positives of the smaller group thinned.
            FairFlips {
                p_keep: (lo + level) / hi,
                p_flip: 0.0,
                ..within
            }
        } else {
            within
        })
    }

    /// The flips that bring the rates only within `level` of each other (a relaxed parity
    /// `|DD| ≤ level` on the given rates, `docs/deviations.md#decoupled-parity-level`): no flips
    /// when `|alpha − beta| ≤ level`, else the higher rate down to `m + level/2` and the lower up
    /// to `m − level/2`, `m` their midpoint. `level = 0` is [`FairFlips::from_rates`] exactly.
    pub fn from_rates_within(alpha: f64, beta: f64, level: f64) -> Result<Self> {
        if !(level.is_finite() && level >= 0.0) {
            return Err(invalid(
                "level",
                format!("must be finite and ≥ 0, got {level}"),
            ));
        }
        let exact = Self::from_rates(alpha, beta)?;
        if level == 0.0 {
            return Ok(exact);
        }
        let (hi, lo) = (alpha.max(beta), alpha.min(beta));
        if hi - lo <= level {
            return Ok(FairFlips {
                p_keep: 1.0,
                p_flip: 0.0,
                ..exact
            });
        }
        let mid = 0.5 * (hi + lo);
        let (hi_to, lo_to) = (mid + 0.5 * level, mid - 0.5 * level);
        Ok(FairFlips {
            p_keep: hi_to / hi,
            p_flip: if lo < 1.0 {
                (lo_to - lo) / (1.0 - lo)
            } else {
                0.0
            },
            ..exact
        })
    }

    /// The prediction for a row of `group` (0 or 1) whose base prediction is `base`, with the
    /// query's uniform draw `s` ∈ [0, 1) (Algorithm 1 step 3). The paper's `s ≤ p` is taken as
    /// `s < p` (the same probability for a continuous s), so that p_flip = 0 and p_keep = 1 are
    /// exactly the identity for every s ∈ [0, 1).
    pub fn decide(&self, group: u32, base: bool, s: f64) -> bool {
        if group == self.down {
            base && s < self.p_keep
        } else {
            base || s < self.p_flip
        }
    }

    /// P(Ŷ = 1 | x, a) for a row whose base prediction is `base` (for expected metrics).
    pub fn prob_positive(&self, group: u32, base: bool) -> f64 {
        match (group == self.down, base) {
            (true, true) => self.p_keep,
            (true, false) => 0.0,
            (false, true) => 1.0,
            (false, false) => self.p_flip,
        }
    }

    /// P(Ŷ = 1 | A = group) when the base classifier's positive rate in that group is
    /// `base_rate` (proof of Theorem 2 / Theorem 3).
    pub fn output_rate(&self, group: u32, base_rate: f64) -> f64 {
        base_rate * self.prob_positive(group, true)
            + (1.0 - base_rate) * self.prob_positive(group, false)
    }

    /// P(Ŷ ≠ h_a(X) | A = group): the group's term of the paper's utility U.
    pub fn change_rate(&self, group: u32, base_rate: f64) -> f64 {
        base_rate * (1.0 - self.prob_positive(group, true))
            + (1.0 - base_rate) * self.prob_positive(group, false)
    }

    /// Δ_SP and U of the flipped classifier when the base classifiers' true rates are
    /// `alpha`, `beta` (for Algorithm 1, equal to the flips' own rates: Δ_SP = 0, U = |α − β|).
    pub fn gap_and_changes(&self, alpha: f64, beta: f64) -> (f64, f64) {
        let gap = (self.output_rate(0, alpha) - self.output_rate(1, beta)).abs();
        (gap, self.change_rate(0, alpha) + self.change_rate(1, beta))
    }
}

/// err*(h₀, h₁) of eq. (1) in closed form (derived from Proposition 1): the fewest changes any
/// (randomized) classifier needs to reach a statistical-parity gap `gap` from base rates α, β,
/// max(0, |α − β| − gap) (Proposition 1's bound, attained by thinning one group's positives).
pub fn min_changes(alpha: f64, beta: f64, gap: f64) -> f64 {
    ((alpha - beta).abs() - gap).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example() {
        // Exact rates.
        let f = FairFlips::from_rates(0.4, 0.2).unwrap();
        assert_eq!(f.down, 0);
        assert!((f.p_keep - 0.75).abs() < 1e-12 && (f.p_flip - 0.125).abs() < 1e-12);
        let (gap, u) = f.gap_and_changes(0.4, 0.2);
        assert!(gap < 1e-12 && (u - 0.2).abs() < 1e-12);
        assert!((f.output_rate(0, 0.4) - 0.3).abs() < 1e-12);
        // Noisy rates 0.42 / 0.19 applied to true rates 0.4 / 0.2.
        let f = FairFlips::from_rates(0.42, 0.19).unwrap();
        assert!((f.p_keep - 0.726190).abs() < 1e-6, "{}", f.p_keep);
        assert!((f.p_flip - 0.141975).abs() < 1e-6, "{}", f.p_flip);
        assert!((f.output_rate(0, 0.4) - 0.290476).abs() < 1e-6);
        assert!((f.output_rate(1, 0.2) - 0.313580).abs() < 1e-6);
        let (gap, u) = f.gap_and_changes(0.4, 0.2);
        assert!((gap - 0.023104).abs() < 1e-6 && (u - 0.223104).abs() < 1e-6);
        let err = min_changes(0.4, 0.2, gap);
        assert!((err - 0.176896).abs() < 1e-6);
        assert!(u - err <= 2.5 * 0.03 && (u - err - 0.046208).abs() < 1e-6);
    }

    #[test]
    fn degenerate_rates_are_the_identity() {
        for r in [0.0, 0.3, 1.0] {
            let f = FairFlips::from_rates(r, r).unwrap();
            assert_eq!((f.p_keep, f.p_flip), (1.0, 0.0), "rate {r}");
            for g in 0..2 {
                for b in [false, true] {
                    for s in [0.0, 0.5, 0.999_999] {
                        assert_eq!(f.decide(g, b, s), b);
                    }
                }
            }
        }
        // hi = 1 with lo < 1 and lo = 0 are regular cases without NaN.
        let f = FairFlips::from_rates(0.0, 1.0).unwrap();
        assert_eq!((f.down, f.p_keep, f.p_flip), (1, 0.5, 0.5));
        assert!(FairFlips::from_rates(1.2, 0.5).is_err());
        assert!(FairFlips::from_rates(0.5, f64::NAN).is_err());
    }

    /// The positive rates after the flips, per group.
    fn rates_after(f: &FairFlips) -> [f64; 2] {
        let after = |a: u32, rate: f64| {
            if a == f.down {
                rate * f.p_keep
            } else {
                rate + (1.0 - rate) * f.p_flip
            }
        };
        [after(0, f.alpha), after(1, f.beta)]
    }

    #[test]
    fn fewest_changes_moves_only_the_smaller_group_to_the_level() {
        // Rates 0.95 / 0.70, level 0.1: the smaller group alone moves, by 0.15, to 0.85 or 0.80.
        for (sizes, want) in [
            ([900.0, 100.0], [0.95, 0.85]),
            ([100.0, 900.0], [0.80, 0.70]),
        ] {
            let f =
                FairFlips::from_rates_by(0.95, 0.70, 0.1, FlipRule::FewestChanges, sizes).unwrap();
            let got = rates_after(&f);
            assert!(
                (got[0] - want[0]).abs() < 1e-12 && (got[1] - want[1]).abs() < 1e-12,
                "{got:?}"
            );
        }
        // Equal sizes, rates already within the level, or the midpoint rule: Algorithm 1.
        let mid = FairFlips::from_rates_within(0.95, 0.70, 0.1).unwrap();
        for (rule, sizes) in [
            (FlipRule::FewestChanges, [500.0, 500.0]),
            (FlipRule::Midpoint, [900.0, 100.0]),
        ] {
            assert_eq!(
                FairFlips::from_rates_by(0.95, 0.70, 0.1, rule, sizes).unwrap(),
                mid
            );
        }
        let near =
            FairFlips::from_rates_by(0.75, 0.70, 0.1, FlipRule::FewestChanges, [9.0, 1.0]).unwrap();
        assert_eq!((near.p_keep, near.p_flip), (1.0, 0.0));
    }

    #[test]
    fn fewest_changes_meets_the_level_and_changes_no_more_than_the_midpoint() {
        // Over a grid of rates, levels and sizes: the rates after the flips are within the level,
        // the probabilities are probabilities, and the expected number of changed decisions,
        // n_a·|rate change of a| summed, is at most the midpoint rule's.
        let grid = [0.0, 0.05, 0.3, 0.5, 0.77, 0.99, 1.0];
        for &a in &grid {
            for &b in &grid {
                for level in [0.0, 0.02, 0.1, 0.3] {
                    for sizes in [[10.0, 1000.0], [1000.0, 10.0], [5.0, 5.0]] {
                        let by = |rule| FairFlips::from_rates_by(a, b, level, rule, sizes).unwrap();
                        let (few, mid) = (by(FlipRule::FewestChanges), by(FlipRule::Midpoint));
                        let after = rates_after(&few);
                        assert!(
                            (after[0] - after[1]).abs() <= level + 1e-12,
                            "{a} {b} {level}"
                        );
                        assert!(
                            (0.0..=1.0).contains(&few.p_keep) && (0.0..=1.0).contains(&few.p_flip)
                        );
                        let changed = |f: &FairFlips| {
                            let r = rates_after(f);
                            sizes[0] * (r[0] - a).abs() + sizes[1] * (r[1] - b).abs()
                        };
                        assert!(
                            changed(&few) <= changed(&mid) + 1e-9,
                            "{a} {b} {level} {sizes:?}"
                        );
                    }
                }
            }
        }
    }
}
