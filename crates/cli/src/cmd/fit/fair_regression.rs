//! `dpfair fit fair-regression`: private Wasserstein-barycenter post-processing of a regressor's
//! scores for statistical parity in KS distance (Xian, Li, Kamath, Zhao; Algorithm 1).
//!
//! The score column holds f(x, a) for every row (it may be the target itself, as in the paper's
//! experiments, where f = Id). The whole ε goes to one Laplace release of the group × bin
//! histogram; the interval `--range`, `--bins`, `--alpha` and the group set are public.

use super::pipeline::{finish, session_for};
use crate::cmd::common::{HeaderArg, Input, OutArgs, SeedArgs, csv_format, parse_delimiter};
use crate::error::{CliError, CliResult};
use dpfair::estimators::FairRegressionParams;
use dpfair::fair_regression::Config;
use dpfair::fair_regression::lp::{Backend, SolveOptions};
use dpfair::{Estimator, Params};
use dpfair_data::{LoadOptions, MissingPolicy, TaskKind};
use std::path::PathBuf;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverArg {
    /// The exact fast paths (k = 1, α ≥ the inputs' KS, the α = 0 closed form, and the per-level
    /// decomposition for any other α), with the structured interior point as fallback (default).
    Auto,
    /// The structured interior-point method only (no fast paths).
    Structured,
    /// The paper's LP as a general LP through Clarabel only (slow; a reference).
    Clarabel,
}

#[derive(clap::Args)]
pub struct Args {
    /// The CSV file (delimiter and header detected).
    #[arg(long, value_name = "CSV")]
    data: PathBuf,
    /// The column of scores f(x, a) to post-process (may be the target, as in the paper).
    #[arg(long, value_name = "COL")]
    scores: String,
    /// The sensitive-attribute column.
    #[arg(long, value_name = "COL")]
    sensitive: String,
    /// The target column, recorded in the model's schema for evaluation (post-processing reads
    /// no labels). Ignored when it is the score column.
    #[arg(long, value_name = "COL")]
    target: Option<String>,
    /// Declare the sensitive groups (public), in order [default: the levels found in the data,
    /// recorded as public]. A declared group absent from the data gets a near-zero weight.
    #[arg(long, value_name = "G,...", value_delimiter = ',')]
    groups: Option<Vec<String>>,
    /// Fairness tolerance α ≥ 0: the groups' output distributions end within KS distance α
    /// (0: exact statistical parity; 1: no constraint, binning only).
    #[arg(
        long,
        value_name = "A",
        default_value_t = 0.0,
        allow_hyphen_values = true
    )]
    alpha: f64,
    /// Privacy budget ε > 0 (`inf`: the non-private reference, no noise).
    #[arg(long, value_name = "E", allow_hyphen_values = true)]
    epsilon: f64,
    /// Number of bins k ≥ 1 (the outputs take the k bin midpoints).
    #[arg(long, value_name = "K", default_value_t = 36)]
    bins: usize,
    /// The public interval `LO,HI` containing the scores (never derived from the data).
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    range: String,
    /// The LP solver.
    #[arg(long, value_enum, default_value_t = SolverArg::Auto)]
    solver: SolverArg,
    #[command(flatten)]
    seeds: SeedArgs,
    /// Field delimiter: `,` `;` `tab` or one character [default: detected].
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter)]
    delimiter: Option<u8>,
    /// Whether the first row is a header.
    #[arg(long, value_enum, default_value_t = HeaderArg::Auto)]
    header: HeaderArg,
    #[command(flatten)]
    out: OutArgs,
}

/// Parse `LO,HI`.
fn parse_range(s: &str) -> CliResult<[f64; 2]> {
    let bad = || {
        CliError::BadInput(format!(
            "--range {s}: expected two numbers LO,HI with LO < HI"
        ))
    };
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let [lo, hi] = parts.as_slice() else {
        return Err(bad());
    };
    let (lo, hi): (f64, f64) = (
        lo.parse().map_err(|_| bad())?,
        hi.parse().map_err(|_| bad())?,
    );
    if !(lo.is_finite() && hi.is_finite() && lo < hi) {
        return Err(bad());
    }
    Ok([lo, hi])
}

pub fn run(args: Args) -> CliResult {
    args.out.check(&[Input {
        option: "--data",
        path: &args.data,
    }])?;
    let config = Config {
        alpha: args.alpha,
        epsilon: args.epsilon,
        bins: args.bins,
        range: Some(parse_range(&args.range)?),
        groups: args.groups.clone(),
        score_column: Some(args.scores.clone()),
        solver: SolveOptions {
            backend: match args.solver {
                SolverArg::Auto | SolverArg::Structured => Backend::Structured,
                SolverArg::Clarabel => Backend::Clarabel,
            },
            fast_paths: args.solver == SolverArg::Auto,
            ..SolveOptions::default()
        },
        ..Config::default()
    };
    // Parameters first: bad input is reported before the file is read.
    let est = FairRegressionParams::from_config(config).check()?;
    let target = args.target.clone().filter(|t| *t != args.scores);
    let options = LoadOptions {
        task: target.as_ref().map(|_| TaskKind::Regression),
        target,
        sensitive: Some(args.sensitive.clone()),
        features: Some(vec![args.scores.clone()]),
        groups: args.groups.clone(),
        missing: MissingPolicy::Drop,
        format: csv_format(args.delimiter, args.header),
        ..LoadOptions::default()
    };
    let loaded = dpfair_data::load_csv(&args.data, &options)?;
    if let Some(msg) = loaded.report.dropped_message() {
        eprintln!("{msg}");
    }
    if args.epsilon.is_infinite() {
        eprintln!("warning: --epsilon inf: the non-private reference; the model is NOT private");
    }
    let mut session = session_for(&est.spend(&loaded.dataset)?)?.with_noise(args.seeds.noise());
    let fitted = est.fit(&loaded.dataset, &mut session)?;
    finish(&est, loaded, fitted).save(&args.out)?;
    Ok(())
}
