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

use crate::accumulate::{CountTable, ShapeMismatch};
use crate::plugin::basis::{LATTICE_UNIT, RffBasis};
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
    Ok(mechanism(sensitivity, calibration)?.release_vec(ledger, noise, label, values)?)
}

/// The noise standard deviation σ of [`gaussian_release_vec`] with these arguments (public: it
/// depends on the sensitivity and the calibration only).
pub fn release_sigma(sensitivity: f64, calibration: Calibration) -> Result<f64> {
    Ok(mechanism(sensitivity, calibration)?.sigma())
}

fn mechanism(sensitivity: f64, calibration: Calibration) -> Result<Gaussian> {
    Ok(match calibration {
        Calibration::Analytic { epsilon, delta } => {
            Gaussian::analytic(sensitivity, epsilon, delta)?
        }
        Calibration::Sigma { sigma } => Gaussian::from_sigma(sensitivity, sigma)?,
    })
}

/// One vector Gaussian release of several blocks at `(ε, δ)` (analytic Gaussian), each block
/// with its own ℓ2-sensitivity `Δ_b` (the second element): block `b` is scaled to sensitivity
/// `1/√B` (`B` blocks, equal shares), so the stacked vector has sensitivity 1, and the noisy
/// blocks are returned on their own scale (block `b` carries noise `√B Δ_b σ_1`, `σ_1` the
/// analytic σ of sensitivity 1). The strict S1 release of both plug-in estimators.
pub fn joint_release(
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
    blocks: &[(Vec<f64>, f64)],
    epsilon: f64,
    delta: f64,
) -> Result<Vec<Vec<f64>>> {
    let per_block = 1.0 / (blocks.len() as f64).sqrt();
    let mut scaled = Vec::new();
    for (v, d) in blocks {
        scaled.extend(v.iter().map(|x| x * per_block / d));
    }
    let out = gaussian_release_vec(
        ledger,
        noise,
        label,
        1.0,
        Calibration::Analytic { epsilon, delta },
        &scaled,
    )?;
    let mut it = out.into_iter();
    Ok(blocks
        .iter()
        .map(|(v, d)| {
            it.by_ref()
                .take(v.len())
                .map(|x| x * d / per_block)
                .collect()
        })
        .collect())
}

/// `σ_1` of [`joint_release`] with `blocks` blocks: the noise standard deviation a block of
/// sensitivity `Δ_b` carries is `σ_1 √blocks Δ_b` (public: from `(ε, δ)` only).
pub fn joint_noise_per_unit(blocks: usize, epsilon: f64, delta: f64) -> Result<f64> {
    Ok(Gaussian::analytic(1.0, epsilon, delta)?.sigma() * (blocks as f64).sqrt())
}

/// Two parts' count tables differ in shape (cannot happen for parts of one statistic).
fn shape_error(e: ShapeMismatch) -> Error {
    Error::InvalidData(e.to_string())
}

pub(crate) fn check_eps_delta(epsilon: f64, delta: f64) -> Result<()> {
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

/// The non-private sufficient statistics of S1 on one training set, as a mergeable exact
/// accumulator (`crate::accumulate`): per cell `(a, y)` (index `2a + y`) the count and the sum of
/// feature maps `Σ q(φ(X_i))` on the release lattice ([`crate::plugin::basis::LATTICE_BITS`]),
/// integers. [`KernelSums::update`] adds a batch of rows, [`KernelSums::merge`] another part's
/// sums, [`KernelSums::release`] is the finalize step (noise drawn once, charged first); the sums
/// of any split of the rows, merged in any order, are the one-pass sums bit for bit.
///
/// ```
/// use dpfair::plugin::RffBasis;
/// use dpfair::plugin::release::KernelSums;
/// use ndarray::array;
///
/// let basis = RffBasis::new(1, 0.3, 8, 1).unwrap();
/// let x = array![[0.1], [0.7], [0.4]];
/// let (a, y) = ([0, 1, 1], [1, 0, 1]);
/// let whole = KernelSums::compute(&basis, x.view(), &a, &y).unwrap();
/// let mut first = KernelSums::new(&basis);
/// first.update(x.slice(ndarray::s![..1, ..]), &a[..1], &y[..1]).unwrap();
/// let mut rest = KernelSums::new(&basis);
/// rest.update(x.slice(ndarray::s![1.., ..]), &a[1..], &y[1..]).unwrap();
/// rest.merge(&first).unwrap();
/// assert_eq!(rest, whole);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSums {
    basis: RffBasis,
    counts: CountTable,
    /// `sums[c·2D + j] = Σ_{i in cell c} q(φ_j(X_i))` in lattice units.
    sums: Vec<i128>,
}

