//! The one-run audit of Steinke, Nasr & Jagielski (2023), *Privacy auditing with one (1)
//! training run* (NeurIPS 2023).
//!
//! # Procedure
//! 1. m canaries; canary i's coin Sᵢ ∈ {in, out} is a fair coin, independent of everything else
//!    ([`inclusion_coins`], the audit's own seeded randomness). "In" and "out" are the two sides
//!    of one neighbouring step: for add/remove neighbours the canary is in the data or not; for
//!    replace-one neighbours it is present in one of two versions (e.g. its label flipped).
//! 2. One training on the data with the coins applied.
//! 3. A score per canary (larger: more likely "in"), computed from the released model only.
//! 4. Guesses: "in" for the k highest scores, "out" for the k lowest, abstain on the rest
//!    (r = 2k guesses); v of them are correct.
//!
//! # The bound (their main theorem, with δ as in the paper)
//! If the training is (ε, δ)-DP with respect to each single coin, then for every v
//!
//! P[W ≥ v] ≤ β(ε, v) + 2mδ · max_{1 ≤ i ≤ v} P[v − i ≤ B < v] / i,   B ~ Binomial(r, q),
//!
//! with q = e^ε/(1 + e^ε) (the accuracy of ε-randomised response) and β(ε, v) = P[B ≥ v].
//! The right-hand side, p(ε), is a p-value for "the training is (ε, δ)-DP" given v correct
//! guesses; it increases with ε. The reported lower bound is the largest ε with p(ε) ≤ 1 − c
//! (c the confidence): every smaller ε is rejected at level 1 − c, so **a training that is
//! (ε, δ)-DP reports ε_lower > ε with probability at most 1 − c**. Several guess counts k are
//! tried on the same scores; the level is split between them (Bonferroni), so the best of them is
//! still valid at confidence c.
//!
//! # Power
//! The bound cannot exceed about ln(r/3) (all r guesses correct) and needs many canaries that the
//! model separates well. For planning, [`expected_lower_bound_gaussian`] gives the bound when
//! "in" scores are N(μ, 1) and "out" scores N(0, 1) (a Gaussian-mechanism canary with
//! signal-to-noise μ), with the counts at their expectations.

use crate::Noise;
use crate::error::{Result, invalid};
use rand_core::Rng;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};
use statrs::function::factorial::ln_binomial;

/// The result of one one-run audit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OneRunReport {
    /// Canaries m.
    pub canaries: usize,
    /// Guesses r = 2k of the best guess count.
    pub guesses: usize,
    /// Correct guesses v among them.
    pub correct: usize,
    /// Lower bound on ε, valid with probability ≥ `confidence` (over the coins and the training).
    pub epsilon_lower: f64,
    pub confidence: f64,
    pub delta: f64,
}

/// m fair coins (true: canary "in"), from the audit's own random stream.
pub fn inclusion_coins(m: usize, noise: &mut Noise) -> Vec<bool> {
    (0..m).map(|_| noise.next_u64() & 1 == 1).collect()
}

/// ln P[B = k] for B ~ Binomial(r, q).
fn ln_pmf(r: usize, k: usize, q: f64) -> f64 {
    let lq = if k == 0 { 0.0 } else { k as f64 * q.ln() };
    let lp = if k == r {
        0.0
    } else {
        (r - k) as f64 * (-q).ln_1p()
    };
    ln_binomial(r as u64, k as u64) + lq + lp
}

/// p(ε) of the module doc: the p-value of v correct guesses out of r, with m canaries, under
/// the hypothesis that the training is (ε, δ)-DP. In [0, 1].
pub fn p_value(m: usize, r: usize, v: usize, epsilon: f64, delta: f64) -> Result<f64> {
    if !(v <= r && r <= m) {
        return Err(invalid(
            "guesses",
            format!("need v ≤ r ≤ m, got v = {v}, r = {r}, m = {m}"),
        ));
    }
    if epsilon.is_nan() || epsilon < 0.0 {
        return Err(invalid("epsilon", format!("must be ≥ 0, got {epsilon}")));
    }
    if !(0.0..1.0).contains(&delta) {
        return Err(invalid("delta", format!("must be in [0, 1), got {delta}")));
    }
    // q = e^ε/(1 + e^ε), computed without overflow.
    let q = 1.0 / (1.0 + (-epsilon).exp());
    let pmf: Vec<f64> = (0..=r).map(|k| ln_pmf(r, k, q).exp()).collect();
    let tail: f64 = pmf[v..].iter().sum();
    let mut window = 0.0;
    let mut worst = 0.0f64;
    for i in 1..=v {
        window += pmf[v - i];
        worst = worst.max(window / i as f64);
    }
    Ok((tail + 2.0 * m as f64 * delta * worst).min(1.0))
}

