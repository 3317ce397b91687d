//! CSV loading driven by a schema: the training load ([`load_csv`], which learns the schema) and
//! the prediction load ([`crate::Schema::load`], which applies a stored one). Both share one pass
//! over the rows (`encode`).

use crate::dataset::{Dataset, Groups, Target};
use crate::error::{DataError, Result, clip, clip_to, invalid};
use crate::schema::{
    FeatureColumn, Schema, SensitiveColumn, TargetColumn, TargetEncoding, TaskKind,
};
use crate::table::{CsvFormat, Table, is_missing};
use ndarray::Array2;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What to do with a row that has a missing value (`?`, `NA`, empty) in a used column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissingPolicy {
    /// Drop the row; counted in [`LoadReport`].
    #[default]
    Drop,
    /// Refuse the file, naming the row and column (`--no-missing`).
    Refuse,
}

/// An integer-valued target with at most this many distinct values is inferred multi-class;
/// with more, real. Override with an explicit task.
pub const MAX_INFERRED_CLASSES: usize = 20;

/// A text column found among the default features is one-hot encoded when it has at most this
/// many levels; with more it is refused (an identifier or free text), naming the column.
pub const MAX_TEXT_LEVELS: usize = 100;

/// Whether a column's *name* says it identifies rows (`id`, `ID`, `*_id`, `index`, pandas'
/// `Unnamed: 0`): such a column is left out of the default features, with a note. A rule on
/// names only (public), never on values.
pub fn is_id_like(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    matches!(n.as_str(), "id" | "index" | "idx" | "rowid" | "row")
        || n.starts_with("unnamed:")
        || ["_id", "-id", " id", ".id"].iter().any(|s| n.ends_with(s))
}

/// The schema given on the command line for a training load.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The target column (`--target`); `None` loads features only.
    pub target: Option<String>,
    /// The sensitive column (`--sensitive`).
    pub sensitive: Option<String>,
    /// Feature columns (`--features`); `None`: every column except target and sensitive.
    pub features: Option<Vec<String>>,
    /// Feature columns to one-hot encode (`--categorical`). A feature column none of whose
    /// values is a number (missing values aside) is one-hot encoded too: its type, *text*, and
    /// its levels are schema information (at most [`MAX_TEXT_LEVELS`] levels).
    pub categorical: Vec<String>,
    /// Columns never used as features (`--drop`).
    pub drop: Vec<String>,
    /// Declared sensitive levels (`--groups`), in code order; a value outside them is an error.
    /// `None`: the levels found in the data, sorted.
    pub groups: Option<Vec<String>>,
    /// Declared target classes (`--classes`), in code order; a value outside them is an error,
    /// and a declared class need not occur in the file (a one-class test file can be evaluated).
    /// `None`: the classes found in the data, sorted.
    pub classes: Option<Vec<String>>,
    /// The task (`--task`); `None`: inferred (binary if exactly two distinct values, multi-class
    /// if at most [`MAX_INFERRED_CLASSES`] integers or any non-numeric labels, real otherwise).
    pub task: Option<TaskKind>,
    /// For a binary target: the label coded 1 (default: the larger of the two, numerically when
    /// both are numbers, else in string order, e.g. `1` over `0`, `>50K` over `<=50K`).
    pub positive: Option<String>,
    pub missing: MissingPolicy,
    pub format: CsvFormat,
}

/// Options of a prediction-time load with a stored schema.
#[derive(Clone, Debug, Default)]
pub struct ApplyOptions {
    /// Read the target column too, when present in the file.
    pub with_target: bool,
    pub missing: MissingPolicy,
    pub format: CsvFormat,
}

