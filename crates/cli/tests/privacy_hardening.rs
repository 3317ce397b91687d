//! Privacy hardening through the built binary: `--seed` keys public randomness only (the release
//! noise never repeats), `--insecure-seeded-noise` repeats and says NOT PRIVATE, every model file
//! any `fit` writes reads back (ε = ∞ included) with one neighbour relation in its ledger, and
//! edited model files are refused.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::{arg, bad, dpfair, ok, scratch, stderr, write};

/// A binary task with two groups, 1,200 rows of the Xue & Yu synthetic design on raw scales
/// (`age` in [17, 90], `score` in [120, 180], groups f/m, labels no/yes), and a regression score
/// `gpa` in [1, 4] for fair regression.
fn write_data(dir: &Path) -> PathBuf {
    let design = dpfair::data::synthetic::FdpFairDesign::default();
    let d = dpfair::data::synthetic::Design::generate(&design, 1200, 5).unwrap();
    let codes = &d.groups.as_ref().unwrap().codes;
    let dpfair::data::Target::Binary(y) = d.target.as_ref().unwrap() else {
        unreachable!()
    };
    let mut s = String::from("age,score,sex,label,gpa\n");
    for i in 0..d.n_rows() {
        let (x1, x2) = (d.features[[i, 0]], d.features[[i, 1]]);
        s.push_str(&format!(
            "{:.3},{:.3},{},{},{:.3}\n",
            17.0 + 73.0 * x1,
            120.0 + 60.0 * x2,
            if codes[i] == 1 { "m" } else { "f" },
            if y[i] == 1 { "yes" } else { "no" },
            1.0 + 3.0 * (0.5 * x1 + 0.5 * x2)
        ));
    }
    write(dir, "data.csv", &s)
}

/// The public and private files of LPCT: the same columns, disjoint rows.
fn write_lpct(dir: &Path) -> (PathBuf, PathBuf) {
    let text = std::fs::read_to_string(write_data(dir)).unwrap();
    let mut lines = text.lines();
    let header = "age,score,label\n".to_string();
    lines.next();
    let rows: Vec<String> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("{},{},{}\n", f[0], f[1], f[3])
        })
        .collect();
    let public = header.clone() + &rows[..400].concat();
    let private = header + &rows[400..].concat();
    (
        write(dir, "public.csv", &public),
        write(dir, "private.csv", &private),
    )
}

const BINARY: [&str; 8] = [
    "--target",
    "label",
    "--sensitive",
    "sex",
    "--features",
    "age,score",
    "--bounds",
    "age:17:90,score:120:180",
];

