//! Gaussian output perturbation of L2-regularised logistic regression (Chaudhuri, Monteleoni,
//! Sarwate 2011, output perturbation; Say et al., Phase 1, output perturbation and `docs/deviations.md#dp2dp-phase-1-mechanism`).
//!
//! 1. Bounded features: φ(x) = [x; 1] · min(1, R/‖[x; 1]‖₂), so ‖φ‖ ≤ R (the intercept is the
//!    last weight and is penalised, for strong convexity).
//! 2. Ŵ = argmin (1/n) Σ_i CE(W φ(x_i), y_i) + (Λ/2)‖W‖_F², solved by Newton-CG to
//!    ‖∇‖_∞ ≤ tol.
//! 3. The per-sample loss is L-Lipschitz in W: L = R (binary), √2·R (multinomial,
//!    ‖(σ − e_y) φᵀ‖_F ≤ √2 R).
//! 4. Replace-one sensitivity of the exact minimiser: 2L/(nΛ) (Chaudhuri et al. 2011,
//!    Corollary 8). The solver stops at ‖∇F‖₂ ≤ tol·√p, so its answer is within tol·√p/Λ of
//!    the minimiser (Λ-strong convexity) on every data set; the released sensitivity adds that
//!    twice: Δ = 2L/(nΛ) + 2·tol·√p/Λ.
//! 5. W̃ = Ŵ + N(0, σ² I), σ from the analytic Gaussian mechanism at (ε, δ) (Balle & Wang 2018)
//!    through the privacy crate, which charges the ledger first. Option
//!    [`OpCalibration::Rdp`] (Say et al., Phase 1): σ = zΔ with z the smallest multiplier whose
//!    Gaussian RDP curve α/(2z²) converts to ε at δ (dp_accounting's conversion), charged as
//!    zCDP ρ = 1/(2z²) so it RDP-composes with other releases in the ledger.
//!
//! Refusal (`docs/deviations.md#dp2dp-phase-1-mechanism`, "noise would swamp the weights"): F(Ŵ) ≤ F(0) = ln K, so ‖Ŵ‖_F ≤ √(2 ln K / Λ)
//! on every data set. When the noise vector's expected norm σ√p reaches that bound, the release
//! would be dominated by noise whatever the data, and the fit is refused before any charge.
//! The check uses public quantities only (n, Λ, R, ε, δ, p), so refusing leaks nothing.

use crate::error::{LearnError, Result, invalid};
use crate::logistic::{LogisticModel, Problem, newton_cg};
use crate::validate::{at_least, check_classification, positive};
use dpfair_privacy::mechanisms::Gaussian;
use dpfair_privacy::{Ledger, Noise};
use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

/// How σ is calibrated to (ε, δ) (module doc, step 5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpCalibration {
    /// Analytic Gaussian (tightest for one release; an (ε, δ) ledger entry).
    #[default]
    Analytic,
    /// RDP / zCDP (`docs/reference-values.md#dp2dp`: z(1.0) = 4.0454 at δ = 1e-5); composes in RDP.
    Rdp,
}

/// Hyperparameters of output perturbation. Defaults: Say et al.'s hyperparameters ("R = 1 after scaling
/// features by a public constant"); Λ = 1e-2 (an ablation value: scikit-learn's C = 1
/// maps to Λ = 1/n, see [`crate::LogisticConfig::sklearn_c`]); ε = 1, δ = 1e-5.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OutputPerturbationConfig {
    pub epsilon: f64,
    pub delta: f64,
    /// Λ > 0: L2 strength per sample (includes the intercept).
    pub l2: f64,
    /// R > 0: rows [x; 1] are scaled down to ℓ2 norm at most R.
    pub feature_bound: f64,
    /// Solver tolerance on ‖∇F‖_∞ (enters the sensitivity, step 4).
    pub tol: f64,
    pub max_iter: usize,
    pub calibration: OpCalibration,
}

