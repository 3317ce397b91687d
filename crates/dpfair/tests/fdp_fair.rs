//! FDP-Fair (Algorithm 1 of Xue & Yu): the simulation on the synthetic design, the
//! protocol transcripts (JSON round trip gives the same model; the server refuses inconsistent
//! input), the per-site accounting, and an audit of one noisy tree (Algorithm 3).

use dpfair::cdp_fair::Method;
use dpfair::data::Dataset;
use dpfair::data::synthetic::{Design, FdpFairDesign};
use dpfair::fdp_fair::protocol::{
    Round1, Round2, aggregate_round1, aggregate_round2, site_ledger, site_round1, site_round2,
};
use dpfair::fdp_fair::simulate::{fit, rounds, site_name};
use dpfair::fdp_fair::tree::{TreeNoise, release_trees};
use dpfair::fdp_fair::{Config, SearchConfig, ServerParams};
use dpfair::privacy::audit::audit;
use dpfair::privacy::{Budget, Ledger, Noise};

fn sites(s: usize, n: usize, seed: u64) -> Vec<Dataset> {
    (0..s)
        .map(|k| {
            FdpFairDesign::default()
                .generate(n, seed + k as u64)
                .unwrap()
        })
        .collect()
}

fn noises(s: usize, seed: u64) -> Vec<Noise> {
    (0..s).map(|k| Noise::seeded(seed + k as u64)).collect()
}

fn config(epsilon: f64, alpha: f64) -> Config {
    Config {
        epsilon,
        n_frequencies: 256,
        search: SearchConfig {
            alpha,
            ..SearchConfig::default()
        },
        ..Config::default()
    }
}

/// S = 4 sites of N_s = 2,000 at ε_s = 4 (§5.1.2 scale): the selected point satisfies the band,
/// the test disparity is within α + ρ* + ω + 3 standard errors, the error near the oracle's, and every site spent at most (ε_s, δ_s).
#[test]
fn simulation_on_the_synthetic_design_is_fair_and_within_budget() {
    let (s, n, eps, alpha) = (4, 2000, 4.0, 0.1);
    let data = sites(s, n, 11);
    let fitted = fit(&config(eps, alpha), &data, &mut noises(s, 100)).unwrap();
    let model = &fitted.model;
    assert_eq!(model.method, Method::FdpFair);
    let info = &model.federated;
    assert_eq!(info.search.depth, 6, "code rule: M = 6 at S·N_s = 8,000");
    // The synthetic design has DD(0) ≈ −0.56, so τ̃ < 0 (Xue & Yu, §5.1).
    assert!(model.folds[0].rule.tau < 0.0, "{:?}", info.search);
    let test = FdpFairDesign::default().generate(20_000, 999).unwrap();
    let m = model.expected_metrics(&test).unwrap();
    // 20,000 test rows, ≈6,000 in group 1: the SE of a difference of two group means of values in
    // [0,1] is ≤ sqrt(0.25/6000 + 0.25/14000) ≈ 0.0077; 3 SE ≈ 0.023.
    assert!(
        m.dd.abs() <= alpha + 0.03 + info.search.omega + 0.023,
        "test |DD| = {} (α = {alpha}, ρ* = 0.03, ω = {})",
        m.dd.abs(),
        info.search.omega
    );
    // Fair-Bayes risk at α = 0.1 is 0.197 (`docs/reference-values.md#fdp-fair`); the estimation error of a kernel plug-in at
    // 8,000 rows and ε = 4 stays well below 0.05 (measured 0.211).
    assert!(m.error < 0.197 + 0.05, "error {}", m.error);
    // FDP guarantee: the worst site's (ε_s, δ_s).
    let total = fitted.ledger.total().unwrap();
    assert!(
        total.epsilon <= eps * (1.0 + 1e-9),
        "{}",
        fitted.ledger.summary()
    );
    for site in &info.sites {
        assert!((site.mu - 0.25).abs() < 1e-12 && (site.nu - 0.25).abs() < 1e-12);
    }
}

fn json<T: serde::Serialize + serde::de::DeserializeOwned>(v: &T) -> T {
    serde_json::from_str(&serde_json::to_string(v).unwrap()).unwrap()
}