/// The arguments of `dpfair fit METHOD` on the files in `dir` (without budget and output).
fn method_args(method: &str, data: &Path, lpct: &(PathBuf, PathBuf)) -> Vec<String> {
    let mut v: Vec<String> = vec!["fit".into(), method.into()];
    match method {
        "lpct" | "lpct-prune" => {
            v.extend(["--public".into(), arg(&lpct.0).into()]);
            v.extend(["--private".into(), arg(&lpct.1).into()]);
            v.extend(["--target".into(), "label".into()]);
        }
        "fair-regression" => {
            v.extend(["--data".into(), arg(data).into()]);
            for a in [
                "--scores",
                "gpa",
                "--sensitive",
                "sex",
                "--alpha",
                "0.1",
                "--bins",
                "12",
                "--range",
                "1,4",
            ] {
                v.push(a.into());
            }
        }
        _ => {
            v.extend(["--data".into(), arg(data).into()]);
            v.extend(BINARY.iter().map(|s| s.to_string()));
            if method == "fdp-fair" {
                v.extend([
                    "--sites".into(),
                    "2".into(),
                    "--frequencies".into(),
                    "64".into(),
                ]);
            }
            if method == "dp2dp" {
                v.extend(["--rho".into(), "0.1".into()]);
            }
        }
    }
    v
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn run_fit(args: &[String], extra: &[&str], out: &Path) -> std::process::Output {
    let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
    a.extend_from_slice(extra);
    a.extend(["--out", arg(out)]);
    dpfair(&a)
}

#[test]
fn the_same_seed_repeats_public_choices_but_never_the_noise() {
    let dir = scratch("privacy", "same_seed");
    let data = write_data(&dir);
    let lpct = write_lpct(&dir);
    for method in ["cdp-fair", "fair-regression", "lpct"] {
        let args = method_args(method, &data, &lpct);
        let (a, b) = (
            dir.join(format!("{method}-a.json")),
            dir.join(format!("{method}-b.json")),
        );
        for out in [&a, &b] {
            ok(&run_fit(&args, &["--epsilon", "2", "--seed", "7"], out));
        }
        let (ma, mb) = (json(&a), json(&b));
        // The released values differ: the noise came from the operating system both times.
        assert_ne!(ma["model"], mb["model"], "{method}: the noise repeated");
        assert_eq!(ma["ledger"]["noise"], "os", "{method}");
        // The public randomness repeats: the same split.
        if method == "cdp-fair" {
            assert_eq!(ma["model"]["split_seed"], mb["model"]["split_seed"]);
        }
    }
}

#[test]
fn ldp_reports_with_the_same_seed_differ() {
    let dir = scratch("privacy", "ldp_seed");
    let (public, private) = write_lpct(&dir);
    let tree = dir.join("tree.json");
    ok(&dpfair(&[
        "ldp",
        "partition",
        "--public",
        arg(&public),
        "--target",
        "label",
        "--epsilon",
        "2",
        "--n-private",
        "800",
        "--out",
        arg(&tree),
    ]));
    let mut reports = Vec::new();
    for name in ["a.csv", "b.csv"] {
        let out = dir.join(name);
        ok(&dpfair(&[
            "ldp",
            "privatize",
            "--partition",
            arg(&tree),
            "--data",
            arg(&private),
            "--seed",
            "7",
            "--out",
            arg(&out),
        ]));
        reports.push(std::fs::read_to_string(out).unwrap());
    }
    assert_ne!(
        reports[0], reports[1],
        "report B is report A: the noise repeated"
    );
}

#[test]
fn insecure_seeded_noise_repeats_and_says_not_private() {
    let dir = scratch("privacy", "insecure");
    let data = write_data(&dir);
    let args = method_args("cdp-fair", &data, &write_lpct(&dir));
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    for out in [&a, &b] {
        let o = run_fit(
            &args,
            &["--epsilon", "2", "--insecure-seeded-noise", "7"],
            out,
        );
        ok(&o);
        assert!(stderr(&o).contains("NOT PRIVATE"), "{}", stderr(&o));
    }
    assert_eq!(json(&a)["model"], json(&b)["model"]);
    assert_eq!(json(&a)["ledger"]["noise"], "seeded");
    let report = ok(&dpfair(&["ledger", arg(&a)]));
    assert!(
        report.contains("NOT PRIVATE: noise reproducible from the seed"),
        "{report}"
    );
    assert!(report.contains("guarantee: NONE"), "{report}");
    let pred = dir.join("pred.csv");
    let o = dpfair(&[
        "predict",
        "--model",
        arg(&a),
        "--data",
        arg(&data),
        "--out",
        arg(&pred),
    ]);
    ok(&o);
    assert!(stderr(&o).contains("is NOT PRIVATE"), "{}", stderr(&o));
    // --seed and --insecure-seeded-noise are two meanings of a seed: one at a time.
    bad(&run_fit(
        &args,
        &[
            "--epsilon",
            "2",
            "--seed",
            "1",
            "--insecure-seeded-noise",
            "7",
        ],
        &dir.join("c.json"),
    ));
}

/// The total line of `dpfair ledger`.
fn total_line(report: &str) -> &str {
    report
        .lines()
        .find(|l| l.starts_with("total:"))
        .unwrap_or_else(|| panic!("no total in\n{report}"))
}

#[test]
fn every_model_file_reads_back_with_one_relation() {
    let dir = scratch("privacy", "read_back");
    let data = write_data(&dir);
    let lpct = write_lpct(&dir);
    // (method, extra arguments, whether the total must be infinite).
    let cases: Vec<(&str, Vec<&str>, bool)> = vec![
        (
            "dp-logistic",
            vec!["--epsilon", "2", "--epochs", "3"],
            false,
        ),
        ("cdp-fair", vec!["--epsilon", "2"], false),
        (
            "cdp-fair",
            vec!["--epsilon", "2", "--accounting", "paper"],
            true,
        ),
        ("fdp-fair", vec!["--epsilon", "2"], false),
        ("fair-regression", vec!["--epsilon", "1"], false),
        ("fair-regression", vec!["--epsilon", "inf"], true),
        ("lpct", vec!["--epsilon", "2"], false),
        ("lpct-prune", vec!["--epsilon", "2"], false),
        (
            "decoupled",
            vec!["--epsilon", "3", "--delta", "1e-5"],
            false,
        ),
        (
            "decoupled",
            vec!["--epsilon", "3", "--delta", "1e-5", "--accounting", "paper"],
            false,
        ),
        ("dp2dp", vec!["--epsilon", "3", "--delta", "1e-5"], false),
        (
            "group-thresholds",
            vec!["--epsilon", "2", "--constraint", "equalized-odds"],
            false,
        ),
        (
            "dp2dp",
            vec!["--epsilon", "3", "--delta", "1e-5", "--accounting", "paper"],
            false,
        ),
    ];
    for (i, (method, extra, infinite)) in cases.iter().enumerate() {
        let model = dir.join(format!("m{i}.json"));
        let o = run_fit(&method_args(method, &data, &lpct), extra, &model);
        assert!(
            o.status.success(),
            "{method} {extra:?}: exit {:?}: {}",
            o.status.code(),
            stderr(&o)
        );
        // ε = ∞ is written as "inf", never as serde_json's unreadable `null`.
        let ledger = json(&model)["ledger"].to_string();
        assert!(!ledger.contains("null"), "{method} {extra:?}: {ledger}");
        let report = ok(&dpfair(&["ledger", arg(&model)]));
        let total = total_line(&report);
        // One relation per ledger, named on the total line; ε = ∞ is never "certified".
        assert!(
            total.contains("for replace-one") || total.contains("for add/remove"),
            "{report}"
        );
        if *infinite {
            assert!(total.contains("ε = ∞"), "{method} {extra:?}: {total}");
            assert!(
                report.contains("guarantee: NONE") && !report.contains("certified"),
                "{method} {extra:?}: {report}"
            );
        } else if !extra.contains(&"paper") {
            assert!(report.contains("certified for"), "{report}");
            assert!(!total.contains("∞"), "{method} {extra:?}: {total}");
        }
        let pred = dir.join(format!("p{i}.csv"));
        let predict_data = if method.starts_with("lpct") {
            &lpct.1
        } else {
            &data
        };
        ok(&dpfair(&[
            "predict",
            "--model",
            arg(&model),
            "--data",
            arg(predict_data),
            "--out",
            arg(&pred),
        ]));
    }
}

#[test]
fn edited_model_files_are_refused() {
    let dir = scratch("privacy", "edited");
    let data = write_data(&dir);
    let model = dir.join("m.json");
    ok(&run_fit(
        &method_args("cdp-fair", &data, &write_lpct(&dir)),
        &["--epsilon", "2"],
        &model,
    ));
    let original = json(&model);
    let mut smaller = original.clone();
    smaller["ledger"]["budget"]["epsilon"] = 0.5.into();
    let mut renamed = original.clone();
    renamed["method"] = "dp2dp".into();
    // The one-character downgrade: `"version": 2` to 1 with the stale digest kept used to skip
    // the check, and an edited ledger then printed as certified.
    let mut downgraded = original.clone();
    downgraded["version"] = 1.into();
    downgraded["ledger"]["budget"]["epsilon"] = 0.001.into();
    for (name, v) in [
        ("smaller.json", smaller),
        ("renamed.json", renamed),
        ("downgraded.json", downgraded),
    ] {
        let p = write(&dir, name, &serde_json::to_string_pretty(&v).unwrap());
        let err = bad(&dpfair(&["ledger", arg(&p)]));
        assert!(err.contains("changed after dpfair wrote it"), "{err}");
        let pred = dir.join("pred.csv");
        bad(&dpfair(&[
            "predict",
            "--model",
            arg(&p),
            "--data",
            arg(&data),
            "--out",
            arg(&pred),
        ]));
    }
    // A real version-1 file (no digest) still reads, shown as unverified, never certified.
    let mut old = original.clone();
    old["version"] = 1.into();
    old.as_object_mut().unwrap().remove("digest");
    let p = write(
        &dir,
        "v1.json",
        &serde_json::to_string_pretty(&old).unwrap(),
    );
    let report = ok(&dpfair(&["ledger", arg(&p)]));
    assert!(report.contains("guarantee: UNVERIFIED"), "{report}");
    assert!(!report.contains("guarantee: certified"), "{report}");
    // A bare ledger carries no digest either.
    let bare = write(
        &dir,
        "bare.json",
        &serde_json::to_string_pretty(&original["ledger"]).unwrap(),
    );
    let report = ok(&dpfair(&["ledger", arg(&bare)]));
    assert!(report.contains("guarantee: UNVERIFIED"), "{report}");
}

#[test]
fn one_relation_per_ledger_for_dp_logistic_with_private_bounds() {
    let dir = scratch("privacy", "relation");
    let data = write_data(&dir);
    let base = [
        "fit",
        "dp-logistic",
        "--data",
        arg(&data),
        "--target",
        "label",
        "--features",
        "age,score",
        "--coarse-bounds",
        "age:0:200,score:0:400",
        "--epsilon",
        "2",
        "--epochs",
        "3",
    ];
    let model = dir.join("m.json");
    // With --add-remove DP-SGD certifies add/remove neighbours, the private quantiles
    // replace-one: refused, before any work, with what to change.
    let mut a = base.to_vec();
    a.extend(["--out", arg(&model)]);
    let mut add_remove = a.clone();
    add_remove.push("--add-remove");
    let err = bad(&dpfair(&add_remove));
    assert!(
        err.contains("--add-remove") && err.contains("one ledger certifies one relation"),
        "{err}"
    );
    assert!(!model.exists());
    // By default both certify replace-one neighbours.
    ok(&dpfair(&a));
    let report = ok(&dpfair(&["ledger", arg(&model)]));
    assert!(
        report.contains("certified for replace-one (substitution) neighbours"),
        "{report}"
    );
    assert!(!report.contains("[add/remove entry]"), "{report}");
    let ledger = &json(&model)["ledger"];
    assert_eq!(ledger["relation"], "substitution");
    for e in ledger["entries"].as_array().unwrap() {
        assert_eq!(e["relation"], "substitution", "{e}");
    }
}
