//! Rényi DP of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar, Zhang 2019,
//! "Rényi Differential Privacy of the Sampled Gaussian Mechanism", §3) and the RDP → (ε, δ)
//! conversion.
//!
//! Neighbouring relation: **add/remove one record** with Poisson sampling at rate q; the sum of
//! clipped contributions has ℓ2-sensitivity C and the noise is N(0, (zC)²). The RDP of order α is
//! `ε(α) = ln A_α / (α − 1)` with `A_α = E_{x∼ν}[(μ(x)/ν(x))^α]`, μ = (1−q)N(0,z²) + qN(1,z²),
//! ν = N(0,z²), i.e. D_α(μ‖ν) (MTZ 2019, §3.1: this order of the arguments is the larger of the
//! two, so it bounds both directions of add/remove).

use super::special::{log_add, log_erfc, log_sub};

/// RDP of one step of the Poisson-subsampled Gaussian at order `alpha > 1`.
///
/// Special cases: q = 0 → 0; q = 1 → α/(2z²) (plain Gaussian); z = 0 → ∞. For a fractional order
/// whose series (MTZ 2019 §3.3) does not settle within the term budget the value is +∞, i.e. the
/// order is excluded from any conversion (a valid, trivial bound).
pub fn rdp_step(q: f64, z: f64, alpha: f64) -> f64 {
    if q == 0.0 {
        return 0.0;
    }
    if z == 0.0 || alpha.is_infinite() {
        return f64::INFINITY;
    }
    if q == 1.0 {
        return alpha / (2.0 * z * z);
    }
    let log_a = if alpha.fract() == 0.0 && alpha <= 1e6 {
        log_a_int(q, z, alpha as u64)
    } else {
        log_a_frac(q, z, alpha)
    };
    (log_a / (alpha - 1.0)).max(0.0)
}

/// ln A_α at integer α (MTZ 2019 §3.2, eq. for integer α, binomial expansion):
/// `A_α = Σ_{i=0}^{α} C(α,i) (1−q)^{α−i} q^i exp((i² − i)/(2z²))`, summed in log space with
/// ln C(α,i) by the multiplicative recurrence, so no term overflows at any order.
fn log_a_int(q: f64, z: f64, alpha: u64) -> f64 {
    let (lq, l1q) = (q.ln(), (-q).ln_1p());
    let a = alpha as f64;
    let mut log_binom = 0.0;
    let mut acc = f64::NEG_INFINITY;
    for i in 0..=alpha {
        let fi = i as f64;
        if i > 0 {
            log_binom += ((a - fi + 1.0) / fi).ln();
        }
        let term = log_binom + fi * lq + (a - fi) * l1q + (fi * fi - fi) / (2.0 * z * z);
        acc = log_add(acc, term);
    }
    acc
}

/// Term budget of the fractional-order series.
const FRAC_MAX_TERMS: usize = 20_000;

