//! Outward rounding of every conversion: a converted ε or δ is never below the exact value of the
//! bound it evaluates (OpenDP #2820: a zCDP → (ε, δ) conversion that rounded δ to nearest could
//! report less than the theorem gives). `docs/privacy.md#floating-point`.
//!
//! Each conversion is a short formula Σ tᵢ of a few terms, each computed with a few correctly
//! rounded operations and `libm`-quality `ln`/`exp` (≤ 1 ulp). With at most `ops` roundings of
//! relative size u = 2^−53 applied to intermediate values bounded by `mag` = Σ |tᵢ|, the computed
//! value x̃ satisfies |x̃ − x| ≤ (1 + u)^ops·ops·u·mag ≤ 2·ops·u·mag (ops·u ≤ ½); [`up`] adds that
//! allowance, then one more ulp for its own addition. The choice of the optimising order α is
//! not rounded: every α > 1 gives a valid bound, so the bound at the α actually used is a bound.

/// u = 2^−53, the unit roundoff of `f64`.
pub const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;

/// A value ≥ the exact result of a computation that returned `x` after at most `ops` roundings
/// of relative size u on intermediate values of total magnitude at most `mag` (module doc).
/// Infinite and NaN values are returned unchanged.
pub fn up(x: f64, mag: f64, ops: u32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let allowance = 2.0 * f64::from(ops.max(1)) * UNIT_ROUNDOFF * mag.abs().max(x.abs());
    // The allowance is ≥ 2^−53·|x|, so one `next_up` covers the rounding of the sum itself.
    (x + allowance).next_up()
}

/// γ_k = k·u/(1 − k·u) (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1): the
/// relative error bound of k roundings, itself rounded up; `None` when k·u ≥ ½ (no useful bound).
pub fn gamma(k: u64) -> Option<f64> {
    let ku = (k as f64).next_up() * UNIT_ROUNDOFF;
    (ku < 0.5).then(|| up(ku / (1.0 - ku), ku, 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `up` is above its input by at least the stated allowance and by no more than twice it plus
    /// one ulp (so it cannot hide a hard-coded slack), and leaves ∞ alone.
    #[test]
    fn up_adds_the_allowance_and_no_more() {
        for (x, mag, ops) in [
            (1.0, 1.0, 4),
            (0.0817, 3.2, 16),
            (-2.5, 10.0, 8),
            (1e-300, 1e-300, 2),
        ] {
            let y = up(x, mag, ops);
            let allowance = 2.0 * f64::from(ops) * UNIT_ROUNDOFF * f64::max(mag, x.abs());
            assert!(y >= x + allowance, "{x} {mag} {ops}");
            assert!(
                y <= (x + 2.0 * allowance).next_up().next_up(),
                "{x} {mag} {ops}"
            );
        }
        assert_eq!(up(f64::INFINITY, 1.0, 3), f64::INFINITY);
    }

    #[test]
    fn gamma_bounds_k_roundings() {
        let g = gamma(1_000).unwrap();
        let exact = 1_000.0 * UNIT_ROUNDOFF / (1.0 - 1_000.0 * UNIT_ROUNDOFF);
        assert!(g >= exact && g < exact * (1.0 + 1e-12));
        assert!(gamma(1 << 52).is_none());
    }
}
