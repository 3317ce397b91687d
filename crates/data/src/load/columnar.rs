//! Parquet and Arrow IPC (Feather v2) files as a load's source, read in record batches of at
//! most [`BATCH_ROWS`] rows with only the used columns decoded, so memory is bounded by a batch
//! (and the file's row group), not by the file.
//!
//! Column types map onto the CSV rules: integer, floating-point, decimal and boolean columns are
//! numbers (booleans 0/1); string columns (plain, large, view or dictionary-encoded) are text,
//! trimmed, with `?`, `NA` and empty as missing values, exactly as CSV fields; other types
//! (dates, timestamps) are read as their text. A null is a missing value. NaN and infinities
//! are refused as non-finite, as in a CSV. Errors name the file, the 1-based data row and the
//! column.
//!
//! [`learn_schema`] and [`read_batches`] fit a file larger than memory: a first pass learns the
//! schema without storing rows, a second hands the coded rows to the caller batch by batch.

use super::encode::{Encoder, FileInfo, Rows, Value};
use super::{
    ApplyOptions, LoadOptions, LoadReport, Loaded, Source, learn, stored_dataset, stored_plan,
};
use crate::dataset::Dataset;
use crate::error::{DataError, Position, Result, clip};
use crate::schema::Schema;
use crate::table::Table;
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Float64Type};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Rows per record batch read.
pub const BATCH_ROWS: usize = 65_536;

/// A data file's format, from its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// Any other extension (`.csv`, `.data`, `.tsv`, none): delimited text.
    Csv,
    /// `.parquet`, `.pq`.
    Parquet,
    /// `.arrow`, `.ipc`, `.feather`: the Arrow IPC file format (Feather v2).
    ArrowIpc,
}

impl FileFormat {
    /// The format of `path` by its extension (case-insensitive); CSV unless it says otherwise.
    ///
    /// ```
    /// use dpfair_data::load::FileFormat;
    /// assert_eq!(FileFormat::of("train.parquet".as_ref()), FileFormat::Parquet);
    /// assert_eq!(FileFormat::of("train.Feather".as_ref()), FileFormat::ArrowIpc);
    /// assert_eq!(FileFormat::of("adult.data".as_ref()), FileFormat::Csv);
    /// ```
    pub fn of(path: &Path) -> FileFormat {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("parquet" | "pq") => FileFormat::Parquet,
            Some("arrow" | "ipc" | "feather") => FileFormat::ArrowIpc,
            _ => FileFormat::Csv,
        }
    }

    /// The format's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Csv => "CSV",
            FileFormat::Parquet => "Parquet",
            FileFormat::ArrowIpc => "Arrow IPC",
        }
    }
}

/// A Parquet or Arrow IPC file: its columns and their types, read lazily.
pub(crate) struct ColumnarFile {
    info: FileInfo,
    format: FileFormat,
    types: Vec<DataType>,
}

impl ColumnarFile {
    /// Read the file's schema (not its rows). Errors: unreadable file, not a file of this
    /// format, duplicate columns. A nested column is refused only when a load uses it.
    pub(crate) fn open(path: &Path, format: FileFormat) -> Result<ColumnarFile> {
        let schema = match format {
            FileFormat::Parquet => parquet_builder(path)?.schema().clone(),
            FileFormat::ArrowIpc => ipc_reader(path, None)?.schema(),
            FileFormat::Csv => unreachable!("a CSV file is read by Table"),
        };
        let bad = |reason: String| DataError::Columnar {
            path: path.to_path_buf(),
            format: format.name(),
            reason,
        };
        let mut columns: Vec<String> = Vec::with_capacity(schema.fields().len());
        let mut types = Vec::with_capacity(schema.fields().len());
        let mut seen = std::collections::HashSet::with_capacity(schema.fields().len());
        for field in schema.fields() {
            if !seen.insert(field.name().as_str()) {
                return Err(bad(format!(
                    "the file names column `{}` twice",
                    clip(field.name())
                )));
            }
            columns.push(field.name().clone());
            types.push(field.data_type().clone());
        }
        let nested = types.iter().map(DataType::is_nested).collect();
        Ok(ColumnarFile {
            info: FileInfo {
                path: path.to_path_buf(),
                columns,
                delimiter: b',',
                has_header: true,
                unnamed_index: false,
                nested,
            },
            format,
            types,
        })
    }

