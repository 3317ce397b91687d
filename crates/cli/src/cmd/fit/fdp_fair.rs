//! `dpfair fit fdp-fair`: FDP-Fair (Xue & Yu, Algorithm 1) simulated over `--sites`
//! sites of one CSV, in one process, through the same steps as `dpfair federated`.
//!
//! Rows go to sites in contiguous blocks in file order (site s gets rows ⌊sN/S⌋..⌊(s+1)N/S⌋);
//! with `--seed K`, site s (0-based) draws its noise from seed K + s, so that the file protocol
//! run with `--site site{s+1} --seed K+s --bandwidth H` at each site (H as printed here: by
//! default the federation's bandwidth rule, which a single site cannot compute) gives the same
//! model.

use crate::cmd::common::{BoundsArgs, DataArgs, OutArgs, PrivacyArgs};
use crate::cmd::federated::args::{BasisArgs, SearchArgs, ServerArgs};
use crate::cmd::federated::load_site_data;
use crate::cmd::fit::pipeline::{finish, session_for};
use crate::error::{CliError, CliResult};
use dpfair::estimators::FdpFairParams;
use dpfair::fdp_fair::{Accounting, Config};
use dpfair::plugin::release::PiRelease;
use dpfair::{Estimator, Params};
use dpfair_privacy::Noise;

#[derive(clap::Args)]
#[command(
    after_help = "Example: dpfair fit fdp-fair --data train.csv --target y --sensitive a \
    --bounds x1:0:1,x2:0:1 --sites 4 --epsilon 1 --alpha 0.1 --out MODEL.json\n\n\
    --epsilon and --delta are each site's (ε_s, δ_s) [default δ_s = (N_s/2)^−2]. \
    See `dpfair federated --help` for the real protocol between sites."
)]
pub struct Args {
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    bounds: BoundsArgs,
    #[command(flatten)]
    privacy: PrivacyArgs,
    #[command(flatten)]
    out: OutArgs,
    /// Number of sites S the rows are split into (contiguous blocks in file order).
    #[arg(long, value_name = "S", default_value_t = 4)]
    sites: usize,
    #[command(flatten)]
    basis: BasisArgs,
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    search: SearchArgs,
    /// --accounting paper only: empirical group proportions ("known π", not private).
    #[arg(long)]
    empirical_pi: bool,
}

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> FdpFairParams {
        let config = Config {
            epsilon: self.privacy.epsilon,
            delta: self.privacy.delta,
            accounting: self.privacy.accounting(),
            bandwidth: self.basis.bandwidth,
            n_frequencies: self.basis.frequencies,
            basis_seed: self.basis.basis_seed,
            pi: self.empirical_pi.then_some(PiRelease::Empirical),
            server: self.server.params(),
            search: self.search.config(),
        };
        FdpFairParams::from_config(config, self.sites)
    }
}

pub fn run(args: Args) -> CliResult {
    args.out.check(&[args.data.input()])?;
    let est = args.params().check()?;
    if args.empirical_pi && args.privacy.accounting() == Accounting::Strict {
        return Err(CliError::BadInput(
            "--empirical-pi is not private: only with --accounting paper".into(),
        ));
    }
    let loaded = load_site_data(&args.data, &args.bounds)?;
    let mut noises: Vec<Noise> = (0..est.sites())
        .map(|s| args.privacy.seeds.noise_for_site(s as u64))
        .collect();
    let mut session = session_for(&est.spend(&loaded.dataset)?)?;
    let fitted = est.fit_sites(&loaded.dataset, &mut noises, &mut session)?;
    finish(&est, loaded, fitted).save(&args.out)?;
    Ok(())
}
