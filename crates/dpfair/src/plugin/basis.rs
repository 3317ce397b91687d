//! The public finite basis the kernel estimators are released in: random Fourier features
//! (Rahimi & Recht 2007) for the paper's Gaussian kernel `K(u) = exp(−‖u‖²/2)` at bandwidth `h`.
//!
//! `φ(x) = D^{−1/2} (cos(ω_1·x/h), …, cos(ω_D·x/h), sin(ω_1·x/h), …, sin(ω_D·x/h)) ∈ R^{2D}` with
//! `ω_j ~ N(0, I_d)` drawn from a public seed. Then `φ(x)·φ(x') = D^{−1} Σ_j cos(ω_j·(x−x')/h)`,
//! an unbiased Monte-Carlo estimate of `K((x−x')/h)`, and **`‖φ(x)‖₂ = 1` exactly for every
//! `x ∈ R^d`** (cos² + sin² = 1; the computed map is scaled by `1 − 2^{−50}` so that its norm is
//! at most 1 despite rounding): the released objects' sensitivity does not depend on feature
//! bounds. The basis is public (it never looks at data) and is stored by its seed: the
//! frequencies are regenerated on load with the generator below, so a model file stays small.
//!
//! `docs/deviations.md#fdp-fair-gp-sample-paths-drawn-once`: the paper's Gaussian-process noise is replaced by Gaussian noise on the coefficients
//! in this basis, `W(x) = z·φ(x)`, `z ~ N(0, σ² I_{2D})`, a Gaussian process with covariance
//! `σ² φ(x)·φ(x') ≈ σ² K((x−x')/h)` that is drawn once and can be evaluated anywhere.

use crate::plugin::error::{Result, invalid};
use crate::plugin::sincos::sin_cos_in_place;
use ndarray::{Array2, ArrayView2, Axis};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Name of the frequency generator (stored in model files so that a future change is detected).
pub const GENERATOR: &str = "chacha20-box-muller-v1";

/// `1 − 2^{−50}`, a factor on the map's scale `D^{−1/2}`: computed sines and cosines satisfy
/// `cos² + sin² ≤ 1 + 4·2^{−52}` (test `plugin::sincos::tests::agrees_with_libm_within_two_ulp`),
/// so with this margin the computed `‖φ(x)‖₂` is at most 1, as the sensitivity bound of the
/// release assumes, and not only up to rounding.
const NORM_MARGIN: f64 = 1.0 - 1.0 / (1u64 << 50) as f64;

/// Rows per parallel work item when mapping points to features.
const CHUNK: usize = 64;

/// A standard normal draw by the Box–Muller transform from 53-bit uniforms, for the public basis
/// only (never for a release: releases go through the privacy crate). Deterministic
/// given the stream, so a basis seed reproduces the same frequencies on every platform.
pub fn standard_normal_pair<R: Rng + ?Sized>(rng: &mut R) -> (f64, f64) {
    const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
    // u1 ∈ (0, 1], u2 ∈ [0, 1).
    let u1 = ((rng.next_u64() >> 11) + 1) as f64 * SCALE;
    let u2 = (rng.next_u64() >> 11) as f64 * SCALE;
    let r = (-2.0 * u1.ln()).sqrt();
    let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
    (r * c, r * s)
}

/// The most frequency entries (`D·d`) a basis may hold: 2^24 (128 MB), a resource bound checked
/// before anything is allocated (also for a basis read from a model file or a transcript).
pub const MAX_BASIS_ENTRIES: usize = 1 << 24;

/// Bits of the release lattice of the feature sums: every feature value `φ_j(x) ∈ [−1, 1]` is
/// truncated toward zero onto `2^{−52}ℤ` before it is summed ([`to_lattice`]). Truncation toward
/// zero never increases a magnitude, so `‖q(φ(x))‖₂ ≤ ‖φ(x)‖₂ = 1` for every `x` and the
/// sensitivity bound of the coefficient release (`Δ_K = 2h^{−d}/n`,
/// [`crate::plugin::release`]) holds for the lattice sums unchanged. The truncation moves a
/// coefficient sum of `n` rows by less than `n·2^{−52}` (below `2.3·10^{−8}` for `10^8` rows),
/// far under the release noise (`σ ≥ 2σ_1 ≫ 10^{−8}` on the same scale at any ε the ledger
/// accepts for realistic δ).
pub const LATTICE_BITS: i32 = 52;

/// `2^{−LATTICE_BITS}`: the value of one lattice unit.
pub const LATTICE_UNIT: f64 = 1.0 / (1u64 << LATTICE_BITS) as f64;

