//! The flags of `dpfair fit dp-linear`: clap declarations only (`cmd::fit::dp_linear` turns them
//! into the library's params).

use crate::cmd::common::{BoundsArgs, CheckArgs, DataArgs, OutArgs, PrivacyArgs};

#[derive(clap::Args)]
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
    #[command(flatten)]
    pub regression: RegressionArgs,
}

/// The regressor's own flags (`fit fair-regression --base dp-linear` has its own: the target
/// range is its `--range`).
#[derive(clap::Args, Clone, Debug)]
pub struct RegressionArgs {
    /// The public range `LO,HI` of the target: values are clipped to it (free). Predictions lie
    /// in it.
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub target_range: Option<String>,
    /// A coarse public range `LO,HI` within which the target's range is estimated privately
    /// (1% and 99% quantiles on a 1,000-point grid: keep it within a few hundred times the
    /// target's spread), with --target-share of ε.
    #[arg(
        long,
        value_name = "LO,HI",
        allow_hyphen_values = true,
        conflicts_with = "target_range"
    )]
    pub coarse_target_range: Option<String>,
    /// Share of ε spent on a private target range (only with --coarse-target-range).
    #[arg(long, value_name = "F", default_value_t = dpfair::estimators::DEFAULT_TARGET_SHARE)]
    pub target_share: f64,
    /// Rows are scaled down to ℓ2 norm at most R [default: √(source columns), one per numeric
    /// column and one per one-hot group: no clipping for features on [0, 1]].
    #[arg(long, value_name = "R")]
    pub row_bound: Option<f64>,
    /// Ridge λ added to the released XᵀX [default: σ(2√p + 2√ln 1000), which keeps it positive
    /// definite with probability 0.999; docs/privacy.md].
    #[arg(long, value_name = "L")]
    pub ridge: Option<f64>,
}
