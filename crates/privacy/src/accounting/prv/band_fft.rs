//! The T-fold circular self-convolution of cell masses on n points (Gopi, Lee, Wutschitz 2021,
//! Alg. 1: transform, T-th power, inverse transform), computed on the band of frequencies that
//! carries it.
//!
//! The step's masses are a smooth bump hundreds of cells wide, so its transform X_k decays fast
//! in |k| and X_k^T is negligible outside a band [−K, K] with K a few hundred out of n ≈ 4·10⁵ at
//! the anchor ([`band_limit`] certifies K). With M ≥ 2K + 1 a power of two dividing n and
//! s = n/M, writing j = a + s·b (a < s, b < M):
//!
//! * forward, X_k = Σ_a e^{−2πi ak/n} Σ_b x_{a+sb} e^{−2πi bk/M}: s transforms of length M, each
//!   read at the 2K + 1 residues k mod M of the band;
//! * inverse, y_{a+sb} = Σ_k (Y_k e^{2πi ak/n}) e^{2πi bk/M}: s inverse transforms of length M.
//!
//! That is n·log₂M work instead of n·log₂n, on buffers of M points that stay in cache, and only
//! the T-th powers of the band. When no band qualifies (few steps, or a step too sharp), M = n: the
//! full transforms.
//!
//! Two real sequences share one complex transform (real and imaginary parts): with X the transform
//! of a + ib, A_k = (X_k + conj X_{−k})/2 and B_k = (X_k − conj X_{−k})/(2i) are the transforms of a
//! and b, and the inverse transform of A^T + i·B^T is a^{*T} + i·b^{*T} (both real).

use super::pool;
use rustfft::{Fft, FftPlanner, num_complex::Complex};
use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock};

type C64 = Complex<f64>;

/// Masses on the consecutive grid points `first`, `first` + 1, … (placed on the circle mod n).
pub(super) struct Cells<'a> {
    pub mass: &'a [f64],
    pub first: i64,
}

/// The composed masses wanted: grid points `first`, …, `first` + `len` − 1 (mod n).
#[derive(Clone, Copy)]
pub(super) struct Wanted {
    pub first: i64,
    pub len: usize,
}

/// The largest composed-mass error the left-out frequencies may cause, summed over the circle
/// (an absolute probability; the caller charges it to δ).
#[derive(Clone, Copy)]
pub(super) struct Tolerance(pub f64);

/// The band [−K, K] of frequencies that carries the T-fold composition of `mass` on a circle of n
/// points: every |k| ∈ (K, n/2] has |X_k|^T ≤ tolerance/n, so leaving those frequencies out moves
/// each composed mass by at most tolerance/n (the inverse transform divides by n) and any sum of
/// composed masses with weights in [0, 1] (the privacy profile) by at most the tolerance.
/// Bound: the transform of the second difference Δ²x is −4 sin²(πk/n)·X_k, so
/// |X_k| ≤ V / (4 sin²(πk/n)) with V = Σ|Δ²x| on the circle, decreasing in |k| up to n/2.
/// `None` when no K < n/4 qualifies.
pub(super) fn band_limit(mass: &[f64], n: usize, steps: u64, tol: Tolerance) -> Option<usize> {
    if mass.len() + 2 > n || tol.0 <= 0.0 {
        return None;
    }
    // Σ|Δ²x| over the circle: the masses with zeros on either side (the rest of the circle is
    // zero), with a relative margin for the rounding of the sum.
    let at = |j: usize| {
        j.checked_sub(2)
            .and_then(|i| mass.get(i))
            .copied()
            .unwrap_or(0.0)
    };
    let v: f64 = (0..mass.len() + 2)
        .map(|j| (at(j + 2) - 2.0 * at(j + 1) + at(j)).abs())
        .sum::<f64>()
        * (1.0 + 1e-12);
    // The largest |X_k| allowed: b^T ≤ tolerance/n.
    let b = ((tol.0 / n as f64).ln() / steps as f64).exp() * (1.0 - 1e-12);
    let sine = (v / (4.0 * b)).sqrt();
    // (NaN, from a NaN mass, gives no band either.)
    if sine.is_nan() || sine >= std::f64::consts::FRAC_1_SQRT_2 {
        return None;
    }
    // Smallest K with sin(πK/n) ≥ sine, plus one for the rounding of asin.
    let k = (sine.asin() * n as f64 / std::f64::consts::PI).ceil() as usize + 1;
    (k < n / 4).then_some(k)
}

