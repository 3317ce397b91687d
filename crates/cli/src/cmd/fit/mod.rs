//! `dpfair fit METHOD`: one module per method.

use crate::error::CliResult;
use clap::Subcommand;
use dpfair::release_report::method_summary as summary;

pub mod cdp_fair;
pub mod decoupled;
pub mod dp2dp;
pub mod dp_linear;
pub mod dp_logistic;
pub mod fair_regression;
pub mod fdp_fair;
pub mod flags;
pub mod group_thresholds;
pub mod lpct;
pub mod lpct_prune;
pub mod pipeline;

/// The most training passes (`--epochs`, dp2dp's `--iterations`) a `fit` command accepts: a
/// resource bound checked before the data is read. The papers use at most 1,000; 10⁵ passes of
/// even a 1,000-row file is hours of DP-SGD, and 2³²+1 ran without end.
pub const MAX_PASSES: usize = 100_000;

/// Refuse a pass count above [`MAX_PASSES`] (exit 2, naming the option).
pub fn check_passes(option: &str, value: usize) -> crate::error::CliResult {
    if value > MAX_PASSES {
        return Err(crate::error::CliError::BadInput(format!(
            "{option} {value} exceeds the limit {MAX_PASSES} (a resource bound: each pass is a \
             full DP-SGD pass over the data)"
        )));
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    method: Method,
}

/// The methods `dpfair fit` runs (also parsed by `dpfair tune`). Each one's help summary is the
/// library's [`dpfair::release_report::method_summary`], which release reports show too.
#[derive(Subcommand)]
pub(crate) enum Method {
    #[command(about = summary("dp-logistic"), long_about = None)]
    DpLogistic(dp_logistic::Args),
    #[command(about = summary("dp-linear"), long_about = None)]
    DpLinear(dp_linear::Args),
    #[command(about = summary("decoupled"), long_about = None)]
    Decoupled(decoupled::Args),
    #[command(about = summary("cdp-fair"), long_about = None)]
    CdpFair(cdp_fair::Args),
    #[command(about = summary("fdp-fair"), long_about = None)]
    FdpFair(fdp_fair::Args),
    #[command(about = summary("fair-regression"), long_about = None)]
    FairRegression(fair_regression::Args),
    #[command(about = summary("lpct"), long_about = None)]
    Lpct(lpct::Args),
    #[command(about = summary("lpct-prune"), long_about = None)]
    LpctPrune(lpct_prune::Args),
    #[command(about = summary("dp2dp"), long_about = None)]
    Dp2dp(dp2dp::Args),
    #[command(about = summary("group-thresholds"), long_about = None)]
    GroupThresholds(group_thresholds::Args),
}

pub fn run(args: Args) -> CliResult {
    match args.method {
        Method::DpLogistic(a) => dp_logistic::run(a),
        Method::DpLinear(a) => dp_linear::run(a),
        Method::Decoupled(a) => decoupled::run(a),
        Method::CdpFair(a) => cdp_fair::run(a),
        Method::FdpFair(a) => fdp_fair::run(a),
        Method::FairRegression(a) => fair_regression::run(a),
        Method::Lpct(a) => lpct::run(a),
        Method::LpctPrune(a) => lpct_prune::run(a),
        Method::Dp2dp(a) => dp2dp::run(a),
        Method::GroupThresholds(a) => group_thresholds::run(a),
    }
}
