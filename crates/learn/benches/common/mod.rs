//! Shared by the DP-SGD benches (`dpsgd.rs`, `dpsgd_throughput.rs`): the Adult-shaped design
//! of 6 standardised numeric columns and 8 categorical variables one-hot
//! encoded into 96 columns (12 levels each), labels from a logistic model.

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub fn adult_shaped(n: usize, seed: u64) -> (Array2<f64>, Vec<u32>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut unif = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut x = Array2::zeros((n, 102));
    let mut y = Vec::with_capacity(n);
    for mut row in x.rows_mut() {
        let mut score = -1.0;
        for j in 0..6 {
            // Sum of 3 uniforms, centred and scaled: roughly standard normal.
            let v = (unif() + unif() + unif() - 1.5) * 2.0;
            row[j] = v;
            score += 0.5 * v * if j % 2 == 0 { 1.0 } else { -1.0 };
        }
        for c in 0..8 {
            let level = (unif() * 12.0) as usize;
            row[6 + 12 * c + level] = 1.0;
            score += 0.3 * (level as f64 - 5.5) / 5.5;
        }
        y.push(u32::from(unif() < 1.0 / (1.0 + (-score).exp())));
    }
    (x, y)
}
