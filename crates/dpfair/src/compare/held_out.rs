//! How `compare` reads the held-out rows ([`Evaluation`]).
//!
//! **Private (the default).** Each fit's held-out predictions are scored through one private
//! group report (docs/evaluation.md): the group × label × prediction counts released once with
//! exact discrete Laplace noise, charged to the comparison's evaluation ledger, and the accuracy
//! and the demographic-parity difference read from it with their intervals (noise and sampling).
//! The constant reference is read the same way: one release of the held-out label counts, from
//! which the better of the two constant classes is chosen (post-processing). Nothing else reads
//! the held-out rows, and the non-private reference (a model that reads the training rows
//! without noise) is left out.
//!
//! **Intervals over repetitions.** With R repetitions each release's intervals are at level
//! 1 − β/R; by the union bound all R hold together with probability ≥ 1 − β, and then the mean
//! over repetitions of the fits' population figures lies between the mean of the lower ends and
//! the mean of the upper ends: the row's interval, at the stated level 1 − β.
//!
//! **Exact.** Today's scoring on private rows without noise, for the data owner's eyes only.

use super::Truth;
use crate::error::{Error, Result};
use crate::evaluation::{RELEASE_LABEL, from_fairness};
use crate::predictor::Output;
use dpfair_fairness::interval::Interval;
use dpfair_fairness::private_report::{DEFAULT_LEVEL, Figure, check_level};
use dpfair_fairness::{GroupConfusion, PrivateGroupReport};
use dpfair_privacy::{Budget, Ledger, Noise};

/// The ε of each held-out release when none is given.
pub const DEFAULT_EVALUATION_EPSILON: f64 = 1.0;

/// How `compare` reads the held-out rows (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Evaluation {
    /// One private group report per fit (and one for the constant reference) at `epsilon`
    /// each, replace-one neighbours; row intervals at `level` (module docs).
    Private { epsilon: f64, level: f64 },
    /// Exact on the private held-out rows: not for publication.
    Exact,
}

impl Default for Evaluation {
    fn default() -> Self {
        Evaluation::Private {
            epsilon: DEFAULT_EVALUATION_EPSILON,
            level: DEFAULT_LEVEL,
        }
    }
}

impl Evaluation {
    pub(super) fn check(&self) -> Result<()> {
        if let Evaluation::Private { epsilon, level } = *self {
            if !(epsilon.is_finite() && epsilon > 0.0) {
                return Err(Error::invalid(
                    "evaluation_epsilon",
                    format!("the held-out releases' ε must be finite and > 0, got {epsilon}"),
                ));
            }
            check_level(level).map_err(|e| Error::invalid("level", e.to_string()))?;
        }
        Ok(())
    }
}

/// A held-out score: point values and, under private evaluation, their intervals
/// (accuracy or MSE, then unfairness).
#[derive(Clone, Copy, Debug)]
pub(super) struct Judged {
    pub accuracy: f64,
    pub unfairness: f64,
    pub intervals: Option<[Interval; 2]>,
}

/// Scores predictions on the held-out rows of one comparison.
pub(super) enum Scorer {
    Exact,
    Private(Box<Releases>),
}

/// What a private scorer releases with.
pub(super) struct Releases {
    ledger: Ledger,
    noise: Noise,
    epsilon: f64,
    /// Each release's level: 1 − β/R (module docs).
    level: f64,
    groups: Vec<String>,
}

impl Scorer {
    /// A scorer for `releases` held-out releases at most, over `repetitions` repetitions, with
    /// the declared `groups`; release noise from the OS, or seeded from `seed` in a simulation.
    pub fn new(
        evaluation: Evaluation,
        releases: usize,
        repetitions: usize,
        groups: &[String],
        seed: Option<u64>,
    ) -> Result<Scorer> {
        let Evaluation::Private { epsilon, level } = evaluation else {
            return Ok(Scorer::Exact);
        };
        let mut ledger = Ledger::new(Budget::pure(epsilon * releases as f64)?);
        let noise = match seed {
            Some(seed) => Noise::seeded(seed),
            None => Noise::os(),
        };
        ledger.record_noise(&noise);
        Ok(Scorer::Private(Box::new(Releases {
            ledger,
            noise,
            epsilon,
            level: 1.0 - (1.0 - level) / repetitions as f64,
            groups: groups.to_vec(),
        })))
    }

