//! PHIST and CT-Q on Diabetes (Table 2), the measurement behind
//! docs/deviations.md#lpct-phist-at-large-epsilon and #lpct-ct-q: the majority-class rate of the
//! test splits, PHIST's accuracy per number of bins per axis at ε = 2 and 1000, and CT-Q's
//! (CART on the 200 public rows) per depth, on the reproduction's splits (80/20 of the private
//! rows by seed). Printed, not asserted. `DPFAIR_DATA_DIR=/path/to/datasets cargo run --release -p dpfair-experiments --example lpct_table2_baselines`.

use dpfair::lpct::baselines::{PhistConfig, fit_phist};
use dpfair_data::split::Stratify;
use dpfair_data::{Dataset, Target};
use dpfair_learn::tree::{TreeConfig, fit_tree};
use dpfair_privacy::{Ledger, Noise};

fn labels(d: &Dataset) -> &[u8] {
    match &d.target {
        Some(Target::Binary(y)) => y,
        _ => panic!("binary labels"),
    }
}

fn accuracy(pred: &[u8], d: &Dataset) -> f64 {
    let y = labels(d);
    pred.iter().zip(y).filter(|(p, y)| p == y).count() as f64 / y.len() as f64
}

/// The runner's CART depth grid (Table 2's real-data p grid).
const DEPTHS: [usize; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16];

fn main() {
    if std::env::var_os("DPFAIR_DATA_DIR").is_none() {
        eprintln!("error: needs DPFAIR_DATA_DIR, the folder holding the data files");
        std::process::exit(2);
    }
    let reps = 10u64;
    let b = dpfair_experiments::load_builtin("diabetes-lpct").expect("diabetes");
    let public = b.public.clone().expect("public rows");
    let (mut majority, mut phist, mut ctq) = (0.0, vec![[0.0; 2]; 6], vec![0.0; DEPTHS.len()]);
    for seed in 0..reps {
        let mut parts = b.dataset.split(&[0.8, 0.2], seed, Stratify::None).unwrap();
        let test = parts.pop().unwrap();
        let train = parts.pop().unwrap();
        let ones = labels(&test).iter().filter(|&&y| y == 1).count() as f64;
        let n = labels(&test).len() as f64;
        majority += ones.max(n - ones) / n;
        for bins in 1..=6u32 {
            for (k, eps) in [2.0, 1000.0].into_iter().enumerate() {
                let cfg = PhistConfig {
                    epsilon: eps,
                    bins,
                    ..PhistConfig::default()
                };
                let c = fit_phist(
                    &cfg,
                    Some(&public),
                    &train,
                    &mut Ledger::unlimited(),
                    &mut Noise::seeded(seed),
                )
                .unwrap();
                let pred = c.predict(test.features.view()).unwrap();
                phist[bins as usize - 1][k] += accuracy(&pred, &test);
            }
        }
        let y: Vec<u32> = labels(&public).iter().map(|&v| u32::from(v)).collect();
        for (i, &depth) in DEPTHS.iter().enumerate() {
            let cfg = TreeConfig {
                max_depth: Some(depth),
                ..TreeConfig::default()
            };
            let m = fit_tree(&cfg, public.features.view(), &y, 2).unwrap();
            let pred: Vec<u8> = m
                .predict(test.features.view())
                .unwrap()
                .into_iter()
                .map(|c| c as u8)
                .collect();
            ctq[i] += accuracy(&pred, &test);
        }
    }
    let r = reps as f64;
    println!(
        "majority-class rate of the test splits: {:.4}",
        majority / r
    );
    for (i, a) in phist.iter().enumerate() {
        println!(
            "PHIST bins {}: ε = 2 {:.4}, ε = 1000 {:.4}",
            i + 1,
            a[0] / r,
            a[1] / r
        );
    }
    for (d, a) in DEPTHS.iter().zip(&ctq) {
        println!("CT-Q depth {d}: {:.4}", a / r);
    }
}
