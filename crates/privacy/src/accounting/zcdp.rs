//! ρ-zero-concentrated DP (Bun & Steinke 2016) to (ε, δ).
//!
//! ρ-zCDP means (α, αρ)-RDP at every α > 1. The tight conversion of Canonne, Kamath, Steinke 2020
//! ("The Discrete Gaussian for Differential Privacy", Prop. 12 applied to every order, their
//! Corollary 13) gives (ε, δ)-DP with
//! `ε = min_{α>1} αρ + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)`,
//! minimised here over continuous α. The classical `ρ + 2√(ρ ln(1/δ))` (Bun & Steinke 2016,
//! Prop. 1.3) is never smaller; it is kept for published reference values (`docs/reference-values.md`).
//! The relation is whatever the zCDP guarantee was derived for (ρ = Δ²/(2σ²) with Δ the
//! sensitivity under that relation).
//!
//! Every value is rounded outward ([`super::outward`]): ε and δ are never below the bound the
//! formula gives at the order used (OpenDP #2820).

use super::outward::up;

/// ε of the conversion at order α for ρ-zCDP (rounded to nearest; [`eps_at_up`] bounds it).
fn eps_at(rho: f64, delta: f64, alpha: f64) -> f64 {
    alpha * rho + (-1.0 / alpha).ln_1p() - (delta.ln() + alpha.ln()) / (alpha - 1.0)
}

/// [`eps_at`] rounded up: three terms, at most 10 roundings (two divisions, a product, two
/// logarithms and `ln_1p`, a subtraction, three additions).
fn eps_at_up(rho: f64, delta: f64, alpha: f64) -> f64 {
    let (a, b, c) = (
        alpha * rho,
        (-1.0 / alpha).ln_1p(),
        (delta.ln() + alpha.ln()) / (alpha - 1.0),
    );
    let mag = a.abs() + b.abs() + c.abs() + delta.ln().abs() + alpha.ln().abs();
    up(a + b - c, mag, 10)
}

/// Tight ε(ρ, δ) (CKS 2020). The objective is unimodal in u = ln(α − 1); a scan of 400 points on
/// u ∈ [−12, 40] locates the minimum, a golden-section search refines it to 1e-12 in u.
pub fn epsilon(rho: f64, delta: f64) -> f64 {
    if rho == 0.0 {
        return 0.0;
    }
    if rho.is_infinite() {
        return f64::INFINITY;
    }
    let tight = eps_at_up(rho, delta, best_order(rho, delta));
    tight.min(classical_epsilon(rho, delta)).max(0.0)
}

/// The order α > 1 at which [`epsilon`] evaluates the bound (module doc: a scan, then golden
/// section).
fn best_order(rho: f64, delta: f64) -> f64 {
    let f = |u: f64| eps_at(rho, delta, 1.0 + u.exp());
    let (lo_u, hi_u, n) = (-12.0, 40.0, 400);
    let step = (hi_u - lo_u) / n as f64;
    let mut best = (f64::INFINITY, lo_u);
    for k in 0..=n {
        let u = lo_u + k as f64 * step;
        let v = f(u);
        if v < best.0 {
            best = (v, u);
        }
    }
    // Golden section on [u* − step, u* + step].
    let (mut a, mut b) = (best.1 - step, best.1 + step);
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let (mut c, mut d) = (b - g * (b - a), a + g * (b - a));
    let (mut fc, mut fd) = (f(c), f(d));
    while b - a > 1e-12 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    // The bound is evaluated, rounded up, at the order the search found best.
    let u_best = [(best.0, best.1), (fc, c), (fd, d)]
        .into_iter()
        .fold(
            (f64::INFINITY, best.1),
            |m, v| if v.0 < m.0 { v } else { m },
        )
        .1;
    1.0 + u_best.exp()
}

/// The classical conversion ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Prop. 1.3), rounded up.
pub fn classical_epsilon(rho: f64, delta: f64) -> f64 {
    let root = 2.0 * (rho * (1.0 / delta).ln()).sqrt();
    up(rho + root, rho + root, 6)
}

