//! The learn crate's error type: every variant names the parameter, row or column at fault.

use dpfair_privacy::PrivacyError;
use thiserror::Error;

/// Everything that can go wrong when fitting or applying a base learner.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LearnError {
    /// No rows (or no feature columns) to learn from.
    #[error("empty data: {0}")]
    Empty(String),
    /// The labels hold a single class; a classifier needs at least two.
    #[error("the labels contain a single class ({class}); {what} needs at least two classes")]
    SingleClass { class: u32, what: &'static str },
    /// A NaN or infinite value in the input.
    #[error("non-finite value {value} in {what} at row {row}, column {column}")]
    NonFinite {
        what: &'static str,
        row: usize,
        column: usize,
        value: f64,
    },
    /// A label outside `0..n_classes`.
    #[error("label {label} at row {row} is out of range for {n_classes} classes")]
    LabelOutOfRange {
        row: usize,
        label: u32,
        n_classes: usize,
    },
    /// Arrays whose sizes disagree.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// A hyperparameter outside its domain.
    #[error("invalid hyperparameter `{name}`: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// A private fit whose noise would dominate the released parameters whatever the data.
    #[error("refused: {0}")]
    NoiseSwamps(String),
    /// An iterative solver stopped before reaching its tolerance.
    #[error(
        "{solver} did not converge in {iterations} iterations (gradient norm {grad_norm:e} > tol {tol:e})"
    )]
    NotConverged {
        solver: &'static str,
        iterations: usize,
        grad_norm: f64,
        tol: f64,
    },
    /// A release or accounting failure reported by the privacy crate (budget exceeded, …).
    #[error(transparent)]
    Privacy(#[from] PrivacyError),
}

pub type Result<T> = std::result::Result<T, LearnError>;

/// Shorthand for [`LearnError::InvalidParameter`].
pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> LearnError {
    LearnError::InvalidParameter {
        name,
        reason: reason.into(),
    }
}
