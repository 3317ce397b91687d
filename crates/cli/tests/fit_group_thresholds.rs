//! `dpfair fit group-thresholds` end to end on three groups: each constraint's model file and
//! ledger, `dpfair predict` on it (the groups' rates brought together), `compare --methods` and
//! `tune` with the method, and the refusals of a bad `--constraint`, `--level` or accounting.

mod common;

use common::{arg, bad, dpfair, ledger_rows, number_after, ok, predictions, scratch, stderr};
use std::path::{Path, PathBuf};

/// The three group names and each one's shift of the label's logit.
const GROUPS: [(&str, f64); 3] = [("lo", -1.5), ("mid", 0.0), ("hi", 1.5)];

/// Rows of a seeded three-group design: features `x1..x3` uniform on [0, 10], group `race`
/// (uniform over [`GROUPS`]), label `income` (`yes`/`no`) with `P(yes) = σ(0.8 (x̄ − 5) + shift)`:
/// the groups' base rates differ by about 0.5. Returns the path and each row's (group, label).
fn write_three_groups(dir: &Path, n: usize, seed: u64) -> (PathBuf, Vec<(usize, bool)>) {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut text = String::from("x1,x2,x3,race,income\n");
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        let x: [f64; 3] = std::array::from_fn(|_| 10.0 * rng.random::<f64>());
        let g = rng.random_range(0..GROUPS.len());
        let logit = 0.8 * (x.iter().sum::<f64>() / 3.0 - 5.0) + GROUPS[g].1;
        let yes = rng.random::<f64>() < 1.0 / (1.0 + (-logit).exp());
        text += &format!(
            "{:.3},{:.3},{:.3},{},{}\n",
            x[0],
            x[1],
            x[2],
            GROUPS[g].0,
            if yes { "yes" } else { "no" }
        );
        rows.push((g, yes));
    }
    (common::write(dir, "three.csv", &text), rows)
}

const BOUNDS: &str = "x1:0:10,x2:0:10,x3:0:10";

/// `dpfair fit group-thresholds` on `data` at ε = 2 into `model`, then `extra`.
fn fit_args<'a>(data: &'a Path, model: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "fit",
        "group-thresholds",
        "--data",
        arg(data),
        "--target",
        "income",
        "--sensitive",
        "race",
        "--bounds",
        BOUNDS,
        "--epsilon",
        "2",
        "--out",
        arg(model),
    ];
    args.extend_from_slice(extra);
    args
}

/// The largest minus the smallest over the groups of the share of `predicted` yes among the
/// rows whose label is in `labels` (both labels: the positive rate; `[true]`: the true-positive
/// rate; `[false]`: the false-positive rate).
fn gap(rows: &[(usize, bool)], predicted: &[String], labels: &[bool]) -> f64 {
    let rates: Vec<f64> = (0..GROUPS.len())
        .map(|g| {
            let of: Vec<usize> = (0..rows.len())
                .filter(|&i| rows[i].0 == g && labels.contains(&rows[i].1))
                .collect();
            of.iter().filter(|&&i| predicted[i] == "yes").count() as f64 / of.len() as f64
        })
        .collect();
    let max = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
    max - min
}

/// The constrained rates' labels: both (the positive rate), the positives (the true-positive
/// rate), or the positives and the negatives apart (and the false-positive rate).
fn constrained(constraint: &str) -> &'static [&'static [bool]] {
    match constraint {
        "demographic-parity" => &[&[true, false]],
        "equal-opportunity" => &[&[true]],
        _ => &[&[true], &[false]],
    }
}

