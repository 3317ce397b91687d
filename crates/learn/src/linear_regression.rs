//! Differentially private linear (ridge) regression by noisy sufficient statistics (the
//! "sufficient statistics perturbation" of Vu & Slavković 2009, Foulds et al. 2016 and Wang
//! 2018; `docs/privacy.md#dp-linear-regression`).
//!
//! 1. Bounded rows: φ(x) = x · min(1, R/‖x‖₂) (R public, default √d: no clipping for features
//!    on [0, 1]^d), the target clipped to the public range `[lo, hi]` and scaled to
//!    y_s = (clip(y) − lo)/(hi − lo) ∈ [0, 1]. With x_a = [φ(x); 1] and z = [x_a; y_s],
//!    ‖z‖₂² ≤ B² = R² + 2.
//! 2. One release of the upper triangle of A = Σ x_a x_aᵀ and of b = Σ x_a y_s: a sub-vector of
//!    the upper triangle of Σ z zᵀ. Replacing row z by z' changes Σ z zᵀ by zzᵀ − z'z'ᵀ, whose
//!    Frobenius norm² is ‖z‖⁴ + ‖z'‖⁴ − 2(zᵀz')² ≤ 2B⁴; the upper triangle counts each
//!    off-diagonal entry once instead of twice, so its ℓ2 sensitivity under substitution is
//!    Δ₂ = √2·B² ([`sensitivity`]). The Gaussian mechanism of the privacy crate (exact discrete
//!    Gaussian on a lattice, analytic calibration at (ε, δ), Balle & Wang 2018) charges the
//!    ledger first and adds noise of standard deviation σ to every coordinate.
//! 3. Post-processing: the target is centred at its released mean m = b̃_d / Ã_dd (the
//!    intercept's entries of the release: Σ y_s over the noisy n, clamped to [0, 1];
//!    [`centre_target`]), b̃_c = b̃ − m·Ã e_d, so that the ridge below shrinks predictions
//!    toward m rather than toward the range's low end; then θ = (Ã + λI)⁻¹ b̃_c by Cholesky,
//!    and m is added to the intercept. The noise matrix E of Ã has spectral norm
//!    about 2σ√p (p = d + 1; Bandeira & van Handel 2016) and, being √2-Lipschitz in the released
//!    coordinates, exceeds its mean by 2σ√ln(1/β) with probability at most β (Gaussian
//!    concentration). The default ridge λ = σ(2√p + 2√ln(1/β)), β = 10⁻³ ([`auto_ridge`]),
//!    therefore keeps Ã + λI ⪰ A + (λ − ‖E‖)I positive definite with probability about 1 − β;
//!    when the factorisation still fails, λ is doubled until it succeeds (post-processing of
//!    the release: free, and recorded in the model as `ridge_doublings`).
//! 4. Prediction: ŷ = lo + (hi − lo)·clamp(θᵀ[φ(x); 1], 0, 1), inside the public range.
//!
//! ε = ∞ is the non-private reference: the exact statistics, ridge 0 unless given (the
//! doubling then makes a singular A, e.g. one-hot columns beside the intercept, solvable).

use crate::error::{LearnError, Result, invalid};
use crate::validate::{check_features, non_negative, positive};
use dpfair_privacy::mechanisms::Gaussian;
use dpfair_privacy::{Ledger, Noise};
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

/// The most encoded features accepted: the release has (d+1)(d+2)/2 + d + 1 coordinates, so
/// d = 1,000 is half a million; a resource bound checked before any data is read.
pub const MAX_FEATURES: usize = 1_000;

/// β of the default ridge: the probability that the noise alone makes Ã + λI indefinite.
pub const RIDGE_FAILURE_PROBABILITY: f64 = 1e-3;

