//! Seeded splits (train / calibration / test, optionally stratified) and partitions into sites.
//! Deterministic in the seed (ChaCha20); splitting uses no private information beyond the
//! strata sizes, and releases nothing.

use crate::dataset::{Dataset, Target};
use crate::error::{Result, invalid};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha20Rng;
use std::collections::BTreeMap;

/// What a split keeps balanced across its parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stratify {
    #[default]
    None,
    /// Each part has (up to rounding) the same group proportions.
    Group,
    /// Each part has the same class proportions (classification targets).
    Label,
    /// Each (group, class) cell is split in the given fractions.
    GroupAndLabel,
}

/// Split `0..n` into parts of the given `fractions` (positive, summing to 1): shuffled with
/// ChaCha20 seeded by `seed`; within each stratum (when `strata` is given) the cut points are
/// `round(n_s · cumulative fraction)`, so every part gets its share of every stratum.
pub fn split_indices(
    n: usize,
    fractions: &[f64],
    seed: u64,
    strata: Option<&[u64]>,
) -> Result<Vec<Vec<usize>>> {
    if fractions.is_empty() || fractions.iter().any(|f| !(f.is_finite() && *f > 0.0)) {
        return Err(invalid(
            "split fractions",
            format!("each must be > 0, got {fractions:?}"),
        ));
    }
    let total: f64 = fractions.iter().sum();
    if (total - 1.0).abs() > 1e-9 {
        return Err(invalid(
            "split fractions",
            format!("must sum to 1, got {total}"),
        ));
    }
    if let Some(s) = strata
        && s.len() != n
    {
        return Err(invalid(
            "strata",
            format!("{} strata for {n} rows", s.len()),
        ));
    }
    let mut by_stratum: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        by_stratum
            .entry(strata.map_or(0, |s| s[i]))
            .or_default()
            .push(i);
    }
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut parts = vec![Vec::new(); fractions.len()];
    for idx in by_stratum.values_mut() {
        idx.shuffle(&mut rng);
        let m = idx.len();
        let mut start = 0;
        let mut cum = 0.0;
        for (p, f) in fractions.iter().enumerate() {
            cum += f;
            let end = if p + 1 == fractions.len() {
                m
            } else {
                ((m as f64 * cum).round() as usize).min(m)
            };
            parts[p].extend_from_slice(&idx[start..end.max(start)]);
            start = end.max(start);
        }
    }
    for p in parts.iter_mut() {
        p.shuffle(&mut rng);
    }
    Ok(parts)
}

/// Partition `0..n` into sites of the given sizes (summing to at most `n`; rows left over are
/// unused), by a seeded shuffle.
pub fn partition_indices(n: usize, sizes: &[usize], seed: u64) -> Result<Vec<Vec<usize>>> {
    let total: usize = sizes.iter().sum();
    if sizes.is_empty() || sizes.contains(&0) {
        return Err(invalid(
            "site sizes",
            "need at least one site, each non-empty",
        ));
    }
    if total > n {
        return Err(invalid(
            "site sizes",
            format!("they sum to {total}, the data has {n} rows"),
        ));
    }
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(&mut ChaCha20Rng::seed_from_u64(seed));
    let mut out = Vec::with_capacity(sizes.len());
    let mut start = 0;
    for &s in sizes {
        out.push(idx[start..start + s].to_vec());
        start += s;
    }
    Ok(out)
}

impl Dataset {
    /// The strata of `how` for each row (an error if the needed groups / classes are absent).
    fn strata(&self, how: Stratify) -> Result<Option<Vec<u64>>> {
        let groups = || {
            self.groups
                .as_ref()
                .map(|g| g.codes.iter().map(|&c| c as u64).collect::<Vec<_>>())
                .ok_or_else(|| invalid("stratify", "stratifying by group needs a sensitive column"))
        };
        let labels = || match &self.target {
            Some(Target::Binary(y)) => Ok(y.iter().map(|&c| c as u64).collect::<Vec<_>>()),
            Some(Target::Multiclass { labels, .. }) => {
                Ok(labels.iter().map(|&c| c as u64).collect())
            }
            _ => Err(invalid(
                "stratify",
                "stratifying by label needs a classification target",
            )),
        };
        Ok(match how {
            Stratify::None => None,
            Stratify::Group => Some(groups()?),
            Stratify::Label => Some(labels()?),
            Stratify::GroupAndLabel => Some(
                groups()?
                    .into_iter()
                    .zip(labels()?)
                    .map(|(g, y)| (g << 32) | y)
                    .collect(),
            ),
        })
    }

    /// Seeded split into parts of the given fractions (e.g. `[0.6, 0.2, 0.2]` for train /
    /// calibration / test); see [`split_indices`].
    pub fn split(&self, fractions: &[f64], seed: u64, stratify: Stratify) -> Result<Vec<Dataset>> {
        let strata = self.strata(stratify)?;
        let parts = split_indices(self.n_rows(), fractions, seed, strata.as_deref())?;
        Ok(parts.iter().map(|p| self.select(p)).collect())
    }

    /// Seeded partition into sites of the given sizes; see [`partition_indices`].
    pub fn partition(&self, sizes: &[usize], seed: u64) -> Result<Vec<Dataset>> {
        let parts = partition_indices(self.n_rows(), sizes, seed)?;
        Ok(parts.iter().map(|p| self.select(p)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_deterministic_covering_and_stratified() {
        let strata: Vec<u64> = (0..100).map(|i| (i % 4 == 0) as u64).collect();
        let a = split_indices(100, &[0.6, 0.2, 0.2], 7, Some(&strata)).unwrap();
        let b = split_indices(100, &[0.6, 0.2, 0.2], 7, Some(&strata)).unwrap();
        assert_eq!(a, b);
        assert_ne!(
            a,
            split_indices(100, &[0.6, 0.2, 0.2], 8, Some(&strata)).unwrap()
        );
        let mut all: Vec<usize> = a.concat();
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());
        // Stratum 1 has 25 rows: round(25·0.6) = 15, round(25·0.8) = 20 → 15 / 5 / 5.
        let ones: Vec<usize> = a
            .iter()
            .map(|p| p.iter().filter(|&&i| strata[i] == 1).count())
            .collect();
        assert_eq!(ones, vec![15, 5, 5]);
        assert_eq!(a.iter().map(Vec::len).collect::<Vec<_>>(), vec![60, 20, 20]);
    }

    #[test]
    fn split_refuses_bad_fractions() {
        assert!(split_indices(10, &[0.5, 0.4], 1, None).is_err());
        assert!(split_indices(10, &[1.2, -0.2], 1, None).is_err());
        assert!(split_indices(10, &[], 1, None).is_err());
    }

    #[test]
    fn partition_has_the_given_sizes_and_disjoint_sites() {
        let p = partition_indices(10, &[3, 4, 2], 5).unwrap();
        assert_eq!(p.iter().map(Vec::len).collect::<Vec<_>>(), vec![3, 4, 2]);
        let mut all = p.concat();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 9);
        assert!(partition_indices(10, &[6, 5], 5).is_err());
        assert!(partition_indices(10, &[0, 5], 5).is_err());
    }
}
