//! The CSV loader, one case at a time: formats, encodings, every error, prediction-time loads.

use dpfair_data::{
    ApplyOptions, Bounds, DataError, LoadOptions, MinMax, MissingPolicy, Scaling, Schema, Stratify,
    Target, TargetEncoding, TaskKind, Unseen, load_csv,
};
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

fn opts(target: &str) -> LoadOptions {
    LoadOptions {
        target: Some(target.into()),
        ..Default::default()
    }
}

const PEOPLE: &str = "age,job,sex,income\n\
                      30,clerk,F,low\n\
                      45,manager,M,high\n\
                      22,clerk,M,low\n\
                      50,nurse,F,high\n";

#[test]
fn loads_numeric_and_one_hot_features_with_groups_and_binary_target() {
    let t = Tmp::new();
    let p = t.file("people.csv", PEOPLE);
    let l = load_csv(
        &p,
        &LoadOptions {
            sensitive: Some("sex".into()),
            categorical: vec!["job".into()],
            ..opts("income")
        },
    )
    .unwrap();
    let d = &l.dataset;
    assert_eq!(
        d.feature_names,
        ["age", "job=clerk", "job=manager", "job=nurse"]
    );
    assert_eq!(d.features.row(1).to_vec(), vec![45.0, 0.0, 1.0, 0.0]);
    assert_eq!(d.features.row(3).to_vec(), vec![50.0, 0.0, 0.0, 1.0]);
    let g = d.groups.as_ref().unwrap();
    assert_eq!(g.names, ["F", "M"]);
    assert_eq!(g.codes, [0, 1, 1, 0]);
    // Binary: labels in string order, the larger ("low") coded 1.
    assert_eq!(
        l.schema.target.as_ref().unwrap().encoding,
        TargetEncoding::Binary {
            labels: vec!["high".into(), "low".into()]
        }
    );
    assert_eq!(d.target, Some(Target::Binary(vec![1, 0, 1, 0])));
    assert_eq!(l.report.dropped, 0);
    // Schema serde round trip.
    let json = serde_json::to_string(&l.schema).unwrap();
    assert_eq!(serde_json::from_str::<Schema>(&json).unwrap(), l.schema);
}

#[test]
fn positive_label_can_be_chosen() {
    let t = Tmp::new();
    let p = t.file("people.csv", PEOPLE);
    let l = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["age".into()]),
            positive: Some("high".into()),
            ..opts("income")
        },
    )
    .unwrap();
    assert_eq!(l.dataset.target, Some(Target::Binary(vec![0, 1, 0, 1])));
    assert_eq!(l.schema.class_labels(), ["low", "high"]);
    let e = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["age".into()]),
            positive: Some("rich".into()),
            ..opts("income")
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("--positive"), "{e}");
}

#[test]
fn detects_semicolons_tabs_and_missing_headers() {
    let t = Tmp::new();
    let semi = t.file("s.csv", "x;y\n1,5;0\n2;1\n");
    // `1,5` is not a number (no decimal-comma support): the error says so.
    let e = load_csv(&semi, &opts("y")).unwrap_err();
    assert!(matches!(e, DataError::NonNumeric { .. }), "{e}");
    let tab = t.file("t.tsv", "1\t0.5\ta\n0\t1.5\tb\n1\t2.5\ta\n");
    let l = load_csv(
        &tab,
        &LoadOptions {
            categorical: vec!["2".into()],
            ..opts("0")
        },
    )
    .unwrap();
    assert!(!l.report.has_header);
    assert_eq!(l.report.delimiter, b'\t');
    assert_eq!(l.dataset.feature_names, ["1", "2=a", "2=b"]);
    assert_eq!(l.dataset.target, Some(Target::Binary(vec![1, 0, 1])));
}

