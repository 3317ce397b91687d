//! The smoothed dual of DP2DP and Algorithm 1 (noisy projected mini-batch SGD on the 2K
//! Lagrange multipliers), Say et al., §3 and Algorithm 1.
//!
//! Notation (paper §3–4): λ = (λ⁽¹⁾, λ⁽²⁾) ∈ [0, C_λ]^{2K} is stored as one vector, λ⁽¹⁾ in
//! `lambda[..K]` and λ⁽²⁾ in `lambda[K..]`. Scores ℓ^s(x; λ)_k = π̄_s p̄_k(x, s) − s(λ⁽¹⁾_k − λ⁽²⁾_k)
//! (the scores of eq. 5); the per-sample loss is ĥ = |𝒮|·LSE_β(ℓ^s) + ρ Σ_k (λ⁽¹⁾_k + λ⁽²⁾_k) (eq. 5) and
//! the objective Ĥ_β(λ) = Σ_s Ê_s[LSE_β(ℓ^s)] + ρ Σ λ (eq. 4).

use super::config::{Iterate, StepSize};
use super::error::{Result, invalid};
use dpfair_learn::sampling::PoissonSampler;
use dpfair_privacy::Noise;
use dpfair_privacy::mechanisms::SubsampledGaussianRun;
use ndarray::ArrayView2;
use rand::RngExt;

/// Numerically stable LSE_β(z) = m + β log Σ_k exp((z_k − m)/β), m = max z (Lemma B.3's bound); writes
/// softmax_β(z) into `out` and returns LSE_β(z). With β = 1e-5 the unshifted exponents overflow.
pub fn lse_softmax(z: &[f64], beta: f64, out: &mut [f64]) -> f64 {
    let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    for (o, &v) in out.iter_mut().zip(z) {
        *o = ((v - m) / beta).exp();
        sum += *o;
    }
    for o in out.iter_mut() {
        *o /= sum;
    }
    m + beta * sum.ln()
}

/// The Phase-2 data as Algorithm 1 sees it: the N × K matrix A[i, k] = p̄_k(x̃_i, s̃_i) (rows in
/// the simplex), the signs s̃_i ∈ {−1, +1}, and the released frequencies π̄ = (π̄_{−1}, π̄_{+1}).
#[derive(Clone, Debug)]
pub struct Pool<'a> {
    pub probs: ArrayView2<'a, f64>,
    pub signs: &'a [f64],
    /// π̄ indexed by [`group_index`]: `[π̄_{−1}, π̄_{+1}]`.
    pub pi: [f64; 2],
    groups: [Vec<usize>; 2],
}

/// 0 for s = −1, 1 for s = +1.
pub fn group_index(s: f64) -> usize {
    usize::from(s > 0.0)
}

impl<'a> Pool<'a> {
    /// Fails only on malformed input (lengths, signs ≠ ±1). A group may be empty: Poisson
    /// sampling never looks at groups, Ê_s of an empty group is 0 in [`Pool::objective`], and
    /// the stratified sampler skips a slot that falls on an empty group ([`draw_batch`]).
    pub fn new(probs: ArrayView2<'a, f64>, signs: &'a [f64], pi: [f64; 2]) -> Result<Self> {
        if probs.nrows() != signs.len() {
            return Err(invalid(
                "signs",
                format!("{} signs for {} rows", signs.len(), probs.nrows()),
            ));
        }
        let mut groups = [Vec::new(), Vec::new()];
        for (i, &s) in signs.iter().enumerate() {
            if s != 1.0 && s != -1.0 {
                return Err(invalid("signs", format!("row {i}: sign {s} is not ±1")));
            }
            groups[group_index(s)].push(i);
        }
        Ok(Pool {
            probs,
            signs,
            pi,
            groups,
        })
    }

    pub fn n(&self) -> usize {
        self.signs.len()
    }

    pub fn k(&self) -> usize {
        self.probs.ncols()
    }

    /// Row indices of group s (`[−1, +1]` by [`group_index`]).
    pub fn group(&self, g: usize) -> &[usize] {
        &self.groups[g]
    }

    /// Scores ℓ^s(x̃_i; λ) into `z` (eq. 5).
    pub fn scores(&self, i: usize, lambda: &[f64], z: &mut [f64]) {
        let k = self.k();
        let s = self.signs[i];
        let pi = self.pi[group_index(s)];
        for (c, zc) in z.iter_mut().enumerate() {
            *zc = pi * self.probs[[i, c]] - s * (lambda[c] - lambda[k + c]);
        }
    }

