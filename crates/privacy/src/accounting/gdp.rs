//! Gaussian differential privacy (Dong, Roth, Su 2022) and the central-limit accountant for
//! DP-SGD (Bu, Dong, Long, Su 2020, "Deep Learning with Gaussian Differential Privacy", Thm 5 /
//! Corollary for Poisson subsampling; as in Opacus' `GaussianAccountant`, `compute_eps_poisson`).
//!
//! T steps of the Poisson-subsampled Gaussian at rate q and multiplier z are asymptotically
//! μ-GDP with `μ = q √(T (e^{1/z²} − 1))`. μ-GDP is exactly the privacy profile of one Gaussian
//! release with noise multiplier 1/μ, so ε(δ) comes from the analytic Gaussian profile
//! (Dong, Roth, Su 2022, Cor. 2.13: δ = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)).
//!
//! **This is an approximation, not a certified bound**: the CLT holds as T → ∞ with q√T fixed, and
//! at finite T it can under-state ε (most for large q or few steps). Relation: add/remove one
//! record (Poisson sampling), as in Bu et al.

use super::analytic_gaussian;

/// μ of the CLT for the Poisson-subsampled Gaussian.
pub fn mu(q: f64, z: f64, steps: u64) -> f64 {
    q * (steps as f64 * (1.0 / (z * z)).exp_m1()).sqrt()
}

/// ε at δ of μ-GDP (0 when μ = 0).
pub fn epsilon_of_mu(mu: f64, delta: f64) -> f64 {
    if mu == 0.0 {
        return 0.0;
    }
    if mu.is_infinite() {
        return f64::INFINITY;
    }
    analytic_gaussian::epsilon(1.0 / mu, delta)
}
