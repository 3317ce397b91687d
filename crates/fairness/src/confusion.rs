//! [`GroupConfusion`]: the exact counts a private group report releases, one per cell of
//! group × true label × prediction (binary classification), over groups declared in advance.
//!
//! The set of groups is a public declaration (the model's schema or the user's list), never the
//! groups that happen to occur in the private rows: a declared group without rows is a row of
//! zeros, so the shape of everything derived from the counts does not depend on private data
//! (docs/evaluation.md). The counts are a mergeable exact accumulator (`add` / `merge`): the same
//! totals on one core, many threads or many files.

use crate::error::{FairnessError, Result};

/// Cells per group: (y, ŷ) ∈ {0, 1}², at index `2·y + ŷ`.
pub const CELLS_PER_GROUP: usize = 4;

/// Exact group × label × prediction counts over declared groups (binary labels 0/1).
///
/// ```
/// use dpfair_fairness::GroupConfusion;
/// let names = vec!["a".to_string(), "b".to_string(), "c".to_string()];
/// let c = GroupConfusion::from_rows(names, &[1, 0, 1], &[1, 1, 0], &[0, 0, 1])?;
/// assert_eq!(c.count(0, 1, 1), 1); // group a, y = 1, ŷ = 1
/// assert_eq!(c.count(1, 1, 0), 1); // group b, y = 1, ŷ = 0
/// assert_eq!(c.counts().len(), 3 * 4); // c is declared: its cells are zeros, not missing
/// # Ok::<(), dpfair_fairness::FairnessError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupConfusion {
    groups: Vec<String>,
    counts: Vec<u64>,
}

impl GroupConfusion {
    /// Empty counts over `groups`, the declared group names in code order: at least two,
    /// distinct and non-empty.
    pub fn new(groups: Vec<String>) -> Result<Self> {
        if groups.len() < 2 {
            return Err(FairnessError::InvalidParameter {
                name: "groups",
                reason: format!(
                    "a group report needs at least 2 declared groups, got {}",
                    groups.len()
                ),
            });
        }
        for (i, g) in groups.iter().enumerate() {
            if g.is_empty() {
                return Err(FairnessError::InvalidParameter {
                    name: "groups",
                    reason: format!("group {i} has an empty name"),
                });
            }
            if groups[..i].contains(g) {
                return Err(FairnessError::InvalidParameter {
                    name: "groups",
                    reason: format!("group `{g}` is declared twice"),
                });
            }
        }
        let counts = vec![0; groups.len() * CELLS_PER_GROUP];
        Ok(GroupConfusion { groups, counts })
    }

    /// Counts of the rows `(y_true[i], y_pred[i], group_codes[i])`; an error names the first
    /// row whose label is not 0/1 or whose group code is not declared.
    pub fn from_rows(
        groups: Vec<String>,
        y_true: &[u8],
        y_pred: &[u8],
        group_codes: &[u32],
    ) -> Result<Self> {
        let mut c = Self::new(groups)?;
        c.add_rows(y_true, y_pred, group_codes)?;
        Ok(c)
    }

    /// Adds rows (see [`GroupConfusion::from_rows`]); on an error nothing is added.
    pub fn add_rows(&mut self, y_true: &[u8], y_pred: &[u8], group_codes: &[u32]) -> Result<()> {
        for (what, len) in [("y_pred", y_pred.len()), ("groups", group_codes.len())] {
            if len != y_true.len() {
                return Err(FairnessError::LengthMismatch {
                    what,
                    expected: y_true.len(),
                    found: len,
                });
            }
        }
        let k = self.groups.len();
        let mut cells = Vec::with_capacity(y_true.len());
        for (row, ((&y, &p), &g)) in y_true.iter().zip(y_pred).zip(group_codes).enumerate() {
            for (what, v) in [("y_true", y), ("y_pred", p)] {
                if v > 1 {
                    return Err(FairnessError::NotBinary {
                        what,
                        row,
                        value: v as u32,
                    });
                }
            }
            if g as usize >= k {
                return Err(FairnessError::ClassOutOfRange { row, class: g, k });
            }
            cells.push(Self::cell(g as usize, y, p));
        }
        for c in cells {
            self.counts[c] += 1;
        }
        Ok(())
    }

    /// Adds another accumulator over the same declared groups.
    pub fn merge(&mut self, other: &GroupConfusion) -> Result<()> {
        if other.groups != self.groups {
            return Err(FairnessError::InvalidParameter {
                name: "groups",
                reason: "the two accumulators declare different groups".into(),
            });
        }
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        Ok(())
    }

    /// The index of cell (group g, label y, prediction ŷ) in [`GroupConfusion::counts`].
    pub fn cell(g: usize, y: u8, p: u8) -> usize {
        g * CELLS_PER_GROUP + 2 * y as usize + p as usize
    }

    /// The count of cell (g, y, ŷ).
    pub fn count(&self, g: usize, y: u8, p: u8) -> u64 {
        self.counts[Self::cell(g, y, p)]
    }

    /// Every cell, in [`GroupConfusion::cell`] order.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The declared group names, in code order.
    pub fn groups(&self) -> &[String] {
        &self.groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(k: usize) -> Vec<String> {
        (0..k).map(|g| format!("g{g}")).collect()
    }

    #[test]
    fn counts_merge_and_refusals() {
        let mut a =
            GroupConfusion::from_rows(names(2), &[1, 1, 0], &[1, 0, 0], &[0, 1, 1]).unwrap();
        let b = GroupConfusion::from_rows(names(2), &[0], &[1], &[0]).unwrap();
        a.merge(&b).unwrap();
        assert_eq!(a.counts(), &[0, 1, 0, 1, 1, 0, 1, 0]);
        assert!(a.merge(&GroupConfusion::new(names(3)).unwrap()).is_err());
        // Refusals name the row; nothing is added on error.
        let before = a.clone();
        let e = a.add_rows(&[1, 2], &[0, 0], &[0, 0]).unwrap_err();
        assert!(e.to_string().contains("row 1"), "{e}");
        assert!(a.add_rows(&[1], &[0], &[2]).is_err());
        assert!(a.add_rows(&[1], &[0, 1], &[0]).is_err());
        assert_eq!(a, before);
        assert!(GroupConfusion::new(names(1)).is_err());
        assert!(GroupConfusion::new(vec!["x".into(), "x".into()]).is_err());
    }
}
