//! `dpfair tune`: a private search over a grid of `fit` options, end to end: the model file's one
//! ledger entry and selection, prediction, and the refusals (a grid over the budget, the
//! fairness level or an option given twice; an unknown option; a method it does not run).

mod common;

use common::{arg, bad, design_csv, dpfair, ok, predictions, scratch, stderr};

fn tune_args<'a>(data: &'a str, model: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "tune",
        "dp-logistic",
        "--data",
        data,
        "--target",
        "y",
        "--sensitive",
        "a",
        "--epsilon",
        "1",
        "--epochs",
        "3",
        "--out",
        model,
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn a_search_writes_one_entry_and_its_selection_and_the_model_predicts() {
    let dir = scratch("tune", "writes");
    let data = design_csv(&dir, "d.csv", 2_000, 3);
    let model = dir.join("m.json");
    let out = dpfair(&tune_args(
        arg(&data),
        arg(&model),
        &["--grid", "learning-rate=0.1,1", "--mean-runs", "4"],
    ));
    ok(&out);
    let err = stderr(&out);
    assert!(
        err.contains("chose --learning-rate") || err.contains("chose the constant classes"),
        "{err}"
    );
    assert!(!err.to_lowercase().contains("runs made"), "{err}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let entries = file["ledger"]["entries"].as_array().unwrap();
    // The search, and the constant classes' class and count (parallel parts).
    assert_eq!(entries.len(), 3, "{entries:?}");
    assert_eq!(
        entries[0]["mechanism"],
        "private selection (random stopping)"
    );
    let selection = &file["selection"];
    assert_eq!(selection["candidates"].as_array().unwrap().len(), 2);
    assert_eq!(selection["mean_runs"], 4);
    assert!(selection["chosen"].as_u64().unwrap() <= 2);
    let ledger = ok(&dpfair(&["ledger", arg(&model)]));
    let total = common::number_after(&ledger, "total: ε = ");
    assert!(total <= 1.0 && total > 0.8, "{ledger}");
    let preds = predictions(&model, &data, &dir.join("p.csv"));
    assert_eq!(preds.len(), 2_000);
}

#[test]
fn grids_over_the_budget_the_fairness_level_or_a_fixed_option_are_refused() {
    let dir = scratch("tune", "refused");
    let data = design_csv(&dir, "d.csv", 300, 1);
    let model = dir.join("m.json");
    for (grid, says) in [
        ("epsilon=0.5,1", "--epsilon cannot vary"),
        ("alpha=0.05,0.1", "--alpha cannot vary"),
        ("epochs=2,5", "--epochs is also among the fit options"),
        ("learning-rate", "expected KNOB=V1,V2"),
        (
            "no-such-option=1,2",
            "unexpected argument '--no-such-option'",
        ),
    ] {
        let err = bad(&dpfair(&tune_args(
            arg(&data),
            arg(&model),
            &["--grid", grid],
        )));
        assert!(err.contains(says), "--grid {grid}: {err}");
    }
    let err = bad(&dpfair(&[
        "tune",
        "lpct",
        "--public",
        arg(&data),
        "--private",
        arg(&data),
        "--target",
        "y",
        "--epsilon",
        "1",
        "--out",
        arg(&model),
    ]));
    assert!(
        err.contains("dp-logistic, cdp-fair, decoupled, dp2dp or group-thresholds"),
        "{err}"
    );
    assert!(!model.exists());
}
