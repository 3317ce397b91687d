//! Output perturbation (Say et al., Phase 1, output perturbation, `docs/deviations.md#dp2dp-phase-1-mechanism`): calibration, ledger, refusal, utility.

use dpfair_learn::synth::gaussian_blobs;
use dpfair_learn::{
    LearnError, LogisticConfig, OutputPerturbationConfig, fit_logistic, fit_output_perturbation,
};
use dpfair_privacy::accounting::analytic_gaussian_sigma;
use dpfair_privacy::{Budget, Cost, Ledger, Noise};

#[test]
fn sensitivity_and_noise_follow_chaudhuri_et_al() {
    let c = OutputPerturbationConfig {
        l2: 0.01,
        feature_bound: 2.0,
        ..Default::default()
    };
    for (k, lipschitz) in [(2usize, 2.0), (4, 2.0 * 2f64.sqrt())] {
        let (l, delta2, g) = c.calibrate(5000, 7, k).unwrap();
        assert!((l - lipschitz).abs() < 1e-15);
        let p = if k == 2 { 8.0 } else { 4.0 * 8.0 };
        // 2L/(nΛ) plus the solver-tolerance term 2·tol·√p/Λ.
        let want = 2.0 * lipschitz / (5000.0 * 0.01) + 2.0 * 1e-10 * f64::sqrt(p) / 0.01;
        assert!((delta2 - want).abs() < 1e-15);
        let sigma = analytic_gaussian_sigma(want, 1.0, 1e-5).unwrap();
        assert!((g.sigma() / sigma - 1.0).abs() < 1e-12);
    }
}

#[test]
fn release_is_charged_once_and_predicts_well() {
    let (x, y) = gaussian_blobs(20_000, 5, 3, 3.0, 4);
    // R = 5: the rows' norms are about √(9 + 5 + 1) ≈ 3.9, so few are clipped.
    let cfg = OutputPerturbationConfig {
        feature_bound: 5.0,
        l2: 1e-2,
        ..Default::default()
    };
    let mut ledger = Ledger::new(Budget::approx(1.0, 1e-5).unwrap());
    let fit =
        fit_output_perturbation(&cfg, x.view(), &y, 3, &mut ledger, &mut Noise::seeded(2)).unwrap();
    assert_eq!(ledger.entries().len(), 1);
    let e = &ledger.entries()[0];
    assert_eq!(
        e.cost,
        Cost::Approx {
            epsilon: 1.0,
            delta: 1e-5
        }
    );
    assert!(e.sensitivity >= fit.sensitivity && e.scale >= fit.sigma);
    assert_eq!(fit.model.row_clip, Some(5.0));
    // Δ = 2√2·5/(20000·1e-2) ≈ 0.071, σ ≈ 0.3 per weight at ε = 1: small noise on 6σ-separated
    // blobs, so the accuracy must stay within 0.05 of the non-private fit at the same Λ
    // (0.05 = 1,000 rows; a sanity-level bound, not a derived one).
    let exact = fit_logistic(
        &LogisticConfig {
            l2: 1e-2,
            ..Default::default()
        },
        x.view(),
        &y,
        3,
    )
    .unwrap();
    let acc = |p: Vec<u32>| p.iter().zip(&y).filter(|(a, b)| a == b).count() as f64 / 20_000.0;
    let (got, want) = (
        acc(fit.model.predict(x.view()).unwrap()),
        acc(exact.predict(x.view()).unwrap()),
    );
    assert!(got > want - 0.05, "{got} vs {want}");
}

#[test]
fn refuses_when_noise_swamps_the_weights() {
    let (x, y) = gaussian_blobs(200, 5, 2, 3.0, 4);
    let cfg = OutputPerturbationConfig {
        l2: 1.0 / 200.0,
        epsilon: 0.5,
        ..Default::default()
    };
    let mut ledger = Ledger::new(Budget::approx(1.0, 1e-5).unwrap());
    let err = fit_output_perturbation(&cfg, x.view(), &y, 2, &mut ledger, &mut Noise::seeded(2))
        .unwrap_err();
    let LearnError::NoiseSwamps(msg) = err else {
        panic!("{err:?}")
    };
    assert!(
        msg.contains("Λ = 0.005") && msg.contains("R = 1") && msg.contains("σ ="),
        "{msg}"
    );
    assert!(ledger.entries().is_empty(), "refused before any charge");
}
