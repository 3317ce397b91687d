//! Algorithm 3 (FDP.BINARY.TREE): the private binary tree of counts of the scores
//! `Z = 2(2a−1) π̃_a (η̃_a(X̌) − 1/2) ∈ [−1, 1]` of one site's calibration points, one tree per
//! group, and the tail counts of Algorithm 2 S2.
//!
//! * Leaves (level `M`): `2^M` half-open bins `[−1 + (j−1)2^{1−M}, −1 + j 2^{1−M})`,
//!   `j = 1..2^M`; `Z = 1` goes to the last leaf (Xue & Yu, Algorithm 3, edge case).
//! * Levels `ℓ = M−1 … 1`: `count_{ℓ,k} = count_{ℓ+1,2k−1} + count_{ℓ+1,2k}`; the root (level 0)
//!   is not part of the tree.
//! * Noise: every node gets `N(0, σ²)` with `σ² = M (4 log(1/δ_s) + 2ε_s)/ε_s²` (Alg. 3; the
//!   paper writes `(4 log(1/δ_s)/ε_s + 2)/(ε_s/M)`).
//!
//! **Privacy (Prop. 19).** Replacing one calibration record moves at most one unit
//! between two leaves (possibly of different groups), so in every level the two trees side by side
//! change in at most two entries by 1: ℓ2² sensitivity 2 per level, `2M` for the whole vector of
//! both trees. It is released here as **one** vector Gaussian release of sensitivity `√(2M)`:
//!
//! * [`TreeNoise::Paper`]: the σ above, i.e. `ρ = M/σ² = ε_s²/(4 log(1/δ_s) + 2ε_s)` zCDP, which
//!   converts to `ε' = ρ + 2 sqrt(ρ log(1/δ_s)) ≤ ε_s` at `δ_s` for every ε_s (no ε < 1
//!   restriction, `docs/deviations.md#fdp-fair-gaussian-mechanism-for-epsilon-above-1`). The ledger records it as zCDP.
//! * [`TreeNoise::Analytic`] (strict default): the smallest σ giving exactly `(ε_s, δ_s)` for
//!   that sensitivity (analytic Gaussian, Balle & Wang 2018), about 0.8× the paper's σ at
//!   ε = 1, δ = 1e−6. Recorded as `(ε_s, δ_s)`, so a site's ledger (S1 approximate DP on the
//!   training half, the trees on the calibration half) totals exactly `(ε_s, δ_s)`.

use crate::accumulate::CountTable;
use crate::plugin::error::{Error, Result, invalid};
use crate::plugin::release::{Calibration, check_eps_delta, gaussian_release_vec, release_sigma};
use dpfair_privacy::{Ledger, Noise};
use serde::{Deserialize, Serialize};

/// Largest depth accepted (`2^20` leaves per tree).
pub const MAX_DEPTH: usize = 20;

/// Per-node noise variance of Algorithm 3: `σ² = M (4 ln(1/δ) + 2ε)/ε²`.
pub fn node_variance(epsilon: f64, delta: f64, depth: usize) -> f64 {
    depth as f64 * (4.0 * (1.0 / delta).ln() + 2.0 * epsilon) / (epsilon * epsilon)
}

/// The zCDP parameter of the whole tree release, `ρ = M/σ² = ε²/(4 ln(1/δ) + 2ε)` (independent of
/// `M`; Prop. 19).
pub fn tree_zcdp(epsilon: f64, delta: f64) -> f64 {
    epsilon * epsilon / (4.0 * (1.0 / delta).ln() + 2.0 * epsilon)
}

/// `ε' = ρ + 2 sqrt(ρ ln(1/δ))`: the (ε', δ)-DP implied by ρ-zCDP (Bun & Steinke 2016, Prop. 1.3).
pub fn zcdp_epsilon(rho: f64, delta: f64) -> f64 {
    rho + 2.0 * (rho * (1.0 / delta).ln()).sqrt()
}

/// Leaf index (0-based) of a score: `⌊(z + 1)/2^{1−M}⌋`, clamped to the last leaf (`Z = 1`).
pub fn leaf_of(z: f64, depth: usize) -> usize {
    let leaves = 1usize << depth;
    let width = 2.0 / leaves as f64;
    let j = ((z + 1.0) / width).floor();
    if j <= 0.0 {
        0
    } else {
        (j as usize).min(leaves - 1)
    }
}

