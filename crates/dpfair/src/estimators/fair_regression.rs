//! [`FairRegression`]: private post-processing of regression scores for statistical parity via
//! Wasserstein barycenters (Xian, Li, Kamath, Zhao; [`crate::fair_regression`]). It takes
//! scores (a feature column, or the real target itself), not raw features: chain it after a
//! regressor.

use super::{check_level, setters};
use crate::error::Result;
use crate::estimator::{Estimator, Fitted, Params};
use crate::fair_regression::{Config, Model};
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise, Relation};

/// Params of [`FairRegression`]: α = 0 (exact statistical parity), ε = 1, k = 36 bins. The
/// public score interval `[s, t]` has no default and must be given ([`FairRegressionParams::range`]).
#[derive(Clone, Debug, Default)]
pub struct FairRegressionParams {
    config: Config,
}

setters!(FairRegressionParams {
    /// The fairness tolerance α ≥ 0 in Kolmogorov–Smirnov distance.
    alpha: f64 => config.alpha;
    /// ε of the fit (pure DP; `inf` for the non-private reference).
    epsilon: f64 => config.epsilon;
    /// The number of bins k.
    bins: usize => config.bins;
});

impl FairRegressionParams {
    /// The public interval `[s, t]` holding the scores (never the data's own min/max).
    pub fn range(mut self, lo: f64, hi: f64) -> Self {
        self.config.range = Some([lo, hi]);
        self
    }
    /// The feature column holding the scores (default: the real target).
    pub fn score_column(mut self, column: impl Into<String>) -> Self {
        self.config.score_column = Some(column.into());
        self
    }
    /// The public group set, in code order (default: the data's levels).
    pub fn groups(mut self, groups: Vec<String>) -> Self {
        self.config.groups = Some(groups);
        self
    }
    /// Params from a whole configuration.
    pub fn from_config(config: Config) -> Self {
        FairRegressionParams { config }
    }
}

impl Params for FairRegressionParams {
    type Checked = FairRegression;

    fn check(self) -> Result<FairRegression> {
        check_level("alpha", self.config.alpha)?;
        self.config.validate()?;
        Ok(FairRegression {
            config: self.config,
        })
    }
}

/// The checked estimator. A model predicts from the score column (or target) and the group.
///
/// ```
/// use dpfair::estimators::FairRegression;
/// use dpfair::{Estimator, Params, Session};
/// use dpfair::data::Target;
/// let mut data = dpfair::estimators::example_data(2_000, 1, 2);
/// // Scores: here the one feature, shifted by group, as a regressor's output would be.
/// let scores: Vec<f64> = (0..data.n_rows())
///     .map(|i| data.features[[i, 0]] + 0.3 * f64::from(data.groups.as_ref().unwrap().codes[i]))
///     .collect();
/// data.target = Some(Target::Real(scores));
/// let mut session = Session::new(1.0, 0.0)?;
/// let est = FairRegression::params().alpha(0.05).epsilon(1.0).range(0.0, 1.3).bins(20).check()?;
/// let fitted = est.fit(&data, &mut session)?;
/// let out = fitted.predict(&data, session.noise())?;
/// assert!(matches!(out, dpfair::model::Output::Values(_)));
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FairRegression {
    config: Config,
}

impl FairRegression {
    /// Params with the defaults of [`FairRegressionParams`].
    pub fn params() -> FairRegressionParams {
        FairRegressionParams::default()
    }
}

impl Estimator for FairRegression {
    type Model = Model;
    type Config = Config;

    fn method(&self) -> &'static str {
        "fair-regression"
    }

    fn report(&self, fitted: &Fitted<Model>, _data: &Dataset) -> Vec<String> {
        let model = &fitted.model;
        let mut lines = Vec::new();
        if !model.near_empty_groups.is_empty() {
            lines.push(format!(
                "warning: groups {:?} have (near-)zero private weight (absent or tiny): their \
                 weight was floored at {} and their transports rest on noise",
                model.near_empty_groups, self.config.weight_floor
            ));
        }
        lines.push(format!(
            "fair regression: {} groups, k = {}, α = {}, ε = {}; LP value {:.6e} (value units), \
             targets' max pairwise KS {:.4} ({:?})",
            model.group_names.len(),
            model.grid.k,
            model.alpha,
            model.epsilon,
            model.lp_value,
            crate::fair_regression::transport::max_pairwise_ks(&model.targets),
            model.solved_by
        ));
        lines
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<FairRegression> {
        FairRegressionParams::from_config(self.config.clone())
            .epsilon(epsilon)
            .check()
    }

    fn spend(&self, _data: &Dataset) -> Result<Spend> {
        Ok(Spend {
            epsilon: self.config.epsilon,
            delta: 0.0,
            relation: Relation::Substitution,
        })
    }

    fn config(&self, _data: &Dataset) -> Config {
        self.config.clone()
    }

    fn fit_with(&self, data: &Dataset, ledger: &mut Ledger, noise: &mut Noise) -> Result<Model> {
        if self.config.epsilon.is_infinite() {
            super::charge_reference(ledger)?;
        }
        Ok(crate::fair_regression::fit(
            &self.config,
            data,
            ledger,
            noise,
        )?)
    }
}
