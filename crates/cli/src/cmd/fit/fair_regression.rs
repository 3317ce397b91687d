//! `dpfair fit fair-regression`: private Wasserstein-barycenter post-processing of a regressor's
//! scores for statistical parity in KS distance (Xian, Li, Kamath, Zhao; Algorithm 1).
//!
//! The score column holds f(x, a) for every row (it may be the target itself, as in the paper's
//! experiments, where f = Id). The whole ε goes to one Laplace release of the group × bin
//! histogram; the interval `--range`, `--bins`, `--alpha` and the group set are public.
//!
//! With `--base dp-linear` there is no score column: a private linear regressor (as `dpfair fit
//! dp-linear`, target clipped to `--range`) is fitted on `--base-fraction` of a public random
//! split of the rows and the post-processor on its predictions for the other rows; the two
//! parts compose in parallel, so the fit is (ε, δ)-DP with δ the regressor's, and the model
//! predicts new rows from their features:
//!
//! With `--scores` and a Parquet or Arrow IPC `--data`, the rows are read batch by batch and
//! never all held: the joint counts are mergeable ([`dpfair::accumulate`]), so a file larger
//! than memory is fitted. With `--base` every row is loaded (DP-linear needs them at once).
//!
//! ```text
//! dpfair fit fair-regression --base dp-linear --data law.csv --target zfygpa --sensitive race \
//!     --bounds lsat:10:48,ugpa:1:4 --range -4,4 --epsilon 1 --out model.json
//! dpfair predict --model model.json --data new.csv --out pred.csv
//! ```

pub use super::flags::fair_regression::{Args, BaseArg, SolverArg};
use super::pipeline::{self, Common, finish, session_for, with_progress};
use crate::cmd::common::{AccountingArg, DataArgs, Input, PrivacyArgs, csv_format};
use crate::error::{CliError, CliResult};
use dpfair::estimators::FairRegressionParams;
use dpfair::fair_regression::lp::{Backend, SolveOptions};
use dpfair::fair_regression::{Config, LinearBase};
use dpfair::{Estimator, Params};
use dpfair_data::load::{learn_schema, read_batches};
use dpfair_data::{ApplyOptions, FileFormat, LoadOptions, TaskKind, Unseen};

