//! The KS-relaxed fixed-support Wasserstein-2 barycenter problem, line 14 of Algorithm 1 of
//! Xian et al., its fast paths, and the polishing and validation every solution goes through (`docs/deviations.md#fair-regression-solver-tolerance`).
//!
//! In bin-index units, for PMFs `p_a` on `0..k`, weights `w_a` and tolerance α:
//! ```text
//! min  Σ_a w_a Σ_{j,ℓ} (j−ℓ)² π_a(j,ℓ)
//! s.t. Σ_ℓ π_a(j,ℓ) = p_a(j),   Σ_j π_a(j,ℓ) = q_a(ℓ),   |Σ_{j≤ℓ} (q_a(j) − q(j))| ≤ α/2,   π ≥ 0
//! ```
//! Two back ends ([`Backend`]) solve it for the targets `q_a`:
//! * [`Backend::Clarabel`]: the paper's LP as written (the sparse form of the LP of Xian et al., Algorithm 1, line 14), through the
//!   pure-Rust interior-point solver Clarabel. General and slow (`m·k²` variables).
//! * [`Backend::Structured`] (default): an interior-point method on an equivalent problem in the
//!   groups' target CDFs, whose Newton systems are banded ([`structured`]).
//!
//! Either way, given the targets, the optimal couplings are the monotone couplings (Lemma B.9), so
//! [`polish`] rebuilds them exactly and [`validate`] checks marginals and KS constraints.
//! Fast paths (all exact special cases): k = 1; α ≥ the largest pairwise KS distance
//! of the inputs (value 0, identity); α = 0 (the rounded quantile average); and, for every other
//! α, the per-level decomposition of [`levelwise`] (no LP solver; the back end is used only if it
//! reports trouble, or with `fast_paths` off).

pub mod clarabel;
pub mod levelwise;
pub mod structured;

use super::transport::{Coupling, cdf, max_pairwise_ks_cdf, monotone_coupling, pmf_from_cdf};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Errors of the barycenter problem and its solvers.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LpError {
    #[error("invalid barycenter problem: `{name}` {reason}")]
    InvalidInput { name: &'static str, reason: String },
    #[error("barycenter LP solver {backend} failed: {status}")]
    Solver {
        backend: &'static str,
        status: String,
    },
    #[error("barycenter solution failed validation: {0}")]
    Validation(String),
}

/// Tolerance on a PMF's total mass.
const MASS_TOL: f64 = 1e-9;

/// One instance of the problem (inputs are PMFs on `0..k`; weights are not normalized, `docs/deviations.md#fair-regression-unnormalised-weights`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BarycenterProblem {
    pub pmfs: Vec<Vec<f64>>,
    pub weights: Vec<f64>,
    pub alpha: f64,
}

impl BarycenterProblem {
    /// Checks the inputs: at least one group, equal lengths k ≥ 1, PMFs nonnegative with total mass
    /// 1 (to 1e-9), weights positive and finite, α ≥ 0.
    pub fn new(pmfs: Vec<Vec<f64>>, weights: Vec<f64>, alpha: f64) -> Result<Self, LpError> {
        let bad = |name, reason: String| Err(LpError::InvalidInput { name, reason });
        if pmfs.is_empty() {
            return bad("pmfs", "must hold at least one group".into());
        }
        if weights.len() != pmfs.len() {
            return bad(
                "weights",
                format!("has {} entries for {} groups", weights.len(), pmfs.len()),
            );
        }
        let k = pmfs[0].len();
        if k == 0 {
            return bad("pmfs", "must have k ≥ 1 bins".into());
        }
        for (a, p) in pmfs.iter().enumerate() {
            if p.len() != k {
                return bad(
                    "pmfs",
                    format!("group {a} has {} bins, group 0 has {k}", p.len()),
                );
            }
            if let Some(j) = p.iter().position(|x| !x.is_finite() || *x < 0.0) {
                return bad(
                    "pmfs",
                    format!("group {a}, bin {j}: {} is not a probability", p[j]),
                );
            }
            let total: f64 = p.iter().sum();
            if (total - 1.0).abs() > MASS_TOL {
                return bad("pmfs", format!("group {a} sums to {total}, not 1"));
            }
        }
        if let Some(a) = weights.iter().position(|w| !w.is_finite() || *w <= 0.0) {
            return bad("weights", format!("group {a}: {} is not > 0", weights[a]));
        }
        if !alpha.is_finite() || alpha < 0.0 {
            return bad("alpha", format!("must be finite and ≥ 0, got {alpha}"));
        }
        Ok(BarycenterProblem {
            pmfs,
            weights,
            alpha,
        })
    }

    pub fn k(&self) -> usize {
        self.pmfs[0].len()
    }

    pub fn m(&self) -> usize {
        self.pmfs.len()
    }

