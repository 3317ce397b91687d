//! Privacy-random-variable (PRV) accountant for the Poisson-subsampled Gaussian (Gopi, Lee,
//! Wutschitz 2021, "Numerical Composition of Differential Privacy", Algorithm 1), with rigorous
//! two-sided error bounds.
//!
//! **Neighbouring relation: add/remove one record**, Poisson sampling at rate q, noise multiplier z
//! (noise N(0, z²C²) on a sum of contributions clipped to C). Both directions are accounted for and
//! the larger ε is returned:
//! * remove: the PRV `Y = L(X)`, `X ~ P = (1−q)N(0,z²) + qN(1,z²)`, with the privacy loss
//!   `L(x) = ln(1 − q + q·exp((2x − 1)/(2z²)))` of P against Q = N(0,z²);
//! * add: `Y = −L(X)`, `X ~ Q`.
//!
//! For either, T-fold composition is the sum Y₁ + … + Y_T of independent copies, and
//! `δ(ε) = E[(1 − e^{ε − ΣYᵢ})₊]` (Gopi et al., Thm 3.5 / Def. of the PRV).
//!
//! # Method and error bounds
//! 1. **Discretise** one step on the grid `hℤ`: the mass of each cell `[(k−½)h, (k+½)h)` is computed
//!    exactly from the normal distribution function (the loss is monotone in x) and put at the cell
//!    centre `kh`. Mass above the top cell (probability `p∞ ≤ 10⁻³δ/T`) becomes an atom at +∞
//!    (counted as a full violation); mass below the bottom cell (add direction, or q = 1) is moved
//!    up into it.
//!    The normal tail of the N(0, z²) component at a cell edge is shared by the two directions
//!    (the add direction's edge k is the remove direction's edge 1 − k).
//! 2. **Compose** by FFT: the T-fold circular convolution of the cell masses is one forward FFT,
//!    an element-wise T-th power and one inverse FFT (Gopi et al., Alg. 1). The circle covers a
//!    window `[lo, hi]` chosen by Chernoff bounds computed from the discretised moment generating
//!    function, so the mass that wraps around is `P_out ≤ 10⁻³δ`. The circle is the window
//!    rounded up to a multiple of 4096 points (a power of two below that), one circle for both
//!    directions: any circle at least as long as the window works, since the mass outside the
//!    window (≤ P_out, charged below) is then either aliased onto the circle or left out of the
//!    profile, and a circle longer than needed only reads some of that mass instead of leaving it
//!    out (the power-of-two circles used before were up to twice the window, and read the upper
//!    tail beyond hi: at the anchor the upper bound is 5·10⁻⁶ lower now). Only the band of
//!    frequencies whose T-th powers are not negligible is transformed and raised to the power
//!    (`band_fft`: a bound on the step's spectrum from its second differences certifies that the
//!    rest moves the profile by at most `P_band = 10⁻³⁰δ`, which is charged below); at the anchor
//!    that is a few hundred of 430,080 frequencies.
//! 3. **Read off** `ε̃(δ)` from the composed masses exactly (the profile is piecewise of the form
//!    `S₀ − e^ε S₁` between grid points).
//!
//! Coupling argument (the idea of Gopi et al., Thm 5.5, here with a Hoeffding bound that needs no
//! smoothness): write `Yᵢ = Ỹᵢ + Dᵢ` on the cells, |Dᵢ| ≤ h/2, E\[Dᵢ\] = m̄ (computed exactly by
//! Gauss–Legendre quadrature of E\[Y\] over the gridded range). Outside the cells `Yᵢ ≤ Ỹᵢ`. By
//! Hoeffding, `ΣDᵢ ≤ T m̄ + t` except with probability η = 10⁻³δ, where `t = h √(T ln(1/η) / 2)`.
//! Since `(1 − e^{ε−y})₊` is increasing in y and bounded by 1,
//! `δ_true(ε) ≤ δ̃(ε − T m̄ − t) + P_out + P_band + η`, hence the certified
//! `ε_upper = ε̃(δ − P_out − P_band − η) + T m̄ + t`; symmetrically
//! `ε_lower = ε̃(δ + P_out + P_band + η + T(p∞ + p_low)) + T m̄ − t` and the point estimate
//! `ε_estimate = ε̃(δ) + T m̄`. The mesh h is chosen so that t ≈ 0.2% of ε (between 2·10⁻⁴ and
//! 10⁻²), with at most 2²² grid points (coarser meshes widen t, which the bounds report).
//! Floating-point error of the FFT (≈ 10⁻¹⁶ per cell) is not part of the bound; it is far below
//! δ for δ ≥ 10⁻¹⁰. It does move the read-off in its last digits: at the anchor (q = 0.01,
//! z = 1.1, T = 10⁴, δ = 10⁻⁵) on the same circle the band's short transforms and full-length
//! transforms give upper bounds that differ by a few 10⁻⁸ either way.

use super::special::{log_add, norm_cdf};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

mod band_fft;
mod pool;

/// ε at a given δ with its certified error bars.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpsilonBounds {
    /// A lower bound on the true ε(δ) (up to floating-point error).
    pub lower: f64,
    /// The point estimate ε̃(δ) + T m̄ (Gopi et al.'s "estimate").
    pub estimate: f64,
    /// A certified upper bound: the run is (upper, δ)-DP.
    pub upper: f64,
}

