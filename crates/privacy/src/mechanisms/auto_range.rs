//! Private feature bounds without any user range: [`auto_range`].
//!
//! Every candidate comes from one *data-independent* grid ([`auto_range_grid`]): 0 and
//! ±10^(k/4) for 10^-9 ≤ 10^(k/4) ≤ 10^12, four points per decade (171 points). Three
//! exponential-mechanism releases (permute-and-flip, [`super::exponential_mechanism`]'s
//! sampler), ε/3 each (sequential composition, ε in total):
//!
//! 1. **Median, coarse**: the grid interval `(g_i, g_{i+1}]` holding the median, scored by the
//!    distance of the rank target `t = ⌈n/2⌉` to the interval's count range
//!    `[#{x ≤ g_i}, #{x ≤ g_{i+1}}]` (0 for the interval that holds it).
//! 2. **Median, refined**: a point of a 65-point even grid on that interval, scored
//!    `−|#{x ≤ c} − t|` (the second pass: it finds the location of offset data such as years).
//! 3. **Spread**: the interval of the non-negative half of the grid holding the
//!    [`SPREAD_QUANTILE`] (75%) quantile of `|x − m̂|`; the spread `ŝ` is its upper end.
//!
//! The bounds are `m̂ ± SPREAD_MULTIPLE · ŝ` (post-processing). Every score is a distance of a
//! count to a rank target, so one record moves it by at most 1 under replace-one *and*
//! add/remove-one neighbours (adding a record moves a count and `t` by at most 1 each, in the
//! same direction); each release is ε/3-DP for the ledger's own relation.
//!
//! **Why a median and a spread, not the 1% and 99% quantiles.** A quantile's exponential
//! mechanism gives every grid point beyond the data the same score, `−q·n` (or `−(1−q)·n`); with
//! ~80 such points it picks one of them (bounds of 10^9 for an age) unless `ε·q·n/2` is well
//! above `ln 80 ≈ 4.4`, i.e. `ε ≳ 900/n` per release at q = 1%: far more than a 5% share of
//! ε = 1 split over several columns. The median's points beyond the data score `−n/2` and the
//! 75% spread's `−n/4`, so the same budget suffices from `n ≈ 32/ε` per release.
//! The price: up to ~10% of a skewed column is clipped, and a column whose values are mostly one
//! number (e.g. a capital gain that is 0 for 92% of rows) gets a spread of one grid step around
//! it, so its nonzero values are clipped to the top: it becomes a 0/1 indicator.
//!
//! **Utility** (tests): permute-and-flip picks a candidate scoring below `OPT − τ` with
//! probability at most `|G|·exp(−ε_r·τ/2)` (each candidate is accepted at most once, with
//! probability `exp(−ε_r·gap/2)`), where `ε_r` is the release's ε. Both interval searches have
//! `OPT = 0` when the data lie within ±10^12, so with probability ≥ 1 − β the chosen interval's
//! count range is within `τ = (2/ε_r)·ln(|G|/β)` ranks of the target.

use super::discrete::choose_by_counts;
use crate::Noise;
use crate::error::{Result, invalid};
use crate::ledger::Ledger;

/// The grid's decades: magnitudes from 10^-9 to 10^12.
pub const AUTO_RANGE_DECADES: (i32, i32) = (-9, 12);
/// Grid points per decade (ratio 10^(1/4) ≈ 1.78 between neighbours).
pub const AUTO_RANGE_STEPS_PER_DECADE: i32 = 4;
/// Points of the refining grid on the median's interval.
pub const REFINE_POINTS: usize = 65;
/// The quantile of `|x − m̂|` taken as the spread.
pub const SPREAD_QUANTILE: f64 = 0.75;
/// The bounds are the median ± this many spreads (±2.3σ for normal data).
pub const SPREAD_MULTIPLE: f64 = 2.0;

/// The public grid: 0 and ±10^(k/4) over [`AUTO_RANGE_DECADES`], ascending. It depends on
/// nothing but these constants.
pub fn auto_range_grid() -> Vec<f64> {
    let (lo, hi) = AUTO_RANGE_DECADES;
    let s = AUTO_RANGE_STEPS_PER_DECADE;
    let positive: Vec<f64> = (lo * s..=hi * s)
        .map(|k| 10f64.powf(k as f64 / s as f64))
        .collect();
    let mut grid: Vec<f64> = positive.iter().rev().map(|v| -v).collect();
    grid.push(0.0);
    grid.extend(positive);
    grid
}

