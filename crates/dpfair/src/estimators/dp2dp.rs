//! [`Dp2dp`]: DP2DP, private demographic-parity post-processing for multi-class classifiers
//! (Say, Denis, Pinot; [`crate::dp2dp`]): a private probability model (phase 1) on part of the
//! rows, then a private dual ascent (phase 2) on the rest.

use super::{Lo, check_epsilon, check_in, check_level, check_step_size, setters};
use crate::dp2dp::Phase1;
use crate::dp2dp::{Config, Model};
use crate::error::Result;
use crate::estimator::{Estimator, Fitted, Params};
use crate::group_thresholds::{Constraint, OrThresholds, takes_over};
use crate::held_out_check::HeldOutCheck;
use crate::predictor::Accounting;
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise};

/// Params of [`Dp2dp`]: [`crate::dp2dp::Config`]'s defaults (ρ = 0, ε = 1 per phase,
/// δ = 10⁻⁵, batch 128) with [`DP2DP_ITERATIONS`] iterations of the dual ascent.
#[derive(Clone, Debug)]
pub struct Dp2dpParams {
    config: Config,
    check: HeldOutCheck,
}

/// The estimators' iterations T of DP2DP's dual ascent: the paper's Credit and Parkinson's
/// setting (its synthetic and Adult runs used 100, [`Config`]'s default), for every data set
/// (docs/deviations.md#dp2dp-iterations).
pub const DP2DP_ITERATIONS: usize = 1_000;

/// The estimators' default fairness tolerance ρ: 0.1, the level of every other method's
/// default (CDP-Fair's and FDP-Fair's α, the decoupled classifier's α).
pub const DEFAULT_RHO: f64 = 0.1;

impl Default for Dp2dpParams {
    fn default() -> Self {
        Dp2dpParams {
            config: Config {
                // The fairness level every method defaults to (α = 0.1 for the others); the
                // library's `Config` keeps the paper's ρ = 0 for the reproductions.
                rho: DEFAULT_RHO,
                iterations: DP2DP_ITERATIONS,
                margin_z: crate::dp2dp::DEFAULT_MARGIN_Z,
                ..Config::default()
            },
            check: HeldOutCheck::default(),
        }
    }
}

setters!(Dp2dpParams {
    /// The fairness tolerance ρ ≥ 0: the classifier targets unfairness U ≤ ρ (default
    /// [`DEFAULT_RHO`] = 0.1; 0 is the paper's exact parity).
    rho: f64 => config.rho;
    /// The sampling margin z ≥ 0 in standard deviations (default 1; 0 aims at ρ itself, as the
    /// paper: [`crate::dp2dp::Config::margin_z`]).
    margin_z: f64 => config.margin_z;
    /// ε of each phase (the phases use disjoint rows: parallel composition).
    epsilon: f64 => config.epsilon;
    /// δ.
    delta: f64 => config.delta;
    /// Strict (default) or the paper's procedure (ledger records the real cost).
    accounting: Accounting => config.accounting;
    /// Iterations T of the dual ascent.
    iterations: usize => config.iterations;
    /// The (expected) batch size b of the dual ascent.
    batch: usize => config.batch;
    /// The fraction of rows given to phase 2.
    pool_fraction: f64 => config.pool_fraction;
    /// The share of rows held out for the check against the constant classes (default 0.1; 0
    /// turns it off; strict accounting and finite ε only: [`crate::held_out_check`]).
    check_fraction: f64 => check.fraction;
});

impl Dp2dpParams {
    /// Params from a whole configuration.
    pub fn from_config(config: Config) -> Self {
        Dp2dpParams {
            config,
            check: HeldOutCheck::default(),
        }
    }
}

/// Phase 1's output-perturbation penalty Λ: finite, > 0, at most 10⁶ (per row). Front ends
/// whose DP-SGD phase 1 does not read it check it all the same (`dpfair fit dp2dp --l2`), so a
/// bad value is refused rather than ignored.
pub fn check_l2(l2: f64) -> Result<()> {
    check_in("l2", l2, Lo::Above(0.0), 1e6, false, "a penalty per row")
}

impl Params for Dp2dpParams {
    type Checked = Dp2dp;

