//! What a fit says about itself: the DP logistic regression compares its released weights with
//! the noise they carry (within twice the noise: likely no better than a constant), on data
//! without signal and with it.

use dpfair::data::Target;
use dpfair::estimators::{DpLogistic, LogisticMechanism, example_data};
use dpfair::{Estimator, Params, Session};

/// (norm of the released weights, norm of the noise alone) from the fit's report.
fn weights_and_noise(
    mechanism: LogisticMechanism,
    data: &dpfair::data::Dataset,
    seed: u64,
) -> (f64, f64) {
    let est = DpLogistic::params()
        .mechanism(mechanism)
        .epsilon(0.5)
        .substitution(true)
        .check()
        .unwrap();
    let mut session = Session::insecure_seeded(0.5, 1e-5, seed).unwrap();
    let fitted = est.fit(data, &mut session).unwrap();
    let report = est.report(&fitted, data).join("\n");
    let number_after = |key: &str| -> f64 {
        let rest = &report[report
            .find(key)
            .unwrap_or_else(|| panic!("{key}: {report}"))
            + key.len()..];
        rest.split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (
        number_after("released weights: norm "),
        number_after("would give about "),
    )
}

#[test]
fn released_weights_are_compared_with_their_noise() {
    // 400 rows with labels independent of the features: output perturbation's σ is large
    // (sensitivity 2/(nΛ) = 0.5, σ ≈ 3.5 per weight; below 60 rows it refuses to run at all,
    // the noise then swamping any weights) and there is no signal to find.
    let mut noise_only = example_data(400, 2, 1);
    let n = noise_only.n_rows();
    noise_only.target = Some(Target::Binary((0..n).map(|i| (i % 2) as u8).collect()));
    for seed in 0..3 {
        let (norm, noise) =
            weights_and_noise(LogisticMechanism::OutputPerturbation, &noise_only, seed);
        assert!(
            norm <= 2.0 * noise,
            "seed {seed}: norm {norm}, noise {noise}"
        );
    }
    // 20,000 rows with a real signal: the released weights stand out of the noise.
    let signal = example_data(20_000, 2, 2);
    for mechanism in [
        LogisticMechanism::OutputPerturbation,
        LogisticMechanism::DpSgd,
    ] {
        let (norm, noise) = weights_and_noise(mechanism, &signal, 5);
        assert!(
            norm > 2.0 * noise,
            "{mechanism:?}: norm {norm}, noise {noise}"
        );
    }
}

/// The number printed right after `key` in `report`.
fn number_after(report: &str, key: &str) -> f64 {
    let at = report
        .find(key)
        .unwrap_or_else(|| panic!("{key}: {report}"));
    report[at + key.len()..]
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|e| panic!("{key}: {e}: {report}"))
}

/// Every fair method prints one `fairness:` line and one `released …: norm …` line; their
/// numbers are the released values of the fitted model (recomputed here from the model).
#[test]
fn every_fit_says_what_it_targets_and_how_its_signal_compares_with_noise() {
    use dpfair::estimators::{CdpFair, Decoupled, Dp2dp, FdpFair};
    use dpfair::plugin::EtaModel;
    let data = example_data(3_000, 2, 7);
    let session = || Session::insecure_seeded(2.0, 1e-5, 3).unwrap();
    for eta in [EtaModel::Kernel, EtaModel::Logistic] {
        let est = CdpFair::params()
            .epsilon(2.0)
            .delta(1e-6)
            .frequencies(64)
            .eta_model(eta)
            .check()
            .unwrap();
        let fitted = est.fit(&data, &mut session()).unwrap();
        let report = est.report(&fitted, &data).join("\n");
        assert_eq!(
            report.matches("fairness: targets |DD| ≤ α = 0.1").count(),
            1,
            "{report}"
        );
        let (norm, noise, _) = fitted.model.own().unwrap().folds[0]
            .estimate
            .signal_and_noise();
        assert!(
            (number_after(&report, ": norm ") - norm).abs() < 1e-4,
            "{report}"
        );
        assert!(
            (number_after(&report, "would give about ") - noise).abs() < 1e-4,
            "{report}"
        );
        assert!(noise > 0.0, "{eta:?}: a private release has noise");
    }
    let est = FdpFair::params()
        .epsilon(2.0)
        .delta(1e-6)
        .sites(2)
        .frequencies(64)
        .check()
        .unwrap();
    let fitted = est.fit(&data, &mut session()).unwrap();
    let report = est.report(&fitted, &data).join("\n");
    let dd = number_after(&report, "monotone D̃D = ");
    let met = report.contains(&format!("within α: {};", dd.abs() <= 0.1));
    assert!(met, "the verdict follows the printed estimate: {report}");
    // The noise margin's bound is the estimate plus 1.645 printed standard deviations, and its
    // verdict follows it (rounding of the printed values: 1e-3).
    let (sd, bound) = (
        number_after(&report, ", sd "),
        number_after(&report, "bound "),
    );
    assert!((bound - (dd.abs() + 1.645 * sd)).abs() < 1e-3, "{report}");
    assert!(sd > 0.0, "the trees are noisy: {report}");
    let verdict = report.contains(&format!("bound {bound:.4}) within α: {}", bound <= 0.1));
    assert!(
        verdict,
        "the bound's verdict follows the printed bound: {report}"
    );
    let est = Decoupled::params().epsilon(3.0).check().unwrap();
    let fitted = est
        .fit(&data, &mut Session::insecure_seeded(3.0, 1e-5, 3).unwrap())
        .unwrap();
    let report = est.report(&fitted, &data).join("\n");
    let rates = &fitted.model.own().unwrap().rates;
    let norm = (rates.alpha.powi(2) + rates.beta.powi(2)).sqrt();
    assert!(
        (number_after(&report, "(α̃, β̃): norm ") - norm).abs() < 1e-4,
        "{report}"
    );
    assert!(
        report.contains("fairness: targets |DD| ≤ α = 0.1 (randomised flips"),
        "{report}"
    );
    let est = Dp2dp::params().epsilon(1.0).check().unwrap();
    let fitted = est
        .fit(&data, &mut Session::insecure_seeded(1.0, 1e-5, 3).unwrap())
        .unwrap();
    let report = est.report(&fitted, &data).join("\n");
    assert!(
        report.contains("fairness: targets unfairness U ≤ ρ"),
        "{report}"
    );
    let est = DpLogistic::params()
        .epsilon(1.0)
        .substitution(true)
        .check()
        .unwrap();
    let fitted = est
        .fit(&data, &mut Session::insecure_seeded(1.0, 1e-5, 3).unwrap())
        .unwrap();
    let report = est.report(&fitted, &data).join("\n");
    assert!(report.contains("fairness: targets nothing"), "{report}");
}
