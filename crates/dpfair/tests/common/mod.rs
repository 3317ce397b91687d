//! Helpers shared by the LPCT test files (binary labels and accuracy).
#![allow(dead_code)]

use dpfair_data::{Dataset, Target};

/// The binary labels of `ds` (the LPCT designs are binary).
pub fn labels(ds: &Dataset) -> &[u8] {
    match &ds.target {
        Some(Target::Binary(y)) => y,
        _ => panic!("binary target expected"),
    }
}

/// The share of `pred` equal to `truth`.
pub fn accuracy(pred: &[u8], truth: &[u8]) -> f64 {
    pred.iter().zip(truth).filter(|(a, b)| a == b).count() as f64 / truth.len() as f64
}
