//! **PGLM** (Wang, Gu, Xiang, Xu 2023, JMLR; Section 7.2's competitor): a
//! non-interactive (ε, δ)-LDP logistic GLM that uses *unlabelled* public features.
//!
//! Each private user i, with features min–max scaled by the public sample (clipped to \[0,1\]) and
//! augmented by an intercept, x̃_i ∈ \[0,1\]^r (r = d + 1), releases once
//!   (upper triangle of x̃_i x̃_iᵀ, x̃_i y_i) + Gaussian noise,
//! through the privacy crate's (analytic) Gaussian mechanism at (ε, δ = 1/n_P²). The vector has
//! ℓ2 norm ≤ √(r² + r), so two users differ by at most Δ₂ = 2√(r² + r). The collector sums the
//! reports into X̂ᵀX and X̂ᵀy, solves β_ols = (X̂ᵀX)⁻¹ X̂ᵀy and rescales it for the logistic link
//! with the public features: c solves c·mean φ''(c x̃_Qᵀβ_ols) = 1 by 10 Newton steps from c = 1
//! (φ'' = s(1−s), s the logistic function), w = c β_ols (β_ols if c is not finite).
//! Prediction: 1(x̃ᵀw > 1/2), the authors' rule ([`PglmLink`]).
//!
//! **`docs/deviations.md#lpct-pglm-noise-scale`.** The authors' code adds one aggregate noise of scale n_P^{1/4}·σ to the *sum* (σ² =
//! 32 r⁴ ln(2.5/δ)/ε²), which is far less than the n_P^{1/2}·σ that per-user noise adds up to, and
//! predicts 1(x̃ᵀw > 0.5) (linear, no sigmoid). [`PglmNoise::CodeCompatible`] reproduces the
//! noise as a *central* Gaussian release of the sum and records in the ledger what it really is
//! (a central guarantee, not LDP). The threshold is kept ([`PglmLink::CodeLinear`]): the
//! literal logistic rule is an option.

use super::super::error::{Result, bad_data, check_epsilon, invalid};
use super::super::partition::{Scaler, check_finite};
use super::super::{RangeMode, binary_xy, scaler};
use dpfair_data::Dataset;
use dpfair_privacy::mechanisms::Gaussian;
use dpfair_privacy::{Budget, Ledger, Noise};
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

/// Where the noise is added (`docs/deviations.md#lpct-pglm-noise-scale`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PglmNoise {
    /// Every user's report carries its own (ε, δ) Gaussian noise (Wang et al.; the default).
    #[default]
    PerUser,
    /// PAPER OPTION: the authors' code, one noise of scale n_P^{1/4}·σ on the sum; charged as the
    /// central Gaussian release it is.
    CodeCompatible,
}

/// The classification rule (`docs/deviations.md#lpct-pglm-noise-scale`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PglmLink {
    /// 1(s(x̃ᵀw) > 1/2) = 1(x̃ᵀw > 0), the logistic GLM's classifier read literally.
    Logistic,
    /// The authors' code's 1(x̃ᵀw > 0.5) (the default: with a 0/1 response the least-squares
    /// score estimates P(Y = 1 | x), and the rescaling w = cβ does not move the intercept to the
    /// logistic scale, so the literal rule misplaces the boundary).
    #[default]
    CodeLinear,
}

/// PGLM's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PglmConfig {
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    /// δ of every report; `None`: 1/n_P² (the paper's choice).
    pub delta: Option<f64>,
    pub noise: PglmNoise,
    pub link: PglmLink,
    pub range: RangeMode,
}

impl Default for PglmConfig {
    fn default() -> Self {
        PglmConfig {
            epsilon: 1.0,
            delta: None,
            noise: PglmNoise::PerUser,
            link: PglmLink::CodeLinear,
            range: RangeMode::PublicMinMax,
        }
    }
}

/// A fitted PGLM: the public scaler and the weights w (intercept first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PglmModel {
    pub scaler: Scaler,
    pub weights: Vec<f64>,
    pub link: PglmLink,
}

/// x̃ = (1, clip(M(x))) for one raw row.
fn augmented(scaler: &Scaler, row: &[f64]) -> Vec<f64> {
    std::iter::once(1.0)
        .chain(
            row.iter()
                .enumerate()
                .map(|(l, &v)| scaler.to_scaled(l, v).clamp(0.0, 1.0)),
        )
        .collect()
}

