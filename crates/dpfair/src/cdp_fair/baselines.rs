//! The three baselines of Xue & Yu, §5.2, beside CDP-Fair: privacy only ("CDP NF"), fairness
//! only ("NDP F") and neither ("NDP NF"). They share CDP-Fair's preparation (split, bandwidth,
//! kernel sums) and model type.

use super::{
    CalibrationScores, Config, Method, Model, Prepared, Resolved, assemble, check_alpha, prepare,
};
use crate::plugin::classifier::FairPluginClassifier;
use crate::plugin::error::{Error, Result};
use crate::plugin::kernel::Bandwidth;
use crate::plugin::release::{PiRelease, PluginEstimate, S1Accounting, S1Plan};
use crate::plugin::threshold::{GroupRule, ScoreSet, sweep_threshold};
use crate::predictor::Accounting;
use dpfair_data::Dataset;
use dpfair_privacy::{Entry, Ledger, Noise};

/// §5.2 "CDP NF" (privacy only): S1 on the training half with the whole budget for the two
/// function pairs (no `π̃` needed), classifier `1{η̃_a ≥ 1/2}`. The calibration half is unused,
/// as in the paper ("unfair classifiers are trained using only half of the available training
/// samples").
pub fn fit_privacy_only(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    let config = Config {
        cross_fit: Some(false),
        pi: Some(PiRelease::Skip),
        ..config.clone()
    };
    let p = prepare(&config, data, ledger, noise)?;
    let sums = p.sums(&p.folds[0].0)?;
    let plan = S1Plan {
        epsilon: p.r.epsilon,
        delta: p.r.delta,
        accounting: match p.r.accounting {
            Accounting::Strict => S1Accounting::Strict,
            Accounting::Paper => S1Accounting::Paper,
        },
        pi: PiRelease::Skip,
        c_k: 1.0,
        label_prefix: "privacy-only: ".into(),
    };
    let estimate = sums.release(&plan, ledger, noise)?;
    let rule = GroupRule::paper(0.0);
    Ok(p.model(
        Method::PrivacyOnly,
        vec![FairPluginClassifier { estimate, rule }],
    ))
}

/// §5.2 "NDP F" (fairness only): Algorithm 5 without any noise — exact coefficients, empirical
/// `π̂_a`, the exact sweep of the calibration curve without shift (Zeng et al. 2024b
/// post-processing with kernel initial estimates); cross-fitted when the configuration says so.
/// Non-private: recorded in `ledger` as `ε = ∞`. [`fairness_only_folds`], then
/// [`FairnessOnlyFolds::select`] at `config.alpha`.
pub fn fit_fairness_only(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    fairness_only_folds(config, data, ledger, noise)?.select(config.alpha)
}

/// [`fit_fairness_only`] before its threshold: each fold's exact estimate and calibration
/// scores. Nothing in it depends on α, so one serves a whole α sweep.
#[derive(Clone, Debug)]
pub struct FairnessOnlyFolds {
    r: Resolved,
    bandwidth: f64,
    split_seed: u64,
    folds: Vec<(PluginEstimate, ScoreSet)>,
}

/// The part of [`fit_fairness_only`] that does not depend on `config.alpha`.
///
/// ```
/// use dpfair::cdp_fair::{self, Config};
/// use dpfair::data::synthetic::{Design, FdpFairDesign};
/// use dpfair_privacy::{Budget, Ledger, Noise};
///
/// let data = FdpFairDesign::default().generate(400, 1).unwrap();
/// let config = Config { n_frequencies: 32, ..Config::default() };
/// let mut ledger = Ledger::new(Budget::approx(f64::INFINITY, 1e-6).unwrap());
/// let folds = cdp_fair::fairness_only_folds(&config, &data, &mut ledger, &mut Noise::seeded(1))
///     .unwrap();
/// for alpha in [0.05, 0.2] {
///     assert_eq!(folds.select(alpha).unwrap().alpha, alpha);
/// }
/// ```
pub fn fairness_only_folds(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<FairnessOnlyFolds> {
    let p = non_private(config, data, ledger, noise, "fairness-only baseline")?;
    let mut folds = Vec::new();
    for (train, cal) in &p.folds {
        let estimate = p.sums(train)?.non_private();
        let CalibrationScores { z: [z0, z1], .. } = p.scores(&estimate, cal)?;
        if z0.is_empty() || z1.is_empty() {
            return Err(Error::InvalidData(
                "a group is empty in the calibration half".into(),
            ));
        }
        let denom = [z0.len() as f64, z1.len() as f64];
        folds.push((estimate, ScoreSet::new(z0, z1, denom)));
    }
    Ok(FairnessOnlyFolds {
        r: p.r.clone(),
        bandwidth: p.h,
        split_seed: p.split_seed,
        folds,
    })
}

impl FairnessOnlyFolds {
    /// The fairness-only model at disparity level `alpha` (the exact sweep on every fold).
    pub fn select(&self, alpha: f64) -> Result<Model> {
        check_alpha(alpha)?;
        let r = Resolved {
            alpha,
            ..self.r.clone()
        };
        let out = self
            .folds
            .iter()
            .map(|(estimate, scores)| FairPluginClassifier {
                estimate: estimate.clone(),
                rule: sweep_threshold(scores, 0.0, alpha).rule,
            })
            .collect();
        Ok(assemble(
            &r,
            self.bandwidth,
            self.split_seed,
            Method::FairnessOnly,
            out,
        ))
    }
}

/// §5.2 "NDP NF" (neither): the group-wise kernel plug-in `1{η̂_a ≥ 1/2}` from the training half.
/// Non-private: recorded in `ledger` as `ε = ∞`.
pub fn fit_unconstrained(
    config: &Config,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Model> {
    let config = Config {
        cross_fit: Some(false),
        ..config.clone()
    };
    let p = non_private(&config, data, ledger, noise, "unconstrained baseline")?;
    let estimate = p.sums(&p.folds[0].0)?.non_private();
    let rule = GroupRule::paper(0.0);
    Ok(p.model(
        Method::Unconstrained,
        vec![FairPluginClassifier { estimate, rule }],
    ))
}

/// `prepare` for the non-private baselines: paper accounting (so that CV and empirical π are
/// allowed), one non-private ledger entry.
fn non_private<'d>(
    config: &Config,
    data: &'d Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
    what: &str,
) -> Result<Prepared<'d>> {
    let config = Config {
        accounting: Accounting::Paper,
        pi: Some(PiRelease::Empirical),
        // The estimator the private fit would use (auto's rule depends on the mode).
        eta_model: config
            .eta_model
            .resolve(data.n_features(), config.accounting == Accounting::Paper),
        bandwidth: Some(config.bandwidth.clone().unwrap_or(Bandwidth::Public)),
        ..config.clone()
    };
    ledger.charge(Entry::non_private(
        what,
        "no noise: a non-private reference (§5.2)",
    ))?;
    prepare(&config, data, ledger, noise)
}
