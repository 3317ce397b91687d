//! DP-SGD throughput in examples per second of wall clock *and* per CPU-second (user + system
//! time of all threads, from /proc/self/stat), for logistic regression on Adult-shaped data:
//! clipping 1.5, noise multiplier 1, exact Poisson sampling, exact discrete Gaussian noise, the
//! ledger charge included. Prints one JSON line per repetition; `bench/dpsgd_compare.sh` runs it
//! side by side with the numpy implementation.
//!
//! `cargo bench -p dpfair-learn --bench dpsgd_throughput -- --n 22610 --batch 256 --epochs 20 --reps 5`
//! (`--threads 1`: everything on one thread; `--seeded`: seeded noise instead of the OS's;
//! `--classes K`: the softmax path, the label extended to K classes by the first numeric
//! column's bucket; `--hidden H`: the one-hidden-layer MLP with H ReLU units).

mod common;

use common::adult_shaped;
use dpfair_learn::dpsgd::Threads;
use dpfair_learn::{Architecture, DpSgdConfig, fit_dp_sgd};
use dpfair_privacy::{Budget, Ledger, Noise};
use std::time::Instant;

/// CPU seconds used by this process so far (all threads), or `None` off Linux.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // The kernel reports USER_HZ ticks, 100 per second on Linux.
    Some(ticks / 100.0)
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a whole number"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = arg(&args, "--n", 22_610);
    let batch = arg(&args, "--batch", 256);
    let epochs = arg(&args, "--epochs", 20);
    let reps = arg(&args, "--reps", 5);
    let seeded = args.iter().any(|a| a == "--seeded");
    let threads = match arg(&args, "--threads", 0) {
        0 => Threads::Auto,
        1 => Threads::One,
        _ => Threads::Producers,
    };
    let classes = arg(&args, "--classes", 2).max(2);
    let hidden = arg(&args, "--hidden", 0);
    let (x, mut y) = adult_shaped(n, 1);
    if classes > 2 {
        // Class k − 1 or k by the binary label, k the bucket of the first (standardised)
        // numeric column: every class occurs.
        for (yi, row) in y.iter_mut().zip(x.rows()) {
            let bucket =
                ((row[0] + 3.0) / 6.0 * (classes - 1) as f64).clamp(0.0, (classes - 2) as f64);
            *yi += bucket as u32;
        }
    }
    let architecture = match hidden {
        0 => Architecture::Logistic,
        hidden => Architecture::Mlp { hidden },
    };
    let cfg = DpSgdConfig {
        architecture,
        noise_multiplier: Some(1.0),
        epochs,
        expected_batch: batch,
        clip: 1.5,
        learning_rate: 0.01,
        threads,
        ..Default::default()
    };
    for rep in 0..reps {
        let mut noise = if seeded {
            Noise::seeded(rep as u64)
        } else {
            Noise::os()
        };
        let mut ledger = Ledger::new(Budget::approx(f64::INFINITY, 1e-5).expect("budget"));
        let (cpu0, t0) = (cpu_seconds(), Instant::now());
        let fit = fit_dp_sgd(&cfg, x.view(), &y, classes, &mut ledger, &mut noise).expect("fit");
        let wall = t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
        let examples = (n * epochs) as f64;
        let pred = fit.model.predict(x.view()).expect("predict");
        let acc = pred.iter().zip(&y).filter(|(a, b)| a == b).count() as f64 / n as f64;
        println!(
            "{{\"impl\":\"dpfair\",\"threads\":\"{threads:?}\",\"classes\":{classes},\"hidden\":{hidden},\"n\":{n},\"batch\":{batch},\"epochs\":{epochs},\"rep\":{rep},\
             \"wall_s\":{wall:.4},\"cpu_s\":{},\"examples_per_s\":{:.0},\
             \"examples_per_cpu_s\":{},\"train_accuracy\":{acc:.4}}}",
            cpu.map_or("null".into(), |c| format!("{c:.2}")),
            examples / wall,
            cpu.filter(|&c| c > 0.0)
                .map_or("null".into(), |c| format!("{:.0}", examples / c)),
        );
    }
}
