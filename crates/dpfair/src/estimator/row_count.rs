//! The first stage of every fit: the row count its public choices are computed from
//! (docs/privacy.md, "The row count under add/remove"). Under replace-one neighbours n is public;
//! under add/remove-one it is private, and a fit without a declared public size releases a
//! noisy count first.

use super::Estimator;
use crate::error::Result;
use dpfair_privacy::mechanisms::noisy_row_count;
use dpfair_privacy::{Ledger, Noise, Relation};

/// The share of ε a fit that certifies add/remove-one neighbours spends on releasing its row
/// count when no public size is declared ([`public_size`]).
pub const ROW_COUNT_SHARE: f64 = 0.02;

/// The row count a fit's public choices are computed from: n under replace-one neighbours
/// (public), the estimator's declared size under add/remove-one ([`Estimator::declared_rows`],
/// set by [`public_size`] when it released one).
pub fn public_rows<E: Estimator>(
    estimator: &E,
    data: &dpfair_data::Dataset,
    spend: crate::session::Spend,
) -> usize {
    match spend.relation {
        Relation::AddRemove => estimator.declared_rows().unwrap_or(0),
        Relation::Substitution => data.n_rows(),
    }
}

/// The first stage of every fit: under add/remove-one neighbours the row count n is private,
/// so nothing released, printed or stored may depend on it except through a charged release
/// (docs/privacy.md, "The row count under add/remove"). A fit certifying add/remove-one
/// neighbours without a declared public size releases n with discrete Laplace noise at
/// [`ROW_COUNT_SHARE`] of its ε ([`noisy_row_count`]) and returns the estimator with that size
/// and the ε left. `None`: nothing to do (replace-one, where n is public; a declared size; a
/// non-private reference).
pub fn public_size<E: Estimator>(
    estimator: &E,
    data: &dpfair_data::Dataset,
    spend: crate::session::Spend,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Option<(E, f64)>> {
    if spend.relation != Relation::AddRemove || estimator.declared_rows().is_some() {
        return Ok(None);
    }
    let epsilon = spend.epsilon;
    let (rows, left) = if epsilon.is_finite() {
        let count_epsilon = ROW_COUNT_SHARE * epsilon;
        let rows = noisy_row_count(
            ledger,
            noise,
            "the row count (private under add/remove-one neighbours)",
            data.n_rows(),
            count_epsilon,
        )?;
        (rows, epsilon - count_epsilon)
    } else {
        (data.n_rows(), epsilon)
    };
    Ok(Some((estimator.with_public_rows(rows, left)?, left)))
}
