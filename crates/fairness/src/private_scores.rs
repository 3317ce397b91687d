//! Private scores of predictions that the binary group report ([`crate::PrivateGroupReport`])
//! does not cover, each one or two charged releases through the privacy crate, with an interval
//! at the stated level on every figure (docs/evaluation.md, "`dpfair compare`: private by
//! default", where the method is written out):
//!
//! * [`MulticlassReport`]: the group × label × prediction counts of k classes released once;
//!   accuracy, per group the accuracy and the rate of predicting each class, and DP2DP's
//!   multi-class unfairness U (the largest, over classes, spread over groups of the rate of
//!   predicting that class).
//! * [`RegressionReport`]: a real target's mean squared error of clipped predictions (Laplace
//!   noise on the sum, Bernstein's bound for the sampling) and the binned Kolmogorov–Smirnov
//!   distance between the groups' predictions (a group × bin histogram, Chernoff margins of its
//!   cumulative counts and the Dvoretzky–Kiefer–Wolfowitz band); [`SquaredErrors`] is its first
//!   part alone.
//!
//! `dpfair compare` scores held-out rows with them, and the release report
//! (`dpfair report --evaluate`) a model's evaluation rows. The groups and classes are declared
//! (codes into the names given), never read from the rows.

use crate::error::{FairnessError, Result};
use crate::interval::Interval;
use crate::private_report::Figure;

mod multiclass;
mod regression;

pub use multiclass::{MulticlassReport, MulticlassRow};
pub use regression::{BINS, MSE_SHARE, RegressionReport, RegressionRow, SquaredErrors};

/// A figure from a point value (NaN: none) and an interval.
fn figure(value: f64, i: Interval) -> Figure {
    Figure {
        value: (!value.is_nan()).then_some(value),
        lower: i.lower,
        upper: i.upper,
    }
}

/// Checks that `columns` (name, length) all have `n` entries and that every group code is below
/// the number of declared groups `k` (at least 2).
fn check_rows(n: usize, columns: &[(&'static str, usize)], groups: &[u32], k: usize) -> Result<()> {
    if k < 2 {
        return Err(FairnessError::InvalidParameter {
            name: "groups",
            reason: format!("a report between groups needs at least 2 declared groups, got {k}"),
        });
    }
    for &(what, found) in columns.iter().chain([&("groups", groups.len())]) {
        if found != n {
            return Err(FairnessError::LengthMismatch {
                what,
                expected: n,
                found,
            });
        }
    }
    if let Some(row) = groups.iter().position(|&g| g as usize >= k) {
        return Err(FairnessError::InvalidParameter {
            name: "groups",
            reason: format!("row {row}: a group code outside the {k} declared groups"),
        });
    }
    Ok(())
}

/// Checks the release's ε (finite, > 0) and the level (in (0, 1)); returns β = 1 − level.
fn check_release(epsilon: f64, level: f64) -> Result<f64> {
    let level = crate::private_report::check_level(level)?;
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(FairnessError::InvalidParameter {
            name: "epsilon",
            reason: format!("must be finite and > 0, got {epsilon}"),
        });
    }
    Ok(1.0 - level)
}

#[cfg(test)]
mod tests {
    use dpfair_privacy::Noise;
    use rand::SeedableRng;

    /// The share of 300 draws in which `draw` (rows from a population with known figures, one
    /// release with seeded noise) covers the population figures. The intervals are conservative
    /// (union bounds, Bernstein, DKW), so their coverage is ≥ 95 % by construction; were it
    /// exactly 95 %, P(< 93 % of 300) = P(Bin(300, 0.05) ≥ 22) ≈ 6 %, so the tests' threshold of
    /// 93 % rejects coverage well below the level, not luck.
    pub(super) fn coverage(
        mut draw: impl FnMut(&mut rand_chacha::ChaCha8Rng, &mut Noise) -> bool,
    ) -> f64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut noise = Noise::seeded(12);
        let trials = 300;
        (0..trials).filter(|_| draw(&mut rng, &mut noise)).count() as f64 / trials as f64
    }
}
