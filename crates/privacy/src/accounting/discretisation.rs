//! What the (ε, δ) calibrations of the *continuous* Gaussian are worth for the *discrete* Gaussian
//! on a fine lattice g·ℤ, which is what [`crate::mechanisms::Gaussian`] actually samples.
//!
//! The analytic (Balle & Wang 2018, Thm 8) and classical (Dwork & Roth Thm 3.22) calibrations are
//! proofs about x + N(0, σ²I). The zCDP calibrations need nothing here: the multivariate discrete
//! Gaussian is (Δ₂²/2σ²)-zCDP exactly like the continuous one (Canonne, Kamath, Steinke 2020,
//! Thm 14). For (ε, δ) we compare the released law with a mechanism that is covered by the
//! continuous proof:
//!
//! * **R** (rounded continuous): x + round_g(Y), Y ~ N(0, σ²I), x on the lattice. It is
//!   post-processing of the continuous Gaussian mechanism, so it is (ε', δ')-DP whenever σ is
//!   calibrated for (ε', δ') with the lattice's effective sensitivity.
//! * **D** (what is released): x + g·K, K a discrete Gaussian with scale σ/g per coordinate.
//!
//! Per coordinate, at a lattice point c (offset from the centre) with |c| ≤ Tσ, let u = g/σ:
//! R puts mass ∫_{c−g/2}^{c+g/2} φ_σ = g·φ_σ(c)·(1 + E) with (second-order expansion of
//! e^{a(s)}, a(s) = −cs/σ² − s²/2σ², averaged over the cell)
//! `|E| ≤ (u²/24)·T² + u⁴/640 + A³e^A/6`, A = Tu/2 + u²/8;
//! D puts mass g·φ_σ(c)/Z with |Z − 1| ≤ τ = 2e^{−2π²/u²}/(1 − e^{−2π²/u²}) (Poisson summation).
//! So |ln D(c)/R(c)| ≤ γ = |E|/(1 − |E|) + τ/(1 − τ) on the bulk, and ≤ dγ for d coordinates
//! (a product law). Outside the bulk (some coordinate beyond Tσ) both laws put at most
//! d · 2Φ(−T)·(1 + τ)-ish mass; we bound it by `d · 2 e^{−T²/2}`, which covers both (the
//! discrete tail sum is at most the continuous tail from T − u, well under e^{−T²/2} for our u).
//!
//! Chaining D_x(S) ≤ e^{dγ} R_x(S) + tail ≤ e^{dγ}(e^{ε'} R_{x'}(S) + δ') + tail and
//! R_{x'}(S) ≤ e^{dγ} D_{x'}(S) + tail gives: D is (ε' + 2dγ, e^{dγ}δ' + (1 + e^{ε'+dγ})·tail)-DP.
//! [`lattice_gaussian_slack`] returns the ε and δ to subtract before calibrating, so the release
//! meets the (ε, δ) the ledger records. With T = 40 and dpfair's lattices (u ≤ 2^-20·Δ/(σ√d)),
//! the ε slack is about 1.3·10⁻¹⁰·(Δ/σ)² and the δ slack is below 10⁻³⁰⁰ for ε < 600: the
//! difference from the continuous Gaussian is of order (g/σ)² per coordinate, as expected.

use crate::error::{Result, invalid};

/// Half-width of the bulk, in standard deviations.
pub const BULK_SDS: f64 = 40.0;

/// What the discrete Gaussian on a lattice costs beyond the continuous Gaussian's calibration:
/// calibrate the continuous formula at (ε − `epsilon`, (δ − `delta`)·e^{−`epsilon`/2}) (see
/// [`Slack::calibration_target`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slack {
    /// 2dγ: the ε the discretisation may add.
    pub epsilon: f64,
    /// (1 + e^{ε}) · d · 2e^{−T²/2}: the δ the tails may add (usually 0 in floating point).
    pub delta: f64,
}

impl Slack {
    /// The (ε', δ') to hand the continuous calibration so that the discrete release is
    /// (ε, δ)-DP: ε' = ε − 2dγ, δ' = e^{−dγ}(δ − tail).
    pub fn calibration_target(&self, epsilon: f64, delta: f64) -> Result<(f64, f64)> {
        let e = epsilon - self.epsilon;
        let d = (delta - self.delta) * (-self.epsilon / 2.0).exp();
        if !(e > 0.0 && d > 0.0) {
            return Err(invalid(
                "epsilon",
                format!(
                    "(ε, δ) = ({epsilon}, {delta}) leaves nothing after the lattice slack \
                     ({:.3e}, {:.3e}) of the discrete Gaussian",
                    self.epsilon, self.delta
                ),
            ));
        }
        Ok((e, d))
    }
}

