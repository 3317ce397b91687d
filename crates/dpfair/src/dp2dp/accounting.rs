//! Phase-2 privacy accounting (Say et al., Theorem 4.1): RDP composition of the frequency release and the
//! T steps of the Poisson-subsampled Gaussian, converted to (ε, δ) by the privacy crate's
//! dp_accounting-compatible conversion over its default order grid (as the paper's experiments); calibration of the
//! noise multiplier by bisection; and the paper's own calibration (Theorem 4.1 as applied in the
//! experiments: q = b/N, noise multiplier σ_SGD/4, π release α/(2N²σ_π²)).

use super::error::{Error, Result, invalid};
use dpfair_privacy::accounting::{default_orders, rdp_sgm_curve, rdp_to_dp};

/// (ε at δ) of the frequency release (zCDP ρ_π: RDP α·ρ_π) composed with `steps` steps of the
/// Poisson-subsampled Gaussian at rate `q` and add/remove noise multiplier `z`.
pub fn phase2_epsilon(pi_rho: f64, q: f64, z: f64, steps: u64, delta: f64) -> Result<f64> {
    let orders = default_orders();
    let mut curve = rdp_sgm_curve(q, z, steps, &orders)?;
    for (e, a) in curve.iter_mut().zip(&orders) {
        *e += a * pi_rho;
    }
    Ok(rdp_to_dp(&orders, &curve, delta)?)
}

/// The smallest noise multiplier z (relative tolerance 1e-6, returned on the safe side) with
/// `phase2_epsilon(pi_rho, q, z / factor, steps, delta) ≤ epsilon`. `factor` is 2 when the run
/// is charged for substitution (sensitivity 2C: the add/remove accountant at z/2), else 1.
pub fn calibrate(
    pi_rho: f64,
    q: f64,
    steps: u64,
    epsilon: f64,
    delta: f64,
    factor: f64,
) -> Result<f64> {
    let orders = default_orders();
    let pi_alone: Vec<f64> = orders.iter().map(|a| a * pi_rho).collect();
    if rdp_to_dp(&orders, &pi_alone, delta)? >= epsilon {
        return Err(invalid(
            "sigma_pi",
            format!(
                "the frequency release alone (zCDP ρ = {pi_rho:.3e}) spends ε ≥ {epsilon} at δ = {delta}; \
                 increase sigma_pi or epsilon"
            ),
        ));
    }
    let meets = |z: f64| -> Result<bool> {
        Ok(phase2_epsilon(pi_rho, q, z / factor, steps, delta)? <= epsilon)
    };
    let (mut lo, mut hi) = (0.1, 0.2);
    while !meets(hi)? {
        lo = hi;
        hi *= 2.0;
        if hi > 1e5 {
            return Err(invalid(
                "epsilon",
                format!("no noise multiplier ≤ 1e5 reaches ε = {epsilon} (q = {q}, T = {steps})"),
            ));
        }
    }
    if lo == 0.1 && meets(lo)? {
        return Ok(lo);
    }
    while hi - lo > 1e-6 * hi {
        let mid = 0.5 * (lo + hi);
        if meets(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// The paper's calibration (its experiments' event model): z_SGD with
/// `Compose(Gaussian(z_π = σ_π N), SelfCompose(PoissonSampled(b/N, Gaussian(z_SGD)), T))` at
/// (ε, δ); the paper then adds N(0, (4 z_SGD)²) to the summed gradient (Δ = 4).
pub fn paper_noise_multiplier(
    sigma_pi: f64,
    n: usize,
    batch: usize,
    steps: u64,
    epsilon: f64,
    delta: f64,
) -> Result<f64> {
    let z_pi = sigma_pi * n as f64;
    calibrate(
        1.0 / (2.0 * z_pi * z_pi),
        (batch as f64 / n as f64).min(1.0),
        steps,
        epsilon,
        delta,
        1.0,
    )
}

/// The paper's closed-form interpretive calibration (Say et al., §4 Discussion and App. C.3, with its typos corrected, `docs/deviations.md#dp2dp-calibration-typos`):
/// κ = (√(L + ε) − √L)², L = log(1/δ); σ_π must exceed 1/(√2 N (√(L+ε) − √L)); given σ_π,
/// σ_SGD² = 16 M̄ / (N² κ − 1/(2σ_π²)). Returns σ_SGD; for tests (the paper calls it "looser").
pub fn closed_form_sigma_sgd(
    epsilon: f64,
    delta: f64,
    n: usize,
    m_bar: f64,
    sigma_pi: f64,
) -> Result<f64> {
    let l = (1.0 / delta).ln();
    let kappa = ((l + epsilon).sqrt() - l.sqrt()).powi(2);
    let n2 = (n as f64).powi(2);
    let room = n2 * kappa - 1.0 / (2.0 * sigma_pi * sigma_pi);
    if room <= 0.0 {
        return Err(Error::Invalid {
            name: "sigma_pi",
            reason: format!(
                "σ_π = {sigma_pi} ≤ 1/(√2 N (√(L+ε) − √L)) = {:.4e}: the frequency release alone \
                 spends the budget",
                1.0 / (2f64.sqrt() * n as f64 * ((l + epsilon).sqrt() - l.sqrt()))
            ),
        });
    }
    Ok((16.0 * m_bar / room).sqrt())
}
