//! [`Lpct`] and [`LpctPrune`]: locally private classification trees that use public data (Ma &
//! Yang; [`crate::lpct`]). The public rows (in the params) build the partition; each private row
//! is one holder whose ε-LDP report is simulated here exactly as the holder's own device would
//! make it (`dpfair ldp` runs the real client/collector protocol).

use super::check_epsilon;
use crate::error::{Error, Result};
use crate::estimator::{Estimator, Fitted, Params};
use crate::held_out_check::CheckOutcome;
use crate::lpct::{LpctConfig, LpctModel, PruneConfig, PruneModel, TreeClassifier, TreeSettings};
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
    /// The share of the public rows in each fold of the cross-validated check of the tree
    /// against the public majority class (default [`crate::held_out_check::PUBLIC_FRACTION`]:
    /// five folds; 0 turns it off). Every public row builds the partition.
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
        let check = PublicCheck::new(&self.public, self.check_fraction)?;
        Ok(Lpct {
            config: self.config,
            public: self.public,
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

    fn public_check(&self, model: &LpctModel, _noise: &mut Noise) -> Result<Option<CheckOutcome>> {
        self.check
            .as_ref()
            .map(|c| {
                c.run(
                    &self.public,
                    &self.config.tree,
                    model.depth,
                    self.config.guard,
                )
            })
            .transpose()
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
    /// The share of the public rows in each fold of the cross-validated check (as
    /// [`LpctParams::check_fraction`]; 0 turns it off).
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
        let check = PublicCheck::new(&self.public, self.check_fraction)?;
        Ok(LpctPrune {
            config: self.config,
            public: self.public,
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

    fn public_check(&self, model: &PruneModel, _noise: &mut Noise) -> Result<Option<CheckOutcome>> {
        let depth = model.p_term;
        self.check
            .as_ref()
            .map(|c| c.run(&self.public, &self.config.tree, depth, self.config.guard))
            .transpose()
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
/// LPCT's check against the public majority class, cross-validated on the public rows (no
/// privacy cost; docs/privacy.md, "The held-out check"): every public row builds the model's
/// partition, and every public row is held out once, predicted by a tree of the model's depth
/// built (with the model's settings) on the other folds, each leaf labelled by those folds'
/// rows in it under the model's significance guard ([`crate::lpct::guard::guarded_eta`] on
/// public rows only: a leaf within the guard's z standard deviations of 1/2 takes its nearest
/// significant ancestor's rate; none when the model has none). LPCT-prune's trees are checked
/// at the depth its walk ended at (`p_term`), not at its deepest partition, whose leaves of one
/// or two public rows the walk prunes away. Pooled over the folds, the sign test of
/// [`crate::held_out_check::sign_test`] against each fold's training majority decides. The
/// check's trees use public labels only: the model's leaves mix them with the holders' reports
/// (λ-weighted), whose weight is small wherever the leaves are many. Holding a fifth out of the
/// partition instead lost good trees: on the README's diabetes example (200 public rows) the 40
/// held-out rows kept a CART tree of 0.736 held-out accuracy in none of three fits against the
/// majority's 0.658.
#[derive(Clone, Debug)]
struct PublicCheck {
    folds: usize,
    majority: u32,
}

/// The public seed of the check's folds.
const FOLD_SEED: u64 = 0x1c7c_4ec0;

impl PublicCheck {
    /// Folds of `fraction` of the public rows each (round(1/`fraction`) of them); none when
    /// `fraction` is 0, when that gives fewer than two folds, or fewer than two rows a fold.
    fn new(public: &Dataset, fraction: f64) -> Result<Option<PublicCheck>> {
        crate::held_out_check::HeldOutCheck {
            fraction,
            range: None,
        }
        .check()?;
        let n = public.n_rows();
        let folds = if fraction > 0.0 {
            (1.0 / fraction).round() as usize
        } else {
            0
        };
        let Some(dpfair_data::Target::Binary(y)) = &public.target else {
            return Ok(None);
        };
        if folds < 2 || n < 2 * folds {
            return Ok(None);
        }
        let ones = y.iter().filter(|&&v| v == 1).count();
        Ok(Some(PublicCheck {
            folds,
            majority: u32::from(2 * ones > n),
        }))
    }

    /// The check of a model of `depth` built with `settings` from `public` (struct docs).
    fn run(
        &self,
        public: &Dataset,
        settings: &TreeSettings,
        depth: u32,
        guard: Option<f64>,
    ) -> Result<CheckOutcome> {
        let n = public.n_rows();
        let parts = dpfair_data::split_indices(
            n,
            &vec![1.0 / self.folds as f64; self.folds],
            FOLD_SEED,
            None,
        )?;
        let (mut differ, mut wins) = (0usize, 0usize);
        for (f, held) in parts.iter().enumerate() {
            let rest: Vec<usize> = parts
                .iter()
                .enumerate()
                .filter(|&(g, _)| g != f)
                .flat_map(|(_, rows)| rows.iter().copied())
                .collect();
            let train = public.select(&rest);
            let (x, y) = crate::lpct::binary_xy(&train, "public data")?;
            let tree = crate::lpct::partition(settings, depth, &train)?;
            let leaves = tree.n_leaves();
            let sums = crate::lpct::LeafSums {
                // No holders: the public rows alone (λ = ∞ below).
                private: crate::lpct::NoisySums {
                    count: vec![0.0; leaves],
                    positive: vec![0.0; leaves],
                    n_users: 0,
                    epsilon: 1.0,
                    mechanism: Default::default(),
                },
                public: tree.leaf_counts(x, y)?,
            };
            let eta = crate::lpct::guard::guarded_eta(
                &tree,
                &sums,
                f64::INFINITY,
                settings.ratio,
                guard.unwrap_or(0.0),
            );
            let ones = y.iter().filter(|&&v| v == 1).count();
            let classifier = TreeClassifier::new(tree, eta, settings.out_of_range)?;
            let test = public.select(held);
            let (xt, yt) = crate::lpct::binary_xy(&test, "public data")?;
            let majority = u8::from(2 * ones > y.len());
            for (&p, &t) in classifier.predict(xt)?.iter().zip(yt) {
                if p != majority {
                    differ += 1;
                    wins += usize::from(p == t);
                }
            }
        }
        let beats = crate::held_out_check::sign_test(differ, wins);
        Ok(CheckOutcome {
            rows: n,
            classes: 2,
            epsilon: 0.0,
            handicap: 0.0,
            constant: (!beats).then_some(self.majority),
            value: None,
            public: true,
            folds: self.folds as u32,
        })
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
