//! Algorithm 2 (FDP.THRESHOLD.SEARCH) at the server: the tree depth `M` (step 0, `docs/deviations.md#fdp-fair-tree-depth-m` and
//! the tree-depth rule of Xue & Yu, §5.1.2), the private DD curve on the grid `τ_j = −1 + (j−1)2^{1−M}` from the sites' noisy trees
//! (S2), its monotone correction (Algorithm 6, or 4) and the selection of `τ̃` (S3, with the rules
//! of `docs/deviations.md#fdp-fair-selection-rule-gaps` for what the paper leaves open).

use crate::fdp_fair::correction::{
    Clip, OmegaSite, is_non_increasing, non_increasing, non_increasing_numerical, omega,
};
use crate::fdp_fair::tree::{MAX_DEPTH, SiteTrees, TreeNoise, tail_nodes};
use crate::plugin::error::{Error, Result, invalid};
use crate::plugin::threshold::{GroupRule, RuleMix};
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

/// How far beyond `[−1, 1]` (the range of a disparity) one site's unclipped curve may go
/// ([`site_dd`] without `clip_tails`): a guard against a site that reports a tiny noisy group
/// total, whose fractions would otherwise be unbounded. It moves an honest site's estimate only
/// where the truth is near ±1 (τ near the ends of the grid, far from where the selection acts,
/// `|DD| ≈ α`) and the site's noise sd is a sizeable part of 1/4 (`docs/federated-trust.md`).
pub const UNCLIPPED_MARGIN: f64 = 0.25;

/// `B`, the largest `|D̃D^s(τ)|` any site's curve can have in [`site_dd`]: 1 with `clip_tails`
/// (both fractions in `[0, 1]`), `1 +` [`UNCLIPPED_MARGIN`] without.
pub fn site_dd_bound(clip_tails: bool) -> f64 {
    if clip_tails {
        1.0
    } else {
        1.0 + UNCLIPPED_MARGIN
    }
}

/// One site's private DD curve on the grid (Alg. 2 S2):
/// `D̃D^s(τ_j) = Tail_{s,1}(τ_j)/N_{s,1} − (N_{s,0} − Tail_{s,0}(τ_j))/N_{s,0}`.
///
/// Post-processing guards: the noisy totals are floored at 1, and with `clip_tails` (the code's,
/// Xue & Yu, §5.1.2) the tails are clipped to `[0, N_{s,a}]`, so that every term is a fraction in
/// `[0, 1]`; then `D̃D^s(τ_1) = 1` (the `j = 1` case) and `D̃D^s(τ_{2^M+1}) = −1`. The clipping
/// biases a term whose true fraction is 0 or 1 by about `0.4σ/N` towards the inside
/// (`docs/deviations.md#fdp-fair-unclipped-tails`). Without it the curve is kept within
/// `±(1 +` [`UNCLIPPED_MARGIN`]`)`. Either way `|D̃D^s| ≤` [`site_dd_bound`]: what bounds a
/// dishonest site's pull on the aggregate (`docs/federated-trust.md`).
pub fn site_dd(trees: &SiteTrees, clip_tails: bool) -> Vec<f64> {
    let depth = trees.groups[0].depth();
    let total = |a: usize| trees.groups[a].total().max(1.0);
    let (n0, n1) = (total(0), total(1));
    let tail = |a: usize, j: usize, n: f64| {
        let t = trees.groups[a].tail(j);
        if clip_tails { t.clamp(0.0, n) } else { t }
    };
    let b = site_dd_bound(clip_tails);
    (1..=(1usize << depth) + 1)
        .map(|j| (tail(1, j, n1) / n1 - (n0 - tail(0, j, n0)) / n0).clamp(-b, b))
        .collect()
}

/// `D̃D(τ) = Σ_s μ_s D̃D^s(τ)` on the grid ([`site_dd`] with `clip_tails`).
pub fn aggregate_dd(sites: &[(f64, &SiteTrees)], clip_tails: bool) -> Result<Vec<f64>> {
    let Some((_, first)) = sites.first() else {
        return Err(invalid("sites", "no trees to aggregate"));
    };
    let depth = first.groups[0].depth();
    let mut out = vec![0.0; (1 << depth) + 1];
    for (s, (mu, t)) in sites.iter().enumerate() {
        for a in 0..2 {
            t.groups[a].validate(depth, &format!("site {s}, group {a}"))?;
        }
        for (o, v) in out.iter_mut().zip(site_dd(t, clip_tails)) {
            *o += mu * v;
        }
    }
    Ok(out)
}

