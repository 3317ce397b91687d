//! The DD curve, the threshold `τ̃` and the output classifier (eq. 2–4, Algorithm 5 S2 and
//! OUTPUT; Algorithm 1 OUTPUT).
//!
//! Scores (Algorithms 3 and 5): `z = 2(2a−1) π̃_a (η̃_a(x) − 1/2) ∈ [−1, 1]`. The group thresholds
//! `T_a(τ) = 1/2 + τ(2a−1)/(2π̃_a)` become: group 1 is positive iff `z ≥ τ`, group 0 iff `z ≤ τ`.
//! On calibration data
//! `D̃D(τ) = #{z¹ ≥ τ}/ň_1 − #{z⁰ ≤ τ}/ň_0 + w̌`, a non-increasing step function (Lemma 12).
//!
//! **Ties (`docs/deviations.md#fdp-fair-ties-in-dd`).** Where the crossing of `±α` falls inside a jump (many equal scores, e.g. `η̃`
//! clipped to 0 or 1, or integer features), the classifier randomises on the tied points so that
//! the calibration curve hits `±α` exactly: [`GroupRule::tie_positive`] holds, per group, the
//! probability that a point with `z = τ` is classified positive. Read `(τ, tie)` as a point on
//! the lexicographic axis in which each jump is an interval; the curve is still non-increasing
//! there, so the paper's Prop. 4 argument (half-lines `{τ̃ ≤ t}` through monotonicity) applies
//! unchanged. Without ties the randomisation never triggers (measure zero).
//!
//! **Private choice (strict CDP-Fair S2).** [`tau_grid`] and [`crossing_utility`] give the
//! candidates and the utility of an exponential-mechanism choice of `τ̃` that is DP for every
//! event, not only for the half-lines `{τ̃ ≤ t}` the shift-and-sweep covers (`docs/deviations.md#fdp-fair-privacy-of-the-threshold-release`).

use serde::{Deserialize, Serialize};

/// `z = 2(2a−1) π_a (η − 1/2)`: the score the thresholds act on (Alg. 3's `Z`).
pub fn score(a: usize, eta: f64, pi: f64) -> f64 {
    let sign = if a == 1 { 1.0 } else { -1.0 };
    2.0 * sign * pi * (eta - 0.5)
}

/// Which side of zero `τ̃` lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// `|D̃D(0)| ≤ α`: `τ̃ = 0` (automatically fair).
    Zero,
    /// `D̃D(0) > α`: `τ̃ > 0`, crossing of `+α`.
    Positive,
    /// `D̃D(0) < −α`: `τ̃ < 0`, crossing of `−α`.
    Negative,
}

/// The fitted threshold: `τ` and the probability that a tied point (`z = τ`) of group `a` is
/// classified positive (`tie_positive[a]`). The paper's rule `1{η̃_a ≥ T_a(τ)}` is
/// `tie_positive = [1, 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupRule {
    pub tau: f64,
    pub tie_positive: [f64; 2],
    /// A second threshold used with probability `weight` instead of `τ` (FDP-Fair's randomised
    /// straddle, `docs/deviations.md#fdp-fair-randomised-straddle`); `None`: one threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<RuleMix>,
}

/// The second threshold of a [`GroupRule`] (the paper's deterministic rule at `tau`) and the
/// probability `weight ∈ [0, 1]` with which a prediction uses it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleMix {
    pub tau: f64,
    pub weight: f64,
}

impl GroupRule {
    /// The paper's deterministic rule at `τ` (`≥` for both groups, `docs/deviations.md#fdp-fair-ties-in-dd`).
    pub fn paper(tau: f64) -> Self {
        GroupRule {
            tau,
            tie_positive: [1.0, 1.0],
            mix: None,
        }
    }

    /// The paper's rule at `τ` with probability `1 − weight` and at `other` with probability
    /// `weight`: its expected disparity is the same mixture of the two rules' disparities.
    ///
    /// ```
    /// use dpfair::plugin::threshold::GroupRule;
    /// let r = GroupRule::mixed(0.0, 0.5, 0.25);
    /// assert_eq!(r.positive_prob(1, 0.2), 0.75); // above 0, below 0.5: positive at τ = 0 only
    /// assert_eq!(r.positive_prob(1, 0.6), 1.0);
    /// ```
    pub fn mixed(tau: f64, other: f64, weight: f64) -> Self {
        GroupRule {
            mix: Some(RuleMix {
                tau: other,
                weight: weight.clamp(0.0, 1.0),
            }),
            ..GroupRule::paper(tau)
        }
    }

