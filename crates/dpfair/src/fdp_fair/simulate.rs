//! S sites in one process (the paper's experiments, `dpfair fit fdp-fair --sites N`): the same
//! four protocol steps as the file protocol ([`crate::fdp_fair::protocol`]), called in order, each
//! site with its own noise stream.

use crate::fdp_fair::protocol::{
    FederatedModel, Global, Round2, SiteParams, SumsMemo, aggregate_round1, aggregate_round2,
    calibration_rows, site_ledger, site_round1_with, site_round2_with,
};
use crate::fdp_fair::{Config, SearchConfig, federated_bandwidth};
use crate::plugin::error::{Result, invalid};
use crate::plugin::release::{PluginEstimate, eta_grouped_many};
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
    pub model: FederatedModel,
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
    let mut fits = rounds_many(std::slice::from_ref(config), sites, &mut [noises])?;
    Ok(fits.pop().expect("one configuration, one set of rounds"))
}

/// [`rounds`] for several configurations on the same sites: configuration `c`'s site `s` draws
/// from `noises[c][s]`, in [`rounds`]' order, so fit `c` is `rounds(&configs[c], …)` bit for bit
/// (on any number of threads: the basis sums are exact lattice sums). What they share is
/// computed once: a site's kernel sums wherever the basis (seed, bandwidth) and split are the same,
/// and the random-feature map of its calibration rows for every broadcast estimate in one basis.
/// That is the case of one seed's fits at several ε (the federated bandwidth rule is at its
/// statistical term for all but tiny `nε`), whose sine and cosine work this divides by the
/// number of ε.
///
/// ```
/// use dpfair::data::synthetic::{Design, FdpFairDesign};
/// use dpfair::fdp_fair::Config;
/// use dpfair::fdp_fair::simulate::{rounds, rounds_many};
/// use dpfair_privacy::Noise;
///
/// let sites: Vec<_> = (0..2).map(|s| FdpFairDesign::default().generate(300, s).unwrap()).collect();
/// let configs: Vec<Config> = [1.0, 4.0]
///     .map(|epsilon| Config { epsilon, n_frequencies: 32, ..Config::default() })
///     .to_vec();
/// let streams = || vec![Noise::seeded(1), Noise::seeded(2)];
/// let (mut first, mut second) = (streams(), streams());
/// let both = rounds_many(&configs, &sites, &mut [&mut first, &mut second]).unwrap();
/// let one = rounds(&configs[1], &sites, &mut streams()).unwrap();
/// assert_eq!(both[1].global, one.global);
/// assert_eq!(both[1].round2, one.round2);
/// ```
pub fn rounds_many(
    configs: &[Config],
    sites: &[Dataset],
    noises: &mut [&mut [Noise]],
) -> Result<Vec<Rounds>> {
    if sites.is_empty() || noises.len() != configs.len() {
        return Err(invalid(
            "sites",
            format!(
                "{} sites, {} configurations and {} sets of noise streams",
                sites.len(),
                configs.len(),
                noises.len()
            ),
        ));
    }
    if let Some(n) = noises.iter().find(|n| n.len() != sites.len()) {
        return Err(invalid(
            "sites",
            format!("{} sites and {} noise streams", sites.len(), n.len()),
        ));
    }
    let mut params = Vec::with_capacity(configs.len());
    let mut servers = Vec::with_capacity(configs.len());
    let mut ledgers = Vec::with_capacity(configs.len());
    for config in configs {
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
        let p: Vec<SiteParams> = sites
            .iter()
            .enumerate()
            .map(|(s, d)| config.site_params(&site_name(s), d))
            .collect::<Result<_>>()?;
        ledgers.push(
            p.iter()
                .map(|p| site_ledger(p.epsilon, p.delta, p.accounting))
                .collect::<Result<Vec<Ledger>>>()?,
        );
        params.push(p);
        servers.push(config.server);
    }
    let mut memos: Vec<SumsMemo> = sites.iter().map(|_| SumsMemo::default()).collect();
    let mut globals = Vec::with_capacity(configs.len());
    for c in 0..configs.len() {
        let mut round1 = Vec::with_capacity(sites.len());
        for s in 0..sites.len() {
            round1.push(site_round1_with(
                &params[c][s],
                &sites[s],
                None,
                &mut ledgers[c][s],
                &mut noises[c][s],
                &mut memos[s],
            )?);
        }
        globals.push(aggregate_round1(&round1, &servers[c])?);
    }
    drop(memos);
    // Each site's calibration rows scored under every broadcast estimate, one feature map per
    // (split, basis).
    let mut etas: Vec<Vec<Option<Vec<f64>>>> = vec![vec![None; sites.len()]; configs.len()];
    for (s, data) in sites.iter().enumerate() {
        let name = site_name(s);
        for c in 0..configs.len() {
            if etas[c][s].is_some() {
                continue;
            }
            let split = globals[c].site(&name)?.split_seed;
            let same: Vec<usize> = (c..configs.len())
                .filter(|&k| {
                    etas[k][s].is_none()
                        && globals[k].site(&name).is_ok_and(|e| e.split_seed == split)
                })
                .collect();
            let (_, x, a) = calibration_rows(&globals[c], &name, data)?;
            let estimates: Vec<&PluginEstimate> =
                same.iter().map(|&k| &globals[k].estimate).collect();
            for (&k, eta) in same.iter().zip(eta_grouped_many(&estimates, x.view(), &a)?) {
                etas[k][s] = Some(eta);
            }
        }
    }
    let mut out = Vec::with_capacity(configs.len());
    for (c, global) in globals.into_iter().enumerate() {
        let mut round2 = Vec::with_capacity(sites.len());
        for s in 0..sites.len() {
            round2.push(site_round2_with(
                &global,
                &params[c][s].site,
                &sites[s],
                &mut ledgers[c][s],
                &mut noises[c][s],
                etas[c][s].take(),
            )?);
        }
        out.push(Rounds { global, round2 });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fdp_fair::Accounting;
    use serde::Serialize;

    fn json(v: &impl Serialize) -> String {
        serde_json::to_string(v).expect("json")
    }
    use crate::plugin::release::PiRelease;
    use dpfair_data::synthetic::{Design, FdpFairDesign};

    /// Several configurations on the same sites and seeds fitted together (`rounds_many`: a
    /// site's kernel sums and calibration feature map once per basis) equal one `rounds` per
    /// configuration bit for bit — broadcasts, round-2 transcripts, where the streams stand —
    /// in both accounting modes. At ε = 0.75 the federated rule's privacy term sets a wider
    /// bandwidth (a basis of its own), as does the fixed h = 0.3. Several threads: the basis
    /// sums are exact lattice sums, whatever rayon's split points.
    #[test]
    fn rounds_many_equals_one_rounds_per_configuration() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        pool.install(|| {
            let sites: Vec<Dataset> = (0..3)
                .map(|s| {
                    FdpFairDesign::default()
                        .generate(400, 20 + s)
                        .expect("data")
                })
                .collect();
            for accounting in [Accounting::Strict, Accounting::Paper] {
                let paper = accounting == Accounting::Paper;
                let configs: Vec<Config> =
                    [(0.75, None), (2.0, None), (10.0, None), (2.0, Some(0.3))]
                        .map(|(epsilon, bandwidth)| Config {
                            epsilon,
                            accounting,
                            pi: paper.then_some(PiRelease::Empirical),
                            bandwidth,
                            n_frequencies: 40,
                            ..Config::default()
                        })
                        .to_vec();
                let streams = || (0..3).map(|s| Noise::seeded(100 + s)).collect::<Vec<_>>();
                let mut noises: Vec<Vec<Noise>> = configs.iter().map(|_| streams()).collect();
                let mut refs: Vec<&mut [Noise]> =
                    noises.iter_mut().map(Vec::as_mut_slice).collect();
                let many = rounds_many(&configs, &sites, &mut refs).expect("batch");
                for (c, config) in configs.iter().enumerate() {
                    let mut own = streams();
                    let one = rounds(config, &sites, &mut own).expect("one");
                    assert_eq!(
                        json(&many[c].global),
                        json(&one.global),
                        "{accounting:?}, {c}"
                    );
                    assert_eq!(
                        json(&many[c].round2),
                        json(&one.round2),
                        "{accounting:?}, {c}"
                    );
                    for (a, b) in noises[c].iter_mut().zip(&mut own) {
                        assert_eq!(a.public_u64(), b.public_u64());
                    }
                }
            }
            assert!(rounds_many(&[Config::default()], &sites, &mut []).is_err());
        });
    }
}
