//! [`FairRegression`]: private post-processing of regression scores for statistical parity via
//! Wasserstein barycenters (Xian, Li, Kamath, Zhao; [`crate::fair_regression`]). It takes
//! scores (a feature column, or the real target itself), or, with a base regressor
//! ([`FairRegressionParams::base`]), fits a private linear regressor on part of the rows and
//! post-processes its predictions, so that the model predicts from features.

use super::{check_level, setters};
use crate::error::Result;
use crate::estimator::{Estimator, Fitted, Params};
use crate::fair_regression::{Config, LinearBase, Model};
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise, Relation};

/// Params of [`FairRegression`]: α = 0 (exact statistical parity), ε = 1, k = 36 bins. The
/// public score interval `[s, t]` has no default and must be given ([`FairRegressionParams::range`]).
#[derive(Clone, Debug, Default)]
pub struct FairRegressionParams {
    config: Config,
    check_fraction: Option<f64>,
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
    /// With a base regressor: the share of rows held out for the check against the constant
    /// (the fit rows' released mean; default 0.1, 0 turns it off:
    /// [`crate::held_out_check`]).
    pub fn check_fraction(mut self, fraction: f64) -> Self {
        self.check_fraction = Some(fraction);
        self
    }
}

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
    /// Chain after a private linear regressor ([`LinearBase`]; `--base dp-linear`): it is fitted
    /// on `base.fraction` of a public random split of the rows, with the target clipped to the
    /// public range, and its predictions on the other rows are post-processed. The two parts
    /// compose in parallel: the fit is (ε, δ)-DP, δ the base's.
    pub fn base(mut self, base: LinearBase) -> Self {
        self.config.base = Some(base);
        self
    }
    /// Params from a whole configuration.
    pub fn from_config(config: Config) -> Self {
        FairRegressionParams {
            config,
            check_fraction: None,
        }
    }
}

impl Params for FairRegressionParams {
    type Checked = FairRegression;

