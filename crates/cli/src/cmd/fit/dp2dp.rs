//! `dpfair fit dp2dp`: DP2DP, private demographic-parity post-processing of a private multi-class
//! probability model (Say, Denis, Pinot; seed 004, Algorithm 1).
//!
//! The rows are split at random (independently of the data) into a labelled part (Phase 1: a
//! private multinomial logistic regression, DP-SGD by default, `--phase1 output-perturbation` for
//! the paper's choice) and an unlabelled pool
//! (`--pool-fraction`, Phase 2: private group frequencies, then noisy projected SGD on the 2K
//! Lagrange multipliers). The phases see disjoint rows, so each gets the whole (ε, δ) (parallel
//! composition). `--accounting paper` runs the published procedure and prints what it really
//! costs.

use crate::cmd::common::{BoundsArgs, DataArgs, OutArgs, PrivacyArgs};
use crate::error::{CliError, CliResult};
use dpfair::dp2dp::{Config, Error as MethodError, Iterate, Phase1, TieBreak, fit};
use dpfair::model::{Accounting, FittedModel};
use dpfair_data::TaskKind;
use dpfair_privacy::{Budget, Ledger};

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

fn method_error(e: MethodError) -> CliError {
    match e {
        MethodError::Invalid { name, reason } => {
            CliError::BadInput(format!("--{}: {reason}", name.replace('_', "-")))
        }
        MethodError::Data(reason) => CliError::BadInput(reason),
        MethodError::Phase1(reason) => CliError::BadInput(format!("phase 1: {reason}")),
        MethodError::Privacy(p) => p.into(),
    }
}

pub fn run(args: Args) -> CliResult {
    args.out.check(&[args.data.input()])?;
    super::check_passes("--iterations", args.iterations)?;
    let accounting: Accounting = args.privacy.accounting();
    let delta = args.privacy.delta.unwrap_or(1e-5);
    let config = Config {
        rho: args.rho,
        epsilon: args.privacy.epsilon,
        delta,
        accounting,
        pool_fraction: args.pool_fraction,
        phase1: match args.phase1 {
            Phase1Arg::OutputPerturbation => Phase1::OutputPerturbation {
                l2: args.l2,
                feature_bound: 1.0,
            },
            Phase1Arg::Auto => Phase1::Auto {
                l2: args.l2,
                feature_bound: 1.0,
            },
            Phase1Arg::DpSgd => Phase1::dp_sgd_default(),
        },
        beta: args.beta,
        iterations: args.iterations,
        batch: args.batch,
        c_lambda: args.c_lambda,
        sigma_pi: args.sigma_pi,
        iterate: if args.last_iterate {
            Iterate::Last
        } else {
            Iterate::Average
        },
        ties: if args.no_jitter {
            TieBreak::LowestIndex
        } else {
            TieBreak::default()
        },
        ..Config::default()
    };
    // Parameters first: bad input is reported before the file is read.
    config.validate().map_err(method_error)?;
    if !config.is_private() {
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
    let mut loaded = args.data.load(Some(TaskKind::Multiclass))?;
    let mut ledger = match accounting {
        Accounting::Strict => args.privacy.ledger(delta)?,
        // The paper's procedure spends more than (ε, δ): record it without refusing.
        Accounting::Paper => Ledger::new(Budget::approx(f64::INFINITY, delta)?),
    };
    let mut noise = args.privacy.noise();
    if args.bounds.given() {
        let spent = args
            .bounds
            .scale_to_unit(&mut loaded, &mut ledger, &mut noise)?;
        if spent > 0.0 {
            return Err(CliError::BadInput(
                "--coarse-bounds: DP2DP needs public --bounds (its phases split the rows; a \
                 private bounds release would need its own share)"
                    .into(),
            ));
        }
    } else if args.phase1 != Phase1Arg::DpSgd {
        eprintln!(
            "note: no --bounds: Phase 1 scales each row [x; 1] to ℓ2 norm ≤ 1 (R = 1), so \
             features on very different scales lose resolution; give public --bounds"
        );
    }
    let model = fit(&config, &loaded.dataset, &mut ledger, &mut noise).map_err(method_error)?;
    let r = &model.phase2.report;
    if let Some(p) = &model.phase1_procedure {
        eprintln!("dp2dp: phase 1 = {p:?}");
    }
    eprintln!(
        "dp2dp: K = {}, ρ = {}, {} training rows, pool N = {}; π̄ = ({:.4}, {:.4}); σ_SGD = {:.4} \
         (z = {:.4}, q = {:.4}, T = {}); λ̄ at C_λ: {:.0}%",
        model.classes,
        model.rho,
        model.n_train,
        r.n_pool,
        model.phase2.pi[0],
        model.phase2.pi[1],
        r.sigma_sgd,
        r.noise_multiplier,
        r.sampling_rate,
        r.steps,
        100.0 * r.at_bound
    );
    if r.at_bound > 0.0 {
        eprintln!("warning: some multipliers hit the box bound C_λ; consider --c-lambda 2");
    }
    if let Some(claimed) = r.claimed_epsilon {
        let real = ledger.total_at(delta)?;
        eprintln!(
            "--accounting paper: the paper claims ε = {claimed} per phase; the ledger's real \
             cost is ε = {:.4} at δ = {delta} ({})",
            real.epsilon, real.rule
        );
    }
    args.out.save(
        &loaded,
        ledger,
        Some(&noise),
        &config,
        FittedModel::Dp2dp(model),
    )?;
    Ok(())
}
