//! `dpfair-fairness`: fairness and accuracy metrics ([`metrics`], names after Fairlearn's), a
//! group-wise report like Fairlearn's `MetricFrame` ([`GroupReport`]), and its private
//! counterpart ([`PrivateGroupReport`]), with the private scores of multi-class and real
//! predictions ([`private_scores`]).
//!
//! [`metrics`] and [`GroupReport`] read data and return exact numbers: **they are not private**.
//! Use them on the data owner's own screen, or inside a method only on quantities already
//! released through the privacy crate. A figure to publish comes from [`PrivateGroupReport`],
//! which asks the privacy crate's noisy histogram for its one charged release of the
//! [`GroupConfusion`] counts and derives everything else from it, with intervals
//! ([`interval`]; docs/evaluation.md). This crate draws no noise itself.

pub mod confusion;
pub mod error;
pub mod interval;
pub mod metrics;
pub mod private_report;
pub mod private_scores;
pub mod report;

pub use confusion::GroupConfusion;
pub use error::{FairnessError, Result};
pub use metrics::*;
pub use private_report::{
    DEFAULT_LEVEL, Disparities, Figure, PrivateGroupReport, PrivateRow, Rate, Rates,
};
pub use report::{GroupReport, GroupRow};
