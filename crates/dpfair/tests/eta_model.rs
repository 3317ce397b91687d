//! The logistic plug-in of CDP-Fair and FDP-Fair (`--eta-model`, docs/deviations.md#fdp-fair-logistic-plug-in):
//! on a high-dimensional design where the kernel estimator has no signal left it beats the
//! majority class on held-out rows and keeps the disparity level; selecting the kernel gives
//! exactly the library's (the paper's) kernel fit.

use dpfair::data::{Dataset, Groups, Target};
use dpfair::estimators::{CdpFair, FdpFair};
use dpfair::plugin::EtaModel;
use dpfair::{Estimator, Params, Session};
use dpfair_privacy::{Budget, Ledger, Noise};
use ndarray::Array2;
use rand::{RngExt, SeedableRng};

/// `n` rows of `d` binary features (one-hot-like, P(1) = 0.3), two groups (40 % in group 1),
/// and `P(y = 1) = σ(2.5 (x0 + x1 + x2 − x3 − x4) − 1 + 0.8 a)`: a linear signal in 5 of `d`
/// columns, base rate about 0.35 (the majority class is 0).
fn design(n: usize, d: usize, seed: u64) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let features =
        Array2::from_shape_fn((n, d), |_| f64::from(u8::from(rng.random::<f64>() < 0.3)));
    let codes: Vec<u32> = (0..n)
        .map(|_| u32::from(rng.random::<f64>() < 0.4))
        .collect();
    let y = (0..n)
        .map(|i| {
            let r = features.row(i);
            let logit = 2.5 * (r[0] + r[1] + r[2] - r[3] - r[4]) - 1.0 + 0.8 * f64::from(codes[i]);
            u8::from(rng.random::<f64>() < 1.0 / (1.0 + (-logit).exp()))
        })
        .collect();
    Dataset {
        features,
        feature_names: (0..d).map(|j| format!("x{j}")).collect(),
        groups: Some(Groups {
            codes,
            names: vec!["a".into(), "b".into()],
        }),
        target: Some(Target::Binary(y)),
    }
}

/// (accuracy, DD, majority-class accuracy, n_0, n_1) of expected predictions on `test`.
fn score(model: &dpfair::cdp_fair::Model, test: &Dataset) -> (f64, f64, f64, f64, f64) {
    let groups = &test.groups.as_ref().unwrap().codes;
    let Some(Target::Binary(y)) = &test.target else {
        panic!()
    };
    let p = model.predict_proba(test.features.view(), groups).unwrap();
    let n = y.len() as f64;
    let acc = p
        .iter()
        .zip(y)
        .map(|(p, &y)| if y == 1 { *p } else { 1.0 - p })
        .sum::<f64>()
        / n;
    let rate = y.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let mean = |g: u32| {
        let v: Vec<f64> = p
            .iter()
            .zip(groups)
            .filter(|(_, a)| **a == g)
            .map(|(p, _)| *p)
            .collect();
        (v.iter().sum::<f64>() / v.len() as f64, v.len() as f64)
    };
    let ((m0, n0), (m1, n1)) = (mean(0), mean(1));
    (acc, m1 - m0, rate.max(1.0 - rate), n0, n1)
}

/// Held-out tolerance on |DD|: 3 standard errors of a difference of two group means of values
/// in [0, 1] (sd ≤ 1/2) on the test set and again on the calibration half, plus the
/// exponential mechanism's 95 % bound (2Δ/ε)(ln G + ln 20), Δ = 2/m with m ≥ ň π_min / 2.
fn dd_tolerance(n0: f64, n1: f64, n_cal: f64, epsilon: f64) -> f64 {
    let test = 3.0 * 0.5 * (1.0 / n0 + 1.0 / n1).sqrt();
    let cal = 3.0 * 0.5 * (1.0 / (0.6 * n_cal) + 1.0 / (0.4 * n_cal)).sqrt();
    let m = 0.4 * n_cal / 2.0;
    test + cal + 2.0 * (2.0 / m) / epsilon * (2001f64.ln() + 20f64.ln())
}

