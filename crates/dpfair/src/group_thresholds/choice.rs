//! The choice of each group's randomised threshold from the released table (post-processing;
//! docs/fairness-constraints.md).
//!
//! A group's **operating points** are its thresholds on the score bins: predict 1 on bins
//! `≥ c` for `c = 0, …, B`. A **rule** mixes two of them, `c_i` with probability λ and `c_j`
//! with `1 − λ`, which reaches every point of the convex hull of the group's released ROC curve
//! (a threshold inside a bin is such a mix of its two edges). Every rate and the number of
//! correct predictions are linear in λ.
//!
//! The constraint holds when every group's constrained rate lies in one **band** `[r, r + α]`
//! (for equalized odds, a box: TPR in `[t, t + α]` and FPR in `[f, f + α]`), which is the same
//! as Fairlearn's difference (the largest minus the smallest rate) being at most α. For each
//! band on a public grid, each group takes its best rule inside the band; the band with the most
//! correct predictions over all groups wins. All of it reads only released counts.

use super::constraint::Constraint;
use super::table::ReleasedCounts;
use serde::{Deserialize, Serialize};

/// The grid step of a band's lower end (`r` and `t` for one-rate constraints; the box corner of
/// equalized odds uses [`BOX_STEP`]).
pub const BAND_STEP: f64 = 0.005;

/// The grid step of equalized odds' box corner `(t, f)`.
pub const BOX_STEP: f64 = 0.01;

/// How far inside the band a group's released rate must lie, in standard deviations of that
/// rate's release noise (at most half the band): a group whose rate is noisy sits nearer the
/// band's middle, so that its true rate leaves the band less often.
pub const MARGIN_SDS: f64 = 1.0;

/// One group's released counts as operating points: for each threshold `c = 0..=B`, the true
/// and false positives of "predict 1 on bins ≥ c".
struct Curve {
    tp: Vec<f64>,
    fp: Vec<f64>,
    pos: f64,
    neg: f64,
}

impl Curve {
    fn new(positives: &[f64], negatives: &[f64]) -> Curve {
        let b = positives.len();
        let mut tp = vec![0.0; b + 1];
        let mut fp = vec![0.0; b + 1];
        for c in (0..b).rev() {
            tp[c] = tp[c + 1] + positives[c];
            fp[c] = fp[c + 1] + negatives[c];
        }
        Curve {
            pos: tp[0],
            neg: fp[0],
            tp,
            fp,
        }
    }

    /// The constrained rate(s) at threshold `c`: the positive rate, or the TPR (and FPR).
    fn rates(&self, c: usize, constraint: Constraint) -> [f64; 2] {
        let tpr = self.tp[c] / self.pos.max(1.0);
        let fpr = self.fp[c] / self.neg.max(1.0);
        match constraint {
            Constraint::DemographicParity => [
                (self.tp[c] + self.fp[c]) / (self.pos + self.neg).max(1.0),
                0.0,
            ],
            Constraint::EqualOpportunity => [tpr, 0.0],
            Constraint::EqualizedOdds => [tpr, fpr],
        }
    }

    /// How far inside the band each constrained rate must lie ([`MARGIN_SDS`]): the noise sd of
    /// a rate summing up to `cells` of the table's cells, over its released denominator.
    fn margins(&self, constraint: Constraint, cell_sd: f64, bins: usize, alpha: f64) -> [f64; 2] {
        let sd = |cells: usize, of: f64| cell_sd * (cells as f64).sqrt() / of.max(1.0);
        let m = match constraint {
            Constraint::DemographicParity => [sd(2 * bins, self.pos + self.neg), 0.0],
            Constraint::EqualOpportunity => [sd(bins, self.pos), 0.0],
            Constraint::EqualizedOdds => [sd(bins, self.pos), sd(bins, self.neg)],
        };
        m.map(|v| (MARGIN_SDS * v).min(alpha / 2.0))
    }

    /// Correct predictions at threshold `c`.
    fn correct(&self, c: usize) -> f64 {
        self.tp[c] + self.neg - self.fp[c]
    }
}

/// One group's rule: threshold `high` with probability `weight`, else threshold `low`
/// (thresholds index the bins: predict 1 on bins `≥` the threshold).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mix {
    pub high: usize,
    pub low: usize,
    pub weight: f64,
}

impl Mix {
    /// `P(Ŷ = 1)` for a row in score bin `bin`.
    pub fn prob_positive(&self, bin: usize) -> f64 {
        self.weight * f64::from(u8::from(bin >= self.high))
            + (1.0 - self.weight) * f64::from(u8::from(bin >= self.low))
    }
}

/// The chosen rules and what the released counts say of them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// Each group's rule.
    pub rules: Vec<Mix>,
    /// The band's lower end(s): `r` (or `t`), and `f` for equalized odds.
    pub band: [f64; 2],
    /// Accuracy of the rules on the released counts.
    pub released_accuracy: f64,
    /// The largest gap between two groups' constrained rates on the released counts (≤ α up to
    /// rounding, by construction).
    pub released_gap: f64,
}

