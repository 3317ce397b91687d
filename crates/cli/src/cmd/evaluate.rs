//! `dpfair evaluate`: accuracy (or MSE) and fairness of a predictions file against the true
//! labels and groups of a data file, overall and per group.
//!
//! Two modes. Without `--epsilon` the figures are **exact on the private rows**: for the data
//! owner's own screen, not for publication (the output says so). With `--epsilon E` the report is
//! private ([`private`]; docs/evaluation.md): one charged release of the group × label ×
//! prediction counts, every figure derived from it with an interval, and the ledger.
//!
//! The two files are aligned row by row (as `dpfair predict` writes them). Rows with a missing
//! target or group, or an empty prediction, are left out and counted. The fairness figure is the
//! task's: binary, the demographic parity difference (max − min positive rate over groups);
//! multi-class, U = max over classes and pairs of groups of the gap in prediction rates;
//! regression, the largest two-sample KS distance between groups' predictions. With `p_<label>`
//! columns, the expected versions (over a randomized classifier's randomness) follow.

use crate::cmd::common::{HeaderArg, TaskArg, csv_format, parse_delimiter};
use crate::error::{CliError, CliResult};
use dpfair_data::{
    CsvFormat, DataError, HeaderMode, LoadOptions, MissingPolicy, Table, Target, TaskKind,
};
use dpfair_fairness as fm;
use ndarray::Array2;
use std::path::PathBuf;

pub(crate) mod private;

/// The line after the task in an exact evaluation's output.
pub const EXACT_BANNER: &str = "EXACT evaluation on the private rows: NOT differentially private, \
not for publication (use --epsilon E for a private report with intervals)";

const AFTER_LONG_HELP: &str = "\
Without --epsilon (exact mode): every figure is computed exactly on the rows, so it is NOT \
private: for the data owner, not for publication. Prints the rows evaluated, then utility and \
fairness: binary, accuracy, demographic-parity \
difference and ratio, equal-opportunity difference; multi-class, accuracy and the unfairness U \
(max over classes and group pairs); regression, MSE and the KS statistical-parity distance. With \
`p_<label>` columns the expected (randomised) metrics too; then a per-group table. The predictions \
file has one row per data row, in order, as `dpfair predict` writes it.

With --epsilon E (private mode, binary classification): the counts of group x true label x \
prediction are released once with exact discrete Laplace noise (one ledger entry of pure ε = E; \
sensitivity 2 for replace-one neighbours, 1 with --add-remove), and everything is derived from \
them: per group and overall the count, accuracy, selection rate, true and false positive rates; \
the demographic-parity, equalized-odds and equal-opportunity differences (max - min over groups) \
and ratios (min / max), as Fairlearn defines them. Each figure has an interval at --level \
(default 95%) that covers both the noise and the sampling of the evaluation rows (a conservative \
method: measured coverage is above the level; docs/evaluation.md). The groups and the two classes must be \
declared (--groups, --classes, or --model MODEL.json: the model's schema) so that nothing about the report's shape comes from the private \
rows; a declared group without rows gets the interval [0, 1]. No exact count is printed.

Examples:
  dpfair evaluate --data test.csv --predictions pred.csv --target income --sensitive sex
  dpfair evaluate --data test.csv --predictions pred.csv --target income --sensitive sex \\
    --epsilon 1 --groups Female,Male --classes '<=50K,>50K' --out report.json
  dpfair evaluate --data test.csv --predictions pred.csv --target income \\
    --epsilon 1 --model model.json --add-remove --level 0.9";

#[derive(clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The data file with the true target and the sensitive attribute (CSV, Parquet or Arrow
    /// IPC, by extension).
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// The predictions file, one row per data row (as written by `dpfair predict`).
    #[arg(long, value_name = "PRED.csv")]
    pub predictions: PathBuf,
    /// The target column of --data.
    #[arg(long, value_name = "COL")]
    pub target: String,
    /// The sensitive-attribute column of --data [default: none: accuracy or error only, no
    /// fairness measures].
    #[arg(long, value_name = "COL")]
    pub sensitive: Option<String>,
    /// The task [default: inferred from the target as `fit` does].
    #[arg(long, value_enum)]
    pub task: Option<TaskArg>,
    /// The positive label of a binary target [default: the larger value]. With a test file
    /// whose target has one class, the other class is taken from the predictions.
    #[arg(long, value_name = "LABEL")]
    pub positive: Option<String>,
    /// Declare the target's classes, in order (e.g. `0,1`): a test file may then hold only some
    /// of them, and a value outside them is an error.
    #[arg(long, value_name = "C,...", value_delimiter = ',')]
    pub classes: Option<Vec<String>>,
    /// Field delimiter of --data: `,` `;` `tab` or one character [default: detected].
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter)]
    pub delimiter: Option<u8>,
    /// Whether the first row of --data is a header.
    #[arg(long, value_enum, default_value_t = HeaderArg::Auto)]
    pub header: HeaderArg,
    /// Declare the sensitive attribute's groups, in order (e.g. `Female,Male`): a value
    /// outside them is an error, and a declared group may have no rows. Required with
    /// --epsilon (the groups must be public, not read from the private rows).
    #[arg(long, value_name = "G,...", value_delimiter = ',')]
    pub groups: Option<Vec<String>>,
    /// Private mode: release the group report with privacy budget ε = E (pure ε-DP, one
    /// ledger entry; > 0, finite). Needs --sensitive, --groups and --classes (binary), or a
    /// --model whose schema declares them.
    #[arg(long, value_name = "E")]
    pub epsilon: Option<f64>,
    /// The level of the private report's intervals, in (0, 1).
    #[arg(long, value_name = "L", default_value_t = dpfair_fairness::DEFAULT_LEVEL, requires = "epsilon")]
    pub level: f64,
    /// Certify the private report for add/remove-one neighbours (histogram sensitivity 1)
    /// instead of replace-one (sensitivity 2, dpfair's default).
    #[arg(long, requires = "epsilon")]
    pub add_remove: bool,
    /// Private mode: take the sensitive column, its groups and the two classes from this model
    /// file's public schema (flags given explicitly take precedence).
    #[arg(long, value_name = "MODEL.json", requires = "epsilon")]
    pub model: Option<PathBuf>,
    /// Write the private report and its ledger as JSON to this file.
    #[arg(long, value_name = "REPORT.json", requires = "epsilon")]
    pub out: Option<PathBuf>,
    /// INSECURE, NOT PRIVATE: draw the release noise from a ChaCha20 stream seeded with N (tests,
    /// simulations). The report and its ledger say NOT PRIVATE.
    #[arg(long, value_name = "N", requires = "epsilon")]
    pub insecure_seeded_noise: Option<u64>,
}

