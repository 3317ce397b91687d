//! Accountant timings: one call for a DP-SGD run of T = 10,000 steps (q = 0.01, z = 1.1,
//! δ = 1e-5, the `docs/reference-values.md#dp2dp` anchor) with each accountant, the analytic Gaussian, and the
//! noise-multiplier search. Run: `cargo bench -p dpfair-privacy --bench accounting`.

use criterion::{Criterion, criterion_group, criterion_main};
use dpfair_privacy::accounting::{
    Accountant, analytic_gaussian_epsilon, analytic_gaussian_sigma, sgm_epsilon,
    sgm_noise_multiplier,
};
use std::hint::black_box;

fn accountants(c: &mut Criterion) {
    let (q, z, t, d) = (0.01, 1.1, 10_000, 1e-5);
    let mut g = c.benchmark_group("sgm_epsilon T=10000");
    g.sample_size(10);
    for (name, acc) in [
        ("rdp", Accountant::Rdp),
        ("prv", Accountant::Prv),
        ("gdp", Accountant::Gdp),
    ] {
        // The PRV accountant memoises evaluations: each iteration asks at a z one ulp-scale step
        // away from the last, so every iteration is a fresh evaluation.
        let mut i = 0u64;
        g.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                let z = z * (1.0 + i as f64 * 1e-12);
                sgm_epsilon(acc, black_box(q), black_box(z), t, d).unwrap()
            })
        });
    }
    g.finish();

    // The PRV noise-multiplier search, for the anchor and for the decoupled classifier's base
    // learner on an Adult group (q = 1/16, T ≈ 1,500, ε = 1): fresh targets each iteration.
    let mut g = c.benchmark_group("sgm_noise_multiplier prv");
    g.sample_size(10);
    for (name, q, t, eps) in [
        ("T=10000 eps=5.632", 0.01, 10_000u64, 5.632),
        ("q=1/16 T=1500 eps=1", 0.0625, 1500, 1.0),
    ] {
        let mut i = 0u64;
        g.bench_function(name, |b| {
            b.iter(|| {
                i += 1;
                let eps = eps * (1.0 + i as f64 * 1e-9);
                sgm_noise_multiplier(Accountant::Prv, black_box(q), t, eps, d).unwrap()
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("sgm_noise_multiplier T=10000 eps=5.632");
    g.sample_size(10);
    for (name, acc) in [("rdp", Accountant::Rdp), ("gdp", Accountant::Gdp)] {
        g.bench_function(name, |b| {
            b.iter(|| sgm_noise_multiplier(acc, black_box(q), t, 5.632, d).unwrap())
        });
    }
    g.finish();

    c.bench_function("analytic_gaussian_epsilon", |b| {
        b.iter(|| analytic_gaussian_epsilon(black_box(1.0), 1e-5).unwrap())
    });
    c.bench_function("analytic_gaussian_sigma", |b| {
        b.iter(|| analytic_gaussian_sigma(1.0, black_box(0.5), 1e-5).unwrap())
    });
}

criterion_group!(benches, accountants);
criterion_main!(benches);
