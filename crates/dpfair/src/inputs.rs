//! Checks and defaults read from a fit's inputs, shared by the methods, their estimators and the
//! held-out check: the ε and step-size caps, numeric options in a range, fairness levels, the
//! real-valued target, dp-linear's default row bound. Errors name the parameter
//! ([`Error::invalid`]).

use crate::error::{Error, Result};
use dpfair_data::{Dataset, Target};

/// The largest finite ε accepted: above it no noise is added in practice (the noise scales are
/// below every value's last bit), and a run past it only burns time (issue #41: ε = 1e308 ran
/// past 25 s). `inf` is the non-private reference where a method has one.
pub const MAX_EPSILON: f64 = 1e4;

/// `ε` must be `> 0` and at most [`MAX_EPSILON`] (or `∞` where `allow_infinite`: the
/// non-private reference, reported as NOT PRIVATE).
pub(crate) fn check_epsilon(epsilon: f64, allow_infinite: bool) -> Result<()> {
    if epsilon.is_finite() && epsilon > MAX_EPSILON {
        return Err(Error::invalid(
            "epsilon",
            format!(
                "must be at most {MAX_EPSILON:e}, got {}: above it no noise is added in \
                 practice; {}",
                show(epsilon),
                if allow_infinite {
                    "use inf for a non-private reference"
                } else {
                    "this method has no non-private reference"
                }
            ),
        ));
    }
    let ok = epsilon > 0.0 && (epsilon.is_finite() || (allow_infinite && epsilon.is_infinite()));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "epsilon",
            format!(
                "must be {} and > 0, got {epsilon}",
                if allow_infinite {
                    "a number (or inf)"
                } else {
                    "finite"
                }
            ),
        ))
    }
}

/// `δ` must be in `[0, 1)`.
pub(crate) fn check_delta(delta: f64) -> Result<()> {
    if (0.0..1.0).contains(&delta) {
        Ok(())
    } else {
        Err(Error::invalid(
            "delta",
            format!("must be in [0, 1), got {delta}"),
        ))
    }
}

/// The largest step size accepted (learning rates): past it the iterates overflow to ∞ and
/// the model could not be stored (issue #41).
pub const MAX_LEARNING_RATE: f64 = 1e3;

/// A step size `name` (a learning rate) in `(0, MAX_LEARNING_RATE]`, else an error naming it.
pub(crate) fn check_step_size(name: &str, v: f64) -> Result<()> {
    check_in(
        name,
        v,
        Lo::Above(0.0),
        MAX_LEARNING_RATE,
        false,
        "a step size",
    )
}

/// A number as a message shows it: scientific notation when very large or small (`1e308`, not
/// 309 digits).
pub(crate) fn show(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-4..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A bound for a numeric option ([`check_in`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Lo {
    /// `> x`.
    Above(f64),
    /// `≥ x`.
    AtLeast(f64),
}

/// A finite option in `lo ..= hi` (or `lo .. hi` when `hi_open`), else an error naming it, its
/// range and its unit (`unit`: "a share of ε", "per step", …).
pub(crate) fn check_in(
    name: &str,
    v: f64,
    lo: Lo,
    hi: f64,
    hi_open: bool,
    unit: &str,
) -> Result<()> {
    let above = match lo {
        Lo::Above(x) => v > x,
        Lo::AtLeast(x) => v >= x,
    };
    let below = if hi_open { v < hi } else { v <= hi };
    if v.is_finite() && above && below {
        return Ok(());
    }
    let (l, lb) = match lo {
        Lo::Above(x) => (x, "("),
        Lo::AtLeast(x) => (x, "["),
    };
    Err(Error::invalid(
        name,
        format!(
            "must be a finite number in {lb}{l}, {}{} ({unit}), got {v}",
            show(hi),
            if hi_open { ")" } else { "]" },
            v = show(v)
        ),
    ))
}

/// A fairness level (`alpha`, `rho`): every method's disparity (a difference of rates, a KS
/// distance) lies in [0, 1], so a level is a finite number there.
pub(crate) fn check_level(name: &str, value: f64) -> Result<()> {
    check_in(
        name,
        value,
        Lo::AtLeast(0.0),
        1.0,
        false,
        "a disparity level",
    )
}

/// The real target of `data`, or an error naming what was found.
pub(crate) fn real_target<'a>(data: &'a Dataset, method: &str) -> Result<&'a [f64]> {
    match data.require_target(method)? {
        Target::Real(y) => Ok(y),
        _ => Err(Error::InvalidData(format!(
            "{method} needs a real-valued target; the target is a class label (use dp-logistic \
             for classes)"
        ))),
    }
}

/// The default row bound R of DP linear regression: the square root of the number of source
/// columns behind the features ([`dpfair_data::schema::source_columns`]): a row of features on
/// [0, 1] has squared norm at most one per numeric column and one per one-hot group, where √d
/// (d encoded features) counted every level. On Adult's 14 columns (104 encoded) the
/// sensitivity and the noise fall by a factor of about 6.
pub(crate) fn dp_linear_row_bound(names: &[String]) -> f64 {
    (dpfair_data::schema::source_columns(names).max(1) as f64).sqrt()
}
