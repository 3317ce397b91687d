//! The two-round protocol of Algorithm 1 (`docs/deviations.md#fdp-fair-protocol-rounds`) as transcripts: what a site sends, what the
//! server sends back, and the server's validation of everything it receives.
//!
//! | step | who | reads | writes |
//! |---|---|---|---|
//! | [`site_round1`] | each site | its data | [`Round1`]: `π̃^s`, the functional releases, `N_s`, split seed, `(ε_s, δ_s)`, ledger |
//! | [`aggregate_round1`] | server | all [`Round1`] | [`Global`]: `η̃_a`, `π̃_a` (ν-weighted), basis, depth `M`, weights, each site's split seed |
//! | [`site_round2`] | each site | [`Global`], its data | [`Round2`]: its two noisy trees (Alg. 3) on its calibration half, ledger |
//! | [`aggregate_round2`] | server | [`Global`], all [`Round2`] | the model (Alg. 2 S2–S3 and the OUTPUT of Alg. 1) |
//!
//! A site's split into training and calibration halves (`n_s = ⌈N_s/2⌉`, Alg. 1) is a public
//! random permutation from a seed the site draws in round 1 and records in its transcript; the
//! server hands it back in [`Global`], so round 2 repeats the split without any state file.
//! Transcripts carry only released (noisy) values, public sizes and seeds, the site's `(ε_s, δ_s)`
//! and ledger. Round 1 spends `(ε_s, δ_s)` on the training half, round 2 `(ε_s, δ_s)` on the
//! disjoint calibration half: parallel composition, `(ε_s, δ_s)` per site (Prop. 19).
//!
//! **What the server trusts.** Nothing a site sends is taken at face value: before any site is
//! asked to spend its round-2 budget, [`aggregate_round1`] checks every transcript
//! ([`validate_round1`]: shape, ranges, the simplex, the claimed size against the server's public
//! bound, the site's ledger against its claimed `(ε_s, δ_s)`, the run id, the binding digest, and
//! copies of another site's transcript); [`aggregate_round2`] checks the trees the same way
//! ([`validate_round2`]). What a dishonest site can still do is in `docs/federated-trust.md`.
//!
//! **Noise streams.** A site's round-1 releases use `noise.fork()` and its split seed the next
//! `u64` of `noise`; round 2 uses the fork after that. With OS noise this is just independent
//! noise; with a seeded stream ([`skip_round1`]) a site that restarts from the same seed in
//! round 2 continues where round 1 stopped, so the file protocol and the in-process simulation
//! give the same model from the same seeds.

use crate::cdp_fair::{
    CALIBRATION_HALF, Method, Model, TRAINING_HALF, groups_and_labels, halves, in_part,
};
use crate::fdp_fair::correction::{Clip, OmegaSite};
use crate::fdp_fair::search::{DepthRule, Search, SearchConfig, search};
use crate::fdp_fair::tree::{SiteTrees, TreeNoise, release_trees};
use crate::fdp_fair::trust::{
    check_dp_sgd, check_kernel, check_logistic, check_pi, check_site_name, check_trees, show_name,
    tree_sigma,
};
use crate::plugin::RffBasis;
use crate::plugin::classifier::FairPluginClassifier;
use crate::plugin::dp_sgd::{self, PI_SHARE};
use crate::plugin::error::{Error, Result, invalid};
use crate::plugin::eta_model::{EtaModel, S1Statistics};
use crate::plugin::logistic::{FeatureMap, LogisticS1, public_l2};
use crate::plugin::release::{
    EtaEstimate, KernelSums, PI_FLOOR, PiRelease, PluginEstimate, S1Accounting, S1Plan,
    check_eps_delta,
};
use crate::plugin::split::random_split;
use crate::plugin::threshold::score;
use crate::predictor::Accounting;
use dpfair_data::error::clip;
use dpfair_data::{Dataset, Schema};
use dpfair_privacy::{Budget, Composition, Entry, Ledger, Noise, Partition};
use ndarray::Axis;
use serde::{Deserialize, Serialize};

/// `format` of a round-1 transcript.
pub const ROUND1_FORMAT: &str = "dpfair-fdp-fair-round1";
/// `format` of the server's broadcast.
pub const GLOBAL_FORMAT: &str = "dpfair-fdp-fair-global";
/// `format` of a round-2 transcript.
pub const ROUND2_FORMAT: &str = "dpfair-fdp-fair-round2";
/// Protocol version written and read by this build.
pub const PROTOCOL_VERSION: u32 = 1;
/// Default seed of the public random-feature basis (all sites must use the same basis).
pub const DEFAULT_BASIS_SEED: u64 = 0x000f_d9fa;
/// Default public bound on a site's claimed size `N_s`: a site holds its rows in memory (at
/// least 8 bytes per feature per row), so 10^8 rows is beyond what one machine of the federation
/// is expected to load; a server with larger sites raises it (`--max-site-rows`).
pub const DEFAULT_MAX_SITE_ROWS: usize = 100_000_000;
/// Relative tolerance when a site's ledger total is compared with its claimed `(ε_s, δ_s)`
/// (floating-point composition).
const LEDGER_TOLERANCE: f64 = 1e-9;

/// What every site must agree on before round 1 (public).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteParams {
    /// The site's name (unique among the sites).
    pub site: String,
    /// `ε_s`, `δ_s` of this site (each round spends it on its own half).
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    pub delta: f64,
    pub accounting: Accounting,
    /// Bandwidth `h`, number of frequencies and seed of the shared public basis.
    pub bandwidth: f64,
    pub n_frequencies: usize,
    pub basis_seed: u64,
    /// `π̃` handling: private (default) or the experiments' empirical "known π" (paper only).
    pub pi: PiRelease,
    /// A fixed split seed (tests); `None` = drawn from the noise stream.
    pub split_seed: Option<u64>,
    /// The estimator of `η_a` (resolved: kernel, logistic or DP-SGD; every site must use the
    /// same).
    #[serde(default)]
    pub eta_model: EtaModel,
}

