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

pub use super::flags::dp2dp::{Args, Phase1Arg};
use super::pipeline::{self, common_of};
use crate::error::{CliError, CliResult};
use dpfair::Params;
use dpfair::dp2dp::{Config, Iterate, Phase1, StepScale, TieBreak};
use dpfair::estimators::Dp2dpParams;
use dpfair_data::TaskKind;

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> Dp2dpParams {
        Dp2dpParams::from_config(Config {
            rho: self.rho,
            margin_z: self.margin_z,
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
            step_scale: if self.unit_steps {
                StepScale::Unit
            } else {
                StepScale::SmallestGroup
            },
            iterate: if self.last_iterate {
                Iterate::Last
            } else if self.averaged_multipliers {
                Iterate::SecondHalf
            } else {
                Iterate::Mixture
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

/// The checked estimator these flags describe (every check that needs no data).
pub fn estimator(args: &Args) -> CliResult<dpfair::estimators::Dp2dp> {
    super::check_passes("--iterations", args.iterations)?;
    dpfair::estimators::check_dp2dp_l2(args.l2)?;
    let est = args
        .params()
        .check_fraction(args.check.check_fraction)
        .check()?;
    // `--epsilon inf` is the non-private reference, as for every method that has one (the
    // library's rule, which Python shares; the pipeline prints NOT private).
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
    Ok(est)
}

pub fn run(args: Args) -> CliResult {
    args.out.check(&[args.data.input()])?;
    let est = estimator(&args)?;
    let common = common_of!(args);
    let unscaled = (args.phase1 != Phase1Arg::DpSgd).then_some(UNSCALED);
    let run = pipeline::fit(common, Some(TaskKind::Multiclass), &est, unscaled, |_| {
        Ok(())
    })?;
    run.save(&args.out)?;
    Ok(())
}

const UNSCALED: &str = "note: no --bounds: Phase 1 scales each row [x; 1] to ℓ2 norm ≤ 1 (R = 1), \
     so features on very different scales lose resolution; give public --bounds";
