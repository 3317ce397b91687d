//! report.md: the paper's numbers beside ours, the difference and whether it is within tolerance.

use crate::aggregate::Summary;
use crate::error::{ExpError, Result};
use crate::paper::{DEVIATIONS_PAGE, Paper, Reason, Reference, Scale};
use crate::present;
use crate::verdict::{self, Tally, Verdict};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What the run did, for the report's header.
pub(crate) struct Status {
    pub scale: Scale,
    pub settings: usize,
    /// The grid's repetition count …
    pub repetitions: usize,
    /// … the number of settings with their own count, the range of those counts, and the
    /// largest count of any setting.
    pub overridden: usize,
    pub overridden_range: (usize, usize),
    pub max_repetitions: usize,
    pub seed0: u64,
    pub ran: usize,
    pub resumed: usize,
    pub missing: usize,
    pub failed: Vec<(String, String)>,
}

/// Equal, or both finite and within 1e-9 relative. (A bare relative test would call ε = ∞ close
/// to every finite ε: |a − ∞| = ∞ ≤ 1e-9·∞.)
pub(crate) fn close(a: f64, b: f64) -> bool {
    a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= 1e-9 * a.abs().max(b.abs()))
}

/// The aggregated row a reference is compared with.
pub fn find<'a>(r: &Reference, rows: &'a [Summary]) -> Option<&'a Summary> {
    rows.iter().find(|s| {
        let st = &s.setting;
        st.dataset == r.dataset
            && st.method == r.method
            && s.metric == r.metric
            && close(st.epsilon, r.epsilon)
            && match (r.fairness_level, st.fairness_level) {
                (None, _) => true,
                (Some(a), Some(b)) => close(a, b),
                (Some(_), None) => false,
            }
            && r.params.as_ref().is_none_or(|p| *p == st.params)
            && r.accounting.as_ref().is_none_or(|a| *a == st.accounting)
    })
}

/// The full setting of a row: data set, method, accounting mode, ε, δ, fairness level and
/// parameters, as one table cell.
pub fn setting_text(s: &crate::grid::Setting) -> String {
    let mut out = format!(
        "{} · {} · {} · ε = {}",
        s.dataset,
        s.method,
        s.accounting,
        present::setting(s.epsilon)
    );
    if s.delta > 0.0 {
        let _ = write!(out, " · δ = {}", present::setting(s.delta));
    }
    if let Some(a) = s.fairness_level {
        let _ = write!(out, " · level = {}", present::setting(a));
    }
    let params = s.params.to_string();
    if !params.is_empty() {
        let _ = write!(out, " · {}", params.replace(';', ", "));
    }
    out
}

/// The configuration chosen for `matched`'s setting: its other metrics (the chosen values are
/// the same in every repetition under oracle selection; a value that varies shows its mean and
/// "varies").
fn chosen_text(matched: &Summary, rows: &[Summary]) -> String {
    let values: Vec<String> = rows
        .iter()
        .filter(|s| s.setting == matched.setting && s.metric != matched.metric)
        .map(|s| {
            let varies = if s.std > 0.0 { " (varies)" } else { "" };
            format!("{} = {}{varies}", s.metric, present::setting(s.mean))
        })
        .collect();
    if values.is_empty() {
        String::new()
    } else {
        format!(" · chosen: {}", values.join(", "))
    }
}

/// The setting a reference asks for, when no row matched it.
fn wanted_text(r: &Reference) -> String {
    let mut out = format!(
        "{} · {} · {} · ε = {}",
        r.dataset,
        r.method,
        r.accounting.as_deref().unwrap_or("any mode"),
        present::setting(r.epsilon)
    );
    if let Some(a) = r.fairness_level {
        let _ = write!(out, " · level = {}", present::setting(a));
    }
    if let Some(p) = &r.params {
        let _ = write!(out, " · {}", p.to_string().replace(';', ", "));
    }
    out
}

/// A reason as a table cell: its text and a link to its deviation; "unexplained" without one.
pub fn reason_text(reason: Option<&Reason>) -> String {
    match reason {
        None => "unexplained".into(),
        Some(r) if r.deviation.is_empty() => r.text.clone(),
        Some(r) => format!(
            "{} ([{}]({DEVIATIONS_PAGE}#{}))",
            r.text, r.deviation, r.deviation
        ),
    }
}

