//! Loading a data file driven by a schema: the training load ([`load`], [`load_csv`], which
//! learn the schema) and the prediction load ([`crate::Schema::load`], which applies a stored
//! one). CSV (`csv`), Parquet and Arrow IPC ([`columnar`]) files share one pass over the rows
//! (`encode`), so the schema rules, the coding and the messages are the same in every format.

pub mod columnar;
mod csv;
pub(crate) mod encode;

use crate::dataset::{Dataset, Target};
use crate::error::{DataError, Position, Result, clip, clip_to, invalid};
use crate::preprocess::Bounds;
use crate::schema::{
    FeatureColumn, Schema, SensitiveColumn, TargetColumn, TargetEncoding, TaskKind,
};
use crate::table::{CsvFormat, Table};
use columnar::ColumnarFile;
pub use columnar::{FileFormat, learn_schema, read_batches};
use csv::CsvSource;
pub use encode::GROUP_SEPARATOR;
pub(crate) use encode::join_group;
use encode::{
    Coder, Encoded, EncodedTarget, Encoder, FeaturePlan, FileInfo, Plan, Rows, SensitivePlan,
    TargetPlan, TargetValues, TextScan, Value, build_dataset, column_names, label_key,
    parse_number,
};
use std::path::{Path, PathBuf};

/// A file a load reads, in chunks of rows ([`Rows`]).
pub(crate) trait Source {
    fn info(&self) -> &FileInfo;
    /// Whether column `col` may hold text (every CSV column; string columns of a columnar file).
    fn may_hold_text(&self, col: usize) -> bool;
    /// Call `f` on the rows of the file in order, chunk by chunk; only columns `cols` (sorted)
    /// need be read.
    fn scan(&self, cols: &[usize], f: &mut dyn FnMut(&dyn Rows) -> Result<()>) -> Result<()>;
    /// The position of 0-based data row `row`, for messages.
    fn position(&self, row: usize) -> Position;
}

/// What to do with a missing value (`?`, `NA`, empty, a null) in a used column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissingPolicy {
    /// Keep the row and fill the cell by a public per-row rule (the default of every training
    /// load, so that n is the file's row count; docs/privacy.md, "Failures and messages"): a
    /// numeric cell gets the midpoint of its column's public bounds ([`LoadOptions::fill`]; at
    /// prediction, the model's public bounds), else 0; a categorical feature no level (an all-zero
    /// one-hot block); a group or class label the first level (declared, else sorted).
    #[default]
    Fill,
    /// Drop the row; counted in [`LoadReport`] (prediction, and public rows).
    Drop,
    /// Refuse the file, naming the row and column (`--no-missing`). Whether a file is refused
    /// then reveals whether some row has a missing value.
    Refuse,
}

/// What to do with a value outside a stored schema's levels (a categorical level, group or
/// class that the rows the schema was learned from lack).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unseen {
    /// An error naming the row, the column and the value (prediction and evaluation).
    #[default]
    Refuse,
    /// Coded as a missing value is filled ([`MissingPolicy::Fill`]): no level for a feature,
    /// the first level for a group or class. For private rows read with a schema learned from
    /// public rows (`fit lpct`): no message depends on which values they hold.
    AsMissing,
}

/// An integer-valued target with at most this many distinct values is inferred multi-class;
/// with more, real. Override with an explicit task.
pub const MAX_INFERRED_CLASSES: usize = 20;

/// A text column found among the default features is one-hot encoded when it has at most this
/// many levels; with more it is refused (an identifier or free text), naming the column.
pub const MAX_TEXT_LEVELS: usize = 100;

/// Whether a column's *name* says it identifies rows (`id`, `ID`, `*_id`, `index`, pandas'
/// `Unnamed: 0` and the `__index_level_0__` its `to_parquet()` writes): such a column is left out of the default features, with a note. A rule on
/// names only (public), never on values.
pub fn is_id_like(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    matches!(n.as_str(), "id" | "index" | "idx" | "rowid" | "row")
        || n.starts_with("unnamed:")
        || n.starts_with("__index_level_")
        || ["_id", "-id", " id", ".id"].iter().any(|s| n.ends_with(s))
}

/// The schema given on the command line for a training load.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The target column (`--target`); `None` loads features only.
    pub target: Option<String>,
    /// The sensitive column (`--sensitive`), or several columns' names joined by `,`: an
    /// intersectional attribute, each combination of their values a group, named by the values
    /// joined by [`GROUP_SEPARATOR`] (`White × F`; levels declared in that form with
    /// [`LoadOptions::groups`]). A column whose name is the whole text is read alone.
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
    /// Public bounds (`--bounds`) whose midpoints fill missing cells of their numeric columns
    /// ([`MissingPolicy::Fill`]); other numeric columns are filled with 0.
    pub fill: Bounds,
    pub format: CsvFormat,
}

