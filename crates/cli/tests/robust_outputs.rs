//! Nothing lost: outputs are written atomically, an output that is one of the inputs
//! or cannot be written is refused before any work, and a failed write keeps the previous file.
//! Also the project's label, bound and message defects, end to end through the binary.

mod common;
use common::{arg, bad, design_csv, dpfair, ok, scratch, stderr, write};
use std::path::{Path, PathBuf};

/// 400 rows `x1,x2,a,y` of the Xue & Yu design.
fn data_csv(dir: &Path) -> PathBuf {
    design_csv(dir, "data.csv", 400, 9)
}

fn fit_cdp(data: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let public = ["--bounds", "x1:0:1,x2:0:1", "--alpha", "0.1"];
    common::fit_cdp_fair(data, out, &[&public[..], extra].concat())
}

#[test]
fn fit_refuses_to_write_the_model_over_its_training_data() {
    let dir = scratch("robust", "out-is-data");
    let data = data_csv(&dir);
    let before = std::fs::read(&data).unwrap();
    // Also under another spelling of the same path.
    let other = dir.join(".").join("data.csv");
    for out in [&data, &other] {
        let err = bad(&fit_cdp(&data, out, &[]));
        assert!(err.contains("--out") && err.contains("--data"), "{err}");
        assert_eq!(std::fs::read(&data).unwrap(), before, "the input changed");
    }
}

#[test]
fn predict_refuses_an_output_that_is_its_model_or_data() {
    let dir = scratch("robust", "predict-out");
    let data = data_csv(&dir);
    let model = dir.join("m.json");
    ok(&fit_cdp(&data, &model, &[]));
    let (model_before, data_before) = (
        std::fs::read(&model).unwrap(),
        std::fs::read(&data).unwrap(),
    );
    for (out, named) in [(&model, "--model"), (&data, "--data")] {
        let err = bad(&common::predict(&model, &data, out, &[]));
        assert!(err.contains(named), "{err}");
    }
    assert_eq!(std::fs::read(&model).unwrap(), model_before);
    assert_eq!(std::fs::read(&data).unwrap(), data_before);
}

#[test]
fn an_unwritable_output_is_reported_before_the_data_is_read() {
    let dir = scratch("robust", "unwritable");
    // A data file with a bad row: were the data read first, the message would be about it.
    let data = write(&dir, "bad.csv", "x1,x2,a,y\n0.1,0.2,0,1\n0.3,oops,1,0\n");
    let err = bad(&fit_cdp(&data, &dir.join("no/such/folder/m.json"), &[]));
    assert!(
        err.contains("--out") && err.contains("does not exist"),
        "{err}"
    );
    assert!(!err.contains("oops"), "the data was read first: {err}");
}

/// With a file-size limit (`ulimit -f`) the new model cannot be written: the previous good model
/// must survive whole (it was truncated to 102,400 bytes before), and no partial file is left
/// under the model's name.
#[cfg(unix)]
#[test]
fn a_failed_model_write_keeps_the_previous_model() {
    let dir = scratch("robust", "ulimit");
    let data = data_csv(&dir);
    let model = dir.join("m.json");
    ok(&fit_cdp(&data, &model, &[]));
    let good = std::fs::read(&model).unwrap();
    assert!(good.len() > 4096, "the model must exceed the limit below");
    let script = format!(
        "ulimit -f 4; exec \"$0\" fit cdp-fair --data '{}' --target y --sensitive a \
         --bounds x1:0:1,x2:0:1 --alpha 0.2 --epsilon 1 --out '{}'",
        data.display(),
        model.display()
    );
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_dpfair"))
        .output()
        .unwrap();
    assert!(!out.status.success(), "the write should have failed");
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&model).unwrap(),
        good,
        "the previous model changed"
    );
    // The model still loads and predicts.
    ok(&common::predict(&model, &data, &dir.join("p.csv"), &[]));
}

