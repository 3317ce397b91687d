//! Fuzzing the federated server: honest round-1 and round-2 transcripts of two
//! sites, one of them edited by [`dpfair::data::fuzz::mutate_json`] (and resealed half the time, as
//! a site lying consistently would), then read and aggregated. Every input must give an error or
//! an aggregate with weights on the simplex; a panic fails the test.
//!
//! Cases: 1,500 per round per `cargo test`; `DPFAIR_FUZZ_SCALE=N` runs N times more.

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
                    let info = model.federated.expect("a federated model");
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
