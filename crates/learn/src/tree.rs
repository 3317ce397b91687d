//! CART classification trees (Breiman et al. 1984) with the split rules of scikit-learn's
//! `DecisionTreeClassifier` (best splitter): the non-private baseline of Ma & Yang, Section 7.2 (CT-W,
//! CT-Q) and the partition the CART-criterion variant of LPCT reuses.
//!
//! Splits are exact: every feature is sorted once at the root; each node keeps, per feature, its
//! rows in sorted order, so the best threshold of a feature is one linear scan with class counts
//! updated incrementally (Gini through Σ c², entropy through a table of c ln c), and a split
//! stably partitions each feature's slice. A node of n rows costs O(n d) instead of
//! O(n log n · d) for re-sorting at every node.
//!
//! scikit-learn conventions kept: a candidate threshold lies between consecutive distinct values
//! (values closer than 10⁻⁷ count as equal), at their midpoint, rows with x ≤ threshold go left;
//! a node is a leaf when pure, at `max_depth`, below `min_samples_split`, when no split leaves
//! `min_samples_leaf` rows on both sides, or when the weighted impurity decrease
//! (n_t/N)(I − (n_L/n_t) I_L − (n_R/n_t) I_R) is below `min_impurity_decrease`. Ties between
//! equally good splits go to the lowest feature index and the leftmost threshold (scikit-learn
//! breaks them by a random feature order, so trees can differ on ties, not in quality).

use crate::error::{LearnError, Result};
use crate::validate::{
    at_least, check_classification, check_predict_input, check_two_classes, non_negative,
};
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Node impurity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Criterion {
    /// 1 − Σ_k p_k².
    #[default]
    Gini,
    /// −Σ_k p_k ln p_k (scikit-learn's "entropy"/"log_loss"; the base does not change splits).
    Entropy,
}

/// Tree hyperparameters; defaults are scikit-learn's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TreeConfig {
    pub criterion: Criterion,
    /// Maximum depth (root = depth 0); `None` grows until the other rules stop it.
    pub max_depth: Option<usize>,
    /// A node with fewer rows is a leaf (≥ 2).
    pub min_samples_split: usize,
    /// Each child keeps at least this many rows (≥ 1).
    pub min_samples_leaf: usize,
    /// Minimum weighted impurity decrease of a split (≥ 0).
    pub min_impurity_decrease: f64,
}

impl Default for TreeConfig {
    fn default() -> Self {
        TreeConfig {
            criterion: Criterion::Gini,
            max_depth: None,
            min_samples_split: 2,
            min_samples_leaf: 1,
            min_impurity_decrease: 0.0,
        }
    }
}

/// One node of a fitted tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Node {
    /// Rows with `x[feature] ≤ threshold` go to `left`, the others to `right` (node indices).
    Split {
        feature: usize,
        threshold: f64,
        left: usize,
        right: usize,
    },
    /// A leaf with the class counts of its training rows.
    Leaf { counts: Vec<u64> },
}

/// A fitted classification tree; node 0 is the root.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeModel {
    pub n_classes: usize,
    pub n_features: usize,
    pub nodes: Vec<Node>,
}

impl TreeModel {
    /// The leaf (node index) each row falls into.
    pub fn apply(&self, x: ArrayView2<'_, f64>) -> Result<Vec<usize>> {
        check_predict_input(x, self.n_features)?;
        Ok(x.rows()
            .into_iter()
            .map(|row| {
                let mut id = 0;
                while let Node::Split {
                    feature,
                    threshold,
                    left,
                    right,
                } = &self.nodes[id]
                {
                    id = if row[*feature] <= *threshold {
                        *left
                    } else {
                        *right
                    };
                }
                id
            })
            .collect())
    }

    /// Class probabilities: the class frequencies of each row's leaf, n × K.
    pub fn predict_proba(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let leaves = self.apply(x)?;
        let mut p = Array2::zeros((leaves.len(), self.n_classes));
        for (mut row, &leaf) in p.rows_mut().into_iter().zip(&leaves) {
            if let Node::Leaf { counts } = &self.nodes[leaf] {
                let total = counts.iter().sum::<u64>().max(1) as f64;
                for (v, &c) in row.iter_mut().zip(counts) {
                    *v = c as f64 / total;
                }
            }
        }
        Ok(p)
    }

