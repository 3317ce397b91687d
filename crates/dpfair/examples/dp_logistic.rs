//! DP-SGD logistic regression on synthetic two-group data, then its accuracy and the
//! demographic-parity difference it happens to have (it does not constrain it).
//!
//! `cargo run --release -p dpfair --example dp_logistic`

use dpfair::data::synthetic::{Design, TwoGroupLogisticDesign};
use dpfair::estimators::DpLogistic;
use dpfair::fairness::{accuracy, demographic_parity_difference};
use dpfair::privacy::Relation;
use dpfair::{Estimator, Params, Session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let design = TwoGroupLogisticDesign::default();
    let (train, test) = (design.generate(20_000, 1)?, design.generate(5_000, 2)?);
    // Opacus semantics: add/remove-one neighbours, so the session certifies that relation. The
    // row count is then private: the fit releases a noisy count (2% of ε) for its schedule, or
    // takes a declared size (`.public_rows(20_000)`).
    let mut session = Session::with_relation(1.0, 1e-5, Relation::AddRemove)?;
    let est = DpLogistic::params()
        .epsilon(1.0)
        .delta(1e-5)
        .substitution(false)
        .check()?;
    let fitted = est.fit(&train, &mut session)?;
    let predicted = fitted.predict(&test, session.noise())?;
    let truth = test
        .target
        .as_ref()
        .and_then(|t| t.classes())
        .expect("binary target");
    let groups = &test.groups.as_ref().expect("groups").codes;
    println!(
        "accuracy {:.3}",
        accuracy(&truth, predicted.classes().unwrap())?
    );
    println!(
        "DP difference {:.3}",
        demographic_parity_difference(&predicted.binary().unwrap(), groups)?
    );
    println!("{}", session.ledger().summary());
    Ok(())
}
