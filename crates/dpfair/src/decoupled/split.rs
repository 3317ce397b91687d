//! Step 1 of the decoupled fit: the public, data-independent split of the n rows into the base
//! model's training rows and Algorithm 2's data set D (`docs/privacy.md`, "Decoupled classifier:
//! the split").
//!
//! The sizes depend on public numbers only: D gets n_post = round(n · `post_fraction`) rows and
//! training m = min(n − n_post, `base_rows`); the rows beyond those, when `base_rows` caps the
//! training part, go to D as well. Which rows train is a uniform random subset of m of the n,
//! drawn row by row in file order from the public `seed` (Knuth's selection sampling, TAOCP
//! vol. 2, §3.4.2, Algorithm S): the choice for row i depends on i, n, m and the seed only, so a
//! fit that holds all rows and a fit that streams them in batches ([`crate::estimators::Decoupled::fit_batches`]) split
//! alike, and the training part is the only one ever held in memory whole.
//!
//! ```
//! use dpfair::decoupled::split::SplitPlan;
//! let plan = SplitPlan::new(3_000_000, 1.0 / 3.0, 1_000_000, 7).unwrap();
//! assert_eq!((plan.training, plan.post), (1_000_000, 2_000_000));
//! let mut rows = plan.rows();
//! let chosen = (0..plan.n).filter(|_| rows.next_is_training()).count();
//! assert_eq!(chosen, plan.training);
//! ```

use super::config::MIN_SPLIT_ROWS;
use super::error::{DecoupledError, Result};
use rand::{RngExt, SeedableRng};

/// The sizes and the seed of a split of n rows (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitPlan {
    /// Rows in the data set.
    pub n: usize,
    /// Rows that train the base model (m).
    pub training: usize,
    /// Rows of D (n − m).
    pub post: usize,
    /// The public seed of the row choice.
    pub seed: u64,
}

impl SplitPlan {
    /// The split of `n` rows: D gets round(n · `post_fraction`) rows, training the rest up to
    /// `base_rows`, D the remainder. Errors when either part has fewer than [`MIN_SPLIT_ROWS`]
    /// rows (a check on public sizes only: how the rows fall into groups and labels is private,
    /// and the method runs on any such composition, docs/privacy.md, "Failures and messages").
    pub fn new(n: usize, post_fraction: f64, base_rows: usize, seed: u64) -> Result<SplitPlan> {
        let n_post = ((n as f64) * post_fraction).round() as usize;
        let training = (n - n_post.min(n)).min(base_rows);
        let post = n - training;
        for (part, rows, fix) in [
            ("training", training, "--base-rows or --post-fraction"),
            ("post-processing", post, "--post-fraction"),
        ] {
            if rows < MIN_SPLIT_ROWS {
                return Err(DecoupledError::InvalidData(format!(
                    "the {part} split has {rows} of the {n} rows, fewer than {MIN_SPLIT_ROWS}: \
                     give more data or change {fix}"
                )));
            }
        }
        Ok(SplitPlan {
            n,
            training,
            post,
            seed,
        })
    }

    /// The row-by-row choice, from row 0 (a fresh, identical sequence on every call).
    pub fn rows(&self) -> TrainingRows {
        TrainingRows {
            rng: rand_chacha::ChaCha20Rng::seed_from_u64(self.seed),
            need: self.training,
            left: self.n,
        }
    }

    /// The 0-based indices of the training rows and of D's rows, both increasing.
    pub fn partition(&self) -> (Vec<usize>, Vec<usize>) {
        let mut rows = self.rows();
        let mut training = Vec::with_capacity(self.training);
        let mut post = Vec::with_capacity(self.post);
        for i in 0..self.n {
            if rows.next_is_training() {
                training.push(i);
            } else {
                post.push(i);
            }
        }
        (training, post)
    }
}

/// Knuth's selection sampling over the rows in order: row i is chosen with probability
/// (rows still needed) / (rows left), which picks exactly m of n rows, every subset of m alike.
#[derive(Clone, Debug)]
pub struct TrainingRows {
    rng: rand_chacha::ChaCha20Rng,
    need: usize,
    left: usize,
}

impl TrainingRows {
    /// Whether the next row trains the base model (`false` past the n-th row).
    pub fn next_is_training(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        // u < 1, so need = left always chooses and need = 0 never does: exactly m rows.
        let chosen = (self.left as f64) * self.rng.random::<f64>() < self.need as f64;
        self.left -= 1;
        if chosen {
            self.need -= 1;
        }
        chosen
    }

    /// Rows of the n not yet decided.
    pub fn left(&self) -> usize {
        self.left
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_public_rule_and_small_parts_are_refused() {
        let p = SplitPlan::new(3000, 1.0 / 3.0, 1_000_000, 1).unwrap();
        assert_eq!((p.training, p.post), (2000, 1000));
        let p = SplitPlan::new(3000, 1.0 / 3.0, 500, 1).unwrap();
        assert_eq!((p.training, p.post), (500, 2500));
        let e = SplitPlan::new(3000, 1.0 / 3.0, 10, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("training split has 10 of the 3000 rows"), "{e}");
        assert!(SplitPlan::new(100, 0.01, 1000, 1).is_err());
    }

    /// Exactly m rows, and each row trains with probability m/n: over 2,000 seeds, row i's
    /// count is Binomial(2000, 0.3) (sd ≈ 20.5); 6 sd bounds each of the 10 rows' counts with
    /// failure probability below 10⁻⁸ per row.
    #[test]
    fn selection_is_exact_in_size_and_uniform_over_rows() {
        let (n, m) = (10, 3);
        let mut hits = [0usize; 10];
        for seed in 0..2000 {
            let plan = SplitPlan {
                n,
                training: m,
                post: n - m,
                seed,
            };
            let (train, post) = plan.partition();
            assert_eq!(train.len(), m);
            assert_eq!(post.len(), n - m);
            for i in train {
                hits[i] += 1;
            }
        }
        let sd = (2000.0f64 * 0.3 * 0.7).sqrt();
        for h in hits {
            assert!((h as f64 - 600.0).abs() < 6.0 * sd, "{hits:?}");
        }
    }
}
