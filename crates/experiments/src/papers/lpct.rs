//! `lpct`: Ma & Yang, "Optimal Locally Private Nonparametric Classification with Public Data"
//!
//! Each "data set" of the grid is one study of the paper (the plots filter on it):
//!
//! | study | paper | setting | varied | methods |
//! |---|---|---|---|---|
//! | `fig4a` | Fig. 4(a), S1 | n_P = 10⁴, n_Q = 50, γ = 0.5 | ε | LPCT, LPCT-P, LPCT-Q, LPCT-prune; PHIST, PGLM (§7.3's claims on synthetic data) |
//! | `fig4b` | Fig. 4(b), S2 | n_P = 10⁴, n_Q = 1,000, γ = 5 | ε | same |
//! | `fig4c` | Fig. 4(c), S3 | n_P = 10⁴, n_Q = 50 | γ, ε | LPCT |
//! | `fig5` | Fig. 5, S4 | n_Q = 50, γ = 0.5 | n_P, ε | LPCT, LPCT-P, LPCT-Q, LPCT-prune |
//! | `fig6` | Fig. 6, S5 | n_P = 10⁴, γ = 0.5 | n_Q, ε | same |
//! | `fig7a` | Fig. 7(a), S6 | (10⁴, 50), γ = 0.5 | fixed p (best λ), ε | LPCT |
//! | `fig7b` | Fig. 7(b), S7 | same | fixed p0, ε | LPCT-prune |
//! | `fig7c` | Fig. 7(c), S8 | (10⁴, 1,000), γ = 5 | fixed λ (best p), ε | LPCT |
//! | `fig8` | Fig. 8, S9 | n_P = 10⁴, γ = 0.5, X = [0, a]², a ~ U(1, 5) | n_Q, ε ∈ {0.5, 8} | known / public min–max / guessed range |
//! | `fig9` | Fig. 9, S10 | n_Q = 50, γ = 0.5, ε = 2 | n_P | LPCT vs LPCT-R |
//! | `diabetes` | Table 2 | Diabetes, 200 public / 2,054 private | ε ∈ {0.5, 2, 8, 1000} | all tree methods, CT-W, CT-Q, PGLM, PSGD-L/N |
//! | `fig10` | Fig. 10 | Diabetes, 80 public, ε = 2 | private fraction | LPCT-M, LPDT, PHIST |
//!
//! Every method reports its best configuration by mean accuracy over the replications (the
//! paper's oracle, `docs/deviations.md#lpct-hyperparameters-chosen-on-test-accuracy`; `oracle`), plus the configuration chosen (`p`, `lambda`, …) as metrics.
//! `lpct-theory`, `lpct-m-theory`, `lpct-c-theory` and LPCT-prune need no selection (honest).
//! ε = 1000 stands for the non-private limit, as in the paper. Where the paper does not state an
//! ε (Figs. 6, 9, 10) we use the values in the table above.
//!
//! Table 2's "ε = 8" column (c) matches the authors' code run at ε = 1000 (Section 7.2; measured,
//! BENCHMARKS.md "LPCT"), so the report compares it with our ε = 1000 row, and our
//! ε = 8 row with the authors' code measured at ε = 8.
//!
//! `--quick`: 3 replications, coarse grids of the varied quantity. `--full`: the paper's grids
//! with 20 replications everywhere (Table 2's count; the authors' code uses 50–300 on synthetic data).

mod checks;
mod diabetes;
mod oracle;
mod score;
mod synthetic;

use crate::demo::{DemoData, DemoMethod, DemoResult};
use crate::error::{Result, method_error};
use crate::{Axis, Cell, Grid, Outcome, Paper, Params, PlotSpec, Reference, Scale, Series, Sweep};
use diabetes::GridSize;
use dpfair::lpct::{self, LpctConfig, PruneConfig};
use dpfair_privacy::{Budget, Ledger, Noise};

pub struct LpctPaper;

const EPS_ALL: [f64; 6] = [0.5, 1.0, 2.0, 4.0, 8.0, 1000.0];
const FOUR: [&str; 4] = ["lpct", "lpct-p", "lpct-q", "lpct-prune"];
const RANGE_METHODS: [&str; 3] = [
    "lpct-known-range",
    "lpct-public-range",
    "lpct-guessed-range",
];

