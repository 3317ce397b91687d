//! Synthetic data-generating designs of the five papers, one file per design.
//!
//! | module | paper | design |
//! |---|---|---|
//! | [`fdp_fair`] | Xue & Yu, §5.1 | `d = 2`, Beta/uniform features, arctan label model (corrected formula), with the Monte-Carlo fair-Bayes oracle of §5.1.1 |
//! | [`law_like`] | Xian et al. (Law School proportions) | 4 groups with Law School proportions, `Y ~ clip(N(μ_a, 0.42), 1, 4)` |
//! | [`lpct`] | Ma & Yang, Section 6.1 | uniform `[0,1]²`, the authors' valid regression functions `η_P`, `η_Q` (γ); private and public samples |
//! | [`two_group_logistic`] | Ghoukasian & Asoodeh (this project's design) | two groups with different base rates, logistic labels |
//! | [`gaussian_mixture`] | Say et al., App. E.1 | `K = 6` classes, `d = 20`, 10 components per class, group contamination `p` |
//!
//! Every design implements [`Design`]: `generate(n, seed)` returns a [`Dataset`] of `n` i.i.d. rows.
//! Rows are produced in chunks of [`CHUNK_ROWS`], each chunk from its own ChaCha8 stream
//! (`seed`, stream = chunk index), in parallel with rayon. The output is therefore identical
//! whatever the number of threads, and 10^7 rows need no memory beyond the returned matrix.
//! Simulation draws use `rand_distr` (this is data generation, not a privacy release).

pub mod fdp_fair;
pub mod gaussian_mixture;
pub mod law_like;
pub mod lpct;
pub mod two_group_logistic;

pub use crate::builtin::error::{CatalogError, Result};
pub use fdp_fair::{FairBayes, FairBayesOracle, FdpFairDesign};
pub use gaussian_mixture::GaussianMixtureDesign;
pub use law_like::LawLikeDesign;
pub use lpct::LpctDesign;
pub use two_group_logistic::TwoGroupLogisticDesign;

use crate::Dataset;
use ndarray::Array2;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Rows generated from one random stream.
pub const CHUNK_ROWS: usize = 1 << 14;

/// The random generator each chunk of rows draws from.
pub type ChunkRng = ChaCha8Rng;

/// A synthetic data-generating process.
pub trait Design: Sync {
    /// Short name (used by the CLI and the experiment harness).
    fn name(&self) -> &'static str;
    /// `n` i.i.d. rows, reproducible from `seed`.
    fn generate(&self, n: usize, seed: u64) -> Result<Dataset>;
}

/// The names of the synthetic designs with one line each, for listings.
pub fn catalog() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "fdp-fair",
            "Xue & Yu, §5.1: d = 2, two groups (π₁ = 0.3), arctan label model (corrected)",
        ),
        (
            "law-like",
            "Xian et al., Law-School-like: 4 groups, Y ~ clip(N(μ_a, 0.42), 1, 4), X = Y",
        ),
        (
            "lpct",
            "Ma & Yang, Section 6.1: uniform [0,1]², η_P / η_Q(γ), private and public samples",
        ),
        (
            "two-group-logistic",
            "Ghoukasian & Asoodeh: two groups with different base rates, logistic labels",
        ),
        (
            "gaussian-mixture",
            "Say et al., App. E.1: d = 20, K = 6, 10 components per class, contamination p",
        ),
    ]
}

/// A seed derived from `seed` and a tag (SplitMix64 finaliser): independent sub-streams for the
/// parts of a design (e.g. public vs private sample, the mixture's centres vs its rows).
pub fn derive_seed(seed: u64, tag: u64) -> u64 {
    let mut z = seed ^ tag.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator of chunk `chunk` of the rows drawn with `seed`.
pub fn chunk_rng(seed: u64, chunk: u64) -> ChunkRng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(chunk);
    rng
}

/// Rows drawn by a design: features (n × d), group codes and targets.
pub(crate) struct Rows<T> {
    pub features: Array2<f64>,
    pub groups: Vec<u32>,
    pub targets: Vec<T>,
}

/// Fill `n` rows of `d` features in parallel chunks. `row(rng, features)` writes one row's
/// features and returns its group code and target.
pub(crate) fn generate_rows<T, F>(n: usize, d: usize, seed: u64, row: F) -> Rows<T>
where
    T: Send + Copy + Default,
    F: Fn(&mut ChunkRng, &mut [f64]) -> (u32, T) + Sync,
{
    let mut features = vec![0.0; n * d];
    let mut groups = vec![0u32; n];
    let mut targets = vec![T::default(); n];
    assert!(d > 0, "every design has at least one feature");
    features
        .par_chunks_mut(CHUNK_ROWS * d)
        .zip(groups.par_chunks_mut(CHUNK_ROWS))
        .zip(targets.par_chunks_mut(CHUNK_ROWS))
        .enumerate()
        .for_each(|(c, ((f, g), t))| {
            let mut rng = chunk_rng(seed, c as u64);
            for (i, (gi, ti)) in g.iter_mut().zip(t.iter_mut()).enumerate() {
                (*gi, *ti) = row(&mut rng, &mut f[i * d..(i + 1) * d]);
            }
        });
    let features = Array2::from_shape_vec((n, d), features).expect("n·d values");
    Rows {
        features,
        groups,
        targets,
    }
}

/// Feature names `x1..xd`.
pub(crate) fn numbered(prefix: &str, d: usize) -> Vec<String> {
    (1..=d).map(|j| format!("{prefix}{j}")).collect()
}

/// Refuse `n = 0` with a message naming the parameter.
pub(crate) fn check_rows(n: usize) -> Result<()> {
    if n == 0 {
        return Err(crate::builtin::error::invalid(
            "n",
            "the number of rows must be at least 1",
        ));
    }
    Ok(())
}

/// Refuse a probability outside `[0, 1]` (or NaN).
pub(crate) fn check_probability(parameter: &'static str, p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) {
        return Err(crate::builtin::error::invalid(
            parameter,
            format!("{p} is not a probability in [0, 1]"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn chunked_generation_is_reproducible_and_thread_independent() {
        let draw = |seed| {
            generate_rows(3 * CHUNK_ROWS + 5, 2, seed, |rng, f| {
                f[0] = rng.random::<f64>();
                f[1] = rng.random::<f64>();
                (0u32, 0u8)
            })
            .features
        };
        let a = draw(1);
        let b = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| draw(1));
        assert_eq!(a, b);
        assert_ne!(a, draw(2));
        // Different chunks use different streams.
        assert_ne!(a.row(0), a.row(CHUNK_ROWS));
    }

    #[test]
    fn derived_seeds_differ_by_tag() {
        assert_ne!(derive_seed(1, 0), derive_seed(1, 1));
        assert_ne!(derive_seed(1, 0), derive_seed(2, 0));
    }
}
