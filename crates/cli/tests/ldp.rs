//! `dpfair ldp partition | privatize | fit`: LPCT's client/collector protocol through the built
//! binary, on the Ma & Yang synthetic design.

use dpfair::model::{FittedModel, ModelFile};
use dpfair_data::synthetic::{Design, LpctDesign};
use dpfair_data::{Dataset, Target};
use std::path::Path;

mod common;
use common::{bad, dpfair, ok};

fn scratch(test: &str) -> std::path::PathBuf {
    common::scratch("ldp", test)
}

fn write_csv(path: &Path, ds: &Dataset) {
    let Some(Target::Binary(y)) = &ds.target else {
        panic!()
    };
    let mut s = String::from("x1,x2,y\n");
    for (i, r) in ds.features.rows().into_iter().enumerate() {
        s.push_str(&format!("{},{},{}\n", r[0], r[1], y[i]));
    }
    std::fs::write(path, s).unwrap();
}

fn data(dir: &Path) -> (String, String) {
    let d = LpctDesign::default();
    let (p, q) = (dir.join("priv.csv"), dir.join("pub.csv"));
    write_csv(&p, &d.generate(1500, 1).unwrap());
    write_csv(&q, &d.public(200, 1).unwrap());
    (
        q.to_string_lossy().into_owned(),
        p.to_string_lossy().into_owned(),
    )
}

/// Column sums of REPORTS.csv computed here, independently of the collector.
fn column_sums(path: &Path) -> (usize, Vec<f64>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("# dpfair-ldp-reports partition=sha256:")
    );
    let width = lines.next().unwrap().split(',').count();
    let mut sums = vec![0.0; width];
    let mut n = 0;
    for l in lines {
        n += 1;
        for (s, v) in sums.iter_mut().zip(l.split(',')) {
            *s += v.parse::<f64>().unwrap();
        }
    }
    (n, sums)
}

#[test]
fn partition_privatize_fit_round_trip() {
    let dir = scratch("lpct");
    let (public, private) = data(&dir);
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    ok(&dpfair(&[
        "ldp",
        "partition",
        "--public",
        &public,
        "--target",
        "y",
        "--depth",
        "3",
        "--epsilon",
        "2",
        "--mechanism",
        "laplace",
        "--out",
        &s("tree.json"),
    ]));
    ok(&dpfair(&[
        "ldp",
        "privatize",
        "--partition",
        &s("tree.json"),
        "--data",
        &private,
        "--target",
        "y",
        "--seed",
        "5",
        "--out",
        &s("rep.csv"),
    ]));
    let (n, sums) = column_sums(&dir.join("rep.csv"));
    assert_eq!((n, sums.len()), (1500, 17));
    ok(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &s("tree.json"),
        "--reports",
        &s("rep.csv"),
        "--lambda",
        "0",
        "--guard",
        "0",
        "--out",
        &s("model.json"),
    ]));
    let file = ModelFile::load(dir.join("model.json")).unwrap();
    assert_eq!(file.method, "lpct");
    assert!((file.ledger.total().unwrap().epsilon - 2.0).abs() < 1e-12);
    let FittedModel::Lpct(m) = &file.model else {
        panic!("not an LPCT model")
    };
    // λ = 0: each leaf's η is Σ Ṽ / Σ Ũ over the reports (eq. (7)).
    for (j, eta) in m.classifier.leaf_eta().iter().enumerate() {
        let want = sums[1 + 8 + j] / sums[1 + j];
        assert!((eta - want).abs() <= 1e-9 * (1.0 + want.abs()), "leaf {j}");
    }

    // Bad input: exit 2 with a message, never a panic.
    let e = bad(&dpfair(&[
        "ldp",
        "privatize",
        "--partition",
        &s("tree.json"),
        "--data",
        &private,
        "--epsilon",
        "3",
        "--out",
        &s("x.csv"),
    ]));
    assert!(e.contains("epsilon"), "{e}");
    let text = std::fs::read_to_string(dir.join("rep.csv")).unwrap();
    let tag = text.lines().next().unwrap();
    std::fs::write(
        dir.join("short.csv"),
        format!("{tag}\nepsilon,u_0\n2,0.5\n"),
    )
    .unwrap();
    let e = bad(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &s("tree.json"),
        "--reports",
        &s("short.csv"),
        "--out",
        &s("m2.json"),
    ]));
    assert!(e.contains("columns"), "{e}");
    let e = bad(&dpfair(&[
        "ldp",
        "partition",
        "--public",
        &public,
        "--target",
        "y",
        "--epsilon",
        "2",
        "--out",
        &s("t.json"),
    ]));
    assert!(e.contains("--n-private"), "{e}");
    bad(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &private,
        "--reports",
        &s("rep.csv"),
        "--out",
        &s("m3.json"),
    ]));
}

