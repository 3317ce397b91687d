//! The **release report** of one model file (issue #44; docs/evaluation.md, "The release
//! report"): what `dpfair report` and Python's `Model.report` write, as HTML
//! ([`ReleaseReport::to_html`]) and as JSON ([`ReleaseReport::to_json`]). One value,
//! [`ReleaseReport`], holds every figure both files show, so the two cannot disagree, and both
//! front ends build it and render it here, so they write the same files.
//!
//! Everything in it is public or released: the method, the public schema the model carries, its
//! ledger (each release and the total), the file's digest, the held-out check's outcome and the
//! fit's own fairness estimate (both computed from released values), and, only when asked for
//! with a budget, a private report of the model's predictions ([`Evaluation::release`]: the
//! group report of a binary classifier, the multi-class report of DP2DP, the MSE and KS report
//! of a regressor) with the ledger of that extra release. No figure here is computed exactly on
//! private rows.
//!
//! ```
//! # use dpfair::estimators::{example_data, example_schema, Decoupled};
//! # use dpfair::{Estimator, Params, Session};
//! use dpfair::release_report::{Evaluation, ReleaseReport};
//! let est = Decoupled::params().epsilon(3.0).check()?;
//! let mut session = Session::new(3.0, 1e-5)?;
//! let file = est.fit(&example_data(2_000, 2, 1), &mut session)?.to_model_file(example_schema(2))?;
//! let report = ReleaseReport::new(&file, Evaluation::NotRequested);
//! assert_eq!(report.releases.len(), file.ledger.entries().len());
//! assert!(report.digest.verified);
//! assert!(report.method.description.unwrap().contains("Ghoukasian"));
//! # Ok::<(), dpfair::Error>(())
//! ```

use crate::model::ModelFile;
use dpfair_data::FeatureColumn;
use dpfair_fairness::PrivateGroupReport;
use dpfair_fairness::private_scores::{MulticlassReport, RegressionReport};
use dpfair_privacy::ledger::{readable, readable_up};
use dpfair_privacy::{Composition, Ledger, NoiseSource};
use serde::Serialize;

mod audit;
mod evaluate;
mod html;
mod plot;

pub use audit::{AuditFinding, AuditSection, PlantedBug};
pub use evaluate::Declared;

/// What `kind` says in a report's JSON.
pub const KIND: &str = "dpfair release report";

/// The release report of one model (module docs).
#[derive(Clone, Debug, Serialize)]
pub struct ReleaseReport {
    /// Always [`KIND`].
    pub kind: &'static str,
    pub method: MethodInfo,
    pub schema: PublicSchema,
    /// The fit's releases, one per ledger entry, in order.
    pub releases: Vec<Release>,
    pub total: LedgerTotal,
    pub digest: DigestInfo,
    /// The held-out check's outcome in words ([`crate::held_out_check::CheckOutcome::describe`]);
    /// `None` when the fit ran none.
    pub held_out_check: Option<String>,
    /// The fit's own private estimate of its fairness measure ([`ModelFile::fairness_estimate`]).
    pub fairness_estimate: Option<FairnessEstimateInfo>,
    pub evaluation: Evaluation,
    /// A `dpfair audit` of the model's method, when one was given ([`ReleaseReport::with_audit`]).
    pub audit: Option<AuditSection>,
    /// The model's full ledger, for machines (the same entries as `releases`).
    pub ledger: Ledger,
}

/// The method and where it comes from.
#[derive(Clone, Debug, Serialize)]
pub struct MethodInfo {
    /// As in `dpfair fit METHOD`.
    pub name: String,
    /// The method and its paper in one line ([`method_summary`]: the `dpfair fit METHOD --help`
    /// summary), when known.
    pub description: Option<String>,
    /// `dpfair <version>` of the build that wrote the model.
    pub created_by: String,
}

/// The schema the model carries: public by declaration or released (no ledger entry of its own).
#[derive(Clone, Debug, Serialize)]
pub struct PublicSchema {
    /// The feature source columns, in order.
    pub features: Vec<FeatureInfo>,
    /// The sensitive attribute's name and groups, when the model has one.
    pub sensitive: Option<SensitiveInfo>,
    /// The target's name, task and classes (empty for a real target).
    pub target: Option<TargetInfo>,
}

