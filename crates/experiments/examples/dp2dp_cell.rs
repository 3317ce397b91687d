//! One real-data cell of `dpfair reproduce dp2dp` with its internals printed (issue #47: the
//! strict `dp2dp` series on Parkinson's at ε = 0.5 far outside ρ). For each seed it rebuilds the
//! cell exactly as `Dp2dpPaper::run` does (same standardisation, test split, pool split, noise
//! stream and `Config`), checks that its error and Û equal the reproduction's, and prints:
//! the ledger's releases (Phase 1's output-perturbation σ, Phase 2's σ_π and noise multiplier),
//! Phase 1 alone (the unconstrained argmax of p̄: test error and Û), Phase 2's report (π̄, z,
//! σ_SGD on the sum, its per-step noise on the mean σ_SGD/b, the spread of the last iterate's
//! accumulated noise (σ_SGD/b)·√Σ η_t², λ̄) and the rule's test error and Û.
//! Printed, not asserted. `DP2DP_DATASET` (parkinsons; also adult, credit-dp2dp, synthetic: Fig. 1 left at p = 0.75), `DP2DP_EPS` (0.5), `DP2DP_METHOD`
//! (dp2dp), `DP2DP_SEEDS` (6, seeds 400..):
//! `DPFAIR_DATA_DIR=/path/to/datasets cargo run --release -p dpfair-experiments --example dp2dp_cell`.

use dpfair::dp2dp::{self, Iterate, StepScale, TieBreak, rule};
use dpfair_experiments::papers::dp2dp::{Dp2dpPaper, cell_config, cell_data};
use dpfair_experiments::{Cell, Paper, Params, Setting};
use dpfair_fairness::{accuracy, multiclass_unfairness};
use dpfair_privacy::{Budget, Ledger, Noise};