/// The three released values and the bounds built from them (all public after the release).
#[derive(Clone, Debug, PartialEq)]
pub struct AutoRange {
    /// The grid interval chosen for the median (release 1).
    pub median_interval: (f64, f64),
    /// The refined median m̂ (release 2).
    pub median: f64,
    /// The grid interval chosen for the spread (release 3); the spread is its upper end.
    pub spread_interval: (f64, f64),
    /// `m̂ − SPREAD_MULTIPLE · ŝ`.
    pub lo: f64,
    /// `m̂ + SPREAD_MULTIPLE · ŝ`.
    pub hi: f64,
}

/// Distance of `t` to `[a, b]` (0 inside), negated: the score of an interval.
fn interval_score(a: usize, b: usize, t: i128) -> i128 {
    let (a, b) = (a as i128, b as i128);
    -((a - t).max(t - b).max(0))
}

/// Private bounds of `values` with `epsilon` in total (three pure-ε/3 entries labelled from
/// `label`); see the module docs. Never reads the data's min or max.
///
/// ```
/// use dpfair_privacy::mechanisms::auto_range;
/// use dpfair_privacy::{Budget, Ledger, Noise};
/// let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
/// let ages: Vec<f64> = (0..5000).map(|i| 18.0 + (i % 60) as f64).collect();
/// let r = auto_range(&mut ledger, &mut Noise::os(), "age", &ages, 1.0)?;
/// assert!(r.lo < r.hi);
/// assert_eq!(ledger.entries().len(), 3);
/// # Ok::<(), dpfair_privacy::PrivacyError>(())
/// ```
pub fn auto_range(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    values: &[f64],
    epsilon: f64,
) -> Result<AutoRange> {
    let eps = super::positive("epsilon", epsilon)? / 3.0;
    if values.is_empty() {
        return Err(invalid("values", "no values to bound"));
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(invalid("values", format!("entry {i} is not finite")));
    }
    let grid = auto_range_grid();
    let n = values.len();
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = |sorted: &[f64], c: f64| sorted.partition_point(|x| *x <= c);

    // 1. The grid interval holding the median.
    let t = n.div_ceil(2) as i128;
    let counts: Vec<usize> = grid.iter().map(|&c| rank(&sorted, c)).collect();
    let scores: Vec<i128> = counts
        .windows(2)
        .map(|w| interval_score(w[0], w[1], t))
        .collect();
    let i = choose_by_counts(
        ledger,
        noise,
        &format!("{label}: median interval"),
        "quantile interval (exponential, permute-and-flip)",
        &scores,
        eps,
        format!(
            "q = 0.5 over the {} intervals of the public log grid 0, ±10^(k/{}) for 10^{}..10^{}",
            scores.len(),
            AUTO_RANGE_STEPS_PER_DECADE,
            AUTO_RANGE_DECADES.0,
            AUTO_RANGE_DECADES.1
        ),
    )?;
    let (a, b) = (grid[i], grid[i + 1]);

    // 2. The median refined on an even grid over that interval.
    let points: Vec<f64> = (0..REFINE_POINTS)
        .map(|j| a + (b - a) * j as f64 / (REFINE_POINTS - 1) as f64)
        .collect();
    let scores: Vec<i128> = points
        .iter()
        .map(|&c| -((rank(&sorted, c) as i128) - t).abs())
        .collect();
    let j = choose_by_counts(
        ledger,
        noise,
        &format!("{label}: median"),
        "quantile (exponential, permute-and-flip)",
        &scores,
        eps,
        format!("q = 0.5 over {REFINE_POINTS} even points of the released interval"),
    )?;
    let median = points[j];

    // 3. The spread: the interval of the non-negative grid holding the 75% quantile of |x − m̂|.
    let mut dev: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let half = &grid[grid.len() / 2..];
    let t = (SPREAD_QUANTILE * n as f64).ceil() as i128;
    let counts: Vec<usize> = half.iter().map(|&c| rank(&dev, c)).collect();
    let scores: Vec<i128> = counts
        .windows(2)
        .map(|w| interval_score(w[0], w[1], t))
        .collect();
    let k = choose_by_counts(
        ledger,
        noise,
        &format!("{label}: spread interval"),
        "quantile interval (exponential, permute-and-flip)",
        &scores,
        eps,
        format!(
            "q = {SPREAD_QUANTILE} of |x − released median| over the {} intervals of the \
             non-negative log grid",
            scores.len()
        ),
    )?;
    let spread = half[k + 1];
    Ok(AutoRange {
        median_interval: (a, b),
        median,
        spread_interval: (half[k], spread),
        lo: median - SPREAD_MULTIPLE * spread,
        hi: median + SPREAD_MULTIPLE * spread,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Budget;

    /// τ of the module docs: the rank slack of one interval search at failure probability β.
    fn tau(eps_release: f64, candidates: usize, beta: f64) -> i128 {
        ((2.0 / eps_release) * (candidates as f64 / beta).ln()).ceil() as i128
    }

    fn rank(sorted: &[f64], c: f64) -> i128 {
        sorted.partition_point(|x| *x <= c) as i128
    }

    #[test]
    fn the_grid_is_public_symmetric_and_spans_the_decades() {
        let g = auto_range_grid();
        assert_eq!(g.len(), 2 * 21 * 4 + 3);
        assert!(g.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(g[g.len() / 2], 0.0);
        assert!((g[g.len() - 1] - 1e12).abs() < 1.0 && (g[0] + 1e12).abs() < 1.0);
        assert!((g[g.len() / 2 + 1] - 1e-9).abs() < 1e-20);
    }

    /// The chosen intervals hold the rank targets within τ (the utility bound of the module
    /// docs at β = 10⁻⁶ per search), on data of every magnitude and sign, and the bounds are
    /// ordered. n = 4,000, ε = 3 (1 per release): τ ≈ 39 ranks.
    #[test]
    fn the_released_intervals_hold_the_median_and_the_spread_within_the_bound() {
        let n = 4000usize;
        let g = auto_range_grid();
        let columns: Vec<(&str, Vec<f64>)> = vec![
            (
                "tiny",
                (0..n).map(|i| 1e-9 * (1.0 + (i % 97) as f64)).collect(),
            ),
            (
                "huge",
                (0..n)
                    .map(|i| 1e11 * (1.0 + (i % 89) as f64 / 10.0))
                    .collect(),
            ),
            (
                "negative",
                (0..n).map(|i| -5e4 - (i % 83) as f64 * 100.0).collect(),
            ),
            ("years", (0..n).map(|i| 1990.0 + (i % 31) as f64).collect()),
            ("constant", vec![7.0; n]),
        ];
        for (name, values) in columns {
            let mut ledger = Ledger::new(Budget::pure(3.0).unwrap());
            let r = auto_range(&mut ledger, &mut Noise::os(), name, &values, 3.0).unwrap();
            assert_eq!(ledger.entries().len(), 3, "{name}");
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let t = n.div_ceil(2) as i128;
            let (a, b) = r.median_interval;
            let slack = tau(1.0, g.len() - 1, 1e-6);
            assert!(
                rank(&sorted, a) - slack <= t && t <= rank(&sorted, b) + slack,
                "{name}: median interval {:?}",
                r.median_interval
            );
            assert!(a <= r.median && r.median <= b, "{name}");
            let mut dev: Vec<f64> = sorted.iter().map(|x| (x - r.median).abs()).collect();
            dev.sort_by(f64::total_cmp);
            let t = (SPREAD_QUANTILE * n as f64).ceil() as i128;
            let (sa, sb) = r.spread_interval;
            assert!(
                rank(&dev, sa) - slack <= t && t <= rank(&dev, sb) + slack,
                "{name}: spread interval {:?}",
                r.spread_interval
            );
            assert!(r.lo < r.hi, "{name}");
        }
    }

    #[test]
    fn refuses_empty_and_non_finite_values_before_charging() {
        let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
        assert!(auto_range(&mut ledger, &mut Noise::os(), "x", &[], 1.0).is_err());
        assert!(auto_range(&mut ledger, &mut Noise::os(), "x", &[1.0, f64::NAN], 1.0).is_err());
        assert!(ledger.entries().is_empty());
    }

    /// Each release is certified for the ledger's relation (no conversion, no refusal).
    #[test]
    fn charges_for_the_ledgers_relation() {
        let mut ledger = Ledger::for_relation(
            Budget::pure(1.0).unwrap(),
            crate::ledger::Relation::AddRemove,
        );
        let v: Vec<f64> = (0..100).map(f64::from).collect();
        auto_range(&mut ledger, &mut Noise::os(), "x", &v, 1.0).unwrap();
        assert!(
            ledger
                .entries()
                .iter()
                .all(|e| e.relation == crate::ledger::Relation::AddRemove)
        );
        assert!((ledger.total().unwrap().epsilon - 1.0).abs() < 1e-12);
    }
}
