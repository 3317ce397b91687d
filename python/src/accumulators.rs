//! Mergeable exact accumulators for distributed engines (`dpfair.accumulators`, used by
//! `dpfair.spark`; docs/deploy.md): a worker updates one from its part of the data, sends its
//! state as bytes ([`WireState`]: the exact integer state and the configuration it is for), the
//! driver merges the parts and releases the statistic once.
//!
//! | class | statistic | released by |
//! |---|---|---|
//! | `LdpReports` | Hadamard LDP reports, per-row integer sums ([`HadamardSums`]) | [`PartitionFile::fit_lpct`] |
//! | `JointCounts` | fair regression's group × score-bin counts ([`JointCounts`]) | [`FairRegression::fit_counts`] |
//!
//! Noise (fair regression) is drawn once, in `finalize`, never per part: a part an engine
//! recomputes after a failure gives the same integers and draws nothing. `finalize` refuses to
//! run twice on one object.

use crate::error::{api_error, guard, value_error};
use crate::model::PyModel;
use crate::session::PySession;
use dpfair::Params;
use dpfair::Session;
use dpfair::estimators::FairRegression;
use dpfair::fair_regression::histogram::{Grid, JointCounts};
use dpfair::lpct::collector::HadamardSums;
use dpfair::lpct::protocol::PartitionFile;
use dpfair::lpct::report_file::{ReportsHeader, read_reports_into};
use dpfair::lpct::{Mechanism, ReportSums};
use dpfair::model::{FittedModel, ModelFile};
use dpfair_data::schema::{FeatureColumn, SensitiveColumn};
use dpfair_data::{Dataset, Groups, Schema};
use dpfair_privacy::Noise;
use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// The format tag of an accumulator's bytes.
const WIRE_FORMAT: &str = "dpfair-accumulator";
const WIRE_VERSION: u32 = 1;

/// An accumulator's bytes (JSON text): its kind, the configuration it accumulates for (two parts
/// merge only when these are equal) and its exact state (integers).
#[derive(Serialize, Deserialize)]
struct WireState {
    format: String,
    version: u32,
    kind: String,
    config: BTreeMap<String, serde_json::Value>,
    state: BTreeMap<String, Vec<u64>>,
}

impl WireState {
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let text = serde_json::to_vec(self).map_err(value_error)?;
        Ok(PyBytes::new(py, &text))
    }

    /// Parses `bytes` as the state of a `kind` accumulator.
    fn parse(bytes: &[u8], kind: &str) -> PyResult<Self> {
        let w: WireState = serde_json::from_slice(bytes).map_err(|e| {
            value_error(format!(
                "not the bytes of a dpfair accumulator (to_bytes): {e}"
            ))
        })?;
        if w.format != WIRE_FORMAT || w.version != WIRE_VERSION {
            return Err(value_error(format!(
                "format `{}` version {}, expected `{WIRE_FORMAT}` version {WIRE_VERSION}",
                w.format, w.version
            )));
        }
        if w.kind != kind {
            return Err(value_error(format!(
                "the bytes of a `{}` accumulator, not of a `{kind}` one",
                w.kind
            )));
        }
        Ok(w)
    }

    fn take(&mut self, key: &str) -> PyResult<Vec<u64>> {
        self.state
            .remove(key)
            .ok_or_else(|| value_error(format!("the state has no `{key}`")))
    }
}

/// Refuses to merge a part accumulated for another configuration, naming what differs.
fn check_same(
    ours: &BTreeMap<String, serde_json::Value>,
    theirs: &BTreeMap<String, serde_json::Value>,
) -> PyResult<()> {
    for (key, value) in ours {
        let other = theirs.get(key).unwrap_or(&serde_json::Value::Null);
        if other != value {
            return Err(value_error(format!(
                "cannot merge a part accumulated for {key} = {other} into one for {key} = {value}"
            )));
        }
    }
    Ok(())
}

fn once(released: &mut bool) -> PyResult<()> {
    if std::mem::replace(released, true) {
        return Err(value_error(
            "this statistic was already released: a second release would spend the budget again \
             (merge the parts into a new accumulator to release again, in a session that pays)",
        ));
    }
    Ok(())
}

