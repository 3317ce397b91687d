//! What the federated server allows a site to send (`docs/federated-trust.md`): the site-name
//! alphabet and, for every number of a transcript, the range the protocol gives an honest site,
//! derived from public quantities only (`N_s`, `(ε_s, δ_s)`, the basis, the depth `M`).
//!
//! **False refusals.** Every bound is "what the statistic can be without noise" plus `k` noise
//! standard deviations, with `k` chosen per transcript so that an honest site trips one of its
//! checks with probability at most [`FALSE_REFUSAL`] (`10⁻¹²`) per round: the release noise is
//! the privacy crate's discrete Gaussian, sub-Gaussian with its σ (Canonne, Kamath, Steinke 2020),
//! so a check of a sum of independent noises with standard deviation `s` fails with probability
//! at most `2 exp(−k²/2)` when it allows `k s`, and a union over the transcript's `T` checks gives
//! `k = sqrt(2 ln(2T/10⁻¹²))` ([`sigmas_for`]: 8.2 for 200 checks, 9.4 for the 6·10⁶ of depth
//! 20). Over `S` sites and both rounds an honest federation is refused with probability at most
//! `2S·10⁻¹²`.

use crate::fdp_fair::tree::{SiteTrees, TreeNoise};
use crate::plugin::dp_sgd;
use crate::plugin::error::{Error, Result};
use crate::plugin::logistic::{LogisticEta, public_release};
use crate::plugin::release::{
    KernelEta, PI_FLOOR, classical_sigma, functional_sigma, joint_noise_per_unit,
};
use crate::predictor::Accounting;

/// Probability that one honest transcript fails any of its checks (module docs).
pub const FALSE_REFUSAL: f64 = 1e-12;

/// Longest site name.
pub const MAX_SITE_NAME: usize = 64;

/// Relative slack for floating-point recomputation of a public value (σ, Λ) and for the lattice
/// rounding of released reals (`2^{−52}` relative, far below it).
const REL_SLACK: f64 = 1e-9;

/// `k = sqrt(2 ln(2T/FALSE_REFUSAL))` for `checks = T` sub-Gaussian checks (module docs).
pub fn sigmas_for(checks: usize) -> f64 {
    (2.0 * (2.0 * checks.max(1) as f64 / FALSE_REFUSAL).ln()).sqrt()
}

/// A site name as an error message may show it: escaped (no control character or ANSI escape
/// reaches a terminal) and cut at [`MAX_SITE_NAME`] characters.
pub fn show_name(name: &str) -> String {
    let count = name.chars().count();
    let head: String = name.chars().take(MAX_SITE_NAME).collect();
    let escaped: String = head.escape_debug().collect();
    if count > MAX_SITE_NAME {
        format!("{escaped}… ({count} characters)")
    } else {
        escaped
    }
}

/// Site names are 1–64 characters of `[A-Za-z0-9._-]`: checked when a site is created and by
/// the server on every transcript, so no name printed by any party can carry a newline, an
/// escape sequence or a page of text.
pub fn check_site_name(name: &str) -> Result<()> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || name.chars().count() > MAX_SITE_NAME || !name.chars().all(ok) {
        return Err(Error::InvalidData(format!(
            "site name `{}` is not allowed: use 1–{MAX_SITE_NAME} characters from A–Z, a–z, 0–9, `.`, `_`, `-`",
            show_name(name)
        )));
    }
    Ok(())
}

/// The noise standard deviation of one released `π̃^s_a`, from public values: the largest the
/// site's estimator and accounting mode may have used (strict: the joint release with `blocks`
/// blocks, sensitivity `1/n`; paper: the classical σ at `(ε/4, δ/4)`; the paper's "known π" has
/// none). `n = ⌈N_s/2⌉` is the training size.
fn pi_sigma(
    n: usize,
    epsilon: f64,
    delta: f64,
    blocks: usize,
    accounting: Accounting,
) -> Result<f64> {
    let dpi = 1.0 / n as f64;
    Ok(match accounting {
        Accounting::Strict => joint_noise_per_unit(blocks, epsilon, delta)? * dpi,
        Accounting::Paper => classical_sigma(dpi, epsilon / 4.0, delta / 4.0),
    })
}

