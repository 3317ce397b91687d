//! LPCT-prune (Ma & Yang, Algorithm 2): the depth is chosen from the reports themselves, so
//! there is no tuning parameter; a second round of reports may be collected.
//!
//! `cargo run --release -p dpfair --example lpct_prune`

use dpfair::data::synthetic::{Design, LpctDesign};
use dpfair::estimators::LpctPrune;
use dpfair::{Estimator, Params, Session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let design = LpctDesign { gamma: 5.0 };
    let (public, private) = (design.public(1_000, 11)?, design.generate(30_000, 12)?);
    let mut session = Session::new(1.0, 0.0)?;
    let pruned = LpctPrune::params(public).epsilon(1.0).check()?;
    let fitted = pruned.fit(&private, &mut session)?;
    let m = &fitted.model;
    println!(
        "p0 = {}, p_term = {}, rounds = {}",
        m.p0, m.p_term, m.rounds
    );
    println!("each holder's report: {}", fitted.ledger.summary());
    Ok(())
}
