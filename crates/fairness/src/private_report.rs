//! [`PrivateGroupReport`]: a group report you may publish. The counts of group × true label ×
//! prediction are released **once** through the privacy crate's noisy histogram (one ledger
//! entry, exact discrete Laplace noise calibrated to the ledger's neighbouring relation), and
//! everything else is post-processing of that release: per group and overall the count,
//! accuracy, selection rate, true and false positive rates, and Fairlearn's
//! demographic-parity, equalized-odds and equal-opportunity differences (max − min over groups)
//! and ratios (min / max), each with an interval at a stated level that accounts for the noise
//! and for the sampling of the evaluation rows ([`crate::interval`]). See docs/evaluation.md.
//!
//! Nothing in the report's shape depends on the private rows: the groups are declared
//! ([`GroupConfusion::new`]), every declared group has a row, a group with no or few rows gets
//! a wide interval (up to [0, 1]) and, when its noisy denominator is 0, no point value (`None`).

use crate::confusion::{CELLS_PER_GROUP, GroupConfusion};
use crate::error::{FairnessError, Result};
use crate::interval::{Interval, count_interval, rate_interval, ratio_interval, spread_interval};
use dpfair_privacy::mechanisms::{histogram_scale, noisy_counts};
use dpfair_privacy::{Ledger, Noise, Relation};
use serde::{Deserialize, Serialize};

/// The level of the intervals when none is given: 95 %.
pub const DEFAULT_LEVEL: f64 = 0.95;

/// A (true label, prediction) cell of a group.
type Cell = (u8, u8);

/// A rate figure of a group (or of all rows) as a fraction of some of its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// P(ŷ = y).
    Accuracy,
    /// P(ŷ = 1).
    SelectionRate,
    /// P(ŷ = 1 | y = 1).
    TruePositiveRate,
    /// P(ŷ = 1 | y = 0).
    FalsePositiveRate,
}

impl Rate {
    /// Every rate, in report order.
    pub const ALL: [Rate; 4] = [
        Rate::Accuracy,
        Rate::SelectionRate,
        Rate::TruePositiveRate,
        Rate::FalsePositiveRate,
    ];

    /// Fairlearn's name of the metric.
    pub fn name(self) -> &'static str {
        match self {
            Rate::Accuracy => "accuracy",
            Rate::SelectionRate => "selection_rate",
            Rate::TruePositiveRate => "true_positive_rate",
            Rate::FalsePositiveRate => "false_positive_rate",
        }
    }

    /// The (y, ŷ) cells counted (the numerator) and the other cells of the denominator.
    fn cells(self) -> (&'static [Cell], &'static [Cell]) {
        match self {
            Rate::Accuracy => (&[(0, 0), (1, 1)], &[(0, 1), (1, 0)]),
            Rate::SelectionRate => (&[(0, 1), (1, 1)], &[(0, 0), (1, 0)]),
            Rate::TruePositiveRate => (&[(1, 1)], &[(1, 0)]),
            Rate::FalsePositiveRate => (&[(0, 1)], &[(0, 0)]),
        }
    }
}

/// One released figure: its point value from the noisy counts (`None` when its noisy
/// denominator is 0) and its interval at the report's level.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub value: Option<f64>,
    pub lower: f64,
    pub upper: f64,
}

impl Figure {
    fn new(value: Option<f64>, i: Interval) -> Self {
        Figure {
            value,
            lower: i.lower,
            upper: i.upper,
        }
    }

    /// "value [lower, upper]" at `digits` decimals ("n/a" for no value: an empty group).
    ///
    /// ```
    /// # use dpfair_fairness::private_report::Figure;
    /// let f = Figure { value: Some(0.5), lower: 0.25, upper: 0.75 };
    /// assert_eq!(f.show(2), "0.50 [0.25, 0.75]");
    /// ```
    pub fn show(&self, digits: usize) -> String {
        let v = self
            .value
            .map_or("n/a".to_string(), |v| format!("{v:.digits$}"));
        format!("{v} [{:.digits$}, {:.digits$}]", self.lower, self.upper)
    }

    /// The interval.
    pub fn interval(&self) -> Interval {
        Interval {
            lower: self.lower,
            upper: self.upper,
        }
    }
}

