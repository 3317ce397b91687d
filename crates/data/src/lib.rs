//! `dpfair-data`: the [`Dataset`] every method consumes, CSV loading driven by a schema, fitted
//! preprocessing, seeded splits, the built-in data sets of the five papers and their synthetic
//! designs.
//!
//! * [`load`](fn@load) (any format: CSV, Parquet, Arrow IPC; [`load::columnar`] reads the columnar ones
//!   in bounded batches and fits files larger than memory) and [`load_csv`] (training: learns a [`Schema`] from `--data --target --sensitive --features
//!   --categorical`) and [`Schema::load`] (prediction: applies a stored schema to a new CSV).
//! * [`MinMax`], [`Standardizer`], [`Scaling`], [`Bounds`]: preprocessing fitted on one split and
//!   applied to others; public bounds cost nothing, private bounds go through the privacy crate.
//! * [`Dataset::split`], [`Dataset::partition`]: seeded splits and sites.
//! * [`frame`]: in-memory columns (a DataFrame's) as a data set; [`factorize`](mod@factorize) codes their text.
//! * [`fuzz`]: hostile edits of JSON files and bytes, shared by the fuzz tests of every reader.
//! * [`lock`]: an exclusive lock on an output folder (pid file, stale locks taken over).
//! * [`output`]: atomic writes and the up-front check of output paths, for every file dpfair writes.
//! * [`testdata::path_or_skip`]: real data files for tests, with a visible `skipped:` line.

pub mod batches;
pub mod builtin;
pub mod dataset;
pub mod error;
pub mod factorize;
pub mod frame;
pub mod fuzz;
pub mod load;
pub mod lock;
pub mod output;
pub mod preprocess;
pub mod schema;
pub mod split;
pub mod synthetic;
pub mod table;
pub mod testdata;
pub mod write_parquet;

pub use dataset::{Dataset, Groups, Target};
pub use error::{DataError, Position, Result};
pub use load::{
    ApplyOptions, FileFormat, GROUP_SEPARATOR, LoadOptions, LoadReport, Loaded, MissingPolicy,
    Unseen, load, load_csv,
};
pub use preprocess::{
    BoundSource, Bounds, BoundsPlan, MinMax, PrivateBounds, Scaling, Standardizer,
};
pub use schema::{FeatureColumn, Schema, SensitiveColumn, TargetColumn, TargetEncoding, TaskKind};
pub use split::{Stratify, partition_indices, split_indices};
pub use table::{CsvFormat, HeaderMode, Table};
