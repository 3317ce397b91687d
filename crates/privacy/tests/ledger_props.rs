//! Property tests of the ledger and of mechanism costs (proptest, deterministic per run via
//! proptest's own seeding; 256 cases each).

use dpfair_privacy::accounting;
use dpfair_privacy::mechanisms::{Gaussian, Laplace};
use dpfair_privacy::{Budget, Composition, Cost, Entry, Ledger, Relation};
use proptest::prelude::*;

fn epsilon_of(c: Cost) -> f64 {
    match c {
        Cost::Pure { epsilon } => epsilon,
        Cost::Zcdp { rho } => rho,
        c => panic!("{c:?}"),
    }
}

/// Whether the accounting conversions have landed (zCDP entries need them).
fn zcdp_available() -> bool {
    accounting::zcdp_to_dp(0.1, 1e-5).is_ok() && accounting::rdp_to_dp(&[2.0], &[0.1], 1e-5).is_ok()
}

fn entry(cost: Cost, part: Option<u8>) -> Entry {
    Entry {
        label: "x".into(),
        mechanism: "test".into(),
        relation: Relation::Substitution,
        sensitivity: 1.0,
        norm: "l1".into(),
        scale: 1.0,
        cost,
        composition: match part {
            None => Composition::Sequential,
            Some(p) => Composition::Parallel {
                partition: "split".into(),
                part: format!("part {p}"),
                key: 1,
                within: Vec::new(),
            },
        },
        note: None,
    }
}

/// A random cost: pure, approximate, or (when the accounting is there) zCDP.
fn cost() -> impl Strategy<Value = Cost> {
    let zcdp = zcdp_available();
    prop_oneof![
        (0.001f64..2.0).prop_map(|epsilon| Cost::Pure { epsilon }),
        (0.001f64..2.0, 1e-9f64..1e-6).prop_map(|(epsilon, delta)| Cost::Approx { epsilon, delta }),
        (0.001f64..1.0).prop_map(move |rho| if zcdp {
            Cost::Zcdp { rho }
        } else {
            Cost::Pure { epsilon: rho }
        }),
    ]
}

fn entries() -> impl Strategy<Value = Vec<Entry>> {
    prop::collection::vec(
        (cost(), prop::option::weighted(0.3, 0u8..3)).prop_map(|(c, p)| entry(c, p)),
        1..12,
    )
}

proptest! {
    #[test]
    fn laplace_cost_is_monotone(d1 in 0.01f64..100.0, d2 in 0.01f64..100.0,
                                b1 in 0.01f64..100.0, b2 in 0.01f64..100.0, dim in 1usize..500) {
        let (dl, dh) = (d1.min(d2), d1.max(d2));
        let (bl, bh) = (b1.min(b2), b1.max(b2));
        let e = |d, b| epsilon_of(Laplace::from_scale(d, b).unwrap().cost(dim).unwrap());
        prop_assert!(e(dl, bh) <= e(dl, bl));
        prop_assert!(e(dl, bl) <= e(dh, bl));
        // And close to Δ/b: the lattice adds max(2^-20, d·(b/Δ)·2^-52) ≤ 1e-6 relative.
        prop_assert!((e(dl, bl) / (dl / bl) - 1.0).abs() < 1e-4);
    }

    #[test]
    fn gaussian_cost_is_monotone(d1 in 0.01f64..100.0, d2 in 0.01f64..100.0,
                                 s1 in 0.01f64..100.0, s2 in 0.01f64..100.0, dim in 1usize..500) {
        let (dl, dh) = (d1.min(d2), d1.max(d2));
        let (sl, sh) = (s1.min(s2), s1.max(s2));
        let rho = |d, s| epsilon_of(Gaussian::from_sigma(d, s).unwrap().cost(dim).unwrap());
        prop_assert!(rho(dl, sh) <= rho(dl, sl));
        prop_assert!(rho(dl, sl) <= rho(dh, sl));
        // Δ_eff/Δ − 1 ≤ max(2^-20, √d·(σ/Δ)·2^-29) ≤ √500·10^4·2^-29 ≈ 4.2e-4, so ρ is within
        // (1 + 4.2e-4)² − 1 < 1e-3 of Δ²/(2σ²).
        prop_assert!((rho(dl, sl) / (dl * dl / (2.0 * sl * sl)) - 1.0).abs() < 1e-3);
    }

    #[test]
    fn composition_never_decreases_the_total(es in entries()) {
        let mut ledger = Ledger::new(Budget::approx(f64::INFINITY, 1e-3).unwrap());
        let mut last = 0.0;
        for e in es {
            ledger.charge(e).unwrap();
            let t = ledger.total().unwrap();
            prop_assert!(t.epsilon >= last - 1e-12, "{} < {} by {}", t.epsilon, last, t.rule);
            last = t.epsilon;
        }
    }

    #[test]
    fn the_ledger_never_exceeds_its_budget(es in entries(), eps in 0.1f64..5.0) {
        let mut ledger = Ledger::new(Budget::approx(eps, 1e-4).unwrap());
        for e in es {
            let before = ledger.entries().len();
            match ledger.charge(e) {
                Ok(()) => prop_assert_eq!(ledger.entries().len(), before + 1),
                Err(_) => prop_assert_eq!(ledger.entries().len(), before),
            }
            let t = ledger.total().unwrap();
            prop_assert!(t.epsilon <= eps * (1.0 + 1e-9) && t.delta <= 1e-4 * (1.0 + 1e-9));
        }
    }
}
