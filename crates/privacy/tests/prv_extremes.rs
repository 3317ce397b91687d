//! The PRV accountant at extreme settings: a noise multiplier near 0 (from a huge target ε)
//! makes the privacy loss too wide for its grid; it must answer with a sound bound or a clear
//! error, never overflow (found by the CLI options fuzzer: `--epsilon 4294967297 --batch
//! 4294967297`).

use dpfair_privacy::accounting::{
    Accountant, PRV_MIN_NOISE_MULTIPLIER, sgm_noise_multiplier, sgm_prv_bounds,
};

#[test]
fn huge_epsilon_calibrates_without_overflow() {
    let target = 4_294_967_297.0;
    let z = sgm_noise_multiplier(Accountant::Prv, 1.0, 1, target, 1e-5).unwrap();
    // More noise than the target needs (sound): the accountant's floor.
    assert!(z >= PRV_MIN_NOISE_MULTIPLIER, "z = {z}");
    let b = sgm_prv_bounds(1.0, z, 1, 1e-5).unwrap();
    assert!(b.upper <= target, "{b:?}");
}

#[test]
fn tiny_noise_multiplier_gives_bounds_or_an_error() {
    for z in [1e-3, 1e-6, 0.049] {
        match sgm_prv_bounds(1.0, z, 10, 1e-5) {
            Ok(b) => assert!(b.lower <= b.upper, "{b:?}"),
            Err(e) => assert!(e.to_string().contains("PRV"), "{e}"),
        }
    }
}
