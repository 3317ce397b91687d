//! The comparison's two evaluations side by side on the same seeded fits.

use super::*;
use crate::estimators::{example_data, example_schema};

fn loaded() -> Loaded {
    Loaded::in_memory(example_data(3_000, 2, 7), example_schema(2))
}

/// A simulation (seeded fits and seeded evaluation noise) at `evaluation`.
fn run(evaluation: Evaluation, repetitions: usize) -> Report {
    run_under(
        evaluation,
        repetitions,
        vec![Method::DpLogistic, Method::CdpFair],
        Constraint::DemographicParity,
    )
}

/// [`run`] of `methods` under `constraint`.
fn run_under(
    evaluation: Evaluation,
    repetitions: usize,
    methods: Vec<Method>,
    constraint: Constraint,
) -> Report {
    let config = Config {
        methods,
        epsilons: vec![1.0],
        repetitions,
        simulated_noise: true,
        seed: 3,
        evaluation,
        constraint,
        ..Config::default()
    };
    compare(&loaded(), &Scaling::None, &config, |_, _, _| {}).unwrap()
}

/// The same seeded fits scored both ways: each private interval contains the exact held-out
/// figure. Each interval contains the exact rate on the evaluated rows with probability
/// ≥ 1 − β/2 (docs/evaluation.md, "Intervals"); at level 1 − 10⁻⁶ all eight here fail to with
/// probability ≤ 8·10⁻⁶. The noise is seeded, so the outcome is fixed; the bound says why it
/// is not luck.
#[test]
fn private_intervals_contain_the_exact_figures_of_the_same_fits() {
    let level = 1.0 - 1e-6;
    let private = run(
        Evaluation::Private {
            epsilon: 1.0,
            level,
        },
        2,
    );
    let exact = run(Evaluation::Exact, 2);
    assert!(exact.evaluation.is_none());
    let e = private.evaluation.as_ref().unwrap();
    // Two repetitions of (two fits + the majority class): six releases of ε = 1.
    assert_eq!(e.ledger.entries().len(), 6);
    assert_eq!(e.ledger.total().unwrap().epsilon, 6.0);
    // Exact mode has the non-private reference; private mode does not.
    assert_eq!(exact.rows.len(), private.rows.len() + 1);
    for r in &private.rows {
        let x = exact.rows.iter().find(|x| x.method == r.method).unwrap();
        let [a, u] = [r.accuracy_interval.unwrap(), r.unfairness_interval.unwrap()];
        if r.method == MAJORITY {
            // A constant's unfairness is exactly 0. (The private row's class is the held-out
            // rows' majority by the noisy counts, the exact row's the training part's: the
            // accuracy check below holds when they agree, as here.)
            assert_eq!(
                u,
                Interval {
                    lower: 0.0,
                    upper: 0.0
                }
            );
        }
        assert!(
            a.contains(x.accuracy.mean),
            "{}: {a:?} {}",
            r.method,
            x.accuracy.mean
        );
        assert!(
            u.contains(x.unfairness.mean),
            "{}: {u:?} {}",
            r.method,
            x.unfairness.mean
        );
    }
}

#[test]
fn a_target_is_met_missed_or_undecided_from_the_interval() {
    let i = |lower, upper| Interval { lower, upper };
    assert_eq!(Verdict::of_interval(i(0.01, 0.1), 0.1), Verdict::Met);
    assert_eq!(Verdict::of_interval(i(0.11, 0.2), 0.1), Verdict::Missed);
    assert_eq!(Verdict::of_interval(i(0.05, 0.15), 0.1), Verdict::Undecided);
}

