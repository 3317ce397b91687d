//! Private hyper-parameter (and method) selection: a search that spends from the session's
//! ledger like one fit (docs/tuning.md).
//!
//! The rows are split once by a public random split into *fit rows* and *selection rows*
//! ([`Search::selection_fraction`]). The search then runs Liu & Talwar's random stopping
//! ([`dpfair_privacy::selection`]): a secret geometric number of runs, each one candidate drawn
//! uniformly from the list *and the constant classes*, fitted on the fit rows at the run's
//! (ε₀, δ₀) (a model: [`crate::pipeline`]'s scaling and fit, without its held-out check; the
//! constant: the fit rows' most frequent class by the exponential mechanism), and scored on the
//! selection rows by its count of correct predictions plus Laplace noise at ε₀ (replacing one
//! row moves the count by at most 1). Fit and score touch disjoint rows, so one run is as
//! private as its fit. Only the best run is released: its model (or class) and its noisy score;
//! how many runs there were and which candidates they drew stay secret. The constant competing
//! as a candidate is the search's guard against a model worse than always predicting one class
//! (the plain fit's held-out check, whose handicap at a run's small ε₀ would discard nearly
//! every model).
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
//! // Candidate 0 or 1, or 2: the constant classes.
//! assert!(tuned.selection.chosen <= 2);
//! let predicted = tuned.predict(&loaded.dataset, session.noise())?;
//! assert!(session.ledger().total()?.epsilon <= 2.0 + 1e-9);
//! # Ok::<(), dpfair::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::estimator::{Estimator, Fitted};
use crate::held_out_check::{class_labels, release_majority};
use crate::model::{ConstantClassifier, FittedModel, ModelFile};
use crate::pipeline::{self, Scaling};
use crate::predictor::{Output, Predictor};
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
    /// Every candidate's configuration, in the order given; the constant classes come last
    /// (index `candidates.len()`).
    pub candidates: Vec<serde_json::Value>,
    /// The index of the released candidate (`candidates.len()`: the constant classes).
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

impl Selection {
    /// Whether the constant classes won.
    pub fn chose_constant(&self) -> bool {
        self.chosen == self.candidates.len()
    }
}

/// The released run: a fitted model, or the fit rows' most frequent class.
#[derive(Clone, Debug)]
pub enum Chosen<M> {
    Model(Box<Fitted<M>>),
    Constant { class: u32, classes: usize },
}

/// A tuned model: the released run, the search's ledger (one entry) and the selection.
#[derive(Clone, Debug)]
pub struct Tuned<M> {
    pub chosen: Chosen<M>,
    pub ledger: Ledger,
    pub selection: Selection,
}

impl<M: Predictor + Clone + Into<FittedModel>> Tuned<M> {
    /// Predict every row of `data` (features in the space the model was fitted in).
    pub fn predict(&self, data: &dpfair_data::Dataset, rng: &mut Noise) -> Result<Output> {
        match &self.chosen {
            Chosen::Model(fitted) => fitted.predict(data, rng),
            Chosen::Constant { class, .. } => Ok(Output::Classes {
                classes: vec![*class; data.n_rows()],
                probabilities: None,
            }),
        }
    }