/// What a load did: rows kept, rows dropped for missing values, format detected.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadReport {
    pub path: PathBuf,
    /// Data rows in the file.
    pub rows_in_file: usize,
    /// For each row of the data set, its 0-based data-row index in the file.
    pub rows: Vec<usize>,
    /// Rows dropped for a missing value.
    pub dropped: usize,
    /// Missing values per used column (a row may count in several columns).
    pub missing_by_column: Vec<(String, usize)>,
    pub delimiter: u8,
    pub has_header: bool,
    /// The file's first column had no name (pandas' index) and was left out of the features.
    pub skipped_index: bool,
    /// Columns left out of the default features because their names say they identify rows.
    pub skipped_ids: Vec<String>,
    /// Feature columns found to hold text and one-hot encoded (not named in `--categorical`).
    pub text_columns: Vec<String>,
}

impl LoadReport {
    /// One line for stderr when an unnamed index column was left out (a fact of the header).
    pub fn skipped_index_message(&self) -> Option<String> {
        self.skipped_index.then(|| {
            format!(
                "{}: the first column has no name (an index column, as pandas' to_csv() \
                 writes): not used as a feature (name it with --features to use it)",
                self.path.display()
            )
        })
    }

    /// One line for stderr naming the columns left out as identifiers (by their names).
    pub fn skipped_ids_message(&self) -> Option<String> {
        (!self.skipped_ids.is_empty()).then(|| {
            format!(
                "note: column(s) {} look like row identifiers (by name): not used as features \
                 (name them in --features to use them)",
                self.skipped_ids
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }

    /// One line for stderr when rows were dropped. It names no count and no column: how many
    /// rows (and which columns) had missing values is private. The size of the loaded data set
    /// is treated as public (docs/privacy.md, "Failures and messages").
    pub fn dropped_message(&self) -> Option<String> {
        (self.dropped > 0).then(|| {
            format!(
                "{}: rows with a missing value (`?`, `NA` or empty) in a used column were \
                 dropped; their number is private and not shown (--no-missing refuses them)",
                self.path.display()
            )
        })
    }
}

/// A loaded data set with its schema and the load report.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub dataset: Dataset,
    pub schema: Schema,
    pub report: LoadReport,
}

impl Loaded {
    /// A data set built in memory (no file was read) with its `schema`: the report names the
    /// source `(memory)` and records no dropped rows.
    pub fn in_memory(dataset: Dataset, schema: Schema) -> Loaded {
        let n = dataset.n_rows();
        Loaded {
            dataset,
            schema,
            report: LoadReport {
                path: PathBuf::from("(memory)"),
                rows_in_file: n,
                rows: (0..n).collect(),
                dropped: 0,
                missing_by_column: Vec::new(),
                delimiter: b',',
                has_header: true,
                skipped_index: false,
                skipped_ids: Vec::new(),
                text_columns: Vec::new(),
            },
        }
    }
}

/// Load a training CSV: read the file, learn the schema (levels, target coding) and encode.
/// The returned schema has no scaling; a method that wants bounded features fits it
/// ([`crate::MinMax::from_public`], [`Schema::set_scaling`]).
pub fn load_csv(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Loaded> {
    let table = Table::read(path, &options.format)?;
    load_table(&table, options)
}

/// [`load_csv`] on a table already in memory.
pub fn load_table(table: &Table, options: &LoadOptions) -> Result<Loaded> {
    let target = match &options.target {
        Some(name) => Some(table.column_index(name, "--target")?),
        None => None,
    };
    let sensitive = match &options.sensitive {
        Some(name) => Some(table.column_index(name, "--sensitive")?),
        None => None,
    };
    if let (Some(t), Some(s)) = (target, sensitive)
        && t == s
    {
        return Err(DataError::DuplicateColumn {
            path: table.path.clone(),
            column: table.columns[t].clone(),
            first: "--target",
            second: "--sensitive",
        });
    }
    let mut skipped_ids = Vec::new();
    let feature_idx: Vec<usize> = match &options.features {
        Some(names) => {
            let mut idx = Vec::with_capacity(names.len());
            for name in names {
                let i = table.column_index(name, "--features")?;
                if Some(i) == target {
                    return Err(DataError::DuplicateColumn {
                        path: table.path.clone(),
                        column: name.clone(),
                        first: "--features",
                        second: "--target",
                    });
                }
                if idx.contains(&i) {
                    return Err(DataError::DuplicateColumn {
                        path: table.path.clone(),
                        column: name.clone(),
                        first: "--features",
                        second: "--features",
                    });
                }
                idx.push(i);
            }
            idx
        }
        None => (0..table.columns.len())
            .filter(|&i| Some(i) != target && Some(i) != sensitive)
            .filter(|&i| !(i == 0 && table.unnamed_index))
            .filter(|&i| {
                let id = is_id_like(&table.columns[i]);
                if id && !options.drop.contains(&table.columns[i]) {
                    skipped_ids.push(table.columns[i].clone());
                }
                !id
            })
            .collect(),
    };
    let mut dropped = vec![false; table.columns.len()];
    for name in &options.drop {
        dropped[table.column_index(name, "--drop")?] = true;
    }
    let feature_idx: Vec<usize> = feature_idx.into_iter().filter(|&i| !dropped[i]).collect();
    let mut categorical = vec![false; table.columns.len()];
    for name in &options.categorical {
        let i = table.column_index(name, "--categorical")?;
        if !feature_idx.contains(&i) {
            return Err(invalid(
                "--categorical",
                format!("column `{name}` is not among the features"),
            ));
        }
        categorical[i] = true;
    }
    let mut text_columns = Vec::new();
    for &i in &feature_idx {
        if !categorical[i] && holds_text(table, i) {
            categorical[i] = true;
            text_columns.push(i);
        }
    }
    let features = feature_idx
        .iter()
        .map(|&i| FeaturePlan {
            col: i,
            coder: categorical[i].then(Coder::learn),
        })
        .collect();
    let sensitive = match sensitive {
        None => None,
        Some(col) => Some(SensitivePlan {
            col,
            coder: match &options.groups {
                Some(levels) => Coder::fixed_labels(levels.clone(), "--groups")?,
                None => Coder::learn_labels(),
            },
        }),
    };
    let target = match target {
        None => None,
        Some(col) => Some(TargetPlan {
            col,
            coder: match (options.task, &options.classes) {
                (Some(TaskKind::Regression), None) => None,
                (_, Some(levels)) => Some(Coder::fixed_labels(levels.clone(), "--classes")?),
                (_, None) => Some(Coder::learn_labels()),
            },
        }),
    };
    let mut enc = encode(table, features, sensitive, target, options.missing)?;
    for f in &enc.features {
        if let Some(levels) = &f.levels
            && text_columns.contains(&f.col)
            && levels.len() > MAX_TEXT_LEVELS
        {
            return Err(invalid(
                "--features",
                format!(
                    "column `{}` holds text with more than {MAX_TEXT_LEVELS} distinct values (an \
                     identifier or free text?): leave it out with --drop {}, or one-hot encode it \
                     anyway with --categorical {}",
                    table.columns[f.col], table.columns[f.col], table.columns[f.col]
                ),
            ));
        }
    }
    enc.report.skipped_ids = skipped_ids;
    enc.report.text_columns = text_columns
        .iter()
        .map(|&i| table.columns[i].clone())
        .collect();

    let feature_cols: Vec<FeatureColumn> = enc
        .features
        .iter()
        .map(|f| {
            let name = table.columns[f.col].clone();
            match &f.levels {
                None => FeatureColumn::Numeric { name },
                Some(levels) => FeatureColumn::Categorical {
                    name,
                    levels: levels.clone(),
                },
            }
        })
        .collect();
    let (target_col, target_values) = match &enc.target {
        None => (None, None),
        Some(t) => {
            let (encoding, values) = decide_target(table, t, options)?;
            (
                Some(TargetColumn {
                    name: table.columns[t.col].clone(),
                    encoding,
                }),
                Some(values),
            )
        }
    };
    let sensitive_col = enc.sensitive.as_ref().map(|s| SensitiveColumn {
        name: table.columns[s.col].clone(),
        levels: s.levels.clone(),
        declared: options.groups.is_some(),
    });
    let schema = Schema {
        features: feature_cols,
        sensitive: sensitive_col,
        target: target_col,
        scaling: Default::default(),
    };
    let dataset = build_dataset(&schema, &enc, target_values);
    Ok(Loaded {
        dataset,
        schema,
        report: enc.report,
    })
}

/// Whether column `col` is a text column: no value of it is a number (missing values aside).
/// A column mixing numbers and text is not: it stays numeric and its first non-number is an
/// error naming the row (a typo or a decimal comma is more likely than text codes).
fn holds_text(table: &Table, col: usize) -> bool {
    let mut present = (0..table.n_rows())
        .map(|r| table.get(r, col))
        .filter(|v| !is_missing(v))
        .peekable();
    present.peek().is_some() && present.all(|v| v.parse::<f64>().is_err())
}

/// Read a CSV with a stored schema (see [`Schema::load`]).
pub(crate) fn apply_schema(schema: &Schema, path: &Path, options: &ApplyOptions) -> Result<Loaded> {
    let table = Table::read(path, &options.format)?;
    let mut features = Vec::with_capacity(schema.features.len());
    for f in &schema.features {
        let col = table.column_index(f.name(), "a feature column of the model's schema")?;
        let coder = match f {
            FeatureColumn::Numeric { .. } => None,
            FeatureColumn::Categorical { levels, .. } => Some(Coder::fixed(levels.clone())),
        };
        features.push(FeaturePlan { col, coder });
    }
    let sensitive = schema.sensitive.as_ref().and_then(|s| {
        let col = table.columns.iter().position(|c| *c == s.name)?;
        Some(SensitivePlan {
            col,
            coder: Coder::stored_labels(s.levels.clone()),
        })
    });
    let target = if options.with_target {
        schema.target.as_ref().and_then(|t| {
            let col = table.columns.iter().position(|c| *c == t.name)?;
            Some(TargetPlan {
                col,
                coder: match &t.encoding {
                    TargetEncoding::Real => None,
                    enc => Some(Coder::stored_labels(enc.labels().to_vec())),
                },
            })
        })
    } else {
        None
    };
    let enc = encode(&table, features, sensitive, target, options.missing)?;
    let target_values = enc
        .target
        .as_ref()
        .map(|t| match (&schema.target, &t.values) {
            (Some(tc), TargetValues::Codes(c)) => match tc.encoding {
                TargetEncoding::Binary { .. } => {
                    Target::Binary(c.iter().map(|&v| v as u8).collect())
                }
                _ => Target::Multiclass {
                    k: tc.encoding.labels().len(),
                    labels: c.clone(),
                },
            },
            (_, TargetValues::Real(v)) => Target::Real(v.clone()),
            (None, TargetValues::Codes(_)) => {
                unreachable!("target plan only built from a schema target")
            }
        });
    let mut dataset = build_dataset(schema, &enc, target_values);
    schema.scaling.apply(&mut dataset.features)?;
    Ok(Loaded {
        dataset,
        schema: schema.clone(),
        report: enc.report,
    })
}

/// Codes for the values of one column: fixed levels (unseen value: error) or learned.
///
/// Label coders (the target's classes and the sensitive groups) compare numbers as numbers, so
/// `1`, `1.0` and `1e0` are one class and `-0` is `0`; the first spelling met names the level.
/// Categorical features compare spellings (`007` and `7` may be different codes).
struct Coder {
    map: HashMap<String, u32>,
    levels: Vec<String>,
    /// First data row (0-based) where each level was seen (learned coders; for messages).
    first_row: Vec<usize>,
    fixed: bool,
    numeric_labels: bool,
    /// The option that declared fixed levels (`--groups`, `--classes`), for messages.
    declared_by: Option<&'static str>,
}

/// The key a label coder files `value` under: a finite number's shortest spelling (`-0` → `0`),
/// else the text itself.
fn label_key(value: &str) -> std::borrow::Cow<'_, str> {
    match value.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => std::borrow::Cow::Owned(format!("{}", x + 0.0)),
        _ => std::borrow::Cow::Borrowed(value),
    }
}

/// Whether `value` spells a number that is not finite (`NaN`, `inf`, `-infinity`, …).
fn is_non_finite_number(value: &str) -> bool {
    value.trim().parse::<f64>().is_ok_and(|x| !x.is_finite())
}

impl Coder {
    fn learn() -> Self {
        Coder {
            map: HashMap::new(),
            levels: Vec::new(),
            first_row: Vec::new(),
            fixed: false,
            numeric_labels: false,
            declared_by: None,
        }
    }

