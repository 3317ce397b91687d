//! Fairness and accuracy metrics, named after Fairlearn's where one exists.
//!
//! Groups are given as integer codes per row (`groups[i]`); only groups that have rows take part
//! (a declared group absent from the evaluated rows is reported by [`crate::GroupReport`] with
//! `n = 0` and no rates). Every function checks lengths and refuses empty input.
//!
//! * Binary predictions: [`selection_rates`], [`demographic_parity_difference`] (max − min over
//!   groups), [`demographic_parity_ratio`] (min / max), their `_to_overall` versions,
//!   [`demographic_disparity`] (signed, Xue & Yu, Def. 4: `DD = P(ŷ=1|A=1) − P(ŷ=1|A=0)`),
//!   [`equal_opportunity_difference`].
//! * Multi-class: [`multiclass_unfairness`] `U(g) = max_k max_{s,s'} |P(g=k|S=s) − P(g=k|S=s')|`
//!   (Say et al.'s demographic-parity unfairness).
//! * Regression: [`ks_statistical_parity`], the largest two-sample Kolmogorov–Smirnov distance
//!   between groups' output distributions (Xian et al.), ties as in scipy's `ks_2samp`.
//! * Accuracy: [`accuracy`], [`error_rate`], [`mse`].
//! * Randomized predictors: `expected_*` versions computed from the probabilities instead of
//!   sampled labels (the expectation over the predictor's randomness).

use crate::error::{FairnessError, Result};
use ndarray::ArrayView2;
use std::collections::BTreeMap;

fn check_len(what: &'static str, expected: usize, found: usize) -> Result<()> {
    if expected != found {
        return Err(FairnessError::LengthMismatch {
            what,
            expected,
            found,
        });
    }
    if expected == 0 {
        return Err(FairnessError::Empty);
    }
    Ok(())
}

/// Mean of `values` per group code present in `groups`, with the group's row count.
pub fn group_means(values: &[f64], groups: &[u32]) -> Result<BTreeMap<u32, (usize, f64)>> {
    check_len("groups", values.len(), groups.len())?;
    let mut acc: BTreeMap<u32, (usize, f64)> = BTreeMap::new();
    for (&v, &g) in values.iter().zip(groups) {
        let e = acc.entry(g).or_default();
        e.0 += 1;
        e.1 += v;
    }
    for e in acc.values_mut() {
        e.1 /= e.0 as f64;
    }
    Ok(acc)
}

/// max − min of the group means (0 with a single group).
fn spread(means: &BTreeMap<u32, (usize, f64)>) -> f64 {
    let (lo, hi) = means
        .values()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(_, m)| {
            (lo.min(m), hi.max(m))
        });
    hi - lo
}

fn indicator(y: &[u8]) -> Vec<f64> {
    y.iter().map(|&v| (v == 1) as u8 as f64).collect()
}

fn check_binary(y: &[u8], what: &'static str) -> Result<()> {
    match y.iter().position(|&v| v > 1) {
        Some(row) => Err(FairnessError::NotBinary {
            what,
            row,
            value: y[row] as u32,
        }),
        None => Ok(()),
    }
}

/// P(ŷ = 1 | S = s) for each group present.
pub fn selection_rates(y_pred: &[u8], groups: &[u32]) -> Result<BTreeMap<u32, f64>> {
    check_binary(y_pred, "y_pred")?;
    Ok(group_means(&indicator(y_pred), groups)?
        .into_iter()
        .map(|(g, (_, m))| (g, m))
        .collect())
}

/// max_s P(ŷ=1|S=s) − min_s P(ŷ=1|S=s) over the groups present (Fairlearn's
/// `demographic_parity_difference`, `method="between_groups"`).
pub fn demographic_parity_difference(y_pred: &[u8], groups: &[u32]) -> Result<f64> {
    check_binary(y_pred, "y_pred")?;
    expected_demographic_parity_difference(&indicator(y_pred), groups)
}

/// min_s / max_s of the selection rates (1 when every rate is 0: no group is favoured).
pub fn demographic_parity_ratio(y_pred: &[u8], groups: &[u32]) -> Result<f64> {
    let rates = selection_rates(y_pred, groups)?;
    let (lo, hi) = rates
        .values()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &m| {
            (lo.min(m), hi.max(m))
        });
    Ok(if hi == 0.0 { 1.0 } else { lo / hi })
}

