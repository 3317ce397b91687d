//! The one pass over the rows shared by every load (CSV or columnar, training or prediction,
//! whole file or batch by batch): missing-value handling, number parsing, level coding.
//!
//! A file is read as a sequence of chunks ([`Rows`]: the whole CSV table, or one record batch of
//! a Parquet or Arrow IPC file); an [`Encoder`] keeps its coders and counts across chunks, so a
//! file read in batches is coded exactly as one read whole.

use crate::dataset::{Dataset, Groups, Target};
use crate::error::{DataError, Position, Result, clip, clip_to, invalid};
use crate::load::{LoadReport, MissingPolicy, Unseen};
use crate::schema::Schema;
use crate::table::is_missing;
use ndarray::Array2;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;

/// One field of a file: text (CSV, string columns), a number (numeric and boolean columns of a
/// columnar file) or a null.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Value<'a> {
    Text(&'a str),
    Number(f64),
    Null,
}

impl Value<'_> {
    /// A missing value: a null, or text `?`, `NA` or empty (the CSV rule, [`is_missing`]).
    pub(crate) fn is_missing(&self) -> bool {
        match self {
            Value::Null => true,
            Value::Text(s) => is_missing(s),
            Value::Number(_) => false,
        }
    }

    /// The value's spelling: the text itself, or a number's shortest round-trip form (`1`,
    /// `0.5`), as a level name.
    pub(crate) fn text(&self) -> Cow<'_, str> {
        match self {
            Value::Text(s) => Cow::Borrowed(s),
            Value::Number(x) => Cow::Owned(format!("{x}")),
            Value::Null => Cow::Borrowed(""),
        }
    }

    /// For messages: a null is shown as `null`.
    fn shown(&self) -> String {
        match self {
            Value::Null => "null".into(),
            v => clip(&v.text()),
        }
    }

    /// Whether the value is a number (text that parses as one counts).
    pub(crate) fn is_number(&self) -> bool {
        match self {
            Value::Text(s) => s.parse::<f64>().is_ok(),
            Value::Number(_) => true,
            Value::Null => false,
        }
    }
}

/// A chunk of rows of a file: the whole CSV table, or one record batch of a columnar file.
/// Columns are indexed as in the file; only the columns a load uses are asked for.
pub(crate) trait Rows {
    fn n_rows(&self) -> usize;
    /// The field at chunk row `row`, file column `col`.
    fn value(&self, row: usize, col: usize) -> Value<'_>;
    /// The position of chunk row `row` in the file, for messages.
    fn position(&self, row: usize) -> Position;
}

/// Per column, whether every present value is text (no number): the text-column rule of the
/// training load, accumulated over chunks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TextScan {
    present: bool,
    all_text: bool,
}

impl Default for TextScan {
    fn default() -> Self {
        TextScan {
            present: false,
            all_text: true,
        }
    }
}

impl TextScan {
    pub(crate) fn update(&mut self, rows: &dyn Rows, col: usize) {
        if !self.all_text {
            return;
        }
        for r in 0..rows.n_rows() {
            let v = rows.value(r, col);
            if v.is_missing() {
                continue;
            }
            self.present = true;
            if v.is_number() {
                self.all_text = false;
                return;
            }
        }
    }

    /// Some value is present and none is a number. A column mixing numbers and text is not
    /// text: it stays numeric and its first non-number is an error naming the row (a typo or a
    /// decimal comma is more likely than text codes).
    pub(crate) fn holds_text(&self) -> bool {
        self.present && self.all_text
    }
}

