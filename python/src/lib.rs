//! `dpfair._native`: the Python package's native module. Conversions between Python objects and
//! the dpfair library's types, and calls into the library; no method logic lives here.
//!
//! | module | what it binds |
//! |---|---|
//! | `frame` | numpy blocks and text columns as a `dpfair_data::frame::Frame` |
//! | `factorize` | Arrow string columns factorized from their buffers |
//! | `model` | `Model`: a fitted model file (predict, save, load, ledger) |
//! | `session` | `Session`: a privacy budget several fits compose against |
//! | `fit` | one fit through the library's pipeline, params built per method |
//! | `tune` | a private search among candidates of one method, built by `fit`'s builders |
//! | `federated` | FDP-Fair's protocol steps: a site's rounds, the server's aggregations |
//! | `metrics` | the fairness crate's metrics and group report |
//! | `report` | `Model.report`: the release report, as `dpfair report` writes it |
//! | `accumulators` | mergeable exact statistics for distributed engines (LDP reports, fair-regression counts) |
//! | `accounting` | DP-SGD accounting (ε of a run, noise multiplier for a target ε) |
//! | `error` | Rust errors and panics as Python exceptions |

mod accounting;
mod accumulators;
mod error;
mod factorize;
mod federated;
mod fit;
mod frame;
mod metrics;
mod model;
mod report;
mod session;
mod tune;

use pyo3::prelude::*;

/// The module `dpfair._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "BudgetExceededError",
        m.py().get_type::<error::BudgetExceededError>(),
    )?;
    m.add_class::<model::PyModel>()?;
    m.add_class::<session::PySession>()?;
    m.add_function(wrap_pyfunction!(fit::fit, m)?)?;
    m.add_function(wrap_pyfunction!(tune::tune, m)?)?;
    m.add_function(wrap_pyfunction!(frame::numeric_block_address, m)?)?;
    m.add_function(wrap_pyfunction!(frame::intersect_groups, m)?)?;
    m.add_function(wrap_pyfunction!(factorize::factorize_arrow_strings, m)?)?;
    metrics::register(m)?;
    accounting::register(m)?;
    federated::register(m)?;
    accumulators::register(m)?;
    Ok(())
}
