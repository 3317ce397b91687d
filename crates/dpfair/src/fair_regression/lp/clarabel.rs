//! The barycenter LP in its sparse form (Xian et al., Algorithm 1, line 14), solved as a general LP by
//! Clarabel (pure-Rust interior point; `docs/deviations.md#fair-regression-lp-solver-choice`). The reference back end: slow (`m·k²` coupling
//! variables) but with no structure assumed beyond the formulation.
//!
//! Variables: `π_a(j,ℓ) ≥ 0` (rows j with `p_a(j) > 0` only: the others are forced to 0),
//! `C_a(ℓ)` free (CDF of `q_a`), `B(ℓ)` free (CDF of the centre `q`).
//! Rows: `Σ_ℓ π_a(j,ℓ) = p_a(j)`; `C_a(ℓ) − C_a(ℓ−1) − Σ_j π_a(j,ℓ) = 0`;
//! `−α/2 ≤ C_a(ℓ) − B(ℓ) ≤ α/2`; `B(ℓ) − B(ℓ−1) ≥ 0` (`B(−1) = C_a(−1) = 0`).

use super::{BarycenterProblem, LpError};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus, ZeroConeT,
};

/// Solve for the groups' target CDFs `C_a` (length k, last entry 1) and the iteration count.
pub fn solve_targets(
    problem: &BarycenterProblem,
    tol: f64,
) -> Result<(Vec<Vec<f64>>, u32), LpError> {
    let (k, m) = (problem.k(), problem.m());
    let half = problem.alpha / 2.0;
    // Column layout.
    let rows_of: Vec<Vec<usize>> = problem
        .pmfs
        .iter()
        .map(|p| (0..k).filter(|&j| p[j] > 0.0).collect())
        .collect();
    let mut pi_start = Vec::with_capacity(m);
    let mut n = 0;
    for r in &rows_of {
        pi_start.push(n);
        n += r.len() * k;
    }
    let c_start = n;
    let b_start = c_start + m * k;
    let n = b_start + k;
    let c_idx = |a: usize, l: usize| c_start + a * k + l;
    let b_idx = |l: usize| b_start + l;

    let (mut ri, mut ci, mut vals, mut rhs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut row = 0;
    let mut push = |r: usize, c: usize, v: f64| {
        ri.push(r);
        ci.push(c);
        vals.push(v);
    };
    // Zero cone: row marginals, then column marginals linked to C_a.
    for (a, rows) in rows_of.iter().enumerate() {
        for (t, &j) in rows.iter().enumerate() {
            for l in 0..k {
                push(row, pi_start[a] + t * k + l, 1.0);
            }
            rhs.push(problem.pmfs[a][j]);
            row += 1;
        }
    }
    for (a, rows) in rows_of.iter().enumerate() {
        for l in 0..k {
            push(row, c_idx(a, l), 1.0);
            if l > 0 {
                push(row, c_idx(a, l - 1), -1.0);
            }
            for t in 0..rows.len() {
                push(row, pi_start[a] + t * k + l, -1.0);
            }
            rhs.push(0.0);
            row += 1;
        }
    }
    let n_zero = row;
    // Nonnegative cone (A x ≤ b): π ≥ 0, the KS band, B nondecreasing.
    for col in 0..c_start {
        push(row, col, -1.0);
        rhs.push(0.0);
        row += 1;
    }
    for a in 0..m {
        for l in 0..k {
            push(row, c_idx(a, l), 1.0);
            push(row, b_idx(l), -1.0);
            rhs.push(half);
            row += 1;
            push(row, c_idx(a, l), -1.0);
            push(row, b_idx(l), 1.0);
            rhs.push(half);
            row += 1;
        }
    }
    for l in 0..k {
        push(row, b_idx(l), -1.0);
        if l > 0 {
            push(row, b_idx(l - 1), 1.0);
        }
        rhs.push(0.0);
        row += 1;
    }
    let n_rows = row;
    let a_mat = CscMatrix::new_from_triplets(n_rows, n, ri, ci, vals);
    let p_mat = CscMatrix::<f64>::zeros((n, n));
    let mut cost = vec![0.0; n];
    for (a, rows) in rows_of.iter().enumerate() {
        for (t, &j) in rows.iter().enumerate() {
            for l in 0..k {
                let d = j as f64 - l as f64;
                cost[pi_start[a] + t * k + l] = problem.weights[a] * d * d;
            }
        }
    }
    let cones = [ZeroConeT(n_zero), NonnegativeConeT(n_rows - n_zero)];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(tol)
        .tol_gap_rel(tol)
        .tol_feas(tol)
        .max_iter(200)
        .build()
        .map_err(|e| LpError::Solver {
            backend: "clarabel",
            status: format!("settings: {e:?}"),
        })?;
    let mut solver =
        DefaultSolver::new(&p_mat, &cost, &a_mat, &rhs, &cones, settings).map_err(|e| {
            LpError::Solver {
                backend: "clarabel",
                status: format!("setup: {e:?}"),
            }
        })?;
    solver.solve();
    let sol = &solver.solution;
    if !matches!(
        sol.status,
        SolverStatus::Solved | SolverStatus::AlmostSolved
    ) {
        return Err(LpError::Solver {
            backend: "clarabel",
            status: format!("{:?}", sol.status),
        });
    }
    // Targets from the couplings' column sums (the C_a variables agree up to tolerance).
    let cdfs = rows_of
        .iter()
        .enumerate()
        .map(|(a, rows)| {
            let mut acc = 0.0;
            (0..k)
                .map(|l| {
                    acc += (0..rows.len())
                        .map(|t| sol.x[pi_start[a] + t * k + l].max(0.0))
                        .sum::<f64>();
                    acc
                })
                .collect::<Vec<f64>>()
        })
        .map(|c| {
            let total = c[k - 1];
            c.iter().map(|x| x / total).collect()
        })
        .collect();
    Ok((cdfs, sol.iterations))
}
