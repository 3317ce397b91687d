//! Data-independent splits of the rows: the keys of parallel composition.

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
