//! **LPCT and LPCT-prune**: locally private classification trees that use public data.
//!
//! Yuheng Ma, Hanfang Yang, "Optimal Locally Private Nonparametric Classification with Public
//! Data", JMLR 25 (2024). "Algorithm", "eq." and "Section" below are the paper's.
//!
//! The protocol (Section 3):
//! 1. the collector builds a partition π from the **public** sample only ([`partition`](mod@partition):
//!    Algorithm 1, max-edge with the Gini score; range from the public min–max, Section 4.3);
//! 2. each private holder releases its one-hot leaf vector and label vector with Laplace noise of
//!    scale 4/ε per coordinate ([`privatiser::LocalRelease`], eq. (5)–(6); ε-LDP by
//!    Proposition 2);
//! 3. the collector sums the reports and estimates, per leaf, eq. (8):
//!    η̃^j = (Ñ_P^j + λN_Q^j)/(S̃_P^j + λS_Q^j), classifying 1(η̃ > 1/2) ([`estimator`]).
//!
//! LPCT-prune ([`prune`], Algorithm 2) replaces the choice of (p, λ) by a data-driven walk up the
//! tree, at the price of a possible second round.
//!
//! **Defaults without test-set tuning** (the paper tunes (p, λ) on test accuracy, `docs/deviations.md#lpct-hyperparameters-chosen-on-test-accuracy`): when
//! [`LpctConfig::depth`] / [`LpctConfig::lambda`] are `None`, LPCT uses Theorem 4's choices
//! 2^p ≍ δ^{−1} and λ ≍ δ^{((γα−α)∧(2γα−d))/d} at α = γ = 1, with the two constants the orders
//! leave open fixed by the mechanism's noise variance 40/ε² per holder ([`theory_delta`],
//! [`theory_lambda`]: λ = 1 + 160|I|/ε², the inverse-variance weight of the public counts); for
//! large ε, δ is floored at the non-private rate of the remark after Theorem 4. LPCT-prune needs
//! no tuning at all (p0, p_term from Algorithm 2).
//!
//! Simulation: [`fit`] and [`fit_prune`] take the private rows in-process and draw the noise of
//! each per-leaf sum exactly in O(1) ([`privatiser::simulate_sums`]); the real client/collector
//! split is the `privatiser` API, with the partition and report files of [`protocol`] (what
//! `dpfair ldp …` exchanges).

pub mod baselines;
pub mod collector;
pub mod error;
pub mod estimator;
pub mod guard;
pub mod partition;
mod privacy_adapter;
pub mod privatiser;
pub mod protocol;
pub mod prune;
pub mod report_file;
pub mod report_set;

pub use collector::{HadamardSums, LaplaceSums, ReportSums};
pub use error::{LpctError, Result};
pub use estimator::{LeafSums, RatioRule};
pub use partition::{Criterion, Growth, PartitionConfig, Scaler, Splitter, Tree};
pub use privatiser::{LocalRelease, Mechanism, NoisySums, Report};
pub use prune::{Preset, PruneOptions};

use dpfair_data::{Dataset, Target};
use dpfair_privacy::{Ledger, Noise};
use error::{bad_data, check_epsilon, invalid};
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

/// How the domain box is obtained (Section 4.3).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RangeMode {
    /// The features already live in \[0,1\]^d.
    Unit,
    /// Min–max of the public sample (Theorem 5; the real-data experiments).
    #[default]
    PublicMinMax,
    /// Known bounds [a_ℓ, b_ℓ] per feature (public knowledge).
    Bounds { bounds: Vec<(f64, f64)> },
}

/// Prediction for points outside the domain box (`docs/deviations.md#lpct-out-of-range-points`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutOfRange {
    /// (f̃·1_{\[0,1\]^d}) ∘ M of Theorem 5: label 0 (and probability 0) outside the box.
    #[default]
    Zero,
    /// Route to the nearest boundary cell, as the holders do.
    Route,
}

/// The partition settings LPCT and LPCT-prune share.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TreeSettings {
    pub splitter: Splitter,
    pub criterion: Criterion,
    pub growth: Growth,
    pub range: RangeMode,
    pub out_of_range: OutOfRange,
    pub ratio: RatioRule,
    /// Seed of the public randomness of the random max-edge splitter (LPCT-R).
    pub seed: u64,
}