    /// The input CDFs (last entry exactly 1).
    pub fn cdfs(&self) -> Vec<Vec<f64>> {
        self.pmfs.iter().map(|p| cdf(p)).collect()
    }

    /// The largest pairwise KS distance of the inputs: the LP value is 0 iff α reaches it.
    pub fn unfairness(&self) -> f64 {
        max_pairwise_ks_cdf(&self.cdfs())
    }
}

/// Which solver handles the non-trivial instances.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// The banded interior-point method on the CDF form ([`structured`]).
    #[default]
    Structured,
    /// The sparse form of the LP (Xian et al., Algorithm 1, line 14) as a general LP through Clarabel ([`clarabel`]).
    Clarabel,
}

/// How to solve: back end, fast paths, solver tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SolveOptions {
    pub backend: Backend,
    /// Use the exact special cases (k = 1, trivial α, α = 0 closed form) and the per-level
    /// decomposition ([`levelwise`]) instead of the back end.
    pub fast_paths: bool,
    /// Relative tolerance of the interior-point back ends (gap and residuals).
    pub tolerance: f64,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            backend: Backend::Structured,
            fast_paths: true,
            tolerance: 1e-10,
        }
    }
}

/// Who produced a solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "by")]
pub enum SolvedBy {
    /// k = 1: one bin, everything maps to it.
    SingleBin,
    /// α ≥ the largest pairwise KS distance: identity maps, value 0.
    Trivial,
    /// α = 0: the rounded quantile average.
    ClosedForm,
    /// The structured interior-point method.
    Structured { iterations: u32 },
    /// Clarabel on the general LP.
    Clarabel { iterations: u32 },
    /// The exact per-level decomposition ([`levelwise`]), any α.
    Levelwise,
}

/// A polished, validated solution of the problem (index units).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BarycenterSolution {
    /// `q̃_a`: the groups' target PMFs.
    pub targets: Vec<Vec<f64>>,
    /// `B`: a barycenter (KS-ball centre) CDF, `(max_a C_a + min_a C_a)/2` (not unique for α > 0).
    pub center_cdf: Vec<f64>,
    /// `π_a`: the monotone couplings of `p_a` and `q̃_a`.
    pub couplings: Vec<Coupling>,
    /// `Σ_a w_a Σ (j−ℓ)² π_a(j,ℓ)` in index units (× Δ² for value units, `docs/deviations.md#fair-regression-stored-score-in-the-code`).
    pub value: f64,
    /// `max_{a,a'} D_KS(q̃_a, q̃_a')` (≤ α).
    pub max_ks: f64,
    pub solved_by: SolvedBy,
}

/// Solve one instance: fast paths first (if enabled), else the chosen back end; then
/// [`polish`] and [`validate`].
pub fn solve(
    problem: &BarycenterProblem,
    options: &SolveOptions,
) -> Result<BarycenterSolution, LpError> {
    let cdfs = problem.cdfs();
    solve_with_cdfs(problem, &cdfs, problem.unfairness(), options)
}

/// Solve the same inputs at several α (a sweep, Xian et al.'s sweeps). Shares the inputs' CDFs and their
/// pairwise KS distance across α: every α at or above it is answered by the identity.
pub fn solve_path(
    problem: &BarycenterProblem,
    alphas: &[f64],
    options: &SolveOptions,
) -> Result<Vec<BarycenterSolution>, LpError> {
    let cdfs = problem.cdfs();
    let unfair = max_pairwise_ks_cdf(&cdfs);
    alphas
        .iter()
        .map(|&alpha| {
            let p = BarycenterProblem::new(problem.pmfs.clone(), problem.weights.clone(), alpha)?;
            solve_with_cdfs(&p, &cdfs, unfair, options)
        })
        .collect()
}

fn solve_with_cdfs(
    problem: &BarycenterProblem,
    cdfs: &[Vec<f64>],
    unfairness: f64,
    options: &SolveOptions,
) -> Result<BarycenterSolution, LpError> {
    let k = problem.k();
    let (targets, by) = if options.fast_paths && k == 1 {
        (cdfs.to_vec(), SolvedBy::SingleBin)
    } else if options.fast_paths && problem.alpha >= unfairness {
        (cdfs.to_vec(), SolvedBy::Trivial)
    } else if options.fast_paths && problem.alpha == 0.0 {
        let q = super::transport::quantile_average(cdfs, &problem.weights);
        (vec![cdf(&q); problem.m()], SolvedBy::ClosedForm)
    } else if let Some(c) = options
        .fast_paths
        .then(|| levelwise::solve_targets(problem, cdfs).ok())
        .flatten()
    {
        (c, SolvedBy::Levelwise)
    } else {
        match options.backend {
            Backend::Structured => match structured::solve_targets(problem, options.tolerance) {
                Ok((c, it)) => (c, SolvedBy::Structured { iterations: it }),
                // Numerical trouble in the specialised method: the general LP is the safety net.
                Err(_) => {
                    let (c, it) = clarabel::solve_targets(problem, options.tolerance)?;
                    (c, SolvedBy::Clarabel { iterations: it })
                }
            },
            Backend::Clarabel => {
                let (c, it) = clarabel::solve_targets(problem, options.tolerance)?;
                (c, SolvedBy::Clarabel { iterations: it })
            }
        }
    };
    let sol = polish(problem, cdfs, targets, by);
    validate(problem, &sol, 1e-9)?;
    Ok(sol)
}