/// Settings of [`fit_dp_linear`]. Defaults: ε = 1, δ = 10⁻⁵, R = √d, the ridge of
/// [`auto_ridge`]; the target range has no default (it must be public).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinearRegressionConfig {
    /// ε (`f64::INFINITY`: the non-private reference).
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    pub delta: f64,
    /// The public interval `[lo, hi]` the target is clipped to.
    pub target_range: Option<[f64; 2]>,
    /// R: rows are scaled down to ℓ2 norm at most R (`None`: √d).
    pub row_bound: Option<f64>,
    /// λ added to the diagonal of the released Σ x_a x_aᵀ (`None`: [`auto_ridge`]).
    pub ridge: Option<f64>,
}

impl Default for LinearRegressionConfig {
    fn default() -> Self {
        LinearRegressionConfig {
            epsilon: 1.0,
            delta: 1e-5,
            target_range: None,
            row_bound: None,
            ridge: None,
        }
    }
}

impl LinearRegressionConfig {
    /// Checks every setting (public quantities only; before any data is read).
    pub fn validate(&self) -> Result<[f64; 2]> {
        if self.epsilon.is_nan() || self.epsilon <= 0.0 {
            return Err(invalid(
                "epsilon",
                format!("must be > 0 (or inf), got {}", self.epsilon),
            ));
        }
        if self.epsilon.is_finite() && !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(invalid(
                "delta",
                format!(
                    "must be in (0, 1): the Gaussian mechanism needs δ > 0, got {}",
                    self.delta
                ),
            ));
        }
        if let Some(r) = self.row_bound {
            positive("row_bound", r)?;
        }
        if let Some(l) = self.ridge {
            non_negative("ridge", l)?;
        }
        match self.target_range {
            Some([lo, hi]) if lo.is_finite() && hi.is_finite() && lo < hi => Ok([lo, hi]),
            Some([lo, hi]) => Err(invalid(
                "target_range",
                format!("must be two finite numbers lo < hi, got [{lo}, {hi}]"),
            )),
            None => Err(invalid(
                "target_range",
                "the public range [lo, hi] of the target must be given (never the data's own \
                 min/max)",
            )),
        }
    }

    /// R for `d` features.
    pub fn row_bound_for(&self, d: usize) -> f64 {
        self.row_bound.unwrap_or((d.max(1) as f64).sqrt())
    }

    /// The Gaussian mechanism of step 2 for `d` features (`None` for ε = ∞).
    pub fn mechanism(&self, d: usize) -> Result<Option<Gaussian>> {
        self.validate()?;
        if self.epsilon.is_infinite() {
            return Ok(None);
        }
        let delta = sensitivity(self.row_bound_for(d));
        Ok(Some(Gaussian::analytic(delta, self.epsilon, self.delta)?))
    }
}

/// Step 2: Δ₂ = √2·(R² + 2), the substitution sensitivity of the released statistics.
pub fn sensitivity(row_bound: f64) -> f64 {
    2f64.sqrt() * (row_bound * row_bound + 2.0)
}

/// Step 3: λ = σ(2√p + 2√ln(1/β)) for p = d + 1 and β = [`RIDGE_FAILURE_PROBABILITY`].
pub fn auto_ridge(sigma: f64, d: usize) -> f64 {
    let p = (d + 1) as f64;
    sigma * (2.0 * p.sqrt() + 2.0 * (1.0 / RIDGE_FAILURE_PROBABILITY).ln().sqrt())
}

/// The released model and the numbers of its privacy statement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearRegressionFit {
    /// θ without its last entry: weights of φ(x) (scaled target units).
    pub coef: Vec<f64>,
    /// θ's last entry.
    pub intercept: f64,
    pub target_range: [f64; 2],
    /// R.
    pub row_bound: f64,
    /// Δ₂ (step 2); 0 for ε = ∞.
    pub sensitivity: f64,
    /// σ on every released coordinate; 0 for ε = ∞.
    pub sigma: f64,
    /// The λ the solve used (after any doubling).
    pub ridge: f64,
    /// How many times λ was doubled (step 3).
    pub ridge_doublings: u32,
    /// ‖b̃‖₂, the released Σ x_a y_s's norm (its noise alone has norm about σ√p).
    pub released_xty_norm: f64,
}

