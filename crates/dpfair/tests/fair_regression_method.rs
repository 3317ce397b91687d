//! Algorithm 1 end to end (Xian et al.; checks of its deterministic identities, the worked example of `docs/reference-values.md#fair-regression`, and the Law-like design).

use dpfair::data::Target;
use dpfair::data::synthetic::Design;
use dpfair::data::synthetic::law_like::LawLikeDesign;
use dpfair::fair_regression::baselines::{QuantileAveraging, binning};
use dpfair::fair_regression::histogram::private_joint_histogram;
use dpfair::fair_regression::lp::SolvedBy;
use dpfair::fair_regression::transport::max_pairwise_ks;
use dpfair::fair_regression::{
    Config, FairRegressionError, GroupSource, fit, fit_from_histogram, fit_scores,
};
use dpfair::fairness::metrics::{ks_statistical_parity, mse};
use dpfair::privacy::{Budget, Cost, Ledger, Noise};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn config(alpha: f64, epsilon: f64, bins: usize, range: [f64; 2]) -> Config {
    Config {
        alpha,
        epsilon,
        bins,
        range: Some(range),
        ..Config::default()
    }
}

/// `docs/reference-values.md#fair-regression` with ε = ∞: weights, PMFs, the α = 0 transports G_0, G_1 and the LP value.
#[test]
fn worked_example_end_to_end() {
    let y = [0.1, 0.1, 0.5, 0.9, 0.9, 0.9];
    let g = [0, 0, 0, 0, 1, 1];
    let mut ledger = Ledger::unlimited();
    let model = fit_scores(
        &config(0.0, f64::INFINITY, 3, [0.0, 1.0]),
        &y,
        &g,
        names(&["0", "1"]),
        GroupSource::Declared,
        &mut ledger,
        &mut Noise::seeded(0),
    )
    .unwrap();
    assert!(ledger.entries().is_empty(), "ε = ∞ releases nothing");
    assert!((model.weights[0] - 2.0 / 3.0).abs() < 1e-15);
    assert!((model.weights[1] - 1.0 / 3.0).abs() < 1e-15);
    for (a, b) in model.pmfs[0].iter().zip([0.5, 0.25, 0.25]) {
        assert!((a - b).abs() < 1e-15);
    }
    assert_eq!(
        model.transports[0].rows,
        vec![vec![(1, 1.0)], vec![(1, 1.0)], vec![(2, 1.0)]]
    );
    assert_eq!(model.transports[1].rows[0], vec![(0, 1.0)]); // empty row: identity
    assert_eq!(model.transports[1].rows[1], vec![(1, 1.0)]);
    assert_eq!(model.transports[1].rows[2], vec![(1, 0.75), (2, 0.25)]);
    assert!((model.lp_value_index - 7.0 / 12.0).abs() < 1e-12);
    assert!((model.lp_value - 0.0648148148148148).abs() < 1e-12);
    assert_eq!(model.solved_by, SolvedBy::ClosedForm);
}

/// A small two-group data set with different distributions.
fn two_groups(n: usize) -> (Vec<f64>, Vec<u32>) {
    let y = (0..n)
        .map(|i| ((i * 37) % 101) as f64 / 100.0)
        .collect::<Vec<_>>();
    let g = (0..n).map(|i| (i % 3 == 0) as u32).collect::<Vec<_>>();
    let y = y
        .iter()
        .zip(&g)
        .map(|(y, g)| if *g == 1 { y * y } else { *y })
        .collect();
    (y, g)
}

/// The output law on the training distribution, and determinism: with ε = 1, the push-forward of each p̃_a under G_a is q̃_a and the targets are
/// α-fair; one pure-ε ledger entry of sensitivity 2 (counts); the post-processing is deterministic
/// given the released histogram.
#[test]
fn private_fit_pushes_forward_to_fair_targets() {
    let (y, g) = two_groups(3000);
    let cfg = config(0.05, 1.0, 20, [0.0, 1.0]);
    let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
    let mut noise = Noise::seeded(11);
    let hist = private_joint_histogram(
        &y,
        &g,
        2,
        &cfg.validate().unwrap(),
        1.0,
        &mut ledger,
        &mut noise,
    )
    .unwrap();
    assert_eq!(ledger.entries().len(), 1);
    let entry = &ledger.entries()[0];
    assert_eq!(entry.cost, Cost::Pure { epsilon: 1.0 });
    assert_eq!(entry.sensitivity, 2.0);
    let model = fit_from_histogram(&cfg, &hist, names(&["a", "b"]), GroupSource::Declared).unwrap();
    let again = fit_from_histogram(&cfg, &hist, names(&["a", "b"]), GroupSource::Declared).unwrap();
    assert_eq!(
        model, again,
        "post-processing is deterministic given the histogram"
    );
    let pushed: Vec<Vec<f64>> = model
        .transports
        .iter()
        .zip(&model.pmfs)
        .map(|(t, p)| t.push_forward(p))
        .collect();
    for (p, q) in pushed.iter().zip(&model.targets) {
        for (a, b) in p.iter().zip(q) {
            assert!((a - b).abs() < 1e-9);
        }
    }
    assert!(max_pairwise_ks(&pushed) <= 0.05 + 1e-9);
    // A second fit cannot spend beyond the budget: refused before any noise.
    let err = fit_scores(
        &cfg,
        &y,
        &g,
        names(&["a", "b"]),
        GroupSource::Declared,
        &mut ledger,
        &mut noise,
    )
    .unwrap_err();
    assert!(matches!(err, FairRegressionError::Privacy(_)), "{err}");
    assert_eq!(ledger.entries().len(), 1);
}