#[test]
fn infers_multiclass_and_real_targets_and_honours_task() {
    let t = Tmp::new();
    let p = t.file("m.csv", "x,y,z\n1,2,0.5\n2,0,1.25\n3,1,2.0\n4,2,7.5\n");
    let l = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["x".into()]),
            ..opts("y")
        },
    )
    .unwrap();
    assert_eq!(
        l.dataset.target,
        Some(Target::Multiclass {
            k: 3,
            labels: vec![2, 0, 1, 2]
        })
    );
    let l = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["x".into()]),
            ..opts("z")
        },
    )
    .unwrap();
    assert_eq!(
        l.dataset.target,
        Some(Target::Real(vec![0.5, 1.25, 2.0, 7.5]))
    );
    assert_eq!(l.schema.task(), Some(TaskKind::Regression));
    let l = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["x".into()]),
            task: Some(TaskKind::Regression),
            ..opts("y")
        },
    )
    .unwrap();
    assert_eq!(
        l.dataset.target,
        Some(Target::Real(vec![2.0, 0.0, 1.0, 2.0]))
    );
    let e = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["x".into()]),
            task: Some(TaskKind::Binary),
            ..opts("y")
        },
    )
    .unwrap_err();
    assert!(matches!(e, DataError::WrongTask { .. }), "{e}");
    // A method needing binary refuses a multi-class data set clearly.
    let l = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["x".into()]),
            ..opts("y")
        },
    )
    .unwrap();
    let e = l.dataset.require_binary("fit cdp-fair", "y").unwrap_err();
    assert!(e.to_string().contains("multiclass"), "{e}");
}

#[test]
fn error_unknown_column_names_parameter_and_file() {
    let t = Tmp::new();
    let p = t.file("people.csv", PEOPLE);
    for (o, param) in [
        (opts("salary"), "--target"),
        (
            LoadOptions {
                sensitive: Some("gender".into()),
                ..opts("income")
            },
            "--sensitive",
        ),
        (
            LoadOptions {
                features: Some(vec!["height".into()]),
                ..opts("income")
            },
            "--features",
        ),
        (
            LoadOptions {
                categorical: vec!["role".into()],
                ..opts("income")
            },
            "--categorical",
        ),
    ] {
        let e = load_csv(&p, &o).unwrap_err();
        assert!(
            matches!(e, DataError::UnknownColumn { parameter, .. } if parameter == param),
            "{e}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("people.csv") && msg.contains("age, job, sex, income"),
            "{msg}"
        );
    }
}

#[test]
fn error_non_numeric_names_row_and_column() {
    let t = Tmp::new();
    // A text column is one-hot encoded without being listed; a column mixing numbers and text
    // (`job` here: a code and words) is an error naming the first non-number.
    let text = load_csv(
        t.file("text.csv", PEOPLE),
        &LoadOptions {
            sensitive: Some("sex".into()),
            ..opts("income")
        },
    )
    .unwrap();
    assert_eq!(text.report.text_columns, ["job"]);
    let p = t.file("people.csv", &PEOPLE.replace("45,manager", "45,7"));
    let e = load_csv(
        &p,
        &LoadOptions {
            sensitive: Some("sex".into()),
            ..opts("income")
        },
    )
    .unwrap_err();
    match &e {
        DataError::NonNumeric {
            at, column, value, ..
        } => {
            assert_eq!(
                (at.row, at.line, column.as_str(), value.as_str()),
                (1, 2, "job", "clerk")
            );
        }
        other => panic!("{other}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("data row 1") && msg.contains("--categorical"),
        "{msg}"
    );
}

#[test]
fn error_nan_and_infinity_are_refused() {
    let t = Tmp::new();
    for bad in ["NaN", "inf", "-Infinity"] {
        let p = t.file("n.csv", &format!("x,y\n1,0\n{bad},1\n"));
        let e = load_csv(&p, &opts("y")).unwrap_err();
        assert!(
            matches!(&e, DataError::NonFinite { at, column, .. } if at.row == 2 && column == "x"),
            "{e}"
        );
    }
}

#[test]
fn error_group_with_no_rows() {
    let t = Tmp::new();
    let p = t.file("people.csv", PEOPLE);
    let l = load_csv(
        &p,
        &LoadOptions {
            sensitive: Some("sex".into()),
            groups: Some(vec!["F".into(), "M".into(), "X".into()]),
            features: Some(vec!["age".into()]),
            ..opts("income")
        },
    )
    .unwrap();
    assert_eq!(l.dataset.groups.as_ref().unwrap().counts(), [2, 2, 0]);
    let e = l
        .dataset
        .require_nonempty_groups("fit cdp-fair", "sex")
        .unwrap_err();
    assert!(
        matches!(&e, DataError::EmptyGroup { group, .. } if group == "X"),
        "{e}"
    );
    // A value outside the declared groups is an error naming it.
    let e = load_csv(
        &p,
        &LoadOptions {
            sensitive: Some("sex".into()),
            groups: Some(vec!["F".into()]),
            features: Some(vec!["age".into()]),
            ..opts("income")
        },
    )
    .unwrap_err();
    assert!(
        matches!(&e, DataError::UndeclaredLevel { value, at, .. } if value == "M" && at.row == 2),
        "{e}"
    );
    // One group only: fairness needs two.
    let l = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["age".into()]),
            sensitive: Some("sex".into()),
            ..opts("income")
        },
    )
    .unwrap();
    assert!(
        l.dataset
            .select(&[0, 1])
            .require_nonempty_groups("fit", "sex")
            .is_ok()
    );
    // Rows 0 and 3 are both F: after this split group M has no rows.
    let only_f = l.dataset.select(&[0, 3]);
    let e = only_f.require_nonempty_groups("fit", "sex").unwrap_err();
    assert!(
        matches!(&e, DataError::EmptyGroup { group, .. } if group == "M"),
        "{e}"
    );
    // A single declared group: fairness needs two.
    let mut single = only_f.clone();
    single.groups.as_mut().unwrap().names.truncate(1);
    assert!(single.require_nonempty_groups("fit", "sex").is_err());
}