/// Hadamard LDP reports for one partition, as per-row integer sums.
#[pyclass(module = "dpfair._native", name = "LdpReports")]
pub struct PyLdpReports {
    partition: PartitionFile,
    header: ReportsHeader,
    sums: HadamardSums,
    released: bool,
}

impl PyLdpReports {
    fn config(&self) -> BTreeMap<String, serde_json::Value> {
        BTreeMap::from([
            ("partition".into(), self.header.partition.clone().into()),
            ("mechanism".into(), self.header.mechanism.name().into()),
            ("epsilon".into(), self.header.epsilon.into()),
            ("leaves".into(), self.header.n_leaves.into()),
        ])
    }
}

#[pymethods]
impl PyLdpReports {
    /// No reports yet, for the partition file's text (`dpfair ldp partition`'s TREE.json).
    #[new]
    fn new(partition_json: &str) -> PyResult<Self> {
        guard(|| {
            let partition = PartitionFile::from_json(partition_json).map_err(value_error)?;
            if partition.mechanism != Mechanism::Hadamard {
                return Err(value_error(
                    "a Laplace partition: its reports are real numbers whose sums are exact only \
                     up to the order of additions; collect them with `dpfair ldp fit` (or make \
                     the partition with --mechanism hadamard)",
                ));
            }
            let header = ReportsHeader::for_partition(&partition).map_err(value_error)?;
            let sums = HadamardSums::new(partition.epsilon, partition.tree.n_leaves())
                .map_err(value_error)?;
            Ok(PyLdpReports {
                partition,
                header,
                sums,
                released: false,
            })
        })
    }

