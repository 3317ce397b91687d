//! `dpfair fit dp2dp` end to end on the Say et al. synthetic mixture (d = 20, K = 6): fit with the
//! defaults, the model file's ledger, `dpfair predict`, paper accounting, and bad input.

mod common;

use common::{number_after, predictions};
use dpfair_privacy::accounting::{default_orders, rdp_sgm_curve, rdp_to_dp};
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
    let dir = std::env::temp_dir().join(format!("dpfair-fit-dp2dp-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `rows` rows of the mixture (p = 0.75), classes "c0".."c5", groups "f" (s = −1) / "m"; with
/// `one_group`, every row is "f". Returns the group of each row.
fn write_csv(path: &Path, rows: usize, one_group: bool) -> Vec<String> {
    write_csv_seeded(path, rows, one_group, 8)
}

/// [`write_csv`] from data seed `seed` (another sample of the same population).
fn write_csv_seeded(path: &Path, rows: usize, one_group: bool, seed: u64) -> Vec<String> {
    use dpfair::data::synthetic::{Design, GaussianMixtureDesign};
    let d = GaussianMixtureDesign::default()
        .generate(rows, seed)
        .unwrap();
    let codes = &d.groups.as_ref().unwrap().codes;
    let dpfair::data::Target::Multiclass { labels, .. } = d.target.as_ref().unwrap() else {
        unreachable!()
    };
    let mut s: String = (0..20).map(|j| format!("x{j},")).collect();
    s.push_str("sex,label\n");
    let mut groups = Vec::new();
    for i in 0..rows {
        let g = if codes[i] == 1 && !one_group {
            "m"
        } else {
            "f"
        };
        groups.push(g.to_string());
        for j in 0..20 {
            s.push_str(&format!("{:.4},", d.features[[i, j]]));
        }
        s.push_str(&format!("{g},c{}\n", labels[i]));
    }
    std::fs::write(path, s).unwrap();
    groups
}

fn fit_args<'a>(csv: &'a str, model: &'a str, rho: &'a str) -> Vec<&'a str> {
    vec![
        "fit",
        "dp2dp",
        "--data",
        csv,
        "--target",
        "label",
        "--sensitive",
        "sex",
        "--rho",
        rho,
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--seed",
        "3",
        // Raw features, as these tests were written for (the default scales them with
        // private bounds, tested in private_bounds.rs and neighbour_failures.rs).
        "--unscaled",
        "--out",
        model,
    ]
}

/// max_k |P(ĝ = k | m) − P(ĝ = k | f)| of the predicted labels.
fn unfairness(labels: &[&str], groups: &[String]) -> f64 {
    let mut worst: f64 = 0.0;
    for k in 0..6 {
        let c = format!("c{k}");
        let rate = |g: &str| {
            let rows: Vec<usize> = (0..groups.len()).filter(|&i| groups[i] == g).collect();
            rows.iter().filter(|&&i| labels[i] == c).count() as f64 / rows.len() as f64
        };
        worst = worst.max((rate("m") - rate("f")).abs());
    }
    worst
}

#[test]
fn fits_saves_and_predicts() {
    let dir = scratch("fit");
    let csv = dir.join("train.csv");
    let groups = write_csv(&csv, 4000, false);
    let (c, m) = (csv.to_str().unwrap(), dir.join("model.json"));
    let m = m.to_str().unwrap();
    let out = dpfair(&fit_args(c, m, "0.02"));
    ok(&out);
    let file = std::fs::read_to_string(m).unwrap();
    let json: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert_eq!(json["model"]["kind"], "dp2dp");
    assert_eq!(
        json["model"]["phase2"]["lambda"].as_array().unwrap().len(),
        12
    );
    let labels = predictions(Path::new(m), &csv, &dir.join("pred.csv"));
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    assert_eq!(labels.len(), groups.len());
    assert!(labels.iter().all(|l| l.starts_with('c')));
    // Measured (seed 3, before the defaults became a DP-SGD Phase 1 and the averaged iterate):
    // Û = 0.20 on these rows. At ε = 1 with N = 1000 pool rows the noisy dual (η_t = 1/√t
    // accumulates noise of std ≈ 0.5 in λ) does not reach ρ: the fairness
    // property is tested on the exact solve (crates/dpfair/tests/dp2dp.rs). Here: the rule
    // predicts several classes, not one constant class per group.
    let u = unfairness(&labels, &groups);
    let mut distinct: Vec<&str> = labels.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(
        distinct.len() >= 3,
        "classes predicted: {distinct:?} (Û = {u})"
    );
}

