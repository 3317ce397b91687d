//! Errors at the boundary: every Rust error becomes a Python exception with the library's own
//! message (`ValueError` for bad input, `dpfair.BudgetExceededError` for a refused spend, `OSError`
//! for model files that cannot be read or written), and a panic becomes a `RuntimeError` instead
//! of unwinding into the interpreter.

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};

pyo3::create_exception!(
    dpfair,
    BudgetExceededError,
    PyValueError,
    "A fit would take the privacy session over its budget: refused before any noise was drawn."
);

/// Run `f`, turning a panic into a `RuntimeError` that names it as a bug.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!(
                "internal error in dpfair (please report it): {what}"
            )))
        }
    }
}

/// Bad input: a `ValueError` with the message.
pub fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The data layer's errors are all about the input.
pub fn data_error(e: dpfair_data::DataError) -> PyErr {
    match e {
        dpfair_data::DataError::Io { .. } => PyOSError::new_err(e.to_string()),
        dpfair_data::DataError::Privacy(p) => privacy_error(p),
        other => value_error(other),
    }
}

/// A refused release is a budget error; a numerical failure is not the caller's fault.
pub fn privacy_error(e: dpfair_privacy::PrivacyError) -> PyErr {
    use dpfair_privacy::PrivacyError as E;
    match e {
        E::BudgetExceeded { .. } => BudgetExceededError::new_err(e.to_string()),
        E::InvalidParameter { .. } => value_error(e),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// Model files: reading and writing are `OSError`s, the rest is about the file or the data.
pub fn model_error(e: dpfair::model::ModelError) -> PyErr {
    use dpfair::model::ModelError as E;
    match e {
        E::Read { .. } | E::Write { .. } => PyOSError::new_err(e.to_string()),
        E::Data(d) => data_error(d),
        other => value_error(other),
    }
}

/// The library API's error: bad parameters and data are `ValueError`s, an overspend is
/// `BudgetExceededError`, a failure inside a method is a `RuntimeError`.
pub fn api_error(e: dpfair::Error) -> PyErr {
    use dpfair::Error as E;
    match e {
        E::InvalidParameter { .. } | E::InvalidData(_) | E::Learn(_) | E::Refused(_) => {
            value_error(e)
        }
        E::BudgetExceeded(_) => BudgetExceededError::new_err(e.to_string()),
        E::Data(d) => data_error(*d),
        E::Privacy(p) => privacy_error(*p),
        E::Model(m) => model_error(*m),
        E::Method { .. } => PyRuntimeError::new_err(e.to_string()),
    }
}
