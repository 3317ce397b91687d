//! The registry: every paper `dpfair reproduce` knows, and through them every `dpfair demo`
//! method. To add a paper: put `yourpaper.rs` here, add its `mod` line and one entry to
//! [`all`] (see the crate docs, "How to add a paper").

pub mod baseline;
pub mod decoupled;
pub mod dp2dp;
pub mod fair_bayes;
pub mod fair_regression;
pub mod fdp_fair;
pub mod lpct;

use crate::Paper;
use crate::demo::DemoMethod;
use crate::error::{ExpError, Result};

/// Every registered paper, in the order `dpfair reproduce --list` prints them.
pub fn all() -> Vec<&'static dyn Paper> {
    vec![
        &baseline::Baseline,
        &fair_bayes::FairBayesCurve,
        &fair_regression::FairRegression,
        &lpct::LpctPaper,
        &decoupled::Decoupled,
        &dp2dp::Dp2dpPaper,
        &fdp_fair::FdpFairPaper,
        // one line per paper, e.g. `&decoupled::Decoupled,`
    ]
}

/// The paper named `name`.
pub fn find(name: &str) -> Result<&'static dyn Paper> {
    all()
        .into_iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| ExpError::UnknownExperiment {
            name: name.to_string(),
            known: all()
                .iter()
                .map(|p| p.name())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Every method of every paper that takes part in `dpfair demo`.
pub fn demo_methods() -> Vec<DemoMethod> {
    all().iter().flat_map(|p| p.demo()).collect()
}
