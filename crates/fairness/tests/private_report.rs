//! The private group report's release: exactly one ledger entry of the asked ε, certified for
//! the ledger's relation with that relation's sensitivity; refused (nothing drawn) over budget;
//! the same shape whatever the rows (docs/evaluation.md).

use dpfair_fairness::{FairnessError, GroupConfusion, PrivateGroupReport};
use dpfair_privacy::{Budget, Cost, Ledger, Noise, PrivacyError, Relation};

fn names(k: usize) -> Vec<String> {
    (0..k).map(|g| format!("g{g}")).collect()
}

#[test]
fn one_entry_of_the_asked_epsilon_and_the_ledgers_relation() {
    let c =
        GroupConfusion::from_rows(names(3), &[1, 0, 1, 1], &[1, 1, 0, 1], &[0, 1, 2, 2]).unwrap();
    for (relation, sensitivity) in [(Relation::Substitution, 2.0), (Relation::AddRemove, 1.0)] {
        let mut ledger = Ledger::for_relation(Budget::pure(2.0).unwrap(), relation);
        let mut noise = Noise::seeded(9);
        let r = PrivateGroupReport::release(&mut ledger, &mut noise, "eval", &c, 0.5, 0.9).unwrap();
        assert_eq!(ledger.entries().len(), 1);
        let e = &ledger.entries()[0];
        assert_eq!(e.label, "eval");
        assert_eq!(e.relation, relation);
        assert_eq!(e.sensitivity, sensitivity);
        assert_eq!(e.scale, sensitivity / 0.5);
        assert_eq!(e.cost, Cost::Pure { epsilon: 0.5 });
        assert_eq!((r.scale, r.relation, r.level), (e.scale, relation, 0.9));
        assert_eq!(r.noisy_counts.len(), 12);
        assert!((ledger.total().unwrap().epsilon - 0.5).abs() < 1e-12);
    }
}

#[test]
fn over_budget_is_refused_before_any_noise() {
    let c = GroupConfusion::from_rows(names(2), &[1], &[1], &[0]).unwrap();
    let mut ledger = Ledger::new(Budget::pure(0.5).unwrap());
    let mut noise = Noise::seeded(1);
    let e =
        PrivateGroupReport::release(&mut ledger, &mut noise, "eval", &c, 1.0, 0.95).unwrap_err();
    assert!(matches!(
        e,
        FairnessError::Privacy(PrivacyError::BudgetExceeded { .. })
    ));
    assert!(ledger.entries().is_empty());
    // Bad parameters name themselves, before the ledger is touched.
    for (eps, level, name) in [
        (1.0, 1.5, "level"),
        (0.0, 0.95, "epsilon"),
        (f64::NAN, 0.95, "epsilon"),
    ] {
        let e = PrivateGroupReport::release(&mut ledger, &mut noise, "eval", &c, eps, level)
            .unwrap_err();
        assert!(e.to_string().contains(name), "{e}");
    }
    assert!(ledger.entries().is_empty());
}

#[test]
fn the_shape_does_not_depend_on_the_rows() {
    // No rows at all, one group only, or every group: the same rows, figures and keys.
    let shapes: Vec<String> = [
        GroupConfusion::new(names(3)).unwrap(),
        GroupConfusion::from_rows(names(3), &[1, 0], &[0, 0], &[1, 1]).unwrap(),
        GroupConfusion::from_rows(names(3), &[1, 0, 1], &[0, 1, 1], &[0, 1, 2]).unwrap(),
    ]
    .iter()
    .map(|c| {
        let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
        let r = PrivateGroupReport::release(&mut ledger, &mut Noise::seeded(2), "e", c, 1.0, 0.95)
            .unwrap();
        assert_eq!(r.by_group.len(), 3);
        // The JSON keys (values aside) are the same.
        let v = serde_json::to_value(&r).unwrap();
        let mut keys = Vec::new();
        collect_keys(&v, "", &mut keys);
        keys.join(",")
    })
    .collect();
    assert!(shapes.windows(2).all(|w| w[0] == w[1]));
}

fn collect_keys(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                collect_keys(x, &format!("{at}.{k}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            out.push(format!("{at}[{}]", a.len()));
            for x in a {
                collect_keys(x, &format!("{at}[]"), out);
            }
        }
        _ => out.push(at.to_string()),
    }
}