/// The standard deviation of `D̃D(τ_j)` at every grid point as an estimate of the classifier's
/// population disparity, from public quantities only: each site's node noise `σ_s`
/// ([`TreeNoise::node_sigma`], fixed by the broadcast), the nodes that make up each tail
/// ([`tail_nodes`]), and the released trees themselves (`docs/deviations.md#fdp-fair-noise-margin`).
///
/// For one group's term `r = Tail(τ_j)/N` (the noisy tail over the noisy total `N`, floored at
/// 1, as [`site_dd`]) the delta method gives `Var r ≈ σ_s²/N² (k_j + (1_L − r)² + (1_R − r)²)`,
/// with `k_j` the tail's nodes below level 1 and `1_L`, `1_R` whether the tail holds the two
/// level-1 nodes that make up `N`; the calibration sample's own binomial spread `r(1 − r)/N`
/// is added. Sites and groups are independent:
/// `Var D̃D(τ_j) = Σ_s μ_s² min(Σ_a Var r_{s,a}(τ_j), B²)`, `B` = [`site_dd_bound`] (a site's
/// curve lies in `[−B, B]`, so this is never an underestimate).
pub fn dd_sd(sites: &[(f64, &SiteTrees)], sigmas: &[f64], clip_tails: bool) -> Result<Vec<f64>> {
    if sites.len() != sigmas.len() || sites.is_empty() {
        return Err(invalid(
            "sites",
            format!("{} sites but {} noise scales", sites.len(), sigmas.len()),
        ));
    }
    let depth = sites[0].1.groups[0].depth();
    let mut var = vec![0.0; (1 << depth) + 1];
    // A site's curve lies in [−B, B] (`site_dd_bound`), so its variance is at most B²
    // (Popoviciu): the delta method is capped there, so a tiny noisy group total cannot inflate
    // the margin without bound.
    let cap = site_dd_bound(clip_tails).powi(2);
    for (&(mu, trees), &sigma) in sites.iter().zip(sigmas) {
        let mut site_var = vec![0.0; var.len()];
        for tree in &trees.groups {
            tree.validate(depth, "a site's tree")?;
            let n = tree.total().max(1.0);
            for (j, v) in (1..).zip(site_var.iter_mut()) {
                let r = tree.tail(j).clamp(0.0, n) / n;
                let (mut below, mut left, mut right) = (0.0, 0.0, 0.0);
                if j == 1 {
                    (left, right) = (1.0, 1.0);
                }
                for (l, k) in tail_nodes(depth, j) {
                    match (l, k) {
                        (1, 1) => left = 1.0,
                        (1, _) => right = 1.0,
                        _ => below += 1.0,
                    }
                }
                let tree_var =
                    sigma * sigma / (n * n) * (below + (left - r).powi(2) + (right - r).powi(2));
                *v += tree_var + r * (1.0 - r) / n;
            }
        }
        for (v, s) in var.iter_mut().zip(site_var) {
            *v += mu * mu * s.min(cap);
        }
    }
    Ok(var.into_iter().map(f64::sqrt).collect())
}

/// A curve on Algorithm 2's grid of depth `depth` (`2^M + 1` values), linearly interpolated at
/// `tau` (τ̃ may fall between grid points).
pub fn curve_at(values: &[f64], depth: usize, tau: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let last = values.len() - 1;
    let step = 2.0 / (1u64 << depth) as f64;
    let i = (((tau + 1.0) / step).floor().max(0.0) as usize).min(last.saturating_sub(1));
    let (t0, f0, f1) = (grid_point(i, depth), values[i], values[(i + 1).min(last)]);
    f0 + (f1 - f0) * ((tau - t0) / step).clamp(0.0, 1.0)
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
    /// The noise margin `z ≥ 0`: the selection treats `α_j = max(α − z·sd_j, 0)` as the level
    /// at grid point `j`, `sd_j` the standard deviation of `D̃D(τ_j)` ([`dd_sd`]), so that the
    /// server's one-sided bound `|D̃D_↓(τ̃)| + z·sd` is within α. `0` is the paper (no margin,
    /// the library's default); the estimator and the CLI use 1.645, a one-sided 95% bound
    /// (`docs/deviations.md#fdp-fair-noise-margin`).
    pub margin_z: f64,
    /// Where no grid point lies in the band, mix the rules of the two grid points that straddle
    /// it at random (each prediction uses the outer one with the probability that puts the
    /// mixture's released disparity on the band's centre) instead of interpolating `τ̃` between
    /// them (the paper's gap rule). Off in the library; the estimator's and the CLI's default
    /// (`docs/deviations.md#fdp-fair-randomised-straddle`).
    pub randomise_straddle: bool,
    /// Clip each site's noisy tails to `[0, N_{s,a}]` before dividing ([`site_dd`]; the code's
    /// guard, the library's default). Off in the estimator and the CLI: the clipping biases the
    /// estimate where a group's scores lie all on one side of τ
    /// (`docs/deviations.md#fdp-fair-unclipped-tails`).
    pub clip_tails: bool,
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
            margin_z: 0.0,
            randomise_straddle: false,
            clip_tails: true,
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
        check("margin_z", self.margin_z, self.margin_z >= 0.0)?;
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
    /// The standard deviation of `D̃D` on the grid ([`dd_sd`]; empty in models saved before it).
    #[serde(default)]
    pub dd_sd: Vec<f64>,
    /// The randomised straddle ([`SearchConfig::randomise_straddle`]): the second grid point's
    /// threshold and the probability that a prediction uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<RuleMix>,
}

