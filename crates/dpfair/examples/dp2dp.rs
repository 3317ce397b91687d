//! DP2DP (Say, Denis, Pinot): private demographic-parity post-processing of a private
//! multi-class probability model, on the paper's Gaussian-mixture design (6 classes).
//!
//! `cargo run --release -p dpfair --example dp2dp`

use dpfair::data::synthetic::{Design, GaussianMixtureDesign};
use dpfair::estimators::Dp2dp;
use dpfair::fairness::multiclass_unfairness;
use dpfair::{Estimator, Params, Session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let design = GaussianMixtureDesign::default();
    let data = design.generate(20_000, 15)?;
    let mut session = Session::new(1.0, 1e-5)?;
    let fitted = Dp2dp::params()
        .rho(0.05)
        .epsilon(1.0)
        .check()?
        .fit(&data, &mut session)?;
    let out = fitted.predict(&data, session.noise())?;
    let groups = &data.groups.as_ref().unwrap().codes;
    let classes = fitted
        .model
        .own()
        .expect("two groups: DP2DP's model")
        .classes;
    let u = multiclass_unfairness(out.classes().unwrap(), classes, groups)?;
    println!("unfairness U = {u:.3} (target ρ = 0.05)");
    println!("{}", session.ledger().summary());
    Ok(())
}
