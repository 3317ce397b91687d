//! CDP-Fair (Xue & Yu, Algorithm 5) on the paper's synthetic design: features already on
//! `[0, 1]²`, two groups, the disparity held under α = 0.1 at ε = 1.
//!
//! `cargo run --release -p dpfair --example cdp_fair`

use dpfair::data::synthetic::{Design, FdpFairDesign};
use dpfair::estimators::CdpFair;
use dpfair::fairness::{accuracy, demographic_parity_difference};
use dpfair::{Estimator, Params, Session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let design = FdpFairDesign::default();
    let train = design.generate(10_000, 3)?;
    let test = design.generate(10_000, 4)?;
    let mut session = Session::new(1.0, 1e-6)?;
    let est = CdpFair::params()
        .alpha(0.1)
        .epsilon(1.0)
        .delta(1e-6)
        .check()?;
    let fitted = est.fit(&train, &mut session)?;
    let out = fitted.predict(&test, session.noise())?;
    let y = test.target.as_ref().and_then(|t| t.classes()).unwrap();
    let a = &test.groups.as_ref().unwrap().codes;
    let dpd = demographic_parity_difference(&out.binary().unwrap(), a)?;
    println!(
        "test accuracy {:.3}, |DD| {dpd:.3} (target α = 0.1)",
        accuracy(&y, out.classes().unwrap())?
    );
    println!("{}", fitted.ledger.summary());
    Ok(())
}
