//! CART fit time on 10⁶ × 20 synthetic rows (`synth::nonlinear_binary`, 10% label noise),
//! against scikit-learn's DecisionTreeClassifier on the same data (`bench/sklearn_cart.py`).
//! Release-mode timing with its own harness: each configuration is fitted 3 times and the
//! median wall time is reported, with test accuracy on 200,000 fresh rows.
//!
//! `CARGO_TARGET_DIR=… cargo bench -p dpfair-learn --bench cart` (set `CART_DUMP=DIR` to also
//! write the data as raw little-endian arrays for the Python script; `CART_ROWS` to change n,
//! `CART_FITS` the number of fits per configuration).

use dpfair_learn::synth::nonlinear_binary;
use dpfair_learn::{Criterion, TreeConfig, fit_tree};
use std::io::Write;
use std::time::Instant;

fn dump(dir: &str, name: &str, bytes: impl Iterator<Item = [u8; 8]>) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(format!("{dir}/{name}")).unwrap());
    for b in bytes {
        f.write_all(&b).unwrap();
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench` probes harness-less benches with --list
    }
    let n: usize = std::env::var("CART_ROWS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let (x, y) = nonlinear_binary(n, 20, 0.1, 0, 11);
    let (xt, yt) = nonlinear_binary(200_000, 20, 0.1, 0, 12);
    if let Ok(dir) = std::env::var("CART_DUMP") {
        std::fs::create_dir_all(&dir).unwrap();
        dump(&dir, "x_train.f64", x.iter().map(|v| v.to_le_bytes()));
        dump(
            &dir,
            "y_train.f64",
            y.iter().map(|&v| f64::from(v).to_le_bytes()),
        );
        dump(&dir, "x_test.f64", xt.iter().map(|v| v.to_le_bytes()));
        dump(
            &dir,
            "y_test.f64",
            yt.iter().map(|&v| f64::from(v).to_le_bytes()),
        );
    }
    let fits: usize = std::env::var("CART_FITS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    println!(
        "CART fit, {n} × 20 rows (median of {fits} fits; {} rayon threads)",
        rayon::current_num_threads()
    );
    for (criterion, max_depth) in [
        (Criterion::Gini, Some(8)),
        (Criterion::Gini, Some(16)),
        (Criterion::Gini, None),
    ] {
        let cfg = TreeConfig {
            criterion,
            max_depth,
            ..Default::default()
        };
        let mut times = Vec::new();
        let mut tree = None;
        for _ in 0..fits {
            let t0 = Instant::now();
            tree = Some(fit_tree(&cfg, x.view(), &y, 2).unwrap());
            times.push(t0.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let tree = tree.unwrap();
        let pred = tree.predict(xt.view()).unwrap();
        let acc = pred.iter().zip(&yt).filter(|(a, b)| a == b).count() as f64 / yt.len() as f64;
        println!(
            "{criterion:?} max_depth {max_depth:?}: {:.3} s (min {:.3}), test accuracy {acc:.4}, depth {}, leaves {}",
            times[times.len() / 2],
            times[0],
            tree.depth(),
            tree.n_leaves()
        );
    }
}
