//! `tune`: a private search among candidates of one method ([`dpfair::tune`]). Each
//! candidate's hyper-parameters are built and checked by `fit`'s builders, the rows are coded
//! as for a fit, and the search spends one ledger entry, at the candidates' common (ε, δ), in
//! the caller's session or in one of its own.

use crate::error::{api_error, guard, value_error};
use crate::fit::{Job, Jobs, dispatch, in_session};
use crate::frame::FrameInput;
use crate::model::PyModel;
use crate::session::PySession;
use dpfair::Estimator;
use dpfair::pipeline::Scaling;
use dpfair::tune::{DEFAULT_SELECTION_FRACTION, Search};
use dpfair_data::Loaded;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The methods a search runs, as `dpfair tune`: classifiers under central DP with replace-one
/// neighbours.
const SEARCHABLE: &[&str] = &[
    "dp-logistic",
    "cdp-fair",
    "decoupled",
    "dp2dp",
    "group-thresholds",
];

/// A private search, in the caller's session or in one of its own.
struct Tune<'a, 'py> {
    session: Option<&'a Bound<'py, PySession>>,
    seed: Option<u64>,
    search: Search,
}

impl Job for Tune<'_, '_> {
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
        let search = &self.search;
        // The search's runs are fits: on the cores the library finds useful.
        let tuned = in_session(py, self.session, self.seed, Jobs::Auto, |session| {
            dpfair::tune::tune(&estimators, &mut loaded, scaling, session, search)
        })?;
        Ok(tuned
            .to_model_file(loaded.schema)
            .map_err(api_error)?
            .into())
    }
}

/// Search privately among `candidates` (one dict of hyper-parameters each) of the classifier
/// `method` on `frame`: the chosen candidate's model, whose file records the selection and
/// whose ledger is the search's one entry (see the module docs).
#[pyfunction]
#[pyo3(signature = (
    method, candidates, frame, coding_options, selection_fraction = DEFAULT_SELECTION_FRACTION,
    mean_runs = None, session = None, seed = None
))]
#[allow(clippy::too_many_arguments)]
pub fn tune(
    method: &str,
    candidates: Vec<Bound<'_, PyDict>>,
    frame: FrameInput<'_>,
    coding_options: &Bound<'_, PyDict>,
    selection_fraction: f64,
    mean_runs: Option<u64>,
    session: Option<&Bound<'_, PySession>>,
    seed: Option<u64>,
) -> PyResult<PyModel> {
    guard(|| {
        if !SEARCHABLE.contains(&method) {
            return Err(value_error(format!(
                "a private search runs the central-DP classifiers {} (DPLogisticRegression, \
                 CDPFairClassifier, DecoupledFairClassifier, DP2DPClassifier, \
                 GroupThresholdsClassifier), not `{method}`: it \
                 scores every run on raw held-out labels, which the federated and local trust \
                 models rule out, and accuracy is a classifier's",
                SEARCHABLE.join(", ")
            )));
        }
        #[allow(clippy::needless_update, reason = "Search may gain fields")]
        let search = Search {
            selection_fraction,
            mean_runs,
            ..Search::default()
        };
        let job = Tune {
            session,
            seed,
            search,
        };
        dispatch(method, &candidates, frame, coding_options, seed, None, job)
    })
}
