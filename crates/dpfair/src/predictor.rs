//! The shared vocabulary of every method: how privacy is accounted ([`Accounting`]), what a
//! model computes ([`Output`]), the [`Predictor`] trait every fitted model implements, and the
//! model layer's error. Methods depend on this module; the model-file registry
//! ([`crate::model`]) depends on the methods, so nothing imports in a circle.

use dpfair_data::{DataError, Dataset};
use dpfair_privacy::Noise;
use ndarray::Array2;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The `format` field of every model file.
pub const FORMAT: &str = "dpfair-model";
/// The envelope version this build writes (it also reads version 1, which had no digest).
pub const VERSION: u32 = 2;
/// The oldest envelope version this build reads.
pub const OLDEST_VERSION: u32 = 1;

/// How privacy is accounted: what dpfair guarantees by default, or the paper's own procedure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Accounting {
    /// The stated guarantee, with every release charged (the default).
    #[default]
    Strict,
    /// The paper's procedure as published; the ledger records what it really spends.
    Paper,
}

#[derive(Debug, Error)]
pub enum ModelError {
    #[error("cannot read model file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("cannot write model file {path}: {reason}")]
    Write { path: String, reason: String },
    #[error("{path} is not a dpfair model file: {reason}")]
    Format { path: String, reason: String },
    #[error(
        "{path} is a dpfair model file of version {found}; this dpfair ({created}) reads versions {OLDEST_VERSION} to {VERSION}"
    )]
    Version {
        path: String,
        found: u64,
        created: String,
    },
    #[error(
        "{path} was changed after dpfair wrote it ({reason}): refusing to use it. The digest guards \
         against accidents and hand edits; it is not a signature"
    )]
    Tampered { path: String, reason: String },
    #[error("the model does not fit its data: {0}")]
    Mismatch(String),
    #[error("{method}: {reason}")]
    Method { method: String, reason: String },
    #[error(transparent)]
    Data(#[from] DataError),
}

pub type Result<T> = std::result::Result<T, ModelError>;

/// What a model computes for the rows of a data set, in code space.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// Class codes (index into the target's labels); `probabilities` is n × k when the model has
    /// them (for a randomized classifier: the distribution `classes` were sampled from).
    Classes {
        classes: Vec<u32>,
        probabilities: Option<Array2<f64>>,
    },
    /// Real-valued outputs (regression).
    Values(Vec<f64>),
}

impl Output {
    /// The predicted class codes (classification), or `None` for regression outputs.
    pub fn classes(&self) -> Option<&[u32]> {
        match self {
            Output::Classes { classes, .. } => Some(classes),
            Output::Values(_) => None,
        }
    }

    /// The predicted values (regression), or `None` for class outputs.
    pub fn values(&self) -> Option<&[f64]> {
        match self {
            Output::Values(v) => Some(v),
            Output::Classes { .. } => None,
        }
    }

    /// Binary predictions as 0/1 bytes (the fairness metrics' input), or `None`.
    pub fn binary(&self) -> Option<Vec<u8>> {
        self.classes()
            .map(|c| c.iter().map(|&k| u8::from(k == 1)).collect())
    }
}

/// A fitted model that predicts. Randomized predictors draw their randomness from `rng` only
/// (seeded for reproducible predictions).
pub trait Predictor {
    /// The method's name (as in `dpfair fit METHOD`).
    fn method(&self) -> &'static str;
    fn predict(&self, data: &Dataset, rng: &mut Noise) -> Result<Output>;
}
