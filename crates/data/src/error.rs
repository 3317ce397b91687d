//! The data layer's error: every variant names the file, the row and the column it is about.
//!
//! Rows are counted as **1-based data rows** (the header, when present, is not counted); the
//! line number in the file is given beside it, since quoted fields may span lines.

use std::path::PathBuf;
use thiserror::Error;

/// Where in a file a value was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// 1-based data row (the header is not counted).
    pub row: usize,
    /// 1-based line in the file; 0 in a file without lines (Parquet, Arrow IPC), where the
    /// data row alone says where.
    pub line: u64,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "data row {}", self.row),
            line => write!(f, "data row {} (line {line})", self.row),
        }
    }
}

#[derive(Debug, Error)]
pub enum DataError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: malformed CSV: {reason}", path.display())]
    Csv { path: PathBuf, reason: String },
    /// A Parquet or Arrow IPC file that cannot be read, or a column of a type dpfair cannot use.
    #[error("{}: cannot read as {format}: {reason}", path.display())]
    Columnar {
        path: PathBuf,
        format: &'static str,
        reason: String,
    },
    /// An error in one batch of a file read in batches (`crate::batches`).
    #[error("{}: {reason} (in the batch of data rows {first}–{last}; row numbers in it count from its first row)", path.display())]
    Batch {
        path: PathBuf,
        first: u64,
        last: u64,
        reason: String,
    },
    #[error("{}: the file has no data rows", path.display())]
    EmptyFile { path: PathBuf },
    #[error("{}: {at} has {found} fields, the header (or first row) has {expected}", path.display())]
    RaggedRow {
        path: PathBuf,
        at: Position,
        expected: usize,
        found: usize,
    },
    #[error("{}: unknown column `{column}` (given as {parameter}); columns are: {available}", path.display())]
    UnknownColumn {
        path: PathBuf,
        column: String,
        parameter: &'static str,
        available: String,
    },
    #[error("{}: column `{column}` is used twice ({first} and {second})", path.display())]
    DuplicateColumn {
        path: PathBuf,
        column: String,
        first: &'static str,
        second: &'static str,
    },
    // The messages of errors met while reading rows never print the value: the rows may be
    // private (docs/privacy.md, "Failures and messages"); the field keeps it for programs.
    #[error("{}: {at}, column `{column}`: a value that is not a number{hint}", path.display())]
    NonNumeric {
        path: PathBuf,
        at: Position,
        column: String,
        value: String,
        hint: &'static str,
    },
    #[error("{}: {at}, column `{column}`: a value that is not finite (NaN and infinities are refused; write missing values as `?`, `NA` or empty)", path.display())]
    NonFinite {
        path: PathBuf,
        at: Position,
        column: String,
        value: String,
    },
    #[error("{}: {at}, column `{column}`: a missing value, refused (--no-missing)", path.display())]
    MissingRefused {
        path: PathBuf,
        at: Position,
        column: String,
        value: String,
    },
    #[error("{}: every row has a missing value in a used column ({dropped} rows dropped)", path.display())]
    AllRowsMissing { path: PathBuf, dropped: usize },
    #[error("{}: column `{column}` has no value (every row's is missing): no level to code a missing value with; declare its levels", path.display())]
    NoValues { path: PathBuf, column: String },
    #[error("{}: {at}, column `{column}`: level `{value}` was not seen when the model was fitted (known levels: {known})", path.display())]
    UnseenLevel {
        path: PathBuf,
        at: Position,
        column: String,
        value: String,
        known: String,
    },
    /// `declared`: the option and its levels, e.g. "--classes 0, 1".
    #[error("{}: {at}, column `{column}`: a value that is not one of the levels declared with {declared}", path.display())]
    UndeclaredLevel {
        path: PathBuf,
        at: Position,
        column: String,
        value: String,
        declared: String,
    },
    #[error("{context}: group `{group}` of column `{column}` has no rows")]
    EmptyGroup {
        context: String,
        column: String,
        group: String,
    },
    #[error("{context}: target column `{column}` has a single class `{value}`; {needed}")]
    OneClassTarget {
        context: String,
        column: String,
        value: String,
        needed: &'static str,
    },
    #[error("{context}: target column `{column}` is {found}; {needed}")]
    WrongTask {
        context: String,
        column: String,
        found: String,
        needed: String,
    },
    #[error(
        "{context}: the sensitive attribute is required (when fitting: give --sensitive COLUMN; \
         when predicting: the data must hold the sensitive column named in the model's schema)"
    )]
    NoGroups { context: String },
    #[error("{context}: the target is required (give --target COLUMN)")]
    NoTarget { context: String },
    #[error("invalid {parameter}: {reason}")]
    InvalidParameter {
        parameter: &'static str,
        reason: String,
    },
    #[error(
        "no public bounds for column(s) {columns}: give them with --bounds col:lo:hi (no privacy cost), or a coarse public range with --coarse-bounds col:lo:hi to estimate them privately (costs --bounds-share of ε)"
    )]
    PrivateBoundsUnavailable { columns: String },
    #[error("privacy: {0}")]
    Privacy(#[from] dpfair_privacy::PrivacyError),
}

pub type Result<T> = std::result::Result<T, DataError>;

/// Shorthand for [`DataError::InvalidParameter`].
pub fn invalid(parameter: &'static str, reason: impl Into<String>) -> DataError {
    DataError::InvalidParameter {
        parameter,
        reason: reason.into(),
    }
}

/// The longest excerpt of a value an error message repeats (in characters).
pub const MAX_VALUE_IN_MESSAGE: usize = 60;

/// A value as an error message shows it: in full when short, else its first
/// [`MAX_VALUE_IN_MESSAGE`] characters, an ellipsis and the full length (a 1 MB field is not
/// repeated in a message).
pub fn clip(value: &str) -> String {
    clip_to(value, MAX_VALUE_IN_MESSAGE)
}

/// [`clip`] with a chosen length (e.g. a list of column names).
pub fn clip_to(value: &str, max_chars: usize) -> String {
    match value.char_indices().nth(max_chars) {
        None => value.to_string(),
        Some((end, _)) => format!("{}… ({} characters)", &value[..end], value.chars().count()),
    }
}
