//! `dpfair fit fdp-fair`: FDP-Fair (Xue & Yu, seed 000, Algorithm 1) simulated over `--sites`
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
use crate::cmd::fit::cdp_fair::method_error;
use crate::error::{CliError, CliResult};
use dpfair::fdp_fair::simulate::{contiguous_sites, fit};
use dpfair::fdp_fair::{Accounting, Config};
use dpfair::model::FittedModel;
use dpfair::plugin::release::PiRelease;
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

pub fn run(args: Args) -> CliResult {
    args.out.check(&[args.data.input()])?;
    let e = args.privacy.epsilon;
    if !(e.is_finite() && e > 0.0) {
        return Err(CliError::BadInput(format!(
            "--epsilon must be finite and > 0, got {e}"
        )));
    }
    let accounting = args.privacy.accounting();
    if args.empirical_pi && accounting == Accounting::Strict {
        return Err(CliError::BadInput(
            "--empirical-pi is not private: only with --accounting paper".into(),
        ));
    }
    let search = args.search.config();
    search.validate().map_err(method_error)?;
    let loaded = load_site_data(&args.data, &args.bounds)?;
    let sites = contiguous_sites(&loaded.dataset, args.sites).map_err(method_error)?;
    let config = Config {
        epsilon: e,
        delta: args.privacy.delta,
        accounting,
        bandwidth: args.basis.bandwidth,
        n_frequencies: args.basis.frequencies,
        basis_seed: args.basis.basis_seed,
        pi: args.empirical_pi.then_some(PiRelease::Empirical),
        server: args.server.params(),
        search,
    };
    let mut noises: Vec<Noise> = (0..sites.len())
        .map(|s| args.privacy.seeds.noise_for_site(s as u64))
        .collect();
    let fitted = fit(&config, &sites, &mut noises).map_err(method_error)?;
    if let Some(info) = &fitted.model.federated {
        eprintln!(
            "fdp-fair: S = {}, h = {}, M = {}, ω = {:.5}, τ̃ = {:.5} (band found: {}, non-increasing: {})",
            sites.len(),
            fitted.model.bandwidth,
            info.search.depth,
            info.search.omega,
            info.search.tau,
            info.search.feasible,
            info.search.monotone
        );
    }
    args.out.save(
        &loaded,
        fitted.ledger,
        noises.first(),
        &config,
        FittedModel::CdpFair(fitted.model),
    )?;
    Ok(())
}
