//! [`Decoupled`]: the decoupled private fair binary classifier (Ghoukasian & Asoodeh,
//! Algorithm 2; [`crate::decoupled`]): a DP-SGD base model, then private group rates and a
//! fairness post-processing that flips decisions per group.

use super::{Lo, check_epsilon, check_in, check_step_size, setters};
use crate::decoupled::{
    Config, FlipRule, Model, SplitPlan, collect_training, config::MAX_DELTA, fit_parts,
};
use crate::error::{Error, Result};
use crate::estimator::{Estimator, Fitted, Params};
use crate::group_thresholds::{Constraint, OrThresholds, takes_over};
use crate::held_out_check::HeldOutCheck;
use crate::pipeline::Scaling;
use crate::predictor::Accounting;
use crate::session::Session;
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_data::Loaded;
use dpfair_privacy::{Ledger, Noise};

/// Params of [`Decoupled`]: [`crate::decoupled::Config`]'s defaults (ε = 3, δ = 10⁻⁵, strict
/// accounting, a joint DP-SGD base model), except two estimator defaults: the parity level
/// α = [`DEFAULT_PARITY_LEVEL`] (the library's 0 is the paper's exact parity) and the strict
/// DP-SGD learning rate [`STRICT_LEARNING_RATE`].
#[derive(Clone, Debug)]
pub struct DecoupledParams {
    config: Config,
    check: HeldOutCheck,
    constraint: Constraint,
    attribute_epsilon: Option<f64>,
}

/// The estimator's (and the CLI's) default parity level: the flips bring the released rates
/// within 0.1 of each other, as CDP-Fair's and FDP-Fair's default α. Exact parity (the paper,
/// `alpha(0.0)`) flips about half of one group's decisions when the base rates differ much: on
/// Adult's three features the classifier was then no better than the majority class.
pub const DEFAULT_PARITY_LEVEL: f64 = 0.1;

impl Default for DecoupledParams {
    fn default() -> Self {
        DecoupledParams {
            config: Config {
                parity_level: DEFAULT_PARITY_LEVEL,
                flip_rule: FlipRule::Scores,
                ..Config::default()
            },
            check: HeldOutCheck::default(),
            constraint: Constraint::DemographicParity,
            attribute_epsilon: None,
        }
    }
}

setters!(DecoupledParams {
    /// ε of the fit: strict, DP-SGD and the rate release each at ε on disjoint rows (parallel
    /// composition); paper, DP-SGD at ε less the rate releases.
    epsilon: f64 => config.epsilon;
    /// Total δ (all of it DP-SGD's).
    delta: f64 => config.delta;
    /// Strict (default) or the paper's procedure (ledger records the real cost).
    accounting: Accounting => config.accounting;
    /// The fraction of rows held out for the rates.
    post_fraction: f64 => config.post_fraction;
    /// The disparity level α ≥ 0 the flips allow on the released rates (0: exact parity).
    alpha: f64 => config.parity_level;
    /// Which group the flips move (default: the one with fewer rows, by the released counts).
    flip_rule: FlipRule => config.flip_rule;
    /// The most rows that train the base model (the rest go to the rate release).
    base_rows: usize => config.base_rows;
    /// The share of rows held out for the check against the constant classes (default 0.1; 0
    /// turns it off; strict accounting only: [`crate::held_out_check`]).
    check_fraction: f64 => check.fraction;
    /// The constraint at level α: demographic parity (default, Algorithm 2); equal opportunity
    /// or equalized odds, and any constraint on more than two groups, fit the group-thresholds
    /// classifier on the same split, its score by DP-SGD on the base-model rows and its table
    /// on D (docs/fairness-constraints.md).
    constraint: Constraint => constraint;
});

