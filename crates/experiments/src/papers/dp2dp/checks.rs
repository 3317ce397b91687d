//! The report's checks for DP2DP (Say et al.'s theory and the claims in their text): the in-sample KKT bound of the exact
//! dual solve, the N^{−1/2} rate of the test unfairness, the paper's "close to non-private"
//! claim on Fig. 1, and the claim that DP2DP's points are at or beyond the stored baselines'
//! curves (Figs. 2–4).

use super::baselines;
use super::{DENIS, NON_PRIVATE, PRIVATE, PRIVATE_PAPER, PRIVATE_SGD, PRIVATE_THM41, RATE};
use crate::Check;
use crate::aggregate::Summary;
use crate::present;
use crate::stats::{self, Power};
use crate::verdict::{self, Tally};

/// Every check whose rows are present (a data set that was not run gives no check).
pub fn all(rows: &[Summary], real: &[&str]) -> Vec<Check> {
    let mut out = Vec::new();
    out.extend(kkt(rows));
    out.extend(rate(rows));
    out.extend(close_to_non_private(rows, PRIVATE).map(|c| {
        c.explained_by(
            "dp2dp-strict-series-phase-2",
            "with dpfair's Phase 2 (the mixture of the iterates' rules, steps scaled by min π̄) \
             the unfairness gap closes; the accuracy gap is mostly Phase 1's output perturbation \
             at ε = 0.46 (K = 6, d = 20): alone it errs 0.29 (4 seeds, examples/dp2dp_cell.rs) \
             against the non-private DP2DP's 0.21 at ρ = 0.2",
        )
    }));
    out.extend(close_to_non_private(rows, PRIVATE_PAPER).map(|c| {
        c.explained_by(
            "dp2dp-noise-on-the-sum",
            "Algorithm 1 adds its noise to the sum (multiplier σ_SGD/Δ); the paper's \
             closeness matches Theorem 4.1's multiplier read literally (b = 128 times less \
             noise, series dp2dp-paper-thm41-noise), and the remaining accuracy gap is Phase \
             1's output perturbation",
        )
    }));
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
                         T = 1,000 noisy dual steps leaves Û ≈ 0.07–0.11 (--quick)"
                    } else if m == PRIVATE && d.starts_with("parkinsons") && eps == 1.0 {
                        // Issue #47: "Parkinson's ε = 1 at ρ = 0.04 reads 0.053" (--quick).
                        "the output-perturbed Phase 1 is the weaker base model: on Parkinson's at \
                         ε = 1, alone, it errs 0.070 (Û 0.035) against DP-FERMI λ = 0's 0.047, \
                         and the noisy dual adds 1.5 points; Û does not move with ρ (0.039, \
                         0.037, 0.038 at ρ = 0, 0.04, 0.08), and --quick's 0.053 at ρ = 0.04 is \
                         seeds 400–401's 0.016 and 0.091: over seeds 400–429 it is 0.0366 ± \
                         0.0091 (95 % t), within ρ, a sampling miss (30 seeds of these cells, \
                         `DP2DP_EPS=1 DP2DP_SEEDS=30 DP2DP_VERBOSE=1 cargo run --release -p \
                         dpfair-experiments --example dp2dp_cell`)"
                    } else if m == PRIVATE && d.starts_with("parkinsons") {
                        "the output-perturbed Phase 1 is the weaker base model: on Parkinson's, \
                         alone, it errs 0.132 at ε = 0.5 and 0.068 at ε = 1 (Û 0.040, 0.050; 6 \
                         seeds of these cells, examples/dp2dp_cell.rs) against DP-FERMI λ = 0's \
                         0.047; the noisy dual adds 1–2 points"
                    } else if m == PRIVATE && d.starts_with("credit") {
                        "the output-perturbed Phase 1 is the weaker base model: on Credit, \
                         alone, it errs 0.202 at ε = 0.5 and 0.203 at ε = 1 (6 seeds of these \
                         cells, examples/dp2dp_cell.rs) against DP-FERMI λ = 0's 0.189; the \
                         dual adds 0.1–0.2 points (Û 0.004–0.017 for ρ ≤ 0.025)"
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
                r.setting
                    .fairness_level
                    .map_or("-".into(), present::setting),
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
    )
    // A bound on every run, not on a mean: no sampling allowance to state.
    .exact())
}