/// Share of δ given to each error term (Hoeffding failure, window wrap-around, +∞ atom).
const ERR_SHARE: f64 = 1e-3;
/// Largest FFT length.
const MAX_FFT: usize = 1 << 22;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    Remove,
    Add,
}

/// One step's privacy random variable.
struct StepPrv {
    q: f64,
    z: f64,
    dir: Direction,
}

impl StepPrv {
    /// L(x) = ln(1 − q + q e^{(2x−1)/(2z²)}).
    fn loss(&self, x: f64) -> f64 {
        let s = (2.0 * x - 1.0) / (2.0 * self.z * self.z);
        if self.q == 1.0 {
            s
        } else {
            log_add((-self.q).ln_1p(), self.q.ln() + s)
        }
    }

    /// x with L(x) = y (−∞ when y ≤ ln(1 − q)).
    fn inv_loss(&self, y: f64) -> f64 {
        let z2 = self.z * self.z;
        if self.q == 1.0 {
            return z2 * y + 0.5;
        }
        let w = y.exp_m1() + self.q;
        if w <= 0.0 {
            return f64::NEG_INFINITY;
        }
        z2 * (w.ln() - self.q.ln()) + 0.5
    }

    /// P(Y ≥ y) if `upper`, else P(Y < y), with relative accuracy in that tail.
    fn tail(&self, y: f64, upper: bool) -> f64 {
        let (q, z) = (self.q, self.z);
        // P(Y < y) = sign·(…) with the normal CDF at ±: `flip` turns it into P(Y ≥ y).
        let flip = if upper { -1.0 } else { 1.0 };
        match self.dir {
            Direction::Remove => {
                let u = self.inv_loss(y);
                if u == f64::NEG_INFINITY {
                    return if upper { 1.0 } else { 0.0 };
                }
                (1.0 - q) * norm_cdf(flip * u / z) + q * norm_cdf(flip * (u - 1.0) / z)
            }
            Direction::Add => {
                // Y < y ⇔ L(X) > −y ⇔ X > L⁻¹(−y).
                let u = self.inv_loss(-y);
                if u == f64::NEG_INFINITY {
                    return if upper { 0.0 } else { 1.0 };
                }
                norm_cdf(-flip * u / z)
            }
        }
    }

    /// [`StepPrv::tail`] at the cell edge (k − ½)h, with the normal tail of the N(0, z²) component
    /// looked up in (or stored into) `shared`: the add direction's edge k and the remove
    /// direction's edge 1 − k are the same point u = L⁻¹((½ − k)h) of x, so the two directions
    /// share that tail (same arithmetic: erfc(|u/z|/√2), the accurate side, and 2 minus it).
    fn edge_tail(&self, k: i64, h: f64, upper: bool, shared: &mut SharedTails) -> f64 {
        let r = match self.dir {
            Direction::Remove => k,
            Direction::Add => 1 - k,
        };
        let u = self.inv_loss((r as f64 - 0.5) * h);
        if u == f64::NEG_INFINITY {
            return self.tail((k as f64 - 0.5) * h, upper);
        }
        let small = shared.erfc_abs(r, || {
            libm::erfc((u / self.z).abs() / std::f64::consts::SQRT_2)
        });
        // Φ(σ·u/z) = ½ erfc(−σu/(z√2)): ½·small when σu ≤ 0, else 1 − ½·small.
        let phi = |sign: f64| {
            if sign * u <= 0.0 {
                0.5 * small
            } else {
                0.5 * (2.0 - small)
            }
        };
        let flip = if upper { -1.0 } else { 1.0 };
        match self.dir {
            Direction::Remove => {
                (1.0 - self.q) * phi(flip) + self.q * norm_cdf(flip * (u - 1.0) / self.z)
            }
            Direction::Add => phi(-flip),
        }
    }

    /// Density of X and the value of Y at x.
    fn density_and_value(&self, x: f64) -> (f64, f64) {
        let z = self.z;
        let phi = |t: f64| (-0.5 * t * t).exp() / (z * (2.0 * std::f64::consts::PI).sqrt());
        match self.dir {
            Direction::Remove => (
                (1.0 - self.q) * phi(x / z) + self.q * phi((x - 1.0) / z),
                self.loss(x),
            ),
            Direction::Add => (phi(x / z), -self.loss(x)),
        }
    }

    /// E[Y · 1{a ≤ Y < b}] by composite 8-point Gauss–Legendre quadrature in x (panels of width
    /// z/8 over the x-interval, clipped to ±40z around the Gaussians' means, where the density is
    /// below e^{−800}).
    fn partial_mean(&self, a: f64, b: f64) -> f64 {
        const NODES: [f64; 4] = [
            0.183_434_642_495_649_8,
            0.525_532_409_916_329,
            0.796_666_477_413_626_7,
            0.960_289_856_497_536_3,
        ];
        const WEIGHTS: [f64; 4] = [
            0.362_683_783_378_362,
            0.313_706_645_877_887_3,
            0.222_381_034_453_374_5,
            0.101_228_536_290_376_3,
        ];
        let (xa, xb) = match self.dir {
            Direction::Remove => (self.inv_loss(a), self.inv_loss(b)),
            Direction::Add => (self.inv_loss(-b), self.inv_loss(-a)),
        };
        let lim = 40.0 * self.z + 1.0;
        let (xa, xb) = (xa.max(-lim), xb.min(lim));
        if xb <= xa {
            return 0.0;
        }
        let panels = (((xb - xa) / (self.z / 8.0)).ceil() as usize).clamp(1, 1 << 20);
        let w = (xb - xa) / panels as f64;
        let mut sum = 0.0;
        for p in 0..panels {
            let mid = xa + (p as f64 + 0.5) * w;
            for (n, wt) in NODES.iter().zip(WEIGHTS) {
                for x in [mid - 0.5 * w * n, mid + 0.5 * w * n] {
                    let (d, y) = self.density_and_value(x);
                    sum += wt * d * y;
                }
            }
        }
        sum * 0.5 * w
    }
}

