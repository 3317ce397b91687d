//! The CLI's error: bad input (exit 2) or an internal failure (exit 1).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum CliError {
    /// The user's input is wrong: the message names the parameter, file, row or column.
    #[error("{0}")]
    BadInput(String),
    /// Something failed that the user could not have caused.
    #[error("internal error: {0}")]
    Internal(String),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::BadInput(_) => 2,
            CliError::Internal(_) => 1,
        }
    }

    /// A subcommand that exists in the interface but is not built yet.
    #[allow(dead_code)] // every stub has landed; kept for the next one
    pub fn not_yet(what: &str, issue: u32) -> Self {
        CliError::BadInput(format!(
            "`{what}` is not available yet (tracked in issue #{issue})"
        ))
    }

    /// Bad input from any error (`.map_err(CliError::bad)`).
    #[allow(dead_code)] // for the fit commands
    pub fn bad(e: impl std::fmt::Display) -> Self {
        CliError::BadInput(e.to_string())
    }

    /// An internal failure from any error (`.map_err(CliError::internal)`).
    #[allow(dead_code)] // for the fit commands
    pub fn internal(e: impl std::fmt::Display) -> Self {
        CliError::Internal(e.to_string())
    }
}

/// Data errors are all about the user's files and arguments.
impl From<dpfair_data::DataError> for CliError {
    fn from(e: dpfair_data::DataError) -> Self {
        CliError::BadInput(e.to_string())
    }
}

/// Invalid parameters and exceeded budgets are bad input; numerical failures are internal.
impl From<dpfair_privacy::PrivacyError> for CliError {
    fn from(e: dpfair_privacy::PrivacyError) -> Self {
        match e {
            dpfair_privacy::PrivacyError::Numerical { .. } => CliError::Internal(e.to_string()),
            _ => CliError::BadInput(e.to_string()),
        }
    }
}

/// Model files that cannot be read or written are bad input; a model whose output does not
/// match its own schema is an internal error.
impl From<dpfair::model::ModelError> for CliError {
    fn from(e: dpfair::model::ModelError) -> Self {
        use dpfair::model::ModelError as M;
        match e {
            M::Mismatch(_) => CliError::Internal(e.to_string()),
            _ => CliError::BadInput(e.to_string()),
        }
    }
}

/// An output path refused before any work (it is an input, or cannot be written).
impl From<dpfair_data::output::OutputError> for CliError {
    fn from(e: dpfair_data::output::OutputError) -> Self {
        CliError::BadInput(e.to_string())
    }
}

impl From<dpfair_fairness::FairnessError> for CliError {
    fn from(e: dpfair_fairness::FairnessError) -> Self {
        CliError::BadInput(e.to_string())
    }
}

pub type CliResult<T = ()> = Result<T, CliError>;