    fn error(&self, reason: impl std::fmt::Display) -> DataError {
        DataError::Columnar {
            path: self.info.path.clone(),
            format: self.format.name(),
            reason: reason.to_string(),
        }
    }
}

fn parquet_builder(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let file = File::open(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| DataError::Columnar {
        path: path.to_path_buf(),
        format: "Parquet",
        reason: e.to_string(),
    })
}

fn ipc_reader(
    path: &Path,
    projection: Option<Vec<usize>>,
) -> Result<arrow::ipc::reader::FileReader<std::io::BufReader<File>>> {
    let file = File::open(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    arrow::ipc::reader::FileReader::try_new_buffered(file, projection).map_err(|e| {
        DataError::Columnar {
            path: path.to_path_buf(),
            format: "Arrow IPC",
            reason: format!("{e} (dpfair reads the IPC file format, as Feather v2 writes)"),
        }
    })
}

/// Whether a column of this type is read as numbers (not text).
fn is_numeric(t: &DataType) -> bool {
    match t {
        DataType::Dictionary(_, values) => is_numeric(values),
        t => t.is_numeric() || *t == DataType::Boolean,
    }
}

/// One decoded column of a batch.
enum Column {
    Number(arrow::array::Float64Array),
    Text(arrow::array::StringArray),
}

/// One record batch as rows: the used columns decoded, the others absent.
struct Batch {
    columns: Vec<Option<Column>>,
    rows: usize,
    /// Data rows of the file before this batch.
    offset: usize,
}

impl Rows for Batch {
    fn n_rows(&self) -> usize {
        self.rows
    }

    fn value(&self, row: usize, col: usize) -> Value<'_> {
        match self.columns[col]
            .as_ref()
            .expect("only used columns are asked for")
        {
            Column::Number(a) if a.is_valid(row) => Value::Number(a.value(row)),
            Column::Text(a) if a.is_valid(row) => Value::Text(a.value(row).trim()),
            _ => Value::Null,
        }
    }

    fn position(&self, row: usize) -> Position {
        Position {
            row: self.offset + row + 1,
            line: 0,
        }
    }
}

impl ColumnarFile {
    /// Decode column `col` of a batch: numbers as f64, everything else as text.
    fn decode(&self, col: usize, array: &ArrayRef) -> Result<Column> {
        let name = &self.info.columns[col];
        if array.data_type().is_nested() {
            return Err(self.error(format!(
                "column `{}` is nested ({}); dpfair reads flat columns only (leave it out of \
                 --features, or flatten it)",
                clip(name),
                array.data_type()
            )));
        }
        let cast_to = |t: &DataType| {
            cast(array, t).map_err(|e| {
                self.error(format!(
                    "column `{}` of type {} cannot be read: {e}",
                    clip(name),
                    array.data_type()
                ))
            })
        };
        Ok(if is_numeric(array.data_type()) {
            Column::Number(
                cast_to(&DataType::Float64)?
                    .as_primitive::<Float64Type>()
                    .clone(),
            )
        } else {
            Column::Text(cast_to(&DataType::Utf8)?.as_string::<i32>().clone())
        })
    }

    fn batch(&self, batch: &RecordBatch, cols: &[usize], offset: usize) -> Result<Batch> {
        let mut columns: Vec<Option<Column>> = (0..self.info.columns.len()).map(|_| None).collect();
        for &c in cols {
            let array = batch
                .column_by_name(&self.info.columns[c])
                .ok_or_else(|| self.error(format!("column `{}` was not read", c)))?;
            columns[c] = Some(self.decode(c, array)?);
        }
        Ok(Batch {
            columns,
            rows: batch.num_rows(),
            offset,
        })
    }
}

