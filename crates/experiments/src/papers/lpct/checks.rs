//! The report's checks (report.md, "Checks"): the paper's qualitative claims of Sections 6 and
//! 7.3 on our aggregated accuracies, and the honest (non-test) selection reported beside the
//! oracle without a target (`docs/deviations.md#lpct-hyperparameters-chosen-on-test-accuracy`).
//!
//! A comparison "A ≥ B" passes when A ≥ B − t_{0.975, ν}·SE(A − B) (Welch; SE from the two means'
//! standard errors, an independent-sample bound: the runs share seeds, so it is conservative),
//! with a floor of 0.005 for runs with identical replications. A claim "A beats B" or "rises"
//! needs the pooled difference to be significantly positive ([`stats::direction`]). Every check
//! states its minimal detectable effect. Section 7.3's claims are about real data; the synthetic
//! versions use the design of Fig. 4(a) (non-linear η, public data with γ = 0.5) with PHIST and
//! PGLM run on it too.

use crate::Check;
use crate::aggregate::Summary;
use crate::stats;

/// The accuracy summary of (study, method, ε) whose parameters contain every `key=value` of `with`.
fn find<'a>(
    rows: &'a [Summary],
    study: &str,
    method: &str,
    eps: f64,
    with: &[(&str, &str)],
) -> Option<&'a Summary> {
    rows.iter().find(|s| {
        s.metric == "accuracy"
            && s.setting.dataset == study
            && s.setting.method == method
            && (s.setting.epsilon == eps || (s.setting.epsilon.is_infinite() && eps.is_infinite()))
            && with
                .iter()
                .all(|(k, v)| s.setting.params.get_str(k) == Some(*v))
    })
}

/// The allowance of "A ≥ B": `t_{0.975, ν}·SE(A − B)` (Welch), with a floor of 0.005 for runs
/// with identical replications.
fn slack(a: &Summary, b: &Summary) -> f64 {
    let (se, df) = stats::welch(stats::se(a), a.repetitions, stats::se(b), b.repetitions);
    (stats::t_quantile(0.975, df) * se).max(0.005)
}

/// Whether `a` is at least `b` up to the sampling allowance of the difference.
fn at_least(a: &Summary, b: &Summary) -> bool {
    a.mean >= b.mean - slack(a, b)
}

/// The smallest shortfall of `a` below `b` that one comparison detects (two-sided level 0.05,
/// power 0.8): `(t_{0.975, ν} + t_{0.80, ν})·SE(A − B)`.
fn shortfall_detectable(a: &Summary, b: &Summary) -> f64 {
    let (se, df) = stats::welch(stats::se(a), a.repetitions, stats::se(b), b.repetitions);
    (stats::t_quantile(0.975, df) + stats::t_quantile(0.8, df)) * se
}

/// The ε values present for (study, method), sorted.
fn epsilons(rows: &[Summary], study: &str, method: &str) -> Vec<f64> {
    let mut e: Vec<f64> = rows
        .iter()
        .filter(|s| {
            s.metric == "accuracy" && s.setting.dataset == study && s.setting.method == method
        })
        .map(|s| s.setting.epsilon)
        .collect();
    e.sort_by(f64::total_cmp);
    e.dedup();
    e
}

/// The values of parameter `key` present for (study, method), sorted numerically.
fn param_values(rows: &[Summary], study: &str, method: &str, key: &str) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .filter(|s| {
            s.metric == "accuracy" && s.setting.dataset == study && s.setting.method == method
        })
        .filter_map(|s| s.setting.params.get_str(key).map(str::to_string))
        .collect();
    v.sort_by(|a, b| {
        let (x, y) = (
            a.parse::<f64>().unwrap_or(0.0),
            b.parse::<f64>().unwrap_or(0.0),
        );
        x.total_cmp(&y)
    });
    v.dedup();
    v
}

fn fmt(s: &Summary) -> String {
    format!("{:.3}", s.mean)
}

