//! In-memory tables (a DataFrame, numpy arrays): the [`Loaded`] data set and its [`Schema`] built
//! from columns, with the same coding as a CSV read by [`crate::load_csv`], and a stored schema
//! applied to new columns ([`Frame::apply`]) as [`Schema::load`] applies it to a CSV.
//!
//! Numeric columns are borrowed ([`ndarray::ArrayView1`], any stride: a column of a row-major
//! matrix is read in place) and copied once, into the data set's feature matrix. Other columns
//! come *factorized*, as `pandas.factorize` gives them ([`Values::Factor`]: a code per row into
//! the column's distinct values; [`crate::factorize`] makes one from strings). A factorized
//! feature follows the CSV loader's rule (`holds_text` in `load/encode.rs`): when some present
//! value is a number it is a numeric column (a DataFrame column of dtype `object` holding
//! numbers, a mixed read), parsed as the CSV loader parses it; otherwise it is text. Text
//! columns' distinct values go through the CSV loader itself ([`crate::load::load_table`] on a
//! small in-memory CSV with one row per distinct value), so the levels of a one-hot feature (at
//! most [`crate::load::MAX_TEXT_LEVELS`], unless named in [`Frame::categorical`]), the groups,
//! the classes and the positive label are exactly those `dpfair fit` learns from a CSV of the
//! same columns, and a model fitted on a frame predicts with `dpfair predict` on that CSV.
//!
//! Missing values (NaN in a numeric column, a negative code, or a value the CSV reader reads as
//! missing: empty, `?`, `NA`) are filled by the loader's public rule
//! ([`crate::MissingPolicy::Fill`]; docs/privacy.md, "Failures and messages"); infinities are
//! refused, and messages name the column and the row, counted from 0 as in a DataFrame (`row 0`
//! is the first row).

use crate::dataset::{Dataset, Groups, Target};
use crate::error::{DataError, Result, clip, invalid};
use crate::load::{
    LoadOptions, LoadReport, Loaded, MissingPolicy, Unseen, load_table, midpoint, numeric_fills,
};
use crate::preprocess::Bounds;
use crate::schema::{FeatureColumn, Schema, TargetColumn, TargetEncoding, TaskKind};
use crate::table::{CsvFormat, HeaderMode, Table, is_missing};
use ndarray::{Array1, Array2, ArrayView1};
use std::path::PathBuf;

/// The values of one column.
#[derive(Clone, Debug)]
pub enum Values<'a> {
    /// Numbers, borrowed (a feature, or a real-valued target); NaN is a missing value.
    Numeric(ArrayView1<'a, f64>),
    /// Factorized: row `i` holds `uniques[codes[i]]` (a negative code is a missing value). A
    /// feature (numeric or one-hot, module docs), group names or class labels.
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

    /// A factorized column (see [`Values::Factor`]).
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

    /// The column's factorization, checked (codes in range); `None` for a numeric column.
    fn factor_of(&self) -> Result<Option<Factor<'a>>> {
        let Values::Factor { codes, uniques } = &self.values else {
            return Ok(None);
        };
        let mut first_row = vec![usize::MAX; uniques.len()];
        for (i, &c) in codes.iter().enumerate() {
            match usize::try_from(c).ok().filter(|&c| c < uniques.len()) {
                Some(c) => first_row[c] = first_row[c].min(i),
                None if c < 0 => {}
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
        let present = uniques
            .iter()
            .zip(&first_row)
            .map(|(u, &row)| row != usize::MAX && !is_missing(u.trim()))
            .collect();
        Ok(Some(Factor {
            name: self.name.clone(),
            codes: *codes,
            uniques,
            first_row,
            present,
        }))
    }
}

/// A factorized column, checked ([`Column::factor_of`]).
struct Factor<'a> {
    name: String,
    codes: ArrayView1<'a, i64>,
    uniques: &'a [String],
    /// Per distinct value, the first row holding it (`usize::MAX`: none).
    first_row: Vec<usize>,
    /// Per distinct value, whether some row holds it and it is not a missing-value token.
    present: Vec<bool>,
}