/// `φ_j(x)` on the release lattice, in lattice units: `trunc(v·2^52)` (exact: scaling by a power
/// of two is exact, and `|v| ≤ 1` fits an `i64`; a non-finite or out-of-range value saturates,
/// which the unit-norm feature map never produces).
pub fn to_lattice(v: f64) -> i64 {
    (v * (1u64 << LATTICE_BITS) as f64) as i64
}

/// What a model file stores of a basis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BasisSpec {
    /// Feature dimension `d`.
    pub dim: usize,
    /// Bandwidth `h` (features on `[0,1]^d`).
    pub bandwidth: f64,
    /// Number of frequencies `D` (the basis has `2D` functions).
    pub n_frequencies: usize,
    /// Seed of the public frequency stream.
    pub seed: u64,
    /// Frequency generator, [`GENERATOR`].
    pub generator: String,
}

/// `acc[f] = Σ_j coefs[j·k + f]·phi[j]` for the `k = acc.len()` functions of
/// [`RffBasis::evaluate`], each summed sequentially in `j` order from −0.0 (`Iterator::sum`'s
/// start), bit for bit; the functions advance four at a time in fixed-size lanes, so that the
/// compiler keeps them in registers.
fn dot_products(phi: &[f64], coefs: &[f64], acc: &mut [f64]) {
    const LANES: usize = 4;
    let k = acc.len();
    let full = k - k % LANES;
    for g in (0..full).step_by(LANES) {
        let mut lane = [-0.0f64; LANES];
        for (p, c) in phi.iter().zip(coefs.chunks_exact(k)) {
            let c: &[f64; LANES] = c[g..g + LANES].try_into().expect("four lanes");
            for i in 0..LANES {
                lane[i] += c[i] * p;
            }
        }
        acc[g..g + LANES].copy_from_slice(&lane);
    }
    if full < k {
        acc[full..].iter_mut().for_each(|a| *a = -0.0);
        for (p, c) in phi.iter().zip(coefs.chunks_exact(k)) {
            for (a, v) in acc[full..].iter_mut().zip(&c[full..]) {
                *a += v * p;
            }
        }
    }
}

/// Random Fourier features of `exp(−‖x−x'‖²/(2h²))` on `R^d`; see the module docs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "BasisSpec", into = "BasisSpec")]
pub struct RffBasis {
    spec: BasisSpec,
    /// `ω_j / h`, row-major `D × d`.
    freqs: Vec<f64>,
    /// The same, dimension-major (`d × D`), for [`RffBasis::features_into`].
    freqs_by_dim: Vec<f64>,
}

impl TryFrom<BasisSpec> for RffBasis {
    type Error = crate::plugin::Error;
    fn try_from(spec: BasisSpec) -> Result<Self> {
        if spec.generator != GENERATOR {
            return Err(invalid(
                "basis.generator",
                format!(
                    "unknown generator `{}` (this build knows `{GENERATOR}`)",
                    spec.generator
                ),
            ));
        }
        RffBasis::new(spec.dim, spec.bandwidth, spec.n_frequencies, spec.seed)
    }
}

impl From<RffBasis> for BasisSpec {
    fn from(b: RffBasis) -> Self {
        b.spec
    }
}

impl RffBasis {
    /// The basis for dimension `dim`, bandwidth `bandwidth`, `n_frequencies` frequencies, drawn
    /// from the public `seed`.
    pub fn new(dim: usize, bandwidth: f64, n_frequencies: usize, seed: u64) -> Result<Self> {
        if dim == 0 {
            return Err(invalid("dim", "need at least one feature"));
        }
        if !(bandwidth.is_finite() && bandwidth > 0.0) {
            return Err(invalid(
                "bandwidth",
                format!("must be finite and > 0, got {bandwidth}"),
            ));
        }
        if n_frequencies == 0 || n_frequencies > 1 << 20 {
            return Err(invalid(
                "n_frequencies",
                format!("must be in 1..=2^20, got {n_frequencies}"),
            ));
        }
        let total = n_frequencies
            .checked_mul(dim)
            .filter(|&t| t <= MAX_BASIS_ENTRIES)
            .ok_or_else(|| {
                invalid(
                    "dim",
                    format!(
                        "{dim} features × {n_frequencies} frequencies exceeds the basis limit of \
                         {MAX_BASIS_ENTRIES} frequency entries (a resource bound)"
                    ),
                )
            })?;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut freqs = Vec::with_capacity(total + 1);
        while freqs.len() < total {
            let (a, b) = standard_normal_pair(&mut rng);
            freqs.push(a / bandwidth);
            freqs.push(b / bandwidth);
        }
        freqs.truncate(total);
        let freqs_by_dim = (0..total)
            .map(|i| freqs[(i % n_frequencies) * dim + i / n_frequencies])
            .collect();
        Ok(RffBasis {
            spec: BasisSpec {
                dim,
                bandwidth,
                n_frequencies,
                seed,
                generator: GENERATOR.to_string(),
            },
            freqs,
            freqs_by_dim,
        })
    }

