//! Private Wasserstein-barycenter post-processing for fair regression: Xian, Li, Kamath, Zhao,
//! "Differentially Private Post-Processing for Fair Regression" (ICML 2024).
//!
//! Algorithm 1 (attribute-aware, any number of groups, ε-DP under substitution), step by step:
//!
//! | Algorithm 1 | here |
//! |---|---|
//! | lines 2–3: midpoints, discretizer | [`histogram::Grid`] (with the `+ s` of `docs/deviations.md#fair-regression-bin-midpoints`) |
//! | lines 4–6: Laplace-noised joint histogram | [`histogram::private_joint_histogram`], the only step that reads the data |
//! | lines 8–13: group weights, L∞ isotonic repair | [`histogram::repair_group`] (weight floor 1e-6, `docs/deviations.md#fair-regression-empty-group-weight`) |
//! | line 14: the KS-relaxed barycenter LP | [`lp::solve`] |
//! | lines 16–17: randomized transports | [`Transport`] |
//! | line 18 / Section 3.3: prediction | [`Model::predict`], sampling each output from its group's row |
//!
//! [`fit`] reads a [`Dataset`]; [`fit_scores`] takes scores and group codes; [`fit_from_histogram`]
//! is everything after the release (post-processing, deterministic given the histogram).
//! [`fit_chained`] fits a private linear regressor ([`LinearBase`]) on one part of a public
//! random split and Algorithm 1 on its predictions for the other part, so the model predicts
//! from features (parallel composition: `docs/privacy.md#dp-linear-regression`).
//! Baselines (Chzhen et al. (2020), as the authors' repository re-implements it): [`baselines`]. One-dimensional optimal transport: [`transport`].
//!
//! Privacy (Xian et al., Section 3.4): the whole ε goes to one release of the `m × k` joint counts (sensitivity 2
//! under substitution, n public); everything after it is post-processing. The group set, the
//! interval `[s, t]`, k, α and ε are public. Tuning α or k on data is not accounted (`docs/deviations.md#fair-regression-hyperparameter-selection`).

pub mod baselines;
pub mod histogram;
pub mod lp;
pub mod transport;

