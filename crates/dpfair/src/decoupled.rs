//! The decoupled private fair binary classifier of Ghoukasian & Asoodeh, "Differentially
//! Private Fair Binary Classifications" (arXiv:2402.15603, ISIT 2024).
//!
//! [`fit`] runs the paper's pipeline (Algorithm 2 with its DP-SGD base model) on the rows it is given:
//!
//! 1. a random, data-independent split ([`split`]): 1 − `post_fraction` of the rows, at most
//!    `base_rows`, train the base model, the others form Algorithm 2's data set D (disjoint, as
//!    Theorem 3's Hoeffding step needs; `docs/deviations.md#decoupled-rates-on-training-rows`);
//! 2. base classifiers h₀, h₁ by DP-SGD ([`base`]: joint h(x, a), as the authors' code, or one
//!    model per group);
//! 3. Algorithm 2 steps 1–3: the groups' positive rates on D, Laplace-noised and clamped
//!    ([`private_rates`]);
//! 4. Algorithm 2 steps 4–7 / Algorithm 1: the randomized flips to the midpoint rate
//!    ([`flips`]). Predicting draws one s ~ U(0, 1) per row from the caller's `rng`.
//!
//! Only the training rows are needed at once: [`fit_parts`] takes them in memory and streams D
//! in batches, so a data set larger than memory is fitted from Parquet with the training part
//! ([`collect_training`], at most `base_rows` rows) held whole (`docs/data.md`). [`fit`] on rows
//! held whole runs the same code with its data as one batch.
//!
//! ## Accounting
//!
//! [`Accounting::Strict`] (default): (ε, δ)-DP for replace-one neighbours (the paper's
//! Definition 1) with nothing left unaccounted: DP-SGD calibrated for substitution, the group
//! counts released with the rates (one Laplace release of the 2 × 2 count table), no
//! data-derived normalisation (features are used as given: scale them with public bounds).
//! The base-model rows and D are disjoint parts of the public split: each release runs at the
//! whole `(ε, δ)` and the ledger records the partition (parallel composition; the paper composes
//! them basically, `docs/deviations.md#decoupled-basic-composition`, which paper mode keeps).
//!
//! [`Accounting::Paper`]: the authors' procedure. z-scores from the data and the group counts
//! of D are recorded in the ledger as non-private steps (ε = ∞; `docs/deviations.md#decoupled-non-private-preprocessing`, `docs/deviations.md#decoupled-neighbours-of-the-laplace-step`); DP-SGD runs with
//! the given noise multiplier at the Opacus sampling rate q = 1/⌈m/B⌉ and the ledger records the
//! ε it really spends for add/remove neighbours (`docs/deviations.md#decoupled-accounting-parameters-and-split-sizes`, `docs/deviations.md#decoupled-sampling-rate-q`, `docs/deviations.md#decoupled-accountants-certify-add-remove`); ε₀ = ε₁ Laplace releases with
//! sensitivity 1/n_a.

pub mod base;
pub mod bounds;
pub mod config;
pub mod error;
pub mod flips;
pub mod private_rates;
pub mod scaling;
pub mod score_thresholds;
pub mod split;

pub use base::{Base, BaseModel, RunInfo};
pub use config::{Config, Training};
pub use error::{DecoupledError, Result};
pub use flips::{FairFlips, FlipRule};
pub use private_rates::{RateRelease, ReleasedRates};
pub use scaling::Standardize;
pub use split::{SplitPlan, TrainingRows};

pub use crate::predictor::Accounting;
use dpfair_data::Dataset;
use dpfair_learn::DpSgdConfig;
use dpfair_privacy::{Entry, Ledger, Noise, Partition, Relation};
use ndarray::{Array2, ArrayView2, CowArray, Ix2};
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

