//! The logistic plug-in (`--eta-model logistic`, `docs/deviations.md#fdp-fair-logistic-plug-in`):
//! `η̃_a(x) = σ(w̃·φ(x, a))`, L2-regularised logistic regression with the group as a feature,
//! released by output perturbation (Chaudhuri, Monteleoni, Sarwate 2011) jointly with `π̃_a`, in
//! place of the papers' kernel ratio when the kernel has no signal left (high dimension, few rows).
//!
//! ## What is released (strict S1, one ledger entry, the kernel path's `(ε, δ)`)
//!
//! * The feature map `φ(x, a) = [x; a; 1] / max(1, ‖[x; a; 1]‖₂)`, so `‖φ‖ ≤ 1` (every row of
//!   `[0,1]`-scaled features has norm ≥ 1 because of the constant, so `φ` is the unit vector).
//! * `ŵ = argmin (1/n) Σ log(1 + exp(−(2y−1) w·φ_i)) + (Λ/2)‖w‖²` (the intercept penalised, for
//!   strong convexity), solved to `‖∇‖_∞ ≤ 1e−10` by the learning crate's Newton-CG.
//! * Replace-one sensitivity `Δ_w = 2/(nΛ) + 2·tol·√p/Λ` (Chaudhuri et al. 2011, Cor. 8, plus the
//!   solver's tolerance; `dpfair_learn::output_perturbation`), `π̂_a = n_a/n` sensitivity `1/n`.
//! * `(π̂_0, π̂_1, ŵ)` in **one** analytic-Gaussian release at the whole `(ε, δ)`, each block
//!   scaled to sensitivity `1/√3` ([`joint_release`]): the same relation (replace-one), the same
//!   budget and the same single entry as the kernel's strict S1. The privacy-only baseline
//!   (no `π̃`) releases `ŵ` alone.
//!
//! ## The ridge strength Λ (public rule, [`public_l2`])
//!
//! The noise on any row's logit `w̃·φ` has standard deviation at most `s_w = √B σ_1 Δ_w` (`‖φ‖ ≤ 1`,
//! `B` blocks). Λ is chosen so that `s_w ≈` [`LOGIT_NOISE`]: `Λ = 2√B σ_1/(n · LOGIT_NOISE)`,
//! and at least `1/n` (scikit-learn's default `C = 1`). It reads only `n` (public), `ε`, `δ`.

use crate::plugin::error::{Error, Result, invalid};
use crate::plugin::release::{
    PiRelease, PluginEstimate, S1Accounting, S1Plan, SKIPPED_PI, check_eps_delta, check_groups,
    joint_noise_per_unit, joint_release,
};
use dpfair_learn::output_perturbation::{OutputPerturbationConfig, penalised_minimiser};
use ndarray::{Array2, ArrayView1, ArrayView2};
use serde::{Deserialize, Serialize};

/// Target standard deviation of the release noise on a row's logit (the ridge rule above): at
/// 0.5 a logit of ±1 (η = 0.27 or 0.73) keeps its sign with probability 0.98.
pub const LOGIT_NOISE: f64 = 0.5;

/// Newton-CG tolerance on `‖∇F‖_∞` (it enters the sensitivity, module docs).
const TOL: f64 = 1e-10;

/// The released logistic plug-in: weights of `φ(x, a)` (module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogisticEta {
    /// `d` feature weights, the group's weight, the intercept's weight.
    pub weights: Vec<f64>,
    /// Λ (public; 0 for the DP-SGD plug-in, which has no ridge).
    pub l2: f64,
    /// Standard deviation of the release noise on each weight (public), which bounds the noise
    /// on every row's logit (`‖φ‖ ≤ 1`). For the DP-SGD plug-in: the noise DP-SGD adds to the
    /// weights (learning rate × σ × √steps / batch), for reports only.
    pub noise_sd: f64,
    /// How a row is mapped before the weights apply (model files before the DP-SGD plug-in:
    /// the unit ball).
    #[serde(default, skip_serializing_if = "FeatureMap::is_unit_ball")]
    pub feature_map: FeatureMap,
}

