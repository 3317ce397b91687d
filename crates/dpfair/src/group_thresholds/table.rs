//! The one release of the group-thresholds classifier's post-processing: the group × label ×
//! score-bin table of counts (docs/privacy.md, "Group thresholds").
//!
//! Every row falls in exactly one cell (its group, its label, the bin of its score under the
//! released scorer), so replacing one row moves one unit between two cells (ℓ1 sensitivity 2)
//! and adding or removing one moves one unit (ℓ1 sensitivity 1). The table is released once by
//! the Laplace mechanism at that sensitivity: one ledger entry; everything after it is
//! post-processing.

use crate::accumulate::CountTable;
use crate::error::{Error, Result};
use dpfair_privacy::mechanisms::Laplace;
use dpfair_privacy::{Ledger, Noise, Relation};

/// The bin of a score in `[0, 1]` among `bins` equal bins (NaN and values outside are clamped
/// into the end bins).
///
/// ```
/// use dpfair::group_thresholds::table::bin_of;
/// assert_eq!(bin_of(0.0, 10), 0);
/// assert_eq!(bin_of(0.5, 10), 5);
/// assert_eq!(bin_of(1.0, 10), 9);
/// assert_eq!(bin_of(f64::NAN, 10), 0);
/// ```
pub fn bin_of(score: f64, bins: usize) -> usize {
    let b = (score * bins as f64).floor();
    if b.is_nan() || b < 0.0 {
        0
    } else {
        (b as usize).min(bins - 1)
    }
}

/// The exact group × label × score-bin counts (a mergeable accumulator).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupScoreCounts {
    groups: usize,
    bins: usize,
    table: CountTable,
}

impl GroupScoreCounts {
    /// An empty table of `groups` groups and `bins` score bins.
    pub fn new(groups: usize, bins: usize) -> GroupScoreCounts {
        GroupScoreCounts {
            groups,
            bins,
            table: CountTable::new(groups * 2 * bins),
        }
    }

    /// Counts one batch of rows: group codes, binary labels and scores in `[0, 1]`.
    pub fn update(&mut self, groups: &[u32], labels: &[u8], scores: &[f64]) -> Result<()> {
        if groups.len() != labels.len() || groups.len() != scores.len() {
            return Err(Error::InvalidData(format!(
                "{} group codes, {} labels and {} scores",
                groups.len(),
                labels.len(),
                scores.len()
            )));
        }
        for (i, ((&g, &y), &s)) in groups.iter().zip(labels).zip(scores).enumerate() {
            if g as usize >= self.groups || y > 1 {
                return Err(Error::InvalidData(format!(
                    "row {i}: group code {g} of {} groups, label {y}",
                    self.groups
                )));
            }
            let cell = (g as usize * 2 + y as usize) * self.bins + bin_of(s, self.bins);
            self.table.add(cell).expect("cell in range: checked above");
        }
        Ok(())
    }

    /// The Laplace release of the table at `epsilon` for `relation` (module docs), charged to
    /// `ledger` as one entry.
    pub fn release(
        &self,
        epsilon: f64,
        relation: Relation,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<ReleasedCounts> {
        let sensitivity = match relation {
            Relation::Substitution => 2.0,
            Relation::AddRemove => 1.0,
        };
        let mech = Laplace::from_epsilon(sensitivity, epsilon)?.with_relation(relation);
        let values: Vec<f64> = self.table.counts().iter().map(|&c| c as f64).collect();
        let noisy = mech.release_vec(
            ledger,
            noise,
            "group × label × score-bin counts (group thresholds)",
            &values,
        )?;
        Ok(ReleasedCounts {
            groups: self.groups,
            bins: self.bins,
            counts: noisy.into_iter().map(|v| v.max(0.0)).collect(),
            cell_sd: std::f64::consts::SQRT_2 * mech.scale(),
        })
    }
}

/// The released table, clamped at 0: what the thresholds are chosen from.
#[derive(Clone, Debug, PartialEq)]
pub struct ReleasedCounts {
    groups: usize,
    bins: usize,
    counts: Vec<f64>,
    /// The standard deviation of one cell's noise (public: the mechanism's scale); 0 for
    /// counts without noise.
    cell_sd: f64,
}

impl ReleasedCounts {
    /// Released (or, in tests, exact) counts in the table's cell order `(group, label, bin)`.
    pub fn from_counts(groups: usize, bins: usize, counts: Vec<f64>) -> Result<ReleasedCounts> {
        if counts.len() != groups * 2 * bins || bins == 0 {
            return Err(Error::InvalidData(format!(
                "{} counts for {groups} groups × 2 labels × {bins} bins",
                counts.len()
            )));
        }
        Ok(ReleasedCounts {
            groups,
            bins,
            counts,
            cell_sd: 0.0,
        })
    }

