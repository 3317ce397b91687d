//! The two-sample threshold auditor: a high-confidence *lower* bound on the ε a mechanism
//! actually spends, from samples of its output on two neighbouring inputs (in the spirit of
//! DP-Sniper, Bichsel et al. 2021, and DP-Auditorium, Kong et al. 2024).
//!
//! # Method
//! The mechanism runs `trials` times on each input (outputs projected to one real number by the
//! caller). Each sample is split in halves:
//! 1. **Selection half**: among threshold events E = {y ≥ t} and {y ≤ t} (t at the pooled
//!    sample's quantiles) and both orders of the inputs (a, b), pick the one with the largest
//!    plug-in bound ln((p̂_a(E) − δ)/p̂_b(E)).
//! 2. **Estimation half** (independent of the choice): Clopper–Pearson bounds at level α/2 each,
//!    a lower bound L_a on P_a(E) and an upper bound U_b on P_b(E), and
//!    ε_lower = ln((L_a − δ)/U_b)  (0 when L_a ≤ δ).
//!
//! **How δ enters.** (ε, δ)-DP means P_a(E) ≤ e^ε·P_b(E) + δ for every event E, i.e.
//! ε ≥ ln((P_a(E) − δ)/P_b(E)). With probability ≥ 1 − α both Clopper–Pearson bounds hold (union
//! bound), and then ε_lower ≤ that right-hand side ≤ ε. So **a correct (ε, δ)-DP mechanism yields
//! ε_lower > ε with probability at most α**; an ε_lower above the claimed ε is a violation
//! proven at confidence 1 − α.
//!
//! # Power
//! With n = trials/2 estimation samples per input, ε_lower is about
//! ln((p_a − z·√(p_a(1−p_a)/n) − δ)/(p_b + z·√(p_b(1−p_b)/n))) for the best threshold event
//! (z ≈ 2.8 for α = 0.01); [`expected_lower_bound`] computes it from the exact probabilities
//! with the counts at their expectations. For the violations the tests plant (α = 0.01):
//!
//! | violation (claimed ε) | true ε at the best threshold | trials per input | ε_lower |
//! |---|---|---|---|
//! | Laplace at half its scale, Δ = 1 (ε = 1) | 2 | 2·10⁴ | 1.88 |
//! | Laplace at half its scale, Δ = 1 (ε = 1) | 2 | 2·10³ | 1.62 |
//! | Laplace at half its scale, Δ = 1 (ε = 1) | 2 | 500 | > 1 (caught) |
//! | Gaussian ignoring its sensitivity: σ for Δ = 1, actual Δ = 10 (ε = 0.5, δ = 1e-5) | ≫ 1 | 2·10⁴ | 2.11 |
//!
//! (Checked by `documented_power_table_holds` in `tests/audit.rs`.)
//!
//! It catches violations that show in a one-dimensional threshold event and whose probability
//! ratio exceeds e^ε by more than the sampling error: about ε_true − ε ≳ 3/√(n·p_b) at event
//! probability p_b. It does not see violations confined to events of probability ≲ 10/n
//! (e.g. a δ-sized failure), nor ones visible only in several output coordinates jointly unless
//! the caller's projection exposes them. A pass is evidence, never a proof of privacy.

use crate::Noise;
use crate::error::{PrivacyError, Result, invalid};
use serde::{Deserialize, Serialize};
use statrs::function::beta::beta_reg;

/// Which threshold event, for which order of the two inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// true: E = {y ≥ threshold}; false: E = {y ≤ threshold}.
    pub upper: bool,
    pub threshold: f64,
    /// The input whose probability is bounded below (0 or 1); the other is bounded above.
    pub first: usize,
}

/// The auditor's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditReport {
    /// Lower bound on ε, valid with probability ≥ `confidence`.
    pub epsilon_lower: f64,
    pub confidence: f64,
    pub delta: f64,
    pub event: Event,
    /// Estimation-half counts of the event: (under `first`, under the other input), out of `n`.
    pub counts: (usize, usize),
    pub n: usize,
}

/// Clopper–Pearson one-sided bounds: a level-`a` lower bound on p from k successes in n trials
/// (the a-quantile of Beta(k, n − k + 1); 0 when k = 0), and the level-`a` upper bound (the
/// (1 − a)-quantile of Beta(k + 1, n − k); 1 when k = n).
pub fn clopper_pearson(k: usize, n: usize, a: f64) -> Result<(f64, f64)> {
    if n == 0 || k > n {
        return Err(invalid(
            "n",
            format!("need 0 ≤ k ≤ n, n > 0; got k = {k}, n = {n}"),
        ));
    }
    if !(a > 0.0 && a < 1.0) {
        return Err(invalid("alpha", format!("must be in (0, 1), got {a}")));
    }
    let (kf, nf) = (k as f64, n as f64);
    let lower = if k == 0 {
        0.0
    } else {
        beta_quantile(kf, nf - kf + 1.0, a)
    };
    let upper = if k == n {
        1.0
    } else {
        beta_quantile(kf + 1.0, nf - kf, 1.0 - a)
    };
    Ok((lower, upper))
}