/// The splitter the fits default to (`dpfair fit lpct`, `fit lpct-prune`, `ldp partition`,
/// `compare`, Python): the CART criterion on the public rows, the paper's real-data variant
/// ("LPCT (CART)" in its Table 2). [`TreeSettings::default`] keeps Algorithm 1's max-edge rule
/// for the reproductions. Max-edge halves the widest side of a cell whatever the labels, which
/// wastes the few public rows a practitioner has: on the README's diabetes example (200 public
/// rows) its trees were no better than the majority class at any depth (0.658), CART's reached
/// 0.736; on the demo's five Gaussian features with 700 public rows, 0.665 against 0.68–0.73
/// (docs/deviations.md#lpct-cart-default).
pub const DEFAULT_FIT_SPLITTER: Splitter = Splitter::Cart;

impl Default for TreeSettings {
    fn default() -> Self {
        TreeSettings {
            splitter: Splitter::MaxEdge,
            criterion: Criterion::Gini,
            growth: Growth::Complete,
            range: RangeMode::PublicMinMax,
            out_of_range: OutOfRange::Zero,
            ratio: RatioRule::Literal,
            seed: 0,
        }
    }
}

/// LPCT's configuration. Defaults: the paper's max-edge + Gini partition on the public min–max
/// range, and Theorem 4's depth and λ (no test-set tuning).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LpctConfig {
    /// The LDP budget ε of every holder's report.
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    /// The depth p; None: Theorem 4's 2^p ≍ δ^{−1} ([`theory_depth`]).
    pub depth: Option<u32>,
    /// The public weight λ; None: Theorem 4's λ ([`theory_lambda`]).
    pub lambda: Option<f64>,
    pub tree: TreeSettings,
    /// A leaf keeps its own η̃ only when it is this many standard deviations from 1/2, else
    /// takes its nearest such ancestor's ([`guard`], `docs/deviations.md#lpct-significance-guard`);
    /// None (the paper's eq. (8) in every leaf) by default, [`guard::DEFAULT_Z`] in `dpfair
    /// compare` and `fit lpct`.
    pub guard: Option<f64>,
}

impl Default for LpctConfig {
    fn default() -> Self {
        LpctConfig {
            epsilon: 1.0,
            depth: None,
            lambda: None,
            tree: TreeSettings::default(),
            guard: None,
        }
    }
}

/// LPCT-prune's configuration: no tuning parameter (p0 and p_term come from Algorithm 2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PruneConfig {
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    /// Overrides p0 (the figures' "fixed p0" study, Fig. 7(b)).
    pub p0: Option<u32>,
    /// Overrides p_term.
    pub p_term: Option<u32>,
    pub options: PruneOptions,
    pub tree: TreeSettings,
    /// The node the walk picks keeps its estimate only when it is this many standard deviations
    /// from 1/2, else takes its nearest such ancestor's ([`guard`],
    /// `docs/deviations.md#lpct-prune-significance-guard`); None (Algorithm 2's walk alone) by
    /// default, [`guard::DEFAULT_Z`] in `dpfair compare` and `fit lpct-prune`.
    pub guard: Option<f64>,
}

impl Default for PruneConfig {
    fn default() -> Self {
        PruneConfig {
            epsilon: 1.0,
            p0: None,
            p_term: None,
            options: PruneOptions::default(),
            tree: TreeSettings::default(),
            guard: None,
        }
    }
}

/// A fitted tree classifier: a partition and one estimate η per leaf; the shape every model of
/// this module (LPCT, LPCT-prune, LPDT, PHIST) predicts with. Prediction is O(depth) per row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawClassifier")]
pub struct TreeClassifier {
    tree: Tree,
    eta: Vec<f64>,
    out_of_range: OutOfRange,
}

#[derive(Deserialize)]
struct RawClassifier {
    tree: Tree,
    eta: Vec<f64>,
    out_of_range: OutOfRange,
}

impl TryFrom<RawClassifier> for TreeClassifier {
    type Error = LpctError;

