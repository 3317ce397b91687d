//! [`FdpFair`]: FDP-Fair (Xue & Yu, Algorithm 1; [`crate::fdp_fair`]) simulated in one process:
//! the data are split into `S` contiguous sites, each site runs both rounds on its own rows with
//! its own randomness, and the server's selection builds one classifier. (Real sites exchange
//! files or messages: `dpfair federated`.)

use super::{check_delta, check_epsilon, check_level};
use crate::cdp_fair::Accounting;
use crate::error::{Error, Result};
use crate::estimator::{Estimator, Fitted, Params};
use crate::fdp_fair::Config;
use crate::fdp_fair::FederatedModel as Model;
use crate::fdp_fair::simulate::{contiguous_sites, fit};
use crate::group_thresholds::{Constraint, OrThresholds, takes_over};
use crate::session::Session;
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise};

/// The estimator's (and the CLI's) noise margin `z` of the server's selection
/// ([`crate::fdp_fair::SearchConfig::margin_z`]): a one-sided 95% normal bound.
pub const DEFAULT_MARGIN_Z: f64 = 1.645;

/// The most sites a simulation accepts (each needs its own rows).
pub const MAX_SITES: usize = 1_000;

/// Params of [`FdpFair`]: [`crate::fdp_fair::Config`]'s defaults with `S = 3` sites, except five
/// estimator defaults: `η_a` by [`crate::plugin::EtaModel::Auto`], the selection band inside
/// α ([`crate::fdp_fair::SearchConfig::band_inside`]), the noise margin [`DEFAULT_MARGIN_Z`]
/// ([`crate::fdp_fair::SearchConfig::margin_z`]), the randomised straddle
/// ([`crate::fdp_fair::SearchConfig::randomise_straddle`]) and unclipped tails
/// ([`crate::fdp_fair::SearchConfig::clip_tails`]). Features must be on `[0, 1]^d`.
#[derive(Clone, Debug)]
pub struct FdpFairParams {
    config: Config,
    sites: usize,
    check_fraction: f64,
    constraint: Constraint,
    attribute_epsilon: Option<f64>,
}

/// The sites one file's rows are dealt to by default (the estimator, `compare`, the CLI's
/// simulation and the Python package).
pub const DEFAULT_SITES: usize = 3;

impl Default for FdpFairParams {
    fn default() -> Self {
        FdpFairParams {
            config: Config {
                eta_model: crate::plugin::EtaModel::Auto,
                search: crate::fdp_fair::SearchConfig {
                    band_inside: true,
                    margin_z: DEFAULT_MARGIN_Z,
                    randomise_straddle: true,
                    clip_tails: false,
                    ..Default::default()
                },
                ..Config::default()
            },
            sites: DEFAULT_SITES,
            check_fraction: crate::held_out_check::DEFAULT_FRACTION,
            constraint: Constraint::DemographicParity,
            attribute_epsilon: None,
        }
    }
}

impl FdpFairParams {
    /// The disparity level α ≥ 0.
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.config.search.alpha = alpha;
        self
    }
    /// ε of every site.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.config.epsilon = epsilon;
        self
    }
    /// δ of every site (default `(N_s/2)⁻²` per site).
    pub fn delta(mut self, delta: f64) -> Self {
        self.config.delta = Some(delta);
        self
    }
    /// The number of simulated sites `S`.
    pub fn sites(mut self, sites: usize) -> Self {
        self.sites = sites;
        self
    }
    /// The share of rows held out (before the rows are dealt to the simulated sites) for the
    /// check against the constant classes (default 0.1; 0 turns it off; strict accounting
    /// only: [`crate::held_out_check`]). A real federation (`dpfair federated`) runs none.
    pub fn check_fraction(mut self, fraction: f64) -> Self {
        self.check_fraction = fraction;
        self
    }
    /// Number of random frequencies `D` of the public basis.
    pub fn frequencies(mut self, d: usize) -> Self {
        self.config.n_frequencies = d;
        self
    }
    /// Strict (default) or the paper's procedure (ledger records the real cost).
    pub fn accounting(mut self, accounting: Accounting) -> Self {
        self.config.accounting = accounting;
        self
    }
    /// The estimator of `η_a`: kernel, logistic or auto (default, `docs/choosing.md`).
    pub fn eta_model(mut self, eta_model: crate::plugin::EtaModel) -> Self {
        self.config.eta_model = eta_model;
        self
    }
    /// The constraint at level α: demographic parity (default, Algorithm 1); equal opportunity
    /// or equalized odds, and any constraint on more than two groups, fit the group-thresholds
    /// classifier over the same sites in Algorithm 1's place
    /// ([`crate::group_thresholds::federated`], docs/fairness-constraints.md).
    pub fn constraint(mut self, constraint: Constraint) -> Self {
        self.constraint = constraint;
        self
    }
    /// The sensitive column holds groups randomised by K-ary randomised response at
    /// `epsilon_a`: the group-thresholds classifier is fitted over the sites in the method's
    /// place, its thresholds chosen from the summed table corrected by the flip matrix
    /// (docs/fairness-constraints.md).
    pub fn attribute_epsilon(mut self, epsilon_a: f64) -> Self {
        self.attribute_epsilon = Some(epsilon_a);
        self
    }
    /// Params from a whole configuration.
    pub fn from_config(config: Config, sites: usize) -> Self {
        FdpFairParams {
            config,
            sites,
            ..FdpFairParams::default()
        }
    }
}