/// Fit at `--epsilon eps` and `--rho rho` on `train`; the unfairness Û of its predictions on
/// `eval` (whose groups are `groups`).
fn unfairness_on(
    dir: &Path,
    train: &str,
    eval: &Path,
    groups: &[String],
    eps: &str,
    rho: &str,
) -> f64 {
    let model = dir.join(format!("model-{eps}-{rho}.json"));
    let mut args = fit_args(train, model.to_str().unwrap(), rho);
    let i = args.iter().position(|a| *a == "--epsilon").unwrap();
    args[i + 1] = eps;
    ok(&dpfair(&args));
    let labels = predictions(&model, eval, &dir.join(format!("pred-{eps}-{rho}.csv")));
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    assert_eq!(labels.len(), groups.len());
    unfairness(&labels, groups)
}

/// The fairness level, in the low-noise limit (ε = 1000) so that what is tested is the
/// post-processing, not the privacy noise. Fit on 4,000 rows (pool N = 1,000, N_min ≈ 500 per
/// group), evaluated on 20,000 independent rows of the same population (n_s ≈ 10,000 per group).
///
/// Bound (K = 6 classes, failure probability β = 10⁻³): at the dual optimum the pool's
/// unfairness is at most ρ + (K − 1)/N_min (KKT with strict argmax); each of the 2K group rates
/// of the population is within √(ln(4K/β)/(2N_min)) of the pool's (Hoeffding, union over the 2K
/// rates), so a rate difference moves by at most twice that; the evaluation rows estimate each
/// rate with sd ≤ 1/(2√n_s), so a difference within 4·√2/(2√n_s) (4 sd, union over K). This
/// treats the released multipliers as fixed (they are fit on the pool) and the T SGD steps as
/// converged, so it is the theory's form, not a certificate; at these sizes it is loose
/// (≈ 0.3). The second check is sharper: the constraint must cut the unfairness of the
/// unconstrained rule (ρ = 1, where λ = 0 is optimal) by more than the evaluation error of
/// the two estimates (4 sd each).
#[test]
fn fairness_level_holds_in_the_low_noise_limit() {
    let dir = scratch("level");
    let train = dir.join("train.csv");
    write_csv(&train, 4000, false);
    let eval = dir.join("eval.csv");
    let groups = write_csv_seeded(&eval, 20_000, false, 9);
    let n_min = groups
        .iter()
        .filter(|g| *g == "f")
        .count()
        .min(groups.iter().filter(|g| *g == "m").count()) as f64;
    let (k, rho, beta): (f64, f64, f64) = (6.0, 0.05, 1e-3);
    let pool_min = 0.25 * 4000.0 / 2.0 * 0.9; // a conservative N_min: 10 % below an even split
    let kkt = (k - 1.0) / pool_min;
    let generalisation = 2.0 * ((4.0 * k / beta).ln() / (2.0 * pool_min)).sqrt();
    let evaluation = 4.0 * 2f64.sqrt() / (2.0 * n_min.sqrt());
    let fair = unfairness_on(
        &dir,
        train.to_str().unwrap(),
        &eval,
        &groups,
        "1000",
        "0.05",
    );
    let bound = rho + kkt + generalisation + evaluation;
    assert!(
        fair <= bound,
        "Û = {fair} > ρ + {kkt:.4} + {generalisation:.4} + {evaluation:.4}"
    );
    let unconstrained = unfairness_on(&dir, train.to_str().unwrap(), &eval, &groups, "1000", "1");
    assert!(
        fair < unconstrained - 2.0 * evaluation,
        "Û = {fair} at ρ = {rho}, {unconstrained} unconstrained (evaluation error {evaluation:.4})"
    );
}

