//! DP2DP's error type: every message names the parameter, column or group at fault.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// A configuration value is outside its domain.
    #[error("invalid parameter `{name}`: {reason}")]
    Invalid { name: &'static str, reason: String },
    /// The data cannot be used (groups, classes, sizes).
    #[error("invalid data: {0}")]
    Data(String),
    /// Phase 1 (the private probability model) failed.
    #[error("phase 1: {0}")]
    Phase1(String),
    /// A release was refused or failed in the privacy layer (e.g. budget exceeded).
    #[error(transparent)]
    Privacy(#[from] dpfair_privacy::PrivacyError),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for [`Error::Invalid`].
pub fn invalid(name: &'static str, reason: impl Into<String>) -> Error {
    Error::Invalid {
        name,
        reason: reason.into(),
    }
}

/// The library's error for this method's (the crate-wide [`crate::Error`]).
impl From<crate::dp2dp::Error> for crate::Error {
    fn from(e: crate::dp2dp::Error) -> Self {
        use crate::dp2dp::Error as E;
        match e {
            E::Invalid { name, reason } => crate::Error::invalid(name, reason),
            E::Data(reason) => crate::Error::InvalidData(reason),
            E::Phase1(reason) => crate::Error::InvalidData(format!("phase 1: {reason}")),
            E::Privacy(p) => p.into(),
        }
    }
}
