//! The flags of `dpfair fit fdp-fair`: clap declarations only (`cmd::fit::fdp_fair` turns them into
//! the library's params).

use crate::cmd::common::{BoundsArgs, CheckArgs, DataArgs, OutArgs, PrivacyArgs};
use crate::cmd::federated::args::{BasisArgs, SearchArgs, ServerArgs};

#[derive(clap::Args)]
#[command(
    mut_arg("sensitive", crate::cmd::common::require_sensitive),
    after_help = "Example: dpfair fit fdp-fair --data train.csv --target y --sensitive a \
    --bounds x1:0:1,x2:0:1 --sites 4 --epsilon 1 --alpha 0.1 --out MODEL.json\n\n\
    --epsilon and --delta are each site's (ε_s, δ_s) [default δ_s = (N_s/2)^−2]. \
    See `dpfair federated --help` for the real protocol between sites."
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
    /// Number of sites S the rows are split into (contiguous blocks in file order).
    #[arg(long, value_name = "S", default_value_t = dpfair::estimators::DEFAULT_SITES)]
    pub sites: usize,
    #[command(flatten)]
    pub basis: BasisArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub search: SearchArgs,
    /// --accounting paper only: empirical group proportions ("known π", not private).
    #[arg(long)]
    pub empirical_pi: bool,
    /// The rate the groups must share, at level --alpha: demographic-parity (positive rates),
    /// equal-opportunity (true-positive rates) or equalized-odds (true- and false-positive
    /// rates). Demographic parity on two groups runs Algorithm 1; another constraint or more
    /// than two groups fits the group-thresholds classifier over the same sites in its place
    /// (each site's DP-SGD scorer averaged, each site's table summed; its model's method is
    /// group-thresholds; docs/fairness-constraints.md).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "demographic-parity",
        value_parser = super::parse_constraint
    )]
    pub constraint: dpfair::group_thresholds::Constraint,
}