/// The T-fold circular self-convolutions on n points (n a power of two) of one or two cell-mass
/// sequences, at the grid points `Wanted` of each (negative rounding noise clipped to 0). The
/// frequencies outside the certified band are left out (module doc); `band` overrides the band
/// (`Some(None)`: every frequency, for tests).
pub(super) fn compose(
    parts: &[(Cells, Wanted)],
    steps: u64,
    n: usize,
    tol: Tolerance,
    band: Option<Option<usize>>,
) -> Vec<Vec<f64>> {
    assert!(
        n > 0 && (1..=2).contains(&parts.len()),
        "compose: one or two sequences on n = {n} > 0 points"
    );
    let band = band.unwrap_or_else(|| {
        parts.iter().try_fold(0, |k, (cells, _)| {
            band_limit(cells.mass, n, steps, tol).map(|kc| kc.max(k))
        })
    });
    // Transform length M ≥ 2K + 1 (the band's residues mod M are distinct) dividing n, or n.
    let m = band.map_or(n, |k| (2 * k + 1).next_power_of_two().max(16));
    let (m, k_max) = if m >= n / 2 || !n.is_multiple_of(m) || band.is_none() {
        (n, n / 2)
    } else {
        (m, band.unwrap_or(n / 2))
    };
    let stride = n / m;
    let roots = Roots::new(n);
    let (forward, inverse) = plans(m);
    // Spectrum indices c of the band (c and its mirror m − c), with their frequency k.
    let band_indices: Vec<(usize, i64)> = (0..m)
        .filter(|&c| c <= k_max || c >= m - k_max)
        .map(|c| {
            (
                c,
                if c <= m / 2 {
                    c as i64
                } else {
                    c as i64 - m as i64
                },
            )
        })
        .collect();
    let offsets: Vec<usize> = parts
        .iter()
        .map(|(cells, _)| cells.first.rem_euclid(n as i64) as usize)
        .collect();
    // Cells beyond n points wrap around the circle and add up (few steps: the support of one
    // step can be wider than the window of the composition).
    let folded: Vec<Cow<[f64]>> = parts.iter().map(|(cells, _)| fold(cells.mass, n)).collect();
    let mass_at = |part: usize, p: usize| {
        let i = circle_sub(p, offsets[part], n);
        folded[part].get(i).copied().unwrap_or(0.0)
    };
    // The offsets a are taken in groups of consecutive ones, so that gathering and scattering
    // touch consecutive grid points (a + s·b for the group's a) rather than one per cache line.
    let group = GROUP.min(stride);
    let mut spectrum = vec![C64::new(0.0, 0.0); m];
    let mut work = vec![C64::new(0.0, 0.0); group * m];
    let mut powers = Vec::new();
    for a0 in (0..stride).step_by(group) {
        // The last group may be short (s need not be a multiple of the group).
        let size = group.min(stride - a0);
        let work = &mut work[..size * m];
        for b in 0..m {
            for g in 0..size {
                let p = a0 + g + stride * b;
                work[g * m + b] = C64::new(
                    mass_at(0, p),
                    if parts.len() == 2 { mass_at(1, p) } else { 0.0 },
                );
            }
        }
        forward.process(work);
        for (g, transform) in work.chunks_exact(m).enumerate() {
            roots.powers(a0 + g, k_max.min(m / 2), &mut powers);
            for &(c, k) in &band_indices {
                // e^{−2πi ak/n}: the conjugate of the power for k ≥ 0, the power itself for k < 0.
                let w = powers[k.unsigned_abs() as usize];
                spectrum[c] += if k >= 0 { w.conj() } else { w } * transform[c];
            }
        }
    }
    for c in 0..=k_max.min(m / 2) {
        let mirror = (m - c) % m;
        if parts.len() == 2 {
            let (x, xm) = (spectrum[c], spectrum[mirror].conj());
            let fa = complex_pow((x + xm) * 0.5, steps);
            let fb = complex_pow((x - xm) * C64::new(0.0, -0.5), steps);
            let i = C64::new(0.0, 1.0);
            spectrum[c] = fa + i * fb;
            spectrum[mirror] = fa.conj() + i * fb.conj();
        } else {
            spectrum[c] = complex_pow(spectrum[c], steps);
            if mirror != c {
                spectrum[mirror] = complex_pow(spectrum[mirror], steps);
            }
        }
    }
    // Every wanted point is written below (a + s·b runs over the circle once), so the vectors
    // need no zeroing.
    let mut out: Vec<Vec<f64>> = parts.iter().map(|(_, w)| pool::reuse(w.len)).collect();
    let firsts: Vec<usize> = parts
        .iter()
        .map(|(_, w)| w.first.rem_euclid(n as i64) as usize)
        .collect();
    let scale = 1.0 / n as f64;
    for a0 in (0..stride).step_by(group) {
        let size = group.min(stride - a0);
        let work = &mut work[..size * m];
        work.fill(C64::new(0.0, 0.0));
        for (g, transform) in work.chunks_exact_mut(m).enumerate() {
            roots.powers(a0 + g, k_max.min(m / 2), &mut powers);
            for &(c, k) in &band_indices {
                let w = powers[k.unsigned_abs() as usize];
                transform[c] = spectrum[c] * if k >= 0 { w } else { w.conj() };
            }
        }
        inverse.process(work);
        for b in 0..m {
            for g in 0..size {
                let w = work[g * m + b];
                let p = a0 + g + stride * b;
                for (part, (_, wanted)) in parts.iter().enumerate() {
                    let i = circle_sub(p, firsts[part], n);
                    if i < wanted.len {
                        let v = if part == 0 { w.re } else { w.im };
                        out[part][i] = (v * scale).max(0.0);
                    }
                }
            }
        }
    }
    out
}

