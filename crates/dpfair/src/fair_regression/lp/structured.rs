//! A structure-exploiting interior-point method for the barycenter LP (Xian et al., Algorithm 1, line 14).
//!
//! **Reformulation \[derived\].** Given the target CDF `C_a` of group a, the optimal transport
//! from `p_a` is the monotone coupling (Lemma B.9), whose cost `∫₀¹ (Q_p(u) − Q_q(u))² du` telescopes
//! over the levels ℓ into a separable convex function of the CDF values:
//! ```text
//! W₂²(p_a, q_a) = Σ_j p_a(j)(k−1−j)² + Σ_{ℓ=0}^{k−2} ψ_{aℓ}(C_a(ℓ)),
//! ψ_{aℓ}(c) = ∫₀^c (2 Q_{p_a}(u) − 2ℓ − 1) du        (slope 2j − 2ℓ − 1 on bin j's quantile interval)
//! ```
//! valid whenever `C_a` is nondecreasing. Writing `C_a(ℓ) = Σ_j y_{aℓj}` with `0 ≤ y_{aℓj} ≤ p_a(j)`
//! (`y_{aℓj}` = mass of bin j sent to bins ≤ ℓ; the slopes increase in j, so the LP fills the boxes in
//! order) gives the LP solved here:
//! ```text
//! min  Σ_a w_a Σ_{ℓ<k−1} Σ_j (2j − 2ℓ − 1) y_{aℓj}
//! s.t. Σ_j y_{aℓj} = C_a(ℓ),  0 ≤ y ≤ p,  0 ≤ C_a(0) ≤ … ≤ C_a(k−2) ≤ 1,  |C_a(ℓ) − B(ℓ)| ≤ α/2
//! ```
//! (The centre's monotonicity is implied: the midpoint of `max_a C_a` and `min_a C_a` is a
//! nondecreasing centre.) Same optimal value as the paper's LP; the couplings are rebuilt by
//! [`super::polish`].
//!
//! **Solver.** Mehrotra predictor–corrector, infeasible primal–dual interior point. Eliminating the
//! box-constrained `y` (diagonal) and the linking multipliers leaves Newton systems in `(C, B)`
//! only, ordered by level ℓ: block-tridiagonal with blocks of size m + 1, solved by a banded
//! Cholesky factorization in `O(k m³)`. One iteration costs `O(Σ_a k · #nonempty bins of p_a)`:
//! linear in the size of the data, against `m k²` variables in the paper's form.

// Index loops mirror the formulas over several parallel arrays.
#![allow(clippy::needless_range_loop)]

use super::{BarycenterProblem, LpError};

/// Bins with less mass than this are left out of the interior-point problem (their boxes would be
/// degenerate); [`super::polish`] transports them exactly with the full PMFs.
const MIN_SEGMENT: f64 = 1e-14;
const MAX_ITER: u32 = 200;
/// Fraction of the step to the boundary.
const STEP_FRACTION: f64 = 0.995;

/// The CDF-form problem with its index layout.
struct Layout {
    m: usize,
    /// Free levels ℓ = 0..kk (kk = k − 1; `C_a(k−1) = 1` is fixed).
    kk: usize,
    /// Per group: bin indices and masses of its nonempty bins.
    seg_j: Vec<Vec<f64>>,
    seg_p: Vec<Vec<f64>>,
    /// Start of group a's y block; within it, y_{aℓs} is at `ℓ · ns_a + s`.
    y_off: Vec<usize>,
    ny: usize,
    half_alpha: f64,
    /// Cost per y (scaled by 1 / `cost_scale`).
    cost: Vec<f64>,
}

impl Layout {
    fn ns(&self, a: usize) -> usize {
        self.seg_j[a].len()
    }
    fn nx(&self) -> usize {
        self.ny + self.m * self.kk + self.kk
    }
    fn c_idx(&self, a: usize, l: usize) -> usize {
        self.ny + a * self.kk + l
    }
    fn b_idx(&self, l: usize) -> usize {
        self.ny + self.m * self.kk + l
    }
    // Inequality rows: [y ≥ 0 (ny) | y ≤ p (ny) | chain (m(kk+1)) | C − B ≤ α/2 (m kk) | B − C ≤ α/2 (m kk)].
    fn n_rows(&self) -> usize {
        2 * self.ny + self.m * (self.kk + 1) + 2 * self.m * self.kk
    }
    fn ch_row(&self, a: usize, r: usize) -> usize {
        2 * self.ny + a * (self.kk + 1) + r
    }
    fn u_row(&self, a: usize, l: usize) -> usize {
        2 * self.ny + self.m * (self.kk + 1) + a * self.kk + l
    }
    fn l_row(&self, a: usize, l: usize) -> usize {
        self.u_row(a, l) + self.m * self.kk
    }

