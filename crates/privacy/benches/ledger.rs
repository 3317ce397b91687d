//! Ledger totals over DP-SGD entries accounted with PRV: the cost of asking a ledger for its total
//! (as `summary()`, model saving and every further `charge` do) once its entries are recorded.
//! Run: `cargo bench -p dpfair-privacy --bench ledger`.

use criterion::{Criterion, criterion_group, criterion_main};
use dpfair_privacy::accounting::Accountant;
use dpfair_privacy::{Budget, Composition, Cost, Entry, Ledger, Relation};
use std::hint::black_box;

/// A ledger holding one DP-SGD run (q = 0.01, z = 1.1, T = 1,000, PRV) and one pure release.
fn ledger() -> Ledger {
    let mut l = Ledger::new(Budget::approx(10.0, 1e-5).unwrap());
    let sgm = Entry {
        label: "dp-sgd run".into(),
        mechanism: "dp-sgd".into(),
        relation: Relation::AddRemove,
        sensitivity: 1.0,
        norm: "l2".into(),
        scale: 1.1,
        cost: Cost::SubsampledGaussian {
            sampling_rate: 0.01,
            noise_multiplier: 1.1,
            steps: 1_000,
            accountant: Accountant::Prv,
        },
        composition: Composition::Sequential,
        note: None,
    };
    let pure = Entry {
        label: "count".into(),
        mechanism: "laplace".into(),
        cost: Cost::Pure { epsilon: 0.1 },
        norm: "l1".into(),
        scale: 10.0,
        ..sgm.clone()
    };
    l.charge(sgm).unwrap();
    l.charge(pure).unwrap();
    l
}

fn totals(c: &mut Criterion) {
    let l = ledger();
    let mut g = c.benchmark_group("ledger");
    g.sample_size(10);
    g.bench_function("total, PRV entry, after charging", |b| {
        b.iter(|| black_box(&l).total().unwrap())
    });
    g.bench_function("summary, PRV entry, after charging", |b| {
        b.iter(|| black_box(&l).summary())
    });
    g.finish();
}

criterion_group!(benches, totals);
criterion_main!(benches);