    /// Fold in a batch of reports: Hadamard row indices (unsigned integers) and bits (true
    /// is +1), of the same length. Refuses the whole batch if a row is out of range.
    fn update(
        &mut self,
        rows: &Bound<'_, PyAny>,
        bits: PyReadonlyArray1<'_, bool>,
    ) -> PyResult<()> {
        let bits = bits.as_slice().map_err(value_error)?;
        let n = bits.len();
        let check = |len: usize| {
            if len == n {
                Ok(())
            } else {
                Err(value_error(format!("{len} row indices for {n} bits")))
            }
        };
        if let Ok(a) = rows.extract::<PyReadonlyArray1<'_, u8>>() {
            check(a.len())?;
            self.sums
                .add_batch(a.as_slice().map_err(value_error)?, bits.iter().copied())
        } else if let Ok(a) = rows.extract::<PyReadonlyArray1<'_, u16>>() {
            check(a.len())?;
            self.sums
                .add_batch(a.as_slice().map_err(value_error)?, bits.iter().copied())
        } else if let Ok(a) = rows.extract::<PyReadonlyArray1<'_, u32>>() {
            check(a.len())?;
            self.sums
                .add_batch(a.as_slice().map_err(value_error)?, bits.iter().copied())
        } else {
            return Err(value_error(
                "rows: a one-dimensional numpy array of uint8, uint16 or uint32",
            ));
        }
        .map_err(value_error)
    }

    /// Fold in a report file written by `dpfair ldp privatize` (Arrow IPC or CSV), after
    /// checking that its reports are for this partition, mechanism and ε. Returns the number
    /// of reports read.
    fn update_file(&mut self, path: std::path::PathBuf) -> PyResult<u64> {
        guard(|| {
            let file = std::fs::File::open(&path).map_err(|e| {
                pyo3::exceptions::PyOSError::new_err(format!("cannot read {}: {e}", path.display()))
            })?;
            let mut sums = ReportSums::Hadamard(self.sums.clone());
            let n = read_reports_into(file, &self.header, &mut sums)
                .map_err(|e| value_error(format!("{}: {e}", path.display())))?;
            if let ReportSums::Hadamard(s) = sums {
                self.sums = s;
            }
            Ok(n)
        })
    }

    /// Refuse reports whose file metadata (an Arrow or Parquet schema's key-value metadata, as
    /// `dpfair ldp privatize` writes it) is not for this partition, mechanism and ε.
    fn check_metadata(&self, metadata: HashMap<String, String>) -> PyResult<()> {
        let found = ReportsHeader::from_metadata(&metadata).map_err(value_error)?;
        self.header.check(&found).map_err(value_error)
    }

    /// Add another part's sums (same partition, mechanism and ε).
    fn merge(&mut self, other: &PyLdpReports) -> PyResult<()> {
        check_same(&self.config(), &other.config())?;
        self.sums.merge(&other.sums).map_err(value_error)
    }

    /// The exact state and the configuration, as bytes (JSON text) for the driver.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let (total, ones) = self.sums.state();
        WireState {
            format: WIRE_FORMAT.into(),
            version: WIRE_VERSION,
            kind: "ldp-reports".into(),
            config: self.config(),
            state: BTreeMap::from([
                ("total".into(), total.to_vec()),
                ("ones".into(), ones.to_vec()),
            ]),
        }
        .to_bytes(py)
    }

    /// Add a part sent as bytes (`to_bytes`); refuses one for another partition, mechanism or ε.
    fn merge_bytes(&mut self, data: &[u8]) -> PyResult<()> {
        let mut w = WireState::parse(data, "ldp-reports")?;
        check_same(&self.config(), &w.config)?;
        let part = HadamardSums::from_state(
            self.header.epsilon,
            self.header.n_leaves,
            w.take("total")?,
            w.take("ones")?,
        )
        .map_err(value_error)?;
        self.sums.merge(&part).map_err(value_error)
    }

    /// The number of reports folded in.
    #[getter]
    fn n_reports(&self) -> u64 {
        self.sums.n_reports()
    }

    /// The partition's digest (`sha256:…`), which every report file carries.
    #[getter]
    fn partition_digest(&self) -> String {
        self.header.partition.clone()
    }

    /// The exact state: per Hadamard row, the number of reports and of +1 bits.
    fn state(&self) -> (Vec<u64>, Vec<u64>) {
        let (total, ones) = self.sums.state();
        (total.to_vec(), ones.to_vec())
    }

    /// LPCT's model from the reports (eq. (8) with the partition's public counts, λ by default
    /// Theorem 4's; leaves guarded at `guard` standard deviations, 0: the paper's estimates);
    /// the ledger records the n reports, each ε-LDP. Once per object.
    #[pyo3(signature = (public_weight = None, guard = dpfair::lpct::guard::DEFAULT_Z))]
    fn finalize(&mut self, public_weight: Option<f64>, guard: f64) -> PyResult<PyModel> {
        crate::error::guard(|| {
            if !(guard.is_finite() && guard >= 0.0) {
                return Err(value_error(format!(
                    "guard: must be finite and ≥ 0, got {guard}"
                )));
            }
            once(&mut self.released)?;
            let reports = ReportSums::Hadamard(self.sums.clone());
            let (ledger, model, lambda) = self
                .partition
                .fit_lpct(&reports, public_weight, (guard != 0.0).then_some(guard))
                .map_err(value_error)?;
            let config = serde_json::json!({
                "epsilon": self.partition.epsilon,
                "lambda": lambda,
                "tree": self.partition.settings,
            });
            let file = ModelFile::new(
                self.partition.schema.clone(),
                ledger,
                &config,
                FittedModel::Lpct(model),
            )
            .map_err(crate::error::model_error)?;
            Ok(PyModel::from(file))
        })
    }
}

/// Fair regression's joint (group × score bin) counts.
#[pyclass(module = "dpfair._native", name = "JointCounts")]
pub struct PyJointCounts {
    score_column: String,
    sensitive: String,
    groups: Vec<String>,
    counts: JointCounts,
    released: bool,
}

impl PyJointCounts {
    fn config(&self) -> BTreeMap<String, serde_json::Value> {
        let grid = self.counts.grid();
        BTreeMap::from([
            ("score_column".into(), self.score_column.clone().into()),
            ("sensitive".into(), self.sensitive.clone().into()),
            ("groups".into(), self.groups.clone().into()),
            ("range".into(), serde_json::json!([grid.lo, grid.hi])),
            ("bins".into(), grid.k.into()),
        ])
    }

    /// A data set with no rows whose columns and group names are this accumulator's, and its
    /// schema (all public: declared by the caller).
    fn header(&self) -> (Dataset, Schema) {
        let data = Dataset {
            features: ndarray::Array2::zeros((0, 1)),
            feature_names: vec![self.score_column.clone()],
            groups: Some(Groups {
                codes: Vec::new(),
                names: self.groups.clone(),
            }),
            target: None,
        };
        let schema = Schema {
            features: vec![FeatureColumn::Numeric {
                name: self.score_column.clone(),
            }],
            sensitive: Some(SensitiveColumn {
                name: self.sensitive.clone(),
                levels: self.groups.clone(),
                declared: true,
            }),
            target: None,
            scaling: Default::default(),
        };
        (data, schema)
    }
}

