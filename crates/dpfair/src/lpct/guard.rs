//! Significance-guarded leaf estimates (`docs/deviations.md#lpct-significance-guard`): a leaf
//! keeps its own η̃ of eq. (8) only when its centred numerator `(Ñ_P + λN_Q) − (S̃_P + λS_Q)/2`
//! is more than `z` standard deviations from 0; otherwise it takes the η̃ of its nearest
//! ancestor that is (the root's when none is). Post-processing of the released sums and the
//! public counts: privacy is unaffected.
//!
//! Why: Theorem 4's depth is an order; in high dimension it gives leaves that hold about one
//! public row (depth 10 for 1,430 public rows in 23 dimensions), and eq. (8) then labels each
//! leaf by the few rows it holds: a 1-nearest-neighbour rule, whose error on a 95%-one-class
//! target (2η(1−η) ≈ 0.095) is twice the majority class's. The guard lets a leaf depart from its
//! ancestors only when its data say so.
//!
//! The standard deviation is from public numbers and released sums: the reports' noise on a
//! node of `k` leaves, `k · n_P · v` (`v` the mechanism's per-holder numerator variance,
//! [`super::Mechanism::numerator_variance`]), plus the labels' Bernoulli variance at most
//! `(max(S̃_P, 0) + λ² S_Q)/4`.

use super::estimator::{LeafSums, RatioRule, pooled_eta};
use super::partition::{NO_NODE, Tree};

/// The default `z`: a leaf departs from its ancestors at three standard deviations (one whose
/// numerator has mean 0 departs with probability 0.27%: about 3 of the 2^10 leaves of a
/// Theorem-4 depth, against 47 at two). Measured on Law (docs/deviations.md,
/// `lpct-significance-guard`): z = 2 left a 95%-one-class target 0.3 points below the
/// majority class, z = 3 at it; on a balanced target both gain 2 points over the paper's rule.
pub const DEFAULT_Z: f64 = 3.0;

/// Each leaf's η̃: its own when significant at `z`, else its nearest significant ancestor's
/// (module docs).
///
/// ```
/// use dpfair::lpct::guard::guarded_eta;
/// # use dpfair::lpct::{LeafSums, NoisySums, RatioRule};
/// # use dpfair::lpct::partition::LeafCounts;
/// # let public = dpfair::estimators::example_data(400, 2, 1);
/// # let tree = dpfair::lpct::partition(&Default::default(), 1, &public).unwrap();
/// // Two leaves: 1,000 private holders, no public row; one leaf's noisy numerator is far from
/// // 1/2 (300 positives of 400), the other's is within noise (7 of 10): it takes the root's.
/// let sums = LeafSums {
///     private: NoisySums {
///         count: vec![400.0, 10.0],
///         positive: vec![300.0, 7.0],
///         n_users: 1_000,
///         epsilon: 8.0,
///         mechanism: Default::default(),
///     },
///     public: LeafCounts { count: vec![0, 0], positive: vec![0, 0] },
/// };
/// let eta = guarded_eta(&tree, &sums, 0.0, RatioRule::Literal, 2.0);
/// assert_eq!(eta[0], 0.75);
/// assert_eq!(eta[1], 307.0 / 410.0);
/// ```
pub fn guarded_eta(tree: &Tree, sums: &LeafSums, lambda: f64, rule: RatioRule, z: f64) -> Vec<f64> {
    let test = Significance::new(sums, z);
    let nodes = tree.nodes();
    let node_eta: Vec<(f64, bool)> = node_sums(tree, sums)
        .iter()
        .map(|s| {
            let eta = pooled_eta(s.np, s.sp, s.nq, s.sq, lambda, rule);
            (eta, test.passes(s, lambda))
        })
        .collect();
    (0..tree.n_leaves())
        .map(|j| {
            let mut node = tree.leaf_node(j);
            loop {
                let (eta, significant) = node_eta[node];
                let parent = nodes[node].parent;
                if significant || parent == NO_NODE {
                    break eta;
                }
                node = parent as usize;
            }
        })
        .collect()
}

/// The pooled sums (13) of one node: the noisy private S̃_P, Ñ_P, the public S_Q, N_Q, and its
/// number of leaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NodeSums {
    pub sp: f64,
    pub np: f64,
    pub sq: f64,
    pub nq: f64,
    pub leaves: usize,
}