/// The reason of a reference miss by `diff = ours − paper`: [`reason_text`], or "unexplained"
/// when the reason explains misses on the other side only.
fn miss_reason(reason: Option<&Reason>, diff: f64) -> String {
    match reason {
        Some(r) if r.below.is_some_and(|below| below != (diff < 0.0)) => format!(
            "unexplained: ours is {} the paper's number, and the known reason \
             ([{}]({DEVIATIONS_PAGE}#{})) moves it the other way",
            if diff < 0.0 { "below" } else { "above" },
            r.deviation,
            r.deviation
        ),
        _ => reason_text(reason),
    }
}

/// The seeds a run used, `seed0` to `seed0 + repetitions − 1` (inclusive).
fn seeds_text(seed0: u64, repetitions: usize) -> String {
    match repetitions {
        0 | 1 => format!("seed {seed0}"),
        n => format!("seeds {seed0}–{}", seed0 + n as u64 - 1),
    }
}

/// One reference row's cells: ours (mean ± half-width), the difference, the tolerance and the
/// verdict, each number at the precision its interval supports ([`present`]).
fn compared_cells(r: &Reference, s: &Summary) -> (String, String, String, Verdict) {
    let d = s.mean - r.value;
    // A stored number (0 repetitions) is exact; otherwise the row's t interval.
    let h = if s.repetitions == 0 { 0.0 } else { s.ci95 };
    let v = verdict::compare(d, h, r.tolerance);
    let tolerance = present::spread(r.tolerance);
    // The difference to the finer of the interval's and the tolerance's decimals.
    let decimals = [
        present::interval_decimals(h),
        present::interval_decimals(r.tolerance),
    ]
    .into_iter()
    .flatten()
    .max();
    let ours = format!("{} (n = {})", present::mean_pm(s.mean, h), s.repetitions);
    (ours, present::signed(d, decimals), tolerance, v)
}

