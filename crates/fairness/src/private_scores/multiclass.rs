//! [`MulticlassReport`]: accuracy and DP2DP's multi-class unfairness U of class predictions from
//! one release of the group × label × prediction counts (docs/evaluation.md, "`dpfair compare`:
//! private by default", "A multi-class target").

use super::{check_release, check_rows, figure};
use crate::error::{FairnessError, Result};
use crate::interval::{Interval, count_interval, rate_interval, spread_interval};
use crate::private_report::Figure;
use dpfair_privacy::mechanisms::{histogram_scale, noisy_counts};
use dpfair_privacy::{Ledger, Noise, Relation};
use serde::{Deserialize, Serialize};

/// A private multi-class report (module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulticlassReport {
    /// The ε of the one release.
    pub epsilon: f64,
    pub relation: Relation,
    /// The level of every interval, each figure's own.
    pub level: f64,
    /// The discrete Laplace scale of the noise on each count.
    pub scale: f64,
    pub groups: Vec<String>,
    pub classes: Vec<String>,
    /// The released counts, group × true class × predicted class (row-major).
    pub noisy_counts: Vec<i64>,
    /// P(ŷ = y) over all rows.
    pub accuracy: Figure,
    /// DP2DP's U: max over classes c of (max − min over groups of P(ŷ = c | group)); its
    /// interval takes each group × class rate at β/(K·k) (union bound).
    pub unfairness: Figure,
    /// One row per declared group.
    pub by_group: Vec<MulticlassRow>,
}

/// One declared group's figures, each at the report's level on its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulticlassRow {
    pub group: String,
    pub count: Figure,
    pub accuracy: Figure,
    /// P(ŷ = c | group) for each class c, in class order.
    pub selection_rates: Vec<Figure>,
}

impl MulticlassReport {
    /// Counts the rows (`y` true and `predicted` classes, codes into `classes`; `group` codes
    /// into `groups`), releases the counts once through [`noisy_counts`] (charged to `ledger` as
    /// `label` at `epsilon`) and derives the report with intervals at `level`. `noise` must be
    /// [`Noise::os`] for a release anyone sees.
    ///
    /// ```
    /// use dpfair_fairness::private_scores::MulticlassReport;
    /// use dpfair_privacy::{Budget, Ledger, Noise};
    /// let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    /// let y: Vec<u32> = (0..3_000).map(|i| i % 3).collect();
    /// let p: Vec<u32> = (0..3_000).map(|i| if i % 5 == 0 { (i + 1) % 3 } else { i % 3 }).collect();
    /// let g: Vec<u32> = (0..3_000).map(|i| (i % 7 == 0) as u32).collect();
    /// let mut ledger = Ledger::new(Budget::pure(1.0)?);
    /// let mut noise = Noise::seeded(1); // seeded for the example only: a release uses Noise::os()
    /// let r = MulticlassReport::release(
    ///     &mut ledger, &mut noise, "evaluation", &names(&["a", "b"]), &names(&["x", "y", "z"]),
    ///     (&y, &p, &g), 1.0, 0.95,
    /// )?;
    /// assert_eq!(ledger.entries().len(), 1);
    /// assert!(r.accuracy.lower <= 0.8 && 0.8 <= r.accuracy.upper);
    /// assert_eq!(r.by_group[1].selection_rates.len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn release(
        ledger: &mut Ledger,
        noise: &mut Noise,
        label: &str,
        groups: &[String],
        classes: &[String],
        (y, predicted, group): (&[u32], &[u32], &[u32]),
        epsilon: f64,
        level: f64,
    ) -> Result<Self> {
        let beta = check_release(epsilon, level)?;
        let (n_groups, k) = (groups.len(), classes.len());
        check_rows(y.len(), &[("predicted", predicted.len())], group, n_groups)?;
        if k < 2 {
            return Err(FairnessError::InvalidParameter {
                name: "classes",
                reason: format!("a multi-class report needs at least 2 classes, got {k}"),
            });
        }
        let cell = |g: usize, y: usize, p: usize| (g * k + y) * k + p;
        let mut counts = vec![0u64; n_groups * k * k];
        for (row, ((&t, &p), &g)) in y.iter().zip(predicted).zip(group).enumerate() {
            if let Some(&class) = [t, p].iter().find(|&&c| c as usize >= k) {
                return Err(FairnessError::ClassOutOfRange { row, class, k });
            }
            counts[cell(g as usize, t as usize, p as usize)] += 1;
        }
        let relation = ledger.relation();
        let noisy = noisy_counts(ledger, noise, label, &counts, epsilon)?;
        let scale = histogram_scale(relation, epsilon);
        // The noisy cells of the groups `gs` split by `hit(true, predicted)`.
        let split = |gs: &[usize], hit: &dyn Fn(usize, usize) -> bool| {
            let (mut yes, mut no) = (Vec::new(), Vec::new());
            for &g in gs {
                for t in 0..k {
                    for p in 0..k {
                        let v = noisy[cell(g, t, p)];
                        if hit(t, p) { yes.push(v) } else { no.push(v) }
                    }
                }
            }
            (yes, no)
        };
        let rate = |gs: &[usize], hit: &dyn Fn(usize, usize) -> bool, b: f64| {
            let (yes, no) = split(gs, hit);
            (ratio(&yes, &no), rate_interval(&yes, &no, scale, b))
        };
        let correct = |t: usize, p: usize| t == p;
        let all: Vec<usize> = (0..n_groups).collect();
        let (accuracy, accuracy_interval) = rate(&all, &correct, beta);
        // U: per class, the spread over groups of the rate of predicting it.
        let mut unfairness = f64::NAN;
        let (mut lower, mut upper) = (0.0f64, 0.0f64);
        for c in 0..k {
            let predicts_c = |_: usize, p: usize| p == c;
            let (rates, intervals): (Vec<f64>, Vec<Interval>) = (0..n_groups)
                .map(|g| rate(&[g], &predicts_c, beta / (n_groups * k) as f64))
                .unzip();
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
        let by_group = groups
            .iter()
            .enumerate()
            .map(|(g, name)| {
                let (cells, _) = split(&[g], &|_, _| true);
                let (count, count_iv) = (
                    cells.iter().map(|&c| c.max(0) as f64).sum::<f64>(),
                    count_interval(&cells, scale, beta),
                );
                let (a, a_iv) = rate(&[g], &correct, beta);
                MulticlassRow {
                    group: name.clone(),
                    count: figure(count, count_iv),
                    accuracy: figure(a, a_iv),
                    selection_rates: (0..k)
                        .map(|c| {
                            let (r, iv) = rate(&[g], &|_, p| p == c, beta);
                            figure(r, iv)
                        })
                        .collect(),
                }
            })
            .collect();
        Ok(MulticlassReport {
            epsilon,
            relation,
            level,
            scale,
            groups: groups.to_vec(),
            classes: classes.to_vec(),
            noisy_counts: noisy,
            accuracy: figure(accuracy, accuracy_interval),
            unfairness: figure(unfairness, Interval { lower, upper }),
            by_group,
        })
    }
}

