//! `Model.report`: the release report of a model, built and rendered by the library
//! ([`dpfair::release_report::ReleaseReport`]), so the HTML and JSON are those `dpfair report`
//! writes for the same model file (docs/evaluation.md, "The release report").
//!
//! Privacy: the evaluation rows are read only when a budget is given, and then only through
//! the one charged release of [`Evaluation::release`] (in the caller's session, or in one of
//! budget ε for replace-one neighbours with the operating system's noise).

use crate::error::{api_error, data_error, value_error};
use crate::frame::FrameInput;
use crate::session::PySession;
use dpfair::model::ModelFile;
use dpfair::release_report::{Evaluation, ReleaseReport};
use pyo3::exceptions::{PyOSError, PyUserWarning};
use pyo3::prelude::*;
use std::path::{Path, PathBuf};

/// The evaluation rows and how to release their report (`Model.report`'s arguments).
pub struct Rows<'py> {
    pub x: Option<Bound<'py, PyAny>>,
    pub y: Option<Bound<'py, PyAny>>,
    pub sensitive_features: Option<Bound<'py, PyAny>>,
    pub epsilon: Option<f64>,
    pub level: f64,
    /// A `dpfair.PrivacySession` (or its native `Session`).
    pub session: Option<Bound<'py, PyAny>>,
}

/// Writes the report of `file` to `out` (HTML) and `json` (default: `out` with the extension
/// `.json`); returns the JSON text.
pub fn write(
    py: Python<'_>,
    file: &ModelFile,
    out: PathBuf,
    json: Option<PathBuf>,
    rows: Rows<'_>,
) -> PyResult<String> {
    let json = json.unwrap_or_else(|| out.with_extension("json"));
    if json == out {
        return Err(value_error(format!(
            "json={}: the same file as out; give another name",
            json.display()
        )));
    }
    let evaluation = evaluation(py, file, rows)?;
    let report = ReleaseReport::new(file, evaluation);
    let text = report.to_json().map_err(api_error)?;
    save(&json, text.as_bytes())?;
    save(&out, report.to_html().as_bytes())?;
    Ok(text)
}

/// The report's evaluation section. Without `epsilon` the rows are not read (a warning says so).
fn evaluation(py: Python<'_>, file: &ModelFile, rows: Rows<'_>) -> PyResult<Evaluation> {
    let given = rows.x.is_some() || rows.y.is_some() || rows.sensitive_features.is_some();
    let Some(epsilon) = rows.epsilon else {
        if rows.session.is_some() {
            return Err(value_error(
                "session= without epsilon=: the session pays for an evaluation's release",
            ));
        }
        if given {
            PyErr::warn(
                py,
                &py.get_type::<PyUserWarning>(),
                c"report: evaluation rows without epsilon= were not read (an evaluation of \
                  private rows needs epsilon=E, a charged release)",
                1,
            )?;
            return Ok(Evaluation::NeedsEpsilon);
        }
        return Ok(Evaluation::NotRequested);
    };
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(value_error(format!(
            "epsilon={epsilon}: the evaluation's privacy budget must be finite and > 0 (e.g. 1)"
        )));
    }
    if !(rows.level > 0.0 && rows.level < 1.0) {
        return Err(value_error(format!(
            "level={}: the intervals' level must be in (0, 1), e.g. 0.95",
            rows.level
        )));
    }
    Evaluation::check(file).map_err(api_error)?;
    let (Some(x), Some(y)) = (rows.x, rows.y) else {
        return Err(value_error(
            "epsilon= needs the evaluation rows: X and y (and sensitive_features, or X's column \
             of the model's sensitive attribute)",
        ));
    };
    let sensitive = match rows.sensitive_features {
        Some(s) => s,
        // As `predict`: the model's sensitive column of X.
        None => file
            .schema
            .sensitive
            .as_ref()
            .map(|s| s.name.clone())
            .into_pyobject(py)?,
    };
    let frame = py
        .import("dpfair._input")?
        .getattr("to_frame")?
        .call1((x, y, sensitive))?;
    let frame: FrameInput<'_> = frame.extract()?;
    let view = frame.frame()?;
    let data = py.detach(|| view.apply(&file.schema)).map_err(data_error)?;
    let session = match rows.session {
        // A `dpfair.PrivacySession`, or its native `Session`.
        Some(s) if !s.is_instance_of::<PySession>() => Some(s.getattr("_native")?),
        other => other,
    };
    let session = session.map(|s| s.cast_into::<PySession>()).transpose()?;
    crate::session::release_in(py, session.as_ref(), epsilon, |session| {
        Evaluation::release(session, file, &data, epsilon, rows.level)
    })
}

/// Writes `bytes` to `path` atomically.
fn save(path: &Path, bytes: &[u8]) -> PyResult<()> {
    dpfair_data::output::write_atomic(path, bytes)
        .map_err(|e| PyOSError::new_err(format!("{}: cannot write it: {e}", path.display())))
}
