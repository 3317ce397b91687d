//! `dpfair ldp partition | privatize | fit`: LPCT's client/collector protocol through the built
//! binary, on the Ma & Yang synthetic design.

use dpfair::model::{FittedModel, ModelFile};
use dpfair_data::synthetic::{Design, LpctDesign};
use dpfair_data::{Dataset, Target};
use std::path::Path;

mod common;
use common::{bad, dpfair, ok};

fn scratch(test: &str) -> std::path::PathBuf {
    common::scratch("ldp", test)
}

fn write_csv(path: &Path, ds: &Dataset) {
    let Some(Target::Binary(y)) = &ds.target else {
        panic!()
    };
    let mut s = String::from("x1,x2,y\n");
    for (i, r) in ds.features.rows().into_iter().enumerate() {
        s.push_str(&format!("{},{},{}\n", r[0], r[1], y[i]));
    }
    std::fs::write(path, s).unwrap();
}

fn data(dir: &Path) -> (String, String) {
    let d = LpctDesign::default();
    let (p, q) = (dir.join("priv.csv"), dir.join("pub.csv"));
    write_csv(&p, &d.generate(1500, 1).unwrap());
    write_csv(&q, &d.public(200, 1).unwrap());
    (
        q.to_string_lossy().into_owned(),
        p.to_string_lossy().into_owned(),
    )
}

/// Column sums of REPORTS.csv computed here, independently of the collector.
fn column_sums(path: &Path) -> (usize, Vec<f64>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let width = lines.next().unwrap().split(',').count();
    let mut sums = vec![0.0; width];
    let mut n = 0;
    for l in lines {
        n += 1;
        for (s, v) in sums.iter_mut().zip(l.split(',')) {
            *s += v.parse::<f64>().unwrap();
        }
    }
    (n, sums)
}

#[test]
fn partition_privatize_fit_round_trip() {
    let dir = scratch("lpct");
    let (public, private) = data(&dir);
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    ok(&dpfair(&[
        "ldp",
        "partition",
        "--public",
        &public,
        "--target",
        "y",
        "--depth",
        "3",
        "--epsilon",
        "2",
        "--out",
        &s("tree.json"),
    ]));
    ok(&dpfair(&[
        "ldp",
        "privatize",
        "--partition",
        &s("tree.json"),
        "--data",
        &private,
        "--target",
        "y",
        "--seed",
        "5",
        "--out",
        &s("rep.csv"),
    ]));
    let (n, sums) = column_sums(&dir.join("rep.csv"));
    assert_eq!((n, sums.len()), (1500, 17));
    ok(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &s("tree.json"),
        "--reports",
        &s("rep.csv"),
        "--lambda",
        "0",
        "--out",
        &s("model.json"),
    ]));
    let file = ModelFile::load(dir.join("model.json")).unwrap();
    assert_eq!(file.method, "lpct");
    assert!((file.ledger.total().unwrap().epsilon - 2.0).abs() < 1e-12);
    let FittedModel::Lpct(m) = &file.model else {
        panic!("not an LPCT model")
    };
    // λ = 0: each leaf's η is Σ Ṽ / Σ Ũ over the reports (eq. (7)).
    for (j, eta) in m.classifier.leaf_eta().iter().enumerate() {
        let want = sums[1 + 8 + j] / sums[1 + j];
        assert!((eta - want).abs() <= 1e-9 * (1.0 + want.abs()), "leaf {j}");
    }

    // Bad input: exit 2 with a message, never a panic.
    let e = bad(&dpfair(&[
        "ldp",
        "privatize",
        "--partition",
        &s("tree.json"),
        "--data",
        &private,
        "--epsilon",
        "3",
        "--out",
        &s("x.csv"),
    ]));
    assert!(e.contains("epsilon"), "{e}");
    std::fs::write(dir.join("short.csv"), "epsilon,u_0\n2,0.5\n").unwrap();
    let e = bad(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &s("tree.json"),
        "--reports",
        &s("short.csv"),
        "--out",
        &s("m2.json"),
    ]));
    assert!(e.contains("columns"), "{e}");
    let e = bad(&dpfair(&[
        "ldp",
        "partition",
        "--public",
        &public,
        "--target",
        "y",
        "--epsilon",
        "2",
        "--out",
        &s("t.json"),
    ]));
    assert!(e.contains("--n-private"), "{e}");
    bad(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &private,
        "--reports",
        &s("rep.csv"),
        "--out",
        &s("m3.json"),
    ]));
}

/// LPCT-prune through files: round 1, and round 2 when Algorithm 2 terminates; the ledger of
/// the final model never exceeds ε.
#[test]
fn prune_rounds_through_files() {
    let dir = scratch("prune");
    let (public, private) = data(&dir);
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    ok(&dpfair(&[
        "ldp",
        "partition",
        "--public",
        &public,
        "--target",
        "y",
        "--prune",
        "--termination",
        "--n-private",
        "1500",
        "--epsilon",
        "2",
        "--out",
        &s("t1.json"),
    ]));
    ok(&dpfair(&[
        "ldp",
        "privatize",
        "--partition",
        &s("t1.json"),
        "--data",
        &private,
        "--seed",
        "1",
        "--out",
        &s("r1.csv"),
    ]));
    // Round-1 reports are at ε/2.
    assert!(
        std::fs::read_to_string(dir.join("r1.csv"))
            .unwrap()
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("1,")
    );
    ok(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &s("t1.json"),
        "--reports",
        &s("r1.csv"),
        "--public",
        &public,
        "--next",
        &s("t2.json"),
        "--out",
        &s("m.json"),
    ]));
    if dir.join("t2.json").exists() {
        ok(&dpfair(&[
            "ldp",
            "privatize",
            "--partition",
            &s("t2.json"),
            "--data",
            &private,
            "--seed",
            "2",
            "--out",
            &s("r2.csv"),
        ]));
        ok(&dpfair(&[
            "ldp",
            "fit",
            "--partition",
            &s("t2.json"),
            "--reports",
            &s("r2.csv"),
            "--out",
            &s("m.json"),
        ]));
    }
    let file = ModelFile::load(dir.join("m.json")).unwrap();
    assert_eq!(file.method, "lpct-prune");
    assert!(file.ledger.total().unwrap().epsilon <= 2.0 + 1e-12);
}
