//! The Xian et al. barycenter LP on the Law School instance (k = 180, m = 4; bench/fair_regression_law_k180.json),
//! the instance HiGHS is timed on by bench/fair_regression_highs.py. Run both back to back with
//! `bench/fair_regression_lp_compare.sh`, or this alone with
//! `CARGO_TARGET_DIR=... cargo bench -p dpfair --bench fair_regression_lp`.
//! `DPFAIR_BENCH_CLARABEL=1` adds the general LP through Clarabel (seconds per solve).

use criterion::{Criterion, criterion_group, criterion_main};
use dpfair::fair_regression::lp::{Backend, BarycenterProblem, SolveOptions, solve, solve_path};
use std::hint::black_box;

fn instance() -> (Vec<Vec<f64>>, Vec<f64>) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/fair_regression_law_k180.json"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("instance file")).unwrap();
    let vecs = |x: &serde_json::Value| -> Vec<f64> {
        x.as_array()
            .unwrap()
            .iter()
            .map(|y| y.as_f64().unwrap())
            .collect()
    };
    (
        v["p_tilde"].as_array().unwrap().iter().map(vecs).collect(),
        vecs(&v["w_tilde"]),
    )
}

/// This process's CPU time (user + system) from /proc/self/stat (Linux; clock ticks of 10 ms).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// CPU seconds per call of `f`, over at least 2 CPU seconds: comparable with the HiGHS script's
/// `cpu` column on a loaded machine, where wall times mostly measure the load.
fn cpu_per_call(label: &str, mut f: impl FnMut()) {
    let Some(start) = cpu_seconds() else { return };
    let mut calls = 0u32;
    loop {
        f();
        calls += 1;
        let used = cpu_seconds().unwrap_or(start) - start;
        if used >= 2.0 && calls >= 3 {
            println!(
                "cpu  {label:<32} {:>10.3} ms per solve ({calls} solves)",
                1e3 * used / calls as f64
            );
            return;
        }
    }
}

fn bench(c: &mut Criterion) {
    let (pmfs, weights) = instance();
    // The structured interior point alone (no fast paths), against which the default (fast paths:
    // the α = 0 closed form, the per-level decomposition otherwise) is compared.
    let ipm = SolveOptions {
        backend: Backend::Structured,
        fast_paths: false,
        ..SolveOptions::default()
    };
    {
        let fast = SolveOptions::default();
        for alpha in [0.0, 0.005, 0.05, 0.2] {
            let p = BarycenterProblem::new(pmfs.clone(), weights.clone(), alpha).unwrap();
            cpu_per_call(&format!("default, alpha {alpha}"), || {
                black_box(solve(&p, &fast).unwrap());
            });
            cpu_per_call(&format!("structured IPM, alpha {alpha}"), || {
                black_box(solve(&p, &ipm).unwrap());
            });
        }
        if std::env::var_os("DPFAIR_BENCH_CLARABEL").is_some() {
            let p = BarycenterProblem::new(pmfs.clone(), weights.clone(), 0.05).unwrap();
            let general = SolveOptions {
                backend: Backend::Clarabel,
                fast_paths: false,
                ..SolveOptions::default()
            };
            cpu_per_call("clarabel general, alpha 0.05", || {
                black_box(solve(&p, &general).unwrap());
            });
        }
    }
    let problem = |alpha| BarycenterProblem::new(pmfs.clone(), weights.clone(), alpha).unwrap();
    let fast = SolveOptions::default();
    let mut g = c.benchmark_group("fair_regression_law_k180");
    g.sample_size(20);
    for alpha in [0.005, 0.05, 0.2] {
        let p = problem(alpha);
        g.bench_function(format!("levelwise_alpha_{alpha}"), |b| {
            b.iter(|| solve(black_box(&p), &fast).unwrap())
        });
        g.bench_function(format!("structured_ipm_alpha_{alpha}"), |b| {
            b.iter(|| solve(black_box(&p), &ipm).unwrap())
        });
    }
    let p0 = problem(0.0);
    g.bench_function("closed_form_alpha_0", |b| {
        b.iter(|| solve(black_box(&p0), &fast).unwrap())
    });
    let alphas = [0.0, 0.005, 0.05, 0.2, 1.0];
    g.bench_function("path_5_alphas", |b| {
        b.iter(|| solve_path(black_box(&p0), &alphas, &fast).unwrap())
    });
    if std::env::var_os("DPFAIR_BENCH_CLARABEL").is_some() {
        g.sample_size(10);
        let p = problem(0.05);
        let general = SolveOptions {
            backend: Backend::Clarabel,
            fast_paths: false,
            ..SolveOptions::default()
        };
        g.bench_function("clarabel_general_alpha_0.05", |b| {
            b.iter(|| solve(black_box(&p), &general).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
