//! The decoupled private fair binary classifier of Ghoukasian & Asoodeh, "Differentially
//! Private Fair Binary Classifications" (arXiv:2402.15603, ISIT 2024).
//!
//! [`fit`] runs the paper's pipeline (Algorithm 2 with its DP-SGD base model) on the rows it is given:
//!
//! 1. a random, data-independent split: 1 − `post_fraction` of the rows train the base model,
//!    `post_fraction` form Algorithm 2's data set D (disjoint, as Theorem 3's Hoeffding step
//!    needs; `docs/deviations.md#decoupled-rates-on-training-rows`);
//! 2. base classifiers h₀, h₁ by DP-SGD ([`base`]: joint h(x, a), as the authors' code, or one
//!    model per group);
//! 3. Algorithm 2 steps 1–3: the groups' positive rates on D, Laplace-noised and clamped
//!    ([`private_rates`]);
//! 4. Algorithm 2 steps 4–7 / Algorithm 1: the randomized flips to the midpoint rate
//!    ([`flips`]). Predicting draws one s ~ U(0, 1) per row from the caller's `rng`.
//!
//! ## Accounting
//!
//! [`Accounting::Strict`] (default): (ε, δ)-DP for replace-one neighbours (the paper's
//! Definition 1) with nothing left unaccounted: DP-SGD calibrated for substitution, the group
//! counts released with the rates (one Laplace release of the 2 × 2 count table), no
//! data-derived normalisation (features are used as given: scale them with public bounds).
//! Basic composition of the two parts, as the paper (`docs/deviations.md#decoupled-basic-composition`).
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
/// DP-FERMI (Lowy et al.), the baseline of Ghoukasian & Asoodeh's experiments, at its old path.
pub use crate::dp_fermi as fermi;
pub mod flips;
pub mod private_rates;
pub mod scaling;

pub use base::{Base, BaseModel, RunInfo};
pub use config::{Config, Training};
pub use error::{DecoupledError, Result};
pub use flips::FairFlips;
pub use private_rates::{RateRelease, ReleasedRates};
pub use scaling::Standardize;

pub use crate::predictor::Accounting;
use config::MIN_SPLIT_ROWS;
use dpfair_data::Dataset;
use dpfair_learn::DpSgdConfig;
use dpfair_privacy::{Entry, Ledger, Noise, Relation};
use ndarray::{Array2, ArrayView2, CowArray, Ix2};
use rand::seq::SliceRandom;
use rand::{Rng, RngExt, SeedableRng};
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

/// Checks that both splits of `n` rows have at least [`MIN_SPLIT_ROWS`] rows. The sizes depend
/// only on n and `post_fraction` (public): how the rows fall into groups and labels is private,
/// and the method runs on any such composition (docs/privacy.md, "Failures and messages").
fn check_split_sizes(n: usize, n_post: usize) -> Result<()> {
    for (part, rows) in [("training", n - n_post), ("post-processing", n_post)] {
        if rows < MIN_SPLIT_ROWS {
            return Err(DecoupledError::InvalidData(format!(
                "the {part} split has {rows} of the {n} rows, fewer than {MIN_SPLIT_ROWS}: \
                 give more data or change --post-fraction"
            )));
        }
    }
    Ok(())
}

/// Fits the classifier on `data` (binary target, two groups), charging `ledger` (module doc).
pub fn fit(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    let split = config.budget_split()?;
    // Not `require_binary`: whether both classes occur is private, and the method needs none.
    let y = match data.require_target("decoupled")? {
        dpfair_data::Target::Binary(y) => y.as_slice(),
        other => {
            return Err(DecoupledError::InvalidData(format!(
                "the decoupled classifier needs a binary target, the target is {}",
                other.task()
            )));
        }
    };
    let groups = two_groups(data)?;
    let n = data.n_rows();
    // 1. Data-independent random split.
    let split_seed = config.split_seed.unwrap_or_else(|| noise.public_u64());
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(&mut rand_chacha::ChaCha20Rng::seed_from_u64(split_seed));
    let n_post = ((n as f64) * config.post_fraction).round() as usize;
    check_split_sizes(n, n_post)?;
    let (post, train) = idx.split_at(n_post);
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
    let x: CowArray<f64, Ix2> = match &standardize {
        Some(s) => s.apply(data.features.view()).into(),
        None => data.features.view().into(),
    };
    let pick = |rows: &[usize]| -> (Array2<f64>, Vec<u32>, Vec<u32>) {
        (
            x.select(ndarray::Axis(0), rows),
            rows.iter().map(|&i| groups[i]).collect(),
            rows.iter().map(|&i| y[i] as u32).collect(),
        )
    };
    // 2. Base classifiers by DP-SGD.
    // Any mix of labels and groups trains: DP-SGD needs no class to be present.
    let (x_tr, g_tr, y_tr) = pick(train);
    let sched = config.training.resolve(train.len(), config.accounting);
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
    let before = ledger.entries().len();
    let (base, runs) = base::fit_base(config.base, &sgd, x_tr.view(), &g_tr, &y_tr, ledger, noise)?;
    let mut sgd_ledger = Ledger::unlimited();
    for e in &ledger.entries()[before..] {
        sgd_ledger.charge(e.clone())?;
    }
    let sgd_epsilon = sgd_ledger.total_at(config.delta)?.epsilon;
    // 3. Algorithm 2 steps 1–3 on D.
    let (x_d, g_d, _) = pick(post);
    let pred_d = base.predict(x_d.view(), &g_d)?;
    if let RateRelease::PublicCounts { .. } = split.rates {
        ledger.charge(Entry::non_private(
            "group sizes of D",
            "n₀, n₁ of the post-processing split, public by assumption (paper §III-B, docs/deviations.md#decoupled-neighbours-of-the-laplace-step)",
        ))?;
    }
    let rates = private_rates::release_rates(split.rates, &g_d, &pred_d, ledger, noise)?;
    // 4. The flips.
    let flips = FairFlips::from_rates_within(rates.alpha, rates.beta, config.parity_level)?;
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
        split_seed,
    })
}

impl Model {
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
