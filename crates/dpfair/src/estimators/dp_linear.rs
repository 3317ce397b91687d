//! [`DpLinear`]: differentially private linear (ridge) regression by noisy sufficient
//! statistics (crate `dpfair-learn`, [`dpfair_learn::linear_regression`]): the privacy-only
//! regressor, and the base model fair regression chains after
//! ([`super::FairRegressionParams::base`]).

use super::{check_delta, check_epsilon, setters};
use crate::error::{Error, Result};
use crate::estimator::{Estimator, Fitted, Params};
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_learn::linear_regression::{LinearRegressionConfig, LinearRegressionFit, fit_dp_linear};
use dpfair_privacy::mechanisms::{RANGE_GRID, private_range};
use dpfair_privacy::{Ledger, Noise, Relation};
use serde::Serialize;

/// The default share of ε spent on a private target range ([`DpLinearParams::private_target_range`]).
pub const DEFAULT_TARGET_SHARE: f64 = 0.05;

/// Params of [`DpLinear`]. Defaults: ε = 1, δ = 10⁻⁵, rows clipped to ℓ2 norm R = √(source
/// columns) (no clipping for features on [0, 1]: [`dpfair_data::schema::source_columns`]), the
/// ridge that keeps the noisy XᵀX positive definite with probability 1 − 10⁻³, and the
/// held-out check against the released mean ([`crate::held_out_check`]). The target's range has no default: give it public
/// ([`DpLinearParams::target_range`], free) or have it estimated privately within a coarse
/// public range ([`DpLinearParams::private_target_range`], a share of ε).
#[derive(Clone, Debug)]
pub struct DpLinearParams {
    config: LinearRegressionConfig,
    coarse: Option<[f64; 2]>,
    share: f64,
    check_fraction: f64,
}

setters!(DpLinearParams {
    /// ε of the fit (`inf`: the non-private reference, ordinary least squares).
    epsilon: f64 => config.epsilon;
    /// δ of the fit (the Gaussian mechanism needs δ > 0).
    delta: f64 => config.delta;
    /// Share of ε spent on a private target range (default 0.05).
    target_share: f64 => share;
    /// The share of rows held out for the check against the constant (the fit rows' released
    /// mean; default 0.1, 0 turns it off: [`crate::held_out_check`]).
    check_fraction: f64 => check_fraction;
});

impl DpLinearParams {
    /// The public range `[lo, hi]` the target is clipped to (free).
    pub fn target_range(mut self, lo: f64, hi: f64) -> Self {
        self.config.target_range = Some([lo, hi]);
        self
    }
    /// Estimate the target's range privately (its 1% and 99% quantiles, exponential mechanism
    /// on a grid over the coarse public range `[lo, hi]`), with `target_share` of ε.
    pub fn private_target_range(mut self, lo: f64, hi: f64) -> Self {
        self.coarse = Some([lo, hi]);
        self
    }
    /// R: rows are scaled down to ℓ2 norm at most R (default √(source columns): one per
    /// numeric column and one per one-hot group).
    pub fn row_bound(mut self, r: f64) -> Self {
        self.config.row_bound = Some(r);
        self
    }
    /// λ added to the released XᵀX (default: the noise's spectral bound; docs/privacy.md).
    pub fn ridge(mut self, lambda: f64) -> Self {
        self.config.ridge = Some(lambda);
        self
    }
}