/// The feasible interval of λ on `[0, 1]` for `lo ≤ q_j + λ (q_i − q_j) ≤ hi`.
fn feasible(qi: f64, qj: f64, lo: f64, hi: f64, within: (f64, f64)) -> Option<(f64, f64)> {
    let d = qi - qj;
    let (a, b) = if d.abs() < 1e-12 {
        if qj < lo - 1e-12 || qj > hi + 1e-12 {
            return None;
        }
        within
    } else {
        let (x, y) = ((lo - qj) / d, (hi - qj) / d);
        (x.min(y).max(within.0), x.max(y).min(within.1))
    };
    (a <= b + 1e-12).then_some((a, b.max(a)))
}

/// The group's rule with the most correct predictions whose rates lie in the band `lo..lo + α`
/// (per constrained rate) and `margin` inside it, or `None` if no mix reaches it.
fn best_in_band(
    curve: &Curve,
    rates: &[[f64; 2]],
    constraint: Constraint,
    lo: [f64; 2],
    alpha: f64,
    margin: [f64; 2],
) -> Option<(f64, Mix)> {
    let dims = if constraint == Constraint::EqualizedOdds {
        2
    } else {
        1
    };
    let points = rates.len();
    let mut best: Option<(f64, Mix)> = None;
    for i in 0..points {
        for j in i..points {
            let mut interval = Some((0.0, 1.0));
            for k in 0..dims {
                interval = interval.and_then(|w| {
                    let (from, to) = (lo[k] + margin[k], lo[k] + alpha - margin[k]);
                    feasible(rates[i][k], rates[j][k], from, to, w)
                });
            }
            let Some((a, b)) = interval else { continue };
            let (ci, cj) = (curve.correct(i), curve.correct(j));
            let lambda = if ci >= cj { b } else { a };
            let correct = cj + lambda * (ci - cj);
            if best.is_none_or(|(c, _)| correct > c + 1e-9) {
                // λ weighs threshold i, the lower (more positive) one: `low = i`, `high = j`.
                best = Some((
                    correct,
                    Mix {
                        high: j,
                        low: i,
                        weight: 1.0 - lambda,
                    },
                ));
            }
        }
    }
    best
}

/// The band grid's lower ends for one rate: `0, step, …` up to `1 − α` (one band `[0, 1]` when
/// α ≥ 1).
fn lower_ends(alpha: f64, step: f64) -> Vec<f64> {
    let top = (1.0 - alpha).max(0.0);
    let n = (top / step).floor() as usize;
    let mut v: Vec<f64> = (0..=n).map(|k| k as f64 * step).collect();
    if top - v[n] > 1e-9 {
        v.push(top);
    }
    v
}

/// Each group's rule under `constraint` at level `alpha`, chosen from the released `counts`
/// (module docs). Always succeeds: the mix of "all negative" and "all positive" reaches every
/// rate, so a band with every group inside exists for demographic parity and equal opportunity;
/// for equalized odds a box on the diagonal does.
///
/// ```
/// use dpfair::group_thresholds::{Constraint, choice::choose, table::ReleasedCounts};
/// // Two groups, 2 bins; group 0 mostly positive in bin 1, group 1 mostly negative.
/// let counts = ReleasedCounts::from_counts(2, 2, vec![
///     40.0, 10.0, /* g0 y0 */ 5.0, 45.0, /* g0 y1 */
///     45.0, 20.0, /* g1 y0 */ 5.0, 30.0, /* g1 y1 */
/// ])?;
/// let choice = choose(&counts, Constraint::DemographicParity, 0.05);
/// assert!(choice.released_gap <= 0.05 + 1e-9);
/// # Ok::<(), dpfair::Error>(())
/// ```
pub fn choose(counts: &ReleasedCounts, constraint: Constraint, alpha: f64) -> Choice {
    let k = counts.groups();
    let curves: Vec<Curve> = (0..k)
        .map(|g| Curve::new(counts.bins_of(g, 1), counts.bins_of(g, 0)))
        .collect();
    let margins: Vec<[f64; 2]> = curves
        .iter()
        .map(|c| c.margins(constraint, counts.cell_sd(), counts.bins(), alpha))
        .collect();
    let rates: Vec<Vec<[f64; 2]>> = curves
        .iter()
        .map(|c| (0..c.tp.len()).map(|t| c.rates(t, constraint)).collect())
        .collect();
    let bands: Vec<[f64; 2]> = match constraint {
        Constraint::EqualizedOdds => {
            let ends = lower_ends(alpha, BOX_STEP);
            ends.iter()
                .flat_map(|&t| ends.iter().map(move |&f| [t, f]))
                .collect()
        }
        _ => lower_ends(alpha, BAND_STEP)
            .into_iter()
            .map(|r| [r, 0.0])
            .collect(),
    };
    let mut best: Option<(f64, [f64; 2], Vec<Mix>)> = None;
    for band in bands {
        let mut total = 0.0;
        let mut rules = Vec::with_capacity(k);
        for ((curve, r), m) in curves.iter().zip(&rates).zip(&margins) {
            match best_in_band(curve, r, constraint, band, alpha, *m) {
                Some((c, mix)) => {
                    total += c;
                    rules.push(mix);
                }
                None => break,
            }
        }
        if rules.len() == k && best.as_ref().is_none_or(|(t, _, _)| total > t + 1e-9) {
            best = Some((total, band, rules));
        }
    }
    let (correct, band, rules) = best.unwrap_or_else(|| {
        // Unreachable for the grids above (module docs); the constant rule is always fair.
        (
            0.0,
            [0.0; 2],
            vec![
                Mix {
                    high: 0,
                    low: 0,
                    weight: 1.0
                };
                k
            ],
        )
    });
    let n: f64 = curves.iter().map(|c| c.pos + c.neg).sum();
    let gap = released_gap(&curves, &rules, constraint);
    Choice {
        rules,
        band,
        released_accuracy: if n > 0.0 { correct / n } else { 0.0 },
        released_gap: gap,
    }
}

