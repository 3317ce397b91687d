//! `dpfair report`: the release report of one model (issue #44; docs/evaluation.md, "The release
//! report"). The HTML and the JSON are written, hold the ledger's total and every release's label,
//! escape hostile names from the model and the data; `--evaluate … --epsilon` adds the private
//! group report and the evaluation's own ledger; without `--epsilon` no evaluation figure appears.

use dpfair::model::ModelFile;
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