#[pymethods]
impl PyJointCounts {
    /// No rows yet: scores from `score_column`, groups from `sensitive` with the declared
    /// (public) `groups`, `bins` equal bins on the public `[lo, hi]`.
    #[new]
    fn new(
        score_column: String,
        sensitive: String,
        groups: Vec<String>,
        lo: f64,
        hi: f64,
        bins: usize,
    ) -> PyResult<Self> {
        guard(|| {
            if groups.is_empty() {
                return Err(value_error("groups: declare at least one group"));
            }
            let grid = Grid::new(lo, hi, bins).map_err(value_error)?;
            Ok(PyJointCounts {
                counts: JointCounts::new(groups.len(), grid),
                score_column,
                sensitive,
                groups,
                released: false,
            })
        })
    }

    /// Count rows: scores and group codes (indices into `groups`), of the same length. Errors
    /// name the first bad row of the batch, which is then not counted.
    fn update(
        &mut self,
        scores: PyReadonlyArray1<'_, f64>,
        codes: PyReadonlyArray1<'_, u32>,
    ) -> PyResult<()> {
        let scores = scores.as_slice().map_err(value_error)?;
        let codes = codes.as_slice().map_err(value_error)?;
        self.counts.update(scores, codes).map_err(value_error)
    }

    /// Add another part's counts (same columns, groups and grid).
    fn merge(&mut self, other: &PyJointCounts) -> PyResult<()> {
        check_same(&self.config(), &other.config())?;
        self.counts.merge(&other.counts).map_err(value_error)
    }

    /// The exact counts and the configuration, as bytes (JSON text) for the driver.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        WireState {
            format: WIRE_FORMAT.into(),
            version: WIRE_VERSION,
            kind: "fair-regression-counts".into(),
            config: self.config(),
            state: BTreeMap::from([("counts".into(), self.counts.counts().to_vec())]),
        }
        .to_bytes(py)
    }

    /// Add a part sent as bytes (`to_bytes`); refuses one for other columns, groups or bins.
    fn merge_bytes(&mut self, data: &[u8]) -> PyResult<()> {
        let mut w = WireState::parse(data, "fair-regression-counts")?;
        check_same(&self.config(), &w.config)?;
        let part =
            JointCounts::from_counts(self.groups.len(), self.counts.grid(), w.take("counts")?)
                .map_err(value_error)?;
        self.counts.merge(&part).map_err(value_error)
    }

    /// The exact counts, group-major (`counts[a * bins + j]`).
    fn counts(&self) -> Vec<u64> {
        self.counts.counts().to_vec()
    }

    /// Xian et al.'s Algorithm 1 from the counts: one ε-DP release of the counts (exact discrete
    /// Laplace, charged to `session`'s ledger, or to a session of its own with OS noise), then
    /// the post-processing. Once per object.
    #[pyo3(signature = (alpha, epsilon, session = None))]
    fn finalize(
        &mut self,
        alpha: f64,
        epsilon: f64,
        session: Option<&Bound<'_, PySession>>,
    ) -> PyResult<PyModel> {
        guard(|| {
            let grid = self.counts.grid();
            let est = FairRegression::params()
                .alpha(alpha)
                .epsilon(epsilon)
                .bins(grid.k)
                .range(grid.lo, grid.hi)
                .score_column(self.score_column.clone())
                .groups(self.groups.clone())
                .check()
                .map_err(api_error)?;
            once(&mut self.released)?;
            let (header, schema) = self.header();
            let fitted = match session {
                Some(s) => est.fit_counts(&header, &mut s.borrow_mut().session, &self.counts),
                None => {
                    let mut own = Session::unlimited().with_noise(Noise::os());
                    est.fit_counts(&header, &mut own, &self.counts)
                }
            };
            // A failed release stays spent: whether noise was drawn is not retried.
            let fitted = fitted.map_err(api_error)?;
            let file = fitted.to_model_file(schema).map_err(api_error)?;
            Ok(PyModel::from(file))
        })
    }
}

/// Adds the accumulator classes to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLdpReports>()?;
    m.add_class::<PyJointCounts>()?;
    Ok(())
}
