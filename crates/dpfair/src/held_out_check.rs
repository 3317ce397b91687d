//! The held-out check against the constant classes (docs/privacy.md, "The held-out check";
//! docs/deviations.md#held-out-constant-check): a classifier fitted by [`crate::pipeline::fit`]
//! keeps back a public random share of its rows ([`HeldOutCheck::fraction`], default 10 %).
//! After the fit, the exponential mechanism (permute-and-flip) chooses between the fitted model
//! and the fit rows' most frequent class (released in the fit part: [`release_majority`]) by how
//! many of those rows each predicts correctly, the model handicapped by [`handicap`] rows. When
//! the constant wins, the model predicts that class
//! ([`CheckOutcome::constant`]) and the fit says so: a private fit is then never knowingly worse
//! than always predicting one class, which on a 95 %-one-class target is what happens when the
//! released signal is within its noise.
//!
//! A regressor (given its public target range, [`HeldOutCheck::range`]) is checked against the
//! fit rows' target mean (released in the fit part: [`release_mean`]) by the model's gain in
//! squared errors on the held-out rows, paired row by row and clipped ([`paired_difference`]):
//! one Laplace release of their sum, the model kept only when it exceeds [`gain_threshold`]
//! ([`choose_value`]; sensitivity derived there).
//!
//! **Privacy.** The split is data-independent (a public seed). The private feature bounds and the
//! method read only the fit rows, the choice only the held-out rows: the two compose in parallel
//! (one [`Partition`](dpfair_privacy::Partition); the method's own splits are recorded inside the fit part). Replacing one
//! held-out row moves each candidate's count of correct predictions by at most 1, so the choice
//! is ε-DP at the fit's ε; the ledger's total is the larger of the two parts, the fit's own
//! unless it spends less than its ε. Randomised predictions (DP2DP's mixture, the decoupled
//! flips) are drawn for each held-out row from its own stream, so one row's term never depends on
//! another row's data.
//!
//! ```
//! use dpfair::estimators::DpLogistic;
//! use dpfair::pipeline::{Scaling, fit};
//! use dpfair::{Params, Session};
//! # let dataset = dpfair::estimators::example_data(2_000, 2, 1);
//! # let schema = dpfair::estimators::example_schema(2);
//! let mut loaded = dpfair::data::Loaded::in_memory(dataset, schema);
//! let est = DpLogistic::params().epsilon(1.0).substitution(true).check()?;
//! let mut session = Session::new(1.0, 1e-5)?;
//! let fitted = fit(&est, &mut loaded, &Scaling::None, &mut session)?;
//! let check = fitted.check.as_ref().expect("a classifier's fit runs the check");
//! assert_eq!(check.rows, 200);
//! println!("{}", check.describe(&["0".into(), "1".into()]));
//! # Ok::<(), dpfair::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::predictor::{Output, Predictor};
use dpfair_data::{Dataset, Target};
use dpfair_privacy::mechanisms::exponential_mechanism;
use dpfair_privacy::{Ledger, Noise};
use ndarray::Array2;
use serde::{Deserialize, Serialize};

/// The default share of a classifier's rows held out for the check.
pub const DEFAULT_FRACTION: f64 = 0.1;

/// The margin of [`public_check`]'s sign test, in standard deviations of the difference under
/// a tie (one-sided level about 16 %): a stricter 1.645 (5 %) discarded most good trees on
/// Communities' 28 held-out public rows (0.74 → 0.59 held-out accuracy on the violent-crime
/// target), while keeping a tie (strictly more wins, z = 0) let one fit in six on Law keep a
/// tree just below the majority class.
pub const SIGN_TEST_Z: f64 = 1.0;

/// The default share of LPCT's public rows held out from its partition for [`public_check`]
/// (`dpfair ldp fit`), or in each fold of LPCT's estimators' cross-validated check (five folds).
pub const PUBLIC_FRACTION: f64 = 0.2;

/// The public checks' one-sided sign test: of the `differ` rows where the model and the
/// constant disagree, the model is right on `wins`; it beats the constant when
/// wins − (differ − wins) > [`SIGN_TEST_Z`]·√differ.
///
/// ```
/// use dpfair::held_out_check::sign_test;
/// assert!(sign_test(100, 60)); // 20 > 10
/// assert!(!sign_test(100, 55)); // 10 is not > 10
/// assert!(!sign_test(0, 0));
/// ```
pub fn sign_test(differ: usize, wins: usize) -> bool {
    let margin = wins as f64 - (differ - wins) as f64;
    differ > 0 && margin > SIGN_TEST_Z * (differ as f64).sqrt()
}

/// The probability bound behind [`handicap`]: a model exactly as accurate as the best constant
/// class on the held-out rows is kept with probability at most this.
pub const TIE_KEEP_PROBABILITY: f64 = 0.01;

/// A regressor's share of its ε spent, inside the fit part, on the fit rows' target mean
/// ([`release_mean`]): the constant the check compares the model with and falls back to. It
/// rests on the fit rows (90 % of them by default) and errs by their sampling and its Laplace
/// noise only (on Adult's weekly hours at ε = 1, a noise standard deviation of about 0.025
/// hours; 0.1 of ε left a held-out excess over the training mean's MSE that six repetitions of
/// Law's GPA resolved, +0.0002 on 0.8615). The fit runs at the rest of ε.
pub const FIT_MEAN_SHARE: f64 = 0.2;

/// A classifier's share of its ε spent, inside the fit part, on choosing the fit rows' most
/// frequent class ([`release_majority`]): the constant the check compares the model with, so the
/// fallback is the training majority and not the held-out rows' own (on a balanced target the
/// held-out rows' majority is the other class about half the time: Law's GPA at 700 rows fell to
/// 0.471 against a 0.540 majority). The fit runs at the rest of ε.
pub const FIT_MAJORITY_SHARE: f64 = 0.05;

/// The fewest held-out rows the check runs on; with fewer, the model is kept unchecked (and the
/// fit says so).
pub const MIN_ROWS: usize = 20;

