//! Report files: what holders send back to the collector, in two formats.
//!
//! * **Arrow IPC** (`.arrow`, `.ipc`; the default for those extensions): record batches of
//!   [`BATCH_ROWS`] reports. Hadamard reports are two columns, `row` (the narrowest unsigned
//!   integer that holds K−1: u8, u16 or u32) and `bit` (Boolean, bit-packed; true is +1): about
//!   2.1 bytes per report for a depth-8 partition (K = 512). Laplace reports keep their full
//!   precision, f64 columns `u_0..u_{L−1}, v_0..v_{L−1}`. The schema metadata carries the format
//!   tag and version, the mechanism, ε, the number of leaves and the partition's digest
//!   ([`PartitionFile::digest`]), so reports for another partition, mechanism or ε are refused
//!   before any is summed.
//! * **CSV** (the text format of earlier versions, still read and written): Laplace reports as
//!   `epsilon,u_0..,v_0..` ([`super::protocol`]); Hadamard reports as `epsilon,hadamard_row,bit`
//!   (bit 1 is +1). CSV has no metadata: a report belongs to a partition through its width and
//!   its ε only.
//!
//! Reading folds the reports into a [`ReportSums`] batch by batch: memory does not grow with the
//! number of reports.

use super::collector::ReportSums;
use super::error::{Result, bad_data};
use super::privatiser::{Mechanism, Report};
use super::protocol::{PartitionFile, ReportWriter, visit_reports};
use arrow::array::{
    Array, ArrayRef, BooleanArray, Float64Array, RecordBatch, UInt8Array, UInt16Array, UInt32Array,
};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::error::ArrowError;
use arrow::ipc::writer::FileWriter;
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Arc;

/// The format tag in a binary report file's metadata.
pub const REPORTS_FORMAT: &str = "dpfair-ldp-reports";
/// The version of the binary report format.
pub const REPORTS_VERSION: &str = "1";
/// Reports per record batch of an Arrow report file.
pub const BATCH_ROWS: usize = 1 << 20;
/// The header of a Hadamard CSV report file.
pub const HADAMARD_CSV_HEADER: &str = "epsilon,hadamard_row,bit";
/// The first line of a CSV report file, before the partition's digest.
pub const CSV_TAG: &str = "# dpfair-ldp-reports partition=";

const ARROW_MAGIC: &[u8; 6] = b"ARROW1";

/// What a report file says about its reports (and what the collector expects of them).
#[derive(Clone, Debug, PartialEq)]
pub struct ReportsHeader {
    pub mechanism: Mechanism,
    pub epsilon: f64,
    pub n_leaves: usize,
    /// The partition's digest ([`PartitionFile::digest`]); empty in a CSV file.
    pub partition: String,
}

impl ReportsHeader {
    /// The reports a partition asks for: its mechanism, ε, leaves and digest.
    pub fn for_partition(p: &PartitionFile) -> Result<Self> {
        Ok(ReportsHeader {
            mechanism: p.mechanism,
            epsilon: p.epsilon,
            n_leaves: p.tree.n_leaves(),
            partition: p.digest()?,
        })
    }

    fn metadata(&self) -> HashMap<String, String> {
        HashMap::from([
            ("dpfair.format".into(), REPORTS_FORMAT.into()),
            ("dpfair.version".into(), REPORTS_VERSION.into()),
            ("dpfair.mechanism".into(), self.mechanism.name().into()),
            ("dpfair.epsilon".into(), self.epsilon.to_string()),
            ("dpfair.leaves".into(), self.n_leaves.to_string()),
            ("dpfair.partition".into(), self.partition.clone()),
        ])
    }

    /// The header a report file's schema metadata describes (Arrow IPC, or a Parquet file
    /// written from one); refuses metadata that is not a dpfair report file's.
    pub fn from_metadata(m: &HashMap<String, String>) -> Result<Self> {
        let get = |k: &str| {
            m.get(k).ok_or_else(|| {
                bad_data(
                    "report file",
                    format!("not a dpfair report file (no `{k}` in its metadata)"),
                )
            })
        };
        if get("dpfair.format")? != REPORTS_FORMAT {
            return Err(bad_data("report file", "not a dpfair report file"));
        }
        let version = get("dpfair.version")?;
        if version != REPORTS_VERSION {
            return Err(bad_data(
                "report file",
                format!("format version {version}; this dpfair reads version {REPORTS_VERSION}"),
            ));
        }
        let bad =
            |k: &str, v: &str| bad_data("report file", format!("bad `{k}` in its metadata: `{v}`"));
        let mech = get("dpfair.mechanism")?;
        let eps = get("dpfair.epsilon")?;
        let leaves = get("dpfair.leaves")?;
        Ok(ReportsHeader {
            mechanism: Mechanism::from_name(mech).ok_or_else(|| bad("dpfair.mechanism", mech))?,
            epsilon: eps.parse().map_err(|_| bad("dpfair.epsilon", eps))?,
            n_leaves: leaves.parse().map_err(|_| bad("dpfair.leaves", leaves))?,
            partition: get("dpfair.partition")?.clone(),
        })
    }

