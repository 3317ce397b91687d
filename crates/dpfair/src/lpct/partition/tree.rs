//! The partition π as a tree: an arena of nodes whose leaves are numbered in depth-first order,
//! routing of rows to leaves, per-leaf counts, and the structural checks of a loaded tree.

use super::{NO_NODE, Scaler, check_labels};
use crate::lpct::error::{Result, bad_data};
use ndarray::ArrayView2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// One node of the tree: an internal split or a leaf.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The split dimension ℓ (unused in a leaf).
    pub feature: u32,
    /// The split in raw units: x^ℓ < threshold goes left.
    pub threshold: f64,
    /// The same split in the scaled coordinates of [`Scaler`] (the dyadic midpoint for max-edge).
    pub split: f64,
    pub left: u32,
    pub right: u32,
    pub parent: u32,
    /// Depth i of the cell (the root has depth 0).
    pub depth: u32,
    /// The leaves under this node are `first_leaf..end_leaf` (depth-first numbering).
    pub first_leaf: u32,
    pub end_leaf: u32,
}

impl Node {
    pub fn is_leaf(&self) -> bool {
        self.left == NO_NODE
    }

    pub(super) fn leaf(parent: u32, depth: u32) -> Self {
        Node {
            feature: 0,
            threshold: 0.0,
            split: 0.0,
            left: NO_NODE,
            right: NO_NODE,
            parent,
            depth,
            first_leaf: 0,
            end_leaf: 0,
        }
    }
}

/// Per-leaf counts of a sample: `count[j]` rows in leaf j, `positive[j]` of them with label 1
/// (the sums Σ_i U_i^j and Σ_i V_i^j).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeafCounts {
    pub count: Vec<u64>,
    pub positive: Vec<u64>,
}

impl LeafCounts {
    fn zeros(n: usize) -> Self {
        LeafCounts {
            count: vec![0; n],
            positive: vec![0; n],
        }
    }

    fn add(mut self, other: LeafCounts) -> Self {
        for (a, b) in self.count.iter_mut().zip(other.count) {
            *a += b;
        }
        for (a, b) in self.positive.iter_mut().zip(other.positive) {
            *a += b;
        }
        self
    }
}

/// The partition π: a binary tree over the domain box. Deserialising checks the structure
/// ([`Tree::validate`]), so a malformed file is an error, never a panic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawTree")]
pub struct Tree {
    nodes: Vec<Node>,
    scaler: Scaler,
    #[serde(skip)]
    leaf_nodes: Vec<u32>,
    /// The nodes in a compact form for routing (16 bytes each, so a depth-16 tree's 131 k nodes
    /// stay in cache while millions of rows stream through).
    #[serde(skip)]
    route: Vec<Route>,
}

/// A node for routing: internal (`feature`, `threshold`, children `left`, `left + 1`) or a leaf
/// (`feature == NO_NODE`, `left` = leaf index).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Route {
    threshold: f64,
    feature: u32,
    left: u32,
}

fn routes(nodes: &[Node]) -> Vec<Route> {
    nodes
        .iter()
        .map(|n| {
            if n.is_leaf() {
                Route {
                    threshold: 0.0,
                    feature: NO_NODE,
                    left: n.first_leaf,
                }
            } else {
                Route {
                    threshold: n.threshold,
                    feature: n.feature,
                    left: n.left,
                }
            }
        })
        .collect()
}

impl Tree {
    /// The tree over `scaler` with these nodes (index 0 the root, children after their parent):
    /// numbers the leaves and builds the routing table.
    pub(super) fn from_nodes(mut nodes: Vec<Node>, scaler: Scaler) -> Tree {
        let leaf_nodes = number_leaves(&mut nodes);
        let route = routes(&nodes);
        Tree {
            nodes,
            scaler,
            leaf_nodes,
            route,
        }
    }

