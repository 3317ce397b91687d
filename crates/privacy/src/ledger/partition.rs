//! Data-independent splits of the rows: the keys of parallel composition.
//!
//! **The rule** (`docs/privacy.md`, "One neighbouring relation per ledger"): a [`Partition`]'s
//! parts must be fixed by public information only: row positions under a public seed (a random
//! split, a shuffle's mini-batches), the data's declared structure (the sites of a federation,
//! a labelled and an unlabelled file), never a value of the row (its group, label, or a
//! feature). Under replace-one neighbours a replaced row then stays in its part, and each part
//! sees a neighbouring pair or the same data. Cells keyed by a value are not a partition: a
//! replaced row can move from one cell to another and change both, so releases over such cells
//! compose sequentially (or, for a histogram, with the sensitivity of a move, 2 in ℓ1), as
//! `dataset_dependent_cells_compose_sequentially` shows. The constructor takes names and a
//! seed, and nothing from the rows, so a caller can only break the rule by choosing the rows of
//! [`super::Ledger::in_part`] by value. The callers (held-out check, fair regression's chained
//! fit, CDP-/FDP-Fair halves and sites, DP2DP's labelled / pool split, DP-FERMI's mini-batches)
//! all split by position under a public seed or by site.

use serde::{Deserialize, Serialize};

/// A data-independent split of the rows into disjoint, named parts. Releases made inside
/// [`super::Ledger::in_part`] on different parts of one `Partition` compose in parallel (the
/// split costs its worst part). The ledger keys the split by [`Partition::key`], derived from the
/// split's name, its parts and the public seed that drew it, not by a free-form label: two
/// different random splits never share a key, and the same split made twice (the same seed) does.
///
/// ```
/// use dpfair_privacy::ledger::Partition;
/// let halves = Partition::new("cdp-fair halves", &["training half", "calibration half"], 7);
/// assert_eq!(halves.parts().len(), 2);
/// assert_ne!(halves.key(), Partition::new("cdp-fair halves", &["training half", "calibration half"], 8).key());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    key: u64,
    name: String,
    parts: Vec<String>,
}

impl Partition {
    /// The split called `name` into `parts`, drawn with the public seed `seed` (0 for a split
    /// fixed by the data's structure, e.g. labelled and unlabelled files).
    pub fn new(name: impl Into<String>, parts: &[&str], seed: u64) -> Self {
        let name = name.into();
        let parts: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
        // FNV-1a over the name, the parts and the seed: stable across runs and platforms.
        let mut key: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                key ^= *b as u64;
                key = key.wrapping_mul(0x0000_0100_0000_01b3);
            }
            key ^= 0xff;
            key = key.wrapping_mul(0x0000_0100_0000_01b3);
        };
        eat(name.as_bytes());
        for p in &parts {
            eat(p.as_bytes());
        }
        eat(&seed.to_le_bytes());
        Partition {
            key: key.max(1),
            name,
            parts,
        }
    }

    /// The key the ledger composes by (never 0, which marks entries of older files).
    pub fn key(&self) -> u64 {
        self.key
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn parts(&self) -> &[String] {
        &self.parts
    }
}

#[cfg(test)]
mod tests {
    /// Why value-keyed cells are not a partition: two ε-DP Laplace counts (scale 1/ε) over the
    /// cells "group a" and "group b"; replacing one row of group a by one of group b moves both
    /// counts by 1, and the exact privacy loss ln p(x | D)/p(x | D′) at the worst output is 2ε,
    /// not the ε parallel composition would claim. (For a split by position, the replaced row
    /// stays in its part, one count moves, and the loss is ε.)
    #[test]
    fn dataset_dependent_cells_compose_sequentially() {
        let epsilon = 0.7;
        let loss = |x: [f64; 2], d: [f64; 2], d2: [f64; 2]| -> f64 {
            (0..2)
                .map(|c| epsilon * ((x[c] - d2[c]).abs() - (x[c] - d[c]).abs()))
                .sum()
        };
        let (d, moved, stayed) = ([10.0, 5.0], [9.0, 6.0], [9.0, 5.0]);
        let worst = |d2: [f64; 2]| {
            let grid: Vec<f64> = (0..=40).map(|k| k as f64 * 0.5).collect();
            grid.iter()
                .flat_map(|&a| grid.iter().map(move |&b| [a, b]))
                .map(|x| loss(x, d, d2))
                .fold(f64::NEG_INFINITY, f64::max)
        };
        assert!((worst(moved) - 2.0 * epsilon).abs() < 1e-12);
        assert!((worst(stayed) - epsilon).abs() < 1e-12);
    }
}