    /// Refuses reports made for another partition than `self`'s (its digest), or carrying no
    /// digest (a CSV file of an earlier dpfair, or one written by hand): the leaves of two
    /// partitions of the same size are not the same cells.
    pub fn check_partition(&self, found: &str) -> Result<()> {
        if found.is_empty() {
            return Err(bad_data(
                "report file",
                format!(
                    "no partition digest (a CSV report file needs the first line \
                     `{CSV_TAG}{}`, which `dpfair ldp privatize` writes; add it only to reports \
                     known to be made with this partition)",
                    self.partition
                ),
            ));
        }
        if found != self.partition {
            return Err(bad_data(
                "report file",
                format!(
                    "reports made for another partition ({found}, this partition is {})",
                    self.partition
                ),
            ));
        }
        Ok(())
    }

    /// Refuses reports described by `found` for the collector expecting `self`: another
    /// partition (digest), mechanism, ε or number of leaves.
    pub fn check(&self, found: &ReportsHeader) -> Result<()> {
        let refuse = |m: String| Err(bad_data("report file", m));
        if found.mechanism != self.mechanism {
            return refuse(format!(
                "reports made with the {} mechanism, the partition asks for {}",
                found.mechanism, self.mechanism
            ));
        }
        self.check_partition(&found.partition)?;
        if found.n_leaves != self.n_leaves {
            return refuse(format!(
                "reports for a partition of {} leaves, this one has {}",
                found.n_leaves, self.n_leaves
            ));
        }
        if found.epsilon.to_bits() != self.epsilon.to_bits() {
            return refuse(format!(
                "reports made at ε = {}, the partition asks for {}",
                found.epsilon, self.epsilon
            ));
        }
        Ok(())
    }
}

/// The on-disk format of a report file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Csv,
    Arrow,
}

impl ReportFormat {
    /// Arrow for a path ending in `.arrow` or `.ipc`, CSV otherwise.
    pub fn for_path(path: &std::path::Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("arrow") || e.eq_ignore_ascii_case("ipc") => {
                ReportFormat::Arrow
            }
            _ => ReportFormat::Csv,
        }
    }
}

fn arrow_err(e: ArrowError) -> super::error::LpctError {
    bad_data("report file", e.to_string())
}

/// The narrowest unsigned type holding the row indices 0..K.
fn row_type(rows: usize) -> DataType {
    if rows <= 1 << 8 {
        DataType::UInt8
    } else if rows <= 1 << 16 {
        DataType::UInt16
    } else {
        DataType::UInt32
    }
}

fn arrow_schema(h: &ReportsHeader) -> Result<Schema> {
    let fields: Vec<Field> = match h.mechanism {
        Mechanism::Hadamard => {
            let rows = super::collector::oracle(h.epsilon, h.n_leaves)?.rows();
            vec![
                Field::new("row", row_type(rows), false),
                Field::new("bit", DataType::Boolean, false),
            ]
        }
        Mechanism::Laplace => (0..h.n_leaves)
            .map(|j| format!("u_{j}"))
            .chain((0..h.n_leaves).map(|j| format!("v_{j}")))
            .map(|name| Field::new(name, DataType::Float64, false))
            .collect(),
    };
    Ok(Schema::new_with_metadata(fields, h.metadata()))
}

enum Sink<W: Write> {
    ArrowHadamard {
        w: FileWriter<W>,
        schema: Arc<Schema>,
        rows: Vec<u32>,
        bits: Vec<bool>,
    },
    ArrowLaplace {
        w: FileWriter<W>,
        schema: Arc<Schema>,
        columns: Vec<Vec<f64>>,
    },
    CsvHadamard {
        w: csv::Writer<W>,
        epsilon: String,
    },
    CsvLaplace(ReportWriter<W>),
}

