//! FDP-Fair (Xue & Yu, Algorithm 1): one strict fit with S = 6 sites of N_s = 2,000 rows each on
//! the synthetic design (d = 2, ε_s = 1, α = 0.1, D = 1024 frequencies), both rounds at every site
//! and both server steps, in one process (target: < 2 s on 2 cores).
//! Run with `cargo bench -p dpfair --bench fdp_fair`.

use criterion::{Criterion, criterion_group, criterion_main};
use dpfair::data::synthetic::{Design, FdpFairDesign};
use dpfair::fdp_fair::Config;
use dpfair::fdp_fair::simulate::fit;
use dpfair::privacy::Noise;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let sites: Vec<_> = (0..6)
        .map(|s| FdpFairDesign::default().generate(2000, 10 + s).unwrap())
        .collect();
    let config = Config::default();
    let mut g = c.benchmark_group("fdp_fair");
    g.sample_size(10);
    g.bench_function("fit S=6 N_s=2000 d=2 D=1024", |b| {
        let mut seed = 0;
        b.iter(|| {
            seed += 6;
            let mut noises: Vec<Noise> = (0..6).map(|s| Noise::seeded(seed + s)).collect();
            black_box(fit(&config, &sites, &mut noises).unwrap())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
