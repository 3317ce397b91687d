//! LPCT-prune: **Algorithm 2** (Section 5.2), with the naive pruning of Section 5.1 and the
//! authors' code's constants as presets (Section 5.1, Prop. 6 and Algorithm 2; the LPCT entries of `docs/deviations.md` from `#lpct-pruning-radius-constants` to `#lpct-two-round-pruning`).
//!
//! Round 1: the partition π_{p0} is queried once (budget ε_q); for every leaf A^j the pooled sums
//! of its depth-k ancestors (13) give a statistic v_k^j = |η − 1/2| / r_k^j; the walk k = p0, …, 1
//! accepts the deepest ancestor whose sign is trusted (v ≥ 1). If, in the noise-dominated branch,
//! the private statistic wins at a depth k ≤ p_term, the flag is set and (with
//! `invoke_termination`) round 2 queries π_{p_term} with the other ε/2 and returns the private-only
//! tree (7).
//!
//! The garbled constants (`docs/deviations.md#lpct-pruning-radius-constants`) are one [`Preset`]; eps_q = ε/2 inside the noise quantities and the
//! full ε inside p0 and p_term (`docs/deviations.md#lpct-full-or-query-epsilon`); termination is checked before acceptance (`docs/deviations.md#lpct-termination-before-acceptance`, literal order);
//! the fallback when no ancestor passes is argmax_k v with ties to the deeper node (`docs/deviations.md#lpct-prune-depth-and-fallback`).
//! In an unbalanced (practical-growth) tree, 2^{p0−k} — the number of leaves under a depth-k
//! ancestor of the complete tree — is replaced by the node's true number of leaves.

use super::estimator::{LeafSums, pooled_eta, ratio};
use super::guard::{NodeSums, Significance, node_sums};
use super::partition::{NO_NODE, Tree};
use serde::{Deserialize, Serialize};

/// The constant sets of `docs/deviations.md#lpct-pruning-radius-constants` for r² = L·(u + β_Q λ² S_Q)/(S̃_P + λS_Q)².
///
/// The default is [`Preset::Code`], the constants of the paper's experiments (Section 6.1: "we
/// use constants that yield a tighter bound than (14)"). Measured on the Ma & Yang design (5
/// replications, 4,000 test points): at (n_P, n_Q, ε) = (4000, 400, 4), (10⁴, 50, 2),
/// (10⁴, 1000, 4) the single-query accuracy is 0.744 / 0.626 / 0.661 with `code`,
/// 0.690 / 0.582 / 0.595 with `prop6`, and 0.49 / 0.52 / 0.50 with `alg2-literal`, whose
/// noise-branch statistics let pure noise win (v_P of a noise-only node is ≈ N(0, 1.25/L)
/// against a public v_Q ≲ 0.1 at deep nodes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Algorithm 2 as printed: noise branch (T ≥ S̃_P) compares P-only and Q-only with
    /// u = 4T, β_Q = 4, L = ln(n_P + n_Q); combined branch u = 32 S̃_P, β_Q = 4.
    Alg2Literal,
    /// The naive pruning of Section 5.1 with Proposition 6's radius (14): always the combined
    /// statistic, L = C_1 = 8 ln(n_P + n_Q), u = 4·max(T_k, S̃_P), β_Q = 1; no termination.
    Prop6,
    /// The authors' code's tighter constants ("we use constants that yield a tighter bound than
    /// (14)", Section 6.1): Algorithm 2's rules, with the node's true depth.
    ///
    /// Known limitation (measured, left as the code has it): u_noise contains
    /// 2^{m+1}(ε 2^{−k/2} √c2)²/c2 · n_P/ε² = 2^{m+1} n_P 2^{−k}, twice the expected private
    /// count of the node per leaf below it, so rule 4 (u_noise > S̃_P → public only) fires at
    /// every node unless the noise inflates S̃_P, at any ε. The pruned tree is then a Lepski
    /// walk on the public counts, and since p0 and p_term grow with ε (p_term = p0 at
    /// n_P = 10⁴, n_Q = 50, ε ≥ 8) its accuracy falls as ε grows: 0.663, 0.646, 0.614, 0.617,
    /// 0.577, 0.465 at ε = 0.5, 1, 2, 4, 8, 1000 (20 runs, Fig. 4(a)'s design).
    #[default]
    Code,
}