    /// All nodes; index 0 is the root. Children have larger indices than their parent.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn scaler(&self) -> &Scaler {
        &self.scaler
    }

    /// The number of features d the tree routes on.
    pub fn n_features(&self) -> usize {
        self.scaler.dim()
    }

    /// The number of leaves |I|.
    pub fn n_leaves(&self) -> usize {
        self.leaf_nodes.len()
    }

    /// The node index of leaf j.
    pub fn leaf_node(&self, j: usize) -> usize {
        self.leaf_nodes[j] as usize
    }

    /// The largest leaf depth.
    pub fn depth(&self) -> u32 {
        self.nodes.iter().map(|n| n.depth).max().unwrap_or(0)
    }

    /// The leaf index j of the cell containing `row` (the paper's routing; points outside the box go
    /// to the nearest boundary cell, `docs/deviations.md#lpct-out-of-range-points`). `row` must have [`Tree::n_features`] entries.
    #[inline]
    pub fn leaf_of(&self, row: &[f64]) -> usize {
        let mut i = 0usize;
        loop {
            let n = self.route[i];
            if n.feature == NO_NODE {
                return n.left as usize;
            }
            i = n.left as usize + usize::from(row[n.feature as usize] >= n.threshold);
        }
    }

    /// The leaf of every row, in one pass (parallel over row blocks).
    pub fn leaves_of(&self, x: ArrayView2<f64>) -> Result<Vec<u32>> {
        self.check_width(x)?;
        let mut out = vec![0u32; x.nrows()];
        out.par_chunks_mut(ROW_BLOCK)
            .enumerate()
            .for_each(|(b, chunk)| {
                let start = b * ROW_BLOCK;
                for (k, o) in chunk.iter_mut().enumerate() {
                    let row = x.row(start + k);
                    let row = row_slice(&row);
                    *o = self.leaf_of(&row) as u32;
                }
            });
        Ok(out)
    }

    /// Per-leaf counts and label sums of a labelled sample, in one routing pass (parallel over
    /// row blocks, one accumulator per block).
    pub fn leaf_counts(&self, x: ArrayView2<f64>, y: &[u8]) -> Result<LeafCounts> {
        self.check_width(x)?;
        check_labels(y, x.nrows(), "labels")?;
        let n_leaves = self.n_leaves();
        let n_blocks = x.nrows().div_ceil(ROW_BLOCK);
        let per_task = n_blocks
            .div_ceil(rayon::current_num_threads().max(1))
            .max(1);
        let counts = (0..n_blocks.div_ceil(per_task))
            .into_par_iter()
            .map(|t| {
                let mut c = LeafCounts::zeros(n_leaves);
                let lo = t * per_task * ROW_BLOCK;
                let hi = ((t + 1) * per_task * ROW_BLOCK).min(x.nrows());
                for (i, &yi) in y.iter().enumerate().take(hi).skip(lo) {
                    let row = x.row(i);
                    let j = self.leaf_of(&row_slice(&row));
                    c.count[j] += 1;
                    c.positive[j] += u64::from(yi);
                }
                c
            })
            .reduce(|| LeafCounts::zeros(n_leaves), LeafCounts::add);
        Ok(counts)
    }

    /// The cell of node `i` in scaled coordinates: [lo_ℓ, hi_ℓ) per dimension, within \[0,1\]^d.
    pub fn cell(&self, i: usize) -> Vec<(f64, f64)> {
        let mut b: Vec<(f64, f64)> = vec![(0.0, 1.0); self.n_features()];
        let mut child = i;
        while self.nodes[child].parent != NO_NODE {
            let p = &self.nodes[self.nodes[child].parent as usize];
            let f = p.feature as usize;
            if p.left as usize == child {
                b[f].1 = b[f].1.min(p.split);
            } else {
                b[f].0 = b[f].0.max(p.split);
            }
            child = self.nodes[child].parent as usize;
        }
        b
    }

    /// Checks a tree read from a file (indices, links, features, thresholds) and rebuilds its
    /// leaf numbering: a malformed file is an error, never a panic.
    pub fn validate(mut self) -> Result<Self> {
        self.scaler.validate()?;
        let n = self.nodes.len();
        if n == 0 || n >= NO_NODE as usize {
            return Err(bad_data("partition", format!("{n} nodes")));
        }
        if self.nodes[0].parent != NO_NODE || self.nodes[0].depth != 0 {
            return Err(bad_data("partition", "node 0 must be the root"));
        }
        let d = self.n_features();
        let mut seen_parent = vec![false; n];
        for i in 0..n {
            let node = &self.nodes[i];
            let internal = node.left != NO_NODE || node.right != NO_NODE;
            if !internal {
                continue;
            }
            let (l, r) = (node.left as usize, node.right as usize);
            let ok = l > i && r == l + 1 && r < n;
            if !ok || seen_parent[l] || seen_parent[r] {
                return Err(bad_data("partition", format!("node {i}: bad child links")));
            }
            if node.feature as usize >= d || !node.threshold.is_finite() {
                return Err(bad_data(
                    "partition",
                    format!(
                        "node {i}: feature {} or threshold {}",
                        node.feature, node.threshold
                    ),
                ));
            }
            seen_parent[l] = true;
            seen_parent[r] = true;
            for c in [l, r] {
                if self.nodes[c].parent as usize != i || self.nodes[c].depth != node.depth + 1 {
                    return Err(bad_data("partition", format!("node {c}: bad parent link")));
                }
            }
        }
        if seen_parent.iter().skip(1).any(|s| !s) {
            return Err(bad_data("partition", "a node has no parent"));
        }
        self.leaf_nodes = number_leaves(&mut self.nodes);
        self.route = routes(&self.nodes);
        Ok(self)
    }

    fn check_width(&self, x: ArrayView2<f64>) -> Result<()> {
        if x.ncols() != self.n_features() {
            return Err(bad_data(
                "features",
                format!(
                    "the partition routes on {} features, the data have {}",
                    self.n_features(),
                    x.ncols()
                ),
            ));
        }
        Ok(())
    }
}

