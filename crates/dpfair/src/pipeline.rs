//! The fit pipeline every front end shares (the CLI's `fit` commands, the Python package):
//! feature scaling (public bounds, or private bounds paid from the fit's budget), then the
//! method, in one [`Session`] run so that the model's ledger holds both.
//!
//! ```
//! use dpfair::estimators::CdpFair;
//! use dpfair::pipeline::{Scaling, fit};
//! use dpfair::{Params, Session};
//! # let dataset = dpfair::estimators::example_data(1_000, 2, 1);
//! # let schema = dpfair::estimators::example_schema(2);
//! let mut loaded = dpfair::data::Loaded::in_memory(dataset, schema);
//! let est = CdpFair::params().epsilon(1.0).delta(1e-6).frequencies(64).check()?;
//! let scaling = Scaling::Public(dpfair::data::Bounds::parse("x0:0:1,x1:0:1")?);
//! let mut session = Session::new(1.0, 1e-6)?;
//! let fitted = fit(&est, &mut loaded, &scaling, &mut session)?;
//! let file = fitted.to_model_file(loaded.schema.clone())?;
//! # Ok::<(), dpfair::Error>(())
//! ```
//!
//! Without public bounds, [`Scaling::default()`] estimates them privately with 5% of the fit's
//! ε ([`Scaling::Auto`]; docs/privacy.md, "Feature bounds"), and the ledger shows the cost:
//!
//! ```
//! use dpfair::estimators::CdpFair;
//! use dpfair::pipeline::{Scaling, fit};
//! use dpfair::{Params, Session};
//! # let dataset = dpfair::estimators::example_data(1_000, 2, 1);
//! # let schema = dpfair::estimators::example_schema(2);
//! let mut loaded = dpfair::data::Loaded::in_memory(dataset, schema);
//! let est = CdpFair::params().epsilon(1.0).delta(1e-6).frequencies(64).check()?;
//! let mut session = Session::new(1.0, 1e-6)?;
//! let fitted = fit(&est, &mut loaded, &Scaling::default(), &mut session)?;
//! let bounds = fitted.ledger.entries().iter().filter(|e| e.label.starts_with("feature bounds"));
//! assert_eq!(bounds.count(), 2 * 2); // two numeric columns, two releases each
//! # Ok::<(), dpfair::Error>(())
//! ```

mod held_out;

use crate::error::{Error, Result};
use crate::estimator::row_count::{public_rows, public_size};
use crate::estimator::{Estimator, Fitted, config_json};
use crate::session::Session;
use dpfair_data::{Bounds, Loaded, MinMax, PrivateBounds, Scaling as FittedScaling};
use dpfair_privacy::ledger::readable;
use dpfair_privacy::mechanisms::AutoRange;
use dpfair_privacy::{Ledger, Noise, Relation};

/// The default share of ε spent on private feature bounds: the least share of
/// [`Scaling::Auto`], which raises it on small data ([`auto_bounds_share`]).
pub const DEFAULT_BOUNDS_SHARE: f64 = 0.05;

/// The share of ε for private feature bounds is a finite number in (0, 1): checked wherever it
/// is given, even when no bounds are estimated (`--unscaled`), so that a bad value is refused
/// rather than ignored (issue #41).
pub fn check_bounds_share(share: f64) -> Result<()> {
    if share.is_finite() && share > 0.0 && share < 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            "bounds_share",
            format!("must be a finite number in (0, 1) (a share of ε), got {share}"),
        ))
    }
}

/// The largest share [`auto_bounds_share`] raises the bounds' share to: half of ε. Above it the
/// bounds would cost more than the model they serve; up to it, a larger share only multiplies
/// the method's noise by `(1 − least)/(1 − share)` (≤ 2: at most the loss of fitting on half the
/// rows), while bounds whose failure bound reaches 1 leave columns squashed or clipped. Where
/// even half of ε is too little, the fit warns ([`bounds_warning`]; docs/privacy.md,
/// "Feature bounds").
pub const MAX_AUTO_BOUNDS_SHARE: f64 = 0.5;

