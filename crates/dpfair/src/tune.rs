//! Private hyper-parameter (and method) selection: a search that spends from the session's
//! ledger like one fit (docs/tuning.md).
//!
//! The rows are split once by a public random split into *fit rows* and *selection rows*
//! ([`Search::selection_fraction`]). The search then runs Liu & Talwar's random stopping
//! ([`dpfair_privacy::selection`]): a secret geometric number of runs, each one candidate drawn
//! uniformly from the list, fitted on the fit rows by [`crate::pipeline::fit`] at the run's
//! (ε₀, δ₀), and scored on the selection rows by its count of correct predictions plus Laplace
//! noise at ε₀ (replacing one row moves the count by at most 1). Fit and score touch disjoint
//! rows, so one run is as private as its fit. Only the best run is released: its model and its
//! noisy score; how many runs there were and which candidates they drew stay secret.
//!
//! **Cost.** One ledger entry, charged before the first run:
//! * every candidate pure ε-DP: ε₀ = ε/3 and the search costs 3ε₀ = ε (Liu & Talwar 2019,
//!   Thm 3.4);
//! * otherwise the run's Rényi-DP curve (the worst over the candidates, each read from a
//!   probe fit whose model is discarded: a fit's ledger depends on public facts only), lifted by
//!   Papernot & Steinke (2022), Thm 2, and converted at the session's δ; ε₀ is the largest of a
//!   few public tries for which the total is at most ε. Each real run's curve is checked
//!   against the probe's before its score is used.
//!
//! **Fairness.** Every candidate is fitted at the same fairness target (the method's own
//! constraint), so the score is accuracy alone, sensitivity 1; the fairness target enters
//! through the candidates, not the score. A grid must therefore not vary the fairness level.
//!
//! ```
//! use dpfair::estimators::DpLogistic;
//! use dpfair::pipeline::Scaling;
//! use dpfair::tune::{Search, tune};
//! use dpfair::{Params, Session};
//! # let dataset = dpfair::estimators::example_data(1_500, 2, 1);
//! # let schema = dpfair::estimators::example_schema(2);
//! let mut loaded = dpfair::data::Loaded::in_memory(dataset, schema);
//! let grid = [0.1, 0.5]
//!     .map(|lr| DpLogistic::params().epsilon(2.0).substitution(true).learning_rate(lr).check());
//! let candidates = grid.into_iter().collect::<Result<Vec<_>, _>>()?;
//! let mut session = Session::new(2.0, 1e-5)?;
//! let tuned = tune(&candidates, &mut loaded, &Scaling::None, &mut session, &Search::default())?;
//! assert!(tuned.selection.chosen < 2);
//! assert!(session.ledger().total()?.epsilon <= 2.0 + 1e-9);
//! # Ok::<(), dpfair::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::estimator::{Estimator, Fitted};
use crate::pipeline::{self, Scaling};
use crate::session::{Session, Spend};
use dpfair_data::{Loaded, Target};
use dpfair_privacy::accounting::{default_orders, rdp_to_dp};
use dpfair_privacy::mechanisms::Laplace;
use dpfair_privacy::selection::RandomStopping;
use dpfair_privacy::{Cost, Ledger, Noise, Partition, Relation};
use rand::RngExt;
use serde::{Deserialize, Serialize};

/// The default share of the rows held out to score the runs.
pub const DEFAULT_SELECTION_FRACTION: f64 = 0.2;

/// The fewest selection rows a search runs on.
pub const MIN_SELECTION_ROWS: usize = 20;

/// How many public tries the calibration of a non-pure run's ε₀ makes.
const CALIBRATION_TRIES: usize = 6;

/// The search's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    /// The share of the rows held out to score the runs.
    pub selection_fraction: f64,
    /// The mean number of runs; `None`: twice the number of candidates (at least 2), so each
    /// candidate is drawn about twice.
    pub mean_runs: Option<u64>,
}

impl Default for Search {
    fn default() -> Self {
        Search {
            selection_fraction: DEFAULT_SELECTION_FRACTION,
            mean_runs: None,
        }
    }
}