/// A site's round-1 transcript (Alg. 1 S1 at site `s`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Round1 {
    pub format: String,
    pub version: u32,
    pub site: String,
    /// The run id the server announced (`--run`), binding the transcript to one run.
    #[serde(default)]
    pub run: Option<String>,
    /// `N_s` (public under replace-one neighbours).
    pub n_rows: usize,
    pub split_seed: u64,
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    pub delta: f64,
    pub accounting: Accounting,
    /// Column names, encodings and scaling the site used (public metadata; `None` in-process).
    pub schema: Option<Schema>,
    /// `π̃^s_a` and the released coefficients of `p̃^s_{X|A=a}`, `p̃^s_{X,Y|A=a}(·,1)`.
    pub release: PluginEstimate,
    pub ledger: Ledger,
    /// Digest of the site name, run id and content ([`Round1::bind`]): an edit that does not
    /// recompute it (a copy renamed to another site, a changed number) is refused.
    #[serde(default)]
    pub binding: String,
}

impl Round1 {
    fn compute_binding(&self) -> String {
        fingerprint(&(
            &self.format,
            self.version,
            &self.site,
            &self.run,
            self.n_rows,
            self.split_seed,
            self.epsilon,
            self.delta,
            &self.accounting,
            &self.schema,
            &self.release,
            &self.ledger,
        ))
    }

    /// Set the run id and seal the transcript with its binding digest.
    pub fn bind(&mut self, run: Option<String>) {
        self.run = run;
        self.binding = self.compute_binding();
    }

    /// Whether the binding digest matches the content (unedited since [`Round1::bind`]).
    pub fn is_sealed(&self) -> bool {
        self.binding == self.compute_binding()
    }
}

/// One site as the server records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteEntry {
    pub site: String,
    pub n_rows: usize,
    /// `ň_s = N_s − ⌈N_s/2⌉`.
    pub n_cal: usize,
    pub split_seed: u64,
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    pub delta: f64,
    /// `ν_s` (S1 aggregation) and `μ_s` (DD aggregation).
    pub nu: f64,
    pub mu: f64,
    /// The site's round-1 ledger (what it spent on its training half).
    pub ledger: Ledger,
}

/// How the server weighs the sites.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Weights {
    /// Eq. (8)–(9): `ν_s ∝ N_s ∧ N_s² ε_s² h^d`, `μ_s ∝ N_s ∧ N_s² ε_s²` (`1/S` for equal sites).
    #[default]
    Paper,
    /// `ν_s = μ_s = 1/S` (the code).
    Equal,
}

/// The server's round-1 choices.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerParams {
    pub depth: DepthRule,
    pub weights: Weights,
    /// The run id the server announced to the sites; every transcript must carry it.
    pub run: Option<String>,
    /// Public bound on each site's `N_s` ([`DEFAULT_MAX_SITE_ROWS`] when `None`).
    pub max_site_rows: Option<usize>,
}

/// The server's broadcast after round 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Global {
    pub format: String,
    pub version: u32,
    pub accounting: Accounting,
    /// Tree depth `M` of Algorithm 2.
    pub depth: usize,
    pub sites: Vec<SiteEntry>,
    /// The aggregated `η̃_a`, `π̃_a` (evaluable by every site).
    pub estimate: PluginEstimate,
    pub schema: Option<Schema>,
    /// The run id (when the server announced one).
    #[serde(default)]
    pub run: Option<String>,
    /// A fingerprint of everything above: round-2 transcripts carry it back.
    pub fingerprint: String,
}

/// A site's round-2 transcript (Alg. 3 at site `s`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Round2 {
    pub format: String,
    pub version: u32,
    pub site: String,
    /// [`Global::fingerprint`] of the broadcast the trees were built against.
    pub global: String,
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    pub delta: f64,
    pub trees: SiteTrees,
    pub ledger: Ledger,
    /// Digest of the site name, the broadcast's fingerprint and the content ([`Round2::bind`]).
    #[serde(default)]
    pub binding: String,
}

impl Round2 {
    fn compute_binding(&self) -> String {
        fingerprint(&(
            &self.format,
            self.version,
            &self.site,
            &self.global,
            self.epsilon,
            self.delta,
            &self.trees,
            &self.ledger,
        ))
    }

    /// Seal the transcript with its binding digest.
    pub fn bind(&mut self) {
        self.binding = self.compute_binding();
    }
}

/// What a fitted FDP-Fair model records about the federation (stored in [`Model`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FederatedInfo {
    pub sites: Vec<SiteEntry>,
    pub search: Search,
    pub config: SearchConfig,
}

impl FederatedInfo {
    /// The server's private estimate of the disparity at τ̃ (post-processing of the sites'
    /// released trees), its standard deviation, and whether the estimate and its one-sided bound
    /// (`z·sd` above it, the noise margin of [`SearchConfig::margin_z`]) are within α.
    ///
    /// ```
    /// # use dpfair::fdp_fair::{FederatedInfo, SearchConfig};
    /// # use dpfair::fdp_fair::search::Search;
    /// let search = Search { tau: 0.0, depth: 1, omega: 0.0, dd: vec![1.0, 0.05, -1.0],
    ///     dd_corrected: vec![1.0, 0.05, -1.0], monotone: true, alg4_null: false, feasible: true,
    ///     dd_sd: vec![0.0, 0.02, 0.0], mix: None };
    /// let info = FederatedInfo { sites: vec![], search, config: SearchConfig::default() };
    /// assert!(info.estimate_summary().contains("D̃D = 0.0500 (raw 0.0500, sd 0.0200); within α: true"));
    /// ```
    pub fn estimate_summary(&self) -> String {
        let search = &self.search;
        let (alpha, z) = (self.config.alpha, self.config.margin_z);
        let corrected = search.dd_at_tau();
        let raw = search.mixed(&search.dd);
        let sd = search.sd_at_tau();
        let bound = corrected.abs() + z * sd;
        format!(
            "the server's private estimate at τ̃ (from the sites' noisy trees): \
             monotone D̃D = {corrected:.4} (raw {raw:.4}, sd {sd:.4}); within α: {}; \
             with the noise margin ({z}·sd, bound {bound:.4}) within α: {}",
            corrected.abs() <= alpha,
            bound <= alpha
        )
    }
}

