//! The schema: how raw CSV columns become a [`crate::Dataset`], recorded in every model file so that
//! prediction reads raw CSVs in the same format as `fit`.
//!
//! Everything in a schema is **public information** about the data set: column names, the levels of
//! categorical columns (one-hot, in order), the sensitive column and its levels, the target column
//! and its labels, and the fitted scaling with the origin of its bounds. The levels are read from
//! the training file (as scikit-learn's `OneHotEncoder` does) and declared public here; a user who
//! cannot treat them as public must fix them beforehand (`--groups` for the sensitive attribute).

use crate::error::Result;
use crate::load::{ApplyOptions, Loaded, apply_schema};
use crate::preprocess::Scaling;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One source column and how it is encoded into features.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FeatureColumn {
    /// A numeric column: one feature, the value.
    Numeric { name: String },
    /// A categorical column: one 0/1 feature per level, in this order (`name=level`).
    Categorical { name: String, levels: Vec<String> },
}

impl FeatureColumn {
    /// The source column's name.
    pub fn name(&self) -> &str {
        match self {
            FeatureColumn::Numeric { name } | FeatureColumn::Categorical { name, .. } => name,
        }
    }

    /// How many encoded features this column produces.
    pub fn width(&self) -> usize {
        match self {
            FeatureColumn::Numeric { .. } => 1,
            FeatureColumn::Categorical { levels, .. } => levels.len(),
        }
    }

    /// The encoded features' names: `name`, or `name=level` per level.
    pub fn encoded_names(&self) -> Vec<String> {
        match self {
            FeatureColumn::Numeric { name } => vec![name.clone()],
            FeatureColumn::Categorical { name, levels } => {
                levels.iter().map(|l| format!("{name}={l}")).collect()
            }
        }
    }
}

/// The sensitive attribute: its column and its levels (group code `i` is `levels[i]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SensitiveColumn {
    pub name: String,
    pub levels: Vec<String>,
    /// Whether the levels were declared by the user (`--groups`) rather than read from the data.
    #[serde(default)]
    pub declared: bool,
}

/// The kind of learning task a target defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskKind {
    Binary,
    Multiclass,
    Regression,
}

impl std::fmt::Display for TaskKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TaskKind::Binary => "binary",
            TaskKind::Multiclass => "multiclass",
            TaskKind::Regression => "regression",
        })
    }
}

impl std::str::FromStr for TaskKind {
    type Err = crate::DataError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "binary" => Ok(TaskKind::Binary),
            "multiclass" => Ok(TaskKind::Multiclass),
            "regression" => Ok(TaskKind::Regression),
            other => Err(crate::error::invalid(
                "--task",
                format!("`{other}`: expected binary, multiclass or regression"),
            )),
        }
    }
}

/// How the target column is coded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TargetEncoding {
    /// `labels[0]` is coded 0 (negative), `labels[1]` is coded 1 (positive).
    Binary { labels: Vec<String> },
    /// `labels[c]` is class `c`.
    Multiclass { labels: Vec<String> },
    /// A real value.
    Real,
}

impl TargetEncoding {
    pub fn task(&self) -> TaskKind {
        match self {
            TargetEncoding::Binary { .. } => TaskKind::Binary,
            TargetEncoding::Multiclass { .. } => TaskKind::Multiclass,
            TargetEncoding::Real => TaskKind::Regression,
        }
    }

    /// The class labels in code order (empty for a real target).
    pub fn labels(&self) -> &[String] {
        match self {
            TargetEncoding::Binary { labels } | TargetEncoding::Multiclass { labels } => labels,
            TargetEncoding::Real => &[],
        }
    }
}

/// The target column and its coding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetColumn {
    pub name: String,
    pub encoding: TargetEncoding,
}

/// Column names, encoders and fitted scaling: everything needed to turn a raw CSV in the training
/// format into the feature space a model was fitted in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schema {
    /// Feature source columns, in encoding order.
    pub features: Vec<FeatureColumn>,
    pub sensitive: Option<SensitiveColumn>,
    pub target: Option<TargetColumn>,
    /// Scaling applied after encoding (set by the fit command: [`Schema::set_scaling`]).
    #[serde(default)]
    pub scaling: Scaling,
}

/// The number of source columns behind encoded feature names ([`Schema::feature_names`]): one
/// per one-hot group (names `col=level` sharing `col`) and one per other name. A row whose
/// features are on [0, 1] with at most one 1 per one-hot group has squared ℓ2 norm at most this
/// (DP linear regression's default row bound, docs/privacy.md#dp-linear-regression). Read from
/// names only: a numeric column whose own name holds `=` may share a group, and its rows are
/// then clipped a little more; any bound is private, the rows being clipped to it.
///
/// ```
/// let names: Vec<String> = ["age", "job=a", "job=b", "job=c", "hours"].map(String::from).to_vec();
/// assert_eq!(dpfair_data::schema::source_columns(&names), 3);
/// ```
pub fn source_columns(feature_names: &[String]) -> usize {
    let mut groups = std::collections::BTreeSet::new();
    let mut plain = 0;
    for name in feature_names {
        match name.split_once('=') {
            Some((column, _)) => {
                groups.insert(column);
            }
            None => plain += 1,
        }
    }
    plain + groups.len()
}

impl Schema {
    /// Names of the encoded features, in order (`col` or `col=level`).
    pub fn feature_names(&self) -> Vec<String> {
        self.features
            .iter()
            .flat_map(FeatureColumn::encoded_names)
            .collect()
    }

    /// Number of encoded features.
    pub fn n_features(&self) -> usize {
        self.features.iter().map(FeatureColumn::width).sum()
    }

    /// The task the target defines, when there is a target.
    pub fn task(&self) -> Option<TaskKind> {
        self.target.as_ref().map(|t| t.encoding.task())
    }

    /// The class labels (empty for regression or without a target).
    pub fn class_labels(&self) -> &[String] {
        self.target.as_ref().map_or(&[], |t| t.encoding.labels())
    }

    /// Record `scaling` in the schema and apply it to `data` (fitted on this split, applied to
    /// later ones by [`Schema::load`] / [`Schema::transform`]).
    pub fn set_scaling(&mut self, scaling: Scaling, data: &mut crate::Dataset) -> Result<()> {
        scaling.apply(&mut data.features)?;
        self.scaling = scaling;
        Ok(())
    }

    /// Apply this schema's scaling to a data set that was encoded with it but not yet scaled.
    pub fn transform(&self, data: &mut crate::Dataset) -> Result<()> {
        self.scaling.apply(&mut data.features)
    }

    /// Read a new CSV with this schema (prediction, evaluation): columns picked by name, extra
    /// columns ignored, the target read only when `options.with_target` and the column exists,
    /// the sensitive column read when it exists. Encoding and scaling as at fit time.
    ///
    /// An unseen categorical level (or group, or class label) is an error naming the row, column
    /// and value: an all-zero one-hot would silently give the model an input it never saw.
    /// Rows with a missing value in a used column are dropped (or refused, per
    /// `options.missing`); [`LoadReport::rows`](crate::LoadReport::rows) maps the kept rows back to the file.
    pub fn load(&self, path: impl AsRef<Path>, options: &ApplyOptions) -> Result<Loaded> {
        apply_schema(self, path.as_ref(), options)
    }
}
