//! The error of the built-in catalogue and the synthetic designs.

use std::path::PathBuf;
use thiserror::Error;

/// What can go wrong when resolving, verifying, reading or generating a built-in data set.
/// Every variant names the data set, file, row, column or parameter it is about.
#[derive(Debug, Error)]
pub enum CatalogError {
    #[error("unknown data set `{name}`; built-in data sets are: {known}")]
    UnknownDataset { name: String, known: String },
    #[error(
        "data set `{dataset}` needs the file `{file}`, which is not in the data directory {dir} \
         (resolved from {source_of_dir}). Obtain it from {origin} and place it there \
         (sha256 {sha256}); dpfair never downloads data"
    )]
    MissingFile {
        dataset: String,
        file: &'static str,
        dir: PathBuf,
        source_of_dir: &'static str,
        origin: &'static str,
        sha256: &'static str,
    },
    #[error(
        "{}: sha256 is {found}, expected {expected} for `{file}`; the file is damaged or a \
         different version. Obtain the original from {origin}",
        path.display()
    )]
    ChecksumMismatch {
        path: PathBuf,
        file: &'static str,
        expected: &'static str,
        found: String,
        origin: &'static str,
    },
    #[error(
        "no data directory: give --data-dir, set DPFAIR_DATA_DIR, or set HOME / XDG_CACHE_HOME"
    )]
    NoDataDir,
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: line {line}: {reason}", path.display())]
    Malformed {
        path: PathBuf,
        line: u64,
        reason: String,
    },
    #[error(
        "data set `{dataset}`: expected {expected} {what} after preprocessing, found {found} \
         (the file does not match the paper's version)"
    )]
    UnexpectedShape {
        dataset: String,
        what: &'static str,
        expected: usize,
        found: usize,
    },
    /// Reading a file failed (malformed CSV, ragged row, …): the data crate's error.
    #[error(transparent)]
    Data(#[from] crate::DataError),
    #[error("invalid {parameter}: {reason}")]
    InvalidParameter {
        parameter: &'static str,
        reason: String,
    },
}

pub type Result<T> = std::result::Result<T, CatalogError>;

/// Shorthand for [`CatalogError::InvalidParameter`].
pub(crate) fn invalid(parameter: &'static str, reason: impl Into<String>) -> CatalogError {
    CatalogError::InvalidParameter {
        parameter,
        reason: reason.into(),
    }
}