/// The checked estimator (see [`DpLinearParams`]). A model predicts values inside the target
/// range from the features.
///
/// ```
/// use dpfair::estimators::DpLinear;
/// use dpfair::{Estimator, Params, Session};
/// let mut data = dpfair::estimators::example_data(2_000, 2, 1);
/// // A real target: y = 2 x0 − x1 (plus nothing), inside the public range [−1, 2].
/// let y: Vec<f64> = (0..2_000).map(|i| 2.0 * data.features[[i, 0]] - data.features[[i, 1]]).collect();
/// data.target = Some(dpfair::data::Target::Real(y));
/// let mut session = Session::new(1.0, 1e-5)?;
/// let fitted = DpLinear::params().epsilon(1.0).target_range(-1.0, 2.0).check()?.fit(&data, &mut session)?;
/// let out = fitted.predict(&data, session.noise())?;
/// assert!(out.values().unwrap().iter().all(|v| (-1.0..=2.0).contains(v)));
/// let mut schema = dpfair::estimators::example_schema(2);
/// schema.target.as_mut().unwrap().encoding = dpfair::data::TargetEncoding::Real;
/// let path = std::env::temp_dir().join("dpfair-doc-dp-linear.json");
/// fitted.save(schema, &path)?; // `dpfair predict` reads it
/// assert_eq!(dpfair::model::ModelFile::load(&path)?.method, "dp-linear");
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct DpLinear {
    params: DpLinearParams,
}

impl DpLinear {
    /// Params with the defaults of [`DpLinearParams`].
    pub fn params() -> DpLinearParams {
        DpLinearParams {
            config: LinearRegressionConfig::default(),
            coarse: None,
            share: DEFAULT_TARGET_SHARE,
            check_fraction: crate::held_out_check::DEFAULT_FRACTION,
        }
    }
}

impl Params for DpLinearParams {
    type Checked = DpLinear;

    fn check(self) -> Result<DpLinear> {
        check_epsilon(self.config.epsilon, true)?;
        crate::held_out_check::HeldOutCheck {
            fraction: self.check_fraction,
            range: None,
        }
        .check()?;
        if let Some(r) = self.config.ridge {
            super::check_in(
                "ridge",
                r,
                super::Lo::AtLeast(0.0),
                1e12,
                false,
                "a penalty",
            )?;
        }
        super::check_in(
            "target_share",
            self.share,
            super::Lo::Above(0.0),
            1.0,
            true,
            "a share of ε",
        )?;
        match (self.config.target_range, self.coarse) {
            (Some(_), None) => {
                self.config.validate()?;
            }
            (None, Some([lo, hi])) => {
                if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                    return Err(Error::invalid(
                        "private_target_range",
                        format!("must be two finite numbers lo < hi, got [{lo}, {hi}]"),
                    ));
                }
                if !(self.share > 0.0 && self.share < 1.0) {
                    return Err(Error::invalid(
                        "target_share",
                        format!("must be in (0, 1), got {}", self.share),
                    ));
                }
                if self.config.epsilon.is_infinite() {
                    return Err(Error::invalid(
                        "private_target_range",
                        "the non-private reference (ε = inf) takes a public target range",
                    ));
                }
                // Everything but the range, checked with a placeholder range.
                LinearRegressionConfig {
                    target_range: Some([lo, hi]),
                    ..self.config.clone()
                }
                .validate()?;
            }
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    "target_range",
                    "give a public target range or a private one, not both",
                ));
            }
            (None, None) => {
                return Err(Error::invalid(
                    "target_range",
                    "the target's range must be given: public (target_range, free) or a coarse \
                     public range to estimate it in privately (private_target_range)",
                ));
            }
        }
        if self.config.epsilon.is_finite() {
            check_delta(self.config.delta)?;
        }
        Ok(DpLinear { params: self })
    }
}

/// The configuration saved in the model file.
#[derive(Clone, Debug, Serialize)]
pub struct DpLinearConfig {
    #[serde(flatten)]
    pub regression: LinearRegressionConfig,
    /// The coarse public range a private target range was estimated in, and its share of ε.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private_target_range: Option<([f64; 2], f64)>,
}

impl DpLinear {
    /// The learner's settings (with the public target range, when there is one).
    pub fn config(&self) -> &LinearRegressionConfig {
        &self.params.config
    }

