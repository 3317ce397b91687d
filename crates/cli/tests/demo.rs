//! `dpfair demo --small` runs every registered method and writes its plot.

mod common;
use common::{arg, bad, dpfair, ok, scratch};

#[test]
fn demo_prints_a_table_and_writes_the_plot() {
    let out = scratch("cli", "demo");
    let stdout = ok(&dpfair(&["demo", "--small", "--out", arg(&out)]));
    // One row per method and ε, with utility, fairness and the ledger's spent privacy.
    assert!(stdout.contains("logistic (non-private)") && stdout.contains("none (non-private)"));
    assert!(stdout.contains("ε = 1.0000, δ = 1.0e-5"), "{stdout}");
    let svg = std::fs::read_to_string(out.join("fairness_vs_utility.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("logistic"));
    // Regression methods get their own plot (MSE does not share an axis with accuracy).
    let mse = std::fs::read_to_string(out.join("fairness_vs_mse.svg")).unwrap();
    assert!(mse.contains("fair regression") && !svg.contains("fair regression"));
    // LPCT has no groups: its fairness is "-" in the table and it is not drawn at unfairness 0.
    let lpct = stdout
        .lines()
        .find(|l| l.starts_with("LPCT"))
        .unwrap_or_else(|| panic!("no LPCT row: {stdout}"));
    assert!(
        lpct.contains("none (no groups)") && lpct.contains(" - "),
        "{lpct}"
    );
    assert!(!svg.contains("LPCT"), "LPCT drawn on the fairness plot");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn reproduce_writes_results_report_and_plots_then_resumes() {
    let out = scratch("cli", "reproduce");
    let run = || {
        dpfair(&[
            "reproduce",
            "fair-bayes",
            "--quick",
            "--jobs",
            "2",
            "--out",
            arg(&out),
        ])
    };
    let stdout = ok(&run());
    assert!(stdout.contains("80 cells computed, 0 resumed"), "{stdout}");
    let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(results.starts_with(
        "experiment,method,dataset,accounting,epsilon,delta,epsilon_spent,fairness_level,params,repetitions,seed0,metric,mean,std,ci95\n"
    ));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    // The paper's Bayes risk 0.106 and the table of `docs/reference-values.md#fdp-fair`, within the project's tolerances.
    assert!(report.contains("| paper §5.1.1 |"), "{report}");
    assert!(!report.contains("**no**"), "{report}");
    assert!(out.join("fair_bayes_risk.svg").is_file());
    // A second run finds every cell done.
    assert!(ok(&run()).contains("0 cells computed, 80 resumed"));
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn reproduce_unknown_name_is_bad_input() {
    assert!(bad(&dpfair(&["reproduce", "nope"])).contains("fair-bayes"));
}
