//! Score-ordered flips (`--flips scores`, the estimators' default;
//! `docs/deviations.md#decoupled-score-ordered-flips`): Algorithm 2's rates and the fewest-changes
//! targets, but the decisions a group gives up are its least confident ones, not a uniform random
//! share of them.
//!
//! **Release.** On D, the base model's score `s = P̂(Y = 1 | x, a)` of every row is binned on
//! [`SCORE_BINS`] equal bins of `[0, 1]`, and the `2 × SCORE_BINS` table of counts (group × score
//! bin) is released at once by the Laplace mechanism with ℓ1 sensitivity 2 (replacing one record
//! moves one unit between two cells): the strict 2 × 2 table of [`super::private_rates`] with
//! its prediction column refined into bins — the same mechanism, budget and relation
//! (replace-one), one ledger entry.
//!
//! **Post-processing.** From the noisy counts (clamped at 0): each group's size and its positive
//! rate at the base threshold `s ≥ 1/2`; the [`FairFlips`] of those rates under the fewest-changes
//! rule give each group's target rate; a group's target is met by a threshold on its score bins,
//! positive above the cut bin, negative below, and positive with probability `keep` inside it, so
//! that the released counts give the target rate exactly. Nothing reads the data again.

use super::error::{DecoupledError, Result};
use super::flips::{FairFlips, FlipRule};
use super::private_rates::{FALLBACK_RATE, RateRelease, ReleasedRates};
use crate::accumulate::CountTable;
use dpfair_privacy::mechanisms::Laplace;
use dpfair_privacy::{Ledger, Noise, Relation};
use serde::{Deserialize, Serialize};

/// Equal bins of the score on `[0, 1]`; the base threshold 1/2 is a bin edge.
pub const SCORE_BINS: usize = 20;

/// The bin of a score in `[0, 1]` (NaN and values outside are clamped into the end bins).
pub fn bin_of(score: f64) -> usize {
    let b = (score * SCORE_BINS as f64).floor();
    if b.is_nan() || b < 0.0 {
        0
    } else {
        (b as usize).min(SCORE_BINS - 1)
    }
}

/// The exact group × score-bin counts of the rows of D seen so far (a mergeable accumulator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoreCounts {
    table: CountTable,
}

impl Default for ScoreCounts {
    fn default() -> Self {
        ScoreCounts {
            table: CountTable::new(2 * SCORE_BINS),
        }
    }
}

impl ScoreCounts {
    /// Counts the rows of one batch: group codes (0/1) and base scores.
    pub fn update(&mut self, groups: &[u32], scores: &[f64]) -> Result<()> {
        if groups.len() != scores.len() {
            return Err(DecoupledError::InvalidData(format!(
                "{} group codes for {} scores",
                groups.len(),
                scores.len()
            )));
        }
        let mut part = CountTable::new(2 * SCORE_BINS);
        for (i, (&g, &s)) in groups.iter().zip(scores).enumerate() {
            if g > 1 {
                return Err(DecoupledError::InvalidData(format!(
                    "row {i} has group code {g}; the method needs exactly two groups"
                )));
            }
            part.add(g as usize * SCORE_BINS + bin_of(s))
                .expect("cell in range: group checked");
        }
        self.table.merge(&part).expect("same shape");
        Ok(())
    }

    /// The Laplace release of the table at `epsilon` (module docs), charged to `ledger`.
    pub fn release(
        &self,
        epsilon: f64,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<ReleasedScores> {
        let mech = Laplace::from_epsilon(2.0, epsilon)?.with_relation(Relation::Substitution);
        let values: Vec<f64> = self.table.counts().iter().map(|&c| c as f64).collect();
        let noisy = mech.release_vec(
            ledger,
            noise,
            "group × base-score-bin counts (Algorithm 2 rates by score, counts private)",
            &values,
        )?;
        let clamp = |a: usize| -> Vec<f64> {
            noisy[a * SCORE_BINS..(a + 1) * SCORE_BINS]
                .iter()
                .map(|v| v.max(0.0))
                .collect()
        };
        Ok(ReleasedScores {
            counts: [clamp(0), clamp(1)],
            scale: mech.scale(),
            epsilon,
        })
    }
}

/// The released group × score-bin counts, clamped at 0.
#[derive(Clone, Debug, PartialEq)]
pub struct ReleasedScores {
    counts: [Vec<f64>; 2],
    scale: f64,
    epsilon: f64,
}

impl ReleasedScores {
    /// The released counts (clamped at 0) of group 0's and group 1's score bins.
    pub fn counts(&self) -> &[Vec<f64>; 2] {
        &self.counts
    }

    /// The group's released size and positive rate at the base threshold `s ≥ 1/2` (the
    /// fallback rate 1/2 for a group whose counts sum to 0).
    fn rate(&self, a: usize) -> (f64, f64, bool) {
        let c = &self.counts[a];
        let n: f64 = c.iter().sum();
        let pos: f64 = c[SCORE_BINS / 2..].iter().sum();
        if n > 0.0 {
            (n, (pos / n).clamp(0.0, 1.0), false)
        } else {
            (0.0, FALLBACK_RATE, true)
        }
    }

