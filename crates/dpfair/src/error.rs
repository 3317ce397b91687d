//! `dpfair::Error`: the one error type of the library API ([`crate::Session`],
//! [`crate::Estimator`], [`crate::estimators`]).
//!
//! The methods' own error enums (one per paper module) convert into it, so a caller matches on
//! four kinds whatever the method: a bad parameter, bad data, a refused release (the budget), or
//! a failure inside a layer below (privacy accounting, learning, the model file).

use dpfair_data::DataError;
use dpfair_learn::LearnError;
use dpfair_privacy::PrivacyError;
use thiserror::Error;

/// Everything the library API can refuse or fail with. Messages name the parameter, column or
/// row at fault.
#[derive(Debug, Error)]
pub enum Error {
    /// A parameter outside its domain, found by [`crate::Params::check`] before any data is
    /// touched (or by the method, for a value that depends on the data's public shape).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter { name: String, reason: String },
    /// The data do not fit the method (missing groups or target, wrong number of groups, NaN …).
    #[error("invalid data: {0}")]
    InvalidData(String),
    /// A fit refused before anything is released because it lacks a public setting it needs
    /// (e.g. `dpfair compare`'s regressors without a public target range); the reason names the
    /// option that fixes it.
    #[error("refused: {0}")]
    Refused(String),
    /// The fit would take the session over its budget: refused before any noise was drawn.
    #[error("privacy budget exceeded: {0}")]
    BudgetExceeded(String),
    /// The privacy layer refused or failed a release.
    #[error(transparent)]
    Privacy(Box<PrivacyError>),
    /// Reading or encoding data.
    #[error(transparent)]
    Data(Box<DataError>),
    /// A learner below the method (DP-SGD, output perturbation).
    #[error(transparent)]
    Learn(Box<LearnError>),
    /// The model file (reading, writing, integrity).
    #[error(transparent)]
    Model(Box<crate::predictor::ModelError>),
    /// A numerical routine of a method did not converge or a solver failed.
    #[error("{method}: {reason}")]
    Method {
        method: &'static str,
        reason: String,
    },
}

/// `Result` with [`Error`](enum@Error).
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub fn invalid(name: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::InvalidParameter {
            name: name.into(),
            reason: reason.into(),
        }
    }
}

impl From<PrivacyError> for Error {
    fn from(e: PrivacyError) -> Self {
        match e {
            PrivacyError::InvalidParameter { name, reason } => Error::invalid(name, reason),
            PrivacyError::BudgetExceeded { .. } => Error::BudgetExceeded(e.to_string()),
            other => Error::Privacy(Box::new(other)),
        }
    }
}

impl From<DataError> for Error {
    fn from(e: DataError) -> Self {
        Error::Data(Box::new(e))
    }
}

impl From<LearnError> for Error {
    fn from(e: LearnError) -> Self {
        match e {
            LearnError::Privacy(p) => p.into(),
            other => Error::Learn(Box::new(other)),
        }
    }
}

impl From<crate::predictor::ModelError> for Error {
    fn from(e: crate::predictor::ModelError) -> Self {
        match e {
            crate::predictor::ModelError::Data(d) => Error::Data(Box::new(d)),
            other => Error::Model(Box::new(other)),
        }
    }
}
