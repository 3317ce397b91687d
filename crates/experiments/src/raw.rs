//! The raw file: one row per (cell, metric), appended as each cell finishes, read back to resume.
//!
//! Columns: `experiment,method,dataset,accounting,epsilon,delta,fairness_level,params,repetition,
//! seed,epsilon_spent,metric,value,cell_rows`. A cell's rows are written with one `write` and a
//! flush; `cell_rows` (the number of rows the cell wrote) lets a reader drop a cell whose rows
//! were cut short by an interruption, and a last line without its newline is discarded.
//!
//! Reading reconciles (so that resuming is idempotent): a metric written twice for the same
//! cell counts once (the last value), a cell is finished when it has all `cell_rows` distinct
//! metrics (so a cell cut short and then rerun is finished), and malformed lines are skipped.
//! [`reconcile`] then rewrites the file atomically without the duplicates, partial cells and
//! malformed lines, so the file a run leaves behind holds each finished cell exactly once.
//! Only one run writes into a folder at a time (the runner holds a
//! [`dpfair_data::lock::FolderLock`]).

use crate::error::{ExpError, Result};
use crate::grid::{Cell, Params, Setting, fmt_f64};
use crate::paper::Outcome;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const RAW_FILE: &str = "raw.csv";

const HEADER: [&str; 14] = [
    "experiment",
    "method",
    "dataset",
    "accounting",
    "epsilon",
    "delta",
    "fairness_level",
    "params",
    "repetition",
    "seed",
    "epsilon_spent",
    "metric",
    "value",
    "cell_rows",
];

/// One finished cell as read back.
#[derive(Clone, Debug, PartialEq)]
pub struct RawCell {
    pub setting: Setting,
    pub repetition: usize,
    pub seed: u64,
    pub outcome: Outcome,
}

/// The raw file as read for one experiment, reconciled.
#[derive(Clone, Debug, Default)]
pub struct RawContents {
    /// Finished cells keyed by (setting key, repetition).
    pub cells: HashMap<(String, usize), RawCell>,
    /// Rows that repeated a (cell, metric) already read.
    pub duplicate_rows: usize,
    /// Rows of cells that are not finished (an interrupted write).
    pub partial_rows: usize,
    /// Lines that are not raw rows (wrong field count, unparsable numbers).
    pub malformed_lines: usize,
    /// First-seen order of the finished cells (for a stable rewrite).
    order: Vec<(String, usize)>,
    /// Rows of other experiments, kept verbatim by a rewrite.
    others: Vec<csv::StringRecord>,
}

impl RawContents {
    /// Whether a rewrite would change the file (something to reconcile).
    pub fn needs_rewrite(&self) -> bool {
        self.duplicate_rows + self.partial_rows + self.malformed_lines > 0
    }
}

/// The cells of `experiment` in `path`, keyed by (setting key, repetition); see [`read_all`].
pub fn read(path: &Path, experiment: &str) -> Result<HashMap<(String, usize), RawCell>> {
    Ok(read_all(path, experiment)?.cells)
}

/// A cell being collected from its rows.
struct Pending {
    cell: RawCell,
    expected: usize,
}

/// Read and reconcile `path` for `experiment`: duplicated rows count once (last value wins),
/// cells with missing rows are left out, malformed lines are skipped and counted. A missing
/// file gives empty contents.
pub fn read_all(path: &Path, experiment: &str) -> Result<RawContents> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RawContents::default()),
        Err(source) => {
            return Err(ExpError::Io {
                path: path.into(),
                source,
            });
        }
    };
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(&bytes[..complete]);
    let mut out = RawContents::default();
    let mut pending: HashMap<(String, usize), Pending> = HashMap::new();
    let mut order = Vec::new();
    let mut rows = 0usize;
    for rec in reader.records() {
        let Ok(rec) = rec else {
            out.malformed_lines += 1;
            continue;
        };
        if rec.len() != HEADER.len() {
            out.malformed_lines += 1;
            continue;
        }
        if &rec[0] != experiment {
            out.others.push(rec);
            continue;
        }
        let Some(row) = parse_row(&rec) else {
            out.malformed_lines += 1;
            continue;
        };
        rows += 1;
        let key = (row.setting.key(experiment), row.repetition);
        let p = pending.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            Pending {
                cell: RawCell {
                    setting: row.setting,
                    repetition: row.repetition,
                    seed: row.seed,
                    outcome: Outcome::new(),
                },
                expected: row.cell_rows,
            }
        });
        p.cell.seed = row.seed;
        p.cell.outcome.epsilon_spent = row.epsilon_spent;
        p.expected = row.cell_rows;
        if let Some((metric, value)) = row.metric {
            match p
                .cell
                .outcome
                .metrics
                .iter_mut()
                .find(|(m, _)| *m == metric)
            {
                Some(slot) => {
                    slot.1 = value;
                    out.duplicate_rows += 1;
                }
                None => p.cell.outcome.metrics.push((metric, value)),
            }
        }
    }
    let mut kept_rows = 0;
    for key in order {
        let p = pending.remove(&key).expect("every key has a cell");
        if p.cell.outcome.metrics.len() == p.expected {
            kept_rows += p.expected.max(1);
            out.order.push(key.clone());
            out.cells.insert(key, p.cell);
        }
    }
    // Rows neither kept nor duplicates belong to unfinished cells.
    out.partial_rows = rows.saturating_sub(kept_rows + out.duplicate_rows);
    Ok(out)
}