/// The fitted classifier h*_{ε',δ',Fair}: base classifiers and the flips of the released rates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub base: Base,
    pub flips: FairFlips,
    pub rates: ReleasedRates,
    /// Paper mode: the z-scores applied to the features before the base model.
    pub standardize: Option<Standardize>,
    pub accounting: Accounting,
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    pub delta: f64,
    /// The DP-SGD runs (one, or one per group).
    pub runs: Vec<RunInfo>,
    /// ε the DP-SGD part really spends at δ (add/remove in paper mode, as its accountant says).
    pub sgd_epsilon: f64,
    pub split_seed: u64,
    /// Rows of D, the post-processing split (public: the split's sizes follow from n); 0 in
    /// models written before it was recorded.
    #[serde(default)]
    pub post_rows: usize,
    /// [`FlipRule::Scores`]: each group's threshold on the base scores, which replaces the
    /// random flips (`flips` then records the targets they meet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<score_thresholds::ScoreThresholds>,
    /// The fairness level α the flips target (`None` in models written before it was
    /// recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity_level: Option<f64>,
}

/// Group codes of a data set with exactly two groups.
pub fn two_groups(data: &Dataset) -> Result<&[u32]> {
    let g = data.require_groups("decoupled")?;
    if g.count() != 2 {
        return Err(DecoupledError::InvalidData(format!(
            "the decoupled classifier needs exactly two sensitive groups, found {} ({})",
            g.count(),
            g.names.join(", ")
        )));
    }
    Ok(&g.codes)
}

/// The binary target of `data` (checked on the header of a streamed fit too).
fn binary_target(data: &Dataset) -> Result<&[u8]> {
    // Not `require_binary`: whether both classes occur is private, and the method needs none.
    match data.require_target("decoupled")? {
        dpfair_data::Target::Binary(y) => Ok(y.as_slice()),
        other => Err(DecoupledError::InvalidData(format!(
            "the decoupled classifier needs a binary target, the target is {}",
            other.task()
        ))),
    }
}

/// Fits the classifier on `data` (binary target, two groups), charging `ledger` (module doc):
/// [`fit_parts`] on the rows held whole, the split drawn from `config.split_seed` (or a public
/// seed from `noise`).
pub fn fit(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    config.budget_split()?;
    binary_target(data)?;
    two_groups(data)?;
    // 1. Data-independent random split.
    let seed = config.split_seed.unwrap_or_else(|| noise.public_u64());
    let plan = SplitPlan::new(data.n_rows(), config.post_fraction, config.base_rows, seed)?;
    let standardize = match config.accounting {
        Accounting::Strict => None,
        Accounting::Paper => {
            ledger.charge(Entry::non_private(
                "feature z-scores",
                "mean and sample sd of the numeric columns from the data (paper §B, docs/deviations.md#decoupled-non-private-preprocessing)",
            ))?;
            Some(Standardize::fit(data.features.view()))
        }
    };
    let training = collect_training(&plan, |sink| sink(data))?;
    fit_parts(
        config,
        &plan,
        &training,
        standardize,
        ledger,
        noise,
        |sink| sink(data),
    )
}

/// The rows `plan` trains on, from batches of all n rows in order (`feed` hands each to the
/// sink): the only part of the data a streamed fit holds whole.
pub fn collect_training(
    plan: &SplitPlan,
    feed: impl FnOnce(&mut dyn FnMut(&Dataset) -> Result<()>) -> Result<()>,
) -> Result<Dataset> {
    let mut rows = plan.rows();
    let mut parts: Vec<Dataset> = Vec::new();
    feed(&mut |batch| {
        let picked = pick(&mut rows, batch, true)?;
        if !picked.is_empty() {
            parts.push(batch.select(&picked));
        }
        Ok(())
    })?;
    all_rows_seen(plan, &rows)?;
    let mut parts = parts.into_iter();
    let first = parts
        .next()
        .ok_or_else(|| DecoupledError::InvalidData("no rows for the base model".into()))?;
    Ok(parts.fold(first, |acc, p| acc.concat(&p)))
}

