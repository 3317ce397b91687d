//! Figures 6–7 of Xue & Yu (§5.2): CDP-Fair, FDP-Fair with S = 1 and the three
//! baselines of §5.2 on the authors' Adult (`adult-fdp`) and Law admissions
//! (`law-admissions`) files.
//!
//! Protocol per repetition (seed = cell seed): a random 70/30 train/test split; every method fits
//! on the 70% (the fair methods split it again into training and calibration halves, the unfair
//! ones use one half, as the paper); `δ = (n_train/2)^{−2}`; `ρ* = 0.02`.
//!
//! Features: the paper feeds raw features (ages 17–90, LSAT 120–180) to a Gaussian kernel with
//! `h ∈ {0.2, 0.3}`, almost an exact-match estimator (`docs/deviations.md#fdp-fair-real-data-outside-the-unit-cube`). dpfair's kernel estimators work on
//! `[0, 1]^d`, so the features are min-max scaled with **public** domain bounds ([`BOUNDS`]), never
//! with the data's own minimum and maximum.

use super::shared;
use crate::error::{ExpError, Result, method_error};
use crate::{Cell, Outcome};
use dpfair::cdp_fair;
use dpfair::fdp_fair::{Accounting, Config, SearchConfig};
use dpfair::model::SavedPlugin;
use dpfair_data::{Dataset, Stratify};
use dpfair_privacy::{Budget, Ledger};

/// Adult (`adult-fdp`).
pub const ADULT: &str = "adult-fdp";
/// Law admissions (`law-admissions`).
pub const LAW: &str = "law-admissions";

/// The method names of Figures 6–7 (the code's labels in brackets).
pub const CDP: &str = "cdp-fair"; // "CDP F"
pub const FDP1: &str = "fdp-fair-s1"; // "FDP(S=1) F"
/// The same two in paper mode (`--full` only; separate names so that plots keep the modes apart).
pub const CDP_PAPER: &str = "cdp-fair-paper";
pub const FDP1_PAPER: &str = "fdp-fair-s1-paper";
pub const PRIVACY_ONLY: &str = "privacy-only"; // "CDP NF"
pub const FAIRNESS_ONLY: &str = "fairness-only"; // "NDP F"
pub const UNCONSTRAINED: &str = "unconstrained"; // "NDP NF"

/// `ρ*` of the real-data runs (§5.2, "ρ = 0.02").
pub const RHO_STAR: f64 = 0.02;

/// Public domain bounds of each feature, in the files' column order: Adult's age range of the
/// census extract (17–90, top-coded), the 9 label codes of Workclass, the 16 education levels;
/// the LSAT scale (120–180), a 4.3 GPA scale, the resident flag.
pub const BOUNDS: [(&str, [(f64, f64); 3]); 2] = [
    (ADULT, [(17.0, 90.0), (0.0, 8.0), (1.0, 16.0)]),
    (LAW, [(120.0, 180.0), (0.0, 4.3), (0.0, 1.0)]),
];

/// Min-max scales `data`'s features to `[0, 1]` with the public bounds of `dataset` (values
/// outside the bounds are clamped).
fn scale(dataset: &str, data: &mut Dataset) -> Result<()> {
    let bounds = BOUNDS
        .iter()
        .find(|(d, _)| *d == dataset)
        .map(|(_, b)| b)
        .ok_or_else(|| ExpError::InvalidParameter {
            parameter: "dataset",
            reason: format!("no public bounds for `{dataset}`"),
        })?;
    if data.n_features() != bounds.len() {
        return Err(ExpError::InvalidParameter {
            parameter: "dataset",
            reason: format!(
                "`{dataset}` has {} features, the bounds {}",
                data.n_features(),
                bounds.len()
            ),
        });
    }
    for (mut col, &(lo, hi)) in data.features.columns_mut().into_iter().zip(bounds) {
        col.mapv_inplace(|v| ((v - lo) / (hi - lo)).clamp(0.0, 1.0));
    }
    Ok(())
}

/// The group of cells whose fits are made together across ε (the fair methods': one data set,
/// method and mode; [`shared::Caches::batched`]), `None` for the others.
pub(super) fn epsilon_group(cell: &Cell) -> Option<String> {
    let s = &cell.setting;
    matches!(s.method.as_str(), CDP | CDP_PAPER | FDP1 | FDP1_PAPER)
        .then(|| format!("{}|{}|{}", s.method, s.dataset, s.accounting))
}