fn env<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    if std::env::var_os("DPFAIR_DATA_DIR").is_none() {
        eprintln!("error: needs DPFAIR_DATA_DIR, the folder holding the data files");
        std::process::exit(2);
    }
    let dataset: String = env("DP2DP_DATASET", "parkinsons".to_string());
    let eps: f64 = env("DP2DP_EPS", 0.5);
    let method: String = env("DP2DP_METHOD", "dp2dp".to_string());
    let seeds: u64 = env("DP2DP_SEEDS", 6);
    // Phase-2 changes to the cell's Config, comma-separated: mixture, average, scaled
    // (StepScale::SmallestGroup), sigma-rule (σ_π by frequency_sigma), margin=<z>, T=<steps>,
    // b=<batch>, eta0=<η₀>. Empty: the cell as the reproduction runs it.
    let variant: String = env("DP2DP_VARIANT", String::new());
    let verbose = std::env::var_os("DP2DP_VERBOSE").is_some();
    let (hi, iterations) = match dataset.as_str() {
        "adult" => (0.2, 100usize),
        "credit-dp2dp" => (0.025, 1000),
        "parkinsons" => (0.08, 1000),
        "synthetic" => (0.2, 100),
        other => {
            eprintln!(
                "error: DP2DP_DATASET must be adult, credit-dp2dp, parkinsons or synthetic, got {other}"
            );
            std::process::exit(2);
        }
    };
    let accounting = if method.starts_with("dp2dp-paper") {
        "paper"
    } else {
        "strict"
    };
    println!(
        "{dataset}, {method} ({accounting}), ε = {eps}, T = {iterations}, variant `{variant}`"
    );
    for rho in [0.0, hi / 2.0, hi] {
        let (mut e_sum, mut u_sum, mut e0_sum, mut u0_sum) = (0.0, 0.0, 0.0, 0.0);
        for seed in 400..400 + seeds {
            let cell = Cell {
                setting: Setting {
                    dataset: dataset.clone(),
                    method: method.clone(),
                    accounting: accounting.into(),
                    epsilon: eps,
                    delta: 1e-5,
                    fairness_level: Some(rho),
                    params: if dataset == "synthetic" {
                        Params::new().with("p", 0.75)
                    } else {
                        Params::new().with("iterations", iterations)
                    },
                },
                repetition: (seed - 400) as usize,
                seed,
            };
            let out = Dp2dpPaper.run(&cell).expect("cell");
            let _ = &out;
            let metric = |m: &str| {
                out.metrics
                    .iter()
                    .find(|(k, _)| k == m)
                    .map(|(_, v)| *v)
                    .expect("metric")
            };
            let (train, test) = cell_data(&cell).expect("data");
            let mut cfg = cell_config(&cell).expect("config");
            for v in variant.split(',').filter(|v| !v.is_empty()) {
                match v.split_once('=') {
                    Some(("T", t)) => cfg.iterations = t.parse().expect("T=<steps>"),
                    Some(("b", b)) => cfg.batch = b.parse().expect("b=<batch>"),
                    Some(("margin", z)) => cfg.margin_z = z.parse().expect("margin=<z>"),
                    Some(("eta0", e)) => cfg.eta0 = e.parse().expect("eta0=<η₀>"),
                    _ => match v {
                        "mixture" => cfg.iterate = Iterate::Mixture,
                        "average" => cfg.iterate = Iterate::Average,
                        "scaled" => cfg.step_scale = StepScale::SmallestGroup,
                        "sigma-rule" => cfg.sigma_pi = None,
                        other => panic!("unknown variant `{other}`"),
                    },
                }
            }
            let mut ledger = if accounting == "paper" {
                Ledger::new(Budget::approx(f64::INFINITY, 1e-5).unwrap())
            } else {
                Ledger::new(Budget::approx(eps, 1e-5).unwrap())
            };
            let model = dp2dp::fit(&cfg, &train, &mut ledger, &mut cell.noise()).expect("fit");
            let signs = dp2dp::signs(&test).unwrap();
            let codes: Vec<u32> = signs.iter().map(|&v| u32::from(v > 0.0)).collect();
            let (truth, k) = dp2dp::labels(&test).unwrap();
            let probs = model.probabilities(test.features.view()).unwrap();
            let mut rng = Noise::seeded(seed ^ 0x5052_4544);
            let pred = model.classify(probs.view(), &signs, &mut rng);
            let err = 1.0 - accuracy(&truth, &pred).unwrap();
            let u = multiclass_unfairness(&pred, k, &codes).unwrap();
            assert!(
                !variant.is_empty()
                    || ((err - metric("error")).abs() < 1e-12
                        && (u - metric("unfairness_u")).abs() < 1e-12),
                "the rebuilt cell differs from the reproduction's"
            );
            let base = rule::predict(
                probs.view(),
                &signs,
                [1.0, 1.0],
                &vec![0.0; 2 * k],
                TieBreak::default(),
                &mut rng,
            );
            let err0 = 1.0 - accuracy(&truth, &base).unwrap();
            let u0 = multiclass_unfairness(&base, k, &codes).unwrap();
            let r = &model.phase2.report;
            let b = cfg.batch as f64;
            let eta2: f64 = (1..=r.steps).map(|t| 1.0 / t as f64).sum();
            if verbose {
                println!(
                    "ρ = {rho} seed {seed}: error {err:.4} Û {u:.4} | Phase 1 alone: error {err0:.4} \
                 Û {u0:.4} | π̄ = [{:.3}, {:.3}] σ_π = {:.4} N = {} q = {:.4} z = {:.3} C_u = {:.3} \
                 σ_SGD = {:.2} (mean: {:.4}/step, last iterate's spread ≈ {:.3}) aimed ρ = {:.4} \
                 λ̄ = {:?}",
                    model.phase2.pi[0],
                    model.phase2.pi[1],
                    r.sigma_pi,
                    r.n_pool,
                    r.sampling_rate,
                    r.noise_multiplier,
                    r.contribution_bound,
                    r.sigma_sgd,
                    r.sigma_sgd / b,
                    r.sigma_sgd / b * eta2.sqrt(),
                    r.aimed_rho.unwrap_or(f64::NAN),
                    model
                        .phase2
                        .lambda
                        .iter()
                        .map(|v| (v * 1000.0).round() / 1000.0)
                        .collect::<Vec<_>>(),
                );
            }
            if verbose && seed == 400 && rho == 0.0 {
                for e in ledger.entries() {
                    println!(
                        "    ledger: {} | {} | sensitivity {:.4} | scale {:.4} | {}",
                        e.label, e.mechanism, e.sensitivity, e.scale, e.cost
                    );
                }
            }
            e_sum += err;
            u_sum += u;
            e0_sum += err0;
            u0_sum += u0;
        }
        let n = seeds as f64;
        println!(
            "ρ = {rho}: mean over {seeds} seeds: error {:.4} Û {:.4} (Phase 1 alone: {:.4} / {:.4})",
            e_sum / n,
            u_sum / n,
            e0_sum / n,
            u0_sum / n
        );
    }
}
