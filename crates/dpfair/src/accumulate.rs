//! Mergeable exact sufficient statistics: the counts a method's release is a function of, kept
//! as integers so that any split of the data, accumulated in any order, on any number of threads
//! or machines, and merged in any order, gives the same statistic bit for bit. Noise is drawn
//! once, when the statistic is released ([`CountTable::release`]), never per part.
//!
//! The methods' accumulators wrap a [`CountTable`]:
//!
//! | method | accumulator | cells |
//! |---|---|---|
//! | fair regression (Xian et al., Algorithm 1 lines 4–6) | [`crate::fair_regression::histogram::JointCounts`] | group × score bin |
//! | decoupled classifier (Ghoukasian & Asoodeh, Algorithm 2 steps 1–3) | [`crate::decoupled::private_rates::RateCounts`] | group × base prediction |
//! | DP2DP (Say, Denis, Pinot, Algorithm 1 step i) | [`crate::dp2dp::frequencies::SignCounts`] | group of the pool |
//! | CDP-Fair / FDP-Fair S1 (Xue & Yu, Algorithm 5 S1, Algorithm 1 S1 at a site) | [`crate::plugin::release::KernelSums`] | (group, label) counts and random-feature sums on the `2^−52` lattice (`plugin::basis::LATTICE_BITS`) |
//! | CDP-Fair strict S2 (Algorithm 5 step 3, after S1's release) | [`crate::cdp_fair::GridCounts`] | group × interval of the public τ grid |
//! | FDP-Fair round 2 (Algorithm 3 at a site, after the broadcast) | [`crate::fdp_fair::tree::TreeCounts`] | group × leaf |
//!
//! Real-valued sums are kept exactly by rounding each term onto a release lattice before it is
//! added (`KernelSums`: every feature value truncated toward zero onto `2^−52ℤ`, which never
//! increases a norm, so the release's sensitivity bound holds unchanged). A method with several
//! passes (CDP-Fair's S2 reads the calibration half under S1's released estimate) has one
//! accumulator per pass.
//!
//! Each has `update(batch)`, `merge(other)` and `finalize(…, ledger, noise)`; the single-machine
//! fits build their statistic with the same accumulator (one code path), so a fit from parts and
//! a one-pass fit release the same statistic and, with the same noise stream, the same model.
//!
//! Not every release is such a statistic: DP-SGD (the decoupled classifier's base model,
//! DP-FERMI, the private logistic and linear regressions) and DP2DP's dual SGD sample a batch
//! from all rows at every step; the logistic plug-in of CDP-/FDP-Fair releases a penalised
//! minimiser over all rows; CDP-Fair's paper-mode S2 sweep places `τ̃` on one calibration
//! score (it needs the scores, not a bounded summary) and its cross-validated bandwidth
//! compares all pairs of rows. Their rows are held whole; the decoupled classifier holds only
//! its base model's (bounded) training part and streams the rest (`docs/data.md`).
//!
//! ```
//! use dpfair::accumulate::CountTable;
//! let (mut a, mut b) = (CountTable::new(3), CountTable::new(3));
//! a.add(0).unwrap();
//! b.add(2).unwrap();
//! b.add(2).unwrap();
//! a.merge(&b).unwrap();
//! assert_eq!(a.counts(), &[1, 0, 2]);
//! ```

use dpfair_privacy::mechanisms::noisy_counts;
use dpfair_privacy::{Ledger, Noise, PrivacyError};

/// Two accumulators of different shapes cannot be merged (a configuration mismatch between
/// the parts).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot merge a statistic of {theirs} cells into one of {ours}")]
pub struct ShapeMismatch {
    pub ours: usize,
    pub theirs: usize,
}

/// Exact counts over a fixed number of disjoint cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountTable {
    counts: Vec<u64>,
}

impl CountTable {
    /// `cells` zero counts.
    pub fn new(cells: usize) -> Self {
        CountTable {
            counts: vec![0; cells],
        }
    }

    /// A table holding `counts` (a part's exact state, sent from elsewhere).
    pub fn from_counts(counts: Vec<u64>) -> Self {
        CountTable { counts }
    }

    /// Count one record in `cell`; `Err(cell)` when it is out of range.
    pub fn add(&mut self, cell: usize) -> Result<(), usize> {
        match self.counts.get_mut(cell) {
            Some(c) => {
                *c += 1;
                Ok(())
            }
            None => Err(cell),
        }
    }

