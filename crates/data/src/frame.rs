//! In-memory tables (a DataFrame, numpy arrays): the [`Loaded`] data set and its [`Schema`] built
//! from columns, with the same coding as a CSV read by [`crate::load_csv`], and a stored schema
//! applied to new columns ([`Frame::apply`]) as [`Schema::load`] applies it to a CSV.
//!
//! Numeric columns are borrowed ([`ndarray::ArrayView1`], any stride: a column of a row-major
//! matrix is read in place) and copied once, into the data set's feature matrix. Text columns
//! come *factorized*, as `pandas.factorize` gives them ([`Values::Factor`]: a code per row into
//! the column's distinct values; [`crate::factorize`] makes one from strings). Their distinct values
//! go through the CSV loader itself ([`crate::load::load_table`] on a small in-memory CSV with one
//! row per distinct value), so the levels of a one-hot feature, the groups, the classes and the
//! positive label are exactly those `dpfair fit` learns from a CSV of the same columns, and a
//! model fitted on a frame predicts with `dpfair predict` on that CSV.
//!
//! Missing values (a negative code, or a value the CSV reader reads as missing: empty, `?`, `NA`)
//! are refused, as with `--no-missing`, and so are non-finite numbers; messages name the column
//! and the row, counted from 0 as in a DataFrame (`row 0` is the first row).

use crate::dataset::{Dataset, Groups, Target};
use crate::error::{DataError, Result, clip, invalid};
use crate::load::{LoadOptions, LoadReport, Loaded, MissingPolicy, load_table};
use crate::schema::{FeatureColumn, Schema, TargetColumn, TargetEncoding, TaskKind};
use crate::table::{CsvFormat, HeaderMode, Table, is_missing};
use ndarray::{Array2, ArrayView1};
use std::path::PathBuf;

/// The values of one column.
#[derive(Clone, Debug)]
pub enum Values<'a> {
    /// Numbers, borrowed (a feature, or a real-valued target).
    Numeric(ArrayView1<'a, f64>),
    /// Text, factorized: row `i` holds `uniques[codes[i]]` (a negative code is a missing value).
    /// A categorical feature (one-hot encoded), group names or class labels.
    Factor {
        codes: ArrayView1<'a, i64>,
        uniques: &'a [String],
    },
}

impl Values<'_> {
    fn len(&self) -> usize {
        match self {
            Values::Numeric(v) => v.len(),
            Values::Factor { codes, .. } => codes.len(),
        }
    }
}

pub use crate::factorize::factorize;

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

    /// A factorized text column (see [`Values::Factor`]).
    pub fn factor(
        name: impl Into<String>,
        codes: ArrayView1<'a, i64>,
        uniques: &'a [String],
    ) -> Self {
        Column {
            name: name.into(),
            values: Values::Factor { codes, uniques },
        }
    }

    /// The code of every row, checked: in range, not missing (negative), and, for each distinct
    /// value used, not a value the CSV reader reads as missing. Errors name the first bad row.
    fn checked_codes(&self) -> Result<Option<(ArrayView1<'a, i64>, &'a [String])>> {
        let Values::Factor { codes, uniques } = &self.values else {
            return Ok(None);
        };
        let mut first_row = vec![usize::MAX; uniques.len()];
        for (i, &c) in codes.iter().enumerate() {
            match usize::try_from(c).ok().filter(|&c| c < uniques.len()) {
                Some(c) => first_row[c] = first_row[c].min(i),
                None if c < 0 => return Err(missing(&self.name, i, "None/NaN")),
                None => {
                    return Err(invalid(
                        "X",
                        format!(
                            "column `{}`, row {i}: code {c} outside its {} distinct values",
                            clip(&self.name),
                            uniques.len()
                        ),
                    ));
                }
            }
        }
        for (u, &row) in uniques.iter().zip(&first_row) {
            if row != usize::MAX && is_missing(u.trim()) {
                return Err(missing(&self.name, row, u));
            }
        }
        Ok(Some((*codes, *uniques)))
    }
}

