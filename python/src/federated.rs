//! FDP-Fair's two-round protocol (Xue & Yu, Algorithm 1) one step at a time: a site's round 1
//! and round 2 on its own frame, and the server's two aggregations, through the library's
//! [`dpfair::fdp_fair::steps`] (the same calls `dpfair federated` makes). Transcripts cross this
//! boundary as the JSON text the file protocol writes, so a Python site and a CLI site can take
//! part in one run; `dpfair/federated.py` is the Python face, `dpfair/flower.py` the Flower apps.

use crate::error::{api_error, data_error, guard, value_error};
use crate::frame::FrameInput;
use crate::model::{LedgerTotal, PyModel, ledger_total};
use dpfair::fdp_fair::correction::Clip;
use dpfair::fdp_fair::protocol::{Global, Round1, Round2, aggregate_round1};
use dpfair::fdp_fair::steps::{SiteOptions, site_round1_from, site_round2_from};
use dpfair::fdp_fair::{DepthRule, Monotoniser, SearchConfig, ServerParams, Weights};
use dpfair::model::Accounting;
use dpfair::pipeline::Scaling;
use dpfair::plugin::EtaModel;
use dpfair::plugin::release::PiRelease;
use dpfair_data::frame::Coding;
use dpfair_data::{Bounds, LoadOptions, Loaded, TaskKind};
use dpfair_privacy::{Ledger, Noise};
use pyo3::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// `name` = `given` among `options`, or an error listing them.
fn pick<T: Copy>(name: &str, given: &str, options: &[(&str, T)]) -> PyResult<T> {
    options
        .iter()
        .find(|(n, _)| *n == given)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
            value_error(format!(
                "`{name}` = `{given}`: expected one of {}",
                names.join(", ")
            ))
        })
}

/// A transcript as the file protocol writes it (pretty JSON, byte for byte `dpfair federated`'s).
fn to_json(value: &impl Serialize) -> PyResult<String> {
    serde_json::to_string_pretty(value).map_err(|e| value_error(format!("cannot serialise: {e}")))
}

/// Read a transcript or broadcast (`what` names it in the message).
fn from_json<T: DeserializeOwned>(text: &str, what: &str) -> PyResult<T> {
    serde_json::from_str(text).map_err(|e| value_error(format!("not a valid {what}: {e}")))
}

/// Release noise from the OS CSPRNG; `insecure_seed` makes it reproducible (tests and
/// simulations only: the ledger then records the run as not private).
fn noise(insecure_seed: Option<u64>) -> Noise {
    insecure_seed.map_or_else(Noise::os, Noise::seeded)
}

/// A site's rows, loaded as `dpfair federated site` loads them: a binary target, two groups,
/// the features scaled to [0, 1] with the federation's public bounds (never private ones: they
/// would differ between sites and between rounds). Built once, read by both rounds.
#[pyclass(module = "dpfair._native", name = "SiteData", frozen)]
pub struct PySiteData {
    loaded: Loaded,
}

impl PySiteData {
    fn scaled(mut loaded: Loaded, public: Bounds) -> PyResult<Self> {
        if loaded.schema.sensitive.is_none() {
            return Err(value_error(
                "a sensitive column is required: FDP-Fair constrains the disparity between two \
                 groups",
            ));
        }
        Scaling::Public(public)
            .apply_public(&mut loaded)
            .map_err(api_error)?;
        Ok(PySiteData { loaded })
    }
}

#[pymethods]
impl PySiteData {
    /// From a Python frame (`dpfair._input.Frame` with target and sensitive columns).
    #[staticmethod]
    #[pyo3(signature = (frame, *, bounds = None, positive = None, groups = None, classes = None))]
    fn from_frame(
        frame: FrameInput<'_>,
        bounds: Option<Vec<(String, f64, f64)>>,
        positive: Option<String>,
        groups: Option<Vec<String>>,
        classes: Option<Vec<String>>,
    ) -> PyResult<Self> {
        guard(|| {
            let public = crate::fit::bounds(bounds, "bounds")?;
            let coding = Coding {
                positive,
                task: Some(TaskKind::Binary),
                groups,
                classes,
                fill: public.clone(),
            };
            let loaded = frame.frame()?.learn(&coding).map_err(data_error)?;
            Self::scaled(loaded, public)
        })
    }

