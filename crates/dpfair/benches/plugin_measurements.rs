//! Measurements of CDP-Fair and FDP-Fair (Xue & Yu) that print tables rather than assert: how
//! the defaults were chosen, CPU time per fit on a loaded machine (criterion's wall time is
//! inflated by other processes there), and the spread of |DD| in the demo's and the
//! reproduction's settings. The figures in BENCHMARKS.md ("CDP-Fair", "FDP-Fair") come from here.
//!
//! Run one measurement by name (release build; seeded noise, as a simulation):
//!
//! ```text
//! cargo bench -p dpfair --bench plugin_measurements -- NAME
//! ```
//!
//! with NAME one of `cdp-explore`, `cdp-cpu-time`, `cdp-demo-setting`, `cdp-reproduction`,
//! `fdp-cpu-time`, `fdp-demo-setting`, `fdp-reproduction`; without a name it lists them. The
//! reproduction settings read their parameters from the environment (see each function).

use dpfair::data::Dataset;
use dpfair::data::synthetic::{Design, FdpFairDesign};

/// CPU seconds of this process (user + system, from `/proc/self/stat`; 0 where unavailable).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<f64> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0.0))
        .collect();
    // After the command name: utime is field 11, stime field 12 (clock ticks of 1/100 s).
    (fields.get(11).unwrap_or(&0.0) + fields.get(12).unwrap_or(&0.0)) / 100.0
}