/// The p-quantile of Beta(a, b), by bisection on the regularised incomplete beta function (to
/// 1e-15; monotone, so bisection cannot fail).
pub(crate) fn beta_quantile(a: f64, b: f64, p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if beta_reg(a, b, mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-15 {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// ln((L_a − δ)/U_b) with Clopper–Pearson bounds at level α/2 each; 0 when L_a ≤ δ.
fn bound(ka: usize, kb: usize, n: usize, delta: f64, alpha: f64) -> Result<f64> {
    let (la, _) = clopper_pearson(ka, n, alpha / 2.0)?;
    let (_, ub) = clopper_pearson(kb, n, alpha / 2.0)?;
    Ok(if la > delta {
        ((la - delta) / ub).ln().max(0.0)
    } else {
        0.0
    })
}

/// The ε_lower the auditor reports, in expectation, when the chosen event has probabilities
/// `p_a`, `p_b` under the two inputs and each has `n` estimation samples (counts rounded to
/// their expectations). For planning trial counts.
pub fn expected_lower_bound(p_a: f64, p_b: f64, n: usize, delta: f64, alpha: f64) -> Result<f64> {
    let ka = (p_a * n as f64).round() as usize;
    let kb = (p_b * n as f64).round() as usize;
    bound(ka.min(n), kb.min(n), n, delta, alpha)
}

/// Audits `mechanism`, called as `mechanism(input, noise)` with `input` ∈ {0, 1} naming the two
/// neighbouring data sets and returning the released value projected to one real number. Runs it
/// `trials` times on each input (`trials` ≥ 20) and returns a lower bound on ε at `delta`, valid
/// with probability ≥ 1 − `alpha` (see the module docs for the method and its power).
pub fn audit<F>(
    noise: &mut Noise,
    trials: usize,
    delta: f64,
    alpha: f64,
    mut mechanism: F,
) -> Result<AuditReport>
where
    F: FnMut(usize, &mut Noise) -> Result<f64>,
{
    if trials < 20 {
        return Err(invalid("trials", format!("need at least 20, got {trials}")));
    }
    if !(0.0..1.0).contains(&delta) {
        return Err(invalid("delta", format!("must be in [0, 1), got {delta}")));
    }
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(invalid("alpha", format!("must be in (0, 1), got {alpha}")));
    }
    let mut samples = [Vec::with_capacity(trials), Vec::with_capacity(trials)];
    for (input, s) in samples.iter_mut().enumerate() {
        for i in 0..trials {
            let y = mechanism(input, noise)?;
            if y.is_nan() {
                return Err(invalid(
                    "mechanism",
                    format!("returned NaN (input {input}, trial {i})"),
                ));
            }
            s.push(y);
        }
    }
    let half = trials / 2;
    let select: [Vec<f64>; 2] = [sorted(&samples[0][..half]), sorted(&samples[1][..half])];
    let estimate: [Vec<f64>; 2] = [
        sorted(&samples[0][half..2 * half]),
        sorted(&samples[1][half..2 * half]),
    ];

    // Candidate thresholds: the pooled selection sample's quantiles (and its distinct values
    // when there are few, e.g. discrete outputs).
    let mut pooled: Vec<f64> = select[0].iter().chain(&select[1]).copied().collect();
    pooled.sort_by(f64::total_cmp);
    pooled.dedup();
    const CANDIDATES: usize = 200;
    let thresholds: Vec<f64> = if pooled.len() <= CANDIDATES {
        pooled
    } else {
        (0..CANDIDATES)
            .map(|i| pooled[i * (pooled.len() - 1) / (CANDIDATES - 1)])
            .collect()
    };

    let mut best: Option<(f64, Event)> = None;
    for &t in &thresholds {
        for upper in [true, false] {
            let c = [count(&select[0], t, upper), count(&select[1], t, upper)];
            for first in [0usize, 1] {
                let score = bound(c[first], c[1 - first], half, delta, alpha)?;
                if best.as_ref().is_none_or(|(s, _)| score > *s) {
                    best = Some((
                        score,
                        Event {
                            upper,
                            threshold: t,
                            first,
                        },
                    ));
                }
            }
        }
    }
    let (_, event) = best.ok_or(PrivacyError::Numerical {
        what: "audit",
        reason: "no candidate event".into(),
    })?;
    let ka = count(&estimate[event.first], event.threshold, event.upper);
    let kb = count(&estimate[1 - event.first], event.threshold, event.upper);
    Ok(AuditReport {
        epsilon_lower: bound(ka, kb, half, delta, alpha)?,
        confidence: 1.0 - alpha,
        delta,
        event,
        counts: (ka, kb),
        n: half,
    })
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// #{y ≥ t} (upper) or #{y ≤ t} in a sorted sample.
fn count(sorted: &[f64], t: f64, upper: bool) -> usize {
    if upper {
        sorted.len() - sorted.partition_point(|y| *y < t)
    } else {
        sorted.partition_point(|y| *y <= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clopper_pearson_brackets_the_proportion() {
        let (lo, hi) = clopper_pearson(50, 100, 0.025).unwrap();
        // Exact two-sided 95% CP interval for 50/100 is (0.3983, 0.6017).
        assert!(
            (lo - 0.3983).abs() < 1e-3 && (hi - 0.6017).abs() < 1e-3,
            "{lo} {hi}"
        );
        assert_eq!(clopper_pearson(0, 10, 0.05).unwrap().0, 0.0);
        assert_eq!(clopper_pearson(10, 10, 0.05).unwrap().1, 1.0);
        assert!(clopper_pearson(11, 10, 0.05).is_err());
    }
}
