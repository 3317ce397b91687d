//! `fit`: one fit through the library's pipeline ([`dpfair::pipeline::fit`]): the training frame
//! coded into a data set and its schema ([`Frame::learn`]), the method's params built from the
//! Python estimator's hyper-parameters (one adapter per method below: names and enums only),
//! checked, and fitted in a [`Session`] with the feature scaling asked for. A private search
//! (`crate::tune`) builds its candidates the same way, through [`dispatch`] and a [`Job`].

use crate::error::{api_error, data_error, guard, value_error};
use crate::frame::{FrameInput, Labels};
use crate::model::PyModel;
use crate::session::PySession;
use dpfair::decoupled::FlipRule;
use dpfair::estimators::{
    CdpFair, Decoupled, Dp2dp, DpLinear, DpLogistic, FairRegression, FdpFair, GroupThresholds,
    LogisticMechanism, Lpct, LpctPrune,
};
use dpfair::fair_regression::LinearBase;
use dpfair::model::Accounting;
use dpfair::pipeline::Scaling;
use dpfair::plugin::EtaModel;
use dpfair::{Estimator, Params, Session};
use dpfair_data::frame::Coding;
use dpfair_data::{Bounds, Dataset, Loaded, TaskKind, Unseen};
use dpfair_privacy::Noise;
use dpfair_privacy::accounting::Accountant;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeSet;

/// The hyper-parameters given, read by name; a name left unread is a bug in the Python layer.
struct Hyper<'a, 'py> {
    dict: &'a Bound<'py, PyDict>,
    read: BTreeSet<String>,
}

impl<'py> Hyper<'_, 'py> {
    /// The value of `name`, `None` when absent or `None` (the library's default).
    fn get<T>(&mut self, name: &str) -> PyResult<Option<T>>
    where
        T: for<'a> FromPyObject<'a, 'py>,
        for<'a> <T as FromPyObject<'a, 'py>>::Error: Into<PyErr>,
    {
        self.read.insert(name.to_string());
        match self.dict.get_item(name)? {
            Some(v) if !v.is_none() => v.extract::<T>().map(Some).map_err(|e| {
                let e: PyErr = e.into();
                pyo3::exceptions::PyTypeError::new_err(format!("`{name}`: {e}"))
            }),
            _ => Ok(None),
        }
    }

    /// A choice among `options` (`(python name, value)`).
    fn choice<T: Copy>(&mut self, name: &str, options: &[(&str, T)]) -> PyResult<Option<T>> {
        let Some(given) = self.get::<String>(name)? else {
            return Ok(None);
        };
        options
            .iter()
            .find(|(n, _)| *n == given)
            .map(|(_, v)| Some(*v))
            .ok_or_else(|| {
                let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
                value_error(format!(
                    "`{name}` = `{given}`: expected one of {}",
                    names.join(", ")
                ))
            })
    }

    fn accounting(&mut self) -> PyResult<Option<Accounting>> {
        self.choice(
            "accounting",
            &[("strict", Accounting::Strict), ("paper", Accounting::Paper)],
        )
    }

    /// Every name given was read.
    fn done(self) -> PyResult<()> {
        for key in self.dict.keys() {
            let key: String = key.extract()?;
            if !self.read.contains(&key) {
                return Err(value_error(format!("unknown hyper-parameter `{key}`")));
            }
        }
        Ok(())
    }
}

/// Apply `setter` when the value was given.
fn set<P, T>(params: P, value: Option<T>, setter: impl FnOnce(P, T) -> P) -> P {
    match value {
        Some(v) => setter(params, v),
        None => params,
    }
}

