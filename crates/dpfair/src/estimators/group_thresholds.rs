//! [`GroupThresholds`]: the group-thresholds classifier ([`crate::group_thresholds`]): K groups,
//! demographic parity, equal opportunity or equalized odds.

use super::{check_delta, setters};
use crate::error::Result;
use crate::estimator::{Estimator, Fitted, Params};
use crate::group_thresholds::{Config, Constraint, Model, check, fit};
use crate::held_out_check::HeldOutCheck;
use crate::predictor::Accounting;
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise};

/// Params of [`GroupThresholds`]: demographic parity at level 0.1, ε = 1, δ = (N/2)⁻² (as
/// CDP-Fair), a quarter of ε on the table, 10 score bins, DP-SGD at `dp-logistic`'s settings,
/// the held-out check on 10 % of the rows.
#[derive(Clone, Debug, Default)]
pub struct GroupThresholdsParams {
    config: Config,
    delta: Option<f64>,
    check: HeldOutCheck,
}

setters!(GroupThresholdsParams {
    /// The constraint: demographic parity (default), equal opportunity or equalized odds.
    constraint: Constraint => config.constraint;
    /// Its level α: every two groups' constrained rates within α (default 0.1).
    level: f64 => config.level;
    /// ε of the fit.
    epsilon: f64 => config.epsilon;
    /// The share of ε spent on the group × label × score-bin table (default 0.25).
    table_share: f64 => config.table_share;
    /// Equal score bins of the table (default 10).
    bins: usize => config.bins;
    /// DP-SGD's epochs (default 30).
    epochs: usize => config.epochs;
    /// DP-SGD's learning rate (default 0.5).
    learning_rate: f64 => config.learning_rate;
    /// The share of rows held out for the check against the constant classes (default 0.1; 0
    /// turns it off: [`crate::held_out_check`]).
    check_fraction: f64 => check.fraction;
});

impl GroupThresholdsParams {
    /// δ of the fit (default `(N/2)⁻²`).
    pub fn delta(mut self, delta: f64) -> Self {
        self.delta = Some(delta);
        self
    }
    /// The sensitive column holds groups randomised by K-ary randomised response at
    /// `epsilon_a` (locally private attributes): the thresholds are chosen from the table
    /// corrected by the flip matrix (docs/fairness-constraints.md).
    pub fn attribute_epsilon(mut self, epsilon_a: f64) -> Self {
        self.config.attribute_epsilon = Some(epsilon_a);
        self
    }
}

impl Params for GroupThresholdsParams {
    type Checked = GroupThresholds;

    fn check(self) -> Result<GroupThresholds> {
        check(&self.config)?;
        if let Some(d) = self.delta {
            check_delta(d)?;
        }
        self.check.check()?;
        Ok(GroupThresholds {
            config: self.config,
            delta: self.delta,
            check: self.check,
        })
    }
}

/// The checked group-thresholds estimator.
///
/// ```
/// use dpfair::estimators::GroupThresholds;
/// use dpfair::group_thresholds::Constraint;
/// use dpfair::{Estimator, Params, Session};
/// let data = dpfair::estimators::example_data(2_000, 2, 1);
/// let mut session = Session::new(2.0, 1e-5)?;
/// let est = GroupThresholds::params()
///     .constraint(Constraint::EqualizedOdds)
///     .epsilon(2.0)
///     .delta(1e-6)
///     .check()?;
/// let fitted = est.fit(&data, &mut session)?;
/// let out = fitted.predict(&data, session.noise())?;
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct GroupThresholds {
    config: Config,
    delta: Option<f64>,
    check: HeldOutCheck,
}

impl GroupThresholds {
    /// Params with the defaults of [`GroupThresholdsParams`].
    pub fn params() -> GroupThresholdsParams {
        GroupThresholdsParams::default()
    }

    /// The configuration as used on `n` rows (δ resolved).
    pub fn config_for(&self, n: usize) -> Config {
        Config {
            delta: self
                .delta
                .unwrap_or_else(|| super::cdp_fair::default_delta(n)),
            ..self.config.clone()
        }
    }
}

impl Estimator for GroupThresholds {
    type Model = Model;
    type Config = Config;