    /// From a CSV file, read exactly as `dpfair federated site --data PATH` reads it (delimiter
    /// and header detected, missing values filled by the public rule of `docs/privacy.md`).
    #[staticmethod]
    #[pyo3(signature = (path, target, sensitive, *, bounds = None, features = None,
        categorical = Vec::new(), drop = Vec::new(), positive = None, groups = None,
        classes = None))]
    #[allow(clippy::too_many_arguments)]
    fn from_csv(
        path: std::path::PathBuf,
        target: String,
        sensitive: String,
        bounds: Option<Vec<(String, f64, f64)>>,
        features: Option<Vec<String>>,
        categorical: Vec<String>,
        drop: Vec<String>,
        positive: Option<String>,
        groups: Option<Vec<String>>,
        classes: Option<Vec<String>>,
    ) -> PyResult<Self> {
        guard(|| {
            let public = crate::fit::bounds(bounds, "bounds")?;
            let options = LoadOptions {
                target: Some(target),
                sensitive: Some(sensitive),
                features,
                categorical,
                drop,
                groups,
                classes,
                task: Some(TaskKind::Binary),
                positive,
                fill: public.clone(),
                ..LoadOptions::default()
            };
            let loaded = dpfair_data::load_csv(&path, &options).map_err(data_error)?;
            Self::scaled(loaded, public)
        })
    }

    /// The number of rows `N_s` (public under replace-one neighbours).
    #[getter]
    fn n_rows(&self) -> usize {
        self.loaded.dataset.n_rows()
    }
}

/// The site's options (`SiteOptions`) from the Python arguments.
#[allow(clippy::too_many_arguments)]
fn site_options(
    site: String,
    epsilon: f64,
    delta: Option<f64>,
    accounting: &str,
    bandwidth: Option<f64>,
    frequencies: Option<usize>,
    basis_seed: Option<u64>,
    eta_model: &str,
    empirical_pi: bool,
) -> PyResult<SiteOptions> {
    let mut o = SiteOptions::new(site, epsilon);
    o.delta = delta;
    o.accounting = pick(
        "accounting",
        accounting,
        &[("strict", Accounting::Strict), ("paper", Accounting::Paper)],
    )?;
    o.bandwidth = bandwidth;
    o.n_frequencies = frequencies.unwrap_or(o.n_frequencies);
    o.basis_seed = basis_seed.unwrap_or(o.basis_seed);
    o.eta_model = pick(
        "eta_model",
        eta_model,
        &[
            ("auto", EtaModel::Auto),
            ("kernel", EtaModel::Kernel),
            ("logistic", EtaModel::Logistic),
        ],
    )?;
    if empirical_pi {
        o.pi = PiRelease::Empirical;
    }
    Ok(o)
}

/// Round 1 at a site (Alg. 1 S1 on its training half, charged to a fresh ledger over its
/// `(ε_s, δ_s)` before the transcript exists). Returns the round-1 transcript (JSON).
#[pyfunction]
#[pyo3(signature = (data, site, epsilon, *, delta = None, accounting = "strict",
    bandwidth = None, frequencies = None, basis_seed = None, eta_model = "auto",
    empirical_pi = false, run = None, insecure_seed = None))]
#[allow(clippy::too_many_arguments)]
pub fn site_round1(
    data: &PySiteData,
    site: String,
    epsilon: f64,
    delta: Option<f64>,
    accounting: &str,
    bandwidth: Option<f64>,
    frequencies: Option<usize>,
    basis_seed: Option<u64>,
    eta_model: &str,
    empirical_pi: bool,
    run: Option<String>,
    insecure_seed: Option<u64>,
) -> PyResult<String> {
    guard(|| {
        let options = site_options(
            site,
            epsilon,
            delta,
            accounting,
            bandwidth,
            frequencies,
            basis_seed,
            eta_model,
            empirical_pi,
        )?;
        let r1 = site_round1_from(&options, &data.loaded, run, &mut noise(insecure_seed))
            .map_err(|e| api_error(e.into()))?;
        to_json(&r1)
    })
}

/// Round 2 at a site, given the server's broadcast (JSON): checks that data, budget and
/// accounting are round 1's and that the broadcast hands back the split seed of the site's own
/// round-1 transcript (required), releases Algorithm 3's trees of the calibration half. Returns the
/// round-2 transcript (JSON).
#[pyfunction]
#[pyo3(signature = (global_json, data, site, epsilon, *, round1_json, delta = None,
    accounting = "strict", insecure_seed = None))]
#[allow(clippy::too_many_arguments)]
pub fn site_round2(
    global_json: &str,
    data: &PySiteData,
    site: String,
    epsilon: f64,
    round1_json: &str,
    delta: Option<f64>,
    accounting: &str,
    insecure_seed: Option<u64>,
) -> PyResult<String> {
    guard(|| {
        let global: Global = from_json(global_json, "broadcast (global file)")?;
        // The site's own round 1 is required: without it a broadcast with another split seed
        // would make the site re-read rows its round 1 released (docs/federated-trust.md).
        let round1: Round1 = from_json(round1_json, "round-1 transcript")?;
        let options = site_options(
            site, epsilon, delta, accounting, None, None, None, "auto", false,
        )?;
        let r2 = site_round2_from(
            &global,
            &options,
            &data.loaded,
            Some(&round1),
            &mut noise(insecure_seed),
        )
        .map_err(|e| api_error(e.into()))?;
        to_json(&r2)
    })
}

