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

/// ε of the conversion at order α for ρ-zCDP.
fn eps_at(rho: f64, delta: f64, alpha: f64) -> f64 {
    alpha * rho + (-1.0 / alpha).ln_1p() - (delta.ln() + alpha.ln()) / (alpha - 1.0)
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
    let tight = best.0.min(fc).min(fd);
    tight.min(classical_epsilon(rho, delta)).max(0.0)
}

/// The classical conversion ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Prop. 1.3).
pub fn classical_epsilon(rho: f64, delta: f64) -> f64 {
    rho + 2.0 * (rho * (1.0 / delta).ln()).sqrt()
}
