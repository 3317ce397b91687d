//! Mechanisms: the only way dpfair turns sensitive values into released values.
//!
//! Every mechanism computes its cost from its sensitivity and noise scale, records one
//! [`Entry`] (label, mechanism, neighbouring relation, sensitivity, norm, scale,
//! cost) with [`Ledger::charge`](crate::Ledger::charge) *before* it draws any noise, and refuses
//! to release when the ledger refuses the charge. Noise comes from the exact samplers of
//! [`crate::samplers`]; real values are released on a 2^k lattice
//! ([`crate::samplers::lattice`]) with the rounding counted in the sensitivity, so the recorded
//! sensitivity is the *effective* one (a little above the declared one; the note says by how much).
//!
//! Neighbouring relation: sensitivities are declared for replace-one (substitution) neighbours
//! unless a mechanism says otherwise ([`Laplace::with_relation`], [`Gaussian::with_relation`]);
//! DP-SGD ([`SubsampledGaussianRun::start`]) is certified for add/remove neighbours, like the
//! accountants it relies on, and records that; [`SubsampledGaussianRun::start_for`] with
//! substitution charges the conversion (sensitivity 2C: the accountant at z/2).
//!
//! | mechanism | sensitivity | noise | cost unit |
//! |---|---|---|---|
//! | [`Laplace`] | ℓ1 | discrete Laplace on the lattice | pure ε = Δ/b |
//! | [`Gaussian::analytic`], [`Gaussian::classical`] | ℓ2 | discrete Gaussian | (ε, δ) |
//! | [`Gaussian::from_sigma`], [`Gaussian::from_zcdp`] | ℓ2 | discrete Gaussian | ρ-zCDP, ρ = Δ²/(2σ²) |
//! | [`SubsampledGaussianRun`] | ℓ2 clip C | discrete Gaussian, σ = z·C | subsampled Gaussian (q, z, T) |
//! | [`LocalLaplace`] | ℓ1, per user | discrete Laplace | pure ε per user (parallel) |
//! | [`RandomizedResponse`] | any two inputs | exact k-ary RR | pure ε per record (parallel) |
//! | [`HadamardResponse`] | any two cells | uniform Hadamard row + exact binary RR | pure ε per user (parallel) |
//! | [`PrivUnitG`] | ℓ2 clip C, per user | exact K-ary RR among data-independent Gaussian candidates | pure ε per user (parallel) |
//! | [`noisy_histogram`], [`noisy_counts`] | 2 (substitution) or 1 (add/remove): the ledger's relation | discrete Laplace on counts | pure ε |
//! | [`noisy_row_count`] | 1 (add/remove) | discrete Laplace on n | pure ε |
//! | [`exponential_mechanism`], [`private_quantile`], [`private_range`] | score Δ | permute-and-flip | pure ε |
//! | [`auto_range`] | rank scores, Δ = 1 (either relation) | permute-and-flip, two releases | pure ε |
//!
//! Gaussian cost units: the (ε, δ) calibrations record `Cost::Approx` because (ε, δ) is what was
//! asked for and is the tight point of that release's privacy profile; a later conversion to zCDP
//! would lose. `from_sigma` and `from_zcdp` record `Cost::Zcdp`, because ρ = Δ²/(2σ²) holds
//! for the discrete Gaussian exactly as for the continuous one (Canonne, Kamath, Steinke 2020,
//! §2 "Privacy", scalar and multivariate), zCDP
//! costs add up, and the ledger composes many of them through their RDP curves (α·ρ) with one
//! conversion at the end: far tighter than adding per-release (ε_i, δ_i).

mod auto_range;
mod discrete;
mod dpsgd;
mod gaussian;
mod hadamard;
mod laplace;
mod local;
mod privunit;

pub use auto_range::{
    AUTO_RANGE_DECADES, AUTO_RANGE_STEPS_PER_DECADE, AutoRange, SPREAD_MULTIPLE, SPREAD_QUANTILE,
    auto_range, auto_range_grid,
};
pub use discrete::{
    RANGE_GRID, RANGE_QUANTILES, RandomizedResponse, exponential_mechanism, histogram_scale,
    histogram_sensitivity, noisy_counts, noisy_histogram, noisy_row_count, private_quantile,
    private_range,
};
pub use dpsgd::{StepNoise, SubsampledGaussianRun};
pub use gaussian::Gaussian;
pub use hadamard::{HadamardResponse, hadamard_sign};
pub use laplace::Laplace;
pub use local::LocalLaplace;
pub use privunit::PrivUnitG;