/// The four rates of one row, or one figure per rate (differences, ratios).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    pub accuracy: Figure,
    pub selection_rate: Figure,
    pub true_positive_rate: Figure,
    pub false_positive_rate: Figure,
}

impl Rates {
    fn from_fn(mut f: impl FnMut(Rate) -> Figure) -> Self {
        Rates {
            accuracy: f(Rate::Accuracy),
            selection_rate: f(Rate::SelectionRate),
            true_positive_rate: f(Rate::TruePositiveRate),
            false_positive_rate: f(Rate::FalsePositiveRate),
        }
    }

    /// The figure of `rate`.
    pub fn get(&self, rate: Rate) -> &Figure {
        match rate {
            Rate::Accuracy => &self.accuracy,
            Rate::SelectionRate => &self.selection_rate,
            Rate::TruePositiveRate => &self.true_positive_rate,
            Rate::FalsePositiveRate => &self.false_positive_rate,
        }
    }
}

/// One row of the report: a declared group (or `overall`), its noisy row count and its rates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrivateRow {
    pub group: String,
    pub count: Figure,
    #[serde(flatten)]
    pub rates: Rates,
}

/// Fairlearn's between-group fairness figures, each with its interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Disparities {
    pub demographic_parity_difference: Figure,
    pub demographic_parity_ratio: Figure,
    /// max(TPR difference, FPR difference).
    pub equalized_odds_difference: Figure,
    /// min(TPR ratio, FPR ratio).
    pub equalized_odds_ratio: Figure,
    /// The TPR difference.
    pub equal_opportunity_difference: Figure,
    /// The TPR ratio.
    pub equal_opportunity_ratio: Figure,
}

impl Disparities {
    /// Every figure with its Fairlearn name, in a fixed order.
    pub fn named(&self) -> [(&'static str, &Figure); 6] {
        [
            (
                "demographic_parity_difference",
                &self.demographic_parity_difference,
            ),
            ("demographic_parity_ratio", &self.demographic_parity_ratio),
            ("equalized_odds_difference", &self.equalized_odds_difference),
            ("equalized_odds_ratio", &self.equalized_odds_ratio),
            (
                "equal_opportunity_difference",
                &self.equal_opportunity_difference,
            ),
            ("equal_opportunity_ratio", &self.equal_opportunity_ratio),
        ]
    }
}

/// A private group report (module docs; docs/evaluation.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrivateGroupReport {
    /// The ε of the one release.
    pub epsilon: f64,
    /// The neighbouring relation the release is certified for (the ledger's).
    pub relation: Relation,
    /// The level of every interval (e.g. 0.95); each figure's own, not simultaneous over figures.
    pub level: f64,
    /// The discrete Laplace scale of the noise on each count.
    pub scale: f64,
    /// The released counts, group × true label × prediction ([`GroupConfusion::cell`] order).
    pub noisy_counts: Vec<i64>,
    /// One row per declared group, in code order.
    pub by_group: Vec<PrivateRow>,
    pub overall: PrivateRow,
    /// Per rate, max − min over groups (Fairlearn's `MetricFrame.difference()`).
    pub difference: Rates,
    /// Per rate, min / max over groups (Fairlearn's `MetricFrame.ratio()`).
    pub ratio: Rates,
    pub disparities: Disparities,
}

/// Checks an interval level: in (0, 1).
///
/// ```
/// use dpfair_fairness::private_report::check_level;
/// assert_eq!(check_level(0.95), Ok(0.95));
/// assert!(check_level(95.0).unwrap_err().to_string().contains("`level`"));
/// ```
pub fn check_level(level: f64) -> Result<f64> {
    if level > 0.0 && level < 1.0 {
        Ok(level)
    } else {
        Err(FairnessError::InvalidParameter {
            name: "level",
            reason: format!("the intervals' level must be in (0, 1), e.g. 0.95; got {level}"),
        })
    }
}

