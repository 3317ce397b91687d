//! Class and group labels: non-finite labels are errors, numeric labels compare as
//! numbers, declared classes and groups are enforced, long values are clipped in messages.

use dpfair_data::{DataError, LoadOptions, Target, TaskKind, load_csv};
use std::path::PathBuf;

struct Tmp(tempfile::TempDir);

impl Tmp {
    fn new() -> Self {
        Tmp(tempfile::tempdir().unwrap())
    }
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

fn opts(target: &str, sensitive: Option<&str>) -> LoadOptions {
    LoadOptions {
        target: Some(target.into()),
        sensitive: sensitive.map(Into::into),
        ..Default::default()
    }
}

#[test]
fn nan_and_infinite_class_labels_are_errors_naming_row_and_column() {
    let t = Tmp::new();
    for bad in ["NaN", "nan", "inf", "-infinity"] {
        let p = t.file("y.csv", &format!("x,y\n1,0\n2,1\n3,{bad}\n4,0\n"));
        let err = load_csv(&p, &opts("y", None)).unwrap_err();
        assert!(matches!(err, DataError::NonFinite { .. }), "{bad}: {err}");
        let msg = err.to_string();
        assert!(msg.contains("data row 3") && msg.contains("`y`"), "{msg}");
        assert!(msg.contains("y.csv"), "{msg}");
        // The same with an explicit multi-class task (dp2dp's path): no third class.
        let o = LoadOptions {
            task: Some(TaskKind::Multiclass),
            ..opts("y", None)
        };
        assert!(load_csv(&p, &o).is_err(), "{bad}");
    }
}

#[test]
fn nan_group_label_is_an_error() {
    let t = Tmp::new();
    let p = t.file("g.csv", "x,a,y\n1,0,0\n2,1,1\n3,NaN,0\n");
    let err = load_csv(&p, &opts("y", Some("a"))).unwrap_err();
    assert!(matches!(err, DataError::NonFinite { .. }), "{err}");
}

#[test]
fn numeric_labels_compare_as_numbers() {
    let t = Tmp::new();
    // `1.0` beside `1` and `-0` beside `0`: two classes, not three or four.
    let p = t.file("y.csv", "x,y\n1,0\n2,1\n3,1.0\n4,-0\n5,1e0\n");
    let l = load_csv(&p, &opts("y", None)).unwrap();
    match l.dataset.target.unwrap() {
        Target::Binary(y) => assert_eq!(y, vec![0, 1, 1, 0, 1]),
        other => panic!("expected binary, got {other:?}"),
    }
    // The same for groups.
    let p = t.file("g.csv", "x,a,y\n1,0,0\n2,1,1\n3,1.0,0\n4,-0,1\n");
    let l = load_csv(&p, &opts("y", Some("a"))).unwrap();
    let g = l.dataset.groups.unwrap();
    assert_eq!(g.names.len(), 2, "{:?}", g.names);
    assert_eq!(g.codes, vec![0, 1, 1, 0]);
}

#[test]
fn a_label_outside_declared_classes_is_an_error_not_a_new_class() {
    let t = Tmp::new();
    let p = t.file("y.csv", "x,y\n1,0\n2,1\n3,2\n4,0\n");
    let o = LoadOptions {
        classes: Some(vec!["0".into(), "1".into()]),
        ..opts("y", None)
    };
    let err = load_csv(&p, &o).unwrap_err();
    assert!(matches!(err, DataError::UndeclaredLevel { .. }), "{err}");
    assert!(err.to_string().contains("--classes"), "{err}");
    assert!(err.to_string().contains("data row 3"), "{err}");
    // Declared groups likewise.
    let p = t.file("g.csv", "x,a,y\n1,0,0\n2,1,1\n3,7,0\n");
    let o = LoadOptions {
        groups: Some(vec!["0".into(), "1".into()]),
        ..opts("y", Some("a"))
    };
    let err = load_csv(&p, &o).unwrap_err();
    assert!(err.to_string().contains("--groups"), "{err}");
}

#[test]
fn declared_classes_allow_a_one_class_file_and_match_numerically() {
    let t = Tmp::new();
    let p = t.file("y.csv", "x,y\n1,1.0\n2,1\n");
    let o = LoadOptions {
        classes: Some(vec!["0".into(), "1".into()]),
        ..opts("y", None)
    };
    let l = load_csv(&p, &o).unwrap();
    assert_eq!(l.dataset.target.unwrap(), Target::Binary(vec![1, 1]));
    // Without the declaration the one-class file is refused, as before.
    assert!(load_csv(&p, &opts("y", None)).is_err());
}

#[test]
fn declared_classes_that_repeat_a_number_are_refused() {
    let t = Tmp::new();
    let p = t.file("y.csv", "x,y\n1,0\n2,1\n");
    let o = LoadOptions {
        classes: Some(vec!["1".into(), "1.0".into()]),
        ..opts("y", None)
    };
    let err = load_csv(&p, &o).unwrap_err();
    assert!(err.to_string().contains("same level"), "{err}");
}

#[test]
fn positive_label_matches_numerically() {
    let t = Tmp::new();
    let p = t.file("y.csv", "x,y\n1,0\n2,1\n3,1\n");
    let o = LoadOptions {
        positive: Some("0.0".into()),
        ..opts("y", None)
    };
    let l = load_csv(&p, &o).unwrap();
    assert_eq!(l.dataset.target.unwrap(), Target::Binary(vec![1, 0, 0]));
}

#[test]
fn a_huge_field_is_not_repeated_in_the_message() {
    let t = Tmp::new();
    let huge = "z".repeat(1_000_000);
    let p = t.file("big.csv", &format!("x,y\n1,0\n{huge},1\n"));
    let msg = load_csv(&p, &opts("y", None)).unwrap_err().to_string();
    assert!(msg.len() < 1_000, "message of {} bytes", msg.len());
    // The value is not repeated at all (the rows may be private), clipped or not.
    assert!(!msg.contains("zzz"), "{msg}");
    assert!(
        msg.contains("data row 2") && msg.contains("big.csv"),
        "{msg}"
    );
}