/// Cell index `2a + y` of a record.
pub fn cell_of(a: u32, y: u8) -> usize {
    2 * a as usize + y as usize
}

impl KernelSums {
    /// The empty statistic in `basis`.
    pub fn new(basis: &RffBasis) -> Self {
        KernelSums {
            basis: basis.clone(),
            counts: CountTable::new(4),
            sums: vec![0; 4 * basis.len()],
        }
    }

    /// Sums over the rows of `x` with groups `a` (0/1) and labels `y` (0/1): [`KernelSums::new`]
    /// and one [`KernelSums::update`]; an error when there are no rows. Parallel.
    pub fn compute(basis: &RffBasis, x: ArrayView2<f64>, a: &[u32], y: &[u8]) -> Result<Self> {
        if x.nrows() == 0 {
            return Err(Error::InvalidData("no training rows".into()));
        }
        let mut sums = KernelSums::new(basis);
        sums.update(x, a, y)?;
        Ok(sums)
    }

    /// Add a batch of rows (`x` with groups `a` and labels `y`, both 0/1). Parallel over rows.
    pub fn update(&mut self, x: ArrayView2<f64>, a: &[u32], y: &[u8]) -> Result<()> {
        if a.len() != x.nrows() || y.len() != x.nrows() {
            return Err(Error::InvalidData(format!(
                "{} rows, {} group codes, {} labels",
                x.nrows(),
                a.len(),
                y.len()
            )));
        }
        let mut cells = Vec::with_capacity(a.len());
        let mut counts = CountTable::new(4);
        for (i, (&ai, &yi)) in a.iter().zip(y).enumerate() {
            if ai > 1 || yi > 1 {
                return Err(Error::InvalidData(format!(
                    "row {i}: group {ai} / label {yi}; CDP-Fair and FDP-Fair need binary groups and labels"
                )));
            }
            let c = cell_of(ai, yi);
            counts
                .add(c)
                .map_err(|c| Error::InvalidData(format!("cell {c}")))?;
            cells.push(c);
        }
        let sums = self.basis.lattice_sums_by_cell(x, &cells, 4)?;
        self.counts.merge(&counts).map_err(shape_error)?;
        self.sums.iter_mut().zip(&sums).for_each(|(s, v)| *s += v);
        Ok(())
    }

    /// Add another part's sums (same basis): exact, so the order of merges does not matter.
    pub fn merge(&mut self, other: &KernelSums) -> Result<()> {
        if other.basis != self.basis {
            return Err(invalid(
                "basis",
                "cannot merge kernel sums taken in different random-feature bases",
            ));
        }
        self.counts.merge(&other.counts).map_err(shape_error)?;
        self.sums
            .iter_mut()
            .zip(&other.sums)
            .for_each(|(s, v)| *s += v);
        Ok(())
    }

    /// The raw sums `Σ q(φ(X_i))` of cell `2a + y` in lattice units (the exact statistic).
    pub fn lattice_sums(&self, cell: usize) -> &[i128] {
        let len = self.basis.len();
        &self.sums[cell * len..(cell + 1) * len]
    }

    /// The record counts of the cells `2a + y`.
    pub fn counts(&self) -> &[u64] {
        self.counts.counts()
    }