/// The user's vector: upper triangle of x̃x̃ᵀ (row-major, i ≤ j), then x̃·y.
fn user_vector(x: &[f64], y: u8) -> Vec<f64> {
    let r = x.len();
    let mut v = Vec::with_capacity(r * (r + 1) / 2 + r);
    for i in 0..r {
        for j in i..r {
            v.push(x[i] * x[j]);
        }
    }
    v.extend(x.iter().map(|&xi| xi * f64::from(y)));
    v
}

/// Solves A β = b by Gaussian elimination with partial pivoting (A is r × r, row-major).
fn solve(mut a: Vec<f64>, mut b: Vec<f64>) -> Result<Vec<f64>> {
    let r = b.len();
    for col in 0..r {
        let piv = (col..r)
            .max_by(|&i, &j| a[i * r + col].abs().total_cmp(&a[j * r + col].abs()))
            .unwrap_or(col);
        if a[piv * r + col] == 0.0 || !a[piv * r + col].is_finite() {
            return Err(bad_data("PGLM", "the noisy Gram matrix is singular"));
        }
        if piv != col {
            for k in 0..r {
                a.swap(col * r + k, piv * r + k);
            }
            b.swap(col, piv);
        }
        for i in col + 1..r {
            let f = a[i * r + col] / a[col * r + col];
            for k in col..r {
                a[i * r + k] -= f * a[col * r + k];
            }
            b[i] -= f * b[col];
        }
    }
    let mut x = vec![0.0; r];
    for i in (0..r).rev() {
        let s: f64 = (i + 1..r).map(|k| a[i * r + k] * x[k]).sum();
        x[i] = (b[i] - s) / a[i * r + i];
    }
    Ok(x)
}

fn logistic(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp())
}

/// The GLM rescaling of β_ols: c with c·mean φ''(c ŷ) = 1, 10 Newton steps from c = 1 (φ'' =
/// s(1−s), φ''' = s(1−s)(1−2s)); `None` if it is not finite.
pub fn link_scale(yhat: &[f64]) -> Option<f64> {
    let n = yhat.len().max(1) as f64;
    let mut c = 1.0f64;
    for _ in 0..10 {
        let (mut m2, mut m3) = (0.0, 0.0);
        for &t in yhat {
            let s = logistic(c * t);
            let d2 = s * (1.0 - s);
            m2 += d2;
            m3 += c * t * d2 * (1.0 - 2.0 * s);
        }
        let (m2, m3) = (m2 / n, m3 / n);
        c -= (c * m2 - 1.0) / (m2 + m3);
    }
    c.is_finite().then_some(c)
}

/// The L2 sensitivity 2√(r² + r) of one user's report (r = d + 1).
pub fn sensitivity(d: usize) -> f64 {
    let r = (d + 1) as f64;
    2.0 * (r * r + r).sqrt()
}

