//! Composition theorems for pure and approximate DP (same neighbouring relation throughout).

/// Basic composition (Dwork & Roth 2014, Thm 3.16): (Σ εᵢ, Σ δᵢ).
pub fn basic(costs: &[(f64, f64)]) -> (f64, f64) {
    costs
        .iter()
        .fold((0.0, 0.0), |(e, d), (ei, di)| (e + ei, d + di))
}

/// Advanced composition (Dwork, Rothblum, Vadhan 2010; Dwork & Roth 2014, Thm 3.20): k-fold
/// adaptive composition of (ε, δ)-DP mechanisms is (ε', kδ + δ')-DP with
/// `ε' = ε √(2k ln(1/δ')) + k ε (e^ε − 1)`.
/// Returns the smaller of that ε' and the basic kε (both hold at δ = kδ + δ').
pub fn advanced(epsilon: f64, delta: f64, k: u64, delta_prime: f64) -> (f64, f64) {
    let kf = k as f64;
    let adv =
        epsilon * (2.0 * kf * (1.0 / delta_prime).ln()).sqrt() + kf * epsilon * epsilon.exp_m1();
    (adv.min(kf * epsilon), kf * delta + delta_prime)
}