impl Default for OutputPerturbationConfig {
    fn default() -> Self {
        OutputPerturbationConfig {
            epsilon: 1.0,
            delta: 1e-5,
            l2: 1e-2,
            feature_bound: 1.0,
            tol: 1e-10,
            max_iter: 100,
            calibration: OpCalibration::Analytic,
        }
    }
}

/// The released model and the numbers of its privacy statement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputPerturbationFit {
    /// Noisy weights; predicts with the same feature map φ (`row_clip = R`).
    pub model: LogisticModel,
    /// Λ.
    pub l2: f64,
    /// R.
    pub feature_bound: f64,
    /// L (step 3).
    pub lipschitz: f64,
    /// Δ (step 4), replace-one.
    pub sensitivity: f64,
    /// σ of the Gaussian noise on each weight.
    pub sigma: f64,
}

impl OutputPerturbationConfig {
    fn validate(&self) -> Result<()> {
        positive("epsilon", self.epsilon)?;
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(invalid(
                "delta",
                format!("must be in (0, 1), got {}", self.delta),
            ));
        }
        positive("l2", self.l2)?;
        positive("feature_bound", self.feature_bound)?;
        positive("tol", self.tol)?;
        at_least("max_iter", self.max_iter, 1)
    }

    /// (L, Δ, σ) for `n` rows, `d` features and `n_classes` classes: all public.
    pub fn calibrate(&self, n: usize, d: usize, n_classes: usize) -> Result<(f64, f64, Gaussian)> {
        self.validate()?;
        let m = LogisticModel::score_rows(n_classes);
        let p = (m * (d + 1)) as f64;
        let lipschitz = if m == 1 {
            self.feature_bound
        } else {
            2f64.sqrt() * self.feature_bound
        };
        let sensitivity =
            2.0 * lipschitz / (n as f64 * self.l2) + 2.0 * self.tol * p.sqrt() / self.l2;
        let gaussian = match self.calibration {
            OpCalibration::Analytic => Gaussian::analytic(sensitivity, self.epsilon, self.delta)?,
            OpCalibration::Rdp => {
                let z = rdp_gaussian_multiplier(self.epsilon, self.delta)?;
                Gaussian::from_zcdp(sensitivity, 1.0 / (2.0 * z * z))?
            }
        };
        Ok((lipschitz, sensitivity, gaussian))
    }
}

