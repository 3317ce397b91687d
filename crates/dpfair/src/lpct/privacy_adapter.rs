//! The seam between LPCT and the privacy crate's local mechanisms: every noisy value LPCT
//! releases comes from [`dpfair_privacy::mechanisms::LocalLaplace`] (exact discrete Laplace on a
//! lattice, scale (Δ₁ + lattice rounding)/ε ≥ 4/ε, so still ε-LDP), and the simulation's
//! per-leaf noise from [`dpfair_privacy::samplers::simulation::sum_of_laplace`].

use super::error::Result;
use dpfair_privacy::mechanisms::LocalLaplace;
use dpfair_privacy::{Ledger, Noise};

/// The ε-LDP Laplace randomizer of a holder's vector (L1 sensitivity `sensitivity`).
#[derive(Clone, Debug)]
pub struct LocalLaplaceMechanism(LocalLaplace);

/// The local Laplace mechanism for vectors of L1 sensitivity `sensitivity` at budget ε.
pub fn local_mechanism(sensitivity: f64, epsilon: f64) -> Result<LocalLaplaceMechanism> {
    Ok(LocalLaplaceMechanism(LocalLaplace::new(
        sensitivity,
        epsilon,
    )?))
}

impl LocalLaplaceMechanism {
    /// User side: the vector plus iid Laplace noise.
    pub fn report(&self, noise: &mut Noise, values: &[f64]) -> Vec<f64> {
        self.0.report(noise, values)
    }

    /// Collector side: `n_users` reports, each ε-LDP, one ledger entry (parallel over users).
    pub fn charge_reports(&self, ledger: &mut Ledger, label: &str, n_users: u64) -> Result<()> {
        Ok(self.0.charge_reports(ledger, label, n_users as usize)?)
    }
}

/// **Simulation only**: the exact sum of `n` iid Laplace(`scale`) variables (Gamma difference).
pub fn sum_of_laplace(noise: &mut Noise, n: u64, scale: f64) -> Result<f64> {
    Ok(dpfair_privacy::samplers::simulation::sum_of_laplace(
        noise, n, scale,
    )?)
}
