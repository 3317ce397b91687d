//! The fairness crate's error.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum FairnessError {
    #[error("{what} has {found} entries, expected {expected} (one per row)")]
    LengthMismatch {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("no rows to evaluate")]
    Empty,
    #[error("row {row}: {what} = {value} is not 0 or 1")]
    NotBinary {
        what: &'static str,
        row: usize,
        value: u32,
    },
    #[error("row {row}: class {class} is outside 0..{k}")]
    ClassOutOfRange { row: usize, class: u32, k: usize },
    #[error(
        "row {row}: probabilities are not a distribution (in [0, 1], summing to 1; sum or value {sum})"
    )]
    InvalidProbabilities { row: usize, sum: f64 },
    #[error("row {row}: value is not finite")]
    NonFinite { row: usize },
    #[error("group code {group} has no rows")]
    NoRowsInGroup { group: u32 },
    #[error("no row has a positive true label: equal opportunity is undefined")]
    NoPositives,
    /// A parameter of a private report outside its domain (names the parameter).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    /// The privacy layer refused or failed the release (e.g. the budget).
    #[error(transparent)]
    Privacy(#[from] dpfair_privacy::PrivacyError),
}

pub type Result<T> = std::result::Result<T, FairnessError>;