/// The exact (noise-free) tree of the scores `z`: `levels[ℓ−1]` holds the `2^ℓ` counts of level
/// `ℓ = 1..=M` ([`TreeCounts`] of one group).
pub fn exact_tree(z: &[f64], depth: usize) -> Result<Vec<Vec<f64>>> {
    let mut counts = TreeCounts::new(depth)?;
    counts.update(0, z)?;
    Ok(counts.levels(0))
}

/// The sufficient statistic of Algorithm 3 at one site as a mergeable exact accumulator
/// (`crate::accumulate`): the leaf counts of both groups' trees (`2 × 2^M` integers; every upper
/// level is a sum of leaves). [`TreeCounts::update`] adds a batch of scores, [`TreeCounts::merge`]
/// another part's counts, [`TreeCounts::release`] is the finalize step (one Gaussian release of
/// both trees, charged first). The depth `M` and the score map are public (the broadcast), so
/// parts of one site's calibration half can be counted anywhere and merged in any order.
///
/// ```
/// use dpfair::fdp_fair::tree::TreeCounts;
/// let (mut a, mut b) = (TreeCounts::new(2).unwrap(), TreeCounts::new(2).unwrap());
/// a.update(0, &[-0.9, 0.3]).unwrap();
/// b.update(1, &[0.99]).unwrap();
/// b.merge(&a).unwrap();
/// assert_eq!(b.levels(0), vec![vec![1.0, 1.0], vec![1.0, 0.0, 1.0, 0.0]]);
/// assert_eq!(b.levels(1)[0], vec![0.0, 1.0]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeCounts {
    depth: usize,
    /// Group `a`'s leaf `j` at cell `a·2^M + j`.
    leaves: CountTable,
}

impl TreeCounts {
    /// Empty trees of depth `depth` (`1..=MAX_DEPTH`).
    pub fn new(depth: usize) -> Result<Self> {
        check_depth(depth)?;
        Ok(TreeCounts {
            depth,
            leaves: CountTable::new(2 << depth),
        })
    }

    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Count the scores `z` (each in `[−1, 1]`) of group `group` (0/1).
    pub fn update(&mut self, group: usize, z: &[f64]) -> Result<()> {
        if group > 1 {
            return Err(invalid("group", format!("must be 0 or 1, got {group}")));
        }
        if let Some(i) = z
            .iter()
            .position(|v| !(v.is_finite() && (-1.0..=1.0).contains(v)))
        {
            return Err(Error::InvalidData(format!(
                "calibration score {i} is {} (scores must lie in [−1, 1])",
                z[i]
            )));
        }
        let offset = group << self.depth;
        for &v in z {
            self.leaves
                .add(offset + leaf_of(v, self.depth))
                .map_err(|c| Error::InvalidData(format!("leaf {c}")))?;
        }
        Ok(())
    }

    /// Add another part's counts (same depth; exact, so the order of merges does not matter).
    pub fn merge(&mut self, other: &TreeCounts) -> Result<()> {
        if other.depth != self.depth {
            return Err(invalid(
                "depth",
                format!(
                    "cannot merge trees of depth {} into trees of depth {}",
                    other.depth, self.depth
                ),
            ));
        }
        self.leaves
            .merge(&other.leaves)
            .map_err(|e| Error::InvalidData(e.to_string()))
    }

    /// Group `group`'s exact tree: `levels[ℓ−1]` holds the `2^ℓ` counts of level `ℓ = 1..=M`.
    pub fn levels(&self, group: usize) -> Vec<Vec<f64>> {
        let n = 1usize << self.depth;
        let leaves = &self.leaves.counts()[group * n..(group + 1) * n];
        let mut levels = vec![leaves.iter().map(|&c| c as f64).collect::<Vec<f64>>()];
        while levels[0].len() > 2 {
            let up: Vec<f64> = levels[0].chunks(2).map(|p| p[0] + p[1]).collect();
            levels.insert(0, up);
        }
        levels
    }

