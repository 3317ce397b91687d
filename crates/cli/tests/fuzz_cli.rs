//! Fuzzing the command line, three input surfaces:
//!
//! * **options**: every `fit` method on a small file with one or two numeric options replaced by a
//!   hostile value (0, −1, 10⁻³⁰⁰, 10³⁰⁰, NaN, ∞, 2⁶⁴, …), run through the binary;
//! * **LDP reports**: `dpfair ldp fit` on a REPORTS.csv with hostile rows;
//! * **model files**: a real cdp-fair, dp-logistic or fair-regression model file edited by [`dpfair::data::fuzz`], read and used to predict
//!   in process.
//!
//! Every run must end with exit 0, 1 or 2, without a panic or a signal (an abort is exit 134 or
//! SIGABRT), within [`RUN_LIMIT`]. Cases per `cargo test`: 300 option runs, 200 report runs, 2,000
//! model files; `DPFAIR_FUZZ_SCALE=N` runs N times more.

mod common;
use common::{arg, command, design_csv, ok, scratch};
use dpfair::data::fuzz::{mutate_bytes, mutate_json};
use dpfair::model::ModelFile;
use dpfair::privacy::Noise;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest one fuzzed run may take (a run past it is a hang: the test fails).
const RUN_LIMIT: Duration = Duration::from_secs(120);

