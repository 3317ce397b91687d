//! The seam between LPCT and the privacy crate's local mechanisms.
//!
//! INTERIM: `dpfair_privacy::mechanisms::LocalLaplace` and
//! `dpfair_privacy::samplers::simulation::sum_of_laplace` are being written; until they land this
//! file stands in for them behind the two items the rest of the module uses
//! ([`LocalLaplaceMechanism`], [`sum_of_laplace`]). When they land, this file becomes a thin
//! re-export and nothing else in `lpct` changes.

use super::error::{Result, check_epsilon, invalid};
use dpfair_privacy::{Composition, Cost, Entry, Ledger, Noise, Relation};
use rand::RngExt;
use rand_distr::{Distribution, Gamma};

/// Laplace noise of scale sensitivity/ε on every coordinate of a holder's vector (ε-LDP when the
/// vector's L1 sensitivity is `sensitivity`).
#[derive(Clone, Debug)]
pub struct LocalLaplaceMechanism {
    sensitivity: f64,
    epsilon: f64,
}

/// The local Laplace mechanism for vectors of L1 sensitivity `sensitivity` at budget ε.
pub fn local_mechanism(sensitivity: f64, epsilon: f64) -> Result<LocalLaplaceMechanism> {
    check_epsilon(epsilon)?;
    if !(sensitivity.is_finite() && sensitivity > 0.0) {
        return Err(invalid(
            "sensitivity",
            format!("must be > 0, got {sensitivity}"),
        ));
    }
    Ok(LocalLaplaceMechanism {
        sensitivity,
        epsilon,
    })
}

impl LocalLaplaceMechanism {
    pub fn scale(&self) -> f64 {
        self.sensitivity / self.epsilon
    }

    /// User side: the vector plus iid Laplace(scale) noise.
    pub fn report(&self, noise: &mut Noise, values: &[f64]) -> Vec<f64> {
        let b = self.scale();
        values
            .iter()
            .map(|v| {
                // INTERIM inverse-CDF Laplace: replaced by the privacy crate's exact sampler.
                let u: f64 = noise.random::<f64>() - 0.5;
                v - b * u.signum() * (1.0 - 2.0 * u.abs()).ln()
            })
            .collect()
    }

    /// Collector side: `n_users` reports, each ε-LDP, recorded as one entry (parallel over users).
    pub fn charge_reports(&self, ledger: &mut Ledger, label: &str, n_users: u64) -> Result<()> {
        ledger.charge(Entry {
            label: label.to_string(),
            mechanism: "local-laplace".into(),
            relation: Relation::Substitution,
            sensitivity: self.sensitivity,
            norm: "l1".into(),
            scale: self.scale(),
            cost: Cost::Pure {
                epsilon: self.epsilon,
            },
            composition: Composition::Parallel {
                partition: format!("{label}: holders"),
                part: "each holder".into(),
            },
            note: Some(format!("{n_users} reports, each {}-LDP", self.epsilon)),
        })?;
        Ok(())
    }
}

/// **Simulation only**: the exact sum of `n` iid Laplace(`scale`) variables, as
/// Gamma(n, scale) − Gamma(n, scale) (Laplace(b) = Exp(b) − Exp(b)).
pub fn sum_of_laplace(noise: &mut Noise, n: u64, scale: f64) -> Result<f64> {
    if n == 0 {
        return Ok(0.0);
    }
    let g = Gamma::new(n as f64, scale)
        .map_err(|e| invalid("scale", format!("Gamma({n}, {scale}): {e}")))?;
    Ok(g.sample(noise) - g.sample(noise))
}