/// One study's parameter sets: n_P × n_Q × γ × (one optional extra parameter), each with the
/// number of replications the oracle selects over.
fn params(
    reps: usize,
    n_ps: &[usize],
    n_qs: &[usize],
    gammas: &[f64],
    extra: Option<(&str, Vec<f64>)>,
) -> Vec<Params> {
    let extras: Vec<Option<(&str, f64)>> = match &extra {
        Some((k, vs)) => vs.iter().map(|v| Some((*k, *v))).collect(),
        None => vec![None],
    };
    let mut out = Vec::new();
    for &n_p in n_ps {
        for &n_q in n_qs {
            for &g in gammas {
                for e in &extras {
                    let mut p = Params::new()
                        .with("reps", reps)
                        .with("n_p", n_p)
                        .with("n_q", n_q)
                        .with("gamma", g);
                    if let Some((k, v)) = e {
                        p = p.with(k, v);
                    }
                    out.push(p);
                }
            }
        }
    }
    out
}

fn study(name: &str, methods: &[&str], eps: &[f64], params: Vec<Params>) -> Sweep {
    Sweep::new()
        .datasets([name])
        .methods(methods.iter().copied())
        .accounting(["strict"])
        .epsilons(eps.iter().copied())
        .params(params)
}

/// The synthetic studies at `scale` (replications: quick / full per the [code]'s counts).
fn synthetic_sweeps(scale: Scale) -> Vec<Sweep> {
    let full = scale == Scale::Full;
    let r = reps(scale);
    let eps: Vec<f64> = if full {
        EPS_ALL.to_vec()
    } else {
        vec![0.5, 2.0, 8.0, 1000.0]
    };
    let n_ps: Vec<usize> = if full {
        (4_000..=16_000).step_by(2_000).collect()
    } else {
        vec![4_000, 10_000, 16_000]
    };
    let n_qs: Vec<usize> = if full {
        (10..=100)
            .step_by(10)
            .chain((120..=200).step_by(20))
            .collect()
    } else {
        vec![10, 50, 200]
    };
    let gammas: Vec<f64> = if full {
        vec![0.5, 0.75, 1.0, 1.25, 1.5, 2.0]
    } else {
        vec![0.5, 1.0, 2.0]
    };
    let depths: Vec<f64> = (1..=8).map(f64::from).collect();
    let lambdas: Vec<f64> = if full {
        synthetic::LAMBDAS.to_vec()
    } else {
        vec![0.1, 1.0, 10.0, 100.0, 1000.0]
    };
    let range_nqs: Vec<usize> = if full {
        (20..=160).step_by(20).collect()
    } else {
        vec![20, 80, 160]
    };
    vec![
        study(
            "fig4a",
            &FOUR,
            &eps,
            params(r, &[10_000], &[50], &[0.5], None),
        ),
        // LPCT-prune with Proposition 6's constants (docs/deviations.md#lpct-prune-falls-as-epsilon-grows).
        study(
            "fig4a",
            &["lpct-prune-prop6"],
            &eps,
            params(r, &[10_000], &[50], &[0.5], None),
        ),
        study(
            "fig4b",
            &["lpct-prune-prop6"],
            &eps,
            params(r, &[10_000], &[1_000], &[5.0], None),
        ),
        // Section 7.3's baselines on the same design (PGLM's analytic Gaussian has no
        // calibration at ε = 1000).
        study(
            "fig4a",
            &["phist"],
            &eps,
            params(r, &[10_000], &[50], &[0.5], None),
        ),
        study(
            "fig4a",
            &["pglm"],
            &eps.iter()
                .copied()
                .filter(|e| *e < 1000.0)
                .collect::<Vec<_>>(),
            params(r, &[10_000], &[50], &[0.5], None),
        ),
        study(
            "fig4b",
            &FOUR,
            &eps,
            params(r, &[10_000], &[1_000], &[5.0], None),
        ),
        study(
            "fig4c",
            &["lpct"],
            &eps,
            params(r, &[10_000], &[50], &gammas, None),
        ),
        study("fig5", &FOUR, &eps, params(r, &n_ps, &[50], &[0.5], None)),
        study(
            "fig6",
            &FOUR,
            &[2.0],
            params(r, &[10_000], &n_qs, &[0.5], None),
        ),
        study(
            "fig7a",
            &["lpct"],
            &eps,
            params(r, &[10_000], &[50], &[0.5], Some(("p", depths.clone()))),
        ),
        study(
            "fig7b",
            &["lpct-prune"],
            &eps,
            params(r, &[10_000], &[50], &[0.5], Some(("p0", depths))),
        ),
        study(
            "fig7c",
            &["lpct"],
            &[1.0, 2.0, 4.0, 8.0, 1000.0],
            params(r, &[10_000], &[1_000], &[5.0], Some(("lambda", lambdas))),
        ),
        study(
            "fig8",
            &RANGE_METHODS,
            &[0.5, 8.0],
            params(r, &[10_000], &range_nqs, &[0.5], Some(("range", vec![1.0]))),
        ),
        study(
            "fig9",
            &["lpct", "lpct-r"],
            &[2.0],
            params(r, &n_ps, &[50], &[0.5], None),
        ),
        study(
            "fig9",
            &["lpct-theory"],
            &[2.0],
            params(r, &[10_000], &[50], &[0.5], None),
        ),
    ]
}