/// One feature source column.
#[derive(Clone, Debug, Serialize)]
pub struct FeatureInfo {
    pub name: String,
    /// The levels of a categorical column (empty for a numeric one).
    pub levels: Vec<String>,
}

/// The sensitive attribute.
#[derive(Clone, Debug, Serialize)]
pub struct SensitiveInfo {
    pub name: String,
    pub groups: Vec<String>,
    /// Whether the groups were declared by the user (`--groups`) rather than found in the data.
    pub declared: bool,
}

/// The target.
#[derive(Clone, Debug, Serialize)]
pub struct TargetInfo {
    pub name: String,
    /// `binary`, `multiclass` or `regression`.
    pub task: String,
    pub classes: Vec<String>,
}

/// One ledger entry as a person reads it.
#[derive(Clone, Debug, Serialize)]
pub struct Release {
    pub label: String,
    pub mechanism: String,
    /// The sensitivity and its norm (e.g. `2 (l1)`).
    pub sensitivity: String,
    /// The noise scale.
    pub scale: String,
    /// The cost in the mechanism's native unit (ε rounded up).
    pub cost: String,
    /// The neighbouring relation the entry is certified for.
    pub relation: String,
    /// `sequential`, or `parallel: <split>: <part>` (outer splits first).
    pub composition: String,
}

/// The ledger's total and the facts a reader checks beside it.
#[derive(Clone, Debug, Serialize)]
pub struct LedgerTotal {
    /// ε of the total (rounded up), or `None` when it cannot be composed.
    pub epsilon: Option<String>,
    /// δ of the total (rounded up).
    pub delta: Option<String>,
    /// The composition rule, or why there is no total.
    pub rule: String,
    /// The relation the total is certified for, in words.
    pub relation: String,
    /// Where the release noise came from, in words.
    pub noise: String,
    /// Whether the total is a certified, finite bound from private noise ([`Ledger::is_certified`],
    /// [`Ledger::is_private`], ε < ∞).
    pub certified: bool,
    /// The guarantee line of `dpfair ledger` ([`Ledger::guarantee`]).
    pub guarantee: String,
}

/// The model file's digest.
#[derive(Clone, Debug, Serialize)]
pub struct DigestInfo {
    /// `sha256:<hex>`, empty for a version-1 file.
    pub value: String,
    /// Whether it matched the content when the file was read ([`ModelFile::is_verified`]).
    pub verified: bool,
}

/// [`crate::model::FairnessEstimate`] as the report shows it.
#[derive(Clone, Debug, Serialize)]
pub struct FairnessEstimateInfo {
    pub measure: String,
    pub target: f64,
    pub estimate: f64,
    pub met: bool,
}

/// The report's evaluation section.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Evaluation {
    /// No evaluation data was given.
    NotRequested,
    /// Evaluation data was given without a budget: nothing was computed on it (an evaluation
    /// of private rows needs a charged release).
    NeedsEpsilon,
    /// The private report and the ledger of its release.
    Released {
        report: Box<EvaluationReport>,
        /// The evaluation's release (one entry, two for a regressor), separate from the fit's
        /// ledger.
        releases: Vec<Release>,
        total: LedgerTotal,
    },
}

/// The private report of an evaluation, by the model's task (`kind` in the JSON).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[allow(clippy::large_enum_variant)] // held in a Box by `Evaluation::Released`
pub enum EvaluationReport {
    /// A binary classifier's group report.
    Groups(PrivateGroupReport),
    /// DP2DP's or a multi-class model's report.
    Multiclass(MulticlassReport),
    /// A regressor's MSE and KS report.
    Regression(RegressionReport),
}

impl Evaluation {
    /// The released section from a report and the ledger of its release.
    fn released(report: EvaluationReport, ledger: &Ledger) -> Self {
        Evaluation::Released {
            report: Box::new(report),
            releases: releases(ledger),
            total: total(ledger),
        }
    }
}