    /// The majority class of each row's leaf (lowest class index on ties, as `np.argmax`).
    pub fn predict(&self, x: ArrayView2<'_, f64>) -> Result<Vec<u32>> {
        let leaves = self.apply(x)?;
        Ok(leaves
            .iter()
            .map(|&leaf| match &self.nodes[leaf] {
                Node::Leaf { counts } => {
                    let mut best = 0;
                    for (k, &c) in counts.iter().enumerate() {
                        if c > counts[best] {
                            best = k;
                        }
                    }
                    best as u32
                }
                Node::Split { .. } => unreachable!("apply returns leaves"),
            })
            .collect())
    }

    pub fn n_leaves(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, Node::Leaf { .. }))
            .count()
    }

    /// Depth of the deepest leaf (a single leaf has depth 0).
    pub fn depth(&self) -> usize {
        let mut best = 0;
        let mut stack = vec![(0usize, 0usize)];
        while let Some((id, depth)) = stack.pop() {
            best = best.max(depth);
            if let Node::Split { left, right, .. } = &self.nodes[id] {
                stack.push((*left, depth + 1));
                stack.push((*right, depth + 1));
            }
        }
        best
    }
}

/// Node impurity from class counts.
fn impurity(criterion: Criterion, counts: &[u64], n: u64) -> f64 {
    let nf = n as f64;
    match criterion {
        Criterion::Gini => 1.0 - counts.iter().map(|&c| (c as f64 / nf).powi(2)).sum::<f64>(),
        Criterion::Entropy => -counts
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| {
                let p = c as f64 / nf;
                p * p.ln()
            })
            .sum::<f64>(),
    }
}

/// scikit-learn's `FEATURE_THRESHOLD`: values closer than this are not split apart.
const FEATURE_THRESHOLD: f64 = 1e-7;

/// The training state: per feature, the rows of every open node in sorted order.
struct Grower<'a> {
    n: usize,
    d: usize,
    k: usize,
    cfg: &'a TreeConfig,
    /// order[f·n + p]: row at sorted position p of feature f (within its node's range).
    order: Vec<u32>,
    /// vals[f·n + p] = x[order[f·n + p], f].
    vals: Vec<f64>,
    /// labs[f·n + p] = y[order[f·n + p]] (kept beside the order: no random label lookups).
    labs: Vec<u32>,
    /// c ln c for c = 0..=n (entropy only).
    xlogx: Vec<f64>,
    goes_left: Vec<bool>,
}

/// The best split of one node.
struct Best {
    feature: usize,
    /// Last sorted position (absolute) that goes left.
    pos: usize,
    threshold: f64,
    /// The criterion's proxy to *maximise* (see `proxy`).
    proxy: f64,
    left_counts: Vec<u64>,
}

