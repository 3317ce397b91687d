//! The one-run auditor (Steinke, Nasr & Jagielski 2023) on simulated canaries with an exactly
//! known privacy level: canary i's score is N(μ·Sᵢ, 1) with Sᵢ ∈ {0, 1} its fair coin, i.e. each
//! coin is released through a Gaussian mechanism with shift μ, which is exactly μ-GDP (Dong, Roth
//! & Su 2022), hence (ε(δ), δ)-DP with ε(δ) from the analytic Gaussian profile.
//!
//! Claim ε = 3 at δ = 1e-5 is the ε of μ-GDP with μ ≈ 0.72 (computed below). The correct
//! mechanism must give a bound ≤ 3; the planted bug (noise × 0.3: μ/0.3) must give one > 3.
//! Power (from `expected_lower_bound_gaussian`, counts at their expectations, m = 1000,
//! confidence 0.95, Bonferroni over 4 guess counts): 0.93 for the correct mechanism and 3.53
//! for the bug (asserted: > 3.5 = claim + 0.5). Measured (seeds 11, 12): 1.10 and 3.11.

use dpfair_privacy::Noise;
use dpfair_privacy::accounting::gdp::epsilon_of_mu;
use dpfair_privacy::audit::one_run::{
    audit_scores, epsilon_lower_bound, expected_lower_bound_gaussian, inclusion_coins, p_value,
};
use rand_core::Rng;

const M: usize = 1000;
const DELTA: f64 = 1e-5;
const CONFIDENCE: f64 = 0.95;
const CLAIM: f64 = 3.0;

/// μ with ε(δ) = `epsilon` for μ-GDP (bisection; ε(δ) increases with μ).
fn mu_for(epsilon: f64) -> f64 {
    let (mut lo, mut hi) = (1e-3, 10.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if epsilon_of_mu(mid, DELTA) < epsilon {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Standard normal draw from two uniforms (Box–Muller): simulation only.
fn normal(noise: &mut Noise) -> f64 {
    let u1 = ((noise.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let u2 = (noise.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn simulate(mu: f64, seed: u64) -> (Vec<f64>, Vec<bool>) {
    let mut noise = Noise::seeded(seed);
    let coins = inclusion_coins(M, &mut noise);
    let scores = coins
        .iter()
        .map(|&c| if c { mu } else { 0.0 } + normal(&mut noise))
        .collect();
    (scores, coins)
}

#[test]
fn correct_gaussian_canaries_pass_and_a_third_of_the_noise_is_caught() {
    let mu = mu_for(CLAIM);
    assert!((epsilon_of_mu(mu, DELTA) - CLAIM).abs() < 1e-6);
    let power_honest = expected_lower_bound_gaussian(mu, M, DELTA, CONFIDENCE, None).unwrap();
    let power_bug = expected_lower_bound_gaussian(mu / 0.3, M, DELTA, CONFIDENCE, None).unwrap();
    eprintln!("μ = {mu:.3}: expected ε_lower {power_honest:.3} (correct), {power_bug:.3} (bug)");
    assert!(power_honest <= CLAIM && power_bug > CLAIM + 0.5, "no power");

    let (scores, coins) = simulate(mu, 11);
    let honest = audit_scores(&scores, &coins, DELTA, CONFIDENCE, None).unwrap();
    assert!(honest.epsilon_lower <= CLAIM, "{honest:?}");
    let (scores, coins) = simulate(mu / 0.3, 12);
    let bug = audit_scores(&scores, &coins, DELTA, CONFIDENCE, None).unwrap();
    assert!(bug.epsilon_lower > CLAIM, "not caught: {bug:?}");
    eprintln!(
        "ε_lower: correct {:.3}, bug {:.3}",
        honest.epsilon_lower, bug.epsilon_lower
    );
}

/// The bound's level: over 200 simulated audits of a mechanism exactly at its claim, the rate of
/// ε_lower > claim must be ≤ 1 − confidence = 5%; 200 runs at a true rate of 5% exceed 10 in
/// 2.3% of cases (binomial tail), 20 (our threshold) essentially never.
#[test]
fn false_alarms_are_rare_at_the_claim() {
    let mu = mu_for(CLAIM);
    let alarms = (0..200)
        .filter(|&s| {
            let (scores, coins) = simulate(mu, 1000 + s);
            audit_scores(&scores, &coins, DELTA, CONFIDENCE, None)
                .unwrap()
                .epsilon_lower
                > CLAIM
        })
        .count();
    assert!(alarms <= 20, "{alarms} of 200");
}

#[test]
fn bound_is_monotone_in_correct_guesses_and_bad_inputs_are_errors() {
    let a = epsilon_lower_bound(M, 100, 80, DELTA, 0.05).unwrap();
    let b = epsilon_lower_bound(M, 100, 95, DELTA, 0.05).unwrap();
    assert!(0.0 < a && a < b, "{a} {b}");
    // At the bound, the p-value equals the level (bisection to 1e-6 in ε).
    let p = p_value(M, 100, 95, b, DELTA).unwrap();
    assert!((p - 0.05).abs() < 1e-4, "{p}");
    assert_eq!(epsilon_lower_bound(M, 100, 50, DELTA, 0.05).unwrap(), 0.0);
    assert!(audit_scores(&[1.0, f64::NAN], &[true, false], DELTA, 0.95, None).is_err());
    assert!(audit_scores(&[1.0, 2.0], &[true], DELTA, 0.95, None).is_err());
    assert!(audit_scores(&[1.0, 2.0], &[true, false], DELTA, 0.95, Some(&[2])).is_err());
}
