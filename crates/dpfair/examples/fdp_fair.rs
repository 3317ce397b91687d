//! FDP-Fair (Xue & Yu, Algorithm 1) simulated over four sites of the paper's synthetic design:
//! every site spends its own (ε, δ) on its own rows; the server combines their releases.
//!
//! `cargo run --release -p dpfair --example fdp_fair`

use dpfair::data::synthetic::{Design, FdpFairDesign};
use dpfair::estimators::FdpFair;
use dpfair::fairness::demographic_parity_difference;
use dpfair::{Estimator, Params, Session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sites_data = FdpFairDesign::default().generate(20_000, 5)?;
    let holdout = FdpFairDesign::default().generate(5_000, 6)?;
    let mut session = Session::new(2.0, 1e-5)?;
    let fdp = FdpFair::params()
        .sites(4)
        .alpha(0.1)
        .epsilon(2.0)
        .delta(1e-6)
        .check()?;
    let fitted = fdp.fit(&sites_data, &mut session)?;
    let predicted = fitted.predict(&holdout, session.noise())?.binary().unwrap();
    let groups = &holdout.groups.as_ref().unwrap().codes;
    println!(
        "held-out |DD| = {:.3}",
        demographic_parity_difference(&predicted, groups)?
    );
    // Two groups under demographic parity: Algorithm 1's own model (more groups or another
    // constraint would give the group-thresholds classifier over the sites).
    if let Some(model) = fitted.model.own() {
        let search = &model.federated.search;
        println!(
            "band found: {}, threshold τ̃ = {:.4}",
            search.feasible, search.tau
        );
    }
    println!("{}", fitted.ledger.summary());
    Ok(())
}