#[test]
fn a_model_file_starting_with_a_byte_order_mark_loads() {
    let dir = scratch("robust", "bom");
    let data = data_csv(&dir);
    let model = dir.join("m.json");
    ok(&fit_cdp(&data, &model, &[]));
    let mut text = "\u{feff}".as_bytes().to_vec();
    text.extend(std::fs::read(&model).unwrap());
    std::fs::write(&model, text).unwrap();
    ok(&common::predict(&model, &data, &dir.join("p.csv"), &[]));
}

#[test]
fn evaluate_accepts_a_one_class_test_file_with_positive_or_classes() {
    let dir = scratch("robust", "one-class");
    let test = write(&dir, "t.csv", "a,y\n0,1\n1,1\n0,1\n1,1\n");
    let pred = write(&dir, "p.csv", "prediction\n1\n0\n1\n1\n");
    for extra in [["--positive", "1"], ["--classes", "0,1"]] {
        let mut args = vec![
            "evaluate",
            "--data",
            arg(&test),
            "--predictions",
            arg(&pred),
            "--target",
            "y",
            "--sensitive",
            "a",
        ];
        args.extend_from_slice(&extra);
        let out = ok(&dpfair(&args));
        assert!(out.contains("accuracy: 0.750000"), "{extra:?}: {out}");
    }
}

#[test]
fn nan_or_infinite_targets_are_refused_not_made_a_class() {
    let dir = scratch("robust", "nan-target");
    let good = std::fs::read_to_string(data_csv(&dir)).unwrap();
    for bad_value in ["NaN", "inf"] {
        let text = good.replacen(",0\n", &format!(",{bad_value}\n"), 1);
        let data = write(&dir, "nan.csv", &text);
        let model = dir.join("m.json");
        let err = bad(&dpfair(&common::fit_args("dp2dp", &data, "1", &model, &[])));
        assert!(
            err.contains("not finite") && err.contains("nan.csv"),
            "{err}"
        );
    }
}

#[test]
fn one_and_one_point_zero_are_one_class() {
    let dir = scratch("robust", "numeric-labels");
    let good = std::fs::read_to_string(data_csv(&dir)).unwrap();
    // `1.0` for one `1` and `-0` for one `0`: still a binary target.
    let text = good
        .replacen(",1\n", ",1.0\n", 1)
        .replacen(",0\n", ",-0\n", 1);
    let data = write(&dir, "labels.csv", &text);
    let model = dir.join("m.json");
    ok(&fit_cdp(&data, &model, &[]));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let labels = &m["schema"]["target"]["encoding"]["labels"];
    assert_eq!(labels.as_array().map(Vec::len), Some(2), "{labels}");
}

#[test]
fn a_declared_class_list_refuses_a_stray_label() {
    let dir = scratch("robust", "declared-classes");
    let good = std::fs::read_to_string(data_csv(&dir)).unwrap();
    let data = write(&dir, "stray.csv", &good.replacen(",1\n", ",2\n", 1));
    let err = bad(&fit_cdp(&data, &dir.join("m.json"), &["--classes", "0,1"]));
    // The message names the option, the row and the column, never the value (the rows are
    // private).
    assert!(
        err.contains("--classes") && err.contains("a value that is not one of"),
        "{err}"
    );
    assert!(!err.contains("`2`"), "{err}");
}

/// Options that size an allocation or a loop are refused up front with exit 2 (they aborted with
/// exit 134 or ran for a minute before).
#[test]
fn resource_exhausting_options_are_refused_up_front() {
    let dir = scratch("robust", "bounds");
    let data = data_csv(&dir);
    let out = dir.join("m.json");
    let err = bad(&fit_cdp(&data, &out, &["--tau-grid", "1000000001"]));
    assert!(err.contains("tau") && err.contains("1048577"), "{err}");
    let decoupled =
        |extra: &[&str]| dpfair(&common::fit_args("decoupled", &data, "3", &out, extra));
    let err = bad(&decoupled(&["--noise-multiplier", "1e-300"]));
    assert!(err.contains("noise"), "{err}");
    let err = bad(&decoupled(&["--delta", "0.999999"]));
    assert!(err.contains("delta"), "{err}");
    let err = bad(&dpfair(&[
        "fit",
        "fair-regression",
        "--data",
        arg(&data),
        "--scores",
        "x1",
        "--sensitive",
        "a",
        "--epsilon",
        "1",
        "--range",
        "0,1",
        "--bins",
        "100000000",
        "--out",
        arg(&out),
    ]));
    assert!(err.contains("bins") && err.contains("1048576"), "{err}");
}

