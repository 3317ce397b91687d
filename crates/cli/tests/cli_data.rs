//! The shared data arguments of `fit` commands (`cmd/common.rs`) through the built binary, using
//! `dpfair fit dp-logistic` as the carrier: messages name file, row and column; missing values are
//! filled silently (or refused with --no-missing); public bounds are free; private bounds are
//! charged and shown by `dpfair ledger`.

mod common;
use common::{arg, dpfair, ok, stderr};
use std::path::{Path, PathBuf};
use std::process::Output;

fn scratch(test: &str) -> PathBuf {
    common::scratch("cli-data", test)
}

/// 200 rows: `age` in 20..60, `job` categorical, `sex` sensitive, `y` binary; row 3 has `?`.
fn data(dir: &Path) -> PathBuf {
    let mut s = String::from("age;job;sex;y\n");
    for i in 0..200 {
        let age = if i == 2 {
            "?".to_string()
        } else {
            (20 + i % 40).to_string()
        };
        let job = ["clerk", "nurse", "pilot"][i % 3];
        let sex = ["F", "M"][i % 2];
        s.push_str(&format!("{age};{job};{sex};{}\n", (i % 40 >= 20) as u8));
    }
    let p = dir.join("people.csv");
    std::fs::write(&p, s).unwrap();
    p
}

fn fit(data: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "fit",
        "dp-logistic",
        "--data",
        data.to_str().unwrap(),
        "--target",
        "y",
        "--sensitive",
        "sex",
        "--categorical",
        "job",
        "--epsilon",
        "1",
        "--seed",
        "3",
        "--epochs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    dpfair(&args)
}

#[test]
fn bad_data_arguments_exit_2_naming_what_is_wrong() {
    let dir = scratch("bad");
    let d = data(&dir);
    let out = dir.join("m.json");
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["--features", "age,height"],
            vec!["unknown column `height`", "--features", "people.csv"],
        ),
        (
            vec!["--no-missing"],
            vec!["data row 3", "`age`", "--no-missing"],
        ),
        (
            vec!["--bounds", "age:60:20"],
            vec!["--bounds", "lower bound"],
        ),
        (vec!["--bounds", "agee:0:1"], vec!["`agee`"]),
        (vec!["--delimiter", "ab"], vec!["--delimiter"]),
    ];
    for (extra, expect) in cases {
        let o = fit(&d, &out, &extra);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        for e in expect {
            assert!(err.contains(e), "{extra:?}: expected `{e}` in {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
    }
    // `job` without --categorical: a text column, one-hot encoded, and said so (`age` with
    // public bounds: private ones on 199 rows would be refused as no better than a guess).
    let o = dpfair(&[
        "fit",
        "dp-logistic",
        "--data",
        d.to_str().unwrap(),
        "--target",
        "y",
        "--bounds",
        "age:0:100",
        "--epsilon",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("one-hot (levels public) `job` (3)"), "{err}");
}

/// Rows with a missing value are kept and filled by a public rule (issue #38): nothing is said
/// about them, since whether a row has one is private.
#[test]
fn missing_values_filled_silently_and_public_bounds_recorded() {
    let dir = scratch("bounds");
    let d = data(&dir);
    let out = dir.join("m.json");
    let o = fit(&d, &out, &["--bounds", "age:18:65"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        !err.contains("dropped") && !err.contains("missing"),
        "a message about missing values: {err}"
    );
    let r = ok(&dpfair(&["ledger", arg(&out)]));
    assert!(r.contains("min-max bounds, public (--bounds): age"), "{r}");
    assert!(
        r.contains("estimated privately (charged in the ledger above): none"),
        "{r}"
    );
    assert!(
        !r.contains("feature bounds of column"),
        "public bounds cost nothing: {r}"
    );
    assert!(
        r.contains("categorical `job` levels (found in the data): clerk, nurse, pilot"),
        "{r}"
    );
    assert!(
        r.contains("sensitive `sex` groups (found in the data): F, M"),
        "{r}"
    );
}

#[test]
fn private_bounds_are_charged_and_training_gets_the_rest() {
    // --coarse-bounds: `--bounds-share` 0.1 of ε = 1 goes to the private age bounds, DP-SGD is
    // calibrated to the remaining 0.9, and the ledger composes both within the budget.
    let dir = scratch("coarse");
    let d = data(&dir);
    let out = dir.join("m.json");
    let o = fit(
        &d,
        &out,
        // Both the private bounds and DP-SGD certify replace-one neighbours: one relation.
        &[
            "--coarse-bounds",
            "age:0:100",
            "--bounds-share",
            "0.1",
            "--substitution",
        ],
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        // 0.1 of the fit part's ε, 1 less the check's release of the training majority (5%).
        err.contains("private bounds for 1 column(s), cost ε = 0.095 "),
        "{err}"
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let eps = file["config"]["epsilon"].as_f64().unwrap();
    assert!((eps - 0.855).abs() < 1e-12, "DP-SGD calibrated to {eps}");
    let entries = file["ledger"]["entries"].as_array().unwrap();
    assert!(entries.len() >= 2, "bounds and DP-SGD entries: {entries:?}");
    assert!(
        entries
            .iter()
            .any(|e| e["cost"]["unit"] == "subsampled-gaussian")
    );
    let r = ok(&dpfair(&["ledger", arg(&out)]));
    assert!(r.contains("feature bounds of column"), "{r}");
    // The total at the budget's δ: at most ε = 1 (the ledger refuses more; printed to 6 places).
    let total = r
        .lines()
        .find_map(|l| l.strip_prefix("total: ε = "))
        .and_then(|t| t.split(',').next())
        .and_then(|t| t.trim().parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no total in {r}"));
    assert!(total > 0.9 && total <= 1.0 + 1e-6, "total ε = {total}");
}