    /// A learned label coder (numbers compared as numbers).
    fn learn_labels() -> Self {
        Coder {
            numeric_labels: true,
            ..Coder::learn()
        }
    }

    fn fixed(levels: Vec<String>) -> Self {
        let map = levels
            .iter()
            .enumerate()
            .map(|(i, l)| (l.clone(), i as u32))
            .collect();
        Coder {
            map,
            first_row: Vec::new(),
            levels,
            fixed: true,
            numeric_labels: false,
            declared_by: None,
        }
    }

    /// Label levels stored in a model's schema (already checked when it was fitted).
    fn stored_labels(levels: Vec<String>) -> Self {
        let map = levels
            .iter()
            .enumerate()
            .map(|(i, l)| (label_key(l).into_owned(), i as u32))
            .collect();
        Coder {
            map,
            first_row: Vec::new(),
            levels,
            fixed: true,
            numeric_labels: true,
            declared_by: None,
        }
    }

    /// Label levels declared by the user (`--groups`, `--classes`): at least one, none empty
    /// or non-finite, no two equal (as numbers when they are numbers).
    fn fixed_labels(levels: Vec<String>, option: &'static str) -> Result<Self> {
        if levels.is_empty() {
            return Err(invalid(option, "declare at least one level".to_string()));
        }
        let mut seen: HashMap<String, &str> = HashMap::new();
        for l in &levels {
            if l.trim().is_empty() || is_non_finite_number(l) {
                return Err(invalid(option, format!("`{}` cannot be a level", clip(l))));
            }
            if let Some(first) = seen.insert(label_key(l).into_owned(), l) {
                return Err(invalid(
                    option,
                    format!("`{}` and `{}` are the same level", clip(first), clip(l)),
                ));
            }
        }
        Ok(Coder {
            declared_by: Some(option),
            ..Coder::stored_labels(levels)
        })
    }