impl Search {
    /// The classifier's rule: the paper's threshold at τ̃, mixed with the second grid point's
    /// when the straddle is randomised.
    pub fn rule(&self) -> GroupRule {
        match self.mix {
            None => GroupRule::paper(self.tau),
            Some(m) => GroupRule::mixed(self.tau, m.tau, m.weight),
        }
    }

    /// The server's corrected estimate of the disparity of [`Search::rule`]: `D̃D_↓(τ̃)` (the
    /// mixture of the two grid points' for a randomised straddle).
    pub fn dd_at_tau(&self) -> f64 {
        self.mixed(&self.dd_corrected)
    }

    /// The standard deviation of that estimate ([`dd_sd`]; for a mixture, the same mixture of
    /// the two points' standard deviations, an upper bound; NaN for models saved before it).
    pub fn sd_at_tau(&self) -> f64 {
        self.mixed(&self.dd_sd)
    }

    /// `τ̃ = …` with the probability a prediction uses it and the other threshold of a
    /// randomised straddle (τ̃ itself, at probability 1, without one): always the same words,
    /// so that what a fit prints does not depend on the data except through released values.
    pub fn describe_threshold(&self) -> String {
        let (other, weight) = self.mix.map_or((self.tau, 0.0), |m| (m.tau, m.weight));
        format!(
            "τ̃ = {:.5} with probability {:.3}, else {other:.5}",
            self.tau,
            1.0 - weight
        )
    }

