//! CDP-Fair (Algorithm 5 of Xue & Yu): noise scales, fairness on the synthetic design,
//! baselines, accounting modes, bad input.

use dpfair::cdp_fair::{
    self, Accounting, Config, DdFloor, Method, fit, fit_fairness_only, fit_privacy_only,
    fit_unconstrained,
};
use dpfair::data::synthetic::{Design, FairBayesOracle, FdpFairDesign};
use dpfair::data::{Dataset, Groups, Target};
use dpfair::plugin::RffBasis;
use dpfair::plugin::kernel::Bandwidth;
use dpfair::plugin::release::{KernelSums, PiRelease, S1Accounting, S1Plan, classical_sigma};
use dpfair::privacy::{Budget, Cost, Ledger, Noise};
use ndarray::Array2;

fn synthetic(n: usize, seed: u64) -> Dataset {
    FdpFairDesign::default().generate(n, seed).unwrap()
}

/// A ledger that refuses nothing, for reporting what a procedure spends (`Ledger::unlimited()`
/// has δ = 0 and so refuses every approximate-DP release).
fn open_ledger() -> Ledger {
    Ledger::new(Budget::approx(f64::INFINITY, 0.999).unwrap())
}

fn entry_scale(ledger: &Ledger, label_part: &str) -> f64 {
    ledger
        .entries()
        .iter()
        .find(|e| e.label.contains(label_part))
        .unwrap_or_else(|| panic!("no ledger entry `{label_part}`:\n{}", ledger.summary()))
        .scale
}

/// `docs/reference-values.md#fdp-fair` noise-scale vectors, read off the ledger of the paper-mode releases.
#[test]
fn paper_noise_scales_match_the_spec_vectors() {
    // σ_π (n = 1000, ε = 1, δ = 1e−6) = 4 sqrt(2 ln(5e6))/1000 = 0.0222171; KDE multiplier
    // (n_a = 300, h = 0.2, d = 2) = 8 sqrt(2 ln(8e6))/(300·0.04) = 3.75884 on the n_a-normalised
    // functions, i.e. (n_a/n)·3.75884 on the n-normalised coefficients.
    let n = 1000;
    let x = Array2::from_shape_fn((n, 2), |(i, j)| ((i * 7 + j * 3) % 100) as f64 / 100.0);
    let a: Vec<u32> = (0..n).map(|i| u32::from(i < 300)).collect();
    let y: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
    let basis = RffBasis::new(2, 0.2, 8, 1).unwrap();
    let sums = KernelSums::compute(&basis, x.view(), &a, &y).unwrap();
    for (pi, kde) in [
        (PiRelease::Private, 3.75884),
        (PiRelease::Empirical, 1.83798),
    ] {
        let mut ledger = open_ledger();
        let plan = S1Plan {
            epsilon: 1.0,
            delta: 1e-6,
            accounting: S1Accounting::Paper,
            pi,
            c_k: 1.0,
            label_prefix: String::new(),
        };
        sums.release(&plan, &mut ledger, &mut Noise::seeded(1))
            .unwrap();
        if pi == PiRelease::Private {
            assert!((entry_scale(&ledger, "π̃_1") - 0.0222171).abs() < 5e-7);
        }
        let c_a = entry_scale(&ledger, "(F_0, F_1)") * n as f64 / 300.0;
        assert!((c_a - kde).abs() < 5e-5, "{pi:?}: {c_a} vs {kde}");
    }
}

