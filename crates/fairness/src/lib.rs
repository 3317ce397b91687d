//! `dpfair-fairness`: fairness and accuracy metrics ([`metrics`], names after Fairlearn's) and a
//! group-wise report like Fairlearn's `MetricFrame` ([`GroupReport`]).
//!
//! Everything here reads data and returns plain numbers: **nothing in this crate is private**.
//! Use it to evaluate on test data, or inside a method only on quantities already released through
//! the privacy crate.

pub mod error;
pub mod metrics;
pub mod report;

pub use error::{FairnessError, Result};
pub use metrics::*;
pub use report::{GroupReport, GroupRow};
