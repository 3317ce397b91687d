//! Algorithm 2 (FDP.THRESHOLD.SEARCH) at the server: the tree depth `M` (step 0, `docs/deviations.md#fdp-fair-tree-depth-m` and
//! the tree-depth rule of Xue & Yu, §5.1.2), the private DD curve on the grid `τ_j = −1 + (j−1)2^{1−M}` from the sites' noisy trees
//! (S2), its monotone correction (Algorithm 6, or 4) and the selection of `τ̃` (S3, with the rules
//! of `docs/deviations.md#fdp-fair-selection-rule-gaps` for what the paper leaves open).

use crate::fdp_fair::correction::{
    Clip, OmegaSite, is_non_increasing, non_increasing, non_increasing_numerical, omega,
};
use crate::fdp_fair::tree::{MAX_DEPTH, SiteTrees};
use crate::plugin::error::{Error, Result, invalid};
use serde::{Deserialize, Serialize};

/// How the tree depth `M` is chosen (step 0 of Algorithm 2). Sizes `N_s` are the sites' full
/// sizes (public under replace-one neighbours).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "kebab-case")]
pub enum DepthRule {
    /// The authors' code (the tree-depth rule of §5.1.2): `M = min(max(⌊log2 max(Σ_s min(N_s, N_s²ε_s²), 1)⌋, 1), 6)`.
    /// Default: with the paper's rule the tail noise swamps the counts at `N_s = 2000` (`docs/deviations.md#fdp-fair-tree-depth-m`).
    #[default]
    Code,
    /// The paper's experimental rule: `M = max(⌊log2 Σ_s min(N_s, N_s²ε_s²)⌋ + 1, 6)`.
    Paper,
    /// From the smallest interval length θ (Alg. 2 step 0): `M = ⌈log2(1/θ)⌉ + 1` (`docs/deviations.md#fdp-fair-tree-depth-m`).
    Theta { theta: f64 },
    /// A fixed depth.
    Fixed { depth: usize },
}

impl DepthRule {
    /// `M` for sites of sizes `N_s` with budgets `ε_s`.
    pub fn depth(&self, sites: &[(usize, f64)]) -> Result<usize> {
        let sum: f64 = sites
            .iter()
            .map(|&(n, e)| {
                let n = n as f64;
                n.min(n * n * e * e)
            })
            .sum();
        let m = match *self {
            DepthRule::Code => (sum.max(1.0).log2().floor() as usize).clamp(1, 6),
            DepthRule::Paper => ((sum.max(1.0).log2().floor() as usize) + 1).max(6),
            DepthRule::Theta { theta } => {
                if !(theta > 0.0 && theta <= 1.0) {
                    return Err(invalid("theta", format!("must be in (0, 1], got {theta}")));
                }
                (1.0 / theta).log2().ceil() as usize + 1
            }
            DepthRule::Fixed { depth } => depth,
        };
        if !(1..=MAX_DEPTH).contains(&m) {
            return Err(invalid(
                "depth",
                format!("tree depth M = {m} outside 1..={MAX_DEPTH}"),
            ));
        }
        Ok(m)
    }
}

/// `τ_j = −1 + (j−1) 2^{1−M}` for the 0-based index `i = j − 1`, `i = 0..=2^M`.
pub fn grid_point(i: usize, depth: usize) -> f64 {
    -1.0 + i as f64 * 2.0 / (1u64 << depth) as f64
}

/// The grid `G` of Algorithm 2 S2 (`2^M + 1` points from −1 to 1; τ = 0 at index `2^{M−1}`).
pub fn grid(depth: usize) -> Vec<f64> {
    (0..=(1usize << depth))
        .map(|i| grid_point(i, depth))
        .collect()
}

/// One site's private DD curve on the grid (Alg. 2 S2):
/// `D̃D^s(τ_j) = Tail_{s,1}(τ_j)/N_{s,1} − (N_{s,0} − Tail_{s,0}(τ_j))/N_{s,0}`.
///
/// Post-processing guards (the code's, Xue & Yu, §5.1.2): the noisy totals are floored at 1 and the
/// tails clipped to `[0, N_{s,a}]`, so that every term is a fraction in `[0, 1]`; then
/// `D̃D^s(τ_1) = 1` (the `j = 1` case) and `D̃D^s(τ_{2^M+1}) = −1`.
pub fn site_dd(trees: &SiteTrees) -> Vec<f64> {
    let depth = trees.groups[0].depth();
    let total = |a: usize| trees.groups[a].total().max(1.0);
    let (n0, n1) = (total(0), total(1));
    (1..=(1usize << depth) + 1)
        .map(|j| {
            let t1 = trees.groups[1].tail(j).clamp(0.0, n1);
            let t0 = trees.groups[0].tail(j).clamp(0.0, n0);
            t1 / n1 - (n0 - t0) / n0
        })
        .collect()
}

