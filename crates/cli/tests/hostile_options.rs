//! Issue #41 parts 6 and 7: every numeric option of `fit` at a hostile value (NaN, ±∞, negative,
//! absurdly large) is refused with exit 2 naming the option, before any data is read (fast);
//! `--epsilon inf` is the non-private reference where a method has one (printed NOT PRIVATE);
//! `ldp fit --lambda inf` is refused; no model file is ever replaced by an unreadable one.

mod common;
use common::{arg, bad, dpfair, ok, scratch, stderr, write};

/// Tiny data: x1, x2 on [0, 1], a group a and a label y.
fn data(dir: &std::path::Path) -> std::path::PathBuf {
    let mut s = String::from("x1,x2,a,y\n");
    for i in 0..200 {
        let (x1, x2) = ((i * 37 % 100) as f64 / 100.0, (i * 53 % 100) as f64 / 100.0);
        let a = i % 2;
        let y = u8::from(x1 + 0.2 * a as f64 > 0.6);
        s.push_str(&format!("{x1},{x2},{a},{y}\n"));
    }
    write(dir, "d.csv", &s)
}

/// (method and its needed flags, the hostile flag, its value, the option the message names).
const CASES: &[(&str, &str, &str, &str)] = &[
    ("dp-logistic", "--learning-rate", "1e308", "--learning-rate"),
    ("dp-logistic", "--learning-rate", "NaN", "--learning-rate"),
    ("dp-logistic", "--l2", "-1", "--l2"),
    ("dp-logistic", "--l2", "NaN", "--l2"),
    ("dp-logistic", "--l2", "inf", "--l2"),
    ("dp-logistic", "--feature-bound", "NaN", "--feature-bound"),
    ("dp-logistic", "--feature-bound", "-2", "--feature-bound"),
    ("dp-logistic", "--clip", "inf", "--clip"),
    ("dp-logistic", "--epsilon", "1e308", "--epsilon"),
    ("dp-logistic", "--bounds-share", "NaN", "--bounds-share"),
    ("dp-logistic", "--bounds-share", "1.5", "--bounds-share"),
    ("decoupled", "--learning-rate", "1e308", "--learning-rate"),
    ("decoupled", "--epsilon", "1e308", "--epsilon"),
    (
        "decoupled",
        "--epsilon",
        "18446744073709551616",
        "--epsilon",
    ),
    ("decoupled", "--rate-epsilon", "NaN", "--rate-epsilon"),
    ("decoupled", "--post-fraction", "inf", "--post-fraction"),
    ("dp-linear", "--target-share", "NaN", "--target-share"),
    ("dp-linear", "--target-share", "2", "--target-share"),
    ("dp-linear", "--epsilon", "1e308", "--epsilon"),
    ("dp-linear", "--ridge", "1e308", "--ridge"),
    ("decoupled", "--alpha", "1e308", "--alpha"),
    ("fair-regression", "--alpha", "1e308", "--alpha"),
    ("fair-regression", "--epsilon", "1e308", "--epsilon"),
    ("dp2dp", "--l2", "NaN", "--l2"),
    ("dp2dp", "--l2", "-1", "--l2"),
    ("dp2dp", "--beta", "1e308", "--beta"),
    ("dp2dp", "--margin-z", "1e308", "--margin-z"),
    ("dp2dp", "--c-lambda", "1e308", "--c-lambda"),
    ("dp2dp", "--rho", "1e308", "--rho"),
];

/// The flags each method needs besides the hostile one.
fn base(method: &str, data: &str, out: &str) -> Vec<String> {
    let mut a: Vec<&str> = vec!["fit", method, "--data", data, "--out", out];
    match method {
        "dp-logistic" => a.extend([
            "--target",
            "y",
            "--epsilon",
            "1",
            "--bounds",
            "x1:0:1,x2:0:1",
        ]),
        "decoupled" => a.extend([
            "--target",
            "y",
            "--sensitive",
            "a",
            "--epsilon",
            "1",
            "--bounds",
            "x1:0:1,x2:0:1",
        ]),
        "dp-linear" => a.extend([
            "--target",
            "x1",
            "--features",
            "x2",
            "--bounds",
            "x2:0:1",
            "--target-range",
            "0,1",
            "--epsilon",
            "1",
        ]),
        "dp2dp" => a.extend([
            "--target",
            "y",
            "--sensitive",
            "a",
            "--epsilon",
            "1",
            "--bounds",
            "x1:0:1,x2:0:1",
        ]),
        "fair-regression" => a.extend([
            "--scores",
            "x1",
            "--sensitive",
            "a",
            "--range",
            "0,1",
            "--epsilon",
            "1",
        ]),
        _ => unreachable!(),
    }
    a.into_iter().map(String::from).collect()
}

/// Replaces `flag`'s value if the base gives it, else appends it.
fn with(mut args: Vec<String>, flag: &str, value: &str) -> Vec<String> {
    match args.iter().position(|a| a == flag) {
        Some(i) => args[i + 1] = value.to_string(),
        None => args.extend([flag.to_string(), value.to_string()]),
    }
    args
}

