//! `dpfair fit METHOD`: one module per method.

use crate::error::CliResult;
use clap::Subcommand;

pub mod cdp_fair;
pub mod decoupled;
pub mod dp2dp;
pub mod dp_linear;
pub mod dp_logistic;
pub mod fair_regression;
pub mod fdp_fair;
pub mod flags;
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

/// The methods `dpfair fit` runs (also parsed by `dpfair tune`).
#[derive(Subcommand)]
pub(crate) enum Method {
    /// Differentially private logistic regression (DP-SGD or output perturbation): privacy only.
    DpLogistic(dp_logistic::Args),
    /// Differentially private linear (ridge) regression by noisy sufficient statistics.
    DpLinear(dp_linear::Args),
    /// Decoupled private fair binary classifier (Ghoukasian & Asoodeh).
    Decoupled(decoupled::Args),
    /// CDP-Fair: central DP plug-in classifier under demographic disparity (Xue & Yu).
    CdpFair(cdp_fair::Args),
    /// FDP-Fair simulated over S sites of one CSV (Xue & Yu).
    FdpFair(fdp_fair::Args),
    /// Private Wasserstein-barycenter post-processing for fair regression (Xian et al.), of a
    /// score column or of a private base regressor (`--base dp-linear`).
    FairRegression(fair_regression::Args),
    /// LPCT: locally private classification tree with public data (Ma & Yang).
    Lpct(lpct::Args),
    /// LPCT-prune: LPCT with data-driven pruning (Ma & Yang).
    LpctPrune(lpct_prune::Args),
    /// DP2DP: private demographic-parity post-processing, multi-class (Say et al.).
    Dp2dp(dp2dp::Args),
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
    }
}
