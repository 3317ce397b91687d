//! The discrete Gaussian of Canonne, Kamath & Steinke (2020, §5, Algorithms 1–3) drawn in bulk
//! from lazily read bits: the same exact algorithm as [`super::discrete_gaussian_small`], but
//! every Bernoulli decision reads only the bits of its uniform that decide it, so a draw at the
//! σ of DP-SGD (≈ 2^29 lattice steps) costs about 80 random bits instead of about 1,000.
//!
//! # The algorithm
//!
//! For an integer σ ≥ 1 and a Laplace scale t = 2^j, the power of two nearest σ on a log scale
//! (t/σ ∈ (1/√2, √2]; then U below is j raw bits and U/t needs no division):
//!
//! 1. X ~ Geometric(1 − e^{−1/t}) on {0, 1, …} as X = U + t·V (Algorithm 2): U uniform on
//!    {0, …, t − 1}, accepted with probability e^{−U/t}; V the number of successes of
//!    Bernoulli(e^{−1}) before the first failure. A fair sign; (negative, 0) is rejected, so
//!    ±X is the discrete Laplace of scale t.
//! 2. Accept ±X with probability exp(−γ), γ = (X·t − σ²)²/(2σ²t²) (Algorithm 3). The accepted
//!    law is ∝ exp(−X/t)·exp(−(X − σ²/t)²/(2σ²)) ∝ exp(−X²/(2σ²)) for *any* t > 0 (CKS20 take
//!    t = ⌊σ⌋ + 1, with acceptance rate ≈ 0.76; t/σ ∈ (1/√2, √2] keeps it ≥ 0.64).
//! 3. Bernoulli(e^{−γ}) is Algorithm 1: ⌊γ⌋ Bernoulli(e^{−1}) must all succeed, then for the
//!    fraction f = γ − ⌊γ⌋, A_K ~ Bernoulli(f/K) for K = 1, 2, … until the first A_K = 0 and
//!    the answer is "K odd"; A_K is drawn as Bernoulli(1/K) ∧ Bernoulli(f) (independent; the
//!    product of the probabilities), and Bernoulli(e^{−1}) is the case f = 1.
//!
//! # Why the law is exact
//!
//! Every Bernoulli(p) above is "U < p" for a fresh uniform real U, decided by
//! [`Threshold::decide`]: integer bounds lo ≤ p·2^64 ≤ hi settle it from U's first 64 bits unless
//! those bits lie in [lo, hi), and then the comparison is redone with the exact rational p and
//! as many further bits as it takes ([`LazyUniform`]). The bounds are exact integer quotients
//! for U/t and 1/K; for the fraction f they come from `f64` arithmetic whose rounding is bounded
//! (see [`Threshold::ratio`]). Either way the outcome is exactly "U < p"; the bounds only decide
//! how fast. Each decision consumes only the bits of U up to the first one that differs from the
//! bound (a stopping time of the bit sequence), so the following bits are still independent
//! uniform bits for the next decision ([`BitStream`]). Uniform integers are drawn from whole bits
//! with rejection. So every step has exactly the law of the corresponding step of CKS20.

use super::bits::{BitStream, LazyUniform};
use super::cks::{FAST_SIGMA_MAX, bernoulli_exp_nat, discrete_gaussian_small};
use super::exact_exp::decide_with_bounds;
use crate::error::{Result, invalid};
use num_bigint::BigUint;
use rand::Rng;

const TWO64: u128 = 1 << 64;

/// [`Threshold::one_over`] for k < 64 (index 0 unused).
const ONE_OVER: [Threshold; 64] = {
    let mut t = [Threshold {
        lo: 0,
        hi: 0,
        num: 0,
        den: 1,
    }; 64];
    let mut k = 1;
    while k < 64 {
        t[k] = Threshold::one_over_computed(k as u64);
        k += 1;
    }
    t
};

/// A Bernoulli(p) decision "U < p": bounds lo ≤ p·2^64 ≤ hi (hi ≤ 2^64) and p = num/den exactly.
#[derive(Clone, Copy, Debug)]
pub(super) struct Threshold {
    lo: u128,
    hi: u128,
    num: u128,
    den: u128,
}