impl DecoupledParams {
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
        DecoupledParams {
            config,
            ..DecoupledParams::default()
        }
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
        let c = &self.config;
        super::check_level("alpha", c.parity_level)?;
        if let Some(lr) = c.training.learning_rate {
            check_step_size("learning_rate", lr)?;
        }
        check_in(
            "post_fraction",
            c.post_fraction,
            Lo::Above(0.0),
            1.0,
            true,
            "a share of the rows",
        )?;
        check_in(
            "rate_epsilon",
            c.paper_rate_epsilon,
            Lo::Above(0.0),
            super::MAX_EPSILON,
            false,
            "ε₀ = ε₁ of each group's rate",
        )?;
        self.config.budget_split()?;
        self.check.check()?;
        if let Some(e) = self.attribute_epsilon {
            crate::group_thresholds::check_attribute_epsilon(e)?;
        }
        super::group_thresholds::check_paper_constraint(
            self.constraint,
            self.config.accounting,
            "statistical parity",
            " on the same split",
        )?;
        let mut config = self.config;
        if config.accounting == Accounting::Strict {
            // The estimator's default step (the library's 0.05 is kept for the reproductions).
            config
                .training
                .learning_rate
                .get_or_insert(STRICT_LEARNING_RATE);
        }
        Ok(Decoupled {
            config,
            check: self.check,
            constraint: self.constraint,
            attribute_epsilon: self.attribute_epsilon,
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
    check: HeldOutCheck,
    constraint: Constraint,
    attribute_epsilon: Option<f64>,
}

impl Decoupled {
    /// Params with the defaults of [`DecoupledParams`].
    pub fn params() -> DecoupledParams {
        DecoupledParams::default()
    }

    /// [`crate::pipeline::fit`] on a data set too large to hold: `header` is the training
    /// load without its rows ([`dpfair_data::load::learn_schema`]; its report gives the row
    /// count n, public as for every fit), and `read(schema, sink)` reads all n rows in file
    /// order, in batches coded with `schema`, handing each to `sink`
    /// ([`dpfair_data::load::read_batches`]). Two passes: the first keeps the rows the public
    /// split trains on (at most `base_rows`, [`crate::decoupled::split`]); the scaling is fitted
    /// on them (public bounds, or private bounds estimated from them) and DP-SGD trains on them;
    /// the second streams the rows of D through the base model into the rate counts
    /// ([`crate::decoupled::fit_parts`]). Returns the fit and the training part, whose schema
    /// holds the scaling (the model file's schema).
    ///
    /// With public bounds (or none), the same seeds give the model of [`Estimator::fit`] on all
    /// rows. Not with `--accounting paper` (its z-scores come from all rows at once).
    ///
    /// ```
    /// use dpfair::estimators::Decoupled;
    /// use dpfair::pipeline::Scaling;
    /// use dpfair::{Params, Session};
    /// # let data = dpfair::estimators::example_data(3_000, 2, 4);
    /// # let schema = dpfair::estimators::example_schema(2);
    /// let header = dpfair::data::Loaded::in_memory(data.select(&[]), schema.clone());
    /// let mut header = header;
    /// header.report.rows_in_file = data.n_rows(); // the row count a first pass found
    /// let est = Decoupled::params().epsilon(3.0).base_rows(1_000).check()?;
    /// let mut session = Session::new(3.0, 1e-5)?;
    /// let batches: Vec<Vec<usize>> = (0..3).map(|b| (b * 1_000..(b + 1) * 1_000).collect()).collect();
    /// let (fitted, training) = est.fit_batches(&header, &Scaling::None, &mut session, |_, sink| {
    ///     batches.iter().try_for_each(|rows| sink(&data.select(rows)))
    /// })?;
    /// assert_eq!(training.dataset.n_rows(), 1_000);
    /// assert_eq!(fitted.model.own().unwrap().post_rows, 2_000);
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn fit_batches(
        &self,
        header: &Loaded,
        scaling: &Scaling,
        session: &mut Session,
        mut read: impl FnMut(
            &dpfair_data::Schema,
            &mut dyn FnMut(&Dataset) -> crate::decoupled::Result<()>,
        ) -> crate::decoupled::Result<()>,
    ) -> Result<(Fitted<OrThresholds<Model>>, Loaded)> {
        if takes_over(&header.dataset, self.constraint, self.attribute_epsilon) {
            return Err(Error::invalid(
                "constraint",
                "a streamed fit runs Algorithm 2 on two groups under demographic parity only: \
                 load the data whole for more groups or another constraint",
            ));
        }
        if self.config.accounting == Accounting::Paper {
            return Err(Error::invalid(
                "accounting",
                "the paper's procedure takes z-scores of all rows at once: a streamed fit runs \
                 strict accounting only (load the data whole, e.g. from a CSV, for the paper's)",
            ));
        }
        let n = header.report.rows_in_file - header.report.dropped;
        let seed = match self.config.split_seed {
            Some(seed) => seed,
            None => session.noise().public_u64(),
        };
        let plan = SplitPlan::new(n, self.config.post_fraction, self.config.base_rows, seed)
            .map_err(Error::from)?;
        let training = collect_training(&plan, |sink| read(&header.schema, sink))?;
        let mut loaded = Loaded {
            dataset: training,
            schema: header.schema.clone(),
            report: header.report.clone(),
        };
        let est = Decoupled {
            config: Config {
                split_seed: Some(seed),
                ..self.config.clone()
            },
            ..self.clone()
        };
        let fitted = crate::pipeline::fit_scaled(
            &est,
            &mut loaded,
            scaling,
            session,
            |est, loaded, ledger, noise| {
                Ok(OrThresholds::Method(fit_parts(
                    &est.config,
                    &plan,
                    &loaded.dataset,
                    None,
                    ledger,
                    noise,
                    |sink| read(&loaded.schema, sink),
                )?))
            },
        )?;
        Ok((fitted, loaded))
    }
}

/// The norm the Laplace noise alone would give the two released rates (√2 times each rate's
/// noise standard deviation). Public counts: the scale is on the rates (sd `√2 b`). Histogram:
/// on the counts, so a rate's sd is about `2b/n_a`; the group sizes are private, so `n_a` is
/// taken as half the public number `post_rows` of held-out rows.
fn rate_noise(rates: &crate::decoupled::ReleasedRates, post_rows: usize, cells: f64) -> f64 {
    let sd = |b: f64| match rates.release {
        crate::decoupled::RateRelease::Histogram { .. } => {
            2.0 * b * cells.sqrt() / (0.5 * post_rows as f64).max(1.0)
        }
        _ => std::f64::consts::SQRT_2 * b,
    };
    (sd(rates.scales[0]).powi(2) + sd(rates.scales[1]).powi(2)).sqrt()
}

/// The DP-SGD learning rate of the estimator's (and the CLI's) strict default: dp-logistic's
/// 0.5. With the library's 0.05 the base model barely leaves its initial weights in the
/// schedule's ~1,500 steps on [0, 1]-scaled features: on Adult's three features it predicted
/// 35 positives in 48,842 rows (released rates 0.001 and 0.000 at ε = 3), against rates of 0.004
/// and 0.16 at 0.5.
pub const STRICT_LEARNING_RATE: f64 = 0.5;

impl Estimator for Decoupled {
    type Model = OrThresholds<Model>;
    type Config = Config;

    fn method(&self) -> &'static str {
        "decoupled"
    }

    fn report(&self, fitted: &Fitted<OrThresholds<Model>>, data: &Dataset) -> Vec<String> {
        let model = match &fitted.model {
            OrThresholds::Method(m) => m,
            OrThresholds::Thresholds(m) => return super::group_thresholds::report(m),
        };
        let name = |a: usize| {
            data.groups
                .as_ref()
                .and_then(|g| g.names.get(a))
                .map_or("?", String::as_str)
        };
        let mut lines = vec![format!(
            "decoupled: released rates α̃ = {:.4}, β̃ = {:.4}; p_keep = {:.4} (group `{}`), \
             p_flip = {:.4}; flips: {}",
            model.rates.alpha,
            model.rates.beta,
            model.flips.p_keep,
            name(model.flips.down as usize),
            model.flips.p_flip,
            match self.config.flip_rule {
                FlipRule::Midpoint => "both rates towards their midpoint (Algorithm 1)",
                FlipRule::FewestChanges =>
                    "the group with fewer rows by the released counts moves (fewest changes)",
                FlipRule::Scores =>
                    "the group with fewer rows by the released counts moves (fewest changes), \
                     its least confident decisions first (score thresholds)",
            }
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
        // Models written before `post_rows` was recorded: the rule's share of the rows.
        let post_rows = match model.post_rows {
            0 => (self.config.post_fraction * data.n_rows() as f64).round() as usize,
            rows => rows,
        };
        // A rate from score bins sums half of its group's bins (each with its own noise).
        let cells = if model.thresholds.is_some() {
            crate::decoupled::score_thresholds::SCORE_BINS as f64 / 2.0
        } else {
            1.0
        };
        let noise = rate_noise(&model.rates, post_rows, cells);
        lines.push(super::signal_line(
            "positive rates of the base model (α̃, β̃)",
            rates.iter().map(|r| r * r).sum::<f64>().sqrt(),
            noise,
            2,
        ));
        let after = model.rates_after_flips();
        let level = self.config.parity_level;
        lines.push(super::fairness_line(
            &format!("|DD| ≤ α = {level} (randomised flips of the base model's decisions)"),
            &format!(
                "on the released rates the flips give {:.4} and {:.4}: met: {} (the rates on new \
                 data differ from the released ones by their noise and sampling error)",
                after[0],
                after[1],
                (after[0] - after[1]).abs() <= level + 1e-9
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

    fn held_out_check(&self) -> Option<HeldOutCheck> {
        (self.config.accounting == Accounting::Strict).then_some(self.check)
    }

    /// α for demographic parity, which a private search verifies; `None` for the other
    /// constraints (the search's check reads positive rates only).
    fn fairness_target(&self) -> Option<f64> {
        (self.constraint == Constraint::DemographicParity).then_some(self.config.parity_level)
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<Decoupled> {
        DecoupledParams::from_config(self.config.clone())
            .epsilon(epsilon)
            .check_fraction(self.check.fraction)
            .constraint(self.constraint)
            .attribute_epsilon_opt(self.attribute_epsilon)
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

    /// Algorithm 2 on two groups under demographic parity; otherwise the group-thresholds
    /// classifier on Algorithm 2's split ([`crate::group_thresholds::fit_split`]) at α and the
    /// fit's (ε, δ).
    fn fit_with(
        &self,
        data: &Dataset,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<OrThresholds<Model>> {
        if !takes_over(data, self.constraint, self.attribute_epsilon) {
            return Ok(OrThresholds::Method(crate::decoupled::fit(
                &self.config,
                data,
                ledger,
                noise,
            )?));
        }
        if self.config.accounting == Accounting::Paper {
            return Err(Error::invalid(
                "accounting",
                "the paper's procedure is for two groups and an attribute as given: use strict \
                 accounting (the group-thresholds classifier on the same split) for more groups or a \
                 randomised attribute",
            ));
        }
        let c = &self.config;
        let thresholds = crate::group_thresholds::Config {
            constraint: self.constraint,
            level: c.parity_level,
            epsilon: c.epsilon,
            delta: c.delta,
            attribute_epsilon: self.attribute_epsilon,
            ..crate::group_thresholds::Config::default()
        };
        let split = super::group_thresholds::Split {
            post_fraction: c.post_fraction,
            base_rows: c.base_rows,
            seed: c.split_seed.unwrap_or_else(|| noise.public_u64()),
            name: "decoupled: base-model rows / rate rows",
            parts: ["base-model rows", "rate rows (D)"],
        };
        Ok(OrThresholds::Thresholds(split.fit(
            &thresholds,
            data,
            ledger,
            noise,
        )?))
    }
}
