//! The protocol's four steps as every transport runs them — the CLI's files (`dpfair federated`),
//! the Python bindings and the Flower apps built on them (`docs/deploy.md`): a site's defaults
//! and checks around [`site_round1`] / [`site_round2`], and the server's model file after
//! [`aggregate_round2`](crate::fdp_fair::protocol::aggregate_round2). The transports only move the transcripts; nothing here depends on how.
//!
//! | step | function | sends |
//! |---|---|---|
//! | a site, round 1 (Alg. 1 S1) | [`site_round1_from`] | its [`Round1`] transcript |
//! | the server, round 1 | [`aggregate_round1`] | the broadcast [`Global`] |
//! | a site, round 2 (Alg. 3) | [`site_round2_from`] | its [`Round2`] transcript |
//! | the server, round 2 (Alg. 2 S2–S3) | [`crate::model::ModelFile::from_federation`] | the model file `dpfair predict` reads |
//!
//! [`aggregate_round1`]: crate::fdp_fair::protocol::aggregate_round1

use crate::fdp_fair::protocol::{
    Global, Round1, Round2, SiteParams, site_ledger, site_round1, site_round2, skip_round1,
};
use crate::fdp_fair::trust::{check_site_name, show_name};
use crate::fdp_fair::{default_bandwidth, default_delta};
use crate::plugin::error::{Error, Result, invalid};
use crate::plugin::eta_model::EtaModel;
use crate::plugin::release::PiRelease;
use crate::predictor::Accounting;
use dpfair_data::Loaded;
use dpfair_privacy::Noise;

/// What a site chooses before round 1; unset values take the protocol's public defaults on the
/// site's size (`δ_s = (N_s/2)^{−2}`, [`default_bandwidth`], [`EtaModel::resolve`]). Round 2 is
/// given the same options.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteOptions {
    /// The site's name, unique among the sites.
    pub site: String,
    /// `ε_s` (each round spends it on its own half of the rows).
    pub epsilon: f64,
    /// `δ_s`; `None` = `(N_s/2)^{−2}` (§5.1.2).
    pub delta: Option<f64>,
    pub accounting: Accounting,
    /// Bandwidth `h` agreed by the sites; `None` = the public rule on this site's size.
    pub bandwidth: Option<f64>,
    /// Random Fourier frequencies `D` of the public basis.
    pub n_frequencies: usize,
    /// Seed of the public basis (the same at every site).
    pub basis_seed: u64,
    /// `π̃` handling (private unless `--accounting paper` asks for the empirical π).
    pub pi: PiRelease,
    /// The estimator of `η_a` (`Auto` resolves by the public column count).
    pub eta_model: EtaModel,
}

impl SiteOptions {
    /// The defaults for site `site` at `ε_s = epsilon`.
    ///
    /// ```
    /// use dpfair::fdp_fair::steps::SiteOptions;
    /// let o = SiteOptions::new("A", 1.0);
    /// assert_eq!((o.site.as_str(), o.epsilon, o.delta), ("A", 1.0, None));
    /// ```
    pub fn new(site: impl Into<String>, epsilon: f64) -> Self {
        SiteOptions {
            site: site.into(),
            epsilon,
            delta: None,
            accounting: Accounting::Strict,
            bandwidth: None,
            n_frequencies: crate::cdp_fair::DEFAULT_FREQUENCIES,
            basis_seed: crate::fdp_fair::protocol::DEFAULT_BASIS_SEED,
            pi: PiRelease::Private,
            eta_model: EtaModel::Auto,
        }
    }

    /// A valid site name ([`check_site_name`]), `ε_s` finite and positive; the empirical π only
    /// in paper mode (it is not private).
    pub fn check(&self) -> Result<()> {
        check_site_name(&self.site)?;
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(invalid(
                "epsilon",
                format!("must be finite and > 0, got {}", self.epsilon),
            ));
        }
        if self.pi == PiRelease::Empirical && self.accounting == Accounting::Strict {
            return Err(invalid(
                "pi",
                "the empirical π is not private: only with --accounting paper",
            ));
        }
        Ok(())
    }

    /// `δ_s` for a site of `n_rows` rows.
    pub fn delta_for(&self, n_rows: usize) -> f64 {
        self.delta.unwrap_or_else(|| default_delta(n_rows))
    }

    /// The round-1 parameters on the site's data (`n_rows` rows of `dim` encoded features).
    pub fn params(&self, n_rows: usize, dim: usize) -> Result<SiteParams> {
        self.check()?;
        Ok(SiteParams {
            site: self.site.clone(),
            epsilon: self.epsilon,
            delta: self.delta_for(n_rows),
            accounting: self.accounting,
            bandwidth: self
                .bandwidth
                .unwrap_or_else(|| default_bandwidth(n_rows, dim, self.epsilon)),
            n_frequencies: self.n_frequencies,
            basis_seed: self.basis_seed,
            pi: self.pi,
            split_seed: None,
            eta_model: self
                .eta_model
                .resolve(dim, self.accounting == Accounting::Paper),
        })
    }
}

