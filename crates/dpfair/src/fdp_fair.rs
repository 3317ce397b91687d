//! FDP-Fair: the federated DP fair plug-in classifier under demographic disparity, Algorithm 1 of
//! Xue & Yu, "Federated fairness-aware classification under differential privacy", with Algorithms 2, 3, 4 and 6.
//!
//! Algorithm 1, step by step, and where each step lives:
//! 1. **Data split** per site, `n_s = ⌈N_s/2⌉` training rows, the rest calibration, by a public
//!    seeded permutation ([`protocol::site_split`]).
//! 2. **S1** at each site on its training half: `π̃^s_a` (S1.1) and the two functional releases
//!    per group (S1.2), as one exactly private finite object in a public random-feature basis
//!    ([`crate::plugin::release`], `docs/deviations.md#fdp-fair-gp-sample-paths-drawn-once`); the server aggregates them with weights `ν_s`
//!    (ratio of weighted sums) and broadcasts `η̃_a`, `π̃_a` ([`protocol::aggregate_round1`]; the
//!    broadcast is the second communication round the paper leaves implicit, `docs/deviations.md#fdp-fair-protocol-rounds`).
//! 3. **S2** = Algorithm 2: each site's two noisy trees of its calibration scores (Algorithm 3,
//!    [`tree`]); the server's DD curve on the grid from the tails, μ-weighted, the monotone
//!    correction (Algorithm 6 or 4, [`correction`]) and the selection of `τ̃` ([`search`]).
//! 4. **OUTPUT** `f̃(x,a) = 1{η̃_a(x) ≥ 1/2 + τ̃(2a−1)/(2π̃_a)}`: the same classifier type as
//!    CDP-Fair ([`crate::cdp_fair::Model`] with `method = fdp-fair`).
//!
//! [`simulate`] runs S sites in one process through exactly these steps; [`steps`] is what each
//! transport (the CLI's files, Python, Flower) calls for one site's or the server's step.
//!
//! ## Accounting
//!
//! Every site's guarantee is `(ε_s, δ_s)` for its own data (federated DP, Def. 2); S1 and the
//! trees touch the disjoint halves of a data-independent split (parallel composition). The model's
//! ledger holds every site's releases as parts of one partition of disjoint data, so its total is
//! the worst site's `(ε_s, δ_s)`.
//!
//! * [`Accounting::Strict`] (default): S1 as one joint analytic-Gaussian release (valid for every
//!   ε, `docs/deviations.md#fdp-fair-gaussian-mechanism-for-epsilon-above-1`); private `π̃`; the public bandwidth rule; Algorithm 6 clips to `[−1, 1]` (`docs/deviations.md#fdp-fair-algorithm-6-clipping`).
//! * [`Accounting::Paper`]: S1 with the paper's four classical releases (`σ_π`, `c_{s,a}`, each
//!   charged at its true cost), optionally the experiments' empirical π (charged as `ε = ∞`), and
//!   Algorithm 6 clipping to `[0, 1]` as printed.
//!
//! The tree noise of Algorithm 3 is the paper's in both modes: it is valid for every ε through
//! zCDP ([`tree`]).
//!
//! ## Defaults
//!
//! `ρ* = 0.03`, `C_ω = 0.1` (§5.1.2), `η_tol = 0.01` (the code, `docs/deviations.md#fdp-fair-eta-tol-and-omega`), `M` by the code's rule capped
//! at 6 (`docs/deviations.md#fdp-fair-tree-depth-m`; `--depth-rule paper` gives the paper's 13–14 at `N_s = 2000`), weights by eq. (8)–(9)
//! (`1/S` for equal sites), `δ_s = (N_s/2)^{−2}` (§5.1.2), `τ̃ = 0` iff `|D̃D_↓(0)| ≤ α` (the paper;
//! the code accepts `α + ρ*`).

pub mod correction;
pub mod protocol;
pub mod search;
pub mod simulate;
pub mod steps;
pub mod tree;
pub mod trust;

pub use crate::predictor::Accounting;
pub use protocol::{
    FederatedInfo, FederatedModel, Global, Round1, Round2, ServerParams, SiteParams, Weights,
};
pub use search::{DepthRule, Monotoniser, SearchConfig};

use crate::plugin::error::Result;
use crate::plugin::eta_model::EtaModel;
use crate::plugin::kernel::{PUBLIC_RULE_RANGE, public_rule};
use crate::plugin::release::PiRelease;
use dpfair_data::Dataset;
use serde::{Deserialize, Serialize};

