//! Uniform integers from uniform bits, without bias: the only primitive the exact samplers use.
//!
//! [`Nat`] abstracts the natural numbers the samplers compute with: `u128` on the fast path and
//! [`BigUint`] when a parameter does not fit. Both follow the same code in [`super::cks`].

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use rand::Rng;

/// Uniform on `{0, …, n−1}` for `n ≥ 1`: Lemire's multiply-and-reject method (2019), which
/// rejects the `2^64 mod n` low products that would bias the result, so the law is exactly uniform.
#[inline]
pub(crate) fn below_u64<R: Rng + ?Sized>(rng: &mut R, n: u64) -> u64 {
    debug_assert!(n > 0);
    let mut m = (rng.next_u64() as u128) * (n as u128);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = (rng.next_u64() as u128) * (n as u128);
        }
    }
    (m >> 64) as u64
}

/// One fair bit.
#[inline]
pub(crate) fn bit<R: Rng + ?Sized>(rng: &mut R) -> bool {
    rng.next_u32() & 1 == 1
}

/// The arithmetic the exact samplers need, for `u128` (fast path) and `BigUint` (any size).
pub(crate) trait Nat: Clone + Ord {
    fn is_zero_(&self) -> bool;
    /// (⌊self / d⌋, self mod d), `d > 0`.
    fn div_rem_(&self, d: &Self) -> (Self, Self);
    /// `self − 1`, `self > 0`.
    fn dec(&mut self);
    /// `self · k + add`. On `u128` the caller guarantees there is no overflow.
    fn mul_add_u64(&self, k: u64, add: &Self) -> Self;
    /// Uniform on `{0, …, n−1}`, `n ≥ 1`.
    fn below<R: Rng + ?Sized>(rng: &mut R, n: &Self) -> Self;
}

impl Nat for u128 {
    #[inline]
    fn is_zero_(&self) -> bool {
        *self == 0
    }
    #[inline]
    fn div_rem_(&self, d: &Self) -> (Self, Self) {
        // The samplers mostly divide a smaller number (γ < 1): skip the 128-bit division then.
        if self < d {
            (0, *self)
        } else {
            (self / d, self % d)
        }
    }
    #[inline]
    fn dec(&mut self) {
        *self -= 1;
    }
    #[inline]
    fn mul_add_u64(&self, k: u64, add: &Self) -> Self {
        self * k as u128 + add
    }
    #[inline]
    fn below<R: Rng + ?Sized>(rng: &mut R, n: &Self) -> Self {
        let n = *n;
        debug_assert!(n > 0);
        if n <= u64::MAX as u128 {
            return below_u64(rng, n as u64) as u128;
        }
        if n == 1u128 << 64 {
            return rng.next_u64() as u128;
        }
        // Rejection from the smallest power of two ≥ n: accepted with probability > 1/2.
        let bits = 128 - (n - 1).leading_zeros();
        let mask = if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        loop {
            let x = (((rng.next_u64() as u128) << 64) | rng.next_u64() as u128) & mask;
            if x < n {
                return x;
            }
        }
    }
}

impl Nat for BigUint {
    fn is_zero_(&self) -> bool {
        self.is_zero()
    }
    fn div_rem_(&self, d: &Self) -> (Self, Self) {
        self.div_rem(d)
    }
    fn dec(&mut self) {
        *self -= 1u32;
    }
    fn mul_add_u64(&self, k: u64, add: &Self) -> Self {
        self * k + add
    }
    fn below<R: Rng + ?Sized>(rng: &mut R, n: &Self) -> Self {
        if let Some(small) = n.to_u128() {
            return BigUint::from(u128::below(rng, &small));
        }
        let bits = (n - BigUint::one()).bits();
        let words = bits.div_ceil(32) as usize;
        let top_bits = bits - 32 * (words as u64 - 1);
        loop {
            let mut digits: Vec<u32> = (0..words).map(|_| rng.next_u32()).collect();
            if top_bits < 32 {
                digits[words - 1] &= (1u32 << top_bits) - 1;
            }
            let x = BigUint::new(digits);
            if &x < n {
                return x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Noise;

    #[test]
    fn below_stays_in_range_for_every_width() {
        let mut rng = Noise::seeded(1);
        for n in [1u64, 2, 3, 7, 1 << 40, u64::MAX] {
            for _ in 0..200 {
                assert!(below_u64(&mut rng, n) < n);
            }
        }
        for n in [(1u128 << 64) + 3, u128::MAX, 1u128 << 64] {
            for _ in 0..200 {
                assert!(u128::below(&mut rng, &n) < n);
            }
        }
        let big = BigUint::from(3u32) << 200usize;
        for _ in 0..200 {
            assert!(BigUint::below(&mut rng, &big) < big);
        }
    }

    #[test]
    fn below_three_is_uniform() {
        // 30,000 draws on {0,1,2}: each count has sd √(30000·(1/3)(2/3)) ≈ 81.6; allow 5 sd.
        let mut rng = Noise::seeded(2);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[below_u64(&mut rng, 3) as usize] += 1;
        }
        for c in counts {
            assert!((c as f64 - 10_000.0).abs() < 5.0 * 81.65, "{counts:?}");
        }
    }
}