/// Offsets a transformed together (module doc).
const GROUP: usize = 16;

/// `mass` wrapped around a circle of n points (borrowed when it fits).
fn fold(mass: &[f64], n: usize) -> Cow<'_, [f64]> {
    if mass.len() <= n {
        return Cow::Borrowed(mass);
    }
    let mut out = vec![0.0; n];
    for (j, m) in mass.iter().enumerate() {
        out[j % n] += m;
    }
    Cow::Owned(out)
}

/// (p − q) mod n for p, q in 0..n.
fn circle_sub(p: usize, q: usize, n: usize) -> usize {
    if p >= q { p - q } else { p + n - q }
}

/// e^{2πi m/n} for any m (mod n), as the product of two table entries (m = hi·R + lo, R a power
/// of two ≈ √n): within a few ulps, like the FFT's own twiddle factors.
struct Roots {
    n: usize,
    bits: u32,
    lo: Vec<C64>,
    hi: Vec<C64>,
}

impl Roots {
    fn new(n: usize) -> Self {
        let bits = n.ilog2() / 2;
        let r = 1usize << bits;
        let root = |m: usize| C64::from_polar(1.0, std::f64::consts::TAU * m as f64 / n as f64);
        Roots {
            n,
            bits,
            lo: (0..r).map(root).collect(),
            hi: (0..n.div_ceil(r)).map(|h| root(h * r)).collect(),
        }
    }

    fn get(&self, m: usize) -> C64 {
        let m = m % self.n;
        self.hi[m >> self.bits] * self.lo[m & ((1 << self.bits) - 1)]
    }

    /// `out` = e^{2πi a·k/n} for k = 0..=k_max: from the tables every 16 powers, by steps of
    /// e^{2πi a/n} in between (at most 16 roundings more).
    fn powers(&self, a: usize, k_max: usize, out: &mut Vec<C64>) {
        let step = self.get(a);
        out.clear();
        let mut w = C64::new(1.0, 0.0);
        for k in 0..=k_max {
            w = if k % 16 == 0 {
                self.get(a * k % self.n)
            } else {
                w * step
            };
            out.push(w);
        }
    }
}

