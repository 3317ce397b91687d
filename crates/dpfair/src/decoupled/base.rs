//! The base classifiers h₀, h₁ of Algorithm 2 (DP-SGD, `docs/deviations.md#decoupled-joint-or-decoupled-base-model`), trained by the learn
//! crate's DP-SGD:
//!
//! * [`BaseModel::Joint`] (the authors' code, default): one model h(x, a) on the features with
//!   the group code appended as a last column; h_a = h(·, a). One DP-SGD run at (ε, δ).
//! * [`BaseModel::Decoupled`] (the paper's text): one model per group, each trained on its
//!   group's training rows only. A record that changes group touches both runs, so each runs at
//!   (ε/2, δ/2) and the two compose sequentially to (ε, δ) under either neighbouring relation.

use super::error::{DecoupledError, Result};
use dpfair_learn::{Classifier, DpSgdConfig, fit_dp_sgd};
use dpfair_privacy::{Ledger, Noise};
use ndarray::{Array2, ArrayView2, Axis, concatenate};
use serde::{Deserialize, Serialize};

/// Which base classifiers to train (module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BaseModel {
    #[default]
    Joint,
    Decoupled,
}

/// One DP-SGD run's parameters, as used.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub rows: usize,
    pub noise_multiplier: f64,
    pub sampling_rate: f64,
    pub steps: u64,
    pub epochs: usize,
    pub expected_batch: usize,
    pub learning_rate: f64,
}

/// The fitted base classifiers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Base {
    /// h(x, a) on [x ; a].
    Joint { model: Box<Classifier> },
    /// h₀ for group 0, h₁ for group 1.
    Decoupled { models: Vec<Classifier> },
}

/// `x` with the group codes appended as a last column.
pub fn with_group_column(x: ArrayView2<'_, f64>, groups: &[u32]) -> Array2<f64> {
    let a = Array2::from_shape_fn((x.nrows(), 1), |(i, _)| groups[i] as f64);
    concatenate(Axis(1), &[x, a.view()]).expect("same number of rows")
}

impl Base {
    /// The base score `P̂(Y = 1 | x_i, a_i)` of every row (the classifiers' probability of
    /// class 1; [`Base::predict`] is its argmax).
    pub fn scores(&self, x: ArrayView2<'_, f64>, groups: &[u32]) -> Result<Vec<f64>> {
        if groups.len() != x.nrows() {
            return Err(DecoupledError::InvalidData(format!(
                "{} group codes for {} rows",
                groups.len(),
                x.nrows()
            )));
        }
        match self {
            Base::Joint { model } => Ok(model
                .predict_proba(with_group_column(x, groups).view())?
                .column(1)
                .to_vec()),
            Base::Decoupled { models } => {
                let mut out = vec![0.0; x.nrows()];
                for (a, m) in models.iter().enumerate() {
                    let idx: Vec<usize> = (0..x.nrows())
                        .filter(|&i| groups[i] as usize == a)
                        .collect();
                    if idx.is_empty() {
                        continue;
                    }
                    let p = m.predict_proba(x.select(Axis(0), &idx).view())?;
                    for (&i, v) in idx.iter().zip(p.column(1)) {
                        out[i] = *v;
                    }
                }
                Ok(out)
            }
        }
    }

    /// h_{a_i}(x_i) for every row.
    pub fn predict(&self, x: ArrayView2<'_, f64>, groups: &[u32]) -> Result<Vec<bool>> {
        if groups.len() != x.nrows() {
            return Err(DecoupledError::InvalidData(format!(
                "{} group codes for {} rows",
                groups.len(),
                x.nrows()
            )));
        }
        match self {
            Base::Joint { model } => Ok(model
                .predict(with_group_column(x, groups).view())?
                .into_iter()
                .map(|c| c == 1)
                .collect()),
            Base::Decoupled { models } => {
                let mut out = vec![false; x.nrows()];
                for (a, m) in models.iter().enumerate() {
                    let idx: Vec<usize> = (0..x.nrows())
                        .filter(|&i| groups[i] as usize == a)
                        .collect();
                    if idx.is_empty() {
                        continue;
                    }
                    let pred = m.predict(x.select(Axis(0), &idx).view())?;
                    for (&i, c) in idx.iter().zip(pred) {
                        out[i] = c == 1;
                    }
                }
                Ok(out)
            }
        }
    }
}

/// Trains the base classifiers on the training rows (x, groups, y) with DP-SGD at `sgd`'s
/// (ε, δ), charging `ledger` (module doc). Returns the model and one [`RunInfo`] per run.
pub fn fit_base(
    kind: BaseModel,
    sgd: &DpSgdConfig,
    x: ArrayView2<'_, f64>,
    groups: &[u32],
    y: &[u32],
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<(Base, Vec<RunInfo>)> {
    let info = |rows: usize, fit: &dpfair_learn::DpSgdFit| RunInfo {
        rows,
        noise_multiplier: fit.noise_multiplier,
        sampling_rate: fit.sampling_rate,
        steps: fit.steps,
        epochs: sgd.epochs,
        expected_batch: sgd.expected_batch,
        learning_rate: sgd.learning_rate,
    };
    match kind {
        BaseModel::Joint => {
            let xa = with_group_column(x, groups);
            let fit = fit_dp_sgd(sgd, xa.view(), y, 2, ledger, noise)?;
            let runs = vec![info(y.len(), &fit)];
            Ok((
                Base::Joint {
                    model: Box::new(fit.model),
                },
                runs,
            ))
        }
        BaseModel::Decoupled => {
            let half = DpSgdConfig {
                epsilon: sgd.epsilon / 2.0,
                delta: sgd.delta / 2.0,
                ..sgd.clone()
            };
            let mut models = Vec::new();
            let mut runs = Vec::new();
            for a in 0..2u32 {
                let idx: Vec<usize> = (0..y.len()).filter(|&i| groups[i] == a).collect();
                let ya: Vec<u32> = idx.iter().map(|&i| y[i]).collect();
                let xa = x.select(Axis(0), &idx);
                let fit =
                    fit_dp_sgd(&half, xa.view(), &ya, 2, ledger, noise).map_err(|e| match e {
                        dpfair_learn::LearnError::SingleClass { .. }
                        | dpfair_learn::LearnError::Empty(_) => {
                            DecoupledError::InvalidData(format!("group {a}'s base model: {e}"))
                        }
                        e => e.into(),
                    })?;
                runs.push(info(idx.len(), &fit));
                models.push(fit.model);
            }
            Ok((Base::Decoupled { models }, runs))
        }
    }
}
