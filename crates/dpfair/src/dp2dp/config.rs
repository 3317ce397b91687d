//! DP2DP's configuration: Table 1 of the paper and defaults for what the paper leaves
//! open (the DP2DP entries of `docs/deviations.md`, from `#dp2dp-c-lambda-unspecified` to `#dp2dp-rho-grid`).

use super::error::{Error, Result, invalid};
use crate::predictor::Accounting;
use serde::{Deserialize, Serialize};

/// Phase 1: the private class-probability model p̄ on the labelled split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Phase1 {
    /// P1-OP: L2-regularised (multinomial) logistic regression with Gaussian output perturbation
    /// (Chaudhuri et al. 2011), the paper's experimental choice. Λ = `l2`, R = `feature_bound`
    /// (`docs/deviations.md#dp2dp-phase-1-mechanism`: the sensitivity is 2L/(nΛ) with L = √2·R, multinomial).
    OutputPerturbation { l2: f64, feature_bound: f64 },
    /// P1-SGD: Algorithm 2 (DP-SGD) with per-example clipping and Poisson sampling.
    DpSgd {
        epochs: usize,
        expected_batch: usize,
        learning_rate: f64,
        clip: f64,
    },
    /// Output perturbation with (Λ, R) = (`l2`, `feature_bound`) when its noise is
    /// small — the noise vector's expected norm σ√p at most [`Phase1::AUTO_MAX_NOISE_RATIO`] of
    /// the largest norm the weights can have, √(2 ln K / Λ) — and otherwise
    /// [`Phase1::dp_sgd_default`]. The choice reads only public numbers (n, d, K, ε, δ, Λ, R),
    /// so it leaks nothing; see [`super::phase1::resolve`].
    Auto { l2: f64, feature_bound: f64 },
}

/// In words, for the fit's report (e.g. `DP-SGD (20 epochs, batch 128, learning rate 0.5, clip
/// 1)`), not Rust's debug form.
impl std::fmt::Display for Phase1 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Phase1::OutputPerturbation { l2, feature_bound } => {
                write!(f, "output perturbation (Λ = {l2}, R = {feature_bound})")
            }
            Phase1::DpSgd {
                epochs,
                expected_batch,
                learning_rate,
                clip,
            } => write!(
                f,
                "DP-SGD ({epochs} epochs, expected batch {expected_batch}, learning rate \
                 {learning_rate}, clip {clip})"
            ),
            Phase1::Auto { l2, feature_bound } => write!(
                f,
                "output perturbation if its noise is small (Λ = {l2}, R = {feature_bound}), else \
                 DP-SGD"
            ),
        }
    }
}

impl Default for Phase1 {
    fn default() -> Self {
        // DP-SGD: output perturbation (the paper's choice, [`Phase1::paper`]) is refused ("noise
        // would swamp the weights") on a few thousand rows with K = 6 at ε = 0.5, and where it
        // runs its Λ = 1e-2 with R = 1 is a weaker base model. Test error of Phase 1 alone at
        // ε = 1 (3 seeds): Adult 0.152 (DP-SGD) vs 0.180 (output perturbation; non-private
        // Λ = 1e-2: 0.157), Credit 0.167 vs 0.190; on the Say et al. mixture at n = 4,500,
        // DP2DP's test accuracy 0.74–0.77 vs 0.66–0.74.
        Phase1::dp_sgd_default()
    }
}

impl Phase1 {
    /// [`Phase1::Auto`] takes output perturbation when σ√p ≤ this fraction of √(2 ln K / Λ).
    /// Measured on the Say et al. mixture (K = 6, d = 20; 3 seeds): at n = 4,500 and ε = 0.5
    /// (ratio 0.29) output perturbation reaches test accuracy 0.66 against DP-SGD's 0.74, at
    /// ε = 1 (ratio 0.15) 0.74 against 0.77; on Adult (ratio 0.05) it is the paper's choice.
    pub const AUTO_MAX_NOISE_RATIO: f64 = 0.1;