impl Grower<'_> {
    fn impurity(&self, counts: &[u64], n: u64) -> f64 {
        impurity(self.cfg.criterion, counts, n)
    }

    /// Best split of the node whose rows occupy sorted positions `lo..hi` in every feature.
    fn best_split(&self, lo: usize, hi: usize, counts: &[u64]) -> Option<Best> {
        let min_leaf = self.cfg.min_samples_leaf;
        let per_feature = |f: usize| -> Option<Best> {
            let base = f * self.n;
            let vals = &self.vals[base + lo..base + hi];
            let labs = &self.labs[base + lo..base + hi];
            if vals[0] + FEATURE_THRESHOLD >= vals[vals.len() - 1] {
                return None; // constant in this node
            }
            let nt = hi - lo;
            let mut left = vec![0u64; self.k];
            let mut right = counts.to_vec();
            // Gini: S_L = Σ c_L², S_R = Σ c_R²; proxy S_L/n_L + S_R/n_R (maximise).
            // Entropy: T_L = Σ c_L ln c_L, T_R likewise; proxy
            // −(n_L ln n_L − T_L) − (n_R ln n_R − T_R) (maximise).
            let (mut sl, mut sr): (f64, f64) = match self.cfg.criterion {
                Criterion::Gini => (0.0, counts.iter().map(|&c| (c as f64).powi(2)).sum()),
                Criterion::Entropy => (0.0, counts.iter().map(|&c| self.xlogx[c as usize]).sum()),
            };
            let mut best: Option<(f64, usize)> = None;
            for p in 0..nt - 1 {
                let c = labs[p] as usize;
                match self.cfg.criterion {
                    Criterion::Gini => {
                        sl += (2 * left[c] + 1) as f64;
                        sr -= (2 * right[c] - 1) as f64;
                    }
                    Criterion::Entropy => {
                        sl += self.xlogx[left[c] as usize + 1] - self.xlogx[left[c] as usize];
                        sr += self.xlogx[right[c] as usize - 1] - self.xlogx[right[c] as usize];
                    }
                }
                left[c] += 1;
                right[c] -= 1;
                let nl = p + 1;
                let nr = nt - nl;
                if nl < min_leaf {
                    continue;
                }
                if nr < min_leaf {
                    break;
                }
                if vals[p + 1] <= vals[p] + FEATURE_THRESHOLD {
                    continue;
                }
                let proxy = match self.cfg.criterion {
                    Criterion::Gini => sl / nl as f64 + sr / nr as f64,
                    Criterion::Entropy => (sl - self.xlogx[nl]) + (sr - self.xlogx[nr]),
                };
                if best.is_none_or(|(b, _)| proxy > b) {
                    best = Some((proxy, p));
                }
            }
            let (proxy, p) = best?;
            // Recount the left side at the chosen position (cheap, keeps the scan lean).
            let mut left_counts = vec![0u64; self.k];
            for &c in &labs[..=p] {
                left_counts[c as usize] += 1;
            }
            let mut threshold = 0.5 * (vals[p] + vals[p + 1]);
            if threshold == vals[p + 1] || !threshold.is_finite() {
                threshold = vals[p];
            }
            Some(Best {
                feature: f,
                pos: lo + p,
                threshold,
                proxy,
                left_counts,
            })
        };
        let candidates: Vec<Option<Best>> = if (hi - lo) * self.d >= 1 << 16 {
            (0..self.d).into_par_iter().map(per_feature).collect()
        } else {
            (0..self.d).map(per_feature).collect()
        };
        let mut best: Option<Best> = None;
        for c in candidates.into_iter().flatten() {
            if best.as_ref().is_none_or(|b| c.proxy > b.proxy) {
                best = Some(c);
            }
        }
        best
    }

    /// Stably moves, in every feature but `split_feature`, the rows of `lo..hi` that go left
    /// to the front.
    fn partition(&mut self, lo: usize, hi: usize, split: &Best) {
        let base = split.feature * self.n;
        for p in lo..hi {
            self.goes_left[self.order[base + p] as usize] = p <= split.pos;
        }
        let n = self.n;
        let goes_left = &self.goes_left;
        type Slices<'s> = ((&'s mut [u32], &'s mut [f64]), &'s mut [u32]);
        let slices: Vec<Slices<'_>> = self
            .order
            .chunks_mut(n)
            .zip(self.vals.chunks_mut(n))
            .zip(self.labs.chunks_mut(n))
            .enumerate()
            .filter(|(f, _)| *f != split.feature)
            .map(|(_, s)| s)
            .collect();
        let work = |((ord, val), lab): Slices<'_>, buf: &mut Vec<(u32, f64, u32)>| {
            buf.clear();
            let mut w = lo;
            for p in lo..hi {
                let r = ord[p];
                if goes_left[r as usize] {
                    ord[w] = r;
                    val[w] = val[p];
                    lab[w] = lab[p];
                    w += 1;
                } else {
                    buf.push((r, val[p], lab[p]));
                }
            }
            for (q, (r, v, l)) in buf.iter().enumerate() {
                ord[w + q] = *r;
                val[w + q] = *v;
                lab[w + q] = *l;
            }
        };
        if (hi - lo) * self.d >= 1 << 16 {
            slices
                .into_par_iter()
                .for_each_init(Vec::new, |buf, s| work(s, buf));
        } else {
            let mut buf = Vec::new();
            for s in slices {
                work(s, &mut buf);
            }
        }
    }
}

