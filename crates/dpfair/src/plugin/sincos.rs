//! Sines and cosines of many arguments at once, for the random-feature map
//! ([`crate::plugin::basis`]): the map's cost is almost all `sin_cos` (the `--full` fdp-fair
//! reproduction spent 44% of its CPU time in libm's scalar `sincos`; BENCHMARKS.md,
//! "Reproduction times"). This is fdlibm's algorithm (Cody–Waite reduction by `π/2` in three
//! parts, as `__rem_pio2`'s medium case, then the `__kernel_sin` / `__kernel_cos` minimax
//! polynomials on `[−π/4, π/4]`) written branch-free over a slice, so that the compiler
//! vectorises it. Each value is within 1 ulp of the true one for `|x| ≤ 2^19·π`
//! ([`FAST_RANGE`]); other arguments (large, infinite or NaN) fall back to `f64::sin_cos`.
//! Checked against `f64::sin_cos` in the tests below (at most 2 ulp apart, both within 1 ulp).

// The constants are written with the digits their derivation prints (fdlibm's); each literal
// rounds to the intended f64, so clippy's precision and approximate-constant lints do not apply.
#![allow(clippy::excessive_precision, clippy::approx_constant)]

/// Arguments up to this magnitude (`< 2^10·π/2`, so `|k| ≤ 2^10` quarter turns) take the fast
/// path. The random features' arguments `ω·x/h` stay far below it for features on `[0, 1]` and
/// the bandwidths the public rules choose.
pub const FAST_RANGE: f64 = 1_600.0;

// π/2 in three parts of 33 bits (fdlibm's `pio2_1`, `pio2_2`, `pio2_3`) and the tail.
const PIO2_1: f64 = 1.570_796_326_734_125_614_17e+00;
const PIO2_2: f64 = 6.077_100_506_303_965_976_60e-11;
const PIO2_3: f64 = 2.022_266_248_711_166_455_80e-21;
const PIO2_3T: f64 = 8.478_427_660_368_899_569_97e-32;
const INV_PIO2: f64 = 6.366_197_723_675_813_824_33e-01;
/// `1.5·2^52`: adding it rounds to the nearest integer, which then sits in the low mantissa bits.
const ROUND: f64 = 6_755_399_441_055_744.0;

// fdlibm's `__kernel_sin` coefficients.
const S1: f64 = -1.666_666_666_666_663_243_48e-01;
const S2: f64 = 8.333_333_333_322_489_461_24e-03;
const S3: f64 = -1.984_126_982_985_794_931_34e-04;
const S4: f64 = 2.755_731_370_707_006_767_89e-06;
const S5: f64 = -2.505_076_025_340_686_341_95e-08;
const S6: f64 = 1.589_690_995_211_550_102_21e-10;
// fdlibm's `__kernel_cos` coefficients.
const C1: f64 = 4.166_666_666_666_660_190_37e-02;
const C2: f64 = -1.388_888_888_887_410_957_49e-03;
const C3: f64 = 2.480_158_728_947_672_941_78e-05;
const C4: f64 = -2.755_731_435_139_066_330_35e-07;
const C5: f64 = 2.087_572_321_298_174_827_90e-09;
const C6: f64 = -1.135_964_755_778_819_482_65e-11;

/// `sin(r)`, `cos(r)` for `r = hi + lo`, `|r| ≤ π/4` (fdlibm's kernels with the tail `lo`).
#[inline(always)]
fn kernel(hi: f64, lo: f64) -> (f64, f64) {
    let z = hi * hi;
    let w = z * z;
    // __kernel_sin(x, y, 1)
    let r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    let v = z * hi;
    let sin = hi - ((z * (0.5 * lo - v * r) - lo) - v * S1);
    // __kernel_cos(x, y)
    let r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    let hz = 0.5 * z;
    let one_minus = 1.0 - hz;
    let cos = one_minus + (((1.0 - one_minus) - hz) + (z * r - hi * lo));
    (sin, cos)
}

