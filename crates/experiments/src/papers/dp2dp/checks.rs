//! The report's checks for DP2DP (Say et al.'s theory and the claims in their text): the in-sample KKT bound of the exact
//! dual solve, the N^{−1/2} rate of the test unfairness, the paper's "close to non-private"
//! claim on Fig. 1, and the claim that DP2DP's points are at or beyond the stored baselines'
//! curves (Figs. 2–4).

use super::baselines;
use super::{DENIS, NON_PRIVATE, PRIVATE, PRIVATE_PAPER, PRIVATE_SGD, PRIVATE_THM41, RATE};
use crate::Check;
use crate::aggregate::Summary;
use dpfair_privacy::ledger::readable as fmt_f64;

/// Every check whose rows are present (a data set that was not run gives no check).
pub fn all(rows: &[Summary], real: &[&str]) -> Vec<Check> {
    let mut out = Vec::new();
    out.extend(kkt(rows));
    out.extend(rate(rows));
    for m in [PRIVATE, PRIVATE_PAPER] {
        out.extend(close_to_non_private(rows, m).map(|c| {
            c.explained_by(
                "dp2dp-noise-on-the-sum",
                "Algorithm 1 adds its noise to the sum (multiplier σ_SGD/Δ); the paper's \
                 closeness matches Theorem 4.1's multiplier read literally (b = 128 times less \
                 noise, series dp2dp-paper-thm41-noise), and the remaining accuracy gap is Phase \
                 1's output perturbation",
            )
        }));
    }
    out.extend(close_to_non_private(rows, PRIVATE_THM41).map(|c| {
        c.explained_by(
            "dp2dp-phase-1-mechanism",
            "with Theorem 4.1's noise the unfairness gap closes; the accuracy gap is Phase 1's \
             output perturbation (Λ = 1e-2, R = 1), which the paper does not specify",
        )
    }));
    for d in real {
        for eps in [0.5, 1.0] {
            for m in [PRIVATE, PRIVATE_THM41, PRIVATE_SGD] {
                out.extend(beyond_baselines(rows, d, eps, m).map(|c| {
                    let why = if m == PRIVATE_SGD && d.starts_with("parkinsons") {
                        "the stored baselines are not like for like (their δ = 1/n², 75/25 \
                         split, 200 epochs); on Parkinson's the pool of N = 1,175 rows with \
                         T = 1,000 noisy dual steps leaves Û ≈ 0.10–0.13"
                    } else if m == PRIVATE_SGD {
                        "the stored baselines are not like for like (their δ = 1/n², 75/25 \
                         split, 200 epochs)"
                    } else {
                        "the output-perturbed Phase 1 is the weaker base model: the \
                         unconstrained end of our curves sits 2–3 points of error above \
                         DP-FERMI λ = 0 (the DP-SGD Phase 1 series closes most of it)"
                    };
                    let anchor = if m == PRIVATE_SGD {
                        "dp2dp-stored-baselines"
                    } else {
                        "dp2dp-phase-1-mechanism"
                    };
                    c.explained_by(anchor, why)
                }));
            }
        }
    }
    out
}

fn metric<'a>(rows: &'a [Summary], name: &'a str) -> impl Iterator<Item = &'a Summary> + 'a {
    rows.iter().filter(move |r| r.metric == name)
}

/// the KKT bound of Say et al.'s dual: every Denis cell met ρ + (K − 1)/N_min (+ 2/N_min slack) in sample.
fn kkt(rows: &[Summary]) -> Option<Check> {
    let met: Vec<&Summary> = metric(rows, "kkt_bound_met")
        .filter(|r| r.setting.method == DENIS)
        .collect();
    if met.is_empty() {
        return None;
    }
    let bad: Vec<String> = met
        .iter()
        .filter(|r| r.mean < 1.0)
        .map(|r| {
            format!(
                "{} ρ = {} {}: {:.0}% of runs",
                r.setting.dataset,
                r.setting.fairness_level.map_or("-".into(), fmt_f64),
                r.setting.params,
                100.0 * r.mean
            )
        })
        .collect();
    Some(Check::new(
        "the KKT bound of Say et al.'s dual: exact solve's in-sample unfairness ≤ ρ + (K−1)/N_min (+2/N_min slack)",
        bad.is_empty(),
        if bad.is_empty() {
            format!("all {} settings, every run", met.len())
        } else {
            format!("missed: {}", bad.join("; "))
        },
    ))
}

/// Least-squares slope of ln y on ln x.
pub fn log_log_slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (lx, ly): (Vec<f64>, Vec<f64>) = points.iter().map(|(x, y)| (x.ln(), y.ln())).unzip();
    let mx = lx.iter().sum::<f64>() / n;
    let my = ly.iter().sum::<f64>() / n;
    let sxy: f64 = lx.iter().zip(&ly).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = lx.iter().map(|x| (x - mx).powi(2)).sum();
    sxy / sxx
}

