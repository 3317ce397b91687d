//! Errors of CDP-Fair and FDP-Fair (CDP-Fair, FDP-Fair).

use thiserror::Error;

/// Everything that can go wrong fitting or using a CDP-Fair or FDP-Fair model. Messages name the parameter,
/// column or row at fault.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A configuration value is outside its domain.
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// The data cannot be used (missing target/groups, wrong group count, NaN, empty group …).
    #[error("invalid data: {0}")]
    InvalidData(String),
    /// A release was refused or failed in the privacy layer (e.g. budget exceeded).
    #[error(transparent)]
    Privacy(#[from] dpfair_privacy::PrivacyError),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for [`Error::InvalidParameter`].
pub fn invalid(name: &'static str, reason: impl Into<String>) -> Error {
    Error::InvalidParameter {
        name,
        reason: reason.into(),
    }
}

/// The library's error for this method's (the crate-wide [`crate::Error`]).
impl From<crate::plugin::Error> for crate::Error {
    fn from(e: crate::plugin::Error) -> Self {
        use crate::plugin::Error as E;
        match e {
            E::InvalidParameter { name, reason } => crate::Error::invalid(name, reason),
            E::InvalidData(reason) => crate::Error::InvalidData(reason),
            E::Privacy(p) => p.into(),
        }
    }
}