fn dp_logistic(h: &mut Hyper<'_, '_>) -> PyResult<DpLogistic> {
    let mut p = DpLogistic::params();
    p = set(p, h.get("epsilon")?, |p, v| p.epsilon(v));
    p = set(p, h.get("delta")?, |p, v| p.delta(v));
    let mechanisms = [
        ("dp-sgd", LogisticMechanism::DpSgd),
        ("output-perturbation", LogisticMechanism::OutputPerturbation),
    ];
    p = set(p, h.choice("mechanism", &mechanisms)?, |p, v| {
        p.mechanism(v)
    });
    p = set(p, h.get("epochs")?, |p, v| p.epochs(v));
    p = set(p, h.get("learning_rate")?, |p, v| p.learning_rate(v));
    p = set(p, h.get("clip")?, |p, v| p.clip(v));
    p = set(p, h.get("batch_size")?, |p, v| p.batch(v));
    let accountants = [
        ("rdp", Accountant::Rdp),
        ("prv", Accountant::Prv),
        ("gdp", Accountant::Gdp),
    ];
    p = set(p, h.choice("accountant", &accountants)?, |p, v| {
        p.accountant(v)
    });
    p = set(p, h.get("substitution")?, |p, v| p.substitution(v));
    p = set(p, h.get("public_rows")?, |p, v| p.public_rows(v));
    p = set(p, h.get("feature_bound")?, |p, v| p.feature_bound(v));
    p = set(p, h.get("check_fraction")?, |p, v| p.check_fraction(v));
    p.check().map_err(api_error)
}

fn dp_linear(h: &mut Hyper<'_, '_>) -> PyResult<DpLinear> {
    let mut p = DpLinear::params();
    p = set(p, h.get("epsilon")?, |p, v| p.epsilon(v));
    p = set(p, h.get("delta")?, |p, v| p.delta(v));
    p = set(p, h.get::<(f64, f64)>("target_range")?, |p, (lo, hi)| {
        p.target_range(lo, hi)
    });
    p = set(
        p,
        h.get::<(f64, f64)>("coarse_target_range")?,
        |p, (lo, hi)| p.private_target_range(lo, hi),
    );
    p = set(p, h.get("target_share")?, |p, v| p.target_share(v));
    p = set(p, h.get("row_bound")?, |p, v| p.row_bound(v));
    p = set(p, h.get("ridge")?, |p, v| p.ridge(v));
    p = set(p, h.get("check_fraction")?, |p, v| p.check_fraction(v));
    p.check().map_err(api_error)
}

fn cdp_fair(h: &mut Hyper<'_, '_>) -> PyResult<CdpFair> {
    let mut p = CdpFair::params();
    p = set(p, h.get("alpha")?, |p, v| p.alpha(v));
    p = set(p, constraint(h)?, |p, v| p.constraint(v));
    p = set(p, h.get("epsilon")?, |p, v| p.epsilon(v));
    p = set(p, h.get("delta")?, |p, v| p.delta(v));
    p = set(p, h.accounting()?, |p, v| p.accounting(v));
    p = set(p, h.get("check_fraction")?, |p, v| p.check_fraction(v));
    p = set(p, h.get("bandwidth")?, |p, v| p.bandwidth(v));
    p = set(p, h.get("frequencies")?, |p, v| p.frequencies(v));
    p = set(p, h.get("cross_fit")?, |p, v| p.cross_fit(v));
    p = set(p, h.get("tau_grid")?, |p, v| p.tau_grid(v));
    p = set(p, h.get("min_group")?, |p, v| {
        p.dd_floor(dpfair::cdp_fair::DdFloor::Public { min_group: v })
    });
    p = set(p, eta_model(h)?, |p, v| p.eta_model(v));
    p = set(p, h.get("attribute_epsilon")?, |p, v| {
        p.attribute_epsilon(v)
    });
    p.check().map_err(api_error)
}

/// The plug-in's estimator of η_a (`eta_model`): kernel, logistic, dp-sgd (CDP-Fair only) or
/// auto (the default).
fn eta_model(h: &mut Hyper<'_, '_>) -> PyResult<Option<EtaModel>> {
    h.choice(
        "eta_model",
        &[
            ("kernel", EtaModel::Kernel),
            ("logistic", EtaModel::Logistic),
            ("dp-sgd", EtaModel::DpSgd),
            ("auto", EtaModel::Auto),
        ],
    )
}

