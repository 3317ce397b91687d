//! The non-private Denis et al. (2024) baseline: the minimiser over λ ≥ 0 of
//! the non-smooth empirical dual Ĥ_0(λ) = Σ_s Ê_s[max_k ℓ^s_k] + ρ Σ λ (the β → 0 limit of eq. 4), reached by
//! deterministic full-batch projected accelerated gradient (FISTA) on Ĥ_β with
//! a β continuation 1e-2 → 1e-5, warm-started at each stage. Ĥ_β's gradient is (4/β)-Lipschitz
//! in ℓ2 (the Hessian of LSE_β is ≤ I/β and ‖J_s‖² = 2, summed over the two groups), so the step
//! is β/4. This is also the oracle for "non-private DP2DP ≈ Denis et al." and the in-sample KKT
//! check (unfairness ≤ ρ + (K−1)/N_min, the KKT argument).

use super::dual::Pool;

/// Iterations per β stage and the β schedule. Default: β = 1e-2 → 1e-5 (four stages) with 500
/// FISTA iterations each, 2,000 in all: on three
/// synthetic pools (N = 2,000, K = 6, ρ ∈ {0, 0.05, 0.1}) 1,500 per stage reached the same
/// Ĥ_β to 1e-6 and the same in-sample unfairness to 1e-3 (all within the KKT bound
/// ρ + (K − 1)/N_min) at three times the cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub betas: Vec<f64>,
    pub iterations: usize,
    /// Upper bound of the box (f64::INFINITY: Denis et al.'s λ ≥ 0).
    pub upper: f64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            betas: vec![1e-2, 1e-3, 1e-4, 1e-5],
            iterations: 500,
            upper: f64::INFINITY,
        }
    }
}

/// λ (2K values) minimising Ĥ_β at the last β of `schedule`, from λ = 0.
pub fn solve(pool: &Pool<'_>, rho: f64, schedule: &Schedule) -> Vec<f64> {
    let dim = 2 * pool.k();
    let mut x = vec![0.0; dim];
    let mut grad = vec![0.0; dim];
    for &beta in &schedule.betas {
        let step = beta / 4.0;
        let mut y = x.clone();
        let mut t = 1.0f64;
        for _ in 0..schedule.iterations {
            pool.objective(&y, beta, rho, &mut grad);
            let next: Vec<f64> = y
                .iter()
                .zip(&grad)
                .map(|(v, g)| (v - step * g).clamp(0.0, schedule.upper))
                .collect();
            let t_next = 0.5 * (1.0 + (1.0 + 4.0 * t * t).sqrt());
            let mom = (t - 1.0) / t_next;
            for i in 0..dim {
                y[i] = (next[i] + mom * (next[i] - x[i])).clamp(0.0, schedule.upper);
            }
            x = next;
            t = t_next;
        }
    }
    x
}