/// `D̃D(τ) = Σ_s μ_s D̃D^s(τ)` on the grid.
pub fn aggregate_dd(sites: &[(f64, &SiteTrees)]) -> Result<Vec<f64>> {
    let Some((_, first)) = sites.first() else {
        return Err(invalid("sites", "no trees to aggregate"));
    };
    let depth = first.groups[0].depth();
    let mut out = vec![0.0; (1 << depth) + 1];
    for (s, (mu, t)) in sites.iter().enumerate() {
        for a in 0..2 {
            t.groups[a].validate(depth, &format!("site {s}, group {a}"))?;
        }
        for (o, v) in out.iter_mut().zip(site_dd(t)) {
            *o += mu * v;
        }
    }
    Ok(out)
}

/// Which monotone correction (Alg. 2 S2, last line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Monotoniser {
    /// Algorithm 6, used in all of the paper's experiments (default).
    #[default]
    Numerical,
    /// Algorithm 4 (the theory's); on NULL it falls back to Algorithm 6 and says so (`docs/deviations.md#fdp-fair-selection-rule-gaps`).
    Theory,
}

/// The parameters of S2–S3 (everything the server chooses).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// Disparity level α ≥ 0.
    pub alpha: f64,
    /// Half-width `ρ*` of the selection band (the paper's experiments set it directly,
    /// "ρ = 0.03"; `docs/deviations.md#fdp-fair-rho-star-in-practice`).
    pub rho_star: f64,
    /// `C_ω` of `ω`.
    pub c_omega: f64,
    /// `η_tol` inside `ω` (the code's 0.01, `docs/deviations.md#fdp-fair-eta-tol-and-omega`).
    pub eta_tol: f64,
    pub monotoniser: Monotoniser,
    /// Algorithm 6's clipping range; `None` = `[−1, 1]` (strict) or `[0, 1]` (paper accounting).
    pub clip: Option<Clip>,
    /// Accept `τ̃ = 0` when `|D̃D_↓(0)| ≤ α + ρ*` (the code) instead of `≤ α` (the paper).
    pub zero_within_band: bool,
    /// Put the selection band inside the target: `|D̃D_↓(τ) − sign·(α − b)| ≤ b` with
    /// `b = min(ρ*, α)`, i.e. `α − 2b ≤ |D̃D_↓(τ̃)| ≤ α`, instead of the paper's band centred on
    /// `α` (`|D̃D_↓(τ̃)|` up to `α + ρ*`). Off in the library (the paper); the estimator's and
    /// the CLI's default (`docs/deviations.md#fdp-fair-rho-star-in-practice`).
    pub band_inside: bool,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            alpha: 0.1,
            rho_star: 0.03,
            c_omega: 0.1,
            eta_tol: 0.01,
            monotoniser: Monotoniser::Numerical,
            clip: None,
            zero_within_band: false,
            band_inside: false,
        }
    }
}

impl SearchConfig {
    pub fn validate(&self) -> Result<()> {
        let check = |name: &'static str, v: f64, ok: bool| {
            if ok && v.is_finite() {
                Ok(())
            } else {
                Err(invalid(name, format!("got {v}")))
            }
        };
        check("alpha", self.alpha, self.alpha >= 0.0)?;
        check("rho_star", self.rho_star, self.rho_star >= 0.0)?;
        check("c_omega", self.c_omega, self.c_omega >= 0.0)?;
        check(
            "eta_tol",
            self.eta_tol,
            self.eta_tol > 0.0 && self.eta_tol < 0.5,
        )
    }
}