/// The row map of a [`LogisticEta`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeatureMap {
    /// `φ(x, a) = [x; a; 1] / max(1, ‖[x; a; 1]‖)`: output perturbation's bounded rows.
    #[default]
    UnitBall,
    /// `φ(x, a) = [x; a; 1]`: the DP-SGD plug-in ([`crate::cdp_fair::all_rows`]), whose
    /// privacy comes from per-example gradient clipping, not from the rows' norm.
    Raw,
}

impl FeatureMap {
    fn is_unit_ball(&self) -> bool {
        *self == FeatureMap::UnitBall
    }
}

/// `φ(x, a)` of one row under `map`.
fn phi<'a>(row: ArrayView1<'a, f64>, a: u32, map: FeatureMap) -> impl Iterator<Item = f64> + 'a {
    let g = f64::from(a);
    let norm = match map {
        FeatureMap::UnitBall => (row.dot(&row) + g * g + 1.0).sqrt().max(1.0),
        FeatureMap::Raw => 1.0,
    };
    row.into_iter()
        .copied()
        .chain([g, 1.0])
        .map(move |v| v / norm)
}

impl LogisticEta {
    /// Number of feature columns `d`.
    pub fn dim(&self) -> usize {
        self.weights.len().saturating_sub(2)
    }

    /// One line naming the estimator and its public settings.
    pub fn describe(&self) -> String {
        match self.feature_map {
            FeatureMap::UnitBall => format!(
                "logistic plug-in (Λ = {:.2e}, noise sd {:.3} per weight and at most that on a row's logit)",
                self.l2, self.noise_sd
            ),
            FeatureMap::Raw => format!(
                "DP-SGD logistic plug-in (noise sd ≈ {:.3} per weight)",
                self.noise_sd
            ),
        }
    }

    /// `η̃_{a_i}(x_i) = σ(w̃·φ(x_i, a_i))` for every row.
    pub fn eta_grouped(&self, x: ArrayView2<f64>, a: &[u32]) -> Result<Vec<f64>> {
        check_groups(x, a)?;
        if x.ncols() != self.dim() {
            return Err(Error::InvalidData(format!(
                "{} feature columns, the logistic plug-in has {}",
                x.ncols(),
                self.dim()
            )));
        }
        Ok(x.rows()
            .into_iter()
            .zip(a)
            .map(|(row, &g)| {
                let z: f64 = phi(row, g, self.feature_map)
                    .zip(&self.weights)
                    .map(|(p, w)| p * w)
                    .sum();
                1.0 / (1.0 + (-z).exp())
            })
            .collect())
    }
}

/// Λ of the module docs for `n` training rows, `blocks` blocks in the joint release (3 with
/// `π̃`, 1 without) at `(ε, δ)`; `1/n` when ε is infinite (non-private references).
///
/// ```
/// use dpfair::plugin::logistic::public_l2;
/// let l2 = public_l2(10_000, 3, 1.0, 1e-8).unwrap();
/// assert!(l2 > 1.0 / 10_000.0 && l2 < 0.01);
/// ```
pub fn public_l2(n: usize, blocks: usize, epsilon: f64, delta: f64) -> Result<f64> {
    let n = n.max(1) as f64;
    if epsilon.is_infinite() {
        return Ok(1.0 / n);
    }
    let unit = joint_noise_per_unit(blocks, epsilon, delta)?;
    Ok((2.0 * unit / (n * LOGIT_NOISE)).max(1.0 / n))
}

/// What the server recomputes of an honest site's logistic release from public values
/// (`crate::fdp_fair::trust::check_logistic`): Λ ([`public_l2`] with `π̃`, 3 blocks), the
/// noise standard deviation of each weight, and the bound `sqrt(2 ln 2/Λ) + √p·tol/Λ` on the
/// norm of the noise-free minimiser (`F(w*) ≤ F(0) = ln 2`, and the solver's tolerance under
/// Λ-strong convexity).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PublicRelease {
    pub l2: f64,
    pub noise_sd: f64,
    pub weight_norm: f64,
}

