//! Preprocessing fitted once and applied to every later split: min-max scaling to \[0,1\]^d and
//! standardisation. One-hot encoding is part of the [`crate::Schema`]'s feature encoders.
//!
//! **Bounds are privacy-relevant** (DESIGN.md, "The privacy boundary"): min-max scaling needs a
//! range per feature. Public bounds ([`Bounds`], from `--bounds col:lo:hi,...` or a bounds file)
//! cost nothing; one-hot columns are in \[0,1\] by construction, and so is a numeric column whose
//! values are all 0 or 1 (its type, *binary*, is schema information like a text column's
//! levels: docs/privacy.md, "Feature bounds"). Bounds are never the min/max of private data:
//! without public bounds they are estimated privately, with a documented share of the budget
//! recorded in the ledger ([`MinMax::fit`]): by default from nothing but a data-independent
//! log-scale grid ([`dpfair_privacy::mechanisms::auto_range`]), or, for a column given a coarse
//! *public* range (`--coarse-bounds`), as private 1% and 99% quantiles on a grid over that range
//! ([`dpfair_privacy::mechanisms::private_range`]).

use crate::error::{DataError, Result, invalid};
use crate::schema::{FeatureColumn, Schema};
use dpfair_privacy::{Ledger, Noise};
use ndarray::Array2;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The ledger label of a column's private bounds, followed by the column's name in backticks
/// (what `dpfair::pipeline::bounds_epsilon_per_column` reads back).
pub const BOUNDS_LABEL: &str = "feature bounds of column";

/// Public per-column bounds `lo < hi`, keyed by source column name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bounds(pub BTreeMap<String, (f64, f64)>);

impl Bounds {
    /// Parse `col:lo:hi,col:lo:hi,...` (also newline-separated; the column name may itself contain
    /// `:` since the two numbers are taken from the right).
    pub fn parse(spec: &str) -> Result<Bounds> {
        let mut bounds = Bounds::default();
        for item in spec
            .split([',', '\n'])
            .map(str::trim)
            .filter(|s| !s.is_empty() && !s.starts_with('#'))
        {
            let mut parts = item.rsplitn(3, ':');
            let (hi, lo, col) = (parts.next(), parts.next(), parts.next());
            let (Some(hi), Some(lo), Some(col)) = (hi, lo, col) else {
                return Err(invalid(
                    "--bounds",
                    format!("`{item}` is not of the form col:lo:hi"),
                ));
            };
            let num = |s: &str| {
                s.trim()
                    .parse::<f64>()
                    .map_err(|_| invalid("--bounds", format!("`{s}` in `{item}` is not a number")))
            };
            bounds.insert(col.trim(), num(lo)?, num(hi)?, "--bounds")?;
        }
        Ok(bounds)
    }

    /// Add `column`'s bounds `[lo, hi]`, checked: both finite, `lo < hi`, the column not
    /// already bounded. The one check of every front end (`--bounds`, Python's `bounds=`);
    /// `parameter` names the option in the message, which names the column.
    pub fn insert(
        &mut self,
        column: &str,
        lo: f64,
        hi: f64,
        parameter: &'static str,
    ) -> Result<()> {
        let why = if !(lo.is_finite() && hi.is_finite()) {
            "both must be finite numbers"
        } else if lo >= hi {
            "the lower bound must be below the upper bound"
        } else {
            ""
        };
        if !why.is_empty() {
            return Err(invalid(
                parameter,
                format!("column `{column}`: bounds [{lo}, {hi}]: {why}"),
            ));
        }
        if self.0.insert(column.to_string(), (lo, hi)).is_some() {
            return Err(invalid(
                parameter,
                format!("column `{column}` has bounds twice"),
            ));
        }
        Ok(())
    }

    /// Read a bounds file: the same syntax as [`Bounds::parse`], one `col:lo:hi` per line or
    /// comma-separated; `#` starts a comment line.
    pub fn from_file(path: &Path) -> Result<Bounds> {
        let text = std::fs::read_to_string(path).map_err(|source| DataError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Bounds::parse(&text)
    }

    /// Merge `other` into `self`; a column in both is an error.
    pub fn merge(mut self, other: Bounds) -> Result<Bounds> {
        for (k, v) in other.0 {
            if self.0.insert(k.clone(), v).is_some() {
                return Err(invalid(
                    "--bounds",
                    format!("column `{k}` has bounds twice"),
                ));
            }
        }
        Ok(self)
    }

    pub fn get(&self, column: &str) -> Option<(f64, f64)> {
        self.0.get(column).copied()
    }
}

/// What private bound estimation may spend, and the public coarse domains it searches.
pub struct PrivateBounds<'a> {
    pub ledger: &'a mut Ledger,
    pub noise: &'a mut Noise,
    /// Total ε for all the columns estimated (split equally over them).
    pub epsilon: f64,
    /// A coarse public range per column (`--coarse-bounds`), e.g. `age:0:150`; the columns
    /// without one get [`dpfair_privacy::mechanisms::auto_range`].
    pub coarse: &'a Bounds,
}