/// LPCT-prune through files: round 1, and round 2 when Algorithm 2 terminates; the ledger of
/// the final model never exceeds ε.
#[test]
fn prune_rounds_through_files() {
    let dir = scratch("prune");
    let (public, private) = data(&dir);
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    ok(&dpfair(&[
        "ldp",
        "partition",
        "--public",
        &public,
        "--target",
        "y",
        "--prune",
        "--termination",
        "--n-private",
        "1500",
        "--epsilon",
        "2",
        "--out",
        &s("t1.json"),
    ]));
    ok(&dpfair(&[
        "ldp",
        "privatize",
        "--partition",
        &s("t1.json"),
        "--data",
        &private,
        "--seed",
        "1",
        "--out",
        &s("r1.csv"),
    ]));
    // Round-1 reports are at ε/2 (after the digest line and the header).
    assert!(
        std::fs::read_to_string(dir.join("r1.csv"))
            .unwrap()
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("1,")
    );
    ok(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &s("t1.json"),
        "--reports",
        &s("r1.csv"),
        "--public",
        &public,
        "--next",
        &s("t2.json"),
        "--out",
        &s("m.json"),
    ]));
    if dir.join("t2.json").exists() {
        ok(&dpfair(&[
            "ldp",
            "privatize",
            "--partition",
            &s("t2.json"),
            "--data",
            &private,
            "--seed",
            "2",
            "--out",
            &s("r2.csv"),
        ]));
        ok(&dpfair(&[
            "ldp",
            "fit",
            "--partition",
            &s("t2.json"),
            "--reports",
            &s("r2.csv"),
            "--out",
            &s("m.json"),
        ]));
    }
    let file = ModelFile::load(dir.join("m.json")).unwrap();
    assert_eq!(file.method, "lpct-prune");
    assert!(file.ledger.total().unwrap().epsilon <= 2.0 + 1e-12);
}

fn partition_args(public: &str, out: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "ldp",
        "partition",
        "--public",
        public,
        "--target",
        "y",
        "--out",
        out,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn run(args: &[String]) -> std::process::Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    dpfair(&refs)
}

/// η per leaf at λ = 0 from a Hadamard CSV report file, computed here independently of the
/// collector: row sums of the ±1 bits, the K × K Hadamard product written out, then
/// η_j = n̂_(j,1) / (n̂_(j,0) + n̂_(j,1)) (the α of the decoding cancels).
fn hadamard_eta(path: &Path, leaves: usize) -> Vec<f64> {
    let k = (2 * leaves).next_power_of_two();
    let mut sums = vec![0i64; k];
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("# dpfair-ldp-reports partition=sha256:")
    );
    assert_eq!(lines.next(), Some("epsilon,hadamard_row,bit"));
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let r: usize = f[1].parse().unwrap();
        sums[r] += if f[2] == "1" { 1 } else { -1 };
    }
    let est = |c: usize| -> f64 {
        (0..k)
            .map(|r| {
                let sign = if (r & c).count_ones().is_multiple_of(2) {
                    1
                } else {
                    -1
                };
                (sign * sums[r]) as f64
            })
            .sum()
    };
    (0..leaves)
        .map(|j| est(2 * j + 1) / (est(2 * j) + est(2 * j + 1)))
        .collect()
}