use dpfair_data::{Dataset, Target};
use dpfair_learn::LearnError;
use dpfair_learn::linear_regression::{LinearRegressionConfig, LinearRegressionFit, fit_dp_linear};
use dpfair_privacy::ledger::Partition;
use dpfair_privacy::{Ledger, Noise, PrivacyError};
use histogram::{Grid, JointCounts, JointHistogram, private_joint_histogram, repair_group};
use lp::{BarycenterProblem, LpError, SolveOptions, SolvedBy};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Errors of the fair-regression method; each names the parameter, column or row at fault.
#[derive(Debug, Error)]
pub enum FairRegressionError {
    #[error("invalid `{name}`: {reason}")]
    Invalid { name: &'static str, reason: String },
    #[error(transparent)]
    Privacy(#[from] PrivacyError),
    #[error(transparent)]
    Lp(#[from] LpError),
    #[error(transparent)]
    Learn(#[from] LearnError),
    /// Reading a batch of rows failed (a streamed fit, [`fit_batches`]).
    #[error(transparent)]
    Data(#[from] dpfair_data::DataError),
}

/// The library's error for this method's (the crate-wide [`crate::Error`]).
impl From<crate::fair_regression::FairRegressionError> for crate::Error {
    fn from(e: crate::fair_regression::FairRegressionError) -> Self {
        use crate::fair_regression::FairRegressionError as E;
        match e {
            E::Invalid { name, reason } => crate::Error::invalid(name, reason),
            E::Privacy(p) => p.into(),
            E::Lp(lp) => crate::Error::Method {
                method: "fair-regression",
                reason: lp.to_string(),
            },
            E::Learn(l) => l.into(),
            E::Data(d) => d.into(),
        }
    }
}

impl FairRegressionError {
    pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        FairRegressionError::Invalid {
            name,
            reason: reason.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, FairRegressionError>;

/// Configuration. Defaults follow the paper's experiments (the authors' sweeps and notebooks): α = 0 (exact
/// statistical parity, the reference runs), ε = 1, k = 36 (Law School's default), `docs/deviations.md#fair-regression-empty-group-weight` weight
/// floor 1e-6. The interval `[s, t]` has no sensible default and must be given (footnote 1: it must
/// be public; never the data's min/max).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Fairness tolerance α ≥ 0 in KS distance (α ≥ 1 means no fairness constraint).
    pub alpha: f64,
    /// Privacy budget ε > 0 (`f64::INFINITY`: the non-private reference; no noise).
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    /// Number of bins k ≥ 1.
    pub bins: usize,
    /// The public interval `[s, t]` containing the scores.
    pub range: Option<[f64; 2]>,
    /// The public group set, in code order. `None`: the levels of the data's group column,
    /// recorded in the model as taken from the data (`docs/deviations.md#fair-regression-group-set-from-data`).
    pub groups: Option<Vec<String>>,
    /// [`fit`] only: the feature column holding the scores f(x, a); `None`: the real target
    /// (the paper's experiments use f = Id on the response).
    pub score_column: Option<String>,
    /// Fit a private linear regressor first and post-process its predictions, so that the
    /// model predicts from features ([`fit_chained`]); `None`: the scores are given.
    pub base: Option<LinearBase>,
    /// Floor on the private group weights w̃_a (`docs/deviations.md#fair-regression-empty-group-weight`).
    pub weight_floor: f64,
    pub solver: SolveOptions,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            alpha: 0.0,
            epsilon: 1.0,
            bins: 36,
            range: None,
            groups: None,
            score_column: None,
            base: None,
            weight_floor: 1e-6,
            solver: SolveOptions::default(),
        }
    }
}

/// The largest number of bins `k` accepted (2^20): a resource bound checked before any data is
/// read (see [`Config::validate`]).
pub const MAX_BINS: usize = 1 << 20;

impl Config {
    /// Checks α, ε, k (at most [`MAX_BINS`]), the range and the floor; returns the grid.
    pub fn validate(&self) -> Result<Grid> {
        if !(self.alpha.is_finite() && self.alpha >= 0.0) {
            return Err(FairRegressionError::invalid(
                "alpha",
                format!("must be finite and ≥ 0, got {}", self.alpha),
            ));
        }
        if self.epsilon.is_nan() || self.epsilon <= 0.0 {
            return Err(FairRegressionError::invalid(
                "epsilon",
                format!("must be > 0, got {}", self.epsilon),
            ));
        }
        if !(self.weight_floor.is_finite() && self.weight_floor > 0.0) {
            return Err(FairRegressionError::invalid(
                "weight_floor",
                format!("must be > 0, got {}", self.weight_floor),
            ));
        }
        if self.bins > MAX_BINS {
            return Err(FairRegressionError::invalid(
                "bins",
                format!(
                    "k = {} exceeds the limit {MAX_BINS}: the histograms and transport bands take \
                     O(k) memory per group and the LP O(k) variables per group (more bins than \
                     that also leave each bin nearly empty, so the Laplace noise dominates)",
                    self.bins
                ),
            ));
        }
        let [lo, hi] = self.range.ok_or_else(|| {
            FairRegressionError::invalid("range", "the public interval [s, t] must be given")
        })?;
        if let Some(base) = &self.base {
            if self.score_column.is_some() {
                return Err(FairRegressionError::invalid(
                    "score_column",
                    "a base regressor makes the scores: give one or the other",
                ));
            }
            if !(base.fraction > 0.0 && base.fraction < 1.0) {
                return Err(FairRegressionError::invalid(
                    "base_fraction",
                    format!("must be in (0, 1), got {}", base.fraction),
                ));
            }
            base.linear_config(self).validate().map_err(|e| {
                FairRegressionError::invalid("base", format!("the base regressor's {e}"))
            })?;
        }
        Grid::new(lo, hi, self.bins)
    }
}

/// The private regressor fair regression chains after (`--base dp-linear`): DP linear
/// regression by noisy sufficient statistics ([`dpfair_learn::linear_regression`]) on a share
/// of the rows, its target clipped to the public interval `[s, t]`, which then also holds its
/// predictions. Defaults: δ = 10⁻⁵, R = √(source columns) (one per numeric column and one per
/// one-hot group), the automatic ridge, half the rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LinearBase {
    /// δ of the base's Gaussian release (the post-processor is pure ε-DP).
    pub delta: f64,
    /// R: rows are scaled down to ℓ2 norm at most R (`None`: √(source columns)).
    pub row_bound: Option<f64>,
    /// λ added to the released XᵀX (`None`: automatic).
    pub ridge: Option<f64>,
    /// The share of the rows the base is fitted on; the post-processor gets the others.
    pub fraction: f64,
}

impl Default for LinearBase {
    fn default() -> Self {
        LinearBase {
            delta: 1e-5,
            row_bound: None,
            ridge: None,
            fraction: 0.5,
        }
    }
}

impl LinearBase {
    /// The regressor's settings under `config`: the same ε (its rows are disjoint from the
    /// post-processor's) and the public interval as its target range.
    pub fn linear_config(&self, config: &Config) -> LinearRegressionConfig {
        LinearRegressionConfig {
            epsilon: config.epsilon,
            delta: self.delta,
            target_range: config.range,
            row_bound: self.row_bound,
            ridge: self.ridge,
        }
    }

    /// (base rows, post-processor rows) of `n`: public sizes.
    pub fn sizes(&self, n: usize) -> (usize, usize) {
        let base = ((n as f64) * self.fraction).round() as usize;
        (base, n - base)
    }
}

/// Lines 16–17: group a's randomized transport `g_a`, a row-stochastic k × k matrix stored by rows
/// (`rows[j]` = the (ℓ, probability) pairs of row j; rows are monotone bands, Lemma B.9).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transport {
    pub rows: Vec<Vec<(u32, f64)>>,
}

impl Transport {
    /// Xian et al., Algorithm 1, lines 16–17: row j of the coupling normalized by its sum; a row without mass is the identity.
    pub fn from_coupling(c: &transport::Coupling) -> Self {
        let mut rows: Vec<Vec<(u32, f64)>> = vec![Vec::new(); c.k];
        for &(j, l, m) in &c.entries {
            rows[j as usize].push((l, m));
        }
        for (j, row) in rows.iter_mut().enumerate() {
            let total: f64 = row.iter().map(|e| e.1).sum();
            if total > 0.0 {
                row.iter_mut().for_each(|e| e.1 /= total);
            } else {
                *row = vec![(j as u32, 1.0)];
            }
        }
        Transport { rows }
    }

    /// Draw an output bin for input bin j (inverse CDF over the row).
    pub fn sample<R: Rng + ?Sized>(&self, j: usize, rng: &mut R) -> usize {
        let row = &self.rows[j];
        let u: f64 = rng.random();
        let mut acc = 0.0;
        for &(l, p) in row {
            acc += p;
            if u < acc {
                return l as usize;
            }
        }
        row.last().map_or(j, |e| e.0 as usize)
    }

    /// The push-forward `Σ_j p(j) G(j, ·)` of a PMF on the bins (the output law on the training distribution).
    pub fn push_forward(&self, p: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; p.len()];
        for (row, pj) in self.rows.iter().zip(p) {
            for &(l, g) in row {
                out[l as usize] += pj * g;
            }
        }
        out
    }
}

/// Where the group set came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GroupSource {
    /// Declared by the user (public schema information).
    Declared,
    /// The levels found in the data, recorded as public (`docs/deviations.md#fair-regression-group-set-from-data`: strictly, reading them is a leak).
    Data,
}