/// max_s |P(ŷ=1|S=s) − P(ŷ=1)| (Fairlearn's `method="to_overall"`).
pub fn demographic_parity_difference_to_overall(y_pred: &[u8], groups: &[u32]) -> Result<f64> {
    let rates = selection_rates(y_pred, groups)?;
    let overall = indicator(y_pred).iter().sum::<f64>() / y_pred.len() as f64;
    Ok(rates
        .values()
        .map(|r| (r - overall).abs())
        .fold(0.0, f64::max))
}

/// min_s min(r_s / r, r / r_s) with r the overall selection rate (Fairlearn's `to_overall`
/// ratio; 1 for a group whose rate and the overall rate are both 0).
pub fn demographic_parity_ratio_to_overall(y_pred: &[u8], groups: &[u32]) -> Result<f64> {
    let rates = selection_rates(y_pred, groups)?;
    let overall = indicator(y_pred).iter().sum::<f64>() / y_pred.len() as f64;
    Ok(rates
        .values()
        .map(|&r| {
            let (lo, hi) = (r.min(overall), r.max(overall));
            if hi == 0.0 { 1.0 } else { lo / hi }
        })
        .fold(1.0, f64::min))
}

/// Signed demographic disparity `DD = P(ŷ=1|S=b) − P(ŷ=1|S=a)` between group codes `a` and `b`
/// (Xue & Yu, Def. 4: `DD(f) = P(Ŷ=1|A=1) − P(Ŷ=1|A=0)` is `a = 0, b = 1`). Both groups need rows.
pub fn demographic_disparity(y_pred: &[u8], groups: &[u32], a: u32, b: u32) -> Result<f64> {
    let rates = selection_rates(y_pred, groups)?;
    let get = |g: u32| {
        rates
            .get(&g)
            .copied()
            .ok_or(FairnessError::NoRowsInGroup { group: g })
    };
    Ok(get(b)? - get(a)?)
}

/// max − min over groups of the true positive rate P(ŷ=1 | Y=1, S=s) (Fairlearn's
/// `equal_opportunity_difference`); groups without positive rows are left out, and at least one
/// group must have some.
pub fn equal_opportunity_difference(y_true: &[u8], y_pred: &[u8], groups: &[u32]) -> Result<f64> {
    check_len("y_pred", y_true.len(), y_pred.len())?;
    check_binary(y_true, "y_true")?;
    check_binary(y_pred, "y_pred")?;
    let (mut v, mut g) = (Vec::new(), Vec::new());
    for i in 0..y_true.len() {
        if y_true[i] == 1 {
            v.push(y_pred[i] as f64);
            g.push(*groups.get(i).ok_or(FairnessError::LengthMismatch {
                what: "groups",
                expected: y_true.len(),
                found: groups.len(),
            })?);
        }
    }
    check_len("groups", y_true.len(), groups.len())?;
    if v.is_empty() {
        return Err(FairnessError::NoPositives);
    }
    Ok(spread(&group_means(&v, &g)?))
}

/// The larger of the between-group differences (max − min over groups) of the true-positive
/// rate `P(ŷ=1 | Y=1, S=s)` and of the false-positive rate `P(ŷ=1 | Y=0, S=s)` (Fairlearn's
/// `equalized_odds_difference`, `method="between_groups"`): [`equal_opportunity_difference`]
/// on the labels and on the flipped labels; each needs a group with rows of that label.
pub fn equalized_odds_difference(y_true: &[u8], y_pred: &[u8], groups: &[u32]) -> Result<f64> {
    check_binary(y_true, "y_true")?;
    let negatives: Vec<u8> = y_true.iter().map(|&y| u8::from(y == 0)).collect();
    Ok(equal_opportunity_difference(y_true, y_pred, groups)?
        .max(equal_opportunity_difference(&negatives, y_pred, groups)?))
}

