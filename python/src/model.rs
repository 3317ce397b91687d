//! `Model`: a fitted model as the CLI saves it ([`ModelFile`]: schema, ledger, configuration and
//! model), predicting on Python frames, saved and loaded in the CLI's format.

use crate::error::{data_error, guard, model_error, value_error};
use crate::frame::FrameInput;
use dpfair::model::ModelFile;
use dpfair_privacy::{Ledger, Noise};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `(ε, δ, relation in words, private, certified, rule, readable summary)` of a ledger.
pub type LedgerTotal = (f64, f64, String, bool, bool, String, String);

/// The total of `ledger` as [`LedgerTotal`].
pub fn ledger_total(ledger: &Ledger) -> PyResult<LedgerTotal> {
    let t = ledger.total().map_err(crate::error::privacy_error)?;
    Ok((
        t.epsilon,
        t.delta,
        ledger.relation().describe().to_string(),
        ledger.is_private(),
        ledger.is_certified(),
        t.rule,
        ledger.summary(),
    ))
}

/// A fitted model and its model file.
#[pyclass(module = "dpfair._native", name = "Model", frozen)]
pub struct PyModel {
    pub file: ModelFile,
    /// What the fit that made the model warned about (its private bounds: a line of
    /// [`dpfair::pipeline::bounds_warning`]); empty for a model read from a file.
    pub warnings: Vec<String>,
}

impl From<ModelFile> for PyModel {
    fn from(file: ModelFile) -> Self {
        PyModel {
            file,
            warnings: Vec::new(),
        }
    }
}

#[pymethods]
impl PyModel {
    /// Read a model file written by `dpfair fit` or by `save`.
    #[staticmethod]
    fn load(path: std::path::PathBuf) -> PyResult<Self> {
        guard(|| Ok(ModelFile::load(&path).map_err(model_error)?.into()))
    }

    /// Parse a model file's text (`origin` names it in messages).
    #[staticmethod]
    fn from_json(text: &str, origin: &str) -> PyResult<Self> {
        guard(|| {
            Ok(ModelFile::from_json(text, origin)
                .map_err(model_error)?
                .into())
        })
    }