/// A chain of "A ≥ B" comparisons as one check (no comparison may fall short by more than its
/// sampling allowance); None when nothing was run. Its power: the largest of the comparisons'
/// detectable shortfalls.
fn chain(name: &str, pairs: Vec<(String, &Summary, &Summary)>) -> Option<Check> {
    if pairs.is_empty() {
        return None;
    }
    let passed = pairs.iter().all(|(_, a, b)| at_least(a, b));
    let detail = pairs
        .iter()
        .map(|(label, a, b)| {
            let mark = if at_least(a, b) { "" } else { " ✗" };
            format!("{label}: {} vs {}{mark}", fmt(a), fmt(b))
        })
        .collect::<Vec<_>>()
        .join("; ");
    let power = stats::Power {
        min_effect: pairs
            .iter()
            .map(|(_, a, b)| shortfall_detectable(a, b))
            .fold(0.0, f64::max),
        repetitions: pairs
            .iter()
            .map(|(_, a, b)| a.repetitions.min(b.repetitions))
            .min()
            .unwrap_or(0),
        claimed_effect: None,
    };
    Some(Check::new(name, passed, detail).with_power(power))
}

/// "A beats B" over `pairs` of (label, A, B): the pooled difference A − B must be positive at
/// level 0.05 and no pair may go the other way significantly ([`stats::direction`]).
fn beats_pooled(name: &str, pairs: Vec<(String, &Summary, &Summary)>) -> Option<Check> {
    let flipped: Vec<(String, &Summary, &Summary)> =
        pairs.into_iter().map(|(l, a, b)| (l, b, a)).collect();
    let d = stats::direction(&flipped, 1.0)?;
    let detail = flipped
        .iter()
        .map(|(label, b, a)| format!("{label}: {} vs {}", fmt(a), fmt(b)))
        .chain([d.summary()])
        .collect::<Vec<_>>()
        .join("; ");
    Some(Check::trend(name, &d, detail))
}

/// `method` does not fall as ε grows on `study` (each ε against the previous one).
fn monotone_in_epsilon(rows: &[Summary], study: &str, method: &str, name: &str) -> Option<Check> {
    let eps = epsilons(rows, study, method);
    let pairs = eps
        .windows(2)
        .filter_map(|w| {
            Some((
                format!("ε {} → {}", w[0], w[1]),
                find(rows, study, method, w[1], &[])?,
                find(rows, study, method, w[0], &[])?,
            ))
        })
        .collect();
    chain(name, pairs)
}

/// `a` ≥ `b` at every ε of `study`.
fn beats(rows: &[Summary], study: &str, a: &str, b: &str, name: &str) -> Option<Check> {
    let pairs = epsilons(rows, study, a)
        .into_iter()
        .filter_map(|e| {
            Some((
                format!("ε {e}"),
                find(rows, study, a, e, &[])?,
                find(rows, study, b, e, &[])?,
            ))
        })
        .collect();
    chain(name, pairs)
}