/// The protocol steps with every transcript serialised and read back, each site restarting from
/// its seed in round 2, give the simulation's model bit for bit.
#[test]
fn transcripts_round_trip_to_the_simulated_model() {
    let (s, n) = (3, 600);
    let data = sites(s, n, 21);
    let cfg = config(2.0, 0.15);
    let simulated = fit(&cfg, &data, &mut noises(s, 7)).unwrap();
    let cfg = Config {
        bandwidth: Some(simulated.model.bandwidth),
        ..cfg
    };
    let mut r1: Vec<Round1> = Vec::new();
    for (k, site) in data.iter().enumerate() {
        let p = cfg.site_params(&site_name(k), site).unwrap();
        let mut ledger = site_ledger(p.epsilon, p.delta, p.accounting).unwrap();
        let mut noise = Noise::seeded(7 + k as u64);
        r1.push(json(
            &site_round1(&p, site, None, &mut ledger, &mut noise).unwrap(),
        ));
    }
    let global = json(&aggregate_round1(&r1, &ServerParams::default()).unwrap());
    let mut r2: Vec<Round2> = Vec::new();
    for (k, site) in data.iter().enumerate() {
        let p = cfg.site_params(&site_name(k), site).unwrap();
        let mut ledger = site_ledger(p.epsilon, p.delta, p.accounting).unwrap();
        let mut noise = Noise::seeded(7 + k as u64);
        dpfair::fdp_fair::protocol::skip_round1(&mut noise);
        r2.push(json(
            &site_round2(&global, &p.site, site, &mut ledger, &mut noise).unwrap(),
        ));
    }
    let (model, ledger) = aggregate_round2(&global, &r2, &cfg.search).unwrap();
    assert_eq!(model, simulated.model);
    assert_eq!(ledger, simulated.ledger);

    // The server refuses inconsistent input, naming what is wrong.
    fn err<T: std::fmt::Debug>(r: Result<T, dpfair::plugin::Error>) -> String {
        r.expect_err("refused").to_string()
    }
    let mut dup = r2.clone();
    dup.push(r2[0].clone());
    assert!(err(aggregate_round2(&global, &dup, &cfg.search)).contains("more than one"));
    assert!(err(aggregate_round2(&global, &r2[..2], &cfg.search)).contains("site3"));
    let mut tampered = global.clone();
    tampered.depth = 5;
    assert!(err(aggregate_round2(&tampered, &r2, &cfg.search)).contains("fingerprint"));
    let mut wrong = r2.clone();
    wrong[1].trees.groups[0].levels[2].pop();
    assert!(err(aggregate_round2(&global, &wrong, &cfg.search)).contains("level 3"));
    let mut other = r1.clone();
    if let dpfair::plugin::EtaEstimate::Kernel(k) = &mut other[2].release.eta {
        k.basis = dpfair::plugin::RffBasis::new(2, 0.3, 256, 1).unwrap();
    }
    assert!(err(aggregate_round1(&other, &ServerParams::default())).contains("basis"));
    let mut version = r1.clone();
    version[0].version = 99;
    assert!(err(aggregate_round1(&version, &ServerParams::default())).contains("version"));
}

