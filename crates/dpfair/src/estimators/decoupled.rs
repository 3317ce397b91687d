//! [`Decoupled`]: the decoupled private fair binary classifier (Ghoukasian & Asoodeh,
//! Algorithm 2; [`crate::decoupled`]): a DP-SGD base model, then private group rates and a
//! fairness post-processing that flips decisions per group.

use super::{check_epsilon, setters};
use crate::decoupled::{Config, Model, config::MAX_DELTA};
use crate::error::{Error, Result};
use crate::estimator::{Estimator, Fitted, Params};
use crate::predictor::Accounting;
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise};

/// Params of [`Decoupled`]: [`crate::decoupled::Config`]'s defaults (ε = 3, δ = 10⁻⁵, strict
/// accounting, a joint DP-SGD base model).
#[derive(Clone, Debug, Default)]
pub struct DecoupledParams {
    config: Config,
}

setters!(DecoupledParams {
    /// Total ε (DP-SGD and the rate release).
    epsilon: f64 => config.epsilon;
    /// Total δ (all of it DP-SGD's).
    delta: f64 => config.delta;
    /// Strict (default) or the paper's procedure (ledger records the real cost).
    accounting: Accounting => config.accounting;
    /// The share of ε spent on the group count table (strict).
    rate_share: f64 => config.rate_share;
    /// The fraction of rows held out for the rates.
    post_fraction: f64 => config.post_fraction;
});

impl DecoupledParams {
    /// Params from a whole configuration.
    pub fn from_config(config: Config) -> Self {
        DecoupledParams { config }
    }
}

impl Params for DecoupledParams {
    type Checked = Decoupled;

    fn check(self) -> Result<Decoupled> {
        check_epsilon(self.config.epsilon, false)?;
        if !(0.0..=MAX_DELTA).contains(&self.config.delta) {
            return Err(Error::invalid(
                "delta",
                format!("must be in [0, {MAX_DELTA}], got {}", self.config.delta),
            ));
        }
        self.config.budget_split()?;
        Ok(Decoupled {
            config: self.config,
        })
    }
}

/// The checked estimator.
///
/// ```
/// use dpfair::estimators::Decoupled;
/// use dpfair::{Estimator, Params, Session};
/// let data = dpfair::estimators::example_data(3_000, 3, 4);
/// let mut session = Session::new(3.0, 1e-5)?;
/// let fitted = Decoupled::params().epsilon(3.0).delta(1e-5).check()?.fit(&data, &mut session)?;
/// let out = fitted.predict(&data, session.noise())?;
/// let path = std::env::temp_dir().join("dpfair-doc-decoupled.json");
/// fitted.save(dpfair::estimators::example_schema(3), &path)?; // `dpfair predict` reads it
/// assert_eq!(dpfair::model::ModelFile::load(&path)?.method, "decoupled");
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Decoupled {
    config: Config,
}

impl Decoupled {
    /// Params with the defaults of [`DecoupledParams`].
    pub fn params() -> DecoupledParams {
        DecoupledParams::default()
    }
}

impl Estimator for Decoupled {
    type Model = Model;
    type Config = Config;

    fn method(&self) -> &'static str {
        "decoupled"
    }

    fn report(&self, fitted: &Fitted<Model>, data: &Dataset) -> Vec<String> {
        let model = &fitted.model;
        let name = |a: usize| {
            data.groups
                .as_ref()
                .and_then(|g| g.names.get(a))
                .map_or("?", String::as_str)
        };
        let mut lines = vec![format!(
            "decoupled: released rates α̃ = {:.4}, β̃ = {:.4}; p_keep = {:.4} (group `{}`), \
             p_flip = {:.4}",
            model.rates.alpha,
            model.rates.beta,
            model.flips.p_keep,
            name(model.flips.down as usize),
            model.flips.p_flip
        )];
        for (a, fell) in model.rates.fallback.iter().enumerate() {
            if *fell {
                lines.push(format!(
                    "decoupled: the released counts of group `{}` are empty: its rate falls back \
                     to {} (recorded in the model)",
                    name(a),
                    crate::decoupled::private_rates::FALLBACK_RATE
                ));
            }
        }
        // The released rates against their Laplace noise: rates within noise of 0 mean a base
        // model that predicts (almost) nothing positive (fixed form, on every fit).
        let rates = [model.rates.alpha, model.rates.beta];
        let noise = std::f64::consts::SQRT_2
            * (model.rates.scales[0].powi(2) + model.rates.scales[1].powi(2)).sqrt();
        lines.push(super::signal_line(
            "positive rates of the base model (α̃, β̃)",
            rates.iter().map(|r| r * r).sum::<f64>().sqrt(),
            noise,
        ));
        let after = [
            model.rates.alpha
                * if model.flips.down == 0 {
                    model.flips.p_keep
                } else {
                    1.0
                }
                + (1.0 - model.rates.alpha)
                    * if model.flips.down == 0 {
                        0.0
                    } else {
                        model.flips.p_flip
                    },
            model.rates.beta
                * if model.flips.down == 1 {
                    model.flips.p_keep
                } else {
                    1.0
                }
                + (1.0 - model.rates.beta)
                    * if model.flips.down == 1 {
                        0.0
                    } else {
                        model.flips.p_flip
                    },
        ];
        lines.push(super::fairness_line(
            "equal positive rates (DD = 0, by randomised flips)",
            &format!(
                "on the released rates the flips give {:.4} and {:.4}: met: {} (the rates on new \
                 data differ from the released ones by their noise and sampling error)",
                after[0],
                after[1],
                (after[0] - after[1]).abs() <= 1e-9
            ),
        ));
        // The row count of a per-group run is a private group size: not printed.
        for r in &model.runs {
            lines.push(format!(
                "DP-SGD: z = {:.4}, q = {:.5}, T = {} steps; ε = {:.4} at δ = {:e}",
                r.noise_multiplier, r.sampling_rate, r.steps, model.sgd_epsilon, self.config.delta
            ));
        }
        lines
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<Decoupled> {
        DecoupledParams::from_config(self.config.clone())
            .epsilon(epsilon)
            .check()
    }

    fn spend(&self, _data: &Dataset) -> Result<Spend> {
        Ok(super::accounted_spend(
            self.config.accounting,
            self.config.epsilon,
            self.config.delta,
        ))
    }

    fn config(&self, _data: &Dataset) -> Config {
        self.config.clone()
    }

    fn fit_with(&self, data: &Dataset, ledger: &mut Ledger, noise: &mut Noise) -> Result<Model> {
        Ok(crate::decoupled::fit(&self.config, data, ledger, noise)?)
    }
}
