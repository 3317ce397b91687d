//! Audits of the central releases on *searched* neighbours (`dpfair_privacy::audit::search`):
//! small generated data sets, one record changed in each candidate way (random, outlier, group
//! flip, label / prediction flip, a nearly empty group), the pair with the largest screening
//! bound confirmed on fresh samples. Each candidate's projection is the released coordinate(s)
//! its record moves (fixed by the pair, never by the samples). The planted bug is the same
//! release with its noise scale × 0.3 (run at the ε that gives that scale, claimed at the
//! original ε), audited on the chosen pair.

use super::{Finding, Planted, Size, timed};
use crate::error::{CliError, CliResult};
use dpfair::decoupled::RateRelease;
use dpfair::decoupled::private_rates::release_rates;
use dpfair::fair_regression::histogram::{Grid, private_joint_histogram};
use dpfair::plugin::RffBasis;
use dpfair::plugin::release::{KernelSums, PiRelease, S1Accounting, S1Plan};
use dpfair_privacy::audit::search::{Candidate, SearchReport, search_neighbours};
use dpfair_privacy::audit::{AuditReport, audit};
use dpfair_privacy::mechanisms::Gaussian;
use dpfair_privacy::{Ledger, Noise};
use ndarray::Array2;

const ALPHA: f64 = 0.01;
const CLAIM: f64 = 1.0;
const DELTA: f64 = 1e-5;
/// Rows of the generated data sets.
const ROWS: usize = 20;

/// (screening, confirmation) trials per input.
fn trials(size: Size) -> (usize, usize) {
    match size {
        Size::Quick => (2_000, 20_000),
        Size::Thorough => (10_000, 200_000),
    }
}

/// The candidates to search: all of them, or only the one named `pair` (`--pair`: a pair found
/// by an earlier search, re-audited as a regression case). An unknown name is bad input.
fn select<D>(candidates: Vec<Candidate<D>>, pair: Option<&str>) -> CliResult<Vec<Candidate<D>>> {
    let Some(name) = pair else {
        return Ok(candidates);
    };
    let names: Vec<String> = candidates.iter().map(|c| format!("`{}`", c.name)).collect();
    let chosen: Vec<Candidate<D>> = candidates.into_iter().filter(|c| c.name == name).collect();
    if chosen.is_empty() {
        return Err(CliError::BadInput(format!(
            "--pair `{name}`: no such candidate pair; this audit's pairs are {}",
            names.join(", ")
        )));
    }
    Ok(chosen)
}

/// The search and the planted bug, timed, with (screening, confirmation) trials per input:
/// `release(data, ε, noise)` is searched over the candidates at the claimed ε, then the chosen pair is audited with the release run at
/// `bug_epsilon` (the ε whose noise scale is the planted fraction of the claim's).
fn search_then_plant<D>(
    (screen, confirm): (usize, usize),
    seed: u64,
    candidates: &[Candidate<D>],
    delta: f64,
    bug_epsilon: f64,
    release: impl Fn(&D, f64, &mut Noise) -> dpfair_privacy::Result<f64>,
) -> CliResult<super::Timed<(SearchReport, AuditReport)>> {
    timed(|| {
        let mut noise = Noise::seeded(seed);
        let s = search_neighbours(
            &mut noise,
            candidates,
            screen,
            confirm,
            delta,
            ALPHA,
            |d, n| release(d, CLAIM, n),
        )
        .map_err(CliError::internal)?;
        let pair = &candidates[s.chosen].pair;
        let p = audit(&mut noise, confirm, delta, ALPHA, |i, n| {
            release(&pair[i], bug_epsilon, n)
        })
        .map_err(CliError::internal)?;
        Ok((s, p))
    })
}