    pub fn basis(&self) -> &RffBasis {
        &self.basis
    }

    /// Training size `n` (public under replace-one neighbours).
    pub fn n(&self) -> usize {
        self.counts.total() as usize
    }

    /// Group size `n_a` (private).
    pub fn group_count(&self, a: usize) -> usize {
        let c = self.counts.counts();
        (c[2 * a] + c[2 * a + 1]) as usize
    }

    /// `h^{−d}/n`: the coefficient scale of both functions.
    fn scale(&self) -> f64 {
        self.basis.bandwidth().powi(-(self.basis.dim() as i32)) / self.n() as f64
    }

    /// `(F_a, G_a)` without noise: the exact lattice sums, each rounded once to `f64` and scaled.
    fn exact_coefficients(&self, a: usize) -> (Vec<f64>, Vec<f64>) {
        let s = self.scale();
        let value = |units: i128| s * (units as f64 * LATTICE_UNIT);
        let (y0, y1) = (self.lattice_sums(2 * a), self.lattice_sums(2 * a + 1));
        let den = y0.iter().zip(y1).map(|(u, v)| value(u + v)).collect();
        let num = y1.iter().map(|&v| value(v)).collect();
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
        let n = self.n() as f64;
        PluginEstimate::new(
            self.basis.clone(),
            [
                self.group_count(0) as f64 / n,
                self.group_count(1) as f64 / n,
            ],
            [f0, f1],
            [g0, g1],
        )
        .with_noise_sd(0.0)
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
        if self.n() == 0 {
            return Err(Error::InvalidData("no training rows".into()));
        }
        let n = self.n() as f64;
        let pi_hat = [
            self.group_count(0) as f64 / n,
            self.group_count(1) as f64 / n,
        ];
        let (f0, g0) = self.exact_coefficients(0);
        let (f1, g1) = self.exact_coefficients(1);
        let len = f0.len();
        let dk = self.function_sensitivity();
        let dpi = 1.0 / n;
        let (pi, f, g, sd) = match plan.accounting {
            S1Accounting::Strict => {
                if plan.pi == PiRelease::Empirical {
                    return Err(invalid(
                        "pi",
                        "empirical (non-private) class probabilities need the paper accounting mode",
                    ));
                }
                let mut blocks: Vec<(Vec<f64>, f64)> = Vec::new();
                if plan.pi == PiRelease::Private {
                    blocks.push((vec![pi_hat[0]], dpi));
                    blocks.push((vec![pi_hat[1]], dpi));
                }
                blocks.push(([f0, f1].concat(), dk));
                blocks.push(([g0, g1].concat(), dk));
                let sd = joint_noise_per_unit(blocks.len(), plan.epsilon, plan.delta)? * dk;
                let mut out = joint_release(
                    ledger,
                    noise,
                    &format!(
                        "{}S1: π̃_a and kernel-estimator coefficients (joint)",
                        plan.label_prefix
                    ),
                    &blocks,
                    plan.epsilon,
                    plan.delta,
                )?
                .into_iter();
                let mut next = || out.next().unwrap_or_default();
                let pi = if plan.pi == PiRelease::Private {
                    [next()[0], next()[0]]
                } else {
                    SKIPPED_PI
                };
                (pi, next(), next(), sd)
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
                (pi, f, g, sigma)
            }
        };
        let (f0, f1) = f.split_at(len);
        let (g0, g1) = g.split_at(len);
        Ok(PluginEstimate::new(
            self.basis.clone(),
            pi,
            [f0.to_vec(), f1.to_vec()],
            [g0.to_vec(), g1.to_vec()],
        )
        .with_noise_sd(sd))
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

/// The released S1 estimate: `π̃_a` and `η̃_a`, evaluable anywhere by anyone holding it. `η̃_a`
/// is the papers' kernel ratio ([`KernelEta`]) or the logistic plug-in
/// ([`crate::plugin::logistic::LogisticEta`], `--eta-model logistic`,
/// `docs/deviations.md#fdp-fair-logistic-plug-in`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PluginEstimate {
    /// `π̃_a`, clamped to `[1e−6, 1 − 1e−6]` ([`SKIPPED_PI`] when not released).
    pub pi: [f64; 2],
    /// `η̃_a`.
    #[serde(flatten)]
    pub eta: EtaEstimate,
}

/// How `η̃_a(x)` is represented (a model file holds the kernel's fields, as before the logistic
/// plug-in existed, or one `logistic` object).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EtaEstimate {
    /// The kernel ratio in a public random-feature basis (Algorithm 1 S1.2).
    Kernel(KernelEta),
    /// The output-perturbed logistic plug-in.
    Logistic {
        logistic: crate::plugin::logistic::LogisticEta,
    },
}

