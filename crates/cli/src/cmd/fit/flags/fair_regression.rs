//! The flags of `dpfair fit fair-regression`: clap declarations only (`cmd::fit::fair_regression` turns them into
//! the library's params).

use crate::cmd::common::{BoundsArgs, CheckArgs, HeaderArg, OutArgs, SeedArgs, parse_delimiter};
use std::path::PathBuf;

/// The private regressor `--base` fits first.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseArg {
    /// DP linear regression by noisy sufficient statistics (`dpfair fit dp-linear`).
    DpLinear,
}

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
    /// The data file: CSV (delimiter and header detected), Parquet (`.parquet`) or Arrow IPC
    /// (`.arrow`, `.ipc`, `.feather`). With --scores a columnar file is read batch by batch and
    /// never held whole (the joint counts are mergeable), so it may be larger than memory; with
    /// --base every row is loaded.
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// The column of scores f(x, a) to post-process (may be the target, as in the paper).
    #[arg(long, value_name = "COL", required_unless_present = "base")]
    pub scores: Option<String>,
    /// Fit a private regressor first, on `--base-fraction` of a public random split of the rows,
    /// and post-process its predictions on the other rows: the model then predicts new rows
    /// from their features (parallel composition: the fit is (ε, δ)-DP). Needs --target;
    /// --range is also the target's public range.
    #[arg(long, value_enum, conflicts_with = "scores")]
    pub base: Option<BaseArg>,
    /// The sensitive-attribute column.
    #[arg(long, value_name = "COL")]
    pub sensitive: String,
    /// The target column: with --scores, recorded in the model's schema for evaluation
    /// (post-processing reads no labels; ignored when it is the score column); with --base,
    /// what the base regressor learns (required).
    #[arg(long, value_name = "COL", required_if_eq("base", "dp-linear"))]
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
    /// The public interval `LO,HI` containing the scores (never derived from the data); with
    /// --base, the target is clipped to it too.
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
    #[command(flatten)]
    pub check: CheckArgs,
    #[command(flatten)]
    pub base_options: BaseOptions,
}

/// The options of `--base dp-linear` (refused without it).
#[derive(clap::Args, Clone, Debug)]
pub struct BaseOptions {
    /// --base: feature columns [default: every column except target and sensitive].
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    pub features: Option<Vec<String>>,
    /// --base: feature columns to one-hot encode (levels found in the data, recorded as public).
    #[arg(long, value_name = "C,...", value_delimiter = ',')]
    pub categorical: Vec<String>,
    #[command(flatten)]
    pub bounds: BoundsArgs,
    /// --base: δ of the base regressor's Gaussian release [default: 1e-5].
    #[arg(long, value_name = "D")]
    pub delta: Option<f64>,
    /// --base: the share of the rows the base regressor is fitted on (the post-processor gets
    /// the others).
    #[arg(long, value_name = "F", default_value_t = 0.5)]
    pub base_fraction: f64,
    /// --base: rows are scaled down to ℓ2 norm at most R [default: √(source columns), one per
    /// numeric column and one per one-hot group].
    #[arg(long, value_name = "R")]
    pub row_bound: Option<f64>,
    /// --base: ridge λ added to the released XᵀX [default: automatic; docs/privacy.md].
    #[arg(long, value_name = "L")]
    pub ridge: Option<f64>,
}