    /// A grid curve at τ̃, or mixed like [`Search::rule`].
    pub fn mixed(&self, values: &[f64]) -> f64 {
        let at = |tau| curve_at(values, self.depth, tau);
        match self.mix {
            None => at(self.tau),
            Some(m) => (1.0 - m.weight) * at(self.tau) + m.weight * at(m.tau),
        }
    }
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
    dd_sd: Vec<f64>,
    depth: usize,
    omega: f64,
    clip: Clip,
    config: &SearchConfig,
) -> Result<Search> {
    config.validate()?;
    let n = (1usize << depth) + 1;
    if dd.len() != n || dd_sd.len() != n {
        return Err(Error::InvalidData(format!(
            "DD grid has {} points and its standard deviations {}, expected 2^M + 1 = {n}",
            dd.len(),
            dd_sd.len()
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
    let rho = config.rho_star;
    // The level at grid point i: α less the noise margin (α itself with `margin_z = 0`).
    let level = |i: usize| (config.alpha - config.margin_z * dd_sd[i]).max(0.0);
    let accept = if config.zero_within_band && !config.band_inside {
        level(zero) + rho
    } else {
        level(zero)
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
        dd_sd: dd_sd.clone(),
        mix: None,
    };
    if d0.abs() <= accept {
        return Ok(done(0.0, true));
    }
    let sign = if d0 > 0.0 { 1.0 } else { -1.0 };
    // The band at grid point i: its centre (signed) and half-width; below the level with
    // `band_inside`, centred on it otherwise.
    let band = |i: usize| {
        let a = level(i);
        let (centre, half) = if config.band_inside {
            let b = rho.min(a);
            (a - b, b)
        } else {
            (a, rho)
        };
        (sign * centre, half)
    };
    // Distance of the corrected curve from the band's centre at grid point i.
    let off = |i: usize| corrected[i] - band(i).0;
    // Grid indices on the side of sign(D̃D_↓(0)), by increasing |τ| (starting at τ = 0).
    let side: Vec<usize> = if d0 > 0.0 {
        (zero..n).collect()
    } else {
        (0..=zero).rev().collect()
    };
    if let Some(&i) = side[1..].iter().find(|&&i| off(i).abs() <= band(i).1) {
        return Ok(done(grid_point(i, depth), true));
    }
    // With a margin, τ̃ = 0 is kept when it passes the paper's test, and, where the noise at 0
    // is too large for any bound to be within α (z·sd ≥ α there), unless the estimate shows a
    // disparity: |D̃D_↓(0)| − z·sd > α, the one-sided test of |DD(0)| ≤ α. Moving on less would
    // act on noise without certifying anything (`docs/deviations.md#fdp-fair-noise-margin`).
    let paper_accept = if config.zero_within_band && !config.band_inside {
        config.alpha + rho
    } else {
        config.alpha
    };
    let noise_at_zero = config.margin_z * dd_sd[zero];
    let keep_zero = if noise_at_zero >= config.alpha {
        paper_accept + noise_at_zero
    } else {
        paper_accept
    };
    if config.margin_z > 0.0 && d0.abs() <= keep_zero {
        return Ok(done(0.0, false));
    }
    let straddle = side.windows(2).find(|w| {
        let (a, b) = (off(w[0]), off(w[1]));
        a * b <= 0.0 && a != b
    });
    let tau = match straddle {
        Some(w) => {
            let (ta, tb) = (grid_point(w[0], depth), grid_point(w[1], depth));
            let (fa, fb) = (off(w[0]), off(w[1]));
            if config.randomise_straddle {
                // (1 − q)·off(a) + q·off(b) = 0: the mixture's released disparity is on the centre.
                let q = fa / (fa - fb);
                let mut found = done(ta, false);
                found.mix = Some(RuleMix { tau: tb, weight: q });
                return Ok(found);
            }
            ta + (tb - ta) * fa / (fa - fb)
        }
        None => {
            let i = side[1..]
                .iter()
                .copied()
                .min_by(|&a, &b| off(a).abs().total_cmp(&off(b).abs()))
                .unwrap_or(zero);
            grid_point(i, depth)
        }
    };
    Ok(done(tau, false))
}

/// ω and the standard deviations of `D̃D` for the sites, then [`select`]: the whole server side
/// of Algorithm 2 given the trees, released with `tree_noise` at each site's `(ε_s, δ_s)`.
pub fn search(
    trees: &[(f64, &SiteTrees)],
    omega_sites: &[OmegaSite],
    tree_noise: TreeNoise,
    clip: Clip,
    config: &SearchConfig,
) -> Result<Search> {
    let dd = aggregate_dd(trees, config.clip_tails)?;
    let depth = trees[0].1.groups[0].depth();
    let sigmas = omega_sites
        .iter()
        .map(|s| tree_noise.node_sigma(s.epsilon, s.delta, depth))
        .collect::<Result<Vec<_>>>()?;
    let sd = dd_sd(trees, &sigmas, config.clip_tails)?;
    let w = omega(config.c_omega, omega_sites, depth, config.eta_tol);
    select(dd, sd, depth, w, clip, config)
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
        let s = select(
            linear_dd(6, 1.0, 0.05),
            vec![0.0; 65],
            6,
            0.0,
            Clip::Symmetric,
            &cfg,
        )
        .unwrap();
        assert_eq!(s.tau, 0.0);
        // DD(τ) = −0.5 − τ: negative at 0, crossing −α at τ = −0.4 (a grid point at M = 6).
        let s = select(
            linear_dd(6, 1.0, -0.5),
            vec![0.0; 65],
            6,
            0.0,
            Clip::Symmetric,
            &cfg,
        )
        .unwrap();
        assert!(
            (s.tau + 0.40625).abs() <= 1.0 / 32.0 + 1e-12 && s.tau < 0.0,
            "{s:?}"
        );
        assert!(s.feasible);
        assert!((s.dd_corrected[(s.tau * 32.0 + 32.0).round() as usize] + 0.1).abs() <= 0.01);
        // Positive side, mirror image.
        let s = select(
            linear_dd(6, 1.0, 0.5),
            vec![0.0; 65],
            6,
            0.0,
            Clip::Symmetric,
            &cfg,
        )
        .unwrap();
        assert!(
            s.tau > 0.0 && (s.tau - 0.4).abs() <= 1.0 / 32.0 + 1e-12,
            "{s:?}"
        );
        // Empty band (ρ* = 0, crossing between grid points): linear interpolation, flagged.
        let cfg0 = SearchConfig {
            rho_star: 0.0,
            ..cfg.clone()
        };
        let s = select(
            linear_dd(6, 1.0, -0.51),
            vec![0.0; 65],
            6,
            0.0,
            Clip::Symmetric,
            &cfg0,
        )
        .unwrap();
        assert!(!s.feasible);
        assert!((s.tau + 0.41).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn the_noise_margin_keeps_the_bound_within_alpha() {
        let cfg = SearchConfig {
            alpha: 0.1,
            rho_star: 0.01,
            band_inside: true,
            margin_z: 1.645,
            ..SearchConfig::default()
        };
        let pick = |sd: f64, cfg: &SearchConfig| {
            select(
                linear_dd(6, 1.0, -0.5),
                vec![sd; 65],
                6,
                0.0,
                Clip::Symmetric,
                cfg,
            )
            .unwrap()
        };
        // sd = 0.02: level 0.1 − 1.645·0.02 = 0.0671, band [−0.0671, −0.0471] ∋ −0.0625 at τ = −0.4375.
        let s = pick(0.02, &cfg);
        assert!(s.feasible, "{s:?}");
        assert_eq!(s.tau, -0.4375);
        assert!(s.dd_at_tau().abs() + 1.645 * s.sd_at_tau() <= 0.1, "{s:?}");
        assert_eq!(s.sd_at_tau(), 0.02);
        // Without the margin the band is [−0.1, −0.08] ∋ −0.09375 at τ = −0.40625: nearer to 0.
        let plain = pick(
            0.02,
            &SearchConfig {
                margin_z: 0.0,
                ..cfg.clone()
            },
        );
        assert_eq!(plain.tau, -0.40625);
        // A margin larger than α: the level is 0, the selection aims at the curve's zero
        // (τ = −0.5, a grid point), and the bound is not within α.
        let s = pick(1.0, &cfg);
        assert_eq!(s.tau, -0.5);
        assert!(s.dd_at_tau().abs() + 1.645 * s.sd_at_tau() > 0.1);
        // τ̃ = 0 is accepted only when the bound at 0 is within α.
        let flat = |sd: f64| {
            select(
                linear_dd(6, 1.0, 0.05),
                vec![sd; 65],
                6,
                0.0,
                Clip::Symmetric,
                &cfg,
            )
            .unwrap()
            .tau
        };
        assert_eq!(flat(0.03), 0.0);
        assert!(flat(0.04) > 0.0);
        // Where the noise at 0 allows no bound within α (1.645·0.2 ≥ α), τ̃ stays at 0 unless
        // |D̃D_↓(0)| − 1.645·sd > α: 0.2 stays (0.2 < 0.1 + 0.329), 0.5 moves.
        let at = |offset: f64| {
            select(
                linear_dd(6, 1.0, offset),
                vec![0.2; 65],
                6,
                0.0,
                Clip::Symmetric,
                &cfg,
            )
            .unwrap()
            .tau
        };
        assert_eq!(at(0.2), 0.0);
        assert!(at(0.5) > 0.0);
        assert!(
            SearchConfig {
                margin_z: -1.0,
                ..cfg
            }
            .validate()
            .is_err()
        );
    }

    /// `dd_sd` against the spread it predicts. Two sites draw fresh calibration samples from known
    /// score distributions and release their trees, 400 times; the curve is built with unclipped
    /// tails (the estimator's). At every inner grid point the empirical standard deviation of
    /// `D̃D(τ_j) − DD(τ_j)` (DD the population disparity) must match the mean predicted sd within
    /// 15% (the sample sd of 400 draws has relative standard error 1/√800 = 3.5%: about 4
    /// standard errors, plus the delta method's approximation), and its mean must be within 4
    /// standard errors of 0. The one-sided 1.645·sd bound must cover `DD` in 95% of the draws at
    /// τ = 0 (binomial standard error 1.1%: accepted 91%–99%).
    #[test]
    fn dd_sd_predicts_the_spread_of_the_estimate() {
        use crate::fdp_fair::tree::{TreeCounts, TreeNoise};
        use dpfair_privacy::{Budget, Ledger, Noise};
        use rand::{RngExt, SeedableRng};
        let depth = 6;
        let (n, reps) = ([3_000usize, 1_000], 400);
        // Group 0: Z uniform on [−1, 1]; group 1: Z uniform on [−0.5, 1].
        let tail = |a: usize, t: f64| {
            if a == 0 {
                ((1.0 - t) / 2.0).clamp(0.0, 1.0)
            } else {
                ((1.0 - t) / 1.5).clamp(0.0, 1.0)
            }
        };
        let truth: Vec<f64> = grid(depth)
            .iter()
            .map(|&t| tail(1, t) - (1.0 - tail(0, t)))
            .collect();
        let sigma = TreeNoise::Analytic.node_sigma(1.0, 1e-6, depth).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (mut errors, mut predicted) = (vec![Vec::new(); 65], vec![0.0; 65]);
        let mut covered = 0;
        for rep in 0..reps {
            let trees: Vec<SiteTrees> = (0..2)
                .map(|site| {
                    let mut counts = TreeCounts::new(depth).unwrap();
                    for (a, &rows) in n.iter().enumerate() {
                        let low = if a == 0 { -1.0 } else { -0.5 };
                        let z: Vec<f64> = (0..rows).map(|_| rng.random_range(low..1.0)).collect();
                        counts.update(a, &z).unwrap();
                    }
                    let mut ledger = Ledger::new(Budget::approx(1.0, 1e-6).unwrap());
                    let mut noise = Noise::seeded((1_000 * rep + site) as u64);
                    counts
                        .release(1.0, 1e-6, TreeNoise::Analytic, "", &mut ledger, &mut noise)
                        .unwrap()
                })
                .collect();
            let sites: Vec<(f64, &SiteTrees)> = trees.iter().map(|t| (0.5, t)).collect();
            let dd = aggregate_dd(&sites, false).unwrap();
            let sd = dd_sd(&sites, &[sigma, sigma], false).unwrap();
            for j in 0..65 {
                errors[j].push(dd[j] - truth[j]);
                predicted[j] += sd[j] / reps as f64;
            }
            covered += usize::from(truth[32] <= dd[32] + 1.645 * sd[32]);
        }
        for (j, &t) in grid(depth).iter().enumerate().skip(1).take(63) {
            let mean = errors[j].iter().sum::<f64>() / reps as f64;
            let var = errors[j].iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (reps - 1) as f64;
            let ratio = var.sqrt() / predicted[j];
            assert!(
                (0.85..=1.15).contains(&ratio),
                "τ = {t}: empirical/predicted sd = {ratio}"
            );
            // Unclipped tails: no bias beyond 4 standard errors of the mean of 400 draws.
            let se = predicted[j] / (reps as f64).sqrt();
            assert!(
                mean.abs() <= 4.0 * se,
                "τ = {t}: mean error {mean} (SE {se})"
            );
        }
        let rate = covered as f64 / reps as f64;
        assert!((0.91..=0.99).contains(&rate), "coverage at τ = 0: {rate}");
    }

    #[test]
    fn a_randomised_straddle_puts_the_mixture_on_the_centre() {
        // A jump from 0.4 (τ < 0) to −0.6 (τ ≥ 0): no grid point near −α.
        let dd: Vec<f64> = grid(6)
            .iter()
            .map(|&t| if t < 0.0 { 0.4 } else { -0.6 })
            .collect();
        let cfg = SearchConfig {
            alpha: 0.1,
            rho_star: 0.01,
            band_inside: true,
            randomise_straddle: true,
            ..SearchConfig::default()
        };
        let s = select(dd.clone(), vec![0.0; 65], 6, 0.0, Clip::Symmetric, &cfg).unwrap();
        assert!(!s.feasible);
        let mix = s.mix.expect("randomised");
        // Centre −0.09: (1 − q)(−0.6) + q·0.4 = −0.09 at q = 0.51, between τ = 0 and −1/32.
        assert_eq!((s.tau, mix.tau), (0.0, -1.0 / 32.0));
        assert!((mix.weight - 0.51).abs() < 1e-12, "{mix:?}");
        assert!((s.dd_at_tau() + 0.09).abs() < 1e-12);
        assert_eq!(s.rule().mix, Some(mix));
        // The paper's rule interpolates τ̃ instead: one threshold.
        let plain = select(
            dd,
            vec![0.0; 65],
            6,
            0.0,
            Clip::Symmetric,
            &SearchConfig {
                randomise_straddle: false,
                ..cfg
            },
        )
        .unwrap();
        assert!(plain.mix.is_none() && plain.tau < 0.0 && plain.tau > -1.0 / 32.0);
    }

    #[test]
    fn select_rejects_a_grid_of_the_wrong_length() {
        assert!(
            select(
                vec![0.0; 10],
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