    /// Right-hand sides h of `G x ≤ h`.
    fn h(&self) -> Vec<f64> {
        let mut h = vec![0.0; self.n_rows()];
        for a in 0..self.m {
            let ns = self.ns(a);
            for l in 0..self.kk {
                for s in 0..ns {
                    h[self.ny + self.y_off[a] + l * ns + s] = self.seg_p[a][s];
                }
                h[self.u_row(a, l)] = self.half_alpha;
                h[self.l_row(a, l)] = self.half_alpha;
            }
            h[self.ch_row(a, self.kk)] = 1.0;
        }
        h
    }

    /// `G x`. Chain row r of group a: `C_a(r−1) − C_a(r) ≤ 0` (`C_a(−1) = 0`; row kk reads
    /// `C_a(kk−1) ≤ 1`).
    fn g(&self, x: &[f64], out: &mut [f64]) {
        let ny = self.ny;
        for i in 0..ny {
            out[i] = -x[i];
            out[ny + i] = x[i];
        }
        for a in 0..self.m {
            for r in 0..=self.kk {
                let prev = if r >= 1 { x[self.c_idx(a, r - 1)] } else { 0.0 };
                let cur = if r < self.kk {
                    x[self.c_idx(a, r)]
                } else {
                    0.0
                };
                out[self.ch_row(a, r)] = prev - cur;
            }
            for l in 0..self.kk {
                let d = x[self.c_idx(a, l)] - x[self.b_idx(l)];
                out[self.u_row(a, l)] = d;
                out[self.l_row(a, l)] = -d;
            }
        }
    }

    /// `Gᵀ v`.
    fn gt(&self, v: &[f64], out: &mut [f64]) {
        let ny = self.ny;
        for i in 0..ny {
            out[i] = -v[i] + v[ny + i];
        }
        for l in 0..self.kk {
            out[self.b_idx(l)] = 0.0;
        }
        for a in 0..self.m {
            for l in 0..self.kk {
                let band = v[self.u_row(a, l)] - v[self.l_row(a, l)];
                out[self.c_idx(a, l)] = v[self.ch_row(a, l + 1)] - v[self.ch_row(a, l)] + band;
                out[self.b_idx(l)] -= band;
            }
        }
    }

    /// `A x` (rows `Σ_s y_{aℓs} − C_a(ℓ)`), into `out` of length m·kk.
    fn a_mul(&self, x: &[f64], out: &mut [f64]) {
        for a in 0..self.m {
            let ns = self.ns(a);
            for l in 0..self.kk {
                let o = self.y_off[a] + l * ns;
                out[a * self.kk + l] = x[o..o + ns].iter().sum::<f64>() - x[self.c_idx(a, l)];
            }
        }
    }

    /// `out += Aᵀ λ`.
    fn at_add(&self, lam: &[f64], out: &mut [f64]) {
        for a in 0..self.m {
            let ns = self.ns(a);
            for l in 0..self.kk {
                let li = lam[a * self.kk + l];
                let o = self.y_off[a] + l * ns;
                out[o..o + ns].iter_mut().for_each(|v| *v += li);
                out[self.c_idx(a, l)] -= li;
            }
        }
    }
}

/// Symmetric positive definite banded matrix, lower band stored row by row: `band[i·(w+1) + d]`
/// holds entry `(i, i − d)`.
struct Banded {
    n: usize,
    w: usize,
    band: Vec<f64>,
}

