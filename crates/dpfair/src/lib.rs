//! `dpfair`: machine learning that is both differentially private and fair.
//!
//! # The library API
//!
//! * [`estimators`]: one estimator per method. Build its params, [`Params::check`] them (before
//!   any data is touched), and [`Estimator::fit`] it in a [`Session`].
//! * [`Session`]: the privacy budget, the ledger of every release and the randomness; several
//!   fits compose against one budget, and a fit that would overspend is refused before any noise
//!   is drawn. Release noise comes from the operating system's CSPRNG.
//! * [`Fitted`]: the model, its fit's ledger and configuration; it predicts, and it is written as
//!   the model file ([`model::ModelFile`]) that `dpfair predict` reads.
//! * [`evaluation`]: a private group report of a model's predictions (one charged release,
//!   intervals), spent in a [`Session`] like a fit.
//! * [`pipeline`]: feature scaling with public or private bounds, then the fit, as the CLI runs it.
//! * [`Error`]: the one error type of all of it.
//!
//! ```
//! use dpfair::estimators::Decoupled;
//! use dpfair::{Estimator, Params, Session};
//! let data = dpfair::estimators::example_data(3_000, 3, 1);
//! let mut session = Session::new(3.0, 1e-5)?;
//! let fitted = Decoupled::params().epsilon(3.0).check()?.fit(&data, &mut session)?;
//! let predictions = fitted.predict(&data, session.noise())?;
//! println!("{}", session.ledger().summary());
//! # Ok::<(), dpfair::Error>(())
//! ```
//!
//! # The methods, one module per paper
//!
//! | module | paper |
//! |---|---|
//! | [`cdp_fair`], [`fdp_fair`], on the shared [`plugin`] core | Xue & Yu, federated fairness-aware classification under DP |
//! | [`fair_regression`] | Xian, Li, Kamath, Zhao, DP post-processing for fair regression |
//! | [`lpct`] | Ma & Yang, locally private classification trees with public data |
//! | [`decoupled`] | Ghoukasian & Asoodeh, DP fair binary classification |
//! | [`dp2dp`] | Say, Denis, Pinot, DP2DP |
//! | [`dp_fermi`] | Lowy et al., DP-FERMI (the decoupled classifier's baseline) |
//!
//! Where dpfair departs from a paper, the code cites `docs/deviations.md`; `docs/choosing.md`
//! says which method fits which task.

pub mod accumulate;
pub mod cdp_fair;
pub mod compare;
pub mod decoupled;
pub mod dp2dp;
pub mod dp_fermi;
pub mod error;
pub mod estimator;
pub mod estimators;
pub mod evaluation;
pub mod fair_regression;
pub mod fdp_fair;
pub(crate) mod finite;
pub mod group_thresholds;
pub mod held_out_check;
pub mod inputs;
pub mod lpct;
pub mod model;
pub mod pipeline;
pub mod plugin;
pub mod predictor;
pub mod release_report;
pub mod session;
pub mod tune;

pub use error::{Error, Result};
pub use estimator::{Estimator, Fitted, Params};
pub use session::{Session, Spend};

pub use dpfair_data as data;
pub use dpfair_fairness as fairness;
pub use dpfair_learn as learn;
pub use dpfair_privacy as privacy;