impl PrivateGroupReport {
    /// Releases `counts` once through [`noisy_counts`] (charged to `ledger` as `label`, at
    /// `epsilon`, noise scale [`histogram_scale`] for the ledger's relation) and derives the
    /// report with intervals at `level`. `noise` must be [`Noise::os`] for a release anyone
    /// sees; seeded noise is for tests and simulations (the ledger records which).
    ///
    /// ```
    /// use dpfair_fairness::{GroupConfusion, PrivateGroupReport};
    /// use dpfair_privacy::{Budget, Ledger, Noise};
    /// let groups = vec!["a".to_string(), "b".to_string()];
    /// let y: Vec<u8> = (0..2_000).map(|i| (i % 2) as u8).collect();
    /// let yhat: Vec<u8> = (0..2_000).map(|i| (i % 3 == 0) as u8).collect();
    /// let g: Vec<u32> = (0..2_000).map(|i| (i % 5 == 0) as u32).collect();
    /// let counts = GroupConfusion::from_rows(groups, &y, &yhat, &g)?;
    /// let mut ledger = Ledger::new(Budget::pure(1.0)?);
    /// let mut noise = Noise::seeded(1); // seeded for the example only: a release uses Noise::os()
    /// let r = PrivateGroupReport::release(&mut ledger, &mut noise, "evaluation", &counts, 1.0, 0.95)?;
    /// assert_eq!(ledger.entries().len(), 1);
    /// let dp = r.disparities.demographic_parity_difference;
    /// assert!(dp.lower <= dp.value.unwrap() && dp.value.unwrap() <= dp.upper);
    /// println!("{}", r.render());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn release(
        ledger: &mut Ledger,
        noise: &mut Noise,
        label: &str,
        counts: &GroupConfusion,
        epsilon: f64,
        level: f64,
    ) -> Result<Self> {
        let level = check_level(level)?;
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(FairnessError::InvalidParameter {
                name: "epsilon",
                reason: format!("must be finite and > 0, got {epsilon}"),
            });
        }
        let relation = ledger.relation();
        let noisy = noisy_counts(ledger, noise, label, counts.counts(), epsilon)?;
        Self::from_release(
            counts.groups(),
            noisy,
            epsilon,
            relation,
            histogram_scale(relation, epsilon),
            level,
        )
    }

    /// The report from counts already released with discrete Laplace noise of `scale` (pure
    /// post-processing: e.g. the same release at another level, or a report file's
    /// `noisy_counts`).
    ///
    /// ```
    /// use dpfair_fairness::PrivateGroupReport;
    /// use dpfair_privacy::Relation;
    /// let groups = vec!["a".to_string(), "b".to_string()];
    /// // Released cells, group × (y, ŷ) ∈ (0,0), (0,1), (1,0), (1,1); noise made one negative.
    /// let noisy = vec![400, 100, 50, 450, 300, 200, -1, 500];
    /// let r95 = PrivateGroupReport::from_release(&groups, noisy.clone(), 1.0, Relation::Substitution, 2.0, 0.95)?;
    /// let r80 = PrivateGroupReport::from_release(&groups, noisy, 1.0, Relation::Substitution, 2.0, 0.8)?;
    /// assert_eq!(r95.by_group[1].rates.true_positive_rate.value, Some(1.0)); // −1 clamps to 0
    /// let (a, b) = (r95.overall.rates.accuracy, r80.overall.rates.accuracy);
    /// assert!(a.lower < b.lower && b.upper < a.upper); // a lower level, a narrower interval
    /// # Ok::<(), dpfair_fairness::FairnessError>(())
    /// ```
    pub fn from_release(
        groups: &[String],
        noisy_counts: Vec<i64>,
        epsilon: f64,
        relation: Relation,
        scale: f64,
        level: f64,
    ) -> Result<Self> {
        let level = check_level(level)?;
        let k = groups.len();
        if noisy_counts.len() != k * CELLS_PER_GROUP {
            return Err(FairnessError::LengthMismatch {
                what: "noisy_counts",
                expected: k * CELLS_PER_GROUP,
                found: noisy_counts.len(),
            });
        }
        if k < 2 {
            return Err(FairnessError::InvalidParameter {
                name: "groups",
                reason: format!("a group report needs at least 2 groups, got {k}"),
            });
        }
        let beta = 1.0 - level;
        let all: Vec<usize> = (0..k).collect();
        let row = |name: &str, gs: &[usize]| PrivateRow {
            group: name.to_string(),
            count: count_figure(&noisy_counts, gs, scale, beta),
            rates: Rates::from_fn(|r| rate_figure(&noisy_counts, gs, r, scale, beta)),
        };
        let by_group: Vec<PrivateRow> = groups
            .iter()
            .enumerate()
            .map(|(g, name)| row(name, &[g]))
            .collect();
        let overall = row("overall", &all);
        // Simultaneous group intervals: each of the K groups at β/K (one rate), or each of the
        // 2K group rates at β/(2K) (equalized odds: TPR and FPR together).
        let groupwise = |r: Rate, b: f64| -> (Vec<Option<f64>>, Vec<Interval>) {
            (0..k)
                .map(|g| {
                    let f = rate_figure(&noisy_counts, &[g], r, scale, b);
                    (f.value, f.interval())
                })
                .unzip()
        };
        let between =
            |r: Rate, b: f64, combine: fn(&[Interval]) -> Interval, point: fn(&[f64]) -> f64| {
                let (values, ivs) = groupwise(r, b);
                let defined: Vec<f64> = values.into_iter().flatten().collect();
                Figure::new(
                    (!defined.is_empty()).then(|| point(&defined)),
                    combine(&ivs),
                )
            };
        let difference = Rates::from_fn(|r| between(r, beta / k as f64, spread_interval, spread));
        let ratio = Rates::from_fn(|r| between(r, beta / k as f64, ratio_interval, min_over_max));
        let eo = |combine: fn(&[Interval]) -> Interval,
                  point: fn(&[f64]) -> f64,
                  join: fn(f64, f64) -> f64| {
            let b = beta / (2 * k) as f64;
            let (t, f) = (
                between(Rate::TruePositiveRate, b, combine, point),
                between(Rate::FalsePositiveRate, b, combine, point),
            );
            Figure {
                value: t.value.zip(f.value).map(|(a, b)| join(a, b)),
                lower: join(t.lower, f.lower),
                upper: join(t.upper, f.upper),
            }
        };
        let disparities = Disparities {
            demographic_parity_difference: difference.selection_rate,
            demographic_parity_ratio: ratio.selection_rate,
            equalized_odds_difference: eo(spread_interval, spread, f64::max),
            equalized_odds_ratio: eo(ratio_interval, min_over_max, f64::min),
            equal_opportunity_difference: difference.true_positive_rate,
            equal_opportunity_ratio: ratio.true_positive_rate,
        };
        Ok(PrivateGroupReport {
            epsilon,
            relation,
            level,
            scale,
            noisy_counts,
            by_group,
            overall,
            difference,
            ratio,
            disparities,
        })
    }

    /// A plain-text report: a table of point values with intervals per group and overall, then
    /// the disparities; every number is released (noisy counts and their post-processing).
    pub fn render(&self) -> String {
        let pct = self.level * 100.0;
        let fig = |f: &Figure, digits: usize| f.show(digits);
        let mut s = format!(
            "private group report: one noisy release at ε = {} ({}; discrete Laplace scale {}); \
             {pct}% intervals cover noise and sampling\n",
            self.epsilon,
            self.relation.describe(),
            self.scale
        );
        let width = self
            .by_group
            .iter()
            .map(|r| r.group.chars().count())
            .chain(["overall".len()])
            .max()
            .unwrap_or(7);
        s.push_str(&format!("{:<width$}  {:<22}", "group", "count"));
        for r in Rate::ALL {
            s.push_str(&format!("  {:<26}", r.name()));
        }
        s.push('\n');
        for row in self.by_group.iter().chain(std::iter::once(&self.overall)) {
            s.push_str(&format!(
                "{:<width$}  {:<22}",
                row.group,
                fig(&row.count, 0)
            ));
            for r in Rate::ALL {
                s.push_str(&format!("  {:<26}", fig(row.rates.get(r), 3)));
            }
            s.push('\n');
        }
        for (name, f) in self.disparities.named() {
            s.push_str(&format!("{name}: {}\n", fig(f, 3)));
        }
        s
    }
}

