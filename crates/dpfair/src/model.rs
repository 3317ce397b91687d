//! The model file: the JSON envelope every fitted model is saved in.
//!
//! A model file carries everything prediction needs and everything an auditor asks for:
//! the [`Schema`] (column names, encoders, fitted scaling, category levels, class labels), the
//! privacy [`Ledger`] of the fit (its relation, noise source, every release), the method's
//! configuration, the fitted model itself, and a digest of all of that.
//!
//! ```json
//! { "format": "dpfair-model", "version": 2, "method": "cdp-fair", "created_by": "dpfair 0.1.0",
//!   "schema": {...}, "ledger": {...}, "config": {...}, "model": { "kind": "cdp-fair", ... },
//!   "digest": "sha256:…" }
//! ```
//!
//! **Integrity.** On load, `method` must name the model's kind, and `digest` must be the SHA-256
//! of the canonical JSON of every other field ([`ModelFile::body_digest`]): a file edited by hand
//! (a smaller ε in its ledger, another method name) is refused. This guards against accidents and
//! naive edits; it is **not a signature** (anyone can recompute a digest). Version-1 files, written
//! before digests, are read with [`ModelFile::is_verified`] false, and the commands warn.
//!
//! # Adding a method's model
//! 1. `impl Predictor for my_method::Model` (randomized predictors draw from the `rng` given).
//! 2. Add one variant to [`FittedModel`] (`MyMethod(crate::my_method::Model)`; its JSON `kind` is
//!    the kebab-case variant name) and one arm to [`FittedModel::predictor`].

pub use crate::predictor::{
    Accounting, FORMAT, ModelError, OLDEST_VERSION, Output, Predictor, Result, VERSION,
};
use dpfair_data::{Dataset, Schema, TargetEncoding};
use dpfair_privacy::{Ledger, Noise};
use ndarray::Array2;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Every model dpfair can save. One variant per method (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FittedModel {
    ConstantClassifier(ConstantClassifier),
    /// `dpfair fit lpct` / `dpfair ldp fit`: locally private classification tree.
    Lpct(crate::lpct::LpctModel),
    /// `dpfair fit lpct-prune`: LPCT-prune, Algorithm 2.
    LpctPrune(crate::lpct::PruneModel),
    /// `dpfair fit dp-logistic`: DP-SGD or output-perturbed logistic regression.
    DpLogistic(dpfair_learn::PrivateLogistic),
    /// `dpfair fit dp-linear`: DP linear regression by noisy sufficient statistics.
    DpLinear(dpfair_learn::LinearRegressionFit),
    /// `dpfair fit fair-regression`: private Wasserstein-barycenter post-processing.
    FairRegression(crate::fair_regression::Model),
    /// `dpfair fit cdp-fair` / `fdp-fair`: CDP-Fair, Algorithm 5 of Xue & Yu, its baselines,
    /// and FDP-Fair's server model with its record of the federation.
    CdpFair(SavedPlugin),
    /// `dpfair fit dp2dp`: DP2DP, private demographic-parity post-processing.
    Dp2dp(crate::dp2dp::Model),
    /// `dpfair fit decoupled`: private fair binary classifier, Algorithm 2.
    Decoupled(crate::decoupled::Model),
    /// `dpfair fit group-thresholds`: private group-wise thresholds for K groups under
    /// demographic parity, equal opportunity or equalized odds.
    GroupThresholds(crate::group_thresholds::Model),
}

/// `From<model> for FittedModel`, one line per variant.
macro_rules! into_fitted_model {
    ($($model:ty => $variant:ident),* $(,)?) => {
        $(impl From<$model> for FittedModel {
            fn from(m: $model) -> Self {
                FittedModel::$variant(m.into())
            }
        })*
    };
}

into_fitted_model!(
    ConstantClassifier => ConstantClassifier,
    crate::lpct::LpctModel => Lpct,
    crate::lpct::PruneModel => LpctPrune,
    dpfair_learn::PrivateLogistic => DpLogistic,
    dpfair_learn::LinearRegressionFit => DpLinear,
    crate::fair_regression::Model => FairRegression,
    crate::dp2dp::Model => Dp2dp,
    crate::decoupled::Model => Decoupled,
    crate::group_thresholds::Model => GroupThresholds,
);

/// A two-group method's model, or the group-thresholds model it fitted in its place.
impl<M: Into<FittedModel>> From<crate::group_thresholds::OrThresholds<M>> for FittedModel {
    fn from(m: crate::group_thresholds::OrThresholds<M>) -> Self {
        match m {
            crate::group_thresholds::OrThresholds::Method(m) => m.into(),
            crate::group_thresholds::OrThresholds::Thresholds(m) => FittedModel::GroupThresholds(m),
        }
    }
}

impl FittedModel {
    /// The model as a [`Predictor`]: one arm per variant.
    pub fn predictor(&self) -> &dyn Predictor {
        match self {
            FittedModel::ConstantClassifier(m) => m,
            FittedModel::Lpct(m) => m,
            FittedModel::LpctPrune(m) => m,
            FittedModel::DpLogistic(m) => m,
            FittedModel::DpLinear(m) => m,
            FittedModel::FairRegression(m) => m,
            FittedModel::CdpFair(m) => m,
            FittedModel::Dp2dp(m) => m,
            FittedModel::Decoupled(m) => m,
            FittedModel::GroupThresholds(m) => m,
        }
    }
}

/// CDP-Fair's and FDP-Fair's saved model (JSON `kind` "cdp-fair" for both): the plug-in
/// classifier (fields read through `Deref`) and, for FDP-Fair, the server's record of the
/// federation ([`crate::fdp_fair::FederatedInfo`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedPlugin {
    #[serde(flatten)]
    pub plugin: crate::cdp_fair::Model,
    /// FDP-Fair only: the sites, the grid search and its flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub federated: Option<Box<crate::fdp_fair::FederatedInfo>>,
}

