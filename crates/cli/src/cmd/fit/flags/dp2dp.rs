//! The flags of `dpfair fit dp2dp`: clap declarations only (`cmd::fit::dp2dp` turns them into
//! the library's params).

use crate::cmd::common::{BoundsArgs, CheckArgs, DataArgs, OutArgs, PrivacyArgs};

/// Phase-1 model choice.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase1Arg {
    /// Output perturbation when its noise is small for this n, d, K and ε (public numbers),
    /// else DP-SGD.
    Auto,
    /// Output-perturbed L2-regularised logistic regression (the paper's experiments).
    OutputPerturbation,
    /// DP-SGD logistic regression (Algorithm 2 with clipping; 20 epochs, expected batch 256,
    /// η = 0.5, clipping norm 1).
    DpSgd,
}

#[derive(clap::Args)]
#[command(
    mut_arg("sensitive", crate::cmd::common::require_sensitive),
    after_help = "Example:\n  dpfair fit dp2dp --data train.csv --target y --sensitive sex \\\n    \
    --rho 0.05 --epsilon 1 --delta 1e-5 --seed 1 --out model.json\n  dpfair predict --model \
    model.json --data test.csv --out pred.csv"
)]
pub struct Args {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub bounds: BoundsArgs,
    #[command(flatten)]
    pub privacy: PrivacyArgs,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub check: CheckArgs,
    /// Fairness tolerance ρ ≥ 0: the classifier targets max_k |P(ĝ=k|S=+1) − P(ĝ=k|S=−1)| ≤ ρ
    /// (the paper's name; not the zCDP ρ that the ledger prints for some releases). The default
    /// 0.1 is every method's default fairness level; 0 is the paper's exact parity.
    #[arg(
        long,
        visible_alias = "fairness-tolerance",
        value_name = "R",
        default_value_t = dpfair::estimators::DEFAULT_RHO,
        allow_hyphen_values = true
    )]
    pub rho: f64,
    /// The sampling margin z: the dual ascent aims at ρ − z·s, s the standard deviation of a
    /// difference of the two groups' rates on the pool (public: its size and the released group
    /// frequencies), so that the rule meets ρ beyond the rows it was fitted on
    /// (docs/deviations.md#dp2dp-sampling-margin); 0 aims at ρ itself, as the paper (and
    /// `--accounting paper`)
    #[arg(long, value_name = "Z", default_value_t = dpfair::dp2dp::DEFAULT_MARGIN_Z)]
    pub margin_z: f64,
    /// Fraction of the rows for the unlabelled pool of Phase 2 (the rest trains Phase 1).
    #[arg(long, value_name = "F", default_value_t = 0.25)]
    pub pool_fraction: f64,
    /// Phase-1 model.
    #[arg(long, value_enum, default_value_t = Phase1Arg::DpSgd)]
    pub phase1: Phase1Arg,
    /// Phase-1 L2 strength Λ per sample (output perturbation and auto; noise ∝ 1/(nΛ)).
    #[arg(long, value_name = "L", default_value_t = 1e-2)]
    pub l2: f64,
    /// Iterations T of Algorithm 1 (the paper: 100 synthetic/Adult, 1000 Credit/Parkinson's;
    /// the default is 1000 everywhere: docs/deviations.md#dp2dp-iterations).
    #[arg(long, value_name = "T", default_value_t = dpfair::estimators::DP2DP_ITERATIONS)]
    pub iterations: usize,
    /// Batch size b (strict mode: expected Poisson batch, q = b/N).
    #[arg(long, value_name = "B", default_value_t = 128)]
    pub batch: usize,
    /// Smoothing β of the log-sum-exp (the paper: 1e-5).
    #[arg(long, value_name = "BETA", default_value_t = 1e-5)]
    pub beta: f64,
    /// Box bound C_λ of the multipliers.
    #[arg(long, value_name = "C", default_value_t = 1.0)]
    pub c_lambda: f64,
    /// Noise σ_π on the released group frequency [default: the σ_π whose release takes 5% of
    /// Phase 2's budget on its pool (a public rule in N, ε, δ; the paper: 0.05)]
    #[arg(long, value_name = "S")]
    pub sigma_pi: Option<f64>,
    /// The paper's step sizes η_t = 1/√t, instead of the default η_t = π̄_min/√t (scaled by the
    /// smallest released group frequency, whose scores the multipliers shift)
    #[arg(long)]
    pub unit_steps: bool,
    /// Release the last iterate λ^T (the paper) instead of the default: the uniform mixture of
    /// the rules of the second half of the iterates, one drawn at random per prediction
    /// (docs/deviations.md#dp2dp-mixture-of-iterates).
    #[arg(long, conflicts_with = "averaged_multipliers")]
    pub last_iterate: bool,
    /// One deterministic rule at the average of the second half of the iterates instead of the
    /// mixture of their rules (it misses ρ where a group's rate moves steeply with λ).
    #[arg(long)]
    pub averaged_multipliers: bool,
    /// Break argmax ties by the lowest class index instead of U(0, 1e-5) jitter.
    #[arg(long)]
    pub no_jitter: bool,
}
