//! A candidate of a private search, whatever its method: the object-safe face of an
//! [`Estimator`] that [`super::select`] runs (one run: a fit at the run's ε, without the held-out
//! check), so that one search may compare methods as well as settings.

use crate::error::Result;
use crate::estimator::{Estimator, config_json};
use crate::held_out_check::CheckOutcome;
use crate::model::FittedModel;
use crate::pipeline::{self, Scaling};
use crate::predictor::Output;
use crate::session::{Session, Spend};
use dpfair_data::{Dataset, Loaded};
use dpfair_privacy::{Ledger, Noise};

/// One candidate of a search: every [`Estimator`] is one.
pub trait Candidate {
    /// The method's name, as in `dpfair fit METHOD`.
    fn name(&self) -> &'static str;
    /// What one fit of it spends on `data` ([`Estimator::spend`]).
    fn declared(&self, data: &Dataset) -> Result<Spend>;
    /// Its configuration on `data`, as a model file records it.
    fn describe(&self, data: &Dataset) -> Result<serde_json::Value>;
    /// Its demographic-parity level ([`Estimator::fairness_target`]).
    fn target(&self) -> Option<f64>;
    /// One run: scale `loaded` and fit at `epsilon` in `session`, without the held-out check
    /// (the search compares the run with the constant classes itself).
    fn fit_run(
        &self,
        epsilon: f64,
        loaded: &mut Loaded,
        scaling: &Scaling,
        session: &mut Session,
    ) -> Result<RunFit>;
}

/// A run's fitted model, with what a model file and a report need.
#[derive(Clone, Debug)]
pub struct RunFit {
    pub model: FittedModel,
    /// The configuration the run used.
    pub config: serde_json::Value,
    /// LPCT's public check (the only check a run makes): when it chose a constant class, the
    /// model predicts that class.
    pub check: Option<CheckOutcome>,
    /// The run's own releases (the search's ledger holds one entry for all runs instead).
    pub ledger: Ledger,
    /// The rows the run was fitted on (public: a share of the row count).
    pub rows: usize,
    /// The fit's lines for a person ([`Estimator::report`]): released values only.
    pub report: Vec<String>,
}

impl RunFit {
    /// Predict every row of `data`, as the model file will.
    pub fn predict(&self, data: &Dataset, rng: &mut Noise) -> Result<Output> {
        crate::held_out_check::predict_or_constant(self.check.as_ref(), data.n_rows(), || {
            Ok(self.model.predictor().predict(data, rng)?)
        })
    }
}

impl<E: Estimator> Candidate for E {
    fn name(&self) -> &'static str {
        self.method()
    }

    fn declared(&self, data: &Dataset) -> Result<Spend> {
        self.spend(data)
    }

    fn describe(&self, data: &Dataset) -> Result<serde_json::Value> {
        config_json(self, data)
    }

    fn target(&self) -> Option<f64> {
        self.fairness_target()
    }

    fn fit_run(
        &self,
        epsilon: f64,
        loaded: &mut Loaded,
        scaling: &Scaling,
        session: &mut Session,
    ) -> Result<RunFit> {
        let run = self.with_epsilon(epsilon)?;
        let fitted = pipeline::fit_unchecked(&run, loaded, scaling, session)?;
        let report = run.report(&fitted, &loaded.dataset);
        Ok(RunFit {
            model: fitted.model.into(),
            config: fitted.config,
            check: fitted.check,
            ledger: fitted.ledger,
            rows: fitted.rows,
            report,
        })
    }
}
