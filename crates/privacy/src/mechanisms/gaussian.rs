//! The Gaussian mechanism with exact discrete Gaussian noise (Canonne, Kamath, Steinke 2020) on a
//! 2^k lattice. Calibrations:
//! * [`Gaussian::analytic`] (default for (ε, δ)): the smallest σ for which the Gaussian mechanism
//!   is (ε, δ)-DP, from the exact privacy profile (Balle & Wang 2018, Thm 8 / Alg. 1), any ε > 0;
//! * [`Gaussian::classical`]: σ = Δ₂√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm 3.22), valid for
//!   ε < 1 only: a paper option;
//! * [`Gaussian::from_sigma`] and [`Gaussian::from_zcdp`]: ρ-zCDP with ρ = Δ₂²/(2σ²)
//!   (Bun & Steinke 2016, Prop. 1.6).
//!
//! Note on the (ε, δ) calibrations: the analytic and classical formulas are derived for the
//! continuous Gaussian; the discrete Gaussian with the same σ has essentially the same privacy
//! profile (CKS20 §2–3 compare the two and find them nearly identical at the σ used in practice).
//! The zCDP calibrations carry over exactly.

use super::{add_gaussian, entry, lattice_note, positive, to_lattice};
use crate::Noise;
use crate::accounting;
use crate::error::{Result, invalid};
use crate::ledger::{Cost, Ledger, Relation};
use crate::samplers::lattice::{Lattice, Norm};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Calibration {
    Analytic { epsilon: f64, delta: f64 },
    Classical { epsilon: f64, delta: f64 },
    Sigma,
    Zcdp { rho: f64 },
}

/// Gaussian noise calibrated to an ℓ2 sensitivity.
#[derive(Clone, Debug, PartialEq)]
pub struct Gaussian {
    sensitivity: f64,
    sigma: f64,
    calibration: Calibration,
    relation: Relation,
}

struct Plan {
    lattice: Lattice,
    sensitivity: f64,
    sigma_steps: u64,
    sigma: f64,
    cost: Cost,
}

fn check_delta(delta: f64) -> Result<f64> {
    if delta > 0.0 && delta < 1.0 {
        Ok(delta)
    } else {
        Err(invalid("delta", format!("must be in (0, 1), got {delta}")))
    }
}

impl Gaussian {
    /// (ε, δ)-DP with the analytic calibration of Balle & Wang (2018), valid for every ε > 0.
    pub fn analytic(sensitivity_l2: f64, epsilon: f64, delta: f64) -> Result<Self> {
        let (sensitivity, epsilon, delta) = (
            positive("sensitivity_l2", sensitivity_l2)?,
            positive("epsilon", epsilon)?,
            check_delta(delta)?,
        );
        Ok(Gaussian {
            sensitivity,
            sigma: accounting::analytic_gaussian_sigma(sensitivity, epsilon, delta)?,
            calibration: Calibration::Analytic { epsilon, delta },
            relation: Relation::Substitution,
        })
    }

    /// PAPER OPTION: (ε, δ)-DP with the classical σ = Δ₂√(2 ln(1.25/δ))/ε, valid for ε < 1 only
    /// (refused otherwise). Needs more noise than [`Gaussian::analytic`] at every ε.
    pub fn classical(sensitivity_l2: f64, epsilon: f64, delta: f64) -> Result<Self> {
        let sensitivity = positive("sensitivity_l2", sensitivity_l2)?;
        let delta = check_delta(delta)?;
        Ok(Gaussian {
            sensitivity,
            sigma: accounting::classical_gaussian_sigma(sensitivity, epsilon, delta)?,
            calibration: Calibration::Classical { epsilon, delta },
            relation: Relation::Substitution,
        })
    }

    /// A fixed σ: ρ-zCDP with ρ = Δ₂²/(2σ²) (Δ₂ including the lattice rounding).
    pub fn from_sigma(sensitivity_l2: f64, sigma: f64) -> Result<Self> {
        Ok(Gaussian {
            sensitivity: positive("sensitivity_l2", sensitivity_l2)?,
            sigma: positive("sigma", sigma)?,
            calibration: Calibration::Sigma,
            relation: Relation::Substitution,
        })
    }