    /// Algorithm 2's released rates (post-processing of the table), for the model's report.
    pub fn rates(&self) -> ReleasedRates {
        let (n0, alpha, f0) = self.rate(0);
        let (n1, beta, f1) = self.rate(1);
        ReleasedRates {
            alpha,
            beta,
            scales: [self.scale; 2],
            release: RateRelease::Histogram {
                epsilon: self.epsilon,
            },
            group_sizes: [n0, n1],
            fallback: [f0, f1],
        }
    }

    /// The thresholds that move each group's rate to its fewest-changes target at parity level
    /// `level` (module docs), and the flips those targets come from.
    pub fn thresholds(&self, level: f64) -> Result<(FairFlips, ScoreThresholds)> {
        let rates = self.rates();
        let flips = FairFlips::from_rates_by(
            rates.alpha,
            rates.beta,
            level,
            FlipRule::FewestChanges,
            rates.group_sizes,
        )?;
        let base = [rates.alpha, rates.beta];
        let cut = [0, 1].map(|a| {
            let target = flips.output_rate(a as u32, base[a]);
            GroupCut::for_rate(&self.counts[a], target)
        });
        Ok((flips, ScoreThresholds { cut }))
    }
}

/// One group's rule on its score bins: positive above `bin`, negative below, positive with
/// probability `keep` inside it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupCut {
    pub bin: usize,
    pub keep: f64,
}

impl GroupCut {
    /// The base rule `s ≥ 1/2`.
    pub const BASE: GroupCut = GroupCut {
        bin: SCORE_BINS / 2,
        keep: 1.0,
    };

    /// The cut whose positive share of `counts` is `rate` (the base rule when the counts are
    /// all 0): the highest bins first, the cut bin in part.
    fn for_rate(counts: &[f64], rate: f64) -> GroupCut {
        let n: f64 = counts.iter().sum();
        if n <= 0.0 {
            return GroupCut::BASE;
        }
        let want = rate.clamp(0.0, 1.0) * n;
        let mut above = 0.0;
        for bin in (0..counts.len()).rev() {
            let here = counts[bin];
            if above + here >= want {
                let keep = if here > 0.0 {
                    ((want - above) / here).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                return GroupCut { bin, keep };
            }
            above += here;
        }
        GroupCut { bin: 0, keep: 1.0 }
    }

    /// P(Ŷ = 1) for a row whose score is `score`.
    pub fn prob_positive(&self, score: f64) -> f64 {
        let b = bin_of(score);
        match b.cmp(&self.bin) {
            std::cmp::Ordering::Greater => 1.0,
            std::cmp::Ordering::Equal => self.keep,
            std::cmp::Ordering::Less => 0.0,
        }
    }
}

/// Each group's [`GroupCut`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoreThresholds {
    pub cut: [GroupCut; 2],
}

impl ScoreThresholds {
    /// P(Ŷ = 1) for a row of `group` whose base score is `score`.
    pub fn prob_positive(&self, group: u32, score: f64) -> f64 {
        self.cut[group.min(1) as usize].prob_positive(score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cut meets the target rate on the counts it was built from, exactly.
    #[test]
    fn a_cut_gives_its_rate_on_its_counts() {
        let counts: Vec<f64> = (0..SCORE_BINS).map(|b| (b % 7 + 1) as f64).collect();
        let n: f64 = counts.iter().sum();
        for rate in [0.0, 0.1, 0.37, 0.5, 0.9, 1.0] {
            let cut = GroupCut::for_rate(&counts, rate);
            let got: f64 = counts
                .iter()
                .enumerate()
                .map(|(b, c)| c * cut.prob_positive((b as f64 + 0.5) / SCORE_BINS as f64))
                .sum::<f64>()
                / n;
            assert!((got - rate).abs() < 1e-12, "{rate}: {got} ({cut:?})");
        }
    }

    /// Without noise (a huge ε), the released rates are the exact ones and the group that
    /// moves ends within the level of the other, by its least confident rows.
    #[test]
    fn the_smaller_group_moves_to_the_level_by_its_lowest_scores() {
        let mut counts = ScoreCounts::default();
        // Group 0: 300 rows, scores spread; group 1: 100 rows, mostly high scores.
        let g: Vec<u32> = (0..400).map(|i| u32::from(i >= 300)).collect();
        let s: Vec<f64> = (0..400)
            .map(|i| {
                if i < 300 {
                    i as f64 / 300.0
                } else {
                    0.4 + (i - 300) as f64 / 200.0
                }
            })
            .collect();
        counts.update(&g, &s).unwrap();
        let released = counts
            .release(1e9, &mut Ledger::unlimited(), &mut Noise::seeded(1))
            .unwrap();
        let rates = released.rates();
        assert!((rates.alpha - 0.5).abs() < 1e-6 && (rates.beta - 0.8).abs() < 1e-6);
        let (_, t) = released.thresholds(0.1).unwrap();
        // Group 1 (fewer rows) moves down to 0.6; group 0 keeps the base rule.
        assert_eq!(t.cut[0], GroupCut::BASE);
        let rate1 = s[300..].iter().map(|&v| t.prob_positive(1, v)).sum::<f64>() / 100.0;
        assert!((rate1 - 0.6).abs() < 1e-6, "{rate1}");
        // Its lowest-scored positives go first: a row at 0.5 is now negative, at 0.9 positive.
        assert_eq!(t.prob_positive(1, 0.5), 0.0);
        assert_eq!(t.prob_positive(1, 0.9), 1.0);
    }
}