    /// `P(Ŷ = 1 | score z, group a)`.
    pub fn positive_prob(&self, a: usize, z: f64) -> f64 {
        let own = threshold_prob(self.tau, self.tie_positive[a], a, z);
        match self.mix {
            None => own,
            Some(m) => (1.0 - m.weight) * own + m.weight * threshold_prob(m.tau, 1.0, a, z),
        }
    }
}

/// `P(Ŷ = 1)` of one threshold `τ` at score `z` of group `a`: group 1 positive iff `z ≥ τ`, group
/// 0 iff `z ≤ τ`, a tie positive with probability `tie`.
fn threshold_prob(tau: f64, tie: f64, a: usize, z: f64) -> f64 {
    let (above, below) = if a == 1 { (1.0, 0.0) } else { (0.0, 1.0) };
    if z > tau {
        above
    } else if z < tau {
        below
    } else {
        tie
    }
}

/// Calibration scores of both groups, sorted, with the denominators of the DD curve.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreSet {
    /// `z⁰`, `z¹` sorted ascending.
    z: [Vec<f64>; 2],
    /// Denominators `(ň_0, ň_1)` (or their public floors, see [`crate::cdp_fair`]).
    denom: [f64; 2],
}

impl ScoreSet {
    /// From unsorted scores and the DD denominators. NaN scores are not allowed (callers build
    /// them from clipped `η̃`).
    pub fn new(mut z0: Vec<f64>, mut z1: Vec<f64>, denom: [f64; 2]) -> Self {
        z0.sort_unstable_by(f64::total_cmp);
        z1.sort_unstable_by(f64::total_cmp);
        ScoreSet { z: [z0, z1], denom }
    }

    pub fn len(&self, a: usize) -> usize {
        self.z[a].len()
    }

    /// `#{z^a < t}`, `#{z^a = t}`.
    fn below_equal(&self, a: usize, t: f64) -> (usize, usize) {
        let v = &self.z[a];
        let lo = v.partition_point(|&x| x < t);
        let hi = v.partition_point(|&x| x <= t);
        (lo, hi - lo)
    }

    /// The DD curve at `t` without noise, with ties of group `a` counted positive with
    /// probability `tie[a]`: `(#{z¹ > t} + tie₁ #{z¹ = t})/ň_1 − (#{z⁰ < t} + tie₀ #{z⁰ = t})/ň_0`.
    pub fn dd(&self, t: f64, tie: [f64; 2]) -> f64 {
        let (lo1, eq1) = self.below_equal(1, t);
        let gt1 = self.z[1].len() - lo1 - eq1;
        let (lo0, eq0) = self.below_equal(0, t);
        (gt1 as f64 + tie[1] * eq1 as f64) / self.denom[1]
            - (lo0 as f64 + tie[0] * eq0 as f64) / self.denom[0]
    }

    /// The DD curve at `t` under `rule`'s tie probabilities.
    pub fn dd_rule(&self, rule: &GroupRule) -> f64 {
        self.dd(rule.tau, rule.tie_positive)
    }

    /// Distinct breakpoints `≥ 0` ascending (`positive`) or `≤ 0` descending.
    fn breakpoints(&self, positive: bool) -> Vec<f64> {
        let mut b: Vec<f64> = self.z[0]
            .iter()
            .chain(&self.z[1])
            .copied()
            .filter(|&x| if positive { x >= 0.0 } else { x <= 0.0 })
            .collect();
        b.sort_unstable_by(f64::total_cmp);
        b.dedup();
        if !positive {
            b.reverse();
        }
        b
    }
}

/// Result of [`sweep_threshold`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sweep {
    pub rule: GroupRule,
    pub side: Side,
    /// `false` when the shifted curve never reaches `±α` (only when `|w̌| > 1 − α`-ish): the
    /// extreme breakpoint is returned.
    pub feasible: bool,
}