/// The finding of a search and of the planted bug on the chosen pair.
#[allow(clippy::too_many_arguments)]
fn finding(
    audit: &str,
    relation: &str,
    event: &str,
    claimed: f64,
    delta: f64,
    search: SearchReport,
    planted: AuditReport,
    bug: String,
    seconds: f64,
) -> Finding {
    let screened: Vec<String> = search
        .screened
        .iter()
        .map(|(n, e)| format!("{n}: {e:.2}"))
        .collect();
    Finding {
        audit: audit.into(),
        neighbours: format!(
            "{relation}; searched over [{}] (screening bounds); chosen: {}",
            screened.join("; "),
            search.chosen_name
        ),
        event: format!(
            "{event}: {} {} {:.4} (counts {:?} of {})",
            if search.confirmed.event.upper {
                "≥"
            } else {
                "≤"
            },
            "threshold",
            search.confirmed.event.threshold,
            search.confirmed.counts,
            search.confirmed.n
        ),
        bound: "Clopper–Pearson on a fresh confirmation sample (two-sample threshold auditor)"
            .into(),
        claimed_epsilon: claimed,
        delta,
        epsilon_lower: search.confirmed.epsilon_lower,
        confidence: search.confirmed.confidence,
        planted: vec![Planted {
            bug,
            epsilon_lower: planted.epsilon_lower,
        }],
        runtime_seconds: seconds,
    }
}

/// A candidate change of record 0: (name, its (score, group) in each data set, whether every
/// other row is in group 0, so that group 1 is empty or holds record 0 alone).
type Change<'a> = (&'a str, [(f64, u32); 2], bool);

/// Fair regression's private joint histogram (Algorithm 1 of Xian et al.): scores, groups and
/// the two cells (g·k + bin) the changed record moves between.
#[derive(Clone)]
struct HistogramData {
    y: Vec<f64>,
    g: Vec<u32>,
    cells: [usize; 2],
}

pub fn fair_regression(size: Size, seed: u64, pair: Option<&str>) -> CliResult<Finding> {
    const K: usize = 4;
    let grid = Grid::new(0.0, 1.0, K).map_err(CliError::internal)?;
    let base_y: Vec<f64> = (0..ROWS)
        .map(|i| ((i * 7) % ROWS) as f64 / ROWS as f64)
        .collect();
    let base_g: Vec<u32> = (0..ROWS).map(|i| (i % 2) as u32).collect();
    let mut rng = Noise::seeded(seed ^ 0xfa1);
    let random_y = (rand::Rng::next_u64(&mut rng) % 1000) as f64 / 1000.0;
    let changes: Vec<Change> = vec![
        ("bin move in group 0", [(0.1, 0), (0.9, 0)], false),
        ("group flip", [(0.4, 0), (0.4, 1)], false),
        ("group and bin change", [(0.1, 0), (0.9, 1)], false),
        ("outlier score 50 (top bin)", [(0.1, 0), (50.0, 0)], false),
        ("random score", [(0.1, 0), (random_y, 1)], false),
        (
            "empty group 1 (record 0 its only member)",
            [(0.1, 0), (0.9, 1)],
            true,
        ),
    ];
    let candidates: Vec<Candidate<HistogramData>> = changes
        .into_iter()
        .map(|(name, rec, lone)| {
            // The same projection on both data sets: the cells of record 0 in the first and in
            // the second (a projection that differed between the two would void the audit).
            let cell = |(y, g): (f64, u32)| g as usize * K + grid.bin(y);
            let cells = [cell(rec[0]), cell(rec[1])];
            let make = |(y0, g0): (f64, u32)| {
                let mut y = base_y.clone();
                let mut g = if lone { vec![0; ROWS] } else { base_g.clone() };
                y[0] = y0;
                g[0] = g0;
                HistogramData { y, g, cells }
            };
            Candidate {
                name: name.into(),
                pair: [make(rec[0]), make(rec[1])],
            }
        })
        .collect();
    let candidates = select(candidates, pair)?;
    let release = move |d: &HistogramData, epsilon: f64, noise: &mut Noise| {
        let h = private_joint_histogram(
            &d.y,
            &d.g,
            2,
            &grid,
            epsilon,
            &mut Ledger::unlimited(),
            noise,
        )
        .map_err(|e| dpfair_privacy::error::invalid("histogram", e.to_string()))?;
        let n = h.n as f64;
        Ok(if d.cells[0] == d.cells[1] {
            h.h[d.cells[0]] * n
        } else {
            (h.h[d.cells[0]] - h.h[d.cells[1]]) * n
        })
    };
    let t = search_then_plant(trials(size), seed, &candidates, 0.0, CLAIM / 0.3, release)?;
    let (s, p) = t.value;
    Ok(finding(
        "fair-regression: private joint histogram (Algorithm 1), ε-DP",
        "replace-one: record 0 of 20 changes",
        "count difference of the two cells the record moves between",
        CLAIM,
        0.0,
        s,
        p,
        "noise scale × 0.3 on the chosen pair".into(),
        t.seconds,
    ))
}