impl std::ops::Deref for SavedPlugin {
    type Target = crate::cdp_fair::Model;
    fn deref(&self) -> &crate::cdp_fair::Model {
        &self.plugin
    }
}

impl Predictor for SavedPlugin {
    fn method(&self) -> &'static str {
        crate::predictor::Predictor::method(&self.plugin)
    }

    fn predict(&self, data: &Dataset, rng: &mut Noise) -> Result<Output> {
        crate::predictor::Predictor::predict(&self.plugin, data, rng)
    }
}

impl From<crate::cdp_fair::Model> for SavedPlugin {
    fn from(plugin: crate::cdp_fair::Model) -> Self {
        SavedPlugin {
            plugin,
            federated: None,
        }
    }
}

impl From<crate::fdp_fair::FederatedModel> for SavedPlugin {
    fn from(m: crate::fdp_fair::FederatedModel) -> Self {
        SavedPlugin {
            plugin: m.plugin,
            federated: Some(Box::new(m.federated)),
        }
    }
}

into_fitted_model!(
    crate::cdp_fair::Model => CdpFair,
    crate::fdp_fair::FederatedModel => CdpFair,
);

/// A baseline that ignores the features: every row gets a class drawn from `probabilities`
/// (`randomized`), or the most probable class. Fitting it reads no data, so it costs no privacy;
/// it is the "predict the prior" reference (scikit-learn's `DummyClassifier`) when the caller
/// supplies released class frequencies, and the model the envelope's tests use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConstantClassifier {
    /// Class probabilities, one per class of the target (non-negative, summing to 1).
    pub probabilities: Vec<f64>,
    pub randomized: bool,
}

impl ConstantClassifier {
    pub fn new(probabilities: Vec<f64>, randomized: bool) -> Result<Self> {
        let sum: f64 = probabilities.iter().sum();
        if probabilities.len() < 2
            || probabilities.iter().any(|p| !(p.is_finite() && *p >= 0.0))
            || (sum - 1.0).abs() > 1e-9
        {
            return Err(ModelError::Method {
                method: "constant-classifier".into(),
                reason: format!(
                    "probabilities must be ≥ 2 non-negative numbers summing to 1, got {probabilities:?}"
                ),
            });
        }
        Ok(ConstantClassifier {
            probabilities,
            randomized,
        })
    }
}

