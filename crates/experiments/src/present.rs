//! How report.md prints numbers (`docs/reproductions.md`, "Reading report.md"):
//!
//! * a setting (ε, δ, α, …) as written: the shortest decimal that round-trips to the value
//!   after rounding to 12 significant digits, so `3 × 0.05` prints `0.15`, not
//!   `0.15000000000000002`;
//! * a mean at the precision its interval supports: the half-width to two significant digits
//!   and the mean to the same decimal place (`0.7013 ± 0.0094`, `0.00061 ± 0.0000071`);
//! * a tolerance or a detectable effect to two significant digits;
//! * a value without a usable interval (identical repetitions, one repetition, a stored number)
//!   to four significant digits.

/// Significant digits a setting is rounded to before printing: below the 15–17 of an `f64`,
/// so that the float noise of arithmetic on grid values (`3 × 0.05`) is dropped, and far above
/// any value a grid writes.
const SETTING_DIGITS: usize = 12;

/// Significant digits of a value printed without an interval.
const BARE_DIGITS: i32 = 4;

/// Significant digits of a half-width, a tolerance or a detectable effect.
const SPREAD_DIGITS: i32 = 2;

/// The most decimals printed (values below 1e-13 print as 0).
const MAX_DECIMALS: i32 = 14;

/// A setting value as written: rounded to 12 significant digits, then Rust's shortest
/// round-trip decimal (`inf` for ε = ∞).
pub fn setting(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{v}");
    }
    let rounded: f64 = format!("{v:.*e}", SETTING_DIGITS - 1).parse().unwrap_or(v);
    format!("{rounded}")
}

/// Decimals that show `v` to `digits` significant digits (0 for values ≥ 10^digits; the
/// [`MAX_DECIMALS`] cap for tiny ones; `None` for 0 and non-finite values).
fn decimals_for(v: f64, digits: i32) -> Option<usize> {
    if !v.is_finite() || v == 0.0 {
        return None;
    }
    let magnitude = v.abs().log10().floor() as i32;
    Some((digits - 1 - magnitude).clamp(0, MAX_DECIMALS) as usize)
}

/// The decimals a mean with this half-width is printed to: those of the half-width's two
/// significant digits; `None` without a usable half-width (0, ∞ or NaN).
pub fn interval_decimals(half_width: f64) -> Option<usize> {
    decimals_for(half_width, SPREAD_DIGITS)
}

/// A value with no usable interval: four significant digits.
pub fn bare(v: f64) -> String {
    match decimals_for(v, BARE_DIGITS) {
        Some(d) => format!("{v:.d$}"),
        None => format!("{v}"),
    }
}

/// A tolerance, a half-width or a detectable effect: two significant digits.
pub fn spread(v: f64) -> String {
    match decimals_for(v, SPREAD_DIGITS) {
        Some(d) => format!("{v:.d$}"),
        None if v.is_infinite() => "∞".into(),
        None => format!("{v}"),
    }
}

/// A mean and its half-width: `mean ± half-width` at the half-width's precision; with no usable
/// half-width, the mean to four significant digits and why there is no interval.
pub fn mean_pm(mean: f64, half_width: f64) -> String {
    match interval_decimals(half_width) {
        Some(d) => format!("{mean:.d$} ± {half_width:.d$}"),
        None if half_width == 0.0 => format!("{} ± 0", bare(mean)),
        None => format!("{} (no interval)", bare(mean)),
    }
}

/// A signed difference to `decimals` places (four significant digits when `None`).
pub fn signed(v: f64, decimals: Option<usize>) -> String {
    match decimals.or_else(|| decimals_for(v, BARE_DIGITS)) {
        Some(d) => format!("{v:+.d$}"),
        None => format!("{v:+}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rule 1: settings print as written, without the float noise of grid arithmetic.
    #[test]
    fn settings_print_as_written() {
        assert_eq!(setting(3.0 * 0.05), "0.15");
        assert_ne!(
            format!("{}", 3.0 * 0.05),
            "0.15",
            "the noise this rule removes"
        );
        assert_eq!(setting(0.1 + 0.2), "0.3");
        assert_eq!(setting(1e-5), "0.00001");
        assert_eq!(setting(0.7067), "0.7067");
        assert_eq!(setting(1000.0), "1000");
        assert_eq!(setting(f64::INFINITY), "inf");
        assert_eq!(setting(0.0), "0");
        // A value written with 12 significant digits is kept whole.
        assert_eq!(setting(0.123456789012), "0.123456789012");
    }

    /// Rule 2: a mean carries the decimals of its half-width's two significant digits.
    #[test]
    fn means_print_at_their_intervals_precision() {
        assert_eq!(mean_pm(0.70134, 0.00937), "0.7013 ± 0.0094");
        assert_eq!(mean_pm(0.70134, 0.0412), "0.701 ± 0.041");
        assert_eq!(mean_pm(0.5661, 0.329), "0.57 ± 0.33");
        assert_eq!(mean_pm(12.345, 3.2), "12.3 ± 3.2");
        assert_eq!(mean_pm(123.4, 45.0), "123 ± 45");
        // Fair regression's binning MSE: 0.00061 with a half-width of 7.1e-6.
        assert_eq!(mean_pm(0.000610, 0.0000071), "0.0006100 ± 0.0000071");
        // No usable interval: four significant digits and the reason.
        assert_eq!(mean_pm(0.166_43, 0.0), "0.1664 ± 0");
        assert_eq!(mean_pm(0.166_43, f64::INFINITY), "0.1664 (no interval)");
        assert_eq!(mean_pm(0.166_43, f64::NAN), "0.1664 (no interval)");
    }

    /// Rule 3: tolerances and detectable effects to two significant digits, never rounded to 0.
    #[test]
    fn tolerances_keep_two_significant_digits() {
        assert_eq!(spread(0.0000071), "0.0000071");
        assert_eq!(spread(0.01), "0.010");
        assert_eq!(spread(0.329), "0.33");
        assert_eq!(spread(f64::INFINITY), "∞");
        assert_eq!(signed(-0.0138, Some(4)), "-0.0138");
        assert_eq!(signed(0.000_012_3, None), "+0.00001230");
    }
}