impl Search {
    fn stopping(&self, candidates: usize) -> Result<RandomStopping> {
        let mean = self.mean_runs.unwrap_or(2 * candidates as u64).max(2);
        Ok(RandomStopping::new(mean)?)
    }

    fn check(&self) -> Result<()> {
        if !(self.selection_fraction > 0.0 && self.selection_fraction < 1.0) {
            return Err(Error::invalid(
                "selection_fraction",
                format!("must be in (0, 1), got {}", self.selection_fraction),
            ));
        }
        Ok(())
    }
}

/// What a search released and recorded: written into the tuned model's file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Every candidate's configuration, in the order given.
    pub candidates: Vec<serde_json::Value>,
    /// The index of the released candidate.
    pub chosen: usize,
    /// Its noisy accuracy on the selection rows (released with it).
    pub noisy_accuracy: f64,
    /// The selection rows (a public share of the row count).
    pub selection_rows: usize,
    /// The ε of one run (fit and score).
    pub run_epsilon: f64,
    /// The mean of the secret number of runs.
    pub mean_runs: u64,
    /// The theorem behind the cost.
    pub rule: String,
}

/// A tuned model: the chosen run's fit, whose ledger is the search's, and the selection.
#[derive(Clone, Debug)]
pub struct Tuned<M> {
    pub fitted: Fitted<M>,
    pub selection: Selection,
}

impl<M: crate::predictor::Predictor + Clone + Into<crate::model::FittedModel>> Tuned<M> {
    /// The model file, recording the selection beside the ledger.
    pub fn to_model_file(&self, schema: dpfair_data::Schema) -> Result<crate::model::ModelFile> {
        Ok(self
            .fitted
            .to_model_file(schema)?
            .with_selection(Some(self.selection.clone()))?)
    }
}

/// Search `candidates` privately on `loaded` (module docs): one entry in `session`'s ledger at
/// the candidates' declared (ε, δ), the ε a default fit would spend. `loaded` ends scaled as
/// the chosen run's fit rows were.
pub fn tune<E: Estimator>(
    candidates: &[E],
    loaded: &mut Loaded,
    scaling: &Scaling,
    session: &mut Session,
    search: &Search,
) -> Result<Tuned<E::Model>> {
    search.check()?;
    let first = candidates
        .first()
        .ok_or_else(|| Error::invalid("candidates", "a search needs at least one candidate"))?;
    if !matches!(
        loaded.dataset.target,
        Some(Target::Binary(_) | Target::Multiclass { .. })
    ) {
        return Err(Error::InvalidData(
            "a private search scores classifiers (a binary or class target)".into(),
        ));
    }
    let spend = declared_spend(candidates, &loaded.dataset)?;
    let stopping = search.stopping(candidates.len())?;
    let seed = session.noise().public_u64();
    let parts = dpfair_data::split_indices(
        loaded.dataset.n_rows(),
        &[1.0 - search.selection_fraction, search.selection_fraction],
        seed,
        None,
    )?;
    if parts[1].len() < MIN_SELECTION_ROWS {
        return Err(Error::invalid(
            "selection_fraction",
            format!(
                "leaves {} selection rows; a search needs at least {MIN_SELECTION_ROWS}",
                parts[1].len()
            ),
        ));
    }
    let fit_part = Loaded {
        dataset: loaded.dataset.select(&parts[0]),
        schema: loaded.schema.clone(),
        report: loaded.report.clone(),
    };
    let selection_rows = loaded.dataset.select(&parts[1]);
    let plan = plan_runs(candidates, &fit_part, scaling, &stopping, spend, seed)?;
    let partition = Partition::new("private search", &["fit rows", "selection rows"], seed);
    let label = format!(
        "private selection among {} {} candidates",
        candidates.len(),
        first.method()
    );
    let mut best: Option<(f64, usize, Fitted<E::Model>, Loaded)> = None;
    let ((), ledger) = session.run(spend, |ledger, noise| {
        ledger.charge(stopping.entry(&label, plan.cost.clone(), candidates.len()))?;
        for _ in 0..stopping.draw_runs(noise)? {
            let c = noise.random_range(0..candidates.len());
            let run = candidates[c].with_epsilon(plan.run_epsilon)?;
            let mut rows = fit_part.clone();
            let mut run_session = Session::unlimited().with_noise(noise.fork());
            let fitted = pipeline::fit(&run, &mut rows, scaling, &mut run_session)?;
            let mut scored = Ledger::unlimited();
            for entry in fitted.ledger.entries() {
                scored.in_part(&partition, 0, |l| l.charge(entry.clone()))?;
            }
            let mut held_out = selection_rows.clone();
            rows.schema.transform(&mut held_out)?;
            let correct = correct_predictions(&fitted, &held_out, noise)?;
            let score = scored.in_part(&partition, 1, |l| {
                Laplace::from_epsilon(1.0, plan.run_epsilon)?.release(
                    l,
                    noise,
                    "a run's correct predictions on the selection rows",
                    correct,
                )
            })?;
            plan.admits(&scored)?;
            if best.as_ref().is_none_or(|(s, ..)| score > *s) {
                best = Some((score, c, fitted, rows));
            }
        }
        Ok(())
    })?;
    let (score, chosen, mut fitted, rows) = best.expect("at least one run");
    loaded
        .schema
        .set_scaling(rows.schema.scaling.clone(), &mut loaded.dataset)?;
    fitted.ledger = ledger;
    let selection = Selection {
        candidates: candidates
            .iter()
            .map(|c| crate::estimator::config_json(c, &fit_part.dataset))
            .collect::<Result<_>>()?,
        chosen,
        noisy_accuracy: score / selection_rows.n_rows() as f64,
        selection_rows: selection_rows.n_rows(),
        run_epsilon: plan.run_epsilon,
        mean_runs: stopping.mean_runs(),
        rule: plan.rule,
    };
    Ok(Tuned { fitted, selection })
}

