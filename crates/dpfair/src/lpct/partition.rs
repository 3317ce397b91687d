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

use super::error::{Result, bad_data, invalid};
use ndarray::{ArrayView2, Axis};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::Ordering;

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

/// The domain box ×_ℓ [low_ℓ, low_ℓ + width_ℓ] and the min–max map M of Section 4.3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scaler {
    pub low: Vec<f64>,
    pub width: Vec<f64>,
}

impl Scaler {
    /// The unit cube [0,1]^d (known range).
    pub fn unit(d: usize) -> Self {
        Scaler {
            low: vec![0.0; d],
            width: vec![1.0; d],
        }
    }

    /// Section 4.3 (Theorem 5): â_ℓ = min_i X_i^{Q,ℓ}, b̂_ℓ = max_i X_i^{Q,ℓ} from the public
    /// sample; a constant column gets width 1 (`docs/deviations.md#lpct-constant-public-columns`, as scikit-learn's `MinMaxScaler`).
    pub fn from_public(x: ArrayView2<f64>) -> Result<Self> {
        if x.nrows() == 0 {
            return Err(invalid(
                "public data",
                "the min-max range needs at least one public row",
            ));
        }
        check_finite(x, "public data")?;
        let mut low = Vec::with_capacity(x.ncols());
        let mut width = Vec::with_capacity(x.ncols());
        for col in x.axis_iter(Axis(1)) {
            let lo = col.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            low.push(lo);
            width.push(if hi > lo { hi - lo } else { 1.0 });
        }
        Ok(Scaler { low, width })
    }

    /// Known bounds [a_ℓ, b_ℓ] (public knowledge, costs nothing).
    pub fn from_bounds(bounds: &[(f64, f64)]) -> Result<Self> {
        let mut s = Scaler {
            low: Vec::new(),
            width: Vec::new(),
        };
        for (l, &(a, b)) in bounds.iter().enumerate() {
            if !(a.is_finite() && b.is_finite() && b > a) {
                return Err(invalid(
                    "bounds",
                    format!("feature {l}: need finite a < b, got [{a}, {b}]"),
                ));
            }
            s.low.push(a);
            s.width.push(b - a);
        }
        Ok(s)
    }

    /// The number of features d.
    pub fn dim(&self) -> usize {
        self.low.len()
    }

    /// Raw value of the scaled coordinate `s` of feature `l`: M^{-1}.
    pub fn to_raw(&self, l: usize, s: f64) -> f64 {
        self.low[l] + s * self.width[l]
    }

    /// Scaled coordinate M(x)^ℓ = (x − a_ℓ)/(b_ℓ − a_ℓ).
    pub fn to_scaled(&self, l: usize, x: f64) -> f64 {
        (x - self.low[l]) / self.width[l]
    }

    /// Whether M(x) ∈ [0,1]^d (the indicator 1_{[0,1]^d} ∘ M of Theorem 5).
    pub fn contains(&self, row: &[f64]) -> bool {
        row.iter().enumerate().all(|(l, &x)| {
            let z = self.to_scaled(l, x);
            (0.0..=1.0).contains(&z)
        })
    }