/// One parsed row of `experiment`.
struct Row {
    setting: Setting,
    repetition: usize,
    seed: u64,
    epsilon_spent: Option<f64>,
    /// `None`: the marker row of a cell that reported no metric.
    metric: Option<(String, f64)>,
    cell_rows: usize,
}

fn parse_row(rec: &csv::StringRecord) -> Option<Row> {
    let num = |j: usize| rec[j].parse::<f64>().ok();
    let opt_num = |j: usize| -> Option<Option<f64>> {
        if rec[j].is_empty() {
            Some(None)
        } else {
            num(j).map(Some)
        }
    };
    let setting = Setting {
        method: rec[1].to_string(),
        dataset: rec[2].to_string(),
        accounting: rec[3].to_string(),
        epsilon: num(4)?,
        delta: num(5)?,
        fairness_level: opt_num(6)?,
        params: Params::parse(&rec[7])?,
    };
    let cell_rows: usize = rec[13].parse().ok()?;
    let metric = if cell_rows == 0 && rec[11].is_empty() {
        None
    } else {
        Some((rec[11].to_string(), num(12)?))
    };
    Some(Row {
        setting,
        repetition: rec[8].parse().ok()?,
        seed: rec[9].parse().ok()?,
        epsilon_spent: opt_num(10)?,
        metric,
        cell_rows,
    })
}

/// Read `path` for `experiment` and, when it holds duplicates, partial cells or malformed lines,
/// rewrite it atomically with each finished cell once (rows of other experiments kept).
pub fn reconcile(path: &Path, experiment: &str) -> Result<RawContents> {
    let contents = read_all(path, experiment)?;
    if !contents.needs_rewrite() {
        return Ok(contents);
    }
    let mut bytes = header_line().into_bytes();
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    for rec in &contents.others {
        w.write_record(rec)
            .map_err(|e| ExpError::Method(e.to_string()))?;
    }
    bytes.extend(
        w.into_inner()
            .map_err(|e| ExpError::Method(e.to_string()))?,
    );
    for key in &contents.order {
        let c = &contents.cells[key];
        bytes.extend(cell_bytes(
            experiment,
            &c.setting,
            c.repetition,
            c.seed,
            &c.outcome,
        )?);
    }
    dpfair_data::output::write_atomic(path, &bytes).map_err(|source| ExpError::Io {
        path: path.into(),
        source,
    })?;
    Ok(contents)
}

/// The rows of one finished cell (one marker row with an empty metric when it has none).
fn cell_bytes(
    experiment: &str,
    s: &Setting,
    repetition: usize,
    seed: u64,
    outcome: &Outcome,
) -> Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    let n = outcome.metrics.len().to_string();
    let marker = [(String::new(), None)];
    let metrics: Vec<(String, Option<f64>)> = outcome
        .metrics
        .iter()
        .map(|(m, v)| (m.clone(), Some(*v)))
        .collect();
    let rows = if metrics.is_empty() {
        &marker[..]
    } else {
        &metrics[..]
    };
    for (metric, value) in rows {
        w.write_record([
            experiment,
            &s.method,
            &s.dataset,
            &s.accounting,
            &fmt_f64(s.epsilon),
            &fmt_f64(s.delta),
            &s.fairness_level.map(fmt_f64).unwrap_or_default(),
            &s.params.to_string(),
            &repetition.to_string(),
            &seed.to_string(),
            &outcome.epsilon_spent.map(fmt_f64).unwrap_or_default(),
            metric,
            &value.map(fmt_f64).unwrap_or_default(),
            &n,
        ])
        .map_err(|e| ExpError::Method(e.to_string()))?;
    }
    w.into_inner().map_err(|e| ExpError::Method(e.to_string()))
}

/// The appending writer (the caller holds the folder's lock).
pub struct RawWriter {
    path: PathBuf,
    file: std::fs::File,
}

impl RawWriter {
    /// Open `path` for appending: drop a trailing partial line, write the header if new.
    pub fn open(path: &Path) -> Result<Self> {
        let io = |source| ExpError::Io {
            path: path.into(),
            source,
        };
        let existing = match std::fs::read(path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(e)),
        };
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        match existing {
            Some(b) if !b.is_empty() => {
                let keep = b.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1);
                if keep < b.len() {
                    file.set_len(keep as u64).map_err(io)?;
                }
                if keep == 0 {
                    file.write_all(header_line().as_bytes()).map_err(io)?;
                }
            }
            _ => file.write_all(header_line().as_bytes()).map_err(io)?,
        }
        file.flush().map_err(io)?;
        Ok(RawWriter {
            path: path.into(),
            file,
        })
    }

    /// Append one finished cell (one write, then flush and sync, so a finished cell survives a
    /// crash).
    pub fn append(&mut self, experiment: &str, cell: &Cell, outcome: &Outcome) -> Result<()> {
        let bytes = cell_bytes(
            experiment,
            &cell.setting,
            cell.repetition,
            cell.seed,
            outcome,
        )?;
        let io = |source| ExpError::Io {
            path: self.path.clone(),
            source,
        };
        self.file.write_all(&bytes).map_err(io)?;
        self.file.flush().map_err(io)?;
        self.file.sync_data().map_err(io)
    }
}

fn header_line() -> String {
    HEADER.join(",") + "\n"
}