/// The kernel estimator's released functions: `η̃_a(x) = clip(G̃_a·φ(x) / max(F̃_a·φ(x), floor),
/// 0, 1)` (S1.2 and `docs/deviations.md#fdp-fair-stability-of-the-eta-ratio`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelEta {
    pub basis: RffBasis,
    /// Coefficients of the (n-normalised) density `F̃_a`.
    pub denominator: [Vec<f64>; 2],
    /// Coefficients of the (n-normalised) numerator `G̃_a`.
    pub numerator: [Vec<f64>; 2],
    /// Standard deviation of the release noise on each coefficient (public; 0 without noise;
    /// absent in models written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_sd: Option<f64>,
}

/// `π̃` clamped into `[PI_FLOOR, 1 − PI_FLOOR]` (NaN kept, for the server's validation).
fn clamp_pi(pi: [f64; 2]) -> [f64; 2] {
    pi.map(|p| {
        if p.is_nan() {
            p
        } else {
            p.clamp(PI_FLOOR, 1.0 - PI_FLOOR)
        }
    })
}

/// The group codes of `x`'s rows, checked to be 0/1.
pub(crate) fn check_groups(x: ArrayView2<f64>, a: &[u32]) -> Result<()> {
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
    Ok(())
}

impl PluginEstimate {
    /// A kernel estimate.
    pub fn new(
        basis: RffBasis,
        pi: [f64; 2],
        denominator: [Vec<f64>; 2],
        numerator: [Vec<f64>; 2],
    ) -> Self {
        PluginEstimate {
            pi: clamp_pi(pi),
            eta: EtaEstimate::Kernel(KernelEta {
                basis,
                denominator,
                numerator,
                noise_sd: None,
            }),
        }
    }

    /// The estimate with the standard deviation of its coefficients' release noise recorded
    /// (kernel; the logistic plug-in records its own at release).
    pub fn with_noise_sd(mut self, sd: f64) -> Self {
        if let EtaEstimate::Kernel(k) = &mut self.eta {
            k.noise_sd = Some(sd);
        }
        self
    }

    /// The released signal against its noise, for the report's fixed-form line: the norm of
    /// the released coefficients that carry the dependence on `x` (kernel: the numerators
    /// `G̃_0, G̃_1`; logistic: every weight but the intercept) and the norm the release noise
    /// alone would give them (√p times the recorded noise standard deviation). Public.
    pub fn signal_and_noise(&self) -> (f64, f64, usize) {
        let norm = |v: &mut dyn Iterator<Item = &f64>| v.map(|x| x * x).sum::<f64>().sqrt();
        match &self.eta {
            EtaEstimate::Kernel(k) => {
                let p = (k.numerator[0].len() + k.numerator[1].len()) as f64;
                (
                    norm(&mut k.numerator[0].iter().chain(&k.numerator[1])),
                    k.noise_sd.unwrap_or(f64::NAN) * p.sqrt(),
                    p as usize,
                )
            }
            EtaEstimate::Logistic { logistic } => {
                let w = &logistic.weights[..logistic.weights.len().saturating_sub(1)];
                (
                    norm(&mut w.iter()),
                    logistic.noise_sd * (w.len() as f64).sqrt(),
                    w.len(),
                )
            }
        }
    }

