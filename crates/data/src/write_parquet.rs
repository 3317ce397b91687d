//! Writing a small table of results (predictions) as a Parquet file, atomically
//! ([`crate::output::AtomicFile`]); zstd-compressed, one row group per 64 Ki rows.

use crate::output::AtomicFile;
use arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::path::Path;
use std::sync::Arc;

/// One output column: text or numbers, `None` for a null (a row without a result).
#[derive(Clone, Debug, PartialEq)]
pub enum OutColumn {
    Text(Vec<Option<String>>),
    Number(Vec<Option<f64>>),
}

/// Write `columns` (all of one length) to `path` as Parquet. A failed write leaves any previous
/// file at `path` intact.
///
/// ```
/// use dpfair_data::write_parquet::{OutColumn, write_parquet};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("pred.parquet");
/// write_parquet(&path, vec![
///     ("prediction".into(), OutColumn::Text(vec![Some("1".into()), None])),
///     ("p_1".into(), OutColumn::Number(vec![Some(0.75), None])),
/// ])?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_parquet(
    path: &Path,
    columns: Vec<(String, OutColumn)>,
) -> Result<(), parquet::errors::ParquetError> {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, c)| {
            let t = match c {
                OutColumn::Text(_) => DataType::Utf8,
                OutColumn::Number(_) => DataType::Float64,
            };
            Field::new(name, t, true)
        })
        .collect();
    let arrays: Vec<ArrayRef> = columns
        .into_iter()
        .map(|(_, c)| -> ArrayRef {
            match c {
                OutColumn::Text(v) => Arc::new(StringArray::from(v)),
                OutColumn::Number(v) => Arc::new(Float64Array::from(v)),
            }
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), arrays)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(1 << 16))
        .build();
    let mut writer = ArrowWriter::try_new(AtomicFile::create(path)?, schema, Some(props))?;
    writer.write(&batch)?;
    writer.into_inner()?.commit()?;
    Ok(())
}