/// The bounds of the fairness search's options that its own validation lacks (issue #41:
/// `--c-omega 1e308` made ω infinite and the model unreadable): α a disparity level, c_ω at most
/// 10³. Shared by [`FdpFairParams`] and the federated server (`dpfair federated aggregate`).
pub fn check_search(search: &crate::fdp_fair::SearchConfig) -> Result<()> {
    check_level("alpha", search.alpha)?;
    super::check_in(
        "c_omega",
        search.c_omega,
        super::Lo::AtLeast(0.0),
        1e3,
        false,
        "the constant of the margin ω",
    )
}

impl Params for FdpFairParams {
    type Checked = FdpFair;

    fn check(self) -> Result<FdpFair> {
        check_epsilon(self.config.epsilon, false)?;
        check_search(&self.config.search)?;
        super::cdp_fair::check_eta_model(self.config.eta_model, self.config.accounting)?;
        if let Some(delta) = self.config.delta {
            check_delta(delta)?;
        }
        if !(1..=MAX_SITES).contains(&self.sites) {
            return Err(Error::invalid(
                "sites",
                format!("must be in 1..={MAX_SITES}, got {}", self.sites),
            ));
        }
        if self.config.n_frequencies == 0
            || self.config.n_frequencies > crate::cdp_fair::MAX_FREQUENCIES
        {
            return Err(Error::invalid(
                "frequencies",
                format!(
                    "must be in 1..={}, got {}",
                    crate::cdp_fair::MAX_FREQUENCIES,
                    self.config.n_frequencies
                ),
            ));
        }
        self.config.search.validate()?;
        let check = crate::held_out_check::HeldOutCheck {
            fraction: self.check_fraction,
            range: None,
        };
        check.check()?;
        super::group_thresholds::check_paper_constraint(
            self.constraint,
            self.config.accounting,
            "demographic parity",
            " over the sites",
        )?;
        if let Some(e) = self.attribute_epsilon {
            crate::group_thresholds::check_attribute_epsilon(e)?;
        }
        Ok(FdpFair {
            config: self.config,
            sites: self.sites,
            check,
            constraint: self.constraint,
            attribute_epsilon: self.attribute_epsilon,
        })
    }
}

/// The checked FDP-Fair simulation.
///
/// ```
/// use dpfair::estimators::FdpFair;
/// use dpfair::{Estimator, Params, Session};
/// let data = dpfair::estimators::example_data(3_000, 2, 5);
/// let mut session = Session::new(1.0, 1e-4)?;
/// let est = FdpFair::params().alpha(0.1).epsilon(1.0).delta(1e-5).sites(3).frequencies(64).check()?;
/// let fitted = est.fit(&data, &mut session)?;
/// let out = fitted.predict(&data, session.noise())?;
/// let path = std::env::temp_dir().join("dpfair-doc-fdp-fair.json");
/// fitted.save(dpfair::estimators::example_schema(2), &path)?; // `dpfair predict` reads it
/// assert_eq!(dpfair::model::ModelFile::load(&path)?.method, "fdp-fair");
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct FdpFair {
    config: Config,
    sites: usize,
    check: crate::held_out_check::HeldOutCheck,
    constraint: Constraint,
    attribute_epsilon: Option<f64>,
}

impl FdpFair {
    /// Params with the defaults of [`FdpFairParams`].
    pub fn params() -> FdpFairParams {
        FdpFairParams::default()
    }

    /// The number of sites.
    pub fn sites(&self) -> usize {
        self.sites
    }

    /// Scale `loaded` with `scaling` (private bounds, if any, computed on all rows with the
    /// session's noise and charged to its ledger; [`crate::pipeline::Scaling`]) and fit with one
    /// source of randomness per site, `noises[s]` for site `s` (each site's own seed, e.g. to
    /// reproduce a run of the file protocol with public bounds), the sites sharing what the
    /// bounds leave of ε; [`Estimator::fit`] forks the session's source instead. The held-out
    /// check ([`crate::held_out_check`]) runs as in [`crate::pipeline::fit`]: the sites are dealt
    /// the fit rows.
    pub fn fit_sites(
        &self,
        loaded: &mut dpfair_data::Loaded,
        scaling: &crate::pipeline::Scaling,
        noises: &mut [Noise],
        session: &mut Session,
    ) -> Result<Fitted<OrThresholds<Model>>> {
        if noises.len() != self.sites {
            return Err(Error::invalid(
                "sites",
                format!("{} sites but {} noise sources", self.sites, noises.len()),
            ));
        }
        let check = self.held_out_check().filter(|c| c.is_on());
        crate::pipeline::fit_checked(
            self,
            loaded,
            scaling,
            session,
            check,
            |est, loaded, ledger, _| est.fit_noises(&loaded.dataset, noises, ledger),
        )
    }