    fn check(self) -> Result<Dp2dp> {
        check_level("rho", self.config.rho)?;
        check_epsilon(self.config.epsilon, true)?;
        // Upper bounds the method's own validation lacks (issue #41: 1e308 ran and wrote a
        // model).
        let c = &self.config;
        check_in(
            "margin_z",
            c.margin_z,
            Lo::AtLeast(0.0),
            1e3,
            false,
            "standard deviations",
        )?;
        check_step_size("beta", c.beta)?;
        check_in(
            "c_lambda",
            c.c_lambda,
            Lo::Above(0.0),
            1e6,
            false,
            "a bound on the multipliers",
        )?;
        if let Some(s) = c.sigma_pi {
            check_in("sigma_pi", s, Lo::Above(0.0), 1e6, false, "a noise scale")?;
        }
        if let Phase1::OutputPerturbation { l2, .. } | Phase1::Auto { l2, .. } = c.phase1 {
            check_l2(l2)?;
        }
        self.config.validate()?;
        self.check.check()?;
        Ok(Dp2dp {
            config: self.config,
            check: self.check,
        })
    }
}

/// The checked estimator (`ε = ∞` is the non-private reference: it needs
/// [`crate::Session::unlimited`]).
///
/// ```
/// use dpfair::estimators::Dp2dp;
/// use dpfair::{Estimator, Params, Session};
/// let data = dpfair::estimators::example_data(4_000, 3, 6);
/// let mut session = Session::new(1.0, 1e-5)?;
/// let fitted = Dp2dp::params().rho(0.05).epsilon(1.0).check()?.fit(&data, &mut session)?;
/// let out = fitted.predict(&data, session.noise())?;
/// if let dpfair::model::Output::Classes { classes, probabilities: Some(p) } = &out {
///     // The fair rule's own distribution (the fractions of the mixed iterates choosing each
///     // class), not phase 1's: each drawn class has positive probability.
///     assert!(classes.iter().enumerate().all(|(i, &c)| p[[i, c as usize]] > 0.0));
///     assert!(p.rows().into_iter().all(|r| (r.sum() - 1.0).abs() < 1e-9));
/// }
/// let path = std::env::temp_dir().join("dpfair-doc-dp2dp.json");
/// fitted.save(dpfair::estimators::example_schema(3), &path)?; // `dpfair predict` reads it
/// assert_eq!(dpfair::model::ModelFile::load(&path)?.method, "dp2dp");
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Dp2dp {
    config: Config,
    check: HeldOutCheck,
}

impl Dp2dp {
    /// Params with the defaults of [`Dp2dpParams`].
    pub fn params() -> Dp2dpParams {
        Dp2dpParams::default()
    }
}

impl Estimator for Dp2dp {
    type Model = OrThresholds<Model>;
    type Config = Config;