/// The search's spend: the candidates' own declared (ε, δ) on the whole data, which must agree
/// in ε and certify replace-one neighbours.
fn declared_spend<E: Estimator>(candidates: &[E], data: &dpfair_data::Dataset) -> Result<Spend> {
    let mut spend: Option<Spend> = None;
    for c in candidates {
        let s = c.spend(data)?;
        if s.relation != Relation::Substitution || !s.epsilon.is_finite() {
            return Err(Error::invalid(
                "candidates",
                "a private search certifies replace-one neighbours at a finite ε: each \
                 candidate must too (no paper accounting, no add/remove)",
            ));
        }
        spend = Some(match spend {
            None => s,
            Some(p) if (p.epsilon - s.epsilon).abs() <= 1e-12 * p.epsilon => Spend {
                delta: p.delta.max(s.delta),
                ..p
            },
            Some(p) => {
                return Err(Error::invalid(
                    "candidates",
                    format!(
                        "every candidate must declare the same ε (the search's total), got {} \
                         and {}",
                        p.epsilon, s.epsilon
                    ),
                ));
            }
        });
    }
    spend.ok_or_else(|| Error::invalid("candidates", "no candidate"))
}

/// One run's budget and the search's cost (module docs).
struct RunPlan {
    run_epsilon: f64,
    cost: Cost,
    /// A non-pure run's Rényi-DP curve (fit and score), over [`default_orders`]; `None`: pure.
    run_curve: Option<Vec<f64>>,
    rule: String,
}

impl RunPlan {
    /// Whether a finished run's ledger (fit and score) is within the plan; an error otherwise,
    /// before its score is used.
    fn admits(&self, run: &Ledger) -> Result<()> {
        let within = match &self.run_curve {
            None => run
                .total()
                .is_ok_and(|t| t.delta == 0.0 && t.epsilon <= self.run_epsilon * (1.0 + 1e-9)),
            Some(curve) => run
                .rdp_curve(&default_orders())?
                .iter()
                .zip(curve)
                .all(|(r, c)| *r <= c * (1.0 + 1e-9) + 1e-12),
        };
        if within {
            Ok(())
        } else {
            Err(Error::Method {
                method: "tune",
                reason: "internal: a run spent more than its probe declared".into(),
            })
        }
    }
}