#[test]
fn paper_dd_noise_uses_the_total_calibration_size() {
    // N = 5000, δ = (N/2)^{−2} = 1.6e−7, ε = 1: the code's σ = 2 sqrt(2 ln(1.25/δ))/(ň ε) with
    // ň = 2500 is 0.004507 (`docs/reference-values.md#fdp-fair`); the paper's ň_0 ∧ ň_1 = 750 would give 0.015024.
    let data = synthetic(5000, 3);
    let config = Config {
        accounting: Accounting::Paper,
        cross_fit: Some(false),
        bandwidth: Some(Bandwidth::Fixed { h: 0.2 }),
        n_frequencies: 64,
        ..Config::default()
    };
    let mut ledger = open_ledger();
    fit(&config, &data, &mut ledger, &mut Noise::seeded(2)).unwrap();
    assert!((entry_scale(&ledger, "S2") - 0.004507).abs() < 5e-7);
    // The same formula at the paper's ň_0 ∧ ň_1 = 750 (`docs/reference-values.md#fdp-fair`): 0.015024.
    assert!((classical_sigma(2.0 / 750.0, 1.0, 1.6e-7) - 0.015024).abs() < 5e-7);
    // The swept τ̃ sits on a calibration score: its location is recorded as non-private (`docs/deviations.md#fdp-fair-privacy-of-the-threshold-release`).
    let location = ledger
        .entries()
        .iter()
        .find(|e| e.label.contains("location of τ̃"))
        .expect("S2 location entry");
    assert_eq!(
        location.cost,
        Cost::Pure {
            epsilon: f64::INFINITY
        }
    );
    // Paper mode is not private: "known π" is recorded as ε = ∞.
    assert!(ledger.entries().iter().any(|e| e.cost
        == Cost::Pure {
            epsilon: f64::INFINITY
        }));
}

#[test]
fn strict_fit_spends_exactly_the_budget_with_public_noise_scales() {
    let data = synthetic(2000, 4);
    let config = Config {
        n_frequencies: 64,
        ..Config::default()
    };
    let delta = (1000.0f64).powi(-2);
    let mut ledger = Ledger::new(Budget::approx(1.0, delta).unwrap());
    let model = fit(&config, &data, &mut ledger, &mut Noise::seeded(5)).unwrap();
    let total = ledger.total().unwrap();
    assert!(
        (total.epsilon - 1.0).abs() < 1e-9 && (total.delta - delta).abs() < 1e-15,
        "{}",
        ledger.summary()
    );
    assert_eq!(ledger.entries().len(), 2);
    // The DD sensitivity is 2/m with m from π̃: ň = 1000, π̃_min ≈ 0.3 ⇒ m ≈ 300 − 4·sqrt(300) ≈ 230.
    let s2 = ledger
        .entries()
        .iter()
        .find(|e| e.label.contains("S2"))
        .unwrap();
    let m = 2.0 / s2.sensitivity;
    assert!((180.0..=290.0).contains(&m), "m = {m}");
    assert_eq!(model.folds.len(), 1);
    // The bandwidth is the public rule at n = 1000, d = 2, ε = 1.
    assert!((model.bandwidth - 1000f64.powf(-0.25)).abs() < 1e-12);
    // A second fit on the same ledger is refused: the budget is spent.
    assert!(fit(&config, &data, &mut ledger, &mut Noise::seeded(6)).is_err());
}

#[test]
fn strict_cross_fitting_halves_the_budget_per_fold() {
    let data = synthetic(2000, 7);
    let config = Config {
        cross_fit: Some(true),
        n_frequencies: 32,
        dd_floor: DdFloor::Public { min_group: 200 },
        ..Config::default()
    };
    let delta = 1e-6;
    let mut ledger = Ledger::new(Budget::approx(1.0, delta).unwrap());
    let config = Config {
        delta: Some(delta),
        ..config
    };
    let model = fit(&config, &data, &mut ledger, &mut Noise::seeded(8)).unwrap();
    assert_eq!(model.folds.len(), 2);
    // Per fold: S1 at (ε/2, δ/2), S2 (exponential mechanism) at pure ε/2.
    assert_eq!(ledger.entries().len(), 4);
    for e in ledger.entries() {
        let expected = if e.label.contains("S2") {
            Cost::Pure { epsilon: 0.5 }
        } else {
            Cost::Approx {
                epsilon: 0.5,
                delta: delta / 2.0,
            }
        };
        assert_eq!(e.cost, expected, "{}", e.label);
    }
    assert!((ledger.total().unwrap().epsilon - 1.0).abs() < 1e-9);
}

#[test]
fn strict_mode_refuses_non_private_steps() {
    let data = synthetic(500, 9);
    let mut ledger = open_ledger();
    for config in [
        Config {
            bandwidth: Some(Bandwidth::paper_cv()),
            ..Config::default()
        },
        Config {
            pi: Some(PiRelease::Empirical),
            ..Config::default()
        },
        Config {
            pi: Some(PiRelease::Skip),
            ..Config::default()
        },
        Config {
            alpha: -0.1,
            ..Config::default()
        },
        Config {
            epsilon: 0.0,
            ..Config::default()
        },
        Config {
            delta: Some(1.0),
            ..Config::default()
        },
        Config {
            tau_grid: 4,
            ..Config::default()
        },
    ] {
        assert!(
            fit(&config, &data, &mut ledger, &mut Noise::seeded(1)).is_err(),
            "{config:?}"
        );
    }
    assert!(ledger.entries().is_empty());
}

