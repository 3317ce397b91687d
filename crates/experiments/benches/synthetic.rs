//! Throughput of the synthetic designs (rows per second), and of one 10^7-row draw.
//! Run: `cargo bench -p dpfair-experiments --bench synthetic`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dpfair_data::synthetic::{
    Design, FdpFairDesign, GaussianMixtureDesign, LawLikeDesign, LpctDesign, TwoGroupLogisticDesign,
};
use std::hint::black_box;

fn designs(c: &mut Criterion) {
    let all: Vec<Box<dyn Design>> = vec![
        Box::new(FdpFairDesign::default()),
        Box::new(LawLikeDesign::default()),
        Box::new(LpctDesign::default()),
        Box::new(TwoGroupLogisticDesign::default()),
        Box::new(GaussianMixtureDesign::default()),
    ];
    let mut g = c.benchmark_group("synthetic_1e6_rows");
    g.sample_size(10);
    g.throughput(Throughput::Elements(1_000_000));
    for d in &all {
        g.bench_function(d.name(), |b| {
            b.iter(|| black_box(d.generate(1_000_000, 1).unwrap()))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("synthetic_1e7_rows");
    g.sample_size(10);
    g.throughput(Throughput::Elements(10_000_000));
    let d = FdpFairDesign::default();
    g.bench_function("fdp-fair", |b| {
        b.iter(|| black_box(d.generate(10_000_000, 1).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, designs);
criterion_main!(benches);
