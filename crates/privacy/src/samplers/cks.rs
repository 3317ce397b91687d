//! The three exact samplers of Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential
//! Privacy" (NeurIPS 2020), §5: Algorithm 1 (Bernoulli(exp(−γ))), Algorithm 2 (discrete Laplace)
//! and Algorithm 3 (discrete Gaussian). They use only uniform integers and exact rational
//! comparisons, so their output law is exactly the stated one for every rational parameter.
//!
//! Each algorithm is written once over [`Nat`]; the public functions run it on `u128` when the
//! parameters fit (the fast path: a few 64-bit draws per sample, no allocation) and on `BigUint`
//! otherwise.

use super::uniform::{Nat, below_u64, bit};
use crate::error::{Result, invalid};
use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, ToPrimitive, Zero};
use rand::Rng;

/// Bernoulli(exp(−1)): Algorithm 1 with γ = 1. Draw A_K ~ Bernoulli(1/K) for K = 1, 2, … until
/// the first A_K = 0 (A_1 = 1 always); return whether that K is odd. P(K odd) = Σ_{k odd}
/// (1/(k−1)! − 1/k!) = e^{−1}.
#[inline]
fn bernoulli_exp_one<R: Rng + ?Sized>(rng: &mut R) -> bool {
    let mut k: u64 = 2;
    while below_u64(rng, k) == 0 {
        k += 1;
    }
    k % 2 == 1
}

/// Bernoulli(exp(−r/d)) for 0 ≤ r < d: Algorithm 1 with γ = r/d ∈ [0, 1). A_K ~ Bernoulli(γ/K)
/// is drawn as Bernoulli(1/K) ∧ Bernoulli(r/d) (independent, product of the probabilities), which
/// keeps every integer below max(d, K) instead of d·K.
#[inline]
fn bernoulli_exp_fraction<N: Nat, R: Rng + ?Sized>(rng: &mut R, r: &N, d: &N) -> bool {
    if r.is_zero_() {
        return true;
    }
    let mut k: u64 = 1;
    loop {
        let a = (k == 1 || below_u64(rng, k) == 0) && N::below(rng, d) < *r;
        if !a {
            return k % 2 == 1;
        }
        k += 1;
    }
}

/// Bernoulli(exp(−n/d)) for n ≥ 0, d > 0 (Algorithm 1, γ > 1 case): ⌊γ⌋ independent
/// Bernoulli(exp(−1)) must all succeed, then Bernoulli(exp(−(γ − ⌊γ⌋))).
#[inline]
pub(crate) fn bernoulli_exp_nat<N: Nat, R: Rng + ?Sized>(rng: &mut R, n: &N, d: &N) -> bool {
    let (mut q, r) = n.div_rem_(d);
    while !q.is_zero_() {
        if !bernoulli_exp_one(rng) {
            return false;
        }
        q.dec();
    }
    bernoulli_exp_fraction(rng, &r, d)
}

/// Algorithm 2: discrete Laplace with scale t/s, P(Y = y) ∝ exp(−|y|·s/t). Returns
/// (negative, |Y|).
///
/// U ~ Uniform{0..t−1} accepted with probability exp(−U/t); V ~ Geometric(1 − e^{−1}) counts
/// successes of Bernoulli(exp(−1)); X = U + t·V is Geometric(1 − e^{−1/t}); |Y| = ⌊X/s⌋; a fair
/// sign, rejecting "−0" so that 0 is not counted twice.
#[inline]
fn discrete_laplace_nat<N: Nat, R: Rng + ?Sized>(rng: &mut R, t: &N, s: &N) -> (bool, N) {
    loop {
        let u = N::below(rng, t);
        if !bernoulli_exp_nat(rng, &u, t) {
            continue;
        }
        let mut v: u64 = 0;
        while bernoulli_exp_one(rng) {
            v += 1;
        }
        let x = t.mul_add_u64(v, &u);
        let y = x.div_rem_(s).0;
        let negative = bit(rng);
        if negative && y.is_zero_() {
            continue;
        }
        return (negative, y);
    }
}