/// Round 1 at a site: a fresh ledger over its `(ε_s, δ_s)`, Alg. 1 S1 on its training half
/// ([`site_round1`], charged before the transcript exists), and the transcript sealed to the
/// server's `run` id. `loaded` is the site's data scaled with the federation's public bounds;
/// its schema travels in the transcript (the server refuses sites whose schemas differ).
pub fn site_round1_from(
    options: &SiteOptions,
    loaded: &Loaded,
    run: Option<String>,
    noise: &mut Noise,
) -> Result<Round1> {
    let data = &loaded.dataset;
    let params = options.params(data.n_rows(), data.n_features())?;
    let mut ledger = site_ledger(params.epsilon, params.delta, params.accounting)?;
    let mut r1 = site_round1(
        &params,
        data,
        Some(loaded.schema.clone()),
        &mut ledger,
        noise,
    )?;
    r1.bind(run);
    Ok(r1)
}

/// Round 2 at a site, given the server's broadcast and the site's own round-1 transcript
/// (required: `round1 = None` is refused, `docs/federated-trust.md`). Refuses a broadcast whose
/// entry for this site is not what its round 1 sent (split seed, `N_s`, `(ε_s, δ_s)`), or whose
/// schema or run id differ (a broadcast with another split seed would make the trees read rows
/// round 1 released, spending `ε_s` twice on them); checks that the data (schema, size),
/// `(ε_s, δ_s)` and accounting mode are round 1's, then releases Algorithm 3's trees of the
/// calibration half ([`site_round2`]) on a fresh ledger over the same budget (the halves are
/// disjoint: parallel composition). `noise` is a fresh source: OS noise, or the seed round 1 was
/// given (its round-1 draws are skipped, [`skip_round1`], so a seeded run continues round 1).
pub fn site_round2_from(
    global: &Global,
    options: &SiteOptions,
    loaded: &Loaded,
    round1: Option<&Round1>,
    noise: &mut Noise,
) -> Result<Round2> {
    options.check()?;
    global.validate()?;
    let name = &options.site;
    let Some(r1) = round1 else {
        return Err(invalid(
            "round1",
            format!(
                "site `{name}`: round 2 needs this site's own round-1 transcript (--round1 R1.json), \
                 to check that the broadcast hands back its split seed"
            ),
        ));
    };
    let entry = global.site(name)?;
    let refuse = |what: &str| {
        Err(Error::InvalidData(format!(
            "site `{name}`: the broadcast's {what} is not what this site's round 1 sent; refusing \
             to release round 2 (it could re-read the rows round 1 released)"
        )))
    };
    if !r1.is_sealed() || r1.site != *name {
        return Err(Error::InvalidData(format!(
            "site `{name}`: --round1 is not this site's sealed round-1 transcript (site `{}`)",
            show_name(&r1.site)
        )));
    }
    let own = (r1.split_seed, r1.n_rows, r1.epsilon, r1.delta);
    if own != (entry.split_seed, entry.n_rows, entry.epsilon, entry.delta) {
        return refuse("entry for this site (split seed, N_s, ε_s, δ_s)");
    }
    if r1.schema != global.schema {
        return refuse("data schema");
    }
    if r1.run != global.run {
        return refuse("run id");
    }
    if r1.accounting != global.accounting {
        return refuse("accounting mode");
    }
    if global.schema.as_ref() != Some(&loaded.schema) {
        return Err(Error::InvalidData(format!(
            "site {name}: the columns, encodings or bounds differ from round 1 (use the same \
             data options in both rounds)"
        )));
    }
    let delta = options.delta_for(loaded.dataset.n_rows());
    if (options.epsilon, delta) != (entry.epsilon, entry.delta) {
        return Err(Error::InvalidData(format!(
            "site {name}: epsilon {} and delta {delta}, but round 1 used ε = {}, δ = {}",
            options.epsilon, entry.epsilon, entry.delta
        )));
    }
    if options.accounting != global.accounting {
        return Err(Error::InvalidData(format!(
            "site {name}: accounting {:?} differs from round 1's ({:?})",
            options.accounting, global.accounting
        )));
    }
    let mut ledger = site_ledger(entry.epsilon, entry.delta, global.accounting)?;
    skip_round1(noise);
    site_round2(global, name, &loaded.dataset, &mut ledger, noise)
}
