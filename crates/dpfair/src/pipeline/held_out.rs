//! [`super::fit`]'s run with the held-out check ([`crate::held_out_check`]; docs/privacy.md,
//! "The held-out check"): split off the held-out rows, release the fallback on the fit rows and
//! fit there, then choose between the model and the fallback on the held-out rows.

use crate::error::{Error, Result};
use crate::estimator::Estimator;
use crate::held_out_check::{
    CheckOutcome, FIT_MAJORITY_SHARE, FIT_MEAN_SHARE, HeldOutCheck, MIN_ROWS, choose, choose_value,
    handicap, release_majority, release_mean,
};
use dpfair_data::{Loaded, Target};
use dpfair_privacy::{Ledger, Noise, Partition};

/// [`super::fit`]'s run with the check (module docs): scale on the fit rows, fit
/// there, then choose on the held-out rows. `loaded` ends scaled with the fit rows' scaling (all
/// its rows, as without the check). Returns the model, the configuration used, and the outcome.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_and_check<E: Estimator>(
    setting: &HeldOutCheck,
    estimator: &E,
    loaded: &mut Loaded,
    scaling: &super::Scaling,
    epsilon: f64,
    ledger: &mut Ledger,
    noise: &mut Noise,
    fit_step: impl FnOnce(&E, &Loaded, &mut Ledger, &mut Noise) -> Result<E::Model>,
) -> Result<(E::Model, serde_json::Value, CheckOutcome)> {
    let resolved = estimator.resolved_for(&loaded.dataset);
    let estimator = resolved.as_ref().unwrap_or(estimator);
    let n = loaded.dataset.n_rows();
    let classes = match (&loaded.dataset.target, setting.range) {
        (Some(Target::Binary(_)), _) => 2,
        (Some(Target::Multiclass { k, .. }), _) => *k,
        (Some(Target::Real(_)), Some(_)) => 0,
        _ => {
            return Err(Error::InvalidData(
                "the held-out check needs a class target, or a real one with its public range"
                    .into(),
            ));
        }
    };
    let seed = noise.public_u64();
    let parts =
        dpfair_data::split_indices(n, &[1.0 - setting.fraction, setting.fraction], seed, None)?;
    let (fit_rows, check_rows) = (&parts[0], &parts[1]);
    let partition = Partition::new(
        "held-out check against the constant classes",
        &["fit rows", "held-out check rows"],
        seed,
    );
    let mut fit_part = Loaded {
        dataset: loaded.dataset.select(fit_rows),
        schema: loaded.schema.clone(),
        report: loaded.report.clone(),
    };
    // A regressor's fallback mean from the fit rows (FIT_MEAN_SHARE of ε; decided on public
    // sizes only), the fit at the rest.
    let fit_mean_range = setting
        .range
        .filter(|_| classes == 0 && check_rows.len() >= MIN_ROWS);
    // A classifier's fallback class from the fit rows (FIT_MAJORITY_SHARE of ε), likewise.
    let fit_majority = classes > 0 && check_rows.len() >= MIN_ROWS;
    let fit_epsilon = match (fit_mean_range, fit_majority) {
        (Some(_), _) => (1.0 - FIT_MEAN_SHARE) * epsilon,
        (None, true) => (1.0 - FIT_MAJORITY_SHARE) * epsilon,
        (None, false) => epsilon,
    };
    let reduced = (fit_epsilon < epsilon)
        .then(|| estimator.with_epsilon(fit_epsilon))
        .transpose()?;
    let fit_rows = fit_part.dataset.n_rows();
    let fit_part_run = |ledger: &mut Ledger, noise: &mut Noise| -> Result<_> {
        let fallback = match fit_mean_range {
            Some(range) => Fallback::Mean(release_mean(
                crate::inputs::real_target(&fit_part.dataset, estimator.method())?,
                range,
                FIT_MEAN_SHARE * epsilon,
                "held-out check's fallback: the fit rows' target sum (clipped to the public range)",
                ledger,
                noise,
            )?),
            None if fit_majority => Fallback::Class(release_majority(
                &fit_part.dataset,
                classes,
                FIT_MAJORITY_SHARE * epsilon,
                ledger,
                noise,
            )?),
            None => Fallback::None,
        };
        let fitted = super::scale_and_fit(
            reduced.as_ref().unwrap_or(estimator),
            &mut fit_part,
            scaling,
            fit_rows,
            fit_epsilon,
            ledger,
            noise,
            fit_step,
        )?;
        Ok((fallback, fitted))
    };
    let (fallback, (model, config)) =
        ledger.in_part(&partition, 0, |ledger| Ok(fit_part_run(ledger, noise)))??;
    // Every row in the fitted scaling, as a fit without the check leaves `loaded`.
    let fitted_scaling = fit_part.schema.scaling.clone();
    loaded
        .schema
        .set_scaling(fitted_scaling, &mut loaded.dataset)?;
    let mut outcome = CheckOutcome {
        rows: check_rows.len(),
        classes,
        epsilon: 0.0,
        handicap: 0.0,
        constant: None,
        value: None,
        public: false,
        folds: 0,
    };
    if check_rows.len() < MIN_ROWS {
        return Ok((model, config, outcome));
    }
    let held_out = loaded.dataset.select(check_rows);
    // The choice's charge: one pure ε (a classifier's exponential mechanism, a regressor's
    // Laplace release of its gain).
    if !ledger.admits_in_part(&partition, 1, &[epsilon]) {
        return Err(Error::Method {
            method: estimator.method(),
            reason: format!(
                "the budget does not admit the held-out check at ε = {epsilon} beside the fit"
            ),
        });
    }
    let (constant, value, handicap) = ledger.in_part(&partition, 1, |ledger| {
        Ok(match (setting.range, fallback) {
            (Some(range), Fallback::Mean(mean)) if classes == 0 => {
                choose_value(&model, &held_out, range, mean, epsilon, ledger, noise)
                    .map(|(value, h)| (None, value, h))
            }
            (_, Fallback::Class(class)) => choose(&model, &held_out, class, epsilon, ledger, noise)
                .map(|c| (c, None, handicap(epsilon))),
            _ => Err(Error::InvalidData(
                "internal: the held-out check's fallback does not match the target".into(),
            )),
        })
    })??;
    outcome.epsilon = epsilon;
    outcome.handicap = handicap;
    outcome.constant = constant;
    outcome.value = value;
    Ok((model, config, outcome))
}

/// What the check falls back to, released on the fit rows.
enum Fallback {
    /// A classifier's: the fit rows' most frequent class ([`release_majority`]).
    Class(u32),
    /// A regressor's: the fit rows' released target mean ([`release_mean`]).
    Mean(f64),
    /// Too few held-out rows: no check.
    None,
}