/// Smallest noise multiplier z (relative tolerance 1e-9, on the safe side) of one Gaussian
/// release whose RDP curve α/(2z²) converts to at most ε at δ over the privacy crate's default
/// orders (`docs/reference-values.md#dp2dp`: z(0.46) = 8.2821, z(0.5) = 7.6674, z(1.0) = 4.0454 at δ = 1e-5).
pub fn rdp_gaussian_multiplier(epsilon: f64, delta: f64) -> Result<f64> {
    use dpfair_privacy::accounting::{default_orders, rdp_to_dp};
    let orders = default_orders();
    let eps = |z: f64| -> Result<f64> {
        let curve: Vec<f64> = orders.iter().map(|a| a / (2.0 * z * z)).collect();
        Ok(rdp_to_dp(&orders, &curve, delta)?)
    };
    let (mut lo, mut hi) = (1e-3, 1.0);
    while eps(hi)? > epsilon {
        lo = hi;
        hi *= 2.0;
        if hi > 1e9 {
            return Err(invalid(
                "epsilon",
                format!("no z ≤ 1e9 reaches ε = {epsilon}"),
            ));
        }
    }
    while hi - lo > 1e-9 * hi {
        let mid = 0.5 * (lo + hi);
        if eps(mid)? <= epsilon {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// Fits and releases output-perturbed logistic regression (module doc, steps 1–5).
pub fn fit_output_perturbation(
    cfg: &OutputPerturbationConfig,
    x: ArrayView2<'_, f64>,
    y: &[u32],
    n_classes: usize,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<OutputPerturbationFit> {
    check_classification(x, y, n_classes, "output perturbation")?;
    let (n, d) = x.dim();
    let (lipschitz, sensitivity, gaussian) = cfg.calibrate(n, d, n_classes)?;
    let m = LogisticModel::score_rows(n_classes);
    let p = m * (d + 1);
    let sigma = gaussian.sigma();
    let weight_bound = (2.0 * (n_classes as f64).ln() / cfg.l2).sqrt();
    if sigma * (p as f64).sqrt() >= weight_bound {
        return Err(LearnError::NoiseSwamps(format!(
            "output perturbation with Λ = {}, R = {}, n = {n}: sensitivity Δ = 2L/(nΛ) = {sensitivity:.4}, \
             noise σ = {sigma:.4} per weight at (ε, δ) = ({}, {}); the noise vector's expected norm \
             σ√p = {:.4} (p = {p} weights) reaches the largest norm the weights can have, √(2 ln K/Λ) = \
             {weight_bound:.4}, so the noise would swamp the weights whatever the data. \
             Increase ε, n or Λ, or use DP-SGD",
            cfg.l2,
            cfg.feature_bound,
            cfg.epsilon,
            cfg.delta,
            sigma * (p as f64).sqrt()
        )));
    }
    let weights = penalised_minimiser(cfg, x, y, n_classes)?;
    // Step 5: the release (the mechanism charges the ledger before drawing noise).
    let noisy =
        gaussian.release_vec(ledger, noise, "output-perturbed logistic weights", &weights)?;
    Ok(OutputPerturbationFit {
        model: LogisticModel::from_params(n_classes, d, &noisy, Some(cfg.feature_bound)),
        l2: cfg.l2,
        feature_bound: cfg.feature_bound,
        lipschitz,
        sensitivity,
        sigma,
    })
}

/// Steps 1–2 of the module doc without any release: the exact penalised minimiser Ŵ on the
/// bounded feature map φ(x) = clip_R([x; 1]), as `score_rows` blocks of `[w (d values), b]`.
/// Not private on its own: [`fit_output_perturbation`] (or a caller releasing it jointly with
/// other statistics, CDP-Fair's logistic plug-in) adds Gaussian noise scaled to the sensitivity
/// of [`OutputPerturbationConfig::calibrate`]. Never refuses on the labels (one class is fine:
/// the objective is strongly convex whatever the data).
pub fn penalised_minimiser(
    cfg: &OutputPerturbationConfig,
    x: ArrayView2<'_, f64>,
    y: &[u32],
    n_classes: usize,
) -> Result<Vec<f64>> {
    cfg.validate()?;
    check_classification(x, y, n_classes, "output perturbation")?;
    let (n, d) = x.dim();
    let m = LogisticModel::score_rows(n_classes);
    // Step 1: φ(x) = clip_R([x; 1]).
    let mut phi = Array2::zeros((n, d + 1));
    for (mut out, row) in phi.rows_mut().into_iter().zip(x.rows()) {
        let norm = (row.dot(&row) + 1.0).sqrt();
        let s = (cfg.feature_bound / norm).min(1.0);
        for (o, v) in out.iter_mut().zip(row.iter().chain(std::iter::once(&1.0))) {
            *o = s * v;
        }
    }
    // Step 2: the penalised minimiser (no separate intercept: it is φ's last coordinate).
    let problem = Problem {
        x: phi.view(),
        y,
        m,
        l2: cfg.l2,
        fit_intercept: false,
        penalize_intercept: true,
    };
    let theta = newton_cg(&problem, cfg.tol, cfg.max_iter)?;
    // Problem's layout is m blocks of [w (d+1 incl. intercept), unused b]; keep the weights.
    let weights: Vec<f64> = theta
        .chunks_exact(d + 2)
        .flat_map(|blk| blk[..d + 1].iter().copied())
        .collect();
    Ok(weights)
}
