//! `dpfair fit lpct`: LPCT (Ma & Yang) in the simulated setting: the public CSV builds
//! the partition, every row of the private CSV is one holder whose ε-LDP report is simulated
//! exactly (per-leaf sums of Laplace noise drawn in O(1)).

use crate::cmd::ldp::SimulatedArgs;
use crate::error::CliResult;
use dpfair::Params;
use dpfair::estimators::Lpct;

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
    /// A leaf keeps its own estimate only when it is Z standard deviations from 1/2 (noise of
    /// the reports and of the labels), else takes its nearest such ancestor's; 0 gives the
    /// paper's eq. (8) in every leaf (on high-dimensional data its leaves hold about one public
    /// row each, and the model is then worse than the majority class).
    #[arg(
        long,
        value_name = "Z",
        default_value_t = dpfair::lpct::guard::DEFAULT_Z,
        value_parser = crate::cmd::common::parse_guard_z
    )]
    guard: f64,
}

pub fn run(a: Args) -> CliResult {
    let run = a.common.fit(|public| {
        let mut p = Lpct::params(public)
            .epsilon(a.common.epsilon)
            .check_fraction(a.common.check_fraction)
            .tree(a.common.tree.settings(a.common.seeds.seed));
        if let Some(d) = a.depth {
            p = p.depth(d);
        }
        if let Some(l) = a.lambda {
            p = p.lambda(l);
        }
        if a.guard != 0.0 {
            p = p.guard(a.guard);
        }
        Ok(p.check()?)
    })?;
    run.save(&a.common.out)?;
    Ok(())
}