/// The ε per column at which the automatic bounds
/// ([`dpfair_privacy::mechanisms::auto_range`]: a median and a MAD release, 60/40 of the
/// column's ε) fail with probability at most `e^{-margin}` on `rows` rows: their candidates
/// beyond the data score ⌊n/2⌋ below the best, so the failure probability is at most
/// `2690·exp(−0.3·ε·⌊n/2⌋) + 85·exp(−0.2·ε·⌊n/2⌋)`
/// ([`dpfair_privacy::mechanisms::AutoRange::epsilon_needed`]; docs/privacy.md, "Feature bounds").
///
/// ```
/// use dpfair::pipeline::bounds_epsilon_needed;
/// // 2,000 rows need ε ≈ 0.044 per column for a margin of e⁻⁴ (0.10 before issue #40).
/// assert!((bounds_epsilon_needed(2000, 4.0) - 0.0439).abs() < 1e-3);
/// ```
pub fn bounds_epsilon_needed(rows: usize, margin: f64) -> f64 {
    AutoRange::epsilon_needed(rows, margin)
}

/// The share of `epsilon` that [`Scaling::Auto`] spends on the bounds of `columns` columns on
/// `rows` rows: at least `least`, raised so that each column gets
/// [`bounds_epsilon_needed`]`(rows, 4)` (its bounds fail with probability at most e⁻⁴ ≈ 2%),
/// but never above [`MAX_AUTO_BOUNDS_SHARE`] (nor below `least`). A public rule: it reads the
/// schema's column count and the row count, which the methods' own calibration (DP-SGD's
/// sampling rate, the plug-in's δ) already treats as public.
///
/// ```
/// use dpfair::pipeline::auto_bounds_share;
/// // Adult: 6 columns on 30,162 rows at ε = 1 keep the default 5%.
/// assert_eq!(auto_bounds_share(0.05, 6, 30_162, 1.0), 0.05);
/// // 3 columns on 2,000 rows at ε = 2 need ≈ 6.6%.
/// assert!((auto_bounds_share(0.05, 3, 2_000, 2.0) - 0.066).abs() < 1e-3);
/// // 7 columns on 700 rows at ε = 2 get ≈ 44%, below the 50% cap.
/// assert!((auto_bounds_share(0.05, 7, 700, 2.0) - 0.439).abs() < 1e-3);
/// ```
pub fn auto_bounds_share(least: f64, columns: usize, rows: usize, epsilon: f64) -> f64 {
    if columns == 0 || !epsilon.is_finite() {
        return least;
    }
    let needed = columns as f64 * bounds_epsilon_needed(rows, 4.0) / epsilon;
    needed.min(MAX_AUTO_BOUNDS_SHARE).max(least)
}

/// The ε each column's private feature bounds were charged in `ledger` (the bounds' total
/// over their columns), or `None` when the ledger holds no such release: what
/// [`bounds_warning`] reads after a fit, from the ledger alone.
///
/// ```
/// use dpfair::estimators::CdpFair;
/// use dpfair::pipeline::{Scaling, bounds_epsilon_per_column, fit};
/// use dpfair::{Params, Session};
/// # let dataset = dpfair::estimators::example_data(1_000, 2, 1);
/// # let schema = dpfair::estimators::example_schema(2);
/// let mut loaded = dpfair::data::Loaded::in_memory(dataset, schema);
/// let est = CdpFair::params().epsilon(1.0).delta(1e-6).frequencies(64).check()?;
/// let fitted = fit(&est, &mut loaded, &Scaling::default(), &mut Session::new(1.0, 1e-6)?)?;
/// // Two numeric columns share the bounds' ε (5% of ε = 1, raised on 900 fit rows).
/// let each = bounds_epsilon_per_column(&fitted.ledger).unwrap();
/// assert!((0.025..=0.25).contains(&each), "{each}");
/// assert_eq!(bounds_epsilon_per_column(&dpfair::privacy::Ledger::unlimited()), None);
/// # Ok::<(), dpfair::Error>(())
/// ```
pub fn bounds_epsilon_per_column(ledger: &Ledger) -> Option<f64> {
    let mut columns = std::collections::BTreeSet::new();
    let mut spent = 0.0;
    for e in ledger.entries() {
        if let Some(rest) = e.label.strip_prefix(dpfair_data::preprocess::BOUNDS_LABEL) {
            columns.insert(rest.split('`').nth(1).unwrap_or(rest).to_string());
            if let dpfair_privacy::Cost::Pure { epsilon } = e.cost {
                spent += epsilon;
            }
        }
    }
    (!columns.is_empty()).then(|| spent / columns.len() as f64)
}

