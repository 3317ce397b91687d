//! Options that size an allocation or a loop are refused up front (exit 2, naming the option),
//! before any data is read: the random-feature count of CDP-Fair and FDP-Fair, and LPCT's depth.

mod common;
use common::{arg, bad, design_csv, dpfair, scratch};

#[test]
fn frequencies_and_depth_are_bounded() {
    let dir = scratch("resource_bounds", "all");
    let data = design_csv(&dir, "d.csv", 300, 1);
    let out = dir.join("m.json");
    for method in ["cdp-fair", "fdp-fair"] {
        let err = bad(&dpfair(&[
            "fit",
            method,
            "--data",
            arg(&data),
            "--target",
            "y",
            "--sensitive",
            "a",
            "--epsilon",
            "1",
            "--frequencies",
            "100000000",
            "--out",
            arg(&out),
        ]));
        assert!(
            err.contains("--frequencies") && err.contains("65536"),
            "{method}: {err}"
        );
    }
    let err = bad(&dpfair(&[
        "fit",
        "lpct",
        "--public",
        arg(&data),
        "--private",
        arg(&data),
        "--target",
        "y",
        "--epsilon",
        "1",
        "--depth",
        "60",
        "--out",
        arg(&out),
    ]));
    assert!(err.contains("--depth") && err.contains("24"), "{err}");
    assert!(!out.exists(), "nothing is written");
}