/// The check's setting (an estimator's; [`crate::Estimator::held_out_check`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeldOutCheck {
    /// The share of the rows held out, in `[0, 0.5]`; 0 turns the check off.
    pub fraction: f64,
    /// A regressor's public target range `[lo, hi]` (the check clips targets to it); `None`
    /// for a classifier.
    #[serde(default)]
    pub range: Option<[f64; 2]>,
}

impl Default for HeldOutCheck {
    fn default() -> Self {
        HeldOutCheck {
            fraction: DEFAULT_FRACTION,
            range: None,
        }
    }
}

impl HeldOutCheck {
    /// Refuse a fraction outside `[0, 0.5]`, naming the parameter.
    pub fn check(&self) -> Result<()> {
        if (0.0..=0.5).contains(&self.fraction) {
            Ok(())
        } else {
            Err(Error::invalid(
                "check_fraction",
                format!(
                    "must be in [0, 0.5] (0 turns the held-out check off), got {}",
                    self.fraction
                ),
            ))
        }
    }

    /// Whether the check runs at all.
    pub fn is_on(&self) -> bool {
        self.fraction > 0.0
    }
}

/// The model's handicap at choice-ε `epsilon`, in correct held-out predictions: `2 ln(1/p)/ε`
/// with p = [`TIE_KEEP_PROBABILITY`]. Permute-and-flip picks a candidate `g` below the best with
/// probability at most `exp(−ε g / 2)` (score sensitivity 1), so a model tied with the best
/// constant is kept with probability at most p.
///
/// ```
/// // ε = 1: the model must predict 9 more held-out rows correctly than the best constant.
/// assert!((dpfair::held_out_check::handicap(1.0) - 9.21).abs() < 0.01);
/// ```
pub fn handicap(epsilon: f64) -> f64 {
    2.0 * (1.0 / TIE_KEEP_PROBABILITY).ln() / epsilon
}

/// What the check did; saved in the model file (older files have none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckOutcome {
    /// Held-out rows (public: the share of the row count).
    pub rows: usize,
    /// The target's number of classes.
    pub classes: usize,
    /// The choice's ε (0 when it did not run: too few rows).
    pub epsilon: f64,
    /// The model's handicap: a classifier's in correct predictions ([`handicap`]); a
    /// regressor's, the level its released gain in squared errors must exceed
    /// ([`gain_threshold`]).
    pub handicap: f64,
    /// The constant class chosen over the model (a class code); `None` keeps the model.
    pub constant: Option<u32>,
    /// A regressor's: the constant value chosen over the model (the fit rows' released target
    /// mean, [`release_mean`]); `None` keeps the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Whether the check used public rows ([`public_check`]: no ε, no handicap).
    #[serde(default)]
    pub public: bool,
    /// A public check's folds when it was cross-validated (LPCT's estimators: every public row
    /// held out once, docs/privacy.md, "The held-out check"); 0: rows held out from the
    /// partition ([`public_check`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub folds: u32,
}

fn is_zero(folds: &u32) -> bool {
    *folds == 0
}

impl CheckOutcome {
    /// One line for a person: what was chosen and on what evidence (released and public
    /// values only), with the class labels in code order. Always in the same words, whatever
    /// was chosen (the choice is a value: which lines a command prints never depends on data).
    ///
    /// ```
    /// use dpfair::held_out_check::CheckOutcome;
    /// let check = CheckOutcome {
    ///     rows: 300, classes: 2, epsilon: 1.0, handicap: 6.0, constant: Some(1), value: None,
    ///     public: false, folds: 0,
    /// };
    /// let line = check.describe(&["no".into(), "yes".into()]);
    /// assert!(line.contains("chosen: `always yes`"), "{line}");
    /// ```
    pub fn describe(&self, labels: &[String]) -> String {
        let chosen = match (self.constant, self.value) {
            (Some(c), _) => format!(
                "always {}",
                labels
                    .get(c as usize)
                    .cloned()
                    .unwrap_or_else(|| c.to_string())
            ),
            (None, Some(v)) => format!("always {}", dpfair_privacy::ledger::readable(v)),
            (None, None) => "the model".to_string(),
        };
        if self.public && self.folds > 0 {
            return format!(
                "check cross-validated on {} public rows in {} folds (no privacy cost; each row \
                 predicted by a tree built on the other folds; the tree is kept only when a sign \
                 test says it beats the public majority class): chosen: `{chosen}` (a constant \
                 means the tree was no better than it; more public rows may give one that is; \
                 --check-fraction 0 turns the check off)",
                self.rows, self.folds
            );
        }
        if self.public {
            return format!(
                "held-out check on {} public rows held out from the partition (no privacy cost; \
                 the tree is kept only when strictly more accurate there than the public \
                 majority class): chosen: `{chosen}` (a constant means the tree was no better \
                 than it; more public or private rows may give one that is; --check-fraction 0 \
                 turns the check off)",
                self.rows
            );
        }
        if self.epsilon == 0.0 {
            return format!(
                "held-out check: not run ({} held-out rows, fewer than {MIN_ROWS}); the model is \
                 used unchecked",
                self.rows
            );
        }
        let how = if self.classes == 0 {
            format!(
                "the model's gain over the fit rows' released target mean, summed over these \
                 rows in squared errors paired row by row, each clipped to ±(an eighth of the \
                 target range)², released with Laplace noise, ε = {}, in parallel with the fit; \
                 the model kept only when the release exceeds {}",
                dpfair_privacy::ledger::readable_up(self.epsilon),
                dpfair_privacy::ledger::readable(self.handicap)
            )
        } else {
            format!(
                "exponential mechanism, ε = {}, in parallel with the fit; the model handicapped \
                 by {:.1} correct predictions against the fit rows' most frequent class",
                dpfair_privacy::ledger::readable_up(self.epsilon),
                self.handicap
            )
        };
        format!(
            "held-out check on {} held-out rows ({how}): chosen: `{chosen}` (a constant means the \
             model was no better than it; more rows or a larger ε may give one that is; \
             --check-fraction 0 turns the check off)",
            self.rows
        )
    }

    /// Whether the check replaced the model by a constant (a class or a value).
    pub fn replaced(&self) -> bool {
        self.constant.is_some() || self.value.is_some()
    }

