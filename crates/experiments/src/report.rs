//! report.md: the paper's numbers beside ours, the difference and whether it is within tolerance.

use crate::aggregate::Summary;
use crate::error::{ExpError, Result};
use crate::grid::fmt_f64;
use crate::paper::{Paper, Reference, Scale};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What the run did, for the report's header.
pub(crate) struct Status {
    pub scale: Scale,
    pub settings: usize,
    /// The grid's repetition count …
    pub repetitions: usize,
    /// … the number of settings with their own count, and the largest count of any setting.
    pub overridden: usize,
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
    })
}

fn num(v: f64) -> String {
    format!("{v:.4}")
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
        "Grid: {} ({} settings × {} repetitions{}, seeds {}..{}). This run computed {} cells; {} \
         were already in raw.csv; {} missing; {} failed.\n",
        match status.scale {
            Scale::Quick => "quick",
            Scale::Full => "full",
        },
        status.settings,
        status.repetitions,
        if status.overridden > 0 {
            format!(
                "; {} settings with their own count, up to {}; each row's n is its own",
                status.overridden, status.max_repetitions
            )
        } else {
            String::new()
        },
        status.seed0,
        status.seed0 + status.max_repetitions.max(status.repetitions) as u64,
        status.ran,
        status.resumed,
        status.missing,
        status.failed.len()
    );
    let refs = paper.references_at(status.repetitions);
    if !refs.is_empty() {
        let _ = writeln!(md, "## Paper numbers beside ours\n");
        let _ = writeln!(
            md,
            "| source | dataset | method | ε | level | metric | paper | ours (mean ± 95%) | difference | tolerance | within |\n|---|---|---|---|---|---|---|---|---|---|---|"
        );
        let (mut within, mut compared) = (0, 0);
        for r in &refs {
            let level = r.fairness_level.map(fmt_f64).unwrap_or("-".into());
            let (ours, diff, ok) = match find(r, rows) {
                Some(s) => {
                    let d = s.mean - r.value;
                    let ok = d.abs() <= r.tolerance;
                    compared += 1;
                    within += usize::from(ok);
                    (
                        format!("{} ± {} (n = {})", num(s.mean), num(s.ci95), s.repetitions),
                        format!("{d:+.4}"),
                        if ok { "yes" } else { "**no**" }.to_string(),
                    )
                }
                None => ("not run".into(), "-".into(), "-".into()),
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.source,
                r.dataset,
                r.method,
                fmt_f64(r.epsilon),
                level,
                r.metric,
                num(r.value),
                ours,
                diff,
                num(r.tolerance),
                ok
            );
        }
        let _ = writeln!(
            md,
            "\n{within} of {compared} compared numbers are within tolerance ({} references).\n",
            refs.len()
        );
    }
    let checks = paper.checks(rows);
    if !checks.is_empty() {
        let _ = writeln!(
            md,
            "## Checks\n\n| check | passed | detail |\n|---|---|---|"
        );
        for c in &checks {
            let ok = if c.passed { "yes" } else { "**no**" };
            let _ = writeln!(md, "| {} | {ok} | {} |", c.name, c.detail);
        }
        let passed = checks.iter().filter(|c| c.passed).count();
        let _ = writeln!(md, "\n{passed} of {} checks pass.\n", checks.len());
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