/// Options of Algorithm 2. Default: the configuration of the paper's experiments (the code's
/// constants, one query at the full ε, no re-query: "we refrain from invoking η̃_P^{π_p}",
/// Section 6). The printed algorithm is `preset: alg2-literal, invoke_termination: true`. With
/// termination, at the sample sizes tested (n_P ≤ 10⁴) some leaf always reaches depth ≤ p_term
/// through a private win and round 2's private-only tree at ε/2 is near chance (0.47–0.53).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PruneOptions {
    pub preset: Preset,
    /// Run round 2 when the flag is set (the paper's algorithm; each round then gets ε/2). False:
    /// one query at the full ε and the flag is ignored (the paper's simulations, Fig. 5(c), 7(b)).
    pub invoke_termination: bool,
    /// `docs/deviations.md#lpct-pseudo-code-and-prose-of-algorithm-2`: stop at the first node where the public statistic wins (Section 5.2's prose) instead of
    /// continuing the walk (the pseudo-code).
    pub q_stop_immediately: bool,
    /// `docs/deviations.md#lpct-termination-before-acceptance`: accept v ≥ 1 before checking termination (the literal order checks termination first).
    pub accept_before_termination: bool,
}

impl Default for PruneOptions {
    fn default() -> Self {
        PruneOptions {
            preset: Preset::Code,
            invoke_termination: false,
            q_stop_immediately: false,
            accept_before_termination: false,
        }
    }
}

/// p0 = ⌊d/(2+2d)·log2(n_P ε² + n_Q^{(2+2d)/d})⌋ and p_term = ⌊d/(2+2d)·log2(n_P ε²)⌋
/// (Algorithm 2, with the full ε, `docs/deviations.md#lpct-full-or-query-epsilon`), clamped to 1 ≤ p_term ≤ p0 ≤ `cap`.
pub fn depths(n_p: u64, n_q: u64, d: usize, epsilon: f64, cap: u32) -> (u32, u32) {
    let d = d as f64;
    let c = d / (2.0 + 2.0 * d);
    let np_eps = n_p as f64 * epsilon * epsilon;
    let nq_term = (n_q as f64).powf((2.0 + 2.0 * d) / d);
    let floor = |v: f64| -> u32 {
        if v.is_finite() && v > 0.0 {
            (v.floor() as u32).min(cap)
        } else if v.is_finite() {
            0
        } else {
            cap
        }
    };
    let p0 = floor(c * (np_eps + nq_term).log2()).max(1);
    let p_term = floor(c * np_eps.log2()).clamp(1, p0);
    (p0, p_term)
}

/// The radius r(λ)² = L·(u + β_Q λ² S_Q)/(S̃_P + λ S_Q)² of a node (the general form of (14)
/// and Algorithm 2), with its pooled counts S̃_P = `sp` and S_Q = `sq`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Radius {
    pub sp: f64,
    pub sq: f64,
    pub u: f64,
    pub beta_q: f64,
    pub big_l: f64,
}