/// Probability columns that do not sum to 1 are reported with the file and its 1-based row (the
/// message said "row 0" without a file).
#[test]
fn bad_probability_rows_are_named_by_file_and_one_based_row() {
    let dir = scratch("robust", "p-sum");
    let test = write(&dir, "t.csv", "a,y\n0,1\n1,0\n");
    let pred = write(&dir, "p.csv", "prediction,p_0,p_1\n1,0.5,0.5\n0,0.7,0.7\n");
    let err = bad(&dpfair(&[
        "evaluate",
        "--data",
        arg(&test),
        "--predictions",
        arg(&pred),
        "--target",
        "y",
        "--sensitive",
        "a",
    ]));
    assert!(err.contains("p.csv") && err.contains("data row 2"), "{err}");
}

/// An extreme bandwidth is refused naming the option (it ended in a NaN message before).
#[test]
fn an_extreme_bandwidth_is_refused_naming_the_option() {
    let dir = scratch("robust", "bandwidth");
    let data = data_csv(&dir);
    for h in ["1e-300", "1e300"] {
        let err = bad(&fit_cdp(&data, &dir.join("m.json"), &["--bandwidth", h]));
        assert!(err.contains("bandwidth"), "{h}: {err}");
        assert!(!err.contains("NaN"), "{h}: {err}");
    }
}

/// A reproduction folder in use by another run is refused (two runs into one folder duplicated
/// every cell before), naming the owner's process id.
#[test]
fn reproduce_refuses_a_folder_locked_by_a_live_run() {
    let dir = scratch("robust", "reproduce-lock");
    // This test's own process is alive: its id in the lock file means "in use".
    let me = std::process::id().to_string();
    write(&dir, ".dpfair.lock", &format!("{me}\n"));
    let err = bad(&dpfair(&[
        "reproduce",
        "fair-bayes",
        "--quick",
        "--out",
        arg(&dir),
    ]));
    assert!(err.contains("in use") && err.contains(&me), "{err}");
    assert!(
        !dir.join("raw.csv").exists(),
        "the refused run wrote raw.csv"
    );
}

/// A negative number after a numeric option is that option's value, refused by its own check
/// with a message naming the option and the value (clap read `--guard -1` as an unknown flag
/// `-1` before), and no model is written.
#[test]
fn negative_numbers_are_values_refused_by_their_option() {
    let dir = scratch("robust", "negative-numbers");
    let data = data_csv(&dir);
    let model = dir.join("m.json");
    let bounds = ["--bounds", "x1:0:1,x2:0:1"];
    let cases: [(&str, &str, &[&str]); 5] = [
        ("cdp-fair", "2", &["--alpha", "-0.1"]),
        ("dp2dp", "2", &["--rho", "-0.1"]),
        ("decoupled", "-1", &[]),
        ("dp2dp", "2", &["--c-lambda", "-2"]),
        ("fdp-fair", "2", &["--sites", "2", "--alpha", "-0.5"]),
    ];
    for (method, epsilon, extra) in cases {
        let args = common::fit_args(
            method,
            &data,
            epsilon,
            &model,
            &[&bounds[..], extra].concat(),
        );
        let err = bad(&dpfair(&args));
        let (option, value) = if extra.is_empty() {
            ("--epsilon", epsilon)
        } else {
            (extra[extra.len() - 2], extra[extra.len() - 1])
        };
        let name = option.trim_start_matches("--").replace('-', "_");
        assert!(
            (err.contains(option) || err.contains(&name)) && err.contains(value),
            "{method} {option} {value}: {err}"
        );
        assert!(!err.contains("unexpected argument"), "{err}");
        assert!(!model.exists());
    }
    let err = bad(&dpfair(&common::fit_lpct_args(
        &data,
        &model,
        &["--guard", "-1"],
    )));
    assert!(err.contains("--guard") && err.contains("-1"), "{err}");
}
