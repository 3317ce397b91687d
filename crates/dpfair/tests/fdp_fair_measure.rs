//! Measurement aids for the `dpfair reproduce fdp-fair` checks: the reproduction's own
//! settings (seeds `2000 + r` as its grid, data / noise / test seeds as
//! `crates/experiments/src/papers/fdp_fair.rs`) with more repetitions than `--quick`'s three, and
//! the population |DD| on a large independent test set beside the per-repetition test set's.
//! All `#[ignore]`d (release runs of a minute or more); see BENCHMARKS.md, "FDP-Fair (Xue & Yu)".

use dpfair::cdp_fair;
use dpfair::data::Dataset;
use dpfair::data::synthetic::{Design, FdpFairDesign};
use dpfair::fdp_fair::simulate::fit;
use dpfair::fdp_fair::{Config, SearchConfig};
use dpfair::privacy::{Budget, Ledger, Noise};

/// Mean and standard error of the mean.
fn mean_se(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A large test set for the population |DD| of one fitted classifier (sd of the estimate
/// ≈ 0.003 at 100,000 points).
fn big_test() -> Dataset {
    FdpFairDesign::default().generate(100_000, 77).unwrap()
}

/// CDP-Fair (strict) as the reproduction runs it (Fig. 3 / Fig. 5 cells). Settings from the
/// environment: `N` (5000), `EPS` (1), `ALPHA` (0.1), `REPS` (40), `TEST` (4000). Run with
/// `cargo test -p dpfair --release --test fdp_fair_measure cdp -- --ignored --nocapture`.
#[test]
#[ignore]
fn cdp_fair_reproduction_setting_over_more_repetitions() {
    let (n, eps, alpha) = (
        env_or("N", 5000usize),
        env_or("EPS", 1.0),
        env_or("ALPHA", 0.1),
    );
    let (reps, test_n) = (env_or("REPS", 40u64), env_or("TEST", 4000usize));
    let design = FdpFairDesign::default();
    let big = big_test();
    let (mut cell_dd, mut pop_dd) = (Vec::new(), Vec::new());
    for r in 0..reps {
        let seed = 2000 + r;
        let data = design.generate(n, seed).unwrap();
        let test = design.generate(test_n, seed ^ 0x7e57).unwrap();
        let config = cdp_fair::Config {
            alpha,
            epsilon: eps,
            ..cdp_fair::Config::default()
        };
        let mut ledger = Ledger::new(Budget::approx(eps, (n as f64 / 2.0).powi(-2)).unwrap());
        let model = cdp_fair::fit(&config, &data, &mut ledger, &mut Noise::seeded(seed)).unwrap();
        cell_dd.push(model.expected_metrics(&test).unwrap().dd.abs());
        pop_dd.push(model.expected_metrics(&big).unwrap().dd.abs());
    }
    let (c, cse) = mean_se(&cell_dd);
    let (p, pse) = mean_se(&pop_dd);
    println!(
        "CDP-Fair N {n} ε {eps} α {alpha}, {reps} reps: mean |DD| on the cell's test set {c:.4} \
         (SE {cse:.4}); on 100,000 points {p:.4} (SE {pse:.4}); first 3: {:?} (100,000 points: {:?})",
        &cell_dd[..3.min(cell_dd.len())],
        &pop_dd[..3.min(pop_dd.len())]
    );
}

/// FDP-Fair (strict) as the reproduction runs it (Fig. 4 / 8 cells): `S` (3), `NS` (2000),
/// `EPS` (1), `ALPHA` (0.3), `RHO` (ρ*, 0), `REPS` (30), `TEST` (the cell test size, 2000). Prints the mean population |DD| and
/// error, ω, and the uncorrected `D̃D` and corrected `D̃D_↓` at `τ̃` (linear interpolation on
/// the grid). Run with
/// `cargo test -p dpfair --release --test fdp_fair_measure fdp -- --ignored --nocapture`.
#[test]
#[ignore]
fn fdp_fair_reproduction_setting_over_more_repetitions() {
    let (s, ns, eps) = (
        env_or("S", 3usize),
        env_or("NS", 2000usize),
        env_or("EPS", 1.0),
    );
    let (alpha, rho, reps) = (
        env_or("ALPHA", 0.3),
        env_or("RHO", 0.0),
        env_or("REPS", 30u64),
    );
    let design = FdpFairDesign::default();
    let big = big_test();
    let test_n = env_or("TEST", 2000usize);
    let (mut dd, mut err, mut omega, mut raw, mut corr, mut cell_dd) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for r in 0..reps {
        let seed = 2000 + r;
        let data: Vec<Dataset> = (0..s)
            .map(|k| design.generate(ns, seed * 64 + k as u64).unwrap())
            .collect();
        let config = Config {
            epsilon: eps,
            search: SearchConfig {
                alpha,
                rho_star: rho,
                ..SearchConfig::default()
            },
            ..Config::default()
        };
        let mut noises: Vec<Noise> = (0..s)
            .map(|k| Noise::seeded(seed.wrapping_mul(1000) + k as u64))
            .collect();
        let fitted = fit(&config, &data, &mut noises).unwrap();
        let test = design.generate(test_n, seed ^ 0x7e57).unwrap();
        cell_dd.push(fitted.model.expected_metrics(&test).unwrap().dd.abs());
        let m = fitted.model.expected_metrics(&big).unwrap();
        dd.push(m.dd.abs());
        err.push(m.error);
        let search = &fitted.model.federated.as_ref().unwrap().search;
        omega.push(search.omega);
        let at = |curve: &[f64]| {
            let x = (search.tau + 1.0) * (1u64 << (search.depth - 1)) as f64;
            let (i, f) = (x.floor() as usize, x - x.floor());
            let j = (i + 1).min(curve.len() - 1);
            (curve[i] * (1.0 - f) + curve[j] * f).abs()
        };
        raw.push(at(&search.dd));
        corr.push(at(&search.dd_corrected));
    }
    let p = |name: &str, v: &[f64]| {
        let (m, se) = mean_se(v);
        format!("{name} {m:.4} (SE {se:.4})")
    };
    println!(
        "FDP-Fair S {s} N_s {ns} ε {eps} α {alpha} ρ* {rho}, {reps} reps: {}; {}; {}; at τ̃: {}, {}",
        p("population |DD|", &dd),
        p("error", &err),
        p("ω", &omega),
        p("|D̃D|", &raw),
        p("|D̃D_↓|", &corr)
    );
    println!(
        "{}; first |DD| on 100,000 points {:?}, on the cell's test set {:?}",
        p("mean |DD| on the cell's test sets", &cell_dd),
        &dd[..3.min(dd.len())],
        &cell_dd[..3.min(dd.len())]
    );
}