/// `(sin x, cos x)` for `|x| ≤ FAST_RANGE` (module docs).
#[inline(always)]
fn sin_cos_reduced(x: f64) -> (f64, f64) {
    let t = x * INV_PIO2 + ROUND;
    let quadrant = t.to_bits() & 3;
    let k = t - ROUND;
    // r = x − kπ/2 as hi + lo. `k·PIO2_1` and `k·PIO2_2` are exact (33-bit constants,
    // |k| ≤ 2^10) and `x − k·PIO2_1` is exact (Sterbenz); the second subtraction keeps its
    // rounding error (TwoSum), the rest of π/2 (`k·(PIO2_3 + PIO2_3T)`, below 2^10·2.1e−21)
    // goes into the tail.
    let r0 = x - k * PIO2_1;
    let w = k * PIO2_2;
    let r1 = r0 - w;
    let b = r1 - r0;
    let err = (r0 - (r1 - b)) + (-w - b);
    let tail = err - (k * PIO2_3 + k * PIO2_3T);
    let hi = r1 + tail;
    let lo = tail - (hi - r1);
    let (s, c) = kernel(hi, lo);
    // Quadrant q: (sin, cos) = (s, c), (c, −s), (−s, −c), (−c, s).
    let swap = quadrant & 1 == 1;
    let (s, c) = if swap { (c, s) } else { (s, c) };
    let sin_sign = (quadrant & 2) << 62;
    let cos_sign = ((quadrant + 1) & 2) << 62;
    (
        f64::from_bits(s.to_bits() ^ sin_sign),
        f64::from_bits(c.to_bits() ^ cos_sign),
    )
}

/// `cos[i], sin[i] = cos(x_i), sin(x_i)` for the arguments `x_i` that `cos` holds on entry:
/// the branch-free reduction and kernels when every `|x_i| ≤ FAST_RANGE`, `f64::sin_cos`
/// otherwise.
pub fn sin_cos_in_place(cos: &mut [f64], sin: &mut [f64]) {
    assert_eq!(cos.len(), sin.len(), "one sine per cosine");
    let fast = cos
        .iter()
        .fold(true, |all, v| all & (v.abs() <= FAST_RANGE));
    for (c, s) in cos.iter_mut().zip(sin.iter_mut()) {
        let (sv, cv) = if fast {
            sin_cos_reduced(*c)
        } else {
            c.sin_cos()
        };
        *s = sv;
        *c = cv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Distance in units in the last place of `b` (finite values).
    fn ulps(a: f64, b: f64) -> f64 {
        let ulp = f64::from_bits(b.abs().to_bits() + 1) - b.abs();
        ((a - b) / ulp.max(f64::MIN_POSITIVE)).abs()
    }

    /// Both implementations are within 1 ulp of the true value (fdlibm's kernels; libm's
    /// `sincos`), so they differ by at most 2 ulp of the result, or by 2^-53 in absolute terms
    /// near a zero of the function (where the ulp of the result is tiny but the reduction's
    /// rounding is relative to 1). Uniform arguments at several scales up to the fast range,
    /// and the quadrant boundaries.
    #[test]
    fn agrees_with_libm_within_two_ulp() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let mut x: Vec<f64> = Vec::new();
        for scale in [1e-8, 0.5, 1.0, 4.0, 100.0, FAST_RANGE] {
            x.extend((0..20_000).map(|_| rng.random_range(-scale..scale)));
        }
        x.extend((-1000..1000).map(|k| k as f64 * std::f64::consts::FRAC_PI_2));
        x.extend([0.0, -0.0, 1e-300, FAST_RANGE, -FAST_RANGE]);
        let (mut c, mut s) = (x.clone(), vec![0.0; x.len()]);
        sin_cos_in_place(&mut c, &mut s);
        for (i, &v) in x.iter().enumerate() {
            let (ws, wc) = v.sin_cos();
            for (got, want, what) in [(s[i], ws, "sin"), (c[i], wc, "cos")] {
                let ok = ulps(got, want) <= 2.0 || (got - want).abs() <= f64::EPSILON / 2.0;
                assert!(ok, "{what}({v}) = {got}, libm {want}");
            }
            // The unit circle, to rounding: the feature map's norm rests on it.
            assert!(
                (c[i] * c[i] + s[i] * s[i] - 1.0).abs() <= 4.0 * f64::EPSILON,
                "{v}"
            );
        }
    }

    #[test]
    fn out_of_range_arguments_fall_back_to_libm() {
        let x = [0.3, 1e4, -3e12, f64::INFINITY, f64::NAN];
        let (mut c, mut s) = (x.to_vec(), vec![0.0; 5]);
        sin_cos_in_place(&mut c, &mut s);
        for i in 0..5 {
            let (ws, wc) = x[i].sin_cos();
            assert_eq!(
                (s[i].to_bits(), c[i].to_bits()),
                (ws.to_bits(), wc.to_bits())
            );
        }
    }
}