/// `U(g) = max_k max_{s,s'} |P(g=k|S=s) − P(g=k|S=s')|` over classes `0..k` and the groups
/// present (Say et al.'s unfairness of a multi-class classifier).
pub fn multiclass_unfairness(y_pred: &[u32], k: usize, groups: &[u32]) -> Result<f64> {
    check_len("groups", y_pred.len(), groups.len())?;
    if let Some(row) = y_pred.iter().position(|&c| c as usize >= k) {
        return Err(FairnessError::ClassOutOfRange {
            row,
            class: y_pred[row],
            k,
        });
    }
    let mut worst: f64 = 0.0;
    for c in 0..k as u32 {
        let ind: Vec<f64> = y_pred.iter().map(|&p| (p == c) as u8 as f64).collect();
        worst = worst.max(spread(&group_means(&ind, groups)?));
    }
    Ok(worst)
}

/// Two-sample Kolmogorov–Smirnov distance `sup_x |F_a(x) − F_b(x)|` of the empirical CDFs.
/// Tied values are stepped over together in both samples before comparing, which is what scipy's
/// `ks_2samp` does (it evaluates both CDFs at every pooled value with `side="right"`).
pub fn ks_2samp(a: &[f64], b: &[f64]) -> Result<f64> {
    if a.is_empty() || b.is_empty() {
        return Err(FairnessError::Empty);
    }
    if let Some(row) = a.iter().chain(b).position(|v| !v.is_finite()) {
        return Err(FairnessError::NonFinite { row });
    }
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (na, nb) = (a.len(), b.len());
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < na && j < nb {
        let x = a[i].min(b[j]);
        while i < na && a[i] <= x {
            i += 1;
        }
        while j < nb && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / na as f64 - j as f64 / nb as f64).abs());
    }
    Ok(d)
}

/// Statistical parity of a regressor in KS distance: the largest [`ks_2samp`] between the
/// outputs of any two groups present (0 with a single group).
pub fn ks_statistical_parity(values: &[f64], groups: &[u32]) -> Result<f64> {
    check_len("groups", values.len(), groups.len())?;
    let mut by: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (&v, &g) in values.iter().zip(groups) {
        by.entry(g).or_default().push(v);
    }
    let samples: Vec<&Vec<f64>> = by.values().collect();
    let mut worst: f64 = 0.0;
    for s in 0..samples.len() {
        for t in s + 1..samples.len() {
            worst = worst.max(ks_2samp(samples[s], samples[t])?);
        }
    }
    Ok(worst)
}

/// Fraction of rows with `y_pred == y_true`.
pub fn accuracy(y_true: &[u32], y_pred: &[u32]) -> Result<f64> {
    check_len("y_pred", y_true.len(), y_pred.len())?;
    Ok(y_true.iter().zip(y_pred).filter(|(a, b)| a == b).count() as f64 / y_true.len() as f64)
}

/// 1 − [`accuracy`].
pub fn error_rate(y_true: &[u32], y_pred: &[u32]) -> Result<f64> {
    Ok(1.0 - accuracy(y_true, y_pred)?)
}

/// Mean squared error.
pub fn mse(y_true: &[f64], y_pred: &[f64]) -> Result<f64> {
    check_len("y_pred", y_true.len(), y_pred.len())?;
    Ok(y_true
        .iter()
        .zip(y_pred)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        / y_true.len() as f64)
}

fn check_probabilities(p: &ArrayView2<f64>) -> Result<()> {
    for (row, r) in p.rows().into_iter().enumerate() {
        let s: f64 = r.sum();
        if r.iter().any(|v| !(0.0..=1.0).contains(v)) || (s - 1.0).abs() > 1e-6 {
            return Err(FairnessError::InvalidProbabilities { row, sum: s });
        }
    }
    Ok(())
}

/// Expected accuracy of a randomized classifier: mean over rows of P(ŷ = y_true).
pub fn expected_accuracy(probabilities: ArrayView2<f64>, y_true: &[u32]) -> Result<f64> {
    check_len("y_true", probabilities.nrows(), y_true.len())?;
    check_probabilities(&probabilities)?;
    let k = probabilities.ncols();
    let mut s = 0.0;
    for (row, &y) in y_true.iter().enumerate() {
        if y as usize >= k {
            return Err(FairnessError::ClassOutOfRange { row, class: y, k });
        }
        s += probabilities[[row, y as usize]];
    }
    Ok(s / y_true.len() as f64)
}

