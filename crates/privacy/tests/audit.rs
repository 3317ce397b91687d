//! The empirical auditor against correct and deliberately broken mechanisms. Every audit uses
//! α = 0.01: a correct mechanism reports ε_lower > ε with probability ≤ 1%, a fixed seed makes
//! each run deterministic, and the broken mechanisms are caught with a margin (expected bounds
//! from `expected_lower_bound` in the comments).

use dpfair_privacy::audit::{audit, expected_lower_bound};
use dpfair_privacy::mechanisms::{
    Gaussian, Laplace, RandomizedResponse, exponential_mechanism, noisy_histogram,
};
use dpfair_privacy::{Ledger, Noise, Result};

const ALPHA: f64 = 0.01;
const TRIALS: usize = 20_000;

fn run_laplace(l: &Laplace, input: usize, noise: &mut Noise) -> Result<f64> {
    l.release(&mut Ledger::unlimited(), noise, "audit", input as f64)
}

#[test]
fn correct_laplace_passes() {
    let l = Laplace::from_epsilon(1.0, 1.0).unwrap();
    let r = audit(&mut Noise::seeded(1), TRIALS, 0.0, ALPHA, |i, n| {
        run_laplace(&l, i, n)
    })
    .unwrap();
    assert!(r.epsilon_lower <= 1.0, "{r:?}");
    // And the bound is informative: the best threshold events have ratio e^1.
    assert!(r.epsilon_lower > 0.7, "{r:?}");
}

#[test]
fn laplace_at_half_its_scale_is_caught() {
    // Claims ε = 1 for Δ = 1 but uses b = 0.5: true ε = 2. Expected ε_lower ≈ 1.85 at
    // n = 10,000 estimation samples (P_a = 1/2, P_b = e^{-2}/2 for E = {y ≤ 0}).
    let expected =
        expected_lower_bound(0.5, 0.5 * (-2.0f64).exp(), TRIALS / 2, 0.0, ALPHA).unwrap();
    assert!(expected > 1.7);
    let l = Laplace::from_scale(1.0, 0.5).unwrap();
    let r = audit(&mut Noise::seeded(2), TRIALS, 0.0, ALPHA, |i, n| {
        run_laplace(&l, i, n)
    })
    .unwrap();
    assert!(r.epsilon_lower > 1.0, "not caught: {r:?}");
}

#[test]
fn gaussian_ignoring_its_sensitivity_is_caught() {
    // Calibrated for Δ = 1 at (ε, δ) = (0.5, 1e-5), run on inputs 10 apart.
    let g = Gaussian::classical(1.0, 0.5, 1e-5).unwrap();
    let r = audit(&mut Noise::seeded(3), TRIALS, 1e-5, ALPHA, |i, n| {
        g.release(&mut Ledger::unlimited(), n, "audit", 10.0 * i as f64)
    })
    .unwrap();
    assert!(r.epsilon_lower > 0.5, "not caught: {r:?}");
    // The same mechanism on inputs 1 apart passes.
    let r = audit(&mut Noise::seeded(4), TRIALS, 1e-5, ALPHA, |i, n| {
        g.release(&mut Ledger::unlimited(), n, "audit", i as f64)
    })
    .unwrap();
    assert!(r.epsilon_lower <= 0.5, "{r:?}");
}

#[test]
fn correct_gaussian_calibrations_pass() {
    // zCDP ρ = 0.5 with Δ = 1 gives σ = 1; (ε, δ) at δ = 1e-5 is below 5 (ρ + 2√(ρ ln(1/δ))).
    let g = Gaussian::from_zcdp(1.0, 0.5).unwrap();
    let r = audit(&mut Noise::seeded(5), TRIALS, 1e-5, ALPHA, |i, n| {
        g.release(&mut Ledger::unlimited(), n, "audit", i as f64)
    })
    .unwrap();
    assert!(
        r.epsilon_lower <= 0.5 + 2.0 * (0.5 * (1e5f64).ln()).sqrt(),
        "{r:?}"
    );
    if let Ok(g) = Gaussian::analytic(1.0, 1.0, 1e-5) {
        let r = audit(&mut Noise::seeded(6), TRIALS, 1e-5, ALPHA, |i, n| {
            g.release(&mut Ledger::unlimited(), n, "audit", i as f64)
        })
        .unwrap();
        assert!(r.epsilon_lower <= 1.0, "{r:?}");
    }
}