impl Predictor for ConstantClassifier {
    fn method(&self) -> &'static str {
        "constant-classifier"
    }

    fn predict(&self, data: &Dataset, rng: &mut Noise) -> Result<Output> {
        let n = data.n_rows();
        let k = self.probabilities.len();
        let argmax = (0..k)
            .max_by(|&a, &b| self.probabilities[a].total_cmp(&self.probabilities[b]))
            .unwrap_or(0) as u32;
        let classes = (0..n)
            .map(|_| {
                if !self.randomized {
                    return argmax;
                }
                let u: f64 = rng.random();
                let mut acc = 0.0;
                for (c, p) in self.probabilities.iter().enumerate() {
                    acc += p;
                    if u < acc {
                        return c as u32;
                    }
                }
                (k - 1) as u32
            })
            .collect();
        let probabilities = Array2::from_shape_fn((n, k), |(_, c)| self.probabilities[c]);
        Ok(Output::Classes {
            classes,
            probabilities: Some(probabilities),
        })
    }
}

impl Predictor for dpfair_learn::PrivateLogistic {
    fn method(&self) -> &'static str {
        "dp-logistic"
    }

    fn predict(&self, data: &Dataset, _rng: &mut Noise) -> Result<Output> {
        let err = |e: dpfair_learn::LearnError| ModelError::Method {
            method: "dp-logistic".into(),
            reason: e.to_string(),
        };
        let x = data.features.view();
        Ok(Output::Classes {
            classes: dpfair_learn::PrivateLogistic::predict(self, x).map_err(err)?,
            probabilities: Some(self.predict_proba(x).map_err(err)?),
        })
    }
}

/// Predictions in the target's original coding.
#[derive(Clone, Debug, PartialEq)]
pub struct Predictions {
    /// Predicted labels in the target's original coding (classification; empty for regression).
    pub labels: Vec<String>,
    /// Class codes behind `labels` (classification).
    pub classes: Option<Vec<u32>>,
    /// n × k class probabilities, columns in the order of `class_labels`, when the model has them.
    pub probabilities: Option<Array2<f64>>,
    /// The target's class labels in code order (classification).
    pub class_labels: Vec<String>,
    /// Outputs of a regression model.
    pub values: Option<Vec<f64>>,
}

/// The model-file envelope (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelFile {
    pub format: String,
    pub version: u32,
    /// The method's name (as in `dpfair fit METHOD`).
    pub method: String,
    /// `dpfair <version>` of the build that wrote the file.
    pub created_by: String,
    pub schema: Schema,
    pub ledger: Ledger,
    /// The method's configuration, as it was used.
    pub config: serde_json::Value,
    pub model: FittedModel,
    /// The held-out check's outcome ([`crate::held_out_check`]): when it chose a constant
    /// class, every prediction is that class. Absent in files of fits without a check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<crate::held_out_check::CheckOutcome>,
    /// The private search that chose this model ([`crate::tune`]): its candidates, the chosen
    /// one and its rule (the cost is the ledger's entry). Absent in files of plain fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    /// `sha256:<hex>` of the canonical JSON of every other field (see the module docs); empty in
    /// version-1 files.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
}

/// What a private search ([`crate::tune`]) released and recorded: written into the tuned
/// model's file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Every candidate's configuration, in the order given; the constant classes come last
    /// (index `candidates.len()`).
    pub candidates: Vec<serde_json::Value>,
    /// Every candidate's method (as in `dpfair fit METHOD`), in the same order.
    #[serde(default)]
    pub methods: Vec<String>,
    /// The index of the released candidate (`candidates.len()`: the constant classes).
    pub chosen: usize,
    /// Its noisy accuracy on the selection rows (released with it).
    pub noisy_accuracy: f64,
    /// The selection rows (a public share of the row count).
    pub selection_rows: usize,
    /// The ε of one run (fit and score).
    pub run_epsilon: f64,
    /// The mean of the secret number of runs.
    pub mean_runs: u64,
    /// The theorem behind the cost.
    pub rule: String,
}

impl Selection {
    /// Whether the constant classes won.
    pub fn chose_constant(&self) -> bool {
        self.chosen == self.candidates.len()
    }
}