#[test]
fn each_constraint_fits_three_groups_within_its_budget_and_predicts() {
    let dir = scratch("fit-group-thresholds", "constraints");
    let (data, rows) = write_three_groups(&dir, 6_000, 11);
    for constraint in ["demographic-parity", "equal-opportunity", "equalized-odds"] {
        // The default level 0.1, and 1 (no constraint in effect) for the gaps to compare with.
        let mut widest = [0.0; 2];
        for (i, level) in ["0.1", "1"].into_iter().enumerate() {
            let model = dir.join(format!("{constraint}-{level}.json"));
            let out = dpfair(&fit_args(
                &data,
                &model,
                &[
                    "--constraint",
                    constraint,
                    "--level",
                    level,
                    // Seeded release noise: the bounds below are about the method, not one OS
                    // draw.
                    "--insecure-seeded-noise",
                    "7",
                ],
            ));
            ok(&out);
            let said = format!("{constraint} within {level} across 3 groups");
            assert!(stderr(&out).contains(&said), "{}", stderr(&out));
            let file: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
            assert_eq!(file["method"], "group-thresholds");
            assert_eq!(file["config"]["constraint"], constraint);
            // The held-out check's fallback, DP-SGD, the Laplace table and the check's choice.
            let ledger = ok(&dpfair(&["ledger", arg(&model)]));
            let entries = ledger_rows(&ledger);
            assert_eq!(entries.len(), 4, "{ledger}");
            assert!(
                entries.iter().any(|e| e.mechanism.starts_with("dp-sgd")),
                "{ledger}"
            );
            let table = entries
                .iter()
                .find(|e| e.label.starts_with("group × label × score-bin counts"))
                .unwrap_or_else(|| panic!("no table entry: {ledger}"));
            assert_eq!(table.mechanism, "laplace", "{ledger}");
            // A quarter of what the check's fallback leaves of ε = 2 (1.9): 0.475.
            assert!(table.cost.starts_with("ε = 0.475"), "{ledger}");
            let total = number_after(&ledger, "total: ε = ");
            assert!(total > 1.9 && total <= 2.0 + 1e-9, "{ledger}");
            let predicted = predictions(&model, &data, &dir.join(format!("{constraint}.csv")));
            assert_eq!(predicted.len(), rows.len());
            widest[i] = constrained(constraint)
                .iter()
                .map(|labels| gap(&rows, &predicted, labels))
                .fold(0.0, f64::max);
        }
        // Within 0.1 up to the table's noise and sampling (each group has about 2,000 rows: a
        // rate's sampling error is under 0.02, the Laplace noise on it a few hundredths); with
        // no constraint in effect the groups' shifts of ±1.5 in the logit leave gaps far wider.
        let [fair, free] = widest;
        assert!(fair < 0.2, "{constraint} at 0.1: gap {fair}");
        assert!(free > 0.3, "{constraint} at 1: gap {free}");
    }
}

#[test]
fn compare_and_tune_run_the_method_on_three_groups() {
    let dir = scratch("fit-group-thresholds", "compare-tune");
    let (data, _) = write_three_groups(&dir, 3_000, 5);
    let out = dpfair(&[
        "compare",
        "--data",
        arg(&data),
        "--target",
        "income",
        "--sensitive",
        "race",
        "--bounds",
        BOUNDS,
        "--methods",
        "group-thresholds,cdp-fair,fdp-fair",
        "--epsilon",
        "2",
        "--alpha",
        "0.05",
    ]);
    let stdout = ok(&out);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| group-thresholds | 2 |"))
        .unwrap_or_else(|| panic!("no group-thresholds row: {stdout}"));
    assert!(row.contains("≤ 0.05"), "its target is the level α: {row}");
    // CDP-Fair and FDP-Fair (over its sites) fit group thresholds for three groups, at their α.
    for method in ["cdp-fair", "fdp-fair"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("| {method} | 2 |")))
            .unwrap_or_else(|| panic!("no {method} row: {stdout}"));
        assert!(row.contains("≤ 0.05"), "{row}");
    }
    assert!(!stderr(&out).contains("left out"), "{}", stderr(&out));
    // The default grid: three table shares.
    let model = dir.join("tuned.json");
    let out = dpfair(&[
        "tune",
        "group-thresholds",
        "--data",
        arg(&data),
        "--target",
        "income",
        "--sensitive",
        "race",
        "--bounds",
        BOUNDS,
        "--epsilon",
        "2",
        "--epochs",
        "5",
        "--out",
        arg(&model),
    ]);
    ok(&out);
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(
        file["selection"]["candidates"].as_array().unwrap().len(),
        3,
        "{}",
        file["selection"]
    );
    let err = bad(&dpfair(&[
        "tune",
        "group-thresholds",
        "--data",
        arg(&data),
        "--target",
        "income",
        "--sensitive",
        "race",
        "--epsilon",
        "2",
        "--grid",
        "level=0.05,0.1",
        "--out",
        arg(&model),
    ]));
    assert!(err.contains("--level cannot vary"), "{err}");
}

#[test]
fn bad_constraint_level_and_accounting_are_refused_naming_them() {
    let dir = scratch("fit-group-thresholds", "refused");
    let (data, _) = write_three_groups(&dir, 200, 1);
    let model = dir.join("m.json");
    let err = bad(&dpfair(&fit_args(
        &data,
        &model,
        &["--constraint", "equal-odds"],
    )));
    assert!(err.contains("constraint"), "{err}");
    for name in ["demographic-parity", "equal-opportunity", "equalized-odds"] {
        assert!(err.contains(name), "{name} not listed: {err}");
    }
    for level in ["1.5", "-0.1", "NaN"] {
        let err = bad(&dpfair(&fit_args(&data, &model, &["--level", level])));
        assert!(err.contains("level"), "--level {level}: {err}");
    }
    let err = bad(&dpfair(&fit_args(&data, &model, &["--table-share", "1"])));
    assert!(
        err.contains("table-share") || err.contains("table_share"),
        "{err}"
    );
    let err = bad(&dpfair(&fit_args(
        &data,
        &model,
        &["--accounting", "paper"],
    )));
    assert!(err.contains("--accounting paper"), "{err}");
    assert!(!model.exists());
}