    /// Algorithm 3's release of both trees (module docs): one Gaussian release, charged to
    /// `ledger` before any noise is drawn.
    #[allow(clippy::too_many_arguments)]
    pub fn release(
        &self,
        epsilon: f64,
        delta: f64,
        calibration: TreeNoise,
        label: &str,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<SiteTrees> {
        check_eps_delta(epsilon, delta)?;
        let depth = self.depth;
        let flat: Vec<f64> = [self.levels(0), self.levels(1)]
            .iter()
            .flatten()
            .flatten()
            .copied()
            .collect();
        let noisy = gaussian_release_vec(
            ledger,
            noise,
            &format!("{label}Alg. 3: noisy trees of counts (M = {depth}, both groups)"),
            tree_sensitivity(depth),
            calibration.calibration(epsilon, delta, depth),
            &flat,
        )?;
        let mut it = noisy.into_iter();
        let mut take = || NoisyTree {
            levels: (1..=depth)
                .map(|l| it.by_ref().take(1 << l).collect())
                .collect(),
        };
        let g0 = take();
        let g1 = take();
        Ok(SiteTrees { groups: [g0, g1] })
    }
}

pub fn check_depth(depth: usize) -> Result<()> {
    if !(1..=MAX_DEPTH).contains(&depth) {
        return Err(invalid(
            "depth",
            format!("tree depth M must be in 1..={MAX_DEPTH}, got {depth}"),
        ));
    }
    Ok(())
}

/// One group's noisy tree `{N_{ℓ,k}}` (public once released).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoisyTree {
    /// `levels[ℓ−1][k−1] = N_{ℓ,k}`, `ℓ = 1..=M`, `k = 1..=2^ℓ`.
    pub levels: Vec<Vec<f64>>,
}

impl NoisyTree {
    /// Depth `M`.
    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    /// Checks the shape (`2^ℓ` finite values at level ℓ) and that the depth is `depth`.
    pub fn validate(&self, depth: usize, what: &str) -> Result<()> {
        if self.depth() != depth {
            return Err(Error::InvalidData(format!(
                "{what}: tree of depth {} but the protocol's depth is M = {depth}",
                self.depth()
            )));
        }
        for (l, level) in self.levels.iter().enumerate() {
            if level.len() != 1 << (l + 1) {
                return Err(Error::InvalidData(format!(
                    "{what}: level {} has {} nodes, expected {}",
                    l + 1,
                    level.len(),
                    1usize << (l + 1)
                )));
            }
            if let Some(k) = level.iter().position(|v| !v.is_finite()) {
                return Err(Error::InvalidData(format!(
                    "{what}: node ({}, {}) is not finite",
                    l + 1,
                    k + 1
                )));
            }
        }
        Ok(())
    }

    /// The noisy group total `N_{s,a} = N_{1,1} + N_{1,2}` (Alg. 2 S2).
    pub fn total(&self) -> f64 {
        self.levels[0][0] + self.levels[0][1]
    }

    /// `Tail(τ_j)` of Algorithm 2 S2 for the grid index `j = 1..=2^M+1` (1-based, as the paper):
    /// the sum of the maximal dyadic nodes inside the leaf suffix `[j, 2^M]` (at most one per
    /// level). `j = 1` is the paper's special case: no node qualifies (the root is not in the
    /// tree), so the noisy total `N_{s,a}` is returned (every `Z ≥ −1`); `j = 2^M+1` gives 0.
    pub fn tail(&self, j: usize) -> f64 {
        if j <= 1 {
            return self.total();
        }
        tail_nodes(self.depth(), j)
            .map(|(l, k)| self.levels[l - 1][k - 1])
            .sum()
    }
}

/// The nodes `(ℓ, k)` (1-based) whose sum is `Tail(τ_j)` for `j = 2..=2^M+1` in a tree of depth
/// `depth` ([`NoisyTree::tail`]): the maximal dyadic nodes inside the leaf suffix `[j, 2^M]`, at
/// most one per level (none for `j = 2^M+1`).
pub fn tail_nodes(depth: usize, j: usize) -> impl Iterator<Item = (usize, usize)> {
    (1..=depth).filter_map(move |l| {
        let w = 1usize << (depth - l);
        // Smallest node whose leftmost leaf (k−1)w+1 is ≥ j; the parent condition is monotone
        // in k, so only this node can qualify.
        let k = (j.max(1) - 1).div_ceil(w) + 1;
        (j > 1 && k <= 1 << l && (k.div_ceil(2) - 1) * 2 * w + 1 < j).then_some((l, k))
    })
}

/// The two noisy trees of one site (index = group `a`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteTrees {
    pub groups: [NoisyTree; 2],
}

/// How the tree noise is calibrated (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TreeNoise {
    #[default]
    Analytic,
    Paper,
}

impl TreeNoise {
    fn calibration(self, epsilon: f64, delta: f64, depth: usize) -> Calibration {
        match self {
            TreeNoise::Analytic => Calibration::Analytic { epsilon, delta },
            TreeNoise::Paper => Calibration::Sigma {
                sigma: node_variance(epsilon, delta, depth).sqrt(),
            },
        }
    }