impl Threshold {
    /// p = 1/k for k ≥ 1, with exact bounds from 64-bit arithmetic: 2^64 = k·Q + R (a table for
    /// the small k that Algorithm 1 nearly always stops at).
    #[inline]
    fn one_over(k: u64) -> Self {
        match ONE_OVER.get(k as usize) {
            Some(&t) => t,
            None => Self::one_over_computed(k),
        }
    }

    const fn one_over_computed(k: u64) -> Self {
        let (q, r) = (u64::MAX / k, u64::MAX % k);
        let exact = r + 1 == k;
        let lo = if exact { q as u128 + 1 } else { q as u128 };
        Threshold {
            lo,
            hi: lo + !exact as u128,
            num: 1,
            den: k as u128,
        }
    }

    /// p = num/den < 1 for any 128-bit num < den, with bounds from `f64` arithmetic on the top
    /// 64 bits ([`RatioBounds`]; the sampler keeps one per denominator).
    #[cfg(test)]
    fn ratio(num: u128, den: u128) -> Self {
        RatioBounds::new(den).threshold(num)
    }

    /// p = U/t for t = 2^j and U < t: U·2^(64−j) exactly.
    #[inline]
    fn fraction_of_t(u: u64, j: u32) -> Self {
        let lo = if j == 0 { 0 } else { u128::from(u) << (64 - j) };
        Threshold {
            lo,
            hi: lo,
            num: u128::from(u),
            den: 1u128 << j,
        }
    }

    /// Whether U < p for a fresh uniform U read from `bits` (module doc).
    #[inline]
    pub(super) fn decide<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>) -> bool {
        decide_with_bounds(bits, self.lo, self.hi, |bits, w| {
            self.decide_exactly(bits, w)
        })
    }

    #[cold]
    fn decide_exactly<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>, w: u64) -> bool {
        let (num, den) = (BigUint::from(self.num), BigUint::from(self.den));
        LazyUniform::from_word(w).less_than(bits, &num, &den)
    }

    /// The same p with the bounds widened by `slack` (still valid bounds): the exact path runs
    /// far more often. For tests of that path.
    pub(super) fn loosened(mut self, slack: u128) -> Self {
        self.lo = self.lo.saturating_sub(slack);
        self.hi = (self.hi + slack).min(TWO64);
        self
    }
}

/// Bounds on num/den·2^64 for one denominator and any 128-bit num < den. With
/// s = max(0, bits(den) − 64), num' = ⌊num/2^s⌋ and den' = ⌊den/2^s⌋ ≥ 2^63 (or den itself),
/// |num'/den' − p| ≤ 2/den' ≤ 2^−62, i.e. 4 units of 2^−64. The estimate x = num'·(2^64/den')
/// takes four correctly rounded `f64` operations (den' and num' converted, the quotient
/// 2^64/den' computed once per denominator, the product), so it is within a factor
/// 1 ± 4.01·2^−53 of num'/den'·2^64; scaling by 1 ∓ 2^−50 = 1 ∓ 8·2^−53 (one more rounding)
/// moves below / above it with room to spare, the casts truncate, and ∓ 4 (+1 for the
/// truncation of hi) covers the shift. The window [lo, hi) has width ≤ p·2^15 + 10, so the exact
/// path runs with probability below 2^−48.
#[derive(Clone, Copy, Debug)]
pub(super) struct RatioBounds {
    den: u128,
    shift: u32,
    /// 2^64/den', rounded to nearest.
    scale: f64,
}

impl RatioBounds {
    pub(super) fn new(den: u128) -> Self {
        let shift = (128 - den.leading_zeros()).saturating_sub(64);
        let d = (den >> shift) as u64;
        RatioBounds {
            den,
            shift,
            scale: 2f64.powi(64) / d as f64,
        }
    }

    #[inline]
    pub(super) fn threshold(&self, num: u128) -> Threshold {
        debug_assert!(num < self.den);
        let x = (num >> self.shift) as u64 as f64 * self.scale;
        // x < 2^64·(1 + 2^−50), so the lower bound's cast never saturates; the upper bound's
        // saturates only where the cap at 2^64 applies anyway.
        let lo = u128::from((x * (1.0 - 2f64.powi(-50))) as u64).saturating_sub(4);
        let hi = (u128::from((x * (1.0 + 2f64.powi(-50))) as u64) + 5).min(TWO64);
        Threshold {
            lo,
            hi,
            num,
            den: self.den,
        }
    }
}

