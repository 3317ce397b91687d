//! The Laplace mechanism (Dwork, McSherry, Nissim, Smith 2006; Dwork & Roth 2014 Def. 3.3,
//! Thm 3.6) with exact discrete Laplace noise on a 2^k lattice: ε = Δ₁/b.

use super::{LaplaceSteps, add_laplace, entry, lattice_note, positive, to_lattice};
use crate::Noise;
use crate::error::Result;
use crate::ledger::{Cost, Ledger, Relation};
use crate::samplers::lattice::{Lattice, Norm};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Calibration {
    Epsilon(f64),
    Scale(f64),
}

/// Laplace noise calibrated to an ℓ1 sensitivity: pure ε-DP with ε = Δ₁/b.
#[derive(Clone, Debug, PartialEq)]
pub struct Laplace {
    sensitivity: f64,
    calibration: Calibration,
    relation: Relation,
}

/// What one release will do: lattice, effective sensitivity, scale and cost.
struct Plan {
    lattice: Lattice,
    sensitivity: f64,
    scale: f64,
    epsilon: f64,
}

impl Laplace {
    /// Scale b = Δ₁/ε (plus the lattice rounding in Δ₁): spends exactly ε per release.
    pub fn from_epsilon(sensitivity_l1: f64, epsilon: f64) -> Result<Self> {
        Ok(Laplace {
            sensitivity: positive("sensitivity_l1", sensitivity_l1)?,
            calibration: Calibration::Epsilon(positive("epsilon", epsilon)?),
            relation: Relation::Substitution,
        })
    }

    /// A fixed scale b: spends ε = Δ₁/b (Δ₁ including the lattice rounding) per release.
    pub fn from_scale(sensitivity_l1: f64, scale: f64) -> Result<Self> {
        Ok(Laplace {
            sensitivity: positive("sensitivity_l1", sensitivity_l1)?,
            calibration: Calibration::Scale(positive("scale", scale)?),
            relation: Relation::Substitution,
        })
    }

    /// Declares that the sensitivity was derived for `relation` (default: substitution).
    pub fn with_relation(mut self, relation: Relation) -> Self {
        self.relation = relation;
        self
    }

    /// The declared ℓ1 sensitivity.
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// The nominal scale b (before the lattice rounding is added to the sensitivity).
    pub fn scale(&self) -> f64 {
        match self.calibration {
            Calibration::Epsilon(e) => self.sensitivity / e,
            Calibration::Scale(b) => b,
        }
    }

    fn plan(&self, dim: usize) -> Result<Plan> {
        let lattice = Lattice::for_release(self.sensitivity, Norm::L1, dim, self.scale())?;
        let sensitivity = lattice.effective_sensitivity(self.sensitivity);
        let (scale, epsilon) = match self.calibration {
            Calibration::Epsilon(e) => ((sensitivity / e).next_up(), e),
            Calibration::Scale(b) => (b, (sensitivity / b).next_up()),
        };
        Ok(Plan {
            lattice,
            sensitivity,
            scale,
            epsilon,
        })
    }

    /// What a release of `dim` coordinates charges.
    pub fn cost(&self, dim: usize) -> Result<Cost> {
        Ok(Cost::Pure {
            epsilon: self.plan(dim)?.epsilon,
        })
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

    /// Releases a vector whose ℓ1 sensitivity (as a whole) is the declared one: one ledger entry,
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
        let laplace = LaplaceSteps::new(&plan.lattice, plan.scale)?;
        ledger.charge(entry(
            label,
            "laplace",
            self.relation,
            plan.sensitivity,
            Norm::L1.name(),
            plan.scale,
            Cost::Pure {
                epsilon: plan.epsilon,
            },
            Some(lattice_note(
                &plan.lattice,
                self.sensitivity,
                plan.sensitivity,
            )),
        ))?;
        add_laplace(noise, &plan.lattice, &steps, &laplace)
    }
}