impl Factor<'_> {
    /// The distinct values rows hold, missing-value tokens left out.
    fn present_values(&self) -> Vec<usize> {
        (0..self.uniques.len())
            .filter(|&j| self.present[j])
            .collect()
    }

    /// Each row's code under `per_value` (a code per distinct value; `None`: no code); a
    /// missing value has none.
    fn map(&self, per_value: &[Option<usize>]) -> Vec<Option<usize>> {
        self.codes
            .iter()
            .map(|&c| usize::try_from(c).ok().and_then(|c| per_value[c]))
            .collect()
    }

    /// The column as numbers by the CSV loader's rule (module docs): `None` when it is text (some
    /// value present, none a number); else each row's number, missing values as NaN. A value that
    /// is not a finite number is refused naming its row, not its value (a fit reads private rows).
    fn numbers(&self) -> Result<Option<Array1<f64>>> {
        let present = self.present_values();
        let parse = |j: usize| self.uniques[j].trim().parse::<f64>();
        if !present.is_empty() && present.iter().all(|&j| parse(j).is_err()) {
            return Ok(None);
        }
        let mut per_value = vec![f64::NAN; self.uniques.len()];
        for j in present {
            let row = self.first_row[j];
            per_value[j] = match parse(j) {
                Ok(x) if x.is_finite() => x,
                Ok(_) => return Err(not_finite(&self.name, row)),
                Err(_) => {
                    return Err(invalid(
                        "X",
                        format!(
                            "column `{}`, row {row}: not a number, while other values of the \
                             column are (a column mixing numbers and text is numeric; make it a \
                             `category` column to one-hot encode it)",
                            clip(&self.name)
                        ),
                    ));
                }
            };
        }
        Ok(Some(
            self.codes
                .iter()
                .map(|&c| usize::try_from(c).map_or(f64::NAN, |c| per_value[c]))
                .collect(),
        ))
    }
}