/// FDP-Fair's fitted model: the plug-in classifier the server assembles from the sites'
/// transcripts (a [`Model`] with `method = fdp-fair`; its fields read through `Deref`) and the
/// server's record of the federation. Saved as CDP-Fair's model with a `federated` field
/// ([`crate::model::SavedPlugin`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FederatedModel {
    pub plugin: Model,
    pub federated: FederatedInfo,
}

impl std::ops::Deref for FederatedModel {
    type Target = Model;
    fn deref(&self) -> &Model {
        &self.plugin
    }
}

impl crate::predictor::Predictor for FederatedModel {
    fn method(&self) -> &'static str {
        crate::predictor::Predictor::method(&self.plugin)
    }

    fn predict(
        &self,
        data: &Dataset,
        rng: &mut Noise,
    ) -> crate::predictor::Result<crate::predictor::Output> {
        crate::predictor::Predictor::predict(&self.plugin, data, rng)
    }
}

/// The ledger a site charges: its own `(ε_s, δ_s)`, or unlimited in paper mode (the paper's
/// procedure is recorded, not refused).
pub fn site_ledger(epsilon: f64, delta: f64, accounting: Accounting) -> Result<Ledger> {
    Ok(match accounting {
        Accounting::Strict => Ledger::new(Budget::approx(epsilon, delta)?),
        Accounting::Paper => Ledger::new(Budget::approx(f64::INFINITY, delta)?),
    })
}

/// A site's training / calibration split (drawn with its public `split_seed`).
fn partition(site: &str, split_seed: u64) -> Partition {
    halves(
        format!("site {site}: training / calibration halves"),
        split_seed,
    )
}

/// The rows of a site: `(training rows, calibration rows)`, `n_s = ⌈N_s/2⌉` (Alg. 1).
pub fn site_split(n_rows: usize, seed: u64) -> (Vec<usize>, Vec<usize>) {
    random_split(n_rows, n_rows.div_ceil(2), seed)
}

/// The entries `ledger` recorded from index `start` on, as a ledger of their own (a transcript
/// carries only its round's releases).
fn entries_since(ledger: &Ledger, start: usize) -> Result<Ledger> {
    let mut out = Ledger::for_relation(ledger.budget(), ledger.relation());
    out.record_noise_source(ledger.noise_source());
    for e in &ledger.entries()[start..] {
        out.charge(e.clone())?;
    }
    Ok(out)
}

/// Advances a seeded site stream past round 1 (see the module docs).
pub fn skip_round1(noise: &mut Noise) {
    let _ = noise.fork();
    let _ = noise.public_u64();
}