/// The FFT planner, shared by every evaluation: a plan (its twiddle factors) is computed once per
/// length and reused (planning a 2^19-point transform costs about as much as running it).
fn planner() -> std::sync::MutexGuard<'static, FftPlanner<f64>> {
    static PLANNER: OnceLock<Mutex<FftPlanner<f64>>> = OnceLock::new();
    PLANNER
        .get_or_init(|| Mutex::new(FftPlanner::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The forward and inverse transforms of length n.
fn plans(n: usize) -> (Arc<dyn Fft<f64>>, Arc<dyn Fft<f64>>) {
    let mut p = planner();
    (p.plan_fft_forward(n), p.plan_fft_inverse(n))
}

/// c^e by binary exponentiation (relative error about e·2⁻⁵², like any evaluation of c^e).
fn complex_pow(mut base: C64, mut e: u64) -> C64 {
    let mut acc = C64::new(1.0, 0.0);
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        base = base * base;
        e >>= 1;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth bump of masses (a discretised normal with a skewed tail), `len` cells.
    fn bump(len: usize, width: f64) -> Vec<f64> {
        let raw: Vec<f64> = (0..len)
            .map(|j| {
                let x = (j as f64 - len as f64 / 3.0) / width;
                (-0.5 * x * x).exp() * (1.0 + 0.3 * x.tanh())
            })
            .collect();
        let total: f64 = raw.iter().sum();
        raw.iter().map(|m| m / total).collect()
    }

    /// The T-fold convolution by the band is the T-fold convolution by full transforms (to
    /// rounding: 10⁻¹⁵ absolute on masses ≤ 1, far above the band's certified 10⁻³⁰), for one and
    /// for two packed sequences, at windows that wrap around the circle; and the band is narrow.
    #[test]
    fn band_composition_equals_full_transforms() {
        let (n, steps) = (1 << 14, 400u64);
        let a = bump(300, 12.0);
        let b: Vec<f64> = bump(300, 9.0).into_iter().rev().collect();
        let tol = Tolerance(1e-30);
        let band = band_limit(&a, n, steps, tol).expect("a smooth bump has a band");
        assert!(band < n / 16, "band {band} of {n}");
        let parts = [
            (
                Cells {
                    mass: &a,
                    first: -100,
                },
                Wanted {
                    first: -2000,
                    len: 9000,
                },
            ),
            (
                Cells {
                    mass: &b,
                    first: -199,
                },
                Wanted {
                    first: n as i64 - 3000,
                    len: 5000,
                },
            ),
        ];
        for count in [1, 2] {
            let fast = compose(&parts[..count], steps, n, tol, None);
            let full = compose(&parts[..count], steps, n, tol, Some(None));
            for (f, g) in fast.iter().zip(&full) {
                let worst = f
                    .iter()
                    .zip(g)
                    .map(|(x, y)| (x - y).abs())
                    .fold(0.0, f64::max);
                assert!(worst < 1e-15, "{count} sequences: {worst:e}");
                // Not vacuous: the windows hold the composed bumps (most of the mass).
                assert!(g.iter().sum::<f64>() > 0.9);
            }
        }
    }

    /// On a circle whose length is not a power of two (a multiple of the short transforms'
    /// length), the band still gives the full transforms' composition.
    #[test]
    fn band_composition_on_a_circle_of_any_multiple_length() {
        let (n, steps) = (3 * 4096 + 1024 * 5, 400u64);
        let a = bump(300, 12.0);
        let tol = Tolerance(1e-30);
        let parts = [(
            Cells {
                mass: &a,
                first: -100,
            },
            Wanted {
                first: -3000,
                len: 9000,
            },
        )];
        let band = band_limit(&a, n, steps, tol).expect("band");
        assert!(
            n % (2 * band + 1).next_power_of_two() == 0,
            "short length divides n"
        );
        let fast = compose(&parts, steps, n, tol, None);
        let full = compose(&parts, steps, n, tol, Some(None));
        let worst = fast[0]
            .iter()
            .zip(&full[0])
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-15, "{worst:e}");
        assert!(full[0].iter().sum::<f64>() > 0.9);
    }

    /// One step (no composition) returns the masses themselves, wrapped around the circle when
    /// they are longer than it (every frequency is kept then).
    #[test]
    fn one_step_returns_the_masses_wrapped_around_the_circle() {
        let n = 64;
        let mass: Vec<f64> = (0..100).map(|j| (j as f64 + 1.0) / 5050.0).collect();
        let cells = Cells {
            mass: &mass,
            first: -10,
        };
        let wanted = Wanted { first: 0, len: n };
        let out = compose(&[(cells, wanted)], 1, n, Tolerance(1e-30), None);
        for (p, got) in out[0].iter().enumerate() {
            // Grid point p holds the cells j with −10 + j ≡ p (mod 64).
            let want: f64 = (0..100)
                .filter(|j| (j + 54) % 64 == p)
                .map(|j| mass[j])
                .sum();
            assert!((got - want).abs() < 1e-15, "point {p}: {got} vs {want}");
        }
    }

    /// The second-difference bound holds: every |X_k| outside the band is within the tolerance
    /// (checked against the full transform), and a sharp sequence (one atom) has no band.
    #[test]
    fn band_limit_bounds_the_spectrum_outside_the_band() {
        let (n, steps) = (1 << 12, 50u64);
        let a = bump(200, 6.0);
        let tol = Tolerance(1e-30);
        let band = band_limit(&a, n, steps, tol).expect("band");
        let mut buf: Vec<C64> = (0..n)
            .map(|j| C64::new(a.get(j).copied().unwrap_or(0.0), 0.0))
            .collect();
        plans(n).0.process(&mut buf);
        let allowed = (tol.0 / n as f64).powf(1.0 / steps as f64);
        for (k, x) in buf.iter().enumerate().take(n / 2 + 1).skip(band + 1) {
            assert!(
                x.norm() <= allowed,
                "k = {k}: |X| = {:e} > {allowed:e}",
                x.norm()
            );
        }
        // The band is not much wider than needed: halfway in, the spectrum is above the limit.
        assert!(buf[band / 2].norm() > allowed);
        let mut atom = vec![0.0; 10];
        atom[3] = 1.0;
        assert_eq!(band_limit(&atom, n, steps, tol), None);
    }
}
