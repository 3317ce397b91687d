//! `dpfair datasets list` and `dpfair datasets info NAME`.

use std::process::Command;

fn dpfair(args: &[&str], data_dir: Option<&std::path::Path>) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dpfair"));
    c.args(args).env_remove("DPFAIR_DATA_DIR");
    if let Some(d) = data_dir {
        c.arg("--data-dir").arg(d);
    }
    c.output().unwrap()
}

#[test]
fn list_shows_every_dataset_and_its_status() {
    let empty = std::env::temp_dir().join(format!("dpfair-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let o = dpfair(&["datasets", "list"], Some(&empty));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
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
    let o = dpfair(&["datasets", "info", "parkinsons"], Some(&empty));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("https://archive.ics.uci.edu/dataset/189"));
    std::fs::remove_dir_all(&empty).unwrap();
}

#[test]
fn info_prints_group_and_label_balance() {
    let Some(dir) = std::env::var_os("DPFAIR_DATA_DIR").map(std::path::PathBuf::from) else {
        eprintln!("skipped: datasets info: DPFAIR_DATA_DIR is not set");
        return;
    };
    if !dir.join("parkinsons_updrs.tsv").is_file() {
        eprintln!(
            "skipped: datasets info: parkinsons_updrs.tsv is not in {}",
            dir.display()
        );
        return;
    }
    let o = dpfair(&["datasets", "info", "parkinsons"], Some(&dir));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Seed 004 §4.2: Male 4,008 / Female 1,867; 2,934 positives of 5,875.
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
    let o = dpfair(
        &["datasets", "info", "adulte"],
        Some(std::path::Path::new("/tmp")),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("adult-fdp"));
}