    /// The model file, recording the selection beside the search's ledger.
    pub fn to_model_file(&self, schema: dpfair_data::Schema) -> Result<ModelFile> {
        let file = match &self.chosen {
            Chosen::Model(fitted) => Fitted {
                ledger: self.ledger.clone(),
                ..(**fitted).clone()
            }
            .to_model_file(schema)?,
            Chosen::Constant { class, classes } => {
                let mut p = vec![0.0; *classes];
                p[*class as usize] = 1.0;
                ModelFile::new(
                    schema,
                    self.ledger.clone(),
                    &serde_json::json!({ "constant": class }),
                    FittedModel::ConstantClassifier(ConstantClassifier::new(p, false)?),
                )?
            }
        };
        Ok(file.with_selection(Some(self.selection.clone()))?)
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
    let classes = match &loaded.dataset.target {
        Some(Target::Binary(_)) => 2,
        Some(Target::Multiclass { k, .. }) => *k,
        _ => {
            return Err(Error::InvalidData(
                "a private search scores classifiers (a binary or class target)".into(),
            ));
        }
    };
    let spend = declared_spend(candidates, &loaded.dataset)?;
    // The candidates and the constant classes.
    let stopping = search.stopping(candidates.len() + 1)?;
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
    let truth = class_labels(&selection_rows)?;
    let plan = plan_runs(candidates, &fit_part, scaling, &stopping, spend, seed)?;
    let partition = Partition::new("private search", &["fit rows", "selection rows"], seed);
    let label = format!(
        "private selection among {} {} candidates and the constant classes",
        candidates.len(),
        first.method()
    );
    let mut best: Option<(f64, usize, Chosen<E::Model>, Loaded)> = None;
    let ((), ledger) = session.run(spend, |ledger, noise| {
        ledger.charge(stopping.entry(&label, plan.cost.clone(), candidates.len() + 1))?;
        for _ in 0..stopping.draw_runs(noise)? {
            let c = noise.random_range(0..=candidates.len());
            let mut scored = Ledger::unlimited();
            let mut rows = fit_part.clone();
            let mut held_out = selection_rows.clone();
            let (chosen, predicted) = match candidates.get(c) {
                Some(candidate) => {
                    let run = candidate.with_epsilon(plan.run_epsilon)?;
                    let mut run_session = Session::unlimited().with_noise(noise.fork());
                    let fitted =
                        pipeline::fit_unchecked(&run, &mut rows, scaling, &mut run_session)?;
                    for entry in fitted.ledger.entries() {
                        scored.in_part(&partition, 0, |l| l.charge(entry.clone()))?;
                    }
                    rows.schema.transform(&mut held_out)?;
                    let predicted = predict_rows(&fitted, &held_out, noise)?;
                    (Chosen::Model(Box::new(fitted)), predicted)
                }
                None => {
                    let class = scored.in_part(&partition, 0, |l| {
                        Ok(release_majority(
                            &fit_part.dataset,
                            classes,
                            plan.run_epsilon,
                            l,
                            noise,
                        ))
                    })??;
                    (
                        Chosen::Constant { class, classes },
                        vec![class; truth.len()],
                    )
                }
            };
            let correct = predicted.iter().zip(&truth).filter(|(p, y)| p == y).count();
            let score = scored.in_part(&partition, 1, |l| {
                Laplace::from_epsilon(1.0, plan.run_epsilon)?.release(
                    l,
                    noise,
                    "a run's correct predictions on the selection rows",
                    correct as f64,
                )
            })?;
            plan.admits(&scored)?;
            if best.as_ref().is_none_or(|(s, ..)| score > *s) {
                best = Some((score, c, chosen, rows));
            }
        }
        Ok(())
    })?;
    let (score, chosen_index, chosen, rows) = best.expect("at least one run");
    if let Chosen::Model(_) = chosen {
        loaded
            .schema
            .set_scaling(rows.schema.scaling.clone(), &mut loaded.dataset)?;
    }
    let selection = Selection {
        candidates: candidates
            .iter()
            .map(|c| crate::estimator::config_json(c, &fit_part.dataset))
            .collect::<Result<_>>()?,
        chosen: chosen_index,
        noisy_accuracy: score / selection_rows.n_rows() as f64,
        selection_rows: selection_rows.n_rows(),
        run_epsilon: plan.run_epsilon,
        mean_runs: stopping.mean_runs(),
        rule: plan.rule,
    };
    Ok(Tuned {
        chosen,
        ledger,
        selection,
    })
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
                    dpfair_privacy::ledger::readable(spend.delta)
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
        let fitted = pipeline::fit_unchecked(&probe, &mut rows, scaling, &mut session)?;
        let curve = fitted.ledger.rdp_curve(orders).map_err(|e| Error::Method {
            method: probe.method(),
            reason: format!("a private search needs each run's Rényi-DP curve: {e}"),
        })?;
        worst.iter_mut().zip(curve).for_each(|(w, v)| *w = w.max(v));
    }
    Ok(worst)
}

/// The fitted model's class for every row of `held_out`, each row predicted from its own
/// public stream (a randomised model's draw for one row never depends on another row).
fn predict_rows<M: Predictor + Clone + Into<FittedModel>>(
    fitted: &Fitted<M>,
    held_out: &dpfair_data::Dataset,
    noise: &mut Noise,
) -> Result<Vec<u32>> {
    let predicted =
        crate::held_out_check::row_by_row(|d, s| fitted.predict(d, s), held_out, noise)?;
    Ok(predicted
        .classes()
        .ok_or_else(|| Error::InvalidData("a private search needs a classifier".into()))?
        .to_vec())
}
