//! A group-wise report like Fairlearn's `MetricFrame`: each metric overall and per group, with
//! its between-group difference (max − min).

use crate::error::{FairnessError, Result};

/// One metric as a mean of per-row values over the rows where `mask` holds (all rows if `None`):
/// accuracy = mean of [ŷ = y], selection rate = mean of [ŷ = 1], true positive rate = mean of
/// [ŷ = 1] over rows with y = 1, MSE = mean of (ŷ − y)².
struct Column {
    name: String,
    values: Vec<f64>,
    mask: Option<Vec<bool>>,
}

/// One row of the report: a group (or "overall"), its size and each metric (`None` when the
/// metric has no rows in this group, e.g. a true positive rate without positives).
#[derive(Clone, Debug, PartialEq)]
pub struct GroupRow {
    pub group: String,
    pub n: usize,
    pub values: Vec<Option<f64>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GroupReport {
    /// Metric names, in column order.
    pub metrics: Vec<String>,
    pub overall: GroupRow,
    /// One row per group name, in code order (declared groups without rows have `n = 0`).
    pub by_group: Vec<GroupRow>,
}

impl GroupReport {
    fn build(columns: Vec<Column>, groups: &[u32], group_names: &[String]) -> Result<Self> {
        let n = groups.len();
        if n == 0 {
            return Err(FairnessError::Empty);
        }
        for c in &columns {
            if c.values.len() != n {
                return Err(FairnessError::LengthMismatch {
                    what: "groups",
                    expected: c.values.len(),
                    found: n,
                });
            }
        }
        let k = group_names.len();
        if let Some(row) = groups.iter().position(|&g| g as usize >= k) {
            return Err(FairnessError::ClassOutOfRange {
                row,
                class: groups[row],
                k,
            });
        }
        let row_for = |name: String, sel: &dyn Fn(usize) -> bool| {
            let size = (0..n).filter(|&i| sel(i)).count();
            let values = columns
                .iter()
                .map(|c| {
                    let (mut s, mut m) = (0.0, 0usize);
                    for i in 0..n {
                        if sel(i) && c.mask.as_ref().is_none_or(|mask| mask[i]) {
                            s += c.values[i];
                            m += 1;
                        }
                    }
                    (m > 0).then(|| s / m as f64)
                })
                .collect();
            GroupRow {
                group: name,
                n: size,
                values,
            }
        };
        let overall = row_for("overall".into(), &|_| true);
        let by_group = group_names
            .iter()
            .enumerate()
            .map(|(g, name)| row_for(name.clone(), &|i| groups[i] == g as u32))
            .collect();
        Ok(GroupReport {
            metrics: columns.into_iter().map(|c| c.name).collect(),
            overall,
            by_group,
        })
    }

    /// Binary classification: accuracy, selection_rate, true_positive_rate.
    pub fn binary(
        y_true: &[u8],
        y_pred: &[u8],
        groups: &[u32],
        group_names: &[String],
    ) -> Result<Self> {
        check_len(y_true.len(), y_pred.len())?;
        let correct = y_true
            .iter()
            .zip(y_pred)
            .map(|(a, b)| (a == b) as u8 as f64)
            .collect();
        let selected: Vec<f64> = y_pred.iter().map(|&p| (p == 1) as u8 as f64).collect();
        let positives = y_true.iter().map(|&y| y == 1).collect();
        Self::build(
            vec![
                Column {
                    name: "accuracy".into(),
                    values: correct,
                    mask: None,
                },
                Column {
                    name: "selection_rate".into(),
                    values: selected.clone(),
                    mask: None,
                },
                Column {
                    name: "true_positive_rate".into(),
                    values: selected,
                    mask: Some(positives),
                },
            ],
            groups,
            group_names,
        )
    }

    /// Multi-class: accuracy, then `rate(label)` = P(ŷ = label) for each class.
    pub fn multiclass(
        y_true: &[u32],
        y_pred: &[u32],
        class_labels: &[String],
        groups: &[u32],
        group_names: &[String],
    ) -> Result<Self> {
        check_len(y_true.len(), y_pred.len())?;
        let mut cols = vec![Column {
            name: "accuracy".into(),
            values: y_true
                .iter()
                .zip(y_pred)
                .map(|(a, b)| (a == b) as u8 as f64)
                .collect(),
            mask: None,
        }];
        for (c, label) in class_labels.iter().enumerate() {
            cols.push(Column {
                name: format!("rate({label})"),
                values: y_pred
                    .iter()
                    .map(|&p| (p == c as u32) as u8 as f64)
                    .collect(),
                mask: None,
            });
        }
        Self::build(cols, groups, group_names)
    }

