//! `dpfair fit <method> --data file.parquet` works for every method and gives the model of the
//! same rows read from a CSV: the same schema, the same public choices (`--seed`) and, under the
//! same insecure test-only seeded noise, the same released model.

mod common;

use common::{arg, design_csv, dpfair, ok, scratch};
use dpfair_data::write_parquet::{OutColumn, write_parquet};
use std::path::Path;

/// The numeric CSV `csv` (a header, then numbers) written as Parquet, every column a number.
fn numeric_csv_to_parquet(csv: &Path, out: &Path) {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let names: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let columns = names
        .iter()
        .enumerate()
        .map(|(j, name)| {
            let values = rows.iter().map(|r| Some(r[j])).collect();
            (name.to_string(), OutColumn::Number(values))
        })
        .collect();
    write_parquet(out, columns).unwrap();
}

/// The fitted model file's `model` and `schema` parts.
fn fitted(args: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let out = args[args.iter().position(|a| *a == "--out").unwrap() + 1];
    ok(&dpfair(args));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    (m["model"].clone(), m["schema"].clone())
}

#[test]
fn every_method_fits_from_parquet_as_from_csv() {
    let dir = scratch("fit_columnar", "every_method");
    let mut files = Vec::new();
    for (name, n, seed) in [("train", 1200, 1), ("public", 400, 2)] {
        let csv = design_csv(&dir, &format!("{name}.csv"), n, seed);
        let parquet = dir.join(format!("{name}.parquet"));
        numeric_csv_to_parquet(&csv, &parquet);
        files.push((csv, parquet));
    }
    let seeded = ["--insecure-seeded-noise", "9"];
    let classifier = [
        "--target",
        "y",
        "--sensitive",
        "a",
        "--bounds",
        "x1:0:1,x2:0:1",
    ];
    let methods: [(&str, &[&str]); 9] = [
        ("dp-logistic", &["--epsilon", "2"]),
        ("group-thresholds", &["--epsilon", "2", "--epochs", "5"]),
        ("cdp-fair", &["--epsilon", "2"]),
        ("fdp-fair", &["--epsilon", "2", "--sites", "3"]),
        // A Parquet file streams the decoupled fit, which runs no held-out check (the CSV fit's
        // default): both without it.
        (
            "decoupled",
            &[
                "--epsilon",
                "3",
                "--accountant",
                "rdp",
                "--epochs",
                "2",
                "--check-fraction",
                "0",
            ],
        ),
        ("dp2dp", &["--epsilon", "1", "--delta", "1e-5"]),
        ("lpct", &["--target", "y", "--epsilon", "4"]),
        ("lpct-prune", &["--target", "y", "--epsilon", "4"]),
        (
            "fair-regression",
            &[
                "--scores",
                "x1",
                "--sensitive",
                "a",
                "--groups",
                "0,1",
                "--range",
                "0,1",
                "--epsilon",
                "1",
            ],
        ),
    ];
    for (method, options) in methods {
        let fit = |k: usize| {
            let (train, public) = match k {
                0 => (&files[0].0, &files[1].0),
                _ => (&files[0].1, &files[1].1),
            };
            let out = dir.join(format!("{method}-{k}.json"));
            let mut args = vec!["fit", method];
            if method.starts_with("lpct") {
                args.extend(["--public", arg(public), "--private", arg(train)]);
            } else {
                args.extend(["--data", arg(train)]);
                if method != "fair-regression" {
                    args.extend(classifier);
                }
            }
            args.extend(options);
            args.extend(seeded);
            args.extend(["--out", arg(&out)]);
            fitted(&args)
        };
        let (csv_model, csv_schema) = fit(0);
        let (parquet_model, parquet_schema) = fit(1);
        assert!(!csv_model.is_null(), "{method}: no model");
        assert_eq!(parquet_model, csv_model, "{method}: the models differ");
        assert_eq!(parquet_schema, csv_schema, "{method}: the schemas differ");
    }
}
