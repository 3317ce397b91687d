//! One-run audits (Steinke, Nasr & Jagielski 2023; `dpfair_privacy::audit::one_run`) of every
//! DP-SGD training path, through the methods' public entry points.
//!
//! **Canaries** (Dirac canaries in input space): the data set has `BASE_FEATURES` ordinary
//! features and one extra column per canary. Canary i is a row that is zero everywhere except its
//! own column, where it is `CANARY_VALUE`; its label alternates with i (so the canaries' pull on
//! the intercept cancels). Every other row is 0 in the canary columns, so the canary's column
//! weight moves only by canary i's clipped gradient and the noise. The score of canary i is that
//! weight, signed by its label (larger: more likely "in").
//!
//! **Coins** ([`inclusion_coins`], the audit's own seeded stream): add/remove paths include
//! canary i or not; replace-one paths always hold it, with its label (in) or the opposite label
//! (out), the full replace-one sensitivity.
//!
//! **Schedule**: full batches (q = 1), so that each canary moves its weight at every step and the
//! audit sees the whole claimed budget; the clip C is small against the canary's gradient, so
//! every canary step is clipped. Public parameters, not data.
//!
//! **Planted bugs**: the noise multiplier × 0.3 (run at the multiplier of a larger ε, claimed at
//! the original one), and clipping switched off (clip × 10⁴ with the multiplier ÷ 10⁴: the same
//! noise, unbounded gradients), where the entry point can express it.

use super::{Finding, Planted, Size, timed};
use crate::error::{CliError, CliResult};
use dpfair::decoupled::base::{BaseModel, fit_base};
use dpfair::dp_fermi::{FermiConfig, FermiModel};
use dpfair::dp2dp;
use dpfair::model::Accounting;
use dpfair_learn::{Classifier, DpSgdConfig, fit_dp_sgd};
use dpfair_privacy::accounting::{Accountant, sgm_epsilon, sgm_noise_multiplier};
use dpfair_privacy::audit::one_run::{OneRunReport, audit_scores, inclusion_coins};
use dpfair_privacy::{Ledger, Noise, Relation};
use ndarray::Array2;
use rand::Rng;

const BASE_FEATURES: usize = 2;
const BASE_ROWS: usize = 200;
const CANARY_VALUE: f64 = 4.0;
const DELTA: f64 = 1e-5;
const CONFIDENCE: f64 = 0.95;
/// Clip factor of the "clipping off" bug.
const NO_CLIP: f64 = 1e4;

/// Audit sizes: canaries and epochs (= steps, full batch).
fn canaries(size: Size) -> usize {
    match size {
        Size::Quick => 2000,
        Size::Thorough => 8000,
    }
}

/// The canary data set for one set of coins.
struct CanaryData {
    x: Array2<f64>,
    y: Vec<u32>,
    groups: Vec<u32>,
    /// Row of canary i, if present.
    row: Vec<Option<usize>>,
}

/// Label of canary i when "in".
fn canary_label(i: usize) -> u32 {
    (i % 2) as u32
}

