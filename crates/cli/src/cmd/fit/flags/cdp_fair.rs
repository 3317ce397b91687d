//! The flags of `dpfair fit cdp-fair`: clap declarations only (`cmd::fit::cdp_fair` turns them into
//! the library's params).

use crate::cmd::common::{BoundsArgs, CheckArgs, DataArgs, OutArgs, PrivacyArgs};
use dpfair::cdp_fair::{DEFAULT_FREQUENCIES, DEFAULT_TAU_GRID};

#[derive(clap::Args)]
#[command(
    mut_arg("sensitive", crate::cmd::common::require_sensitive),
    after_help = "Example: dpfair fit cdp-fair --data adult.csv --target Label --sensitive Sensitive \
    --bounds Age:17:90,Workclass:0:8,Education-Num:1:16 --alpha 0.05 --epsilon 1 --out cdp.json\n\n\
    Strict (default): S1 gets (ε, δ) on the training half, the private choice of τ̃ pure ε on the \
    calibration half (parallel composition); δ defaults to (N/2)^−2."
)]
pub struct Args {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub bounds: BoundsArgs,
    #[command(flatten)]
    pub privacy: PrivacyArgs,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub check: CheckArgs,
    /// Disparity level α ≥ 0: the classifier keeps |P(Ŷ=1 | A=1) − P(Ŷ=1 | A=0)| ≤ α (with
    /// --constraint or more groups: the largest minus the smallest constrained rate).
    #[arg(
        long,
        value_name = "A",
        default_value_t = 0.1,
        allow_hyphen_values = true
    )]
    pub alpha: f64,
    /// Kernel bandwidth h on the [0, 1]-scaled features [default: the public rule
    /// max(n^{−1/(2+d)}, (nε)^{−1/(1+d)}), clamped to [0.05, 0.5]].
    #[arg(long, value_name = "H")]
    pub bandwidth: Option<f64>,
    /// Random Fourier frequencies D of the public basis the estimators are released in.
    #[arg(long, value_name = "D", default_value_t = DEFAULT_FREQUENCIES)]
    pub frequencies: usize,
    /// Cross-fitting: two folds with the halves swapped, predictions averaged (strict: ε/2 per
    /// fold) [default: false (strict), true (paper)].
    #[arg(long, value_name = "BOOL")]
    pub cross_fit: Option<bool>,
    /// A public lower bound on both groups' calibration sizes, for the DD curve's sensitivity
    /// 2/N in the private choice of τ̃ [default: derived from the released π̃].
    #[arg(long, value_name = "N")]
    pub min_group: Option<usize>,
    /// Candidate thresholds (odd, ≥ 3) of the private choice of τ̃, spread over
    /// [−max π̃, max π̃] (strict only; the paper sweeps the calibration scores).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TAU_GRID)]
    pub tau_grid: usize,
    #[command(flatten)]
    pub eta: crate::cmd::federated::args::EtaModelArgs,
    #[command(flatten)]
    pub constraint: super::FallbackConstraint,
}
