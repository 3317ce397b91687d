//! Audit of LPCT's local randomiser (Ma & Yang, eq. (5)–(6): Ũ = e_j + Lap(4/ε), Ṽ = y·e_j + Lap(4/ε))
//! on its worst-case pair of holders, through `dpfair::lpct::privatiser::LocalRelease` as shipped
//! (`dpfair_privacy::audit::local`).
//!
//! Pair: a holder in leaf 0 with label 1 against one in leaf 1 with label 1, on a two-leaf
//! partition: (U, V) moves by 4 in ℓ1 norm, the randomiser's whole diameter, so the pair's loss
//! reaches the claimed ε. Event: the pair's log-likelihood ratio at its maximum (probability
//! 1/16 under the first holder). The planted bug is the noise scale × 0.7.
//!
//! The Hadamard randomiser (`dpfair::lpct::privatiser::HadamardRelease`, `ldp partition
//! --mechanism hadamard`) is audited on the same two holders (cells 1 and 3 of a two-leaf
//! partition), projected on the pair's privacy loss (`dpfair_privacy::audit::local::HadamardPair`:
//! every pair of cells is a worst case); its planted bug runs the flip at ε/0.7.

use super::{Finding, Planted, Size, timed};
use crate::error::{CliError, CliResult};
use dpfair::lpct::privatiser::{HadamardRelease, LocalRelease, REPORT_SENSITIVITY};
use dpfair_privacy::audit::local::{
    HadamardPair, LaplacePair, audit_hadamard_randomiser, audit_laplace_randomiser,
};
use dpfair_privacy::{Noise, audit::AuditReport};

const ALPHA: f64 = 0.01;
/// The claimed ε of the two audits (1 and 4, as the black-box audit).
pub const CLAIMS: [f64; 2] = [1.0, 4.0];
/// The planted bug's noise scale factor.
pub const SCALE_BUG: f64 = 0.7;

/// Reports per holder.
pub fn trials(size: Size) -> usize {
    match size {
        Size::Quick => 300_000,
        Size::Thorough => 2_000_000,
    }
}

/// The worst-case pair at claimed ε (leaf 0 vs leaf 1, label 1, two leaves).
pub fn worst_pair(epsilon: f64) -> CliResult<LaplacePair> {
    LaplacePair::new(
        vec![1.0, 0.0, 1.0, 0.0],
        vec![0.0, 1.0, 0.0, 1.0],
        REPORT_SENSITIVITY / epsilon,
    )
    .map_err(CliError::internal)
}

/// The randomiser run at `run_epsilon` (the bug: a larger one, i.e. a smaller scale), audited
/// against the pair claimed at `epsilon`.
pub fn audit_randomiser(
    epsilon: f64,
    run_epsilon: f64,
    trials: usize,
    seed: u64,
) -> CliResult<AuditReport> {
    let pair = worst_pair(epsilon)?;
    let release = LocalRelease::new(run_epsilon, 2).map_err(CliError::internal)?;
    audit_laplace_randomiser(&mut Noise::seeded(seed), trials, ALPHA, &pair, |i, nz| {
        let r = release
            .report(nz, Some(i), 1)
            .map_err(|e| dpfair_privacy::error::invalid("report", e.to_string()))?;
        Ok([r.u, r.v].concat())
    })
    .map_err(CliError::internal)
}

/// The Hadamard randomiser run at `run_epsilon`, audited against the claim `epsilon`: holders
/// (leaf 0, label 1) and (leaf 1, label 1) of a two-leaf partition.
pub fn audit_hadamard(
    epsilon: f64,
    run_epsilon: f64,
    trials: usize,
    seed: u64,
) -> CliResult<AuditReport> {
    let pair = HadamardPair::new(1, 3, epsilon).map_err(CliError::internal)?;
    let release = HadamardRelease::new(run_epsilon, 2).map_err(CliError::internal)?;
    audit_hadamard_randomiser(&mut Noise::seeded(seed), trials, ALPHA, &pair, |i, nz| {
        release
            .report(nz, i, 1)
            .map_err(|e| dpfair_privacy::error::invalid("report", e.to_string()))
    })
    .map_err(CliError::internal)
}

pub fn lpct(size: Size, seed: u64, method: &str) -> CliResult<Vec<Finding>> {
    let laplace = Randomiser {
        name: "local randomiser (U, V)",
        neighbours: "two holders: leaf 0 vs leaf 1, label 1 (ℓ1 distance 4, the worst case)",
        bug: format!("noise scale × {SCALE_BUG}"),
        audit: audit_randomiser,
    };
    let hadamard = Randomiser {
        name: "Hadamard randomiser (row, bit)",
        neighbours: "two holders: leaf 0 vs leaf 1, label 1 (cells 1 and 3; every pair of cells is a worst case)",
        bug: format!("flip probability of ε/{SCALE_BUG}"),
        audit: audit_hadamard,
    };
    let mut out = findings(&laplace, size, seed, method)?;
    out.extend(findings(&hadamard, size, seed + 100, method)?);
    Ok(out)
}

/// One audited randomiser: `audit(claimed ε, run ε, trials, seed)`.
struct Randomiser {
    name: &'static str,
    neighbours: &'static str,
    bug: String,
    audit: fn(f64, f64, usize, u64) -> CliResult<AuditReport>,
}

/// The randomiser at each claimed ε, honest and with its planted bug (run at ε/0.7).
fn findings(r: &Randomiser, size: Size, seed: u64, method: &str) -> CliResult<Vec<Finding>> {
    let n = trials(size);
    CLAIMS
        .iter()
        .enumerate()
        .map(|(k, &eps)| {
            let s = seed + 2 * k as u64;
            let t = timed(|| {
                Ok((
                    (r.audit)(eps, eps, n, s)?,
                    (r.audit)(eps, eps / SCALE_BUG, n, s + 1)?,
                ))
            })?;
            let (honest, planted) = t.value;
            Ok(Finding {
                audit: format!("{method}: {} at ε = {eps}", r.name),
                neighbours: r.neighbours.into(),
                event: format!(
                    "privacy-loss statistic of the pair ≥ {:.3} (counts {:?} of {})",
                    honest.event.threshold, honest.counts, honest.n
                ),
                bound: "Clopper–Pearson (two-sample threshold auditor)".into(),
                claimed_epsilon: eps,
                delta: 0.0,
                epsilon_lower: honest.epsilon_lower,
                confidence: honest.confidence,
                planted: vec![Planted {
                    bug: r.bug.clone(),
                    epsilon_lower: planted.epsilon_lower,
                }],
                runtime_seconds: t.seconds,
            })
        })
        .collect()
}