/// `k ≤ 64` uniform bits as an integer.
#[inline]
pub(super) fn take_bits<R: Rng + ?Sized>(bits: &mut BitStream<'_, R>, k: u32) -> u64 {
    if k == 0 {
        return 0;
    }
    let v = bits.peek64() >> (64 - k);
    bits.consume(k);
    v
}

/// Exact N_ℤ(0, σ²) draws for one integer σ over lazily read bits (module doc).
#[derive(Clone, Debug)]
pub struct LazyDiscreteGaussian {
    sigma2: u128,
    /// t = 2^j.
    j: u32,
    t: u128,
    /// 2σ²t², the denominator of γ.
    den: u128,
    /// Bounds on fractions of `den`.
    ratio: RatioBounds,
    /// 1/den, for the estimate of ⌊γ⌋.
    inv_den: f64,
    /// Test hook: widen every fraction threshold by this much (0 in use).
    slack: u128,
}

impl LazyDiscreteGaussian {
    /// The sampler for an integer σ with 1 ≤ σ ≤ 2^31 − 2 (so that 2σ²t² ≤ 4σ⁴ < 2^127).
    pub fn new(sigma: u64) -> Result<Self> {
        if !(1..=FAST_SIGMA_MAX).contains(&sigma) {
            return Err(invalid(
                "sigma",
                format!("must be 1..={FAST_SIGMA_MAX} lattice steps, got {sigma}"),
            ));
        }
        // 2^j ≤ σ < 2^(j+1); round j up when σ > 2^j·√2 (σ² > 2^(2j+1)).
        let mut j = 63 - sigma.leading_zeros();
        let sigma2 = u128::from(sigma) * u128::from(sigma);
        if sigma2 > 1u128 << (2 * j + 1) {
            j += 1;
        }
        let t = 1u128 << j;
        let den = 2 * sigma2 * t * t;
        Ok(LazyDiscreteGaussian {
            sigma2,
            j,
            t,
            den,
            ratio: RatioBounds::new(den),
            inv_den: 1.0 / den as f64,
            slack: 0,
        })
    }

    /// A copy whose fraction thresholds are widened by `slack` units of 2^−64, so that the exact
    /// big-integer comparisons run often (the law is unchanged). For tests of that path.
    #[doc(hidden)]
    pub fn with_loose_bounds(&self, slack: u64) -> Self {
        LazyDiscreteGaussian {
            slack: u128::from(slack),
            ..self.clone()
        }
    }

