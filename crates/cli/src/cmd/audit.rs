//! `dpfair audit METHOD`: empirical privacy audits of a method's releases as shipped, on
//! generated data (never the user's): each audit reports a lower bound on the ε the method
//! really spends, with its confidence level, next to the ε it claims, and the same audit of a
//! deliberately broken variant (a planted bug) to show that the audit has the power to see a
//! violation. The auditors are the privacy crate's (`dpfair_privacy::audit`); the list of audits,
//! their neighbours, events and power is in the repository's `docs/audits.md`.
//!
//! * [`one_run`]: DP-SGD trainings (dp-logistic, the decoupled base model, DP2DP's Phase 1,
//!   strict DP-FERMI): Steinke, Nasr & Jagielski's one-run audit with Dirac canaries.
//! * [`dp2dp_phase2`]: DP2DP's Phase 2 (π̄ and λ̄ of a whole run) by many runs on a pair of pools.
//! * [`ldp`]: LPCT's local randomiser on its worst-case pair of holders.
//! * [`search`]: the central releases (fair regression, the decoupled rates, CDP-/FDP-Fair's π̃)
//!   on searched neighbouring data sets.
//!
//! Exit status: 0 when every audit passes (bound ≤ claim); 1 when an audit proves a violation (a
//! bug in dpfair); 2 for bad arguments. The audits read no private data, so the exit status and
//! output depend only on the arguments and the audit's own randomness.

mod dp2dp_phase2;
mod ldp;
mod one_run;
mod search;

use crate::error::{CliError, CliResult};
use serde::Serialize;
use std::time::Instant;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// DP-SGD logistic regression (one-run audit; add/remove neighbours).
    DpLogistic,
    /// Decoupled classifier: the joint DP-SGD base model (one-run) and the rate release (search).
    Decoupled,
    /// DP2DP: Phase 1 DP-SGD (one-run audit) and Phase 2's whole release (many runs).
    Dp2dp,
    /// Strict DP-FERMI (one-run audit of the θ releases).
    Fermi,
    /// LPCT's local randomiser (worst-case pair of holders).
    Lpct,
    /// LPCT-prune: the same randomiser, per round.
    LpctPrune,
    /// Fair regression: the private joint histogram (search).
    FairRegression,
    /// CDP-Fair: the π̃ release (search).
    CdpFair,
    /// FDP-Fair: one site's π̃ release (search; sites are disjoint, parallel composition).
    FdpFair,
}

/// How big the audits are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Size {
    /// CI-sized: seconds per audit.
    Quick,
    /// Release-sized: more canaries / trials, tighter bounds; minutes.
    Thorough,
}

#[derive(clap::Args)]
pub struct Args {
    /// The method to audit.
    #[arg(value_enum)]
    method: Method,
    /// CI-sized audits (the default).
    #[arg(long, conflicts_with = "thorough")]
    quick: bool,
    /// Release-sized audits: more canaries and trials, tighter bounds, minutes per method.
    #[arg(long)]
    thorough: bool,
    /// Seed of the audit's own randomness (canary coins, simulated noise): audits are
    /// simulations, so their noise is seeded and nothing they produce is a private release.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the findings as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Searched audits only (fair-regression, decoupled, cdp-fair, fdp-fair): audit only the
    /// candidate pair of this name (a pair an earlier search chose, kept as a regression case).
    #[arg(long, value_name = "NAME")]
    pair: Option<String>,
}

/// The audit of one release path and of its planted bug: the library's type, which `dpfair
/// report --audit` reads back.
pub use dpfair::release_report::{AuditFinding as Finding, PlantedBug as Planted};

/// A finding as `--json` prints it: the method, size, seed and pair of the run, then the
/// finding's fields.
#[derive(Serialize)]
struct Stamped<'a> {
    method: Method,
    size: Size,
    seed: u64,
    pair: Option<&'a str>,
    #[serde(flatten)]
    finding: &'a Finding,
}

/// A finding's two audits, timed.
pub struct Timed<T> {
    pub value: T,
    pub seconds: f64,
}

pub fn timed<T>(f: impl FnOnce() -> CliResult<T>) -> CliResult<Timed<T>> {
    let start = Instant::now();
    let value = f()?;
    Ok(Timed {
        value,
        seconds: start.elapsed().as_secs_f64(),
    })
}