fn fdp_fair(h: &mut Hyper<'_, '_>) -> PyResult<FdpFair> {
    let mut p = FdpFair::params();
    p = set(p, h.get("alpha")?, |p, v| p.alpha(v));
    p = set(p, h.get("epsilon")?, |p, v| p.epsilon(v));
    p = set(p, h.get("delta")?, |p, v| p.delta(v));
    p = set(p, h.accounting()?, |p, v| p.accounting(v));
    p = set(p, h.get("sites")?, |p, v| p.sites(v));
    p = set(p, h.get("frequencies")?, |p, v| p.frequencies(v));
    p = set(p, eta_model(h)?, |p, v| p.eta_model(v));
    p = set(p, constraint(h)?, |p, v| p.constraint(v));
    p = set(p, h.get("attribute_epsilon")?, |p, v| {
        p.attribute_epsilon(v)
    });
    p = set(p, h.get("check_fraction")?, |p, v| p.check_fraction(v));
    p.check().map_err(api_error)
}

fn fair_regression(h: &mut Hyper<'_, '_>) -> PyResult<FairRegression> {
    let mut p = FairRegression::params();
    p = set(p, h.get("alpha")?, |p, v| p.alpha(v));
    p = set(p, h.get("epsilon")?, |p, v| p.epsilon(v));
    p = set(p, h.get("bins")?, |p, v| p.bins(v));
    p = set(p, h.get::<(f64, f64)>("score_range")?, |p, (lo, hi)| {
        p.range(lo, hi)
    });
    p = set(p, h.get::<String>("score_column")?, |p, v| {
        p.score_column(v)
    });
    let defaults = LinearBase::default();
    let base = LinearBase {
        delta: h.get("base_delta")?.unwrap_or(defaults.delta),
        row_bound: h.get("base_row_bound")?,
        ridge: h.get("base_ridge")?,
        fraction: h.get("base_fraction")?.unwrap_or(defaults.fraction),
    };
    match h.choice("base", &[("dp-linear", ())])? {
        Some(()) => p = p.base(base),
        None if base != defaults => {
            return Err(value_error(
                "base_delta, base_row_bound, base_ridge and base_fraction configure the base \
                 regressor: they need base=\"dp-linear\"",
            ));
        }
        None => {}
    }
    p = set(p, h.get("check_fraction")?, |p, v| p.check_fraction(v));
    p.check().map_err(api_error)
}

fn decoupled(h: &mut Hyper<'_, '_>) -> PyResult<Decoupled> {
    let mut p = Decoupled::params();
    p = set(p, h.get("alpha")?, |p, v| p.alpha(v));
    p = set(p, constraint(h)?, |p, v| p.constraint(v));
    let flips = h.choice(
        "flips",
        &[
            ("scores", FlipRule::Scores),
            ("fewest-changes", FlipRule::FewestChanges),
            ("midpoint", FlipRule::Midpoint),
        ],
    )?;
    p = set(p, flips, |p, v| p.flip_rule(v));
    p = set(p, h.get("epsilon")?, |p, v| p.epsilon(v));
    p = set(p, h.get("delta")?, |p, v| p.delta(v));
    p = set(p, h.accounting()?, |p, v| p.accounting(v));
    p = set(p, h.get("post_fraction")?, |p, v| p.post_fraction(v));
    p = set(p, h.get("check_fraction")?, |p, v| p.check_fraction(v));
    p = set(p, h.get("attribute_epsilon")?, |p, v| {
        p.attribute_epsilon(v)
    });
    p.check().map_err(api_error)
}

