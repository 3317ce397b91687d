//! Algorithm 1 (max-edge partition) and its variants on the public sample: the split scores, the
//! max-edge, random max-edge and CART candidates, and the regular grid of PHIST.

use super::{
    Criterion, Growth, MAX_COMPLETE_DEPTH, MAX_DEPTH, NO_NODE, Node, PartitionConfig, Scaler,
    Splitter, Tree, check_finite, check_labels,
};
use crate::lpct::error::{Result, bad_data, invalid};
use ndarray::ArrayView2;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use std::cmp::Ordering;

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
    Ok(Tree::from_nodes(nodes, scaler))
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
    Ok(Tree::from_nodes(nodes, scaler))
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
}
