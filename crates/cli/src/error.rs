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
    pub fn not_yet(what: &str, issue: u32) -> Self {
        CliError::BadInput(format!(
            "`{what}` is not available yet (tracked in issue #{issue})"
        ))
    }
}

pub type CliResult<T = ()> = Result<T, CliError>;
