//! The row count n under each neighbouring relation (docs/privacy.md, "The row count under
//! add/remove"). Under replace-one neighbours (every method's default) n is public. Under
//! add/remove-one neighbours it is private, so what a fit stores (its schedule, its ledger's
//! costs) may depend on n only through a charged release: tested here at n and n + 1 for the one
//! method that certifies add/remove-one neighbours (DP-SGD logistic regression); every other
//! method is refused by an add/remove session before it reads a row.

use dpfair::data::Dataset;
use dpfair::estimator::row_count::ROW_COUNT_SHARE;
use dpfair::estimators::{
    CdpFair, Decoupled, Dp2dp, DpLinear, DpLogistic, FairRegression, FdpFair, Lpct, LpctPrune,
    example_data,
};
use dpfair::learn::PrivateLogistic;
use dpfair::privacy::Relation;
use dpfair::{Error, Estimator, Fitted, Params, Session};

/// What a fit stores that must not depend on a private n: the configuration and, per ledger
/// entry, its label, mechanism, relation and cost, and the DP-SGD schedule.
fn stored(fitted: &Fitted<PrivateLogistic>) -> (String, Vec<String>, (f64, u64, f64)) {
    let entries = fitted
        .ledger
        .entries()
        .iter()
        .map(|e| {
            format!(
                "{} | {} | {:?} | {:?}",
                e.label, e.mechanism, e.relation, e.cost
            )
        })
        .collect();
    let PrivateLogistic::DpSgd(fit) = &fitted.model else {
        panic!("DP-SGD expected")
    };
    (
        fitted.config.to_string(),
        entries,
        (fit.sampling_rate, fit.steps, fit.noise_multiplier),
    )
}

/// `data` with its last row appended again: n + 1 rows, an add/remove-one neighbour.
fn plus_one(data: &Dataset) -> Dataset {
    let mut idx: Vec<usize> = (0..data.n_rows()).collect();
    idx.push(data.n_rows() - 1);
    data.select(&idx)
}

fn add_remove_fit(est: &DpLogistic, data: &Dataset, seed: u64) -> Fitted<PrivateLogistic> {
    let mut session = Session::with_relation(1.0, 1e-5, Relation::AddRemove)
        .unwrap()
        .with_noise(dpfair::privacy::Noise::seeded(seed));
    est.fit(data, &mut session).unwrap()
}

#[test]
fn add_remove_with_a_declared_size_stores_the_same_schedule_and_costs_at_n_and_n_plus_one() {
    let data = example_data(2_000, 3, 1);
    let est = DpLogistic::params()
        .epsilon(1.0)
        .substitution(false)
        .public_rows(2_000)
        .epochs(3)
        .check()
        .unwrap();
    let a = stored(&add_remove_fit(&est, &data, 5));
    let b = stored(&add_remove_fit(&est, &plus_one(&data), 6));
    assert_eq!(a, b);
    // Before the fix, n = 2,000 and 2,001 gave q = 1/16 and 1/17: not so with a declared size.
    assert_eq!(a.2.0, 1.0 / 16.0);
}

#[test]
fn add_remove_without_a_declared_size_releases_the_count_and_schedules_from_it() {
    let data = example_data(2_000, 3, 2);
    let est = DpLogistic::params()
        .epsilon(1.0)
        .substitution(false)
        .epochs(3)
        .check()
        .unwrap();
    for (seed, data) in [(7, data.clone()), (8, plus_one(&data))] {
        let fitted = add_remove_fit(&est, &data, seed);
        let entries = fitted.ledger.entries();
        // The count comes first, at its fixed share of ε, certified for add/remove.
        assert!(entries[0].label.starts_with("the row count"), "{entries:?}");
        assert_eq!(entries[0].relation, Relation::AddRemove);
        let count_epsilon = fitted.ledger.entries()[..1]
            .iter()
            .map(|e| match e.cost {
                dpfair::privacy::Cost::Pure { epsilon } => epsilon,
                ref other => panic!("{other:?}"),
            })
            .sum::<f64>();
        assert!((count_epsilon - ROW_COUNT_SHARE).abs() < 1e-12);
        // The schedule is the one a declared size equal to the released count gives: it reads
        // n only through the release.
        let released = fitted.rows;
        let declared = DpLogistic::params()
            .epsilon(1.0 - ROW_COUNT_SHARE)
            .substitution(false)
            .public_rows(released)
            .epochs(3)
            .check()
            .unwrap();
        assert_eq!(
            fitted.config,
            serde_json::to_value(declared.config(&data)).unwrap()
        );
        // The whole fit stays within the asked ε.
        assert!(fitted.ledger.total().unwrap().epsilon <= 1.0 + 1e-9);
    }
}