    /// One draw, reading the bits it needs from `bits`.
    pub fn sample<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>) -> i128 {
        loop {
            let (negative, x) = self.laplace(bits);
            // X·t = X·2^j and σ² < 2^62: when X·t < 2^64, |X·t − σ²| < 2^64 and its square
            // fits 128 bits, computed in one 64 × 64-bit product.
            let accept = if x >> (64 - self.j) == 0 {
                let d = ((x as u64) << self.j).abs_diff(self.sigma2 as u64);
                let num = u128::from(d) * u128::from(d);
                // ⌊γ⌋ estimated from d²/den in `f64`, corrected exactly below.
                let estimate = (d as f64) * (d as f64) * self.inv_den;
                self.bernoulli_exp_gamma(bits, num, estimate)
            } else {
                match x
                    .checked_mul(self.t)
                    .map(|a| a.abs_diff(self.sigma2))
                    .and_then(|d| d.checked_mul(d))
                {
                    Some(num) => {
                        let estimate = num as f64 * self.inv_den;
                        self.bernoulli_exp_gamma(bits, num, estimate)
                    }
                    None => self.bernoulli_exp_gamma_big(bits, x),
                }
            };
            if accept {
                // x < 2^96: X = U + t·V with t < 2^32 and V < 2^64.
                let x = x as i128;
                return if negative { -x } else { x };
            }
        }
    }

    /// Fills `out` with independent draws from one bit stream over `rng`.
    pub fn fill<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [i128]) {
        let mut bits = BitStream::new(rng);
        for o in out {
            *o = self.sample(&mut bits);
        }
    }

    /// Step 1: (negative, X) with ±X discrete Laplace of scale t.
    #[inline]
    fn laplace<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>) -> (bool, u128) {
        loop {
            let u = take_bits(bits, self.j);
            let g = Threshold::fraction_of_t(u, self.j).loosened(self.slack);
            if !bernoulli_exp_fraction(bits, &g) {
                continue;
            }
            let mut v: u128 = 0;
            while bernoulli_exp_one(bits) {
                v += 1;
            }
            let x = u128::from(u) + self.t * v;
            let negative = take_bits(bits, 1) == 1;
            if negative && x == 0 {
                continue;
            }
            return (negative, x);
        }
    }

    /// Step 2 when γ = num/den with num = (X·t − σ²)² fits in 128 bits; `estimate` ≈ γ (only
    /// where the exact ⌊γ⌋ search starts).
    #[inline]
    fn bernoulli_exp_gamma<R: Rng + ?Sized>(
        &self,
        bits: &mut BitStream<'_, R>,
        num: u128,
        estimate: f64,
    ) -> bool {
        let den = self.den;
        // ⌊γ⌋ (usually 0 or 1) from the estimate, corrected exactly.
        let mut q = if num < den { 0 } else { estimate as u128 };
        while q > 0 && q.checked_mul(den).is_none_or(|p| p > num) {
            q -= 1;
        }
        while (q + 1).checked_mul(den).is_some_and(|p| p <= num) {
            q += 1;
        }
        let r = num - q * den;
        for _ in 0..q {
            if !bernoulli_exp_one(bits) {
                return false;
            }
        }
        bernoulli_exp_fraction(bits, &self.ratio.threshold(r).loosened(self.slack))
    }

    /// Step 2 in big integers, for X so far in the tail that (X·t − σ²)² overflows 128 bits
    /// (X > 2^64/t, probability < e^{−2^28} at σ = 2^30). Reads whole words from `bits`.
    #[cold]
    fn bernoulli_exp_gamma_big<R: Rng + ?Sized>(
        &self,
        bits: &mut BitStream<'_, R>,
        x: u128,
    ) -> bool {
        let a = BigUint::from(x) * self.t;
        let b = BigUint::from(self.sigma2);
        let diff = if a >= b { a - b } else { b - a };
        bernoulli_exp_nat(bits, &(&diff * &diff), &BigUint::from(self.den))
    }
}

/// Bernoulli(e^{−1}) (Algorithm 1 with γ = 1): A_1 = 1; A_K ~ Bernoulli(1/K) for K ≥ 2 until
/// the first 0; "K odd".
#[inline]
pub(super) fn bernoulli_exp_one<R: Rng + ?Sized>(bits: &mut BitStream<'_, R>) -> bool {
    let mut k = 2u64;
    while Threshold::one_over(k).decide(bits) {
        k += 1;
    }
    k % 2 == 1
}

/// Bernoulli(e^{−f}) for the fraction f ∈ [0, 1) of `g` (Algorithm 1, A_K as in the module doc).
#[inline]
pub(super) fn bernoulli_exp_fraction<R: Rng + ?Sized>(
    bits: &mut BitStream<'_, R>,
    g: &Threshold,
) -> bool {
    if !g.decide(bits) {
        return true;
    }
    let mut k = 2u64;
    while Threshold::one_over(k).decide(bits) && g.decide(bits) {
        k += 1;
    }
    k % 2 == 1
}