impl Radius {
    /// The closed-form maximiser of v(λ) = |η̃_{P,Q}(λ) − 1/2| / r(λ) over λ ∈ [0, ∞]
    /// (Appendix A.2, eq. (16)): with a = η̃_P − 1/2, b = η̂_Q − 1/2, if ab > 0 then
    /// λ* = u b/(β_Q S̃_P a) and v* = sqrt((a²S̃_P²/u + b²S_Q/β_Q)/L); otherwise the better
    /// endpoint (a tie goes to λ = 0). Returns (λ*, v*); needs S̃_P > 0 and u > 0.
    pub fn best_lambda(&self, a: f64, b: f64) -> (f64, f64) {
        let Radius {
            sp,
            sq,
            u,
            beta_q,
            big_l,
        } = *self;
        let v0 = a.abs() * sp / (u * big_l).sqrt();
        if sq <= 0.0 {
            return (0.0, v0);
        }
        let vinf = b.abs() * (sq / (beta_q * big_l)).sqrt();
        if a * b > 0.0 {
            let lambda = u * b / (beta_q * sp * a);
            let v = ((a * a * sp * sp / u + b * b * sq / beta_q) / big_l).sqrt();
            (lambda, v)
        } else if v0 >= vinf {
            (0.0, v0)
        } else {
            (f64::INFINITY, vinf)
        }
    }

    /// v(λ) evaluated directly (for checking [`Radius::best_lambda`]).
    pub fn statistic(&self, a: f64, b: f64, lambda: f64) -> f64 {
        let Radius {
            sp,
            sq,
            u,
            beta_q,
            big_l,
        } = *self;
        if lambda == f64::INFINITY {
            return b.abs() * (sq / (beta_q * big_l)).sqrt();
        }
        let den = sp + lambda * sq;
        let eta_minus_half = (sp * a + lambda * sq * b) / den;
        let r = (big_l * (u + beta_q * lambda * lambda * sq)).sqrt() / den.abs();
        eta_minus_half.abs() / r
    }
}

/// The statistic of one node at ancestor depth k.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeStat {
    /// s_k^j: the node's estimate.
    pub eta: f64,
    /// v_k^j.
    pub v: f64,
    /// The λ of the estimate (0: private only, ∞: public only).
    pub lambda: f64,
    /// Whether the private-only statistic won in the noise-dominated branch (termination test).
    pub private_branch: bool,
    /// `docs/deviations.md#lpct-pseudo-code-and-prose-of-algorithm-2`: the public-only statistic won in the noise-dominated branch.
    pub public_branch: bool,
}

/// The outcome of round 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Round1 {
    /// η̃^{prune} on each leaf of π_{p0}.
    pub eta: Vec<f64>,
    /// k_j: the depth of the ancestor each leaf uses.
    pub depth: Vec<u32>,
    /// λ_{k_j}^j.
    pub lambda: Vec<f64>,
    /// The termination flag of Algorithm 2.
    pub flag: bool,
}

/// The statistic of every node, in the order of [`Tree::nodes`], from one query's sums (the
/// root's is used only by the guard: the walk stops at depth 1).
pub fn node_statistics(tree: &Tree, sums: &LeafSums, preset: Preset) -> Vec<NodeStat> {
    let pooled = node_sums(tree, sums);
    let n_p = sums.private.n_users as f64;
    let n_q = pooled[0].sq;
    // The reports' noise level as the Laplace ε of the paper's rules (identity for Laplace).
    let eps_q = sums.private.noise_epsilon();
    tree.nodes()
        .iter()
        .zip(&pooled)
        .map(|(node, p)| {
            let leaves = p.leaves as f64;
            match preset {
                Preset::Alg2Literal => alg2_stat(p, leaves, n_p, n_q, eps_q),
                Preset::Prop6 => prop6_stat(p, leaves, n_p, n_q, eps_q),
                Preset::Code => code_stat(p, leaves, node.depth, n_p, n_q, eps_q),
            }
        })
        .collect()
}