/// Round 1 at one site: Alg. 1 S1 (S1.1 `π̃^s_a`, S1.2 the functional releases) on the training
/// half, charging `ledger`.
pub fn site_round1(
    params: &SiteParams,
    data: &Dataset,
    schema: Option<Schema>,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Round1> {
    site_round1_with(
        params,
        data,
        schema,
        ledger,
        noise,
        &mut SumsMemo::default(),
    )
}

/// A site's kernel sums (its training half's random-feature sums) kept for the next round 1 that
/// uses the same basis and split: the in-process simulation's fits of one seed at several ε
/// ([`crate::fdp_fair::simulate::rounds_many`]). The sums read no ε, so reusing them changes
/// nothing a release draws.
#[derive(Default)]
pub(crate) struct SumsMemo {
    kernel: Vec<(RffBasis, Vec<usize>, KernelSums)>,
}

impl SumsMemo {
    /// The kernel sums of `basis` on `rows` of `data` (computed by `compute` when missing).
    fn kernel(
        &mut self,
        basis: &RffBasis,
        rows: &[usize],
        compute: impl FnOnce() -> Result<KernelSums>,
    ) -> Result<KernelSums> {
        if let Some((_, _, sums)) = self
            .kernel
            .iter()
            .find(|(b, r, _)| b == basis && r[..] == rows[..])
        {
            return Ok(sums.clone());
        }
        let sums = compute()?;
        self.kernel
            .push((basis.clone(), rows.to_vec(), sums.clone()));
        Ok(sums)
    }
}

/// [`site_round1`], the kernel sums taken from `memo` when they are there.
pub(crate) fn site_round1_with(
    params: &SiteParams,
    data: &Dataset,
    schema: Option<Schema>,
    ledger: &mut Ledger,
    noise: &mut Noise,
    memo: &mut SumsMemo,
) -> Result<Round1> {
    check_eps_delta(params.epsilon, params.delta)?;
    ledger.record_noise(noise);
    check_site_name(&params.site)?;
    let (a, y) = groups_and_labels(data)?;
    if data.n_rows() < 8 {
        return Err(Error::InvalidData(format!(
            "site `{}`: {} rows; a site needs at least 8",
            params.site,
            data.n_rows()
        )));
    }
    if params.accounting == Accounting::Strict && params.pi == PiRelease::Empirical {
        return Err(invalid(
            "pi",
            "empirical π is not private: use --accounting paper",
        ));
    }
    if params.pi == PiRelease::Skip {
        return Err(invalid("pi", "FDP-Fair needs π̃"));
    }
    let mut release_noise = noise.fork();
    let drawn = noise.public_u64();
    let split_seed = params.split_seed.unwrap_or(drawn);
    let (train, _) = site_split(data.n_rows(), split_seed);
    let x = data.features.select(Axis(0), &train);
    let at: Vec<u32> = train.iter().map(|&i| a[i]).collect();
    let yt: Vec<u8> = train.iter().map(|&i| y[i]).collect();
    // `None`: the DP-SGD plug-in, which trains on the rows rather than releasing statistics.
    let sums = match params
        .eta_model
        .resolve(data.n_features(), params.accounting == Accounting::Paper)
    {
        EtaModel::DpSgd => None,
        EtaModel::Logistic => {
            // Blocks of the joint release: π̃_0, π̃_1 and the weights.
            let l2 = public_l2(train.len(), 3, params.epsilon, params.delta)?;
            Some(S1Statistics::Logistic(LogisticS1::compute(
                x.view(),
                &at,
                &yt,
                l2,
            )?))
        }
        _ => {
            let basis = RffBasis::new(
                data.n_features(),
                params.bandwidth,
                params.n_frequencies,
                params.basis_seed,
            )?;
            Some(S1Statistics::Kernel(memo.kernel(&basis, &train, || {
                KernelSums::compute(&basis, x.view(), &at, &yt)
            })?))
        }
    };
    let plan = S1Plan {
        epsilon: params.epsilon,
        delta: params.delta,
        accounting: match params.accounting {
            Accounting::Strict => S1Accounting::Strict,
            Accounting::Paper => S1Accounting::Paper,
        },
        pi: params.pi,
        c_k: 1.0,
        label_prefix: format!("site {}: ", params.site),
    };
    let start = ledger.entries().len();
    let partition = partition(&params.site, split_seed);
    let release = in_part(ledger, &partition, TRAINING_HALF, |l| match &sums {
        Some(sums) => sums.release(&plan, l, &mut release_noise),
        None => site_dp_sgd(&plan, x.view(), &at, &yt, l, &mut release_noise),
    })?;
    let mut r1 = Round1 {
        format: ROUND1_FORMAT.into(),
        version: PROTOCOL_VERSION,
        site: params.site.clone(),
        run: None,
        n_rows: data.n_rows(),
        split_seed,
        epsilon: params.epsilon,
        delta: params.delta,
        accounting: params.accounting,
        schema,
        release,
        ledger: entries_since(ledger, start)?,
        binding: String::new(),
    };
    r1.bind(None);
    Ok(r1)
}

/// S1 with the DP-SGD plug-in at one site ([`crate::plugin::dp_sgd`]): `π̃` from a Laplace count
/// at [`PI_SHARE`]`·ε_s`, then `η̃` by DP-SGD at the rest of `ε_s` and `δ_s`, both on the
/// training half (sequential composition: `(ε_s, δ_s)`, two ledger entries;
/// `docs/deviations.md#fdp-fair-dp-sgd-plug-in`). Strict accounting and private `π̃` only.
fn site_dp_sgd(
    plan: &S1Plan,
    x: ndarray::ArrayView2<f64>,
    a: &[u32],
    y: &[u8],
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<PluginEstimate> {
    if plan.accounting == S1Accounting::Paper {
        return Err(invalid(
            "eta_model",
            "the DP-SGD plug-in has no paper procedure (the paper uses the kernel estimator): \
             use strict accounting, or the kernel",
        ));
    }
    if plan.pi != PiRelease::Private {
        return Err(invalid("pi", "the DP-SGD plug-in releases π̃ privately"));
    }
    let prefix = format!("{}S1: ", plan.label_prefix);
    let pi = dp_sgd::release_pi(a, PI_SHARE * plan.epsilon, &prefix, ledger, noise)?;
    dp_sgd::release_eta(
        pi,
        (1.0 - PI_SHARE) * plan.epsilon,
        plan.delta,
        x,
        a,
        y,
        dp_sgd::RunEntry::ConvertedAtDelta,
        ledger,
        noise,
    )
}

fn check_format(format: &str, version: u32, want: &str, what: &str) -> Result<()> {
    if format != want {
        return Err(Error::InvalidData(format!(
            "{what}: format `{format}`, expected `{want}` (wrong file?)"
        )));
    }
    if version != PROTOCOL_VERSION {
        return Err(Error::InvalidData(format!(
            "{what}: protocol version {version}; this build speaks version {PROTOCOL_VERSION}"
        )));
    }
    Ok(())
}

/// FNV-1a 64 of a JSON serialisation: identifies a broadcast (not a security device).
fn fingerprint(value: &impl Serialize) -> String {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl Global {
    fn compute_fingerprint(&self) -> String {
        fingerprint(&(
            &self.accounting,
            self.depth,
            &self.sites,
            &self.estimate,
            &self.schema,
            &self.run,
        ))
    }

    /// Checks format, version and that the fingerprint matches the content.
    pub fn validate(&self) -> Result<()> {
        check_format(&self.format, self.version, GLOBAL_FORMAT, "global")?;
        if self.fingerprint != self.compute_fingerprint() {
            return Err(Error::InvalidData(
                "global: the content does not match its fingerprint (edited or corrupted file)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The entry of site `site`.
    pub fn site(&self, site: &str) -> Result<&SiteEntry> {
        self.sites.iter().find(|s| s.site == site).ok_or_else(|| {
            let names: Vec<String> = self.sites.iter().map(|s| show_name(&s.site)).collect();
            Error::InvalidData(format!(
                "site `{}` is not in the global file (sites: {})",
                show_name(site),
                names.join(", ")
            ))
        })
    }
}

/// The server's checks of one round-1 transcript against the first site's (the federation's
/// shared choices) and the server's public parameters. Nothing here trusts the site: every
/// number is checked against what the protocol makes public or what the site's own ledger says.
pub fn validate_round1(r: &Round1, first: &Round1, params: &ServerParams) -> Result<()> {
    let what = format!("round 1 of site `{}`", show_name(&r.site));
    let bad = |reason: String| Err(Error::InvalidData(format!("{what}: {reason}")));
    check_site_name(&r.site).map_err(|e| in_context(&what, e))?;
    check_format(&r.format, r.version, ROUND1_FORMAT, &what)?;
    check_run(r.run.as_deref(), params.run.as_deref(), &what)?;
    if r.run != first.run {
        return bad(format!(
            "run id {:?} differs from site `{}`'s {:?}",
            r.run,
            show_name(&first.site),
            first.run
        ));
    }
    check_eps_delta(r.epsilon, r.delta).map_err(|e| Error::InvalidData(format!("{what}: {e}")))?;
    if r.accounting != first.accounting {
        return bad(format!(
            "accounting {:?}, site `{}` used {:?}; all sites must use the same mode",
            r.accounting,
            show_name(&first.site),
            first.accounting
        ));
    }
    match (&r.release.eta, &first.release.eta) {
        (EtaEstimate::Kernel(k), EtaEstimate::Kernel(k0)) => {
            if k.basis != k0.basis {
                return bad(format!(
                    "basis {:?} differs from site `{}`'s {:?}; agree on --bandwidth, --frequencies, --basis-seed and the feature columns",
                    k.basis.spec(),
                    show_name(&first.site),
                    k0.basis.spec()
                ));
            }
        }
        (EtaEstimate::Logistic { logistic: l }, EtaEstimate::Logistic { logistic: l0 })
            if l.feature_map == l0.feature_map =>
        {
            if l.weights.len() != l0.weights.len() {
                return bad(format!(
                    "{} logistic weights, site `{}` sent {}; agree on the feature columns",
                    l.weights.len(),
                    show_name(&first.site),
                    l0.weights.len()
                ));
            }
        }
        _ => {
            return bad(format!(
                "a different estimator of η than site `{}`'s; agree on --eta-model",
                show_name(&first.site)
            ));
        }
    }
    if r.schema != first.schema {
        return bad(format!(
            "the data schema (columns, encodings, scaling) differs from site `{}`'s",
            show_name(&first.site)
        ));
    }
    let max_rows = params.max_site_rows.unwrap_or(DEFAULT_MAX_SITE_ROWS);
    if r.n_rows < 8 || r.n_rows > max_rows {
        return bad(format!(
            "N_s = {} is outside the public range [8, {max_rows}] (the server's --max-site-rows)",
            r.n_rows
        ));
    }
    match &r.release.eta {
        EtaEstimate::Kernel(k) => {
            let len = k.basis.len();
            for a in 0..2 {
                for (name, v) in [
                    ("denominator", &k.denominator[a]),
                    ("numerator", &k.numerator[a]),
                ] {
                    if v.len() != len {
                        return bad(format!(
                            "{name} coefficients of group {a}: {} values, the basis has {len}",
                            v.len()
                        ));
                    }
                    if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                        return bad(format!(
                            "{name} coefficients of group {a}: non-finite value {x}"
                        ));
                    }
                }
            }
        }
        EtaEstimate::Logistic { logistic } => {
            let settings = [logistic.l2, logistic.noise_sd];
            if let Some(x) = logistic
                .weights
                .iter()
                .chain(&settings)
                .find(|x| !x.is_finite())
            {
                return bad(format!("logistic plug-in: non-finite value {x}"));
            }
        }
    }
    // π̃_a: released probabilities clamped into [PI_FLOOR, 1 − PI_FLOOR] by every honest site.
    for (a, &p) in r.release.pi.iter().enumerate() {
        if !(PI_FLOOR..=1.0 - PI_FLOOR).contains(&p) {
            return bad(format!(
                "group proportion π̃_{a} = {p} is not a probability in [{PI_FLOOR}, {}]",
                1.0 - PI_FLOOR
            ));
        }
    }
    check_site_ledger(&r.ledger, r.epsilon, r.delta, r.accounting, &what)?;
    // Every number against what an honest release can be (bounds derived in `trust`).
    let in_bounds = match &r.release.eta {
        EtaEstimate::Kernel(k) => check_kernel(k, r.n_rows, r.epsilon, r.delta, r.accounting)
            .and_then(|()| check_pi(r.release.pi, r.n_rows, r.epsilon, r.delta, 4, r.accounting)),
        EtaEstimate::Logistic { logistic } if logistic.feature_map == FeatureMap::Raw => {
            check_dp_sgd(
                logistic,
                r.release.pi,
                r.n_rows,
                r.epsilon,
                r.delta,
                r.accounting,
            )
        }
        EtaEstimate::Logistic { logistic } => {
            check_logistic(logistic, r.n_rows, r.epsilon, r.delta).and_then(|()| {
                check_pi(r.release.pi, r.n_rows, r.epsilon, r.delta, 3, r.accounting)
            })
        }
    };
    in_bounds.map_err(|e| in_context(&what, e))?;
    check_binding(&r.binding, &r.compute_binding(), &what)
}

/// `e` with `what` (the transcript) in front of its message.
fn in_context(what: &str, e: Error) -> Error {
    match e {
        Error::InvalidData(m) => Error::InvalidData(format!("{what}: {m}")),
        other => Error::InvalidData(format!("{what}: {other}")),
    }
}

/// The server's checks of one round-2 transcript against the broadcast.
pub fn validate_round2(r: &Round2, global: &Global) -> Result<()> {
    let what = format!("round 2 of site `{}`", show_name(&r.site));
    let bad = |reason: String| Err(Error::InvalidData(format!("{what}: {reason}")));
    check_site_name(&r.site).map_err(|e| in_context(&what, e))?;
    check_format(&r.format, r.version, ROUND2_FORMAT, &what)?;
    if r.global != global.fingerprint {
        return bad(format!(
            "built against global {} but this global is {}",
            clip(&r.global),
            global.fingerprint
        ));
    }
    let entry = global.site(&r.site)?;
    if (r.epsilon, r.delta) != (entry.epsilon, entry.delta) {
        return bad(format!(
            "(ε, δ) = ({}, {}) but round 1 used ({}, {})",
            r.epsilon, r.delta, entry.epsilon, entry.delta
        ));
    }
    for a in 0..2 {
        r.trees.groups[a].validate(global.depth, &format!("{what}, group {a}"))?;
    }
    let sigma = tree_sigma(entry.epsilon, entry.delta, global.depth, global.accounting)?;
    check_trees(&r.trees, entry.n_cal, sigma, global.depth).map_err(|e| in_context(&what, e))?;
    check_site_ledger(&r.ledger, r.epsilon, r.delta, global.accounting, &what)?;
    check_binding(&r.binding, &r.compute_binding(), &what)
}

/// The binding digest, checked last (the specific checks above name a bad field first): an edit
/// that passed them but was not resealed, e.g. a copy renamed to another site.
fn check_binding(stored: &str, computed: &str, what: &str) -> Result<()> {
    if stored != computed {
        return Err(Error::InvalidData(format!(
            "{what}: its binding digest does not match its content (edited, renamed or copied from another site's transcript)"
        )));
    }
    Ok(())
}

/// How far below its claimed ε a site's ledger total may be: DP-SGD's calibrated noise
/// multiplier spends its target to within about 3·10⁻⁵ (the search's tolerance), the other
/// releases exactly.
const CLAIM_SLACK: f64 = 1e-3;

/// A site's ledger must record releases, against a budget equal to its claimed `(ε_s, δ_s)`
/// (strict mode), with a total within it: a site cannot claim a smaller ε than it says it spent
/// (which would shrink its weight or hide an overspend) nor send an empty ledger.
fn check_site_ledger(
    ledger: &Ledger,
    epsilon: f64,
    delta: f64,
    accounting: Accounting,
    what: &str,
) -> Result<()> {
    let bad = |reason: String| Err(Error::InvalidData(format!("{what}: ledger: {reason}")));
    if ledger.entries().is_empty() {
        return bad(
            "no release recorded; a transcript's values must come from charged releases".into(),
        );
    }
    let total = ledger
        .total()
        .map_err(|e| Error::InvalidData(format!("{what}: ledger: {e}")))?;
    let over = |spent: f64, claimed: f64| spent > claimed * (1.0 + LEDGER_TOLERANCE);
    match accounting {
        Accounting::Strict => {
            let b = ledger.budget();
            if b.epsilon != epsilon || b.delta != delta {
                return bad(format!(
                    "budget (ε, δ) = ({}, {}) but the transcript claims ({epsilon}, {delta})",
                    b.epsilon, b.delta
                ));
            }
            if over(total.epsilon, epsilon) || over(total.delta, delta) {
                return bad(format!(
                    "spent (ε, δ) = ({}, {}) but the transcript claims ({epsilon}, {delta})",
                    total.epsilon, total.delta
                ));
            }
            if total.epsilon < epsilon * (1.0 - CLAIM_SLACK) {
                return bad(format!(
                    "spent ε = {} but the transcript claims ε = {epsilon}: the claim must be what was spent",
                    total.epsilon
                ));
            }
        }
        Accounting::Paper => {
            if ledger.budget().delta != delta {
                return bad(format!(
                    "budget δ = {} but the transcript claims δ = {delta}",
                    ledger.budget().delta
                ));
            }
        }
    }
    Ok(())
}

/// The run id check: when the server announced one, every transcript must carry it.
fn check_run(got: Option<&str>, want: Option<&str>, what: &str) -> Result<()> {
    match (want, got) {
        (Some(w), Some(g)) if w == g => Ok(()),
        (Some(w), g) => Err(Error::InvalidData(format!(
            "{what}: run id {:?}, the server's run is `{}` (a transcript from another run?)",
            g.map(clip),
            clip(w)
        ))),
        (None, _) => Ok(()),
    }
}

/// One transcript per site per round: a second transcript under a name already seen (the same
/// file given twice, or two files of one site) is refused naming the site, before anything is
/// aggregated (a site counted twice would take twice its weight).
fn refuse_duplicates<T>(rounds: &[T], site: impl Fn(&T) -> &String, round: &str) -> Result<()> {
    for (i, r) in rounds.iter().enumerate() {
        if rounds[..i].iter().any(|o| site(o) == site(r)) {
            return Err(Error::InvalidData(format!(
                "site `{}` sent more than one {round} transcript (one per site)",
                show_name(site(r))
            )));
        }
    }
    Ok(())
}

/// Refuse two transcripts of different sites that are copies of each other (`same`): a site's
/// files replayed under another site's name. Honest sites draw independent noise and split
/// seeds, so equal releases never happen by chance.
fn refuse_copies<T>(
    rounds: &[T],
    site: impl Fn(&T) -> &String,
    same: impl Fn(&T, &T) -> bool,
    round: &str,
) -> Result<()> {
    for (i, a) in rounds.iter().enumerate() {
        for b in &rounds[i + 1..] {
            if site(a) != site(b) && same(a, b) {
                return Err(Error::InvalidData(format!(
                    "{round}: sites `{}` and `{}` sent the same releases (one is a replay of the other)",
                    show_name(site(a)),
                    show_name(site(b))
                )));
            }
        }
    }
    Ok(())
}

/// Round 1 at the server: validates the transcripts (format, version, distinct names, one
/// accounting mode, one basis, one schema, finite releases), weighs the sites, aggregates
/// `π̃_a = Σ ν_s π̃^s_a` and the two function pairs (ratio of ν-weighted sums, Alg. 1 S1) and
/// chooses the depth `M`.
pub fn aggregate_round1(rounds: &[Round1], params: &ServerParams) -> Result<Global> {
    let Some(first) = rounds.first() else {
        return Err(invalid("sites", "no round-1 transcripts"));
    };
    for r in rounds {
        validate_round1(r, first, params)?;
    }
    refuse_duplicates(rounds, |r| &r.site, "round-1")?;
    refuse_copies(
        rounds,
        |r| &r.site,
        |a, b| a.split_seed == b.split_seed || a.release == b.release,
        "round 1",
    )?;
    // Eq. (8)'s h^d for the kernel; the logistic plug-in has no bandwidth (ν = μ).
    let h_d = first
        .release
        .kernel()
        .map_or(1.0, |k| k.basis.bandwidth().powi(k.basis.dim() as i32));
    let u = |r: &Round1, hd: f64| {
        let n = r.n_rows as f64;
        n.min(n * n * r.epsilon * r.epsilon * hd)
    };
    let (nu_raw, mu_raw): (Vec<f64>, Vec<f64>) = match params.weights {
        Weights::Paper => rounds.iter().map(|r| (u(r, h_d), u(r, 1.0))).unzip(),
        Weights::Equal => rounds.iter().map(|_| (1.0, 1.0)).unzip(),
    };
    let (nu_sum, mu_sum): (f64, f64) = (nu_raw.iter().sum(), mu_raw.iter().sum());
    let sites: Vec<SiteEntry> = rounds
        .iter()
        .enumerate()
        .map(|(s, r)| SiteEntry {
            site: r.site.clone(),
            n_rows: r.n_rows,
            n_cal: r.n_rows - r.n_rows.div_ceil(2),
            split_seed: r.split_seed,
            epsilon: r.epsilon,
            delta: r.delta,
            nu: nu_raw[s] / nu_sum,
            mu: mu_raw[s] / mu_sum,
            ledger: r.ledger.clone(),
        })
        .collect();
    let parts: Vec<(f64, &PluginEstimate)> = sites
        .iter()
        .zip(rounds)
        .map(|(e, r)| (e.nu, &r.release))
        .collect();
    let estimate = PluginEstimate::aggregate(&parts)?;
    let depth = params.depth.depth(
        &rounds
            .iter()
            .map(|r| (r.n_rows, r.epsilon))
            .collect::<Vec<_>>(),
    )?;
    let mut global = Global {
        format: GLOBAL_FORMAT.into(),
        version: PROTOCOL_VERSION,
        accounting: first.accounting,
        depth,
        sites,
        estimate,
        schema: first.schema.clone(),
        run: first.run.clone(),
        fingerprint: String::new(),
    };
    global.fingerprint = global.compute_fingerprint();
    Ok(global)
}

/// Round 2 at one site: the scores `Z = 2(2a−1)π̃_a(η̃_a(X̌) − 1/2)` of its calibration half under
/// the broadcast estimate, and Algorithm 3's two noisy trees, charging `ledger`. `epsilon`,
/// `delta` must be the site's round-1 values.
pub fn site_round2(
    global: &Global,
    site: &str,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<Round2> {
    site_round2_with(global, site, data, ledger, noise, None)
}

/// The calibration rows of `site` in round 2 of `global`: `(rows, their features, their groups)`.
pub(crate) fn calibration_rows(
    global: &Global,
    site: &str,
    data: &Dataset,
) -> Result<(Vec<usize>, ndarray::Array2<f64>, Vec<u32>)> {
    let entry = global.site(site)?;
    let (a, _) = groups_and_labels(data)?;
    let (_, cal) = site_split(data.n_rows(), entry.split_seed);
    let x = data.features.select(Axis(0), &cal);
    let ac: Vec<u32> = cal.iter().map(|&i| a[i]).collect();
    Ok((cal, x, ac))
}

/// [`site_round2`] with the broadcast `η̃` at the calibration rows ([`calibration_rows`])
/// already evaluated when `eta` is given (by [`crate::plugin::release::eta_grouped_many`],
/// bit for bit what this would compute).
pub(crate) fn site_round2_with(
    global: &Global,
    site: &str,
    data: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
    eta: Option<Vec<f64>>,
) -> Result<Round2> {
    global.validate()?;
    check_site_name(site)?;
    ledger.record_noise(noise);
    let entry = global.site(site)?;
    if data.n_rows() != entry.n_rows {
        return Err(Error::InvalidData(format!(
            "site `{site}`: the data has {} rows, round 1 had {}; use the same file",
            data.n_rows(),
            entry.n_rows
        )));
    }
    if data.n_features() != global.estimate.dim() {
        return Err(Error::InvalidData(format!(
            "site `{site}`: {} feature columns, the broadcast estimate has {}",
            data.n_features(),
            global.estimate.dim()
        )));
    }
    let (cal, x, ac) = calibration_rows(global, site, data)?;
    let eta = match eta {
        Some(eta) if eta.len() == cal.len() => eta,
        _ => global.estimate.eta_grouped(x.view(), &ac)?,
    };
    let mut z: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for (&e, &g) in eta.iter().zip(&ac) {
        let g = g as usize;
        z[g].push(score(g, e, global.estimate.pi[g]));
    }
    let mut trees_noise = noise.fork();
    let start = ledger.entries().len();
    let split = partition(site, entry.split_seed);
    let trees = in_part(ledger, &split, CALIBRATION_HALF, |l| {
        release_trees(
            &z,
            global.depth,
            entry.epsilon,
            entry.delta,
            tree_noise(global.accounting),
            &format!("site {site}: "),
            l,
            &mut trees_noise,
        )
    })?;
    let mut r2 = Round2 {
        format: ROUND2_FORMAT.into(),
        version: PROTOCOL_VERSION,
        site: site.to_string(),
        global: global.fingerprint.clone(),
        epsilon: entry.epsilon,
        delta: entry.delta,
        trees,
        ledger: entries_since(ledger, start)?,
        binding: String::new(),
    };
    r2.bind();
    Ok(r2)
}

/// The model's ledger: every site's entries (both rounds), each in the part "site s / half" of one
/// partition of disjoint data, so the total is the worst site's `(ε_s, δ_s)` — the FDP guarantee
/// (Def. 2), not a central one over all sites.
pub fn federated_ledger(global: &Global, rounds: &[Round2]) -> Result<Ledger> {
    let eps = global.sites.iter().map(|s| s.epsilon).fold(0.0, f64::max);
    let delta = global.sites.iter().map(|s| s.delta).fold(0.0, f64::max);
    let mut out = site_ledger(eps, delta, global.accounting)?;
    for l in global
        .sites
        .iter()
        .map(|s| &s.ledger)
        .chain(rounds.iter().map(|r| &r.ledger))
    {
        out.record_noise_source(l.noise_source());
    }
    let entries: Vec<(String, Entry)> = global
        .sites
        .iter()
        .flat_map(|s| s.ledger.entries().iter().map(move |e| (&s.site, e)))
        .chain(
            rounds
                .iter()
                .flat_map(|r| r.ledger.entries().iter().map(move |e| (&r.site, e))),
        )
        .map(|(site, e)| {
            let part = match &e.composition {
                Composition::Parallel { part, .. } => format!("site {site}: {part}"),
                Composition::Sequential => format!("site {site}"),
            };
            let mut e = e.clone();
            e.composition = Composition::Sequential;
            (part, e)
        })
        .collect();
    // The sites hold disjoint data, and each site's halves are disjoint: one partition whose
    // parts are (site, half).
    let mut parts: Vec<&str> = entries.iter().map(|(p, _)| p.as_str()).collect();
    parts.sort_unstable();
    parts.dedup();
    let partition = Partition::new(
        "FDP: sites × training / calibration halves (disjoint data)",
        &parts,
        0,
    );
    for (part, e) in &entries {
        let index = parts
            .binary_search(&part.as_str())
            .expect("collected above");
        out.in_part(&partition, index, |l| l.charge(e.clone()))?;
    }
    Ok(out)
}

/// How every site's trees are calibrated: the analytic Gaussian at `(ε_s, δ_s)` (strict) or
/// Algorithm 3's σ (the paper's procedure).
fn tree_noise(accounting: Accounting) -> TreeNoise {
    match accounting {
        Accounting::Strict => TreeNoise::Analytic,
        Accounting::Paper => TreeNoise::Paper,
    }
}

/// Round 2 at the server: validates the transcripts against the broadcast (format, version,
/// fingerprint, site names, one transcript per site, budgets, tree shapes), runs Algorithm 2
/// S2–S3 and returns the classifier `f̃(x,a) = 1{η̃_a(x) ≥ 1/2 + τ̃(2a−1)/(2π̃_a)}` with the
/// federation's ledger.
pub fn aggregate_round2(
    global: &Global,
    rounds: &[Round2],
    config: &SearchConfig,
) -> Result<(FederatedModel, Ledger)> {
    global.validate()?;
    config.validate()?;
    for r in rounds {
        validate_round2(r, global)?;
    }
    refuse_duplicates(rounds, |r| &r.site, "round-2")?;
    refuse_copies(rounds, |r| &r.site, |a, b| a.trees == b.trees, "round 2")?;
    if let Some(missing) = global
        .sites
        .iter()
        .find(|s| !rounds.iter().any(|r| r.site == s.site))
    {
        return Err(Error::InvalidData(format!(
            "no round-2 transcript from site `{}`",
            show_name(&missing.site)
        )));
    }
    // In the broadcast's site order.
    let ordered: Vec<&Round2> = global
        .sites
        .iter()
        .map(|s| rounds.iter().find(|r| r.site == s.site).expect("checked"))
        .collect();
    let trees: Vec<(f64, &SiteTrees)> = global
        .sites
        .iter()
        .zip(&ordered)
        .map(|(s, r)| (s.mu, &r.trees))
        .collect();
    let omega_sites: Vec<OmegaSite> = global
        .sites
        .iter()
        .map(|s| OmegaSite {
            mu: s.mu,
            n_cal: s.n_cal,
            epsilon: s.epsilon,
            delta: s.delta,
        })
        .collect();
    let clip = config.clip.unwrap_or(match global.accounting {
        Accounting::Strict => Clip::Symmetric,
        Accounting::Paper => Clip::Paper,
    });
    let found = search(
        &trees,
        &omega_sites,
        tree_noise(global.accounting),
        clip,
        config,
    )?;
    let ledger = federated_ledger(global, rounds)?;
    let eps = global.sites.iter().map(|s| s.epsilon).fold(0.0, f64::max);
    let delta = global.sites.iter().map(|s| s.delta).fold(0.0, f64::max);
    let plugin = Model {
        method: Method::FdpFair,
        alpha: config.alpha,
        epsilon: eps,
        delta,
        accounting: global.accounting,
        bandwidth: global.estimate.bandwidth(),
        split_seed: global.sites[0].split_seed,
        folds: vec![FairPluginClassifier {
            estimate: global.estimate.clone(),
            rule: found.rule(),
        }],
    };
    let federated = FederatedInfo {
        sites: global.sites.clone(),
        search: found,
        config: config.clone(),
    };
    Ok((FederatedModel { plugin, federated }, ledger))
}
