//! `dpfair report`: the release report of one model (issue #44; docs/evaluation.md, "The release
//! report"). The HTML and the JSON are written, hold the ledger's total and every release's label,
//! escape hostile names from the model and the data; `--evaluate … --epsilon` adds the private
//! group report and the evaluation's own ledger; without `--epsilon` no evaluation figure appears.
//! A model of every method `dpfair fit` has gets a report (python/tests/test_report_browser.py
//! renders these in a browser), and each method's summary is the library's, as in `fit --help`.

use dpfair::model::ModelFile;
use dpfair::release_report::method_summary;
use dpfair_privacy::ledger::readable_up;
use std::path::{Path, PathBuf};

mod common;
use common::{arg, bad, dpfair, ok, scratch, write};

/// A hostile feature column name and group name: markup if the report forgot to escape them.
const HOSTILE_COLUMN: &str = "<script>alert(1)</script>";
const HOSTILE_GROUP: &str = "<b>g";

/// 1,200 rows with the hostile column and group; a dp-logistic model of them (sensitive `grp`).
/// Returns (data, model).
fn fitted(dir: &Path) -> (PathBuf, PathBuf) {
    let mut s = format!("x1,{HOSTILE_COLUMN},grp,y\n");
    for i in 0..1200u64 {
        let x1 = (i * 37 % 101) as f64 / 100.0;
        let x2 = (i * 53 % 97) as f64 / 96.0;
        let g = if i % 3 == 0 { HOSTILE_GROUP } else { "a" };
        let y = if x1 + 0.1 * x2 > 0.55 { "yes" } else { "no" };
        s.push_str(&format!("{x1},{x2},{g},{y}\n"));
    }
    let data = write(dir, "data.csv", &s);
    let model = dir.join("model.json");
    ok(&dpfair(&[
        "fit",
        "dp-logistic",
        "--data",
        arg(&data),
        "--target",
        "y",
        "--sensitive",
        "grp",
        "--epsilon",
        "2",
        "--epochs",
        "5",
        "--out",
        arg(&model),
    ]));
    (data, model)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&read(p)).expect("the JSON report parses")
}

/// The HTML escaping the report must apply.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

const EVALUATION_FIGURES: [&str; 5] = [
    "accuracy",
    "selection_rate",
    "true_positive_rate",
    "demographic_parity_difference",
    "equalized_odds",
];

