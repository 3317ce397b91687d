//! Reading a delimited text file into memory: delimiter and header detection, ragged-row checks,
//! and positions (1-based data row, file line) for error messages.

use crate::error::{DataError, Position, Result, clip, clip_to};
use std::path::{Path, PathBuf};

/// Whether the first row is a header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HeaderMode {
    /// Header iff every field of the first row is non-empty, not a missing-value token and not a
    /// number (e.g. `age,sex,income` is a header; `39, State-gov, 77516, ...` is data).
    #[default]
    Auto,
    Present,
    Absent,
}

/// How to read a delimited file. Without a header, columns are named by their 0-based position
/// (`"0"`, `"1"`, …), so `--target 0` names the first column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsvFormat {
    /// `None`: detected from the first non-empty line (the most frequent of `,` `;` TAB outside
    /// quotes; comma when none occurs).
    pub delimiter: Option<u8>,
    pub header: HeaderMode,
}

/// Missing-value tokens (compared after trimming): empty, `?` and `NA`. `NaN` and infinities are
/// not missing values: they are refused as non-finite.
pub fn is_missing(field: &str) -> bool {
    matches!(field, "" | "?" | "NA")
}

/// Auto-detection of a header row: every field is a name (not missing, not a number); the first
/// field may also be empty, as in the header `,age,income` that pandas' `to_csv()` writes above
/// its unnamed index column.
fn looks_like_header(record: &csv::StringRecord) -> bool {
    let is_name = |f: &str| !is_missing(f) && f.parse::<f64>().is_err();
    let mut fields = record.iter();
    match fields.next() {
        Some("") => record.len() >= 2 && fields.all(is_name),
        Some(first) => is_name(first) && fields.all(is_name),
        None => false,
    }
}

/// A file read into memory: column names and every data row, fields trimmed. The fields are
/// stored back to back in one buffer (one allocation for the whole file, not one per row).
#[derive(Debug)]
pub struct Table {
    pub path: PathBuf,
    pub columns: Vec<String>,
    pub has_header: bool,
    pub delimiter: u8,
    /// The header's first field is empty: an unnamed index column (pandas' `to_csv()`), which
    /// is not used as a feature unless named explicitly (as column `0`).
    pub unnamed_index: bool,
    /// Every data field, concatenated.
    text: String,
    /// End offset in `text` of each field, row-major (`rows × width` entries).
    ends: Vec<usize>,
    lines: Vec<u64>,
}

impl Table {
    /// Read `path`. Errors: unreadable file, malformed CSV, no data rows, ragged rows.
    pub fn read(path: impl AsRef<Path>, format: &CsvFormat) -> Result<Table> {
        let path = path.as_ref().to_path_buf();
        let bytes = std::fs::read(&path).map_err(|source| DataError::Io {
            path: path.clone(),
            source,
        })?;
        Self::from_bytes(path, &bytes, format)
    }

