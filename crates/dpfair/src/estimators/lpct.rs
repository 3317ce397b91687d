//! [`Lpct`] and [`LpctPrune`]: locally private classification trees that use public data (Ma &
//! Yang; [`crate::lpct`]). The public rows (in the params) build the partition; each private row
//! is one holder whose ε-LDP report is simulated here exactly as the holder's own device would
//! make it (`dpfair ldp` runs the real client/collector protocol).

use super::check_epsilon;
use crate::error::{Error, Result};
use crate::estimator::{Estimator, Fitted, Params};
use crate::held_out_check::CheckOutcome;
use crate::lpct::{LpctConfig, LpctModel, PruneConfig, PruneModel, TreeSettings};
use crate::session::Spend;
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise, Relation};

/// Each holder's report is ε-LDP; a local release is private for any neighbouring relation.
fn ldp_spend(epsilon: f64) -> Spend {
    Spend {
        epsilon,
        delta: 0.0,
        relation: Relation::Substitution,
    }
}

/// The public data set must have a binary target, like the private one.
fn check_public(public: &Dataset) -> Result<()> {
    if public.n_rows() == 0 {
        return Err(Error::invalid("public", "the public data set has no rows"));
    }
    public.require_binary("lpct", "the public target")?;
    Ok(())
}

/// Params of [`Lpct`]: ε = 1, the paper's max-edge + Gini partition, Theorem 4's depth and λ.
#[derive(Clone, Debug)]
pub struct LpctParams {
    config: LpctConfig,
    public: Dataset,
    check_fraction: f64,
}

impl LpctParams {
    /// ε of every holder's report.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.config.epsilon = epsilon;
        self
    }
    /// A fixed depth p (default: Theorem 4's).
    pub fn depth(mut self, depth: u32) -> Self {
        self.config.depth = Some(depth);
        self
    }
    /// A fixed public weight λ (default: Theorem 4's).
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.config.lambda = Some(lambda);
        self
    }
    /// The partition settings.
    pub fn tree(mut self, tree: TreeSettings) -> Self {
        self.config.tree = tree;
        self
    }
    /// Guard each leaf's estimate at `z` standard deviations ([`crate::lpct::guard`]; default:
    /// none, the paper's eq. (8) in every leaf).
    pub fn guard(mut self, z: f64) -> Self {
        self.config.guard = Some(z);
        self
    }
    /// The share of the public rows held out from the partition to check the tree against the
    /// majority class ([`crate::held_out_check::public_check`]; default
    /// [`crate::held_out_check::PUBLIC_FRACTION`], 0 turns it off).
    pub fn check_fraction(mut self, fraction: f64) -> Self {
        self.check_fraction = fraction;
        self
    }
}

impl Params for LpctParams {
    type Checked = Lpct;

    fn check(self) -> Result<Lpct> {
        check_epsilon(self.config.epsilon, false)?;
        if let Some(p) = self.config.depth
            && p > crate::lpct::partition::MAX_COMPLETE_DEPTH
        {
            return Err(Error::invalid(
                "depth",
                format!(
                    "must be at most {} (2^depth leaves), got {p}",
                    crate::lpct::partition::MAX_COMPLETE_DEPTH
                ),
            ));
        }
        if let Some(l) = self.config.lambda {
            crate::lpct::check_lambda(l)?;
        }
        crate::lpct::check_guard(self.config.guard)?;
        check_public(&self.public)?;
        let (public, check) = PublicCheck::split(self.public, self.check_fraction)?;
        Ok(Lpct {
            config: self.config,
            public,
            check,
        })
    }
}

/// The checked LPCT estimator: `fit` takes the private rows.
///
/// ```
/// use dpfair::estimators::Lpct;
/// use dpfair::{Estimator, Params, Session};
/// let public = dpfair::estimators::example_data(1_000, 2, 1);
/// let private = dpfair::estimators::example_data(5_000, 2, 2);
/// let mut session = Session::new(2.0, 0.0)?;
/// let fitted = Lpct::params(public).epsilon(2.0).check()?.fit(&private, &mut session)?;
/// let out = fitted.predict(&private, session.noise())?;
/// let path = std::env::temp_dir().join("dpfair-doc-lpct.json");
/// fitted.save(dpfair::estimators::example_schema(2), &path)?; // `dpfair predict` reads it
/// assert_eq!(dpfair::model::ModelFile::load(&path)?.method, "lpct");
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Lpct {
    config: LpctConfig,
    public: Dataset,
    check: Option<PublicCheck>,
}

