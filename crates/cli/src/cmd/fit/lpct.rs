//! `dpfair fit lpct`: LPCT (Ma & Yang, seed 002) in the simulated setting: the public CSV builds
//! the partition, every row of the private CSV is one holder whose ε-LDP report is simulated
//! exactly (per-leaf sums of Laplace noise drawn in O(1)).

use crate::cmd::ldp::{SimulatedArgs, lpct_err};
use crate::error::CliResult;
use dpfair::lpct::{self, LpctConfig};
use dpfair::model::FittedModel;

#[derive(clap::Args)]
#[command(
    after_help = "Example (public and private rows in two CSV files with the same columns; the private rows'\nreports are simulated here, `dpfair ldp --help` gives the real client / collector commands):\n  dpfair fit lpct --public pub.csv --private priv.csv --target y \\\n    --epsilon 2 --seed 1 --out model.json\n  dpfair predict --model model.json --data test.csv --out pred.csv\n\nDefaults need no tuning on a test set: the depth follows Theorem 4 (2^p ≍ δ^-1, each private\nreport counted as ε²/40 of an observation) and λ = 1 + 160·leaves/ε²."
)]
pub struct Args {
    #[command(flatten)]
    common: SimulatedArgs,
    /// The depth p [default: Theorem 4's 2^p ≍ δ^{−1} at α = γ = 1, with the noise variance
    /// 40/ε² per holder in δ].
    #[arg(long, value_name = "P")]
    depth: Option<u32>,
    /// The public weight λ of eq. (8) [default: 1 + 160·leaves/ε², Theorem 4's λ ≍ 1 at
    /// α = γ = 1 with the inverse-variance constant].
    #[arg(long, value_name = "L")]
    lambda: Option<f64>,
}

pub fn run(a: Args) -> CliResult {
    let (public, private, mut ledger, mut noise) = a.common.load()?;
    let cfg = LpctConfig {
        epsilon: a.common.epsilon,
        depth: a.depth,
        lambda: a.lambda,
        tree: a.common.tree.settings(a.common.seeds.seed),
    };
    let m =
        lpct::fit(&cfg, &public.dataset, &private, &mut ledger, &mut noise).map_err(lpct_err)?;
    eprintln!("LPCT: depth {}, λ = {}", m.depth, m.lambda);
    a.common
        .out
        .save(&public, ledger, Some(&noise), &cfg, FittedModel::Lpct(m))?;
    Ok(())
}