/// The decoupled classifier's strict rate release (one Laplace release of the 2 × 2 count table).
#[derive(Clone)]
struct RateData {
    groups: Vec<u32>,
    base: Vec<bool>,
    /// Project on α̃ (group 0) or β̃ (group 1).
    group: usize,
}

pub fn decoupled_rates(size: Size, seed: u64, pair: Option<&str>) -> CliResult<Finding> {
    let make = |n0: usize, pos0: usize, flip: Option<(u32, bool)>, group: usize| {
        let mut groups: Vec<u32> = (0..n0).map(|_| 0).collect();
        let mut base: Vec<bool> = (0..n0).map(|i| i < pos0).collect();
        groups.extend(std::iter::repeat_n(1, 200));
        base.extend((0..200).map(|i| i < 60));
        if let Some((g, b)) = flip {
            groups[0] = g;
            base[0] = b;
        }
        RateData {
            groups,
            base,
            group,
        }
    };
    let candidates = vec![
        Candidate {
            name: "prediction flip in group 0 (20 rows)".into(),
            pair: [make(20, 12, None, 0), make(20, 12, Some((0, false)), 0)],
        },
        Candidate {
            name: "group flip of a positive row".into(),
            pair: [make(20, 12, None, 0), make(20, 12, Some((1, true)), 0)],
        },
        Candidate {
            name: "nearly empty group 0 (2 rows), prediction flip".into(),
            pair: [make(2, 1, None, 0), make(2, 1, Some((0, false)), 0)],
        },
        Candidate {
            name: "group 1 rate, group flip".into(),
            pair: [make(20, 12, None, 1), make(20, 12, Some((1, true)), 1)],
        },
    ];
    let candidates = select(candidates, pair)?;
    let release = |d: &RateData, epsilon: f64, noise: &mut Noise| {
        let r = release_rates(
            RateRelease::Histogram { epsilon },
            &d.groups,
            &d.base,
            &mut Ledger::unlimited(),
            noise,
        )
        .map_err(|e| dpfair_privacy::error::invalid("rates", e.to_string()))?;
        Ok(if d.group == 0 { r.alpha } else { r.beta })
    };
    let t = search_then_plant(trials(size), seed, &candidates, 0.0, CLAIM / 0.3, release)?;
    let (s, p) = t.value;
    Ok(finding(
        "decoupled: strict rate release (Laplace count table, post-processed to α̃, β̃)",
        "replace-one: one row's group or base prediction changes",
        "released rate of the group the row leaves",
        CLAIM,
        0.0,
        s,
        p,
        "noise scale × 0.3 on the chosen pair".into(),
        t.seconds,
    ))
}

/// CDP-Fair's / FDP-Fair's S1 (the π̃ part of the joint Gaussian release).
#[derive(Clone)]
struct PiData {
    sums: KernelSums,
}

