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