/// Where a feature's range came from (recorded in the model's schema).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum BoundSource {
    /// Given by the user (`--bounds`): public, no privacy cost.
    Public,
    /// A one-hot indicator: [0, 1] by construction.
    OneHot,
    /// A numeric column whose values are all 0 or 1: [0, 1] by its type (schema information).
    Binary,
    /// Estimated privately; `ledger_label` names the ledger entry that paid for it.
    Private { ledger_label: String },
}

/// How each source column's bounds were set ([`MinMax::plan`]): column names, one-hot columns
/// with their number of levels. Schema information only (names, types, levels).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoundsPlan {
    pub private: Vec<String>,
    pub binary: Vec<String>,
    pub public: Vec<String>,
    pub one_hot: Vec<(String, usize)>,
}

impl BoundsPlan {
    /// How [`MinMax::fit`] will set each column's bounds with these `public` bounds, before any
    /// release: public where given, [0, 1] for one-hot and 0/1 columns, private for the rest.
    pub fn of(schema: &Schema, data: &crate::Dataset, public: &Bounds) -> BoundsPlan {
        let mut plan = BoundsPlan::default();
        let mut j = 0;
        for f in &schema.features {
            match f {
                FeatureColumn::Categorical { name, levels } => {
                    plan.one_hot.push((name.clone(), levels.len()))
                }
                FeatureColumn::Numeric { name } if public.get(name).is_some() => {
                    plan.public.push(name.clone())
                }
                FeatureColumn::Numeric { name } if is_binary(data, j) => {
                    plan.binary.push(name.clone())
                }
                FeatureColumn::Numeric { name } => plan.private.push(name.clone()),
            }
            j += f.width();
        }
        plan
    }
}

/// Whether encoded feature `j` of `data` takes only the values 0 and 1 (a binary column: its
/// type is schema information, docs/privacy.md "Feature bounds").
fn is_binary(data: &crate::Dataset, j: usize) -> bool {
    data.features
        .column(j)
        .iter()
        .all(|&v| v == 0.0 || v == 1.0)
}

/// Min-max scaling of each encoded feature to [0, 1]: `(x − lo) / (hi − lo)`, clipped to [0, 1]
/// (values outside the bounds are clipped); a constant column (`hi == lo`) maps to 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MinMax {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
    pub sources: Vec<BoundSource>,
}

impl MinMax {
    /// Bounds for every encoded feature of `schema`: numeric columns from `public`, one-hot
    /// columns [0, 1]. Columns without public bounds: [`DataError::PrivateBoundsUnavailable`]
    /// (see [`MinMax::fit`] for private estimation).
    /// A bound for a column that is neither a feature nor the target is an error (a typo).
    pub fn from_public(schema: &Schema, public: &Bounds) -> Result<MinMax> {
        Self::fit(schema, None, public, None)
    }

