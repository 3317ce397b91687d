//! `dpfair evaluate --epsilon`: the private group report end to end (docs/evaluation.md): one
//! ledger entry of the asked ε and relation, every declared group reported (also one without
//! rows), no exact count printed, JSON with the report and its ledger, the exact mode's warning,
//! and errors that name the flag at fault.

use dpfair::model::{ConstantClassifier, FittedModel, ModelFile};
use dpfair_data::{LoadOptions, load_csv};
use dpfair_privacy::{Budget, Ledger};
use std::path::{Path, PathBuf};

mod common;
use common::{arg, bad, dpfair, ok, scratch, write};

/// 600 rows over groups a and b (c is declared, never present), labels no/yes; predictions
/// aligned by row. Returns (data, predictions).
fn files(dir: &Path) -> (PathBuf, PathBuf) {
    let (mut data, mut pred) = ("y,grp\n".to_string(), "prediction\n".to_string());
    for i in 0..600 {
        let g = if i % 3 == 0 { "a" } else { "b" };
        let y = if i % 2 == 0 { "yes" } else { "no" };
        let p = if i % 5 < 2 { "yes" } else { "no" };
        data.push_str(&format!("{y},{g}\n"));
        pred.push_str(&format!("{p}\n"));
    }
    (write(dir, "data.csv", &data), write(dir, "pred.csv", &pred))
}

