//! Reading the catalogue's files (csv crate) and the encodings the papers apply.

use super::error::{CatalogError, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// A whole delimited file as strings: the header (if any) and the rows (fields trimmed).
pub(crate) struct Records {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Read `path`; `skip_lines` leading lines are ignored (e.g. the comment line of `adult.test`).
pub(crate) fn read(
    path: &Path,
    delimiter: u8,
    has_header: bool,
    skip_lines: usize,
) -> Result<Records> {
    let bytes = std::fs::read(path).map_err(|source| CatalogError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut start = 0;
    for _ in 0..skip_lines {
        start += bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len() - start, |p| p + 1);
    }
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(has_header)
        .trim(csv::Trim::All)
        .from_reader(&bytes[start..]);
    let malformed = |line: u64, reason: String| CatalogError::Malformed {
        path: path.to_path_buf(),
        line: line + skip_lines as u64,
        reason,
    };
    let header = if has_header {
        reader
            .headers()
            .map_err(|e| malformed(1, e.to_string()))?
            .iter()
            .map(String::from)
            .collect()
    } else {
        Vec::new()
    };
    let mut rows = Vec::new();
    for rec in reader.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            malformed(line, e.to_string())
        })?;
        if rec.iter().all(str::is_empty) {
            continue;
        }
        rows.push(rec.iter().map(String::from).collect());
    }
    Ok(Records { header, rows })
}

impl Records {
    /// The index of column `name`, or an error naming the file.
    pub fn column(&self, path: &Path, name: &str) -> Result<usize> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| CatalogError::Malformed {
                path: path.to_path_buf(),
                line: 1,
                reason: format!("no column `{name}` in the header"),
            })
    }
}

/// Parse a number, or an error naming the file, row and column.
pub(crate) fn number(path: &Path, row: usize, column: &str, value: &str) -> Result<f64> {
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| CatalogError::Malformed {
            path: path.to_path_buf(),
            line: row as u64,
            reason: format!("column `{column}`: `{value}` is not a finite number"),
        })
}

/// One-hot encoding of a categorical column with levels sorted as strings (the order of
/// `pandas.get_dummies`), named `column=level`.
pub(crate) struct OneHot {
    pub column: String,
    pub levels: Vec<String>,
}

impl OneHot {
    pub fn fit<'a>(column: &str, values: impl Iterator<Item = &'a str>) -> OneHot {
        let levels: BTreeSet<&str> = values.collect();
        OneHot {
            column: column.to_string(),
            levels: levels.into_iter().map(String::from).collect(),
        }
    }

    pub fn names(&self) -> impl Iterator<Item = String> + '_ {
        self.levels.iter().map(|l| format!("{}={l}", self.column))
    }

    /// Append the indicator columns of `value` to `out` (all zero for an unknown level).
    pub fn encode(&self, value: &str, out: &mut Vec<f64>) {
        out.extend(self.levels.iter().map(|l| f64::from(u8::from(l == value))));
    }
}
