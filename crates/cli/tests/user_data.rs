//! A new user's own CSV, as pandas writes it: an unnamed index column and a text target. The
//! index is not used as a feature, and the positive class taken by default is named.

mod common;
use common::{arg, dpfair, ok, scratch, stderr, write};

/// 400 rows: index, two numeric features, a text sensitive column and a text decision.
fn pandas_csv(dir: &std::path::Path) -> std::path::PathBuf {
    let mut s = String::from(",income,debt,sex,decision\n");
    for i in 0..400 {
        let income = 20.0 + (i as f64 * 0.618_033_988_75).fract() * 80.0;
        let debt = (i as f64 * 0.414_213_562_37).fract() * 50.0;
        let sex = if i % 3 == 0 { "F" } else { "M" };
        let decision = if income - debt > 40.0 {
            "approved"
        } else {
            "rejected"
        };
        s.push_str(&format!("{i},{income:.2},{debt:.2},{sex},{decision}\n"));
    }
    write(dir, "loans.csv", &s)
}

fn fit(data: &std::path::Path, out: &std::path::Path, extra: &[&str]) -> String {
    let mut args = vec![
        "fit",
        "dp-logistic",
        "--data",
        arg(data),
        "--target",
        "decision",
        "--sensitive",
        "sex",
        // Public bounds: private ones for two columns on 400 rows at ε = 1 would be refused.
        "--bounds",
        "income:0:100,debt:0:50",
        "--epsilon",
        "1",
        "--epochs",
        "2",
        "--out",
        arg(out),
    ];
    args.extend_from_slice(extra);
    let o = dpfair(&args);
    ok(&o);
    stderr(&o)
}

#[test]
fn pandas_index_is_skipped_and_the_positive_class_is_named() {
    let dir = scratch("user_data", "pandas");
    let data = pandas_csv(&dir);
    let model = dir.join("m.json");
    let err = fit(&data, &model, &[]);
    assert!(err.contains("first column has no name"), "{err}");
    assert!(err.contains("`rejected` is the positive class"), "{err}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let features = file["schema"]["features"].as_array().unwrap();
    let names: Vec<&str> = features
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["income", "debt"]);
    // Choosing the class silences the note.
    let err = fit(&data, &model, &["--positive", "approved"]);
    assert!(!err.contains("is the positive class"), "{err}");
}

/// DP2DP's ρ is its fairness tolerance; the ledger's ρ is zCDP's. The help says so, and the
/// option has a name that cannot be mistaken.
#[test]
fn dp2dp_tolerance_is_not_confused_with_zcdp() {
    let help = ok(&dpfair(&["fit", "dp2dp", "--help"]));
    assert!(help.contains("--fairness-tolerance"), "{help}");
    assert!(help.contains("not the zCDP ρ"), "{help}");
}
