//! The Rust side of the Python-overhead measurement (`bench/overhead.py` runs it): fit one method
//! on raw UCI Adult through the library `REPS` times in a seeded session, printing the CPU time
//! of each fit and the model file's digest, which the Python fit in the same seeded session must
//! reproduce. Two starting points:
//!
//! * `loaded`: the data set as the CSV loader gives it (coded, one-hot, not timed); timed:
//!   `dpfair::pipeline::fit` alone.
//! * `columns`: the file's columns in memory, numbers as `f64` and text as `String`s (read
//!   untimed), as a DataFrame holds them; timed: what the library does from there, the same
//!   work as a Python fit on a DataFrame: the text factorized
//!   ([`dpfair_data::factorize::factorize`]), the data set built ([`Frame::learn`]),
//!   `pipeline::fit`, and the model file.
//!
//! Run: `DPFAIR_DATA_DIR=../shared/datasets cargo run --release -p dpfair-python --example
//! fit_adult -- dp-logistic 5 columns`

use dpfair::estimators::{CdpFair, DpLogistic};
use dpfair::pipeline::{Scaling, fit};
use dpfair::{Estimator, Params, Session};
use dpfair_data::frame::{Coding, Column, Frame};
use dpfair_data::{Bounds, LoadOptions, Loaded, load_csv};
use ndarray::Array2;

/// Public bounds of Adult's numeric columns (by position: the file has no header).
pub const ADULT_BOUNDS: &str = "0:17:90,2:0:1500000,4:1:16,10:0:99999,11:0:4356,12:1:99";
/// Adult's numeric columns; the others are text. Column 9 is the groups, 14 the target.
const NUMERIC: [usize; 6] = [0, 2, 4, 10, 11, 12];
const SENSITIVE: usize = 9;
const TARGET: usize = 14;

/// The noise seed both sides use (an insecure seeded session: identical draws, identical model).
const SEED: u64 = 1;

/// CPU seconds of this process so far: the clock Python's `time.process_time` reads.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn session() -> Session {
    Session::insecure_seeded(1.0, 1e-5, SEED).expect("session")
}

fn scaling() -> Scaling {
    Scaling::Public(Bounds::parse(ADULT_BOUNDS).expect("bounds"))
}

/// A fit from the loaded data set (`loaded` mode): CPU seconds and digest.
fn fit_loaded<E: Estimator>(est: &E, loaded: &Loaded) -> (f64, String) {
    let mut data = loaded.clone();
    let mut session = session();
    let t0 = cpu_seconds();
    let fitted = fit(est, &mut data, &scaling(), &mut session).expect("fit");
    let cpu = cpu_seconds() - t0;
    let file = fitted.to_model_file(data.schema).expect("model file");
    (cpu, file.digest)
}

/// Adult's columns in memory: the numeric block (rows × 6) and the text columns by position,
/// rows with a missing value (`?`) dropped, as `pandas.read_csv(..., na_values="?").dropna()`.
struct Columns {
    numeric: Array2<f64>,
    text: Vec<(usize, Vec<String>)>,
}

fn read_columns(path: &std::path::Path) -> Columns {
    let body = std::fs::read_to_string(path).expect("adult.data reads");
    let (mut numbers, mut text) = (Vec::new(), vec![Vec::new(); 15]);
    let mut rows = 0;
    for line in body.lines() {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 15 || fields.contains(&"?") {
            continue;
        }
        for (j, field) in fields.iter().enumerate() {
            if NUMERIC.contains(&j) {
                numbers.push(field.parse::<f64>().expect("a number"));
            } else {
                text[j].push((*field).to_string());
            }
        }
        rows += 1;
    }
    let numeric = Array2::from_shape_vec((rows, NUMERIC.len()), numbers).expect("block");
    let text = text
        .into_iter()
        .enumerate()
        .filter(|(j, _)| !NUMERIC.contains(j))
        .collect();
    Columns { numeric, text }
}

/// A fit from the columns (`columns` mode): CPU seconds and digest.
fn fit_columns<E: Estimator>(est: &E, columns: &Columns) -> (f64, String) {
    let mut session = session();
    let t0 = cpu_seconds();
    // Each text column by position: its codes and its distinct values.
    let factors: Vec<(usize, ndarray::Array1<i64>, Vec<String>)> = columns
        .text
        .iter()
        .map(|(j, values)| {
            let (codes, uniques) = dpfair_data::factorize::factorize(values);
            (*j, ndarray::Array1::from(codes), uniques)
        })
        .collect();
    let names: Vec<String> = (0..15).map(|j| j.to_string()).collect();
    let text_column = |j: usize| {
        let (_, c, u) = factors
            .iter()
            .find(|(k, ..)| *k == j)
            .expect("a text column");
        Column::factor(&names[j], c.view(), u)
    };
    let features = (0..15)
        .filter(|&j| j != SENSITIVE && j != TARGET)
        .map(|j| match NUMERIC.iter().position(|&k| k == j) {
            Some(p) => Column::numeric(&names[j], columns.numeric.column(p)),
            None => text_column(j),
        })
        .collect();
    let frame = Frame {
        features,
        sensitive: Some(text_column(SENSITIVE)),
        target: Some(text_column(TARGET)),
        ..Frame::default()
    };
    let mut data = frame.learn(&Coding::default()).expect("learn");
    let fitted = fit(est, &mut data, &scaling(), &mut session).expect("fit");
    let file = fitted.to_model_file(data.schema).expect("model file");
    (cpu_seconds() - t0, file.digest)
}

/// A fit from the columns when given, else from the loaded data set.
fn time_fit<E: Estimator>(est: &E, loaded: &Loaded, columns: Option<&Columns>) -> (f64, String) {
    match columns {
        Some(columns) => fit_columns(est, columns),
        None => fit_loaded(est, loaded),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let method = args.get(1).map_or("dp-logistic", String::as_str);
    let reps: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    let from_columns = args.get(3).is_some_and(|m| m == "columns");
    let Some(path) = dpfair_data::testdata::path_or_skip("adult.data") else {
        std::process::exit(2);
    };
    let options = LoadOptions {
        target: Some("14".into()),
        sensitive: Some("9".into()),
        categorical: ["1", "3", "5", "6", "7", "8", "13"]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    };
    let loaded = load_csv(&path, &options).expect("adult.data loads");
    let columns = from_columns.then(|| read_columns(&path));
    for _ in 0..reps {
        let (cpu, digest) = match method {
            "dp-logistic" => {
                let est = DpLogistic::params().epsilon(1.0).substitution(true).check();
                time_fit(&est.expect("params"), &loaded, columns.as_ref())
            }
            "cdp-fair" => {
                let est = CdpFair::params().epsilon(1.0).delta(1e-5).check();
                time_fit(&est.expect("params"), &loaded, columns.as_ref())
            }
            other => panic!("unknown method {other}"),
        };
        println!("fit_cpu_seconds {cpu:.5} digest {digest}");
    }
}
