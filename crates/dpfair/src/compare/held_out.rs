//! How `compare` reads the held-out rows ([`Evaluation`]).
//!
//! **Private (the default).** Each fit's held-out predictions of a binary target are scored
//! through one private group report (docs/evaluation.md): the group × label × prediction counts
//! released once with exact discrete Laplace noise, charged to the comparison's evaluation
//! ledger, and the accuracy and the difference of the comparison's constraint (demographic
//! parity, equal opportunity or equalized odds: the report's own figure) read from it with their
//! intervals (noise and sampling); a multi-class or real target through [`super::other_targets`].
//! The constant reference is read the same way (`Scorer::private_constant`): for a binary
//! target one release of the held-out label counts, from which the better of the two constant
//! classes is chosen (post-processing). Nothing else reads
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
use crate::group_thresholds::Constraint;
use crate::predictor::Output;
use dpfair_fairness::interval::Interval;
use dpfair_fairness::interval::rate_interval;
use dpfair_fairness::private_report::{DEFAULT_LEVEL, Disparities, Figure, check_level};
use dpfair_fairness::{GroupConfusion, PrivateGroupReport};
use dpfair_privacy::mechanisms::{Laplace, histogram_scale, noisy_counts};
use dpfair_privacy::{Budget, Ledger, Noise};

use super::other_targets;

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
    /// Exact scores; a binary target's unfairness is the constraint's difference.
    Exact(Constraint),
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
    /// The public range of a real target.
    range: Option<[f64; 2]>,
    /// The constraint whose difference a binary target's report gives as the unfairness.
    constraint: Constraint,
}

impl Scorer {
    /// A scorer for `releases` held-out evaluations at most, over `repetitions` repetitions,
    /// with the declared `groups`, a real target's public `range` and the `constraint` whose
    /// difference is a binary target's unfairness; release noise from the OS, or seeded from
    /// `seed` in a simulation.
    pub fn new(
        evaluation: Evaluation,
        releases: usize,
        repetitions: usize,
        groups: &[String],
        range: Option<[f64; 2]>,
        constraint: Constraint,
        seed: Option<u64>,
    ) -> Result<Scorer> {
        let Evaluation::Private { epsilon, level } = evaluation else {
            return Ok(Scorer::Exact(constraint));
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
            range,
            constraint,
        })))
    }

    /// Scores `out` against `truth` on the held-out rows of `groups`; a private release is
    /// labelled with `what` in the ledger and spends the evaluation's ε.
    pub fn score(
        &mut self,
        what: &str,
        out: &Output,
        truth: &Truth,
        groups: &[u32],
    ) -> Result<Judged> {
        match self {
            Scorer::Exact(constraint) => {
                let (accuracy, unfairness) = truth.score(out, groups, *constraint)?;
                Ok(Judged {
                    accuracy,
                    unfairness,
                    intervals: None,
                })
            }
            Scorer::Private(releases) => releases.score(what, out, truth, groups),
        }
    }

    /// The constant reference, privately at the evaluation's ε (a private scorer only):
    ///
    /// * binary: one release of the held-out label counts (all predictions 0), then the constant
    ///   class the noisy counts say is more frequent, with its accuracy's interval (the two
    ///   constants' intervals are one event: `[l, u]` for class 0 is `[1 − u, 1 − l]` for
    ///   class 1);
    /// * multi-class: the group × label counts released once, the class with the largest noisy
    ///   count, its accuracy's interval at β/k (one per class: the union bound covers the choice);
    /// * real: the held-out rows' mean released at ε/2 (Laplace, sensitivity hi − lo) and the
    ///   MSE of that constant at ε/2 ([`other_targets::squared_error`]).
    ///
    /// A constant's unfairness is exactly 0.
    pub fn private_constant(&mut self, truth: &Truth, groups: &[u32]) -> Result<Judged> {
        let Scorer::Private(releases) = self else {
            unreachable!("the private constant is read by a private scorer only")
        };
        let exact_zero = Interval {
            lower: 0.0,
            upper: 0.0,
        };
        let (accuracy, interval) = match truth {
            Truth::Classes { y, k: 2 } => releases.binary_constant(y, groups)?,
            Truth::Classes { y, k } => releases.multiclass_constant(y, *k, groups)?,
            Truth::Values(y) => releases.mean_constant(y)?,
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
            Scorer::Exact(_) => None,
        }
    }

    /// The evaluation's ledger: every held-out release (private evaluation).
    pub fn into_ledger(self) -> Option<Ledger> {
        match self {
            Scorer::Private(releases) => Some(releases.ledger),
            Scorer::Exact(_) => None,
        }
    }
}

impl Releases {
    fn beta(&self) -> f64 {
        1.0 - self.level
    }

