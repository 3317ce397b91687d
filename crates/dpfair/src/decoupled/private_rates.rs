//! Steps 1–3 of Algorithm 2: the group positive rates of the base classifiers on the
//! post-processing split D, released with Laplace noise and clamped to [0, 1].
//!
//! Two ways, both through the privacy crate's [`Laplace`] mechanism (it charges the ledger before
//! drawing):
//!
//! * [`RateRelease::PublicCounts`] (the paper's): the group sizes n₀, n₁ of D are public, and
//!   ᾱ = (1/n₀) Σ_{A_i=0} h₀(X_i), β̄ likewise, get Lap(1/(n_a ε_a)) each (sensitivity 1/n_a for
//!   the replacement of a record by another of the same group; `docs/deviations.md#decoupled-neighbours-of-the-laplace-step`).
//! * [`RateRelease::Histogram`] (strict default): the 2 × 2 table of counts (group × base
//!   prediction) is released at once with Laplace noise of ℓ1 sensitivity 2 (replacing one
//!   record, of any group, moves one unit between two cells), and α̃ = c̃₀₁/(c̃₀₀ + c̃₀₁),
//!   β̃ = c̃₁₁/(c̃₁₀ + c̃₁₁), clamped. This covers what the paper assumes public (the group
//!   counts) and any change of group.

use super::error::{DecoupledError, Result, invalid};
use crate::accumulate::CountTable;
use dpfair_privacy::mechanisms::Laplace;
use dpfair_privacy::{Ledger, Noise, Relation};
use serde::{Deserialize, Serialize};

/// How the two group rates are released (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RateRelease {
    /// Lap(1/(n_a ε_a)) on each rate, group counts public (the paper's ε₀, ε₁).
    PublicCounts { epsilon0: f64, epsilon1: f64 },
    /// One Laplace release of the 2 × 2 count table, ℓ1 sensitivity 2, at `epsilon`.
    Histogram { epsilon: f64 },
}

impl RateRelease {
    /// Total ε of the release.
    pub fn epsilon(&self) -> f64 {
        match *self {
            RateRelease::PublicCounts { epsilon0, epsilon1 } => epsilon0 + epsilon1,
            RateRelease::Histogram { epsilon } => epsilon,
        }
    }

    fn validate(&self) -> Result<()> {
        let check = |name: &'static str, e: f64| {
            if e.is_finite() && e > 0.0 {
                Ok(())
            } else {
                Err(invalid(name, format!("must be finite and > 0, got {e}")))
            }
        };
        match *self {
            RateRelease::PublicCounts { epsilon0, epsilon1 } => {
                check("epsilon0", epsilon0)?;
                check("epsilon1", epsilon1)
            }
            RateRelease::Histogram { epsilon } => check("rate_epsilon", epsilon),
        }
    }
}

/// The released rates and what produced them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReleasedRates {
    /// α̃ ∈ [0, 1] (group 0).
    pub alpha: f64,
    /// β̃ ∈ [0, 1] (group 1).
    pub beta: f64,
    /// Laplace scale on each rate (PublicCounts: 1/(n_a ε_a)) or on each count (Histogram).
    pub scales: [f64; 2],
    pub release: RateRelease,
    /// The group sizes of D as released (Histogram: each group's noisy counts, negatives
    /// clamped to 0, summed) or public by assumption (PublicCounts): what the fewest-changes
    /// flips compare (`super::FlipRule`). Absent (0, 0) in model files written before.
    #[serde(default)]
    pub group_sizes: [f64; 2],
    /// Per group: its rate fell back to 1/2 because the released counts of the group sum to
    /// ≤ 0 (Histogram: decided from the noisy counts), or because the group has no rows in D
    /// (PublicCounts, where the paper takes group sizes as public).
    #[serde(default)]
    pub fallback: [bool; 2],
}

/// The rate of a group whose fallback applies: 1/2, where the flips change least on average.
pub const FALLBACK_RATE: f64 = 0.5;

