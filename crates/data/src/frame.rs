//! In-memory tables (a DataFrame, numpy arrays): the [`Loaded`] data set and its [`Schema`] built
//! from columns, with the same coding as a CSV read by [`crate::load_csv`], and a stored schema
//! applied to new columns ([`Frame::apply`]) as [`Schema::load`] applies it to a CSV.
//!
//! Numeric columns are borrowed ([`ndarray::ArrayView1`], any stride: a column of a row-major
//! matrix is read in place) and copied once, into the data set's feature matrix. Text columns
//! (one-hot encoded), the sensitive column and a class target go through the CSV loader itself
//! ([`crate::load::load_table`] on an in-memory CSV of those columns only), so their levels,
//! the classes and the positive label are exactly those `dpfair fit` learns from the same CSV,
//! and a model fitted on a frame predicts with `dpfair predict` on that CSV.
//!
//! Missing values are refused (as `--no-missing`), and so are non-finite numbers; messages name
//! the column and the row, counted from 0 as in a DataFrame (`row 0` is the first row).

use crate::dataset::{Dataset, Groups, Target};
use crate::error::{DataError, Result, clip, invalid};
use crate::load::{LoadOptions, LoadReport, Loaded, MissingPolicy, load_table};
use crate::schema::{FeatureColumn, Schema, TargetColumn, TargetEncoding, TaskKind};
use crate::table::{CsvFormat, HeaderMode, Table};
use ndarray::{Array2, ArrayView1};
use std::borrow::Cow;
use std::path::PathBuf;

/// The values of one column.
#[derive(Clone, Debug)]
pub enum Values<'a> {
    /// Numbers, borrowed (a feature, or a real-valued target).
    Numeric(ArrayView1<'a, f64>),
    /// Text: a categorical feature (one-hot encoded), group names or class labels.
    Text(&'a [String]),
}

impl Values<'_> {
    fn len(&self) -> usize {
        match self {
            Values::Numeric(v) => v.len(),
            Values::Text(v) => v.len(),
        }
    }
}

/// A named column.
#[derive(Clone, Debug)]
pub struct Column<'a> {
    pub name: String,
    pub values: Values<'a>,
}

impl<'a> Column<'a> {
    /// A numeric column.
    pub fn numeric(name: impl Into<String>, values: ArrayView1<'a, f64>) -> Self {
        Column {
            name: name.into(),
            values: Values::Numeric(values),
        }
    }

    /// A text column.
    pub fn text(name: impl Into<String>, values: &'a [String]) -> Self {
        Column {
            name: name.into(),
            values: Values::Text(values),
        }
    }
}

/// Feature columns in order, with the sensitive column and the target when known.
#[derive(Clone, Debug, Default)]
pub struct Frame<'a> {
    pub features: Vec<Column<'a>>,
    pub sensitive: Option<Column<'a>>,
    pub target: Option<Column<'a>>,
}

/// How to code the sensitive column and the target of a training frame: the options of
/// [`LoadOptions`] that do not name columns (same meaning and defaults).
#[derive(Clone, Debug, Default)]
pub struct Coding {
    /// Declared sensitive levels, in code order (`--groups`).
    pub groups: Option<Vec<String>>,
    /// Declared classes, in code order (`--classes`).
    pub classes: Option<Vec<String>>,
    /// The task; `None`: inferred as the CSV loader infers it.
    pub task: Option<TaskKind>,
    /// The positive label of a binary target (`--positive`; default: the larger label).
    pub positive: Option<String>,
}

/// The name used for a frame in messages (where a CSV load names its file).
const SOURCE: &str = "input data";

