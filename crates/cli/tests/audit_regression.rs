//! The worst-case neighbour pairs the searches of `dpfair audit` found, kept as regression cases:
//! each stored pair is re-audited alone (`dpfair audit METHOD --pair NAME --quick --json`) and
//! must still pass (ε_lower ≤ claim, Clopper–Pearson at α = 0.01) while its planted bug (noise
//! scale × 0.3) is caught (ε_lower > claim). Why each pair was chosen: docs/audits.md, "Searched
//! neighbours". A renamed or removed candidate fails here (the CLI rejects an unknown pair with
//! exit status 2).

mod common;
use common::{bad, dpfair, ok};
use serde_json::Value;

/// (method, candidate pair, why it is kept).
const FOUND_PAIRS: &[(&str, &str, &str)] = &[
    (
        "fair-regression",
        "group flip",
        "chosen by the search (seed 1): the largest screening bound",
    ),
    (
        "fair-regression",
        "empty group 1 (record 0 its only member)",
        "gave ε_lower = 2.79 > 1 before the harness used one projection per pair",
    ),
    (
        "decoupled",
        "nearly empty group 0 (2 rows), prediction flip",
        "chosen by the search (seed 1): a rate of a 2-row group",
    ),
    (
        "cdp-fair",
        "group flip",
        "chosen by the search (seed 1) of CDP-Fair's π̃",
    ),
];

fn num(f: &Value, key: &str) -> f64 {
    f[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {f}"))
}

#[test]
fn stored_worst_case_pairs_pass_and_their_planted_bugs_are_caught() {
    for &(method, pair, why) in FOUND_PAIRS {
        let out = ok(&dpfair(&[
            "audit", method, "--pair", pair, "--quick", "--json",
        ]));
        let fs: Vec<Value> = serde_json::from_str(&out).expect("JSON findings");
        assert_eq!(
            fs.len(),
            1,
            "{method} `{pair}`: one finding expected: {out}"
        );
        let f = &fs[0];
        assert!(
            f["neighbours"]
                .as_str()
                .is_some_and(|n| n.ends_with(&format!("chosen: {pair}"))),
            "{method}: the audit did not run the stored pair `{pair}`: {f}"
        );
        let (claim, lower) = (num(f, "claimed_epsilon"), num(f, "epsilon_lower"));
        let planted = num(&f["planted"][0], "epsilon_lower");
        eprintln!(
            "{method} `{pair}` ({why}): ε_lower {lower:.3}, planted {planted:.3}, claim {claim}"
        );
        assert!(lower <= claim, "{method} `{pair}`: violation ({why}): {f}");
        assert!(
            planted > claim,
            "{method} `{pair}`: planted × 0.3 not caught: {f}"
        );
    }
}

#[test]
fn unknown_pair_and_pair_without_search_are_bad_input() {
    let msg = bad(&dpfair(&["audit", "cdp-fair", "--pair", "no such pair"]));
    assert!(msg.contains("group flip"), "lists the candidates: {msg}");
    bad(&dpfair(&["audit", "dp-logistic", "--pair", "group flip"]));
}
