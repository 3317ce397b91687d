//! Private held-out scores of a multi-class or a real target for `compare` (a binary target
//! goes through the private group report, [`dpfair_fairness::PrivateGroupReport`]). Each is one
//! or two charged releases on the held-out rows at the evaluation's ε in all, with an interval
//! at the stated level for each figure (docs/evaluation.md, "`dpfair compare`: private by
//! default"):
//!
//! * **Multi-class**: the group × label × prediction counts released once
//!   (exact discrete Laplace). Accuracy is a rate of those cells ([`rate_interval`]); DP2DP's
//!   unfairness U = max over classes c of the spread over groups of P(ŷ = c | group) takes each
//!   group × class rate at β/(K·k) (union bound), [`spread_interval`] per class, and the largest
//!   ends over classes.
//! * **Real**: with the public range [lo, hi] and c = (hi − lo)², predictions and
//!   targets clipped to it, the sum of squared errors is released with Laplace noise (ℓ1
//!   sensitivity c under replace-one) at [`MSE_SHARE`] of ε, and a group × bin histogram of
//!   the predictions over [`BINS`] equal public bins at the rest. MSE's interval: the noise's tail (β/2, at most
//!   2e^(−t/b) for the lattice Laplace of scale b) and Bernstein's bound for the sampling (β/2)
//!   with the variance bounded by c times the mean (`bernstein_interval`).
//!   The KS distance is that of the binned predictions; its interval takes the noise margin of
//!   each cumulative count (β/2 over them, [`laplace_sum_margin`]) and each group's
//!   Dvoretzky–Kiefer–Wolfowitz band at β/(2K) with the group's smallest possible count.

use super::held_out::Judged;
use crate::error::{Error, Result};
use dpfair_fairness::interval::{Interval, laplace_sum_margin, rate_interval, spread_interval};
use dpfair_privacy::mechanisms::{Laplace, histogram_scale, noisy_counts};
use dpfair_privacy::{Ledger, Noise};

/// The equal bins of the public target range that a real target's KS distance is read over.
/// Few, because a cumulative count sums the noise of its cells (ten: the KS interval excludes
/// 0 for a gap of 0.2 between groups of 1,000 rows in most draws; twenty: almost never).
pub const BINS: usize = 10;

/// The share of a real target's evaluation ε spent on the sum of squared errors; the rest goes
/// to the histogram of predictions, whose cumulative counts need more (module docs).
pub const MSE_SHARE: f64 = 1.0 / 3.0;

/// Accuracy and DP2DP's U of class predictions, privately (module docs). `n_groups` is the
/// number of declared groups; `beta` = 1 − level.
#[allow(clippy::too_many_arguments)]
pub(super) fn multiclass(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    epsilon: f64,
    beta: f64,
    (y, predicted, k): (&[u32], &[u32], usize),
    groups: &[u32],
    n_groups: usize,
) -> Result<Judged> {
    let cell = |g: usize, y: usize, p: usize| (g * k + y) * k + p;
    let mut counts = vec![0u64; n_groups * k * k];
    for ((&t, &p), &g) in y.iter().zip(predicted).zip(groups) {
        counts[cell(g as usize, t as usize, p as usize)] += 1;
    }
    let noisy = noisy_counts(ledger, noise, label, &counts, epsilon)?;
    let scale = histogram_scale(ledger.relation(), epsilon);
    // Accuracy: the diagonal cells against the others.
    let (mut right, mut wrong) = (Vec::new(), Vec::new());
    for g in 0..n_groups {
        for t in 0..k {
            for p in 0..k {
                let v = noisy[cell(g, t, p)];
                if t == p { right.push(v) } else { wrong.push(v) }
            }
        }
    }
    let accuracy = ratio(&right, &wrong);
    let accuracy_interval = rate_interval(&right, &wrong, scale, beta);
    // U: per class, the spread over groups of the rate of predicting it.
    let mut unfairness = f64::NAN;
    let (mut lower, mut upper) = (0.0f64, 0.0f64);
    for c in 0..k {
        let mut rates = Vec::new();
        let mut intervals = Vec::new();
        for g in 0..n_groups {
            let (mut yes, mut no) = (Vec::new(), Vec::new());
            for t in 0..k {
                for p in 0..k {
                    let v = noisy[cell(g, t, p)];
                    if p == c { yes.push(v) } else { no.push(v) }
                }
            }
            rates.push(ratio(&yes, &no));
            intervals.push(rate_interval(
                &yes,
                &no,
                scale,
                beta / (n_groups * k) as f64,
            ));
        }
        let spread = spread_interval(&intervals);
        lower = lower.max(spread.lower);
        upper = upper.max(spread.upper);
        let defined: Vec<f64> = rates.into_iter().filter(|r| !r.is_nan()).collect();
        if !defined.is_empty() {
            let hi = defined.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lo = defined.iter().copied().fold(f64::INFINITY, f64::min);
            unfairness = if unfairness.is_nan() {
                hi - lo
            } else {
                unfairness.max(hi - lo)
            };
        }
    }
    Ok(Judged {
        accuracy,
        unfairness,
        intervals: Some([accuracy_interval, Interval { lower, upper }]),
    })
}