#[test]
fn randomized_response_exponential_mechanism_and_histogram_pass() {
    let rr = RandomizedResponse::binary(1.0).unwrap();
    let r = audit(&mut Noise::seeded(7), TRIALS, 0.0, ALPHA, |i, n| {
        Ok(rr.respond(n, i)? as f64)
    })
    .unwrap();
    assert!(r.epsilon_lower <= 1.0, "{r:?}");
    assert!(r.epsilon_lower > 0.8, "RR's bound is tight, yet {r:?}");

    // Neighbouring score vectors (sensitivity 1): candidate 0 gains one point.
    let r = audit(&mut Noise::seeded(8), TRIALS, 0.0, ALPHA, |i, n| {
        let scores = [1.0 + i as f64, 1.0, 0.0];
        Ok(exponential_mechanism(&mut Ledger::unlimited(), n, "audit", &scores, 1.0, 1.0)? as f64)
    })
    .unwrap();
    assert!(r.epsilon_lower <= 1.0, "{r:?}");

    // One record moves from bin 0 to bin 1; audit bin 0's noisy count.
    let r = audit(&mut Noise::seeded(9), TRIALS, 0.0, ALPHA, |i, n| {
        let bins = [0usize, 0, 1, 1 - i];
        Ok(noisy_histogram(&mut Ledger::unlimited(), n, "audit", &bins, 2, 1.0)?[0] as f64)
    })
    .unwrap();
    assert!(r.epsilon_lower <= 1.0, "{r:?}");
}

/// Under add/remove-one neighbours the histogram's sensitivity is 1 and its noise scale 1/ε
/// (`noisy_counts` reads the ledger's relation): one added record in bin 0 is audited at the
/// claimed ε, and the bound is informative (the threshold event's likelihood ratio is e^ε).
#[test]
fn add_remove_histogram_passes_and_is_tight() {
    use dpfair_privacy::{Budget, Relation};
    let r = audit(&mut Noise::seeded(10), TRIALS, 0.0, ALPHA, |i, n| {
        let bins: &[usize] = if i == 0 { &[0, 0, 1] } else { &[0, 0, 1, 0] };
        let mut ledger = Ledger::for_relation(Budget::unlimited(), Relation::AddRemove);
        Ok(noisy_histogram(&mut ledger, n, "audit", bins, 2, 1.0)?[0] as f64)
    })
    .unwrap();
    assert!(r.epsilon_lower <= 1.0, "{r:?}");
    assert!(r.epsilon_lower > 0.7, "{r:?}");
}

#[test]
fn bad_arguments_are_errors() {
    let f = |_: usize, _: &mut Noise| Ok(0.0);
    assert!(audit(&mut Noise::seeded(0), 10, 0.0, ALPHA, f).is_err());
    assert!(audit(&mut Noise::seeded(0), 100, 1.0, ALPHA, f).is_err());
    assert!(audit(&mut Noise::seeded(0), 100, 0.0, 0.0, f).is_err());
    assert!(audit(&mut Noise::seeded(0), 100, 0.0, ALPHA, |_, _| Ok(f64::NAN)).is_err());
}

