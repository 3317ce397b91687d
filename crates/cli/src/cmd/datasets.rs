//! `dpfair datasets list` and `dpfair datasets info NAME`: the built-in data sets of the papers
//! (read from `--data-dir`, else `DPFAIR_DATA_DIR`, else the user's cache directory; never
//! downloaded) and the synthetic designs.

use crate::error::{CliError, CliResult};
use dpfair_data::builtin::{self, CatalogError, DataDir, FileStatus};
use dpfair_data::{Dataset, Target};
use std::path::PathBuf;

const AFTER_LONG_HELP: &str = "\
The real data sets are never downloaded: put the files listed by `dpfair datasets list` in the \
data folder (--data-dir, else DPFAIR_DATA_DIR, else ~/.cache/dpfair); each is checked against \
its sha256.

Examples:
  dpfair datasets list
  dpfair datasets info adult --data-dir /path/to/datasets";

#[derive(clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
    /// Folder with the data files (else DPFAIR_DATA_DIR, else ~/.cache/dpfair).
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
}

#[derive(clap::Subcommand)]
pub enum Command {
    /// Every built-in data set: rows, features, groups, target, and whether its files are present
    /// and verified in the data directory; then the synthetic designs.
    List,
    /// One data set: files, protocol, group balance and label balance (loads the files).
    Info {
        /// The data set (see `dpfair datasets list`).
        name: String,
    },
}

fn catalog_error(e: CatalogError) -> CliError {
    match e {
        CatalogError::NoDataDir => CliError::BadInput(e.to_string()),
        other => CliError::BadInput(other.to_string()),
    }
}

fn status_word(s: &FileStatus) -> &'static str {
    match s {
        FileStatus::Verified => "verified",
        FileStatus::Missing => "missing",
        FileStatus::Mismatch(_) => "sha256 mismatch",
        FileStatus::Unreadable(_) => "unreadable",
    }
}

pub fn run(args: Args) -> CliResult {
    let dir = DataDir::resolve(args.data_dir.as_deref()).map_err(catalog_error)?;
    match args.command {
        Command::List => list(&dir),
        Command::Info { name } => info(&dir, &name),
    }
}

