//! The report checks on the aggregated results (report.md, "Checks"):
//!
//! * CDP-Fair: mean test `|DD| ≤ α + 0.02` at `N ≥ 5,000` (strict; synthetic and real data);
//! * FDP-Fair: mean test `|DD| ≤ α + ρ* ` in strict mode, `+ ω` in paper mode (`docs/deviations.md#fdp-fair-algorithm-6-clipping`:
//!   with Algorithm 6 clipped to `[0, 1]` the selected point sits up to ω further out);
//! * each bound allows for the sampling error of the mean, `t_{0.975, n−1}·SE` with the SE from
//!   the setting's own `n` repetitions (Student's t: 4.30 at `--quick`'s 3, ≈ 2 at 200). The
//!   repetitions share their seeds across settings (common random numbers), so at `--quick` a
//!   lucky or unlucky draw moves every setting the same way;
//! * the error decreases in `N`, `S` (more total data) and `ε`, and grows with `S` at a fixed
//!   total (Fig. 5), as the paper describes: each neighbouring pair on the sweep must not go the
//!   wrong way by more than `t·SE` of the difference (Welch);
//! * FDP-Fair's |DD| rises with ρ* (Fig. 8), the effect to resolve the one-for-one rise of the
//!   paper's reading (`D̃D_↓(τ̃) ≈ α + ρ*`);
//! * strict mode spends at most `(ε, δ)` (what the ledgers say), beside what paper mode spends;
//! * on the real data CDP-Fair and FDP-Fair (S = 1) keep mean `|DD| ≤ α + t·SE` (Figs. 6–7), and
//!   on Law their |DD| keeps rising with α where the non-private fair benchmark's constraint is
//!   inactive (Fig. 7);
//! * the unconstrained baseline is unfair at the smallest α on the real data (Figs. 6–7).

use super::real::{
    ADULT, CDP_PAPER, FAIRNESS_ONLY, FDP1, FDP1_PAPER, LAW, RHO_STAR, UNCONSTRAINED,
};
use super::{CDP, FDP, MODES};
use crate::Check;
use crate::aggregate::Summary;
use crate::grid::{Setting, fmt_f64};
use std::collections::BTreeMap;

/// One setting with its metrics.
struct Row<'a> {
    setting: &'a Setting,
    spent: Option<f64>,
    metrics: BTreeMap<&'a str, &'a Summary>,
}

impl Row<'_> {
    fn mean(&self, metric: &str) -> Option<f64> {
        self.metrics.get(metric).map(|s| s.mean)
    }

    /// Standard error of the mean of `metric`.
    fn se(&self, metric: &str) -> f64 {
        self.metrics
            .get(metric)
            .map(|s| s.std / (s.repetitions.max(1) as f64).sqrt())
            .unwrap_or(0.0)
    }

    fn repetitions(&self, metric: &str) -> usize {
        self.metrics.get(metric).map_or(0, |s| s.repetitions)
    }

    /// The sampling allowance of a mean against a bound: its 95 % half-width
    /// `t_{0.975, n−1}·SE` ([`crate::stats::half_width`]; ≈ 2 SE at the paper's 200, ∞ for one
    /// repetition: a mean of one draw is never held against a bound).
    fn allowance(&self, metric: &str) -> f64 {
        self.metrics.get(metric).map_or(f64::INFINITY, |s| {
            crate::stats::half_width(s.std, s.repetitions)
        })
    }

    fn param(&self, key: &str) -> Option<f64> {
        self.setting
            .params
            .get_str(key)
            .and_then(|v| v.parse().ok())
    }

    fn figure(&self) -> &str {
        self.setting.params.get_str("figure").unwrap_or("")
    }

    fn label(&self) -> String {
        let s = self.setting;
        format!(
            "{} {} ({}) ε = {} α = {} [{}]",
            s.dataset,
            s.method,
            s.accounting,
            crate::present::setting(s.epsilon),
            s.fairness_level
                .map(crate::present::setting)
                .unwrap_or_default(),
            s.params
        )
    }
}

fn group(rows: &[Summary]) -> Vec<Row<'_>> {
    let mut by: BTreeMap<String, Row<'_>> = BTreeMap::new();
    for r in rows {
        by.entry(r.setting.key(""))
            .or_insert_with(|| Row {
                setting: &r.setting,
                spent: r.epsilon_spent,
                metrics: BTreeMap::new(),
            })
            .metrics
            .insert(&r.metric, r);
    }
    by.into_values().collect()
}