/// A fit's own private estimate of its fairness measure against its target, computed from
/// released values only (post-processing): what `dpfair fit` prints as "met" and the Python
/// package warns about (`FairnessWarning`).
#[derive(Clone, Debug, PartialEq)]
pub struct FairnessEstimate {
    /// The measure in words.
    pub measure: String,
    /// The target level (α).
    pub target: f64,
    /// The estimate of the measure.
    pub estimate: f64,
    /// Whether the estimate is within the target.
    pub met: bool,
}

impl ModelFile {
    /// The fit's own private estimate of its fairness measure, where its releases give one:
    /// FDP-Fair's server estimate of |DD| at τ̃ ([`crate::fdp_fair::FederatedInfo`]) and the
    /// decoupled classifier's parity after the flips on its released rates, the group-thresholds
    /// classifier's gap on its released table. `None` for the
    /// other methods (they release no estimate of their measure), for models written before
    /// the level was recorded, and when the held-out check replaced the model by a constant
    /// (whose parity gap is 0).
    ///
    /// ```
    /// # use dpfair::estimators::{example_data, example_schema, Decoupled};
    /// # use dpfair::{Estimator, Params, Session};
    /// let est = Decoupled::params().epsilon(3.0).check()?;
    /// let mut session = Session::new(3.0, 1e-5)?;
    /// let fitted = est.fit(&example_data(2_000, 2, 1), &mut session)?;
    /// let file = fitted.to_model_file(example_schema(2))?;
    /// // The noise is the OS's: in the rare fit whose check chose a constant there is none.
    /// match file.fairness_estimate() {
    ///     Some(estimate) => assert_eq!(estimate.met, estimate.estimate <= estimate.target + 1e-9),
    ///     None => assert!(file.check.as_ref().is_some_and(|c| c.replaced())),
    /// }
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn fairness_estimate(&self) -> Option<FairnessEstimate> {
        if self.check.as_ref().is_some_and(|c| c.replaced()) {
            return None;
        }
        match &self.model {
            FittedModel::CdpFair(saved) => {
                let info = saved.federated.as_ref()?;
                let estimate = info.search.dd_at_tau().abs();
                Some(FairnessEstimate {
                    measure: "demographic disparity |DD| (the server's private estimate at τ̃)"
                        .into(),
                    target: info.config.alpha,
                    estimate,
                    met: estimate <= info.config.alpha,
                })
            }
            FittedModel::Decoupled(m) => {
                let target = m.parity_level?;
                let [a, b] = m.rates_after_flips();
                let estimate = (a - b).abs();
                Some(FairnessEstimate {
                    measure: "demographic parity difference (on the released rates, after the \
                              flips)"
                        .into(),
                    target,
                    estimate,
                    met: estimate <= target + 1e-9,
                })
            }
            FittedModel::GroupThresholds(m) => {
                let estimate = m.choice.released_gap;
                Some(FairnessEstimate {
                    measure: format!(
                        "{} difference (the largest minus the smallest rate across the groups, \
                         on the released table)",
                        m.constraint
                    ),
                    target: m.level,
                    estimate,
                    met: estimate <= m.level + 1e-9,
                })
            }
            _ => None,
        }
    }

    /// FDP-Fair's round 2 at the server: Algorithm 2's selection over the sites' trees
    /// ([`crate::fdp_fair::protocol::aggregate_round2`], which validates every transcript
    /// first) and the model file `dpfair predict` reads, with every site's ledger (total: the
    /// worst site's `(ε_s, δ_s)`, federated DP).
    pub fn from_federation(
        global: &crate::fdp_fair::Global,
        rounds: &[crate::fdp_fair::Round2],
        config: &crate::fdp_fair::SearchConfig,
    ) -> crate::Result<ModelFile> {
        let (model, ledger) = crate::fdp_fair::protocol::aggregate_round2(global, rounds, config)?;
        let schema = global.schema.clone().ok_or_else(|| {
            crate::Error::InvalidData(
                "the broadcast carries no data schema (not written by a dpfair site)".into(),
            )
        })?;
        Ok(ModelFile::new(schema, ledger, config, model.into())?)
    }

