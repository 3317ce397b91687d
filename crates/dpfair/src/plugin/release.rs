//! Algorithm 1 S1 (with `S = 1`: Algorithm 5 S1) as an exactly private finite object.
//!
//! ## What is released
//!
//! For group `a ∈ {0,1}` the paper releases the functions (Alg. 1 S1.2, numbered as in the paper)
//! `p̃_{X|A=a}(x) = (1/n_a) Σ_{i: A_i=a} K_h(X_i − x) + c_a W_{1,a}(x)` and
//! `p̃_{X,Y|A=a}(x,1) = (1/n_a) Σ_{i: A_i=a, Y_i=1} K_h(X_i − x) + c_a W_{2,a}(x)`, and the ratio
//! `η̃_a = p̃_{X,Y|A=a}(·,1) / p̃_{X|A=a}` (S1.2), plus `π̃_a = n_a/n + w_a` (S1.1).
//!
//! Here the kernel is replaced by its random-feature approximation `K_h(x−x') ≈ h^{−d} φ(x)·φ(x')`
//! in the public basis [`RffBasis`], so each function is `x ↦ c·φ(x)` for a coefficient vector
//! `c ∈ R^{2D}`:
//!
//! * denominator `F_a = (h^{−d}/n) Σ_{i: A_i=a} φ(X_i)`, numerator `G_a = (h^{−d}/n) Σ_{i: A_i=a, Y_i=1} φ(X_i)`.
//!
//! They are normalised by the **public** training size `n`, not by the group size `n_a`: the ratio
//! `η̃_a = (G̃_a·φ(x)) / (F̃_a·φ(x))` is unchanged (both carry the factor `n_a/n`), and with the
//! paper's noise multiplier rescaled by the same factor the distribution of `η̃_a` is exactly the
//! paper's; but the noise scale no longer depends on the private `n_a` (`docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments`).
//!
//! ## Sensitivity (checked here; the paper's Prop. 4 Step 1 bounds it by the triangle inequality)
//!
//! Replace-one neighbours, one training record `(X, A, Y) → (X', A', Y')`, `‖φ(·)‖₂ = 1`:
//! * `A = A'`: only `F_A` and `G_A` change, each by `(h^{−d}/n)(φ(X) − φ(X'))` or less, norm
//!   `≤ 2h^{−d}/n` (random features can have `φ(X)·φ(X') < 0`, so 2 is attained in the limit).
//! * `A ≠ A'`: `F_A` loses `h^{−d}φ(X)/n`, `F_{A'}` gains `h^{−d}φ(X')/n`: the pair `(F_0, F_1)`
//!   moves by `√2 h^{−d}/n ≤ 2h^{−d}/n`; the same for `(G_0, G_1)`.
//!
//! So each stacked pair `(F_0, F_1)`, `(G_0, G_1)` has ℓ2-sensitivity `Δ_K = 2h^{−d}/n` (the
//! paper's `2 sqrt(C_K)/(n_a h^d)` with `C_K = ‖φ‖² = 1` and the public normaliser), and
//! `π̂_a = n_a/n` has sensitivity `1/n`. Releasing each pair as **one** vector Gaussian release is
//! exact under replace-one neighbours; the paper's "parallel composition over `a`" is not (a
//! record whose `A` changes touches both groups), but the joint release costs the same.
//!
//! ## Calibration ([`S1Accounting`])
//!
//! * `Strict` (default): the four statistics `π̂_0`, `π̂_1`, `(F_0,F_1)`, `(G_0,G_1)` are released
//!   in **one** vector Gaussian mechanism, each block scaled to sensitivity `1/2` (equal shares,
//!   as the paper's quarters), joint sensitivity 1, σ from the analytic Gaussian at the whole
//!   `(ε, δ)` (valid for every ε, `docs/deviations.md#fdp-fair-gaussian-mechanism-for-epsilon-above-1`). Block `b` then carries noise `2Δ_b σ_1`.
//! * `Paper`: the paper's four releases with the classical σ at `(ε/4, δ/4)` each
//!   (`σ_π = 4 sqrt(2 log(5/δ))/(nε)`, `c_a = 8 sqrt(2 C_K log(8/δ))/(n_a ε h^d)`, i.e.
//!   `(n_a/n) c_a` on the `n`-normalised coefficients), or with the
//!   code's "known π" the two function releases at `(ε/2, δ/2)`; the ledger records what each σ
//!   really costs.

