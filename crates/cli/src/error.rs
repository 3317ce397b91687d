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

/// The command-line flag behind a library parameter name (`tau_grid` → `--tau-grid`).
pub fn flag_of(name: &str) -> String {
    let flag = match name {
        "score_column" | "scores" => "scores",
        "expected_batch" => "batch",
        "n_frequencies" => "frequencies",
        "attribute_epsilon" => "sensitive_ldp",
        other => other,
    };
    format!("--{}", flag.replace('_', "-"))
}

/// Bad parameters, bad data and overspent budgets are bad input; a failing solver is internal.
impl From<dpfair::Error> for CliError {
    fn from(e: dpfair::Error) -> Self {
        use dpfair::Error as E;
        match e {
            E::InvalidParameter { name, reason } => {
                CliError::BadInput(format!("{}: {reason}", flag_of(&name)))
            }
            E::InvalidData(reason) => CliError::BadInput(reason),
            E::BudgetExceeded(_) | E::Refused(_) => CliError::BadInput(e.to_string()),
            E::Privacy(p) => (*p).into(),
            E::Data(d) => (*d).into(),
            E::Model(m) => (*m).into(),
            E::Learn(ref l) if matches!(**l, dpfair_learn::LearnError::NotConverged { .. }) => {
                CliError::Internal(e.to_string())
            }
            E::Method { .. } => CliError::Internal(e.to_string()),
            E::Learn(l) => {
                let msg = l.to_string();
                match LEARNER_FLAGS
                    .iter()
                    .find(|(p, _)| msg.contains(&format!("`{p}`")))
                {
                    Some((_, flag)) => CliError::BadInput(format!("{flag}: {msg}")),
                    None => CliError::BadInput(msg),
                }
            }
        }
    }
}

/// A method's own error, through [`dpfair::Error`].
macro_rules! via_library_error {
    ($($t:ty),*) => {
        $(impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                dpfair::Error::from(e).into()
            }
        })*
    };
}

via_library_error!(
    dpfair::plugin::Error,
    dpfair::decoupled::DecoupledError,
    dpfair::dp2dp::Error,
    dpfair::lpct::LpctError,
    dpfair::fair_regression::FairRegressionError
);

/// The command-line option behind each learner parameter a learner's message may name.
const LEARNER_FLAGS: [(&str, &str); 7] = [
    ("expected_batch", "--batch"),
    ("epochs", "--epochs"),
    ("learning_rate", "--learning-rate"),
    ("clip", "--clip"),
    ("l2", "--l2"),
    ("feature_bound", "--feature-bound"),
    ("epsilon", "--epsilon"),
];

pub type CliResult<T = ()> = Result<T, CliError>;
