//! Algorithm 1 (max-edge partition) and its variants, built on **public data only** (Ma & Yang,
//! §3.1 and Algorithm 1).
//!
//! * [`Scaler`]: the domain box. Section 4.3 / Theorem 5 estimate it coordinatewise from the
//!   public sample (min–max, `docs/deviations.md#lpct-constant-public-columns`: a constant column gets width 1); known bounds or the unit cube
//!   are the alternatives.
//! * [`build`]: Algorithm 1 with exact longest-edge bookkeeping (`docs/deviations.md#lpct-longest-edges-with-floats`: integer split counters, never
//!   float edge lengths), the Gini (default) or entropy score with the smallest-index tie-break,
//!   the random max-edge of LPCT-R, and the CART-criterion splitter used on real data.
//! * [`Tree`]: an arena of nodes whose leaves are numbered in depth-first order, so the leaves
//!   under any node form a contiguous range (ancestor sums of eq. (13) are range sums).
//!
//! Thresholds are stored in the data's raw units (`threshold = low + split · width`), so rows are
//! routed without being rescaled: a point goes left iff `x[feature] < threshold` (the paper's convention), and points
//! outside the box reach the nearest boundary cell (`docs/deviations.md#lpct-out-of-range-points`).

mod build;
mod scaler;
mod tree;

pub use build::{build, regular_grid};
pub use scaler::Scaler;
pub use tree::{LeafCounts, Node, Tree};

use super::error::{Result, bad_data};
use ndarray::{ArrayView2, Axis};
use serde::{Deserialize, Serialize};

/// Marks "no node" in child and parent links.
pub const NO_NODE: u32 = u32::MAX;

/// The deepest tree [`build`] accepts in [`Growth::Complete`] mode (2^24 leaves).
pub const MAX_COMPLETE_DEPTH: u32 = 24;

/// The deepest tree [`build`] accepts in [`Growth::Practical`] mode.
pub const MAX_DEPTH: u32 = 48;

/// How a cell chooses its split (Ma & Yang, Algorithm 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Splitter {
    /// Algorithm 1: midpoint of a longest edge, the one minimising the score on public data.
    #[default]
    MaxEdge,
    /// LPCT-R (Cai et al. 2023): midpoint of a longest edge chosen uniformly at random.
    RandomMaxEdge,
    /// The CART-criterion variant of the real-data experiments: any dimension, threshold among
    /// ten quantiles of the node's distinct public values, largest criterion reduction.
    Cart,
}

/// The impurity score of a split (`docs/deviations.md#lpct-gini-or-entropy`: the paper says Gini, the authors' code uses entropy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Criterion {
    /// Gini impurity 2p̂(1 − p̂), compared exactly in integer arithmetic.
    #[default]
    Gini,
    /// Shannon entropy (the authors' code).
    Entropy,
}

/// When a cell stops splitting (`docs/deviations.md#lpct-stopping-rule`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum Growth {
    /// The theoretical Algorithm 1: every cell is split at every level, giving 2^p equal-volume
    /// leaves (max-edge splitters; the CART splitter still stops where no split reduces the
    /// criterion).
    #[default]
    Complete,
    /// The authors' code's stopping rules: a node with at most `min_samples_split` public rows
    /// (or at most that many distinct rows) is a leaf; a split must leave `min_samples_leaf`
    /// public rows on each side; candidates are the top max(1, (m+5)/10) by score.
    Practical {
        min_samples_split: usize,
        min_samples_leaf: usize,
    },
}

/// Parameters of Algorithm 1 and its variants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PartitionConfig {
    /// The depth p (number of halving levels).
    pub depth: u32,
    pub splitter: Splitter,
    pub criterion: Criterion,
    pub growth: Growth,
    /// Seed of the public randomness of [`Splitter::RandomMaxEdge`] (no private data involved).
    pub seed: u64,
}

impl Default for PartitionConfig {
    fn default() -> Self {
        PartitionConfig {
            depth: 4,
            splitter: Splitter::MaxEdge,
            criterion: Criterion::Gini,
            growth: Growth::Complete,
            seed: 0,
        }
    }
}

/// Labels must be 0/1 and as many as the rows.
pub(crate) fn check_labels(y: &[u8], n: usize, what: &str) -> Result<()> {
    if y.len() != n {
        return Err(bad_data(what, format!("{} labels for {n} rows", y.len())));
    }
    if let Some(i) = y.iter().position(|&v| v > 1) {
        return Err(bad_data(
            what,
            format!("row {i}: label {} is not 0/1", y[i]),
        ));
    }
    Ok(())
}

/// Every feature value must be finite.
pub(crate) fn check_finite(x: ArrayView2<f64>, what: &str) -> Result<()> {
    for (i, row) in x.axis_iter(Axis(0)).enumerate() {
        if let Some(l) = row.iter().position(|v| !v.is_finite()) {
            return Err(bad_data(
                what,
                format!("row {i}, feature {l}: value {} is not finite", row[l]),
            ));
        }
    }
    Ok(())
}