fn missing(column: &str, row: usize, value: &str) -> DataError {
    invalid(
        "X",
        format!(
            "column `{}`, row {row}: missing value `{}` refused (drop or fill missing values first)",
            clip(column),
            clip(value)
        ),
    )
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

const CSV_FORMAT: CsvFormat = CsvFormat {
    delimiter: Some(b','),
    header: HeaderMode::Present,
};

impl<'a> Frame<'a> {
    /// Number of rows; every column must have it.
    fn n_rows(&self) -> Result<usize> {
        let mut columns = self.columns();
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

    fn columns(&self) -> impl Iterator<Item = &Column<'a>> {
        self.features
            .iter()
            .chain(&self.sensitive)
            .chain(&self.target)
    }

    /// Learn the schema and encode (training): numeric features as they are, text features
    /// one-hot, groups and classes coded as `dpfair fit` codes them from a CSV (module docs).
    /// The schema has no scaling yet.
    pub fn learn(&self, coding: &Coding) -> Result<Loaded> {
        let n = self.n_rows()?;
        check_unique_names(self)?;
        for c in self.columns() {
            if let Values::Numeric(v) = &c.values {
                check_finite(&c.name, v)?;
            }
        }
        let real_target = match &self.target {
            Some(Column {
                name,
                values: Values::Numeric(v),
            }) if coding.task == Some(TaskKind::Regression) => Some((name.clone(), v.to_vec())),
            Some(Column {
                name,
                values: Values::Numeric(_),
            }) => {
                return Err(invalid(
                    "y",
                    format!(
                        "target `{name}`: pass class labels factorized, numbers only for a regression"
                    ),
                ));
            }
            _ => None,
        };
        if let Some(Column {
            name,
            values: Values::Numeric(_),
        }) = &self.sensitive
        {
            return Err(invalid(
                "sensitive_features",
                format!("column `{name}`: pass the groups factorized"),
            ));
        }
        // The text columns through the CSV loader, one row per distinct value.
        let text: Vec<&Column<'_>> = self
            .features
            .iter()
            .filter(|c| matches!(c.values, Values::Factor { .. }))
            .chain(&self.sensitive)
            .chain(self.target.iter().filter(|_| real_target.is_none()))
            .collect();
        let mut factors = Vec::with_capacity(text.len());
        for c in &text {
            factors.push(c.checked_codes()?.expect("text columns are factors"));
        }
        // Declared levels: a value outside them is refused here, naming its row in the frame.
        let declared = [
            (&self.sensitive, &coding.groups, "groups"),
            (&self.target, &coding.classes, "classes"),
        ];
        for (column, levels, option) in declared {
            if let (Some(column), Some(levels)) = (column, levels) {
                let why = format!("is not one of the levels declared with {option}");
                stored_codes(column, levels, true, &why)?;
            }
        }
        let coded = if text.is_empty() {
            None
        } else {
            let table = distinct_values_table(&text, &factors)?;
            let features: Vec<String> = self
                .features
                .iter()
                .filter(|c| matches!(c.values, Values::Factor { .. }))
                .map(|c| c.name.clone())
                .collect();
            let options = LoadOptions {
                target: self
                    .target
                    .as_ref()
                    .filter(|_| real_target.is_none())
                    .map(|t| t.name.clone()),
                sensitive: self.sensitive.as_ref().map(|s| s.name.clone()),
                features: Some(features.clone()),
                categorical: features,
                drop: Vec::new(),
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
        let mut learned = coded.as_ref().map(|c| c.schema.features.iter());
        for c in &self.features {
            schema.features.push(match &c.values {
                Values::Numeric(_) => FeatureColumn::Numeric {
                    name: c.name.clone(),
                },
                Values::Factor { .. } => learned
                    .as_mut()
                    .and_then(Iterator::next)
                    .expect("one learned column per text column")
                    .clone(),
            });
        }
        let (mut groups, mut target) = (None, None);
        let mut one_hot_codes = Vec::new();
        if let Some(coded) = &coded {
            // Per distinct value, its code in the learned coding (row j of the small table is
            // distinct value j, or a repeat of value 0 for shorter columns).
            let mut k = 0;
            let mut offset = 0;
            for f in &schema.features {
                if let FeatureColumn::Categorical { levels, .. } = f {
                    let (codes, uniques) = factors[k];
                    let level: Vec<usize> = (0..uniques.len())
                        .map(|j| {
                            (0..levels.len())
                                .find(|&l| coded.dataset.features[[j, offset + l]] == 1.0)
                                .expect("each row has one level")
                        })
                        .collect();
                    one_hot_codes.push(map_codes(codes, &level));
                    offset += levels.len();
                    k += 1;
                }
            }
            schema.sensitive = coded.schema.sensitive.clone();
            schema.target = coded.schema.target.clone();
            if let Some(g) = &coded.dataset.groups {
                let (codes, uniques) = factors[k];
                let per_value: Vec<usize> = g.codes[..uniques.len()]
                    .iter()
                    .map(|&c| c as usize)
                    .collect();
                groups = Some(Groups {
                    codes: map_codes(codes, &per_value)
                        .into_iter()
                        .map(|c| c as u32)
                        .collect(),
                    names: g.names.clone(),
                });
                k += 1;
            }
            if let Some(t) = &coded.dataset.target {
                let (codes, uniques) = factors[k];
                let classes = t.classes().expect("a coded target has classes");
                let per_value: Vec<usize> = classes[..uniques.len()]
                    .iter()
                    .map(|&c| c as usize)
                    .collect();
                let rows = map_codes(codes, &per_value);
                target = Some(match t {
                    Target::Binary(_) => {
                        Target::Binary(rows.into_iter().map(|c| c as u8).collect())
                    }
                    Target::Multiclass { k, .. } => Target::Multiclass {
                        k: *k,
                        labels: rows.into_iter().map(|c| c as u32).collect(),
                    },
                    Target::Real(_) => unreachable!("a real target is not coded"),
                });
            }
        }
        if let Some((name, values)) = real_target {
            schema.target = Some(TargetColumn {
                name,
                encoding: TargetEncoding::Real,
            });
            target = Some(Target::Real(values));
        }
        let features = encode(&schema, self, n, |k, i| one_hot_codes[k][i])?;
        Ok(finish(schema, features, groups, target, n))
    }

    /// Encode new columns with a stored schema (prediction, evaluation): features picked by name
    /// (extra columns ignored), categorical levels as fitted (an unseen level is an error naming
    /// the column, row and value), the schema's scaling applied. Groups and the target are read
    /// when the frame has them.
    pub fn apply(&self, schema: &Schema) -> Result<Dataset> {
        let n = self.n_rows()?;
        let mut columns = Vec::with_capacity(schema.features.len());
        let mut one_hot_codes = Vec::new();
        for f in &schema.features {
            let column = self
                .features
                .iter()
                .find(|c| c.name == f.name())
                .ok_or_else(|| {
                    let names: Vec<&str> = self.features.iter().map(|c| c.name.as_str()).collect();
                    invalid(
                        "X",
                        format!(
                            "column `{}` of the model's schema is missing (columns: {})",
                            f.name(),
                            clip(&names.join(", "))
                        ),
                    )
                })?;
            match (f, &column.values) {
                (FeatureColumn::Numeric { name }, Values::Numeric(v)) => check_finite(name, v)?,
                (FeatureColumn::Categorical { levels, .. }, Values::Factor { .. }) => {
                    one_hot_codes.push(stored_codes(column, levels, false, UNSEEN)?);
                }
                (FeatureColumn::Numeric { name }, Values::Factor { .. }) => {
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
            columns.push(column.clone());
        }
        let by_schema = Frame {
            features: columns,
            sensitive: None,
            target: None,
        };
        let mut x = encode(schema, &by_schema, n, |k, i| one_hot_codes[k][i])?;
        schema.scaling.apply(&mut x)?;
        let groups = match (&schema.sensitive, &self.sensitive) {
            (Some(s), Some(column)) => Some(Groups {
                codes: stored_codes(column, &s.levels, true, UNSEEN)?
                    .into_iter()
                    .map(|c| c as u32)
                    .collect(),
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
                (TargetEncoding::Real, Values::Factor { .. }) => {
                    return Err(invalid(
                        "y",
                        format!("target `{}` is real-valued: pass numbers", t.name),
                    ));
                }
                (TargetEncoding::Binary { labels }, _) => Target::Binary(
                    stored_codes(column, labels, true, UNSEEN)?
                        .into_iter()
                        .map(|c| c as u8)
                        .collect(),
                ),
                (TargetEncoding::Multiclass { labels }, _) => Target::Multiclass {
                    k: labels.len(),
                    labels: stored_codes(column, labels, true, UNSEEN)?
                        .into_iter()
                        .map(|c| c as u32)
                        .collect(),
                },
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
}

/// A small CSV of the text columns' distinct values: row `j` holds each column's distinct value
/// `j` (a column with fewer repeats its first one, which changes no learned level), read back by
/// the CSV reader.
fn distinct_values_table(
    columns: &[&Column<'_>],
    factors: &[(ArrayView1<'_, i64>, &[String])],
) -> Result<Table> {
    let csv_error = |reason: String| DataError::Csv {
        path: PathBuf::from(SOURCE),
        reason,
    };
    let rows = factors.iter().map(|(_, u)| u.len()).max().unwrap_or(0);
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    w.write_record(columns.iter().map(|c| c.name.as_str()))
        .map_err(|e| csv_error(e.to_string()))?;
    for j in 0..rows {
        w.write_record(
            factors
                .iter()
                .map(|(_, u)| u.get(j).unwrap_or(&u[0]).as_bytes()),
        )
        .map_err(|e| csv_error(e.to_string()))?;
    }
    let bytes = w.into_inner().map_err(|e| csv_error(e.to_string()))?;
    Table::from_bytes(PathBuf::from(SOURCE), &bytes, &CSV_FORMAT)
}

/// Each row's code under `per_value` (the code of each distinct value).
fn map_codes(codes: ArrayView1<'_, i64>, per_value: &[usize]) -> Vec<usize> {
    codes.iter().map(|&c| per_value[c as usize]).collect()
}

/// Why a value outside a stored schema's levels is refused at prediction.
const UNSEEN: &str = "was not seen when the model was fitted";

/// Each row's level under stored or declared `levels` (labels compared as numbers when
/// `numeric_labels`); a value outside them is an error naming its first row and saying `why`.
fn stored_codes(
    column: &Column<'_>,
    levels: &[String],
    numeric_labels: bool,
    why: &str,
) -> Result<Vec<usize>> {
    let (codes, uniques) = match &column.values {
        Values::Factor { .. } => column.checked_codes()?.expect("a factor"),
        Values::Numeric(_) => {
            return Err(invalid(
                "X",
                format!(
                    "column `{}`: pass its values factorized",
                    clip(&column.name)
                ),
            ));
        }
    };
    let mut per_value = Vec::with_capacity(uniques.len());
    for (j, u) in uniques.iter().enumerate() {
        match level_of(levels, u, numeric_labels) {
            Some(l) => per_value.push(l),
            None => {
                // Only an error if some row uses this value.
                if let Some(row) = codes.iter().position(|&c| c == j as i64) {
                    return Err(invalid(
                        "X",
                        format!(
                            "column `{}`, row {row}: `{}` {why} (levels: {})",
                            clip(&column.name),
                            clip(u),
                            clip(&levels.join(", "))
                        ),
                    ));
                }
                per_value.push(0);
            }
        }
    }
    Ok(map_codes(codes, &per_value))
}

/// The feature matrix of `frame` under `schema` (columns in schema order): numeric columns
/// copied from their views, categorical column `k` one-hot from `level(k, row)`.
fn encode(
    schema: &Schema,
    frame: &Frame<'_>,
    n: usize,
    level: impl Fn(usize, usize) -> usize,
) -> Result<Array2<f64>> {
    // Where each column goes: its first encoded column, and its numeric values or its index
    // among the text columns.
    let mut layout = Vec::with_capacity(frame.features.len());
    let (mut offset, mut k) = (0, 0);
    for (f, c) in schema.features.iter().zip(&frame.features) {
        layout.push(match &c.values {
            Values::Numeric(v) => (offset, Some(v), 0),
            Values::Factor { .. } => {
                k += 1;
                (offset, None, k - 1)
            }
        });
        offset += f.width();
    }
    // Built row by row (the matrix is row-major) in a row buffer that stays in the L1 cache, then
    // appended: each cell of the matrix is written once, with no zeroing pass over the whole
    // matrix first (a separate pass over 25 MB on Adult; BENCHMARKS.md, "Python overhead").
    let width = schema.n_features();
    let mut cells = Vec::with_capacity(n * width);
    advise_huge_pages(&cells);
    let mut row = vec![0.0; width];
    for i in 0..n {
        row.fill(0.0);
        for &(offset, values, k) in &layout {
            match values {
                Some(v) => row[offset] = v[i],
                None => row[offset + level(k, i)] = 1.0,
            }
        }
        cells.extend_from_slice(&row);
    }
    Array2::from_shape_vec((n, width), cells)
        .map_err(|e| invalid("X", format!("feature matrix of {n} rows: {e}")))
}

/// Asks Linux to back a large new buffer with transparent huge pages before it is first written
/// (where the system allows them on request, `madvise` mode): one page fault per 2 MiB instead
/// of one per 4 KiB, which on Adult's 25 MB matrix is most of the time spent building it in a
/// fresh process (BENCHMARKS.md, "Python overhead"). Only advice: nothing changes if it is
/// ignored, and the buffer's contents are the same either way.
fn advise_huge_pages<T>(buffer: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = buffer.as_ptr() as usize;
        let end = start + buffer.capacity() * std::mem::size_of::<T>();
        let (first, last) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if last > first {
            // SAFETY: [first, last) lies inside the buffer's allocation, which this process
            // owns; MADV_HUGEPAGE changes only how the kernel backs the pages.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buffer;
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
            skipped_index: false,
            skipped_ids: Vec::new(),
            text_columns: Vec::new(),
        },
        schema,
    }
}

/// Feature, sensitive and target names must differ (one column, one role).
fn check_unique_names(frame: &Frame<'_>) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for c in frame.columns() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::load_csv;
    use ndarray::{Array1, array};

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// A factorized column from strings, owning its codes and distinct values.
    struct Owned(Array1<i64>, Vec<String>);

    impl Owned {
        fn new(values: &[&str]) -> Self {
            let (codes, uniques) = factorize(&strings(values));
            Owned(Array1::from(codes), uniques)
        }
        fn column(&self, name: &str) -> Column<'_> {
            Column::factor(name, self.0.view(), &self.1)
        }
    }

    #[test]
    fn learns_the_schema_a_csv_load_learns() {
        let age = array![30.0, 41.5, 25.0, 60.0, 33.0];
        let job = Owned::new(&["b", "a", "b", "c", "a"]);
        let sex = Owned::new(&["F", "M", "M", "F", "M"]);
        let y = Owned::new(&["<=50K", ">50K", "<=50K", ">50K", ">50K"]);
        let frame = Frame {
            features: vec![Column::numeric("age", age.view()), job.column("job")],
            sensitive: Some(sex.column("sex")),
            target: Some(y.column("y")),
        };
        let from_frame = frame.learn(&Coding::default()).unwrap();

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.csv");
        std::fs::write(
            &path,
            "age,job,sex,y\n30,b,F,<=50K\n41.5,a,M,>50K\n25,b,M,<=50K\n60,c,F,>50K\n33,a,M,>50K\n",
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
        // The stored schema applied to the same columns gives the same data set.
        assert_eq!(frame.apply(&from_frame.schema).unwrap(), from_csv.dataset);
    }

    #[test]
    fn numeric_labels_compare_as_numbers_and_the_positive_label_is_kept() {
        let x = array![1.0, 2.0, 3.0, 4.0];
        let y = Owned::new(&["1.0", "0", "1", "0"]);
        let g = Owned::new(&["2", "10", "2", "10"]);
        let frame = Frame {
            features: vec![Column::numeric("x", x.view())],
            sensitive: Some(g.column("g")),
            target: Some(y.column("y")),
        };
        let coding = Coding {
            positive: Some("0".into()),
            ..Coding::default()
        };
        let loaded = frame.learn(&coding).unwrap();
        // `1.0` and `1` are one class, named by its first spelling; `0` is the positive class.
        assert_eq!(loaded.schema.class_labels(), ["1.0", "0"]);
        assert_eq!(
            loaded.dataset.target,
            Some(Target::Binary(vec![0, 1, 0, 1]))
        );
        // Groups are sorted numerically, as the CSV loader sorts numbers.
        let groups = loaded.dataset.groups.unwrap();
        assert_eq!(groups.names, ["2", "10"]);
        assert_eq!(groups.codes, [0, 1, 0, 1]);
    }

    #[test]
    fn refuses_nan_missing_unseen_levels_and_ragged_columns() {
        let x = array![1.0, f64::NAN];
        let frame = Frame {
            features: vec![Column::numeric("a", x.view())],
            ..Frame::default()
        };
        let e = frame.learn(&Coding::default()).unwrap_err().to_string();
        assert!(e.contains("column `a`, row 1"), "{e}");

        let ok = array![1.0, 2.0, 3.0];
        let g = Owned::new(&["u", "v", "u"]);
        let fit = Frame {
            features: vec![Column::numeric("a", ok.view())],
            sensitive: Some(g.column("g")),
            target: None,
        }
        .learn(&Coding::default())
        .unwrap();
        let g2 = Owned::new(&["u", "u", "w"]);
        let e = Frame {
            features: vec![Column::numeric("a", ok.view())],
            sensitive: Some(g2.column("g")),
            target: None,
        }
        .apply(&fit.schema)
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `g`, row 2: `w` was not seen"), "{e}");

        for (values, row) in [(["u", "NA", "v"], 1), (["u", "v", ""], 2)] {
            let g3 = Owned::new(&values);
            let e = Frame {
                features: vec![Column::numeric("a", ok.view())],
                sensitive: Some(g3.column("g")),
                target: None,
            }
            .learn(&Coding::default())
            .unwrap_err()
            .to_string();
            assert!(
                e.contains(&format!("column `g`, row {row}: missing value")),
                "{e}"
            );
        }
        let codes = array![0i64, -1, 0];
        let uniques = strings(&["u"]);
        let e = Frame {
            features: vec![Column::factor("j", codes.view(), &uniques)],
            ..Frame::default()
        }
        .learn(&Coding::default())
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `j`, row 1: missing value"), "{e}");

        let short = Owned::new(&["u"]);
        let e = Frame {
            features: vec![Column::numeric("a", ok.view())],
            sensitive: Some(short.column("g")),
            target: None,
        }
        .learn(&Coding::default())
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `g` has 1 rows, column `a` has 3"), "{e}");
    }

    #[test]
    fn declared_groups_and_classes_keep_their_order_and_refuse_other_values() {
        let x = array![1.0, 2.0, 3.0];
        let g = Owned::new(&["b", "a", "b"]);
        let y = Owned::new(&["no", "yes", "no"]);
        let frame = Frame {
            features: vec![Column::numeric("x", x.view())],
            sensitive: Some(g.column("g")),
            target: Some(y.column("y")),
        };
        let coding = Coding {
            groups: Some(strings(&["b", "a", "c"])),
            classes: Some(strings(&["yes", "no", "maybe"])),
            ..Coding::default()
        };
        let loaded = frame.learn(&coding).unwrap();
        let groups = loaded.dataset.groups.unwrap();
        assert_eq!(groups.names, ["b", "a", "c"]);
        assert_eq!(groups.codes, [0, 1, 0]);
        assert_eq!(loaded.schema.class_labels(), ["yes", "no", "maybe"]);
        assert_eq!(
            loaded.dataset.target,
            Some(Target::Multiclass {
                k: 3,
                labels: vec![1, 0, 1]
            })
        );
        let narrow = Coding {
            groups: Some(strings(&["b"])),
            ..Coding::default()
        };
        let e = frame.learn(&narrow).unwrap_err().to_string();
        assert!(
            e.contains("column `g`, row 1: `a` is not one of the levels declared with groups"),
            "{e}"
        );
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
        let coding = Coding {
            task: Some(TaskKind::Regression),
            ..Coding::default()
        };
        let loaded = frame.learn(&coding).unwrap();
        assert_eq!(loaded.dataset.features, x);
        assert_eq!(loaded.dataset.target, Some(Target::Real(y.to_vec())));
        assert_eq!(loaded.schema.task(), Some(TaskKind::Regression));
    }
}
