//! Mechanism contracts: cost from sensitivity and scale, ledger charged before any noise, refusal
//! leaves the ledger and the noise stream untouched, outputs on the lattice with the right spread,
//! bad input is an error naming the parameter.

use dpfair_privacy::accounting::Accountant;
use dpfair_privacy::mechanisms::{
    Gaussian, Laplace, LocalLaplace, RandomizedResponse, SubsampledGaussianRun,
    exponential_mechanism, noisy_histogram, private_quantile, private_range,
};
use dpfair_privacy::{Budget, Cost, Ledger, Noise, PrivacyError, Relation};
use rand::Rng;

fn var(xs: &[f64]) -> f64 {
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
}

#[test]
fn laplace_charges_exactly_epsilon_and_has_variance_two_b_squared() {
    let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
    let mut noise = Noise::seeded(1);
    let l = Laplace::from_epsilon(2.0, 0.5).unwrap();
    let xs = l
        .release_vec(&mut ledger, &mut noise, "sums", &vec![3.25; 20_000])
        .unwrap();
    let e = &ledger.entries()[0];
    assert_eq!(ledger.entries().len(), 1);
    assert_eq!(e.cost, Cost::Pure { epsilon: 0.5 });
    assert_eq!(e.relation, Relation::Substitution);
    assert_eq!(e.norm, "l1");
    assert!(e.sensitivity > 2.0 && e.sensitivity < 2.0 * (1.0 + 1e-5));
    // b ≈ 4: Var = 2b² = 32. The sample variance of 20,000 Laplace draws has relative sd
    // √((κ−1)/n) = √(5/20000) ≈ 1.6% (kurtosis 6): allow 5 sd = 8%.
    assert!(
        (var(&xs) / 32.0 - 1.0).abs() < 0.08,
        "variance {}",
        var(&xs)
    );
    // Every output is a lattice point: a multiple of a power of two near Δ·2^-20/d.
    let g = 2f64.powi((2.0 * 2f64.powi(-20) / 20_000.0).log2().floor() as i32);
    assert!(xs.iter().all(|x| (x / g).fract() == 0.0));
    // from_scale: ε = Δ/b.
    match Laplace::from_scale(1.0, 4.0).unwrap().cost(1).unwrap() {
        Cost::Pure { epsilon } => assert!((epsilon - 0.25).abs() < 1e-6),
        c => panic!("{c:?}"),
    }
}

#[test]
fn refused_release_draws_no_noise_and_records_nothing() {
    let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
    let mut noise = Noise::seeded(2);
    let l = Laplace::from_epsilon(1.0, 0.8).unwrap();
    l.release(&mut ledger, &mut noise, "first", 1.0).unwrap();
    let before = ledger.clone();
    let mut twin = Noise::seeded(2);
    l.release(&mut Ledger::unlimited(), &mut twin, "first", 1.0)
        .unwrap();
    let err = l
        .release(&mut ledger, &mut noise, "second", 1.0)
        .unwrap_err();
    assert!(matches!(err, PrivacyError::BudgetExceeded { ref label, .. } if label == "second"));
    assert_eq!(ledger, before);
    // The refused release consumed no randomness: both streams are at the same point.
    assert_eq!(noise.next_u64(), twin.next_u64());
}

