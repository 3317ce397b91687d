//! A CSV file end to end through the library: load (the schema is learned as `dpfair fit` does),
//! scale with public bounds, fit CDP-Fair in a session, predict, save the model file that
//! `dpfair predict` reads, and print the ledger.
//!
//! `DPFAIR_DATA_DIR=/path/to/datasets cargo run --release -p dpfair --example csv_pipeline`
//! (the folder holding `fdpfair_adult.csv`; `dpfair datasets list` names the files). Without it,
//! or without the file, the program says so and exits 2.

use dpfair::data::{Bounds, LoadOptions, load_csv};
use dpfair::estimators::CdpFair;
use dpfair::pipeline::{Scaling, fit};
use dpfair::{Params, Session};
use std::path::PathBuf;
use std::process::ExitCode;

/// The data file this example reads, in the folder `DPFAIR_DATA_DIR` names.
const FILE: &str = "fdpfair_adult.csv";

fn main() -> ExitCode {
    let Some(path) = data_file() else {
        return ExitCode::from(2);
    };
    match run(&path) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The library's message names the file, row or parameter: print it, not its Debug form.
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// `$DPFAIR_DATA_DIR/fdpfair_adult.csv`, or `None` after saying how to set it.
fn data_file() -> Option<PathBuf> {
    let hint = format!(
        "point DPFAIR_DATA_DIR at the folder holding {FILE} \
         (DPFAIR_DATA_DIR=/path/to/datasets cargo run --release -p dpfair --example csv_pipeline; \
         `dpfair datasets info adult-fdp` says where the file comes from)"
    );
    let Some(dir) = std::env::var_os("DPFAIR_DATA_DIR").filter(|d| !d.is_empty()) else {
        eprintln!("error: DPFAIR_DATA_DIR is not set: {hint}");
        return None;
    };
    let path = PathBuf::from(dir).join(FILE);
    if !path.is_file() {
        eprintln!("error: {} is not a file: {hint}", path.display());
        return None;
    }
    Some(path)
}

/// The pipeline itself, as in the README's Rust example.
fn run(path: &std::path::Path) -> Result<(), dpfair::Error> {
    let options = LoadOptions {
        target: Some("Label".into()),
        sensitive: Some("Sensitive".into()),
        ..Default::default()
    };
    let mut train = load_csv(path, &options)?;
    let scaling = Scaling::Public(Bounds::parse("Age:17:90,Workclass:0:8,Education-Num:1:16")?);
    let mut session = Session::new(1.0, 1e-6)?;
    let est = CdpFair::params()
        .alpha(0.1)
        .epsilon(1.0)
        .delta(1e-6)
        .check()?;
    let fitted = fit(&est, &mut train, &scaling, &mut session)?;
    let predictions = fitted.predict(&train.dataset, session.noise())?;
    let model = std::env::temp_dir().join("cdp.json");
    fitted.save(train.schema.clone(), &model)?; // `dpfair predict --model` reads it
    let positive = predictions
        .binary()
        .map_or(0, |p| p.iter().filter(|&&y| y == 1).count());
    println!(
        "{positive} of {} rows predicted positive; model: {}",
        train.dataset.n_rows(),
        model.display()
    );
    println!("{}", session.ledger().summary());
    Ok(())
}
