//! The paper's feature standardisation (its experimental procedure, `docs/deviations.md#decoupled-non-private-preprocessing`): z-scores of the
//! non-binary columns with mean and sample standard deviation (ddof = 1) of the rows given.
//! Non-private; only [`crate::predictor::Accounting::Paper`] uses it, and the ledger records it as
//! such. Strict fits take features as given (scaled with public bounds, see `dpfair fit`).

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

/// Per-column (x − mean)/sd; columns with values in {0, 1} only, or constant, are left alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standardize {
    pub mean: Vec<f64>,
    pub sd: Vec<f64>,
}

impl Standardize {
    /// Fit on the rows of `x` (at least two rows).
    pub fn fit(x: ArrayView2<'_, f64>) -> Self {
        let n = x.nrows() as f64;
        let (mut mean, mut sd) = (Vec::new(), Vec::new());
        for col in x.columns() {
            let binary = col.iter().all(|&v| v == 0.0 || v == 1.0);
            let m = col.sum() / n;
            let var = col.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0).max(1.0);
            if binary || var <= 0.0 || !var.is_finite() {
                mean.push(0.0);
                sd.push(1.0);
            } else {
                mean.push(m);
                sd.push(var.sqrt());
            }
        }
        Standardize { mean, sd }
    }

    /// The standardised copy of `x`.
    pub fn apply(&self, x: ArrayView2<'_, f64>) -> Array2<f64> {
        let mut out = x.to_owned();
        for (j, mut col) in out.columns_mut().into_iter().enumerate() {
            let (m, s) = (self.mean[j], self.sd[j]);
            col.mapv_inplace(|v| (v - m) / s);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn z_scores_numeric_columns_and_keeps_indicators() {
        let x = array![[1.0, 0.0, 5.0], [3.0, 1.0, 5.0], [5.0, 1.0, 5.0]];
        let s = Standardize::fit(x.view());
        assert_eq!((s.mean[0], s.sd[0]), (3.0, 2.0));
        assert_eq!((s.mean[1], s.sd[1]), (0.0, 1.0));
        assert_eq!((s.mean[2], s.sd[2]), (0.0, 1.0));
        let z = s.apply(x.view());
        assert_eq!(z.column(0).to_vec(), vec![-1.0, 0.0, 1.0]);
        assert_eq!(z.column(1), x.column(1));
    }
}