/// A warning when automatic private bounds at `eps_column` per column on `rows` rows (public
/// numbers) are weak, else `None`. Below [`bounds_epsilon_needed`]`(rows, 0)`, where the bound
/// on their failure probability reaches 1, they are no better than a guess: columns may end up
/// squashed or clipped and the model no better than a constant, which the held-out check then
/// chooses; the message says what would suffice (the rows at this ε,
/// [`AutoRange::rows_needed`]). Below [`bounds_epsilon_needed`]`(rows, 2)` they are likely too
/// coarse to help. The fit goes on either way (it refused below the first level before issue
/// #40: a refusal is no more useful than the constant, and a model whose other columns carry
/// the signal can still beat it; docs/privacy.md, "Feature bounds"). Every front end prints
/// this line: the CLI's fits and `compare`, Python's `BoundsWarning`.
///
/// ```
/// use dpfair::pipeline::bounds_warning;
/// // Communities: 100 columns on 1,395 rows at ε = 0.5 (ε = 0.005 per column) are a guess…
/// let w = bounds_warning(0.005, 1_395).unwrap();
/// assert!(w.contains("no better than a guess") && w.contains("n ≥ 11,074 rows"), "{w}");
/// // …7 columns on 700 rows at ε = 1 (ε = 0.143 each) are reliable.
/// assert_eq!(bounds_warning(1.0 / 7.0, 700), None);
/// ```
pub fn bounds_warning(eps_column: f64, rows: usize) -> Option<String> {
    if !eps_column.is_finite() {
        return None;
    }
    let fixes = "give public bounds (--bounds or --bounds-file; `bounds=` in Python), coarse \
                 ranges (--coarse-bounds; `coarse_bounds=`), fewer feature columns (--features, \
                 --drop) or a larger ε";
    if eps_column < bounds_epsilon_needed(rows, 0.0) {
        let rows_needed = match AutoRange::rows_needed(eps_column, 0.0) {
            usize::MAX => "more rows than can be counted".to_string(),
            n => format!("n ≥ {} rows", thousands(n)),
        };
        return Some(format!(
            "warning: private bounds at ε = {} per column are no better than a guess on this many \
             rows (docs/privacy.md, \"Feature bounds\"): columns may end up squashed or clipped \
             and the model no better than a constant, which the held-out check then chooses; \
             {rows_needed} would suffice at this ε; {fixes}",
            readable(eps_column)
        ));
    }
    (eps_column < bounds_epsilon_needed(rows, 2.0)).then(|| {
        format!(
            "warning: private bounds at ε = {} per column are likely too coarse to help on this \
             many rows (a column may end up squashed or clipped); {fixes}",
            readable(eps_column)
        )
    })
}