#[test]
fn paper_accounting_prints_its_real_cost() {
    let dir = scratch("paper");
    let csv = dir.join("train.csv");
    write_csv(&csv, 2000, false);
    let model = dir.join("model.json");
    let mut args = fit_args(csv.to_str().unwrap(), model.to_str().unwrap(), "0.05");
    args.extend(["--accounting", "paper"]);
    let out = dpfair(&args);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("real cost"))
        .unwrap_or_else(|| panic!("no real cost printed: {err}"));
    let (real, delta) = (
        number_after(line, "real cost is ε = "),
        number_after(line, "at δ = "),
    );
    let n_pool = number_after(&err, "pool N = ");
    // Recompute the real cost from the mechanisms the model file's ledger records. Phase 2:
    // the frequency release, Gaussian with sensitivity √2/N and σ_π = 0.05 (the paper's), is
    // ρ = (√2/N)²/(2σ_π²)-zCDP, i.e. RDP α·ρ; plus T steps of the subsampled Gaussian (its
    // RDP curve, Mironov et al. 2019). Phase 1 is its own subsampled Gaussian. The phases see
    // disjoint rows: the composition is the per-order maximum of the two RDP curves, converted
    // to (ε, δ). The printed ε is rounded to 4 decimals.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let entries = file["ledger"]["entries"]
        .as_array()
        .expect("ledger entries");
    let orders = default_orders();
    let sgm = |c: &serde_json::Value| {
        rdp_sgm_curve(
            c["sampling_rate"].as_f64().unwrap(),
            c["noise_multiplier"].as_f64().unwrap(),
            c["steps"].as_u64().unwrap(),
            &orders,
        )
        .unwrap()
    };
    let (mut phase1, mut phase2) = (vec![0.0; orders.len()], vec![0.0; orders.len()]);
    for e in entries {
        let part = e["composition"]["part"].as_str().unwrap_or("");
        let curve: Vec<f64> = match e["cost"]["unit"].as_str() {
            Some("subsampled-gaussian") => sgm(&e["cost"]),
            Some("zcdp") => {
                // Released on a fine lattice (privacy crate, `Gaussian::from_sigma`): the
                // recorded sensitivity includes the rounding to it (≤ 10⁻⁸ here), ρ is charged
                // at the requested σ_π, and σ is then rounded up to whole lattice steps (more
                // noise, never less).
                let rho = e["cost"]["rho"].as_f64().unwrap();
                let sens = e["sensitivity"].as_f64().unwrap();
                let sigma = e["scale"].as_f64().unwrap();
                assert!(
                    (sens - 2f64.sqrt() / n_pool).abs() <= 1e-8,
                    "sensitivity {sens}: {e}"
                );
                assert!((0.05..=0.05 + 1e-8).contains(&sigma), "σ_π {sigma}: {e}");
                let want = sens.powi(2) / (2.0 * 0.05f64.powi(2));
                assert!(
                    (rho - want).abs() <= 1e-12 * want,
                    "π release ρ = {rho}, formula {want}"
                );
                orders.iter().map(|a| a * rho).collect()
            }
            other => panic!("unexpected cost {other:?}: {e}"),
        };
        let acc = if part.starts_with("phase 1") {
            &mut phase1
        } else {
            &mut phase2
        };
        acc.iter_mut().zip(&curve).for_each(|(s, c)| *s += c);
    }
    let both: Vec<f64> = phase1.iter().zip(&phase2).map(|(a, b)| a.max(*b)).collect();
    let want = rdp_to_dp(&orders, &both, delta).unwrap();
    assert!(
        (real - want).abs() <= 5e-5 + 1e-9,
        "printed ε = {real}, recomputed {want}: {err}"
    );
    // The paper claims ε = 1 per phase; its procedure spends more.
    assert!(real > 1.0, "{err}");
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let dir = scratch("bad");
    let csv = dir.join("train.csv");
    write_csv(&csv, 400, false);
    let one = dir.join("one.csv");
    write_csv(&one, 400, true);
    let model = dir.join("model.json");
    let (c, o, m) = (
        csv.to_str().unwrap(),
        one.to_str().unwrap(),
        model.to_str().unwrap(),
    );
    for (args, needle) in [
        (fit_args(c, m, "-0.1"), "--rho"),
        (fit_args(o, m, "0.05"), "group"),
    ] {
        let out = dpfair(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
