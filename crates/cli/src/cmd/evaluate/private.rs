//! `dpfair evaluate --epsilon E`: the private group report (docs/evaluation.md). The counts of
//! declared group × declared class × prediction are released once through
//! [`dpfair::evaluation::private_group_report`] (a session of budget ε certifying the chosen
//! relation, release noise from the OS CSPRNG unless `--insecure-seeded-noise`); the figures
//! and their intervals are post-processing. Nothing printed or written depends on the private
//! rows except through that release: no exact count (not even of rows left out), and a file or
//! group without rows is reported, not refused.

use super::{Args, label_code};
use crate::cmd::common::{Input, SeedArgs, check_output, csv_format};
use crate::error::{CliError, CliResult};
use dpfair::Session;
use dpfair::evaluation::private_group_report;
use dpfair_data::{LoadOptions, MissingPolicy, Target, TaskKind};
use dpfair_fairness::{GroupConfusion, PrivateGroupReport};
use dpfair_privacy::{Ledger, Relation};
use serde::Serialize;

/// The JSON file `--out` writes: what was evaluated (public names), the report, the ledger.
#[derive(Serialize)]
struct ReportFile<'a> {
    kind: &'static str,
    /// False when the noise was seeded (`--insecure-seeded-noise`).
    private: bool,
    data: String,
    predictions: String,
    target: &'a str,
    sensitive: &'a str,
    classes: &'a [String],
    positive_label: &'a str,
    report: &'a PrivateGroupReport,
    ledger: &'a Ledger,
}

/// The parameters of a private report, checked before any data is read.
struct Checked {
    sensitive: String,
    groups: Vec<String>,
    classes: Vec<String>,
}

/// The public declarations `--model` supplies: its sensitive column and groups, and its
/// classes when it is a binary classifier.
type FromModel = (Option<(String, Vec<String>)>, Option<Vec<String>>);

fn from_model(args: &Args) -> CliResult<FromModel> {
    let Some(path) = &args.model else {
        return Ok((None, None));
    };
    let file = dpfair::model::ModelFile::load(path)?;
    let schema = &file.schema;
    let sensitive = schema
        .sensitive
        .as_ref()
        .map(|s| (s.name.clone(), s.levels.clone()));
    let classes = (schema.task() == Some(TaskKind::Binary)).then(|| schema.class_labels().to_vec());
    Ok((sensitive, classes))
}

/// Checks `--epsilon` and `--level` of a private report, before any data is read.
pub(crate) fn check_budget(epsilon: f64, level: f64) -> CliResult {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(CliError::BadInput(format!(
            "--epsilon {epsilon}: the evaluation's privacy budget must be finite and > 0 (e.g. 1)"
        )));
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(CliError::BadInput(format!(
            "--level {level}: the intervals' level must be in (0, 1), e.g. 0.95"
        )));
    }
    Ok(())
}

/// How a private report is released: its budget, level, relation and noise.
pub(crate) struct ReleaseOptions {
    pub epsilon: f64,
    pub level: f64,
    /// Add/remove-one neighbours instead of replace-one.
    pub add_remove: bool,
    /// INSECURE: seed the release noise (`--insecure-seeded-noise`).
    pub insecure_seeded_noise: Option<u64>,
}

/// The session of one private report's release: budget ε (δ = 0) certifying the chosen
/// relation, noise from the OS CSPRNG unless seeded. `dpfair evaluate --epsilon` ([`release`])
/// and `dpfair report --evaluate` both release in one.
pub(crate) fn session(o: &ReleaseOptions) -> CliResult<Session> {
    let relation = if o.add_remove {
        Relation::AddRemove
    } else {
        Relation::Substitution
    };
    let noise = SeedArgs {
        seed: None,
        insecure_seeded_noise: o.insecure_seeded_noise,
    }
    .noise();
    Ok(Session::with_relation(o.epsilon, 0.0, relation)?.with_noise(noise))
}

/// The one charged release of `counts` through [`private_group_report`], in [`session`].
fn release(counts: &GroupConfusion, o: &ReleaseOptions) -> CliResult<(PrivateGroupReport, Ledger)> {
    Ok(private_group_report(
        &mut session(o)?,
        counts,
        o.epsilon,
        o.level,
    )?)
}