/// Bernoulli(exp(−γ)) for a non-negative rational γ = `num`/`den` (CKS20 Algorithm 1).
pub fn bernoulli_exp<R: Rng + ?Sized>(rng: &mut R, num: &BigUint, den: &BigUint) -> Result<bool> {
    if den.is_zero() {
        return Err(invalid("den", "the denominator of γ must be positive"));
    }
    Ok(match (num.to_u128(), den.to_u128()) {
        (Some(n), Some(d)) => bernoulli_exp_nat(rng, &n, &d),
        _ => bernoulli_exp_nat(rng, num, den),
    })
}

/// Bernoulli(exp(−num/den)) on the fast path (CKS20 Algorithm 1).
pub fn bernoulli_exp_small<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> Result<bool> {
    if den == 0 {
        return Err(invalid("den", "the denominator of γ must be positive"));
    }
    Ok(bernoulli_exp_nat(rng, &num, &den))
}

/// Discrete Laplace on ℤ with scale `scale_num`/`scale_den` (CKS20 Algorithm 2):
/// P(Y = y) ∝ exp(−|y| / scale). Fast path, for every scale whose numerator and denominator fit
/// in 64 bits.
pub fn discrete_laplace_small<R: Rng + ?Sized>(
    rng: &mut R,
    scale_num: u64,
    scale_den: u64,
) -> Result<i128> {
    if scale_num == 0 || scale_den == 0 {
        return Err(invalid(
            "scale",
            format!("must be a positive rational, got {scale_num}/{scale_den}"),
        ));
    }
    // t < 2^64 and V < 2^64 keep X = U + t·V < 2^128.
    let (negative, y) = discrete_laplace_nat(rng, &(scale_num as u128), &(scale_den as u128));
    // |Y| ≤ X < 2^128; |Y| ≥ 2^127 needs V ≥ 2^63 (probability e^{−2^63}): refuse rather than wrap.
    let y = i128::try_from(y).map_err(|_| invalid("scale", "sample out of the i128 range"))?;
    Ok(if negative { -y } else { y })
}

/// Discrete Laplace on ℤ with any positive rational scale `scale_num`/`scale_den` (CKS20
/// Algorithm 2); takes the fast path when both fit in 64 bits.
pub fn discrete_laplace<R: Rng + ?Sized>(
    rng: &mut R,
    scale_num: &BigUint,
    scale_den: &BigUint,
) -> Result<BigInt> {
    if scale_num.is_zero() || scale_den.is_zero() {
        return Err(invalid("scale", "must be a positive rational"));
    }
    if let (Some(t), Some(s)) = (scale_num.to_u64(), scale_den.to_u64()) {
        return discrete_laplace_small(rng, t, s).map(BigInt::from);
    }
    let (negative, y) = discrete_laplace_nat(rng, scale_num, scale_den);
    Ok(BigInt::from_biguint(
        if negative { Sign::Minus } else { Sign::Plus },
        y,
    ))
}

/// Largest σ for which the integer-σ fast path keeps 2σ²t² (t = σ + 1) below 2^127.
pub(crate) const FAST_SIGMA_MAX: u64 = (1 << 31) - 2;

/// Discrete Gaussian N_ℤ(0, σ²) for an integer σ ≥ 1 (CKS20 Algorithm 3, fast path):
/// P(Y = y) ∝ exp(−y²/(2σ²)). This is what the mechanisms call: they put σ on their lattice as
/// an integer number of lattice steps.
pub fn discrete_gaussian_small<R: Rng + ?Sized>(rng: &mut R, sigma: u64) -> Result<i128> {
    if sigma == 0 {
        return Err(invalid("sigma", "must be ≥ 1 lattice step"));
    }
    if sigma > FAST_SIGMA_MAX {
        let s = BigUint::from(sigma);
        let y = discrete_gaussian(rng, &(&s * &s), &BigUint::one())?;
        return y
            .to_i128()
            .ok_or_else(|| invalid("sigma", "sample out of the i128 range"));
    }
    let sigma = sigma as u128;
    let sigma2 = sigma * sigma;
    let t = sigma + 1;
    // Acceptance exponent γ = (|Y| − σ²/t)² / (2σ²) = (|Y|·t − σ²)² / (2σ²t²).
    let den = 2 * sigma2 * t * t;
    loop {
        let (negative, y) = discrete_laplace_nat(rng, &t, &1u128);
        let accept = match y
            .checked_mul(t)
            .map(|a| a.abs_diff(sigma2))
            .and_then(|d| d.checked_mul(d))
        {
            Some(num) => bernoulli_exp_nat(rng, &num, &den),
            None => {
                // |Y| far in the tail: the same γ, computed exactly in big integers.
                let a = BigUint::from(y) * t;
                let b = BigUint::from(sigma2);
                let diff = if a >= b { a - b } else { b - a };
                bernoulli_exp_nat(rng, &(&diff * &diff), &BigUint::from(den))
            }
        };
        if accept {
            let y = i128::try_from(y).map_err(|_| invalid("sigma", "sample out of range"))?;
            return Ok(if negative { -y } else { y });
        }
    }
}

