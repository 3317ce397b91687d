//! Distribution tests of a release path's noise (in the style of Tumult Analytics' noise tests):
//! draw many releases with a fixed seed, compare the noise with the law the path claims, and
//! check the test's power by comparing the same sample with the law at a wrong scale.
//!
//! * [`ks_test`]: one-sample Kolmogorov–Smirnov against a continuous CDF, p-value from the
//!   Kolmogorov limit law with Stephens' finite-n correction (D·(√n + 0.12 + 0.11/√n)).
//!   Released values live on a 2^−k lattice far finer than the noise scale, so the continuous
//!   CDF is the right reference up to a KS distance of a lattice step over the scale.
//! * [`scale_check`]: the claimed scale must not be rejected, the scale × (1 ± `off`) must be.
//!   For KS on n samples the distance between laws whose scales differ by 30% is about 0.05
//!   (Laplace or Gaussian at their centre), far above the 1.63/√n ≈ 0.012 a level-1% test needs
//!   at n = 2·10⁴: the power check passes with room.

use crate::error::{Result, invalid};
use serde::{Deserialize, Serialize};

/// A KS test's statistic and p-value.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct KsResult {
    pub statistic: f64,
    pub p_value: f64,
    pub n: usize,
}

/// P(K > x) for the Kolmogorov distribution: 2 Σ_{j≥1} (−1)^{j−1} e^{−2j²x²} (1 for x ≤ 0.2,
/// where the series converges slowly and the probability is 1 to 15 digits).
pub fn kolmogorov_sf(x: f64) -> f64 {
    if x <= 0.2 {
        return 1.0;
    }
    let mut s = 0.0;
    for j in 1..=100 {
        let t = (-2.0 * (j * j) as f64 * x * x).exp();
        s += if j % 2 == 1 { t } else { -t };
        if t < 1e-17 {
            break;
        }
    }
    (2.0 * s).clamp(0.0, 1.0)
}

/// One-sample KS test of `samples` against `cdf` (module doc). Errors on fewer than 10 samples
/// or a NaN.
pub fn ks_test(samples: &[f64], cdf: impl Fn(f64) -> f64) -> Result<KsResult> {
    if samples.len() < 10 {
        return Err(invalid(
            "samples",
            format!("need at least 10, got {}", samples.len()),
        ));
    }
    if samples.iter().any(|x| x.is_nan()) {
        return Err(invalid("samples", "contain NaN"));
    }
    let mut xs = samples.to_vec();
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let mut d = 0.0f64;
    for (i, &x) in xs.iter().enumerate() {
        let f = cdf(x);
        d = d.max(f - i as f64 / n).max((i + 1) as f64 / n - f);
    }
    let sn = n.sqrt();
    Ok(KsResult {
        statistic: d,
        p_value: kolmogorov_sf(d * (sn + 0.12 + 0.11 / sn)),
        n: xs.len(),
    })
}

/// The verdicts of [`scale_check`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleCheck {
    /// The test against the claimed law.
    pub claimed: KsResult,
    /// Against the law at scale × (1 − off) and × (1 + off).
    pub smaller: KsResult,
    pub larger: KsResult,
    pub level: f64,
}

impl ScaleCheck {
    /// The claimed law is not rejected at `level`.
    pub fn fits(&self) -> bool {
        self.claimed.p_value >= self.level
    }

    /// Both wrong scales are rejected at `level` (the test has power).
    pub fn has_power(&self) -> bool {
        self.smaller.p_value < self.level && self.larger.p_value < self.level
    }
}

/// KS tests of `noise` (the released value minus the true value, one draw per release) against
/// `cdf_at(scale)` for the claimed `scale` and for scale × (1 ∓ `off`).
pub fn scale_check<C, F>(
    noise: &[f64],
    scale: f64,
    off: f64,
    level: f64,
    cdf_at: C,
) -> Result<ScaleCheck>
where
    C: Fn(f64) -> F,
    F: Fn(f64) -> f64,
{
    if !(off > 0.0 && off < 1.0) {
        return Err(invalid("off", format!("must be in (0, 1), got {off}")));
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(invalid("level", format!("must be in (0, 1), got {level}")));
    }
    Ok(ScaleCheck {
        claimed: ks_test(noise, cdf_at(scale))?,
        smaller: ks_test(noise, cdf_at(scale * (1.0 - off)))?,
        larger: ks_test(noise, cdf_at(scale * (1.0 + off)))?,
        level,
    })
}

/// The CDF of Laplace(0, b).
pub fn laplace_cdf(b: f64) -> impl Fn(f64) -> f64 {
    move |x| {
        if x < 0.0 {
            0.5 * (x / b).exp()
        } else {
            1.0 - 0.5 * (-x / b).exp()
        }
    }
}

/// The CDF of N(0, σ²).
pub fn gaussian_cdf(sigma: f64) -> impl Fn(f64) -> f64 {
    move |x| 0.5 * libm::erfc(-x / (sigma * std::f64::consts::SQRT_2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kolmogorov_tail_matches_known_quantiles() {
        // The 5% and 1% critical values of the Kolmogorov law: 1.3581 and 1.6276.
        assert!((kolmogorov_sf(1.3581) - 0.05).abs() < 1e-4);
        assert!((kolmogorov_sf(1.6276) - 0.01).abs() < 1e-4);
        assert_eq!(kolmogorov_sf(0.1), 1.0);
    }

    #[test]
    fn ks_of_evenly_spread_points_fits_the_uniform() {
        let xs: Vec<f64> = (0..1000).map(|i| (i as f64 + 0.5) / 1000.0).collect();
        let r = ks_test(&xs, |x| x.clamp(0.0, 1.0)).unwrap();
        assert!(r.statistic <= 0.0005 + 1e-12 && r.p_value > 0.99, "{r:?}");
        let r = ks_test(&xs, |x| x.clamp(0.0, 1.0).powi(2)).unwrap();
        assert!(r.p_value < 1e-6, "{r:?}");
    }
}
