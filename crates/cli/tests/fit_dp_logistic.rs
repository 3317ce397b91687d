//! `dpfair fit dp-logistic` end to end: fit (DP-SGD and output perturbation, binary and
//! multi-class), the model file's ledger, `dpfair predict` on the saved model, and bad input.

mod common;
use common::{bad, dpfair, ok, scratch, stderr};
use std::path::Path;

/// 3,000 rows on a low-discrepancy grid of [0, 10]²: binary label "yes" iff a + b > 10, and a
/// three-class label by which third of [0, 20] a + b falls in. Deterministic, noise-free.
fn write_csv(path: &Path) {
    let mut s = String::from("a,b,label,tier\n");
    for i in 0..3000 {
        let a = 10.0 * ((i as f64) * 0.618_033_988_75).fract();
        let b = 10.0 * ((i as f64) * 0.414_213_562_37 + 0.1).fract();
        let label = if a + b > 10.0 { "yes" } else { "no" };
        let tier = if a + b < 20.0 / 3.0 {
            "low"
        } else if a + b < 40.0 / 3.0 {
            "mid"
        } else {
            "high"
        };
        s.push_str(&format!("{a:.4},{b:.4},{label},{tier}\n"));
    }
    std::fs::write(path, s).unwrap();
}

/// Fraction of predictions equal to the CSV's `column`.
fn accuracy(pred: &Path, data: &Path, column: usize) -> f64 {
    let p = std::fs::read_to_string(pred).unwrap();
    let d = std::fs::read_to_string(data).unwrap();
    let pl: Vec<&str> = p
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    let dl: Vec<&str> = d
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(column).unwrap())
        .collect();
    assert_eq!(pl.len(), dl.len());
    pl.iter().zip(&dl).filter(|(a, b)| a == b).count() as f64 / pl.len() as f64
}

#[test]
fn dp_sgd_binary_fits_saves_and_predicts() {
    let dir = scratch("fit-dp-logistic", "sgd");
    let (data, model, pred) = (dir.join("d.csv"), dir.join("m.json"), dir.join("p.csv"));
    write_csv(&data);
    let out = dpfair(&[
        "fit",
        "dp-logistic",
        "--data",
        data.to_str().unwrap(),
        "--target",
        "label",
        "--features",
        "a,b",
        "--bounds",
        "a:0:10,b:0:10",
        "--epsilon",
        "1",
        // Seeded release and public randomness: the accuracy bound below is about the method, not one OS draw.
        "--insecure-seeded-noise",
        "3",
        "--out",
        model.to_str().unwrap(),
    ]);
    ok(&out);
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(file["method"], "dp-logistic");
    assert_eq!(file["model"]["mechanism"], "dp-sgd");
    let entries = file["ledger"]["entries"].as_array().unwrap();
    let sgd: Vec<_> = entries
        .iter()
        .filter(|e| e["cost"]["unit"] == "subsampled-gaussian")
        .collect();
    assert_eq!(sgd.len(), 1, "{entries:?}");
    // Replace-one by default, like every method (so the held-out check runs, on 10% of rows).
    assert_eq!(file["ledger"]["relation"], "substitution");
    assert_eq!(sgd[0]["relation"], "substitution");
    // Defaults on the 2,700 fit rows: batch = 2700/16 = 168 → ⌈2700/168⌉ = 17 steps per
    // epoch, 30 epochs.
    assert_eq!(file["model"]["steps"], 17 * 30);
    ok(&dpfair(&[
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--out",
        pred.to_str().unwrap(),
    ]));
    // A linear boundary, noise-free labels, 3,000 rows at ε = 1: the private model must be
    // far better than the majority rate (0.5); 0.9 leaves room for the noise.
    let acc = accuracy(&pred, &data, 2);
    assert!(acc > 0.9, "accuracy {acc}");
}