    fn validate(&self) -> Result<()> {
        if self.low.len() != self.width.len() {
            return Err(bad_data("scaler", "`low` and `width` differ in length"));
        }
        for (l, (a, w)) in self.low.iter().zip(&self.width).enumerate() {
            if !(a.is_finite() && w.is_finite() && *w > 0.0) {
                return Err(bad_data(
                    "scaler",
                    format!("feature {l}: low {a}, width {w} (need finite, width > 0)"),
                ));
            }
        }
        Ok(())
    }
}

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

    fn leaf(parent: u32, depth: u32) -> Self {
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

    /// The cell of node `i` in scaled coordinates: [lo_ℓ, hi_ℓ) per dimension, within [0,1]^d.
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
    type Error = super::error::LpctError;

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

/// The weighted impurity n_L·I(S_L) + n_R·I(S_R) of a split (up to a constant factor); smaller
/// is better. Gini is kept as an exact fraction so ties are exact (the smallest-index rule of
/// Algorithm 1 then applies to true ties only).
#[derive(Clone, Copy, Debug)]
enum Score {
    /// numerator / denominator of Σ_c n1_c·n0_c / n_c.
    Exact(u128, u128),
    Float(f64),
}

impl Score {
    fn of(criterion: Criterion, parts: [(u64, u64); 2]) -> Score {
        match criterion {
            Criterion::Gini => {
                let mut num = 0u128;
                let mut den = 1u128;
                for (n, pos) in parts {
                    if n == 0 {
                        continue;
                    }
                    let a = u128::from(pos) * u128::from(n - pos);
                    let b = u128::from(n);
                    num = num * b + a * den;
                    den *= b;
                    let g = gcd(num, den);
                    num /= g;
                    den /= g;
                }
                Score::Exact(num, den)
            }
            Criterion::Entropy => Score::Float(
                parts
                    .iter()
                    .map(|&(n, pos)| {
                        if n == 0 {
                            return 0.0;
                        }
                        let h = |c: u64| {
                            if c == 0 {
                                0.0
                            } else {
                                let p = c as f64 / n as f64;
                                -(c as f64) * p.ln()
                            }
                        };
                        h(pos) + h(n - pos)
                    })
                    .sum(),
            ),
        }
    }

    fn cmp(&self, other: &Score) -> Ordering {
        match (self, other) {
            (Score::Exact(a, b), Score::Exact(c, d)) => (a * d).cmp(&(c * b)),
            (Score::Float(a), Score::Float(b)) => {
                // Entropy sums carry rounding: differences below 1e-12 relative are ties.
                if (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs())) {
                    Ordering::Equal
                } else {
                    a.total_cmp(b)
                }
            }
            _ => unreachable!("one criterion per build"),
        }
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// A cell waiting to be split: its node, its public rows (positions `start..end` of the
/// level's node-ordered copy of the sample), and for max-edge the dyadic bookkeeping of `docs/deviations.md#lpct-longest-edges-with-floats`: the
/// cell is ×_ℓ [m_ℓ 2^{-k_ℓ}, (m_ℓ+1) 2^{-k_ℓ}] in scaled units.
struct Work {
    node: u32,
    start: usize,
    end: usize,
    k: Vec<u8>,
    m: Vec<u64>,
}

/// A chosen split.
struct Split {
    feature: usize,
    split: f64,
    threshold: f64,
}

/// One candidate split and the counts (rows, positives) it leaves on its left side.
struct Candidate {
    feature: usize,
    split: f64,
    threshold: f64,
    left: (u64, u64),
    score: Score,
}

/// The public rows of one cell: contiguous row-major features and their labels (the builder
/// keeps every cell's rows contiguous, so each scan streams through memory).
#[derive(Clone, Copy)]
struct Rows<'a> {
    x: &'a [f64],
    y: &'a [u8],
    d: usize,
}

impl<'a> Rows<'a> {
    fn len(&self) -> usize {
        self.y.len()
    }

    fn iter(&self) -> impl Iterator<Item = (&'a [f64], u8)> + 'a {
        self.x.chunks_exact(self.d).zip(self.y.iter().copied())
    }
}

/// **Algorithm 1** (MAXEDGE_PARTITION) and its variants on the public sample (x, y), after the
/// range `scaler` (Section 4.3). Only public data enter; the result may be broadcast.
pub fn build(cfg: &PartitionConfig, x: ArrayView2<f64>, y: &[u8], scaler: Scaler) -> Result<Tree> {
    scaler.validate()?;
    if x.ncols() != scaler.dim() {
        return Err(bad_data(
            "public data",
            format!("{} features, the range has {}", x.ncols(), scaler.dim()),
        ));
    }
    if scaler.dim() == 0 {
        return Err(invalid("features", "need at least one feature"));
    }
    check_labels(y, x.nrows(), "public labels")?;
    check_finite(x, "public data")?;
    let complete = matches!(cfg.growth, Growth::Complete);
    let cap = if complete {
        MAX_COMPLETE_DEPTH
    } else {
        MAX_DEPTH
    };
    if cfg.depth > cap {
        return Err(invalid(
            "depth",
            format!(
                "at most {cap} in {:?} growth, got {}",
                cfg.growth, cfg.depth
            ),
        ));
    }
    if let Growth::Practical {
        min_samples_leaf, ..
    } = cfg.growth
        && min_samples_leaf == 0
    {
        return Err(invalid("min_samples_leaf", "must be at least 1"));
    }
    let d = scaler.dim();
    let n = x.nrows();
    // Node-ordered copies of the sample (double-buffered): after each level every cell's rows
    // are contiguous, in their original relative order.
    let mut bx: Vec<f64> = x.iter().copied().collect();
    let mut by: Vec<u8> = y.to_vec();
    let mut nx = vec![0.0; bx.len()];
    let mut ny = vec![0u8; n];
    let mut rng = ChaCha20Rng::seed_from_u64(cfg.seed);
    let mut nodes = vec![Node::leaf(NO_NODE, 0)];
    let dyadic = cfg.splitter != Splitter::Cart;
    let mut level = vec![Work {
        node: 0,
        start: 0,
        end: n,
        k: if dyadic { vec![0; d] } else { Vec::new() },
        m: if dyadic { vec![0; d] } else { Vec::new() },
    }];
    for depth in 0..cfg.depth {
        let rows_of = |w: &Work| Rows {
            x: &bx[w.start * d..w.end * d],
            y: &by[w.start..w.end],
            d,
        };
        // Decide every cell of the level (in parallel: cells own disjoint rows), then apply.
        let decisions: Vec<Option<Split>> = level
            .par_iter()
            .map(|w| decide(cfg, rows_of(w), w, &scaler))
            .collect();
        let random_draws: Vec<Option<usize>> = if cfg.splitter == Splitter::RandomMaxEdge {
            level
                .iter()
                .map(|w| {
                    let m = longest_edges(&w.k);
                    Some(m[rng.random_range(0..m.len())])
                })
                .collect()
        } else {
            vec![None; level.len()]
        };
        let mut next = Vec::with_capacity(level.len() * 2);
        for ((w, decision), draw) in level.into_iter().zip(decisions).zip(random_draws) {
            let split = match (cfg.splitter, draw) {
                (Splitter::RandomMaxEdge, Some(l)) => {
                    random_split(cfg, rows_of(&w), &w, l, &scaler)
                }
                _ => decision,
            };
            let Some(s) = split else { continue };
            let mid = w.start
                + partition_rows(
                    rows_of(&w),
                    s.feature,
                    s.threshold,
                    &mut nx[w.start * d..w.end * d],
                    &mut ny[w.start..w.end],
                );
            let (l, r) = (nodes.len() as u32, nodes.len() as u32 + 1);
            nodes.push(Node::leaf(w.node, depth + 1));
            nodes.push(Node::leaf(w.node, depth + 1));
            let parent = &mut nodes[w.node as usize];
            parent.feature = s.feature as u32;
            parent.threshold = s.threshold;
            parent.split = s.split;
            parent.left = l;
            parent.right = r;
            if depth + 1 == cfg.depth {
                continue;
            }
            let (mut kl, mut ml) = (w.k, w.m);
            let (mut kr, mut mr) = (kl.clone(), ml.clone());
            if dyadic {
                let f = s.feature;
                kl[f] += 1;
                kr[f] += 1;
                ml[f] *= 2;
                mr[f] = mr[f] * 2 + 1;
            }
            next.push(Work {
                node: l,
                start: w.start,
                end: mid,
                k: kl,
                m: ml,
            });
            next.push(Work {
                node: r,
                start: mid,
                end: w.end,
                k: kr,
                m: mr,
            });
        }
        std::mem::swap(&mut bx, &mut nx);
        std::mem::swap(&mut by, &mut ny);
        level = next;
        if level.is_empty() {
            break;
        }
    }
    let leaf_nodes = number_leaves(&mut nodes);
    let route = routes(&nodes);
    Ok(Tree {
        nodes,
        scaler,
        leaf_nodes,
        route,
    })
}

/// M = the indices of the longest edges of a max-edge cell: under midpoint halving the ℓ-th edge
/// has length 2^{-k_ℓ} in scaled units, so the longest are the minimal counters (`docs/deviations.md#lpct-longest-edges-with-floats`, exact).
fn longest_edges(k: &[u8]) -> Vec<usize> {
    let kmin = k.iter().copied().min().unwrap_or(0);
    (0..k.len()).filter(|&l| k[l] == kmin).collect()
}

/// The dyadic midpoint (2m+1)/2^{k+1} of edge ℓ, in scaled and raw units.
fn midpoint(w: &Work, l: usize, scaler: &Scaler) -> (f64, f64) {
    let s = (2 * w.m[l] + 1) as f64 / f64::powi(2.0, i32::from(w.k[l]) + 1);
    (s, scaler.to_raw(l, s))
}

/// Whether practical growth makes this cell a leaf before any split is tried.
fn stops_early(cfg: &PartitionConfig, rows: Rows) -> bool {
    match cfg.growth {
        Growth::Complete => false,
        Growth::Practical {
            min_samples_split, ..
        } => rows.len() <= min_samples_split || at_most_distinct(rows, min_samples_split),
    }
}

/// Whether the rows hold at most `k` distinct feature vectors (early exit).
fn at_most_distinct(rows: Rows, k: usize) -> bool {
    let mut distinct: Vec<&[f64]> = Vec::new();
    for (r, _) in rows.iter() {
        if !distinct.contains(&r) {
            distinct.push(r);
            if distinct.len() > k {
                return false;
            }
        }
    }
    true
}

fn random_split(
    cfg: &PartitionConfig,
    rows: Rows,
    w: &Work,
    l: usize,
    scaler: &Scaler,
) -> Option<Split> {
    if stops_early(cfg, rows) {
        return None;
    }
    let (split, threshold) = midpoint(w, l, scaler);
    if let Growth::Practical {
        min_samples_leaf, ..
    } = cfg.growth
    {
        let nl = rows.iter().filter(|(r, _)| r[l] < threshold).count();
        if nl < min_samples_leaf || rows.len() - nl < min_samples_leaf {
            return None;
        }
    }
    Some(Split {
        feature: l,
        split,
        threshold,
    })
}

/// The split of one cell (None: the cell is a leaf).
fn decide(cfg: &PartitionConfig, rows: Rows, w: &Work, scaler: &Scaler) -> Option<Split> {
    if cfg.splitter == Splitter::RandomMaxEdge || stops_early(cfg, rows) {
        return None;
    }
    let n = rows.len() as u64;
    let pos: u64 = rows.y.iter().map(|&v| u64::from(v)).sum();
    let mut cands = match cfg.splitter {
        Splitter::Cart => cart_candidates(cfg.criterion, rows, scaler, (n, pos)),
        _ => max_edge_candidates(cfg.criterion, rows, w, scaler, (n, pos)),
    };
    // Smallest score first; the stable sort keeps the smaller index first among ties
    // (`min argmin` of Algorithm 1).
    cands.sort_by(|a, b| a.score.cmp(&b.score));
    let chosen = match cfg.growth {
        Growth::Complete => cands.into_iter().next(),
        Growth::Practical {
            min_samples_leaf, ..
        } => {
            let m = match cfg.splitter {
                Splitter::Cart => scaler.dim(),
                _ => cands.len(),
            };
            let top = ((m + 5) / 10).max(1);
            let leaf = min_samples_leaf as u64;
            cands
                .into_iter()
                .take(top)
                .find(|c| c.left.0 >= leaf && n - c.left.0 >= leaf)
        }
    };
    chosen.map(|c| Split {
        feature: c.feature,
        split: c.split,
        threshold: c.threshold,
    })
}

/// A regular grid of `bins` equal bins per axis over the box (the PHIST partition of Berrett &
/// Butucea 2019), as a tree: each axis in turn is cut at its bin boundaries by balanced binary
/// splits. At most 2^[`MAX_COMPLETE_DEPTH`] cells.
pub fn regular_grid(scaler: Scaler, bins: u32) -> Result<Tree> {
    scaler.validate()?;
    let d = scaler.dim();
    if bins == 0 || d == 0 {
        return Err(invalid(
            "bins",
            format!("need bins ≥ 1 and d ≥ 1, got {bins}, {d}"),
        ));
    }
    let cells = (d as f64) * f64::from(bins).log2();
    if cells > f64::from(MAX_COMPLETE_DEPTH) {
        return Err(invalid(
            "bins",
            format!("{bins}^{d} cells exceed 2^{MAX_COMPLETE_DEPTH}"),
        ));
    }
    fn grow(nodes: &mut Vec<Node>, sc: &Scaler, bins: u32, at: usize, l: usize, lo: u32, hi: u32) {
        let (l, lo, hi) = if hi - lo > 1 || l + 1 == sc.dim() {
            (l, lo, hi)
        } else {
            (l + 1, 0, bins)
        };
        if hi - lo <= 1 {
            return;
        }
        let mid = lo + (hi - lo) / 2;
        let split = f64::from(mid) / f64::from(bins);
        let depth = nodes[at].depth + 1;
        let (left, right) = (nodes.len(), nodes.len() + 1);
        nodes.push(Node::leaf(at as u32, depth));
        nodes.push(Node::leaf(at as u32, depth));
        let n = &mut nodes[at];
        n.feature = l as u32;
        n.split = split;
        n.threshold = sc.to_raw(l, split);
        n.left = left as u32;
        n.right = right as u32;
        grow(nodes, sc, bins, left, l, lo, mid);
        grow(nodes, sc, bins, right, l, mid, hi);
    }
    let mut nodes = vec![Node::leaf(NO_NODE, 0)];
    grow(&mut nodes, &scaler, bins, 0, 0, 0, bins);
    let leaf_nodes = number_leaves(&mut nodes);
    let route = routes(&nodes);
    Ok(Tree {
        nodes,
        scaler,
        leaf_nodes,
        route,
    })
}

/// Algorithm 1's candidates: the midpoint of every longest edge, scored on the cell's public rows.
fn max_edge_candidates(
    criterion: Criterion,
    rows: Rows,
    w: &Work,
    scaler: &Scaler,
    (n, pos): (u64, u64),
) -> Vec<Candidate> {
    let m = longest_edges(&w.k);
    let cuts: Vec<(f64, f64)> = m.iter().map(|&l| midpoint(w, l, scaler)).collect();
    let mut left = vec![(0u64, 0u64); m.len()];
    for (row, yi) in rows.iter() {
        let yi = u64::from(yi);
        for ((&l, &(_, t)), c) in m.iter().zip(&cuts).zip(left.iter_mut()) {
            let below = u64::from(row[l] < t);
            c.0 += below;
            c.1 += below * yi;
        }
    }
    m.into_iter()
        .zip(cuts)
        .zip(left)
        .map(|((feature, (split, threshold)), left)| Candidate {
            feature,
            split,
            threshold,
            left,
            score: Score::of(criterion, [left, (n - left.0, pos - left.1)]),
        })
        .collect()
}

/// The CART-criterion candidates (Ma & Yang, Algorithm 1, "igreduction"): per dimension, the best of the distinct
/// values of quantile(unique(X[:,ℓ]), (2i+1)/20), i = 0..9 (linear interpolation), kept only if
/// it strictly reduces the criterion.
fn cart_candidates(
    criterion: Criterion,
    rows: Rows,
    scaler: &Scaler,
    (n, pos): (u64, u64),
) -> Vec<Candidate> {
    let parent = Score::of(criterion, [(n, pos), (0, 0)]);
    let mut out = Vec::new();
    let mut pairs: Vec<(f64, u8)> = Vec::with_capacity(rows.len());
    let mut uniq: Vec<f64> = Vec::with_capacity(rows.len());
    for l in 0..scaler.dim() {
        pairs.clear();
        pairs.extend(rows.iter().map(|(r, yi)| (r[l], yi)));
        pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        uniq.clear();
        uniq.extend(pairs.iter().map(|p| p.0));
        uniq.dedup();
        if uniq.len() < 2 {
            continue;
        }
        let mut best: Option<Candidate> = None;
        let mut last_t = f64::NAN;
        for i in 0..10 {
            let q = (2 * i + 1) as f64 / 20.0;
            let h = q * (uniq.len() - 1) as f64;
            let lo = h.floor() as usize;
            let frac = h - lo as f64;
            let t = if lo + 1 < uniq.len() {
                uniq[lo] + frac * (uniq[lo + 1] - uniq[lo])
            } else {
                uniq[lo]
            };
            if t == last_t {
                continue;
            }
            last_t = t;
            let nl = pairs.partition_point(|p| p.0 < t);
            let pl: u64 = pairs[..nl].iter().map(|p| u64::from(p.1)).sum();
            let left = (nl as u64, pl);
            let score = Score::of(criterion, [left, (n - left.0, pos - left.1)]);
            if score.cmp(&parent) != Ordering::Less {
                continue;
            }
            if best
                .as_ref()
                .is_none_or(|b| score.cmp(&b.score) == Ordering::Less)
            {
                best = Some(Candidate {
                    feature: l,
                    split: scaler.to_scaled(l, t),
                    threshold: t,
                    left,
                    score,
                });
            }
        }
        out.extend(best);
    }
    out
}

/// Writes the cell's rows with x^ℓ < t, then the others, into `(ox, oy)` (same positions as the
/// cell's, order kept on each side); returns how many went left.
fn partition_rows(rows: Rows, l: usize, t: f64, ox: &mut [f64], oy: &mut [u8]) -> usize {
    let d = rows.d;
    let mut a = 0;
    for (r, yi) in rows.iter().filter(|(r, _)| r[l] < t) {
        ox[a * d..(a + 1) * d].copy_from_slice(r);
        oy[a] = yi;
        a += 1;
    }
    for (b, (r, yi)) in (a..).zip(rows.iter().filter(|(r, _)| r[l] >= t)) {
        ox[b * d..(b + 1) * d].copy_from_slice(r);
        oy[b] = yi;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    fn grid_data(n: usize, d: usize, seed: u64) -> (Array2<f64>, Vec<u8>) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let x = Array2::from_shape_fn((n, d), |_| rng.random::<f64>());
        let y = (0..n).map(|i| u8::from(x[[i, 0]] > 0.5)).collect();
        (x, y)
    }

    #[test]
    fn gini_scores_compare_exactly() {
        let a = Score::of(Criterion::Gini, [(2, 1), (2, 1)]);
        let b = Score::of(Criterion::Gini, [(4, 2), (0, 0)]);
        // 2·(1·1)/2 = 1 against 2·2/4 = 1: an exact tie.
        assert_eq!(a.cmp(&b), Ordering::Equal);
        let pure = Score::of(Criterion::Gini, [(3, 3), (5, 0)]);
        assert_eq!(pure.cmp(&a), Ordering::Less);
    }

    #[test]
    fn first_split_follows_the_label_signal() {
        let (x, y) = grid_data(400, 3, 1);
        let cfg = PartitionConfig {
            depth: 1,
            ..Default::default()
        };
        let t = build(&cfg, x.view(), &y, Scaler::unit(3)).unwrap();
        assert_eq!(t.nodes()[0].feature, 0);
        assert_eq!(t.nodes()[0].split, 0.5);
    }

    #[test]
    fn cart_splitter_finds_an_informative_cut() {
        let (x, y) = grid_data(400, 3, 2);
        let cfg = PartitionConfig {
            depth: 1,
            splitter: Splitter::Cart,
            ..Default::default()
        };
        let t = build(&cfg, x.view(), &y, Scaler::unit(3)).unwrap();
        let root = &t.nodes()[0];
        assert_eq!(root.feature, 0);
        // The candidate quantile nearest 0.5 of 400 uniforms is within 0.1 of it.
        assert!((root.threshold - 0.5).abs() < 0.1, "{}", root.threshold);
    }

    #[test]
    fn validate_rejects_broken_links() {
        let (x, y) = grid_data(50, 2, 3);
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