    /// Algorithm 1 over the contiguous sites of `data`, site `s` drawing from `noises[s]`, or,
    /// for more than two groups or another constraint, the group-thresholds classifier over the
    /// same sites at α and each site's (ε, δ) ([`crate::group_thresholds::takes_over`]); the
    /// federation's releases are charged to `ledger`.
    fn fit_noises(
        &self,
        data: &Dataset,
        noises: &mut [Noise],
        ledger: &mut Ledger,
    ) -> Result<OrThresholds<Model>> {
        let sites = contiguous_sites(data, self.sites)?;
        if takes_over(data, self.constraint, self.attribute_epsilon) {
            if self.config.accounting == Accounting::Paper {
                return Err(Error::invalid(
                    "accounting",
                    "the paper's procedure is for two groups and an attribute as given: use \
                     strict accounting (the group-thresholds classifier over the sites) for \
                     more groups or a randomised attribute",
                ));
            }
            let smallest = sites.iter().map(Dataset::n_rows).min().unwrap_or(1);
            let config = crate::group_thresholds::Config {
                constraint: self.constraint,
                level: self.config.search.alpha,
                epsilon: self.config.epsilon,
                delta: self
                    .config
                    .delta
                    .unwrap_or_else(|| crate::fdp_fair::default_delta(smallest)),
                attribute_epsilon: self.attribute_epsilon,
                ..crate::group_thresholds::Config::default()
            };
            return Ok(OrThresholds::Thresholds(
                crate::group_thresholds::federated::fit(&config, &sites, noises, ledger)?,
            ));
        }
        let simulated = fit(&self.config, &sites, noises)?;
        ledger.record_noise_source(simulated.ledger.noise_source());
        for entry in simulated.ledger.entries() {
            ledger.charge(entry.clone())?;
        }
        Ok(OrThresholds::Method(simulated.model))
    }
}

impl Estimator for FdpFair {
    type Model = OrThresholds<Model>;
    type Config = Config;

    fn method(&self) -> &'static str {
        "fdp-fair"
    }

    fn report(&self, fitted: &Fitted<OrThresholds<Model>>, _data: &Dataset) -> Vec<String> {
        let model = match &fitted.model {
            OrThresholds::Method(m) => m,
            OrThresholds::Thresholds(m) => return super::group_thresholds::report(m),
        };
        let mut lines = Vec::new();
        let info = &model.federated;
        let estimate = model.folds.first().map(|f| &f.estimate);
        lines.push(format!(
            "fdp-fair: S = {}, {}, M = {}, ω = {:.5}, {} (band found: {}, \
             non-increasing: {})",
            self.sites,
            estimate.map_or_else(String::new, |e| e.describe()),
            info.search.depth,
            info.search.omega,
            info.search.describe_threshold(),
            info.search.feasible,
            info.search.monotone
        ));
        let (norm, noise, p) = estimate.map_or((f64::NAN, f64::NAN, 1), |e| e.signal_and_noise());
        lines.push(super::signal_line(
            "η̃ (the server's aggregate)",
            norm,
            noise,
            p,
        ));
        lines.push(super::fairness_line(
            &format!("|DD| ≤ α = {}", info.config.alpha),
            &info.estimate_summary(),
        ));
        lines
    }

    fn fairness_target(&self) -> Option<f64> {
        Some(self.config.search.alpha)
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<FdpFair> {
        FdpFairParams {
            attribute_epsilon: self.attribute_epsilon,
            ..FdpFairParams::from_config(self.config.clone(), self.sites)
        }
        .epsilon(epsilon)
        .check_fraction(self.check.fraction)
        .constraint(self.constraint)
        .check()
    }

    fn held_out_check(&self) -> Option<crate::held_out_check::HeldOutCheck> {
        (self.config.accounting == Accounting::Strict).then_some(self.check)
    }

    /// δ_s from the sites of all of `data`, so that the fit on the check's fit rows spends what
    /// was declared.
    fn resolved_for(&self, data: &Dataset) -> Option<FdpFair> {
        let smallest = data.n_rows() / self.sites;
        let mut est = self.clone();
        est.config.delta = Some(
            self.config
                .delta
                .unwrap_or_else(|| crate::fdp_fair::default_delta(smallest.max(1))),
        );
        Some(est)
    }

    /// Every site spends `(ε, δ_s)` on its own rows: parallel composition over the sites.
    fn spend(&self, data: &Dataset) -> Result<Spend> {
        let smallest = data.n_rows() / self.sites;
        let delta = self
            .config
            .delta
            .unwrap_or_else(|| crate::fdp_fair::default_delta(smallest.max(1)));
        Ok(super::accounted_spend(
            self.config.accounting,
            self.config.epsilon,
            delta,
        ))
    }

    fn config(&self, _data: &Dataset) -> Config {
        self.config.clone()
    }

    fn fit_with(
        &self,
        data: &Dataset,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<OrThresholds<Model>> {
        let mut noises: Vec<Noise> = (0..self.sites).map(|_| noise.fork()).collect();
        self.fit_noises(data, &mut noises, ledger)
    }
}