/// The default (Hadamard) mechanism through Arrow and CSV report files, several files and a
/// directory at once, and every refusal naming the file.
#[test]
fn hadamard_reports_in_arrow_and_csv_files() {
    let dir = scratch("hadamard");
    let (public, private) = data(&dir);
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    ok(&run(&partition_args(
        &public,
        &s("tree.json"),
        &["--epsilon", "2", "--depth", "3"],
    )));
    let tree = s("tree.json");
    let privatize = |out: &str, extra: &[&str]| {
        let mut a = vec![
            "ldp",
            "privatize",
            "--partition",
            &tree,
            "--data",
            &private,
            "--out",
            out,
        ];
        a.extend(extra);
        dpfair(&a)
    };
    std::fs::create_dir_all(dir.join("reports")).unwrap();
    ok(&privatize(&s("reports/a.arrow"), &[]));
    let o = privatize(&s("reports/b.txt"), &["--format", "csv"]);
    ok(&o);
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(e.contains("1500 hadamard reports, each 2-LDP"), "{e}");
    // The binary file: a few bytes per report (u8 rows for K = 16, bit-packed bits, a footer).
    let bytes = std::fs::metadata(dir.join("reports/a.arrow"))
        .unwrap()
        .len();
    assert!(bytes < 1500 * 3 + 2048, "{bytes} bytes for 1500 reports");

    // One file at λ = 0: η from the CSV, recomputed here, is the model's.
    ok(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &s("tree.json"),
        "--reports",
        &s("reports/b.txt"),
        "--lambda",
        "0",
        "--guard",
        "0",
        "--out",
        &s("m1.json"),
    ]));
    let file = ModelFile::load(dir.join("m1.json")).unwrap();
    let FittedModel::Lpct(m) = &file.model else {
        panic!("not an LPCT model")
    };
    let want = hadamard_eta(&dir.join("reports/b.txt"), m.classifier.leaf_eta().len());
    for (j, (eta, w)) in m.classifier.leaf_eta().iter().zip(&want).enumerate() {
        assert!(
            (eta - w).abs() <= 1e-9 * (1.0 + w.abs()),
            "leaf {j}: {eta} vs {w}"
        );
    }
    assert!((file.ledger.total().unwrap().epsilon - 2.0).abs() < 1e-12);

    // Two files of different formats given one by one, or as their directory (.txt is not a
    // report extension, so the directory holds a.arrow only).
    ok(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &s("tree.json"),
        "--reports",
        &s("reports/a.arrow"),
        &s("reports/b.txt"),
        "--out",
        &s("m2.json"),
    ]));
    ok(&dpfair(&[
        "ldp",
        "fit",
        "--partition",
        &s("tree.json"),
        "--reports",
        &s("reports"),
        "--out",
        &s("m3.json"),
    ]));

    // Refusals, each naming the report file.
    let fit_err = |tree: &str, reports: &str| {
        bad(&dpfair(&[
            "ldp",
            "fit",
            "--partition",
            tree,
            "--reports",
            reports,
            "--out",
            &s("x.json"),
        ]))
    };
    let arrow = s("reports/a.arrow");
    // Another partition (deeper tree).
    ok(&run(&partition_args(
        &public,
        &s("deeper.json"),
        &["--epsilon", "2", "--depth", "4"],
    )));
    let e = fit_err(&s("deeper.json"), &arrow);
    assert!(
        e.contains("a.arrow") && e.contains("another partition"),
        "{e}"
    );
    // The same tree for Laplace reports.
    ok(&run(&partition_args(
        &public,
        &s("laplace.json"),
        &["--epsilon", "2", "--depth", "3", "--mechanism", "laplace"],
    )));
    let e = fit_err(&s("laplace.json"), &arrow);
    assert!(
        e.contains("a.arrow") && e.contains("hadamard mechanism"),
        "{e}"
    );
    // The same tree at another ε.
    ok(&run(&partition_args(
        &public,
        &s("eps1.json"),
        &["--epsilon", "1", "--depth", "3"],
    )));
    let e = fit_err(&s("eps1.json"), &arrow);
    assert!(e.contains("a.arrow") && e.contains("ε = 2"), "{e}");
    // A truncated file.
    let full = std::fs::read(dir.join("reports/a.arrow")).unwrap();
    std::fs::write(dir.join("cut.arrow"), &full[..full.len() / 2]).unwrap();
    let e = fit_err(&s("tree.json"), &s("cut.arrow"));
    assert!(e.contains("cut.arrow"), "{e}");
    // The holder asks for another mechanism than the partition's.
    let e = bad(&privatize(&s("y.arrow"), &["--mechanism", "laplace"]));
    assert!(e.contains("--mechanism laplace"), "{e}");
}

