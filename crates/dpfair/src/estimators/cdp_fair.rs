//! [`CdpFair`]: CDP-Fair, the central-DP fair plug-in classifier under demographic disparity
//! (Xue & Yu, Algorithm 5; [`crate::cdp_fair`]), and [`CdpFairBaseline`], its three reference
//! classifiers (privacy only, fairness only, neither).

use super::{check_delta, check_epsilon, check_level, setters};
use crate::cdp_fair::{Accounting, Config, DdFloor, Model};
use crate::error::Result;
use crate::estimator::{Estimator, Fitted, Params};
use crate::group_thresholds::{Constraint, OrThresholds, takes_over};
use crate::held_out_check::HeldOutCheck;
use crate::plugin::EtaModel;
use crate::plugin::kernel::Bandwidth;
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise};

/// Params of [`CdpFair`]: [`crate::cdp_fair::Config`]'s defaults (α = 0.1, ε = 1,
/// δ = (N/2)⁻², strict accounting, a public bandwidth rule, 1,024 random frequencies), except
/// the estimator of `η_a`: [`EtaModel::Auto`] (the DP-SGD plug-in on all rows under strict
/// accounting; the library's `Config` keeps the paper's kernel). Features must be on
/// `[0, 1]^d` (scale them with public bounds first).
#[derive(Clone, Debug)]
pub struct CdpFairParams {
    config: Config,
    check: HeldOutCheck,
    constraint: Constraint,
    attribute_epsilon: Option<f64>,
}

impl Default for CdpFairParams {
    fn default() -> Self {
        CdpFairParams {
            config: Config {
                eta_model: EtaModel::Auto,
                ..Config::default()
            },
            check: HeldOutCheck::default(),
            constraint: Constraint::DemographicParity,
            attribute_epsilon: None,
        }
    }
}

setters!(CdpFairParams {
    /// The disparity level α ≥ 0: the classifier targets |DD| ≤ α.
    alpha: f64 => config.alpha;
    /// ε of the fit.
    epsilon: f64 => config.epsilon;
    /// Strict (default) or the paper's procedure, whose ledger records what it really spends.
    accounting: Accounting => config.accounting;
    /// Number of random frequencies `D` of the public basis.
    frequencies: usize => config.n_frequencies;
    /// Number of public candidate thresholds of the private threshold choice (odd, ≥ 3).
    tau_grid: usize => config.tau_grid;
    /// The floor on the calibration group sizes behind the disparity curve's sensitivity.
    dd_floor: DdFloor => config.dd_floor;
    /// The estimator of `η_a`: kernel, logistic or auto (`docs/choosing.md`).
    eta_model: EtaModel => config.eta_model;
    /// The share of rows held out for the check against the constant classes (default 0.1; 0
    /// turns it off; strict accounting only: [`crate::held_out_check`]).
    check_fraction: f64 => check.fraction;
    /// The constraint at level α: demographic parity (default, Algorithm 5); equal opportunity
    /// or equalized odds, and any constraint on more than two groups, fit the group-thresholds
    /// classifier in Algorithm 5's place (docs/fairness-constraints.md).
    constraint: Constraint => constraint;
});

impl CdpFairParams {
    /// δ of the fit (default `(N/2)⁻²`, the paper's choice).
    pub fn delta(mut self, delta: f64) -> Self {
        self.config.delta = Some(delta);
        self
    }
    /// A fixed kernel bandwidth `h` (default: the public rule).
    pub fn bandwidth(mut self, h: f64) -> Self {
        self.config.bandwidth = Some(Bandwidth::Fixed { h });
        self
    }
    /// Cross-fitting (default off in strict mode, on in paper mode).
    pub fn cross_fit(mut self, on: bool) -> Self {
        self.config.cross_fit = Some(on);
        self
    }
    /// The sensitive column holds groups randomised by K-ary randomised response at
    /// `epsilon_a`: the group-thresholds classifier is fitted in the method's place, its
    /// thresholds chosen from the table corrected by the flip matrix
    /// (docs/fairness-constraints.md).
    pub fn attribute_epsilon(self, epsilon_a: f64) -> Self {
        self.attribute_epsilon_opt(Some(epsilon_a))
    }
    fn attribute_epsilon_opt(mut self, epsilon_a: Option<f64>) -> Self {
        self.attribute_epsilon = epsilon_a;
        self
    }
    /// Params from a whole configuration.
    pub fn from_config(config: Config) -> Self {
        CdpFairParams {
            config,
            ..CdpFairParams::default()
        }
    }
}