impl Lpct {
    /// Params with LPCT's defaults and the `public` rows (features and a binary target).
    pub fn params(public: Dataset) -> LpctParams {
        LpctParams {
            config: LpctConfig::default(),
            public,
            check_fraction: crate::held_out_check::PUBLIC_FRACTION,
        }
    }
}

impl Estimator for Lpct {
    type Model = LpctModel;
    type Config = LpctConfig;

    fn method(&self) -> &'static str {
        "lpct"
    }

    fn report(&self, fitted: &Fitted<LpctModel>, _data: &Dataset) -> Vec<String> {
        let model = &fitted.model;
        vec![
            format!("LPCT: depth {}, λ = {}", model.depth, model.lambda),
            no_fairness_target("LPCT"),
        ]
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<Lpct> {
        check_epsilon(epsilon, false)?;
        let mut est = self.clone();
        est.config.epsilon = epsilon;
        Ok(est)
    }

    fn public_check(&self, model: &LpctModel, noise: &mut Noise) -> Result<Option<CheckOutcome>> {
        self.check.as_ref().map(|c| c.run(model, noise)).transpose()
    }

    fn spend(&self, _data: &Dataset) -> Result<Spend> {
        Ok(ldp_spend(self.config.epsilon))
    }

    fn config(&self, _data: &Dataset) -> LpctConfig {
        self.config.clone()
    }

    fn fit_with(
        &self,
        data: &Dataset,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<LpctModel> {
        Ok(crate::lpct::fit(
            &self.config,
            &self.public,
            data,
            ledger,
            noise,
        )?)
    }
}

/// Params of [`LpctPrune`]: ε = 1; the depths come from Algorithm 2 (no tuning parameter).
#[derive(Clone, Debug)]
pub struct LpctPruneParams {
    config: PruneConfig,
    public: Dataset,
    check_fraction: f64,
}

impl LpctPruneParams {
    /// ε of every holder's report.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.config.epsilon = epsilon;
        self
    }
    /// The partition settings.
    pub fn tree(mut self, tree: TreeSettings) -> Self {
        self.config.tree = tree;
        self
    }
    /// Guard the estimate the walk picks at `z` standard deviations ([`crate::lpct::guard`],
    /// `docs/deviations.md#lpct-prune-significance-guard`; default: none, Algorithm 2's walk
    /// alone).
    pub fn guard(mut self, z: f64) -> Self {
        self.config.guard = Some(z);
        self
    }
    /// The share of the public rows held out from the partition to check the tree against the
    /// majority class ([`crate::held_out_check::public_check`]; 0 turns it off).
    pub fn check_fraction(mut self, fraction: f64) -> Self {
        self.check_fraction = fraction;
        self
    }
    /// Params from a whole configuration.
    pub fn from_config(config: PruneConfig, public: Dataset) -> Self {
        LpctPruneParams {
            config,
            public,
            check_fraction: crate::held_out_check::PUBLIC_FRACTION,
        }
    }
}

impl Params for LpctPruneParams {
    type Checked = LpctPrune;

    fn check(self) -> Result<LpctPrune> {
        check_epsilon(self.config.epsilon, false)?;
        for (name, p) in [("p0", self.config.p0), ("p_term", self.config.p_term)] {
            if let Some(p) = p
                && p > crate::lpct::partition::MAX_COMPLETE_DEPTH
            {
                return Err(Error::invalid(
                    name,
                    format!(
                        "must be at most {}, got {p}",
                        crate::lpct::partition::MAX_COMPLETE_DEPTH
                    ),
                ));
            }
        }
        crate::lpct::check_guard(self.config.guard)?;
        check_public(&self.public)?;
        let (public, check) = PublicCheck::split(self.public, self.check_fraction)?;
        Ok(LpctPrune {
            config: self.config,
            public,
            check,
        })
    }
}

