//! `dpfair fit cdp-fair`: CDP-Fair, the central-DP fair plug-in classifier under demographic
//! disparity (Xue & Yu, Algorithm 5).
//!
//! Features are scaled to [0, 1] with `--bounds` (public, free) or `--coarse-bounds` (private,
//! `--bounds-share` of ε); the kernel bandwidth is then chosen by a public rule from the training
//! size, the dimension and ε. Half the rows estimate `η̃_a`, `π̃_a` (S1), the other half choose
//! the threshold `τ̃` (S2, by the exponential mechanism on a public grid of `--tau-grid`
//! points); the model satisfies |DD| ≤ α up to `O(N^{−1/2} + log(grid)/(Nε))`.
//! `--accounting paper` runs the authors' procedure (cross-fitting, bandwidth CV, "known" π,
//! their σ formulas, a Gaussian shift of the DD curve) and prints what it really costs.

use super::pipeline::{self, Common};
use crate::cmd::common::{BoundsArgs, DataArgs, OutArgs, PrivacyArgs};
use crate::error::{CliError, CliResult};
use dpfair::Params;
use dpfair::cdp_fair::{Accounting, DEFAULT_FREQUENCIES, DEFAULT_TAU_GRID, DdFloor};
use dpfair::estimators::{CdpFair, CdpFairParams};
use dpfair_data::TaskKind;

#[derive(clap::Args)]
#[command(
    after_help = "Example: dpfair fit cdp-fair --data adult.csv --target Label --sensitive Sensitive \
    --bounds Age:17:90,Workclass:0:8,Education-Num:1:16 --alpha 0.05 --epsilon 1 --out cdp.json\n\n\
    Strict (default): S1 gets (ε, δ) on the training half, the private choice of τ̃ pure ε on the \
    calibration half (parallel composition); δ defaults to (N/2)^−2."
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
    /// Disparity level α ≥ 0: the classifier keeps |P(Ŷ=1 | A=1) − P(Ŷ=1 | A=0)| ≤ α.
    #[arg(
        long,
        value_name = "A",
        default_value_t = 0.1,
        allow_hyphen_values = true
    )]
    alpha: f64,
    /// Kernel bandwidth h on the [0, 1]-scaled features [default: the public rule
    /// max(n^{−1/(2+d)}, (nε)^{−1/(1+d)}), clamped to [0.05, 0.5]].
    #[arg(long, value_name = "H")]
    bandwidth: Option<f64>,
    /// Random Fourier frequencies D of the public basis the estimators are released in.
    #[arg(long, value_name = "D", default_value_t = DEFAULT_FREQUENCIES)]
    frequencies: usize,
    /// Cross-fitting: two folds with the halves swapped, predictions averaged (strict: ε/2 per
    /// fold) [default: false (strict), true (paper)].
    #[arg(long, value_name = "BOOL")]
    cross_fit: Option<bool>,
    /// A public lower bound on both groups' calibration sizes, for the DD curve's sensitivity
    /// 2/N in the private choice of τ̃ [default: derived from the released π̃].
    #[arg(long, value_name = "N")]
    min_group: Option<usize>,
    /// Candidate thresholds (odd, ≥ 3) of the private choice of τ̃, spread over
    /// [−max π̃, max π̃] (strict only; the paper sweeps the calibration scores).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TAU_GRID)]
    tau_grid: usize,
}

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> CdpFairParams {
        let mut p = CdpFair::params()
            .alpha(self.alpha)
            .epsilon(self.privacy.epsilon)
            .accounting(self.privacy.accounting())
            .frequencies(self.frequencies)
            .tau_grid(self.tau_grid)
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
        p
    }
}

pub fn run(args: Args) -> CliResult {
    let est = args.params().check()?;
    if args.data.sensitive.is_none() {
        return Err(CliError::BadInput(
            "--sensitive is required: CDP-Fair constrains the disparity between two groups".into(),
        ));
    }
    let accounting = args.privacy.accounting();
    if accounting == Accounting::Paper && args.bounds.coarse_bounds.is_some() {
        return Err(CliError::BadInput(
            "--coarse-bounds with --accounting paper: give public --bounds (the paper scales nothing)"
                .into(),
        ));
    }
    let common = Common {
        data: &args.data,
        bounds: &args.bounds,
        privacy: &args.privacy,
        out: &args.out,
    };
    pipeline::fit(common, Some(TaskKind::Binary), &est, Some(UNSCALED), |_| {
        Ok(())
    })?
    .save(&args.out)?;
    Ok(())
}

const UNSCALED: &str = "warning: no --bounds: features are used unscaled (still private); the \
     bandwidth rule assumes features on [0, 1], so give public --bounds or --coarse-bounds";
