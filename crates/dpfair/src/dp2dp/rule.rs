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