/// Σ yes⁺ / Σ (yes⁺ + no⁺) of noisy cells clamped at 0 (NaN when that is 0 / 0).
fn ratio(yes: &[i64], no: &[i64]) -> f64 {
    let sum = |v: &[i64]| v.iter().map(|&c| c.max(0) as f64).sum::<f64>();
    let (a, b) = (sum(yes), sum(no));
    if a + b > 0.0 { a / (a + b) } else { f64::NAN }
}

/// MSE and the binned KS distance of real predictions, privately (module docs).
#[allow(clippy::too_many_arguments)]
pub(super) fn regression(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    epsilon: f64,
    beta: f64,
    (y, predicted): (&[f64], &[f64]),
    [lo, hi]: [f64; 2],
    groups: &[u32],
    n_groups: usize,
) -> Result<Judged> {
    let (mse, mse_interval) = squared_error(
        ledger,
        noise,
        label,
        MSE_SHARE * epsilon,
        beta,
        y,
        predicted,
        [lo, hi],
    )?;
    let histogram_epsilon = (1.0 - MSE_SHARE) * epsilon;
    let bin = |v: f64| (((v.clamp(lo, hi) - lo) / (hi - lo) * BINS as f64) as usize).min(BINS - 1);
    let mut counts = vec![0u64; n_groups * BINS];
    for (&p, &g) in predicted.iter().zip(groups) {
        counts[g as usize * BINS + bin(p)] += 1;
    }
    let noisy = noisy_counts(
        ledger,
        noise,
        &format!("{label}: predictions per group and bin"),
        &counts,
        histogram_epsilon,
    )?;
    let scale = histogram_scale(ledger.relation(), histogram_epsilon);
    let (ks, ks_interval) = binned_ks(&noisy, n_groups, scale, beta);
    Ok(Judged {
        accuracy: mse,
        unfairness: ks,
        intervals: Some([mse_interval, ks_interval]),
    })
}

/// The mean squared error of `predicted` against `y`, both clipped to [lo, hi], released as a
/// noisy sum at `epsilon`, with its interval at miss probability `beta` (module docs).
#[allow(clippy::too_many_arguments)]
pub(super) fn squared_error(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    epsilon: f64,
    beta: f64,
    y: &[f64],
    predicted: &[f64],
    [lo, hi]: [f64; 2],
) -> Result<(f64, Interval)> {
    let c = (hi - lo).powi(2);
    let sum: f64 = y
        .iter()
        .zip(predicted)
        .map(|(&t, &p)| (p.clamp(lo, hi) - t.clamp(lo, hi)).powi(2))
        .sum();
    let laplace = Laplace::from_epsilon(c, epsilon)?.with_relation(ledger.relation());
    let noisy = laplace.release(
        ledger,
        noise,
        &format!("{label}: sum of squared errors"),
        sum,
    )?;
    let b = ledger.entries().last().map_or(laplace.scale(), |e| e.scale);
    let n = y.len().max(1) as f64;
    // Noise: P(|Z| > t) ≤ 2e^(−t/b) = β/2, so the rows' mean lies in [m_lo, m_hi].
    let t = b * (4.0 / beta).ln();
    let (m_lo, m_hi) = (((noisy - t) / n).max(0.0), ((noisy + t) / n).min(c));
    let point = (noisy / n).clamp(0.0, c);
    Ok((point, bernstein_interval(m_lo, m_hi, c, n, beta / 2.0)))
}