/// Round 1, `π̃^s`: `π̃_a = clamp(n_a/n + w_a, PI_FLOOR, 1 − PI_FLOOR)`, `w_a` independent with
/// standard deviation `σ_π` (`pi_sigma` in this file), so `|π̃_a − n_a/n| ≤ |w_a| + PI_FLOOR` (the clamp is a
/// projection onto an interval within `PI_FLOOR` of `n_a/n`) and, as `n_0 + n_1 = n`,
/// `|π̃_0 + π̃_1 − 1| ≤ 2kσ_π + 2·PI_FLOOR` (`k` for the two checks `|w_a| ≤ kσ_π`).
pub fn check_pi(
    pi: [f64; 2],
    n_rows: usize,
    epsilon: f64,
    delta: f64,
    blocks: usize,
    accounting: Accounting,
) -> Result<()> {
    let sigma = pi_sigma(n_rows.div_ceil(2), epsilon, delta, blocks, accounting)?;
    let limit = 2.0 * sigmas_for(2) * sigma + 2.0 * PI_FLOOR;
    let sum = pi[0] + pi[1];
    if (sum - 1.0).abs() > limit {
        return Err(Error::InvalidData(format!(
            "group proportions π̃_0 + π̃_1 = {sum} are not on the simplex within their release noise (|π̃_0 + π̃_1 − 1| ≤ {limit:.3e}; σ_π = {sigma:.3e} from N_s, ε_s, δ_s)"
        )));
    }
    Ok(())
}

/// The noise standard deviations an honest site's kernel coefficients may carry (public): strict,
/// the joint release's `√4 σ_1 Δ_K`; paper, the functional σ at `(ε/4, δ/4)` (private π̃) or
/// `(ε/2, δ/2)` ("known π"); `Δ_K = 2h^{−d}/n`.
fn kernel_sigmas(
    k: &KernelEta,
    n: usize,
    epsilon: f64,
    delta: f64,
    accounting: Accounting,
) -> Result<Vec<f64>> {
    let dk = 2.0 * k.basis.bandwidth().powi(-(k.basis.dim() as i32)) / n as f64;
    Ok(match accounting {
        Accounting::Strict => vec![joint_noise_per_unit(4, epsilon, delta)? * dk],
        Accounting::Paper => [4.0, 2.0]
            .iter()
            .map(|share| functional_sigma(dk, epsilon / share, delta / share))
            .collect(),
    })
}

/// Round 1, kernel coefficients. Each coefficient is `(h^{−d}/n) Σ_{i ∈ group} φ_j(X_i)` with
/// `|φ_j| ≤ D^{−1/2}` (`φ` is `D^{−1/2}(cos, sin)`, `crate::plugin::basis`) and at most `n` rows,
/// so `|c_j| ≤ h^{−d} D^{−1/2}`, plus the noise: `|c̃_j| ≤ h^{−d} D^{−1/2} + kσ_c` over the `4·2D`
/// coefficients. The recorded noise standard deviation must be the public one.
pub fn check_kernel(
    k: &KernelEta,
    n_rows: usize,
    epsilon: f64,
    delta: f64,
    accounting: Accounting,
) -> Result<()> {
    let sigmas = kernel_sigmas(k, n_rows.div_ceil(2), epsilon, delta, accounting)?;
    let matches = |v: f64| sigmas.iter().any(|s| (v / s - 1.0).abs() <= REL_SLACK);
    match k.noise_sd {
        Some(v) if matches(v) => {}
        other => {
            return Err(Error::InvalidData(format!(
                "kernel coefficients: recorded noise sd {other:?}, the public value is {sigmas:?}"
            )));
        }
    }
    let sigma = sigmas.iter().copied().fold(0.0, f64::max);
    let d_freq = (k.basis.len() / 2) as f64;
    let signal = k.basis.bandwidth().powi(-(k.basis.dim() as i32)) / d_freq.sqrt();
    let limit = signal * (1.0 + REL_SLACK) + sigmas_for(4 * k.basis.len()) * sigma;
    for a in 0..2 {
        for (name, v) in [
            ("denominator", &k.denominator[a]),
            ("numerator", &k.numerator[a]),
        ] {
            if let Some((j, c)) = v.iter().enumerate().find(|(_, c)| c.abs() > limit) {
                return Err(Error::InvalidData(format!(
                    "{name} coefficient {j} of group {a} is {c}: beyond what a kernel release allows (|c| ≤ h^-d/√D + kσ = {limit:.4})"
                )));
            }
        }
    }
    Ok(())
}

