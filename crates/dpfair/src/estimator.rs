//! The estimator shape every method shares, in the spirit of linfa's `ParamGuard` and `Fit`.
//!
//! 1. A method's *params* (e.g. [`crate::estimators::CdpFairParams`]) are built with setters and
//!    hold unchecked values. [`Params::check`] validates every value before any data is touched
//!    and returns the *checked estimator*; only a checked estimator can be fitted.
//! 2. [`Estimator::fit`] runs the method in a [`Session`]: the session refuses a fit that would
//!    overspend its budget before any noise is drawn, gives the fit a fresh ledger and its
//!    randomness, and composes the fit's releases into the session's ledger.
//! 3. The result is a [`Fitted`] model: the model (a [`Predictor`]), the fit's own ledger and the
//!    configuration it used, ready to predict or to be written as a model file
//!    ([`Fitted::to_model_file`]) that `dpfair predict` reads.
//!
//! ```
//! use dpfair::estimators::DpLogistic;
//! use dpfair::{Estimator, Params, Session};
//! # let data = dpfair::estimators::example_data(400, 2, 7);
//! let mut session = Session::new(1.0, 1e-5)?;
//! // DP-SGD certifies replace-one neighbours here, as the session does.
//! let est = DpLogistic::params().epsilon(1.0).substitution(true).epochs(5).check()?;
//! let fitted = est.fit(&data, &mut session)?;
//! let predicted = fitted.predict(&data, session.noise())?;
//! // A second fit would overspend: refused before any noise is drawn.
//! assert!(matches!(est.fit(&data, &mut session), Err(dpfair::Error::BudgetExceeded(_))));
//! # Ok::<(), dpfair::Error>(())
//! ```

pub mod row_count;

use crate::error::{Error, Result};
use crate::model::{FittedModel, ModelFile};
use crate::predictor::{Output, Predictor};
use crate::session::{Session, Spend};
use dpfair_data::{Dataset, Schema};
use dpfair_privacy::{Ledger, Noise};
use serde::Serialize;

/// Unchecked hyper-parameters of a method.
pub trait Params {
    /// The checked estimator.
    type Checked: Estimator;
    /// Validate every value (ranges, combinations, resource bounds) before any data is touched.
    fn check(self) -> Result<Self::Checked>;
}

/// A checked estimator: a method with valid hyper-parameters, ready to fit.
pub trait Estimator {
    /// The fitted model.
    type Model: Predictor + Clone + Into<FittedModel>;
    /// The method's configuration as saved in the model file.
    type Config: Serialize;

    /// The method's name, as in `dpfair fit METHOD`.
    fn method(&self) -> &'static str;

    /// What the fit spends on `data`, declared before the data is read (it may use public facts
    /// about the data only: the number of rows and columns).
    fn spend(&self, data: &Dataset) -> Result<Spend>;

    /// The configuration as used on `data` (defaults that depend on the public shape resolved).
    fn config(&self, data: &Dataset) -> Self::Config;

