//! `exp` of many arguments at once, for the Gaussian kernel sums of the bandwidth
//! cross-validation ([`crate::plugin::kernel`]): after the vectorised sines and cosines, libm's
//! scalar `exp` was ≈ 21% of the `--full` fdp-fair reproduction's CPU time (BENCHMARKS.md,
//! "Reproduction times"). This is fdlibm's algorithm (`__ieee754_exp`: reduction
//! `x = k·ln 2 + r` with `ln 2` in two parts, the rational approximation of `exp(r)` on
//! `|r| ≤ ln 2 / 2`, then the scaling by `2^k` built from its bits) written branch-free over a
//! slice, so that the compiler vectorises it. Each value is within 1 ulp of the true one for
//! `x ∈ FAST_RANGE`; other arguments (very large or small, infinite or NaN) fall back to
//! `f64::exp`. Checked against `f64::exp` in the tests below (at most 2 ulp apart, both within
//! 1 ulp).

// The constants are written with the digits their derivation prints (fdlibm's); each literal
// rounds to the intended f64, so clippy's precision lint does not apply.
#![allow(clippy::excessive_precision)]

/// Arguments in this range take the fast path: `2^k` and the result stay normal numbers
/// (`exp(−708) ≈ 3.3·10^−308 > f64::MIN_POSITIVE`, `exp(709) < f64::MAX`).
pub const FAST_RANGE: std::ops::RangeInclusive<f64> = -708.0..=709.0;

// ln 2 in two parts (fdlibm's `ln2HI[0]`, `ln2LO[0]`): `k·LN2_HI` is exact for |k| < 2^11.
const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-01;
const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
const INV_LN2: f64 = std::f64::consts::LOG2_E;
/// `1.5·2^52`: adding it rounds to the nearest integer, which then sits in the low mantissa bits.
const ROUND: f64 = 6_755_399_441_055_744.0;
// fdlibm's `P1`…`P5`: the minimax polynomial of `r·(e^r + 1)/(e^r − 1)` on `|r| ≤ ln 2 / 2`.
const P1: f64 = 1.666_666_666_666_660_190_37e-01;
const P2: f64 = -2.777_777_777_701_559_338_42e-03;
const P3: f64 = 6.613_756_321_437_934_361_17e-05;
const P4: f64 = -1.653_390_220_546_525_153_90e-06;
const P5: f64 = 4.138_136_797_057_238_460_39e-08;

/// `exp(x)` for `x ∈ FAST_RANGE` (module docs).
#[inline(always)]
fn exp_reduced(x: f64) -> f64 {
    // k = round(x / ln 2), as a float and (from the rounded sum's bits) as an integer.
    let t = x * INV_LN2 + ROUND;
    let k = t - ROUND;
    let ki = t.to_bits() as i64 - ROUND.to_bits() as i64;
    // r = x − k·ln 2 = hi − lo.
    let hi = x - k * LN2_HI;
    let lo = k * LN2_LO;
    let r = hi - lo;
    let z = r * r;
    let c = r - z * (P1 + z * (P2 + z * (P3 + z * (P4 + z * P5))));
    let y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    // 2^k for −1021 ≤ k ≤ 1023, from its exponent bits.
    y * f64::from_bits(((ki + 1023) as u64) << 52)
}

/// `exp(x)`, the same value [`exp_in_place`] gives: the fast path in [`FAST_RANGE`], `f64::exp`
/// outside it.
pub fn exp(x: f64) -> f64 {
    if FAST_RANGE.contains(&x) {
        exp_reduced(x)
    } else {
        x.exp()
    }
}

/// `x[i] = exp(x[i])` for every value, each the value [`exp`] gives: the branch-free reduction
/// and polynomial over the whole slice when every value is in [`FAST_RANGE`] (checked without
/// branches, so that the check vectorises too), one [`exp`] per value otherwise.
pub fn exp_in_place(x: &mut [f64]) {
    if x.iter().fold(true, |all, v| all & FAST_RANGE.contains(v)) {
        x.iter_mut().for_each(|v| *v = exp_reduced(*v));
    } else {
        x.iter_mut().for_each(|v| *v = exp(*v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Distance in units in the last place of `b` (finite, normal values).
    fn ulps(a: f64, b: f64) -> f64 {
        let ulp = f64::from_bits(b.abs().to_bits() + 1) - b.abs();
        ((a - b) / ulp).abs()
    }

    /// Both implementations are within 1 ulp of the true value (fdlibm's `exp`; glibc's), so
    /// they differ by at most 2 ulp. Uniform arguments at several scales over the fast range,
    /// the reduction's boundaries (half-integer multiples of ln 2) and the range's ends.
    #[test]
    fn agrees_with_libm_within_two_ulp() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let mut x: Vec<f64> = Vec::new();
        for scale in [1e-9, 0.3, 1.0, 10.0, 100.0, 708.0] {
            x.extend((0..20_000).map(|_| rng.random_range(-scale..scale)));
        }
        let ln2 = std::f64::consts::LN_2;
        x.extend((-2040..2040).map(|k| k as f64 * 0.5 * ln2 * 0.5));
        x.extend([0.0, -0.0, 1e-300, -708.0, 709.0]);
        let mut got = x.clone();
        exp_in_place(&mut got);
        for (&v, &g) in x.iter().zip(&got) {
            let want = v.exp();
            assert!(ulps(g, want) <= 2.0, "exp({v}) = {g}, libm {want}");
            assert_eq!(g.to_bits(), exp(v).to_bits(), "one value per argument");
        }
    }

    #[test]
    fn out_of_range_arguments_fall_back_to_libm_alone() {
        let x = [
            -0.5,
            -745.0,
            -1e4,
            710.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut got = x.to_vec();
        exp_in_place(&mut got);
        for (&v, &g) in x.iter().zip(&got) {
            assert_eq!(g.to_bits(), exp(v).to_bits(), "exp({v})");
            if !FAST_RANGE.contains(&v) {
                assert_eq!(g.to_bits(), v.exp().to_bits(), "exp({v})");
            }
        }
        // A mixed slice leaves the in-range value on the fast path: one value per argument,
        // whatever its neighbours.
        assert_eq!(got[0].to_bits(), exp_reduced(-0.5).to_bits());
    }
}
