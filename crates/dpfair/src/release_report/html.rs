//! The release report as one self-contained HTML page ([`super::ReleaseReport::to_html`]):
//! inline CSS (with print rules), no script, no external resource. Every string that comes from
//! the model or the data (column names, group names, class labels, release labels) goes through
//! [`escape`]. `dpfair report` and Python's `Model.report` both write this page.

use super::plot::{axis_end, panel};
use super::{AuditSection, Evaluation, EvaluationReport, LedgerTotal, Release, ReleaseReport};
use dpfair_fairness::private_report::Rate;
use dpfair_fairness::private_scores::{MulticlassReport, RegressionReport};
use dpfair_fairness::{Figure, PrivateGroupReport};
use dpfair_privacy::ledger::{readable, readable_up};
use std::fmt::Write;

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:60rem;margin:2rem auto;\
padding:0 1rem;color:#111;line-height:1.45}\
h1{font-size:1.6rem}h2{font-size:1.25rem;border-bottom:1px solid #ccc;margin-top:2rem}\
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}\
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}\
code{font-family:ui-monospace,monospace;word-break:break-all}\
.warn{background:#fde8e8;border:1px solid #c00;padding:.5rem}\
.note{color:#444}\
svg.plot{display:block;max-width:100%;height:auto;margin:.5rem 0;font-family:inherit}\
@media print{body{margin:0;max-width:none}h2{break-after:avoid}table,tr,svg{break-inside:avoid}}";

/// HTML-escapes `s` for text and attribute values.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page.
pub(super) fn render(r: &ReleaseReport) -> String {
    let mut h = String::new();
    let title = format!("dpfair release report: {}", escape(&r.method.name));
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    let eval_total = match &r.evaluation {
        Evaluation::Released { total, .. } => Some(total),
        _ => None,
    };
    for t in std::iter::once(&r.total).chain(eval_total) {
        if !t.certified {
            let _ = writeln!(h, "<p class=\"warn\">{}</p>", escape(&t.guarantee));
        }
    }
    method(&mut h, r);
    schema(&mut h, r);
    h.push_str("<h2>The fit's releases (privacy ledger)</h2>\n");
    ledger(&mut h, &r.releases, &r.total);
    integrity(&mut h, r);
    evaluation(&mut h, &r.evaluation);
    if let Some(a) = &r.audit {
        audit(&mut h, a);
    }
    h.push_str("</body>\n</html>\n");
    h
}

fn method(h: &mut String, r: &ReleaseReport) {
    let m = &r.method;
    let _ = writeln!(
        h,
        "<h2>Method</h2>\n<p><code>{}</code>: {}</p>\n<p class=\"note\">Written by {}. Which \
         method when, and each method's paper: docs/choosing.md.</p>",
        escape(&m.name),
        escape(
            m.description
                .as_deref()
                .unwrap_or("(not a `dpfair fit` method)")
        ),
        escape(&m.created_by)
    );
}

fn schema(h: &mut String, r: &ReleaseReport) {
    let s = &r.schema;
    h.push_str(
        "<h2>Public schema</h2>\n<p class=\"note\">Part of the model and public (declared, or \
         listed at no privacy cost; see <code>dpfair ledger</code>).</p>\n",
    );
    if let Some(t) = &s.target {
        let classes = if t.classes.is_empty() {
            "real-valued".to_string()
        } else {
            list(&t.classes)
        };
        let _ = writeln!(
            h,
            "<p>Target <code>{}</code> ({}): {classes}</p>",
            escape(&t.name),
            escape(&t.task)
        );
    }
    match &s.sensitive {
        Some(g) => {
            let _ = writeln!(
                h,
                "<p>Sensitive attribute <code>{}</code>, groups ({}): {}</p>",
                escape(&g.name),
                if g.declared {
                    "declared"
                } else {
                    "found in the data"
                },
                list(&g.groups)
            );
        }
        None => h.push_str("<p>No sensitive attribute.</p>\n"),
    }
    h.push_str("<table>\n<tr><th>feature column</th><th>levels (categorical)</th></tr>\n");
    for f in &s.features {
        let levels = if f.levels.is_empty() {
            "numeric".to_string()
        } else {
            list(&f.levels)
        };
        let _ = writeln!(
            h,
            "<tr><td><code>{}</code></td><td>{levels}</td></tr>",
            escape(&f.name)
        );
    }
    h.push_str("</table>\n");
}

/// A ledger's releases and total.
fn ledger(h: &mut String, releases: &[Release], total: &LedgerTotal) {
    h.push_str(
        "<table>\n<tr><th>#</th><th>release</th><th>mechanism</th><th>sensitivity</th>\
         <th>scale</th><th>cost</th><th>relation</th><th>composition</th></tr>\n",
    );
    for (i, e) in releases.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            escape(&e.label),
            escape(&e.mechanism),
            escape(&e.sensitivity),
            escape(&e.scale),
            escape(&e.cost),
            escape(&e.relation),
            escape(&e.composition)
        );
    }
    h.push_str("</table>\n");
    match (&total.epsilon, &total.delta) {
        (Some(eps), Some(delta)) => {
            let _ = writeln!(
                h,
                "<p><strong>Total: ε = {}, δ = {}</strong> for {} ({})</p>",
                escape(eps),
                escape(delta),
                escape(&total.relation),
                escape(&total.rule)
            );
        }
        _ => {
            let _ = writeln!(h, "<p><strong>Total:</strong> {}</p>", escape(&total.rule));
        }
    }
    let _ = writeln!(
        h,
        "<p>Noise: {}.</p>\n<p>Certified: {}. {}</p>",
        escape(&total.noise),
        if total.certified { "yes" } else { "NO" },
        escape(&total.guarantee)
    );
}

