//! Small dense kernels on slices, written so that the compiler vectorises them (several
//! independent accumulators; no reassociation is needed).

/// Σ a_i b_i (the `f64` reference the DP-SGD kernels are tested against).
#[cfg(test)]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0.0f64; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    let mut s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// The logistic function 1/(1+e^{−z}), accurate in both tails: with e = e^{−|z|}, 1/(1 + e)
/// for z ≥ 0 and e/(1 + e) for z < 0. Written with one exponential and one division whose
/// numerator is selected, so that no branch depends on the sign of z (a branch the processor
/// mispredicts about half the time when scores are near 0, as in DP-SGD).
#[inline]
pub fn sigmoid(z: f64) -> f64 {
    let e = (-z.abs()).exp();
    let numerator = if z >= 0.0 { 1.0 } else { e };
    numerator / (1.0 + e)
}

/// log(1 + e^z) without overflow.
#[inline]
pub fn softplus(z: f64) -> f64 {
    if z > 0.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

/// In place: z ← softmax(z); returns log Σ_k e^{z_k} (computed with the max shift).
#[inline]
pub fn softmax_in_place(z: &mut [f64]) -> f64 {
    let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut s = 0.0;
    for v in z.iter_mut() {
        *v = (*v - m).exp();
        s += *v;
    }
    for v in z.iter_mut() {
        *v /= s;
    }
    m + s.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_match_naive_loops() {
        let a: Vec<f64> = (0..19).map(|i| (i as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..19).map(|i| (i as f64 * 0.11).cos()).collect();
        let naive: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-13);
        // Tails: no overflow, symmetric.
        assert_eq!(sigmoid(800.0), 1.0);
        assert!(sigmoid(-800.0) >= 0.0 && sigmoid(-800.0) < 1e-300);
        assert!((sigmoid(0.3) + sigmoid(-0.3) - 1.0).abs() < 1e-15);
        // The two textbook branches, bit for bit (fitted models did not change with the
        // branch-free form), and NaN stays NaN.
        for z in (-4000..=4000)
            .map(|k| k as f64 * 0.0173)
            .chain([0.0, -0.0, 1e-300, -1e-300])
        {
            let want = if z >= 0.0 {
                1.0 / (1.0 + (-z).exp())
            } else {
                z.exp() / (1.0 + z.exp())
            };
            assert_eq!(sigmoid(z).to_bits(), want.to_bits(), "z = {z}");
        }
        assert!(sigmoid(f64::NAN).is_nan());
        assert!((softplus(800.0) - 800.0).abs() < 1e-12);
        assert!((softplus(0.0) - 2f64.ln()).abs() < 1e-15);
        let mut z = vec![1000.0, 1000.0, 1000.0 - 2f64.ln()];
        let lse = softmax_in_place(&mut z);
        assert!((z[0] - 0.4).abs() < 1e-14 && (z[2] - 0.2).abs() < 1e-14);
        assert!((lse - (1000.0 + 2.5f64.ln())).abs() < 1e-12);
    }
}