    /// Wrap a fitted model: `config` is the method's serde `Config`.
    pub fn new(
        schema: Schema,
        ledger: Ledger,
        config: &impl Serialize,
        model: FittedModel,
    ) -> Result<Self> {
        let method = model.predictor().method().to_string();
        let config = serde_json::to_value(config).map_err(|e| ModelError::Method {
            method: method.clone(),
            reason: format!("configuration does not serialize: {e}"),
        })?;
        let mut file = ModelFile {
            format: FORMAT.into(),
            version: VERSION,
            method,
            created_by: created_by(),
            schema,
            ledger,
            config,
            model,
            check: None,
            selection: None,
            digest: String::new(),
        };
        file.check_finite()?;
        file.digest = file.body_digest()?;
        Ok(file)
    }

    /// Refuses a model holding a non-finite number (NaN, ±∞): JSON would write it as `null`,
    /// which neither `predict` nor `ledger` reads back. The message names the method, the
    /// number's place and the option that most likely drove the fit there (an extreme learning
    /// rate, penalty or budget), so no unreadable file replaces a good one.
    pub fn check_finite(&self) -> Result<()> {
        let Some(at) = crate::finite::first_non_finite(&self.model) else {
            return Ok(());
        };
        let cause = match self.method.as_str() {
            "dp-logistic" | "decoupled" | "dp-fermi" => "--learning-rate (or --clip) too large",
            "cdp-fair" | "fdp-fair" => "--c-omega (or --bandwidth) extreme",
            "lpct" | "lpct-prune" => {
                "--lambda extreme, or an ε of the partition or a site \
                 too small"
            }
            "dp2dp" => "--learning-rate or --rho extreme",
            "group-thresholds" => "--learning-rate too large",
            _ => "an option at an extreme value",
        };
        Err(ModelError::Method {
            method: self.method.clone(),
            reason: format!(
                "the fitted model holds a non-finite number (model{at}), which a model file \
                 cannot store; most likely {cause}. Nothing was written"
            ),
        })
    }

    /// The file with the fit's held-out check outcome (and a fresh digest).
    pub fn with_check(
        mut self,
        check: Option<crate::held_out_check::CheckOutcome>,
    ) -> Result<Self> {
        self.check = check;
        self.digest = self.body_digest()?;
        Ok(self)
    }

    /// The file with the private search that chose the model (and a fresh digest).
    pub fn with_selection(mut self, selection: Option<Selection>) -> Result<Self> {
        self.selection = selection;
        self.digest = self.body_digest()?;
        Ok(self)
    }

    /// `sha256:<hex>` of the canonical JSON of every field but `digest` (object keys sorted, no
    /// white space; numbers as serde_json writes them, which read back exactly).
    pub fn body_digest(&self) -> Result<String> {
        use sha2::{Digest, Sha256};
        let write_err = |e: serde_json::Error| ModelError::Write {
            path: "(memory)".into(),
            reason: e.to_string(),
        };
        let mut value = serde_json::to_value(self).map_err(write_err)?;
        if let Some(map) = value.as_object_mut() {
            map.remove("digest");
        }
        let canonical = canonical_json(&value);
        let hash = Sha256::digest(canonical.as_bytes());
        Ok(format!(
            "sha256:{}",
            hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ))
    }

    /// Whether the file carried a digest that matched its content when it was read (always true
    /// for a file made in memory; false for version-1 files).
    pub fn is_verified(&self) -> bool {
        !self.digest.is_empty()
    }

    /// The file as pretty JSON, written at this build's version with a fresh digest; a file read
    /// unverified ([`ModelFile::is_verified`]) stays unverified (version 1, no digest), so that
    /// saving it again never seals content nobody checked.
    pub fn to_json(&self) -> Result<String> {
        self.check_finite()?;
        let mut out = self.clone();
        if self.is_verified() {
            out.version = VERSION;
            out.digest = out.body_digest()?;
        } else {
            out.version = OLDEST_VERSION;
        }
        serde_json::to_string_pretty(&out).map_err(|e| ModelError::Write {
            path: "(memory)".into(),
            reason: e.to_string(),
        })
    }