impl Source for ColumnarFile {
    fn info(&self) -> &FileInfo {
        &self.info
    }

    fn may_hold_text(&self, col: usize) -> bool {
        !is_numeric(&self.types[col])
    }

    fn scan(&self, cols: &[usize], f: &mut dyn FnMut(&dyn Rows) -> Result<()>) -> Result<()> {
        let mut seen = 0usize;
        // A record batch as written may be larger than BATCH_ROWS (an IPC file's batches are
        // the writer's): it is decoded in slices of at most BATCH_ROWS rows (zero-copy).
        let mut each = |batch: std::result::Result<RecordBatch, arrow::error::ArrowError>| {
            let batch = batch.map_err(|e| self.error(e))?;
            for start in (0..batch.num_rows()).step_by(BATCH_ROWS) {
                let len = BATCH_ROWS.min(batch.num_rows() - start);
                let rows = self.batch(&batch.slice(start, len), cols, seen)?;
                seen += rows.rows;
                f(&rows)?;
            }
            Ok::<(), DataError>(())
        };
        match self.format {
            FileFormat::Parquet => {
                let builder = parquet_builder(&self.info.path)?;
                let mask = ProjectionMask::roots(builder.parquet_schema(), cols.iter().copied());
                let reader = builder
                    .with_projection(mask)
                    .with_batch_size(BATCH_ROWS)
                    .build()
                    .map_err(|e| self.error(e))?;
                for batch in reader {
                    each(batch)?;
                }
            }
            FileFormat::ArrowIpc => {
                for batch in ipc_reader(&self.info.path, Some(cols.to_vec()))? {
                    each(batch)?;
                }
            }
            FileFormat::Csv => unreachable!("a CSV file is read by Table"),
        }
        if seen == 0 {
            return Err(DataError::EmptyFile {
                path: self.info.path.clone(),
            });
        }
        Ok(())
    }

    fn position(&self, row: usize) -> Position {
        Position {
            row: row + 1,
            line: 0,
        }
    }
}

/// The file at `path` as a source: columnar files are opened lazily, a CSV is read whole.
enum AnySource {
    Csv(Table),
    Columnar(ColumnarFile),
}

