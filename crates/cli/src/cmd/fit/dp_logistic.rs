//! `dpfair fit dp-logistic`: differentially private logistic regression, binary or multi-class
//! (the privacy-only baseline every comparison needs, like diffprivlib's LogisticRegression).
//!
//! Two mechanisms (crate `dpfair-learn`): DP-SGD with Opacus semantics (default; spec 003 §2.3)
//! or Gaussian output perturbation of L2-regularised logistic regression (spec 004 §2.2 P1-OP).
//! Both are private without feature bounds (gradient clipping / row clipping to R); public
//! `--bounds` scale the features to [0, 1], which helps accuracy and costs nothing;
//! `--coarse-bounds` estimates the bounds privately with `--bounds-share` of ε, and training
//! runs with the rest (the ledger composes both).

use crate::cmd::common::{AccountantArg, BoundsArgs, DataArgs, OutArgs, PrivacyArgs};
use crate::error::{CliError, CliResult};
use dpfair::model::FittedModel;
use dpfair_data::TaskKind;
use dpfair_learn::validate::class_labels;
use dpfair_learn::{
    Architecture, DpSgdConfig, LearnError, OutputPerturbationConfig, PrivateLogistic, fit_dp_sgd,
    fit_output_perturbation,
};
use dpfair_privacy::Relation;
use serde::Serialize;

/// Default δ when `--delta` is not given.
const DEFAULT_DELTA: f64 = 1e-5;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// DP-SGD: Poisson sampling, per-example clipping, Gaussian noise (Opacus semantics).
    DpSgd,
    /// Gaussian noise on the weights of L2-regularised logistic regression (Chaudhuri et al.).
    OutputPerturbation,
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    bounds: BoundsArgs,
    #[command(flatten)]
    privacy: PrivacyArgs,
    #[command(flatten)]
    out: OutArgs,
    /// The mechanism.
    #[arg(long, value_enum, default_value_t = Method::DpSgd)]
    method: Method,
    /// DP-SGD: epochs.
    #[arg(long, default_value_t = 30)]
    epochs: usize,
    /// DP-SGD: expected batch size [default: n/16 clamped to 16..=1024, so about 16 steps per
    /// epoch].
    #[arg(long, value_name = "B")]
    batch: Option<usize>,
    /// DP-SGD: learning rate (plain SGD on the mean clipped gradient).
    #[arg(long, default_value_t = 0.5)]
    learning_rate: f64,
    /// DP-SGD: per-example clipping norm C.
    #[arg(long, default_value_t = 1.0)]
    clip: f64,
    /// DP-SGD: the accountant calibrating the noise multiplier.
    #[arg(long, value_enum, default_value_t = AccountantArg::Rdp)]
    accountant: AccountantArg,
    /// DP-SGD: certify replace-one neighbours (twice the noise) instead of add/remove-one (as
    /// Opacus).
    #[arg(long)]
    substitution: bool,
    /// Output perturbation: L2 strength Λ per sample (the intercept is penalised too).
    #[arg(long, default_value_t = 1e-2)]
    l2: f64,
    /// Output perturbation: rows [x; 1] are scaled down to ℓ2 norm at most R.
    #[arg(long, value_name = "R", default_value_t = 1.0)]
    feature_bound: f64,
}

/// The configuration saved in the model file.
#[derive(Serialize)]
#[serde(tag = "method", rename_all = "kebab-case")]
enum Config {
    DpSgd(DpSgdConfig),
    OutputPerturbation(OutputPerturbationConfig),
}

fn learn_error(e: LearnError) -> CliError {
    match e {
        LearnError::NotConverged { .. } => CliError::Internal(e.to_string()),
        LearnError::Privacy(p) => p.into(),
        other => {
            let msg = other.to_string();
            match OPTION_OF
                .iter()
                .find(|(p, _)| msg.contains(&format!("`{p}`")))
            {
                Some((_, flag)) => CliError::BadInput(format!("{flag}: {msg}")),
                None => CliError::BadInput(msg),
            }
        }
    }
}

/// The command-line option behind each learner parameter an error may name.
const OPTION_OF: [(&str, &str); 7] = [
    ("expected_batch", "--batch"),
    ("epochs", "--epochs"),
    ("learning_rate", "--learning-rate"),
    ("clip", "--clip"),
    ("l2", "--l2"),
    ("feature_bound", "--feature-bound"),
    ("epsilon", "--epsilon"),
];

/// The default expected batch size for `n` rows: about 16 steps per epoch.
fn default_batch(n: usize) -> usize {
    (n / 16).clamp(16, 1024)
}