    /// Write as pretty JSON, atomically (a failed write leaves any previous file intact).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let json = self.to_json()?;
        dpfair_data::output::write_atomic(path, (json + "\n").as_bytes()).map_err(|e| {
            ModelError::Write {
                path: path.display().to_string(),
                reason: e.to_string(),
            }
        })
    }

    /// Read a model file, checking `format` and `version` before anything else so that a wrong
    /// file gets a message about what it is rather than a serde error.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Self::from_json(&text, &path.display().to_string())
    }

    /// Parse a model file's text; `origin` names it in messages.
    pub fn from_json(text: &str, origin: &str) -> Result<Self> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text); // a byte-order mark is not JSON
        let format_err = |reason: String| ModelError::Format {
            path: origin.to_string(),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format_err(format!("not JSON ({e})")))?;
        match value.get("format").and_then(|f| f.as_str()) {
            Some(FORMAT) => {}
            Some(other) => return Err(format_err(format!("its format is `{other}`"))),
            None => return Err(format_err("it has no `format` field".into())),
        }
        let version = value
            .get("version")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| format_err("it has no numeric `version` field".into()))?;
        if !(OLDEST_VERSION as u64..=VERSION as u64).contains(&version) {
            return Err(ModelError::Version {
                path: origin.to_string(),
                found: version,
                created: value
                    .get("created_by")
                    .and_then(|v| v.as_str())
                    .unwrap_or("unknown")
                    .to_string(),
            });
        }
        let file: ModelFile =
            serde_json::from_value(value).map_err(|e| format_err(e.to_string()))?;
        file.check_integrity(version, origin)?;
        Ok(file)
    }

    /// The checks of the module docs: `method` names the model's kind, and (from version 2 on)
    /// the digest matches the body.
    fn check_integrity(&self, version: u64, origin: &str) -> Result<()> {
        let tampered = |reason: String| ModelError::Tampered {
            path: origin.to_string(),
            reason,
        };
        let kind = self.model.predictor().method();
        if self.method != kind {
            return Err(tampered(format!(
                "its `method` says `{}` but its model is a `{kind}` model",
                self.method
            )));
        }
        if version < 2 {
            // A version-1 file was written before digests: one that carries a digest was
            // downgraded by an edit, to skip the check below (issue: one character bypassed it).
            if !self.digest.is_empty() {
                return Err(tampered(format!(
                    "it claims version {version}, written before model files carried a digest, \
                     yet it carries one (an edited `version`?)"
                )));
            }
            return Ok(());
        }
        if self.digest.is_empty() {
            return Err(tampered("it has no `digest`".into()));
        }
        if self.body_digest()? != self.digest {
            return Err(tampered("its digest does not match its content".into()));
        }
        Ok(())
    }

    /// Predict for `data` (read with [`Schema::load`] from this file's schema), checking the
    /// model's output against the schema and mapping class codes to the original labels.
    pub fn predict(&self, data: &Dataset, rng: &mut Noise) -> Result<Predictions> {
        let expected = self.schema.n_features();
        if data.n_features() != expected {
            return Err(ModelError::Mismatch(format!(
                "the model expects {expected} features, the data has {}",
                data.n_features()
            )));
        }
        let n = data.n_rows();
        let output = match self.check.as_ref().and_then(|c| c.constant_output(n)) {
            Some(constant) => constant,
            None => self.model.predictor().predict(data, rng)?,
        };
        let encoding = self.schema.target.as_ref().map(|t| &t.encoding);
        match output {
            Output::Values(values) => {
                if values.len() != n {
                    return Err(ModelError::Mismatch(format!(
                        "{} outputs for {n} rows",
                        values.len()
                    )));
                }
                Ok(Predictions {
                    labels: Vec::new(),
                    classes: None,
                    probabilities: None,
                    class_labels: Vec::new(),
                    values: Some(values),
                })
            }
            Output::Classes {
                classes,
                probabilities,
            } => {
                let class_labels = match encoding {
                    Some(TargetEncoding::Binary { labels })
                    | Some(TargetEncoding::Multiclass { labels }) => labels.clone(),
                    _ => {
                        return Err(ModelError::Mismatch(
                            "a classifier's schema has no class labels".into(),
                        ));
                    }
                };
                let k = class_labels.len();
                if classes.len() != n {
                    return Err(ModelError::Mismatch(format!(
                        "{} predictions for {n} rows",
                        classes.len()
                    )));
                }
                if let Some(p) = &probabilities
                    && p.dim() != (n, k)
                {
                    return Err(ModelError::Mismatch(format!(
                        "probabilities of shape {:?}, expected ({n}, {k})",
                        p.dim()
                    )));
                }
                let labels = classes
                    .iter()
                    .map(|&c| {
                        class_labels.get(c as usize).cloned().ok_or_else(|| {
                            ModelError::Mismatch(format!("class code {c} of {k} classes"))
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Predictions {
                    labels,
                    classes: Some(classes),
                    probabilities,
                    class_labels,
                    values: None,
                })
            }
        }
    }
}

/// `value` as compact JSON with every object's keys sorted (independent of serde_json's map
/// ordering features).
fn canonical_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(canonical_json)
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

/// `dpfair <version>`, written into every model file.
pub fn created_by() -> String {
    format!("dpfair {}", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpfair_data::{FeatureColumn, TargetColumn};
    use dpfair_privacy::Budget;

    fn schema() -> Schema {
        Schema {
            features: vec![FeatureColumn::Numeric { name: "x".into() }],
            sensitive: None,
            target: Some(TargetColumn {
                name: "y".into(),
                encoding: TargetEncoding::Binary {
                    labels: vec!["no".into(), "yes".into()],
                },
            }),
            scaling: Default::default(),
        }
    }

    fn data(n: usize) -> Dataset {
        Dataset {
            features: Array2::zeros((n, 1)),
            feature_names: vec!["x".into()],
            groups: None,
            target: None,
        }
    }

    fn file(randomized: bool) -> ModelFile {
        let m = ConstantClassifier::new(vec![0.25, 0.75], randomized).unwrap();
        ModelFile::new(
            schema(),
            Ledger::new(Budget::pure(1.0).unwrap()),
            &serde_json::json!({"note": "test"}),
            FittedModel::ConstantClassifier(m),
        )
        .unwrap()
    }

    /// A model with a non-finite number is refused before any file is written (JSON would
    /// store `null`, which nothing reads back), naming the method and the number's place; the
    /// old file stays (issue #41).
    #[test]
    fn a_non_finite_model_is_never_written() {
        let bad = FittedModel::ConstantClassifier(ConstantClassifier {
            probabilities: vec![0.5, f64::NAN],
            randomized: false,
        });
        let e = ModelFile::new(
            schema(),
            Ledger::new(Budget::pure(1.0).unwrap()),
            &serde_json::json!({}),
            bad.clone(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("constant-classifier") && e.contains("model.probabilities[1]"),
            "{e}"
        );
        let dir =
            std::env::temp_dir().join(format!("dpfair-model-nonfinite-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.json");
        file(false).save(&path).unwrap();
        let before = std::fs::read(&path).unwrap();
        let mut f = file(false);
        f.model = bad;
        assert!(f.save(&path).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert!(ModelFile::load(&path).is_ok());
    }

    #[test]
    fn round_trips_through_json_and_predicts_original_labels() {
        let f = file(false);
        let back = ModelFile::from_json(&f.to_json().unwrap(), "t").unwrap();
        assert_eq!(back, f);
        assert_eq!(back.method, "constant-classifier");
        let p = back.predict(&data(3), &mut Noise::seeded(1)).unwrap();
        assert_eq!(p.labels, vec!["yes"; 3]);
        assert_eq!(p.probabilities.unwrap().row(0).to_vec(), vec![0.25, 0.75]);
    }

    #[test]
    fn randomized_predictions_repeat_with_the_seed_and_follow_the_probabilities() {
        let f = file(true);
        let a = f.predict(&data(4000), &mut Noise::seeded(3)).unwrap();
        let b = f.predict(&data(4000), &mut Noise::seeded(3)).unwrap();
        assert_eq!(a, b);
        let yes = a.labels.iter().filter(|l| *l == "yes").count() as f64 / 4000.0;
        // Binomial(4000, 0.75): standard error √(0.75·0.25/4000) ≈ 0.0068; 5 standard errors.
        assert!((yes - 0.75).abs() < 5.0 * 0.0069, "{yes}");
    }

    #[test]
    fn refuses_wrong_format_version_and_width() {
        let f = file(false);
        let mut v: serde_json::Value = serde_json::from_str(&f.to_json().unwrap()).unwrap();
        v["version"] = 99.into();
        let e = ModelFile::from_json(&v.to_string(), "m.json").unwrap_err();
        assert!(matches!(e, ModelError::Version { found: 99, .. }), "{e}");
        v["format"] = "other".into();
        assert!(matches!(
            ModelFile::from_json(&v.to_string(), "m.json").unwrap_err(),
            ModelError::Format { .. }
        ));
        assert!(ModelFile::from_json("[1, 2", "m.json").is_err());
        let mut wide = data(2);
        wide.features = Array2::zeros((2, 3));
        assert!(matches!(
            f.predict(&wide, &mut Noise::seeded(1)).unwrap_err(),
            ModelError::Mismatch(_)
        ));
        assert!(ConstantClassifier::new(vec![0.5, 0.6], false).is_err());
    }

    #[test]
    fn edited_files_are_refused_and_version_1_files_are_read_unverified() {
        let f = file(false);
        let text = f.to_json().unwrap();
        assert!(ModelFile::from_json(&text, "m.json").unwrap().is_verified());
        // A smaller ε in the ledger.
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["ledger"]["budget"]["epsilon"] = 0.5.into();
        let e = ModelFile::from_json(&v.to_string(), "m.json").unwrap_err();
        assert!(matches!(e, ModelError::Tampered { .. }), "{e}");
        assert!(e.to_string().contains("not a signature"), "{e}");
        // Another method's name on the same model.
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["method"] = "dp2dp".into();
        let e = ModelFile::from_json(&v.to_string(), "m.json").unwrap_err();
        assert!(e.to_string().contains("`dp2dp`"), "{e}");
        // No digest at version 2.
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v.as_object_mut().unwrap().remove("digest");
        assert!(ModelFile::from_json(&v.to_string(), "m.json").is_err());
        // Version 1 (no digest): read, not verified, and written back unverified (a save never
        // seals content nobody checked).
        v["version"] = 1.into();
        let old = ModelFile::from_json(&v.to_string(), "m.json").unwrap();
        assert!(!old.is_verified());
        let again = ModelFile::from_json(&old.to_json().unwrap(), "m.json").unwrap();
        assert!(!again.is_verified() && again.version == 1);
    }

    /// The downgrade attack: `"version": 2` edited to `1` with the stale digest kept used to skip
    /// the integrity check, so edited coefficients and ledgers were read as if whole.
    #[test]
    fn a_version_downgrade_keeping_the_digest_is_refused() {
        let text = file(false).to_json().unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["version"] = 1.into();
        v["ledger"]["budget"]["epsilon"] = 0.001.into();
        let e = ModelFile::from_json(&v.to_string(), "m.json").unwrap_err();
        assert!(matches!(e, ModelError::Tampered { .. }), "{e}");
        assert!(e.to_string().contains("edited `version`"), "{e}");
        // Unedited but downgraded: refused all the same (the digest says it is not version 1).
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["version"] = 1.into();
        assert!(ModelFile::from_json(&v.to_string(), "m.json").is_err());
    }

    #[test]
    fn infinite_epsilon_ledgers_round_trip() {
        let mut ledger = Ledger::unlimited();
        ledger
            .charge(dpfair_privacy::Entry::non_private("fit", "no noise"))
            .unwrap();
        let m = ConstantClassifier::new(vec![0.25, 0.75], false).unwrap();
        let f = ModelFile::new(
            schema(),
            ledger,
            &serde_json::json!({ "epsilon": "inf" }),
            FittedModel::ConstantClassifier(m),
        )
        .unwrap();
        let back = ModelFile::from_json(&f.to_json().unwrap(), "t").unwrap();
        assert_eq!(back.ledger.total().unwrap().epsilon, f64::INFINITY);
        assert_eq!(back, f);
    }
}