#[test]
fn output_perturbation_multiclass() {
    let dir = scratch("fit-dp-logistic", "op");
    let (data, model, pred) = (dir.join("d.csv"), dir.join("m.json"), dir.join("p.csv"));
    write_csv(&data);
    let out = dpfair(&[
        "fit",
        "dp-logistic",
        "--data",
        data.to_str().unwrap(),
        "--target",
        "tier",
        "--features",
        "a,b",
        "--bounds",
        "a:0:10,b:0:10",
        "--epsilon",
        "10",
        // Reproducible noise: the accuracy below is that of one fixed draw, not a tail bound.
        "--insecure-seeded-noise",
        "4",
        "--method",
        "output-perturbation",
        "--l2",
        "1e-3",
        "--out",
        model.to_str().unwrap(),
    ]);
    ok(&out);
    let err = stderr(&out);
    assert!(err.contains("Λ = 0.001") && err.contains("R = 1"), "{err}");
    ok(&dpfair(&[
        "predict",
        "--model",
        model.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--out",
        pred.to_str().unwrap(),
    ]));
    // Three ordered classes of a + b: the middle class covers 5/9 of the square (the outer
    // triangles 2/9 each), so predicting it always scores 0.556. Output perturbation is weak at
    // n = 3,000 (Δ = 2√2/(nΛ) ≈ 0.94, σ ≈ 0.5 per weight at ε = 10); the non-private fit at this
    // Λ scores 0.92. With OS noise the accuracy varies from draw to draw (60 draws: 0.62–0.97,
    // median 0.86, 2 below the former threshold 0.7, so the test failed about one run in 30);
    // the noise here is seeded, so the run is one fixed draw (0.68, in the lower tail), and the
    // model must beat the constant predictor by 0.05.
    let acc = accuracy(&pred, &data, 3);
    assert!(acc > 5.0 / 9.0 + 0.05, "accuracy {acc}");
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let dir = scratch("fit-dp-logistic", "bad");
    let (data, model) = (dir.join("d.csv"), dir.join("m.json"));
    write_csv(&data);
    let run = |extra: &[&str]| {
        let mut a = vec![
            "fit",
            "dp-logistic",
            "--data",
            data.to_str().unwrap(),
            "--target",
            "label",
            "--features",
            "a,b",
            "--out",
            model.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        dpfair(&a)
    };
    for (extra, needle) in [
        (&["--epsilon", "-1"][..], "epsilon"),
        // Learner errors name the command-line option.
        (&["--epsilon", "1", "--clip", "0"][..], "--clip"),
        (&["--epsilon", "1", "--epochs", "0"][..], "--epochs"),
        (&["--epsilon", "1", "--batch", "0"][..], "--batch"),
        (
            &[
                "--epsilon",
                "0.01",
                "--method",
                "output-perturbation",
                "--l2",
                "1e-5",
                // Public bounds: private ones at ε = 0.01 would be refused first.
                "--bounds",
                "a:0:10,b:0:10",
            ][..],
            "swamp",
        ),
    ] {
        let err = bad(&run(extra));
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
}

#[test]
fn gdp_accountant_is_flagged_as_uncertified() {
    let dir = scratch("fit-dp-logistic", "gdp");
    let (data, model) = (dir.join("d.csv"), dir.join("m.json"));
    write_csv(&data);
    let out = dpfair(&[
        "fit",
        "dp-logistic",
        "--data",
        data.to_str().unwrap(),
        "--target",
        "label",
        "--features",
        "a,b",
        "--epsilon",
        "1",
        "--epochs",
        "2",
        "--accountant",
        "gdp",
        // Public bounds: the GDP entry is then the ledger's first (#1).
        "--bounds",
        "a:0:10,b:0:10",
        "--seed",
        "5",
        "--out",
        model.to_str().unwrap(),
    ]);
    ok(&out);
    let err = stderr(&out);
    assert!(
        err.contains("warning: --accountant gdp is a central-limit approximation"),
        "{err}"
    );
    assert!(err.contains("NOT certified: GDP approximation"), "{err}");
    let report = ok(&dpfair(&["ledger", model.to_str().unwrap()]));
    assert!(report.contains("guarantee: NOT CERTIFIED"), "{report}");
    // The flag names the DP-SGD entry (after the private feature bounds' entries).
    let sgd_row = report
        .lines()
        .find(|l| l.contains("DP-SGD"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no DP-SGD entry in {report}"));
    assert!(
        report.contains(&format!("NOT a certified bound: #{sgd_row}")),
        "{report}"
    );
}