#[test]
fn writes_html_and_json_with_the_ledger_and_escapes_names() {
    let dir = scratch("report", "ledger");
    let (_, model) = fitted(&dir);
    let out = dir.join("report.html");
    ok(&dpfair(&["report", arg(&model), "--out", arg(&out)]));
    let html = read(&out);
    let file = ModelFile::load(&model).unwrap();
    let total = file.ledger.total().unwrap();
    let eps = readable_up(total.epsilon);
    assert!(
        html.contains(&format!(
            "Total: ε = {eps}, δ = {}",
            readable_up(total.delta)
        )),
        "no total ε = {eps} in\n{html}"
    );
    assert!(!file.ledger.entries().is_empty());
    for e in file.ledger.entries() {
        assert!(
            html.contains(&escaped(&e.label)),
            "no release `{}`",
            e.label
        );
    }
    assert!(html.contains(&file.digest) && html.contains("verified"));
    assert!(html.contains("Differentially private logistic regression"));
    // The hostile names are shown, escaped, and never as markup.
    assert!(html.contains(&escaped(HOSTILE_COLUMN)), "{html}");
    assert!(html.contains(&escaped(HOSTILE_GROUP)), "{html}");
    assert!(!html.contains("<script") && !html.contains("<b>"), "{html}");
    // Self-contained: nothing loaded from elsewhere.
    for external in ["http://", "https://", "src=", "<link"] {
        assert!(!html.contains(external), "`{external}` in the page");
    }
    assert!(html.contains("Not evaluated"));
    for name in EVALUATION_FIGURES {
        assert!(!html.contains(name), "`{name}` without an evaluation");
    }

    // The JSON beside it: the same total and releases.
    let j = json(&dir.join("report.json"));
    assert_eq!(j["kind"], "dpfair release report");
    assert_eq!(j["total"]["epsilon"], eps.as_str());
    assert_eq!(j["total"]["certified"], true);
    let labels: Vec<&str> = j["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = file
        .ledger
        .entries()
        .iter()
        .map(|e| e.label.as_str())
        .collect();
    assert_eq!(labels, want);
    assert_eq!(j["schema"]["features"][1]["name"], HOSTILE_COLUMN);
    assert_eq!(j["digest"]["verified"], true);
    assert_eq!(j["evaluation"]["status"], "not-requested");
}

#[test]
fn evaluation_with_epsilon_adds_the_group_report_and_its_release() {
    let dir = scratch("report", "evaluate");
    let (data, model) = fitted(&dir);
    let (out, js) = (dir.join("r.html"), dir.join("machine.json"));
    ok(&dpfair(&[
        "report",
        arg(&model),
        "--evaluate",
        arg(&data),
        "--epsilon",
        "0.5",
        "--level",
        "0.9",
        "--out",
        arg(&out),
        "--json",
        arg(&js),
    ]));
    let html = read(&out);
    for name in EVALUATION_FIGURES {
        assert!(html.contains(name), "no `{name}` in\n{html}");
    }
    assert!(html.contains(&format!("<td>{}</td>", escaped(HOSTILE_GROUP))));
    assert!(html.contains("<td>overall</td>") && html.contains("90% interval"));
    let at = html
        .find("The evaluation's release")
        .expect("the evaluation's ledger section");
    let section = &html[at..];
    assert!(section.contains("evaluation: group × label × prediction counts"));
    assert!(section.contains("Total: ε = 0.5, δ = 0"), "{section}");

    let j = json(&js);
    let ev = &j["evaluation"];
    assert_eq!(ev["status"], "released");
    assert_eq!(ev["total"]["epsilon"], "0.5");
    assert_eq!(ev["releases"].as_array().unwrap().len(), 1);
    let groups: Vec<&str> = ev["report"]["by_group"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["group"].as_str().unwrap())
        .collect();
    assert_eq!(groups, [HOSTILE_GROUP, "a"]);
    // The fit's ledger is unchanged by the evaluation: it has its own.
    let file = ModelFile::load(&model).unwrap();
    assert_eq!(
        j["releases"].as_array().unwrap().len(),
        file.ledger.entries().len()
    );
}

#[test]
fn without_epsilon_the_evaluation_rows_give_no_figure() {
    let dir = scratch("report", "no_epsilon");
    let (data, model) = fitted(&dir);
    let out = dir.join("r.html");
    ok(&dpfair(&[
        "report",
        arg(&model),
        "--evaluate",
        arg(&data),
        "--out",
        arg(&out),
    ]));
    let html = read(&out);
    assert!(
        html.contains("an evaluation needs <code>--epsilon E</code>"),
        "{html}"
    );
    for name in EVALUATION_FIGURES
        .iter()
        .chain(&["The evaluation's release"])
    {
        assert!(!html.contains(name), "`{name}` without --epsilon");
    }
    let j = json(&dir.join("r.json"));
    assert_eq!(j["evaluation"]["status"], "needs-epsilon");
    assert!(j["evaluation"].get("report").is_none());
}

#[test]
fn seeded_evaluation_noise_is_marked_not_private() {
    let dir = scratch("report", "seeded");
    let (data, model) = fitted(&dir);
    let out = dir.join("r.html");
    ok(&dpfair(&[
        "report",
        arg(&model),
        "--evaluate",
        arg(&data),
        "--epsilon",
        "1",
        "--insecure-seeded-noise",
        "3",
        "--out",
        arg(&out),
    ]));
    let html = read(&out);
    assert!(
        html.contains("class=\"warn\">guarantee: NONE: NOT PRIVATE"),
        "{html}"
    );
    assert_eq!(
        json(&dir.join("r.json"))["evaluation"]["total"]["certified"],
        false
    );
}

#[test]
fn bad_flags_are_named() {
    let dir = scratch("report", "bad");
    let (data, model) = fitted(&dir);
    let out = dir.join("r.html");
    let run = |extra: &[&str]| {
        let mut a = vec!["report", arg(&model), "--out", arg(&out)];
        a.extend(extra);
        dpfair(&a)
    };
    let e = bad(&run(&["--evaluate", arg(&data), "--epsilon", "0"]));
    assert!(e.contains("--epsilon 0"), "{e}");
    let e = bad(&run(&[
        "--evaluate",
        arg(&data),
        "--epsilon",
        "1",
        "--level",
        "2",
    ]));
    assert!(e.contains("--level 2"), "{e}");
    let e = bad(&run(&["--evaluate", arg(&data), "--target", "x1"]));
    assert!(e.contains("--target x1") && e.contains("`y`"), "{e}");
    // --epsilon only means something with --evaluate (clap refuses it, exit 2).
    let e = bad(&run(&["--epsilon", "1"]));
    assert!(e.contains("--evaluate"), "{e}");
    let e = bad(&run(&["--json", arg(&model)]));
    assert!(e.contains("--json"), "{e}");
    assert!(!out.exists(), "a refused run wrote the report");
}

#[test]
fn help_teaches_the_privacy_of_the_evaluation() {
    let text = ok(&dpfair(&["report", "--help"]));
    for want in [
        "--evaluate",
        "--epsilon",
        "self-contained",
        "charged",
        "Examples:",
    ] {
        assert!(text.contains(want), "no `{want}` in\n{text}");
    }
}

#[test]
fn held_out_check_and_the_fits_fairness_estimate_are_reported() {
    let dir = scratch("report", "estimate");
    let (data, _) = fitted(&dir);
    let model = dir.join("decoupled.json");
    ok(&dpfair(&[
        "fit",
        "decoupled",
        "--data",
        arg(&data),
        "--target",
        "y",
        "--sensitive",
        "grp",
        "--epsilon",
        "2",
        // Seeded (the report is the subject, not the noise): with OS noise the held-out check
        // may replace the model by a constant, which has no fairness estimate to report (0 of
        // 400 fits measured, but no bound below 10⁻⁶ for it).
        "--insecure-seeded-noise",
        "1",
        "--out",
        arg(&model),
    ]));
    let out = dir.join("r.html");
    ok(&dpfair(&["report", arg(&model), "--out", arg(&out)]));
    let (html, j) = (read(&out), json(&dir.join("r.json")));
    let file = ModelFile::load(&model).unwrap();
    let estimate = file
        .fairness_estimate()
        .expect("the decoupled classifier releases one");
    assert_eq!(j["fairness_estimate"]["measure"], estimate.measure.as_str());
    assert_eq!(j["fairness_estimate"]["met"], estimate.met);
    assert!(
        html.contains(&format!(
            "{} = {:.4} against the target {:.4}",
            escaped(&estimate.measure),
            estimate.estimate,
            estimate.target
        )),
        "{html}"
    );
    let check = file
        .check
        .as_ref()
        .expect("a held-out check by default")
        .describe(file.schema.class_labels());
    assert_eq!(j["held_out_check"], check.as_str());
    assert!(html.contains(&escaped(&check)));
    assert!(html.contains("Ghoukasian"), "the method's paper");
}

/// The methods `dpfair fit --help` lists.
fn fit_methods() -> Vec<String> {
    let help = ok(&dpfair(&["fit", "--help"]));
    let commands = help
        .split("Commands:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("a Commands section");
    commands
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

#[test]
fn every_fit_methods_summary_is_the_librarys() {
    let methods = fit_methods();
    assert_eq!(methods.len(), 10, "{methods:?}");
    for m in &methods {
        let help = ok(&dpfair(&["fit", m, "--help"]));
        let first: Vec<&str> = help.lines().take_while(|l| !l.is_empty()).collect();
        let summary = method_summary(m).unwrap_or_else(|| panic!("no library summary for {m}"));
        assert_eq!(first.join(" "), summary, "{m}");
    }
}

/// The private report each method's model gets (`kind` in the JSON): the binary classifiers the
/// group report, DP2DP the multi-class one (on a binary target too), the regressors MSE and KS.
/// LPCT's models have no sensitive attribute: their groups are declared with `--sensitive
/// --groups`.
fn report_kind(method: &str) -> &'static str {
    match method {
        "dp2dp" => "multiclass",
        "dp-linear" | "fair-regression" => "regression",
        _ => "groups",
    }
}

/// A model of `method` in `dir`, fitted on 2,000 rows of `x1,x2,grp,y,r` (groups `a`, `b`;
/// binary `y`, real `r`); LPCT's public rows are the first 600. Returns (the rows, the model).
fn model_of(dir: &Path, method: &str) -> (PathBuf, PathBuf) {
    let mut rows = String::from("x1,x2,grp,y,r\n");
    for i in 0..2000u64 {
        let x1 = (i * 37 % 101) as f64 / 100.0;
        let x2 = (i * 53 % 97) as f64 / 96.0;
        let g = if i % 3 == 0 { "b" } else { "a" };
        let y = if x1 + 0.1 * x2 > 0.55 { "yes" } else { "no" };
        let r = 2.0 * x1 - x2 + if g == "b" { 0.5 } else { 0.0 };
        rows.push_str(&format!("{x1},{x2},{g},{y},{r:.4}\n"));
    }
    let data = write(dir, "rows.csv", &rows);
    let lines: Vec<&str> = rows.lines().collect();
    let public = write(dir, "public.csv", &(lines[..601].join("\n") + "\n"));
    let private = write(
        dir,
        "private.csv",
        &(std::iter::once(lines[0])
            .chain(lines[601..].iter().copied())
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"),
    );
    let model = dir.join(format!("{method}.model.json"));
    let mut args = vec!["fit", method, "--epsilon", "2", "--out", arg(&model)];
    match method {
        "lpct" | "lpct-prune" => {
            args.extend(["--public", arg(&public), "--private", arg(&private)]);
            args.extend(["--target", "y"]);
        }
        "dp-linear" | "fair-regression" => {
            args.extend(["--data", arg(&data), "--target", "r", "--sensitive", "grp"]);
            args.extend(if method == "dp-linear" {
                ["--features", "x1,x2", "--target-range", "-1,3"]
            } else {
                ["--base", "dp-linear", "--range", "-1,3"]
            });
        }
        _ => args.extend(["--data", arg(&data), "--target", "y", "--sensitive", "grp"]),
    }
    ok(&dpfair(&args));
    (data, model)
}

/// "value [lower, upper]" of a JSON figure at three decimals, as the HTML shows it.
fn shown(f: &serde_json::Value) -> String {
    let num = |v: &serde_json::Value| v.as_f64().unwrap_or_else(|| panic!("a number: {v}"));
    let value = f["value"]
        .as_f64()
        .map_or("n/a".to_string(), |v| format!("{v:.3}"));
    format!("{value} [{:.3}, {:.3}]", num(&f["lower"]), num(&f["upper"]))
}

#[test]
fn every_method_gets_a_report_with_a_private_evaluation() {
    let methods = fit_methods();
    for method in &methods {
        let dir = scratch("report", &format!("method-{method}"));
        let (data, model) = model_of(&dir, method);
        let out = dir.join("report.html");
        let mut args = vec!["report", arg(&model), "--out", arg(&out)];
        args.extend(["--evaluate", arg(&data), "--epsilon", "1"]);
        let lpct = method.starts_with("lpct");
        if lpct {
            // No sensitive attribute: refused, naming the two flags, until the groups are declared.
            let e = bad(&dpfair(&args));
            assert!(e.contains("--sensitive COL --groups"), "{method}: {e}");
            assert!(!out.exists(), "{method}: a refused run wrote the report");
            args.extend(["--sensitive", "grp", "--groups", "a,b"]);
        }
        ok(&dpfair(&args));
        let html = read(&out);
        let file = ModelFile::load(&model).unwrap();
        for want in [
            "<h2>Method</h2>",
            "<h2>Public schema</h2>",
            "<h2>The fit's releases (privacy ledger)</h2>",
            "<h2>Model file</h2>",
            "<h2>Private evaluation</h2>",
            "<h2>The evaluation's release</h2>",
            "<svg class=\"plot\"",
            file.digest.as_str(),
        ] {
            assert!(html.contains(want), "{method}: no `{want}`");
        }
        let summary = method_summary(method).unwrap();
        assert!(html.contains(&escaped(summary)), "{method}: no summary");
        for e in file.ledger.entries() {
            assert!(html.contains(&escaped(&e.label)), "{method}: `{}`", e.label);
        }
        for external in ["http://", "https://", "<script", "src="] {
            assert!(
                !html.contains(external),
                "{method}: `{external}` in the page"
            );
        }
        // The JSON holds the same report, and the HTML its figures.
        let j = json(&dir.join("report.json"));
        assert_eq!(j["digest"]["value"], file.digest.as_str());
        let ev = &j["evaluation"];
        assert_eq!(ev["status"], "released", "{method}");
        assert_eq!(ev["total"]["epsilon"], "1", "{method}");
        let r = &ev["report"];
        let kind = report_kind(method);
        assert_eq!(r["kind"], kind, "{method}");
        let (figures, entries) = match kind {
            "groups" => (
                vec![
                    &r["overall"]["accuracy"],
                    &r["by_group"][1]["selection_rate"],
                    &r["disparities"]["demographic_parity_difference"],
                ],
                1,
            ),
            "multiclass" => (
                vec![
                    &r["accuracy"],
                    &r["unfairness"],
                    &r["by_group"][0]["selection_rates"][1],
                ],
                1,
            ),
            _ => (vec![&r["squared_errors"]["mse"], &r["ks"]], 2),
        };
        for f in figures {
            assert!(html.contains(&shown(f)), "{method}: no `{}`", shown(f));
        }
        assert_eq!(
            ev["releases"].as_array().unwrap().len(),
            entries,
            "{method}"
        );
        let groups: Vec<&str> = r["by_group"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["group"].as_str().unwrap())
            .collect();
        assert_eq!(groups, ["a", "b"], "{method}");
        assert!(
            html.contains("<td>a</td>") && html.contains("<td>b</td>"),
            "{method}"
        );
    }
}

#[test]
fn a_regressor_without_its_own_range_and_a_declared_range_are_named() {
    let dir = scratch("report", "range");
    let (data, model) = model_of(&dir, "dp-linear");
    let out = dir.join("r.html");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "report",
            arg(&model),
            "--out",
            arg(&out),
            "--evaluate",
            arg(&data),
        ];
        a.extend(["--epsilon", "1"]);
        a.extend(extra);
        dpfair(&a)
    };
    // dp-linear carries the range it clipped to (-1:3): another one is refused, naming both.
    let e = bad(&run(&["--target-range", "0:1"]));
    assert!(
        e.contains("--target-range 0:1") && e.contains("[-1, 3]"),
        "{e}"
    );
    ok(&run(&["--target-range", "-1:3"]));
    // Replace-one only: the MSE divides by the number of rows.
    let e = bad(&run(&["--add-remove"]));
    assert!(e.contains("--add-remove"), "{e}");
    // A model with its own groups refuses declared ones.
    let e = bad(&run(&["--sensitive", "grp", "--groups", "a,b"]));
    assert!(e.contains("--groups") && e.contains("`grp`"), "{e}");
}

#[test]
fn an_audit_of_the_models_method_is_shown_and_another_refused() {
    let dir = scratch("report", "audit");
    let (_, model) = model_of(&dir, "lpct");
    let audit = write(
        &dir,
        "audit.json",
        &ok(&dpfair(&["audit", "lpct", "--quick", "--json"])),
    );
    let out = dir.join("r.html");
    ok(&dpfair(&[
        "report",
        arg(&model),
        "--audit",
        arg(&audit),
        "--out",
        arg(&out),
    ]));
    let (html, j) = (read(&out), json(&dir.join("r.json")));
    let findings: Vec<serde_json::Value> = serde_json::from_str(&read(&audit)).unwrap();
    let a = &j["audit"];
    assert_eq!(a["method"], "lpct");
    assert_eq!(
        (a["size"].as_str(), a["seed"].as_u64()),
        (Some("quick"), Some(1))
    );
    assert_eq!(a["findings"].as_array().unwrap().len(), findings.len());
    assert!(html.contains("<h2>Privacy audit of the method (on generated neighbours)</h2>"));
    assert!(html.contains("not on this model's data"), "{html}");
    for (f, shown) in findings.iter().zip(a["findings"].as_array().unwrap()) {
        assert_eq!(f["epsilon_lower"], shown["epsilon_lower"]);
        assert_eq!(f["confidence"], shown["confidence"]);
        let printed = dpfair_privacy::ledger::readable(f["epsilon_lower"].as_f64().unwrap());
        assert!(html.contains(&printed), "no ε_lower {printed}");
        assert!(html.contains(&escaped(f["audit"].as_str().unwrap())));
    }
    // Another method's audit is refused, naming both; so is a file that is not an audit.
    let (_, logistic) = fitted(&dir);
    let e = bad(&dpfair(&[
        "report",
        arg(&logistic),
        "--audit",
        arg(&audit),
        "--out",
        arg(&dir.join("x.html")),
    ]));
    assert!(
        e.contains("--audit") && e.contains("`lpct`") && e.contains("`dp-logistic`"),
        "{e}"
    );
    let e = bad(&dpfair(&[
        "report",
        arg(&logistic),
        "--audit",
        arg(&logistic),
        "--out",
        arg(&dir.join("x.html")),
    ]));
    assert!(e.contains("not the output of `dpfair audit"), "{e}");
    assert!(!dir.join("x.html").exists());
}
