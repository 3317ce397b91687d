//! Honest FDP-Fair sites on the synthetic design, for the tests of the federated server
//! (`federated_trust.rs`, `fuzz_federated.rs`): their round-1 transcripts, and the ledgers and
//! noise streams they continue with into round 2.
#![allow(dead_code)]

use dpfair::data::Dataset;
use dpfair::data::synthetic::{Design, FdpFairDesign};
use dpfair::fdp_fair::protocol::{Global, Round1, Round2, site_ledger, site_round1, site_round2};
use dpfair::fdp_fair::simulate::site_name;
use dpfair::fdp_fair::tree::{NoisyTree, SiteTrees, TreeCounts};
use dpfair::fdp_fair::{Config, SearchConfig};
use dpfair::privacy::{Ledger, Noise};

/// Two honest sites after round 1.
pub struct Federation {
    pub data: Vec<Dataset>,
    pub r1: Vec<Round1>,
    pub state: Vec<(Ledger, Noise)>,
    pub cfg: Config,
}

/// Two sites of `rows` rows each ([`sites`]).
pub fn two_sites(
    frequencies: usize,
    rows: usize,
    data_seed: u64,
    noise_seed: u64,
    run: Option<&str>,
) -> Federation {
    sites(2, frequencies, rows, data_seed, noise_seed, run)
}

/// `count` sites of `rows` rows each (design seeds `data_seed + k`, noise seeds
/// `noise_seed + k`) at ε = 1, α = 0.1 and `frequencies` random features, their round-1
/// transcripts bound to `run`.
pub fn sites(
    count: usize,
    frequencies: usize,
    rows: usize,
    data_seed: u64,
    noise_seed: u64,
    run: Option<&str>,
) -> Federation {
    let cfg = Config {
        epsilon: 1.0,
        n_frequencies: frequencies,
        search: SearchConfig {
            alpha: 0.1,
            ..SearchConfig::default()
        },
        ..Config::default()
    };
    let data: Vec<Dataset> = (0..count)
        .map(|k| {
            FdpFairDesign::default()
                .generate(rows, data_seed + k as u64)
                .unwrap()
        })
        .collect();
    round1(cfg, data, noise_seed, run)
}

/// Round 1 of honest sites holding `data` under `cfg` (site `k` seeded `noise_seed + k`).
pub fn round1(cfg: Config, data: Vec<Dataset>, noise_seed: u64, run: Option<&str>) -> Federation {
    let mut r1 = Vec::new();
    let mut state = Vec::new();
    for (k, d) in data.iter().enumerate() {
        let p = cfg.site_params(&site_name(k), d).unwrap();
        let mut ledger = site_ledger(p.epsilon, p.delta, p.accounting).unwrap();
        let mut noise = Noise::seeded(noise_seed + k as u64);
        let mut t = site_round1(&p, d, None, &mut ledger, &mut noise).unwrap();
        t.bind(run.map(String::from));
        r1.push(t);
        state.push((ledger, noise));
    }
    Federation {
        data,
        r1,
        state,
        cfg,
    }
}

/// The sites' honest round-2 transcripts for the server's `global`.
pub fn round2(f: &mut Federation, global: &Global) -> Vec<Round2> {
    f.data
        .iter()
        .zip(f.state.iter_mut())
        .enumerate()
        .map(|(k, (d, (l, n)))| site_round2(global, &site_name(k), d, l, n).unwrap())
        .collect()
}

/// Noise-free trees of depth `depth` of the scores `z[a]` of each group: consistent and within
/// every range the server checks (the counts of made-up data).
pub fn exact_trees(z: &[Vec<f64>; 2], depth: usize) -> SiteTrees {
    let mut counts = TreeCounts::new(depth).unwrap();
    counts.update(0, &z[0]).unwrap();
    counts.update(1, &z[1]).unwrap();
    SiteTrees {
        groups: [0, 1].map(|a| NoisyTree {
            levels: counts.levels(a),
        }),
    }
}