/// The checked LPCT-prune estimator (Algorithm 2, one or two rounds of reports).
///
/// ```
/// use dpfair::estimators::LpctPrune;
/// use dpfair::{Estimator, Params, Session};
/// let public = dpfair::estimators::example_data(1_000, 2, 1);
/// let private = dpfair::estimators::example_data(5_000, 2, 2);
/// let mut session = Session::new(2.0, 0.0)?;
/// let fitted = LpctPrune::params(public).epsilon(2.0).check()?.fit(&private, &mut session)?;
/// let out = fitted.predict(&private, session.noise())?;
/// let path = std::env::temp_dir().join("dpfair-doc-lpct-prune.json");
/// fitted.save(dpfair::estimators::example_schema(2), &path)?; // `dpfair predict` reads it
/// assert_eq!(dpfair::model::ModelFile::load(&path)?.method, "lpct-prune");
/// # Ok::<(), dpfair::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct LpctPrune {
    config: PruneConfig,
    public: Dataset,
    check: Option<PublicCheck>,
}

impl LpctPrune {
    /// Params with LPCT-prune's defaults and the `public` rows.
    pub fn params(public: Dataset) -> LpctPruneParams {
        LpctPruneParams {
            config: PruneConfig::default(),
            public,
            check_fraction: crate::held_out_check::PUBLIC_FRACTION,
        }
    }
}

impl Estimator for LpctPrune {
    type Model = PruneModel;
    type Config = PruneConfig;

    fn method(&self) -> &'static str {
        "lpct-prune"
    }

    fn report(&self, fitted: &Fitted<PruneModel>, _data: &Dataset) -> Vec<String> {
        let m = &fitted.model;
        vec![
            format!(
                "LPCT-prune: p0 = {}, p_term = {}, terminated: {}, rounds: {}",
                m.p0, m.p_term, m.flag, m.rounds
            ),
            no_fairness_target("LPCT-prune"),
        ]
    }

    fn with_epsilon(&self, epsilon: f64) -> Result<LpctPrune> {
        check_epsilon(epsilon, false)?;
        let mut est = self.clone();
        est.config.epsilon = epsilon;
        Ok(est)
    }

    fn public_check(&self, model: &PruneModel, noise: &mut Noise) -> Result<Option<CheckOutcome>> {
        self.check.as_ref().map(|c| c.run(model, noise)).transpose()
    }

    fn spend(&self, _data: &Dataset) -> Result<Spend> {
        Ok(ldp_spend(self.config.epsilon))
    }

    fn config(&self, _data: &Dataset) -> PruneConfig {
        self.config.clone()
    }

    fn fit_with(
        &self,
        data: &Dataset,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<PruneModel> {
        Ok(crate::lpct::fit_prune(
            &self.config,
            &self.public,
            data,
            ledger,
            noise,
        )?)
    }
}

/// The fixed-form fairness line of a method without a fairness constraint.
/// LPCT's check against the majority class on public rows held out from the partition
/// ([`crate::held_out_check::public_check`]).
#[derive(Clone, Debug)]
struct PublicCheck {
    held_out: Dataset,
    majority: u32,
}

impl PublicCheck {
    /// Hold out `fraction` of `public` by a fixed public split (none when 0, or when either part
    /// would be empty); returns the rows that build the partition.
    fn split(public: Dataset, fraction: f64) -> Result<(Dataset, Option<PublicCheck>)> {
        crate::held_out_check::HeldOutCheck {
            fraction,
            range: None,
        }
        .check()?;
        let n = public.n_rows();
        let held = (fraction * n as f64).round() as usize;
        if held == 0 || held >= n {
            return Ok((public, None));
        }
        let ones = match &public.target {
            Some(dpfair_data::Target::Binary(y)) => y.iter().filter(|&&v| v == 1).count(),
            _ => return Ok((public, None)),
        };
        let parts = dpfair_data::split_indices(n, &[1.0 - fraction, fraction], 0x1c7c_4ec0, None)?;
        let check = PublicCheck {
            held_out: public.select(&parts[1]),
            majority: u32::from(2 * ones > n),
        };
        Ok((public.select(&parts[0]), Some(check)))
    }

    fn run<M: crate::predictor::Predictor>(
        &self,
        model: &M,
        noise: &mut Noise,
    ) -> Result<CheckOutcome> {
        crate::held_out_check::public_check(model, &self.held_out, self.majority, noise)
    }
}

fn no_fairness_target(method: &str) -> String {
    super::fairness_line(
        "nothing",
        &format!(
            "{method} has no fairness constraint and reads no groups (`dpfair evaluate \
             --sensitive COL` reports its groups' rates)"
        ),
    )
}