/// `ldp fit` applies LPCT's significance guard by default, as `fit lpct`, `fit lpct-prune` and
/// `compare` do (docs/deviations.md#lpct-significance-guard,
/// docs/deviations.md#lpct-prune-significance-guard): at a z no node reaches every leaf takes
/// the root's estimate; `--guard 0` gives the paper's per-leaf estimates; a negative z is
/// refused naming the option.
#[test]
fn ldp_fit_applies_the_significance_guard() {
    let dir = scratch("guard");
    let (public, private) = data(&dir);
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    let leaf_eta = |model: &str| -> Vec<f64> {
        match ModelFile::load(dir.join(model)).unwrap().model {
            FittedModel::Lpct(m) => m.classifier.leaf_eta().to_vec(),
            FittedModel::LpctPrune(m) => m.classifier.leaf_eta().to_vec(),
            _ => panic!("not an LPCT model"),
        }
    };
    for (tree, extra) in [("lpct.json", "--depth=3"), ("prune.json", "--prune")] {
        ok(&run(&partition_args(
            &public,
            &s(tree),
            &[extra, "--n-private", "1500", "--epsilon", "2"],
        )));
        let (partition, reports) = (s(tree), s(&format!("{tree}.csv")));
        ok(&dpfair(&[
            "ldp",
            "privatize",
            "--partition",
            &s(tree),
            "--data",
            &private,
            "--seed",
            "3",
            "--out",
            &reports,
        ]));
        let fit = |guard: &[&str], out: &str| {
            let mut a = vec![
                "ldp",
                "fit",
                "--partition",
                &partition,
                "--reports",
                &reports,
                "--out",
                out,
            ];
            a.extend_from_slice(guard);
            dpfair(&a)
        };
        ok(&fit(&["--guard", "0"], &s("paper.json")));
        ok(&fit(&[], &s("default.json")));
        ok(&fit(&["--guard", "1e9"], &s("root.json")));
        let paper = leaf_eta("paper.json");
        assert!(
            paper.iter().any(|&e| e != paper[0]),
            "{tree}: the paper's leaves all equal: {paper:?}"
        );
        let root = leaf_eta("root.json");
        assert!(
            root.iter().all(|&e| e == root[0]),
            "{tree}: guard 1e9 left distinct leaves: {root:?}"
        );
        // The default is the guard at z = 3: between the two (each leaf is its own or an
        // ancestor's estimate).
        assert_eq!(leaf_eta("default.json").len(), paper.len());
        let err = bad(&fit(&["--guard", "-1"], &s("bad.json")));
        assert!(err.contains("guard") && err.contains("-1"), "{err}");
    }
}