/// the unfairness rate of Say et al.'s theory: the slope of ln(E[Û] − ρ) on ln N is −0.5 ± 0.2.
fn rate(rows: &[Summary]) -> Option<Check> {
    let mut points: Vec<(f64, f64)> = metric(rows, "unfairness_u")
        .filter(|r| r.setting.dataset == RATE)
        .filter_map(|r| {
            let n: f64 = r.setting.params.get_str("n")?.parse().ok()?;
            let excess = r.mean - r.setting.fairness_level.unwrap_or(0.0);
            (excess > 0.0).then_some((n, excess))
        })
        .collect();
    if points.len() < 3 {
        return None;
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let slope = log_log_slope(&points);
    let shown: Vec<String> = points
        .iter()
        .map(|(n, e)| format!("N = {n}: {e:.4}"))
        .collect();
    Some(Check::new(
        "the unfairness rate of Say et al.'s theory: log-log slope of E[Û] − ρ against N is −0.5 ± 0.2",
        (-0.7..=-0.3).contains(&slope),
        format!("slope {slope:.3}; {}", shown.join(", ")),
    ))
}

/// Say et al.'s text (Fig. 1 left): the private DP2DP "remains very close" to the non-private one; here:
/// within 0.05 accuracy and 0.05 unfairness at every ρ (our reading of "very close"), for the
/// private series `method` (strict or paper accounting).
fn close_to_non_private(rows: &[Summary], method: &str) -> Option<Check> {
    let mut worst = (0.0f64, 0.0f64);
    let mut n = 0;
    for r in rows.iter().filter(|r| {
        r.setting.dataset == "synthetic"
            && r.setting.method == method
            && (r.metric == "accuracy" || r.metric == "unfairness_u")
    }) {
        let Some(np) = rows.iter().find(|q| {
            q.setting.dataset == r.setting.dataset
                && q.setting.method == NON_PRIVATE
                && q.setting.fairness_level == r.setting.fairness_level
                && q.setting.params == r.setting.params
                && q.metric == r.metric
        }) else {
            continue;
        };
        n += 1;
        let gap = (r.mean - np.mean).abs();
        if r.metric == "accuracy" {
            worst.0 = worst.0.max(gap);
        } else {
            worst.1 = worst.1.max(gap);
        }
    }
    (n > 0).then(|| {
        Check::new(
            &format!(
                "Say et al., Fig. 1 left: {method} (ε = 0.46) within 0.05 of the non-private DP2DP \
                 (accuracy and Û, every ρ)"
            ),
            worst.0 <= 0.05 && worst.1 <= 0.05,
            format!(
                "largest gap: accuracy {:.4}, unfairness {:.4}",
                worst.0, worst.1
            ),
        )
    })
}

/// Say et al.'s text (Figs. 2–4): every stored baseline point (error_b, U_b) of the (dataset, ε) panel is
/// weakly dominated by some DP2DP point: U ≤ U_b and error ≤ error_b, each up to our 95%
/// half-width.
fn beyond_baselines(rows: &[Summary], dataset: &str, eps: f64, method: &str) -> Option<Check> {
    let ours: Vec<(&Summary, &Summary)> = metric(rows, "error")
        .filter(|r| {
            r.setting.dataset == dataset
                && r.setting.method == method
                && (r.setting.epsilon - eps).abs() < 1e-9
        })
        .filter_map(|e| {
            let u = metric(rows, "unfairness_u").find(|u| u.setting == e.setting)?;
            Some((e, u))
        })
        .collect();
    if ours.is_empty() {
        return None;
    }
    let mut missed = Vec::new();
    let mut total = 0;
    for m in baselines::METHODS {
        for b in baselines::series(dataset, eps, m) {
            total += 1;
            let hit = ours
                .iter()
                .any(|(e, u)| u.mean <= b.unfairness + u.ci95 && e.mean <= b.error + e.ci95);
            if !hit {
                missed.push(format!(
                    "{m} {} ({:.4}, {:.4})",
                    b.key, b.error, b.unfairness
                ));
            }
        }
    }
    let best = ours
        .iter()
        .map(|(e, u)| {
            format!(
                "ρ = {}: ({:.4}, {:.4})",
                fmt_f64(e.setting.fairness_level.unwrap_or(0.0)),
                e.mean,
                u.mean
            )
        })
        .collect::<Vec<_>>();
    Some(Check::new(
        &format!(
            "Say et al., {dataset}, ε = {eps}: {method} points at or beyond every stored baseline \
             point (error, Û), within our 95% half-widths"
        ),
        missed.is_empty(),
        format!(
            "{} of {total} baseline points dominated; not dominated: {}; ours (error, Û): {}",
            total - missed.len(),
            if missed.is_empty() {
                "none".into()
            } else {
                missed.join(", ")
            },
            best.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_of_a_power_law() {
        let pts: Vec<(f64, f64)> = [500.0, 1000.0, 4000.0]
            .iter()
            .map(|&n: &f64| (n, 3.0 * n.powf(-0.5)))
            .collect();
        assert!((log_log_slope(&pts) + 0.5).abs() < 1e-12);
    }
}