/// The largest gap between two groups' constrained rates under `rules`, on the curves.
fn released_gap(curves: &[Curve], rules: &[Mix], constraint: Constraint) -> f64 {
    let rate = |curve: &Curve, mix: &Mix, k: usize| {
        let hi = curve.rates(mix.high, constraint)[k];
        let lo = curve.rates(mix.low, constraint)[k];
        mix.weight * hi + (1.0 - mix.weight) * lo
    };
    let dims = if constraint == Constraint::EqualizedOdds {
        2
    } else {
        1
    };
    (0..dims)
        .map(|k| {
            let r: Vec<f64> = curves
                .iter()
                .zip(rules)
                .map(|(c, m)| rate(c, m, k))
                .collect();
            r.iter().cloned().fold(f64::MIN, f64::max) - r.iter().cloned().fold(f64::MAX, f64::min)
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact counts of three groups of different base rates, 10 bins, scores that rank well.
    fn three_groups() -> ReleasedCounts {
        let bins = 10;
        let mut counts = Vec::new();
        for (g, base) in [0.2, 0.5, 0.8].into_iter().enumerate() {
            let size = 200.0 + 100.0 * g as f64;
            for y in 0..2 {
                for b in 0..bins {
                    let s = (b as f64 + 0.5) / bins as f64;
                    // P(bin) ∝ a bump around the base rate; P(y = 1 | bin) = s.
                    let mass = (-((s - base) / 0.25).powi(2)).exp();
                    let p = if y == 1 { s } else { 1.0 - s };
                    counts.push(size * mass * p);
                }
            }
        }
        ReleasedCounts::from_counts(3, bins, counts).unwrap()
    }

    /// On exact counts the chosen rules meet every constraint at every level, and a looser
    /// level never gives fewer correct predictions (the bands of a smaller α lie inside a
    /// larger α's, up to the grid).
    #[test]
    fn every_constraint_is_met_and_looser_levels_are_no_worse() {
        let counts = three_groups();
        for constraint in [
            Constraint::DemographicParity,
            Constraint::EqualOpportunity,
            Constraint::EqualizedOdds,
        ] {
            let mut last = 0.0;
            for alpha in [0.0, 0.02, 0.05, 0.1, 0.3, 1.0] {
                let c = choose(&counts, constraint, alpha);
                assert!(
                    c.released_gap <= alpha + 1e-6,
                    "{constraint} {alpha}: {c:?}"
                );
                assert!(
                    c.released_accuracy >= last - 0.01,
                    "{constraint} {alpha}: {} < {last}",
                    c.released_accuracy
                );
                last = c.released_accuracy;
            }
        }
    }

    /// At α = 1 nothing binds: every group takes its most accurate threshold, which for
    /// calibrated scores is 1/2 (bin 5 of 10).
    #[test]
    fn without_a_constraint_each_group_thresholds_at_one_half() {
        let c = choose(&three_groups(), Constraint::DemographicParity, 1.0);
        for m in &c.rules {
            for bin in 0..10 {
                let want = f64::from(u8::from(bin >= 5));
                assert!((m.prob_positive(bin) - want).abs() < 1e-9, "{m:?} at {bin}");
            }
        }
    }

    /// Demographic parity at α = 0 gives every group the same rate on the counts.
    #[test]
    fn exact_parity_equalises_the_rates() {
        let counts = three_groups();
        let c = choose(&counts, Constraint::DemographicParity, 0.0);
        let rates: Vec<f64> = (0..3)
            .map(|g| {
                let (p, n) = (counts.bins_of(g, 1), counts.bins_of(g, 0));
                let total: f64 = p.iter().chain(n).sum();
                (0..10)
                    .map(|b| (p[b] + n[b]) * c.rules[g].prob_positive(b))
                    .sum::<f64>()
                    / total
            })
            .collect();
        for r in &rates {
            assert!((r - rates[0]).abs() < 1e-6, "{rates:?}");
        }
    }
}