fn dp2dp(h: &mut Hyper<'_, '_>) -> PyResult<Dp2dp> {
    let mut p = Dp2dp::params();
    p = set(p, h.get("rho")?, |p, v| p.rho(v));
    p = set(p, h.get("margin_z")?, |p, v| p.margin_z(v));
    p = set(p, h.get("epsilon")?, |p, v| p.epsilon(v));
    p = set(p, h.get("delta")?, |p, v| p.delta(v));
    p = set(p, h.accounting()?, |p, v| p.accounting(v));
    p = set(p, h.get("iterations")?, |p, v| p.iterations(v));
    p = set(p, h.get("batch_size")?, |p, v| p.batch(v));
    p = set(p, h.get("pool_fraction")?, |p, v| p.pool_fraction(v));
    p = set(p, h.get("check_fraction")?, |p, v| p.check_fraction(v));
    p.check().map_err(api_error)
}

/// `constraint` (group-thresholds, CDP-Fair, FDP-Fair, decoupled) by the library's parser: its refusal
/// names `constraint` and lists the names, as the CLI's.
fn constraint(h: &mut Hyper<'_, '_>) -> PyResult<Option<dpfair::group_thresholds::Constraint>> {
    h.get::<String>("constraint")?
        .map(|name| dpfair::group_thresholds::Constraint::parse(&name).map_err(api_error))
        .transpose()
}

fn group_thresholds(h: &mut Hyper<'_, '_>) -> PyResult<GroupThresholds> {
    let mut p = GroupThresholds::params();
    p = set(p, constraint(h)?, |p, v| p.constraint(v));
    p = set(p, h.get("level")?, |p, v| p.level(v));
    p = set(p, h.get("epsilon")?, |p, v| p.epsilon(v));
    p = set(p, h.get("delta")?, |p, v| p.delta(v));
    p = set(p, h.get("table_share")?, |p, v| p.table_share(v));
    p = set(p, h.get("bins")?, |p, v| p.bins(v));
    p = set(p, h.get("epochs")?, |p, v| p.epochs(v));
    p = set(p, h.get("learning_rate")?, |p, v| p.learning_rate(v));
    p = set(p, h.get("check_fraction")?, |p, v| p.check_fraction(v));
    p = set(p, h.get("attribute_epsilon")?, |p, v| {
        p.attribute_epsilon(v)
    });
    p.check().map_err(api_error)
}

/// LPCT's partition settings: splitter, criterion, leaf size and the seed of public randomness.
fn tree(h: &mut Hyper<'_, '_>, seed: Option<u64>) -> PyResult<dpfair::lpct::TreeSettings> {
    use dpfair::lpct::{Criterion, Growth, Splitter};
    let mut t = dpfair::lpct::TreeSettings {
        splitter: dpfair::lpct::DEFAULT_FIT_SPLITTER,
        ..Default::default()
    };
    let splitters = [
        ("max-edge", Splitter::MaxEdge),
        ("random-max-edge", Splitter::RandomMaxEdge),
        ("cart", Splitter::Cart),
    ];
    if let Some(s) = h.choice("splitter", &splitters)? {
        t.splitter = s;
    }
    let criteria = [("gini", Criterion::Gini), ("entropy", Criterion::Entropy)];
    if let Some(c) = h.choice("criterion", &criteria)? {
        t.criterion = c;
    }
    if let Some(n) = h.get("min_samples_leaf")? {
        t.growth = Growth::Practical {
            min_samples_split: 1,
            min_samples_leaf: n,
        };
    }
    t.seed = seed.unwrap_or(0);
    Ok(t)
}

/// The LPCTs' significance guard, as the CLI's `--guard`: `guard` standard deviations
/// ([`dpfair::lpct::guard::DEFAULT_Z`] when not given), 0 for none (the paper's rule).
fn lpct_guard(h: &mut Hyper<'_, '_>) -> PyResult<Option<f64>> {
    let z = h
        .get::<f64>("guard")?
        .unwrap_or(dpfair::lpct::guard::DEFAULT_Z);
    Ok((z != 0.0).then_some(z))
}