    fn method(&self) -> &'static str {
        "group-thresholds"
    }

    fn spend(&self, data: &Dataset) -> Result<Spend> {
        let config = self.config_for(data.n_rows());
        Ok(super::accounted_spend(
            Accounting::Strict,
            config.epsilon,
            config.delta,
        ))
    }

    fn config(&self, data: &Dataset) -> Config {
        self.config_for(data.n_rows())
    }

    fn fit_with(&self, data: &Dataset, ledger: &mut Ledger, noise: &mut Noise) -> Result<Model> {
        fit(&self.config_for(data.n_rows()), data, ledger, noise)
    }

    fn report(&self, fitted: &Fitted<Model>, _data: &Dataset) -> Vec<String> {
        report(&fitted.model)
    }

    fn held_out_check(&self) -> Option<HeldOutCheck> {
        Some(self.check)
    }

    fn resolved_for(&self, data: &Dataset) -> Option<GroupThresholds> {
        Some(GroupThresholds {
            delta: Some(self.config_for(data.n_rows()).delta),
            ..self.clone()
        })
    }

    /// The level of demographic parity, which a private search verifies; `None` for equal
    /// opportunity and equalized odds (the search's check reads positive rates only).
    fn fairness_target(&self) -> Option<f64> {
        (self.config.constraint == Constraint::DemographicParity).then_some(self.config.level)
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<GroupThresholds> {
        GroupThresholdsParams {
            config: Config {
                epsilon,
                ..self.config.clone()
            },
            delta: self.delta,
            check: self.check,
        }
        .check()
    }
}

/// A two-part method's public split (the decoupled classifier's base-model rows and D, DP2DP's
/// phase-1 rows and pool), on which it fits the group-thresholds classifier in its place:
/// [`crate::group_thresholds::fit_split`].
pub(crate) struct Split {
    /// The share of rows for the table (the second part).
    pub post_fraction: f64,
    /// The most rows of the first part.
    pub base_rows: usize,
    pub seed: u64,
    /// The ledger's names of the partition and its two parts.
    pub name: &'static str,
    pub parts: [&'static str; 2],
}

impl Split {
    /// The classifier on this split of `data`, the score on the first part and the table on
    /// the second, each at `config.epsilon` (parallel composition).
    pub fn fit(
        &self,
        config: &crate::group_thresholds::Config,
        data: &Dataset,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<Model> {
        let plan = crate::decoupled::SplitPlan::new(
            data.n_rows(),
            self.post_fraction,
            self.base_rows,
            self.seed,
        )?;
        let mut rows = plan.rows();
        let training: Vec<bool> = (0..data.n_rows())
            .map(|_| rows.next_is_training())
            .collect();
        let parts = dpfair_privacy::Partition::new(self.name, &self.parts, plan.seed);
        crate::group_thresholds::fit_split(config, data, &training, &parts, ledger, noise)
    }
}

/// The fit's lines (fixed form): the released weights against their noise, and the fairness
/// target with what the released table says of it.
pub(crate) fn report(m: &Model) -> Vec<String> {
    let k = m.groups.len();
    let d = m.weights.len() - k;
    let norm = m.weights[..d].iter().map(|w| w * w).sum::<f64>().sqrt();
    vec![
        super::signal_line(
            "η̃ weights of the features",
            norm,
            m.noise_sd * (d as f64).sqrt(),
            d,
        ),
        super::fairness_line(
            &format!(
                "{} within {} across {k} groups (randomised thresholds per group)",
                m.constraint, m.level
            ),
            &format!(
                "on the released table the rules give a gap of {:.4} and accuracy {:.4} (the \
                 rates on new data differ from the released ones by their noise and sampling \
                 error)",
                m.choice.released_gap, m.choice.released_accuracy
            ),
        ),
    ]
}

/// The refusal of a two-group method's paper procedure under another constraint than its own
/// (`parity`: the one the paper constrains; `instead`: where this method's group-thresholds
/// classifier runs), shared by CDP-Fair, FDP-Fair and the decoupled classifier.
pub(crate) fn check_paper_constraint(
    constraint: Constraint,
    accounting: Accounting,
    parity: &str,
    instead: &str,
) -> Result<()> {
    if constraint != Constraint::DemographicParity && accounting == Accounting::Paper {
        return Err(crate::error::Error::invalid(
            "constraint",
            format!(
                "{constraint}: the paper's procedure constrains {parity} only; use strict \
                 accounting (the group-thresholds classifier{instead}) for this constraint"
            ),
        ));
    }
    Ok(())
}
