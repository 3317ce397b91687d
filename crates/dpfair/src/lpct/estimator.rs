//! The collector's estimators on a fixed partition (§3.2 of the paper, eq. (7)–(9)).
//!
//! All of them are ratios of per-leaf sums; [`LeafSums`] holds the four sums once, so every λ of a
//! grid comes from **one** noisy query (`docs/deviations.md#lpct-noise-reused-across-lambda`: the noise does not depend on λ).

use super::partition::LeafCounts;
use super::privatiser::NoisySums;
use serde::{Deserialize, Serialize};

/// What to do with a noisy denominator that is ≤ 0 (`docs/deviations.md#lpct-non-positive-noisy-denominators`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RatioRule {
    /// The paper (and its code): the literal ratio; a zero denominator gives η = 0 (0/0 := 0).
    #[default]
    Literal,
    /// A post-processing deviation (privacy unaffected): where the combined denominator is ≤ 0,
    /// fall back to the public-only estimate N_Q/S_Q.
    Robust,
}

/// The ratio a/b with the paper's 0/0 := 0 (and x/0 := 0), `docs/deviations.md#lpct-q-only-estimate-without-private-mass`.
#[inline]
pub fn ratio(num: f64, den: f64) -> f64 {
    if den == 0.0 { 0.0 } else { num / den }
}

/// The four per-leaf sums: noisy private (S̃_P, Ñ_P) and exact public (S_Q, N_Q).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeafSums {
    pub private: NoisySums,
    pub public: LeafCounts,
}

impl LeafSums {
    pub fn n_leaves(&self) -> usize {
        self.private.count.len()
    }

    /// **(8)** η̃_{P,Q}^j = (Ñ_P^j + λ N_Q^j)/(S̃_P^j + λ S_Q^j) for every leaf. λ = 0 is (7), the
    /// private-only estimate (LPDT, "LPCT-P"); λ = +∞ is the public-only η̂_Q ("LPCT-Q").
    pub fn eta(&self, lambda: f64, rule: RatioRule) -> Vec<f64> {
        (0..self.n_leaves())
            .map(|j| {
                let (sp, np) = (self.private.count[j], self.private.positive[j]);
                let (sq, nq) = (self.public.count[j] as f64, self.public.positive[j] as f64);
                pooled_eta(np, sp, nq, sq, lambda, rule)
            })
            .collect()
    }

    /// The leaf labels 1(η > 1/2) of every λ of a grid, from the same sums.
    pub fn labels_grid(&self, lambdas: &[f64], rule: RatioRule) -> Vec<Vec<u8>> {
        lambdas
            .iter()
            .map(|&l| {
                self.eta(l, rule)
                    .into_iter()
                    .map(|e| u8::from(e > 0.5))
                    .collect()
            })
            .collect()
    }
}

/// (8) on pooled sums (also (13) at an ancestor): (Ñ_P + λN_Q)/(S̃_P + λS_Q).
pub fn pooled_eta(np: f64, sp: f64, nq: f64, sq: f64, lambda: f64, rule: RatioRule) -> f64 {
    if lambda == f64::INFINITY {
        return ratio(nq, sq);
    }
    let den = sp + lambda * sq;
    match rule {
        RatioRule::Robust if den <= 0.0 => ratio(nq, sq),
        _ => ratio(np + lambda * nq, den),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums() -> LeafSums {
        LeafSums {
            private: NoisySums {
                count: vec![10.0, -3.0, 0.0, 5.0],
                positive: vec![8.0, 1.0, 0.0, 1.0],
                n_users: 4,
                epsilon: 1.0,
                mechanism: Default::default(),
            },
            public: LeafCounts {
                count: vec![4, 2, 0, 10],
                positive: vec![0, 2, 0, 9],
            },
        }
    }

    #[test]
    fn lambda_zero_is_private_only_and_infinity_is_public_only() {
        let s = sums();
        assert_eq!(
            s.eta(0.0, RatioRule::Literal),
            vec![0.8, -1.0 / 3.0, 0.0, 0.2]
        );
        assert_eq!(
            s.eta(f64::INFINITY, RatioRule::Literal),
            vec![0.0, 1.0, 0.0, 0.9]
        );
        // A very large λ converges to the public-only estimate.
        let big = s.eta(1e12, RatioRule::Literal);
        assert!((big[3] - 0.9).abs() < 1e-9 && (big[1] - 1.0).abs() < 1e-9);
    }

    #[test]
    fn robust_rule_replaces_nonpositive_denominators() {
        let s = sums();
        let lit = s.eta(1.0, RatioRule::Literal);
        let rob = s.eta(1.0, RatioRule::Robust);
        // Leaf 1: −3 + 2 = −1 ≤ 0 → public-only 1.0; the others agree.
        assert_eq!(lit[1], (1.0 + 2.0) / -1.0);
        assert_eq!(rob[1], 1.0);
        assert_eq!(lit[0], rob[0]);
        assert_eq!(lit[3], rob[3]);
    }

    #[test]
    fn grid_labels_match_single_lambda_fits() {
        let s = sums();
        let grid = [0.0, 0.5, 2.0, 100.0];
        let labels = s.labels_grid(&grid, RatioRule::Literal);
        for (l, row) in grid.iter().zip(&labels) {
            let one: Vec<u8> = s
                .eta(*l, RatioRule::Literal)
                .iter()
                .map(|e| u8::from(*e > 0.5))
                .collect();
            assert_eq!(&one, row);
        }
    }
}
