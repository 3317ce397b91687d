//! The one `fit` pipeline every `dpfair fit METHOD` command runs: refuse a bad `--out`, load the
//! CSV, open a session over the method's declared spend, scale and fit through the library
//! ([`dpfair::pipeline::fit`]), then write the model. Each method's module only turns its flags
//! into the library's params and prints what its fit released.

use crate::cmd::common::{BoundsArgs, DataArgs, OutArgs, PrivacyArgs};
use crate::error::CliResult;
use dpfair::model::ModelFile;
use dpfair::{Estimator, Fitted, Session, Spend};
use dpfair_data::{Loaded, TaskKind};

/// The flags every central fit shares.
pub struct Common<'a> {
    pub data: &'a DataArgs,
    pub bounds: &'a BoundsArgs,
    pub privacy: &'a PrivacyArgs,
    pub out: &'a OutArgs,
}

/// The [`Common`] flags of a method's `Args` (its `data`, `bounds`, `privacy` and `out`).
macro_rules! common_of {
    ($args:expr) => {
        $crate::cmd::fit::pipeline::Common {
            data: &$args.data,
            bounds: &$args.bounds,
            privacy: &$args.privacy,
            out: &$args.out,
        }
    };
}
pub(crate) use common_of;

/// A fitted model and the data it was fitted on (its schema goes into the model file).
pub struct Run<M> {
    pub loaded: Loaded,
    pub fitted: Fitted<M>,
}

impl<M: dpfair::model::Predictor + Clone + Into<dpfair::model::FittedModel>> Run<M> {
    /// Write the model file to `--out` (and print the ledger's total).
    pub fn save(&self, out: &OutArgs) -> CliResult<ModelFile> {
        out.save(
            &self.loaded,
            self.fitted.ledger.clone(),
            None,
            &self.fitted.config,
            self.fitted.model.clone().into(),
            self.fitted.check.clone(),
        )
    }
}

/// Check the output path, load the data with `task`, run the command's own `check` of the
/// loaded schema (public facts only), warn when the features stay unscaled (`unscaled_warning`,
/// or nothing when `None`), then fit `estimator` in a session over its declared spend
/// (unlimited for a non-private reference or a paper procedure).
pub fn fit<E: Estimator>(
    common: Common<'_>,
    task: Option<TaskKind>,
    estimator: &E,
    unscaled_warning: Option<&str>,
    check: impl FnOnce(&Loaded) -> CliResult,
) -> CliResult<Run<E::Model>> {
    common.out.check(&[common.data.input()])?;
    let mut scaling = common.bounds.scaling()?;
    if common.privacy.accounting() == dpfair::model::Accounting::Paper {
        scaling = scaling.for_paper_procedure();
    }
    let mut loaded = common.data.load_filled(task, common.bounds.public()?)?;
    check(&loaded)?;
    if scaling.is_none()
        && let Some(warning) = unscaled_warning
    {
        eprintln!("{warning}");
    }
    let spend = estimator.spend(&loaded.dataset)?;
    if common.privacy.epsilon.is_infinite() {
        eprintln!("warning: --epsilon inf: a non-private reference; the model is NOT private");
    }
    let mut session = session_for(&spend)?.with_noise(common.privacy.noise());
    let fitted = with_progress(estimator.method(), || {
        dpfair::pipeline::fit(estimator, &mut loaded, &scaling, &mut session)
    })?;
    report_bounds(
        &loaded,
        &scaling,
        common.privacy.epsilon,
        &fitted.ledger,
        fitted.rows,
    );
    Ok(finish(estimator, loaded, fitted))
}

/// Print what the fit released (the estimator's report; with a paper procedure, what it really
/// spent) and pair the model with its data.
pub fn finish<E: Estimator>(
    estimator: &E,
    loaded: Loaded,
    fitted: Fitted<E::Model>,
) -> Run<E::Model> {
    for line in estimator.report(&fitted, &loaded.dataset) {
        eprintln!("{line}");
    }
    if let Some(check) = &fitted.check {
        eprintln!("{}", check.describe(loaded.schema.class_labels()));
    }
    let paper = estimator
        .spend(&loaded.dataset)
        .is_ok_and(|s| s.epsilon.is_infinite())
        && fitted
            .config
            .get("accounting")
            .is_some_and(|a| a == "paper");
    if paper {
        eprintln!(
            "--accounting paper: what the authors' procedure really spends:\n{}",
            fitted.ledger.summary()
        );
    }
    Run { loaded, fitted }
}

/// Run `work`, showing on stderr (only on a terminal, after the first second) that `method` is
/// still fitting and for how long, so that a long fit is not silent. The line is cleared at
/// the end. It reads nothing but the clock.
pub fn with_progress<T>(method: &str, work: impl FnOnce() -> T) -> T {
    use std::io::{IsTerminal, Write};
    use std::sync::atomic::{AtomicBool, Ordering};
    if !std::io::stderr().is_terminal() {
        return work();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let start = std::time::Instant::now();
            let mut shown = false;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(200));
                let secs = start.elapsed().as_secs();
                if secs >= 1 && !done.load(Ordering::Relaxed) {
                    let _ = write!(std::io::stderr(), "\r\x1b[2Kfitting {method}… {secs} s");
                    shown = true;
                }
            }
            if shown {
                let _ = write!(std::io::stderr(), "\r\x1b[2K");
            }
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    })
}

/// A session whose budget is the command's (the fit's declared spend): unlimited for a
/// non-private reference or a paper procedure, whose ledger records what it really spends.
pub fn session_for(spend: &Spend) -> CliResult<Session> {
    Ok(if spend.epsilon.is_finite() {
        Session::with_relation(spend.epsilon, spend.delta, spend.relation)?
    } else {
        Session::unlimited()
    })
}

/// Print, once per fit, how the columns were encoded and scaled and what private feature
/// bounds cost (schema information and the ledger's charges only).
pub fn report_bounds(
    loaded: &Loaded,
    scaling: &dpfair::pipeline::Scaling,
    epsilon: f64,
    ledger: &dpfair_privacy::Ledger,
    rows: usize,
) {
    let dpfair_data::Scaling::MinMax(mm) = &loaded.schema.scaling else {
        return;
    };
    let plan = mm.plan(&loaded.schema);
    let spent = dpfair::pipeline::bounds_epsilon_per_column(ledger)
        .map_or(0.0, |each| each * plan.private.len() as f64);
    // The share actually spent (the automatic rule may raise the least share on small data).
    let share = if epsilon.is_finite() && spent > 0.0 {
        spent / epsilon
    } else {
        scaling.share()
    };
    for line in crate::cmd::common::bounds_lines(&plan, share, epsilon, spent, rows) {
        eprintln!("{line}");
    }
}
