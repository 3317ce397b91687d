//! `dpfair._native` metrics: the fairness crate's functions on coded arrays (the Python layer
//! codes labels and groups; `dpfair.metrics` is the public face).

use crate::error::{guard, value_error};
use crate::model::{LedgerTotal, ledger_total};
use crate::session::PySession;
use dpfair_fairness as fairness;
use dpfair_privacy::Ledger;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

type Codes<'py> = PyReadonlyArray1<'py, u32>;
type Binary<'py> = PyReadonlyArray1<'py, u8>;

fn slice<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>, name: &str) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| value_error(format!("{name} must be a contiguous array")))
}

/// A pyfunction `name(y_pred, groups)` over the fairness crate's function of the same name.
macro_rules! parity_metric {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[pyfunction]
        pub fn $name(y_pred: Binary<'_>, groups: Codes<'_>) -> PyResult<f64> {
            guard(|| {
                fairness::$name(slice(&y_pred, "y_pred")?, slice(&groups, "sensitive_features")?)
                    .map_err(value_error)
            })
        }
    };
}

parity_metric!(
    /// max − min over groups of the selection rate.
    demographic_parity_difference
);
parity_metric!(
    /// min / max over groups of the selection rate.
    demographic_parity_ratio
);
parity_metric!(
    /// max over groups of |selection rate − overall selection rate|.
    demographic_parity_difference_to_overall
);
parity_metric!(
    /// min over groups of min(r_s / r, r / r_s).
    demographic_parity_ratio_to_overall
);

/// max − min over groups of the true positive rate.
#[pyfunction]
pub fn equal_opportunity_difference(
    y_true: Binary<'_>,
    y_pred: Binary<'_>,
    groups: Codes<'_>,
) -> PyResult<f64> {
    guard(|| {
        fairness::equal_opportunity_difference(
            slice(&y_true, "y_true")?,
            slice(&y_pred, "y_pred")?,
            slice(&groups, "sensitive_features")?,
        )
        .map_err(value_error)
    })
}

/// max over classes and pairs of groups of the gap in P(ŷ = k | S = s) (multi-class).
#[pyfunction]
pub fn multiclass_unfairness(y_pred: Codes<'_>, k: usize, groups: Codes<'_>) -> PyResult<f64> {
    guard(|| {
        fairness::multiclass_unfairness(
            slice(&y_pred, "y_pred")?,
            k,
            slice(&groups, "sensitive_features")?,
        )
        .map_err(value_error)
    })
}

/// The largest two-sample Kolmogorov–Smirnov distance between groups' outputs (regression).
#[pyfunction]
pub fn ks_statistical_parity(
    values: PyReadonlyArray1<'_, f64>,
    groups: Codes<'_>,
) -> PyResult<f64> {
    guard(|| {
        fairness::ks_statistical_parity(
            slice(&values, "y_pred")?,
            slice(&groups, "sensitive_features")?,
        )
        .map_err(value_error)
    })
}

