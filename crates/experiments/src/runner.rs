//! Running a paper's grid: parallel repetitions, progress with ETA, append-as-you-go, resume,
//! then results.csv, plots and report.md.
//!
//! A run holds an exclusive lock on its output folder ([`FolderLock`]) from start to end, so two
//! runs into one folder cannot interleave: the second is refused with the first one's process
//! id. Resuming is idempotent: the raw file is reconciled ([`raw::reconcile`]) before the
//! pending cells are chosen, so duplicated or partial rows never make a cell count as missing
//! forever, and results.csv and report.md are written atomically.

use crate::aggregate::{Summary, summarise};
use crate::error::{ExpError, Result};
use crate::grid::{Cell, fmt_f64, validate};
use crate::paper::{Paper, Scale};
use crate::raw::{self, RAW_FILE, RawWriter};
use crate::{plot, report};
use dpfair_data::lock::FolderLock;
use dpfair_data::output::AtomicFile;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub out: PathBuf,
    pub scale: Scale,
    /// Worker threads (default: rayon's, i.e. the number of cores).
    pub jobs: Option<usize>,
    /// Draw the progress bar on stderr.
    pub progress: bool,
    /// Stop after this many new cells (tests use it to simulate an interruption).
    pub max_cells: Option<usize>,
}

impl RunOptions {
    pub fn new(out: impl Into<PathBuf>, scale: Scale) -> Self {
        RunOptions {
            out: out.into(),
            scale,
            jobs: None,
            progress: true,
            max_cells: None,
        }
    }
}

/// What a run did and wrote.
#[derive(Clone, Debug)]
pub struct RunSummary {
    /// Cells computed by this run.
    pub ran: usize,
    /// Cells found finished in the raw file.
    pub resumed: usize,
    /// Cells still missing (not run because of `max_cells`, or failed).
    pub missing: usize,
    /// Raw rows dropped when the raw file was reconciled at the start (duplicates, rows of
    /// unfinished cells, malformed lines).
    pub reconciled_rows: usize,
    /// Failed cells with their error.
    pub failed: Vec<(String, String)>,
    pub results: PathBuf,
    pub raw: PathBuf,
    pub report: PathBuf,
    pub plots: Vec<PathBuf>,
    pub summaries: Vec<Summary>,
}

pub const RESULTS_FILE: &str = "results.csv";
pub const REPORT_FILE: &str = "report.md";