/// **PGLM** in the simulated setting: every private user's report through the privacy crate's
/// Gaussian mechanism (each user on their own (ε, δ) budget; `ledger` records user 0's report:
/// the collection is (ε, δ)-DP by parallel composition over users).
pub fn fit_pglm(
    cfg: &PglmConfig,
    public: &Dataset,
    private: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<PglmModel> {
    check_epsilon(cfg.epsilon)?;
    let xq = public.features.view();
    let (xp, yp) = binary_xy(private, "private data")?;
    check_finite(xp, "private data")?;
    check_finite(xq, "public data")?;
    crate::lpct::check_same_features(public, private)?;
    let n = xp.nrows();
    if n == 0 {
        return Err(bad_data("private data", "no rows"));
    }
    let delta = cfg.delta.unwrap_or(1.0 / (n as f64 * n as f64));
    if !(delta > 0.0 && delta < 1.0) {
        return Err(invalid("delta", format!("must be in (0, 1), got {delta}")));
    }
    let scaler = scaler(&cfg.range, xq)?;
    let d = xp.ncols();
    let r = d + 1;
    let delta2 = sensitivity(d);
    let rows = |x: ArrayView2<f64>| -> Vec<Vec<f64>> {
        x.rows()
            .into_iter()
            .map(|row| augmented(&scaler, &row.to_vec()))
            .collect()
    };
    let xs = rows(xp);
    let len = r * (r + 1) / 2 + r;
    let mut sum = vec![0.0; len];
    match cfg.noise {
        PglmNoise::PerUser => {
            let mech = Gaussian::analytic(delta2, cfg.epsilon, delta)?;
            for (i, (x, &y)) in xs.iter().zip(yp).enumerate() {
                let v = user_vector(x, y);
                let report = if i == 0 {
                    mech.release_vec(ledger, noise, "PGLM report (each user)", &v)?
                } else {
                    let mut own = Ledger::new(Budget::approx(cfg.epsilon, delta)?);
                    mech.release_vec(&mut own, noise, "PGLM report", &v)?
                };
                sum.iter_mut().zip(report).for_each(|(s, v)| *s += v);
            }
        }
        PglmNoise::CodeCompatible => {
            for (x, &y) in xs.iter().zip(yp) {
                sum.iter_mut()
                    .zip(user_vector(x, y))
                    .for_each(|(s, v)| *s += v);
            }
            let rf = r as f64;
            let sigma = (32.0 * rf.powi(4) * (2.5 / delta).ln() / (cfg.epsilon * cfg.epsilon)
                * (n as f64).sqrt())
            .sqrt();
            let mech = Gaussian::from_sigma(delta2, sigma)?;
            sum = mech.release_vec(ledger, noise, "PGLM sum (code-compatible, central)", &sum)?;
        }
    }
    let mut gram = vec![0.0; r * r];
    let mut k = 0;
    for i in 0..r {
        for j in i..r {
            gram[i * r + j] = sum[k];
            gram[j * r + i] = sum[k];
            k += 1;
        }
    }
    let beta = solve(gram, sum[k..].to_vec())?;
    let yhat: Vec<f64> = rows(xq)
        .iter()
        .map(|x| x.iter().zip(&beta).map(|(a, b)| a * b).sum())
        .collect();
    let c = link_scale(&yhat).unwrap_or(1.0);
    Ok(PglmModel {
        scaler,
        weights: beta.iter().map(|b| c * b).collect(),
        link: cfg.link,
    })
}

impl PglmModel {
    /// The 0/1 prediction for every row.
    pub fn predict(&self, x: ArrayView2<f64>) -> Result<Vec<u8>> {
        if x.ncols() + 1 != self.weights.len() {
            return Err(bad_data(
                "features",
                format!(
                    "the model uses {} features, the data have {}",
                    self.weights.len() - 1,
                    x.ncols()
                ),
            ));
        }
        check_finite(x, "features")?;
        let cut = match self.link {
            PglmLink::Logistic => 0.0,
            PglmLink::CodeLinear => 0.5,
        };
        Ok(x.rows()
            .into_iter()
            .map(|row| {
                let xt = augmented(&self.scaler, &row.to_vec());
                let t: f64 = xt.iter().zip(&self.weights).map(|(a, b)| a * b).sum();
                u8::from(t > cut)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solve_recovers_a_known_solution() {
        // A = [[2, 1, 0], [1, 3, 1], [0, 1, 4]], x = (1, −2, 0.5).
        let a = vec![2.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 4.0];
        let b = vec![0.0, -4.5, 0.0];
        let x = solve(a, b).unwrap();
        for (xi, ti) in x.iter().zip([1.0, -2.0, 0.5]) {
            assert!((xi - ti).abs() < 1e-12, "{x:?}");
        }
        assert!(solve(vec![0.0; 4], vec![1.0, 1.0]).is_err());
    }

    #[test]
    fn link_scale_solves_its_equation() {
        let yhat: Vec<f64> = (0..50).map(|i| (i as f64 - 25.0) / 10.0).collect();
        let c = link_scale(&yhat).unwrap();
        let m2: f64 = yhat
            .iter()
            .map(|&t| {
                let s = logistic(c * t);
                s * (1.0 - s)
            })
            .sum::<f64>()
            / 50.0;
        // Newton converged: the residual of c·mean φ''(cŷ) = 1 is at rounding level.
        assert!(
            (c * m2 - 1.0).abs() < 1e-9,
            "c = {c}, residual {}",
            c * m2 - 1.0
        );
    }

    #[test]
    fn user_vector_norm_is_within_half_the_sensitivity() {
        let x = augmented(&Scaler::unit(3), &[1.0, 1.0, 1.0]);
        let v = user_vector(&x, 1);
        let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        assert!(norm <= sensitivity(3) / 2.0 + 1e-12);
        // The all-ones row has the largest norm: 10 products + 4 label terms of 1.
        assert!((norm - 14f64.sqrt()).abs() < 1e-12);
    }
}