    /// Add another part's counts (exact: the result does not depend on the order of merges).
    pub fn merge(&mut self, other: &CountTable) -> Result<(), ShapeMismatch> {
        if other.counts.len() != self.counts.len() {
            return Err(ShapeMismatch {
                ours: self.counts.len(),
                theirs: other.counts.len(),
            });
        }
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        Ok(())
    }

    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Records counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The ε-DP release of the counts: exact discrete Laplace noise of scale 2/ε on each
    /// (ℓ1 sensitivity 2 under substitution; the privacy crate's [`noisy_counts`], which charges
    /// `ledger` before drawing).
    pub fn release(
        &self,
        ledger: &mut Ledger,
        noise: &mut Noise,
        label: &str,
        epsilon: f64,
    ) -> Result<Vec<i64>, PrivacyError> {
        noisy_counts(ledger, noise, label, &self.counts, epsilon)
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Random splits and merge orders for the accumulators' tests.
    use rand::seq::SliceRandom;
    use rand::{Rng, RngExt};

    /// Split `0..n` into `parts` random contiguous-free parts (a random assignment of rows).
    pub fn random_parts<R: Rng>(n: usize, parts: usize, rng: &mut R) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); parts];
        for i in 0..n {
            out[rng.random_range(0..parts)].push(i);
        }
        out
    }

    /// Merge `items` in a random binary-tree order with `merge`.
    pub fn merge_randomly<T, R: Rng>(
        mut items: Vec<T>,
        rng: &mut R,
        merge: impl Fn(&mut T, T),
    ) -> T {
        while items.len() > 1 {
            items.shuffle(rng);
            let b = items.pop().expect("two items");
            let a = items.last_mut().expect("one item");
            merge(a, b);
        }
        items.pop().expect("at least one part")
    }
}

#[cfg(test)]
mod tests {
    //! Clip before merge (PipelineDP #551, SmartNoise #622): each row's contribution is bounded
    //! when it is added, and merging partial accumulators is a plain exact sum that never
    //! re-clips (a re-clip after aggregation would bound the total, not each row, and the
    //! sensitivity the release is calibrated to would not hold for the parts).
    use super::testing::{merge_randomly, random_parts};
    use crate::plugin::RffBasis;
    use crate::plugin::basis::LATTICE_UNIT;
    use crate::plugin::release::KernelSums;
    use ndarray::Array2;
    use rand::SeedableRng;

    fn norm(units: &[i128]) -> f64 {
        units
            .iter()
            .map(|&u| (u as f64 * LATTICE_UNIT).powi(2))
            .sum::<f64>()
            .sqrt()
    }

    /// A row with a huge (or overflowing) feature value moves its cell's sum by at most the
    /// per-row bound ‖q(φ(x))‖₂ ≤ 1 (`plugin::basis`: features of norm below 1, truncated
    /// toward zero) and its count by 1; the other cells not at all.
    #[test]
    fn each_row_is_bounded_before_it_is_summed() {
        let basis = RffBasis::new(2, 0.3, 16, 7).unwrap();
        let base = Array2::from_shape_vec((3, 2), vec![0.1, 0.2, 0.7, 0.4, 0.5, 0.9]).unwrap();
        let (a, y) = ([0u32, 1, 1], [1u8, 0, 1]);
        let without = KernelSums::compute(&basis, base.view(), &a, &y).unwrap();
        for huge in [1e12, 1e300, -1e300, f64::MAX] {
            let mut x = base.clone();
            x.push_row(ndarray::aview1(&[huge, -huge])).unwrap();
            let with = KernelSums::compute(&basis, x.view(), &[0, 1, 1, 1], &[1, 0, 1, 1]).unwrap();
            for cell in 0..4 {
                let diff: Vec<i128> = with
                    .lattice_sums(cell)
                    .iter()
                    .zip(without.lattice_sums(cell))
                    .map(|(p, q)| p - q)
                    .collect();
                let bound = if cell == 3 { 1.0 } else { 0.0 };
                assert!(
                    norm(&diff) <= bound,
                    "x = {huge}, cell {cell}: {}",
                    norm(&diff)
                );
                assert!(with.counts()[cell] - without.counts()[cell] <= bound as u64);
            }
        }
    }

    /// n copies of one row, split into random parts and merged in a random order: the merged sum
    /// is the one-pass sum bit for bit and its norm is n times the row's (≫ the per-row bound
    /// of 1): nothing was clipped after aggregation.
    #[test]
    fn merging_never_reclips() {
        let basis = RffBasis::new(1, 0.5, 8, 3).unwrap();
        let n = 200;
        let x = Array2::from_elem((n, 1), 0.0);
        let (a, y) = (vec![1u32; n], vec![1u8; n]);
        let whole = KernelSums::compute(&basis, x.view(), &a, &y).unwrap();
        let one =
            KernelSums::compute(&basis, x.slice(ndarray::s![..1, ..]), &a[..1], &y[..1]).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(551);
        let parts: Vec<KernelSums> = random_parts(n, 7, &mut rng)
            .into_iter()
            .map(|rows| {
                let mut s = KernelSums::new(&basis);
                let xs = x.select(ndarray::Axis(0), &rows);
                s.update(xs.view(), &a[..rows.len()], &y[..rows.len()])
                    .unwrap();
                s
            })
            .collect();
        let merged = merge_randomly(parts, &mut rng, |p, q| p.merge(&q).unwrap());
        assert_eq!(merged, whole);
        let (total, row) = (norm(merged.lattice_sums(3)), norm(one.lattice_sums(3)));
        assert!(row > 0.5 && row <= 1.0, "{row}");
        assert!(
            (total - n as f64 * row).abs() <= 1e-9 * total,
            "{total} vs {n}·{row}"
        );
        assert_eq!(merged.counts()[3], n as u64);
    }
}
