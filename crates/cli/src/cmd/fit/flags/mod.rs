//! The flags of each `dpfair fit METHOD` (clap declarations only; each method's adapter turns
//! them into the library's params), as ripgrep keeps its flag definitions apart.

pub mod cdp_fair;
pub mod decoupled;
pub mod dp2dp;
pub mod dp_linear;
pub mod dp_logistic;
pub mod fair_regression;
pub mod fdp_fair;
pub mod group_thresholds;