#[test]
fn error_one_class_target() {
    let t = Tmp::new();
    let p = t.file("one.csv", "x,y\n1,yes\n2,yes\n");
    let e = load_csv(&p, &opts("y")).unwrap_err();
    assert!(
        matches!(&e, DataError::OneClassTarget { value, .. } if value == "yes"),
        "{e}"
    );
    let e = load_csv(
        &p,
        &LoadOptions {
            task: Some(TaskKind::Binary),
            ..opts("y")
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("two classes"), "{e}");
    // After a split a part may hold one class: require_binary says so.
    let p2 = t.file("two.csv", "x,y\n1,yes\n2,no\n");
    let l = load_csv(&p2, &opts("y")).unwrap();
    let e = l
        .dataset
        .select(&[0])
        .require_binary("fit", "y")
        .unwrap_err();
    assert!(matches!(e, DataError::OneClassTarget { .. }), "{e}");
}

#[test]
fn error_empty_file_and_header_only() {
    let t = Tmp::new();
    for text in ["", "\n\n", "a,b\n"] {
        let p = t.file("e.csv", text);
        let e = load_csv(&p, &opts("b")).unwrap_err();
        assert!(matches!(e, DataError::EmptyFile { .. }), "{text:?}: {e}");
    }
    let e = load_csv(PathBuf::from("/nonexistent/x.csv"), &opts("b")).unwrap_err();
    assert!(matches!(e, DataError::Io { .. }) && e.to_string().contains("/nonexistent/x.csv"));
}

#[test]
fn error_ragged_row() {
    let t = Tmp::new();
    let p = t.file("r.csv", "a,b,c\n1,2,3\n4,5\n");
    let e = load_csv(&p, &opts("c")).unwrap_err();
    assert!(
        matches!(e, DataError::RaggedRow { ref at, expected: 3, found: 2, .. } if at.row == 2 && at.line == 3),
        "{e}"
    );
}

/// Issue #38: by default every row is kept (n is the file's row count) and missing cells are
/// filled by a public per-row rule: a number with the midpoint of its public bounds (else 0), a
/// categorical feature with no level, a label with the first level.
#[test]
fn missing_values_filled_by_a_public_rule() {
    let t = Tmp::new();
    let p = t.file("m.csv", "x,z,c,g,y\n1,2,u,a,b\n?,NA,?,?,?\n3,6,v,b,a\n");
    let mut fill = Bounds::default();
    fill.insert("z", 0.0, 10.0, "--bounds").unwrap();
    let l = load_csv(
        &p,
        &LoadOptions {
            sensitive: Some("g".into()),
            fill,
            ..opts("y")
        },
    )
    .unwrap();
    assert_eq!(l.report.rows, vec![0, 1, 2]);
    assert_eq!(l.report.dropped, 0);
    assert_eq!(l.dataset.features.row(1).to_vec(), vec![0.0, 5.0, 0.0, 0.0]);
    assert_eq!(l.dataset.groups.as_ref().unwrap().codes, vec![0, 0, 1]);
    assert_eq!(l.schema.class_labels(), ["a", "b"]);
    assert_eq!(
        l.dataset.target.as_ref().unwrap().classes().unwrap(),
        [1, 0, 0]
    );
    // A label column with no value at all: nothing to fill with.
    let none = t.file("none.csv", "x,y\n1,?\n2,NA\n");
    let e = load_csv(&none, &opts("y")).unwrap_err();
    assert!(
        matches!(&e, DataError::NoValues { column, .. } if column == "y"),
        "{e}"
    );
}

#[test]
fn missing_values_dropped_and_counted_or_refused() {
    let t = Tmp::new();
    let p = t.file("m.csv", "x,y,unused\n1,a,?\n?,b,1\n3,NA,1\n4,b,\n5,a,1\n");
    let l = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["x".into()]),
            missing: MissingPolicy::Drop,
            ..opts("y")
        },
    )
    .unwrap();
    // Missing values in an unused column do not matter.
    assert_eq!(l.report.rows, vec![0, 3, 4]);
    assert_eq!(l.report.dropped, 2);
    assert_eq!(
        l.report.missing_by_column,
        vec![("x".into(), 1), ("y".into(), 1)]
    );
    // The message says rows were dropped but names no private count or column.
    let msg = l.report.dropped_message().unwrap();
    assert!(msg.contains("were dropped"), "{msg}");
    let tail = msg.rsplit(".csv").next().unwrap();
    assert!(!tail.contains('2') && !tail.contains("x:"), "{msg}");
    let e = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["x".into()]),
            missing: MissingPolicy::Refuse,
            ..opts("y")
        },
    )
    .unwrap_err();
    assert!(
        matches!(&e, DataError::MissingRefused { at, column, .. } if at.row == 2 && column == "x"),
        "{e}"
    );
    let all = t.file("all.csv", "x,y\n?,a\n1,?\n");
    let drop = LoadOptions {
        missing: MissingPolicy::Drop,
        ..opts("y")
    };
    assert!(matches!(
        load_csv(&all, &drop).unwrap_err(),
        DataError::AllRowsMissing { .. }
    ));
}