#[test]
fn gaussian_costs_and_spread() {
    let mut ledger = Ledger::unlimited();
    let mut noise = Noise::seeded(3);
    let g = Gaussian::from_sigma(1.0, 3.0).unwrap();
    let xs = g
        .release_vec(&mut ledger, &mut noise, "v", &vec![0.0; 20_000])
        .unwrap();
    // Var σ² = 9; sample variance relative sd √(2/n) = 1%: allow 5%.
    assert!((var(&xs) / 9.0 - 1.0).abs() < 0.05, "variance {}", var(&xs));
    match &ledger.entries()[0].cost {
        Cost::Zcdp { rho } => assert!((rho - 1.0 / 18.0).abs() < 1e-6, "{rho}"),
        c => panic!("{c:?}"),
    }
    let z = Gaussian::from_zcdp(2.0, 0.5).unwrap();
    assert!((z.sigma() - 2.0).abs() < 1e-12);
    assert_eq!(z.cost(3).unwrap(), Cost::Zcdp { rho: 0.5 });
    // Classical: only for ε < 1; records (ε, δ).
    assert!(Gaussian::classical(1.0, 1.0, 1e-5).is_err());
    let c = Gaussian::classical(1.0, 0.5, 1e-5).unwrap();
    assert!((c.sigma() - (2.0 * (1.25e5f64).ln()).sqrt() / 0.5).abs() < 1e-9);
    assert_eq!(
        c.cost(4).unwrap(),
        Cost::Approx {
            epsilon: 0.5,
            delta: 1e-5
        }
    );
    for bad in [
        Gaussian::from_sigma(0.0, 1.0),
        Gaussian::from_sigma(1.0, f64::NAN),
        Gaussian::from_zcdp(1.0, -1.0),
        Gaussian::classical(1.0, 0.5, 0.0),
    ] {
        assert!(matches!(bad, Err(PrivacyError::InvalidParameter { .. })));
    }
}

