//! `dpfair predict`, `evaluate` and `ledger` through the built binary: a model file round trip,
//! evaluation figures against hand-computed values, and bad input that exits 2 without a panic.

use dpfair::model::{ConstantClassifier, FittedModel, ModelFile};
use dpfair_data::{LoadOptions, load_csv};
use dpfair_privacy::{Budget, Ledger};
use std::path::{Path, PathBuf};

mod common;
use common::{dpfair, stderr, stdout, write};

fn scratch(test: &str) -> PathBuf {
    common::scratch("cli", test)
}

/// `dpfair evaluate` on `data` and `pred`, which must succeed: its report.
fn evaluate(data: &Path, pred: &Path, target: &str, sensitive: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "evaluate",
        "--data",
        data.to_str().unwrap(),
        "--predictions",
        pred.to_str().unwrap(),
        "--target",
        target,
    ];
    if !sensitive.is_empty() {
        args.extend(["--sensitive", sensitive]);
    }
    args.extend_from_slice(extra);
    let o = dpfair(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// The number after `name: ` in the evaluate report.
fn figure(report: &str, name: &str) -> f64 {
    let line = report
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no `{name}` in\n{report}"));
    line.rsplit(": ").next().unwrap().trim().parse().unwrap()
}

const TRAIN: &str = "x,color,grp,y\n1.0,red,a,yes\n2.0,blue,b,no\n3.0,red,b,no\n4.0,green,a,yes\n";

/// A constant-classifier model over TRAIN's schema, written to `dir/model.json`.
fn model(dir: &Path, randomized: bool) -> PathBuf {
    let train = write(dir, "train.csv", TRAIN);
    let l = load_csv(
        &train,
        &LoadOptions {
            target: Some("y".into()),
            sensitive: Some("grp".into()),
            categorical: vec!["color".into()],
            ..Default::default()
        },
    )
    .unwrap();
    let m = ConstantClassifier::new(vec![0.3, 0.7], randomized).unwrap();
    let f = ModelFile::new(
        l.schema,
        Ledger::new(Budget::pure(1.0).unwrap()),
        &serde_json::json!({ "probabilities": [0.3, 0.7] }),
        FittedModel::ConstantClassifier(m),
    )
    .unwrap();
    let p = dir.join("model.json");
    f.save(&p).unwrap();
    p
}

// Evaluation rows: group a has y = yes, yes, no, no; group b has y = yes, no, no, no; the last
// row has a missing `x`, so its prediction is empty and evaluate leaves it out.
const NEW: &str = "id,grp,color,x,y\n\
                   1,a,red,1,yes\n2,a,blue,2,yes\n3,a,red,3,no\n4,a,green,4,no\n\
                   5,b,red,5,yes\n6,b,blue,6,no\n7,b,red,7,no\n8,b,red,8,no\n\
                   9,b,red,?,yes\n";

#[test]
fn predict_then_evaluate_round_trip() {
    let dir = scratch("roundtrip");
    let m = model(&dir, false);
    let new = write(&dir, "new.csv", NEW);
    let pred = dir.join("pred.csv");
    let o = dpfair(&[
        "predict",
        "--model",
        m.to_str().unwrap(),
        "--data",
        new.to_str().unwrap(),
        "--out",
        pred.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 of 9 rows have a missing value"),
        "{}",
        stderr(&o)
    );
    let text = std::fs::read_to_string(&pred).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "prediction,p_no,p_yes");
    assert_eq!(lines.len(), 10, "one line per input row plus the header");
    assert!(lines[1..9].iter().all(|l| *l == "yes,0.3,0.7"), "{text}");
    assert_eq!(lines[9], ",,");

    let r = evaluate(&new, &pred, "y", "grp", &[]);
    // Everything predicted `yes`: accuracy 3/8; both groups selected at rate 1.
    assert_eq!(figure(&r, "accuracy"), 0.375);
    // 3 `yes` and 5 `no`: always `no` scores 5/8, and the report says the model does worse.
    assert_eq!(figure(&r, "majority_class_accuracy"), 0.625);
    assert!(
        r.contains("no better than predicting the majority class"),
        "{r}"
    );
    assert_eq!(figure(&r, "demographic_parity_difference"), 0.0);
    // Expected accuracy from p_yes = 0.7: (3·0.7 + 5·0.3) / 8 = 0.45.
    assert!((figure(&r, "expected_accuracy") - 0.45).abs() < 1e-6, "{r}");
    assert!(r.contains("rows evaluated: 8 of 9"), "{r}");
    assert!(r.contains("0.375000"), "six decimals: {r}");

    let o = dpfair(&["ledger", m.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = stdout(&o);
    assert!(
        r.contains("budget: ε = 1") && r.contains("constant-classifier"),
        "{r}"
    );
    assert!(
        r.contains("categorical `color` levels (found in the data): blue, green, red"),
        "{r}"
    );
    assert!(
        r.contains("sensitive `grp` groups (found in the data): a, b"),
        "{r}"
    );
}

#[test]
fn randomized_predictions_repeat_with_the_seed() {
    let dir = scratch("seeded");
    let m = model(&dir, true);
    let mut rows = String::from("x,color\n");
    for i in 0..200 {
        rows.push_str(&format!("{i},red\n"));
    }
    let new = write(&dir, "new.csv", &rows);
    let run = |seed: &str, out: &str| {
        let out = dir.join(out);
        let o = dpfair(&[
            "predict",
            "--model",
            m.to_str().unwrap(),
            "--data",
            new.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--seed",
            seed,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(out).unwrap()
    };
    let (a, b, c) = (run("1", "a.csv"), run("1", "b.csv"), run("2", "c.csv"));
    assert_eq!(a, b);
    assert_ne!(a, c);
    let yes = a.lines().skip(1).filter(|l| l.starts_with("yes")).count();
    assert!(
        yes > 0 && yes < 200,
        "a sampled mix of labels, got {yes} yes of 200"
    );
}

#[test]
fn evaluate_binary_figures_by_hand() {
    let dir = scratch("binary");
    let data = write(&dir, "d.csv", NEW);
    // Group a predicted yes, no, yes, no; group b yes, yes, yes, no, yes.
    let pred = write(
        &dir,
        "p.csv",
        "prediction\nyes\nno\nyes\nno\nyes\nyes\nyes\nno\nyes\n",
    );
    let r = evaluate(&data, &pred, "y", "grp", &[]);
    // The evaluation reads only y and grp, so row 9 (missing x, y = yes, group b) counts.
    // Correct: a: yes✓ no✗ yes✗ no✓ (2 of 4); b: yes✓ yes✗ yes✗ no✓ yes✓ (3 of 5) → 5/9.
    assert!((figure(&r, "accuracy") - 5.0 / 9.0).abs() < 1e-6, "{r}");
    // Selection rates: a 2/4, b 4/5 → difference 0.3, ratio 0.625.
    assert!(
        (figure(&r, "demographic_parity_difference") - 0.3).abs() < 1e-6,
        "{r}"
    );
    assert!(
        (figure(&r, "demographic_parity_ratio") - 0.625).abs() < 1e-6,
        "{r}"
    );
    // TPR: a's positives (rows 1, 2) predicted yes, no → 1/2; b's (rows 5, 9) yes, yes → 1.
    assert_eq!(figure(&r, "equal_opportunity_difference"), 0.5);
    assert!(r.contains("rows evaluated: 9 of 9"), "{r}");
    assert!(r.contains("per group:"));
}

#[test]
fn evaluate_multiclass_and_regression_by_hand() {
    let dir = scratch("multi");
    let data = write(
        &dir,
        "d.csv",
        "g,c,v\na,x,1.0\na,y,2.0\na,z,3.0\nb,x,2.0\nb,y,3.0\nb,x,4.0\n",
    );
    let pred = write(&dir, "p.csv", "prediction\nx\ny\nz\nx\nx\nx\n");
    let r = evaluate(&data, &pred, "c", "g", &[]);
    assert!(r.starts_with("task: multiclass"), "{r}");
    // Correct: x y z | x ✗ x → 5 of 6. Rates of x: a 1/3, b 1 → U = 2/3.
    assert!((figure(&r, "accuracy") - 5.0 / 6.0).abs() < 1e-6);
    // Labels x x y y z x: `x` is the majority, 3 of 6.
    assert!(
        (figure(&r, "majority_class_accuracy") - 0.5).abs() < 1e-9,
        "{r}"
    );
    assert!(
        (figure(&r, "multiclass_unfairness U") - 2.0 / 3.0).abs() < 1e-6,
        "{r}"
    );

    // Regression: predictions a {1, 2, 3}, b {2, 3, 4}: KS = 1/3 (see the fairness crate's test).
    let pred = write(&dir, "r.csv", "prediction\n1\n2\n3\n2\n3\n4\n");
    let r = evaluate(&data, &pred, "v", "g", &["--task", "regression"]);
    assert_eq!(figure(&r, "mse"), 0.0);
    // Targets 1, 2, 3, 2, 3, 4: mean 2.5, so the constant predictor's MSE is 5.5 / 6.
    // Printed with six decimals.
    assert!((figure(&r, "constant_mse") - 5.5 / 6.0).abs() < 1e-6, "{r}");
    assert!(!r.contains("no better than the constant"), "{r}");
    assert!(
        (figure(&r, "ks_statistical_parity") - 1.0 / 3.0).abs() < 1e-6,
        "{r}"
    );
}

#[test]
fn probabilities_an_ulp_past_the_unit_interval_are_read_as_its_ends() {
    // A mixture's average can round to 1.0000000000000007 (DP2DP's predictions did): evaluate
    // reads it as 1, and the expected accuracy comes out as with exact values.
    let dir = scratch("ulp");
    let data = write(&dir, "d.csv", NEW);
    let mut rows = String::from("prediction,p_no,p_yes\n");
    for _ in 0..9 {
        rows += "yes,-0.0000000000000002,1.0000000000000007\n";
    }
    let pred = write(&dir, "p.csv", &rows);
    let r = evaluate(&data, &pred, "y", "grp", &[]);
    // Every row predicted yes with probability 1: expected accuracy = accuracy = 4/9 (rows 1,
    // 2, 5, 9 are yes).
    assert!((figure(&r, "accuracy") - 4.0 / 9.0).abs() < 1e-6, "{r}");
    assert!(
        (figure(&r, "expected_accuracy") - 4.0 / 9.0).abs() < 1e-6,
        "{r}"
    );
    // Beyond 10⁻⁹ it is still an error naming the row and column.
    let bad = write(
        &dir,
        "b.csv",
        &rows.replacen("-0.0000000000000002,1.0000000000000007", "-0.001,1.001", 1),
    );
    let o = dpfair(&[
        "evaluate",
        "--data",
        data.to_str().unwrap(),
        "--predictions",
        bad.to_str().unwrap(),
        "--target",
        "y",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("column `p_no`: `-0.001` is not a probability"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_input_exits_2_with_a_message_and_no_panic() {
    let dir = scratch("bad");
    let m = model(&dir, false);
    let data = write(&dir, "d.csv", NEW);
    let short = write(&dir, "short.csv", "prediction\nyes\n");
    let not_model = write(&dir, "x.json", "{\"format\": \"other\"}");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    v["version"] = 7.into();
    let future = write(&dir, "future.json", &v.to_string());
    let nofeat = write(&dir, "nofeat.csv", "grp,y\na,yes\n");
    let out = dir.join("o.csv");
    let (m, data, out) = (
        m.to_str().unwrap(),
        data.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "predict",
                "--model",
                "/nonexistent.json",
                "--data",
                data,
                "--out",
                out,
            ],
            "/nonexistent.json",
        ),
        (
            vec![
                "predict",
                "--model",
                not_model.to_str().unwrap(),
                "--data",
                data,
                "--out",
                out,
            ],
            "format is `other`",
        ),
        (
            vec![
                "predict",
                "--model",
                future.to_str().unwrap(),
                "--data",
                data,
                "--out",
                out,
            ],
            "version 7",
        ),
        (
            vec![
                "predict",
                "--model",
                m,
                "--data",
                nofeat.to_str().unwrap(),
                "--out",
                out,
            ],
            "unknown column `x`",
        ),
        (
            vec![
                "evaluate",
                "--data",
                data,
                "--predictions",
                short.to_str().unwrap(),
                "--target",
                "y",
                "--sensitive",
                "grp",
            ],
            "must align",
        ),
        (
            vec![
                "evaluate",
                "--data",
                data,
                "--predictions",
                short.to_str().unwrap(),
                "--target",
                "nope",
                "--sensitive",
                "grp",
            ],
            "unknown column `nope`",
        ),
        (vec!["ledger", "/nonexistent.json"], "cannot read"),
        (
            vec!["ledger", not_model.to_str().unwrap()],
            "neither a dpfair model file nor a ledger",
        ),
    ];
    for (args, expect) in cases {
        let o = dpfair(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(expect),
            "{args:?}: expected `{expect}` in: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // clap's own errors also exit 2.
    assert_eq!(dpfair(&["predict", "--model"]).status.code(), Some(2));
}