/// [`PublicRelease`] for `n` training rows of `d` feature columns at `(ε, δ)`.
pub fn public_release(n: usize, d: usize, epsilon: f64, delta: f64) -> Result<PublicRelease> {
    let l2 = public_l2(n, 3, epsilon, delta)?;
    let (_, sensitivity, _) = LogisticS1::op_config(l2, epsilon, delta)
        .calibrate(n, d + 1, 2)
        .map_err(learn_error)?;
    let p = (d + 2) as f64;
    Ok(PublicRelease {
        l2,
        noise_sd: joint_noise_per_unit(3, epsilon, delta)? * sensitivity,
        weight_norm: (2.0 * std::f64::consts::LN_2 / l2).sqrt() + p.sqrt() * TOL / l2,
    })
}

/// The non-private statistics of the logistic S1 on one training set: group proportions and the
/// exact penalised minimiser.
#[derive(Clone, Debug)]
pub struct LogisticS1 {
    n: usize,
    dim: usize,
    group_counts: [usize; 2],
    l2: f64,
    weights: Vec<f64>,
}

impl LogisticS1 {
    /// The minimiser on the rows of `x` with groups `a` and labels `y` (0/1), ridge `l2`.
    pub fn compute(x: ArrayView2<f64>, a: &[u32], y: &[u8], l2: f64) -> Result<Self> {
        check_groups(x, a)?;
        if y.len() != x.nrows() || x.nrows() == 0 {
            return Err(Error::InvalidData(format!(
                "{} rows, {} labels",
                x.nrows(),
                y.len()
            )));
        }
        let (n, d) = x.dim();
        let mut design = Array2::zeros((n, d + 1));
        design.slice_mut(ndarray::s![.., ..d]).assign(&x);
        let mut group_counts = [0usize; 2];
        for (i, &g) in a.iter().enumerate() {
            design[[i, d]] = f64::from(g);
            group_counts[g as usize] += 1;
        }
        let labels: Vec<u32> = y.iter().map(|&v| u32::from(v)).collect();
        let weights =
            penalised_minimiser(&Self::op_config(l2, 1.0, 0.5), design.view(), &labels, 2)
                .map_err(learn_error)?;
        Ok(LogisticS1 {
            n,
            dim: d,
            group_counts,
            l2,
            weights,
        })
    }

    /// The learning crate's output-perturbation settings: `R = 1`, Λ, the solver tolerance.
    fn op_config(l2: f64, epsilon: f64, delta: f64) -> OutputPerturbationConfig {
        OutputPerturbationConfig {
            epsilon,
            delta,
            l2,
            feature_bound: 1.0,
            tol: TOL,
            ..OutputPerturbationConfig::default()
        }
    }

    /// `Δ_w` at `(ε, δ)` (module docs; the budget does not change it).
    fn sensitivity(&self, epsilon: f64, delta: f64) -> Result<f64> {
        let (_, sensitivity, _) = Self::op_config(self.l2, epsilon, delta)
            .calibrate(self.n, self.dim + 1, 2)
            .map_err(learn_error)?;
        Ok(sensitivity)
    }

