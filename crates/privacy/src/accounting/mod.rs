//! Privacy accounting: conversions between the units the ledger records and (ε, δ).
//!
//! This module's free functions are the contract the rest of dpfair calls; the submodules hold
//! the mathematics:
//!
//! | submodule | what | relation it is derived for |
//! |---|---|---|
//! | [`rdp`] | RDP of the Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019), RDP → (ε, δ) | add/remove one record |
//! | [`prv`] | PRV / privacy-loss-distribution accountant (Gopi, Lee, Wutschitz 2021) with error bounds | add/remove one record |
//! | [`gdp`] | Gaussian DP central-limit accountant (Bu, Dong, Long, Su 2020) — an approximation | add/remove one record |
//! | [`analytic_gaussian`] | exact (ε, δ) of one Gaussian release (Balle & Wang 2018) | the relation of the sensitivity Δ |
//! | [`zcdp`] | ρ-zCDP → (ε, δ), tight (Canonne, Kamath, Steinke 2020) | the relation ρ was derived for |
//! | [`composition`] | basic and advanced composition of (ε, δ) | any, if the same for all parts |
//! | [`outward`] | outward rounding of every conversion (ε and δ never below the exact bound) | any |
//! | [`discretisation`] | what the continuous Gaussian's (ε, δ) calibration needs on a lattice | any |
//!
//! # Neighbouring relations
//! The three DP-SGD accountants ([`Accountant`]) are derived for Poisson sampling and
//! **add/remove-one** neighbours (a record is present or absent; the clipped sum moves by at most
//! C). dpfair certifies **replace-one** (substitution) unless a method says otherwise. A
//! replacement moves the clipped sum by at most 2C (‖g − g'‖ ≤ ‖g‖ + ‖g'‖), so dpfair certifies
//! substitution by running the add/remove accountant with sensitivity 2C, i.e. at noise multiplier
//! z/2 ([`sgm_effective_noise_multiplier`], [`sgm_epsilon_for`]). This is the convention of the
//! DP-SGD literature (and of `docs/deviations.md#dp2dp-gradient-sensitivity`); it is conservative: the tests compare it with
//! the exact Rényi divergence of the substitution pair ((1−q)N(0,z²) + qN(−1,z²) against
//! (1−q)N(0,z²) + qN(1,z²)) and find it never smaller, and equal at q = 1. A ledger entry for
//! DP-SGD must therefore name `AddRemove` when it reports [`sgm_epsilon`] at z, and
//! `Substitution` only with the multiplier halved.

pub mod analytic_gaussian;
pub mod composition;
pub mod discretisation;
pub mod gdp;
pub mod outward;
pub mod prv;
pub mod rdp;
mod special;
pub mod zcdp;

pub use prv::EpsilonBounds;

use crate::error::{PrivacyError, Result, invalid};
use crate::ledger::Relation;
use serde::{Deserialize, Serialize};

/// Which accountant turns a subsampled-Gaussian (DP-SGD) run into (ε, δ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Accountant {
    /// Rényi DP (Mironov, Talwar, Zhang 2019), the "moments accountant": a certified upper bound,
    /// typically 5–10% above the tight value; milliseconds.
    #[default]
    Rdp,
    /// Privacy random variables / privacy-loss distributions (Gopi, Lee, Wutschitz 2021): a
    /// certified upper bound within about 0.2% (+ 2·10⁻⁴) of the exact ε; tens to hundreds of
    /// milliseconds.
    Prv,
    /// Gaussian DP central-limit approximation (Bu, Dong, Long, Su 2020): **not** a certified
    /// bound (it can under-state ε at finite T); microseconds.
    Gdp,
}

impl Accountant {
    /// The neighbouring relation the accountant's ε is derived for.
    pub fn relation(self) -> Relation {
        Relation::AddRemove
    }

    /// Whether the value is a proven upper bound (RDP, PRV) or an approximation (GDP).
    pub fn is_certified(self) -> bool {
        !matches!(self, Accountant::Gdp)
    }
}

