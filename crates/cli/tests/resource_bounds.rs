//! Options that size an allocation or a loop are refused up front (exit 2, naming the option),
//! before any data is read: the random-feature count of CDP-Fair and FDP-Fair, and LPCT's depth.

mod common;
use common::{bad, design_csv, dpfair, scratch};

#[test]
fn frequencies_and_depth_are_bounded() {
    let dir = scratch("resource_bounds", "all");
    let data = design_csv(&dir, "d.csv", 300, 1);
    let out = dir.join("m.json");
    for method in ["cdp-fair", "fdp-fair"] {
        let err = bad(&dpfair(&common::fit_args(
            method,
            &data,
            "1",
            &out,
            &["--frequencies", "100000000"],
        )));
        assert!(
            err.contains("--frequencies") && err.contains("65536"),
            "{method}: {err}"
        );
    }
    let err = bad(&dpfair(&common::fit_lpct_args(
        &data,
        &out,
        &["--depth", "60"],
    )));
    assert!(err.contains("--depth") && err.contains("24"), "{err}");
    assert!(!out.exists(), "nothing is written");
}
