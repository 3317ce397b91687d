//! Loading raw UCI Adult (`adult.data`, 32,561 rows, 15 columns, no header) with one-hot
//! encoding of its 7 categorical columns and `sex` as the sensitive attribute: the whole path of
//! `dpfair fit --data adult.data ...` up to the `Dataset` (read, detect, parse, drop `?` rows,
//! encode). Target: under 100 ms in release.
//!
//! Run: `DPFAIR_DATA_DIR=/path/to/datasets cargo bench -p dpfair-data --bench load`

use criterion::{Criterion, criterion_group, criterion_main};
use dpfair_data::{LoadOptions, load_csv};
use std::hint::black_box;

fn adult(c: &mut Criterion) {
    let Some(path) = dpfair_data::testdata::path_or_skip("adult.data") else {
        return;
    };
    // Columns by position (the file has no header): 1 workclass, 3 education, 5 marital-status,
    // 6 occupation, 7 relationship, 8 race, 13 native-country; 9 sex; 14 income.
    let options = LoadOptions {
        target: Some("14".into()),
        sensitive: Some("9".into()),
        categorical: ["1", "3", "5", "6", "7", "8", "13"]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    };
    c.bench_function(
        "load adult.data (one-hot, 30,162 of 32,561 rows kept)",
        |b| {
            b.iter(|| {
                let l = load_csv(black_box(&path), &options).unwrap();
                black_box(l.dataset.n_rows())
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = adult
}
criterion_main!(benches);