/// `docs/deviations.md#fair-regression-empty-group-weight`: a declared group absent from the data is floored, reported, and still gets a transport.
#[test]
fn absent_declared_group_is_floored_not_an_error() {
    let (y, g) = two_groups(600);
    let model = fit_scores(
        &config(0.1, f64::INFINITY, 10, [0.0, 1.0]),
        &y,
        &g,
        names(&["a", "b", "c"]),
        GroupSource::Declared,
        &mut Ledger::unlimited(),
        &mut Noise::seeded(1),
    )
    .unwrap();
    assert_eq!(model.near_empty_groups, names(&["c"]));
    assert_eq!(model.weights[2], 1e-6);
    let p = model
        .predict(&[0.5, 0.5], &[2, 0], &mut ChaCha8Rng::seed_from_u64(0))
        .unwrap();
    assert_eq!(p.values.len(), 2);
    assert!(max_pairwise_ks(&model.targets) <= 0.1 + 1e-9);
}

#[test]
fn bad_configurations_are_errors_naming_the_parameter() {
    let (y, g) = two_groups(30);
    let run = |cfg: Config| {
        fit_scores(
            &cfg,
            &y,
            &g,
            names(&["a", "b"]),
            GroupSource::Declared,
            &mut Ledger::unlimited(),
            &mut Noise::seeded(0),
        )
        .unwrap_err()
        .to_string()
    };
    assert!(run(config(0.0, 1.0, 0, [0.0, 1.0])).contains("bins"));
    assert!(run(config(-0.1, 1.0, 5, [0.0, 1.0])).contains("alpha"));
    assert!(run(config(0.0, 1.0, 5, [1.0, 1.0])).contains("range"));
    assert!(run(config(0.0, 0.0, 5, [0.0, 1.0])).contains("epsilon"));
    assert!(
        run(Config {
            range: None,
            ..Config::default()
        })
        .contains("range")
    );
    let mut bad = y.clone();
    bad[7] = f64::NAN;
    let e = fit_scores(
        &config(0.0, 1.0, 5, [0.0, 1.0]),
        &bad,
        &g,
        names(&["a", "b"]),
        GroupSource::Declared,
        &mut Ledger::unlimited(),
        &mut Noise::seeded(0),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("row 7"), "{e}");
}

/// Special cases: k = 1 gives a constant output (Δ_SP = 0); α ≥ 1 with ε = ∞ is binning exactly.
#[test]
fn single_bin_and_no_fairness_special_cases() {
    let (y, g) = two_groups(500);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let fit_with = |alpha: f64, k: usize| {
        fit_scores(
            &config(alpha, f64::INFINITY, k, [0.0, 1.0]),
            &y,
            &g,
            names(&["a", "b"]),
            GroupSource::Declared,
            &mut Ledger::unlimited(),
            &mut Noise::seeded(0),
        )
        .unwrap()
    };
    let constant = fit_with(0.3, 1).predict(&y, &g, &mut rng).unwrap().values;
    assert!(constant.iter().all(|&v| v == 0.5));
    let m = fit_with(1.0, 12);
    assert_eq!(m.solved_by, SolvedBy::Trivial);
    let grid = m.grid;
    assert_eq!(
        m.predict(&y, &g, &mut rng).unwrap().values,
        binning(&grid, &y)
    );
}

/// On the synthetic Law-like design (100,000 training and test rows, k = 36,
/// ε = ∞). With α = 0 every G_a pushes the training PMF p̂_a to the same q̃, and a monotone kernel
/// does not increase KS, so the population Δ_SP ≤ 2·max_a KS(p_a, p̂_a); by the DKW inequality for the
/// smallest group (≈ 4,100 rows) that is ≤ 2·0.035 with probability 1 − 1e-4. The test-set
/// two-sample KS adds ≤ 2.22·√(1/4100 + 1/85000) ≈ 0.036 at level 1e-4 per pair: bound 0.11.
/// At α = 1 the groups' outputs differ as the design's means do (about 0.3 in KS).
#[test]
fn law_like_end_to_end() {
    let design = LawLikeDesign::default();
    let train = design.generate(100_000, 21).unwrap();
    let test = design.generate(100_000, 22).unwrap();
    let Some(Target::Real(y_test)) = &test.target else {
        panic!()
    };
    let g_test = &test.groups.as_ref().unwrap().codes;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let run = |alpha: f64, rng: &mut ChaCha8Rng| {
        let model = fit(
            &config(alpha, f64::INFINITY, 36, [1.0, 4.0]),
            &train,
            &mut Ledger::unlimited(),
            &mut Noise::seeded(0),
        )
        .unwrap();
        assert_eq!(model.group_source, GroupSource::Data);
        let pred = model.predict(y_test, g_test, rng).unwrap();
        assert_eq!(pred.out_of_range, 0);
        (
            mse(y_test, &pred.values).unwrap(),
            ks_statistical_parity(&pred.values, g_test).unwrap(),
        )
    };
    let (mse_fair, ks_fair) = run(0.0, &mut rng);
    let (mse_free, ks_free) = run(1.0, &mut rng);
    assert!(ks_fair <= 0.11, "Δ_SP at α = 0: {ks_fair}");
    assert!(ks_free >= 0.25, "Δ_SP at α = 1: {ks_free}");
    assert!(mse_fair > mse_free);
    // The Chzhen et al. baseline is fair too (same bound, without the grid).
    let scores: Vec<f64> = train.features.column(0).to_vec();
    let codes = &train.groups.as_ref().unwrap().codes;
    let qa = QuantileAveraging::fit(&scores, codes, 4, &mut rng).unwrap();
    let out = qa.predict(y_test, g_test, &mut rng).unwrap();
    assert!(ks_statistical_parity(&out, g_test).unwrap() <= 0.11);
}
