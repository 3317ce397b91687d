//! `dpfair tune METHOD [FIT OPTIONS] --grid KNOB=V1,V2,…`: a private hyper-parameter search
//! (the library's [`dpfair::tune`]; docs/tuning.md) that spends what one `dpfair fit METHOD`
//! with the same options would: the search's ledger entry, with the theorem named in it, and
//! the constant classes' share.
//!
//! Each candidate is the fit command line with the grid's values added, parsed and checked by
//! the same code as `dpfair fit METHOD`, so every option means what it means there. Only the
//! chosen candidate, its noisy accuracy on the selection rows and the list of candidates are
//! printed and stored: how many runs the search made and the other runs' scores stay secret.

use crate::cmd::fit::pipeline::{common_of, report_bounds, session_for, with_progress};
use crate::cmd::fit::{self, cdp_fair, decoupled, dp_logistic, dp2dp, group_thresholds};
use crate::error::{CliError, CliResult};
use clap::{CommandFactory, FromArgMatches};
use dpfair::Estimator;
use dpfair::tune::{DEFAULT_SELECTION_FRACTION, Search, Tuned, tune};
use dpfair_data::TaskKind;

/// The most candidates a grid may have (a resource bound, checked before any data is read).
pub const MAX_CANDIDATES: usize = 64;

/// Options a grid may not vary: the budget (the search spends one fit's), the fairness level
/// (every candidate is fitted at the same target; the score is accuracy), and the data.
const FIXED: &[&str] = &[
    "epsilon",
    "delta",
    "accounting",
    "alpha",
    "rho",
    "level",
    "constraint",
    "fairness-tolerance",
    "add-remove",
    "substitution",
    "data",
    "target",
    "sensitive",
    "out",
    "seed",
    "bounds",
    "coarse-bounds",
    "bounds-share",
];

#[derive(clap::Args)]
#[command(after_help = "\
Example:
  dpfair tune dp-logistic --data adult.csv --target income --bounds age:17:90 \\
      --epsilon 1 --grid learning-rate=0.1,0.5,2 --grid epochs=10,30 --out model.json

Every combination of the --grid values is a candidate. A secret number of runs each fits one
at about a quarter of ε and scores it by noisy accuracy on held-out selection rows; a fair
candidate's run must also show its parity target met. The best run's model is released only if
it beats the fit rows' most frequent class (released at 15 % of ε) by a margin, else that class
is. The whole search spends what one `dpfair fit METHOD` with the same options would: one entry
for the runs (3 × one run's ε for pure-DP runs, Liu & Talwar; the Rényi-DP lift of Papernot &
Steinke otherwise) and the constant's share. docs/tuning.md has the details. Without --grid, a
default grid per method:
  dp-logistic  learning-rate=0.1,0.5,2 epochs=10,30
  cdp-fair     eta-model=kernel,logistic,dp-sgd
  decoupled    learning-rate=0.1,0.5,2
  dp2dp        pool-fraction=0.15,0.25,0.4
  group-thresholds  table-share=0.15,0.25,0.4
Methods: dp-logistic, cdp-fair, decoupled, dp2dp, group-thresholds (classifiers, replace-one
neighbours).")]
pub struct Args {
    /// KNOB=V1,V2,…: a `dpfair fit METHOD` option (without its --) and the values to try;
    /// repeat for a grid. Not the budget, the fairness level or the data.
    #[arg(long = "grid", value_name = "KNOB=V1,V2,…")]
    grid: Vec<String>,
    /// The share of the rows held out to score the runs.
    #[arg(long, value_name = "F", default_value_t = DEFAULT_SELECTION_FRACTION)]
    selection_fraction: f64,
    /// The mean of the (secret) number of runs [default: twice the candidates, the constant
    /// classes included].
    #[arg(long, value_name = "M")]
    mean_runs: Option<u64>,
    /// The method and its `dpfair fit METHOD` options (`dpfair fit METHOD --help`); the options
    /// above may also come after them.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true,
        value_name = "METHOD [FIT OPTIONS]"
    )]
    fit: Vec<String>,
}

/// A `dpfair fit METHOD …` line, parsed as `dpfair fit` parses it.
#[derive(clap::Parser)]
#[command(name = "dpfair fit")]
struct FitLine {
    #[command(subcommand)]
    method: fit::Method,
}

