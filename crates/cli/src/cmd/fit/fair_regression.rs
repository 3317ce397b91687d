//! `dpfair fit fair-regression`: private Wasserstein-barycenter post-processing of a regressor's
//! scores for statistical parity in KS distance (Xian, Li, Kamath, Zhao; Algorithm 1).
//!
//! The score column holds f(x, a) for every row (it may be the target itself, as in the paper's
//! experiments, where f = Id). The whole ε goes to one Laplace release of the group × bin
//! histogram; the interval `--range`, `--bins`, `--alpha` and the group set are public.

pub use super::flags::fair_regression::{Args, SolverArg};
use super::pipeline::{finish, session_for, with_progress};
use crate::cmd::common::{Input, csv_format};
use crate::error::{CliError, CliResult};
use dpfair::estimators::FairRegressionParams;
use dpfair::fair_regression::Config;
use dpfair::fair_regression::lp::{Backend, SolveOptions};
use dpfair::{Estimator, Params};
use dpfair_data::{LoadOptions, MissingPolicy, TaskKind};

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
    let fitted = with_progress(est.method(), || est.fit(&loaded.dataset, &mut session))?;
    finish(&est, loaded, fitted).save(&args.out)?;
    Ok(())
}
