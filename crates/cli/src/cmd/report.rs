//! `dpfair report MODEL.json --out report.html`: the release report of one model (issue #44;
//! docs/evaluation.md, "The release report"). One self-contained HTML file and a JSON file with
//! the same content, both built and rendered by the library
//! ([`dpfair::release_report::ReleaseReport`], as Python's `Model.report` does): the method, the
//! public schema, the ledger and its total, the digest, the held-out check, the fit's own fairness
//! estimate, and with `--evaluate DATA --epsilon E` the private report of the model's
//! predictions on DATA (by its task: group report, multi-class report, or MSE and KS) with the
//! ledger of that release.
//!
//! Privacy: nothing in the report is computed on the evaluation rows except through the one
//! charged release of [`dpfair::release_report::Evaluation::release`] (in a session made as
//! `dpfair evaluate --epsilon` makes its own: [`super::evaluate::private::session`]). Without
//! `--epsilon` the evaluation data is not read at all.

use crate::cmd::common::{HeaderArg, Input, check_output, csv_format, parse_delimiter};
use crate::cmd::evaluate::private::{ReleaseOptions, check_budget, session};
use crate::error::{CliError, CliResult};
use dpfair::model::ModelFile;
use dpfair::release_report::{AuditSection, Declared, Evaluation, ReleaseReport};
use dpfair_data::{ApplyOptions, MissingPolicy, Unseen};
use std::path::{Path, PathBuf};

const AFTER_LONG_HELP: &str = "\
Writes one HTML file (--out; self-contained: no network, no scripts, printable) and one JSON file \
with the same content (--json, default: --out with the extension .json) about a model written by \
`dpfair fit`:

  * the method and its paper (the summary of `dpfair fit METHOD --help`; docs/choosing.md);
  * the public schema the model carries: feature columns, the sensitive attribute and its
    groups, the target and its classes (public: declared or part of the model, no ledger entry);
  * the ledger: every release (label, mechanism, sensitivity, noise scale, cost, relation,
    composition), the total with its rule, the noise source and whether the total is certified;
  * the model file's sha256 digest and whether it verified;
  * the held-out check's outcome and the fit's own private fairness estimate, where the fit has
    them (both computed from released values).

With --evaluate DATA --epsilon E, the model predicts DATA's rows and a private report of those \
predictions is released at ε = E in all (docs/evaluation.md), each figure with an interval at \
--level and plotted with it:

  * a binary classifier: the private group report (exact discrete Laplace noise on the group x \
label x prediction counts, as `dpfair evaluate --epsilon`): accuracy, selection rate, TPR and \
FPR per group and overall, the demographic-parity, equalized-odds and equal-opportunity \
differences and ratios;
  * DP2DP (even on a binary target) and multi-class models: one release of the same counts; \
accuracy, each class's selection rate per group and DP2DP's unfairness U;
  * regressors (dp-linear, fair-regression): the MSE (Laplace noise on the sum of squared \
errors, ε/3) and the binned KS distance between groups (a group x bin histogram, 2ε/3), over \
the target's public range: the model's own, or --target-range LO:HI for a model without one.

