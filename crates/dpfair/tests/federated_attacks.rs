//! One dishonest site against FDP-Fair's server, within every bound the server checks
//! (docs/federated-trust.md, "What one dishonest site can do, measured").
//!
//! Three sites of 1,500 rows of the synthetic design (equal sizes and ε, so `μ_d = 1/3`); site 3
//! lies. Round 1: honest, or its coefficients at the bound `h^{−d}/√D` with random signs and π̃
//! pushed to the simplex's corner (η̃ made useless). Round 2: made-up trees (noise-free counts of
//! made-up scores, so every range and consistency check passes) — all mass in one tail, the
//! groups flipped, every step function and two-step function the grid allows (a site's curve is
//! non-increasing from 1 to −1, and these are the extreme points), random histograms, and a tiny
//! group whose nodes use the noise room (±3σ) to make its fractions unbounded. Each under the
//! library's selection and the CLI's (unclipped tails, band inside, margin, randomised straddle).
//!
//! **The bound tested.** With `D̃D = μ_H H + μ_d L`, `H` the honest sites' (μ-weighted,
//! normalised) curve and `|L| ≤ B` ([`site_dd_bound`]: 1 clipped, 1.25 unclipped),
//! `|H(τ)| ≤ (|D̃D(τ)| + μ_d B)/(1 − μ_d)` at every grid point, and `H` estimates the disparity
//! of the classifier actually built on the honest population, whatever round 1 said. So the
//! model's disparity on held-out honest data must satisfy, at the grid points its rule uses,
//! `|DD_h| ≤ (|D̃D| + μ_d B)/(1 − μ_d) + 4 sd_H + 4 sd_eval` (`sd_H` the honest curve's noise
//! from `dd_sd`, `sd_eval` the held-out sample's; 4 standard deviations: the test is seeded, and a
//! failure means the bound is wrong, not bad luck at 3·10⁻⁵). Where the selection found its band,
//! `|D̃D| ≤ α + ω` there, which gives the bound in terms of α printed and asserted too.

mod federation;

use dpfair::cdp_fair::groups_and_labels;
use dpfair::data::Dataset;
use dpfair::data::synthetic::{Design, FdpFairDesign};
use dpfair::fdp_fair::search::{dd_sd, grid_point, site_dd_bound};
use dpfair::fdp_fair::tree::{NoisyTree, SiteTrees, TreeNoise};
use dpfair::fdp_fair::{Global, Round2, SearchConfig, ServerParams};
use dpfair::plugin::EtaEstimate;
use dpfair::plugin::classifier::ExpectedMetrics;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SITES: usize = 3;
const ROWS: usize = 1_500;
const LIAR: usize = 2;
const Z: f64 = 4.0;

/// One attacked run's outcome.
struct Outcome {
    setup: String,
    dd: f64,
    bound: f64,
    alpha_bound: Option<f64>,
}

/// The server's two selections: the library's defaults and the CLI's / estimators'.
fn selections() -> Vec<(&'static str, SearchConfig)> {
    let library = SearchConfig {
        alpha: 0.1,
        ..SearchConfig::default()
    };
    let cli = SearchConfig {
        band_inside: true,
        margin_z: 1.645,
        randomise_straddle: true,
        clip_tails: false,
        ..library.clone()
    };
    vec![("library", library), ("cli", cli)]
}

/// Made-up trees of `n_cal` scores: `split` of them in group 1 at `z1`, the rest in group 0 at
/// `z0`.
fn point_masses(n_cal: usize, split: usize, z0: f64, z1: f64, depth: usize) -> SiteTrees {
    federation::exact_trees(&[vec![z0; n_cal - split], vec![z1; split]], depth)
}

