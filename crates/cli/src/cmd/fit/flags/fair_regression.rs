//! The flags of `dpfair fit fair-regression`: clap declarations only (`cmd::fit::fair_regression` turns them into
//! the library's params).

use crate::cmd::common::{HeaderArg, OutArgs, SeedArgs, parse_delimiter};
use std::path::PathBuf;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverArg {
    /// The exact fast paths (k = 1, α ≥ the inputs' KS, the α = 0 closed form, and the per-level
    /// decomposition for any other α), with the structured interior point as fallback (default).
    Auto,
    /// The structured interior-point method only (no fast paths).
    Structured,
    /// The paper's LP as a general LP through Clarabel only (slow; a reference).
    Clarabel,
}

#[derive(clap::Args)]
pub struct Args {
    /// The CSV file (delimiter and header detected).
    #[arg(long, value_name = "CSV")]
    pub data: PathBuf,
    /// The column of scores f(x, a) to post-process (may be the target, as in the paper).
    #[arg(long, value_name = "COL")]
    pub scores: String,
    /// The sensitive-attribute column.
    #[arg(long, value_name = "COL")]
    pub sensitive: String,
    /// The target column, recorded in the model's schema for evaluation (post-processing reads
    /// no labels). Ignored when it is the score column.
    #[arg(long, value_name = "COL")]
    pub target: Option<String>,
    /// Declare the sensitive groups (public), in order [default: the levels found in the data,
    /// recorded as public]. A declared group absent from the data gets a near-zero weight.
    #[arg(long, value_name = "G,...", value_delimiter = ',')]
    pub groups: Option<Vec<String>>,
    /// Fairness tolerance α ≥ 0: the groups' output distributions end within KS distance α
    /// (0: exact statistical parity; 1: no constraint, binning only).
    #[arg(
        long,
        value_name = "A",
        default_value_t = 0.0,
        allow_hyphen_values = true
    )]
    pub alpha: f64,
    /// Privacy budget ε > 0 (`inf`: the non-private reference, no noise).
    #[arg(long, value_name = "E", allow_hyphen_values = true)]
    pub epsilon: f64,
    /// Number of bins k ≥ 1 (the outputs take the k bin midpoints).
    #[arg(long, value_name = "K", default_value_t = 36)]
    pub bins: usize,
    /// The public interval `LO,HI` containing the scores (never derived from the data).
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub range: String,
    /// The LP solver.
    #[arg(long, value_enum, default_value_t = SolverArg::Auto)]
    pub solver: SolverArg,
    #[command(flatten)]
    pub seeds: SeedArgs,
    /// Field delimiter: `,` `;` `tab` or one character [default: detected].
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter)]
    pub delimiter: Option<u8>,
    /// Whether the first row is a header.
    #[arg(long, value_enum, default_value_t = HeaderArg::Auto)]
    pub header: HeaderArg,
    #[command(flatten)]
    pub out: OutArgs,
}
