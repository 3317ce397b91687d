//! `dpfair fit lpct-prune`: LPCT-prune (Algorithm 2 of Ma & Yang) in the simulated
//! setting; no tuning parameter (p0 and p_term from Algorithm 2).

use crate::cmd::ldp::SimulatedArgs;
use crate::error::CliResult;
use dpfair::Params;
use dpfair::estimators::LpctPruneParams;
use dpfair::lpct::{Preset, PruneConfig, PruneOptions};

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  dpfair fit lpct-prune --public pub.csv --private priv.csv --target y \\\n    --epsilon 2 --seed 1 --out model.json\n  dpfair predict --model model.json --data test.csv --out pred.csv"
)]
pub struct Args {
    #[command(flatten)]
    common: SimulatedArgs,
    /// Constants of the pruning statistic (docs/deviations.md#lpct-pruning-radius-constants):
    /// Algorithm 2 as printed, Proposition 6's
    /// radius (naive pruning), or the authors' code's.
    #[arg(long, value_enum, default_value_t = PresetArg::Code)]
    preset: PresetArg,
    /// Algorithm 2's termination: two queries at ε/2 each, the second when the flag is set
    /// [default: one query at the full ε, as in the paper's experiments].
    #[arg(long)]
    termination: bool,
    /// Override p0.
    #[arg(long, value_name = "P")]
    p0: Option<u32>,
    /// The node Algorithm 2's walk picks keeps its estimate only when it is Z standard
    /// deviations from 1/2 (noise of the reports and of the labels), else takes its nearest
    /// such ancestor's (docs/deviations.md#lpct-prune-significance-guard); 0 gives the walk
    /// alone (below the majority class on a 95%-one-class target).
    #[arg(
        long,
        value_name = "Z",
        default_value_t = dpfair::lpct::guard::DEFAULT_Z,
        value_parser = crate::cmd::common::parse_guard_z
    )]
    guard: f64,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum PresetArg {
    Alg2Literal,
    Prop6,
    Code,
}

pub fn run(a: Args) -> CliResult {
    let cfg = PruneConfig {
        epsilon: a.common.epsilon,
        p0: a.p0,
        p_term: None,
        options: PruneOptions {
            preset: match a.preset {
                PresetArg::Alg2Literal => Preset::Alg2Literal,
                PresetArg::Prop6 => Preset::Prop6,
                PresetArg::Code => Preset::Code,
            },
            invoke_termination: a.termination,
            ..Default::default()
        },
        tree: a.common.tree.settings(a.common.seeds.seed),
        guard: (a.guard != 0.0).then_some(a.guard),
    };
    let run = a.common.fit(|public| {
        Ok(LpctPruneParams::from_config(cfg, public)
            .check_fraction(a.common.check_fraction)
            .check()?)
    })?;
    run.save(&a.common.out)?;
    Ok(())
}