/// The stored form of a [`Tree`], checked on the way in.
#[derive(Deserialize)]
struct RawTree {
    nodes: Vec<Node>,
    scaler: Scaler,
}

impl TryFrom<RawTree> for Tree {
    type Error = crate::lpct::error::LpctError;

    fn try_from(raw: RawTree) -> Result<Tree> {
        Tree {
            nodes: raw.nodes,
            scaler: raw.scaler,
            leaf_nodes: Vec::new(),
            route: Vec::new(),
        }
        .validate()
    }
}

/// Rows per parallel block when routing.
const ROW_BLOCK: usize = 4096;

/// A row as a slice (borrowed when the array is row-major).
fn row_slice<'a>(row: &'a ndarray::ArrayView1<'a, f64>) -> Cow<'a, [f64]> {
    match row.as_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(row.to_vec()),
    }
}

/// Numbers leaves depth-first (left before right) and records each node's leaf range.
fn number_leaves(nodes: &mut [Node]) -> Vec<u32> {
    fn visit(nodes: &mut [Node], i: usize, leaves: &mut Vec<u32>) {
        if nodes[i].is_leaf() {
            let j = leaves.len() as u32;
            leaves.push(i as u32);
            nodes[i].first_leaf = j;
            nodes[i].end_leaf = j + 1;
        } else {
            let (l, r) = (nodes[i].left as usize, nodes[i].right as usize);
            visit(nodes, l, leaves);
            visit(nodes, r, leaves);
            nodes[i].first_leaf = nodes[l].first_leaf;
            nodes[i].end_leaf = nodes[r].end_leaf;
        }
    }
    let mut leaves = Vec::new();
    visit(nodes, 0, &mut leaves);
    leaves
}

#[cfg(test)]
mod tests {
    use super::super::{PartitionConfig, build};
    use super::*;
    use ndarray::Array2;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn validate_rejects_broken_links() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let x = Array2::from_shape_fn((50, 2), |_| rng.random::<f64>());
        let y: Vec<u8> = (0..50).map(|i| u8::from(x[[i, 0]] > 0.5)).collect();
        let t = build(
            &PartitionConfig {
                depth: 2,
                ..Default::default()
            },
            x.view(),
            &y,
            Scaler::unit(2),
        )
        .unwrap();
        let mut bad = t.clone();
        bad.nodes[0].left = 0;
        assert!(bad.validate().is_err());
        let mut bad = t.clone();
        bad.nodes[1].feature = 7;
        bad.nodes[1].left = 3;
        bad.nodes[1].right = 4;
        assert!(bad.validate().is_err());
        assert_eq!(t.clone().validate().unwrap(), t);
    }
}
