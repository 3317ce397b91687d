//! `dpfair audit METHOD --quick`: the CI-sized audits of every method through the built binary.
//! Each must pass (ε_lower ≤ claimed ε) and have power (its planted bug's ε_lower > claimed ε);
//! what each audit is and why it has that power: docs/audits.md. The audits are simulations with
//! the audit's own fixed seed, so every run is deterministic.

mod common;
use common::{dpfair, ok, stderr};
use serde_json::Value;

/// The findings of `dpfair audit METHOD --quick --json`.
fn findings(method: &str) -> Vec<Value> {
    let out = ok(&dpfair(&["audit", method, "--quick", "--json"]));
    let v: Value = serde_json::from_str(&out).expect("JSON findings");
    v.as_array().expect("an array of findings").clone()
}

fn num(f: &Value, key: &str) -> f64 {
    f[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {f}"))
}

/// Every finding passes and catches its planted bug.
fn passes_with_power(method: &str) -> Vec<Value> {
    let fs = findings(method);
    assert!(!fs.is_empty(), "{method}: no findings");
    for f in &fs {
        let (claim, lower) = (num(f, "claimed_epsilon"), num(f, "epsilon_lower"));
        let planted: Vec<f64> = f["planted"]
            .as_array()
            .expect("planted bugs")
            .iter()
            .map(|p| num(p, "epsilon_lower"))
            .collect();
        eprintln!(
            "{method}: {} — ε_lower {lower:.3}, planted {planted:?}, claim {claim}",
            f["audit"]
        );
        assert!(lower <= claim, "{method}: violation {f}");
        // Issue 23: a planted bug (noise × 0.3, or clipping off) must be caught.
        assert!(
            planted.iter().any(|&p| p > claim),
            "{method}: no planted bug caught {f}"
        );
    }
    fs
}

#[test]
fn dp_logistic_one_run() {
    for f in passes_with_power("dp-logistic") {
        under_noising_caught(&f);
    }
}

#[test]
fn decoupled_base_model_and_rates() {
    passes_with_power("decoupled");
}

#[test]
fn dp2dp_phases_1_and_2() {
    let fs = passes_with_power("dp2dp");
    assert_eq!(fs.len(), 2, "Phase 1 and Phase 2 findings: {fs:?}");
    for f in &fs {
        under_noising_caught(f);
    }
}

/// The release-sized audits (`dpfair audit METHOD --thorough`): minutes each on 2 cores, so on
/// demand only (`cargo test -p dpfair-cli --test audit -- --ignored`; docs/audits.md). Every
/// finding must pass and catch its planted under-noising (noise × 0.3; LPCT: scale × 0.7), and
/// LPCT's randomiser bound must reach 0.9 ε.
#[test]
#[ignore = "on demand: the thorough audits take minutes (docs/audits.md)"]
fn thorough_audits_pass_and_catch_the_under_noising() {
    for method in ["fermi", "dp2dp", "dp-logistic", "lpct"] {
        let out = ok(&dpfair(&["audit", method, "--thorough", "--json"]));
        let fs: Vec<Value> = serde_json::from_str(&out).expect("JSON findings");
        assert!(!fs.is_empty(), "{method}: no findings");
        for f in &fs {
            let (claim, lower) = (num(f, "claimed_epsilon"), num(f, "epsilon_lower"));
            eprintln!(
                "{method} thorough: {} — ε_lower {lower:.3}, claim {claim}",
                f["audit"]
            );
            assert!(lower <= claim, "{method}: violation {f}");
            if method == "lpct" {
                // Its planted bug is the scale × 0.7.
                assert!(lower >= 0.9 * claim, "{method}: not tight {f}");
                assert!(num(&f["planted"][0], "epsilon_lower") > claim, "{f}");
            } else {
                under_noising_caught(f);
            }
        }
    }
}

/// The planted under-noising (`× 0.3` on the noise) itself is caught, not only clipping off.
fn under_noising_caught(f: &Value) {
    let claim = num(f, "claimed_epsilon");
    let bug = f["planted"]
        .as_array()
        .expect("planted bugs")
        .iter()
        .find(|p| p["bug"].as_str().is_some_and(|b| b.contains("× 0.3")))
        .unwrap_or_else(|| panic!("no `× 0.3` planted bug in {f}"));
    assert!(num(bug, "epsilon_lower") > claim, "× 0.3 not caught: {f}");
}

#[test]
fn strict_fermi() {
    // Audited against the θ releases' share of ε' (label flips move only θ; docs/audits.md),
    // which must not exceed the method's claim ε' = 3.
    for f in passes_with_power("fermi") {
        assert!(num(&f, "claimed_epsilon") < 3.0, "{f}");
        under_noising_caught(&f);
    }
}

#[test]
fn lpct_randomiser_is_tight() {
    for f in passes_with_power("lpct") {
        // Issue 23: the worst-case pair's bound reaches 0.9 ε.
        assert!(
            num(&f, "epsilon_lower") >= 0.9 * num(&f, "claimed_epsilon"),
            "{f}"
        );
    }
}

#[test]
fn fair_regression_search() {
    passes_with_power("fair-regression");
}

#[test]
fn cdp_fair_search() {
    passes_with_power("cdp-fair");
}

#[test]
fn text_report_says_how_to_read_it_and_bad_input_is_exit_2() {
    let out = ok(&dpfair(&["audit", "lpct-prune", "--quick"]));
    assert!(
        out.contains("How to read this") && out.contains("PASS"),
        "{out}"
    );
    let o = dpfair(&["audit", "no-such-method"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
