//! The sufficient statistic of strict S2 (Algorithm 5 step 3 with the exponential mechanism,
//! [`crate::cdp_fair`]) as a mergeable exact accumulator (`crate::accumulate`): per group, how
//! many calibration scores fall between consecutive points of the public τ grid. The grid is a
//! function of the released `π̃` and the configuration, so it is public before the calibration
//! half is read, and the DD curve at every grid point, `D̂D(τ_j) = #{z¹ ≥ τ_j}/ň_1 −
//! #{z⁰ ≤ τ_j}/ň_0` (paper rule, `≥` for both groups), is a prefix or suffix sum of these
//! counts: the same numbers, bit for bit, as the curve of the sorted scores
//! ([`crate::plugin::threshold::ScoreSet::dd`]).

use crate::accumulate::CountTable;
use crate::plugin::error::{Error, Result, invalid};

/// Calibration-score counts on a public τ grid (module docs).
///
/// ```
/// use dpfair::cdp_fair::GridCounts;
/// let mut c = GridCounts::new(vec![-0.5, 0.0, 0.5]).unwrap();
/// c.update(1, &[0.0, 0.7]).unwrap();
/// c.update(0, &[-0.2]).unwrap();
/// // At τ = 0: #{z¹ ≥ 0} / 2 − #{z⁰ ≤ 0} / 1.
/// assert_eq!(c.dd_on_grid([1.0, 2.0])[1], 1.0 - 1.0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GridCounts {
    grid: Vec<f64>,
    /// Group 1 at cells `0..=G` (the number of grid points `≤ z`), group 0 at `G+1..=2G+1` (the
    /// number of grid points `< z`).
    cells: CountTable,
}

impl GridCounts {
    /// No scores yet, on the ascending, finite grid `grid`.
    pub fn new(grid: Vec<f64>) -> Result<Self> {
        if grid.is_empty()
            || grid.iter().any(|t| !t.is_finite())
            || grid.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(invalid(
                "tau_grid",
                "the τ grid must be non-empty, finite and strictly ascending",
            ));
        }
        let cells = CountTable::new(2 * (grid.len() + 1));
        Ok(GridCounts { grid, cells })
    }

    /// The public grid.
    pub fn grid(&self) -> &[f64] {
        &self.grid
    }

    /// Count the scores `z` (not NaN) of group `group` (0/1).
    pub fn update(&mut self, group: usize, z: &[f64]) -> Result<()> {
        if group > 1 {
            return Err(invalid("group", format!("must be 0 or 1, got {group}")));
        }
        if let Some(i) = z.iter().position(|v| v.is_nan()) {
            return Err(Error::InvalidData(format!("calibration score {i} is NaN")));
        }
        let g = self.grid.len();
        for &v in z {
            let cell = if group == 1 {
                self.grid.partition_point(|&t| t <= v)
            } else {
                g + 1 + self.grid.partition_point(|&t| t < v)
            };
            self.cells
                .add(cell)
                .map_err(|c| Error::InvalidData(format!("cell {c}")))?;
        }
        Ok(())
    }

    /// Add another part's counts on the same grid (exact: the order of merges does not matter).
    pub fn merge(&mut self, other: &GridCounts) -> Result<()> {
        if other.grid != self.grid {
            return Err(invalid(
                "tau_grid",
                "cannot merge calibration counts taken on different τ grids",
            ));
        }
        self.cells
            .merge(&other.cells)
            .map_err(|e| Error::InvalidData(e.to_string()))
    }

    /// The number of scores of group `a` (private: used only through the public floor of the
    /// DD curve's denominators).
    pub fn group_size(&self, a: usize) -> u64 {
        let g = self.grid.len() + 1;
        // Group 1 is stored first.
        let start = if a == 1 { 0 } else { g };
        self.cells.counts()[start..start + g].iter().sum()
    }

    /// `D̂D(τ_j) = #{z¹ ≥ τ_j}/denom[1] − #{z⁰ ≤ τ_j}/denom[0]` at every grid point `τ_j`.
    pub fn dd_on_grid(&self, denom: [f64; 2]) -> Vec<f64> {
        let g = self.grid.len();
        let counts = self.cells.counts();
        let (group1, group0) = counts.split_at(g + 1);
        // #{z¹ ≥ τ_j} = Σ_{c > j} group1[c]; #{z⁰ ≤ τ_j} = Σ_{c ≤ j} group0[c].
        let mut at_least: u64 = group1.iter().sum::<u64>() - group1[0];
        let mut at_most: u64 = 0;
        let mut out = Vec::with_capacity(g);
        for j in 0..g {
            at_most += group0[j];
            out.push(at_least as f64 / denom[1] - at_most as f64 / denom[0]);
            at_least -= group1[j + 1];
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulate::testing::{merge_randomly, random_parts};
    use crate::plugin::threshold::{ScoreSet, tau_grid};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// The curve from the counts is the sorted scores' curve bit for bit, at every grid point,
    /// with scores on grid points (ties) included; and any split, merged in any order, gives the
    /// same counts.
    #[test]
    fn counts_give_the_sorted_curve_and_merge_exactly() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let grid = tau_grid(0.6, 41);
        for trial in 0..20 {
            let n = 1 + trial * 13;
            // Half the scores exactly on grid points.
            let z: Vec<(usize, f64)> = (0..n)
                .map(|i| {
                    let v = if i % 2 == 0 {
                        grid[rng.random_range(0..grid.len())]
                    } else {
                        rng.random_range(-1.0..1.0)
                    };
                    (rng.random_range(0..2usize), v)
                })
                .collect();
            let split = |g: usize| -> Vec<f64> {
                z.iter().filter(|(a, _)| *a == g).map(|(_, v)| *v).collect()
            };
            let mut whole = GridCounts::new(grid.clone()).unwrap();
            whole.update(0, &split(0)).unwrap();
            whole.update(1, &split(1)).unwrap();
            let denom = [37.0, 41.0];
            let scores = ScoreSet::new(split(0), split(1), denom);
            for (j, dd) in whole.dd_on_grid(denom).into_iter().enumerate() {
                assert_eq!(dd.to_bits(), scores.dd(grid[j], [1.0, 1.0]).to_bits());
            }
            assert_eq!(whole.group_size(0), split(0).len() as u64);
            let parts: Vec<GridCounts> = random_parts(n, 4, &mut rng)
                .into_iter()
                .map(|rows| {
                    let mut c = GridCounts::new(grid.clone()).unwrap();
                    for i in rows {
                        c.update(z[i].0, &[z[i].1]).unwrap();
                    }
                    c
                })
                .collect();
            let merged = merge_randomly(parts, &mut rng, |a, b| a.merge(&b).unwrap());
            assert_eq!(merged, whole);
        }
        let mut c = GridCounts::new(grid.clone()).unwrap();
        assert!(c.update(2, &[0.0]).is_err());
        assert!(c.update(0, &[f64::NAN]).is_err());
        assert!(
            c.merge(&GridCounts::new(tau_grid(0.5, 41)).unwrap())
                .is_err()
        );
        assert!(GridCounts::new(vec![0.0, 0.0]).is_err());
    }
}