/// `docs/deviations.md#fair-regression-solver-tolerance`: turn a solver's (approximate) target CDFs into an exactly consistent solution.
/// 1. clamp to \[0,1\], make nondecreasing (running maximum), last entry 1;
/// 2. restore the KS constraints exactly: clamp every `C_a` into `[B − α/2, B + α/2]` with
///    `B = (max_a C_a + min_a C_a)/2` (clamping between nondecreasing bounds keeps `C_a`
///    nondecreasing, and a feasible point is left unchanged);
/// 3. the couplings are the monotone couplings of `p_a` and `q̃_a` (the unique optimum for these
///    targets, Lemma B.9), which also removes an interior-point solver's tiny positive entries.
pub fn polish(
    problem: &BarycenterProblem,
    input_cdfs: &[Vec<f64>],
    mut target_cdfs: Vec<Vec<f64>>,
    solved_by: SolvedBy,
) -> BarycenterSolution {
    let k = problem.k();
    for c in &mut target_cdfs {
        let mut run = 0.0f64;
        for x in c.iter_mut() {
            run = run.max(x.clamp(0.0, 1.0));
            *x = run;
        }
        c[k - 1] = 1.0;
    }
    let half = problem.alpha / 2.0;
    let spread: Vec<(f64, f64)> = (0..k)
        .map(|l| {
            target_cdfs
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
                    (lo.min(c[l]), hi.max(c[l]))
                })
        })
        .collect();
    let center: Vec<f64> = spread.iter().map(|(lo, hi)| (lo + hi) / 2.0).collect();
    for c in &mut target_cdfs {
        for ((x, b), (lo, hi)) in c.iter_mut().zip(&center).zip(&spread) {
            // Only levels that violate the constraint move (so a feasible point stays bit-exact).
            if hi - lo > problem.alpha {
                *x = x.clamp(b - half, b + half);
            }
        }
    }
    let couplings: Vec<Coupling> = input_cdfs
        .iter()
        .zip(&target_cdfs)
        .map(|(fp, fq)| monotone_coupling(fp, fq))
        .collect();
    let value = couplings
        .iter()
        .zip(&problem.weights)
        .map(|(c, w)| w * c.cost())
        .sum();
    BarycenterSolution {
        targets: target_cdfs.iter().map(|c| pmf_from_cdf(c)).collect(),
        max_ks: max_pairwise_ks_cdf(&target_cdfs),
        center_cdf: center,
        couplings,
        value,
        solved_by,
    }
}

/// Check a solution (the LP's KS constraint and Lemma B.9's monotone couplings): nonnegative monotone couplings whose rows sum to `p_a` and
/// columns to `q̃_a` (to `tol`), targets that are PMFs, and `max_{a,a'} D_KS(q̃_a, q̃_a') ≤ α + tol`.
pub fn validate(
    problem: &BarycenterProblem,
    sol: &BarycenterSolution,
    tol: f64,
) -> Result<(), LpError> {
    let fail = |s: String| Err(LpError::Validation(s));
    for (a, ((c, p), q)) in sol
        .couplings
        .iter()
        .zip(&problem.pmfs)
        .zip(&sol.targets)
        .enumerate()
    {
        if c.entries.iter().any(|e| e.2 < 0.0) {
            return fail(format!("group {a}: negative coupling entry"));
        }
        if !c.is_monotone() {
            return fail(format!("group {a}: coupling is not monotone"));
        }
        let rows = c.row_sums();
        if let Some(j) = (0..rows.len()).find(|&j| (rows[j] - p[j]).abs() > tol) {
            return fail(format!(
                "group {a}, bin {j}: row sum {} ≠ p {}",
                rows[j], p[j]
            ));
        }
        let cols = c.col_sums();
        if let Some(l) = (0..cols.len()).find(|&l| (cols[l] - q[l]).abs() > tol || q[l] < -tol) {
            return fail(format!(
                "group {a}, bin {l}: column sum {} ≠ q {}",
                cols[l], q[l]
            ));
        }
    }
    if sol.max_ks > problem.alpha + tol {
        return fail(format!(
            "max pairwise KS of the targets {} exceeds α = {}",
            sol.max_ks, problem.alpha
        ));
    }
    Ok(())
}
