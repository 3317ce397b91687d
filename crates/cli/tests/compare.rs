//! `dpfair compare`: every applicable method at the same budget on one CSV, one table, one SVG.

mod common;
use common::{arg, bad, design_csv, dpfair, ok, scratch};

/// `compare` on a design CSV (target `y`, groups `a`), then `extra`.
fn compare_args<'a>(data: &'a std::path::Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "compare",
        "--data",
        arg(data),
        "--target",
        "y",
        "--sensitive",
        "a",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn compare_writes_a_table_with_references_and_a_frontier() {
    let dir = scratch("compare", "table");
    let data = design_csv(&dir, "d.csv", 3_000, 1);
    let out = dir.join("cmp");
    let stdout = ok(&dpfair(&compare_args(
        &data,
        &[
            "--bounds",
            "x1:0:1,x2:0:1",
            "--methods",
            "dp-logistic,cdp-fair,dp2dp,lpct",
            "--epsilon",
            "1,2",
            "--out",
            arg(&out),
        ],
    )));
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("| ")).collect();
    // Header, the two references, then four methods at two ε each.
    assert_eq!(rows.len(), 1 + 2 + 4 * 2, "{stdout}");
    assert!(rows[1].starts_with("| majority class |"), "{stdout}");
    assert!(rows[2].starts_with("| non-private logistic |"), "{stdout}");
    for method in ["dp-logistic", "cdp-fair", "dp2dp", "lpct"] {
        for eps in ["1", "2"] {
            let row = rows
                .iter()
                .find(|r| r.starts_with(&format!("| {method} | {eps} |")))
                .unwrap_or_else(|| panic!("no row for {method} at ε = {eps}: {stdout}"));
            // The ε each fit spent (from its ledger) is at most the ε asked for.
            let spent: f64 = row.split('|').nth(7).unwrap().trim().parse().unwrap();
            assert!(spent <= eps.parse::<f64>().unwrap() * (1.0 + 1e-9), "{row}");
        }
    }
    let cdp = rows
        .iter()
        .find(|r| r.starts_with("| cdp-fair | 1 |"))
        .unwrap();
    assert!(cdp.contains("≤ 0.1"), "CDP-Fair's target is α: {cdp}");
    // LPCT (on a public part of the training rows) has no fairness target.
    let lpct = rows.iter().find(|r| r.starts_with("| lpct | 1 |")).unwrap();
    assert!(lpct.contains("| - | - |"), "LPCT has no target: {lpct}");
    let md = std::fs::read_to_string(out.join("compare.md")).unwrap();
    assert_eq!(md.trim_end(), stdout.trim_end());
    let svg = std::fs::read_to_string(out.join("frontier.svg")).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("cdp-fair (ε = 1)"),
        "{svg}"
    );
}

#[test]
fn compare_refuses_bad_options_before_fitting() {
    let dir = scratch("compare", "bad");
    let data = design_csv(&dir, "d.csv", 200, 2);
    for (extra, flag) in [
        (vec!["--methods", "nope"], "--methods"),
        (vec!["--epsilon", "0"], "--epsilon"),
        (vec!["--test-fraction", "1.5"], "--test-fraction"),
        (vec!["--public-fraction", "0"], "--public-fraction"),
        (vec!["--repetitions", "0"], "--repetitions"),
    ] {
        let err = bad(&dpfair(&compare_args(&data, &extra)));
        assert!(err.contains(flag), "{extra:?}: {err}");
    }
}

/// A fit that refuses (private bounds no better than a guess: two columns on 210 training rows
/// at ε = 1) shows as `refused: <reason>` in its row, not as a failure; public bounds fit.
#[test]
fn compare_shows_a_refusal_as_a_refusal() {
    let dir = scratch("compare", "refused");
    let data = design_csv(&dir, "d.csv", 300, 3);
    let run = |extra: &[&str]| {
        let mut args = compare_args(&data, &["--methods", "dp-logistic"]);
        args.extend(extra);
        ok(&dpfair(&args))
    };
    let stdout = run(&[]);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| dp-logistic | 1 |"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        row.contains("refused: private bounds") && row.contains("--bounds"),
        "{row}"
    );
    assert!(!row.contains("failed"), "{row}");
    let stdout = run(&["--bounds", "x1:0:1,x2:0:1"]);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| dp-logistic | 1 |"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(!row.contains("refused") && !row.contains("failed"), "{row}");
}
