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
    #[command(flatten)]
    pub ldp: SensitiveLdp,
}

/// `--sensitive-ldp`: the sensitive column holds groups each person randomised (K-ary randomised
/// response at ε_A).
#[derive(clap::Args)]
pub struct SensitiveLdp {
    /// The sensitive column holds groups randomised by K-ary randomised response at this ε_A
    /// (each person reported their own group with probability e^ε_A/(e^ε_A + K − 1)): the
    /// fairness statistics are corrected by the flip matrix and the score reads no group, so the
    /// rules are fair on the true groups, which prediction should be given. Each person's
    /// attribute is ε_A-locally private, beside the fit's central (ε, δ)
    /// (docs/fairness-constraints.md). Fits the group-thresholds classifier.
    #[arg(long, value_name = "EPSILON_A", allow_hyphen_values = true)]
    pub sensitive_ldp: Option<f64>,
}