/// Exact `τ̃ = argmin_τ { |τ| : |D̂D(τ) + shift| ≤ α }` by one sort-and-sweep over the breakpoints
/// (the exact computation of Algorithm 5's τ̃, `O(ň log ň)`), with the tie randomisation of the module
/// docs. `shift = w̌` for Algorithm 5 S2, `0` for the non-private post-processing (fairness-only
/// baseline, fair Bayes oracle on population scores).
pub fn sweep_threshold(scores: &ScoreSet, shift: f64, alpha: f64) -> Sweep {
    let v0 = scores.dd(0.0, [1.0, 1.0]) + shift;
    if v0.abs() <= alpha {
        return Sweep {
            rule: GroupRule::paper(0.0),
            side: Side::Zero,
            feasible: true,
        };
    }
    let positive = v0 > alpha;
    let target = if positive { alpha } else { -alpha };
    let mut last = GroupRule::paper(0.0);
    for b in scores.breakpoints(positive) {
        // Tie configurations on either side of the jump at b: (tie₀, tie₁).
        // Positive side: before the jump (smaller τ) ties of group 1 are positive, of group 0
        // negative (except at 0, where the paper's start has both positive); after it the reverse.
        // Negative side: mirror image.
        let at_zero = b == 0.0;
        let inner = if at_zero {
            [1.0, 1.0]
        } else if positive {
            [0.0, 1.0]
        } else {
            [1.0, 0.0]
        };
        let outer = if positive { [1.0, 0.0] } else { [0.0, 1.0] };
        let v_inner = scores.dd(b, inner) + shift;
        let v_outer = scores.dd(b, outer) + shift;
        let reached = if positive {
            v_outer <= target
        } else {
            v_outer >= target
        };
        if reached {
            // Interpolate: weight q on the outer configuration hits the target exactly.
            let q = if v_outer == v_inner {
                1.0
            } else {
                ((target - v_inner) / (v_outer - v_inner)).clamp(0.0, 1.0)
            };
            let tie = [
                q * outer[0] + (1.0 - q) * inner[0],
                q * outer[1] + (1.0 - q) * inner[1],
            ];
            return Sweep {
                rule: GroupRule {
                    tau: b,
                    tie_positive: tie,
                    mix: None,
                },
                side: if positive {
                    Side::Positive
                } else {
                    Side::Negative
                },
                feasible: true,
            };
        }
        last = GroupRule {
            tau: b,
            tie_positive: outer,
            mix: None,
        };
    }
    Sweep {
        rule: last,
        side: if positive {
            Side::Positive
        } else {
            Side::Negative
        },
        feasible: false,
    }
}

/// The public candidate thresholds of strict S2: `points` values equally spaced on
/// `[−bound, bound]` (`points` odd, so `τ = 0` is a candidate). With `bound = max(π̃_0, π̃_1)`
/// (S1's output, public to S2) the grid covers every τ where the DD curve can move: the scores
/// satisfy `|z| ≤ π̃_a`, so the curve is constant (±1) beyond it.
pub fn tau_grid(bound: f64, points: usize) -> Vec<f64> {
    let half = (points / 2).max(1);
    (0..=2 * half)
        .map(|j| bound * (j as f64 - half as f64) / half as f64)
        .collect()
}

/// Utility of the candidate `τ` in the private selection of strict S2 (exponential mechanism):
/// `u(τ) = −|D̂D(τ) − α·sgn(τ)|` for `τ ≠ 0` and `u(0) = −dist(D̂D(0), [−α, α])`, with `D̂D` the
/// paper-rule curve (`≥` for both groups, `docs/deviations.md#fdp-fair-ties-in-dd`).
///
/// `h(τ) = D̂D(τ) − α·sgn(τ)` is non-increasing (Lemma 12 and the jump of `−α·sgn` at 0) and its
/// zero crossing is exactly Algorithm 5's target `τ* = argmin{|τ| : |D̂D(τ)| ≤ α}`: 0 when
/// `|D̂D(0)| ≤ α`, else the crossing of `+α` (τ > 0) or `−α` (τ < 0). So `u` peaks at the
/// paper's `τ̃` (without the shift `w̌`). One record moves `D̂D(τ)` by at most the curve's
/// sensitivity Δ at every τ, hence `u` by at most Δ: the selection is ε-DP for **every** event
/// (McSherry & Talwar 2007), not only for the half-lines of the paper's Prop. 4 (`docs/deviations.md#fdp-fair-privacy-of-the-threshold-release`).
pub fn crossing_utility(scores: &ScoreSet, tau: f64, alpha: f64) -> f64 {
    crossing_utility_at(scores.dd(tau, [1.0, 1.0]), tau, alpha)
}