    /// A logistic-plug-in estimate.
    pub fn logistic(pi: [f64; 2], logistic: crate::plugin::logistic::LogisticEta) -> Self {
        PluginEstimate {
            pi: clamp_pi(pi),
            eta: EtaEstimate::Logistic { logistic },
        }
    }

    /// Whether this is the DP-SGD plug-in fitted on all rows ([`crate::cdp_fair::all_rows`]).
    pub fn is_all_rows(&self) -> bool {
        matches!(&self.eta, EtaEstimate::Logistic { logistic }
            if logistic.feature_map == crate::plugin::logistic::FeatureMap::Raw)
    }

    /// The kernel estimator's functions (`None` for the logistic plug-in).
    pub fn kernel(&self) -> Option<&KernelEta> {
        match &self.eta {
            EtaEstimate::Kernel(k) => Some(k),
            EtaEstimate::Logistic { .. } => None,
        }
    }

    /// Number of feature columns the estimate reads.
    pub fn dim(&self) -> usize {
        match &self.eta {
            EtaEstimate::Kernel(k) => k.basis.dim(),
            EtaEstimate::Logistic { logistic } => logistic.dim(),
        }
    }

    /// The kernel bandwidth `h` (0 for the logistic plug-in, which has none).
    pub fn bandwidth(&self) -> f64 {
        self.kernel().map_or(0.0, |k| k.basis.bandwidth())
    }

    /// One line naming the estimator and its public settings (for reports).
    pub fn describe(&self) -> String {
        match &self.eta {
            EtaEstimate::Kernel(k) => format!(
                "kernel plug-in (h = {:.4}, {} random features)",
                k.basis.bandwidth(),
                k.basis.len()
            ),
            EtaEstimate::Logistic { logistic } => logistic.describe(),
        }
    }

