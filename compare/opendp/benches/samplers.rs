//! Throughput of the exact discrete Laplace and discrete Gaussian samplers at scales 1, 100 and
//! 10^4, beside OpenDP's samplers for the same laws in the same run.
//!
//! Run: `cd compare/opendp && cargo bench --bench samplers`. Ours draws from a
//! seeded ChaCha20 `Noise` (and, for the Gaussian at 10^4, from `Noise::os()`); OpenDP (built
//! without `use-openssl`) from rand 0.7's `thread_rng`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dashu::integer::{IBig, UBig};
use dashu::rational::RBig;
use dpfair_privacy::Noise;
use dpfair_privacy::samplers::{discrete_gaussian_small, discrete_laplace_small};
use opendp::traits::samplers::{sample_discrete_gaussian, sample_discrete_laplace};
use std::hint::black_box;

const SCALES: [u64; 3] = [1, 100, 10_000];

fn rbig(x: u64) -> RBig {
    RBig::from_parts(IBig::from(x), UBig::ONE)
}

fn laplace(c: &mut Criterion) {
    let mut g = c.benchmark_group("discrete_laplace");
    g.throughput(Throughput::Elements(1));
    for scale in SCALES {
        let mut noise = Noise::seeded(1);
        g.bench_function(format!("dpfair/{scale}"), |b| {
            b.iter(|| discrete_laplace_small(&mut noise, black_box(scale), 1).unwrap())
        });
        g.bench_function(format!("opendp/{scale}"), |b| {
            b.iter(|| sample_discrete_laplace(black_box(rbig(scale))).unwrap())
        });
    }
    g.finish();
}

fn gaussian(c: &mut Criterion) {
    let mut g = c.benchmark_group("discrete_gaussian");
    g.throughput(Throughput::Elements(1));
    for scale in SCALES {
        let mut noise = Noise::seeded(1);
        g.bench_function(format!("dpfair/{scale}"), |b| {
            b.iter(|| discrete_gaussian_small(&mut noise, black_box(scale)).unwrap())
        });
        g.bench_function(format!("opendp/{scale}"), |b| {
            b.iter(|| sample_discrete_gaussian(black_box(rbig(scale))).unwrap())
        });
    }
    // The DP-SGD case: σ ≈ 2^24 lattice steps (z ≈ 1, d ≈ 100), from the OS source.
    let mut os = Noise::os();
    g.bench_function("dpfair-os/16777216", |b| {
        b.iter(|| discrete_gaussian_small(&mut os, black_box(1 << 24)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, laplace, gaussian);
criterion_main!(benches);