    fn try_from(r: RawClassifier) -> Result<Self> {
        TreeClassifier::new(r.tree, r.eta, r.out_of_range)
    }
}

impl TreeClassifier {
    pub fn new(tree: Tree, eta: Vec<f64>, out_of_range: OutOfRange) -> Result<Self> {
        if eta.len() != tree.n_leaves() {
            return Err(bad_data(
                "model",
                format!(
                    "{} leaf estimates for {} leaves",
                    eta.len(),
                    tree.n_leaves()
                ),
            ));
        }
        if eta.iter().any(|e| e.is_nan()) {
            return Err(bad_data("model", "a leaf estimate is NaN"));
        }
        Ok(TreeClassifier {
            tree,
            eta,
            out_of_range,
        })
    }

    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// η per leaf (unclipped: the literal ratio, `docs/deviations.md#lpct-non-positive-noisy-denominators`).
    pub fn leaf_eta(&self) -> &[f64] {
        &self.eta
    }

    fn eta_of(&self, row: &[f64]) -> f64 {
        if self.out_of_range == OutOfRange::Zero && !self.tree.scaler().contains(row) {
            return 0.0;
        }
        self.eta[self.tree.leaf_of(row)]
    }

    /// f̃(x) = 1(η̃(x) > 1/2) for every row.
    pub fn predict(&self, x: ArrayView2<f64>) -> Result<Vec<u8>> {
        Ok(self
            .scores(x)?
            .into_iter()
            .map(|e| u8::from(e > 0.5))
            .collect())
    }

    /// η̃(x) clipped to \[0,1\] (for log-loss style reporting only; `docs/deviations.md#lpct-non-positive-noisy-denominators`).
    pub fn predict_proba(&self, x: ArrayView2<f64>) -> Result<Vec<f64>> {
        Ok(self
            .scores(x)?
            .into_iter()
            .map(|e| e.clamp(0.0, 1.0))
            .collect())
    }

    fn scores(&self, x: ArrayView2<f64>) -> Result<Vec<f64>> {
        if x.ncols() != self.tree.n_features() {
            return Err(bad_data(
                "features",
                format!(
                    "the model uses {} features, the data have {}",
                    self.tree.n_features(),
                    x.ncols()
                ),
            ));
        }
        partition::check_finite(x, "features")?;
        Ok(x.rows()
            .into_iter()
            .map(|r| match r.as_slice() {
                Some(s) => self.eta_of(s),
                None => self.eta_of(&r.to_vec()),
            })
            .collect())
    }
}

/// A fitted LPCT model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LpctModel {
    pub classifier: TreeClassifier,
    pub depth: u32,
    pub lambda: f64,
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
}

impl LpctModel {
    pub fn predict(&self, x: ArrayView2<f64>) -> Result<Vec<u8>> {
        self.classifier.predict(x)
    }
}

/// A fitted LPCT-prune model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PruneModel {
    pub classifier: TreeClassifier,
    pub p0: u32,
    pub p_term: u32,
    /// Whether Algorithm 2 terminated (flag = 1).
    pub flag: bool,
    /// 1 or 2 queries.
    pub rounds: u32,
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
}

impl PruneModel {
    pub fn predict(&self, x: ArrayView2<f64>) -> Result<Vec<u8>> {
        self.classifier.predict(x)
    }
}

/// The features and 0/1 labels of a data set (`what` names it in errors).
pub fn binary_xy<'a>(ds: &'a Dataset, what: &str) -> Result<(ArrayView2<'a, f64>, &'a [u8])> {
    match &ds.target {
        Some(Target::Binary(y)) => {
            partition::check_labels(y, ds.n_rows(), what)?;
            Ok((ds.features.view(), y))
        }
        Some(_) => Err(bad_data(what, "LPCT needs a binary 0/1 target")),
        None => Err(bad_data(what, "no target column")),
    }
}