/// FDP-Fair configuration for the in-process simulation (every site gets the same `ε`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `ε_s` of every site.
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    /// `δ_s` of every site; `None` = `(N_s/2)^{−2}` per site (§5.1.2).
    pub delta: Option<f64>,
    pub accounting: Accounting,
    /// Bandwidth `h`; `None` = [`federated_bandwidth`] of all sites (simulation).
    pub bandwidth: Option<f64>,
    pub n_frequencies: usize,
    pub basis_seed: u64,
    /// π handling; `None` = private.
    pub pi: Option<PiRelease>,
    pub server: ServerParams,
    pub search: SearchConfig,
    /// The estimator of `η_a` (default: the paper's kernel; `auto` picks by a public rule,
    /// [`EtaModel::resolve`]; `docs/deviations.md#fdp-fair-logistic-plug-in`).
    pub eta_model: EtaModel,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            epsilon: 1.0,
            delta: None,
            accounting: Accounting::Strict,
            bandwidth: None,
            n_frequencies: crate::cdp_fair::DEFAULT_FREQUENCIES,
            basis_seed: protocol::DEFAULT_BASIS_SEED,
            pi: None,
            server: ServerParams::default(),
            search: SearchConfig::default(),
            eta_model: EtaModel::Kernel,
        }
    }
}

/// `δ_s = (N_s/2)^{−2}` (§5.1.2), capped at 0.5.
pub fn default_delta(n_rows: usize) -> f64 {
    (n_rows as f64 / 2.0).powi(-2).min(0.5)
}

/// The public bandwidth rule ([`public_rule`]) on a site's training size `⌈N_s/2⌉`, rounded to
/// 0.01 so that sites of similar sizes agree on one basis (the server refuses different bases).
/// What a site of the file protocol uses when no `--bandwidth` is agreed.
pub fn default_bandwidth(n_rows: usize, dim: usize, epsilon: f64) -> f64 {
    (public_rule(n_rows.div_ceil(2), dim, epsilon) * 100.0).round() / 100.0
}

/// The public bandwidth rule for a whole federation, from every site's public `(N_s, ε_s)`: the
/// order of Corollary 3 (eq. (7) without the fairness term) with β = 1 as in [`public_rule`],
/// `h = max{ (Σ_s n_s)^{−1/(2β+d)}, (Σ_s n_s² ε_s²)^{−1/(2β+2d)} }`, `n_s = ⌈N_s/2⌉`, clamped to
/// [`PUBLIC_RULE_RANGE`] and rounded to 0.01. For one site it is [`default_bandwidth`]; with
/// more sites the pooled estimator's variance falls, so the bandwidth shrinks (S = 4 sites of
/// 2,000 rows at ε = 1: 0.13 instead of a site's own 0.18). The simulation's default.
pub fn federated_bandwidth(sites: &[(usize, f64)], dim: usize) -> f64 {
    const BETA: f64 = 1.0;
    let d = dim as f64;
    let n: f64 = sites.iter().map(|&(n, _)| n.div_ceil(2) as f64).sum();
    let n2e2: f64 = sites
        .iter()
        .map(|&(n, e)| (n.div_ceil(2) as f64 * e).powi(2))
        .sum();
    let statistical = n.max(1.0).powf(-1.0 / (2.0 * BETA + d));
    let private = if n2e2.is_finite() {
        n2e2.max(1.0).powf(-1.0 / (2.0 * BETA + 2.0 * d))
    } else {
        0.0
    };
    let h = statistical
        .max(private)
        .clamp(PUBLIC_RULE_RANGE.0, PUBLIC_RULE_RANGE.1);
    (h * 100.0).round() / 100.0
}

impl Config {
    /// The round-1 parameters of one site.
    pub fn site_params(&self, site: &str, data: &Dataset) -> Result<SiteParams> {
        steps::SiteOptions {
            delta: self.delta,
            accounting: self.accounting,
            bandwidth: self.bandwidth,
            n_frequencies: self.n_frequencies,
            basis_seed: self.basis_seed,
            pi: self.pi.unwrap_or_default(),
            eta_model: self.eta_model,
            ..steps::SiteOptions::new(site, self.epsilon)
        }
        .params(data.n_rows(), data.n_features())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn federated_bandwidth_reduces_to_the_site_rule_and_shrinks_with_s() {
        // One site: the same rule (both terms coincide algebraically, β = 1).
        for (n, d, e) in [
            (2000, 2, 1.0),
            (500, 3, 0.5),
            (40_000, 2, 4.0),
            (30, 1, 0.1),
        ] {
            assert_eq!(
                federated_bandwidth(&[(n, e)], d),
                default_bandwidth(n, d, e),
                "N = {n}, d = {d}, ε = {e}"
            );
        }
        // S = 4 sites of 2,000 rows at ε = 1, d = 2: max{4000^{−1/4}, (4·10⁶)^{−1/6}} = 0.1257.
        assert_eq!(federated_bandwidth(&[(2000, 1.0); 4], 2), 0.13);
        assert_eq!(default_bandwidth(2000, 2, 1.0), 0.18);
    }
}