/// The rows of `batch` that `rows` assigns to training (`training = true`) or to D.
fn pick(rows: &mut TrainingRows, batch: &Dataset, training: bool) -> Result<Vec<usize>> {
    if batch.n_rows() > rows.left() {
        return Err(DecoupledError::InvalidData(
            "the batches hold more rows than the data set's row count (did the file change \
             between passes?)"
                .into(),
        ));
    }
    Ok((0..batch.n_rows())
        .filter(|_| rows.next_is_training() == training)
        .collect())
}

/// Every one of the plan's n rows was handed over.
fn all_rows_seen(plan: &SplitPlan, rows: &TrainingRows) -> Result<()> {
    if rows.left() != 0 {
        return Err(DecoupledError::InvalidData(format!(
            "the batches hold {} of the data set's {} rows (did the file change between passes?)",
            plan.n - rows.left(),
            plan.n
        )));
    }
    Ok(())
}

/// Steps 2–4 of the fit (module doc) once the split is made: DP-SGD on `training` (the rows
/// `plan` trains on, in memory, features already `standardize`d or not as given), then
/// Algorithm 2 steps 1–3 streamed: `feed` hands every batch of all n rows in order, the rows of
/// D among them are predicted and counted ([`private_rates::RateCounts`]), and the counts are
/// released once. The fit of rows held whole ([`fit`]) and a streamed fit go through here.
pub fn fit_parts(
    config: &Config,
    plan: &SplitPlan,
    training: &Dataset,
    standardize: Option<Standardize>,
    ledger: &mut Ledger,
    noise: &mut Noise,
    feed: impl FnOnce(&mut dyn FnMut(&Dataset) -> Result<()>) -> Result<()>,
) -> Result<Model> {
    let split = config.budget_split()?;
    if training.n_rows() != plan.training {
        return Err(DecoupledError::InvalidData(format!(
            "{} training rows given, the split has {}",
            training.n_rows(),
            plan.training
        )));
    }
    let features = |x: ArrayView2<'_, f64>| -> Array2<f64> {
        match &standardize {
            Some(s) => s.apply(x),
            None => x.to_owned(),
        }
    };
    // 2. Base classifiers by DP-SGD.
    // Any mix of labels and groups trains: DP-SGD needs no class to be present.
    let x_tr = features(training.features.view());
    let g_tr = two_groups(training)?;
    let y_tr: Vec<u32> = binary_target(training)?
        .iter()
        .map(|&y| u32::from(y))
        .collect();
    let sched = config.training.resolve(plan.training, config.accounting);
    let sgd = DpSgdConfig {
        epsilon: split.sgd_epsilon,
        delta: config.delta,
        accountant: config.accountant,
        noise_multiplier: config.noise_multiplier,
        epochs: sched.epochs,
        expected_batch: sched.expected_batch,
        learning_rate: sched.learning_rate,
        clip: sched.clip,
        relation: match config.accounting {
            Accounting::Strict => Relation::Substitution,
            Accounting::Paper => Relation::AddRemove,
        },
        ..DpSgdConfig::default()
    };
    // Strict: the base-model rows and D are disjoint parts of the public split, each released
    // at the whole ε (parallel composition); paper: the authors' basic composition.
    let parts = (config.accounting == Accounting::Strict).then(|| {
        Partition::new(
            "decoupled: base-model rows / rate rows",
            &["base-model rows", "rate rows (D)"],
            plan.seed,
        )
    });
    let in_part =
        |ledger: &mut Ledger, part: usize, f: &mut dyn FnMut(&mut Ledger) -> Result<()>| {
            match &parts {
                Some(p) => {
                    let mut out = Ok(());
                    ledger.in_part(p, part, |l| {
                        out = f(l);
                        Ok(())
                    })?;
                    out
                }
                None => f(ledger),
            }
        };
    let before = ledger.entries().len();
    let mut fitted = None;
    in_part(ledger, 0, &mut |l| {
        fitted = Some(base::fit_base(
            config.base,
            &sgd,
            x_tr.view(),
            g_tr,
            &y_tr,
            l,
            noise,
        )?);
        Ok(())
    })?;
    let (base, runs) = fitted.expect("the base model was fitted");
    drop(x_tr);
    let mut sgd_ledger = Ledger::unlimited();
    for e in &ledger.entries()[before..] {
        sgd_ledger.charge(e.clone())?;
    }
    let sgd_epsilon = sgd_ledger.total_at(config.delta)?.epsilon;
    // 3. Algorithm 2 steps 1–3 on D, batch by batch (by score bins for score-ordered flips).
    // Paper mode releases rates only (its public group counts): the rule is then fewest-changes.
    let by_scores = config.flip_rule == FlipRule::Scores && config.accounting == Accounting::Strict;
    let mut rows = plan.rows();
    let mut counts = private_rates::RateCounts::new();
    let mut score_counts = score_thresholds::ScoreCounts::default();
    feed(&mut |batch| {
        let post = pick(&mut rows, batch, false)?;
        if post.is_empty() {
            return Ok(());
        }
        let d = batch.select(&post);
        let g = two_groups(&d)?;
        let x = features(d.features.view());
        if by_scores {
            score_counts.update(g, &base.scores(x.view(), g)?)
        } else {
            counts.update(g, &base.predict(x.view(), g)?)
        }
    })?;
    all_rows_seen(plan, &rows)?;
    if by_scores {
        let RateRelease::Histogram { epsilon } = split.rates else {
            return Err(DecoupledError::InvalidData(
                "score-ordered flips need strict accounting (the private count table)".into(),
            ));
        };
        let mut released = None;
        in_part(ledger, 1, &mut |l| {
            released = Some(score_counts.release(epsilon, l, noise)?);
            Ok(())
        })?;
        let released = released.expect("the score table was released");
        let (flips, thresholds) = released.thresholds(config.parity_level)?;
        return Ok(Model {
            base,
            flips,
            rates: released.rates(),
            standardize,
            accounting: config.accounting,
            epsilon: config.epsilon,
            delta: config.delta,
            runs,
            sgd_epsilon,
            split_seed: plan.seed,
            post_rows: plan.post,
            thresholds: Some(thresholds),
            parity_level: Some(config.parity_level),
        });
    }
    if let RateRelease::PublicCounts { .. } = split.rates {
        ledger.charge(Entry::non_private(
            "group sizes of D",
            "n₀, n₁ of the post-processing split, public by assumption (paper §III-B, docs/deviations.md#decoupled-neighbours-of-the-laplace-step)",
        ))?;
    }
    let mut released = None;
    in_part(ledger, 1, &mut |l| {
        released = Some(counts.clone().finalize(split.rates, l, noise)?);
        Ok(())
    })?;
    let rates = released.expect("the rates were released");
    // 4. The flips.
    let flips = FairFlips::from_rates_by(
        rates.alpha,
        rates.beta,
        config.parity_level,
        config.flip_rule,
        rates.group_sizes,
    )?;
    Ok(Model {
        base,
        flips,
        rates,
        standardize,
        accounting: config.accounting,
        epsilon: config.epsilon,
        delta: config.delta,
        runs,
        sgd_epsilon,
        split_seed: plan.seed,
        post_rows: plan.post,
        thresholds: None,
        parity_level: Some(config.parity_level),
    })
}