/// The run's budget: pure candidates run at ε/3; others at the largest of a few public tries of
/// ε₀ whose lifted curve converts to at most ε at the spend's δ.
fn plan_runs<E: Estimator>(
    candidates: &[E],
    fit_part: &Loaded,
    scaling: &Scaling,
    stopping: &RandomStopping,
    spend: Spend,
    seed: u64,
) -> Result<RunPlan> {
    let pure = candidates
        .iter()
        .map(|c| c.spend(&fit_part.dataset).map(|s| s.delta == 0.0))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .all(|p| p);
    if pure {
        let run_epsilon = spend.epsilon / 3.0;
        return Ok(RunPlan {
            run_epsilon,
            cost: stopping.pure_cost(run_epsilon)?,
            run_curve: None,
            rule: "pure: 3 × one run's ε (Liu & Talwar 2019, Thm 3.4)".into(),
        });
    }
    if spend.delta <= 0.0 {
        return Err(Error::invalid(
            "delta",
            "a search over (ε, δ) candidates converts its Rényi-DP cost at the candidates' δ, \
             which is 0",
        ));
    }
    let orders = default_orders();
    let mut run_epsilon = spend.epsilon / 3.0;
    for _ in 0..CALIBRATION_TRIES {
        let curve = worst_run_curve(candidates, fit_part, scaling, run_epsilon, &orders, seed)?;
        let lifted = stopping.rdp_curve(&orders, &curve)?;
        let total = rdp_to_dp(&orders, &lifted, spend.delta)?;
        if total <= spend.epsilon {
            return Ok(RunPlan {
                run_epsilon,
                cost: Cost::Rdp {
                    orders,
                    epsilons: lifted,
                },
                run_curve: Some(curve),
                rule: format!(
                    "Rényi DP: the worst candidate's run curve lifted by Papernot & Steinke \
                     2022, Thm 2 (η = 1), converted at δ = {}",
                    spend.delta
                ),
            });
        }
        run_epsilon *= 0.97 * spend.epsilon / total;
    }
    Err(Error::Method {
        method: "tune",
        reason: format!(
            "no run budget found whose search costs at most ε = {} at δ = {}: raise ε or δ",
            spend.epsilon, spend.delta
        ),
    })
}

/// The order-wise worst Rényi-DP curve of one run over the candidates at `run_epsilon`: each
/// candidate's probe fit on the fit rows (public seed, model discarded; a fit's ledger depends
/// on public facts only), beside the score's Laplace release on the selection rows.
fn worst_run_curve<E: Estimator>(
    candidates: &[E],
    fit_part: &Loaded,
    scaling: &Scaling,
    run_epsilon: f64,
    orders: &[f64],
    seed: u64,
) -> Result<Vec<f64>> {
    let mut worst: Vec<f64> = orders
        .iter()
        .map(|a| run_epsilon.min(a * run_epsilon * run_epsilon / 2.0))
        .collect();
    for c in candidates {
        let probe = c.with_epsilon(run_epsilon)?;
        let mut rows = fit_part.clone();
        let mut session = Session::unlimited().with_noise(Noise::seeded(seed));
        let fitted = pipeline::fit(&probe, &mut rows, scaling, &mut session)?;
        let curve = fitted.ledger.rdp_curve(orders).map_err(|e| Error::Method {
            method: probe.method(),
            reason: format!("a private search needs each run's Rényi-DP curve: {e}"),
        })?;
        worst.iter_mut().zip(curve).for_each(|(w, v)| *w = w.max(v));
    }
    Ok(worst)
}

/// How many rows of `held_out` the fitted model (with its held-out check's choice) predicts
/// correctly, each row predicted from its own public stream.
fn correct_predictions<M: crate::predictor::Predictor + Clone + Into<crate::model::FittedModel>>(
    fitted: &Fitted<M>,
    held_out: &dpfair_data::Dataset,
    noise: &mut Noise,
) -> Result<f64> {
    let predicted =
        crate::held_out_check::row_by_row(|d, s| fitted.predict(d, s), held_out, noise)?;
    let predicted = predicted
        .classes()
        .ok_or_else(|| Error::InvalidData("a private search needs a classifier".into()))?
        .to_vec();
    let truth = crate::held_out_check::class_labels(held_out)?;
    Ok(predicted.iter().zip(&truth).filter(|(p, y)| p == y).count() as f64)
}