    /// The method itself: fit on `data`, charging every release to `ledger` (whose budget is the
    /// declared [`Estimator::spend`]) and drawing noise from `noise`.
    fn fit_with(
        &self,
        data: &Dataset,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<Self::Model>;

    /// What the fit released, in a few lines for a person (printed by `dpfair fit`): public
    /// facts of `data` (its shape, the group names) and released quantities of `model` only.
    fn report(&self, fitted: &Fitted<Self::Model>, data: &Dataset) -> Vec<String> {
        let _ = (fitted, data);
        Vec::new()
    }

    /// The held-out check [`crate::pipeline::fit`] runs after the fit ([`crate::held_out_check`]);
    /// `None` (the default) runs none. The classifiers' estimators run it by default.
    fn held_out_check(&self) -> Option<crate::held_out_check::HeldOutCheck> {
        None
    }

    /// A check of the fitted `model` against the constant classes on public rows, at no privacy
    /// cost (LPCT's public rows held out from its partition:
    /// [`crate::held_out_check::public_check`]); `None` (the default) runs none.
    fn public_check(
        &self,
        model: &Self::Model,
        noise: &mut Noise,
    ) -> Result<Option<crate::held_out_check::CheckOutcome>> {
        let _ = (model, noise);
        Ok(None)
    }

    /// The same estimator with the defaults that depend on the public shape of `data` fixed
    /// (e.g. CDP-Fair's δ = (N/2)⁻²), so that a fit on a part of `data` (the held-out check's fit
    /// rows) spends what was declared for `data`. `None` (the default): nothing depends on it.
    fn resolved_for(&self, data: &Dataset) -> Option<Self>
    where
        Self: Sized,
    {
        let _ = data;
        None
    }

    /// The demographic-parity level the method targets (CDP-Fair's and FDP-Fair's α, the
    /// decoupled classifier's α, DP2DP's ρ); `None` (the default): no fairness target. A
    /// private search keeps a run only when its private estimate of the disparity meets it
    /// ([`crate::tune`]).
    fn fairness_target(&self) -> Option<f64> {
        None
    }

    /// The same estimator with another total ε (what private feature bounds leave of it:
    /// [`crate::pipeline::fit`]).
    fn with_epsilon(&self, epsilon: f64) -> Result<Self>
    where
        Self: Sized;

    /// For a fit certifying add/remove-one neighbours, under which the row count is private:
    /// the size declared public, from which the method computes its public choices (sampling
    /// rate, steps, budget shares); `None` (the default): none declared, so a fit releases a
    /// noisy count first ([`row_count::public_size`]; docs/privacy.md, "The row count
    /// under add/remove").
    fn declared_rows(&self) -> Option<usize> {
        None
    }

    /// The same estimator with `rows` as its public size and `epsilon` as its ε
    /// ([`row_count::public_size`]). Only methods that certify add/remove-one neighbours
    /// use the size; the default keeps the estimator's own rule.
    fn with_public_rows(&self, rows: usize, epsilon: f64) -> Result<Self>
    where
        Self: Sized,
    {
        let _ = rows;
        self.with_epsilon(epsilon)
    }

    /// Fit in `session` (module docs): checked against its budget, composed into its ledger.
    fn fit(&self, data: &Dataset, session: &mut Session) -> Result<Fitted<Self::Model>>
    where
        Self: Sized,
    {
        let spend = self.spend(data)?;
        let mut used = None;
        let (model, ledger) = session.run(spend, |ledger, noise| {
            let sized = row_count::public_size(self, data, spend, ledger, noise)?;
            let est = sized.as_ref().map_or(self, |(e, _)| e);
            let model = est.fit_with(data, ledger, noise)?;
            used = Some((
                config_json(est, data)?,
                row_count::public_rows(est, data, spend),
            ));
            Ok(model)
        })?;
        let (config, rows) = used.expect("set by the run");
        let check = self.public_check(&model, session.noise())?;
        Ok(Fitted {
            model,
            ledger,
            config,
            check,
            rows,
        })
    }
}

/// A fitted model with the ledger of its fit and the configuration it used.
#[derive(Clone, Debug)]
pub struct Fitted<M> {
    /// The model.
    pub model: M,
    /// The fit's own releases (the session's ledger holds them too).
    pub ledger: Ledger,
    /// The configuration, as saved in the model file.
    pub config: serde_json::Value,
    /// The held-out check's outcome, when the fit ran one ([`crate::held_out_check`]): when it
    /// chose a constant class, [`Fitted::predict`] and the model file predict that class.
    pub check: Option<crate::held_out_check::CheckOutcome>,
    /// The row count the fit's public choices were computed from: n under replace-one
    /// neighbours; under add/remove-one the declared or released size (docs/privacy.md, "The
    /// row count under add/remove"). What a front end may print about the fit's size.
    pub rows: usize,
}

impl<M: Predictor + Clone + Into<FittedModel>> Fitted<M> {
    /// Predict every row of `data` (features in the space the model was fitted in);
    /// randomized predictors draw from `rng`.
    pub fn predict(&self, data: &Dataset, rng: &mut Noise) -> Result<Output> {
        crate::held_out_check::predict_or_constant(self.check.as_ref(), data.n_rows(), || {
            Ok(self.model.predict(data, rng)?)
        })
    }

    /// The model file `dpfair predict` reads, with the `schema` that turns raw columns into the
    /// model's feature space.
    pub fn to_model_file(&self, schema: Schema) -> Result<ModelFile> {
        Ok(ModelFile::new(
            schema,
            self.ledger.clone(),
            &self.config,
            self.model.clone().into(),
        )?
        .with_check(self.check.clone())?)
    }

    /// Write the model file to `path` (atomically; see [`Fitted::to_model_file`]).
    pub fn save(&self, schema: Schema, path: impl AsRef<std::path::Path>) -> Result<()> {
        Ok(self.to_model_file(schema)?.save(path)?)
    }
}

/// The estimator's configuration on `data` as JSON.
pub(crate) fn config_json<E: Estimator>(
    estimator: &E,
    data: &dpfair_data::Dataset,
) -> Result<serde_json::Value> {
    serde_json::to_value(estimator.config(data)).map_err(|e| Error::Method {
        method: estimator.method(),
        reason: format!("configuration does not serialize: {e}"),
    })
}