/// Round 1, logistic weights. Λ and the noise standard deviation must be the public ones
/// ([`public_release`] on `n = ⌈N_s/2⌉`); the minimiser of `(1/n) Σ log(1 + e^{−y w·φ}) +
/// (Λ/2)‖w‖²` has `(Λ/2)‖w*‖² ≤ F(w*) ≤ F(0) = ln 2`, and the solver's `‖∇F‖_∞ ≤ tol` puts the
/// released minimiser within `√p·tol/Λ` of it (Λ-strong convexity), so
/// `‖ŵ‖ ≤ sqrt(2 ln 2/Λ) + √p·tol/Λ`; the noise, `p` independent coordinates of standard
/// deviation `σ_w`, has `‖w̃ − ŵ‖ ≤ 2σ_w sqrt(2(p ln 5 + ln(1/10⁻¹²)))` except with probability
/// `10⁻¹²` (a ½-net of the sphere, `5^p` sub-Gaussian directions).
pub fn check_logistic(l: &LogisticEta, n_rows: usize, epsilon: f64, delta: f64) -> Result<()> {
    if l.feature_map != crate::plugin::logistic::FeatureMap::UnitBall {
        return Err(Error::InvalidData(
            "logistic plug-in: a site's weights must apply to unit-ball rows (output \
             perturbation), not raw rows"
                .into(),
        ));
    }
    let p = l.weights.len();
    let public = public_release(n_rows.div_ceil(2), p.saturating_sub(2), epsilon, delta)?;
    let same = |a: f64, b: f64| (a / b - 1.0).abs() <= REL_SLACK;
    if !same(l.l2, public.l2) || !same(l.noise_sd, public.noise_sd) {
        return Err(Error::InvalidData(format!(
            "logistic plug-in: Λ = {} and noise sd {}, the public values are {} and {}",
            l.l2, l.noise_sd, public.l2, public.noise_sd
        )));
    }
    let noise = 2.0 * public.noise_sd * (2.0 * (p as f64 * 5f64.ln() - FALSE_REFUSAL.ln())).sqrt();
    let limit = public.weight_norm * (1.0 + REL_SLACK) + noise;
    let norm = l.weights.iter().map(|w| w * w).sum::<f64>().sqrt();
    if norm > limit {
        return Err(Error::InvalidData(format!(
            "logistic weights of norm {norm}: beyond what the regularised release allows (‖w‖ ≤ sqrt(2 ln 2/Λ) + √p·tol/Λ + noise = {limit:.4})"
        )));
    }
    Ok(())
}

/// Round 1, the DP-SGD plug-in ([`crate::plugin::dp_sgd`], raw rows; strict accounting only).
/// `π̃` is `1 − π̃_1, π̃_1` clamped into `[PI_FLOOR, 1 − PI_FLOOR]`, so `|π̃_0 + π̃_1 − 1| ≤
/// 2·PI_FLOOR` whatever the noise. The weights were trained on `n = ⌈N_s/2⌉` rows at
/// `((1 − PI_SHARE)ε_s, δ_s)`: no ridge, the noise standard deviation those public values give,
/// and a norm within [`dp_sgd::weight_norm_bound`] at [`FALSE_REFUSAL`].
pub fn check_dp_sgd(
    l: &LogisticEta,
    pi: [f64; 2],
    n_rows: usize,
    epsilon: f64,
    delta: f64,
    accounting: Accounting,
) -> Result<()> {
    if accounting == Accounting::Paper {
        return Err(Error::InvalidData(
            "DP-SGD plug-in: it has no paper procedure; a site must use strict accounting".into(),
        ));
    }
    let sum = pi[0] + pi[1];
    if (sum - 1.0).abs() > 2.0 * PI_FLOOR * (1.0 + REL_SLACK) + REL_SLACK {
        return Err(Error::InvalidData(format!(
            "group proportions π̃_0 + π̃_1 = {sum}: the DP-SGD plug-in's π̃ sum to 1 (|π̃_0 + π̃_1 − 1| ≤ 2·{PI_FLOOR})"
        )));
    }
    let n = n_rows.div_ceil(2);
    let epsilon = (1.0 - dp_sgd::PI_SHARE) * epsilon;
    let sd = dp_sgd::weight_noise_sd(n, epsilon, delta)?;
    if l.l2 != 0.0 || (l.noise_sd / sd - 1.0).abs() > REL_SLACK {
        return Err(Error::InvalidData(format!(
            "DP-SGD plug-in: Λ = {} and noise sd {}, the public values are 0 and {sd}",
            l.l2, l.noise_sd
        )));
    }
    let limit = dp_sgd::weight_norm_bound(n, l.weights.len(), epsilon, delta, FALSE_REFUSAL)?;
    let norm = l.weights.iter().map(|w| w * w).sum::<f64>().sqrt();
    if norm.is_nan() || norm > limit {
        return Err(Error::InvalidData(format!(
            "DP-SGD plug-in: weights of norm {norm}, beyond what an honest run can reach (≤ {limit:.4})"
        )));
    }
    Ok(())
}