use crate::plugin::basis::RffBasis;
use crate::plugin::error::{Error, Result, invalid};
use dpfair_privacy::mechanisms::Gaussian;
use dpfair_privacy::{Entry, Ledger, Noise};
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

/// How a Gaussian release is calibrated.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Calibration {
    /// The smallest σ giving `(ε, δ)` (analytic Gaussian, Balle & Wang 2018; any ε > 0).
    Analytic { epsilon: f64, delta: f64 },
    /// A noise standard deviation fixed by a formula (the paper's); the ledger records what it
    /// really costs (ρ-zCDP with `ρ = Δ²/(2σ²)`, converted at the ledger's δ).
    Sigma { sigma: f64 },
}

/// The single seam through which CDP-Fair and FDP-Fair code obtain Gaussian noise: one vector Gaussian
/// release of `values` with ℓ2-sensitivity `sensitivity` through the privacy crate's
/// [`Gaussian`] mechanism (exact discrete Gaussian on a lattice; charged to `ledger` before any
/// noise is drawn).
pub fn gaussian_release_vec(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    sensitivity: f64,
    calibration: Calibration,
    values: &[f64],
) -> Result<Vec<f64>> {
    let mechanism = match calibration {
        Calibration::Analytic { epsilon, delta } => {
            Gaussian::analytic(sensitivity, epsilon, delta)?
        }
        Calibration::Sigma { sigma } => Gaussian::from_sigma(sensitivity, sigma)?,
    };
    Ok(mechanism.release_vec(ledger, noise, label, values)?)
}

fn check_eps_delta(epsilon: f64, delta: f64) -> Result<()> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(invalid(
            "epsilon",
            format!("must be finite and > 0, got {epsilon}"),
        ));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(invalid("delta", format!("must be in (0, 1), got {delta}")));
    }
    Ok(())
}

/// Classical Gaussian σ of Lemma 38 (Dwork & Roth Thm 3.22): `Δ sqrt(2 ln(1.25/δ))/ε`. The paper
/// uses it at every ε; its real cost is recorded by [`Calibration::Sigma`].
pub fn classical_sigma(sensitivity: f64, epsilon: f64, delta: f64) -> f64 {
    sensitivity * (2.0 * (1.25 / delta).ln()).sqrt() / epsilon
}

/// σ of the functional Gaussian mechanism of Lemma 39 (Hall, Rinaldo, Wasserman 2013, Cor. 9):
/// `Δ_K sqrt(2 ln(2/δ))/ε` (note `2/δ`, not the scalar mechanism's `1.25/δ`).
pub fn functional_sigma(sensitivity: f64, epsilon: f64, delta: f64) -> f64 {
    sensitivity * (2.0 * (2.0 / delta).ln()).sqrt() / epsilon
}

/// The non-private sufficient statistics of S1 on one training set: per cell `(a, y)` (index
/// `2a + y`) the count and the sum of feature maps `Σ φ(X_i)`.
#[derive(Clone, Debug)]
pub struct KernelSums {
    basis: RffBasis,
    n: usize,
    counts: [usize; 4],
    sums: Vec<Vec<f64>>,
}

/// Cell index `2a + y` of a record.
pub fn cell_of(a: u32, y: u8) -> usize {
    2 * a as usize + y as usize
}

impl KernelSums {
    /// Sums over the rows of `x` with groups `a` (0/1) and labels `y` (0/1). Parallel.
    pub fn compute(basis: &RffBasis, x: ArrayView2<f64>, a: &[u32], y: &[u8]) -> Result<Self> {
        if a.len() != x.nrows() || y.len() != x.nrows() {
            return Err(Error::InvalidData(format!(
                "{} rows, {} group codes, {} labels",
                x.nrows(),
                a.len(),
                y.len()
            )));
        }
        if x.nrows() == 0 {
            return Err(Error::InvalidData("no training rows".into()));
        }
        let mut cells = Vec::with_capacity(a.len());
        let mut counts = [0usize; 4];
        for (i, (&ai, &yi)) in a.iter().zip(y).enumerate() {
            if ai > 1 || yi > 1 {
                return Err(Error::InvalidData(format!(
                    "row {i}: group {ai} / label {yi}; CDP-Fair and FDP-Fair need binary groups and labels"
                )));
            }
            let c = cell_of(ai, yi);
            counts[c] += 1;
            cells.push(c);
        }
        let sums = basis.sum_features_by_cell(x, &cells, 4)?;
        Ok(KernelSums {
            basis: basis.clone(),
            n: x.nrows(),
            counts,
            sums,
        })
    }

