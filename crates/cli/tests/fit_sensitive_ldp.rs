//! `--sensitive-ldp`: a sensitive column each person randomised (binary randomised response at
//! ε_A). The rules fitted with it are fair on the true groups; read as if true, they are not
//! (docs/fairness-constraints.md, "A sensitive attribute collected under local DP").

mod common;

use common::{arg, bad, dpfair, ok, predictions, scratch};
use std::path::{Path, PathBuf};

/// A seeded two-group design whose groups differ in their features: `x1` is shifted up by 3 for
/// group `b`, the label follows the features only. Training rows report their group through
/// randomised response at ε_A = 1 (kept with probability e/(e + 1)); test rows keep the truth.
/// Returns the training and test files and the test rows' true groups.
fn write_data(dir: &Path, n: usize, seed: u64) -> (PathBuf, PathBuf, Vec<bool>) {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let keep = 1f64.exp() / (1f64.exp() + 1.0);
    let (mut train, mut test) = (String::new(), String::new());
    let header = "x1,x2,group,label\n";
    train += header;
    test += header;
    let mut groups = Vec::new();
    for i in 0..2 * n {
        let b = rng.random::<f64>() < 0.5;
        let x1 = (rng.random::<f64>() * 7.0 + if b { 3.0 } else { 0.0 }).min(10.0);
        let x2 = rng.random::<f64>() * 10.0;
        let logit = 1.2 * (x1 - 5.0);
        let y = rng.random::<f64>() < 1.0 / (1.0 + (-logit).exp());
        let name = |b: bool| if b { "b" } else { "a" };
        if i < n {
            let reported = if rng.random::<f64>() < keep { b } else { !b };
            train += &format!("{x1:.3},{x2:.3},{},{}\n", name(reported), u8::from(y));
        } else {
            test += &format!("{x1:.3},{x2:.3},{},{}\n", name(b), u8::from(y));
            groups.push(b);
        }
    }
    (
        common::write(dir, "train.csv", &train),
        common::write(dir, "test.csv", &test),
        groups,
    )
}

fn fit(method: &str, train: &Path, model: &Path, extra: &[&str]) {
    let mut args = vec![
        "fit",
        method,
        "--data",
        arg(train),
        "--target",
        "label",
        "--sensitive",
        "group",
        "--bounds",
        "x1:0:10,x2:0:10",
        "--epsilon",
        "50",
        "--check-fraction",
        "0",
        "--out",
        arg(model),
    ];
    args.extend_from_slice(extra);
    ok(&dpfair(&args));
}

/// The positive rates' gap between the true groups.
fn true_gap(predicted: &[String], groups: &[bool]) -> f64 {
    let rate = |b: bool| {
        let of: Vec<&String> = predicted
            .iter()
            .zip(groups)
            .filter(|&(_, &g)| g == b)
            .map(|(p, _)| p)
            .collect();
        of.iter().filter(|p| p.as_str() == "1").count() as f64 / of.len() as f64
    };
    (rate(true) - rate(false)).abs()
}

/// Tolerance: 20,000 training rows at ε = 50 (table noise negligible); the correction divides
/// by p − q = 0.46, so a corrected group rate has sd ≤ √(20000/4)/0.46/10000 ≈ 0.015 and the
/// gap ≤ 0.022; 10,000 test rows add ≤ 0.01 sampling sd to the gap. 4 sd ≈ 0.1 above the level.
#[test]
fn the_corrected_rules_are_fair_on_the_true_groups_and_the_uncorrected_are_not() {
    let dir = scratch("fit_sensitive_ldp", "corrected");
    let (train, test, groups) = write_data(&dir, 20_000, 3);
    let corrected = dir.join("corrected.json");
    fit(
        "group-thresholds",
        &train,
        &corrected,
        &["--sensitive-ldp", "1", "--level", "0.05"],
    );
    let as_given = dir.join("as_given.json");
    fit("group-thresholds", &train, &as_given, &["--level", "0.05"]);
    let gap =
        |model: &Path, name: &str| true_gap(&predictions(model, &test, &dir.join(name)), &groups);
    let (c, g) = (gap(&corrected, "c.csv"), gap(&as_given, "g.csv"));
    assert!(c <= 0.05 + 0.1, "corrected: true gap {c}");
    assert!(g > 0.25, "read as given: true gap {g}");
    let file = std::fs::read_to_string(&corrected).unwrap();
    assert!(
        file.contains("\"attribute_epsilon\""),
        "the model records ε_A"
    );
}

#[test]
fn cdp_and_fdp_fair_with_a_randomised_attribute_fit_group_thresholds_and_bad_values_are_named() {
    let dir = scratch("fit_sensitive_ldp", "cdp_fair");
    let (train, _, _) = write_data(&dir, 2_000, 4);
    for method in ["cdp-fair", "fdp-fair"] {
        let model = dir.join(format!("{method}.json"));
        fit(method, &train, &model, &["--sensitive-ldp", "2"]);
        let file = std::fs::read_to_string(&model).unwrap();
        assert!(
            file.contains("\"method\": \"group-thresholds\"")
                && file.contains("\"attribute_epsilon\""),
            "{method}: {}",
            &file[..200]
        );
    }
    for bad_value in ["0", "-1", "nan"] {
        let err = bad(&dpfair(&[
            "fit",
            "group-thresholds",
            "--data",
            arg(&train),
            "--target",
            "label",
            "--sensitive",
            "group",
            "--sensitive-ldp",
            bad_value,
            "--epsilon",
            "1",
            "--out",
            arg(&dir.join("bad.json")),
        ]));
        assert!(err.contains("--sensitive-ldp"), "{bad_value}: {err}");
    }
}