    /// Scores `out` against `truth` on the held-out rows of `groups`; a private release is
    /// labelled with `what` in the ledger. A private score needs a binary target.
    pub fn score(
        &mut self,
        what: &str,
        out: &Output,
        truth: &Truth,
        groups: &[u32],
    ) -> Result<Judged> {
        match self {
            Scorer::Exact => {
                let (accuracy, unfairness) = truth.score(out, groups)?;
                Ok(Judged {
                    accuracy,
                    unfairness,
                    intervals: None,
                })
            }
            Scorer::Private(releases) => {
                let Output::Classes { classes, .. } = out else {
                    return Err(not_binary());
                };
                let report = releases.release(what, classes, truth, groups)?;
                let accuracy = report.overall.rates.accuracy;
                let dp = report.disparities.demographic_parity_difference;
                Ok(Judged {
                    accuracy: value(&accuracy),
                    unfairness: value(&dp),
                    intervals: Some([accuracy.interval(), dp.interval()]),
                })
            }
        }
    }

    /// The constant reference privately: one release of the held-out label counts (all
    /// predictions 0), then the constant class the noisy counts say is more frequent, with its
    /// accuracy's interval (the two constants' intervals are one event: `[l, u]` for class 0 is
    /// `[1 − u, 1 − l]` for class 1). A constant's demographic-parity difference is 0.
    pub fn private_constant(&mut self, truth: &Truth, groups: &[u32]) -> Result<Judged> {
        let Scorer::Private(releases) = self else {
            unreachable!("the private constant is read by a private scorer only")
        };
        let zeros = vec![0u32; groups.len()];
        let report = releases.release(super::MAJORITY, &zeros, truth, groups)?;
        let zero = report.overall.rates.accuracy;
        let (accuracy, interval) = match zero.value {
            Some(v) if v < 0.5 => (
                1.0 - v,
                Interval {
                    lower: 1.0 - zero.upper,
                    upper: 1.0 - zero.lower,
                },
            ),
            _ => (value(&zero), zero.interval()),
        };
        let exact_zero = Interval {
            lower: 0.0,
            upper: 0.0,
        };
        Ok(Judged {
            accuracy,
            unfairness: 0.0,
            intervals: Some([interval, exact_zero]),
        })
    }

    /// The ε of each release (private evaluation).
    pub fn release_epsilon(&self) -> Option<f64> {
        match self {
            Scorer::Private(releases) => Some(releases.epsilon),
            Scorer::Exact => None,
        }
    }

    /// The evaluation's ledger: every held-out release (private evaluation).
    pub fn into_ledger(self) -> Option<Ledger> {
        match self {
            Scorer::Private(releases) => Some(releases.ledger),
            Scorer::Exact => None,
        }
    }
}

impl Releases {
    /// One private group report of the class predictions `predicted`.
    fn release(
        &mut self,
        what: &str,
        predicted: &[u32],
        truth: &Truth,
        groups: &[u32],
    ) -> Result<PrivateGroupReport> {
        let Truth::Classes { y, k: 2 } = truth else {
            return Err(not_binary());
        };
        let to_u8 = |v: &[u32]| v.iter().map(|&c| u8::from(c == 1)).collect::<Vec<u8>>();
        let counts =
            GroupConfusion::from_rows(self.groups.clone(), &to_u8(y), &to_u8(predicted), groups)
                .map_err(from_fairness)?;
        PrivateGroupReport::release(
            &mut self.ledger,
            &mut self.noise,
            &format!("{RELEASE_LABEL} of {what}"),
            &counts,
            self.epsilon,
            self.level,
        )
        .map_err(from_fairness)
    }
}

/// A figure's point value (NaN when its noisy denominator is 0).
fn value(f: &Figure) -> f64 {
    f.value.unwrap_or(f64::NAN)
}

/// The refusal of a private evaluation of anything but a binary target.
pub(super) fn not_binary() -> Error {
    Error::invalid(
        "evaluation",
        "compare's private held-out evaluation releases group × label × prediction counts of a \
         binary target (docs/evaluation.md); for a real or multi-class target give \
         --exact-evaluation (`Evaluation::Exact`): exact on private rows, not for publication",
    )
}
