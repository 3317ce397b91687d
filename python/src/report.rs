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
use dpfair::release_report::{AuditSection, Declared, Evaluation, ReleaseReport};
use dpfair_data::TaskKind;
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
    /// The evaluation's groups, declared, for a model without a sensitive attribute (the
    /// column is `sensitive_features`).
    pub groups: Option<Vec<String>>,
    /// A regressor's public target range, for a model that carries none.
    pub target_range: Option<(f64, f64)>,
}

/// Writes the report of `file` to `out` (HTML) and `json` (default: `out` with the extension
/// `.json`), with the audit in the file `audit` (`dpfair audit METHOD --json`, the model's
/// method) when given; returns the JSON text.
pub fn write(
    py: Python<'_>,
    file: &ModelFile,
    out: PathBuf,
    json: Option<PathBuf>,
    rows: Rows<'_>,
    audit: Option<PathBuf>,
) -> PyResult<String> {
    let json = json.unwrap_or_else(|| out.with_extension("json"));
    if json == out {
        return Err(value_error(format!(
            "json={}: the same file as out; give another name",
            json.display()
        )));
    }
    let audit = audit
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| PyOSError::new_err(format!("audit={}: {e}", path.display())))?;
            AuditSection::from_json(&text, &file.method, &format!("audit={}", path.display()))
                .map_err(api_error)
        })
        .transpose()?;
    let evaluation = evaluation(py, file, rows)?;
    let mut report = ReleaseReport::new(file, evaluation);
    if let Some(audit) = audit {
        report = report.with_audit(audit);
    }
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
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item(
        "regression",
        file.schema.task() == Some(TaskKind::Regression),
    )?;
    let frame = py
        .import("dpfair._input")?
        .getattr("to_frame")?
        .call((x, y, sensitive), Some(&kwargs))?;
    let frame: FrameInput<'_> = frame.extract()?;
    let declared = Declared {
        sensitive: match (rows.groups, &frame.sensitive) {
            (Some(groups), Some((name, _))) => Some((name.clone(), groups)),
            (Some(_), None) => {
                return Err(value_error(
                    "groups= names the groups of sensitive_features=: give that column too",
                ));
            }
            (None, _) => None,
        },
        target_range: rows.target_range.map(|(lo, hi)| [lo, hi]),
    };
    let schema = Evaluation::check(file, &declared).map_err(api_error)?;
    let view = frame.frame()?;
    let data = py.detach(|| view.apply(&schema)).map_err(data_error)?;
    let session = match rows.session {
        // A `dpfair.PrivacySession`, or its native `Session`.
        Some(s) if !s.is_instance_of::<PySession>() => Some(s.getattr("_native")?),
        other => other,
    };
    let session = session.map(|s| s.cast_into::<PySession>()).transpose()?;
    crate::session::release_in(py, session.as_ref(), epsilon, |session| {
        Evaluation::release(session, file, &declared, &data, epsilon, rows.level)
    })
}

/// Writes `bytes` to `path` atomically.
fn save(path: &Path, bytes: &[u8]) -> PyResult<()> {
    dpfair_data::output::write_atomic(path, bytes)
        .map_err(|e| PyOSError::new_err(format!("{}: cannot write it: {e}", path.display())))
}
