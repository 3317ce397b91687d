//! SIMULATION ONLY. Helpers for experiments that model many users' noise at once; their output is
//! never a release (they use floating-point `rand_distr` samplers, which the exact samplers exist
//! to avoid). No mechanism in [`crate::mechanisms`] calls this module.

use crate::Noise;
use crate::error::{Result, invalid};
use rand_distr::{Distribution, Gamma};

/// SIMULATION ONLY: the exact law of the sum of `n` iid Laplace(0, `scale`) variables, drawn as
/// the difference of two Gamma(n, scale) variables (a Laplace(b) variable is the difference of two
/// Exponential(b) ones, and a sum of n Exponential(b) is Gamma(n, b)). Costs O(1) instead of O(n).
pub fn sum_of_laplace(noise: &mut Noise, n: u64, scale: f64) -> Result<f64> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(invalid(
            "scale",
            format!("must be finite and > 0, got {scale}"),
        ));
    }
    if n == 0 {
        return Ok(0.0);
    }
    let gamma = Gamma::new(n as f64, scale)
        .map_err(|e| invalid("n", format!("Gamma({n}, {scale}): {e}")))?;
    Ok(gamma.sample(noise) - gamma.sample(noise))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_of_laplace_has_the_right_variance() {
        // Var = 2·n·b² = 2·50·4 = 400. Sample variance of m = 20,000 draws has relative sd
        // ≈ √((κ−1)/m) with excess kurtosis 3/n → √(2.06/20000) ≈ 1%: allow 5%.
        let mut noise = Noise::seeded(5);
        let m = 20_000;
        let xs: Vec<f64> = (0..m)
            .map(|_| sum_of_laplace(&mut noise, 50, 2.0).unwrap())
            .collect();
        let mean = xs.iter().sum::<f64>() / m as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (m - 1) as f64;
        assert!((var / 400.0 - 1.0).abs() < 0.05, "variance {var}");
        // Mean 0, sd 20/√m = 0.14: 5 sd.
        assert!(mean.abs() < 0.71, "mean {mean}");
        assert_eq!(sum_of_laplace(&mut noise, 0, 1.0).unwrap(), 0.0);
        assert!(sum_of_laplace(&mut noise, 3, 0.0).is_err());
    }
}
