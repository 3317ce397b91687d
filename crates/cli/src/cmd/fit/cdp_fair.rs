//! `dpfair fit cdp-fair`: CDP-Fair, the central-DP fair plug-in classifier under demographic
//! disparity (Xue & Yu, Algorithm 5).
//!
//! Features are scaled to [0, 1] with `--bounds` (public, free) or `--coarse-bounds` (private,
//! `--bounds-share` of ε); `η̃_a` is the paper's kernel estimator (bandwidth by a public rule from
//! the training size, the dimension and ε), the output-perturbed logistic plug-in, or (`--eta-model
//! auto` under strict accounting) DP-SGD on all rows. Half the rows estimate `η̃_a`, `π̃_a` (S1), the other half choose
//! the threshold `τ̃` (S2, by the exponential mechanism on a public grid of `--tau-grid`
//! points); the model satisfies |DD| ≤ α up to `O(N^{−1/2} + log(grid)/(Nε))`.
//! `--constraint` other than demographic parity, or more than two groups, fits the
//! group-thresholds classifier in Algorithm 5's place (docs/fairness-constraints.md).
//! `--accounting paper` runs the authors' procedure (cross-fitting, bandwidth CV, "known" π,
//! their σ formulas, a Gaussian shift of the DD curve) and prints what it really costs.

pub use super::flags::cdp_fair::Args;
use super::pipeline::{self, common_of};
use crate::error::{CliError, CliResult};
use dpfair::Params;
use dpfair::cdp_fair::{Accounting, DdFloor};
use dpfair::estimators::{CdpFair, CdpFairParams};
use dpfair_data::TaskKind;

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> CdpFairParams {
        let mut p = CdpFair::params()
            .alpha(self.alpha)
            .constraint(self.constraint.constraint)
            .epsilon(self.privacy.epsilon)
            .accounting(self.privacy.accounting())
            .frequencies(self.frequencies)
            .tau_grid(self.tau_grid)
            .eta_model(self.eta.eta_model.into())
            .dd_floor(match self.min_group {
                Some(min_group) => DdFloor::Public { min_group },
                None => DdFloor::default(),
            });
        if let Some(d) = self.privacy.delta {
            p = p.delta(d);
        }
        if let Some(h) = self.bandwidth {
            p = p.bandwidth(h);
        }
        if let Some(c) = self.cross_fit {
            p = p.cross_fit(c);
        }
        if let Some(e) = self.constraint.ldp.sensitive_ldp {
            p = p.attribute_epsilon(e);
        }
        p
    }
}

/// The checked estimator these flags describe (every check that needs no data).
pub fn estimator(args: &Args) -> CliResult<CdpFair> {
    let est = args
        .params()
        .check_fraction(args.check.check_fraction)
        .check()?;
    if args.data.sensitive.is_none() {
        return Err(CliError::BadInput(
            "--sensitive is required: CDP-Fair constrains the disparity between its groups".into(),
        ));
    }
    if args.privacy.accounting() == Accounting::Paper && args.bounds.coarse_bounds.is_some() {
        return Err(CliError::BadInput(
            "--coarse-bounds with --accounting paper: give public --bounds (the paper scales nothing)"
                .into(),
        ));
    }
    Ok(est)
}

pub fn run(args: Args) -> CliResult {
    let est = estimator(&args)?;
    let common = common_of!(args);
    pipeline::fit(common, Some(TaskKind::Binary), &est, Some(UNSCALED), |_| {
        Ok(())
    })?
    .save(&args.out)?;
    Ok(())
}

const UNSCALED: &str = "warning: no --bounds: features are used unscaled (still private); the \
     bandwidth rule assumes features on [0, 1], so give public --bounds or --coarse-bounds";
