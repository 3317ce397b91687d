//! Step i) of Algorithm 1 of Say et al. (DP2DP) as a mergeable exact accumulator
//! ([`crate::accumulate`]): the pool's group counts (N₋₁, N₊₁), from which π̂_{+1} = N₊₁/N is
//! released ([`SignCounts::finalize`]). Any split of the pool, counted in parts and merged in any
//! order, gives the same counts bit for bit, and with the same noise the same π̄.
//!
//! The rest of Phase 2 is no such statistic: the dual SGD (step ii) sums per-row directions of
//! a Poisson-sampled batch *at every iteration*, each a function of the current λ, so it needs
//! random access to the pool's rows at every step (as DP-SGD does; `docs/data.md`).
//!
//! ```
//! use dpfair::dp2dp::frequencies::SignCounts;
//! let (mut a, mut b) = (SignCounts::new(), SignCounts::new());
//! a.update(&[1.0, -1.0]).unwrap();
//! b.update(&[1.0]).unwrap();
//! a.merge(&b);
//! assert_eq!((a.n(), a.n_plus()), (3, 2));
//! ```

use super::config::Config;
use super::error::{Error, Result};
use crate::accumulate::CountTable;
use crate::predictor::Accounting;
use dpfair_privacy::mechanisms::Gaussian;
use dpfair_privacy::{Ledger, Noise};

/// The exact counts of the pool's signs: cell 0 for s = −1, cell 1 for s = +1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignCounts {
    table: CountTable,
}

impl Default for SignCounts {
    fn default() -> Self {
        SignCounts::new()
    }
}

impl SignCounts {
    /// No rows yet.
    pub fn new() -> Self {
        SignCounts {
            table: CountTable::new(2),
        }
    }

    /// The counts of `signs` (each ±1) in one pass.
    pub fn of(signs: &[f64]) -> Result<Self> {
        let mut counts = SignCounts::new();
        counts.update(signs)?;
        Ok(counts)
    }

    /// Count a batch of signs; a sign other than ±1 is an error naming the batch row, and the
    /// batch is then not counted.
    pub fn update(&mut self, signs: &[f64]) -> Result<()> {
        let mut part = CountTable::new(2);
        for (i, &s) in signs.iter().enumerate() {
            if s != 1.0 && s != -1.0 {
                return Err(Error::Data(format!("row {i}: sign {s} is not ±1")));
            }
            part.add(usize::from(s > 0.0)).expect("two cells");
        }
        self.table.merge(&part).expect("same shape");
        Ok(())
    }

    /// Add another part's counts.
    pub fn merge(&mut self, other: &SignCounts) {
        self.table.merge(&other.table).expect("both have two cells");
    }

    /// N, the pool's size.
    pub fn n(&self) -> usize {
        self.table.total() as usize
    }

    /// N₊₁, the rows with s = +1.
    pub fn n_plus(&self) -> usize {
        self.table.counts()[1] as usize
    }

    /// Step i): π̄ = [π̄_{−1}, π̄_{+1}], floored at π_floor. Strict: one Gaussian release of
    /// π̂_{+1} (sensitivity 1/N) and π̄_{−1} = 1 − π̄_{+1}; paper: two independent noises
    /// (sensitivity √2/N); not private (ε = ∞): the exact frequencies. Charges `ledger` before
    /// drawing (module doc of [`super::phase2`]).
    pub fn finalize(
        &self,
        cfg: &Config,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<[f64; 2]> {
        let n = self.n();
        if n == 0 {
            return Err(Error::Data("the pool has no rows".into()));
        }
        let hat_plus = self.n_plus() as f64 / n as f64;
        let floor = |p: f64| p.clamp(cfg.pi_floor, 1.0);
        let sigma_pi = cfg.sigma_pi_for(n);
        Ok(if !cfg.is_private() {
            [floor(1.0 - hat_plus), floor(hat_plus)]
        } else if cfg.accounting == Accounting::Paper {
            let g = Gaussian::from_sigma(2f64.sqrt() / n as f64, sigma_pi)?;
            let v = g.release_vec(
                ledger,
                noise,
                "DP2DP π̄_{−1}, π̄_{+1} (paper: two independent noises, sensitivity √2/N, docs/deviations.md#dp2dp-proportion-release)",
                &[1.0 - hat_plus, hat_plus],
            )?;
            [floor(v[0]), floor(v[1])]
        } else {
            let g = Gaussian::from_sigma(1.0 / n as f64, sigma_pi)?;
            let v = g.release(
                ledger,
                noise,
                "DP2DP π̄_{+1} (group frequency; π̄_{−1} = 1 − π̄_{+1})",
                hat_plus,
            )?;
            [floor(1.0 - v), floor(v)]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulate::testing::{merge_randomly, random_parts};
    use crate::dp2dp::phase2::{release, release_with_counts};
    use dpfair_privacy::Budget;
    use ndarray::Array2;
    use rand::{RngExt, SeedableRng};

    /// Random parts of the pool, counted separately and merged in random orders, give the
    /// one-pass counts bit for bit and, with the same noise stream, the same Phase-2 release
    /// (π̄ and the multipliers λ̄ of the dual SGD).
    #[test]
    fn parts_merged_in_any_order_give_the_one_pass_release() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (n, k) = (600, 3);
        let signs: Vec<f64> = (0..n)
            .map(|_| if rng.random_bool(0.3) { 1.0 } else { -1.0 })
            .collect();
        let probs = Array2::from_shape_fn((n, k), |(i, c)| {
            let w = [1.0 + (i % 3) as f64, 2.0, 1.0 + (i % 5) as f64];
            w[c] / w.iter().sum::<f64>()
        });
        let cfg = Config {
            epsilon: 1.0,
            delta: 1e-5,
            iterations: 30,
            batch: 50,
            ..Config::default()
        };
        let run = |counts: Option<&SignCounts>| {
            let mut ledger = Ledger::new(Budget::approx(1.0, 1e-5).unwrap());
            let mut noise = Noise::seeded(9);
            match counts {
                None => release(&cfg, probs.view(), &signs, &mut ledger, &mut noise),
                Some(c) => {
                    release_with_counts(&cfg, c, probs.view(), &signs, &mut ledger, &mut noise)
                }
            }
            .unwrap()
        };
        let one = SignCounts::of(&signs).unwrap();
        let reference = run(None);
        for parts in [1, 4, 9] {
            let counted: Vec<SignCounts> = random_parts(n, parts, &mut rng)
                .into_iter()
                .map(|rows| {
                    let part: Vec<f64> = rows.iter().map(|&i| signs[i]).collect();
                    SignCounts::of(&part).unwrap()
                })
                .collect();
            let merged = merge_randomly(counted, &mut rng, |a, b| a.merge(&b));
            assert_eq!(merged, one, "{parts} parts");
            assert_eq!(run(Some(&merged)), reference, "{parts} parts");
        }
    }

    #[test]
    fn counts_of_another_pool_and_bad_signs_are_refused() {
        assert!(SignCounts::of(&[1.0, 0.5]).is_err());
        let cfg = Config::default();
        let probs = Array2::from_elem((3, 2), 0.5);
        let other = SignCounts::of(&[1.0]).unwrap();
        let mut ledger = Ledger::unlimited();
        let e = release_with_counts(
            &cfg,
            &other,
            probs.view(),
            &[1.0, -1.0, 1.0],
            &mut ledger,
            &mut Noise::seeded(1),
        )
        .unwrap_err();
        assert!(e.to_string().contains("group counts of 1 rows"), "{e}");
        assert!(ledger.entries().is_empty());
    }
}