/// A bound check: every selected row must satisfy `|DD| ≤ α + band(row) + allowance`, the
/// allowance its 95 % half-width ([`Row::allowance`]). Its power: the smallest excess over a
/// row's bound detected with probability 0.8, `(t_{0.975, n−1} + t_{0.80, n−1})·SE`, at the
/// least precise row (∞ with one repetition), beside the effect it must resolve, the narrowest
/// positive band: a check that cannot see an excess of the band's own size is underpowered.
fn bound_check<'a>(
    name: &str,
    rows: impl Iterator<Item = &'a Row<'a>>,
    band: impl Fn(&Row) -> f64,
) -> Option<Check> {
    let (mut n, mut failed, mut worst) = (0, Vec::new(), f64::NEG_INFINITY);
    let (mut detectable, mut repetitions) = (0.0f64, usize::MAX);
    let mut narrowest = f64::INFINITY;
    for r in rows {
        let (Some(dd), Some(alpha)) = (r.mean("abs_dd"), r.setting.fairness_level) else {
            continue;
        };
        n += 1;
        let reps = r.repetitions("abs_dd");
        let df = reps.saturating_sub(1) as f64;
        detectable = detectable.max(if reps < 2 {
            f64::INFINITY
        } else {
            (crate::stats::t_quantile(0.975, df) + crate::stats::t_quantile(0.8, df))
                * r.se("abs_dd")
        });
        repetitions = repetitions.min(reps);
        // A band of 0 (the bound is α itself) sets no effect size to resolve.
        if band(r) > 0.0 {
            narrowest = narrowest.min(band(r));
        }
        let b = alpha + band(r) + r.allowance("abs_dd");
        worst = worst.max(dd - alpha);
        if dd > b {
            failed.push(format!("{}: {dd:.4} > {b:.4}", r.label()));
        }
    }
    (n > 0).then(|| {
        let mut detail = format!(
            "{} of {n} settings within the bound; largest mean |DD| − α = {worst:.4}",
            n - failed.len()
        );
        for f in failed.iter().take(5) {
            detail.push_str("; ");
            detail.push_str(f);
        }
        if failed.len() > 5 {
            detail.push_str(&format!("; … {} more", failed.len() - 5));
        }
        Check::new(name, failed.is_empty(), detail).with_power(crate::stats::Power {
            min_effect: detectable,
            repetitions,
            claimed_effect: narrowest.is_finite().then_some(narrowest),
        })
    })
}

/// A trend along a sweep: rows grouped by `key` (everything but the swept value), sorted by
/// `x`, each neighbouring pair one comparison. The claim holds when the pooled mean change
/// goes the expected way significantly (one-sided t test at level 0.05, [`crate::stats::direction`])
/// and no pair goes the other way by more than `t_{0.975}·SE` of its difference; the check
/// states its minimal detectable effect.
fn trend_check<'a>(
    name: &str,
    rows: impl Iterator<Item = &'a Row<'a>>,
    key: impl Fn(&Row) -> String,
    x: impl Fn(&Row) -> f64,
    decreasing: bool,
) -> Option<Check> {
    trend_of(name, rows, key, x, decreasing, "error")
}

/// [`trend_check`] of any metric.
fn trend_of<'a>(
    name: &str,
    rows: impl Iterator<Item = &'a Row<'a>>,
    key: impl Fn(&Row) -> String,
    x: impl Fn(&Row) -> f64,
    decreasing: bool,
    metric: &str,
) -> Option<Check> {
    let (d, _) = sweep_direction(rows, key, x, decreasing, metric)?;
    Some(Check::trend(name, &d, d.summary()))
}

/// The [`crate::stats::direction`] of `metric` along a sweep (see [`trend_check`]) and the mean
/// step in `x` of its neighbouring pairs (the scale of an effect stated as a slope).
fn sweep_direction<'a>(
    rows: impl Iterator<Item = &'a Row<'a>>,
    key: impl Fn(&Row) -> String,
    x: impl Fn(&Row) -> f64,
    decreasing: bool,
    metric: &str,
) -> Option<(crate::stats::Direction, f64)> {
    let mut groups: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for r in rows.filter(|r| r.metrics.contains_key(metric)) {
        groups.entry(key(r)).or_default().push(r);
    }
    let (mut pairs, mut step) = (Vec::new(), 0.0);
    for g in groups.values_mut() {
        g.sort_by(|a, b| x(a).total_cmp(&x(b)));
        for w in g.windows(2) {
            let (a, b) = (w[0], w[1]);
            step += x(b) - x(a);
            pairs.push((
                format!("{} → {}", a.label(), crate::present::setting(x(b))),
                a.metrics[metric],
                b.metrics[metric],
            ));
        }
    }
    let d = crate::stats::direction(&pairs, if decreasing { -1.0 } else { 1.0 })?;
    let step = step / pairs.len() as f64;
    Some((d, step))
}

/// The setting's key without the swept `params` (`"epsilon"` for ε, `"alpha"` for the
/// fairness level).
fn without(setting: &Setting, params: &[&str]) -> String {
    let s = setting;
    let text = s.params.to_string();
    let rest: Vec<&str> = text
        .split(';')
        .filter(|kv| !params.iter().any(|p| kv.starts_with(&format!("{p}="))))
        .collect();
    format!(
        "{}|{}|{}|{}|{}|{}",
        s.dataset,
        s.method,
        s.accounting,
        if params.contains(&"epsilon") {
            String::new()
        } else {
            fmt_f64(s.epsilon)
        },
        if params.contains(&"alpha") {
            String::new()
        } else {
            s.fairness_level.map(fmt_f64).unwrap_or_default()
        },
        rest.join(";")
    )
}