/// The liar's round-2 strategies (module docs), given its honest trees and node noise σ.
fn strategies(
    honest: &SiteTrees,
    n_cal: usize,
    depth: usize,
    sigma: f64,
) -> Vec<(String, SiteTrees)> {
    let half = n_cal / 2;
    let mut out = vec![
        ("honest".to_string(), honest.clone()),
        (
            "all mass at the top".into(),
            point_masses(n_cal, half, 1.0, 1.0, depth),
        ),
        (
            "all mass at the bottom".into(),
            point_masses(n_cal, half, -1.0, -1.0, depth),
        ),
        (
            "groups flipped".into(),
            SiteTrees {
                groups: [honest.groups[1].clone(), honest.groups[0].clone()],
            },
        ),
    ];
    let leaves = 1usize << depth;
    let centre = |i: usize| grid_point(i, depth) + 1.0 / leaves as f64;
    for i in (0..leaves).step_by(2) {
        out.push((
            format!("step at τ = {:.3}", centre(i)),
            point_masses(n_cal, half, centre(i), centre(i), depth),
        ));
    }
    for i in (0..leaves).step_by(8) {
        for k in (0..leaves).step_by(8) {
            if i != k {
                out.push((
                    format!("two steps at {:.3} / {:.3}", centre(i), centre(k)),
                    point_masses(n_cal, half, centre(i), centre(k), depth),
                ));
            }
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    for r in 0..8 {
        let split = rng.random_range(1..n_cal);
        let (c, w) = (rng.random_range(-1.0..1.0), rng.random_range(0.05..1.0));
        let draw = |rng: &mut ChaCha8Rng, n: usize| -> Vec<f64> {
            (0..n)
                .map(|_| (c + w * rng.random_range(-1.0..1.0f64)).clamp(-1.0, 1.0))
                .collect()
        };
        let z0 = draw(&mut rng, n_cal - split);
        let z1 = draw(&mut rng, split);
        out.push((
            format!("random histogram {r}"),
            federation::exact_trees(&[z0, z1], depth),
        ));
    }
    // A group of no rows whose leaves use the noise room: ±3σ alternating (its parents, exact
    // sums, are 0), so the noisy total is 0 and every tail fraction is ±3σ/1.
    let mut tiny = point_masses(n_cal, 0, 0.3, 0.0, depth);
    let mut levels = vec![vec![0.0; 2]; depth];
    for (l, level) in levels.iter_mut().enumerate() {
        *level = vec![0.0; 2 << l];
    }
    levels[depth - 1] = (0..leaves)
        .map(|j| {
            if j % 2 == 0 {
                3.0 * sigma
            } else {
                -3.0 * sigma
            }
        })
        .collect();
    tiny.groups[1] = NoisyTree { levels };
    out.push(("tiny group using the noise room".into(), tiny));
    out
}

/// Round 1's lie: coefficients at `±h^{−d}/√D` (random signs), π̃ at the simplex's corner.
fn useless_eta(f: &mut federation::Federation) {
    let r = &mut f.r1[LIAR];
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    if let EtaEstimate::Kernel(k) = &mut r.release.eta {
        let bound =
            k.basis.bandwidth().powi(-(k.basis.dim() as i32)) / ((k.basis.len() / 2) as f64).sqrt();
        for v in k.denominator.iter_mut().chain(k.numerator.iter_mut()) {
            v.iter_mut().for_each(|c| {
                *c = if rng.random_range(0..2) == 0 {
                    bound
                } else {
                    -bound
                }
            });
        }
    }
    r.release.pi = [1.0 - 1e-6, 1e-6];
    let run = r.run.clone();
    r.bind(run);
}

/// `DD` of the model's rule on the held-out honest rows, in expectation over its randomisation.
fn held_out_dd(model: &dpfair::cdp_fair::Model, test: &Dataset) -> f64 {
    let (a, y) = groups_and_labels(test).unwrap();
    let prob = model.folds[0]
        .predict_proba(test.features.view(), a)
        .unwrap();
    ExpectedMetrics::compute(&prob, a, y).unwrap().dd
}

/// The bound of the module docs for the model chosen from `global` and `rounds`.
fn bounds(
    global: &Global,
    rounds: &[Round2],
    cfg: &SearchConfig,
    model: &dpfair::fdp_fair::FederatedModel,
    eval_sd: f64,
) -> (f64, Option<f64>) {
    let info = &model.federated;
    let search = &info.search;
    let depth = search.depth;
    let mu_d = global.sites[LIAR].mu;
    let mu_h = 1.0 - mu_d;
    let b = site_dd_bound(cfg.clip_tails);
    let honest: Vec<(f64, &SiteTrees)> = (0..SITES)
        .filter(|&s| s != LIAR)
        .map(|s| (global.sites[s].mu / mu_h, &rounds[s].trees))
        .collect();
    let sigmas: Vec<f64> = (0..SITES)
        .filter(|&s| s != LIAR)
        .map(|s| {
            TreeNoise::Analytic
                .node_sigma(global.sites[s].epsilon, global.sites[s].delta, depth)
                .unwrap()
        })
        .collect();
    let sd_h = dd_sd(&honest, &sigmas, cfg.clip_tails).unwrap();
    let step = 2.0 / (1u64 << depth) as f64;
    let index = |tau: f64| ((tau + 1.0) / step).round() as usize;
    let at = |i: usize, level: f64| (level + mu_d * b) / mu_h + Z * sd_h[i] + Z * eval_sd;
    let realised = |i: usize| at(i, search.dd[i].abs());
    let by_alpha = |i: usize| at(i, cfg.alpha + search.omega);
    let combine = |f: &dyn Fn(usize) -> f64| match search.mix {
        Some(m) => (1.0 - m.weight) * f(index(search.tau)) + m.weight * f(index(m.tau)),
        None => {
            let lo = ((search.tau + 1.0) / step).floor() as usize;
            let hi = ((search.tau + 1.0) / step).ceil() as usize;
            f(lo).max(f(hi))
        }
    };
    (
        combine(&realised),
        search.feasible.then(|| combine(&by_alpha)),
    )
}

#[test]
fn one_dishonest_site_moves_the_disparity_no_further_than_the_bound() {
    let test = FdpFairDesign::default().generate(20_000, 777).unwrap();
    let (a, _) = groups_and_labels(&test).unwrap();
    let n1 = a.iter().filter(|&&g| g == 1).count() as f64;
    let n0 = a.len() as f64 - n1;
    let eval_sd = (0.25 / n0 + 0.25 / n1).sqrt();
    let mut report = Vec::new();
    for (name, cfg) in selections() {
        let mut honest_dd = None;
        let mut outcomes: Vec<Outcome> = Vec::new();
        for lie_round1 in [false, true] {
            let mut f = federation::sites(SITES, 32, ROWS, 300, 600, None);
            if lie_round1 {
                useless_eta(&mut f);
            }
            let global =
                dpfair::fdp_fair::protocol::aggregate_round1(&f.r1, &ServerParams::default())
                    .unwrap();
            let honest_r2 = federation::round2(&mut f, &global);
            let depth = global.depth;
            let liar = &global.sites[LIAR];
            let sigma = TreeNoise::Analytic
                .node_sigma(liar.epsilon, liar.delta, depth)
                .unwrap();
            for (strategy, trees) in strategies(&honest_r2[LIAR].trees, liar.n_cal, depth, sigma) {
                let mut rounds = honest_r2.clone();
                rounds[LIAR].trees = trees;
                rounds[LIAR].bind();
                let setup = format!(
                    "{name}, round 1 {}, {strategy}",
                    if lie_round1 { "lie" } else { "honest" }
                );
                let (model, _) =
                    dpfair::fdp_fair::protocol::aggregate_round2(&global, &rounds, &cfg)
                        .unwrap_or_else(|e| panic!("{setup}: an in-bounds lie was refused: {e}"));
                let dd = held_out_dd(&model, &test);
                if !lie_round1 && strategy == "honest" {
                    honest_dd = Some(dd);
                }
                let (bound, alpha_bound) = bounds(&global, &rounds, &cfg, &model, eval_sd);
                outcomes.push(Outcome {
                    setup,
                    dd,
                    bound,
                    alpha_bound,
                });
            }
        }
        let honest_dd = honest_dd.unwrap();
        for o in &outcomes {
            assert!(
                o.dd.abs() <= o.bound,
                "{}: |DD| = {:.3} beyond the bound {:.3}",
                o.setup,
                o.dd.abs(),
                o.bound
            );
            if let Some(b) = o.alpha_bound {
                assert!(
                    o.dd.abs() <= b,
                    "{}: |DD| = {:.3} beyond the α bound {b:.3}",
                    o.setup,
                    o.dd.abs()
                );
            }
        }
        let worst = outcomes
            .iter()
            .max_by(|x, y| x.dd.abs().total_cmp(&y.dd.abs()))
            .unwrap();
        let alpha_bounds: Vec<f64> = outcomes.iter().filter_map(|o| o.alpha_bound).collect();
        report.push(format!(
            "{name}: {} attacked runs; honest |DD| = {:.3}; worst |DD| = {:.3} (change {:.3}) by `{}`, its bound {:.3}; α-form bound where the band was found: {:.3}–{:.3} ({} runs)",
            outcomes.len(),
            honest_dd.abs(),
            worst.dd.abs(),
            (worst.dd - honest_dd).abs(),
            worst.setup,
            worst.bound,
            alpha_bounds.iter().copied().fold(f64::INFINITY, f64::min),
            alpha_bounds.iter().copied().fold(0.0, f64::max),
            alpha_bounds.len(),
        ));
    }
    for line in report {
        eprintln!("federated attacks: {line}");
    }
}
