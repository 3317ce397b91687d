//! LPCT (Ma & Yang): a classification tree whose partition is built on public data and whose
//! leaves are estimated from ε-LDP reports of the private holders (simulated exactly here).
//!
//! `cargo run --release -p dpfair --example lpct`

use dpfair::data::synthetic::{Design, LpctDesign};
use dpfair::estimators::Lpct;
use dpfair::fairness::accuracy;
use dpfair::{Estimator, Params, Session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let design = LpctDesign::default();
    let public = design.public(2_000, 8)?;
    let private = design.generate(20_000, 9)?;
    let test = design.generate(5_000, 10)?;
    let mut session = Session::new(2.0, 0.0)?;
    let fitted = Lpct::params(public)
        .epsilon(2.0)
        .check()?
        .fit(&private, &mut session)?;
    let predicted = fitted.predict(&test, session.noise())?;
    let truth = test.target.as_ref().and_then(|t| t.classes()).unwrap();
    let m = &fitted.model;
    println!("depth {}, λ = {:.2}", m.depth, m.lambda);
    println!(
        "test accuracy {:.3}",
        accuracy(&truth, predicted.classes().unwrap())?
    );
    Ok(())
}
