//! LPCT's two local releases side by side on Diabetes (Ma & Yang's real data, Section 7.1): the
//! paper's Laplace pair (Laplace(4/ε) on the 2|I| coordinates of (U, V)) against Hadamard
//! randomized response over the 2|I| (leaf, label) cells, at ε ∈ {1, 2, 4}: the measurement behind
//! the default of `dpfair ldp partition --mechanism` (docs/deviations.md#lpct-hadamard-reports).
//! Each mechanism with its own defaults (Theorem 4's depth and λ from its noise variance), and
//! both at a fixed depth 3 with λ = 0 (private-only, eq. (7): the noise alone decides). Mean test
//! accuracy (± its standard error) over 40 random 80/20 splits of the private rows. Printed, not
//! asserted. `DPFAIR_DATA_DIR=/path/to/datasets cargo run --release -p dpfair-experiments --example ldp_mechanisms`.

use dpfair::lpct::{self, LeafSums, Mechanism, TreeSettings, privatiser};
use dpfair_data::split::Stratify;
use dpfair_data::{Dataset, Target};
use dpfair_privacy::{Ledger, Noise};

fn accuracy(pred: &[u8], d: &Dataset) -> f64 {
    let Some(Target::Binary(y)) = &d.target else {
        panic!("binary labels")
    };
    pred.iter().zip(y).filter(|(p, y)| p == y).count() as f64 / y.len() as f64
}

/// The public rows and one split of the private rows.
struct Split<'a> {
    public: &'a Dataset,
    train: &'a Dataset,
    test: &'a Dataset,
}

/// One fit: `mechanism` at ε, the depth and λ given (None: the mechanism's defaults).
fn run(
    mechanism: Mechanism,
    eps: f64,
    (depth, lambda): (Option<u32>, Option<f64>),
    data: &Split,
    noise: &mut Noise,
) -> f64 {
    let Split {
        public,
        train,
        test,
    } = *data;
    let settings = TreeSettings::default();
    let d = public.n_features();
    let depth = depth.unwrap_or_else(|| {
        lpct::theory_depth_for(
            mechanism,
            train.n_rows() as u64,
            public.n_rows() as u64,
            d,
            eps,
        )
    });
    let tree = lpct::partition(&settings, depth, public).unwrap();
    let (x, y) = lpct::binary_xy(train, "private").unwrap();
    let mut ledger = Ledger::unlimited();
    let private = match mechanism {
        Mechanism::Laplace => {
            privatiser::simulate_sums(&tree, x, y, eps, &mut ledger, noise, "l").unwrap()
        }
        Mechanism::Hadamard => {
            privatiser::hadamard_sums(&tree, x, y, eps, &mut ledger, noise, "h").unwrap()
        }
    };
    let (xq, yq) = lpct::binary_xy(public, "public").unwrap();
    let sums = LeafSums {
        private,
        public: tree.leaf_counts(xq, yq).unwrap(),
    };
    let lambda = lambda.unwrap_or_else(|| lpct::theory_lambda_for(mechanism, tree.n_leaves(), eps));
    let m = lpct::model_from_sums(tree, &sums, lambda, &settings).unwrap();
    accuracy(&m.predict(test.features.view()).unwrap(), test)
}

fn main() {
    if std::env::var_os("DPFAIR_DATA_DIR").is_none() {
        eprintln!("error: needs DPFAIR_DATA_DIR, the folder holding the data files");
        std::process::exit(2);
    }
    let reps = 40u64;
    let b = dpfair_experiments::load_builtin("diabetes-lpct").expect("diabetes");
    let public = b.public.clone().expect("public rows");
    println!("| ε | setting | Laplace | Hadamard |\n|---|---|---|---|");
    for eps in [1.0, 2.0, 4.0] {
        for (name, depth, lambda) in [
            ("defaults (Theorem 4 depth, λ)", None, None),
            ("depth 3, λ = 0 (private only)", Some(3), Some(0.0)),
        ] {
            let mut acc = [Vec::new(), Vec::new()];
            let mut noise = Noise::seeded(11);
            for seed in 0..reps {
                let mut parts = b.dataset.split(&[0.8, 0.2], seed, Stratify::None).unwrap();
                let test = parts.pop().unwrap();
                let train = parts.pop().unwrap();
                for (k, mech) in [Mechanism::Laplace, Mechanism::Hadamard]
                    .into_iter()
                    .enumerate()
                {
                    let data = Split {
                        public: &public,
                        train: &train,
                        test: &test,
                    };
                    acc[k].push(run(mech, eps, (depth, lambda), &data, &mut noise));
                }
            }
            let show = |a: &[f64]| {
                let m = a.iter().sum::<f64>() / a.len() as f64;
                let v = a.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (a.len() - 1) as f64;
                format!("{m:.3} ± {:.3}", (v / a.len() as f64).sqrt())
            };
            println!("| {eps} | {name} | {} | {} |", show(&acc[0]), show(&acc[1]));
        }
    }
}