    /// Bounds for every encoded feature: public ones from `public` (free), one-hot columns
    /// [0, 1], binary columns (every value 0 or 1, when `data` is given) [0, 1], and, for the
    /// other numeric columns, private estimates when `private` is given, on the column of `data`
    /// (not yet scaled): `private.epsilon / m` each for the m columns estimated (sequential
    /// composition: `private.epsilon` in total, pure ε). A column with a coarse public range uses
    /// [`dpfair_privacy::mechanisms::private_range`] (two entries; if both quantiles land on the
    /// same grid point the range is widened by one grid step on each side, post-processing);
    /// the others [`dpfair_privacy::mechanisms::auto_range`] (two entries).
    ///
    /// ```
    /// use dpfair_data::{Bounds, Dataset, FeatureColumn, MinMax, PrivateBounds, Schema};
    /// use dpfair_privacy::{Budget, Ledger, Noise};
    /// // Column `x` in [20, 70]; column `flag` is 0/1 (bounds [0, 1] by its type, free).
    /// let rows: Vec<f64> = (0..500).flat_map(|i| [20.0 + (i % 51) as f64, (i % 2) as f64]).collect();
    /// let dataset = Dataset {
    ///     features: ndarray::Array2::from_shape_vec((500, 2), rows).unwrap(),
    ///     feature_names: vec!["x".into(), "flag".into()],
    ///     groups: None,
    ///     target: None,
    /// };
    /// let schema = Schema {
    ///     features: vec![
    ///         FeatureColumn::Numeric { name: "x".into() },
    ///         FeatureColumn::Numeric { name: "flag".into() },
    ///     ],
    ///     sensitive: None,
    ///     target: None,
    ///     scaling: Default::default(),
    /// };
    /// // ε = 1 on 500 rows: the release fails with probability below 1e-30 (docs/privacy.md).
    /// let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
    /// let private = PrivateBounds {
    ///     ledger: &mut ledger,
    ///     noise: &mut Noise::os(),
    ///     epsilon: 1.0,
    ///     coarse: &Bounds::default(),
    /// };
    /// let mm = MinMax::fit(&schema, Some(&dataset), &Bounds::default(), Some(private))?;
    /// assert!(mm.lo[0] < mm.hi[0]);
    /// assert_eq!((mm.lo[1], mm.hi[1]), (0.0, 1.0));
    /// assert_eq!(ledger.entries().len(), 2); // x only: two releases
    /// assert_eq!(mm.plan(&schema).private, ["x"]);
    /// # Ok::<(), dpfair_data::DataError>(())
    /// ```
    pub fn fit(
        schema: &Schema,
        data: Option<&crate::Dataset>,
        public: &Bounds,
        private: Option<PrivateBounds<'_>>,
    ) -> Result<MinMax> {
        for col in public.0.keys() {
            let known = schema.features.iter().any(|f| f.name() == col)
                || schema.target.as_ref().is_some_and(|t| &t.name == col);
            if !known {
                return Err(invalid(
                    "--bounds",
                    format!(
                        "column `{col}` is not a feature or the target (features: {})",
                        schema
                            .features
                            .iter()
                            .map(|f| f.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        let (mut lo, mut hi, mut sources) = (Vec::new(), Vec::new(), Vec::new());
        let mut missing = Vec::new();
        let mut j = 0;
        for f in &schema.features {
            match f {
                FeatureColumn::Numeric { name } => {
                    let binary = data.is_some_and(|d| is_binary(d, j));
                    let (l, h, source) = match public.get(name) {
                        Some((l, h)) => (l, h, BoundSource::Public),
                        None if binary => (0.0, 1.0, BoundSource::Binary),
                        None => {
                            missing.push((j, name.clone()));
                            (f64::NAN, f64::NAN, BoundSource::Public)
                        }
                    };
                    lo.push(l);
                    hi.push(h);
                    sources.push(source);
                }
                FeatureColumn::Categorical { levels, .. } => {
                    for _ in levels {
                        lo.push(0.0);
                        hi.push(1.0);
                        sources.push(BoundSource::OneHot);
                    }
                }
            }
            j += f.width();
        }
        if missing.is_empty() {
            return Ok(MinMax { lo, hi, sources });
        }
        let (Some(data), Some(private)) = (data, private) else {
            return Err(DataError::PrivateBoundsUnavailable {
                columns: missing
                    .iter()
                    .map(|(_, n)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let eps_each = private.epsilon / missing.len() as f64;
        for (j, name) in missing {
            let values = data.features.column(j).to_vec();
            let label = format!("{BOUNDS_LABEL} `{name}`");
            let (l, h) = match private.coarse.get(&name) {
                Some((clo, chi)) => {
                    let (l, h) = dpfair_privacy::mechanisms::private_range(
                        private.ledger,
                        private.noise,
                        &label,
                        &values,
                        eps_each,
                        (clo, chi),
                    )?;
                    if l >= h {
                        let step =
                            (chi - clo) / (dpfair_privacy::mechanisms::RANGE_GRID - 1) as f64;
                        ((l - step).max(clo), (h + step).min(chi))
                    } else {
                        (l, h)
                    }
                }
                None => {
                    let r = dpfair_privacy::mechanisms::auto_range(
                        private.ledger,
                        private.noise,
                        &label,
                        &values,
                        eps_each,
                    )?;
                    (r.lo, r.hi)
                }
            };
            lo[j] = l;
            hi[j] = h;
            sources[j] = BoundSource::Private {
                ledger_label: label,
            };
        }
        Ok(MinMax { lo, hi, sources })
    }

    /// The source columns by how their bounds were set, for the one line a fit prints: (private,
    /// binary, public) column names, and the one-hot columns with their number of levels.
    pub fn plan(&self, schema: &Schema) -> BoundsPlan {
        let mut plan = BoundsPlan::default();
        let mut j = 0;
        for f in &schema.features {
            match (f, &self.sources[j]) {
                (FeatureColumn::Categorical { name, levels }, _) => {
                    plan.one_hot.push((name.clone(), levels.len()))
                }
                (FeatureColumn::Numeric { name }, BoundSource::Private { .. }) => {
                    plan.private.push(name.clone())
                }
                (FeatureColumn::Numeric { name }, BoundSource::Binary) => {
                    plan.binary.push(name.clone())
                }
                (FeatureColumn::Numeric { name }, _) => plan.public.push(name.clone()),
            }
            j += f.width();
        }
        plan
    }

    /// Scale in place (columns must match the fitted ones).
    pub fn apply(&self, x: &mut Array2<f64>) -> Result<()> {
        check_width("min-max scaling", self.lo.len(), x.ncols())?;
        for mut row in x.rows_mut() {
            for (j, v) in row.iter_mut().enumerate() {
                let (l, h) = (self.lo[j], self.hi[j]);
                *v = if h > l {
                    ((*v - l) / (h - l)).clamp(0.0, 1.0)
                } else {
                    0.0
                };
            }
        }
        Ok(())
    }
}

/// Standardisation `(x − mean) / std` per feature (a constant column maps to 0).
///
/// **Not private**: [`Standardizer::fit`] reads means and standard deviations of the data it is
/// given. Use it on public data, for non-private references, or on already-released statistics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standardizer {
    pub mean: Vec<f64>,
    pub std: Vec<f64>,
}

impl Standardizer {
    /// Means and (population) standard deviations of each column of `x` (non-private).
    pub fn fit(x: &Array2<f64>) -> Result<Standardizer> {
        let n = x.nrows();
        if n == 0 {
            return Err(invalid("standardisation", "no rows to fit on"));
        }
        let mean: Vec<f64> = x
            .columns()
            .into_iter()
            .map(|c| c.sum() / n as f64)
            .collect();
        let std = x
            .columns()
            .into_iter()
            .zip(&mean)
            .map(|(c, m)| (c.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n as f64).sqrt())
            .collect();
        Ok(Standardizer { mean, std })
    }

    pub fn apply(&self, x: &mut Array2<f64>) -> Result<()> {
        check_width("standardisation", self.mean.len(), x.ncols())?;
        for mut row in x.rows_mut() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = if self.std[j] > 0.0 {
                    (*v - self.mean[j]) / self.std[j]
                } else {
                    0.0
                };
            }
        }
        Ok(())
    }
}

/// The fitted feature scaling a schema applies after encoding.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Scaling {
    /// Encoded features as they are (numeric values raw, one-hot 0/1).
    #[default]
    None,
    MinMax(MinMax),
    Standardize(Standardizer),
}

impl Scaling {
    pub fn apply(&self, x: &mut Array2<f64>) -> Result<()> {
        match self {
            Scaling::None => Ok(()),
            Scaling::MinMax(m) => m.apply(x),
            Scaling::Standardize(s) => s.apply(x),
        }
    }
}

fn check_width(what: &str, fitted: usize, got: usize) -> Result<()> {
    if fitted != got {
        return Err(invalid(
            "features",
            format!("{what} was fitted on {fitted} features, the data has {got}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn bounds_parse_and_refuse() {
        let b = Bounds::parse("age:17:90, a:b:-1:1\n").unwrap();
        assert_eq!(b.get("age"), Some((17.0, 90.0)));
        assert_eq!(b.get("a:b"), Some((-1.0, 1.0)));
        assert!(Bounds::parse("age:90:17").is_err());
        assert!(Bounds::parse("age:1").is_err());
        assert!(Bounds::parse("age:x:3").is_err());
        assert!(Bounds::parse("age:0:inf").is_err());
        assert!(Bounds::parse("age:0:1,age:0:2").is_err());
        // One check for every front end (`--bounds`, Python's `bounds=`), naming the column.
        for (lo, hi) in [
            (90.0, 17.0),
            (f64::NAN, 1.0),
            (0.0, f64::INFINITY),
            (5.0, 5.0),
        ] {
            let e = Bounds::default()
                .insert("age", lo, hi, "bounds")
                .unwrap_err()
                .to_string();
            assert!(e.contains("column `age`: bounds ["), "{e}");
        }
        let e = Bounds::parse("age:90:17").unwrap_err().to_string();
        assert!(e.contains("--bounds") && e.contains("column `age`"), "{e}");
    }

    #[test]
    fn min_max_clips_and_maps_constant_columns_to_zero() {
        let m = MinMax {
            lo: vec![0.0, 5.0],
            hi: vec![10.0, 5.0],
            sources: vec![BoundSource::Public, BoundSource::Public],
        };
        let mut x = array![[5.0, 5.0], [-3.0, 7.0], [12.0, 1.0]];
        m.apply(&mut x).unwrap();
        assert_eq!(x, array![[0.5, 0.0], [0.0, 0.0], [1.0, 0.0]]);
        assert!(m.apply(&mut array![[1.0]]).is_err());
    }

    #[test]
    fn standardizer_fitted_on_one_split_applies_to_another() {
        let s = Standardizer::fit(&array![[1.0, 2.0], [3.0, 2.0]]).unwrap();
        assert_eq!(s.mean, vec![2.0, 2.0]);
        assert_eq!(s.std, vec![1.0, 0.0]);
        let mut other = array![[5.0, 9.0]];
        s.apply(&mut other).unwrap();
        assert_eq!(other, array![[3.0, 0.0]]);
    }
}
