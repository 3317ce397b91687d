//! The Gaussian mechanism with exact discrete Gaussian noise (Canonne, Kamath, Steinke 2020) on a
//! 2^k lattice. Calibrations:
//! * [`Gaussian::analytic`] (default for (ε, δ)): the smallest σ for which the Gaussian mechanism
//!   is (ε, δ)-DP, from the exact privacy profile (Balle & Wang 2018, Thm 8 / Alg. 1), any ε > 0;
//! * [`Gaussian::classical`]: σ = Δ₂√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm 3.22), valid for
//!   ε < 1 only: a paper option;
//! * [`Gaussian::from_sigma`] and [`Gaussian::from_zcdp`]: ρ-zCDP with ρ = Δ₂²/(2σ²)
//!   (Bun & Steinke 2016, Prop. 1.6).
//!
//! Note on the (ε, δ) calibrations: the analytic and classical formulas are proofs about the
//! continuous Gaussian, and a release samples the discrete Gaussian on a lattice of spacing g.
//! Per coordinate, the discrete law's mass at each lattice point within 40σ of the centre is
//! within a factor e^{±γ}, γ ≈ (g/σ)²·40²/24, of the continuous Gaussian rounded to the lattice
//! (which is covered by the continuous proof: post-processing), and the rest has mass below
//! e^{−800}. So the release is calibrated at (ε − 2dγ, (δ − tail)·e^{−dγ}) and is (ε, δ)-DP as
//! recorded; with dpfair's lattices 2dγ ≈ 1.3·10⁻¹⁰·(Δ/σ)² ([`accounting::discretisation`], the
//! derivation; the ledger entry's note states the slack). The zCDP calibrations carry over
//! exactly (CKS20 Thm 14: the discrete Gaussian's Rényi divergences are at most the continuous
//! one's).

use super::{add_gaussian, entry, lattice_note, positive, to_lattice};
use crate::Noise;
use crate::accounting::{self, discretisation, discretisation::Slack};
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
    /// The discrete-vs-continuous slack the (ε, δ) calibrations subtracted.
    slack: Option<Slack>,
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
        // (ε, δ) calibrations: the continuous formula at the target left after the lattice slack,
        // which is evaluated at the σ of the full target (a larger σ only shrinks the slack).
        let approx = |formula: fn(f64, f64, f64) -> Result<f64>, epsilon: f64, delta: f64| {
            let sigma0 = formula(sensitivity, epsilon, delta)?;
            let slack =
                discretisation::lattice_gaussian_slack(lattice.spacing(), sigma0, dim, epsilon)?;
            let (e, d) = slack.calibration_target(epsilon, delta)?;
            Ok::<_, crate::PrivacyError>((
                formula(sensitivity, e, d)?,
                Cost::Approx { epsilon, delta },
                Some(slack),
            ))
        };
        let (sigma, cost, slack) = match self.calibration {
            Calibration::Analytic { epsilon, delta } => {
                approx(accounting::analytic_gaussian_sigma, epsilon, delta)?
            }
            Calibration::Classical { epsilon, delta } => {
                approx(accounting::classical_gaussian_sigma, epsilon, delta)?
            }
            Calibration::Sigma => (
                self.sigma,
                Cost::Zcdp {
                    rho: (sensitivity * sensitivity / (2.0 * self.sigma * self.sigma)).next_up(),
                },
                None,
            ),
            Calibration::Zcdp { rho } => (
                (sensitivity / (2.0 * rho).sqrt()).next_up(),
                Cost::Zcdp { rho },
                None,
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
            slack,
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
            Some(match plan.slack {
                None => lattice_note(&plan.lattice, self.sensitivity, plan.sensitivity),
                Some(slack) => format!(
                    "{}; discrete Gaussian calibrated at (ε − {:.3e}, δ − {:.3e}) to cover its \
                     distance from the continuous Gaussian",
                    lattice_note(&plan.lattice, self.sensitivity, plan.sensitivity),
                    slack.epsilon,
                    slack.delta
                ),
            }),
        ))?;
        add_gaussian(noise, &plan.lattice, &steps, plan.sigma_steps)
    }
}
