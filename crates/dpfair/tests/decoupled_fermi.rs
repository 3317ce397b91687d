//! DP-FERMI, the baseline of Ghoukasian & Asoodeh (Lowy et al. 2023): its ledger in both modes and the trade-off
//! the comparison relies on (the SP gap falls as λ grows).

use dpfair::decoupled::{Accounting, accuracy_and_gap};
use dpfair::dp_fermi::{FermiConfig, fit};
use dpfair_data::synthetic::{Design, TwoGroupLogisticDesign};
use dpfair_data::{Dataset, Target};
use dpfair_privacy::{Ledger, Noise};

fn data(n: usize, seed: u64) -> (Dataset, Vec<u32>, Vec<u8>) {
    let d = TwoGroupLogisticDesign::default().generate(n, seed).unwrap();
    let g = d.groups.as_ref().unwrap().codes.clone();
    let y = match d.target.as_ref().unwrap() {
        Target::Binary(y) => y.clone(),
        _ => unreachable!(),
    };
    (d, g, y)
}

fn small(lambda: f64, accounting: Accounting, epsilon: f64) -> FermiConfig {
    FermiConfig {
        lambda,
        epsilon,
        batch: 256,
        epochs: 10,
        accounting,
        ..FermiConfig::default()
    }
}

#[test]
fn strict_mode_is_calibrated_to_the_claimed_budget() {
    // Per-example clipping, full batches, Laplace count, σ from the zCDP conversion
    // ε = ρ + 2√(ρ ln 1/δ): the ledger's (tighter) RDP conversion must land at or below ε' and,
    // the RDP conversion gains at most ≈ 20 % here, not far below (≥ 0.7 ε').
    let (d, g, y) = data(3000, 1);
    for epsilon in [1.0, 3.0] {
        let mut ledger = Ledger::unlimited();
        let c = small(1.0, Accounting::Strict, epsilon);
        fit(
            &c,
            d.features.view(),
            &g,
            &y,
            &mut ledger,
            &mut Noise::seeded(2),
        )
        .unwrap();
        let total = ledger.total_at(1e-5).unwrap().epsilon;
        assert!(
            total <= epsilon * (1.0 + 1e-9),
            "ε' {epsilon}: ledger {total}"
        );
        assert!(total >= 0.7 * epsilon, "ε' {epsilon}: ledger {total}");
        assert!(
            ledger
                .entries()
                .iter()
                .all(|e| !e.mechanism.contains("non-private"))
        );
        // 3000 rows, B = 256: 11 full batches per epoch, θ and W each step, plus the count.
        assert_eq!(ledger.entries().len(), 10 * 11 * 2 + 1);
    }
}

#[test]
fn paper_mode_records_what_mini_batch_clipping_really_costs() {
    // The code rescales the mean gradient to norm ≤ L_θ = 5: one row can move it by 2·L_θ,
    // so each θ step is a Gaussian of sensitivity 10 at σ_θ (≈ 2 for Adult), far from ε'.
    let (d, g, y) = data(3000, 3);
    let mut ledger = Ledger::unlimited();
    let c = small(1.0, Accounting::Paper, 3.0);
    let m = fit(
        &c,
        d.features.view(),
        &g,
        &y,
        &mut ledger,
        &mut Noise::seeded(4),
    )
    .unwrap();
    let e = ledger.entries();
    assert_eq!(
        e.iter()
            .filter(|e| e.mechanism.contains("non-private"))
            .count(),
        2
    );
    let theta: Vec<_> = e.iter().filter(|e| e.label.contains("θ step")).collect();
    // 3000 rows, B = 256: 12 batches per epoch (the last partial), as the code.
    assert_eq!(theta.len(), 10 * 12);
    assert!(theta.iter().all(|e| e.sensitivity >= 10.0));
    let total = ledger.total_at(1e-5).unwrap().epsilon;
    assert!(total > 3.0, "{total}");
    assert_eq!(m.steps, 120);
    assert_eq!(m.claimed_epsilon, 3.0);
}

#[test]
fn sp_gap_falls_as_lambda_grows() {
    // Group 1 has the higher positive rate (intercepts −1.5 / −0.5 and a shifted first
    // feature); ψ reads group 1's column (the default), the configuration behind the paper's
    // curves. Little noise (ε' = 100) and 50 epochs; the gap is measured on 20,000 fresh rows
    // (standard error ≈ 0.007), and λ = 2.5 must close at least half of the λ = 0 gap.
    let (d, g, y) = data(4000, 5);
    let (t, tg, ty) = data(20_000, 6);
    let gap = |lambda: f64| {
        let c = FermiConfig {
            lambda,
            epsilon: 100.0,
            batch: 256,
            epochs: 50,
            ..FermiConfig::default()
        };
        let m = fit(
            &c,
            d.features.view(),
            &g,
            &y,
            &mut Ledger::unlimited(),
            &mut Noise::seeded(7),
        )
        .unwrap();
        let p: Vec<f64> = m
            .predict(t.features.view())
            .unwrap()
            .into_iter()
            .map(|b| f64::from(u8::from(b)))
            .collect();
        accuracy_and_gap(&p, &tg, &ty)
    };
    let (acc0, gap0) = gap(0.0);
    let (acc1, gap1) = gap(1.0);
    let (acc2, gap2) = gap(2.5);
    eprintln!("λ = 0: {acc0:.4} {gap0:.4}; 1: {acc1:.4} {gap1:.4}; 2.5: {acc2:.4} {gap2:.4}");
    assert!(gap0 > 0.1, "{gap0}");
    assert!(gap1 < gap0 && gap2 < gap1, "{gap0} {gap1} {gap2}");
    assert!(gap2 <= 0.5 * gap0, "{gap2} vs {gap0}");
}

#[test]
fn bad_input_is_named() {
    let (d, g, y) = data(500, 8);
    let err = |c: &FermiConfig, g: &[u32]| {
        fit(
            c,
            d.features.view(),
            g,
            &y,
            &mut Ledger::unlimited(),
            &mut Noise::seeded(1),
        )
        .unwrap_err()
        .to_string()
    };
    let c = FermiConfig {
        lambda: -1.0,
        ..FermiConfig::default()
    };
    assert!(err(&c, &g).contains("lambda"));
    let one_group = vec![0u32; g.len()];
    assert!(err(&FermiConfig::default(), &one_group).contains("at least 2"));
    let mut three = g.clone();
    three[7] = 2;
    assert!(err(&FermiConfig::default(), &three).contains("row 7"));
}
