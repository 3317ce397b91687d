//! Diagnostic for DP-FERMI on Adult (the decoupled classifier paper's baseline): accuracy and SP gap over seeds for given
//! λ and ε'. `DPFAIR_DATA_DIR=../shared/datasets cargo run --release -p dpfair --example
//! fermi_adult -- adult 0.5 3 [epochs] [seeds]`.

use dpfair::decoupled::accuracy_and_gap;
use dpfair::dp_fermi::{FermiConfig, fit};
use dpfair_data::builtin::{DataDir, load};
use dpfair_data::{Stratify, Target};
use dpfair_privacy::{Ledger, Noise};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let name = a.get(1).map_or("adult", String::as_str);
    let lambda: f64 = a.get(2).map_or(0.5, |s| s.parse().unwrap());
    let epsilon: f64 = a.get(3).map_or(3.0, |s| s.parse().unwrap());
    let epochs: usize = a.get(4).map_or(50, |s| s.parse().unwrap());
    let seeds: u64 = a.get(5).map_or(3, |s| s.parse().unwrap());
    let dir = DataDir::resolve(None).unwrap();
    let mut data = load(name, &dir).unwrap().dataset;
    // STRICT=1: strict mode on [0, 1]-scaled numeric columns (public UCI bounds, as the
    // reproduction's strict rows) with `FermiConfig::with_strict_schedule` (CODE_SCHEDULE=1:
    // the code's B = 1024, the given epochs, η_θ = 0.005); LR=η_θ overrides the learning rate.
    let strict = std::env::var("STRICT").is_ok();
    if strict {
        for (j, n) in data.feature_names.clone().iter().enumerate() {
            let b = match n.as_str() {
                "age" => (17.0, 90.0),
                "fnlwgt" => (0.0, 1.5e6),
                "education-num" => (1.0, 16.0),
                "capital-gain" => (0.0, 1e5),
                "capital-loss" => (0.0, 4400.0),
                "hours-per-week" => (1.0, 99.0),
                _ => continue,
            };
            data.features
                .column_mut(j)
                .mapv_inplace(|v| ((v - b.0) / (b.1 - b.0)).clamp(0.0, 1.0));
        }
    }
    let lr: Option<f64> = std::env::var("LR").ok().map(|s| s.parse().unwrap());
    let code_schedule = std::env::var("CODE_SCHEDULE").is_ok();
    let male = std::env::var("ERMI_GROUP").ok().map_or_else(
        || {
            data.groups
                .as_ref()
                .unwrap()
                .names
                .iter()
                .position(|n| n.eq_ignore_ascii_case("male"))
                .unwrap() as u32
        },
        |s| s.parse().unwrap(),
    );
    let (mut acc, mut gap) = (0.0, 0.0);
    for seed in 100..100 + seeds {
        let parts = data.split(&[0.75, 0.25], seed, Stratify::None).unwrap();
        // SUBSAMPLE=m: train on the first m rows of the (shuffled) training split only.
        let sub = std::env::var("SUBSAMPLE")
            .ok()
            .map(|s| s.parse::<usize>().unwrap());
        let small = sub.map(|m| {
            let idx: Vec<usize> = (0..m.min(parts[0].features.nrows())).collect();
            parts[0].select(&idx)
        });
        let (tr, te) = (small.as_ref().unwrap_or(&parts[0]), &parts[1]);
        let y = |d: &dpfair_data::Dataset| match d.target.as_ref().unwrap() {
            Target::Binary(y) => y.clone(),
            _ => unreachable!(),
        };
        let mut c = FermiConfig {
            lambda,
            epsilon,
            epochs,
            ermi_group: male,
            accounting: if strict {
                dpfair::decoupled::Accounting::Strict
            } else {
                dpfair::decoupled::Accounting::Paper
            },
            ..FermiConfig::default()
        };
        if strict && !code_schedule {
            c = c.with_strict_schedule(tr.features.nrows());
        }
        if let Some(lr) = lr {
            c.lr_theta = lr;
        }
        if let Ok(l) = std::env::var("LR_W") {
            c.lr_w = l.parse().unwrap();
        }
        if let Ok(l) = std::env::var("L_THETA") {
            c.lipschitz = l.parse().unwrap();
        }
        let m = fit(
            &c,
            tr.features.view(),
            &tr.groups.as_ref().unwrap().codes,
            &y(tr),
            &mut Ledger::unlimited(),
            &mut Noise::seeded(seed),
        )
        .unwrap();
        let p: Vec<f64> = m
            .predict(te.features.view())
            .unwrap()
            .into_iter()
            .map(|b| f64::from(u8::from(b)))
            .collect();
        let (a, g) = accuracy_and_gap(&p, &te.groups.as_ref().unwrap().codes, &y(te));
        println!(
            "seed {seed}: accuracy {a:.4} gap {g:.4} (σ_θ {:.3}, σ_W {:.4}, W {:.3}; B {}, \
             {} epochs, T {}, η_θ {})",
            m.sigma_theta, m.sigma_w, m.w, c.batch, c.epochs, m.steps, c.lr_theta
        );
        acc += a;
        gap += g;
    }
    println!(
        "mean: accuracy {:.4} gap {:.4}",
        acc / seeds as f64,
        gap / seeds as f64
    );
}
