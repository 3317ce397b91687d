//! Synthetic classification data for tests, benchmarks and demos (simulation only: these draws
//! never touch a release, so they use a plain seeded ChaCha stream and Box–Muller).

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn normal(rng: &mut impl Rng) -> f64 {
    // Box–Muller; u1 ∈ (0, 1] so the log is finite.
    let u1 = 1.0 - (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let u2 = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// `n` rows in `d` dimensions from `k` spherical unit-variance Gaussian blobs whose centres are
/// drawn at distance `separation` from the origin along random directions; labels uniform.
pub fn gaussian_blobs(
    n: usize,
    d: usize,
    k: usize,
    separation: f64,
    seed: u64,
) -> (Array2<f64>, Vec<u32>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let centres: Vec<Vec<f64>> = (0..k)
        .map(|_| {
            let v: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
            let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt().max(1e-12);
            v.iter().map(|a| a * separation / norm).collect()
        })
        .collect();
    let mut x = Array2::zeros((n, d));
    let mut y = Vec::with_capacity(n);
    for mut row in x.rows_mut() {
        let c = (rng.next_u64() % k as u64) as usize;
        y.push(c as u32);
        for (j, v) in row.iter_mut().enumerate() {
            *v = centres[c][j] + normal(&mut rng);
        }
    }
    (x, y)
}

/// A non-linear binary problem for trees: `d` features uniform on [0, 1); the label is 1 iff
/// x₀ + x₁² + sin(6 x₂) / 2 > 1, flipped with probability `flip`. Features beyond the third are
/// pure noise; `levels > 0` rounds every feature to that many distinct values (ties).
pub fn nonlinear_binary(
    n: usize,
    d: usize,
    flip: f64,
    levels: u32,
    seed: u64,
) -> (Array2<f64>, Vec<u32>) {
    assert!(d >= 3, "nonlinear_binary needs d ≥ 3");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let unif = |rng: &mut ChaCha8Rng| (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let mut x = Array2::zeros((n, d));
    let mut y = Vec::with_capacity(n);
    for mut row in x.rows_mut() {
        for v in row.iter_mut() {
            let u = unif(&mut rng);
            *v = if levels > 0 {
                (u * f64::from(levels)).floor() / f64::from(levels)
            } else {
                u
            };
        }
        let s = row[0] + row[1] * row[1] + 0.5 * (6.0 * row[2]).sin();
        let mut label = u32::from(s > 1.0);
        if unif(&mut rng) < flip {
            label = 1 - label;
        }
        y.push(label);
    }
    (x, y)
}