fn check(args: &Args, epsilon: f64) -> CliResult<Checked> {
    let bad = |m: String| Err(CliError::BadInput(m));
    check_budget(epsilon, args.level)?;
    let (model_sensitive, model_classes) = from_model(args)?;
    let Some(sensitive) = args
        .sensitive
        .clone()
        .or_else(|| model_sensitive.as_ref().map(|s| s.0.clone()))
    else {
        return bad(
            "--epsilon needs --sensitive COL (or a --model with a sensitive attribute): the \
             private report is per group"
                .into(),
        );
    };
    let groups = args.groups.clone().or_else(|| model_sensitive.map(|s| s.1));
    let groups = match groups {
        Some(g) if g.len() >= 2 => g,
        Some(g) => {
            return bad(format!(
                "--groups: a group report needs at least 2 declared groups, got {}",
                g.len()
            ));
        }
        None => {
            return bad(
                "--epsilon needs --groups G1,G2,... (or --model MODEL.json): the groups of the \
                 sensitive attribute must be declared publicly, not read from the private rows"
                    .into(),
            );
        }
    };
    let classes = match args.classes.clone().or(model_classes) {
        Some(c) if c.len() == 2 => c,
        _ => {
            return bad(
                "--epsilon needs --classes NEG,POS (or a binary --model MODEL.json): the two \
                 labels of the binary target, declared publicly (the private report is for \
                 binary classification)"
                    .into(),
            );
        }
    };
    if args
        .task
        .is_some_and(|t| TaskKind::from(t) != TaskKind::Binary)
    {
        return bad("--task: the private report (--epsilon) is for binary classification".into());
    }
    if let Some(out) = &args.out {
        check_output(
            "--out",
            out,
            &[
                Input {
                    option: "--data",
                    path: &args.data,
                },
                Input {
                    option: "--predictions",
                    path: &args.predictions,
                },
            ],
        )?;
    }
    Ok(Checked {
        sensitive,
        groups,
        classes,
    })
}

pub fn run(args: &Args, epsilon: f64) -> CliResult {
    let c = check(args, epsilon)?;
    let options = LoadOptions {
        target: Some(args.target.clone()),
        sensitive: Some(c.sensitive.clone()),
        features: Some(Vec::new()),
        task: Some(TaskKind::Binary),
        positive: args.positive.clone(),
        classes: Some(c.classes.clone()),
        groups: Some(c.groups.clone()),
        missing: MissingPolicy::Drop,
        format: csv_format(args.delimiter, args.header),
        ..Default::default()
    };
    let loaded = dpfair_data::load(&args.data, &options)?;
    let pred_table = super::read_predictions(&args.predictions)?;
    let pred_name = args.predictions.display().to_string();
    if pred_table.n_rows() != loaded.report.rows_in_file {
        // No row counts in the message: under add/remove they are private.
        return Err(CliError::BadInput(format!(
            "{pred_name} and {} have different numbers of rows: predictions must align with the \
             data rows",
            args.data.display()
        )));
    }
    let pcol = pred_table.column_index("prediction", "--predictions")?;
    let target_col = loaded.schema.target.as_ref().expect("target requested");
    let labels = target_col.encoding.labels().to_vec();
    let Some(Target::Binary(y)) = loaded.dataset.target.as_ref() else {
        return Err(CliError::Internal(
            "a binary load without a binary target".into(),
        ));
    };
    let groups = loaded
        .dataset
        .groups
        .as_ref()
        .ok_or_else(|| CliError::Internal("a load with --sensitive without groups".into()))?;
    // Rows with a prediction; an empty one is left out (and not counted).
    let (mut yt, mut yp, mut gs) = (Vec::new(), Vec::new(), Vec::new());
    for (j, &r) in loaded.report.rows.iter().enumerate() {
        let v = pred_table.get(r, pcol);
        if dpfair_data::table::is_missing(v) {
            continue;
        }
        let code = label_code(&labels, v).ok_or_else(|| {
            CliError::BadInput(format!(
                "{pred_name}: {}, column `prediction`: `{v}` is not one of --classes ({})",
                pred_table.position(r),
                labels.join(", ")
            ))
        })?;
        yt.push(y[j]);
        yp.push(code as u8);
        gs.push(groups.codes[j]);
    }
    let counts = GroupConfusion::from_rows(groups.names.clone(), &yt, &yp, &gs)?;
    let (report, ledger) = release(
        &counts,
        &ReleaseOptions {
            epsilon,
            level: args.level,
            add_remove: args.add_remove,
            insecure_seeded_noise: args.insecure_seeded_noise,
        },
    )?;
    println!(
        "task: binary; target `{}` (positive label {}), sensitive `{}` with declared groups {}",
        target_col.name,
        labels[1],
        c.sensitive,
        c.groups.join(", ")
    );
    if !ledger.is_private() {
        println!("NOT PRIVATE: --insecure-seeded-noise makes the noise reproducible from the seed");
    }
    print!("{}", report.render());
    println!();
    print!("{}", ledger.summary());
    if let Some(out) = &args.out {
        let file = ReportFile {
            kind: "dpfair private group report",
            private: ledger.is_private(),
            data: args.data.display().to_string(),
            predictions: pred_name,
            target: &target_col.name,
            sensitive: &c.sensitive,
            classes: &labels,
            positive_label: &labels[1],
            report: &report,
            ledger: &ledger,
        };
        let text = serde_json::to_string_pretty(&file)
            .map_err(|e| CliError::Internal(format!("the report as JSON: {e}")))?;
        std::fs::write(out, text + "\n").map_err(|e| {
            CliError::BadInput(format!("--out {}: cannot write it: {e}", out.display()))
        })?;
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}
