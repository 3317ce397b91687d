//! `dpfair predict`: apply a fitted model to a raw CSV, Parquet or Arrow IPC file in the
//! training format.
//!
//! The output has a header and exactly one row per data row of the input, in order: column
//! `prediction` (the label in the target's original coding; a sampled label for randomized
//! classifiers; the value for regression) and, when the model has them, `p_<label>` probability
//! columns. A row with a missing value (`?`, `NA`, empty) in a column the model reads gets empty
//! fields (never dropped, so the output stays aligned with the input); the count goes to stderr.
//! An `--out` ending in `.parquet` is written as Parquet (nulls for those rows).

use crate::cmd::common::{HeaderArg, Input, check_output, csv_format, parse_delimiter};
use crate::error::{CliError, CliResult};
use dpfair::model::{ModelFile, Predictions};
use dpfair_data::output::AtomicFile;
use dpfair_data::write_parquet::{OutColumn, write_parquet};
use dpfair_data::{ApplyOptions, FileFormat, MissingPolicy, Unseen};
use dpfair_privacy::Noise;
use std::path::PathBuf;

const AFTER_LONG_HELP: &str = "\
Writes one row per input row: the predicted label (or value), and for classifiers the class \
probabilities `p_<label>` when the model has them. Input rows with a missing value in a column the \
model reads get empty fields (counted on stderr). Columns are matched by name, in any order.
--data may be CSV, Parquet (.parquet) or Arrow IPC (.arrow, .ipc, .feather); an --out ending in
.parquet is written as Parquet (nulls for rows without a prediction).

Example:
  dpfair predict --model model.json --data test.csv --out pred.csv --seed 1";

#[derive(clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The model file written by `dpfair fit`.
    #[arg(long, value_name = "MODEL.json")]
    pub model: PathBuf,
    /// Rows to predict: a CSV, Parquet or Arrow IPC file with (at least) the model's feature
    /// columns, found by name.
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// Where to write the predictions (CSV; Parquet when the name ends in `.parquet`).
    #[arg(long, value_name = "PRED.csv")]
    pub out: PathBuf,
    /// Seed of a randomized predictor's own coin flips (prediction only: the model's release
    /// noise is fixed in the model file) [default: the operating system's CSPRNG].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Field delimiter of --data: `,` `;` `tab` or one character [default: detected].
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter)]
    pub delimiter: Option<u8>,
    /// Whether the first row of --data is a header.
    #[arg(long, value_enum, default_value_t = HeaderArg::Auto)]
    pub header: HeaderArg,
}

pub fn run(args: Args) -> CliResult {
    check_output(
        "--out",
        &args.out,
        &[
            Input {
                option: "--model",
                path: &args.model,
            },
            Input {
                option: "--data",
                path: &args.data,
            },
        ],
    )?;
    let model = ModelFile::load(&args.model)?;
    warn_if_not_trustworthy(&model, &args.model);
    let options = ApplyOptions {
        with_target: false,
        missing: MissingPolicy::Drop,
        unseen: Unseen::Refuse,
        format: csv_format(args.delimiter, args.header),
    };
    let loaded = model.schema.load(&args.data, &options)?;
    let mut rng = match args.seed {
        Some(s) => Noise::seeded(s),
        None => Noise::os(),
    };
    let preds = model.predict(&loaded.dataset, &mut rng)?;
    if loaded.report.dropped > 0 {
        eprintln!(
            "{}: {} of {} rows have a missing value in a column the model reads: their prediction is empty",
            args.data.display(),
            loaded.report.dropped,
            loaded.report.rows_in_file
        );
    }
    let write_error =
        |e: String| CliError::BadInput(format!("cannot write {}: {e}", args.out.display()));
    if FileFormat::of(&args.out) == FileFormat::Parquet {
        write_parquet(
            &args.out,
            prediction_columns(&preds, &loaded.report.rows, loaded.report.rows_in_file),
        )
        .map_err(|e| write_error(e.to_string()))?;
    } else {
        write_predictions(
            &args.out,
            &preds,
            &loaded.report.rows,
            loaded.report.rows_in_file,
        )
        .map_err(|e| write_error(e.to_string()))?;
    }
    eprintln!(
        "wrote {} ({} rows)",
        args.out.display(),
        loaded.report.rows_in_file
    );
    Ok(())
}

/// Write one output row per input row: `rows[j]` is the input row of prediction `j`; the other
/// input rows get empty fields. Atomic: a failed write leaves any previous file intact.
fn write_predictions(
    out: &std::path::Path,
    preds: &Predictions,
    rows: &[usize],
    rows_in_file: usize,
) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(AtomicFile::create(out)?);
    let mut header = vec!["prediction".to_string()];
    if preds.probabilities.is_some() {
        header.extend(preds.class_labels.iter().map(|l| format!("p_{l}")));
    }
    w.write_record(&header)?;
    let width = header.len();
    let empty = vec![String::new(); width];
    let mut next = 0;
    for input_row in 0..rows_in_file {
        if rows.get(next) != Some(&input_row) {
            w.write_record(&empty)?;
            continue;
        }
        let mut rec = Vec::with_capacity(width);
        match &preds.values {
            Some(v) => rec.push(v[next].to_string()),
            None => rec.push(preds.labels[next].clone()),
        }
        if let Some(p) = &preds.probabilities {
            rec.extend(p.row(next).iter().map(|v| v.clamp(0.0, 1.0).to_string()));
        }
        w.write_record(&rec)?;
        next += 1;
    }
    w.into_inner().map_err(|e| e.into_error())?.commit()?;
    Ok(())
}

/// The output columns for a Parquet file: as [`write_predictions`] writes them, with nulls for
/// rows without a prediction and numbers as numbers.
fn prediction_columns(
    preds: &Predictions,
    rows: &[usize],
    rows_in_file: usize,
) -> Vec<(String, OutColumn)> {
    // For each input row, its prediction's index (None: a row with a missing value).
    let mut at = vec![None; rows_in_file];
    for (j, &r) in rows.iter().enumerate() {
        at[r] = Some(j);
    }
    let mut columns = vec![(
        "prediction".to_string(),
        match &preds.values {
            Some(v) => OutColumn::Number(at.iter().map(|j| j.map(|j| v[j])).collect()),
            None => OutColumn::Text(
                at.iter()
                    .map(|j| j.map(|j| preds.labels[j].clone()))
                    .collect(),
            ),
        },
    )];
    if let Some(p) = &preds.probabilities {
        for (k, l) in preds.class_labels.iter().enumerate() {
            columns.push((
                format!("p_{l}"),
                OutColumn::Number(
                    at.iter()
                        .map(|j| j.map(|j| p[[j, k]].clamp(0.0, 1.0)))
                        .collect(),
                ),
            ));
        }
    }
    columns
}

/// Warnings on stderr for a model that is not private (seeded noise) or whose integrity could
/// not be checked (a version-1 file).
pub fn warn_if_not_trustworthy(model: &ModelFile, path: &std::path::Path) {
    if !model.ledger.is_private() {
        eprintln!(
            "warning: {} is NOT PRIVATE: its noise is reproducible from the seed \
             (--insecure-seeded-noise)",
            path.display()
        );
    }
    if !model.is_verified() {
        eprintln!(
            "warning: {} is a version-1 model file without a digest: its integrity cannot be checked",
            path.display()
        );
    }
}