/// Every node's pooled sums, in the order of [`Tree::nodes`] (leaves are numbered depth-first,
/// so a node's leaves are a range).
pub(crate) fn node_sums(tree: &Tree, sums: &LeafSums) -> Vec<NodeSums> {
    tree.nodes()
        .iter()
        .map(|node| {
            let range = node.first_leaf as usize..node.end_leaf as usize;
            let sum = |v: &[f64]| v[range.clone()].iter().sum::<f64>();
            let sum_u = |v: &[u64]| v[range.clone()].iter().sum::<u64>() as f64;
            NodeSums {
                sp: sum(&sums.private.count),
                np: sum(&sums.private.positive),
                sq: sum_u(&sums.public.count),
                nq: sum_u(&sums.public.positive),
                leaves: range.len(),
            }
        })
        .collect()
}

/// The guard's test at `z` standard deviations (module docs), for the reports of one query.
pub(crate) struct Significance {
    per_leaf_noise: f64,
    z: f64,
}

impl Significance {
    pub(crate) fn new(sums: &LeafSums, z: f64) -> Self {
        let per_holder = sums
            .private
            .mechanism
            .numerator_variance(sums.private.epsilon);
        Significance {
            per_leaf_noise: sums.private.n_users as f64 * per_holder,
            z,
        }
    }

    /// Whether the node's centred numerator at public weight `lambda` (∞: public rows only)
    /// is more than z standard deviations from 0.
    pub(crate) fn passes(&self, s: &NodeSums, lambda: f64) -> bool {
        let (private_weight, public_weight) = if lambda.is_infinite() {
            (0.0, 1.0)
        } else {
            (1.0, lambda)
        };
        let centred = private_weight * (s.np - s.sp / 2.0) + public_weight * (s.nq - s.sq / 2.0);
        let variance = private_weight
            * (s.leaves as f64 * self.per_leaf_noise + s.sp.max(0.0) / 4.0)
            + public_weight * public_weight * s.sq / 4.0;
        centred.abs() > self.z * variance.sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lpct::{NoisySums, partition::LeafCounts};

    /// A depth-2 tree (four leaves) on public rows of two features.
    fn tree() -> Tree {
        let public = crate::estimators::example_data(400, 2, 1);
        crate::lpct::partition(&Default::default(), 2, &public).unwrap()
    }

    fn sums(positive: Vec<f64>, count: Vec<f64>, public: (Vec<u64>, Vec<u64>)) -> LeafSums {
        LeafSums {
            private: NoisySums {
                count,
                positive,
                n_users: 1_000,
                epsilon: 4.0,
                mechanism: Default::default(),
            },
            public: LeafCounts {
                count: public.0,
                positive: public.1,
            },
        }
    }

    /// At z = 0 every leaf whose numerator is not exactly 1/2 keeps eq. (8)'s own estimate.
    #[test]
    fn z_zero_is_the_papers_rule() {
        let t = tree();
        assert_eq!(t.n_leaves(), 4);
        let s = sums(
            vec![30.0, 2.0, 50.0, 7.0],
            vec![40.0, 10.0, 60.0, 9.0],
            (vec![5, 1, 2, 3], vec![1, 0, 2, 3]),
        );
        for lambda in [0.0, 1.0, 50.0, f64::INFINITY] {
            assert_eq!(
                guarded_eta(&t, &s, lambda, RatioRule::Literal, 0.0),
                s.eta(lambda, RatioRule::Literal),
                "λ = {lambda}"
            );
        }
    }

    /// Public rows only (λ = ∞): leaves of one negative row (|N − S/2| = 1/2 against a standard
    /// deviation of 1/2) and of 3 positives in 4 are not significant at z = 2, nor is their
    /// parent (3 in 5): both take the root's η = 103/145; leaves of 100 positives and of 40
    /// negatives (|−20| against √10) keep their own.
    #[test]
    fn small_leaves_take_their_ancestors_estimate() {
        let t = tree();
        let s = sums(
            vec![0.0; 4],
            vec![0.0; 4],
            (vec![1, 4, 100, 40], vec![0, 3, 100, 0]),
        );
        let eta = guarded_eta(&t, &s, f64::INFINITY, RatioRule::Literal, 2.0);
        let root = 103.0 / 145.0;
        assert_eq!(eta, vec![root, root, 1.0, 0.0]);
    }
}