/// The Rényi orders the ledger composes over and the RDP accountant minimises over: Google
/// dp_accounting's default grid `{1.1, 1.2, …, 10.9} ∪ {11, …, 63} ∪ {128, 256, 512, 1024}`.
pub fn default_orders() -> Vec<f64> {
    let mut o: Vec<f64> = (1..100).map(|i| 1.0 + i as f64 / 10.0).collect();
    o.extend((11..64).map(|i| i as f64));
    o.extend([128.0, 256.0, 512.0, 1024.0]);
    o
}

fn check_q(q: f64) -> Result<()> {
    if q > 0.0 && q <= 1.0 {
        Ok(())
    } else {
        Err(invalid(
            "sampling_rate",
            format!("must be in (0, 1], got {q}"),
        ))
    }
}

fn check_z(z: f64) -> Result<()> {
    if z > 0.0 && z.is_finite() {
        Ok(())
    } else {
        Err(invalid(
            "noise_multiplier",
            format!("must be finite and > 0, got {z}"),
        ))
    }
}

fn check_delta(delta: f64) -> Result<()> {
    if delta > 0.0 && delta < 1.0 {
        Ok(())
    } else {
        Err(invalid("delta", format!("must be in (0, 1), got {delta}")))
    }
}

fn check_epsilon(epsilon: f64) -> Result<()> {
    if epsilon > 0.0 && epsilon.is_finite() {
        Ok(())
    } else {
        Err(invalid(
            "epsilon",
            format!("must be finite and > 0, got {epsilon}"),
        ))
    }
}

fn check_steps(steps: u64) -> Result<()> {
    if steps == 0 {
        Err(invalid("steps", "must be at least 1"))
    } else {
        Ok(())
    }
}

/// RDP curve (one value per order) of `steps` compositions of the Poisson-subsampled Gaussian
/// with sampling rate `q` and noise multiplier `z` (add/remove; MTZ 2019 §3, see [`rdp`]).
/// Orders must be > 1; an order whose fractional series does not converge gets +∞.
pub fn rdp_sgm_curve(q: f64, z: f64, steps: u64, orders: &[f64]) -> Result<Vec<f64>> {
    check_q(q)?;
    check_z(z)?;
    check_steps(steps)?;
    if let Some(a) = orders.iter().find(|a| a.is_nan() || **a <= 1.0) {
        return Err(invalid(
            "orders",
            format!("every order must be > 1, got {a}"),
        ));
    }
    Ok(rdp::rdp_curve(q, z, steps, orders))
}

/// Smallest ε such that an RDP curve implies (ε, δ)-DP: the conversion of Opacus ≥ 1.0 and
/// Google's dp_accounting, `min_α r_α + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)` (Canonne, Kamath,
/// Steinke 2020, Prop. 12), floored at 0; see [`rdp::rdp_to_dp_with_order`].
pub fn rdp_to_dp(orders: &[f64], rdp: &[f64], delta: f64) -> Result<f64> {
    check_delta(delta)?;
    if orders.is_empty() || orders.len() != rdp.len() {
        return Err(invalid(
            "rdp",
            format!(
                "needs one value per order ({} orders, {} values)",
                orders.len(),
                rdp.len()
            ),
        ));
    }
    if let Some(r) = rdp.iter().find(|r| r.is_nan() || **r < 0.0) {
        return Err(invalid("rdp", format!("values must be ≥ 0, got {r}")));
    }
    if let Some(a) = orders.iter().find(|a| a.is_nan() || **a < 1.0) {
        return Err(invalid(
            "orders",
            format!("every order must be ≥ 1, got {a}"),
        ));
    }
    Ok(rdp::rdp_to_dp_with_order(orders, rdp, delta).0)
}