/// Codes for the values of one column: fixed levels (unseen value: error) or learned.
///
/// Label coders (the target's classes and the sensitive groups) compare numbers as numbers, so
/// `1`, `1.0` and `1e0` are one class and `-0` is `0`; the first spelling met names the level.
/// Categorical features compare spellings (`007` and `7` may be different codes).
#[derive(Clone, Debug)]
pub(crate) struct Coder {
    map: HashMap<String, u32>,
    pub(crate) levels: Vec<String>,
    /// First data row (0-based) where each level was seen (learned coders; for messages).
    first_row: Vec<usize>,
    fixed: bool,
    numeric_labels: bool,
    /// The option that declared fixed levels (`--groups`, `--classes`), for messages.
    declared_by: Option<&'static str>,
}

/// The key a label coder files `value` under: a finite number's shortest spelling (`-0` → `0`),
/// else the text itself.
pub(crate) fn label_key(value: &str) -> Cow<'_, str> {
    match value.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Cow::Owned(format!("{}", x + 0.0)),
        _ => Cow::Borrowed(value),
    }
}

/// The separator of an intersectional group's parts (`--sensitive race,sex`: group `White × F`):
/// U+00D7 between spaces. A part holding it is refused, so two combinations never join alike.
pub const GROUP_SEPARATOR: &str = " × ";

/// The group of a row of an intersectional attribute: its parts' values (each by the label
/// coder's key: numbers as numbers, `1.0` is `1`) joined by [`GROUP_SEPARATOR`]; `Err(k)` when
/// part `k` holds the separator.
pub(crate) fn join_group<'a>(
    parts: impl IntoIterator<Item = &'a str>,
) -> std::result::Result<String, usize> {
    let mut joined = String::new();
    for (k, part) in parts.into_iter().enumerate() {
        if part.contains(GROUP_SEPARATOR) {
            return Err(k);
        }
        if k > 0 {
            joined += GROUP_SEPARATOR;
        }
        joined += &label_key(part);
    }
    Ok(joined)
}

/// The name of the attribute read from columns `cols` of `columns`: one column's name, or the
/// parts' names joined by `,` (as `--sensitive race,sex` names them).
pub(crate) fn column_names(columns: &[String], cols: &[usize]) -> String {
    let names: Vec<&str> = cols.iter().map(|&c| columns[c].as_str()).collect();
    names.join(",")
}

/// Whether `value` spells a number that is not finite (`NaN`, `inf`, `-infinity`, …).
fn is_non_finite_number(value: &str) -> bool {
    value.trim().parse::<f64>().is_ok_and(|x| !x.is_finite())
}