    /// Ĥ_β(λ) (eq. 4) and, into `grad` (length 2K), its gradient
    /// ∂/∂λ⁽¹⁾_k = −(Ê_{+1}\[σ_k\] − Ê_{−1}\[σ_k\]) + ρ, ∂/∂λ⁽²⁾_k = +(…) + ρ (the gradient of eq. 4).
    pub fn objective(&self, lambda: &[f64], beta: f64, rho: f64, grad: &mut [f64]) -> f64 {
        let k = self.k();
        let mut z = vec![0.0; k];
        let mut sm = vec![0.0; k];
        let mut value = rho * lambda.iter().sum::<f64>();
        grad.fill(0.0);
        for (g, rows) in self.groups.iter().enumerate() {
            let w = 1.0 / rows.len().max(1) as f64;
            let s = if g == 1 { 1.0 } else { -1.0 };
            for &i in rows {
                self.scores(i, lambda, &mut z);
                value += w * lse_softmax(&z, beta, &mut sm);
                for c in 0..k {
                    grad[c] -= w * s * sm[c];
                    grad[k + c] += w * s * sm[c];
                }
            }
        }
        for v in grad.iter_mut() {
            *v += rho;
        }
        value
    }
}

/// How Algorithm 1 draws its mini-batches (`docs/deviations.md#dp2dp-sampling-scheme-and-accountant`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// The paper: b slots, each a uniform group s then a uniform row of that group, with
    /// replacement; the slot's gradient is ∇ĥ (eq. 5, with |𝒮| = 2 and ρ inside the sum).
    Stratified,
    /// Strict mode: every row enters with probability q = b/N (Poisson); row i contributes
    /// u_i = J_{s_i}ᵀ σ_i / π̄_{s_i} (an unbiased estimate of the data term of ∇Ĥ_β since
    /// N_s ≈ N π̄_s, ‖u_i‖₂ ≤ √2/min π̄), and ρ·1 is added outside the noise (`docs/deviations.md#dp2dp-gradient-sensitivity` `separate_rho`).
    Poisson,
}

/// The settings of Algorithm 1 (a view of [`super::Config`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgdSettings {
    pub rho: f64,
    pub beta: f64,
    pub iterations: usize,
    pub batch: usize,
    pub eta0: f64,
    pub step: StepSize,
    pub c_lambda: f64,
    pub iterate: Iterate,
    pub sampling: Sampling,
}

/// What Algorithm 1 returns.
#[derive(Clone, Debug, PartialEq)]
pub struct SgdOutcome {
    /// λ̄ (2K values); under [`Iterate::Mixture`] the average of the mixture's iterates.
    pub lambda: Vec<f64>,
    /// [`Iterate::Mixture`]: the iterates λ^⌈T/2⌉..λ^T (2K values each); empty otherwise.
    pub mixture: Vec<Vec<f64>>,
    /// Fraction of λ̄'s coordinates at the upper bound C_λ (`docs/deviations.md#dp2dp-c-lambda-unspecified`: if > 0, consider C_λ = 2).
    pub at_bound: f64,
}

/// ℓ2 bound on one row's contribution to the noised sum: 2√2 per slot under
/// [`Sampling::Stratified`] (the ρ terms cancel between neighbours, so replace-one moves a slot by
/// ≤ 4√2, Lemma C.3 and `docs/deviations.md#dp2dp-gradient-sensitivity`); √2/min π̄ under [`Sampling::Poisson`].
pub fn contribution_bound(sampling: Sampling, pi: [f64; 2]) -> f64 {
    match sampling {
        Sampling::Stratified => 2.0 * 2f64.sqrt(),
        Sampling::Poisson => 2f64.sqrt() / pi[0].min(pi[1]),
    }
}

/// The sum Σ over the batch of the per-row gradients at λ (before noise), into `sum`.
/// `rows` are row indices (with repetitions for the stratified sampler).
pub fn batch_sum(
    pool: &Pool<'_>,
    lambda: &[f64],
    rows: &[usize],
    settings: &SgdSettings,
    sum: &mut [f64],
) {
    let k = pool.k();
    let mut z = vec![0.0; k];
    let mut sm = vec![0.0; k];
    sum.fill(0.0);
    for &i in rows {
        pool.scores(i, lambda, &mut z);
        lse_softmax(&z, settings.beta, &mut sm);
        let s = pool.signs[i];
        // Stratified: ∇ĥ = (2l − 3)|𝒮| s σ + ρ1 (proof of Lemmas B.2 / C.3); Poisson: J_sᵀσ/π̄_s.
        let (scale, rho) = match settings.sampling {
            Sampling::Stratified => (2.0 * s, settings.rho),
            Sampling::Poisson => (s / pool.pi[group_index(s)], 0.0),
        };
        for c in 0..k {
            sum[c] += -scale * sm[c] + rho;
            sum[k + c] += scale * sm[c] + rho;
        }
    }
}

