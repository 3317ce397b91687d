//! Private Wasserstein-barycenter post-processing for fair regression (seed 001).
pub mod lp;
pub mod transport;
