//! The error type of the decoupled private fair classifier (Ghoukasian & Asoodeh).

use dpfair_data::DataError;
use dpfair_learn::LearnError;
use dpfair_privacy::PrivacyError;
use thiserror::Error;

/// Everything that can go wrong when fitting or applying the decoupled classifier.
#[derive(Debug, Error)]
pub enum DecoupledError {
    /// A parameter outside its domain: the message names it.
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// The data do not fit the method (groups, labels, sizes): the message says which.
    #[error("invalid data: {0}")]
    InvalidData(String),
    #[error(transparent)]
    Data(#[from] DataError),
    #[error(transparent)]
    Learn(#[from] LearnError),
    #[error(transparent)]
    Privacy(#[from] PrivacyError),
}

pub type Result<T> = std::result::Result<T, DecoupledError>;

/// Shorthand for [`DecoupledError::InvalidParameter`].
pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> DecoupledError {
    DecoupledError::InvalidParameter {
        name,
        reason: reason.into(),
    }
}

/// The library's error for this method's (the crate-wide [`crate::Error`]).
impl From<crate::decoupled::DecoupledError> for crate::Error {
    fn from(e: crate::decoupled::DecoupledError) -> Self {
        use crate::decoupled::DecoupledError as E;
        match e {
            E::InvalidParameter { name, reason } => crate::Error::invalid(name, reason),
            E::InvalidData(reason) => crate::Error::InvalidData(reason),
            E::Data(d) => d.into(),
            E::Learn(l) => l.into(),
            E::Privacy(p) => p.into(),
        }
    }
}