/// ln A_α at fractional α (MTZ 2019 §3.3): A_α = A₀ + A₁ with
/// `A₀ = Σ_i C(α,i) q^i (1−q)^{α−i} e^{(i²−i)/(2z²)} · ½ erfc((i − z₀)/(√2 z))`,
/// `A₁ = Σ_i C(α,i) q^{α−i} (1−q)^i e^{((α−i)²−(α−i))/(2z²)} · ½ erfc((z₀ − (α−i))/(√2 z))`,
/// `z₀ = z² ln(1/q − 1) + ½`. The coefficients C(α,i) alternate in sign for i > α, so each series
/// is eventually alternating: the sum stops once both new terms are below e^{−36} of the total, or,
/// when the budget runs out while the terms still decrease, adds the magnitude of the last terms
/// (an alternating series' remainder is at most its first omitted term), which keeps the result an
/// upper bound. Terms that still grow at the budget give +∞ (order excluded).
fn log_a_frac(q: f64, z: f64, alpha: f64) -> f64 {
    let (lq, l1q) = (q.ln(), (-q).ln_1p());
    let z0 = z * z * (1.0 / q - 1.0).ln() + 0.5;
    let s2z = std::f64::consts::SQRT_2 * z;
    // Sums of the positive and of the negative terms of both series, in log space.
    let (mut pos, mut neg) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut log_coef = 0.0; // ln |C(α, i)|
    let mut positive = true;
    let mut prev_max = f64::INFINITY;
    let mut decreasing = false;
    let mut total = f64::NEG_INFINITY;
    for i in 0..FRAC_MAX_TERMS {
        let fi = i as f64;
        if i > 0 {
            let ratio = (alpha - fi + 1.0) / fi;
            log_coef += ratio.abs().ln();
            if ratio < 0.0 {
                positive = !positive;
            }
        }
        let j = alpha - fi;
        let log_e0 = 0.5f64.ln() + log_erfc((fi - z0) / s2z);
        let log_e1 = 0.5f64.ln() + log_erfc((z0 - j) / s2z);
        let s0 = log_coef + fi * lq + j * l1q + (fi * fi - fi) / (2.0 * z * z) + log_e0;
        let s1 = log_coef + j * lq + fi * l1q + (j * j - j) / (2.0 * z * z) + log_e1;
        if positive {
            pos = log_add(pos, log_add(s0, s1));
        } else {
            neg = log_add(neg, log_add(s0, s1));
        }
        let m = s0.max(s1);
        total = log_sub(pos, neg);
        decreasing = fi > alpha && m < prev_max;
        if decreasing && m < total - 36.0 {
            return total;
        }
        prev_max = m;
    }
    if decreasing && prev_max < total {
        // Both remainders are at most their first omitted term, each below e^{prev_max}.
        return log_add(total, prev_max + std::f64::consts::LN_2);
    }
    f64::INFINITY
}

/// RDP curve of `steps` compositions (RDP adds up under composition, Mironov 2017 Prop. 1).
pub fn rdp_curve(q: f64, z: f64, steps: u64, orders: &[f64]) -> Vec<f64> {
    orders
        .iter()
        .map(|&a| steps as f64 * rdp_step(q, z, a))
        .collect()
}

/// ε at δ from an RDP curve, with the order that attains it.
///
/// Formula (the one Opacus ≥ 1.0 and Google's dp_accounting use): for each order α > 1.01,
/// `ε_α = r_α + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)`, each ε_α rounded up
/// ([`super::outward`]) (Canonne, Kamath, Steinke 2020, Prop. 12; Asoodeh et al. 2021), minimised over the orders and
/// floored at 0. An order whose r_α satisfies `δ² + expm1(−r_α) > 0` gives ε = 0 outright
/// (KL bound: total variation ≤ √(1 − e^{−KL}) ≤ δ; dp_accounting does the same). Orders ≤ 1.01
/// are skipped (the bound is numerically unstable there and never the minimum).
pub fn rdp_to_dp_with_order(orders: &[f64], rdp: &[f64], delta: f64) -> (f64, f64) {
    let mut best = (f64::INFINITY, f64::NAN);
    for (&a, &r) in orders.iter().zip(rdp) {
        let eps = if delta * delta + (-r).exp_m1() > 0.0 {
            0.0
        } else if a > 1.01 {
            // Rounded up (`super::outward`): three terms, at most 10 roundings.
            let (b, c) = ((-1.0 / a).ln_1p(), (delta.ln() + a.ln()) / (a - 1.0));
            let mag = r.abs() + b.abs() + c.abs() + delta.ln().abs() + a.ln().abs();
            super::outward::up(r + b - c, mag, 10)
        } else {
            f64::INFINITY
        };
        if eps < best.0 {
            best = (eps, a);
        }
    }
    (best.0.max(0.0), best.1)
}

/// The classical conversion `ε = min_α r_α + ln(1/δ)/(α − 1)` (Mironov 2017, Prop. 3), looser
/// than [`rdp_to_dp_with_order`]; kept to check published "classic conversion" values (`docs/reference-values.md`).
pub fn rdp_to_dp_classic(orders: &[f64], rdp: &[f64], delta: f64) -> f64 {
    orders
        .iter()
        .zip(rdp)
        .filter(|(a, _)| **a > 1.0)
        .map(|(a, r)| r + (1.0 / delta).ln() / (a - 1.0))
        .fold(f64::INFINITY, f64::min)
        .max(0.0)
}