/// One cell of Figures 6–7, the fair methods' fits and test scores shared through `caches`.
pub(super) fn run(cell: &Cell, caches: &shared::Caches) -> Result<Outcome> {
    let s = &cell.setting;
    let data = crate::load_builtin(&s.dataset)?;
    let mut parts = data
        .dataset
        .split(&[0.7, 0.3], cell.seed, Stratify::None)
        .map_err(method_error)?;
    let mut test = parts.pop().expect("two parts");
    let mut train = parts.pop().expect("two parts");
    scale(&s.dataset, &mut train)?;
    scale(&s.dataset, &mut test)?;
    let alpha = cell.fairness_level()?;
    let paper = s.accounting == "paper";
    let accounting = if paper {
        Accounting::Paper
    } else {
        Accounting::Strict
    };
    let delta = (train.n_rows() as f64 / 2.0).powi(-2);
    let epsilon = if s.epsilon.is_finite() {
        s.epsilon
    } else {
        1.0
    };
    let config = cdp_fair::Config {
        alpha,
        epsilon,
        accounting,
        ..cdp_fair::Config::default()
    };
    let mut noise = cell.noise();
    // Paper mode records its non-private steps as ε = ∞; the non-private baselines (`none`) charge
    // one ε = ∞ entry.
    let budget = if s.accounting == "strict" {
        epsilon
    } else {
        f64::INFINITY
    };
    let mut ledger = Ledger::new(Budget::approx(budget, delta)?);
    // The fair methods' fits are shared across α (the split depends on the seed only), and so
    // are their scores on the test split.
    let key_at = |epsilon: f64| format!("{}|{}|{epsilon}|{}", s.dataset, cell.seed, s.accounting);
    let key = key_at(epsilon);
    let group = epsilon_group(cell).unwrap_or_default();
    let (model, m): (SavedPlugin, _) = match s.method.as_str() {
        CDP | CDP_PAPER => {
            let train = || Ok(train.clone());
            let cv_key = format!("{}|{}", s.dataset, cell.seed);
            let setup = |epsilon: f64| {
                let budget = if s.accounting == "strict" {
                    epsilon
                } else {
                    f64::INFINITY
                };
                let mut ledger = Ledger::new(Budget::approx(budget, delta)?);
                let config = cdp_fair::Config {
                    epsilon,
                    ..config.clone()
                };
                let config =
                    caches.share_paper_cv(&cv_key, config, train, cell.seed, &mut ledger)?;
                Ok((config, ledger))
            };
            let (config, _) = setup(epsilon)?;
            let shared_cell = shared::CdpCell {
                epsilon,
                group: &group,
                key: &key_at,
                setup: &setup,
            };
            let (shared, model, l) = shared::cdp_at_alpha(
                caches,
                &shared_cell,
                &config,
                train,
                || cell.noise(),
                || Ok(test.clone()),
            )?;
            ledger = l;
            let m = shared.metrics(&model, || Ok(test.clone()))?;
            (model.into(), m)
        }
        FDP1 | FDP1_PAPER => {
            let config = Config {
                epsilon,
                accounting,
                pi: paper.then_some(dpfair::plugin::release::PiRelease::Empirical),
                search: SearchConfig {
                    alpha,
                    rho_star: RHO_STAR,
                    ..SearchConfig::default()
                },
                ..Config::default()
            };
            // The protocol rounds depend on the seed, ε and the mode only: shared across α
            // (Alg. 2 S3 selects per cell), and fitted at every ε of the run in one pass over
            // the rows, as in the synthetic figures.
            let fit = |eps: &[f64]| {
                shared::rounds_at(&config, eps, std::slice::from_ref(&train), |_| cell.seed)
            };
            let shared = caches.batched(
                &caches.rounds,
                &shared::BatchKey {
                    epsilon,
                    group: &group,
                    key: &key_at,
                },
                fit,
                |r| vec![&r.global.estimate],
                || Ok(test.clone()),
            )?;
            let fitted = shared.fit.select(&config.search).map_err(method_error)?;
            ledger = fitted.ledger;
            let m = shared.metrics(&fitted.model, || Ok(test.clone()))?;
            (fitted.model.into(), m)
        }
        PRIVACY_ONLY | UNCONSTRAINED => {
            // Neither reads α (threshold 1/2): one fit per (data set, seed, ε) serves the sweep
            // (test `unfair_baselines_ignore_alpha`).
            let key = format!("{}|{key}", s.method);
            let shared = caches.baselines.get_or_fit(&key, || {
                let fit = if s.method == PRIVACY_ONLY {
                    cdp_fair::fit_privacy_only
                } else {
                    cdp_fair::fit_unconstrained
                };
                let model = fit(&config, &train, &mut ledger, &mut noise).map_err(method_error)?;
                Ok((model, ledger.clone()))
            })?;
            let (model, l) = &shared.fit;
            ledger = l.clone();
            let m = shared.metrics(model, || Ok(test.clone()))?;
            (model.clone().into(), m)
        }
        FAIRNESS_ONLY => {
            // α enters at the threshold only: the folds' estimates and calibration scores are
            // shared across α (`cdp_fair::fairness_only_folds`).
            let key = format!("{}|{key}", s.method);
            let shared = caches.fairness_only.get_or_fit(&key, || {
                let folds = cdp_fair::fairness_only_folds(&config, &train, &mut ledger, &mut noise)
                    .map_err(method_error)?;
                Ok((folds, ledger.clone()))
            })?;
            let (folds, l) = &shared.fit;
            ledger = l.clone();
            let model = folds.select(alpha).map_err(method_error)?;
            let m = shared.metrics(&model, || Ok(test.clone()))?;
            (model.into(), m)
        }
        other => {
            return Err(ExpError::InvalidParameter {
                parameter: "method",
                reason: format!("unknown method `{other}` for Figures 6–7"),
            });
        }
    };
    let out = super::search_metrics(
        // τ̃ (the first fold's threshold): 0 where a fair method's own constraint is inactive,
        // which the Fig. 7 check reads (`checks::law_rise`).
        Outcome::new()
            .metric("error", m.error)
            .metric("abs_dd", m.dd.abs())
            .metric("tau", model.folds[0].rule.tau),
        &model,
    );
    Ok(match s.accounting.as_str() {
        "none" => out,
        // Paper mode records non-private steps as ε = ∞.
        _ => out.spent_epsilon(ledger.total().map(|t| t.epsilon).unwrap_or(f64::INFINITY)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Params, Setting};

    fn cell(dataset: &str, method: &str, accounting: &str, epsilon: f64) -> Cell {
        Cell {
            setting: Setting {
                dataset: dataset.into(),
                method: method.into(),
                accounting: accounting.into(),
                epsilon,
                delta: 0.0,
                fairness_level: Some(0.1),
                params: Params::new().with("figure", "7"),
            },
            repetition: 0,
            seed: 3,
        }
    }

    #[test]
    fn public_bounds_scale_into_the_unit_cube() {
        use dpfair_data::synthetic::{Design, FdpFairDesign};
        let mut data = FdpFairDesign::default().generate(3, 1).unwrap();
        // Two features; the Law bounds need three: refused, naming the data set.
        assert!(scale(LAW, &mut data).is_err());
        let x = ndarray::array![[120.0, 4.3, 1.0], [150.0, 0.0, 0.0], [200.0, -1.0, 0.5]];
        data.features = x;
        scale(LAW, &mut data).unwrap();
        assert_eq!(
            data.features,
            ndarray::array![[0.0, 1.0, 1.0], [0.5, 0.0, 0.0], [1.0, 0.0, 0.5]]
        );
    }

    /// The privacy-only and unconstrained baselines do not read α: fitted at two α from the same
    /// seed they are the same classifier (what lets one fit serve an α sweep).
    #[test]
    fn unfair_baselines_ignore_alpha() {
        use dpfair_data::synthetic::{Design, FdpFairDesign};
        let data = FdpFairDesign::default().generate(600, 4).unwrap();
        for fit in [cdp_fair::fit_privacy_only, cdp_fair::fit_unconstrained] {
            let models: Vec<(cdp_fair::Model, Ledger)> = [0.05, 0.4]
                .into_iter()
                .map(|alpha| {
                    let config = cdp_fair::Config {
                        alpha,
                        n_frequencies: 64,
                        ..cdp_fair::Config::default()
                    };
                    let budget = Budget::approx(f64::INFINITY, 1e-6).unwrap();
                    let mut ledger = Ledger::new(budget);
                    let model = fit(
                        &config,
                        &data,
                        &mut ledger,
                        &mut dpfair_privacy::Noise::seeded(7),
                    )
                    .unwrap();
                    (model, ledger)
                })
                .collect();
            let (a, b) = (&models[0], &models[1]);
            assert_eq!(a.0.folds, b.0.folds);
            assert_eq!(a.1, b.1);
            assert_ne!(a.0.alpha, b.0.alpha);
        }
    }

    /// One cell of every real-data method on Law admissions (needs the data set):
    /// strict cells record a spent ε within the budget, the paper's record ε = ∞ (empirical π,
    /// CV), the non-private baselines none. Slow in the dev profile (CDP-Fair's paper mode runs
    /// its bandwidth CV on 28,000 rows): run with `--ignored` and `DPFAIR_DATA_DIR`.
    #[test]
    #[ignore = "about 95 s in the test profile; the quick reproduction runs these cells"]
    fn every_method_runs_on_law() {
        // Run on demand only; without the file this fails, naming it.
        dpfair_data::testdata::path("fdpfair_law_40000.csv");
        for (method, accounting, eps) in [
            (CDP, "strict", 1.0),
            (FDP1, "strict", 1.0),
            (PRIVACY_ONLY, "strict", 1.0),
            (CDP_PAPER, "paper", 1.0),
            (FDP1_PAPER, "paper", 1.0),
            (FAIRNESS_ONLY, "none", f64::INFINITY),
            (UNCONSTRAINED, "none", f64::INFINITY),
        ] {
            let out = run(
                &cell(LAW, method, accounting, eps),
                &shared::Caches::new(true),
            )
            .unwrap();
            match accounting {
                "strict" => assert!(out.epsilon_spent.unwrap() <= 1.0 + 1e-9, "{method}"),
                "paper" => assert_eq!(out.epsilon_spent, Some(f64::INFINITY), "{method}"),
                _ => assert_eq!(out.epsilon_spent, None, "{method}"),
            }
        }
    }
}
