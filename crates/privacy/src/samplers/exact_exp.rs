//! Exact decisions "U < e^{−a}·r" for a uniform real U ∈ [0, 1) and rationals a ≥ 0, r > 0,
//! from rigorous interval bounds on e^{−a} at growing precision.
//!
//! [`exp_neg_bounds`] brackets e^{−a} in fixed point without floating point: a = n + f with
//! n = ⌊a⌋, e^{−f} from its Taylor series (for 0 ≤ x ≤ 1 the terms x^k/k! do not increase, so
//! the partial sums of the alternating series lie below e^{−x} after an odd term and above it
//! after an even one), e^{−n} as a power of the bracket of e^{−1}; every term and product is
//! rounded down in the lower chain and up in the upper one, so the brackets always hold.
//! [`ExpConstant`] keeps 64-bit bounds of one constant p = e^{−a}·r ≤ 1 and decides "U < p" from
//! the bits of U that settle it; only when U's first 64 bits fall between the bounds (probability
//! hi − lo ≈ 2^−60) does it reveal more bits of U and recompute the bracket at higher precision
//! ([`uniform_below_exp`]) until U's interval lies on one side of it (U = p has probability 0).
//! The outcome is exactly "U < p" either way.

use super::bits::{BitStream, deciding_bits};
use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};
use rand::Rng;

const TWO64: u128 = 1 << 64;

/// Lower and upper bounds on e^{−x}·2^w for x = X/2^w ∈ [0, 1] (Taylor series, module doc).
fn exp_neg_unit(x: &BigUint, w: u64) -> (BigUint, BigUint) {
    let one = BigUint::from(1u32) << w;
    debug_assert!(x <= &one);
    // Terms t_k·2^w, rounded down (`lo`) and up (`hi`); sums of even and odd terms for each.
    let (mut lo, mut hi) = (one.clone(), one.clone());
    let (mut even_lo, mut even_hi) = (one.clone(), one);
    let (mut odd_lo, mut odd_hi) = (BigUint::zero(), BigUint::zero());
    // The partial sums through term k, as (sum of even terms, sum of odd terms) per chain: the
    // last odd k gives the lower bound, the last even k the upper.
    let mut lower = None;
    let mut upper = None;
    let mut k = 0u64;
    loop {
        k += 1;
        // ⌊⌊v/2^w⌋/k⌋ = ⌊v/(k·2^w)⌋ and likewise for ⌈·⌉ (nested floors and ceilings of
        // positive integers): a shift and a division by a small integer.
        lo = ((&lo * x) >> w) / k;
        let hi_shifted = ceil_shift(&(&hi * x), w);
        hi = (&hi_shifted + (k - 1)) / k;
        if k % 2 == 1 {
            odd_lo += &lo;
            odd_hi += &hi;
            // S_k ≥ even_lo − odd_hi as a lower bound of S_k (odd k): S_k ≤ e^{−x}.
            lower = Some(if even_lo > odd_hi {
                &even_lo - &odd_hi
            } else {
                BigUint::zero()
            });
        } else {
            even_lo += &lo;
            even_hi += &hi;
            // S_k ≤ even_hi − odd_lo (even k): S_k ≥ e^{−x}.
            upper = Some(&even_hi - &odd_lo);
        }
        // Once a term's upper bound is at most one unit, both brackets are within ≈ k units.
        if k >= 2
            && hi <= BigUint::from(1u32)
            && let (Some(l), Some(u)) = (lower.take(), upper.take())
        {
            return (l, u);
        }
    }
}

/// Bounds (lo, hi) with lo ≤ e^{−num/den}·2^prec ≤ hi, for den > 0; hi − lo shrinks as prec
/// grows (a few units for a ≤ 2^20).
pub(super) fn exp_neg_bounds(num: &BigUint, den: &BigUint, prec: u64) -> (BigUint, BigUint) {
    let n = num / den;
    let Some(n) = n.to_u64().filter(|&n| n < 1 << 40) else {
        // e^{−a} < e^{−2^40}: below one unit at any precision a caller can reach.
        return (BigUint::zero(), BigUint::from(1u32));
    };
    let guard = 32 + 2 * u64::from(64 - n.leading_zeros());
    let w = prec + guard;
    let rem = num - BigUint::from(n) * den;
    // f = rem/den ∈ [x_lo, x_hi]·2^−w; e^{−f} is decreasing in f.
    let scaled = rem << w;
    let x_lo = &scaled / den;
    let x_hi = if (&x_lo * den) == scaled {
        x_lo.clone()
    } else {
        &x_lo + 1u32
    };
    let (f_lo, _) = exp_neg_unit(&x_hi, w);
    let (_, f_hi) = exp_neg_unit(&x_lo, w);
    let (mut lo, mut hi) = (f_lo, f_hi);
    if n > 0 {
        let (e_lo, e_hi) = exp_neg_unit(&(BigUint::from(1u32) << w), w);
        let (p_lo, p_hi) = power_bounds(&e_lo, &e_hi, n, w);
        lo = (&lo * &p_lo) >> w;
        hi = ceil_shift(&(&hi * &p_hi), w);
    }
    (lo >> guard, ceil_shift(&hi, guard))
}

