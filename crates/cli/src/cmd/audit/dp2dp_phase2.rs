//! Whole-run audit of DP2DP's Phase 2 (Algorithm 1 with its strict accounting,
//! `dp2dp::phase2::release`): the released frequencies π̄ and multipliers λ̄ of a complete
//! multi-step run, over many runs on two neighbouring pools (the two-sample threshold auditor,
//! `dpfair_privacy::audit::audit`). λ̄ has only 2K coordinates, too few for a one-run audit with
//! many canaries, so this audit repeats the whole run instead.
//!
//! **Pools** (public, generated): `POOL` rows, K = 3 classes. Every row but row 0 has Phase-1
//! probabilities one-hot at class 2 and alternating groups; the canary row 0 is one-hot at class 0
//! and in group +1 (first pool) or −1 (second pool): a replace-one pair that moves the frequency
//! release by 1/N and flips the canary's whole direction u_0 = J_sᵀσ_0/π̄_s (norm up to
//! 2·C_u apart, the charged sensitivity). With a tiny β the soft-max is one-hot at each row's own
//! class, and with a small step size λ̄ stays far below π̄, so no row changes class during the run:
//! the class-0 coordinates see only the canary and the noise.
//!
//! **Schedule**: q = 1 (batch = N: no subsampling to hide the canary), T = `STEPS`, η₀ = 10⁻³.
//! **Statistic**: λ̄⁽¹⁾_0 − λ̄⁽²⁾_0 (the canary's direction); the auditor picks the threshold event
//! on one half of the runs and bounds ε by Clopper–Pearson on the other half.
//! **Planted bug**: the noise multiplier × 0.3 (Phase 2 takes no multiplier: the run is
//! calibrated at the ε whose multiplier is 0.3 times the claim's, and audited at the claim).

use super::{Finding, Planted, Size, timed};
use crate::error::{CliError, CliResult};
use dpfair::dp2dp::accounting::phase2_epsilon;
use dpfair::dp2dp::phase2::{Release, release};
use dpfair::dp2dp::{Config, Iterate};
use dpfair::model::Accounting;
use dpfair_privacy::audit::{AuditReport, audit};
use dpfair_privacy::{Ledger, Noise};
use ndarray::Array2;

const POOL: usize = 100;
const K: usize = 3;
const STEPS: usize = 2;
const CLAIM: f64 = 2.0;
const DELTA: f64 = 1e-5;
const ALPHA: f64 = 0.01;

/// Runs per pool. The clamp of λ̄ at 0 hides about half of the canary's shift (one of its two
/// coordinates sits at 0), so the planted bug shows as ≈ 1-GDP: 40,000 runs (20,000 held out)
/// are what a threshold audit needs to bound it above the claim of 2.
fn trials(size: Size) -> usize {
    match size {
        Size::Quick => 40_000,
        Size::Thorough => 400_000,
    }
}

/// The pool for input 0 (canary in group +1) or 1 (group −1): (probabilities, signs).
fn pool(input: usize) -> (Array2<f64>, Vec<f64>) {
    let mut probs = Array2::zeros((POOL, K));
    let mut signs = Vec::with_capacity(POOL);
    for i in 0..POOL {
        probs[[i, if i == 0 { 0 } else { 2 }]] = 1.0;
        signs.push(if i % 2 == 0 { 1.0 } else { -1.0 });
    }
    if input == 1 {
        signs[0] = -1.0;
    }
    (probs, signs)
}

fn config(epsilon: f64) -> Config {
    Config {
        epsilon,
        delta: DELTA,
        accounting: Accounting::Strict,
        batch: POOL,
        iterations: STEPS,
        eta0: 1e-3,
        iterate: Iterate::Last,
        ..Config::default()
    }
}

fn run(cfg: &Config, input: usize, noise: &mut Noise) -> CliResult<Release> {
    let (probs, signs) = pool(input);
    release(cfg, probs.view(), &signs, &mut Ledger::unlimited(), noise).map_err(CliError::internal)
}

/// The threshold audit of `cfg`'s whole Phase 2 on the two pools.
fn audit_config(cfg: &Config, trials: usize, seed: u64) -> CliResult<AuditReport> {
    audit(
        &mut Noise::seeded(seed),
        trials,
        DELTA,
        ALPHA,
        |input, noise| {
            let (probs, signs) = pool(input);
            let r = release(cfg, probs.view(), &signs, &mut Ledger::unlimited(), noise).map_err(
                |e| dpfair_privacy::PrivacyError::InvalidParameter {
                    name: "dp2dp phase 2",
                    reason: e.to_string(),
                },
            )?;
            Ok(r.lambda[0] - r.lambda[K])
        },
    )
    .map_err(CliError::internal)
}

/// DP2DP Phase 2, strict, whole run.
pub fn phase2(size: Size, seed: u64) -> CliResult<Finding> {
    let honest = config(CLAIM);
    // The claim's multiplier (public: it depends on N, q, T, ε, δ, σ_π only).
    let z = run(&honest, 0, &mut Noise::seeded(seed))?
        .report
        .noise_multiplier;
    let pi_rho = 0.5 / (POOL as f64 * honest.sigma_pi_for(POOL)).powi(2);
    // Substitution: the add/remove accountant at z/2 (`dp2dp::accounting::calibrate`).
    let bug_epsilon = phase2_epsilon(pi_rho, 1.0, 0.3 * z / 2.0, STEPS as u64, DELTA)
        .map_err(CliError::internal)?;
    let bug = config(bug_epsilon);
    let z_bug = run(&bug, 0, &mut Noise::seeded(seed))?
        .report
        .noise_multiplier;
    let n = trials(size);
    let t = timed(|| {
        Ok((
            audit_config(&honest, n, seed)?,
            audit_config(&bug, n, seed + 1)?,
        ))
    })?;
    let (h, b) = t.value;
    Ok(Finding {
        audit: format!(
            "dp2dp: Phase 2 (phase2::release, strict), whole run: π̄ and λ̄ after {STEPS} \
             steps, q = 1, z = {z:.2}"
        ),
        neighbours: format!(
            "replace-one: a pool of {POOL} rows, the canary row's group +1 or −1 \
             ({n} runs per pool)"
        ),
        event: format!(
            "λ̄⁽¹⁾_0 − λ̄⁽²⁾_0 {} {:.3e} (counts {:?} of {})",
            if h.event.upper { "≥" } else { "≤" },
            h.event.threshold,
            h.counts,
            h.n
        ),
        bound: "Clopper–Pearson on the held-out half (two-sample threshold auditor)".into(),
        claimed_epsilon: CLAIM,
        delta: DELTA,
        epsilon_lower: h.epsilon_lower,
        confidence: h.confidence,
        planted: vec![Planted {
            bug: format!(
                "noise multiplier × 0.3 (z = {z_bug:.2}, the calibration of ε = \
                 {bug_epsilon:.2}, claimed as {CLAIM}; counts {:?} of {})",
                b.counts, b.n
            ),
            epsilon_lower: b.epsilon_lower,
        }],
        runtime_seconds: t.seconds,
    })
}