#[test]
fn logistic_plug_in_beats_the_majority_class_in_high_dimension() {
    let (n, d, alpha, epsilon) = (6_000, 40, 0.1, 1.0);
    let train = design(n, d, 1);
    let test = design(4_000, d, 2);
    for (eta, seed) in [(EtaModel::Logistic, 3), (EtaModel::Auto, 4)] {
        let est = CdpFair::params()
            .alpha(alpha)
            .epsilon(epsilon)
            .eta_model(eta)
            .check()
            .unwrap();
        let mut session = Session::insecure_seeded(epsilon, 1e-6, seed).unwrap();
        let fitted = est.fit(&train, &mut session).unwrap();
        let model = fitted.model.own().expect("two groups: Algorithm 5's model");
        assert!(model.folds[0].estimate.kernel().is_none(), "{eta:?}");
        let (acc, dd, majority, n0, n1) = score(model, &test);
        // 3 standard errors of an accuracy on 4,000 rows (sd ≤ 1/2).
        let se = 3.0 * 0.5 / 4_000f64.sqrt();
        assert!(
            acc > majority + se,
            "{eta:?}: accuracy {acc}, majority {majority}"
        );
        let tol = dd_tolerance(n0, n1, (n - n / 2) as f64, epsilon);
        assert!(dd.abs() <= alpha + tol, "{eta:?}: DD {dd}, α + {tol}");
    }
}

/// FDP-Fair with the logistic and the DP-SGD plug-in at its sites
/// (`docs/deviations.md#fdp-fair-dp-sgd-plug-in`): on the same design each beats the majority
/// class by 3 standard errors of a held-out accuracy (sd ≤ 1/2, 4,000 rows) within the sites'
/// (ε, δ); the DP-SGD sites' ledgers hold their Laplace count and their run.
#[test]
fn fdp_fair_logistic_plug_ins_beat_the_majority_class() {
    let (d, alpha, epsilon) = (40, 0.1, 1.0);
    let train = design(9_000, d, 5);
    let test = design(4_000, d, 6);
    for eta in [EtaModel::Logistic, EtaModel::DpSgd] {
        let est = FdpFair::params()
            .alpha(alpha)
            .epsilon(epsilon)
            .sites(3)
            .eta_model(eta)
            .check()
            .unwrap();
        let mut session = Session::insecure_seeded(epsilon, 1e-6, 7).unwrap();
        let fitted = est.fit(&train, &mut session).unwrap();
        let (acc, _, majority, _, _) =
            score(fitted.model.own().expect("two groups: Algorithm 1"), &test);
        assert!(
            acc > majority + 3.0 * 0.5 / 4_000f64.sqrt(),
            "{eta:?}: accuracy {acc}, majority {majority}"
        );
        let total = fitted.ledger.total().unwrap();
        assert!(total.epsilon <= epsilon + 1e-9, "{eta:?}: {total:?}");
        if eta == EtaModel::DpSgd {
            let labels: Vec<&str> = fitted
                .ledger
                .entries()
                .iter()
                .map(|e| e.label.as_str())
                .collect();
            assert!(
                labels.iter().any(|l| l.contains("π̃ from the count")),
                "{labels:?}"
            );
            assert!(labels.iter().any(|l| l.contains("DP-SGD")), "{labels:?}");
        }
    }
}

/// Selecting the kernel through the estimator is the library's default (the paper's) kernel
/// fit, bit for bit: the same model and the same ledger from the same seeds.
#[test]
fn the_kernel_path_is_the_library_default() {
    let data = design(1_200, 5, 8);
    let config = dpfair::cdp_fair::Config {
        epsilon: 1.0,
        delta: Some(1e-6),
        n_frequencies: 64,
        ..Default::default()
    };
    assert_eq!(config.eta_model, EtaModel::Kernel);
    let mut l1 = Ledger::new(Budget::approx(1.0, 1e-6).unwrap());
    let direct = dpfair::cdp_fair::fit(&config, &data, &mut l1, &mut Noise::seeded(11)).unwrap();
    let est = CdpFair::params()
        .epsilon(1.0)
        .delta(1e-6)
        .frequencies(64)
        .eta_model(EtaModel::Kernel)
        .check()
        .unwrap();
    let mut l2 = Ledger::new(Budget::approx(1.0, 1e-6).unwrap());
    let via = est
        .fit_with(&data, &mut l2, &mut Noise::seeded(11))
        .unwrap();
    assert_eq!(Some(&direct), via.own());
    assert_eq!(l1.entries(), l2.entries());
    assert!(direct.folds[0].estimate.kernel().is_some());
}

/// The paper's procedure has no logistic plug-in: refused before any data is read.
#[test]
fn logistic_with_paper_accounting_is_refused() {
    let err = CdpFair::params()
        .eta_model(EtaModel::Logistic)
        .accounting(dpfair::cdp_fair::Accounting::Paper)
        .check()
        .unwrap_err();
    assert!(err.to_string().contains("eta_model"), "{err}");
}