/// Least-squares slope of ln y on ln x and its standard error from the residuals,
/// `√(Σr²/(k−2) / Σ(ln x − mean)²)` (`k` points; NaN below 3 points).
pub fn log_log_fit(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let (lx, ly): (Vec<f64>, Vec<f64>) = points.iter().map(|(x, y)| (x.ln(), y.ln())).unzip();
    let mx = lx.iter().sum::<f64>() / n;
    let my = ly.iter().sum::<f64>() / n;
    let sxy: f64 = lx.iter().zip(&ly).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = lx.iter().map(|x| (x - mx).powi(2)).sum();
    let slope = sxy / sxx;
    let rss: f64 = lx
        .iter()
        .zip(&ly)
        .map(|(x, y)| (y - my - slope * (x - mx)).powi(2))
        .sum();
    let se = if points.len() > 2 {
        (rss / (n - 2.0) / sxx).sqrt()
    } else {
        f64::NAN
    };
    (slope, se)
}

/// the unfairness rate of Say et al.'s theory: the slope of ln(E[Û] − ρ) on ln N is −0.5 ± 0.2.
fn rate(rows: &[Summary]) -> Option<Check> {
    let rate_rows = || metric(rows, "unfairness_u").filter(|r| r.setting.dataset == RATE);
    let repetitions = rate_rows().map(|r| r.repetitions).min().unwrap_or(0);
    let mut points: Vec<(f64, f64)> = rate_rows()
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
    let (slope, slope_se) = log_log_fit(&points);
    let shown: Vec<String> = points
        .iter()
        .map(|(n, e)| format!("N = {n}: {e:.4}"))
        .collect();
    // Power: the slope's SE from the fit's residuals (k − 2 degrees of freedom); the band
    // ±0.2 is the effect the check must resolve (a slope 0.2 off −0.5 fails it).
    let df = points.len() as f64 - 2.0;
    let power = Power {
        min_effect: stats::min_detectable_effect(slope_se, df),
        repetitions,
        claimed_effect: Some(0.2),
    };
    Some(
        Check::new(
            "the unfairness rate of Say et al.'s theory: log-log slope of E[Û] − ρ against N is −0.5 ± 0.2",
            (-0.7..=-0.3).contains(&slope),
            format!(
                "slope {slope:.3} (SE {slope_se:.3}, {df} df); {}",
                shown.join(", ")
            ),
        )
        .with_power(power),
    )
}

/// Our reading of "very close" (Fig. 1 left): within 0.05 in accuracy and in Û.
const CLOSE: f64 = 0.05;