fn run(dir: &Path, extra: &[&str]) -> std::process::Output {
    let (data, pred) = files(dir);
    let mut args = vec![
        "evaluate",
        "--data",
        arg(&data),
        "--predictions",
        arg(&pred),
        "--target",
        "y",
        "--sensitive",
        "grp",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    args.extend(extra.iter().map(|s| s.to_string()));
    dpfair(&args)
}

const PRIVATE: &[&str] = &[
    "--epsilon",
    "0.5",
    "--groups",
    "a,b,c",
    "--classes",
    "no,yes",
];

#[test]
fn private_report_prints_and_writes_one_release() {
    let dir = scratch("evaluate_private", "writes");
    let out = dir.join("report.json");
    let mut extra = PRIVATE.to_vec();
    extra.extend(["--out", arg(&out)]);
    let text = ok(&run(&dir, &extra));
    for name in [
        "accuracy",
        "selection_rate",
        "true_positive_rate",
        "false_positive_rate",
        "demographic_parity_difference",
        "equalized_odds_difference",
        "equal_opportunity_ratio",
        "95% intervals",
        "ε = 0.5",
    ] {
        assert!(text.contains(name), "no `{name}` in\n{text}");
    }
    assert!(
        !text.contains("rows evaluated") && !text.contains("EXACT"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(json["private"], true);
    let groups: Vec<&str> = json["report"]["by_group"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["group"].as_str().unwrap())
        .collect();
    assert_eq!(groups, ["a", "b", "c"]);
    // The group without rows (c) is a row with a wide interval, not an error. Its cells are
    // pure noise of scale 4 (Δ = 2 at ε = 0.5), each widened by a margin of 20 (β = 0.05 over
    // 4 cells), so the interval is [0, 1] unless noise passes the margin; a width below 0.5
    // needs a noisy cell of about 60 or more: probability below e^(-60/4) ≈ 3e-7 per run.
    let c = &json["report"]["by_group"][2]["selection_rate"];
    let width = c["upper"].as_f64().unwrap() - c["lower"].as_f64().unwrap();
    assert!(width > 0.5, "{c}");
    let entries = json["ledger"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["relation"], "substitution");
    assert_eq!(entries[0]["sensitivity"], 2.0);
    assert_eq!(entries[0]["cost"]["epsilon"], 0.5);
}

#[test]
fn add_remove_and_seeded_noise() {
    let dir = scratch("evaluate_private", "add_remove");
    let mut extra = PRIVATE.to_vec();
    extra.extend(["--add-remove", "--insecure-seeded-noise", "7"]);
    let a = ok(&run(&dir, &extra));
    assert!(a.contains("add/remove") && a.contains("NOT PRIVATE"), "{a}");
    assert!(
        a.contains("discrete Laplace scale 2"),
        "Δ = 1 at ε = 0.5: {a}"
    );
    // Seeded noise repeats exactly (that is why it is not private).
    assert_eq!(a, ok(&run(&dir, &extra)));
}

#[test]
fn exact_mode_says_it_is_not_for_publication() {
    let dir = scratch("evaluate_private", "exact");
    let text = ok(&run(&dir, &[]));
    // Right after the task line, before any figure.
    let line = text.lines().nth(1).unwrap();
    assert!(
        line.contains("EXACT") && line.contains("not for publication"),
        "{text}"
    );
}

#[test]
fn bad_parameters_name_their_flag() {
    let dir = scratch("evaluate_private", "errors");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--epsilon", "0", "--groups", "a,b", "--classes", "no,yes"],
            "--epsilon",
        ),
        (
            &["--epsilon", "-1", "--groups", "a,b", "--classes", "no,yes"],
            "--epsilon",
        ),
        (
            &["--epsilon", "inf", "--groups", "a,b", "--classes", "no,yes"],
            "--epsilon",
        ),
        (
            &["--epsilon", "NaN", "--groups", "a,b", "--classes", "no,yes"],
            "--epsilon",
        ),
        (&["--epsilon", "1", "--classes", "no,yes"], "--groups"),
        (
            &["--epsilon", "1", "--groups", "a", "--classes", "no,yes"],
            "--groups",
        ),
        (&["--epsilon", "1", "--groups", "a,b"], "--classes"),
        (
            &[
                "--epsilon",
                "1",
                "--groups",
                "a,b",
                "--classes",
                "no,yes",
                "--level",
                "1",
            ],
            "--level",
        ),
        // A group in the data outside the declared ones is an input error naming the row and
        // the flag (not the value: the loader keeps private values out of messages).
        (
            &["--epsilon", "1", "--groups", "a,c", "--classes", "no,yes"],
            "--groups",
        ),
        (&["--out", "x.json"], "--epsilon"),
        (&["--add-remove"], "--epsilon"),
    ];
    for (extra, flag) in cases {
        let msg = bad(&run(&dir, extra));
        assert!(msg.contains(flag), "{extra:?}: no `{flag}` in {msg}");
        assert!(!msg.contains("panicked"), "{msg}");
    }
}

/// A model file whose schema declares the sensitive column `grp` with groups a, b, c and the
/// classes no, yes (a constant classifier: only the schema matters here).
fn model(dir: &Path) -> PathBuf {
    let train = write(
        dir,
        "train.csv",
        "x,grp,y\n1,a,no\n2,b,yes\n3,a,yes\n4,b,no\n",
    );
    let options = LoadOptions {
        target: Some("y".into()),
        sensitive: Some("grp".into()),
        groups: Some(vec!["a".into(), "b".into(), "c".into()]),
        ..Default::default()
    };
    let schema = load_csv(&train, &options).unwrap().schema;
    let m = ConstantClassifier::new(vec![0.5, 0.5], false).unwrap();
    let f = ModelFile::new(
        schema,
        Ledger::new(Budget::pure(1.0).unwrap()),
        &serde_json::json!({}),
        FittedModel::ConstantClassifier(m),
    )
    .unwrap();
    let p = dir.join("model.json");
    f.save(&p).unwrap();
    p
}

#[test]
fn groups_and_classes_from_the_models_schema() {
    let dir = scratch("evaluate_private", "model");
    let m = model(&dir);
    let text = ok(&run(&dir, &["--epsilon", "1", "--model", arg(&m)]));
    assert!(text.contains("declared groups a, b, c"), "{text}");
    assert!(text.contains("positive label yes"), "{text}");
    // Flags given explicitly take precedence over the model.
    let text = ok(&run(
        &dir,
        &["--epsilon", "1", "--model", arg(&m), "--groups", "b,a"],
    ));
    assert!(text.contains("declared groups b, a"), "{text}");
}
