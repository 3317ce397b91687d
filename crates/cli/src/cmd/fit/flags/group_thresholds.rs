//! The flags of `dpfair fit group-thresholds`: clap declarations only
//! (`cmd::fit::group_thresholds` turns them into the library's params).

use super::parse_constraint;
use crate::cmd::common::{BoundsArgs, CheckArgs, DataArgs, OutArgs, PrivacyArgs};
use dpfair::group_thresholds::{Config, Constraint, DEFAULT_BINS, DEFAULT_TABLE_SHARE};

#[derive(clap::Args)]
#[command(
    mut_arg("sensitive", crate::cmd::common::require_sensitive),
    after_help = "A private fair binary classifier for two or more groups: DP-SGD learns a score \
    η̃(x, a) with the group as K − 1 dummy features, then each group gets its own randomised \
    threshold on that score, chosen from one noisy group × label × score-bin count table so that \
    the constraint holds. --constraint picks the rate the groups share, with Fairlearn's \
    difference semantics (the largest minus the smallest rate across the K groups ≤ --level, \
    default 0.1): demographic-parity (positive rates), equal-opportunity (true-positive rates) \
    or equalized-odds (true- and false-positive rates).\n\n\
    Cost (replace-one neighbours; δ defaults to (N/2)^−2): of the ε the held-out check's \
    fallback leaves, DP-SGD spends (1 − table-share) with all of δ and the Laplace table \
    table-share (default a quarter), on the same rows (basic composition: the ledger's total is \
    (ε, δ)); the check itself runs on its own rows, in parallel.\n\n\
    Example (three groups, equalized odds within 0.05):\n  dpfair fit group-thresholds --data \
    train.csv --target income --sensitive race \\\n    --bounds age:17:90,hours:1:99 \
    --constraint equalized-odds --level 0.05 \\\n    --epsilon 2 --out model.json\n  dpfair predict \
    --model model.json --data test.csv --out pred.csv\n  dpfair ledger model.json"
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
    /// The rate the groups must share: demographic-parity (P(Ŷ=1 | A=a)), equal-opportunity
    /// (P(Ŷ=1 | Y=1, A=a)) or equalized-odds (both P(Ŷ=1 | Y=1, A=a) and P(Ŷ=1 | Y=0, A=a)).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "demographic-parity",
        value_parser = parse_constraint
    )]
    pub constraint: Constraint,
    #[command(flatten)]
    pub ldp: super::SensitiveLdp,
    /// The level α in [0, 1]: the largest minus the smallest constrained rate across the groups
    /// is at most α (Fairlearn's `*_difference`), on the released table.
    #[arg(
        long,
        value_name = "A",
        default_value_t = Config::default().level,
        allow_hyphen_values = true
    )]
    pub level: f64,
    /// The share of ε spent on the Laplace group × label × score-bin table, in (0, 1); DP-SGD
    /// gets the rest.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_TABLE_SHARE, allow_hyphen_values = true)]
    pub table_share: f64,
    /// Equal score bins of the table on [0, 1] (2 to 100): the thresholds' grid; more bins add
    /// noisy cells to every rate.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BINS)]
    pub bins: usize,
    /// DP-SGD epochs.
    #[arg(long, value_name = "N", default_value_t = Config::default().epochs)]
    pub epochs: usize,
    /// DP-SGD learning rate.
    #[arg(
        long,
        value_name = "LR",
        default_value_t = Config::default().learning_rate,
        allow_hyphen_values = true
    )]
    pub learning_rate: f64,
}