/// The public and private data sets have the same features (count and, where named, names).
pub(crate) fn check_same_features(public: &Dataset, private: &Dataset) -> Result<()> {
    if public.n_features() != private.n_features() {
        return Err(bad_data(
            "private data",
            format!(
                "{} features, the public data have {}",
                private.n_features(),
                public.n_features()
            ),
        ));
    }
    if !public.feature_names.is_empty()
        && !private.feature_names.is_empty()
        && public.feature_names != private.feature_names
    {
        return Err(bad_data(
            "private data",
            "feature names differ from the public data's (same columns, same order needed)",
        ));
    }
    Ok(())
}

/// The domain box of `settings` for the public features.
pub fn scaler(range: &RangeMode, public: ArrayView2<f64>) -> Result<Scaler> {
    let s = match range {
        RangeMode::Unit => Scaler::unit(public.ncols()),
        RangeMode::PublicMinMax => Scaler::from_public(public)?,
        RangeMode::Bounds { bounds } => Scaler::from_bounds(bounds)?,
    };
    if s.dim() != public.ncols() {
        return Err(invalid(
            "bounds",
            format!("{} bounds for {} features", s.dim(), public.ncols()),
        ));
    }
    Ok(s)
}

/// Step 1–2 of LPCT_FIT: the range and Algorithm 1 on the public sample only.
pub fn partition(settings: &TreeSettings, depth: u32, public: &Dataset) -> Result<Tree> {
    let (x, y) = binary_xy(public, "public data")?;
    let cfg = PartitionConfig {
        depth,
        splitter: settings.splitter,
        criterion: settings.criterion,
        growth: settings.growth,
        seed: settings.seed,
    };
    partition::build(&cfg, x, y, scaler(&settings.range, x)?)
}

/// ε² times the variance, per private holder, of the Laplace noise on a leaf's Ñ_P − S̃_P/2 (the
/// numerator of η̃ − 1/2): 2·(4/ε)² on Ñ_P plus a quarter of it on S̃_P, i.e. 40/ε². Other
/// mechanisms: [`Mechanism::numerator_variance`].
pub const NOISE_VARIANCE: f64 = 40.0;

/// δ of eq. (11) with the mechanism's constants (the default depth's rate; α, γ of Assumptions
/// 1 and 3): (n_P/v + n_Q^{(2α+2d)/(2γα+d)})^{−d/(2α+2d)}, v = `numerator_variance` (the
/// per-holder noise variance of a leaf's numerator, [`Mechanism::numerator_variance`]: c/ε² with
/// c = [`NOISE_VARIANCE`] for the paper's Laplace release), floored at
/// the non-private δ (n_P + n_Q^{(2α+d)/(2γα+d)})^{−d/(2α+d)} (the regime ε ≳ n_P^{d/(2α+2d)}
/// after Theorem 4).
///
/// Eq. (11) itself is (n_P ε²/log N + (n_Q/log N)^{…})^{−d/(2α+2d)}, an order with every constant
/// set to one. Two constants matter at the paper's sample sizes: the privatised error of (30) is
/// the noise sd √(40 n_P)/ε of a leaf's numerator, not √n_P/ε, so a holder's report is worth
/// ε²/40 non-private observations; and the log N factors come from the union bound behind the
/// theorem's probability 1 − 3/(n_P+n_Q)², not from the bias–variance balance, so they are
/// dropped. With both at one the depth ignored the noise (p = 5 at n_P = 10⁴, n_Q = 50, ε = 4:
/// 312 holders per leaf, a numerator signal 312·|η − 1/2| ≲ 100 against a noise sd of 158).
pub fn theory_delta(
    n_p: u64,
    n_q: u64,
    d: usize,
    numerator_variance: f64,
    alpha: f64,
    gamma: f64,
) -> f64 {
    let d = d as f64;
    let (np, nq) = (n_p as f64, n_q as f64);
    let private = (np / numerator_variance
        + nq.powf((2.0 * alpha + 2.0 * d) / (2.0 * gamma * alpha + d)))
    .powf(-d / (2.0 * alpha + 2.0 * d));
    let non_private =
        (np + nq.powf((2.0 * alpha + d) / (2.0 * gamma * alpha + d))).powf(-d / (2.0 * alpha + d));
    private.max(non_private)
}

