//! Phase 2 = DP2DP, Algorithm 1 of Say et al., with its privacy accounting (Theorem 4.1):
//! step i) the private group frequencies, step ii) the noisy dual SGD, charged before any noise.
//!
//! **Strict** (default; the stated (ε, δ) holds for replace-one neighbours of D_N):
//! - one release π̄_{+1} = π̂_{+1} + N(0, σ_π²) of sensitivity 1/N, and π̄_{−1} = 1 − π̄_{+1}
//!   (post-processing; `docs/deviations.md#dp2dp-proportion-release`), both floored at π_floor (`docs/deviations.md#dp2dp-proportions-outside-the-unit-interval`);
//! - Poisson sampling with q = b/N, per-row directions u_i = J_{s_i}ᵀσ_i/π̄_{s_i} of ℓ2 norm
//!   ≤ C_u = √2/min π̄ and ρ·1 outside the noise (`docs/deviations.md#dp2dp-sampling-scheme-and-accountant`, `docs/deviations.md#dp2dp-gradient-sensitivity`), noise N(0, (z C_u)²) on the SUM (`docs/deviations.md#dp2dp-noise-on-the-sum`);
//!   the run is charged as the subsampled Gaussian for substitution (sensitivity 2C_u);
//! - z is the smallest multiplier whose RDP composition with the frequency release meets (ε, δ).
//!
//! **Paper** (`Accounting::Paper`): as published — two independent noises on π̂_{±1},
//! stratified sampling with replacement, σ_SGD = 4·z where z is the dp_accounting calibration
//! with q = b/N and Δ = 4 (as the paper's experiments). The ledger records what it really spends: the frequency
//! vector at sensitivity √2/N (`docs/deviations.md#dp2dp-proportion-release`), and the gradient sum at replace-one sensitivity 4√2 (`docs/deviations.md#dp2dp-gradient-sensitivity`) with
//! the per-record inclusion probability of the stratified sampler, q' = 1 − (1 − 1/(2N_min))^b
//! (`docs/deviations.md#dp2dp-sampling-scheme-and-accountant`; multiplicities > 1 are not accounted, so even this is an estimate, not a certificate).
//! With [`NoiseOn::Mean`] σ_SGD = 4z/b (Theorem 4.1's multiplier bσ/4 read literally, `docs/deviations.md#dp2dp-noise-on-the-sum`): what
//! the paper's "private ≈ non-private" figures suggest was run; the ledger shows its cost.

use super::accounting::{calibrate, paper_noise_multiplier};
use super::config::{Config, NoiseOn, StepScale};
use super::dual::{Pool, Sampling, SgdSettings, contribution_bound, run_sgd};
use super::error::{Error, Result};
pub use super::frequencies::SignCounts;
use crate::predictor::Accounting;
use dpfair_privacy::accounting::Accountant;
use dpfair_privacy::mechanisms::{Gaussian, SubsampledGaussianRun};
use dpfair_privacy::{Cost, Ledger, Noise, PrivacyError, Relation};
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

/// The released multipliers and frequencies, and the public numbers of the release.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Release {
    /// π̄ = [π̄_{−1}, π̄_{+1}].
    pub pi: [f64; 2],
    /// λ̄ = (λ̄⁽¹⁾, λ̄⁽²⁾), 2K values (under [`super::Iterate::Mixture`] the mixture's average,
    /// for the report).
    pub lambda: Vec<f64>,
    /// [`super::Iterate::Mixture`]: the iterates whose classifiers the rule mixes
    /// (`docs/deviations.md#dp2dp-mixture-of-iterates`); empty: the rule uses `lambda` alone
    /// (and models saved before the mixture existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mixture: Vec<Vec<f64>>,
    pub report: Report,
}

/// How Phase 2 was run (all public: configuration, N, and noise levels).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub n_pool: usize,
    /// Sampling rate recorded with the run (strict: b/N; paper: q' of the module docs).
    pub sampling_rate: f64,
    pub steps: u64,
    /// Noise multiplier z of the run (σ on the sum = z × bound).
    pub noise_multiplier: f64,
    /// σ_SGD: std of the noise added to the summed gradient.
    pub sigma_sgd: f64,
    /// ℓ2 bound of one row's contribution to the sum.
    pub contribution_bound: f64,
    pub sigma_pi: f64,
    /// Paper mode: the ε the paper's calibration claims (the ledger holds the real cost).
    pub claimed_epsilon: Option<f64>,
    /// Fraction of λ̄ at C_λ (`docs/deviations.md#dp2dp-c-lambda-unspecified`).
    pub at_bound: f64,
    /// The level the dual ascent aimed at ([`super::config::aimed_rho`]). `None` in models
    /// saved before the margin existed (they aimed at ρ); left out of the file then, so that
    /// their digest still matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aimed_rho: Option<f64>,
}