/// Audit of Algorithm 3's release on neighbouring calibration sets: one record moves from the
/// lowest leaf of group 1 to the highest leaf of group 0, which changes 2M node counts by 1 (M on
/// each tree), the worst case of the ℓ2-sensitivity √(2M). Projection: the sum of the nodes on
/// the moved record's old path minus those on its new path, i.e. the likelihood-ratio direction,
/// so the one-dimensional audit sees the release's whole privacy loss (mean shift 2M, sd σ√(2M)).
///
/// Validity: for a correct (ε, δ) mechanism the auditor's `epsilon_lower` exceeds ε with
/// probability ≤ 0.01 (its confidence level), for both calibrations: the paper's σ (zCDP, ε' ≤ ε)
/// and the strict analytic Gaussian (exactly (ε, δ)). Power: a tree released with the noise of
/// ε = 8 but claimed at ε = 1 (σ 2.8× too small at M = 4, δ = 1e−5) must be caught with 6,000
/// trials per input; measured `epsilon_lower` = 2.65 for it (seed 5); the correct releases give
/// 0.0 (paper σ) and 0.15 (analytic).
#[test]
fn one_noisy_tree_passes_the_audit_and_an_under_noised_one_fails() {
    const M: usize = 4;
    const DELTA: f64 = 1e-5;
    let base0: Vec<f64> = (0..30).map(|i| -0.5 + i as f64 / 100.0).collect();
    let base1: Vec<f64> = (0..30).map(|i| -0.3 + i as f64 / 80.0).collect();
    let mut z_a = [base0.clone(), base1.clone()];
    z_a[1].push(-0.999);
    let mut z_b = [base0, base1];
    z_b[0].push(0.999);
    let inputs = [z_a, z_b];
    let project = |t: &dpfair::fdp_fair::tree::SiteTrees| -> f64 {
        (1..=M)
            .map(|l| t.groups[1].levels[l - 1][0] - t.groups[0].levels[l - 1][(1 << l) - 1])
            .sum()
    };
    let run = |release_eps: f64, calibration: TreeNoise| {
        audit(&mut Noise::seeded(5), 6_000, DELTA, 0.01, |input, noise| {
            let mut ledger = Ledger::new(Budget::approx(f64::INFINITY, DELTA).unwrap());
            let t = release_trees(
                &inputs[input],
                M,
                release_eps,
                DELTA,
                calibration,
                "",
                &mut ledger,
                noise,
            )
            .unwrap();
            Ok(project(&t))
        })
        .unwrap()
    };
    for calibration in [TreeNoise::Paper, TreeNoise::Analytic] {
        let ok = run(1.0, calibration);
        eprintln!("{calibration:?} at ε = 1: {ok:?}");
        assert!(ok.epsilon_lower <= 1.0, "{calibration:?}: {ok:?}");
    }
    let broken = run(8.0, TreeNoise::Paper);
    eprintln!("ε = 8 noise claimed at ε = 1: {broken:?}");
    assert!(broken.epsilon_lower > 1.0, "{broken:?}");
}

/// Federated DP with heterogeneous budgets (Def. 2): sites with ε_s = 0.5, 1, 4 and their own
/// δ_s. Each site's two transcripts (round 1 on its training half, round 2 on its calibration
/// half) compose in parallel to exactly its own (ε_s, δ_s) in strict mode (the analytic Gaussian
/// is calibrated to the budget, so the total is the budget up to rounding), and the federation's
/// ledger reports the worst site, not a sum over sites.
#[test]
fn every_site_spends_exactly_its_own_budget() {
    let budgets = [(0.5, 1e-6), (1.0, 1e-6), (4.0, 1e-5)];
    let data = sites(3, 800, 31);
    let cfg = config(1.0, 0.1);
    let mut r1: Vec<Round1> = Vec::new();
    let mut ledgers = Vec::new();
    for (k, (site, &(epsilon, delta))) in data.iter().zip(&budgets).enumerate() {
        let p = dpfair::fdp_fair::SiteParams {
            epsilon,
            delta,
            bandwidth: 0.2,
            ..cfg.site_params(&site_name(k), site).unwrap()
        };
        let mut ledger = site_ledger(epsilon, delta, p.accounting).unwrap();
        let mut noise = Noise::seeded(50 + k as u64);
        r1.push(site_round1(&p, site, None, &mut ledger, &mut noise).unwrap());
        ledgers.push((ledger, noise));
    }
    let global = aggregate_round1(&r1, &ServerParams::default()).unwrap();
    let mut r2: Vec<Round2> = Vec::new();
    for (k, (site, (ledger, noise))) in data.iter().zip(ledgers.iter_mut()).enumerate() {
        r2.push(site_round2(&global, &site_name(k), site, ledger, noise).unwrap());
        let (eps, delta) = budgets[k];
        let total = ledger.total().unwrap();
        assert!(
            (total.epsilon - eps).abs() <= 1e-6 * eps && total.delta <= delta * (1.0 + 1e-9),
            "site {k}: {}",
            ledger.summary()
        );
        // Each transcript alone carries at most the site's budget.
        for t in [r1[k].ledger.total().unwrap(), r2[k].ledger.total().unwrap()] {
            assert!(t.epsilon <= eps * (1.0 + 1e-9), "site {k}: {t:?}");
        }
    }
    let (_, federated) = aggregate_round2(&global, &r2, &cfg.search).unwrap();
    let total = federated.total().unwrap();
    assert!(
        (total.epsilon - 4.0).abs() <= 1e-6 * 4.0,
        "{}",
        federated.summary()
    );
}