    /// P1-SGD settings that train the Say et al. mixture well from about a thousand rows (20
    /// epochs, expected batch 256, η = 0.5, clipping norm 1).
    pub fn dp_sgd_default() -> Self {
        Phase1::DpSgd {
            epochs: 20,
            expected_batch: 256,
            learning_rate: 0.5,
            clip: 1.0,
        }
    }

    /// The paper's experimental choice (P1-OP) with Λ = 1e-2, R = 1 (`docs/deviations.md#dp2dp-phase-1-mechanism`).
    pub fn paper() -> Self {
        Phase1::OutputPerturbation {
            l2: 1e-2,
            feature_bound: 1.0,
        }
    }
}

/// Which Phase-2 iterate is released (`docs/deviations.md#dp2dp-initialisation`). Averaging is post-processing: free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Iterate {
    /// λ after the T-th update (the paper's "λ^T").
    #[default]
    Last,
    /// The average of λ¹..λ^T (Polyak). On the Say et al. mixture (ρ = 0.05,
    /// default Phase 1, 5 seeds, 4,000 test rows) it lowers the test unfairness from 0.52 to
    /// 0.14 (1,500 rows, ε = 0.5), 0.22 → 0.13 (1,500, ε = 1), 0.13 → 0.11 (6,000, ε = 0.5) and
    /// 0.107 → 0.095 (6,000, ε = 1), with higher accuracy in each case: the last iterate
    /// carries the accumulated noise of η_t = 1/√t steps (`docs/deviations.md#dp2dp-beta-and-step-sizes`).
    Average,
    /// The average of the second half, λ^⌈T/2⌉..λ^T (suffix averaging, Rakhlin et al. 2012):
    /// the full average starts at λ⁰ = 0 and so lags behind a multiplier that is still
    /// growing, under-correcting; the suffix drops that start. Free post-processing.
    SecondHalf,
    /// The uniform mixture of the classifiers of λ^⌈T/2⌉..λ^T: each prediction applies the rule
    /// with one of these iterates drawn at random (public randomness), and the model's class
    /// probabilities are the fractions of iterates choosing each class
    /// (`docs/deviations.md#dp2dp-mixture-of-iterates`). Where a group's rate moves steeply with
    /// λ, SGD oscillates across the fair point and the rule at the averaged λ lands on the
    /// side where the gradient is small, missing ρ (Law, first-year-GPA target: U ≈ 0.2 at
    /// ε = 50 for ρ = 0.1); the mixture's disparity is the average over the iterates, which the
    /// stationarity of projected SGD keeps near ρ. The iterates are covered by the composition
    /// accounting of every step (the ledger charges all T noisy gradients). [`Config`]'s default.
    Mixture,
}

/// Tie-breaking of the prediction rule's argmax (`docs/deviations.md#dp2dp-ties-in-the-argmax`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TieBreak {
    /// Denis et al.'s device: add i.i.d. U(0, `width`) to each p̄_k(x, s) before the argmax
    /// (drawn from the prediction's seeded RNG).
    Jitter { width: f64 },
    /// The lowest class index among the maximisers (deterministic).
    LowestIndex,
}

impl Default for TieBreak {
    fn default() -> Self {
        TieBreak::Jitter { width: 1e-5 }
    }
}

/// Where the paper's noise level σ_SGD is meant to act (`docs/deviations.md#dp2dp-noise-on-the-sum`). Only `Accounting::Paper` reads it:
/// strict mode always calibrates the noise it adds to the sum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseOn {
    /// Algorithm 1 as printed: N(0, σ_SGD²) on the summed gradient, σ_SGD = 4z (z the
    /// dp_accounting multiplier at Δ = 4).
    #[default]
    Sum,
    /// Theorem 4.1's convention (Altschuler–Talwar: noise on the mean, multiplier bσ/4) applied
    /// to Algorithm 1's sum: σ_SGD = 4z/b, b times less noise than the accountant assumed. The
    /// ledger records the real cost.
    Mean,
}

