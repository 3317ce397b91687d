//! The flags of `dpfair fit decoupled`: clap declarations only (`cmd::fit::decoupled` turns them into
//! the library's params).

use crate::cmd::common::{AccountantArg, BoundsArgs, CheckArgs, DataArgs, OutArgs, PrivacyArgs};

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
    mut_arg("sensitive", crate::cmd::common::require_sensitive),
    after_help = "Example (public feature bounds: no privacy spent on them):\n  dpfair fit decoupled --data train.csv --target income --sensitive sex \\\n    --bounds age:17:90,hours:1:99 --epsilon 3 --delta 1e-5 --seed 7 --out model.json\n  dpfair predict --model model.json --data test.csv --out pred.csv\n  dpfair ledger model.json\n\n--accounting paper runs the paper's procedure and its ledger shows what it really spends."
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
    /// Disparity level α ≥ 0: the flips bring the groups' released positive rates within α of
    /// each other (|DD| ≤ α on them); 0 is the paper's exact parity, which flips about half of
    /// one group's decisions when the base rates differ much. With --constraint or more groups:
    /// the largest minus the smallest constrained rate.
    #[arg(long, value_name = "A", default_value_t = dpfair::estimators::DEFAULT_PARITY_LEVEL)]
    pub alpha: f64,
    /// How the decisions move when the released rates are more than α apart: `scores` (the
    /// default) moves the group with fewer rows (by the released counts) to within α by a
    /// threshold on the base model's scores, its least confident decisions first (the count
    /// table is released by score bin: docs/deviations.md#decoupled-score-ordered-flips);
    /// `fewest-changes` moves the same group by random flips; `midpoint` moves both to their
    /// midpoint (the paper's Algorithm 1), which changes the same fraction of each group's
    /// decisions (docs/deviations.md#decoupled-fewest-changes). Paper accounting releases rates
    /// only: `scores` is then `fewest-changes`.
    #[arg(long, value_enum, default_value_t = FlipsArg::Scores)]
    pub flips: FlipsArg,
    /// Accountant of the DP-SGD run.
    #[arg(long, value_enum, default_value_t = AccountantArg::Prv)]
    pub accountant: AccountantArg,
    /// Base classifiers.
    #[arg(long, value_enum, default_value_t = BaseArg::Joint)]
    pub base: BaseArg,
    /// Paper: ε₀ = ε₁ of each group's rate (the paper: 0.05 Adult, 0.1 Credit Card).
    #[arg(long, value_name = "E", default_value_t = 0.05)]
    pub rate_epsilon: f64,
    /// Fraction of the rows held out for the rates, in (0, 1).
    #[arg(long, value_name = "F", default_value_t = dpfair::decoupled::config::DEFAULT_POST_FRACTION)]
    pub post_fraction: f64,
    /// The most rows that train the DP-SGD base model; the rows beyond go to the rate release.
    /// The training rows are the only part of the data held in memory at once when a Parquet
    /// or Arrow IPC file is streamed.
    #[arg(long, value_name = "M", default_value_t = dpfair::decoupled::config::DEFAULT_BASE_ROWS)]
    pub base_rows: usize,
    /// DP-SGD epochs [default: strict ≈ 1,500 steps; paper 50].
    #[arg(long, value_name = "N")]
    pub epochs: Option<usize>,
    /// DP-SGD expected batch size [default: strict rows/16 in [32, 1024]; paper 1024].
    #[arg(long, value_name = "B")]
    pub batch: Option<usize>,
    /// DP-SGD learning rate [default: strict 0.05; paper 0.01].
    #[arg(long, value_name = "LR")]
    pub learning_rate: Option<f64>,
    /// DP-SGD per-example clipping norm.
    #[arg(long, value_name = "C", default_value_t = 1.5)]
    pub clip: f64,
    /// A fixed DP-SGD noise multiplier (the paper's σ/C, e.g. 2.0867 for Adult at ε' = 3 with
    /// PRV) instead of calibrating one; the ledger records what it really costs.
    #[arg(long, value_name = "Z")]
    pub noise_multiplier: Option<f64>,
    #[command(flatten)]
    pub constraint: super::FallbackConstraint,
}

/// `--flips`: [`dpfair::decoupled::FlipRule`].
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum FlipsArg {
    Scores,
    FewestChanges,
    Midpoint,
}

impl From<FlipsArg> for dpfair::decoupled::FlipRule {
    fn from(a: FlipsArg) -> Self {
        match a {
            FlipsArg::Scores => dpfair::decoupled::FlipRule::Scores,
            FlipsArg::FewestChanges => dpfair::decoupled::FlipRule::FewestChanges,
            FlipsArg::Midpoint => dpfair::decoupled::FlipRule::Midpoint,
        }
    }
}
