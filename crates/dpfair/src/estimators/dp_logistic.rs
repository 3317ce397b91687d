//! [`DpLogistic`]: differentially private logistic regression, binary or multi-class, the
//! privacy-only reference (DP-SGD with Opacus semantics, or Gaussian output perturbation of
//! L2-regularised logistic regression; crate `dpfair-learn`).

use super::{Lo, check_delta, check_epsilon, check_in, check_step_size, setters};
use crate::error::{Error, Result};
use crate::estimator::{Estimator, Fitted, Params};
use crate::held_out_check::HeldOutCheck;
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_learn::validate::class_labels;
use dpfair_learn::{
    Architecture, DpSgdConfig, OutputPerturbationConfig, PrivateLogistic, fit_dp_sgd,
    fit_output_perturbation,
};
use dpfair_privacy::accounting::Accountant;
use dpfair_privacy::{Ledger, Noise, Relation};
use serde::Serialize;

/// Which mechanism makes the logistic regression private.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogisticMechanism {
    /// DP-SGD: Poisson sampling, per-example clipping, Gaussian noise (Opacus semantics).
    #[default]
    DpSgd,
    /// Gaussian noise on the weights of L2-regularised logistic regression (Chaudhuri et al.).
    OutputPerturbation,
}

/// Params of [`DpLogistic`]. Defaults: DP-SGD, ε = 1, δ = 10⁻⁵, 30 epochs, expected batch
/// `n/16` clamped to `16..=1024`, learning rate 0.5, clip 1, the RDP accountant, replace-one
/// neighbours like every dpfair method (`substitution(false)`: add/remove-one, as Opacus, with
/// the row count private: [`DpLogisticParams::public_rows`]).
#[derive(Clone, Debug)]
pub struct DpLogisticParams {
    mechanism: LogisticMechanism,
    sgd: DpSgdConfig,
    batch: Option<usize>,
    public_rows: Option<usize>,
    perturbation: OutputPerturbationConfig,
    check: HeldOutCheck,
}

/// The checked estimator (see [`DpLogisticParams`]).
///
/// ```
/// use dpfair::estimators::DpLogistic;
/// use dpfair::{Estimator, Params, Session};
/// let data = dpfair::estimators::example_data(500, 3, 1);
/// let mut session = Session::new(1.0, 1e-5)?; // replace-one neighbours, as the fit
/// let fitted = DpLogistic::params().epsilon(1.0).epochs(10).check()?.fit(&data, &mut session)?;
/// let out = fitted.predict(&data, session.noise())?;
/// assert!(matches!(out, dpfair::model::Output::Classes { .. }));
/// let path = std::env::temp_dir().join("dpfair-doc-dp-logistic.json");
/// fitted.save(dpfair::estimators::example_schema(3), &path)?; // `dpfair predict` reads it
/// assert_eq!(dpfair::model::ModelFile::load(&path)?.method, "dp-logistic");
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct DpLogistic {
    params: DpLogisticParams,
}

impl DpLogistic {
    /// Params with the defaults of [`DpLogisticParams`].
    pub fn params() -> DpLogisticParams {
        DpLogisticParams {
            mechanism: LogisticMechanism::DpSgd,
            sgd: DpSgdConfig {
                epochs: 30,
                learning_rate: 0.5,
                clip: 1.0,
                relation: Relation::Substitution,
                ..DpSgdConfig::default()
            },
            batch: None,
            public_rows: None,
            perturbation: OutputPerturbationConfig::default(),
            check: HeldOutCheck::default(),
        }
    }
}

impl DpLogisticParams {
    /// DP-SGD under add/remove-one neighbours: a row count declared public (e.g. the size of a
    /// population register), from which the expected batch, the sampling rate and the steps
    /// are computed. The guarantee holds whatever the real count; only accuracy depends on how
    /// close it is. Without it, the fit releases a noisy count with
    /// [`crate::estimator::row_count::ROW_COUNT_SHARE`] of ε.
    pub fn public_rows(mut self, rows: usize) -> Self {
        self.public_rows = Some(rows);
        self
    }
    /// The mechanism.
    pub fn mechanism(mut self, mechanism: LogisticMechanism) -> Self {
        self.mechanism = mechanism;
        self
    }
    /// ε of the fit.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.sgd.epsilon = epsilon;
        self.perturbation.epsilon = epsilon;
        self
    }
    /// δ of the fit.
    pub fn delta(mut self, delta: f64) -> Self {
        self.sgd.delta = delta;
        self.perturbation.delta = delta;
        self
    }
    /// DP-SGD: the expected batch size (default `n/16` clamped to `16..=1024`).
    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = Some(batch);
        self
    }
    /// DP-SGD: certify replace-one neighbours (the default; twice the noise of add/remove-one
    /// at the same ε), or, with `false`, add/remove-one neighbours (as Opacus), under which the
    /// row count is private: the schedule then comes from [`DpLogisticParams::public_rows`] or a
    /// released count (docs/privacy.md, "The row count under add/remove").
    pub fn substitution(mut self, on: bool) -> Self {
        self.sgd.relation = if on {
            Relation::Substitution
        } else {
            Relation::AddRemove
        };
        self
    }
}