impl Frame<'_> {
    /// Number of rows; every column must have it (checked by [`Frame::learn`] and [`Frame::apply`]).
    fn n_rows(&self) -> Result<usize> {
        let mut columns = self
            .features
            .iter()
            .chain(&self.sensitive)
            .chain(&self.target);
        let Some(first) = columns.next() else {
            return Err(invalid("X", "no columns"));
        };
        let n = first.values.len();
        for c in columns {
            if c.values.len() != n {
                return Err(invalid(
                    "X",
                    format!(
                        "column `{}` has {} rows, column `{}` has {n}",
                        clip(&c.name),
                        c.values.len(),
                        clip(&first.name)
                    ),
                ));
            }
        }
        if n == 0 {
            return Err(invalid("X", "no rows"));
        }
        Ok(n)
    }

    /// Learn the schema and encode (training): numeric features as they are, text features
    /// one-hot, groups and classes coded as `dpfair fit` codes them from a CSV (see the module
    /// docs). The schema has no scaling yet.
    pub fn learn(&self, coding: &Coding) -> Result<Loaded> {
        let n = self.n_rows()?;
        check_unique_names(self)?;
        for c in &self.features {
            if let Values::Numeric(v) = &c.values {
                check_finite(&c.name, v)?;
            }
        }
        let real_target = match &self.target {
            Some(Column {
                name,
                values: Values::Numeric(v),
            }) if coding.task == Some(TaskKind::Regression) => {
                check_finite(name, v)?;
                Some((name.clone(), v.to_vec()))
            }
            _ => None,
        };
        let text = self.text_columns(real_target.is_none());
        let coded = if text.is_empty() {
            None
        } else {
            let table = csv_table(&text, n)?;
            let options = LoadOptions {
                target: self
                    .target
                    .as_ref()
                    .filter(|_| real_target.is_none())
                    .map(|t| t.name.clone()),
                sensitive: self.sensitive.as_ref().map(|s| s.name.clone()),
                features: Some(self.text_feature_names()),
                categorical: self.text_feature_names(),
                groups: coding.groups.clone(),
                classes: coding.classes.clone(),
                task: coding.task,
                positive: coding.positive.clone(),
                missing: MissingPolicy::Refuse,
                format: CSV_FORMAT,
            };
            Some(load_table(&table, &options)?)
        };
        let mut schema = Schema {
            features: Vec::with_capacity(self.features.len()),
            sensitive: None,
            target: None,
            scaling: Default::default(),
        };
        let mut text_k = 0;
        for c in &self.features {
            schema.features.push(match &c.values {
                Values::Numeric(_) => FeatureColumn::Numeric {
                    name: c.name.clone(),
                },
                Values::Text(_) => {
                    let learned = &coded.as_ref().expect("text columns were coded").schema;
                    text_k += 1;
                    learned.features[text_k - 1].clone()
                }
            });
        }
        let (mut groups, mut target, mut one_hot) = (None, None, None);
        if let Some(coded) = coded {
            schema.sensitive = coded.schema.sensitive;
            schema.target = coded.schema.target;
            groups = coded.dataset.groups;
            target = coded.dataset.target;
            one_hot = Some(coded.dataset.features);
        }
        if let Some((name, values)) = real_target {
            schema.target = Some(TargetColumn {
                name,
                encoding: TargetEncoding::Real,
            });
            target = Some(Target::Real(values));
        }
        let features = encode(&schema, self, one_hot.as_ref())?;
        Ok(finish(schema, features, groups, target, n))
    }

    /// Encode new columns with a stored schema (prediction, evaluation): features picked by name
    /// (extra columns ignored), categorical levels as fitted (an unseen level is an error naming
    /// the column, row and value), the schema's scaling applied. Groups and the target are read
    /// when the frame has them.
    pub fn apply(&self, schema: &Schema) -> Result<Dataset> {
        let n = self.n_rows()?;
        let mut x = Array2::<f64>::zeros((n, schema.n_features()));
        let mut offset = 0;
        for f in &schema.features {
            let column = self
                .features
                .iter()
                .find(|c| c.name == f.name())
                .ok_or_else(|| {
                    invalid(
                        "X",
                        format!(
                            "column `{}` of the model's schema is missing (columns: {})",
                            f.name(),
                            clip(
                                &self
                                    .features
                                    .iter()
                                    .map(|c| c.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        ),
                    )
                })?;
            match (f, &column.values) {
                (FeatureColumn::Numeric { name }, Values::Numeric(v)) => {
                    check_finite(name, v)?;
                    x.column_mut(offset).assign(v);
                }
                (FeatureColumn::Categorical { name, levels }, Values::Text(v)) => {
                    for (i, value) in v.iter().enumerate() {
                        let level = level_of(levels, value, false)
                            .ok_or_else(|| unseen(name, i, value, levels))?;
                        x[[i, offset + level]] = 1.0;
                    }
                }
                (FeatureColumn::Numeric { name }, Values::Text(_)) => {
                    return Err(invalid(
                        "X",
                        format!(
                            "column `{name}` was numeric when the model was fitted and is text here"
                        ),
                    ));
                }
                (FeatureColumn::Categorical { name, .. }, Values::Numeric(_)) => {
                    return Err(invalid(
                        "X",
                        format!(
                            "column `{name}` was text (one-hot encoded) when the model was fitted and is numeric here"
                        ),
                    ));
                }
            }
            offset += f.width();
        }
        schema.scaling.apply(&mut x)?;
        let groups = match (&schema.sensitive, &self.sensitive) {
            (Some(s), Some(column)) => Some(Groups {
                codes: codes_of(&s.name, &s.levels, column)?,
                names: s.levels.clone(),
            }),
            _ => None,
        };
        let target = match (&schema.target, &self.target) {
            (Some(t), Some(column)) => Some(match (&t.encoding, &column.values) {
                (TargetEncoding::Real, Values::Numeric(v)) => {
                    check_finite(&t.name, v)?;
                    Target::Real(v.to_vec())
                }
                (TargetEncoding::Binary { labels }, _) => Target::Binary(
                    codes_of(&t.name, labels, column)?
                        .into_iter()
                        .map(|c| c as u8)
                        .collect(),
                ),
                (TargetEncoding::Multiclass { labels }, _) => Target::Multiclass {
                    k: labels.len(),
                    labels: codes_of(&t.name, labels, column)?,
                },
                (TargetEncoding::Real, Values::Text(_)) => {
                    return Err(invalid(
                        "y",
                        format!("target `{}` is real-valued: pass numbers", t.name),
                    ));
                }
            }),
            _ => None,
        };
        Ok(Dataset {
            features: x,
            feature_names: schema.feature_names(),
            groups,
            target,
        })
    }

    /// The columns that go through the CSV loader: text features, the sensitive column, and the
    /// target unless it is real-valued.
    fn text_columns(&self, with_target: bool) -> Vec<(&str, Vec<Cow<'_, str>>)> {
        self.features
            .iter()
            .filter(|c| matches!(c.values, Values::Text(_)))
            .chain(&self.sensitive)
            .chain(self.target.iter().filter(|_| with_target))
            .map(|c| (c.name.as_str(), as_text(&c.values)))
            .collect()
    }

    fn text_feature_names(&self) -> Vec<String> {
        self.features
            .iter()
            .filter(|c| matches!(c.values, Values::Text(_)))
            .map(|c| c.name.clone())
            .collect()
    }
}

const CSV_FORMAT: CsvFormat = CsvFormat {
    delimiter: Some(b','),
    header: HeaderMode::Present,
};

/// Text values as they are; numbers (a numeric sensitive column or class target) spelled as the
/// shortest text that reads back as them (`0`, `1`, `2.5`).
fn as_text<'a>(values: &'a Values<'_>) -> Vec<Cow<'a, str>> {
    match values {
        Values::Text(v) => v.iter().map(|s| Cow::Borrowed(s.as_str())).collect(),
        Values::Numeric(v) => v
            .iter()
            .map(|x| Cow::Owned(format!("{}", x + 0.0)))
            .collect(),
    }
}

/// An in-memory CSV of the text columns, read back by the CSV reader.
fn csv_table(columns: &[(&str, Vec<Cow<'_, str>>)], n: usize) -> Result<Table> {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    let csv_error = |e: csv::Error| DataError::Csv {
        path: PathBuf::from(SOURCE),
        reason: e.to_string(),
    };
    w.write_record(columns.iter().map(|(name, _)| *name))
        .map_err(csv_error)?;
    for i in 0..n {
        w.write_record(columns.iter().map(|(_, v)| v[i].as_bytes()))
            .map_err(csv_error)?;
    }
    let bytes = w.into_inner().map_err(|e| DataError::Csv {
        path: PathBuf::from(SOURCE),
        reason: e.to_string(),
    })?;
    Table::from_bytes(PathBuf::from(SOURCE), &bytes, &CSV_FORMAT)
}

/// The feature matrix of `frame` under `schema`: numeric columns copied from their views, one-hot
/// columns from `one_hot` (the coded text features, in order).
fn encode(
    schema: &Schema,
    frame: &Frame<'_>,
    one_hot: Option<&Array2<f64>>,
) -> Result<Array2<f64>> {
    let n = frame.n_rows()?;
    let mut x = Array2::<f64>::zeros((n, schema.n_features()));
    let (mut offset, mut hot_offset) = (0, 0);
    for (f, c) in schema.features.iter().zip(&frame.features) {
        let width = f.width();
        match &c.values {
            Values::Numeric(v) => x.column_mut(offset).assign(v),
            Values::Text(_) => {
                let hot = one_hot.expect("text columns were coded");
                for k in 0..width {
                    x.column_mut(offset + k).assign(&hot.column(hot_offset + k));
                }
                hot_offset += width;
            }
        }
        offset += width;
    }
    Ok(x)
}

fn finish(
    schema: Schema,
    features: Array2<f64>,
    groups: Option<Groups>,
    target: Option<Target>,
    n: usize,
) -> Loaded {
    let dataset = Dataset {
        features,
        feature_names: schema.feature_names(),
        groups,
        target,
    };
    let used = schema.features.iter().map(|f| (f.name().to_string(), 0));
    Loaded {
        dataset,
        report: LoadReport {
            path: PathBuf::from(SOURCE),
            rows_in_file: n,
            rows: (0..n).collect(),
            dropped: 0,
            missing_by_column: used.collect(),
            delimiter: b',',
            has_header: true,
        },
        schema,
    }
}

/// Feature, sensitive and target names must differ (one column, one role).
fn check_unique_names(frame: &Frame<'_>) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for c in frame
        .features
        .iter()
        .chain(&frame.sensitive)
        .chain(&frame.target)
    {
        if !seen.insert(c.name.as_str()) {
            return Err(invalid(
                "X",
                format!(
                    "column `{}` is used twice (features, sensitive_features and y must be different columns)",
                    clip(&c.name)
                ),
            ));
        }
    }
    Ok(())
}

/// NaN and infinities are refused, naming the column and the (0-based) row.
fn check_finite(name: &str, values: &ArrayView1<'_, f64>) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(invalid(
            "X",
            format!(
                "column `{}`, row {i}: {} is not finite (NaN, missing values and infinities are refused)",
                clip(name),
                values[i]
            ),
        )),
    }
}