impl Model {
    /// Each group's positive rate after the flips, computed on the released rates (α̃, β̃):
    /// the fit's own private estimate of its parity (post-processing of released values).
    pub fn rates_after_flips(&self) -> [f64; 2] {
        let f = &self.flips;
        let after = |rate: f64, group: u32| {
            if f.down == group {
                rate * f.p_keep
            } else {
                rate + (1.0 - rate) * f.p_flip
            }
        };
        [after(self.rates.alpha, 0), after(self.rates.beta, 1)]
    }

    fn features<'a>(&self, x: ArrayView2<'a, f64>) -> CowArray<'a, f64, Ix2> {
        match &self.standardize {
            Some(s) => s.apply(x).into(),
            None => x.into(),
        }
    }

    /// The base predictions h_{a_i}(x_i).
    pub fn predict_base(&self, x: ArrayView2<'_, f64>, groups: &[u32]) -> Result<Vec<bool>> {
        self.base.predict(self.features(x).view(), groups)
    }

    /// P(Ŷ = 1 | x_i, a_i) for every row.
    pub fn predict_proba(&self, x: ArrayView2<'_, f64>, groups: &[u32]) -> Result<Vec<f64>> {
        if let Some(t) = &self.thresholds {
            let scores = self.base.scores(self.features(x).view(), groups)?;
            return Ok(groups
                .iter()
                .zip(scores)
                .map(|(&g, s)| t.prob_positive(g, s))
                .collect());
        }
        let base = self.predict_base(x, groups)?;
        Ok(groups
            .iter()
            .zip(base)
            .map(|(&g, b)| self.flips.prob_positive(g, b))
            .collect())
    }

    /// One prediction per row, each with a fresh s ~ U(0, 1) from `rng` (Algorithm 2 step 4).
    pub fn predict<R: Rng + ?Sized>(
        &self,
        x: ArrayView2<'_, f64>,
        groups: &[u32],
        rng: &mut R,
    ) -> Result<Vec<bool>> {
        if self.thresholds.is_some() {
            let p = self.predict_proba(x, groups)?;
            return Ok(p.into_iter().map(|p| rng.random::<f64>() < p).collect());
        }
        let base = self.predict_base(x, groups)?;
        Ok(groups
            .iter()
            .zip(base)
            .map(|(&g, b)| self.flips.decide(g, b, rng.random::<f64>()))
            .collect())
    }
}