/// Fits a CART classification tree on features `x` and class codes `y ∈ 0..n_classes`.
pub fn fit_tree(
    cfg: &TreeConfig,
    x: ArrayView2<'_, f64>,
    y: &[u32],
    n_classes: usize,
) -> Result<TreeModel> {
    at_least("min_samples_split", cfg.min_samples_split, 2)?;
    at_least("min_samples_leaf", cfg.min_samples_leaf, 1)?;
    non_negative("min_impurity_decrease", cfg.min_impurity_decrease)?;
    if cfg.max_depth == Some(0) {
        return Err(crate::error::invalid(
            "max_depth",
            "must be at least 1 (or unset for no limit)",
        ));
    }
    check_classification(x, y, n_classes, "a classification tree")?;
    check_two_classes(y, "a classification tree")?;
    let (n, d) = x.dim();
    if n > u32::MAX as usize {
        return Err(LearnError::Shape(format!(
            "{n} rows exceed the tree's 2³² limit"
        )));
    }
    // Presort every feature once (in parallel over features).
    let mut order = vec![0u32; n * d];
    let mut vals = vec![0.0f64; n * d];
    let mut labs = vec![0u32; n * d];
    order
        .par_chunks_mut(n)
        .zip(vals.par_chunks_mut(n))
        .zip(labs.par_chunks_mut(n))
        .enumerate()
        .for_each(|(f, ((ord, val), lab))| {
            let mut pairs: Vec<(f64, u32)> = (0..n).map(|i| (x[[i, f]], i as u32)).collect();
            pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (p, (v, i)) in pairs.into_iter().enumerate() {
                ord[p] = i;
                val[p] = v;
                lab[p] = y[i as usize];
            }
        });
    let xlogx = match cfg.criterion {
        Criterion::Gini => Vec::new(),
        Criterion::Entropy => (0..=n)
            .map(|c| {
                if c == 0 {
                    0.0
                } else {
                    c as f64 * (c as f64).ln()
                }
            })
            .collect(),
    };
    let mut g = Grower {
        n,
        d,
        k: n_classes,
        cfg,
        order,
        vals,
        labs,
        xlogx,
        goes_left: vec![false; n],
    };
    let mut root_counts = vec![0u64; n_classes];
    for &c in y {
        root_counts[c as usize] += 1;
    }
    let mut nodes: Vec<Node> = vec![Node::Leaf { counts: Vec::new() }];
    // (node id, lo, hi, depth, counts)
    let mut stack = vec![(0usize, 0usize, n, 0usize, root_counts)];
    while let Some((id, lo, hi, depth, counts)) = stack.pop() {
        let nt = (hi - lo) as u64;
        let impurity = g.impurity(&counts, nt);
        let mut split = None;
        if !(cfg.max_depth.is_some_and(|m| depth >= m)
            || (hi - lo) < cfg.min_samples_split
            || (hi - lo) < 2 * cfg.min_samples_leaf
            || impurity <= 10.0 * f64::EPSILON)
            && let Some(best) = g.best_split(lo, hi, &counts)
        {
            let right_counts: Vec<u64> = counts
                .iter()
                .zip(&best.left_counts)
                .map(|(c, l)| c - l)
                .collect();
            let nl = best.left_counts.iter().sum::<u64>();
            let nr = nt - nl;
            let decrease = (nt as f64 / n as f64)
                * (impurity
                    - (nl as f64 / nt as f64) * g.impurity(&best.left_counts, nl)
                    - (nr as f64 / nt as f64) * g.impurity(&right_counts, nr));
            if decrease + 10.0 * f64::EPSILON >= cfg.min_impurity_decrease {
                split = Some((best, right_counts));
            }
        }
        match split {
            None => nodes[id] = Node::Leaf { counts },
            Some((best, right_counts)) => {
                g.partition(lo, hi, &best);
                let mid = best.pos + 1;
                let (left, right) = (nodes.len(), nodes.len() + 1);
                nodes.push(Node::Leaf { counts: Vec::new() });
                nodes.push(Node::Leaf { counts: Vec::new() });
                nodes[id] = Node::Split {
                    feature: best.feature,
                    threshold: best.threshold,
                    left,
                    right,
                };
                stack.push((right, mid, hi, depth + 1, right_counts));
                stack.push((left, lo, mid, depth + 1, best.left_counts));
            }
        }
    }
    Ok(TreeModel {
        n_classes,
        n_features: d,
        nodes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::nonlinear_binary;
    use ndarray::array;

    /// The best split by brute force: every feature, every midpoint, the split's weighted
    /// child impurity computed from scratch.
    fn brute_best(x: &Array2<f64>, y: &[u32], k: usize, crit: Criterion) -> f64 {
        let mut best = f64::INFINITY;
        for f in 0..x.ncols() {
            let mut v: Vec<f64> = x.column(f).to_vec();
            v.sort_by(f64::total_cmp);
            v.dedup();
            for w in v.windows(2) {
                let t = 0.5 * (w[0] + w[1]);
                let (mut l, mut r) = (vec![0u64; k], vec![0u64; k]);
                for (i, &c) in y.iter().enumerate() {
                    if x[[i, f]] <= t {
                        l[c as usize] += 1
                    } else {
                        r[c as usize] += 1
                    }
                }
                let (nl, nr) = (l.iter().sum::<u64>(), r.iter().sum::<u64>());
                let w = nl as f64 * impurity(crit, &l, nl) + nr as f64 * impurity(crit, &r, nr);
                best = best.min(w);
            }
        }
        best
    }

    #[test]
    fn root_split_is_the_brute_force_optimum() {
        for crit in [Criterion::Gini, Criterion::Entropy] {
            for k in [2, 3] {
                let (x, mut y) = nonlinear_binary(200, 4, 0.1, 7, 3);
                if k == 3 {
                    for (i, v) in y.iter_mut().enumerate() {
                        if i % 5 == 0 {
                            *v = 2
                        }
                    }
                }
                let cfg = TreeConfig {
                    criterion: crit,
                    max_depth: Some(1),
                    ..Default::default()
                };
                let t = fit_tree(&cfg, x.view(), &y, k).unwrap();
                let Node::Split { left, right, .. } = &t.nodes[0] else {
                    panic!("no split")
                };
                let imp = |id: usize| match &t.nodes[id] {
                    Node::Leaf { counts } => {
                        let n = counts.iter().sum::<u64>();
                        n as f64 * impurity(crit, counts, n)
                    }
                    _ => panic!("depth 1"),
                };
                let got = imp(*left) + imp(*right);
                let want = brute_best(&x, &y, k, crit);
                assert!((got - want).abs() < 1e-9, "{crit:?} k={k}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn unlimited_tree_fits_training_data_and_respects_limits() {
        let (x, y) = nonlinear_binary(500, 5, 0.0, 0, 8);
        let t = fit_tree(&TreeConfig::default(), x.view(), &y, 2).unwrap();
        // Distinct continuous values: a fully grown tree separates every training row.
        assert_eq!(t.predict(x.view()).unwrap(), y);
        let cfg = TreeConfig {
            max_depth: Some(3),
            min_samples_leaf: 20,
            ..Default::default()
        };
        let t = fit_tree(&cfg, x.view(), &y, 2).unwrap();
        assert!(t.depth() <= 3 && t.n_leaves() <= 8);
        for leaf in &t.nodes {
            if let Node::Leaf { counts } = leaf {
                assert!(counts.iter().sum::<u64>() >= 20);
            }
        }
        let p = t.predict_proba(x.view()).unwrap();
        assert!(p.rows().into_iter().all(|r| (r.sum() - 1.0).abs() < 1e-12));
    }

    #[test]
    fn ties_and_constant_features() {
        // Feature 0 constant, feature 1 has ties: the split must fall between 1 and 2.
        let x = array![[5.0, 1.0], [5.0, 1.0], [5.0, 2.0], [5.0, 2.0], [5.0, 3.0]];
        let y = [0, 0, 1, 1, 1];
        let t = fit_tree(&TreeConfig::default(), x.view(), &y, 2).unwrap();
        assert_eq!(
            t.nodes[0],
            Node::Split {
                feature: 1,
                threshold: 1.5,
                left: 1,
                right: 2
            }
        );
        // No split possible: every feature constant.
        let x = array![[1.0], [1.0], [1.0]];
        let t = fit_tree(&TreeConfig::default(), x.view(), &[0, 1, 1], 2).unwrap();
        assert_eq!(t.nodes, vec![Node::Leaf { counts: vec![1, 2] }]);
    }

    #[test]
    fn bad_hyperparameters_are_named() {
        let (x, y) = nonlinear_binary(20, 3, 0.0, 0, 1);
        for (cfg, name) in [
            (
                TreeConfig {
                    min_samples_leaf: 0,
                    ..Default::default()
                },
                "min_samples_leaf",
            ),
            (
                TreeConfig {
                    min_samples_split: 1,
                    ..Default::default()
                },
                "min_samples_split",
            ),
            (
                TreeConfig {
                    max_depth: Some(0),
                    ..Default::default()
                },
                "max_depth",
            ),
            (
                TreeConfig {
                    min_impurity_decrease: f64::NAN,
                    ..Default::default()
                },
                "min_impurity_decrease",
            ),
        ] {
            match fit_tree(&cfg, x.view(), &y, 2) {
                Err(LearnError::InvalidParameter { name: n, .. }) => assert_eq!(n, name),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}
