//! `dpfair demo [--out DIR]`: the methods on embedded synthetic data (no download), compared on
//! the same data in each panel: `dpfair compare` on a binary and a six-class data set, and the
//! regression methods on one regression data set; tables on stdout, SVG plots in `--out`.
//!
//! A simulation: no real person's data is involved, so every method's noise is seeded from
//! `--seed` (`compare::Config::simulated_noise`) and two runs with one seed print the same
//! tables. Its output and help say so ([`SIMULATION`]), and it writes no model file: a model
//! fitted with seeded noise is not private and must never be saved as if it were.

use crate::cmd::common::check_output;
use crate::error::{CliError, CliResult};
use dpfair_experiments::demo::{self, DemoData, DemoSize};
use dpfair_experiments::papers;
use std::path::PathBuf;

/// The label of every demo run, in its `--help` and at the top of its output.
pub const SIMULATION: &str = "simulation: noise seeded from --seed (repeatable, NOT private); a \
real fit draws its noise from the operating system";

const AFTER_LONG_HELP: &str = "\
A simulation on synthetic data: every method's noise is seeded from --seed, so two runs with one \
seed print the same tables (times go to stderr); such models are NOT private, and the demo writes \
no model file. A real fit (`dpfair fit`, `dpfair compare`) draws its noise from the operating \
system.

Three panels, each on one synthetic data set, so that the methods in a panel are compared on the \
same rows: (1) a binary target with two groups: every classifier, as `dpfair compare` runs them \
(the same ε, α = 0.1, the same held-out rows, beside the majority class and a non-private \
reference; LPCT on a public 10 % of the training rows), plot frontier_binary.svg; (2) six \
classes with two groups: DP-logistic and DP2DP, plot frontier_multiclass.svg; (3) a regression \
target with four groups: private fair regression and its non-private reference, plot \
fairness_vs_mse.svg. Features are scaled with public bounds known from the synthetic designs \
(their Gaussian means ± 4 standard deviations), as `--bounds` does; on your own data, a fit \
without --bounds pays for private bounds from its ε.

Example:
  dpfair demo --small --out /tmp/dpfair-demo";

#[derive(clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// Output directory for the plots (SVG only: the demo writes no model file).
    #[arg(long, default_value = "dpfair-demo")]
    pub out: PathBuf,
    /// A smaller data size (for quick checks and tests).
    #[arg(long)]
    pub small: bool,
    /// Seed of the synthetic data and of every method's noise. Simulation: noise seeded from
    /// --seed, so two runs with one seed print the same tables (times go to stderr); its models
    /// are NOT private. A real fit draws its noise from the operating system.
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
    check_output("--out", &args.out.join(demo::DEMO_PLOT_REGRESSION), &[])?;
    let size = if args.small {
        DemoSize::SMALL
    } else {
        DemoSize::DEFAULT
    };
    eprintln!(
        "dpfair demo: a simulation on synthetic data ({} train / {} test rows per panel, seed {} \
         for the data and the noise: repeatable, NOT private)",
        size.train, size.test, args.seed
    );
    println!("{SIMULATION}; seed {}\n", args.seed);
    let mut failed = 0;
    for panel in
        demo::compare_panels(size, args.seed).map_err(|e| CliError::Internal(e.to_string()))?
    {
        let config = dpfair::compare::Config {
            epsilons: vec![1.0, 4.0],
            test_fraction: demo::panel_test_fraction(size),
            seed: args.seed,
            // A simulation on synthetic data: the noise too is seeded, so the tables repeat.
            simulated_noise: true,
            // Synthetic data, not private: the held-out rows are scored exactly.
            evaluation: dpfair::compare::Evaluation::Exact,
            ..dpfair::compare::Config::default()
        };
        let scaling = dpfair::pipeline::Scaling::Public(panel.bounds.clone());
        let report =
            dpfair::compare::compare(&panel.data, &scaling, &config, super::compare::progress())?;
        println!("## {}\n", panel.title);
        print!("{}", super::compare::table(&report, &config));
        for r in report.rows.iter().filter(|r| r.seconds.is_finite()) {
            eprintln!(
                "time: {} at ε = {}: {:.2} s",
                r.method, r.epsilon, r.seconds
            );
        }
        let path = args.out.join(panel.plot);
        super::compare::frontier(&report, &path, Some(panel.title))?;
        println!("plot: {}\n", path.display());
        failed += report.rows.iter().filter(|r| r.error.is_some()).count();
    }
    let methods: Vec<_> = papers::demo_methods()
        .into_iter()
        .filter(|m| m.task.starts_with("regression"))
        .collect();
    if methods.is_empty() {
        return Err(CliError::Internal(
            "no regression method is registered for the demo".into(),
        ));
    }
    let data = DemoData::new(size, args.seed);
    let rows = demo::run_methods(&methods, &data);
    println!("## regression target, four groups\n");
    print!("{}", demo::table(&rows));
    let plots = demo::plot(&rows, &args.out).map_err(|e| CliError::BadInput(e.to_string()))?;
    for plot in plots {
        println!("plot: {}", plot.display());
    }
    failed += rows.iter().filter(|r| r.result.is_err()).count();
    if failed > 0 {
        return Err(CliError::Internal(format!(
            "{failed} demo runs failed (see the table)"
        )));
    }
    Ok(())
}
