//! CDP-Fair: the central-DP fair plug-in classifier under demographic disparity, Algorithm 5 of
//! Xue & Yu, "Federated fairness-aware classification under differential privacy", with the
//! baselines of their §5.2.
//!
//! Algorithm 5, step by step:
//! 1. **Split** (step 1): a random, data-independent split, `n = ⌊N/2⌋` training rows and
//!    `ň = N − n` calibration rows ([`crate::plugin::split`]).
//! 2. **S1** on the training half: `π̃_a`, `η̃_a` released as one finite, exactly private object
//!    in a public random-feature basis ([`crate::plugin::release`], `docs/deviations.md#fdp-fair-gp-sample-paths-drawn-once`).
//! 3. **S2** on the calibration half: the threshold `τ̃ ≈ argmin{|τ| : |D̂D(τ)| ≤ α}`. Strict:
//!    chosen privately on a public grid by the exponential mechanism (below). Paper: one
//!    Gaussian shift `w̌` of the empirical DD curve and the exact sweep
//!    ([`crate::plugin::threshold`]).
//! 4. **OUTPUT** `f̃(x,a) = 1{η̃_a(x) ≥ 1/2 + τ̃(2a−1)/(2π̃_a)}` (randomised only at ties, `docs/deviations.md#fdp-fair-ties-in-dd`).
//!
//! ## Accounting
//!
//! [`Accounting::Strict`] (default) delivers the paper's claimed `(ε, δ)` with the experiments'
//! unaccounted leaks fixed (`docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments`):
//! no cross-fitting unless asked (then `ε/2, δ/2` per fold); a public bandwidth rule; private
//! `π̃`; noise scales from public quantities only — the functions are normalised by the public
//! `n`, and the DD curve's sensitivity uses a floor `m` on the calibration group sizes computed
//! from the already released `π̃`; `C_K = ‖φ‖² = 1` by construction; the analytic Gaussian at
//! every ε (`docs/deviations.md#fdp-fair-gaussian-mechanism-for-epsilon-above-1`); and `τ̃`
//! released by a mechanism that is DP for every event
//! (`docs/deviations.md#fdp-fair-privacy-of-the-threshold-release`, below).
//!
//! **Budget split (strict).** S1 and S2 touch disjoint halves of a data-independent split, so
//! each gets the whole budget (parallel composition): S1 one vector Gaussian release at `(ε, δ)`
//! on the training half ([`crate::plugin::release`]); S2 one exponential-mechanism release at
//! pure `ε` on the calibration half (its δ is unused). Two ledger entries, total `(ε, δ)`; with
//! cross-fitting four entries at `(ε/2, δ/2)`.
//!
//! **Strict S2.** Candidates: the public grid of [`Config::tau_grid`] points on
//! `[−max π̃_a, max π̃_a]` (a post-processing of S1; the curve is constant beyond it). Utility
//! [`crossing_utility`](crate::plugin::threshold::crossing_utility): `−|D̂D(τ) − α sgn(τ)|`, which peaks at Algorithm 5's target; its
//! sensitivity is that of the curve, `2/m`. The choice is made by permute-and-flip (the privacy
//! crate's `exponential_mechanism`), ε-DP for every event. Utility cost: the selected point's
//! `D̂D` is within about `(2Δ/ε)·ln(#grid/#near-optimal points)` of `±α`
//! (≈ 0.03 at N = 5,000, ε = 1), against the Gaussian shift's σ ≈ 0.014 — the price of a
//! guarantee for point events; on the synthetic design the mean test error and |DD| did not
//! change measurably (BENCHMARKS.md, "CDP-Fair"). The classifier uses the paper's `≥` rule at the grid point, with
//! no tie randomisation (`docs/deviations.md#fdp-fair-ties-in-dd`): where many scores coincide (unscaled integer features) the curve
//! can jump across `±α` between two grid points, and the realised disparity is then the value on
//! one side of the jump (randomising the tied points, as the paper-mode sweep does, would need
//! their private count). With `[0, 1]`-scaled features the scores are continuous and this does
//! not arise (Adult with `--bounds`, α = 0.1, ε = 1: in-sample |DD| 0.097–0.101 over 4 seeds).
//!
//! [`Accounting::Paper`] runs the authors' experimental procedure (cross-fitting, 3-fold CV for
//! `h`, "known" empirical `π`, the classical σ formulas, DD noise with the total `ň`) and the
//! ledger records what that really costs: non-private steps as `ε = ∞`, each σ at its true
//! sensitivity, both folds of the cross-fit sequentially.
//!
//! **Paper S2 and its real cost (`docs/deviations.md#fdp-fair-privacy-of-the-threshold-release`).** The paper proves `P(τ̃ ≤ t | D) ≤ e^ε P(τ̃' ≤ t | D')
//! + δ` for half-lines only. That is weaker than `(ε, δ)`-DP: the swept `τ̃` always sits on a
//! breakpoint, a calibration score, and neighbouring data sets put probability mass on different
//! breakpoints (`τ̃` lands on one record's score with probability up to about
//! `1/(ň_min σ √(2π))`, ≈ 5% in the test `cdp_fair_audit`, where the auditor proves ε > 1). Paper
//! mode therefore records two S2 entries: the Gaussian shift at its true sensitivity (valid for
//! the half-line events) and the location of `τ̃` as non-private (`ε = ∞`).

use crate::plugin::RffBasis;
use crate::plugin::classifier::FairPluginClassifier;
use crate::plugin::error::{Error, Result, invalid};
use crate::plugin::eta_model::{EtaModel, S1Statistics};
use crate::plugin::kernel::{Bandwidth, cross_validate, public_rule};
use crate::plugin::logistic::{LogisticS1, public_l2};
use crate::plugin::release::{
    Calibration, KernelSums, PiRelease, PluginEstimate, S1Accounting, S1Plan, classical_sigma,
    eta_grouped_many, gaussian_release_vec,
};
use crate::plugin::split::random_split;
use crate::plugin::threshold::{
    GroupRule, ScoreSet, crossing_utility_at, score, sweep_threshold, tau_grid,
};
use dpfair_data::{Dataset, Target};
use dpfair_privacy::mechanisms::exponential_mechanism;
use dpfair_privacy::{Entry, Ledger, Noise, Partition};
use ndarray::{ArrayView2, Axis};
use serde::{Deserialize, Serialize};

pub use crate::predictor::Accounting;

pub mod all_rows;
mod baselines;
mod grid_counts;
mod model;
pub use baselines::{
    FairnessOnlyFolds, fairness_only_folds, fit_fairness_only, fit_privacy_only, fit_unconstrained,
};
pub use grid_counts::GridCounts;
pub use model::{Method, Model};