/// Options of a prediction-time load with a stored schema.
#[derive(Clone, Debug, Default)]
pub struct ApplyOptions {
    /// Read the target column too, when present in the file.
    pub with_target: bool,
    pub missing: MissingPolicy,
    pub unseen: Unseen,
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

/// Load a training file of any supported format ([`FileFormat::of`]: Parquet and Arrow IPC
/// by extension, CSV otherwise) with the same schema rules, coding and messages as
/// [`load_csv`].
///
/// ```no_run
/// use dpfair_data::{LoadOptions, load};
/// let options = LoadOptions {
///     target: Some("income".into()),
///     sensitive: Some("sex".into()),
///     ..LoadOptions::default()
/// };
/// let loaded = load("adult.parquet", &options)?;
/// println!("{} rows", loaded.dataset.n_rows());
/// # Ok::<(), dpfair_data::DataError>(())
/// ```
pub fn load(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Loaded> {
    let path = path.as_ref();
    match FileFormat::of(path) {
        FileFormat::Csv => load_csv(path, options),
        columnar => learn(&ColumnarFile::open(path, columnar)?, options, true),
    }
}

/// [`load_csv`] on a table already in memory.
pub fn load_table(table: &Table, options: &LoadOptions) -> Result<Loaded> {
    learn(&CsvSource::new(table), options, true)
}

/// The index of column `name` of `file`; `parameter` says where the name came from.
pub(crate) fn column_index(file: &FileInfo, name: &str, parameter: &'static str) -> Result<usize> {
    file.columns
        .iter()
        .position(|c| c == name)
        .ok_or_else(|| DataError::UnknownColumn {
            path: file.path.clone(),
            column: clip(name),
            parameter,
            available: clip_to(&file.columns.join(", "), 400),
        })
}

/// The columns of sensitive attribute `name`: the column named `name`, else the columns its
/// `,`-separated parts name (an intersectional attribute, [`LoadOptions::sensitive`]); an
/// unknown one is an error naming it.
pub(crate) fn sensitive_columns(
    file: &FileInfo,
    name: &str,
    parameter: &'static str,
) -> Result<Vec<usize>> {
    if let Ok(col) = column_index(file, name, parameter) {
        return Ok(vec![col]);
    }
    let cols = name
        .split(',')
        .map(|part| column_index(file, part, parameter))
        .collect::<Result<Vec<_>>>()?;
    for (k, &col) in cols.iter().enumerate() {
        if cols[..k].contains(&col) {
            return Err(DataError::DuplicateColumn {
                path: file.path.clone(),
                column: file.columns[col].clone(),
                first: parameter,
                second: parameter,
            });
        }
    }
    Ok(cols)
}

/// Whether `file` has the column named `name` or one that a `,`-separated part of it names.
fn has_any(file: &FileInfo, name: &str) -> bool {
    let has = |c: &str| file.columns.iter().any(|f| f == c);
    has(name) || name.split(',').any(has)
}

/// The training load on any source (module doc of [`encode`]): resolve the columns, find text
/// columns, code every row. With `keep` off the rows are coded and checked but not stored: the
/// result has the schema and the report (without row indices) and an empty data set.
pub(crate) fn learn(source: &dyn Source, options: &LoadOptions, keep: bool) -> Result<Loaded> {
    let file = source.info();
    let target = match &options.target {
        Some(name) => Some(column_index(file, name, "--target")?),
        None => None,
    };
    let sensitive = match &options.sensitive {
        Some(name) => sensitive_columns(file, name, "--sensitive")?,
        None => Vec::new(),
    };
    if let Some(t) = target
        && sensitive.contains(&t)
    {
        return Err(DataError::DuplicateColumn {
            path: file.path.clone(),
            column: file.columns[t].clone(),
            first: "--target",
            second: "--sensitive",
        });
    }
    let mut skipped_ids = Vec::new();
    let feature_idx: Vec<usize> = match &options.features {
        Some(names) => {
            let mut idx = Vec::with_capacity(names.len());
            for name in names {
                let i = column_index(file, name, "--features")?;
                if Some(i) == target {
                    return Err(DataError::DuplicateColumn {
                        path: file.path.clone(),
                        column: name.clone(),
                        first: "--features",
                        second: "--target",
                    });
                }
                if idx.contains(&i) {
                    return Err(DataError::DuplicateColumn {
                        path: file.path.clone(),
                        column: name.clone(),
                        first: "--features",
                        second: "--features",
                    });
                }
                idx.push(i);
            }
            idx
        }
        None => (0..file.columns.len())
            .filter(|&i| Some(i) != target && !sensitive.contains(&i))
            .filter(|&i| !(i == 0 && file.unnamed_index))
            .filter(|&i| !file.nested[i])
            .filter(|&i| {
                let id = is_id_like(&file.columns[i]);
                if id && !options.drop.contains(&file.columns[i]) {
                    skipped_ids.push(file.columns[i].clone());
                }
                !id
            })
            .collect(),
    };
    let mut dropped = vec![false; file.columns.len()];
    for name in &options.drop {
        dropped[column_index(file, name, "--drop")?] = true;
    }
    let feature_idx: Vec<usize> = feature_idx.into_iter().filter(|&i| !dropped[i]).collect();
    let mut categorical = vec![false; file.columns.len()];
    for name in &options.categorical {
        let i = column_index(file, name, "--categorical")?;
        if !feature_idx.contains(&i) {
            return Err(invalid(
                "--categorical",
                format!("column `{name}` is not among the features"),
            ));
        }
        categorical[i] = true;
    }
    let text_columns = find_text_columns(source, &feature_idx, &categorical)?;
    for &i in &text_columns {
        categorical[i] = true;
    }
    let features = feature_idx
        .iter()
        .map(|&i| FeaturePlan {
            col: i,
            coder: categorical[i].then(Coder::learn),
            fill: midpoint(options.fill.get(&file.columns[i])),
        })
        .collect();
    let sensitive = match sensitive.is_empty() {
        true => None,
        false => Some(SensitivePlan {
            cols: sensitive,
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
            fill: midpoint(options.fill.get(&file.columns[col])),
            coder: match (options.task, &options.classes) {
                (Some(TaskKind::Regression), None) => None,
                (_, Some(levels)) => Some(Coder::fixed_labels(levels.clone(), "--classes")?),
                (_, None) => Some(Coder::learn_labels()),
            },
        }),
    };
    let plan = Plan {
        features,
        sensitive,
        target,
    };
    let mut encoder = Encoder::new(file, plan.clone(), options.missing, keep);
    source.scan(&plan.used(), &mut |chunk| encoder.push(chunk))?;
    let mut enc = encoder.finish().require_rows(file)?;
    for f in &enc.features {
        if let Some(levels) = &f.levels
            && text_columns.contains(&f.col)
            && levels.len() > MAX_TEXT_LEVELS
        {
            let name = &file.columns[f.col];
            return Err(invalid(
                "--features",
                format!(
                    "column `{name}` holds text with more than {MAX_TEXT_LEVELS} distinct values \
                     (an identifier or free text?): leave it out (--drop {name}; in Python, drop \
                     it from X), or one-hot encode it anyway (--categorical {name}; in Python, \
                     make it a `category` column)",
                ),
            ));
        }
    }
    enc.report.skipped_ids = skipped_ids;
    enc.report.text_columns = text_columns
        .iter()
        .map(|&i| file.columns[i].clone())
        .collect();

    let feature_cols: Vec<FeatureColumn> = enc
        .features
        .iter()
        .map(|f| {
            let name = file.columns[f.col].clone();
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
            let (encoding, values) = decide_target(source, t, options)?;
            (
                Some(TargetColumn {
                    name: file.columns[t.col].clone(),
                    encoding,
                }),
                Some(values),
            )
        }
    };
    let sensitive_col = enc.sensitive.as_ref().map(|s| SensitiveColumn {
        name: column_names(&file.columns, &s.cols),
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

/// The default feature columns that hold text ([`TextScan`]), in feature order: one scan over
/// the columns that may (CSV columns, string columns of a columnar file).
fn find_text_columns(
    source: &dyn Source,
    feature_idx: &[usize],
    categorical: &[bool],
) -> Result<Vec<usize>> {
    let candidates: Vec<usize> = feature_idx
        .iter()
        .copied()
        .filter(|&i| !categorical[i] && source.may_hold_text(i))
        .collect();
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let mut scans = vec![TextScan::default(); candidates.len()];
    let mut sorted = candidates.clone();
    sorted.sort_unstable();
    source.scan(&sorted, &mut |chunk| {
        for (scan, &col) in scans.iter_mut().zip(&candidates) {
            scan.update(chunk, col);
        }
        Ok(())
    })?;
    Ok(candidates
        .into_iter()
        .zip(scans)
        .filter(|(_, s)| s.holds_text())
        .map(|(i, _)| i)
        .collect())
}

/// Read a file with a stored schema (see [`Schema::load`]).
pub(crate) fn apply_schema(schema: &Schema, path: &Path, options: &ApplyOptions) -> Result<Loaded> {
    match FileFormat::of(path) {
        FileFormat::Csv => {
            let table = Table::read(path, &options.format)?;
            apply_to(schema, &CsvSource::new(&table), options)
        }
        columnar => apply_to(schema, &ColumnarFile::open(path, columnar)?, options),
    }
}

/// The coding a stored schema prescribes for `file`: fixed levels, the schema's columns.
pub(crate) fn stored_plan(schema: &Schema, file: &FileInfo, with_target: bool) -> Result<Plan> {
    let mut features = Vec::with_capacity(schema.features.len());
    for (f, fill) in schema.features.iter().zip(numeric_fills(schema)) {
        let col = column_index(file, f.name(), "a feature column of the model's schema")?;
        let coder = match f {
            FeatureColumn::Numeric { .. } => None,
            FeatureColumn::Categorical { levels, .. } => Some(Coder::fixed(levels.clone())),
        };
        features.push(FeaturePlan { col, coder, fill });
    }
    // A file without the sensitive attribute is read without groups; one with some of an
    // intersectional attribute's columns is refused, naming a missing one.
    let sensitive = match &schema.sensitive {
        Some(s) if has_any(file, &s.name) => Some(SensitivePlan {
            cols: sensitive_columns(
                file,
                &s.name,
                "the sensitive attribute of the model's schema",
            )?,
            coder: Coder::stored_labels(s.levels.clone()),
        }),
        _ => None,
    };
    let target = if with_target {
        schema.target.as_ref().and_then(|t| {
            let col = file.columns.iter().position(|c| *c == t.name)?;
            Some(TargetPlan {
                col,
                fill: 0.0,
                coder: match &t.encoding {
                    TargetEncoding::Real => None,
                    enc => Some(Coder::stored_labels(enc.labels().to_vec())),
                },
            })
        })
    } else {
        None
    };
    Ok(Plan {
        features,
        sensitive,
        target,
    })
}

/// The data set of coded rows `enc` under a stored schema, scaled as the schema says.
pub(crate) fn stored_dataset(schema: &Schema, enc: &Encoded) -> Result<Dataset> {
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
    let mut dataset = build_dataset(schema, enc, target_values);
    schema.scaling.apply(&mut dataset.features)?;
    Ok(dataset)
}

fn apply_to(schema: &Schema, source: &dyn Source, options: &ApplyOptions) -> Result<Loaded> {
    let file = source.info();
    let plan = stored_plan(schema, file, options.with_target)?;
    let mut encoder =
        Encoder::new(file, plan.clone(), options.missing, true).unseen(options.unseen);
    source.scan(&plan.used(), &mut |chunk| encoder.push(chunk))?;
    let enc = encoder.finish().require_rows(file)?;
    Ok(Loaded {
        dataset: stored_dataset(schema, &enc)?,
        schema: schema.clone(),
        report: enc.report,
    })
}

/// Per feature column of a stored schema, the fill of a missing numeric cell
/// ([`MissingPolicy::Fill`]), as at fit: the midpoint of the column's public bounds, else 0.
pub(crate) fn numeric_fills(schema: &Schema) -> Vec<f64> {
    let mut j = 0;
    schema
        .features
        .iter()
        .map(|f| {
            let bounds = match &schema.scaling {
                crate::Scaling::MinMax(mm)
                    if mm.sources.get(j) == Some(&crate::BoundSource::Public) =>
                {
                    mm.lo.get(j).zip(mm.hi.get(j))
                }
                _ => None,
            };
            j += f.width();
            midpoint(bounds.map(|(&lo, &hi)| (lo, hi)))
        })
        .collect()
}

/// The public fill of a missing numeric cell ([`MissingPolicy::Fill`]): the midpoint of the
/// column's public bounds when known, else 0.
pub(crate) fn midpoint(bounds: Option<(f64, f64)>) -> f64 {
    bounds
        .map(|(lo, hi)| lo + (hi - lo) / 2.0)
        .filter(|m| m.is_finite())
        .unwrap_or(0.0)
}

/// Decide the target's coding from its learned levels (see [`LoadOptions::task`]).
fn decide_target(
    source: &dyn Source,
    t: &EncodedTarget,
    options: &LoadOptions,
) -> Result<(TargetEncoding, Target)> {
    let file = source.info();
    let name = file.columns[t.col].clone();
    let context = file.path.display().to_string();
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
                let at = source.position(t.first_row[i]);
                values.push(parse_number(&file.path, &name, at, Value::Text(l))?);
            }
            Ok((
                TargetEncoding::Real,
                Target::Real(codes.iter().map(|&c| values[c as usize]).collect()),
            ))
        }
    }
}