/// Parse `LO,HI` given to `option`.
pub(crate) fn parse_range(option: &str, s: &str) -> CliResult<[f64; 2]> {
    let bad = || {
        CliError::BadInput(format!(
            "{option} {s}: expected two numbers LO,HI with LO < HI"
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
        range: Some(parse_range("--range", &args.range)?),
        groups: args.groups.clone(),
        score_column: args.scores.clone(),
        base: args.base.map(|BaseArg::DpLinear| LinearBase {
            delta: args
                .base_options
                .delta
                .unwrap_or(LinearBase::default().delta),
            row_bound: args.base_options.row_bound,
            ridge: args.base_options.ridge,
            fraction: args.base_options.base_fraction,
        }),
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
    let est = FairRegressionParams::from_config(config)
        .check_fraction(args.check.check_fraction)
        .check()?;
    match &args.scores {
        Some(scores) => {
            refuse_base_options(&args)?;
            fit_scores(&args, scores, &est)
        }
        None => fit_with_base(&args, &est),
    }
}

/// The options that only `--base` reads are refused without it (nothing is silently ignored).
fn refuse_base_options(args: &Args) -> CliResult {
    let b = &args.base_options;
    let given = [
        ("--features", b.features.is_some()),
        ("--categorical", !b.categorical.is_empty()),
        ("--bounds/--bounds-file/--coarse-bounds", b.bounds.given()),
        ("--delta", b.delta.is_some()),
        ("--row-bound", b.row_bound.is_some()),
        ("--ridge", b.ridge.is_some()),
        ("--base-fraction", b.base_fraction != 0.5),
    ];
    match given.iter().find(|(_, on)| *on) {
        Some((option, _)) => Err(CliError::BadInput(format!(
            "{option} configures the base regressor: it needs --base dp-linear (with --scores \
             the scores are given)"
        ))),
        None => Ok(()),
    }
}

/// `--scores COL`: post-process a given score column.
fn fit_scores(args: &Args, scores: &str, est: &dpfair::estimators::FairRegression) -> CliResult {
    let target = args.target.clone().filter(|t| t != scores);
    let options = LoadOptions {
        task: target.as_ref().map(|_| TaskKind::Regression),
        target,
        sensitive: Some(args.sensitive.clone()),
        features: Some(vec![scores.to_string()]),
        groups: args.groups.clone(),
        format: csv_format(args.delimiter, args.header),
        ..LoadOptions::default()
    };
    if FileFormat::of(&args.data) != FileFormat::Csv {
        return fit_scores_in_batches(args, &options, est);
    }
    let loaded = dpfair_data::load(&args.data, &options)?;
    announce(args);
    let mut session = session_for(&est.spend(&loaded.dataset)?)?.with_noise(args.seeds.noise());
    let fitted = with_progress(est.method(), || est.fit(&loaded.dataset, &mut session))?;
    finish(est, loaded, fitted).save(&args.out)?;
    Ok(())
}

/// What every `--scores` fit says before it fits: the reference warning (nothing about missing
/// values, which rows hold one is private).
fn announce(args: &Args) {
    if args.epsilon.is_infinite() {
        eprintln!("warning: --epsilon inf: the non-private reference; the model is NOT private");
    }
}

/// `--scores COL` on a Parquet or Arrow IPC file: the rows are never all in memory. One pass
/// learns and checks the schema, a second adds each batch to the joint counts, released once
/// (the same release and model as [`fit_scores`] on the rows loaded whole).
fn fit_scores_in_batches(
    args: &Args,
    options: &LoadOptions,
    est: &dpfair::estimators::FairRegression,
) -> CliResult {
    let header = learn_schema(&args.data, options)?;
    announce(args);
    let apply = ApplyOptions {
        with_target: options.target.is_some(),
        missing: options.missing,
        unseen: Unseen::Refuse,
        format: options.format,
    };
    let mut session = session_for(&est.spend(&header.dataset)?)?.with_noise(args.seeds.noise());
    let fitted = with_progress(est.method(), || {
        est.fit_batches(&header.dataset, &mut session, |sink| {
            read_batches(&args.data, &header.schema, &apply, |batch| sink(&batch)).map(|_| ())
        })
    })?;
    finish(est, header, fitted).save(&args.out)?;
    Ok(())
}

/// `--base dp-linear`: the shared fit pipeline (features, bounds, one session) on the target.
fn fit_with_base(args: &Args, est: &dpfair::estimators::FairRegression) -> CliResult {
    let b = &args.base_options;
    let data = DataArgs {
        data: args.data.clone(),
        target: args.target.clone().ok_or_else(|| {
            CliError::BadInput("--base needs --target: the regressor learns it".into())
        })?,
        sensitive: Some(args.sensitive.clone()),
        features: b.features.clone(),
        categorical: b.categorical.clone(),
        drop: Vec::new(),
        groups: args.groups.clone(),
        classes: None,
        positive: None,
        no_missing: false,
        delimiter: args.delimiter,
        header: args.header,
    };
    let privacy = PrivacyArgs {
        epsilon: args.epsilon,
        delta: b.delta,
        seeds: args.seeds.clone(),
        accounting: AccountingArg::Strict,
    };
    let common = Common {
        data: &data,
        bounds: &b.bounds,
        privacy: &privacy,
        out: &args.out,
    };
    let run = pipeline::fit(
        common,
        Some(TaskKind::Regression),
        est,
        Some(super::dp_linear::UNSCALED),
        |_| Ok(()),
    )?;
    run.save(&args.out)?;
    Ok(())
}