/// The largest ε (to 1e-6) with p(ε) ≤ `level`: the one-run lower bound at confidence
/// 1 − `level`. 0 when even ε = 0 is not rejected.
pub fn epsilon_lower_bound(m: usize, r: usize, v: usize, delta: f64, level: f64) -> Result<f64> {
    if !(level > 0.0 && level < 1.0) {
        return Err(invalid("level", format!("must be in (0, 1), got {level}")));
    }
    if p_value(m, r, v, 0.0, delta)? > level {
        return Ok(0.0);
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while p_value(m, r, v, hi, delta)? <= level {
        lo = hi;
        hi *= 2.0;
        if hi > 1e3 {
            return Ok(lo);
        }
    }
    while hi - lo > 1e-6 {
        let mid = 0.5 * (lo + hi);
        if p_value(m, r, v, mid, delta)? <= level {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// The default guess counts for m canaries: k = m/20, m/10, m/5 and m/2.5 per side (r = m/10 to
/// 4m/5 guesses), those ≥ 1.
pub fn default_guess_counts(m: usize) -> Vec<usize> {
    let mut ks: Vec<usize> = [20, 10, 5]
        .iter()
        .map(|d| m / d)
        .chain([2 * m / 5])
        .filter(|&k| k >= 1)
        .collect();
    ks.dedup();
    ks
}

/// Audits one training from its canary `scores` (larger: more likely "in") and the true coins:
/// for each k of `guess_counts` (default [`default_guess_counts`]) guesses "in" for the k highest
/// scores and "out" for the k lowest, and returns the best lower bound, each computed at level
/// (1 − `confidence`)/#counts (module doc). Ties are broken by canary index (fixed before the
/// coins), so they cannot favour the truth.
pub fn audit_scores(
    scores: &[f64],
    included: &[bool],
    delta: f64,
    confidence: f64,
    guess_counts: Option<&[usize]>,
) -> Result<OneRunReport> {
    let m = scores.len();
    if included.len() != m {
        return Err(invalid(
            "included",
            format!("{} coins for {m} scores", included.len()),
        ));
    }
    if m < 2 {
        return Err(invalid(
            "scores",
            format!("need at least 2 canaries, got {m}"),
        ));
    }
    if let Some(i) = scores.iter().position(|s| s.is_nan()) {
        return Err(invalid("scores", format!("canary {i} has a NaN score")));
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(invalid(
            "confidence",
            format!("must be in (0, 1), got {confidence}"),
        ));
    }
    let defaults = default_guess_counts(m);
    let ks = guess_counts.unwrap_or(&defaults);
    if ks.is_empty() || ks.iter().any(|&k| k == 0 || 2 * k > m) {
        return Err(invalid(
            "guess_counts",
            format!(
                "each k must be in 1..={} for {m} canaries, got {ks:?}",
                m / 2
            ),
        ));
    }
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let level = (1.0 - confidence) / ks.len() as f64;
    let mut best: Option<OneRunReport> = None;
    for &k in ks {
        let top = order[..k].iter().filter(|&&i| included[i]).count();
        let bottom = order[m - k..].iter().filter(|&&i| !included[i]).count();
        let (r, v) = (2 * k, top + bottom);
        let eps = epsilon_lower_bound(m, r, v, delta, level)?;
        if best.as_ref().is_none_or(|b| eps > b.epsilon_lower) {
            best = Some(OneRunReport {
                canaries: m,
                guesses: r,
                correct: v,
                epsilon_lower: eps,
                confidence,
                delta,
            });
        }
    }
    Ok(best.expect("at least one guess count"))
}

/// The lower bound [`audit_scores`] reports, in expectation, when m canaries have "in" scores
/// N(μ, 1) and "out" scores N(0, 1), m/2 of each, with the correct counts at their expectations
/// (rounded). For planning canary counts and stating an audit's power.
pub fn expected_lower_bound_gaussian(
    mu: f64,
    m: usize,
    delta: f64,
    confidence: f64,
    guess_counts: Option<&[usize]>,
) -> Result<f64> {
    let z = Normal::standard();
    let half = m as f64 / 2.0;
    let defaults = default_guess_counts(m);
    let ks = guess_counts.unwrap_or(&defaults);
    let level = (1.0 - confidence) / ks.len() as f64;
    let mut best = 0.0f64;
    for &k in ks {
        // The threshold t above which k canaries are expected: half·(Φ̄(t − μ) + Φ̄(t)) = k.
        let (mut lo, mut hi) = (-20.0f64, 20.0 + mu);
        for _ in 0..200 {
            let t = 0.5 * (lo + hi);
            if half * (z.sf(t - mu) + z.sf(t)) > k as f64 {
                lo = t;
            } else {
                hi = t;
            }
        }
        let t = 0.5 * (lo + hi);
        let correct_top = half * z.sf(t - mu);
        let v = ((2.0 * correct_top).round() as usize).min(2 * k);
        best = best.max(epsilon_lower_bound(m, 2 * k, v, delta, level)?);
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_value_is_the_binomial_tail_at_delta_zero() {
        // r = 10 guesses, all correct, ε = 0: P[Bin(10, 1/2) ≥ 10] = 2^-10.
        let p = p_value(100, 10, 10, 0.0, 0.0).unwrap();
        assert!((p - 2f64.powi(-10)).abs() < 1e-15, "{p}");
        // v = 0 is never evidence: p = 1.
        assert_eq!(p_value(100, 10, 0, 0.0, 0.0).unwrap(), 1.0);
        assert!(p_value(5, 10, 3, 1.0, 0.0).is_err());
    }

    #[test]
    fn all_correct_guesses_bound_follows_the_closed_form() {
        // δ = 0, r = v: p(ε) = q^r, so the bound solves q = level^(1/r), ε = ln(q/(1 − q)).
        let (r, level) = (200usize, 0.05f64);
        let q = level.powf(1.0 / r as f64);
        let want = (q / (1.0 - q)).ln();
        let got = epsilon_lower_bound(1000, r, r, 0.0, level).unwrap();
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    }

    #[test]
    fn delta_term_only_lowers_the_bound() {
        let a = epsilon_lower_bound(1000, 200, 190, 0.0, 0.05).unwrap();
        let b = epsilon_lower_bound(1000, 200, 190, 1e-4, 0.05).unwrap();
        assert!(b <= a && b > 0.0, "{a} {b}");
    }
}