impl Banded {
    fn zeros(n: usize, w: usize) -> Self {
        Banded {
            n,
            w,
            band: vec![0.0; n * (w + 1)],
        }
    }
    fn add(&mut self, i: usize, j: usize, v: f64) {
        let (i, j) = if i >= j { (i, j) } else { (j, i) };
        debug_assert!(i - j <= self.w);
        self.band[i * (self.w + 1) + (i - j)] += v;
    }
    fn at(&self, i: usize, j: usize) -> f64 {
        self.band[i * (self.w + 1) + (i - j)]
    }
    /// In-place Cholesky `M = L Lᵀ`; false if a pivot is not positive.
    fn factor(&mut self) -> bool {
        let w = self.w;
        for i in 0..self.n {
            let lo = i.saturating_sub(w);
            for j in lo..=i {
                let mut sum = self.at(i, j);
                for t in lo.max(j.saturating_sub(w))..j {
                    sum -= self.at(i, t) * self.at(j, t);
                }
                let v = if i == j {
                    if sum <= 0.0 || !sum.is_finite() {
                        return false;
                    }
                    sum.sqrt()
                } else {
                    sum / self.at(j, j)
                };
                self.band[i * (w + 1) + (i - j)] = v;
            }
        }
        true
    }
    /// Solve `L Lᵀ x = b` in place.
    fn solve(&self, b: &mut [f64]) {
        let w = self.w;
        for i in 0..self.n {
            let mut s = b[i];
            for t in i.saturating_sub(w)..i {
                s -= self.at(i, t) * b[t];
            }
            b[i] = s / self.at(i, i);
        }
        for i in (0..self.n).rev() {
            let mut s = b[i];
            for t in i + 1..(i + w + 1).min(self.n) {
                s -= self.at(t, i) * b[t];
            }
            b[i] = s / self.at(i, i);
        }
    }
}

