//! [`Classifier`]: any fitted base learner of this crate, serialisable and able to predict.

use crate::dpsgd::MlpModel;
use crate::error::Result;
use crate::logistic::LogisticModel;
use crate::tree::TreeModel;
use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

/// A fitted classifier of this crate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Classifier {
    Logistic(LogisticModel),
    Mlp(MlpModel),
    Tree(TreeModel),
}

impl Classifier {
    pub fn n_classes(&self) -> usize {
        match self {
            Classifier::Logistic(m) => m.n_classes,
            Classifier::Mlp(m) => m.n_classes,
            Classifier::Tree(m) => m.n_classes,
        }
    }

    pub fn n_features(&self) -> usize {
        match self {
            Classifier::Logistic(m) => m.n_features(),
            Classifier::Mlp(m) => m.n_features(),
            Classifier::Tree(m) => m.n_features,
        }
    }

    /// Class probabilities, n × K.
    pub fn predict_proba(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        match self {
            Classifier::Logistic(m) => m.predict_proba(x),
            Classifier::Mlp(m) => m.predict_proba(x),
            Classifier::Tree(m) => m.predict_proba(x),
        }
    }

    /// Predicted class codes.
    pub fn predict(&self, x: ArrayView2<'_, f64>) -> Result<Vec<u32>> {
        match self {
            Classifier::Logistic(m) => m.predict(x),
            Classifier::Mlp(m) => m.predict(x),
            Classifier::Tree(m) => m.predict(x),
        }
    }
}

/// A privately fitted logistic regression with the numbers of its privacy statement: what
/// `dpfair fit dp-logistic` saves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mechanism", rename_all = "kebab-case")]
pub enum PrivateLogistic {
    DpSgd(crate::dpsgd::DpSgdFit),
    OutputPerturbation(crate::output_perturbation::OutputPerturbationFit),
}

impl PrivateLogistic {
    /// The released classifier.
    pub fn classifier(&self) -> Classifier {
        match self {
            PrivateLogistic::DpSgd(f) => f.model.clone(),
            PrivateLogistic::OutputPerturbation(f) => Classifier::Logistic(f.model.clone()),
        }
    }

    pub fn n_classes(&self) -> usize {
        match self {
            PrivateLogistic::DpSgd(f) => f.model.n_classes(),
            PrivateLogistic::OutputPerturbation(f) => f.model.n_classes,
        }
    }

    /// Class probabilities, n × K.
    pub fn predict_proba(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        match self {
            PrivateLogistic::DpSgd(f) => f.model.predict_proba(x),
            PrivateLogistic::OutputPerturbation(f) => f.model.predict_proba(x),
        }
    }

    /// Predicted class codes.
    pub fn predict(&self, x: ArrayView2<'_, f64>) -> Result<Vec<u32>> {
        match self {
            PrivateLogistic::DpSgd(f) => f.model.predict(x),
            PrivateLogistic::OutputPerturbation(f) => f.model.predict(x),
        }
    }
}