/// Floor `m ≤ min(ň_0, ň_1)` on the calibration group sizes in strict mode: the DD curve is
/// normalised by `max(ň_a, m)`, so its sensitivity `2/m` is public (`docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "kebab-case")]
pub enum DdFloor {
    /// From the released `π̃` (post-processing of S1, which saw only the training half):
    /// `m = ⌊ň π̃_min − sds·sqrt(ň π̃_min)⌋ ∨ 1`, i.e. `sds` binomial standard deviations below
    /// the expected smaller group size.
    FromPi { sds: f64 },
    /// A public lower bound on both calibration group sizes.
    Public { min_group: usize },
}

impl Default for DdFloor {
    fn default() -> Self {
        DdFloor::FromPi { sds: 4.0 }
    }
}

/// CDP-Fair configuration. Defaults are the paper's where they are valid (α = 0.1 as in Figure 2,
/// ε = 1, δ = (N/2)^{−2}) and the strict replacements otherwise (documented per field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Disparity level α ≥ 0 (|DD| ≤ α).
    pub alpha: f64,
    /// Total ε.
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    /// Total δ; `None` = the paper's `(N/2)^{−2}` (§5.1.1).
    pub delta: Option<f64>,
    pub accounting: Accounting,
    /// Bandwidth rule; `None` = the public rule (strict) or the code's 3-fold CV on
    /// `{0.10, …, 0.35}` (paper).
    pub bandwidth: Option<Bandwidth>,
    /// Number of random frequencies `D` of the basis (the basis has `2D` functions).
    pub n_frequencies: usize,
    /// Seed of the public basis; `None` = drawn from the noise source and recorded in the model.
    pub basis_seed: Option<u64>,
    /// Seed of the split; `None` = drawn from the noise source and recorded in the model.
    pub split_seed: Option<u64>,
    /// Cross-fitting (§5.1.1): `None` = off (strict), on (paper).
    pub cross_fit: Option<bool>,
    /// π handling; `None` = private (strict), empirical (paper, "known π").
    pub pi: Option<PiRelease>,
    /// The floor on the calibration group sizes behind the DD curve's sensitivity (strict only).
    pub dd_floor: DdFloor,
    /// Number of public candidate thresholds of strict S2 (odd, ≥ 3; see the module docs).
    pub tau_grid: usize,
    /// The estimator of `η_a` (default: the paper's kernel; `auto` picks by a public rule,
    /// [`EtaModel::resolve`]; `docs/deviations.md#fdp-fair-logistic-plug-in`).
    pub eta_model: EtaModel,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            alpha: 0.1,
            epsilon: 1.0,
            delta: None,
            accounting: Accounting::Strict,
            bandwidth: None,
            n_frequencies: DEFAULT_FREQUENCIES,
            basis_seed: None,
            split_seed: None,
            cross_fit: None,
            pi: None,
            dd_floor: DdFloor::default(),
            tau_grid: DEFAULT_TAU_GRID,
            eta_model: EtaModel::Kernel,
        }
    }
}

/// Default number of candidate thresholds of strict S2: a step of `2 max π̃/2000` (≈ 3e−4 on the
/// synthetic design, where the DD curve's slope near `τ*` is ≈ 10, so ≈ 0.003 in DD), at a cost
/// of `ln 2001 ≈ 7.6` in the exponential mechanism's error bound.
pub const DEFAULT_TAU_GRID: usize = 2001;

/// The accepted range of a fixed kernel bandwidth `h` on [0, 1]-scaled features: beyond it the
/// random-feature frequencies `ω/h` or the kernel scale `h^{-d}` are no longer finite numbers.
pub const MIN_BANDWIDTH: f64 = 1e-6;
pub const MAX_BANDWIDTH: f64 = 1e3;

/// The largest `--tau-grid` accepted (2^20 + 1 points, 8 MB per array over the grid): a
/// resource bound checked before any data is read. Past the number of distinct scores a finer
/// grid adds nothing, and the exponential mechanism's error bound grows as `ln(grid)`.
pub const MAX_TAU_GRID: usize = (1 << 20) + 1;

/// Default number of random frequencies (see BENCHMARKS.md, "CDP-Fair (Xue & Yu)", for the
/// approximation error against the exact kernel estimator).
pub const DEFAULT_FREQUENCIES: usize = 1024;

/// The group codes (0/1) and binary labels of a data set, validated.
pub fn groups_and_labels(data: &Dataset) -> Result<(&[u32], &[u8])> {
    let groups = data
        .groups
        .as_ref()
        .ok_or_else(|| Error::InvalidData("no sensitive attribute (groups)".into()))?;
    if groups.count() != 2 {
        return Err(Error::InvalidData(format!(
            "CDP-Fair's and FDP-Fair's Algorithms 5 and 1 need exactly two groups, the \
             sensitive attribute has {} ({}); for more groups use the group-thresholds \
             classifier (`dpfair fit group-thresholds`, or CDP-Fair's estimator, which fits it \
             for more than two groups)",
            groups.count(),
            groups.names.join(", ")
        )));
    }
    let y = match &data.target {
        Some(Target::Binary(y)) => y.as_slice(),
        Some(_) => return Err(Error::InvalidData("the target must be binary (0/1)".into())),
        None => return Err(Error::InvalidData("no target".into())),
    };
    if groups.codes.len() != data.n_rows() || y.len() != data.n_rows() {
        return Err(Error::InvalidData(format!(
            "{} rows, {} group codes, {} labels",
            data.n_rows(),
            groups.codes.len(),
            y.len()
        )));
    }
    if let Some(i) = groups.codes.iter().position(|&g| g > 1) {
        return Err(Error::InvalidData(format!(
            "row {i}: group code {}",
            groups.codes[i]
        )));
    }
    if let Some(i) = y.iter().position(|&v| v > 1) {
        return Err(Error::InvalidData(format!(
            "row {i}: label {} (need 0/1)",
            y[i]
        )));
    }
    if let Some((i, j)) = data
        .features
        .indexed_iter()
        .find_map(|((i, j), v)| (!v.is_finite()).then_some((i, j)))
    {
        let name = data.feature_names.get(j).map_or("?", String::as_str);
        return Err(Error::InvalidData(format!(
            "row {i}, column `{name}`: non-finite value"
        )));
    }
    Ok((&groups.codes, y))
}

/// The configuration with every `None` resolved for a data set of `n_rows` rows.
#[derive(Clone, Debug, PartialEq)]
struct Resolved {
    alpha: f64,
    epsilon: f64,
    delta: f64,
    accounting: Accounting,
    bandwidth: Bandwidth,
    cross_fit: bool,
    pi: PiRelease,
    dd_floor: DdFloor,
    tau_grid: usize,
    eta_model: EtaModel,
}

