//! `dpfair fit decoupled`: the private fair binary classifier of Ghoukasian & Asoodeh
//! (Algorithm 2): a DP-SGD base classifier h(x, a), the two groups' positive rates released with
//! Laplace noise on held-out rows, and randomized flips that give both groups the same positive
//! rate (statistical parity up to the noise).
//!
//! Example:
//!
//! ```text
//! dpfair fit decoupled --data adult.csv --target income --sensitive sex \
//!     --categorical workclass,education --bounds age:17:90,hours:1:99 \
//!     --epsilon 3 --delta 1e-5 --accountant prv --out model.json
//! dpfair predict --model model.json --data new.csv --out pred.csv --seed 1
//! ```
//!
//! Strict (default): 2/3 of the rows train DP-SGD at ε (calibrated for replace-one neighbours),
//! 1/3 give the rates at ε (a noisy group × prediction count table, group sizes included): the
//! two parts are disjoint pieces of a public split (parallel composition). `--accounting paper` runs the authors' procedure (z-scores from the
//! data, public group sizes, ε₀ = ε₁, B = 1024, η = 0.01, 50 epochs, `--noise-multiplier` as the
//! paper's σ/1.5) and prints what it really spends.
//!
//! `--constraint` other than demographic parity, or more than two groups, fits the
//! group-thresholds classifier in Algorithm 2's place: its score on the base model's rows, its
//! table on the held-out rows (docs/fairness-constraints.md).
//!
//! A Parquet or Arrow IPC `--data` is streamed: at most `--base-rows` rows (a public seeded
//! choice) are held in memory to train DP-SGD, and the rate release counts the other rows batch
//! by batch (`dpfair::estimators::Decoupled::fit_batches`), so a file larger than memory is
//! fitted. Private feature bounds are then estimated from the training rows.

pub use super::flags::decoupled::{Args, BaseArg};
use super::pipeline::{self, common_of, finish, report_bounds, session_for, with_progress};
use crate::error::{CliError, CliResult};
use dpfair::decoupled::{Accounting, BaseModel, Config, Training};
use dpfair::estimators::DecoupledParams;
use dpfair::{Estimator, Params};
use dpfair_data::load::{learn_schema, read_batches};
use dpfair_data::{ApplyOptions, FileFormat, LoadOptions, TaskKind, Unseen};

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> DecoupledParams {
        let p = DecoupledParams::from_config(Config {
            epsilon: self.privacy.epsilon,
            delta: self.privacy.delta.unwrap_or(1e-5),
            accounting: self.privacy.accounting(),
            accountant: self.accountant.into(),
            base: match self.base {
                BaseArg::Joint => BaseModel::Joint,
                BaseArg::Decoupled => BaseModel::Decoupled,
            },
            paper_rate_epsilon: self.rate_epsilon,
            post_fraction: self.post_fraction,
            base_rows: self.base_rows,
            training: Training {
                epochs: self.epochs,
                expected_batch: self.batch,
                learning_rate: self.learning_rate,
                clip: Some(self.clip),
            },
            noise_multiplier: self.noise_multiplier,
            split_seed: None,
            parity_level: self.alpha,
            flip_rule: self.flips.into(),
        })
        .constraint(self.constraint.constraint);
        match self.constraint.ldp.sensitive_ldp {
            Some(e) => p.attribute_epsilon(e),
            None => p,
        }
    }
}

/// The checked estimator these flags describe (every check that needs no data).
pub fn estimator(args: &Args) -> CliResult<dpfair::estimators::Decoupled> {
    if let Some(e) = args.epochs {
        super::check_passes("--epochs", e)?;
    }
    if args.data.sensitive.is_none() {
        return Err(CliError::BadInput(
            "--sensitive is required: the classifier equalises its groups' rates".into(),
        ));
    }
    Ok(args
        .params()
        .check_fraction(args.check.check_fraction)
        .check()?)
}

pub fn run(args: Args) -> CliResult {
    args.out.check(&[args.data.input()])?;
    let est = estimator(&args)?;
    let accounting = args.privacy.accounting();
    let common = common_of!(args);
    let unscaled = (accounting == Accounting::Strict).then_some(UNSCALED);
    if FileFormat::of(&args.data.data) != FileFormat::Csv {
        return fit_streamed(&args, &est, unscaled);
    }
    let run = pipeline::fit(common, Some(TaskKind::Binary), &est, unscaled, |_| Ok(()))?;
    run.save(&args.out)?;
    Ok(())
}

/// A Parquet or Arrow IPC file: one pass learns and checks the schema (as a whole load), a
/// second keeps the base model's training rows, a third streams the rest into the rate counts
/// (module doc).
fn fit_streamed(
    args: &Args,
    est: &dpfair::estimators::Decoupled,
    unscaled: Option<&str>,
) -> CliResult {
    if args.privacy.accounting() == Accounting::Paper {
        return Err(CliError::BadInput(
            "--accounting paper takes z-scores of all rows at once, which a streamed Parquet or \
             Arrow IPC fit does not hold: give the data as CSV for the paper's procedure"
                .into(),
        ));
    }
    let options = LoadOptions {
        fill: args.bounds.public()?,
        ..args.data.options(Some(TaskKind::Binary))
    };
    let header = args.data.announce(learn_schema(&args.data.data, &options)?);
    let scaling = args.bounds.scaling()?;
    if scaling.is_none()
        && let Some(warning) = unscaled
    {
        eprintln!("{warning}");
    }
    if args.privacy.epsilon.is_infinite() {
        eprintln!("warning: --epsilon inf: a non-private reference; the model is NOT private");
    }
    let apply = ApplyOptions {
        with_target: true,
        missing: options.missing,
        unseen: Unseen::Refuse,
        format: options.format,
    };
    let spend = est.spend(&header.dataset)?;
    let mut session = session_for(&spend)?.with_noise(args.privacy.noise());
    let (fitted, loaded) = with_progress(est.method(), || {
        est.fit_batches(&header, &scaling, &mut session, |schema, sink| {
            read_batches(&args.data.data, schema, &apply, |batch| sink(&batch)).map(|_| ())
        })
    })?;
    report_bounds(
        &loaded,
        &scaling,
        args.privacy.epsilon,
        &fitted.ledger,
        fitted.rows,
    );
    if args.check.check_fraction > 0.0 {
        eprintln!(
            "note: a streamed fit (Parquet or Arrow IPC) runs no held-out check against the \
             constant classes; give the data as CSV for it"
        );
    }
    finish(est, loaded, fitted).save(&args.out)?;
    Ok(())
}

/// The warning of a DP-SGD-based fit without feature bounds (also `fit group-thresholds`).
pub(super) const UNSCALED: &str = "warning: no --bounds: features are used unscaled (still private, but \
     DP-SGD learns poorly on wide ranges); give public --bounds or --coarse-bounds";
