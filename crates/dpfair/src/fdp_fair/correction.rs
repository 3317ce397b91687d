//! Monotone correction of the noisy DD grid: Algorithm 4 (NON.INCREASING, the theory's version)
//! and Algorithm 6 (NON-INCREASING (NUMERICAL), used in all of the paper's experiments), with the
//! tolerance `ω` they share.
//!
//! Sequences have length `2^M + 1` (the paper's `2^{M+1}` / `2^{N+1}` are typos, `docs/deviations.md#fdp-fair-index-typos`).

use serde::{Deserialize, Serialize};

/// What `ω` needs to know about one site: `μ_s`, `ň_s` (its calibration size), `ε_s`, `δ_s`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OmegaSite {
    pub mu: f64,
    pub n_cal: usize,
    pub epsilon: f64,
    pub delta: f64,
}

/// `ω = C_ω sqrt( Σ_s μ_s² M⁴ log(1/δ_s) log(M/η_tol) / (ň_s² ε_s²) )` (Alg. 4/6; `ň_s` is the
/// site's whole calibration size, as the code, `docs/deviations.md#fdp-fair-eta-tol-and-omega`).
pub fn omega(c_omega: f64, sites: &[OmegaSite], depth: usize, eta_tol: f64) -> f64 {
    let m = depth as f64;
    let sum: f64 = sites
        .iter()
        .map(|s| {
            s.mu * s.mu * m.powi(4) * (1.0 / s.delta).ln() * (m / eta_tol).ln()
                / ((s.n_cal as f64).powi(2) * s.epsilon * s.epsilon)
        })
        .sum();
    c_omega * sum.sqrt()
}

/// Whether `g_1 ≥ g_2 ≥ … ≥ g_n`.
pub fn is_non_increasing(g: &[f64]) -> bool {
    g.windows(2).all(|w| w[0] >= w[1])
}

/// Algorithm 4: `f_1 = g_1 + ω`, `f_i = min(f_{i−1}, g_i + ω)`, NULL (`None`) as soon as
/// `f_i < g_i − ω`. Equivalently `f_i = ω + min_{j≤i} g_j`, non-NULL iff
/// `max_i (g_i − min_{j≤i} g_j) ≤ 2ω` (Xue & Yu, Algorithm 4). Already non-increasing input is returned as is.
pub fn non_increasing(g: &[f64], omega: f64) -> Option<Vec<f64>> {
    if is_non_increasing(g) {
        return Some(g.to_vec());
    }
    let mut out = Vec::with_capacity(g.len());
    let mut prev = f64::INFINITY;
    for &gi in g {
        let f = prev.min(gi + omega);
        if f < gi - omega {
            return None;
        }
        out.push(f);
        prev = f;
    }
    Some(out)
}

/// The clipping range of Algorithm 6's band.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Clip {
    /// `[−1, 1]`, the range of DD (strict default, `docs/deviations.md#fdp-fair-algorithm-6-clipping`).
    #[default]
    Symmetric,
    /// `[0, 1]` as printed in the paper: negative DD values are only shifted up by ω, never
    /// monotonised (Algorithm 6, its clipping step, `docs/deviations.md#fdp-fair-algorithm-6-clipping`).
    Paper,
}

impl Clip {
    pub fn range(self) -> (f64, f64) {
        match self {
            Clip::Symmetric => (-1.0, 1.0),
            Clip::Paper => (0.0, 1.0),
        }
    }
}

/// The output of Algorithm 6 and whether it really is non-increasing (not guaranteed
/// item 5).
#[derive(Clone, Debug, PartialEq)]
pub struct Corrected {
    pub values: Vec<f64>,
    pub monotone: bool,
}