/// The fitted post-processor `(x, a) ↦ g_a(h(f(x, a)))` with what it was fitted from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// The feature column holding the scores (`None`: the real target, as in the paper's runs).
    pub score_column: Option<String>,
    pub grid: Grid,
    pub alpha: f64,
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    pub group_names: Vec<String>,
    pub group_source: GroupSource,
    /// Groups whose noisy mass was at most the weight floor (`docs/deviations.md#fair-regression-empty-group-weight`): near-empty or absent.
    pub near_empty_groups: Vec<String>,
    /// `w̃_a` (not normalized, `docs/deviations.md#fair-regression-unnormalised-weights`).
    pub weights: Vec<f64>,
    /// `p̃_a`: the private group-conditional PMFs.
    pub pmfs: Vec<Vec<f64>>,
    /// `q̃_a`: the groups' target PMFs (pairwise KS ≤ α).
    pub targets: Vec<Vec<f64>>,
    /// A barycenter CDF `B` (centre of the KS balls).
    pub center_cdf: Vec<f64>,
    /// The LP value in index units and in value units (× Δ², `docs/deviations.md#fair-regression-stored-score-in-the-code`).
    pub lp_value_index: f64,
    pub lp_value: f64,
    pub solved_by: SolvedBy,
    pub transports: Vec<Transport>,
    /// The base regressor whose predictions are the scores (`--base dp-linear`); `None`: the
    /// scores are read from `score_column` or the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<LinearRegressionFit>,
}

