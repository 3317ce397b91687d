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

use dpfair::group_thresholds::Constraint;

/// `--constraint` (every method that takes one): the library's parser, whose error names
/// `constraint` and lists the names.
pub(crate) fn parse_constraint(name: &str) -> Result<Constraint, String> {
    Constraint::parse(name).map_err(|e| e.to_string())
}

/// `--constraint` of CDP-Fair and the decoupled classifier, whose own algorithms are for
/// demographic parity between two groups.
#[derive(clap::Args)]
pub struct FallbackConstraint {
    /// The rate the groups must share, at level --alpha: demographic-parity (positive rates),
    /// equal-opportunity (true-positive rates) or equalized-odds (true- and false-positive
    /// rates). Demographic parity runs the paper's algorithm on two groups; another constraint
    /// or more than two groups fits the group-thresholds classifier in its place (its model's
    /// method is group-thresholds; docs/fairness-constraints.md).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "demographic-parity",
        value_parser = parse_constraint
    )]
    pub constraint: Constraint,
}