/// Algorithm 6: `u_i = min(g_i + ω, hi)`, `l_i = max(g_i − ω, lo)`, `f_n = u_n`,
/// `f_i = min(u_i, max(l_i, f_{i+1}))` from right to left (then the code's final clamp
/// `min(max(f, l), u)`, a no-op when `l_i ≤ u_i`). Already non-increasing input is returned as is.
pub fn non_increasing_numerical(g: &[f64], omega: f64, clip: Clip) -> Corrected {
    if is_non_increasing(g) {
        return Corrected {
            values: g.to_vec(),
            monotone: true,
        };
    }
    let (lo, hi) = clip.range();
    let u: Vec<f64> = g.iter().map(|&x| (x + omega).min(hi)).collect();
    let l: Vec<f64> = g.iter().map(|&x| (x - omega).max(lo)).collect();
    let n = g.len();
    let mut f = vec![0.0; n];
    if n > 0 {
        f[n - 1] = u[n - 1];
        for i in (0..n - 1).rev() {
            f[i] = u[i].min(l[i].max(f[i + 1]));
        }
        for i in 0..n {
            f[i] = f[i].max(l[i]).min(u[i]);
        }
    }
    let monotone = is_non_increasing(&f);
    Corrected {
        values: f,
        monotone,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omega_spec_vector() {
        // `docs/reference-values.md#fdp-fair`: S = 4, μ = 1/4, M = 6, δ = 1e−6, η_tol = 0.01, ň_s = 1000, ε = 1, C_ω = 0.1.
        let s = OmegaSite {
            mu: 0.25,
            n_cal: 1000,
            epsilon: 1.0,
            delta: 1e-6,
        };
        let w = omega(0.1, &[s; 4], 6, 0.01);
        assert!((w - 0.016922).abs() < 1e-6, "{w}");
    }

    /// Deterministic pseudo-random sequences (an LCG), no test randomness needed.
    fn sequences() -> Vec<Vec<f64>> {
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..300)
            .map(|_| {
                let n = 2 + (next() * 40.0) as usize;
                let mut v = 1.0;
                (0..n)
                    .map(|_| {
                        v -= 0.05 * next();
                        v + 0.2 * (next() - 0.5)
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn algorithm_4_matches_its_closed_form() {
        for g in sequences() {
            for omega in [0.0, 0.02, 0.05, 0.2] {
                let out = non_increasing(&g, omega);
                if is_non_increasing(&g) {
                    assert_eq!(out.as_deref(), Some(&g[..]));
                    continue;
                }
                let mut run = f64::INFINITY;
                let gap = g
                    .iter()
                    .map(|&x| {
                        run = run.min(x);
                        x - run
                    })
                    .fold(0.0, f64::max);
                assert_eq!(out.is_some(), gap <= 2.0 * omega, "{g:?} ω = {omega}");
                if let Some(f) = out {
                    assert!(is_non_increasing(&f));
                    for (fi, gi) in f.iter().zip(&g) {
                        assert!((fi - gi).abs() <= omega + 1e-12);
                    }
                }
            }
        }
    }

    #[test]
    fn algorithm_6_stays_in_its_band_and_reports_monotonicity() {
        for g in sequences() {
            for clip in [Clip::Symmetric, Clip::Paper] {
                let c = non_increasing_numerical(&g, 0.03, clip);
                assert_eq!(c.monotone, is_non_increasing(&c.values));
                if is_non_increasing(&g) {
                    assert_eq!(c.values, g);
                    continue;
                }
                let (lo, hi) = clip.range();
                for (i, (&f, &x)) in c.values.iter().zip(&g).enumerate() {
                    let (l, u) = ((x - 0.03).max(lo), (x + 0.03).min(hi));
                    if l <= u {
                        assert!(f >= l - 1e-12 && f <= u + 1e-12, "i = {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn paper_clip_never_monotonises_negative_values() {
        // Algorithm 6, its clipping step: with [0,1] clipping, g_i < −ω gives f_i = g_i + ω.
        let g = [-0.2, -0.19, -0.3, -0.31];
        let c = non_increasing_numerical(&g, 0.01, Clip::Paper);
        for (f, x) in c.values.iter().zip(g) {
            assert!((f - (x + 0.01)).abs() < 1e-12);
        }
        assert!(!c.monotone);
        let s = non_increasing_numerical(&g, 0.01, Clip::Symmetric);
        assert!(s.monotone, "{:?}", s.values);
    }
}