fn list(dir: &DataDir) -> CliResult {
    println!(
        "data directory: {} (from {})\n",
        dir.path().display(),
        dir.source()
    );
    println!(
        "{:<15} {:>7} {:>8}  {:<34} {:<40} status",
        "name", "rows", "features", "groups", "target"
    );
    let (mut missing, mut files) = (0, 0);
    for i in builtin::catalog() {
        let groups = if i.groups.is_empty() {
            "-".to_string()
        } else {
            format!("{} ({})", i.groups.len(), i.groups.join("/"))
        };
        let statuses = i.file_status(dir);
        files += statuses.len();
        missing += statuses
            .iter()
            .filter(|(_, s)| *s == FileStatus::Missing)
            .count();
        let status = if statuses.iter().all(|(_, s)| *s == FileStatus::Verified) {
            "present, verified".to_string()
        } else {
            statuses
                .iter()
                .filter(|(_, s)| *s != FileStatus::Verified)
                .map(|(f, s)| format!("{}: {}", f.name, status_word(s)))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let rows = if i.public_rows > 0 {
            format!("{}+{}", i.rows, i.public_rows)
        } else {
            i.rows.to_string()
        };
        println!(
            "{:<15} {:>7} {:>8}  {:<34} {:<40} {}",
            i.name, rows, i.features, groups, i.target, status
        );
    }
    if missing > 0 {
        eprintln!("\n{}", missing_hint(dir, missing, files));
    }
    println!("\nsynthetic designs (no files needed; used by `dpfair demo` and the experiments):");
    for (name, what) in dpfair_data::synthetic::catalog() {
        println!("  {name:<20} {what}");
    }
    Ok(())
}

/// How to point dpfair at the data folder, when `missing` of the catalog's `files` are not in
/// `dir` (a newcomer without DPFAIR_DATA_DIR sees every file missing from the default folder).
fn missing_hint(dir: &DataDir, missing: usize, files: usize) -> String {
    format!(
        "note: {missing} of {files} files are missing from {} (from {}). Put the files in a \
         folder and point dpfair at it: `export DPFAIR_DATA_DIR=/path/to/datasets` (or \
         `--data-dir /path/to/datasets`); `dpfair datasets info NAME` says where each file comes \
         from. dpfair never downloads data.",
        dir.path().display(),
        dir.source()
    )
}

fn info(dir: &DataDir, name: &str) -> CliResult {
    let i = builtin::info(name).map_err(catalog_error)?;
    println!("{}: {}", i.name, i.description);
    println!("paper:     {}", i.paper);
    println!("protocol:  {}", i.protocol);
    println!("target:    {}", i.target);
    println!("sensitive: {}", i.sensitive.unwrap_or("-"));
    for (f, s) in i.file_status(dir) {
        println!("file:      {} ({}) — {}", f.name, status_word(&s), f.origin);
    }
    let b = i.load(dir).map_err(catalog_error)?;
    print_balance("data", &b.dataset);
    if let Some(p) = &b.public {
        print_balance("public sample", p);
    }
    if !b.standardize.is_empty() {
        println!(
            "\nthe paper standardises {} columns with training-split statistics (not applied here)",
            b.standardize.len()
        );
    }
    Ok(())
}

fn print_balance(what: &str, d: &Dataset) {
    println!(
        "\n{what}: {} rows × {} features",
        d.n_rows(),
        d.n_features()
    );
    let n = d.n_rows();
    let groups: Vec<(String, Vec<usize>)> = match &d.groups {
        Some(g) => g
            .names
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let rows = (0..n).filter(|&r| g.codes[r] as usize == k).collect();
                (name.clone(), rows)
            })
            .collect(),
        None => vec![("all".to_string(), (0..n).collect())],
    };
    match &d.target {
        Some(Target::Binary(y)) => {
            println!(
                "{:<14} {:>8} {:>8} {:>10} {:>10}",
                "group", "rows", "share", "positives", "rate"
            );
            for (name, rows) in groups
                .iter()
                .chain(std::iter::once(&("all".to_string(), (0..n).collect())))
            {
                let pos = rows.iter().filter(|&&r| y[r] == 1).count();
                println!(
                    "{:<14} {:>8} {:>8.4} {:>10} {:>10.4}",
                    name,
                    rows.len(),
                    rows.len() as f64 / n as f64,
                    pos,
                    pos as f64 / rows.len().max(1) as f64
                );
            }
        }
        Some(Target::Multiclass { k, labels }) => {
            println!(
                "{:<14} {:>8} {:>8}  class shares 0..{k}",
                "group", "rows", "share"
            );
            for (name, rows) in &groups {
                let shares: Vec<String> = (0..*k as u32)
                    .map(|c| {
                        let m = rows.iter().filter(|&&r| labels[r] == c).count();
                        format!("{:.3}", m as f64 / rows.len().max(1) as f64)
                    })
                    .collect();
                println!(
                    "{:<14} {:>8} {:>8.4}  {}",
                    name,
                    rows.len(),
                    rows.len() as f64 / n as f64,
                    shares.join(" ")
                );
            }
        }
        Some(Target::Real(y)) => {
            println!(
                "{:<14} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10}",
                "group", "rows", "share", "mean", "sd", "min", "max"
            );
            for (name, rows) in &groups {
                let v: Vec<f64> = rows.iter().map(|&r| y[r]).collect();
                let m = v.iter().sum::<f64>() / v.len().max(1) as f64;
                let sd = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>()
                    / (v.len().max(2) - 1) as f64)
                    .sqrt();
                let (lo, hi) = v
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                println!(
                    "{:<14} {:>8} {:>8.4} {:>10.4} {:>10.4} {:>10.4} {:>10.4}",
                    name,
                    rows.len(),
                    rows.len() as f64 / n as f64,
                    m,
                    sd,
                    lo,
                    hi
                );
            }
        }
        None => println!("(no target)"),
    }
}