impl AnySource {
    fn open(path: &Path, format: &crate::CsvFormat) -> Result<AnySource> {
        Ok(match FileFormat::of(path) {
            FileFormat::Csv => AnySource::Csv(Table::read(path, format)?),
            columnar => AnySource::Columnar(ColumnarFile::open(path, columnar)?),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&dyn Source) -> T) -> T {
        match self {
            AnySource::Csv(table) => f(&super::csv::CsvSource::new(table)),
            AnySource::Columnar(file) => f(file),
        }
    }
}

/// The training load of `path` without keeping its rows: one pass that codes and checks every
/// row as [`super::load`] does (same schema, same errors) in bounded memory for a Parquet or
/// Arrow IPC file. The data set has the columns and the group names but no rows, and the
/// report's `rows` is empty. Follow with [`read_batches`].
///
/// ```no_run
/// use dpfair_data::load::{learn_schema, read_batches};
/// use dpfair_data::{ApplyOptions, LoadOptions};
/// let options = LoadOptions {
///     target: Some("y".into()),
///     sensitive: Some("group".into()),
///     ..LoadOptions::default()
/// };
/// let schema = learn_schema("big.parquet", &options)?.schema;
/// let apply = ApplyOptions { with_target: true, ..ApplyOptions::default() };
/// let mut rows = 0;
/// read_batches("big.parquet", &schema, &apply, |batch| {
///     rows += batch.n_rows();
///     Ok::<(), dpfair_data::DataError>(())
/// })?;
/// # Ok::<(), dpfair_data::DataError>(())
/// ```
pub fn learn_schema(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Loaded> {
    let source = AnySource::open(path.as_ref(), &options.format)?;
    source.with(|s| learn(s, options, false))
}

/// Read `path` under a stored `schema` batch by batch (at most [`BATCH_ROWS`] rows each; rows
/// with missing values dropped or refused as `options` says), handing each batch's coded rows
/// to `f` in file order; an error of `f` stops the reading and is returned. Returns the report
/// (its `rows` empty). Memory is bounded by a batch for a Parquet or Arrow IPC file; a CSV is
/// read whole and handed over in one batch.
pub fn read_batches<E: From<DataError>>(
    path: impl AsRef<Path>,
    schema: &Schema,
    options: &ApplyOptions,
    mut f: impl FnMut(Dataset) -> std::result::Result<(), E>,
) -> std::result::Result<LoadReport, E> {
    let source = AnySource::open(path.as_ref(), &options.format)?;
    // An error of `f` is kept here; the reader is stopped with a placeholder, replaced on return.
    let mut stopped: Option<E> = None;
    let read = source.with(|source| {
        let file = source.info();
        let plan = stored_plan(schema, file, options.with_target)?;
        let (mut seen, mut kept) = (0usize, 0usize);
        let mut missing_by_column: Vec<(String, usize)> = Vec::new();
        source.scan(&plan.used(), &mut |chunk| {
            let mut encoder = Encoder::new(file, plan.clone(), options.missing, true)
                .unseen(options.unseen)
                .starting_at(seen);
            encoder.push(chunk)?;
            seen += chunk.n_rows();
            let enc = encoder.finish();
            merge_missing(&mut missing_by_column, &enc.report.missing_by_column);
            if enc.kept > 0 {
                kept += enc.kept;
                if let Err(e) = f(stored_dataset(schema, &enc)?) {
                    stopped = Some(e);
                    return Err(crate::error::invalid("batch", "stopped by the caller"));
                }
            }
            Ok(())
        })?;
        if kept == 0 {
            return Err(DataError::AllRowsMissing {
                path: file.path.clone(),
                dropped: seen,
            });
        }
        Ok(LoadReport {
            path: PathBuf::from(&file.path),
            rows_in_file: seen,
            rows: Vec::new(),
            dropped: seen - kept,
            missing_by_column,
            delimiter: file.delimiter,
            has_header: file.has_header,
            skipped_index: false,
            skipped_ids: Vec::new(),
            text_columns: Vec::new(),
        })
    });
    match (read, stopped) {
        (_, Some(e)) => Err(e),
        (read, None) => Ok(read?),
    }
}

fn merge_missing(total: &mut Vec<(String, usize)>, part: &[(String, usize)]) {
    if total.is_empty() {
        total.extend_from_slice(part);
    } else {
        for ((_, t), (_, p)) in total.iter_mut().zip(part) {
            *t += p;
        }
    }
}

/// Any file read whole as a [`Table`] of text fields (see [`Table::read_any`]).
pub(crate) fn read_table(path: &Path, format: &crate::CsvFormat) -> Result<Table> {
    let file = match FileFormat::of(path) {
        FileFormat::Csv => return Table::read(path, format),
        columnar => ColumnarFile::open(path, columnar)?,
    };
    let cols: Vec<usize> = (0..file.info.columns.len()).collect();
    let mut fields = Vec::new();
    file.scan(&cols, &mut |chunk| {
        for r in 0..chunk.n_rows() {
            fields.extend(cols.iter().map(|&c| match chunk.value(r, c) {
                Value::Null => String::new(),
                v => v.text().into_owned(),
            }));
        }
        Ok(())
    })?;
    Ok(Table::from_fields(
        path.to_path_buf(),
        file.info.columns.clone(),
        &fields,
    ))
}