/// Table 2's Diabetes row and Figure 10.
fn diabetes_sweeps(scale: Scale) -> Vec<Sweep> {
    let grid = if scale == Scale::Full {
        "full"
    } else {
        "quick"
    };
    let base = Params::new().with("reps", reps(scale)).with("grid", grid);
    let fracs: Vec<f64> = if scale == Scale::Full {
        vec![0.2, 0.4, 0.6, 0.8, 1.0]
    } else {
        vec![0.2, 0.6, 1.0]
    };
    vec![
        Sweep::new()
            .datasets(["diabetes"])
            .methods([
                "lpct-m",
                "lpct-c",
                "prune-m",
                "prune-c",
                "lpdt",
                "phist",
                "lpct-m-theory",
                "lpct-c-theory",
            ])
            .accounting(["strict"])
            .epsilons([0.5, 2.0, 8.0, 1000.0])
            .params([base.clone()]),
        // PGLM's analytic Gaussian has no calibration at ε = 1000 (the privacy crate's lattice
        // slack exceeds ε there), so its Table 2(c) row is "not run".
        Sweep::new()
            .datasets(["diabetes"])
            .methods(["pglm"])
            .accounting(["strict"])
            .epsilons([0.5, 2.0, 8.0])
            .params([base.clone()]),
        Sweep::new()
            .datasets(["diabetes"])
            .methods(["psgd-l", "psgd-n"])
            .accounting(["strict"])
            .epsilons([0.5, 2.0, 8.0, 1000.0])
            .params([base.clone()]),
        Sweep::new()
            .datasets(["diabetes"])
            .methods(["ct-w", "ct-q"])
            .accounting(["none"])
            .params([base.clone()]),
        Sweep::new()
            .datasets(["fig10"])
            .methods(["lpct-m", "lpdt", "phist"])
            .accounting(["strict"])
            .epsilons([2.0])
            .params(fracs.iter().map(|f| base.clone().with("frac", f))),
    ]
}

fn grid_size(cell: &Cell) -> GridSize {
    match cell.setting.params.get_str("grid") {
        Some("full") => GridSize::Full,
        _ => GridSize::Quick,
    }
}

/// Table 2's replications (Ma & Yang, Section 7.1) and the test rows of each ([code]
/// `realdata.py`: 20 % of Diabetes' 2,568 private rows).
const PAPER_SPLITS: f64 = 20.0;
const TEST_ROWS: f64 = 514.0;