    pub fn spec(&self) -> &BasisSpec {
        &self.spec
    }

    pub fn dim(&self) -> usize {
        self.spec.dim
    }

    pub fn bandwidth(&self) -> f64 {
        self.spec.bandwidth
    }

    /// Number of basis functions, `2D`.
    pub fn len(&self) -> usize {
        2 * self.spec.n_frequencies
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// `φ(x)` into `out` (length [`Self::len`]); `x` has length `d`.
    pub fn features_into(&self, x: &[f64], out: &mut [f64]) {
        let d = self.spec.dim;
        let nf = self.spec.n_frequencies;
        debug_assert_eq!(x.len(), d);
        debug_assert_eq!(out.len(), 2 * nf);
        let scale = NORM_MARGIN / (nf as f64).sqrt();
        let (cos_part, sin_part) = out.split_at_mut(nf);
        // Arguments first, then the trigonometry ([`sin_cos_in_place`]), both dense loops the
        // compiler vectorises. Argument j is `Σ_k ω_jk·x_k` summed in k order from
        // `Iterator::sum`'s start (the dot product `ω_j·x` as an iterator sums it, bit for bit),
        // advanced for all j at once, one dimension at a time.
        let start: f64 = std::iter::empty::<f64>().sum();
        cos_part.fill(start);
        for (w, &xk) in self.freqs_by_dim.chunks_exact(nf).zip(x) {
            cos_part.iter_mut().zip(w).for_each(|(c, wk)| *c += wk * xk);
        }
        sin_cos_in_place(cos_part, sin_part);
        cos_part.iter_mut().for_each(|c| *c *= scale);
        sin_part.iter_mut().for_each(|s| *s *= scale);
    }

    /// `φ(x)` as a new vector.
    pub fn features(&self, x: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.len()];
        self.features_into(x, &mut out);
        out
    }

    fn check_points(&self, x: &ArrayView2<f64>) -> Result<()> {
        if x.ncols() != self.spec.dim {
            return Err(invalid(
                "features",
                format!(
                    "basis has d = {}, points have {} columns",
                    self.spec.dim,
                    x.ncols()
                ),
            ));
        }
        Ok(())
    }