/// An intersectional sensitive attribute (`--sensitive race,sex` of the CSV loader) from its
/// factorized parts: the name (the parts' names joined by `,`), each row's code and the
/// distinct values, each a combination of the parts' values joined as the loader joins them
/// ([`crate::load::GROUP_SEPARATOR`]). A row with a missing part is missing (code −1). The result
/// is the frame's sensitive column: its groups are then learned, declared and charged as one
/// column's.
pub fn intersect(parts: &[Column<'_>]) -> Result<(String, Vec<i64>, Vec<String>)> {
    let mut factors = Vec::with_capacity(parts.len());
    for c in parts {
        match c.factor_of()? {
            Some(f) => factors.push(f),
            None => {
                return Err(invalid(
                    "sensitive_features",
                    format!("column `{}`: pass the groups factorized", clip(&c.name)),
                ));
            }
        }
    }
    let Some(n) = factors.first().map(|f| f.codes.len()) else {
        return Err(invalid("sensitive_features", "no columns"));
    };
    if let Some(f) = factors.iter().find(|f| f.codes.len() != n) {
        return Err(invalid(
            "sensitive_features",
            format!(
                "column `{}` has {} rows, the first {n}",
                clip(&f.name),
                f.codes.len()
            ),
        ));
    }
    let mut index = std::collections::HashMap::new();
    let (mut codes, mut uniques) = (Vec::with_capacity(n), Vec::new());
    for i in 0..n {
        let values: Option<Vec<&str>> = factors
            .iter()
            .map(|f| {
                let c = usize::try_from(f.codes[i]).ok()?;
                f.present[c].then_some(f.uniques[c].as_str())
            })
            .collect();
        let Some(values) = values else {
            codes.push(-1);
            continue;
        };
        let joined = crate::load::join_group(values).map_err(|k| {
            invalid(
                "sensitive_features",
                format!(
                    "column `{}`, row {i}: a value holds `{}`, which separates the parts of an \
                     intersectional group",
                    clip(&factors[k].name),
                    crate::load::GROUP_SEPARATOR.trim()
                ),
            )
        })?;
        let next = uniques.len() as i64;
        let code = *index.entry(joined.clone()).or_insert(next);
        if code == next {
            uniques.push(joined);
        }
        codes.push(code);
    }
    let names: Vec<&str> = parts.iter().map(|c| c.name.as_str()).collect();
    Ok((names.join(","), codes, uniques))
}

/// Feature columns in order, with the sensitive column and the target when known.
#[derive(Clone, Debug, Default)]
pub struct Frame<'a> {
    pub features: Vec<Column<'a>>,
    pub sensitive: Option<Column<'a>>,
    pub target: Option<Column<'a>>,
    /// Factorized feature columns declared categorical (a pandas `category` column, as
    /// `--categorical`): one-hot encoded whatever their values, without the level cap.
    pub categorical: Vec<String>,
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
    /// Public bounds whose midpoints fill missing numeric cells ([`LoadOptions::fill`]).
    pub fill: Bounds,
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
    /// one-hot, groups and classes coded as `dpfair fit` codes them from a CSV, missing values
    /// filled (module docs). The schema has no scaling yet.
    pub fn learn(&self, coding: &Coding) -> Result<Loaded> {
        let n = self.n_rows()?;
        check_unique_names(self)?;
        for name in &self.categorical {
            let declared = self
                .features
                .iter()
                .any(|c| &c.name == name && matches!(c.values, Values::Factor { .. }));
            if !declared {
                return Err(invalid(
                    "X",
                    format!(
                        "column `{}` is declared categorical but is not a factorized feature",
                        clip(name)
                    ),
                ));
            }
        }
        for c in self.columns() {
            if let Values::Numeric(v) = &c.values {
                refuse_infinities(&c.name, v)?;
            }
        }
        let real_target = match &self.target {
            Some(Column {
                name,
                values: Values::Numeric(v),
            }) if coding.task == Some(TaskKind::Regression) => Some((name.clone(), *v)),
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
        // Factorized features that hold numbers become numeric columns (the CSV rule).
        let mut parsed: Vec<Option<Array1<f64>>> = Vec::with_capacity(self.features.len());
        for c in &self.features {
            parsed.push(match c.factor_of()? {
                Some(f) if !self.categorical.contains(&c.name) => f.numbers()?,
                _ => None,
            });
        }
        let features: Vec<Column<'_>> = self
            .features
            .iter()
            .zip(&parsed)
            .map(|(c, p)| with_numbers(c, p.as_ref()))
            .collect();
        let sensitive = self.sensitive.as_ref().map(|c| with_numbers(c, None));
        let target_column = self.target.as_ref().map(|c| with_numbers(c, None));
        // The text columns through the CSV loader, one row per distinct value.
        let text: Vec<&Column<'_>> = features
            .iter()
            .filter(|c| matches!(c.values, Values::Factor { .. }))
            .chain(&sensitive)
            .chain(target_column.iter().filter(|_| real_target.is_none()))
            .collect();
        let mut factors = Vec::with_capacity(text.len());
        for c in &text {
            let f = c.factor_of()?.expect("text columns are factors");
            if f.present_values().is_empty() {
                return Err(DataError::NoValues {
                    path: PathBuf::from(SOURCE),
                    column: clip(&c.name),
                });
            }
            factors.push(f);
        }
        // Declared levels: a value outside them is refused here, naming its row in the frame.
        let declared = [
            (&self.sensitive, &coding.groups, "groups"),
            (&self.target, &coding.classes, "classes"),
        ];
        for (column, levels, option) in declared {
            if let (Some(column), Some(levels)) = (column, levels) {
                let why = format!("is not one of the levels declared with {option}");
                stored_codes(column, levels, true, &why, Unseen::Refuse)?;
            }
        }
        let coded = if text.is_empty() {
            None
        } else {
            let table = distinct_values_table(&text, &factors)?;
            let names: Vec<String> = features
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
                categorical: names
                    .iter()
                    .filter(|c| self.categorical.contains(c))
                    .cloned()
                    .collect(),
                features: Some(names),
                drop: Vec::new(),
                groups: coding.groups.clone(),
                classes: coding.classes.clone(),
                task: coding.task,
                positive: coding.positive.clone(),
                missing: MissingPolicy::Refuse,
                fill: Bounds::default(),
                format: CSV_FORMAT,
            };
            Some(load_table(&table, &options)?)
        };
        let mut schema = Schema {
            features: Vec::with_capacity(features.len()),
            sensitive: None,
            target: None,
            scaling: Default::default(),
        };
        let mut learned = coded.as_ref().map(|c| c.schema.features.iter());
        for c in &features {
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
            // Row r of the small table holds present distinct value r of each column (or a
            // repeat of its first, for shorter columns): each distinct value's code is read
            // from its row. A missing value has no code: no level for a feature, the first
            // level (code 0) for a group or a class.
            let per_value = |f: &Factor<'_>, code: &dyn Fn(usize) -> usize| {
                let mut per_value = vec![None; f.uniques.len()];
                for (r, j) in f.present_values().into_iter().enumerate() {
                    per_value[j] = Some(code(r));
                }
                per_value
            };
            let mut k = 0;
            let mut offset = 0;
            for f in &schema.features {
                if let FeatureColumn::Categorical { levels, .. } = f {
                    let level = |r: usize| {
                        (0..levels.len())
                            .find(|&l| coded.dataset.features[[r, offset + l]] == 1.0)
                            .expect("each row has one level")
                    };
                    one_hot_codes.push(factors[k].map(&per_value(&factors[k], &level)));
                    offset += levels.len();
                    k += 1;
                }
            }
            schema.sensitive = coded.schema.sensitive.clone();
            schema.target = coded.schema.target.clone();
            if let Some(g) = &coded.dataset.groups {
                let codes = factors[k].map(&per_value(&factors[k], &|r| g.codes[r] as usize));
                groups = Some(Groups {
                    codes: codes.into_iter().map(|c| c.unwrap_or(0) as u32).collect(),
                    names: g.names.clone(),
                });
                k += 1;
            }
            if let Some(t) = &coded.dataset.target {
                let classes = t.classes().expect("a coded target has classes");
                let rows = factors[k].map(&per_value(&factors[k], &|r| classes[r] as usize));
                let rows = rows.into_iter().map(|c| c.unwrap_or(0));
                target = Some(match t {
                    Target::Binary(_) => Target::Binary(rows.map(|c| c as u8).collect()),
                    Target::Multiclass { k, .. } => Target::Multiclass {
                        k: *k,
                        labels: rows.map(|c| c as u32).collect(),
                    },
                    Target::Real(_) => unreachable!("a real target is not coded"),
                });
            }
        }
        if let Some((name, values)) = real_target {
            let fill = midpoint(coding.fill.get(&name));
            target = Some(Target::Real(
                values
                    .iter()
                    .map(|&y| if y.is_nan() { fill } else { y })
                    .collect(),
            ));
            schema.target = Some(TargetColumn {
                name,
                encoding: TargetEncoding::Real,
            });
        }
        let fills: Vec<f64> = features
            .iter()
            .map(|c| midpoint(coding.fill.get(&c.name)))
            .collect();
        let features = encode(&schema, &features, &fills, n, |k, i| one_hot_codes[k][i])?;
        Ok(finish(schema, features, groups, target, n))
    }

    /// Encode new columns with a stored schema (prediction, evaluation): features picked by name
    /// (extra columns ignored), categorical levels as fitted (an unseen level is an error naming
    /// the column, row and value), missing values filled as at fit (numbers with the midpoint
    /// of the model's bounds), the schema's scaling applied. Groups and the target are read
    /// when the frame has them.
    pub fn apply(&self, schema: &Schema) -> Result<Dataset> {
        self.apply_with(schema, Unseen::Refuse)
    }

    /// [`Frame::apply`], with values outside the schema's levels coded as `unseen` says: the
    /// private rows of an LPCT fit, read with the schema of its public rows, use
    /// [`Unseen::AsMissing`] (no message depends on the values they hold).
    pub fn apply_with(&self, schema: &Schema, unseen: Unseen) -> Result<Dataset> {
        let n = self.n_rows()?;
        let mut parsed: Vec<Option<Array1<f64>>> = Vec::with_capacity(schema.features.len());
        let mut columns = Vec::with_capacity(schema.features.len());
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
            let numbers = match (f, column.factor_of()?) {
                (FeatureColumn::Numeric { .. }, Some(factor)) => factor.numbers()?,
                _ => None,
            };
            match (f, &column.values, &numbers) {
                (FeatureColumn::Numeric { name }, Values::Numeric(v), _) => {
                    refuse_infinities(name, v)?
                }
                (FeatureColumn::Numeric { .. }, Values::Factor { .. }, Some(_)) => {}
                (FeatureColumn::Categorical { .. }, Values::Factor { .. }, _) => {}
                (FeatureColumn::Numeric { name }, Values::Factor { .. }, None) => {
                    return Err(invalid(
                        "X",
                        format!(
                            "column `{name}` was numeric when the model was fitted and is text here"
                        ),
                    ));
                }
                (FeatureColumn::Categorical { name, .. }, Values::Numeric(_), _) => {
                    return Err(invalid(
                        "X",
                        format!(
                            "column `{name}` was text (one-hot encoded) when the model was fitted and is numeric here"
                        ),
                    ));
                }
            }
            parsed.push(numbers);
            columns.push(column);
        }
        let mut one_hot_codes = Vec::new();
        let mut by_schema = Vec::with_capacity(columns.len());
        for ((f, column), numbers) in schema.features.iter().zip(columns).zip(&parsed) {
            if let FeatureColumn::Categorical { levels, .. } = f {
                one_hot_codes.push(stored_codes(column, levels, false, UNSEEN, unseen)?);
            }
            by_schema.push(with_numbers(column, numbers.as_ref()));
        }
        let fills = numeric_fills(schema);
        let mut x = encode(schema, &by_schema, &fills, n, |k, i| one_hot_codes[k][i])?;
        schema.scaling.apply(&mut x)?;
        let labels = |column: &Column<'_>, levels: &[String]| {
            stored_codes(column, levels, true, UNSEEN, unseen)
                .map(|codes| codes.into_iter().map(|c| c.unwrap_or(0)))
        };
        let groups = match (&schema.sensitive, &self.sensitive) {
            (Some(s), Some(column)) => Some(Groups {
                codes: labels(column, &s.levels)?.map(|c| c as u32).collect(),
                names: s.levels.clone(),
            }),
            _ => None,
        };
        let target = match (&schema.target, &self.target) {
            (Some(t), Some(column)) => Some(match (&t.encoding, &column.values) {
                (TargetEncoding::Real, Values::Numeric(v)) => {
                    refuse_infinities(&t.name, v)?;
                    if let Some(i) = v.iter().position(|y| y.is_nan()) {
                        return Err(invalid(
                            "y",
                            format!("target `{}`, row {i}: missing value refused", t.name),
                        ));
                    }
                    Target::Real(v.to_vec())
                }
                (TargetEncoding::Real, Values::Factor { .. }) => {
                    return Err(invalid(
                        "y",
                        format!("target `{}` is real-valued: pass numbers", t.name),
                    ));
                }
                (TargetEncoding::Binary { labels: l }, _) => {
                    Target::Binary(labels(column, l)?.map(|c| c as u8).collect())
                }
                (TargetEncoding::Multiclass { labels: l }, _) => Target::Multiclass {
                    k: l.len(),
                    labels: labels(column, l)?.map(|c| c as u32).collect(),
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

/// `column` (its views reborrowed), or, when its values were parsed as `numbers`, a numeric
/// column of them.
fn with_numbers<'b>(column: &'b Column<'_>, numbers: Option<&'b Array1<f64>>) -> Column<'b> {
    let values = match (numbers, &column.values) {
        (Some(v), _) => Values::Numeric(v.view()),
        (None, Values::Numeric(v)) => Values::Numeric(v.view()),
        (None, Values::Factor { codes, uniques }) => Values::Factor {
            codes: codes.view(),
            uniques,
        },
    };
    Column {
        name: column.name.clone(),
        values,
    }
}

/// A small CSV of the text columns' present distinct values: row `r` holds each column's
/// present distinct value `r` (a column with fewer repeats its first one, which changes no
/// learned level), read back by the CSV reader.
fn distinct_values_table(columns: &[&Column<'_>], factors: &[Factor<'_>]) -> Result<Table> {
    let csv_error = |reason: String| DataError::Csv {
        path: PathBuf::from(SOURCE),
        reason,
    };
    let present: Vec<Vec<usize>> = factors.iter().map(Factor::present_values).collect();
    let rows = present.iter().map(Vec::len).max().unwrap_or(0);
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    w.write_record(columns.iter().map(|c| c.name.as_str()))
        .map_err(|e| csv_error(e.to_string()))?;
    for r in 0..rows {
        w.write_record(factors.iter().zip(&present).map(|(f, p)| {
            let j = p.get(r).unwrap_or(&p[0]);
            f.uniques[*j].as_bytes()
        }))
        .map_err(|e| csv_error(e.to_string()))?;
    }
    let bytes = w.into_inner().map_err(|e| csv_error(e.to_string()))?;
    Table::from_bytes(PathBuf::from(SOURCE), &bytes, &CSV_FORMAT)
}

/// Why a value outside a stored schema's levels is refused at prediction.
const UNSEEN: &str = "was not seen when the model was fitted";

/// Each row's level under stored or declared `levels` (labels compared as numbers when
/// `numeric_labels`); `None` for a missing value, and for a value outside them under
/// [`Unseen::AsMissing`] (else an error naming its first row and saying `why`).
fn stored_codes(
    column: &Column<'_>,
    levels: &[String],
    numeric_labels: bool,
    why: &str,
    unseen: Unseen,
) -> Result<Vec<Option<usize>>> {
    let Some(factor) = column.factor_of()? else {
        return Err(invalid(
            "X",
            format!(
                "column `{}`: pass its values factorized",
                clip(&column.name)
            ),
        ));
    };
    let mut per_value = Vec::with_capacity(factor.uniques.len());
    for (j, u) in factor.uniques.iter().enumerate() {
        let level = level_of(levels, u, numeric_labels);
        if level.is_none() && factor.present[j] && unseen == Unseen::Refuse {
            return Err(invalid(
                "X",
                format!(
                    // The value itself is not printed: the rows may be private.
                    "column `{}`, row {}: a value that {why} (levels: {})",
                    clip(&column.name),
                    factor.first_row[j],
                    clip(&levels.join(", "))
                ),
            ));
        }
        per_value.push(level.filter(|_| factor.present[j]));
    }
    Ok(factor.map(&per_value))
}

/// The feature matrix of `features` under `schema` (columns in schema order): numeric columns
/// copied from their views (NaN, a missing value, as the column's `fills` entry), categorical
/// column `k` one-hot from `level(k, row)` (`None`: no level, all zeros).
fn encode(
    schema: &Schema,
    features: &[Column<'_>],
    fills: &[f64],
    n: usize,
    level: impl Fn(usize, usize) -> Option<usize>,
) -> Result<Array2<f64>> {
    // Where each column goes: its first encoded column, and its numeric values (with their
    // fill) or its index among the text columns.
    let mut layout = Vec::with_capacity(features.len());
    let (mut offset, mut k) = (0, 0);
    for ((f, c), &fill) in schema.features.iter().zip(features).zip(fills) {
        layout.push(match &c.values {
            Values::Numeric(v) => (offset, Some((v, fill)), 0),
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
                Some((v, fill)) => row[offset] = if v[i].is_nan() { fill } else { v[i] },
                None => {
                    if let Some(l) = level(k, i) {
                        row[offset + l] = 1.0;
                    }
                }
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

/// A non-finite number other than NaN (a missing value) is refused, naming the row.
fn not_finite(name: &str, row: usize) -> DataError {
    invalid(
        "X",
        format!(
            "column `{}`, row {row}: not finite (infinities are refused; NaN is a missing value)",
            clip(name)
        ),
    )
}

/// Infinities are refused, naming the column and the (0-based) row; NaN is a missing value.
fn refuse_infinities(name: &str, values: &ArrayView1<'_, f64>) -> Result<()> {
    match values.iter().position(|v| v.is_infinite()) {
        None => Ok(()),
        Some(i) => Err(not_finite(name, i)),
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
            ..Frame::default()
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

    /// Two group columns through [`intersect`] give the groups `--sensitive race,sex` gives a
    /// CSV of the same columns (numbers compared as numbers in each part); a missing part is
    /// missing.
    #[test]
    fn intersected_columns_learn_the_groups_a_csv_load_of_both_columns_learns() {
        let age = array![30.0, 41.5, 25.0, 60.0, 33.0];
        let race = Owned::new(&["1.0", "2", "1", "2", "1"]);
        let sex = Owned::new(&["F", "M", "M", "F", "M"]);
        let y = Owned::new(&["no", "yes", "no", "yes", "yes"]);
        let (name, codes, uniques) = intersect(&[race.column("race"), sex.column("sex")]).unwrap();
        assert_eq!(name, "race,sex");
        assert_eq!(uniques, ["1 × F", "2 × M", "1 × M", "2 × F"]);
        let codes = Array1::from(codes);
        let frame = Frame {
            features: vec![Column::numeric("age", age.view())],
            sensitive: Some(Column::factor(name, codes.view(), &uniques)),
            target: Some(y.column("y")),
            ..Frame::default()
        };
        let from_frame = frame.learn(&Coding::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.csv");
        std::fs::write(
            &path,
            "age,race,sex,y\n30,1.0,F,no\n41.5,2,M,yes\n25,1,M,no\n60,2,F,yes\n33,1,M,yes\n",
        )
        .unwrap();
        let options = LoadOptions {
            target: Some("y".into()),
            sensitive: Some("race,sex".into()),
            ..LoadOptions::default()
        };
        let from_csv = load_csv(&path, &options).unwrap();
        assert_eq!(from_frame.schema, from_csv.schema);
        assert_eq!(from_frame.dataset, from_csv.dataset);
        assert_eq!(frame.apply(&from_frame.schema).unwrap(), from_csv.dataset);
        let missing = Owned::new(&["F", "", "M", "F", "M"]);
        let (_, codes, _) = intersect(&[race.column("race"), missing.column("sex")]).unwrap();
        assert_eq!(codes[1], -1);
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
            ..Frame::default()
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
    fn fills_missing_values_refuses_infinities_unseen_levels_and_ragged_columns() {
        // NaN is a missing value: filled with the midpoint of public bounds, else 0.
        let x = array![1.0, f64::NAN];
        let frame = Frame {
            features: vec![Column::numeric("a", x.view())],
            ..Frame::default()
        };
        let filled = frame.learn(&Coding::default()).unwrap();
        assert_eq!(filled.dataset.features, array![[1.0], [0.0]]);
        let mut fill = Bounds::default();
        fill.insert("a", 0.0, 10.0, "bounds").unwrap();
        let coding = Coding {
            fill,
            ..Coding::default()
        };
        let filled = frame.learn(&coding).unwrap();
        assert_eq!(filled.dataset.features, array![[1.0], [5.0]]);
        let inf = array![1.0, f64::INFINITY];
        let e = Frame {
            features: vec![Column::numeric("a", inf.view())],
            ..Frame::default()
        }
        .learn(&Coding::default())
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `a`, row 1: not finite"), "{e}");

        let ok = array![1.0, 2.0, 3.0];
        let g = Owned::new(&["u", "v", "u"]);
        let fit = Frame {
            features: vec![Column::numeric("a", ok.view())],
            sensitive: Some(g.column("g")),
            target: None,
            ..Frame::default()
        }
        .learn(&Coding::default())
        .unwrap();
        let g2 = Owned::new(&["u", "u", "w"]);
        let unseen = Frame {
            features: vec![Column::numeric("a", ok.view())],
            sensitive: Some(g2.column("g")),
            target: None,
            ..Frame::default()
        };
        let e = unseen.apply(&fit.schema).unwrap_err().to_string();
        assert!(
            e.contains("column `g`, row 2: a value that was not seen") && !e.contains("`w`"),
            "{e}"
        );
        // Private rows read with a public schema: the unseen group is the first group.
        let private = unseen.apply_with(&fit.schema, Unseen::AsMissing).unwrap();
        assert_eq!(private.groups.unwrap().codes, [0, 0, 0]);

        // A missing group is the first group (`NA`, empty, a negative code).
        for values in [["v", "NA", "v"], ["v", "v", ""]] {
            let g3 = Owned::new(&values);
            let loaded = Frame {
                features: vec![Column::numeric("a", ok.view())],
                sensitive: Some(g3.column("g")),
                target: None,
                ..Frame::default()
            }
            .learn(&Coding::default())
            .unwrap();
            assert_eq!(loaded.dataset.groups.unwrap().codes, [0, 0, 0]);
        }
        // A missing level of a text feature is no level (all zeros).
        let codes = array![0i64, -1, 1];
        let uniques = strings(&["u", "v"]);
        let loaded = Frame {
            features: vec![Column::factor("j", codes.view(), &uniques)],
            ..Frame::default()
        }
        .learn(&Coding::default())
        .unwrap();
        assert_eq!(
            loaded.dataset.features,
            array![[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]
        );
        // A group column with no value at all has nothing to fill with.
        let none = Owned::new(&["NA", "?", ""]);
        let e = Frame {
            features: vec![Column::numeric("a", ok.view())],
            sensitive: Some(none.column("g")),
            ..Frame::default()
        }
        .learn(&Coding::default())
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `g` has no value"), "{e}");

        let short = Owned::new(&["u"]);
        let e = Frame {
            features: vec![Column::numeric("a", ok.view())],
            sensitive: Some(short.column("g")),
            target: None,
            ..Frame::default()
        }
        .learn(&Coding::default())
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `g` has 1 rows, column `a` has 3"), "{e}");
    }

    /// Issue #38: a factorized column of numbers (a DataFrame's `object` column) is numeric,
    /// as the CSV loader reads it: no raw value becomes a level of the schema; text columns
    /// keep the loader's level cap, with its message.
    #[test]
    fn factorized_numbers_are_numeric_and_text_levels_are_capped() {
        let n = 2000;
        let values: Vec<String> = (0..n).map(|i| format!("{}", 1000 + i * 7)).collect();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let income = Owned::new(&refs);
        let mut mixed_refs = refs.clone();
        mixed_refs[3] = "NA"; // a missing value among numbers
        let mixed = Owned::new(&mixed_refs);
        let y = Owned::new(&(0..n).map(|i| ["a", "b"][i % 2]).collect::<Vec<_>>());
        let frame = Frame {
            features: vec![income.column("income"), mixed.column("mixed")],
            target: Some(y.column("y")),
            ..Frame::default()
        };
        let loaded = frame.learn(&Coding::default()).unwrap();
        assert!(matches!(
            loaded.schema.features[..],
            [FeatureColumn::Numeric { .. }, FeatureColumn::Numeric { .. }]
        ));
        let json = serde_json::to_string(&loaded.schema).unwrap();
        for v in &values[..50] {
            assert!(!json.contains(v.as_str()), "{v} in the schema: {json}");
        }
        assert_eq!(loaded.dataset.features[[5, 0]], 1035.0);
        assert_eq!(loaded.dataset.features[[3, 1]], 0.0);
        // The CSV loader learns the same schema from the same column.
        let mut csv = String::from("income,mixed,y\n");
        for i in 0..n {
            csv.push_str(&format!(
                "{},{},{}\n",
                refs[i],
                mixed_refs[i],
                ["a", "b"][i % 2]
            ));
        }
        let table = Table::from_bytes(PathBuf::from("t.csv"), csv.as_bytes(), &CSV_FORMAT).unwrap();
        let options = LoadOptions {
            target: Some("y".into()),
            ..LoadOptions::default()
        };
        let from_csv = load_table(&table, &options).unwrap();
        assert_eq!(from_csv.schema, loaded.schema);
        assert_eq!(from_csv.dataset, loaded.dataset);

        // Numbers and text mixed: refused naming the row, not the value.
        mixed_refs[7] = "secret";
        let bad = Owned::new(&mixed_refs);
        let e = Frame {
            features: vec![bad.column("mixed")],
            ..Frame::default()
        }
        .learn(&Coding::default())
        .unwrap_err()
        .to_string();
        assert!(e.contains("column `mixed`, row 7: not a number"), "{e}");
        assert!(!e.contains("secret"), "{e}");

        // Text with more levels than the cap: the loader's message; declared categorical: kept.
        let words: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
        let wrefs: Vec<&str> = words.iter().map(String::as_str).collect();
        let text = Owned::new(&wrefs);
        let frame = Frame {
            features: vec![text.column("word")],
            ..Frame::default()
        };
        let e = frame.learn(&Coding::default()).unwrap_err().to_string();
        assert!(
            e.contains("column `word` holds text with more than 100 distinct values"),
            "{e}"
        );
        let declared = Frame {
            categorical: vec!["word".into()],
            ..frame
        };
        assert_eq!(
            declared
                .learn(&Coding::default())
                .unwrap()
                .schema
                .n_features(),
            n
        );
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
            ..Frame::default()
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
            e.contains(
                "column `g`, row 1: a value that is not one of the levels declared with groups"
            ),
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
            ..Frame::default()
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
