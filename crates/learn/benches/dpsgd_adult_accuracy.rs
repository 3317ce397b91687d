//! Test accuracy of DP-SGD logistic regression on UCI Adult (`adult.data`, the 30,162 complete
//! rows, one-hot encoded, standardised on the training part; a seeded 75/25 split), ε = 1,
//! δ = 1e-5 (RDP), the default schedule (expected batch 1,024, 50 epochs, clip 1.5, η = 0.01),
//! over `--reps` independent runs: prints the mean test accuracy and its standard error. Skips
//! (exit 0 with a message) when the data file is missing.
//!
//! `DPFAIR_DATA_DIR=… cargo bench -p dpfair-learn --bench dpsgd_adult_accuracy -- --reps 20`

use dpfair_data::{LoadOptions, Standardizer, Stratify, load_csv};
use dpfair_learn::validate::class_labels;
use dpfair_learn::{DpSgdConfig, fit_dp_sgd};
use dpfair_privacy::{Budget, Ledger, Noise};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reps: usize = args
        .iter()
        .position(|a| a == "--reps")
        .and_then(|i| args.get(i + 1))
        .map_or(20, |v| v.parse().expect("a whole number"));
    let Some(path) = dpfair_data::testdata::path_or_skip("adult.data") else {
        println!("adult.data not found: skipped");
        return;
    };
    let options = LoadOptions {
        target: Some("14".into()),
        sensitive: Some("9".into()),
        categorical: ["1", "3", "5", "6", "7", "8", "13"]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    };
    let data = load_csv(&path, &options).expect("adult.data loads").dataset;
    let parts = data
        .split(&[0.75, 0.25], 2024, Stratify::None)
        .expect("split");
    let (mut train, mut test) = (parts[0].clone(), parts[1].clone());
    let scale = Standardizer::fit(&train.features).expect("standardise");
    scale.apply(&mut train.features).expect("standardise");
    scale.apply(&mut test.features).expect("standardise");
    let (y, k) = class_labels(train.target.as_ref().expect("target")).expect("labels");
    let (y_test, _) = class_labels(test.target.as_ref().expect("target")).expect("labels");
    let cfg = DpSgdConfig::default();
    let mut accs = Vec::new();
    for rep in 0..reps {
        // The ledger certifies the relation the default configuration calibrates for
        // (add/remove, as Opacus); `Ledger::new` is replace-one and would charge the run 2ε.
        let mut ledger =
            Ledger::for_relation(Budget::approx(1.0, 1e-5).expect("budget"), cfg.relation);
        let mut noise = Noise::seeded(1000 + rep as u64);
        let fit =
            fit_dp_sgd(&cfg, train.features.view(), &y, k, &mut ledger, &mut noise).expect("fit");
        let pred = fit.model.predict(test.features.view()).expect("predict");
        let hits = pred.iter().zip(&y_test).filter(|(a, b)| a == b).count();
        accs.push(hits as f64 / y_test.len() as f64);
    }
    let m = accs.iter().sum::<f64>() / reps as f64;
    let sd = (accs.iter().map(|a| (a - m).powi(2)).sum::<f64>() / (reps as f64 - 1.0)).sqrt();
    println!(
        "{{\"train_rows\":{},\"test_rows\":{},\"reps\":{reps},\"mean_test_accuracy\":{m:.4},\
         \"sd\":{sd:.4},\"se\":{:.4}}}",
        y.len(),
        y_test.len(),
        sd / (reps as f64).sqrt()
    );
}