/// `n` with a comma every three digits (11,074).
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How features are scaled to `[0, 1]` before the method sees them. The default is
/// [`Scaling::Auto`] with no public bounds and [`DEFAULT_BOUNDS_SHARE`]: every numeric column
/// gets private bounds from a data-independent log-scale grid (docs/privacy.md, "Feature
/// bounds").
#[derive(Clone, Debug)]
pub enum Scaling {
    /// Used as they are (one-hot columns are 0/1; numeric columns raw).
    None,
    /// Min–max scaling with public bounds (free), clipping to them; a column without bounds is
    /// an error, except binary (0/1) columns, which are [0, 1] by their type.
    Public(Bounds),
    /// Public bounds where given, binary columns [0, 1]; the other numeric columns privately
    /// within `coarse` ranges where given, from the public log grid otherwise
    /// ([`dpfair_privacy::mechanisms::auto_range`]), with `share` of the fit's ε.
    Private {
        public: Bounds,
        coarse: Bounds,
        share: f64,
    },
    /// [`Scaling::Private`] without coarse ranges: what a fit does when nothing is said.
    Auto { public: Bounds, share: f64 },
}

impl Default for Scaling {
    fn default() -> Self {
        Scaling::Auto {
            public: Bounds::default(),
            share: DEFAULT_BOUNDS_SHARE,
        }
    }
}

/// What private bounds spend in total when the fit is a non-private reference (`ε = ∞`): a
/// large finite ε, so the releases are near exact (the model says NOT private anyway).
const REFERENCE_BOUNDS_EPSILON: f64 = 1000.0;

impl Scaling {
    /// Whether no scaling is asked for.
    pub fn is_none(&self) -> bool {
        matches!(self, Scaling::None)
    }

    /// The share of ε spent on private bounds (0 for `None` and `Public`).
    pub fn share(&self) -> f64 {
        match self {
            Scaling::Private { share, .. } | Scaling::Auto { share, .. } => *share,
            _ => 0.0,
        }
    }

    /// The share of `epsilon` this scaling spends on `loaded`: [`Scaling::share`], raised for
    /// [`Scaling::Auto`] by [`auto_bounds_share`] (public: the column count and `rows`, the
    /// fit's public row count, [`public_rows`]).
    pub fn share_on(&self, loaded: &Loaded, rows: usize, epsilon: f64) -> f64 {
        match self {
            Scaling::Auto { share, .. } => {
                let columns = self.plan(loaded).map_or(0, |p| p.private.len());
                auto_bounds_share(*share, columns, rows, epsilon)
            }
            other => other.share(),
        }
    }

    /// How each column of `loaded` will be scaled, before any release (schema information:
    /// names, types, levels); `None` without scaling.
    pub fn plan(&self, loaded: &Loaded) -> Option<dpfair_data::BoundsPlan> {
        let public = match self {
            Scaling::None => return None,
            Scaling::Public(b)
            | Scaling::Private { public: b, .. }
            | Scaling::Auto { public: b, .. } => b,
        };
        Some(dpfair_data::BoundsPlan::of(
            &loaded.schema,
            &loaded.dataset,
            public,
        ))
    }

    /// The scaling of a paper procedure: the papers scale nothing, so it gets the public bounds
    /// or none, never a private release it did not make ([`Scaling::Auto`] only; an explicit
    /// choice is kept).
    ///
    /// ```
    /// use dpfair::pipeline::Scaling;
    /// assert!(Scaling::default().for_paper_procedure().is_none());
    /// ```
    pub fn for_paper_procedure(self) -> Scaling {
        match self {
            Scaling::Auto { public, .. } if public.0.is_empty() => Scaling::None,
            Scaling::Auto { public, .. } => Scaling::Public(public),
            other => other,
        }
    }

    /// Check the share before any data is read.
    pub fn check(&self) -> Result<()> {
        let share = self.share();
        if !matches!(self, Scaling::None | Scaling::Public(_)) {
            check_bounds_share(share)?;
        }
        Ok(())
    }

    /// Apply public bounds only (no privacy spent): for data that several parties must scale
    /// alike, such as federated sites. [`Scaling::Auto`] applies its public bounds (a column
    /// without is an error); coarse ranges are refused.
    pub fn apply_public(&self, loaded: &mut Loaded) -> Result<()> {
        let public = match self {
            Scaling::None => return Ok(()),
            Scaling::Public(public) | Scaling::Auto { public, .. } => public,
            Scaling::Private { .. } => {
                return Err(Error::invalid(
                    "coarse_bounds",
                    "only public bounds here (every party must scale with the same public bounds)",
                ));
            }
        };
        let mm = MinMax::fit(&loaded.schema, Some(&loaded.dataset), public, None)?;
        Ok(loaded
            .schema
            .set_scaling(FittedScaling::MinMax(mm), &mut loaded.dataset)?)
    }

