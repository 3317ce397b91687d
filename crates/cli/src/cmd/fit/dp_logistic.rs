//! `dpfair fit dp-logistic`: differentially private logistic regression, binary or multi-class
//! (the privacy-only baseline every comparison needs, like diffprivlib's LogisticRegression).
//!
//! Two mechanisms (crate `dpfair-learn`): DP-SGD with Opacus semantics (default; as in Ghoukasian & Asoodeh's experiments)
//! or Gaussian output perturbation of L2-regularised logistic regression (Chaudhuri et al., as DP2DP's phase 1 option).
//! Both are private without feature bounds (gradient clipping / row clipping to R); public
//! `--bounds` scale the features to [0, 1], which helps accuracy and costs nothing;
//! `--coarse-bounds` estimates the bounds privately with `--bounds-share` of ε, and training
//! runs with the rest (the ledger composes both).

pub use super::flags::dp_logistic::{Args, Method};
use super::pipeline::{self, common_of};
use crate::error::{CliError, CliResult};
use dpfair::Params;
use dpfair::estimators::{DpLogistic, DpLogisticParams, LogisticMechanism};
use dpfair_data::TaskKind;
use dpfair_privacy::Relation;

/// Default δ when `--delta` is not given.
const DEFAULT_DELTA: f64 = 1e-5;

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> DpLogisticParams {
        let mut p = DpLogistic::params()
            .mechanism(match self.method {
                Method::DpSgd => LogisticMechanism::DpSgd,
                Method::OutputPerturbation => LogisticMechanism::OutputPerturbation,
            })
            .epsilon(self.privacy.epsilon)
            .delta(self.privacy.delta.unwrap_or(DEFAULT_DELTA))
            .epochs(self.epochs)
            .learning_rate(self.learning_rate)
            .clip(self.clip)
            .accountant(self.accountant.into())
            .substitution(!self.add_remove)
            .l2(self.l2)
            .feature_bound(self.feature_bound);
        if let Some(b) = self.batch {
            p = p.batch(b);
        }
        if let Some(rows) = self.public_rows {
            p = p.public_rows(rows);
        }
        p
    }
}

/// The checked estimator these flags describe (every check that needs no data).
pub fn estimator(args: &Args) -> CliResult<DpLogistic> {
    let est = args
        .params()
        .check_fraction(args.check.check_fraction)
        .check()?;
    if est.relation() == Relation::AddRemove && args.bounds.coarse_bounds.is_some() {
        return Err(CliError::BadInput(
            "--coarse-bounds: the private feature bounds certify replace-one neighbours and \
             --add-remove asks DP-SGD to certify add/remove-one neighbours, but one ledger \
             certifies one relation; leave out --add-remove (replace-one, the default), or give \
             public --bounds"
                .into(),
        ));
    }
    if args.method == Method::DpSgd {
        args.accountant
            .warn_if_uncertified(args.privacy.accounting());
    }
    Ok(est)
}

pub fn run(args: Args) -> CliResult {
    let est = estimator(&args)?;
    let common = common_of!(args);
    let note = match args.method {
        Method::DpSgd => UNSCALED_SGD,
        Method::OutputPerturbation => UNSCALED_OP,
    };
    let run = pipeline::fit(common, None, &est, Some(note), |loaded| {
        if loaded.schema.task() == Some(TaskKind::Regression) {
            return Err(CliError::BadInput(format!(
                "--target {}: dp-logistic needs a binary or multi-class target, the column is \
                 numeric (use --task multiclass if its values are class codes)",
                args.data.target
            )));
        }
        Ok(())
    })?;
    run.save(&args.out)?;
    Ok(())
}

const UNSCALED_SGD: &str = "note: no --bounds: numeric features are used unscaled (still private: \
     per-example gradients are clipped); public bounds usually improve accuracy";
const UNSCALED_OP: &str = "note: no --bounds: numeric features are used unscaled (still private: \
     rows are clipped to norm R); public bounds usually improve accuracy";