/// ε of ρ-zCDP at δ (tight conversion of Canonne, Kamath, Steinke 2020; see [`zcdp`]).
pub fn zcdp_to_dp(rho: f64, delta: f64) -> Result<f64> {
    check_delta(delta)?;
    if rho.is_nan() || rho < 0.0 {
        return Err(invalid("rho", format!("must be ≥ 0, got {rho}")));
    }
    Ok(zcdp::epsilon(rho, delta))
}

/// δ of ρ-zCDP at ε, rounded up (the inverse direction of [`zcdp_to_dp`]; OpenDP's `cdp_delta`;
/// see [`zcdp::delta`]).
pub fn zcdp_delta(rho: f64, epsilon: f64) -> Result<f64> {
    if rho.is_nan() || rho < 0.0 {
        return Err(invalid("rho", format!("must be ≥ 0, got {rho}")));
    }
    if epsilon.is_nan() || epsilon < 0.0 {
        return Err(invalid("epsilon", format!("must be ≥ 0, got {epsilon}")));
    }
    Ok(zcdp::delta(rho, epsilon))
}

/// ε of a DP-SGD run (Poisson sampling rate `q`, noise multiplier `z`, `steps`) at δ, for
/// **add/remove** neighbours (use [`sgm_epsilon_for`] for substitution).
///
/// * `Rdp`: MTZ 2019 RDP over [`default_orders`], converted by [`rdp_to_dp`].
/// * `Prv`: the certified upper end of [`sgm_prv_bounds`].
/// * `Gdp`: the CLT value ε(μ, δ), μ = q√(T(e^{1/z²} − 1)) — an approximation.
pub fn sgm_epsilon(acc: Accountant, q: f64, z: f64, steps: u64, delta: f64) -> Result<f64> {
    check_q(q)?;
    check_z(z)?;
    check_steps(steps)?;
    check_delta(delta)?;
    Ok(match acc {
        Accountant::Rdp => rdp_epsilon(q, z, steps, delta),
        Accountant::Prv => sgm_prv_bounds(q, z, steps, delta)?.upper,
        Accountant::Gdp => gdp::epsilon_of_mu(gdp::mu(q, z, steps), delta),
    })
}

fn rdp_epsilon(q: f64, z: f64, steps: u64, delta: f64) -> f64 {
    let orders = default_orders();
    let curve = rdp::rdp_curve(q, z, steps, &orders);
    rdp::rdp_to_dp_with_order(&orders, &curve, delta).0
}

/// PRV accountant (add/remove): lower bound, estimate and certified upper bound of ε at δ
/// (error analysis in [`prv`]).
pub fn sgm_prv_bounds(q: f64, z: f64, steps: u64, delta: f64) -> Result<EpsilonBounds> {
    check_q(q)?;
    check_z(z)?;
    check_steps(steps)?;
    check_delta(delta)?;
    if z < PRV_MIN_NOISE_MULTIPLIER {
        return Err(PrivacyError::Numerical {
            what: "PRV accountant",
            reason: format!(
                "noise multiplier z = {z} is below {PRV_MIN_NOISE_MULTIPLIER}: the privacy loss \
                 (≈ 1/(2z²) per step) is too wide for the accountant's grid, and such a run is \
                 hardly private (ε in the hundreds at q = 1, T = 1)"
            ),
        });
    }
    let rough = rdp_epsilon(q, z, steps, delta);
    let b = prv::sgm_epsilon_bounds(q, z, steps, delta, rough);
    if !b.upper.is_finite() {
        return Err(PrivacyError::Numerical {
            what: "PRV accountant",
            reason: format!(
                "no finite ε at δ = {delta} (q = {q}, z = {z}, T = {steps}): δ is below the accountant's resolution"
            ),
        });
    }
    Ok(b)
}

/// The smallest noise multiplier the PRV accountant evaluates. Calibration to a target ε
/// ([`sgm_noise_multiplier`]) never returns less with the PRV accountant, so a huge target ε is
/// met with more noise than it needs (sound), never with an overflowing grid.
pub const PRV_MIN_NOISE_MULTIPLIER: f64 = 0.05;

