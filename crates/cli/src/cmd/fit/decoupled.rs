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

pub use super::flags::decoupled::{Args, BaseArg};
use super::pipeline::{self, Common};
use crate::error::{CliError, CliResult};
use dpfair::Params;
use dpfair::decoupled::{Accounting, BaseModel, Config, Training};
use dpfair::estimators::DecoupledParams;
use dpfair_data::TaskKind;

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
            parity_level: self.alpha,
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