/// Fig. 8 (App. A.2): FDP-Fair's |DD| rises with ρ*, one check per accounting mode that ran. The
/// paper's reading: the smallest-|τ| feasible grid point puts `D̃D_↓(τ̃)` near the band's top,
/// `α + ρ*`, so |DD| rises one for one with ρ*; the effect to resolve is that rise over the
/// sweep's mean step in ρ* (`docs/reproductions.md`, "Reading report.md").
fn fig8_rise(rows: &[Row], mode: &str) -> Option<Check> {
    let (d, step) = sweep_direction(
        rows.iter()
            .filter(|r| r.figure() == "8" && r.setting.accounting == mode),
        |r| without(r.setting, &["rho_star"]),
        |r| r.param("rho_star").unwrap_or(0.0),
        false,
        "abs_dd",
    )?;
    let name = format!("FDP-Fair |DD| rises with ρ* (Fig. 8, {mode})");
    Some(Check::trend(&name, &d, d.summary()).claimed_effect(step))
}

/// The fair methods of Figs. 6–7 (CDP-Fair and FDP-Fair with S = 1, either mode).
fn real_fair(r: &Row) -> bool {
    [CDP, FDP1, CDP_PAPER, FDP1_PAPER].contains(&r.setting.method.as_str())
        && [ADULT, LAW].contains(&r.setting.dataset.as_str())
}

/// Figs. 6–7 (§5.2): "CDP-Fair and FDP-Fair keep disparity below α" on `data`, at α itself (the
/// bounds of Figs. 3–5 allow a band). The effect to resolve is the real-data band ρ* = 0.02:
/// FDP-Fair's selection (Alg. 2 S3) only targets α within ±ρ*, so a smaller excess is not one
/// the claim can be held to. A miss is explained when every row over its bound is FDP-Fair
/// within that band, `α + ρ* + t·SE`, which the row's own numbers verify; else unexplained.
fn real_bound(rows: &[Row], data: &str, mode: &str) -> Option<Check> {
    let mine = || {
        rows.iter()
            .filter(move |r| r.setting.dataset == data && real_fair(r))
            .filter(move |r| r.setting.accounting == mode)
    };
    let name =
        format!("{data}: CDP-Fair and FDP-Fair (S = 1) mean |DD| ≤ α + t·SE (Figs. 6–7, {mode})");
    let check = bound_check(&name, mine(), |_| 0.0)?.claimed_effect(RHO_STAR);
    let excess = |r: &Row, band: f64| {
        let alpha = r.setting.fairness_level.unwrap_or(f64::NAN);
        r.mean("abs_dd").unwrap_or(f64::NAN) - alpha - band - r.allowance("abs_dd")
    };
    let in_band = mine().filter(|r| excess(r, 0.0) > 0.0).all(|r| {
        [FDP1, FDP1_PAPER].contains(&r.setting.method.as_str()) && excess(r, RHO_STAR) <= 0.0
    });
    Some(if !check.passed && in_band {
        check.explained_by(
            "fdp-fair-selection-rule-gaps",
            "every setting over α is FDP-Fair (S = 1) within α + ρ* + t·SE: its selection takes \
             the smallest |τ| whose D̃D_↓ is within ±ρ* of α, near the band's top (Fig. 8's rise)",
        )
    } else {
        check
    })
}