/// `alpha` must be finite and ≥ 0.
fn check_alpha(alpha: f64) -> Result<()> {
    if !(alpha.is_finite() && alpha >= 0.0) {
        return Err(invalid(
            "alpha",
            format!("must be finite and ≥ 0, got {alpha}"),
        ));
    }
    Ok(())
}

/// The most random frequencies `D` accepted: a resource bound checked before any data is read
/// (the released coefficient vectors have `2D` entries per group, and every row's features are
/// mapped to them).
pub const MAX_FREQUENCIES: usize = 1 << 16;

impl Config {
    /// Check every parameter before any data is read (the row count is not known yet: the
    /// checks that need it run again at fit time).
    pub fn validate(&self) -> Result<()> {
        self.resolve(1 << 32).map(|_| ())
    }

    fn resolve(&self, n_rows: usize) -> Result<Resolved> {
        check_alpha(self.alpha)?;
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(invalid(
                "epsilon",
                format!("must be finite and > 0, got {}", self.epsilon),
            ));
        }
        if n_rows < 8 {
            return Err(Error::InvalidData(format!(
                "{n_rows} rows; CDP-Fair needs at least 8"
            )));
        }
        let delta = self.delta.unwrap_or_else(|| (n_rows as f64 / 2.0).powi(-2));
        if !(delta > 0.0 && delta < 1.0) {
            return Err(invalid("delta", format!("must be in (0, 1), got {delta}")));
        }
        if self.n_frequencies == 0 || self.n_frequencies > MAX_FREQUENCIES {
            return Err(invalid(
                "n_frequencies",
                format!(
                    "must be in 1..={MAX_FREQUENCIES} (a resource bound: the basis has 2D \
                     functions per group and row), got {}",
                    self.n_frequencies
                ),
            ));
        }
        let paper = self.accounting == Accounting::Paper;
        let bandwidth = self.bandwidth.clone().unwrap_or(if paper {
            Bandwidth::paper_cv()
        } else {
            Bandwidth::Public
        });
        let pi = self.pi.unwrap_or(if paper {
            PiRelease::Empirical
        } else {
            PiRelease::Private
        });
        if !paper {
            if bandwidth.reads_data() {
                return Err(invalid(
                    "bandwidth",
                    "cross-validation reads the private data without noise: use a fixed or public bandwidth, or --accounting paper",
                ));
            }
            if pi == PiRelease::Empirical {
                return Err(invalid(
                    "pi",
                    "empirical π is not private: use --accounting paper",
                ));
            }
        }
        if self.tau_grid < 3 || self.tau_grid.is_multiple_of(2) || self.tau_grid > MAX_TAU_GRID {
            return Err(invalid(
                "tau_grid",
                format!(
                    "must be odd, ≥ 3 and ≤ {MAX_TAU_GRID} (a resource bound: the exponential \
                     mechanism scores every grid point), got {}",
                    self.tau_grid
                ),
            ));
        }
        if let Bandwidth::Fixed { h } = bandwidth
            && !(MIN_BANDWIDTH..=MAX_BANDWIDTH).contains(&h)
        {
            return Err(invalid(
                "bandwidth",
                format!(
                    "must be in [{MIN_BANDWIDTH:e}, {MAX_BANDWIDTH:e}] (features are scaled to \
                     [0, 1]; outside it the kernel's frequencies ω/h or its scale h^-d overflow), got {h}"
                ),
            ));
        }
        Ok(Resolved {
            alpha: self.alpha,
            epsilon: self.epsilon,
            delta,
            accounting: self.accounting,
            bandwidth,
            cross_fit: self.cross_fit.unwrap_or(paper),
            pi,
            dd_floor: self.dd_floor,
            tau_grid: self.tau_grid,
            eta_model: self.eta_model,
        })
    }
}

/// The rows of one fold: (training rows, calibration rows).
type Fold = (Vec<usize>, Vec<usize>);

/// Splits for the fitted folds: one split, or the split and its swap (cross-fitting).
fn folds(n_rows: usize, cross_fit: bool, seed: u64) -> Vec<Fold> {
    let (t, c) = random_split(n_rows, n_rows / 2, seed);
    if cross_fit {
        vec![(t.clone(), c.clone()), (c, t)]
    } else {
        vec![(t, c)]
    }
}

/// Everything `fit` needs that is common to the four estimators.
struct Prepared<'d> {
    r: Resolved,
    x: ArrayView2<'d, f64>,
    a: &'d [u32],
    y: &'d [u8],
    h: f64,
    basis: RffBasis,
    /// The resolved estimator of `η_a` (kernel or logistic) and, for the logistic plug-in, Λ.
    eta: ResolvedEta,
    split_seed: u64,
    folds: Vec<Fold>,
}

/// The estimator `prepare` resolved `η_a` to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ResolvedEta {
    Kernel,
    /// The logistic plug-in with ridge strength Λ ([`public_l2`]).
    Logistic {
        l2: f64,
    },
}

fn prepare<'d>(
    config: &Config,
    data: &'d Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Prepared<'d>> {
    let (a, y) = groups_and_labels(data)?;
    let r = config.resolve(data.n_rows())?;
    let (public_epsilon, _) = fold_budget(&r);
    if data.n_features() == 0 {
        return Err(Error::InvalidData("no feature columns".into()));
    }
    // Public randomness: recorded in the model, independent of the data.
    let basis_seed = config.basis_seed.unwrap_or_else(|| noise.public_u64());
    let split_seed = config.split_seed.unwrap_or_else(|| noise.public_u64());
    let folds = folds(data.n_rows(), r.cross_fit, split_seed);
    let x = data.features.view();
    let n_train = folds[0].0.len();
    let h = match &r.bandwidth {
        Bandwidth::Fixed { h } => *h,
        Bandwidth::Public => public_rule(n_train, data.n_features(), public_epsilon),
        Bandwidth::CrossValidated { grid, folds } => {
            ledger.charge(Entry::non_private(
                "bandwidth: cross-validation on the training data",
                "the paper's 3-fold CV reads the data without noise (docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments)",
            ))?;
            cross_validate(x, y, grid, *folds, split_seed ^ 0x5eed_000c)?
        }
    };
    let basis = RffBasis::new(data.n_features(), h, config.n_frequencies, basis_seed)?;
    let eta = match r
        .eta_model
        .resolve(data.n_features(), r.accounting == Accounting::Paper)
    {
        EtaModel::DpSgd => {
            return Err(invalid(
                "eta_model",
                "the DP-SGD plug-in is fitted by `cdp_fair::fit` and FDP-Fair's sites only \
                 (no α sweep, no baseline variant): use kernel or logistic here",
            ));
        }
        EtaModel::Logistic => {
            // Blocks of the joint S1 release: π̃_0, π̃_1 and the weights (weights alone when π̃ is skipped).
            let blocks = if r.pi == PiRelease::Skip { 1 } else { 3 };
            let (_, delta) = fold_budget(&r);
            ResolvedEta::Logistic {
                l2: public_l2(n_train, blocks, public_epsilon, delta)?,
            }
        }
        _ => ResolvedEta::Kernel,
    };
    Ok(Prepared {
        r,
        x,
        a,
        y,
        h,
        basis,
        eta,
        split_seed,
        folds,
    })
}

