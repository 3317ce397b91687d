//! The domain box of the partition and its min–max map (Ma & Yang, Section 4.3).

use super::check_finite;
use crate::lpct::error::{Result, bad_data, invalid};
use ndarray::{ArrayView2, Axis};
use serde::{Deserialize, Serialize};

/// The domain box ×_ℓ [low_ℓ, low_ℓ + width_ℓ] and the min–max map M of Section 4.3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scaler {
    pub low: Vec<f64>,
    pub width: Vec<f64>,
}

impl Scaler {
    /// The unit cube \[0,1\]^d (known range).
    pub fn unit(d: usize) -> Self {
        Scaler {
            low: vec![0.0; d],
            width: vec![1.0; d],
        }
    }

    /// Section 4.3 (Theorem 5): â_ℓ = min_i X_i^{Q,ℓ}, b̂_ℓ = max_i X_i^{Q,ℓ} from the public
    /// sample; a constant column gets width 1 (`docs/deviations.md#lpct-constant-public-columns`, as scikit-learn's `MinMaxScaler`).
    pub fn from_public(x: ArrayView2<f64>) -> Result<Self> {
        if x.nrows() == 0 {
            return Err(invalid(
                "public data",
                "the min-max range needs at least one public row",
            ));
        }
        check_finite(x, "public data")?;
        let mut low = Vec::with_capacity(x.ncols());
        let mut width = Vec::with_capacity(x.ncols());
        for col in x.axis_iter(Axis(1)) {
            let lo = col.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = col.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            low.push(lo);
            width.push(if hi > lo { hi - lo } else { 1.0 });
        }
        Ok(Scaler { low, width })
    }

    /// Known bounds [a_ℓ, b_ℓ] (public knowledge, costs nothing).
    pub fn from_bounds(bounds: &[(f64, f64)]) -> Result<Self> {
        let mut s = Scaler {
            low: Vec::new(),
            width: Vec::new(),
        };
        for (l, &(a, b)) in bounds.iter().enumerate() {
            if !(a.is_finite() && b.is_finite() && b > a) {
                return Err(invalid(
                    "bounds",
                    format!("feature {l}: need finite a < b, got [{a}, {b}]"),
                ));
            }
            s.low.push(a);
            s.width.push(b - a);
        }
        Ok(s)
    }

    /// The number of features d.
    pub fn dim(&self) -> usize {
        self.low.len()
    }

    /// Raw value of the scaled coordinate `s` of feature `l`: M^{-1}.
    pub fn to_raw(&self, l: usize, s: f64) -> f64 {
        self.low[l] + s * self.width[l]
    }

    /// Scaled coordinate M(x)^ℓ = (x − a_ℓ)/(b_ℓ − a_ℓ).
    pub fn to_scaled(&self, l: usize, x: f64) -> f64 {
        (x - self.low[l]) / self.width[l]
    }

    /// Whether M(x) ∈ \[0,1\]^d (the indicator 1_{\[0,1\]^d} ∘ M of Theorem 5).
    pub fn contains(&self, row: &[f64]) -> bool {
        row.iter().enumerate().all(|(l, &x)| {
            let z = self.to_scaled(l, x);
            (0.0..=1.0).contains(&z)
        })
    }

    pub(super) fn validate(&self) -> Result<()> {
        if self.low.len() != self.width.len() {
            return Err(bad_data("scaler", "`low` and `width` differ in length"));
        }
        for (l, (a, w)) in self.low.iter().zip(&self.width).enumerate() {
            if !(a.is_finite() && w.is_finite() && *w > 0.0) {
                return Err(bad_data(
                    "scaler",
                    format!("feature {l}: low {a}, width {w} (need finite, width > 0)"),
                ));
            }
        }
        Ok(())
    }
}
