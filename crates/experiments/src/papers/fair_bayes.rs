//! `fair-bayes`: the oracle curve of Xue & Yu (§5.1.1, Fig. 3's dashed line): the
//! α-fair Bayes risk and threshold shift τ* of the synthetic design, by Monte Carlo.
//! It needs no privacy and no learner, so it also serves as the harness's worked example; its
//! references are the table of `docs/reference-values.md#fdp-fair` (400k draws) with the project's tolerances
//! (|Δ risk| ≤ 0.003, |Δτ*| ≤ 0.005), and the paper's own "Bayes risk 0.106, intrinsic DD 0.559".

use crate::error::Result;
use crate::{Axis, Cell, Grid, Outcome, Paper, PlotSpec, Reference, Scale, Series, Sweep};
use dpfair_data::synthetic::{FairBayesOracle, FdpFairDesign};

pub struct FairBayesCurve;

const DATASET: &str = "synthetic-plugin";
const METHOD: &str = "fair-bayes-oracle";

/// `docs/reference-values.md#fdp-fair`: (α, τ*, fair Bayes risk).
const TABLE: [(f64, f64, f64); 11] = [
    (0.05, -0.2673, 0.2103),
    (0.10, -0.2630, 0.1971),
    (0.15, -0.2580, 0.1840),
    (0.20, -0.2520, 0.1713),
    (0.25, -0.2442, 0.1589),
    (0.30, -0.2338, 0.1469),
    (0.35, -0.2186, 0.1356),
    (0.40, -0.1956, 0.1252),
    (0.45, -0.1598, 0.1162),
    (0.50, -0.1015, 0.1096),
    (0.55, -0.0151, 0.1066),
];

/// The fair Bayes risk of the table in `docs/reference-values.md#fdp-fair` as a stored reference line (Figs. 3–5's oracle
/// curve), with the unconstrained Bayes risk 0.106 from the design's intrinsic disparity 0.559 on.
pub fn oracle_risk_line() -> crate::RefLine {
    let mut points: Vec<(f64, f64)> = TABLE.iter().map(|&(a, _, r)| (a, r)).collect();
    points.extend([(0.559, 0.106), (1.0, 0.106)]);
    crate::RefLine::Points {
        label: "fair Bayes risk (oracle)".into(),
        points,
    }
}

impl Paper for FairBayesCurve {
    fn name(&self) -> &'static str {
        "fair-bayes"
    }

    fn description(&self) -> &'static str {
        "Xue & Yu, §5.1.1: Monte-Carlo α-fair Bayes risk and τ* of the synthetic design (no privacy)"
    }

    fn grid(&self, scale: Scale) -> Grid {
        let (reps, draws) = match scale {
            Scale::Quick => (4, 100_000),
            Scale::Full => (20, 400_000),
        };
        let alphas = (1..=20).map(|i| f64::from(i) / 20.0);
        Grid::new(reps, 7).with(
            Sweep::new()
                .datasets([DATASET])
                .methods([METHOD])
                .accounting(["none"])
                .fairness_levels(alphas)
                .params([crate::Params::new().with("draws", draws)]),
        )
    }

    fn run(&self, cell: &Cell) -> Result<Outcome> {
        let draws: usize = cell.param("draws")?;
        let oracle = FairBayesOracle::simulate(&FdpFairDesign::default(), draws, cell.seed)?;
        let fb = oracle.fair_bayes(cell.fairness_level()?)?;
        Ok(Outcome::new()
            .metric("risk", fb.risk)
            .metric("tau", fb.tau)
            .metric("abs_dd", fb.dd.abs())
            .metric("intrinsic_abs_dd", oracle.dd(0.0).abs())
            .metric("bayes_risk", oracle.risk(0.0)))
    }

    fn references(&self) -> Vec<Reference> {
        let r = |src: &str, metric: &str, level: f64, value: f64, tol: f64| {
            Reference::new(src, DATASET, METHOD, f64::INFINITY, metric, value, tol).at_level(level)
        };
        let mut out = vec![
            r("paper §5.1.1", "bayes_risk", 0.05, 0.106, 0.003),
            r("paper §5.1.1", "intrinsic_abs_dd", 0.05, 0.559, 0.003),
        ];
        for (alpha, tau, risk) in TABLE {
            out.push(r(
                "docs/reference-values.md#fdp-fair",
                "risk",
                alpha,
                risk,
                0.003,
            ));
            out.push(r(
                "docs/reference-values.md#fdp-fair",
                "tau",
                alpha,
                tau,
                0.005,
            ));
        }
        out
    }

    fn plots(&self) -> Vec<PlotSpec> {
        vec![
            PlotSpec::new(
                "fair_bayes_risk.svg",
                "Xue & Yu: α-fair Bayes risk",
                Axis::FairnessLevel,
                "risk",
                Series::Method,
            ),
            PlotSpec::new(
                "fair_bayes_tau.svg",
                "Xue & Yu: τ*(α)",
                Axis::FairnessLevel,
                "tau",
                Series::Method,
            ),
        ]
    }
}