    pub fn basis(&self) -> &RffBasis {
        &self.basis
    }

    /// Training size `n` (public under replace-one neighbours).
    pub fn n(&self) -> usize {
        self.n
    }

    /// Group size `n_a` (private).
    pub fn group_count(&self, a: usize) -> usize {
        self.counts[2 * a] + self.counts[2 * a + 1]
    }

    /// `h^{−d}/n`: the coefficient scale of both functions.
    fn scale(&self) -> f64 {
        self.basis.bandwidth().powi(-(self.basis.dim() as i32)) / self.n as f64
    }

    /// `(F_a, G_a)` without noise.
    fn exact_coefficients(&self, a: usize) -> (Vec<f64>, Vec<f64>) {
        let s = self.scale();
        let den = self.sums[2 * a]
            .iter()
            .zip(&self.sums[2 * a + 1])
            .map(|(u, v)| s * (u + v))
            .collect();
        let num = self.sums[2 * a + 1].iter().map(|v| s * v).collect();
        (den, num)
    }

    /// `Δ_K = 2h^{−d}/n`, the ℓ2-sensitivity of each stacked pair (module docs).
    pub fn function_sensitivity(&self) -> f64 {
        2.0 * self.scale()
    }

    /// The non-private estimate (`π̂_a = n_a/n`, exact coefficients): the fairness-only and
    /// unconstrained baselines (§5.2), not a release.
    pub fn non_private(&self) -> PluginEstimate {
        let (f0, g0) = self.exact_coefficients(0);
        let (f1, g1) = self.exact_coefficients(1);
        let n = self.n as f64;
        PluginEstimate::new(
            self.basis.clone(),
            [
                self.group_count(0) as f64 / n,
                self.group_count(1) as f64 / n,
            ],
            [f0, f1],
            [g0, g1],
        )
    }