/// The fit's model file: its method, and the ledger's total ε (at most `epsilon`).
fn method_and_total(model: &Path, epsilon: f64) -> String {
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap();
    let ledger = ok(&dpfair(&["ledger", arg(model)]));
    let total = number_after(&ledger, "total: ε = ");
    assert!(total > 0.0 && total <= epsilon + 1e-9, "{ledger}");
    file["method"].as_str().unwrap().to_string()
}

#[test]
fn cdp_fair_and_decoupled_fit_group_thresholds_for_more_groups_or_another_constraint() {
    let dir = scratch("fit-group-thresholds", "fallback");
    // CDP-Fair on three groups (demographic parity, the default).
    let (three, rows) = write_three_groups(&dir, 2_000, 3);
    let model = dir.join("cdp.json");
    let mut args = fit_args(&three, &model, &[]);
    args[1] = "cdp-fair";
    ok(&dpfair(&args));
    assert_eq!(method_and_total(&model, 2.0), "group-thresholds");
    let predicted = predictions(&model, &three, &dir.join("cdp.csv"));
    assert_eq!(predicted.len(), rows.len());
    // The decoupled classifier on two groups under equal opportunity.
    let two = common::design_csv(&dir, "two.csv", 2_000, 4);
    let model = dir.join("decoupled.json");
    ok(&dpfair(&common::fit_args(
        "decoupled",
        &two,
        "2",
        &model,
        &["--constraint", "equal-opportunity", "--epochs", "5"],
    )));
    assert_eq!(method_and_total(&model, 2.0), "group-thresholds");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(file["model"]["constraint"], "equal-opportunity", "{file}");
    assert_eq!(
        predictions(&model, &two, &dir.join("decoupled.csv")).len(),
        2_000
    );
    // Demographic parity on two groups still runs the paper's algorithm.
    let model = dir.join("paper.json");
    ok(&dpfair(&common::fit_args(
        "decoupled",
        &two,
        "2",
        &model,
        &["--epochs", "5"],
    )));
    assert_eq!(method_and_total(&model, 2.0), "decoupled");
    // A bad name is refused naming the option, by both commands.
    for method in ["cdp-fair", "decoupled"] {
        let err = bad(&dpfair(&common::fit_args(
            method,
            &two,
            "2",
            &dir.join("bad.json"),
            &["--constraint", "bad"],
        )));
        assert!(err.contains("constraint"), "{method}: {err}");
        assert!(err.contains("equalized-odds"), "{method}: {err}");
    }
    assert!(!dir.join("bad.json").exists());
}

#[test]
fn two_sensitive_columns_form_intersectional_groups_at_fit_and_predict() {
    let dir = scratch("fit-group-thresholds", "intersectional");
    let (three, rows) = write_three_groups(&dir, 3_000, 8);
    // A second attribute, `sex`, alternating by row: 3 × 2 groups.
    let text = std::fs::read_to_string(&three).unwrap();
    let mut lines = text.lines();
    let mut with_sex = format!("{},sex\n", lines.next().unwrap());
    for (i, line) in lines.enumerate() {
        with_sex += &format!("{line},{}\n", ["F", "M"][i % 2]);
    }
    let data = common::write(&dir, "race-sex.csv", &with_sex);
    let model = dir.join("m.json");
    let mut args = fit_args(&data, &model, &[]);
    let i = args.iter().position(|a| *a == "race").unwrap();
    args[i] = "race,sex";
    let out = dpfair(&args);
    ok(&out);
    assert!(stderr(&out).contains("across 6 groups"), "{}", stderr(&out));
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let sensitive = &file["schema"]["sensitive"];
    assert_eq!(sensitive["name"], "race,sex", "{sensitive}");
    let levels: Vec<&str> = sensitive["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(
        levels,
        ["hi × F", "hi × M", "lo × F", "lo × M", "mid × F", "mid × M"]
    );
    // Neither column is a feature.
    let features = file["schema"]["features"].to_string();
    assert!(
        !features.contains("race") && !features.contains("sex"),
        "{features}"
    );
    let total = number_after(&ok(&dpfair(&["ledger", arg(&model)])), "total: ε = ");
    assert!(total <= 2.0 + 1e-9, "{total}");
    // `dpfair predict` forms the same groups on new rows.
    let predicted = predictions(&model, &data, &dir.join("pred.csv"));
    assert_eq!(predicted.len(), rows.len());
    // A file with one of the two columns is refused, naming the other.
    let race_only = common::write(&dir, "race-only.csv", &text);
    let err = bad(&common::predict(
        &model,
        &race_only,
        &dir.join("pred2.csv"),
        &[],
    ));
    assert!(err.contains("`sex`"), "{err}");
    // Declared levels in the joined form: a combination outside them is refused, naming the
    // columns.
    args.extend(["--groups", "hi × F,hi × M,lo × F,lo × M,mid × F"]);
    let err = bad(&dpfair(&args));
    assert!(
        err.contains("`race,sex`") && err.contains("--groups"),
        "{err}"
    );
}