fn integrity(h: &mut String, r: &ReleaseReport) {
    h.push_str("<h2>Model file</h2>\n");
    if r.digest.verified {
        let _ = writeln!(
            h,
            "<p>Digest <code>{}</code>: verified (it matched the file's content when read).</p>",
            escape(&r.digest.value)
        );
    } else {
        h.push_str(
            "<p class=\"warn\">No digest: a version-1 model file, UNVERIFIED (nothing checks \
             that this ledger is the one the fit wrote).</p>\n",
        );
    }
    match &r.held_out_check {
        Some(c) => {
            let _ = writeln!(h, "<p>{}</p>", escape(c));
        }
        None => h.push_str("<p>Held-out check: none recorded.</p>\n"),
    }
    match &r.fairness_estimate {
        Some(e) => {
            let _ = writeln!(
                h,
                "<p>The fit's own private fairness estimate (from its releases): {} = {:.4} \
                 against the target {:.4}: {}.</p>",
                escape(&e.measure),
                e.estimate,
                e.target,
                if e.met { "met" } else { "NOT met" }
            );
        }
        None => h.push_str(
            "<p>The fit's own fairness estimate: none (this method releases no estimate of its \
             measure).</p>\n",
        ),
    }
}

fn evaluation(h: &mut String, e: &Evaluation) {
    h.push_str("<h2>Private evaluation</h2>\n");
    match e {
        Evaluation::NotRequested => h.push_str(
            "<p>Not evaluated: give evaluation rows and a budget (<code>dpfair report \
             --evaluate DATA --epsilon E</code>; in Python <code>model.report(X=…, y=…, \
             epsilon=E)</code>) for a private report of its predictions with intervals.</p>\n",
        ),
        Evaluation::NeedsEpsilon => h.push_str(
            "<p class=\"warn\">Not evaluated: an evaluation needs <code>--epsilon E</code> \
             (Python: <code>epsilon=E</code>). The evaluation rows are private, so nothing is computed on them except through a \
             charged release; they were not read.</p>\n",
        ),
        Evaluation::Released {
            report,
            releases,
            total,
        } => {
            match report.as_ref() {
                EvaluationReport::Groups(r) => groups(h, r),
                EvaluationReport::Multiclass(r) => multiclass(h, r),
                EvaluationReport::Regression(r) => regression(h, r),
            }
            h.push_str("<h2>The evaluation's release</h2>\n");
            ledger(h, releases, total);
        }
    }
}

