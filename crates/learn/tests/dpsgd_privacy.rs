//! DP-SGD through the privacy crate: the ledger entry, the calibration against the accountant,
//! the per-step noise scale, and budget refusal.

use dpfair_learn::synth::gaussian_blobs;
use dpfair_learn::{Architecture, DpSgdConfig, LearnError, fit_dp_sgd};
use dpfair_privacy::accounting::{Accountant, sgm_epsilon, sgm_noise_multiplier};
use dpfair_privacy::mechanisms::SubsampledGaussianRun;
use dpfair_privacy::{Budget, Cost, Ledger, Noise, PrivacyError, Relation};

fn cfg(epsilon: f64, accountant: Accountant) -> DpSgdConfig {
    DpSgdConfig {
        epsilon,
        delta: 1e-5,
        accountant,
        epochs: 3,
        expected_batch: 50,
        learning_rate: 0.5,
        clip: 1.0,
        ..Default::default()
    }
}

#[test]
fn one_ledger_entry_calibrated_by_the_accountant() {
    let (x, y) = gaussian_blobs(1000, 4, 2, 3.0, 1);
    for acc in [Accountant::Rdp, Accountant::Gdp] {
        // DP-SGD's default relation (add/remove, as Opacus): a ledger for the same relation.
        let mut ledger =
            Ledger::for_relation(Budget::approx(2.0, 1e-5).unwrap(), Relation::AddRemove);
        let mut noise = Noise::seeded(3);
        let fit = fit_dp_sgd(&cfg(2.0, acc), x.view(), &y, 2, &mut ledger, &mut noise).unwrap();
        // Opacus schedule: K = ⌈1000/50⌉ = 20 steps per epoch, q = 1/20, T = 60.
        assert_eq!(fit.steps, 60);
        assert!((fit.sampling_rate - 0.05).abs() < 1e-15);
        let want = sgm_noise_multiplier(acc, 0.05, 60, 2.0, 1e-5).unwrap();
        assert_eq!(fit.noise_multiplier, want);
        // The calibrated z meets the target, and not by much (the search's tolerance is 1e-4
        // relative on z; 2% on ε is far looser than that implies).
        let eps = sgm_epsilon(acc, 0.05, want, 60, 1e-5).unwrap();
        assert!(eps <= 2.0 && eps > 1.96, "{acc:?}: ε = {eps}");
        let entries = ledger.entries();
        assert_eq!(entries.len(), 1);
        let e = &entries[0];
        assert_eq!(e.relation, Relation::AddRemove);
        assert_eq!(e.sensitivity, 1.0);
        assert_eq!(
            e.cost,
            Cost::SubsampledGaussian {
                sampling_rate: 0.05,
                noise_multiplier: want,
                steps: 60,
                accountant: acc,
            }
        );
        let total = ledger.total().unwrap();
        assert!(total.epsilon <= 2.0 * (1.0 + 1e-9), "{total:?}");
        // Private, but still a classifier: blobs 6σ apart are separable, so even a noisy model
        // at ε = 2 beats chance by far (0.8 against 0.5).
        let pred = fit.model.predict(x.view()).unwrap();
        let acc_rate = pred.iter().zip(&y).filter(|(a, b)| a == b).count() as f64 / 1000.0;
        assert!(acc_rate > 0.8, "accuracy {acc_rate}");
    }
}

#[test]
fn substitution_doubles_the_noise_multiplier() {
    let (x, y) = gaussian_blobs(1000, 4, 3, 3.0, 2);
    let mut c = cfg(2.0, Accountant::Rdp);
    c.relation = Relation::Substitution;
    c.architecture = Architecture::Mlp { hidden: 4 };
    let mut ledger = Ledger::new(Budget::approx(f64::INFINITY, 1e-5).unwrap());
    let fit = fit_dp_sgd(&c, x.view(), &y, 3, &mut ledger, &mut Noise::seeded(5)).unwrap();
    let add_remove = sgm_noise_multiplier(Accountant::Rdp, 0.05, 60, 2.0, 1e-5).unwrap();
    assert_eq!(fit.noise_multiplier, 2.0 * add_remove);
    // The ledger certifies replace-one neighbours, and at the target ε (sensitivity 2C, charged
    // as add/remove at z/2 = the add/remove multiplier).
    assert_eq!(ledger.entries()[0].relation, Relation::Substitution);
    let spent = ledger.total().unwrap().epsilon;
    assert!(
        spent <= 2.0 * (1.0 + 1e-3),
        "substitution run spent ε = {spent}"
    );
}

#[test]
fn over_budget_runs_are_refused_before_training() {
    let (x, y) = gaussian_blobs(500, 3, 2, 3.0, 3);
    let mut ledger = Ledger::new(Budget::approx(1.0, 1e-5).unwrap());
    let mut c = cfg(1.0, Accountant::Rdp);
    c.noise_multiplier = Some(0.3); // far too little noise for ε = 1
    let err = fit_dp_sgd(&c, x.view(), &y, 2, &mut ledger, &mut Noise::seeded(1)).unwrap_err();
    assert!(matches!(
        err,
        LearnError::Privacy(PrivacyError::BudgetExceeded { .. })
    ));
    assert!(ledger.entries().is_empty());
}

#[test]
fn per_step_noise_has_standard_deviation_z_times_clip() {
    // The noise the run adds to a zero sum, over many coordinates: the sample standard deviation
    // of m draws has standard error σ/√(2m); 5 of them at m = 20,000 is 2.5%. The run may round
    // up to its lattice, which adds at most a hair above zC (below 1% for these values).
    let (z, clip) = (1.3, 1.5);
    let mut ledger = Ledger::new(Budget::approx(f64::INFINITY, 1e-5).unwrap());
    let mut run =
        SubsampledGaussianRun::start(&mut ledger, "t", 0.01, z, clip, 2, Accountant::Rdp).unwrap();
    let mut noise = Noise::seeded(9);
    let mut sum = vec![0.0; 20_000];
    run.add_noise(&mut noise, &mut sum).unwrap();
    let m = sum.len() as f64;
    let mean = sum.iter().sum::<f64>() / m;
    let sd = (sum.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt();
    let want = z * clip;
    assert!(
        (sd / want - 1.0).abs() < 5.0 / (2.0 * m).sqrt() + 0.01,
        "sd {sd} vs {want}"
    );
    // The run refuses a step it was not charged for.
    run.add_noise(&mut noise, &mut sum).unwrap();
    assert!(run.add_noise(&mut noise, &mut sum).is_err());
}

#[test]
fn non_finite_and_out_of_range_features_are_refused_before_any_charge() {
    let (x, y) = gaussian_blobs(200, 3, 2, 3.0, 4);
    for (bad, what) in [
        (f64::NAN, "NaN"),
        (f64::INFINITY, "inf"),
        (1e39, "beyond f32"),
    ] {
        let mut x = x.clone();
        x[[17, 2]] = bad;
        let mut ledger = Ledger::new(Budget::approx(f64::INFINITY, 1e-5).unwrap());
        let err = fit_dp_sgd(
            &cfg(1.0, Accountant::Rdp),
            x.view(),
            &y,
            2,
            &mut ledger,
            &mut Noise::seeded(1),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("17") && msg.contains('2'),
            "{what}: the error names row 17, column 2: {msg}"
        );
        assert!(ledger.entries().is_empty(), "{what}: charged");
    }
}