/// Expected demographic parity difference: max − min over groups of the mean P(ŷ = 1) (`p_pos`
/// per row, in [0, 1]). With 0/1 values it equals [`demographic_parity_difference`].
pub fn expected_demographic_parity_difference(p_pos: &[f64], groups: &[u32]) -> Result<f64> {
    check_p_pos(p_pos)?;
    Ok(spread(&group_means(p_pos, groups)?))
}

/// Rows of `p_pos` outside [0, 1] are not probabilities.
fn check_p_pos(p_pos: &[f64]) -> Result<()> {
    match p_pos.iter().position(|p| !(0.0..=1.0).contains(p)) {
        Some(row) => Err(FairnessError::InvalidProbabilities {
            row,
            sum: p_pos[row],
        }),
        None => Ok(()),
    }
}

/// Expected accuracy of a randomized binary classifier: mean over rows of P(ŷ = y), i.e. `p` for
/// a positive row and `1 − p` for a negative one (`p_pos` = P(ŷ = 1) per row, in [0, 1]). With
/// 0/1 values it is the accuracy; its complement `mean |p − y|` is the expected error.
pub fn expected_binary_accuracy(p_pos: &[f64], y_true: &[u8]) -> Result<f64> {
    check_len("y_true", p_pos.len(), y_true.len())?;
    check_binary(y_true, "y_true")?;
    check_p_pos(p_pos)?;
    let hits: f64 = p_pos
        .iter()
        .zip(y_true)
        .map(|(&p, &y)| if y == 1 { p } else { 1.0 - p })
        .sum();
    Ok(hits / p_pos.len() as f64)
}

/// Expected signed [`demographic_disparity`] of a randomized classifier: mean P(ŷ = 1) of group
/// `b` minus that of group `a` (`p_pos` per row, in [0, 1]). Both groups need rows.
pub fn expected_demographic_disparity(
    p_pos: &[f64],
    groups: &[u32],
    a: u32,
    b: u32,
) -> Result<f64> {
    check_p_pos(p_pos)?;
    let means = group_means(p_pos, groups)?;
    let get = |g: u32| {
        means
            .get(&g)
            .map(|&(_, m)| m)
            .ok_or(FairnessError::NoRowsInGroup { group: g })
    };
    Ok(get(b)? - get(a)?)
}

