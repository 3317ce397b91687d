//! CPU seconds (user + system, all threads, from /proc/self/stat) and wall seconds per PRV call,
//! for the side-by-side comparison with dp_accounting's PLD accountant (`bench/prv_compare.py`):
//! one ε evaluation (fresh z each repetition; the accountant memoises repeated inputs) and one
//! noise-multiplier search. Prints one JSON line per case.
//!
//! `cargo bench -p dpfair-privacy --bench prv_cpu -- --q 0.01 --z 1.1 --steps 10000 --reps 5`

use dpfair_privacy::accounting::{Accountant, sgm_noise_multiplier, sgm_prv_bounds};
use std::time::Instant;

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let Some(close) = stat.rfind(')') else {
        return f64::NAN;
    };
    let f: Vec<&str> = stat[close + 2..].split_whitespace().collect();
    let ticks = |i: usize| {
        f.get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    // utime and stime (fields 14 and 15), in USER_HZ = 100 ticks per second.
    (ticks(11) + ticks(12)) / 100.0
}

fn arg(args: &[String], name: &str, default: f64) -> f64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

fn timed(label: &str, reps: usize, mut f: impl FnMut(usize) -> f64) {
    let (c0, t0) = (cpu_seconds(), Instant::now());
    let mut last = 0.0;
    for r in 0..reps {
        last = f(r);
    }
    let wall = t0.elapsed().as_secs_f64() / reps as f64;
    let cpu = (cpu_seconds() - c0) / reps as f64;
    println!(
        "{{\"impl\":\"dpfair PRV\",\"call\":\"{label}\",\"reps\":{reps},\"value\":{last},\
         \"wall_s\":{wall:.4},\"cpu_s\":{cpu:.4}}}"
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let q = arg(&args, "--q", 0.01);
    let z = arg(&args, "--z", 1.1);
    let steps = arg(&args, "--steps", 10_000.0) as u64;
    let delta = arg(&args, "--delta", 1e-5);
    let reps = arg(&args, "--reps", 5.0) as usize;
    let target = arg(&args, "--epsilon", f64::NAN);
    timed("epsilon", reps, |r| {
        let z = z * (1.0 + r as f64 * 1e-12);
        sgm_prv_bounds(q, z, steps, delta).expect("bounds").upper
    });
    if target.is_finite() {
        timed("noise multiplier search", reps, |r| {
            let eps = target * (1.0 + r as f64 * 1e-9);
            sgm_noise_multiplier(Accountant::Prv, q, steps, eps, delta).expect("search")
        });
    }
}