/// The neighbouring relation the fit's ledger certifies: DP-SGD certifies add/remove-one
/// neighbours unless `--substitution`; output perturbation and the private bounds certify
/// replace-one neighbours. One ledger certifies one relation, so `--coarse-bounds` with
/// add/remove DP-SGD is refused (before the data is read).
fn relation(args: &Args) -> CliResult<Relation> {
    if args.method == Method::OutputPerturbation || args.substitution {
        return Ok(Relation::Substitution);
    }
    if args.bounds.coarse_bounds.is_some() {
        return Err(CliError::BadInput(
            "--coarse-bounds: the private feature bounds certify replace-one neighbours and \
             DP-SGD here certifies add/remove-one neighbours, but one ledger certifies one \
             relation; add --substitution (DP-SGD then certifies replace-one neighbours, with \
             twice the noise), or give public --bounds"
                .into(),
        ));
    }
    Ok(Relation::AddRemove)
}

pub fn run(args: Args) -> CliResult {
    let relation = relation(&args)?;
    args.out.check(&[args.data.input()])?;
    super::check_passes("--epochs", args.epochs)?;
    let mut loaded = args.data.load(None)?;
    if loaded.schema.task() == Some(TaskKind::Regression) {
        return Err(CliError::BadInput(format!(
            "--target {}: dp-logistic needs a binary or multi-class target, the column is numeric \
             (use --task multiclass if its values are class codes)",
            args.data.target
        )));
    }
    if args.method == Method::DpSgd {
        args.accountant
            .warn_if_uncertified(args.privacy.accounting());
    }
    let budget = args.privacy.budget(DEFAULT_DELTA)?;
    let mut ledger = args.privacy.ledger_for(DEFAULT_DELTA, relation)?;
    let mut noise = args.privacy.noise();
    // Private bounds (--coarse-bounds) spend `--bounds-share` of ε first; training gets the rest.
    let spent = if args.bounds.given() {
        args.bounds
            .scale_to_unit(&mut loaded, &mut ledger, &mut noise)?
    } else {
        eprintln!(
            "note: no --bounds: numeric features are used unscaled (still private: {}); public \
             bounds usually improve accuracy",
            match args.method {
                Method::DpSgd => "per-example gradients are clipped",
                Method::OutputPerturbation => "rows are clipped to norm R",
            }
        );
        0.0
    };
    let epsilon = budget.epsilon - spent;
    let target = loaded
        .dataset
        .target
        .as_ref()
        .ok_or_else(|| CliError::Internal("the loader returned no target column".into()))?;
    let (y, k) = class_labels(target).map_err(learn_error)?;
    let x = loaded.dataset.features.view();
    let n = x.nrows();
    let (fit, config) = match args.method {
        Method::DpSgd => {
            let cfg = DpSgdConfig {
                epsilon,
                delta: budget.delta,
                accountant: args.accountant.into(),
                noise_multiplier: None,
                epochs: args.epochs,
                expected_batch: args.batch.unwrap_or(default_batch(n)),
                learning_rate: args.learning_rate,
                clip: args.clip,
                architecture: Architecture::Logistic,
                relation,
            };
            let fit = fit_dp_sgd(&cfg, x, &y, k, &mut ledger, &mut noise).map_err(learn_error)?;
            eprintln!(
                "DP-SGD: q = {:.5}, {} steps, noise multiplier z = {:.4} (σ = zC = {:.4} on each \
                 clipped-gradient sum), {:?} accountant, {} neighbours",
                fit.sampling_rate,
                fit.steps,
                fit.noise_multiplier,
                fit.noise_multiplier * fit.clip,
                cfg.accountant,
                if args.substitution {
                    "replace-one"
                } else {
                    "add/remove-one"
                }
            );
            (PrivateLogistic::DpSgd(fit), Config::DpSgd(cfg))
        }
        Method::OutputPerturbation => {
            let cfg = OutputPerturbationConfig {
                epsilon,
                delta: budget.delta,
                l2: args.l2,
                feature_bound: args.feature_bound,
                ..Default::default()
            };
            let fit = fit_output_perturbation(&cfg, x, &y, k, &mut ledger, &mut noise)
                .map_err(learn_error)?;
            eprintln!(
                "output perturbation: Λ = {}, R = {}, L = {:.4}, sensitivity Δ = {:.4e}, σ = {:.4e} \
                 per weight",
                fit.l2, fit.feature_bound, fit.lipschitz, fit.sensitivity, fit.sigma
            );
            (
                PrivateLogistic::OutputPerturbation(fit),
                Config::OutputPerturbation(cfg),
            )
        }
    };
    args.out.save(
        &loaded,
        ledger,
        Some(&noise),
        &config,
        FittedModel::DpLogistic(fit),
    )?;
    Ok(())
}
