//! Exact discrete Gaussian draws at DP-SGD's scale (σ ≈ 2^29 lattice steps, as
//! `SubsampledGaussianRun` uses for clip 1.5, z = 1 and 103 coordinates): the word-at-a-time
//! sampler (`discrete_gaussian_small`, one call per draw) against the bulk sampler over lazily
//! read bits (`discrete_gaussian_fill`, CKS20) and the table sampler (`TableDiscreteGaussian`,
//! built once; its build time is measured apart), per step of 103 draws, on the seeded ChaCha20 source and
//! on the OS source (the one every release uses). Also one holder's Hadamard report
//! (`HadamardResponse::report`, 512 cells: a depth-8 LPCT partition), 1,000 per iteration.
//! Run: `cargo bench -p dpfair-privacy --bench samplers`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpfair_privacy::Noise;
use dpfair_privacy::mechanisms::HadamardResponse;
use dpfair_privacy::samplers::{
    TableDiscreteGaussian, discrete_gaussian_fill, discrete_gaussian_small,
};
use std::hint::black_box;

fn samplers(c: &mut Criterion) {
    let sigma = (1u64 << 29) + 12_345;
    let dim = 103;
    let mut g = c.benchmark_group("discrete_gaussian sigma=2^29 x103");
    g.throughput(Throughput::Elements(dim as u64));
    for (source, make) in [
        ("seeded", (|| Noise::seeded(1)) as fn() -> Noise),
        ("os", Noise::os),
    ] {
        let mut noise = make();
        g.bench_function(format!("word_at_a_time/{source}"), |b| {
            b.iter(|| {
                (0..dim)
                    .map(|_| discrete_gaussian_small(&mut noise, black_box(sigma)).unwrap())
                    .sum::<i128>()
            })
        });
        let mut out = vec![0i128; dim];
        g.bench_function(format!("bulk_lazy_bits/{source}"), |b| {
            b.iter(|| {
                discrete_gaussian_fill(&mut noise, black_box(sigma), &mut out).unwrap();
                out[0]
            })
        });
        let table = TableDiscreteGaussian::new(sigma).unwrap();
        g.bench_function(format!("table/{source}"), |b| {
            b.iter(|| {
                table.fill(&mut noise, &mut out);
                out[0]
            })
        });
    }
    g.finish();
    c.bench_function("table_discrete_gaussian build sigma=2^29", |b| {
        b.iter(|| TableDiscreteGaussian::new(black_box(sigma)).unwrap())
    });
}

fn hadamard_reports(c: &mut Criterion) {
    let mut g = c.benchmark_group("hadamard report 512 cells x1000");
    g.throughput(Throughput::Elements(1000));
    for eps in [1.0, 4.0] {
        let hr = HadamardResponse::new(512, eps).unwrap();
        let mut noise = Noise::os();
        g.bench_function(format!("os/eps={eps}"), |b| {
            b.iter(|| {
                (0..1000usize)
                    .map(|i| hr.report(&mut noise, black_box(i % 512)).unwrap().0)
                    .sum::<u32>()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, samplers, hadamard_reports);
criterion_main!(benches);