/// Round 1 at the server: validates every round-1 transcript (JSON texts), weighs the sites,
/// averages their estimators and chooses the tree depth. Returns the broadcast (JSON).
#[pyfunction]
#[pyo3(signature = (transcripts, *, run = None, max_site_rows = None, depth = None,
    depth_rule = "code", weights = "paper"))]
pub fn aggregate_round1_json(
    transcripts: Vec<String>,
    run: Option<String>,
    max_site_rows: Option<usize>,
    depth: Option<usize>,
    depth_rule: &str,
    weights: &str,
) -> PyResult<String> {
    guard(|| {
        let rounds: Vec<Round1> = transcripts
            .iter()
            .enumerate()
            .map(|(i, t)| from_json(t, &format!("round-1 transcript (number {})", i + 1)))
            .collect::<PyResult<_>>()?;
        let rule = pick(
            "depth_rule",
            depth_rule,
            &[("code", DepthRule::Code), ("paper", DepthRule::Paper)],
        )?;
        let params = ServerParams {
            depth: depth.map_or(rule, |depth| DepthRule::Fixed { depth }),
            weights: pick(
                "weights",
                weights,
                &[("paper", Weights::Paper), ("equal", Weights::Equal)],
            )?,
            run,
            max_site_rows,
        };
        let global = aggregate_round1(&rounds, &params).map_err(|e| api_error(e.into()))?;
        to_json(&global)
    })
}

/// Round 2 at the server: validates the round-2 transcripts against the broadcast, runs
/// Algorithm 2's selection of τ̃ and returns the model file (`Model`) with every site's ledger.
#[pyfunction]
#[pyo3(signature = (global_json, transcripts, *, alpha = 0.1, rho_star = 0.03,
    band = "inside", margin_z = 1.645, straddle = "randomise", c_omega = 0.1, eta_tol = 0.01,
    monotoniser = "numerical", clip = None, zero_within_band = false, clip_tails = false))]
#[allow(clippy::too_many_arguments)]
pub fn aggregate_round2_json(
    global_json: &str,
    transcripts: Vec<String>,
    alpha: f64,
    rho_star: f64,
    band: &str,
    margin_z: f64,
    straddle: &str,
    c_omega: f64,
    eta_tol: f64,
    monotoniser: &str,
    clip: Option<&str>,
    zero_within_band: bool,
    clip_tails: bool,
) -> PyResult<PyModel> {
    guard(|| {
        let global: Global = from_json(global_json, "broadcast (global file)")?;
        let rounds: Vec<Round2> = transcripts
            .iter()
            .enumerate()
            .map(|(i, t)| from_json(t, &format!("round-2 transcript (number {})", i + 1)))
            .collect::<PyResult<_>>()?;
        let config = SearchConfig {
            alpha,
            rho_star,
            c_omega,
            eta_tol,
            monotoniser: pick(
                "monotoniser",
                monotoniser,
                &[
                    ("numerical", Monotoniser::Numerical),
                    ("theory", Monotoniser::Theory),
                ],
            )?,
            clip: clip
                .map(|c| {
                    pick(
                        "clip",
                        c,
                        &[("symmetric", Clip::Symmetric), ("paper", Clip::Paper)],
                    )
                })
                .transpose()?,
            zero_within_band,
            band_inside: pick("band", band, &[("inside", true), ("centred", false)])?,
            margin_z,
            clip_tails,
            randomise_straddle: pick(
                "straddle",
                straddle,
                &[("randomise", true), ("interpolate", false)],
            )?,
        };
        let file = dpfair::model::ModelFile::from_federation(&global, &rounds, &config)
            .map_err(api_error)?;
        Ok(PyModel::from(file))
    })
}

/// The total of a transcript's ledger (round 1, round 2 or a broadcast's site entry) as
/// `Model.ledger_total` gives it: what the site spent on the releases the transcript carries.
#[pyfunction]
pub fn transcript_spend(transcript_json: &str) -> PyResult<LedgerTotal> {
    guard(|| {
        #[derive(serde::Deserialize)]
        struct WithLedger {
            ledger: Ledger,
        }
        let t: WithLedger = from_json(transcript_json, "transcript")?;
        ledger_total(&t.ledger)
    })
}

/// Register the protocol's functions in `dpfair._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySiteData>()?;
    m.add_function(wrap_pyfunction!(site_round1, m)?)?;
    m.add_function(wrap_pyfunction!(site_round2, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate_round1_json, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate_round2_json, m)?)?;
    m.add_function(wrap_pyfunction!(transcript_spend, m)?)?;
    Ok(())
}
