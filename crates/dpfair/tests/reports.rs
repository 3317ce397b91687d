//! What a fit says about itself: the DP logistic regression warns when its released weights are
//! within the noise they carry (no better than a constant, likely), and not otherwise.

use dpfair::data::Target;
use dpfair::estimators::{DpLogistic, LogisticMechanism, example_data};
use dpfair::{Estimator, Params, Session};

fn report(mechanism: LogisticMechanism, data: &dpfair::data::Dataset, seed: u64) -> String {
    let est = DpLogistic::params()
        .mechanism(mechanism)
        .epsilon(0.5)
        .substitution(true)
        .check()
        .unwrap();
    let mut session = Session::insecure_seeded(0.5, 1e-5, seed).unwrap();
    let fitted = est.fit(data, &mut session).unwrap();
    est.report(&fitted, data).join("\n")
}

#[test]
fn weights_within_the_noise_are_reported_and_signal_is_not() {
    // 400 rows with labels independent of the features: output perturbation's σ is large
    // (sensitivity 2/(nΛ) = 0.5, σ ≈ 3.5 per weight; below 60 rows it refuses to run at all,
    // the noise then swamping any weights) and there is no signal to find.
    let mut noise_only = example_data(400, 2, 1);
    let n = noise_only.n_rows();
    noise_only.target = Some(Target::Binary((0..n).map(|i| (i % 2) as u8).collect()));
    for seed in 0..3 {
        let r = report(LogisticMechanism::OutputPerturbation, &noise_only, seed);
        assert!(r.contains("within the noise"), "seed {seed}: {r}");
    }
    // 20,000 rows with a real signal: the released weights stand out of the noise.
    let signal = example_data(20_000, 2, 2);
    for mechanism in [
        LogisticMechanism::OutputPerturbation,
        LogisticMechanism::DpSgd,
    ] {
        let r = report(mechanism, &signal, 5);
        assert!(!r.contains("within the noise"), "{mechanism:?}: {r}");
    }
}