    /// The constant's output for `n` rows, or `None` when the model was kept.
    pub fn constant_output(&self, n: usize) -> Option<Output> {
        if let Some(v) = self.value {
            return Some(Output::Values(vec![v; n]));
        }
        let c = self.constant?;
        Some(Output::Classes {
            classes: vec![c; n],
            probabilities: Some(Array2::from_shape_fn((n, self.classes), |(_, k)| {
                f64::from(u8::from(k == c as usize))
            })),
        })
    }
}

/// The most frequent class of `fit_rows`' target among `classes`, chosen by permute-and-flip
/// at `epsilon` on the class counts (sensitivity 1 under replace-one and add/remove-one: a
/// record moves one count by 1, or two counts by 1 each in opposite directions, and each score
/// is one count), charged to `ledger`.
///
/// ```
/// use dpfair::held_out_check::release_majority;
/// use dpfair_privacy::{Ledger, Noise};
/// let data = dpfair::estimators::example_data(400, 2, 1);
/// let class = release_majority(&data, 2, 1.0, &mut Ledger::unlimited(), &mut Noise::seeded(1))?;
/// assert!(class < 2);
/// # Ok::<(), dpfair::Error>(())
/// ```
pub fn release_majority(
    fit_rows: &Dataset,
    classes: usize,
    epsilon: f64,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<u32> {
    let mut counts = vec![0.0; classes];
    for y in class_labels(fit_rows)? {
        if let Some(c) = counts.get_mut(y as usize) {
            *c += 1.0;
        }
    }
    let i = exponential_mechanism(
        ledger,
        noise,
        "held-out check's fallback: the fit rows' most frequent class (class counts)",
        &counts,
        1.0,
        epsilon,
    )?;
    Ok(i as u32)
}

/// `predict()`, unless the held-out check `check` chose a constant class: then that class for
/// each of `rows` rows (what a fitted model file predicts).
pub(crate) fn predict_or_constant(
    check: Option<&CheckOutcome>,
    rows: usize,
    predict: impl FnOnce() -> Result<Output>,
) -> Result<Output> {
    match check.and_then(|c| c.constant_output(rows)) {
        Some(out) => Ok(out),
        None => predict(),
    }
}

/// The class labels of a class target.
pub(crate) fn class_labels(data: &Dataset) -> Result<Vec<u32>> {
    match &data.target {
        Some(Target::Binary(y)) => Ok(y.iter().map(|&v| u32::from(v)).collect()),
        Some(Target::Multiclass { labels, .. }) => Ok(labels.clone()),
        _ => Err(Error::InvalidData(
            "the held-out check needs a class target".into(),
        )),
    }
}

/// The choice itself (module docs): permute-and-flip at `epsilon` between the model (its count
/// of correct predictions on `held_out`, less [`handicap`]) and the constant class `constant`
/// (its row count there), charged to `ledger`. Returns `Some(constant)` when the constant is
/// chosen, `None` for the model.
pub fn choose<M: Predictor>(
    model: &M,
    held_out: &Dataset,
    constant: u32,
    epsilon: f64,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Option<u32>> {
    let (model_correct, counts) = scores(model, held_out, noise)?;
    let scores = [
        model_correct - handicap(epsilon),
        counts.get(constant as usize).copied().unwrap_or(0.0),
    ];
    let i = exponential_mechanism(
        ledger,
        noise,
        "held-out check: the model or the fit rows' most frequent class (correct predictions)",
        &scores,
        1.0,
        epsilon,
    )?;
    Ok((i > 0).then_some(constant))
}

/// A regressor's clip of its paired differences, as a share of the public target range
/// squared: τ = (hi − lo)²/64 = ((hi − lo)/8)² ([`difference_clip`]). A useful model's
/// differences are far smaller than the range squared (the model moves the prediction by a
/// fraction of the target's spread): with ordinary least squares on Law's GPA (range ±4) and
/// Adult's weekly hours (1 to 99), 90 % of the held-out |d| lie below 0.9 and 125–144, against
/// τ = 1 and 150. Of the shares 1/1024 to 1/16, 1/64 is the largest at full power on the private
/// models of both whole files; smaller ones clip Adult's gain away (1/1024) or keep more of the
/// worse models on 4,000 rows (1/256), larger ones lose power (BENCHMARKS.md, "Regressors'
/// held-out check").
pub const DIFFERENCE_CLIP_SHARE: f64 = 1.0 / 64.0;

/// τ, the clip of a regressor's paired differences on `range` ([`DIFFERENCE_CLIP_SHARE`]).
///
/// ```
/// assert_eq!(dpfair::held_out_check::difference_clip([-4.0, 4.0]), 1.0);
/// ```
pub fn difference_clip(range: [f64; 2]) -> f64 {
    (range[1] - range[0]).powi(2) * DIFFERENCE_CLIP_SHARE
}

/// One held-out row's term of a regressor's check: the constant's squared error less the
/// model's, `(y − m)² − (y − f)²`, the target `y` and the prediction `f` clipped to `range`,
/// the difference clipped to ±τ ([`difference_clip`]). Positive where the model is nearer.
///
/// ```
/// use dpfair::held_out_check::paired_difference;
/// // (1 − 0)² − (1 − 0.8)² = 0.96; far rows are clipped to τ = 1.
/// assert!((paired_difference(1.0, 0.8, 0.0, [-4.0, 4.0]) - 0.96).abs() < 1e-12);
/// assert_eq!(paired_difference(4.0, 4.0, -4.0, [-4.0, 4.0]), 1.0);
/// assert_eq!(paired_difference(-4.0, 9.0, -4.0, [-4.0, 4.0]), -1.0);
/// ```
pub fn paired_difference(y: f64, f: f64, m: f64, range: [f64; 2]) -> f64 {
    let [lo, hi] = range;
    let (y, f) = (y.clamp(lo, hi), f.clamp(lo, hi));
    let tau = difference_clip(range);
    ((y - m).powi(2) - (y - f).powi(2)).clamp(-tau, tau)
}

/// The level a regressor's released sum of paired differences must exceed for the model to be
/// kept at check-ε `epsilon`: h = b ln(1/(2p)), b = 2τ/ε the Laplace scale and p =
/// [`TIE_KEEP_PROBABILITY`], so that a model no better than the constant (a sum ≤ 0) is kept
/// with probability at most ½ e^(−h/b) = p (up to the noise lattice's rounding of b).
///
/// ```
/// // Range ±4 (τ = 1), ε = 1: the held-out rows' summed gain must exceed 7.8.
/// let h = dpfair::held_out_check::gain_threshold([-4.0, 4.0], 1.0);
/// assert!((h - 7.82).abs() < 0.01);
/// ```
pub fn gain_threshold(range: [f64; 2], epsilon: f64) -> f64 {
    2.0 * difference_clip(range) / epsilon * (1.0 / (2.0 * TIE_KEEP_PROBABILITY)).ln()
}

/// The fit rows' target mean (module docs): the sum of `y` clipped to the public `range`
/// `[lo, hi]`, released with Laplace noise at `epsilon` (sensitivity hi − lo under
/// replacement), over the public row count, clamped to the range; charged to `ledger`.
///
/// ```
/// use dpfair::held_out_check::release_mean;
/// let mut ledger = dpfair::privacy::Ledger::new(dpfair::privacy::Budget::pure(1.0)?);
/// let mut noise = dpfair::privacy::Noise::seeded(7);
/// let y = vec![0.25; 1_000];
/// let m = release_mean(&y, [0.0, 1.0], 1.0, "mean", &mut ledger, &mut noise)?;
/// assert!((m - 0.25).abs() < 0.02); // Laplace scale 10⁻³
/// # Ok::<(), dpfair::Error>(())
/// ```
pub fn release_mean(
    y: &[f64],
    range: [f64; 2],
    epsilon: f64,
    label: &str,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<f64> {
    let [lo, hi] = range;
    let laplace = dpfair_privacy::mechanisms::Laplace::from_epsilon(hi - lo, epsilon)?;
    let sum = laplace.release(
        ledger,
        noise,
        label,
        y.iter().map(|v| v.clamp(lo, hi)).sum(),
    )?;
    Ok((sum / y.len().max(1) as f64).clamp(lo, hi))
}

/// A regressor's choice (module docs; docs/privacy.md, "The held-out check"): the sum over the
/// held-out rows of the paired differences `(y − m)² − (y − f(x))²` between the constant `mean`
/// (the fit rows' released mean) and the model, each clipped to ±τ ([`paired_difference`]), is
/// released with Laplace noise at `epsilon`, and the model is kept only when the release exceeds
/// [`gain_threshold`]. Returns `mean` when the model is replaced (`None`: kept), and the
/// threshold.
///
/// **Sensitivity 2τ.** `mean` and the model are released by the fit part (the other rows), and
/// each row's prediction is drawn from its own stream (module docs), so a row's term depends on
/// that row alone and lies in [−τ, τ]: replacing one held-out row moves the sum by at most 2τ.
/// Pairing is what makes τ small: a term is the model's gain on its row, of the order of the
/// distance between the two predictions times the residual, where each squared error alone
/// spans the whole range squared; the sum is ε-DP, and the choice post-processes it. The
/// threshold covers the noise, not sampling: a model within its sampling noise of the mean can
/// pass (docs/privacy.md, "The held-out check").
pub fn choose_value<M: Predictor>(
    model: &M,
    held_out: &Dataset,
    range: [f64; 2],
    mean: f64,
    epsilon: f64,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<(Option<f64>, f64)> {
    let y = crate::inputs::real_target(held_out, "the held-out check")?;
    let out = row_by_row(|d, s| Ok(model.predict(d, s)?), held_out, noise)?;
    let predicted = out.values().ok_or_else(|| {
        Error::InvalidData("the held-out check of a real target needs a regressor".into())
    })?;
    let gain: f64 = y
        .iter()
        .zip(predicted)
        .map(|(&yi, &f)| paired_difference(yi, f, mean, range))
        .sum();
    let laplace =
        dpfair_privacy::mechanisms::Laplace::from_epsilon(2.0 * difference_clip(range), epsilon)?;
    let released = laplace.release(
        ledger,
        noise,
        "held-out check: the model's gain over the released mean (paired squared errors, clipped)",
        gain,
    )?;
    let h = gain_threshold(range, epsilon);
    Ok(((released <= h).then_some(mean), h))
}

/// The check on public rows (`dpfair ldp fit`'s public sample, rows held out from a partition
/// built before): the model is kept only when a one-sided sign test says it is more accurate
/// than the public majority class `majority` on `held_out`: of the D rows where they differ
/// (one of the two is right on each), the model is right on W with W − (D − W) >
/// [`SIGN_TEST_Z`]·√D ([`sign_test`]). Public data only: nothing is charged. LPCT's estimators
/// cross-validate instead (every public row builds the partition and is held out once).
pub fn public_check<M: Predictor>(
    model: &M,
    held_out: &Dataset,
    majority: u32,
    noise: &mut Noise,
) -> Result<CheckOutcome> {
    let y: Vec<u32> = match &held_out.target {
        Some(Target::Binary(y)) => y.iter().map(|&v| u32::from(v)).collect(),
        _ => {
            return Err(Error::InvalidData(
                "the public check needs a binary target".into(),
            ));
        }
    };
    let out = row_by_row(|d, s| Ok(model.predict(d, s)?), held_out, noise)?;
    let predicted = out
        .classes()
        .ok_or_else(|| Error::InvalidData("the public check needs a classifier".into()))?;
    let (mut differ, mut wins) = (0usize, 0usize);
    for (&p, &yi) in predicted.iter().zip(&y) {
        if p != majority {
            differ += 1;
            wins += usize::from(p == yi);
        }
    }
    let beats = sign_test(differ, wins);
    Ok(CheckOutcome {
        rows: held_out.n_rows(),
        classes: 2,
        epsilon: 0.0,
        handicap: 0.0,
        constant: (!beats).then_some(majority),
        value: None,
        public: true,
        folds: 0,
    })
}

/// The candidates' counts of correct predictions on `held_out`: the model's first, then each
/// constant class's (the class's row count). Each row's prediction is drawn from its own stream
/// (module docs).
fn scores<M: Predictor>(
    model: &M,
    held_out: &Dataset,
    noise: &mut Noise,
) -> Result<(f64, Vec<f64>)> {
    let y = class_labels(held_out)?;
    let out = row_by_row(|d, s| Ok(model.predict(d, s)?), held_out, noise)?;
    let predicted = out
        .classes()
        .ok_or_else(|| Error::InvalidData("the held-out check needs a classifier".into()))?;
    let mut correct = 0.0;
    let mut counts = Vec::new();
    for (&p, &yi) in predicted.iter().zip(&y) {
        correct += f64::from(u8::from(p == yi));
        let c = yi as usize;
        if counts.len() <= c {
            counts.resize(c + 1, 0.0);
        }
        counts[c] += 1.0;
    }
    Ok((correct, counts))
}

/// `model`'s predictions for every row of `held_out`, each row predicted alone from its own
/// stream (seeded from the public stream), so that a randomised model's draw for one row never
/// depends on another row's data (module docs).
pub(crate) fn row_by_row(
    predict: impl Fn(&Dataset, &mut Noise) -> Result<Output>,
    held_out: &Dataset,
    noise: &mut Noise,
) -> Result<Output> {
    let mut classes = Vec::new();
    let mut values = Vec::new();
    for i in 0..held_out.n_rows() {
        let mut stream = Noise::seeded(noise.public_u64());
        match predict(&held_out.select(&[i]), &mut stream)? {
            Output::Classes { classes: c, .. } => classes.extend(c),
            Output::Values(v) => values.extend(v),
        }
    }
    Ok(if values.is_empty() {
        Output::Classes {
            classes,
            probabilities: None,
        }
    } else if classes.is_empty() {
        Output::Values(values)
    } else {
        return Err(Error::InvalidData(
            "a model returned classes for some rows and values for others".into(),
        ));
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimator::Estimator;
    use crate::estimators::{DpLogistic, example_data, example_schema};
    use crate::model::ModelFile;
    use crate::pipeline::{Scaling, fit};
    use crate::{Params, Session};
    use dpfair_data::Loaded;
    use dpfair_privacy::Composition;
    use rand::{RngExt, SeedableRng};

    /// `example_data` with its target replaced by one independent of everything: 95 % ones.
    fn no_signal(n: usize, seed: u64) -> Loaded {
        let mut data = example_data(n, 2, seed);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xabc);
        data.target = Some(Target::Binary(
            (0..n)
                .map(|_| u8::from(rng.random::<f64>() < 0.95))
                .collect(),
        ));
        Loaded::in_memory(data, example_schema(2))
    }

    /// `est` through [`fit`] at (ε, δ) = (1, 10⁻⁵) on unscaled features, with seeded noise.
    fn seeded_fit<E: Estimator>(
        est: &E,
        loaded: &mut Loaded,
        seed: u64,
    ) -> crate::Fitted<E::Model> {
        let mut session = Session::new(1.0, 1e-5)
            .unwrap()
            .with_noise(Noise::seeded(seed));
        fit(est, loaded, &Scaling::None, &mut session).unwrap()
    }

    fn checked_fit(loaded: &mut Loaded, seed: u64) -> crate::Fitted<dpfair_learn::PrivateLogistic> {
        let est = DpLogistic::params()
            .epsilon(1.0)
            .substitution(true)
            .epochs(5)
            .check()
            .unwrap();
        seeded_fit(&est, loaded, seed)
    }

    #[test]
    fn a_model_without_signal_gives_way_to_the_majority_class() {
        // The target is independent of x: the model at best ties always predicting 1, and a tie
        // is kept with probability ≤ 0.01 (the handicap). Of 20 fits at most 2 may keep it
        // (P(≥ 3 of 20 | p = 0.01) = 0.001); a constant chosen must be the majority class.
        let mut kept = 0;
        for seed in 0..20 {
            let mut loaded = no_signal(2_000, seed);
            let fitted = checked_fit(&mut loaded, seed);
            let check = fitted.check.clone().unwrap();
            assert_eq!((check.rows, check.epsilon), (200, 1.0));
            match check.constant {
                None => kept += 1,
                Some(c) => assert_eq!(c, 1),
            }
        }
        assert!(kept <= 2, "kept {kept} of 20");
    }

    #[test]
    fn a_model_with_signal_is_kept_and_the_check_costs_nothing_beyond_the_fit() {
        // example_data's logit 4(x̄ − ½) ± ½: DP-SGD beats the constant (≈ 0.6 of rows) by
        // ≈ 10 points, ≈ 40 of 400 held-out rows, against a handicap of 9.2: a candidate 30
        // below the best is chosen with probability ≤ e^{−15}.
        for seed in 0..3 {
            let mut loaded = Loaded::in_memory(example_data(4_000, 2, seed), example_schema(2));
            let fitted = checked_fit(&mut loaded, seed);
            assert_eq!(fitted.check.as_ref().unwrap().constant, None, "seed {seed}");
            assert!((fitted.ledger.total().unwrap().epsilon - 1.0).abs() < 1e-9);
            // Every release but the check's is inside the fit rows.
            let (mut fit_part, mut check_part) = (0, 0);
            for e in fitted.ledger.entries() {
                let Composition::Parallel { part, within, .. } = &e.composition else {
                    panic!("a release outside the split: {}", e.label);
                };
                let outer = within.first().map_or(part, |s| &s.part);
                match outer.as_str() {
                    "fit rows" => fit_part += 1,
                    "held-out check rows" => check_part += 1,
                    other => panic!("{other}"),
                }
            }
            assert_eq!(check_part, 1);
            assert!(fit_part >= 1);
            // `loaded` ends with every row, scaled as the fit rows were.
            assert_eq!(loaded.dataset.n_rows(), 4_000);
        }
    }

    #[test]
    fn the_model_file_predicts_the_chosen_constant() {
        let mut loaded = no_signal(2_000, 3);
        let mut fitted = checked_fit(&mut loaded, 3);
        fitted.check.as_mut().unwrap().constant = Some(0);
        let file = fitted.to_model_file(loaded.schema.clone()).unwrap();
        let back = ModelFile::from_json(&file.to_json().unwrap(), "test").unwrap();
        assert_eq!(back.check, fitted.check);
        let mut noise = Noise::seeded(1);
        let out = back.predict(&loaded.dataset, &mut noise).unwrap();
        assert!(out.classes.unwrap().iter().all(|&c| c == 0));
        let direct = fitted.predict(&loaded.dataset, &mut noise).unwrap();
        let Output::Classes { classes, .. } = direct else {
            panic!()
        };
        assert!(classes.iter().all(|&c| c == 0));
        // A file without a check (every file before it) has no `check` field.
        fitted.check = None;
        let text = fitted
            .to_model_file(loaded.schema)
            .unwrap()
            .to_json()
            .unwrap();
        assert!(!text.contains("\"check\""));
    }

    /// Predicts 1 where the first feature exceeds ½.
    struct Threshold;

    impl Predictor for Threshold {
        fn method(&self) -> &'static str {
            "threshold"
        }
        fn predict(&self, data: &Dataset, _: &mut Noise) -> crate::predictor::Result<Output> {
            Ok(Output::Classes {
                classes: data
                    .features
                    .column(0)
                    .iter()
                    .map(|&x| u32::from(x > 0.5))
                    .collect(),
                probabilities: None,
            })
        }
    }

    #[test]
    fn the_choice_is_epsilon_dp_on_neighbouring_held_out_rows_empirically() {
        // Two held-out sets that differ in one row, chosen to move every score: the replaced
        // row was labelled 1 and predicted right; its replacement is labelled 0 and predicted
        // wrong. Scores (model, class 1) = (38, 21) → (37, 20); at ε = 0.5 the handicap is
        // 18.4 rows, so both outcomes are likely on both sides. Each outcome's frequency over
        // 40,000 draws per side; its log-ratio between the sides must be ≤ ε up to 4 standard
        // errors (delta method: √((1−p)/(Np)) per side, ≈ 0.02 here). Power: a mechanism
        // leaking twice its ε (sensitivity counted at half) could move a log-ratio to 1.0,
        // some 20 standard errors above the bound.
        let eps = 0.5;
        let make = |swap: bool| {
            let mut x = Vec::new();
            let mut y = Vec::new();
            for i in 0..40 {
                // 21 rows labelled 1, 19 labelled 0; the model is wrong on rows 19 and 20.
                let label = u8::from(i < 21);
                let right = !(i == 19 || i == 20);
                x.push(if right == (label == 1) { 0.9 } else { 0.1 });
                y.push(label);
            }
            if swap {
                x[0] = 0.9;
                y[0] = 0;
            }
            Dataset {
                features: Array2::from_shape_vec((40, 1), x).unwrap(),
                feature_names: vec!["x".into()],
                groups: None,
                target: Some(Target::Binary(y)),
            }
        };
        let (d, d2) = (make(false), make(true));
        let mut scratch = Noise::seeded(0);
        assert_eq!(
            scores(&Threshold, &d, &mut scratch).unwrap(),
            (38.0, vec![19.0, 21.0])
        );
        assert_eq!(
            scores(&Threshold, &d2, &mut scratch).unwrap(),
            (37.0, vec![20.0, 20.0])
        );
        let freq = |data: &Dataset, seed: u64| {
            outcome_frequencies(seed, |noise| {
                let mut ledger = Ledger::unlimited();
                choose(&Threshold, data, 1, eps, &mut ledger, noise)
                    .unwrap()
                    .is_some()
            })
        };
        let (p, q) = (freq(&d, 1), freq(&d2, 2));
        assert!(p.iter().chain(&q).all(|&f| f > 0.05), "{p:?} {q:?}");
        assert_log_ratios_within(p, q, eps);
    }

    /// Draws of the audits below: each outcome's frequency has a standard error of at most
    /// √(1/4 / 40,000) = 0.0025.
    const AUDIT_DRAWS: usize = 40_000;

    /// The frequencies of `false` and `true` over [`AUDIT_DRAWS`] calls of `outcome`, all
    /// drawing from one stream seeded `seed`.
    fn outcome_frequencies(seed: u64, mut outcome: impl FnMut(&mut Noise) -> bool) -> [f64; 2] {
        let mut counts = [0usize; 2];
        let mut noise = Noise::seeded(seed);
        for _ in 0..AUDIT_DRAWS {
            counts[usize::from(outcome(&mut noise))] += 1;
        }
        counts.map(|c| c as f64 / AUDIT_DRAWS as f64)
    }

    /// Each outcome's |ln(p/q)| on two neighbouring inputs is within ε up to 4 standard errors
    /// of the log-ratio of two frequencies (delta method).
    fn assert_log_ratios_within(p: [f64; 2], q: [f64; 2], eps: f64) {
        let draws = AUDIT_DRAWS as f64;
        for k in 0..2 {
            let se = ((1.0 - p[k]) / (draws * p[k]) + (1.0 - q[k]) / (draws * q[k])).sqrt();
            let ratio = (p[k] / q[k]).ln().abs();
            assert!(
                ratio <= eps + 4.0 * se,
                "outcome {k}: |ln(p/q)| = {ratio}, se {se}"
            );
        }
    }

    /// `example_data` with a real target: `2 x0 − x1` plus noise (`signal`), or uniform noise
    /// on [0, 1] alone.
    fn real_target(n: usize, seed: u64, signal: bool) -> Loaded {
        let mut data = example_data(n, 2, seed);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xdef);
        let y = (0..n)
            .map(|i| {
                let e: f64 = rng.random();
                if signal {
                    2.0 * data.features[[i, 0]] - data.features[[i, 1]] + 0.1 * e
                } else {
                    e
                }
            })
            .collect();
        data.target = Some(Target::Real(y));
        let mut schema = example_schema(2);
        schema.target.as_mut().unwrap().encoding = dpfair_data::TargetEncoding::Real;
        Loaded::in_memory(data, schema)
    }

    fn linear_fit(
        loaded: &mut Loaded,
        seed: u64,
    ) -> crate::Fitted<dpfair_learn::LinearRegressionFit> {
        let est = crate::estimators::DpLinear::params()
            .epsilon(1.0)
            .target_range(-1.0, 2.2)
            .check()
            .unwrap();
        seeded_fit(&est, loaded, seed)
    }

    #[test]
    fn a_regressor_is_kept_with_signal_and_replaced_by_the_released_mean_without() {
        // With signal: Var(2 x0 − x1) = 5/12 ≈ 0.42, the model's error ≈ 0.001: each held-out
        // row's paired difference is ≈ (y − m)², clipped at τ = (3.2/8)² = 0.16 (reached where
        // |y − m| > 0.4, about half the rows): a sum of ≈ 0.1 × 400 = 40 against the threshold
        // 2τ ln 50 ≈ 1.25 and Laplace noise of scale 0.32: the model is kept (every one of 3 fits).
        for seed in 0..3 {
            let mut loaded = real_target(4_000, seed, true);
            let fitted = linear_fit(&mut loaded, seed);
            let check = fitted.check.clone().unwrap();
            assert_eq!((check.classes, check.value), (0, None), "seed {seed}");
            assert!((fitted.ledger.total().unwrap().epsilon - 1.0).abs() < 1e-9);
        }
        // Without: the model's noisy coefficients make it worse than the mean (E d = −E(f − m)²
        // < 0), and a tie is kept with probability ≤ 0.01 from the noise. Sampling adds a sum of
        // standard deviation ≈ 2·sd(f − m)·sd(y)·√400 = 11.5·sd(f − m) against the threshold
        // 2τ ln 50 = 1.25: a model within 0.1 of the mean rarely passes on it, one further
        // loses E(f − m)² ≥ 0.01 per row, 4 in all. Of 10 fits at most 2 may keep it. The fallback is the fit rows' released mean
        // (3,600 targets uniform on [0, 1]: sampling sd 0.005, Laplace at ε = 0.2 over range
        // 3.2: sd 0.0063): sd ≈ 0.008, so it is within 0.04 of ½ (5 sd: P(any of 10 beyond)
        // < 10⁻⁵); the held-out rows' mean alone (sd 0.014 and, at ε = 1/4, 0.045) would need
        // 0.25.
        let mut kept = 0;
        for seed in 0..10 {
            let mut loaded = real_target(4_000, seed, false);
            let fitted = linear_fit(&mut loaded, seed);
            let fallback = fitted.ledger.entries().iter().filter(|e| {
                e.label.starts_with("held-out check's fallback")
                    && e.cost
                        == (dpfair_privacy::Cost::Pure {
                            epsilon: FIT_MEAN_SHARE,
                        })
            });
            assert_eq!(
                fallback.count(),
                1,
                "the fit rows' mean at its share of ε = 1"
            );
            assert!((fitted.ledger.total().unwrap().epsilon - 1.0).abs() < 1e-9);
            match fitted.check.unwrap().value {
                None => kept += 1,
                Some(v) => assert!((v - 0.5).abs() < 0.04, "{v}"),
            }
        }
        assert!(kept <= 2, "kept {kept} of 10");
    }

    /// Predicts each row's first feature (a regressor).
    struct FirstFeature;

    impl Predictor for FirstFeature {
        fn method(&self) -> &'static str {
            "first feature"
        }
        fn predict(&self, data: &Dataset, _: &mut Noise) -> crate::predictor::Result<Output> {
            Ok(Output::Values(data.features.column(0).to_vec()))
        }
    }

    /// Held-out rows whose predictions (the only feature) are `f` and targets `y`.
    fn regression_rows(f: Vec<f64>, y: Vec<f64>) -> Dataset {
        Dataset {
            features: Array2::from_shape_vec((f.len(), 1), f).unwrap(),
            feature_names: vec!["f".into()],
            groups: None,
            target: Some(Target::Real(y)),
        }
    }

    #[test]
    fn a_paired_difference_lies_within_the_clip_on_adversarial_rows() {
        // Every corner and out-of-range value of target and prediction, for means across the
        // range: each term lies in [−τ, τ], so replacing one held-out row moves the sum by at
        // most 2τ, the sensitivity the release declares; the two extremes are reached, so 2τ is
        // the least bound. Unclipped, the terms span ±(hi − lo)² = ±64 here.
        let range = [-4.0, 4.0];
        let tau = difference_clip(range);
        let values = [-1e9, -5.0, -4.0, -3.9, -1.0, 0.0, 0.3, 2.0, 4.0, 4.1, 1e9];
        let (mut least, mut most) = (f64::INFINITY, f64::NEG_INFINITY);
        for &m in &[-4.0, -1.5, 0.0, 0.7, 4.0] {
            for &y in &values {
                for &f in &values {
                    let d = paired_difference(y, f, m, range);
                    assert!(d.abs() <= tau, "y {y}, f {f}, m {m}: {d}");
                    least = least.min(d);
                    most = most.max(d);
                }
            }
        }
        assert_eq!((least, most), (-tau, tau));
        let mut ledger = Ledger::unlimited();
        let rows = regression_rows(vec![4.0; 30], vec![4.0; 30]);
        choose_value(
            &FirstFeature,
            &rows,
            range,
            -4.0,
            1.0,
            &mut ledger,
            &mut Noise::seeded(1),
        )
        .unwrap();
        let [entry] = ledger.entries() else { panic!() };
        // The declared 2τ, plus the noise lattice's rounding.
        assert_eq!(entry.mechanism, "laplace");
        assert!(
            (2.0 * tau..2.0 * tau * (1.0 + 1e-5)).contains(&entry.sensitivity),
            "{}",
            entry.sensitivity
        );
    }

    #[test]
    fn the_regressors_choice_is_epsilon_dp_on_neighbouring_held_out_rows_empirically() {
        // Two held-out sets of 40 rows (range ±4, τ = 1, mean 0) that differ in one row, chosen
        // to move the sum by the whole sensitivity 2τ: a row the model predicts exactly
        // (y = f = 1: term +1) replaced by one it misses (y = 0, f = 1: term −1). Sums 16 and
        // 14 against the threshold 15.6 at ε = 0.5 (Laplace scale 4): the model is kept with
        // probability 0.548 and 0.335, a log-ratio of 0.49, next to the bound 0.5. Each outcome's
        // frequency over 40,000 draws per side; its log-ratio must be ≤ ε up to 4 standard
        // errors (≈ 0.04 here). Power: a release at half the sensitivity (scale 2) moves the
        // kept log-ratio to ln(0.595/0.225) = 0.97, some 45 standard errors above the bound.
        let eps = 0.5;
        let range = [-4.0, 4.0];
        assert!((gain_threshold(range, eps) - 15.65).abs() < 0.01);
        let make = |swap: bool| {
            let mut f = vec![0.0; 40];
            let mut y = vec![0.0; 40];
            for i in 0..16 {
                f[i] = 1.0;
                y[i] = 1.0;
            }
            if swap {
                y[0] = 0.0;
            }
            regression_rows(f, y)
        };
        let freq = |data: &Dataset, seed: u64| {
            outcome_frequencies(seed, |noise| {
                let mut ledger = Ledger::unlimited();
                choose_value(&FirstFeature, data, range, 0.0, eps, &mut ledger, noise)
                    .unwrap()
                    .0
                    .is_some()
            })
        };
        let (p, q) = (freq(&make(false), 1), freq(&make(true), 2));
        assert_log_ratios_within(p, q, eps);
        // The sides do differ (the audit has power): kept 0.548 against 0.335.
        assert!(p[0] - q[0] > 0.15, "{p:?} {q:?}");
    }

    /// `r` held-out rows with y = b·z + e (z uniform on [−1, 1], e uniform on [−1.5, 1.5]:
    /// variance b²/3 + 0.75, Law's GPA's ≈ 0.86 at small b) and predictions b·z when `useful`,
    /// b·z' (z' independent of y) otherwise; the mean is 0, exactly y's.
    fn gpa_like(r: usize, b: f64, useful: bool, seed: u64) -> Dataset {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut u = |w: f64| w * (2.0 * rng.random::<f64>() - 1.0);
        let (mut f, mut y) = (Vec::new(), Vec::new());
        for _ in 0..r {
            let (z, e, other) = (u(1.0), u(1.5), u(1.0));
            y.push(b * z + e);
            f.push(b * if useful { z } else { other });
        }
        regression_rows(f, y)
    }

    #[test]
    fn a_regressor_slightly_better_than_the_mean_is_kept_and_a_worse_one_is_not() {
        // Law's GPA through fair regression: the model's held-out MSE is ≈ 0.009 below the
        // mean's (0.853 against 0.862), on ≈ 2,100 held-out rows. Here b = √0.03: the model
        // f = b·z gains E d = b²/3 = 0.01 per row, on 2,000 rows (range ±4, τ = 1, no term
        // clipped: |d| = |b z (2y − b z)| ≤ 0.18·3.3 < 1); the sum has mean 20 and, d ≈ 2 b z e,
        // standard deviation √2000 · 2b · √(1/3 · 0.75) ≈ 7.7, against the threshold 7.8 at
        // ε = 1 and Laplace noise of scale 2 (sd 2.8): kept with probability
        // Φ((20 − 7.8)/√(7.7² + 2.8²)) ≈ Φ(1.49) ≈ 0.93 (normal approximation). Of 40 fits at
        // least 31 are kept: P(Bin(40, 0.93) ≤ 30) ≈ 10⁻³. The former check (squared errors
        // capped at (8/4)² = 4, divided by it, handicap 2 ln 100/0.75 = 12.3) saw a gain of
        // 20/4 = 5 against 12.3 and kept such a model in some 1 fit in 8.
        //
        // A model that does not predict y (b·z', independent) loses b²/3 = 0.01 per row: sum
        // mean −20, standard deviation 7.7; kept only when the release exceeds 7.8, probability
        // ≈ Φ((−20 − 7.8)/8.2) ≈ 4·10⁻⁴: at most 2 of 40 (P(≥ 3) < 10⁻⁵).
        let b = 0.03_f64.sqrt();
        let (mut kept, mut kept_useless) = (0, 0);
        let mut noise = Noise::seeded(7);
        for seed in 0..40 {
            for useful in [true, false] {
                let rows = gpa_like(2_000, b, useful, seed);
                let mut ledger = Ledger::unlimited();
                let (c, h) = choose_value(
                    &FirstFeature,
                    &rows,
                    [-4.0, 4.0],
                    0.0,
                    1.0,
                    &mut ledger,
                    &mut noise,
                )
                .unwrap();
                assert!((h - 7.82).abs() < 0.01);
                if c.is_none() {
                    *(if useful { &mut kept } else { &mut kept_useless }) += 1;
                } else {
                    assert_eq!(c, Some(0.0));
                }
            }
        }
        assert!(kept >= 31, "kept {kept} of 40");
        assert!(
            kept_useless <= 2,
            "kept {kept_useless} of 40 useless models"
        );
    }

    #[test]
    fn neighbouring_regression_data_give_the_same_ledger() {
        // Data sets that differ in one row (its features and target moved to the range's ends,
        // the target beyond it), fitted with the same seeds: the ledger's entries (labels,
        // sensitivities, scales, costs, parts) are the same, whichever way the check goes. Half
        // the rows are held out, so of the 8 rows changed one at a time some fall among the
        // held-out rows (all 8 in the fit part: probability 2⁻⁸ per seed).
        let shape = |loaded: &mut Loaded, seed| {
            let est = crate::estimators::DpLinear::params()
                .epsilon(1.0)
                .target_range(-1.0, 2.2)
                .check_fraction(0.5)
                .check()
                .unwrap();
            let fitted = seeded_fit(&est, loaded, seed);
            let entries: Vec<String> = fitted
                .ledger
                .entries()
                .iter()
                .map(|e| format!("{e:?}"))
                .collect();
            entries
        };
        for seed in 0..2 {
            let expected = shape(&mut real_target(1_000, seed, seed == 0), seed);
            assert!(expected.iter().any(|e| e.contains("model's gain")));
            for row in 0..8 {
                let mut b = real_target(1_000, seed, seed == 0);
                b.dataset.features[[row, 0]] = 1.0;
                b.dataset.features[[row, 1]] = 0.0;
                if let Some(Target::Real(y)) = &mut b.dataset.target {
                    y[row] = -1e6;
                }
                assert_eq!(shape(&mut b, seed), expected, "seed {seed}, row {row}");
            }
        }
    }
}