/// Issue #41 part 5: every report file is counted once however it is named or linked, a copy
/// is refused naming both files, files `ldp fit` does not read are named, a CSV file for
/// another partition of as many leaves is refused, and a corrupt Arrow file is named without a
/// panic.
#[test]
fn ldp_fit_counts_each_report_file_once() {
    let dir = scratch("once");
    let (public, private) = data(&dir);
    let s = |p: &str| dir.join(p).to_string_lossy().into_owned();
    ok(&run(&partition_args(
        &public,
        &s("tree.json"),
        &["--epsilon", "2", "--depth", "3"],
    )));
    // Another partition of the same 8 leaves (the unit box instead of the public range).
    ok(&run(&partition_args(
        &public,
        &s("unit.json"),
        &["--epsilon", "2", "--depth", "3", "--range", "unit"],
    )));
    let privatize = |tree: &str, out: &str| {
        ok(&dpfair(&[
            "ldp",
            "privatize",
            "--partition",
            tree,
            "--data",
            &private,
            "--out",
            out,
        ]))
    };
    std::fs::create_dir_all(dir.join("reports/sub")).unwrap();
    privatize(&s("tree.json"), &s("reports/a.arrow"));
    privatize(&s("tree.json"), &s("reports/sub/b.csv"));
    std::fs::write(dir.join("reports/old.feather"), b"x").unwrap();
    std::fs::write(dir.join("reports/a.bak"), b"x").unwrap();
    let fit = |reports: &[&str], out: &str| {
        let tree = s("tree.json");
        let mut a = vec!["ldp", "fit", "--partition", &tree, "--reports"];
        a.extend(reports);
        a.extend(["--lambda", "0", "--guard", "0", "--out"]);
        let out = s(out);
        a.push(&out);
        dpfair(&a)
    };
    let eta = |m: &str| {
        let file = ModelFile::load(dir.join(m)).unwrap();
        let FittedModel::Lpct(m) = &file.model else {
            panic!("not an LPCT model")
        };
        m.classifier.leaf_eta().to_vec()
    };
    // The folder: both files (one in a subfolder), the others named.
    let o = fit(&[&s("reports")], "m1.json");
    ok(&o);
    let e = common::stderr(&o);
    assert!(
        e.contains("not read") && e.contains("old.feather") && e.contains("a.bak"),
        "{e}"
    );
    let both = eta("m1.json");
    ok(&fit(
        &[&s("reports/a.arrow"), &s("reports/sub/b.csv")],
        "m2.json",
    ));
    assert_eq!(eta("m2.json"), both);
    // The folder twice, a file twice and a symbolic link: read once, with a note.
    #[cfg(unix)]
    std::os::unix::fs::symlink(dir.join("reports/a.arrow"), dir.join("link.arrow")).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(dir.join("reports/a.arrow"), dir.join("link.arrow")).unwrap();
    let o = fit(
        &[
            &s("reports"),
            &s("reports"),
            &s("reports/a.arrow"),
            &s("link.arrow"),
        ],
        "m3.json",
    );
    #[cfg(unix)]
    {
        ok(&o);
        assert!(
            common::stderr(&o).contains("read once"),
            "{}",
            common::stderr(&o)
        );
        assert_eq!(eta("m3.json"), both);
    }
    #[cfg(not(unix))]
    let _ = o;
    // A copy of 1500 reports under another name: refused, naming both files.
    std::fs::copy(dir.join("reports/a.arrow"), dir.join("copy.arrow")).unwrap();
    let e = bad(&fit(&[&s("reports"), &s("copy.arrow")], "x.json"));
    assert!(
        e.contains("copy.arrow") && e.contains("a.arrow") && e.contains("same bytes"),
        "{e}"
    );
    // A CSV file made with another partition of as many leaves.
    privatize(&s("unit.json"), &s("unit.csv"));
    let e = bad(&fit(&[&s("unit.csv")], "x.json"));
    assert!(
        e.contains("unit.csv") && e.contains("another partition"),
        "{e}"
    );
    // A CSV file without the digest line (an old or hand-made file).
    let text = std::fs::read_to_string(dir.join("reports/sub/b.csv")).unwrap();
    let untagged: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("old.csv"), untagged).unwrap();
    let e = bad(&fit(&[&s("old.csv")], "x.json"));
    assert!(
        e.contains("old.csv") && e.contains("no partition digest"),
        "{e}"
    );
    // Flipped bits in one Arrow file among many: the file is named, never a panic.
    let bytes = std::fs::read(dir.join("reports/a.arrow")).unwrap();
    let mut refused = 0;
    for k in 0..24 {
        let bit = (k * 7919 * 8 + k) % (bytes.len() * 8);
        let mut b = bytes.clone();
        b[bit / 8] ^= 1 << (bit % 8);
        let flipped = dir.join("reports/sub/flipped.arrow");
        std::fs::write(&flipped, &b).unwrap();
        let o = fit(&[&s("reports")], "x.json");
        let e = common::stderr(&o);
        assert!(
            !e.contains("panicked") && !e.contains("internal error"),
            "bit {bit}: {e}"
        );
        match o.status.code() {
            Some(0) => {}
            Some(2) => {
                refused += 1;
                assert!(e.contains("flipped.arrow"), "bit {bit}: {e}");
            }
            c => panic!("bit {bit}: exit {c:?}: {e}"),
        }
    }
    // The footer's last bytes (magic) are always refused.
    let mut b = bytes.clone();
    let last = b.len() - 1;
    b[last] ^= 1;
    std::fs::write(dir.join("reports/sub/flipped.arrow"), &b).unwrap();
    let e = bad(&fit(&[&s("reports")], "x.json"));
    assert!(e.contains("flipped.arrow"), "{e}");
    eprintln!("{refused} of 24 flips refused");
}