/// The noisy cells of the groups `gs` at the (y, ŷ) pairs `pairs`.
fn cells(noisy: &[i64], gs: &[usize], pairs: &[Cell]) -> Vec<i64> {
    gs.iter()
        .flat_map(|&g| {
            pairs
                .iter()
                .map(move |&(y, p)| noisy[GroupConfusion::cell(g, y, p)])
        })
        .collect()
}

/// Σ max(0, ĉ): the point value of a sum of noisy counts.
fn clamped_sum(c: &[i64]) -> u64 {
    c.iter().map(|&x| x.max(0) as u64).sum()
}

fn count_figure(noisy: &[i64], gs: &[usize], scale: f64, beta: f64) -> Figure {
    const ALL: [Cell; 4] = [(0, 0), (0, 1), (1, 0), (1, 1)];
    let c = cells(noisy, gs, &ALL);
    Figure::new(
        Some(clamped_sum(&c) as f64),
        count_interval(&c, scale, beta),
    )
}

fn rate_figure(noisy: &[i64], gs: &[usize], rate: Rate, scale: f64, beta: f64) -> Figure {
    let (num, rest) = rate.cells();
    let (a, b) = (cells(noisy, gs, num), cells(noisy, gs, rest));
    let (sa, sb) = (clamped_sum(&a), clamped_sum(&b));
    let value = (sa + sb > 0).then(|| sa as f64 / (sa + sb) as f64);
    Figure::new(value, rate_interval(&a, &b, scale, beta))
}