impl Coder {
    pub(crate) fn learn() -> Self {
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
    pub(crate) fn learn_labels() -> Self {
        Coder {
            numeric_labels: true,
            ..Coder::learn()
        }
    }

    pub(crate) fn fixed(levels: Vec<String>) -> Self {
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
    pub(crate) fn stored_labels(levels: Vec<String>) -> Self {
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
    pub(crate) fn fixed_labels(levels: Vec<String>, option: &'static str) -> Result<Self> {
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
            Cow::Borrowed(value)
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

#[derive(Clone)]
pub(crate) struct FeaturePlan {
    pub(crate) col: usize,
    /// `None`: numeric.
    pub(crate) coder: Option<Coder>,
    /// A numeric column's public fill for a missing cell ([`MissingPolicy::Fill`]).
    pub(crate) fill: f64,
}

/// The raw code of a categorical cell that is missing (or unseen, [`Unseen::AsMissing`]): no
/// level, an all-zero one-hot block ([`build_dataset`]).
const NO_LEVEL: f64 = -1.0;

/// The provisional code of a missing group or class label: the first level once the coder is
/// finished ([`MissingPolicy::Fill`]).
const FIRST_LEVEL: u32 = u32::MAX;

#[derive(Clone)]
pub(crate) struct SensitivePlan {
    /// One column, or the parts of an intersectional attribute ([`join_group`]).
    pub(crate) cols: Vec<usize>,
    pub(crate) coder: Coder,
}

#[derive(Clone)]
pub(crate) struct TargetPlan {
    pub(crate) col: usize,
    /// `None`: real-valued.
    pub(crate) coder: Option<Coder>,
    /// A real target's public fill for a missing cell ([`MissingPolicy::Fill`]).
    pub(crate) fill: f64,
}

/// What a load reads: the feature, sensitive and target columns and how each is coded.
#[derive(Clone)]
pub(crate) struct Plan {
    pub(crate) features: Vec<FeaturePlan>,
    pub(crate) sensitive: Option<SensitivePlan>,
    pub(crate) target: Option<TargetPlan>,
}

impl Plan {
    /// The file columns the plan reads, sorted.
    pub(crate) fn used(&self) -> Vec<usize> {
        let mut used: Vec<usize> = self.features.iter().map(|f| f.col).collect();
        used.extend(self.sensitive.iter().flat_map(|s| s.cols.iter().copied()));
        used.extend(self.target.as_ref().map(|t| t.col));
        used.sort_unstable();
        used.dedup();
        used
    }
}

pub(crate) struct EncodedFeature {
    pub(crate) col: usize,
    pub(crate) levels: Option<Vec<String>>,
}

pub(crate) struct EncodedSensitive {
    pub(crate) cols: Vec<usize>,
    pub(crate) levels: Vec<String>,
    pub(crate) codes: Vec<u32>,
}

pub(crate) enum TargetValues {
    Codes(Vec<u32>),
    Real(Vec<f64>),
}

pub(crate) struct EncodedTarget {
    pub(crate) col: usize,
    pub(crate) values: TargetValues,
    pub(crate) levels: Vec<String>,
    pub(crate) first_row: Vec<usize>,
}

pub(crate) struct Encoded {
    pub(crate) features: Vec<EncodedFeature>,
    /// Row-major raw values per source feature column (categorical: final code as f64).
    pub(crate) raw: Vec<f64>,
    pub(crate) sensitive: Option<EncodedSensitive>,
    pub(crate) target: Option<EncodedTarget>,
    /// Rows kept (without a missing value).
    pub(crate) kept: usize,
    pub(crate) report: LoadReport,
}

/// The file a load reads, for messages and the report.
#[derive(Clone, Debug)]
pub(crate) struct FileInfo {
    pub(crate) path: PathBuf,
    pub(crate) columns: Vec<String>,
    pub(crate) delimiter: u8,
    pub(crate) has_header: bool,
    pub(crate) unnamed_index: bool,
    /// Nested columns (struct, list, map) of a columnar file: left out of the default features
    /// and refused only when a load uses one (docs/data.md).
    pub(crate) nested: Vec<bool>,
}

/// The pass over the rows, chunk by chunk (module doc). With `keep` off, only the coders and
/// counts are updated (a schema-learning pass over a file too large to hold).
pub(crate) struct Encoder<'f> {
    file: &'f FileInfo,
    plan: Plan,
    missing: MissingPolicy,
    unseen: Unseen,
    keep: bool,
    used: Vec<usize>,
    missing_counts: Vec<usize>,
    raw: Vec<f64>,
    rows: Vec<usize>,
    s_codes: Vec<u32>,
    t_codes: Vec<u32>,
    t_real: Vec<f64>,
    kept: usize,
    /// Data rows of the file before the next chunk.
    seen: usize,
}

impl<'f> Encoder<'f> {
    pub(crate) fn new(file: &'f FileInfo, plan: Plan, missing: MissingPolicy, keep: bool) -> Self {
        let used = plan.used();
        Encoder {
            file,
            missing_counts: vec![0; used.len()],
            used,
            plan,
            missing,
            unseen: Unseen::Refuse,
            keep,
            raw: Vec::new(),
            rows: Vec::new(),
            s_codes: Vec::new(),
            t_codes: Vec::new(),
            t_real: Vec::new(),
            kept: 0,
            seen: 0,
        }
    }

    /// Code values outside fixed levels as `unseen` says (a stored schema's levels).
    pub(crate) fn unseen(mut self, unseen: Unseen) -> Self {
        self.unseen = unseen;
        self
    }

    /// Start counting rows at `seen` (a batch read after `seen` rows of the file).
    pub(crate) fn starting_at(mut self, seen: usize) -> Self {
        self.seen = seen;
        self
    }

    fn column(&self, col: usize) -> String {
        self.file.columns[col].clone()
    }

    /// The name of a label read from `cols`: one column's, or the parts' names joined by `,`
    /// (as `--sensitive` names them).
    fn columns(&self, cols: &[usize]) -> String {
        column_names(&self.file.columns, cols)
    }

    fn unseen_error(&self, at: Position, cols: &[usize], value: &str, coder: &Coder) -> DataError {
        match coder.declared_by {
            Some(option) => DataError::UndeclaredLevel {
                path: self.file.path.clone(),
                at,
                column: self.columns(cols),
                value: clip(value),
                declared: format!("{option} {}", clip_to(&coder.levels.join(", "), 400)),
            },
            None => DataError::UnseenLevel {
                path: self.file.path.clone(),
                at,
                column: self.columns(cols),
                value: clip(value),
                known: clip_to(&coder.levels.join(", "), 400),
            },
        }
    }

    /// Code one chunk of rows.
    pub(crate) fn push(&mut self, chunk: &dyn Rows) -> Result<()> {
        let n = chunk.n_rows();
        if self.keep {
            self.raw.reserve(n * self.plan.features.len());
        }
        let mut features = std::mem::take(&mut self.plan.features);
        let mut sensitive = self.plan.sensitive.take();
        let mut target = self.plan.target.take();
        let result = (|| {
            for r in 0..n {
                self.push_row(chunk, r, &mut features, &mut sensitive, &mut target)?;
            }
            Ok(())
        })();
        self.plan.features = features;
        self.plan.sensitive = sensitive;
        self.plan.target = target;
        self.seen += n;
        result
    }

    fn push_row(
        &mut self,
        chunk: &dyn Rows,
        r: usize,
        features: &mut [FeaturePlan],
        sensitive: &mut Option<SensitivePlan>,
        target: &mut Option<TargetPlan>,
    ) -> Result<()> {
        let row = self.seen + r;
        let mut has_missing = false;
        for (k, &c) in self.used.iter().enumerate() {
            let v = chunk.value(r, c);
            if v.is_missing() {
                if self.missing == MissingPolicy::Refuse {
                    return Err(DataError::MissingRefused {
                        path: self.file.path.clone(),
                        at: chunk.position(r),
                        column: self.column(c),
                        value: v.shown(),
                    });
                }
                self.missing_counts[k] += 1;
                has_missing = true;
            }
        }
        if has_missing && self.missing == MissingPolicy::Drop {
            return Ok(());
        }
        for f in features.iter_mut() {
            let v = chunk.value(r, f.col);
            let x = match &mut f.coder {
                None if v.is_missing() => f.fill,
                None => self.number(chunk, r, f.col, v)?,
                Some(coder) => self
                    .label(chunk, r, std::slice::from_ref(&f.col), v, coder)?
                    .map_or(NO_LEVEL, f64::from),
            };
            if self.keep {
                self.raw.push(x);
            }
        }
        if let Some(s) = sensitive.as_mut() {
            for &col in &s.cols {
                self.refuse_non_finite_label(chunk, r, col, chunk.value(r, col))?;
            }
            let code = match s.cols.as_slice() {
                &[col] => self.label(chunk, r, &s.cols, chunk.value(r, col), &mut s.coder)?,
                cols => self.intersection(chunk, r, cols, &mut s.coder)?,
            }
            .unwrap_or(FIRST_LEVEL);
            if self.keep {
                self.s_codes.push(code);
            }
        }
        if let Some(t) = target.as_mut() {
            let v = chunk.value(r, t.col);
            match &mut t.coder {
                None => {
                    let y = match v.is_missing() {
                        true => t.fill,
                        false => self.number(chunk, r, t.col, v)?,
                    };
                    if self.keep {
                        self.t_real.push(y);
                    }
                }
                Some(coder) => {
                    self.refuse_non_finite_label(chunk, r, t.col, v)?;
                    let code = self
                        .label(chunk, r, std::slice::from_ref(&t.col), v, coder)?
                        .unwrap_or(FIRST_LEVEL);
                    if self.keep {
                        self.t_codes.push(code);
                    }
                }
            }
        }
        if self.keep {
            self.rows.push(row);
        }
        self.kept += 1;
        Ok(())
    }

    /// The code of text value `v` of column `cols` (one, or the parts of an intersectional
    /// group); `None` for a missing value, or for a value outside fixed levels under
    /// [`Unseen::AsMissing`] (else that is an error).
    fn label(
        &self,
        chunk: &dyn Rows,
        r: usize,
        cols: &[usize],
        v: Value,
        coder: &mut Coder,
    ) -> Result<Option<u32>> {
        if v.is_missing() {
            return Ok(None);
        }
        let text = v.text();
        match coder.code(&text, self.seen + r) {
            Some(code) => Ok(Some(code)),
            None if self.unseen == Unseen::AsMissing => Ok(None),
            None => Err(self.unseen_error(chunk.position(r), cols, &text, coder)),
        }
    }

    /// The code of row `r`'s intersectional group, its parts read from `cols`
    /// ([`join_group`]); `None` when a part is missing, as for one column's missing value.
    fn intersection(
        &self,
        chunk: &dyn Rows,
        r: usize,
        cols: &[usize],
        coder: &mut Coder,
    ) -> Result<Option<u32>> {
        let values: Vec<Value> = cols.iter().map(|&c| chunk.value(r, c)).collect();
        if values.iter().any(Value::is_missing) {
            return Ok(None);
        }
        let texts: Vec<Cow<'_, str>> = values.iter().map(Value::text).collect();
        let joined = join_group(texts.iter().map(|t| t.as_ref())).map_err(|k| {
            invalid(
                "--sensitive",
                format!(
                    "{}: {}, column `{}`: a value holds `{}`, which separates the parts of an \
                     intersectional group",
                    self.file.path.display(),
                    chunk.position(r),
                    self.column(cols[k]),
                    GROUP_SEPARATOR.trim()
                ),
            )
        })?;
        self.label(chunk, r, cols, Value::Text(&joined), coder)
    }

    /// A class or group label that spells a non-finite number (`NaN`, `inf`) is an error, not
    /// a level: it is almost always a failed computation upstream.
    fn refuse_non_finite_label(
        &self,
        chunk: &dyn Rows,
        r: usize,
        col: usize,
        v: Value,
    ) -> Result<()> {
        let non_finite = match v {
            Value::Number(x) => !x.is_finite(),
            Value::Text(s) => is_non_finite_number(s),
            Value::Null => false,
        };
        if non_finite {
            return Err(DataError::NonFinite {
                path: self.file.path.clone(),
                at: chunk.position(r),
                column: self.column(col),
                value: v.shown(),
            });
        }
        Ok(())
    }

    fn number(&self, chunk: &dyn Rows, r: usize, col: usize, v: Value) -> Result<f64> {
        parse_number(
            &self.file.path,
            &self.file.columns[col],
            chunk.position(r),
            v,
        )
    }

    /// Final codes (learned levels remapped into sorted order) and the report. An empty result
    /// (every row had a missing value) is the caller's to refuse.
    pub(crate) fn finish(self) -> Encoded {
        let Encoder {
            file,
            plan,
            used,
            missing_counts,
            mut raw,
            rows,
            s_codes,
            t_codes,
            t_real,
            kept,
            seen,
            ..
        } = self;
        let width = plan.features.len();
        let mut features = Vec::with_capacity(width);
        for (j, f) in plan.features.into_iter().enumerate() {
            let levels = f.coder.map(|coder| {
                let (levels, remap, _) = coder.finish();
                for row in raw.chunks_exact_mut(width) {
                    if row[j] != NO_LEVEL {
                        row[j] = remap[row[j] as usize] as f64;
                    }
                }
                levels
            });
            features.push(EncodedFeature { col: f.col, levels });
        }
        let sensitive = plan.sensitive.map(|s| {
            let (levels, remap, _) = s.coder.finish();
            let codes = s_codes.iter().map(|&c| final_code(&remap, c)).collect();
            EncodedSensitive {
                cols: s.cols,
                levels,
                codes,
            }
        });
        let target = plan.target.map(|t| match t.coder {
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
                    values: TargetValues::Codes(
                        t_codes.iter().map(|&c| final_code(&remap, c)).collect(),
                    ),
                    levels,
                    first_row,
                }
            }
        });
        let report = LoadReport {
            path: file.path.clone(),
            rows_in_file: seen,
            rows,
            dropped: seen - kept,
            missing_by_column: used
                .iter()
                .zip(missing_counts)
                .map(|(&c, k)| (file.columns[c].clone(), k))
                .collect(),
            delimiter: file.delimiter,
            has_header: file.has_header,
            skipped_index: file.unnamed_index && !used.contains(&0),
            skipped_ids: Vec::new(),
            text_columns: Vec::new(),
        };
        Encoded {
            features,
            raw,
            sensitive,
            target,
            kept,
            report,
        }
    }
}

/// A label's final code: [`FIRST_LEVEL`] (a missing label) is the first level.
fn final_code(remap: &[u32], provisional: u32) -> u32 {
    match provisional {
        FIRST_LEVEL => 0,
        c => remap[c as usize],
    }
}

impl Encoded {
    /// Refuse a load in which every row had a missing value (dropped), or whose group or class
    /// column has no value at all (nothing to fill a missing label with).
    pub(crate) fn require_rows(self, file: &FileInfo) -> Result<Encoded> {
        if self.kept == 0 {
            return Err(DataError::AllRowsMissing {
                path: self.report.path.clone(),
                dropped: self.report.dropped,
            });
        }
        let labels = [
            self.sensitive
                .as_ref()
                .map(|s| (s.cols.as_slice(), s.levels.is_empty())),
            self.target.as_ref().and_then(|t| match t.values {
                TargetValues::Codes(_) => Some((std::slice::from_ref(&t.col), t.levels.is_empty())),
                TargetValues::Real(_) => None,
            }),
        ];
        if let Some((cols, _)) = labels.into_iter().flatten().find(|&(_, empty)| empty) {
            return Err(DataError::NoValues {
                path: self.report.path.clone(),
                column: column_names(&file.columns, cols),
            });
        }
        Ok(self)
    }
}

/// A numeric field: a finite number, else an error naming the file, row and column.
pub(crate) fn parse_number(
    path: &std::path::Path,
    column: &str,
    at: Position,
    v: Value,
) -> Result<f64> {
    let parsed = match v {
        Value::Number(x) => Ok(x),
        Value::Text(s) => s.parse::<f64>().map_err(|_| ()),
        Value::Null => Err(()),
    };
    match parsed {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(DataError::NonFinite {
            path: path.to_path_buf(),
            at,
            column: column.to_string(),
            value: v.shown(),
        }),
        Err(()) => Err(DataError::NonNumeric {
            path: path.to_path_buf(),
            at,
            column: column.to_string(),
            value: v.shown(),
            hint: " (list the column in --categorical to one-hot encode it)",
        }),
    }
}

/// Assemble the feature matrix (one-hot expansion) and the data set.
pub(crate) fn build_dataset(schema: &Schema, enc: &Encoded, target: Option<Target>) -> Dataset {
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
                Some(_) if row[j] == NO_LEVEL => {}
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