    /// The ν-weighted aggregate of several sites' estimates of the same kind (Alg. 1 S1, server
    /// side): `π̃_a = Σ ν_s π̃_a^s`; kernel: coefficients `Σ ν_s c^s` for numerator and
    /// denominator separately (the ratio of weighted sums), in one basis; logistic: the weights
    /// `Σ ν_s w̃^s` (`docs/deviations.md#fdp-fair-logistic-plug-in`).
    pub fn aggregate(parts: &[(f64, &PluginEstimate)]) -> Result<Self> {
        let Some((_, first)) = parts.first() else {
            return Err(invalid("sites", "nothing to aggregate"));
        };
        let mut pi = [0.0; 2];
        for (s, (w, e)) in parts.iter().enumerate() {
            if !(w.is_finite() && *w >= 0.0) {
                return Err(invalid("weights", format!("site {s}: weight {w}")));
            }
            for (p, q) in pi.iter_mut().zip(&e.pi) {
                *p += w * q;
            }
        }
        let weighted_sum = |vectors: &mut dyn Iterator<Item = (f64, &Vec<f64>)>, len: usize| {
            let mut out = vec![0.0; len];
            for (w, v) in vectors {
                out.iter_mut().zip(v).for_each(|(x, y)| *x += w * y);
            }
            out
        };
        match &first.eta {
            EtaEstimate::Kernel(k0) => {
                let mut kernels = Vec::with_capacity(parts.len());
                for (s, (w, e)) in parts.iter().enumerate() {
                    match e.kernel() {
                        Some(k) if k.basis == k0.basis => kernels.push((*w, k)),
                        Some(_) => {
                            return Err(invalid(
                                "basis",
                                format!("site {s} uses a different basis"),
                            ));
                        }
                        None => {
                            return Err(invalid(
                                "eta_model",
                                format!("site {s} is not a kernel estimate"),
                            ));
                        }
                    }
                }
                let len = k0.basis.len();
                let part = |f: &dyn Fn(&KernelEta) -> &Vec<f64>| {
                    weighted_sum(&mut kernels.iter().map(|(w, k)| (*w, f(k))), len)
                };
                let den = [part(&|k| &k.denominator[0]), part(&|k| &k.denominator[1])];
                let num = [part(&|k| &k.numerator[0]), part(&|k| &k.numerator[1])];
                let estimate = PluginEstimate::new(k0.basis.clone(), pi, den, num);
                // Independent site noises: the weighted sum's variance is Σ ν_s² σ_s².
                let variance: Option<f64> = kernels
                    .iter()
                    .map(|(w, k)| k.noise_sd.map(|sd| w * w * sd * sd))
                    .sum();
                Ok(match variance {
                    Some(v) => estimate.with_noise_sd(v.sqrt()),
                    None => estimate,
                })
            }
            EtaEstimate::Logistic { logistic: l0 } => {
                let mut models = Vec::with_capacity(parts.len());
                for (s, (w, e)) in parts.iter().enumerate() {
                    match &e.eta {
                        EtaEstimate::Logistic { logistic }
                            if logistic.weights.len() == l0.weights.len()
                                && logistic.feature_map == l0.feature_map =>
                        {
                            models.push((*w, logistic));
                        }
                        _ => {
                            return Err(invalid(
                                "eta_model",
                                format!(
                                    "site {s} is not a logistic estimate of the same dimension and row map"
                                ),
                            ));
                        }
                    }
                }
                let weights = weighted_sum(
                    &mut models.iter().map(|(w, l)| (*w, &l.weights)),
                    l0.weights.len(),
                );
                let noise_sd = models
                    .iter()
                    .map(|(w, l)| w * w * l.noise_sd * l.noise_sd)
                    .sum::<f64>()
                    .sqrt();
                Ok(PluginEstimate::logistic(
                    pi,
                    crate::plugin::logistic::LogisticEta {
                        weights,
                        noise_sd,
                        ..l0.clone()
                    },
                ))
            }
        }
    }

    /// `η̃_{a_i}(x_i)` for every row, each row in its own group.
    pub fn eta_grouped(&self, x: ArrayView2<f64>, a: &[u32]) -> Result<Vec<f64>> {
        check_groups(x, a)?;
        match &self.eta {
            EtaEstimate::Kernel(k) => k.eta_grouped(x, a),
            EtaEstimate::Logistic { logistic } => logistic.eta_grouped(x, a),
        }
    }
}

/// `η̃_{a_i}(x_i)` at every row of `x` (groups `a`) under each of `estimates`: what
/// [`PluginEstimate::eta_grouped`] returns for each, bit for bit, but the random-feature map
/// `φ(x_i)` of a row (the sines and cosines, the costly part) is computed once for all the kernel
/// estimates that share a basis. For scoring the same rows under several releases in one basis,
/// e.g. one seed's fits at several ε ([`crate::cdp_fair::fit_s1_many`]).
///
/// ```
/// use dpfair::plugin::release::eta_grouped_many;
/// use dpfair::plugin::{PluginEstimate, RffBasis};
/// use ndarray::array;
///
/// let basis = RffBasis::new(1, 0.3, 8, 1).unwrap();
/// let coefs = |v: f64| [vec![v; 16], vec![0.5 * v; 16]];
/// let weak = PluginEstimate::new(basis.clone(), [0.5, 0.5], coefs(1.0), coefs(0.4));
/// let strong = PluginEstimate::new(basis, [0.4, 0.6], coefs(1.0), coefs(0.9));
/// let (x, a) = (array![[0.1], [0.7]], [0, 1]);
/// let both = eta_grouped_many(&[&weak, &strong], x.view(), &a).unwrap();
/// assert_eq!(both[0], weak.eta_grouped(x.view(), &a).unwrap());
/// assert_eq!(both[1], strong.eta_grouped(x.view(), &a).unwrap());
/// ```
pub fn eta_grouped_many(
    estimates: &[&PluginEstimate],
    x: ArrayView2<f64>,
    a: &[u32],
) -> Result<Vec<Vec<f64>>> {
    check_groups(x, a)?;
    let mut out: Vec<Option<Vec<f64>>> = vec![None; estimates.len()];
    for i in 0..estimates.len() {
        if out[i].is_some() {
            continue;
        }
        let Some(first) = estimates[i].kernel() else {
            out[i] = Some(estimates[i].eta_grouped(x, a)?);
            continue;
        };
        // Every kernel estimate not yet scored in the same basis: one pass over the rows.
        let same: Vec<(usize, &KernelEta)> = (i..estimates.len())
            .filter(|&j| out[j].is_none())
            .filter_map(|j| estimates[j].kernel().map(|k| (j, k)))
            .filter(|(_, k)| k.basis == first.basis)
            .collect();
        let kernels: Vec<&KernelEta> = same.iter().map(|&(_, k)| k).collect();
        for ((j, _), eta) in same
            .iter()
            .zip(KernelEta::eta_grouped_many(&kernels, x, a)?)
        {
            out[*j] = Some(eta);
        }
    }
    Ok(out.into_iter().map(Option::unwrap_or_default).collect())
}

