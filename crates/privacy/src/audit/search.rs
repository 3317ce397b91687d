//! Neighbour search (in the spirit of DP-Auditorium's testers, Kong et al. 2024): among candidate
//! pairs of neighbouring data sets, find the pair and the output event with the largest empirical
//! privacy loss, then confirm it on fresh samples.
//!
//! 1. **Screening**: each candidate pair is audited with the two-sample threshold auditor
//!    ([`super::threshold::audit`]) on `screen_trials` runs per input.
//! 2. **Confirmation**: the pair with the largest screening bound is audited again on
//!    `confirm_trials` fresh runs per input. The choice of pair depends only on the screening
//!    samples, which are independent of the confirmation samples, so the confirmed bound keeps
//!    the auditor's guarantee: a correct mechanism reports ε_lower > ε with probability ≤ α.
//!
//! The screening bounds themselves are *not* valid lower bounds (the maximum over candidates is
//! biased upwards); they are reported only to show what the search saw.

use super::threshold::{AuditReport, audit};
use crate::Noise;
use crate::error::{Result, invalid};
use serde::{Deserialize, Serialize};

/// One candidate pair of neighbouring inputs, with a name saying what differs.
#[derive(Clone, Debug)]
pub struct Candidate<D> {
    pub name: String,
    pub pair: [D; 2],
}

/// What the search found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchReport {
    /// (name, screening ε_lower) of every candidate, in the order given.
    pub screened: Vec<(String, f64)>,
    /// Index of the chosen pair.
    pub chosen: usize,
    pub chosen_name: String,
    /// The confirmation audit of the chosen pair (valid at its confidence).
    pub confirmed: AuditReport,
}

/// Runs the search of the module doc. `mechanism(data, noise)` releases its output on `data`,
/// projected to one real number.
pub fn search_neighbours<D, F>(
    noise: &mut Noise,
    candidates: &[Candidate<D>],
    screen_trials: usize,
    confirm_trials: usize,
    delta: f64,
    alpha: f64,
    mut mechanism: F,
) -> Result<SearchReport>
where
    F: FnMut(&D, &mut Noise) -> Result<f64>,
{
    if candidates.is_empty() {
        return Err(invalid("candidates", "need at least one pair"));
    }
    let mut screened = Vec::with_capacity(candidates.len());
    for c in candidates {
        let r = audit(noise, screen_trials, delta, alpha, |i, nz| {
            mechanism(&c.pair[i], nz)
        })?;
        screened.push((c.name.clone(), r.epsilon_lower));
    }
    let chosen = screened.iter().enumerate().fold(
        0,
        |best, (i, s)| if s.1 > screened[best].1 { i } else { best },
    );
    let c = &candidates[chosen];
    let confirmed = audit(noise, confirm_trials, delta, alpha, |i, nz| {
        mechanism(&c.pair[i], nz)
    })?;
    Ok(SearchReport {
        screened,
        chosen,
        chosen_name: c.name.clone(),
        confirmed,
    })
}
