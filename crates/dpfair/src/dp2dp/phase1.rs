//! Phase 1: the private class-probability model p̄ on the labelled split, through
//! the `learn` crate — output-perturbed logistic regression (P1-OP, the experiments' choice) or
//! DP-SGD (P1-SGD, Algorithm 2 with clipping) — or, for the non-private reference, the exact
//! L2-regularised logistic regression (p̂). S is not a feature (the paper's experiments).

use super::config::{Config, Phase1};
use super::error::Result;
use dpfair_learn::output_perturbation::OpCalibration;
use dpfair_learn::{
    Architecture, Classifier, DpSgdConfig, LogisticConfig, OutputPerturbationConfig,
    PrivateLogistic, fit_dp_sgd, fit_logistic, fit_output_perturbation,
};
use dpfair_privacy::{Ledger, Noise, Relation};
use ndarray::ArrayView2;

/// The Phase-1 procedure `cfg.phase1` stands for on `n` rows of `d` features and `k` classes:
/// [`Phase1::Auto`] becomes output perturbation or [`Phase1::dp_sgd_default`] by the noise ratio
/// of its doc (public numbers only); the other variants are returned as they are.
pub fn resolve(cfg: &Config, n: usize, d: usize, k: usize) -> Result<Phase1> {
    let Phase1::Auto { l2, feature_bound } = cfg.phase1 else {
        return Ok(cfg.phase1.clone());
    };
    let op = Phase1::OutputPerturbation { l2, feature_bound };
    if !cfg.is_private() {
        return Ok(op);
    }
    let (_, _, gaussian) = op_config(cfg, l2, feature_bound).calibrate(n, d, k)?;
    // Weights: one score row per class (multinomial), one for K = 2 (binary).
    let rows = if k == 2 { 1 } else { k };
    let p = (rows * (d + 1)) as f64;
    let weight_bound = (2.0 * (k as f64).ln() / l2).sqrt();
    Ok(
        if gaussian.sigma() * p.sqrt() <= Phase1::AUTO_MAX_NOISE_RATIO * weight_bound {
            op
        } else {
            Phase1::dp_sgd_default()
        },
    )
}

fn op_config(cfg: &Config, l2: f64, feature_bound: f64) -> OutputPerturbationConfig {
    OutputPerturbationConfig {
        epsilon: cfg.epsilon,
        delta: cfg.delta,
        l2,
        feature_bound,
        // zCDP, so it RDP-composes with Phase 2 in the ledger.
        calibration: OpCalibration::Rdp,
        ..OutputPerturbationConfig::default()
    }
}

/// Fits p̄ on (x, y) with classes `0..k`, charging `ledger` at (ε, δ) of `cfg`; the procedure is
/// [`resolve`]d first.
pub fn fit(
    cfg: &Config,
    x: ArrayView2<'_, f64>,
    y: &[u32],
    k: usize,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Classifier> {
    let phase1 = resolve(cfg, x.nrows(), x.ncols(), k)?;
    if !cfg.is_private() {
        let l2 = match phase1 {
            Phase1::OutputPerturbation { l2, .. } | Phase1::Auto { l2, .. } => l2,
            // scikit-learn's C = 1 (Table 1).
            Phase1::DpSgd { .. } => 1.0 / x.nrows().max(1) as f64,
        };
        let model = fit_logistic(
            &LogisticConfig {
                l2,
                ..LogisticConfig::default()
            },
            x,
            y,
            k,
        )?;
        return Ok(Classifier::Logistic(model));
    }
    let private = match &phase1 {
        Phase1::OutputPerturbation { l2, feature_bound } | Phase1::Auto { l2, feature_bound } => {
            PrivateLogistic::OutputPerturbation(fit_output_perturbation(
                &op_config(cfg, *l2, *feature_bound),
                x,
                y,
                k,
                ledger,
                noise,
            )?)
        }
        Phase1::DpSgd {
            epochs,
            expected_batch,
            learning_rate,
            clip,
        } => PrivateLogistic::DpSgd(fit_dp_sgd(
            &DpSgdConfig {
                epsilon: cfg.epsilon,
                delta: cfg.delta,
                epochs: *epochs,
                expected_batch: *expected_batch,
                learning_rate: *learning_rate,
                clip: *clip,
                architecture: Architecture::Logistic,
                relation: Relation::Substitution,
                ..DpSgdConfig::default()
            },
            x,
            y,
            k,
            ledger,
            noise,
        )?),
    };
    Ok(private.classifier())
}