use crate::Noise;
use crate::error::{Result, invalid};
use crate::ledger::{Composition, Cost, Entry, Relation};
use crate::samplers::lattice::Lattice;
use crate::samplers::{discrete_gaussian_fill, discrete_laplace, discrete_laplace_small};
use num_traits::ToPrimitive;

/// Checks that `value` is finite and > 0.
pub(crate) fn positive(name: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(invalid(
            name,
            format!("must be finite and > 0, got {value}"),
        ))
    }
}

/// An entry for a sequential release (the ledger moves it into a parallel part when asked).
#[allow(clippy::too_many_arguments)]
pub(crate) fn entry(
    label: &str,
    mechanism: &str,
    relation: Relation,
    sensitivity: f64,
    norm: &str,
    scale: f64,
    cost: Cost,
    note: Option<String>,
) -> Entry {
    Entry {
        label: label.to_string(),
        mechanism: mechanism.to_string(),
        relation,
        sensitivity,
        norm: norm.to_string(),
        scale,
        cost,
        composition: Composition::Sequential,
        note,
    }
}

/// Rounds every value to the lattice (in lattice steps); fails on the first non-finite or
/// too-large value, naming its index.
pub(crate) fn to_lattice(lattice: &Lattice, values: &[f64]) -> Result<Vec<i128>> {
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| round_entry(lattice, i, v))
        .collect()
}

/// Entry `i` of a released vector, `v`, rounded to the lattice (in lattice steps).
pub(crate) fn round_entry(lattice: &Lattice, i: usize, v: f64) -> Result<i128> {
    lattice
        .round("values", v)
        .map_err(|e| invalid("values", format!("entry {i}: {e}")))
}

/// A discrete Laplace noise source with scale `scale` (a real number) in lattice steps.
pub(crate) struct LaplaceSteps {
    small: Option<(u64, u64)>,
    big: (num_bigint::BigUint, num_bigint::BigUint),
}

impl LaplaceSteps {
    pub(crate) fn new(lattice: &Lattice, scale: f64) -> Result<Self> {
        let (n, d) = lattice.steps_ratio(scale)?;
        let small = n.to_u64().zip(d.to_u64());
        Ok(LaplaceSteps { small, big: (n, d) })
    }

    pub(crate) fn sample(&self, noise: &mut Noise) -> Result<i128> {
        match self.small {
            Some((t, s)) => discrete_laplace_small(noise, t, s),
            None => discrete_laplace(noise, &self.big.0, &self.big.1)?
                .to_i128()
                .ok_or_else(|| invalid("scale", "noise sample out of the i128 range")),
        }
    }
}

/// `k + noise` in lattice steps, back to a real value.
pub(crate) fn noisy_value(lattice: &Lattice, k: i128, noise: i128) -> Result<f64> {
    noisy_steps(k, noise).map(|x| lattice.value(x))
}

/// `k + noise` in lattice steps, refusing an overflow.
pub(crate) fn noisy_steps(k: i128, noise: i128) -> Result<i128> {
    k.checked_add(noise)
        .ok_or_else(|| invalid("values", "value plus noise overflows the lattice range"))
}

/// Adds discrete Gaussian noise of `sigma_steps` lattice steps to each rounded value.
pub(crate) fn add_gaussian(
    noise: &mut Noise,
    lattice: &Lattice,
    steps: &[i128],
    sigma_steps: u64,
) -> Result<Vec<f64>> {
    let mut draws = vec![0; steps.len()];
    discrete_gaussian_fill(noise, sigma_steps, &mut draws)?;
    steps
        .iter()
        .zip(draws)
        .map(|(&k, z)| noisy_value(lattice, k, z))
        .collect()
}

/// Adds discrete Laplace noise to each rounded value.
pub(crate) fn add_laplace(
    noise: &mut Noise,
    lattice: &Lattice,
    steps: &[i128],
    laplace: &LaplaceSteps,
) -> Result<Vec<f64>> {
    steps
        .iter()
        .map(|&k| noisy_value(lattice, k, laplace.sample(noise)?))
        .collect()
}

/// The note every lattice release records.
pub(crate) fn lattice_note(lattice: &Lattice, declared: f64, effective: f64) -> String {
    format!(
        "released on the 2^{} lattice; declared sensitivity {declared}, +{:.3e} for rounding",
        lattice.exponent(),
        effective - declared
    )
}