/// The outcome of Algorithm 2 at the server: `τ̃` and everything a reader needs to judge it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Search {
    pub tau: f64,
    /// Tree depth `M`.
    pub depth: usize,
    /// `ω` of the monotone correction.
    pub omega: f64,
    /// `D̃D` on the grid (before correction).
    pub dd: Vec<f64>,
    /// `D̃D_↓` on the grid.
    pub dd_corrected: Vec<f64>,
    /// Whether `D̃D_↓` is non-increasing (Alg. 6 does not guarantee it).
    pub monotone: bool,
    /// Algorithm 4 returned NULL and Algorithm 6 was used instead (`docs/deviations.md#fdp-fair-selection-rule-gaps`).
    pub alg4_null: bool,
    /// Whether a grid point inside the band `|D̃D_↓(τ) − sign·α| ≤ ρ*` was found (or τ̃ = 0 was
    /// accepted); `false`: the nearest point / linear interpolation (`docs/deviations.md#fdp-fair-selection-rule-gaps`).
    pub feasible: bool,
}

/// Algorithm 2 S2 (correction) and S3 (selection) on the aggregated grid DD `dd` (length
/// `2^M + 1`).
///
/// S3, with the rules of `docs/deviations.md#fdp-fair-selection-rule-gaps`: `τ̃ = 0` if `|D̃D_↓(0)| ≤ α` (`α + ρ*` with
/// `zero_within_band`); otherwise search only on the side of `sign(D̃D_↓(0))` for the smallest
/// `|τ|` with `|D̃D_↓(τ) − sign·α| ≤ ρ*`; if there is none, interpolate linearly between the
/// first two grid points that straddle `sign·α`, or take the point nearest to it, and flag
/// `feasible = false`.
///
/// Where the noisy `D̃D` falls steadily, Algorithm 6 (run from the right end) returns its lower
/// edge `D̃D − ω`, so the selected point has `D̃D(τ̃) ≈ D̃D_↓(τ̃) + ω`: `|D̃D(τ̃)| ≈ α + ω` on the
/// positive side and `α − ω` on the negative side (the synthetic design's; measured at ρ* = 0,
/// S = 3, ε = 1: `|D̃D(τ̃)| = 0.281` for α = 0.3, ω = 0.0195; BENCHMARKS.md).
pub fn select(
    dd: Vec<f64>,
    depth: usize,
    omega: f64,
    clip: Clip,
    config: &SearchConfig,
) -> Result<Search> {
    config.validate()?;
    let n = (1usize << depth) + 1;
    if dd.len() != n {
        return Err(Error::InvalidData(format!(
            "DD grid has {} points, expected 2^M + 1 = {n}",
            dd.len()
        )));
    }
    let (corrected, alg4_null) = match config.monotoniser {
        Monotoniser::Numerical => (non_increasing_numerical(&dd, omega, clip).values, false),
        Monotoniser::Theory => match non_increasing(&dd, omega) {
            Some(f) => (f, false),
            None => (non_increasing_numerical(&dd, omega, clip).values, true),
        },
    };
    let monotone = is_non_increasing(&corrected);
    let zero = 1usize << (depth - 1);
    let d0 = corrected[zero];
    let (alpha, band) = (config.alpha, config.rho_star);
    let accept = if config.zero_within_band && !config.band_inside {
        alpha + band
    } else {
        alpha
    };
    // The band's centre below α and its half-width (`band_inside`).
    let (centre, band) = if config.band_inside {
        let b = band.min(alpha);
        (alpha - b, b)
    } else {
        (alpha, band)
    };
    let done = |tau: f64, feasible: bool| Search {
        tau,
        depth,
        omega,
        dd: dd.clone(),
        dd_corrected: corrected.clone(),
        monotone,
        alg4_null,
        feasible,
    };
    if d0.abs() <= accept {
        return Ok(done(0.0, true));
    }
    let target = if d0 > 0.0 { centre } else { -centre };
    // Grid indices on the side of sign(D̃D_↓(0)), by increasing |τ| (starting at τ = 0).
    let side: Vec<usize> = if d0 > 0.0 {
        (zero..n).collect()
    } else {
        (0..=zero).rev().collect()
    };
    if let Some(&i) = side[1..]
        .iter()
        .find(|&&i| (corrected[i] - target).abs() <= band)
    {
        return Ok(done(grid_point(i, depth), true));
    }
    let straddle = side.windows(2).find(|w| {
        let (a, b) = (corrected[w[0]] - target, corrected[w[1]] - target);
        a * b <= 0.0 && a != b
    });
    let tau = match straddle {
        Some(w) => {
            let (ta, tb) = (grid_point(w[0], depth), grid_point(w[1], depth));
            let (fa, fb) = (corrected[w[0]], corrected[w[1]]);
            ta + (tb - ta) * (target - fa) / (fb - fa)
        }
        None => {
            let i = side[1..]
                .iter()
                .copied()
                .min_by(|&a, &b| {
                    (corrected[a] - target)
                        .abs()
                        .total_cmp(&(corrected[b] - target).abs())
                })
                .unwrap_or(zero);
            grid_point(i, depth)
        }
    };
    Ok(done(tau, false))
}

