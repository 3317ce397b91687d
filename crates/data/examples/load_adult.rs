//! Load raw UCI Adult `REPS` times (as the `load` bench does) and print wall-clock and CPU time per
//! load. CPU time (from /proc/self/stat, Linux) is the figure to read on a shared, loaded machine,
//! where wall-clock time includes waiting for a core.
//!
//! Run: `DPFAIR_DATA_DIR=/path/to/datasets cargo run --release -p dpfair-data --example load_adult`

use dpfair_data::{LoadOptions, load_csv};
use std::time::Instant;

const REPS: u32 = 30;

/// User + system CPU seconds of this process so far (Linux; `None` elsewhere).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses): utime is field 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ is 100 on Linux
}

fn main() {
    let Some(path) = dpfair_data::testdata::path_or_skip("adult.data") else {
        std::process::exit(2);
    };
    let options = LoadOptions {
        target: Some("14".into()),
        sensitive: Some("9".into()),
        categorical: ["1", "3", "5", "6", "7", "8", "13"]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    };
    let l = load_csv(&path, &options).expect("adult.data loads");
    println!(
        "{} rows kept of {}, {} features",
        l.dataset.n_rows(),
        l.report.rows_in_file,
        l.dataset.n_features()
    );
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    for _ in 0..REPS {
        let l = load_csv(&path, &options).expect("adult.data loads");
        std::hint::black_box(l.dataset.n_rows());
    }
    let wall = t0.elapsed().as_secs_f64() / REPS as f64;
    println!("wall-clock per load: {:.1} ms", wall * 1e3);
    if let (Some(a), Some(b)) = (cpu0, cpu_seconds()) {
        println!("CPU time per load:   {:.1} ms", (b - a) / REPS as f64 * 1e3);
    }
}