/// The ε at which the analytic Gaussian's σ (Δ = 1, δ) is `factor` times its σ at `epsilon`.
fn epsilon_at_sigma_factor(epsilon: f64, delta: f64, factor: f64) -> CliResult<f64> {
    let sigma = |e: f64| -> CliResult<f64> {
        Ok(Gaussian::analytic(1.0, e, delta)
            .map_err(CliError::internal)?
            .sigma())
    };
    let target = factor * sigma(epsilon)?;
    let (mut lo, mut hi) = (epsilon, epsilon);
    while sigma(hi)? > target {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if sigma(mid)? > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi)
}

pub fn pi_release(size: Size, seed: u64, method: &str, pair: Option<&str>) -> CliResult<Finding> {
    let basis = RffBasis::new(2, 0.3, 4, seed).map_err(CliError::internal)?;
    let n = ROWS;
    let base_x = Array2::from_shape_fn((n, 2), |(i, j)| ((i * 13 + j * 7) % n) as f64 / n as f64);
    let make = |x0: [f64; 2], a0: u32, y0: u8, all_zero: bool| -> CliResult<PiData> {
        let mut x = base_x.clone();
        x[[0, 0]] = x0[0];
        x[[0, 1]] = x0[1];
        let mut a: Vec<u32> = (0..n)
            .map(|i| if all_zero { 0 } else { (i % 2) as u32 })
            .collect();
        let mut y: Vec<u8> = (0..n).map(|i| ((i / 2) % 2) as u8).collect();
        a[0] = a0;
        y[0] = y0;
        let sums = KernelSums::compute(&basis, x.view(), &a, &y).map_err(CliError::internal)?;
        Ok(PiData { sums })
    };
    let candidates = vec![
        Candidate {
            name: "group flip".into(),
            pair: [
                make([0.5, 0.5], 1, 1, false)?,
                make([0.5, 0.5], 0, 1, false)?,
            ],
        },
        Candidate {
            name: "label flip".into(),
            pair: [
                make([0.5, 0.5], 1, 1, false)?,
                make([0.5, 0.5], 1, 0, false)?,
            ],
        },
        Candidate {
            name: "outlier features and group flip".into(),
            pair: [
                make([0.5, 0.5], 1, 1, false)?,
                make([1e3, -1e3], 0, 1, false)?,
            ],
        },
        Candidate {
            name: "empty group 1 (record 0 its only member)".into(),
            pair: [make([0.5, 0.5], 1, 1, true)?, make([0.5, 0.5], 0, 1, true)?],
        },
    ];
    let candidates = select(candidates, pair)?;
    let plan = |epsilon: f64| S1Plan {
        epsilon,
        delta: DELTA,
        accounting: S1Accounting::Strict,
        pi: PiRelease::Private,
        c_k: 1.0,
        label_prefix: String::new(),
    };
    let release = |d: &PiData, epsilon: f64, noise: &mut Noise| {
        let est = d
            .sums
            .release(&plan(epsilon), &mut Ledger::unlimited(), noise)
            .map_err(|e| dpfair_privacy::error::invalid("S1", e.to_string()))?;
        Ok(est.pi[1] - est.pi[0])
    };
    let bug_epsilon = epsilon_at_sigma_factor(CLAIM, DELTA, 0.3)?;
    // The planted bug moves π̃₁ − π̃₀ by only 0.63 of its noise σ here, so its bound sits near
    // the claim at the common trial count (1.32 at seed 1, 0.74–1.34 across seeds): four
    // times the confirmation trials give the Clopper–Pearson bound room to see it.
    let (screen, confirm) = trials(size);
    let t = search_then_plant(
        (screen, 4 * confirm),
        seed,
        &candidates,
        DELTA,
        bug_epsilon,
        release,
    )?;
    let (s, p) = t.value;
    Ok(finding(
        &format!("{method}: S1 release of π̃ (strict joint Gaussian, analytic calibration)"),
        "replace-one: record 0 of 20 changes",
        "π̃₁ − π̃₀",
        CLAIM,
        DELTA,
        s,
        p,
        format!("noise scale × 0.3 (the σ of ε = {bug_epsilon:.2}) on the chosen pair"),
        t.seconds,
    ))
}