fn spread(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// min / max, 1 when every value is 0 (as [`crate::demographic_parity_ratio`]).
fn min_over_max(v: &[f64]) -> f64 {
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    if hi > 0.0 { lo / hi } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(k: usize) -> Vec<String> {
        (0..k).map(|g| format!("g{g}")).collect()
    }

    #[test]
    fn point_values_are_the_exact_metrics_when_the_counts_are_exact() {
        // A release without noise (scale → 0 is not a release; from_release is post-processing
        // of whatever counts it is given): the point values equal the exact metrics.
        let y = [1, 1, 0, 0, 1, 0, 0, 1];
        let p = [1, 0, 0, 1, 1, 1, 0, 0];
        let g = [0, 0, 0, 0, 1, 1, 1, 1];
        let c = GroupConfusion::from_rows(groups(2), &y, &p, &g).unwrap();
        let noisy: Vec<i64> = c.counts().iter().map(|&x| x as i64).collect();
        let r = PrivateGroupReport::from_release(
            c.groups(),
            noisy,
            1.0,
            Relation::Substitution,
            2.0,
            0.95,
        )
        .unwrap();
        let dpd = crate::demographic_parity_difference(&p, &g).unwrap();
        let eod = crate::equal_opportunity_difference(&y, &p, &g).unwrap();
        assert_eq!(r.disparities.demographic_parity_difference.value, Some(dpd));
        assert_eq!(r.disparities.equal_opportunity_difference.value, Some(eod));
        assert_eq!(r.overall.count.value, Some(8.0));
        assert_eq!(r.by_group[1].rates.false_positive_rate.value, Some(0.5));
        assert_eq!(r.overall.rates.accuracy.value, Some(0.5));
        for row in r.by_group.iter().chain([&r.overall]) {
            for rate in Rate::ALL {
                let f = row.rates.get(rate);
                assert!(f.lower <= f.value.unwrap() && f.value.unwrap() <= f.upper);
            }
        }
    }

    #[test]
    fn an_empty_group_is_a_wide_row_not_an_error() {
        let c = GroupConfusion::from_rows(groups(3), &[1, 0], &[1, 1], &[0, 0]).unwrap();
        let mut noisy: Vec<i64> = c.counts().iter().map(|&x| x as i64).collect();
        noisy[GroupConfusion::cell(2, 0, 0)] = -3; // noise below zero on an empty group
        let r =
            PrivateGroupReport::from_release(c.groups(), noisy, 1.0, Relation::AddRemove, 1.0, 0.9)
                .unwrap();
        assert_eq!(r.by_group.len(), 3);
        let empty = &r.by_group[2];
        assert_eq!(empty.count.value, Some(0.0));
        assert_eq!(empty.rates.selection_rate.value, None);
        assert_eq!(
            (
                empty.rates.selection_rate.lower,
                empty.rates.selection_rate.upper
            ),
            (0.0, 1.0)
        );
        assert!(r.render().contains("n/a [0.000, 1.000]"));
        assert!(
            check_level(1.0).is_err()
                && check_level(0.0).is_err()
                && check_level(f64::NAN).is_err()
        );
    }
}