/// Expected [`multiclass_unfairness`] of a randomized classifier, from its n × k probabilities.
pub fn expected_multiclass_unfairness(
    probabilities: ArrayView2<f64>,
    groups: &[u32],
) -> Result<f64> {
    check_len("groups", probabilities.nrows(), groups.len())?;
    check_probabilities(&probabilities)?;
    let mut worst: f64 = 0.0;
    for col in probabilities.columns() {
        worst = worst.max(spread(&group_means(&col.to_vec(), groups)?));
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn expected_binary_metrics_match_the_sampled_ones_on_0_1_and_average_otherwise() {
        let y = [1, 0, 1, 0];
        let g = [0, 0, 1, 1];
        // 0/1 predictions: the expected metrics are the ordinary ones.
        let hard = [1u8, 1, 0, 0];
        let p: Vec<f64> = hard.iter().map(|&v| f64::from(v)).collect();
        close(expected_binary_accuracy(&p, &y).unwrap(), 0.5);
        close(
            expected_demographic_disparity(&p, &g, 0, 1).unwrap(),
            demographic_disparity(&hard, &g, 0, 1).unwrap(),
        );
        // Probabilities: P(ŷ = y) = 0.9, 0.8, 0.5, 1 → 0.8; group means 0.55 (0) and 0.25 (1).
        let p = [0.9, 0.2, 0.5, 0.0];
        close(expected_binary_accuracy(&p, &y).unwrap(), 0.8);
        close(
            expected_demographic_disparity(&p, &g, 0, 1).unwrap(),
            0.25 - 0.55,
        );
        assert!(expected_binary_accuracy(&[1.5, 0.0, 0.0, 0.0], &y).is_err());
        assert!(expected_demographic_disparity(&p, &g, 0, 2).is_err());
    }

    #[test]
    fn demographic_parity_with_three_groups() {
        // Group 0: 1,1,0,0 → 0.5; group 1: 1,0,0 → 1/3; group 2: 1,1 → 1. Overall 5/9.
        let y = [1, 1, 0, 0, 1, 0, 0, 1, 1];
        let g = [0, 0, 0, 0, 1, 1, 1, 2, 2];
        let r = selection_rates(&y, &g).unwrap();
        close(r[&0], 0.5);
        close(r[&1], 1.0 / 3.0);
        close(r[&2], 1.0);
        close(demographic_parity_difference(&y, &g).unwrap(), 2.0 / 3.0);
        close(demographic_parity_ratio(&y, &g).unwrap(), 1.0 / 3.0);
        // |1 − 5/9| = 4/9 is the largest gap to overall.
        close(
            demographic_parity_difference_to_overall(&y, &g).unwrap(),
            4.0 / 9.0,
        );
        // Ratios to overall: 0.5 / (5/9) = 0.9, (1/3) / (5/9) = 0.6, (5/9) / 1 = 5/9: min 5/9.
        close(
            demographic_parity_ratio_to_overall(&y, &g).unwrap(),
            5.0 / 9.0,
        );
        close(
            demographic_disparity(&y, &g, 0, 1).unwrap(),
            1.0 / 3.0 - 0.5,
        );
        close(
            demographic_disparity(&y, &g, 1, 0).unwrap(),
            0.5 - 1.0 / 3.0,
        );
        assert!(demographic_disparity(&y, &g, 0, 7).is_err());
        assert!(demographic_parity_difference(&[2, 0], &[0, 1]).is_err());
        assert!(demographic_parity_difference(&[1, 0], &[0]).is_err());
        assert!(demographic_parity_difference(&[], &[]).is_err());
        close(demographic_parity_ratio(&[0, 0], &[0, 1]).unwrap(), 1.0);
    }

    #[test]
    fn equal_opportunity_uses_positive_rows_only() {
        // Positives: group 0 rows 0,1 (pred 1,0 → 1/2); group 1 rows 3,4,5 (pred 1,1,1 → 1).
        let y_true = [1, 1, 0, 1, 1, 1, 0];
        let y_pred = [1, 0, 1, 1, 1, 1, 0];
        let g = [0, 0, 0, 1, 1, 1, 2];
        close(
            equal_opportunity_difference(&y_true, &y_pred, &g).unwrap(),
            0.5,
        );
        assert!(equal_opportunity_difference(&[0, 0], &[1, 1], &[0, 1]).is_err());
    }

    #[test]
    fn equalized_odds_is_the_larger_of_the_tpr_and_fpr_differences() {
        // TPR: group 0 rows 0,1 → 1, group 1 row 4 → 1 (difference 0); FPR: group 0 rows 2,3 →
        // 0, group 1 rows 5,6 → 1/2.
        let y_true = [1, 1, 0, 0, 1, 0, 0];
        let y_pred = [1, 1, 0, 0, 1, 1, 0];
        let g = [0, 0, 0, 0, 1, 1, 1];
        close(
            equal_opportunity_difference(&y_true, &y_pred, &g).unwrap(),
            0.0,
        );
        close(
            equalized_odds_difference(&y_true, &y_pred, &g).unwrap(),
            0.5,
        );
        // No negative rows: no false-positive rate.
        assert!(equalized_odds_difference(&[1, 1], &[1, 0], &[0, 1]).is_err());
    }

    #[test]
    fn multiclass_unfairness_by_hand() {
        // Group 0 predicts classes 0,1,2,2 → (1/4, 1/4, 1/2); group 1: 0,0 → (1, 0, 0);
        // group 2: 1,2 → (0, 1/2, 1/2). Class 0 spread: 1 − 0 = 1.
        let y = [0, 1, 2, 2, 0, 0, 1, 2];
        let g = [0, 0, 0, 0, 1, 1, 2, 2];
        close(multiclass_unfairness(&y, 3, &g).unwrap(), 1.0);
        let y2 = [0, 1, 0, 1, 0, 0];
        let g2 = [0, 0, 1, 1, 2, 2];
        // Rates of class 0: 1/2, 1/2, 1; class 1: 1/2, 1/2, 0 → U = 1/2.
        close(multiclass_unfairness(&y2, 2, &g2).unwrap(), 0.5);
        assert!(multiclass_unfairness(&[3], 3, &[0]).is_err());
        // Binary case: U equals the demographic parity difference.
        let yb = [1u8, 0, 1, 1, 0, 0];
        let yc: Vec<u32> = yb.iter().map(|&v| v as u32).collect();
        close(
            multiclass_unfairness(&yc, 2, &g2).unwrap(),
            demographic_parity_difference(&yb, &g2).unwrap(),
        );
    }

    #[test]
    fn ks_two_sample_with_ties_matches_scipy() {
        // Both CDFs at every pooled value: x = 1: |1/4 − 0| = 1/4; x = 2: |3/4 − 2/3| = 1/12;
        // x = 3: |1 − 2/3| = 1/3; x = 4: 0. D = 1/3 (scipy's ks_2samp gives 0.3333…).
        close(
            ks_2samp(&[1.0, 2.0, 2.0, 3.0], &[2.0, 2.0, 4.0]).unwrap(),
            1.0 / 3.0,
        );
        // Identical samples, all tied: 0 (stepping one sample past a tie before the other would
        // wrongly give 1).
        close(ks_2samp(&[5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap(), 0.0);
        // Disjoint samples: 1.
        close(ks_2samp(&[0.0, 1.0], &[2.0, 3.0]).unwrap(), 1.0);
        assert!(ks_2samp(&[], &[1.0]).is_err());
        assert!(ks_2samp(&[f64::NAN], &[1.0]).is_err());
    }

    #[test]
    fn ks_statistical_parity_is_the_worst_pair() {
        // Groups: 0 → {1, 2}, 1 → {1, 2}, 2 → {3, 4}: pairs (0,1) 0, (0,2) 1, (1,2) 1.
        let v = [1.0, 2.0, 1.0, 2.0, 3.0, 4.0];
        let g = [0, 0, 1, 1, 2, 2];
        close(ks_statistical_parity(&v, &g).unwrap(), 1.0);
        // Groups 0 → {1, 2, 3}, 1 → {2, 3, 4}: at x = 1: 1/3; x = 2: |2/3 − 1/3| = 1/3; x = 3: 1 − 2/3.
        close(
            ks_statistical_parity(&[1.0, 2.0, 3.0, 2.0, 3.0, 4.0], &[0, 0, 0, 1, 1, 1]).unwrap(),
            1.0 / 3.0,
        );
    }

    #[test]
    fn accuracy_error_mse() {
        close(accuracy(&[0, 1, 2, 1], &[0, 1, 1, 1]).unwrap(), 0.75);
        close(error_rate(&[0, 1, 2, 1], &[0, 1, 1, 1]).unwrap(), 0.25);
        close(mse(&[1.0, 2.0, 3.0], &[1.0, 4.0, 2.0]).unwrap(), 5.0 / 3.0);
        assert!(accuracy(&[0], &[0, 1]).is_err());
    }

    #[test]
    fn expected_versions_from_probabilities() {
        let p = array![[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]];
        // P(correct): 0.8 (y=1), 0.6 (y=0), 0.5 → mean 0.6333….
        close(expected_accuracy(p.view(), &[1, 0, 1]).unwrap(), 1.9 / 3.0);
        // Groups 0: rows 0,1 → mean P(1) = 0.6; group 1: 0.5 → 0.1.
        close(
            expected_demographic_parity_difference(&[0.8, 0.4, 0.5], &[0, 0, 1]).unwrap(),
            0.1,
        );
        // Class 0: group means 0.4, 0.5; class 1: 0.6, 0.5 → U = 0.1.
        close(
            expected_multiclass_unfairness(p.view(), &[0, 0, 1]).unwrap(),
            0.1,
        );
        assert!(expected_accuracy(array![[0.5, 0.6]].view(), &[0]).is_err());
        assert!(expected_demographic_parity_difference(&[1.5], &[0]).is_err());
    }
}
