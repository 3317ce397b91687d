//! Phase 1 (spec 004 §2.2): the private class-probability model p̄ on the labelled split, through
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

/// Fits p̄ on (x, y) with classes `0..k`, charging `ledger` at (ε, δ) of `cfg`.
pub fn fit(
    cfg: &Config,
    x: ArrayView2<'_, f64>,
    y: &[u32],
    k: usize,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Classifier> {
    if !cfg.is_private() {
        let l2 = match cfg.phase1 {
            Phase1::OutputPerturbation { l2, .. } => l2,
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
    let private = match &cfg.phase1 {
        Phase1::OutputPerturbation { l2, feature_bound } => {
            PrivateLogistic::OutputPerturbation(fit_output_perturbation(
                &OutputPerturbationConfig {
                    epsilon: cfg.epsilon,
                    delta: cfg.delta,
                    l2: *l2,
                    feature_bound: *feature_bound,
                    // zCDP, so it RDP-composes with Phase 2 in the ledger (spec §2.2 step 5).
                    calibration: OpCalibration::Rdp,
                    ..OutputPerturbationConfig::default()
                },
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