impl Prepared<'_> {
    fn rows(&self, rows: &[usize]) -> (ndarray::Array2<f64>, Vec<u32>, Vec<u8>) {
        (
            self.x.select(Axis(0), rows),
            rows.iter().map(|&i| self.a[i]).collect(),
            rows.iter().map(|&i| self.y[i]).collect(),
        )
    }

    /// The statistics S1 releases on `rows`, for the resolved estimator of `η_a`.
    fn sums(&self, rows: &[usize]) -> Result<S1Statistics> {
        let (x, a, y) = self.rows(rows);
        Ok(match self.eta {
            ResolvedEta::Kernel => {
                S1Statistics::Kernel(KernelSums::compute(&self.basis, x.view(), &a, &y)?)
            }
            ResolvedEta::Logistic { l2 } => {
                S1Statistics::Logistic(LogisticS1::compute(x.view(), &a, &y, l2)?)
            }
        })
    }

    /// Calibration scores of the estimate on `rows`, per group (what S2 reads; no noise).
    fn scores(&self, est: &PluginEstimate, rows: &[usize]) -> Result<CalibrationScores> {
        Ok(self
            .scores_many(&[est], rows)?
            .pop()
            .expect("one estimate, one set of scores"))
    }

    /// Calibration scores of each estimate on `rows`, per group (what S2 reads; no noise), the
    /// rows' feature map computed once ([`eta_grouped_many`]).
    fn scores_many(
        &self,
        estimates: &[&PluginEstimate],
        rows: &[usize],
    ) -> Result<Vec<CalibrationScores>> {
        let (x, a, _) = self.rows(rows);
        let etas = eta_grouped_many(estimates, x.view(), &a)?;
        Ok(estimates
            .iter()
            .zip(etas)
            .map(|(est, eta)| {
                let (mut z0, mut z1) = (Vec::new(), Vec::new());
                for (&e, &g) in eta.iter().zip(&a) {
                    let g = g as usize;
                    let z = score(g, e, est.pi[g]);
                    if g == 1 { z1.push(z) } else { z0.push(z) }
                }
                CalibrationScores {
                    z: [z0, z1],
                    n_cal: rows.len(),
                }
            })
            .collect())
    }

    fn model(&self, method: Method, folds: Vec<FairPluginClassifier>) -> Model {
        assemble(&self.r, self.bandwidth(), self.split_seed, method, folds)
    }

    /// The kernel bandwidth the model records (0 for the logistic plug-in, which has none).
    fn bandwidth(&self) -> f64 {
        match self.eta {
            ResolvedEta::Kernel => self.h,
            ResolvedEta::Logistic { .. } => 0.0,
        }
    }
}

/// The fitted model of `method` from its resolved configuration and folds.
fn assemble(
    r: &Resolved,
    bandwidth: f64,
    split_seed: u64,
    method: Method,
    folds: Vec<FairPluginClassifier>,
) -> Model {
    Model {
        method,
        alpha: r.alpha,
        epsilon: if matches!(method, Method::FairnessOnly | Method::Unconstrained) {
            f64::INFINITY
        } else {
            r.epsilon
        },
        delta: r.delta,
        accounting: r.accounting,
        bandwidth,
        split_seed,
        folds,
    }
}

/// The scores `Z = 2(2a − 1)π̃_a(η̃_a − 1/2)` of a fold's calibration rows, per group, and the
/// number of calibration rows: everything S2 reads from the calibration half.
#[derive(Clone, Debug, PartialEq)]
struct CalibrationScores {
    z: [Vec<f64>; 2],
    n_cal: usize,
}

/// What S2 reads from a fold's calibration half. Strict: the counts of the scores on the public
/// τ grid, a mergeable exact accumulator ([`GridCounts`]). Paper: the scores themselves (the
/// sweep puts `τ̃` on one of them, so no finite summary of them suffices).
#[derive(Clone, Debug, PartialEq)]
enum CalibrationStatistic {
    Grid { counts: GridCounts, n_cal: usize },
    Scores(CalibrationScores),
}

impl CalibrationStatistic {
    /// The statistic S2 of `r` reads, from the calibration half's scores under `est`.
    fn new(r: &Resolved, est: &PluginEstimate, scores: CalibrationScores) -> Result<Self> {
        Ok(match r.accounting {
            Accounting::Strict => {
                // Public to S2: the grid depends only on the S1 release and the configuration.
                let mut counts = GridCounts::new(tau_grid(est.pi[0].max(est.pi[1]), r.tau_grid))?;
                counts.update(0, &scores.z[0])?;
                counts.update(1, &scores.z[1])?;
                CalibrationStatistic::Grid {
                    counts,
                    n_cal: scores.n_cal,
                }
            }
            Accounting::Paper => CalibrationStatistic::Scores(scores),
        })
    }
}

/// Budget of one fold: strict cross-fitting halves it (each record is used by both folds, `docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments`);
/// the paper spends the whole budget in each fold.
fn fold_budget(r: &Resolved) -> (f64, f64) {
    if r.cross_fit && r.accounting == Accounting::Strict {
        (r.epsilon / 2.0, r.delta / 2.0)
    } else {
        (r.epsilon, r.delta)
    }
}

/// The parts of a training / calibration split, in [`halves`]' order.
pub(crate) const TRAINING_HALF: usize = 0;
pub(crate) const CALIBRATION_HALF: usize = 1;

/// The data-independent training / calibration split drawn with `split_seed`, as the ledger's
/// partition key.
pub(crate) fn halves(name: String, split_seed: u64) -> Partition {
    Partition::new(name, &["training half", "calibration half"], split_seed)
}

/// Runs `f` on `ledger` as part `part` of the parallel partition `partition` (the two halves of
/// a data-independent split).
pub(crate) fn in_part<T>(
    ledger: &mut Ledger,
    partition: &Partition,
    part: usize,
    f: impl FnOnce(&mut Ledger) -> Result<T>,
) -> Result<T> {
    let mut out = None;
    ledger.in_part(partition, part, |l| {
        out = Some(f(l));
        Ok(())
    })?;
    out.expect("closure ran")
}