    /// Regression: mse and mean_prediction.
    pub fn regression(
        y_true: &[f64],
        y_pred: &[f64],
        groups: &[u32],
        group_names: &[String],
    ) -> Result<Self> {
        check_len(y_true.len(), y_pred.len())?;
        Self::build(
            vec![
                Column {
                    name: "mse".into(),
                    values: y_true
                        .iter()
                        .zip(y_pred)
                        .map(|(a, b)| (a - b) * (a - b))
                        .collect(),
                    mask: None,
                },
                Column {
                    name: "mean_prediction".into(),
                    values: y_pred.to_vec(),
                    mask: None,
                },
            ],
            groups,
            group_names,
        )
    }

    /// max − min of `metric` over the groups where it is defined (Fairlearn's
    /// `MetricFrame.difference()`); `None` for an unknown metric or no defined group.
    pub fn difference(&self, metric: &str) -> Option<f64> {
        let j = self.metrics.iter().position(|m| m == metric)?;
        let vals: Vec<f64> = self.by_group.iter().filter_map(|r| r.values[j]).collect();
        if vals.is_empty() {
            return None;
        }
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        Some(hi - lo)
    }

    /// A plain-text table: one line per group plus overall, decimals with 6 digits.
    pub fn render(&self) -> String {
        let width = self
            .by_group
            .iter()
            .map(|r| r.group.chars().count())
            .chain(["overall".len(), "group".len()])
            .max()
            .unwrap_or(5);
        let mut s = format!("{:<width$} {:>8}", "group", "n");
        for m in &self.metrics {
            s.push_str(&format!(" {:>w$}", m, w = m.len().max(10)));
        }
        s.push('\n');
        for r in self.by_group.iter().chain(std::iter::once(&self.overall)) {
            s.push_str(&format!("{:<width$} {:>8}", r.group, r.n));
            for (m, v) in self.metrics.iter().zip(&r.values) {
                let w = m.len().max(10);
                match v {
                    Some(v) => s.push_str(&format!(" {v:>w$.6}")),
                    None => s.push_str(&format!(" {:>w$}", "n/a")),
                }
            }
            s.push('\n');
        }
        s
    }
}

fn check_len(a: usize, b: usize) -> Result<()> {
    if a != b {
        return Err(FairnessError::LengthMismatch {
            what: "y_pred",
            expected: a,
            found: b,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn binary_report_by_hand() {
        // Group a: y 1,1,0 / ŷ 1,0,0 → acc 2/3, sel 1/3, tpr 1/2.
        // Group b: y 0,0 / ŷ 1,1 → acc 0, sel 1, tpr n/a. Group c: declared, no rows.
        let r = GroupReport::binary(
            &[1, 1, 0, 0, 0],
            &[1, 0, 0, 1, 1],
            &[0, 0, 0, 1, 1],
            &names(&["a", "b", "c"]),
        )
        .unwrap();
        assert_eq!(
            r.by_group[0].values,
            vec![Some(2.0 / 3.0), Some(1.0 / 3.0), Some(0.5)]
        );
        assert_eq!(r.by_group[1].values, vec![Some(0.0), Some(1.0), None]);
        assert_eq!(r.by_group[2].n, 0);
        assert_eq!(r.overall.values, vec![Some(0.4), Some(0.6), Some(0.5)]);
        assert!((r.difference("selection_rate").unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(r.difference("true_positive_rate"), Some(0.0));
        let table = r.render();
        assert!(table.contains("0.666667"), "{table}");
        assert!(table.contains("n/a"));
        assert!(GroupReport::binary(&[1], &[1], &[3], &names(&["a"])).is_err());
    }

    #[test]
    fn multiclass_and_regression_reports() {
        let r = GroupReport::multiclass(
            &[0, 1, 2, 2],
            &[0, 2, 2, 2],
            &names(&["x", "y", "z"]),
            &[0, 0, 1, 1],
            &names(&["g0", "g1"]),
        )
        .unwrap();
        assert_eq!(r.metrics[3], "rate(z)");
        assert_eq!(
            r.by_group[0].values,
            vec![Some(0.5), Some(0.5), Some(0.0), Some(0.5)]
        );
        assert_eq!(r.difference("rate(z)"), Some(0.5));
        let q = GroupReport::regression(
            &[1.0, 2.0, 3.0],
            &[1.0, 3.0, 5.0],
            &[0, 1, 1],
            &names(&["a", "b"]),
        )
        .unwrap();
        assert_eq!(q.by_group[1].values, vec![Some(2.5), Some(4.0)]);
        assert_eq!(q.overall.values[0], Some(5.0 / 3.0));
    }
}