fn combined(p: &NodeSums, u: f64, beta_q: f64, big_l: f64) -> NodeStat {
    let a = ratio(p.np, p.sp) - 0.5;
    let b = ratio(p.nq, p.sq) - 0.5;
    let (lambda, v) = if p.sp > 0.0 {
        Radius {
            sp: p.sp,
            sq: p.sq,
            u,
            beta_q,
            big_l,
        }
        .best_lambda(a, b)
    } else {
        // No private mass to weigh: the public-only endpoint.
        (f64::INFINITY, b.abs() * (p.sq / (beta_q * big_l)).sqrt())
    };
    NodeStat {
        eta: pooled_eta(p.np, p.sp, p.nq, p.sq, lambda, Default::default()),
        v,
        lambda,
        private_branch: false,
        public_branch: false,
    }
}

/// Algorithm 2's statistic with eps_q (`docs/deviations.md#lpct-full-or-query-epsilon`): T = 2^{p0−k+3} eps_q^{−2} n_P.
fn alg2_stat(p: &NodeSums, leaves: f64, n_p: f64, n_q: f64, eps_q: f64) -> NodeStat {
    let big_l = (n_p + n_q).ln();
    let t = 8.0 * leaves * n_p / (eps_q * eps_q);
    if t >= p.sp {
        let eta_q = ratio(p.nq, p.sq);
        let v_q = (eta_q - 0.5).abs() * (p.sq / (4.0 * big_l)).sqrt();
        let eta_p = ratio(p.np, p.sp);
        let v_p = (eta_p - 0.5).abs() * p.sp.abs() / (4.0 * t * big_l).sqrt();
        if v_q <= v_p {
            NodeStat {
                eta: eta_p,
                v: v_p,
                lambda: 0.0,
                private_branch: true,
                public_branch: false,
            }
        } else {
            NodeStat {
                eta: eta_q,
                v: v_q,
                lambda: f64::INFINITY,
                private_branch: false,
                public_branch: true,
            }
        }
    } else {
        combined(p, 32.0 * p.sp, 4.0, big_l)
    }
}

/// Proposition 6 / (14): C_1 = 8 ln(n_P + n_Q), u = 4 max(T_k, S̃_P), β_Q = 1.
fn prop6_stat(p: &NodeSums, leaves: f64, n_p: f64, n_q: f64, eps_q: f64) -> NodeStat {
    let c1 = 8.0 * (n_p + n_q).ln();
    let t = 8.0 * leaves * n_p / (eps_q * eps_q);
    combined(p, 4.0 * t.max(p.sp), 1.0, c1)
}

/// The authors' code's statistic (the `[code]` preset), with k the node's depth and
/// 2^m its number of leaves.
fn code_stat(p: &NodeSums, leaves: f64, depth: u32, n_p: f64, n_q: f64, eps: f64) -> NodeStat {
    let k = f64::from(depth);
    let c2 = (n_p + n_q).ln() + k + 1.0;
    let c2q = n_q.max(1.0).ln() + k + 1.0;
    let eta_q = ratio(p.nq, p.sq);
    let b = eta_q - 0.5;
    let q_only = NodeStat {
        eta: eta_q,
        v: b.abs() * (p.sq / c2q).sqrt(),
        lambda: f64::INFINITY,
        private_branch: false,
        public_branch: false,
    };
    // Rule 1: no public data (0/0 := 0, statistic 0).
    if p.sq == 0.0 {
        return NodeStat { v: 0.0, ..q_only };
    }
    // Rule 2.
    if p.sp <= 0.0 || p.np <= 0.0 {
        return q_only;
    }
    let term = 2.0 * (2.0 * n_p).ln() + eps * 2f64.powf(-k / 2.0) * c2.sqrt();
    let u_noise = 2.0 * leaves * term * term / c2 * n_p / (eps * eps);
    let (np, u) = if p.np > p.sp {
        (p.sp, u_noise) // Rule 3: truncate Ñ_P to S̃_P.
    } else if u_noise > p.sp {
        return q_only; // Rule 4.
    } else {
        (p.np, p.sp)
    };
    let a = np / p.sp - 0.5;
    if a * b > 0.0 {
        // Rule 5.
        let lambda = u / p.sp * b / a;
        let den = p.sp + lambda * p.sq;
        let eta = (np + lambda * p.nq) / den;
        let r = c2.sqrt() * (u + lambda * lambda * p.sq).sqrt() / den;
        let v = (eta - 0.5).abs() / r;
        if v < q_only.v {
            return q_only;
        }
        NodeStat {
            eta,
            v,
            lambda,
            private_branch: false,
            public_branch: false,
        }
    } else {
        // Rule 6: the better single source, a tie to P.
        let v_p = a.abs() * p.sp / (c2.sqrt() * u.sqrt());
        if v_p >= q_only.v {
            NodeStat {
                eta: np / p.sp,
                v: v_p,
                lambda: 0.0,
                private_branch: false,
                public_branch: false,
            }
        } else {
            q_only
        }
    }
}