impl KernelEta {
    /// Floor of the denominator (`docs/deviations.md#fdp-fair-stability-of-the-eta-ratio`): tiny relative to the kernel scale `h^{−d}`.
    fn floor(&self) -> f64 {
        1e-12 * self.basis.bandwidth().powi(-(self.basis.dim() as i32))
    }

    /// `η̃_{a_i}(x_i)` for every row (groups already checked).
    fn eta_grouped(&self, x: ArrayView2<f64>, a: &[u32]) -> Result<Vec<f64>> {
        Ok(Self::eta_grouped_many(&[self], x, a)?
            .pop()
            .unwrap_or_default())
    }

    /// `η̃_{a_i}(x_i)` for every row under each of `kernels`, which share the first one's basis
    /// (groups already checked): one evaluation of the basis for all of them.
    fn eta_grouped_many(
        kernels: &[&KernelEta],
        x: ArrayView2<f64>,
        a: &[u32],
    ) -> Result<Vec<Vec<f64>>> {
        let Some(first) = kernels.first() else {
            return Ok(Vec::new());
        };
        let coefs: Vec<&[f64]> = kernels
            .iter()
            .flat_map(|k| {
                [
                    k.numerator[0].as_slice(),
                    &k.denominator[0],
                    &k.numerator[1],
                    &k.denominator[1],
                ]
            })
            .collect();
        let v = first.basis.evaluate(&coefs, x)?;
        Ok(kernels
            .iter()
            .enumerate()
            .map(|(q, k)| {
                let floor = k.floor();
                v.outer_iter()
                    .zip(a)
                    .map(|(r, &g)| {
                        let c = 4 * q + 2 * g as usize;
                        ratio(r[c], r[c + 1], floor)
                    })
                    .collect()
            })
            .collect())
    }
}