/// The step sizes η_t of Algorithm 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepSize {
    /// η_t = η₀/√t (the paper's experiments, η₀ = 1).
    #[default]
    InvSqrt,
    /// η_t = η₀.
    Constant,
}

/// How the step sizes η_t are scaled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepScale {
    /// η_t as [`StepSize`] gives it (the paper).
    Unit,
    /// η_t times the smallest released group frequency min_s π̄_s (a public, released number). The
    /// multipliers shift the scores π̄_s p̄_k (the rule in [`super::rule`]): the smallest group's
    /// span [0, π̄_min], so with a unit step one noisy step moves its whole prediction (a 6%
    /// group was predicted all one class in half the fits on Law with a first-year-GPA target;
    /// BENCHMARKS.md, "A user's own data"). The default.
    #[default]
    SmallestGroup,
}

/// The share of Phase 2's budget (as a zCDP ρ) that [`Config::sigma_pi_for`] gives the
/// frequency release when σ_π is not set.
pub const FREQUENCY_SHARE: f64 = 0.05;

/// The paper's σ_π (`docs/deviations.md#dp2dp-sigma-pi-value`): what `Accounting::Paper` uses
/// when σ_π is not set, and what the reproductions use.
pub const PAPER_SIGMA_PI: f64 = 0.05;

/// σ_π whose frequency release (sensitivity 1/N, zCDP ρ_π = 1/(2N²σ²)) takes
/// [`FREQUENCY_SHARE`] of κ = (√(L + ε) − √L)², L = ln(1/δ), the zCDP ρ that converts to
/// (ε, δ) (Bun & Steinke, Prop. 1.3): a public rule in N, ε and δ. A fixed σ_π = 0.05 is large
/// against a small group's frequency (a 6% group's π̄ fell below 0 in 14% of releases at N =
/// 3,580), and nearly free on large N.
///
/// ```
/// use dpfair::dp2dp::config::frequency_sigma;
/// let s = frequency_sigma(3_580, 0.77, 1e-5);
/// assert!(s > 0.007 && s < 0.009);
/// ```
pub fn frequency_sigma(n: usize, epsilon: f64, delta: f64) -> f64 {
    let l = (1.0 / delta).ln();
    let kappa = ((l + epsilon).sqrt() - l.sqrt()).powi(2);
    1.0 / (n.max(1) as f64 * (2.0 * FREQUENCY_SHARE * kappa).sqrt())
}

/// The estimators' sampling margin ([`Config::margin_z`]): one standard deviation.
pub const DEFAULT_MARGIN_Z: f64 = 1.0;

/// The level the dual ascent aims at: ρ less `margin_z` standard deviations of a difference of
/// two groups' rates on a pool of `n` rows with released frequencies `pi`
/// ([`Config::margin_z`]), floored at 0. Public: n, the released π̄ and the settings.
///
/// ```
/// use dpfair::dp2dp::aimed_rho;
/// // 4,709 rows, 6.5 % in one group: s = √(1/(4·4,403) + 1/(4·306)) ≈ 0.0296.
/// let aimed = aimed_rho(0.1, 1.0, 4_709, [0.935, 0.065]);
/// assert!((aimed - (0.1 - 0.0296)).abs() < 2e-4, "{aimed}");
/// assert_eq!(aimed_rho(0.01, 1.0, 4_709, [0.935, 0.065]), 0.0);
/// ```
pub fn aimed_rho(rho: f64, margin_z: f64, n: usize, pi: [f64; 2]) -> f64 {
    let n = n.max(1) as f64;
    let s = pi
        .iter()
        .map(|p| 1.0 / (4.0 * n * p.max(1e-12)))
        .sum::<f64>()
        .sqrt();
    (rho - margin_z * s).max(0.0)
}