    /// Algorithm 1 S1 at one site / Algorithm 5 S1: release `π̃_a` and the two function pairs
    /// (module docs), charging `ledger`.
    pub fn release(
        &self,
        plan: &S1Plan,
        ledger: &mut Ledger,
        noise: &mut Noise,
    ) -> Result<PluginEstimate> {
        check_eps_delta(plan.epsilon, plan.delta)?;
        let n = self.n as f64;
        let pi_hat = [
            self.group_count(0) as f64 / n,
            self.group_count(1) as f64 / n,
        ];
        let (f0, g0) = self.exact_coefficients(0);
        let (f1, g1) = self.exact_coefficients(1);
        let len = f0.len();
        let dk = self.function_sensitivity();
        let dpi = 1.0 / n;
        let (pi, f, g) = match plan.accounting {
            S1Accounting::Strict => {
                if plan.pi == PiRelease::Empirical {
                    return Err(invalid(
                        "pi",
                        "empirical (non-private) class probabilities need the paper accounting mode",
                    ));
                }
                // Blocks with their sensitivities; each scaled to sensitivity 1/2·(4/B)^{1/2} so that
                // the joint sensitivity is 1 and every block gets the same share.
                let mut blocks: Vec<(Vec<f64>, f64)> = Vec::new();
                if plan.pi == PiRelease::Private {
                    blocks.push((vec![pi_hat[0]], dpi));
                    blocks.push((vec![pi_hat[1]], dpi));
                }
                blocks.push(([f0, f1].concat(), dk));
                blocks.push(([g0, g1].concat(), dk));
                let per_block = 1.0 / (blocks.len() as f64).sqrt();
                let mut scaled = Vec::new();
                for (v, d) in &blocks {
                    scaled.extend(v.iter().map(|x| x * per_block / d));
                }
                let out = gaussian_release_vec(
                    ledger,
                    noise,
                    &format!(
                        "{}S1: π̃_a and kernel-estimator coefficients (joint)",
                        plan.label_prefix
                    ),
                    1.0,
                    Calibration::Analytic {
                        epsilon: plan.epsilon,
                        delta: plan.delta,
                    },
                    &scaled,
                )?;
                let mut it = out.into_iter();
                let mut take = |k: usize, d: f64| -> Vec<f64> {
                    it.by_ref().take(k).map(|v| v * d / per_block).collect()
                };
                let pi = if plan.pi == PiRelease::Private {
                    [take(1, dpi)[0], take(1, dpi)[0]]
                } else {
                    SKIPPED_PI
                };
                (pi, take(2 * len, dk), take(2 * len, dk))
            }
            S1Accounting::Paper => {
                let (share, pi) = match plan.pi {
                    PiRelease::Private => {
                        let (e, d) = (plan.epsilon / 4.0, plan.delta / 4.0);
                        let mut pi = [0.0; 2];
                        for a in 0..2 {
                            pi[a] = gaussian_release_vec(
                                ledger,
                                noise,
                                &format!("{}S1.1: π̃_{a}", plan.label_prefix),
                                dpi,
                                Calibration::Sigma {
                                    sigma: classical_sigma(dpi, e, d),
                                },
                                &[pi_hat[a]],
                            )?[0];
                        }
                        (4.0, pi)
                    }
                    PiRelease::Empirical => {
                        ledger.charge(Entry::non_private(
                            format!("{}S1.1: π̂_a empirical (\"known π\")", plan.label_prefix),
                            "the paper's experiments use non-private group proportions (docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments)",
                        ))?;
                        (2.0, pi_hat)
                    }
                    PiRelease::Skip => (2.0, SKIPPED_PI),
                };
                let (e, d) = (plan.epsilon / share, plan.delta / share);
                let sigma = plan.c_k.sqrt() * functional_sigma(dk, e, d);
                let mut rel = |label: &str, v: Vec<f64>| {
                    gaussian_release_vec(
                        ledger,
                        noise,
                        &format!("{}{label}", plan.label_prefix),
                        dk,
                        Calibration::Sigma { sigma },
                        &v,
                    )
                };
                let f = rel("S1.2: density coefficients (F_0, F_1)", [f0, f1].concat())?;
                let g = rel("S1.2: numerator coefficients (G_0, G_1)", [g0, g1].concat())?;
                (pi, f, g)
            }
        };
        let (f0, f1) = f.split_at(len);
        let (g0, g1) = g.split_at(len);
        Ok(PluginEstimate::new(
            self.basis.clone(),
            pi,
            [f0.to_vec(), f1.to_vec()],
            [g0.to_vec(), g1.to_vec()],
        ))
    }
}

/// How `π̃_a` is obtained in S1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PiRelease {
    /// Released privately (Alg. 1 S1.1), the paper's algorithm.
    #[default]
    Private,
    /// Non-private empirical proportions ("known π", the paper's experiments; paper mode only).
    Empirical,
    /// Not needed (privacy-only baseline: threshold 1/2 does not use π).
    Skip,
}

/// How S1 is calibrated (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum S1Accounting {
    #[default]
    Strict,
    Paper,
}

/// One S1 release: budget, accounting, π handling.
#[derive(Clone, Debug, PartialEq)]
pub struct S1Plan {
    pub epsilon: f64,
    pub delta: f64,
    pub accounting: S1Accounting,
    pub pi: PiRelease,
    /// `C_K` used by the paper formulas (`Paper` only; the RFF map has `‖φ‖² = 1`, so the value
    /// the privacy proof needs is 1; the FDP code's 0.5 under-noises, `docs/deviations.md#fdp-fair-unaccounted-leaks-in-the-experiments`).
    pub c_k: f64,
    /// Prefix of ledger labels (e.g. "fold 1: ", "site 3: ").
    pub label_prefix: String,
}

/// `π̃` of an estimate that released none ([`PiRelease::Skip`]): placeholders, harmless because
/// the only rule used with it is `τ = 0`, where `z ≥ 0 ⟺ η̃ ≥ 1/2` whatever `π̃`.
pub const SKIPPED_PI: [f64; 2] = [0.5, 0.5];

/// Floor of the π̃ clamp (`docs/deviations.md#fdp-fair-stability-of-the-eta-ratio`: `π̃ ← clip(π̃, 1e−6, 1 − 1e−6)`).
pub const PI_FLOOR: f64 = 1e-6;

