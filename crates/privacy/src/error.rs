//! The privacy crate's error type.

use thiserror::Error;

/// Everything that can go wrong when asking for a release or an accounting result.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PrivacyError {
    /// A parameter is outside its domain (ε ≤ 0, δ ∉ [0,1), a non-finite sensitivity, …).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// A release would exceed the ledger's budget; nothing was released.
    #[error("privacy budget exceeded by release `{label}`: it asks {asked}, {remaining} remains")]
    BudgetExceeded {
        label: String,
        asked: String,
        remaining: String,
    },
    /// A numerical routine (root finding, integration) did not converge.
    #[error("numerical failure in {what}: {reason}")]
    Numerical { what: &'static str, reason: String },
    /// A feature that is part of the contract but not built yet.
    #[error("not implemented yet: {0}")]
    NotImplemented(&'static str),
}

pub type Result<T> = std::result::Result<T, PrivacyError>;

/// Shorthand for [`PrivacyError::InvalidParameter`].
pub fn invalid(name: &'static str, reason: impl Into<String>) -> PrivacyError {
    PrivacyError::InvalidParameter {
        name,
        reason: reason.into(),
    }
}
