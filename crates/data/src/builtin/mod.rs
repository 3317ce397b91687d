//! Built-in data sets of the papers, read from a data directory and verified by sha256.

pub mod error;

pub use error::{CatalogError, Result};
