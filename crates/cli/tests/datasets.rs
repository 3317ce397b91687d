//! `dpfair datasets list` and `dpfair datasets info NAME`.

mod common;
use common::{bad, ok, scratch};

/// `dpfair ARGS` with the data folder given by `--data-dir` only (the environment's is removed).
fn dpfair(args: &[&str], data_dir: Option<&std::path::Path>) -> std::process::Output {
    let mut c = common::command();
    c.args(args).env_remove("DPFAIR_DATA_DIR");
    if let Some(d) = data_dir {
        c.arg("--data-dir").arg(d);
    }
    c.output().unwrap()
}

#[test]
fn list_shows_every_dataset_and_its_status() {
    let empty = scratch("datasets", "empty");
    let s = ok(&dpfair(&["datasets", "list"], Some(&empty)));
    for name in [
        "adult",
        "adult-fdp",
        "law-admissions",
        "law-bar",
        "communities",
        "credit",
        "credit-dp2dp",
        "parkinsons",
        "diabetes-lpct",
        "gaussian-mixture",
    ] {
        assert!(s.contains(name), "{name} missing from\n{s}");
    }
    assert!(
        s.contains("45222") && s.contains("adult.data: missing"),
        "{s}"
    );
    // Info on a missing file says where to obtain it, exit 2.
    let err = bad(&dpfair(&["datasets", "info", "parkinsons"], Some(&empty)));
    assert!(
        err.contains("https://archive.ics.uci.edu/dataset/189"),
        "{err}"
    );
    std::fs::remove_dir_all(&empty).unwrap();
}

#[test]
#[cfg_attr(
    not(dpfair_data = "parkinsons_updrs.tsv"),
    ignore = "needs parkinsons_updrs.tsv in DPFAIR_DATA_DIR"
)]
fn info_prints_group_and_label_balance() {
    let dir = dpfair_data::testdata::path("parkinsons_updrs.tsv")
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let s = ok(&dpfair(&["datasets", "info", "parkinsons"], Some(&dir)));
    // Say et al.: Male 4,008 / Female 1,867; 2,934 positives of 5,875.
    assert!(s.contains("5875 rows × 19 features"), "{s}");
    assert!(
        s.lines()
            .any(|l| l.starts_with("male") && l.contains("4008")),
        "{s}"
    );
    assert!(
        s.lines()
            .any(|l| l.starts_with("all") && l.contains("2934")),
        "{s}"
    );
}

#[test]
fn unknown_dataset_is_bad_input() {
    let err = bad(&dpfair(
        &["datasets", "info", "adulte"],
        Some(std::path::Path::new("/tmp")),
    ));
    assert!(err.contains("adult-fdp"), "{err}");
}

#[test]
fn list_without_a_data_folder_says_how_to_point_at_one() {
    // A newcomer: no DPFAIR_DATA_DIR, no --data-dir, an empty cache folder.
    let cache = scratch("datasets", "cache");
    let out = common::command()
        .args(["datasets", "list"])
        .env_remove("DPFAIR_DATA_DIR")
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    ok(&out);
    let err = common::stderr(&out);
    assert!(
        err.contains("missing from") && err.contains("export DPFAIR_DATA_DIR=/path/to/datasets"),
        "{err}"
    );
    assert!(err.contains("--data-dir"), "{err}");
    std::fs::remove_dir_all(&cache).unwrap();
}
