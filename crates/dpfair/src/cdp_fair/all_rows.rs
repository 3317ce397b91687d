//! CDP-Fair with the DP-SGD plug-in on all rows (`--eta-model dp-sgd`, the strict default of
//! `auto`; `docs/deviations.md#cdp-fair-dp-sgd-plug-in-on-all-rows`): Algorithm 5's plug-in rule
//! `f̃(x, a) = 1{η̃_a(x) ≥ 1/2 + τ̃(2a − 1)/(2π̃_a)}` with its three statistics released on
//! **every** row, one after the other, instead of S1 and S2 on the two halves of a split:
//!
//! 1. `π̃`: the count of group 1 by the Laplace mechanism (Δ = 1 under replace-one), at
//!    [`PI_SHARE`] of ε; `π̃_1 = ñ_1/N`, `π̃_0 = 1 − π̃_1` (post-processing; `N` is public under
//!    replace-one neighbours). The floor `m` on the group sizes follows from `π̃` and `N`
//!    ([`DdFloor::FromPi`], 2 binomial standard deviations below the expected smaller group
//!    unless the configuration sets another floor), and with it the share of step 3,
//!    [`tau_epsilon`]: a public function of released values.
//! 2. `η̃_a(x) = σ(w̃·[x; a; 1])`: logistic regression with the group as a feature, trained by
//!    DP-SGD (the learning crate's `fit_dp_sgd`, the settings of `dp-logistic`) at the rest of
//!    ε and the fit's δ, calibrated for replace-one neighbours.
//! 3. `τ̃`: Algorithm 5's strict S2 on all rows — the exponential mechanism on a public grid of
//!    [`TAU_GRID`] points, utility `−|D̂D(τ) − α sgn τ|` with sensitivity `2/m` — at
//!    [`tau_epsilon`].
//!
//! **Privacy.** Three releases on the same rows, each DP for replace-one neighbours on its own
//! (the scores of step 3 are a post-processing of steps 1–2 applied to the private rows, and
//! one replaced row moves the DD curve by at most `2/m` at every τ, as on the calibration half);
//! basic composition: `(ε, δ)` in total, three ledger entries.
//!
//! **Why not the halves.** The paper splits the rows so that its rates can treat `η̃` as fixed
//! on the calibration half; the plug-in's privacy never needed the split. On data of a few
//! thousand rows the split halves the rows the estimate learns from, and a kernel or
//! output-perturbed estimate on half the rows was the constant on most of the proxy suite
//! (BENCHMARKS.md, "The proxy suite"). The paper's procedure stays `--eta-model kernel`
//! (`--accounting paper` for the authors' accounting).

use super::{
    Accounting, CalibrationScores, CalibrationStatistic, Config, DdFloor, Method, Model, Resolved,
    assemble, dd_floor, groups_and_labels, s2,
};
use crate::plugin::classifier::FairPluginClassifier;
use crate::plugin::dp_sgd::{PI_SHARE, RunEntry, release_eta, release_pi};
use crate::plugin::error::{Error, Result, invalid};
use crate::plugin::release::{PiRelease, PluginEstimate};
use crate::plugin::threshold::score;
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise};

/// The least and the largest share of ε spent on the threshold `τ̃` (step 3).
pub const TAU_SHARE: (f64, f64) = (0.15, 0.5);

/// `ε_τ · m` that [`tau_epsilon`] aims for: the exponential mechanism then weighs a grid point
/// whose DD misses the target by 0.1 at most `exp(−ε_τ·0.1·m/4) = e⁻¹` of the best one, and one
/// that misses it by 0.3 at most `e⁻³` (sensitivity `2/m`, permute-and-flip's `ε/2`).
pub const TAU_EPSILON_ROWS: f64 = 40.0;

/// The ε of step 3 for a fit at `epsilon` whose floor on the smaller group is `m` rows:
/// [`TAU_EPSILON_ROWS`]`/m`, within [`TAU_SHARE`] of `epsilon`. Small groups need more: their
/// DD curve moves by `2/m` per record.
///
/// ```
/// use dpfair::cdp_fair::all_rows::tau_epsilon;
/// assert_eq!(tau_epsilon(2.0, 1_000), 0.3); // the least share
/// assert_eq!(tau_epsilon(2.0, 50), 0.8); // 40/50
/// assert_eq!(tau_epsilon(2.0, 10), 1.0); // the largest share
/// ```
pub fn tau_epsilon(epsilon: f64, m: usize) -> f64 {
    (TAU_EPSILON_ROWS / m.max(1) as f64).clamp(TAU_SHARE.0 * epsilon, TAU_SHARE.1 * epsilon)
}

/// The floor of [`DdFloor::FromPi`] this procedure uses when the configuration keeps the
/// default: 2 standard deviations (the halves use 4). A smaller floor only biases the curve of
/// a group smaller than it, never the privacy (the sensitivity is `2/m` either way).
const FLOOR_SDS: f64 = 2.0;

/// Points of the public τ grid of step 3: a step of `2 max π̃/200` (≤ 0.01 in τ) at a cost of
/// `ln 201 ≈ 5.3` in the exponential mechanism's error bound (2001 points cost 7.6 for a
/// resolution finer than the DD curve's noise here).
pub const TAU_GRID: usize = 201;