fn lpct(h: &mut Hyper<'_, '_>, public: Dataset, seed: Option<u64>) -> PyResult<Lpct> {
    let mut p = Lpct::params(public);
    p = set(p, h.get("epsilon")?, |p, v| p.epsilon(v));
    p = set(p, h.get("depth")?, |p, v| p.depth(v));
    p = set(p, h.get("public_weight")?, |p, v| p.lambda(v));
    p = set(p, lpct_guard(h)?, |p, z| p.guard(z));
    p = set(p, h.get("check_fraction")?, |p, v| p.check_fraction(v));
    p = p.tree(tree(h, seed)?);
    p.check().map_err(api_error)
}

fn lpct_prune(h: &mut Hyper<'_, '_>, public: Dataset, seed: Option<u64>) -> PyResult<LpctPrune> {
    let mut p = LpctPrune::params(public);
    p = set(p, h.get("epsilon")?, |p, v| p.epsilon(v));
    p = set(p, lpct_guard(h)?, |p, z| p.guard(z));
    p = set(p, h.get("check_fraction")?, |p, v| p.check_fraction(v));
    p = p.tree(tree(h, seed)?);
    p.check().map_err(api_error)
}

/// `[(column, lo, hi)]` as bounds, checked by the library as `--bounds` is (finite, `lo < hi`,
/// once per column; the message names the column and `parameter`).
pub fn bounds(list: Option<Vec<(String, f64, f64)>>, parameter: &'static str) -> PyResult<Bounds> {
    let mut b = Bounds::default();
    for (column, lo, hi) in list.into_iter().flatten() {
        b.insert(&column, lo, hi, parameter).map_err(data_error)?;
    }
    Ok(b)
}

/// The feature scaling, as the CLI's (`docs/privacy.md`): `unscaled` none; public `bounds`
/// where given (free); the other numeric columns' bounds estimated privately with
/// `bounds_share` of ε, within `coarse_bounds` when given, from the public log grid otherwise.
/// `accounting="paper"` keeps only the public bounds, as the paper's procedure does. Also
/// returns the public bounds (whose midpoints fill missing numeric cells).
fn scaling(h: &mut Hyper<'_, '_>) -> PyResult<(Scaling, Bounds)> {
    let given = h.get::<Vec<(String, f64, f64)>>("bounds")?;
    let public = bounds(given.clone(), "bounds")?;
    let coarse = h.get::<Vec<(String, f64, f64)>>("coarse_bounds")?;
    let share = h
        .get::<f64>("bounds_share")?
        .unwrap_or(dpfair::pipeline::DEFAULT_BOUNDS_SHARE);
    if h.get::<bool>("unscaled")?.unwrap_or(false) {
        if given.is_some() || coarse.is_some() {
            return Err(value_error(
                "unscaled=True leaves every feature as it is: drop bounds and coarse_bounds",
            ));
        }
        return Ok((Scaling::None, public));
    }
    let scaling = match coarse {
        None => Scaling::Auto {
            public: public.clone(),
            share,
        },
        coarse => Scaling::Private {
            public: public.clone(),
            coarse: bounds(coarse, "coarse_bounds")?,
            share,
        },
    };
    scaling.check().map_err(api_error)?;
    let paper = h
        .dict
        .get_item("accounting")?
        .is_some_and(|a| a.extract::<String>().is_ok_and(|a| a == "paper"));
    if paper {
        return Ok((scaling.for_paper_procedure(), public));
    }
    Ok((scaling, public))
}

/// The one scaling of every candidate (a search scales the rows once), with its public bounds.
fn one_scaling(hypers: &mut [Hyper<'_, '_>]) -> PyResult<(Scaling, Bounds)> {
    let mut each = hypers.iter_mut().map(scaling);
    let first = each
        .next()
        .ok_or_else(|| value_error("a search needs at least one candidate"))??;
    for other in each {
        if !same_scaling(&first.0, &other?.0) {
            return Err(value_error(
                "bounds, coarse_bounds, bounds_share, unscaled and accounting must scale the \
                 features alike in every candidate: a search scales the rows once",
            ));
        }
    }
    Ok(first)
}