/// The method named `method` (as in `dpfair fit METHOD`) and its paper in one line: the summary
/// `dpfair fit METHOD --help` shows, and a release report's [`MethodInfo::description`]; `None`
/// for a name `dpfair fit` does not have (e.g. a model file's `constant`).
///
/// ```
/// use dpfair::release_report::method_summary;
/// assert!(method_summary("cdp-fair").unwrap().contains("Xue & Yu"));
/// assert_eq!(method_summary("no-such-method"), None);
/// ```
pub fn method_summary(method: &str) -> Option<&'static str> {
    Some(match method {
        "dp-logistic" => {
            "Differentially private logistic regression (DP-SGD or output perturbation): privacy only"
        }
        "dp-linear" => {
            "Differentially private linear (ridge) regression by noisy sufficient statistics"
        }
        "decoupled" => "Decoupled private fair binary classifier (Ghoukasian & Asoodeh)",
        "cdp-fair" => {
            "CDP-Fair: central DP plug-in classifier under demographic disparity (Xue & Yu)"
        }
        "fdp-fair" => "FDP-Fair simulated over S sites of one CSV (Xue & Yu)",
        "fair-regression" => {
            "Private Wasserstein-barycenter post-processing for fair regression (Xian et al.), \
             of a score column or of a private base regressor (`--base dp-linear`)"
        }
        "lpct" => "LPCT: locally private classification tree with public data (Ma & Yang)",
        "lpct-prune" => "LPCT-prune: LPCT with data-driven pruning (Ma & Yang)",
        "dp2dp" => "DP2DP: private demographic-parity post-processing, multi-class (Say et al.)",
        "group-thresholds" => {
            "Private per-group randomised thresholds for K ≥ 2 groups: demographic parity, equal \
             opportunity or equalized odds"
        }
        _ => return None,
    })
}

impl ReleaseReport {
    /// The report of `file` with the evaluation section `evaluation` ([`Evaluation::release`]
    /// makes a released one).
    pub fn new(file: &ModelFile, evaluation: Evaluation) -> Self {
        ReleaseReport {
            kind: KIND,
            method: MethodInfo {
                name: file.method.clone(),
                description: method_summary(&file.method).map(String::from),
                created_by: file.created_by.clone(),
            },
            schema: public_schema(file),
            releases: releases(&file.ledger),
            total: total(&file.ledger),
            digest: DigestInfo {
                value: file.digest.clone(),
                verified: file.is_verified(),
            },
            held_out_check: file
                .check
                .as_ref()
                .map(|c| c.describe(file.schema.class_labels())),
            fairness_estimate: file.fairness_estimate().map(|e| FairnessEstimateInfo {
                measure: e.measure,
                target: e.target,
                estimate: e.estimate,
                met: e.met,
            }),
            evaluation,
            audit: None,
            ledger: file.ledger.clone(),
        }
    }

    /// The report with the audit of its method ([`AuditSection::from_json`] checks that it is
    /// the model's method).
    ///
    /// ```
    /// # use dpfair::estimators::{example_data, example_schema, DpLogistic};
    /// # use dpfair::{Estimator, Params, Session};
    /// use dpfair::release_report::{AuditSection, Evaluation, ReleaseReport};
    /// let est = DpLogistic::params().epsilon(1.0).check()?;
    /// let file = est
    ///     .fit(&example_data(1_000, 2, 1), &mut Session::new(1.0, 1e-5)?)?
    ///     .to_model_file(example_schema(2))?;
    /// let text = r#"[{"method": "dp-logistic", "size": "quick", "seed": 1, "pair": null,
    ///   "audit": "DP-SGD", "neighbours": "canaries", "event": "guesses", "bound": "one-run",
    ///   "claimed_epsilon": 2.0, "delta": 1e-5, "epsilon_lower": 0.8, "confidence": 0.95,
    ///   "planted": []}]"#;
    /// let audit = AuditSection::from_json(text, &file.method, "audit.json")?;
    /// let report = ReleaseReport::new(&file, Evaluation::NotRequested).with_audit(audit);
    /// assert!(report.to_html().contains("Privacy audit of the method (on generated neighbours)"));
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn with_audit(mut self, audit: AuditSection) -> Self {
        self.audit = Some(audit);
        self
    }