    fn method(&self) -> &'static str {
        "dp2dp"
    }

    fn report(&self, fitted: &Fitted<OrThresholds<Model>>, _data: &Dataset) -> Vec<String> {
        let model = match &fitted.model {
            OrThresholds::Method(m) => m,
            OrThresholds::Thresholds(m) => return super::group_thresholds::report(m),
        };
        let r = &model.phase2.report;
        let mut lines = Vec::new();
        if let Some(p) = &model.phase1_procedure {
            lines.push(format!("dp2dp: phase 1 = {p}"));
        }
        lines.push(format!(
            "dp2dp: K = {}, fairness tolerance ρ = {}, {} training rows, pool N = {}; π̄ = ({:.4}, {:.4}); \
             σ_SGD = {:.4} (z = {:.4}, q = {:.4}, T = {}); λ̄ at C_λ: {:.0}%",
            model.classes,
            model.rho,
            model.n_train,
            r.n_pool,
            model.phase2.pi[0],
            model.phase2.pi[1],
            r.sigma_sgd,
            r.noise_multiplier,
            r.sampling_rate,
            r.steps,
            100.0 * r.at_bound
        ));
        if let Some(aimed) = r.aimed_rho.filter(|&a| a < model.rho) {
            lines.push(format!(
                "dp2dp: the dual ascent aimed at U ≤ {aimed:.4}, below ρ by the pool's sampling \
                 margin (docs/deviations.md#dp2dp-sampling-margin)"
            ));
        }
        lines.push(super::fairness_line(
            &format!("unfairness U ≤ ρ = {}", model.rho),
            &format!(
                "no private estimate of U is released (Phase 2 releases π̄ and the multipliers \
                 λ̄); {:.0}% of λ̄ at the box bound C_λ, where the constraint may not be met",
                100.0 * r.at_bound
            ),
        ));
        lines.push(if model.phase2.mixture.is_empty() {
            "dp2dp: rule: one argmax at the released multipliers λ̄".to_string()
        } else {
            "dp2dp: rule: the mixture of the rules of the second half of the T iterates, one \
             drawn at random per prediction (docs/deviations.md#dp2dp-mixture-of-iterates)"
                .to_string()
        });
        if r.at_bound > 0.0 {
            lines.push(
                "warning: some multipliers hit the box bound C_λ; consider --c-lambda 2".into(),
            );
        }
        if let Some(claimed) = r.claimed_epsilon {
            let delta = self.config.delta;
            lines.push(match fitted.ledger.total_at(delta) {
                Ok(real) => format!(
                    "--accounting paper: the paper claims ε = {claimed} per phase; the ledger's \
                     real cost is ε = {:.4} at δ = {delta} ({})",
                    real.epsilon, real.rule
                ),
                Err(e) => format!("--accounting paper: the ledger's total is unavailable: {e}"),
            });
        }
        lines
    }

    fn held_out_check(&self) -> Option<HeldOutCheck> {
        (self.config.accounting == Accounting::Strict && self.config.epsilon.is_finite())
            .then_some(self.check)
    }

    fn fairness_target(&self) -> Option<f64> {
        Some(self.config.rho)
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<Dp2dp> {
        Dp2dpParams::from_config(self.config.clone())
            .epsilon(epsilon)
            .check_fraction(self.check.fraction)
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

    /// DP2DP on two groups; a binary target with more groups fits the group-thresholds
    /// classifier on DP2DP's split instead (the score on the phase-1 rows, the table on the
    /// pool, each at ε: parallel composition, as DP2DP's phases), at ρ under demographic
    /// parity (docs/fairness-constraints.md).
    fn fit_with(
        &self,
        data: &Dataset,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<OrThresholds<Model>> {
        let c = &self.config;
        // Two classes, as the binary target the group thresholds read (DP2DP's front ends may
        // load them as classes 0 and 1 of a class target).
        let two_classes = match &data.target {
            Some(dpfair_data::Target::Multiclass { k: 2, labels }) => Some(Some(
                dpfair_data::Target::Binary(labels.iter().map(|&l| u8::from(l == 1)).collect()),
            )),
            Some(dpfair_data::Target::Binary(_)) => Some(None),
            _ => None,
        };
        if let Some(binary) = two_classes
            && takes_over(data, Constraint::DemographicParity, None)
        {
            let relabelled;
            let data = match binary {
                Some(target) => {
                    relabelled = Dataset {
                        target: Some(target),
                        ..data.clone()
                    };
                    &relabelled
                }
                None => data,
            };
            if c.accounting == Accounting::Paper || c.epsilon.is_infinite() {
                return Err(crate::error::Error::invalid(
                    "accounting",
                    "DP2DP's paper procedure and its non-private reference are for two \
                     groups: use strict accounting and a finite ε for more",
                ));
            }
            let thresholds = crate::group_thresholds::Config {
                level: c.rho,
                epsilon: c.epsilon,
                delta: c.delta,
                ..crate::group_thresholds::Config::default()
            };
            let split = super::group_thresholds::Split {
                post_fraction: c.pool_fraction,
                base_rows: usize::MAX,
                seed: noise.public_u64(),
                name: "dp2dp: phase-1 rows / pool",
                parts: ["phase-1 rows", "pool"],
            };
            return Ok(OrThresholds::Thresholds(split.fit(
                &thresholds,
                data,
                ledger,
                noise,
            )?));
        }
        if c.epsilon.is_infinite() && c.accounting == Accounting::Strict {
            super::charge_reference(ledger)?;
        }
        Ok(OrThresholds::Method(crate::dp2dp::fit(
            c, data, ledger, noise,
        )?))
    }
}