/// All checks that have data in `rows`.
pub fn all(rows: &[Summary]) -> Vec<Check> {
    let mut out: Vec<Option<Check>> = Vec::new();
    // Section 6 (Figs. 4–9).
    for study in ["fig4a", "fig4b"] {
        let pairs: Vec<_> = epsilons(rows, study, "lpct")
            .into_iter()
            .flat_map(|e| {
                ["lpct-p", "lpct-q"].into_iter().filter_map(move |m| {
                    Some((
                        format!("ε {e} vs {m}"),
                        find(rows, study, "lpct", e, &[])?,
                        find(rows, study, m, e, &[])?,
                    ))
                })
            })
            .collect();
        out.push(chain(
            &format!("{study}: LPCT ≥ LPCT-P and LPCT-Q at every ε (Section 6)"),
            pairs,
        ));
        out.push(monotone_in_epsilon(
            rows,
            study,
            "lpct",
            &format!("{study}: LPCT does not fall as ε grows"),
        ));
        out.push(
            monotone_in_epsilon(
                rows,
                study,
                "lpct-prune",
                &format!("{study}: LPCT-prune does not fall as ε grows"),
            )
            .map(|c| {
                c.explained_by(
                    "lpct-prune-falls-as-epsilon-grows",
                    "with the authors' constants the noise term exceeds every node's private \
                     count, so 92–100% of leaves use the public data only at every ε, and p0 = \
                     p_term at ε = 2, 8, 1000 stops the walk at the leaves (2,048 leaves for 50 \
                     public points at ε = 1000: mostly empty, predicted 0); with Proposition 6's \
                     constants (lpct-prune-prop6) accuracy rises with ε",
                )
            }),
        );
        out.push(monotone_in_epsilon(
            rows,
            study,
            "lpct-prune-prop6",
            &format!("{study}: LPCT-prune with Proposition 6's constants does not fall as ε grows"),
        ));
    }
    out.push(grows_with(
        rows,
        "fig5",
        "lpct",
        "n_p",
        2.0,
        "fig5: LPCT rises with n_P (ε = 2)",
    ));
    out.push(grows_with(
        rows,
        "fig6",
        "lpct",
        "n_q",
        2.0,
        "fig6: LPCT rises with n_Q (ε = 2)",
    ));
    let fig9: Vec<_> = param_values(rows, "fig9", "lpct", "n_p")
        .iter()
        .filter_map(|n| {
            Some((
                format!("n_P {n}"),
                find(rows, "fig9", "lpct", 2.0, &[("n_p", n)])?,
                find(rows, "fig9", "lpct-r", 2.0, &[("n_p", n)])?,
            ))
        })
        .collect();
    out.push(beats_pooled(
        "fig9: max-edge LPCT beats random max-edge LPCT-R (Fig. 9; pooled over n_P)",
        fig9,
    ));
    // Section 7.3 on synthetic data (Fig. 4(a)'s design).
    out.push(
        beats(
            rows,
            "fig4a",
            "lpct-p",
            "phist",
            "§7.3 on synthetic data: LPDT (= LPCT-P, public partition) ≥ PHIST",
        )
        .map(|c| {
            c.explained_by(
                "",
                "unexplained (a guess, not measured: PHIST's 3×3 grid has its cell edges on this \
                 design's Bayes boundary x = 1/3, which max-edge halving never hits)",
            )
        }),
    );
    out.push(beats(
        rows,
        "fig4a",
        "lpct",
        "pglm",
        "§7.3 on synthetic data: the linear PGLM is poor on non-linear data (LPCT ≥ PGLM)",
    ));
    out.push(public_dominates(rows));
    // Section 7.3 on Diabetes (Table 2, Fig. 10).
    out.push(beats(
        rows,
        "diabetes",
        "lpct-c",
        "lpct-m",
        "§7.3 Diabetes: the CART rule beats max-edge (LPCT-C ≥ LPCT-M)",
    ));
    out.push(beats(
        rows,
        "diabetes",
        "prune-c",
        "prune-m",
        "§7.3 Diabetes: the CART rule beats max-edge (Prune-C ≥ Prune-M)",
    ));
    out.push(beats(
        rows,
        "diabetes",
        "lpct-m",
        "pglm",
        "§7.3 Diabetes: LPCT-M ≥ PGLM (linear)",
    ));
    let fig10: Vec<_> = param_values(rows, "fig10", "lpct-m", "frac")
        .iter()
        .flat_map(|f| {
            [("lpct-m", "lpdt"), ("lpdt", "phist")]
                .into_iter()
                .filter_map(move |(a, b)| {
                    Some((
                        format!("frac {f}: {a} vs {b}"),
                        find(rows, "fig10", a, 2.0, &[("frac", f)])?,
                        find(rows, "fig10", b, 2.0, &[("frac", f)])?,
                    ))
                })
        })
        .collect();
    out.push(chain(
        "Fig. 10 / §7.3: PHIST ≤ LPDT ≤ LPCT (more use of public data)",
        fig10,
    ));
    out.push(honest(rows));
    out.into_iter().flatten().collect()
}

