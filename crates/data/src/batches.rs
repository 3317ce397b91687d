//! Reading a CSV with a stored schema in bounded batches ([`SchemaBatches`]): the same columns,
//! codings, missing-value policy and error messages as [`Schema::load`], at most `batch_rows`
//! rows in memory at a time.
//!
//! Each batch is copied (with the header line) to a private temporary file that
//! [`Schema::load`] reads, so the rules are exactly those of the one-shot reader; the file is
//! removed when the iterator is dropped. Row numbers in a batch's error messages count from the
//! batch's first row, which the message names.

use crate::Dataset;
use crate::error::{DataError, Result};
use crate::load::{ApplyOptions, LoadReport};
use crate::schema::Schema;
use crate::table::{CsvFormat, HeaderMode, Table};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// Bytes of the file's beginning used to detect its delimiter and header.
const SNIFF_BYTES: u64 = 1 << 16;

/// An iterator over the batches of a CSV read with a schema: each item is the encoded rows of
/// at most `batch_rows` data rows (fewer when rows are dropped for missing values).
///
/// ```no_run
/// # fn demo(schema: &dpfair_data::Schema) -> dpfair_data::Result<()> {
/// use dpfair_data::batches::SchemaBatches;
/// let mut rows = 0;
/// for batch in SchemaBatches::open(schema, "big.csv", &Default::default(), 100_000)? {
///     rows += batch?.dataset.n_rows();
/// }
/// # Ok(()) }
/// ```
pub struct SchemaBatches<'a> {
    schema: &'a Schema,
    path: PathBuf,
    options: ApplyOptions,
    reader: csv::Reader<BufReader<std::fs::File>>,
    header: Option<csv::ByteRecord>,
    delimiter: u8,
    batch_rows: usize,
    tmp: PathBuf,
    /// Data rows read so far (before drops).
    rows_read: u64,
    finished: bool,
}

/// One batch: the encoded rows and the report of the rows it dropped.
pub struct Batch {
    pub dataset: Dataset,
    /// The 1-based data row of the file where the batch starts.
    pub first_row: u64,
    pub report: LoadReport,
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> DataError + '_ {
    move |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl<'a> SchemaBatches<'a> {
    /// Opens `path`; the delimiter and header are detected once from its beginning (per
    /// `options.format`) and then fixed for every batch.
    pub fn open(
        schema: &'a Schema,
        path: impl AsRef<Path>,
        options: &ApplyOptions,
        batch_rows: usize,
    ) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let mut head = Vec::new();
        std::fs::File::open(&path)
            .map_err(io_err(&path))?
            .take(SNIFF_BYTES)
            .read_to_end(&mut head)
            .map_err(io_err(&path))?;
        if head.len() as u64 == SNIFF_BYTES
            && let Some(end) = head.iter().rposition(|&b| b == b'\n')
        {
            head.truncate(end + 1);
        }
        let sniffed = Table::from_bytes(path.clone(), &head, &options.format)?;
        let delimiter = sniffed.delimiter;
        let file = std::fs::File::open(&path).map_err(io_err(&path))?;
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .from_reader(BufReader::with_capacity(1 << 20, file));
        let header = if sniffed.has_header {
            let mut rec = csv::ByteRecord::new();
            // Skip a UTF-8 byte-order mark and blank lines before the header, as the table reader does.
            loop {
                if !reader
                    .read_byte_record(&mut rec)
                    .map_err(|e| csv_err(&path, e))?
                {
                    break None;
                }
                if rec.iter().all(|f| f.iter().all(u8::is_ascii_whitespace)) {
                    continue;
                }
                if let Some(first) = rec.get(0)
                    && let Some(stripped) = first.strip_prefix(b"\xEF\xBB\xBF")
                {
                    let mut fixed = csv::ByteRecord::new();
                    fixed.push_field(stripped);
                    for f in rec.iter().skip(1) {
                        fixed.push_field(f);
                    }
                    rec = fixed;
                }
                break Some(rec);
            }
        } else {
            None
        };
        static OPENED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = std::env::temp_dir().join(format!(
            "dpfair-batch-{}-{}-{nanos:x}.csv",
            std::process::id(),
            OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let mut options = options.clone();
        options.format = CsvFormat {
            delimiter: Some(delimiter),
            header: if sniffed.has_header {
                HeaderMode::Present
            } else {
                HeaderMode::Absent
            },
        };
        Ok(SchemaBatches {
            schema,
            path,
            options,
            reader,
            header,
            delimiter,
            batch_rows: batch_rows.max(1),
            tmp,
            rows_read: 0,
            finished: false,
        })
    }

    /// The next batch, or None at the end of the file.
    fn next_batch(&mut self) -> Result<Option<Batch>> {
        let mut out = csv::WriterBuilder::new()
            .delimiter(self.delimiter)
            .flexible(true)
            .from_writer(Vec::with_capacity(1 << 20));
        if let Some(h) = &self.header {
            out.write_byte_record(h)
                .map_err(|e| csv_err(&self.path, e))?;
        }
        let mut rec = csv::ByteRecord::new();
        let mut n = 0;
        while n < self.batch_rows
            && self
                .reader
                .read_byte_record(&mut rec)
                .map_err(|e| csv_err(&self.path, e))?
        {
            out.write_byte_record(&rec)
                .map_err(|e| csv_err(&self.path, e))?;
            n += 1;
        }
        if n == 0 {
            return Ok(None);
        }
        let first_row = self.rows_read + 1;
        self.rows_read += n as u64;
        let bytes = out
            .into_inner()
            .map_err(|e| csv_err(&self.path, e.into_error().into()))?;
        write_private(&self.tmp, &bytes).map_err(io_err(&self.tmp))?;
        let loaded = self
            .schema
            .load(&self.tmp, &self.options)
            .map_err(|e| DataError::Batch {
                path: self.path.clone(),
                first: first_row,
                last: first_row + n as u64 - 1,
                reason: e
                    .to_string()
                    .replace(&format!("{}: ", self.tmp.display()), ""),
            })?;
        Ok(Some(Batch {
            dataset: loaded.dataset,
            first_row,
            report: loaded.report,
        }))
    }
}

/// Writes `bytes` to `path`, readable by the owner only (the batch holds private rows).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(path)?.write_all(bytes)
}

fn csv_err(path: &Path, e: csv::Error) -> DataError {
    DataError::Csv {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

impl Iterator for SchemaBatches<'_> {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        match self.next_batch() {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => {
                self.finished = true;
                None
            }
            Err(e) => {
                self.finished = true;
                Some(Err(e))
            }
        }
    }
}

impl Drop for SchemaBatches<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}
