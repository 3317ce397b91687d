//! Releasing real numbers through integer noise on a 2^k lattice (the approach of OpenDP and
//! Google's differential-privacy library): the query value is rounded to the nearest multiple of
//! the spacing g = 2^k, integer noise is added in units of g, and the result is scaled back by g.
//! Every released value is a lattice point, so its low-order bits carry no information about the
//! input (the floating-point attack of Mironov 2012 has nothing to read).
//!
//! Rounding moves each coordinate by at most g/2, so two neighbouring inputs round to points at
//! most Δ + g·d apart in ℓ1 and Δ + g·√d apart in ℓ2 (d coordinates). Mechanisms calibrate their
//! noise to that *effective sensitivity* ([`Lattice::effective_sensitivity`]).

use crate::error::{Result, invalid};
use num_bigint::BigUint;
use num_traits::One;

/// Relative precision of the lattice against the sensitivity: the rounding adds at most
/// 2^-20 ≈ 1e-6 of Δ to the sensitivity.
const SENSITIVITY_BITS: i32 = 20;
/// Cap on the noise scale in lattice steps. ℓ2 (discrete Gaussian): ≤ 2^30 steps keeps σ on the
/// `u128` fast path; it binds only when σ/Δ · √d > 2^9, and then the extra sensitivity is
/// (σ/Δ)·√d·2^-29 of Δ. ℓ1 (discrete Laplace, whose fast path takes scales up to 2^64): 2^53 steps.
fn scale_bits(norm: Norm) -> i32 {
    match norm {
        Norm::L1 => 52,
        Norm::L2 => 29,
    }
}

/// Which norm the sensitivity is measured in, and so how rounding adds to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    L1,
    L2,
}

impl Norm {
    /// The ledger's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Norm::L1 => "l1",
            Norm::L2 => "l2",
        }
    }

    /// The norm of a vector of `dim` entries of size 1: d or √d.
    fn dim_factor(self, dim: usize) -> f64 {
        match self {
            Norm::L1 => dim as f64,
            Norm::L2 => (dim as f64).sqrt(),
        }
    }
}

/// A lattice g·ℤ with g = 2^exponent, chosen for one release, with the sensitivity its rounding
/// adds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lattice {
    exponent: i32,
    /// An upper bound on what rounding adds to the sensitivity (≥ g·d or g·√d).
    extra_sensitivity: f64,
}

impl Lattice {
    /// The lattice a mechanism uses for a release of `dim` coordinates with sensitivity
    /// `sensitivity` (in `norm`) and a nominal noise scale `scale`. With
    /// B = max(Δ·2^-20/d_f, scale·2^-c) (c = 29 for ℓ2, 52 for ℓ1) (d_f = d or √d), the spacing is the largest power of
    /// two g ≤ B and the sensitivity grows by B·d_f ≥ g·d_f. Using B rather than g keeps
    /// costs continuous and monotone in the scale and the sensitivity (no jumps when g changes).
    /// Depends on public parameters only.
    pub fn for_release(sensitivity: f64, norm: Norm, dim: usize, scale: f64) -> Result<Self> {
        if !(sensitivity.is_finite() && sensitivity > 0.0) {
            return Err(invalid(
                "sensitivity",
                format!("must be finite and > 0, got {sensitivity}"),
            ));
        }
        if !(scale.is_finite() && scale > 0.0) {
            return Err(invalid(
                "scale",
                format!("must be finite and > 0, got {scale}"),
            ));
        }
        let d_f = norm.dim_factor(dim.max(1));
        let bound = (sensitivity * 2f64.powi(-SENSITIVITY_BITS) / d_f)
            .max(scale * 2f64.powi(-scale_bits(norm)));
        let exponent = bound.log2().floor() as i32;
        if !(-1000..=1000).contains(&exponent) {
            return Err(invalid(
                "scale",
                format!("lattice 2^{exponent} is outside 2^-1000..2^1000"),
            ));
        }
        Ok(Lattice {
            exponent,
            extra_sensitivity: (bound * d_f).next_up(),
        })
    }

    pub fn exponent(&self) -> i32 {
        self.exponent
    }

    /// The spacing g = 2^exponent.
    pub fn spacing(&self) -> f64 {
        pow2(self.exponent)
    }

    /// Δ + B·d_f ≥ Δ + g·d_f, rounded up: the sensitivity after rounding to the lattice.
    pub fn effective_sensitivity(&self, sensitivity: f64) -> f64 {
        (sensitivity + self.extra_sensitivity).next_up()
    }

    /// The nearest lattice point to `x`, in lattice steps. `name` names the input in errors.
    pub fn round(&self, name: &'static str, x: f64) -> Result<i128> {
        if !x.is_finite() {
            return Err(invalid(name, format!("must be finite, got {x}")));
        }
        // Multiplying by a power of two is exact (barring underflow, which rounds to 0 anyway).
        let k = (x * pow2(-self.exponent)).round();
        if k.abs() >= 2f64.powi(100) {
            return Err(invalid(
                name,
                format!("{x} is too large for the lattice 2^{}", self.exponent),
            ));
        }
        // The same integer as `k as i128`, without the 128-bit conversion routine when it fits.
        Ok(if k.abs() < 2f64.powi(63) {
            i128::from(k as i64)
        } else {
            k as i128
        })
    }

