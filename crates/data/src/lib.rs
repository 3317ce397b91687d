//! `dpfair-data`: the [`Dataset`] every method consumes, CSV loading driven by a schema, fitted
//! preprocessing, seeded splits, the built-in data sets of the five papers and their synthetic
//! designs.

pub mod builtin;
pub mod dataset;
pub mod synthetic;

pub use dataset::{Dataset, Groups, Target};
