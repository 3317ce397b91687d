//! More than two groups and other constraints through the two-group classifiers' estimators
//! (docs/fairness-constraints.md): CDP-Fair, FDP-Fair (over its sites) and the decoupled
//! classifier fit the group-thresholds classifier in their place, within their own budget and
//! neighbouring relation; the paper's procedures and DP2DP refuse, naming what to use instead.

use dpfair::estimator::Fitted;
use dpfair::estimators::{CdpFair, Decoupled, Dp2dp, FdpFair};
use dpfair::group_thresholds::{Constraint, OrThresholds};
use dpfair::model::FittedModel;
use dpfair::predictor::{Accounting, Predictor};
use dpfair::{Estimator, Params, Session};
use dpfair_data::{Dataset, Groups, Target};
use ndarray::Array2;
use rand::{RngExt, SeedableRng};

/// `n` rows, two features on [0, 1], `k` groups of different base rates.
fn groups(n: usize, k: u32, seed: u64) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let x = Array2::from_shape_fn((n, 2), |_| rng.random::<f64>());
    let a: Vec<u32> = (0..n).map(|i| i as u32 % k).collect();
    let y: Vec<u8> = (0..n)
        .map(|i| {
            let logit = 6.0 * (x[[i, 0]] - 0.5) + a[i] as f64 - (k as f64 - 1.0) / 2.0;
            u8::from(rng.random::<f64>() < 1.0 / (1.0 + (-logit).exp()))
        })
        .collect();
    Dataset {
        features: x,
        feature_names: vec!["x0".into(), "x1".into()],
        groups: Some(Groups {
            codes: a,
            names: (0..k).map(|g| format!("g{g}")).collect(),
        }),
        target: Some(Target::Binary(y)),
    }
}

/// The fitted model's group count and constraint, for a fit that took the thresholds' road.
fn thresholds<M>(model: &OrThresholds<M>) -> (usize, Constraint) {
    match model {
        OrThresholds::Thresholds(m) => (m.groups.len(), m.constraint),
        OrThresholds::Method(_) => panic!("the method's own procedure ran"),
    }
}

/// A fit at ε = 2 spent between 1.9 and 2 and saved a group-thresholds model file.
fn spends_its_budget_as_group_thresholds<M>(fitted: &Fitted<OrThresholds<M>>)
where
    OrThresholds<M>: Predictor + Clone + Into<FittedModel>,
{
    let total = fitted.ledger.total().unwrap();
    assert!(
        total.epsilon <= 2.0 + 1e-9 && total.epsilon > 1.9,
        "{total:?}"
    );
    let file = fitted
        .to_model_file(dpfair::estimators::example_schema(2))
        .unwrap();
    assert_eq!(file.method, "group-thresholds");
}

#[test]
fn cdp_fair_fits_group_thresholds_for_three_groups_within_its_budget() {
    let data = groups(3_000, 3, 1);
    let mut session = Session::insecure_seeded(2.0, 1e-5, 2).unwrap();
    let est = CdpFair::params()
        .epsilon(2.0)
        .delta(1e-6)
        .check_fraction(0.0)
        .check()
        .unwrap();
    let fitted = est.fit(&data, &mut session).unwrap();
    assert_eq!(
        thresholds(&fitted.model),
        (3, Constraint::DemographicParity)
    );
    spends_its_budget_as_group_thresholds(&fitted);
}

#[test]
fn cdp_fair_on_two_groups_keeps_algorithm_5_unless_another_constraint_is_asked() {
    let data = groups(2_000, 2, 3);
    let fit = |c: Constraint| {
        let est = CdpFair::params()
            .epsilon(2.0)
            .delta(1e-6)
            .frequencies(64)
            .constraint(c)
            .check()
            .unwrap();
        est.fit(&data, &mut Session::insecure_seeded(2.0, 1e-5, 4).unwrap())
            .unwrap()
            .model
    };
    assert!(fit(Constraint::DemographicParity).own().is_some());
    assert_eq!(
        thresholds(&fit(Constraint::EqualizedOdds)),
        (2, Constraint::EqualizedOdds)
    );
}

/// The decoupled classifier's split holds: the score on the base-model rows and the table on D,
/// each at the whole ε (parallel composition: the total is ε, not 2ε).
#[test]
fn decoupled_fits_group_thresholds_on_its_split_by_parallel_composition() {
    let data = groups(3_000, 4, 5);
    let est = Decoupled::params()
        .epsilon(2.0)
        .delta(1e-6)
        .constraint(Constraint::EqualOpportunity)
        .check_fraction(0.0)
        .check()
        .unwrap();
    let fitted = est
        .fit(&data, &mut Session::insecure_seeded(2.0, 1e-5, 6).unwrap())
        .unwrap();
    assert_eq!(thresholds(&fitted.model), (4, Constraint::EqualOpportunity));
    let entries = fitted.ledger.entries();
    assert_eq!(entries.len(), 2, "{entries:#?}");
    let total = fitted.ledger.total().unwrap();
    assert!(
        total.epsilon <= 2.0 + 1e-9 && total.epsilon > 1.9,
        "{total:?}"
    );
}

