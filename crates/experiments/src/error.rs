//! The experiments crate's error.

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ExpError {
    #[error("unknown experiment `{name}`; available: {known}")]
    UnknownExperiment { name: String, known: String },
    #[error("cell {cell}: parameter `{parameter}`: {reason}")]
    Parameter {
        cell: String,
        parameter: String,
        reason: String,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: line {line}: {reason}", path.display())]
    Raw {
        path: PathBuf,
        line: u64,
        reason: String,
    },
    /// The output folder is locked by another run.
    #[error("{0}")]
    Locked(String),
    #[error("plot {file}: {reason}")]
    Plot { file: String, reason: String },
    #[error("invalid {parameter}: {reason}")]
    InvalidParameter {
        parameter: &'static str,
        reason: String,
    },
    #[error("data: {0}")]
    Catalog(#[from] dpfair_data::builtin::CatalogError),
    #[error("privacy: {0}")]
    Privacy(#[from] dpfair_privacy::PrivacyError),
    /// A method failed in a cell (its message, from whichever crate).
    #[error("{0}")]
    Method(String),
}

pub type Result<T> = std::result::Result<T, ExpError>;

/// Wrap any method error (learn, fairness, dpfair, data) as [`ExpError::Method`].
pub fn method_error(e: impl std::fmt::Display) -> ExpError {
    ExpError::Method(e.to_string())
}