/// The default depth: Theorem 4's 2^p ≍ δ^{−1} at α = γ = 1 ([`theory_delta`]), p = round(log2
/// δ^{−1}) within [1, 20].
pub fn theory_depth(n_p: u64, n_q: u64, d: usize, epsilon: f64) -> u32 {
    theory_depth_for(Mechanism::Laplace, n_p, n_q, d, epsilon)
}

/// [`theory_depth`] for the reports of `mechanism` at ε (its numerator variance,
/// [`Mechanism::numerator_variance`]).
pub fn theory_depth_for(mechanism: Mechanism, n_p: u64, n_q: u64, d: usize, epsilon: f64) -> u32 {
    let v = mechanism.numerator_variance(epsilon);
    let p = (-theory_delta(n_p, n_q, d, v, 1.0, 1.0).log2()).round();
    if p.is_finite() {
        p.clamp(1.0, 20.0) as u32
    } else {
        1
    }
}

/// The default λ for a partition with `n_leaves` leaves: λ = 1 + 4c·|I|/ε², c = [`NOISE_VARIANCE`]
/// (= 1 + 160|I|/ε²).
///
/// Theorem 4's λ ≍ δ^{((γα−α)∧(2γα−d))/d} is δ⁰ = 1 at α = γ = 1 for every d ≤ 2: an order whose
/// constant decides whether the Laplace noise swamps (8) — the paper's own warning after
/// Theorem 4. With λ = 1 the private noise sd √(40 n_P)/ε of a leaf's numerator dwarfs the public
/// signal, and at n_P = 6,000, n_Q = 600 the accuracy is 0.49–0.63 for ε ≤ 4 with a per-run sd of
/// 0.04–0.08. This constant is the inverse-variance weight when η_Q = η_P (γ = 1, the same
/// assumption as the depth): the numerator's signal is a(S_P + λS_Q) and its variance
/// V + λ²S_Q/4 with V = 40n_P/ε² + S_P/4 (noise plus Bernoulli), maximised at λ* = 4V/S_P =
/// 1 + 160 n_P/(ε² S_P), and S_P ≈ n_P/|I| (equal mass per cell on average). It is
/// Theorem 4's λ ≍ 1 as ε → ∞ and grows with the noise, as "we should rely more on public data
/// with higher privacy constraint" (Section 6, Fig. 7(c)). It uses only ε and the public partition.
pub fn theory_lambda(n_leaves: usize, epsilon: f64) -> f64 {
    theory_lambda_for(Mechanism::Laplace, n_leaves, epsilon)
}

/// [`theory_lambda`] for the reports of `mechanism` at ε: λ = 1 + 4v·|I| with v its per-holder
/// numerator variance ([`Mechanism::numerator_variance`]; 40/ε² for Laplace, 1/(2α²) for Hadamard).
pub fn theory_lambda_for(mechanism: Mechanism, n_leaves: usize, epsilon: f64) -> f64 {
    1.0 + 4.0 * mechanism.numerator_variance(epsilon) * n_leaves as f64
}

