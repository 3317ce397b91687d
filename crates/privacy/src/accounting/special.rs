//! Numerical helpers shared by the accountants: log-space arithmetic, tails of the normal
//! distribution accurate far out (where `erfc` underflows), and a bisection on monotone functions.

use libm::erfc;

/// ln(e^a + e^b) without overflow.
pub fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// ln(e^a − e^b) for a ≥ b (−∞ when a = b).
pub fn log_sub(a: f64, b: f64) -> f64 {
    if b == f64::NEG_INFINITY {
        return a;
    }
    if b >= a {
        return f64::NEG_INFINITY;
    }
    a + log1mexp(b - a)
}

/// ln(1 − e^x) for x ≤ 0, accurate at both ends (Mächler 2012).
pub fn log1mexp(x: f64) -> f64 {
    if x >= 0.0 {
        f64::NEG_INFINITY
    } else if x > -std::f64::consts::LN_2 {
        (-x.exp_m1()).ln()
    } else {
        (-x.exp()).ln_1p()
    }
}

/// ln erfc(x), accurate for every real x: `libm`'s erfc (musl; within an ulp or so)
/// while it does not underflow, the asymptotic series beyond.
pub fn log_erfc(x: f64) -> f64 {
    if x < 25.0 {
        return erfc(x).ln();
    }
    // erfc(x) = e^{−x²}/(x√π) · (1 − 1/(2x²) + 3/(2x²)² − 15/(2x²)³ + 105/(2x²)⁴ − …); at x ≥ 25
    // the first omitted term is below 1e-16 relative.
    let t = 1.0 / (2.0 * x * x);
    let series = 1.0 - t * (1.0 - 3.0 * t * (1.0 - 5.0 * t * (1.0 - 7.0 * t)));
    -x * x - (x * std::f64::consts::PI.sqrt()).ln() + series.ln()
}

/// Φ(x), the standard normal distribution function, with relative accuracy in the lower tail.
pub fn norm_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// ln Φ(x), accurate for every x (including x ≪ 0).
pub fn log_norm_cdf(x: f64) -> f64 {
    log_erfc(-x / std::f64::consts::SQRT_2) - std::f64::consts::LN_2
}

/// Bisection for the boundary of a monotone predicate: given `lo` with `ok(lo) == false` and
/// `hi` with `ok(hi) == true`, returns `(lo, hi)` with the same property and
/// `hi − lo ≤ rel_tol · |hi|` (or after 200 halvings). Callers return `hi`, the side on which the
/// guarantee holds.
pub fn bisect(
    mut lo: f64,
    mut hi: f64,
    rel_tol: f64,
    mut ok: impl FnMut(f64) -> bool,
) -> (f64, f64) {
    for _ in 0..200 {
        if hi - lo <= rel_tol * hi.abs() {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_erfc_matches_known_values_and_is_continuous_at_the_switch() {
        // erfc(1) = 0.157299207050285130658…; erfc(10) = 2.088487583762544757e-45 (A&S tables).
        for (x, v) in [
            (1.0, 0.157_299_207_050_285_1),
            (10.0, 2.088_487_583_762_545e-45),
        ] {
            let got = log_erfc(x);
            assert!(
                (got - f64::ln(v)).abs() < 1e-13,
                "ln erfc({x}) = {got}, want {}",
                f64::ln(v)
            );
        }
        let below = erfc(24.999_999).ln();
        let above = log_erfc(25.000_001);
        // d/dx ln erfc(x) = −(2x + 1/x) + O(x⁻³) = −50.04 at x = 25, over 2e-6.
        assert!(
            (below - above - 50.04 * 2e-6).abs() < 1e-9,
            "{below} {above}"
        );
        assert!(log_erfc(-30.0) - std::f64::consts::LN_2 < 1e-15);
    }

    #[test]
    fn log_space_helpers() {
        assert!((log_add(0.0, 0.0) - 2f64.ln()).abs() < 1e-15);
        assert_eq!(log_add(f64::NEG_INFINITY, 3.0), 3.0);
        assert!((log_sub(2f64.ln(), 0.0)).abs() < 1e-15);
        assert!((log1mexp(-1e-20) - (1e-20f64).ln()).abs() < 1e-10);
        assert!(
            (log_norm_cdf(-40.0)
                - (-40.0f64 * 40.0 / 2.0 - (40.0 * (2.0 * std::f64::consts::PI).sqrt()).ln()))
            .abs()
                < 1e-3
        );
    }
}