/// The first line of a released report: what was released, and the intervals' level.
fn released(h: &mut String, what: &str, level: f64) {
    let _ = writeln!(
        h,
        "<p>{what} Each figure: the point value and its {}% interval (noise and sampling; \
         docs/evaluation.md); the plots draw the same figures.</p>",
        readable(level * 100.0)
    );
}

/// A table of `(name, figure)` rows under the heading `what`.
fn figure_table(h: &mut String, what: &str, rows: &[(String, &Figure)]) {
    let _ = writeln!(
        h,
        "<table>\n<tr><th>{what}</th><th>value [interval]</th></tr>"
    );
    for (name, f) in rows {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td></tr>",
            escape(name),
            f.show(3)
        );
    }
    h.push_str("</table>\n");
}

/// Per group and overall: `(name, figure)` rows of one figure.
fn per_group<'a, R>(
    rows: impl IntoIterator<Item = &'a R>,
    name: impl Fn(&R) -> &str,
    figure: impl Fn(&R) -> Figure,
) -> Vec<(String, Figure)>
where
    R: 'a,
{
    rows.into_iter()
        .map(|r| (name(r).to_string(), figure(r)))
        .collect()
}

/// A binary classifier's private group report.
fn groups(h: &mut String, report: &PrivateGroupReport) {
    released(
        h,
        &format!(
            "One noisy release of the group × label × prediction counts at ε = {} ({}; \
             discrete Laplace scale {}).",
            readable_up(report.epsilon),
            escape(report.relation.describe()),
            readable(report.scale)
        ),
        report.level,
    );
    h.push_str("<table>\n<tr><th>group</th><th>count</th>");
    for r in Rate::ALL {
        let _ = write!(h, "<th>{}</th>", r.name());
    }
    h.push_str("</tr>\n");
    let rows: Vec<_> = report
        .by_group
        .iter()
        .chain(std::iter::once(&report.overall))
        .collect();
    for row in &rows {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td>",
            escape(&row.group),
            row.count.show(0)
        );
        for r in Rate::ALL {
            let _ = write!(h, "<td class=\"num\">{}</td>", row.rates.get(r).show(3));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    let named: Vec<(String, &Figure)> = report
        .disparities
        .named()
        .into_iter()
        .map(|(n, f)| (n.to_string(), f))
        .collect();
    figure_table(h, "disparity", &named);
    for rate in [Rate::Accuracy, Rate::SelectionRate] {
        let figures = per_group(rows.iter().copied(), |r| &r.group, |r| *r.rates.get(rate));
        h.push_str(&panel(rate.name(), &figures, 1.0));
    }
    let dp = &report.disparities.demographic_parity_difference;
    h.push_str(&panel(
        "demographic_parity_difference",
        &[("between groups".into(), *dp)],
        1.0,
    ));
}

/// DP2DP's or a multi-class model's private report.
fn multiclass(h: &mut String, report: &MulticlassReport) {
    released(
        h,
        &format!(
            "One noisy release of the group × label × prediction counts ({} classes: {}) at \
             ε = {} ({}; discrete Laplace scale {}). Selection rate of a class: P(ŷ = class | \
             group). DP2DP's unfairness U: the largest, over classes, spread over groups of \
             that rate (its interval holds every group × class rate at once).",
            report.classes.len(),
            list(&report.classes),
            readable_up(report.epsilon),
            escape(report.relation.describe()),
            readable(report.scale)
        ),
        report.level,
    );
    h.push_str("<table>\n<tr><th>group</th><th>count</th><th>accuracy</th>");
    for c in &report.classes {
        let _ = write!(h, "<th>selection rate of <code>{}</code></th>", escape(c));
    }
    h.push_str("</tr>\n");
    for row in &report.by_group {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            escape(&row.group),
            row.count.show(0),
            row.accuracy.show(3)
        );
        for f in &row.selection_rates {
            let _ = write!(h, "<td class=\"num\">{}</td>", f.show(3));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    figure_table(
        h,
        "figure",
        &[
            ("accuracy (overall)".into(), &report.accuracy),
            ("multiclass_unfairness_u".into(), &report.unfairness),
        ],
    );
    let mut accuracy = per_group(&report.by_group, |r| &r.group, |r| r.accuracy);
    accuracy.push(("overall".into(), report.accuracy));
    h.push_str(&panel("accuracy", &accuracy, 1.0));
    for (c, class) in report.classes.iter().enumerate() {
        let rates = per_group(&report.by_group, |r| &r.group, |r| r.selection_rates[c]);
        h.push_str(&panel(&format!("selection rate of {class}"), &rates, 1.0));
    }
    h.push_str(&panel(
        "multiclass_unfairness_u",
        &[("between groups".into(), report.unfairness)],
        1.0,
    ));
}

/// A regressor's private report.
fn regression(h: &mut String, report: &RegressionReport) {
    let [lo, hi] = report.range;
    let se = &report.squared_errors;
    released(
        h,
        &format!(
            "Two noisy releases at ε = {} in all ({}): the sum of squared errors at ε = {} \
             (Laplace scale {}), and the predictions per group × bin over {} equal bins of the \
             public range [{}, {}] at the rest (discrete Laplace scale {}). Predictions and \
             targets are clipped to the range. KS: the largest gap between two groups' binned \
             distributions of predictions.",
            readable_up(report.epsilon),
            escape(report.relation.describe()),
            readable_up(se.epsilon),
            readable(se.scale),
            report.bins,
            readable(lo),
            readable(hi),
            readable(report.histogram_scale)
        ),
        report.level,
    );
    let counts: Vec<(String, &Figure)> = report
        .by_group
        .iter()
        .map(|r| (r.group.clone(), &r.count))
        .collect();
    figure_table(h, "group: count", &counts);
    figure_table(
        h,
        "figure",
        &[
            ("mean_squared_error".into(), &se.mse),
            ("ks_distance".into(), &report.ks),
        ],
    );
    h.push_str(&panel(
        "mean_squared_error",
        &[("all rows".into(), se.mse)],
        axis_end(&[se.mse]),
    ));
    h.push_str(&panel(
        "ks_distance",
        &[("between groups".into(), report.ks)],
        1.0,
    ));
}

/// The audit of the model's method: its settings, then each finding's bound against its claim.
fn audit(h: &mut String, a: &AuditSection) {
    let _ = writeln!(
        h,
        "<h2>Privacy audit of the method (on generated neighbours)</h2>\n<p class=\"note\">An \
         empirical audit of the method <code>{m}</code> as dpfair ships it (<code>dpfair audit \
         {m} --json</code>; docs/audits.md): its release paths run on generated neighbouring \
         data sets, not on this model's data, and the audit says nothing about this model's \
         rows. ε_lower is a lower bound on the ε a path really spends, valid at the stated \
         confidence; at or below the claimed ε no violation was seen (evidence, not proof). A \
         planted bug is the same path deliberately broken: its ε_lower above the claim shows \
         the audit's power.</p>\n<p>Audit settings: size <code>{}</code>, seed {}{}.</p>",
        escape(&a.size),
        a.seed,
        a.pair.as_ref().map_or(String::new(), |p| format!(
            ", only the pair <code>{}</code>",
            escape(p)
        )),
        m = escape(&a.method),
    );
    h.push_str(
        "<table>\n<tr><th>audited release</th><th>neighbours</th><th>event</th><th>bound</th>\
         <th>claimed ε (δ)</th><th>ε_lower</th><th>confidence</th><th>verdict</th>\
         <th>planted bug: ε_lower</th></tr>\n",
    );
    for f in &a.findings {
        let planted: Vec<String> = f
            .planted
            .iter()
            .map(|p| format!("{}: {}", escape(&p.bug), readable(p.epsilon_lower)))
            .collect();
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{} ({})</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(&f.audit),
            escape(&f.neighbours),
            escape(&f.event),
            escape(&f.bound),
            readable(f.claimed_epsilon),
            readable(f.delta),
            readable(f.epsilon_lower),
            readable(f.confidence),
            if f.passes() {
                "no violation seen"
            } else {
                "VIOLATION (ε_lower above the claim)"
            },
            planted.join("<br>")
        );
    }
    h.push_str("</table>\n");
}

/// Escaped names, comma-separated, each in `<code>`.
fn list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("<code>{}</code>", escape(n)))
        .collect::<Vec<_>>()
        .join(", ")
}