/// The one-query part of LPCT shared by every λ: partition, simulated query, public counts.
/// Returns the partition and the four per-leaf sums (`docs/deviations.md#lpct-taxi-scale`/`docs/deviations.md#lpct-noise-reused-across-lambda`: a λ grid reuses them).
pub fn collect(
    settings: &TreeSettings,
    depth: u32,
    epsilon: f64,
    public: &Dataset,
    private: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<(Tree, LeafSums)> {
    check_epsilon(epsilon)?;
    check_same_features(public, private)?;
    let tree = partition(settings, depth, public)?;
    let (xp, yp) = binary_xy(private, "private data")?;
    partition::check_finite(xp, "private data")?;
    let (xq, yq) = binary_xy(public, "public data")?;
    let private_sums =
        privatiser::simulate_sums(&tree, xp, yp, epsilon, ledger, noise, "LPCT leaf reports")?;
    let public_counts = tree.leaf_counts(xq, yq)?;
    Ok((
        tree,
        LeafSums {
            private: private_sums,
            public: public_counts,
        },
    ))
}

/// **LPCT_FIT** (Ma & Yang, Sections 3–4) in the simulated setting: the depth and λ of `cfg` (or the defaults
/// [`theory_depth`] and [`theory_lambda`]).
pub fn fit(
    cfg: &LpctConfig,
    public: &Dataset,
    private: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<LpctModel> {
    let (depth, tree, sums) = query(cfg, public, private, ledger, noise)?;
    let lambda = cfg
        .lambda
        .unwrap_or_else(|| theory_lambda(tree.n_leaves(), cfg.epsilon));
    lpct_model(cfg, depth, tree, &sums, lambda)
}

/// The largest public weight λ accepted: past it the public counts swamp any report and the
/// estimates overflow (issue #41).
pub const MAX_LAMBDA: f64 = 1e12;

/// λ is finite, ≥ 0 and at most [`MAX_LAMBDA`].
pub(crate) fn check_lambda(lambda: f64) -> Result<()> {
    if !(lambda.is_finite() && (0.0..=MAX_LAMBDA).contains(&lambda)) {
        return Err(invalid(
            "lambda",
            format!("must be a finite number in [0, {MAX_LAMBDA:e}], got {lambda}"),
        ));
    }
    Ok(())
}

/// The depth of `cfg` (or [`theory_depth`]) and the one query at that depth.
fn query(
    cfg: &LpctConfig,
    public: &Dataset,
    private: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<(u32, Tree, LeafSums)> {
    if let Some(l) = cfg.lambda {
        check_lambda(l)?;
    }
    let depth = cfg.depth.unwrap_or_else(|| {
        theory_depth(
            private.n_rows() as u64,
            public.n_rows() as u64,
            public.n_features(),
            cfg.epsilon,
        )
    });
    let (tree, sums) = collect(
        &cfg.tree,
        depth,
        cfg.epsilon,
        public,
        private,
        ledger,
        noise,
    )?;
    Ok((depth, tree, sums))
}

/// A guard's z ([`guard`]) is finite and ≥ 0.
pub(crate) fn check_guard(guard: Option<f64>) -> Result<Option<f64>> {
    match guard {
        Some(z) if !(z.is_finite() && z >= 0.0) => {
            Err(invalid("guard", format!("must be finite and ≥ 0, got {z}")))
        }
        _ => Ok(guard),
    }
}

fn lpct_model(
    cfg: &LpctConfig,
    depth: u32,
    tree: Tree,
    sums: &LeafSums,
    lambda: f64,
) -> Result<LpctModel> {
    check_lambda(lambda)?;
    let eta = match check_guard(cfg.guard)? {
        Some(z) => guard::guarded_eta(&tree, sums, lambda, cfg.tree.ratio, z),
        None => sums.eta(lambda, cfg.tree.ratio),
    };
    Ok(LpctModel {
        classifier: TreeClassifier::new(tree, eta, cfg.tree.out_of_range)?,
        depth,
        lambda,
        epsilon: cfg.epsilon,
    })
}

/// LPCT at every λ of a grid from **one** query (`docs/deviations.md#lpct-noise-reused-across-lambda`): one model per λ, same partition and noise.
pub fn fit_grid(
    cfg: &LpctConfig,
    lambdas: &[f64],
    public: &Dataset,
    private: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Vec<LpctModel>> {
    for &l in lambdas {
        check_lambda(l)?;
    }
    let (depth, tree, sums) = query(cfg, public, private, ledger, noise)?;
    lambdas
        .iter()
        .map(|&lambda| lpct_model(cfg, depth, tree.clone(), &sums, lambda))
        .collect()
}

/// The collector's side of LPCT for sums gathered elsewhere: eq. (8) in every leaf (the paper;
/// [`guarded_model_from_sums`] with `None`).
pub fn model_from_sums(
    tree: Tree,
    sums: &LeafSums,
    lambda: f64,
    settings: &TreeSettings,
) -> Result<LpctModel> {
    guarded_model_from_sums(tree, sums, lambda, settings, None)
}

/// [`model_from_sums`] with LPCT's significance guard (`guard = Some(z)`: a leaf keeps its own
/// estimate only when it is z standard deviations from 1/2, else takes its nearest such
/// ancestor's; [`guard`], `docs/deviations.md#lpct-significance-guard`): the `dpfair ldp fit`
/// path, whose default is [`guard::DEFAULT_Z`] as in `fit lpct`. Post-processing of the sums.
///
/// ```
/// use dpfair::lpct::{self, LeafSums, NoisySums};
/// use dpfair::lpct::partition::LeafCounts;
/// let settings = Default::default();
/// let public = dpfair::estimators::example_data(400, 2, 1);
/// let tree = lpct::partition(&settings, 1, &public)?;
/// // Two leaves: one far from 1/2 (300 positives of 400), one within noise (7 of 10).
/// let sums = LeafSums {
///     private: NoisySums {
///         count: vec![400.0, 10.0],
///         positive: vec![300.0, 7.0],
///         n_users: 1_000,
///         epsilon: 8.0,
///         mechanism: Default::default(),
///     },
///     public: LeafCounts { count: vec![0, 0], positive: vec![0, 0] },
/// };
/// let paper = lpct::model_from_sums(tree.clone(), &sums, 0.0, &settings)?;
/// let guarded = lpct::guarded_model_from_sums(tree, &sums, 0.0, &settings, Some(2.0))?;
/// assert_eq!(paper.classifier.leaf_eta(), &[0.75, 0.7]);
/// // The small leaf takes the root's estimate.
/// assert_eq!(guarded.classifier.leaf_eta(), &[0.75, 307.0 / 410.0]);
/// # Ok::<(), dpfair::lpct::LpctError>(())
/// ```
pub fn guarded_model_from_sums(
    tree: Tree,
    sums: &LeafSums,
    lambda: f64,
    settings: &TreeSettings,
    guard: Option<f64>,
) -> Result<LpctModel> {
    check_lambda(lambda)?;
    if sums.n_leaves() != tree.n_leaves() || sums.public.count.len() != tree.n_leaves() {
        return Err(bad_data(
            "reports",
            "sums do not match the partition's leaves",
        ));
    }
    let depth = tree.depth();
    Ok(LpctModel {
        classifier: TreeClassifier::new(
            tree.clone(),
            match check_guard(guard)? {
                Some(z) => guard::guarded_eta(&tree, sums, lambda, settings.ratio, z),
                None => sums.eta(lambda, settings.ratio),
            },
            settings.out_of_range,
        )?,
        depth,
        lambda,
        epsilon: sums.private.epsilon,
    })
}

/// p0 and p_term of `cfg` for these sample sizes (Algorithm 2, or the overrides).
pub fn prune_depths(cfg: &PruneConfig, n_p: u64, n_q: u64, d: usize) -> (u32, u32) {
    prune_depths_for(cfg, Mechanism::Laplace, n_p, n_q, d)
}

/// [`prune_depths`] for the reports of `mechanism`: Algorithm 2's n_P ε² at the mechanism's
/// Laplace-equivalent ε ([`Mechanism::laplace_equivalent_epsilon`]).
pub fn prune_depths_for(
    cfg: &PruneConfig,
    mechanism: Mechanism,
    n_p: u64,
    n_q: u64,
    d: usize,
) -> (u32, u32) {
    let (p0, pt) = prune::depths(
        n_p,
        n_q,
        d,
        mechanism.laplace_equivalent_epsilon(cfg.epsilon),
        partition::MAX_COMPLETE_DEPTH.min(20),
    );
    let p0 = cfg.p0.unwrap_or(p0);
    (p0, cfg.p_term.unwrap_or(pt).min(p0))
}

/// The budget of each query: ε/2 when round 2 may run, else ε (`docs/deviations.md#lpct-two-round-pruning`).
pub fn prune_query_epsilon(cfg: &PruneConfig) -> f64 {
    if cfg.options.invoke_termination {
        cfg.epsilon / 2.0
    } else {
        cfg.epsilon
    }
}

/// What the collector does after round 1.
#[derive(Clone, Debug, PartialEq)]
pub enum PruneStep {
    /// No termination: the pruned tree is the answer.
    Done(PruneModel),
    /// flag = 1 with `invoke_termination`: query π_{p_term} (with ε/2) and fit the private-only
    /// tree (7) with [`prune_round2`].
    SecondRound { p_term: u32 },
}

/// Algorithm 2, round 1, from the sums of π_{p0}'s query.
pub fn prune_round1(
    cfg: &PruneConfig,
    tree: Tree,
    sums: &LeafSums,
    p_term: u32,
) -> Result<PruneStep> {
    if sums.n_leaves() != tree.n_leaves() {
        return Err(bad_data(
            "reports",
            "sums do not match the partition's leaves",
        ));
    }
    let r = prune::round1(&tree, sums, &cfg.options, p_term, check_guard(cfg.guard)?);
    if r.flag && cfg.options.invoke_termination {
        return Ok(PruneStep::SecondRound { p_term });
    }
    let p0 = tree.depth();
    Ok(PruneStep::Done(PruneModel {
        classifier: TreeClassifier::new(tree, r.eta, cfg.tree.out_of_range)?,
        p0,
        p_term,
        flag: r.flag,
        rounds: 1,
        epsilon: cfg.epsilon,
    }))
}

/// Algorithm 2, round 2: the private-only tree (7) on π_{p_term}.
pub fn prune_round2(cfg: &PruneConfig, tree: Tree, sums: &LeafSums, p0: u32) -> Result<PruneModel> {
    let m = model_from_sums(tree, sums, 0.0, &cfg.tree)?;
    Ok(PruneModel {
        classifier: m.classifier,
        p0,
        p_term: m.depth,
        flag: true,
        rounds: 2,
        epsilon: cfg.epsilon,
    })
}

/// **LPCT-prune** (Algorithm 2) in the simulated setting, one or two rounds.
pub fn fit_prune(
    cfg: &PruneConfig,
    public: &Dataset,
    private: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<PruneModel> {
    check_epsilon(cfg.epsilon)?;
    let (p0, p_term) = prune_depths(
        cfg,
        private.n_rows() as u64,
        public.n_rows() as u64,
        public.n_features(),
    );
    let eps_q = prune_query_epsilon(cfg);
    let (tree, sums) = collect(&cfg.tree, p0, eps_q, public, private, ledger, noise)?;
    match prune_round1(cfg, tree, &sums, p_term)? {
        PruneStep::Done(m) => Ok(m),
        PruneStep::SecondRound { p_term } => {
            let (tree2, sums2) = collect(&cfg.tree, p_term, eps_q, public, private, ledger, noise)?;
            prune_round2(cfg, tree2, &sums2, p0)
        }
    }
}

impl TreeClassifier {
    /// The envelope's [`crate::predictor::Output`]: class codes and an n × 2 probability matrix
    /// (η̃ clipped to [0,1]).
    fn output(
        &self,
        method: &str,
        data: &Dataset,
    ) -> crate::predictor::Result<crate::predictor::Output> {
        let err = |e: LpctError| crate::predictor::ModelError::Method {
            method: method.to_string(),
            reason: e.to_string(),
        };
        let x = data.features.view();
        let p = self.predict_proba(x).map_err(err)?;
        let classes = self
            .scores(x)
            .map_err(err)?
            .into_iter()
            .map(|e| u32::from(e > 0.5))
            .collect();
        let probabilities =
            ndarray::Array2::from_shape_fn(
                (p.len(), 2),
                |(i, c)| {
                    if c == 1 { p[i] } else { 1.0 - p[i] }
                },
            );
        Ok(crate::predictor::Output::Classes {
            classes,
            probabilities: Some(probabilities),
        })
    }
}

impl crate::predictor::Predictor for LpctModel {
    fn method(&self) -> &'static str {
        "lpct"
    }

    fn predict(
        &self,
        data: &Dataset,
        _rng: &mut Noise,
    ) -> crate::predictor::Result<crate::predictor::Output> {
        self.classifier.output("lpct", data)
    }
}

impl crate::predictor::Predictor for PruneModel {
    fn method(&self) -> &'static str {
        "lpct-prune"
    }

    fn predict(
        &self,
        data: &Dataset,
        _rng: &mut Noise,
    ) -> crate::predictor::Result<crate::predictor::Output> {
        self.classifier.output("lpct-prune", data)
    }
}
