//! `Session`: the library's [`dpfair::Session`] (a budget, the ledger of every fit made in it,
//! the release noise) for `dpfair.PrivacySession`.

use crate::error::{api_error, guard, value_error};
use dpfair::Session;
use dpfair_privacy::{Noise, Relation};
use pyo3::prelude::*;

/// Runs `release` (with the GIL released) in `session`'s library session, or, without one, in a
/// session of its own with budget (`epsilon`, 0): replace-one neighbours, OS noise. The private
/// group reports of `dpfair.metrics` and `Model.report` release here.
pub fn release_in<T: Send>(
    py: Python<'_>,
    session: Option<&Bound<'_, PySession>>,
    epsilon: f64,
    release: impl FnOnce(&mut Session) -> dpfair::Result<T> + Send,
) -> PyResult<T> {
    match session {
        Some(s) => {
            let mut held = s.borrow_mut();
            let session = &mut held.session;
            py.detach(|| release(session))
        }
        None => {
            let mut own = Session::new(epsilon, 0.0).map_err(api_error)?;
            py.detach(|| release(&mut own))
        }
    }
    .map_err(api_error)
}

/// A privacy session shared by several fits.
#[pyclass(module = "dpfair._native", name = "Session")]
pub struct PySession {
    pub session: Session,
}

/// `substitution` or `add-remove`.
pub fn relation(name: &str) -> PyResult<Relation> {
    match name {
        "substitution" => Ok(Relation::Substitution),
        "add-remove" => Ok(Relation::AddRemove),
        other => Err(value_error(format!(
            "relation `{other}`: expected `substitution` or `add-remove`"
        ))),
    }
}

#[pymethods]
impl PySession {
    /// A session with budget `(epsilon, delta)` certifying `relation`; OS release noise.
    #[new]
    fn new(epsilon: f64, delta: f64, relation_name: &str) -> PyResult<Self> {
        guard(|| {
            let session = Session::with_relation(epsilon, delta, relation(relation_name)?)
                .map_err(api_error)?;
            Ok(PySession { session })
        })
    }

    /// **Not private**: make the release noise reproducible from `seed` (tests only).
    fn insecure_seed(&mut self, seed: u64) {
        let session = std::mem::replace(&mut self.session, Session::unlimited());
        self.session = session.with_noise(Noise::seeded(seed));
    }

    /// `(ε, δ)` left.
    fn remaining(&self) -> (f64, f64) {
        self.session.remaining()
    }

    /// The session's ledger as JSON text.
    fn ledger_json(&self) -> PyResult<String> {
        serde_json::to_string(self.session.ledger()).map_err(value_error)
    }

    /// The ledger's total, relation, privacy and certification flags, rule and summary.
    fn ledger_total(&self) -> PyResult<crate::model::LedgerTotal> {
        guard(|| crate::model::ledger_total(self.session.ledger()))
    }
}
