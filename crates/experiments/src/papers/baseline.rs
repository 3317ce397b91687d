//! `baseline`: non-private logistic regression against output-perturbed (ε, δ)-DP logistic
//! regression (the learn crate's Chaudhuri et al. 2011 release, Say et al., Phase 1, output perturbation) on the
//! two-group synthetic design in the style of Ghoukasian & Asoodeh, over ε. Not a paper: it shows the harness and the
//! cost of privacy before any fairness correction, and gives the demo its first two methods.

use crate::demo::{DemoMethod, DemoResult};
use crate::error::{ExpError, Result, method_error};
use crate::{Axis, Cell, Grid, Outcome, Paper, Params, PlotSpec, Scale, Series, Sweep};
use dpfair_data::Dataset;
use dpfair_data::synthetic::{Design, TwoGroupLogisticDesign, derive_seed};
use dpfair_learn::{
    LogisticConfig, OutputPerturbationConfig, fit_logistic, fit_output_perturbation,
};
use dpfair_privacy::{Budget, Ledger, Noise};

pub struct Baseline;

const DATASET: &str = "two-group-logistic";
/// δ of the private fits.
const DELTA: f64 = 1e-5;

/// Accuracy and demographic-parity difference of a model on test data, and the ledger.
pub struct Evaluation {
    pub accuracy: f64,
    pub dp_gap: f64,
    pub ledger: Option<Ledger>,
}

fn labels(d: &Dataset) -> Result<Vec<u32>> {
    match &d.target {
        Some(dpfair_data::Target::Binary(y)) => Ok(y.iter().map(|&v| u32::from(v)).collect()),
        _ => Err(ExpError::Method(
            "the baseline needs a binary target".into(),
        )),
    }
}

fn group_codes(d: &Dataset) -> Result<&[u32]> {
    d.groups
        .as_ref()
        .map(|g| g.codes.as_slice())
        .ok_or_else(|| ExpError::Method("the baseline needs groups".into()))
}

/// Fit `method` (`logistic`: non-private; `logistic-op`: output perturbation at (ε, 1e-5)) on
/// `train` and evaluate on `test`. Group-blind models (A is not a feature).
pub fn fit_and_evaluate(
    method: &str,
    epsilon: f64,
    train: &Dataset,
    test: &Dataset,
    noise: &mut Noise,
) -> Result<Evaluation> {
    let y = labels(train)?;
    let (predicted, ledger) = match method {
        "logistic" => {
            let m = fit_logistic(&LogisticConfig::default(), train.features.view(), &y, 2)
                .map_err(method_error)?;
            (m.predict(test.features.view()).map_err(method_error)?, None)
        }
        "logistic-op" => {
            let mut ledger = Ledger::new(Budget::approx(epsilon, DELTA)?);
            let cfg = OutputPerturbationConfig {
                epsilon,
                delta: DELTA,
                ..Default::default()
            };
            let fit =
                fit_output_perturbation(&cfg, train.features.view(), &y, 2, &mut ledger, noise)
                    .map_err(method_error)?;
            (
                fit.model
                    .predict(test.features.view())
                    .map_err(method_error)?,
                Some(ledger),
            )
        }
        other => {
            return Err(ExpError::Method(format!(
                "unknown baseline method `{other}`"
            )));
        }
    };
    let truth = labels(test)?;
    let accuracy = dpfair_fairness::accuracy(&truth, &predicted).map_err(method_error)?;
    let as_u8: Vec<u8> = predicted.iter().map(|&p| p as u8).collect();
    let dp_gap = dpfair_fairness::demographic_parity_difference(&as_u8, group_codes(test)?)
        .map_err(method_error)?;
    Ok(Evaluation {
        accuracy,
        dp_gap,
        ledger,
    })
}

impl Paper for Baseline {
    fn name(&self) -> &'static str {
        "baseline"
    }

    fn description(&self) -> &'static str {
        "non-private vs output-perturbed DP logistic regression on the two-group design, over ε"
    }

    fn grid(&self, scale: Scale) -> Grid {
        let (reps, n) = match scale {
            Scale::Quick => (5, 4_000),
            Scale::Full => (30, 20_000),
        };
        let p = [Params::new().with("n_train", n).with("n_test", 5_000)];
        Grid::new(reps, 1_000)
            .with(
                Sweep::new()
                    .datasets([DATASET])
                    .methods(["logistic"])
                    .accounting(["none"])
                    .params(p.clone()),
            )
            .with(
                Sweep::new()
                    .datasets([DATASET])
                    .methods(["logistic-op"])
                    .epsilons([0.25, 0.5, 1.0, 2.0, 4.0, 8.0])
                    .deltas([DELTA])
                    .params(p),
            )
    }

    fn run(&self, cell: &Cell) -> Result<Outcome> {
        let design = TwoGroupLogisticDesign::default();
        // The same data for every setting of one repetition (common random numbers).
        let train = design.generate(cell.param("n_train")?, cell.seed)?;
        let test = design.generate(cell.param("n_test")?, derive_seed(cell.seed, 1))?;
        let mut noise = Noise::seeded(derive_seed(cell.seed, 2));
        let s = &cell.setting;
        let e = fit_and_evaluate(&s.method, s.epsilon, &train, &test, &mut noise)?;
        let out = Outcome::new()
            .metric("accuracy", e.accuracy)
            .metric("dp_gap", e.dp_gap);
        match &e.ledger {
            Some(l) => out.spent(l),
            None => Ok(out),
        }
    }

    fn plots(&self) -> Vec<PlotSpec> {
        vec![
            PlotSpec::new(
                "baseline_accuracy.svg",
                "logistic regression: accuracy vs ε",
                Axis::Epsilon,
                "accuracy",
                Series::Method,
            )
            .log_x(),
            PlotSpec::new(
                "baseline_tradeoff.svg",
                "logistic regression: accuracy vs DP gap",
                Axis::Metric("dp_gap".into()),
                "accuracy",
                Series::Method,
            ),
        ]
    }

    fn demo(&self) -> Vec<DemoMethod> {
        fn run(method: &str, data: &crate::DemoData, eps: f64, seed: u64) -> Result<DemoResult> {
            let (train, test) = data.binary()?;
            let mut noise = Noise::seeded(seed);
            let e = fit_and_evaluate(method, eps, train, test, &mut noise)?;
            let r = DemoResult::new("accuracy", e.accuracy, "DP difference", e.dp_gap);
            match &e.ledger {
                Some(l) => r.spent(l),
                None => Ok(r),
            }
        }
        vec![
            DemoMethod {
                name: "logistic (non-private)",
                task: "binary, 2 groups",
                epsilons: vec![f64::INFINITY],
                run: |d, e, s| run("logistic", d, e, s),
            },
            DemoMethod {
                name: "logistic, output pert.",
                task: "binary, 2 groups",
                epsilons: vec![0.5, 1.0, 4.0],
                run: |d, e, s| run("logistic-op", d, e, s),
            },
        ]
    }
}
