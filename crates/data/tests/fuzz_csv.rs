//! Fuzzing the CSV loader: generated CSV texts (ragged rows, quotes, byte-order marks,
//! NaN, infinities, `-0`, `1.0`, empty fields, huge fields, odd delimiters) under generated load
//! options. Every input must give a loaded data set that keeps the loader's invariants or an
//! error; a panic fails the test.
//!
//! Cases: `FUZZ_CSV_CASES` (5,000) per `cargo test`; set `DPFAIR_FUZZ_SCALE=N` for N times more.

use dpfair_data::{CsvFormat, LoadOptions, MissingPolicy, Target, TaskKind, load_csv};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const FUZZ_CSV_CASES: u32 = 5_000;

fn cases(base: u32) -> u32 {
    let scale: u32 = std::env::var("DPFAIR_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    base.saturating_mul(scale.max(1))
}

/// A field: numbers of every awkward kind, labels, missing markers, quoting and junk.
fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (-3i32..4).prop_map(|v| v.to_string()),
        2 => prop::sample::select(vec![
            "0", "1", "-0", "1.0", "0.0", "1e0", "NaN", "nan", "inf", "-inf", "1e308", "1e-320",
            "?", "NA", "", " ", "a", "b", "\"q,uoted\"", "\"", "x\"y", "\u{feff}1", "é", "+1",
            "0x1", "1_000", "--1", "1e", ".", "-",
        ])
        .prop_map(String::from),
        1 => any::<f64>().prop_map(|v| v.to_string()),
        1 => "[a-z0-9,;\"\t \\-.]{0,12}",
        1 => (1usize..5000).prop_map(|n| "9".repeat(n)),
    ]
}

/// A CSV text: a header (or not), rows of a usually-but-not-always constant width.
fn csv_text() -> impl Strategy<Value = String> {
    (1usize..5, 0usize..12, any::<bool>(), any::<bool>(), 0u8..3).prop_flat_map(
        |(width, rows, header, bom, delim)| {
            let d = [",", ";", "\t"][delim as usize];
            let row = prop::collection::vec(field(), width..=width + 1);
            prop::collection::vec(row, rows..=rows).prop_map(move |body| {
                let mut s = String::new();
                if bom {
                    s.push('\u{feff}');
                }
                if header {
                    let names: Vec<String> = (0..width).map(|j| format!("c{j}")).collect();
                    s += &names.join(d);
                    s.push('\n');
                }
                for r in body {
                    s += &r.join(d);
                    s.push('\n');
                }
                s
            })
        },
    )
}

/// Load options naming columns that may or may not exist.
fn options() -> impl Strategy<Value = LoadOptions> {
    let col = || prop::option::of((0usize..5).prop_map(|j| format!("c{j}")));
    (
        col(),
        col(),
        prop::option::of(prop::sample::select(vec![
            TaskKind::Binary,
            TaskKind::Multiclass,
            TaskKind::Regression,
        ])),
        prop::option::of(prop::sample::select(vec![
            vec!["0".to_string(), "1".to_string()],
            vec!["a".to_string(), "b".to_string(), "1.0".to_string()],
            vec!["1".to_string(), "1.0".to_string()],
            vec![],
        ])),
        prop::option::of(prop::sample::select(vec!["0", "1", "a", "1.0"])),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(target, sensitive, task, declared, positive, refuse, classes_not_groups)| {
                LoadOptions {
                    target,
                    sensitive,
                    task,
                    groups: (!classes_not_groups).then(|| declared.clone()).flatten(),
                    classes: classes_not_groups.then_some(declared).flatten(),
                    positive: positive.map(String::from),
                    missing: if refuse {
                        MissingPolicy::Refuse
                    } else {
                        MissingPolicy::Drop
                    },
                    format: CsvFormat::default(),
                    ..Default::default()
                }
            },
        )
}

#[test]
fn fuzz_csv_loader_never_panics_and_keeps_its_invariants() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.csv");
    let mut runner = TestRunner::new(Config {
        cases: cases(FUZZ_CSV_CASES),
        failure_persistence: None,
        ..Config::default()
    });
    let loaded = std::cell::Cell::new(0u32);
    runner
        .run(&(csv_text(), options()), |(text, opts)| {
            std::fs::write(&path, &text).unwrap();
            let Ok(l) = load_csv(&path, &opts) else {
                return Ok(());
            };
            loaded.set(loaded.get() + 1);
            let ds = &l.dataset;
            let n = ds.features.nrows();
            prop_assert!(n >= 1 && n <= l.report.rows_in_file);
            prop_assert_eq!(n, l.report.rows.len());
            prop_assert!(ds.features.iter().all(|v| v.is_finite()));
            if let Some(g) = &ds.groups {
                prop_assert_eq!(g.codes.len(), n);
                prop_assert!(g.codes.iter().all(|&c| (c as usize) < g.names.len()));
                if let Some(declared) = &opts.groups {
                    prop_assert_eq!(&g.names, declared);
                }
            }
            match &ds.target {
                Some(Target::Binary(y)) => {
                    prop_assert_eq!(y.len(), n);
                    prop_assert!(y.iter().all(|&v| v <= 1));
                }
                Some(Target::Multiclass { k, labels }) => {
                    prop_assert_eq!(labels.len(), n);
                    prop_assert!(labels.iter().all(|&c| (c as usize) < *k));
                }
                Some(Target::Real(v)) => {
                    prop_assert_eq!(v.len(), n);
                    prop_assert!(v.iter().all(|x| x.is_finite()));
                }
                None => prop_assert!(opts.target.is_none()),
            }
            if let Some(t) = &l.schema.target {
                // No class label is a non-finite number, and no two labels are the same number.
                let nums: Vec<f64> = t
                    .encoding
                    .labels()
                    .iter()
                    .filter_map(|s| s.trim().parse::<f64>().ok())
                    .collect();
                prop_assert!(nums.iter().all(|x| x.is_finite()));
                for (i, a) in nums.iter().enumerate() {
                    prop_assert!(nums[i + 1..].iter().all(|b| b != a), "{:?}", nums);
                }
            }
            Ok(())
        })
        .unwrap();
    // The generator must reach the success path, or the invariants were never checked.
    let loaded = loaded.get();
    assert!(loaded > 0, "no generated CSV loaded");
    eprintln!("fuzz_csv: {} cases, {loaded} loaded", cases(FUZZ_CSV_CASES));
}