/// The CSV writer of a report file for `mechanism` (after its tag line).
fn csv_sink<W: Write>(out: W, mechanism: Mechanism, header: &ReportsHeader) -> Result<Sink<W>> {
    Ok(match mechanism {
        Mechanism::Laplace => {
            Sink::CsvLaplace(ReportWriter::new(out, header.epsilon, header.n_leaves)?)
        }
        Mechanism::Hadamard => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(HADAMARD_CSV_HEADER.split(','))
                .map_err(|e| bad_data("report file", e.to_string()))?;
            Sink::CsvHadamard {
                w,
                epsilon: header.epsilon.to_string(),
            }
        }
    })
}

/// Writes a report file of either format, a batch at a time.
///
/// ```
/// use dpfair::lpct::Mechanism;
/// use dpfair::lpct::collector::ReportSums;
/// use dpfair::lpct::report_file::{ReportFormat, ReportSink, ReportsHeader, read_reports_into};
///
/// let header = ReportsHeader {
///     mechanism: Mechanism::Hadamard,
///     epsilon: 1.0,
///     n_leaves: 2,
///     partition: "sha256:00".into(),
/// };
/// let mut sink = ReportSink::new(Vec::new(), ReportFormat::Arrow, &header).unwrap();
/// sink.push_hadamard(3, true).unwrap();
/// let bytes = sink.finish().unwrap();
/// let mut sums = ReportSums::new(Mechanism::Hadamard, 1.0, 2).unwrap();
/// let n = read_reports_into(std::io::Cursor::new(bytes), &header, &mut sums).unwrap();
/// assert_eq!(n, 1);
/// ```
pub struct ReportSink<W: Write> {
    sink: Sink<W>,
    rows: usize,
}

impl<W: Write> ReportSink<W> {
    /// A report file of `format` for the reports `header` describes.
    pub fn new(out: W, format: ReportFormat, header: &ReportsHeader) -> Result<Self> {
        let sink = match (format, header.mechanism) {
            (ReportFormat::Arrow, mechanism) => {
                let schema = Arc::new(arrow_schema(header)?);
                let w = FileWriter::try_new(out, &schema).map_err(arrow_err)?;
                match mechanism {
                    Mechanism::Hadamard => Sink::ArrowHadamard {
                        w,
                        schema,
                        rows: Vec::with_capacity(BATCH_ROWS),
                        bits: Vec::with_capacity(BATCH_ROWS),
                    },
                    Mechanism::Laplace => Sink::ArrowLaplace {
                        w,
                        schema,
                        columns: vec![Vec::new(); 2 * header.n_leaves],
                    },
                }
            }
            (ReportFormat::Csv, mechanism) => {
                let mut out = out;
                writeln!(out, "{CSV_TAG}{}", header.partition)
                    .map_err(|e| bad_data("report file", e.to_string()))?;
                csv_sink(out, mechanism, header)?
            }
        };
        Ok(ReportSink {
            sink,
            rows: super::collector::oracle(header.epsilon, header.n_leaves)?.rows(),
        })
    }

    /// Appends one Hadamard report (row r < K, bit: true is +1).
    pub fn push_hadamard(&mut self, row: u32, bit: bool) -> Result<()> {
        if row as usize >= self.rows {
            return Err(bad_data(
                "report file",
                format!("row {row} is not below {}", self.rows),
            ));
        }
        match &mut self.sink {
            Sink::ArrowHadamard { rows, bits, .. } => {
                rows.push(row);
                bits.push(bit);
                if rows.len() == BATCH_ROWS {
                    self.flush()?;
                }
                Ok(())
            }
            Sink::CsvHadamard { w, epsilon } => w
                .write_record([
                    epsilon.as_str(),
                    &row.to_string(),
                    if bit { "1" } else { "0" },
                ])
                .map_err(|e| bad_data("report file", e.to_string())),
            _ => Err(bad_data(
                "report file",
                "a Hadamard report in a Laplace file",
            )),
        }
    }

    /// Appends one Laplace report.
    pub fn push_laplace(&mut self, r: &Report) -> Result<()> {
        match &mut self.sink {
            Sink::ArrowLaplace { columns, .. } => {
                let l = columns.len() / 2;
                if r.u.len() != l || r.v.len() != l {
                    return Err(bad_data(
                        "report file",
                        format!("a report of {} leaves for a partition of {l}", r.u.len()),
                    ));
                }
                for (c, x) in columns.iter_mut().zip(r.u.iter().chain(&r.v)) {
                    c.push(*x);
                }
                if columns[0].len() == BATCH_ROWS / 64 {
                    self.flush()?;
                }
                Ok(())
            }
            Sink::CsvLaplace(w) => w.write(r),
            _ => Err(bad_data(
                "report file",
                "a Laplace report in a Hadamard file",
            )),
        }
    }

