//! A user's own CSV loads as they expect without any option but the target: text columns are
//! one-hot encoded, columns named like identifiers are left out (with a note), `--drop` leaves
//! out more, a text column with too many distinct values is refused naming it, and 0/1 columns
//! get the bounds [0, 1] free of charge while the other numeric columns are estimated privately
//! (three charged releases each) whatever their magnitude.

use dpfair_data::{BoundSource, Bounds, BoundsPlan, LoadOptions, MinMax, PrivateBounds, load_csv};
use dpfair_privacy::{Budget, Ledger, Noise};

/// 400 rows: an `id`, a `customer_id`, a text `job`, a 0/1 `flag`, columns at 1e-9, 1e11, a
/// negative and a constant column, and a target `y`.
fn csv() -> String {
    let mut s = String::from("id,customer_id,job,flag,tiny,huge,neg,const,y\n");
    for i in 0..400 {
        s.push_str(&format!(
            "{i},{},{},{},{:e},{:e},{},7,{}\n",
            1000 + i,
            ["clerk", "nurse", "driver"][i % 3],
            i % 2,
            1e-9 * (1 + i % 50) as f64,
            1e11 * (1.0 + (i % 40) as f64 / 10.0),
            -5000.0 - (i % 30) as f64 * 10.0,
            ["no", "yes"][(i / 3) % 2],
        ));
    }
    s
}

fn load(text: &str, drop: &[&str]) -> dpfair_data::Result<dpfair_data::Loaded> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("own.csv");
    std::fs::write(&path, text).unwrap();
    load_csv(
        &path,
        &LoadOptions {
            target: Some("y".into()),
            drop: drop.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        },
    )
}

#[test]
fn text_columns_are_one_hot_and_identifier_names_are_left_out() {
    let l = load(&csv(), &[]).unwrap();
    let names: Vec<&str> = l.schema.features.iter().map(|f| f.name()).collect();
    assert_eq!(names, ["job", "flag", "tiny", "huge", "neg", "const"]);
    assert_eq!(l.report.skipped_ids, ["id", "customer_id"]);
    assert_eq!(l.report.text_columns, ["job"]);
    let note = l.report.skipped_ids_message().unwrap();
    assert!(
        note.contains("`id`") && note.contains("`customer_id`"),
        "{note}"
    );
    assert_eq!(
        l.dataset.feature_names[..3],
        ["job=clerk", "job=driver", "job=nurse"]
    );
    // --drop leaves out more (and is not reported again as an identifier).
    let l = load(&csv(), &["const", "id"]).unwrap();
    let names: Vec<&str> = l.schema.features.iter().map(|f| f.name()).collect();
    assert_eq!(names, ["job", "flag", "tiny", "huge", "neg"]);
    assert_eq!(l.report.skipped_ids, ["customer_id"]);
    // A misspelt --drop names the option.
    let e = load(&csv(), &["nope"]).unwrap_err().to_string();
    assert!(e.contains("--drop") && e.contains("nope"), "{e}");
}

#[test]
fn a_text_column_with_too_many_values_is_refused_naming_it() {
    let mut s = String::from("code,x,y\n");
    for i in 0..300 {
        s.push_str(&format!("c{i},{},{}\n", i % 5, i % 2));
    }
    let e = load(&s, &[]).unwrap_err().to_string();
    assert!(e.contains("`code`") && e.contains("--drop code"), "{e}");
    assert!(load(&s, &["code"]).is_ok());
}

/// Identifier rule by name only: exact names and suffixes, never substrings of words.
#[test]
fn identifier_names() {
    for id in [
        "id",
        "ID",
        "Id",
        "index",
        "Unnamed: 0",
        "customer_id",
        "row-id",
        "user id",
    ] {
        assert!(dpfair_data::load::is_id_like(id), "{id}");
    }
    for not in ["paid", "valid", "idle", "width", "identity_score", "rider"] {
        assert!(!dpfair_data::load::is_id_like(not), "{not}");
    }
}

#[test]
fn private_bounds_cover_every_magnitude_and_binary_columns_are_free() {
    let l = load(&csv(), &[]).unwrap();
    let plan = BoundsPlan::of(&l.schema, &l.dataset, &Bounds::default());
    assert_eq!(plan.binary, ["flag"]);
    assert_eq!(plan.private, ["tiny", "huge", "neg", "const"]);
    assert_eq!(plan.one_hot, [("job".to_string(), 3)]);
    let mut ledger = Ledger::new(Budget::pure(4.0).unwrap());
    let mm = MinMax::fit(
        &l.schema,
        Some(&l.dataset),
        &Bounds::default(),
        Some(PrivateBounds {
            ledger: &mut ledger,
            noise: &mut Noise::os(),
            epsilon: 4.0,
            coarse: &Bounds::default(),
        }),
    )
    .unwrap();
    // Two releases per private column, ε = 4 in total (1 per column).
    assert_eq!(ledger.entries().len(), 2 * 4);
    assert!((ledger.total().unwrap().epsilon - 4.0).abs() < 1e-12);
    assert_eq!(mm.plan(&l.schema), plan);
    assert_eq!(mm.sources[3], BoundSource::Binary);
    assert_eq!((mm.lo[3], mm.hi[3]), (0.0, 1.0));
    for j in 4..8 {
        assert!(mm.lo[j].is_finite() && mm.lo[j] < mm.hi[j], "column {j}");
    }
    // Scaling keeps every value in [0, 1].
    let mut x = l.dataset.features.clone();
    mm.apply(&mut x).unwrap();
    assert!(x.iter().all(|v| (0.0..=1.0).contains(v)));
}