/// Mean and standard error of the mean.
fn mean_se(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

/// A parameter from the environment, or its default.
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

mod cdp {
    use super::{big_test, cpu_seconds, env_or, mean_se};
    use dpfair::cdp_fair::{self, Config, fit, fit_fairness_only};
    use dpfair::data::Dataset;
    use dpfair::data::synthetic::{Design, FdpFairDesign};
    use dpfair::plugin::kernel::Bandwidth;
    use dpfair::privacy::{Budget, Ledger, Noise};

    fn synthetic(n: usize, seed: u64) -> Dataset {
        FdpFairDesign::default().generate(n, seed).unwrap()
    }

    /// A ledger that refuses nothing, for reporting what a procedure spends.
    fn open_ledger() -> Ledger {
        Ledger::new(Budget::approx(f64::INFINITY, 0.999).unwrap())
    }

    /// How the defaults (public bandwidth rule, number of frequencies) were chosen: error and |DD| of
    /// CDP-Fair (and the noise-free version) at N = 9,000 over h and D.
    pub fn explore_bandwidth_and_frequencies() {
        let test = synthetic(4000, 999);
        for h in [0.1, 0.15, 0.2, 0.25] {
            for nf in [256usize, 1024, 4096] {
                for eps in [1.0, 4.0, f64::INFINITY] {
                    let (mut dd, mut err) = (0.0, 0.0);
                    let reps = 6;
                    for r in 0..reps {
                        let data = synthetic(9000, 1000 + r);
                        let config = Config {
                            alpha: 0.1,
                            epsilon: if eps.is_finite() { eps } else { 1.0 },
                            bandwidth: Some(Bandwidth::Fixed { h }),
                            n_frequencies: nf,
                            ..Config::default()
                        };
                        let model = if eps.is_finite() {
                            fit(&config, &data, &mut open_ledger(), &mut Noise::seeded(r)).unwrap()
                        } else {
                            fit_fairness_only(
                                &Config {
                                    cross_fit: Some(false),
                                    ..config
                                },
                                &data,
                                &mut open_ledger(),
                                &mut Noise::seeded(r),
                            )
                            .unwrap()
                        };
                        let m = model.expected_metrics(&test).unwrap();
                        dd += m.dd.abs() / reps as f64;
                        err += m.error / reps as f64;
                    }
                    println!("h {h} D {nf} ε {eps}: |DD| {dd:.4} error {err:.4}");
                }
            }
        }
    }

    /// Measurement aid for BENCHMARKS.md on a shared, loaded machine: CPU seconds and wall time per
    /// strict fit at N = 9,000 (criterion's wall time is inflated by other processes there).
    pub fn cpu_time_per_fit_n9000() {
        let data = synthetic(9000, 1);
        for nf in [512usize, 1024] {
            let config = Config {
                n_frequencies: nf,
                ..Config::default()
            };
            let reps = 10;
            let (c0, t0) = (cpu_seconds(), std::time::Instant::now());
            for r in 0..reps {
                let mut ledger = Ledger::new(Budget::approx(1.0, 4500f64.powi(-2)).unwrap());
                fit(&config, &data, &mut ledger, &mut Noise::seeded(r)).unwrap();
            }
            println!(
                "D {nf}: {:.3} CPU s per fit, {:.3} s wall per fit",
                (cpu_seconds() - c0) / reps as f64,
                t0.elapsed().as_secs_f64() / reps as f64
            );
        }
    }

    /// The `dpfair demo` setting (train 6,000 / test 4,000, or 1,500 / 1,000 with `--small`; α = 0.1;
    /// strict defaults) over 20 data seeds: mean and sd of the test |DD| per ε. One demo run is one
    /// draw from these distributions.
    pub fn demo_setting_disparity_over_seeds() {
        use dpfair::data::synthetic::derive_seed;
        for (train_n, test_n) in [(6000usize, 4000usize), (1500, 1000)] {
            for eps in [1.0, 4.0] {
                let reps = 20;
                let dds: Vec<f64> = (0..reps)
                    .map(|seed| {
                        let design = FdpFairDesign::default();
                        let train = design.generate(train_n, 2026 + seed).unwrap();
                        let test = design
                            .generate(test_n, derive_seed(2026 + seed, 1))
                            .unwrap();
                        let config = Config {
                            alpha: 0.1,
                            epsilon: eps,
                            ..Config::default()
                        };
                        let model = fit(
                            &config,
                            &train,
                            &mut open_ledger(),
                            &mut Noise::seeded(seed),
                        )
                        .unwrap();
                        let m = model.expected_metrics(&test).unwrap();
                        if seed == 0 {
                            println!("  seed 0: error {:.4}, |DD| {:.4}", m.error, m.dd.abs());
                        }
                        m.dd.abs()
                    })
                    .collect();
                let mean = dds.iter().sum::<f64>() / reps as f64;
                let sd = (dds.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (reps - 1) as f64)
                    .sqrt();
                println!("train {train_n} test {test_n} ε {eps}: mean |DD| {mean:.4}, sd {sd:.4}");
            }
        }
    }

    /// CDP-Fair (strict) as the reproduction runs it (Fig. 3 / Fig. 5 cells). Settings from the
    /// environment: `N` (5000), `EPS` (1), `ALPHA` (0.1), `REPS` (40), `TEST` (4000).
    pub fn reproduction_setting_over_more_repetitions() {
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
            let model =
                cdp_fair::fit(&config, &data, &mut ledger, &mut Noise::seeded(seed)).unwrap();
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
}

mod fdp {
    use super::{big_test, cpu_seconds, env_or, mean_se};
    use dpfair::data::Dataset;
    use dpfair::data::synthetic::{Design, FdpFairDesign};
    use dpfair::fdp_fair::simulate::{contiguous_sites, fit};
    use dpfair::fdp_fair::{Config, SearchConfig};
    use dpfair::privacy::Noise;

    /// One seeded noise stream per site.
    fn noises(s: usize, seed: u64) -> Vec<Noise> {
        (0..s).map(|k| Noise::seeded(seed + k as u64)).collect()
    }

    /// Measurement aid for BENCHMARKS.md on a shared, loaded machine (criterion's wall time is
    /// inflated by other processes there): CPU and wall seconds per strict fit with S = 6 sites of
    /// N_s = 2,000 (the project's target: < 2 s on 2 cores).
    pub fn cpu_time_per_fit_s6() {
        // 12,000 rows of the design in 6 contiguous sites of 2,000.
        let all = FdpFairDesign::default().generate(12_000, 10).unwrap();
        let data = contiguous_sites(&all, 6).unwrap();
        let reps = 5;
        let (c0, t0) = (cpu_seconds(), std::time::Instant::now());
        for r in 0..reps {
            fit(&Config::default(), &data, &mut noises(6, 100 * r)).unwrap();
        }
        println!(
            "S = 6, N_s = 2000, D = 1024: {:.3} CPU s per fit, {:.3} s wall per fit",
            (cpu_seconds() - c0) / reps as f64,
            t0.elapsed().as_secs_f64() / reps as f64
        );
    }

    /// The `dpfair demo` setting for FDP-Fair (train 6,000 over 3 contiguous sites, test 4,000,
    /// α = 0.1, strict defaults) over 20 data seeds: mean and sd of the test |DD| per ε. One demo
    /// run is one draw from these distributions.
    pub fn demo_setting_disparity_over_seeds() {
        use dpfair::data::synthetic::derive_seed;
        for eps in [1.0, 4.0] {
            let demo = Config {
                epsilon: eps,
                search: SearchConfig {
                    alpha: 0.1,
                    ..SearchConfig::default()
                },
                ..Config::default()
            };
            let (mut dd, mut err) = (Vec::new(), Vec::new());
            for seed in 0..20u64 {
                let design = FdpFairDesign::default();
                let train = design.generate(6000, 2026 + seed).unwrap();
                let test = design.generate(4000, derive_seed(2026 + seed, 1)).unwrap();
                let parts = contiguous_sites(&train, 3).unwrap();
                let fitted = fit(&demo, &parts, &mut noises(3, 2026 + seed)).unwrap();
                let m = fitted.model.expected_metrics(&test).unwrap();
                dd.push(m.dd.abs());
                err.push(m.error);
            }
            let stats = |v: &[f64]| {
                let n = v.len() as f64;
                let mean = v.iter().sum::<f64>() / n;
                let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
                (mean, sd)
            };
            let ((d, ds), (e, es)) = (stats(&dd), stats(&err));
            println!(
                "ε = {eps}: test |DD| {d:.3} ± {ds:.3}, error {e:.3} ± {es:.3} (mean ± sd, 20 seeds)"
            );
        }
    }

    /// FDP-Fair (strict) as the reproduction runs it (Fig. 4 / 8 cells): `S` (3), `NS` (2000),
    /// `EPS` (1), `ALPHA` (0.3), `RHO` (ρ*, 0), `REPS` (30), `TEST` (the cell test size, 2000). Prints the mean population |DD| and
    /// error, ω, and the uncorrected `D̃D` and corrected `D̃D_↓` at `τ̃` (linear interpolation on
    /// the grid).
    pub fn reproduction_setting_over_more_repetitions() {
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
            let search = &fitted.model.federated.search;
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
}

/// The measurements by name.
const MEASUREMENTS: [(&str, fn()); 7] = [
    ("cdp-explore", cdp::explore_bandwidth_and_frequencies),
    ("cdp-cpu-time", cdp::cpu_time_per_fit_n9000),
    ("cdp-demo-setting", cdp::demo_setting_disparity_over_seeds),
    (
        "cdp-reproduction",
        cdp::reproduction_setting_over_more_repetitions,
    ),
    ("fdp-cpu-time", fdp::cpu_time_per_fit_s6),
    ("fdp-demo-setting", fdp::demo_setting_disparity_over_seeds),
    (
        "fdp-reproduction",
        fdp::reproduction_setting_over_more_repetitions,
    ),
];

fn main() {
    // `cargo bench` passes `--bench`; the first other argument names the measurement.
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let mut ran = false;
    for (name, run) in MEASUREMENTS {
        if wanted.iter().any(|w| w == name) {
            println!("== {name}");
            run();
            ran = true;
        }
    }
    if !ran {
        println!("measurements (pass one or more names after `--`):");
        for (name, _) in MEASUREMENTS {
            println!("  {name}");
        }
    }
}