    /// Writes the buffered reports as one record batch (Arrow; a no-op for CSV).
    fn flush(&mut self) -> Result<()> {
        let (w, batch) = match &mut self.sink {
            Sink::ArrowHadamard {
                w,
                schema,
                rows,
                bits,
            } => {
                if rows.is_empty() {
                    return Ok(());
                }
                let row: ArrayRef = match schema.field(0).data_type() {
                    DataType::UInt8 => {
                        Arc::new(UInt8Array::from_iter_values(rows.iter().map(|&r| r as u8)))
                    }
                    DataType::UInt16 => Arc::new(UInt16Array::from_iter_values(
                        rows.iter().map(|&r| r as u16),
                    )),
                    _ => Arc::new(UInt32Array::from_iter_values(rows.iter().copied())),
                };
                let bit: ArrayRef = Arc::new(BooleanArray::from(std::mem::take(bits)));
                rows.clear();
                let batch = RecordBatch::try_new(schema.clone(), vec![row, bit]);
                (w, batch)
            }
            Sink::ArrowLaplace { w, schema, columns } => {
                if columns[0].is_empty() {
                    return Ok(());
                }
                let arrays: Vec<ArrayRef> = columns
                    .iter_mut()
                    .map(|c| Arc::new(Float64Array::from(std::mem::take(c))) as ArrayRef)
                    .collect();
                (w, RecordBatch::try_new(schema.clone(), arrays))
            }
            _ => return Ok(()),
        };
        w.write(&batch.map_err(arrow_err)?).map_err(arrow_err)
    }

    /// Writes what is buffered and the file's footer; returns the underlying writer.
    pub fn finish(mut self) -> Result<W> {
        self.flush()?;
        match self.sink {
            Sink::ArrowHadamard { w, .. } | Sink::ArrowLaplace { w, .. } => {
                w.into_inner().map_err(arrow_err)
            }
            Sink::CsvHadamard { w, .. } => w
                .into_inner()
                .map_err(|e| bad_data("report file", e.into_error().to_string())),
            Sink::CsvLaplace(w) => w.finish(),
        }
    }
}

/// Reads a report file of either format and folds its reports into `sums`, after checking that
/// they are the ones `expected` describes ([`ReportsHeader::check`]); returns the number of
/// reports. Memory: one record batch (Arrow) or one row (CSV) at a time. Errors name the report
/// (1-based, in file order) where one is to blame; the caller adds the file's name.
pub fn read_reports_into<R: Read + Seek>(
    mut input: R,
    expected: &ReportsHeader,
    sums: &mut ReportSums,
) -> Result<u64> {
    let io = |e: std::io::Error| bad_data("report file", e.to_string());
    let mut magic = [0u8; 6];
    let got = read_prefix(&mut input, &mut magic).map_err(io)?;
    input.seek(SeekFrom::Start(0)).map_err(io)?;
    if got == magic.len() && &magic == ARROW_MAGIC {
        read_arrow(input, expected, sums)
    } else {
        read_csv(input, expected, sums)
    }
}