#[test]
fn an_add_remove_session_refuses_every_method_that_certifies_replace_one() {
    let data = example_data(400, 2, 3);
    let refused = |r: Result<(), Error>, method: &str| {
        let err = r.expect_err(method);
        assert!(err.to_string().contains("relation"), "{method}: {err}");
    };
    let session = || Session::with_relation(4.0, 1e-5, Relation::AddRemove).unwrap();
    refused(
        CdpFair::params()
            .epsilon(1.0)
            .check()
            .unwrap()
            .fit(&data, &mut session())
            .map(drop),
        "cdp-fair",
    );
    refused(
        FdpFair::params()
            .epsilon(1.0)
            .check()
            .unwrap()
            .fit(&data, &mut session())
            .map(drop),
        "fdp-fair",
    );
    refused(
        Decoupled::params()
            .epsilon(1.0)
            .check()
            .unwrap()
            .fit(&data, &mut session())
            .map(drop),
        "decoupled",
    );
    refused(
        Dp2dp::params()
            .epsilon(1.0)
            .check()
            .unwrap()
            .fit(&data, &mut session())
            .map(drop),
        "dp2dp",
    );
    refused(
        DpLogistic::params()
            .epsilon(1.0)
            .check()
            .unwrap()
            .fit(&data, &mut session())
            .map(drop),
        "dp-logistic (replace-one default)",
    );
    // The regressors and the locally private trees (whose default depth reads the private
    // count) certify replace-one only too; the refusal comes before any row is read.
    refused(
        DpLinear::params()
            .epsilon(1.0)
            .target_range(0.0, 1.0)
            .check()
            .unwrap()
            .fit(&data, &mut session())
            .map(drop),
        "dp-linear",
    );
    refused(
        FairRegression::params()
            .range(0.0, 1.0)
            .check()
            .unwrap()
            .fit(&data, &mut session())
            .map(drop),
        "fair-regression",
    );
    refused(
        Lpct::params(data.clone())
            .epsilon(1.0)
            .check()
            .unwrap()
            .fit(&data, &mut session())
            .map(drop),
        "lpct",
    );
    refused(
        LpctPrune::params(data.clone())
            .epsilon(1.0)
            .check()
            .unwrap()
            .fit(&data, &mut session())
            .map(drop),
        "lpct-prune",
    );
}

#[test]
fn a_declared_size_is_refused_under_replace_one() {
    let err = DpLogistic::params().public_rows(100).check().unwrap_err();
    assert!(err.to_string().contains("public_rows"), "{err}");
}

/// An empirical audit of what an add/remove fit stores about n (docs/audits.md, "The row count
/// under add/remove"): inputs n = 2,000 and n + 1, output the configuration's `schedule_rows`
/// (the size the stored schedule was computed from), two-sample threshold auditor at α = 0.01
/// with 2·10⁴ trials per input. At ε = 50 the count gets ε = 1 (ROW_COUNT_SHARE): the audit must
/// not exceed 1. Power: two planted bugs must be caught, the schedule read from n as before the
/// fix (deterministic in n: ε_lower ≈ ln(10⁴/4.6) ≈ 7.7) and the count at twice its ε (true
/// ε = 2 on these neighbours; the auditor's documented power at 2·10⁴ trials is ≈ 1.9).
#[test]
fn audit_the_stored_schedule_reads_n_only_through_the_released_count() {
    use dpfair::privacy::audit::threshold::audit;
    use dpfair::privacy::{Ledger, Noise};
    let small = example_data(2_000, 2, 9);
    let data = [small.clone(), plus_one(&small)];
    let epsilon = 1.0 / ROW_COUNT_SHARE;
    let est = |eps: f64| {
        DpLogistic::params()
            .epsilon(eps)
            .substitution(false)
            .epochs(3)
            .check()
            .unwrap()
    };
    let spend = |eps: f64| dpfair::Spend {
        epsilon: eps,
        delta: 1e-5,
        relation: Relation::AddRemove,
    };
    let stored_rows = |est: &DpLogistic, eps: f64, input: usize, noise: &mut Noise| {
        let mut ledger = Ledger::unlimited();
        let (sized, _) = dpfair::estimator::row_count::public_size(
            est,
            &data[input],
            spend(eps),
            &mut ledger,
            noise,
        )
        .unwrap()
        .expect("an add/remove fit without a declared size releases its count");
        let config = serde_json::to_value(sized.config(&data[input])).unwrap();
        Ok(config["schedule_rows"].as_f64().expect("stored"))
    };
    let mut noise = Noise::seeded(11);
    let correct = est(epsilon);
    let shipped = audit(&mut noise, 20_000, 0.0, 0.01, |i, n| {
        stored_rows(&correct, epsilon, i, n)
    })
    .unwrap();
    assert!(shipped.epsilon_lower <= 1.0, "{shipped:?}");
    // Planted: the count at twice its share of ε.
    let doubled = est(2.0 * epsilon);
    let bug = audit(&mut noise, 20_000, 0.0, 0.01, |i, n| {
        stored_rows(&doubled, 2.0 * epsilon, i, n)
    })
    .unwrap();
    assert!(bug.epsilon_lower > 1.0, "{bug:?}");
    // Planted: the schedule of the code before the fix, read from n.
    let before = audit(&mut noise, 20_000, 0.0, 0.01, |i, _| {
        let n = data[i].n_rows();
        let batch = (n / 16).clamp(16, 1024); // the default batch before the fix
        Ok(dpfair::learn::dpsgd::schedule(n, batch, 3).unwrap().0)
    })
    .unwrap();
    assert!(before.epsilon_lower > 5.0, "{before:?}");
    eprintln!(
        "shipped {:.3}, count at 2ε {:.3}, schedule from n {:.3}",
        shipped.epsilon_lower, bug.epsilon_lower, before.epsilon_lower
    );
}
