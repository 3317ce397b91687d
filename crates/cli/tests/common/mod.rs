//! Shared fixture of the CLI integration tests: run the built `dpfair` binary, check its exit
//! status, read its output, and write scratch files. Use it from a test file with
//!
//! ```ignore
//! mod common;
//! use common::{dpfair, ok, bad, scratch, write};
//! ```
//!
//! Every test binary compiles its own copy, so helpers one file does not use are expected.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `dpfair` binary built for this test run, as a `Command` to add arguments (or environment)
/// to.
pub fn command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dpfair"))
}

/// Run `dpfair ARGS…` and collect its output.
pub fn dpfair<S: AsRef<OsStr>>(args: &[S]) -> Output {
    command().args(args).output().expect("run dpfair")
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Assert that the run succeeded (showing its exit code and stderr if not); returns stdout.
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}, stderr: {}",
        o.status.code(),
        stderr(o)
    );
    stdout(o)
}

/// Assert that the run was refused as bad input (exit 2) without a panic; returns stderr.
pub fn bad(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "a panic: {err}");
    err
}

/// A fresh, empty scratch folder for one test: `<tmp>/dpfair-<suite>-<pid>-<test>`.
pub fn scratch(suite: &str, test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpfair-{suite}-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Write `text` to `dir/name` and return the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A path as the `&str` an argument list needs.
pub fn arg(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 scratch path")
}

/// `n` rows of the Xue & Yu synthetic design on [0, 1] as `dir/name`: columns `x1,x2,a,y`, groups
/// 0/1, labels 0/1.
pub fn design_csv(dir: &Path, name: &str, n: usize, seed: u64) -> PathBuf {
    let d = dpfair::data::synthetic::Design::generate(
        &dpfair::data::synthetic::FdpFairDesign::default(),
        n,
        seed,
    )
    .unwrap();
    let codes = &d.groups.as_ref().unwrap().codes;
    let dpfair::data::Target::Binary(y) = d.target.as_ref().unwrap() else {
        unreachable!("the design has a binary target")
    };
    let mut s = String::from("x1,x2,a,y\n");
    for i in 0..d.n_rows() {
        s += &format!(
            "{:.4},{:.4},{},{}\n",
            d.features[[i, 0]],
            d.features[[i, 1]],
            codes[i],
            y[i]
        );
    }
    write(dir, name, &s)
}

/// The number printed right after `key` in `text` (`∞` is +∞); panics naming the key when there
/// is none, so a changed message fails the test instead of passing it.
pub fn number_after(text: &str, key: &str) -> f64 {
    let at = text
        .find(key)
        .unwrap_or_else(|| panic!("`{key}` not in: {text}"));
    let rest = &text[at + key.len()..];
    if rest.starts_with('∞') {
        return f64::INFINITY;
    }
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(rest.len());
    rest[..end]
        .trim_end_matches('.')
        .parse()
        .unwrap_or_else(|e| panic!("`{key}` followed by `{}`: {e}", &rest[..end]))
}

/// One row of a printed ledger table (`Ledger::summary`): columns are separated by two or more
/// spaces.
#[derive(Debug)]
pub struct LedgerRow {
    pub label: String,
    pub mechanism: String,
    pub sensitivity: f64,
    pub scale: f64,
    pub cost: String,
}

/// The rows of the ledger table(s) in `text` (lines that start with the row number).
pub fn ledger_rows(text: &str) -> Vec<LedgerRow> {
    text.lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<usize>().is_ok())
        })
        .filter_map(|l| {
            let cols: Vec<&str> = l
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            (cols.len() >= 6).then(|| LedgerRow {
                label: cols[1].to_string(),
                mechanism: cols[2].to_string(),
                sensitivity: cols[3].parse().expect("sensitivity"),
                scale: cols[4].parse().expect("scale"),
                cost: cols[5..].join("  "),
            })
        })
        .collect()
}

/// Run `dpfair predict --model MODEL --data DATA --out OUT`, then `extra`.
pub fn predict(model: &Path, data: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "predict",
        "--model",
        arg(model),
        "--data",
        arg(data),
        "--out",
        arg(out),
    ];
    args.extend_from_slice(extra);
    dpfair(&args)
}

/// `dpfair predict --model MODEL --data DATA --out OUT --seed 1` (randomised predictions drawn
/// from a fixed stream), then the `prediction` column of OUT, one entry per data row.
pub fn predictions(model: &Path, data: &Path, out: &Path) -> Vec<String> {
    ok(&predict(model, data, out, &["--seed", "1"]));
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap_or("").to_string())
        .collect()
}

/// The arguments of `dpfair fit METHOD` on a [`design_csv`] file (target `y`, group `a`) at
/// `epsilon` into `model`, then `extra`: the one argument-list builder the CLI tests share.
pub fn fit_args<'a>(
    method: &'a str,
    data: &'a Path,
    epsilon: &'a str,
    model: &'a Path,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "fit",
        method,
        "--data",
        arg(data),
        "--target",
        "y",
        "--sensitive",
        "a",
        "--epsilon",
        epsilon,
        "--out",
        arg(model),
    ];
    args.extend_from_slice(extra);
    args
}

/// The arguments of `dpfair fit lpct` with `data` as both the public and the private rows
/// (target `y`) at ε = 1 into `model`, then `extra`.
pub fn fit_lpct_args<'a>(data: &'a Path, model: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "fit",
        "lpct",
        "--public",
        arg(data),
        "--private",
        arg(data),
        "--target",
        "y",
        "--epsilon",
        "1",
        "--out",
        arg(model),
    ];
    args.extend_from_slice(extra);
    args
}

/// `dpfair fit cdp-fair` on a [`design_csv`] file (target `y`, group `a`) at ε = 2 into `model`,
/// with `extra` options.
pub fn fit_cdp_fair(data: &Path, model: &Path, extra: &[&str]) -> Output {
    dpfair(&fit_args("cdp-fair", data, "2", model, extra))
}