    /// Parse in-memory bytes; `path` is only used in messages.
    pub fn from_bytes(path: PathBuf, bytes: &[u8], format: &CsvFormat) -> Result<Table> {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let delimiter = format.delimiter.unwrap_or_else(|| detect_delimiter(bytes));
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(bytes);
        let mut first: Option<csv::StringRecord> = None;
        let mut has_header = false;
        let mut text = String::with_capacity(bytes.len());
        let mut ends = Vec::new();
        let mut lines = Vec::new();
        let mut record = csv::StringRecord::new();
        // Line numbers from byte offsets (the reader's own line count skips blank lines).
        let (mut counted_to, mut line) = (0usize, 1u64);
        loop {
            match reader.read_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {
                    // A blank (or whitespace-only) line: one empty field. Skipped before the
                    // first row and in files of several columns; in a one-column file it is a
                    // row with a missing value (the csv writer writes one as `""`, while truly
                    // empty lines never reach here). A row of empty fields (`,,`) is kept: it is
                    // a row with missing values, and dropping it would shift row numbers.
                    let blank = record.len() == 1 && record[0].is_empty();
                    if blank && first.as_ref().is_none_or(|r| r.len() > 1) {
                        continue;
                    }
                    let start = record.position().map_or(0, |p| p.byte() as usize);
                    let mut start = start.min(bytes.len()).max(counted_to);
                    while start < bytes.len() && matches!(bytes[start], b'\n' | b'\r') {
                        start += 1;
                    }
                    line += bytes[counted_to..start]
                        .iter()
                        .filter(|&&b| b == b'\n')
                        .count() as u64;
                    counted_to = start;
                    let head = match &first {
                        Some(head) => head,
                        None => {
                            has_header = match format.header {
                                HeaderMode::Present => true,
                                HeaderMode::Absent => false,
                                HeaderMode::Auto => looks_like_header(&record),
                            };
                            first = Some(record.clone());
                            if has_header {
                                continue;
                            }
                            first.as_ref().expect("just set")
                        }
                    };
                    if record.len() != head.len() {
                        return Err(DataError::RaggedRow {
                            path,
                            at: Position {
                                row: lines.len() + 1,
                                line,
                            },
                            expected: head.len(),
                            found: record.len(),
                        });
                    }
                    lines.push(line);
                    for f in record.iter() {
                        text.push_str(f);
                        ends.push(text.len());
                    }
                }
                Err(e) => {
                    return Err(DataError::Csv {
                        path,
                        reason: e.to_string(),
                    });
                }
            }
        }
        let Some(first) = first else {
            return Err(DataError::EmptyFile { path });
        };
        let width = first.len();
        let columns: Vec<String> = if has_header {
            let mut names: Vec<String> = Vec::with_capacity(width);
            // A set, not `names.contains`: a header of 10⁶ columns was quadratic (issue #41).
            let mut seen = std::collections::HashSet::with_capacity(width);
            for (i, f) in first.iter().enumerate() {
                let name = if f.is_empty() {
                    i.to_string()
                } else {
                    f.to_string()
                };
                if !seen.insert(name.clone()) {
                    return Err(DataError::Csv {
                        path,
                        reason: format!("the header names column `{}` twice", clip(&name)),
                    });
                }
                names.push(name);
            }
            names
        } else {
            (0..width).map(|i| i.to_string()).collect()
        };
        if lines.is_empty() {
            return Err(DataError::EmptyFile { path });
        }
        let unnamed_index = has_header && first.get(0).is_some_and(str::is_empty);
        Ok(Table {
            path,
            columns,
            has_header,
            delimiter,
            unnamed_index,
            text,
            ends,
            lines,
        })
    }

    pub fn n_rows(&self) -> usize {
        self.lines.len()
    }

    /// A table of rows read from a file without lines (Parquet, Arrow IPC): `fields` row-major,
    /// `columns.len()` per row; positions name data rows only.
    pub(crate) fn from_fields(path: PathBuf, columns: Vec<String>, fields: &[String]) -> Table {
        let width = columns.len().max(1);
        let mut text = String::new();
        let mut ends = Vec::with_capacity(fields.len());
        for f in fields {
            text.push_str(f);
            ends.push(text.len());
        }
        Table {
            path,
            has_header: true,
            delimiter: b',',
            unnamed_index: false,
            lines: vec![0; fields.len() / width],
            columns,
            text,
            ends,
        }
    }

    /// Read a file of any supported format ([`crate::FileFormat`]) into memory: a CSV as
    /// [`Table::read`] does; a Parquet or Arrow IPC file with its values as text (nulls empty).
    pub fn read_any(path: impl AsRef<Path>, format: &CsvFormat) -> Result<Table> {
        crate::load::columnar::read_table(path.as_ref(), format)
    }

    /// The field at 0-based data row `row`, column `col` (trimmed).
    pub fn get(&self, row: usize, col: usize) -> &str {
        let k = row * self.columns.len() + col;
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        &self.text[start..self.ends[k]]
    }

    /// The position of 0-based data row `row`, for messages.
    pub fn position(&self, row: usize) -> Position {
        Position {
            row: row + 1,
            line: self.lines[row],
        }
    }

    /// The index of column `name`; `parameter` says where the name came from (e.g. `--target`).
    pub fn column_index(&self, name: &str, parameter: &'static str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| DataError::UnknownColumn {
                path: self.path.clone(),
                column: clip(name),
                parameter,
                available: clip_to(&self.columns.join(", "), 400),
            })
    }
}

/// The most frequent of `,` `;` TAB outside double quotes in the first non-empty line.
fn detect_delimiter(bytes: &[u8]) -> u8 {
    let line = bytes
        .split(|&b| b == b'\n')
        .find(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
        .unwrap_or(&[]);
    let mut counts = [0usize; 3];
    let mut quoted = false;
    for &b in line {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => counts[0] += 1,
            b';' if !quoted => counts[1] += 1,
            b'\t' if !quoted => counts[2] += 1,
            _ => {}
        }
    }
    let cands = [b',', b';', b'\t'];
    let best = (0..3).max_by_key(|&i| (counts[i], 3 - i)).unwrap_or(0);
    if counts[best] == 0 { b',' } else { cands[best] }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Result<Table> {
        Table::from_bytes("t.csv".into(), s.as_bytes(), &CsvFormat::default())
    }

    #[test]
    fn detects_delimiters_and_headers() {
        let a = t("a;b;c\n1;2;3\n").unwrap();
        assert_eq!(a.delimiter, b';');
        assert!(a.has_header);
        assert_eq!(a.columns, ["a", "b", "c"]);
        let b = t("1\tx\t3\n4\ty\t6\n\n").unwrap();
        assert_eq!(b.delimiter, b'\t');
        assert!(!b.has_header);
        assert_eq!(b.columns, ["0", "1", "2"]);
        assert_eq!(b.n_rows(), 2);
        let c = t("\"x,y\",z\n1,2\n").unwrap();
        assert_eq!(c.delimiter, b',');
        assert_eq!(c.columns, ["x,y", "z"]);
        // A `?` in the first row means data, not header.
        let d = t("a,?\nb,c\n").unwrap();
        assert!(!d.has_header);
        // Rows of empty fields are kept (missing values); blank lines are not rows.
        let e = t("a,b\n,\n \n1,2\n").unwrap();
        assert_eq!(e.n_rows(), 2);
        // One column: `""` is a row with an empty value.
        let f = t("p\nx\n\"\"\ny\n").unwrap();
        assert_eq!(f.n_rows(), 3);
    }

    #[test]
    fn positions_count_data_rows_from_one() {
        let a = t("a,b\n1,2\n\n3,4\n").unwrap();
        assert_eq!(a.position(1), Position { row: 2, line: 4 });
    }
}
