//! `dpfair fit cdp-fair` end to end on raw-scale features: fit with public bounds and default
//! bandwidth and split, the model file's ledger, `dpfair predict`, the paper accounting mode and
//! bad input.

mod common;

use common::{ledger_rows, number_after, predictions};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dpfair(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpfair"))
        .args(args)
        .output()
        .expect("run dpfair")
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("dpfair-fit-cdp-fair-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The synthetic design of Xue & Yu, §5.1, on raw scales: `age = 17 + 73 x₁`,
/// `score = 120 + 60 x₂`, groups "f" (A = 0) / "m" (A = 1), labels "no" / "yes". 4,000 rows.
/// Its intrinsic disparity is DD(0) ≈ −0.56.
fn write_csv(path: &Path) -> Vec<String> {
    let data = dpfair::data::synthetic::FdpFairDesign::default();
    let d = dpfair::data::synthetic::Design::generate(&data, 4000, 5).unwrap();
    let codes = &d.groups.as_ref().unwrap().codes;
    let dpfair::data::Target::Binary(y) = d.target.as_ref().unwrap() else {
        unreachable!()
    };
    let mut s = String::from("age,score,sex,label\n");
    let mut groups = Vec::new();
    for i in 0..d.n_rows() {
        let g = if codes[i] == 1 { "m" } else { "f" };
        groups.push(g.to_string());
        s.push_str(&format!(
            "{:.3},{:.3},{g},{}\n",
            17.0 + 73.0 * d.features[[i, 0]],
            120.0 + 60.0 * d.features[[i, 1]],
            if y[i] == 1 { "yes" } else { "no" }
        ));
    }
    std::fs::write(path, s).unwrap();
    groups
}

fn fit_args<'a>(csv: &'a str, model: &'a str) -> Vec<&'a str> {
    vec![
        "fit",
        "cdp-fair",
        "--data",
        csv,
        "--target",
        "label",
        "--sensitive",
        "sex",
        "--bounds",
        "age:17:90,score:120:180",
        "--alpha",
        "0.1",
        "--epsilon",
        "2",
        "--seed",
        "7",
        "--out",
        model,
    ]
}

#[test]
fn fits_saves_and_predicts_within_the_disparity_level() {
    let dir = scratch("basic");
    let csv = dir.join("train.csv");
    let groups = write_csv(&csv);
    let model = dir.join("model.json");
    let (c, m) = (csv.to_str().unwrap(), model.to_str().unwrap());
    // Seeded test noise: the disparity bound below is a 0.08 margin, not a bound that holds for
    // every draw of the release noise (with OS noise one run in CI measured DD = −0.182).
    let mut args = fit_args(c, m);
    let seed = args.iter().position(|a| *a == "--seed").unwrap();
    args[seed] = "--insecure-seeded-noise";
    ok(&dpfair(&args));
    let text = std::fs::read_to_string(&model).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(file["method"], "cdp-fair");
    assert_eq!(file["model"]["kind"], "cdp-fair");
    // δ = (N/2)^{−2} = 2000^{−2} by default; the strict ledger spends exactly (ε, δ).
    assert_eq!(file["ledger"]["budget"]["epsilon"], 2.0);
    // S2 chooses τ̃ by the exponential mechanism (DP for every event, `docs/deviations.md#fdp-fair-privacy-of-the-threshold-release`).
    let entries = file["ledger"]["entries"].as_array().unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e["label"].as_str().unwrap().contains("S2")
                && e["mechanism"].as_str().unwrap().contains("exponential")),
        "{entries:?}"
    );
    let pred = dir.join("pred.csv");
    let labels = predictions(&model, &csv, &pred);
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    // Empirical DD of the one-draw predictions: the unconstrained rule has DD ≈ −0.56; CDP-Fair
    // keeps |DD| ≤ α = 0.1 up to calibration error (≈ 0.03 at ň = 2,000, ε = 2) and the
    // Bernoulli noise of one draw per row (sd ≈ 0.017): allow 0.1 + 0.08.
    assert_eq!(labels.len(), groups.len());
    let rate = |g: &str| {
        let rows: Vec<usize> = (0..groups.len()).filter(|&i| groups[i] == g).collect();
        rows.iter().filter(|&&i| labels[i] == "yes").count() as f64 / rows.len() as f64
    };
    let dd = rate("m") - rate("f");
    assert!(dd.abs() <= 0.18, "DD = {dd}");
}