    /// Strict S1 with the logistic plug-in (module docs), charging `ledger`.
    pub fn release(
        &self,
        plan: &S1Plan,
        ledger: &mut dpfair_privacy::Ledger,
        noise: &mut dpfair_privacy::Noise,
    ) -> Result<PluginEstimate> {
        check_eps_delta(plan.epsilon, plan.delta)?;
        if plan.accounting == S1Accounting::Paper {
            return Err(invalid(
                "eta_model",
                "the logistic plug-in has no paper procedure (the paper uses the kernel \
                 estimator): use strict accounting or the kernel estimator",
            ));
        }
        if plan.pi == PiRelease::Empirical {
            return Err(invalid(
                "pi",
                "empirical (non-private) class probabilities need the paper accounting mode",
            ));
        }
        let n = self.n as f64;
        let dw = self.sensitivity(plan.epsilon, plan.delta)?;
        let mut blocks = Vec::new();
        if plan.pi == PiRelease::Private {
            blocks.push((vec![self.group_counts[0] as f64 / n], 1.0 / n));
            blocks.push((vec![self.group_counts[1] as f64 / n], 1.0 / n));
        }
        blocks.push((self.weights.clone(), dw));
        let noise_sd = joint_noise_per_unit(blocks.len(), plan.epsilon, plan.delta)? * dw;
        let mut out = joint_release(
            ledger,
            noise,
            &format!(
                "{}S1: π̃_a and logistic plug-in weights (joint, output perturbation, Λ = {:.2e})",
                plan.label_prefix, self.l2
            ),
            &blocks,
            plan.epsilon,
            plan.delta,
        )?;
        let weights = out.pop().unwrap_or_default();
        let pi = if plan.pi == PiRelease::Private {
            [out[0][0], out[1][0]]
        } else {
            SKIPPED_PI
        };
        Ok(PluginEstimate::logistic(
            pi,
            LogisticEta {
                weights,
                l2: self.l2,
                noise_sd,
                feature_map: FeatureMap::UnitBall,
            },
        ))
    }

    /// The non-private estimate (`π̂_a = n_a/n`, exact weights): the references, not a release.
    pub fn non_private(&self) -> PluginEstimate {
        let n = self.n as f64;
        PluginEstimate::logistic(
            [
                self.group_counts[0] as f64 / n,
                self.group_counts[1] as f64 / n,
            ],
            LogisticEta {
                weights: self.weights.clone(),
                l2: self.l2,
                noise_sd: 0.0,
                feature_map: FeatureMap::UnitBall,
            },
        )
    }
}

fn learn_error(e: dpfair_learn::LearnError) -> Error {
    Error::InvalidData(format!("logistic plug-in: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpfair_privacy::{Budget, Ledger, Noise};

    /// The joint release has one entry at the whole (ε, δ), and its weights' noise has the
    /// standard deviation the estimate records: over 400 releases of the same statistics the
    /// sample sd of one weight is within 4 standard errors (sd·4/√(2·400)) of `noise_sd`.
    #[test]
    fn release_is_one_entry_with_the_recorded_noise() {
        let x = Array2::from_shape_fn((200, 2), |(i, j)| ((i * 7 + j * 3) % 10) as f64 / 10.0);
        let a: Vec<u32> = (0..200).map(|i| (i % 3 == 0) as u32).collect();
        let y: Vec<u8> = (0..200).map(|i| u8::from(x[[i, 0]] > 0.45)).collect();
        let s1 = LogisticS1::compute(x.view(), &a, &y, 0.05).expect("fit");
        let plan = S1Plan {
            epsilon: 1.0,
            delta: 1e-5,
            accounting: S1Accounting::Strict,
            pi: PiRelease::Private,
            c_k: 1.0,
            label_prefix: String::new(),
        };
        let mut noise = Noise::seeded(4);
        let mut draws = Vec::new();
        let mut sd = 0.0;
        for _ in 0..400 {
            let mut ledger = Ledger::new(Budget::approx(1.0, 1e-5).expect("budget"));
            let est = s1.release(&plan, &mut ledger, &mut noise).expect("release");
            assert_eq!(ledger.entries().len(), 1);
            let EtaEstimate::Logistic { logistic } = &est.eta else {
                panic!("not logistic")
            };
            sd = logistic.noise_sd;
            draws.push(logistic.weights[0] - s1.weights[0]);
        }
        let mean = draws.iter().sum::<f64>() / 400.0;
        let sample = (draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / 399.0).sqrt();
        assert!(
            (sample - sd).abs() < 4.0 * sd / 800f64.sqrt(),
            "sample sd {sample}, recorded {sd}"
        );
        assert!(s1.non_private().eta_grouped(x.view(), &a).is_ok());
    }

    use crate::plugin::release::EtaEstimate;
}