/// μ of the GDP central-limit accountant, μ = q √(T (e^{1/z²} − 1)) (Bu et al. 2020).
pub fn gdp_mu(q: f64, z: f64, steps: u64) -> Result<f64> {
    check_q(q)?;
    check_z(z)?;
    check_steps(steps)?;
    Ok(gdp::mu(q, z, steps))
}

/// The noise multiplier to hand an add/remove accountant so that its ε certifies `relation`:
/// z for add/remove, z/2 for substitution (sensitivity 2C; see the module docs).
pub fn sgm_effective_noise_multiplier(z: f64, relation: Relation) -> f64 {
    match relation {
        Relation::AddRemove => z,
        Relation::Substitution => z / 2.0,
    }
}

/// [`sgm_epsilon`] certified for `relation` (substitution: evaluated at z/2).
pub fn sgm_epsilon_for(
    relation: Relation,
    acc: Accountant,
    q: f64,
    z: f64,
    steps: u64,
    delta: f64,
) -> Result<f64> {
    check_z(z)?;
    sgm_epsilon(
        acc,
        q,
        sgm_effective_noise_multiplier(z, relation),
        steps,
        delta,
    )
}

/// Relative tolerance of [`sgm_noise_multiplier`] on z.
pub const NOISE_MULTIPLIER_TOLERANCE: f64 = 1e-4;

/// Smallest noise multiplier meeting (ε, δ) for `steps` steps at sampling rate `q` (add/remove;
/// like Opacus `get_noise_multiplier`). ε is decreasing in z: the search brackets the answer by
/// doubling/halving and bisects until the bracket is within [`NOISE_MULTIPLIER_TOLERANCE`]
/// (relative). For PRV, whose evaluations are dearer, secant steps on cheap coarse-mesh
/// evaluations ([`prv::sgm_upper_estimate`]) find the root, and one certified evaluation half a
/// tolerance above it usually ends the search (when the steering's local power law says that one
/// tolerance less would miss the target; otherwise certified secant steps close the bracket).
/// The returned z always had its certified ε evaluated, so the run with it meets the target:
/// `sgm_epsilon(z) ≤ ε`.
pub fn sgm_noise_multiplier(
    acc: Accountant,
    q: f64,
    steps: u64,
    epsilon: f64,
    delta: f64,
) -> Result<f64> {
    check_q(q)?;
    check_steps(steps)?;
    check_epsilon(epsilon)?;
    check_delta(delta)?;
    let mut failure = None;
    if acc == Accountant::Prv {
        return prv_noise_multiplier(q, steps, epsilon, delta);
    }
    let mut meets = |z: f64| match sgm_epsilon(acc, q, z, steps, delta) {
        Ok(e) => e <= epsilon,
        Err(e) => {
            failure.get_or_insert(e);
            false
        }
    };
    let start = 1.0;
    let (mut lo, mut hi) = (start, start);
    if meets(hi) {
        lo = hi * 0.5;
        while meets(lo) {
            hi = lo;
            lo *= 0.5;
            if lo < 1e-6 {
                return Ok(hi);
            }
        }
    } else {
        while !meets(hi) {
            lo = hi;
            hi *= 2.0;
            if hi > 1e6 {
                return Err(failure.unwrap_or(PrivacyError::Numerical {
                    what: "noise multiplier search",
                    reason: format!(
                        "no z ≤ 1e6 reaches ε = {epsilon} at δ = {delta} (q = {q}, T = {steps})"
                    ),
                }));
            }
        }
    }
    Ok(special::bisect(lo, hi, NOISE_MULTIPLIER_TOLERANCE, meets).1)
}

/// Mesh coarseness of the PRV evaluations that steer [`prv_noise_multiplier`].
const PRV_STEERING_COARSENESS: f64 = 8.0;
/// Width of the steering bracket, in tolerances: the secant root read from a bracket of relative
/// width w is off by about w²/8 (ln ε is smooth in ln z), 3·10⁻⁷ here, far inside the tolerance.
const PRV_STEERING_WIDTH: f64 = 16.0;

