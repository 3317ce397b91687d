//! A session composes several fits against one budget: basic composition of the fits' declared
//! (ε, δ), each fit held to its declaration by its own ledger; an overspend is refused before
//! any noise is drawn (nothing is released, nothing recorded).

use dpfair::estimators::{DpLogistic, example_data};
use dpfair::{Error, Estimator, Params, Session};

fn half_budget_fit() -> DpLogistic {
    DpLogistic::params()
        .epsilon(0.5)
        .delta(5e-6)
        .substitution(true)
        .epochs(2)
        .check()
        .unwrap()
}

#[test]
fn two_approximate_fits_share_a_budget_and_a_third_is_refused() {
    let data = example_data(400, 2, 3);
    let mut session = Session::insecure_seeded(1.0, 1e-5, 7).unwrap();
    let est = half_budget_fit();
    let first = est.fit(&data, &mut session).unwrap();
    let second = est.fit(&data, &mut session).unwrap();
    // Each fit's own ledger stays within its declaration.
    for fitted in [&first, &second] {
        let total = fitted.ledger.total().unwrap();
        assert!(total.epsilon <= 0.5 + 1e-9 && total.delta <= 5e-6 * (1.0 + 1e-9));
    }
    let (eps, delta) = session.spent();
    assert!((eps - 1.0).abs() < 1e-12 && (delta - 1e-5).abs() < 1e-18);
    let recorded = session.ledger().entries().len();
    assert_eq!(
        recorded,
        first.ledger.entries().len() + second.ledger.entries().len()
    );
    // Nothing is left: refused before any release, and nothing more is recorded.
    assert!(matches!(
        est.fit(&data, &mut session),
        Err(Error::BudgetExceeded(_))
    ));
    assert_eq!(session.ledger().entries().len(), recorded);
    assert_eq!(session.spent(), (eps, delta));
}

#[test]
fn an_add_remove_fit_costs_its_replace_one_restatement() {
    let data = example_data(400, 2, 4);
    // DP-SGD certifying add/remove-one neighbours at (0.5, 1e-6) is replace-one
    // (1, (1 + e^0.5)·1e-6) ≈ (1, 2.65e-6): it fits a (1, 1e-5) session exactly once.
    let est = DpLogistic::params()
        .epsilon(0.5)
        .delta(1e-6)
        .substitution(false)
        .public_rows(400)
        .epochs(2)
        .check()
        .unwrap();
    let mut session = Session::insecure_seeded(1.0, 1e-5, 8).unwrap();
    est.fit(&data, &mut session).unwrap();
    let (eps, delta) = session.spent();
    assert!((eps - 1.0).abs() < 1e-12);
    assert!((delta - (1.0 + 0.5f64.exp()) * 1e-6).abs() < 1e-15);
    assert!(matches!(
        est.fit(&data, &mut session),
        Err(Error::BudgetExceeded(_))
    ));
}