/// The code of `value` among `levels`: equal text, or, for labels (`numeric`), equal numbers
/// (`1` = `1.0`, as the CSV loader compares class and group labels).
fn level_of(levels: &[String], value: &str, numeric: bool) -> Option<usize> {
    let value = value.trim();
    levels.iter().position(|l| l == value).or_else(|| {
        let number = |s: &str| s.trim().parse::<f64>().ok().filter(|x| x.is_finite());
        let x = number(value).filter(|_| numeric)?;
        levels.iter().position(|l| number(l) == Some(x))
    })
}

/// Codes of a group or label column under stored levels.
fn codes_of(name: &str, levels: &[String], column: &Column<'_>) -> Result<Vec<u32>> {
    let spelled: Vec<String>;
    let values: Vec<&str> = match &column.values {
        Values::Text(v) => v.iter().map(String::as_str).collect(),
        Values::Numeric(v) => {
            spelled = v.iter().map(|x| format!("{}", x + 0.0)).collect();
            spelled.iter().map(String::as_str).collect()
        }
    };
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            level_of(levels, v, true)
                .map(|c| c as u32)
                .ok_or_else(|| unseen(name, i, v, levels))
        })
        .collect()
}

fn unseen(column: &str, row: usize, value: &str, levels: &[String]) -> DataError {
    invalid(
        "X",
        format!(
            "column `{}`, row {row}: `{}` was not seen when the model was fitted (known: {})",
            clip(column),
            clip(value),
            clip(&levels.join(", "))
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::load_csv;
    use ndarray::array;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn learns_the_schema_a_csv_load_learns() {
        let age = array![30.0, 41.5, 25.0, 60.0];
        let job = strings(&["b", "a", "b", "c"]);
        let sex = strings(&["F", "M", "M", "F"]);
        let y = strings(&["<=50K", ">50K", "<=50K", ">50K"]);
        let frame = Frame {
            features: vec![
                Column::numeric("age", age.view()),
                Column::text("job", &job),
            ],
            sensitive: Some(Column::text("sex", &sex)),
            target: Some(Column::text("y", &y)),
        };
        let from_frame = frame.learn(&Coding::default()).unwrap();

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.csv");
        std::fs::write(
            &path,
            "age,job,sex,y\n30,b,F,<=50K\n41.5,a,M,>50K\n25,b,M,<=50K\n60,c,F,>50K\n",
        )
        .unwrap();
        let options = LoadOptions {
            target: Some("y".into()),
            sensitive: Some("sex".into()),
            categorical: vec!["job".into()],
            ..LoadOptions::default()
        };
        let from_csv = load_csv(&path, &options).unwrap();
        assert_eq!(from_frame.schema, from_csv.schema);
        assert_eq!(from_frame.dataset, from_csv.dataset);
        // And the stored schema applied to the same columns gives the same data set.
        assert_eq!(frame.apply(&from_frame.schema).unwrap(), from_csv.dataset);
    }

    #[test]
    fn refuses_nan_unseen_levels_and_ragged_columns() {
        let x = array![1.0, f64::NAN];
        let frame = Frame {
            features: vec![Column::numeric("a", x.view())],
            ..Frame::default()
        };
        let e = frame.learn(&Coding::default()).unwrap_err().to_string();
        assert!(e.contains("column `a`, row 1"), "{e}");

        let ok = array![1.0, 2.0];
        let g = strings(&["u", "v"]);
        let fit = Frame {
            features: vec![Column::numeric("a", ok.view())],
            sensitive: Some(Column::text("g", &g)),
            target: None,
        }
        .learn(&Coding::default())
        .unwrap();
        let g2 = strings(&["u", "w"]);
        let e = Frame {
            features: vec![Column::numeric("a", ok.view())],
            sensitive: Some(Column::text("g", &g2)),
            target: None,
        }
        .apply(&fit.schema)
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `g`, row 1: `w` was not seen"), "{e}");

        let short = strings(&["u"]);
        let e = Frame {
            features: vec![Column::numeric("a", ok.view())],
            sensitive: Some(Column::text("g", &short)),
            target: None,
        }
        .learn(&Coding::default())
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `g` has 1 rows, column `a` has 2"), "{e}");
    }

    #[test]
    fn real_target_and_numeric_only_frame() {
        let x = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
        let y = array![0.5, 1.5, 2.5];
        let frame = Frame {
            features: vec![
                Column::numeric("x0", x.column(0)),
                Column::numeric("x1", x.column(1)),
            ],
            sensitive: None,
            target: Some(Column::numeric("y", y.view())),
        };
        let loaded = frame.learn(&Coding::default()).unwrap();
        assert_eq!(loaded.dataset.features, x);
        assert_eq!(loaded.dataset.target, Some(Target::Real(y.to_vec())));
        assert_eq!(loaded.schema.task(), Some(TaskKind::Regression));
    }
}
