//! Issue #41 part 7: a CSV header of hundreds of thousands of columns loads in well under a
//! second (the duplicate-name check was quadratic: 10⁶ columns did not finish in 240 s), and a
//! duplicate name at its end is still named.

use dpfair_data::{LoadOptions, load};

fn wide(dir: &std::path::Path, n: usize, last: &str) -> std::path::PathBuf {
    let mut names: Vec<String> = (0..n - 1).map(|i| format!("c{i}")).collect();
    names.push(last.to_string());
    let row = vec!["1"; n].join(",");
    let zero = vec!["0"; n].join(",");
    let path = dir.join("wide.csv");
    std::fs::write(&path, format!("{}\n{row}\n{zero}\n", names.join(","))).unwrap();
    path
}

#[test]
fn a_very_wide_header_loads_quickly_and_duplicates_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let n = 300_000;
    let opts = LoadOptions {
        target: Some("c0".into()),
        features: Some(vec!["c1".into(), "c2".into()]),
        ..LoadOptions::default()
    };
    let started = std::time::Instant::now();
    let loaded = load(wide(dir.path(), n, "last"), &opts).unwrap();
    // Quadratic, 3·10⁵ columns took about two minutes; linear, well under a second.
    assert!(
        started.elapsed().as_secs() < 20,
        "{:?} for {n} columns",
        started.elapsed()
    );
    assert_eq!(loaded.dataset.n_features(), 2);
    let e = load(wide(dir.path(), n, "c7"), &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("names column `c7` twice"), "{e}");
}
