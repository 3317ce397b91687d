//! The release report's audit section ([`AuditSection`]): the findings of `dpfair audit METHOD
//! --json` for the model's method, shown beside the claimed ε (docs/evaluation.md, "The release
//! report"; docs/audits.md). An audit runs the method's release paths on **generated**
//! neighbouring data sets with its own seeded randomness: it is evidence about the method as
//! dpfair ships it, not about this model or its data, and it reads no private rows.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The audit of one release path (one finding of `dpfair audit --json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditFinding {
    /// What is audited.
    pub audit: String,
    /// The neighbouring relation and the pair (or canaries).
    pub neighbours: String,
    /// The output event the bound is computed from.
    pub event: String,
    /// Which bound turns counts into ε.
    pub bound: String,
    /// The ε the audited path claims (the audit's configuration, not this model's).
    pub claimed_epsilon: f64,
    pub delta: f64,
    /// The empirical lower bound on the ε the path spends, at `confidence`.
    pub epsilon_lower: f64,
    pub confidence: f64,
    /// The deliberately broken variants and their lower bounds: the audit's power.
    pub planted: Vec<PlantedBug>,
    /// Seconds for both audits.
    #[serde(default)]
    pub runtime_seconds: f64,
}

impl AuditFinding {
    /// The path passes: its bound does not exceed its claim (no violation seen).
    ///
    /// ```
    /// # use dpfair::release_report::{AuditFinding, PlantedBug};
    /// let f = AuditFinding {
    ///     audit: "a release".into(), neighbours: "n".into(), event: "e".into(), bound: "b".into(),
    ///     claimed_epsilon: 1.0, delta: 0.0, epsilon_lower: 0.9, confidence: 0.99,
    ///     planted: vec![PlantedBug { bug: "noise × 0.3".into(), epsilon_lower: 2.0 }],
    ///     runtime_seconds: 1.0,
    /// };
    /// assert!(f.passes() && f.has_power());
    /// ```
    pub fn passes(&self) -> bool {
        self.epsilon_lower <= self.claimed_epsilon
    }

    /// The audit has power: some planted bug's bound exceeds the claim.
    pub fn has_power(&self) -> bool {
        self.planted
            .iter()
            .any(|p| p.epsilon_lower > self.claimed_epsilon)
    }
}

/// A planted bug of an audit and its lower bound at the same claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlantedBug {
    pub bug: String,
    pub epsilon_lower: f64,
}

/// The audit of the model's method: its settings and findings (module docs).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditSection {
    /// The audited method (the model's).
    pub method: String,
    /// `quick` or `thorough`.
    pub size: String,
    /// The audit's own seed (its canary coins and simulated noise).
    pub seed: u64,
    /// The one searched pair audited, when the audit was restricted to it.
    pub pair: Option<String>,
    pub findings: Vec<AuditFinding>,
}

/// One line of `dpfair audit --json`: a finding stamped with the run's settings.
#[derive(Deserialize)]
struct Stamped {
    method: Option<String>,
    size: Option<String>,
    seed: Option<u64>,
    #[serde(default)]
    pair: Option<String>,
    #[serde(flatten)]
    finding: AuditFinding,
}

impl AuditSection {
    /// Reads the text `dpfair audit METHOD --json` printed and checks that it audits `method`
    /// (the model's); `source` names the file in messages.
    ///
    /// ```
    /// use dpfair::release_report::AuditSection;
    /// let text = r#"[{"method": "cdp-fair", "size": "quick", "seed": 1,
    ///   "audit": "CDP-Fair: the π̃ release", "neighbours": "replace-one", "event": "a threshold",
    ///   "bound": "Clopper–Pearson", "claimed_epsilon": 1.0, "delta": 1e-5,
    ///   "epsilon_lower": 0.24, "confidence": 0.99,
    ///   "planted": [{"bug": "noise × 0.3", "epsilon_lower": 1.43}], "runtime_seconds": 11.0}]"#;
    /// let audit = AuditSection::from_json(text, "cdp-fair", "audit.json")?;
    /// assert_eq!(audit.findings[0].epsilon_lower, 0.24);
    /// let e = AuditSection::from_json(text, "decoupled", "audit.json").unwrap_err();
    /// assert!(e.to_string().contains("`cdp-fair`") && e.to_string().contains("`decoupled`"));
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn from_json(text: &str, method: &str, source: &str) -> Result<AuditSection> {
        let bad = |reason: String| Error::InvalidData(format!("{source}: {reason}"));
        let lines: Vec<Stamped> = serde_json::from_str(text).map_err(|e| {
            bad(format!(
                "not the output of `dpfair audit METHOD --json` ({e})"
            ))
        })?;
        let Some(first) = lines.first() else {
            return Err(bad("the audit has no findings".into()));
        };
        let settings = |s: &Stamped| (s.method.clone(), s.size.clone(), s.seed, s.pair.clone());
        if lines.iter().any(|s| settings(s) != settings(first)) {
            return Err(bad("the findings come from different audit runs".into()));
        }
        let (Some(audited), Some(size), Some(seed)) =
            (first.method.clone(), first.size.clone(), first.seed)
        else {
            return Err(bad(
                "the findings do not name their method, size and seed: write the file with \
                 this version's `dpfair audit METHOD --json`"
                    .into(),
            ));
        };
        if audited != method {
            return Err(bad(format!(
                "an audit of `{audited}`, but the model is a `{method}` model: audit its method \
                 (`dpfair audit {method} --json`)"
            )));
        }
        Ok(AuditSection {
            method: audited,
            size,
            seed,
            pair: first.pair.clone(),
            findings: lines.into_iter().map(|s| s.finding).collect(),
        })
    }
}
