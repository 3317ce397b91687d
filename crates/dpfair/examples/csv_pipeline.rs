//! A CSV file end to end through the library: load (the schema is learned as `dpfair fit` does),
//! scale with public bounds, fit CDP-Fair in a session, predict, save the model file that
//! `dpfair predict` reads, and print the ledger.
//!
//! `DPFAIR_DATA_DIR=../shared/datasets cargo run --release -p dpfair --example csv_pipeline`

use dpfair::data::{Bounds, LoadOptions, load_csv};
use dpfair::estimators::CdpFair;
use dpfair::pipeline::{Scaling, fit};
use dpfair::{Params, Session};

fn main() -> Result<(), dpfair::Error> {
    let dir = std::env::var("DPFAIR_DATA_DIR").unwrap_or_else(|_| "../shared/datasets".into());
    let options = LoadOptions {
        target: Some("Label".into()),
        sensitive: Some("Sensitive".into()),
        ..Default::default()
    };
    let mut train = load_csv(format!("{dir}/fdpfair_adult.csv"), &options)?;
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
        "{positive} of {} rows predicted positive",
        train.dataset.n_rows()
    );
    println!("{}", session.ledger().summary());
    Ok(())
}