/// Round 2, one site's two noisy trees (Algorithm 3), node noise σ from the public
/// `(ε_s, δ_s, M)`. The exact trees count the `ň_s` calibration scores, each in one leaf of one
/// group, so, with `k` for all of the transcript's checks:
///
/// * every node is a count in `[0, ň_s]`: noisy, in `[−kσ, ň_s + kσ]`;
/// * a parent is the sum of its two children: `|N_{ℓ,k} − N_{ℓ+1,2k−1} − N_{ℓ+1,2k}| ≤ k√3σ`;
/// * every level of a tree sums to its level-1 total: `|Σ_k N_{ℓ,k} − Σ_k N_{1,k}| ≤ kσ√(2^ℓ + 2)`;
/// * the two groups' level-1 totals sum to `ň_s`: `|Σ_a (N^a_{1,1} + N^a_{1,2}) − ň_s| ≤ 2kσ`.
///
/// A site can still release the trees of made-up scores; what that moves is in
/// `docs/federated-trust.md`.
pub fn check_trees(trees: &SiteTrees, n_cal: usize, sigma: f64, depth: usize) -> Result<()> {
    let nodes = (2usize << depth) - 2;
    let checks = 2 * (nodes + ((1usize << depth) - 2) + (depth - 1)) + 1;
    let k = sigmas_for(checks);
    let bad = |reason: String| Err(Error::InvalidData(reason));
    let (lo, hi) = (-k * sigma, n_cal as f64 + k * sigma);
    let mut total = 0.0;
    for (a, tree) in trees.groups.iter().enumerate() {
        let levels = &tree.levels;
        for (l, level) in levels.iter().enumerate() {
            if let Some((i, c)) = level
                .iter()
                .enumerate()
                .find(|(_, c)| !(lo..=hi).contains(*c))
            {
                return bad(format!(
                    "group {a}, node ({}, {}): count {c} is impossible for a calibration half of {n_cal} rows (allowed [−kσ, ň_s + kσ] = [{lo:.1}, {hi:.1}], k = {k:.2}, σ = {sigma:.2})",
                    l + 1,
                    i + 1
                ));
            }
        }
        for l in 0..depth - 1 {
            for (i, &parent) in levels[l].iter().enumerate() {
                let children = levels[l + 1][2 * i] + levels[l + 1][2 * i + 1];
                let limit = k * 3f64.sqrt() * sigma;
                if (parent - children).abs() > limit {
                    return bad(format!(
                        "group {a}, node ({}, {}) = {parent} but its children sum to {children}: inconsistent beyond the noise (k√3σ = {limit:.1})",
                        l + 1,
                        i + 1
                    ));
                }
            }
        }
        let first: f64 = levels[0].iter().sum();
        for (l, level) in levels.iter().enumerate().skip(1) {
            let sum: f64 = level.iter().sum();
            let limit = k * sigma * ((level.len() + 2) as f64).sqrt();
            if (sum - first).abs() > limit {
                return bad(format!(
                    "group {a}, level {} sums to {sum} but level 1 to {first}: inconsistent beyond the noise ({limit:.1})",
                    l + 1
                ));
            }
        }
        total += first;
    }
    let limit = 2.0 * k * sigma;
    if (total - n_cal as f64).abs() > limit {
        return bad(format!(
            "the two groups' trees count {total:.1} scores, the calibration half has ň_s = {n_cal} (allowed ±2kσ = {limit:.1})"
        ));
    }
    Ok(())
}

/// The node noise σ of a site's trees as the server computes it (the release's calibration for
/// the accounting mode).
pub fn tree_sigma(epsilon: f64, delta: f64, depth: usize, accounting: Accounting) -> Result<f64> {
    match accounting {
        Accounting::Strict => TreeNoise::Analytic,
        Accounting::Paper => TreeNoise::Paper,
    }
    .node_sigma(epsilon, delta, depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_keeps_the_false_refusal_below_its_target() {
        for checks in [1, 2, 200, 6_000_000] {
            let k = sigmas_for(checks);
            assert!(2.0 * checks as f64 * (-k * k / 2.0).exp() <= FALSE_REFUSAL * (1.0 + 1e-9));
        }
        assert!((sigmas_for(200) - 8.2).abs() < 0.1);
        assert!(sigmas_for(6_300_000) < 9.5);
    }

    #[test]
    fn names_are_checked_and_escaped() {
        for good in ["A", "site-1", "h.o_s-p", &"x".repeat(64)] {
            check_site_name(good).unwrap();
        }
        for bad in [
            "",
            "a b",
            "a\nerror: forged line",
            "\u{1b}[31mred",
            "é",
            &"x".repeat(65),
        ] {
            let e = check_site_name(bad).unwrap_err().to_string();
            assert!(!e.contains('\n') && !e.contains('\u{1b}'), "{e}");
        }
        let long = show_name(&"y".repeat(100_000));
        assert!(
            long.len() < 120 && long.contains("100000 characters"),
            "{long}"
        );
    }
}