/// The tolerance of a Table 2 accuracy `p` against our mean over `repetitions` splits: the 95 %
/// band of the difference of the two means from their test predictions alone,
/// `z_0.975·√(p(1 − p)/514·(1/20 + 1/n))` — the binomial spread of 514 test predictions per
/// split, known given the paper's `p` (hence the normal quantile). Derived from the paper's
/// number, never from our spread; a lower bound, since the splits' training rows and the
/// private noise add spread the paper does not print.
fn table_2_tolerance(p: f64, repetitions: usize) -> f64 {
    let n = repetitions.max(1) as f64;
    crate::stats::t_quantile(0.975, f64::INFINITY)
        * (p * (1.0 - p) / TEST_ROWS * (1.0 / PAPER_SPLITS + 1.0 / n)).sqrt()
}

/// Replications per setting (the oracle selects over all of them): `--quick` 3, `--full` 20
/// (Table 2's count; the [code] uses 50–300 on synthetic data, which `--full` does not afford).
fn reps(scale: Scale) -> usize {
    match scale {
        Scale::Quick => 3,
        Scale::Full => 20,
    }
}

impl Paper for LpctPaper {
    fn name(&self) -> &'static str {
        "lpct"
    }

    fn description(&self) -> &'static str {
        "Ma & Yang: LPCT / LPCT-prune, Figs. 4–10 and Table 2's Diabetes row"
    }

    fn grid(&self, scale: Scale) -> Grid {
        synthetic_sweeps(scale)
            .into_iter()
            .chain(diabetes_sweeps(scale))
            .fold(Grid::new(reps(scale), 0), Grid::with)
    }

    fn run(&self, cell: &Cell) -> Result<Outcome> {
        let reps: usize = cell.param("reps")?;
        match cell.setting.dataset.as_str() {
            "diabetes" | "fig10" => diabetes::run(cell, reps, grid_size(cell)),
            _ => synthetic::run(cell, reps),
        }
    }

    /// Table 2 at its own 20 splits; see [`LpctPaper::references_at`].
    fn references(&self) -> Vec<Reference> {
        self.references_at(reps(Scale::Full))
    }

    /// Table 2, Diabetes row (accuracy, mean over 20 splits of 514 test rows, no spread
    /// printed), with the tolerance `table_2_tolerance` for our mean over `repetitions`
    /// splits (0.013 at 20, 0.025 at `--quick`'s 3, at p = 0.67). Our own spread never widens
    /// it: it enters through our interval (report.md's verdict).
    fn references_at(&self, repetitions: usize) -> Vec<Reference> {
        let t = |col: &str, method: &str, eps: f64, v: f64| {
            let r = Reference::new(
                col,
                "diabetes",
                method,
                eps,
                "accuracy",
                v,
                table_2_tolerance(v, repetitions),
            )
            .showing_chosen_configuration();
            match method {
                "prune-m" | "prune-c" => r.explained_by(
                    "lpct-prune-falls-as-epsilon-grows",
                    "not measured on Diabetes; on the synthetic design the authors' constants \
                     make LPCT-prune use the public counts almost only and p0 grow with ε, \
                     which moves its accuracy with ε",
                ),
                "phist" => r.explained_by(
                    "lpct-phist-at-large-epsilon",
                    "the paper's PHIST is the one-cell (majority-class) rate at every ε; ours \
                     beats it with finer grids once the noise is negligible (6 bins: 0.934 at \
                     ε = 1000)",
                ),
                "ct-q" => r.explained_by(
                    "lpct-ct-q",
                    "unexplained beyond this: a depth-1 stump on the 200 public rows already \
                     scores 0.751 on our splits",
                ),
                _ => r,
            }
        };
        let c = "Table 2(c) 'ε = 8' (authors' code reproduces it at ε = 1000)";
        let bench = "authors' code at ε = 8 (measured)";
        vec![
            t("Table 2(a)", "lpct-m", 0.5, 0.7067),
            t("Table 2(a)", "lpct-c", 0.5, 0.7590),
            t("Table 2(a)", "prune-m", 0.5, 0.6661),
            t("Table 2(a)", "prune-c", 0.5, 0.7529),
            t("Table 2(a)", "phist", 0.5, 0.6676),
            t("Table 2(a)", "lpdt", 0.5, 0.6305),
            t("Table 2(a)", "pglm", 0.5, 0.5499),
            t("Table 2(b)", "lpct-m", 2.0, 0.7274),
            t("Table 2(b)", "lpct-c", 2.0, 0.7590),
            t("Table 2(b)", "prune-m", 2.0, 0.6661),
            t("Table 2(b)", "prune-c", 2.0, 0.7412),
            t("Table 2(b)", "phist", 2.0, 0.6676),
            t("Table 2(b)", "lpdt", 2.0, 0.6676),
            t("Table 2(b)", "pglm", 2.0, 0.5499),
            t(c, "lpct-m", 1000.0, 0.7503),
            t(c, "lpct-c", 1000.0, 0.7930),
            t(c, "prune-m", 1000.0, 0.6648),
            t(c, "prune-c", 1000.0, 0.7433),
            t(c, "phist", 1000.0, 0.6676),
            t(c, "lpdt", 1000.0, 0.7496),
            t(c, "pglm", 1000.0, 0.5588),
            t("Table 2(a)", "psgd-l", 0.5, 0.6582),
            t("Table 2(a)", "psgd-n", 0.5, 0.6448),
            t("Table 2(b)", "psgd-l", 2.0, 0.6653),
            t("Table 2(b)", "psgd-n", 2.0, 0.6674),
            t(c, "psgd-l", 1000.0, 0.7244),
            t(c, "psgd-n", 1000.0, 0.7101),
            t(bench, "lpct-m", 8.0, 0.7298),
            t(bench, "lpct-c", 8.0, 0.7590),
            t(bench, "lpdt", 8.0, 0.6690),
            t("Table 2", "ct-w", f64::INFINITY, 0.9964),
            t("Table 2", "ct-q", f64::INFINITY, 0.7301),
        ]
    }

    fn checks(&self, rows: &[crate::aggregate::Summary]) -> Vec<crate::Check> {
        checks::all(rows)
    }

    fn plots(&self) -> Vec<PlotSpec> {
        let p = |file: &str, title: &str, study: &str, x: Axis, series: Series| {
            PlotSpec::new(file, title, x, "accuracy", series).for_dataset(study)
        };
        let param = |k: &str| Axis::Param(k.into());
        vec![
            p(
                "fig4a.svg",
                "Fig. 4(a): n_P = 10⁴, n_Q = 50, γ = 0.5",
                "fig4a",
                Axis::Epsilon,
                Series::Method,
            )
            .for_methods(FOUR.into_iter().chain(["lpct-prune-prop6"]))
            .log_x(),
            p(
                "sec73_synthetic.svg",
                "§7.3's comparison on Fig. 4(a)'s design: LPCT, LPDT (LPCT-P), PHIST, PGLM",
                "fig4a",
                Axis::Epsilon,
                Series::Method,
            )
            .for_methods(["lpct", "lpct-p", "lpct-q", "phist", "pglm"])
            .log_x(),
            p(
                "fig4b.svg",
                "Fig. 4(b): n_P = 10⁴, n_Q = 1000, γ = 5",
                "fig4b",
                Axis::Epsilon,
                Series::Method,
            )
            .log_x(),
            p(
                "fig4c.svg",
                "Fig. 4(c): LPCT against γ, per ε",
                "fig4c",
                param("gamma"),
                Series::Epsilon,
            ),
            p(
                "fig5.svg",
                "Fig. 5: against n_P (n_Q = 50, γ = 0.5)",
                "fig5",
                param("n_p"),
                Series::MethodAndEpsilon,
            ),
            p(
                "fig6.svg",
                "Fig. 6: against n_Q (n_P = 10⁴, ε = 2)",
                "fig6",
                param("n_q"),
                Series::Method,
            ),
            p(
                "fig7a.svg",
                "Fig. 7(a): LPCT at fixed depth p (best λ)",
                "fig7a",
                param("p"),
                Series::Epsilon,
            ),
            p(
                "fig7b.svg",
                "Fig. 7(b): LPCT-prune at fixed p0",
                "fig7b",
                param("p0"),
                Series::Epsilon,
            ),
            p(
                "fig7c.svg",
                "Fig. 7(c): LPCT at fixed λ (best p)",
                "fig7c",
                param("lambda"),
                Series::Epsilon,
            )
            .log_x(),
            p(
                "fig8.svg",
                "Fig. 8: range known / public min–max / guessed",
                "fig8",
                param("n_q"),
                Series::MethodAndEpsilon,
            ),
            p(
                "fig9.svg",
                "Fig. 9: max-edge (LPCT) vs random max-edge (LPCT-R), ε = 2",
                "fig9",
                param("n_p"),
                Series::Method,
            ),
            p(
                "fig10.svg",
                "Fig. 10: Diabetes, 80 public rows, ε = 2",
                "fig10",
                param("frac"),
                Series::Method,
            ),
            p(
                "table2_diabetes.svg",
                "Table 2: Diabetes against ε",
                "diabetes",
                Axis::Epsilon,
                Series::Method,
            )
            .log_x(),
        ]
    }

    fn demo(&self) -> Vec<DemoMethod> {
        vec![
            DemoMethod {
                name: "LPCT (eq. 8, Thm 4 p, λ)",
                task: "binary, public + LDP",
                epsilons: vec![1.0, 4.0],
                run: demo_lpct,
            },
            DemoMethod {
                name: "LPCT-prune (Alg. 2)",
                task: "binary, public + LDP",
                epsilons: vec![1.0, 4.0],
                run: demo_prune,
            },
        ]
    }
}