#[test]
fn paper_accounting_prints_its_real_cost() {
    let dir = scratch("paper");
    let csv = dir.join("train.csv");
    write_csv(&csv);
    let model = dir.join("model.json");
    let mut args = fit_args(csv.to_str().unwrap(), model.to_str().unwrap());
    args.extend(["--accounting", "paper", "--frequencies", "128"]);
    let out = dpfair(&args);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    // Bandwidth CV and "known π" read the data without noise: ε = ∞.
    assert!(
        err.contains("what the authors' procedure really spends"),
        "{err}"
    );
    assert!(
        err.contains("cross-validation") && err.contains("ε = ∞"),
        "{err}"
    );
    assert!(err.contains("fold 2"), "{err}");
    // The swept τ̃ sits on a calibration score: its location is recorded as non-private
    // (`docs/deviations.md#fdp-fair-privacy-of-the-threshold-release`).
    assert!(err.contains("location of τ̃"), "{err}");
    // Every Gaussian release (S1's coefficient blocks, S2's shift, in both folds) is charged
    // ρ = Δ²/(2σ²) zCDP at the sensitivity and scale it prints. The table rounds each number to
    // six significant digits (relative error ≤ 5·10⁻⁶ each), so the printed ρ and the formula
    // on the printed Δ, σ agree to 2.5·10⁻⁵ relative; 10⁻⁴ leaves room.
    let rows = ledger_rows(&err);
    let gaussian: Vec<_> = rows.iter().filter(|r| r.mechanism == "gaussian").collect();
    assert_eq!(gaussian.len(), 6, "S1 (2 blocks) and S2 per fold: {err}");
    for r in gaussian {
        let rho = number_after(&r.cost, "zCDP ρ = ");
        let want = r.sensitivity.powi(2) / (2.0 * r.scale.powi(2));
        assert!((rho - want).abs() <= 1e-4 * want, "{r:?}: formula {want}");
    }
    // Bandwidth CV, empirical π and the location of τ̃ are non-private: the total is ∞.
    let non_private = rows
        .iter()
        .filter(|r| r.mechanism.starts_with("none"))
        .inspect(|r| assert!(r.cost.starts_with("ε = ∞"), "{r:?}"))
        .count();
    assert_eq!(non_private, 5, "CV + (π̂, τ̃ location) per fold: {err}");
    assert_eq!(number_after(&err, "total: ε = "), f64::INFINITY, "{err}");
}

#[test]
fn bad_input_exits_2_naming_the_parameter() {
    let dir = scratch("bad");
    let csv = dir.join("train.csv");
    write_csv(&csv);
    let model = dir.join("model.json");
    let (c, m) = (csv.to_str().unwrap(), model.to_str().unwrap());
    let replace = |flag: &str, value: &'static str| {
        let mut args = fit_args(c, m);
        let i = args.iter().position(|a| *a == flag).unwrap();
        args[i + 1] = value;
        args
    };
    let mut even_grid = fit_args(c, m);
    even_grid.extend(["--tau-grid", "4"]);
    for (args, needle) in [
        (replace("--alpha", "-1"), "--alpha"),
        (replace("--epsilon", "0"), "--epsilon"),
        (even_grid, "--tau-grid"),
    ] {
        let out = dpfair(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
    }
}

#[test]
fn help_has_an_example_and_the_budget_split() {
    let out = dpfair(&["fit", "cdp-fair", "--help"]);
    ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Example: dpfair fit cdp-fair") && text.contains("--tau-grid"),
        "{text}"
    );
    assert!(text.contains("parallel composition"), "{text}");
}