/// Whether two scalings are the same.
fn same_scaling(a: &Scaling, b: &Scaling) -> bool {
    match (a, b) {
        (Scaling::None, Scaling::None) => true,
        (Scaling::Public(p), Scaling::Public(q)) => p == q,
        (
            Scaling::Auto {
                public: p,
                share: s,
            },
            Scaling::Auto {
                public: q,
                share: t,
            },
        ) => p == q && s == t,
        (
            Scaling::Private {
                public: p,
                coarse: c,
                share: s,
            },
            Scaling::Private {
                public: q,
                coarse: d,
                share: t,
            },
        ) => p == q && c == d && s == t,
        _ => false,
    }
}

/// The coding of the target and groups: `positive`, `task`, declared `groups` and `classes`.
///
/// The task is required: the Python estimator knows whether it is a classifier. Left to the
/// CSV loader's inference, a numeric text target with fractional values would be read as a
/// regression target for a classifier (a panic in the frame coding, not an error).
fn coding(dict: &Bound<'_, PyDict>) -> PyResult<Coding> {
    let mut h = Hyper {
        dict,
        read: BTreeSet::new(),
    };
    let task = h.choice(
        "task",
        &[
            ("binary", TaskKind::Binary),
            ("multiclass", TaskKind::Multiclass),
            ("regression", TaskKind::Regression),
        ],
    )?;
    let Some(task) = task else {
        return Err(value_error(
            "the coding needs `task`: binary, multiclass or regression",
        ));
    };
    let coding = Coding {
        positive: h.get("positive")?,
        task: Some(task),
        groups: h.get("groups")?,
        classes: h.get("classes")?,
        fill: Bounds::default(),
    };
    h.done()?;
    Ok(coding)
}

/// A regression target must come as numbers: text labels would be coded as classes and then
/// read as a real target (a panic in the frame coding, not an error).
fn real_target_is_numbers(frame: &FrameInput<'_>, coding: &Coding) -> PyResult<()> {
    match (&frame.target, coding.task) {
        (Some((name, Labels::Factor(_))), Some(TaskKind::Regression)) => Err(value_error(format!(
            "target `{name}`: a regression target must be numbers, got text labels"
        ))),
        _ => Ok(()),
    }
}

/// What is done with the estimators a method's builder made, one per hyper-parameter dict: one
/// fit ([`fit`]) or a private search ([`crate::tune`]).
pub(crate) trait Job {
    /// Run on `loaded`, scaled by `scaling`, with the GIL released while the library works.
    fn run<E>(
        self,
        py: Python<'_>,
        estimators: Vec<E>,
        loaded: Loaded,
        scaling: &Scaling,
    ) -> PyResult<PyModel>
    where
        E: Estimator + Sync,
        E::Model: Send;
}

/// How many threads a fit may use: scikit-learn's `n_jobs` (BENCHMARKS.md, "Fits in threads").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Jobs {
    /// One thread (`n_jobs` None or 1, scikit-learn's default): the work runs on a rayon pool of
    /// one thread, so the library's parallel parts use that thread alone and DP-SGD starts no
    /// drawing thread (it keeps one thread on a rayon worker). Two fits in two Python threads
    /// then share two cores without crowding them. The model is the same either way.
    One,
    /// The cores the library finds useful (`n_jobs` −1 or ≥ 2, or < −1): DP-SGD's drawing
    /// thread when it pays off, rayon's global pool.
    Auto,
}

impl Jobs {
    /// From scikit-learn's `n_jobs`; 0 is refused, as scikit-learn refuses it.
    pub(crate) fn of(n_jobs: Option<i64>) -> PyResult<Jobs> {
        match n_jobs {
            None | Some(1) => Ok(Jobs::One),
            Some(0) => Err(value_error(
                "n_jobs == 0 has no meaning: give None or 1 (one thread), or -1 or k ≥ 2 (the \
                 cores the library finds useful)",
            )),
            Some(_) => Ok(Jobs::Auto),
        }
    }