/// Bound γ on |ln D(c)/R(c)| per coordinate for |c| ≤ `t`·σ, with u = spacing/σ (module docs).
pub fn log_ratio_bound(u: f64, t: f64) -> f64 {
    let a = t * u / 2.0 + u * u / 8.0;
    let e = u * u / 24.0 * t * t + u.powi(4) / 640.0 + a.powi(3) * a.exp() / 6.0;
    let w = (-2.0 * std::f64::consts::PI.powi(2) / (u * u)).exp();
    let tau = 2.0 * w / (1.0 - w);
    e / (1.0 - e) + tau / (1.0 - tau)
}

/// The slack of releasing `dim` coordinates with discrete Gaussian noise of scale `sigma` on the
/// lattice of `spacing`, for a calibration at `epsilon` (module docs). Refused when the lattice
/// is too coarse for the bound (T·u > 10⁻²), which dpfair's lattices never are.
pub fn lattice_gaussian_slack(spacing: f64, sigma: f64, dim: usize, epsilon: f64) -> Result<Slack> {
    let u = spacing / sigma;
    if !(u.is_finite() && u > 0.0 && BULK_SDS * u <= 1e-2) {
        return Err(invalid(
            "sigma",
            format!("σ = {sigma} is too small for the lattice spacing {spacing:e}"),
        ));
    }
    let d = dim.max(1) as f64;
    let gamma = log_ratio_bound(u, BULK_SDS);
    let log_tail = (2.0 * d).ln() - BULK_SDS * BULK_SDS / 2.0;
    // ln(1 + e^{ε + dγ}) ≤ max(ε + dγ, 0) + ln 2.
    let log_factor = (epsilon + d * gamma).max(0.0) + std::f64::consts::LN_2;
    Ok(Slack {
        epsilon: 2.0 * d * gamma,
        delta: (log_tail + log_factor).exp(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Standard normal upper tail, accurate in the tails (libm erfc).
    fn upper(x: f64) -> f64 {
        0.5 * libm::erfc(x / std::f64::consts::SQRT_2)
    }

    #[test]
    fn the_log_ratio_bound_holds_against_exact_masses() {
        // σ = 1, centre 0, T = 6 (masses down to ~1e-9 of the peak: both computed exactly enough).
        for u in [0.05, 0.02, 0.01] {
            let t = 6.0;
            let k_max = (t / u) as i64;
            let z: f64 = (-(40.0 / u) as i64..=(40.0 / u) as i64)
                .map(|k| {
                    let c = k as f64 * u;
                    u * (-c * c / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt()
                })
                .sum();
            let mut worst = 0.0f64;
            for k in -k_max..=k_max {
                let c = k as f64 * u;
                // Cell mass as a difference of upper tails of the positive side (no cancellation
                // trouble at |c| ≤ 6 for these u).
                let (lo, hi) = (c.abs() - u / 2.0, c.abs() + u / 2.0);
                let r = if lo >= 0.0 {
                    upper(lo) - upper(hi)
                } else {
                    1.0 - upper(-lo) - upper(hi)
                };
                let d = u * (-c * c / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt() / z;
                worst = worst.max((d / r).ln().abs());
            }
            let bound = log_ratio_bound(u, t);
            assert!(worst <= bound, "u = {u}: worst {worst:e} > bound {bound:e}");
            // Not vacuous: the leading term u²T²/24 is reached up to the cell-average slack
            // (the worst cell is at |c| = T, where the exact error is u²(T² − 1)/24).
            assert!(
                bound <= 1.5 * worst,
                "u = {u}: bound {bound:e} vs worst {worst:e}"
            );
        }
    }

    #[test]
    fn slack_is_second_order_in_the_spacing() {
        // A dpfair lattice: Δ = 1, σ = 1, d = 100, g ≈ 2^-20/10.
        let s = lattice_gaussian_slack(2f64.powi(-24), 1.0, 100, 1.0).unwrap();
        let u2 = 2f64.powi(-48);
        // 2dγ ≈ 2d·u²T²/24.
        assert!((s.epsilon / (2.0 * 100.0 * u2 * 1600.0 / 24.0) - 1.0).abs() < 1e-3);
        assert_eq!(s.delta, 0.0, "e^-800 underflows: below 1e-300");
        // Halving the spacing quarters the ε slack (up to the cubic term, ≈ 20u ≈ 1e-6 relative).
        let h = lattice_gaussian_slack(2f64.powi(-25), 1.0, 100, 1.0).unwrap();
        assert!((s.epsilon / h.epsilon - 4.0).abs() < 1e-4);
        let (e, d) = s.calibration_target(1.0, 1e-5).unwrap();
        assert!(e < 1.0 && e > 1.0 - 1e-9 && d < 1e-5 && d > 1e-5 * (1.0 - 1e-9));
        // Too coarse a lattice for the bound: refused.
        assert!(lattice_gaussian_slack(0.01, 1.0, 1, 1.0).is_err());
        // Nothing left: refused, naming ε.
        let big = Slack {
            epsilon: 2.0,
            delta: 0.0,
        };
        assert!(big.calibration_target(1.0, 1e-5).is_err());
    }
}