/// Hyperparameters of DP2DP. `Default` is Table 1's synthetic column plus the paper's other choices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Fairness tolerance ρ ≥ 0 (Def. 2.1): the classifier targets U(g) ≤ ρ.
    pub rho: f64,
    /// The sampling margin in standard deviations (`docs/deviations.md#dp2dp-sampling-margin`):
    /// the dual ascent aims at ρ − z·s, s = √(Σ_s 1/(4 N π̄_s)) the standard deviation of a
    /// difference of two groups' rates on the pool (N rows, released frequencies π̄), so that
    /// the rule meets ρ beyond the pool too. 0 (the default here): the paper's ρ; the
    /// estimators use [`DEFAULT_MARGIN_Z`]. `Accounting::Paper` ignores it (the published
    /// procedure aims at ρ).
    pub margin_z: f64,
    /// Privacy target ε of each phase (parallel composition across the phases);
    /// `f64::INFINITY` is the non-private DP2DP reference (no noise, non-private Phase 1).
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    /// δ (the paper: 1e-5 everywhere).
    pub delta: f64,
    /// Strict (default): every release charged at its real cost, rigorous sampling; Paper: the
    /// published procedure, the ledger recording what it really spends.
    pub accounting: Accounting,
    /// Fraction of the rows given to Phase 2 (the unlabelled pool D_N); the rest trains Phase 1.
    /// The split is a uniformly random permutation drawn from the run's RNG, independent of the
    /// data (`docs/deviations.md#dp2dp-budget-split-and-preprocessing`). Default 0.25: the synthetic 60/20 train/pool split of Table 1.
    pub pool_fraction: f64,
    pub phase1: Phase1,
    /// Smoothing β > 0 of LSE_β (Table 1: 1e-5).
    pub beta: f64,
    /// Iterations T of Algorithm 1 (Table 1: 100 synthetic/Adult, 1000 Credit/Parkinson's).
    pub iterations: usize,
    /// Batch size b (Table 1: 128). Strict mode: the expected Poisson batch, q = b/N.
    pub batch: usize,
    /// η₀ (the paper: 1).
    pub eta0: f64,
    pub step: StepSize,
    /// Scaling of the steps (default [`StepScale::SmallestGroup`]; the paper: unit).
    pub step_scale: StepScale,
    /// Box bound C_λ > 0 of the multipliers (`docs/deviations.md#dp2dp-c-lambda-unspecified`; default 1).
    pub c_lambda: f64,
    /// Noise σ_π on the released group frequency (`docs/deviations.md#dp2dp-sigma-pi-value`);
    /// `None` (the default): [`frequency_sigma`]'s rule, or [`PAPER_SIGMA_PI`] under
    /// `Accounting::Paper` ([`Config::sigma_pi_for`]).
    pub sigma_pi: Option<f64>,
    /// Floor of the released frequencies π̄_s (`docs/deviations.md#dp2dp-proportions-outside-the-unit-interval`; post-processing).
    pub pi_floor: f64,
    /// Released iterate (`docs/deviations.md#dp2dp-initialisation`); default the mixture of the
    /// second half's classifiers (`docs/deviations.md#dp2dp-mixture-of-iterates`; the paper: last).
    pub iterate: Iterate,
    pub ties: TieBreak,
    /// Paper mode only: which convention turns the accountant's multiplier into σ_SGD (`docs/deviations.md#dp2dp-noise-on-the-sum`).
    pub noise_on: NoiseOn,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            rho: 0.0,
            margin_z: 0.0,
            epsilon: 1.0,
            delta: 1e-5,
            accounting: Accounting::Strict,
            pool_fraction: 0.25,
            phase1: Phase1::default(),
            beta: 1e-5,
            iterations: 100,
            batch: 128,
            eta0: 1.0,
            step: StepSize::InvSqrt,
            step_scale: StepScale::SmallestGroup,
            c_lambda: 1.0,
            sigma_pi: None,
            pi_floor: 1e-3,
            iterate: Iterate::Mixture,
            noise_on: NoiseOn::Sum,
            ties: TieBreak::default(),
        }
    }
}

