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

impl Dataset {
    /// The rows `idx` (in that order), with their groups and targets.
    pub fn select(&self, idx: &[usize]) -> Dataset {
        let features = self.features.select(ndarray::Axis(0), idx);
        let groups = self.groups.as_ref().map(|g| Groups {
            codes: idx.iter().map(|&i| g.codes[i]).collect(),
            names: g.names.clone(),
        });
        let target = self.target.as_ref().map(|t| match t {
            Target::Binary(y) => Target::Binary(idx.iter().map(|&i| y[i]).collect()),
            Target::Multiclass { k, labels } => Target::Multiclass {
                k: *k,
                labels: idx.iter().map(|&i| labels[i]).collect(),
            },
            Target::Real(y) => Target::Real(idx.iter().map(|&i| y[i]).collect()),
        });
        Dataset {
            features,
            feature_names: self.feature_names.clone(),
            groups,
            target,
        }
    }

    /// These rows followed by `other`'s (the same columns, groups and target kind): e.g. the
    /// rows kept from several batches of a file.
    ///
    /// ```
    /// use dpfair_data::{Dataset, Target};
    /// let data = Dataset {
    ///     features: ndarray::array![[0.1], [0.2], [0.3]],
    ///     feature_names: vec!["x".into()],
    ///     groups: None,
    ///     target: Some(Target::Binary(vec![0, 1, 1])),
    /// };
    /// let both = data.select(&[0, 1]).concat(&data.select(&[2]));
    /// assert_eq!(both, data);
    /// ```
    pub fn concat(&self, other: &Dataset) -> Dataset {
        let features = ndarray::concatenate(
            ndarray::Axis(0),
            &[self.features.view(), other.features.view()],
        )
        .expect("batches of one schema have the same columns");
        let groups = self.groups.as_ref().map(|g| Groups {
            codes: [
                &g.codes[..],
                other.groups.as_ref().map_or(&[][..], |o| &o.codes),
            ]
            .concat(),
            names: g.names.clone(),
        });
        let target = match (&self.target, &other.target) {
            (Some(Target::Binary(a)), Some(Target::Binary(b))) => {
                Some(Target::Binary([&a[..], b].concat()))
            }
            (
                Some(Target::Multiclass { k, labels: a }),
                Some(Target::Multiclass { labels: b, .. }),
            ) => Some(Target::Multiclass {
                k: *k,
                labels: [&a[..], b].concat(),
            }),
            (Some(Target::Real(a)), Some(Target::Real(b))) => {
                Some(Target::Real([&a[..], b].concat()))
            }
            (t, _) => t.clone(),
        };
        Dataset {
            features,
            feature_names: self.feature_names.clone(),
            groups,
            target,
        }
    }

    /// The sensitive groups, or an error naming `context` (e.g. the method) if there are none.
    pub fn require_groups(&self, context: &str) -> crate::Result<&Groups> {
        self.groups
            .as_ref()
            .ok_or_else(|| crate::DataError::NoGroups {
                context: context.to_string(),
            })
    }

    /// The groups, checking that every declared group has at least one row and that there are
    /// at least two groups. `column` names the sensitive column in messages.
    pub fn require_nonempty_groups(&self, context: &str, column: &str) -> crate::Result<&Groups> {
        let g = self.require_groups(context)?;
        let counts = g.counts();
        if let Some(empty) = counts.iter().position(|&c| c == 0) {
            return Err(crate::DataError::EmptyGroup {
                context: context.to_string(),
                column: column.to_string(),
                group: g.names[empty].clone(),
            });
        }
        if g.count() < 2 {
            return Err(crate::error::invalid(
                "--sensitive",
                format!(
                    "{context}: column `{column}` has a single group `{}`; fairness needs two or more",
                    g.names.first().map_or("", String::as_str)
                ),
            ));
        }
        Ok(g)
    }

    /// The target, or an error naming `context` if there is none.
    pub fn require_target(&self, context: &str) -> crate::Result<&Target> {
        self.target
            .as_ref()
            .ok_or_else(|| crate::DataError::NoTarget {
                context: context.to_string(),
            })
    }

    /// The 0/1 labels of a binary target with both classes present; any other target is an
    /// error that says what was found.
    pub fn require_binary(&self, context: &str, column: &str) -> crate::Result<&[u8]> {
        match self.require_target(context)? {
            Target::Binary(y) => {
                if let Some(&first) = y.first()
                    && y.iter().all(|&v| v == first)
                {
                    return Err(crate::DataError::OneClassTarget {
                        context: context.to_string(),
                        column: column.to_string(),
                        value: first.to_string(),
                        needed: "a binary task needs both classes in the data",
                    });
                }
                Ok(y)
            }
            other => Err(crate::DataError::WrongTask {
                context: context.to_string(),
                column: column.to_string(),
                found: other.task().to_string(),
                needed: "this method needs a binary target (use --task binary only if the column has exactly two values)"
                    .into(),
            }),
        }
    }
}

impl Groups {
    /// Rows per group code.
    pub fn counts(&self) -> Vec<usize> {
        let mut c = vec![0; self.names.len()];
        for &g in &self.codes {
            if let Some(slot) = c.get_mut(g as usize) {
                *slot += 1;
            }
        }
        c
    }
}

impl Target {
    /// The task this target defines.
    pub fn task(&self) -> crate::TaskKind {
        match self {
            Target::Binary(_) => crate::TaskKind::Binary,
            Target::Multiclass { .. } => crate::TaskKind::Multiclass,
            Target::Real(_) => crate::TaskKind::Regression,
        }
    }

    /// Class codes of a classification target (binary as 0/1), `None` for a real target.
    pub fn classes(&self) -> Option<Vec<u32>> {
        match self {
            Target::Binary(y) => Some(y.iter().map(|&v| v as u32).collect()),
            Target::Multiclass { labels, .. } => Some(labels.clone()),
            Target::Real(_) => None,
        }
    }
}