/// Both rounds (every release) do not depend on the search parameters: selecting from one
/// `rounds` at two α gives exactly the models of two separate fits with the same noise seeds, and
/// the same spent budget (what lets `dpfair reproduce fdp-fair` fit once per seed for its α grid).
#[test]
fn one_set_of_rounds_serves_every_alpha() {
    let (s, n, eps) = (2, 600, 1.0);
    let data = sites(s, n, 31);
    let shared = rounds(&config(eps, 0.1), &data, &mut noises(s, 300)).unwrap();
    for alpha in [0.05, 0.3] {
        let cfg = config(eps, alpha);
        let separate = fit(&cfg, &data, &mut noises(s, 300)).unwrap();
        let selected = shared.select(&cfg.search).unwrap();
        assert_eq!(selected.model, separate.model, "α = {alpha}");
        assert_eq!(
            format!("{:?}", selected.ledger.total()),
            format!("{:?}", separate.ledger.total())
        );
    }
}

/// A 6 % group (the synthetic design with π₁ = 0.06; S = 3 sites of 5,000 rows, ε = 1): its scores
/// `z ∈ [−π̃₁, π̃₁]` fill only a few of the 64 leaves, so the disparity curve jumps between grid
/// points, and the server's estimate has a standard deviation of several hundredths. The
/// estimator's defaults (noise margin z = 1.645 and the randomised straddle,
/// `docs/deviations.md#fdp-fair-noise-margin`, `#fdp-fair-randomised-straddle`) against the
/// paper's selection (band inside α in both), 12 seeded fits each, scored by the expected
/// disparity on 60,000 test rows (≈ 3,600 in the small group: sampling SE ≤ 0.009, so 3 SE ≤ 0.027).
///
/// With a one-sided 95% bound a fit exceeds α with probability about 0.05; at most 2 of 12 may
/// exceed α + 3 SE (P(≥ 3 of 12) = 0.02 at 0.05). The paper's interpolated τ̃ lies between two
/// released grid points, where the curve's jump is not estimated: its mean is far above the
/// defaults' (measured 0.140 against 0.054; worst fit 0.33 against 0.099).
#[test]
fn the_estimators_selection_holds_alpha_for_a_small_group() {
    use dpfair::estimators::FdpFair;
    use dpfair::{Estimator, Params};
    let (s, n, alpha, reps) = (3, 5_000, 0.1, 12);
    let design = FdpFairDesign { pi1: 0.06 };
    let test = design.generate(60_000, 4_242).unwrap();
    let ours = FdpFair::params()
        .epsilon(1.0)
        .sites(s)
        .check()
        .unwrap()
        .config(&test);
    assert!(ours.search.margin_z > 0.0 && ours.search.randomise_straddle);
    let paper = Config {
        search: SearchConfig {
            margin_z: 0.0,
            randomise_straddle: false,
            ..ours.search.clone()
        },
        ..ours.clone()
    };
    let mut dd = [Vec::new(), Vec::new()];
    for rep in 0..reps {
        let data: Vec<Dataset> = (0..s)
            .map(|k| design.generate(n, 500 + 10 * rep + k as u64).unwrap())
            .collect();
        for (i, config) in [&ours, &paper].into_iter().enumerate() {
            let fitted = fit(config, &data, &mut noises(s, 7_000 + 10 * rep)).unwrap();
            dd[i].push(fitted.model.expected_metrics(&test).unwrap().dd.abs());
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let over = dd[0].iter().filter(|&&d| d > alpha + 0.027).count();
    assert!(
        over <= 2,
        "{over} of {reps} fits above α + 3 SE: {:?}",
        dd[0]
    );
    assert!(
        mean(&dd[0]) < mean(&dd[1]),
        "defaults {:?}, paper {:?}",
        dd[0],
        dd[1]
    );
}