    /// The code of `value`; `None` for a value outside fixed levels.
    fn code(&mut self, value: &str, row: usize) -> Option<u32> {
        let key = if self.numeric_labels {
            label_key(value)
        } else {
            std::borrow::Cow::Borrowed(value)
        };
        if let Some(&c) = self.map.get(key.as_ref()) {
            return Some(c);
        }
        if self.fixed {
            return None;
        }
        let c = self.levels.len() as u32;
        self.map.insert(key.into_owned(), c);
        self.levels.push(value.to_string());
        self.first_row.push(row);
        Some(c)
    }

    /// Final levels and the map from provisional to final codes: learned levels are sorted
    /// (numerically when every level is a number, else as strings); fixed ones keep their order.
    fn finish(self) -> (Vec<String>, Vec<u32>, Vec<usize>) {
        if self.fixed {
            let n = self.levels.len() as u32;
            return (self.levels, (0..n).collect(), Vec::new());
        }
        let mut order: Vec<usize> = (0..self.levels.len()).collect();
        let nums: Option<Vec<f64>> = self.levels.iter().map(|l| l.parse().ok()).collect();
        match nums {
            Some(v) => order.sort_by(|&a, &b| v[a].total_cmp(&v[b])),
            None => order.sort_by(|&a, &b| self.levels[a].cmp(&self.levels[b])),
        }
        let mut remap = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old] = new as u32;
        }
        let levels = order.iter().map(|&i| self.levels[i].clone()).collect();
        let first = order.iter().map(|&i| self.first_row[i]).collect();
        (levels, remap, first)
    }
}