    /// The real value of `k` lattice steps (a deterministic post-processing of the integer).
    pub fn value(&self, k: i128) -> f64 {
        // i64 → f64 and i128 → f64 both round the same integer to nearest: the same value.
        let k = i64::try_from(k).map_or_else(|_| k as f64, |k| k as f64);
        k * self.spacing()
    }

    /// `scale` in lattice steps as an exact fraction (numerator, denominator) of big integers
    /// (an `f64` over a power of two is a dyadic rational).
    pub fn steps_ratio(&self, scale: f64) -> Result<(BigUint, BigUint)> {
        dyadic(scale * pow2(-self.exponent))
    }

    /// `scale` in lattice steps, rounded up to a whole number (≥ 1).
    pub fn steps_ceil(&self, scale: f64) -> Result<u64> {
        let s = (scale * pow2(-self.exponent)).ceil();
        if !(s.is_finite() && s < 2f64.powi(63)) {
            return Err(invalid(
                "scale",
                format!("{scale} is too large for the lattice 2^{}", self.exponent),
            ));
        }
        Ok((s as u64).max(1))
    }
}

/// 2^e for a lattice exponent (|e| ≤ 1000: a normal `f64`), built from its bits: the same value
/// as `2f64.powi(e)` without the call.
#[inline]
fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((1023 + e) as u64) << 52)
}

/// The exact value of a positive finite `f64` as numerator / denominator (denominator a power of
/// two, fraction in lowest terms).
pub fn dyadic(x: f64) -> Result<(BigUint, BigUint)> {
    if !(x.is_finite() && x > 0.0) {
        return Err(invalid("scale", format!("must be finite and > 0, got {x}")));
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (mut mantissa, mut exp) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    let tz = mantissa.trailing_zeros() as i64;
    mantissa >>= tz;
    exp += tz;
    let m = BigUint::from(mantissa);
    Ok(if exp >= 0 {
        (m << exp as usize, BigUint::one())
    } else {
        (m, BigUint::one() << (-exp) as usize)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_from_bits_equal_powi() {
        for e in -1000..=1000 {
            assert_eq!(pow2(e).to_bits(), 2f64.powi(e).to_bits(), "2^{e}");
        }
    }

    #[test]
    fn rounding_and_values_match_the_128_bit_conversions() {
        let l = Lattice::for_release(1.0, Norm::L2, 100, 1.0).unwrap();
        for k in [
            0i128,
            1,
            -1,
            12_345_678,
            i64::MAX.into(),
            i64::MIN.into(),
            1 << 70,
            -(1 << 90),
        ] {
            assert_eq!(
                l.value(k).to_bits(),
                (k as f64 * l.spacing()).to_bits(),
                "{k}"
            );
            let x = l.value(k);
            let want = (x * 2f64.powi(-l.exponent())).round() as i128;
            assert_eq!(l.round("x", x).unwrap(), want, "{k}");
        }
    }

    #[test]
    fn dyadic_is_exact() {
        for x in [1.0, 0.75, 3.0e-5, 1.0e20, 123.456, f64::MIN_POSITIVE] {
            let (n, d) = dyadic(x).unwrap();
            // n/d reproduces x exactly: compare n with x·d in big integers via f64 only when exact.
            let back =
                n.to_string().parse::<f64>().unwrap() / d.to_string().parse::<f64>().unwrap();
            if d.bits() < 1000 && n.bits() < 1000 {
                assert_eq!(back, x);
            }
        }
        assert_eq!(
            dyadic(0.75).unwrap(),
            (BigUint::from(3u32), BigUint::from(4u32))
        );
        assert!(dyadic(0.0).is_err());
        assert!(dyadic(f64::NAN).is_err());
    }

    #[test]
    fn lattice_rounding_bounds_the_extra_sensitivity() {
        let l = Lattice::for_release(1.0, Norm::L2, 100, 1.0).unwrap();
        // g ≤ 2^-20/10 and the added sensitivity g·√d ≤ 2^-20.
        assert!(l.spacing() <= 2f64.powi(-20) / 10.0);
        let eff = l.effective_sensitivity(1.0);
        assert!(eff > 1.0 && eff <= 1.0 + 2f64.powi(-20) + 1e-15);
        let x = 0.123456789;
        let k = l.round("x", x).unwrap();
        assert!((l.value(k) - x).abs() <= l.spacing() / 2.0);
        assert!(l.round("x", f64::NAN).is_err());
        assert!(Lattice::for_release(0.0, Norm::L1, 1, 1.0).is_err());
        // Effective sensitivity is monotone in the scale even where the spacing doubles.
        let mut last = 0.0;
        for i in 0..200 {
            let scale = 2f64.powf(i as f64 / 10.0);
            let e = Lattice::for_release(1.0, Norm::L1, 10, scale)
                .unwrap()
                .effective_sensitivity(1.0);
            assert!(e >= last);
            last = e;
        }
    }
}