    /// `Σ_{i : cell[i] = c} q(φ(x_i))` for every cell `c < n_cells` (rows with `cell[i] ≥ n_cells`
    /// are skipped), in units of the release lattice `2^{−LATTICE_BITS}` ([`to_lattice`]): the raw
    /// coefficient sums of the kernel estimators, exact integers, so that the sums of any split of
    /// the rows, added in any order (rayon's split points included), are the same bit for bit.
    /// Parallel over rows.
    pub fn lattice_sums_by_cell(
        &self,
        x: ArrayView2<f64>,
        cell: &[usize],
        n_cells: usize,
    ) -> Result<Vec<i128>> {
        self.check_points(&x)?;
        if cell.len() != x.nrows() {
            return Err(invalid(
                "cell",
                format!("{} cell labels for {} rows", cell.len(), x.nrows()),
            ));
        }
        let len = self.len();
        let rows: Vec<usize> = (0..x.nrows()).collect();
        let zero = || (vec![0i128; n_cells * len], vec![0.0; len]);
        let add_chunk = |(mut acc, mut phi): (Vec<i128>, Vec<f64>), chunk: &[usize]| {
            for &i in chunk {
                let c = cell[i];
                if c >= n_cells {
                    continue;
                }
                let row = x.row(i);
                match row.as_slice() {
                    Some(s) => self.features_into(s, &mut phi),
                    None => self.features_into(&row.to_vec(), &mut phi),
                }
                acc[c * len..(c + 1) * len]
                    .iter_mut()
                    .zip(&phi)
                    .for_each(|(a, &p)| *a += i128::from(to_lattice(p)));
            }
            (acc, phi)
        };
        // Small inputs: one pass on this thread (no task overhead).
        let (acc, _) = if rows.len() <= CHUNK {
            add_chunk(zero(), &rows)
        } else {
            rows.par_chunks(CHUNK)
                .fold(zero, add_chunk)
                .reduce(zero, |(mut a, p), (b, _)| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    (a, p)
                })
        };
        Ok(acc)
    }

    /// `out[i][k] = coefs[k]·φ(x_i)`: evaluate several functions of the basis at every row of
    /// `x`, computing each `φ(x_i)` once. Parallel over rows.
    pub fn evaluate(&self, coefs: &[&[f64]], x: ArrayView2<f64>) -> Result<Array2<f64>> {
        self.check_points(&x)?;
        for (k, c) in coefs.iter().enumerate() {
            if c.len() != self.len() {
                return Err(invalid(
                    "coefficients",
                    format!(
                        "function {k} has {} coefficients, basis has {}",
                        c.len(),
                        self.len()
                    ),
                ));
            }
        }
        let len = self.len();
        let k = coefs.len();
        // The coefficients basis-function-major (`by_function[j·k + f] = coefs[f][j]`), so that
        // the `k` dot products of a row advance together: each is still the sequential sum
        // `Σ_j coefs[f][j]·φ_j(x)` in `j` order, from `Iterator::sum`'s neutral element −0.0,
        // bit for bit, but the `k` independent sums fill the pipeline (and SIMD lanes) instead
        // of waiting on one addition chain.
        let mut by_function = vec![0.0; len * k];
        for (f, c) in coefs.iter().enumerate() {
            for (j, &v) in c.iter().enumerate() {
                by_function[j * k + f] = v;
            }
        }
        let mut out = Array2::<f64>::zeros((x.nrows(), k));
        let fill = |(chunk, mut block): (usize, ndarray::ArrayViewMut2<f64>)| {
            let mut phi = vec![0.0; len];
            let mut acc = vec![-0.0; k];
            for (r, mut out_row) in block.outer_iter_mut().enumerate() {
                let row = x.row(chunk * CHUNK + r);
                match row.as_slice() {
                    Some(s) => self.features_into(s, &mut phi),
                    None => self.features_into(&row.to_vec(), &mut phi),
                }
                dot_products(&phi, &by_function, &mut acc);
                out_row.iter_mut().zip(&acc).for_each(|(o, a)| *o = *a);
            }
        };
        if x.nrows() <= CHUNK {
            fill((0, out.view_mut()));
        } else {
            out.axis_chunks_iter_mut(Axis(0), CHUNK)
                .into_par_iter()
                .enumerate()
                .for_each(fill);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn feature_map_has_unit_norm_everywhere() {
        let b = RffBasis::new(3, 0.1, 257, 11).unwrap();
        for x in [[0.0, 0.0, 0.0], [0.3, -7.0, 1e3], [1.0, 1.0, 1.0]] {
            let phi = b.features(&x);
            let norm: f64 = phi.iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-12, "‖φ‖ = {norm}");
        }
    }

    #[test]
    fn inner_product_approximates_the_gaussian_kernel() {
        // φ(x)·φ(x') averages D iid cos terms with variance ≤ 1/2 each: sd ≤ sqrt(1/(2D)).
        let nf = 20_000;
        let b = RffBasis::new(2, 0.2, nf, 5).unwrap();
        let sd = (0.5 / nf as f64).sqrt();
        for (x, y) in [
            ([0.5f64, 0.5], [0.5f64, 0.5]),
            ([0.1, 0.2], [0.25, 0.1]),
            ([0.0, 0.0], [0.3, 0.3]),
        ] {
            let k = (-((x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2)) / (2.0 * 0.04)).exp();
            let dot: f64 = b
                .features(&x)
                .iter()
                .zip(b.features(&y))
                .map(|(a, c)| a * c)
                .sum();
            assert!((dot - k).abs() < 5.0 * sd, "K = {k}, φ·φ' = {dot}");
        }
    }

    #[test]
    fn basis_is_reproducible_from_its_spec_and_roundtrips_json() {
        let b = RffBasis::new(2, 0.15, 64, 99).unwrap();
        let json = serde_json::to_string(&b).unwrap();
        let back: RffBasis = serde_json::from_str(&json).unwrap();
        assert_eq!(b, back);
        assert_ne!(b, RffBasis::new(2, 0.15, 64, 100).unwrap());
        let bad = json.replace(GENERATOR, "other");
        assert!(serde_json::from_str::<RffBasis>(&bad).is_err());
    }

    /// The interleaved evaluation is each function's sequential dot product `Σ_j c_j φ_j(x)`
    /// (as `Iterator::sum` computes it), bit for bit, for any number of functions.
    /// The features are `scale·(cos, sin)(ω_j·x)` with the dot product an iterator's sum, bit
    /// for bit (zeros and negative coordinates included, where the sum's start shows).
    #[test]
    fn features_are_the_dot_products_trigonometry_bit_for_bit() {
        let b = RffBasis::new(3, 0.2, 50, 4).unwrap();
        let scale = NORM_MARGIN / 50f64.sqrt();
        for x in [
            [0.3, -0.7, 0.05],
            [0.0, -0.0, 0.0],
            [-0.0, -0.0, -0.0],
            [1.0, 0.0, -2.5],
        ] {
            let phi = b.features(&x);
            for j in 0..50 {
                let arg: f64 = b.freqs[j * 3..(j + 1) * 3]
                    .iter()
                    .zip(&x)
                    .map(|(a, v)| a * v)
                    .sum();
                let (mut c, mut s) = ([arg], [0.0]);
                sin_cos_in_place(&mut c, &mut s);
                assert_eq!(
                    phi[j].to_bits(),
                    (c[0] * scale).to_bits(),
                    "cos {j} at {x:?}"
                );
                assert_eq!(
                    phi[50 + j].to_bits(),
                    (s[0] * scale).to_bits(),
                    "sin {j} at {x:?}"
                );
            }
        }
    }

    #[test]
    fn evaluation_is_the_sequential_dot_product_bit_for_bit() {
        let b = RffBasis::new(3, 0.2, 50, 4).unwrap();
        let x = Array2::from_shape_fn((150, 3), |(i, k)| ((i * 7 + k * 13) % 31) as f64 / 31.0);
        let coefs: Vec<Vec<f64>> = (0..5)
            .map(|f| {
                (0..b.len())
                    .map(|j| ((j * 17 + f * 5) % 23) as f64 - 11.3)
                    .collect()
            })
            .collect();
        for k in [0, 1, 4, 5] {
            let c: Vec<&[f64]> = coefs[..k].iter().map(Vec::as_slice).collect();
            let vals = b.evaluate(&c, x.view()).unwrap();
            assert_eq!(vals.dim(), (150, k));
            for r in 0..150 {
                let phi = b.features(x.row(r).as_slice().unwrap());
                for f in 0..k {
                    let want: f64 = coefs[f].iter().zip(&phi).map(|(a, p)| a * p).sum();
                    assert_eq!(
                        vals[[r, f]].to_bits(),
                        want.to_bits(),
                        "row {r}, function {f}"
                    );
                }
            }
        }
    }

    #[test]
    fn batched_sums_and_evaluation_match_single_points() {
        let b = RffBasis::new(2, 0.3, 16, 1).unwrap();
        let x = array![[0.1, 0.2], [0.9, 0.4], [0.5, 0.5], [0.3, 0.7]];
        let cells = [0, 1, 0, 5];
        let lattice = b.lattice_sums_by_cell(x.view(), &cells, 2).unwrap();
        let sums: Vec<Vec<f64>> = lattice
            .chunks(b.len())
            .map(|c| c.iter().map(|&v| v as f64 * LATTICE_UNIT).collect())
            .collect();
        for (c, rows) in [(0usize, vec![0usize, 2]), (1, vec![1])] {
            let mut want = vec![0i128; b.len()];
            for r in rows {
                let phi = b.features(x.row(r).as_slice().unwrap());
                want.iter_mut()
                    .zip(phi)
                    .for_each(|(w, p)| *w += i128::from(to_lattice(p)));
            }
            assert_eq!(&lattice[c * b.len()..(c + 1) * b.len()], &want[..]);
            // Truncation moves each of the two summed values by less than one lattice unit.
            for (a, w) in sums[c].iter().zip(&want) {
                assert!((a - *w as f64 * LATTICE_UNIT).abs() < 1e-15);
            }
        }
        let vals = b.evaluate(&[&sums[0], &sums[1]], x.view()).unwrap();
        for r in 0..4 {
            let phi = b.features(x.row(r).as_slice().unwrap());
            for k in 0..2 {
                let want: f64 = sums[k].iter().zip(&phi).map(|(a, p)| a * p).sum();
                assert!((vals[[r, k]] - want).abs() < 1e-12);
            }
        }
        assert!(b.evaluate(&[&sums[0][..3]], x.view()).is_err());
        assert!(b.lattice_sums_by_cell(x.view(), &[0, 1], 2).is_err());
    }
}