    /// Runs `work` on the threads this allows.
    fn run<T: Send>(self, work: impl FnOnce() -> T + Send) -> T {
        match self {
            Jobs::Auto => work(),
            Jobs::One => match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
                Ok(pool) => pool.install(work),
                // No thread to be had: the caller's, which DP-SGD may pair with a drawer.
                Err(_) => work(),
            },
        }
    }
}

/// Run `work` in the caller's session, or in a session of its own (whose budget is what `work`
/// declares; `seed` seeds only its public randomness), on the threads `jobs` allows, with the
/// GIL released: other Python threads (another fit among them) run meanwhile.
pub(crate) fn in_session<T: Send>(
    py: Python<'_>,
    session: Option<&Bound<'_, PySession>>,
    seed: Option<u64>,
    jobs: Jobs,
    work: impl FnOnce(&mut Session) -> dpfair::Result<T> + Send,
) -> PyResult<T> {
    match session {
        Some(s) => {
            let mut held = s.borrow_mut();
            let session = &mut held.session;
            py.detach(|| jobs.run(|| work(session)))
        }
        None => {
            let noise = match seed {
                Some(seed) => Noise::os_with_public_seed(seed),
                None => Noise::os(),
            };
            let mut own = Session::unlimited().with_noise(noise);
            py.detach(|| jobs.run(|| work(&mut own)))
        }
    }
    .map_err(api_error)
}

/// One fit, in the caller's session or in one of its own.
struct Fit<'a, 'py> {
    session: Option<&'a Bound<'py, PySession>>,
    seed: Option<u64>,
    jobs: Jobs,
}

impl Job for Fit<'_, '_> {
    fn run<E>(
        self,
        py: Python<'_>,
        estimators: Vec<E>,
        mut loaded: Loaded,
        scaling: &Scaling,
    ) -> PyResult<PyModel>
    where
        E: Estimator + Sync,
        E::Model: Send,
    {
        let Ok([estimator]) = <[E; 1]>::try_from(estimators) else {
            return Err(value_error("a fit takes one set of hyper-parameters"));
        };
        let fitted = in_session(py, self.session, self.seed, self.jobs, |session| {
            dpfair::pipeline::fit(&estimator, &mut loaded, scaling, session)
        })?;
        let warnings = dpfair::pipeline::bounds_epsilon_per_column(&fitted.ledger)
            .and_then(|each| dpfair::pipeline::bounds_warning(each, fitted.rows))
            .into_iter()
            .collect();
        let file = fitted.to_model_file(loaded.schema).map_err(api_error)?;
        Ok(PyModel { file, warnings })
    }
}

/// Each dict's estimator, built by `build`; every name a dict gives must be read.
fn build_each<'py, E>(
    hypers: Vec<Hyper<'_, 'py>>,
    mut build: impl FnMut(&mut Hyper<'_, 'py>) -> PyResult<E>,
) -> PyResult<Vec<E>> {
    hypers
        .into_iter()
        .map(|mut h| {
            let est = build(&mut h)?;
            h.done()?;
            Ok(est)
        })
        .collect()
}

/// Fit `method` with hyper-parameters `params` on `frame` (see the module docs). LPCT and
/// LPCT-prune learn the schema from `public` (the public rows) and read `frame` (the private
/// rows) with it.
#[pyfunction]
#[pyo3(signature = (
    method, params, frame, coding_options, session = None, seed = None, public = None, n_jobs = None
))]
#[allow(clippy::too_many_arguments)]
pub fn fit(
    method: &str,
    params: &Bound<'_, PyDict>,
    frame: FrameInput<'_>,
    coding_options: &Bound<'_, PyDict>,
    session: Option<&Bound<'_, PySession>>,
    seed: Option<u64>,
    public: Option<FrameInput<'_>>,
    n_jobs: Option<i64>,
) -> PyResult<PyModel> {
    let job = Fit {
        session,
        seed,
        jobs: Jobs::of(n_jobs)?,
    };
    let params = std::slice::from_ref(params);
    guard(|| dispatch(method, params, frame, coding_options, seed, public, job))
}

