//! Reading the catalogue's files (through the data crate's [`Table`]) and the encodings the
//! papers apply.

use super::error::{CatalogError, Result};
use crate::table::{CsvFormat, HeaderMode, Table};
use std::collections::BTreeSet;
use std::path::Path;

/// Read `path` into a [`Table`] with a known delimiter and header; `skip_lines` leading lines are
/// dropped first (the comment line of `adult.test`).
pub(crate) fn read(
    path: &Path,
    delimiter: u8,
    has_header: bool,
    skip_lines: usize,
) -> Result<Table> {
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
    let format = CsvFormat {
        delimiter: Some(delimiter),
        header: if has_header {
            HeaderMode::Present
        } else {
            HeaderMode::Absent
        },
    };
    Ok(Table::from_bytes(
        path.to_path_buf(),
        &bytes[start..],
        &format,
    )?)
}

/// The index of column `name` in a built-in file.
pub(crate) fn column(t: &Table, name: &str) -> Result<usize> {
    Ok(t.column_index(name, "built-in loader")?)
}

/// Field `(row, col)` as a finite number, or an error naming the file, row and column.
pub(crate) fn number(t: &Table, row: usize, col: usize) -> Result<f64> {
    let value = t.get(row, col);
    value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| malformed(t, row, col, format!("`{value}` is not a finite number")))
}

/// Field `(row, col)` coded by its position in `levels`, or an error naming the column.
pub(crate) fn code(t: &Table, row: usize, col: usize, levels: &[&str]) -> Result<u32> {
    code_of(t, row, col, t.get(row, col), levels)
}

/// `value` (read from `(row, col)`, possibly normalised) coded by its position in `levels`.
pub(crate) fn code_of(
    t: &Table,
    row: usize,
    col: usize,
    value: &str,
    levels: &[&str],
) -> Result<u32> {
    levels
        .iter()
        .position(|l| *l == value)
        .map(|p| p as u32)
        .ok_or_else(|| {
            malformed(
                t,
                row,
                col,
                format!("unexpected value `{value}` (expected one of {levels:?})"),
            )
        })
}

fn malformed(t: &Table, row: usize, col: usize, reason: String) -> CatalogError {
    let at = t.position(row);
    CatalogError::Malformed {
        path: t.path.clone(),
        line: at.line,
        reason: format!("data row {}, column `{}`: {reason}", at.row, t.columns[col]),
    }
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