/// FDP-Fair with three groups, and with equal opportunity on two: the group-thresholds
/// classifier over the same simulated sites, each site spending (ε, δ) once on each half, so
/// the federation's total is one site's budget.
#[test]
fn fdp_fair_fits_group_thresholds_over_its_sites() {
    for (data, constraint, k) in [
        (groups(3_000, 3, 11), Constraint::DemographicParity, 3),
        (groups(3_000, 2, 12), Constraint::EqualOpportunity, 2),
    ] {
        let fitted = FdpFair::params()
            .epsilon(2.0)
            .delta(1e-6)
            .sites(3)
            .constraint(constraint)
            .check_fraction(0.0)
            .check()
            .unwrap()
            .fit(&data, &mut Session::insecure_seeded(2.0, 1e-5, 13).unwrap())
            .unwrap();
        assert_eq!(thresholds(&fitted.model), (k, constraint));
        // Three sites × (DP-SGD, table).
        assert_eq!(fitted.ledger.entries().len(), 6);
        spends_its_budget_as_group_thresholds(&fitted);
    }
    let e = FdpFair::params()
        .accounting(Accounting::Paper)
        .constraint(Constraint::EqualizedOdds)
        .check()
        .unwrap_err();
    assert!(e.to_string().contains("constraint"), "{e}");
    // A randomised attribute on two groups: group thresholds over the sites, corrected.
    let fitted = FdpFair::params()
        .epsilon(2.0)
        .delta(1e-6)
        .attribute_epsilon(1.0)
        .check_fraction(0.0)
        .check()
        .unwrap()
        .fit(
            &groups(3_000, 2, 14),
            &mut Session::insecure_seeded(2.0, 1e-5, 15).unwrap(),
        )
        .unwrap();
    match &fitted.model {
        OrThresholds::Thresholds(m) => assert_eq!(m.attribute_epsilon, Some(1.0)),
        OrThresholds::Method(_) => panic!("Algorithm 1 ran on a randomised attribute"),
    }
    let e = FdpFair::params()
        .attribute_epsilon(0.0)
        .check()
        .unwrap_err();
    assert!(e.to_string().contains("attribute_epsilon"), "{e}");
}

#[test]
fn paper_procedures_and_dp2dp_refuse_naming_what_to_use() {
    let e = CdpFair::params()
        .accounting(Accounting::Paper)
        .constraint(Constraint::EqualOpportunity)
        .check()
        .unwrap_err();
    assert!(e.to_string().contains("constraint"), "{e}");
    let e = Decoupled::params()
        .accounting(Accounting::Paper)
        .constraint(Constraint::EqualizedOdds)
        .check()
        .unwrap_err();
    assert!(e.to_string().contains("constraint"), "{e}");
    let data = groups(1_000, 3, 7);
    let e = CdpFair::params()
        .accounting(Accounting::Paper)
        .check()
        .unwrap()
        .fit(&data, &mut Session::unlimited())
        .unwrap_err();
    assert!(e.to_string().contains("two groups"), "{e}");
    // DP2DP on a multi-class target with three groups: its own procedure, which refuses.
    let mut three_classes = data.clone();
    three_classes.target = Some(Target::Multiclass {
        k: 3,
        labels: (0..1_000u32).map(|i| i % 3).collect(),
    });
    let e = Dp2dp::params()
        .epsilon(1.0)
        .check()
        .unwrap()
        .fit(
            &three_classes,
            &mut Session::insecure_seeded(1.0, 1e-5, 8).unwrap(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("group-thresholds"), "{e}");
}

/// DP2DP on a binary target with three groups: the group-thresholds classifier on its split
/// (phase-1 rows and pool, each at ε: parallel composition).
#[test]
fn dp2dp_fits_group_thresholds_on_its_split_for_a_binary_target() {
    let data = groups(3_000, 3, 9);
    let fitted = Dp2dp::params()
        .epsilon(1.0)
        .check_fraction(0.0)
        .check()
        .unwrap()
        .fit(&data, &mut Session::insecure_seeded(1.0, 1e-5, 10).unwrap())
        .unwrap();
    assert_eq!(
        thresholds(&fitted.model),
        (3, Constraint::DemographicParity)
    );
    let total = fitted.ledger.total().unwrap();
    assert!(
        total.epsilon <= 1.0 + 1e-9 && total.epsilon > 0.95,
        "{total:?}"
    );
    // The same two classes loaded as a class target (as DP2DP's front ends may load them).
    let mut classes = data.clone();
    let Some(Target::Binary(y)) = &data.target else {
        unreachable!()
    };
    classes.target = Some(Target::Multiclass {
        k: 2,
        labels: y.iter().map(|&v| u32::from(v)).collect(),
    });
    let fitted = Dp2dp::params()
        .epsilon(1.0)
        .check_fraction(0.0)
        .check()
        .unwrap()
        .fit(
            &classes,
            &mut Session::insecure_seeded(1.0, 1e-5, 10).unwrap(),
        )
        .unwrap();
    assert_eq!(
        thresholds(&fitted.model),
        (3, Constraint::DemographicParity)
    );
}