/// Largest step in (0, 1] keeping `v + step · dv ≥ 0`.
fn max_step(v: &[f64], dv: &[f64]) -> f64 {
    v.iter()
        .zip(dv)
        .filter(|(_, d)| **d < 0.0)
        .map(|(x, d)| -x / d)
        .fold(1.0, f64::min)
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Solve the CDF-form problem; returns the groups' target CDFs (length k, last entry 1) and the
/// number of interior-point iterations. `tol` bounds the relative residuals and duality gap.
pub fn solve_targets(
    problem: &BarycenterProblem,
    tol: f64,
) -> Result<(Vec<Vec<f64>>, u32), LpError> {
    let (k, m) = (problem.k(), problem.m());
    let kk = k - 1;
    if kk == 0 {
        return Ok((vec![vec![1.0]; m], 0));
    }
    if problem.alpha == 0.0 {
        // The KS band has no interior at α = 0 (no central path); the closed form is exact there.
        let q = super::super::transport::quantile_average(&problem.cdfs(), &problem.weights);
        return Ok((vec![super::super::transport::cdf(&q); m], 0));
    }
    let (mut seg_j, mut seg_p) = (Vec::with_capacity(m), Vec::with_capacity(m));
    for p in &problem.pmfs {
        let nz: Vec<usize> = (0..k).filter(|&j| p[j] > MIN_SEGMENT).collect();
        seg_j.push(nz.iter().map(|&j| j as f64).collect::<Vec<f64>>());
        seg_p.push(nz.iter().map(|&j| p[j]).collect::<Vec<f64>>());
    }
    let mut y_off = Vec::with_capacity(m);
    let mut ny = 0;
    for sj in &seg_j {
        y_off.push(ny);
        ny += kk * sj.len();
    }
    let mut cost = vec![0.0; ny];
    for a in 0..m {
        let ns = seg_j[a].len();
        for l in 0..kk {
            for s in 0..ns {
                cost[y_off[a] + l * ns + s] =
                    problem.weights[a] * (2.0 * seg_j[a][s] - 2.0 * l as f64 - 1.0);
            }
        }
    }
    let cost_scale = inf_norm(&cost).max(f64::MIN_POSITIVE);
    cost.iter_mut().for_each(|c| *c /= cost_scale);
    let lay = Layout {
        m,
        kk,
        seg_j,
        seg_p,
        y_off,
        ny,
        half_alpha: problem.alpha / 2.0,
        cost,
    };
    let (nx, nr, ne) = (lay.nx(), lay.n_rows(), m * kk);
    let h = lay.h();

    // Start: y = t_ℓ · p (strictly inside its box), C = Σ y (strictly increasing), B = mean C.
    let mut x = vec![0.0; nx];
    for a in 0..m {
        let ns = lay.ns(a);
        for l in 0..kk {
            let t = (l + 1) as f64 / (kk + 1) as f64;
            let o = lay.y_off[a] + l * ns;
            let mut c = 0.0;
            for s in 0..ns {
                x[o + s] = t * lay.seg_p[a][s];
                c += x[o + s];
            }
            x[lay.c_idx(a, l)] = c;
            x[lay.b_idx(l)] += c / m as f64;
        }
    }
    let mut gx = vec![0.0; nr];
    lay.g(&x, &mut gx);
    // Every slack is strictly positive at this start except the KS band's when α is (near) 0:
    // those start at 1e-4 (an infeasible start, which the method corrects).
    let band_start = 2 * ny + m * (kk + 1);
    let mut s: Vec<f64> = h.iter().zip(&gx).map(|(h, g)| h - g).collect();
    for (i, si) in s.iter_mut().enumerate() {
        let floor = if i >= band_start { 1e-4 } else { 1e-12 };
        *si = si.max(floor);
    }
    let mut z = vec![1.0; nr];
    let mut lam = vec![0.0; ne];

    // Work arrays.
    let (mut rd, mut rp, mut rg) = (vec![0.0; nx], vec![0.0; ne], vec![0.0; nr]);
    let (mut w, mut v, mut gtv) = (vec![0.0; nr], vec![0.0; nr], vec![0.0; nx]);
    let (mut dx, mut dlam, mut ds, mut dz) =
        (vec![0.0; nx], vec![0.0; ne], vec![0.0; nr], vec![0.0; nr]);
    let mut dyd = vec![0.0; ny];
    let (mut s_sum, mut rc) = (vec![0.0; ne], vec![0.0; nr]);
    let bw = m + 1;
    let nb = kk * (m + 1);
    let cb = |a: usize, l: usize| l * (m + 1) + a;
    let bb = |l: usize| l * (m + 1) + m;

    let c_norm = 1.0 + inf_norm(&lay.cost);
    let h_norm = 1.0 + inf_norm(&h);
    for iter in 0..MAX_ITER {
        // Residuals r_d = c + Aᵀλ + Gᵀz, r_p = A x, r_g = G x + s − h.
        lay.gt(&z, &mut rd);
        for i in 0..ny {
            rd[i] += lay.cost[i];
        }
        lay.at_add(&lam, &mut rd);
        lay.a_mul(&x, &mut rp);
        lay.g(&x, &mut gx);
        for i in 0..nr {
            rg[i] = gx[i] + s[i] - h[i];
        }
        let mu = dot(&s, &z) / nr as f64;
        let pobj = dot(&lay.cost, &x[..ny]);
        let dobj = -dot(&h, &z);
        let pres = inf_norm(&rp).max(inf_norm(&rg)) / h_norm;
        let dres = inf_norm(&rd) / c_norm;
        let gap = (pobj - dobj).abs() / (1.0 + pobj.abs());
        if std::env::var_os("DPFAIR_IPM_TRACE").is_some() {
            eprintln!(
                "{iter:3} pobj {pobj:.12e} dobj {dobj:.12e} pres {pres:.2e} dres {dres:.2e} gap {gap:.2e} mu {mu:.2e}"
            );
        }
        if pres <= tol && dres <= tol && gap <= tol {
            let cdfs = (0..m)
                .map(|a| {
                    let mut c: Vec<f64> = (0..kk).map(|l| x[lay.c_idx(a, l)]).collect();
                    c.push(1.0);
                    c
                })
                .collect();
            if std::env::var_os("DPFAIR_IPM_TRACE").is_some() {
                eprintln!("structured ipm: converged in {iter} iterations");
            }
            return Ok((cdfs, iter));
        }

        // Newton matrix: W = Z S⁻¹; y block diagonal d; reduced banded matrix in (C, B).
        for i in 0..nr {
            w[i] = z[i] / s[i];
        }
        for i in 0..ny {
            dyd[i] = w[i] + w[ny + i];
        }
        let mut mat = Banded::zeros(nb, bw);
        for a in 0..m {
            let ns = lay.ns(a);
            for l in 0..kk {
                let o = lay.y_off[a] + l * ns;
                let inv: f64 = dyd[o..o + ns].iter().map(|d| 1.0 / d).sum();
                s_sum[a * kk + l] = inv;
                let band = w[lay.u_row(a, l)] + w[lay.l_row(a, l)];
                let chain = w[lay.ch_row(a, l)] + w[lay.ch_row(a, l + 1)];
                mat.add(cb(a, l), cb(a, l), band + chain + 1.0 / inv);
                mat.add(bb(l), bb(l), band);
                mat.add(cb(a, l), bb(l), -band);
                if l + 1 < kk {
                    mat.add(cb(a, l), cb(a, l + 1), -w[lay.ch_row(a, l + 1)]);
                }
            }
        }
        if !mat.factor() {
            return Err(LpError::Solver {
                backend: "structured",
                status: format!("Newton matrix not positive definite at iteration {iter}"),
            });
        }

        // Solve the Newton system for a complementarity target r_c (per row).
        let mut newton =
            |rc: &[f64], dx: &mut [f64], dlam: &mut [f64], ds: &mut [f64], dz: &mut [f64]| {
                for i in 0..nr {
                    v[i] = w[i] * rg[i] - rc[i] / s[i];
                }
                lay.gt(&v, &mut gtv);
                // r1 = −r_d − Gᵀv (stored in dx), r2 = −r_p.
                for i in 0..nx {
                    dx[i] = -rd[i] - gtv[i];
                }
                let mut rhs = vec![0.0; nb];
                for a in 0..m {
                    let ns = lay.ns(a);
                    for l in 0..kk {
                        let o = lay.y_off[a] + l * ns;
                        let sigma: f64 = (o..o + ns).map(|i| dx[i] / dyd[i]).sum();
                        let e = a * kk + l;
                        dlam[e] = sigma + rp[e]; // σ − r2, completed below
                        rhs[cb(a, l)] = dx[lay.c_idx(a, l)] + dlam[e] / s_sum[e];
                    }
                }
                for l in 0..kk {
                    rhs[bb(l)] = dx[lay.b_idx(l)];
                }
                mat.solve(&mut rhs);
                for a in 0..m {
                    let ns = lay.ns(a);
                    for l in 0..kk {
                        let e = a * kk + l;
                        let dc = rhs[cb(a, l)];
                        dlam[e] = (dlam[e] - dc) / s_sum[e];
                        let o = lay.y_off[a] + l * ns;
                        for i in o..o + ns {
                            dx[i] = (dx[i] - dlam[e]) / dyd[i];
                        }
                        dx[lay.c_idx(a, l)] = dc;
                    }
                }
                for l in 0..kk {
                    dx[lay.b_idx(l)] = rhs[bb(l)];
                }
                lay.g(dx, ds);
                for i in 0..nr {
                    dz[i] = w[i] * ds[i] + v[i];
                    ds[i] = -rg[i] - ds[i];
                }
            };

        // Predictor (affine scaling).
        for i in 0..nr {
            rc[i] = s[i] * z[i];
        }
        newton(&rc, &mut dx, &mut dlam, &mut ds, &mut dz);
        let ap = max_step(&s, &ds);
        let ad = max_step(&z, &dz);
        let mu_aff = s
            .iter()
            .zip(&ds)
            .zip(z.iter().zip(&dz))
            .map(|((s, ds), (z, dz))| (s + ap * ds) * (z + ad * dz))
            .sum::<f64>()
            / nr as f64;
        let sigma = (mu_aff / mu).clamp(0.0, 1.0).powi(3);
        // Corrector: r_c = s∘z + Δs_aff∘Δz_aff − σμ.
        for i in 0..nr {
            rc[i] = s[i] * z[i] + ds[i] * dz[i] - sigma * mu;
        }
        newton(&rc, &mut dx, &mut dlam, &mut ds, &mut dz);
        let ap = (STEP_FRACTION * max_step(&s, &ds)).min(1.0);
        let ad = (STEP_FRACTION * max_step(&z, &dz)).min(1.0);
        for i in 0..nx {
            x[i] += ap * dx[i];
        }
        for i in 0..nr {
            s[i] += ap * ds[i];
            z[i] += ad * dz[i];
        }
        for e in 0..ne {
            lam[e] += ad * dlam[e];
        }
    }
    Err(LpError::Solver {
        backend: "structured",
        status: format!("no convergence in {MAX_ITER} iterations"),
    })
}