#[test]
fn analytic_gaussian_records_epsilon_delta_when_available() {
    match Gaussian::analytic(1.0, 1.0, 1e-5) {
        // The accounting stub has not landed yet.
        Err(PrivacyError::NotImplemented(_)) => {}
        Ok(g) => {
            // Balle & Wang: σ(ε = 1, δ = 1e-5, Δ = 1) ≈ 3.73, below the classical 4.84.
            assert!(g.sigma() > 3.0 && g.sigma() < 4.2, "{}", g.sigma());
            assert_eq!(
                g.cost(10).unwrap(),
                Cost::Approx {
                    epsilon: 1.0,
                    delta: 1e-5
                }
            );
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn analytic_gaussian_on_the_lattice_covers_the_discretisation_slack() {
    // The release is calibrated at (ε − 2dγ, δ·e^{−dγ}) (accounting::discretisation): σ is at
    // least the continuous analytic σ for the full (ε, δ), by no more than the relative size of
    // the slack (≈ 1e-10 here), and the ledger records the full (ε, δ) with a note saying so.
    let (eps, delta, dim) = (1.0, 1e-5, 50);
    let g = Gaussian::analytic(1.0, eps, delta).unwrap();
    let mut ledger = Ledger::new(Budget::approx(eps, delta).unwrap());
    let mut noise = Noise::seeded(11);
    g.release_vec(&mut ledger, &mut noise, "means", &vec![0.5; dim])
        .unwrap();
    let e = &ledger.entries()[0];
    assert_eq!(
        e.cost,
        Cost::Approx {
            epsilon: eps,
            delta
        }
    );
    let continuous =
        dpfair_privacy::accounting::analytic_gaussian_sigma(e.sensitivity, eps, delta).unwrap();
    assert!(e.scale >= continuous, "{} < {continuous}", e.scale);
    assert!(
        e.scale <= continuous * (1.0 + 1e-6),
        "{} vs {continuous}",
        e.scale
    );
    let note = e.note.as_deref().unwrap_or_default();
    assert!(
        note.contains("discrete Gaussian calibrated at (ε − "),
        "{note}"
    );
    // A budget of exactly (ε, δ) is not exceeded: the slack is paid inside it.
    assert!(ledger.total().unwrap().epsilon <= eps);
}

#[test]
fn release_rejects_non_finite_values_before_charging() {
    let mut ledger = Ledger::unlimited();
    let mut noise = Noise::seeded(4);
    let err = Laplace::from_epsilon(1.0, 1.0)
        .unwrap()
        .release_vec(&mut ledger, &mut noise, "x", &[1.0, f64::NAN])
        .unwrap_err();
    assert!(err.to_string().contains("entry 1"), "{err}");
    assert!(ledger.entries().is_empty());
    assert!(Laplace::from_epsilon(-1.0, 1.0).is_err());
    assert!(Laplace::from_scale(1.0, 0.0).is_err());
    // An empty release costs nothing.
    let out = Laplace::from_epsilon(1.0, 1.0)
        .unwrap()
        .release_vec(&mut ledger, &mut noise, "x", &[])
        .unwrap();
    assert!(out.is_empty() && ledger.entries().is_empty());
}

#[test]
fn dp_sgd_run_is_charged_once_and_refuses_extra_steps() {
    let mut ledger = Ledger::for_relation(Budget::unlimited(), Relation::AddRemove);
    let mut noise = Noise::seeded(5);
    let mut run =
        SubsampledGaussianRun::start(&mut ledger, "dp-sgd", 0.01, 1.1, 2.0, 3, Accountant::Rdp)
            .unwrap();
    assert_eq!(ledger.entries().len(), 1);
    let e = &ledger.entries()[0];
    assert_eq!(e.relation, Relation::AddRemove);
    assert!(matches!(e.cost, Cost::SubsampledGaussian { steps: 3, .. }));
    let mut all = Vec::new();
    for _ in 0..3 {
        let mut sum = vec![0.5; 5_000];
        run.add_noise(&mut noise, &mut sum).unwrap();
        all.extend(sum.iter().map(|x| x - 0.5));
    }
    // σ = z·C = 2.2: Var 4.84; relative sd of the sample variance √(2/15000) ≈ 1.2%: allow 6%.
    assert!(
        (var(&all) / 4.84 - 1.0).abs() < 0.06,
        "variance {}",
        var(&all)
    );
    let mut sum = vec![0.0; 5];
    assert!(run.add_noise(&mut noise, &mut sum).is_err());
    // Substitution: charged at z/2 with sensitivity 2C, on a replace-one ledger.
    let mut ledger = Ledger::unlimited();
    SubsampledGaussianRun::start(&mut ledger, "ar", 0.01, 1.1, 2.0, 3, Accountant::Rdp).unwrap();
    SubsampledGaussianRun::start_for(
        Relation::Substitution,
        &mut ledger,
        "sub",
        0.01,
        1.1,
        2.0,
        3,
        Accountant::Rdp,
    )
    .unwrap();
    let e = &ledger.entries()[1];
    assert_eq!((e.relation, e.sensitivity), (Relation::Substitution, 4.0));
    assert!(
        matches!(e.cost, Cost::SubsampledGaussian { noise_multiplier, .. } if noise_multiplier == 0.55)
    );
    // An add/remove run charged to the replace-one ledger is restated at the same cost.
    assert_eq!(ledger.entries()[0].relation, Relation::Substitution);
    assert_eq!(ledger.entries()[0].cost, e.cost);
    assert_eq!(sum, vec![0.0; 5]);
    for (q, z, c, t) in [
        (0.0, 1.0, 1.0, 1),
        (1.5, 1.0, 1.0, 1),
        (0.1, 0.0, 1.0, 1),
        (0.1, 1.0, -1.0, 1),
        (0.1, 1.0, 1.0, 0),
    ] {
        assert!(
            SubsampledGaussianRun::start(&mut ledger, "bad", q, z, c, t, Accountant::Rdp).is_err()
        );
    }
}

#[test]
fn local_laplace_and_randomized_response() {
    let mut noise = Noise::seeded(6);
    let ll = LocalLaplace::new(2.0, 1.0).unwrap();
    let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
    ll.charge_reports(&mut ledger, "reports", 1000).unwrap();
    assert_eq!(ledger.entries()[0].cost, Cost::Pure { epsilon: 1.0 });
    let xs: Vec<f64> = (0..20_000)
        .map(|_| ll.report(&mut noise, &[1.0])[0] - 1.0)
        .collect();
    // b = 2: Var 8, tolerance 8% as for Laplace above.
    assert!((var(&xs) / 8.0 - 1.0).abs() < 0.08, "{}", var(&xs));
    assert_eq!(ll.report(&mut noise, &[f64::NAN, 1.0]).len(), 2);

    let rr = RandomizedResponse::new(4, 1.0).unwrap();
    let p = rr.keep_probability();
    assert!((p - 1f64.exp() / (1f64.exp() + 3.0)).abs() < 1e-12);
    let n = 40_000;
    let truth: Vec<usize> = (0..n).map(|i| if i % 4 == 0 { 0 } else { 2 }).collect();
    let reports = rr
        .release(&mut Ledger::unlimited(), &mut noise, "rr", &truth)
        .unwrap();
    let kept = reports.iter().zip(&truth).filter(|(a, b)| a == b).count() as f64 / n as f64;
    // 5 binomial standard errors.
    assert!(
        (kept - p).abs() < 5.0 * (p * (1.0 - p) / n as f64).sqrt(),
        "{kept} vs {p}"
    );
    // Debiased frequencies: true (0.25, 0, 0.75, 0); each estimate has sd ≈ √(1/n)/(p − q) ≈ 0.009.
    let f = rr.estimate_frequencies(&reports).unwrap();
    for (est, want) in f.iter().zip([0.25, 0.0, 0.75, 0.0]) {
        assert!((est - want).abs() < 0.05, "{f:?}");
    }
    assert!(rr.respond(&mut noise, 4).is_err());
    assert!(RandomizedResponse::new(1, 1.0).is_err());
}

#[test]
fn histogram_exponential_mechanism_and_quantiles() {
    let mut noise = Noise::seeded(7);
    let mut ledger = Ledger::unlimited();
    let bins: Vec<usize> = (0..1000).map(|i| i % 3).collect();
    let h = noisy_histogram(&mut ledger, &mut noise, "h", &bins, 3, 1.0).unwrap();
    // Scale 2: |noise| > 40 has probability ≈ e^{-20}.
    assert!(
        h.iter()
            .zip([334, 333, 333])
            .all(|(a, b)| (a - b).abs() < 40),
        "{h:?}"
    );
    assert_eq!(ledger.entries()[0].sensitivity, 2.0);
    assert!(noisy_histogram(&mut ledger, &mut noise, "h", &[5], 3, 1.0).is_err());

    // A clear winner is chosen almost always at ε = 20: others have weight ≤ e^{-10·9}.
    let scores = [0.0, 10.0, 1.0];
    for _ in 0..20 {
        assert_eq!(
            exponential_mechanism(&mut ledger, &mut noise, "em", &scores, 1.0, 20.0).unwrap(),
            1
        );
    }
    // Equal scores: uniform. 30,000 draws over 3: 5 binomial sd ≈ 408.
    let mut counts = [0; 3];
    for _ in 0..30_000 {
        counts[exponential_mechanism(
            &mut Ledger::unlimited(),
            &mut noise,
            "em",
            &[1.0; 3],
            1.0,
            1.0,
        )
        .unwrap()] += 1;
    }
    assert!(
        counts.iter().all(|c| (c - 10_000i32).abs() < 408),
        "{counts:?}"
    );

    // Quantiles of 0..10000 on a coarse public domain.
    let values: Vec<f64> = (0..10_000).map(|i| i as f64 / 100.0).collect();
    let median = private_quantile(
        &mut ledger,
        &mut noise,
        "median",
        &values,
        0.5,
        1.0,
        (-1000.0, 1000.0),
        2001,
    )
    .unwrap();
    // Grid step 1; each grid step holds 100 values, so at ε = 1 the chosen rank is within a few
    // steps of the target (weight e^{-ε·gap/2} with gap ≥ 100 per step).
    assert!((median - 50.0).abs() <= 2.0, "{median}");
    let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
    let (lo, hi) = private_range(
        &mut ledger,
        &mut noise,
        "x",
        &values,
        1.0,
        (-1000.0, 1000.0),
    )
    .unwrap();
    assert!(
        (lo - 1.0).abs() <= 4.0 && (hi - 99.0).abs() <= 4.0,
        "({lo}, {hi})"
    );
    assert_eq!(ledger.entries().len(), 2);
    assert!((ledger.total().unwrap().epsilon - 1.0).abs() < 1e-12);
    assert!(
        private_range(
            &mut Ledger::unlimited(),
            &mut noise,
            "x",
            &values,
            1.0,
            (1.0, 1.0)
        )
        .is_err()
    );
    assert!(
        private_quantile(
            &mut Ledger::unlimited(),
            &mut noise,
            "x",
            &[f64::NAN],
            0.5,
            1.0,
            (0.0, 1.0),
            10
        )
        .is_err()
    );
}