With --audit AUDIT.json (the output of `dpfair audit METHOD --json` for the model's method; \
another method is refused, naming both), the report shows the audit's empirical ε lower bounds \
against the claimed ε, with its confidence, planted bugs and settings, under a heading that \
says it is an audit of the method on generated neighbours, not of this model's data.

The evaluation's ledger is shown as a separate section, \"the evaluation's release\". The evaluation rows are \
private: without --epsilon they are not read, and the report says that an evaluation needs \
--epsilon. The groups and classes are the model's (its public schema); for a model without a \
sensitive attribute (LPCT) name them with --sensitive COL --groups G1,G2,... (declared, never \
read from the rows; a row of another group is refused).

Examples:
  dpfair report model.json --out report.html
  dpfair report model.json --evaluate test.csv --epsilon 1 --out report.html --json report.json
  dpfair report lpct.json --evaluate test.csv --epsilon 1 --sensitive sex --groups F,M --out r.html
  dpfair audit cdp-fair --json > audit.json && dpfair report cdp.json --audit audit.json --out r.html";

#[derive(clap::Args)]
#[command(after_long_help = AFTER_LONG_HELP)]
pub struct Args {
    /// The model file written by `dpfair fit` (its digest is checked).
    #[arg(value_name = "MODEL.json")]
    pub model: PathBuf,
    /// Where to write the HTML report.
    #[arg(long, value_name = "REPORT.html")]
    pub out: PathBuf,
    /// Where to write the JSON report [default: --out with the extension .json].
    #[arg(long, value_name = "REPORT.json")]
    pub json: Option<PathBuf>,
    /// Private rows to evaluate the model on (CSV, Parquet or Arrow IPC) with the model's
    /// feature, target and sensitive columns, found by name. Needs --epsilon.
    #[arg(long, value_name = "DATA")]
    pub evaluate: Option<PathBuf>,
    /// The evaluation's privacy budget: the group report is one release of pure ε = E (> 0,
    /// finite), charged to its own ledger. Without it, --evaluate's rows are not read.
    #[arg(long, value_name = "E", requires = "evaluate")]
    pub epsilon: Option<f64>,
    /// The target column of --evaluate [default: the model's]; must be the model's.
    #[arg(long, value_name = "COL", requires = "evaluate")]
    pub target: Option<String>,
    /// The sensitive column of --evaluate [default: the model's]; must be the model's, or, for
    /// a model without one, the evaluation's (with --groups).
    #[arg(long, value_name = "COL", requires = "evaluate")]
    pub sensitive: Option<String>,
    /// The evaluation's groups, declared, for a model without a sensitive attribute (with
    /// --sensitive): the report's rows; a row of another group is refused.
    #[arg(
        long,
        value_name = "G1,G2,...",
        value_delimiter = ',',
        requires = "sensitive"
    )]
    pub groups: Option<Vec<String>>,
    /// A regressor's public target range LO:HI, for a model that carries none (predictions and
    /// targets are clipped to it).
    #[arg(long, value_name = "LO:HI", value_parser = crate::cmd::compare::parse_range,
          allow_hyphen_values = true, requires = "evaluate")]
    pub target_range: Option<[f64; 2]>,
    /// The level of the evaluation's intervals, in (0, 1).
    #[arg(long, value_name = "L", default_value_t = dpfair_fairness::DEFAULT_LEVEL, requires = "epsilon")]
    pub level: f64,
    /// Certify the evaluation for add/remove-one neighbours (sensitivity 1) instead of
    /// replace-one (sensitivity 2, dpfair's default).
    #[arg(long, requires = "epsilon")]
    pub add_remove: bool,
    /// Field delimiter of --evaluate: `,` `;` `tab` or one character [default: detected].
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter, requires = "evaluate")]
    pub delimiter: Option<u8>,
    /// Whether the first row of --evaluate is a header.
    #[arg(long, value_enum, default_value_t = HeaderArg::Auto)]
    pub header: HeaderArg,
    /// The output of `dpfair audit METHOD --json` for the model's method: its ε lower bounds
    /// are shown against the claimed ε.
    #[arg(long, value_name = "AUDIT.json")]
    pub audit: Option<PathBuf>,
    /// INSECURE, NOT PRIVATE: seed the evaluation's release noise with N (tests). The report
    /// says NOT PRIVATE.
    #[arg(long, value_name = "N", requires = "epsilon")]
    pub insecure_seeded_noise: Option<u64>,
}

pub fn run(args: Args) -> CliResult {
    let json = args
        .json
        .clone()
        .unwrap_or_else(|| args.out.with_extension("json"));
    let mut inputs = vec![Input {
        option: "MODEL.json",
        path: &args.model,
    }];
    if let Some(data) = &args.evaluate {
        inputs.push(Input {
            option: "--evaluate",
            path: data,
        });
    }
    if let Some(audit) = &args.audit {
        inputs.push(Input {
            option: "--audit",
            path: audit,
        });
    }
    check_output("--out", &args.out, &inputs)?;
    check_output("--json", &json, &inputs)?;
    if json == args.out {
        return Err(CliError::BadInput(format!(
            "--json {}: the same file as --out; give another name",
            json.display()
        )));
    }
    if let Some(epsilon) = args.epsilon {
        check_budget(epsilon, args.level)?;
    }
    let file = ModelFile::load(&args.model)?;
    let audit = args.audit.as_deref().map(|p| audit(&file, p)).transpose()?;
    let declared = declared(&file, &args)?;
    if args.evaluate.is_some() {
        check_evaluable(&file, &args, &declared)?;
    }
    let evaluation = match (&args.evaluate, args.epsilon) {
        (None, _) => Evaluation::NotRequested,
        (Some(_), None) => {
            eprintln!(
                "note: --evaluate without --epsilon: the evaluation rows were not read (an \
                 evaluation of private rows needs --epsilon E, a charged release)"
            );
            Evaluation::NeedsEpsilon
        }
        (Some(data), Some(epsilon)) => evaluate(&file, &args, &declared, data, epsilon)?,
    };
    let mut report = ReleaseReport::new(&file, evaluation);
    if let Some(audit) = audit {
        report = report.with_audit(audit);
    }
    write(&json, "--json", report.to_json()?.as_bytes())?;
    write(&args.out, "--out", report.to_html().as_bytes())?;
    eprintln!("wrote {} and {}", args.out.display(), json.display());
    Ok(())
}