    /// The noise standard deviation of every node of a site's trees released at `(ε_s, δ_s)`
    /// with depth `M`: public (it depends on the broadcast's parameters only), so the server can
    /// state how far its estimate of the disparity may be off (`crate::fdp_fair::search`).
    pub fn node_sigma(self, epsilon: f64, delta: f64, depth: usize) -> Result<f64> {
        check_eps_delta(epsilon, delta)?;
        check_depth(depth)?;
        release_sigma(
            tree_sensitivity(depth),
            self.calibration(epsilon, delta, depth),
        )
    }
}

/// ℓ2 sensitivity of both trees side by side, `√(2M)` (Prop. 19, module docs).
fn tree_sensitivity(depth: usize) -> f64 {
    (2.0 * depth as f64).sqrt()
}

/// Algorithm 3 at one site: counts both groups' trees from the scores `z[a]` ([`TreeCounts`])
/// and releases them in one Gaussian release (module docs), charging `ledger` before any noise
/// is drawn.
#[allow(clippy::too_many_arguments)]
pub fn release_trees(
    z: &[Vec<f64>; 2],
    depth: usize,
    epsilon: f64,
    delta: f64,
    calibration: TreeNoise,
    label: &str,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<SiteTrees> {
    let mut counts = TreeCounts::new(depth)?;
    counts.update(0, &z[0])?;
    counts.update(1, &z[1])?;
    counts.release(epsilon, delta, calibration, label, ledger, noise)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's indicator, literally: node (ℓ, k) counts towards Tail(τ_j) iff
    /// `(k−1)2^{M−ℓ} + 1 ≥ j` and `(⌈k/2⌉ − 1)2^{M−ℓ+1} + 1 < j`.
    fn tail_literal(t: &NoisyTree, j: usize) -> f64 {
        let m = t.depth();
        let mut s = 0.0;
        for l in 1..=m {
            for k in 1..=(1usize << l) {
                let left = (k - 1) * (1 << (m - l)) + 1;
                let parent_left = (k.div_ceil(2) - 1) * (1 << (m - l + 1)) + 1;
                if left >= j && parent_left < j {
                    s += t.levels[l - 1][k - 1];
                }
            }
        }
        s
    }

    #[test]
    fn tail_matches_the_papers_indicator_and_exact_suffix_sums() {
        for m in 1..=7 {
            // Distinct powers-of-two-free values per node so that any wrong node shows.
            let levels: Vec<Vec<f64>> = (1..=m)
                .map(|l| (0..1 << l).map(|k| (l * 1000 + k) as f64 + 0.5).collect())
                .collect();
            let t = NoisyTree { levels };
            for j in 2..=(1 << m) + 1 {
                assert_eq!(t.tail(j), tail_literal(&t, j), "M = {m}, j = {j}");
            }
            // j = 1: the literal formula selects nothing; the special case is the total.
            assert_eq!(tail_literal(&t, 1), 0.0);
            assert_eq!(t.tail(1), t.total());
            assert_eq!(t.tail((1 << m) + 1), 0.0);
        }
        // Noise-free trees: Tail(τ_j) = #{Z ≥ τ_j} exactly.
        let z: Vec<f64> = (0..500)
            .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0)
            .collect();
        for m in 1..=8 {
            let t = NoisyTree {
                levels: exact_tree(&z, m).unwrap(),
            };
            for j in 1..=(1usize << m) + 1 {
                let tau = -1.0 + (j - 1) as f64 * 2.0 / (1u64 << m) as f64;
                let direct = z.iter().filter(|&&v| v >= tau - 1e-12).count() as f64;
                assert_eq!(t.tail(j), direct, "M = {m}, j = {j}");
            }
        }
    }

    #[test]
    fn leaves_are_half_open_and_z_equal_one_goes_last() {
        assert_eq!(leaf_of(-1.0, 3), 0);
        assert_eq!(leaf_of(-0.75, 3), 1);
        assert_eq!(leaf_of(0.0, 3), 4);
        assert_eq!(leaf_of(1.0, 3), 7);
        assert!(exact_tree(&[1.5], 3).is_err());
    }

    #[test]
    fn spec_noise_vectors() {
        // `docs/reference-values.md#fdp-fair`: ε = 1, δ = 1e−6: M = 6 → 343.572, M = 13 → 744.407.
        assert!((node_variance(1.0, 1e-6, 6) - 343.572).abs() < 1e-3);
        assert!((node_variance(1.0, 1e-6, 13) - 744.407).abs() < 1e-3);
        // Prop. 19: ε' ≤ ε, 0.99984 at ε = 1 and 3.9915 at ε = 4 (δ = 1e−6).
        let e1 = zcdp_epsilon(tree_zcdp(1.0, 1e-6), 1e-6);
        let e4 = zcdp_epsilon(tree_zcdp(4.0, 1e-6), 1e-6);
        assert!((e1 - 0.99984).abs() < 1e-5 && e1 <= 1.0, "{e1}");
        assert!((e4 - 3.9915).abs() < 1e-4 && e4 <= 4.0, "{e4}");
        // The zCDP of the release equals M/σ² for every M.
        for m in [1, 6, 13] {
            let rho = m as f64 / node_variance(2.0, 1e-5, m);
            assert!((rho - tree_zcdp(2.0, 1e-5)).abs() < 1e-12);
        }
    }

    #[test]
    fn release_charges_within_budget() {
        use dpfair_privacy::Budget;
        let z = [vec![-0.2, 0.1], vec![0.3]];
        for mode in [TreeNoise::Analytic, TreeNoise::Paper] {
            let mut ledger = Ledger::new(Budget::approx(1.0, 1e-6).unwrap());
            let t = release_trees(
                &z,
                6,
                1.0,
                1e-6,
                mode,
                "",
                &mut ledger,
                &mut Noise::seeded(1),
            )
            .unwrap();
            t.groups[0].validate(6, "group 0").unwrap();
            let total = ledger.total().unwrap();
            assert!(total.epsilon <= 1.0 + 1e-9, "{mode:?}: {total:?}");
            let sigma = ledger.entries()[0].scale;
            match mode {
                TreeNoise::Paper => assert!((sigma * sigma - 343.572).abs() < 1e-3),
                TreeNoise::Analytic => assert!(sigma < 343.572f64.sqrt(), "{sigma}"),
            }
            // The server's public σ is the one the release drew with (the ledger records the
            // lattice sampler's σ, which differs in the sixth digit).
            let public = mode.node_sigma(1.0, 1e-6, 6).unwrap();
            assert!(
                (public / sigma - 1.0).abs() < 1e-5,
                "{public} against {sigma}"
            );
        }
    }
}