#[test]
fn bad_data_is_an_error_naming_the_problem() {
    let good = synthetic(200, 10);
    let mut ledger = open_ledger();
    let config = Config {
        n_frequencies: 16,
        ..Config::default()
    };
    let mut no_groups = good.clone();
    no_groups.groups = None;
    let mut three = good.clone();
    three.groups = Some(Groups {
        codes: vec![0; 200],
        names: vec!["a".into(), "b".into(), "c".into()],
    });
    let mut real = good.clone();
    real.target = Some(Target::Real(vec![0.0; 200]));
    let mut nan = good.clone();
    nan.features[[17, 1]] = f64::NAN;
    for (data, needle) in [
        (no_groups, "groups"),
        (three, "two groups"),
        (real, "binary"),
        (nan, "row 17"),
    ] {
        let err = fit(&config, &data, &mut ledger, &mut Noise::seeded(1))
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{err}");
    }
}

#[test]
fn model_roundtrips_and_predictions_are_probabilities() {
    let data = synthetic(1000, 11);
    let config = Config {
        n_frequencies: 64,
        cross_fit: Some(true),
        ..Config::default()
    };
    let model = fit(&config, &data, &mut open_ledger(), &mut Noise::seeded(12)).unwrap();
    let json = serde_json::to_string(&model).unwrap();
    let back: cdp_fair::Model = serde_json::from_str(&json).unwrap();
    assert_eq!(back, model);
    let codes = &data.groups.as_ref().unwrap().codes;
    let p = model.predict_proba(data.features.view(), codes).unwrap();
    assert!(p.iter().all(|v| (0.0..=1.0).contains(v)));
    assert_eq!(p, back.predict_proba(data.features.view(), codes).unwrap());
    let hard = model
        .predict(data.features.view(), codes, &mut Noise::seeded(1))
        .unwrap();
    assert!(
        hard.iter().zip(&p).all(|(h, q)| (*q == 0.0 && *h == 0)
            || (*q == 1.0 && *h == 1)
            || (*q > 0.0 && *q < 1.0))
    );
}

/// Mean test |DD| over repetitions on the synthetic design (§5.1.1; Prop. 5): at N ≥ 5,000 and
/// ε ≥ 1, mean |DD| ≤ α + 0.02 (the project's target). DD is the expected disparity of the randomised
/// classifier on an independent test set of 4,000 (`docs/deviations.md#fdp-fair-randomised-final-classifier`); its sampling sd is about
/// sqrt(0.25/1200 + 0.25/2800) ≈ 0.017 per repetition; with the calibration error of τ̃
/// (`O(ň^{−1/2} + log(grid)/(ň ε))`, Prop. 5 and the exponential mechanism) the sd per repetition
/// is ≈ 0.02 (BENCHMARKS.md), so 10 repetitions put ±0.006 (1 sd) on the mean.
#[test]
fn synthetic_mean_disparity_is_within_alpha_plus_002() {
    let test = synthetic(4000, 999);
    let alpha = 0.1;
    let reps = 10;
    let mut sum = 0.0;
    for r in 0..reps {
        let data = synthetic(5000, 100 + r);
        let config = Config {
            alpha,
            epsilon: 1.0,
            ..Config::default()
        };
        let mut ledger = Ledger::new(Budget::approx(1.0, (2500f64).powi(-2)).unwrap());
        let model = fit(&config, &data, &mut ledger, &mut Noise::seeded(200 + r)).unwrap();
        sum += model.expected_metrics(&test).unwrap().dd.abs();
    }
    let mean = sum / reps as f64;
    eprintln!("mean test |DD| over {reps} repetitions: {mean:.4} (α = {alpha})");
    assert!(mean <= alpha + 0.02, "mean |DD| = {mean}");
    // The constraint binds (intrinsic DD is −0.558): the disparity is not trivially 0 either.
    assert!(mean >= alpha - 0.06, "mean |DD| = {mean}");
}

