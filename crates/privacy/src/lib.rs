//! `dpfair-privacy`: the only place in dpfair where sensitive values become released values.
//!
//! * [`entropy`]: the randomness every release draws on ([`Noise`]: the OS CSPRNG, read in
//!   blocks, or a seeded ChaCha20 stream for tests and simulations, which is not private), and
//!   the separate public stream for data-independent choices (splits, bases).
//! * [`samplers`]: exact samplers (Canonne, Kamath, Steinke 2020, Algorithms 1–3: Bernoulli(e^−γ),
//!   discrete Laplace, discrete Gaussian) over big integers with a `u128` fast path; the 2^k
//!   lattice through which real values are released ([`samplers::lattice`]); simulation-only
//!   helpers ([`samplers::simulation`], never used for a release).
//! * [`mechanisms`]: Laplace, Gaussian (analytic calibration by default, classical as a paper
//!   option, σ- and zCDP-calibrated), DP-SGD noise ([`mechanisms::SubsampledGaussianRun`]),
//!   local Laplace, randomized response, noisy histograms, the exponential mechanism
//!   (permute-and-flip), private quantiles and ranges. Every mechanism charges the [`Ledger`]
//!   *before* it draws noise, and no mechanism uses floating-point noise.
//! * [`ledger`]: the budget, its entries (label, mechanism, relation, sensitivity, norm, scale,
//!   cost) and how they compose into one total, printed with its rule.
//! * [`accounting`]: pure / approximate DP, zCDP, RDP, PRV and GDP accountants and conversions.
//! * [`selection`]: private selection from private candidates (Liu–Talwar random stopping, its
//!   Rényi-DP lift by Papernot & Steinke), the cost of a private hyper-parameter search.
//! * [`audit`]: empirical high-confidence lower bounds on the ε a mechanism actually spends.
//!
//! ```
//! use dpfair_privacy::{Budget, Ledger, Noise, mechanisms::Laplace};
//! let mut ledger = Ledger::new(Budget::pure(1.0)?);
//! let mut noise = Noise::seeded(7);
//! let count = Laplace::from_epsilon(1.0, 0.5)?.release(&mut ledger, &mut noise, "count", 42.0)?;
//! assert!(count.is_finite());
//! assert_eq!(ledger.entries().len(), 1);
//! # Ok::<(), dpfair_privacy::PrivacyError>(())
//! ```

pub mod accounting;
pub mod audit;
pub mod entropy;
pub mod error;
pub mod ledger;
pub mod mechanisms;
pub mod samplers;
pub mod selection;
pub mod serde_f64;

pub use entropy::{Noise, NoiseSource};
pub use error::{PrivacyError, Result};
pub use ledger::{Budget, Composition, Cost, Entry, Ledger, Partition, Relation, Scope};
