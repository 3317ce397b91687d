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
//! Strict (default): 2/3 of the rows train DP-SGD with 80 % of ε (calibrated for replace-one
//! neighbours), 1/3 give the rates with the other 20 % (a noisy group × prediction count table,
//! group sizes included). `--accounting paper` runs the authors' procedure (z-scores from the
//! data, public group sizes, ε₀ = ε₁, B = 1024, η = 0.01, 50 epochs, `--noise-multiplier` as the
//! paper's σ/1.5) and prints what it really spends.

use super::pipeline::{self, Common};
use crate::cmd::common::{AccountantArg, BoundsArgs, DataArgs, OutArgs, PrivacyArgs};
use crate::error::{CliError, CliResult};
use dpfair::Params;
use dpfair::decoupled::{Accounting, BaseModel, Config, Training};
use dpfair::estimators::DecoupledParams;
use dpfair_data::TaskKind;

/// The base classifiers (`--base`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseArg {
    /// One DP-SGD logistic regression on the features plus the group (the authors' code).
    Joint,
    /// One DP-SGD model per group, each at ε/2 (the paper's "decoupled" classifiers).
    Decoupled,
}

#[derive(clap::Args)]
#[command(
    after_help = "Example (public feature bounds: no privacy spent on them):\n  dpfair fit decoupled --data train.csv --target income --sensitive sex \\\n    --bounds age:17:90,hours:1:99 --epsilon 3 --delta 1e-5 --seed 7 --out model.json\n  dpfair predict --model model.json --data test.csv --out pred.csv\n  dpfair ledger model.json\n\n--accounting paper runs the paper's procedure and its ledger shows what it really spends."
)]
pub struct Args {
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    bounds: BoundsArgs,
    #[command(flatten)]
    privacy: PrivacyArgs,
    #[command(flatten)]
    out: OutArgs,
    /// Accountant of the DP-SGD run.
    #[arg(long, value_enum, default_value_t = AccountantArg::Prv)]
    accountant: AccountantArg,
    /// Base classifiers.
    #[arg(long, value_enum, default_value_t = BaseArg::Joint)]
    base: BaseArg,
    /// Strict: share of ε for the rate release, in (0, 1).
    #[arg(long, value_name = "F", default_value_t = dpfair::decoupled::config::DEFAULT_RATE_SHARE)]
    rate_share: f64,
    /// Paper: ε₀ = ε₁ of each group's rate (the paper: 0.05 Adult, 0.1 Credit Card).
    #[arg(long, value_name = "E", default_value_t = 0.05)]
    rate_epsilon: f64,
    /// Fraction of the rows held out for the rates, in (0, 1).
    #[arg(long, value_name = "F", default_value_t = dpfair::decoupled::config::DEFAULT_POST_FRACTION)]
    post_fraction: f64,
    /// DP-SGD epochs [default: strict ≈ 1,500 steps; paper 50].
    #[arg(long, value_name = "N")]
    epochs: Option<usize>,
    /// DP-SGD expected batch size [default: strict rows/16 in [32, 1024]; paper 1024].
    #[arg(long, value_name = "B")]
    batch: Option<usize>,
    /// DP-SGD learning rate [default: strict 0.05; paper 0.01].
    #[arg(long, value_name = "LR")]
    learning_rate: Option<f64>,
    /// DP-SGD per-example clipping norm.
    #[arg(long, value_name = "C", default_value_t = 1.5)]
    clip: f64,
    /// A fixed DP-SGD noise multiplier (the paper's σ/C, e.g. 2.0867 for Adult at ε' = 3 with
    /// PRV) instead of calibrating one; the ledger records what it really costs.
    #[arg(long, value_name = "Z")]
    noise_multiplier: Option<f64>,
}

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> DecoupledParams {
        DecoupledParams::from_config(Config {
            epsilon: self.privacy.epsilon,
            delta: self.privacy.delta.unwrap_or(1e-5),
            accounting: self.privacy.accounting(),
            accountant: self.accountant.into(),
            base: match self.base {
                BaseArg::Joint => BaseModel::Joint,
                BaseArg::Decoupled => BaseModel::Decoupled,
            },
            rate_share: self.rate_share,
            paper_rate_epsilon: self.rate_epsilon,
            post_fraction: self.post_fraction,
            training: Training {
                epochs: self.epochs,
                expected_batch: self.batch,
                learning_rate: self.learning_rate,
                clip: Some(self.clip),
            },
            noise_multiplier: self.noise_multiplier,
            split_seed: None,
        })
    }
}

pub fn run(args: Args) -> CliResult {
    args.out.check(&[args.data.input()])?;
    if let Some(e) = args.epochs {
        super::check_passes("--epochs", e)?;
    }
    if args.data.sensitive.is_none() {
        return Err(CliError::BadInput(
            "--sensitive is required: the classifier equalises two groups' positive rates".into(),
        ));
    }
    let est = args.params().check()?;
    let accounting = args.privacy.accounting();
    let common = Common {
        data: &args.data,
        bounds: &args.bounds,
        privacy: &args.privacy,
        out: &args.out,
    };
    let unscaled = (accounting == Accounting::Strict).then_some(UNSCALED);
    let run = pipeline::fit(common, Some(TaskKind::Binary), &est, unscaled, |_| Ok(()))?;
    run.save(&args.out)?;
    Ok(())
}

const UNSCALED: &str = "warning: no --bounds: features are used unscaled (still private, but \
     DP-SGD learns poorly on wide ranges); give public --bounds or --coarse-bounds";