#[test]
fn error_target_used_as_feature_or_sensitive() {
    let t = Tmp::new();
    let p = t.file("people.csv", PEOPLE);
    let e = load_csv(
        &p,
        &LoadOptions {
            features: Some(vec!["income".into()]),
            ..opts("income")
        },
    )
    .unwrap_err();
    assert!(matches!(e, DataError::DuplicateColumn { .. }), "{e}");
    let e = load_csv(
        &p,
        &LoadOptions {
            sensitive: Some("income".into()),
            ..opts("income")
        },
    )
    .unwrap_err();
    assert!(matches!(e, DataError::DuplicateColumn { .. }), "{e}");
}

#[test]
fn stored_schema_reads_new_files_by_name_with_fitted_scaling() {
    let t = Tmp::new();
    let train = t.file("people.csv", PEOPLE);
    let mut l = load_csv(
        &train,
        &LoadOptions {
            sensitive: Some("sex".into()),
            categorical: vec!["job".into()],
            ..opts("income")
        },
    )
    .unwrap();
    let mm = MinMax::from_public(&l.schema, &Bounds::parse("age:20:60").unwrap()).unwrap();
    l.schema
        .set_scaling(Scaling::MinMax(mm), &mut l.dataset)
        .unwrap();
    assert_eq!(
        l.dataset.features.row(0).to_vec(),
        vec![0.25, 1.0, 0.0, 0.0]
    );
    // New file: other column order, an extra column, no target, one row with a missing value,
    // one age above the bound (clipped).
    let new = t.file(
        "new.csv",
        "id,sex,job,age\n7,M,nurse,40\n8,F,?,33\n9,F,clerk,80\n",
    );
    let drop = ApplyOptions {
        missing: MissingPolicy::Drop,
        ..ApplyOptions::default()
    };
    let p = l.schema.load(&new, &drop).unwrap();
    assert_eq!(p.report.rows, vec![0, 2]);
    assert_eq!(p.dataset.features.row(0).to_vec(), vec![0.5, 0.0, 0.0, 1.0]);
    assert_eq!(p.dataset.features.row(1).to_vec(), vec![1.0, 1.0, 0.0, 0.0]);
    assert_eq!(p.dataset.groups.as_ref().unwrap().codes, vec![1, 0]);
    assert_eq!(p.dataset.target, None);
    // Unseen level: an error naming row, column and value.
    let bad = t.file("bad.csv", "job,age\npilot,40\n");
    let e = l.schema.load(&bad, &ApplyOptions::default()).unwrap_err();
    assert!(
        matches!(&e, DataError::UnseenLevel { column, value, .. } if column == "job" && value == "pilot"),
        "{e}"
    );
    // Private rows read with a schema learned from public rows (issue #38): an unseen level is
    // no level, a missing age the midpoint of the model's bounds; no error, no value printed.
    let private = ApplyOptions {
        unseen: Unseen::AsMissing,
        ..ApplyOptions::default()
    };
    let bad = t.file("private.csv", "job,age\npilot,?\nnurse,20\n");
    let p = l.schema.load(&bad, &private).unwrap();
    assert_eq!(p.report.rows, vec![0, 1]);
    assert_eq!(p.dataset.features.row(0).to_vec(), vec![0.5, 0.0, 0.0, 0.0]);
    assert_eq!(p.dataset.features.row(1).to_vec(), vec![0.0, 0.0, 0.0, 1.0]);
    // A missing feature column.
    let short = t.file("short.csv", "job\nclerk\n");
    let e = l.schema.load(&short, &ApplyOptions::default()).unwrap_err();
    assert!(
        matches!(&e, DataError::UnknownColumn { column, .. } if column == "age"),
        "{e}"
    );
    // The target is read on request, with the training coding.
    let with_t = l
        .schema
        .load(
            &train,
            &ApplyOptions {
                with_target: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(with_t.dataset.target, l.dataset.target);
}

#[test]
fn bounds_without_private_estimation_are_an_error_naming_the_columns() {
    let t = Tmp::new();
    let p = t.file("m.csv", "x,w,y\n1,2,0\n2,3,1\n");
    let l = load_csv(&p, &opts("y")).unwrap();
    let e = MinMax::from_public(&l.schema, &Bounds::parse("x:0:3").unwrap()).unwrap_err();
    assert!(
        matches!(&e, DataError::PrivateBoundsUnavailable { columns } if columns == "w"),
        "{e}"
    );
    let e =
        MinMax::from_public(&l.schema, &Bounds::parse("x:0:3,w:0:4,v:0:1").unwrap()).unwrap_err();
    assert!(e.to_string().contains("`v`"), "{e}");
}

#[test]
fn stratified_split_of_a_loaded_data_set() {
    let t = Tmp::new();
    let mut text = String::from("x,g,y\n");
    for i in 0..40 {
        text.push_str(&format!(
            "{i},{},{}\n",
            if i % 2 == 0 { "a" } else { "b" },
            (i % 4 < 2) as u8
        ));
    }
    let p = t.file("s.csv", &text);
    let l = load_csv(
        &p,
        &LoadOptions {
            sensitive: Some("g".into()),
            ..opts("y")
        },
    )
    .unwrap();
    let parts = l
        .dataset
        .split(&[0.5, 0.25, 0.25], 3, Stratify::GroupAndLabel)
        .unwrap();
    // Each of the 4 (group, label) cells has 10 rows: 5 / 2.5→3 (round half away) / 2.
    for (p, want) in parts.iter().zip([20, 12, 8]) {
        assert_eq!(p.n_rows(), want);
    }
    let again = l
        .dataset
        .split(&[0.5, 0.25, 0.25], 3, Stratify::GroupAndLabel)
        .unwrap();
    assert_eq!(parts[0].features, again[0].features);
    let sites = l.dataset.partition(&[10, 10, 20], 1).unwrap();
    assert_eq!(
        sites.iter().map(|s| s.n_rows()).collect::<Vec<_>>(),
        vec![10, 10, 20]
    );
}

#[test]
#[cfg_attr(
    not(dpfair_data = "adult.data"),
    ignore = "needs adult.data in DPFAIR_DATA_DIR"
)]
fn adult_raw_with_one_hot() {
    let path = dpfair_data::testdata::path("adult.data");
    let names = "age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,sex,capital-gain,capital-loss,hours-per-week,native-country,income";
    let cat = "workclass,education,marital-status,occupation,relationship,race,native-country";
    // adult.data has no header: columns are 0..14; name them through positions.
    let col = |n: &str| names.split(',').position(|c| c == n).unwrap().to_string();
    let l = load_csv(
        &path,
        &LoadOptions {
            target: Some(col("income")),
            sensitive: Some(col("sex")),
            categorical: cat.split(',').map(col).collect(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(l.report.rows_in_file, 32_561);
    // Every row kept (missing values filled by the public rule: `?` is no level), so n is the
    // file's row count. 103 columns: the 102 below and workclass `Never-worked`, whose 7 rows
    // all lack an occupation.
    assert_eq!(l.dataset.n_rows(), 32_561);
    assert_eq!(l.dataset.n_features(), 103);
    assert_eq!(l.schema.class_labels(), ["<=50K", ">50K"]);
    assert_eq!(l.dataset.groups.as_ref().unwrap().names, ["Female", "Male"]);
    // Rows with `?` (workclass, occupation, native-country) dropped on request: 30,162 remain,
    // the standard count; 6 numeric + 7 + 16 + 7 + 14 + 6 + 5 + 41 one-hot columns = 102.
    let dropped = load_csv(
        &path,
        &LoadOptions {
            target: Some(col("income")),
            sensitive: Some(col("sex")),
            categorical: cat.split(',').map(col).collect(),
            missing: MissingPolicy::Drop,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(dropped.dataset.n_rows(), 30_162);
    assert_eq!(dropped.dataset.n_features(), 102);
}

#[test]
fn private_bounds_are_charged_and_close_to_the_1_and_99_percent_quantiles() {
    use dpfair_data::{BoundSource, PrivateBounds};
    use dpfair_privacy::{Budget, Ledger, Noise};
    let t = Tmp::new();
    // x = 0.00, 0.01, ..., 99.99 (10,000 rows); w has public bounds.
    let mut text = String::from("x,w,y\n");
    for i in 0..10_000 {
        text.push_str(&format!("{},{},{}\n", i as f64 / 100.0, i % 7, i % 2));
    }
    let p = t.file("x.csv", &text);
    let l = load_csv(&p, &opts("y")).unwrap();
    let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
    let mut noise = Noise::seeded(11);
    let coarse = Bounds::parse("x:0:200").unwrap();
    let mm = MinMax::fit(
        &l.schema,
        Some(&l.dataset),
        &Bounds::parse("w:0:6").unwrap(),
        Some(PrivateBounds {
            ledger: &mut ledger,
            noise: &mut noise,
            epsilon: 1.0,
            coarse: &coarse,
        }),
    )
    .unwrap();
    // Two pure-ε entries (the two quantiles), ε/2 each, and nothing for the public column.
    assert_eq!(ledger.entries().len(), 2);
    assert!((ledger.total().unwrap().epsilon - 1.0).abs() < 1e-12);
    assert!(matches!(mm.sources[0], BoundSource::Private { .. }));
    assert_eq!(mm.sources[1], BoundSource::Public);
    assert_eq!((mm.lo[1], mm.hi[1]), (0.0, 6.0));
    // Exponential mechanism, ε = 0.5 per quantile, score sensitivity 1, 1000-point grid: with
    // probability ≥ 1 − 1e-6 the chosen point's rank is within (2/ε)·ln(1000/1e-6) ≈ 83 of the
    // target (0.83 in value here, 0.01 per row), plus one grid step (0.2): tolerance 1.1.
    assert!((mm.lo[0] - 1.0).abs() < 1.1, "{}", mm.lo[0]);
    assert!((mm.hi[0] - 99.0).abs() < 1.1, "{}", mm.hi[0]);
    // Without a coarse range or public bounds, `w` gets automatic bounds (two releases) and
    // `x` its coarse-range quantiles (two): ε/2 each column.
    let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
    let mm = MinMax::fit(
        &l.schema,
        Some(&l.dataset),
        &Bounds::default(),
        Some(PrivateBounds {
            ledger: &mut ledger,
            noise: &mut noise,
            epsilon: 1.0,
            coarse: &coarse,
        }),
    )
    .unwrap();
    assert_eq!(ledger.entries().len(), 4);
    assert!((ledger.total().unwrap().epsilon - 1.0).abs() < 1e-12);
    assert!(matches!(mm.sources[1], BoundSource::Private { .. }));
    assert!(mm.lo[1] < mm.hi[1]);
}

/// `--sensitive race,sex`: each combination of the two columns' values is a group, named by the
/// values joined by ` × `; levels declared in that form; the same groups when a schema reads
/// new rows; a value outside the declared levels, or a missing column, refused naming it.
#[test]
fn two_sensitive_columns_form_intersectional_groups() {
    let t = Tmp::new();
    let text = "age,race,sex,income\n\
                30,B,F,low\n\
                45,W,M,high\n\
                22,W,F,low\n\
                50,B,F,high\n\
                41,W,M,low\n";
    let p = t.file("people.csv", text);
    let options = LoadOptions {
        sensitive: Some("race,sex".into()),
        ..opts("income")
    };
    let l = load_csv(&p, &options).unwrap();
    // Neither part is a feature.
    assert_eq!(l.dataset.feature_names, ["age"]);
    let g = l.dataset.groups.as_ref().unwrap();
    assert_eq!(g.names, ["B × F", "W × F", "W × M"]);
    assert_eq!(g.codes, [0, 2, 1, 0, 2]);
    let s = l.schema.sensitive.as_ref().unwrap();
    assert_eq!((s.name.as_str(), s.declared), ("race,sex", false));
    assert_eq!(dpfair_data::GROUP_SEPARATOR, " × ");

    // Declared levels in the joined form: their order, an absent combination kept.
    let declared = |levels: &[&str]| LoadOptions {
        groups: Some(levels.iter().map(|l| l.to_string()).collect()),
        ..options.clone()
    };
    let l = load_csv(&p, &declared(&["W × M", "W × F", "B × F", "B × M"])).unwrap();
    let g = l.dataset.groups.as_ref().unwrap();
    assert_eq!(g.codes, [2, 0, 1, 2, 0]);
    assert_eq!(g.counts(), [2, 1, 2, 0]);
    assert!(l.schema.sensitive.as_ref().unwrap().declared);
    // A combination outside them is refused, naming the columns, the row and the value.
    let e = load_csv(&p, &declared(&["W × M", "W × F"])).unwrap_err();
    assert!(
        matches!(&e, DataError::UndeclaredLevel { column, value, at, .. }
            if column == "race,sex" && value == "B × F" && at.row == 1),
        "{e:?}"
    );

    // A stored schema forms the same groups on new rows, whose columns may come in any order.
    let new = t.file("new.csv", "sex,income,age,race\nM,low,33,W\nF,high,60,B\n");
    let l = load_csv(&p, &options).unwrap();
    let read = l.schema.load(&new, &ApplyOptions::default()).unwrap();
    assert_eq!(read.dataset.groups.as_ref().unwrap().codes, [2, 0]);
    // Rows without either column are read without groups; with one of them, refused naming
    // the other.
    let none = t.file("none.csv", "age\n33\n");
    let read = l.schema.load(&none, &ApplyOptions::default()).unwrap();
    assert!(read.dataset.groups.is_none());
    let half = t.file("half.csv", "age,race\n33,W\n");
    let e = l.schema.load(&half, &ApplyOptions::default()).unwrap_err();
    assert!(
        matches!(&e, DataError::UnknownColumn { column, .. } if column == "sex"),
        "{e}"
    );
    // A training file without one of the columns: refused naming it.
    let e = load_csv(
        &p,
        &LoadOptions {
            sensitive: Some("race,gender".into()),
            ..opts("income")
        },
    )
    .unwrap_err();
    assert!(
        matches!(&e, DataError::UnknownColumn { column, parameter, .. }
            if column == "gender" && *parameter == "--sensitive"),
        "{e}"
    );
    // A part holding the separator is refused (two combinations would join alike).
    let q = t.file(
        "sep.csv",
        "age,race,sex,income\n30,B × W,F,low\n45,W,M,high\n",
    );
    let e = load_csv(&q, &options).unwrap_err().to_string();
    assert!(
        e.contains("column `race`") && e.contains("separates"),
        "{e}"
    );
}
