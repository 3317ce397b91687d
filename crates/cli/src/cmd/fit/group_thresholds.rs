//! `dpfair fit group-thresholds`: the private fair binary classifier for K ≥ 2 groups under
//! demographic parity, equal opportunity or equalized odds (the library's
//! [`dpfair::estimators::GroupThresholds`]; docs/fairness-constraints.md).
//!
//! DP-SGD logistic regression with the group as dummy features gives a score `η̃(x, a)` at
//! `(1 − table_share)·ε`; one Laplace release of the group × label × score-bin table at
//! `table_share·ε` chooses each group's randomised threshold. Both read the same rows
//! (sequential composition, two ledger entries).

pub use super::flags::group_thresholds::Args;
use super::pipeline::{self, common_of};
use crate::error::{CliError, CliResult};
use dpfair::Params;
use dpfair::estimators::{GroupThresholds, GroupThresholdsParams};
use dpfair::model::Accounting;
use dpfair_data::TaskKind;

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> GroupThresholdsParams {
        let p = GroupThresholds::params()
            .constraint(self.constraint)
            .level(self.level)
            .epsilon(self.privacy.epsilon)
            .table_share(self.table_share)
            .bins(self.bins)
            .epochs(self.epochs)
            .learning_rate(self.learning_rate)
            .check_fraction(self.check.check_fraction);
        let p = match self.ldp.sensitive_ldp {
            Some(e) => p.attribute_epsilon(e),
            None => p,
        };
        match self.privacy.delta {
            Some(d) => p.delta(d),
            None => p,
        }
    }
}

/// The checked estimator these flags describe (every check that needs no data).
pub fn estimator(args: &Args) -> CliResult<GroupThresholds> {
    super::check_passes("--epochs", args.epochs)?;
    if args.privacy.accounting() == Accounting::Paper {
        return Err(CliError::BadInput(
            "--accounting paper: group-thresholds follows no paper's procedure; drop the option"
                .into(),
        ));
    }
    Ok(args.params().check()?)
}

pub fn run(args: Args) -> CliResult {
    let est = estimator(&args)?;
    pipeline::fit(
        common_of!(args),
        Some(TaskKind::Binary),
        &est,
        Some(super::decoupled::UNSCALED),
        |_| Ok(()),
    )?
    .save(&args.out)?;
    Ok(())
}
