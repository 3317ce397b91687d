//! Private held-out scores of a multi-class or a real target for `compare` (a binary target
//! goes through the private group report, [`dpfair_fairness::PrivateGroupReport`]): the fairness
//! crate's [`MulticlassReport`] (accuracy and DP2DP's U from one release of the group × label ×
//! prediction counts) and [`RegressionReport`] (MSE and the binned KS distance from two
//! releases), read as the table's two figures with their intervals (docs/evaluation.md,
//! "`dpfair compare`: private by default"; the method: [`dpfair_fairness::private_scores`]).

use super::held_out::Judged;
use crate::error::{Error, Result};
use crate::evaluation::from_fairness;
use dpfair_fairness::interval::Interval;
use dpfair_fairness::private_scores::{MulticlassReport, RegressionReport, SquaredErrors};
use dpfair_privacy::{Ledger, Noise};

pub use dpfair_fairness::private_scores::{BINS, MSE_SHARE};

/// Accuracy and DP2DP's U of class predictions, privately ([`MulticlassReport`]). `n_groups`
/// is the number of declared groups; `level` each interval's.
#[allow(clippy::too_many_arguments)]
pub(super) fn multiclass(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    epsilon: f64,
    level: f64,
    (y, predicted, k): (&[u32], &[u32], usize),
    groups: &[u32],
    n_groups: usize,
) -> Result<Judged> {
    let r = MulticlassReport::release(
        ledger,
        noise,
        label,
        &codes(n_groups),
        &codes(k),
        (y, predicted, groups),
        epsilon,
        level,
    )
    .map_err(from_fairness)?;
    Ok(judged(r.accuracy, r.unfairness))
}

/// MSE and the binned KS distance of real predictions, privately ([`RegressionReport`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn regression(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    epsilon: f64,
    level: f64,
    (y, predicted): (&[f64], &[f64]),
    range: [f64; 2],
    groups: &[u32],
    n_groups: usize,
) -> Result<Judged> {
    let r = RegressionReport::release(
        ledger,
        noise,
        label,
        &codes(n_groups),
        (y, predicted, groups),
        range,
        epsilon,
        level,
    )
    .map_err(from_fairness)?;
    Ok(judged(r.squared_errors.mse, r.ks))
}

/// The MSE of `predicted` against `y` with its interval ([`SquaredErrors`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn squared_error(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    epsilon: f64,
    level: f64,
    y: &[f64],
    predicted: &[f64],
    range: [f64; 2],
) -> Result<(f64, Interval)> {
    let s = SquaredErrors::release(ledger, noise, label, (y, predicted), range, epsilon, level)
        .map_err(from_fairness)?;
    Ok((s.mse.value.unwrap_or(f64::NAN), s.mse.interval()))
}

/// Names for codes 0..n (compare's groups and classes are codes; the names are not shown).
fn codes(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

/// Two figures as a held-out score (a figure without a value: NaN).
fn judged(accuracy: dpfair_fairness::Figure, unfairness: dpfair_fairness::Figure) -> Judged {
    Judged {
        accuracy: accuracy.value.unwrap_or(f64::NAN),
        unfairness: unfairness.value.unwrap_or(f64::NAN),
        intervals: Some([accuracy.interval(), unfairness.interval()]),
    }
}

/// The refusal of a private evaluation of a real target without its public range.
pub(super) fn needs_range() -> Error {
    Error::invalid(
        "target_range",
        "compare's private evaluation of a real target clips predictions and targets to their \
         public range: give --target-range LO:HI (`target_range` in the library)",
    )
}
