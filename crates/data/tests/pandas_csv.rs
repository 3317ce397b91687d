//! A CSV written by pandas' `DataFrame.to_csv()` (an unnamed index column first) loads as the
//! user expects: the header is detected and the index is not a feature.

use dpfair_data::{ApplyOptions, LoadOptions, load_csv};

const PANDAS: &str = ",age,sex,income\n0,30,F,low\n1,45,M,high\n2,28,F,low\n3,52,M,high\n";

#[test]
fn pandas_index_column_is_detected_and_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pandas.csv");
    std::fs::write(&path, PANDAS).unwrap();
    let options = LoadOptions {
        target: Some("income".into()),
        sensitive: Some("sex".into()),
        ..Default::default()
    };
    let loaded = load_csv(&path, &options).unwrap();
    assert_eq!(loaded.dataset.feature_names, vec!["age".to_string()]);
    assert!(loaded.report.has_header);
    assert!(loaded.report.skipped_index);
    assert!(
        loaded
            .report
            .skipped_index_message()
            .unwrap()
            .contains("no name")
    );
    assert_eq!(loaded.dataset.n_rows(), 4);
    // Prediction-time loads of the same file find the columns by name.
    let again = loaded
        .schema
        .load(
            &path,
            &ApplyOptions {
                with_target: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(again.dataset.features, loaded.dataset.features);
}

#[test]
fn a_named_first_column_is_still_a_feature_and_numbers_are_not_a_header() {
    let dir = tempfile::tempdir().unwrap();
    let named = dir.path().join("named.csv");
    // (Not an identifier-like name such as `id`: those are left out by name, see own_data.rs.)
    std::fs::write(&named, "zone,age,income\n0,30,low\n1,45,high\n").unwrap();
    let options = LoadOptions {
        target: Some("income".into()),
        ..Default::default()
    };
    let loaded = load_csv(&named, &options).unwrap();
    assert_eq!(loaded.dataset.feature_names, vec!["zone", "age"]);
    assert!(!loaded.report.skipped_index);
    // A first row with an empty field and numbers is data, not a header.
    let headless = dir.path().join("headless.csv");
    std::fs::write(&headless, ",1,0\n2,3,1\n").unwrap();
    let options = LoadOptions {
        target: Some("2".into()),
        ..Default::default()
    };
    if let Ok(loaded) = load_csv(&headless, &options) {
        assert!(!loaded.report.has_header);
    }
}