fn positive_finite(name: &'static str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(invalid(name, format!("must be finite and > 0, got {v}")))
    }
}

impl Config {
    /// σ_π of a pool of `n` rows: the set value, else [`PAPER_SIGMA_PI`] under
    /// `Accounting::Paper`, else [`frequency_sigma`]`(n, ε, δ)`.
    pub fn sigma_pi_for(&self, n: usize) -> f64 {
        match (self.sigma_pi, self.accounting) {
            (Some(s), _) => s,
            (None, Accounting::Paper) => PAPER_SIGMA_PI,
            (None, _) => frequency_sigma(n, self.epsilon, self.delta),
        }
    }

    /// Whether this is the non-private reference (ε = ∞).
    pub fn is_private(&self) -> bool {
        self.epsilon.is_finite()
    }

    /// Checks every parameter against its domain (before any data is read).
    pub fn validate(&self) -> Result<()> {
        if !(self.rho.is_finite() && self.rho >= 0.0) {
            return Err(invalid(
                "rho",
                format!(
                    "the fairness tolerance must be finite and ≥ 0, got {}",
                    self.rho
                ),
            ));
        }
        if !(self.margin_z.is_finite() && self.margin_z >= 0.0) {
            return Err(invalid(
                "margin_z",
                format!("must be finite and ≥ 0, got {}", self.margin_z),
            ));
        }
        if self.epsilon.is_nan() || self.epsilon <= 0.0 {
            return Err(invalid(
                "epsilon",
                format!("must be > 0 (or inf), got {}", self.epsilon),
            ));
        }
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(invalid(
                "delta",
                format!("must be in (0, 1), got {}", self.delta),
            ));
        }
        if !(self.pool_fraction > 0.0 && self.pool_fraction < 1.0) {
            return Err(invalid(
                "pool_fraction",
                format!("must be in (0, 1), got {}", self.pool_fraction),
            ));
        }
        positive_finite("beta", self.beta)?;
        positive_finite("eta0", self.eta0)?;
        positive_finite("c_lambda", self.c_lambda)?;
        if let Some(s) = self.sigma_pi {
            positive_finite("sigma_pi", s)?;
        }
        if !(self.pi_floor > 0.0 && self.pi_floor < 0.5) {
            return Err(invalid(
                "pi_floor",
                format!("must be in (0, 0.5), got {}", self.pi_floor),
            ));
        }
        if self.noise_on == NoiseOn::Mean && self.accounting != Accounting::Paper {
            return Err(invalid(
                "noise_on",
                "noise on the mean (Theorem 4.1's convention, docs/deviations.md#dp2dp-noise-on-the-sum) is the paper's procedure: \
                 only with accounting paper",
            ));
        }
        if self.iterations == 0 {
            return Err(invalid("iterations", "must be ≥ 1"));
        }
        if self.batch == 0 {
            return Err(invalid("batch", "must be ≥ 1"));
        }
        if let TieBreak::Jitter { width } = self.ties
            && !(width.is_finite() && width >= 0.0)
        {
            return Err(invalid(
                "ties",
                format!("jitter width must be finite and ≥ 0, got {width}"),
            ));
        }
        match &self.phase1 {
            Phase1::OutputPerturbation { l2, feature_bound }
            | Phase1::Auto { l2, feature_bound } => {
                positive_finite("l2", *l2)?;
                positive_finite("feature_bound", *feature_bound)?;
            }
            Phase1::DpSgd {
                epochs,
                expected_batch,
                learning_rate,
                clip,
            } => {
                if *epochs == 0 || *expected_batch == 0 {
                    return Err(invalid("epochs", "epochs and expected_batch must be ≥ 1"));
                }
                positive_finite("learning_rate", *learning_rate)?;
                positive_finite("clip", *clip)?;
            }
        }
        Ok(())
    }
}

impl From<dpfair_learn::LearnError> for Error {
    fn from(e: dpfair_learn::LearnError) -> Self {
        Error::Phase1(e.to_string())
    }
}