struct FeaturePlan {
    col: usize,
    /// `None`: numeric.
    coder: Option<Coder>,
}

struct SensitivePlan {
    col: usize,
    coder: Coder,
}

struct TargetPlan {
    col: usize,
    /// `None`: real-valued.
    coder: Option<Coder>,
}

struct EncodedFeature {
    col: usize,
    levels: Option<Vec<String>>,
}

struct EncodedSensitive {
    col: usize,
    levels: Vec<String>,
    codes: Vec<u32>,
}

enum TargetValues {
    Codes(Vec<u32>),
    Real(Vec<f64>),
}

struct EncodedTarget {
    col: usize,
    values: TargetValues,
    levels: Vec<String>,
    first_row: Vec<usize>,
}

struct Encoded {
    features: Vec<EncodedFeature>,
    /// Row-major raw values per source feature column (categorical: final code as f64).
    raw: Vec<f64>,
    sensitive: Option<EncodedSensitive>,
    target: Option<EncodedTarget>,
    report: LoadReport,
}

/// The one pass over the rows shared by both loads: missing-value handling, number parsing,
/// level coding.
fn encode(
    table: &Table,
    mut features: Vec<FeaturePlan>,
    mut sensitive: Option<SensitivePlan>,
    mut target: Option<TargetPlan>,
    missing: MissingPolicy,
) -> Result<Encoded> {
    let mut used: Vec<usize> = features.iter().map(|f| f.col).collect();
    used.extend(sensitive.as_ref().map(|s| s.col));
    used.extend(target.as_ref().map(|t| t.col));
    used.sort_unstable();
    used.dedup();
    let mut missing_counts = vec![0usize; used.len()];
    let n = table.n_rows();
    let width = features.len();
    let mut raw = Vec::with_capacity(n * width);
    let mut rows = Vec::with_capacity(n);
    let mut s_codes = Vec::new();
    let mut t_codes = Vec::new();
    let mut t_real = Vec::new();
    let path = || table.path.clone();
    let unseen = |r: usize, col: usize, value: &str, coder: &Coder| match coder.declared_by {
        Some(option) => DataError::UndeclaredLevel {
            path: table.path.clone(),
            at: table.position(r),
            column: table.columns[col].clone(),
            value: clip(value),
            declared: format!("{option} {}", clip_to(&coder.levels.join(", "), 400)),
        },
        None => DataError::UnseenLevel {
            path: table.path.clone(),
            at: table.position(r),
            column: table.columns[col].clone(),
            value: clip(value),
            known: clip_to(&coder.levels.join(", "), 400),
        },
    };
    for r in 0..n {
        let mut has_missing = false;
        for (k, &c) in used.iter().enumerate() {
            let v = table.get(r, c);
            if is_missing(v) {
                if missing == MissingPolicy::Refuse {
                    return Err(DataError::MissingRefused {
                        path: path(),
                        at: table.position(r),
                        column: table.columns[c].clone(),
                        value: clip(v),
                    });
                }
                missing_counts[k] += 1;
                has_missing = true;
            }
        }
        if has_missing {
            continue;
        }
        for f in features.iter_mut() {
            let v = table.get(r, f.col);
            match &mut f.coder {
                None => raw.push(parse_number(table, r, f.col, v)?),
                Some(coder) => {
                    let code = coder.code(v, r).ok_or_else(|| unseen(r, f.col, v, coder))?;
                    raw.push(code as f64);
                }
            }
        }
        if let Some(s) = sensitive.as_mut() {
            let v = table.get(r, s.col);
            refuse_non_finite_label(table, r, s.col, v)?;
            let code = s
                .coder
                .code(v, r)
                .ok_or_else(|| unseen(r, s.col, v, &s.coder))?;
            s_codes.push(code);
        }
        if let Some(t) = target.as_mut() {
            let v = table.get(r, t.col);
            match &mut t.coder {
                None => t_real.push(parse_number(table, r, t.col, v)?),
                Some(coder) => {
                    refuse_non_finite_label(table, r, t.col, v)?;
                    let code = coder.code(v, r).ok_or_else(|| unseen(r, t.col, v, coder))?;
                    t_codes.push(code);
                }
            }
        }
        rows.push(r);
    }
    let dropped = n - rows.len();
    if rows.is_empty() {
        return Err(DataError::AllRowsMissing {
            path: path(),
            dropped,
        });
    }
    // Final codes: remap learned levels into sorted order.
    let mut enc_features = Vec::with_capacity(width);
    for (j, f) in features.into_iter().enumerate() {
        let levels = f.coder.map(|coder| {
            let (levels, remap, _) = coder.finish();
            for row in raw.chunks_exact_mut(width) {
                row[j] = remap[row[j] as usize] as f64;
            }
            levels
        });
        enc_features.push(EncodedFeature { col: f.col, levels });
    }
    let enc_sensitive = sensitive.map(|s| {
        let (levels, remap, _) = s.coder.finish();
        let codes = s_codes.iter().map(|&c| remap[c as usize]).collect();
        EncodedSensitive {
            col: s.col,
            levels,
            codes,
        }
    });
    let enc_target = target.map(|t| match t.coder {
        None => EncodedTarget {
            col: t.col,
            values: TargetValues::Real(t_real),
            levels: Vec::new(),
            first_row: Vec::new(),
        },
        Some(coder) => {
            let (levels, remap, first_row) = coder.finish();
            EncodedTarget {
                col: t.col,
                values: TargetValues::Codes(t_codes.iter().map(|&c| remap[c as usize]).collect()),
                levels,
                first_row,
            }
        }
    });
    let report = LoadReport {
        path: path(),
        rows_in_file: n,
        rows,
        dropped,
        missing_by_column: used
            .iter()
            .zip(missing_counts)
            .map(|(&c, k)| (table.columns[c].clone(), k))
            .collect(),
        delimiter: table.delimiter,
        has_header: table.has_header,
        skipped_index: table.unnamed_index && !used.contains(&0),
        skipped_ids: Vec::new(),
        text_columns: Vec::new(),
    };
    Ok(Encoded {
        features: enc_features,
        raw,
        sensitive: enc_sensitive,
        target: enc_target,
        report,
    })
}

