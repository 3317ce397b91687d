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
    /// --constraint and --sensitive-ldp: another constraint, more than two groups or a
    /// randomised attribute fit the group-thresholds classifier over the same sites in
    /// Algorithm 1's place (each site's DP-SGD score averaged, each site's table summed).
    #[command(flatten)]
    pub constraint: super::FallbackConstraint,
}