    /// The report as one self-contained HTML page (inline CSS with print rules, no script, no
    /// external resource; every name from the model or the data HTML-escaped).
    ///
    /// ```
    /// # use dpfair::estimators::{example_data, example_schema, DpLogistic};
    /// # use dpfair::{Estimator, Params, Session};
    /// use dpfair::release_report::{Evaluation, ReleaseReport};
    /// let est = DpLogistic::params().epsilon(1.0).check()?;
    /// let mut session = Session::new(1.0, 1e-5)?;
    /// let file = est.fit(&example_data(1_000, 2, 1), &mut session)?.to_model_file(example_schema(2))?;
    /// let html = ReleaseReport::new(&file, Evaluation::NotRequested).to_html();
    /// assert!(html.starts_with("<!DOCTYPE html>") && html.contains(&file.digest));
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn to_html(&self) -> String {
        html::render(self)
    }

    /// The report as pretty JSON text, ending with a newline (the file `dpfair report --json`
    /// writes).
    ///
    /// ```
    /// # use dpfair::estimators::{example_data, example_schema, DpLogistic};
    /// # use dpfair::{Estimator, Params, Session};
    /// use dpfair::release_report::{Evaluation, ReleaseReport};
    /// let est = DpLogistic::params().epsilon(1.0).check()?;
    /// let mut session = Session::new(1.0, 1e-5)?;
    /// let file = est.fit(&example_data(1_000, 2, 1), &mut session)?.to_model_file(example_schema(2))?;
    /// let json = ReleaseReport::new(&file, Evaluation::NotRequested).to_json()?;
    /// assert!(json.contains("\"kind\": \"dpfair release report\""));
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn to_json(&self) -> crate::Result<String> {
        serde_json::to_string_pretty(self)
            .map(|text| text + "\n")
            .map_err(|e| crate::Error::InvalidData(format!("the report as JSON: {e}")))
    }
}

fn public_schema(file: &ModelFile) -> PublicSchema {
    let s = &file.schema;
    PublicSchema {
        features: s
            .features
            .iter()
            .map(|f| match f {
                FeatureColumn::Numeric { name } => FeatureInfo {
                    name: name.clone(),
                    levels: Vec::new(),
                },
                FeatureColumn::Categorical { name, levels } => FeatureInfo {
                    name: name.clone(),
                    levels: levels.clone(),
                },
            })
            .collect(),
        sensitive: s.sensitive.as_ref().map(|g| SensitiveInfo {
            name: g.name.clone(),
            groups: g.levels.clone(),
            declared: g.declared,
        }),
        target: s.target.as_ref().map(|t| TargetInfo {
            name: t.name.clone(),
            task: t.encoding.task().to_string(),
            classes: t.encoding.labels().to_vec(),
        }),
    }
}

/// Each entry of `ledger` in words.
fn releases(ledger: &Ledger) -> Vec<Release> {
    ledger
        .entries()
        .iter()
        .map(|e| Release {
            label: e.label.clone(),
            mechanism: e.mechanism.clone(),
            sensitivity: format!("{} ({})", readable(e.sensitivity), e.norm),
            scale: readable(e.scale),
            cost: e.cost.to_string(),
            relation: e.relation.to_string(),
            composition: match &e.composition {
                Composition::Sequential => "sequential".into(),
                Composition::Parallel {
                    partition,
                    part,
                    within,
                    ..
                } => {
                    let outer: String = within
                        .iter()
                        .map(|s| format!("{}: {} / ", s.partition, s.part))
                        .collect();
                    format!("parallel: {outer}{partition}: {part}")
                }
            },
        })
        .collect()
}

/// The total of `ledger` and its guarantee.
fn total(ledger: &Ledger) -> LedgerTotal {
    let total = ledger.total();
    let finite =
        total.as_ref().is_ok_and(|t| t.epsilon.is_finite()) && ledger.budget().epsilon.is_finite();
    let (epsilon, delta, rule) = match total {
        Ok(t) => (
            Some(readable_up(t.epsilon)),
            Some(readable_up(t.delta)),
            t.rule,
        ),
        Err(e) => (None, None, format!("unavailable ({e})")),
    };
    LedgerTotal {
        epsilon,
        delta,
        rule,
        relation: ledger.relation().describe().to_string(),
        noise: match ledger.noise_source() {
            NoiseSource::Os => "the operating system's CSPRNG",
            NoiseSource::Seeded => "NOT PRIVATE: a seeded stream (reproducible from the seed)",
            NoiseSource::Unrecorded => "not recorded",
        }
        .into(),
        certified: finite && ledger.is_private() && ledger.is_certified(),
        guarantee: ledger.guarantee().into(),
    }
}