fn read_prefix<R: Read>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn read_arrow<R: Read + Seek>(
    input: R,
    expected: &ReportsHeader,
    sums: &mut ReportSums,
) -> Result<u64> {
    let reader = CheckedArrowFile::open(input)?;
    let schema = reader.schema();
    let found = ReportsHeader::from_metadata(&HashMap::from(schema.metadata()))?;
    expected.check(&found)?;
    let want = arrow_schema(expected)?;
    let columns = |s: &Schema| {
        s.fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect::<Vec<_>>()
    };
    if columns(&schema) != columns(&want) {
        return Err(bad_data(
            "report file",
            format!(
                "columns {:?}, expected {:?}",
                clip_list(&columns(&schema)),
                clip_list(&columns(&want))
            ),
        ));
    }
    let mut done: u64 = 0;
    for batch in reader {
        let batch = batch?;
        if batch.columns().iter().any(|c| c.null_count() > 0) {
            return Err(bad_data(
                "report file",
                format!(
                    "a missing value among reports {}..{}",
                    done + 1,
                    done + batch.num_rows() as u64
                ),
            ));
        }
        let at = |e: super::error::LpctError| {
            bad_data("report file", format!("reports from {}: {e}", done + 1))
        };
        match sums {
            ReportSums::Hadamard(s) => {
                let bits = batch
                    .column(1)
                    .as_any()
                    .downcast_ref::<BooleanArray>()
                    .ok_or_else(|| bad_data("report file", "column `bit` is not Boolean"))?
                    .values()
                    .iter();
                let col = batch.column(0).as_any();
                if let Some(a) = col.downcast_ref::<UInt8Array>() {
                    s.add_batch(a.values(), bits)
                } else if let Some(a) = col.downcast_ref::<UInt16Array>() {
                    s.add_batch(a.values(), bits)
                } else if let Some(a) = col.downcast_ref::<UInt32Array>() {
                    s.add_batch(a.values(), bits)
                } else {
                    Err(bad_data(
                        "report file",
                        "column `row` is not an unsigned integer",
                    ))
                }
                .map_err(at)?;
            }
            ReportSums::Laplace(s) => {
                let cols: Vec<&Float64Array> = batch
                    .columns()
                    .iter()
                    .map(|c| c.as_any().downcast_ref::<Float64Array>())
                    .collect::<Option<_>>()
                    .ok_or_else(|| bad_data("report file", "a Laplace column is not f64"))?;
                let l = expected.n_leaves;
                let (mut u, mut v) = (vec![0.0; l], vec![0.0; l]);
                for i in 0..batch.num_rows() {
                    for j in 0..l {
                        u[j] = cols[j].value(i);
                        v[j] = cols[l + j].value(i);
                    }
                    s.add(&u, &v).map_err(|e| {
                        bad_data(
                            "report file",
                            format!("report {}: {e}", done + i as u64 + 1),
                        )
                    })?;
                }
            }
        }
        done += batch.num_rows() as u64;
    }
    Ok(done)
}

/// An Arrow IPC file read block by block with every length and offset checked against the
/// file before the decoder sees it: `arrow`'s `FileReader` trusts the footer's block lengths and
/// each message's buffer offsets and panics on a bad one (`docs/data.md`, "LDP report files").
/// Every failure is an error; compressed bodies (dpfair never writes them) are refused.
struct CheckedArrowFile<R> {
    input: std::io::BufReader<R>,
    file_len: u64,
    schema: Arc<Schema>,
    decoder: arrow::ipc::reader::FileDecoder,
    blocks: Vec<arrow::ipc::Block>,
    next: usize,
}

impl<R: Read + Seek> CheckedArrowFile<R> {
    fn open(input: R) -> Result<Self> {
        let corrupt = |m: String| bad_data("report file", format!("a corrupt Arrow file: {m}"));
        let io = |e: std::io::Error| bad_data("report file", e.to_string());
        let mut input = std::io::BufReader::new(input);
        let file_len = input.seek(SeekFrom::End(0)).map_err(io)?;
        if file_len < 6 + 2 + 10 {
            return Err(corrupt(format!("{file_len} bytes")));
        }
        let mut trailer = [0u8; 10];
        input.seek(SeekFrom::Start(file_len - 10)).map_err(io)?;
        input.read_exact(&mut trailer).map_err(io)?;
        let footer_len = arrow::ipc::reader::read_footer_length(trailer).map_err(arrow_err)?;
        if footer_len as u64 > file_len - 10 - 8 {
            return Err(corrupt(format!("a footer of {footer_len} bytes")));
        }
        let mut footer_bytes = vec![0u8; footer_len];
        input
            .seek(SeekFrom::Start(file_len - 10 - footer_len as u64))
            .map_err(io)?;
        input.read_exact(&mut footer_bytes).map_err(io)?;
        let footer = arrow::ipc::root_as_footer(&footer_bytes)
            .map_err(|e| corrupt(format!("the footer: {e}")))?;
        let schema = footer
            .schema()
            .ok_or_else(|| corrupt("no schema in the footer".into()))?;
        let schema = Arc::new(arrow::ipc::convert::try_fb_to_schema(schema).map_err(arrow_err)?);
        if footer.dictionaries().is_some_and(|d| !d.is_empty()) {
            return Err(corrupt(
                "dictionary batches (a report file has none)".into(),
            ));
        }
        let blocks: Vec<arrow::ipc::Block> = footer
            .recordBatches()
            .map(|b| b.iter().copied().collect())
            .unwrap_or_default();
        for (i, b) in blocks.iter().enumerate() {
            let (off, meta, body) = (b.offset(), b.metaDataLength(), b.bodyLength());
            let fits = off >= 0
                && meta >= 8
                && body >= 0
                && (off as u64)
                    .checked_add(meta as u64)
                    .and_then(|x| x.checked_add(body as u64))
                    .is_some_and(|end| end <= file_len);
            if !fits {
                return Err(corrupt(format!(
                    "record batch {} lies outside the file (offset {off}, {meta} + {body} bytes)",
                    i + 1
                )));
            }
        }
        let decoder = arrow::ipc::reader::FileDecoder::new(schema.clone(), footer.version());
        Ok(CheckedArrowFile {
            input,
            file_len,
            schema,
            decoder,
            blocks,
            next: 0,
        })
    }