/// ω for the sites, then [`select`]: the whole server side of Algorithm 2 given the trees.
pub fn search(
    trees: &[(f64, &SiteTrees)],
    omega_sites: &[OmegaSite],
    clip: Clip,
    config: &SearchConfig,
) -> Result<Search> {
    let dd = aggregate_dd(trees)?;
    let depth = trees[0].1.groups[0].depth();
    let w = omega(config.c_omega, omega_sites, depth, config.eta_tol);
    select(dd, depth, w, clip, config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_rules_match_the_spec_vectors() {
        // `docs/reference-values.md#fdp-fair`: S = 4/5/6, N_s = 2000, ε ≥ 1: paper 13/14/14; code 6/6/6.
        for (s, paper) in [(4, 13), (5, 14), (6, 14)] {
            let sites = vec![(2000, 1.0); s];
            assert_eq!(DepthRule::Paper.depth(&sites).unwrap(), paper);
            assert_eq!(DepthRule::Code.depth(&sites).unwrap(), 6);
        }
        // `docs/deviations.md#fdp-fair-tree-depth-m`: θ = 2^{1−M} gives M back; θ between two powers rounds the depth up.
        assert_eq!(
            DepthRule::Theta { theta: 1.0 / 32.0 }.depth(&[]).unwrap(),
            6
        );
        assert_eq!(DepthRule::Theta { theta: 0.03 }.depth(&[]).unwrap(), 7);
        assert!(DepthRule::Fixed { depth: 0 }.depth(&[]).is_err());
    }

    #[test]
    fn grid_contains_zero_and_both_ends() {
        let g = grid(6);
        assert_eq!(g.len(), 65);
        assert_eq!((g[0], g[32], g[64]), (-1.0, 0.0, 1.0));
    }

    fn linear_dd(depth: usize, slope: f64, offset: f64) -> Vec<f64> {
        grid(depth)
            .into_iter()
            .map(|t| (offset - slope * t).clamp(-1.0, 1.0))
            .collect()
    }

    #[test]
    fn selection_follows_the_sign_and_the_band() {
        let cfg = SearchConfig {
            alpha: 0.1,
            rho_star: 0.01,
            ..SearchConfig::default()
        };
        // Automatically fair: |DD(0)| ≤ α gives τ̃ = 0.
        let s = select(linear_dd(6, 1.0, 0.05), 6, 0.0, Clip::Symmetric, &cfg).unwrap();
        assert_eq!(s.tau, 0.0);
        // DD(τ) = −0.5 − τ: negative at 0, crossing −α at τ = −0.4 (a grid point at M = 6).
        let s = select(linear_dd(6, 1.0, -0.5), 6, 0.0, Clip::Symmetric, &cfg).unwrap();
        assert!(
            (s.tau + 0.40625).abs() <= 1.0 / 32.0 + 1e-12 && s.tau < 0.0,
            "{s:?}"
        );
        assert!(s.feasible);
        assert!((s.dd_corrected[(s.tau * 32.0 + 32.0).round() as usize] + 0.1).abs() <= 0.01);
        // Positive side, mirror image.
        let s = select(linear_dd(6, 1.0, 0.5), 6, 0.0, Clip::Symmetric, &cfg).unwrap();
        assert!(
            s.tau > 0.0 && (s.tau - 0.4).abs() <= 1.0 / 32.0 + 1e-12,
            "{s:?}"
        );
        // Empty band (ρ* = 0, crossing between grid points): linear interpolation, flagged.
        let cfg0 = SearchConfig {
            rho_star: 0.0,
            ..cfg.clone()
        };
        let s = select(linear_dd(6, 1.0, -0.51), 6, 0.0, Clip::Symmetric, &cfg0).unwrap();
        assert!(!s.feasible);
        assert!((s.tau + 0.41).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn select_rejects_a_grid_of_the_wrong_length() {
        assert!(
            select(
                vec![0.0; 10],
                6,
                0.0,
                Clip::Symmetric,
                &SearchConfig::default()
            )
            .is_err()
        );
    }
}