impl LinearRegressionFit {
    /// Step 4 for every row of `x` (values in the target's units, inside its range).
    pub fn predict(&self, x: ArrayView2<'_, f64>) -> Result<Vec<f64>> {
        if x.ncols() != self.coef.len() {
            return Err(LearnError::Shape(format!(
                "the model has {} features, the data {}",
                self.coef.len(),
                x.ncols()
            )));
        }
        check_features(x)?;
        let [lo, hi] = self.target_range;
        Ok(x.rows()
            .into_iter()
            .map(|row| {
                let s = clip_scale(row.dot(&row), self.row_bound);
                let t = s * row.iter().zip(&self.coef).map(|(a, b)| a * b).sum::<f64>()
                    + self.intercept;
                lo + (hi - lo) * t.clamp(0.0, 1.0)
            })
            .collect())
    }
}

/// min(1, R/‖x‖) from ‖x‖².
fn clip_scale(norm2: f64, row_bound: f64) -> f64 {
    if norm2 > row_bound * row_bound {
        row_bound / norm2.sqrt()
    } else {
        1.0
    }
}

/// The exact statistics of step 2 (before noise): the upper triangle of A = Σ x_a x_aᵀ row by
/// row (p(p+1)/2 values, p = d + 1), then b = Σ x_a y_s (p values). Rows are clipped to
/// `row_bound` and targets to `range` as in step 1.
pub fn sufficient_statistics(
    x: ArrayView2<'_, f64>,
    y: &[f64],
    range: [f64; 2],
    row_bound: f64,
) -> Vec<f64> {
    let d = x.ncols();
    let p = d + 1;
    let tri = p * (p + 1) / 2;
    let mut out = vec![0.0; tri + p];
    let mut xa = vec![0.0; p];
    let [lo, hi] = range;
    for (row, &yi) in x.rows().into_iter().zip(y) {
        let s = clip_scale(row.dot(&row), row_bound);
        for (a, v) in xa.iter_mut().zip(row.iter()) {
            *a = s * v;
        }
        xa[d] = 1.0;
        let ys = (yi.clamp(lo, hi) - lo) / (hi - lo);
        let mut k = 0;
        for i in 0..p {
            let xi = xa[i];
            for (o, &xj) in out[k..k + p - i].iter_mut().zip(&xa[i..]) {
                *o += xi * xj;
            }
            k += p - i;
            out[tri + i] += xi * ys;
        }
    }
    out
}

