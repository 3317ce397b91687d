//! The exact privacy profile of one Gaussian release (Balle & Wang 2018, "Improving the Gaussian
//! Mechanism for Differential Privacy", Theorem 8) and its two inversions.
//!
//! A release `f(D) + N(0, σ²I)` with ℓ2-sensitivity Δ (under whichever neighbouring relation Δ was
//! computed for) is (ε, δ)-DP if and only if
//! `δ ≥ Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)`.
//! Only the ratio z = σ/Δ (the noise multiplier) matters. Balle & Wang solve the equation through
//! their functions B±; here the profile itself is evaluated in log space and inverted by bisection,
//! which gives the same numbers to the stated tolerance and is valid for every ε > 0.

use super::special::{bisect, log_norm_cdf, log1mexp};

/// Relative tolerance of both inversions; the returned value is always on the safe side.
pub const TOLERANCE: f64 = 1e-12;

/// ln δ(ε) of the Gaussian mechanism with noise multiplier `z` (Balle & Wang 2018, Thm 8),
/// computed as `ln Φ(a) + ln(1 − exp(ε + ln Φ(b) − ln Φ(a)))`, a = 1/(2z) − εz, b = −1/(2z) − εz,
/// so it stays accurate when δ is far below machine epsilon.
pub fn log_delta(z: f64, epsilon: f64) -> f64 {
    let a = 0.5 / z - epsilon * z;
    let b = -0.5 / z - epsilon * z;
    let la = log_norm_cdf(a);
    la + log1mexp(epsilon + log_norm_cdf(b) - la)
}

/// Smallest ε ≥ 0 with δ(ε) ≤ `delta` (inputs validated by the caller). Returns the upper end of
/// the final bisection bracket, so the release is (ε, δ)-DP at the value returned.
pub fn epsilon(z: f64, delta: f64) -> f64 {
    let ld = delta.ln();
    if log_delta(z, 0.0) <= ld {
        return 0.0;
    }
    let mut hi = 1.0;
    while log_delta(z, hi) > ld {
        hi *= 2.0;
        if hi > 1e12 {
            return f64::INFINITY;
        }
    }
    bisect(0.0, hi, TOLERANCE, |e| log_delta(z, e) <= ld).1
}

/// Smallest noise multiplier z = σ/Δ with δ(ε; z) ≤ `delta` (δ is decreasing in z). Upper end of
/// the bracket, so the calibrated mechanism meets (ε, δ).
pub fn noise_multiplier(epsilon: f64, delta: f64) -> f64 {
    let ld = delta.ln();
    let (mut lo, mut hi) = (1.0, 1.0);
    if log_delta(hi, epsilon) > ld {
        while log_delta(hi, epsilon) > ld {
            lo = hi;
            hi *= 2.0;
        }
    } else {
        while log_delta(lo, epsilon) <= ld {
            hi = lo;
            lo /= 2.0;
            if lo < 1e-300 {
                return hi;
            }
        }
    }
    bisect(lo, hi, TOLERANCE, |z| log_delta(z, epsilon) <= ld).1
}