fn ratio(num: f64, den: f64, floor: f64) -> f64 {
    (num / den.max(floor)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulate::testing::{merge_randomly, random_parts};
    use dpfair_privacy::Budget;
    use ndarray::{Array2, Axis};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// Issue #21: the training half's sums from random parts, merged in random orders, are the
    /// one-pass sums bit for bit (in a pool of several threads, where rayon's split points vary
    /// with the input), and with the same noise stream release the same estimate and ledger.
    #[test]
    fn kernel_sums_from_merged_parts_equal_the_one_pass_sums() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("pool");
        pool.install(|| {
            let mut rng = ChaCha20Rng::seed_from_u64(21);
            let basis = RffBasis::new(3, 0.25, 40, 7).expect("basis");
            let n = 700;
            let x = Array2::from_shape_fn((n, 3), |_| rng.random_range(0.0..1.0));
            let a: Vec<u32> = (0..n).map(|_| rng.random_range(0..2)).collect();
            let y: Vec<u8> = (0..n).map(|_| rng.random_range(0..2)).collect();
            let whole = KernelSums::compute(&basis, x.view(), &a, &y).expect("sums");
            assert_eq!(whole.n(), n);
            let plan = S1Plan {
                epsilon: 1.0,
                delta: 1e-5,
                accounting: S1Accounting::Strict,
                pi: PiRelease::Private,
                c_k: 1.0,
                label_prefix: String::new(),
            };
            let release = |s: &KernelSums| {
                let mut ledger = Ledger::new(Budget::approx(1.0, 1e-5).expect("budget"));
                let est = s
                    .release(&plan, &mut ledger, &mut Noise::seeded(5))
                    .expect("release");
                (est, ledger)
            };
            let one_pass = release(&whole);
            for parts in [1, 2, 5, 17] {
                let sums: Vec<KernelSums> = random_parts(n, parts, &mut rng)
                    .into_iter()
                    .map(|rows| {
                        let mut s = KernelSums::new(&basis);
                        let ar: Vec<u32> = rows.iter().map(|&i| a[i]).collect();
                        let yr: Vec<u8> = rows.iter().map(|&i| y[i]).collect();
                        s.update(x.select(Axis(0), &rows).view(), &ar, &yr)
                            .expect("update");
                        s
                    })
                    .collect();
                let merged = merge_randomly(sums, &mut rng, |s, t| s.merge(&t).expect("merge"));
                assert_eq!(merged, whole, "{parts} parts");
                assert_eq!(release(&merged), one_pass, "{parts} parts");
            }
            let other = KernelSums::new(&RffBasis::new(3, 0.25, 40, 8).expect("basis"));
            assert!(whole.clone().merge(&other).is_err());
            let mut ledger = Ledger::new(Budget::approx(1.0, 1e-5).expect("budget"));
            let empty = KernelSums::new(&basis).release(&plan, &mut ledger, &mut Noise::seeded(1));
            assert!(empty.is_err());
            assert!(
                ledger.entries().is_empty(),
                "nothing charged for an empty statistic"
            );
        });
    }

    /// The lattice sums' noise-free coefficients stay within `n·2^{−52}·h^{−d}/n` of the `f64`
    /// sums of the feature map (the truncation bound of `basis::LATTICE_BITS`).
    #[test]
    fn lattice_coefficients_are_within_the_truncation_bound() {
        let basis = RffBasis::new(2, 0.3, 16, 3).expect("basis");
        let x = Array2::from_shape_fn((50, 2), |(i, k)| ((i * 7 + k * 3) % 11) as f64 / 11.0);
        let a: Vec<u32> = (0..50).map(|i| (i % 2) as u32).collect();
        let y: Vec<u8> = (0..50).map(|i| (i % 3 == 0) as u8).collect();
        let sums = KernelSums::compute(&basis, x.view(), &a, &y).expect("sums");
        let (den, num) = sums.exact_coefficients(1);
        let scale = 0.3f64.powi(-2) / 50.0;
        let mut want_den = vec![0.0; basis.len()];
        let mut want_num = vec![0.0; basis.len()];
        for i in (0..50).filter(|&i| a[i] == 1) {
            let phi = basis.features(x.row(i).as_slice().expect("row"));
            for (j, p) in phi.iter().enumerate() {
                want_den[j] += scale * p;
                if y[i] == 1 {
                    want_num[j] += scale * p;
                }
            }
        }
        // n·2^{-52} of truncation (times the scale), plus f64 rounding of the reference sums.
        let bound = scale * 50.0 * LATTICE_UNIT + 1e-12;
        for j in 0..basis.len() {
            assert!((den[j] - want_den[j]).abs() <= bound, "{j}");
            assert!((num[j] - want_num[j]).abs() <= bound, "{j}");
        }
    }
}