/// A class or group label that spells a non-finite number (`NaN`, `inf`) is an error, not a
/// level: it is almost always a failed computation upstream.
fn refuse_non_finite_label(table: &Table, r: usize, col: usize, v: &str) -> Result<()> {
    if is_non_finite_number(v) {
        return Err(DataError::NonFinite {
            path: table.path.clone(),
            at: table.position(r),
            column: table.columns[col].clone(),
            value: clip(v),
        });
    }
    Ok(())
}

fn parse_number(table: &Table, r: usize, col: usize, v: &str) -> Result<f64> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(DataError::NonFinite {
            path: table.path.clone(),
            at: table.position(r),
            column: table.columns[col].clone(),
            value: clip(v),
        }),
        Err(_) => Err(DataError::NonNumeric {
            path: table.path.clone(),
            at: table.position(r),
            column: table.columns[col].clone(),
            value: clip(v),
            hint: " (list the column in --categorical to one-hot encode it)",
        }),
    }
}

/// Decide the target's coding from its learned levels (see [`LoadOptions::task`]).
fn decide_target(
    table: &Table,
    t: &EncodedTarget,
    options: &LoadOptions,
) -> Result<(TargetEncoding, Target)> {
    let name = table.columns[t.col].clone();
    let context = table.path.display().to_string();
    let codes = match &t.values {
        TargetValues::Real(v) => return Ok((TargetEncoding::Real, Target::Real(v.clone()))),
        TargetValues::Codes(c) => c,
    };
    let levels = &t.levels;
    let one_class = |needed| DataError::OneClassTarget {
        context: context.clone(),
        column: name.clone(),
        value: levels[0].clone(),
        needed,
    };
    let nums: Option<Vec<f64>> = levels.iter().map(|l| l.parse().ok()).collect();
    let kind = match options.task {
        Some(k) => k,
        None if levels.len() == 1 => {
            return Err(one_class("a constant target cannot be learned"));
        }
        None if levels.len() == 2 => TaskKind::Binary,
        // Declared classes are classes, however many and however numeric.
        None if options.classes.is_some() => TaskKind::Multiclass,
        None => match &nums {
            Some(v)
                if levels.len() <= MAX_INFERRED_CLASSES && v.iter().all(|x| x.fract() == 0.0) =>
            {
                TaskKind::Multiclass
            }
            Some(_) => TaskKind::Regression,
            None => TaskKind::Multiclass,
        },
    };
    if options.positive.is_some() && kind != TaskKind::Binary {
        return Err(invalid(
            "--positive",
            format!(
                "target `{name}` is {kind} ({} values), not binary",
                levels.len()
            ),
        ));
    }
    match kind {
        TaskKind::Binary => {
            if levels.len() == 1 {
                return Err(one_class("a binary task needs two classes"));
            }
            if levels.len() > 2 {
                return Err(DataError::WrongTask {
                    context,
                    column: name,
                    found: format!("{} distinct values, not binary", levels.len()),
                    needed: "a binary task needs exactly two".into(),
                });
            }
            let mut labels = levels.clone();
            let mut flip = false;
            if let Some(p) = &options.positive {
                match labels.iter().position(|l| label_key(l) == label_key(p)) {
                    Some(1) => {}
                    Some(_) => flip = true,
                    None => {
                        return Err(invalid(
                            "--positive",
                            format!(
                                "`{p}` is not a value of target `{name}` ({})",
                                labels.join(", ")
                            ),
                        ));
                    }
                }
            }
            if flip {
                labels.swap(0, 1);
            }
            let y = codes.iter().map(|&c| (c == 1) as u8 ^ flip as u8).collect();
            Ok((TargetEncoding::Binary { labels }, Target::Binary(y)))
        }
        TaskKind::Multiclass => {
            if levels.len() == 1 {
                return Err(one_class("a multi-class task needs at least two classes"));
            }
            Ok((
                TargetEncoding::Multiclass {
                    labels: levels.clone(),
                },
                Target::Multiclass {
                    k: levels.len(),
                    labels: codes.clone(),
                },
            ))
        }
        TaskKind::Regression if options.classes.is_some() => Err(invalid(
            "--classes",
            "a regression target has no classes".to_string(),
        )),
        TaskKind::Regression => {
            let mut values = Vec::with_capacity(levels.len());
            for (i, l) in levels.iter().enumerate() {
                values.push(parse_number(table, t.first_row[i], t.col, l)?);
            }
            Ok((
                TargetEncoding::Real,
                Target::Real(codes.iter().map(|&c| values[c as usize]).collect()),
            ))
        }
    }
}

/// Assemble the feature matrix (one-hot expansion) and the data set.
fn build_dataset(schema: &Schema, enc: &Encoded, target: Option<Target>) -> Dataset {
    let width = enc.features.len();
    let n = enc.report.rows.len();
    let d = schema.n_features();
    let mut x = Array2::<f64>::zeros((n, d));
    let offsets: Vec<usize> = schema
        .features
        .iter()
        .scan(0, |o, f| {
            let here = *o;
            *o += f.width();
            Some(here)
        })
        .collect();
    for (mut out, row) in x
        .rows_mut()
        .into_iter()
        .zip(enc.raw.chunks_exact(width.max(1)))
    {
        for (j, f) in enc.features.iter().enumerate() {
            match f.levels {
                None => out[offsets[j]] = row[j],
                Some(_) => out[offsets[j] + row[j] as usize] = 1.0,
            }
        }
    }
    let groups = enc.sensitive.as_ref().map(|s| Groups {
        codes: s.codes.clone(),
        names: s.levels.clone(),
    });
    Dataset {
        features: x,
        feature_names: schema.feature_names(),
        groups,
        target,
    }
}
