//! Private evaluation in a [`Session`]: the fairness crate's [`PrivateGroupReport`] (one
//! charged release of the group × label × prediction counts, then post-processing with
//! intervals) spent against the session's budget, so that an evaluation composes with the fits
//! made in the same session (docs/evaluation.md). The CLI's `dpfair evaluate --epsilon` and
//! Python's `dpfair.metrics.private_group_report` both run this function.

use crate::error::{Error, Result};
use crate::session::{Session, Spend};
use dpfair_fairness::{FairnessError, GroupConfusion, PrivateGroupReport};
use dpfair_privacy::Ledger;

/// The ledger label of the release.
pub const RELEASE_LABEL: &str = "evaluation: group × label × prediction counts";

/// Releases `counts` once at `epsilon` (pure ε, the session's neighbouring relation) and
/// derives the private group report with intervals at `level`. Refused before any noise is
/// drawn when ε is more than the session has left. Returns the report and the release's own
/// ledger (one entry); the session's ledger records the entry too.
///
/// ```
/// use dpfair::{Session, evaluation::private_group_report};
/// use dpfair::fairness::GroupConfusion;
/// let groups = vec!["f".to_string(), "m".to_string()];
/// let y: Vec<u8> = (0..1_000).map(|i| (i % 2) as u8).collect();
/// let yhat: Vec<u8> = (0..1_000).map(|i| (i % 4 == 0) as u8).collect();
/// let g: Vec<u32> = (0..1_000).map(|i| (i % 3 == 0) as u32).collect();
/// let counts = GroupConfusion::from_rows(groups, &y, &yhat, &g)?;
/// let mut session = Session::new(2.0, 0.0)?;
/// let (report, ledger) = private_group_report(&mut session, &counts, 1.0, 0.95)?;
/// assert_eq!(ledger.entries().len(), 1);
/// assert_eq!(session.remaining().0, 1.0);
/// assert_eq!(report.by_group.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn private_group_report(
    session: &mut Session,
    counts: &GroupConfusion,
    epsilon: f64,
    level: f64,
) -> Result<(PrivateGroupReport, Ledger)> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::invalid(
            "epsilon",
            format!("the evaluation's ε must be finite and > 0, got {epsilon}"),
        ));
    }
    dpfair_fairness::private_report::check_level(level).map_err(from_fairness)?;
    let spend = Spend {
        epsilon,
        delta: 0.0,
        relation: session.ledger().relation(),
    };
    session.run(spend, |ledger, noise| {
        PrivateGroupReport::release(ledger, noise, RELEASE_LABEL, counts, epsilon, level)
            .map_err(from_fairness)
    })
}

/// The fairness crate's error as the library's.
pub(crate) fn from_fairness(e: FairnessError) -> Error {
    match e {
        FairnessError::Privacy(p) => p.into(),
        FairnessError::InvalidParameter { name, reason } => Error::invalid(name, reason),
        other => Error::InvalidData(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpfair_privacy::Relation;

    fn counts() -> GroupConfusion {
        GroupConfusion::from_rows(vec!["a".into(), "b".into()], &[1, 0], &[1, 1], &[0, 1]).unwrap()
    }

    #[test]
    fn composes_with_the_session_and_refuses_overspending() {
        let mut s = Session::with_relation(1.5, 0.0, Relation::AddRemove).unwrap();
        let (r, l) = private_group_report(&mut s, &counts(), 1.0, 0.95).unwrap();
        assert_eq!(r.relation, Relation::AddRemove);
        assert_eq!(l.entries()[0].sensitivity, 1.0);
        assert_eq!(s.ledger().entries().len(), 1);
        let e = private_group_report(&mut s, &counts(), 1.0, 0.95).unwrap_err();
        assert!(matches!(e, Error::BudgetExceeded(_)), "{e}");
        assert_eq!(s.ledger().entries().len(), 1);
        for (eps, level) in [(0.0, 0.95), (f64::INFINITY, 0.95), (0.1, 0.0)] {
            assert!(private_group_report(&mut s, &counts(), eps, level).is_err());
        }
        assert_eq!(s.remaining().0, 0.5);
    }
}