    /// The cell-wise sum of tables released on disjoint rows (a federation's sites: the server's
    /// table), its cell noise the root of the sum of the parts' variances. Each part was clamped
    /// at 0 before the sum, which biases a cell empty at every site upwards by at most its
    /// sites' noise scales.
    ///
    /// ```
    /// use dpfair::group_thresholds::table::ReleasedCounts;
    /// let a = ReleasedCounts::from_counts(2, 1, vec![1.0, 2.0, 3.0, 4.0])?;
    /// let b = ReleasedCounts::from_counts(2, 1, vec![10.0, 0.0, 0.0, 1.0])?;
    /// let sum = ReleasedCounts::sum(&[a, b])?;
    /// assert_eq!((sum.bins_of(0, 0)[0], sum.bins_of(1, 1)[0]), (11.0, 5.0));
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn sum(parts: &[ReleasedCounts]) -> Result<ReleasedCounts> {
        let Some(first) = parts.first() else {
            return Err(Error::InvalidData("no tables to add".into()));
        };
        let mut counts = vec![0.0; first.counts.len()];
        let mut variance = 0.0;
        for part in parts {
            if (part.groups, part.bins) != (first.groups, first.bins) {
                return Err(Error::InvalidData(format!(
                    "a table of {} groups × {} bins beside one of {} × {}",
                    part.groups, part.bins, first.groups, first.bins
                )));
            }
            counts
                .iter_mut()
                .zip(&part.counts)
                .for_each(|(c, v)| *c += v);
            variance += part.cell_sd * part.cell_sd;
        }
        Ok(ReleasedCounts {
            groups: first.groups,
            bins: first.bins,
            counts,
            cell_sd: variance.sqrt(),
        })
    }

    /// The standard deviation of one cell's noise (0 for counts given without noise); after a
    /// correction for randomised response, an approximation: the release's divided by `p − q`.
    pub fn cell_sd(&self) -> f64 {
        self.cell_sd
    }

    /// Number of groups.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Number of score bins.
    pub fn bins(&self) -> usize {
        self.bins
    }

    /// The table of the true groups estimated from this table of groups randomised by K-ary
    /// randomised response at `epsilon_a` (each row reports its own group with probability
    /// `p = e^ε_A/(e^ε_A + K − 1)`, each other group with `q = 1/(e^ε_A + K − 1)`): in every
    /// (label, bin) column the expected counts are `M t` with `M = (p − q) I + q 11ᵀ`, whose
    /// inverse is `(I − q 11ᵀ)/(p − q)` (as `p + (K − 1) q = 1`); the estimate is clamped at 0.
    /// Post-processing of the release (docs/fairness-constraints.md, "A sensitive attribute
    /// collected under local DP").
    ///
    /// ```
    /// use dpfair::group_thresholds::table::ReleasedCounts;
    /// // Two groups, one bin: true counts (label 0, label 1) = (60, 40) and (20, 80).
    /// let (p, q) = (1f64.exp() / (1f64.exp() + 1.0), 1.0 / (1f64.exp() + 1.0));
    /// let seen = |a: f64, b: f64| p * a + q * b; // expected randomised counts
    /// let counts = ReleasedCounts::from_counts(2, 1, vec![
    ///     seen(60.0, 20.0), seen(40.0, 80.0), seen(20.0, 60.0), seen(80.0, 40.0),
    /// ])?;
    /// let t = counts.corrected_for_randomised_response(1.0);
    /// assert!((t.bins_of(0, 0)[0] - 60.0).abs() < 1e-9 && (t.bins_of(1, 1)[0] - 80.0).abs() < 1e-9);
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn corrected_for_randomised_response(&self, epsilon_a: f64) -> ReleasedCounts {
        let k = self.groups as f64;
        let e = epsilon_a.exp();
        let (p, q) = (e / (e + k - 1.0), 1.0 / (e + k - 1.0));
        let mut counts = vec![0.0; self.counts.len()];
        for label in 0..2u8 {
            for bin in 0..self.bins {
                let column: Vec<f64> = (0..self.groups)
                    .map(|g| self.bins_of(g, label)[bin])
                    .collect();
                let total: f64 = column.iter().sum();
                for (g, seen) in column.iter().enumerate() {
                    counts[(g * 2 + label as usize) * self.bins + bin] =
                        ((seen - q * total) / (p - q)).max(0.0);
                }
            }
        }
        ReleasedCounts {
            groups: self.groups,
            bins: self.bins,
            counts,
            cell_sd: self.cell_sd / (p - q),
        }
    }

    /// The counts of `group`'s rows with `label` in each score bin.
    pub fn bins_of(&self, group: usize, label: u8) -> &[f64] {
        let start = (group * 2 + label as usize) * self.bins;
        &self.counts[start..start + self.bins]
    }
}