/// The discretised step: masses on cells k_lo..k_lo+len of mesh h.
struct Discrete {
    h: f64,
    k_lo: i64,
    mass: Vec<f64>,
    /// Mass of the +∞ atom.
    p_inf: f64,
    /// Mass moved up into the bottom cell.
    p_low: f64,
    /// E[D] per step (mean of the true loss minus the cell centre, on the cells).
    mean_shift: f64,
}

/// erfc(|u/z|/√2) at the remove direction's cell edges, kept for the add direction
/// ([`StepPrv::edge_tail`]); valid for one (q, z, h).
struct SharedTails {
    key: [u64; 3],
    first: i64,
    values: Vec<f64>,
}

impl SharedTails {
    fn new() -> Self {
        SharedTails {
            key: [0; 3],
            first: 0,
            values: Vec::new(),
        }
    }

    /// Starts sharing for (q, z, h) over edges first..first + len, unless already sharing them.
    fn prepare(&mut self, q: f64, z: f64, h: f64, first: i64, len: usize) {
        let key = [q, z, h].map(f64::to_bits);
        if self.key != key || self.values.is_empty() {
            self.key = key;
            self.first = first;
            self.values.clear();
            self.values.resize(len, f64::NAN);
        }
    }

    /// The value at remove-edge r, computed by `f` when not known yet.
    fn erfc_abs(&mut self, r: i64, f: impl FnOnce() -> f64) -> f64 {
        let Some(slot) = usize::try_from(r - self.first)
            .ok()
            .and_then(|i| self.values.get_mut(i))
        else {
            return f();
        };
        if slot.is_nan() {
            *slot = f();
        }
        *slot
    }
}

fn discretise(prv: &StepPrv, h: f64, tail: f64, shared: &mut SharedTails) -> Discrete {
    // Support: bounded below by ln(1−q) (remove, q < 1), above by −ln(1−q) (add, q < 1);
    // otherwise cut where the tail is below `tail`.
    let bounded_below = prv.dir == Direction::Remove && prv.q < 1.0;
    let bounded_above = prv.dir == Direction::Add && prv.q < 1.0;
    let y_lo = if bounded_below {
        (-prv.q).ln_1p()
    } else {
        let mut y = -1.0;
        while prv.tail(y, false) > tail && y > -1e4 {
            y *= 2.0;
        }
        y
    };
    let y_hi = if bounded_above {
        -(-prv.q).ln_1p()
    } else {
        let mut y = 1.0;
        while prv.tail(y, true) > tail && y < 1e4 {
            y *= 2.0;
        }
        y
    };
    let k_lo = (y_lo / h).round() as i64;
    let k_hi = (y_hi / h).round() as i64;
    let n = (k_hi - k_lo + 1) as usize;
    let edge = |j: usize| (k_lo as f64 + j as f64 - 0.5) * h;
    // A cell's mass is a difference of lower tails while its upper edge has P(Y ≥ edge) > 1/2,
    // else of upper tails (each accurate in its own tail). P(Y ≥ edge) decreases with the edge:
    // `split` is the first edge where it is ≤ 1/2, so lower tails are needed at edges
    // 0..split and upper tails at edges split − 1..=n (one tail per edge, plus one).
    let split = partition_point(n + 1, |j| prv.tail(edge(j), true) > 0.5);
    // Only one direction can start the sharing (for the other, the keys must already match).
    if prv.dir == Direction::Remove {
        shared.prepare(prv.q, prv.z, h, k_lo, n + 1);
    } else if shared.key != [prv.q, prv.z, h].map(f64::to_bits) {
        shared.values.clear();
    }
    let edge_tail = |j: usize, upper: bool, shared: &mut SharedTails| {
        prv.edge_tail(k_lo + j as i64, h, upper, shared)
    };
    let lower: Vec<f64> = (0..split).map(|j| edge_tail(j, false, shared)).collect();
    let first_upper = split.saturating_sub(1);
    let upper: Vec<f64> = (first_upper..=n)
        .map(|j| edge_tail(j, true, shared))
        .collect();
    let mass: Vec<f64> = (0..n)
        .map(|j| {
            if j + 1 < split {
                lower[j + 1] - lower[j]
            } else {
                upper[j - first_upper] - upper[j + 1 - first_upper]
            }
            .max(0.0)
        })
        .collect();
    let p_low = lower
        .first()
        .copied()
        .unwrap_or_else(|| prv.tail(edge(0), false));
    let p_inf = upper[n - first_upper];
    let centred: f64 = mass
        .iter()
        .enumerate()
        .map(|(j, m)| m * (k_lo + j as i64) as f64 * h)
        .sum();
    let mean_shift = prv.partial_mean(edge(0), edge(n)) - centred;
    let mut mass = mass;
    mass[0] += p_low;
    Discrete {
        h,
        k_lo,
        mass,
        p_inf,
        p_low,
        mean_shift,
    }
}