    fn schema(&self) -> Arc<Schema> {
        self.schema.clone()
    }

    /// Reads block `i` (bounds checked in [`Self::open`]) and checks its message's buffers
    /// against its body before decoding.
    fn read_block(&mut self, i: usize) -> Result<RecordBatch> {
        let corrupt = |m: String| {
            bad_data(
                "report file",
                format!("a corrupt Arrow file: record batch {}: {m}", i + 1),
            )
        };
        let block = self.blocks[i];
        let (meta, body) = (block.metaDataLength() as usize, block.bodyLength() as u64);
        let len = meta as u64 + body;
        debug_assert!(block.offset() as u64 + len <= self.file_len);
        let mut bytes = vec![0u8; len as usize];
        self.input
            .seek(SeekFrom::Start(block.offset() as u64))
            .and_then(|_| self.input.read_exact(&mut bytes))
            .map_err(|e| bad_data("report file", e.to_string()))?;
        let flat = if bytes[..4] == [0xff; 4] {
            &bytes[8..meta]
        } else {
            &bytes[4..meta]
        };
        let message =
            arrow::ipc::root_as_message(flat).map_err(|e| corrupt(format!("its header: {e}")))?;
        let rb = message
            .header_as_record_batch()
            .ok_or_else(|| corrupt("not a record batch".into()))?;
        if rb.compression().is_some() {
            return Err(corrupt(
                "a compressed body (dpfair writes report files uncompressed)".into(),
            ));
        }
        if rb.length() < 0 {
            return Err(corrupt(format!("{} rows", rb.length())));
        }
        for b in rb.buffers().iter().flatten() {
            let inside = b.offset() >= 0
                && b.length() >= 0
                && (b.offset() as u64)
                    .checked_add(b.length() as u64)
                    .is_some_and(|end| end <= body);
            if !inside {
                return Err(corrupt(format!(
                    "a buffer outside its body (offset {}, {} bytes of {body})",
                    b.offset(),
                    b.length()
                )));
            }
        }
        let buffer = arrow::buffer::Buffer::from_vec(bytes);
        self.decoder
            .read_record_batch(&block, &buffer)
            .map_err(|e| corrupt(e.to_string()))?
            .ok_or_else(|| corrupt("an empty message".into()))
    }
}

impl<R: Read + Seek> Iterator for CheckedArrowFile<R> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.next;
        (i < self.blocks.len()).then(|| {
            self.next += 1;
            self.read_block(i)
        })
    }
}

fn clip_list(cols: &[(String, DataType)]) -> String {
    let shown: Vec<String> = cols
        .iter()
        .take(4)
        .map(|(n, t)| format!("{n}: {t}"))
        .collect();
    if cols.len() > 4 {
        format!("{}, … ({} columns)", shown.join(", "), cols.len())
    } else {
        shown.join(", ")
    }
}