/// An interval at miss probability `beta` for the mean μ of variables in [0, c] whose sample
/// mean over `n` rows lies in [m_lo, m_hi]: Bernstein's inequality,
/// P(|m − μ| ≥ √(2σ²L/n) + 2cL/(3n)) ≤ 2e^(−L), with L = ln(2/β) and σ² ≤ cμ (a variable in
/// [0, c] has E[X²] ≤ cE[X]). Solving |m − μ| ≤ √(aμ) + d, a = 2cL/n, d = 2cL/(3n), for μ gives
/// √μ ≤ (√a + √(a + 4(m_hi + d)))/2 and √μ ≥ (−√a + √(a + 4(m_lo − d)))/2. Far tighter than
/// Hoeffding's c·√(L/(2n)) when the errors are small against the range (Adult's hours: ±40
/// against ±144 at 9,768 rows).
fn bernstein_interval(m_lo: f64, m_hi: f64, c: f64, n: f64, beta: f64) -> Interval {
    let l = (2.0 / beta).ln();
    let (a, d) = (2.0 * c * l / n, 2.0 * c * l / (3.0 * n));
    let upper = ((a.sqrt() + (a + 4.0 * (m_hi + d)).sqrt()) / 2.0).powi(2);
    let lower = if m_lo > d {
        ((-a.sqrt() + (a + 4.0 * (m_lo - d)).sqrt()) / 2.0).powi(2)
    } else {
        0.0
    };
    Interval {
        lower: lower.clamp(0.0, c),
        upper: upper.clamp(0.0, c),
    }
}

/// The KS distance of the groups' binned distributions from noisy counts (`n_groups` × [`BINS`],
/// discrete Laplace of `scale`) and its interval at miss probability `beta` (module docs). At
/// each inner edge a group's counts below and above are sums of noisy cells, each within its
/// [`laplace_sum_margin`] (β/2 over the 2·K·(B − 1) sums); the group's count is at least the
/// sum of its lower ends, which sets its DKW band (β/(2K) each).
fn binned_ks(noisy: &[i64], n_groups: usize, scale: f64, beta: f64) -> (f64, Interval) {
    let sums = (2 * n_groups * (BINS - 1)) as f64;
    let margin: Vec<f64> = (0..=BINS)
        .map(|j| laplace_sum_margin(scale, j.max(1), beta / 2.0 / sums))
        .collect();
    let mut point: Vec<Option<Vec<f64>>> = Vec::new();
    let mut band: Vec<Vec<[f64; 2]>> = Vec::new();
    for g in 0..n_groups {
        let cells = &noisy[g * BINS..(g + 1) * BINS];
        let clamped: Vec<f64> = cells.iter().map(|&c| c.max(0) as f64).collect();
        let total: f64 = clamped.iter().sum();
        let mut cdf = Vec::new();
        let mut edges = Vec::new();
        let mut least = f64::INFINITY;
        for j in 0..BINS - 1 {
            let below: f64 = cells[..=j].iter().map(|&c| c as f64).sum();
            let above: f64 = cells[j + 1..].iter().map(|&c| c as f64).sum();
            let (mb, ma) = (margin[j + 1], margin[BINS - 1 - j]);
            let (a_lo, a_hi) = ((below - mb).max(0.0), (below + mb).max(0.0));
            let (r_lo, r_hi) = ((above - ma).max(0.0), (above + ma).max(0.0));
            least = least.min(a_lo + r_lo);
            cdf.push(clamped[..=j].iter().sum::<f64>() / total);
            let frac = |a: f64, r: f64, empty: f64| if a + r > 0.0 { a / (a + r) } else { empty };
            edges.push([frac(a_lo, r_hi, 0.0), frac(a_hi, r_lo, 1.0)]);
        }
        // DKW at β/(2K): sup |F̂ − F| ≤ √(ln(4K/β)/(2n)), n at least `least`.
        let dkw = if least > 0.0 {
            ((4.0 * n_groups as f64 / beta).ln() / (2.0 * least)).sqrt()
        } else {
            1.0
        };
        for e in &mut edges {
            *e = [(e[0] - dkw).max(0.0), (e[1] + dkw).min(1.0)];
        }
        point.push((total > 0.0).then_some(cdf));
        band.push(edges);
    }
    let mut ks = f64::NAN;
    let (mut lower, mut upper) = (0.0f64, 0.0f64);
    for a in 0..n_groups {
        for b in a + 1..n_groups {
            for j in 0..BINS - 1 {
                let ([la, ua], [lb, ub]) = (band[a][j], band[b][j]);
                lower = lower.max((la - ub).max(lb - ua));
                upper = upper.max((ua - lb).max(ub - la));
                if let (Some(fa), Some(fb)) = (&point[a], &point[b]) {
                    let d = (fa[j] - fb[j]).abs();
                    ks = if ks.is_nan() { d } else { ks.max(d) };
                }
            }
        }
    }
    (ks, Interval { lower, upper })
}