/// [`sgm_noise_multiplier`] for the PRV accountant, in two phases:
/// 1. steering: the secant search ([`prv::search_bracket`]) on [`prv::sgm_upper_estimate`] (the
///    certified upper bound's computation on an 8× coarser mesh, several times cheaper, within
///    about 2·10⁻⁵ of it, relative), from the GDP answer (first jump by the GDP curve's local
///    power), to a bracket of 16 tolerances; the rough ε that sets each mesh is RDP at the nine
///    orders around the best one at the start (all 156 orders would add about a millisecond per
///    step). Its bracket gives the root and the local power p = −d ln ε / d ln z;
/// 2. closing, with the certified upper bound itself ([`sgm_epsilon`]): one evaluation at half a
///    tolerance above the steered root. If it meets the target and the power says that z·(1 − tol)
///    would not (ln upper(z) + ¾·p·tol > ln ε: a quarter of the step as margin for the power's
///    error), that z is returned; otherwise the secant search on the certified bound continues
///    from it and closes a bracket whose both ends it evaluated.
///
/// Either way the returned z was evaluated with the certified upper bound and meets the target,
/// `sgm_epsilon(Prv, q, z, …) ≤ ε`; the steering decides only how close to the smallest such z
/// it is (within the tolerance when the power is right to a quarter).
fn prv_noise_multiplier(q: f64, steps: u64, epsilon: f64, delta: f64) -> Result<f64> {
    let tol = NOISE_MULTIPLIER_TOLERANCE;
    let start = sgm_noise_multiplier(Accountant::Gdp, q, steps, epsilon, delta)
        .unwrap_or(1.0)
        .max(PRV_MIN_NOISE_MULTIPLIER);
    // The local power of the GDP curve: ε ∝ z^−p near the start, for the first jump.
    let gdp_epsilon = |z: f64| gdp::epsilon_of_mu(gdp::mu(q, z, steps), delta);
    let power =
        ((gdp_epsilon(start) / gdp_epsilon(start * 1.01)).ln() / 1.01f64.ln()).clamp(0.5, 4.0);
    let power = if power.is_finite() { power } else { 1.0 };
    // The best RDP order at the start, located on every fourth order, then its neighbours.
    let orders = default_orders();
    let sparse: Vec<f64> = orders.iter().step_by(4).copied().collect();
    let curve = rdp::rdp_curve(q, start, steps, &sparse);
    let best = rdp::rdp_to_dp_with_order(&sparse, &curve, delta).1;
    let at = orders.iter().position(|&a| a == best).unwrap_or(0);
    let near = &orders[at.saturating_sub(4)..(at + 5).min(orders.len())];
    let rough = |z: f64| {
        let curve = rdp::rdp_curve(q, z, steps, near);
        rdp::rdp_to_dp_with_order(near, &curve, delta).0
    };
    let steered = prv::search_bracket(start, epsilon, PRV_STEERING_WIDTH * tol, power, |z| {
        if z < PRV_MIN_NOISE_MULTIPLIER {
            f64::INFINITY
        } else {
            prv::sgm_upper_estimate(q, z, steps, delta, rough(z), PRV_STEERING_COARSENESS)
        }
    });
    let mut failure = None;
    let mut certified = |z: f64| {
        sgm_epsilon(Accountant::Prv, q, z, steps, delta).unwrap_or_else(|e| {
            failure.get_or_insert(e);
            f64::INFINITY
        })
    };
    let first = match steered.and_then(|b| b.secant(epsilon)) {
        Some((root, power)) => {
            let z = root * (1.0 + tol / 2.0);
            let e = certified(z);
            if e <= epsilon && e.ln() + 0.75 * power * tol > epsilon.ln() {
                return Ok(z);
            }
            z
        }
        None => steered.map_or(start, |b| b.hi.0),
    };
    // Memoised: the evaluation at `first` is not repeated.
    let found = prv::search_noise_multiplier(first, epsilon, tol, &mut certified);
    found.ok_or_else(|| {
        failure.unwrap_or(PrivacyError::Numerical {
            what: "noise multiplier search",
            reason: format!(
                "no z ≤ 1e6 reaches ε = {epsilon} at δ = {delta} (q = {q}, T = {steps})"
            ),
        })
    })
}