fn read_csv<R: Read>(input: R, expected: &ReportsHeader, sums: &mut ReportSums) -> Result<u64> {
    let mut input = std::io::BufReader::new(input);
    let mut first = String::new();
    let mut read_line = |line: &mut String| {
        line.clear();
        std::io::BufRead::read_line(&mut input, line)
            .map_err(|e| bad_data("report file", e.to_string()))
    };
    read_line(&mut first)?;
    let tag = first.trim_start_matches('\u{feff}');
    let digest = match tag.strip_prefix(CSV_TAG) {
        Some(d) => {
            let d = d.trim_end_matches(['\r', '\n']).to_string();
            read_line(&mut first)?;
            d
        }
        None => String::new(),
    };
    let header = first
        .trim_end_matches(['\r', '\n'])
        .trim_start_matches('\u{feff}');
    let mechanism = if header == HADAMARD_CSV_HEADER {
        Mechanism::Hadamard
    } else if header.starts_with("epsilon,u_0") {
        Mechanism::Laplace
    } else {
        return Err(bad_data(
            "report file",
            format!(
                "neither an Arrow report file nor a CSV one (header `{}`)",
                dpfair_data::error::clip(header)
            ),
        ));
    };
    if mechanism != expected.mechanism {
        return Err(bad_data(
            "report file",
            format!(
                "reports made with the {mechanism} mechanism, the partition asks for {}",
                expected.mechanism
            ),
        ));
    }
    expected.check_partition(&digest)?;
    // The header line is consumed: read the rest without one.
    let body = std::io::Cursor::new(first.clone().into_bytes()).chain(input);
    match sums {
        ReportSums::Laplace(s) => {
            visit_reports(body, expected.n_leaves, expected.epsilon, |u, v| {
                s.add(u, v)
            })
        }
        ReportSums::Hadamard(s) => read_hadamard_csv(body, expected.epsilon, s),
    }
}