/// Discrete Gaussian N_ℤ(0, σ²) for any positive rational σ² = `sigma2_num`/`sigma2_den`
/// (CKS20 Algorithm 3): t = ⌊σ⌋ + 1, Y ~ discrete Laplace(t), accepted with probability
/// exp(−(|Y| − σ²/t)²/(2σ²)). Takes the integer-σ fast path when σ² is a small perfect square.
pub fn discrete_gaussian<R: Rng + ?Sized>(
    rng: &mut R,
    sigma2_num: &BigUint,
    sigma2_den: &BigUint,
) -> Result<BigInt> {
    if sigma2_num.is_zero() || sigma2_den.is_zero() {
        return Err(invalid("sigma2", "must be a positive rational"));
    }
    let (n, d) = (sigma2_num, sigma2_den);
    if d.is_one() {
        let s = n.sqrt();
        if &(&s * &s) == n
            && let Some(s) = s.to_u64()
            && s <= FAST_SIGMA_MAX
        {
            return discrete_gaussian_small(rng, s).map(BigInt::from);
        }
    }
    // ⌊√(n/d)⌋ = ⌊√⌊n/d⌋⌋.
    let t: BigUint = (n / d).sqrt() + 1u32;
    let one = BigUint::one();
    let den: BigUint = n * &t * &t * d * 2u32;
    let nt = n.clone();
    loop {
        let (negative, y) = discrete_laplace_nat(rng, &t, &one);
        // γ = (|Y|·t·d − n)² / (2·n·t²·d).
        let a = &y * &t * d;
        let diff = if a >= nt { a - &nt } else { &nt - a };
        if bernoulli_exp_nat(rng, &(&diff * &diff), &den) {
            return Ok(BigInt::from_biguint(
                if negative { Sign::Minus } else { Sign::Plus },
                y,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Noise;

    /// exp(−γ) estimated from 40,000 draws is within 5 binomial standard errors, on both paths.
    #[test]
    fn bernoulli_exp_matches_exp_on_both_paths() {
        let mut rng = Noise::seeded(11);
        let n = 40_000;
        for (num, den) in [(0u64, 1u64), (1, 3), (1, 1), (7, 2), (5, 1)] {
            let p = (-(num as f64) / den as f64).exp();
            let se = (p * (1.0 - p) / n as f64).sqrt().max(1e-9);
            let fast = (0..n)
                .filter(|_| bernoulli_exp_small(&mut rng, num as u128, den as u128).unwrap())
                .count() as f64
                / n as f64;
            // The same γ with numerator and denominator scaled by 2^100 runs on BigUint.
            let big_num = BigUint::from(num) << 100usize;
            let big_den = BigUint::from(den) << 100usize;
            let slow = (0..n)
                .filter(|_| bernoulli_exp(&mut rng, &big_num, &big_den).unwrap())
                .count() as f64
                / n as f64;
            assert!((fast - p).abs() <= 5.0 * se, "γ={num}/{den}: {fast} vs {p}");
            assert!((slow - p).abs() <= 5.0 * se, "γ={num}/{den}: {slow} vs {p}");
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        let mut rng = Noise::seeded(0);
        assert!(discrete_laplace_small(&mut rng, 0, 1).is_err());
        assert!(discrete_laplace_small(&mut rng, 1, 0).is_err());
        assert!(discrete_gaussian_small(&mut rng, 0).is_err());
        assert!(bernoulli_exp_small(&mut rng, 1, 0).is_err());
        let z = BigUint::zero();
        assert!(discrete_gaussian(&mut rng, &z, &BigUint::one()).is_err());
    }
}