pub fn run(args: Args) -> CliResult {
    if let Some(epsilon) = args.epsilon {
        return private::run(&args, epsilon);
    }
    let mut options = LoadOptions {
        target: Some(args.target.clone()),
        sensitive: args.sensitive.clone(),
        features: Some(Vec::new()),
        task: args.task.map(Into::into),
        positive: args.positive.clone(),
        classes: args.classes.clone(),
        groups: args.groups.clone(),
        missing: MissingPolicy::Drop,
        format: csv_format(args.delimiter, args.header),
        ..Default::default()
    };
    let pred_table = read_predictions(&args.predictions)?;
    let loaded = match dpfair_data::load(&args.data, &options) {
        Err(DataError::OneClassTarget { value, .. })
            if args.positive.is_some() && args.classes.is_none() =>
        {
            // A test file may hold one class: the binary classes are the target's value, the
            // positive label and the predicted labels.
            options.classes = Some(binary_classes_from_predictions(
                &value,
                args.positive.as_deref().unwrap_or_default(),
                &pred_table,
            )?);
            dpfair_data::load(&args.data, &options)?
        }
        other => other?,
    };
    let pred_name = args.predictions.display().to_string();
    if pred_table.n_rows() != loaded.report.rows_in_file {
        return Err(CliError::BadInput(format!(
            "{pred_name} has {} rows, {} has {}: predictions must align with the data rows",
            pred_table.n_rows(),
            args.data.display(),
            loaded.report.rows_in_file
        )));
    }
    let pcol = pred_table.column_index("prediction", "--predictions")?;
    let target_col = loaded.schema.target.as_ref().expect("target requested");
    let labels = target_col.encoding.labels().to_vec();
    let groups_all = loaded.dataset.groups.as_ref();
    let target = loaded.dataset.target.as_ref().expect("target requested");

    // Keep rows that have a prediction; `keep[j]` indexes the loaded data set.
    let mut keep = Vec::new();
    let mut no_prediction = 0;
    for (j, &r) in loaded.report.rows.iter().enumerate() {
        if dpfair_data::table::is_missing(pred_table.get(r, pcol)) {
            no_prediction += 1;
        } else {
            keep.push(j);
        }
    }
    if keep.is_empty() {
        return Err(CliError::BadInput(format!(
            "no row has both a prediction in {pred_name} and a target and group in {}",
            args.data.display()
        )));
    }
    let groups: Option<(Vec<u32>, &[String])> =
        groups_all.map(|g| (keep.iter().map(|&j| g.codes[j]).collect(), &g.names[..]));
    let task = target.task();
    match &args.sensitive {
        Some(sensitive) => println!(
            "task: {task}; target `{}`, sensitive `{sensitive}`",
            target_col.name
        ),
        None => println!(
            "task: {task}; target `{}`; no --sensitive: no fairness measures",
            target_col.name
        ),
    }
    println!("{EXACT_BANNER}");
    if task == TaskKind::Binary {
        println!("positive label: {}", labels[1]);
    }
    println!(
        "rows evaluated: {} of {} (left out: {} with a missing target or group, {} without a prediction)",
        keep.len(),
        loaded.report.rows_in_file,
        loaded.report.dropped,
        no_prediction
    );
    let file_row = |j: usize| loaded.report.rows[j];
    let report = match target {
        Target::Real(y) => {
            let y_true: Vec<f64> = keep.iter().map(|&j| y[j]).collect();
            let mut y_pred = Vec::with_capacity(keep.len());
            for &j in &keep {
                let v = pred_table.get(file_row(j), pcol);
                let x: f64 = v
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite())
                    .ok_or_else(|| {
                        CliError::BadInput(format!(
                            "{pred_name}: {}, column `prediction`: `{v}` is not a finite number",
                            pred_table.position(file_row(j))
                        ))
                    })?;
                y_pred.push(x);
            }
            let mse = fm::mse(&y_true, &y_pred)?;
            println!("mse: {mse:.6}");
            let mean = y_true.iter().sum::<f64>() / y_true.len() as f64;
            let constant = fm::mse(&y_true, &vec![mean; y_true.len()])?;
            println!("constant_mse (always predicting the mean target here): {constant:.6}");
            if mse >= constant {
                println!("note: the model is no better than the constant predictor");
            }
            let Some((groups, names)) = &groups else {
                return Ok(());
            };
            println!(
                "ks_statistical_parity (max over pairs of groups): {:.6}",
                fm::ks_statistical_parity(&y_pred, groups)?
            );
            fm::GroupReport::regression(&y_true, &y_pred, groups, names)?
        }
        _ => {
            let classes = target.classes().expect("classification target");
            let y_true: Vec<u32> = keep.iter().map(|&j| classes[j]).collect();
            let mut y_pred = Vec::with_capacity(keep.len());
            for &j in &keep {
                let v = pred_table.get(file_row(j), pcol);
                y_pred.push(label_code(&labels, v).ok_or_else(|| {
                    CliError::BadInput(format!(
                        "{pred_name}: {}, column `prediction`: `{v}` is not a class of target `{}` ({})",
                        pred_table.position(file_row(j)),
                        target_col.name,
                        labels.join(", ")
                    ))
                })?);
            }
            let probs = read_probabilities(&pred_table, &pred_name, &labels, &keep, &file_row)?;
            let acc = fm::accuracy(&y_true, &y_pred)?;
            println!("accuracy: {acc:.6}");
            let majority = majority_accuracy(&y_true, labels.len());
            println!(
                "majority_class_accuracy (always predicting the most frequent label here): {majority:.6}"
            );
            if acc <= majority {
                println!("note: the model is no better than predicting the majority class");
            }
            let Some((groups, names)) = &groups else {
                if let Some(p) = &probs {
                    println!(
                        "expected_accuracy (from p_ columns): {:.6}",
                        fm::expected_accuracy(p.view(), &y_true)?
                    );
                }
                return Ok(());
            };
            let (groups, names) = (&groups[..], *names);
            if task == TaskKind::Binary {
                let yt: Vec<u8> = y_true.iter().map(|&c| c as u8).collect();
                let yp: Vec<u8> = y_pred.iter().map(|&c| c as u8).collect();
                println!(
                    "demographic_parity_difference (max - min positive rate): {:.6}",
                    fm::demographic_parity_difference(&yp, groups)?
                );
                println!(
                    "demographic_parity_ratio (min / max positive rate): {:.6}",
                    fm::demographic_parity_ratio(&yp, groups)?
                );
                match fm::equal_opportunity_difference(&yt, &yp, groups) {
                    Ok(v) => println!("equal_opportunity_difference: {v:.6}"),
                    Err(e) => println!("equal_opportunity_difference: n/a ({e})"),
                }
                if let Some(p) = &probs {
                    let p_pos: Vec<f64> = p.column(1).to_vec();
                    println!(
                        "expected_accuracy (from p_ columns): {:.6}",
                        fm::expected_accuracy(p.view(), &y_true)?
                    );
                    println!(
                        "expected_demographic_parity_difference (from p_ columns): {:.6}",
                        fm::expected_demographic_parity_difference(&p_pos, groups)?
                    );
                }
                println!();
                fm::GroupReport::binary(&yt, &yp, groups, names)?
            } else {
                println!(
                    "multiclass_unfairness U (max over classes and group pairs): {:.6}",
                    fm::multiclass_unfairness(&y_pred, labels.len(), groups)?
                );
                if let Some(p) = &probs {
                    println!(
                        "expected_accuracy (from p_ columns): {:.6}",
                        fm::expected_accuracy(p.view(), &y_true)?
                    );
                    println!(
                        "expected_multiclass_unfairness (from p_ columns): {:.6}",
                        fm::expected_multiclass_unfairness(p.view(), groups)?
                    );
                }
                println!();
                fm::GroupReport::multiclass(&y_true, &y_pred, &labels, groups, names)?
            }
        }
    };
    println!("per group:");
    print!("{}", report.render());
    Ok(())
}

