//! Private fair regression post-processing (Xian, Li, Kamath, Zhao) on a Law-School-like
//! design: the scores are the response itself (f = Id, as in the paper's experiments), four
//! groups, statistical parity within α = 0.05 in Kolmogorov–Smirnov distance.
//!
//! `cargo run --release -p dpfair --example fair_regression`

use dpfair::data::synthetic::{Design, LawLikeDesign};
use dpfair::estimators::FairRegression;
use dpfair::fairness::ks_statistical_parity;
use dpfair::{Estimator, Params, Session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let data = LawLikeDesign::default().generate(20_000, 7)?;
    let mut session = Session::new(1.0, 0.0)?;
    let est = FairRegression::params()
        .alpha(0.05)
        .epsilon(1.0)
        .range(1.0, 4.0)
        .check()?;
    let fitted = est.fit(&data, &mut session)?;
    let groups = &data.groups.as_ref().unwrap().codes;
    let before = match &data.target {
        Some(dpfair::data::Target::Real(y)) => ks_statistical_parity(y, groups)?,
        _ => unreachable!("the design has a real response"),
    };
    let after = fitted.predict(&data, session.noise())?;
    let after = ks_statistical_parity(after.values().unwrap(), groups)?;
    println!("max KS between groups: {before:.3} before, {after:.3} after (α = 0.05)");
    Ok(())
}