/// Draws one mini-batch (row indices) by `settings.sampling`.
pub fn draw_batch(
    pool: &Pool<'_>,
    settings: &SgdSettings,
    sampler: Option<&PoissonSampler>,
    noise: &mut Noise,
    out: &mut Vec<usize>,
) {
    out.clear();
    match (settings.sampling, sampler) {
        (Sampling::Poisson, Some(p)) => p.sample_into(noise, pool.n(), out),
        _ => {
            for _ in 0..settings.batch {
                let g = usize::from(noise.random::<bool>());
                let rows = pool.group(g);
                // An empty group's slot contributes nothing (its Ê_s is 0).
                if !rows.is_empty() {
                    out.push(rows[noise.random_range(0..rows.len())]);
                }
            }
        }
    }
}

/// Algorithm 1, step ii: T noisy projected SGD steps from λ⁰ = 0 (`docs/deviations.md#dp2dp-initialisation`):
/// ū_t = (Σ_batch ∇ + Z_t)/b (noise on the SUM, `docs/deviations.md#dp2dp-noise-on-the-sum`) [+ ρ1 under Poisson sampling],
/// λ ← Π_{[0, C_λ]^{2K}}(λ − η_t ū_t). `run` supplies Z_t (its cost was charged before the first
/// step); `None` is the non-private DP2DP (Z_t = 0).
pub fn run_sgd(
    pool: &Pool<'_>,
    settings: &SgdSettings,
    mut run: Option<&mut SubsampledGaussianRun>,
    noise: &mut Noise,
) -> Result<SgdOutcome> {
    let k = pool.k();
    let sampler = match settings.sampling {
        Sampling::Poisson => Some(
            PoissonSampler::new((settings.batch as f64 / pool.n() as f64).min(1.0))
                .map_err(|e| invalid("batch", e.to_string()))?,
        ),
        Sampling::Stratified => None,
    };
    let mut lambda = vec![0.0; 2 * k];
    let mut avg = vec![0.0; 2 * k];
    let mut sum = vec![0.0; 2 * k];
    let mut rows = Vec::new();
    let b = settings.batch as f64;
    // The first iterate of the running mean (all of them, or the second half).
    let first = match settings.iterate {
        Iterate::SecondHalf | Iterate::Mixture => settings.iterations.div_ceil(2),
        _ => 1,
    };
    let mut mixture = Vec::new();
    for t in 1..=settings.iterations {
        draw_batch(pool, settings, sampler.as_ref(), noise, &mut rows);
        batch_sum(pool, &lambda, &rows, settings, &mut sum);
        if let Some(r) = run.as_deref_mut() {
            r.add_noise(noise, &mut sum)?;
        }
        let eta = match settings.step {
            StepSize::InvSqrt => settings.eta0 / (t as f64).sqrt(),
            StepSize::Constant => settings.eta0,
        };
        let rho_outside = match settings.sampling {
            Sampling::Poisson => settings.rho,
            Sampling::Stratified => 0.0,
        };
        for (l, g) in lambda.iter_mut().zip(&sum) {
            *l = (*l - eta * (g / b + rho_outside)).clamp(0.0, settings.c_lambda);
        }
        if t >= first {
            let count = (t - first + 1) as f64;
            for (a, l) in avg.iter_mut().zip(&lambda) {
                *a += (l - *a) / count;
            }
            if settings.iterate == Iterate::Mixture {
                mixture.push(lambda.clone());
            }
        }
    }
    let lambda = match settings.iterate {
        Iterate::Last => lambda,
        Iterate::Average | Iterate::SecondHalf | Iterate::Mixture => avg,
    };
    let at_bound = lambda
        .iter()
        .filter(|&&l| l >= settings.c_lambda * (1.0 - 1e-12))
        .count() as f64
        / lambda.len() as f64;
    Ok(SgdOutcome {
        lambda,
        mixture,
        at_bound,
    })
}