    /// ρ-zCDP: σ = Δ₂/√(2ρ).
    pub fn from_zcdp(sensitivity_l2: f64, rho: f64) -> Result<Self> {
        let sensitivity = positive("sensitivity_l2", sensitivity_l2)?;
        let rho = positive("rho", rho)?;
        Ok(Gaussian {
            sensitivity,
            sigma: sensitivity / (2.0 * rho).sqrt(),
            calibration: Calibration::Zcdp { rho },
            relation: Relation::Substitution,
        })
    }

    /// Declares that the sensitivity was derived for `relation` (default: substitution).
    pub fn with_relation(mut self, relation: Relation) -> Self {
        self.relation = relation;
        self
    }

    /// σ for the declared sensitivity. A release uses at least this (slightly more for the
    /// (ε, δ) and zCDP calibrations, which also cover the lattice rounding).
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The declared ℓ2 sensitivity.
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    fn plan(&self, dim: usize) -> Result<Plan> {
        let lattice = Lattice::for_release(self.sensitivity, Norm::L2, dim, self.sigma)?;
        let sensitivity = lattice.effective_sensitivity(self.sensitivity);
        let (sigma, cost) = match self.calibration {
            Calibration::Analytic { epsilon, delta } => (
                accounting::analytic_gaussian_sigma(sensitivity, epsilon, delta)?,
                Cost::Approx { epsilon, delta },
            ),
            Calibration::Classical { epsilon, delta } => (
                accounting::classical_gaussian_sigma(sensitivity, epsilon, delta)?,
                Cost::Approx { epsilon, delta },
            ),
            Calibration::Sigma => (
                self.sigma,
                Cost::Zcdp {
                    rho: (sensitivity * sensitivity / (2.0 * self.sigma * self.sigma)).next_up(),
                },
            ),
            Calibration::Zcdp { rho } => (
                (sensitivity / (2.0 * rho).sqrt()).next_up(),
                Cost::Zcdp { rho },
            ),
        };
        // Rounding σ up to whole lattice steps only adds noise.
        let sigma_steps = lattice.steps_ceil(sigma)?;
        Ok(Plan {
            sigma: sigma_steps as f64 * lattice.spacing(),
            lattice,
            sensitivity,
            sigma_steps,
            cost,
        })
    }

    /// What a release of `dim` coordinates charges.
    pub fn cost(&self, dim: usize) -> Result<Cost> {
        Ok(self.plan(dim)?.cost)
    }

    /// Releases one value (one ledger entry).
    pub fn release(
        &self,
        ledger: &mut Ledger,
        noise: &mut Noise,
        label: &str,
        value: f64,
    ) -> Result<f64> {
        Ok(self.release_vec(ledger, noise, label, &[value])?[0])
    }

    /// Releases a vector whose ℓ2 sensitivity (as a whole) is the declared one: one ledger entry,
    /// independent noise per coordinate. An empty vector releases nothing and costs nothing.
    pub fn release_vec(
        &self,
        ledger: &mut Ledger,
        noise: &mut Noise,
        label: &str,
        values: &[f64],
    ) -> Result<Vec<f64>> {
        if values.is_empty() {
            return Ok(Vec::new());
        }
        let plan = self.plan(values.len())?;
        let steps = to_lattice(&plan.lattice, values)?;
        let mechanism = match self.calibration {
            Calibration::Analytic { .. } => "gaussian (analytic)",
            Calibration::Classical { .. } => "gaussian (classical, paper option)",
            Calibration::Sigma => "gaussian",
            Calibration::Zcdp { .. } => "gaussian (zCDP)",
        };
        ledger.charge(entry(
            label,
            mechanism,
            self.relation,
            plan.sensitivity,
            Norm::L2.name(),
            plan.sigma,
            plan.cost,
            Some(lattice_note(
                &plan.lattice,
                self.sensitivity,
                plan.sensitivity,
            )),
        ))?;
        add_gaussian(noise, &plan.lattice, &steps, plan.sigma_steps)
    }
}
