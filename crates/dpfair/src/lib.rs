//! `dpfair`: the five private and fair methods, one module per paper method, and the facade that
//! re-exports the layers below.
//!
//! | module | paper |
//! |---|---|
//! | [`cdp_fair`], [`fdp_fair`] | Xue & Yu, federated fairness-aware classification under DP (seed 000) |
//! | [`fair_regression`] | Xian, Li, Kamath, Zhao, DP post-processing for fair regression (seed 001) |
//! | [`lpct`] | Ma & Yang, locally private classification trees with public data (seed 002) |
//! | [`decoupled`] | Ghoukasian & Asoodeh, DP fair binary classifications (seed 003) |
//! | [`dp2dp`] | Say, Denis, Pinot, DP2DP (seed 004) |

pub mod cdp_fair;
pub mod decoupled;
pub mod dp2dp;
pub mod error;
pub mod estimator;
pub mod estimators;
pub mod fair_regression;
pub mod fdp_fair;
pub mod lpct;
pub mod model;
pub mod pipeline;
pub mod plugin;
pub mod session;

pub use error::{Error, Result};
pub use estimator::{Estimator, Fitted, Params};
pub use session::{Session, Spend};

pub use dpfair_data as data;
pub use dpfair_fairness as fairness;
pub use dpfair_learn as learn;
pub use dpfair_privacy as privacy;
