//! `dpfair fit dp2dp`: DP2DP, private demographic-parity post-processing of a private multi-class
//! probability model (Say, Denis, Pinot; Algorithm 1).
//!
//! The rows are split at random (independently of the data) into a labelled part (Phase 1: a
//! private multinomial logistic regression, DP-SGD by default, `--phase1 output-perturbation` for
//! the paper's choice) and an unlabelled pool
//! (`--pool-fraction`, Phase 2: private group frequencies, then noisy projected SGD on the 2K
//! Lagrange multipliers). The phases see disjoint rows, so each gets the whole (ε, δ) (parallel
//! composition). `--accounting paper` runs the published procedure and prints what it really
//! costs.

use super::pipeline::{self, Common};
use crate::cmd::common::{BoundsArgs, DataArgs, OutArgs, PrivacyArgs};
use crate::error::{CliError, CliResult};
use dpfair::Params;
use dpfair::dp2dp::{Config, Iterate, Phase1, TieBreak};
use dpfair::estimators::Dp2dpParams;
use dpfair_data::TaskKind;

/// Phase-1 model choice.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase1Arg {
    /// Output perturbation when its noise is small for this n, d, K and ε (public numbers),
    /// else DP-SGD.
    Auto,
    /// Output-perturbed L2-regularised logistic regression (the paper's experiments).
    OutputPerturbation,
    /// DP-SGD logistic regression (Algorithm 2 with clipping; 20 epochs, expected batch 256,
    /// η = 0.5, clipping norm 1).
    DpSgd,
}

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  dpfair fit dp2dp --data train.csv --target y --sensitive sex \\\n    \
    --rho 0.05 --epsilon 1 --delta 1e-5 --seed 1 --out model.json\n  dpfair predict --model \
    model.json --data test.csv --out pred.csv"
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
    /// Fairness tolerance ρ ≥ 0: the classifier targets max_k |P(ĝ=k|S=+1) − P(ĝ=k|S=−1)| ≤ ρ.
    #[arg(
        long,
        value_name = "R",
        default_value_t = 0.0,
        allow_hyphen_values = true
    )]
    rho: f64,
    /// Fraction of the rows for the unlabelled pool of Phase 2 (the rest trains Phase 1).
    #[arg(long, value_name = "F", default_value_t = 0.25)]
    pool_fraction: f64,
    /// Phase-1 model.
    #[arg(long, value_enum, default_value_t = Phase1Arg::DpSgd)]
    phase1: Phase1Arg,
    /// Phase-1 L2 strength Λ per sample (output perturbation and auto; noise ∝ 1/(nΛ)).
    #[arg(long, value_name = "L", default_value_t = 1e-2)]
    l2: f64,
    /// Iterations T of Algorithm 1 (the paper: 100 synthetic/Adult, 1000 Credit/Parkinson's).
    #[arg(long, value_name = "T", default_value_t = 100)]
    iterations: usize,
    /// Batch size b (strict mode: expected Poisson batch, q = b/N).
    #[arg(long, value_name = "B", default_value_t = 128)]
    batch: usize,
    /// Smoothing β of the log-sum-exp (the paper: 1e-5).
    #[arg(long, value_name = "BETA", default_value_t = 1e-5)]
    beta: f64,
    /// Box bound C_λ of the multipliers.
    #[arg(long, value_name = "C", default_value_t = 1.0)]
    c_lambda: f64,
    /// Noise σ_π on the released group frequency.
    #[arg(long, value_name = "S", default_value_t = 0.05)]
    sigma_pi: f64,
    /// Release the last iterate λ^T (the paper) instead of the average of the iterates (the
    /// default; free post-processing that removes much of the accumulated noise).
    #[arg(long)]
    last_iterate: bool,
    /// Break argmax ties by the lowest class index instead of U(0, 1e-5) jitter.
    #[arg(long)]
    no_jitter: bool,
}

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> Dp2dpParams {
        Dp2dpParams::from_config(Config {
            rho: self.rho,
            epsilon: self.privacy.epsilon,
            delta: self.privacy.delta.unwrap_or(1e-5),
            accounting: self.privacy.accounting(),
            pool_fraction: self.pool_fraction,
            phase1: match self.phase1 {
                Phase1Arg::OutputPerturbation => Phase1::OutputPerturbation {
                    l2: self.l2,
                    feature_bound: 1.0,
                },
                Phase1Arg::Auto => Phase1::Auto {
                    l2: self.l2,
                    feature_bound: 1.0,
                },
                Phase1Arg::DpSgd => Phase1::dp_sgd_default(),
            },
            beta: self.beta,
            iterations: self.iterations,
            batch: self.batch,
            c_lambda: self.c_lambda,
            sigma_pi: self.sigma_pi,
            iterate: if self.last_iterate {
                Iterate::Last
            } else {
                Iterate::Average
            },
            ties: if self.no_jitter {
                TieBreak::LowestIndex
            } else {
                TieBreak::default()
            },
            ..Config::default()
        })
    }
}

pub fn run(args: Args) -> CliResult {
    args.out.check(&[args.data.input()])?;
    super::check_passes("--iterations", args.iterations)?;
    let est = args.params().check()?;
    if !args.privacy.epsilon.is_finite() {
        return Err(CliError::BadInput(
            "--epsilon must be finite (the non-private reference is `dpfair reproduce dp2dp`)"
                .into(),
        ));
    }
    if args.data.sensitive.is_none() {
        return Err(CliError::BadInput(
            "--sensitive is required: DP2DP constrains the disparity between two groups".into(),
        ));
    }
    if args.bounds.coarse_bounds.is_some() {
        return Err(CliError::BadInput(
            "--coarse-bounds: DP2DP needs public --bounds (its phases split the rows; a \
             private bounds release would need its own share)"
                .into(),
        ));
    }
    let common = Common {
        data: &args.data,
        bounds: &args.bounds,
        privacy: &args.privacy,
        out: &args.out,
    };
    let unscaled = (args.phase1 != Phase1Arg::DpSgd).then_some(UNSCALED);
    let run = pipeline::fit(common, Some(TaskKind::Multiclass), &est, unscaled, |_| {
        Ok(())
    })?;
    run.save(&args.out)?;
    Ok(())
}

const UNSCALED: &str = "note: no --bounds: Phase 1 scales each row [x; 1] to ℓ2 norm ≤ 1 (R = 1), \
     so features on very different scales lose resolution; give public --bounds";