fn cases(base: u32) -> u32 {
    let scale: u32 = std::env::var("DPFAIR_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    base.saturating_mul(scale.max(1))
}

fn runner(base: u32) -> TestRunner {
    TestRunner::new(Config {
        cases: cases(base),
        failure_persistence: None,
        // A failing run of the binary can take RUN_LIMIT; report it as found, unshrunk.
        max_shrink_iters: 0,
        ..Config::default()
    })
}

/// Run the binary with a time limit; `Err` describes a panic, a signal, a hang or an exit code
/// other than 0, 1, 2.
fn run_checked(args: &[String]) -> Result<i32, String> {
    let mut child = command()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("hang: still running after {RUN_LIMIT:?}: {args:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut err = String::new();
    use std::io::Read;
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    match status.code() {
        Some(c @ 0..=2) if !err.contains("panicked") => Ok(c),
        Some(c) => Err(format!("exit {c}: {args:?}\n{err}")),
        None => Err(format!("killed by a signal ({status}): {args:?}\n{err}")),
    }
}

/// 120 rows `x1,x2,a,y` of the Xue & Yu design (small, so fuzzed fits are fast).
fn small_csv(dir: &Path) -> PathBuf {
    design_csv(dir, "small.csv", 120, 3)
}

const HOSTILE: [&str; 16] = [
    "0",
    "-1",
    "1e-300",
    "1e300",
    "NaN",
    "inf",
    "-inf",
    "18446744073709551616",
    "4294967297",
    "1000000001",
    "0.999999",
    "",
    "abc",
    "3",
    "1",
    "0.5",
];

/// A method, its valid arguments, and the numeric options to attack.
fn templates(data: &str, out: &str) -> Vec<(Vec<String>, Vec<&'static str>)> {
    let common = |method: &str, extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = ["fit", method, "--data", data, "--out", out]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let labelled = ["--target", "y", "--sensitive", "a", "--epsilon", "2"];
    let bounded = [
        "--target",
        "y",
        "--sensitive",
        "a",
        "--epsilon",
        "2",
        "--bounds",
        "x1:0:1,x2:0:1",
    ];
    vec![
        (
            common("cdp-fair", &bounded),
            vec![
                "--alpha",
                "--epsilon",
                "--delta",
                "--bandwidth",
                "--frequencies",
                "--tau-grid",
                "--min-group",
            ],
        ),
        (
            common("fdp-fair", &bounded),
            vec![
                "--sites",
                "--epsilon",
                "--alpha",
                "--frequencies",
                "--depth",
            ],
        ),
        (
            common("decoupled", &[&labelled[..], &["--epochs", "1"]].concat()),
            vec![
                "--epsilon",
                "--delta",
                "--post-fraction",
                "--batch",
                "--learning-rate",
                "--clip",
                "--noise-multiplier",
                "--epochs",
            ],
        ),
        (
            common("dp2dp", &[&labelled[..], &["--iterations", "20"]].concat()),
            vec![
                "--rho",
                "--pool-fraction",
                "--iterations",
                "--batch",
                "--beta",
                "--epsilon",
                "--delta",
            ],
        ),
        (
            common(
                "dp-logistic",
                &["--target", "y", "--epsilon", "2", "--epochs", "1"],
            ),
            vec![
                "--epochs",
                "--batch",
                "--learning-rate",
                "--clip",
                "--epsilon",
                "--delta",
            ],
        ),
        (
            common(
                "fair-regression",
                &[
                    "--scores",
                    "x1",
                    "--sensitive",
                    "a",
                    "--epsilon",
                    "1",
                    "--range",
                    "0,1",
                ],
            ),
            vec!["--alpha", "--epsilon", "--bins"],
        ),
    ]
}

#[test]
fn fuzz_cli_options_never_panic_abort_or_hang() {
    let dir = scratch("fuzz", "options");
    let data = small_csv(&dir);
    let out = dir.join("m.json");
    let templates = templates(arg(&data), arg(&out));
    let n = templates.len();
    let strategy = (0..n, prop::collection::vec((0usize..16, 0usize..16), 1..3));
    let exits = std::cell::Cell::new([0u32; 3]);
    runner(300)
        .run(&strategy, |(t, edits)| {
            let (base, targets) = &templates[t];
            let mut args = base.clone();
            for (opt, val) in edits {
                let name = targets[opt % targets.len()];
                match args.iter().position(|a| a == name) {
                    Some(i) => args[i + 1] = HOSTILE[val].to_string(),
                    None => args.extend([name.to_string(), HOSTILE[val].to_string()]),
                }
            }
            match run_checked(&args) {
                Ok(code) => {
                    let mut e = exits.get();
                    e[code as usize] += 1;
                    exits.set(e);
                }
                Err(e) => return Err(TestCaseError::fail(e)),
            }
            Ok(())
        })
        .unwrap();
    let exits = exits.get();
    eprintln!(
        "fuzz_cli options: {} runs, exit 0/1/2: {exits:?}",
        cases(300)
    );
    assert!(exits[2] > 0, "no hostile option was refused: {exits:?}");
}

#[test]
fn fuzz_ldp_reports_never_panic_abort_or_hang() {
    let dir = scratch("fuzz", "ldp");
    let data = small_csv(&dir);
    let tree = dir.join("tree.json");
    ok(&common::dpfair(&[
        "ldp",
        "partition",
        "--public",
        arg(&data),
        "--target",
        "y",
        "--depth",
        "2",
        "--epsilon",
        "1",
        "--out",
        arg(&tree),
    ]));
    let reports = dir.join("reports.csv");
    ok(&common::dpfair(&[
        "ldp",
        "privatize",
        "--partition",
        arg(&tree),
        "--data",
        arg(&data),
        "--out",
        arg(&reports),
    ]));
    let honest = std::fs::read_to_string(&reports).unwrap();
    let lines: Vec<&str> = honest.lines().collect();
    let width = lines[0].split(',').count();
    let fuzzed = dir.join("fuzzed.csv");
    let model = dir.join("m.json");
    let field = prop_oneof![
        4 => (0usize..HOSTILE.len()).prop_map(|i| HOSTILE[i].to_string()),
        1 => "[0-9eE.,+\\-\"]{0,10}",
    ];
    let exits = std::cell::Cell::new([0u32; 3]);
    runner(200)
        .run(
            &(
                1usize..lines.len(),
                prop::collection::vec((0..width + 2, field), 1..4),
                0usize..3,
            ),
            |(row, edits, shape)| {
                let mut text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                let mut cells: Vec<String> = text[row].split(',').map(String::from).collect();
                for (col, value) in edits {
                    if col < cells.len() {
                        cells[col] = value;
                    } else {
                        cells.push(value);
                    }
                }
                match shape {
                    0 => text[row] = cells.join(","),
                    1 => text.push(cells.join(",")),
                    _ => text.truncate(row),
                }
                std::fs::write(&fuzzed, text.join("\n") + "\n").unwrap();
                let args: Vec<String> = [
                    "ldp",
                    "fit",
                    "--partition",
                    arg(&tree),
                    "--reports",
                    arg(&fuzzed),
                    "--out",
                    arg(&model),
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                match run_checked(&args) {
                    Ok(code) => {
                        let mut e = exits.get();
                        e[code as usize] += 1;
                        exits.set(e);
                    }
                    Err(e) => return Err(TestCaseError::fail(e)),
                }
                Ok(())
            },
        )
        .unwrap();
    let exits = exits.get();
    eprintln!(
        "fuzz_cli LDP reports: {} runs, exit 0/1/2: {exits:?}",
        cases(200)
    );
    assert!(exits[2] > 0, "no hostile report was refused: {exits:?}");
}

#[test]
fn fuzz_model_files_never_panic_when_read_or_used() {
    let dir = scratch("fuzz", "models");
    let data = small_csv(&dir);
    // Real model files of several methods.
    let mut models = Vec::new();
    for (method, extra) in [
        (
            "cdp-fair",
            vec![
                "--bounds",
                "x1:0:1,x2:0:1",
                "--sensitive",
                "a",
                "--frequencies",
                "8",
            ],
        ),
        (
            "dp-logistic",
            vec!["--bounds", "x1:0:1,x2:0:1", "--epochs", "1"],
        ),
        (
            "fair-regression",
            vec!["--scores", "x1", "--sensitive", "a", "--range", "0,1"],
        ),
    ] {
        let out = dir.join(format!("{method}.json"));
        let mut args = vec![
            "fit",
            method,
            "--data",
            arg(&data),
            "--target",
            "y",
            "--epsilon",
            "2",
            "--out",
            arg(&out),
        ];
        args.extend(extra);
        ok(&common::dpfair(&args));
        models.push(std::fs::read_to_string(&out).unwrap());
    }
    let table = dpfair::data::load_csv(
        &data,
        &dpfair::data::LoadOptions {
            target: Some("y".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let n_models = models.len();
    let loaded = std::cell::Cell::new(0u32);
    runner(2_000)
        .run(
            &(0..n_models, any::<u64>(), 1usize..4, any::<bool>()),
            |(m, seed, edits, raw)| {
                let text = if raw {
                    let mut bytes = models[m].clone().into_bytes();
                    mutate_bytes(&mut bytes, seed);
                    String::from_utf8_lossy(&bytes).into_owned()
                } else {
                    let mut v: serde_json::Value = serde_json::from_str(&models[m]).unwrap();
                    mutate_json(&mut v, seed, edits);
                    v.to_string()
                };
                let Ok(file) = ModelFile::from_json(&text, "fuzzed.json") else {
                    return Ok(());
                };
                loaded.set(loaded.get() + 1);
                let options = dpfair::data::ApplyOptions::default();
                if let Ok(l) = file.schema.load(&data, &options) {
                    let _ = file.predict(&l.dataset, &mut Noise::seeded(seed));
                }
                let _ = file.predict(&table.dataset, &mut Noise::seeded(seed));
                Ok(())
            },
        )
        .unwrap();
    let loaded = loaded.get();
    eprintln!(
        "fuzz_cli model files: {} cases, {loaded} read back",
        cases(2_000)
    );
    assert!(loaded > 0, "no edited model file was ever read");
}

/// Version and digest edits (issue: one character, `"version": 2` → `1` with the stale digest
/// kept, skipped the integrity check): a file is read verified only when its version, digest
/// and content are as written; read unverified only as a version-1 file without a digest; every
/// other combination is refused.
#[test]
fn fuzz_model_file_versions_and_digests_cannot_be_downgraded() {
    let dir = scratch("fuzz", "versions");
    let data = small_csv(&dir);
    let out = dir.join("m.json");
    ok(&common::dpfair(&[
        "fit",
        "dp-logistic",
        "--data",
        arg(&data),
        "--target",
        "y",
        "--bounds",
        "x1:0:1,x2:0:1",
        "--epochs",
        "1",
        "--epsilon",
        "2",
        "--out",
        arg(&out),
    ]));
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let counts = std::cell::Cell::new((0u32, 0u32, 0u32));
    let count = |k: usize| {
        let mut c = counts.get();
        match k {
            0 => c.0 += 1,
            1 => c.1 += 1,
            _ => c.2 += 1,
        }
        counts.set(c);
    };
    let check =
        |(version, digest, edit, seed): (u64, usize, usize, u64)| -> Result<(), TestCaseError> {
            let mut v = original.clone();
            v["version"] = [0u64, 1, 2, 3, 99][version as usize].into();
            match digest {
                0 => {}
                1 => {
                    v.as_object_mut().unwrap().remove("digest");
                }
                _ => v["digest"] = format!("sha256:{seed:064x}").into(),
            }
            match edit {
                0 => {}
                1 => v["ledger"]["budget"]["epsilon"] = (1e-3 * (seed % 7 + 1) as f64).into(),
                _ => mutate_json(&mut v, seed, 1),
            }
            let text = v.to_string();
            match ModelFile::from_json(&text, "edited.json") {
                Err(_) => count(2),
                Ok(file) if file.is_verified() => {
                    count(0);
                    // Verified: the body is the one dpfair wrote.
                    prop_assert_eq!(version, 2);
                    prop_assert_eq!(file.digest.as_str(), original["digest"].as_str().unwrap());
                    prop_assert_eq!(file.body_digest().unwrap(), file.digest.clone());
                }
                Ok(_) => {
                    count(1);
                    // Unverified: only a version-1 claim without a digest (removed here, or
                    // emptied by the random edit).
                    prop_assert_eq!(version, 1);
                    let digest_left = v.get("digest").and_then(|d| d.as_str());
                    prop_assert!(digest_left.is_none_or(str::is_empty), "digest {digest}");
                }
            }
            Ok(())
        };
    // The unedited file (version 2, its digest, no edit) once for certain: drawn at random it
    // is 1 case in 45, and 500 cases missed it with probability (44/45)^500 ≈ 1.3e-5.
    check((2, 0, 0, 0)).unwrap();
    runner(500)
        .run(&(0u64..5, 0usize..3, 0usize..3, any::<u64>()), check)
        .unwrap();
    let (verified, unverified, refused) = counts.get();
    eprintln!("versions: {verified} verified, {unverified} unverified, {refused} refused");
    assert!(
        verified > 0 && unverified > 0 && refused > 0,
        "the cases reach every outcome"
    );
}