    /// Fit on features `x` and real targets `y`: the private target range first when asked
    /// (sequential composition: the regression gets the rest of ε), then the release of the
    /// sufficient statistics.
    pub(crate) fn fit_rows(
        &self,
        x: ndarray::ArrayView2<'_, f64>,
        names: &[String],
        y: &[f64],
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<LinearRegressionFit> {
        let mut config = self.params.config.clone();
        config.row_bound = config
            .row_bound
            .or(Some(crate::inputs::dp_linear_row_bound(names)));
        if let Some([lo, hi]) = self.params.coarse {
            let epsilon = self.params.share * config.epsilon;
            let (a, b) = private_range(ledger, noise, "target range", y, epsilon, (lo, hi))?;
            // A released range of zero width is widened by one grid step (post-processing).
            let b = if b > a {
                b
            } else {
                a + (hi - lo) / RANGE_GRID as f64
            };
            config.target_range = Some([a, b]);
            config.epsilon -= epsilon;
        }
        Ok(fit_dp_linear(&config, x, y, ledger, noise)?)
    }

    /// The report lines of a fitted regression (released quantities and public settings only).
    pub(crate) fn describe(fit: &LinearRegressionFit) -> Vec<String> {
        let [lo, hi] = fit.target_range;
        let p = fit.coef.len() + 1;
        vec![
            format!(
                "DP linear regression: target clipped to [{}, {}], rows to ℓ2 norm R = {:.4}; \
                 sensitivity Δ₂ = {:.4}, σ = {:.4} per released entry; ridge λ = {:.4}{}",
                readable(lo),
                readable(hi),
                fit.row_bound,
                fit.sensitivity,
                fit.sigma,
                fit.ridge,
                if fit.ridge_doublings > 0 {
                    format!(
                        " (doubled {} times to make the released XᵀX + λI positive definite)",
                        fit.ridge_doublings
                    )
                } else {
                    String::new()
                }
            ),
            format!(
                "released Xᵀy: norm {:.4}; the noise alone would give about {:.4} (a norm within \
                 twice that is noise, and the model then likely no better than a constant)",
                fit.released_xty_norm,
                fit.sigma * (p as f64).sqrt()
            ),
        ]
    }
}

fn readable(x: f64) -> String {
    dpfair_privacy::ledger::readable(x)
}

impl Estimator for DpLinear {
    type Model = LinearRegressionFit;
    type Config = DpLinearConfig;

    fn method(&self) -> &'static str {
        "dp-linear"
    }

    fn report(&self, fitted: &Fitted<LinearRegressionFit>, _data: &Dataset) -> Vec<String> {
        Self::describe(&fitted.model)
    }