#[cfg(test)]
mod accumulator_tests {
    use super::*;
    use crate::accumulate::testing::{merge_randomly, random_parts};
    use dpfair_privacy::Budget;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Issue #21: a site's calibration scores split into random parts, counted separately and
    /// merged in random orders, give the one-pass leaf counts, and with the same noise stream
    /// the same noisy trees and ledger as [`release_trees`].
    #[test]
    fn tree_counts_from_merged_parts_equal_the_one_pass_trees() {
        let mut rng = ChaCha20Rng::seed_from_u64(24);
        let n = 400;
        let rows: Vec<(usize, f64)> = (0..n)
            .map(|i| {
                let z = if i % 10 == 0 {
                    1.0
                } else {
                    rng.random_range(-1.0..1.0)
                };
                (rng.random_range(0..2usize), z)
            })
            .collect();
        let z: [Vec<f64>; 2] =
            [0, 1].map(|g| rows.iter().filter(|r| r.0 == g).map(|r| r.1).collect());
        let release = |t: Option<&TreeCounts>| {
            let mut ledger = Ledger::new(Budget::approx(1.0, 1e-6).expect("budget"));
            let mut noise = Noise::seeded(3);
            let trees = match t {
                Some(t) => t.release(
                    1.0,
                    1e-6,
                    TreeNoise::Analytic,
                    "s: ",
                    &mut ledger,
                    &mut noise,
                ),
                None => release_trees(
                    &z,
                    5,
                    1.0,
                    1e-6,
                    TreeNoise::Analytic,
                    "s: ",
                    &mut ledger,
                    &mut noise,
                ),
            };
            (trees.expect("trees"), ledger)
        };
        let one_pass = release(None);
        for parts in [1, 3, 8] {
            let counts: Vec<TreeCounts> = random_parts(n, parts, &mut rng)
                .into_iter()
                .map(|idx| {
                    let mut t = TreeCounts::new(5).expect("depth");
                    for i in idx {
                        t.update(rows[i].0, &[rows[i].1]).expect("update");
                    }
                    t
                })
                .collect();
            let merged = merge_randomly(counts, &mut rng, |a, b| a.merge(&b).expect("merge"));
            assert_eq!(merged.levels(0), exact_tree(&z[0], 5).expect("tree"));
            assert_eq!(merged.levels(1), exact_tree(&z[1], 5).expect("tree"));
            assert_eq!(release(Some(&merged)), one_pass, "{parts} parts");
        }
        let mut t = TreeCounts::new(5).expect("depth");
        assert!(t.merge(&TreeCounts::new(4).expect("depth")).is_err());
        assert!(t.update(2, &[0.0]).is_err());
        assert!(TreeCounts::new(0).is_err());
    }
}
