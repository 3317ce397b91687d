//! CDP-Fair (Xue & Yu, Algorithm 5): one strict fit on the synthetic design at N = 9,000, d = 2,
//! ε = 1, α = 0.1 (the authors' R code: 3.1 s for one pass, BENCHMARKS.md "CDP-Fair"), and its
//! parts: the kernel sums of S1, the evaluation of η̃ at the calibration points and the strict S2
//! (utilities on the public τ grid and the exponential mechanism).
//! Run with `cargo bench -p dpfair --bench cdp_fair`.

use criterion::{Criterion, criterion_group, criterion_main};
use dpfair::cdp_fair::{Config, fit};
use dpfair::data::synthetic::{Design, FdpFairDesign};
use dpfair::plugin::RffBasis;
use dpfair::plugin::release::KernelSums;
use dpfair::plugin::threshold::{ScoreSet, crossing_utility, score, tau_grid};
use dpfair::privacy::mechanisms::exponential_mechanism;
use dpfair::privacy::{Budget, Ledger, Noise};
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
    // Strict S2 on 4,500 calibration scores from the noise-free estimate.
    let eta = est.eta_grouped(data.features.view(), a).unwrap();
    let (mut z0, mut z1) = (Vec::new(), Vec::new());
    for (&e, &g) in eta.iter().zip(a).take(4500) {
        let z = score(g as usize, e, est.pi[g as usize]);
        if g == 1 { z1.push(z) } else { z0.push(z) }
    }
    let denom = [z0.len() as f64, z1.len() as f64];
    let scores = ScoreSet::new(z0, z1, denom);
    let grid = tau_grid(est.pi[0].max(est.pi[1]), dpfair::cdp_fair::DEFAULT_TAU_GRID);
    g.bench_function(
        "S2 utilities + exponential mechanism, 2001 candidates",
        |b| {
            let mut seed = 0;
            b.iter(|| {
                seed += 1;
                let u: Vec<f64> = grid
                    .iter()
                    .map(|&t| crossing_utility(&scores, t, 0.1))
                    .collect();
                let mut ledger = Ledger::new(Budget::pure(1.0).unwrap());
                black_box(
                    exponential_mechanism(
                        &mut ledger,
                        &mut Noise::seeded(seed),
                        "S2",
                        &u,
                        2.0 / 1200.0,
                        1.0,
                    )
                    .unwrap(),
                )
            })
        },
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