/// The first i in 0..len with `pred(i)` false, for a predicate true then false (binary search).
fn partition_point(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl Discrete {
    /// ln Σ p_k e^{s·kh}, in blocks: inside a block the factor e^{s·h} is applied by repeated
    /// multiplication (kept below e^{300} so it neither overflows nor underflows), blocks are
    /// combined in log space. Eight interleaved lanes (cells j ≡ l mod 8, stepped by e^{8sh})
    /// keep the multiplications independent. The relative rounding error (≤ 10⁻¹²) is covered
    /// by a 10⁻⁹ margin.
    fn log_mgf(&self, s: f64) -> f64 {
        const LANES: usize = 8;
        let block = ((300.0 / (s.abs() * self.h)) as usize).clamp(LANES, 4096) / LANES * LANES;
        let r = (s * self.h).exp();
        let mut start = [1.0f64; LANES];
        for l in 1..LANES {
            start[l] = start[l - 1] * r;
        }
        let step = start[LANES - 1] * r;
        let mut acc = f64::NEG_INFINITY;
        for (b, chunk) in self.mass.chunks(block).enumerate() {
            let y_first = (self.k_lo + (b * block) as i64) as f64 * self.h;
            let (mut w, mut sum) = (start, [0.0f64; LANES]);
            let mut cells = chunk.chunks_exact(LANES);
            for c in cells.by_ref() {
                for l in 0..LANES {
                    sum[l] += c[l] * w[l];
                    w[l] *= step;
                }
            }
            for (l, m) in cells.remainder().iter().enumerate() {
                sum[l] += m * w[l];
            }
            let sum: f64 = sum.iter().sum();
            if sum > 0.0 {
                acc = log_add(acc, s * y_first + sum.ln());
            }
        }
        acc + 1e-9
    }

    /// Window [lo, hi] (values) holding the T-fold sum except for mass ≤ η_w on each side
    /// (Chernoff: P(ΣỸ ≥ w) ≤ M(s)^T e^{−sw}, for any s > 0). Each side is the best over s on a
    /// grid of ratio 2^{1/4} from 2^−7 to 2^9: a scan at ratio 2, then the quarter steps around
    /// its best point (the bound is quasi-convex in s; any s gives a valid bound).
    fn window(&self, steps: f64, eta_w: f64) -> (f64, f64) {
        let upper = |k: i32| {
            let s = 2f64.powf(k as f64 / 4.0);
            (steps * self.log_mgf(s) - eta_w.ln()) / s
        };
        let lower = |k: i32| {
            let s = 2f64.powf(k as f64 / 4.0);
            -(steps * self.log_mgf(-s) - eta_w.ln()) / s
        };
        let best = |f: &dyn Fn(i32) -> f64, better: fn(f64, f64) -> bool| {
            let mut arg = -28;
            let mut val = f(arg);
            for k in (-24..=36).step_by(4) {
                let v = f(k);
                if better(v, val) {
                    (arg, val) = (k, v);
                }
            }
            for k in (arg - 3).max(-28)..=(arg + 3).min(36) {
                if k != arg {
                    let v = f(k);
                    if better(v, val) {
                        val = v;
                    }
                }
            }
            val
        };
        let hi = best(&upper, |a, b| a < b);
        let lo = best(&lower, |a, b| a > b);
        (lo, hi)
    }
}

/// Composed masses on values K·h, K ∈ [k0, k0 + len), with the +∞ atom of the composition.
struct Composed {
    h: f64,
    k0: i64,
    mass: Vec<f64>,
    p_inf: f64,
}

/// Share of δ left to the frequencies the composition leaves out (`band_fft::band_limit`): far
/// below the floating-point resolution of δ, so the bounds read the same as with every frequency
/// kept.
const BAND_SHARE: f64 = 1e-30;

/// The composed masses of one direction, or of two on the same circle (one complex transform),
/// at the window's cells with values ≥ 0 (all that the privacy profile reads).
fn compose(dirs: &[(&Discrete, i64)], steps: u64, n: usize, delta: f64) -> Vec<Composed> {
    let wanted = |k0: i64| {
        let first = k0.max(0);
        band_fft::Wanted {
            first,
            len: (k0 + n as i64 - first).max(0) as usize,
        }
    };
    let parts: Vec<_> = dirs
        .iter()
        .map(|(d, k0)| {
            let cells = band_fft::Cells {
                mass: &d.mass,
                first: d.k_lo,
            };
            (cells, wanted(*k0))
        })
        .collect();
    let tol = band_fft::Tolerance(BAND_SHARE * delta);
    let masses = band_fft::compose(&parts, steps, n, tol, None);
    dirs.iter()
        .zip(masses)
        .map(|((d, k0), mass)| Composed {
            h: d.h,
            k0: (*k0).max(0),
            mass,
            p_inf: -(steps as f64 * (-d.p_inf).ln_1p()).exp_m1(),
        })
        .collect()
}

impl Drop for Composed {
    fn drop(&mut self) {
        pool::give_back(std::mem::take(&mut self.mass));
    }
}

/// The privacy profile δ̃(ε) = Σ_K P_K (1 − e^{ε − Kh})₊ + P(∞) of the composed masses, through
/// suffix sums over the cells with Kh ≥ 0: S0 = Σ P_K, S1 = Σ P_K e^{−Kh}.
struct Profile {
    h: f64,
    k0: i64,
    start: usize,
    s0: Vec<f64>,
    s1: Vec<f64>,
    p_inf: f64,
}

impl Drop for Profile {
    fn drop(&mut self) {
        pool::give_back(std::mem::take(&mut self.s0));
        pool::give_back(std::mem::take(&mut self.s1));
    }
}

impl Profile {
    fn new(c: &Composed) -> Self {
        let start = (-c.k0).max(0) as usize;
        let n = c.mass.len();
        // Cells below `start` are never read; the rest is written below.
        let mut s0 = pool::reuse(n + 1);
        let mut s1 = pool::reuse(n + 1);
        (s0[n], s1[n]) = (0.0, 0.0);
        // e^{−v_i} exactly every 64 cells, and by steps of e^{h} in between (≤ 64 roundings).
        let up = c.h.exp();
        let mut weight = 0.0;
        for i in (start..n).rev() {
            weight = if (n - 1 - i).is_multiple_of(64) {
                (-((c.k0 + i as i64) as f64 * c.h)).exp()
            } else {
                weight * up
            };
            s0[i] = s0[i + 1] + c.mass[i];
            s1[i] = s1[i + 1] + c.mass[i] * weight;
        }
        Profile {
            h: c.h,
            k0: c.k0,
            start,
            s0,
            s1,
            p_inf: c.p_inf,
        }
    }

    fn value(&self, i: usize) -> f64 {
        (self.k0 + i as i64) as f64 * self.h
    }

    /// δ̃ at grid value v_i (mass strictly above v_i counts).
    fn delta_at(&self, i: usize) -> f64 {
        self.s0[i + 1] - self.value(i).exp() * self.s1[i + 1]
    }

    /// Smallest ε ≥ 0 with δ̃(ε) ≤ `delta`; +∞ if the atom alone exceeds δ.
    fn epsilon(&self, delta: f64) -> f64 {
        let target = delta - self.p_inf;
        if target <= 0.0 {
            return f64::INFINITY;
        }
        let (start, n) = (self.start, self.s0.len() - 1);
        let (s0, s1) = (&self.s0, &self.s1);
        // δ̃(0): with v_start = 0 when the window contains 0, else every cell counts.
        let d0 = if self.value(start) <= 0.0 {
            self.delta_at(start)
        } else {
            s0[start] - s1[start]
        };
        if d0 <= target {
            return 0.0;
        }
        // On [0, v_start] (window above 0) every cell counts: δ̃(ε) = S0 − e^ε S1.
        if self.delta_at(start) <= target {
            return ((s0[start] - target) / s1[start])
                .ln()
                .clamp(0.0, self.value(start));
        }
        // First grid index i > start with δ̃(v_i) ≤ target (δ̃ decreasing).
        let (mut lo, mut hi) = (start, n - 1);
        if self.delta_at(hi) > target {
            return f64::INFINITY;
        }
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.delta_at(mid) <= target {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        // On (v_{hi−1}, v_hi]: δ̃(ε) = S0_hi − e^ε S1_hi.
        let eps = ((s0[hi] - target) / s1[hi]).ln();
        eps.clamp(self.value(hi - 1).max(0.0), self.value(hi))
    }
}

/// One direction's discretisation and FFT window, or the trivial bounds when the loss is too
/// wide for the grid.
enum Plan {
    Grid { d: Discrete, k0: i64, n: usize },
    Trivial,
}

/// The discretisation of one direction (mesh, cells, window and FFT length; module doc, 1–2).
fn plan(prv: &StepPrv, steps: u64, delta: f64, t_target: f64, shared: &mut SharedTails) -> Plan {
    let tf = steps as f64;
    let hoeffding = hoeffding_factor(steps, delta);
    let mut h = t_target / hoeffding;
    loop {
        let d = discretise(prv, h, ERR_SHARE * delta / tf, shared);
        let (lo, hi) = d.window(tf, 0.5 * ERR_SHARE * delta);
        let hi = hi.max(h);
        let width = ((hi - lo) / h).ceil() + 2.0;
        if width > MAX_FFT as f64 && h < 1.0 {
            h *= width / MAX_FFT as f64 * 1.01;
            continue;
        }
        // A privacy loss too wide for the grid even at a coarse mesh (a noise multiplier near
        // 0): report the trivial bounds [0, ∞], which hold, rather than overflow.
        if !(width.is_finite() && width <= MAX_FFT as f64 && (lo / h).abs() < 1e15) {
            return Plan::Trivial;
        }
        // A power of two for small windows, else a multiple of 4096 (any short transform of
        // the band composition up to 4096 points divides it; at most 1% longer than the window).
        let n = if width <= 4096.0 {
            (width as usize).next_power_of_two().max(64)
        } else {
            (width as usize).div_ceil(4096) * 4096
        };
        let k0 = (lo / h).floor() as i64 - 1;
        return Plan::Grid { d, k0, n };
    }
}

/// √(T ln(1/η)/2): the Hoeffding deviation per unit of mesh (module doc).
fn hoeffding_factor(steps: u64, delta: f64) -> f64 {
    (steps as f64 * (1.0 / (ERR_SHARE * delta)).ln() / 2.0).sqrt()
}

/// ε bounds of one direction from its composed masses (module doc, 3 and the coupling).
fn read_bounds(d: &Discrete, c: &Composed, steps: u64, delta: f64) -> DirectionBounds {
    let tf = steps as f64;
    let eta = ERR_SHARE * delta;
    let p = Profile::new(c);
    let t = d.h * hoeffding_factor(steps, delta);
    let shift = tf * d.mean_shift;
    let p_out = ERR_SHARE * delta;
    let band = BAND_SHARE * delta;
    let upper = p.epsilon(delta - p_out - eta - band) + shift + t;
    let estimate = p.epsilon(delta) + shift;
    let lower = p.epsilon(delta + p_out + eta + band + tf * (d.p_inf + d.p_low)) + shift - t;
    DirectionBounds {
        bounds: EpsilonBounds {
            lower: lower.max(0.0),
            estimate: estimate.max(0.0),
            upper: upper.max(0.0),
        },
        t,
    }
}

/// One direction's bounds, with the discretisation term t in them (module doc).
#[derive(Clone, Copy)]
struct DirectionBounds {
    bounds: EpsilonBounds,
    t: f64,
}

const TRIVIAL: DirectionBounds = DirectionBounds {
    bounds: EpsilonBounds {
        lower: 0.0,
        estimate: f64::INFINITY,
        upper: f64::INFINITY,
    },
    t: 0.0,
};

/// ε bounds of one direction.
fn direction_bounds(plan: &Plan, steps: u64, delta: f64) -> DirectionBounds {
    match plan {
        Plan::Grid { d, k0, n } => {
            let composed = compose(&[(d, *k0)], steps, *n, delta);
            read_bounds(d, &composed[0], steps, delta)
        }
        Plan::Trivial => TRIVIAL,
    }
}

/// The discretisation term t the mesh aims at: about 0.2% of a rough ε (module doc).
fn target_t(rough_epsilon: f64) -> f64 {
    (0.002 * rough_epsilon).clamp(2e-4, 1e-2)
}

/// Both directions' bounds (remove, add) on the mesh aimed at discretisation term `t_target`.
fn both_directions(q: f64, z: f64, steps: u64, delta: f64, t_target: f64) -> [DirectionBounds; 2] {
    let mut shared = SharedTails::new();
    let [a, b] = [Direction::Remove, Direction::Add]
        .map(|dir| plan(&StepPrv { q, z, dir }, steps, delta, t_target, &mut shared));
    match (&a, &b) {
        (
            Plan::Grid {
                d: da,
                k0: ka,
                n: na,
            },
            Plan::Grid {
                d: db,
                k0: kb,
                n: nb,
            },
        ) if da.h == db.h => {
            // One circle for both: the longer one holds either window.
            let c = compose(&[(da, *ka), (db, *kb)], steps, *na.max(nb), delta);
            [
                read_bounds(da, &c[0], steps, delta),
                read_bounds(db, &c[1], steps, delta),
            ]
        }
        _ => [
            direction_bounds(&a, steps, delta),
            direction_bounds(&b, steps, delta),
        ],
    }
}

/// ε bounds at δ of `steps` compositions of the Poisson-subsampled Gaussian (add/remove), the
/// worse of the two directions. `rough_epsilon` (e.g. the RDP value) sets the mesh: the
/// discretisation term t is about 0.2% of it.
pub fn sgm_epsilon_bounds(
    q: f64,
    z: f64,
    steps: u64,
    delta: f64,
    rough_epsilon: f64,
) -> EpsilonBounds {
    let key = [q, z, steps as f64, delta, rough_epsilon].map(f64::to_bits);
    if let Some(b) = memo().get(&key) {
        return *b;
    }
    let [a, b] = both_directions(q, z, steps, delta, target_t(rough_epsilon)).map(|d| d.bounds);
    let bounds = EpsilonBounds {
        lower: a.lower.max(b.lower),
        estimate: a.estimate.max(b.estimate),
        upper: a.upper.max(b.upper),
    };
    let mut m = memo();
    if m.len() >= MEMO_SIZE {
        m.clear();
    }
    m.insert(key, bounds);
    bounds
}

/// A cheap stand-in for `sgm_epsilon_bounds(q, z, steps, delta, rough_epsilon).upper`, to steer a
/// noise-multiplier search (never to certify anything): the same computation on a mesh
/// `coarseness` times coarser, about `coarseness` times cheaper, with its discretisation term t
/// replaced by the fine mesh's. The estimate ε̃ + T·m̄ hardly depends on the mesh (its error is
/// of second order in h, far below t), so this tracks the certified upper bound closely and with
/// an almost constant offset (at the anchor q = 0.01, z = 1.1, T = 10⁴: +9·10⁻⁵ at coarseness 8,
/// +3.4·10⁻⁴ at 16, against t = 10⁻²).
///
/// ```
/// use dpfair_privacy::accounting::prv::{sgm_epsilon_bounds, sgm_upper_estimate};
/// let (q, z, steps, delta, rough) = (0.05, 1.2, 300, 1e-5, 2.6);
/// let cheap = sgm_upper_estimate(q, z, steps, delta, rough, 8.0);
/// let full = sgm_epsilon_bounds(q, z, steps, delta, rough).upper;
/// assert!((cheap - full).abs() < 1e-3 * full);
/// ```
pub fn sgm_upper_estimate(
    q: f64,
    z: f64,
    steps: u64,
    delta: f64,
    rough_epsilon: f64,
    coarseness: f64,
) -> f64 {
    let t = target_t(rough_epsilon);
    both_directions(q, z, steps, delta, t * coarseness)
        .iter()
        .map(|d| d.bounds.upper - d.t + t)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// The smallest noise multiplier z, to relative tolerance `tol`, whose certified ε (`upper(z)`,
/// +∞ when it cannot be computed) is at most `epsilon`, searched from `start` (the DP-SGD search
/// starts from a point just above the root found on cheap estimates: `accounting`'s
/// `prv_noise_multiplier`). Returns the upper end of the final bracket
/// [lo, hi] (hi − lo ≤ tol·hi, upper(lo) > ε ≥ upper(hi)), so the returned z meets the target by
/// an evaluation of `upper` itself; `None` if no z in [10⁻⁶, 10⁶] does.
///
/// ε(z) is smooth and decreasing and close to a power law, so the next point is the secant
/// (regula falsi) estimate of ln ε(z) = ln ε in ln z, moved by tol/3 away from the bracket end it
/// is nearer to in ratio; when the estimate is good this lands one probe just above and one just
/// below the root, closing the bracket in about four evaluations instead of the fifteen of
/// doubling and bisection. Secant steps that fall outside the bracket, or a run of more than
/// eight of them, give way to bisection in ln z.
pub fn search_noise_multiplier(
    start: f64,
    epsilon: f64,
    tol: f64,
    upper: impl FnMut(f64) -> f64,
) -> Option<f64> {
    search_bracket(start, epsilon, tol, 1.0, upper).map(|b| b.hi.0)
}

/// The final bracket of [`search_bracket`]: points (z, upper(z)) with upper(lo) > ε ≥ upper(hi)
/// and hi − lo ≤ tol·hi (`lo` is `None` only when the search ran out of steps).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bracket {
    /// The last point that misses the target.
    pub lo: Option<(f64, f64)>,
    /// The last point that meets it.
    pub hi: (f64, f64),
}

impl Bracket {
    /// The secant estimate of the root of ln upper(z) = ln ε in ln z, and the local power
    /// p = −d ln upper / d ln z > 0 (`None` without a finite lower end).
    pub fn secant(&self, epsilon: f64) -> Option<(f64, f64)> {
        let ((zl, el), (zh, eh)) = (self.lo?, self.hi);
        let (a, b) = (zl.ln(), zh.ln());
        let (fl, fh) = (el.ln() - epsilon.ln(), eh.ln() - epsilon.ln());
        let root = (a + (b - a) * fl / (fl - fh)).exp();
        let power = (fl - fh) / (b - a);
        (root.is_finite() && power.is_finite() && power > 0.0).then_some((root, power))
    }
}

/// [`search_noise_multiplier`] returning its final bracket, with the power p of the power law
/// ε ∝ z^−p that extrapolates from a single point (1 in [`search_noise_multiplier`]).
pub fn search_bracket(
    start: f64,
    epsilon: f64,
    tol: f64,
    power: f64,
    mut upper: impl FnMut(f64) -> f64,
) -> Option<Bracket> {
    let mut lo: Option<(f64, f64)> = None; // (z, ε(z)) with ε(z) > target
    let mut hi: Option<(f64, f64)> = None; // ε(z) ≤ target
    let mut z = start;
    for iteration in 0..200 {
        if !(1e-6..=1e6).contains(&z) {
            return None;
        }
        let e = upper(z);
        if e <= epsilon {
            hi = Some((z, e));
        } else {
            lo = Some((z, e));
        }
        // Power-law extrapolation ε ∝ z^−p from one point, ratio capped at 4.
        let jump = |(z, e): (f64, f64)| {
            if e.is_finite() && e > 0.0 {
                z * (e / epsilon).powf(1.0 / power).clamp(0.25, 4.0)
            } else {
                z * 4.0
            }
        };
        z = match (lo, hi) {
            (Some(l), Some(h)) if h.0 - l.0 <= tol * h.0 => {
                return Some(Bracket { lo: Some(l), hi: h });
            }
            // A step of slightly less than tol, so that a bracket of the two points passes the
            // width test despite rounding.
            (None, Some(h)) => jump(h).min(h.0 * (1.0 - 0.999 * tol)),
            (Some(l), None) => jump(l).max(l.0 * (1.0 + tol)),
            (Some((zl, el)), Some((zh, eh))) => {
                let (a, b) = (zl.ln(), zh.ln());
                let (fl, fh) = (el.ln() - epsilon.ln(), eh.ln() - epsilon.ln());
                let secant = a + (b - a) * fl / (fl - fh);
                // (An end that meets the target exactly puts the secant on it: still a secant step.)
                let c = if iteration < 8 && secant.is_finite() && secant >= a && secant <= b {
                    // Aim just past the root, on the side of the farther bracket end.
                    let nudge = if b - secant > secant - a {
                        tol / 3.0
                    } else {
                        -tol / 3.0
                    };
                    (secant + nudge).clamp(a + tol / 10.0, b - tol / 10.0)
                } else {
                    0.5 * (a + b)
                };
                c.exp()
            }
            (None, None) => unreachable!("every evaluation lands on one side"),
        };
    }
    hi.map(|hi| Bracket { lo, hi })
}

/// Evaluations kept (a noise-multiplier search makes about six; the ledger then charges the run
/// at the z the search returned, which is one of them).
const MEMO_SIZE: usize = 256;

/// The bounds already computed in this process, keyed by the exact bits of their inputs: the
/// function is deterministic, so a repeated call returns the same value bit for bit.
fn memo() -> std::sync::MutexGuard<'static, HashMap<[u64; 5], EpsilonBounds>> {
    static MEMO: OnceLock<Mutex<HashMap<[u64; 5], EpsilonBounds>>> = OnceLock::new();
    MEMO.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search closes a bracket of relative width ≤ tol around the root of a smooth decreasing
    /// ε(z) in a few evaluations, returns its upper end (which meets the target), from a start
    /// on either side; and gives `None` when no z reaches the target.
    #[test]
    fn search_brackets_the_root_in_few_evaluations() {
        let tol = 1e-4;
        for (start, target) in [(3.0, 1.0), (0.5, 1.0), (2.0, 0.2), (1.01, 4.0)] {
            let mut calls = 0;
            let eps = |z: f64| 0.9 / z.powf(1.3) + 0.05 * (-z).exp();
            let z = search_noise_multiplier(start, target, tol, |z| {
                calls += 1;
                eps(z)
            })
            .unwrap();
            assert!(eps(z) <= target, "start {start}: ε({z}) > {target}");
            assert!(
                eps(z * (1.0 - tol)) > target,
                "start {start}: {z} is not minimal"
            );
            assert!(
                calls <= 8,
                "start {start}, target {target}: {calls} evaluations"
            );
        }
        assert_eq!(search_noise_multiplier(1.0, 0.5, tol, |_| 1.0), None);
        // Failed evaluations (+∞) count as "does not meet".
        let z =
            search_noise_multiplier(1.0, 1.0, tol, |z| if z < 2.0 { f64::INFINITY } else { 0.5 })
                .unwrap();
        assert!((2.0..2.0 * (1.0 + tol)).contains(&z), "{z}");
    }

    /// Sharing the N(0, z²) tails between the directions gives the masses of separate
    /// discretisations (to an ulp of the tails: 10⁻¹⁵ relative on each cell), and the add
    /// direction does use the remove direction's tails.
    #[test]
    fn shared_tails_give_the_masses_of_separate_discretisations() {
        let (q, z, h, tail) = (0.05, 1.2, 2e-3, 1e-12);
        let remove = StepPrv {
            q,
            z,
            dir: Direction::Remove,
        };
        let add = StepPrv {
            q,
            z,
            dir: Direction::Add,
        };
        let mut shared = SharedTails::new();
        let shared_masses = [&remove, &add].map(|p| discretise(p, h, tail, &mut shared).mass);
        let known = shared.values.iter().filter(|v| !v.is_nan()).count();
        assert!(known > 1000, "{known} tails kept");
        for (p, with) in [&remove, &add].iter().zip(&shared_masses) {
            let alone = discretise(p, h, tail, &mut SharedTails::new()).mass;
            assert_eq!(alone.len(), with.len());
            for (a, b) in alone.iter().zip(with) {
                assert!((a - b).abs() <= 1e-15 * a.abs() + 1e-300, "{a:e} vs {b:e}");
            }
        }
    }

    /// With the right power p, the first jump of the search lands next to the root of
    /// ε = c·z^−p, and the bracket's secant gives the root and p back.
    #[test]
    fn search_with_the_power_jumps_to_the_root() {
        let (c, p, target, tol): (f64, f64, f64, f64) = (3.0, 1.8, 1.0, 1e-3);
        let root = c.powf(1.0 / p);
        let mut calls = 0;
        let b = search_bracket(0.8 * root, target, tol, p, |z| {
            calls += 1;
            c * z.powf(-p)
        })
        .unwrap();
        assert!(calls <= 3, "{calls} evaluations");
        let (r, q) = b.secant(target).unwrap();
        assert!((r / root - 1.0).abs() < 1e-9, "root {r} vs {root}");
        assert!((q / p - 1.0).abs() < 1e-9, "power {q} vs {p}");
        assert!(b.hi.1 <= target && b.lo.unwrap().1 > target);
    }

    /// Packing both directions into one transform gives the masses of two separate transforms
    /// (to rounding: 10⁻¹⁴ absolute on masses ≤ 1).
    #[test]
    fn packed_directions_equal_separate_compositions() {
        let (q, z, steps, delta) = (0.05, 1.2, 300u64, 1e-5);
        let plans = [Direction::Remove, Direction::Add].map(|dir| {
            plan(
                &StepPrv { q, z, dir },
                steps,
                delta,
                0.01,
                &mut SharedTails::new(),
            )
        });
        let [
            Plan::Grid { d: da, k0: ka, n },
            Plan::Grid {
                d: db,
                k0: kb,
                n: nb,
            },
        ] = &plans
        else {
            panic!("both directions fit the grid");
        };
        let n = n.max(nb);
        let packed = compose(&[(da, *ka), (db, *kb)], steps, *n, delta);
        for (packed, d, k0) in [(&packed[0], da, *ka), (&packed[1], db, *kb)] {
            let single = &compose(&[(d, k0)], steps, *n, delta)[0];
            let worst = packed
                .mass
                .iter()
                .zip(&single.mass)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(worst < 1e-14, "{worst:e}");
            assert_eq!(packed.p_inf, single.p_inf);
        }
    }
}