/// The two classes `[negative, positive]` of a binary evaluation whose target column holds the
/// single value `seen`: the positive label, and the one other label among `seen` and the
/// predictions (`(not P)` when every label is the positive one).
fn binary_classes_from_predictions(
    seen: &str,
    positive: &str,
    predictions: &Table,
) -> CliResult<Vec<String>> {
    let mut labels = vec![positive.to_string()];
    let col = predictions.column_index("prediction", "--predictions")?;
    let candidates = std::iter::once(seen.to_string()).chain(
        (0..predictions.n_rows())
            .map(|r| predictions.get(r, col).to_string())
            .filter(|v| !dpfair_data::table::is_missing(v)),
    );
    for v in candidates {
        if label_code(&labels, &v).is_none() {
            labels.push(v);
        }
        if labels.len() > 2 {
            return Err(CliError::BadInput(format!(
                "--positive {positive}: the target and the predictions hold more than two labels ({}); a binary evaluation needs two, or give --classes",
                labels.join(", ")
            )));
        }
    }
    let negative = labels
        .get(1)
        .cloned()
        .unwrap_or_else(|| format!("(not {positive})"));
    Ok(vec![negative, positive.to_string()])
}

/// The class code of a predicted label: exact match, else numeric equality (`1` and `1.0`).
fn label_code(labels: &[String], v: &str) -> Option<u32> {
    if let Some(c) = labels.iter().position(|l| l == v) {
        return Some(c as u32);
    }
    let x: f64 = v.parse().ok()?;
    labels
        .iter()
        .position(|l| l.parse::<f64>().ok() == Some(x))
        .map(|c| c as u32)
}