/// **Algorithm 2**, round 1: the walk k = depth(A^j), …, 1 for every leaf of π_{p0}. With
/// `guard = Some(z)` the node the walk picks keeps its estimate only when its centred numerator
/// at its own λ is z standard deviations from 0, else its nearest such ancestor's (the root's
/// when none is): [`super::guard`], `docs/deviations.md#lpct-prune-significance-guard`.
pub fn round1(
    tree: &Tree,
    sums: &LeafSums,
    opts: &PruneOptions,
    p_term: u32,
    guard: Option<f64>,
) -> Round1 {
    let stats = node_statistics(tree, sums, opts.preset);
    let guard = guard.map(|z| (Significance::new(sums, z), node_sums(tree, sums)));
    let nodes = tree.nodes();
    let l = tree.n_leaves();
    let mut out = Round1 {
        eta: Vec::with_capacity(l),
        depth: Vec::with_capacity(l),
        lambda: Vec::with_capacity(l),
        flag: false,
    };
    // Termination applies where the paper's pseudo-code has it (Alg. 2's noise branch) and to
    // the code preset's early stop; the naive pruning of §5.1 has none.
    let terminates = opts.preset != Preset::Prop6;
    for j in 0..l {
        let leaf = tree.leaf_node(j);
        let mut chosen: Option<(usize, NodeStat)> = None;
        let mut best = (leaf, stats[leaf]);
        let mut i = leaf;
        loop {
            let s = stats[i];
            let depth = nodes[i].depth;
            if s.v > best.1.v {
                best = (i, s);
            }
            let terminal =
                terminates && depth <= p_term && (s.private_branch || opts.preset == Preset::Code);
            if opts.accept_before_termination && s.v >= 1.0 {
                chosen = Some((i, s));
                break;
            }
            if terminal {
                out.flag = true;
                chosen = Some((i, s));
                if opts.preset == Preset::Code && s.v < 1.0 {
                    chosen = Some(best);
                }
                break;
            }
            if s.v >= 1.0 || (opts.q_stop_immediately && s.public_branch) {
                chosen = Some((i, s));
                break;
            }
            if nodes[i].parent == NO_NODE || nodes[nodes[i].parent as usize].parent == NO_NODE {
                break;
            }
            i = nodes[i].parent as usize;
        }
        let (mut i, mut s) = chosen.unwrap_or(best);
        if let Some((test, pooled)) = &guard {
            while !test.passes(&pooled[i], s.lambda) && nodes[i].parent != NO_NODE {
                i = nodes[i].parent as usize;
                s = stats[i];
            }
        }
        out.eta.push(s.eta);
        out.depth.push(nodes[i].depth);
        out.lambda.push(s.lambda);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn closed_form_lambda_maximises_the_statistic() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        for _ in 0..500 {
            let a = rng.random::<f64>() - 0.5;
            let b = rng.random::<f64>() - 0.5;
            let sp = 1.0 + 1000.0 * rng.random::<f64>();
            let sq = 1.0 + 1000.0 * rng.random::<f64>();
            let u = 1.0 + 1e5 * rng.random::<f64>();
            let beta = [1.0, 4.0][rng.random_range(0..2)];
            let big_l = 1.0 + 10.0 * rng.random::<f64>();
            let r = Radius {
                sp,
                sq,
                u,
                beta_q: beta,
                big_l,
            };
            let (lam, v) = r.best_lambda(a, b);
            let direct = r.statistic(a, b, lam);
            assert!((direct - v).abs() <= 1e-9 * (1.0 + v), "{direct} vs {v}");
            // A fine log grid on [0, 1e6] plus λ = ∞ never beats the closed form.
            let mut grid_best = r.statistic(a, b, f64::INFINITY);
            for g in 0..=2000 {
                let l = if g == 0 {
                    0.0
                } else {
                    1e-6 * 10f64.powf(g as f64 * 12.0 / 2000.0)
                };
                grid_best = grid_best.max(r.statistic(a, b, l));
            }
            assert!(
                grid_best <= v * (1.0 + 1e-9),
                "grid {grid_best} > closed form {v}"
            );
        }
    }

    #[test]
    fn depth_formulas_match_the_paper() {
        // d = 2: p0 = ⌊log2(n_P ε² + n_Q³)/3⌋, p_term = ⌊log2(n_P ε²)/3⌋.
        let (p0, pt) = depths(10_000, 50, 2, 2.0, 24);
        assert_eq!(p0, ((40_000.0f64 + 125_000.0).log2() / 3.0).floor() as u32);
        assert_eq!(pt, (40_000.0f64.log2() / 3.0).floor() as u32);
    }

    /// The guard on the walk's pick: public rows only (no private mass, so the code preset's
    /// rule 2 makes every node public-only, v = |η_Q − 1/2|·√(S_Q/c2q), c2q = ln 145 + k + 1).
    /// Leaves of 1 negative row and of 3 positives in 4 pass no v ≥ 1 test, nor does their
    /// parent (3 in 5), and the walk takes its most significant node, the leaf itself (η = 0,
    /// 0.75); the guard at z = 2 (|N − S/2| against z·√S/2: 0.5 vs 1, 0.5 vs 2, 0.5 vs 2.2)
    /// sends both to the root (103/145, 30.5 vs 12.0). Leaves of 100 positives (v = 1.77) and
    /// 40 negatives (v = 1.12) are accepted by the walk and pass the guard.
    #[test]
    fn guard_sends_insignificant_picks_to_their_nearest_significant_ancestor() {
        use crate::lpct::{NoisySums, partition::LeafCounts};
        let public = crate::estimators::example_data(400, 2, 1);
        let tree = crate::lpct::partition(&Default::default(), 2, &public).unwrap();
        assert_eq!(tree.n_leaves(), 4);
        let sums = LeafSums {
            private: NoisySums {
                count: vec![0.0; 4],
                positive: vec![0.0; 4],
                n_users: 1_000,
                epsilon: 4.0,
                mechanism: Default::default(),
            },
            public: LeafCounts {
                count: vec![1, 4, 100, 40],
                positive: vec![0, 3, 100, 0],
            },
        };
        let opts = PruneOptions::default();
        let walk = round1(&tree, &sums, &opts, 0, None);
        assert_eq!(walk.eta, vec![0.0, 0.75, 1.0, 0.0]);
        assert_eq!(walk.depth, vec![2, 2, 2, 2]);
        let guarded = round1(&tree, &sums, &opts, 0, Some(2.0));
        let root = 103.0 / 145.0;
        assert_eq!(guarded.eta, vec![root, root, 1.0, 0.0]);
        assert_eq!(guarded.depth, vec![0, 0, 2, 2]);
        // At z = 0 every pick whose centred numerator is not 0 is kept: the walk alone.
        assert_eq!(round1(&tree, &sums, &opts, 0, Some(0.0)), walk);
    }
}