/// The heavy version over the paper's grid (N ∈ {5000, 9000}, ε ∈ {1, 4}, α ∈ {0.05, 0.1, 0.3},
/// 20 repetitions each), with the oracle risk for reference. Run with
/// `cargo test -p dpfair --release --test cdp_fair -- --ignored --nocapture`.
#[test]
#[ignore = "minutes in release: the paper's grid, 20 repetitions per cell"]
fn synthetic_grid_disparity_and_error_against_the_oracle() {
    let oracle = FairBayesOracle::simulate(&FdpFairDesign::default(), 400_000, 7).unwrap();
    let test = synthetic(4000, 999);
    for n in [5000usize, 9000] {
        for eps in [1.0, 4.0] {
            for alpha in [0.05, 0.1, 0.3] {
                let (mut dd, mut err) = (0.0, 0.0);
                let reps = 20;
                for r in 0..reps {
                    let data = synthetic(n, 1000 + r);
                    let config = Config {
                        alpha,
                        epsilon: eps,
                        ..Config::default()
                    };
                    let model =
                        fit(&config, &data, &mut open_ledger(), &mut Noise::seeded(r)).unwrap();
                    let m = model.expected_metrics(&test).unwrap();
                    dd += m.dd.abs() / reps as f64;
                    err += m.error / reps as f64;
                }
                let fb = oracle.fair_bayes(alpha).unwrap();
                println!(
                    "N {n} ε {eps} α {alpha}: mean |DD| {dd:.4}, error {err:.4}, fair Bayes risk {:.4}",
                    fb.risk
                );
                assert!(dd <= alpha + 0.02);
            }
        }
    }
}

#[test]
fn baselines_behave_as_in_section_5_2() {
    let data = synthetic(5000, 21);
    let test = synthetic(4000, 22);
    let config = Config {
        alpha: 0.1,
        n_frequencies: 256,
        ..Config::default()
    };
    let mut ledger = open_ledger();
    let unconstrained =
        fit_unconstrained(&config, &data, &mut ledger, &mut Noise::seeded(1)).unwrap();
    let fair = fit_fairness_only(&config, &data, &mut ledger, &mut Noise::seeded(2)).unwrap();
    let private =
        fit_privacy_only(&config, &data, &mut open_ledger(), &mut Noise::seeded(3)).unwrap();
    assert_eq!(unconstrained.method, Method::Unconstrained);
    let mu = unconstrained.expected_metrics(&test).unwrap();
    let mf = fair.expected_metrics(&test).unwrap();
    let mp = private.expected_metrics(&test).unwrap();
    // Unfair classifiers inherit the intrinsic disparity (−0.558 for the Bayes rule); the
    // non-private fair one meets α up to test-set noise (sd ≈ 0.017, 3 sd).
    assert!(mu.dd < -0.4 && mp.dd < -0.3, "{mu:?} {mp:?}");
    assert!(mf.dd.abs() <= 0.1 + 0.05, "{mf:?}");
    // Near the Bayes risk 0.106 without the constraint; fairness costs accuracy (oracle 0.197 at α = 0.1).
    assert!(mu.error < 0.14 && mf.error > mu.error, "{mu:?} {mf:?}");
    // Two non-private entries (one per baseline), both ε = ∞.
    assert_eq!(ledger.entries().len(), 2);
}

/// Strict mode has no data-dependent refusal in S2: a calibration half without group 1 still
/// gives a model (its curve term is 0 over the public floor), and the budget is spent as usual.
#[test]
fn strict_s2_accepts_an_empty_calibration_group() {
    let mut data = synthetic(400, 30);
    let (train, cal) = dpfair::plugin::split::random_split(400, 200, 3);
    let codes = &mut data.groups.as_mut().unwrap().codes;
    for &i in &cal {
        codes[i] = 0;
    }
    for &i in train.iter().take(50) {
        codes[i] = 1;
    }
    let config = Config {
        split_seed: Some(3),
        n_frequencies: 16,
        delta: Some(1e-6),
        ..Config::default()
    };
    let mut ledger = Ledger::new(Budget::approx(1.0, 1e-6).unwrap());
    let model = fit(&config, &data, &mut ledger, &mut Noise::seeded(1)).unwrap();
    assert_eq!(model.folds.len(), 1);
    assert_eq!(ledger.entries().len(), 2);
}
