//! `fair-regression`: Xian, Li, Kamath, Zhao, "Differentially Private Post-Processing for Fair
//! Regression" (seed 001), Figures 2–4 and the authors' notebook numbers (spec §4).
//!
//! Setup (spec §4.1): f = Id on the response (X = Y), a seeded 70/30 split per repetition, the
//! post-processor fitted on the training part and evaluated on the test part: test MSE against
//! the true response and Δ_SP, the largest pairwise two-sample KS statistic (ties counted together,
//! H13). Seeds 33, 34, … as the authors' `range(33, 83)`; the split and the noise depend only on
//! the seed (common random numbers across α, k and ε), not bit-for-bit the numpy streams (H18).
//!
//! Methods: `fair-regression` (Algorithm 1; params `k`; fairness level α), `single-bin` (k = 1,
//! the right end point of Figs. 3–4), and the §4.6 baselines `identity` (no post-processing),
//! `binning` (α = ∞, ε = ∞) and `chzhen` (Chzhen et al. 2020 quantile averaging, non-private).
//!
//! `--quick`: 3 repetitions, Law School k = 36 and Communities k = 12, ε ∈ {∞, 1, 0.1}, five α.
//! `--full`: 50 repetitions, Fig. 2 (Law k ∈ {36, 180}, Communities k ∈ {12, 60}, the papers' α
//! grids, six ε) and Figs. 3–4 (Law, 31 values of k).

use crate::error::{ExpError, Result, method_error};
use crate::{Axis, Cell, Grid, Outcome, Paper, Params, PlotSpec, Reference, Scale, Series, Sweep};
use dpfair::fair_regression::baselines::{QuantileAveraging, binning};
use dpfair::fair_regression::{Config, GroupSource, fit_scores};
use dpfair_data::split::Stratify;
use dpfair_data::synthetic::derive_seed;
use dpfair_data::{Dataset, Target};
use dpfair_fairness::metrics::{ks_statistical_parity, mse};
use dpfair_privacy::{Budget, Ledger, Noise};

pub struct FairRegression;

const LAW: &str = "law-bar";
const COMMUNITIES: &str = "communities";
const EPSILONS_FULL: [f64; 6] = [f64::INFINITY, 10.0, 5.0, 1.0, 0.5, 0.1];

/// `geomspace(a, b, n)`.
fn geomspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (a.ln() + (b.ln() - a.ln()) * i as f64 / (n - 1) as f64).exp())
        .collect()
}

/// `linspace(a, b, n)`.
fn linspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| a + (b - a) * i as f64 / (n - 1) as f64)
        .collect()
}

/// The α grids of spec §4.3 (24 values for Law School, 28 for Communities).
fn alpha_grid(dataset: &str) -> Vec<f64> {
    let (g, l) = if dataset == LAW {
        (geomspace(0.005, 0.1, 10), linspace(0.11, 0.35, 12))
    } else {
        (geomspace(0.005, 0.12, 14), linspace(0.13, 0.44, 12))
    };
    std::iter::once(0.0)
        .chain(g)
        .chain(l)
        .chain([1.0])
        .collect()
}

/// The public interval of each data set's response (spec §4.2).
fn range(dataset: &str) -> Result<[f64; 2]> {
    match dataset {
        LAW => Ok([1.0, 4.0]),
        COMMUNITIES => Ok([0.0, 1.0]),
        other => Err(ExpError::Method(format!(
            "fair-regression: no data set `{other}`"
        ))),
    }
}

fn ks(k: usize) -> Vec<Params> {
    vec![Params::new().with("k", k)]
}

fn sweeps(dataset: &str, ks_fig2: &[usize], epsilons: &[f64], alphas: Vec<f64>) -> Vec<Sweep> {
    let params: Vec<Params> = ks_fig2.iter().flat_map(|&k| ks(k)).collect();
    let private: Vec<f64> = epsilons.iter().copied().filter(|e| e.is_finite()).collect();
    let mut v = vec![
        Sweep::new()
            .datasets([dataset])
            .methods(["fair-regression"])
            .accounting(["strict"])
            .epsilons(private.clone())
            .fairness_levels(alphas.clone())
            .params(params.clone()),
        Sweep::new()
            .datasets([dataset])
            .methods(["identity", "chzhen"])
            .accounting(["none"]),
        Sweep::new()
            .datasets([dataset])
            .methods(["binning"])
            .accounting(["none"])
            .params(params.clone()),
    ];
    if epsilons.iter().any(|e| e.is_infinite()) {
        v.push(
            Sweep::new()
                .datasets([dataset])
                .methods(["fair-regression"])
                .accounting(["none"])
                .fairness_levels(alphas)
                .params(params),
        );
    }
    v
}