/// Exact ε at δ of one Gaussian release with noise multiplier `z` = σ/Δ₂ (Balle & Wang 2018,
/// Thm 8; see [`analytic_gaussian`]). Valid for any ε; relation: that of Δ₂.
pub fn analytic_gaussian_epsilon(z: f64, delta: f64) -> Result<f64> {
    check_z(z)?;
    check_delta(delta)?;
    Ok(analytic_gaussian::epsilon(z, delta))
}

/// Smallest σ of a Gaussian release with ℓ2-sensitivity `sensitivity` that is (ε, δ)-DP
/// (analytic Gaussian, Balle & Wang 2018; valid for every ε > 0; relative tolerance 1e-12, on the
/// safe side).
pub fn analytic_gaussian_sigma(sensitivity: f64, epsilon: f64, delta: f64) -> Result<f64> {
    if !(sensitivity > 0.0 && sensitivity.is_finite()) {
        return Err(invalid(
            "sensitivity",
            format!("must be finite and > 0, got {sensitivity}"),
        ));
    }
    check_epsilon(epsilon)?;
    check_delta(delta)?;
    Ok(sensitivity * analytic_gaussian::noise_multiplier(epsilon, delta))
}

/// The classical calibration σ = Δ₂ √(2 ln(1.25/δ)) / ε (Dwork & Roth Thm 3.22), valid for ε < 1
/// only; offered as a paper option.
pub fn classical_gaussian_sigma(sensitivity: f64, epsilon: f64, delta: f64) -> Result<f64> {
    if !(epsilon > 0.0 && epsilon < 1.0) {
        return Err(crate::error::invalid(
            "epsilon",
            format!("the classical Gaussian calibration needs 0 < ε < 1, got {epsilon}"),
        ));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(crate::error::invalid(
            "delta",
            format!("must be in (0,1), got {delta}"),
        ));
    }
    Ok(sensitivity * (2.0 * (1.25 / delta).ln()).sqrt() / epsilon)
}

/// Basic composition of (εᵢ, δᵢ) (Dwork & Roth Thm 3.16); pure ε is δ = 0.
pub fn basic_composition(costs: &[(f64, f64)]) -> Result<(f64, f64)> {
    for &(e, d) in costs {
        if e.is_nan() || e < 0.0 {
            return Err(invalid("epsilon", format!("must be ≥ 0, got {e}")));
        }
        if !(0.0..=1.0).contains(&d) {
            return Err(invalid("delta", format!("must be in [0, 1], got {d}")));
        }
    }
    Ok(composition::basic(costs))
}

/// Advanced composition of k (ε, δ)-DP mechanisms at slack δ' (Dwork, Rothblum, Vadhan 2010):
/// (min(kε, ε√(2k ln(1/δ')) + kε(e^ε − 1)), kδ + δ').
pub fn advanced_composition(
    epsilon: f64,
    delta: f64,
    k: u64,
    delta_prime: f64,
) -> Result<(f64, f64)> {
    if epsilon.is_nan() || epsilon < 0.0 {
        return Err(invalid("epsilon", format!("must be ≥ 0, got {epsilon}")));
    }
    if !(0.0..1.0).contains(&delta) {
        return Err(invalid("delta", format!("must be in [0, 1), got {delta}")));
    }
    check_steps(k).map_err(|_| invalid("k", "must be at least 1"))?;
    if !(delta_prime > 0.0 && delta_prime < 1.0) {
        return Err(invalid(
            "delta_prime",
            format!("must be in (0, 1), got {delta_prime}"),
        ));
    }
    Ok(composition::advanced(epsilon, delta, k, delta_prime))
}
