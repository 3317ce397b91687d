//! `dpfair-learn`: the base learners the private fair methods build on.
//!
//! * [`logistic`]: L2-regularised logistic regression, binary and multinomial, solved to a
//!   tolerance (the non-private reference), and [`LogisticModel`], the linear model every linear
//!   learner here returns.
//! * [`dpsgd`]: DP-SGD with Opacus semantics (Poisson sampling, per-example clipping, Gaussian
//!   noise on the clipped sum through the privacy crate, division by the expected batch size) for
//!   logistic regression and a one-hidden-layer MLP (Ghoukasian & Asoodeh, the DP-SGD base classifier, Say et al., Phase 1, DP-SGD).
//! * [`output_perturbation`]: Gaussian output perturbation of L2-regularised logistic regression
//!   (Chaudhuri et al. 2011; Say et al., Phase 1, output perturbation and `docs/deviations.md#dp2dp-phase-1-mechanism`).
//! * [`linear_regression`]: DP linear (ridge) regression by noisy sufficient statistics
//!   (XᵀX and Xᵀy released with the Gaussian mechanism, solved with a ridge that keeps the noisy
//!   matrix positive definite).
//! * [`tree`]: CART classification trees (Gini or entropy) with exact, presorted splits, the
//!   non-private baseline of Ma & Yang, Section 7.2 (CT-W, CT-Q).
//!
//! Learners take `ndarray` views of the features and class codes `0..k` (see
//! [`validate::class_labels`] to get them from a [`dpfair_data::Target`]).

pub mod dpsgd;
pub mod error;
pub(crate) mod linalg;
pub mod linear_regression;
pub mod logistic;
pub mod model;
pub mod output_perturbation;
pub mod sampling;
pub mod synth;
#[cfg(test)]
pub(crate) mod testutil;
pub mod tree;
pub mod validate;

pub use dpsgd::{Architecture, Calibration, DpSgdConfig, DpSgdFit, MlpModel, fit_dp_sgd};
pub use error::{LearnError, Result};
pub use linear_regression::{LinearRegressionConfig, LinearRegressionFit, fit_dp_linear};
pub use logistic::{LogisticConfig, LogisticModel, fit_logistic};
pub use model::{Classifier, PrivateLogistic};
pub use output_perturbation::{
    OutputPerturbationConfig, OutputPerturbationFit, fit_output_perturbation,
};
pub use tree::{Criterion, TreeConfig, TreeModel, fit_tree};