/// Predictions and how many scores fell outside the public interval (clamped to the end bins).
#[derive(Clone, Debug, PartialEq)]
pub struct Predictions {
    pub values: Vec<f64>,
    pub out_of_range: usize,
}

impl Model {
    /// Line 18 / Xian et al., Section 3.3: `ȳ = v_ℓ` with ℓ drawn from row `bin(score)` of the group's transport,
    /// independently for every query (`docs/deviations.md#fair-regression-sampling-the-randomised-output`). Scores outside `[s, t]` go to the end bins and are
    /// counted. `groups` are codes into [`Model::group_names`].
    pub fn predict<R: Rng + ?Sized>(
        &self,
        scores: &[f64],
        groups: &[u32],
        rng: &mut R,
    ) -> Result<Predictions> {
        if scores.len() != groups.len() {
            return Err(FairRegressionError::invalid(
                "groups",
                format!("{} group codes for {} scores", groups.len(), scores.len()),
            ));
        }
        self.check_shape()?;
        let mut out_of_range = 0;
        let values = scores
            .iter()
            .zip(groups)
            .enumerate()
            .map(|(i, (&y, &a))| {
                if y.is_nan() {
                    return Err(FairRegressionError::invalid(
                        "scores",
                        format!("row {i} is NaN"),
                    ));
                }
                let t = self.transports.get(a as usize).ok_or_else(|| {
                    FairRegressionError::invalid(
                        "groups",
                        format!(
                            "row {i}: group code {a} is not one of the model's {} groups",
                            self.transports.len()
                        ),
                    )
                })?;
                if !self.grid.contains(y) {
                    out_of_range += 1;
                }
                Ok(self.grid.midpoint(t.sample(self.grid.bin(y), rng)))
            })
            .collect::<Result<Vec<f64>>>()?;
        Ok(Predictions {
            values,
            out_of_range,
        })
    }