/// What the demo reports: accuracy on the private test rows, and (no groups here) the accuracy
/// gap to the public-only tree LPCT-Q, in the fairness column's place.
fn demo_result(pred: Vec<u8>, data: &DemoData, ledger: &Ledger) -> Result<DemoResult> {
    let (_, (_, test)) = data.lpct()?;
    let y = lpct::binary_xy(test, "test data").map_err(method_error)?.1;
    let acc = score::accuracy(pred, y);
    DemoResult::new("accuracy", acc, "none (no groups)", f64::NAN).spent(ledger)
}

fn demo_lpct(data: &DemoData, epsilon: f64, seed: u64) -> Result<DemoResult> {
    let (public, (train, test)) = data.lpct()?;
    let mut ledger = Ledger::new(Budget::pure(epsilon)?);
    let cfg = LpctConfig {
        epsilon,
        ..LpctConfig::default()
    };
    let m = lpct::fit(&cfg, public, train, &mut ledger, &mut Noise::seeded(seed))
        .map_err(method_error)?;
    demo_result(
        m.predict(test.features.view()).map_err(method_error)?,
        data,
        &ledger,
    )
}

fn demo_prune(data: &DemoData, epsilon: f64, seed: u64) -> Result<DemoResult> {
    let (public, (train, test)) = data.lpct()?;
    let mut ledger = Ledger::new(Budget::pure(epsilon)?);
    let cfg = PruneConfig {
        epsilon,
        ..PruneConfig::default()
    };
    let m = lpct::fit_prune(&cfg, public, train, &mut ledger, &mut Noise::seeded(seed))
        .map_err(method_error)?;
    demo_result(
        m.predict(test.features.view()).map_err(method_error)?,
        data,
        &ledger,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 2's tolerance is the binomial band of the two means, whatever our spread: by
    /// hand, p = 0.6676, n = 20: √(0.6676·0.3324/514·(1/20 + 1/20)) = 0.0065706, × 1.95996 =
    /// 0.012878; n = 3: √(0.6676·0.3324/514·(1/20 + 1/3)) = 0.0128646 → 0.025214.
    #[test]
    fn table_2_tolerances_are_the_binomial_band_of_the_two_means() {
        assert!((table_2_tolerance(0.6676, 20) - 0.012878).abs() < 2e-6);
        assert!((table_2_tolerance(0.6676, 3) - 0.025214).abs() < 2e-6);
        for r in LpctPaper.references_at(3) {
            assert_eq!(r.tolerance, table_2_tolerance(r.value, 3), "{r:?}");
        }
        assert_eq!(LpctPaper.references(), LpctPaper.references_at(20));
    }
}
