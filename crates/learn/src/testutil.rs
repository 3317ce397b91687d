//! Helpers for this crate's unit tests.

pub use crate::synth::gaussian_blobs as blobs;

/// Central finite-difference gradient of `f` at `theta` with step `h`.
pub fn fd_grad(f: impl Fn(&[f64]) -> f64, theta: &[f64], h: f64) -> Vec<f64> {
    let mut t = theta.to_vec();
    (0..theta.len())
        .map(|j| {
            t[j] = theta[j] + h;
            let up = f(&t);
            t[j] = theta[j] - h;
            let down = f(&t);
            t[j] = theta[j];
            (up - down) / (2.0 * h)
        })
        .collect()
}
