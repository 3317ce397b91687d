//! Exact noise samplers (Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential
//! Privacy", §5 Algorithms 1–3) and the lattice through which real values are released.
//!
//! * [`bernoulli_exp`] / [`bernoulli_exp_small`]: Bernoulli(exp(−γ)) for rational γ ≥ 0
//!   (Algorithm 1).
//! * [`discrete_laplace`] / [`discrete_laplace_small`]: P(Y = y) ∝ exp(−|y|/scale) on ℤ for a
//!   rational scale (Algorithm 2).
//! * [`discrete_gaussian`] / [`discrete_gaussian_small`]: P(Y = y) ∝ exp(−y²/(2σ²)) on ℤ for a
//!   rational σ² (Algorithm 3).
//! * [`discrete_gaussian_fill`] / [`LazyDiscreteGaussian`]: the same Algorithm 3 in bulk over
//!   lazily read bits (≈ 80 bits per draw at DP-SGD's σ instead of ≈ 1,000): what the Gaussian
//!   mechanisms call for one-off σ.
//! * [`TableDiscreteGaussian`]: exact N_ℤ(0, σ²) for one σ from a table built once (alias-table
//!   envelope, exact rejection; ≈ 2 Bernoulli decisions per draw instead of ≈ 10): what DP-SGD
//!   calls for its millions of draws at one σ.
//! * [`geometric`]: exact Geometric(q) skips for an `f64` rate q (Poisson subsampling at one draw
//!   per selected row), over the lazily read bits of [`bits`].
//! * [`lattice`]: real-valued queries are rounded to a 2^k lattice and get integer noise in lattice
//!   steps; the rounding is accounted for in the sensitivity.
//! * [`simulation`]: SIMULATION-ONLY helpers (floating point; never used for a release).
//!
//! The `_small` functions are the fast path (`u128` arithmetic, no allocation); the big-integer
//! functions accept any size and take the fast path themselves when the parameters fit. All draw
//! only uniform bits from the given source (a [`crate::Noise`] in every mechanism), through
//! unbiased integer rejection sampling, so their laws are exact.

pub mod bits;
mod cks;
mod exact_exp;
pub mod geometric;
pub mod lattice;
mod lazy_gaussian;
pub mod simulation;
mod table_gaussian;
mod uniform;

pub use cks::{
    bernoulli_exp, bernoulli_exp_small, discrete_gaussian, discrete_gaussian_small,
    discrete_laplace, discrete_laplace_small,
};
pub use lazy_gaussian::{LazyDiscreteGaussian, discrete_gaussian_fill};
pub use table_gaussian::TableDiscreteGaussian;

use crate::error::{Result, invalid};
use rand::Rng;

/// ⌈2^64·p⌉ for p = 1/(e^{num/den} + 1), or a little more, never less: the threshold of a
/// Bernoulli(p') with p ≤ p' ≤ p + 2^−60 drawn by one comparison of a uniform `u64` (the
/// constant-time flip of [`crate::mechanisms::HadamardResponse::report`]). From a rigorous
/// upper bound E ≥ e^{−γ}·2^128 ([`exact_exp`]'s bracket): p = e^{−γ}/(1 + e^{−γ}) increases in
/// e^{−γ}, so p ≤ E/(2^128 + E). Capped at 2^63 (p' ≤ ½).
pub(crate) fn flip_threshold(num: &num_bigint::BigUint, den: &num_bigint::BigUint) -> u128 {
    use num_traits::ToPrimitive;
    let (_, hi) = exact_exp::exp_neg_bounds(num, den, 128);
    let scale = num_bigint::BigUint::from(1u32) << 128u32;
    let numer = hi.clone() << 64u32;
    let denom = scale + hi;
    let t = (&numer + &denom - 1u32) / &denom;
    t.to_u128().unwrap_or(u128::MAX).min(1 << 63)
}

/// Uniform on {0, …, n−1} (unbiased rejection sampling), `n ≥ 1`.
pub fn uniform_below<R: Rng + ?Sized>(rng: &mut R, n: u64) -> Result<u64> {
    if n == 0 {
        return Err(invalid("n", "the range must be non-empty"));
    }
    Ok(uniform::below_u64(rng, n))
}

/// Bernoulli(num/den), exactly, for 0 ≤ num ≤ den, den ≥ 1.
pub fn bernoulli_ratio<R: Rng + ?Sized>(rng: &mut R, num: u64, den: u64) -> Result<bool> {
    if den == 0 || num > den {
        return Err(invalid(
            "p",
            format!("must be a probability num/den with num ≤ den, den > 0; got {num}/{den}"),
        ));
    }
    Ok(uniform::below_u64(rng, den) < num)
}
