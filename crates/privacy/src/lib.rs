//! `dpfair-privacy`: the only place in dpfair where sensitive values become released values.
//!
//! * [`entropy`]: the randomness every release draws on ([`Noise`]: OS CSPRNG or seeded ChaCha20).
//! * [`samplers`]: exact samplers (Canonne, Kamath, Steinke 2020) and simulation-only helpers.
//! * [`mechanisms`]: Laplace, Gaussian, randomized response, histograms, exponential mechanism,
//!   private quantiles. Every mechanism charges the [`Ledger`] *before* it returns a value.
//! * [`ledger`]: the budget, its entries and how they compose.
//! * [`accounting`]: pure / approximate DP, zCDP, RDP, PRV and GDP accountants and conversions.
//! * [`audit`]: empirical lower bounds on the ε a mechanism actually spends.

pub mod accounting;
pub mod audit;
pub mod entropy;
pub mod error;
pub mod ledger;
pub mod mechanisms;
pub mod samplers;

pub use entropy::Noise;
pub use error::{PrivacyError, Result};
pub use ledger::{Budget, Composition, Cost, Entry, Ledger, Relation};
