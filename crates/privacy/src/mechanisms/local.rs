//! Local differential privacy: each user perturbs their own report before sending it
//! (Kasiviswanathan et al. 2011). The user side ([`LocalLaplace::report`]) draws the noise; the
//! collector side ([`LocalLaplace::charge_reports`]) records the guarantee in the ledger. Call
//! `charge_reports` before generating or accepting the reports.

use super::{LaplaceSteps, add_laplace, entry, positive, to_lattice};
use crate::Noise;
use crate::error::Result;
use crate::ledger::{Cost, Ledger, Relation};
use crate::samplers::lattice::{Lattice, Norm};

/// The ε-LDP Laplace randomizer for a vector report with ℓ1 diameter Δ₁ (the largest ℓ1 distance
/// between two reports a user could hold).
#[derive(Clone, Debug, PartialEq)]
pub struct LocalLaplace {
    sensitivity: f64,
    epsilon: f64,
}

impl LocalLaplace {
    pub fn new(sensitivity_l1: f64, epsilon: f64) -> Result<Self> {
        Ok(LocalLaplace {
            sensitivity: positive("sensitivity_l1", sensitivity_l1)?,
            epsilon: positive("epsilon", epsilon)?,
        })
    }

    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// User side, fallible: the report with exact discrete Laplace noise of scale
    /// (Δ₁ + lattice rounding)/ε per coordinate on a 2^k lattice. Fails on non-finite values.
    pub fn try_report(&self, noise: &mut Noise, values: &[f64]) -> Result<Vec<f64>> {
        if values.is_empty() {
            return Ok(Vec::new());
        }
        let nominal = self.sensitivity / self.epsilon;
        let lattice = Lattice::for_release(self.sensitivity, Norm::L1, values.len(), nominal)?;
        let scale = (lattice.effective_sensitivity(self.sensitivity) / self.epsilon).next_up();
        let steps = to_lattice(&lattice, values)?;
        add_laplace(
            noise,
            &lattice,
            &steps,
            &LaplaceSteps::new(&lattice, scale)?,
        )
    }

    /// User side: [`LocalLaplace::try_report`], with any non-finite or out-of-range entry
    /// replaced by 0 first (a fixed, data-independent fallback, so the report stays ε-LDP).
    pub fn report(&self, noise: &mut Noise, values: &[f64]) -> Vec<f64> {
        let clean: Vec<f64> = values
            .iter()
            .map(|v| {
                if v.is_finite() && v.abs() < 1e15 {
                    *v
                } else {
                    0.0
                }
            })
            .collect();
        // With finite, bounded inputs and parameters validated in `new`, this cannot fail.
        self.try_report(noise, &clean)
            .unwrap_or_else(|_| vec![0.0; values.len()])
    }

    /// Collector side: records that `n_users` users each sent one ε-LDP report. Each user's
    /// report depends on their data only, so the collection is ε-DP under substitution
    /// (parallel composition over users): one entry of cost ε.
    pub fn charge_reports(&self, ledger: &mut Ledger, label: &str, n_users: usize) -> Result<()> {
        ledger.charge(entry(
            label,
            "local laplace",
            Relation::Substitution,
            self.sensitivity,
            Norm::L1.name(),
            self.sensitivity / self.epsilon,
            Cost::Pure {
                epsilon: self.epsilon,
            },
            Some(format!(
                "{n_users} users, one ε-LDP report each (parallel over users); noise scale (Δ₁ + lattice rounding)/ε"
            )),
        ))
    }
}