    /// Write the model file (atomically), in the format `dpfair predict` reads.
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        guard(|| self.file.save(&path).map_err(model_error))
    }

    /// The model file as JSON text.
    fn to_json(&self) -> PyResult<String> {
        guard(|| self.file.to_json().map_err(model_error))
    }

    /// Pickling: the model file's JSON text (read back with its digest checked).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String, String))> {
        let json = slf.get().to_json()?;
        let from_json = slf.get_type().getattr("from_json")?;
        Ok((from_json, (json, "a pickled model".to_string())))
    }

    /// Predict for `frame` (encoded and scaled with the model's schema). `seed` makes a
    /// randomized predictor's draws reproducible (they are not a privacy release). Returns a dict:
    /// `classes` (codes), `labels`, `probabilities` (n × k, when the model has them) or `values`.
    #[pyo3(signature = (frame, seed = None))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        frame: FrameInput<'py>,
        seed: Option<u64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            // The rows are coded with the GIL released too (they are read-only views of the
            // caller's arrays, held for the call).
            let view = frame.frame()?;
            let schema = &self.file.schema;
            let data = py.detach(|| view.apply(schema)).map_err(data_error)?;
            let mut rng = match seed {
                Some(s) => Noise::seeded(s),
                None => Noise::os(),
            };
            // The GIL is released while the model predicts (other Python threads run).
            let file = &self.file;
            let p = py
                .detach(|| file.predict(&data, &mut rng))
                .map_err(model_error)?;
            let out = PyDict::new(py);
            if let Some(classes) = p.classes {
                let codes: Bound<'py, PyArray1<u32>> = classes.into_pyarray(py);
                out.set_item("classes", codes)?;
                out.set_item("labels", p.labels)?;
            }
            if let Some(prob) = p.probabilities {
                let prob: Bound<'py, PyArray2<f64>> = prob.into_pyarray(py);
                out.set_item("probabilities", prob)?;
            }
            if let Some(values) = p.values {
                out.set_item("values", values.into_pyarray(py))?;
            }
            Ok(out)
        })
    }

    /// The method's name, as in `dpfair fit METHOD`.
    /// The held-out check's choice, when it replaced the model by a constant: `(class code,
    /// None)` for a classifier, `(None, value)` for a regressor; `None` when the model was kept
    /// or no check ran (a released choice: docs/privacy.md, "The held-out check").
    #[getter]
    fn constant(&self) -> Option<(Option<u32>, Option<f64>)> {
        let check = self.file.check.as_ref()?;
        (check.constant.is_some() || check.value.is_some()).then_some((check.constant, check.value))
    }

    /// What the fit that made this model warned about, one line each (public numbers only:
    /// the private bounds' ε per column and the fit's public row count); empty for a model read
    /// from a file.
    #[getter]
    fn fit_warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The fit's own private estimate of its fairness measure, `(measure, target, estimate,
    /// met)`, where its releases give one (FDP-Fair, the decoupled classifier); `None`
    /// otherwise ([`dpfair::model::ModelFile::fairness_estimate`]).
    #[getter]
    fn fairness(&self) -> Option<(String, f64, f64, bool)> {
        self.file
            .fairness_estimate()
            .map(|e| (e.measure, e.target, e.estimate, e.met))
    }

    /// Whether the file carried a digest that matched its content when read: false for a
    /// version-1 file (written before digests), whose ledger nothing can check.
    #[getter]
    fn verified(&self) -> bool {
        self.file.is_verified()
    }

    #[getter]
    fn method(&self) -> &str {
        &self.file.method
    }

    /// The target's class labels in code order (empty for regression).
    #[getter]
    fn class_labels(&self) -> Vec<String> {
        self.file.schema.class_labels().to_vec()
    }

    /// The task: `binary`, `multiclass` or `regression`.
    #[getter]
    fn task(&self) -> Option<String> {
        self.file.schema.task().map(|t| t.to_string())
    }

    /// The sensitive column's name and its groups in code order.
    #[getter]
    fn sensitive(&self) -> Option<(String, Vec<String>)> {
        self.file
            .schema
            .sensitive
            .as_ref()
            .map(|s| (s.name.clone(), s.levels.clone()))
    }

    /// The target column's name.
    #[getter]
    fn target_name(&self) -> Option<String> {
        self.file.schema.target.as_ref().map(|t| t.name.clone())
    }

    /// The source columns the model reads, in order.
    #[getter]
    fn feature_columns(&self) -> Vec<String> {
        self.file
            .schema
            .features
            .iter()
            .map(|f| f.name().to_string())
            .collect()
    }

    /// The encoded features' names (`col` or `col=level`).
    #[getter]
    fn feature_names(&self) -> Vec<String> {
        self.file.schema.feature_names()
    }

    /// The privacy ledger as JSON text (entries, budget, relation, noise source).
    fn ledger_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.file.ledger).map_err(value_error)
    }

    /// The ledger's total, relation, privacy and certification flags, rule and summary.
    fn ledger_total(&self) -> PyResult<LedgerTotal> {
        guard(|| ledger_total(&self.file.ledger))
    }

    /// The private search that chose this model, as JSON text (its candidates, the chosen one,
    /// its noisy accuracy and the rule of the cost); `None` for a plain fit.
    fn selection_json(&self) -> PyResult<Option<String>> {
        self.file
            .selection
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(value_error)
    }

    /// The method's configuration as JSON text.
    fn config_json(&self) -> String {
        self.file.config.to_string()
    }

    /// Write the release report (HTML to `out`, JSON to `json`, default `out` with `.json`),
    /// as `dpfair report` writes it; with `X`, `y` (and `sensitive_features`) and `epsilon`, the
    /// private report of the model's predictions on those rows (group report, multi-class
    /// report, or MSE and KS, by the model's task), released in `session` (`crate::report`);
    /// `groups` declares the groups of `sensitive_features` for a model without a sensitive
    /// attribute, `target_range` a regressor's public range when the model carries none;
    /// `audit` the path of `dpfair audit METHOD --json`'s output for the model's method.
    /// Returns the report as a dict.
    #[pyo3(signature = (out, json = None, X = None, y = None, sensitive_features = None,
                        epsilon = None, level = 0.95, session = None, *, groups = None,
                        target_range = None, audit = None))]
    #[allow(non_snake_case, clippy::too_many_arguments)]
    fn report<'py>(
        &self,
        py: Python<'py>,
        out: std::path::PathBuf,
        json: Option<std::path::PathBuf>,
        X: Option<Bound<'py, PyAny>>,
        y: Option<Bound<'py, PyAny>>,
        sensitive_features: Option<Bound<'py, PyAny>>,
        epsilon: Option<f64>,
        level: f64,
        session: Option<Bound<'py, PyAny>>,
        groups: Option<Vec<String>>,
        target_range: Option<(f64, f64)>,
        audit: Option<std::path::PathBuf>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let rows = crate::report::Rows {
            x: X,
            y,
            sensitive_features,
            epsilon,
            level,
            session,
            groups,
            target_range,
        };
        let text = guard(|| crate::report::write(py, &self.file, out, json, rows, audit))?;
        py.import("json")?.call_method1("loads", (text,))
    }
}