/// The refusal of a private evaluation of a real target without its public range.
pub(super) fn needs_range() -> Error {
    Error::invalid(
        "target_range",
        "compare's private evaluation of a real target clips predictions and targets to their \
         public range: give --target-range LO:HI (`target_range` in the library)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpfair_privacy::Budget;
    use rand::{RngExt, SeedableRng};

    /// Draws of 2,000 rows from a population with known figures, each released with seeded
    /// noise: the 95 % intervals must cover the population figure in ≥ 93 % of 300 draws. The
    /// intervals are conservative (union bounds, Bernstein, DKW), so their coverage is ≥ 95 %
    /// by construction; were it exactly 95 %, P(< 93 % of 300) = P(Bin(300, 0.05) ≥ 22) ≈ 6 %,
    /// so the threshold rejects coverage well below the level, not luck.
    fn coverage(mut draw: impl FnMut(&mut rand_chacha::ChaCha8Rng, &mut Noise) -> bool) -> f64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut noise = Noise::seeded(12);
        let trials = 300;
        (0..trials).filter(|_| draw(&mut rng, &mut noise)).count() as f64 / trials as f64
    }

    /// Two groups, three classes, labels uniform and predictions independent of them, predicted
    /// with rates (0.5, 0.3, 0.2) in group 0 and (0.3, 0.3, 0.4) in group 1: accuracy 1/3 and
    /// U = 0.2.
    #[test]
    fn multiclass_intervals_cover_the_population_figures() {
        let (mut acc_hits, mut u_hits) = (0, 0);
        let share = coverage(|rng, noise| {
            let n = 2_000;
            let groups: Vec<u32> = (0..n)
                .map(|_| u32::from(rng.random::<f64>() < 0.5))
                .collect();
            let y: Vec<u32> = (0..n)
                .map(|_| (rng.random::<f64>() * 3.0) as u32 % 3)
                .collect();
            let pick = |u: f64, rates: [f64; 3]| {
                if u < rates[0] {
                    0
                } else if u < rates[0] + rates[1] {
                    1
                } else {
                    2
                }
            };
            let predicted: Vec<u32> = groups
                .iter()
                .map(|&g| {
                    let rates = if g == 0 {
                        [0.5, 0.3, 0.2]
                    } else {
                        [0.3, 0.3, 0.4]
                    };
                    pick(rng.random::<f64>(), rates)
                })
                .collect();
            let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
            let j = multiclass(
                &mut ledger,
                noise,
                "t",
                1.0,
                0.05,
                (&y, &predicted, 3),
                &groups,
                2,
            )
            .unwrap();
            let [a, u] = j.intervals.unwrap();
            acc_hits += usize::from(a.contains(1.0 / 3.0));
            u_hits += usize::from(u.contains(0.2));
            assert!(a.contains(j.accuracy) && u.contains(j.unfairness) || j.unfairness.is_nan());
            a.contains(1.0 / 3.0) && u.contains(0.2)
        });
        assert!(
            acc_hits >= 279 && u_hits >= 279,
            "{acc_hits} {u_hits} of 300"
        );
        assert!(share >= 0.93, "{share}");
    }

    /// Targets uniform on [0, 1]; predictions independent of them, uniform on [0, 1] in group 0
    /// and on [0.2, 1] in group 1 (half the rows each): MSE (1/6 + 0.14667)/2 = 0.15667 and a
    /// binned KS distance of 0.2 (at the edge 0.2, where the group-1 CDF is still 0).
    #[test]
    fn regression_intervals_cover_the_population_figures() {
        let mse = 0.5 * (1.0 / 6.0 + (0.8f64.powi(2) / 12.0 + 1.0 / 12.0 + 0.01));
        let (mut mse_hits, mut ks_hits, mut positive) = (0, 0, 0);
        let mut widths = Vec::new();
        let share = coverage(|rng, noise| {
            let n = 2_000;
            let groups: Vec<u32> = (0..n)
                .map(|_| u32::from(rng.random::<f64>() < 0.5))
                .collect();
            let y: Vec<f64> = (0..n).map(|_| rng.random::<f64>()).collect();
            let predicted: Vec<f64> = groups
                .iter()
                .map(|&g| {
                    let u = rng.random::<f64>();
                    if g == 0 { u } else { 0.2 + 0.8 * u }
                })
                .collect();
            let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
            let j = regression(
                &mut ledger,
                noise,
                "t",
                1.0,
                0.05,
                (&y, &predicted),
                [0.0, 1.0],
                &groups,
                2,
            )
            .unwrap();
            assert_eq!(ledger.entries().len(), 2);
            let [m, k] = j.intervals.unwrap();
            widths.push((m.upper - m.lower, k.upper - k.lower));
            positive += usize::from(k.lower > 0.0);
            mse_hits += usize::from(m.contains(mse));
            ks_hits += usize::from(k.contains(0.2));
            m.contains(mse) && k.contains(0.2)
        });
        assert!(
            mse_hits >= 279 && ks_hits >= 279,
            "{mse_hits} {ks_hits} of 300"
        );
        assert!(share >= 0.93, "{share}");
        // Informative, not only safe: on 2,000 rows at ε = 1 the MSE interval is within ±0.04
        // of a value 0.157. The KS interval is wide at this size (a cumulative count carries
        // tens of rows of noise in a group of 1,000, and DKW adds ±0.05), but it excludes 0
        // when the gap is 0.2 in most draws.
        let (w_mse, w_ks) = widths
            .iter()
            .fold((0.0f64, 0.0f64), |(a, b), &(x, y)| (a.max(x), b.max(y)));
        assert!(w_mse < 0.08 && w_ks < 0.6, "{w_mse} {w_ks}");
        assert!(positive >= 150, "{positive} of 300 KS intervals above 0");
    }

    #[test]
    fn bernstein_is_tighter_than_hoeffding_for_small_errors() {
        // Errors in [0, 1] with mean 0.01 on 10,000 rows, β = 0.05.
        let i = bernstein_interval(0.01, 0.01, 1.0, 10_000.0, 0.05);
        let hoeffding = (2.0f64 / 0.05).ln().sqrt() / (2.0f64 * 10_000.0).sqrt();
        assert!(i.lower > 0.005 && i.upper < 0.016, "{i:?}");
        assert!(i.upper - i.lower < hoeffding, "{i:?} against ±{hoeffding}");
        // No information when the noise leaves the mean anywhere.
        let all = bernstein_interval(0.0, 1.0, 1.0, 10.0, 0.05);
        assert_eq!((all.lower, all.upper), (0.0, 1.0));
    }
}