/// Step 3's centring: the released statistics (layout of [`sufficient_statistics`]) with b
/// replaced by b − m·A e_d, where m = b_d / A_dd (the mean of y_s over the rows, from the
/// intercept's entries; clamped to [0, 1], and 1/2 when A_dd ≤ 0). Returns them and m: the fit
/// on them plus m in the intercept predicts as the fit on the raw statistics would without a
/// ridge, and with one shrinks toward m. Post-processing of the release.
///
/// ```
/// use dpfair_learn::linear_regression::{centre_target, sufficient_statistics};
/// let x = ndarray::array![[0.0], [1.0]];
/// let stats = sufficient_statistics(x.view(), &[0.2, 0.6], [0.0, 1.0], 1.0);
/// let (centred, mean) = centre_target(&stats, 2);
/// assert!((mean - 0.4).abs() < 1e-12);
/// assert!(centred[3 + 1].abs() < 1e-12); // Σ (y − m) = 0
/// ```
pub fn centre_target(stats: &[f64], p: usize) -> (Vec<f64>, f64) {
    let tri = p * (p + 1) / 2;
    let d = p - 1;
    // A[i][d] sits at the end of row i of the upper triangle: offset of row i plus (d − i).
    let entry = |i: usize| i * p - i * i.saturating_sub(1) / 2 + (d - i);
    let a_dd = stats[tri - 1];
    let mean = if a_dd > 0.0 {
        (stats[tri + d] / a_dd).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let mut out = stats.to_vec();
    for i in 0..p {
        out[tri + i] -= mean * stats[entry(i)];
    }
    (out, mean)
}

/// Step 3: θ = (A + λI)⁻¹ b from the statistics' layout of [`sufficient_statistics`], doubling
/// λ (from a tiny floor when 0) until A + λI has a Cholesky factor. Returns θ, λ and the
/// number of doublings.
pub fn solve_ridge(stats: &[f64], p: usize, ridge: f64) -> Result<(Vec<f64>, f64, u32)> {
    let tri = p * (p + 1) / 2;
    if stats.len() != tri + p {
        return Err(LearnError::Shape(format!(
            "{} statistics for p = {p} (expected {})",
            stats.len(),
            tri + p
        )));
    }
    let mut a = vec![0.0; p * p];
    let mut k = 0;
    for i in 0..p {
        for j in i..p {
            a[i * p + j] = stats[k];
            a[j * p + i] = stats[k];
            k += 1;
        }
    }
    let b = &stats[tri..];
    let scale = (0..p).map(|i| a[i * p + i].abs()).fold(1.0, f64::max);
    let mut lambda = ridge;
    for doublings in 0..400u32 {
        if let Some(l) = cholesky(&a, p, lambda) {
            return Ok((cholesky_solve(&l, p, b), lambda, doublings));
        }
        lambda = if lambda > 0.0 {
            2.0 * lambda
        } else {
            1e-12 * scale
        };
    }
    Err(LearnError::Shape(
        "the released matrix did not become positive definite (non-finite statistics?)".into(),
    ))
}

/// The lower Cholesky factor of A + λI (row-major p × p), or `None` when it is not positive
/// definite (or not finite).
fn cholesky(a: &[f64], p: usize, lambda: f64) -> Option<Vec<f64>> {
    let mut l = vec![0.0; p * p];
    for i in 0..p {
        for j in 0..=i {
            let mut s = a[i * p + j] + if i == j { lambda } else { 0.0 };
            for k in 0..j {
                s -= l[i * p + k] * l[j * p + k];
            }
            if i == j {
                if !(s > 0.0 && s.is_finite()) {
                    return None;
                }
                l[i * p + i] = s.sqrt();
            } else {
                l[i * p + j] = s / l[j * p + j];
            }
        }
    }
    Some(l)
}

/// Solve L Lᵀ θ = b.
fn cholesky_solve(l: &[f64], p: usize, b: &[f64]) -> Vec<f64> {
    let mut z = b.to_vec();
    for i in 0..p {
        for k in 0..i {
            z[i] -= l[i * p + k] * z[k];
        }
        z[i] /= l[i * p + i];
    }
    for i in (0..p).rev() {
        for k in i + 1..p {
            z[i] -= l[k * p + i] * z[k];
        }
        z[i] /= l[i * p + i];
    }
    z
}

/// Fits and releases DP linear regression (module doc, steps 1–3) on features `x` and real
/// targets `y`; the mechanism charges `ledger` before drawing noise from `noise`.
pub fn fit_dp_linear(
    cfg: &LinearRegressionConfig,
    x: ArrayView2<'_, f64>,
    y: &[f64],
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<LinearRegressionFit> {
    let range = cfg.validate()?;
    let (n, d) = x.dim();
    if d > MAX_FEATURES {
        return Err(invalid(
            "features",
            format!(
                "{d} encoded features exceed the limit {MAX_FEATURES} (the release has \
                 (d+1)(d+2)/2 + d + 1 coordinates)"
            ),
        ));
    }
    check_features(x)?;
    if y.len() != n {
        return Err(LearnError::Shape(format!(
            "{} targets for {n} feature rows",
            y.len()
        )));
    }
    if let Some((row, &value)) = y.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(LearnError::NonFinite {
            what: "target",
            row,
            column: 0,
            value,
        });
    }
    let row_bound = cfg.row_bound_for(d);
    let p = d + 1;
    let exact = sufficient_statistics(x, y, range, row_bound);
    let (stats, sensitivity, sigma) = match cfg.mechanism(d)? {
        None => (exact, 0.0, 0.0),
        Some(gaussian) => {
            let released = gaussian.release_vec(
                ledger,
                noise,
                "linear regression sufficient statistics (XᵀX, Xᵀy)",
                &exact,
            )?;
            // The σ actually drawn (the calibration's, rounded up to whole lattice steps).
            let sigma = ledger
                .entries()
                .last()
                .map_or(gaussian.sigma(), |e| e.scale);
            (released, gaussian.sensitivity(), sigma)
        }
    };
    let ridge = cfg.ridge.unwrap_or(auto_ridge(sigma, d));
    let (centred, mean) = centre_target(&stats, p);
    let (theta, ridge, ridge_doublings) = solve_ridge(&centred, p, ridge)?;
    let tri = p * (p + 1) / 2;
    Ok(LinearRegressionFit {
        coef: theta[..d].to_vec(),
        intercept: theta[d] + mean,
        target_range: range,
        row_bound,
        sensitivity,
        sigma,
        ridge,
        ridge_doublings,
        released_xty_norm: stats[tri..].iter().map(|v| v * v).sum::<f64>().sqrt(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpfair_privacy::{Budget, Cost, Relation};
    use ndarray::Array2;
    use rand::{RngExt, SeedableRng};

    /// n rows uniform on [0, 1]^d, y = 1 + Σ_j w_j x_j + N(0, 0.1²)-ish noise (uniform, sd 0.1).
    fn synthetic(n: usize, w: &[f64], seed: u64) -> (Array2<f64>, Vec<f64>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let d = w.len();
        let x = Array2::from_shape_fn((n, d), |_| rng.random::<f64>());
        let y = (0..n)
            .map(|i| {
                let e = (rng.random::<f64>() - 0.5) * 0.1 * 12f64.sqrt();
                1.0 + (0..d).map(|j| w[j] * x[[i, j]]).sum::<f64>() + e
            })
            .collect();
        (x, y)
    }

    fn config(epsilon: f64, range: [f64; 2]) -> LinearRegressionConfig {
        LinearRegressionConfig {
            epsilon,
            target_range: Some(range),
            ..LinearRegressionConfig::default()
        }
    }

    fn l2(v: &[f64]) -> f64 {
        v.iter().map(|a| a * a).sum::<f64>().sqrt()
    }

    #[test]
    fn neighbouring_statistics_differ_by_at_most_the_sensitivity() {
        // Replace one row by another, over many random and extreme pairs (rows beyond R are
        // clipped; targets beyond the range clamped): ‖S(D) − S(D')‖₂ ≤ Δ₂ = √2(R² + 2).
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (d, r, range) = (4, 1.5, [-2.0, 3.0]);
        let base = Array2::from_shape_fn((20, d), |_| rng.random::<f64>());
        let ybase: Vec<f64> = (0..20).map(|_| rng.random::<f64>()).collect();
        let s0 = sufficient_statistics(base.view(), &ybase, range, r);
        let mut worst: f64 = 0.0;
        for trial in 0..2_000 {
            let mut x = base.clone();
            let mut y = ybase.clone();
            let i = trial % 20;
            for j in 0..d {
                // Large, signed values: clipping must hold the bound.
                x[[i, j]] = (rng.random::<f64>() - 0.5) * 10.0;
            }
            y[i] = if trial % 2 == 0 { 100.0 } else { -100.0 };
            let s1 = sufficient_statistics(x.view(), &y, range, r);
            let diff: Vec<f64> = s0.iter().zip(&s1).map(|(a, b)| a - b).collect();
            worst = worst.max(l2(&diff));
        }
        let bound = sensitivity(r);
        assert!(worst <= bound, "worst {worst} > Δ {bound}");
        // The bound is nearly attained: orthogonal-ish maximal rows (x = R e₁, y at the top of
        // the range against x = R e₂ with y at the bottom: (z·z')² = 1).
        let mut a = Array2::zeros((1, d));
        a[[0, 0]] = r;
        let mut b = Array2::zeros((1, d));
        b[[0, 1]] = r;
        let sa = sufficient_statistics(a.view(), &[3.0], range, r);
        let sb = sufficient_statistics(b.view(), &[-2.0], range, r);
        let diff: Vec<f64> = sa.iter().zip(&sb).map(|(a, b)| a - b).collect();
        assert!(l2(&diff) > 0.7 * bound, "{} vs {bound}", l2(&diff));
    }

    #[test]
    fn one_gaussian_release_is_charged_for_replace_one_neighbours() {
        let (x, y) = synthetic(500, &[0.5, -0.3], 1);
        let mut ledger = Ledger::new(Budget::approx(1.0, 1e-5).unwrap());
        let fit = fit_dp_linear(
            &config(1.0, [0.0, 2.5]),
            x.view(),
            &y,
            &mut ledger,
            &mut Noise::seeded(3),
        )
        .unwrap();
        let entries = ledger.entries();
        assert_eq!(entries.len(), 1);
        let e = &entries[0];
        assert_eq!(e.relation, Relation::Substitution);
        assert_eq!(
            e.cost,
            Cost::Approx {
                epsilon: 1.0,
                delta: 1e-5
            }
        );
        // R = √2 for d = 2: Δ = √2·(2 + 2); the ledger records it (plus lattice rounding).
        assert!((fit.sensitivity - 2f64.sqrt() * 4.0).abs() < 1e-12);
        assert!(e.sensitivity >= fit.sensitivity);
        // An overspend is refused before any noise: nothing recorded.
        let mut small = Ledger::new(Budget::approx(0.5, 1e-5).unwrap());
        assert!(
            fit_dp_linear(
                &config(1.0, [0.0, 2.5]),
                x.view(),
                &y,
                &mut small,
                &mut Noise::seeded(3)
            )
            .is_err()
        );
        assert!(small.entries().is_empty());
    }

    #[test]
    fn close_to_ordinary_least_squares_within_the_noise_bound() {
        // n = 100,000 rows, d = 3, ε = 1. Bound on ‖θ̃ − θ‖ (θ the OLS solution of the same
        // clipped data; A its Gram matrix, E and e the noise on A and b):
        //   θ̃ − θ = (A + E + λI)⁻¹ (e − (E + λI) θ), and ‖E‖ ≤ λ with probability 1 − β
        //   (module doc, step 3), so ‖θ̃ − θ‖ ≤ (‖e‖ + 2λ‖θ‖) / λ_min(A),
        //   with ‖e‖ ≤ σ(√p + 2√ln(1/β)) (χ_p concentration; β = 10⁻³).
        // λ_min(A) ≥ 1/‖A⁻¹‖_F, computed from A's own Cholesky solves.
        let w = [0.8, -0.5, 0.3];
        let (x, y) = synthetic(100_000, &w, 2);
        let range = [0.0, 3.0];
        let cfg = config(1.0, range);
        let p = w.len() + 1;
        let exact = sufficient_statistics(x.view(), &y, range, cfg.row_bound_for(3));
        let (ols, _, _) = solve_ridge(&exact, p, 0.0).unwrap();
        // ‖A⁻¹‖_F: solve A v = e_k for each k (b replaced by e_k).
        let tri = p * (p + 1) / 2;
        let mut inv_f2 = 0.0;
        for k in 0..p {
            let mut s = exact[..tri].to_vec();
            s.extend((0..p).map(|i| if i == k { 1.0 } else { 0.0 }));
            let (v, _, _) = solve_ridge(&s, p, 0.0).unwrap();
            inv_f2 += v.iter().map(|a| a * a).sum::<f64>();
        }
        let lambda_min = 1.0 / inv_f2.sqrt();
        let mut ledger = Ledger::new(Budget::approx(1.0, 1e-5).unwrap());
        let fit = fit_dp_linear(&cfg, x.view(), &y, &mut ledger, &mut Noise::seeded(11)).unwrap();
        let mut theta = fit.coef.clone();
        theta.push(fit.intercept);
        let err: Vec<f64> = theta.iter().zip(&ols).map(|(a, b)| a - b).collect();
        let ln_beta = (1.0 / RIDGE_FAILURE_PROBABILITY).ln().sqrt();
        let e_norm = fit.sigma * ((p as f64).sqrt() + 2.0 * ln_beta);
        let tol = (e_norm + 2.0 * fit.ridge * l2(&ols)) / lambda_min;
        assert!(l2(&err) <= tol, "‖θ̃ − θ‖ = {} > {tol}", l2(&err));
        eprintln!(
            "‖θ̃ − θ‖ = {}, tolerance {tol}, ‖θ‖ = {}",
            l2(&err),
            l2(&ols)
        );
        // The bound is informative: the tolerance is well below the coefficients' own size.
        assert!(tol < 0.5 * l2(&ols), "tol {tol} vs ‖θ‖ {}", l2(&ols));
        // OLS recovers the generating weights (scaled target units: y_s = y / 3).
        for (j, wj) in w.iter().enumerate() {
            assert!(
                (ols[j] - wj / 3.0).abs() < 0.01,
                "{} vs {}",
                ols[j],
                wj / 3.0
            );
        }
        // Predictions stay in the public range.
        let pred = fit.predict(x.view()).unwrap();
        assert!(pred.iter().all(|v| (0.0..=3.0).contains(v)));
    }

    #[test]
    fn the_non_private_reference_is_ordinary_least_squares() {
        let (x, y) = synthetic(2_000, &[1.0, 0.5], 4);
        let mut ledger = Ledger::unlimited();
        let fit = fit_dp_linear(
            &config(f64::INFINITY, [-10.0, 10.0]),
            x.view(),
            &y,
            &mut ledger,
            &mut Noise::seeded(1),
        )
        .unwrap();
        assert!(ledger.entries().is_empty());
        assert_eq!((fit.sigma, fit.ridge, fit.ridge_doublings), (0.0, 0.0, 0));
        // y_s = (y + 10)/20: slope 1/20 and 0.5/20, intercept (1 + 10)/20.
        assert!((fit.coef[0] - 0.05).abs() < 2e-3, "{:?}", fit.coef);
        assert!((fit.coef[1] - 0.025).abs() < 2e-3, "{:?}", fit.coef);
        assert!((fit.intercept - 0.55).abs() < 2e-3, "{}", fit.intercept);
    }

    #[test]
    fn an_indefinite_release_is_repaired_by_doubling_the_ridge() {
        // Ridge 0 on a tiny data set at small ε: the noise swamps A, which is then indefinite;
        // the solve doubles λ until A + λI factorises, and says how often.
        let (x, y) = synthetic(30, &[0.5, 0.5, 0.5, 0.5], 7);
        let cfg = LinearRegressionConfig {
            ridge: Some(0.0),
            ..config(0.1, [0.0, 4.0])
        };
        let mut ledger = Ledger::new(Budget::approx(0.1, 1e-5).unwrap());
        let fit = fit_dp_linear(&cfg, x.view(), &y, &mut ledger, &mut Noise::seeded(9)).unwrap();
        assert!(fit.ridge_doublings > 0 && fit.ridge > 0.0, "{fit:?}");
        assert!(fit.coef.iter().all(|c| c.is_finite()));
        // One-hot columns that sum to the intercept make A singular: still solved.
        let x = Array2::from_shape_fn((10, 2), |(i, j)| f64::from(u8::from(i % 2 == j)));
        let y: Vec<f64> = (0..10).map(|i| f64::from(i as u8 % 2)).collect();
        let fit = fit_dp_linear(
            &config(f64::INFINITY, [0.0, 1.0]),
            x.view(),
            &y,
            &mut Ledger::unlimited(),
            &mut Noise::seeded(1),
        )
        .unwrap();
        let pred = fit.predict(x.view()).unwrap();
        for (p, t) in pred.iter().zip(&y) {
            assert!((p - t).abs() < 1e-4, "{pred:?}");
        }
    }

    #[test]
    fn bad_settings_and_inputs_are_refused_with_their_names() {
        let x = Array2::<f64>::zeros((3, 2));
        let mut ledger = Ledger::unlimited();
        let mut noise = Noise::seeded(1);
        let mut fit = |cfg: LinearRegressionConfig, y: &[f64]| {
            fit_dp_linear(&cfg, x.view(), y, &mut ledger, &mut noise)
                .unwrap_err()
                .to_string()
        };
        let ok = config(1.0, [0.0, 1.0]);
        assert!(fit(LinearRegressionConfig::default(), &[0.0; 3]).contains("target_range"));
        assert!(fit(config(1.0, [1.0, 1.0]), &[0.0; 3]).contains("target_range"));
        let no_delta = LinearRegressionConfig {
            delta: 0.0,
            ..ok.clone()
        };
        assert!(fit(no_delta, &[0.0; 3]).contains("delta"));
        let bad_r = LinearRegressionConfig {
            row_bound: Some(-1.0),
            ..ok.clone()
        };
        assert!(fit(bad_r, &[0.0; 3]).contains("row_bound"));
        assert!(fit(ok.clone(), &[0.0; 2]).contains("3 feature rows"));
        assert!(fit(ok, &[0.0, f64::NAN, 0.0]).contains("row 1"));
    }

    #[test]
    fn audit_of_the_released_statistics_at_a_near_worst_neighbour_pair() {
        // Two-sample threshold audit (dpfair_privacy::audit::threshold, α = 0.01) of the release
        // of step 2 on neighbours that differ in one row: x = R·e₁ against x = R·e₂, y at the
        // top of the range in both (d = 2, R = 3: the released vector moves by
        // √(2R⁴ + 4R²) = 14.07, 0.90 of Δ₂ = √2·(R² + 2) = 15.56; the bound's slack is the
        // y² and 1·1 entries, which are not released or never move). The projection on
        // S(D) − S(D') is the Neyman–Pearson statistic of the Gaussian pair. Claim:
        // (ε, δ) = (1, 10⁻⁵); 10,000 releases per input. Power: the planted bug (σ × 0.3)
        // must be caught (ε_lower > 1); a correct release exceeds its claim with probability
        // at most α.
        use dpfair_privacy::audit::threshold::audit;
        let (r, range) = (3.0, [0.0, 1.0]);
        let base = Array2::from_shape_fn((10, 2), |(i, j)| 0.1 * (i + j) as f64 % 1.0);
        let ybase: Vec<f64> = (0..10).map(|i| 0.1 * i as f64).collect();
        let stats = |first: bool| {
            let mut x = base.clone();
            let mut y = ybase.clone();
            x[[0, 0]] = if first { r } else { 0.0 };
            x[[0, 1]] = if first { 0.0 } else { r };
            y[0] = 1.0;
            sufficient_statistics(x.view(), &y, range, r)
        };
        let s = [stats(true), stats(false)];
        let diff: Vec<f64> = s[0].iter().zip(&s[1]).map(|(a, b)| a - b).collect();
        let norm = l2(&diff);
        assert!(
            norm > 0.9 * sensitivity(r) && norm <= sensitivity(r),
            "{norm}"
        );
        let u: Vec<f64> = diff.iter().map(|v| v / norm).collect();
        let cfg = LinearRegressionConfig {
            row_bound: Some(r),
            ..config(1.0, range)
        };
        let correct = cfg.mechanism(2).unwrap().unwrap();
        let buggy = Gaussian::from_sigma(correct.sensitivity(), 0.3 * correct.sigma()).unwrap();
        let run = |g: &Gaussian, seed: u64| {
            let mut ledger = Ledger::unlimited();
            audit(
                &mut Noise::seeded(seed),
                10_000,
                1e-5,
                0.01,
                |input, noise| {
                    let out = g.release_vec(&mut ledger, noise, "audit", &s[input])?;
                    Ok(out.iter().zip(&u).map(|(a, b)| a * b).sum())
                },
            )
            .unwrap()
        };
        let ok = run(&correct, 1);
        let bug = run(&buggy, 2);
        eprintln!(
            "ε_lower: correct {:.3}, σ × 0.3 {:.3}",
            ok.epsilon_lower, bug.epsilon_lower
        );
        assert!(ok.epsilon_lower <= 1.0, "{ok:?}");
        assert!(bug.epsilon_lower > 1.0, "the audit has no power: {bug:?}");
    }
}
