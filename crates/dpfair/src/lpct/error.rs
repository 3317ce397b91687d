//! The error type of the LPCT module (Ma & Yang).
//!
//! Kept local to the module until the crate-wide `dpfair` error enum exists; it converts into
//! that enum with `#[from]` when it lands.

use dpfair_privacy::PrivacyError;
use thiserror::Error;

/// Everything that can go wrong when partitioning, privatising, fitting or predicting.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LpctError {
    /// A parameter is outside its domain: the message names it.
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// The data do not fit what the method needs (shape, labels, NaN): the message names the
    /// row, column or file part at fault.
    #[error("invalid data ({what}): {reason}")]
    InvalidData { what: String, reason: String },
    /// The privacy layer refused a release (budget exceeded, bad ε, …).
    #[error(transparent)]
    Privacy(#[from] PrivacyError),
}

pub type Result<T> = std::result::Result<T, LpctError>;

/// Shorthand for [`LpctError::InvalidParameter`].
pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> LpctError {
    LpctError::InvalidParameter {
        name,
        reason: reason.into(),
    }
}

/// Shorthand for [`LpctError::InvalidData`].
pub(crate) fn bad_data(what: impl Into<String>, reason: impl Into<String>) -> LpctError {
    LpctError::InvalidData {
        what: what.into(),
        reason: reason.into(),
    }
}

/// Checks a privacy budget ε: finite or +∞ (non-private reference), strictly positive.
pub(crate) fn check_epsilon(epsilon: f64) -> Result<()> {
    if epsilon.is_nan() || epsilon <= 0.0 {
        return Err(invalid("epsilon", format!("must be > 0, got {epsilon}")));
    }
    Ok(())
}

/// The library's error for this method's (the crate-wide [`crate::Error`]).
impl From<crate::lpct::LpctError> for crate::Error {
    fn from(e: crate::lpct::LpctError) -> Self {
        use crate::lpct::LpctError as E;
        match e {
            E::InvalidParameter { name, reason } => crate::Error::invalid(name, reason),
            E::InvalidData { what, reason } => {
                crate::Error::InvalidData(format!("{what}: {reason}"))
            }
            E::Privacy(p) => p.into(),
        }
    }
}
