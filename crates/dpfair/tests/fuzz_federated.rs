//! Fuzzing the federated server: honest round-1 and round-2 transcripts of two
//! sites, one of them edited by [`dpfair::data::fuzz::mutate_json`] (and resealed half the time, as
//! a site lying consistently would), then read and aggregated. Every input must give an error or
//! an aggregate with weights on the simplex; a panic fails the test.
//!
//! A third target sends in-bound lies (made-up but consistent trees, coefficients and π̃ within
//! their bounds): each must be accepted, and move the aggregated curve by at most `2Bμ_d`.
//!
//! Cases: 1,500 per target and round per `cargo test`; `DPFAIR_FUZZ_SCALE=N` runs N times more.

mod federation;

use dpfair::data::fuzz::mutate_json;
use dpfair::fdp_fair::protocol::{Global, Round1, Round2, aggregate_round1, aggregate_round2};
use dpfair::fdp_fair::{SearchConfig, ServerParams};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestRunner};

const FUZZ_ROUND_CASES: u32 = 1_500;

fn cases(base: u32) -> u32 {
    let scale: u32 = std::env::var("DPFAIR_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    base.saturating_mul(scale.max(1))
}

struct Honest {
    r1: Vec<Round1>,
    global: Global,
    r2: Vec<Round2>,
    search: SearchConfig,
}

fn honest() -> Honest {
    let mut f = federation::two_sites(8, 120, 90, 11, None);
    let global = aggregate_round1(&f.r1, &ServerParams::default()).unwrap();
    let r2 = federation::round2(&mut f, &global);
    Honest {
        r1: f.r1,
        global,
        r2,
        search: f.cfg.search,
    }
}

fn runner() -> TestRunner {
    TestRunner::new(RunnerConfig {
        cases: cases(FUZZ_ROUND_CASES),
        failure_persistence: None,
        ..RunnerConfig::default()
    })
}

#[test]
fn fuzz_round1_transcripts_never_panic_the_server() {
    let h = honest();
    let json = serde_json::to_value(&h.r1[1]).unwrap();
    let accepted = std::cell::Cell::new(0u32);
    runner()
        .run(
            &(any::<u64>(), 1usize..4, any::<bool>()),
            |(seed, edits, reseal)| {
                let mut v = json.clone();
                mutate_json(&mut v, seed, edits);
                let Ok(mut edited) = serde_json::from_value::<Round1>(v) else {
                    return Ok(());
                };
                if reseal {
                    let run = edited.run.clone();
                    edited.bind(run);
                }
                let rounds = [h.r1[0].clone(), edited];
                if let Ok(g) = aggregate_round1(&rounds, &ServerParams::default()) {
                    accepted.set(accepted.get() + 1);
                    let (nu, mu): (f64, f64) = g
                        .sites
                        .iter()
                        .map(|s| (s.nu, s.mu))
                        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
                    prop_assert!((nu - 1.0).abs() < 1e-9 && (mu - 1.0).abs() < 1e-9);
                    prop_assert!(g.sites.iter().all(|s| s.nu >= 0.0 && s.mu >= 0.0));
                    prop_assert!(g.estimate.pi.iter().all(|p| (0.0..=1.0).contains(p)));
                    prop_assert!(g.sites.iter().all(|s| s.n_rows <= 100_000_000));
                }
                Ok(())
            },
        )
        .unwrap();
    eprintln!(
        "fuzz_federated round 1: {} cases, {} accepted",
        cases(FUZZ_ROUND_CASES),
        accepted.get()
    );
}

#[test]
fn fuzz_round2_transcripts_never_panic_the_server() {
    let h = honest();
    let json = serde_json::to_value(&h.r2[1]).unwrap();
    let accepted = std::cell::Cell::new(0u32);
    runner()
        .run(
            &(any::<u64>(), 1usize..4, any::<bool>()),
            |(seed, edits, reseal)| {
                let mut v = json.clone();
                mutate_json(&mut v, seed, edits);
                let Ok(mut edited) = serde_json::from_value::<Round2>(v) else {
                    return Ok(());
                };
                if reseal {
                    edited.bind();
                }
                let rounds = [h.r2[0].clone(), edited];
                if let Ok((model, _ledger)) = aggregate_round2(&h.global, &rounds, &h.search) {
                    accepted.set(accepted.get() + 1);
                    let info = model.federated;
                    prop_assert!(info.search.tau.is_finite());
                }
                Ok(())
            },
        )
        .unwrap();
    // The honest pair itself is accepted (the edits are what is refused).
    aggregate_round2(&h.global, &h.r2, &h.search).unwrap();
    eprintln!(
        "fuzz_federated round 2: {} cases, {} accepted",
        cases(FUZZ_ROUND_CASES),
        accepted.get()
    );
}

/// In-bound lies: the second site's round-2 trees are the counts of made-up scores (a random
/// group split, scores from a random window of [−1, 1]) with every node moved by up to
/// `σ/√(2^ℓ)` at level ℓ (within every range and consistency check), and its round-1
/// coefficients and π̃ random within their bounds. Every such transcript must be accepted (the
/// checks refuse only what no honest site sends) and may move the aggregated curve at no grid
/// point by more than `2Bμ_d` (docs/federated-trust.md).
#[test]
fn fuzz_in_bound_lies_are_accepted_and_bounded() {
    use dpfair::fdp_fair::search::{aggregate_dd, site_dd_bound};
    use dpfair::fdp_fair::tree::TreeNoise;
    let h = honest();
    let liar = &h.global.sites[1];
    let depth = h.global.depth;
    let sigma = TreeNoise::Analytic
        .node_sigma(liar.epsilon, liar.delta, depth)
        .unwrap();
    let accepted = std::cell::Cell::new(0u32);
    runner()
        .run(&(any::<u64>(), any::<bool>()), |(seed, clip_tails)| {
            use rand::{RngExt, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let n = liar.n_cal;
            let split = rng.random_range(0..=n);
            let (c, w) = (rng.random_range(-1.0..1.0), rng.random_range(0.0..1.0));
            let mut draw = |k: usize| -> Vec<f64> {
                (0..k)
                    .map(|_| (c + w * rng.random_range(-1.0..=1.0f64)).clamp(-1.0, 1.0))
                    .collect()
            };
            let z = [draw(n - split), draw(split)];
            let mut trees = federation::exact_trees(&z, depth);
            for t in &mut trees.groups {
                for (l, level) in t.levels.iter_mut().enumerate() {
                    let room = sigma / f64::from(2u32 << l).sqrt();
                    level
                        .iter_mut()
                        .for_each(|v| *v += room * rng.random_range(-1.0..=1.0));
                }
            }
            let mut rounds = h.r2.clone();
            rounds[1].trees = trees;
            rounds[1].bind();
            let search = SearchConfig {
                clip_tails,
                ..h.search.clone()
            };
            let accepted_run = aggregate_round2(&h.global, &rounds, &search);
            prop_assert!(accepted_run.is_ok(), "{:?}", accepted_run.err());
            accepted.set(accepted.get() + 1);
            let curve = |r: &[Round2]| {
                let pairs: Vec<(f64, &dpfair::fdp_fair::tree::SiteTrees)> = h
                    .global
                    .sites
                    .iter()
                    .zip(r)
                    .map(|(s, t)| (s.mu, &t.trees))
                    .collect();
                aggregate_dd(&pairs, clip_tails).unwrap()
            };
            let limit = 2.0 * site_dd_bound(clip_tails) * liar.mu + 1e-12;
            for (lie, honest) in curve(&rounds).iter().zip(curve(&h.r2)) {
                prop_assert!((lie - honest).abs() <= limit, "{lie} vs {honest}");
            }
            Ok(())
        })
        .unwrap();
    // Round 1: coefficients uniform within ±h^-d/√D, π̃ anywhere on the simplex (a consistent
    // lie about the group proportions).
    let json_ok = std::cell::Cell::new(0u32);
    runner()
        .run(&any::<u64>(), |seed| {
            use rand::{RngExt, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut r = h.r1[1].clone();
            if let dpfair::plugin::EtaEstimate::Kernel(k) = &mut r.release.eta {
                let bound = k.basis.bandwidth().powi(-(k.basis.dim() as i32))
                    / ((k.basis.len() / 2) as f64).sqrt();
                for v in k.denominator.iter_mut().chain(k.numerator.iter_mut()) {
                    v.iter_mut()
                        .for_each(|c| *c = bound * rng.random_range(-1.0..=1.0));
                }
            }
            let p = rng.random_range(1e-6..=1.0 - 1e-6);
            r.release.pi = [p, 1.0 - p];
            r.bind(None);
            let rounds = [h.r1[0].clone(), r];
            let g = aggregate_round1(&rounds, &ServerParams::default());
            prop_assert!(g.is_ok(), "{:?}", g.err());
            json_ok.set(json_ok.get() + 1);
            Ok(())
        })
        .unwrap();
    eprintln!(
        "fuzz_federated in-bound lies: {} round-2 and {} round-1 lies accepted, each bounded",
        accepted.get(),
        json_ok.get()
    );
}
