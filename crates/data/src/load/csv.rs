//! A CSV file read into memory ([`Table`]) as a load's source: one chunk, every field text.

use super::Source;
use super::encode::{FileInfo, Rows, Value};
use crate::error::{Position, Result};
use crate::table::Table;

/// A [`Table`] as a [`Source`].
pub(crate) struct CsvSource<'t> {
    table: &'t Table,
    info: FileInfo,
}

impl<'t> CsvSource<'t> {
    pub(crate) fn new(table: &'t Table) -> Self {
        CsvSource {
            table,
            info: FileInfo {
                path: table.path.clone(),
                columns: table.columns.clone(),
                delimiter: table.delimiter,
                has_header: table.has_header,
                unnamed_index: table.unnamed_index,
                nested: vec![false; table.columns.len()],
            },
        }
    }
}

impl Rows for Table {
    fn n_rows(&self) -> usize {
        Table::n_rows(self)
    }

    fn value(&self, row: usize, col: usize) -> Value<'_> {
        Value::Text(self.get(row, col))
    }

    fn position(&self, row: usize) -> Position {
        Table::position(self, row)
    }
}

impl Source for CsvSource<'_> {
    fn info(&self) -> &FileInfo {
        &self.info
    }

    fn may_hold_text(&self, _col: usize) -> bool {
        true
    }

    fn scan(&self, _cols: &[usize], f: &mut dyn FnMut(&dyn Rows) -> Result<()>) -> Result<()> {
        f(self.table)
    }

    fn position(&self, row: usize) -> Position {
        self.table.position(row)
    }
}