/// ⌈v/2^s⌉.
fn ceil_shift(v: &BigUint, s: u64) -> BigUint {
    let q = v >> s;
    if (&q << s) == *v { q } else { q + 1u32 }
}

/// Bounds on (e·2^−w)^n·2^w from bounds lo ≤ e ≤ hi (square and multiply, rounding outward).
fn power_bounds(lo: &BigUint, hi: &BigUint, mut n: u64, w: u64) -> (BigUint, BigUint) {
    let one = BigUint::from(1u32) << w;
    let (mut r_lo, mut r_hi) = (one.clone(), one);
    let (mut b_lo, mut b_hi) = (lo.clone(), hi.clone());
    while n > 0 {
        if n & 1 == 1 {
            r_lo = (&r_lo * &b_lo) >> w;
            r_hi = ceil_shift(&(&r_hi * &b_hi), w);
        }
        n >>= 1;
        if n > 0 {
            b_lo = (&b_lo * &b_lo) >> w;
            b_hi = ceil_shift(&(&b_hi * &b_hi), w);
        }
    }
    (r_lo, r_hi)
}

/// Whether U < e^{−a}·r exactly, for a = a_num/a_den and r = r_num/r_den, where U's first 64
/// bits are `w` (already consumed) and further bits come from `bits` (whole words).
pub(super) fn uniform_below_exp<R: Rng + ?Sized>(
    bits: &mut BitStream<'_, R>,
    w: u64,
    a: (&BigUint, &BigUint),
    r: (&BigUint, &BigUint),
) -> bool {
    let mut prefix = BigUint::from(w);
    let mut revealed = 64u64;
    loop {
        // U ∈ [prefix, prefix + 1)·2^−revealed and p ∈ [lo, hi]·r·2^−prec.
        let prec = revealed + 32;
        let (lo, hi) = exp_neg_bounds(a.0, a.1, prec);
        let u_side = r.1 << prec;
        // (prefix + 1)·2^−revealed ≤ lo·r·2^−prec: every U with this prefix is below p.
        if (&prefix + 1u32) * &u_side <= (lo * r.0) << revealed {
            return true;
        }
        // prefix·2^−revealed ≥ hi·r·2^−prec: every such U is at or above p.
        if &prefix * &u_side >= (hi * r.0) << revealed {
            return false;
        }
        prefix = (prefix << 64u32) + BigUint::from(bits.take64());
        revealed += 64;
    }
}

