//! `dpfair`: differentially private and fair machine learning from the command line.
//!
//! Each subcommand lives in its own module under `cmd/`; this file only parses and dispatches.
//! Exit codes: 0 success, 2 bad input (the message names the parameter, file, row or column),
//! 1 internal error. Results go to stdout, diagnostics to stderr.

mod cmd;
mod error;

use clap::{CommandFactory, FromArgMatches, Subcommand};
use std::process::ExitCode;

/// Differentially private, fair machine learning: five published methods on one privacy core.
#[derive(clap::Parser)]
#[command(name = "dpfair", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fit a model on a CSV file and write it (with its privacy ledger) as JSON.
    Fit(Box<cmd::fit::Args>),
    /// A private hyper-parameter search that spends what one fit would: the best of a secret
    /// number of runs over a grid of `fit` options, and the constant classes.
    Tune(Box<cmd::tune::Args>),
    /// Predict with a fitted model on a CSV file.
    Predict(cmd::predict::Args),
    /// Accuracy / error and fairness of predictions, overall and per group.
    Evaluate(cmd::evaluate::Args),
    /// Every method on one CSV at the same budget: one table and one accuracy/fairness plot.
    Compare(Box<cmd::compare::Args>),
    /// Print the privacy ledger stored in a model or transcript file.
    Ledger(cmd::ledger::Args),
    /// Privacy accounting: ε of DP-SGD or a Gaussian release, or the noise a target ε needs.
    Accountant(cmd::accountant::Args),
    /// Reproduce a paper's experiments: results.csv, SVG plots and report.md.
    Reproduce(cmd::reproduce::Args),
    /// A simulation: every method on embedded synthetic data, noise seeded from --seed
    /// (repeatable, NOT private), with fairness-against-accuracy plots.
    Demo(cmd::demo::Args),
    /// The built-in data sets of the papers.
    Datasets(cmd::datasets::Args),
    /// FDP-Fair's federated protocol, as files exchanged between sites and a server.
    Federated(cmd::federated::Args),
    /// Local differential privacy with public data (LPCT): partition, privatize, fit.
    Ldp(cmd::ldp::Args),
    /// Empirical privacy audits of a method on generated neighbours: ε lower bound vs claim.
    Audit(cmd::audit::Args),
    /// A release report of one model (one HTML and one JSON file): method, public schema,
    /// ledger, digest, and with --evaluate and --epsilon a private group report with intervals.
    Report(cmd::report::Args),
}

fn main() -> ExitCode {
    restore_default_sigpipe();
    // clap prints its own errors and exits 2 (0 for --help / --version).
    let cli = Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit());
    // A panic is a bug, never the user's fault: report it as an internal error (exit 1) rather
    // than Rust's default exit code 101. The panic message itself is printed by the default hook.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || dispatch(cli))) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
        Err(_) => {
            eprintln!(
                "error: internal error (a bug in dpfair: please report it with the command line)"
            );
            ExitCode::from(1)
        }
    }
}

/// The command line, every option that takes a value reading a negative number as its value
/// (`--guard -1` is the value −1, refused by the option's own check with a message naming it,
/// not an unknown flag `-1`).
fn command() -> clap::Command {
    negative_numbers_as_values(Cli::command())
}

pub(crate) fn negative_numbers_as_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(negative_numbers_as_values)
}

/// Dies quietly on a closed pipe (`dpfair evaluate … | head`), as Unix filters do, instead of
/// panicking on the failed write: Rust ignores SIGPIPE by default.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn dispatch(cli: Cli) -> error::CliResult {
    match cli.command {
        Command::Fit(a) => cmd::fit::run(*a),
        Command::Tune(a) => cmd::tune::run(*a),
        Command::Predict(a) => cmd::predict::run(a),
        Command::Evaluate(a) => cmd::evaluate::run(a),
        Command::Compare(a) => cmd::compare::run(*a),
        Command::Ledger(a) => cmd::ledger::run(a),
        Command::Accountant(a) => cmd::accountant::run(a),
        Command::Reproduce(a) => cmd::reproduce::run(a),
        Command::Demo(a) => cmd::demo::run(a),
        Command::Datasets(a) => cmd::datasets::run(a),
        Command::Federated(a) => cmd::federated::run(a),
        Command::Ldp(a) => cmd::ldp::run(a),
        Command::Audit(a) => cmd::audit::run(a),
        Command::Report(a) => cmd::report::run(a),
    }
}