    fn held_out_check(&self) -> Option<crate::held_out_check::HeldOutCheck> {
        let p = &self.params;
        (p.config.epsilon.is_finite()).then_some(crate::held_out_check::HeldOutCheck {
            fraction: p.check_fraction,
            range: p.config.target_range.or(p.coarse),
        })
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<DpLinear> {
        self.params.clone().epsilon(epsilon).check()
    }

    fn spend(&self, _data: &Dataset) -> Result<Spend> {
        let infinite = self.params.config.epsilon.is_infinite();
        Ok(Spend {
            epsilon: self.params.config.epsilon,
            delta: if infinite {
                0.0
            } else {
                self.params.config.delta
            },
            relation: Relation::Substitution,
        })
    }

    fn config(&self, _data: &Dataset) -> DpLinearConfig {
        DpLinearConfig {
            regression: self.params.config.clone(),
            private_target_range: self.params.coarse.map(|c| (c, self.params.share)),
        }
    }

    fn fit_with(
        &self,
        data: &Dataset,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<LinearRegressionFit> {
        let y = crate::inputs::real_target(data, "dp-linear")?;
        if self.params.config.epsilon.is_infinite() {
            super::charge_reference(ledger)?;
        }
        self.fit_rows(data.features.view(), &data.feature_names, y, ledger, noise)
    }
}

/// `dpfair predict`: values inside the target range from the features.
impl crate::predictor::Predictor for LinearRegressionFit {
    fn method(&self) -> &'static str {
        "dp-linear"
    }

    fn predict(
        &self,
        data: &Dataset,
        _rng: &mut Noise,
    ) -> crate::predictor::Result<crate::predictor::Output> {
        let values = LinearRegressionFit::predict(self, data.features.view()).map_err(|e| {
            crate::predictor::ModelError::Method {
                method: "dp-linear".into(),
                reason: e.to_string(),
            }
        })?;
        Ok(crate::predictor::Output::Values(values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Session;
    use dpfair_data::Target;

    fn data(n: usize) -> Dataset {
        let mut data = super::super::example_data(n, 2, 3);
        let y = (0..n)
            .map(|i| 10.0 + 5.0 * data.features[[i, 0]] - 3.0 * data.features[[i, 1]])
            .collect();
        data.target = Some(Target::Real(y));
        data
    }

    #[test]
    fn a_private_target_range_is_charged_before_the_regression_and_shares_the_budget() {
        let data = data(20_000);
        let est = DpLinear::params()
            .epsilon(1.0)
            .private_target_range(0.0, 50.0)
            .target_share(0.5)
            .check()
            .unwrap();
        let mut session = Session::insecure_seeded(1.0, 1e-5, 4).unwrap();
        let fitted = est.fit(&data, &mut session).unwrap();
        let entries = fitted.ledger.entries();
        // Two quantiles at 0.25 each, then the Gaussian release at the remaining 0.5.
        assert_eq!(entries.len(), 3, "{entries:?}");
        assert!(entries[0].label.starts_with("target range"));
        assert_eq!(
            entries[2].cost,
            dpfair_privacy::Cost::Approx {
                epsilon: 0.5,
                delta: 1e-5
            }
        );
        let total = fitted.ledger.total().unwrap();
        assert!((total.epsilon - 1.0).abs() < 1e-9, "{total:?}");
        // y = 10 + 5x₀ − 3x₁ ∈ [7, 15], its 1% and 99% quantiles near 7.5 and 14.5. Each
        // released quantile is a grid point (step 0.05: about 125 rows per step near the ends,
        // so the best candidate is within 63 ranks) whose rank is within
        // (2/ε_q)·ln(grid/β) = 8·ln(10⁶) ≈ 110 more of the target with probability 1 − β,
        // β = 10⁻³ (McSherry & Talwar's utility bound): within 0.9% of the rows of the 1% (99%)
        // quantile, i.e. lo ≤ the 1.9% quantile (< 8.6) and hi ≥ the 98.1% quantile (> 13.4).
        let [lo, hi] = fitted.model.target_range;
        assert!(
            (6.9..=8.6).contains(&lo) && (13.4..=15.1).contains(&hi),
            "{lo} {hi}"
        );
    }

    #[test]
    fn params_are_checked_before_any_data() {
        let range_err = DpLinear::params().check().unwrap_err().to_string();
        assert!(range_err.contains("target_range"), "{range_err}");
        let both = DpLinear::params()
            .target_range(0.0, 1.0)
            .private_target_range(0.0, 1.0)
            .check()
            .unwrap_err();
        assert!(both.to_string().contains("not both"), "{both}");
        let share = DpLinear::params()
            .private_target_range(0.0, 1.0)
            .target_share(1.0)
            .check()
            .unwrap_err();
        assert!(share.to_string().contains("target_share"), "{share}");
        assert!(
            DpLinear::params()
                .target_range(0.0, 1.0)
                .delta(0.0)
                .check()
                .is_err()
        );
        // A class target is refused, naming what to use instead.
        let est = DpLinear::params().target_range(0.0, 1.0).check().unwrap();
        let mut session = Session::insecure_seeded(1.0, 1e-5, 1).unwrap();
        let e = est
            .fit(&super::super::example_data(100, 2, 1), &mut session)
            .unwrap_err();
        assert!(e.to_string().contains("dp-logistic"), "{e}");
    }
}