/// The released S1 estimate: evaluable anywhere by anyone holding it. `η̃_a(x) = clip(G̃_a·φ(x) /
/// max(F̃_a·φ(x), floor), 0, 1)` (S1.2 and `docs/deviations.md#fdp-fair-stability-of-the-eta-ratio`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PluginEstimate {
    pub basis: RffBasis,
    /// `π̃_a`, clamped to `[1e−6, 1 − 1e−6]` ([`SKIPPED_PI`] when not released).
    pub pi: [f64; 2],
    /// Coefficients of the (n-normalised) density `F̃_a`.
    pub denominator: [Vec<f64>; 2],
    /// Coefficients of the (n-normalised) numerator `G̃_a`.
    pub numerator: [Vec<f64>; 2],
}

impl PluginEstimate {
    pub fn new(
        basis: RffBasis,
        pi: [f64; 2],
        denominator: [Vec<f64>; 2],
        numerator: [Vec<f64>; 2],
    ) -> Self {
        let pi = pi.map(|p| {
            if p.is_nan() {
                p
            } else {
                p.clamp(PI_FLOOR, 1.0 - PI_FLOOR)
            }
        });
        PluginEstimate {
            basis,
            pi,
            denominator,
            numerator,
        }
    }

    /// The ν-weighted aggregate of several sites' estimates in the same basis (Alg. 1 S1, server
    /// side): `π̃_a = Σ ν_s π̃_a^s`, coefficients `Σ ν_s c^s` for numerator and denominator
    /// separately (the ratio of weighted sums).
    pub fn aggregate(parts: &[(f64, &PluginEstimate)]) -> Result<Self> {
        let Some((_, first)) = parts.first() else {
            return Err(invalid("sites", "nothing to aggregate"));
        };
        let len = first.basis.len();
        let mut pi = [0.0; 2];
        let mut den = [vec![0.0; len], vec![0.0; len]];
        let mut num = [vec![0.0; len], vec![0.0; len]];
        for (s, (w, e)) in parts.iter().enumerate() {
            if e.basis != first.basis {
                return Err(invalid("basis", format!("site {s} uses a different basis")));
            }
            if !(w.is_finite() && *w >= 0.0) {
                return Err(invalid("weights", format!("site {s}: weight {w}")));
            }
            for a in 0..2 {
                pi[a] += w * e.pi[a];
                den[a]
                    .iter_mut()
                    .zip(&e.denominator[a])
                    .for_each(|(x, y)| *x += w * y);
                num[a]
                    .iter_mut()
                    .zip(&e.numerator[a])
                    .for_each(|(x, y)| *x += w * y);
            }
        }
        Ok(PluginEstimate::new(first.basis.clone(), pi, den, num))
    }

    /// Floor of the denominator (`docs/deviations.md#fdp-fair-stability-of-the-eta-ratio`): tiny relative to the kernel scale `h^{−d}`.
    fn floor(&self) -> f64 {
        1e-12 * self.basis.bandwidth().powi(-(self.basis.dim() as i32))
    }

    /// `η̃_a` at every row of `x`.
    pub fn eta(&self, a: usize, x: ArrayView2<f64>) -> Result<Vec<f64>> {
        if a > 1 {
            return Err(invalid("group", format!("group {a} (need 0 or 1)")));
        }
        let v = self
            .basis
            .evaluate(&[&self.numerator[a], &self.denominator[a]], x)?;
        let floor = self.floor();
        Ok(v.outer_iter().map(|r| ratio(r[0], r[1], floor)).collect())
    }

    /// `η̃_{a_i}(x_i)` for every row, each row in its own group.
    pub fn eta_grouped(&self, x: ArrayView2<f64>, a: &[u32]) -> Result<Vec<f64>> {
        if a.len() != x.nrows() {
            return Err(Error::InvalidData(format!(
                "{} group codes for {} rows",
                a.len(),
                x.nrows()
            )));
        }
        if let Some(i) = a.iter().position(|&g| g > 1) {
            return Err(Error::InvalidData(format!(
                "row {i}: group code {} (need 0 or 1)",
                a[i]
            )));
        }
        let v = self.basis.evaluate(
            &[
                &self.numerator[0],
                &self.denominator[0],
                &self.numerator[1],
                &self.denominator[1],
            ],
            x,
        )?;
        let floor = self.floor();
        Ok(v.outer_iter()
            .zip(a)
            .map(|(r, &g)| {
                let k = 2 * g as usize;
                ratio(r[k], r[k + 1], floor)
            })
            .collect())
    }
}

fn ratio(num: f64, den: f64, floor: f64) -> f64 {
    (num / den.max(floor)).clamp(0.0, 1.0)
}
