//! `dpfair demo [--out DIR]`: every registered method on embedded synthetic data (no download),
//! a table of utility, fairness and privacy spent, and an SVG plot of fairness against utility.

use crate::cmd::common::check_output;
use crate::error::{CliError, CliResult};
use dpfair_experiments::demo::{self, DemoData, DemoSize};
use dpfair_experiments::papers;
use std::path::PathBuf;

const AFTER_LONG_HELP: &str = "\
Runs every method registered for the demo on one synthetic data set at a few ε, prints one row \
per (method, ε) with utility, fairness and the privacy the ledger spent, and writes two plots to \
--out: fairness_vs_utility.svg (classifiers: accuracy) and fairness_vs_mse.svg (regression), one \
line per method through its ε.

Example:
  dpfair demo --small --out demo-out";

#[derive(clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// Output directory for the plot.
    #[arg(long, default_value = "dpfair-demo")]
    pub out: PathBuf,
    /// A smaller data size (for quick checks and tests).
    #[arg(long)]
    pub small: bool,
    /// Seed of the data and of every method's noise.
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
}

pub fn run(args: Args) -> CliResult {
    // The output folder must take files before the methods run.
    std::fs::create_dir_all(&args.out).map_err(|e| {
        CliError::BadInput(format!(
            "--out {}: cannot create it: {e}",
            args.out.display()
        ))
    })?;
    check_output("--out", &args.out.join(demo::DEMO_PLOT), &[])?;
    let size = if args.small {
        DemoSize::SMALL
    } else {
        DemoSize::DEFAULT
    };
    let methods = papers::demo_methods();
    if methods.is_empty() {
        return Err(CliError::Internal(
            "no method is registered for the demo".into(),
        ));
    }
    eprintln!(
        "dpfair demo: {} methods on synthetic data ({} train / {} test rows, seed {})",
        methods.len(),
        size.train,
        size.test,
        args.seed
    );
    let data = DemoData::new(size, args.seed);
    let rows = demo::run_methods(&methods, &data);
    print!("{}", demo::table(&rows));
    let plots = demo::plot(&rows, &args.out).map_err(|e| CliError::BadInput(e.to_string()))?;
    println!();
    for plot in plots {
        println!("plot: {}", plot.display());
    }
    let failed = rows.iter().filter(|r| r.result.is_err()).count();
    if failed > 0 {
        return Err(CliError::Internal(format!(
            "{failed} demo runs failed (see the table)"
        )));
    }
    Ok(())
}
