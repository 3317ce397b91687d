//! The in-memory data set: features, optional sensitive groups, optional target.

use ndarray::Array2;
use serde::{Deserialize, Serialize};

/// Sensitive-attribute values as small integer codes with their original names
/// (`names[codes[i]]` is row i's group as written in the data).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Groups {
    pub codes: Vec<u32>,
    pub names: Vec<String>,
}

impl Groups {
    /// Number of groups (declared levels, which may include groups absent from these rows).
    pub fn count(&self) -> usize {
        self.names.len()
    }
}

/// The prediction target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Target {
    /// Two classes coded 0 / 1.
    Binary(Vec<u8>),
    /// `k` classes coded 0..k.
    Multiclass { k: usize, labels: Vec<u32> },
    /// A real-valued response.
    Real(Vec<f64>),
}

impl Target {
    pub fn len(&self) -> usize {
        match self {
            Target::Binary(v) => v.len(),
            Target::Multiclass { labels, .. } => labels.len(),
            Target::Real(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Rows of features (row-major, f64), with the sensitive group and target when known.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    pub features: Array2<f64>,
    pub feature_names: Vec<String>,
    pub groups: Option<Groups>,
    pub target: Option<Target>,
}

impl Dataset {
    pub fn n_rows(&self) -> usize {
        self.features.nrows()
    }

    pub fn n_features(&self) -> usize {
        self.features.ncols()
    }
}