/// `out.len()` independent exact draws of N_ℤ(0, σ²) for an integer σ ≥ 1 (CKS20 Algorithm 3),
/// from one lazily read bit stream over `rng` ([`LazyDiscreteGaussian`]); σ beyond the
/// 128-bit range takes the big-integer path of [`discrete_gaussian_small`] draw by draw.
///
/// ```
/// use dpfair_privacy::Noise;
/// use dpfair_privacy::samplers::discrete_gaussian_fill;
///
/// let mut noise = Noise::os();
/// let mut draws = vec![0i128; 103];
/// discrete_gaussian_fill(&mut noise, 1 << 29, &mut draws)?;
/// assert!(draws.iter().all(|d| d.unsigned_abs() < 40 << 29));
/// # Ok::<(), dpfair_privacy::PrivacyError>(())
/// ```
pub fn discrete_gaussian_fill<R: Rng + ?Sized>(
    rng: &mut R,
    sigma: u64,
    out: &mut [i128],
) -> Result<()> {
    if sigma > FAST_SIGMA_MAX {
        for o in out {
            *o = discrete_gaussian_small(rng, sigma)?;
        }
        return Ok(());
    }
    LazyDiscreteGaussian::new(sigma)?.fill(rng, out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Noise;

    /// lo·den ≤ num·2^64 ≤ hi·den, checked in big integers.
    fn encloses(t: &Threshold) -> bool {
        let (num, den) = (BigUint::from(t.num) << 64u32, BigUint::from(t.den));
        BigUint::from(t.lo) * &den <= num && num <= BigUint::from(t.hi) * &den && t.hi <= TWO64
    }

    #[test]
    fn thresholds_enclose_their_rationals() {
        let mut rng = Noise::seeded(31);
        for k in (1..200u64).chain([1 << 20, (1 << 33) + 1, u64::MAX]) {
            let t = Threshold::one_over(k);
            assert!(encloses(&t), "1/{k}");
            assert_eq!(t.hi - t.lo, u128::from(!k.is_power_of_two()));
        }
        for sigma in [1u64, 5, 31, 32, 1000, (1 << 29) + 12_345, FAST_SIGMA_MAX] {
            let g = LazyDiscreteGaussian::new(sigma).unwrap();
            // t/σ ∈ (1/√2, √2].
            let (t, s) = (g.t as f64, sigma as f64);
            assert!(
                t * t > s * s / 2.0 && t * t <= 2.0 * s * s,
                "σ {sigma}: t {t}"
            );
            for _ in 0..200 {
                let u = u128::below_for_test(&mut rng, g.t) as u64;
                let t = Threshold::fraction_of_t(u, g.j);
                assert!(encloses(&t) && t.hi == t.lo, "σ {sigma}, U {u}");
            }
        }
        for _ in 0..2000 {
            let den = (u128::from(rng.next_u64()) << 63 | u128::from(rng.next_u64()))
                >> (rng.next_u32() % 60);
            let den = den.max(2);
            let num = u128::below_for_test(&mut rng, den);
            let t = Threshold::ratio(num, den);
            assert!(encloses(&t), "{num}/{den}");
            assert!(t.hi - t.lo < 1 << 17, "{num}/{den}: window {}", t.hi - t.lo);
        }
        for den in [1u128, 2, 3, 1 << 64, (1 << 64) + 1, u128::MAX] {
            for num in [0, 1, den / 3, den / 2, den - 1]
                .into_iter()
                .filter(|&n| n < den)
            {
                assert!(encloses(&Threshold::ratio(num, den)), "{num}/{den}");
            }
        }
        assert!(encloses(&Threshold::ratio(0, 7)));
    }

    /// Uniform below n for the tests (the samplers' own integer path).
    trait BelowForTest {
        fn below_for_test(rng: &mut Noise, n: u128) -> u128;
    }
    impl BelowForTest for u128 {
        fn below_for_test(rng: &mut Noise, n: u128) -> u128 {
            <u128 as super::super::uniform::Nat>::below(rng, &n)
        }
    }

    /// The bulk sampler reads far fewer bits than the word-at-a-time one (the point of it):
    /// at σ ≈ 2^29 fewer than 2 words per draw on average.
    #[test]
    fn draws_read_few_bits() {
        struct Counting(Noise, u64);
        impl rand_core::TryRng for Counting {
            type Error = core::convert::Infallible;
            fn try_next_u32(&mut self) -> core::result::Result<u32, Self::Error> {
                self.1 += 1;
                Ok(self.0.next_u32())
            }
            fn try_next_u64(&mut self) -> core::result::Result<u64, Self::Error> {
                self.1 += 1;
                Ok(self.0.next_u64())
            }
            fn try_fill_bytes(&mut self, d: &mut [u8]) -> core::result::Result<(), Self::Error> {
                self.0.fill_bytes(d);
                Ok(())
            }
        }
        let mut rng = Counting(Noise::seeded(3), 0);
        let mut out = vec![0i128; 10_000];
        discrete_gaussian_fill(&mut rng, (1 << 29) + 777, &mut out).unwrap();
        let per_draw = rng.1 as f64 / out.len() as f64;
        assert!(per_draw < 2.0, "{per_draw} words per draw");
        assert!(discrete_gaussian_fill(&mut rng, 0, &mut out).is_err());
    }
}