/// The `p_<label>` columns for the kept rows, when every class has one.
fn read_probabilities(
    table: &Table,
    name: &str,
    labels: &[String],
    keep: &[usize],
    file_row: &dyn Fn(usize) -> usize,
) -> CliResult<Option<Array2<f64>>> {
    let cols: Option<Vec<usize>> = labels
        .iter()
        .map(|l| table.columns.iter().position(|c| *c == format!("p_{l}")))
        .collect();
    let Some(cols) = cols else {
        return Ok(None);
    };
    let mut p = Array2::zeros((keep.len(), labels.len()));
    for (i, &j) in keep.iter().enumerate() {
        let mut sum = 0.0;
        for (k, &c) in cols.iter().enumerate() {
            let v = table.get(file_row(j), c);
            // Rounding in the writer's arithmetic may pass 0 or 1 by an ulp or so (a mixture's
            // average, `1.0000000000000007`): within 10⁻⁹ such a value is read as 0 or 1.
            p[[i, k]] = v
                .parse()
                .ok()
                .filter(|x: &f64| (-1e-9..=1.0 + 1e-9).contains(x))
                .map(|x: f64| x.clamp(0.0, 1.0))
                .ok_or_else(|| {
                    CliError::BadInput(format!(
                        "{name}: {}, column `{}`: `{v}` is not a probability",
                        table.position(file_row(j)),
                        table.columns[c]
                    ))
                })?;
            sum += p[[i, k]];
        }
        // The same tolerance as the metrics' own check (dpfair_fairness), reported here with the
        // file and its 1-based row.
        if (sum - 1.0).abs() > 1e-6 {
            return Err(CliError::BadInput(format!(
                "{name}: {}: the p_ columns sum to {sum}, not 1",
                table.position(file_row(j))
            )));
        }
    }
    Ok(Some(p))
}

/// The accuracy of always predicting the most frequent of `k` classes in `y`.
fn majority_accuracy(y: &[u32], k: usize) -> f64 {
    let mut counts = vec![0usize; k.max(1)];
    for &c in y {
        if let Some(n) = counts.get_mut(c as usize) {
            *n += 1;
        }
    }
    counts.into_iter().max().unwrap_or(0) as f64 / y.len().max(1) as f64
}

/// The predictions file (`--predictions`: CSV with a header, or Parquet / Arrow IPC), as
/// `dpfair predict` writes it.
fn read_predictions(path: &std::path::Path) -> CliResult<Table> {
    Ok(Table::read_any(
        path,
        &CsvFormat {
            delimiter: None,
            header: HeaderMode::Present,
        },
    )?)
}