/// Base rows (two features, a linear label, alternating groups; public, seeded) and the canaries
/// with their coins applied for `relation` (module doc).
fn canary_data(coins: &[bool], relation: Relation, seed: u64) -> CanaryData {
    let m = coins.len();
    let d = BASE_FEATURES + m;
    let mut public = Noise::seeded(seed ^ 0x5eed);
    let mut unit = move || (public.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut rows: Vec<(Vec<f64>, u32, u32)> = Vec::new();
    for i in 0..BASE_ROWS {
        let mut x = vec![0.0; d];
        x[0] = unit();
        x[1] = unit();
        let y = u32::from(x[0] + x[1] > 1.0);
        rows.push((x, y, (i % 2) as u32));
    }
    let mut row = vec![None; m];
    for (i, &inside) in coins.iter().enumerate() {
        let label = match relation {
            Relation::AddRemove if !inside => continue,
            Relation::AddRemove => canary_label(i),
            Relation::Substitution if inside => canary_label(i),
            Relation::Substitution => 1 - canary_label(i),
        };
        let mut x = vec![0.0; d];
        x[BASE_FEATURES + i] = CANARY_VALUE;
        row[i] = Some(rows.len());
        rows.push((x, label, (i % 2) as u32));
    }
    let n = rows.len();
    let mut x = Array2::zeros((n, d));
    let mut y = Vec::with_capacity(n);
    let mut groups = Vec::with_capacity(n);
    for (r, (xi, yi, gi)) in rows.into_iter().enumerate() {
        x.row_mut(r).assign(&ndarray::Array1::from(xi));
        y.push(yi);
        groups.push(gi);
    }
    CanaryData { x, y, groups, row }
}

/// Scores from the weights of the canary columns: weight signed by the canary's "in" label.
fn scores(weights: &[f64], m: usize) -> Vec<f64> {
    (0..m)
        .map(|i| {
            let w = weights[BASE_FEATURES + i];
            if canary_label(i) == 1 { w } else { -w }
        })
        .collect()
}

fn logistic_weights(c: &Classifier) -> CliResult<Vec<f64>> {
    match c {
        Classifier::Logistic(l) => Ok(l.coef.row(0).to_vec()),
        _ => Err(CliError::Internal(
            "one-run audit: expected a binary logistic model".into(),
        )),
    }
}

/// One training on fresh coins; returns the one-run report.
fn one_run(
    seed: u64,
    m: usize,
    relation: Relation,
    train: &dyn Fn(&CanaryData, &mut Noise) -> CliResult<Vec<f64>>,
) -> CliResult<OneRunReport> {
    let mut audit_rng = Noise::seeded(seed);
    let coins = inclusion_coins(m, &mut audit_rng);
    let data = canary_data(&coins, relation, seed);
    debug_assert!(data.row.iter().flatten().all(|&r| r < data.y.len()));
    let mut noise = audit_rng.fork();
    let weights = train(&data, &mut noise)?;
    audit_scores(&scores(&weights, m), &coins, DELTA, CONFIDENCE, None).map_err(CliError::internal)
}

#[allow(clippy::too_many_arguments)]
fn finding(
    audit: &str,
    relation: Relation,
    m: usize,
    claimed: f64,
    honest: OneRunReport,
    planted: Vec<(String, OneRunReport)>,
    seconds: f64,
) -> Finding {
    let neighbours = match relation {
        Relation::AddRemove => format!(
            "add/remove: {m} Dirac canaries, each in the data with probability 1/2 (one run)"
        ),
        Relation::Substitution => format!(
            "replace-one: {m} Dirac canaries, each with its label or the flipped label by a fair coin (one run)"
        ),
    };
    Finding {
        audit: audit.into(),
        neighbours,
        event: format!(
            "guesses from each canary's column weight: {} of them, {} correct",
            honest.guesses, honest.correct
        ),
        bound: "Steinke–Nasr–Jagielski (2023) one-run theorem, δ term included; Bonferroni over 4 guess counts".into(),
        claimed_epsilon: claimed,
        delta: DELTA,
        epsilon_lower: honest.epsilon_lower,
        confidence: CONFIDENCE,
        planted: planted
            .into_iter()
            .map(|(bug, r)| Planted {
                bug: format!("{bug} ({} of {} guesses correct)", r.correct, r.guesses),
                epsilon_lower: r.epsilon_lower,
            })
            .collect(),
        runtime_seconds: seconds,
    }
}

/// The DP-SGD config of the audits: full batch, `epochs` steps.
fn sgd_config(epsilon: f64, relation: Relation, rows_at_most: usize) -> DpSgdConfig {
    DpSgdConfig {
        epsilon,
        delta: DELTA,
        accountant: Accountant::Rdp,
        epochs: EPOCHS,
        expected_batch: rows_at_most,
        learning_rate: LEARNING_RATE,
        clip: CLIP,
        relation,
        ..DpSgdConfig::default()
    }
}

const EPOCHS: usize = 50;
const LEARNING_RATE: f64 = 50.0;
const CLIP: f64 = 0.1;
/// The claimed ε of the DP-SGD audits (the one-run bound has most power near ε = 2–3).
const CLAIM: f64 = 3.0;

/// z of a full-batch run at (ε, δ) for `relation` (substitution: twice the add/remove z).
fn full_batch_z(epsilon: f64, relation: Relation) -> CliResult<f64> {
    let z = sgm_noise_multiplier(Accountant::Rdp, 1.0, EPOCHS as u64, epsilon, DELTA)
        .map_err(CliError::internal)?;
    Ok(match relation {
        Relation::AddRemove => z,
        Relation::Substitution => 2.0 * z,
    })
}

/// The ε whose calibrated add/remove z is `factor` times the one at `epsilon`.
fn epsilon_at_noise_factor(epsilon: f64, factor: f64) -> CliResult<f64> {
    let z = full_batch_z(epsilon, Relation::AddRemove)?;
    sgm_epsilon(Accountant::Rdp, 1.0, factor * z, EPOCHS as u64, DELTA).map_err(CliError::internal)
}

/// `dpfair fit dp-logistic` (DP-SGD, add/remove): `fit_dp_sgd`.
pub fn dp_logistic(size: Size, seed: u64) -> CliResult<Finding> {
    let m = canaries(size);
    let relation = Relation::AddRemove;
    let z = full_batch_z(CLAIM, relation)?;
    let train = |cfg: DpSgdConfig| {
        move |d: &CanaryData, noise: &mut Noise| {
            let fit = fit_dp_sgd(&cfg, d.x.view(), &d.y, 2, &mut Ledger::unlimited(), noise)
                .map_err(CliError::internal)?;
            logistic_weights(&fit.model)
        }
    };
    let rows = BASE_ROWS + m;
    let t = timed(|| {
        let honest = one_run(seed, m, relation, &train(sgd_config(CLAIM, relation, rows)))?;
        let mut bug = sgd_config(CLAIM, relation, rows);
        bug.noise_multiplier = Some(0.3 * z);
        let noise_bug = one_run(seed + 1, m, relation, &train(bug))?;
        let mut bug = sgd_config(CLAIM, relation, rows);
        bug.clip = CLIP * NO_CLIP;
        bug.noise_multiplier = Some(z / NO_CLIP);
        let clip_bug = one_run(seed + 2, m, relation, &train(bug))?;
        Ok((honest, noise_bug, clip_bug))
    })?;
    let (honest, noise_bug, clip_bug) = t.value;
    Ok(finding(
        "dp-logistic: DP-SGD training (fit_dp_sgd), whole run",
        relation,
        m,
        CLAIM,
        honest,
        vec![
            ("noise multiplier × 0.3".into(), noise_bug),
            ("clipping off (same noise)".into(), clip_bug),
        ],
        t.seconds,
    ))
}

/// The decoupled classifier's joint base model (strict: replace-one, `fit_base`).
pub fn decoupled_base(size: Size, seed: u64) -> CliResult<Finding> {
    let m = canaries(size);
    let relation = Relation::Substitution;
    let z = full_batch_z(CLAIM, relation)?;
    let rows = BASE_ROWS + m;
    let train = |cfg: DpSgdConfig| {
        move |d: &CanaryData, noise: &mut Noise| {
            let (base, _) = fit_base(
                BaseModel::Joint,
                &cfg,
                d.x.view(),
                &d.groups,
                &d.y,
                &mut Ledger::unlimited(),
                noise,
            )
            .map_err(CliError::internal)?;
            match base {
                dpfair::decoupled::base::Base::Joint { model } => logistic_weights(&model),
                _ => Err(CliError::Internal("expected the joint base model".into())),
            }
        }
    };
    let t = timed(|| {
        let honest = one_run(seed, m, relation, &train(sgd_config(CLAIM, relation, rows)))?;
        let mut bug = sgd_config(CLAIM, relation, rows);
        bug.noise_multiplier = Some(0.3 * z);
        let planted = one_run(seed + 1, m, relation, &train(bug))?;
        Ok((honest, planted))
    })?;
    let (honest, planted) = t.value;
    Ok(finding(
        "decoupled: joint DP-SGD base model (fit_base), whole run",
        relation,
        m,
        CLAIM,
        honest,
        vec![("noise multiplier × 0.3".into(), planted)],
        t.seconds,
    ))
}

/// DP2DP's Phase 1 (P1-SGD: replace-one, `dp2dp::phase1::fit`).
pub fn dp2dp_phase1(size: Size, seed: u64) -> CliResult<Finding> {
    let m = canaries(size);
    let relation = Relation::Substitution;
    let rows = BASE_ROWS + m;
    let config = |epsilon: f64| dp2dp::Config {
        epsilon,
        delta: DELTA,
        phase1: dp2dp::Phase1::DpSgd {
            epochs: EPOCHS,
            expected_batch: rows,
            learning_rate: LEARNING_RATE,
            clip: CLIP,
        },
        ..dp2dp::Config::default()
    };
    let train = |cfg: dp2dp::Config| {
        move |d: &CanaryData, noise: &mut Noise| {
            let model =
                dp2dp::phase1::fit(&cfg, d.x.view(), &d.y, 2, &mut Ledger::unlimited(), noise)
                    .map_err(CliError::internal)?;
            logistic_weights(&model)
        }
    };
    // Phase 1 takes no noise multiplier: the bug runs at the ε whose z is 0.3 times the claim's.
    let bug_epsilon = epsilon_at_noise_factor(CLAIM, 0.3)?;
    let t = timed(|| {
        let honest = one_run(seed, m, relation, &train(config(CLAIM)))?;
        let planted = one_run(seed + 1, m, relation, &train(config(bug_epsilon)))?;
        Ok((honest, planted))
    })?;
    let (honest, planted) = t.value;
    Ok(finding(
        "dp2dp: Phase 1 DP-SGD (phase1::fit), whole run",
        relation,
        m,
        CLAIM,
        honest,
        vec![(
            format!("noise multiplier × 0.3 (the z of ε = {bug_epsilon:.1}, claimed as {CLAIM})"),
            planted,
        )],
        t.seconds,
    ))
}

/// Strict DP-FERMI's claimed ε'.
const FERMI_CLAIM: f64 = 3.0;
const FERMI_EPOCHS: usize = 50;
const FERMI_LR: f64 = 50.0;

/// ρ of strict DP-FERMI's θ and W releases together at ε' (the method's own split, crate
/// `dpfair`, `dp_fermi`): (ε' − ε_p, δ) with ε_p = 0.05 ε' met by ε = ρ + 2√(ρ ln(1/δ)).
fn fermi_rho(epsilon: f64) -> f64 {
    let log = (1.0 / DELTA).ln();
    let share = 1.0 - dpfair::dp_fermi::STRICT_SHARE_P_HAT;
    ((log + share * epsilon).sqrt() - log.sqrt()).powi(2)
}

/// The claim the label-flip canaries are audited against: the θ releases' own ε at δ.
///
/// A label flip changes only the θ gradients (the p̂ count sees groups, the W gradient sees ŷ,
/// which depends on θ and x, not on the label), so the pair's privacy loss is that of the θ
/// releases alone: half of ρ, i.e. T Gaussian steps of sensitivity 2L_θ/B whose composition
/// is exactly μ-GDP with μ = √(2·ρ/2) (Dong, Roth & Su 2022, Cor. 3.3), ε at δ by their
/// Cor. 2.13. This is a tighter (smaller) claim than ε', so the audit has more power against
/// the same planted bug; a bound above it is still a proven violation.
fn fermi_theta_claim(epsilon: f64) -> f64 {
    dpfair_privacy::accounting::gdp::epsilon_of_mu(fermi_rho(epsilon).sqrt(), DELTA)
}

/// Strict DP-FERMI's ε' for a θ-noise level whose ρ is `rho_factor` times that of ε': strict
/// mode gives (ε' − ε_p) with ε_p = 0.05 ε' to ρ-zCDP by ε = ρ + 2√(ρ ln(1/δ)), so
/// ε' = (ρ + 2√(ρ ln(1/δ)))/0.95 (crate `dpfair`, `dp_fermi`).
fn fermi_epsilon_for_rho_factor(epsilon: f64, rho_factor: f64) -> f64 {
    let log = (1.0 / DELTA).ln();
    let share = 1.0 - dpfair::dp_fermi::STRICT_SHARE_P_HAT;
    let rho = fermi_rho(epsilon) * rho_factor;
    (rho + 2.0 * (rho * log).sqrt()) / share
}

/// Strict DP-FERMI (`dp_fermi::fit`): per-example clipping, full batch, replace-one.
pub fn fermi(size: Size, seed: u64) -> CliResult<Finding> {
    let m = canaries(size);
    let relation = Relation::Substitution;
    let rows = BASE_ROWS + m;
    let config = |epsilon: f64, lipschitz: f64| FermiConfig {
        lambda: 0.1,
        epsilon,
        delta: DELTA,
        lr_theta: FERMI_LR,
        lr_w: 0.01,
        batch: rows,
        epochs: FERMI_EPOCHS,
        w_radius: 1.0,
        lipschitz,
        ermi_group: 1,
        accounting: Accounting::Strict,
    };
    let train = |cfg: FermiConfig| {
        move |d: &CanaryData, noise: &mut Noise| {
            let y: Vec<u8> = d.y.iter().map(|&v| v as u8).collect();
            let model: FermiModel = dpfair::dp_fermi::fit(
                &cfg,
                d.x.view(),
                &d.groups,
                &y,
                &mut Ledger::unlimited(),
                noise,
            )
            .map_err(CliError::internal)?;
            Ok(model.weights)
        }
    };
    // σ_θ ∝ L_θ/√ρ: noise × 0.3 is ρ / 0.09; clipping off is L_θ × 10⁴ with ρ × 10⁸.
    let noise_bug = fermi_epsilon_for_rho_factor(FERMI_CLAIM, 1.0 / 0.09);
    let clip_bug = fermi_epsilon_for_rho_factor(FERMI_CLAIM, NO_CLIP * NO_CLIP);
    let t = timed(|| {
        let honest = one_run(seed, m, relation, &train(config(FERMI_CLAIM, CLIP)))?;
        let planted = one_run(seed + 1, m, relation, &train(config(noise_bug, CLIP)))?;
        let unclipped = one_run(
            seed + 2,
            m,
            relation,
            &train(config(clip_bug, CLIP * NO_CLIP)),
        )?;
        Ok((honest, planted, unclipped))
    })?;
    let (honest, planted, unclipped) = t.value;
    let theta_claim = fermi_theta_claim(FERMI_CLAIM);
    Ok(finding(
        &format!(
            "fermi: strict DP-FERMI θ releases (decoupled::fermi::fit), whole run at ε' = \
             {FERMI_CLAIM}; audited against the θ releases' share ε_θ = {theta_claim:.3} \
             (label-flip canaries move only θ)"
        ),
        relation,
        m,
        theta_claim,
        honest,
        vec![
            (
                format!(
                    "σ_θ × 0.3 (the noise of ε' = {noise_bug:.1}, claimed as ε' = {FERMI_CLAIM})"
                ),
                planted,
            ),
            ("clipping off (L_θ × 10⁴, same σ_θ)".into(), unclipped),
        ],
        t.seconds,
    ))
}