setters!(DpLogisticParams {
    /// DP-SGD: epochs.
    epochs: usize => sgd.epochs;
    /// DP-SGD: learning rate (plain SGD on the mean clipped gradient).
    learning_rate: f64 => sgd.learning_rate;
    /// DP-SGD: per-example clipping norm C.
    clip: f64 => sgd.clip;
    /// DP-SGD: the accountant calibrating the noise multiplier.
    accountant: Accountant => sgd.accountant;
    /// Output perturbation: L2 strength Λ per sample.
    l2: f64 => perturbation.l2;
    /// Output perturbation: rows `[x; 1]` are scaled down to ℓ2 norm at most R.
    feature_bound: f64 => perturbation.feature_bound;
    /// The share of rows held out for the check against the constant classes (default 0.1; 0
    /// turns it off; replace-one neighbours only: [`crate::held_out_check`]).
    check_fraction: f64 => check.fraction;
});

/// The most training passes accepted: a resource bound checked before any data is read.
pub const MAX_EPOCHS: usize = 100_000;

impl Params for DpLogisticParams {
    type Checked = DpLogistic;

    fn check(self) -> Result<DpLogistic> {
        check_epsilon(self.sgd.epsilon, false)?;
        self.check.check()?;
        check_delta(self.sgd.delta)?;
        // Every numeric option, whichever mechanism reads it: a bad value is refused, never
        // ignored (issue #41).
        check_step_size("learning_rate", self.sgd.learning_rate)?;
        check_in(
            "clip",
            self.sgd.clip,
            Lo::Above(0.0),
            1e6,
            false,
            "an ℓ2 norm",
        )?;
        check_in(
            "l2",
            self.perturbation.l2,
            Lo::Above(0.0),
            1e6,
            false,
            "a penalty per row",
        )?;
        check_in(
            "feature_bound",
            self.perturbation.feature_bound,
            Lo::Above(0.0),
            1e6,
            false,
            "an ℓ2 norm",
        )?;
        match self.mechanism {
            LogisticMechanism::DpSgd => {
                if self.sgd.epochs == 0 || self.sgd.epochs > MAX_EPOCHS {
                    return Err(Error::invalid(
                        "epochs",
                        format!("must be in 1..={MAX_EPOCHS}, got {}", self.sgd.epochs),
                    ));
                }
                if self.batch == Some(0) {
                    return Err(Error::invalid("batch", "must be ≥ 1"));
                }
                if self.public_rows == Some(0) {
                    return Err(Error::invalid("public_rows", "must be ≥ 1"));
                }
                if self.public_rows.is_some() && self.sgd.relation != Relation::AddRemove {
                    return Err(Error::invalid(
                        "public_rows",
                        "a declared public row count is for add/remove-one neighbours; under \
                         replace-one (the default) the row count is public already",
                    ));
                }
                for (name, v) in [
                    ("learning_rate", self.sgd.learning_rate),
                    ("clip", self.sgd.clip),
                ] {
                    if !(v.is_finite() && v > 0.0) {
                        return Err(Error::invalid(
                            name,
                            format!("must be finite and > 0, got {v}"),
                        ));
                    }
                }
            }
            LogisticMechanism::OutputPerturbation => {
                for (name, v) in [
                    ("l2", self.perturbation.l2),
                    ("feature_bound", self.perturbation.feature_bound),
                ] {
                    if !(v.is_finite() && v > 0.0) {
                        return Err(Error::invalid(
                            name,
                            format!("must be finite and > 0, got {v}"),
                        ));
                    }
                }
            }
        }
        Ok(DpLogistic { params: self })
    }
}

/// The configuration saved in the model file.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "method", rename_all = "kebab-case")]
pub enum DpLogisticConfig {
    DpSgd(DpSgdConfig),
    OutputPerturbation(OutputPerturbationConfig),
}

/// The default expected batch size for `n` rows: about 16 steps per epoch.
pub fn default_batch(n: usize) -> usize {
    (n / 16).clamp(16, 1024)
}

impl DpLogistic {
    /// How the released weights compare with the noise they carry: their norm, and the norm the
    /// noise alone would give (√p·s for p weights of noise standard deviation s: the output
    /// perturbation's σ, or for DP-SGD the random walk of T noisy steps, s = lr·zC·√T / B with
    /// B the expected batch). A norm within twice the noise means the model is likely no better
    /// than a constant. The line is printed for every fit, in the same form, so that which lines
    /// a fit prints never depends on the data; its numbers are post-processing of the released
    /// weights and public settings.
    fn weights_against_noise(&self, model: &PrivateLogistic, rows: usize) -> Option<String> {
        let (weights, sd) = match model {
            PrivateLogistic::OutputPerturbation(fit) => (&fit.model, fit.sigma),
            PrivateLogistic::DpSgd(fit) => {
                let dpfair_learn::Classifier::Logistic(m) = &fit.model else {
                    return None;
                };
                let batch = fit.sampling_rate * rows as f64;
                let lr = self.params.sgd.learning_rate;
                let sd = lr * fit.noise_multiplier * fit.clip * (fit.steps as f64).sqrt() / batch;
                (m, sd)
            }
        };
        let p = weights.coef.len() + weights.intercept.len();
        let norm = weights
            .coef
            .iter()
            .chain(weights.intercept.iter())
            .map(|w| w * w)
            .sum::<f64>()
            .sqrt();
        let noise = sd * (p as f64).sqrt();
        Some(super::signal_line("weights", norm, noise, p))
    }