/// Run `paper` at `opts.scale` into `opts.out`, resuming from `opts.out/raw.csv`.
pub fn run(paper: &dyn Paper, opts: &RunOptions) -> Result<RunSummary> {
    let name = paper.name();
    let grid = paper.grid(opts.scale);
    validate(&grid, name)?;
    std::fs::create_dir_all(&opts.out).map_err(|source| ExpError::Io {
        path: opts.out.clone(),
        source,
    })?;
    let _lock = FolderLock::acquire(&opts.out).map_err(|e| ExpError::Locked(e.to_string()))?;
    let raw_path = opts.out.join(RAW_FILE);
    let reconciled = raw::reconcile(&raw_path, name)?;
    let reconciled_rows =
        reconciled.duplicate_rows + reconciled.partial_rows + reconciled.malformed_lines;
    let done = reconciled.cells;
    let all = grid.cells();
    let mut pending: Vec<Cell> = all
        .iter()
        .filter(|c| !done.contains_key(&(c.setting.key(name), c.repetition)))
        .cloned()
        .collect();
    let resumed = all.len() - pending.len();
    if let Some(m) = opts.max_cells {
        pending.truncate(m);
    }
    paper.schedule(&mut pending);

    let writer = Mutex::new(RawWriter::open(&raw_path)?);
    let failed = Mutex::new(Vec::new());
    let bar = progress_bar(pending.len(), opts.progress);
    let work = || {
        pending.par_iter().for_each(|cell| {
            let result = paper.run(cell).and_then(|outcome| {
                writer
                    .lock()
                    .expect("writer lock")
                    .append(name, cell, &outcome)
            });
            if let Err(e) = result {
                bar.suspend(|| eprintln!("cell {cell} failed: {e}"));
                failed
                    .lock()
                    .expect("failed lock")
                    .push((cell.to_string(), e.to_string()));
            }
            bar.inc(1);
        })
    };
    match opts.jobs {
        Some(j) => rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build()
            .map_err(|e| ExpError::InvalidParameter {
                parameter: "jobs",
                reason: e.to_string(),
            })?
            .install(work),
        None => work(),
    }
    bar.finish_and_clear();
    let failed = failed.into_inner().expect("failed lock");
    let ran = pending.len() - failed.len();

    // Aggregate everything the raw file now holds for this grid.
    let cells = raw::read(&raw_path, name)?;
    let mut summaries = Vec::new();
    let mut missing = 0;
    for s in &grid.settings {
        let key = s.key(name);
        let reps = grid.repetitions_of(s);
        let mine: Vec<&raw::RawCell> = (0..reps)
            .filter_map(|r| cells.get(&(key.clone(), r)))
            .collect();
        missing += reps - mine.len();
        if !mine.is_empty() {
            summaries.extend(summarise(s, &mine));
        }
    }
    let results = opts.out.join(RESULTS_FILE);
    write_results(&results, name, grid.seed0, &summaries)?;
    let plots = plot::draw_all(&opts.out, &paper.plots(), &summaries)?;
    let report = opts.out.join(REPORT_FILE);
    let own_counts: Vec<usize> = grid
        .settings
        .iter()
        .map(|s| grid.repetitions_of(s))
        .filter(|&n| n != grid.repetitions)
        .collect();
    let status = report::Status {
        scale: opts.scale,
        settings: grid.settings.len(),
        repetitions: grid.repetitions,
        overridden: own_counts.len(),
        overridden_range: (
            own_counts.iter().copied().min().unwrap_or(0),
            own_counts.iter().copied().max().unwrap_or(0),
        ),
        max_repetitions: grid.max_repetitions(),
        seed0: grid.seed0,
        ran,
        resumed,
        missing,
        failed: failed.clone(),
    };
    report::write(&report, paper, &status, &summaries, &plots)?;
    Ok(RunSummary {
        ran,
        resumed,
        missing,
        reconciled_rows,
        failed,
        results,
        raw: raw_path,
        report,
        plots,
        summaries,
    })
}

fn progress_bar(len: usize, visible: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(len as u64),
        if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} cells, ETA {eta_precise}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar
}

/// The results.csv columns.
pub const RESULTS_HEADER: [&str; 15] = [
    "experiment",
    "method",
    "dataset",
    "accounting",
    "epsilon",
    "delta",
    "epsilon_spent",
    "fairness_level",
    "params",
    "repetitions",
    "seed0",
    "metric",
    "mean",
    "std",
    "ci95",
];

fn write_results(path: &Path, experiment: &str, seed0: u64, rows: &[Summary]) -> Result<()> {
    let err = |e: csv::Error| ExpError::Io {
        path: path.into(),
        source: std::io::Error::other(e.to_string()),
    };
    let file = AtomicFile::create(path).map_err(|source| ExpError::Io {
        path: path.into(),
        source,
    })?;
    let mut w = csv::Writer::from_writer(file);
    w.write_record(RESULTS_HEADER).map_err(err)?;
    for r in rows {
        let s = &r.setting;
        w.write_record([
            experiment,
            &s.method,
            &s.dataset,
            &s.accounting,
            &fmt_f64(s.epsilon),
            &fmt_f64(s.delta),
            &r.epsilon_spent.map(fmt_f64).unwrap_or_default(),
            &s.fairness_level.map(fmt_f64).unwrap_or_default(),
            &s.params.to_string(),
            &r.repetitions.to_string(),
            &seed0.to_string(),
            &r.metric,
            &fmt_f64(r.mean),
            &fmt_f64(r.std),
            &fmt_f64(r.ci95),
        ])
        .map_err(err)?;
    }
    w.into_inner()
        .map_err(|e| e.into_error())
        .and_then(AtomicFile::commit)
        .map_err(|source| ExpError::Io {
            path: path.into(),
            source,
        })
}