/// Whether U < p for a fresh uniform U read from `bits`, given lo ≤ p·2^64 ≤ hi ≤ 2^64: decided
/// from U's first 64 bits, consuming only the bits up to the deciding one, unless those bits
/// fall in [lo, hi); then all 64 are consumed and `exact(bits, w)` compares the rest of U (whose
/// first 64 bits are w) with p itself.
#[inline]
pub(super) fn decide_with_bounds<R: Rng + ?Sized>(
    bits: &mut BitStream<'_, R>,
    lo: u128,
    hi: u128,
    exact: impl FnOnce(&mut BitStream<'_, R>, u64) -> bool,
) -> bool {
    let w = bits.peek64();
    let wide = u128::from(w);
    if wide < lo {
        // Every U with the deciding prefix is < lo·2^−64 ≤ p.
        bits.consume(deciding_bits(w, (lo - 1) as u64));
        true
    } else if wide >= hi {
        if hi == 0 {
            return false; // p = 0
        }
        // Every U with the deciding prefix is ≥ hi·2^−64 ≥ p.
        bits.consume(deciding_bits(w, (hi - 1) as u64));
        false
    } else {
        bits.consume(64);
        exact(bits, w)
    }
}

/// A Bernoulli(p) for a fixed p = e^{−a}·r ≤ 1 (a, r rationals that fit 128 bits), with
/// precomputed 64-bit bounds (module doc).
#[derive(Clone, Debug)]
pub(super) struct ExpConstant {
    lo: u128,
    hi: u128,
    a: (u128, u128),
    r: (u128, u128),
}

impl ExpConstant {
    /// The constant e^{−a_num/a_den}·r_num/r_den, which the caller guarantees is ≤ 1.
    #[cfg(test)]
    pub(super) fn new(a: (u128, u128), r: (u128, u128)) -> Self {
        let (elo, ehi) = exp_neg_bounds(&BigUint::from(a.0), &BigUint::from(a.1), Self::PREC);
        Self::from_bracket(a, r, elo, ehi)
    }

    /// The precision of the bracket [`ExpConstant::from_bracket`] takes.
    pub(super) const PREC: u64 = 128;

    /// [`ExpConstant::new`] from a bracket elo ≤ e^{−a}·2^PREC ≤ ehi already computed.
    pub(super) fn from_bracket(
        a: (u128, u128),
        r: (u128, u128),
        elo: BigUint,
        ehi: BigUint,
    ) -> Self {
        // p·2^64 ∈ [elo·r, ehi·r]·2^(64 − PREC).
        let den = BigUint::from(r.1) << (Self::PREC - 64);
        let lo = (elo * r.0) / &den;
        let hi = (ehi * r.0 + &den - 1u32) / &den;
        ExpConstant {
            lo: lo.to_u128().unwrap_or(TWO64).min(TWO64),
            // p ≤ 1, so 2^64 is an upper bound too.
            hi: hi.to_u128().unwrap_or(TWO64).min(TWO64),
            a,
            r,
        }
    }

    /// The same p with its 64-bit bounds widened by `slack` (still valid bounds): the exact
    /// path runs far more often. For tests of that path.
    pub(super) fn loosened(mut self, slack: u128) -> Self {
        self.lo = self.lo.saturating_sub(slack);
        self.hi = (self.hi + slack).min(TWO64);
        self
    }

    /// An upper bound on p·2^64.
    #[cfg(test)]
    pub(super) fn upper(&self) -> u128 {
        self.hi
    }

    /// Whether U < p for a fresh uniform U read from `bits`.
    #[inline]
    pub(super) fn decide<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>) -> bool {
        decide_with_bounds(bits, self.lo, self.hi, |bits, w| {
            self.decide_exactly(bits, w)
        })
    }

    #[cold]
    fn decide_exactly<R: Rng + ?Sized>(&self, bits: &mut BitStream<'_, R>, w: u64) -> bool {
        let big = |v: u128| BigUint::from(v);
        uniform_below_exp(
            bits,
            w,
            (&big(self.a.0), &big(self.a.1)),
            (&big(self.r.0), &big(self.r.1)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Noise;

    fn to_f64(v: &BigUint, prec: u64) -> f64 {
        v.to_f64().unwrap() / 2f64.powi(prec as i32)
    }

    /// The brackets hold and tighten: checked against `f64::exp` where its rounding (< 1e-15
    /// relative) is far inside the bracket's width at 40 bits, and against the same bracket at
    /// 4× the precision (which must nest inside) everywhere.
    #[test]
    fn brackets_hold_and_nest() {
        let cases: [(u64, u64); 9] = [
            (0, 1),
            (1, 1),
            (1, 3),
            (7, 2),
            (37, 5),
            (999, 1000),
            (1_000_001, 1000),
            (5, (1 << 59) + 3),
            (u64::MAX, 1 << 40),
        ];
        for (num, den) in cases {
            let (n, d) = (BigUint::from(num), BigUint::from(den));
            let (lo, hi) = exp_neg_bounds(&n, &d, 40);
            assert!(lo <= hi && &hi - &lo <= BigUint::from(4u32), "{num}/{den}");
            let e = (-(num as f64) / den as f64).exp();
            if e > 1e-9 {
                let (l, h) = (to_f64(&lo, 40), to_f64(&hi, 40));
                assert!(
                    l <= e * (1.0 + 1e-14) && e * (1.0 - 1e-14) <= h,
                    "{num}/{den}: {l} ≤ {e} ≤ {h}"
                );
            }
            let (lo4, hi4) = exp_neg_bounds(&n, &d, 160);
            assert!(lo4 <= hi4);
            assert!(lo.clone() << 120u32 <= hi4 && lo4 <= hi.clone() << 120u32);
        }
        // Huge exponents: e^{-a} is below one unit.
        let (lo, hi) = exp_neg_bounds(&(BigUint::from(1u32) << 100u32), &BigUint::from(1u32), 64);
        assert!(lo.is_zero() && hi == BigUint::from(1u32));
    }

    #[test]
    fn constants_bound_their_value() {
        for (a, r) in [
            ((0u128, 1u128), (1u128, 1u128)),
            ((1, 2), (3, 2)),
            ((1 << 60, 1 << 62), (5, 7)),
            ((33, 1), (1 << 40, 1)),
        ] {
            let c = ExpConstant::new(a, r);
            let p = (-(a.0 as f64) / a.1 as f64).exp() * r.0 as f64 / r.1 as f64;
            let scale = 2f64.powi(64);
            assert!(c.lo <= c.hi && c.hi <= TWO64);
            assert!(
                (c.lo as f64) <= p * scale * (1.0 + 1e-12) + 1.0,
                "{a:?} {r:?}"
            );
            assert!(
                (c.hi as f64) >= p * scale * (1.0 - 1e-12) - 1.0,
                "{a:?} {r:?}"
            );
        }
    }

    /// The exact path alone (bounds loosened to [0, 2^64], so every decision takes it) gives
    /// Bernoulli(p): 20,000 trials at p = e^{−1/2}·(3/4), within 5 binomial standard errors
    /// (a correct sampler fails with probability < 1e-6).
    #[test]
    fn exact_path_has_the_right_frequency() {
        let c = ExpConstant::new((1, 2), (3, 4)).loosened(TWO64);
        let p = (-0.5f64).exp() * 0.75;
        let mut noise = Noise::seeded(77);
        let mut bits = BitStream::new(&mut noise);
        let n = 20_000;
        let k = (0..n).filter(|_| c.decide(&mut bits)).count() as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!(
            (k / n as f64 - p).abs() < 5.0 * se,
            "{} vs {p}",
            k / n as f64
        );
    }
}
