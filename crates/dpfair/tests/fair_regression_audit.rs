//! Empirical privacy audits of Algorithm 1 (Xian et al., Section 3.4) with the privacy crate's
//! auditor on neighbouring data sets that differ in one substituted record. A correct ε-DP release
//! reports ε_lower > ε with probability ≤ α = 0.01 (Clopper–Pearson, see `dpfair_privacy::audit`);
//! the seeds are fixed, so each run is deterministic. A deliberately broken release (twice the
//! claimed ε) checks that the audit has the power to catch a violation.

use dpfair::fair_regression::histogram::{Grid, private_joint_histogram};
use dpfair::fair_regression::{Config, GroupSource, fit_scores};
use dpfair::privacy::audit::audit;
use dpfair::privacy::error::invalid;
use dpfair::privacy::{Ledger, Noise, Result};

const ALPHA: f64 = 0.01;

/// Two neighbouring data sets of 20 rows: in input 1, record 0 moves from (group 0, bin 0) to
/// (group 1, bin 3).
fn neighbours(input: usize) -> (Vec<f64>, Vec<u32>) {
    let mut y: Vec<f64> = (0..20).map(|i| ((i * 7) % 20) as f64 / 20.0).collect();
    let mut g: Vec<u32> = (0..20).map(|i| (i % 2) as u32).collect();
    y[0] = 0.1;
    g[0] = 0;
    if input == 1 {
        y[0] = 0.9;
        g[0] = 1;
    }
    (y, g)
}

/// The released count difference of the two cells the record moves between: the projection
/// whose privacy loss is largest (the record moves one unit out of one and into the other).
fn histogram_projection(input: usize, epsilon: f64, noise: &mut Noise) -> Result<f64> {
    let (y, g) = neighbours(input);
    let grid = Grid::new(0.0, 1.0, 4).unwrap();
    let h = private_joint_histogram(&y, &g, 2, &grid, epsilon, &mut Ledger::unlimited(), noise)
        .map_err(|e| invalid("histogram", e.to_string()))?;
    Ok((h.h[0] - h.h[4 + 3]) * h.n as f64)
}

#[test]
fn histogram_release_passes_and_a_doubled_epsilon_is_caught() {
    const TRIALS: usize = 20_000;
    let r = audit(&mut Noise::seeded(1), TRIALS, 0.0, ALPHA, |i, n| {
        histogram_projection(i, 1.0, n)
    })
    .unwrap();
    assert!(r.epsilon_lower <= 1.0, "{r:?}");
    assert!(
        r.epsilon_lower > 0.5,
        "the audit should be informative: {r:?}"
    );
    // Noise for ε = 2 while claiming 1: the true loss of this projection is about 2.
    let r = audit(&mut Noise::seeded(2), TRIALS, 0.0, ALPHA, |i, n| {
        histogram_projection(i, 2.0, n)
    })
    .unwrap();
    assert!(r.epsilon_lower > 1.0, "violation not caught: {r:?}");
}

/// The whole post-processor (ε = 1, k = 4, α = 0.1): the released model's expected output for a
/// query in group 1, bin 3, `Σ_ℓ G_1(3, ℓ) v_ℓ` (a deterministic function of the model, hence of
/// the histogram). Post-processing cannot increase ε, so the bound must stay ≤ 1.
#[test]
fn post_processor_output_passes() {
    const TRIALS: usize = 4_000;
    let config = Config {
        alpha: 0.1,
        epsilon: 1.0,
        bins: 4,
        range: Some([0.0, 1.0]),
        ..Config::default()
    };
    let r = audit(&mut Noise::seeded(3), TRIALS, 0.0, ALPHA, |i, n| {
        let (y, g) = neighbours(i);
        let names = vec!["a".to_string(), "b".to_string()];
        let m = fit_scores(
            &config,
            &y,
            &g,
            names,
            GroupSource::Declared,
            &mut Ledger::unlimited(),
            n,
        )
        .map_err(|e| invalid("fit", e.to_string()))?;
        Ok(m.transports[1].rows[3]
            .iter()
            .map(|&(l, p)| p * m.grid.midpoint(l as usize))
            .sum())
    })
    .unwrap();
    assert!(r.epsilon_lower <= 1.0, "{r:?}");
}