/// Build `method`'s estimator from each of `params` (one dict of hyper-parameters each), code
/// `frame` (with `public`'s schema for LPCT and LPCT-prune) and hand both to `job`.
pub(crate) fn dispatch<J: Job>(
    method: &str,
    params: &[Bound<'_, PyDict>],
    frame: FrameInput<'_>,
    coding_options: &Bound<'_, PyDict>,
    seed: Option<u64>,
    public: Option<FrameInput<'_>>,
    job: J,
) -> PyResult<PyModel> {
    let py = coding_options.py();
    let mut hypers: Vec<Hyper<'_, '_>> = params
        .iter()
        .map(|dict| Hyper {
            dict,
            read: BTreeSet::new(),
        })
        .collect();
    let coding = coding(coding_options)?;
    real_target_is_numbers(&frame, &coding)?;
    if let Some(public) = &public {
        real_target_is_numbers(public, &coding)?;
    }
    if let ("lpct" | "lpct-prune", Some(public)) = (method, &public) {
        // Both data sets are built with the GIL released (read-only views of the caller's
        // arrays). The private rows take the public rows' schema: a value those lack is
        // coded as a missing one (docs/privacy.md, "Feature bounds").
        let (public_view, private_view) = (public.frame()?, frame.frame()?);
        let (public, private) = py
            .detach(|| {
                let public = public_view.learn(&coding)?;
                let private = private_view.apply_with(&public.schema, Unseen::AsMissing)?;
                Ok((public, private))
            })
            .map_err(data_error)?;
        let loaded = Loaded {
            dataset: private,
            schema: public.schema.clone(),
            report: public.report.clone(),
        };
        let rows = &public.dataset;
        return if method == "lpct" {
            let ests = build_each(hypers, |h| lpct(h, rows.clone(), seed))?;
            job.run(py, ests, loaded, &Scaling::None)
        } else {
            let ests = build_each(hypers, |h| lpct_prune(h, rows.clone(), seed))?;
            job.run(py, ests, loaded, &Scaling::None)
        };
    }
    let (scaling, public) = one_scaling(&mut hypers)?;
    // Missing numeric cells: the midpoints of the public bounds, else 0 (as the CLI).
    let coding = Coding {
        fill: public,
        ..coding
    };
    // The data set is built with the GIL released (the rows are read-only views of the
    // caller's arrays, held for the call): other Python threads run meanwhile.
    let view = frame.frame()?;
    let loaded = py.detach(|| view.learn(&coding)).map_err(data_error)?;
    macro_rules! with {
        ($build:expr) => {{
            let ests = build_each(hypers, $build)?;
            job.run(py, ests, loaded, &scaling)
        }};
    }
    match method {
        "dp-logistic" => with!(dp_logistic),
        "dp-linear" => with!(dp_linear),
        "cdp-fair" => with!(cdp_fair),
        "fdp-fair" => with!(fdp_fair),
        "fair-regression" => {
            let ests = build_each(hypers, fair_regression)?;
            // On scores: clipped to the public score range, never scaled (as the CLI).
            let scaling = if ests.iter().any(FairRegression::on_scores) {
                Scaling::None
            } else {
                scaling
            };
            job.run(py, ests, loaded, &scaling)
        }
        "decoupled" => with!(decoupled),
        "dp2dp" => with!(dp2dp),
        "group-thresholds" => with!(group_thresholds),
        "lpct" | "lpct-prune" => Err(value_error(format!(
            "{method} needs public rows: fit(X, y, X_public=..., y_public=...)"
        ))),
        other => Err(value_error(format!("unknown method `{other}`"))),
    }
}
