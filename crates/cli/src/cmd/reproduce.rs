//! `dpfair reproduce NAME [--quick|--full] [--out DIR] [--jobs N] [--data-dir DIR]`: run a
//! paper's experiment grid (resuming from DIR/raw.csv), then write DIR/results.csv, the SVG plots
//! and DIR/report.md.

use crate::error::{CliError, CliResult};
use dpfair_experiments::{ExpError, RunOptions, Scale, papers};
use std::path::PathBuf;

const AFTER_LONG_HELP: &str = "\
Runs a paper's experiment grid (each cell a fixed seed), writes raw.csv (one row per cell and \
metric, appended as cells finish, so an interrupted run resumes), results.csv (means, standard \
deviations, Student-t 95 % intervals), SVG plots and report.md comparing with the paper's \
numbers: each within, missed or underpowered (docs/reproductions.md).

Examples:
  dpfair reproduce --list
  dpfair reproduce fair-bayes --quick --out out/fair-bayes --jobs 2";

#[derive(clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The experiment (see --list).
    #[arg(required_unless_present = "list")]
    pub name: Option<String>,
    /// The reduced grid (minutes on 2 cores; the default).
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// The paper's whole grid.
    #[arg(long)]
    pub full: bool,
    /// Output directory (default ./dpfair-reproduce/NAME). An interrupted run resumes from its
    /// raw.csv.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Folder with the real data files (else DPFAIR_DATA_DIR, else ~/.cache/dpfair).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// List the experiments and exit.
    #[arg(long)]
    pub list: bool,
}

pub fn run(args: Args) -> CliResult {
    if args.list {
        for p in papers::all() {
            println!("{:<16} {}", p.name(), p.description());
        }
        return Ok(());
    }
    let name = args.name.unwrap_or_default();
    let paper = papers::find(&name).map_err(|e| CliError::BadInput(e.to_string()))?;
    if args.jobs == Some(0) {
        return Err(CliError::BadInput("--jobs must be at least 1".into()));
    }
    dpfair_experiments::set_data_dir(args.data_dir);
    let scale = if args.full { Scale::Full } else { Scale::Quick };
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("dpfair-reproduce").join(&name));
    let mut opts = RunOptions::new(&out, scale);
    opts.jobs = args.jobs;
    let s = dpfair_experiments::run(paper, &opts).map_err(|e| match e {
        ExpError::InvalidParameter { .. }
        | ExpError::Io { .. }
        | ExpError::Raw { .. }
        | ExpError::Locked(_) => CliError::BadInput(e.to_string()),
        other => CliError::Internal(other.to_string()),
    })?;
    println!(
        "{name}: {} cells computed, {} resumed, {} missing, {} failed",
        s.ran,
        s.resumed,
        s.missing,
        s.failed.len()
    );
    println!("results: {}", s.results.display());
    println!("raw:     {}", s.raw.display());
    println!("report:  {}", s.report.display());
    for p in &s.plots {
        println!("plot:    {}", p.display());
    }
    if s.reconciled_rows > 0 {
        eprintln!(
            "{}: dropped {} duplicate, partial or malformed rows left by an earlier run",
            s.raw.display(),
            s.reconciled_rows
        );
    }
    if !s.failed.is_empty() {
        return Err(CliError::BadInput(format!(
            "{} cells failed (listed in {}); rerun to retry them",
            s.failed.len(),
            s.report.display()
        )));
    }
    if s.missing > 0 {
        return Err(CliError::Internal(format!(
            "{} cells are still missing after the run; rerun to complete them",
            s.missing
        )));
    }
    Ok(())
}