/// δ of ρ-zCDP at a given ε ≥ 0, rounded up: `δ = min_{α>1} e^{(α−1)(αρ−ε)}·(1 − 1/α)^α/(α − 1)`
/// (Canonne, Kamath, Steinke 2020, Corollary 13; OpenDP's `cdp_delta`, whose value this is
/// tested against). α is found by bisection on the derivative's sign over
/// [1.01, (ε + 1)/(2ρ) + 2] (the optimum is at least (1 + ε/ρ)/2); any α gives a valid δ.
pub fn delta(rho: f64, epsilon: f64) -> f64 {
    if rho == 0.0 {
        return 0.0;
    }
    if rho.is_infinite() || epsilon.is_nan() {
        return 1.0;
    }
    let (mut lo, mut hi) = (1.01, (epsilon + 1.0) / (2.0 * rho) + 2.0);
    for _ in 0..1000 {
        let alpha = 0.5 * (lo + hi);
        if (2.0 * alpha - 1.0) * rho - epsilon + (-1.0 / alpha).ln_1p() < 0.0 {
            lo = alpha;
        } else {
            hi = alpha;
        }
        if hi - lo <= f64::EPSILON * hi {
            break;
        }
    }
    let alpha = 0.5 * (lo + hi);
    // ln δ = (α − 1)(αρ − ε) + α·ln(1 − 1/α) − ln(α − 1), rounded up; then e^{·} rounded up
    // (exp is within 1 ulp, and e^{x+e} ≤ e^x·(1 + 2e) for e ≤ ½).
    let (a, b, c) = (
        (alpha - 1.0) * (alpha * rho - epsilon),
        alpha * (-1.0 / alpha).ln_1p(),
        (alpha - 1.0).ln(),
    );
    let log_delta = up(
        a + b - c,
        a.abs() + b.abs() + c.abs() + (alpha * rho).abs() + epsilon.abs(),
        10,
    );
    up(log_delta.exp(), log_delta.exp(), 2).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenDP's `cdp_delta(rho=0.05, eps=0.25)` (OpenDP #2820, after its fix): δ here is at
    /// least that value (never below the bound) and within 1e-12 relative (the allowance of
    /// `outward::up` is ≈ 1e-14 relative here; the optimum over α is flat to second order).
    #[test]
    fn delta_matches_opendp_and_rounds_up() {
        let opendp = 8.17727531036956e-2;
        let d = delta(0.05, 0.25);
        assert!(d >= opendp, "{d} < {opendp}");
        assert!((d - opendp) / opendp < 1e-12, "{d} vs {opendp}");
        assert_eq!(delta(0.0, 1.0), 0.0);
        assert!(delta(0.05, 0.0) <= 1.0);
    }

    /// ε is the bound at its order rounded up: strictly above the value rounded to nearest, by
    /// no more than the stated allowance (2·10·u·Σ|terms| + 1 ulp), and not above the nearest
    /// value at any order of a dense grid by more than the search's tolerance.
    #[test]
    fn epsilon_rounds_up_at_its_order() {
        for (rho, d) in [(0.05, 1e-5), (0.5, 1e-6), (2.0, 1e-3), (1e-4, 1e-9)] {
            let e = epsilon(rho, d);
            let a = best_order(rho, d);
            let nearest = eps_at(rho, d, a);
            assert!(e > nearest, "ρ {rho} δ {d}: {e} ≤ {nearest}");
            let mag = a * rho + d.ln().abs() + a.ln().abs() + 10.0;
            assert!(e - nearest <= 40.0 * f64::EPSILON * mag, "ρ {rho} δ {d}");
            let grid_min = (0..4000)
                .map(|k| eps_at(rho, d, 1.0 + (-12.0 + k as f64 * 0.013).exp()))
                .fold(f64::INFINITY, f64::min);
            assert!(
                e <= grid_min * (1.0 + 1e-9),
                "ρ {rho} δ {d}: {e} vs {grid_min}"
            );
        }
        // δ decreases in ε, so δ at the rounded-up ε never exceeds the δ asked for by more than
        // the rounding of δ itself.
        for (rho, d) in [(0.05, 1e-5), (0.5, 1e-6)] {
            let back = delta(rho, epsilon(rho, d));
            assert!(back <= d * (1.0 + 1e-6), "ρ {rho}: δ {d} → {back}");
        }
    }
}