    /// A model read from a file is checked before use: a valid grid of at most [`MAX_BINS`] bins
    /// and, for every group, a transport of `k` rows whose entries are bins below `k` with
    /// finite non-negative probabilities (an edited file must not index out of range).
    pub fn check_shape(&self) -> Result<()> {
        let g = &self.grid;
        Grid::new(g.lo, g.hi, g.k)?;
        if g.k > MAX_BINS {
            return Err(FairRegressionError::invalid(
                "bins",
                format!("the model's grid has {} bins (limit {MAX_BINS})", g.k),
            ));
        }
        for (a, t) in self.transports.iter().enumerate() {
            let bad_entry = t
                .rows
                .iter()
                .flatten()
                .any(|&(l, p)| l as usize >= g.k || !(p.is_finite() && p >= 0.0));
            if t.rows.len() != g.k || bad_entry {
                return Err(FairRegressionError::invalid(
                    "transports",
                    format!(
                        "the transport of group {a} does not fit the model's grid of {} bins (a corrupted model file?)",
                        g.k
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Code of a group name.
    pub fn group_code(&self, name: &str) -> Option<u32> {
        self.group_names
            .iter()
            .position(|g| g == name)
            .map(|i| i as u32)
    }
}

/// Lines 8–18 given the released histogram: post-processing only (no data access). Deterministic
/// given the histogram and the configuration.
pub fn fit_from_histogram(
    config: &Config,
    hist: &JointHistogram,
    group_names: Vec<String>,
    group_source: GroupSource,
) -> Result<Model> {
    let grid = config.validate()?;
    if hist.k != grid.k || hist.m != group_names.len() || hist.h.len() != hist.m * hist.k {
        return Err(FairRegressionError::invalid(
            "histogram",
            format!(
                "shape {} × {} does not match {} groups × {} bins",
                hist.m,
                hist.k,
                group_names.len(),
                grid.k
            ),
        ));
    }
    let repaired: Vec<_> = hist
        .h
        .chunks(hist.k)
        .map(|row| repair_group(row, config.weight_floor))
        .collect();
    let near_empty_groups = repaired
        .iter()
        .zip(&group_names)
        .filter(|(r, _)| r.floored)
        .map(|(_, g)| g.clone())
        .collect();
    let problem = BarycenterProblem::new(
        repaired.iter().map(|r| r.pmf.clone()).collect(),
        repaired.iter().map(|r| r.weight).collect(),
        config.alpha,
    )?;
    let sol = lp::solve(&problem, &config.solver)?;
    let width = grid.width();
    Ok(Model {
        score_column: config.score_column.clone(),
        grid,
        alpha: config.alpha,
        epsilon: hist.epsilon,
        group_names,
        group_source,
        near_empty_groups,
        weights: problem.weights.clone(),
        pmfs: problem.pmfs.clone(),
        targets: sol.targets.clone(),
        center_cdf: sol.center_cdf.clone(),
        lp_value_index: sol.value,
        lp_value: sol.value * width * width,
        solved_by: sol.solved_by,
        transports: sol.couplings.iter().map(Transport::from_coupling).collect(),
        base: None,
    })
}

/// Algorithm 1 on scores `f(x_i, a_i)` with group codes in `0..group_names.len()` (the public
/// group set; a declared group absent from the data is floored, `docs/deviations.md#fair-regression-empty-group-weight`).
pub fn fit_scores(
    config: &Config,
    scores: &[f64],
    groups: &[u32],
    group_names: Vec<String>,
    group_source: GroupSource,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    let grid = config.validate()?;
    let hist = private_joint_histogram(
        scores,
        groups,
        group_names.len(),
        &grid,
        config.epsilon,
        ledger,
        noise,
    )?;
    fit_from_histogram(config, &hist, group_names, group_source)
}

/// What Algorithm 1 reads from a data set.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoredGroups {
    pub scores: Vec<f64>,
    /// Codes into `group_names`.
    pub codes: Vec<u32>,
    pub group_names: Vec<String>,
    pub source: GroupSource,
}

/// The scores (the `score_column` feature, else the real target) and the group codes of a data
/// set, mapped to the configured group set; with the group names and their source.
pub fn scores_and_groups(config: &Config, data: &Dataset) -> Result<ScoredGroups> {
    let scores = match &config.score_column {
        Some(col) => {
            let j = data
                .feature_names
                .iter()
                .position(|f| f == col)
                .ok_or_else(|| {
                    FairRegressionError::invalid(
                        "score_column",
                        format!("no feature column `{col}`"),
                    )
                })?;
            data.features.column(j).to_vec()
        }
        None => real_target(data)?.to_vec(),
    };
    let (codes, group_names, source) = group_codes(config, data)?;
    Ok(ScoredGroups {
        scores,
        codes,
        group_names,
        source,
    })
}

/// The real target of `data`, or an error saying that there is none.
fn real_target(data: &Dataset) -> Result<&[f64]> {
    match &data.target {
        Some(Target::Real(y)) => Ok(y),
        _ => Err(FairRegressionError::invalid(
            "score_column",
            "not given and the data set has no real-valued target",
        )),
    }
}

/// The group codes of `data` mapped to the configured group set, the group names and their
/// source.
fn group_codes(config: &Config, data: &Dataset) -> Result<(Vec<u32>, Vec<String>, GroupSource)> {
    let groups = data.groups.as_ref().ok_or_else(|| {
        FairRegressionError::invalid("groups", "the data set has no sensitive-attribute column")
    })?;
    Ok(match &config.groups {
        None => (
            groups.codes.clone(),
            groups.names.clone(),
            GroupSource::Data,
        ),
        Some(declared) => {
            let map: Vec<u32> = groups
                .names
                .iter()
                .map(|n| {
                    declared.iter().position(|d| d == n).map(|i| i as u32).ok_or_else(|| {
                        FairRegressionError::invalid(
                            "groups",
                            format!("the data has group `{n}`, which is not among the declared groups {declared:?}"),
                        )
                    })
                })
                .collect::<Result<_>>()?;
            let codes = groups.codes.iter().map(|&c| map[c as usize]).collect();
            (codes, declared.clone(), GroupSource::Declared)
        }
    })
}

/// Fair regression from features: the base regressor ([`LinearBase`]) on one part of a public,
/// data-independent random split of the rows, Algorithm 1 on its predictions for the other
/// part. Each part is charged in its own part of the split, so the two releases compose in
/// parallel (a replaced row is in one part only): the fit is (ε, δ)-DP with δ the base's.
pub fn fit_chained(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    config.validate()?;
    let base = config.base.as_ref().ok_or_else(|| {
        FairRegressionError::invalid("base", "fit_chained needs a base regressor")
    })?;
    let y = real_target(data).map_err(|_| {
        FairRegressionError::invalid(
            "target",
            "a base regressor needs a real-valued target to learn from",
        )
    })?;
    let (codes, group_names, source) = group_codes(config, data)?;
    let n = data.n_rows();
    let (n_base, n_post) = base.sizes(n);
    if n_base < 2 || n_post < 2 {
        return Err(FairRegressionError::invalid(
            "base_fraction",
            "too few rows for the base regressor or the post-processor (each needs 2)",
        ));
    }
    let seed = noise.public_u64();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    let post_rows = idx.split_off(n_base);
    let partition = Partition::new(
        "fair regression: base regressor / post-processor rows",
        &["base regressor rows", "post-processor rows"],
        seed,
    );
    let xb = data.features.select(ndarray::Axis(0), &idx);
    let yb: Vec<f64> = idx.iter().map(|&i| y[i]).collect();
    let mut linear = base.linear_config(config);
    linear.row_bound = linear.row_bound.or(Some(crate::inputs::dp_linear_row_bound(
        &data.feature_names,
    )));
    let fit = ledger.in_part(&partition, 0, |l| {
        Ok(fit_dp_linear(&linear, xb.view(), &yb, l, noise))
    })??;
    let xp = data.features.select(ndarray::Axis(0), &post_rows);
    let scores = fit.predict(xp.view())?;
    let groups: Vec<u32> = post_rows.iter().map(|&i| codes[i]).collect();
    let mut model = ledger.in_part(&partition, 1, |l| {
        Ok(fit_scores(
            config,
            &scores,
            &groups,
            group_names,
            source,
            l,
            noise,
        ))
    })??;
    model.base = Some(fit);
    Ok(model)
}

/// Algorithm 1 on a data set (`fit(&Config, &Dataset, &mut Ledger, &mut Noise)`, DESIGN.md):
/// with a base regressor [`fit_chained`], else [`fit_batches`] on the data set as one batch.
pub fn fit(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    if config.base.is_some() {
        return fit_chained(config, data, ledger, noise);
    }
    fit_batches(config, data, ledger, noise, |sink| sink(data))
}

/// Algorithm 1 from batches of rows, never holding them all: `feed` hands each batch (a data
/// set with the columns and groups of `header`) to the sink it is given, which adds the
/// batch's scores to the mergeable joint counts ([`histogram::JointCounts`]); the counts are
/// released once, after the last batch. `header` needs no rows: its feature names and group
/// names say where the scores and groups are. Not with a base regressor (DP-linear needs all
/// rows at once).
///
/// ```
/// use dpfair::fair_regression::{Config, fit_batches};
/// use dpfair_privacy::{Budget, Ledger, Noise};
/// let data = dpfair::estimators::example_data(600, 1, 4);
/// let config = Config {
///     range: Some([0.0, 1.0]),
///     bins: 10,
///     score_column: Some(data.feature_names[0].clone()),
///     ..Config::default()
/// };
/// let (first, second) = (data.select(&(0..300).collect::<Vec<_>>()),
///                        data.select(&(300..600).collect::<Vec<_>>()));
/// let mut ledger = Ledger::new(Budget::pure(1.0)?);
/// let model = fit_batches(&config, &data, &mut ledger, &mut Noise::seeded(1), |sink| {
///     sink(&first)?;
///     sink(&second)
/// })?;
/// assert_eq!(model.group_names.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit_batches(
    config: &Config,
    header: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
    feed: impl FnOnce(&mut dyn FnMut(&Dataset) -> Result<()>) -> Result<()>,
) -> Result<Model> {
    if config.base.is_some() {
        return Err(FairRegressionError::invalid(
            "base",
            "the base regressor (DP-linear) needs all rows at once: it cannot be fitted batch \
             by batch (give a score column instead)",
        ));
    }
    let grid = config.validate()?;
    let (_, group_names, _) = group_codes(config, header)?;
    let mut counts = JointCounts::new(group_names.len(), grid);
    feed(&mut |batch| {
        let d = scores_and_groups(config, batch)?;
        if d.group_names != group_names {
            return Err(FairRegressionError::invalid(
                "groups",
                "a batch has other groups than the first",
            ));
        }
        counts.update(&d.scores, &d.codes)
    })?;
    fit_counts(config, header, &counts, ledger, noise)
}

/// Algorithm 1 from joint counts accumulated elsewhere (by parts, merged: a distributed
/// engine's workers, `docs/deploy.md`): the counts are released once, here, with `noise`, then
/// post-processed. `header` (no rows needed) gives the group names, as in [`fit_batches`]; the
/// counts must be for those groups and the configuration's grid.
///
/// ```
/// use dpfair::fair_regression::{Config, fit_counts, histogram::JointCounts};
/// use dpfair_privacy::{Budget, Ledger, Noise};
/// let data = dpfair::estimators::example_data(600, 1, 4);
/// let config = Config {
///     range: Some([0.0, 1.0]),
///     bins: 10,
///     score_column: Some(data.feature_names[0].clone()),
///     ..Config::default()
/// };
/// let mut counts = JointCounts::new(2, config.validate()?);
/// let groups = &data.groups.as_ref().unwrap().codes;
/// counts.update(&data.features.column(0).to_vec(), groups)?;
/// let mut ledger = Ledger::new(Budget::pure(1.0)?);
/// let model = fit_counts(&config, &data, &counts, &mut ledger, &mut Noise::seeded(1))?;
/// assert_eq!(model.group_names.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit_counts(
    config: &Config,
    header: &Dataset,
    counts: &JointCounts,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    let grid = config.validate()?;
    let (_, group_names, source) = group_codes(config, header)?;
    if counts.groups() != group_names.len() || counts.grid() != grid {
        return Err(FairRegressionError::invalid(
            "histogram",
            format!(
                "counts for {} groups × {} bins on [{}, {}], the configuration has {} groups × {} \
                 bins on [{}, {}]",
                counts.groups(),
                counts.grid().k,
                counts.grid().lo,
                counts.grid().hi,
                group_names.len(),
                grid.k,
                grid.lo,
                grid.hi
            ),
        ));
    }
    if counts.counts().iter().sum::<u64>() == 0 {
        return Err(FairRegressionError::invalid("data", "no rows"));
    }
    let hist = counts.finalize(config.epsilon, ledger, noise)?;
    fit_from_histogram(config, &hist, group_names, source)
}

/// `dpfair predict`: scores from the model's score column (or the real target), groups from the
/// sensitive column; scores outside `[s, t]` are clamped to the end bins and counted in a warning
/// on stderr (the envelope's [`Output`](crate::predictor::Output) has no warnings channel).
impl crate::predictor::Predictor for Model {
    fn method(&self) -> &'static str {
        "fair-regression"
    }

    fn predict(
        &self,
        data: &Dataset,
        rng: &mut Noise,
    ) -> crate::predictor::Result<crate::predictor::Output> {
        let err = |reason: String| crate::predictor::ModelError::Method {
            method: "fair-regression".into(),
            reason,
        };
        let scores =
            match (&self.base, &self.score_column) {
                (Some(base), _) => base
                    .predict(data.features.view())
                    .map_err(|e| err(e.to_string()))?,
                (None, Some(col)) => {
                    let j = data
                        .feature_names
                        .iter()
                        .position(|f| f == col)
                        .ok_or_else(|| err(format!("the data has no score column `{col}`")))?;
                    data.features.column(j).to_vec()
                }
                (None, None) => match &data.target {
                    Some(Target::Real(y)) => y.clone(),
                    _ => return Err(err(
                        "the model reads its scores from the target column, which the data lacks"
                            .into(),
                    )),
                },
            };
        let groups = data
            .groups
            .as_ref()
            .ok_or_else(|| err("the data has no sensitive-attribute column".into()))?;
        let p =
            Model::predict(self, &scores, &groups.codes, rng).map_err(|e| err(e.to_string()))?;
        if p.out_of_range > 0 {
            eprintln!(
                "warning: {} of {} scores lie outside the model's range [{}, {}]; they were clipped to it",
                p.out_of_range,
                scores.len(),
                self.grid.lo,
                self.grid.hi
            );
        }
        Ok(crate::predictor::Output::Values(p.values))
    }
}