/// [`crossing_utility`] from the curve's value `g = D̂D(τ)` at `τ` (e.g. from the counts on
/// the grid, [`crate::cdp_fair::GridCounts::dd_on_grid`]).
pub fn crossing_utility_at(g: f64, tau: f64, alpha: f64) -> f64 {
    if tau > 0.0 {
        -(g - alpha).abs()
    } else if tau < 0.0 {
        -(g + alpha).abs()
    } else {
        -(g.abs() - alpha).max(0.0)
    }
}

/// The side of a threshold (`Zero` for `τ = 0`).
pub fn side_of(tau: f64) -> Side {
    if tau > 0.0 {
        Side::Positive
    } else if tau < 0.0 {
        Side::Negative
    } else {
        Side::Zero
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    fn uniform(rng: &mut ChaCha20Rng) -> f64 {
        (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Brute force: scan a fine grid of τ (paper rule, no ties) for the smallest |τ| that is fair.
    fn brute(scores: &ScoreSet, shift: f64, alpha: f64) -> f64 {
        let fair = |t: f64| (scores.dd(t, [1.0, 1.0]) + shift).abs() <= alpha + 1e-12;
        if fair(0.0) {
            return 0.0;
        }
        let mut best = f64::INFINITY;
        for k in 1..=200_000 {
            let t = k as f64 * 1e-5;
            for s in [t, -t] {
                if fair(s) && s.abs() < best.abs() {
                    best = s;
                }
            }
            if best.is_finite() {
                break;
            }
        }
        best
    }

    #[test]
    fn sweep_hits_the_target_exactly_and_agrees_with_brute_force() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for case in 0..60 {
            let n0 = 20 + case;
            let n1 = 15 + 2 * case;
            let z0: Vec<f64> = (0..n0).map(|_| 0.6 * uniform(&mut rng) - 0.3).collect();
            let z1: Vec<f64> = (0..n1).map(|_| 0.8 * uniform(&mut rng) - 0.5).collect();
            let s = ScoreSet::new(z0, z1, [n0 as f64, n1 as f64]);
            let shift = 0.2 * uniform(&mut rng) - 0.1;
            let alpha = 0.05 + 0.1 * uniform(&mut rng);
            let sw = sweep_threshold(&s, shift, alpha);
            assert!(sw.feasible);
            let v = s.dd_rule(&sw.rule) + shift;
            match sw.side {
                Side::Zero => assert!(v.abs() <= alpha),
                Side::Positive => assert!((v - alpha).abs() < 1e-12, "v = {v}, α = {alpha}"),
                Side::Negative => assert!((v + alpha).abs() < 1e-12, "v = {v}, α = {alpha}"),
            }
            // Continuous scores: the crossing breakpoint is the brute-force infimum (grid 1e-5).
            let b = brute(&s, shift, alpha);
            assert!(
                (sw.rule.tau - b).abs() <= 1e-5 + 1e-12,
                "sweep {} brute {b}",
                sw.rule.tau
            );
        }
    }

    #[test]
    fn dd_curve_is_non_increasing() {
        // Lemma 12: D̂D(τ) (and the shifted curve) never increase in τ.
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let z0: Vec<f64> = (0..50).map(|_| 2.0 * uniform(&mut rng) - 1.0).collect();
        let z1: Vec<f64> = (0..70).map(|_| 2.0 * uniform(&mut rng) - 1.0).collect();
        let s = ScoreSet::new(z0, z1, [50.0, 70.0]);
        let mut prev = f64::INFINITY;
        for k in -1000..=1000 {
            let v = s.dd(k as f64 / 1000.0, [1.0, 1.0]);
            assert!(v <= prev + 1e-15);
            prev = v;
        }
    }

    #[test]
    fn ties_are_randomised_to_hit_alpha() {
        // Group 1: 10 scores at exactly 0.3 and 10 at −0.5; group 0: all at 0.9.
        // D̂D = 1/2 on (0, 0.3], 0 after; α = 0.2 ⇒ τ = 0.3 with 40% of the tied points positive.
        let z1 = [vec![0.3; 10], vec![-0.5; 10]].concat();
        let s = ScoreSet::new(vec![0.9; 5], z1, [5.0, 20.0]);
        let sw = sweep_threshold(&s, 0.0, 0.2);
        assert_eq!(sw.side, Side::Positive);
        assert_eq!(sw.rule.tau, 0.3);
        assert!((sw.rule.tie_positive[1] - 0.4).abs() < 1e-12);
        assert!((s.dd_rule(&sw.rule) - 0.2).abs() < 1e-12);
        // The classifier applies the same probabilities.
        assert_eq!(sw.rule.positive_prob(1, 0.3), sw.rule.tie_positive[1]);
        assert_eq!(sw.rule.positive_prob(1, 0.31), 1.0);
        assert_eq!(sw.rule.positive_prob(0, 0.31), 0.0);
    }

    #[test]
    fn zero_side_and_sign_of_tau() {
        let s = ScoreSet::new(vec![-0.2, 0.1], vec![-0.1, 0.2], [2.0, 2.0]);
        // D̂D(0) = 1/2 − 1/2 = 0.
        assert_eq!(sweep_threshold(&s, 0.0, 0.1).side, Side::Zero);
        // A shift w̌ moves the curve: positive shift ⇒ τ̃ > 0 (a consequence of Algorithm 5's threshold rule).
        let sw = sweep_threshold(&s, 0.3, 0.1);
        assert_eq!(sw.side, Side::Positive);
        assert!(sw.rule.tau > 0.0);
        let sw = sweep_threshold(&s, -0.3, 0.1);
        assert_eq!(sw.side, Side::Negative);
        assert!(sw.rule.tau < 0.0);
        // An absurd shift cannot be met: flagged infeasible.
        assert!(!sweep_threshold(&s, 5.0, 0.1).feasible);
    }

    #[test]
    fn tau_grid_is_symmetric_and_contains_zero() {
        let g = tau_grid(0.3, 7);
        assert_eq!(g.len(), 7);
        assert_eq!(g[3], 0.0);
        assert_eq!((g[0], g[6]), (-0.3, 0.3));
        // An even count is rounded up to the next odd one.
        assert_eq!(tau_grid(0.5, 4).len(), 5);
    }

    #[test]
    fn crossing_utility_peaks_at_the_exact_sweep() {
        // u ≤ 0; it rises towards the sweep's τ̃ and falls after it (|h| of a non-increasing h),
        // its maximum lies on the sweep's side and within one jump (1/60) of 0.
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let grid = tau_grid(1.0, 4001);
        for case in 0..30 {
            let z0: Vec<f64> = (0..80).map(|_| 0.6 * uniform(&mut rng) - 0.2).collect();
            let z1: Vec<f64> = (0..60).map(|_| 0.8 * uniform(&mut rng) - 0.4).collect();
            let s = ScoreSet::new(z0, z1, [80.0, 60.0]);
            let alpha = [0.02, 0.1, 0.6][case % 3];
            let sw = sweep_threshold(&s, 0.0, alpha);
            let u: Vec<f64> = grid
                .iter()
                .map(|&t| crossing_utility(&s, t, alpha))
                .collect();
            assert!(u.iter().all(|&v| v <= 0.0));
            // h(τ) = D̂D(τ) − α sgn(τ) is non-increasing, so u = −|h| rises while h ≥ 0 and
            // falls once h ≤ 0 (on each side of 0).
            let h = |t: f64| s.dd(t, [1.0, 1.0]) - alpha * t.signum();
            for j in 1..grid.len() {
                let (a, b) = (grid[j - 1], grid[j]);
                if a == 0.0 || b == 0.0 {
                    continue;
                }
                assert!(h(b) <= h(a));
                if h(b) >= 0.0 {
                    assert!(u[j] >= u[j - 1], "case {case}: u falls at {b}");
                }
                if h(a) <= 0.0 {
                    assert!(u[j] <= u[j - 1], "case {case}: u rises at {b}");
                }
            }
            let best = (0..grid.len())
                .max_by(|&i, &j| u[i].total_cmp(&u[j]))
                .unwrap();
            assert_eq!(side_of(grid[best]), sw.side, "case {case}");
            assert!(u[best] >= -1.0 / 60.0 - 1e-12, "case {case}: {}", u[best]);
        }
    }

    #[test]
    fn score_matches_the_group_thresholds() {
        // η̃_1 ≥ 1/2 + τ/(2π̃_1) ⟺ z ≥ τ;   η̃_0 ≥ 1/2 − τ/(2π̃_0) ⟺ z ≤ τ.
        let (pi0, pi1, tau) = (0.7, 0.3, 0.12);
        for k in 0..=100 {
            let eta = k as f64 / 100.0;
            assert_eq!(
                eta >= 0.5 + tau / (2.0 * pi1),
                score(1, eta, pi1) >= tau - 1e-15
            );
            assert_eq!(
                eta >= 0.5 - tau / (2.0 * pi0),
                score(0, eta, pi0) <= tau + 1e-15
            );
        }
    }
}