/// Report folders fuzzed (issue: duplicates counted twice, corrupt files panicking): random
/// lists and folders of real report files, their symbolic links, byte-identical copies,
/// bit-flipped copies and files dpfair does not read, each possibly named twice. `ldp fit` never
/// panics (exit 0 or 2); a byte-identical copy under another name is refused; without copies or
/// corrupt files the model is the one fitted on the distinct report files, each counted once.
/// `DPFAIR_FUZZ_SCALE=N` runs N × 60 cases (docs/fuzzing.md).
#[test]
#[cfg(unix)]
fn fuzz_report_folders_count_each_file_once() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let dir = scratch("fuzz-folders");
    let (public, private) = data(&dir);
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let tree = s(&dir.join("tree.json"));
    ok(&run(&partition_args(
        &public,
        &tree,
        &["--epsilon", "2", "--depth", "3"],
    )));
    // Three distinct report files of the same holders (fresh OS noise each time).
    let originals: Vec<std::path::PathBuf> = (0..3)
        .map(|i| {
            let out = dir.join(format!("r{i}.arrow"));
            ok(&dpfair(&[
                "ldp",
                "privatize",
                "--partition",
                &tree,
                "--data",
                &private,
                "--out",
                &s(&out),
            ]));
            out
        })
        .collect();
    let fit = |reports: &[String], out: &Path| {
        let mut a = vec!["ldp", "fit", "--partition", &tree, "--reports"];
        a.extend(reports.iter().map(String::as_str));
        let out = s(out);
        a.extend(["--lambda", "0", "--guard", "0", "--out", &out]);
        dpfair(&a)
    };
    let eta = |m: &Path| {
        let file = ModelFile::load(m).unwrap();
        let FittedModel::Lpct(m) = &file.model else {
            panic!("not an LPCT model")
        };
        m.classifier.leaf_eta().to_vec()
    };
    let scale: u32 = std::env::var("DPFAIR_FUZZ_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let case = std::cell::Cell::new(0u32);
    let outcomes = std::cell::Cell::new([0u32; 2]);
    let mut runner = TestRunner::new(Config {
        cases: 60 * scale.max(1),
        failure_persistence: None,
        max_shrink_iters: 0,
        ..Config::default()
    });
    // An item: (kind 0 original, 1 symlink, 2 copy, 3 bit-flipped copy, 4 unread file; which
    // original; the bit to flip), and whether the case passes a folder or the list, plus a
    // name repeated.
    let items = proptest::collection::vec((0u8..5, 0usize..3, any::<u64>()), 1..6);
    runner
        .run(
            &(items, any::<bool>(), any::<bool>()),
            |(items, folder, repeat)| {
                let n = case.get();
                case.set(n + 1);
                let here = dir.join(format!("case{n}"));
                std::fs::create_dir_all(&here).unwrap();
                let mut names = Vec::new();
                // The physical files holding each original's reports: a copy is its own file, every
                // symbolic link is the original itself.
                let mut files: Vec<Vec<String>> = vec![Vec::new(); originals.len()];
                let (mut corrupt, mut named_unread) = (false, false);
                for (k, &(kind, which, bit)) in items.iter().enumerate() {
                    let path = here.join(format!("i{k}.arrow"));
                    let original = &originals[which];
                    match kind {
                        0 | 2 => {
                            std::fs::copy(original, &path).unwrap();
                            files[which].push(s(&path));
                        }
                        1 => {
                            std::os::unix::fs::symlink(original, &path).unwrap();
                            files[which].push(s(original));
                        }
                        3 => {
                            let mut bytes = std::fs::read(original).unwrap();
                            let at = (bit as usize / 8) % bytes.len();
                            bytes[at] ^= 1 << (bit % 8);
                            std::fs::write(&path, bytes).unwrap();
                            corrupt = true;
                        }
                        _ => {
                            let path = here.join(format!("i{k}.bak"));
                            std::fs::write(&path, b"not a report").unwrap();
                            if !folder {
                                // Named on the command line, it is read, and refused.
                                names.push(s(&path));
                                named_unread = true;
                            }
                            continue;
                        }
                    }
                    names.push(s(&path));
                }
                for f in &mut files {
                    f.sort_unstable();
                    f.dedup();
                }
                let copies = files.iter().any(|f| f.len() > 1);
                let distinct: Vec<usize> =
                    (0..files.len()).filter(|&i| !files[i].is_empty()).collect();
                let reports = if folder { vec![s(&here)] } else { names };
                let mut args = reports.clone();
                if repeat {
                    args.extend(reports);
                }
                let out = here.join("m.json");
                let o = fit(&args, &out);
                let code = o.status.code();
                let err = common::stderr(&o);
                prop_assert!(matches!(code, Some(0) | Some(2)), "exit {code:?}: {err}");
                if corrupt {
                    // A flipped bit in the structure is refused naming the file; one in the data
                    // reads as another report.
                    if code == Some(2) {
                        prop_assert!(err.contains("case"), "the file is named: {err}");
                    }
                } else if named_unread || copies || distinct.is_empty() {
                    prop_assert_eq!(code, Some(2), "{:?}: {}", items, err);
                } else {
                    prop_assert_eq!(code, Some(0), "{:?}: {}", items, err);
                    // Each distinct original once.
                    let want: Vec<String> = distinct.iter().map(|&i| s(&originals[i])).collect();
                    let reference = here.join("ref.json");
                    ok(&fit(&want, &reference));
                    prop_assert_eq!(eta(&out), eta(&reference));
                }
                outcomes.set({
                    let mut c = outcomes.get();
                    c[usize::from(code == Some(2))] += 1;
                    c
                });
                Ok(())
            },
        )
        .unwrap();
    let [fitted, refused] = outcomes.get();
    eprintln!("report folders: {fitted} fitted, {refused} refused");
    assert!(fitted > 0 && refused > 0, "the cases reach both outcomes");
}

/// The shared ε cap applies to the LDP protocol's partition too (issue: absurd ε values ran past
/// 25 s); the error names the option and nothing is written.
#[test]
fn ldp_partition_refuses_an_absurd_epsilon() {
    let dir = scratch("absurd-epsilon");
    let (public, _) = data(&dir);
    let out = dir.join("tree.json").to_string_lossy().into_owned();
    for eps in ["1e308", "18446744073709551616", "inf", "NaN", "0"] {
        let err = bad(&run(&partition_args(
            &public,
            &out,
            &["--epsilon", eps, "--depth", "3"],
        )));
        assert!(err.contains("epsilon"), "{eps}: {err}");
        assert!(!dir.join("tree.json").exists());
    }
}