    /// The neighbouring relation the fit certifies.
    pub fn relation(&self) -> Relation {
        match self.params.mechanism {
            LogisticMechanism::DpSgd => self.params.sgd.relation,
            LogisticMechanism::OutputPerturbation => Relation::Substitution,
        }
    }

    /// The mechanism.
    pub fn mechanism(&self) -> LogisticMechanism {
        self.params.mechanism
    }

    /// The DP-SGD configuration used on `n` rows: under replace-one neighbours the schedule
    /// comes from n (public), under add/remove-one from the declared or released size
    /// ([`DpLogisticParams::public_rows`]), never from n.
    pub fn sgd_config(&self, n: usize) -> DpSgdConfig {
        let (rows, schedule_rows) = match self.relation() {
            Relation::AddRemove => {
                let rows = self.params.public_rows.unwrap_or(0).max(1);
                (rows, Some(rows))
            }
            Relation::Substitution => (n, None),
        };
        DpSgdConfig {
            expected_batch: self.params.batch.unwrap_or(default_batch(rows)),
            schedule_rows,
            architecture: Architecture::Logistic,
            ..self.params.sgd.clone()
        }
    }
}

impl Estimator for DpLogistic {
    type Model = PrivateLogistic;
    type Config = DpLogisticConfig;

    fn method(&self) -> &'static str {
        "dp-logistic"
    }

    fn report(&self, fitted: &Fitted<PrivateLogistic>, _data: &Dataset) -> Vec<String> {
        let model = &fitted.model;
        let mut lines = vec![match model {
            PrivateLogistic::DpSgd(fit) => format!(
                "DP-SGD: q = {:.5}, {} steps, noise multiplier z = {:.4} (σ = zC = {:.4} on each \
                 clipped-gradient sum), {} accountant, {}",
                fit.sampling_rate,
                fit.steps,
                fit.noise_multiplier,
                fit.noise_multiplier * fit.clip,
                format!("{:?}", self.params.sgd.accountant).to_lowercase(),
                self.relation().describe()
            ),
            PrivateLogistic::OutputPerturbation(fit) => format!(
                "output perturbation: Λ = {}, R = {}, L = {:.4}, sensitivity Δ = {:.4e}, \
                 σ = {:.4e} per weight",
                fit.l2, fit.feature_bound, fit.lipschitz, fit.sensitivity, fit.sigma
            ),
        }];
        lines.extend(self.weights_against_noise(model, fitted.rows));
        lines.push(super::fairness_line(
            "nothing (private only, no fairness constraint)",
            "compare groups with `dpfair evaluate --sensitive`",
        ));
        lines
    }

    fn held_out_check(&self) -> Option<HeldOutCheck> {
        (self.relation() == Relation::Substitution).then_some(self.params.check)
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<DpLogistic> {
        self.params.clone().epsilon(epsilon).check()
    }

    fn declared_rows(&self) -> Option<usize> {
        self.params.public_rows
    }

    fn with_public_rows(&self, rows: usize, epsilon: f64) -> Result<DpLogistic> {
        self.params
            .clone()
            .public_rows(rows.max(1))
            .epsilon(epsilon)
            .check()
    }

    fn spend(&self, _data: &Dataset) -> Result<Spend> {
        Ok(Spend {
            epsilon: self.params.sgd.epsilon,
            delta: self.params.sgd.delta,
            relation: self.relation(),
        })
    }

    fn config(&self, data: &Dataset) -> DpLogisticConfig {
        match self.params.mechanism {
            LogisticMechanism::DpSgd => DpLogisticConfig::DpSgd(self.sgd_config(data.n_rows())),
            LogisticMechanism::OutputPerturbation => {
                DpLogisticConfig::OutputPerturbation(self.params.perturbation.clone())
            }
        }
    }

    fn fit_with(
        &self,
        data: &Dataset,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<PrivateLogistic> {
        let target = data.require_target("dp-logistic")?;
        let (y, k) = class_labels(target)?;
        let x = data.features.view();
        Ok(match self.params.mechanism {
            LogisticMechanism::DpSgd => PrivateLogistic::DpSgd(fit_dp_sgd(
                &self.sgd_config(data.n_rows()),
                x,
                &y,
                k,
                ledger,
                noise,
            )?),
            LogisticMechanism::OutputPerturbation => PrivateLogistic::OutputPerturbation(
                fit_output_perturbation(&self.params.perturbation, x, &y, k, ledger, noise)?,
            ),
        })
    }
}
