//! Privacy accounting: conversions between the units the ledger records and (ε, δ).
//!
//! This module's free functions are the contract the rest of dpfair calls; the submodules hold
//! the mathematics (RDP of the Poisson-subsampled Gaussian, PRV, GDP, zCDP, analytic Gaussian).
//! STUB: the functions below are placeholders until the accounting work lands.

use crate::error::{PrivacyError, Result};
use serde::{Deserialize, Serialize};

/// Which accountant turns a subsampled-Gaussian (DP-SGD) run into (ε, δ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Accountant {
    /// Rényi DP (Mironov, Talwar, Zhang 2019), the "moments accountant".
    #[default]
    Rdp,
    /// Privacy random variables / privacy-loss distributions (Gopi, Lee, Wutschitz 2021).
    Prv,
    /// Gaussian DP central-limit approximation (Bu, Dong, Long, Su 2020).
    Gdp,
}

/// The Rényi orders the ledger composes over.
pub fn default_orders() -> Vec<f64> {
    let mut o: Vec<f64> = (1..100).map(|i| 1.0 + i as f64 / 10.0).collect();
    o.extend((12..64).map(|i| i as f64));
    o.extend([128.0, 256.0, 512.0]);
    o
}

/// RDP curve (one value per order) of `steps` compositions of the Poisson-subsampled Gaussian
/// with sampling rate `q` and noise multiplier `z`.
pub fn rdp_sgm_curve(_q: f64, _z: f64, _steps: u64, _orders: &[f64]) -> Result<Vec<f64>> {
    Err(PrivacyError::NotImplemented(
        "RDP of the subsampled Gaussian",
    ))
}

/// Smallest ε such that an RDP curve implies (ε, δ)-DP (conversion used by Opacus / dp_accounting).
pub fn rdp_to_dp(_orders: &[f64], _rdp: &[f64], _delta: f64) -> Result<f64> {
    Err(PrivacyError::NotImplemented("RDP to (ε,δ) conversion"))
}

/// ε of ρ-zCDP at δ (tight conversion of Canonne, Kamath, Steinke 2020).
pub fn zcdp_to_dp(_rho: f64, _delta: f64) -> Result<f64> {
    Err(PrivacyError::NotImplemented("zCDP to (ε,δ) conversion"))
}

/// ε of a DP-SGD run (sampling rate `q`, noise multiplier `z`, `steps`) at δ.
pub fn sgm_epsilon(_acc: Accountant, _q: f64, _z: f64, _steps: u64, _delta: f64) -> Result<f64> {
    Err(PrivacyError::NotImplemented(
        "subsampled Gaussian accountant",
    ))
}

/// Smallest noise multiplier meeting (ε, δ) for `steps` steps at sampling rate `q`.
pub fn sgm_noise_multiplier(
    _acc: Accountant,
    _q: f64,
    _steps: u64,
    _epsilon: f64,
    _delta: f64,
) -> Result<f64> {
    Err(PrivacyError::NotImplemented("noise multiplier search"))
}

/// Exact ε at δ of one Gaussian release with noise multiplier `z` = σ/Δ₂ (Balle & Wang 2018).
pub fn analytic_gaussian_epsilon(_z: f64, _delta: f64) -> Result<f64> {
    Err(PrivacyError::NotImplemented("analytic Gaussian"))
}

/// Smallest σ of a Gaussian release with ℓ2-sensitivity `sensitivity` that is (ε, δ)-DP
/// (analytic Gaussian, Balle & Wang 2018; valid for every ε > 0).
pub fn analytic_gaussian_sigma(_sensitivity: f64, _epsilon: f64, _delta: f64) -> Result<f64> {
    Err(PrivacyError::NotImplemented("analytic Gaussian"))
}

/// The classical calibration σ = Δ₂ √(2 ln(1.25/δ)) / ε (Dwork & Roth Thm 3.22), valid for ε < 1
/// only; offered as a paper option.
pub fn classical_gaussian_sigma(sensitivity: f64, epsilon: f64, delta: f64) -> Result<f64> {
    if !(epsilon > 0.0 && epsilon < 1.0) {
        return Err(crate::error::invalid(
            "epsilon",
            format!("the classical Gaussian calibration needs 0 < ε < 1, got {epsilon}"),
        ));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(crate::error::invalid(
            "delta",
            format!("must be in (0,1), got {delta}"),
        ));
    }
    Ok(sensitivity * (2.0 * (1.25 / delta).ln()).sqrt() / epsilon)
}