/// A multi-class target is evaluated privately too (accuracy and DP2DP's U with intervals);
/// a real target without its public range is refused before any fit.
#[test]
fn multi_class_targets_are_private_and_real_ones_need_their_range() {
    let mut data = example_data(1_500, 2, 1);
    let labels: Vec<u32> = (0..1_500).map(|i| (i % 3) as u32).collect();
    data.target = Some(Target::Multiclass { k: 3, labels });
    let loaded = Loaded::in_memory(data.clone(), example_schema(2));
    let config = Config {
        methods: vec![Method::DpLogistic],
        ..Config::default()
    };
    let report = compare(&loaded, &Scaling::None, &config, |_, _, _| {}).unwrap();
    assert_eq!(report.classes, 3);
    for r in &report.rows {
        let [a, u] = [r.accuracy_interval.unwrap(), r.unfairness_interval.unwrap()];
        assert!(
            a.contains(r.accuracy.mean) || r.accuracy.mean.is_nan(),
            "{r:?}"
        );
        assert!(u.lower <= u.upper && u.upper <= 1.0, "{r:?}");
    }
    data.target = Some(Target::Real((0..1_500).map(|i| i as f64).collect()));
    let loaded = Loaded::in_memory(data, example_schema(2));
    let e = compare(&loaded, &Scaling::None, &Config::default(), |_, _, _| {}).unwrap_err();
    assert!(e.to_string().contains("--target-range"), "{e}");
}

/// Under equal opportunity and equalized odds the constrained methods target the constraint
/// and dp-logistic has no target; the unfairness column is the constraint's difference: exactly,
/// Fairlearn's difference of the rates (dp-logistic's fit is the same seeded fit under every
/// constraint, its column differs from its demographic-parity gap), privately the report's
/// figure: released at ε = 10⁴ its point value is the exact one to 10⁻³ (the noise's scale is
/// 2·10⁻⁴ counts) and its interval (level 1 − 10⁻⁶, as above) contains it.
#[test]
fn the_unfairness_column_is_the_constraints_difference() {
    let methods = vec![Method::GroupThresholds, Method::CdpFair, Method::DpLogistic];
    let private = Evaluation::Private {
        epsilon: 1e4,
        level: 1.0 - 1e-6,
    };
    let parity = run_under(
        Evaluation::Exact,
        1,
        methods.clone(),
        Constraint::DemographicParity,
    );
    let row = |r: &Report, m: &str| r.rows.iter().find(|x| x.method == m).cloned().unwrap();
    for constraint in [Constraint::EqualOpportunity, Constraint::EqualizedOdds] {
        let exact = run_under(Evaluation::Exact, 1, methods.clone(), constraint);
        let noisy = run_under(private, 1, methods.clone(), constraint);
        assert_eq!(exact.constraint, constraint);
        for m in &methods {
            let (x, p) = (row(&exact, m.name()), row(&noisy, m.name()));
            let targeted = *m != Method::DpLogistic;
            assert_eq!(x.target.is_some(), targeted, "{constraint}: {x:?}");
            assert_eq!(p.target.is_some(), targeted, "{constraint}: {p:?}");
            assert!(x.error.is_none() && p.error.is_none(), "{x:?} {p:?}");
            assert!(
                (p.unfairness.mean - x.unfairness.mean).abs() < 1e-3,
                "{constraint} {}: private {} exact {}",
                m.name(),
                p.unfairness.mean,
                x.unfairness.mean
            );
            let u = p.unfairness_interval.unwrap();
            assert!(
                u.contains(x.unfairness.mean),
                "{constraint} {}: {u:?} {}",
                m.name(),
                x.unfairness.mean
            );
        }
        let logistic = row(&exact, "dp-logistic");
        assert_ne!(
            logistic.unfairness.mean,
            row(&parity, "dp-logistic").unfairness.mean,
            "{constraint}: the column still reads the demographic-parity gap"
        );
    }
}

/// A constraint other than demographic parity needs a binary target: a multi-class one is
/// refused before any fit, naming the parameter and the flag.
#[test]
fn a_multi_class_target_refuses_another_constraint() {
    let mut data = example_data(600, 2, 1);
    data.target = Some(Target::Multiclass {
        k: 3,
        labels: (0..600).map(|i| (i % 3) as u32).collect(),
    });
    let loaded = Loaded::in_memory(data, example_schema(2));
    let config = Config {
        methods: vec![Method::DpLogistic],
        constraint: Constraint::EqualizedOdds,
        ..Config::default()
    };
    let mut fits = 0;
    let e = compare(&loaded, &Scaling::None, &config, |_, _, _| fits += 1).unwrap_err();
    let message = e.to_string();
    assert!(
        message.contains("constraint") && message.contains("--constraint"),
        "{message}"
    );
    assert_eq!(fits, 0);
}
