//! Per-epoch DP-SGD throughput (examples/s, wall clock) for logistic regression on Adult-shaped
//! data (22,610 × 102, clipping 1.5, noise multiplier 1, expected batch 256 and 1,024), exact
//! Poisson sampling and exact noise from the privacy crate included. CPU time and the numpy
//! comparison: `benches/dpsgd_throughput.rs` and `bench/dpsgd_compare.sh`.
//!
//! `cargo bench -p dpfair-learn --bench dpsgd`

mod common;

use common::adult_shaped;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpfair_learn::{DpSgdConfig, fit_dp_sgd};
use dpfair_privacy::{Budget, Ledger, Noise};

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