/// Checks shared by CDP-Fair and its baselines: the method's own validation, and ε = ∞ only
/// for the non-private baselines.
fn check_config(config: &Config, allow_infinite: bool) -> Result<()> {
    check_level("alpha", config.alpha)?;
    check_eta_model(config.eta_model, config.accounting)?;
    check_epsilon(config.epsilon, allow_infinite)?;
    if let Some(delta) = config.delta {
        check_delta(delta)?;
    }
    let finite = Config {
        epsilon: if config.epsilon.is_finite() {
            config.epsilon
        } else {
            1.0
        },
        ..config.clone()
    };
    Ok(finite.validate()?)
}

impl Params for CdpFairParams {
    type Checked = CdpFair;

    fn check(self) -> Result<CdpFair> {
        check_config(&self.config, false)?;
        self.check.check()?;
        if let Some(e) = self.attribute_epsilon {
            crate::group_thresholds::check_attribute_epsilon(e)?;
        }
        super::group_thresholds::check_paper_constraint(
            self.constraint,
            self.config.accounting,
            "demographic parity",
            "",
        )?;
        Ok(CdpFair {
            config: self.config,
            check: self.check,
            constraint: self.constraint,
            attribute_epsilon: self.attribute_epsilon,
        })
    }
}

/// The checked CDP-Fair estimator.
///
/// ```
/// use dpfair::estimators::CdpFair;
/// use dpfair::{Estimator, Params, Session};
/// let data = dpfair::estimators::example_data(2_000, 2, 1);
/// let mut session = Session::new(1.0, 1e-5)?;
/// let est = CdpFair::params().alpha(0.1).epsilon(1.0).delta(1e-6).frequencies(64).check()?;
/// let fitted = est.fit(&data, &mut session)?;
/// let out = fitted.predict(&data, session.noise())?;
/// let path = std::env::temp_dir().join("dpfair-doc-cdp-fair.json");
/// fitted.save(dpfair::estimators::example_schema(2), &path)?; // `dpfair predict` reads it
/// assert_eq!(dpfair::model::ModelFile::load(&path)?.method, "cdp-fair");
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CdpFair {
    config: Config,
    check: HeldOutCheck,
    constraint: Constraint,
    attribute_epsilon: Option<f64>,
}

impl CdpFair {
    /// Params with the defaults of [`CdpFairParams`].
    pub fn params() -> CdpFairParams {
        CdpFairParams::default()
    }

    /// The configuration as it will be used on `n` rows (δ resolved).
    pub fn config_for(&self, n: usize) -> Config {
        Config {
            delta: Some(self.config.delta.unwrap_or_else(|| default_delta(n))),
            ..self.config.clone()
        }
    }
}

/// `δ = (N/2)⁻²`, the paper's choice, capped at 0.5.
pub fn default_delta(n: usize) -> f64 {
    (n as f64 / 2.0).powi(-2).min(0.5)
}

/// The logistic and DP-SGD plug-ins have no paper procedure: refused with `--accounting
/// paper`.
pub(crate) fn check_eta_model(eta_model: EtaModel, accounting: Accounting) -> Result<()> {
    let name = match eta_model {
        EtaModel::Logistic => "logistic",
        EtaModel::DpSgd => "DP-SGD",
        EtaModel::Kernel | EtaModel::Auto => return Ok(()),
    };
    if accounting == Accounting::Paper {
        return Err(crate::error::Error::invalid(
            "eta_model",
            format!(
                "the {name} plug-in has no paper procedure (the paper uses the kernel \
                 estimator): use strict accounting, or the kernel"
            ),
        ));
    }
    Ok(())
}

/// The spend of a plug-in fit (see [`super::accounted_spend`]).
fn plugin_spend(config: &Config) -> Spend {
    super::accounted_spend(
        config.accounting,
        config.epsilon,
        config.delta.unwrap_or(0.0),
    )
}

impl Estimator for CdpFair {
    type Model = OrThresholds<Model>;
    type Config = Config;

