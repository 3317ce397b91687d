//! Per-epoch DP-SGD throughput (examples/s) for logistic regression on Adult-shaped data
//! (22,610 × 102, clipping 1.5, noise multiplier 1, expected batch 256 and 1,024), exact noise
//! from the privacy crate included. Compare with `bench/opacus_dpsgd.py` (same shape) and the
//! reference figures in /work/shared/bench/README.md.
//!
//! `CARGO_TARGET_DIR=… cargo bench -p dpfair-learn --bench dpsgd`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpfair_learn::{DpSgdConfig, fit_dp_sgd};
use dpfair_privacy::{Budget, Ledger, Noise};
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Adult-shaped design: 6 standardised numeric columns and 8 categorical variables one-hot
/// encoded into 96 columns (12 levels each), labels from a logistic model.
pub fn adult_shaped(n: usize, seed: u64) -> (Array2<f64>, Vec<u32>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut unif = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut x = Array2::zeros((n, 102));
    let mut y = Vec::with_capacity(n);
    for mut row in x.rows_mut() {
        let mut score = -1.0;
        for j in 0..6 {
            // Sum of 3 uniforms, centred and scaled: roughly standard normal.
            let v = (unif() + unif() + unif() - 1.5) * 2.0;
            row[j] = v;
            score += 0.5 * v * if j % 2 == 0 { 1.0 } else { -1.0 };
        }
        for c in 0..8 {
            let level = (unif() * 12.0) as usize;
            row[6 + 12 * c + level] = 1.0;
            score += 0.3 * (level as f64 - 5.5) / 5.5;
        }
        y.push(u32::from(unif() < 1.0 / (1.0 + (-score).exp())));
    }
    (x, y)
}

fn bench(c: &mut Criterion) {
    let n = 22_610;
    let (x, y) = adult_shaped(n, 1);
    let mut group = c.benchmark_group("dpsgd_epoch_adult_shaped");
    // One fit of 10 epochs per iteration (the up-front ledger charge is amortised over them).
    group.throughput(Throughput::Elements(10 * n as u64));
    group.sample_size(10);
    for batch in [256usize, 1024] {
        let cfg = DpSgdConfig {
            noise_multiplier: Some(1.0),
            epochs: 10,
            expected_batch: batch,
            clip: 1.5,
            learning_rate: 0.01,
            ..Default::default()
        };
        let mut noise = Noise::seeded(7);
        group.bench_function(format!("logistic_batch_{batch}"), |b| {
            b.iter(|| {
                let mut ledger = Ledger::new(Budget::approx(f64::INFINITY, 1e-5).unwrap());
                fit_dp_sgd(&cfg, x.view(), &y, 2, &mut ledger, &mut noise).unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