/// Algorithm 5 (module docs): fit CDP-Fair, charging every release to `ledger`.
pub fn fit(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    if config.pi == Some(PiRelease::Skip) {
        return Err(invalid(
            "pi",
            "`skip` is only for the privacy-only baseline; CDP-Fair needs π̃",
        ));
    }
    if config
        .eta_model
        .resolve_central(data.n_features(), config.accounting == Accounting::Paper)
        == EtaModel::DpSgd
    {
        return all_rows::fit(config, data, ledger, noise);
    }
    let p = prepare(config, data, ledger, noise)?;
    let budget = fold_budget(&p.r);
    let mut out = Vec::new();
    for k in 0..p.folds.len() {
        let f = s1_fold(&p, k, ledger, noise)?;
        let rule = in_part(ledger, &f.partition, CALIBRATION_HALF, |l| {
            s2(
                &p.r,
                &f.estimate,
                &f.calibration,
                budget,
                &f.prefix,
                l,
                noise,
            )
        })?;
        out.push(FairPluginClassifier {
            estimate: f.estimate,
            rule,
        });
    }
    Ok(p.model(Method::CdpFair, out))
}

/// Algorithm 5's S1 on every fold, with the calibration scores S2 reads: nothing in it depends
/// on α, so one fit serves a whole α sweep ([`fit_s1`], then [`SharedS1::select`] per α).
#[derive(Clone, Debug)]
pub struct SharedS1 {
    r: Resolved,
    bandwidth: f64,
    split_seed: u64,
    folds: Vec<S1Fold>,
}

/// One fold's S1 release and the statistic S2 reads from its calibration half.
#[derive(Clone, Debug)]
struct S1Fold {
    prefix: String,
    partition: Partition,
    estimate: PluginEstimate,
    calibration: CalibrationStatistic,
}

