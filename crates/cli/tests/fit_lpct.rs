//! `dpfair fit lpct | lpct-prune` (simulated setting) through the built binary.

use dpfair::model::ModelFile;
use dpfair_data::synthetic::{Design, LpctDesign};
use dpfair_data::{Dataset, Target};
use dpfair_privacy::Noise;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dpfair-fitlpct-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_csv(path: &Path, ds: &Dataset) {
    let Some(Target::Binary(y)) = &ds.target else {
        panic!()
    };
    let mut s = String::from("x1,x2,label\n");
    for (i, r) in ds.features.rows().into_iter().enumerate() {
        s.push_str(&format!(
            "{},{},{}\n",
            r[0],
            r[1],
            if y[i] == 1 { "yes" } else { "no" }
        ));
    }
    std::fs::write(path, s).unwrap();
}

fn dpfair(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpfair"))
        .args(args)
        .output()
        .expect("run dpfair")
}

/// Both methods fit, spend at most ε, and predict the held-out rows better than chance: the
/// Bayes accuracy of the design is 0.786 (Monte Carlo, 2·10⁵ points: `docs/reference-values.md#lpct`) and a depth-≥2 tree on 4,000 private rows at
/// ε = 4 with 400 public rows recovers the sign regions; 0.6 is 9 standard errors
/// (√(0.25/2000) = 0.011) above chance.
#[test]
fn fit_lpct_and_prune_from_csv() {
    let dir = scratch("fit");
    let d = LpctDesign::default();
    write_csv(&dir.join("pub.csv"), &d.public(400, 2).unwrap());
    write_csv(&dir.join("priv.csv"), &d.generate(4000, 2).unwrap());
    let test = d.generate(2000, 99).unwrap();
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    // LPCT-prune with its defaults (the code's constants, one query; see `Preset`).
    for (method, extra) in [("lpct", None::<&str>), ("lpct-prune", None)] {
        let (public, private, out) = (s("pub.csv"), s("priv.csv"), s("m.json"));
        let mut args = vec![
            "fit",
            method,
            "--public",
            &public,
            "--private",
            &private,
            "--target",
            "label",
            "--epsilon",
            "4",
            // Seeded report noise and public randomness: the accuracy bound below is about the method, not one draw.
            "--insecure-seeded-noise",
            "7",
            "--out",
            &out,
        ];
        args.extend(extra);
        let o = dpfair(&args);
        assert!(
            o.status.success(),
            "{method}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let file = ModelFile::load(dir.join("m.json")).unwrap();
        assert_eq!(file.method, method);
        assert!(file.ledger.total().unwrap().epsilon <= 4.0 + 1e-12);
        let pred = file.predict(&test, &mut Noise::seeded(0)).unwrap();
        let Some(Target::Binary(y)) = &test.target else {
            panic!()
        };
        let classes = pred.classes.unwrap();
        let acc = classes
            .iter()
            .zip(y)
            .filter(|(c, y)| **c == u32::from(**y))
            .count() as f64
            / y.len() as f64;
        assert!(acc > 0.6, "{method}: accuracy {acc}");
    }
    for args in [
        vec!["--epsilon", "0"],
        vec!["--epsilon", "1", "--lambda", "-1"],
        vec!["--epsilon", "1", "--target", "nope"],
    ] {
        let mut full = vec![
            "fit",
            "lpct",
            "--public",
            &s("pub.csv"),
            "--private",
            &s("priv.csv"),
            "--target",
            "label",
            "--out",
            &s("x.json"),
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        if args.contains(&"--target") {
            let i = full.iter().position(|a| a == "--target").unwrap();
            full.drain(i..i + 2);
        }
        full.extend(args.iter().map(|a| a.to_string()));
        let refs: Vec<&str> = full.iter().map(String::as_str).collect();
        let o = dpfair(&refs);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// `fit lpct-prune` guards the walk's picks at `--guard 3` by default (as `fit lpct` its leaves;
/// docs/deviations.md#lpct-prune-significance-guard), records it in the model's configuration,
/// `--guard 0` is Algorithm 2's walk alone, and a negative Z is refused naming the option.
#[test]
fn lpct_prune_guard_defaults_to_three() {
    let dir = scratch("guard");
    let d = LpctDesign::default();
    write_csv(&dir.join("pub.csv"), &d.public(300, 3).unwrap());
    write_csv(&dir.join("priv.csv"), &d.generate(2000, 4).unwrap());
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    let (public, private, out) = (s("pub.csv"), s("priv.csv"), s("m.json"));
    let fit = |extra: &[&str]| {
        let mut args = vec![
            "fit",
            "lpct-prune",
            "--public",
            &public,
            "--private",
            &private,
            "--target",
            "label",
            "--epsilon",
            "2",
            "--out",
            &out,
        ];
        args.extend_from_slice(extra);
        dpfair(&args)
    };
    let guard = || {
        let file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("m.json")).unwrap()).unwrap();
        file["config"]["guard"].clone()
    };
    for (extra, expected) in [
        (&[][..], serde_json::json!(3.0)),
        (&["--guard", "0"][..], serde_json::Value::Null),
        (&["--guard", "2.5"][..], serde_json::json!(2.5)),
    ] {
        let o = fit(extra);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(guard(), expected, "{extra:?}");
    }
    let o = fit(&["--guard=-1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("guard"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A bad `--guard` is refused while the arguments are read, naming the option, before any data
/// file is opened: here the files do not exist, and the message is about Z, not about them.
#[test]
fn a_bad_guard_is_refused_before_the_data_are_read() {
    for method in ["lpct", "lpct-prune"] {
        for z in ["-1", "nan", "inf", "three"] {
            let flag = format!("--guard={z}");
            let o = dpfair(&[
                "fit",
                method,
                "--public",
                "no-such-public.csv",
                "--private",
                "no-such-private.csv",
                "--target",
                "label",
                "--epsilon",
                "2",
                "--out",
                "no-such-dir/m.json",
                &flag,
            ]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{method} {z}: {err}");
            assert!(err.contains("--guard"), "{method} {z}: {err}");
            assert!(!err.contains("no-such"), "{method} {z}: {err}");
        }
    }
}