    fn method(&self) -> &'static str {
        "cdp-fair"
    }

    fn report(&self, fitted: &Fitted<OrThresholds<Model>>, data: &Dataset) -> Vec<String> {
        let model = match &fitted.model {
            OrThresholds::Method(m) => m,
            OrThresholds::Thresholds(m) => return super::group_thresholds::report(m),
        };
        let mut lines = plugin_report(model);
        let config = self.config_for(data.n_rows());
        let accuracy: Vec<String> = model
            .folds
            .iter()
            .enumerate()
            .map(|(k, f)| {
                match crate::cdp_fair::s2_accuracy(&config, data.n_rows(), k, &f.estimate, 0.05) {
                    Ok(Some(u)) => format!("{u:.4}"),
                    _ => "-".into(),
                }
            })
            .collect();
        lines.push(super::fairness_line(
            &format!("|DD| ≤ α = {}", model.alpha),
            &format!(
                "no private estimate of the disparity is released (S2 releases τ̃ only); with \
                 probability 0.95 the private choice of τ̃ keeps the {} |DD| within {} of α \
                 (exponential-mechanism bound, per fold; '-' under the paper's accounting, which \
                 has none), plus the gap between those rows and new data",
                if model.folds.iter().any(|f| f.estimate.is_all_rows()) {
                    "training rows'"
                } else {
                    "calibration half's"
                },
                accuracy.join(", ")
            ),
        ));
        lines
    }

    fn held_out_check(&self) -> Option<HeldOutCheck> {
        (self.config.accounting == Accounting::Strict).then_some(self.check)
    }

    fn resolved_for(&self, data: &Dataset) -> Option<CdpFair> {
        Some(CdpFair {
            config: self.config_for(data.n_rows()),
            ..self.clone()
        })
    }

    /// α for demographic parity, which a private search verifies; `None` for the other
    /// constraints (the search's check reads positive rates only).
    fn fairness_target(&self) -> Option<f64> {
        (self.constraint == Constraint::DemographicParity).then_some(self.config.alpha)
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<CdpFair> {
        CdpFairParams::from_config(Config {
            epsilon,
            ..self.config.clone()
        })
        .check_fraction(self.check.fraction)
        .constraint(self.constraint)
        .attribute_epsilon_opt(self.attribute_epsilon)
        .check()
    }

    fn spend(&self, data: &Dataset) -> Result<Spend> {
        Ok(plugin_spend(&self.config_for(data.n_rows())))
    }

    fn config(&self, data: &Dataset) -> Config {
        self.config_for(data.n_rows())
    }

    /// Algorithm 5 on two groups under demographic parity; otherwise the group-thresholds
    /// classifier at α and the fit's (ε, δ) ([`crate::group_thresholds::takes_over`]).
    fn fit_with(
        &self,
        data: &Dataset,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<OrThresholds<Model>> {
        let config = self.config_for(data.n_rows());
        if !takes_over(data, self.constraint, self.attribute_epsilon) {
            return Ok(OrThresholds::Method(crate::cdp_fair::fit(
                &config, data, ledger, noise,
            )?));
        }
        if config.accounting == Accounting::Paper {
            return Err(crate::error::Error::invalid(
                "accounting",
                "the paper's procedure is for two groups and an attribute as given: use strict \
                 accounting (the group-thresholds classifier) for more groups or a \
                 randomised attribute",
            ));
        }
        let thresholds = crate::group_thresholds::Config {
            constraint: self.constraint,
            level: config.alpha,
            epsilon: config.epsilon,
            delta: config.delta.unwrap_or_else(|| default_delta(data.n_rows())),
            attribute_epsilon: self.attribute_epsilon,
            ..crate::group_thresholds::Config::default()
        };
        Ok(OrThresholds::Thresholds(crate::group_thresholds::fit(
            &thresholds,
            data,
            ledger,
            noise,
        )?))
    }
}

/// Two lines per fold: the estimator of `η_a`, the released group proportions and threshold;
/// the released signal against its noise (fixed form, [`super::signal_line`]).
pub(crate) fn plugin_report(model: &Model) -> Vec<String> {
    let method = crate::predictor::Predictor::method(model);
    let mut lines = Vec::new();
    for (k, f) in model.folds.iter().enumerate() {
        lines.push(format!(
            "{method} fold {}: {}; π̃ = ({:.4}, {:.4}), τ̃ = {:.5}",
            k + 1,
            f.estimate.describe(),
            f.estimate.pi[0],
            f.estimate.pi[1],
            f.rule.tau
        ));
        let (norm, noise, p) = f.estimate.signal_and_noise();
        let what = match f.estimate.kernel() {
            Some(_) => "η̃ numerator coefficients",
            None => "η̃ weights (all but the intercept)",
        };
        lines.push(super::signal_line(what, norm, noise, p));
    }
    lines
}

/// The reference classifiers of Xue & Yu's experiments (§5.2), on CDP-Fair's plug-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// S1 only, threshold 1/2: privacy without fairness ("CDP NF").
    PrivacyOnly,
    /// Algorithm 5 without noise: fairness without privacy ("NDP F"; ε = ∞ in its ledger).
    FairnessOnly,
    /// The group-wise plug-in at 1/2: neither ("NDP NF"; ε = ∞ in its ledger).
    Unconstrained,
}