/// The power table in the `audit` module docs: expected ε_lower at the best threshold event,
/// computed from the exact event probabilities.
#[test]
fn documented_power_table_holds() {
    use statrs::distribution::{ContinuousCDF, Normal};
    // Laplace, Δ = 1, b = 0.5: E = {y ≤ 0}, P_a = 1/2, P_b = e^{-2}/2.
    let (pa, pb) = (0.5, 0.5 * (-2.0f64).exp());
    let l4 = expected_lower_bound(pa, pb, 10_000, 0.0, ALPHA).unwrap();
    let l3 = expected_lower_bound(pa, pb, 1_000, 0.0, ALPHA).unwrap();
    // Gaussian calibrated for Δ = 1 at (0.5, 1e-5), inputs 10 apart: best E = {y ≥ t}.
    let sigma = 2.0 * (2.0 * (1.25e5f64).ln()).sqrt();
    let z = Normal::new(0.0, 1.0).unwrap();
    let g4 = (0..400)
        .map(|i| {
            let t = i as f64 * 0.1;
            let (pa, pb) = (z.sf((t - 10.0) / sigma), z.sf(t / sigma));
            expected_lower_bound(pa, pb, 10_000, 1e-5, ALPHA).unwrap()
        })
        .fold(0.0, f64::max);
    let l_min = expected_lower_bound(pa, pb, 250, 0.0, ALPHA).unwrap();
    println!("laplace n=1e4: {l4:.3}, n=1e3: {l3:.3}, n=250: {l_min:.3}; gaussian n=1e4: {g4:.3}");
    assert!((l4 - 1.88).abs() < 0.01, "{l4}");
    assert!((l3 - 1.62).abs() < 0.01, "{l3}");
    assert!(l_min > 1.0, "{l_min}");
    assert!((g4 - 2.11).abs() < 0.01, "{g4}");
}

/// One run of a small private search: a candidate c ∈ {0, 1} drawn uniformly, scored by its
/// count plus Laplace noise at ε = 1 (the neighbouring inputs differ by one in candidate 0's
/// count); the search releases the best noisy score.
fn best_of_runs(input: usize, runs: usize, always_first: bool, noise: &mut Noise) -> Result<f64> {
    use rand::RngExt;
    let laplace = Laplace::from_epsilon(1.0, 1.0)?;
    let mut best = f64::NEG_INFINITY;
    for _ in 0..runs {
        let c = if always_first {
            0
        } else {
            noise.random_range(0..2usize)
        };
        let count = if c == 0 { input as f64 } else { 0.0 };
        best = best.max(laplace.release(&mut Ledger::unlimited(), noise, "audit", count)?);
    }
    Ok(best)
}

/// Private selection (Liu & Talwar random stopping, mean 5 runs) of ε = 1 runs is audited at
/// its claimed 3ε; the same search with a *fixed* five runs of the better candidate, which basic
/// composition prices at 5ε, is caught claiming 3ε: on 2·10⁴ trials per input its bound reads
/// 3.65 (the event {best ≤ t} has probability ratio up to e⁵ at low t), while the correct
/// search's reads 0.56, at α = 0.01 (both seeded, so each run is deterministic). The audit
/// cannot reach 3ε on the correct search: Liu & Talwar's factor 3 is a worst case that a
/// two-candidate Laplace search does not attain.
#[test]
fn private_selection_passes_at_three_times_a_run_and_a_fixed_run_count_is_caught() {
    use dpfair_privacy::selection::RandomStopping;
    let search = RandomStopping::new(5).unwrap();
    let r = audit(&mut Noise::seeded(21), TRIALS, 0.0, ALPHA, |i, n| {
        let runs = search.draw_runs(n)?;
        best_of_runs(i, runs, false, n)
    })
    .unwrap();
    assert!(r.epsilon_lower <= 3.0, "{r:?}");
    assert!(
        r.epsilon_lower > 0.4,
        "the audit sees the search at all: {r:?}"
    );
    let broken = audit(&mut Noise::seeded(22), TRIALS, 0.0, ALPHA, |i, n| {
        best_of_runs(i, 5, true, n)
    })
    .unwrap();
    assert!(broken.epsilon_lower > 3.0, "{broken:?}");
}