/// CDP-Fair with the DP-SGD plug-in (module docs), charging `ledger`: three entries.
pub(crate) fn fit(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    let (a, y) = groups_and_labels(data)?;
    let r = own_defaults(config.resolve(data.n_rows())?);
    check(&r)?;
    if data.n_features() == 0 {
        return Err(Error::InvalidData("no feature columns".into()));
    }
    let n = data.n_rows();
    let pi = release_pi(a, PI_SHARE * r.epsilon, "all rows: ", ledger, noise)?;
    let epsilon_tau = tau_epsilon(r.epsilon, dd_floor(&r, pi, n as f64)?);
    let estimate = release_eta(
        pi,
        r.epsilon - PI_SHARE * r.epsilon - epsilon_tau,
        r.delta,
        data.features.view(),
        a,
        y,
        RunEntry::Accountant,
        ledger,
        noise,
    )?;
    let mut z = [Vec::new(), Vec::new()];
    for (eta, &g) in estimate.eta_grouped(data.features.view(), a)?.iter().zip(a) {
        let g = g as usize;
        z[g].push(score(g, *eta, estimate.pi[g]));
    }
    let calibration = CalibrationStatistic::new(&r, &estimate, CalibrationScores { z, n_cal: n })?;
    let rule = s2(
        &r,
        &estimate,
        &calibration,
        (epsilon_tau, 0.0),
        "all rows: ",
        ledger,
        noise,
    )?;
    Ok(assemble(
        &r,
        0.0,
        0,
        Method::CdpFair,
        vec![FairPluginClassifier { estimate, rule }],
    ))
}

/// With probability `1 − beta`, the private choice of `τ̃` keeps the rows' `|D̂D|` within this
/// of α (the exponential mechanism's bound, `(2Δ/ε_τ)·ln(grid/β)` with `Δ = 2/m`), from the
/// released `π̃` and the public configuration, as the fit computed them.
pub(super) fn s2_accuracy(
    r: &Resolved,
    n_rows: usize,
    est: &PluginEstimate,
    beta: f64,
) -> Result<f64> {
    let r = own_defaults(r.clone());
    let m = dd_floor(&r, est.pi, n_rows as f64)? as f64;
    let epsilon = tau_epsilon(r.epsilon, m as usize);
    Ok(2.0 * (2.0 / m) / epsilon * ((r.tau_grid as f64).ln() + (1.0 / beta).ln()))
}

/// This procedure's own defaults where the configuration keeps the split procedure's: the
/// τ grid of [`TAU_GRID`] points and the floor of [`FLOOR_SDS`] standard deviations (a value
/// the user set is kept).
fn own_defaults(mut r: Resolved) -> Resolved {
    if r.tau_grid == super::DEFAULT_TAU_GRID {
        r.tau_grid = TAU_GRID;
    }
    if r.dd_floor == DdFloor::default() {
        r.dd_floor = DdFloor::FromPi { sds: FLOOR_SDS };
    }
    r
}

/// The settings the DP-SGD plug-in refuses: the paper's accounting, cross-fitting and
/// non-private `π` belong to the split procedure.
fn check(r: &Resolved) -> Result<()> {
    if r.accounting == Accounting::Paper {
        return Err(invalid(
            "eta_model",
            "the DP-SGD plug-in has no paper procedure: use strict accounting, or \
             --eta-model kernel for the paper's",
        ));
    }
    if r.cross_fit {
        return Err(invalid(
            "cross_fit",
            "the DP-SGD plug-in uses every row once, with no halves to cross: use \
             --eta-model kernel or logistic for cross-fitting",
        ));
    }
    if r.pi != PiRelease::Private {
        return Err(invalid("pi", "CDP-Fair needs the private π̃"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::synthetic::{Design, FdpFairDesign};
    use crate::plugin::EtaModel;
    use dpfair_privacy::{Budget, Relation};

    fn config(epsilon: f64) -> Config {
        Config {
            epsilon,
            eta_model: EtaModel::DpSgd,
            ..Config::default()
        }
    }

    /// Three entries (π̃, DP-SGD, τ̃) in sequence, the ledger's total within the fit's (ε, δ),
    /// for replace-one neighbours.
    #[test]
    fn three_sequential_releases_within_the_budget() {
        let data = FdpFairDesign::default().generate(1_000, 3).unwrap();
        let delta = 1e-5;
        let mut ledger =
            Ledger::for_relation(Budget::approx(1.0, delta).unwrap(), Relation::Substitution);
        let c = Config {
            delta: Some(delta),
            ..config(1.0)
        };
        let model = super::super::fit(&c, &data, &mut ledger, &mut Noise::seeded(1)).unwrap();
        assert_eq!(ledger.entries().len(), 3, "{:#?}", ledger.entries());
        let total = ledger.total().unwrap();
        assert!(total.epsilon <= 1.0 + 1e-9, "{total:?}");
        assert!(total.delta <= delta, "{total:?}");
        assert_eq!(model.folds.len(), 1);
    }

    /// The refused settings name their parameter.
    #[test]
    fn split_procedures_are_refused() {
        let data = FdpFairDesign::default().generate(200, 3).unwrap();
        let mut ledger = Ledger::unlimited();
        for (c, name) in [
            (
                Config {
                    cross_fit: Some(true),
                    ..config(1.0)
                },
                "cross_fit",
            ),
            (
                Config {
                    accounting: Accounting::Paper,
                    ..config(1.0)
                },
                "eta_model",
            ),
        ] {
            let e = super::super::fit(&c, &data, &mut ledger, &mut Noise::seeded(1)).unwrap_err();
            assert!(e.to_string().contains(name), "{e}");
        }
    }
}