    fn check(self) -> Result<FairRegression> {
        check_level("alpha", self.config.alpha)?;
        super::check_epsilon(self.config.epsilon, true)?;
        self.config.validate()?;
        let check = crate::held_out_check::HeldOutCheck {
            fraction: self
                .check_fraction
                .unwrap_or(crate::held_out_check::DEFAULT_FRACTION),
            range: self.config.range,
        };
        check.check()?;
        Ok(FairRegression {
            config: self.config,
            check,
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
/// let mut schema = dpfair::estimators::example_schema(1);
/// schema.target.as_mut().unwrap().encoding = dpfair::data::TargetEncoding::Real;
/// fitted.save(schema, std::env::temp_dir().join("dpfair-doc-fair-regression.json"))?;
///
/// // From features: a private linear regressor on half the rows, then the post-processor.
/// let mut data = dpfair::estimators::example_data(4_000, 2, 3);
/// let codes = data.groups.as_ref().unwrap().codes.clone();
/// let y: Vec<f64> = (0..data.n_rows())
///     .map(|i| data.features[[i, 0]] + 0.3 * f64::from(codes[i]))
///     .collect();
/// data.target = Some(Target::Real(y));
/// let est = FairRegression::params()
///     .alpha(0.05)
///     .range(0.0, 1.3)
///     .bins(20)
///     .base(dpfair::fair_regression::LinearBase::default())
///     .check()?;
/// let mut session = Session::new(1.0, 1e-5)?;
/// let fitted = est.fit(&data, &mut session)?;
/// assert!(fitted.model.base.is_some());
/// let out = fitted.predict(&data, session.noise())?; // no score column needed
/// assert_eq!(out.values().unwrap().len(), 4_000);
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FairRegression {
    config: Config,
    check: crate::held_out_check::HeldOutCheck,
}

impl FairRegression {
    /// Params with the defaults of [`FairRegressionParams`].
    pub fn params() -> FairRegressionParams {
        FairRegressionParams::default()
    }

    /// Whether the post-processor reads scores directly (no base regressor): the scores are
    /// clipped to the public range and need no feature scaling, so a front end passes
    /// [`crate::pipeline::Scaling::None`] (as `dpfair fit fair-regression --scores` does) and
    /// spends nothing on private bounds.
    ///
    /// ```
    /// use dpfair::estimators::FairRegression;
    /// use dpfair::Params;
    /// assert!(FairRegression::params().range(0.0, 1.0).check()?.on_scores());
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn on_scores(&self) -> bool {
        self.config.base.is_none()
    }

    /// [`Estimator::fit`] from batches of rows, for data larger than memory (a score column or
    /// the target as scores; not with a base regressor): `header` has the columns and group
    /// names and may have no rows, `feed` hands every batch to the sink it is given
    /// ([`crate::fair_regression::fit_batches`]). The same release, ledger and model as a fit on
    /// all the rows at once.
    pub fn fit_batches(
        &self,
        header: &Dataset,
        session: &mut crate::Session,
        feed: impl FnOnce(
            &mut dyn FnMut(&Dataset) -> crate::fair_regression::Result<()>,
        ) -> crate::fair_regression::Result<()>,
    ) -> Result<Fitted<Model>> {
        self.release_in(header, session, |ledger, noise| {
            crate::fair_regression::fit_batches(&self.config, header, ledger, noise, feed)
        })
    }

    /// [`Estimator::fit`] from joint counts accumulated and merged elsewhere (a distributed
    /// engine's parts; [`crate::fair_regression::fit_counts`]): the counts are released once,
    /// in `session`, and the model is the one a fit on all the rows at once gives with the same
    /// noise stream. `header` has the score column and the group names and may have no rows.
    pub fn fit_counts(
        &self,
        header: &Dataset,
        session: &mut crate::Session,
        counts: &crate::fair_regression::histogram::JointCounts,
    ) -> Result<Fitted<Model>> {
        self.release_in(header, session, |ledger, noise| {
            crate::fair_regression::fit_counts(&self.config, header, counts, ledger, noise)
        })
    }

    /// Runs `fit` (which releases the counts once) in `session` over the declared spend.
    fn release_in(
        &self,
        header: &Dataset,
        session: &mut crate::Session,
        fit: impl FnOnce(&mut Ledger, &mut Noise) -> crate::fair_regression::Result<Model>,
    ) -> Result<Fitted<Model>> {
        let spend = self.spend(header)?;
        let (model, ledger) = session.run(spend, |ledger, noise| {
            if self.config.epsilon.is_infinite() {
                super::charge_reference(ledger)?;
            }
            Ok(fit(ledger, noise)?)
        })?;
        Ok(Fitted {
            model,
            ledger,
            config: crate::estimator::config_json(self, header)?,
            check: None,
            rows: header.n_rows(),
        })
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
        if let (Some(base), Some(fit)) = (&self.config.base, &model.base) {
            // The share, not the row counts: after rows with missing values are dropped, the
            // number of rows is private.
            lines.push(format!(
                "base regressor: dp-linear on {} of the rows, the post-processor on the others \
                 (a public random split: parallel composition, each part gets the whole budget)",
                dpfair_privacy::ledger::readable(base.fraction)
            ));
            lines.extend(super::DpLinear::describe(fit));
        }
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
            dpfair_privacy::ledger::readable(model.alpha),
            dpfair_privacy::ledger::readable(model.epsilon),
            model.lp_value,
            crate::fair_regression::transport::max_pairwise_ks(&model.targets),
            model.solved_by
        ));
        lines
    }

    fn held_out_check(&self) -> Option<crate::held_out_check::HeldOutCheck> {
        (self.config.base.is_some() && self.config.epsilon.is_finite()).then_some(self.check)
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<FairRegression> {
        FairRegressionParams::from_config(self.config.clone())
            .epsilon(epsilon)
            .check_fraction(self.check.fraction)
            .check()
    }

    fn spend(&self, _data: &Dataset) -> Result<Spend> {
        let delta = match &self.config.base {
            Some(base) if self.config.epsilon.is_finite() => base.delta,
            _ => 0.0,
        };
        Ok(Spend {
            epsilon: self.config.epsilon,
            delta,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Session;
    use crate::fair_regression::transport::max_pairwise_ks;
    use dpfair_data::Target;

    /// Two groups, y = x₀ + 0.4·g + small noise on [0, 1.5]: the groups' outputs differ by 0.4.
    fn data(n: usize) -> Dataset {
        let mut data = crate::estimators::example_data(n, 2, 8);
        let codes = data.groups.as_ref().unwrap().codes.clone();
        let y = (0..n)
            .map(|i| {
                data.features[[i, 0]] + 0.4 * f64::from(codes[i]) + 0.05 * data.features[[i, 1]]
            })
            .collect();
        data.target = Some(Target::Real(y));
        data
    }

    fn chained(alpha: f64) -> FairRegression {
        FairRegression::params()
            .alpha(alpha)
            .epsilon(1.0)
            .range(0.0, 1.5)
            .bins(30)
            .base(LinearBase::default())
            .check()
            .unwrap()
    }

    #[test]
    fn the_base_and_the_post_processor_compose_in_parallel() {
        let data = data(4_000);
        let mut session = Session::insecure_seeded(1.0, 1e-5, 2).unwrap();
        let fitted = chained(0.0).fit(&data, &mut session).unwrap();
        let entries = fitted.ledger.entries();
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert!(
            entries
                .iter()
                .all(|e| matches!(e.composition, dpfair_privacy::Composition::Parallel { .. }))
        );
        // Parallel composition: the worst part, (1, 1e-5), not the sum (2, 1e-5).
        let total = fitted.ledger.total().unwrap();
        assert!((total.epsilon - 1.0).abs() < 1e-9, "{total:?}");
        assert!((total.delta - 1e-5).abs() < 1e-12, "{total:?}");
        // The session accepted exactly its budget: a second fit is refused before any noise.
        assert!(matches!(
            chained(0.0).fit(&data, &mut session),
            Err(crate::Error::BudgetExceeded(_))
        ));
    }

    #[test]
    fn predicts_new_rows_from_features_with_parity_and_a_useful_error() {
        let train = data(20_000);
        let test = {
            let mut d = crate::estimators::example_data(4_000, 2, 99);
            let codes = d.groups.as_ref().unwrap().codes.clone();
            let y = (0..4_000)
                .map(|i| d.features[[i, 0]] + 0.4 * f64::from(codes[i]) + 0.05 * d.features[[i, 1]])
                .collect();
            d.target = Some(Target::Real(y));
            d
        };
        let mut session = Session::insecure_seeded(1.0, 1e-5, 5).unwrap();
        let fitted = chained(0.0).fit(&train, &mut session).unwrap();
        let mut rng = dpfair_privacy::Noise::seeded(1);
        let out = fitted.predict(&test, &mut rng).unwrap();
        let pred = out.values().unwrap();
        let codes = &test.groups.as_ref().unwrap().codes;
        // Statistical parity in KS distance on new rows: each group's empirical output CDF over
        // the 30 bins. α = 0 targets equal laws; what remains is the Laplace noise of the
        // histogram (10,000 rows, ε = 1: a few percent of mass) and the two groups' sampling
        // error on 4,000 test rows (DKW at β = 10⁻³: √(ln(2/β)/(2 n_g)) ≈ 0.04 per group with
        // n_g ≈ 1,600).
        let k = 30;
        let bin = |v: f64| ((v / 1.5 * k as f64) as usize).min(k - 1);
        let mut pmf = vec![vec![0.0; k]; 2];
        for (v, &g) in pred.iter().zip(codes) {
            pmf[g as usize][bin(*v)] += 1.0;
        }
        for p in &mut pmf {
            let s: f64 = p.iter().sum();
            p.iter_mut().for_each(|x| *x /= s);
        }
        let ks = max_pairwise_ks(&pmf);
        assert!(ks < 0.15, "KS {ks}");
        // Without the fairness step the groups differ by 0.4 of the value range: KS about 0.4.
        let y = match &test.target {
            Some(Target::Real(y)) => y,
            _ => unreachable!(),
        };
        let mse: f64 = pred
            .iter()
            .zip(y)
            .map(|(p, t)| (p - t).powi(2))
            .sum::<f64>()
            / 4_000.0;
        let mean = y.iter().sum::<f64>() / 4_000.0;
        let var: f64 = y.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / 4_000.0;
        // Parity costs the group gap (0.4 split between the groups: at most 0.2² = 0.04 per
        // row), the binning (width 0.05: 0.05²/12) and the noise: below half the constant
        // predictor's MSE (the variance, about 1/12 + 0.4²·0.24 ≈ 0.12).
        assert!(mse < 0.5 * var, "MSE {mse} vs constant {var}");
    }

    #[test]
    fn a_base_and_a_score_column_are_refused_together() {
        let e = FairRegression::params()
            .range(0.0, 1.0)
            .score_column("s")
            .base(LinearBase::default())
            .check()
            .unwrap_err();
        assert!(e.to_string().contains("score_column"), "{e}");
        let e = FairRegression::params()
            .range(0.0, 1.0)
            .base(LinearBase {
                fraction: 1.0,
                ..LinearBase::default()
            })
            .check()
            .unwrap_err();
        assert!(e.to_string().contains("base_fraction"), "{e}");
    }
}