/// Σ yes⁺ / Σ (yes⁺ + no⁺) of noisy cells clamped at 0 (NaN when that is 0 / 0).
fn ratio(yes: &[i64], no: &[i64]) -> f64 {
    let sum = |v: &[i64]| v.iter().map(|&c| c.max(0) as f64).sum::<f64>();
    let (a, b) = (sum(yes), sum(no));
    if a + b > 0.0 { a / (a + b) } else { f64::NAN }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::private_scores::tests::coverage;
    use dpfair_privacy::Budget;
    use rand::RngExt;

    /// Two groups, three classes, labels uniform and predictions independent of them, predicted
    /// with rates (0.5, 0.3, 0.2) in group 0 and (0.3, 0.3, 0.4) in group 1: accuracy 1/3 and
    /// U = 0.2.
    #[test]
    fn multiclass_intervals_cover_the_population_figures() {
        let (mut acc_hits, mut u_hits) = (0, 0);
        let names = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
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
            let r = MulticlassReport::release(
                &mut ledger,
                noise,
                "t",
                &names(2),
                &names(3),
                (&y, &predicted, &groups),
                1.0,
                0.95,
            )
            .unwrap();
            let (a, u) = (r.accuracy.interval(), r.unfairness.interval());
            acc_hits += usize::from(a.contains(1.0 / 3.0));
            u_hits += usize::from(u.contains(0.2));
            let (av, uv) = (r.accuracy.value.unwrap(), r.unfairness.value.unwrap());
            assert!(a.contains(av) && u.contains(uv));
            // Group 1 predicts class 2 at 0.4: its own interval covers that in most draws.
            assert!(r.by_group[1].selection_rates[2].lower < 0.45);
            a.contains(1.0 / 3.0) && u.contains(0.2)
        });
        assert!(
            acc_hits >= 279 && u_hits >= 279,
            "{acc_hits} {u_hits} of 300"
        );
        assert!(share >= 0.93, "{share}");
    }

    #[test]
    fn bad_rows_are_named() {
        let names = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
        let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
        let mut noise = Noise::seeded(1);
        let mut run = |y: &[u32], g: &[u32]| {
            MulticlassReport::release(
                &mut ledger,
                &mut noise,
                "t",
                &names(2),
                &names(3),
                (y, &[0, 1], g),
                1.0,
                0.95,
            )
            .unwrap_err()
            .to_string()
        };
        assert!(run(&[0, 3], &[0, 1]).contains("class 3 is outside 0..3"));
        assert!(run(&[0, 1], &[0, 2]).contains("row 1: a group code"));
        assert!(run(&[0], &[0, 1]).contains("predicted has 2 entries"));
        assert!(
            ledger.entries().is_empty(),
            "a refused release spent nothing"
        );
    }
}