#[test]
fn every_hostile_numeric_option_is_refused_naming_it() {
    let dir = scratch("hostile", "table");
    let d = data(&dir);
    let out = dir.join("m.json");
    // A good model first: no refusal may replace it.
    ok(&dpfair(&base("dp-logistic", arg(&d), arg(&out))));
    let good = std::fs::read(&out).unwrap();
    for (method, flag, value, names) in CASES {
        let args = with(base(method, arg(&d), arg(&out)), flag, value);
        let started = std::time::Instant::now();
        let e = bad(&dpfair(&args));
        assert!(e.contains(names), "{method} {flag} {value}: {e}");
        assert!(
            e.len() < 400,
            "{method} {flag} {value}: a long message: {e}"
        );
        // Refused before any work (a hostile ε once ran past 25 s).
        assert!(
            started.elapsed().as_secs() < 10,
            "{method} {flag} {value}: {:?}",
            started.elapsed()
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            good,
            "{method} {flag} {value}"
        );
    }
}

/// `--epsilon inf` means the same for dp-linear, fair-regression and dp2dp as for every method
/// with a non-private reference: the fit runs, and says NOT PRIVATE; a finite ε above 1e4 is
/// refused pointing at `inf`.
#[test]
fn epsilon_inf_is_the_named_non_private_reference() {
    let dir = scratch("hostile", "inf");
    let d = data(&dir);
    let m = dir.join("m.json");
    let o = dpfair(&with(
        base("dp-linear", arg(&d), arg(&m)),
        "--epsilon",
        "inf",
    ));
    ok(&o);
    assert!(stderr(&o).contains("NOT private"), "{}", stderr(&o));
    let fr = |eps: &str| {
        dpfair(&[
            "fit",
            "fair-regression",
            "--data",
            arg(&d),
            "--scores",
            "x1",
            "--sensitive",
            "a",
            "--range",
            "0,1",
            "--epsilon",
            eps,
            "--out",
            arg(&m),
        ])
    };
    let o = fr("inf");
    ok(&o);
    assert!(stderr(&o).contains("NOT private"), "{}", stderr(&o));
    let e = bad(&fr("1e300"));
    assert!(e.contains("--epsilon") && e.contains("inf"), "{e}");
    // DP2DP too (the library, and so Python's DP2DPClassifier, always took ε = inf; the CLI
    // refused it).
    let o = dpfair(&[
        "fit",
        "dp2dp",
        "--data",
        arg(&d),
        "--target",
        "y",
        "--sensitive",
        "a",
        "--bounds",
        "x1:0:1,x2:0:1",
        "--epsilon",
        "inf",
        "--out",
        arg(&m),
    ]);
    ok(&o);
    assert!(stderr(&o).contains("NOT private"), "{}", stderr(&o));
}

/// `ldp fit --lambda inf` (and NaN, negative, absurd) is refused naming the option, and the
/// model file already there stays.
#[test]
fn ldp_fit_refuses_a_non_finite_lambda() {
    let dir = scratch("hostile", "lambda");
    let d = data(&dir);
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    ok(&dpfair(&[
        "ldp",
        "partition",
        "--public",
        arg(&d),
        "--target",
        "y",
        "--features",
        "x1,x2",
        "--depth",
        "2",
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
        arg(&d),
        "--out",
        &s("r.arrow"),
    ]));
    let fit = |lambda: &str| {
        dpfair(&[
            "ldp",
            "fit",
            "--partition",
            &s("tree.json"),
            "--reports",
            &s("r.arrow"),
            "--lambda",
            lambda,
            "--out",
            &s("m.json"),
        ])
    };
    ok(&fit("1"));
    let good = std::fs::read(dir.join("m.json")).unwrap();
    for lambda in ["inf", "NaN", "-1", "1e300"] {
        let e = bad(&fit(lambda));
        assert!(e.contains("lambda"), "{lambda}: {e}");
        assert_eq!(std::fs::read(dir.join("m.json")).unwrap(), good, "{lambda}");
    }
}

/// The federated server refuses `--c-omega 1e308` (ω = ∞: a model nothing could read) before it
/// reads a transcript, naming the option.
#[test]
fn federated_server_refuses_an_absurd_c_omega() {
    let dir = scratch("hostile", "c_omega");
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    for value in ["1e308", "inf", "NaN", "-1"] {
        let e = bad(&dpfair(&[
            "federated",
            "aggregate",
            "round2",
            &s("t1.json"),
            "--global",
            &s("g.json"),
            "--c-omega",
            value,
            "--out",
            &s("m.json"),
        ]));
        assert!(
            e.contains("--c-omega") && !e.contains("g.json"),
            "{value}: {e}"
        );
    }
}

/// A partition at ε = 1e-300 (reports that carry no signal): `ldp fit`'s default λ is not finite,
/// and the refusal names the partition and its ε instead of writing a model nothing can read.
#[test]
fn ldp_fit_at_a_vanishing_epsilon_is_refused_naming_the_partition() {
    let dir = scratch("hostile", "tiny_eps");
    let d = data(&dir);
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    ok(&dpfair(&[
        "ldp",
        "partition",
        "--public",
        arg(&d),
        "--target",
        "y",
        "--features",
        "x1,x2",
        "--depth",
        "2",
        "--epsilon",
        "1e-300",
        "--out",
        &s("tree.json"),
    ]));
    ok(&dpfair(&[
        "ldp",
        "privatize",
        "--partition",
        &s("tree.json"),
        "--data",
        arg(&d),
        "--out",
        &s("r.arrow"),
    ]));
    let e = bad(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &s("tree.json"),
        "--reports",
        &s("r.arrow"),
        "--out",
        &s("m.json"),
    ]));
    assert!(
        e.contains("tree.json") && e.contains("1e-300") && e.contains("--lambda"),
        "{e}"
    );
    assert!(!dir.join("m.json").exists());
}
