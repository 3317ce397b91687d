//! CDP-Fair (seed 000, Algorithm 5): one strict fit on the synthetic design at N = 9,000, d = 2,
//! ε = 1, α = 0.1 (the authors' R code: 3.1 s for one pass, shared/bench/README.md), and its
//! parts: the kernel sums of S1 and the evaluation of η̃ at the calibration points.
//! Run with `cargo bench -p dpfair --bench cdp_fair`.

use criterion::{Criterion, criterion_group, criterion_main};
use dpfair::cdp_fair::{Config, fit};
use dpfair::data::synthetic::{Design, FdpFairDesign};
use dpfair::privacy::{Budget, Ledger, Noise};
use dpfair::seed000::RffBasis;
use dpfair::seed000::release::KernelSums;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let data = FdpFairDesign::default().generate(9000, 1).unwrap();
    let config = Config::default();
    let delta = (4500f64).powi(-2);
    let mut g = c.benchmark_group("cdp_fair");
    g.sample_size(20);
    g.bench_function("fit N=9000 d=2 D=1024", |b| {
        let mut seed = 0;
        b.iter(|| {
            seed += 1;
            let mut ledger = Ledger::new(Budget::approx(1.0, delta).unwrap());
            black_box(fit(&config, &data, &mut ledger, &mut Noise::seeded(seed)).unwrap())
        })
    });
    let basis = RffBasis::new(2, 0.12, 1024, 3).unwrap();
    let a = &data.groups.as_ref().unwrap().codes;
    let dpfair::data::Target::Binary(y) = data.target.as_ref().unwrap() else {
        unreachable!()
    };
    g.bench_function("S1 kernel sums n=9000 D=1024", |b| {
        b.iter(|| black_box(KernelSums::compute(&basis, data.features.view(), a, y).unwrap()))
    });
    let est = KernelSums::compute(&basis, data.features.view(), a, y)
        .unwrap()
        .non_private();
    g.bench_function("eta at 9000 points D=1024", |b| {
        b.iter(|| black_box(est.eta_grouped(data.features.view(), a).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