pub fn run(mut args: Args) -> CliResult {
    let fit_line = take_own_options(&mut args)?;
    let method = fit_line.first().cloned().unwrap_or_default();
    let grid = if args.grid.is_empty() {
        default_grid(&method)?
            .iter()
            .map(|g| g.to_string())
            .collect()
    } else {
        args.grid.clone()
    };
    let lines = candidate_lines(&fit_line, &grid)?;
    let search = Search {
        selection_fraction: args.selection_fraction,
        mean_runs: args.mean_runs,
    };
    let parsed = lines
        .iter()
        .map(|line| parse_line(line))
        .collect::<CliResult<Vec<_>>>()?;
    macro_rules! each {
        ($variant:ident, $module:ident, $task:expr) => {{
            let args: Vec<_> = parsed
                .into_iter()
                .map(|m| match m {
                    fit::Method::$variant(a) => a,
                    _ => unreachable!("every line names the same method"),
                })
                .collect();
            let candidates = args
                .iter()
                .map($module::estimator)
                .collect::<CliResult<Vec<_>>>()?;
            search_and_save(
                common_of!(args[0]),
                $task,
                &candidates,
                &search,
                &grid,
                &lines,
            )
        }};
    }
    match parsed.first() {
        Some(fit::Method::DpLogistic(_)) => each!(DpLogistic, dp_logistic, None),
        Some(fit::Method::CdpFair(_)) => each!(CdpFair, cdp_fair, Some(TaskKind::Binary)),
        Some(fit::Method::Decoupled(_)) => each!(Decoupled, decoupled, Some(TaskKind::Binary)),
        Some(fit::Method::Dp2dp(_)) => each!(Dp2dp, dp2dp, Some(TaskKind::Multiclass)),
        Some(fit::Method::GroupThresholds(_)) => {
            each!(GroupThresholds, group_thresholds, Some(TaskKind::Binary))
        }
        _ => Err(unsupported(&method)),
    }
}

fn unsupported(method: &str) -> CliError {
    CliError::BadInput(format!(
        "dpfair tune {method}: a private search runs dp-logistic, cdp-fair, decoupled, dp2dp or \
         group-thresholds (classifiers fitted centrally)"
    ))
}

/// Moves `--grid`, `--selection-fraction` and `--mean-runs` given after METHOD into `args`;
/// returns the fit line (METHOD and its options).
fn take_own_options(args: &mut Args) -> CliResult<Vec<String>> {
    let mut rest = Vec::new();
    let mut it = std::mem::take(&mut args.fit).into_iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        if !matches!(
            flag.as_str(),
            "--grid" | "--selection-fraction" | "--mean-runs"
        ) {
            rest.push(a);
            continue;
        }
        let value = inline
            .or_else(|| it.next())
            .ok_or_else(|| CliError::BadInput(format!("{flag} needs a value")))?;
        let bad = |e: String| CliError::BadInput(format!("{flag} {value}: {e}"));
        match flag.as_str() {
            "--grid" => args.grid.push(value),
            "--selection-fraction" => {
                args.selection_fraction = value.parse().map_err(|e| bad(format!("{e}")))?
            }
            _ => args.mean_runs = Some(value.parse().map_err(|e| bad(format!("{e}")))?),
        }
    }
    Ok(rest)
}

/// The grid a method is searched over without `--grid` (its `--help` lists them).
fn default_grid(method: &str) -> CliResult<&'static [&'static str]> {
    Ok(match method {
        "dp-logistic" => &["learning-rate=0.1,0.5,2", "epochs=10,30"],
        "cdp-fair" => &["eta-model=kernel,logistic,dp-sgd"],
        "decoupled" => &["learning-rate=0.1,0.5,2"],
        "dp2dp" => &["pool-fraction=0.15,0.25,0.4"],
        "group-thresholds" => &["table-share=0.15,0.25,0.4"],
        _ => return Err(unsupported(method)),
    })
}