const HOW_TO_READ: &str = "\
How to read this: each line audits one release path on generated neighbouring data. ε_lower is
a lower bound on the ε the path really spends, valid with the stated confidence: if the path
were as private as claimed, ε_lower would exceed the claim with probability at most 1 − confidence.
PASS means ε_lower ≤ claimed ε (no violation seen; evidence, not proof). The planted bug is
the same path deliberately broken; its ε_lower above the claim shows the audit can see a
violation of that size (power). See docs/audits.md for each audit's neighbours, event and power.";

pub fn run(args: Args) -> CliResult {
    let size = if args.thorough {
        Size::Thorough
    } else {
        Size::Quick
    };
    let pair = args.pair.as_deref();
    if pair.is_some()
        && !matches!(
            args.method,
            Method::Decoupled | Method::FairRegression | Method::CdpFair | Method::FdpFair
        )
    {
        return Err(CliError::BadInput(format!(
            "--pair: `{:?}` has no searched neighbours (only fair-regression, decoupled, \
             cdp-fair and fdp-fair do)",
            args.method
        )));
    }
    let findings = match args.method {
        Method::DpLogistic => vec![one_run::dp_logistic(size, args.seed)?],
        Method::Decoupled if pair.is_some() => {
            vec![search::decoupled_rates(size, args.seed, pair)?]
        }
        Method::Decoupled => vec![
            one_run::decoupled_base(size, args.seed)?,
            search::decoupled_rates(size, args.seed, None)?,
        ],
        Method::Dp2dp => vec![
            one_run::dp2dp_phase1(size, args.seed)?,
            dp2dp_phase2::phase2(size, args.seed)?,
        ],
        Method::Fermi => vec![one_run::fermi(size, args.seed)?],
        Method::Lpct => ldp::lpct(size, args.seed, "LPCT")?,
        Method::LpctPrune => ldp::lpct(size, args.seed, "LPCT-prune (each round)")?,
        Method::FairRegression => vec![search::fair_regression(size, args.seed, pair)?],
        Method::CdpFair => vec![search::pi_release(size, args.seed, "CDP-Fair", pair)?],
        Method::FdpFair => vec![search::pi_release(
            size,
            args.seed,
            "FDP-Fair (one site)",
            pair,
        )?],
    };
    if args.json {
        // Each finding stamped with the run's settings (`dpfair report --audit` reads them).
        let stamped: Vec<Stamped<'_>> = findings
            .iter()
            .map(|finding| Stamped {
                method: args.method,
                size,
                seed: args.seed,
                pair,
                finding,
            })
            .collect();
        let out = serde_json::to_string_pretty(&stamped).map_err(CliError::internal)?;
        println!("{out}");
    } else {
        print_text(args.method, size, &findings);
    }
    let violations: Vec<&str> = findings
        .iter()
        .filter(|f| !f.passes())
        .map(|f| f.audit.as_str())
        .collect();
    if violations.is_empty() {
        Ok(())
    } else {
        Err(CliError::Internal(format!(
            "privacy violation proven by the audit of: {} (please report it)",
            violations.join("; ")
        )))
    }
}

fn print_text(method: Method, size: Size, findings: &[Finding]) {
    let name = serde_json::to_value(method)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    println!("dpfair audit {name} ({size:?} size)\n");
    for f in findings {
        println!("{}", f.audit);
        println!("  neighbours:  {}", f.neighbours);
        println!("  event:       {}", f.event);
        println!("  bound:       {}", f.bound);
        println!(
            "  claimed:     ε = {} (δ = {:e})",
            fmt_eps(f.claimed_epsilon),
            f.delta
        );
        println!(
            "  ε_lower:     {} at confidence {}  →  {}",
            fmt_eps(f.epsilon_lower),
            f.confidence,
            if f.passes() {
                "PASS"
            } else {
                "VIOLATION (ε_lower > claimed ε)"
            }
        );
        for p in &f.planted {
            println!(
                "  power:       planted bug `{}` gives ε_lower = {}  →  {}",
                p.bug,
                fmt_eps(p.epsilon_lower),
                if p.epsilon_lower > f.claimed_epsilon {
                    "caught (the audit can see it)"
                } else {
                    "NOT caught: this audit is too small to see a bug of that size"
                }
            );
        }
        if !f.has_power() {
            println!("  note:        no planted bug is caught, so this PASS is weak evidence");
        }
        println!("  runtime:     {:.1} s\n", f.runtime_seconds);
    }
    println!("{HOW_TO_READ}");
}

fn fmt_eps(e: f64) -> String {
    format!("{e:.3}")
}