/// The group report: `(metrics, rows)` with one `(group, n, values)` row per group and then
/// `overall`. `kind` is `binary` (labels 0/1), `multiclass` (codes; `class_labels` name them) or
/// `regression` (`y_true`, `y_pred` as floats).
#[pyfunction]
#[pyo3(signature = (kind, y_true, y_pred, groups, group_names, class_labels = Vec::new()))]
#[allow(clippy::type_complexity)]
pub fn group_report(
    kind: &str,
    y_true: PyReadonlyArray1<'_, f64>,
    y_pred: PyReadonlyArray1<'_, f64>,
    groups: Codes<'_>,
    group_names: Vec<String>,
    class_labels: Vec<String>,
) -> PyResult<(Vec<String>, Vec<(String, usize, Vec<Option<f64>>)>)> {
    guard(|| {
        let (t, p) = (slice(&y_true, "y_true")?, slice(&y_pred, "y_pred")?);
        let g = slice(&groups, "sensitive_features")?;
        let codes = |v: &[f64]| v.iter().map(|&x| x as u32).collect::<Vec<_>>();
        let report = match kind {
            "binary" => {
                let b = |v: &[f64]| v.iter().map(|&x| x as u8).collect::<Vec<_>>();
                fairness::GroupReport::binary(&b(t), &b(p), g, &group_names)
            }
            "multiclass" => fairness::GroupReport::multiclass(
                &codes(t),
                &codes(p),
                &class_labels,
                g,
                &group_names,
            ),
            "regression" => fairness::GroupReport::regression(t, p, g, &group_names),
            other => {
                return Err(value_error(format!(
                    "kind `{other}`: expected binary, multiclass or regression"
                )));
            }
        }
        .map_err(value_error)?;
        let rows = report
            .by_group
            .into_iter()
            .chain(std::iter::once(report.overall))
            .map(|r| (r.group, r.n, r.values))
            .collect();
        Ok((report.metrics, rows))
    })
}

/// A released private group report and the ledger of its one release
/// (`dpfair.metrics.PrivateMetricFrame` wraps it).
#[pyclass(module = "dpfair._native", name = "PrivateReport", frozen)]
pub struct PyPrivateReport {
    report: fairness::PrivateGroupReport,
    ledger: Ledger,
}

#[pymethods]
impl PyPrivateReport {
    /// The report as JSON text (figures with intervals, the released counts, the level).
    fn report_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.report).map_err(value_error)
    }

    /// The report as the CLI prints it.
    fn render(&self) -> String {
        self.report.render()
    }

    /// The release's ledger as JSON text.
    fn ledger_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.ledger).map_err(value_error)
    }

    /// The ledger's total, relation, privacy and certification flags, rule and summary.
    fn ledger_total(&self) -> PyResult<LedgerTotal> {
        guard(|| ledger_total(&self.ledger))
    }
}

/// The private group report (`dpfair::evaluation::private_group_report`): labels and
/// predictions as 0/1, groups as codes into the declared `group_names`. Spent in `session` when
/// given, else in a session of its own with budget ε (replace-one neighbours, OS noise).
#[pyfunction]
#[pyo3(signature = (y_true, y_pred, groups, group_names, epsilon, level, session = None))]
#[allow(clippy::too_many_arguments)]
pub fn private_group_report(
    py: Python<'_>,
    y_true: Binary<'_>,
    y_pred: Binary<'_>,
    groups: Codes<'_>,
    group_names: Vec<String>,
    epsilon: f64,
    level: f64,
    session: Option<&Bound<'_, PySession>>,
) -> PyResult<PyPrivateReport> {
    guard(|| {
        let counts = fairness::GroupConfusion::from_rows(
            group_names,
            slice(&y_true, "y_true")?,
            slice(&y_pred, "y_pred")?,
            slice(&groups, "sensitive_features")?,
        )
        .map_err(value_error)?;
        let (report, ledger) = crate::session::release_in(py, session, epsilon, |session| {
            dpfair::evaluation::private_group_report(session, &counts, epsilon, level)
        })?;
        Ok(PyPrivateReport { report, ledger })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPrivateReport>()?;
    m.add_function(wrap_pyfunction!(private_group_report, m)?)?;
    m.add_function(wrap_pyfunction!(demographic_parity_difference, m)?)?;
    m.add_function(wrap_pyfunction!(demographic_parity_ratio, m)?)?;
    m.add_function(wrap_pyfunction!(
        demographic_parity_difference_to_overall,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(demographic_parity_ratio_to_overall, m)?)?;
    m.add_function(wrap_pyfunction!(equal_opportunity_difference, m)?)?;
    m.add_function(wrap_pyfunction!(multiclass_unfairness, m)?)?;
    m.add_function(wrap_pyfunction!(ks_statistical_parity, m)?)?;
    m.add_function(wrap_pyfunction!(group_report, m)?)?;
    Ok(())
}