/// Algorithm 5 steps 1–2 (split, S1) for `config` at any α: the releases are charged to
/// `ledger` as [`fit`] charges them. With one fold (the strict default), `fit_s1` followed by
/// [`SharedS1::select`] on the same `ledger` and `noise` gives exactly the model and ledger of
/// [`fit`]; with cross-fitting, S1 of both folds comes before S2 of either.
pub fn fit_s1(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<SharedS1> {
    let mut fits = fit_s1_many(
        std::slice::from_ref(config),
        data,
        std::slice::from_mut(ledger),
        std::slice::from_mut(noise),
    )?;
    Ok(fits.pop().expect("one configuration, one fit"))
}

/// [`fit_s1`] for several configurations on one data set, configuration `c` charging
/// `ledgers[c]` and drawing from `noises[c]`: every stream sees [`fit_s1`]'s draws in
/// [`fit_s1`]'s order, so fit `c` is `fit_s1(&configs[c], …)` bit for bit (the basis sums are
/// exact lattice sums, [`KernelSums`], so on any number of threads). What the configurations share is
/// computed once: a fold's random-feature sums wherever they use the same basis (seed,
/// bandwidth) and training rows, and the feature map of the calibration rows for all of them.
/// That is the case of one data set's fits at several ε from one seed (the public bandwidth
/// rule is at its statistical term for all but tiny `nε`), whose sine and cosine work this
/// divides by the number of ε.
///
/// ```
/// use dpfair::cdp_fair::{Config, fit_s1, fit_s1_many};
/// use dpfair::data::synthetic::{Design, FdpFairDesign};
/// use dpfair_privacy::{Budget, Ledger, Noise};
///
/// let data = FdpFairDesign::default().generate(400, 1).unwrap();
/// let configs: Vec<Config> = [1.0, 4.0]
///     .map(|epsilon| Config { epsilon, n_frequencies: 32, ..Config::default() })
///     .to_vec();
/// // The default δ is (N/2)^{-2} = 2.5e-5 for 400 rows.
/// let ledger = |c: &Config| Ledger::new(Budget::approx(c.epsilon, 1e-4).unwrap());
/// let mut ledgers: Vec<Ledger> = configs.iter().map(ledger).collect();
/// let mut noises = vec![Noise::seeded(7), Noise::seeded(7)];
/// let both = fit_s1_many(&configs, &data, &mut ledgers, &mut noises).unwrap();
/// let mut alone = ledger(&configs[1]);
/// let one = fit_s1(&configs[1], &data, &mut alone, &mut Noise::seeded(7)).unwrap();
/// let select = |s: &dpfair::cdp_fair::SharedS1, l: &Ledger| {
///     s.select(0.1, &mut l.clone(), &mut Noise::seeded(8)).unwrap()
/// };
/// assert_eq!(select(&both[1], &ledgers[1]), select(&one, &alone));
/// assert_eq!(ledgers[1], alone);
/// ```
pub fn fit_s1_many(
    configs: &[Config],
    data: &Dataset,
    ledgers: &mut [Ledger],
    noises: &mut [Noise],
) -> Result<Vec<SharedS1>> {
    if ledgers.len() != configs.len() || noises.len() != configs.len() {
        return Err(invalid(
            "configs",
            format!(
                "{} configurations, {} ledgers and {} noise streams",
                configs.len(),
                ledgers.len(),
                noises.len()
            ),
        ));
    }
    if configs.iter().any(|c| c.pi == Some(PiRelease::Skip)) {
        return Err(invalid(
            "pi",
            "`skip` is only for the privacy-only baseline; CDP-Fair needs π̃",
        ));
    }
    let preps = configs
        .iter()
        .zip(ledgers.iter_mut())
        .zip(noises.iter_mut())
        .map(|((c, l), n)| prepare(c, data, l, n))
        .collect::<Result<Vec<_>>>()?;
    let mut folds: Vec<Vec<S1Fold>> = preps.iter().map(|_| Vec::new()).collect();
    let n_folds = preps.iter().map(|p| p.folds.len()).max().unwrap_or(0);
    for k in 0..n_folds {
        let mut parts: Vec<(&Prepared, &mut Ledger, &mut Noise)> = preps
            .iter()
            .zip(ledgers.iter_mut())
            .zip(noises.iter_mut())
            .filter(|((p, _), _)| k < p.folds.len())
            .map(|((p, l), n)| (p, l, n))
            .collect();
        let fitted = s1_fold_many(&mut parts, k)?;
        let owners = (0..preps.len()).filter(|&c| k < preps[c].folds.len());
        for (c, f) in owners.zip(fitted) {
            folds[c].push(f);
        }
    }
    Ok(preps
        .into_iter()
        .zip(folds)
        .map(|(p, folds)| SharedS1 {
            bandwidth: p.bandwidth(),
            r: p.r,
            split_seed: p.split_seed,
            folds,
        })
        .collect())
}

/// S1 on fold `k`'s training half (its part of the parallel partition of the split), and the
/// scores of its calibration half.
fn s1_fold(p: &Prepared, k: usize, ledger: &mut Ledger, noise: &mut Noise) -> Result<S1Fold> {
    let mut fitted = s1_fold_many(&mut [(p, ledger, noise)], k)?;
    Ok(fitted.pop().expect("one fit, one fold"))
}

/// [`s1_fold`] for several fits on one data set, in order: each fit's release is charged to its
/// own ledger and drawn from its own stream; the statistics of a training half are computed once
/// per (basis, rows) and the calibration rows' feature map once per rows
/// ([`eta_grouped_many`]).
fn s1_fold_many(
    parts: &mut [(&Prepared, &mut Ledger, &mut Noise)],
    k: usize,
) -> Result<Vec<S1Fold>> {
    // Kernel sums by (basis, training rows): the same for every ε of one seed.
    let mut sums_memo: Vec<(&RffBasis, &[usize], S1Statistics)> = Vec::new();
    let mut released = Vec::with_capacity(parts.len());
    for (p, ledger, noise) in parts.iter_mut() {
        let p: &Prepared = p;
        let (train, _) = &p.folds[k];
        let shared = p.eta == ResolvedEta::Kernel;
        let memo = sums_memo
            .iter()
            .position(|(b, rows, _)| shared && **b == p.basis && *rows == &train[..]);
        let own;
        let sums = match memo {
            Some(i) => &sums_memo[i].2,
            None if shared => {
                sums_memo.push((&p.basis, &train[..], p.sums(train)?));
                &sums_memo.last().expect("just pushed").2
            }
            None => {
                own = p.sums(train)?;
                &own
            }
        };
        released.push(release_s1(p, k, sums, ledger, noise)?);
    }
    // Calibration scores, one feature map of the rows for every estimate scored on them.
    let mut scores: Vec<Option<CalibrationScores>> = vec![None; parts.len()];
    for i in 0..parts.len() {
        if scores[i].is_some() {
            continue;
        }
        let cal = &parts[i].0.folds[k].1;
        let same: Vec<usize> = (i..parts.len())
            .filter(|&j| scores[j].is_none() && parts[j].0.folds[k].1 == *cal)
            .collect();
        let estimates: Vec<&PluginEstimate> = same.iter().map(|&j| &released[j].2).collect();
        for (j, s) in same.iter().zip(parts[i].0.scores_many(&estimates, cal)?) {
            scores[*j] = Some(s);
        }
    }
    released
        .into_iter()
        .zip(scores)
        .zip(parts.iter())
        .map(|(((prefix, partition, estimate), scores), (p, _, _))| {
            let calibration =
                CalibrationStatistic::new(&p.r, &estimate, scores.expect("every fit scored"))?;
            Ok(S1Fold {
                prefix,
                partition,
                estimate,
                calibration,
            })
        })
        .collect()
}

/// The release of S1 on fold `k` from its training half's statistic `sums` (its part of the
/// parallel partition of the split): the fold's ledger-label prefix, its partition and the
/// released estimate.
fn release_s1(
    p: &Prepared,
    k: usize,
    sums: &S1Statistics,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<(String, Partition, PluginEstimate)> {
    let (epsilon, delta) = fold_budget(&p.r);
    let prefix = if p.folds.len() > 1 {
        format!("fold {}: ", k + 1)
    } else {
        String::new()
    };
    let partition = halves(
        format!("{prefix}training / calibration halves"),
        p.split_seed,
    );
    let plan = S1Plan {
        epsilon,
        delta,
        accounting: match p.r.accounting {
            Accounting::Strict => S1Accounting::Strict,
            Accounting::Paper => S1Accounting::Paper,
        },
        pi: p.r.pi,
        c_k: 1.0,
        label_prefix: prefix.clone(),
    };
    let estimate = in_part(ledger, &partition, TRAINING_HALF, |l| {
        sums.release(&plan, l, noise)
    })?;
    Ok((prefix, partition, estimate))
}

impl SharedS1 {
    /// The released S1 estimate of each fold, in the fold order of the models
    /// [`SharedS1::select`] returns.
    pub fn estimates(&self) -> impl Iterator<Item = &PluginEstimate> {
        self.folds.iter().map(|f| &f.estimate)
    }

    /// Algorithm 5 step 3 (S2) at fairness level `alpha` on every fold, charging `ledger` (a
    /// copy of the ledger [`fit_s1`] charged) and drawing from `noise` (a stream independent of
    /// the one S1 used).
    pub fn select(&self, alpha: f64, ledger: &mut Ledger, noise: &mut Noise) -> Result<Model> {
        check_alpha(alpha)?;
        let r = Resolved {
            alpha,
            ..self.r.clone()
        };
        let budget = fold_budget(&r);
        let mut out = Vec::new();
        for f in &self.folds {
            let rule = in_part(ledger, &f.partition, CALIBRATION_HALF, |l| {
                s2(&r, &f.estimate, &f.calibration, budget, &f.prefix, l, noise)
            })?;
            out.push(FairPluginClassifier {
                estimate: f.estimate.clone(),
                rule,
            });
        }
        Ok(assemble(
            &r,
            self.bandwidth,
            self.split_seed,
            Method::CdpFair,
            out,
        ))
    }
}

/// Algorithm 5 S2 on the calibration rows `cal`. Strict: the exponential mechanism over the
/// public τ grid (module docs). Paper: one Gaussian shift `w̌` of the empirical DD curve,
/// then the exact sweep.
fn s2(
    r: &Resolved,
    est: &PluginEstimate,
    calibration: &CalibrationStatistic,
    (epsilon, delta): (f64, f64),
    prefix: &str,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<GroupRule> {
    match (r.accounting, calibration) {
        // No data-dependent refusal here: an empty calibration group is just a curve term 0
        // (denominators are at least the public floor m).
        (Accounting::Strict, CalibrationStatistic::Grid { counts, n_cal }) => {
            let m = dd_floor(r, est.pi, *n_cal as f64)?;
            let denom = [0, 1].map(|a| counts.group_size(a).max(m as u64) as f64);
            let utility: Vec<f64> = counts
                .dd_on_grid(denom)
                .into_iter()
                .zip(counts.grid())
                .map(|(dd, &t)| crossing_utility_at(dd, t, r.alpha))
                .collect();
            let grid = counts.grid();
            let j = exponential_mechanism(
                ledger,
                noise,
                &format!(
                    "{prefix}S2: τ̃ on a {}-point public grid (utility −|D̂D(τ) − α sgn τ|, Δ = 2/m, m = {m})",
                    grid.len()
                ),
                &utility,
                2.0 / m as f64,
                epsilon,
            )?;
            Ok(GroupRule::paper(grid[j]))
        }
        (Accounting::Paper, CalibrationStatistic::Scores(scores)) => {
            let CalibrationScores { z: [z0, z1], n_cal } = scores.clone();
            let counts = [z0.len(), z1.len()];
            let n_cal = n_cal as f64;
            // The paper's shift divides by the smallest calibration group (read without noise:
            // the ledger marks this mode's τ̃ as not (ε, δ)-DP below). No count is printed.
            if counts.contains(&0) {
                return Err(Error::InvalidData(
                    "--accounting paper: a group is empty in the calibration half (the paper's \
                     shift needs both; strict accounting runs on any group sizes)"
                        .into(),
                ));
            }
            // The code's σ with the total ň (`docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments`); the true sensitivity is 2/(ň_0 ∧ ň_1).
            let sigma = classical_sigma(2.0 / n_cal, epsilon, delta);
            let n_min = counts[0].min(counts[1]) as f64;
            let w = gaussian_release_vec(
                ledger,
                noise,
                &format!(
                    "{prefix}S2: shift w̌ of the DD curve (σ from the total ň; (ε, δ) for half-line events {{τ̃ ≤ t}} only, docs/deviations.md#fdp-fair-privacy-of-the-threshold-release)"
                ),
                2.0 / n_min,
                Calibration::Sigma { sigma },
                &[0.0],
            )?[0];
            // The sweep puts τ̃ on a calibration score: point events are not covered (`docs/deviations.md#fdp-fair-privacy-of-the-threshold-release`).
            let p_point = 1.0 / (n_min * sigma * (2.0 * std::f64::consts::PI).sqrt());
            ledger.charge(Entry::non_private(
                format!("{prefix}S2: location of τ̃ on a calibration score (docs/deviations.md#fdp-fair-privacy-of-the-threshold-release)"),
                format!(
                    "τ̃ lands on one record's score with probability up to ≈ 1/(ň_min σ √(2π)) = {p_point:.3}: no (ε, δ) with δ below that"
                ),
            ))?;
            let scores = ScoreSet::new(z0, z1, [counts[0] as f64, counts[1] as f64]);
            Ok(sweep_threshold(&scores, w, r.alpha).rule)
        }
        _ => Err(Error::InvalidData(
            "internal: the calibration statistic does not match the accounting mode".into(),
        )),
    }
}

/// The accuracy of strict S2's private choice on fold `fold` of a fit on `n_rows` rows: with
/// probability at least `1 − beta` the exponential mechanism picks a grid point whose utility is
/// within `(2Δ/ε)(ln G + ln(1/β))` of the best (Dwork & Roth, Thm 3.11; permute-and-flip has the
/// same bound), `Δ = 2/m` with `m` from the released `π̃` ([`DdFloor`]), `G` the grid size: the
/// calibration half's `|D̂D(τ̃) − α sgn τ̃|` exceeds the best grid point's by at most that.
/// Post-processing of released values and public settings; `None` under the paper's accounting.
pub(crate) fn s2_accuracy(
    config: &Config,
    n_rows: usize,
    fold: usize,
    est: &PluginEstimate,
    beta: f64,
) -> Result<Option<f64>> {
    let r = config.resolve(n_rows)?;
    if r.accounting == Accounting::Paper {
        return Ok(None);
    }
    if est.is_all_rows() {
        return all_rows::s2_accuracy(&r, n_rows, est, beta).map(Some);
    }
    let (epsilon, _) = fold_budget(&r);
    let n_train = n_rows / 2;
    let n_cal = if fold == 0 { n_rows - n_train } else { n_train };
    let m = dd_floor(&r, est.pi, n_cal as f64)? as f64;
    Ok(Some(
        2.0 * (2.0 / m) / epsilon * ((r.tau_grid as f64).ln() + (1.0 / beta).ln()),
    ))
}

/// The strict DD floor `m` (see [`DdFloor`]).
fn dd_floor(r: &Resolved, pi: [f64; 2], n_cal: f64) -> Result<usize> {
    Ok(match r.dd_floor {
        DdFloor::Public { min_group } => {
            if min_group == 0 {
                return Err(invalid("dd_floor.min_group", "must be ≥ 1"));
            }
            min_group
        }
        DdFloor::FromPi { sds } => {
            if !(sds.is_finite() && sds >= 0.0) {
                return Err(invalid(
                    "dd_floor.sds",
                    format!("must be finite and ≥ 0, got {sds}"),
                ));
            }
            let e = n_cal * pi[0].min(pi[1]);
            ((e - sds * e.sqrt()).floor() as usize).max(1)
        }
    })
}

/// `dpfair predict`: `f̃(x, a)` for every row (groups from the sensitive column, features scaled
/// by the model file's schema), one Bernoulli draw per row from `rng`; the probabilities are
/// `(1 − f̃, f̃)`.
#[cfg(test)]
mod tests {
    use super::*;
    use dpfair_data::synthetic::{Design, FdpFairDesign};
    use dpfair_privacy::Budget;

    /// A budget of `epsilon` and the default δ = (N/2)^{−2} of 1,500 rows.
    fn ledger(epsilon: f64) -> Ledger {
        Ledger::new(Budget::approx(epsilon, 750f64.powi(-2)).expect("valid budget"))
    }

    /// One strict fold: S1 once, then S2 per α, equals `fit` per α bit for bit (model and ledger)
    /// when S2 continues the same noise stream.
    #[test]
    fn shared_s1_matches_fit_at_every_alpha() {
        let data = FdpFairDesign::default().generate(1_500, 5).expect("data");
        let config = Config {
            epsilon: 2.0,
            n_frequencies: 64,
            ..Config::default()
        };
        for alpha in [0.05, 0.2, 0.6] {
            let (mut l1, mut n1) = (ledger(2.0), Noise::seeded(9));
            let direct = fit(
                &Config {
                    alpha,
                    ..config.clone()
                },
                &data,
                &mut l1,
                &mut n1,
            )
            .expect("fit");
            let (mut l2, mut n2) = (ledger(2.0), Noise::seeded(9));
            let shared = fit_s1(&config, &data, &mut l2, &mut n2).expect("S1");
            let selected = shared.select(alpha, &mut l2, &mut n2).expect("S2");
            assert_eq!(direct, selected, "α = {alpha}");
            assert_eq!(l1, l2, "α = {alpha}");
        }
    }

    /// Several configurations from one seed fitted together (`fit_s1_many`: one pass over the
    /// rows for all that share a basis) equal one `fit_s1` per configuration bit for bit —
    /// the models at every α, the ledgers and where the streams stand — in both accounting
    /// modes (paper mode cross-fits: two folds), with one configuration in a basis of its own.
    /// Several threads: the basis sums are exact lattice sums, whatever rayon's split points.
    #[test]
    fn fit_s1_many_equals_one_fit_per_configuration() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        pool.install(|| {
            let data = FdpFairDesign::default().generate(1_500, 8).expect("data");
            for accounting in [Accounting::Strict, Accounting::Paper] {
                let paper = accounting == Accounting::Paper;
                // Strict: the public rule gives h = 750^{-1/4} at every ε here; 0.2 differs.
                let configs: Vec<Config> =
                    [(0.75, None), (2.0, None), (4.0, None), (2.0, Some(0.2))]
                        .map(|(epsilon, h): (f64, Option<f64>)| Config {
                            epsilon,
                            accounting,
                            bandwidth: h.or(paper.then_some(0.15)).map(|h| Bandwidth::Fixed { h }),
                            n_frequencies: 48,
                            ..Config::default()
                        })
                        .to_vec();
                let budget = |c: &Config| if paper { f64::INFINITY } else { c.epsilon };
                let mut ledgers: Vec<Ledger> = configs.iter().map(|c| ledger(budget(c))).collect();
                let mut noises: Vec<Noise> = configs.iter().map(|_| Noise::seeded(4)).collect();
                let many = fit_s1_many(&configs, &data, &mut ledgers, &mut noises).expect("batch");
                for (c, config) in configs.iter().enumerate() {
                    let (mut l, mut n) = (ledger(budget(config)), Noise::seeded(4));
                    let one = fit_s1(config, &data, &mut l, &mut n).expect("one");
                    assert_eq!(ledgers[c], l, "{accounting:?}, configuration {c}");
                    assert_eq!(noises[c].public_u64(), n.public_u64());
                    for alpha in [0.05, 0.3] {
                        let pick = |s: &SharedS1| {
                            let m = s.select(alpha, &mut l.clone(), &mut Noise::seeded(5));
                            serde_json::to_string(&m.expect("S2")).expect("json")
                        };
                        assert_eq!(
                            pick(&many[c]),
                            pick(&one),
                            "{accounting:?}, {c}, α = {alpha}"
                        );
                    }
                }
            }
            let data = FdpFairDesign::default().generate(100, 1).expect("data");
            let one = [Config::default()];
            assert!(fit_s1_many(&one, &data, &mut [], &mut [Noise::seeded(1)]).is_err());
        });
    }

    /// Issue #21: CDP-Fair (strict) as two accumulator passes over random parts of the data —
    /// the training half's kernel sums, then the calibration half's counts on the τ grid under
    /// the released estimate — merged in random orders, gives each statistic of the one-pass
    /// fit bit for bit and, with the same noise stream, the same model and ledger as [`fit`].
    #[test]
    fn fit_from_merged_parts_equals_the_one_pass_fit() {
        use crate::accumulate::testing::{merge_randomly, random_parts};
        use rand::SeedableRng;
        let data = FdpFairDesign::default().generate(1_500, 4).expect("data");
        let config = Config {
            epsilon: 2.0,
            n_frequencies: 32,
            basis_seed: Some(11),
            split_seed: Some(12),
            ..Config::default()
        };
        let (mut l1, mut n1) = (ledger(2.0), Noise::seeded(9));
        let one_pass = fit(&config, &data, &mut l1, &mut n1).expect("fit");
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(21);
        for parts in [2, 7] {
            let (mut l2, mut n2) = (ledger(2.0), Noise::seeded(9));
            let p = prepare(&config, &data, &mut l2, &mut n2).expect("prepare");
            let (train, cal) = &p.folds[0];
            let pick = |rows: &[usize], idx: Vec<usize>| -> Vec<usize> {
                idx.into_iter().map(|i| rows[i]).collect()
            };
            // Pass 1: the training half's kernel sums.
            let sums: Vec<KernelSums> = random_parts(train.len(), parts, &mut rng)
                .into_iter()
                .map(|idx| {
                    let (x, a, y) = p.rows(&pick(train, idx));
                    let mut s = KernelSums::new(&p.basis);
                    s.update(x.view(), &a, &y).expect("update");
                    s
                })
                .collect();
            let sums = merge_randomly(sums, &mut rng, |s, t| s.merge(&t).expect("merge"));
            let S1Statistics::Kernel(whole) = p.sums(train).expect("sums") else {
                panic!("the default estimator is the kernel's")
            };
            assert_eq!(sums, whole, "{parts} parts");
            let (prefix, partition, estimate) =
                release_s1(&p, 0, &S1Statistics::Kernel(sums), &mut l2, &mut n2).expect("S1");
            // Pass 2: the calibration half's counts on the public grid.
            let counts: Vec<GridCounts> = random_parts(cal.len(), parts, &mut rng)
                .into_iter()
                .map(|idx| {
                    let part = p.scores(&estimate, &pick(cal, idx)).expect("scores");
                    match CalibrationStatistic::new(&p.r, &estimate, part).expect("counts") {
                        CalibrationStatistic::Grid { counts, .. } => counts,
                        CalibrationStatistic::Scores(_) => panic!("strict counts on the grid"),
                    }
                })
                .collect();
            let counts = merge_randomly(counts, &mut rng, |s, t| s.merge(&t).expect("merge"));
            let calibration = CalibrationStatistic::Grid {
                counts,
                n_cal: cal.len(),
            };
            let all = p.scores(&estimate, cal).expect("scores");
            assert_eq!(
                calibration,
                CalibrationStatistic::new(&p.r, &estimate, all).expect("counts")
            );
            let budget = fold_budget(&p.r);
            let rule = in_part(&mut l2, &partition, CALIBRATION_HALF, |l| {
                s2(&p.r, &estimate, &calibration, budget, &prefix, l, &mut n2)
            })
            .expect("S2");
            let model = p.model(
                Method::CdpFair,
                vec![FairPluginClassifier { estimate, rule }],
            );
            assert_eq!(model, one_pass, "{parts} parts");
            assert_eq!(l2, l1, "{parts} parts");
        }
    }

    /// With cross-fitting (both folds' S1 first) the ledger holds the same releases.
    #[test]
    fn shared_s1_with_cross_fitting_charges_what_fit_charges() {
        let data = FdpFairDesign::default().generate(1_500, 6).expect("data");
        let config = Config {
            epsilon: 2.0,
            n_frequencies: 64,
            cross_fit: Some(true),
            ..Config::default()
        };
        let mut l1 = ledger(2.0);
        fit(
            &Config {
                alpha: 0.1,
                ..config.clone()
            },
            &data,
            &mut l1,
            &mut Noise::seeded(3),
        )
        .expect("fit");
        let mut l2 = ledger(2.0);
        let mut noise = Noise::seeded(3);
        let shared = fit_s1(&config, &data, &mut l2, &mut noise).expect("S1");
        let model = shared.select(0.1, &mut l2, &mut noise).expect("S2");
        assert_eq!(model.folds.len(), 2);
        // The releases, without the noise-dependent floor m in S2's label.
        let labels = |l: &Ledger| {
            let mut v: Vec<String> = l
                .entries()
                .iter()
                .map(|e| e.label.split(" (utility").next().unwrap_or("").to_string())
                .collect();
            v.sort();
            v
        };
        assert_eq!(labels(&l1), labels(&l2));
        assert_eq!(l1.total().expect("total"), l2.total().expect("total"));
        assert!(shared.select(-0.1, &mut l2, &mut noise).is_err());
    }
}
