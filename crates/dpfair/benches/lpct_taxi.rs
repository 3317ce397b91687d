//! LPCT at Taxi scale (`docs/deviations.md#lpct-taxi-scale`): 3.3 M private rows, 117 k public rows, 93 features,
//! depth up to 16. Times each phase once (a criterion loop over 2.5 GB of data would take
//! minutes per sample): partition on public data, the simulated noisy query (one routing pass
//! plus 2·2^p exact sum-of-Laplace draws), the public counts, and all 17 λ of the paper's grid.
//!
//! Run: `cargo bench -p dpfair --bench lpct_taxi` (release). Peak memory:
//! `/usr/bin/time -v target/release/deps/lpct_taxi-* --bench`. Optional arguments after `--`:
//! `depth=16 splitter=max-edge|cart n_private=3300000`.

use dpfair::lpct::{
    Growth, LeafSums, PartitionConfig, RatioRule, Scaler, Splitter, partition, privatiser,
};
use dpfair_privacy::{Ledger, Noise};
use ndarray::Array2;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::time::Instant;

const D: usize = 93;

/// Uniform features; η depends on features 0, 1 and 7 (a Taxi-like mix of informative and
/// useless columns): η = 0.9 when at least two of x0 > 0.5, x1 > 0.3, x7 > 0.6 hold, else 0.1
/// (Bayes accuracy 0.9).
fn data(n: usize, seed: u64) -> (Array2<f64>, Vec<u8>) {
    let mut x = Array2::<f64>::zeros((n, D));
    let mut y = vec![0u8; n];
    let chunk = 1 << 14;
    x.as_slice_mut()
        .unwrap()
        .par_chunks_mut(chunk * D)
        .zip(y.par_chunks_mut(chunk))
        .enumerate()
        .for_each(|(c, (xs, ys))| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (c as u64).wrapping_mul(0x9E37_79B9));
            for (row, yi) in xs.chunks_mut(D).zip(ys.iter_mut()) {
                for v in row.iter_mut() {
                    *v = rng.random::<f64>();
                }
                let s = (row[0] > 0.5) as i32 + (row[1] > 0.3) as i32 + (row[7] > 0.6) as i32;
                let eta = if s >= 2 { 0.9 } else { 0.1 };
                *yi = u8::from(rng.random::<f64>() < eta);
            }
        });
    (x, y)
}

/// CPU seconds (user + system) of this process so far, from /proc/self/stat (Linux; 0 elsewhere):
/// wall times on a shared machine overstate the work.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the command name.
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let mut depth = 16u32;
    let mut splitter = Splitter::MaxEdge;
    let mut n_private = 3_297_639usize;
    for a in std::env::args().skip(1) {
        if let Some(v) = a.strip_prefix("depth=") {
            depth = v.parse().expect("depth");
        } else if let Some(v) = a.strip_prefix("n_private=") {
            n_private = v.parse().expect("n_private");
        } else if a == "splitter=cart" {
            splitter = Splitter::Cart;
        }
    }
    let n_public = 117_367;
    let t = Instant::now();
    let (xq, yq) = data(n_public, 1);
    let (xp, yp) = data(n_private, 2);
    let gib = ((n_public + n_private) * (D * 8 + 1)) as f64 / (1u64 << 30) as f64;
    eprintln!(
        "data: {n_private} private + {n_public} public rows × {D} features ({gib:.2} GiB) generated in {:.2} s",
        t.elapsed().as_secs_f64()
    );

    let t0 = Instant::now();
    let c0 = cpu_seconds();
    let cfg = PartitionConfig {
        depth,
        splitter,
        growth: if splitter == Splitter::Cart {
            Growth::Practical {
                min_samples_split: 1,
                min_samples_leaf: 1,
            }
        } else {
            Growth::Complete
        },
        ..Default::default()
    };
    let scaler = Scaler::from_public(xq.view()).unwrap();
    let tree = partition::build(&cfg, xq.view(), &yq, scaler).unwrap();
    let t_part = t0.elapsed().as_secs_f64();
    let c_part = cpu_seconds() - c0;

    let t1 = Instant::now();
    let mut ledger = Ledger::unlimited();
    let mut noise = Noise::seeded(3);
    let private = privatiser::simulate_sums(
        &tree,
        xp.view(),
        &yp,
        2.0,
        &mut ledger,
        &mut noise,
        "taxi reports",
    )
    .unwrap();
    let t_query = t1.elapsed().as_secs_f64();
    let c_query = cpu_seconds() - c0 - c_part;

    let t2 = Instant::now();
    let public = tree.leaf_counts(xq.view(), &yq).unwrap();
    let t_public = t2.elapsed().as_secs_f64();

    let t3 = Instant::now();
    let sums = LeafSums { private, public };
    let grid = [
        0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0, 100.0, 200.0, 300.0, 400.0, 500.0, 750.0, 1000.0,
        1250.0, 1500.0, 2000.0,
    ];
    let labels = sums.labels_grid(&grid, RatioRule::Literal);
    let t_grid = t3.elapsed().as_secs_f64();
    let total = t0.elapsed().as_secs_f64();
    let c_total = cpu_seconds() - c0;

    // Accuracy of the grid's models on 100 k fresh rows (sanity, not timed).
    let (xt, yt) = data(100_000, 4);
    let leaves = tree.leaves_of(xt.view()).unwrap();
    let best = labels
        .iter()
        .map(|lab| {
            leaves
                .iter()
                .zip(&yt)
                .filter(|(j, y)| lab[**j as usize] == **y)
                .count() as f64
                / yt.len() as f64
        })
        .fold(0.0, f64::max);
    println!(
        "lpct_taxi {splitter:?} depth {depth} ({} leaves), threads {}: partition {t_part:.3} s, noisy query {t_query:.3} s, public counts {t_public:.3} s, 17 λ {t_grid:.4} s, total {total:.3} s wall; CPU: partition {c_part:.2} s, query {c_query:.2} s, total {c_total:.2} s; best accuracy over the grid {best:.4} (Bayes 0.9)",
        tree.n_leaves(),
        rayon::current_num_threads()
    );
}
