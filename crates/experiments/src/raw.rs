//! The raw file: one row per (cell, metric), appended as each cell finishes, read back to resume.
//!
//! Columns: `experiment,method,dataset,accounting,epsilon,delta,fairness_level,params,repetition,
//! seed,epsilon_spent,metric,value,cell_rows`. A cell's rows are written with one `write` and a
//! flush; `cell_rows` (the number of rows the cell wrote) lets a reader drop a cell whose rows
//! were cut short by an interruption, and a last line without its newline is discarded.

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

/// The cells of `experiment` in `path`, keyed by (setting key, repetition). Cells with missing
/// rows (an interrupted write) are left out. A missing file gives an empty map.
pub fn read(path: &Path, experiment: &str) -> Result<HashMap<(String, usize), RawCell>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(source) => {
            return Err(ExpError::Io {
                path: path.into(),
                source,
            });
        }
    };
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let mut reader = csv::ReaderBuilder::new().from_reader(&bytes[..complete]);
    let mut cells: HashMap<(String, usize), (RawCell, usize)> = HashMap::new();
    for (i, rec) in reader.records().enumerate() {
        let line = i as u64 + 2;
        let bad = |reason: String| ExpError::Raw {
            path: path.into(),
            line,
            reason,
        };
        let rec = rec.map_err(|e| bad(e.to_string()))?;
        if rec.len() != HEADER.len() {
            return Err(bad(format!(
                "{} fields, expected {}",
                rec.len(),
                HEADER.len()
            )));
        }
        if &rec[0] != experiment {
            continue;
        }
        let num = |j: usize| -> Result<f64> {
            rec[j]
                .parse::<f64>()
                .map_err(|e| bad(format!("column {}: `{}`: {e}", HEADER[j], &rec[j])))
        };
        let int = |j: usize| -> Result<u64> {
            rec[j]
                .parse::<u64>()
                .map_err(|e| bad(format!("column {}: `{}`: {e}", HEADER[j], &rec[j])))
        };
        let setting = Setting {
            method: rec[1].to_string(),
            dataset: rec[2].to_string(),
            accounting: rec[3].to_string(),
            epsilon: num(4)?,
            delta: num(5)?,
            fairness_level: if rec[6].is_empty() {
                None
            } else {
                Some(num(6)?)
            },
            params: Params::parse(&rec[7]).ok_or_else(|| bad(format!("params `{}`", &rec[7])))?,
        };
        let repetition = int(8)? as usize;
        let key = (setting.key(experiment), repetition);
        let entry = cells.entry(key).or_insert_with(|| {
            (
                RawCell {
                    setting,
                    repetition,
                    seed: 0,
                    outcome: Outcome::new(),
                },
                0,
            )
        });
        entry.0.seed = int(9)?;
        entry.0.outcome.epsilon_spent = if rec[10].is_empty() {
            None
        } else {
            Some(num(10)?)
        };
        entry
            .0
            .outcome
            .metrics
            .push((rec[11].to_string(), num(12)?));
        entry.1 = int(13)? as usize;
    }
    Ok(cells
        .into_iter()
        .filter(|(_, (c, expected))| c.outcome.metrics.len() == *expected)
        .map(|(k, (c, _))| (k, c))
        .collect())
}

/// The appending writer.
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

    /// Append one finished cell (one write, then flush).
    pub fn append(&mut self, experiment: &str, cell: &Cell, outcome: &Outcome) -> Result<()> {
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        let s = &cell.setting;
        let n = outcome.metrics.len().to_string();
        for (metric, value) in &outcome.metrics {
            w.write_record([
                experiment,
                &s.method,
                &s.dataset,
                &s.accounting,
                &fmt_f64(s.epsilon),
                &fmt_f64(s.delta),
                &s.fairness_level.map(fmt_f64).unwrap_or_default(),
                &s.params.to_string(),
                &cell.repetition.to_string(),
                &cell.seed.to_string(),
                &outcome.epsilon_spent.map(fmt_f64).unwrap_or_default(),
                metric,
                &fmt_f64(*value),
                &n,
            ])
            .map_err(|e| ExpError::Method(e.to_string()))?;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| ExpError::Method(e.to_string()))?;
        let io = |source| ExpError::Io {
            path: self.path.clone(),
            source,
        };
        self.file.write_all(&bytes).map_err(io)?;
        self.file.flush().map_err(io)
    }
}

fn header_line() -> String {
    HEADER.join(",") + "\n"
}
