//! The shared data arguments of `fit` commands (`cmd/common.rs`) through the built binary, using
//! `dpfair fit dp-logistic` as the carrier: messages name file, row and column; missing values are
//! counted; public bounds are free; private bounds are charged and shown by `dpfair ledger`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpfair-cli-data-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn dpfair(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpfair"))
        .args(args)
        .output()
        .expect("run dpfair")
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

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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
    // `job` without --categorical: a non-numeric value, with the hint.
    let o = dpfair(&[
        "fit",
        "dp-logistic",
        "--data",
        d.to_str().unwrap(),
        "--target",
        "y",
        "--epsilon",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("data row 1") && err.contains("`job`") && err.contains("--categorical"),
        "{err}"
    );
}

#[test]
fn missing_rows_reported_and_public_bounds_recorded() {
    let dir = scratch("bounds");
    let d = data(&dir);
    let out = dir.join("m.json");
    let o = fit(&d, &out, &["--bounds", "age:18:65"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("dropped 1 of 200 rows with missing values (age: 1)"),
        "{err}"
    );
    let o = dpfair(&["ledger", out.to_str().unwrap()]);
    let r = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
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