/// `method` at the largest value of `key` beats its value at the smallest.
fn grows_with(
    rows: &[Summary],
    study: &str,
    method: &str,
    key: &str,
    eps: f64,
    name: &str,
) -> Option<Check> {
    let v = param_values(rows, study, method, key);
    let (lo, hi) = (v.first()?, v.last()?);
    if lo == hi {
        return None;
    }
    beats_pooled(
        name,
        vec![(
            format!("{key} {lo} → {hi}"),
            find(rows, study, method, eps, &[(key, hi)])?,
            find(rows, study, method, eps, &[(key, lo)])?,
        )],
    )
}

/// "On some data sets LPCT's accuracy is constant in ε (public data dominate)": on Fig. 4(b)'s
/// design (n_Q = 1,000, γ = 5) LPCT's accuracy over ε ≤ 2 spans at most 0.01 (LPCT-Q, flat by
/// construction, shown beside it).
fn public_dominates(rows: &[Summary]) -> Option<Check> {
    let lpct: Vec<(f64, &Summary, f64)> = epsilons(rows, "fig4b", "lpct")
        .into_iter()
        .filter(|e| *e <= 2.0)
        .filter_map(|e| {
            Some((
                e,
                find(rows, "fig4b", "lpct", e, &[])?,
                find(rows, "fig4b", "lpct-q", e, &[])?.mean,
            ))
        })
        .collect();
    if lpct.len() < 2 {
        return None;
    }
    // Power: the smallest change between two ε that a comparison detects (Welch), beside the
    // 0.01 span the check allows.
    let power = stats::Power {
        min_effect: lpct
            .windows(2)
            .map(|w| {
                let (se, df) = stats::welch(
                    stats::se(w[0].1),
                    w[0].1.repetitions,
                    stats::se(w[1].1),
                    w[1].1.repetitions,
                );
                stats::min_detectable_effect(se, df)
            })
            .fold(0.0, f64::max),
        repetitions: lpct.iter().map(|p| p.1.repetitions).min().unwrap_or(0),
        claimed_effect: Some(0.01),
    };
    let pairs: Vec<(f64, f64, f64)> = lpct.iter().map(|(e, a, q)| (*e, a.mean, *q)).collect();
    let (lo, hi) = pairs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, a, _)| {
            (lo.min(*a), hi.max(*a))
        });
    let detail = pairs
        .iter()
        .map(|(e, a, q)| format!("ε {e}: LPCT {a:.3}, LPCT-Q {q:.3}"))
        .collect::<Vec<_>>()
        .join("; ");
    Some(Check::new(
        "§7.3 on synthetic data: with strong public data LPCT is flat in ε (Fig. 4(b), ε ≤ 2, span ≤ 0.01)",
        hi - lo <= 0.01,
        detail,
    )
    .with_power(power))
}

/// Honest selection (no test set; `docs/deviations.md#lpct-hyperparameters-chosen-on-test-accuracy`), reported without a target beside the oracle: the
/// `dpfair fit lpct` defaults on Diabetes and on Fig. 9's synthetic setting. The check only
/// fails if a value is missing.
fn honest(rows: &[Summary]) -> Option<Check> {
    let mut parts = Vec::new();
    for (theory, oracle) in [("lpct-m-theory", "lpct-m"), ("lpct-c-theory", "lpct-c")] {
        for e in epsilons(rows, "diabetes", theory) {
            let t = find(rows, "diabetes", theory, e, &[])?;
            let o = find(rows, "diabetes", oracle, e, &[]);
            parts.push(format!(
                "Diabetes {theory} ε {e}: {} (oracle {})",
                fmt(t),
                o.map_or("-".into(), fmt)
            ));
        }
    }
    if let Some(t) = find(rows, "fig9", "lpct-theory", 2.0, &[("n_p", "10000")]) {
        let o = find(rows, "fig9", "lpct", 2.0, &[("n_p", "10000")]);
        parts.push(format!(
            "synthetic (10⁴, 50) ε 2: {} (oracle {})",
            fmt(t),
            o.map_or("-".into(), fmt)
        ));
    }
    if parts.is_empty() {
        return None;
    }
    Some(
        Check::new(
            "Honest selection (Theorem 4 defaults, no test-set tuning), reported without a target",
            true,
            parts.join("; "),
        )
        // A listing, not a statistical claim.
        .exact(),
    )
}
