//! Input checks shared by every learner: shapes, finiteness, labels, hyperparameter ranges.

use crate::error::{LearnError, Result, invalid};
use ndarray::ArrayView2;

/// Checks a feature matrix: at least one row and one column, every value finite.
pub fn check_features(x: ArrayView2<'_, f64>) -> Result<()> {
    if x.nrows() == 0 {
        return Err(LearnError::Empty("the feature matrix has no rows".into()));
    }
    if x.ncols() == 0 {
        return Err(LearnError::Empty(
            "the feature matrix has no columns".into(),
        ));
    }
    for (row, r) in x.rows().into_iter().enumerate() {
        for (column, &value) in r.iter().enumerate() {
            if !value.is_finite() {
                return Err(LearnError::NonFinite {
                    what: "features",
                    row,
                    column,
                    value,
                });
            }
        }
    }
    Ok(())
}

/// Checks a labelled classification problem: the features, `y.len() == x.nrows()`,
/// `n_classes ≥ 2` and every label `< n_classes`. Which classes are present is not checked:
/// for a private learner that is private, and DP-SGD or output perturbation fit any labels
/// (a non-private learner adds [`check_two_classes`]).
pub fn check_classification(
    x: ArrayView2<'_, f64>,
    y: &[u32],
    n_classes: usize,
    what: &'static str,
) -> Result<()> {
    check_features(x)?;
    if y.len() != x.nrows() {
        return Err(LearnError::Shape(format!(
            "{what}: {} labels for {} feature rows",
            y.len(),
            x.nrows()
        )));
    }
    if n_classes < 2 {
        return Err(invalid(
            "n_classes",
            format!("must be at least 2, got {n_classes}"),
        ));
    }
    for (row, &label) in y.iter().enumerate() {
        if label as usize >= n_classes {
            return Err(LearnError::LabelOutOfRange {
                row,
                label,
                n_classes,
            });
        }
    }
    Ok(())
}

/// A non-private learner's extra check: at least two distinct labels in `y` (never call it on
/// private labels before a release: whether it fails depends on the data).
pub fn check_two_classes(y: &[u32], what: &'static str) -> Result<()> {
    match y.first() {
        Some(&first) if y.iter().all(|&l| l == first) => {
            Err(LearnError::SingleClass { class: first, what })
        }
        _ => Ok(()),
    }
}

/// Checks that a prediction input has the number of columns the model was fitted on.
pub fn check_predict_input(x: ArrayView2<'_, f64>, n_features: usize) -> Result<()> {
    if x.ncols() != n_features {
        return Err(LearnError::Shape(format!(
            "the model was fitted on {n_features} features, the input has {}",
            x.ncols()
        )));
    }
    if x.nrows() == 0 {
        return Ok(());
    }
    check_features(x)
}

/// `value` must be finite and `> 0`.
pub fn positive(name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(invalid(
            name,
            format!("must be finite and > 0, got {value}"),
        ))
    }
}

/// `value` must be finite and `≥ 0`.
pub fn non_negative(name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(invalid(
            name,
            format!("must be finite and ≥ 0, got {value}"),
        ))
    }
}

/// An integer hyperparameter must be at least `min`.
pub fn at_least(name: &'static str, value: usize, min: usize) -> Result<()> {
    if value >= min {
        Ok(())
    } else {
        Err(invalid(
            name,
            format!("must be at least {min}, got {value}"),
        ))
    }
}

/// The labels of a [`dpfair_data::Target`] as class codes with the number of classes
/// (binary targets are classes 0 and 1). Real-valued targets are refused.
pub fn class_labels(target: &dpfair_data::Target) -> Result<(Vec<u32>, usize)> {
    match target {
        dpfair_data::Target::Binary(v) => Ok((v.iter().map(|&b| u32::from(b)).collect(), 2)),
        dpfair_data::Target::Multiclass { k, labels } => Ok((labels.clone(), *k)),
        dpfair_data::Target::Real(_) => Err(invalid(
            "target",
            "a classifier needs a binary or multi-class target, got a real-valued one",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn errors_name_what_is_wrong() {
        let x = array![[1.0, 2.0], [3.0, f64::NAN]];
        let e = check_features(x.view()).unwrap_err();
        assert!(matches!(
            e,
            LearnError::NonFinite {
                row: 1,
                column: 1,
                ..
            }
        ));
        let x = array![[1.0], [2.0]];
        // One class is fine for the shared check (private learners fit it) ...
        check_classification(x.view(), &[1, 1], 2, "t").unwrap();
        // ... and refused by the non-private learners' extra check.
        assert!(matches!(
            check_two_classes(&[1, 1], "t").unwrap_err(),
            LearnError::SingleClass { class: 1, .. }
        ));
        assert!(matches!(
            check_classification(x.view(), &[0, 3], 2, "t").unwrap_err(),
            LearnError::LabelOutOfRange {
                row: 1,
                label: 3,
                ..
            }
        ));
        assert!(matches!(
            check_classification(x.view(), &[0], 2, "t").unwrap_err(),
            LearnError::Shape(_)
        ));
        let empty = ndarray::Array2::<f64>::zeros((0, 3));
        assert!(matches!(
            check_features(empty.view()).unwrap_err(),
            LearnError::Empty(_)
        ));
        let e = positive("clip", -1.0).unwrap_err();
        assert!(e.to_string().contains("`clip`"));
    }
}