/// Accuracy and statistical-parity gap of 0/1 predictions (Definition 2 of Ghoukasian & Asoodeh, empirical Δ̂_SP), or of
/// probabilities P(Ŷ = 1) (expected metrics, `docs/deviations.md#decoupled-randomised-predictions`).
/// Computed by the fairness crate; NaN where undefined (an empty group, mismatched lengths).
pub fn accuracy_and_gap(p: &[f64], groups: &[u32], y: &[u8]) -> (f64, f64) {
    let acc = dpfair_fairness::expected_binary_accuracy(p, y).unwrap_or(f64::NAN);
    let gap =
        dpfair_fairness::expected_demographic_disparity(p, groups, 0, 1).map_or(f64::NAN, f64::abs);
    (acc, gap)
}

impl crate::predictor::Predictor for Model {
    fn method(&self) -> &'static str {
        "decoupled"
    }

    fn predict(
        &self,
        data: &Dataset,
        rng: &mut Noise,
    ) -> crate::predictor::Result<crate::predictor::Output> {
        let err = |e: DecoupledError| crate::predictor::ModelError::Method {
            method: "decoupled".into(),
            reason: e.to_string(),
        };
        let groups = two_groups(data).map_err(err)?;
        let x = data.features.view();
        let classes: Vec<u32> = Model::predict(self, x, groups, rng)
            .map_err(err)?
            .into_iter()
            .map(u32::from)
            .collect();
        let p = self.predict_proba(x, groups).map_err(err)?;
        let probabilities =
            Array2::from_shape_fn(
                (p.len(), 2),
                |(i, c)| {
                    if c == 1 { p[i] } else { 1.0 - p[i] }
                },
            );
        Ok(crate::predictor::Output::Classes {
            classes,
            probabilities: Some(probabilities),
        })
    }
}