fn responses(d: &Dataset) -> Result<(&[f64], &[u32])> {
    let Some(Target::Real(y)) = &d.target else {
        return Err(ExpError::Method(
            "fair-regression needs a real target".into(),
        ));
    };
    let g = d
        .groups
        .as_ref()
        .ok_or_else(|| ExpError::Method("fair-regression needs groups".into()))?;
    Ok((y, &g.codes))
}

impl Paper for FairRegression {
    fn name(&self) -> &'static str {
        "fair-regression"
    }

    fn description(&self) -> &'static str {
        "Xian, Li, Kamath, Zhao (seed 001): DP post-processing for fair regression, Figs. 2–4, §4.6 numbers"
    }

    fn grid(&self, scale: Scale) -> Grid {
        match scale {
            Scale::Quick => {
                let eps = [f64::INFINITY, 1.0, 0.1];
                let alphas = vec![0.0, 0.02, 0.05, 0.15, 1.0];
                let mut g = Grid::new(3, 33);
                for s in sweeps(LAW, &[36], &eps, alphas.clone())
                    .into_iter()
                    .chain(sweeps(COMMUNITIES, &[12], &eps, alphas))
                {
                    g = g.with(s);
                }
                g.with(
                    Sweep::new()
                        .datasets([LAW])
                        .methods(["single-bin"])
                        .epsilons([0.1])
                        .fairness_levels([0.0]),
                )
            }
            Scale::Full => {
                let mut g = Grid::new(50, 33);
                for s in sweeps(LAW, &[36, 180], &EPSILONS_FULL, alpha_grid(LAW))
                    .into_iter()
                    .chain(sweeps(
                        COMMUNITIES,
                        &[12, 60],
                        &EPSILONS_FULL,
                        alpha_grid(COMMUNITIES),
                    ))
                {
                    g = g.with(s);
                }
                // Figs. 3–4: Law School, k ∈ {1, …, 22, 24, …, 30, 36, …, 60}.
                let fig3: Vec<usize> = (1..=22)
                    .chain([24, 26, 28, 30, 36, 42, 48, 54, 60])
                    .filter(|k| *k != 36)
                    .collect();
                let params: Vec<Params> = fig3.iter().flat_map(|&k| ks(k)).collect();
                g.with(
                    Sweep::new()
                        .datasets([LAW])
                        .methods(["fair-regression"])
                        .epsilons(EPSILONS_FULL.iter().copied().filter(|e| e.is_finite()))
                        .fairness_levels(alpha_grid(LAW))
                        .params(params.clone()),
                )
                .with(
                    Sweep::new()
                        .datasets([LAW])
                        .methods(["fair-regression"])
                        .accounting(["none"])
                        .fairness_levels(alpha_grid(LAW))
                        .params(params),
                )
            }
        }
    }

    fn run(&self, cell: &Cell) -> Result<Outcome> {
        let s = &cell.setting;
        let data = crate::load_builtin(&s.dataset)?;
        // Split and noise depend on the seed only: the same draws across α, k and ε.
        let parts = data
            .dataset
            .split(&[0.7, 0.3], derive_seed(cell.seed, 1), Stratify::None)
            .map_err(method_error)?;
        let (train, test) = (&parts[0], &parts[1]);
        let (y_train, g_train) = responses(train)?;
        let (y_test, g_test) = responses(test)?;
        let names = data
            .dataset
            .groups
            .as_ref()
            .map(|g| g.names.clone())
            .unwrap_or_default();
        let [lo, hi] = range(&s.dataset)?;
        let mut rng = Noise::seeded(derive_seed(cell.seed, 3));
        let evaluate = |pred: &[f64]| -> Result<Outcome> {
            Ok(Outcome::new()
                .metric("mse", mse(y_test, pred).map_err(method_error)?)
                .metric(
                    "ks",
                    ks_statistical_parity(pred, g_test).map_err(method_error)?,
                ))
        };
        match s.method.as_str() {
            "identity" => evaluate(y_test),
            "binning" => {
                let grid = dpfair::fair_regression::histogram::Grid::new(lo, hi, cell.param("k")?)
                    .map_err(method_error)?;
                evaluate(&binning(&grid, y_test))
            }
            "chzhen" => {
                let qa = QuantileAveraging::fit(y_train, g_train, names.len(), &mut rng)
                    .map_err(method_error)?;
                evaluate(&qa.predict(y_test, g_test, &mut rng).map_err(method_error)?)
            }
            "fair-regression" | "single-bin" => {
                let k = if s.method == "single-bin" {
                    1
                } else {
                    cell.param("k")?
                };
                let config = Config {
                    alpha: s.fairness_level.unwrap_or(0.0),
                    epsilon: s.epsilon,
                    bins: k,
                    range: Some([lo, hi]),
                    groups: Some(names.clone()),
                    ..Config::default()
                };
                let mut ledger = if s.epsilon.is_finite() {
                    Ledger::new(Budget::pure(s.epsilon)?)
                } else {
                    Ledger::unlimited()
                };
                let mut noise = Noise::seeded(derive_seed(cell.seed, 2));
                let model = fit_scores(
                    &config,
                    y_train,
                    g_train,
                    names,
                    GroupSource::Declared,
                    &mut ledger,
                    &mut noise,
                )
                .map_err(method_error)?;
                let pred = model
                    .predict(y_test, g_test, &mut rng)
                    .map_err(method_error)?;
                let out = evaluate(&pred.values)?;
                if s.epsilon.is_finite() {
                    out.spent(&ledger)
                } else {
                    Ok(out)
                }
            }
            other => Err(ExpError::Method(format!(
                "fair-regression: no method `{other}`"
            ))),
        }
    }

    /// Spec §4.6 (the authors' notebooks, α = 0, 50 seeds): tolerance 3·std/√50 (doubled at
    /// ε = 0.1, H18), and the k = 1 end point MSE 0.6772 of Figs. 3–4.
    fn references(&self) -> Vec<Reference> {
        let src = "spec §4.6 (authors' notebooks)";
        let tol = |std: f64| 3.0 * std / 50f64.sqrt();
        let fair = |d: &str, k: usize, eps: f64, metric: &str, v: f64, std: f64| {
            let widen = if eps < 0.5 { 2.0 } else { 1.0 };
            let mut r = Reference::new(src, d, "fair-regression", eps, metric, v, widen * tol(std))
                .at_level(0.0);
            r.params = Some(Params::new().with("k", k));
            r
        };
        let base = |d: &str, m: &str, metric: &str, v: f64, std: f64| {
            Reference::new(src, d, m, f64::INFINITY, metric, v, tol(std))
        };
        vec![
            base(LAW, "chzhen", "mse", 0.009618, 0.001354),
            base(LAW, "chzhen", "ks", 0.129434, 0.026769),
            base(LAW, "identity", "ks", 0.349900, 0.018699),
            base(LAW, "binning", "mse", 0.000610, 0.000005),
            fair(LAW, 36, f64::INFINITY, "mse", 0.010439, 0.000494),
            fair(LAW, 36, f64::INFINITY, "ks", 0.085150, 0.023165),
            fair(LAW, 36, 10.0, "mse", 0.010451, 0.000481),
            fair(LAW, 36, 5.0, "mse", 0.010466, 0.000470),
            fair(LAW, 36, 1.0, "mse", 0.010634, 0.000645),
            fair(LAW, 36, 1.0, "ks", 0.091368, 0.024884),
            fair(LAW, 36, 0.5, "mse", 0.010909, 0.001103),
            fair(LAW, 36, 0.1, "mse", 0.013972, 0.005009),
            fair(LAW, 36, 0.1, "ks", 0.280689, 0.090332),
            base(COMMUNITIES, "chzhen", "mse", 0.018217, 0.002057),
            base(COMMUNITIES, "chzhen", "ks", 0.097138, 0.028541),
            base(COMMUNITIES, "identity", "ks", 0.457663, 0.033567),
            base(COMMUNITIES, "binning", "mse", 0.000562, 0.000016),
            fair(COMMUNITIES, 12, f64::INFINITY, "mse", 0.018486, 0.001028),
            fair(COMMUNITIES, 12, f64::INFINITY, "ks", 0.064075, 0.024100),
            fair(COMMUNITIES, 12, 1.0, "mse", 0.018106, 0.001894),
            fair(COMMUNITIES, 12, 1.0, "ks", 0.068496, 0.026381),
            fair(COMMUNITIES, 12, 0.1, "mse", 0.015489, 0.008970),
            fair(COMMUNITIES, 12, 0.1, "ks", 0.162784, 0.094371),
            Reference::new(
                "paper Figs. 3–4",
                LAW,
                "single-bin",
                0.1,
                "mse",
                0.6772,
                0.005,
            )
            .at_level(0.0),
        ]
    }

    /// Fig. 2: test Δ_SP against test MSE, one curve per ε, traced over α.
    fn plots(&self) -> Vec<PlotSpec> {
        [LAW, COMMUNITIES]
            .iter()
            .map(|d| {
                PlotSpec::new(
                    &format!("fig2_{d}.svg"),
                    &format!("Fig. 2, {d}: Δ_SP (KS) against MSE over α"),
                    Axis::Metric("mse".into()),
                    "ks",
                    Series::Epsilon,
                )
                .for_dataset(d)
            })
            .collect()
    }
}