/// Runs Algorithm 1 on the pool: `probs` = p̄ of the pool rows (N × K), `signs` ±1.
/// Privacy: charges `ledger` before each noise draw; ε = ∞ in `cfg` runs the non-private DP2DP.
/// The group counts of step i) are taken in one pass ([`release_with_counts`]).
pub fn release(
    cfg: &Config,
    probs: ArrayView2<'_, f64>,
    signs: &[f64],
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Release> {
    release_with_counts(cfg, &SignCounts::of(signs)?, probs, signs, ledger, noise)
}

/// [`release`] with step i)'s group counts given, e.g. accumulated from parts of the pool and
/// merged ([`SignCounts`]); they must be the counts of `signs`.
pub fn release_with_counts(
    cfg: &Config,
    counts: &SignCounts,
    probs: ArrayView2<'_, f64>,
    signs: &[f64],
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Release> {
    cfg.validate()?;
    let n = signs.len();
    if counts.n() != n {
        return Err(Error::Data(format!(
            "group counts of {} rows for a pool of {n}",
            counts.n()
        )));
    }
    let n_plus = counts.n_plus();
    // Strict mode reads the group sizes only through π̄; the paper's accounting reads the
    // smallest one (an empty group counts as one row there, see `q_real`).
    let n_min = n_plus.min(n - n_plus);
    let steps = cfg.iterations as u64;
    let q = (cfg.batch as f64 / n as f64).min(1.0);
    let paper = cfg.accounting == Accounting::Paper;
    // A batch sums at most the pool (Poisson) or the batch size (the paper's draws with
    // replacement): the floating-point allowance's public bound on the terms
    // (docs/privacy.md, "Floating point").
    let max_terms = n.max(cfg.batch) as u64;
    let sigma_pi = cfg.sigma_pi_for(n);
    let sampling = if paper {
        Sampling::Stratified
    } else {
        Sampling::Poisson
    };
    let mut report = Report {
        n_pool: n,
        sampling_rate: q,
        steps,
        sigma_pi: if cfg.is_private() { sigma_pi } else { 0.0 },
        ..Report::default()
    };
    // Step i): the frequencies.
    let pi = counts.finalize(cfg, ledger, noise)?;
    // Step ii): the noise of the dual SGD, charged up front.
    let bound = contribution_bound(sampling, pi);
    report.contribution_bound = bound;
    let mut run = if !cfg.is_private() {
        None
    } else if paper {
        let z_paper =
            paper_noise_multiplier(sigma_pi, n, cfg.batch, steps, cfg.epsilon, cfg.delta)?;
        let sigma_sgd = match cfg.noise_on {
            NoiseOn::Sum => 4.0 * z_paper,
            NoiseOn::Mean => 4.0 * z_paper / cfg.batch as f64,
        };
        let q_real = 1.0 - (1.0 - 1.0 / (2.0 * n_min.max(1) as f64)).powi(cfg.batch as i32);
        report.sampling_rate = q_real;
        report.noise_multiplier = sigma_sgd / bound;
        report.claimed_epsilon = Some(cfg.epsilon);
        Some(SubsampledGaussianRun::start_for(
            Relation::Substitution,
            ledger,
            match cfg.noise_on {
                NoiseOn::Sum => "DP2DP dual SGD (paper: stratified with replacement, σ_SGD = 4z)",
                NoiseOn::Mean => {
                    "DP2DP dual SGD (paper, Theorem 4.1's convention: stratified with \
                     replacement, σ_SGD = 4z/b on the sum, docs/deviations.md#dp2dp-noise-on-the-sum)"
                }
            },
            q_real,
            sigma_sgd / bound,
            bound,
            steps,
            Accountant::Rdp,
        )?
        .with_float_sum_allowance(max_terms)?)
    } else {
        let g = Gaussian::from_sigma(1.0 / n as f64, sigma_pi)?;
        let pi_rho = match g.cost(1)? {
            Cost::Zcdp { rho } => rho,
            other => {
                return Err(Error::Data(format!(
                    "unexpected cost of the frequency release: {other}"
                )));
            }
        };
        let mut z = calibrate(pi_rho, q, steps, cfg.epsilon, cfg.delta, 2.0)?;
        // The ledger composes the parallel phases by the per-order maximum of their RDP curves,
        // which can convert to slightly more than either phase alone: raise z (by 0.2% steps)
        // until the ledger's own rule accepts the run.
        let start = |l: &mut Ledger, z: f64| {
            SubsampledGaussianRun::start_for(
                Relation::Substitution,
                l,
                "DP2DP dual SGD (Algorithm 1, Poisson q = b/N)",
                q,
                z,
                bound,
                steps,
                Accountant::Rdp,
            )?
            .with_float_sum_allowance(max_terms)
        };
        for _ in 0..500 {
            match start(&mut ledger.clone(), z) {
                Err(PrivacyError::BudgetExceeded { .. }) => z *= 1.002,
                _ => break,
            }
        }
        report.noise_multiplier = z;
        Some(start(ledger, z)?)
    };
    report.sigma_sgd = report.noise_multiplier * bound;
    let pool = Pool::new(probs, signs, pi)?;
    // The paper's procedure aims at ρ itself (docs/deviations.md#dp2dp-sampling-margin).
    let margin_z = if paper { 0.0 } else { cfg.margin_z };
    let aimed_rho = super::config::aimed_rho(cfg.rho, margin_z, n, pi);
    report.aimed_rho = Some(aimed_rho);
    let settings = SgdSettings {
        rho: aimed_rho,
        beta: cfg.beta,
        iterations: cfg.iterations,
        batch: cfg.batch,
        eta0: match cfg.step_scale {
            StepScale::Unit => cfg.eta0,
            StepScale::SmallestGroup => cfg.eta0 * pi[0].min(pi[1]),
        },
        step: cfg.step,
        c_lambda: cfg.c_lambda,
        iterate: cfg.iterate,
        sampling,
    };
    let out = run_sgd(&pool, &settings, run.as_mut(), noise)?;
    report.at_bound = out.at_bound;
    Ok(Release {
        pi,
        lambda: out.lambda,
        mixture: out.mixture,
        report,
    })
}