fn read_hadamard_csv<R: Read>(
    input: R,
    epsilon: f64,
    sums: &mut super::collector::HadamardSums,
) -> Result<u64> {
    let bad = |m: String| bad_data("report file", m);
    let mut r = csv::ReaderBuilder::new().from_reader(input);
    let mut rec = csv::StringRecord::new();
    let mut i: u64 = 0;
    while r.read_record(&mut rec).map_err(|e| bad(e.to_string()))? {
        i += 1;
        let field = |c: usize| rec.get(c).unwrap_or("").trim();
        let eps = field(0).parse::<f64>().ok();
        if eps.map(f64::to_bits) != Some(epsilon.to_bits()) {
            return Err(bad(format!(
                "report {i} was made at ε = {}, the partition asks for {epsilon}",
                dpfair_data::error::clip(field(0))
            )));
        }
        let row = field(1).parse::<u32>().map_err(|_| {
            bad(format!(
                "report {i}, column 2: `{}` is not a row index",
                dpfair_data::error::clip(field(1))
            ))
        })?;
        let bit = match field(2) {
            "1" => true,
            "0" => false,
            other => {
                return Err(bad(format!(
                    "report {i}, column 3: `{}` is not a bit (0 or 1)",
                    dpfair_data::error::clip(other)
                )));
            }
        };
        sums.add(row, bit)
            .map_err(|e| bad(format!("report {i}: {e}")))?;
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn header(mechanism: Mechanism) -> ReportsHeader {
        ReportsHeader {
            mechanism,
            epsilon: 1.5,
            n_leaves: 3,
            partition: "sha256:ab".into(),
        }
    }

    fn hadamard_file(format: ReportFormat, reports: &[(u32, bool)]) -> Vec<u8> {
        let mut sink = ReportSink::new(Vec::new(), format, &header(Mechanism::Hadamard)).unwrap();
        for &(r, b) in reports {
            sink.push_hadamard(r, b).unwrap();
        }
        sink.finish().unwrap()
    }

    #[test]
    fn hadamard_reports_round_trip_in_both_formats() {
        let reports = [(0, true), (7, false), (3, true), (3, true)];
        let mut want = super::super::collector::HadamardSums::new(1.5, 3).unwrap();
        for &(r, b) in &reports {
            want.add(r, b).unwrap();
        }
        for format in [ReportFormat::Arrow, ReportFormat::Csv] {
            let bytes = hadamard_file(format, &reports);
            let mut sums = ReportSums::new(Mechanism::Hadamard, 1.5, 3).unwrap();
            let n = read_reports_into(Cursor::new(bytes), &header(Mechanism::Hadamard), &mut sums)
                .unwrap();
            assert_eq!(n, 4);
            assert_eq!(sums, ReportSums::Hadamard(want.clone()), "{format:?}");
        }
        assert!(
            hadamard_file(ReportFormat::Csv, &[]).starts_with(
                b"# dpfair-ldp-reports partition=sha256:ab\nepsilon,hadamard_row,bit\n"
            )
        );
    }

    #[test]
    fn laplace_reports_round_trip_in_arrow() {
        let r = Report {
            u: vec![0.5, -1.25, 3.0],
            v: vec![1.0, 0.0, -0.5],
        };
        let h = header(Mechanism::Laplace);
        let mut sink = ReportSink::new(Vec::new(), ReportFormat::Arrow, &h).unwrap();
        sink.push_laplace(&r).unwrap();
        sink.push_laplace(&r).unwrap();
        let bytes = sink.finish().unwrap();
        let mut sums = ReportSums::new(Mechanism::Laplace, 1.5, 3).unwrap();
        assert_eq!(
            read_reports_into(Cursor::new(bytes), &h, &mut sums).unwrap(),
            2
        );
        let mut want = super::super::collector::LaplaceSums::new(1.5, 3).unwrap();
        want.add(&r.u, &r.v).unwrap();
        want.add(&r.u, &r.v).unwrap();
        assert_eq!(sums, ReportSums::Laplace(want));
    }

    #[test]
    fn foreign_and_corrupt_files_are_refused() {
        let bytes = hadamard_file(ReportFormat::Arrow, &[(1, true)]);
        let read = |h: &ReportsHeader, bytes: &[u8]| {
            let mut sums = ReportSums::new(h.mechanism, h.epsilon, h.n_leaves).unwrap();
            read_reports_into(Cursor::new(bytes.to_vec()), h, &mut sums).map_err(|e| e.to_string())
        };
        let other_partition = ReportsHeader {
            partition: "sha256:cd".into(),
            ..header(Mechanism::Hadamard)
        };
        let e = read(&other_partition, &bytes).unwrap_err();
        assert!(e.contains("another partition"), "{e}");
        let e = read(&header(Mechanism::Laplace), &bytes).unwrap_err();
        assert!(e.contains("hadamard mechanism"), "{e}");
        let other_eps = ReportsHeader {
            epsilon: 2.0,
            ..header(Mechanism::Hadamard)
        };
        let e = read(&other_eps, &bytes).unwrap_err();
        assert!(e.contains("ε = 1.5"), "{e}");
        // Truncated: the footer is gone.
        assert!(read(&header(Mechanism::Hadamard), &bytes[..bytes.len() - 10]).is_err());
        // Text that is neither format.
        let e = read(&header(Mechanism::Hadamard), b"a,b\n1,2\n").unwrap_err();
        assert!(e.contains("neither"), "{e}");
        // CSV: a row index beyond K = 8 and a bad bit.
        let csv =
            |body: &str| format!("{CSV_TAG}sha256:ab\n{HADAMARD_CSV_HEADER}\n{body}").into_bytes();
        // A CSV file for another partition of as many leaves, or with no digest, is refused.
        let e = read(&other_partition, &csv("1.5,2,1\n")).unwrap_err();
        assert!(e.contains("another partition"), "{e}");
        let untagged = format!("{HADAMARD_CSV_HEADER}\n1.5,2,1\n").into_bytes();
        let e = read(&header(Mechanism::Hadamard), &untagged).unwrap_err();
        assert!(e.contains("no partition digest"), "{e}");
        let e = read(&header(Mechanism::Hadamard), &csv("1.5,8,1\n")).unwrap_err();
        assert!(e.contains("report 1") && e.contains("row 8"), "{e}");
        let e = read(&header(Mechanism::Hadamard), &csv("1.5,2,1\n1.5,2,x\n")).unwrap_err();
        assert!(e.contains("report 2, column 3"), "{e}");
        let e = read(&header(Mechanism::Hadamard), &csv("2,2,1\n")).unwrap_err();
        assert!(e.contains("ε = 2"), "{e}");
    }

    /// Every single-bit flip of an Arrow report file is an error or a read (a flipped report
    /// bit reads as another report), never a panic (arrow's own reader panicked on a buffer offset past its body).
    #[test]
    fn flipped_bits_never_panic() {
        let h = header(Mechanism::Hadamard);
        let reports: Vec<(u32, bool)> = (0..100).map(|i| (i % 8, i % 3 == 0)).collect();
        let bytes = hadamard_file(ReportFormat::Arrow, &reports);
        let empty = ReportSums::new(Mechanism::Hadamard, 1.5, 3).unwrap();
        for bit in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            let (mut sums, h) = (empty.clone(), h.clone());
            let r = std::panic::catch_unwind(move || {
                read_reports_into(Cursor::new(b), &h, &mut sums).map(|_| ())
            });
            assert!(r.is_ok(), "bit {bit} of {}: a panic", bytes.len() * 8);
        }
    }
}
