//! `dpfair._native` accounting: ε of a DP-SGD run and the noise multiplier for a target ε
//! (the privacy crate's subsampled-Gaussian accountants; `dpfair.accounting` is the public face).

use crate::error::{guard, privacy_error, value_error};
use dpfair_privacy::Relation;
use dpfair_privacy::accounting::{self, Accountant};
use pyo3::prelude::*;

fn accountant(name: &str) -> PyResult<Accountant> {
    match name {
        "rdp" => Ok(Accountant::Rdp),
        "prv" => Ok(Accountant::Prv),
        "gdp" => Ok(Accountant::Gdp),
        other => Err(value_error(format!(
            "accountant `{other}`: expected `rdp`, `prv` or `gdp`"
        ))),
    }
}

fn relation(name: &str) -> PyResult<Relation> {
    match name {
        "add-remove" => Ok(Relation::AddRemove),
        "substitution" => Ok(Relation::Substitution),
        other => Err(value_error(format!(
            "relation `{other}`: expected `add-remove` or `substitution`"
        ))),
    }
}

/// ε at `delta` of `steps` Poisson-subsampled Gaussian steps (rate `sample_rate`, noise
/// multiplier `noise_multiplier`), certified for `relation`.
#[pyfunction]
pub fn sgm_epsilon(
    noise_multiplier: f64,
    sample_rate: f64,
    steps: u64,
    delta: f64,
    accountant_name: &str,
    relation_name: &str,
) -> PyResult<f64> {
    guard(|| {
        accounting::sgm_epsilon_for(
            relation(relation_name)?,
            accountant(accountant_name)?,
            sample_rate,
            noise_multiplier,
            steps,
            delta,
        )
        .map_err(privacy_error)
    })
}

/// The smallest noise multiplier whose run meets `(epsilon, delta)` for `relation`.
#[pyfunction]
pub fn sgm_noise_multiplier(
    epsilon: f64,
    delta: f64,
    sample_rate: f64,
    steps: u64,
    accountant_name: &str,
    relation_name: &str,
) -> PyResult<f64> {
    guard(|| {
        let relation = relation(relation_name)?;
        let z = accounting::sgm_noise_multiplier(
            accountant(accountant_name)?,
            sample_rate,
            steps,
            epsilon,
            delta,
        )
        .map_err(privacy_error)?;
        // The add/remove accountant sees z / 2 for replace-one neighbours: twice the noise.
        Ok(z / accounting::sgm_effective_noise_multiplier(1.0, relation))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sgm_epsilon, m)?)?;
    m.add_function(wrap_pyfunction!(sgm_noise_multiplier, m)?)?;
    Ok(())
}