    /// Fit the scaling on `loaded`, record it in the schema and apply it. Private bounds are
    /// charged to `ledger` with `share × epsilon`, the share ruled by `rows`, the fit's public row
    /// count ([`public_rows`]). Returns the ε spent.
    pub fn apply(
        &self,
        loaded: &mut Loaded,
        rows: usize,
        epsilon: f64,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<f64> {
        self.check()?;
        let empty = Bounds::default();
        let (mm, spent) = match self {
            Scaling::None => return Ok(0.0),
            Scaling::Public(public) => (
                MinMax::fit(&loaded.schema, Some(&loaded.dataset), public, None)?,
                0.0,
            ),
            Scaling::Private { public, .. } | Scaling::Auto { public, .. } => {
                let coarse = match self {
                    Scaling::Private { coarse, .. } => coarse,
                    _ => &empty,
                };
                let before = ledger.entries().len();
                let share = self.share_on(loaded, rows, epsilon);
                let epsilon = if epsilon.is_finite() {
                    share * epsilon
                } else {
                    REFERENCE_BOUNDS_EPSILON
                };
                let mm = MinMax::fit(
                    &loaded.schema,
                    Some(&loaded.dataset),
                    public,
                    Some(PrivateBounds {
                        ledger: &mut *ledger,
                        noise,
                        epsilon,
                        coarse,
                    }),
                )?;
                let spent = if ledger.entries().len() > before {
                    epsilon
                } else {
                    0.0
                };
                (mm, spent)
            }
        };
        loaded
            .schema
            .set_scaling(FittedScaling::MinMax(mm), &mut loaded.dataset)?;
        Ok(spent)
    }
}

/// Scale `loaded` and fit `estimator` in one session run: the scaling's private bounds (if any)
/// and the method share the estimator's declared spend, the method getting what the bounds
/// leave ([`Estimator::with_epsilon`]). A classifier whose estimator asks for it
/// ([`Estimator::held_out_check`]) is scaled and fitted on all rows but a public held-out share,
/// on which the model is then checked against the constant classes
/// ([`crate::held_out_check`]; [`Fitted::check`] says what was chosen).
pub fn fit<E: Estimator>(
    estimator: &E,
    loaded: &mut Loaded,
    scaling: &Scaling,
    session: &mut Session,
) -> Result<Fitted<E::Model>> {
    let check = estimator.held_out_check().filter(|c| c.is_on());
    fit_with_check(estimator, loaded, scaling, session, check)
}

/// [`fit`] without the held-out check against the constant classes: a private search
/// ([`crate::tune`]) runs the constant classes as a candidate of its own. LPCT's public check
/// still runs.
pub(crate) fn fit_unchecked<E: Estimator>(
    estimator: &E,
    loaded: &mut Loaded,
    scaling: &Scaling,
    session: &mut Session,
) -> Result<Fitted<E::Model>> {
    fit_with_check(estimator, loaded, scaling, session, None)
}

/// [`fit`] with the held-out check given (`None`: none); the public check runs when the
/// held-out check does not.
fn fit_with_check<E: Estimator>(
    estimator: &E,
    loaded: &mut Loaded,
    scaling: &Scaling,
    session: &mut Session,
    check: Option<crate::held_out_check::HeldOutCheck>,
) -> Result<Fitted<E::Model>> {
    let step = |est: &E, loaded: &Loaded, ledger: &mut Ledger, noise: &mut Noise| {
        est.fit_with(&loaded.dataset, ledger, noise)
    };
    let mut fitted = fit_checked(estimator, loaded, scaling, session, check, step)?;
    if fitted.check.is_none() {
        fitted.check = estimator.public_check(&fitted.model, session.noise())?;
    }
    Ok(fitted)
}

/// [`fit`] with the method's step given: `fit_step(estimator, loaded, ledger, noise)` runs
/// after the scaling, with the estimator left by the bounds' share and `loaded` scaled (its
/// schema holds the scaling, so rows read later with it are scaled alike). A streamed fit
/// passes a step that reads the rest of its data in batches. No held-out check.
pub(crate) fn fit_scaled<E: Estimator>(
    estimator: &E,
    loaded: &mut Loaded,
    scaling: &Scaling,
    session: &mut Session,
    fit_step: impl FnOnce(&E, &Loaded, &mut Ledger, &mut Noise) -> Result<E::Model>,
) -> Result<Fitted<E::Model>> {
    fit_checked(estimator, loaded, scaling, session, None, fit_step)
}

/// One session run: the scaling and `fit_step` on every row, or, with `check`, on the fit rows
/// of the held-out check and then the check ([`held_out::fit_and_check`]).
pub(crate) fn fit_checked<E: Estimator>(
    estimator: &E,
    loaded: &mut Loaded,
    scaling: &Scaling,
    session: &mut Session,
    check: Option<crate::held_out_check::HeldOutCheck>,
    fit_step: impl FnOnce(&E, &Loaded, &mut Ledger, &mut Noise) -> Result<E::Model>,
) -> Result<Fitted<E::Model>> {
    if let Some(c) = &check {
        c.check()?;
        if estimator.spend(&loaded.dataset)?.relation == Relation::AddRemove {
            return Err(Error::invalid(
                "check_fraction",
                "the held-out check's split sizes use the row count, which add/remove-one \
                 neighbours keep private: set it to 0, or certify replace-one neighbours",
            ));
        }
    }
    scaling.check()?;
    let spend = estimator.spend(&loaded.dataset)?;
    let mut used = None;
    let (model, ledger) = session.run(spend, |ledger, noise| {
        let sized = public_size(estimator, &loaded.dataset, spend, ledger, noise)?;
        let (estimator, epsilon) = match &sized {
            Some((est, epsilon)) => (est, *epsilon),
            None => (estimator, spend.epsilon),
        };
        let rows = public_rows(estimator, &loaded.dataset, spend);
        let (model, config, outcome) = match &check {
            Some(c) => {
                let (model, config, outcome) = held_out::fit_and_check(
                    c, estimator, loaded, scaling, epsilon, ledger, noise, fit_step,
                )?;
                (model, config, Some(outcome))
            }
            None => {
                let (model, config) = scale_and_fit(
                    estimator, loaded, scaling, rows, epsilon, ledger, noise, fit_step,
                )?;
                (model, config, None)
            }
        };
        used = Some((config, outcome, rows));
        Ok(model)
    })?;
    let (config, check, rows) = used.expect("set by the run");
    Ok(Fitted {
        model,
        ledger,
        config,
        check,
        rows,
    })
}

/// Inside a fit's ledger: scale `loaded` (private bounds paid from `epsilon`), then run
/// `fit_step` with the estimator left by the bounds' share. Returns the model and the
/// configuration it used.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scale_and_fit<E: Estimator>(
    estimator: &E,
    loaded: &mut Loaded,
    scaling: &Scaling,
    rows: usize,
    epsilon: f64,
    ledger: &mut Ledger,
    noise: &mut Noise,
    fit_step: impl FnOnce(&E, &Loaded, &mut Ledger, &mut Noise) -> Result<E::Model>,
) -> Result<(E::Model, serde_json::Value)> {
    let spent = scaling.apply(loaded, rows, epsilon, ledger, noise)?;
    if spent > 0.0 {
        let rest = estimator.with_epsilon(epsilon - spent)?;
        let model = fit_step(&rest, loaded, ledger, noise)?;
        Ok((model, config_json(&rest, &loaded.dataset)?))
    } else {
        let model = fit_step(estimator, loaded, ledger, noise)?;
        Ok((model, config_json(estimator, &loaded.dataset)?))
    }
}
