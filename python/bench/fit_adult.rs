//! The Rust side of the Python-overhead measurement (`bench/overhead.py` runs it): load raw UCI
//! Adult with the CSV loader, then fit one method through the library (`dpfair::pipeline::fit`)
//! `REPS` times in a seeded session, printing the CPU time of each fit (the load is not timed)
//! and the model file's digest, which the Python fit in the same seeded session must reproduce.
//!
//! Run: `DPFAIR_DATA_DIR=../shared/datasets cargo run --release -p dpfair-python --example
//! fit_adult -- dp-logistic 5`

use dpfair::estimators::{CdpFair, DpLogistic};
use dpfair::pipeline::{Scaling, fit};
use dpfair::{Estimator, Params, Session};
use dpfair_data::{Bounds, LoadOptions, Loaded, load_csv};

/// Public bounds of Adult's numeric columns (by position: the file has no header).
pub const ADULT_BOUNDS: &str = "0:17:90,2:0:1500000,4:1:16,10:0:99999,11:0:4356,12:1:99";

/// The noise seed both sides use (an insecure seeded session: identical draws, identical model).
const SEED: u64 = 1;

/// CPU seconds of this process so far: the clock Python's `time.process_time` reads.
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn time_fit<E: Estimator>(est: &E, loaded: &Loaded, epsilon: f64, delta: f64) -> (f64, String) {
    let mut data = loaded.clone();
    let scaling = Scaling::Public(Bounds::parse(ADULT_BOUNDS).expect("bounds"));
    let mut session = Session::insecure_seeded(epsilon, delta, SEED).expect("session");
    let t0 = cpu_seconds();
    let fitted = fit(est, &mut data, &scaling, &mut session).expect("fit");
    let cpu = cpu_seconds() - t0;
    let file = fitted.to_model_file(data.schema).expect("model file");
    (cpu, file.digest)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let method = args.get(1).map_or("dp-logistic", String::as_str);
    let reps: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
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
    let loaded = load_csv(&path, &options).expect("adult.data loads");
    for _ in 0..reps {
        let (cpu, digest) = match method {
            "dp-logistic" => {
                let est = DpLogistic::params().epsilon(1.0).substitution(true).check();
                time_fit(&est.expect("params"), &loaded, 1.0, 1e-5)
            }
            "cdp-fair" => {
                let est = CdpFair::params().epsilon(1.0).delta(1e-5).check();
                time_fit(&est.expect("params"), &loaded, 1.0, 1e-5)
            }
            other => panic!("unknown method {other}"),
        };
        println!("fit_cpu_seconds {cpu:.5} digest {digest}");
    }
}
