//! The DP2DP prediction rule (Algorithm 1's output):
//! ĝ_ρ(x, s) = argmax_k π̄_s p̄_k(x, s) − s(λ̄⁽¹⁾_k − λ̄⁽²⁾_k), with explicit tie-breaking (`docs/deviations.md#dp2dp-ties-in-the-argmax`).

use super::config::TieBreak;
use super::dual::group_index;
use dpfair_privacy::Noise;
use ndarray::ArrayView2;
use rand::RngExt;

/// Classes (codes 0..K) of the rows of `probs` (n × K, p̄) with signs `signs` (±1) under
/// multipliers `lambda` (2K) and frequencies `pi = [π̄_{−1}, π̄_{+1}]`. Jitter is drawn from `rng`;
/// with [`TieBreak::LowestIndex`] the lowest maximising class wins. λ = 0 and π̄ = (1, 1) give the
/// unconstrained argmax p̄ (the "unfair" baseline).
pub fn predict(
    probs: ArrayView2<'_, f64>,
    signs: &[f64],
    pi: [f64; 2],
    lambda: &[f64],
    ties: TieBreak,
    rng: &mut Noise,
) -> Vec<u32> {
    let k = probs.ncols();
    probs
        .rows()
        .into_iter()
        .zip(signs)
        .map(|(row, &s)| {
            let pi_s = pi[group_index(s)];
            let mut best = (0u32, f64::NEG_INFINITY);
            for c in 0..k {
                let jitter = match ties {
                    TieBreak::Jitter { width } if width > 0.0 => rng.random::<f64>() * width,
                    _ => 0.0,
                };
                let score = pi_s * (row[c] + jitter) - s * (lambda[c] - lambda[k + c]);
                if score > best.1 {
                    best = (c as u32, score);
                }
            }
            best.0
        })
        .collect()
}

/// The uniform mixture of the rules of `iterates` (each 2K multipliers;
/// `docs/deviations.md#dp2dp-mixture-of-iterates`): row i's class distribution (n × K, the
/// fraction of iterates whose rule [`predict`]s each class) and one class per row drawn from it
/// with `rng` (public randomness). One iterate gives its deterministic rule.
///
/// ```
/// use dpfair::dp2dp::{TieBreak, rule};
/// use dpfair_privacy::Noise;
/// let probs = ndarray::array![[0.6, 0.4], [0.9, 0.1]];
/// // λ⁽¹⁾_1 = 0.3 raises class 1's score by 0.3 for s = −1: row 0 turns to class 1, row 1 not.
/// let iterates = vec![vec![0.0; 4], vec![0.0, 0.3, 0.0, 0.0]];
/// let (classes, dist) = rule::predict_mixture(
///     probs.view(), &[-1.0, -1.0], [1.0, 1.0], &iterates, TieBreak::LowestIndex,
///     &mut Noise::seeded(1),
/// );
/// assert_eq!(dist.row(0).to_vec(), vec![0.5, 0.5]);
/// assert_eq!(dist.row(1).to_vec(), vec![1.0, 0.0]);
/// assert_eq!(classes[1], 0);
/// ```
pub fn predict_mixture(
    probs: ArrayView2<'_, f64>,
    signs: &[f64],
    pi: [f64; 2],
    iterates: &[Vec<f64>],
    ties: TieBreak,
    rng: &mut Noise,
) -> (Vec<u32>, ndarray::Array2<f64>) {
    let (n, k) = probs.dim();
    let mut dist = ndarray::Array2::<f64>::zeros((n, k));
    let w = 1.0 / iterates.len().max(1) as f64;
    for lambda in iterates {
        for (i, c) in predict(probs, signs, pi, lambda, ties, rng)
            .into_iter()
            .enumerate()
        {
            dist[[i, c as usize]] += w;
        }
    }
    let classes = dist
        .rows()
        .into_iter()
        .map(|row| {
            let u: f64 = rng.random();
            let mut acc = 0.0;
            let mut pick = 0;
            for (c, &p) in row.iter().enumerate() {
                if p > 0.0 {
                    pick = c;
                    acc += p;
                    if u < acc {
                        break;
                    }
                }
            }
            pick as u32
        })
        .collect();
    (classes, dist)
}