    /// A private score of `out` (module docs; [`other_targets`] for other than binary targets).
    fn score(&mut self, what: &str, out: &Output, truth: &Truth, groups: &[u32]) -> Result<Judged> {
        let n_groups = self.groups.len();
        let label = format!("{RELEASE_LABEL} of {what}");
        let level = self.level;
        match (truth, out) {
            (Truth::Classes { y, k: 2 }, Output::Classes { classes, .. }) => {
                let report = self.release(what, classes, y, groups)?;
                let accuracy = report.overall.rates.accuracy;
                let gap = difference(&report.disparities, self.constraint);
                Ok(Judged {
                    accuracy: value(&accuracy),
                    unfairness: value(&gap),
                    intervals: Some([accuracy.interval(), gap.interval()]),
                })
            }
            (Truth::Classes { y, k }, Output::Classes { classes, .. }) => {
                other_targets::multiclass(
                    &mut self.ledger,
                    &mut self.noise,
                    &label,
                    self.epsilon,
                    level,
                    (y, classes, *k),
                    groups,
                    n_groups,
                )
            }
            (Truth::Values(y), Output::Values(v)) => other_targets::regression(
                &mut self.ledger,
                &mut self.noise,
                &label.replace(
                    "group × label × prediction counts",
                    "errors and predictions",
                ),
                self.epsilon,
                level,
                (y, v),
                self.range.ok_or_else(other_targets::needs_range)?,
                groups,
                n_groups,
            ),
            _ => Err(Error::InvalidData(
                "a model's output does not match the target (classes against values)".into(),
            )),
        }
    }

    /// [`Scorer::private_constant`] of a binary target.
    fn binary_constant(&mut self, y: &[u32], groups: &[u32]) -> Result<(f64, Interval)> {
        let zeros = vec![0u32; groups.len()];
        let report = self.release(super::MAJORITY, &zeros, y, groups)?;
        let zero = report.overall.rates.accuracy;
        Ok(match zero.value {
            Some(v) if v < 0.5 => (
                1.0 - v,
                Interval {
                    lower: 1.0 - zero.upper,
                    upper: 1.0 - zero.lower,
                },
            ),
            _ => (value(&zero), zero.interval()),
        })
    }

    /// [`Scorer::private_constant`] of a multi-class target.
    fn multiclass_constant(
        &mut self,
        y: &[u32],
        k: usize,
        groups: &[u32],
    ) -> Result<(f64, Interval)> {
        let mut counts = vec![0u64; self.groups.len() * k];
        for (&t, &g) in y.iter().zip(groups) {
            counts[g as usize * k + t as usize] += 1;
        }
        let label = format!(
            "{RELEASE_LABEL} of the {}: group × label counts",
            super::MAJORITY
        );
        let noisy = noisy_counts(
            &mut self.ledger,
            &mut self.noise,
            &label,
            &counts,
            self.epsilon,
        )?;
        let scale = histogram_scale(self.ledger.relation(), self.epsilon);
        let of_class = |c: usize| -> (Vec<i64>, Vec<i64>) {
            let (mut yes, mut no) = (Vec::new(), Vec::new());
            for (i, &v) in noisy.iter().enumerate() {
                if i % k == c { yes.push(v) } else { no.push(v) }
            }
            (yes, no)
        };
        let best = (0..k)
            .max_by_key(|&c| of_class(c).0.iter().map(|&v| v.max(0)).sum::<i64>())
            .unwrap_or(0);
        let (yes, no) = of_class(best);
        let positive = |v: &[i64]| v.iter().map(|&c| c.max(0) as f64).sum::<f64>();
        let (a, b) = (positive(&yes), positive(&no));
        let point = if a + b > 0.0 { a / (a + b) } else { f64::NAN };
        Ok((
            point,
            rate_interval(&yes, &no, scale, self.beta() / k as f64),
        ))
    }

    /// [`Scorer::private_constant`] of a real target.
    fn mean_constant(&mut self, y: &[f64]) -> Result<(f64, Interval)> {
        let [lo, hi] = self.range.ok_or_else(other_targets::needs_range)?;
        let half = self.epsilon / 2.0;
        let sum: f64 = y.iter().map(|v| v.clamp(lo, hi)).sum();
        let label = format!("{RELEASE_LABEL} of the {}", super::MEAN);
        let noisy = Laplace::from_epsilon(hi - lo, half)?
            .with_relation(self.ledger.relation())
            .release(
                &mut self.ledger,
                &mut self.noise,
                &format!("{label}: sum of targets"),
                sum,
            )?;
        let mean = (noisy / y.len().max(1) as f64).clamp(lo, hi);
        let constant = vec![mean; y.len()];
        other_targets::squared_error(
            &mut self.ledger,
            &mut self.noise,
            &label,
            half,
            self.level,
            y,
            &constant,
            [lo, hi],
        )
    }

    /// One private group report of the binary class predictions `predicted` against `y`.
    fn release(
        &mut self,
        what: &str,
        predicted: &[u32],
        y: &[u32],
        groups: &[u32],
    ) -> Result<PrivateGroupReport> {
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

/// The report's between-group difference for `constraint` (Fairlearn's, with its interval).
fn difference(disparities: &Disparities, constraint: Constraint) -> Figure {
    match constraint {
        Constraint::DemographicParity => disparities.demographic_parity_difference,
        Constraint::EqualOpportunity => disparities.equal_opportunity_difference,
        Constraint::EqualizedOdds => disparities.equalized_odds_difference,
    }
}

/// A figure's point value (NaN when its noisy denominator is 0).
fn value(f: &Figure) -> f64 {
    f.value.unwrap_or(f64::NAN)
}
