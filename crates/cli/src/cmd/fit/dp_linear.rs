//! `dpfair fit dp-linear`: differentially private linear (ridge) regression by noisy sufficient
//! statistics (the privacy-only regressor, like diffprivlib's LinearRegression).
//!
//! One Gaussian release (analytic calibration at (ε, δ), exact discrete noise) of XᵀX and Xᵀy
//! over rows clipped to norm R and a target clipped to its range, then a ridge solve
//! (`docs/privacy.md#dp-linear-regression`). Give public `--bounds` (free) or `--coarse-bounds`
//! (private, `--bounds-share` of ε) so the features lie on [0, 1], and the target's range:
//! public `--target-range` (free) or `--coarse-target-range` (private, `--target-share` of ε).
//!
//! ```text
//! dpfair fit dp-linear --data law.csv --target zfygpa --categorical race \
//!     --bounds lsat:10:48,ugpa:1:4 --target-range -4,4 --epsilon 1 --out model.json
//! dpfair predict --model model.json --data new.csv --out pred.csv
//! ```

use super::fair_regression::parse_range;
pub use super::flags::dp_linear::Args;
use super::pipeline::{self, common_of};
use crate::error::{CliError, CliResult};
use dpfair::Params;
use dpfair::estimators::{DpLinear, DpLinearParams};
use dpfair::model::Accounting;
use dpfair_data::TaskKind;

/// Default δ when `--delta` is not given.
const DEFAULT_DELTA: f64 = 1e-5;

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> CliResult<DpLinearParams> {
        let r = &self.regression;
        let mut p = DpLinear::params()
            .epsilon(self.privacy.epsilon)
            .delta(self.privacy.delta.unwrap_or(DEFAULT_DELTA))
            .target_share(r.target_share);
        match (&r.target_range, &r.coarse_target_range) {
            (Some(s), _) => {
                let [lo, hi] = parse_range("--target-range", s)?;
                p = p.target_range(lo, hi);
            }
            (None, Some(s)) => {
                let [lo, hi] = parse_range("--coarse-target-range", s)?;
                p = p.private_target_range(lo, hi);
            }
            (None, None) => {
                return Err(CliError::BadInput(
                    "give the target's range: --target-range LO,HI (public, free) or \
                     --coarse-target-range LO,HI (estimated privately with --target-share of ε)"
                        .into(),
                ));
            }
        }
        if let Some(rb) = r.row_bound {
            p = p.row_bound(rb);
        }
        if let Some(l) = r.ridge {
            p = p.ridge(l);
        }
        Ok(p)
    }
}

pub fn run(args: Args) -> CliResult {
    if args.privacy.accounting() == Accounting::Paper {
        return Err(CliError::BadInput(
            "--accounting paper: dp-linear follows no paper's procedure; drop the option".into(),
        ));
    }
    let est = args
        .params()?
        .check_fraction(args.check.check_fraction)
        .check()?;
    let run = pipeline::fit(
        common_of!(args),
        Some(TaskKind::Regression),
        &est,
        Some(UNSCALED),
        |_| Ok(()),
    )?;
    run.save(&args.out)?;
    Ok(())
}

/// Printed when no bounds are given (a public fact).
pub const UNSCALED: &str = "note: no --bounds: numeric features are used unscaled (still \
     private: rows are clipped to norm R = √d, which shrinks wide columns); give public --bounds \
     or --coarse-bounds so that features lie on [0, 1]";
