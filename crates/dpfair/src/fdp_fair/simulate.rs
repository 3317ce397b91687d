//! S sites in one process (the paper's experiments, `dpfair fit fdp-fair --sites N`): the same
//! four protocol steps as the file protocol ([`crate::fdp_fair::protocol`]), called in order, each
//! site with its own noise stream.

use crate::cdp_fair::Model;
use crate::fdp_fair::protocol::{
    Global, Round2, SiteParams, aggregate_round1, aggregate_round2, site_ledger, site_round1,
    site_round2,
};
use crate::fdp_fair::{Config, SearchConfig, federated_bandwidth};
use crate::plugin::error::{Result, invalid};
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise};

/// The name of site `s` (0-based) in a simulation: `site1`, `site2`, …
pub fn site_name(s: usize) -> String {
    format!("site{}", s + 1)
}

/// Splits one data set into `sites` sites of contiguous row blocks, in file order (site `s` gets
/// rows `⌊sN/S⌋ .. ⌊(s+1)N/S⌋`). Shuffle a sorted file first.
pub fn contiguous_sites(data: &Dataset, sites: usize) -> Result<Vec<Dataset>> {
    let n = data.n_rows();
    if sites == 0 || sites > n / 8 {
        return Err(invalid(
            "sites",
            format!("{sites} sites for {n} rows (need 1 ≤ S and at least 8 rows per site)"),
        ));
    }
    Ok((0..sites)
        .map(|s| {
            let rows: Vec<usize> = (s * n / sites..(s + 1) * n / sites).collect();
            data.select(&rows)
        })
        .collect())
}

/// A simulated fit: the model, the federation's ledger and the broadcast of round 1.
#[derive(Clone, Debug)]
pub struct Simulated {
    pub model: Model,
    pub ledger: Ledger,
    pub global: Global,
}

/// Both rounds of Algorithm 1 at every site and the server's broadcast between them: every
/// release of the protocol. None of it depends on `config.search` (α, ρ*, C_ω), so one `Rounds`
/// serves the selections (Alg. 2 S2–S3, post-processing) of a whole sweep over those.
#[derive(Clone, Debug)]
pub struct Rounds {
    pub global: Global,
    pub round2: Vec<Round2>,
}

impl Rounds {
    /// Round 2 at the server with `search`: the classifier and the federation's ledger.
    pub fn select(&self, search: &SearchConfig) -> Result<Simulated> {
        let (model, ledger) = aggregate_round2(&self.global, &self.round2, search)?;
        Ok(Simulated {
            model,
            ledger,
            global: self.global.clone(),
        })
    }
}

/// Algorithm 1 on `sites` (one data set per site, features on `[0,1]^d`), site `s` drawing its
/// noise from `noises[s]`: [`rounds`], then [`Rounds::select`] with `config.search`.
pub fn fit(config: &Config, sites: &[Dataset], noises: &mut [Noise]) -> Result<Simulated> {
    rounds(config, sites, noises)?.select(&config.search)
}

/// Both rounds of Algorithm 1 on `sites`, site `s` drawing its noise from `noises[s]`
/// (`config.search` is not used).
pub fn rounds(config: &Config, sites: &[Dataset], noises: &mut [Noise]) -> Result<Rounds> {
    if sites.is_empty() || noises.len() != sites.len() {
        return Err(invalid(
            "sites",
            format!("{} sites and {} noise streams", sites.len(), noises.len()),
        ));
    }
    // One bandwidth for all sites (one shared basis): the federation's public rule.
    let sizes: Vec<(usize, f64)> = sites.iter().map(|d| (d.n_rows(), config.epsilon)).collect();
    let config = Config {
        bandwidth: Some(
            config
                .bandwidth
                .unwrap_or_else(|| federated_bandwidth(&sizes, sites[0].n_features())),
        ),
        ..config.clone()
    };
    let params: Vec<SiteParams> = sites
        .iter()
        .enumerate()
        .map(|(s, d)| config.site_params(&site_name(s), d))
        .collect::<Result<_>>()?;
    let mut ledgers: Vec<Ledger> = params
        .iter()
        .map(|p| site_ledger(p.epsilon, p.delta, p.accounting))
        .collect::<Result<_>>()?;
    let mut round1 = Vec::with_capacity(sites.len());
    for s in 0..sites.len() {
        round1.push(site_round1(
            &params[s],
            &sites[s],
            None,
            &mut ledgers[s],
            &mut noises[s],
        )?);
    }
    let global = aggregate_round1(&round1, &config.server)?;
    let mut round2 = Vec::with_capacity(sites.len());
    for s in 0..sites.len() {
        round2.push(site_round2(
            &global,
            &params[s].site,
            &sites[s],
            &mut ledgers[s],
            &mut noises[s],
        )?);
    }
    Ok(Rounds { global, round2 })
}