/// Fig. 7 (§5.2, Law): "once the constraint is inactive for the non-private fair benchmark, the
/// disparities of CDP-Fair/FDP-Fair keep increasing with α". The benchmark ("NDP F",
/// [`FAIRNESS_ONLY`]) is inactive from the smallest α from which on its mean |DD| stays below α
/// by more than its 95 % half-width; the rise of the fair methods' |DD| is tested
/// ([`sweep_direction`]) over those α only, per accounting mode that ran. With fewer than two
/// such α in the grid there is no step to test: the check is underpowered.
fn law_rise(rows: &[Row], mode: &str) -> Option<Check> {
    let alpha = |r: &Row| r.setting.fairness_level.unwrap_or(f64::NAN);
    let mut bench: Vec<&Row> = rows
        .iter()
        .filter(|r| r.setting.dataset == LAW && r.setting.method == FAIRNESS_ONLY)
        .filter(|r| r.mean("abs_dd").is_some())
        .collect();
    bench.sort_by(|a, b| alpha(a).total_cmp(&alpha(b)));
    let inactive =
        |r: &Row| r.mean("abs_dd").unwrap_or(f64::NAN) + r.allowance("abs_dd") < alpha(r);
    let from = bench
        .iter()
        .rposition(|r| !inactive(r))
        .map_or(0, |i| i + 1);
    let inactive_at: Vec<f64> = bench[from..].iter().map(|r| alpha(r)).collect();
    let fair: Vec<&Row> = rows
        .iter()
        .filter(|r| r.setting.dataset == LAW && real_fair(r) && r.setting.accounting == mode)
        .collect();
    if bench.is_empty() || fair.is_empty() {
        return None;
    }
    let name = format!(
        "{LAW}: CDP-Fair and FDP-Fair (S = 1) |DD| rises with α where the fair benchmark's \
         constraint is inactive (Fig. 7, {mode})"
    );
    let shown: Vec<String> = bench
        .iter()
        .map(|r| {
            format!(
                "{:.4} at α = {}",
                r.mean("abs_dd").unwrap_or(f64::NAN),
                crate::present::setting(alpha(r))
            )
        })
        .collect();
    let benchmark = format!(
        "benchmark ({FAIRNESS_ONLY}) mean |DD| {}; inactive (below α by more than t·SE) at α ∈ {{{}}}",
        shown.join(", "),
        inactive_at
            .iter()
            .map(|&a| crate::present::setting(a))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if inactive_at.len() < 2 {
        return Some(
            Check::new(
                &name,
                false,
                format!("{benchmark}: fewer than two such α in the grid, no step to test"),
            )
            .undecided_if(true),
        );
    }
    let compared: Vec<&Row> = fair
        .into_iter()
        .filter(|r| alpha(r) >= inactive_at[0])
        .collect();
    let (d, _) = sweep_direction(
        compared.iter().copied(),
        |r| without(r.setting, &["alpha"]),
        alpha,
        false,
        "abs_dd",
    )?;
    let check = Check::trend(&name, &d, format!("{benchmark}; {}", d.summary()));
    // τ̃ = 0 in every repetition (mean and sd 0): the private methods' own constraint is
    // inactive too, and nothing they release reads α.
    let untouched = compared.iter().all(|r| {
        r.metrics
            .get("tau")
            .is_some_and(|t| t.mean == 0.0 && t.std == 0.0)
    });
    Some(if !check.passed && untouched {
        check.explained_by(
            "fdp-fair-real-data-outside-the-unit-cube",
            "τ̃ = 0 in every repetition at these α (results.csv, `tau`): the private fair \
             classifiers' own constraint is inactive too, their plug-in's |DD| is below α, so it \
             cannot move with α. The paper's rise needs the private plug-in's disparity above α \
             there (§5.2 blames its data selection at high privacy); its raw-feature kernel, where \
             ours scales with public bounds, is a candidate cause, not measured",
        )
    } else {
        check
    })
}

/// Mean of `metric` over the rows of one (method, accounting, ε) of Figure 4, for the strict /
/// paper comparison.
fn mode_summary(rows: &[Row], accounting: &str) -> String {
    let mut by_eps: BTreeMap<String, (f64, f64, f64, usize)> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.figure() == "4" && r.setting.accounting == accounting)
    {
        let e = by_eps
            .entry(crate::present::setting(r.setting.epsilon))
            .or_default();
        e.0 += r.mean("error").unwrap_or(f64::NAN);
        e.1 += r.mean("abs_dd").unwrap_or(f64::NAN) - r.setting.fairness_level.unwrap_or(0.0);
        e.2 += r.spent.unwrap_or(f64::NAN);
        e.3 += 1;
    }
    by_eps
        .iter()
        .map(|(eps, (err, dd, spent, n))| {
            let n = *n as f64;
            format!(
                "{accounting} ε = {eps}: error {:.4}, |DD| − α {:+.4}, spent ε {}",
                err / n,
                dd / n,
                crate::present::setting(spent / n)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every check that the rows allow (a check whose settings did not run is left out).
pub fn checks(summaries: &[Summary]) -> Vec<Check> {
    let rows = group(summaries);
    let mut out = Vec::new();
    let is = |r: &Row, method: &str, accounting: &str| {
        r.setting.method == method && r.setting.accounting == accounting
    };
    let training_rows = |r: &Row| match r.setting.dataset.as_str() {
        // Real data: 70% of the file.
        ADULT => 48_842.0 * 0.7,
        LAW => 40_000.0 * 0.7,
        _ => r.param("n").unwrap_or(0.0) * r.param("sites").unwrap_or(1.0),
    };
    out.extend(bound_check(
        "CDP-Fair (strict): mean |DD| ≤ α + 0.02 + t·SE at N ≥ 5,000",
        rows.iter()
            .filter(|r| is(r, CDP, "strict") && training_rows(r) >= 5000.0),
        |_| 0.02,
    ));
    let rho = |r: &Row| r.param("rho_star").unwrap_or(0.03);
    let fdp = |r: &Row| {
        [FDP, super::real::FDP1, super::real::FDP1_PAPER].contains(&r.setting.method.as_str())
    };
    out.extend(bound_check(
        "FDP-Fair (strict): mean |DD| ≤ α + ρ* + t·SE",
        rows.iter()
            .filter(|r| fdp(r) && r.setting.accounting == "strict"),
        rho,
    ));
    out.extend(bound_check(
        "FDP-Fair (paper: Alg. 6 clipped to [0, 1], empirical π): mean |DD| ≤ α + ρ* + ω + t·SE",
        rows.iter()
            .filter(|r| fdp(r) && r.setting.accounting == "paper"),
        |r| rho(r) + r.mean("omega").unwrap_or(0.0),
    ));
    // Trends per accounting mode: in paper mode the realised |DD| overshoots α more at small ε
    // (`docs/deviations.md#fdp-fair-algorithm-6-clipping`: up to ρ* + ω, and ω shrinks with ε), which buys accuracy, so its error need not
    // fall with ε at a fixed α.
    for mode in MODES {
        let fig = |r: &&Row, f: &str| r.figure() == f && r.setting.accounting == mode;
        out.extend(trend_check(
            &format!("CDP-Fair error decreases in N (Fig. 3, {mode})"),
            rows.iter().filter(|r| fig(r, "3")),
            |r| without(r.setting, &["n"]),
            |r| r.param("n").unwrap_or(0.0),
            true,
        ));
        // The paper's S effect at N_s = 2,000 is ≈ 0.003 from S = 4 to 6 (measured with 24
        // repetitions at the reproduction's seeds, BENCHMARKS.md): ≈ 0.0015 per step of S.
        out.extend(
            trend_check(
                &format!("FDP-Fair error decreases in S at N_s = 2,000 (Fig. 4, {mode})"),
                rows.iter().filter(|r| fig(r, "4")),
                |r| without(r.setting, &["sites"]),
                |r| r.param("sites").unwrap_or(0.0),
                true,
            )
            .map(|c| {
                c.claimed_effect(0.0015).explained_by(
                    "fdp-fair-small-site-effect",
                    "the S effect at N_s = 2,000 (≈ 0.0015 per site) is below what the run's \
                     repetitions resolve",
                )
            }),
        );
        // Fig. 9 (App. A.2): "disparity rises slightly with C_ω".
        let fig9 = trend_of(
            &format!("FDP-Fair |DD| rises with C_ω (Fig. 9, {mode})"),
            rows.iter().filter(|r| fig(r, "9")),
            |r| without(r.setting, &["c_omega"]),
            |r| r.param("c_omega").unwrap_or(0.0),
            false,
            "abs_dd",
        );
        out.extend(fig9.map(|c| {
            if mode == "strict" {
                c.explained_by(
                    "fdp-fair-algorithm-6-clipping",
                    "strict Algorithm 6 clips to [−1, 1]: on this design's falling, negative \
                     D̃D it returns the band's lower edge, so the selected |D̃D| ≈ α − ω falls as \
                     ω ∝ C_ω grows; the paper's rise is its [0, 1] clipping (paper mode), where \
                     |D̃D| ≈ α + ρ* + ω",
                )
            } else {
                c
            }
        }));
        for (f, what) in [("3", "CDP-Fair"), ("4", "FDP-Fair")] {
            out.extend(trend_check(
                &format!("{what} error decreases in ε (Fig. {f}, {mode})"),
                rows.iter().filter(|r| fig(r, f)),
                |r| without(r.setting, &["epsilon"]),
                |r| r.setting.epsilon,
                true,
            ));
        }
    }
    for mode in MODES {
        out.extend(fig8_rise(&rows, mode));
    }
    out.extend(trend_check(
        "FDP-Fair error grows with S at N_total = 7,200 (Fig. 5)",
        rows.iter()
            .filter(|r| r.figure() == "5" && r.setting.method == FDP),
        |r| without(r.setting, &["sites", "n"]),
        |r| r.param("sites").unwrap_or(0.0),
        false,
    ));
    // Strict mode must spend at most the budget it was given.
    let strict: Vec<&Row> = rows
        .iter()
        .filter(|r| r.setting.accounting == "strict" && r.spent.is_some())
        .collect();
    if !strict.is_empty() {
        let over: Vec<String> = strict
            .iter()
            .filter(|r| r.spent.unwrap_or(0.0) > r.setting.epsilon * (1.0 + 1e-9))
            .map(|r| {
                format!(
                    "{}: spent {}",
                    r.label(),
                    crate::present::setting(r.spent.unwrap_or(0.0))
                )
            })
            .collect();
        let mut detail = format!(
            "{} of {} strict settings spend ≤ ε (per site for FDP-Fair)",
            strict.len() - over.len(),
            strict.len()
        );
        for line in [mode_summary(&rows, "strict"), mode_summary(&rows, "paper")] {
            if !line.is_empty() {
                detail.push_str("; ");
                detail.push_str(&line);
            }
        }
        for o in over.iter().take(3) {
            detail.push_str("; ");
            detail.push_str(o);
        }
        out.push(
            Check::new(
                "strict mode spends at most (ε, δ); strict vs paper (Fig. 4, means over α)",
                over.is_empty(),
                detail,
            )
            // What the ledgers spent: no sampling behind the verdict.
            .exact(),
        );
    }
    for data in [ADULT, LAW] {
        for mode in MODES {
            out.extend(real_bound(&rows, data, mode));
        }
    }
    for mode in MODES {
        out.extend(law_rise(&rows, mode));
    }
    // Figs. 6–7: the unconstrained plug-in is unfair at the smallest α.
    for data in [ADULT, LAW] {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.setting.dataset == data).collect();
        let Some(alpha) = mine
            .iter()
            .filter_map(|r| r.setting.fairness_level)
            .min_by(f64::total_cmp)
        else {
            continue;
        };
        if let Some(r) = mine
            .iter()
            .find(|r| r.setting.method == UNCONSTRAINED && r.setting.fairness_level == Some(alpha))
        {
            // "Unfair": |DD| above α by more than the one-sided sampling allowance
            // t_{0.95, n−1}·SE (a mean barely above α is no evidence).
            let dd = r.mean("abs_dd").unwrap_or(f64::NAN);
            let n = r.repetitions("abs_dd");
            let df = n.saturating_sub(1) as f64;
            let allowance = crate::stats::t_quantile(0.95, df) * r.se("abs_dd");
            out.push(
                Check::new(
                    &format!(
                        "{data}: the unconstrained plug-in is unfair at α = {alpha} (Figs. 6–7)"
                    ),
                    dd - alpha > allowance,
                    format!("mean |DD| = {dd:.4}; needs > α + {allowance:.4}"),
                )
                .with_power(crate::stats::Power {
                    min_effect: crate::stats::min_detectable_effect(r.se("abs_dd"), df),
                    repetitions: n,
                    claimed_effect: None,
                }),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Params;
    use crate::verdict::Verdict;

    fn row(method: &str, n: usize, alpha: f64, metric: &str, mean: f64, std: f64) -> Summary {
        Summary {
            setting: Setting {
                dataset: super::super::DATASET.into(),
                method: method.into(),
                accounting: "strict".into(),
                epsilon: 1.0,
                delta: 0.0,
                fairness_level: Some(alpha),
                params: Params::new()
                    .with("figure", "3")
                    .with("mode", "strict")
                    .with("n", n)
                    .with("sites", 1),
            },
            repetitions: 4,
            epsilon_spent: Some(1.0),
            metric: metric.into(),
            mean,
            std,
            ci95: crate::stats::half_width(std, 4),
        }
    }

    fn find<'a>(checks: &'a [Check], prefix: &str) -> &'a Check {
        checks
            .iter()
            .find(|c| c.name.starts_with(prefix))
            .unwrap_or_else(|| panic!("no check `{prefix}` in {checks:?}"))
    }

    #[test]
    fn cdp_bound_and_trend_in_n() {
        // α = 0.1, 4 repetitions of sd 0.01: bound 0.12 + t_{0.975,3}·0.005 = 0.1359;
        // 0.115 passes, 0.14 fails.
        let mut rows = vec![
            row(CDP, 5000, 0.1, "abs_dd", 0.115, 0.01),
            row(CDP, 5000, 0.1, "error", 0.22, 0.01),
            row(CDP, 9000, 0.1, "abs_dd", 0.105, 0.01),
            row(CDP, 9000, 0.1, "error", 0.19, 0.01),
        ];
        let c = checks(&rows);
        assert!(find(&c, "CDP-Fair (strict)").passed, "{c:?}");
        assert!(find(&c, "CDP-Fair error decreases in N").passed, "{c:?}");
        rows[0].mean = 0.14;
        // Error rising from 0.22 to 0.25 with SE 0.005 each: Welch ν = 6, 0.03 > 2.447·0.0071.
        rows[3].mean = 0.25;
        let c = checks(&rows);
        assert!(!find(&c, "CDP-Fair (strict)").passed, "{c:?}");
        assert!(!find(&c, "CDP-Fair error decreases in N").passed, "{c:?}");
        // A fall smaller than t_{0.95,6}·SE = 1.943·0.0071 = 0.0137 is no evidence of the trend:
        // the check fails (it passed before, as "no significant reversal").
        rows[3].mean = 0.21;
        let c = checks(&rows);
        let trend = find(&c, "CDP-Fair error decreases in N");
        assert!(!trend.passed, "{c:?}");
        // Its minimal detectable effect: (t_{0.95,6} + t_{0.80,6})·0.0071 = (1.943 + 0.906)·0.00707.
        let mde = trend.power.as_ref().expect("power").min_effect;
        assert!((mde - 0.02014).abs() < 2e-4, "{mde}");
    }

    #[test]
    fn fdp_bound_adds_rho_star_and_the_sampling_allowance() {
        let mut r = row(FDP, 2000, 0.1, "abs_dd", 0.135, 0.02);
        r.setting.params = Params::new()
            .with("figure", "4")
            .with("rho_star", 0.03)
            .with("sites", 4);
        // Bound 0.1 + 0.03 + t_{0.975,3}·0.02/2 = 0.1618.
        let c = checks(std::slice::from_ref(&r));
        let bound = find(&c, "FDP-Fair (strict)");
        assert!(bound.passed);
        // The effect it must resolve is the band ρ* = 0.03; a band of 0 sets none.
        let claimed = |c: &Check| c.power.as_ref().and_then(|p| p.claimed_effect);
        assert_eq!(claimed(bound), Some(0.03));
        let mut zero = r.clone();
        zero.setting.params = zero.setting.params.clone().with("rho_star", 0.0);
        assert_eq!(claimed(find(&checks(&[zero]), "FDP-Fair (strict)")), None);
        r.mean = 0.165;
        assert!(!find(&checks(&[r]), "FDP-Fair (strict)").passed);
    }

    /// A summary of `metric` at one setting, built with [`Summary::of`].
    fn at(
        dataset: &str,
        method: &str,
        accounting: &str,
        alpha: f64,
        params: Params,
        (mean, std, n): (f64, f64, usize),
    ) -> Summary {
        let setting = Setting {
            dataset: dataset.into(),
            method: method.into(),
            accounting: accounting.into(),
            epsilon: if accounting == "none" {
                f64::INFINITY
            } else {
                1.0
            },
            delta: 0.0,
            fairness_level: Some(alpha),
            params,
        };
        Summary::of(setting, "abs_dd", mean, std, n)
    }

    /// Fig. 8's sweep at α = 0.3 with `|DD| = 0.3 + slope·ρ*`, sd 0.01 over `n` repetitions.
    fn fig8(slope: f64, n: usize) -> Vec<Summary> {
        [0.0, 0.05, 0.1, 0.2]
            .into_iter()
            .map(|rho| {
                let p = Params::new()
                    .with("figure", "8")
                    .with("n", 2000)
                    .with("sites", 3)
                    .with("rho_star", rho);
                at(
                    super::super::DATASET,
                    FDP,
                    "strict",
                    0.3,
                    p,
                    (0.3 + slope * rho, 0.01, n),
                )
            })
            .collect()
    }

    #[test]
    fn fig8_needs_a_rise_with_rho_star() {
        let name = "FDP-Fair |DD| rises with ρ* (Fig. 8, strict)";
        // The paper's one-for-one rise at 10 repetitions: the mean step is (0.05 + 0.05 + 0.1)/3,
        // the effect to resolve; SE 0.0032 per mean resolves it.
        let c = checks(&fig8(1.0, 10));
        let rise = find(&c, name);
        assert_eq!(rise.verdict(), Verdict::Within, "{rise:?}");
        let p = rise.power.as_ref().expect("power");
        assert!((p.claimed_effect.expect("effect") - 0.2 / 3.0).abs() < 1e-12);
        assert!(p.min_effect < 0.2 / 3.0, "{p:?}");
        // A flat series fails at the same power: the effect is absent, and resolvable.
        let c = checks(&fig8(0.0, 10));
        assert_eq!(find(&c, name).verdict(), Verdict::Miss);
        // … and so does a fall (a significant reversal).
        let c = checks(&fig8(-1.0, 10));
        let fall = find(&c, name);
        assert!(
            fall.verdict() == Verdict::Miss && !fall.failure_is_absence,
            "{fall:?}"
        );
        // Two repetitions of sd 0.2 cannot resolve a rise of 0.067: underpowered, not a miss.
        let mut rows = fig8(0.0, 2);
        for r in &mut rows {
            r.std = 0.2;
        }
        assert_eq!(find(&checks(&rows), name).verdict(), Verdict::Underpowered);
    }

    fn real(dataset: &str, method: &str, alpha: f64, value: (f64, f64, usize)) -> Summary {
        let accounting = if [FAIRNESS_ONLY, UNCONSTRAINED].contains(&method) {
            "none"
        } else {
            "strict"
        };
        let p = Params::new()
            .with("figure", if dataset == ADULT { "6" } else { "7" })
            .with("rho_star", RHO_STAR);
        at(dataset, method, accounting, alpha, p, value)
    }

    #[test]
    fn real_data_bound_is_alpha_itself() {
        let name = "law-admissions: CDP-Fair and FDP-Fair (S = 1) mean |DD| ≤ α";
        // 10 repetitions of sd 0.01: allowance t_{0.975,9}·0.00316 = 0.0072, so 0.105 at
        // α = 0.1 is within; the detectable excess (2.262 + 0.883)·0.00316 = 0.0099 resolves
        // the band ρ* = 0.02.
        let rows = [
            real(LAW, CDP, 0.1, (0.105, 0.01, 10)),
            real(LAW, FDP1, 0.2, (0.19, 0.01, 10)),
        ];
        let c = checks(&rows);
        assert_eq!(find(&c, name).verdict(), Verdict::Within, "{c:?}");
        // 0.11 is above α + 0.0072: a miss, though within the synthetic bound's α + 0.02;
        // CDP-Fair has no band ρ*: unexplained.
        let mut over = rows.clone();
        over[0].mean = 0.11;
        let c = checks(&over);
        assert_eq!(find(&c, name).verdict(), Verdict::Miss, "{c:?}");
        assert!(find(&c, name).reason.is_none());
        assert!(find(&c, "CDP-Fair (strict)").passed, "{c:?}");
        // FDP-Fair at 0.215 with α = 0.2: over α, within α + ρ* + 0.0072, so explained by its
        // band; at 0.23, beyond the band too, unexplained.
        let mut over = rows.clone();
        over[1].mean = 0.215;
        let c = checks(&over);
        assert_eq!(find(&c, name).verdict(), Verdict::Miss, "{c:?}");
        assert!(find(&c, name).reason.is_some(), "{c:?}");
        over[1].mean = 0.23;
        assert!(find(&checks(&over), name).reason.is_none());
        // At 3 repetitions the detectable excess (4.303 + 1.061)·0.00577 = 0.031 exceeds
        // ρ* = 0.02: a pass is underpowered.
        let three = [real(LAW, CDP, 0.1, (0.095, 0.01, 3))];
        assert_eq!(find(&checks(&three), name).verdict(), Verdict::Underpowered);
        // The synthetic rows are not held to α.
        assert!(
            checks(&[row(CDP, 5000, 0.1, "abs_dd", 0.115, 0.01)])
                .iter()
                .all(|c| !c.name.contains("law-admissions")),
        );
    }

    /// Law's sweep: the benchmark's |DD| (binding, then flat at 0.2) and the fair methods' at
    /// α ∈ {0.1, 0.2, 0.3, 0.4}, 10 repetitions of sd 0.01.
    fn law(fair: [f64; 4]) -> Vec<Summary> {
        let alphas = [0.1, 0.2, 0.3, 0.4];
        let bench = [0.1, 0.2, 0.2, 0.2];
        let mut rows = Vec::new();
        for i in 0..4 {
            rows.push(real(LAW, FAIRNESS_ONLY, alphas[i], (bench[i], 0.01, 10)));
            for method in [CDP, FDP1] {
                rows.push(real(LAW, method, alphas[i], (fair[i], 0.01, 10)));
            }
        }
        rows
    }

    #[test]
    fn law_rise_is_tested_where_the_benchmark_is_inactive() {
        let name = "law-admissions: CDP-Fair and FDP-Fair (S = 1) |DD| rises with α";
        // Inactive at α = 0.3 and 0.4 only (0.2 + 0.0072 < 0.3; 0.2 is not below α = 0.2).
        let c = checks(&law([0.09, 0.18, 0.22, 0.27]));
        let rise = find(&c, name);
        assert!(rise.detail.contains("α ∈ {0.3, 0.4}"), "{rise:?}");
        assert_eq!(rise.verdict(), Verdict::Within, "{rise:?}");
        // Flat where the benchmark is inactive: no, though the series rises before it; without
        // the thresholds, unexplained.
        let mut flat = law([0.09, 0.18, 0.2, 0.2]);
        let c = checks(&flat);
        assert_eq!(find(&c, name).verdict(), Verdict::Miss, "{c:?}");
        assert!(find(&c, name).reason.is_none());
        // τ̃ = 0 in every repetition where it is compared: the reason, verified by the rows.
        let tau = |r: &Summary, mean: f64, std: f64| Summary {
            metric: "tau".into(),
            mean,
            std,
            ..r.clone()
        };
        let taus: Vec<Summary> = flat
            .iter()
            .filter(|r| r.setting.fairness_level >= Some(0.3))
            .map(|r| tau(r, 0.0, 0.0))
            .collect();
        flat.extend(taus);
        let c = checks(&flat);
        let miss = find(&c, name);
        assert_eq!(miss.verdict(), Verdict::Miss);
        assert!(
            miss.reason
                .as_ref()
                .is_some_and(|r| r.text.starts_with("τ̃ = 0")),
            "{miss:?}"
        );
        // One threshold away from 0 in some repetition: not verified, unexplained.
        let last = flat.len() - 1;
        flat[last].std = 0.01;
        assert!(find(&checks(&flat), name).reason.is_none());
        // One inactive α in the grid: no step to test, underpowered.
        let rows: Vec<Summary> = law([0.09, 0.18, 0.22, 0.27])
            .into_iter()
            .filter(|r| r.setting.fairness_level != Some(0.4))
            .collect();
        let c = checks(&rows);
        assert_eq!(find(&c, name).verdict(), Verdict::Underpowered, "{c:?}");
    }
}
