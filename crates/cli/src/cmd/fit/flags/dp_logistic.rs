//! The flags of `dpfair fit dp-logistic`: clap declarations only (`cmd::fit::dp_logistic` turns them into
//! the library's params).

use crate::cmd::common::{AccountantArg, BoundsArgs, CheckArgs, DataArgs, OutArgs, PrivacyArgs};
use serde::Serialize;

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
    pub data: DataArgs,
    #[command(flatten)]
    pub bounds: BoundsArgs,
    #[command(flatten)]
    pub privacy: PrivacyArgs,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub check: CheckArgs,
    /// The mechanism.
    #[arg(long, value_enum, default_value_t = Method::DpSgd)]
    pub method: Method,
    /// DP-SGD: epochs.
    #[arg(long, default_value_t = 30)]
    pub epochs: usize,
    /// DP-SGD: expected batch size [default: n/16 clamped to 16..=1024, so about 16 steps per
    /// epoch].
    #[arg(long, value_name = "B")]
    pub batch: Option<usize>,
    /// DP-SGD: learning rate (plain SGD on the mean clipped gradient).
    #[arg(long, default_value_t = 0.5)]
    pub learning_rate: f64,
    /// DP-SGD: per-example clipping norm C.
    #[arg(long, default_value_t = 1.0)]
    pub clip: f64,
    /// DP-SGD: the accountant calibrating the noise multiplier.
    #[arg(long, value_enum, default_value_t = AccountantArg::Rdp)]
    pub accountant: AccountantArg,
    /// DP-SGD: certify add/remove-one neighbours (as Opacus; half the noise of the default
    /// replace-one at the same ε). The row count is then private: the schedule (batch, sampling
    /// rate, steps) comes from --public-rows, or else from a noisy count released with 2% of ε.
    /// The ledger then certifies add/remove-one neighbours only.
    #[arg(long, conflicts_with = "substitution")]
    pub add_remove: bool,
    /// DP-SGD: certify replace-one neighbours (the default; kept for older scripts).
    #[arg(long, hide = true)]
    pub substitution: bool,
    /// With --add-remove: a row count declared public (e.g. a register's size), from which the
    /// schedule is computed instead of a released count. The guarantee holds whatever the real
    /// count; accuracy suffers if it is far off.
    #[arg(long, value_name = "N", requires = "add_remove")]
    pub public_rows: Option<usize>,
    /// Output perturbation: L2 strength Λ per sample (the intercept is penalised too).
    #[arg(long, default_value_t = 1e-2)]
    pub l2: f64,
    /// Output perturbation: rows [x; 1] are scaled down to ℓ2 norm at most R.
    #[arg(long, value_name = "R", default_value_t = 1.0)]
    pub feature_bound: f64,
}