/// `e` as a bad-input message that starts with `prefix` (the flag and the file).
fn named(prefix: String) -> impl FnOnce(dpfair::Error) -> CliError {
    move |e| match CliError::from(e) {
        CliError::BadInput(m) => CliError::BadInput(format!("{prefix}: {m}")),
        other => other,
    }
}

/// What the flags declare beyond the model's schema: the evaluation's groups (`--sensitive`
/// with `--groups`, for a model without a sensitive attribute) and `--target-range`.
fn declared(file: &ModelFile, args: &Args) -> CliResult<Declared> {
    let sensitive = match (&args.groups, &args.sensitive, &file.schema.sensitive) {
        (Some(groups), Some(column), None) => Some((column.clone(), groups.clone())),
        (Some(_), _, Some(own)) => {
            return Err(CliError::BadInput(format!(
                "--groups: the model declares its own groups (sensitive attribute `{}`); the \
                 evaluation uses them, so leave out --groups",
                own.name
            )));
        }
        _ => None,
    };
    Ok(Declared {
        sensitive,
        target_range: args.target_range,
    })
}

/// Checks, from the model's public schema and the declared options alone, that `--evaluate`
/// can report on it ([`Evaluation::check`]) and that `--target` and `--sensitive` (when given)
/// name its columns.
fn check_evaluable(file: &ModelFile, args: &Args, declared: &Declared) -> CliResult {
    let schema = Evaluation::check(file, declared)
        .map_err(named(format!("--evaluate ({})", args.model.display())))?;
    let target_name = schema.target.as_ref().map(|t| t.name.as_str());
    let sensitive_name = schema.sensitive.as_ref().map(|s| s.name.as_str());
    for (flag, given, own) in [
        ("--target", &args.target, target_name),
        ("--sensitive", &args.sensitive, sensitive_name),
    ] {
        if let Some(given) = given
            && Some(given.as_str()) != own
        {
            return Err(CliError::BadInput(format!(
                "{flag} {given}: the model's column is `{}`; the evaluation reads the model's \
                 columns",
                own.unwrap_or_default()
            )));
        }
    }
    Ok(())
}

/// The private report of the model's predictions on `data`: the rows are read with the model's
/// schema (and the declared groups) and released ([`Evaluation::release`]) in a session of
/// budget ε.
fn evaluate(
    file: &ModelFile,
    args: &Args,
    declared: &Declared,
    data: &Path,
    epsilon: f64,
) -> CliResult<Evaluation> {
    let options = ApplyOptions {
        with_target: true,
        missing: MissingPolicy::Drop,
        unseen: Unseen::Refuse,
        format: csv_format(args.delimiter, args.header),
    };
    let schema = Evaluation::check(file, declared)?;
    let loaded = schema.load(data, &options)?;
    let mut session = session(&ReleaseOptions {
        epsilon,
        level: args.level,
        add_remove: args.add_remove,
        insecure_seeded_noise: args.insecure_seeded_noise,
    })?;
    Evaluation::release(
        &mut session,
        file,
        declared,
        &loaded.dataset,
        epsilon,
        args.level,
    )
    .map_err(named(format!("--evaluate {}", data.display())))
}

/// The audit in `path` (`dpfair audit METHOD --json`), checked to be of the model's method.
fn audit(file: &ModelFile, path: &Path) -> CliResult<AuditSection> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::BadInput(format!("--audit {}: {e}", path.display())))?;
    AuditSection::from_json(&text, &file.method, &format!("--audit {}", path.display()))
        .map_err(|e| CliError::BadInput(e.to_string().replace("invalid data: ", "")))
}

/// Writes `bytes` to `path` atomically; an error names the flag.
fn write(path: &Path, flag: &str, bytes: &[u8]) -> CliResult {
    dpfair_data::output::write_atomic(path, bytes)
        .map_err(|e| CliError::BadInput(format!("{flag} {}: cannot write it: {e}", path.display())))
}
