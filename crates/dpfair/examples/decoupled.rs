//! The decoupled private fair binary classifier (Ghoukasian & Asoodeh, Algorithm 2): a DP-SGD
//! base model, private group positive rates, and randomized flips that equalise them.
//!
//! `cargo run --release -p dpfair --example decoupled`

use dpfair::data::synthetic::{Design, TwoGroupLogisticDesign};
use dpfair::estimators::Decoupled;
use dpfair::fairness::{accuracy, demographic_parity_difference};
use dpfair::{Estimator, Params, Session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let design = TwoGroupLogisticDesign::default();
    let train = design.generate(30_000, 13)?;
    let test = design.generate(10_000, 14)?;
    let mut session = Session::new(3.0, 1e-5)?;
    let fitted = Decoupled::params()
        .epsilon(3.0)
        .delta(1e-5)
        .check()?
        .fit(&train, &mut session)?;
    let out = fitted.predict(&test, session.noise())?;
    let y = test.target.as_ref().and_then(|t| t.classes()).unwrap();
    let g = &test.groups.as_ref().unwrap().codes;
    println!(
        "accuracy {:.3}, demographic parity difference {:.3}",
        accuracy(&y, out.classes().unwrap())?,
        demographic_parity_difference(&out.binary().unwrap(), g)?
    );
    Ok(())
}