pub(crate) fn write(
    path: &Path,
    paper: &dyn Paper,
    status: &Status,
    rows: &[Summary],
    plots: &[PathBuf],
) -> Result<()> {
    let mut md = String::new();
    let _ = writeln!(md, "# `{}` — {}\n", paper.name(), paper.description());
    let _ = writeln!(
        md,
        "Grid: {} ({} settings × {} repetitions{}, {}). This run computed {} cells; {} \
         were already in raw.csv; {} missing; {} failed.\n",
        match status.scale {
            Scale::Quick => "quick",
            Scale::Full => "full",
        },
        status.settings,
        status.repetitions,
        if status.overridden > 0 {
            let (lo, hi) = status.overridden_range;
            let count = match (lo, hi) {
                (1, 1) => "1 repetition".to_string(),
                _ if lo == hi => format!("{lo} repetitions"),
                _ => format!("{lo} to {hi} repetitions"),
            };
            format!(
                "; {} settings with their own count ({count}); each row's n is its own",
                status.overridden
            )
        } else {
            String::new()
        },
        seeds_text(status.seed0, status.max_repetitions.max(status.repetitions)),
        status.ran,
        status.resumed,
        status.missing,
        status.failed.len()
    );
    if status.scale == Scale::Quick {
        let _ = writeln!(
            md,
            "**Quick run.** Few repetitions per setting: every statistical verdict below that \
             cannot resolve the paper's effect is marked *smoke* (a run-through, not evidence). \
             Run `--full` for evidence.\n"
        );
    }
    let refs = paper.references_at(status.repetitions);
    if refs.is_empty() {
        let _ = writeln!(
            md,
            "## Paper numbers beside ours\n\nNone: the paper prints its results as figures only. \
             The checks and plots below carry the comparison.\n"
        );
    } else {
        let _ = writeln!(md, "## Paper numbers beside ours\n");
        let _ = writeln!(
            md,
            "Each row shows the setting it was compared at (data set · method · accounting mode \
             · ε · δ · fairness level · parameters). A miss gives its reason, linked to the \
             deviation in the dpfair repository's `{DEVIATIONS_PAGE}`, or says \"unexplained\". \
             Sources marked *(not printed)* are numbers measured by running the authors' code or \
             derived, not printed in the paper. *ours* is the mean over the row's n repetitions \
             ± the half-width of its 95 % interval, `t_0.975,n−1·sd/√n` (Student's t), printed \
             to the half-width's two significant digits. *tolerance* is the paper's band or a \
             sampling bound derived from the paper's spread (never from ours). *verdict*: \
             *miss* when even the nearest end of our interval is outside the tolerance; \
             otherwise *underpowered* when our interval is wider than the tolerance (or n = 1); \
             otherwise *within* or *miss* by the mean.\n"
        );
        let _ = writeln!(
            md,
            "| source | setting | metric | paper | ours (mean ± t·se, 95 %) | difference | tolerance | verdict | why |\n|---|---|---|---|---|---|---|---|---|"
        );
        let mut tally = Tally::default();
        for r in &refs {
            let source = if r.printed {
                r.source.clone()
            } else {
                format!("{} *(not printed)*", r.source)
            };
            let (setting, ours, diff, tolerance, verdict, why) = match find(r, rows) {
                Some(s) => {
                    let (ours, diff, tolerance, v) = compared_cells(r, s);
                    tally.add(v);
                    let chosen = if r.chosen_configuration {
                        chosen_text(s, rows)
                    } else {
                        String::new()
                    };
                    let why = match v {
                        Verdict::Miss => miss_reason(r.reason.as_ref(), s.mean - r.value),
                        _ => String::new(),
                    };
                    (
                        setting_text(&s.setting) + &chosen,
                        ours,
                        diff,
                        tolerance,
                        v.reference_label().to_string(),
                        why,
                    )
                }
                None => (
                    wanted_text(r),
                    "not run".into(),
                    "-".into(),
                    present::spread(r.tolerance),
                    "-".into(),
                    String::new(),
                ),
            };
            let _ = writeln!(
                md,
                "| {source} | {setting} | {} | {} | {ours} | {diff} | {tolerance} | {verdict} | {why} |",
                r.metric,
                present::setting(r.value),
            );
        }
        let _ = writeln!(
            md,
            "\n{} within, {} missed, {} underpowered of {} compared numbers ({} references).\n",
            tally.within,
            tally.miss,
            tally.underpowered,
            tally.total(),
            refs.len()
        );
    }
    let checks = paper.checks(rows);
    if !checks.is_empty() {
        let _ = writeln!(
            md,
            "## Checks\n\nA comparison or trend check tests a one-sided claim at level 0.05; \
             *detects* is its minimal detectable effect at power 0.8, \
             `(t_0.95,ν + t_0.80,ν)·SE`, with the SE from the settings' own repetitions (Welch; \
             conservative, since settings share seeds), beside the effect it must resolve \
             (*to resolve*: the paper's effect where it can be read, or the check's own \
             band). *passed*: yes, **no**, or *underpowered* when the check passes (or fails \
             for want of the effect only, with no significant reversal) but its detectable \
             effect is infinite (one repetition) or exceeds the effect to resolve. \
             *evidence*: the check resolves the claim (or, at `--full`, no effect size \
             is known); *underpowered*: the detectable effect exceeds the effect to resolve; \
             *smoke*: a `--quick` verdict that cannot resolve the claim; *exact*: no sampling \
             involved.\n"
        );
        let _ = writeln!(
            md,
            "| check | passed | evidence | detects (n) | detail | why |\n|---|---|---|---|---|---|"
        );
        let mut tally = Tally::default();
        for c in &checks {
            let v = c.verdict();
            tally.add(v);
            let power = match &c.power {
                Some(p) => {
                    let claim = p
                        .claimed_effect
                        .map(|e| format!("; to resolve {}", present::spread(e)))
                        .unwrap_or_default();
                    format!(
                        "≥ {} (n = {}{claim})",
                        present::spread(p.min_effect),
                        p.repetitions
                    )
                }
                None => "-".into(),
            };
            let why = match v {
                Verdict::Miss => reason_text(c.reason.as_ref()),
                _ => String::new(),
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {power} | {} | {why} |",
                c.name,
                v.check_label(),
                c.evidence(status.scale),
                c.detail
            );
        }
        let smoke = checks
            .iter()
            .filter(|c| c.evidence(status.scale) == "smoke")
            .count();
        let _ = writeln!(
            md,
            "\n{} pass, {} fail, {} underpowered of {} checks; {smoke} of the verdicts are smoke.\n",
            tally.within,
            tally.miss,
            tally.underpowered,
            tally.total()
        );
    }
    if !plots.is_empty() {
        let _ = writeln!(md, "## Plots\n");
        for p in plots {
            let f = p
                .file_name()
                .map(|f| f.to_string_lossy())
                .unwrap_or_default();
            let _ = writeln!(md, "![{f}]({f})\n");
        }
    }
    if !status.failed.is_empty() {
        let _ = writeln!(md, "## Failed cells (rerun to retry)\n");
        for (cell, e) in &status.failed {
            let _ = writeln!(md, "- {cell}: {e}");
        }
        let _ = writeln!(md);
    }
    let _ = writeln!(
        md,
        "All aggregated rows are in results.csv; the per-repetition rows in raw.csv."
    );
    dpfair_data::output::write_atomic(path, md.as_bytes()).map_err(|source| ExpError::Io {
        path: path.into(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header's seed range is inclusive and has as many seeds as repetitions.
    #[test]
    fn the_seed_range_counts_the_repetitions() {
        assert_eq!(seeds_text(100, 2), "seeds 100–101");
        assert_eq!(seeds_text(10, 7), "seeds 10–16");
        assert_eq!(seeds_text(5, 1), "seed 5");
    }

    /// A reference row prints the mean to its half-width's precision, the tolerance to two
    /// significant digits (never `0.0000`) and the difference to the finer of the two.
    #[test]
    fn a_reference_row_prints_at_its_intervals_precision() {
        let setting = crate::grid::Setting {
            dataset: "law-bar".into(),
            method: "binning".into(),
            accounting: "none".into(),
            epsilon: f64::INFINITY,
            delta: 0.0,
            fairness_level: None,
            params: crate::grid::Params::new(),
        };
        // Fair regression's binning MSE: sd 4.1e-6 over 5 seeds, t_{0.975,4} = 2.776:
        // half-width 2.776·4.1e-6/√5 = 5.09e-6.
        let s = Summary::of(setting, "mse", 0.000_604_3, 0.000_004_1, 5);
        let r = Reference::new(
            "notebooks",
            "law-bar",
            "binning",
            f64::INFINITY,
            "mse",
            0.00061,
            0.000_007,
        );
        let (ours, diff, tolerance, v) = compared_cells(&r, &s);
        assert_eq!(ours, "0.0006043 ± 0.0000051 (n = 5)");
        assert_eq!(diff, "-0.0000057");
        assert_eq!(tolerance, "0.0000070");
        assert_eq!(v, Verdict::Within);
    }

    /// A reason for misses below the paper does not explain one above it.
    #[test]
    fn a_one_sided_reason_explains_its_side_only() {
        let reason = Reason {
            deviation: "some-anchor".into(),
            text: "noise lowers it".into(),
            below: Some(true),
        };
        let below = miss_reason(Some(&reason), -0.02);
        assert!(below.starts_with("noise lowers it"), "{below}");
        let above = miss_reason(Some(&reason), 0.02);
        assert!(above.starts_with("unexplained: ours is above"), "{above}");
        assert!(above.contains("#some-anchor"), "{above}");
        let any_side = Reason {
            below: None,
            ..reason
        };
        assert!(miss_reason(Some(&any_side), 0.02).starts_with("noise lowers it"));
        assert_eq!(miss_reason(None, 0.02), "unexplained");
    }

    /// A setting's other metrics are its chosen configuration; other settings' are not.
    #[test]
    fn the_chosen_configuration_lists_the_settings_other_metrics() {
        let setting = |method: &str| crate::grid::Setting {
            dataset: "diabetes".into(),
            method: method.into(),
            accounting: "strict".into(),
            epsilon: 2.0,
            delta: 0.0,
            fairness_level: None,
            params: crate::grid::Params::new(),
        };
        let row = |method: &str, metric: &str, mean: f64, std: f64| Summary {
            setting: setting(method),
            repetitions: 20,
            epsilon_spent: Some(2.0),
            metric: metric.into(),
            mean,
            std,
            ci95: 0.0,
        };
        let rows = vec![
            row("lpct-m", "accuracy", 0.72, 0.02),
            row("lpct-m", "p", 3.0, 0.0),
            row("lpct-m", "lambda", 100.0, 0.0),
            row("lpct-c", "p", 5.0, 0.0),
            row("lpct-m", "rounds", 2.5, 0.5),
        ];
        assert_eq!(
            chosen_text(&rows[0], &rows),
            " · chosen: p = 3, lambda = 100, rounds = 2.5 (varies)"
        );
        assert_eq!(chosen_text(&rows[3], &rows[3..4]), "");
    }
}