/// Algorithm 2 steps 1–3's sufficient statistic, mergeable ([`crate::accumulate`]): the exact
/// 2 × 2 table of counts (group × base prediction) of the rows of D seen so far. Any split of
/// D, accumulated and merged in any order, gives the same table; [`RateCounts::finalize`]
/// releases it once.
///
/// ```
/// use dpfair::decoupled::private_rates::{RateCounts, RateRelease};
/// use dpfair_privacy::{Budget, Ledger, Noise};
/// let (mut a, mut b) = (RateCounts::new(), RateCounts::new());
/// a.update(&[0, 1], &[true, false]).unwrap();
/// b.update(&[1], &[true]).unwrap();
/// a.merge(&b);
/// assert_eq!(a.table(), [[0, 1], [1, 1]]);
/// let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
/// let how = RateRelease::Histogram { epsilon: 1.0 };
/// let rates = a.finalize(how, &mut ledger, &mut Noise::seeded(1)).unwrap();
/// assert!((0.0..=1.0).contains(&rates.alpha));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateCounts {
    table: CountTable,
}

impl Default for RateCounts {
    fn default() -> Self {
        RateCounts::new()
    }
}

impl RateCounts {
    /// No rows yet.
    pub fn new() -> Self {
        RateCounts {
            table: CountTable::new(4),
        }
    }

    /// Count rows with group codes `groups` (0 or 1) and base predictions `base`. Errors name
    /// the first bad row of the batch; the batch is then not counted.
    pub fn update(&mut self, groups: &[u32], base: &[bool]) -> Result<()> {
        if groups.len() != base.len() {
            return Err(DecoupledError::InvalidData(format!(
                "{} group codes for {} predictions",
                groups.len(),
                base.len()
            )));
        }
        let mut part = CountTable::new(4);
        for (i, (&g, &b)) in groups.iter().zip(base).enumerate() {
            if g > 1 {
                return Err(DecoupledError::InvalidData(format!(
                    "row {i} has group code {g}; the method needs exactly two groups"
                )));
            }
            part.add(2 * g as usize + usize::from(b))
                .expect("cell in range: group checked");
        }
        self.table.merge(&part).expect("same shape");
        Ok(())
    }

    /// Add another part's counts.
    pub fn merge(&mut self, other: &RateCounts) {
        self.table.merge(&other.table).expect("both 2 × 2");
    }

    /// The exact table `counts[a][b]`: rows of group a whose base prediction is b.
    pub fn table(&self) -> [[usize; 2]; 2] {
        let c = self.table.counts();
        [[c[0], c[1]], [c[2], c[3]]].map(|row| row.map(|v| v as usize))
    }