/// Say et al.'s text (Fig. 1 left): the private DP2DP "remains very close" to the non-private one; here:
/// within 0.05 accuracy and 0.05 unfairness at every ρ (our reading of "very close"), for the
/// private series `method` (strict or paper accounting).
fn close_to_non_private(rows: &[Summary], method: &str) -> Option<Check> {
    let mut worst = (0.0f64, 0.0f64);
    let mut n = 0;
    // Each gap is judged by `verdict::compare` against the band 0.05 with the 95 % half-width
    // of the difference, `t_{0.975, ν}·SE` (Welch): a miss when the gap exceeds the band by
    // more than the half-width, underpowered when the half-width is wider than the band.
    let mut tally = Tally::default();
    // The largest minimal detectable gap of the compared pairs (Welch) and their fewest
    // repetitions: a gap of 0.05 is resolved only where the detectable gap is below it.
    let (mut detectable, mut repetitions) = (0.0f64, usize::MAX);
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
        let (se, df) = stats::welch(stats::se(r), r.repetitions, stats::se(np), np.repetitions);
        detectable = detectable.max(stats::min_detectable_effect(se, df));
        repetitions = repetitions.min(r.repetitions.min(np.repetitions));
        let gap = (r.mean - np.mean).abs();
        tally.add(verdict::compare(
            gap,
            stats::t_quantile(0.975, df) * se,
            CLOSE,
        ));
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
            tally.miss == 0 && tally.underpowered == 0,
            format!(
                "largest gap: accuracy {:.4}, unfairness {:.4}; {} of {n} gaps within 0.05, {} \
                 beyond it by more than their 95 % half-width, {} undecided",
                worst.0, worst.1, tally.within, tally.miss, tally.underpowered
            ),
        )
        .undecided_if(tally.miss == 0 && tally.underpowered > 0)
        .with_power(Power {
            min_effect: detectable,
            repetitions,
            claimed_effect: Some(CLOSE),
        })
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
    let (mut total, mut within_intervals_only) = (0, 0);
    // Each comparison holds one of our means against a stored number (no spread): its
    // detectable shortfall is that of a one-sample t test on our n repetitions.
    let detectable = ours
        .iter()
        .flat_map(|(e, u)| [*e, *u])
        .map(|s| stats::min_detectable_effect(stats::se(s), s.repetitions as f64 - 1.0))
        .fold(0.0, f64::max);
    let repetitions = ours.iter().map(|(e, _)| e.repetitions).min().unwrap_or(0);
    for m in baselines::METHODS {
        for b in baselines::series(dataset, eps, m) {
            total += 1;
            let hit = ours
                .iter()
                .any(|(e, u)| u.mean <= b.unfairness + u.ci95 && e.mean <= b.error + e.ci95);
            // Dominated by a mean point, or only within our half-widths (undecided).
            let by_means = ours
                .iter()
                .any(|(e, u)| u.mean <= b.unfairness && e.mean <= b.error);
            within_intervals_only += usize::from(hit && !by_means);
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
                present::setting(e.setting.fairness_level.unwrap_or(0.0)),
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
            "{} of {total} baseline points dominated ({within_intervals_only} only within our \
             half-widths); not dominated: {}; ours (error, Û): {}",
            total - missed.len(),
            if missed.is_empty() {
                "none".into()
            } else {
                missed.join(", ")
            },
            best.join(", ")
        ),
    )
    // A baseline point reached only within our half-widths is not decided by the run.
    .undecided_if(missed.is_empty() && within_intervals_only > 0)
    .with_power(Power {
        min_effect: detectable,
        repetitions,
        claimed_effect: None,
    }))
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
        assert!((log_log_fit(&pts).0 + 0.5).abs() < 1e-12);
    }

    /// The slope's SE by hand: ln-points (0, 0), (1, −1), (2, −1): slope −0.5, residuals
    /// 1/6, −1/3, 1/6, so Σr² = 1/6, Σ(x − x̄)² = 2 and SE = √((1/6)/1/2) = 0.2887.
    #[test]
    fn slope_standard_error_by_hand() {
        let e = std::f64::consts::E;
        let pts = [(1.0, 1.0), (e, 1.0 / e), (e * e, 1.0 / e)];
        let (slope, se) = log_log_fit(&pts);
        assert!((slope + 0.5).abs() < 1e-12, "{slope}");
        assert!((se - (1.0f64 / 12.0).sqrt()).abs() < 1e-12, "{se}");
        // Exact power law: no residual, SE 0.
        let exact: Vec<(f64, f64)> = [1.0, 2.0, 4.0]
            .iter()
            .map(|&n: &f64| (n, n.powf(-0.5)))
            .collect();
        assert!(log_log_fit(&exact).1.abs() < 1e-12);
    }

    fn row(method: &str, rho: f64, metric: &str, mean: f64, std: f64, n: usize) -> Summary {
        let setting = crate::grid::Setting {
            dataset: "synthetic".into(),
            method: method.into(),
            accounting: "strict".into(),
            epsilon: 0.46,
            delta: 1e-5,
            fairness_level: Some(rho),
            params: crate::grid::Params::new().with("p", 0.75),
        };
        Summary::of(setting, metric, mean, std, n)
    }

    /// "Close to non-private" states the smallest gap it detects: with sd 0.02 over 4
    /// repetitions on both sides, SE = 0.01·√2, Welch ν = 6, detectable gap
    /// (t_0.95,6 + t_0.80,6)·SE = (1.943 + 0.906)·0.01414 = 0.0403 ≤ 0.05: evidence. With
    /// sd 0.05 the detectable gap (0.1007) exceeds 0.05 and the check cannot resolve it.
    #[test]
    fn closeness_states_its_power() {
        let mut rows = vec![
            row(PRIVATE, 0.0, "accuracy", 0.80, 0.02, 4),
            row(NON_PRIVATE, 0.0, "accuracy", 0.82, 0.02, 4),
        ];
        let c = close_to_non_private(&rows, PRIVATE).expect("rows");
        let p = c.power.as_ref().expect("power");
        assert!((p.min_effect - 0.0403).abs() < 5e-4, "{p:?}");
        assert!(c.passed && p.resolves_claim(), "{c:?}");
        assert_eq!(c.evidence(crate::Scale::Quick), "evidence");
        rows[0].std = 0.05;
        rows[1].std = 0.05;
        let c = close_to_non_private(&rows, PRIVATE).expect("rows");
        assert!(!c.power.as_ref().expect("power").resolves_claim(), "{c:?}");
        assert_eq!(c.evidence(crate::Scale::Quick), "smoke");
        assert_eq!(c.evidence(crate::Scale::Full), "underpowered");
        // The gap 0.02 with half-width t_{0.975,6}·0.03536 = 0.0865 > 0.05: undecided, not a
        // pass; a gap of 0.2 is 0.15 beyond the band, more than the half-width: a miss.
        assert_eq!(c.verdict(), crate::verdict::Verdict::Underpowered, "{c:?}");
        rows[0].mean = 0.62;
        let c = close_to_non_private(&rows, PRIVATE).expect("rows");
        assert_eq!(c.verdict(), crate::verdict::Verdict::Miss, "{c:?}");
    }
}