/// Params of [`CdpFairBaseline`]: the baseline and CDP-Fair's params.
#[derive(Clone, Debug)]
pub struct CdpFairBaselineParams {
    baseline: Baseline,
    params: CdpFairParams,
}

impl CdpFairBaselineParams {
    /// CDP-Fair's params (α, ε, bandwidth …) the baseline shares.
    pub fn with(mut self, params: CdpFairParams) -> Self {
        self.params = params;
        self
    }
}

impl Params for CdpFairBaselineParams {
    type Checked = CdpFairBaseline;

    fn check(self) -> Result<CdpFairBaseline> {
        check_config(&self.params.config, self.baseline != Baseline::PrivacyOnly)?;
        Ok(CdpFairBaseline {
            baseline: self.baseline,
            config: self.params.config,
        })
    }
}

/// A checked baseline of CDP-Fair. The non-private ones spend `ε = ∞`, so they need
/// [`crate::Session::unlimited`].
///
/// ```
/// use dpfair::estimators::{CdpFairBaseline, Baseline};
/// use dpfair::{Estimator, Params, Session};
/// let data = dpfair::estimators::example_data(1_000, 2, 3);
/// let mut session = Session::unlimited();
/// let fitted = CdpFairBaseline::params(Baseline::Unconstrained).check()?.fit(&data, &mut session)?;
/// assert!(fitted.ledger.total()?.epsilon.is_infinite());
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CdpFairBaseline {
    baseline: Baseline,
    config: Config,
}

impl CdpFairBaseline {
    /// Params of `baseline` with CDP-Fair's defaults.
    pub fn params(baseline: Baseline) -> CdpFairBaselineParams {
        CdpFairBaselineParams {
            baseline,
            params: CdpFairParams::default(),
        }
    }
}

impl Estimator for CdpFairBaseline {
    type Model = Model;
    type Config = Config;

    fn method(&self) -> &'static str {
        "cdp-fair"
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<CdpFairBaseline> {
        CdpFairBaseline::params(self.baseline)
            .with(CdpFairParams::from_config(Config {
                epsilon,
                ..self.config.clone()
            }))
            .check()
    }

    fn spend(&self, data: &Dataset) -> Result<Spend> {
        let config = self.config(data);
        Ok(match self.baseline {
            Baseline::PrivacyOnly => plugin_spend(&config),
            Baseline::FairnessOnly | Baseline::Unconstrained => Spend {
                epsilon: f64::INFINITY,
                ..plugin_spend(&config)
            },
        })
    }

    fn config(&self, data: &Dataset) -> Config {
        Config {
            delta: Some(
                self.config
                    .delta
                    .unwrap_or_else(|| default_delta(data.n_rows())),
            ),
            ..self.config.clone()
        }
    }

    fn fit_with(&self, data: &Dataset, ledger: &mut Ledger, noise: &mut Noise) -> Result<Model> {
        let config = self.config(data);
        Ok(match self.baseline {
            Baseline::PrivacyOnly => {
                crate::cdp_fair::fit_privacy_only(&config, data, ledger, noise)?
            }
            Baseline::FairnessOnly => {
                crate::cdp_fair::fit_fairness_only(&config, data, ledger, noise)?
            }
            Baseline::Unconstrained => {
                crate::cdp_fair::fit_unconstrained(&config, data, ledger, noise)?
            }
        })
    }
}