    /// Algorithm 2 steps 1–3: release α̃, β̃ from the counts as `how` says, charging `ledger`
    /// (module doc).
    pub fn finalize(
        &self,
        how: RateRelease,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<ReleasedRates> {
        how.validate()?;
        let c = self.table();
        match how {
            RateRelease::PublicCounts { epsilon0, epsilon1 } => {
                let mut rates = [0.0; 2];
                let mut scales = [0.0; 2];
                let mut fallback = [false; 2];
                for (a, eps) in [epsilon0, epsilon1].into_iter().enumerate() {
                    let n = c[a][0] + c[a][1];
                    // An empty group still gets its release (at n = 1), so that the ledger has the
                    // same entries whatever the group sizes; its rate is then the fallback.
                    let mech = Laplace::from_epsilon(1.0 / n.max(1) as f64, eps)?;
                    scales[a] = mech.scale();
                    let label = format!("group positive rate, a = {a} (Algorithm 2, n_{a} public)");
                    let rate = c[a][1] as f64 / n.max(1) as f64;
                    let noisy = mech.release(ledger, noise, &label, rate)?;
                    fallback[a] = n == 0;
                    rates[a] = if fallback[a] {
                        FALLBACK_RATE
                    } else {
                        noisy.clamp(0.0, 1.0)
                    };
                }
                Ok(ReleasedRates {
                    alpha: rates[0],
                    beta: rates[1],
                    scales,
                    release: how,
                    group_sizes: [0, 1].map(|a| (c[a][0] + c[a][1]) as f64),
                    fallback,
                })
            }
            RateRelease::Histogram { epsilon } => {
                let mech =
                    Laplace::from_epsilon(2.0, epsilon)?.with_relation(Relation::Substitution);
                let values = [c[0][0], c[0][1], c[1][0], c[1][1]].map(|v| v as f64);
                let noisy = mech.release_vec(
                    ledger,
                    noise,
                    "group × base-prediction counts (Algorithm 2 rates, counts private)",
                    &values,
                )?;
                // A group whose noisy counts sum to ≤ 0 is empty as far as the release can tell.
                let rate = |neg: f64, pos: f64| {
                    let pos = pos.max(0.0);
                    let n = neg.max(0.0) + pos;
                    if n > 0.0 {
                        ((pos / n).clamp(0.0, 1.0), false)
                    } else {
                        (FALLBACK_RATE, true)
                    }
                };
                let (alpha, fall0) = rate(noisy[0], noisy[1]);
                let (beta, fall1) = rate(noisy[2], noisy[3]);
                Ok(ReleasedRates {
                    alpha,
                    beta,
                    scales: [mech.scale(); 2],
                    release: how,
                    group_sizes: [
                        noisy[0].max(0.0) + noisy[1].max(0.0),
                        noisy[2].max(0.0) + noisy[3].max(0.0),
                    ],
                    fallback: [fall0, fall1],
                })
            }
        }
    }
}

/// The 2 × 2 table `counts[a][b]`: rows of group a whose base prediction is b.
pub fn count_table(groups: &[u32], base: &[bool]) -> Result<[[usize; 2]; 2]> {
    let mut counts = RateCounts::new();
    counts.update(groups, base)?;
    Ok(counts.table())
}

/// Algorithm 2 steps 1–3: release α̃, β̃ from the base predictions `base` of the rows of D with
/// groups `groups`, charging `ledger` (module doc): one [`RateCounts`] updated and finalized.
pub fn release_rates(
    how: RateRelease,
    groups: &[u32],
    base: &[bool],
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<ReleasedRates> {
    how.validate()?;
    let mut counts = RateCounts::new();
    counts.update(groups, base)?;
    counts.finalize(how, ledger, noise)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpfair_privacy::Budget;

    #[test]
    fn public_counts_charge_epsilon0_plus_epsilon1_with_the_papers_scales() {
        let groups: Vec<u32> = (0..300).map(|i| u32::from(i >= 100)).collect();
        let base: Vec<bool> = (0..300).map(|i| i % 4 == 0).collect();
        let mut ledger = Ledger::new(Budget::pure(0.3).unwrap());
        let how = RateRelease::PublicCounts {
            epsilon0: 0.1,
            epsilon1: 0.2,
        };
        let r = release_rates(how, &groups, &base, &mut ledger, &mut Noise::seeded(1)).unwrap();
        assert_eq!(ledger.entries().len(), 2);
        assert!((ledger.total().unwrap().epsilon - 0.3).abs() < 1e-9);
        // Scales 1/(n_a ε_a) up to the lattice rounding of the sensitivity.
        assert!((r.scales[0] / (1.0 / (100.0 * 0.1)) - 1.0).abs() < 1e-6);
        assert!((r.scales[1] / (1.0 / (200.0 * 0.2)) - 1.0).abs() < 1e-6);
        assert!((0.0..=1.0).contains(&r.alpha) && (0.0..=1.0).contains(&r.beta));
        // A second release would exceed the budget: refused before any draw.
        assert!(release_rates(how, &groups, &base, &mut ledger, &mut Noise::seeded(2)).is_err());
    }

    #[test]
    fn histogram_release_estimates_the_rates_and_charges_one_entry() {
        // 2,000 rows per group, rates 0.25 and 0.5; counts noise Lap(2/ε) with ε = 1: the rate
        // error is about √2·2/2000 ≈ 0.0014 per group; 0.01 is 7 of those.
        let groups: Vec<u32> = (0..4000).map(|i| u32::from(i >= 2000)).collect();
        let base: Vec<bool> = (0..4000)
            .map(|i| if i < 2000 { i % 4 == 0 } else { i % 2 == 0 })
            .collect();
        let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
        let r = release_rates(
            RateRelease::Histogram { epsilon: 1.0 },
            &groups,
            &base,
            &mut ledger,
            &mut Noise::seeded(3),
        )
        .unwrap();
        assert_eq!(ledger.entries().len(), 1);
        assert!(
            (r.alpha - 0.25).abs() < 0.01 && (r.beta - 0.5).abs() < 0.01,
            "{r:?}"
        );
    }

    #[test]
    fn bad_input_is_named() {
        let mut ledger = Ledger::unlimited();
        let e = release_rates(
            RateRelease::Histogram { epsilon: 0.0 },
            &[0, 1],
            &[true, false],
            &mut ledger,
            &mut Noise::seeded(1),
        )
        .unwrap_err();
        assert!(e.to_string().contains("rate_epsilon"), "{e}");
        let e = count_table(&[0, 2], &[true, false]).unwrap_err();
        assert!(e.to_string().contains("row 1"), "{e}");
    }

    #[test]
    fn an_empty_group_falls_back_with_the_same_ledger_entries() {
        // Group 1 empty (left) and with one row (right): both run, with equal ledger entries.
        let run = |groups: &[u32], how: RateRelease| {
            let mut ledger = Ledger::unlimited();
            let base = vec![true; groups.len()];
            let r = release_rates(how, groups, &base, &mut ledger, &mut Noise::seeded(1)).unwrap();
            let labels: Vec<String> = ledger.entries().iter().map(|e| e.label.clone()).collect();
            (r, labels, ledger.total().unwrap().epsilon)
        };
        let public = RateRelease::PublicCounts {
            epsilon0: 1.0,
            epsilon1: 1.0,
        };
        let (empty, l0, e0) = run(&[0, 0, 0], public);
        let (one, l1, e1) = run(&[0, 0, 1], public);
        assert_eq!((l0, e0), (l1, e1));
        assert_eq!(empty.fallback, [false, true]);
        assert_eq!(empty.beta, FALLBACK_RATE);
        assert_eq!(one.fallback, [false, false]);
        // Histogram: the fallback is decided from the noisy counts only. Counts (0, 0) for
        // group 1 fall back when both noisy counts are ≤ 0: probability ≥ 1/4 (symmetric,
        // independent noise), so 40 seeds miss it with probability ≤ (3/4)^40 < 1e-5.
        let hist = RateRelease::Histogram { epsilon: 1.0 };
        let fell = (0..40).any(|seed| {
            let mut ledger = Ledger::unlimited();
            release_rates(
                hist,
                &[0, 0, 0],
                &[true, false, true],
                &mut ledger,
                &mut Noise::seeded(seed),
            )
            .unwrap()
            .fallback[1]
        });
        assert!(fell);
    }

    /// Random parts of D, accumulated separately and merged in random orders, give the one-pass
    /// table bit for bit and, with the same noise stream, the same released rates.
    #[test]
    fn parts_merged_in_any_order_give_the_one_pass_rates() {
        use crate::accumulate::testing::{merge_randomly, random_parts};
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let n = 1_000;
        let groups: Vec<u32> = (0..n).map(|_| rng.random_range(0..2)).collect();
        let base: Vec<bool> = (0..n).map(|_| rng.random_bool(0.3)).collect();
        let how = RateRelease::Histogram { epsilon: 0.5 };
        let release = |c: &RateCounts| {
            let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
            c.finalize(how, &mut ledger, &mut Noise::seeded(5)).unwrap()
        };
        let mut one = RateCounts::new();
        one.update(&groups, &base).unwrap();
        let reference = release(&one);
        for parts in [1, 3, 8] {
            let accumulated: Vec<RateCounts> = random_parts(n, parts, &mut rng)
                .into_iter()
                .map(|rows| {
                    let mut c = RateCounts::new();
                    let g: Vec<u32> = rows.iter().map(|&i| groups[i]).collect();
                    let b: Vec<bool> = rows.iter().map(|&i| base[i]).collect();
                    c.update(&g, &b).unwrap();
                    c
                })
                .collect();
            let merged = merge_randomly(accumulated, &mut rng, |a, b| a.merge(&b));
            assert_eq!(merged.table(), one.table(), "{parts} parts");
            assert_eq!(release(&merged), reference, "{parts} parts");
        }
    }
}