/// Every combination of the grid's values, as full `fit` lines (the fit line, then
/// `--knob value` for each knob), in the grid's order (the last knob varies fastest).
fn candidate_lines(fit_line: &[String], grid: &[String]) -> CliResult<Vec<Vec<String>>> {
    let mut lines = vec![fit_line.to_vec()];
    for spec in grid {
        let (knob, values) = spec.split_once('=').ok_or_else(|| {
            CliError::BadInput(format!(
                "--grid {spec}: expected KNOB=V1,V2,… (an option of `dpfair fit METHOD` without \
                 its --)"
            ))
        })?;
        let knob = knob.trim_start_matches("--");
        if FIXED.contains(&knob) {
            return Err(CliError::BadInput(format!(
                "--grid {spec}: --{knob} cannot vary in a search (the search spends one fit's \
                 budget at one fairness level on one data set); give it once among the fit \
                 options"
            )));
        }
        let flag = format!("--{knob}");
        if fit_line
            .iter()
            .any(|a| a == &flag || a.starts_with(&format!("{flag}=")))
        {
            return Err(CliError::BadInput(format!(
                "--grid {spec}: {flag} is also among the fit options; give it in one place"
            )));
        }
        let values: Vec<&str> = values.split(',').filter(|v| !v.is_empty()).collect();
        if values.is_empty() {
            return Err(CliError::BadInput(format!("--grid {spec}: no values")));
        }
        lines = lines
            .into_iter()
            .flat_map(|line| {
                let flag = &flag;
                values.iter().map(move |v| {
                    let mut l = line.clone();
                    l.extend([flag.clone(), v.to_string()]);
                    l
                })
            })
            .collect();
        if lines.len() > MAX_CANDIDATES {
            return Err(CliError::BadInput(format!(
                "--grid: more than {MAX_CANDIDATES} candidates (a resource bound: each is fitted \
                 about twice)"
            )));
        }
    }
    Ok(lines)
}

/// One candidate's line parsed (and its options checked) as `dpfair fit` would.
fn parse_line(line: &[String]) -> CliResult<fit::Method> {
    let command = crate::negative_numbers_as_values(FitLine::command());
    let argv = std::iter::once("dpfair fit".to_string()).chain(line.iter().cloned());
    let matches = command
        .try_get_matches_from(argv)
        .map_err(|e| CliError::BadInput(format!("a candidate `{}`: {e}", line.join(" "))))?;
    Ok(FitLine::from_arg_matches(&matches)
        .map_err(|e| CliError::BadInput(e.to_string()))?
        .method)
}

/// Load the data as `dpfair fit` does, run the search in a session over one fit's declared
/// spend, print what it released and write the model file.
fn search_and_save<E: Estimator>(
    common: fit::pipeline::Common<'_>,
    task: Option<TaskKind>,
    candidates: &[E],
    search: &Search,
    grid: &[String],
    lines: &[Vec<String>],
) -> CliResult {
    common.out.check(&[common.data.input()])?;
    if common.privacy.accounting() == dpfair::model::Accounting::Paper
        || common.privacy.epsilon.is_infinite()
    {
        return Err(CliError::BadInput(
            "a private search needs a finite --epsilon and strict accounting".into(),
        ));
    }
    let scaling = common.bounds.scaling()?;
    let mut loaded = common.data.load_filled(task, common.bounds.public()?)?;
    let spend = candidates[0].spend(&loaded.dataset)?;
    let mut session = session_for(&spend)?.with_noise(common.privacy.noise());
    let tuned: Tuned = with_progress("a private search", || {
        tune(candidates, &mut loaded, &scaling, &mut session, search)
    })?;
    let s = &tuned.selection;
    let fixed = lines[0].len() - 2 * grid.len();
    eprintln!(
        "searched {} candidates, each run at ε = {:.4} on the fit rows, scored on {} selection rows",
        lines.len(),
        s.run_epsilon,
        s.selection_rows
    );
    if s.chose_constant() {
        eprintln!(
            "warning: the search chose the constant classes (the fit rows' most frequent class): \
             no candidate beat it by the margin on the selection rows (its noisy accuracy \
             {:.3}); the model predicts one class",
            s.noisy_accuracy
        );
    } else {
        eprintln!(
            "chose {} (noisy accuracy {:.3})",
            lines[s.chosen][fixed..].join(" "),
            s.noisy_accuracy,
        );
        if let dpfair::tune::Chosen::Model(run) = &tuned.chosen {
            report_bounds(&loaded, &scaling, s.run_epsilon, &run.ledger, run.rows);
            for line in &run.report {
                eprintln!("{line}");
            }
        }
    }
    eprintln!("{}", s.rule);
    common
        .out
        .write(tuned.to_model_file(loaded.schema.clone())?)?;
    Ok(())
}
