//! Why LPCT-prune's accuracy falls as ε grows on Fig. 4(a)'s design (n_P = 10⁴, n_Q = 50,
//! γ = 0.5), the measurement behind docs/deviations.md#lpct-prune-falls-as-epsilon-grows.
//!
//! For each ε and replication: Algorithm 2's depths p0 and p_term; the share of π_{p0}'s leaves
//! whose chosen estimate uses the public data only (λ = ∞) and whose chosen node is the leaf
//! itself (no pruning); and the test accuracy of the default configuration (the authors'
//! constants, one query), of the same walk without the early stop at p_term (p_term = 1), and of
//! Proposition 6's constants. Printed, not asserted: it is a measurement. Run with
//! `cargo run --release -p dpfair-experiments --example lpct_prune_epsilon`.

use dpfair::lpct::prune::{Preset, round1};
use dpfair::lpct::{PruneConfig, collect, fit_prune, prune_depths};
use dpfair_data::Dataset;
use dpfair_data::synthetic::{Design, LpctDesign, derive_seed};
use dpfair_privacy::{Ledger, Noise};

fn accuracy(pred: &[u8], test: &Dataset) -> f64 {
    let Some(dpfair_data::Target::Binary(y)) = &test.target else {
        panic!("binary test labels");
    };
    pred.iter().zip(y).filter(|(p, y)| p == y).count() as f64 / y.len() as f64
}

fn main() {
    let reps: u64 = std::env::var("PRUNE_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let design = LpctDesign { gamma: 0.5 };
    println!(
        "ε | p0 | p_term | public-only leaves | unpruned leaves | accuracy (default) | no early stop | prop6"
    );
    for eps in [0.5, 1.0, 2.0, 4.0, 8.0, 1000.0] {
        let mut sums = [0.0f64; 5];
        let mut depths = (0, 0);
        for rep in 0..reps {
            let private = design.generate(10_000, rep).unwrap();
            let test = design.generate(2_000, derive_seed(rep, 1)).unwrap();
            let public = design.public(50, rep).unwrap();
            let cfg = PruneConfig {
                epsilon: eps,
                ..PruneConfig::default()
            };
            let (p0, p_term) = prune_depths(&cfg, 10_000, 50, 2);
            depths = (p0, p_term);
            let mut noise = Noise::seeded(1000 + rep);
            let (tree, leaf_sums) = collect(
                &cfg.tree,
                p0,
                eps,
                &public,
                &private,
                &mut Ledger::unlimited(),
                &mut noise,
            )
            .unwrap();
            let r = round1(&tree, &leaf_sums, &cfg.options, p_term, None);
            let n = r.lambda.len() as f64;
            sums[0] += r.lambda.iter().filter(|l| l.is_infinite()).count() as f64 / n;
            sums[1] += r.depth.iter().filter(|&&d| d == tree.depth()).count() as f64 / n;
            let fit = |cfg: &PruneConfig| {
                let m = fit_prune(
                    cfg,
                    &public,
                    &private,
                    &mut Ledger::unlimited(),
                    &mut Noise::seeded(1000 + rep),
                )
                .unwrap();
                accuracy(&m.predict(test.features.view()).unwrap(), &test)
            };
            sums[2] += fit(&cfg);
            sums[3] += fit(&PruneConfig {
                p_term: Some(1),
                ..cfg.clone()
            });
            let mut prop6 = cfg.clone();
            prop6.options.preset = Preset::Prop6;
            sums[4] += fit(&prop6);
        }
        let m: Vec<f64> = sums.iter().map(|s| s / reps as f64).collect();
        println!(
            "{eps} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3}",
            depths.0, depths.1, m[0], m[1], m[2], m[3], m[4]
        );
    }
}
